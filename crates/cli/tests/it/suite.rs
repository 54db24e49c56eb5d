//! `hostbench suite`: custom suites end to end (summary, JSON document, markdown, the store),
//! bad suite files (one line naming file, line and column; exit 2), `--check` and `--print`,
//! a failing entry (exit 1, the rest still runs), Ctrl-C (exit 130, finished runs kept), no
//! progress-bar escape codes on piped stderr, and no files left behind.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn temp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("hostbench-test-suite-")
        .tempdir()
        .unwrap()
}

/// A tiny suite: every shape of entry, each run a fraction of a second.
const TINY: &str = r#"
name = "tiny"
description = "two workloads and a probe"
label = "tiny-suite"

[defaults]
time = "0.2s"
repetitions = { min = 2, max = 3 }
stable_rsd = "50%"

[[entry]]
name = "null overhead"
workload = "null"

[[entry]]
name = "cpu small"
workload = "cpu"
params = { max_prime = 500 }
threads = 2

[[entry]]
probe = "timer"
repetitions = 2
"#;

fn suite_schema() -> jsonschema::Validator {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schemas/suite.v1.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

/// Runs `hostbench suite FILE args...` in an empty working directory with its own store;
/// returns (exit code, stdout, stderr) and checks nothing was left in the directory.
fn suite(text: &str, args: &[&str], db: &Path) -> (Option<i32>, String, String) {
    let work = temp();
    let file = work.path().join("s.toml");
    std::fs::write(&file, text).unwrap();
    let out = hb_with_store(db)
        .current_dir(work.path())
        .arg("suite")
        .arg(&file)
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "s.toml")
        .collect();
    assert!(left.is_empty(), "the suite left files behind: {left:?}");
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn stored(db: &Path, label: &str) -> Vec<Value> {
    let out = hb_with_store(db)
        .args([
            "results", "list", "--label", label, "--limit", "1000", "-f", "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_custom_suite_runs_end_to_end_and_summarises_every_entry() {
    let dir = temp();
    let db = dir.path().join("r.db");
    let (code, out, err) = suite(TINY, &[], &db);
    assert_eq!(code, Some(0), "{err}\n{out}");
    for name in ["null overhead", "cpu small", "timer"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no summary line for {name}:\n{out}"));
        // name, figure, median, unit, spread, runs, note
        assert!(
            line.contains("event rate") || line.contains("clock read cost"),
            "{line}"
        );
        assert!(
            line.contains("stable") || line.contains("UNSTABLE"),
            "{line}"
        );
    }
    assert!(out.contains("entry") && out.contains("median") && out.contains("spread"));
    assert!(out.contains("with label 'tiny-suite'"), "{out}");
    // Piped stderr: no progress bar, no escape codes.
    assert!(
        !err.contains('\x1b'),
        "escape codes on piped stderr: {err:?}"
    );
    assert!(
        !err.contains("suite tiny ["),
        "a progress bar on piped stderr: {err}"
    );
    // Every run of the two workloads is saved under the suite's label (2 or 3 each).
    let runs = stored(&db, "tiny-suite");
    let count = |w: &str| runs.iter().filter(|r| r["workload"] == w).count();
    assert!((2..=3).contains(&count("null")), "{runs:?}");
    assert!((2..=3).contains(&count("cpu")), "{runs:?}");
    assert_eq!(runs.len(), count("null") + count("cpu"));
}

#[test]
fn json_document_validates_and_points_at_stored_results() {
    let dir = temp();
    let db = dir.path().join("r.db");
    let (code, out, err) = suite(TINY, &["--format", "json", "--label", "override"], &db);
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).expect("stdout is one JSON document");
    let v = suite_schema();
    let errors: Vec<String> = v
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "suite document does not validate: {errors:#?}"
    );
    assert_eq!(doc["schema"], "hostbench.suite");
    assert_eq!(doc["label"], "override", "--label beats the suite's label");
    let entries = doc["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    let cpu = &entries[1];
    assert_eq!(cpu["workload"], "cpu");
    assert_eq!(cpu["threads"], 2);
    assert_eq!(cpu["status"], "done");
    assert_eq!(cpu["figure"]["name"], "events_per_s");
    let values = cpu["values"].as_array().unwrap();
    let median = cpu["stats"]["median"].as_f64().unwrap();
    let min = cpu["stats"]["min"].as_f64().unwrap();
    let max = cpu["stats"]["max"].as_f64().unwrap();
    assert!(min <= median && median <= max && min > 0.0, "{cpu}");
    // The saved results are the runs behind the values, and valid results themselves.
    let ids = cpu["result_ids"].as_array().unwrap();
    assert_eq!(ids.len(), values.len());
    let stored_ids: Vec<Value> = stored(&db, "override")
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    for (id, value) in ids.iter().zip(values) {
        assert!(
            stored_ids
                .iter()
                .any(|s| id.as_str().unwrap().starts_with(s.as_str().unwrap())),
            "{id} not stored"
        );
        let show = hb_with_store(&db)
            .args(["results", "show", id.as_str().unwrap(), "-f", "json"])
            .output()
            .unwrap();
        let r: Value = serde_json::from_slice(&show.stdout).unwrap();
        assert_valid(&r, "a suite's saved result");
        assert_eq!(r["label"], "override");
        assert_eq!(r["config"]["grammar"], "suite");
        assert_eq!(&r["figures"][0]["value"], value);
    }
    let timer = &entries[2];
    assert_eq!(timer["probe"], "timer");
    assert_eq!(timer["workload"], Value::Null);
    assert_eq!(timer["values"].as_array().unwrap().len(), 2);
    assert!(timer["result_ids"].as_array().unwrap().is_empty());
}

#[test]
fn markdown_summary_is_a_table() {
    let dir = temp();
    let (code, out, err) = suite(
        TINY,
        &["-f", "markdown", "--no-save"],
        &dir.path().join("r.db"),
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("| entry | figure | median | unit | spread | runs | note |"),
        "{out}"
    );
    assert!(out.contains("| cpu small | event rate |"), "{out}");
    assert!(out.contains("not saved"), "{out}");
    assert!(
        !dir.path().join("r.db").exists(),
        "--no-save created a store"
    );
}

#[test]
fn the_suite_schema_knows_every_warning_kind_of_a_result() {
    let read = |f: &str| -> Value {
        let p = format!("{}/../../schemas/{f}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    assert_eq!(
        read("suite.v1.json")["$defs"]["EntryWarning"]["properties"]["kind"]["enum"],
        read("result.v1.json")["$defs"]["WarningKind"]["enum"]
    );
}

/// Expects exit 2 and one line on stderr starting with `at` and containing `what`.
fn bad(text: &str, at: &str, what: &str) {
    let dir = temp();
    let (code, out, err) = suite(text, &[], &dir.path().join("r.db"));
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty(), "nothing runs: {out}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    let line = err.trim_start_matches("hostbench: error: ");
    assert!(line.contains(at), "expected {at:?} in {err:?}");
    assert!(line.contains(what), "expected {what:?} in {err:?}");
    assert!(!dir.path().join("r.db").exists(), "nothing was saved");
}

#[test]
fn bad_suite_files_name_the_line() {
    let ok_head = "name = \"x\"\n\n[[entry]]\nworkload = \"null\"\ntime = \"0.1s\"\n\n[[entry]]\n";
    bad(
        &format!("{ok_head}workload = \"cpux\"\n"),
        "s.toml:8:12:",
        "unknown workload 'cpux'",
    );
    bad(
        &format!("{ok_head}workload = \"cpu\"\nparams = {{ max_prime = 20000, max_primes = 2 }}\n"),
        "s.toml:9:31:",
        "unknown parameter 'max_primes'",
    );
    bad(
        &format!("{ok_head}workload = \"memory\"\nparams = {{ oper = \"erase\" }}\n"),
        "s.toml:9:19:",
        "one of read, write, none",
    );
    bad(
        &format!("{ok_head}workload = \"cpu\"\nthreads = \"lots\"\n"),
        "s.toml:9:11:",
        "threads",
    );
    bad(
        &format!("{ok_head}workload = \"cpu\"\nrepeats = 3\n"),
        "s.toml:9:1:",
        "unknown field `repeats`",
    );
    // A fio job string is read when the file loads, not when the entry's turn comes.
    bad(
        &format!(
            "{ok_head}workload = \"disk.fio\"\nparams = {{ jobs = \"--name=a --ioengine=nul --size=1m\" }}\n"
        ),
        "s.toml:9:19:",
        "ioengine=nul",
    );
    bad(
        &format!("{ok_head}workload = \"cpu\"\nfigure = \"Read BW\"\n"),
        "s.toml:9:10:",
        "not a figure name",
    );
    bad(
        "name = \"x\"\n[[entry]]\nprobe = \"timer\"\nfigure = \"iops\"\n",
        "s.toml:4:10:",
        "takes no `figure`",
    );
    bad("name = \"x\"\n[[entry]\n", "s.toml:2:", "");
}

#[test]
fn unknown_suite_names_list_the_built_in_ones() {
    let out = hb().args(["suite", "quik"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown suite 'quik'") && err.contains("quick, standard, full"),
        "{err}"
    );
    let out = hb()
        .args(["suite", "/no/such/suite.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read suite file"));
}

#[test]
fn built_in_suites_check_and_print_round_trips() {
    for name in ["quick", "standard", "full"] {
        let (check, _) = run_ok(&["suite", name, "--check"]);
        assert!(
            check.starts_with(&format!("suite {name} (built-in):")),
            "{check}"
        );
        let (text, _) = run_ok(&["suite", name, "--print"]);
        assert!(text.contains(&format!("name = \"{name}\"")), "{text}");
        // The printed file is a valid suite of its own that would run the same entries.
        let dir = temp();
        let f = dir.path().join(format!("{name}.toml"));
        std::fs::write(&f, &text).unwrap();
        let (again, _) = run_ok(&["suite", f.to_str().unwrap(), "--check"]);
        let body = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
        assert_eq!(body(&check), body(&again));
    }
    // standard reproduces the published comparisons: every area has an entry, the disk ones
    // with direct I/O, and the estimate is in minutes.
    let (standard, _) = run_ok(&["suite", "standard", "--check"]);
    for w in [
        "cpu max_prime=20000, 1 thread(s)",
        "stream",
        "fileio extra_flags=direct test_mode=rndrw total_size=4GiB",
        "test_mode=seqwr total_size=4GiB",
        "test_mode=seqrd total_size=4GiB",
        "--rw=randread --bs=4k --iodepth=32",
        "--rw=read --bs=1m",
        "smallfiles dir=. files=10000",
        "http.load connections=100",
        "db.oltp_read_only table_size=100000",
        "db.oltp_read_write",
        "plus preparing",
    ] {
        assert!(standard.contains(w), "standard lacks {w}:\n{standard}");
    }
    let head = standard.lines().next().unwrap();
    assert!(
        head.contains(" at the minimum repetitions, up to ") && head.contains(" min"),
        "{head}"
    );
    // One aligned row per entry under the header.
    let col = standard.lines().nth(1).unwrap().find("what").unwrap();
    let rows: Vec<&str> = standard
        .lines()
        .skip(2)
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert!(rows.len() >= 15, "{standard}");
    for r in rows {
        // The `what` column starts at the header's `what`, after the padding.
        let (before, what) = r.split_at(col);
        assert!(
            before.ends_with("  ") && !what.starts_with(' '),
            "misaligned: {r:?}"
        );
    }
    let (quick, _) = run_ok(&["suite", "quick", "--check"]);
    for w in [
        "probe timer",
        "cpu max_prime=20000",
        "memory",
        "stream",
        "threads",
        "mutex",
        "null",
    ] {
        assert!(quick.contains(w), "quick lacks {w}:\n{quick}");
    }
}

#[test]
fn figure_chooses_the_headline() {
    // fio's first figure is IOPS; a throughput entry tracks bytes per second instead. A
    // figure the run does not report fails that entry, naming the ones it does.
    let text = r#"
name = "figures"
[defaults]
time = 0
repetitions = 2
[[entry]]
name = "seq bytes"
workload = "disk.fio"
params = { jobs = "--name=seq --ioengine=null --rw=read --bs=1m --size=256m" }
figure = "read_bytes_per_s"
[[entry]]
name = "seq iops"
workload = "disk.fio"
params = { jobs = "--name=seq --ioengine=null --rw=read --bs=1m --size=256m" }
[[entry]]
name = "no writes"
workload = "disk.fio"
params = { jobs = "--name=seq --ioengine=null --rw=read --bs=1m --size=256m" }
figure = "write_iops"
"#;
    let dir = temp();
    let (code, out, err) = suite(
        text,
        &["--no-save", "--format=json"],
        &dir.path().join("r.db"),
    );
    assert_eq!(code, Some(1), "the third entry fails: {err}\n{out}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let e = doc["entries"].as_array().unwrap();
    assert_eq!(e[0]["figure"]["name"], "read_bytes_per_s", "{out}");
    assert_eq!(e[0]["figure"]["unit"], "B/s", "{out}");
    assert_eq!(e[0]["figure"]["label"], "read throughput", "{out}");
    assert_eq!(e[1]["figure"]["name"], "iops", "{out}");
    // 1 MiB per I/O: hundreds of MB/s where the IOPS figure is in the hundreds or thousands.
    let bytes = e[0]["values"][0].as_f64().unwrap();
    assert!(bytes > 1e8, "bytes per second, not IOPS: {bytes}");
    assert_eq!(e[2]["status"], "failed", "{out}");
    let msg = e[2]["error"].as_str().unwrap();
    assert!(
        msg.contains("'write_iops'")
            && msg.contains("read_bytes_per_s")
            && msg.contains("entry at line 15"),
        "{msg}"
    );
}

#[test]
fn a_failing_entry_fails_the_suite_but_not_the_others() {
    // memory's block size must be a power of two: that is found when the run is set up.
    let text = r#"
name = "half"
[defaults]
time = "0.1s"
repetitions = 2
[[entry]]
name = "bad block"
workload = "memory"
params = { block_size = "1000" }
[[entry]]
name = "fine"
workload = "null"
"#;
    let dir = temp();
    let (code, out, err) = suite(text, &["--no-save"], &dir.path().join("r.db"));
    assert_eq!(code, Some(1), "{err}\n{out}");
    let bad = out.lines().find(|l| l.starts_with("bad block")).unwrap();
    assert!(bad.contains("FAILED"), "{bad}");
    assert!(
        out.contains("bad block: FAILED:") && out.contains("power of two"),
        "{out}"
    );
    let fine = out.lines().find(|l| l.starts_with("fine")).unwrap();
    assert!(
        fine.contains("event rate") && !fine.contains("FAILED"),
        "{fine}"
    );
}

#[test]
fn ctrl_c_keeps_what_finished_and_exits_130() {
    let text = r#"
name = "long"
[[entry]]
name = "first"
workload = "null"
time = "0.2s"
repetitions = 2
[[entry]]
name = "second"
workload = "cpu"
time = "30s"
repetitions = 3
[[entry]]
name = "third"
workload = "null"
"#;
    let dir = temp();
    let db = dir.path().join("r.db");
    let f = dir.path().join("long.toml");
    std::fs::write(&f, text).unwrap();
    let child = spawn_piped(hb_std().env("HOSTBENCH_RESULTS_DB", &db).args([
        "suite",
        f.to_str().unwrap(),
        "--label",
        "cut",
    ]));
    // Interrupt once the first entry's two runs are stored and the long cpu run has begun.
    let t0 = std::time::Instant::now();
    while stored(&db, "cut").len() < 2 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the first entry never finished"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(1000));
    let out = interrupt(child);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}");
    let line = |n: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(n))
            .unwrap_or_else(|| panic!("{n}: {stdout}"))
    };
    // Columns are two spaces apart; the figure's label has one inside.
    let first: Vec<&str> = line("first")
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(first[1], "event rate", "{stdout}");
    assert_eq!(
        first[5], "2",
        "both runs of the first entry count: {stdout}"
    );
    assert!(line("second").contains("interrupted"), "{stdout}");
    assert!(line("third").contains("not run"), "{stdout}");
    assert!(
        stdout.contains("interrupted: later entries did not run"),
        "{stdout}"
    );
    // The two finished runs and the cut one are in the store.
    let runs = stored(&db, "cut");
    assert_eq!(
        runs.iter().filter(|r| r["workload"] == "null").count(),
        2,
        "{runs:?}"
    );
    assert_eq!(
        runs.iter().filter(|r| r["workload"] == "cpu").count(),
        1,
        "{runs:?}"
    );
}

/// Disk and database entries: prepared once in a scratch directory of their own inside
/// `--directory`, run, cleaned up, and the scratch directory removed; a file that was there
/// before is left alone.
#[test]
fn disk_and_db_entries_run_in_a_scratch_directory_and_leave_nothing() {
    let store = temp();
    let data = temp();
    let foreign = data.path().join("test_file.0");
    std::fs::write(&foreign, b"not hostbench's").unwrap();
    let text = r#"
name = "disk"
[defaults]
time = "0.3s"
repetitions = 2
[[entry]]
name = "fileio seqwr"
workload = "fileio"
params = { test_mode = "rndrw", total_size = "4M", num = 2 }
[[entry]]
name = "small files"
workload = "smallfiles"
params = { files = 50, dir = "." }
time = 0
[[entry]]
name = "oltp on sqlite"
workload = "db.oltp_read_only"
params = { table_size = 200 }
"#;
    let dir = data.path().to_str().unwrap();
    let (code, out, err) = suite(
        text,
        &["--directory", dir, "--label", "disk-suite"],
        &store.path().join("r.db"),
    );
    assert_eq!(code, Some(0), "{out}\n{err}");
    for name in ["fileio seqwr", "small files", "oltp on sqlite"] {
        let line = out.lines().find(|l| l.starts_with(name)).unwrap();
        assert!(!line.contains("FAILED"), "{line}\n{out}");
    }
    assert_eq!(stored(&store.path().join("r.db"), "disk-suite").len(), 6);
    let left: Vec<_> = std::fs::read_dir(data.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["test_file.0"], "the suite left or removed files");
    assert_eq!(std::fs::read(&foreign).unwrap(), b"not hostbench's");
}

#[test]
fn a_missing_directory_is_a_clear_error() {
    let store = temp();
    let (code, _, err) = suite(
        TINY,
        &["--directory", "/no/such/dir"],
        &store.path().join("r.db"),
    );
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--directory /no/such/dir: not an existing directory"),
        "{err}"
    );
}

/// Progress bars: on a terminal the suite draws one on stderr (percent and ETA); `--quiet`
/// silences it. The terminal is a pseudo-terminal from util-linux's `script` (Debian's
/// bsdutils, always installed); piped stderr is covered by the tests above.
#[test]
fn progress_bar_on_a_terminal_only_without_quiet() {
    let work = temp();
    let file = work.path().join("p.toml");
    std::fs::write(
        &file,
        "name = \"p\"\ndescription = \"d\"\n[[entry]]\nworkload = \"null\"\ntime = \"1s\"\n\
         repetitions = 2\n",
    )
    .unwrap();
    let bin = bin();
    let on_tty = |extra: &str| {
        let cmd = format!(
            "'{}' suite '{}' --no-save {extra}",
            bin.display(),
            file.display()
        );
        let out = std::process::Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .env("TERM", "xterm")
            // Plain text to match (colours are drawn the same way).
            .env("NO_COLOR", "1")
            .output()
            .expect("util-linux `script` runs a command on a pseudo-terminal");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = on_tty("");
    assert!(
        shown.contains("suite p ["),
        "no bar on a terminal: {shown:?}"
    );
    assert!(shown.contains("ETA "), "{shown:?}");
    assert!(shown.contains("null, 1 thread(s)"), "no summary: {shown:?}");
    let quiet = on_tty("--quiet");
    assert!(!quiet.contains("ETA "), "--quiet drew a bar: {quiet:?}");
    assert!(!quiet.contains("suite p ["), "{quiet:?}");
    assert!(quiet.contains("null, 1 thread(s)"), "{quiet:?}");
}

/// `--until-decided BASELINE`: each entry is compared with the baseline's stored runs as it
/// goes and repeated until its headline has a verdict or the extra runs are spent; the
/// summary says which; the stored runs name their suite entry; a baseline that is not there
/// is refused before anything runs.
#[test]
fn until_decided_repeats_an_entry_until_compare_can_decide() {
    let dir = temp();
    let db = dir.path().join("r.db");
    let text = "name = \"decide\"\ndescription = \"d\"\n[[entry]]\nname = \"cpu small\"\n\
                workload = \"cpu\"\nparams = { max_prime = 500 }\ntime = 0.1\n\
                repetitions = 2\n";
    let (code, _, err) = suite(text, &["--label", "base", "-q"], &db);
    assert_eq!(code, Some(0), "{err}");
    let base = stored(&db, "base");
    assert_eq!(base.len(), 2);
    let (code, out, err) = suite(
        text,
        &[
            "--label",
            "new",
            "-q",
            "-f",
            "json",
            "--until-decided",
            "base",
            "--max-extra-runs",
            "8",
        ],
        &db,
    );
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let entry = &doc["entries"][0];
    let note = entry["note"].as_str().unwrap();
    assert!(note.contains("vs base: ×"), "{note}");
    let runs = entry["result_ids"].as_array().unwrap().len();
    // Two baseline runs: the rank test needs at least 9 on this side to reach p < 0.05, so
    // the entry went on past its own 2 repetitions, up to the 8 extra allowed.
    assert!(runs > 2 && runs <= 10, "{runs} runs: {note}");
    if runs < 10 {
        assert!(
            note.contains("extra run(s)") && !note.contains("budget"),
            "{note}"
        );
    } else {
        assert!(note.contains("extra run(s)"), "{note}");
    }
    assert_eq!(stored(&db, "new").len(), runs);
    // Each stored run names the entry that made it.
    let id = entry["result_ids"][0].as_str().unwrap();
    let show = hb_with_store(&db)
        .args(["results", "show", id, "-f", "json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(r["suite"]["name"], "decide");
    assert_eq!(r["suite"]["entry"], "cpu small");
    // No such baseline: refused before running.
    let (code, out, err) = suite(text, &["--until-decided", "nosuch", "-q"], &db);
    assert_eq!(code, Some(2), "{err}\n{out}");
    assert!(
        err.contains("--until-decided nosuch: no stored run has that label"),
        "{err}"
    );
    assert_eq!(stored(&db, "nosuch").len(), 0);
}

/// `--until-decided BASELINE` against a baseline with so few stored runs that no number of
/// extra runs within the budget could reach a verdict: the entry stops at its own
/// repetitions and the note says why and what to do, instead of spending the budget.
#[test]
fn until_decided_does_not_spend_runs_that_cannot_decide() {
    let dir = temp();
    let db = dir.path().join("r.db");
    let text = "name = \"decide\"\ndescription = \"d\"\n[[entry]]\nname = \"cpu small\"\n\
                workload = \"cpu\"\nparams = { max_prime = 500 }\ntime = 0.1\n\
                repetitions = 2\n";
    for (label, reps, extra) in [("one", "1", "8"), ("two", "2", "3")] {
        let base_text = text.replace("repetitions = 2", &format!("repetitions = {reps}"));
        let (code, _, err) = suite(&base_text, &["--label", label, "-q"], &db);
        assert_eq!(code, Some(0), "{err}");
        let (code, out, err) = suite(
            text,
            &[
                "--label",
                &format!("vs-{label}"),
                "-q",
                "-f",
                "json",
                "--until-decided",
                label,
                "--max-extra-runs",
                extra,
            ],
            &db,
        );
        assert_eq!(code, Some(0), "{err}");
        let doc: Value = serde_json::from_str(&out).unwrap();
        let entry = &doc["entries"][0];
        let note = entry["note"].as_str().unwrap();
        // 1 baseline run: never a verdict; 2 baseline runs: only from 8 runs here on.
        assert_eq!(entry["result_ids"].as_array().unwrap().len(), 2, "{note}");
        assert!(
            note.contains(&format!("{label} has only {reps} run(s) of this entry"))
                && note.contains(&format!("even after {extra} more run(s)")),
            "{note}"
        );
    }
}

/// `--until-decided BASELINE --interleave`: a disk entry compared across two directories of
/// this machine alternates its extra runs with runs of the baseline's configuration,
/// re-created in the baseline's directory and saved under its label with the same
/// parameters; entries whose sides differ in nothing a run records, and baselines from
/// another machine, are not interleaved, and the note says why.
#[test]
fn interleave_recreates_the_baselines_configuration_where_it_ran() {
    let dir = temp();
    let db = dir.path().join("r.db");
    let side_a = temp();
    let side_b = temp();
    let text = "name = \"il\"\ndescription = \"d\"\n[[entry]]\nname = \"files\"\n\
                workload = \"fileio\"\nparams = { total_size = \"256K\", num = 2, \
                test_mode = \"rndrd\" }\ntime = 0.1\nrepetitions = 2\n\
                [[entry]]\nname = \"cpu small\"\nworkload = \"cpu\"\n\
                params = { max_prime = 500 }\ntime = 0.1\nrepetitions = 2\n";
    let a = side_a.path().to_str().unwrap();
    let (code, _, err) = suite(text, &["--label", "a", "--directory", a, "-q"], &db);
    assert_eq!(code, Some(0), "{err}");
    let before = stored(&db, "a").len();
    assert_eq!(before, 4);
    let b = side_b.path().to_str().unwrap();
    let (code, out, err) = suite(
        text,
        &[
            "--label",
            "b",
            "--directory",
            b,
            "-q",
            "-f",
            "json",
            "--until-decided",
            "a",
            "--interleave",
            "--max-extra-runs",
            "2",
        ],
        &db,
    );
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let files = &doc["entries"][0];
    let note = files["note"].as_str().unwrap();
    let mine = files["result_ids"].as_array().unwrap().len();
    let show = |id: &str| -> Value {
        let o = hb_with_store(&db)
            .args(["results", "show", id, "-f", "json"])
            .output()
            .unwrap();
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let all_a = stored(&db, "a");
    let files_a: Vec<Value> = all_a
        .iter()
        .map(|r| show(r["id"].as_str().unwrap()))
        .filter(|r| r["suite"]["entry"] == "files")
        .collect();
    if note.contains("after") {
        // Extra runs were made: as many of the baseline's configuration as of this side's.
        assert!(
            note.contains("interleaved with a's configuration"),
            "{note}"
        );
        assert_eq!(files_a.len(), 2 + (mine - 2), "{note}");
        // The suite document names them, under the baseline's label.
        assert_eq!(files["baseline_runs"]["label"], "a");
        assert_eq!(
            files["baseline_runs"]["result_ids"]
                .as_array()
                .unwrap()
                .len(),
            mine - 2
        );
    } else {
        // Decided at once (2 runs a side can already be apart): nothing re-created.
        assert_eq!(files_a.len(), 2, "{note}");
        assert!(files.get("baseline_runs").is_none(), "{files}");
    }
    assert!(suite_schema().is_valid(&doc), "{doc}");
    // Every run of side a, re-created or not, ran in a's directory with a's parameters.
    let canon = |p: &str| std::fs::canonicalize(p).unwrap();
    for r in &files_a {
        assert_eq!(
            canon(r["suite"]["directory"].as_str().unwrap()),
            canon(a),
            "{r}"
        );
        assert_eq!(r["workload"]["params"], files_a[0]["workload"]["params"]);
        assert_eq!(r["config"]["threads"], files_a[0]["config"]["threads"]);
    }
    let first_b = show(files["result_ids"][0].as_str().unwrap());
    assert_eq!(
        canon(first_b["suite"]["directory"].as_str().unwrap()),
        canon(b)
    );
    // Nothing left behind in either directory.
    for d in [&side_a, &side_b] {
        let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }
    // The CPU entry: same parameters, no directory: nothing to re-create.
    let cpu = &doc["entries"][1];
    let note = cpu["note"].as_str().unwrap();
    assert!(
        note.contains("not interleaved: nothing the runs record differs"),
        "{note}"
    );
    // A baseline from another machine is not re-created here.
    let other = dir.path().join("other.json");
    let mut r = files_a[0].clone();
    r["id"] = Value::String("0123456789abcdef0123456789abcdef".into());
    r["label"] = Value::String("elsewhere".into());
    r["host"]["hostname"] = Value::String("not-this-host.example".into());
    std::fs::write(&other, serde_json::to_string(&r).unwrap()).unwrap();
    let imp = hb_with_store(&db)
        .args(["results", "import", other.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(imp.status.success(), "{imp:?}");
    let (code, out, err) = suite(
        text,
        &[
            "--label",
            "c",
            "--directory",
            b,
            "-q",
            "-f",
            "json",
            "--until-decided",
            "elsewhere",
            "--interleave",
            "--max-extra-runs",
            "1",
        ],
        &db,
    );
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let note = doc["entries"][0]["note"].as_str().unwrap();
    assert!(
        note.contains("not interleaved: the baseline ran on not-this-host.example"),
        "{note}"
    );
    assert_eq!(stored(&db, "elsewhere").len(), 1);
    // The same label on both sides would mix the runs: refused before running.
    let (code, _, err) = suite(
        text,
        &["--label", "a", "--until-decided", "a", "--interleave", "-q"],
        &db,
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--interleave: this suite saves its runs under a too"),
        "{err}"
    );
}
