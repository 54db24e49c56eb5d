//! sysbench's `fileio` test and `hostbench smallfiles` through the real binary: prepare /
//! run / cleanup in a temporary directory, the report layouts (times redacted), request
//! counts against sysbench's, the safety rules (foreign files survive cleanup, free-space
//! refusal, Ctrl-C during prepare, O_DIRECT on tmpfs, the page-cache warning), JSON against
//! the schema, and bad input.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn ok_in(dir: &Path, args: &[&str]) -> (String, String) {
    let (code, o, e) = run_in(dir, args);
    assert_eq!(code, 0, "{args:?} failed:\n{e}\n{o}");
    (o, e)
}

fn json_in(dir: &Path, args: &[&str]) -> Value {
    let (o, _) = ok_in(dir, args);
    let v: Value = serde_json::from_str(&o).unwrap_or_else(|e| panic!("{e}: {o}"));
    assert_valid(&v, &format!("{args:?}"));
    v
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn counter(v: &Value, k: &str) -> u64 {
    v["metrics"]["counters"][k].as_u64().unwrap_or(0)
}

const SMALL: &[&str] = &["fileio", "--file-num=4", "--file-total-size=8M"];

fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = SMALL.to_vec();
    v.extend_from_slice(extra);
    v
}

#[test]
fn prepare_run_cleanup_layouts() {
    let d = tempfile::tempdir().unwrap();
    let (out, _) = ok_in(d.path(), &with(&["prepare"]));
    insta::assert_snapshot!("fileio_prepare", redact(&out));
    assert!(out.contains("4 files, 2048Kb each, 8Mb total\n"), "{out}");
    assert!(
        out.contains("\n8388608 bytes written in "),
        "sysbench counts whole blocks: {out}"
    );
    for i in 0..4 {
        let md = std::fs::metadata(d.path().join(format!("test_file.{i}"))).unwrap();
        assert_eq!(md.len(), 2 << 20);
    }
    // A second prepare reuses the files.
    let (out, _) = ok_in(d.path(), &with(&["prepare"]));
    assert!(
        out.contains("Reusing existing file test_file.3\nNo bytes written."),
        "{out}"
    );

    let (out, _) = ok_in(
        d.path(),
        &with(&[
            "--file-test-mode=rndrw",
            "--events=500",
            "--time=0",
            "--rand-seed=7",
            "run",
        ]),
    );
    assert_sysbench_columns(&out);
    insta::assert_snapshot!("fileio_rndrw", redact(&out));
    assert!(
        out.contains("total number of events:              500\n"),
        "{out}"
    );

    let (out, _) = ok_in(d.path(), &with(&["cleanup"]));
    assert_eq!(
        redact(&out),
        "hostbench #.# (sysbench #.# compatible)\n\nRemoving test files...\n"
    );
    assert!(names(d.path()).is_empty(), "{:?}", names(d.path()));
}

/// sysbench 1.0.20 on this machine, `--file-num=4 --file-total-size=8M --file-test-mode=rndrw
/// --events=500 --time=0 --file-fsync-end=off`: reads/s ÷ writes/s = 290/194 and fsyncs/s ÷
/// writes/s = 16/194 (5630.54, 3766.64, 310.65 per second over 0.0528 s). One thread makes the
/// sequence deterministic, so the counts are exact.
#[test]
fn request_counts_match_sysbench() {
    let d = tempfile::tempdir().unwrap();
    ok_in(d.path(), &with(&["prepare"]));
    let base = [
        "--events=500",
        "--time=0",
        "--file-fsync-end=off",
        "--format=json",
        "run",
    ];
    let mut a = with(&["--file-test-mode=rndrw"]);
    a.extend_from_slice(&base);
    let v = json_in(d.path(), &a);
    assert_eq!(
        (
            counter(&v, "reads"),
            counter(&v, "writes"),
            counter(&v, "other")
        ),
        (290, 194, 16)
    );
    assert_eq!(v["metrics"]["events"], 500);
    assert_eq!(counter(&v, "bytes_read"), 290 * 16384);
    // seqrewr: 100 writes then 4 fsyncs, repeated; fsync-end adds one per file, not events.
    let mut a = with(&["--file-test-mode=seqrewr"]);
    a.extend_from_slice(&base);
    a.insert(1, "--file-fsync-end=on");
    a.retain(|x| *x != "--file-fsync-end=off");
    let v = json_in(d.path(), &a);
    assert_eq!((counter(&v, "writes"), counter(&v, "other")), (484, 16 + 4));
    assert_eq!(v["metrics"]["events"], 500);
    // Merged requests: 2 blocks per sequential request; 2 MiB files hold 64 such requests.
    let mut a = with(&["--file-test-mode=seqrd", "--file-merged-requests=2"]);
    a.extend_from_slice(&base);
    let v = json_in(d.path(), &a);
    assert_eq!(counter(&v, "bytes_read"), 500 * 32768);
    assert_eq!(counter(&v, "other"), 0, "reads never fsync");
    // fsync-all: one fsync per write, inside the write's event.
    let mut a = with(&["--file-test-mode=rndwr", "--file-fsync-all"]);
    a.extend_from_slice(&base);
    let v = json_in(d.path(), &a);
    assert_eq!((counter(&v, "writes"), counter(&v, "other")), (500, 500));
}

/// Whether io_uring can be set up here. Where it cannot (a kernel with io_uring disabled, a
/// container's seccomp profile), `--file-io-mode=async` must fail with one clear line.
fn io_uring_works(dir: &Path) -> bool {
    let mut a = with(&["--file-io-mode=async", "--file-test-mode=rndrd"]);
    a.extend_from_slice(&["--events=1", "--time=0", "run"]);
    let (code, _, err) = run_in(dir, &a);
    if code == 0 {
        return true;
    }
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot set up io_uring"), "{err}");
    eprintln!("io_uring is not available here; async cases skipped: {err}");
    false
}

#[test]
fn io_modes_and_flags_run() {
    let d = tempfile::tempdir().unwrap();
    ok_in(d.path(), &with(&["prepare"]));
    for extra in [
        &["--file-io-mode=mmap", "--file-test-mode=rndrw"][..],
        &["--file-io-mode=async", "--file-test-mode=rndrd"][..],
        &[
            "--file-io-mode=async",
            "--file-async-backlog=8",
            "--file-test-mode=rndwr",
        ][..],
        &["--file-extra-flags=dsync", "--file-test-mode=seqrewr"][..],
        &[
            "--file-fsync-mode=fdatasync",
            "--threads=2",
            "--file-test-mode=rndrw",
        ][..],
    ] {
        let mut a = with(extra);
        a.extend_from_slice(&["--events=300", "--time=0", "--format=json", "run"]);
        if extra.contains(&"--file-io-mode=async") && !io_uring_works(d.path()) {
            continue;
        }
        let v = json_in(d.path(), &a);
        assert_eq!(v["metrics"]["events"], 300, "{extra:?}");
        let io = counter(&v, "reads") + counter(&v, "writes");
        assert!(io > 0, "{extra:?}: {}", v["metrics"]);
    }
    // Async counts at completion and waits for everything in flight at the end.
    if !io_uring_works(d.path()) {
        return;
    }
    let mut a = with(&["--file-io-mode=async", "--file-test-mode=rndrd"]);
    a.extend_from_slice(&["--events=1000", "--time=0", "--format=json", "run"]);
    let v = json_in(d.path(), &a);
    assert_eq!(counter(&v, "reads"), 1000);
}

#[test]
fn interval_lines_have_sysbench_fileio_format() {
    let d = tempfile::tempdir().unwrap();
    ok_in(d.path(), &with(&["prepare"]));
    let (out, _) = ok_in(
        d.path(),
        &with(&[
            "--file-test-mode=rndrw",
            "--time=2",
            "--report-interval=1",
            "run",
        ]),
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("[ 1s ] "))
        .unwrap_or_else(|| panic!("no interval line:\n{out}"));
    assert_eq!(
        redact(line),
        "[ #s ] reads: #.# MiB/s writes: #.# MiB/s fsyncs: #.#/s latency (ms,#%): #.#"
    );
}

#[test]
fn cleanup_never_touches_foreign_files() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    ok_in(p, &with(&["prepare"]));
    std::fs::write(p.join("test_file.999"), b"not ours").unwrap();
    std::fs::write(p.join("other.txt"), b"not ours").unwrap();
    // Someone replaces test_file.0 with a file of their own under the same name.
    std::fs::remove_file(p.join("test_file.0")).unwrap();
    std::fs::write(p.join("test_file.0"), b"mine").unwrap();
    let (out, _) = ok_in(p, &with(&["cleanup"]));
    assert!(
        out.contains("Not removing test_file.0: hostbench did not create it"),
        "{out}"
    );
    assert_eq!(names(p), ["other.txt", "test_file.0", "test_file.999"]);
    assert_eq!(std::fs::read(p.join("test_file.0")).unwrap(), b"mine");

    // Files hostbench has no record of (sysbench's, say) are left alone too.
    let e = tempfile::tempdir().unwrap();
    for i in 0..4 {
        std::fs::write(e.path().join(format!("test_file.{i}")), b"x").unwrap();
    }
    let (out, _) = ok_in(e.path(), &with(&["cleanup"]));
    // One line for them all, not one per file.
    assert_eq!(out.matches("Not removing").count(), 1, "{out}");
    assert!(
        out.contains(
            "Not removing 4 files (test_file.0 ... test_file.3): hostbench did not create them, \
             so they were kept"
        ) && out.contains("`sysbench fileio --file-num=N cleanup`")
            && out.contains("`rm -- test_file.*`"),
        "{out}"
    );
    assert_eq!(names(e.path()).len(), 4);

    // seqwr recreates its files, but refuses to delete someone else's.
    let (code, _, err) = run_in(p, &with(&["--file-test-mode=seqwr", "--events=10", "run"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("test_file.0 exists and hostbench did not create it"),
        "{err}"
    );
    assert_eq!(std::fs::read(p.join("test_file.0")).unwrap(), b"mine");
}

#[test]
fn seqwr_creates_and_cleanup_removes_its_files() {
    let d = tempfile::tempdir().unwrap();
    let v = json_in(
        d.path(),
        &with(&[
            "--file-test-mode=seqwr",
            "--events=200",
            "--time=0",
            "--format=json",
            "run",
        ]),
    );
    // 200 events: 100 writes, 4 fsyncs, 96 writes; then 4 fsyncs at the end.
    assert_eq!((counter(&v, "writes"), counter(&v, "other")), (196, 8));
    assert_eq!(names(d.path()).len(), 5, "4 files and the manifest");
    ok_in(d.path(), &with(&["cleanup"]));
    assert!(names(d.path()).is_empty(), "{:?}", names(d.path()));
}

#[test]
fn free_space_refusal_is_clean() {
    let d = tempfile::tempdir().unwrap();
    let (code, _, err) = run_in(d.path(), &["fileio", "--file-total-size=256T", "prepare"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not enough free space in"), "{err}");
    assert!(
        err.contains("--file-total-size=256T needs 256.0 TiB more"),
        "{err}"
    );
    assert!(err.contains("must stay free"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        names(d.path()).is_empty(),
        "nothing written: {:?}",
        names(d.path())
    );
}

#[test]
fn sigterm_during_prepare_removes_the_part_files_as_ctrl_c_does() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let args = ["fileio", "--file-num=2", "--file-total-size=4G", "prepare"];
    let child = spawn_piped(hb_std().current_dir(p).args(args));
    std::thread::sleep(Duration::from_millis(700));
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && err.contains("not enough free space") {
        eprintln!("skipped: no room for a 4 GiB layout here: {err}");
        return;
    }
    if out.status.code() == Some(0) {
        eprintln!("skipped: the disk wrote 4 GiB in 0.7 s, nothing was interrupted");
        ok_in(
            p,
            &["fileio", "--file-num=2", "--file-total-size=4G", "cleanup"],
        );
        return;
    }
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(err.contains("prepare interrupted"), "{err}");
    for n in names(p) {
        assert!(!n.ends_with(".hostbench-part"), "{n} left behind");
    }
    ok_in(
        p,
        &["fileio", "--file-num=2", "--file-total-size=4G", "cleanup"],
    );
}

#[test]
fn ctrl_c_during_prepare_leaves_nothing_a_run_trusts() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let args = ["fileio", "--file-num=2", "--file-total-size=4G", "prepare"];
    let child = spawn_piped(hb_std().current_dir(p).args(args));
    std::thread::sleep(Duration::from_millis(700));
    let out = interrupt(child);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && err.contains("not enough free space") {
        eprintln!("skipped: no room for a 4 GiB layout here: {err}");
        return;
    }
    if out.status.code() == Some(0) {
        // The disk wrote 4 GiB in 0.7 s: nothing was interrupted; nothing to check.
        ok_in(
            p,
            &["fileio", "--file-num=2", "--file-total-size=4G", "cleanup"],
        );
        return;
    }
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("prepare interrupted"), "{err}");
    // No part file is left, and no final name holds a short file.
    for n in names(p) {
        assert!(!n.ends_with(".hostbench-part"), "{n} left behind");
        if n.starts_with("test_file.") {
            assert_eq!(std::fs::metadata(p.join(&n)).unwrap().len(), 2 << 30, "{n}");
        }
    }
    let (code, _, err) = run_in(
        p,
        &[
            "fileio",
            "--file-num=2",
            "--file-total-size=4G",
            "--file-test-mode=rndrd",
            "--events=10",
            "run",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did not finish"), "{err}");
    assert!(err.contains("prepare"), "{err}");
    ok_in(
        p,
        &["fileio", "--file-num=2", "--file-total-size=4G", "cleanup"],
    );
    assert!(names(p).is_empty(), "{:?}", names(p));
}

/// Linux ≥ 6.6 lets tmpfs accept O_DIRECT (the data still lives in RAM); older kernels
/// refuse it with EINVAL. Either way the filesystem is named: in the error, or in the
/// page-cache warning that says the figures describe memory.
#[test]
fn direct_io_on_tmpfs_names_the_filesystem() {
    if !Path::new("/dev/shm").is_dir() {
        return;
    }
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let args = with(&[
        "--file-extra-flags=direct",
        "--file-test-mode=rndrd",
        "--events=50",
        "--time=0",
        "--format=json",
    ]);
    let mut prep = args.clone();
    prep.push("prepare");
    let (code, _, err) = run_in(d.path(), &prep);
    if code != 0 {
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("tmpfs filesystem"), "{err}");
        assert!(err.contains("does not support direct I/O"), "{err}");
        return;
    }
    let mut run = args.clone();
    run.push("run");
    let v = json_in(d.path(), &run);
    let w = v["warnings"].as_array().unwrap();
    assert!(
        w.iter()
            .any(|w| w["kind"] == "page_cache" && w["message"].as_str().unwrap().contains("tmpfs")),
        "{w:?}"
    );
}

#[test]
fn page_cache_warning_in_json() {
    let d = tempfile::tempdir().unwrap();
    ok_in(d.path(), &with(&["prepare"]));
    let v = json_in(
        d.path(),
        &with(&[
            "--file-test-mode=rndrd",
            "--events=100",
            "--time=0",
            "--format=json",
            "run",
        ]),
    );
    let w = v["warnings"].as_array().unwrap();
    assert!(
        w.iter().any(|w| w["kind"] == "page_cache"
            && w["message"].as_str().unwrap().contains("smaller than RAM")),
        "{w:?}"
    );
    assert_eq!(v["workload"]["id"], "fileio");
    assert_eq!(v["config"]["grammar"], "sysbench");
    let figs: Vec<&str> = v["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(figs[0], "io_per_s", "{figs:?}");
    assert!(figs.contains(&"read_mib_per_s"), "{figs:?}");
}

#[test]
fn file_dir_extension_and_bad_input() {
    let d = tempfile::tempdir().unwrap();
    let dir = format!("--file-dir={}", d.path().display());
    let here = tempfile::tempdir().unwrap();
    ok_in(
        here.path(),
        &[
            "fileio",
            "--file-num=2",
            "--file-total-size=1M",
            &dir,
            "prepare",
        ],
    );
    assert_eq!(names(d.path()).len(), 3, "{:?}", names(d.path()));
    assert!(names(here.path()).is_empty());

    let cases: &[(&[&str], &str)] = &[
        (
            &["fileio", "--file-test-mode=foo", "run"],
            "Invalid IO operations mode: foo",
        ),
        (
            &["fileio", "run"],
            "Missing required argument: --file-test-mode",
        ),
        (
            &[
                "fileio",
                "--file-num=3",
                "--file-total-size=1M",
                "--file-test-mode=rndrd",
                "run",
            ],
            "Did you forget to run the prepare step?",
        ),
        (
            &[
                "fileio",
                "--file-num=2",
                "--file-total-size=2M",
                "--file-test-mode=rndrd",
                "run",
            ],
            "Size of file 'test_file.0' is 512KiB, but at least 1MiB is expected",
        ),
        (
            &["fileio", "--file-extra-flags=odirect", "prepare"],
            "odirect",
        ),
        (
            &["fileio", "--file-io-mode=aio", "prepare"],
            "sync, async, mmap",
        ),
        (&["fileio", "--file-num=0", "prepare"], "--file-num"),
        (
            &["fileio", "--file-total-size=10", "prepare"],
            "each file would be empty",
        ),
        (
            &["fileio", "--file-dir=/no/such/dir", "prepare"],
            "/no/such/dir",
        ),
    ];
    for (args, needle) in cases {
        let mut a: Vec<&str> = args.to_vec();
        a.insert(1, &dir);
        let (code, _, err) = run_in(here.path(), &a);
        assert_eq!(code, 2, "{a:?}: {err}");
        assert!(err.contains(needle), "{a:?}: expected '{needle}' in: {err}");
        assert_eq!(err.lines().count(), 1, "{a:?}: {err}");
    }
}

#[test]
fn seed_lines_parse() {
    // The seeds' command lines, checked for parsing only (`help` stops before any I/O).
    for args in [
        &[
            "fileio",
            "--file-total-size=256G",
            "--file-test-mode=rndrw",
            "--time=300",
            "help",
        ][..],
        &[
            "fileio",
            "--max-time=300",
            "--max-requests=0",
            "--file-extra-flags=direct",
            "help",
        ][..],
        &[
            "fileio",
            "--report-interval=1",
            "--file-test-mode=seqrewr",
            "help",
        ][..],
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out.contains("--file-test-mode"), "{out}");
    }
}

#[test]
fn smallfiles_phases_threshold_and_safety() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("keep.txt"), b"not ours").unwrap();
    let dir = d.path().display().to_string();
    let (code, out, err) = run(&[
        "smallfiles",
        "--directory",
        &dir,
        "--files",
        "200",
        "--threads",
        "2",
        "--fanout",
        "4",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_valid(&v, "smallfiles json");
    assert_eq!(v["metrics"]["events"], 800, "4 phases of 200 operations");
    assert_eq!(counter(&v, "writes"), 200);
    assert_eq!(counter(&v, "reads"), 200);
    assert_eq!(counter(&v, "bytes_read"), 200 * 4096);
    let t = &v["tables"][0];
    assert_eq!(t["name"], "smallfiles");
    let labels: Vec<&str> = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["create", "stat", "read", "delete"]);
    for r in t["rows"].as_array().unwrap() {
        assert_eq!(r["values"][0], 200.0, "{r}");
    }
    assert!(v["workload"]["facts"]["create_read_s"].as_f64().unwrap() > 0.0);
    // Only the foreign file is left.
    assert_eq!(names(d.path()), ["keep.txt"]);

    // Text layout.
    let (code, out, _) = run(&["smallfiles", "--directory", &dir, "--files", "50"]);
    assert_eq!(code, 0);
    let r = redact(&out);
    assert!(r.contains("smallfiles: # files of #.# KiB in "), "{r}");
    assert!(
        r.contains("create + read: #.# s (threshold # s): PASS"),
        "{r}"
    );

    // Threshold exceeded: exit 1 and a line saying why.
    let (code, out, err) = run(&[
        "smallfiles",
        "--directory",
        &dir,
        "--files",
        "2000",
        "--max-seconds",
        "0.001",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("FAIL"), "{out}");
    assert!(err.contains("more than --max-seconds 0.001"), "{err}");
    assert_eq!(names(d.path()), ["keep.txt"]);

    // Bad input.
    for (args, needle) in [
        (
            &["smallfiles", "--directory", "/no/such/dir"][..],
            "/no/such/dir",
        ),
        (
            &["smallfiles", "--directory", &dir, "--max-seconds", "0"][..],
            "expected a number from 0.001",
        ),
        (&["smallfiles"][..], "--directory"),
        (
            &["smallfiles", "--directory", &dir, "--files", "0"][..],
            "--files",
        ),
        (
            &["smallfiles", "--directory", &dir, "--size", "big"][..],
            "--size",
        ),
        (
            &["smallfiles", "--directory", &dir, "--threads", "0"][..],
            "--threads",
        ),
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn help_aligns_the_option_column_as_sysbench_does() {
    // sysbench pads every option of a test to the longest one plus a space.
    let out = stdout_ok(&["fileio", "help"]);
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("  --")).collect();
    assert!(lines.len() > 10, "{out}");
    let col = |l: &str| l[2..].find(' ').map(|i| i + 2).unwrap();
    let starts: Vec<usize> = lines
        .iter()
        .map(|l| col(l) + l[col(l)..].len() - l[col(l)..].trim_start().len())
        .collect();
    assert!(starts.windows(2).all(|w| w[0] == w[1]), "{out}");
}
