//! Several files per clone (`nrfiles`, `filename=a:b:c`, `file_service_type`, `openfiles`),
//! side by side with the installed fio 3.33: the files made and their sizes, the I/O
//! counts, and (through strace) the order in which each clone opens, reads and closes its
//! files.
//!
//! Without fio (or strace) the comparisons are skipped with a message, unless
//! `HOSTBENCH_TEST_FIO` is set: then a missing fio fails the test.

use super::fio::tmp;
use super::fio_engines::have_strace;
use super::fio_files::{counts, doc, fio, hb};
use super::fio_seq::need_fio;
use crate::common;
use std::collections::BTreeMap;
use std::path::Path;

/// The regular files under `dir` with their lengths (scratch files of the test left out).
fn files(dir: &Path) -> BTreeMap<String, u64> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .filter(|(n, _)| !n.ends_with(".txt") && !n.ends_with(".db"))
        .collect()
}

/// What a job does to its files, in order, from an `strace -f -y` log: `O name` when a file
/// is opened by the job (read-only or read-write; layouts open write-only), `C name` when
/// that descriptor is closed, `S name` when it is fsynced, `name@KiB` for each pread64 or
/// pwrite64.
fn events(log: &str) -> Vec<String> {
    let mut open: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    let base = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    // A call other threads interrupted is split in two lines (`<unfinished ...>`, then
    // `<... call resumed>`): they are joined per thread first.
    let mut pending: BTreeMap<String, String> = BTreeMap::new();
    let mut joined = Vec::new();
    for l in log.lines() {
        let pid = l.split_whitespace().next().unwrap_or("").to_string();
        if let Some(head) = l.strip_suffix("<unfinished ...>") {
            pending.insert(pid, head.to_string());
        } else if let Some(i) = l.find(" resumed>") {
            let head = pending.remove(&pid).unwrap_or_default();
            joined.push(format!("{head}{}", &l[i + " resumed>".len()..]));
        } else {
            joined.push(l.to_string());
        }
    }
    // The descriptor's file is read from strace's `-y` annotation (`3</dir/j.0.0>`), never
    // from a table of numbers: fio's main process closes descriptors of its own whose numbers
    // a job's file has in the job's process (seen under load: a `close(3)` of fio's ended a
    // file's events early).
    let annotated = |rest: &str| -> Option<String> {
        let inner = rest.split_once('<')?.1;
        let path = inner.split_once('>')?.0;
        Some(base(path))
    };
    for l in &joined {
        if l.contains("openat(")
            && (l.contains("O_RDONLY") || l.contains("O_RDWR"))
            && !l.contains("O_DIRECTORY")
        {
            let Some(name) = l.split('"').nth(1) else {
                continue;
            };
            if l.rsplit("= ").next().is_some_and(|r| r.starts_with('-')) {
                continue;
            }
            let n = base(name);
            if n.starts_with("j.") {
                *open.entry(n.clone()).or_default() += 1;
                out.push(format!("O {n}"));
            }
        } else if let Some(rest) = l.split("fsync(").nth(1) {
            if let Some(n) = annotated(rest).filter(|n| open.contains_key(n)) {
                out.push(format!("S {n}"));
            }
        } else if let Some(rest) = l.split("close(").nth(1) {
            if let Some(n) = annotated(rest)
                && let Some(c) = open.get_mut(&n)
            {
                *c -= 1;
                if *c == 0 {
                    open.remove(&n);
                }
                out.push(format!("C {n}"));
            }
        } else if let Some(rest) = l
            .split("pread64(")
            .nth(1)
            .or_else(|| l.split("pwrite64(").nth(1))
            && let Some(n) = annotated(rest).filter(|n| open.contains_key(n))
        {
            let off: u64 = l[..l.rfind(')').unwrap()]
                .rsplit(", ")
                .next()
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            out.push(format!("{n}@{}", off >> 10));
        }
    }
    out
}

/// What a traced run gave: the file events, JSON counts, the files left.
type Traced = (Vec<String>, Vec<(u64, u64)>, BTreeMap<String, u64>);

/// `program` (fio, or hostbench's fio front-end) on `args` in a new directory under
/// strace.
fn traced(program: &str, args: &[&str]) -> Traced {
    let d = tmp("multi");
    let log = d.join("strace.txt");
    let mut c = std::process::Command::new("timeout");
    c.args(["-k", "5", "300", "strace", "-f", "-y", "-o"])
        .arg(&log)
        .args(["-e", "trace=openat,close,pread64,pwrite64,fsync"]);
    if program == "fio" {
        c.arg("fio");
    } else {
        c.arg(common::bin())
            .args(["fio", "--no-save", "--disk_util=0"])
            .env("HOSTBENCH_RESULTS_DB", d.join("r.db"));
    }
    let o = c
        .args(args)
        .arg("--output-format=json")
        .current_dir(&d)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success() || args.contains(&"--rw=read"),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let ev = events(&std::fs::read_to_string(&log).unwrap());
    let f = files(&d);
    std::fs::remove_dir_all(&d).unwrap();
    (ev, counts(&out), f)
}

#[test]
fn several_files_are_opened_read_and_closed_as_fio() {
    let cases: &[&[&str]] = &[
        // size divided among the files: 34133 bytes each, 8 whole blocks of each read.
        &["--nrfiles=3", "--size=100k"],
        &[
            "--nrfiles=3",
            "--size=48k",
            "--file_service_type=roundrobin:2",
        ],
        &[
            "--nrfiles=3",
            "--size=48k",
            "--file_service_type=sequential",
        ],
        // At most two open: the first two until done, then the next two.
        &["--nrfiles=4", "--size=64k", "--openfiles=2"],
        // A second loop opens them again.
        &["--nrfiles=2", "--size=32k", "--loops=2"],
        &["--nrfiles=2", "--size=32k", "--ioengine=sync"],
        &["--nrfiles=2", "--filesize=16k", "--size=8k"],
        // end_fsync syncs every open file, in order.
        &["--nrfiles=2", "--size=32k", "--rw=write", "--end_fsync=1"],
    ];
    let peer = need_fio("several_files_are_opened_read_and_closed_as_fio");
    if !have_strace("several_files_are_opened_read_and_closed_as_fio") {
        return;
    }
    for case in cases {
        let mut args = vec!["--name=j", "--bs=4k", "--rw=read", "--ioengine=psync"];
        args.extend_from_slice(case);
        let ours = traced("hostbench", &args);
        assert!(!ours.0.is_empty(), "{case:?}: no events");
        if peer {
            let theirs = traced("fio", &args);
            assert_eq!(ours, theirs, "{case:?}");
        }
    }
    // Without fio, the round robin's order as fio 3.33 gave it (measured).
    let (ev, n, f) = traced(
        "hostbench",
        &[
            "--name=j",
            "--bs=4k",
            "--rw=read",
            "--nrfiles=3",
            "--size=24k",
        ],
    );
    assert_eq!(
        ev.join(" "),
        "O j.0.0 j.0.0@0 O j.0.1 j.0.1@0 O j.0.2 j.0.2@0 j.0.0@4 j.0.1@4 j.0.2@4 \
         C j.0.0 C j.0.1 C j.0.2"
    );
    assert_eq!(n, [(6, 0)]);
    assert_eq!(f.values().copied().collect::<Vec<_>>(), [8192; 3]);
}

#[test]
fn every_engine_runs_several_files_as_fio_counts_them() {
    let peer = need_fio("every_engine_runs_several_files_as_fio_counts_them");
    let cases: &[&[&str]] = &[
        &["--ioengine=psync", "--rw=randread"],
        &["--ioengine=sync", "--rw=write"],
        &["--ioengine=mmap", "--rw=randwrite"],
        &["--ioengine=libaio", "--iodepth=4", "--rw=read"],
        &["--ioengine=io_uring", "--iodepth=4", "--rw=randrw"],
        &["--ioengine=null", "--rw=randread"],
        &[
            "--ioengine=psync",
            "--rw=read",
            "--file_service_type=random",
        ],
        &[
            "--ioengine=psync",
            "--rw=read",
            "--file_service_type=zipf:1.2",
        ],
        &[
            "--ioengine=libaio",
            "--iodepth=8",
            "--rw=randread",
            "--openfiles=1",
        ],
    ];
    for case in cases {
        let run = |prog: &str| {
            let d = tmp("multi-eng");
            let mut args = vec![
                "--name=j",
                "--bs=4k",
                "--nrfiles=3",
                "--size=192k",
                "--output-format=json",
            ];
            args.extend_from_slice(case);
            let r = if prog == "fio" {
                fio(&d, &args)
            } else {
                hb(&d, &args)
            };
            assert_eq!(r.code, 0, "{prog} {case:?}: {}", r.err);
            let c = counts(&r.out);
            let f = files(&d);
            std::fs::remove_dir_all(&d).unwrap();
            (c, f)
        };
        let (c, f) = run("hostbench");
        let total: u64 = c.iter().map(|(r, w)| r + w).sum();
        assert_eq!(total, 48, "{case:?}: {c:?}");
        if !case.contains(&"--ioengine=null") {
            assert_eq!(f.len(), 3, "{case:?}: {f:?}");
        }
        if peer {
            let (fc, ff) = run("fio");
            if !case.contains(&"--rw=randrw") {
                assert_eq!(c, fc, "{case:?}");
            }
            assert_eq!(f, ff, "{case:?}");
        }
    }
}

#[test]
fn filename_lists_are_shared_and_escaped_as_fio() {
    let peer = need_fio("filename_lists_are_shared_and_escaped_as_fio");
    let run = |prog: &str, args: &[&str]| {
        let d = tmp("multi-list");
        let r = if prog == "fio" {
            fio(&d, args)
        } else {
            hb(&d, args)
        };
        assert_eq!(r.code, 0, "{prog} {args:?}: {}", r.err);
        let c = counts(&r.out);
        let f = files(&d);
        std::fs::remove_dir_all(&d).unwrap();
        (c, f)
    };
    let args = [
        "--name=j",
        r"--filename=fa:fb:f\:c",
        "--size=96k",
        "--rw=write",
        "--numjobs=2",
        "--output-format=json",
    ];
    let ours = run("hostbench", &args);
    assert_eq!(ours.0, [(0, 24), (0, 24)]);
    assert_eq!(
        ours.1.into_iter().collect::<Vec<_>>(),
        [
            ("f:c".to_string(), 32768),
            ("fa".to_string(), 32768),
            ("fb".to_string(), 32768)
        ]
    );
    // $filenum numbers each clone's files.
    let fmt = [
        "--name=j",
        "--nrfiles=2",
        "--numjobs=2",
        "--size=16k",
        "--filename_format=$jobname-$jobnum-$filenum",
        "--output-format=json",
    ];
    let ours = run("hostbench", &fmt);
    assert_eq!(
        ours.1.keys().cloned().collect::<Vec<_>>(),
        ["j-0-0", "j-0-1", "j-1-0", "j-1-1"]
    );
    if peer {
        assert_eq!(run("hostbench", &args), run("fio", &args));
        assert_eq!(run("hostbench", &fmt), run("fio", &fmt));
    }
}

#[test]
fn several_files_bad_values_are_one_clear_line() {
    let d = tmp("multi-bad");
    for (args, want) in [
        (
            &["--name=j", "--nrfiles=3", "--rw=read"][..],
            "need a size to divide",
        ),
        (
            &["--name=j", "--nrfiles=4", "--size=8k"][..],
            "less than the block size",
        ),
        (
            &[
                "--name=j",
                "--size=8k",
                "--loops=2",
                "--unlink_each_loop=1",
                "--ioengine=io_uring",
                "--registerfiles=1",
            ][..],
            "registerfiles with unlink_each_loop",
        ),
        (
            &[
                "--name=j",
                "--nrfiles=2",
                "--size=8k",
                "--file_service_type=pareto:2",
            ][..],
            "pareto input out of range",
        ),
    ] {
        let r = hb(&d, args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.err);
        assert!(r.err.contains(want), "{args:?}: {}", r.err);
        assert_eq!(r.err.trim().lines().count(), 1, "{args:?}: {}", r.err);
    }
    assert!(files(&d).is_empty(), "nothing laid out: {:?}", files(&d));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn unlink_each_loop_removes_the_files_between_passes_as_fio() {
    let peer = need_fio("unlink_each_loop_removes_the_files_between_passes_as_fio");
    if !have_strace("unlink_each_loop_removes_the_files_between_passes_as_fio") {
        return;
    }
    // A writer opens its file again (created anew) for each pass; the file of the last
    // pass stays.
    for extra in [
        &["--nrfiles=1"][..],
        &["--nrfiles=2", "--ioengine=libaio"][..],
    ] {
        let mut args = vec![
            "--name=j",
            "--bs=4k",
            "--rw=write",
            "--size=16k",
            "--loops=2",
            "--unlink_each_loop=1",
            "--ioengine=psync",
        ];
        args.extend_from_slice(extra);
        let ours = traced("hostbench", &args);
        let opens = ours.0.iter().filter(|e| e.starts_with("O ")).count();
        assert_eq!(opens, 2 * ours.2.len(), "{extra:?}: {:?}", ours.0);
        assert_eq!(ours.1, [(0, 8)]);
        if peer {
            let theirs = traced("fio", &args);
            if extra.len() == 1 {
                assert_eq!(ours, theirs, "{extra:?}");
            } else {
                assert_eq!((&ours.1, &ours.2), (&theirs.1, &theirs.2), "{extra:?}");
            }
        }
    }
    // A reader finds its file gone at the second pass: err=2, as fio.
    let run = |prog: &str| {
        let d = tmp("multi-uel");
        let args = [
            "--name=j",
            "--bs=4k",
            "--rw=read",
            "--size=16k",
            "--loops=2",
            "--unlink_each_loop=1",
        ];
        let r = if prog == "fio" {
            fio(&d, &args)
        } else {
            hb(&d, &args)
        };
        std::fs::remove_dir_all(&d).unwrap();
        let line = r
            .out
            .lines()
            .find(|l| l.starts_with("j:") && l.contains("err="))
            .map(|l| {
                l.split(": pid")
                    .next()
                    .unwrap()
                    .replace("file:filesetup.c:805, ", "")
            });
        let issued = r
            .out
            .lines()
            .find(|l| l.contains("issued rwts"))
            .map(str::trim)
            .map(String::from);
        (r.code, line, issued)
    };
    let ours = run("hostbench");
    assert_eq!(ours.0, 1);
    assert_eq!(
        ours.1.as_deref(),
        Some("j: (groupid=0, jobs=1): err= 2 (func=open(j.0.0), error=No such file or directory)")
    );
    if peer {
        assert_eq!(ours, run("fio"));
    }
}

/// A JSON job entry of a file engine's run: name, reads, bytes read, clat/lat/slat
/// sample counts, bandwidth samples, and the latency distribution's total percent.
type FileOpEntry = (String, u64, u64, u64, u64, u64, u64, u64);

fn file_op_entries(out: &str) -> Vec<FileOpEntry> {
    doc(out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let r = &j["read"];
            let n = |k: &str| r[k]["N"].as_u64().unwrap_or(0);
            let dist: f64 = ["latency_ns", "latency_us", "latency_ms"]
                .iter()
                .flat_map(|k| j[k].as_object().unwrap().values())
                .map(|v| v.as_f64().unwrap())
                .sum();
            (
                j["jobname"].as_str().unwrap().to_string(),
                r["total_ios"].as_u64().unwrap(),
                r["io_bytes"].as_u64().unwrap(),
                n("clat_ns"),
                n("lat_ns"),
                n("slat_ns"),
                r["bw_samples"].as_u64().unwrap_or(0),
                dist as u64,
            )
        })
        .collect()
}

#[test]
fn file_engines_create_stat_and_delete_files_as_fio() {
    let peer = need_fio("file_engines_create_stat_and_delete_files_as_fio");
    // fio 3.33's examples, adapted in their file counts (31250 and 200 files per job here
    // 60 and 40) when they are there; the same jobs on the command line otherwise.
    let ex = Path::new("/tmp/fioex/examples");
    let mut cases: Vec<(String, Vec<String>)> = Vec::new();
    for name in [
        "filecreate-ioengine.fio",
        "filestat-ioengine.fio",
        "filedelete-ioengine.fio",
    ] {
        match std::fs::read_to_string(ex.join(name)) {
            Ok(t) => {
                let t = t
                    .replace("nrfiles=31250", "nrfiles=60")
                    .replace("nrfiles=200", "nrfiles=40");
                cases.push((name.to_string(), vec![t]));
            }
            Err(_) => eprintln!(
                "skip: {} is not there; its job runs from the command line",
                name
            ),
        }
    }
    for (eng, extra) in [
        ("filecreate", "--create_on_open=1"),
        ("filestat", "--stat_type=lstat"),
        ("filedelete", "--unlink=0"),
    ] {
        cases.push((
            eng.to_string(),
            [
                "--name=t0",
                &format!("--ioengine={eng}"),
                "--nrfiles=30",
                "--filesize=4k",
                "--numjobs=2",
                extra,
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        ));
    }
    for (name, spec) in &cases {
        let run = |prog: &str| {
            let d = tmp("multi-fileops");
            let mut args: Vec<String> = spec.clone();
            if name.ends_with(".fio") {
                std::fs::write(d.join("job.fio"), &spec[0]).unwrap();
                args = vec!["job.fio".into()];
            }
            args.push("--output-format=json,normal".into());
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let r = if prog == "fio" {
                fio(&d, &a)
            } else {
                hb(&d, &a)
            };
            assert_eq!(r.code, 0, "{prog} {name}: {}", r.err);
            let f = files(&d);
            std::fs::remove_dir_all(&d).unwrap();
            let json_end = r.out.rfind("\n}").map_or(r.out.len(), |i| i + 2);
            let normal = &r.out[json_end..];
            // The file engines' blocks: clat only, no lat/slat, no distribution, no bw.
            let lines = |pat: &str| normal.lines().filter(|l| l.contains(pat)).count();
            (
                file_op_entries(&r.out[..json_end]),
                f.len(),
                f.values()
                    .copied()
                    .collect::<std::collections::BTreeSet<_>>(),
                (
                    lines("clat ("),
                    lines(" lat ("),
                    lines("lat (usec)   :"),
                    lines("bw ("),
                    lines("slat ("),
                ),
            )
        };
        let ours = run("hostbench");
        for e in &ours.0 {
            assert!(
                e.1 > 0 && e.1 == e.3,
                "{name}: one clat sample per file: {e:?}"
            );
            assert_eq!((e.4, e.5, e.6, e.7), (0, 0, 0, 0), "{name}: {e:?}");
        }
        if peer {
            let theirs = run("fio");
            assert_eq!(ours, theirs, "{name}");
        }
    }
}

/// A small ext4 filesystem of its own, loop-mounted under a new directory (root only):
/// the mount point, or why not (the test then prints it and skips).
struct SmallFs {
    dir: std::path::PathBuf,
    mnt: std::path::PathBuf,
}

impl SmallFs {
    fn new(tag: &str) -> Result<SmallFs, String> {
        let dir = tmp(tag);
        let img = dir.join("img");
        let mnt = dir.join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let f = std::fs::File::create(&img).unwrap();
        f.set_len(16 << 20).unwrap();
        let run = |prog: &str, args: &[&std::ffi::OsStr]| -> Result<(), String> {
            match std::process::Command::new(prog).args(args).output() {
                Ok(o) if o.status.success() => Ok(()),
                Ok(o) => Err(format!(
                    "{prog} refused: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                )),
                Err(e) => Err(format!("{prog}: {e}")),
            }
        };
        let made = run(
            "mkfs.ext4",
            &["-q".as_ref(), "-F".as_ref(), img.as_os_str()],
        )
        .and_then(|()| {
            run(
                "mount",
                &[
                    "-o".as_ref(),
                    "loop".as_ref(),
                    img.as_os_str(),
                    mnt.as_os_str(),
                ],
            )
        });
        match made {
            Ok(()) => Ok(SmallFs { dir, mnt }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.mnt).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// (error, writes, bytes written, reads, bytes read) of each JSON job entry.
fn rw_entries(out: &str) -> Vec<(i64, u64, u64, u64, u64)> {
    doc(out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["error"].as_i64().unwrap(),
                j["write"]["total_ios"].as_u64().unwrap(),
                j["write"]["io_bytes"].as_u64().unwrap(),
                j["read"]["total_ios"].as_u64().unwrap(),
                j["read"]["io_bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn fill_device_writes_until_the_filesystem_is_full_as_fio() {
    let peer = need_fio("fill_device_writes_until_the_filesystem_is_full_as_fio");
    // fio's surface-scan.fio (its options, on a file of a 16 MiB filesystem): a write
    // phase that fills the filesystem, then, stonewalled, a verify phase whose file the
    // first phase made (sized when it starts); that phase also as a run of its own.
    let global = [
        "--thread",
        "--bs=64k",
        "--direct=1",
        "--ioengine=sync",
        "--verify=meta",
        "--verify_pattern=0xaa555aa5",
        "--verify_interval=512",
        "--output-format=json",
    ];
    let write = [
        "--name=write-phase",
        "--filename=datafile.tmp",
        "--rw=write",
        "--fill_device=1",
        "--do_verify=0",
    ];
    let verify = [
        "--name=verify-phase",
        "--stonewall",
        "--create_serialize=0",
        "--filename=datafile.tmp",
        "--rw=read",
        "--do_verify=1",
    ];
    let run = |prog: &str, engine: Option<&str>| -> Option<(Vec<_>, Vec<_>, u64)> {
        let fs = match SmallFs::new("fill") {
            Ok(fs) => fs,
            Err(why) => {
                eprintln!("skip: no small filesystem of our own to fill ({why})");
                return None;
            }
        };
        let mut both: Vec<&str> = global.to_vec();
        if let Some(e) = engine {
            both.push(e);
        }
        both.extend_from_slice(&write);
        both.extend_from_slice(&verify);
        let mut alone = global.to_vec();
        alone.extend_from_slice(&verify);
        let go = |args: &[&str]| {
            let r = if prog == "fio" {
                fio(&fs.mnt, args)
            } else {
                hb(&fs.mnt, args)
            };
            assert_eq!(r.code, 0, "{prog} {args:?}: {}", r.err);
            rw_entries(&r.out)
        };
        // Both phases in one run, as the example is; then the verify phase again alone.
        let phases = go(&both);
        assert_eq!(phases.len(), 2, "{prog}: {phases:?}");
        let read = go(&alone);
        assert_eq!(read[..], phases[1..], "{prog}: the verify phase alone");
        let len = std::fs::metadata(fs.mnt.join("datafile.tmp"))
            .unwrap()
            .len();
        Some((phases[..1].to_vec(), read, len))
    };
    let Some(ours) = run("hostbench", None) else {
        return;
    };
    // Written until ENOSPC, no error; the file is what was written; all of it verifies.
    let (w, r, len) = &ours;
    assert_eq!(w.len(), 1);
    assert_eq!((w[0].0, w[0].2), (0, *len), "{ours:?}");
    assert!(*len > 8 << 20, "most of the 16 MiB filled: {len}");
    assert_eq!(r[0], (0, 0, 0, len / 65536, *len), "{ours:?}");
    // A queue engine stops there too.
    let aio = run("hostbench", Some("--ioengine=libaio")).unwrap();
    assert_eq!((aio.0[0].0, aio.0[0].2), (0, aio.2), "{aio:?}");
    if peer {
        assert_eq!(Some(ours), run("fio", None));
    }
    // Not for a job that does not write.
    let d = tmp("fill-bad");
    let r = hb(&d, &["--name=j", "--rw=read", "--fill_device=1"]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("fill_device writes until"), "{}", r.err);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn laying_out_several_files_is_one_line_as_fio() {
    let peer = need_fio("laying_out_several_files_is_one_line_as_fio");
    let line = |prog: &str, args: &[&str]| {
        let d = tmp("multi-layout");
        let r = if prog == "fio" {
            fio(&d, args)
        } else {
            hb(&d, args)
        };
        assert_eq!(r.code, 0, "{prog} {args:?}: {}", r.err);
        std::fs::remove_dir_all(&d).unwrap();
        format!("{}\n{}", r.out, r.err)
            .lines()
            .filter(|l| l.contains("Laying out"))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    for (args, want) in [
        (
            &["--name=j", "--nrfiles=3", "--size=3m", "--rw=read"][..],
            "j: Laying out IO files (3 files / total 3MiB)",
        ),
        (
            &[
                "--name=k",
                "--filename=a:b",
                "--size=3m",
                "--rw=read",
                "--numjobs=2",
            ][..],
            "k: Laying out IO files (2 files / total 3MiB)",
        ),
    ] {
        let ours = line("hostbench", args);
        assert_eq!(ours, [want], "{args:?}");
        if peer {
            assert_eq!(ours, line("fio", args), "{args:?}");
        }
    }
}

#[test]
fn a_layout_refused_at_a_later_file_leaves_none_it_made() {
    // A symlink at the second file's name is refused (exit 2); the first file, laid out
    // a moment before, once stayed behind.
    let d = tmp("multi-layout-undo");
    let victim = d.join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    let work = d.join("w");
    std::fs::create_dir_all(&work).unwrap();
    std::os::unix::fs::symlink(&victim, work.join("j.0.1")).unwrap();
    let r = hb(
        &work,
        &[
            "--name=j",
            "--rw=write",
            "--bs=4k",
            "--size=32k",
            "--nrfiles=2",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        !work.join("j.0.0").exists(),
        "the first file was left: {}",
        r.err
    );
    assert!(std::fs::read(&victim).unwrap() == b"precious");
    // A file that was there before is never removed.
    std::fs::write(work.join("j.0.0"), vec![7u8; 16384]).unwrap();
    let r = hb(
        &work,
        &[
            "--name=j",
            "--rw=write",
            "--bs=4k",
            "--size=32k",
            "--nrfiles=2",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert_eq!(std::fs::metadata(work.join("j.0.0")).unwrap().len(), 16384);
    std::fs::remove_dir_all(&d).unwrap();
}

/// fio's main process closing a descriptor of its own that has the number of a job's file
/// (another process) must not end that file's events (CI saw it under load).
#[test]
fn a_close_in_another_process_does_not_end_a_files_events() {
    let log = "\
200 openat(AT_FDCWD, \"j.0.0\", O_RDONLY) = 3</d/j.0.0>
200 pread64(3</d/j.0.0>, \"\"..., 4096, 0) = 4096
100 close(3</proc/diskstats>) = 0
200 pread64(3</d/j.0.0>, \"\"..., 4096, 4096) = 4096
200 close(3</d/j.0.0>) = 0
";
    assert_eq!(events(log), ["O j.0.0", "j.0.0@0", "j.0.0@4", "C j.0.0"]);
}
