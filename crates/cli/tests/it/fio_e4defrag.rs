//! fio 3.33's `e4defrag` engine (`EXT4_IOC_MOVE_EXT` per write, with a donor file) side by
//! side with the installed fio, on an ext4 filesystem of the test's own (a sparse image,
//! loop-mounted: root only, otherwise the test prints why it skips): the I/O counts, the
//! ioctls made (strace), the donor file left (created, allocated or truncated, never
//! removed), the extents of the file after (`filefrag`), the errors and exit codes; then
//! fio's examples `e4defrag.fio` and `e4defrag2.fio`, adapted in sizes, runtimes and paths.
//! Off ext4 (tmpfs) each write fails with ENOTTY, as fio's.

use super::fio::tmp;
use super::fio_engines::{have_strace, strace_f};
use super::fio_errors::SmallFs;
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_seq::need_fio;
use serde_json::Value;
use std::path::Path;

/// (error, write ios, write bytes, read ios) of each JSON job entry, by name.
fn rows(r: &Ran) -> Vec<(String, i64, u64, u64, u64)> {
    doc(&r.out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j: &Value| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["error"].as_i64().unwrap(),
                j["write"]["total_ios"].as_u64().unwrap(),
                j["write"]["io_bytes"].as_u64().unwrap(),
                j["read"]["total_ios"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `filefrag -v`'s extent lines of `p` as (count, every extent's flags joined), or `None`
/// without filefrag.
fn extents(p: &Path) -> Option<(usize, String)> {
    let o = std::process::Command::new("filefrag")
        .arg("-v")
        .arg(p)
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.trim_start()
                .split(':')
                .next()
                .is_some_and(|n| n.trim().parse::<u32>().is_ok())
        })
        .collect();
    // The flags column: whatever follows the length (and the expected block, if any).
    let flags = lines
        .iter()
        .map(|l| {
            l.split_whitespace()
                .last()
                .filter(|w| w.chars().any(|c| c.is_ascii_alphabetic()))
                .unwrap_or("")
                .to_string()
        })
        .collect::<Vec<_>>()
        .join(" ");
    Some((lines.len(), flags))
}

/// The regular files of `dir` with their lengths, sorted.
fn listing(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().to_string(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    v.sort();
    v
}

/// `listing` without the verify state files (`local-JOB-N-verify.state`).
fn kept(v: Vec<(String, u64)>) -> Vec<(String, u64)> {
    v.into_iter()
        .filter(|(n, _)| !n.ends_with("-verify.state"))
        .collect()
}

/// The `EXT4_IOC_MOVE_EXT` ioctls `program args` makes (strace -f), run in `dir`.
fn move_ioctls(dir: &Path, program: &str, args: &[&str]) -> usize {
    let (o, text) = strace_f(dir, program, args, "ioctl", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // _IOWR('f', 15, struct move_extent), as strace spells it.
    text.lines()
        .filter(|l| l.contains("_IOC(_IOC_READ|_IOC_WRITE, 0x66, 0xf, 0x28)"))
        .count()
}

#[test]
fn e4defrag_moves_each_write_with_its_donor_as_fio() {
    if !need_fio("fio_e4defrag::e4defrag_moves_each_write_with_its_donor_as_fio") {
        return;
    }
    let Some(fs) = SmallFs::new("e4d-moves", 128) else {
        return;
    };
    let dir = format!("--directory={}", fs.path().display());
    for (inplace, rw) in [("0", "write"), ("1", "randwrite")] {
        let ip = format!("--inplace={inplace}");
        let rwo = format!("--rw={rw}");
        let args = [
            "--name=d",
            "--ioengine=e4defrag",
            dir.as_str(),
            "--filename=f",
            "--filesize=4m",
            "--size=4m",
            "--bs=32k",
            "--direct=1",
            "--donorname=f.def",
            ip.as_str(),
            rwo.as_str(),
            "--output-format=json",
        ];
        let mut seen = Vec::new();
        for tool in ["fio", "hostbench"] {
            fs.clear();
            let r = if tool == "fio" {
                fio(fs.path(), &args)
            } else {
                hb(fs.path(), &args)
            };
            assert_eq!(r.code, 0, "{tool} inplace={inplace}: {}", r.err);
            let files = listing(fs.path());
            let ext = extents(&fs.path().join("f"));
            seen.push((rows(&r), files, ext));
        }
        let (theirs, ours) = (&seen[0], &seen[1]);
        // 128 writes of 32 KiB, all moved, no reads.
        assert_eq!(ours.0, theirs.0, "inplace={inplace}");
        assert_eq!(ours.0[0], ("d".into(), 0, 128, 4 << 20, 0));
        // The donor is made and kept: allocated over the file's size (inplace=0), or
        // truncated to 0 after every write (inplace=1).
        assert_eq!(ours.1, theirs.1, "inplace={inplace}");
        let donor_len = if inplace == "0" { 4 << 20 } else { 0 };
        assert_eq!(
            ours.1,
            [("f".to_string(), 4 << 20), ("f.def".to_string(), donor_len)]
        );
        if let (Some(o), Some(t)) = (&ours.2, &theirs.2) {
            if inplace == "0" {
                // Whole-file swaps of unwritten extents: one extent, still unwritten.
                assert_eq!(o, t, "extents after the run");
                assert!(o.1.contains("unwritten"), "{o:?}");
            } else {
                // Each 32 KiB write's blocks come from a fresh donor allocation: the
                // file ends fragmented in both (fio: 124 extents in one run).
                assert!(o.0 > 16 && t.0 > 16, "extents: ours {o:?}, fio's {t:?}");
            }
        }
    }
    // The calls: one EXT4_IOC_MOVE_EXT per write, in both.
    if have_strace("fio_e4defrag::e4defrag_moves_each_write_with_its_donor_as_fio") {
        let args = [
            "--name=d",
            "--ioengine=e4defrag",
            dir.as_str(),
            "--filename=f",
            "--filesize=2m",
            "--size=2m",
            "--bs=64k",
            "--donorname=f.def",
            "--rw=randwrite",
        ];
        fs.clear();
        let theirs = move_ioctls(fs.path(), "fio", &args);
        fs.clear();
        let bin = crate::common::bin();
        let mut ha = vec!["fio", "--no-save"];
        ha.extend_from_slice(&args);
        let ours = move_ioctls(fs.path(), bin.to_str().unwrap(), &ha);
        assert_eq!((ours, theirs), (32, 32));
    }
}

#[test]
fn e4defrag_off_ext4_and_its_reads_fail_as_fio() {
    if !need_fio("fio_e4defrag::e4defrag_off_ext4_and_its_reads_fail_as_fio") {
        return;
    }
    // tmpfs has no EXT4_IOC_MOVE_EXT: the first write fails with ENOTTY.
    let shm = Path::new("/dev/shm");
    let on_tmpfs = std::process::Command::new("stat")
        .args(["-f", "-c", "%T", "/dev/shm"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "tmpfs");
    let cases: &[(&str, i64, &str)] = &[
        (
            "write",
            25,
            "func=td_io_queue, error=Inappropriate ioctl for device",
        ),
        // Reads fail with EINVAL without a call, wherever the file is.
        ("read", 22, "func=td_io_queue, error=Invalid argument"),
    ];
    for &(rw, errno, header) in cases {
        let d = if rw == "write" {
            if !on_tmpfs {
                eprintln!("skip: /dev/shm is not tmpfs; e4defrag's ENOTTY not compared");
                continue;
            }
            let d = shm.join(format!("hb-e4d-{}", std::process::id()));
            std::fs::create_dir_all(&d).unwrap();
            d
        } else {
            tmp("e4d-read")
        };
        let rwo = format!("--rw={rw}");
        let args = [
            "--name=d",
            "--ioengine=e4defrag",
            "--filename=f",
            "--filesize=1m",
            "--size=1m",
            "--bs=32k",
            "--donorname=f.def",
            rwo.as_str(),
        ];
        let mut seen = Vec::new();
        for tool in ["fio", "hostbench"] {
            let _ = std::fs::remove_file(d.join("f"));
            let _ = std::fs::remove_file(d.join("f.def"));
            let mut a = args.to_vec();
            a.push("--output-format=json");
            let r = if tool == "fio" {
                fio(&d, &a)
            } else {
                hb(&d, &a)
            };
            let n = if tool == "fio" {
                fio(&d, &args)
            } else {
                hb(&d, &args)
            };
            assert!(
                n.out.contains(header),
                "{tool} rw={rw}: no '{header}' in:\n{}",
                n.out
            );
            seen.push((r.code, rows(&r), listing(&d)));
        }
        assert_eq!(seen[0], seen[1], "rw={rw}");
        assert_eq!(seen[1].0, 1, "rw={rw}: exit 1, as fio");
        let (_, e, w, _, r) = seen[1].1[0].clone();
        assert_eq!((e, w + r), (errno, 1), "rw={rw}: one I/O issued, failed");
        std::fs::remove_dir_all(&d).unwrap();
    }
}

#[test]
fn e4defrag_without_donor_or_filesize_is_refused_clearly() {
    let d = tmp("e4d-bad");
    let base = [
        "--name=d",
        "--ioengine=e4defrag",
        "--filename=f",
        "--size=1m",
        "--rw=write",
    ];
    // No donorname: fio's init fails ("'donorname' options required", exit 1); hostbench
    // refuses the job before anything runs.
    let r = hb(&d, &base);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains("ioengine=e4defrag needs donorname="),
        "{}",
        r.err
    );
    assert!(!d.join("f").exists(), "nothing laid out");
    // No filesize with inplace=0: the donor's allocation has length 0, EINVAL in fio's
    // init (func=io_queue_init) and in hostbench's, which says how to fix it.
    let mut a = base.to_vec();
    a.push("--donorname=f.def");
    let r = hb(&d, &a);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains("io_queue_init") && r.err.contains("give filesize="),
        "{}",
        r.err
    );
    if need_fio("fio_e4defrag::e4defrag_without_donor_or_filesize_is_refused_clearly") {
        let f = fio(&d, &a);
        assert_eq!(f.code, 1);
        assert!(
            f.out.contains("err=22/file:engines/e4defrag.c") && f.out.contains("io_queue_init"),
            "{}",
            f.out
        );
        let f = fio(&d, &base);
        assert!(f.err.contains("'donorname' options required"), "{}", f.err);
    }
    // A symlink planted at the donor's name is not followed: nothing is written through it.
    std::fs::remove_file(d.join("f.def")).ok();
    let target = d.join("precious");
    std::fs::write(&target, b"keep").unwrap();
    std::os::unix::fs::symlink(&target, d.join("f.def")).unwrap();
    a.push("--filesize=1m");
    let r = hb(&d, &a);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("donor file"), "{}", r.err);
    assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    std::fs::remove_dir_all(d).unwrap();
}

/// fio's examples/e4defrag.fio with `directory` the test's ext4, 8 MiB instead of 100 MiB
/// and 1 s instead of 30 s.
const E4DEFRAG_FIO: &str = "[global]
ioengine=e4defrag
directory=DIR
nrfiles=1
filesize=8M
size=8M
bs=32k

[isolated-e4defrag]
buffered=0
donorname=file.def
filename=file1
inplace=0
rw=write

[e4defrag]
stonewall
time_based
runtime=1
ioengine=e4defrag
buffered=0
donorname=file.def
filename=file1
inplace=0
rw=write

[random-aio-32k]
ioengine=libaio
runtime=1
verify=md5
direct=1
bs=64k
iodepth=128
filename=file1
rw=randrw
numjobs=4
";

/// fio's examples/e4defrag2.fio with `directory` the test's ext4, 8 MiB instead of
/// 100 MiB, 1 s instead of 30 s, and a runtime for `e4defrag-fuzzer-4k-bis`, whose
/// `time_based` has none (fio turns it off with a warning; hostbench refuses it, exit 2).
const E4DEFRAG2_FIO: &str = "[global]
ioengine=e4defrag
group_reporting
directory=DIR
nrfiles=1
filesize=8M
size=8M
donorname=file.def
bs=32k

[parallel-e4defrag]
buffered=0
inplace=0
rw=write
numjobs=4

[e4defrag-1]
stonewall
inplace=0
rw=write
donorname=e4defrag-2

[e4defrag-2]
inplace=0
rw=write
donorname=e4defrag-1

[e4defrag-fuzzer-4k]
stonewall
inplace=1
bs=4k
rw=randwrite
filename=file
donorname=file.def

[e4defrag-fuzzer-4k-bis]
stonewall
continue_on_error=all
inplace=1
bs=4k
donorname=file3.def
filename=file3
time_based
runtime=1
rw=randwrite

[buffered-aio-32k]
continue_on_error=none
verify=md5
buffered=1
ioengine=libaio
iodepth=128
bs=32k
filename=file3
rw=randrw
runtime=1
time_based
numjobs=4

[direct-aio-32k]
continue_on_error=none
verify=md5
buffered=0
direct=1
ioengine=libaio
iodepth=128
bs=32k
filename=file3
rw=randrw
runtime=1
numjobs=4
";

/// What one tool's run left: its report, the files with their lengths, and the extent
/// count of file `frag` (`None` without filefrag).
type Left = (Ran, Vec<(String, u64)>, Option<usize>);

/// Runs `text` (its `DIR` the filesystem) through both tools: fio's then hostbench's.
fn both_on(fs: &SmallFs, text: &str, frag: &str) -> [Left; 2] {
    let job = fs.path().join("job.fio");
    let text = text.replace("DIR", &fs.path().display().to_string());
    let run = |tool: &str| {
        fs.clear();
        std::fs::write(&job, &text).unwrap();
        let a = ["--output-format=json", "job.fio"];
        let r = if tool == "fio" {
            fio(fs.path(), &a)
        } else {
            hb(fs.path(), &a)
        };
        std::fs::remove_file(&job).unwrap();
        let files = listing(fs.path());
        let n = extents(&fs.path().join(frag)).map(|e| e.0);
        (r, files, n)
    };
    [run("fio"), run("hostbench")]
}

#[test]
fn e4defrag_example_runs_as_fio() {
    if !need_fio("fio_e4defrag::e4defrag_example_runs_as_fio") {
        return;
    }
    let Some(fs) = SmallFs::new("e4d-ex1", 128) else {
        return;
    };
    let [(theirs, tf, _), (ours, of, _)] = both_on(&fs, E4DEFRAG_FIO, "file1");
    let (t, o) = (rows(&theirs), rows(&ours));
    assert_eq!(o.len(), 6, "{}", ours.out);
    // The isolated defrag: the whole file's 256 writes, all moved.
    assert_eq!(o[0], t[0]);
    assert_eq!(o[0], ("isolated-e4defrag".into(), 0, 256, 8 << 20, 0));
    // The timed one beside the verifying aio writers: no error, writes until the time.
    assert_eq!((o[1].0.as_str(), o[1].1), ("e4defrag", 0));
    assert!(o[1].2 > 0 && t[1].2 > 0);
    // Four writers of one file with verify=md5 overwrite each other's blocks (fio warns
    // so): their verifies fail, in both, in most runs (which ones is a race: not compared,
    // nor the exit code that follows from them, 4 for both in most runs).
    let names =
        |r: &[(String, i64, u64, u64, u64)]| r.iter().map(|j| j.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&o), names(&t));
    // The file and the donor, kept at their sizes (the verify state files the aio
    // writers leave, or not, follow the same race).
    let (of, tf) = (kept(of), kept(tf));
    assert_eq!(of, tf);
    assert_eq!(
        of,
        [
            ("file.def".to_string(), 8 << 20),
            ("file1".to_string(), 8 << 20)
        ]
    );
}

#[test]
fn e4defrag2_example_runs_as_fio() {
    if !need_fio("fio_e4defrag::e4defrag2_example_runs_as_fio") {
        return;
    }
    // 12 files of 8 MiB, most allocated and never written: a sparse image.
    let Some(fs) = SmallFs::new("e4d-ex2", 256) else {
        return;
    };
    let [(theirs, tf, tx), (ours, of, ox)] = both_on(&fs, E4DEFRAG2_FIO, "file");
    let (t, o) = (rows(&theirs), rows(&ours));
    // group_reporting: one entry per group.
    assert_eq!(o.len(), 4, "{}", ours.out);
    // Four clones sharing a donor; two jobs each the other's donor by name; the inplace
    // fuzzer over a file of its own: every write moved, in both.
    assert_eq!(o[..3], t[..3]);
    assert_eq!(o[0], ("parallel-e4defrag".into(), 0, 1024, 32 << 20, 0));
    assert_eq!(o[1], ("e4defrag-1".into(), 0, 512, 16 << 20, 0));
    assert_eq!(o[2], ("e4defrag-fuzzer-4k".into(), 0, 2048, 8 << 20, 0));
    // The timed fuzzer among the verifying aio writers of its file.
    assert_eq!(o[3].0, t[3].0);
    assert!(o[3].2 > 0 && t[3].2 > 0);
    // The same files, the donors among them: `e4defrag-1`/`e4defrag-2` allocated whole,
    // the inplace donors truncated to 0 (verify state files aside, as above).
    let (of, tf) = (kept(of), kept(tf));
    assert_eq!(of, tf);
    for (name, len) in [
        ("e4defrag-1", 8 << 20),
        ("e4defrag-2", 8 << 20),
        ("file.def", 0),
        ("file3.def", 0),
    ] {
        assert!(of.contains(&(name.to_string(), len)), "{name}: {of:?}");
    }
    // The last group's verifying writers of one file fail as in e4defrag.fio (a race;
    // exit 5 and 9 in one run).
    // The 4 KiB inplace fuzzer leaves its file in pieces in both (2024-2048 extents).
    if let (Some(a), Some(b)) = (ox, tx) {
        assert!(a > 256 && b > 256, "extents: ours {a}, fio's {b}");
    }
}
