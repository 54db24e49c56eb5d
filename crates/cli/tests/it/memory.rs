//! sysbench's `memory` test through the real binary: the report layout, the event quota
//! split across threads, the old grammar, interval lines, warnings for misleading options,
//! huge pages, and errors.

use crate::common::*;
use serde_json::Value;
use std::time::Duration;

#[test]
fn memory_layout_and_quota() {
    let (out, err) = run_ok(&[
        "--test=memory",
        "--memory-total-size=32M",
        "--memory-block-size=64",
        "run",
    ]);
    assert_sysbench_columns(&out);
    insta::assert_snapshot!("sysbench_memory", redact(&out));
    // 32 MiB / 64 B = 524288 events, 32 MiB.
    assert!(out.contains("Total operations: 524288 ("), "{out}");
    assert!(out.contains("\n32.00 MiB transferred ("), "{out}");
    assert!(
        out.contains("  block size: 0KiB\n  total size: 32MiB\n"),
        "{out}"
    );
    assert!(err.contains("--test option is deprecated"), "{err}");
    // A 64-byte block lives in L1: say what is really measured.
    assert!(err.contains("fits in the L1 cache"), "{err}");
}

#[test]
fn quota_is_split_across_threads_and_events_is_ignored() {
    // 1 MiB / 1 KiB = 1024 events; 3 threads get 341 each, the remainder is dropped.
    let (out, _) = run_ok(&[
        "memory",
        "--threads=3",
        "--memory-total-size=1M",
        "--memory-scope=local",
        "--events=5",
        "--time=0",
        "run",
    ]);
    assert!(out.contains("Total operations: 1023 ("), "{out}");
    assert!(
        out.contains("    total number of events:              1023\n"),
        "{out}"
    );
    assert!(out.contains("341.0000/0.00"), "{out}");
}

#[test]
fn block_times_threads_above_total_warns_and_does_nothing() {
    let (out, err) = run_ok(&[
        "memory",
        "--threads=2",
        "--memory-block-size=1K",
        "--memory-total-size=1K",
        "run",
    ]);
    assert!(
        out.contains("Total operations: 0 (    0.00 per second)"),
        "{out}"
    );
    assert!(
        err.contains("quota (total / block / threads) is 0 events"),
        "{err}"
    );
}

#[test]
fn oper_none_has_no_transfer_line_and_rnd_read_counts_bytes() {
    let (out, _) = run_ok(&[
        "memory",
        "--memory-oper=none",
        "--memory-total-size=1M",
        "run",
    ]);
    assert!(out.contains("Total operations: 1024 ("), "{out}");
    assert!(!out.contains("MiB transferred"), "{out}");
    let (out, err) = run_ok(&[
        "memory",
        "--memory-oper=read",
        "--memory-access-mode=rnd",
        "--memory-block-size=4K",
        "--memory-total-size=4M",
        "--format=json",
        "run",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["metrics"]["events"], 1024);
    assert_eq!(v["metrics"]["counters"]["bytes_read"], 4 << 20);
    assert_eq!(v["metrics"]["counters"]["bytes_written"], 0);
    assert_eq!(v["workload"]["facts"]["accesses_per_event"], 512.0);
    // The headline is sysbench's MiB/sec: events/s × block / 2^20.
    assert_eq!(v["figures"][0]["name"], "mib_per_s");
    let eps = v["metrics"]["events_per_s"].as_f64().unwrap();
    let mib = v["figures"][0]["value"].as_f64().unwrap();
    assert!(
        (mib - eps * 4096.0 / 1048576.0).abs() <= 1e-6 * mib,
        "{mib} vs {eps}"
    );
    assert!(err.contains("random generator"), "{err}");
    let kinds: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"cache_resident"), "{kinds:?}");
}

#[test]
fn threads_and_time_limit_with_interval_lines() {
    // `hostbench memory --threads=8 run` with a short time: the 100G default quota is not
    // reached, the time limit ends the run.
    let (out, err) = run_ok(&[
        "memory",
        "--threads=8",
        "--time=0.35",
        "--report-interval=0.1",
        "run",
    ]);
    assert!(out.contains("Number of threads: 8"), "{out}");
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("[ ")).collect();
    assert!(lines.len() >= 2, "{out}");
    for l in lines {
        assert!(
            l.ends_with(" MiB/sec") && l.contains("s ] "),
            "not a sysbench memory interval line: {l:?}"
        );
    }
    assert!(err.contains("all 8 threads write the same"), "{err}");
}

#[test]
fn hugetlb_uses_huge_pages_or_says_none_are_reserved() {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let free: u64 = meminfo
        .lines()
        .find(|l| l.starts_with("HugePages_Free:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let out = hb()
        .args([
            "memory",
            "--memory-hugetlb=on",
            "--memory-total-size=1M",
            "run",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if free == 0 {
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("no huge pages are reserved") || err.contains("huge page"),
            "{err}"
        );
        assert!(err.contains("vm.nr_hugepages"), "{err}");
        assert_eq!(err.lines().count(), 1, "one clear line: {err}");
    } else {
        assert!(out.status.success(), "{err}");
    }
}

#[test]
fn bad_memory_options_are_clear_errors() {
    for (arg, want) in [
        ("--memory-block-size=12", "power of two"),
        ("--memory-block-size=4", "power of two"),
        ("--memory-scope=foo", "global, local"),
        ("--memory-oper=foo", "read, write, none"),
        ("--memory-access-mode=foo", "seq, rnd"),
        ("--memory-total-size=lots", "--memory-total-size"),
        ("--memory-block-size=1T", "available"),
    ] {
        let out = hb()
            .args(["memory", "--memory-total-size=1M", arg, "run"])
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{arg}: {err}");
        assert!(err.contains(want), "{arg}: {err}");
        assert!(!err.contains("panicked"), "{arg}: {err}");
    }
}

#[test]
fn memory_help_lists_its_options() {
    let (out, _) = run_ok(&["memory", "help"]);
    for o in [
        "--memory-block-size=SIZE",
        "--memory-total-size=SIZE",
        "--memory-scope=STRING",
        "--memory-hugetlb[=on|off]",
        "--memory-oper=STRING",
        "--memory-access-mode=STRING",
    ] {
        assert!(out.contains(o), "{o} missing:\n{out}");
    }
}
