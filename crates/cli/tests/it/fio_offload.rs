//! fio's `io_submit_mode=offload` (issue 21): the clone paces and prepares its I/Os and
//! `iodepth` submitting threads issue them, so the submission rate holds whatever the
//! completions do. fio's `fixed-rate-submission.fio` and `poisson-rate-submission.fio`,
//! adapted (a 1 MiB file, psync and libaio), through hostbench: the I/O counts and the rate
//! asked for; and through the installed fio where it finishes: fio 3.33's offload hangs on
//! this kernel in most runs (its workqueue; fixed upstream later), so a run of fio that
//! does not end in 10 s is reported and left out of the comparison, never waited for.

use super::fio::{s, tmp};
use super::fio_engines::strace_f;
use super::fio_files::{doc, hb};
use super::fio_seq::need_fio;
use crate::common;
use std::path::Path;
use std::time::Duration;

/// fio on `args` in `dir`, or `None` when it did not end within 10 s (then its processes,
/// found by the scratch directory in their command line, are killed).
fn fio_or_hang(dir: &Path, args: &[&str]) -> Option<String> {
    // The report goes to a file: fio's job processes outlive a killed parent and would
    // hold a pipe open (and this test with it).
    let out = dir.join("fio-out.json");
    let status = std::process::Command::new("timeout")
        .args(["-k", "2", "10", "fio"])
        .args(args)
        .current_dir(dir)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    let o = (status, std::fs::read_to_string(&out).unwrap_or_default());
    if o.0.code() == Some(0) {
        return Some(o.1);
    }
    // fio's job processes outlive the killed parent: end those of this scratch directory.
    let me = s(dir);
    if let Ok(list) = std::fs::read_dir("/proc") {
        for e in list.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd);
            if cmd.starts_with("fio\0") && cmd.contains(&me) {
                // SAFETY: kill(2) on a process this test started (its scratch path is unique).
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
    eprintln!("fio {args:?} did not end in 10 s (fio 3.33's offload hang): not compared");
    None
}

fn read(out: &str) -> (u64, f64, serde_json::Value) {
    let j = &doc(out)["jobs"][0];
    (
        j["read"]["total_ios"].as_u64().unwrap(),
        j["read"]["iops"].as_f64().unwrap(),
        j.clone(),
    )
}

/// The rate's clock starts when the engine is ready, as fio takes its epoch after the
/// engine's init: an offload pool of 4096 submitting threads takes tens of milliseconds to
/// start, and a clock started before it made the first I/Os late, so the job burst to catch
/// up (8828 IOPS measured for rate_iops=1000; 1236 at depth 32 under load, a CI failure).
#[test]
fn a_rate_is_kept_however_long_the_engine_takes_to_start() {
    let d = tmp("offload-slowstart");
    let file = format!("--filename={}", s(&d.join("f")));
    let args = [
        "--name=o",
        file.as_str(),
        "--size=1m",
        "--rw=read",
        "--ioengine=psync",
        "--iodepth=4096",
        "--io_submit_mode=offload",
        "--rate_iops=1000",
        "--output-format=json",
    ];
    let h = hb(&d, &args);
    assert_eq!(h.code, 0, "{}", h.err);
    let (ios, iops, _) = read(&h.out);
    assert_eq!(ios, 256);
    // Paced: never faster than the rate (a little for the clock's granularity).
    assert!(iops <= 1050.0, "{iops} IOPS for rate_iops=1000");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn fios_rate_submission_examples_run_offloaded() {
    let d = tmp("offload");
    let file = format!("--filename={}", s(&d.join("f")));
    let fio_here = need_fio("fios_rate_submission_examples_run_offloaded");
    for engine in ["--ioengine=psync", "--ioengine=libaio"] {
        for (rw, rate, process) in [
            // fixed-rate-submission.fio
            ("--rw=read", "--rate_iops=1000", "--rate_process=linear"),
            // poisson-rate-submission.fio (its 50 IOPS made 500: 256 I/Os in ~0.5 s)
            ("--rw=randread", "--rate_iops=500", "--rate_process=poisson"),
        ] {
            let args = [
                "--name=o",
                file.as_str(),
                "--size=1m",
                rw,
                engine,
                "--iodepth=32",
                "--io_submit_mode=offload",
                rate,
                process,
                "--output-format=json",
            ];
            let what = format!("{engine} {rw} {rate}");
            let h = hb(&d, &args);
            assert_eq!(h.code, 0, "{what}: {}", h.err);
            let (ios, iops, j) = read(&h.out);
            assert_eq!(ios, 256, "{what}");
            let want: f64 = rate.trim_start_matches("--rate_iops=").parse().unwrap();
            // Paced, not measured: the job cannot go faster than its rate (a little above
            // for the poisson draws of 256 gaps). How far below it falls is the machine's
            // (889 IOPS for 1000 in a CI run with the two cores loaded ~5 times over): only
            // a floor far below the rate is asserted.
            let tol = if process.ends_with("poisson") {
                0.35
            } else {
                0.1
            };
            assert!(
                iops <= want * (1.0 + tol) && iops >= want * 0.5,
                "{what}: {iops} IOPS for {want}"
            );
            // A synchronous engine behind the pool has no slat, as in fio.
            let slat = j["read"]["slat_ns"]["N"].as_u64().unwrap();
            assert_eq!(
                slat == 0,
                engine.ends_with("psync"),
                "{what}: slat N {slat}"
            );
            if fio_here && let Some(out) = fio_or_hang(&d, &args) {
                let (fios, fiops, fj) = read(&out);
                assert_eq!(ios, fios, "{what}");
                // Two runs of a loaded machine: each within a third of the other.
                assert!(
                    (iops - fiops).abs() <= want * 0.35,
                    "{what}: {iops} vs fio {fiops}"
                );
                let keys = |v: &serde_json::Value| {
                    v["read"]
                        .as_object()
                        .unwrap()
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                };
                assert_eq!(keys(&j), keys(&fj), "{what}");
                assert_eq!(
                    j["read"]["slat_ns"]["N"].as_u64() == Some(0),
                    fj["read"]["slat_ns"]["N"].as_u64() == Some(0),
                    "{what}: slat"
                );
            }
        }
    }
}

/// The submitting threads issue the I/Os, several of them: strace sees the clone's
/// `pread64` calls from more than one thread, none from the clone's own.
#[test]
fn offloaded_ios_come_from_the_submitting_threads() {
    let ok = std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skip: strace is not installed");
        return;
    }
    let d = tmp("offthreads");
    let file = format!("--filename={}", s(&d.join("f")));
    let args = [
        "--name=o",
        file.as_str(),
        "--size=256k",
        "--rw=read",
        "--ioengine=psync",
        "--iodepth=4",
        "--io_submit_mode=offload",
    ];
    // Laid out first, so strace sees the job's reads only.
    assert_eq!(hb(&d, &args).code, 0);
    let mut a = vec!["fio"];
    a.extend_from_slice(&args);
    a.push("--no-save");
    let (o, t) = strace_f(&d, common::bin(), &a, "pread64", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reads: Vec<&str> = t
        .lines()
        // Whole calls and resumed ones (strace splits a call other threads interrupt).
        .filter(|l| l.contains("pread64") && l.trim_end().ends_with("= 4096"))
        .collect();
    assert!(reads.len() >= 64, "{t}");
    let tids: std::collections::BTreeSet<&str> =
        reads.iter().map(|l| l.split(' ').next().unwrap()).collect();
    assert!(tids.len() > 1, "one thread did every read: {tids:?}");
}

#[test]
fn offload_refuses_what_it_cannot_run() {
    let d = tmp("offbad");
    for (args, want) in [
        (
            &["--ioengine=io_uring", "--io_submit_mode=offload"][..],
            "io_uring: can't be used with offloaded submit",
        ),
        (
            &["--ioengine=sync", "--io_submit_mode=offload"],
            "io_submit_mode=offload with ioengine=sync is not supported",
        ),
        (
            &["--io_submit_mode=later"],
            "io_submit_mode=later: expected inline or offload",
        ),
        // Its submitters hold one file and read or write (once a panic on a merge of
        // several files and queue-engine trims).
        (
            &[
                "--ioengine=psync",
                "--io_submit_mode=offload",
                "--nrfiles=2",
            ],
            "io_submit_mode=offload with several files",
        ),
        (
            &[
                "--ioengine=libaio",
                "--io_submit_mode=offload",
                "--rw=randtrim",
            ],
            "io_submit_mode=offload with rw=randtrim is not supported",
        ),
    ] {
        let o = common::hb()
            .current_dir(&d)
            .arg("fio")
            .args(["--name=c", "--size=64k"])
            .args(args)
            .arg("--no-save")
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
