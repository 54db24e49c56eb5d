//! fio's queue-depth search (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`), side by side with the installed fio: a generous target ends at
//! `iodepth` after one final window, an impossible one stays at depth 1 for the whole
//! runtime, a late I/O at depth 1 with `latency_percentile=100` ends the job with fio's
//! ETIMEDOUT; the `latency   :` line, the JSON keys and their types as fio's; the stored
//! result validates. The depth the search reaches depends on timing, so the comparisons
//! are of structure and of the two extremes, never of figures.
//!
//! Without fio the comparisons are skipped with a message, unless `HOSTBENCH_TEST_FIO` is
//! set: then a missing fio fails the test.

use super::fio::{native_json, tmp};
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_seq::need_fio;
use serde_json::Value;
use std::path::Path;

/// The `latency   :` line of a normal report.
fn lat_line(out: &str) -> String {
    out.lines()
        .find(|l| l.trim_start().starts_with("latency   :"))
        .unwrap_or_else(|| panic!("no latency line in:\n{out}"))
        .to_string()
}

/// The line's fields but the depth, and the depth.
fn lat_fields(out: &str) -> (String, u32) {
    let l = lat_line(out);
    let (head, depth) = l
        .rsplit_once(", depth=")
        .unwrap_or_else(|| panic!("no depth in {l}"));
    (head.to_string(), depth.trim().parse().unwrap())
}

/// The share of I/Os (%) in bucket `key` (`8=`) of the `IO depths` line.
fn depth_share(out: &str, key: &str) -> f64 {
    let l = out
        .lines()
        .find(|l| l.contains("IO depths    :"))
        .unwrap_or_else(|| panic!("no IO depths line in:\n{out}"));
    l.split([':', ','])
        .map(str::trim)
        .find_map(|f| f.strip_prefix(key))
        .and_then(|v| v.trim_end_matches('%').parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {l}"))
}

/// The `issued rwts:` total of reads.
fn reads_issued(out: &str) -> u64 {
    let l = out
        .lines()
        .find(|l| l.contains("issued rwts: total="))
        .unwrap_or_else(|| panic!("no issued line in:\n{out}"));
    let t = l.split("total=").nth(1).unwrap();
    t.split(',').next().unwrap().parse().unwrap()
}

/// The four `latency_*` keys of the first JSON job: their values and whether each is an
/// integer (else a float).
fn json_lat(v: &Value) -> Vec<(String, String, bool)> {
    let j = &v["jobs"][0];
    [
        "latency_depth",
        "latency_target",
        "latency_percentile",
        "latency_window",
    ]
    .iter()
    .map(|k| {
        let x = &j[*k];
        assert!(x.is_number(), "{k} missing or not a number: {j}");
        (k.to_string(), x.to_string(), x.is_u64())
    })
    .collect()
}

/// A 64 MiB file in `d` (laid out by the first run of either tool).
fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "--name=lat",
        "--filename=lat.f",
        "--size=64m",
        "--rw=randread",
        "--bs=4k",
        "--direct=1",
        "--random_generator=lfsr",
    ];
    a.extend_from_slice(extra);
    a
}

fn both(d: &Path, extra: &[&str], peer: bool) -> (Ran, Option<Ran>) {
    let a = args(extra);
    let h = hb(d, &a);
    let f = peer.then(|| fio(d, &a));
    (h, f)
}

/// A target no I/O misses: the depth doubles to `iodepth`, one final window runs at it and
/// the job ends long before its runtime; the report covers that window only.
#[test]
fn a_generous_target_ends_at_iodepth_as_fio() {
    let d = tmp("lat-generous");
    let peer = need_fio("a_generous_target_ends_at_iodepth_as_fio");
    for engine in ["libaio", "io_uring", "psync"] {
        let e = format!("--ioengine={engine}");
        let extra = [
            e.as_str(),
            "--iodepth=8",
            "--latency_target=10s",
            "--latency_window=100ms",
            "--latency_percentile=99.9",
            "--time_based",
            "--runtime=20",
        ];
        let (h, f) = both(&d, &extra, peer);
        if engine == "io_uring" && h.code != 0 && h.err.contains("io_uring") {
            eprintln!("skip io_uring: {}", h.err);
            continue;
        }
        assert_eq!(h.code, 0, "{engine}: {}", h.err);
        let (head, depth) = lat_fields(&h.out);
        assert_eq!(
            head,
            "     latency   : target=10000000000, window=100000, percentile=99.90%"
        );
        assert_eq!(depth, 8, "{engine}:\n{}", h.out);
        // Ended by the search, not by the runtime: 1→2→4→8, 8 again (the final window),
        // and done.
        assert!(h.took.as_secs() < 15, "{engine}: took {:?}", h.took);
        if engine != "psync" {
            // The final window's queue stays at 8 (passing through 1, 2 and 4 once each
            // as it fills after the quiesce).
            assert!(depth_share(&h.out, "8=") >= 90.0, "{engine}:\n{}", h.out);
        }
        if let Some(f) = f {
            assert_eq!(f.code, 0, "fio {engine}: {}", f.err);
            assert_eq!(
                lat_fields(&f.out),
                (head, depth),
                "fio {engine}:\n{}",
                f.out
            );
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// A target every I/O misses, 99.9% of them to be within it: every window fails, the
/// depth stays at 1 and the job runs its whole runtime.
#[test]
fn an_impossible_target_stays_at_depth_1_as_fio() {
    let d = tmp("lat-impossible");
    let peer = need_fio("an_impossible_target_stays_at_depth_1_as_fio");
    for engine in ["libaio", "psync"] {
        let e = format!("--ioengine={engine}");
        let extra = [
            e.as_str(),
            "--iodepth=16",
            "--latency_target=1",
            "--latency_window=100ms",
            "--latency_percentile=99.9",
            "--time_based",
            "--runtime=1",
        ];
        let (h, f) = both(&d, &extra, peer);
        assert_eq!(h.code, 0, "{engine}: {}", h.err);
        let (head, depth) = lat_fields(&h.out);
        assert_eq!(
            head,
            "     latency   : target=1000, window=100000, percentile=99.90%"
        );
        assert_eq!(depth, 1, "{engine}:\n{}", h.out);
        assert!(
            h.out.contains("IO depths    : 1=100.0%, 2=0.0%"),
            "{engine}:\n{}",
            h.out
        );
        assert!(h.took.as_millis() >= 900, "{engine}: took {:?}", h.took);
        if let Some(f) = f {
            assert_eq!(f.code, 0, "fio {engine}: {}", f.err);
            assert_eq!(
                lat_fields(&f.out),
                (head, depth),
                "fio {engine}:\n{}",
                f.out
            );
            assert!(
                f.out.contains("IO depths    : 1=100.0%, 2=0.0%"),
                "{}",
                f.out
            );
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// With `latency_percentile=100` (the default) the first I/O over the target at depth 1
/// ends the job with fio's error: ETIMEDOUT, "max latency exceeded", exit 1.
#[test]
fn a_late_io_at_depth_1_ends_the_job_with_fios_error() {
    let d = tmp("lat-fatal");
    let peer = need_fio("a_late_io_at_depth_1_ends_the_job_with_fios_error");
    let extra = [
        "--ioengine=libaio",
        "--iodepth=8",
        "--latency_target=1",
        "--time_based",
        "--runtime=2",
        "--output-format=json",
    ];
    let (h, f) = both(&d, &extra, peer);
    assert_eq!(h.code, 1, "{}", h.err);
    assert!(
        h.err.contains("exceeds specified max (1000 nsec)"),
        "{}",
        h.err
    );
    let v = doc(&h.out);
    let j = &v["jobs"][0];
    assert_eq!(j["error"], 110, "{j}");
    assert_eq!(j["read"]["total_ios"], 1, "{j}");
    assert_eq!(j["latency_depth"], 1, "{j}");
    if let Some(f) = f {
        assert_eq!(f.code, 1, "{}", f.err);
        let fv = doc(&f.out);
        let fj = &fv["jobs"][0];
        assert_eq!(fj["error"], 110, "{fj}");
        assert_eq!(fj["read"]["total_ios"], 1, "{fj}");
        assert_eq!(json_lat(&v), json_lat(&fv));
    }
    // The normal layout's header names fio's function.
    let h = hb(&d, &args(&["--ioengine=psync", "--latency_target=1"]));
    assert_eq!(h.code, 1, "{}", h.err);
    assert!(
        h.out
            .contains("err=110 (func=max latency exceeded, error=Connection timed out)"),
        "{}",
        h.out
    );
    assert_eq!(reads_issued(&h.out), 1, "{}", h.out);
    std::fs::remove_dir_all(d).unwrap();
}

/// `latency_run=1` keeps searching: a generous target holds `iodepth` and the job runs its
/// whole runtime.
#[test]
fn latency_run_keeps_the_search_going() {
    let d = tmp("lat-run");
    let h = hb(
        &d,
        &args(&[
            "--ioengine=libaio",
            "--iodepth=4",
            "--latency_target=10s",
            "--latency_window=100ms",
            "--latency_run=1",
            "--time_based",
            "--runtime=1",
        ]),
    );
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(lat_fields(&h.out).1, 4, "{}", h.out);
    assert!(h.took.as_millis() >= 900, "took {:?}", h.took);
    // The statistics were never started again: the run is the whole second.
    let run = h
        .out
        .lines()
        .find(|l| l.contains("READ: bw="))
        .unwrap()
        .to_string();
    let ms: u64 = run
        .split("run=")
        .nth(1)
        .unwrap()
        .split('-')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(ms >= 900, "{run}");
    std::fs::remove_dir_all(d).unwrap();
}

/// The JSON keys and their types are fio's, with and without a search (a sync engine's
/// depth is its `iodepth` in fio, not 1); terse has the same number of fields.
#[test]
fn json_keys_and_terse_as_fio() {
    let d = tmp("lat-json");
    let peer = need_fio("json_keys_and_terse_as_fio");
    for extra in [
        &["--ioengine=psync", "--iodepth=8", "--size=1m"][..],
        &[
            "--ioengine=libaio",
            "--iodepth=4",
            "--size=1m",
            "--latency_window=5s",
            "--latency_percentile=50",
        ][..],
        &[
            "--ioengine=libaio",
            "--iodepth=4",
            "--latency_target=10s",
            "--latency_window=50ms",
            "--latency_percentile=99.5",
            "--time_based",
            "--runtime=5",
        ][..],
    ] {
        let mut a = extra.to_vec();
        a.push("--output-format=json");
        let (h, f) = both(&d, &a, peer);
        assert_eq!(h.code, 0, "{extra:?}: {}", h.err);
        let hv = json_lat(&doc(&h.out));
        if let Some(f) = f {
            assert_eq!(f.code, 0, "{}", f.err);
            assert_eq!(hv, json_lat(&doc(&f.out)), "{extra:?}");
        }
        let mut a = extra.to_vec();
        a.push("--output-format=terse");
        let (h, f) = both(&d, &a, peer);
        let n = |r: &Ran| {
            r.out
                .lines()
                .find(|l| l.starts_with("3;"))
                .map(|l| l.split(';').count())
        };
        assert!(n(&h).is_some(), "{}", h.out);
        if let Some(f) = f {
            assert_eq!(n(&h), n(&f), "{extra:?}");
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// The stored result keeps the search (`fio.blocks[].latency_target`) and validates.
#[test]
fn the_result_keeps_the_search_and_validates() {
    let d = tmp("lat-result");
    let r = native_json(
        "--name=a --size=4m --filename=lat.f --rw=randread --ioengine=libaio \
                --iodepth=4 --latency_target=10s --latency_window=50ms \
                --latency_percentile=99",
        &d,
        "disk.fio with latency_target",
    );
    let l = &r["fio"]["blocks"][0]["latency_target"];
    assert_eq!(l["target_ns"], 10_000_000_000u64, "{l}");
    assert_eq!(l["window_us"], 50_000, "{l}");
    assert_eq!(l["percentile"], 99.0, "{l}");
    let depth = l["depth"].as_u64().unwrap();
    assert!((1..=4).contains(&depth), "{l}");
    std::fs::remove_dir_all(d).unwrap();
}

/// Bad values stop before the run with the option, the value and what is expected.
#[test]
fn bad_values_are_refused_clearly() {
    let d = tmp("lat-bad");
    for (opt, want) in [
        (
            "--latency_target=abc",
            "latency_target=abc: expected a time",
        ),
        ("--latency_target=-5", "latency_target=-5: expected a time"),
        ("--latency_window=x", "latency_window=x: expected a time"),
        (
            "--latency_percentile=101",
            "latency_percentile=101: expected a percentage from 0 to 100",
        ),
        (
            "--latency_percentile=-1",
            "latency_percentile=-1: expected a percentage",
        ),
        ("--latency_run=2", "latency_run=2: expected 0 or 1"),
    ] {
        let h = hb(&d, &["--name=a", "--size=64k", "--filename=b.f", opt]);
        assert_eq!(h.code, 2, "{opt}: {}", h.err);
        assert!(h.err.contains(want), "{opt}: {}", h.err);
        assert_eq!(h.err.trim().lines().count(), 1, "{opt}: {}", h.err);
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// fio's `examples/latency-profile.fio` (4k random reads, libaio, iodepth 128, target
/// 500 ms, 99.9% of I/Os), on a 64 MiB file instead of /dev/sda, with a 200 ms window
/// instead of 5 s and a time limit so the search has its time: both end with the same
/// line structure and a depth within 1..=128.
#[test]
fn fios_latency_profile_example_runs_as_in_fio() {
    let d = tmp("lat-example");
    let job = "[global]
bs=4k
rw=randread
random_generator=lfsr
direct=1
ioengine=libaio
iodepth=128
latency_target=500000
latency_window=200000
latency_percentile=99.9
time_based
runtime=30

[device]
filename=device.f
size=64m
";
    std::fs::write(d.join("latency-profile.fio"), job).unwrap();
    let h = hb(&d, &["latency-profile.fio"]);
    assert_eq!(h.code, 0, "{}", h.err);
    let (head, depth) = lat_fields(&h.out);
    assert_eq!(
        head,
        "     latency   : target=500000000, window=200000, percentile=99.90%"
    );
    assert!((1..=128).contains(&depth), "{}", h.out);
    // The search (eight doublings and a final window, ~2 s) ends the job, not runtime.
    assert!(h.took.as_secs() < 25, "took {:?}", h.took);
    if need_fio("fios_latency_profile_example_runs_as_in_fio") {
        let f = fio(&d, &["latency-profile.fio"]);
        assert_eq!(f.code, 0, "{}", f.err);
        let (fhead, fdepth) = lat_fields(&f.out);
        assert_eq!(fhead, head);
        assert!((1..=128).contains(&fdepth), "{}", f.out);
    }
    std::fs::remove_dir_all(d).unwrap();
}
