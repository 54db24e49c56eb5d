//! fio's jobs that fail, their files and their block sizes, side by side with the installed
//! fio: the same job through both, compared on what does not depend on speed — exit status,
//! each job's `error`, I/O counts, files made and their sizes, offsets touched.
//!
//! Without fio the comparisons are skipped with a message, unless `HOSTBENCH_TEST_FIO` is
//! set: then a missing fio fails the test.

use super::fio::{s, tmp};
use super::fio_engines::strace_f;
use super::fio_seq::need_fio;
use crate::common;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// What one run of a fio (ours or the real one) gave.
pub(crate) struct Ran {
    pub(crate) code: i32,
    pub(crate) out: String,
    pub(crate) err: String,
    pub(crate) took: Duration,
}

/// The JSON document of `out` (fio 3.33 prints a failing job's start-up line before its
/// JSON, so the document starts at the first `{`).
pub(crate) fn doc(out: &str) -> Value {
    let i = out
        .find('{')
        .unwrap_or_else(|| panic!("no JSON in:\n{out}"));
    serde_json::from_str(&out[i..]).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"))
}

/// (reads, writes) of each JSON job entry of a report.
pub(crate) fn counts(out: &str) -> Vec<(u64, u64)> {
    doc(out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["read"]["total_ios"].as_u64().unwrap(),
                j["write"]["total_ios"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// hostbench's fio front-end on `args` in `dir`.
pub(crate) fn hb(dir: &Path, args: &[&str]) -> Ran {
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
pub(crate) fn fio(dir: &Path, args: &[&str]) -> Ran {
    let t = Instant::now();
    // Under coreutils' timeout: fio 3.33 itself can hang (a think time whose spin overran
    // under load sleeps for ever, backend.c's handle_thinktime), and a test must not.
    let o = std::process::Command::new("timeout")
        .args(["-k", "5", "300", "fio"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert_ne!(
        o.status.code(),
        Some(124),
        "fio {args:?} did not end in 300 s (fio itself hung; run it by hand to see)"
    );
    Ran {
        code: o.status.code().unwrap_or(-1),
        out: String::from_utf8(o.stdout).unwrap(),
        err: String::from_utf8_lossy(&o.stderr).to_string(),
        took: t.elapsed(),
    }
}

/// Each JSON job entry: (name, error, reads, writes).
pub(crate) fn entries(v: &Value) -> Vec<(String, i64, u64, u64)> {
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
pub(crate) fn err_lines(out: &str) -> Vec<String> {
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

/// Sequential jobs with `bs_unaligned` sizes end their pass when less than the smallest
/// block is left, as fio (its `get_next_buflen` finds no size that fits): they went on at
/// offset 0 within the pass (16 writes past a 64 KiB size where fio does 15, the file's
/// start written again). The sizes are each tool's own draws: the counts are compared.
#[test]
fn unaligned_sizes_end_a_sequential_pass_as_fio() {
    let d = tmp("unaligned");
    let peer = need_fio("unaligned_sizes_end_a_sequential_pass_as_fio");
    for (rw, range, size, loops) in [
        ("write", "1k-7k", "64k", "1"),
        ("read", "1k-3k", "16k", "1"),
        ("read", "1k-3k", "16k", "2"),
    ] {
        let args = [
            "--name=j".to_string(),
            "--filename=f".into(),
            format!("--size={size}"),
            format!("--rw={rw}"),
            format!("--bsrange={range}"),
            "--bs_unaligned".into(),
            format!("--loops={loops}"),
            "--write_iolog=log".into(),
            "--output-format=json".into(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let _ = std::fs::remove_file(d.join("f"));
        let _ = std::fs::remove_file(d.join("log"));
        let h = hb(&d, &args);
        assert_eq!(h.code, 0, "{}", h.err);
        let ios = |out: &str| {
            let v = doc(out);
            v["jobs"][0][rw]["total_ios"].as_u64().unwrap()
        };
        // Each pass goes forward only, within the region.
        let log = std::fs::read_to_string(d.join("log")).unwrap();
        let limit = size.trim_end_matches('k').parse::<u64>().unwrap() << 10;
        let mut last_end = 0u64;
        let mut passes = 1;
        for l in log.lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() == 5 && (f[2] == "read" || f[2] == "write") {
                let (off, len): (u64, u64) = (f[3].parse().unwrap(), f[4].parse().unwrap());
                assert!(off + len <= limit, "{rw} {range}: {l}");
                if off < last_end {
                    assert_eq!(off, 0, "{rw} {range}: {l}");
                    passes += 1;
                }
                last_end = off + len;
            }
        }
        assert_eq!(passes.to_string(), loops, "{rw} {range}:\n{log}");
        if peer {
            let _ = std::fs::remove_file(d.join("f"));
            let p = fio(&d, &args);
            assert_eq!(ios(&h.out), ios(&p.out), "{rw} {range} loops={loops}");
        }
    }
    std::fs::remove_dir_all(d).ok();
}

/// A FIFO named as a job's file is refused at once (its open waited for a reader: the run
/// hung, and SIGTERM went unheard); fio cannot size it and fails the job.
#[test]
fn a_fifo_as_a_jobs_file_is_refused_at_once() {
    let d = tmp("fifo");
    let p = d.join("p");
    let c = std::ffi::CString::new(s(&p)).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path of our own directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let name = format!("--filename={}", s(&p));
    for rw in ["--rw=write", "--rw=read"] {
        let h = hb(&d, &["--name=a", &name, rw, "--size=16k"]);
        assert_eq!(h.code, 2, "{}", h.err);
        assert!(h.err.contains("is a FIFO or a socket"), "{}", h.err);
        assert!(h.took < Duration::from_secs(60), "{:?}", h.took);
    }
    std::fs::remove_dir_all(d).ok();
}

/// A job whose file cannot be opened ends with the open's error and the other jobs run,
/// as in fio (`err=26, func=open(busy)`, exit 1); it stopped the whole run with no report
/// (exit 2). The file: a copy of `sleep`, running, which even root cannot open to write
/// (ETXTBSY), as a read-only file is for another user (EACCES).
#[test]
fn a_job_whose_file_cannot_be_opened_fails_alone_as_in_fio() {
    let d = tmp("openfail");
    let busy = d.join("busy");
    std::fs::copy("/bin/sleep", &busy).unwrap();
    let mut child = std::process::Command::new(&busy).arg("60").spawn().unwrap();
    let (a, b) = (
        format!("--filename={}", s(&busy)),
        format!("--filename={}", s(&d.join("ok"))),
    );
    let args = [
        "--name=a",
        &a,
        "--rw=write",
        "--bs=4k",
        "--name=b",
        &b,
        "--size=64k",
        "--rw=write",
        "--output-format=json",
    ];
    let h = hb(&d, &args);
    assert_eq!(h.code, 1, "one job failed: exit status 1\n{}", h.err);
    assert_eq!(
        entries(&doc(&h.out)),
        [("a".to_string(), 26, 0, 0), ("b".to_string(), 0, 0, 16)],
        "{}",
        h.out
    );
    assert!(h.out.contains("err=26/func=open("), "{}", h.out);
    if need_fio("a_job_whose_file_cannot_be_opened_fails_alone_as_in_fio") {
        std::fs::remove_file(d.join("ok")).unwrap();
        let p = fio(&d, &args);
        assert_eq!(p.code, h.code, "{}", p.err);
        assert_eq!(entries(&doc(&h.out)), entries(&doc(&p.out)), "{}", p.out);
    }
    // Whatever the engine (mmap maps the file, io_uring and libaio queue on it: a clone
    // without its file used to fail the whole run there).
    for e in ["mmap", "libaio", "io_uring", "posixaio"] {
        let eng = format!("--ioengine={e}");
        let mut a = args.to_vec();
        a.insert(4, &eng);
        let h = hb(&d, &a);
        assert_eq!(h.code, 1, "{e}: {}", h.err);
        assert_eq!(
            entries(&doc(&h.out)),
            [("a".to_string(), 26, 0, 0), ("b".to_string(), 0, 0, 16)],
            "{e}: {}",
            h.out
        );
    }
    // The normal layout: fio's error line, and no block for the job that did nothing (as
    // fio prints none).
    let normal = hb(&d, &args[..8]);
    assert_eq!(normal.code, 1);
    assert!(normal.out.contains("err=26/func=open("), "{}", normal.out);
    assert_eq!(
        err_lines(&normal.out),
        ["b: (groupid=0, jobs=1) err=0"],
        "{}",
        normal.out
    );
    let _ = child.kill();
    let _ = child.wait();
    std::fs::remove_dir_all(d).ok();
}

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

/// The start-up line (`name: (g=0): rw=..., bs=(R) ...`) of a job.
fn start_line(out: &str) -> String {
    out.lines().next().unwrap_or("").to_string()
}

#[test]
fn block_size_start_up_lines_match_fio() {
    if !need_fio("block_size_start_up_lines_match_fio") {
        return;
    }
    let d = tmp("bsline");
    for opts in [
        &["--bs=8k,32k"][..],
        &["--bs=8k,32k,"],
        &["--bs=,8k"],
        &["--bsrange=1k-16k,2k-8k,512-1k", "--rw=randrw"],
        &["--bssplit=4k/60:8k/30,16k"],
        &[
            "--bssplit=512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10",
            "--rw=randrw",
        ],
        &["--rw=read:8k", "--bs=4k"],
        &["--rw=randread:4", "--rw_sequencer=identical"],
    ] {
        let mut args = vec!["--name=a", "--ioengine=null", "--size=1m"];
        args.extend_from_slice(opts);
        let (h, p) = (hb(&d, &args), fio(&d, &args));
        assert_eq!(h.code, 0, "{opts:?}: {}", h.err);
        assert_eq!(start_line(&h.out), start_line(&p.out), "{opts:?}");
    }
}

/// The file offsets of `file`'s reads and writes in an strace log (`-y` names the files).
fn traced_offsets(log: &str, file: &str) -> Vec<u64> {
    log.lines()
        .filter(|l| (l.contains("pread64(") || l.contains("pwrite64(")) && l.contains(file))
        .filter_map(|l| {
            let args = &l[..l.rfind(')')?];
            args.rsplit(", ").next()?.trim().parse().ok()
        })
        .collect()
}

/// The offsets fio queues (`--debug=io`).
fn fio_offsets(stderr_and_out: &str) -> Vec<u64> {
    stderr_and_out
        .lines()
        .filter(|l| l.contains(" queue: "))
        .filter_map(|l| {
            let o = l.split("off=0x").nth(1)?.split(',').next()?;
            u64::from_str_radix(o, 16).ok()
        })
        .collect()
}

/// hostbench's offsets for `args` on `file` (64 KiB, made before), seen through strace.
fn hb_offsets(dir: &Path, file: &str, args: &[&str]) -> Vec<u64> {
    std::fs::write(dir.join(file), vec![0u8; 64 << 10]).unwrap();
    traced_offsets(&hb_traced(dir, args), file)
}

/// hostbench's fio front-end on `args` in `dir` under `strace -ff -y` (one log per thread,
/// so no call is split, each file named): the reads and writes, all threads' logs joined.
pub(crate) fn hb_traced(dir: &Path, args: &[&str]) -> String {
    let logs = dir.join("trace");
    let o = std::process::Command::new("strace")
        .args(["-ff", "-y", "-e", "trace=pread64,pwrite64", "-o"])
        .arg(&logs)
        .arg(common::bin())
        .arg("fio")
        .args(args)
        .args(["--no-save", "--disk_util=0"])
        .current_dir(dir)
        .env("HOSTBENCH_RESULTS_DB", dir.join("r.db"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut text = String::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("trace.")
        {
            text.push_str(&std::fs::read_to_string(&p).unwrap());
            std::fs::remove_file(p).unwrap();
        }
    }
    text
}

#[test]
fn holes_backwards_and_random_runs_touch_what_fio_touches() {
    if !need_fio("holes_backwards_and_random_runs_touch_what_fio_touches") {
        return;
    }
    if std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("HOSTBENCH_TEST_FIO").is_none(),
            "HOSTBENCH_TEST_FIO is set but strace is not installed"
        );
        eprintln!("skip: strace is not installed; offsets not compared");
        return;
    }
    let d = tmp("holes");
    for rw in ["read:8k", "write:4k", "read:-8k", "write:-8k", "read:16k"] {
        let rwo = format!("--rw={rw}");
        let args = [
            "--name=a",
            "--filename=h.dat",
            "--size=64k",
            "--bs=4k",
            &rwo,
        ];
        let ours = hb_offsets(&d, "h.dat", &args);
        std::fs::write(d.join("h.dat"), vec![0u8; 64 << 10]).unwrap();
        let mut fa = args.to_vec();
        fa.push("--debug=io");
        let p = fio(&d, &fa);
        let theirs = fio_offsets(&format!("{}{}", p.out, p.err));
        assert!(!theirs.is_empty(), "{rw}: fio's debug output:\n{}", p.err);
        assert_eq!(ours, theirs, "{rw}");
    }
    // Random every 3rd I/O from the first (over 64 KiB fio's first draw is block 0), runs of three
    // (following the random pick, or repeating it with rw_sequencer=identical), as fio.
    for (seqr, step) in [
        ("--rw_sequencer=sequential", 4096),
        ("--rw_sequencer=identical", 0),
    ] {
        let args = [
            "--name=a",
            "--filename=h.dat",
            "--size=64k",
            "--bs=4k",
            "--rw=randread:3",
            seqr,
        ];
        let ours = hb_offsets(&d, "h.dat", &args);
        let mut fa = args.to_vec();
        fa.push("--debug=io");
        let p = fio(&d, &fa);
        let theirs = fio_offsets(&format!("{}{}", p.out, p.err));
        assert_eq!(ours.len(), theirs.len(), "{seqr}: {ours:?} / {theirs:?}");
        assert_eq!(ours[..3], theirs[..3], "{seqr}");
        for o in [&ours, &theirs] {
            for i in (3..o.len() - 2).step_by(3) {
                assert_eq!(
                    (o[i + 1], o[i + 2]),
                    (o[i] + step, o[i] + 2 * step),
                    "{seqr}: {o:?}"
                );
            }
        }
    }
}

/// fio's examples that need block-size mixes, holes and zones, adapted in sizes only (never
/// committed: written here from their text): each job's error and I/O counts as fio's, and
/// for random size mixes the bytes.
#[test]
fn fios_block_pattern_examples_run_as_in_fio() {
    if !need_fio("fios_block_pattern_examples_run_as_in_fio") {
        return;
    }
    let d = tmp("bsex");
    let examples = [
        // examples/backwards-read.fio (128m → 1m)
        (
            "backwards-read",
            "[backwards-read]\nbs=4k\nrw=read:-8k\nfilename=bw.dat\nsize=1m\n",
            true,
        ),
        // examples/tiobench-example.fio (512m → 1m)
        (
            "tiobench",
            "[global]\ndirect=1\nsize=1m\nbsrange=4k-4k\ntimeout=60\nnumjobs=4\n\
             [f1]\nrw=write\n[f2]\nstonewall\nrw=randwrite\n[f3]\nstonewall\nrw=read\n\
             [f4]\nstonewall\nrw=randread\n",
            true,
        ),
        // examples/iometer-file-access-server.fio (4g → 4m)
        (
            "iometer",
            "[global]\ndescription=Emulation of Intel IOmeter File Server Access Pattern\n\
             [iometer]\nbssplit=512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10\nrw=randrw\n\
             rwmixread=80\ndirect=1\nsize=4m\nioengine=libaio\niodepth=64\n",
            false,
        ),
        // examples/jesd219.fio (/dev/nvme0n1 → an 8 MiB file)
        (
            "jesd219",
            "[JESD219]\nioengine=libaio\ndirect=1\nrw=randrw\nnorandommap\nrandrepeat=0\n\
             rwmixread=40\nrwmixwrite=60\niodepth=256\nnumjobs=4\n\
             bssplit=512/4:1024/1:1536/1:2048/1:2560/1:3072/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3\n\
             blockalign=4k\nrandom_distribution=zoned:50/5:30/15:20/80\nfilename=jesd.dat\n\
             size=8m\ngroup_reporting\n",
            false,
        ),
        // examples/rand-zones.fio (2g → 8m)
        (
            "rand-zones",
            "[zones]\nsize=8m\ndirect=1\nbs=4k\nrw=randread\nnorandommap\n\
             random_distribution=zoned:50/5:30/15:20/\n",
            true,
        ),
    ];
    for (name, text, exact) in examples {
        let f = d.join(format!("{name}.fio"));
        std::fs::write(&f, text).unwrap();
        let fs = s(&f);
        let args = [fs.as_str(), "--output-format=json"];
        let h = hb(&d, &args);
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let n = e.file_name().to_string_lossy().to_string();
            if !n.ends_with(".fio") {
                let _ = std::fs::remove_file(e.path());
            }
        }
        let p = fio(&d, &args);
        assert_eq!((h.code, p.code), (0, 0), "{name}: {}\n{}", h.err, p.err);
        let (he, pe) = (entries(&doc(&h.out)), entries(&doc(&p.out)));
        if exact {
            assert_eq!(he, pe, "{name}");
        } else {
            let bytes = |v: &Value| -> Vec<u64> {
                v["jobs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|j| {
                        j["read"]["io_bytes"].as_u64().unwrap()
                            + j["write"]["io_bytes"].as_u64().unwrap()
                    })
                    .collect()
            };
            // Each clone does its size; the last I/O may pass it by a block, as in fio.
            for (hb, pb) in bytes(&doc(&h.out)).into_iter().zip(bytes(&doc(&p.out))) {
                assert!(hb.abs_diff(pb) * 200 < pb, "{name}: {hb} bytes, fio {pb}");
            }
            // The mix of sizes: I/O counts within a quarter of fio's.
            let (hn, pn) = (he[0].2 + he[0].3, pe[0].2 + pe[0].3);
            assert!(
                hn * 4 > pn * 3 && hn * 3 < pn * 4,
                "{name}: {hn} I/Os, fio {pn}"
            );
        }
    }
}

/// The fallocate/ftruncate calls a command makes on files named `file`, as strace shows
/// them (the descriptor left out).
fn space_calls(dir: &Path, program: &str, args: &[&str]) -> Vec<String> {
    let (o, text) = strace_f(dir, program, args, "fallocate,ftruncate", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    text.lines()
        .filter_map(|l| {
            let call = l.split_once(' ')?.1.trim_start();
            let (name, rest) = call.split_once('(')?;
            let args = rest.split_once(')')?.0;
            let args: Vec<&str> = args.split(", ").skip(1).collect();
            Some(format!("{name}({})", args.join(", ")))
        })
        .collect()
}

#[test]
fn fallocate_unlink_and_create_on_open_as_fio() {
    if !need_fio("fallocate_unlink_and_create_on_open_as_fio") {
        return;
    }
    let d = tmp("fcalls");
    let have_strace = std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok();
    let hbp = common::bin();
    let hbp = hbp.to_str().expect("a UTF-8 path");
    if have_strace {
        for (mode, rw) in [
            ("none", "write"),
            ("native", "write"),
            ("posix", "write"),
            ("keep", "write"),
            ("truncate", "write"),
            ("1", "write"),
            ("native", "read"),
        ] {
            let (m, r) = (format!("--fallocate={mode}"), format!("--rw={rw}"));
            let args = ["--name=fa", "--size=64k", &m, &r];
            let _ = std::fs::remove_file(d.join("fa.0.0"));
            let mut ours = vec!["fio"];
            ours.extend_from_slice(&args);
            ours.push("--no-save");
            let h = space_calls(&d, hbp, &ours);
            let _ = std::fs::remove_file(d.join("fa.0.0"));
            let p = space_calls(&d, "fio", &args);
            assert_eq!(h, p, "fallocate={mode} rw={rw}");
        }
    } else {
        eprintln!("skip: strace is not installed; fallocate's calls not compared");
    }
    // unlink: the job's file is gone afterwards (a generated name and a named file).
    for file in [None, Some("named.dat")] {
        let f = file.map(|f| format!("--filename={f}"));
        let mut args = vec!["--name=ul", "--size=64k", "--rw=write", "--unlink=1"];
        args.extend(f.as_deref());
        let left = |r: &Ran, who: &str| {
            assert_eq!(r.code, 0, "{who}: {}", r.err);
            d.join(file.unwrap_or("ul.0.0")).exists()
        };
        assert!(!left(&hb(&d, &args), "hostbench"), "{file:?}");
        assert!(!left(&fio(&d, &args), "fio"), "{file:?}");
    }
    // create_on_open: no layout line; the job's writes make the file.
    let args = [
        "--name=co",
        "--size=64k",
        "--rw=write",
        "--create_on_open=1",
    ];
    for who in ["hostbench", "fio"] {
        let r = if who == "fio" {
            fio(&d, &args)
        } else {
            hb(&d, &args)
        };
        assert_eq!(r.code, 0, "{who}: {}", r.err);
        assert!(!r.out.contains("Laying out"), "{who}:\n{}", r.out);
        let m = std::fs::metadata(d.join("co.0.0")).unwrap();
        assert_eq!(m.len(), 64 << 10, "{who}");
        std::fs::remove_file(d.join("co.0.0")).unwrap();
    }
    // unlink refuses a device node.
    let r = hb(
        &d,
        &[
            "--name=dv",
            "--filename=/dev/null",
            "--size=64k",
            "--unlink=1",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains("unlink=1 would delete the device node"),
        "{}",
        r.err
    );
    assert!(Path::new("/dev/null").exists());
}

#[test]
fn offset_align_rounds_percent_offsets_as_fio() {
    if !need_fio("offset_align_rounds_percent_offsets_as_fio") {
        return;
    }
    if std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("skip: strace is not installed; offsets not compared");
        return;
    }
    let d = tmp("oalign");
    let hbp = common::bin();
    let hbp = hbp.to_str().expect("a UTF-8 path");
    for align in ["64k", "1m"] {
        let a = format!("--offset_align={align}");
        let args = [
            "--name=oa",
            "--filename=oa.dat",
            "--bs=4k",
            "--offset=10%",
            "--number_ios=1",
            "--rw=read",
            &a,
        ];
        std::fs::write(d.join("oa.dat"), vec![0u8; 4 << 20]).unwrap();
        let mut ours = vec!["fio"];
        ours.extend_from_slice(&args);
        ours.push("--no-save");
        let (o, log) = strace_f(&d, hbp, &ours, "pread64", &["-y"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let ours = traced_offsets(&log, "oa.dat");
        let mut fa = args.to_vec();
        fa.push("--debug=io");
        let p = fio(&d, &fa);
        let theirs = fio_offsets(&format!("{}{}", p.out, p.err));
        assert_eq!(ours, theirs, "offset_align={align}");
        assert_eq!(ours.len(), 1);
    }
}

#[test]
fn filesize_draws_a_size_per_file_as_fio() {
    let d = tmp("fsizes");
    let args = [
        "--name=fs",
        "--filesize=10k-64k",
        "--numjobs=4",
        "--bs=4k",
        "--output-format=json",
    ];
    // (each clone's bytes, each file's length), both sorted.
    let run = |prog: &str| -> (Vec<u64>, Vec<u64>) {
        for c in 0..4 {
            let _ = std::fs::remove_file(d.join(format!("fs.{c}.0")));
        }
        let r = if prog == "fio" {
            fio(&d, &args)
        } else {
            hb(&d, &args)
        };
        assert_eq!(r.code, 0, "{prog}: {}", r.err);
        let v = doc(&r.out);
        let mut bytes: Vec<u64> = v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["read"]["io_bytes"].as_u64().unwrap())
            .collect();
        let mut lens: Vec<u64> = (0..4)
            .map(|c| {
                std::fs::metadata(d.join(format!("fs.{c}.0")))
                    .unwrap()
                    .len()
            })
            .collect();
        bytes.sort_unstable();
        lens.sort_unstable();
        (bytes, lens)
    };
    let mut progs = vec!["hostbench"];
    if need_fio("filesize_draws_a_size_per_file_as_fio") {
        progs.push("fio");
    }
    for prog in progs {
        let (bytes, lens) = run(prog);
        assert_eq!(bytes, lens, "{prog}: each clone reads its whole file once");
        for l in &lens {
            assert!(
                (8192..=65536).contains(l) && l % 4096 == 0,
                "{prog}: {lens:?}"
            );
        }
        assert!(
            lens.windows(2).any(|w| w[0] != w[1]),
            "{prog}: one size per file: {lens:?}"
        );
        if prog == "hostbench" {
            assert_eq!(run(prog), (bytes, lens), "the same sizes on every run");
        }
    }
}

/// The files under `dir` (relative paths, sorted), directories marked with a `/`.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            if p.is_dir() {
                out.push(format!("{rel}/"));
                stack.push(p);
            } else {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn filename_format_names_files_as_fio() {
    let run = |prog: &str, format: &str, numjobs: &str| -> Vec<String> {
        let d = tmp("fformat");
        let f = format!("--filename_format={format}");
        let n = format!("--numjobs={numjobs}");
        let args = ["--name=job1", "--size=16k", &n, &f];
        let r = if prog == "fio" {
            fio(&d, &args)
        } else {
            hb(&d, &args)
        };
        assert_eq!(r.code, 0, "{prog} {format}: {}", r.err);
        let t = tree(&d);
        std::fs::remove_dir_all(&d).unwrap();
        t
    };
    let cases = [
        ("f.$clientuid.$jobnum.$filenum.$JOBNAME", "2"),
        ("data/$jobname", "1"),
        ("$jobname-$JobNum", "3"),
    ];
    let peer = need_fio("filename_format_names_files_as_fio");
    for (format, n) in cases {
        let ours = run("hostbench", format, n);
        assert!(!ours.is_empty());
        if peer {
            assert_eq!(ours, run("fio", format, n), "{format}");
        }
    }
    assert_eq!(
        run("hostbench", "f.$clientuid.$jobnum.$filenum.$JOBNAME", "2"),
        ["f..0.0.job1", "f..1.0.job1"]
    );
    // A name that climbs out of the job's directory is refused.
    let d = tmp("fformat-bad");
    let r = hb(
        &d,
        &["--name=j", "--size=16k", "--filename_format=../$jobname"],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("climbs out"), "{}", r.err);
}

/// `directory=d1:d2`: clone N's generated files in directory N mod 2, named files in the
/// first, as fio's set_name_idx; a directory that is a symbolic link, missing or a file is
/// refused, as fio's lstat check refuses it.
#[test]
fn a_directory_list_spreads_the_clones_as_fio() {
    let run = |prog: &str, args: &[&str]| -> (i32, Vec<String>) {
        let d = tmp("dirlist");
        for sub in ["d1", "d2", "d3"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        std::fs::write(d.join("plain"), b"x").unwrap();
        std::os::unix::fs::symlink("d1", d.join("link")).unwrap();
        let r = if prog == "fio" {
            fio(&d, args)
        } else {
            hb(&d, args)
        };
        let t = tree(&d);
        std::fs::remove_dir_all(&d).unwrap();
        (r.code, t)
    };
    let cases: [&[&str]; 9] = [
        &["--name=t", "--size=16k", "--numjobs=3", "--directory=d1:d2"],
        &[
            "--name=t",
            "--size=16k",
            "--numjobs=2",
            "--nrfiles=2",
            "--directory=d3:d1:d2",
        ],
        // (fio's command line takes options in order: `--filename` before `--directory`
        // ignores the directory there, not in a job file; hostbench takes both orders as
        // fio's job file does.)
        &[
            "--name=t",
            "--size=16k",
            "--numjobs=2",
            "--directory=d2:d1",
            "--filename=f",
        ],
        &["--name=t", "--size=16k", "--directory=link"],
        &["--name=t", "--size=16k", "--directory=d1:missing"],
        &["--name=t", "--size=16k", "--directory=plain"],
        // Empty entries are skipped: d1 and d2; `:` alone names no directory.
        &[
            "--name=t",
            "--size=16k",
            "--numjobs=3",
            "--directory=:d1::d2:",
        ],
        &["--name=t", "--size=16k", "--directory=:"],
        &["--name=t", "--size=16k", "--filename=f1::f2:"],
    ];
    let (code, t) = run("hostbench", cases[0]);
    assert_eq!(code, 0);
    for f in ["d1/t.0.0", "d2/t.1.0", "d1/t.2.0"] {
        assert!(t.contains(&f.to_string()), "{f} in {t:?}");
    }
    let (code, t) = run("hostbench", cases[6]);
    assert_eq!(code, 0);
    for f in ["d1/t.0.0", "d2/t.1.0", "d1/t.2.0"] {
        assert!(t.contains(&f.to_string()), "{f} in {t:?}");
    }
    let (code, t) = run("hostbench", cases[8]);
    assert_eq!(code, 0);
    for f in ["f1", "f2"] {
        assert!(t.contains(&f.to_string()), "{f} in {t:?}");
    }
    let (code, t) = run("hostbench", cases[3]);
    assert_ne!(code, 0);
    assert!(!t.iter().any(|f| f.starts_with("d1/t")), "{t:?}");
    let peer = need_fio("a_directory_list_spreads_the_clones_as_fio");
    for args in cases {
        let ours = run("hostbench", args);
        if peer {
            let theirs = run("fio", args);
            // fio fails a refused directory at parsing with exit 1, hostbench with 2 (usage).
            assert_eq!(
                ours.0 == 0,
                theirs.0 == 0,
                "{args:?}: {ours:?} / {theirs:?}"
            );
            assert_eq!(ours.1, theirs.1, "{args:?}");
        }
    }
}

/// `size=P%` with several files: each file's region is P% of that file's own length (from
/// `offset`, rounded down to the block), as fio's setup_files; the I/O counts per clone
/// are fio's on the same files, and the files keep their lengths.
#[test]
fn size_in_percent_is_of_each_file_as_fio() {
    let lens: [(&str, usize); 4] = [
        ("t.0.0", 65536),
        ("t.0.1", 200_000),
        ("t.1.0", 131_072),
        ("t.1.1", 90000),
    ];
    let run = |prog: &str, extra: &[&str]| -> (Vec<(u64, u64)>, Vec<u64>) {
        let d = tmp("sizepct");
        for (f, n) in lens {
            std::fs::write(d.join(f), vec![7u8; n]).unwrap();
        }
        let mut args = vec![
            "--name=t",
            "--nrfiles=2",
            "--numjobs=2",
            "--bs=4k",
            "--output-format=json",
        ];
        args.extend_from_slice(extra);
        let r = if prog == "fio" {
            fio(&d, &args)
        } else {
            hb(&d, &args)
        };
        assert_eq!(r.code, 0, "{prog} {extra:?}: {}", r.err);
        let ios = counts(&r.out);
        let sizes = lens
            .iter()
            .map(|(f, _)| std::fs::metadata(d.join(f)).unwrap().len())
            .collect();
        std::fs::remove_dir_all(&d).unwrap();
        (ios, sizes)
    };
    let cases: [&[&str]; 4] = [
        &["--size=30%", "--rw=read"],
        &["--size=30%", "--offset=16k", "--rw=randread"],
        &["--size=100%", "--offset=8k", "--rw=read"],
        &["--size=50%", "--rw=write"],
    ];
    // 30% of 65536 is 19660, 4 whole blocks; of 200000, 14 blocks: clone 0 reads 18.
    assert_eq!(run("hostbench", cases[0]).0, [(18, 0), (15, 0)]);
    let peer = need_fio("size_in_percent_is_of_each_file_as_fio");
    for args in cases {
        let ours = run("hostbench", args);
        assert_eq!(
            ours.1,
            lens.map(|(_, n)| n as u64),
            "{args:?}: lengths kept"
        );
        if peer {
            assert_eq!(ours, run("fio", args), "{args:?}");
        }
    }
    // A missing file has no length to take a share of: refused, naming it.
    let d = tmp("sizepct-missing");
    std::fs::write(d.join("t.0.0"), vec![7u8; 65536]).unwrap();
    let r = hb(&d, &["--name=t", "--nrfiles=2", "--size=30%"]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains("t.0.1 is not an existing regular file"),
        "{}",
        r.err
    );
}

#[test]
fn a_failing_job_fails_a_native_run_too() {
    let d = tmp("fail-native");
    let o = common::hb()
        .current_dir(&d)
        .args([
            "run",
            "disk.fio",
            "-s",
            "jobs=--name=a --filename=/dev/full --rw=write --size=64k --name=b --ioengine=null --size=1m",
            "--threads=2",
            "--time=0",
            "--no-save",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("job 'a' ended with err=28 (No space left on device)"),
        "{err}"
    );
    // The run failed: its error is the job's.
    assert!(err.contains("FATAL: job 'a' ended with err=28"), "{err}");
}

/// With a size range or mix the last I/Os are sized to what is left, as fio's
/// get_next_buflen draws again until one fits: a size-based job does `size` bytes (it
/// stopped a whole largest block short: 96 KiB of `size=100k,bsrange=4k-64k`).
#[test]
fn size_mixes_do_the_whole_size_as_fio() {
    let d = tmp("bsmix-size");
    std::fs::write(d.join("big"), vec![1u8; 2 << 20]).unwrap();
    let cases: [(&[&str], u64); 5] = [
        (&["--rw=read", "--size=100k", "--bsrange=4k-64k"], 102_400),
        (
            &["--rw=read", "--size=100k", "--bssplit=4k/50:64k/50"],
            102_400,
        ),
        (
            &["--rw=randwrite", "--size=1000k", "--bssplit=4k/10:64k/90"],
            1_024_000,
        ),
        (&["--rw=randread", "--size=1m", "--bsrange=4k-60k"], 1 << 20),
        // (On a file of its own, laid out to 1000k: on a larger file fio does a 16th.)
        (
            &["--rw=read", "--size=1000k", "--bs=64k", "--filename=fresh"],
            983_040,
        ),
    ];
    let peer = need_fio("size_mixes_do_the_whole_size_as_fio");
    for (extra, want) in cases {
        let mut a = vec!["--name=z", "--filename=big", "--output-format=json"];
        a.extend_from_slice(extra);
        let _ = std::fs::remove_file(d.join("fresh"));
        let bytes = |r: Ran| -> u64 {
            let _ = std::fs::remove_file(d.join("fresh"));
            assert_eq!(r.code, 0, "{extra:?}: {}", r.err);
            let j = &doc(&r.out)["jobs"][0];
            j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap()
        };
        assert_eq!(bytes(hb(&d, &a)), want, "{extra:?}");
        if peer {
            assert_eq!(bytes(fio(&d, &a)), want, "fio {extra:?}");
        }
    }
}

/// The offsets of each of `files` (sorted) that hostbench and then fio read or write for
/// `args` in `dir`, and the files' lengths after each: hostbench's through
/// [`hb_traced`], fio's from `--debug=io`. `make` lays the files before each run (so
/// each starts from the same files: a run may grow them).
pub(crate) fn offsets_per_file(
    dir: &Path,
    make: &dyn Fn(&Path),
    args: &[&str],
    files: &[&str],
) -> [(Vec<Vec<u64>>, Vec<u64>); 2] {
    let lens = || -> Vec<u64> {
        files
            .iter()
            .map(|f| std::fs::metadata(dir.join(f)).map_or(0, |m| m.len()))
            .collect()
    };
    make(dir);
    let text = hb_traced(dir, args);
    let ours = files
        .iter()
        .map(|f| {
            let mut v = traced_offsets(&text, &format!("/{f}>"));
            v.sort_unstable();
            v
        })
        .collect();
    let ours_lens = lens();
    make(dir);
    let r = fio(dir, &[args, &["--debug=io"][..]].concat());
    assert_eq!(r.code, 0, "fio {args:?}: {}", r.err);
    let all = format!("{}{}", r.out, r.err);
    let theirs = files
        .iter()
        .map(|f| {
            let lines: String = all
                .lines()
                .filter(|l| l.ends_with(&format!(",file={f}")))
                .map(|l| format!("{l}\n"))
                .collect();
            let mut v = fio_offsets(&lines);
            v.sort_unstable();
            v
        })
        .collect();
    [(ours, ours_lens), (theirs, lens())]
}

/// `offset=P%` and `offset_increment=P%` with several files: each file's region starts at
/// that share of its own length, as fio 3.33 computes it (the same offsets of each file
/// read, for a `filename` list, clones sharing it, and generated names).
#[test]
fn offset_in_percent_is_of_each_file_as_fio() {
    if !need_fio("offset_in_percent_is_of_each_file_as_fio") {
        return;
    }
    let list: &[(&str, usize)] = &[("pa.dat", 262_144), ("pb.dat", 524_288)];
    let generated: &[(&str, usize)] = &[
        ("g.0.0", 262_144),
        ("g.0.1", 200_000),
        ("g.1.0", 131_072),
        ("g.1.1", 409_600),
    ];
    // (the files and their lengths, the job's options)
    type Case<'a> = (&'a [(&'a str, usize)], &'a [&'a str]);
    let cases: &[Case] = &[
        (
            list,
            &[
                "--name=j",
                "--filename=pa.dat:pb.dat",
                "--offset=50%",
                "--size=256k",
            ],
        ),
        (
            list,
            &[
                "--name=j",
                "--filename=pa.dat:pb.dat",
                "--offset=10%",
                "--offset_increment=20%",
                "--numjobs=2",
                "--size=64k",
            ],
        ),
        (
            list,
            &[
                "--name=j",
                "--filename=pa.dat:pb.dat",
                "--offset=33%",
                "--size=128k",
                "--rw=randread",
            ],
        ),
        (
            list,
            &[
                "--name=j",
                "--filename=pa.dat:pb.dat",
                "--offset=25%",
                "--size=50%",
            ],
        ),
        (
            generated,
            &[
                "--name=g",
                "--nrfiles=2",
                "--numjobs=2",
                "--offset=25%",
                "--size=64k",
                "--rw=write",
            ],
        ),
    ];
    for (files, extra) in cases {
        let d = tmp("offsetpct");
        let make = |d: &Path| {
            for (f, n) in *files {
                std::fs::write(d.join(f), vec![7u8; *n]).unwrap();
            }
        };
        let mut args = vec!["--bs=4k", "--rw=read"];
        args.extend_from_slice(extra);
        let names: Vec<&str> = files.iter().map(|(f, _)| *f).collect();
        let [ours, theirs] = offsets_per_file(&d, &make, &args, &names);
        assert!(ours.0.iter().all(|v| !v.is_empty()), "{extra:?}: {ours:?}");
        assert_eq!(ours, theirs, "{extra:?}");
        // The files keep their lengths.
        let kept: Vec<u64> = files.iter().map(|(_, n)| *n as u64).collect();
        assert_eq!(ours.1, kept, "{extra:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }
    // A file with no length to take a share of: refused, naming it.
    let d = tmp("offsetpct-missing");
    std::fs::write(d.join("pa.dat"), vec![7u8; 65536]).unwrap();
    let r = hb(
        &d,
        &[
            "--name=t",
            "--filename=pa.dat:pb.dat",
            "--size=32k",
            "--offset=50%",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains("pb.dat is not an existing regular file"),
        "{}",
        r.err
    );
    assert_eq!(r.err.trim().lines().count(), 1, "{}", r.err);
}

/// A sequential pass of fixed blocks ends with the block that starts before `size` and
/// ends past it when it fits in the file, as fio (`get_next_offset` checks the offset
/// against `io_size`, the end against the file's size): `size=1000k,bs=64k` on a 2 MiB
/// file is 16 I/Os (1 MiB), on a file of its own laid out to 1000k 15; random offsets stay
/// in the region's whole blocks. Nothing goes past the file's end: the file keeps its
/// length.
#[test]
fn a_last_block_past_size_inside_the_file_as_fio() {
    let d = tmp("pastsize");
    const K: u64 = 1024;
    let cases: [(&[&str], u64); 7] = [
        (&["--rw=read"], 1024 * K),
        (&["--rw=write"], 1024 * K),
        (&["--rw=read", "--loops=2"], 2048 * K),
        (&["--rw=read", "--io_size=1000k"], 1024 * K),
        // The last block ends at the file's end exactly.
        (&["--rw=read", "--offset=1m"], 1024 * K),
        (&["--rw=randread"], 960 * K),
        (&["--rw=read", "--filename=fresh"], 960 * K),
    ];
    let peer = need_fio("a_last_block_past_size_inside_the_file_as_fio");
    for (extra, want) in cases {
        let mut a = vec![
            "--name=z",
            "--filename=big",
            "--bs=64k",
            "--size=1000k",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        let bytes = |r: Ran| -> u64 {
            assert_eq!(r.code, 0, "{extra:?}: {}", r.err);
            assert_eq!(std::fs::metadata(d.join("big")).unwrap().len(), 2 << 20);
            let _ = std::fs::remove_file(d.join("fresh"));
            let j = &doc(&r.out)["jobs"][0];
            j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap()
        };
        std::fs::write(d.join("big"), vec![1u8; 2 << 20]).unwrap();
        assert_eq!(bytes(hb(&d, &a)), want, "{extra:?}");
        if peer {
            std::fs::write(d.join("big"), vec![1u8; 2 << 20]).unwrap();
            assert_eq!(bytes(fio(&d, &a)), want, "fio {extra:?}");
        }
    }
    // time_based: each pass is the 16 blocks, then back to 0 (fio's offsets the same).
    let offsets = |real: bool| -> Vec<u64> {
        std::fs::write(d.join("big"), vec![1u8; 2 << 20]).unwrap();
        let a = [
            "--name=z",
            "--filename=big",
            "--bs=64k",
            "--size=1000k",
            "--rw=read",
            "--time_based",
            "--runtime=1",
            "--rate_iops=40",
            "--write_iops_log=t",
            "--log_offset=1",
            "--output=out.txt",
        ];
        let r = if real { fio(&d, &a) } else { hb(&d, &a) };
        assert_eq!(r.code, 0, "{}", r.err);
        let log = std::fs::read_to_string(d.join("t_iops.1.log")).unwrap();
        std::fs::remove_file(d.join("t_iops.1.log")).unwrap();
        log.lines()
            .take(20)
            .map(|l| l.split(", ").nth(4).unwrap().parse().unwrap())
            .collect()
    };
    let ours = offsets(false);
    let want: Vec<u64> = (0..20).map(|i| (i % 16) * 64 * K).collect();
    assert_eq!(ours, want);
    if peer {
        assert_eq!(offsets(true), want, "fio");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// Without `size`, an existing file's clones each read from their own offset to the file's
/// end, as fio (`io_size = real_file_size - file_offset`): the region never reaches past
/// the end, so the file is not grown (it took the file's whole length from the offset on
/// and grew a 4 MiB file to 5 MiB and more).
#[test]
fn without_a_size_each_clone_reads_to_the_files_end_as_fio() {
    let d = tmp("nosize-offsets");
    let f = d.join("s1");
    let peer = need_fio("without_a_size_each_clone_reads_to_the_files_end_as_fio");
    let cases: [(&[&str], &[u64]); 4] = [
        (&["--offset=25%"], &[768]),
        (
            &["--offset=25%", "--offset_increment=10%", "--numjobs=2"],
            &[768, 665],
        ),
        (&["--offset_increment=1m", "--numjobs=2"], &[1024, 768]),
        (&["--offset=1m"], &[768]),
    ];
    for (extra, want) in cases {
        std::fs::write(&f, vec![7u8; 4 << 20]).unwrap();
        let mut args = vec!["--name=s", "--filename=s1", "--rw=read", "--bs=4k"];
        args.extend_from_slice(extra);
        args.push("--output-format=json");
        let reads = |v: &Value| -> Vec<u64> {
            v["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| j["read"]["total_ios"].as_u64().unwrap())
                .collect()
        };
        let ours = reads(&doc(&hb(&d, &args).out));
        assert_eq!(ours, want, "{extra:?}");
        assert_eq!(
            std::fs::metadata(&f).unwrap().len(),
            4 << 20,
            "{extra:?}: grown"
        );
        if peer {
            assert_eq!(reads(&doc(&fio(&d, &args).out)), want, "fio {extra:?}");
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// A job given `filename` twice (`--filename=x --filename=z`, two `filename=` lines in its
/// section, or `[global]`'s and its own): fio does I/O to both, the size divided between
/// them; hostbench keeps the last on purpose (docs/fio.md: the user may have meant to
/// replace a device) and says so in one line on stderr naming both and the fix. Only z
/// is written; x, here a file with data of its own, is left as it was.
#[test]
fn a_repeated_filename_keeps_the_last_and_says_so() {
    let d = tmp("filename-twice");
    let x: Vec<u8> = (0..8192u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(
        d.join("two.fio"),
        "[j]\nfilename=x\nfilename=z\nsize=64k\nrw=write\n",
    )
    .unwrap();
    std::fs::write(
        d.join("gj.fio"),
        "[global]\nfilename=x\n[j]\nfilename=z\nsize=64k\nrw=write\n",
    )
    .unwrap();
    let cases: [&[&str]; 3] = [
        &[
            "--name=j",
            "--filename=x",
            "--filename=z",
            "--size=64k",
            "--rw=write",
        ],
        &["two.fio"],
        &["gj.fio"],
    ];
    for args in cases {
        let a = [args, &["--output-format=json"][..]].concat();
        for ours in [true, false] {
            if !ours && !need_fio("a_repeated_filename_keeps_the_last_and_says_so") {
                continue;
            }
            std::fs::write(d.join("x"), &x).unwrap();
            let _ = std::fs::remove_file(d.join("z"));
            let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
            assert_eq!(r.code, 0, "{a:?}: {}", r.err);
            let z = std::fs::metadata(d.join("z")).unwrap().len();
            let written = doc(&r.out)["jobs"][0]["write"]["io_bytes"]
                .as_u64()
                .unwrap();
            assert_eq!(written, 65536, "{a:?} {ours}");
            if ours {
                assert_eq!(z, 65536, "{a:?}");
                assert_eq!(std::fs::read(d.join("x")).unwrap(), x, "{a:?}: x changed");
                let w: Vec<&str> = r.err.lines().filter(|l| l.contains("filename=")).collect();
                assert_eq!(w.len(), 1, "{a:?}: {}", r.err);
                for want in [
                    "job 'j'",
                    "filename=x",
                    "filename=z",
                    "filename=x:z",
                    "docs/fio.md",
                ] {
                    assert!(w[0].contains(want), "{a:?}: {want}: {}", w[0]);
                }
            } else {
                // fio's rule: both files, 32 KiB each (x's first 32 KiB overwritten).
                assert_eq!(z, 32768, "{a:?} fio");
                assert_ne!(std::fs::read(d.join("x")).unwrap(), x, "{a:?} fio");
            }
        }
    }
    // One file named twice, or a list given whole: nothing to say.
    for args in [
        &[
            "--name=j",
            "--filename=z",
            "--filename=z",
            "--size=64k",
            "--rw=write",
        ][..],
        &["--name=j", "--filename=x:z", "--size=64k", "--rw=write"][..],
    ] {
        std::fs::write(d.join("x"), &x).unwrap();
        let r = hb(&d, args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.err);
        assert!(!r.err.contains("filename="), "{args:?}: {}", r.err);
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// `directory=` and an absolute `filename=`: fio joins them (`dd` + `/x/t/v` is
/// `dd/x/t/v`), so the absolute path itself is never touched; hostbench wrote it (and with
/// `unlink=1` removed it: a file the job did not name).
#[test]
fn an_absolute_filename_goes_under_the_directory_as_fio() {
    let d = tmp("absdir");
    std::fs::create_dir_all(d.join("dd")).unwrap();
    std::fs::create_dir_all(d.join("t")).unwrap();
    let precious = d.join("t/v");
    std::fs::write(&precious, "precious\n").unwrap();
    let abs = s(&precious);
    let under = d.join("dd").join(abs.trim_start_matches('/'));
    let job = format!("[b]\nrw=write\nsize=64k\ndirectory=dd\nfilename={abs}\n");
    std::fs::write(d.join("j.fio"), &job).unwrap();
    for args in [
        vec!["j.fio".to_string()],
        vec![
            "--name=r".into(),
            "--rw=read".into(),
            "--size=4k".into(),
            "--unlink=1".into(),
            "--directory=dd".into(),
            format!("--filename={abs}"),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let h = hb(&d, &args);
        assert_eq!(
            std::fs::read_to_string(&precious).unwrap(),
            "precious\n",
            "{args:?}: the absolute path was written: {}",
            h.err
        );
        if h.code == 0 {
            assert!(under.exists(), "{args:?}: nothing under dd: {}", h.out);
        } else {
            // The directories under dd are not there (fio makes them).
            assert_eq!(h.code, 2, "{}", h.err);
            let parent = format!("dd/{}", abs.trim_start_matches('/'));
            let parent = parent.rsplit_once('/').unwrap().0;
            assert!(h.err.contains(parent), "{}", h.err);
        }
    }
    if need_fio("an_absolute_filename_goes_under_the_directory_as_fio") {
        let p = fio(&d, &["j.fio"]);
        assert_eq!(p.code, 0, "{}", p.err);
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "precious\n");
        assert_eq!(std::fs::metadata(&under).unwrap().len(), 65536);
    }
    std::fs::remove_dir_all(&d).ok();
}

/// `name=` inside a section names the job's first clone in the reports (the start-up line,
/// "Laying out", the normal layout's block and JSON `jobname`), as fio 3.33 does; its
/// further clones and its generated files keep the section's name (fio: `renamed`, `x`;
/// files `x.0.0`, `x.1.0`, `y.0.0`).
#[test]
fn name_in_a_section_names_the_first_clone_as_in_fio() {
    let d = tmp("renamed");
    std::fs::write(
        d.join("n.fio"),
        "[x]\nname=renamed\nrw=read\nsize=64k\nnumjobs=2\n[y]\nrw=read\nsize=64k\nname=y2\nstonewall\n",
    )
    .unwrap();
    let names = |v: &Value| -> Vec<String> { entries(v).into_iter().map(|e| e.0).collect() };
    let lines = |out: &str| -> Vec<String> {
        out.lines()
            .filter_map(|l| {
                if let Some((name, _)) = l.split_once(": (g=") {
                    Some(name.to_string())
                } else if l.contains("Laying out") {
                    Some(l.to_string())
                } else {
                    l.contains("(groupid=")
                        .then(|| l.split(": pid=").next().unwrap().to_string())
                }
            })
            .collect()
    };
    let h = hb(&d, &["n.fio"]);
    assert_eq!(h.code, 0, "{}", h.err);
    let want = [
        "renamed",
        "y2",
        "renamed: Laying out IO file (1 file / 0MiB)",
        "x: Laying out IO file (1 file / 0MiB)",
        "y2: Laying out IO file (1 file / 0MiB)",
        "renamed: (groupid=0, jobs=1): err= 0",
        "x: (groupid=0, jobs=1): err= 0",
        "y2: (groupid=1, jobs=1): err= 0",
    ];
    assert_eq!(lines(&h.out), want, "{}", h.out);
    let mut files: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".0"))
        .collect();
    files.sort();
    assert_eq!(files, ["x.0.0", "x.1.0", "y.0.0"]);
    let j = hb(&d, &["n.fio", "--output-format=json"]);
    assert_eq!(names(&doc(&j.out)), ["renamed", "x", "y2"], "{}", j.out);
    if need_fio("name_in_a_section_names_the_first_clone_as_in_fio") {
        for f in &files {
            std::fs::remove_file(d.join(f)).unwrap();
        }
        let p = fio(&d, &["n.fio"]);
        assert_eq!(lines(&p.out), want, "{}", p.out);
        let p = fio(&d, &["n.fio", "--output-format=json"]);
        assert_eq!(names(&doc(&p.out)), ["renamed", "x", "y2"], "{}", p.out);
    }
    std::fs::remove_dir_all(d).ok();
}

/// `filename=newdir/sub/f` where newdir does not exist: fio makes the directories (mode
/// 0700, its `create_work_dirs`) and runs; so does hostbench for a relative name under the
/// run directory. A name that leaves it (`..`, refused before) or an absolute one whose
/// directory is missing is refused, the message naming filename (it used to say "give
/// another --directory").
#[test]
fn filename_in_missing_directories_makes_them_as_fio() {
    use std::os::unix::fs::PermissionsExt;
    let d = tmp("mkdirs");
    let args = [
        "--name=a",
        "--filename=newdir/sub/f",
        "--rw=write",
        "--size=64k",
        "--output-format=terse",
    ];
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let made = |d: &Path| {
        (
            mode(&d.join("newdir")),
            mode(&d.join("newdir/sub")),
            std::fs::metadata(d.join("newdir/sub/f")).unwrap().len(),
        )
    };
    let h = hb(&d, &args);
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(made(&d), (0o700, 0o700, 64 << 10));
    if need_fio("filename_in_missing_directories_makes_them_as_fio") {
        std::fs::remove_dir_all(d.join("newdir")).unwrap();
        let p = fio(&d, &args);
        assert_eq!(p.code, 0, "{}", p.err);
        assert_eq!(made(&d), (0o700, 0o700, 64 << 10));
    }
    let inner = d.join("inner");
    std::fs::create_dir(&inner).unwrap();
    let abs = d.join("abs/x/f");
    for name in ["../escape/f".to_string(), abs.display().to_string()] {
        let h = hb(
            &inner,
            &[
                "--name=a",
                &format!("--filename={name}"),
                "--rw=write",
                "--size=64k",
            ],
        );
        assert_eq!(h.code, 2, "{name}: {}", h.err);
        assert!(
            h.err.contains("filename") && h.err.contains(&name),
            "{name}: {}",
            h.err
        );
        assert!(!h.err.contains("--directory"), "{name}: {}", h.err);
    }
    assert!(!d.join("escape").exists() && !d.join("abs").exists());
    std::fs::remove_dir_all(d).ok();
}

/// `write_hint` (a user review: refused) sets fio's hint on the job's file as it opens it —
/// `fcntl(fd, F_SET_RW_HINT, &2)` for `short` on a buffered job; with `direct=1` fio asks
/// for the open file's hint (`F_SET_FILE_RW_HINT`), which kernels since 5.18 refuse: the
/// job then fails with `err=22`, `func=fcntl write hint`, and writes nothing, in both tools.
#[test]
fn write_hint_is_set_on_the_file_as_fio_sets_it() {
    if !super::fio_engines::have_strace("write_hint_is_set_on_the_file_as_fio_sets_it") {
        return;
    }
    let d = tmp("whint");
    let base = [
        "--name=a",
        "--size=256k",
        "--rw=write",
        "--filename=wh",
        "--write_hint=short",
        "--output-format=json",
    ];
    // The hint calls of a run: F_SET_RW_HINT is 0x40c, F_SET_FILE_RW_HINT 0x40e.
    let hints = |log: &str| -> Vec<String> {
        log.lines()
            .filter(|l| l.contains("fcntl(") && (l.contains("0x40c") || l.contains("0x40e")))
            .map(|l| {
                let i = l.find("fcntl(").unwrap();
                let call = &l[i..];
                call.split(',').nth(1).unwrap_or("").trim().to_string()
            })
            .collect()
    };
    let mut a = vec!["fio"];
    a.extend(base);
    a.push("--no-save");
    let (o, log) = strace_f(&d, common::bin(), &a, "fcntl", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(hints(&log), ["0x40c /* F_??? */"], "{log}");
    let h = hb(&d, &base);
    assert_eq!(
        doc(&h.out)["jobs"][0]["write"]["total_ios"],
        64,
        "{}",
        h.out
    );
    let mut direct = base.to_vec();
    direct.push("--direct=1");
    let h = hb(&d, &direct);
    let j = &doc(&h.out)["jobs"][0];
    let failed = (
        j["error"].as_i64(),
        j["write"]["total_ios"].as_u64(),
        h.code,
    );
    // A kernel that still takes the open file's hint runs the job.
    if failed.0 != Some(0) {
        assert_eq!(failed, (Some(22), Some(0), 1), "{}", h.out);
        assert!(
            h.out
                .contains("err=22/func=fcntl write hint, error=Invalid argument"),
            "{}",
            h.out
        );
    }
    let bad = hb(&d, &["--name=a", "--size=64k", "--write_hint=soon"]);
    assert_eq!(bad.code, 2, "{}", bad.err);
    assert!(
        bad.err.contains("write_hint=soon: expected none, short"),
        "{}",
        bad.err
    );
    if need_fio("write_hint_is_set_on_the_file_as_fio_sets_it") {
        let (o, log) = strace_f(&d, "fio", &base, "fcntl", &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(hints(&log), ["0x40c /* F_??? */"], "{log}");
        let p = fio(&d, &direct);
        let pj = &doc(&p.out)["jobs"][0];
        assert_eq!(
            (
                pj["error"].as_i64(),
                pj["write"]["total_ios"].as_u64(),
                p.code
            ),
            failed,
            "{}",
            p.out
        );
    }
    std::fs::remove_dir_all(d).ok();
}

/// libaio's submission refused by the kernel (`/dev/full` takes no AIO: `io_submit` fails
/// with EINVAL): the clone ends with the kernel's errno under fio's `func=io commit`, the
/// I/O it queued counts as issued, and its job block is printed, as fio's (a user review:
/// hostbench said err=5 `io submit`, issued nothing and printed no block).
#[test]
fn a_refused_aio_submission_fails_the_job_as_fios_commit() {
    let d = tmp("aiofull");
    let args = [
        "--name=a",
        "--rw=write",
        "--filename=/dev/full",
        "--ioengine=libaio",
        "--iodepth=8",
        "--size=1m",
    ];
    let shape = |r: &Ran| {
        let issued = r
            .out
            .lines()
            .find(|l| l.contains("issued rwts:"))
            .map(|l| l.split_whitespace().nth(2).unwrap_or("").to_string());
        let head = r.out.lines().any(|l| {
            l.starts_with("a: (groupid=0, jobs=1): err=22 (")
                && l.contains("func=io commit, error=Invalid argument")
        });
        (r.code, issued, head)
    };
    let h = hb(&d, &args);
    let want = (1, Some("total=0,1,0,0".to_string()), true);
    assert_eq!(shape(&h), want, "{}\n{}", h.out, h.err);
    assert!(
        !h.out.contains("WRITE: bw="),
        "no bytes, no group line\n{}",
        h.out
    );
    if need_fio("a_refused_aio_submission_fails_the_job_as_fios_commit") {
        let p = fio(&d, &args);
        assert_eq!(shape(&p), want, "{}\n{}", p.out, p.err);
        assert!(!p.out.contains("WRITE: bw="), "{}", p.out);
    }
    std::fs::remove_dir_all(d).ok();
}

/// A write that fails on /dev/full ends the clone (ENOSPC; libaio's submission refused,
/// EINVAL) with fio 3.33's counts, measured 2026-11-27: every I/O it queued is issued
/// (io_uring at iodepth=8 queues 8 before the first completion comes back: hostbench counted
/// 1), the depth of a refused submission marked (1=100%: hostbench had none) and the reap of
/// fio's clean-up after an error in the completion map even when it finds nothing (`0=`, for
/// psync too: hostbench had no such reap).
#[test]
fn a_failing_io_counts_what_was_queued_and_fios_clean_up_reap() {
    let d = tmp("fullmaps");
    // (engine, iodepth, issued, IO depths line's start)
    let cases = [
        ("psync", "1", "total=0,1,0,0", "1=100.0%, 2=0.0%"),
        ("io_uring", "1", "total=0,1,0,0", "1=100.0%, 2=0.0%"),
        ("libaio", "1", "total=0,1,0,0", "1=100.0%, 2=0.0%"),
        ("libaio", "4", "total=0,1,0,0", "1=100.0%, 2=0.0%"),
        (
            "io_uring",
            "8",
            "total=0,8,0,0",
            "1=12.5%, 2=25.0%, 4=50.0%, 8=12.5%",
        ),
    ];
    let shape = |r: &Ran| {
        let field = |key: &str| {
            r.out
                .lines()
                .find(|l| l.trim_start().starts_with(key))
                .map(|l| l.split_once(':').map_or("", |x| x.1).trim().to_string())
                .unwrap_or_default()
        };
        let issued = field("issued rwts")
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string();
        let complete = field("complete");
        (
            r.code,
            issued,
            field("IO depths"),
            complete.starts_with("0=0.0%"),
        )
    };
    let fio_too = need_fio("a_failing_io_counts_what_was_queued_and_fios_clean_up_reap");
    for (engine, depth, issued, depths) in cases {
        let args = [
            "--name=a".to_string(),
            "--rw=write".into(),
            "--bs=4k".into(),
            "--filename=/dev/full".into(),
            format!("--ioengine={engine}"),
            format!("--iodepth={depth}"),
            "--size=64k".into(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let runs = if fio_too {
            vec![("hostbench", hb(&d, &args)), ("fio", fio(&d, &args))]
        } else {
            vec![("hostbench", hb(&d, &args))]
        };
        for (tool, r) in runs {
            let (code, got_issued, got_depths, no_zero_reap) = shape(&r);
            assert_eq!(code, 1, "{tool} {engine} {depth}\n{}\n{}", r.out, r.err);
            assert_eq!(got_issued, issued, "{tool} {engine} {depth}\n{}", r.out);
            assert!(
                got_depths.starts_with(depths),
                "{tool} {engine} {depth}: IO depths {got_depths}, want {depths}\n{}",
                r.out
            );
            // (At iodepth=8 the clean-up's first reap finds some of the queue's completions
            // ready or none, as they come back: timing, in fio as here.)
            assert!(
                !no_zero_reap || depth == "8",
                "{tool} {engine} {depth}: the clean-up's empty reap is in `complete: 0=`\n{}",
                r.out
            );
        }
    }
    std::fs::remove_dir_all(d).ok();
}

/// fio 3.33 draws a `filesize` range's sizes from its `file_size_state` (each clone's
/// FIO_RAND_FILE_SIZE_OFF seed), so a new file's size is the same every run: measured on
/// 2026-11-27, `filesize=1m-3m` is 1347584 bytes (329 writes); hostbench drew its own
/// (1798144 bytes, 439 writes).
#[test]
fn filesize_ranges_draw_fios_sizes() {
    let cases: &[super::fio_mix::Case] = &[
        (&["--filesize=1m-3m"], &[(0, 329)]),
        (&["--filesize=1m-3m", "--nrfiles=3"], &[(0, 1152)]),
        (&["--filesize=10k-64k"], &[(0, 4)]),
        (&["--filesize=1m-3m", "--numjobs=2"], &[(0, 329), (0, 400)]),
        // A later job's clones draw with their fio thread numbers (3, then 5, 4 for its
        // clones 1, 2: fio numbers a job's other clones from the last down); hostbench
        // gave it 12, 40, 20 writes.
        (
            &[
                "--size=64k",
                "--numjobs=2",
                "--name=k",
                "--rw=write",
                "--filesize=16k-256k",
                "--numjobs=3",
            ],
            &[(0, 16), (0, 16), (0, 40), (0, 62), (0, 19)],
        ),
    ];
    let base = ["--name=j", "--rw=write", "--bs=4k", "--ioengine=psync"];
    super::fio_mix::run_cases_on("filesize_ranges_draw_fios_sizes", &base, cases);
}

/// Jobs sharing one file lay it out in turn, as fio 3.33 sets up each job's files: a job
/// whose region ends past the file's end extends it, with its own "Laying out" line and the
/// new length (a review HIGH: hostbench sized the file for the first job only, and the
/// later jobs read past its end, err=5, exit 1). Clones of one job sharing a file: the first
/// lays out its region, the next the rest (fio's two lines). Lines and counts measured with
/// fio on 2026-11-27 and compared with it when it is there.
#[test]
fn jobs_sharing_a_file_extend_it_as_fios_layout() {
    let d = tmp("sharedlayout");
    type Case<'a> = (&'a str, &'a [&'a str], &'a [(u64, u64)]);
    let cases: &[Case] = &[
        (
            "[global]\nfilename=sf\nsize=2m\nbs=64k\nrw=read\n[p0]\noffset=0\n[p1]\noffset=2m\n[p2]\noffset=4m\n",
            &[
                "p0: Laying out IO file (1 file / 2MiB)",
                "p1: Laying out IO file (1 file / 4MiB)",
                "p2: Laying out IO file (1 file / 6MiB)",
            ],
            &[(32, 0), (32, 0), (32, 0)],
        ),
        (
            "[global]\nfilename=sf\nbs=64k\nrw=read\n[p0]\nsize=16m\n[p1]\nsize=1m\n[p2]\nsize=4m\noffset=14m\n",
            &[
                "p0: Laying out IO file (1 file / 16MiB)",
                "p2: Laying out IO file (1 file / 18MiB)",
            ],
            &[(256, 0), (16, 0), (64, 0)],
        ),
        (
            "[global]\nfilename=sf\nbs=64k\n[w]\nrw=write\nsize=1m\n[r]\nstonewall\nrw=randread\nsize=4m\n",
            &[
                "w: Laying out IO file (1 file / 1MiB)",
                "r: Laying out IO file (1 file / 4MiB)",
            ],
            &[(0, 16), (64, 0)],
        ),
        (
            "[a]\nfilename=sf\nsize=2m\noffset_increment=2m\nnumjobs=3\nrw=write\nbs=64k\n",
            &[
                "a: Laying out IO file (1 file / 2MiB)",
                "a: Laying out IO file (1 file / 6MiB)",
            ],
            &[(0, 32), (0, 32), (0, 32)],
        ),
    ];
    let fio_too = need_fio("jobs_sharing_a_file_extend_it_as_fios_layout");
    for (text, lines, want) in cases {
        std::fs::write(d.join("j.fio"), text).unwrap();
        let mut runs = vec![("hostbench", hb(&d, &["j.fio"]))];
        std::fs::remove_file(d.join("sf")).unwrap();
        if fio_too {
            runs.push(("fio", fio(&d, &["j.fio"])));
            std::fs::remove_file(d.join("sf")).unwrap();
        }
        for (tool, r) in runs {
            let laid: Vec<&str> = r.out.lines().filter(|l| l.contains("Laying out")).collect();
            assert_eq!(laid, *lines, "{tool}: {text}\n{}\n{}", r.out, r.err);
            let issued: Vec<(u64, u64)> = r
                .out
                .lines()
                .filter_map(|l| l.trim_start().strip_prefix("issued rwts: total="))
                .map(|t| {
                    let n: Vec<u64> = t
                        .split_whitespace()
                        .next()
                        .unwrap()
                        .split(',')
                        .map(|x| x.parse().unwrap())
                        .collect();
                    (n[0], n[1])
                })
                .collect();
            assert_eq!(issued, *want, "{tool}: {text}\n{}", r.out);
            assert_eq!(r.code, 0, "{tool}: {text}\n{}", r.err);
        }
    }
    std::fs::remove_dir_all(d).ok();
}
