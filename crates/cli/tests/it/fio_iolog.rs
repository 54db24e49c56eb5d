//! fio's I/O logs (`write_iolog`) and their replay (`read_iolog`, `replay_*`), compared with
//! the installed fio 3.33: the logs each writes for the same job, and each replaying the
//! other's log, I/O by I/O through strace (the calls on the replayed file, in order).

use super::fio::{s, tmp};
use super::fio_engines::have_strace;
use super::fio_files::{doc, fio, hb};
use super::fio_seq::need_fio;
use crate::common;
use std::path::Path;

/// A log's lines without their times (version 3's first field).
fn untimed(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            if l.starts_with("fio version") {
                return l.to_string();
            }
            let (t, rest) = l.split_once(' ').expect("a timed line");
            assert!(t.parse::<u64>().is_ok(), "not a time: {l}");
            rest.to_string()
        })
        .collect()
}

/// The times of a version 3 log's lines, in order.
fn times(text: &str) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter(|l| !l.starts_with("fio version"))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

/// What a replay of `log` must do to its file: its reads, writes and syncs in order.
fn wanted(log: &str) -> Vec<String> {
    untimed(log)
        .iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            match f.as_slice() {
                [_, a @ ("read" | "write"), off, len] => Some(format!("{a} {off} {len}")),
                [_, a @ ("sync" | "datasync"), _, _] => Some(a.to_string()),
                _ => None,
            }
        })
        .collect()
}

/// strace's view of a program: its `-y` goes first (before the program name).
pub(super) fn traced(dir: &Path, hostbench: bool, args: &[&str], file: &str) -> Vec<String> {
    if hostbench {
        let bin = s(&common::bin());
        let mut a = vec!["fio"];
        a.extend_from_slice(args);
        a.extend(["--no-save", "--disk_util=0"]);
        calls_on_y(dir, &bin, &a, file)
    } else {
        calls_on_y(dir, "fio", args, file)
    }
}

/// [`calls_on`] with strace's `-y` (file names in the trace).
fn calls_on_y(dir: &Path, program: &str, args: &[&str], file: &str) -> Vec<String> {
    let logs = dir.join("sty");
    let _ = std::fs::remove_dir_all(&logs);
    std::fs::create_dir(&logs).unwrap();
    let o = std::process::Command::new("strace")
        .args([
            "-ff",
            "-qq",
            "-y",
            "-e",
            "trace=pread64,pwrite64,fsync,fdatasync",
            "-o",
        ])
        .arg(logs.join("t"))
        .arg(program)
        .args(args)
        .current_dir(dir)
        .env("HOSTBENCH_RESULTS_DB", dir.join("r.db"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut texts: Vec<(String, String)> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (s(&p), std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    texts.sort();
    let tag = format!("/{file}>");
    let mut out = Vec::new();
    for (_, text) in texts {
        for l in text.lines().filter(|l| l.contains(&tag)) {
            let (name, rest) = l.split_once('(').unwrap();
            let args = rest.rsplit_once(')').unwrap().0;
            match name {
                "pread64" | "pwrite64" => {
                    let mut it = args.rsplit(", ");
                    let off = it.next().unwrap();
                    let len = it.next().unwrap();
                    let what = if name == "pread64" { "read" } else { "write" };
                    out.push(format!("{what} {off} {len}"));
                }
                "fdatasync" => out.push("datasync".into()),
                _ => out.push("sync".into()),
            }
        }
    }
    out
}

#[test]
fn write_iolog_writes_fios_lines() {
    let d = tmp("iolog-write");
    let f = s(&d.join("f"));
    for extra in [
        // (fsync=4: 16 writes, no sync after the last; fsync=5: the sync after the 15th.)
        &["--rw=write", "--fsync=4"][..],
        &["--rw=write", "--fsync=5"][..],
        &["--rw=read"][..],
        &["--rw=write", "--numjobs=2"][..],
        &["--rw=randrw", "--fdatasync=2"][..],
        // fio logs each sync_file_range (at its I/O unit's last offset, length 0).
        &["--rw=write", "--sync_file_range=write:2"][..],
        // Several files: each added, opened when first used, closed in order.
        &["--rw=write", "--nrfiles=2"][..],
        &[
            "--rw=write",
            "--nrfiles=3",
            "--openfiles=1",
            "--file_service_type=sequential",
        ][..],
        &["--rw=read", "--nrfiles=3", "--file_service_type=roundrobin"][..],
    ] {
        let mut logs = Vec::new();
        for ours in [true, false] {
            if !ours && !need_fio("write_iolog_writes_fios_lines") {
                return;
            }
            let _ = std::fs::remove_file(d.join("w.log"));
            std::fs::write(&f, vec![0u8; 64 << 10]).unwrap();
            let several = extra.iter().any(|a| a.starts_with("--nrfiles"));
            let (fname, size) = if several {
                ("--thread".to_string(), "--size=48k")
            } else {
                (format!("--filename={f}"), "--size=64k")
            };
            let a = [
                &[
                    "--name=j",
                    &fname,
                    size,
                    "--bs=4k",
                    "--ioengine=psync",
                    "--write_iolog=w.log",
                    "--output-format=json",
                ][..],
                extra,
            ]
            .concat();
            let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
            assert_eq!(r.code, 0, "{extra:?} {ours}: {}", r.err);
            let text = std::fs::read_to_string(d.join("w.log")).unwrap();
            let t = times(&text);
            let clones = if extra.contains(&"--numjobs=2") { 2 } else { 1 };
            if clones == 1 {
                assert!(t.windows(2).all(|w| w[0] <= w[1]), "{ours}: {text}");
            }
            logs.push(text);
        }
        let (ours, theirs) = (untimed(&logs[0]), untimed(&logs[1]));
        if extra[0] == "--rw=randrw" {
            // Other random draws: the same kinds of lines, and each block once.
            let shape = |v: &[String]| {
                let mut offs: Vec<u64> = v
                    .iter()
                    .filter_map(|l| {
                        let f: Vec<&str> = l.split(' ').collect();
                        matches!(f[1], "read" | "write").then(|| f[2].parse().unwrap())
                    })
                    .collect();
                offs.sort_unstable();
                let ends = (v[..3].to_vec(), v.last().cloned());
                (offs, ends)
            };
            assert_eq!(shape(&ours), shape(&theirs), "{extra:?}");
            assert!(ours.iter().any(|l| l.contains(" datasync ")), "{ours:?}");
            assert!(
                theirs.iter().any(|l| l.contains(" datasync ")),
                "{theirs:?}"
            );
        } else if extra.contains(&"--numjobs=2") {
            // Two clones append to one log (interleaved as they run).
            let (mut a, mut b) = (ours.clone(), theirs.clone());
            a.sort();
            b.sort();
            assert_eq!(a, b, "{extra:?}");
        } else {
            assert_eq!(ours, theirs, "{extra:?}");
        }
    }
}

#[test]
fn each_replays_the_others_log_io_for_io() {
    if !need_fio("each_replays_the_others_log_io_for_io")
        || !have_strace("each_replays_the_others_log_io_for_io")
    {
        return;
    }
    let d = tmp("iolog-replay");
    let f = s(&d.join("f"));
    let job = |log: &str| {
        vec![
            "--name=j".to_string(),
            format!("--filename={f}"),
            "--size=64k".into(),
            "--bs=4k".into(),
            "--rw=randrw".into(),
            "--rwmixread=25".into(),
            "--fsync=3".into(),
            "--ioengine=psync".into(),
            format!("--write_iolog={log}"),
            "--output-format=json".into(),
        ]
    };
    let mut logs = Vec::new();
    for (ours, log) in [(true, "hb.log"), (false, "fio.log")] {
        std::fs::write(&f, vec![0u8; 64 << 10]).unwrap();
        let a = job(log);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
        assert_eq!(r.code, 0, "{}", r.err);
        logs.push((log, std::fs::read_to_string(d.join(log)).unwrap()));
    }
    for (log, text) in &logs {
        let want = wanted(text);
        assert!(want.iter().any(|w| w == "sync"), "{log}: {text}");
        for ours in [true, false] {
            std::fs::write(&f, vec![0u8; 64 << 10]).unwrap();
            let a = [
                "--name=j",
                &format!("--read_iolog={log}"),
                &format!("--filename={f}"),
                "--ioengine=psync",
                "--output-format=json",
            ];
            let got = traced(&d, ours, &a, "f");
            assert_eq!(
                got,
                want,
                "{log} replayed by {}",
                if ours { "hostbench" } else { "fio" }
            );
            let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
            assert_eq!(r.code, 0, "{}", r.err);
            let j = &doc(&r.out)["jobs"][0];
            let n = |w: &str| want.iter().filter(|x| x.starts_with(w)).count() as u64;
            assert_eq!(j["read"]["total_ios"], n("read "), "{log} {ours}");
            assert_eq!(j["write"]["total_ios"], n("write "), "{log} {ours}");
            assert_eq!(j["sync"]["total_ios"], n("sync"), "{log} {ours}");
            assert_eq!(j["write"]["io_bytes"], n("write ") * 4096, "{log} {ours}");
            // A queue engine replays the same I/Os (its calls are not pread/pwrite).
            let a = [&a[..], &["--ioengine=libaio", "--iodepth=4"][..]].concat();
            let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
            assert_eq!(r.code, 0, "{}", r.err);
            let j = &doc(&r.out)["jobs"][0];
            assert_eq!(j["read"]["total_ios"], n("read "), "libaio {log} {ours}");
            assert_eq!(j["write"]["total_ios"], n("write "), "libaio {log} {ours}");
            assert_eq!(j["sync"]["total_ios"], n("sync"), "libaio {log} {ours}");
        }
    }
}

#[test]
fn replay_options_place_the_ios_as_fios() {
    if !need_fio("replay_options_place_the_ios_as_fios")
        || !have_strace("replay_options_place_the_ios_as_fios")
    {
        return;
    }
    let d = tmp("iolog-opts");
    // A version 2 log of a file that is not the job's: redirected; its trim dropped (fio
    // 3.33 does not replay trims from a text log), its offsets scaled and aligned.
    std::fs::write(
        d.join("v2.log"),
        "fio version 2 iolog\n/nowhere/zz add\n/nowhere/zz open\n/nowhere/zz write 12288 4096\n\
         /nowhere/zz trim 0 4096\n/nowhere/zz read 9000 4096\n/nowhere/zz datasync 0 0\n\
         /nowhere/zz write 70000 512\n/nowhere/zz close\n",
    )
    .unwrap();
    std::fs::write(
        d.join("v3.log"),
        "fio version 3 iolog\n5 g add\n9 g open\n10 g write 8192 4096\n20 g read 8192 4096\n\
         25 g sync 0 0\n30 g write 0 8192\n40 g close\n",
    )
    .unwrap();
    for (log, opts, want) in [
        (
            "v2.log",
            &[
                "--replay_redirect=g",
                "--replay_scale=2",
                "--replay_align=4096",
            ][..],
            &[
                "write 4096 4096",
                "read 4096 4096",
                "datasync",
                "write 32768 512",
            ][..],
        ),
        (
            "v3.log",
            &["--replay_skip=write", "--replay_no_stall=1"][..],
            &["write 8192 4096", "read 8192 4096", "sync", "write 0 8192"][..],
        ),
        (
            "v3.log",
            &["--replay_align=8192", "--replay_time_scale=50"][..],
            &["write 8192 4096", "read 8192 4096", "sync", "write 0 8192"][..],
        ),
    ] {
        for ours in [true, false] {
            let _ = std::fs::remove_file(d.join("g"));
            let rl = format!("--read_iolog={log}");
            let a = [
                &["--name=j", &rl, "--ioengine=psync", "--output-format=json"][..],
                opts,
            ]
            .concat();
            let got = traced(&d, ours, &a, "g");
            assert_eq!(got, want, "{log} {opts:?} {ours}");
            // Nothing was made but the file written.
            assert!(!Path::new("/nowhere/zz").exists());
        }
    }
}

#[test]
fn replay_keeps_the_logs_time() {
    let d = tmp("iolog-time");
    // Five reads 100 ms apart; the file is the job's own.
    let mut log = String::from("fio version 3 iolog\n1 f add\n2 f open\n");
    for i in 0..5 {
        log.push_str(&format!("{} f read {} 4096\n", 10 + i * 100_000, i * 4096));
    }
    std::fs::write(d.join("t.log"), log).unwrap();
    std::fs::write(d.join("f"), vec![0u8; 64 << 10]).unwrap();
    let peer = need_fio("replay_keeps_the_logs_time");
    for (opts, lo, hi) in [
        (&[][..], 390, 1500),
        (&["--replay_time_scale=200"][..], 190, 390),
        (&["--replay_no_stall=1"][..], 0, 150),
    ] {
        for ours in [true, false] {
            if !ours && !peer {
                continue;
            }
            let a = [
                &[
                    "--name=j",
                    "--read_iolog=t.log",
                    "--ioengine=psync",
                    "--output-format=json",
                ][..],
                opts,
            ]
            .concat();
            let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
            assert_eq!(r.code, 0, "{}", r.err);
            let j = &doc(&r.out)["jobs"][0];
            assert_eq!(j["read"]["total_ios"], 5);
            let ms = j["job_runtime"].as_u64().unwrap();
            assert!(
                (lo..hi).contains(&ms),
                "{opts:?} {}: {ms} ms, not in {lo}..{hi}",
                if ours { "hostbench" } else { "fio" }
            );
        }
    }
    // Version 2's `wait N`: until N ms since the start (fio's since its own start, which
    // came earlier: it waits less by its start-up time); dropped with replay_no_stall.
    std::fs::write(
        d.join("w.log"),
        "fio version 2 iolog\nf add\nf open\nf read 0 4096\nf wait 600 0\nf read 4096 4096\n",
    )
    .unwrap();
    for (opts, hb_ms, fio_ms) in [
        (&[][..], 590..1500, 100..1500),
        (&["--replay_no_stall=1"][..], 0..150, 0..150),
    ] {
        for ours in [true, false] {
            if !ours && !peer {
                continue;
            }
            let a = [
                &["--name=j", "--read_iolog=w.log", "--output-format=json"][..],
                opts,
            ]
            .concat();
            let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
            assert_eq!(r.code, 0, "{}", r.err);
            let j = &doc(&r.out)["jobs"][0];
            assert_eq!(j["read"]["total_ios"], 2);
            let ms = j["job_runtime"].as_u64().unwrap();
            let want = if ours { &hb_ms } else { &fio_ms };
            assert!(want.contains(&ms), "wait {opts:?} {ours}: {ms} ms");
        }
    }
    // `runtime` ends a replay in a wait (reads at 0 and 0.2 s, the next at 5 s). fio 3.33
    // sleeps the whole wait and reads a third time at 5 s: it checks its runtime between
    // I/Os only (a fio bug, docs/fio.md).
    std::fs::write(
        d.join("s.log"),
        "fio version 3 iolog\n1 f add\n2 f open\n10 f read 0 4096\n200010 f read 4096 4096\n\
         5000010 f read 8192 4096\n",
    )
    .unwrap();
    for ours in [true, false] {
        if !ours && !peer {
            continue;
        }
        let a = [
            "--name=j",
            "--read_iolog=s.log",
            "--runtime=1",
            "--output-format=json",
        ];
        let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
        assert_eq!(r.code, 0, "{}", r.err);
        let j = &doc(&r.out)["jobs"][0];
        let ms = j["job_runtime"].as_u64().unwrap();
        if ours {
            assert_eq!(j["read"]["total_ios"], 2);
            assert!((950..1500).contains(&ms), "hostbench: {ms} ms");
        } else {
            assert_eq!(j["read"]["total_ios"], 3);
            assert!(ms >= 4900, "fio: {ms} ms");
        }
    }
}

#[test]
fn bad_logs_are_refused_with_their_line() {
    let d = tmp("iolog-bad");
    let w = |n: &str, t: &[u8]| std::fs::write(d.join(n), t).unwrap();
    w(
        "time.log",
        b"fio version 3 iolog\n1 f add\nsoon f read 0 4096\n",
    );
    w(
        "act.log",
        b"fio version 2 iolog\nf add\nf open\nf rd 0 4096\n",
    );
    w("v1.log", b"0 0 4096\n");
    w(
        "two.log",
        b"fio version 3 iolog\n1 a add\n2 b add\n3 a read 0 1\n",
    );
    w(
        "out.log",
        b"fio version 3 iolog\n1 /etc/hb-iolog-test add\n2 /etc/hb-iolog-test write 0 4096\n",
    );
    w(
        "up.log",
        b"fio version 3 iolog\n1 ../x add\n2 ../x write 0 4096\n",
    );
    w("p.log", b"fio version 3 iolog\n1 p add\n2 p read 0 1\n");
    w("q.log", b"fio version 3 iolog\n1 q add\n2 q read 0 1\n");
    // blktrace's magic (0x65617407, little-endian), then less than a record.
    w("bt.bin", &[0x07, 0x74, 0x61, 0x65, 0, 0, 0, 0, 1, 2, 3, 4]);
    for (args, want) in [
        (
            &["--read_iolog=time.log"][..],
            "time.log:3: \"soon\" is not a time",
        ),
        // (Its `rd` line is skipped, as fio skips it: nothing is left to replay.)
        (
            &["--read_iolog=act.log"][..],
            "act.log has no read, write or sync to replay",
        ),
        (&["--read_iolog=v1.log"][..], "v1.log:1: not a fio I/O log"),
        (&["--read_iolog=two.log"][..], "names 2 files (a, b)"),
        (&["--read_iolog=out.log"][..], "which the job does not name"),
        (&["--read_iolog=up.log"][..], "which the job does not name"),
        (&["--read_iolog=bt.bin"][..], "shorter than one record"),
        (
            &["--read_iolog=none.log"][..],
            "read_iolog=none.log: No such file",
        ),
        (
            &["--read_iolog=p.log:a.log"][..],
            "read_iolog=a.log: No such file",
        ),
        (
            &["--read_iolog=p.log:q.log"][..],
            "the logs replay onto different files",
        ),
        (
            &["--read_iolog=act.log", "--ioengine=mmap"][..],
            "read_iolog with ioengine=mmap",
        ),
        (&["--read_iolog=-"][..], "standard input"),
        (
            &["--read_iolog=v1.log", "--merge_blktrace_file=m.bin"][..],
            "merge_blktrace_file",
        ),
        (
            &["--read_iolog=v1.log", "--replay_align=3000"][..],
            "must be a power of 2",
        ),
    ] {
        let a = [&["--name=j", "--size=64k"][..], args].concat();
        let r = hb(&d, &a);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.out, r.err);
        assert!(r.err.contains(want), "{args:?}: {}", r.err);
        assert!(!r.err.contains("panicked"));
    }
    // (Nothing to merge: nothing runs.)
    let r = hb(&d, &["--merge-blktrace-only", "--name=j"]);
    assert_eq!((r.code, r.out.as_str()), (0, ""), "{}", r.err);
    assert!(!Path::new("/etc/hb-iolog-test").exists());
    assert!(!d.join("../x").exists());
    // The path the job names is replayed (and made by the replay's writes).
    let r = hb(
        &d,
        &[
            "--name=j",
            "--read_iolog=out.log",
            "--replay_redirect=mine",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(std::fs::metadata(d.join("mine")).unwrap().len(), 4096);
}

#[test]
fn a_long_log_is_streamed() {
    // 400k I/Os on the null engine: the log is read as it goes, its memory does not
    // follow its length (a log of 20 times fewer lines takes about the same).
    let d = tmp("iolog-long");
    let rss = |lines: usize| -> u64 {
        let mut t = String::with_capacity(lines * 24);
        t.push_str("fio version 2 iolog\nf add\nf open\n");
        for i in 0..lines {
            t.push_str(&format!("f read {} 512\n", (i % 1024) * 512));
        }
        std::fs::write(d.join("l.log"), t).unwrap();
        let o = std::process::Command::new("/usr/bin/time")
            .args(["-f", "maxrss=%M"])
            .arg(common::bin())
            .args([
                "fio",
                "--name=j",
                "--read_iolog=l.log",
                "--ioengine=null",
                "--output-format=json",
                "--no-save",
            ])
            .current_dir(&d)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        let j = &doc(&String::from_utf8_lossy(&o.stdout))["jobs"][0];
        assert_eq!(j["read"]["total_ios"], lines as u64);
        err.lines()
            .find_map(|l| l.strip_prefix("maxrss="))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    if !Path::new("/usr/bin/time").exists() {
        eprintln!("skip: /usr/bin/time is not installed; the log's memory not measured");
        return;
    }
    let small = rss(20_000);
    let big = rss(400_000);
    // The big log is ~8 MiB of text: read whole it would show.
    assert!(
        big < small + 4096,
        "{small} KiB for 20k lines, {big} KiB for 400k"
    );
}

/// `--readonly` with a log that writes: refused before anything runs, the file untouched
/// (the replay wrote it: 16 writes and 5 syncs under --readonly); fio fails the job
/// (`failed initializing iolog`, err=22) and writes nothing either. A log of reads replays.
#[test]
fn readonly_refuses_a_log_that_writes() {
    let d = tmp("iolog-ro");
    let w = hb(
        &d,
        &[
            "--name=w",
            "--filename=f",
            "--rw=randwrite",
            "--bs=4k",
            "--size=64k",
            "--fdatasync=3",
            "--write_iolog=wl",
        ],
    );
    assert_eq!(w.code, 0, "{}", w.err);
    let r = hb(
        &d,
        &[
            "--name=r",
            "--filename=f",
            "--rw=read",
            "--bs=4k",
            "--size=64k",
            "--write_iolog=rl",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let before = std::fs::read(d.join("f")).unwrap();
    let h = hb(
        &d,
        &[
            "--readonly",
            "--name=j",
            "--read_iolog=wl",
            "--output-format=json",
        ],
    );
    assert_eq!(h.code, 2, "{}{}", h.out, h.err);
    assert!(h.err.contains("read-only mode"), "{}", h.err);
    assert!(
        std::fs::read(d.join("f")).unwrap() == before,
        "the file changed"
    );
    if need_fio("readonly_refuses_a_log_that_writes") {
        let p = fio(
            &d,
            &[
                "--readonly",
                "--name=j",
                "--read_iolog=wl",
                "--output-format=json",
            ],
        );
        assert_ne!(p.code, 0, "{}", p.out);
        assert!(
            std::fs::read(d.join("f")).unwrap() == before,
            "fio changed the file"
        );
    }
    let h = hb(
        &d,
        &[
            "--readonly",
            "--name=j",
            "--read_iolog=rl",
            "--output-format=json",
        ],
    );
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(doc(&h.out)["jobs"][0]["read"]["total_ios"], 16);
    assert!(std::fs::read(d.join("f")).unwrap() == before);
    std::fs::remove_dir_all(d).ok();
}

/// A job with both `read_iolog` and `write_iolog` replays and writes no log, saying so on
/// stderr as fio does (`fio: read iolog overrides write_iolog`).
#[test]
fn read_iolog_overrides_write_iolog_and_says_so() {
    let d = tmp("iolog-override");
    let w = hb(
        &d,
        &[
            "--name=j",
            "--filename=f",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--write_iolog=l1",
        ],
    );
    assert_eq!(w.code, 0, "{}", w.err);
    let args = [
        "--name=j",
        "--filename=f",
        "--read_iolog=l1",
        "--write_iolog=l2",
    ];
    let h = hb(&d, &args);
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(
        h.err
            .matches("fio: read iolog overrides write_iolog\n")
            .count(),
        1,
        "{}",
        h.err
    );
    assert!(!d.join("l2").exists(), "a log was written");
    if need_fio("read_iolog_overrides_write_iolog_and_says_so") {
        let p = fio(&d, &args);
        assert_eq!(p.code, 0, "{}", p.err);
        assert!(
            p.err.contains("fio: read iolog overrides write_iolog"),
            "{}",
            p.err
        );
        assert!(!d.join("l2").exists(), "fio wrote a log");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// The lines of `err` that fio's replay prints for the log lines it skips.
fn skip_lines(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.starts_with("fio: bad iolog file action: ") || l.starts_with("iolog: "))
        .collect()
}

/// A log with the `sync_file_range` lines fio's `write_iolog` writes (and ours now), and
/// lines of other actions fio's replay does not take, replays: each skipped line is
/// warned about on stderr with fio's words, once per clone, and the rest is replayed
/// (pinned as fio 3.33 gave it; compared with fio, and I/O for I/O through strace).
#[test]
fn skipped_log_actions_are_warned_about_as_fio() {
    let d = tmp("iolog-skip");
    let f = s(&d.join("f"));
    // The log: 16 writes and a sync_file_range after each second one but the last.
    let w = hb(
        &d,
        &[
            "--name=w",
            &format!("--filename={f}"),
            "--size=64k",
            "--bs=4k",
            "--rw=write",
            "--sync_file_range=write:2",
            "--write_iolog=sfr.log",
            "--output-format=json",
        ],
    );
    assert_eq!(w.code, 0, "{}", w.err);
    let sfr = std::fs::read_to_string(d.join("sfr.log")).unwrap();
    assert_eq!(sfr.matches(" sync_file_range ").count(), 7, "{sfr}");
    std::fs::write(
        d.join("odd.log"),
        format!(
            "fio version 3 iolog\n10 {f} add\n20 {f} open\n100 {f} write 0 4096\n\
             150 {f} write 4096 4096\n160 {f} sync_file_range 4096 0\n200 {f} write 8192 4096\n\
             230 {f} rd 0 1\n240 {f} read\n250 {f} add 0 0\n260 {f} wait 5 0\n\
             300 {f} sync_file_range 8192 0\n400 {f} close\n"
        ),
    )
    .unwrap();
    let odd_lines = [
        "fio: bad iolog file action: sync_file_range".to_string(),
        "fio: bad iolog file action: rd".into(),
        "fio: bad iolog file action: read".into(),
        "fio: bad iolog file action: add".into(),
        format!("iolog: ignoring wait command with version 3 for file {f}"),
        "fio: bad iolog file action: sync_file_range".into(),
    ];
    let sfr_lines = vec!["fio: bad iolog file action: sync_file_range".to_string(); 14];
    let cases: [(&str, &str, Vec<String>, u64); 2] = [
        ("sfr.log", "--numjobs=2", sfr_lines, 16),
        ("odd.log", "--numjobs=1", odd_lines.to_vec(), 3),
    ];
    let fio_here = need_fio("skipped_log_actions_are_warned_about_as_fio");
    for (log, clones, want, writes) in cases {
        let a = [
            "--name=r",
            &format!("--read_iolog={log}"),
            &format!("--filename={f}"),
            "--ioengine=psync",
            clones,
            "--output-format=json",
        ];
        for ours in [true, false] {
            if !ours && !fio_here {
                continue;
            }
            std::fs::write(&f, vec![0u8; 64 << 10]).unwrap();
            let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
            let who = if ours { "hostbench" } else { "fio" };
            assert_eq!(r.code, 0, "{log} {who}: {}", r.err);
            assert_eq!(skip_lines(&r.err), want, "{log} {who}");
            for j in doc(&r.out)["jobs"].as_array().unwrap() {
                assert_eq!(j["error"], 0, "{log} {who}");
                assert_eq!(j["write"]["total_ios"], writes, "{log} {who}");
                assert_eq!(j["sync"]["total_ios"], 0, "{log} {who}");
            }
        }
        if fio_here && have_strace("skipped_log_actions_are_warned_about_as_fio") {
            let a = [&a[..4], &["--output-format=json"][..]].concat();
            std::fs::write(&f, vec![0u8; 64 << 10]).unwrap();
            let ours = traced(&d, true, &a, "f");
            std::fs::write(&f, vec![0u8; 64 << 10]).unwrap();
            let theirs = traced(&d, false, &a, "f");
            assert_eq!(ours.len() as u64, writes, "{log}: {ours:?}");
            assert_eq!(ours, theirs, "{log}");
        }
    }
}

/// A log of reads replayed where its file is missing fails the job at its open, as fio's
/// (`err=2`, `func=open(f2)`), and creates nothing (a user review: hostbench made an empty
/// `f2`, then failed its first read with err=5); `replay_redirect` to a missing file alike.
#[test]
fn a_replayed_log_of_reads_creates_no_missing_file_as_fio() {
    let d = tmp("iolog-missing");
    let w = hb(
        &d,
        &[
            "--name=w",
            "--filename=f2",
            "--rw=randread",
            "--bs=4k",
            "--size=64k",
            "--write_iolog=log2",
        ],
    );
    assert_eq!(w.code, 0, "{}", w.err);
    std::fs::remove_file(d.join("f2")).unwrap();
    let runs: [&[&str]; 2] = [
        &["--name=x", "--read_iolog=log2", "--output-format=json"],
        &[
            "--name=x",
            "--read_iolog=log2",
            "--replay_redirect=f3",
            "--output-format=json",
        ],
    ];
    for (args, file) in runs.iter().zip(["f2", "f3"]) {
        let h = hb(&d, args);
        assert_eq!(h.code, 1, "{args:?}\n{}{}", h.out, h.err);
        let j = &doc(&h.out)["jobs"][0];
        assert_eq!(j["error"], 2, "{args:?}\n{}", h.out);
        assert_eq!(j["read"]["total_ios"], 0, "{args:?}\n{}", h.out);
        assert!(
            h.out
                .contains(&format!("err=2/func=open({file}), error=No such file")),
            "{}",
            h.out
        );
        assert!(!d.join(file).exists(), "{args:?}: {file} was created");
        if need_fio("a_replayed_log_of_reads_creates_no_missing_file_as_fio") {
            let p = fio(&d, args);
            assert_eq!(p.code, h.code, "{}", p.err);
            assert_eq!(doc(&p.out)["jobs"][0]["error"], 2, "{}", p.out);
            assert!(!d.join(file).exists(), "{args:?}: fio created {file}");
        }
    }
    std::fs::remove_dir_all(d).ok();
}

/// `read_iolog=a:b`: one log per clone, as fio numbers its clones (0, then numjobs-1 down
/// to 1: the second clone of three replays the third log... modulo the logs), each clone's
/// counts as fio's, in the report's order.
#[test]
fn one_log_per_clone_as_fio() {
    if !need_fio("one_log_per_clone_as_fio") {
        return;
    }
    let d = tmp("iolog-clones");
    let log = |n: usize| {
        let mut t = String::from("fio version 2 iolog\nf add\nf open\n");
        for k in 0..n {
            t.push_str(&format!("f read {} 4096\n", k * 4096));
        }
        t.push_str("f close\n");
        t
    };
    std::fs::write(d.join("a.log"), log(1)).unwrap();
    std::fs::write(d.join("b.log"), log(2)).unwrap();
    std::fs::write(d.join("c.log"), log(3)).unwrap();
    for (logs, numjobs) in [
        ("a.log:b.log", "2"),
        ("a.log:b.log:c.log", "3"),
        ("a.log:b.log", "3"),
    ] {
        let mut got = Vec::new();
        for ours in [true, false] {
            std::fs::write(d.join("f"), vec![0u8; 64 << 10]).unwrap();
            let rl = format!("--read_iolog={logs}");
            let nj = format!("--numjobs={numjobs}");
            let a = ["--name=j", &rl, "--filename=f", &nj, "--output-format=json"];
            let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
            assert_eq!(r.code, 0, "{ours}: {}", r.err);
            let reads: Vec<u64> = doc(&r.out)["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| j["read"]["total_ios"].as_u64().unwrap())
                .collect();
            got.push(reads);
        }
        assert_eq!(got[0], got[1], "{logs} numjobs={numjobs}: hostbench, fio");
    }
}

/// The `Disk stats` block (JSON `disk_util`) of a replay, as fio 3.33 prints it: fio looks
/// for the jobs' disks before their threads start (`init_disk_util`), and a replay's files
/// are added from its log inside the thread, so a replay that names no file in
/// `filename=` reports no disk (with `replay_redirect` neither); one that names its file
/// reports that file's disk. (The test directory is on a block device; on a filesystem
/// without one neither tool reports a disk.)
#[test]
fn a_replay_reports_disk_stats_as_fio() {
    let d = tmp("iolog-disk");
    let w = hb(
        &d,
        &[
            "--name=w",
            "--filename=f",
            "--rw=randwrite",
            "--bs=4k",
            "--size=64k",
            "--write_iolog=log",
        ],
    );
    assert_eq!(w.code, 0, "{}", w.err);
    let on_disk = w.out.contains("Disk stats (read/write):");
    let has = |out: &str| out.contains("Disk stats (read/write):");
    let disks = |out: &str| doc(out)["disk_util"].as_array().map_or(0, Vec::len);
    for (args, named) in [
        (vec!["--name=x", "--read_iolog=log"], false),
        (
            vec!["--name=x", "--read_iolog=log", "--replay_redirect=f"],
            false,
        ),
        (vec!["--name=x", "--read_iolog=log", "--filename=f"], true),
    ] {
        let h = hb(&d, &args);
        assert_eq!(h.code, 0, "{args:?}: {}", h.err);
        assert_eq!(has(&h.out), named && on_disk, "{args:?}:\n{}", h.out);
        let mut json = args.clone();
        json.push("--output-format=json");
        let hj = hb(&d, &json);
        assert_eq!(
            disks(&hj.out) > 0,
            named && on_disk,
            "{args:?}:\n{}",
            hj.out
        );
        if need_fio("a_replay_reports_disk_stats_as_fio") {
            let p = fio(&d, &args);
            assert_eq!(p.code, 0, "{args:?}: {}", p.err);
            assert_eq!(has(&p.out), has(&h.out), "{args:?}: fio:\n{}", p.out);
            let pj = fio(&d, &json);
            assert_eq!(disks(&pj.out), disks(&hj.out), "{args:?}");
        }
    }
    std::fs::remove_dir_all(d).ok();
}

/// A replay's start-up line shows the job's own `rw` and block sizes, as fio's (which
/// never sets them from the log): a log of 8 KiB writes and reads replayed by a job that
/// gives none prints `rw=read, bs=(R) 4096B-4096B, ...` in both (hostbench printed the
/// log's `rw=rw` and 8 KiB before).
#[test]
fn a_replays_start_up_line_is_the_jobs_as_fio() {
    let d = tmp("iolog-startup");
    std::fs::write(
        d.join("rw8.log"),
        "fio version 2 iolog\nf add\nf open\nf write 0 8192\nf read 0 8192\nf close\n",
    )
    .unwrap();
    std::fs::write(d.join("f"), vec![0u8; 64 << 10]).unwrap();
    let line = |out: &str| -> String {
        out.lines()
            .find(|l| l.starts_with("x: (g=0)"))
            .unwrap_or_else(|| panic!("no start-up line:\n{out}"))
            .to_string()
    };
    for (extra, want) in [
        (
            None,
            "x: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1",
        ),
        (
            Some("--rw=randwrite"),
            "x: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1",
        ),
    ] {
        let mut a = vec!["--name=x", "--read_iolog=rw8.log"];
        a.extend(extra);
        let h = hb(&d, &a);
        assert_eq!(h.code, 0, "{}", h.err);
        assert_eq!(line(&h.out), want);
        if need_fio("a_replays_start_up_line_is_the_jobs_as_fio") {
            let f = fio(&d, &a);
            assert_eq!(line(&f.out), want, "fio");
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}
