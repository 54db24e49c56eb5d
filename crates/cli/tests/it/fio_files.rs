//! fio's jobs that fail, their files and their block sizes, side by side with the installed
//! fio: the same job through both, compared on what does not depend on speed — exit status,
//! each job's `error`, I/O counts, files made and their sizes, offsets touched.
//!
//! Without fio the comparisons are skipped with a message, unless `HOSTBENCH_TEST_FIO` is
//! set: then a missing fio fails the test.

use super::fio::{s, tmp};
use super::fio_seq::need_fio;
use crate::common;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// What one run of a fio (ours or the real one) gave.
struct Ran {
    code: i32,
    out: String,
    err: String,
    took: Duration,
}

/// The JSON document of `out` (fio 3.33 prints a failing job's start-up line before its
/// JSON, so the document starts at the first `{`).
fn doc(out: &str) -> Value {
    let i = out
        .find('{')
        .unwrap_or_else(|| panic!("no JSON in:\n{out}"));
    serde_json::from_str(&out[i..]).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"))
}

/// hostbench's fio front-end on `args` in `dir`.
fn hb(dir: &Path, args: &[&str]) -> Ran {
    let t = Instant::now();
    let o = common::hb()
        .current_dir(dir)
        .arg("fio")
        .args(args)
        .arg("--no-save")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!err.contains("panicked"), "{err}");
    Ran {
        code: o.status.code().unwrap_or(-1),
        out: String::from_utf8(o.stdout).unwrap(),
        err,
        took: t.elapsed(),
    }
}

/// The real fio on `args` in `dir`.
fn fio(dir: &Path, args: &[&str]) -> Ran {
    let t = Instant::now();
    let o = std::process::Command::new("fio")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    Ran {
        code: o.status.code().unwrap_or(-1),
        out: String::from_utf8(o.stdout).unwrap(),
        err: String::from_utf8_lossy(&o.stderr).to_string(),
        took: t.elapsed(),
    }
}

/// Each JSON job entry: (name, error, reads, writes).
fn entries(v: &Value) -> Vec<(String, i64, u64, u64)> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["error"].as_i64().unwrap(),
                j["read"]["total_ios"].as_u64().unwrap(),
                j["write"]["total_ios"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Every job block's header in a normal report, cut after `err=` and its number.
fn err_lines(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let p = l.find(": err=")?;
            let rest = &l[p + 6..];
            let n = rest.split([':', '(']).next().unwrap().trim();
            Some(format!("{} err={n}", &l[..p]))
        })
        .collect()
}

/// A job writing /dev/full (every write fails with ENOSPC) and a null job beside it.
const FAILING: &[&str] = &[
    "--name=a",
    "--filename=/dev/full",
    "--rw=write",
    "--size=64k",
    "--bs=4k",
    "--name=b",
    "--ioengine=null",
    "--size=1m",
];

#[test]
fn a_failing_job_lets_the_others_go_on_as_in_fio() {
    if !need_fio("a_failing_job_lets_the_others_go_on_as_in_fio") {
        return;
    }
    let d = tmp("fail");
    let f = format!("--filename={}", s(&d.join("x")));
    let mut args = FAILING.to_vec();
    args.push(&f);
    let (h, p) = (hb(&d, &args), fio(&d, &args));
    assert_eq!(h.code, 1, "one job failed: exit status 1\n{}", h.err);
    assert_eq!(h.code, p.code, "fio: {}", p.err);
    assert_eq!(
        err_lines(&h.out),
        [
            "a: (groupid=0, jobs=1) err=28",
            "b: (groupid=0, jobs=1) err=0"
        ]
    );
    assert_eq!(err_lines(&h.out), err_lines(&p.out), "fio:\n{}", p.out);
    assert!(
        h.out
            .contains("err=28 (func=io_u error, error=No space left on device)"),
        "{}",
        h.out
    );
    assert!(h.err.contains("io_u error on file /dev/full"), "{}", h.err);
    // The null job did all of its work; the failed write counts as issued, as in fio.
    for fmt in ["--output-format=json", "--output-format=json+"] {
        args.push(fmt);
        let (h, p) = (hb(&d, &args), fio(&d, &args));
        args.pop();
        let he = entries(&doc(&h.out));
        assert_eq!(
            he,
            [("a".to_string(), 28, 0, 1), ("b".to_string(), 0, 256, 0)],
            "{fmt}"
        );
        assert_eq!(he, entries(&doc(&p.out)), "{fmt}");
        assert_eq!(h.code, 1);
    }
    // The stored result carries the error too (hostbench's own JSON, schema 1.3).
    args.push("--output-format=hostbench-json");
    let h = hb(&d, &args);
    let r = doc(&h.out);
    let e = &r["fio"]["blocks"][0]["error"];
    assert_eq!(e["errno"], 28, "{r}");
    assert_eq!(e["func"], "io_u error");
    assert_eq!(e["clones"], 1);
    assert!(r["fio"]["blocks"][1].get("error").is_none());
    assert!(
        common::violations(&r).is_empty(),
        "{:?}",
        common::violations(&r)
    );
}

#[test]
fn exit_status_counts_the_failed_clones_as_in_fio() {
    if !need_fio("exit_status_counts_the_failed_clones_as_in_fio") {
        return;
    }
    let d = tmp("fail2");
    let args = [
        "--name=a",
        "--filename=/dev/full",
        "--rw=write",
        "--size=64k",
        "--bs=4k",
        "--numjobs=2",
        "--group_reporting",
        "--output-format=json",
    ];
    let (h, p) = (hb(&d, &args), fio(&d, &args));
    assert_eq!((h.code, p.code), (2, 2), "{}", h.err);
    assert_eq!(entries(&doc(&h.out)), [("a".to_string(), 28, 0, 2)]);
    assert_eq!(entries(&doc(&h.out)), entries(&doc(&p.out)));
}

#[test]
fn exitall_on_error_stops_the_others_as_in_fio() {
    if !need_fio("exitall_on_error_stops_the_others_as_in_fio") {
        return;
    }
    let d = tmp("fail3");
    let f = format!("--filename={}", s(&d.join("x")));
    // a fails 1 s into the run; b would run 20 s.
    let args = [
        "--name=a",
        "--filename=/dev/full",
        "--rw=write",
        "--size=64k",
        "--bs=4k",
        "--exitall_on_error",
        "--startdelay=1",
        "--name=b",
        "--ioengine=null",
        "--size=1m",
        &f,
        "--time_based",
        "--runtime=20",
        "--output-format=json",
    ];
    let (h, p) = (hb(&d, &args), fio(&d, &args));
    for (who, r) in [("hostbench", &h), ("fio", &p)] {
        assert_eq!(r.code, 1, "{who}: {}", r.err);
        assert!(r.took < Duration::from_secs(10), "{who} took {:?}", r.took);
        let e = entries(&doc(&r.out));
        assert_eq!((e[0].1, e[1].1), (28, 0), "{who}: {e:?}");
        assert!(e[1].2 > 0, "{who}: b ran until a failed");
    }
    // Without exitall_on_error b runs its time (2 s here).
    let args2: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| *a != "--exitall_on_error")
        .map(|a| {
            if a == "--runtime=20" {
                "--runtime=2"
            } else {
                a
            }
        })
        .collect();
    let h = hb(&d, &args2);
    assert_eq!(h.code, 1);
    assert!(h.took >= Duration::from_millis(1900), "{:?}", h.took);
    let b = &doc(&h.out)["jobs"][1];
    assert!(b["job_runtime"].as_u64().unwrap() >= 1900, "{b}");
}
