//! `hostbench stream` end to end: STREAM's layout (snapshot with every figure redacted, plus
//! the column widths stream.c prints), the JSON result against the schema, CSV, the native
//! grammar's use of the runner's limits, and bad input (one line, exit 2, nothing allocated).
//!
//! Arrays are small (10^5 elements), so every run takes a few milliseconds; the figures
//! describe the cache, which is fine here: no test looks at a rate's value.

use crate::common;
use crate::common::{
    assert_valid, hb_std, interrupt, redact_signed as redact, run, spawn_piped, stdout_ok as run_ok,
};
use serde_json::Value;
use std::time::Duration;

/// stream.c prints `%s%12.1f  %11.6f  %11.6f  %11.6f` with 11-character labels: every kernel
/// line is 62 characters wide and its four figures parse.
fn assert_stream_columns(out: &str, labels: &[&str]) {
    for label in labels {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{label}:")))
            .unwrap_or_else(|| panic!("no '{label}:' line in\n{out}"));
        assert_eq!(line.len(), 62, "{line:?}");
        let figures: Vec<f64> = line[11..]
            .split_whitespace()
            .map(|f| {
                f.parse()
                    .unwrap_or_else(|_| panic!("figure {f:?} in {line:?}"))
            })
            .collect();
        assert_eq!(figures.len(), 4, "{line:?}");
        assert!(figures[0] > 0.0, "{line:?}");
        assert!(
            figures[2] <= figures[1] && figures[1] <= figures[3],
            "min <= avg <= max: {line:?}"
        );
    }
}

const SMALL: &[&str] = &["stream", "--array-size=100000", "--ntimes=3", "--threads=2"];

#[test]
fn stream_layout() {
    let out = run_ok(SMALL);
    assert_stream_columns(&out, &["Copy", "Scale", "Add", "Triad"]);
    assert!(out.contains("Array size = 100000 (elements), Offset = 0 (elements)\n"));
    assert!(
        out.contains("Memory per array = 0.8 MiB (= 0.0 GiB).\n"),
        "{out}"
    );
    assert!(out.contains("Each kernel will be executed 3 times.\n"));
    assert!(out.contains("Number of Threads counted = 2\n"));
    assert!(!out.contains(" NT:"), "no NT rows unless asked");
    insta::assert_snapshot!("stream_layout", redact(&out));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn nt_stores_are_their_own_block() {
    let mut args = SMALL.to_vec();
    args.push("--nt-stores");
    let out = run_ok(&args);
    assert_stream_columns(&out, &["Copy", "Scale", "Add", "Triad"]);
    assert_stream_columns(&out, &["Copy NT", "Scale NT", "Add NT", "Triad NT"]);
    // STREAM's own section, up to its validation line, is unchanged by the extension.
    let validates = out.find("Solution Validates").unwrap();
    assert!(!out[..validates].contains(" NT:"), "{out}");
    insta::assert_snapshot!("stream_nt_layout", redact(&out));
}

#[test]
fn offset_and_suffixes_reach_the_report() {
    let out = run_ok(&[
        "stream",
        "--array-size",
        "64Ki",
        "--offset",
        "3",
        "--ntimes",
        "2",
        "-t",
        "1",
    ]);
    assert!(
        out.contains("Array size = 65536 (elements), Offset = 3 (elements)\n"),
        "{out}"
    );
    assert!(out.contains("Number of Threads requested = 1\n"));
    assert!(out.contains("Solution Validates: avg error less than 1.000000e-13"));
}

fn json(args: &[&str]) -> Value {
    let out = run_ok(args);
    let v: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not one JSON document ({e}):\n{out}"));
    assert_valid(&v, &args.join(" "));
    v
}

fn table<'a>(r: &'a Value, name: &str) -> Option<&'a Value> {
    r["tables"].as_array()?.iter().find(|t| t["name"] == name)
}

#[test]
fn json_result_validates_and_carries_the_table() {
    let mut args = SMALL.to_vec();
    args.extend(["--nt-stores", "--format=json"]);
    let r = json(&args);
    let nt = cfg!(target_arch = "x86_64");
    let per_iter = if nt { 8 } else { 4 };
    assert_eq!(r["workload"]["id"], "stream");
    assert_eq!(r["config"]["grammar"], "stream");
    assert_eq!(r["config"]["threads"], 2);
    assert_eq!(r["workload"]["params"]["ntimes"], 3);
    assert_eq!(r["workload"]["params"]["array_size"], 100000);
    assert_eq!(r["metrics"]["events"], 3 * per_iter);
    assert_eq!(r["outcome"]["stop_reason"], "workers_done");
    let facts = &r["workload"]["facts"];
    assert_eq!(facts["validated"], 1.0);
    assert_eq!(facts["array_elements"], 100000.0);
    assert_eq!(facts["passes"], f64::from(3 * per_iter));
    assert_eq!(facts["nt_stores"], if nt { 1.0 } else { 0.0 });
    let t = table(&r, "stream").expect("a `stream` table");
    let cols: Vec<&str> = t["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(cols[0], "best_rate_mb_per_s");
    let rows: Vec<&str> = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(rows, ["Copy", "Scale", "Add", "Triad"]);
    let triad = &t["rows"][3]["values"];
    // Best rate = 10^-6 x credited bytes / min time.
    let (rate, min_t, bytes) = (
        triad[0].as_f64().unwrap(),
        triad[2].as_f64().unwrap(),
        triad[4].as_f64().unwrap(),
    );
    assert_eq!(bytes, 24.0 * 100000.0);
    assert!(
        (rate - 1e-6 * bytes / min_t).abs() <= 1e-9 * rate,
        "{triad}"
    );
    assert_eq!(table(&r, "stream_nt").is_some(), nt);
    if nt {
        let nt_rows = table(&r, "stream_nt").unwrap()["rows"].as_array().unwrap();
        assert_eq!(nt_rows[3]["label"], "Triad NT");
        // No write-allocate with streaming stores: traffic = credited bytes.
        assert_eq!(nt_rows[3]["values"][6], nt_rows[3]["values"][4]);
    }
}

#[test]
fn csv_has_one_line_per_kernel() {
    let mut args = SMALL.to_vec();
    args.push("--format=csv");
    let out = run_ok(&args);
    let mut lines = out.lines();
    let head = lines.next().unwrap();
    assert!(
        head.starts_with("function,stores,best_rate_mb_per_s,avg_time_s,"),
        "{head}"
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 4, "{out}");
    assert!(rows[3].starts_with("Triad,regular,"), "{out}");
    let n = head.split(',').count();
    assert!(rows.iter().all(|r| r.split(',').count() == n), "{out}");
}

#[test]
fn native_run_stops_at_the_runners_event_limit() {
    let r = json(&[
        "run",
        "stream",
        "--set",
        "array_size=10000",
        "-t",
        "2",
        "--events",
        "6",
        "--time",
        "0",
        "-f",
        "json",
    ]);
    assert_eq!(r["metrics"]["events"], 6);
    assert_eq!(r["outcome"]["stop_reason"], "event_limit");
    assert_eq!(r["workload"]["facts"]["validated"], 1.0);
    let t = table(&r, "stream").unwrap();
    // Passes 4 and 5 are the second Copy and Scale: one sample each, none for Add/Triad.
    assert_eq!(t["rows"][0]["values"][5], 1.0);
    assert_eq!(t["rows"][3]["values"][5], 0.0);
    assert!(t["rows"][3]["values"][0].is_null());
}

#[test]
fn long_runs_restart_the_recurrence_and_still_validate() {
    // Each iteration multiplies the values by 15: without a restart they overflow past ~260
    // iterations and validation compares infinities. 2,000 iterations (and an odd number of
    // passes past the last restart) validate.
    for events in ["8000", "8003"] {
        let r = json(&[
            "run",
            "stream",
            "--set",
            "array_size=2000",
            "-t",
            "2",
            "--events",
            events,
            "--time",
            "0",
            "-f",
            "json",
        ]);
        assert_eq!(r["metrics"]["events"].to_string(), events);
        assert_eq!(
            r["workload"]["facts"]["validated"], 1.0,
            "{}",
            r["warnings"]
        );
    }
}

#[test]
fn ctrl_c_stops_after_a_pass_and_still_validates() {
    let child = spawn_piped(hb_std().args([
        "stream",
        "--array-size=200000",
        "--ntimes=100000000",
        "-t",
        "2",
    ]));
    std::thread::sleep(Duration::from_millis(500));
    let out = interrupt(child);
    let s = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    // Every thread left the loop after the same pass: no barrier deadlock, and validation
    // replays exactly the passes that ran.
    assert!(s.contains("Solution Validates"), "{s}\n{err}");
    assert_stream_columns(&s, &["Copy", "Scale", "Add", "Triad"]);
    assert!(err.contains("cut short (interrupted)"), "{err}");
}

#[test]
fn help_lists_the_options() {
    let out = run_ok(&["stream", "--help"]);
    for opt in [
        "--array-size",
        "--ntimes",
        "--offset",
        "--threads",
        "--nt-stores",
        "--format",
    ] {
        assert!(out.contains(opt), "{opt} missing from\n{out}");
    }
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["--ntimes=1"], "at least 2"),
        (&["--ntimes", "0"], "at least 2"),
        (&["--ntimes=ten"], "not a whole number"),
        (&["--array-size=0"], "--array-size=0"),
        (&["--array-size=1.5M"], "not a whole number"),
        (&["--array-size=-5"], "--array-size"),
        (&["--array-size=3", "--threads=4"], "smaller than"),
        (&["--threads=0"], "at least 1"),
        (&["--offset=99999999"], "--offset"),
        (&["--format=xml"], "--format"),
        (&["--simd=avx1024"], "--simd"),
        (&["--frobnicate"], "--frobnicate"),
        (&["--array-size=500G"], "MemAvailable"),
        (&["--array-size=999999G"], "array_size"),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["stream"];
        args.extend_from_slice(extra);
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?} printed a report: {out}");
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: not one line: {err}");
        assert!(
            err.contains(needle),
            "{args:?}: expected '{needle}' in: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    }
}

#[test]
fn stream_and_memlat_take_label_and_no_save() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let ok = |args: &[&str]| {
        let out = common::hb_with_store(&db)
            .args(args)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    ok(&[
        "stream",
        "--array-size=100000",
        "--ntimes=2",
        "--label=box-a",
    ]);
    ok(&["stream", "--array-size=100000", "--ntimes=2", "--no-save"]);
    ok(&[
        "memlat",
        "--max-size=64K",
        "--min-time=1ms",
        "--min-loads=1000",
        "--label=box-a",
    ]);
    let list: Value =
        serde_json::from_str(&ok(&["results", "list", "--label=box-a", "--format=json"])).unwrap();
    let mut w: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["workload"].as_str().unwrap())
        .collect();
    w.sort();
    assert_eq!(w, ["memlat", "stream"], "{list}");
    let all: Value = serde_json::from_str(&ok(&["results", "list", "--format=json"])).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 2, "--no-save saved: {all}");
}
