//! sysbench Lua scripts (`hostbench SCRIPT.lua [options] command`): the lifecycle, options,
//! commands, hooks, the FFI counters, seeds and errors, checked against what sysbench
//! 1.0.20 does (the numbered checks T1.. of the reference notes, docs/lua.md). The SQL
//! API's tests are in lua_sql.rs.

use crate::common::run_in;
use std::path::{Path, PathBuf};

/// A scratch directory holding `files` (name, text).
pub(crate) fn scripts(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("hostbench-lua-")
        .tempdir()
        .unwrap();
    for (name, text) in files {
        std::fs::write(d.path().join(name), text).unwrap();
    }
    d
}

pub(crate) fn hb(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut a: Vec<&str> = args.to_vec();
    if a.contains(&"run") {
        a.push("--no-save");
    }
    run_in(dir, &a)
}

pub(crate) fn lines_with<'a>(s: &'a str, prefix: &str) -> Vec<&'a str> {
    s.lines().filter(|l| l.starts_with(prefix)).collect()
}

const LIFECYCLE: &str = r##"
print("body", sysbench.tid, tostring(sysbench.opt), sysbench.cmdline.command)
function init(...) print("init", select("#", ...)) end
function thread_init(t) print("thread_init", t) end
function event(t) print("event", t) end
function thread_done(t) print("thread_done", t) end
function done() print("done") end
"##;

/// T1: the body runs once per state with `sysbench.opt` nil; init() gets no arguments;
/// thread_init/event/thread_done get the tid; done() comes last, after the report.
#[test]
fn lifecycle_runs_in_sysbench_order() {
    let d = scripts(&[("life.lua", LIFECYCLE)]);
    let args = [
        "life.lua",
        "--threads=2",
        "--events=2",
        "--report-interval=1",
        "run",
    ];
    let (code, out, err) = hb(d.path(), &args);
    assert_eq!(code, 0, "{err}\n{out}");
    let mut bodies: Vec<&str> = lines_with(&out, "body");
    bodies.sort();
    // The main state, two workers, and the reporter state (tid = threads).
    assert_eq!(
        bodies,
        [
            "body\t0\tnil\trun",
            "body\t0\tnil\trun",
            "body\t1\tnil\trun",
            "body\t2\tnil\trun"
        ],
        "{out}"
    );
    assert_eq!(lines_with(&out, "init\t"), ["init\t0"]);
    let mut ti = lines_with(&out, "thread_init");
    ti.sort();
    assert_eq!(ti, ["thread_init\t0", "thread_init\t1"]);
    assert_eq!(lines_with(&out, "event").len(), 2, "{out}");
    let mut td = lines_with(&out, "thread_done");
    td.sort();
    assert_eq!(td, ["thread_done\t0", "thread_done\t1"]);
    assert!(out.trim_end().ends_with("done"), "done() is last:\n{out}");
    assert!(
        out.find("General statistics").unwrap() < out.rfind("done").unwrap(),
        "{out}"
    );
}

const OPTIONS: &str = r#"
sysbench.cmdline.options = {
  table_size = {"Number of rows", 10000},
  b = {"a bool", true},
  l = {"a list", {1, 2}},
  s = {"a string", ""},
  n = {"no default"},
  i = {"int typed", 3, sysbench.cmdline.ARG_INT},
  ["dash-opt"] = {"dash", "x"},
  sz = {"a size", "1K", sysbench.cmdline.ARG_SIZE},
}
local function show(where)
  local o = sysbench.opt
  print(where, o.table_size, tostring(o.b), table.concat(o.l, "+"), "[" .. o.s .. "]",
        o.i, o.dash_opt, o.sz, o.threads, o.rand_type)
end
function init() show("init") end
function thread_init() show("thread_init") end
function event() show("event") end
function done() show("done") end
"#;

/// T2: help is sysbench's, byte for byte (sorted, padded to the longest option plus one,
/// defaults in brackets, a blank line at the end); the values are the same everywhere.
#[test]
fn declared_options_help_and_values() {
    let d = scripts(&[("opts.lua", OPTIONS)]);
    let (code, out, err) = hb(d.path(), &["opts.lua", "help"]);
    assert_eq!(code, 0, "{err}");
    let help = out
        .split_once("opts.lua options:\n")
        .map(|(_, h)| h)
        .unwrap();
    assert_eq!(
        help,
        "  --b[=on|off]      a bool [on]\n  \
         --dash-opt=STRING dash [x]\n  \
         --i=N             int typed [3]\n  \
         --l=[LIST,...]    a list [1,2]\n  \
         --n=STRING        no default\n  \
         --s=STRING        a string []\n  \
         --sz=SIZE         a size [1K]\n  \
         --table_size=N    Number of rows [10000]\n\n"
    );
    let (code, out, err) = hb(
        d.path(),
        &[
            "opts.lua",
            "--table-size=5",
            "--b=off",
            "--l=x,y",
            "--s=hi",
            "--i=-4",
            "--dash_opt=z",
            "--sz=2K",
            "--rand-type=uniform",
            "--events=1",
            "run",
        ],
    );
    assert_eq!(code, 0, "{err}\n{out}");
    let want = "5\tfalse\tx+y\t[hi]\t-4\tz\t2048\t1\tuniform";
    for w in ["init", "thread_init", "event", "done"] {
        assert_eq!(
            lines_with(&out, &format!("{w}\t")),
            [format!("{w}\t{want}")],
            "{out}"
        );
    }
}

/// T3: sysbench's validation messages; errors exit 2 (hostbench's usage code).
#[test]
fn option_values_are_checked_as_sysbench_checks_them() {
    let d = scripts(&[("opts.lua", OPTIONS)]);
    for (arg, msg) in [
        ("--b=5", "invalid option: --b=5"),
        ("--i=abc", "Invalid value for the 'i' option: 'abc'"),
        ("--i=3.5", "Invalid value for the 'i' option: '3.5'"),
        ("--nope=1", "invalid option: --nope=1"),
    ] {
        let (code, out, err) = hb(d.path(), &["opts.lua", arg, "--events=1", "run"]);
        assert_eq!(code, 2, "{arg}: {err}\n{out}");
        assert!(err.contains(msg), "{arg}: {err}");
        assert!(!out.contains("init\t"), "nothing ran: {out}");
    }
    // DOUBLE takes strtod's prefix (0 for none); SIZE with an unknown suffix is 0.
    let d = scripts(&[(
        "v.lua",
        "sysbench.cmdline.options = {d = {'x', 1.5}, s = {'y', 1, sysbench.cmdline.ARG_SIZE}}\n\
         function event() print('v', sysbench.opt.d, sysbench.opt.s) end",
    )]);
    let (code, out, _) = hb(
        d.path(),
        &["v.lua", "--d=abc", "--s=5Q", "--events=1", "run"],
    );
    assert_eq!(code, 0);
    assert_eq!(lines_with(&out, "v\t"), ["v\t0\t0"]);
}

const COMMANDS: &str = r#"
function cmd1() print("cmd1 " .. sysbench.tid) end
function cmd2() print("cmd2 " .. sysbench.tid) end
function prep() print("prepare " .. sysbench.tid) end
sysbench.cmdline.commands = {
  cmd1 = {cmd1},
  cmd2 = {cmd2, sysbench.cmdline.PARALLEL_COMMAND},
  prepare = {prep, sysbench.cmdline.PARALLEL_COMMAND},
  bad = {function() return false end},
  boom = {function() error("cmd failed") end, sysbench.cmdline.PARALLEL_COMMAND},
}
function prepare() print("global prepare, never run") end
function cleanup() print("cleanup " .. sysbench.tid) end
function event() end
"#;

/// T4: custom commands shadow the built-in ones; parallel ones run in --threads states.
#[test]
fn custom_and_parallel_commands() {
    let d = scripts(&[("c.lua", COMMANDS)]);
    let (code, out, _) = hb(d.path(), &["c.lua", "--threads=2", "cmd1"]);
    assert_eq!((code, lines_with(&out, "cmd1")), (0, vec!["cmd1 0"]));
    for c in ["cmd2", "prepare"] {
        let (code, out, err) = hb(d.path(), &["c.lua", "--threads=2", c]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("Initializing worker threads..."), "{out}");
        let mut tids = lines_with(&out, c);
        tids.sort();
        assert_eq!(tids, [format!("{c} 0"), format!("{c} 1")], "{out}");
    }
    let (code, out, _) = hb(d.path(), &["c.lua", "cleanup"]);
    assert_eq!((code, lines_with(&out, "cleanup")), (0, vec!["cleanup 0"]));
    let (code, _, err) = hb(d.path(), &["c.lua", "cmd3"]);
    assert_eq!((code, err.trim()), (1, "Unknown command: cmd3"));
    let (code, _, _) = hb(d.path(), &["c.lua", "bad"]);
    assert_eq!(code, 1);
    // A failing parallel command fails the command (sysbench exits 0 here).
    let (code, _, err) = hb(d.path(), &["c.lua", "--threads=2", "boom"]);
    assert_eq!(code, 1);
    assert_eq!(
        err.matches("FATAL: `sysbench.cmdline.call_command' function failed: c.lua:10: cmd failed")
            .count(),
        2,
        "{err}"
    );
}

/// T5: a truthy return value ends the thread without counting that call.
#[test]
fn event_return_values() {
    for (ret, events) in [
        ("0", 0),
        ("1", 0),
        ("true", 0),
        ("{}", 0),
        ("false", 2),
        ("nil", 2),
    ] {
        let d = scripts(&[("e.lua", &format!("function event() return {ret} end"))]);
        let (code, out, err) = hb(d.path(), &["e.lua", "--events=2", "--format=json", "run"]);
        assert_eq!(code, 0, "{ret}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["metrics"]["events"], events, "{ret}");
    }
}

/// An event raising `{errcode = sysbench.error.RESTART_EVENT}` calls the
/// before_restart_event hook and runs again inside the same event (one event counted).
#[test]
fn restart_errors_retry_the_event() {
    let d = scripts(&[(
        "r.lua",
        r#"
local calls, restarts = 0, 0
sysbench.hooks.before_restart_event = function(err)
  restarts = restarts + 1
  assert(err.errcode == sysbench.error.RESTART_EVENT)
end
function event()
  calls = calls + 1
  if calls % 2 == 1 then error({errcode = sysbench.error.RESTART_EVENT}) end
end
function thread_done() print("calls", calls, "restarts", restarts) end
"#,
    )]);
    let (code, out, err) = hb(d.path(), &["r.lua", "--events=3", "--format=json", "run"]);
    assert_eq!(code, 0, "{err}");
    // thread_done's print goes to stderr: stdout is the JSON document alone.
    assert_eq!(lines_with(&err, "calls"), ["calls\t6\trestarts\t3"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["metrics"]["events"], 3);
}

/// T6, T7: report hooks replace the interval line and the final report; the formatters
/// print sysbench's lines; the stat tables hold sysbench's keys.
#[test]
fn report_hooks_and_formatters() {
    let d = scripts(&[(
        "r.lua",
        r#"
ffi.cdef "int usleep(unsigned int);"
function event() ffi.C.usleep(2000) end
local function keys(stat)
  local ks = {}
  for k in pairs(stat) do ks[#ks + 1] = k end
  table.sort(ks)
  return table.concat(ks, ",")
end
sysbench.hooks.report_intermediate = function(stat)
  print("intermediate " .. keys(stat))
  sysbench.report_default(stat)
  sysbench.report_csv(stat)
end
sysbench.hooks.report_cumulative = function(stat)
  print("cumulative " .. keys(stat))
  sysbench.report_default(stat)
end
"#,
    )]);
    let (code, out, err) = hb(
        d.path(),
        &["r.lua", "--time=2", "--report-interval=1", "run"],
    );
    assert_eq!(code, 0, "{err}\n{out}");
    let common = "errors,events,latency_pct,other,reads,reconnects,threads_running,time_interval,time_total,writes";
    let with = |extra: &[&str]| {
        let mut k: Vec<&str> = common.split(',').chain(extra.iter().copied()).collect();
        k.sort();
        k.join(",")
    };
    assert!(
        out.contains(&format!(
            "intermediate {}",
            with(&["concurrency", "queue_length"])
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "cumulative {}",
            with(&["latency_avg", "latency_max", "latency_min", "latency_sum"])
        )),
        "{out}"
    );
    let line = lines_with(&out, "[ 1s ] thds: 1 tps: ");
    assert_eq!(line.len(), 1, "{out}");
    assert!(
        line[0].contains(" err/s 0.00 reconn/s: 0.00"),
        "{}",
        line[0]
    );
    assert_eq!(lines_with(&out, "[ 2s ] thds: 0 tps: ").len(), 1, "{out}");
    assert_eq!(lines_with(&out, "1,1,").len(), 1, "{out}");
    assert!(
        !out.contains("General statistics"),
        "the hook replaces it:\n{out}"
    );
}

/// T8: a script without hooks prints sysbench's non-SQL interval line.
#[test]
fn default_interval_line_is_the_non_sql_one() {
    let d = scripts(&[(
        "n.lua",
        "ffi.cdef 'int usleep(unsigned int);'\nfunction event() ffi.C.usleep(2000) end",
    )]);
    let (code, out, err) = hb(
        d.path(),
        &["n.lua", "--time=2", "--report-interval=1", "run"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines().any(|l| l.starts_with("[ 1s ] thds: 1 eps: ")),
        "{out}"
    );
    assert!(!out.contains("SQL statistics"), "{out}");
}

/// T21: --rand-seed makes a run's draws repeat; prepare is not seeded.
#[test]
fn rand_seed_repeats_runs() {
    let d = scripts(&[(
        "s.lua",
        "function prepare() print('p', sysbench.rand.uniform(1, 1000000000)) end\n\
         function event() print('e', sysbench.rand.uniform(1, 1000000000), \
         sysbench.rand.default(1, 100), sysbench.rand.string('ab-###-@@@')) end",
    )]);
    let draw = |cmd: &str, extra: &[&str]| {
        let mut a = vec!["s.lua", "--events=3"];
        a.extend_from_slice(extra);
        a.push(cmd);
        let (code, out, err) = hb(d.path(), &a);
        assert_eq!(code, 0, "{err}");
        out.lines()
            .filter(|l| l.starts_with("e\t") || l.starts_with("p\t"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let a = draw("run", &["--rand-seed=5"]);
    assert_eq!(a.len(), 3);
    assert_eq!(a, draw("run", &["--rand-seed=5"]));
    assert_ne!(a, draw("run", &["--rand-seed=6"]));
    let s = &a[0];
    let f: Vec<&str> = s.split('\t').collect();
    assert!(
        f[3].len() == 10 && f[3].starts_with("ab-") && f[3].as_bytes()[6] == b'-',
        "{s}"
    );
    assert!(
        f[2].parse::<u32>().is_ok_and(|v| (1..=100).contains(&v)),
        "{s}"
    );
    // Prepare draws from an unseeded stream: two prepares differ (1 in 10^9 to collide).
    assert_ne!(draw("prepare", &[]), draw("prepare", &[]));
}

/// T20: api_rand.t's legacy rand functions give what its patterns expect, and
/// `sysbench.rand.special`'s hot spot has sysbench's shape: the share of each value over
/// 400,000 draws in 1..100 (sysbench 1.0.20 gives 50 → 26.3%, 51 → 51.1%, the rest spread
/// around the middle, none above 1.2%), compared with sysbench's own draws where it is
/// installed.
#[test]
fn legacy_rand_functions_and_the_special_distribution_match_sysbench() {
    let d = scripts(&[
        (
            "api_rand.lua",
            r#"function event()
  print("sb_rand(0, 9) = " .. sb_rand(0, 9))
  print("sb_rand_uniq(0, 4294967295) = " .. sb_rand_uniq(0, 4294967295))
  print("sb_rnd() = " .. sb_rnd())
  print([[sb_rand_str("abc-###-@@@-xyz") = ]] .. sb_rand_str("abc-###-@@@-xyz"))
  print("sb_rand_uniform(0, 9) = " .. sb_rand_uniform(0, 9))
  print("sb_rand_gaussian(0, 9) = " .. sb_rand_gaussian(0, 9))
  print("sb_rand_special(0, 9) = " .. sb_rand_special(0, 9))
end"#,
        ),
        (
            "special.lua",
            r#"function event()
  local h, n = {}, 400000
  for i = 1, n do local v = sysbench.rand.special(1, 100); h[v] = (h[v] or 0) + 1 end
  local out = {}
  for k = 1, 100 do out[#out + 1] = string.format("%.4f", (h[k] or 0) / n * 100) end
  print(table.concat(out, " "))
end"#,
        ),
    ]);
    let (code, out, err) = hb(
        d.path(),
        &["--verbosity=0", "--events=1", "api_rand.lua", "run"],
    );
    assert_eq!(code, 0, "{err}");
    let value = |name: &str| -> String {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} = ")))
            .unwrap_or_else(|| panic!("no {name} in {out}"))
            .to_string()
    };
    let digit = |v: String| v.len() == 1 && v.as_bytes()[0].is_ascii_digit();
    assert!(digit(value("sb_rand(0, 9)")), "{out}");
    assert!(
        value("sb_rand_uniq(0, 4294967295)").parse::<u32>().is_ok(),
        "{out}"
    );
    assert!(value("sb_rnd()").parse::<u64>().is_ok(), "{out}");
    let s = value(r#"sb_rand_str("abc-###-@@@-xyz")"#);
    let b = s.as_bytes();
    assert!(
        s.len() == 15
            && s.starts_with("abc-")
            && s.ends_with("-xyz")
            && b[4..7].iter().all(u8::is_ascii_digit)
            && b[8..11].iter().all(u8::is_ascii_lowercase),
        "{s}"
    );
    assert!(digit(value("sb_rand_uniform(0, 9)")), "{out}");
    assert!(digit(value("sb_rand_gaussian(0, 9)")), "{out}");
    assert!(digit(value("sb_rand_special(0, 9)")), "{out}");

    let shares = |text: &str| -> Vec<f64> {
        let l = text
            .lines()
            .find(|l| l.split(' ').count() == 100)
            .unwrap_or_else(|| panic!("no shares in {text}"));
        l.split(' ').map(|v| v.parse().unwrap()).collect()
    };
    let (code, out, err) = hb(
        d.path(),
        &["--verbosity=0", "--events=1", "special.lua", "run"],
    );
    assert_eq!(code, 0, "{err}");
    let ours = shares(&out);
    // 400,000 draws: a share's sampling error is below 0.1 percentage point.
    assert!((ours[49] - 26.3).abs() < 0.6, "value 50: {}%", ours[49]);
    assert!((ours[50] - 51.1).abs() < 0.6, "value 51: {}%", ours[50]);
    // The rest is sysbench's spread around the middle (no value above 1.2%, the ends empty).
    for (i, v) in ours.iter().enumerate() {
        if i != 49 && i != 50 {
            assert!(*v < 1.5, "value {}: {v}%", i + 1);
        }
    }
    assert!(ours[0] < 0.01 && ours[99] < 0.01, "{ours:?}");
    if let Ok(o) = std::process::Command::new("sysbench")
        .current_dir(d.path())
        .args(["--verbosity=0", "--events=1", "special.lua", "run"])
        .output()
    {
        let theirs = shares(&String::from_utf8_lossy(&o.stdout));
        for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            assert!(
                (a - b).abs() < 0.6,
                "value {}: {a}% here, {b}% in sysbench",
                i + 1
            );
        }
    } else {
        eprintln!(
            "sysbench not installed: the special distribution checked against the recorded shares only"
        );
    }
}

/// `--format=json` (and csv) keeps stdout one document: a script's `print` goes to stderr
/// then, to stdout otherwise (sysbench's place).
#[test]
fn prints_go_to_stderr_when_stdout_is_a_document() {
    let d = scripts(&[(
        "p.lua",
        "function event() print('from the script') end\nfunction done() print('done here') end",
    )]);
    let (code, out, err) = hb(d.path(), &["p.lua", "--events=3", "--format=json", "run"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(doc["workload"]["id"], "lua", "{doc}");
    assert_eq!(err.matches("from the script").count(), 3, "{err}");
    assert!(err.contains("done here"), "{err}");
    let (code, out, err) = hb(d.path(), &["p.lua", "--events=3", "run"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("from the script").count(), 3, "{out}");
}

/// T22: sb_counter_inc through ffi.C counts into the run's counters; SB_CNT_TRX is 3,
/// SB_CNT_EVENT undeclared, a script's own enum constant of that name is refused.
#[test]
fn ffi_counters_feed_the_result() {
    let d = scripts(&[
        (
            "c.lua",
            r#"
ffi.cdef "void sb_counter_inc(int, sb_counter_type);"
function event()
  ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR)
  ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_READ)
  ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_READ)
end
function done()
  print("trx", ffi.C.SB_CNT_TRX, pcall(function() return ffi.C.SB_CNT_EVENT end))
end
"#,
        ),
        (
            "redef.lua",
            "ffi.cdef 'enum {SB_CNT_READ=7};'\nfunction event() end",
        ),
    ]);
    let (code, out, err) = hb(
        d.path(),
        &["c.lua", "--events=7", "--threads=2", "--format=json", "run"],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["metrics"]["counters"]["errors"], 7);
    assert_eq!(v["metrics"]["counters"]["reads"], 14);
    assert!(
        err.contains("trx\t3\tfalse\tc.lua:9: missing declaration for symbol 'SB_CNT_EVENT'"),
        "{err}"
    );
    let (code, _, err) = hb(d.path(), &["redef.lua", "--events=1", "run"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("FATAL: redef.lua:1: attempt to redefine 'SB_CNT_READ'"),
        "{err}"
    );
}

/// T24 and hangs: every failure prints the Lua message with file and line, no panic; a
/// script that cannot load exits 2, one that fails while running exits 1; an event that
/// never returns is ended by the forced shutdown after the time limit.
#[test]
fn script_errors_are_sysbench_messages() {
    let d = scripts(&[
        ("syn.lua", "function event()\n  x =\n"),
        ("noev.lua", "x = 1\n"),
        (
            "ti.lua",
            "function thread_init() error('boom') end\nfunction event() end\n",
        ),
        ("et.lua", "function event() error({}) end\n"),
        ("es.lua", "function event() error('bad thing') end\n"),
        (
            "init.lua",
            "function init() error('no init') end\nfunction event() end\n",
        ),
        (
            "prep.lua",
            "function prepare() local t = nil; return t.x end\n",
        ),
        ("loop.lua", "function event() while true do end end\n"),
    ]);
    let cases: &[(&str, &str, i32, &[&str])] = &[
        (
            "syn.lua",
            "run",
            2,
            &["FATAL: syn.lua:3: unexpected symbol near '<eof>'"],
        ),
        (
            "noev.lua",
            "run",
            1,
            &["FATAL: cannot find the event() function in noev.lua"],
        ),
        (
            "ti.lua",
            "run",
            1,
            &[
                "FATAL: `thread_init' function failed: ti.lua:1: boom",
                "FATAL: Thread initialization failed!",
            ],
        ),
        (
            "et.lua",
            "run",
            1,
            &["FATAL: `thread_run' function failed: (not a string)"],
        ),
        (
            "es.lua",
            "run",
            1,
            &["FATAL: `thread_run' function failed: es.lua:1: bad thing"],
        ),
        (
            "init.lua",
            "run",
            1,
            &["FATAL: `init' function failed: init.lua:1: no init"],
        ),
        (
            "prep.lua",
            "prepare",
            1,
            &[
                "FATAL: `prepare' function failed: prep.lua:1: attempt to index local 't' (a nil value)",
            ],
        ),
        (
            "missing.lua",
            "run",
            2,
            &["Cannot find benchmark 'missing.lua'"],
        ),
        (
            "/usr/share/sysbench/oltp_common.lua",
            "run",
            1,
            &[
                "FATAL: `init' function failed: ",
                "should not be called directly",
            ],
        ),
    ];
    for (script, cmd, want, msgs) in cases {
        if script.starts_with('/') && !Path::new(script).exists() {
            eprintln!("skipped: {script} is not installed");
            continue;
        }
        let (code, out, err) = hb(d.path(), &[script, "--events=2", cmd]);
        assert_eq!(code, *want, "{script}: {err}\n{out}");
        for m in *msgs {
            assert!(err.contains(m), "{script}: want {m}\n{err}");
        }
        assert!(!err.contains("stack traceback"), "{script}: {err}");
        assert!(
            !out.contains("General statistics"),
            "{script}: no report\n{out}"
        );
    }
    let t0 = std::time::Instant::now();
    let (code, _, err) = hb(
        d.path(),
        &["loop.lua", "--time=1", "--forced-shutdown=1", "run"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("forced shutdown"), "{err}");
    assert!(t0.elapsed().as_secs() < 30);
}

/// Scripts are found as sysbench finds them: a path, else a module on LUA_PATH (`;;`
/// adding sysbench's default path, its absence replacing it); `--test=` works too.
#[test]
fn scripts_are_found_by_path_and_module_path() {
    let d = scripts(&[]);
    let lib: PathBuf = d.path().join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(
        lib.join("mymod.lua"),
        "print('path=' .. package.path)\nfunction event() end\n",
    )
    .unwrap();
    let out = crate::common::hb()
        .current_dir(d.path())
        .env("LUA_PATH", format!("{}/?.lua;;", lib.display()))
        .args(["--test=lib/mymod.lua", "--events=1", "--no-save", "run"])
        .output()
        .unwrap();
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{e}");
    assert!(e.contains("--test option is deprecated"), "{e}");
    let p = o.lines().find(|l| l.starts_with("path=")).unwrap();
    assert!(
        p.starts_with(&format!("path={}/?.lua;./?.lua;", lib.display()))
            && p.contains("/usr/share/sysbench/?.lua"),
        "{p}"
    );
    let path_of = |lua_path: &str| {
        let out = crate::common::hb()
            .current_dir(d.path())
            .env("LUA_PATH", lua_path)
            .args(["lib/mymod.lua", "--events=1", "--no-save", "run"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find(|l| l.starts_with("path="))
            .map(str::to_string)
            .unwrap()
    };
    assert_eq!(path_of("/x/?.lua"), "path=/x/?.lua");
    // A bare name is a module on the path.
    let out = crate::common::hb()
        .current_dir(d.path())
        .env("LUA_PATH", format!("{}/?.lua", lib.display()))
        .args(["--test=mymod", "--events=1", "--no-save", "run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

/// sysbench's options for the server a test URL names (`scheme://user[:pw]@host:port/db`).
pub(crate) fn server_options(url: &str) -> Vec<String> {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (auth, rest) = rest.split_once('@').unwrap();
    let (user, pw) = auth.split_once(':').unwrap_or((auth, ""));
    let (hostport, db) = rest.split_once('/').unwrap();
    let db = db.split('?').next().unwrap();
    let (host, port) = hostport.split_once(':').unwrap_or((hostport, ""));
    let p = if scheme.starts_with("postgres") {
        "pgsql"
    } else {
        "mysql"
    };
    let mut o = vec![
        format!("--db-driver={p}"),
        format!("--{p}-host={host}"),
        format!("--{p}-user={user}"),
        format!("--{p}-db={db}"),
    ];
    if !port.is_empty() {
        o.push(format!("--{p}-port={port}"));
    }
    if !pw.is_empty() {
        o.push(format!("--{p}-password={pw}"));
    }
    o
}

/// The issue's first acceptance check: a custom script whose thread_init connects and whose
/// event runs `SELECT 1`, on SQLite and on the PostgreSQL and MariaDB servers of the test
/// environment; each query is a read, a failing one sysbench's error message.
#[test]
fn sql_select_one_on_every_driver() {
    let d = scripts(&[
        (
            "sel.lua",
            "function thread_init() drv = sysbench.sql.driver(); con = drv:connect() end\n\
             function event() con:query('SELECT 1') end\n\
             function thread_done() print('driver', drv:name(), tostring(con)); con:disconnect() end\n",
        ),
        (
            "bad.lua",
            "function thread_init() con = sysbench.sql.driver():connect() end\n\
             function event() con:query('SELECT * FROM hostbench_lua_no_such_table') end\n",
        ),
    ]);
    let db = d.path().join("s.db");
    let mut targets: Vec<(String, Vec<String>)> = vec![(
        "sqlite".into(),
        vec![
            "--db-driver=sqlite".into(),
            format!("--sqlite-db={}", db.display()),
        ],
    )];
    for (var, name) in [
        ("HOSTBENCH_TEST_PG_URL", "pgsql"),
        ("HOSTBENCH_TEST_MYSQL_URL", "mysql"),
    ] {
        match std::env::var(var) {
            Ok(u) if !u.is_empty() => targets.push((name.into(), server_options(&u))),
            _ => eprintln!("skipped {name}: {var} is not set (see .ci/run)"),
        }
    }
    for (name, opts) in &targets {
        let mut a: Vec<&str> = vec!["sel.lua"];
        a.extend(opts.iter().map(String::as_str));
        a.extend(["--threads=2", "--events=50", "--format=json", "run"]);
        let (code, out, err) = hb(d.path(), &a);
        assert_eq!(code, 0, "{name}: {err}");
        // thread_done's print goes to stderr: stdout is the JSON document alone.
        let tail = &err;
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| {
            panic!("{name}: {e}\n{out}");
        });
        assert_eq!(v["metrics"]["events"], 50, "{name}");
        assert_eq!(v["metrics"]["counters"]["reads"], 50, "{name}");
        assert_eq!(v["metrics"]["counters"]["errors"], 0, "{name}");
        assert!(
            tail.contains(&format!("driver\t{name}\t<sql_connection>")),
            "{name}: {out}"
        );
        let mut a: Vec<&str> = vec!["bad.lua"];
        a.extend(opts.iter().map(String::as_str));
        a.extend(["--events=1", "run"]);
        let (code, _, err) = hb(d.path(), &a);
        assert_eq!(code, 1, "{name}: {err}");
        assert!(
            err.contains("FATAL: `thread_run' function failed: bad.lua:2: SQL error, errno = ")
                && err.contains("hostbench_lua_no_such_table"),
            "{name}: {err}"
        );
    }
    let (code, _, err) = hb(
        d.path(),
        &["sel.lua", "--db-driver=oracle", "--events=1", "run"],
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("FATAL: invalid database driver name: 'oracle'")
            && err.contains("failed to initialize the DB driver"),
        "{err}"
    );
}

/// A script's `print` goes through the secret masking like everything hostbench prints: a
/// script that prints its connection URL does not print the password.
#[test]
fn print_masks_secrets() {
    let d = scripts(&[(
        "pw.lua",
        "print(\"url\", \"postgres://u:hunter2@h/db\")\nfunction event() return true end\n",
    )]);
    let (code, out, err) = hb(d.path(), &["pw.lua", "--events=1", "run"]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("url\tpostgres://u:***@h/db\n"), "{out}");
    assert!(!out.contains("hunter2") && !err.contains("hunter2"));
}

/// The native grammar's `hostbench run lua --set code=...` (how the workload registry's
/// conformance test runs every workload) runs a script's lifecycle as the script path
/// does: `report_intermediate` replaces the interval lines, `report_cumulative` the final
/// report, and `done()` runs after it; without hooks hostbench's own report prints, and
/// `done()` still runs.
#[test]
fn run_lua_calls_the_report_hooks_and_done() {
    let hooked = r#"
function event() end
function done() print("done called") end
sysbench.hooks.report_intermediate = function(st) print("intermediate " .. st.threads_running) end
sysbench.hooks.report_cumulative = function(st) print("cumulative " .. st.events) end
"#;
    let plain = "function event() end\nfunction done() print(\"done called\") end\n";
    let d = scripts(&[]);
    let set = format!("code={hooked}");
    let (code, out, err) = run_in(
        d.path(),
        &[
            "run",
            "lua",
            "--set",
            &set,
            "--time=2",
            "-i",
            "1",
            "--no-save",
        ],
    );
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(!lines_with(&out, "intermediate 1").is_empty(), "{out}");
    assert_eq!(lines_with(&out, "cumulative ").len(), 1, "{out}");
    assert_eq!(lines_with(&out, "done called"), ["done called"], "{out}");
    let at = |p: &str| out.find(p).unwrap();
    assert!(at("cumulative ") < at("done called"), "{out}");
    // The events the hook saw are the run's.
    let n: u64 = lines_with(&out, "cumulative ")[0][11..]
        .trim()
        .parse()
        .unwrap();
    assert!(n > 0, "{out}");
    let set = format!("code={plain}");
    let (code, out, err) = run_in(
        d.path(),
        &["run", "lua", "--set", &set, "--events=5", "--no-save"],
    );
    assert_eq!(code, 0, "{err}\n{out}");
    assert_eq!(lines_with(&out, "done called"), ["done called"], "{out}");
    assert!(out.find("done called").unwrap() > 0, "{out}");
}

#[test]
fn run_lua_takes_options_separated_by_blanks() {
    // `--set options=...` typed by hand: blank-separated pairs, with or without sysbench's
    // `--`; each reaches sysbench.opt (a space once ran into the first value).
    let code = r#"
sysbench.cmdline.options = { tables = {"n", 1}, name = {"s", "x"}, flag = {"b", false} }
function event() end
function init() print("opts " .. sysbench.opt.tables .. " " .. sysbench.opt.name .. " " .. tostring(sysbench.opt.flag)) end
"#;
    let d = scripts(&[]);
    let set = format!("code={code}");
    for options in [
        "options=tables=3 name=y --flag",
        "options=--tables=3  --name=y flag=on",
    ] {
        let (rc, out, err) = run_in(
            d.path(),
            &[
                "run",
                "lua",
                "--set",
                &set,
                "--set",
                options,
                "-n",
                "1",
                "--no-save",
            ],
        );
        assert_eq!(rc, 0, "{options}: {err}\n{out}");
        assert_eq!(
            lines_with(&out, "opts "),
            ["opts 3 y true"],
            "{options}: {out}"
        );
    }
}
