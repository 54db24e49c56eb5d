//! The README's main job, `hostbench suite quick`, end to end with the real built-in suite:
//! every entry runs and is summarised, every workload run is saved, and the JSON document
//! validates. It is the longest test (about two minutes with the unoptimised test binary) and
//! runs alone ([`alone`]), not beside other tests competing for the CPUs.

use crate::common::*;
use serde_json::Value;
use std::time::Duration;

#[test]
fn the_quick_suite_runs_end_to_end() {
    let _alone = alone();
    let dir = tempfile::Builder::new()
        .prefix("hostbench-test-quick-")
        .tempdir()
        .unwrap();
    let db = dir.path().join("r.db");
    let work = dir.path().join("cwd");
    std::fs::create_dir(&work).unwrap();
    let out = hb_with_store(&db)
        .current_dir(&work)
        .args([
            "suite",
            "quick",
            "--format",
            "json",
            "--label",
            "quick-test",
        ])
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        !err.contains('\x1b'),
        "escape codes on piped stderr: {err:?}"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["suite"], "quick");
    assert_eq!(doc["source"], "built-in");

    // Every entry of the built-in file is in the summary, done, with a figure.
    let check = hb().args(["suite", "quick", "--check"]).output().unwrap();
    // --check: a header line, a column header, one row per entry (numbered), a footnote.
    let planned = String::from_utf8_lossy(&check.stdout)
        .lines()
        .skip(2)
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .count();
    let entries = doc["entries"].as_array().unwrap();
    assert_eq!(entries.len(), planned);
    let mut saved = 0;
    for e in entries {
        let name = e["name"].as_str().unwrap();
        assert_eq!(e["status"], "done", "{name}: {e}");
        let n = e["values"].as_array().unwrap().len() as u64;
        assert!(
            n >= e["repetitions"]["min"].as_u64().unwrap(),
            "{name}: {e}"
        );
        assert!(
            n <= e["repetitions"]["max"].as_u64().unwrap(),
            "{name}: {e}"
        );
        assert!(e["stats"]["median"].as_f64().unwrap() > 0.0, "{name}: {e}");
        assert!(
            e["figure"]["unit"].as_str().is_some_and(|u| !u.is_empty()),
            "{name}"
        );
        if e["workload"].is_string() {
            assert_eq!(
                e["result_ids"].as_array().unwrap().len() as u64,
                n,
                "{name}"
            );
            saved += n;
        }
    }
    for w in [
        "cpu",
        "memory",
        "stream",
        "threads",
        "mutex",
        "null",
        "fileio",
        "disk.fio",
        "smallfiles",
        "http.load",
        "db.oltp_read_only",
    ] {
        assert!(
            entries.iter().any(|e| e["workload"] == w),
            "quick lacks {w}"
        );
    }
    assert!(
        entries.iter().any(|e| e["probe"] == "timer"),
        "quick lacks the timer probe"
    );

    // Every workload run is in the store under the label.
    let list = hb_with_store(&db)
        .args([
            "results",
            "list",
            "--label",
            "quick-test",
            "--limit",
            "1000",
            "-f",
            "json",
        ])
        .output()
        .unwrap();
    let runs: Vec<Value> = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(runs.len() as u64, saved);
    // Nothing left behind in the working directory.
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);
}
