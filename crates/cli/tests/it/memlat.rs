//! `hostbench memlat` end to end: the text layout (a snapshot with every figure redacted),
//! cache markers against the host's own cache list, JSON against the schema, CSV, the
//! `hostbench run memlat` grammar, bad input (one line, exit 2), huge pages and Ctrl-C.
//!
//! Runs use a 256 KiB ladder with 1 ms per size, so each takes a fraction of a second even
//! in a debug build. Nothing asserts on speed.

use crate::common::{assert_valid, hb_std, interrupt, run, spawn_piped, stdout_ok as run_ok};
use hostbench_workloads::memory::memlat::{self, col, fact, size_label};
use serde_json::Value;
use std::sync::OnceLock;
use std::time::Duration;

/// A short ladder: 4 KiB to 256 KiB, 25 sizes, ~1 ms each.
const SMALL: &[&str] = &["--max-size=256K", "--min-time=1ms", "--min-loads=10000"];

/// `memlat` with the [`SMALL`] ladder and `extra` options.
fn small<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = vec!["memlat"];
    v.extend_from_slice(SMALL);
    v.extend_from_slice(extra);
    v
}

fn host() -> &'static Value {
    static HOST: OnceLock<Value> = OnceLock::new();
    HOST.get_or_init(|| serde_json::from_str(&run_ok(&["sysinfo", "--format", "json"])).unwrap())
}

/// The labels of the 4 KiB..256 KiB ladder at 4 steps per doubling.
fn small_labels() -> Vec<String> {
    memlat::ladder(4096, 256 << 10, 4, 64)
        .into_iter()
        .map(size_label)
        .collect()
}

fn is_marker(l: &str) -> bool {
    l.starts_with("  -- L")
}

/// Pins the layout, not the measurement: drops cache markers (they depend on the host;
/// [`markers_sit_where_the_host_caches_fall`] checks them) and the disturbance footnote;
/// in each row keeps the size label and replaces the measured columns with `#`/`#.#` (the
/// padding before a figure depends on its width, so it collapses to one space), the
/// disturbance mark with a space, and the bar with one `|`. Headers are pinned verbatim.
fn redact(s: &str) -> String {
    const LABEL: usize = 12;
    let mut out = String::new();
    let mut footnote = false;
    for l in s.lines() {
        if l.starts_with("  * ") {
            footnote = true;
            continue;
        }
        if footnote && l.starts_with("    ") {
            continue;
        }
        footnote = false;
        if is_marker(l) {
            continue;
        }
        let bar = l.trim_end_matches('#');
        if bar.len() == l.len() || bar.len() < LABEL {
            out.push_str(l);
        } else {
            out.push_str(&bar[..LABEL]);
            out.push_str(&redact_figures(&bar[LABEL..].replace('*', " ")));
            out.push('|');
        }
        out.push('\n');
    }
    out
}

fn redact_figures(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ' ' {
            while chars.peek() == Some(&' ') {
                chars.next();
            }
            out.push(' ');
        } else if c.is_ascii_digit() {
            let mut dot = false;
            while let Some(&n) = chars.peek().filter(|n| n.is_ascii_digit() || **n == '.') {
                dot |= n == '.';
                chars.next();
            }
            out.push_str(if dot { "#.#" } else { "#" });
        } else {
            out.push(c);
        }
    }
    out
}

/// The table lines of the text view (rows only), in order.
fn row_lines(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.ends_with('#') && !is_marker(l))
        .collect()
}

#[test]
fn text_layout() {
    let out = run_ok(&small(&["--seed=7"]));
    insta::assert_snapshot!("text_layout", redact(&out));
    // The rows are exactly the ladder, in order, and every column lines up.
    let rows = row_lines(&out);
    let labels: Vec<&str> = rows
        .iter()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            &l[l.find(w[0]).unwrap()..l.find(w[1]).unwrap() + w[1].len()]
        })
        .collect();
    assert_eq!(labels, small_labels(), "{out}");
    let widths: Vec<usize> = rows.iter().map(|l| l.trim_end_matches('#').len()).collect();
    assert!(widths.windows(2).all(|w| w[0] == w[1]), "{out}");
    let header = out.lines().find(|l| l.contains("ns/load")).unwrap();
    assert_eq!(header.find("staircase"), Some(widths[0]), "{out}");
    assert!(out.contains("seed 7"), "{out}");
}

/// Each data or unified cache smaller than the ladder's top gets a marker line between the
/// last size that fits in it and the first that does not; larger caches get none.
#[test]
fn markers_sit_where_the_host_caches_fall() {
    let out = run_ok(&small(&[]));
    let lines: Vec<&str> = out.lines().collect();
    let row_size = |l: &str| -> Option<u64> {
        let label = small_labels()
            .into_iter()
            .find(|lab| l.trim_start().starts_with(&format!("{lab} ")))?;
        memlat::ladder(4096, 256 << 10, 4, 64)
            .into_iter()
            .find(|&s| size_label(s) == label)
    };
    for c in host()["cpu"]["caches"].as_array().unwrap() {
        let kind = c["kind"].as_str().unwrap();
        if kind == "Instruction" {
            continue;
        }
        let size = c["size_bytes"].as_u64().unwrap();
        let name = format!(
            "-- L{}{} {}",
            c["level"],
            if kind == "Data" { "d" } else { "" },
            size_label(size)
        );
        let at = lines
            .iter()
            .position(|l| l.starts_with(&format!("  {name}")));
        if size >= 256 << 10 {
            assert_eq!(at, None, "{name} is beyond the ladder:\n{out}");
            continue;
        }
        let at = at.unwrap_or_else(|| panic!("{name} missing:\n{out}"));
        let before = lines[..at].iter().rev().find_map(|l| row_size(l));
        let after = lines[at + 1..].iter().find_map(|l| row_size(l));
        assert!(before.is_none_or(|b| b <= size), "{name}:\n{out}");
        assert!(after.is_some_and(|a| a > size), "{name}:\n{out}");
    }
}

fn json(args: &[&str]) -> Value {
    let out = run_ok(args);
    let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}:\n{out}"));
    assert_valid(&r, &args.join(" "));
    r
}

/// The memlat table's rows as (label, column name → value).
fn rows(r: &Value) -> Vec<(String, serde_json::Map<String, Value>)> {
    let t = r["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == memlat::TABLE)
        .expect("a memlat table");
    let cols: Vec<&str> = t["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let vals = row["values"].as_array().unwrap();
            (
                row["label"].as_str().unwrap().to_string(),
                cols.iter()
                    .zip(vals)
                    .map(|(c, v)| (c.to_string(), v.clone()))
                    .collect(),
            )
        })
        .collect()
}

fn num(m: &serde_json::Map<String, Value>, k: &str) -> f64 {
    m[k].as_f64()
        .unwrap_or_else(|| panic!("{k} is not a number: {m:?}"))
}

#[test]
fn json_validates_and_adds_up() {
    let r = json(&small(&["--format=json"]));
    assert_eq!(r["workload"]["id"], "memlat");
    assert_eq!(r["config"]["threads"], 1);
    assert_eq!(r["config"]["time_limit_s"], 0.0);
    assert_eq!(r["outcome"]["stop_reason"], "workers_done");
    let rows = rows(&r);
    let labels: Vec<&str> = rows.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, small_labels());
    let sizes: Vec<f64> = rows.iter().map(|(_, m)| num(m, col::SIZE_BYTES)).collect();
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
    assert_eq!((sizes[0], sizes[sizes.len() - 1]), (4096.0, 262144.0));
    let (mut loads, mut chunks) = (0.0, 0.0);
    for (label, m) in &rows {
        assert!(num(m, col::LOADS) >= 10_000.0, "{label}: {m:?}");
        assert!(num(m, col::NS_PER_LOAD) > 0.0, "{label}: {m:?}");
        let min = num(m, col::MIN_NS_PER_LOAD);
        assert!(
            min > 0.0 && min <= num(m, col::MEDIAN_NS_PER_LOAD),
            "{label}: {m:?}"
        );
        assert!(min <= num(m, col::NS_PER_LOAD), "{label}: {m:?}");
        loads += num(m, col::LOADS);
        chunks += num(m, col::CHUNKS);
    }
    // Every timed load and chunk went through the runner: counters and events agree.
    assert_eq!(r["metrics"]["counters"]["reads"].as_f64(), Some(loads));
    assert_eq!(r["metrics"]["events"].as_f64(), Some(chunks));
    assert_eq!(r["latency"]["count"].as_f64(), Some(chunks));
    let f = &r["workload"]["facts"];
    assert_eq!(f[fact::SIZES_PLANNED], 25.0);
    assert_eq!(f[fact::SIZES_MEASURED], 25.0);
    assert_eq!(f[fact::LINE_BYTES], 64.0);
    assert_eq!(f[fact::MAX_SIZE_AUTO], 0.0);
    assert_eq!(f[fact::MAX_SIZE_BYTES], 262144.0);
    assert_eq!(f[fact::TOUCHED_BYTES], 262144.0);
    assert_eq!(r["workload"]["params"]["max_size"], 262144);
    assert_eq!(r["workload"]["params"]["min_time"], 0.001);
}

#[test]
fn run_grammar_takes_the_same_parameters() {
    let list = run_ok(&["list"]);
    assert!(list.contains("memlat"), "{list}");
    let r = json(&[
        "run",
        "memlat",
        "--set",
        "max_size=64K",
        "--set",
        "min_time=1ms",
        "--set",
        "min-loads=1000",
        "--time",
        "0",
        "-f",
        "json",
    ]);
    assert_eq!(rows(&r).len(), 17);
    // No warning about the workload; warnings about the host (a busy CI machine) may come.
    let own: Vec<&Value> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| {
            !matches!(
                w["kind"].as_str(),
                Some("noisy_host" | "steal_time" | "swap_activity" | "governor" | "clocksource")
            )
        })
        .collect();
    assert!(own.is_empty(), "{}", r["warnings"]);
    // Extra threads get no work, and a warning that says so.
    let r = json(&[
        "run",
        "memlat",
        "-s",
        "max_size=16K",
        "-s",
        "min_time=1ms",
        "-t",
        "2",
        "--time",
        "0",
        "-f",
        "json",
    ]);
    let per_thread = r["fairness"]["per_thread"].as_array().unwrap();
    assert_eq!(per_thread[1]["events"], 0);
    assert!(
        r["warnings"].as_array().unwrap().iter().any(
            |w| w["kind"] == "no_work" && w["message"].as_str().unwrap().contains("one thread")
        ),
        "{}",
        r["warnings"]
    );
    // A time limit that ends the ladder early keeps what it measured and says so.
    let r = json(&[
        "run",
        "memlat",
        "-s",
        "max_size=1M",
        "--time",
        "0.1s",
        "-f",
        "json",
    ]);
    let measured = rows(&r).len() as f64;
    let planned = memlat::ladder(4096, 1 << 20, 4, 64).len() as f64;
    assert_eq!(r["workload"]["facts"][fact::SIZES_MEASURED], measured);
    assert_eq!(r["workload"]["facts"][fact::SIZES_PLANNED], planned);
    // Each size times at least 100 ms (the default min_time): 0.1 s fits one at most.
    assert!(measured <= 1.0, "{measured} sizes in 0.1 s");
    assert!(
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "size_chosen"
                && w["message"].as_str().unwrap().contains("ended the ladder")),
        "{}",
        r["warnings"]
    );
}

#[test]
fn csv_has_one_row_per_size() {
    let out = run_ok(&small(&["-f", "csv"]));
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("size,size_bytes,ns_per_load,median_ns_per_load,min_ns_per_load,loads,chunks")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let labels: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(labels, small_labels());
    for r in &rows {
        assert_eq!(r.len(), 7, "{r:?}");
        for v in &r[1..] {
            v.parse::<f64>()
                .unwrap_or_else(|e| panic!("{v}: {e} in {r:?}"));
        }
    }
}

fn assert_usage_error(args: &[&str], expect: &str) {
    let (code, out, err) = run(args);
    assert_eq!(code, 2, "{args:?}: {err}{out}");
    assert_eq!(out, "", "{args:?}");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line:\n{err}");
    assert!(
        err.starts_with("hostbench: error: memlat: "),
        "{args:?}: {err}"
    );
    assert!(err.contains(expect), "{args:?}: {err:?} lacks {expect:?}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, expect) in [
        (
            &["memlat", "--min-size=1M", "--max-size=64K"][..],
            "max size 64 KiB is below min size 1 MiB; raise the max size or lower the min size",
        ),
        (
            &["memlat", "--min-size", "32"],
            "min size 32 B is below one cache line (64 B)",
        ),
        (
            &["memlat", "--max-size=12Q"],
            "invalid value '12Q' for '--max-size <SIZE|auto>': '12Q' is not a size",
        ),
        (&["memlat", "--min-size=abc"], "'abc' is not a size"),
        (&["memlat", "--max-size=0"], "0 is not a size; use auto"),
        (
            &["memlat", "--line-size=48"],
            "line size 48 B is not a power of two",
        ),
        (
            &["memlat", "--steps-per-doubling=0"],
            "--steps-per-doubling",
        ),
        (&["memlat", "--min-time=soon"], "'soon' is not a duration"),
        (
            &["memlat", "--threads=2"],
            "memlat measures with one thread",
        ),
        (&["memlat", "--bogus"], "unexpected argument '--bogus'"),
        (
            &[
                "run",
                "memlat",
                "--set",
                "min_size=8K",
                "--set",
                "max_size=4K",
            ],
            "max size 4 KiB is below min size 8 KiB",
        ),
    ] {
        assert_usage_error(args, expect);
    }
}

/// A max size beyond the host's available memory fails before anything is allocated.
#[test]
fn a_max_size_beyond_memory_is_refused() {
    let avail = host()["memory"]["available_bytes"].as_u64().unwrap();
    assert!(avail > 0, "MemAvailable unreadable");
    // Twice what is available, in whole GiB; 4 KiB lines keep it under 2^32 lines.
    let gib = (2 * avail).div_ceil(1 << 30);
    let arg = format!("--max-size={gib}G");
    assert_usage_error(
        &["memlat", &arg, "--line-size=4K"],
        "of memory is available; use a max size below",
    );
}

#[test]
fn huge_pages_are_recorded_or_reported_unavailable() {
    let r = json(&[
        "memlat",
        "--min-size=2M",
        "--max-size=4M",
        "--steps-per-doubling=1",
        "--min-time=1ms",
        "--min-loads=1000",
        "--huge-pages",
        "-f",
        "json",
    ]);
    let f = &r["workload"]["facts"];
    assert_eq!(f[fact::HUGE_PAGES], 1.0);
    let unavailable = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "unavailable");
    if host()["memory"]["transparent_hugepages"] == "never" {
        assert!(unavailable, "{}", r["warnings"]);
    }
    // Either the kernel backed at least half of the buffer with huge pages, or the
    // result says it did not.
    let touched = f[fact::TOUCHED_BYTES].as_f64().unwrap();
    let huge = f[fact::HUGE_PAGE_BYTES].as_f64().unwrap_or(0.0);
    assert!(unavailable || huge >= touched / 2.0, "{f}");
    let text = run_ok(&[
        "memlat",
        "--min-size=2M",
        "--max-size=2M",
        "--min-time=1ms",
        "--min-loads=1000",
        "--huge-pages",
    ]);
    assert!(text.contains("huge pages asked"), "{text}");
}

#[test]
fn ctrl_c_keeps_the_sizes_measured() {
    let child = spawn_piped(hb_std().args(["memlat", "--max-size=64M", "--min-time=50ms"]));
    std::thread::sleep(Duration::from_millis(800));
    let out = interrupt(child);
    let s = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{s}{err}");
    assert!(!row_lines(&s).is_empty(), "no size kept:\n{s}");
    assert!(s.contains("(stopped after "), "{s}");
    let planned = memlat::ladder(4096, 64 << 20, 4, 64).len();
    assert!(s.contains(&format!(" of {planned} sizes)")), "{s}");
    assert!(err.contains("cut short (interrupted)"), "{err}");
}

#[test]
fn help_names_every_option() {
    let out = run_ok(&["memlat", "--help"]);
    for o in [
        "--min-size",
        "--max-size",
        "--steps-per-doubling",
        "--huge-pages",
        "--min-time",
        "--min-loads",
        "--line-size",
        "--seed",
        "--format",
        "Usage: hostbench memlat [OPTIONS]",
    ] {
        assert!(out.contains(o), "{o} missing:\n{out}");
    }
}
