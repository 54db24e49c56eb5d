//! fio's `verify`, side by side with the installed fio: a file fio writes verifies with
//! hostbench and a file hostbench writes verifies with fio, for every checksum; a corrupted
//! byte is reported with fio's lines (the same offsets, the same expected and received
//! checksums) and fio's exit status; a write job's verify reads are counted as fio counts
//! them; patterns are the bytes fio writes; bad verify options are one clear line, exit 2.
//!
//! Without fio the comparisons are skipped with a message, unless `HOSTBENCH_TEST_FIO` is
//! set: then a missing fio fails the test.

use super::fio::{s, tmp};
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_seq::need_fio;
use std::path::Path;

/// Every checksum both write and check, with extra options for a few of them
/// (`verify_interval` smaller than the block, `verify_offset`, a pattern under the header).
const KINDS: &[(&str, &[&str])] = &[
    ("md5", &[]),
    ("crc32c", &[]),
    ("crc32c-intel", &["--verify_interval=1k"]),
    ("crc32", &[]),
    ("crc64", &["--verify_offset=512"]),
    ("crc16", &[]),
    ("crc7", &["--verify_interval=2k"]),
    ("sha1", &[]),
    ("sha256", &[]),
    ("sha512", &[]),
    ("sha3-224", &[]),
    ("sha3-256", &["--verify_interval=1k"]),
    ("sha3-384", &[]),
    ("sha3-512", &["--verify_offset=512"]),
    ("xxhash", &[]),
    ("meta", &["--verify_pattern=0xdeadbeef"]),
    ("pattern", &["--verify_pattern=%o"]),
];

/// A 64 KiB job on `file` with `verify=kind`: `rw` and the extra options.
fn job(file: &Path, kind: &str, rw: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["--name=vf", "--bs=4k", "--size=64k", "--output-format=json"]
        .iter()
        .map(|x| x.to_string())
        .collect();
    a.push(format!("--filename={}", s(file)));
    a.push(format!("--rw={rw}"));
    a.push(format!("--verify={kind}"));
    a.extend(extra.iter().map(|x| x.to_string()));
    a
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(|x| x.as_str()).collect()
}

/// (reads, writes, error) of the one job of a JSON report.
fn counts(r: &Ran) -> (u64, u64, i64) {
    let v = doc(&r.out);
    let j = &v["jobs"][0];
    (
        j["read"]["total_ios"].as_u64().unwrap(),
        j["write"]["total_ios"].as_u64().unwrap(),
        j["error"].as_i64().unwrap(),
    )
}

#[test]
fn files_fio_writes_verify_with_hostbench_and_the_other_way_round() {
    if !need_fio("files_fio_writes_verify_with_hostbench_and_the_other_way_round") {
        return;
    }
    let d = tmp("verify-x");
    for (kind, extra) in KINDS {
        // fio writes, hostbench reads and checks.
        let f = d.join(format!("fio-{kind}.dat"));
        let w = fio(
            &d,
            &strs(&job(
                &f,
                kind,
                "write",
                &[extra, &["--do_verify=0"][..]].concat(),
            )),
        );
        assert_eq!(w.code, 0, "fio write {kind}: {}", w.err);
        let r = hb(&d, &strs(&job(&f, kind, "read", extra)));
        assert_eq!(r.code, 0, "hostbench read of fio's {kind} file: {}", r.err);
        assert_eq!(counts(&r), (16, 0, 0), "{kind}");
        // hostbench writes, fio reads and checks; fio's verify_only re-checks it as well.
        let f = d.join(format!("hb-{kind}.dat"));
        let w = hb(
            &d,
            &strs(&job(
                &f,
                kind,
                "write",
                &[extra, &["--do_verify=0"][..]].concat(),
            )),
        );
        assert_eq!(w.code, 0, "hostbench write {kind}: {}", w.err);
        assert_eq!(counts(&w), (0, 16, 0), "{kind}");
        let r = fio(&d, &strs(&job(&f, kind, "read", extra)));
        assert_eq!(r.code, 0, "fio read of hostbench's {kind} file: {}", r.err);
        assert_eq!(counts(&r), (16, 0, 0), "{kind}");
        let r = fio(
            &d,
            &strs(&job(
                &f,
                kind,
                "write",
                &[extra, &["--verify_only=1"][..]].concat(),
            )),
        );
        assert_eq!(
            r.code, 0,
            "fio verify_only of hostbench's {kind} file: {}",
            r.err
        );
        assert_eq!(counts(&r).0, 16, "{kind}");
    }
}

#[test]
fn a_corrupted_block_is_reported_in_fios_words() {
    if !need_fio("a_corrupted_block_is_reported_in_fios_words") {
        return;
    }
    let d = tmp("verify-bad");
    for kind in ["md5", "crc32c", "sha1", "xxhash"] {
        let f = d.join(format!("{kind}.dat"));
        let w = fio(&d, &strs(&job(&f, kind, "write", &["--do_verify=0"])));
        assert_eq!(w.code, 0, "{}", w.err);
        // A data byte of the third block and a header byte of the sixth.
        let mut b = std::fs::read(&f).unwrap();
        b[9000] ^= 0xff;
        b[20490] ^= 0xff;
        std::fs::write(&f, &b).unwrap();
        let lines = |r: &Ran| -> Vec<String> {
            r.err
                .lines()
                .filter(|l| !l.starts_with("WARNING"))
                .filter(|l| {
                    l.contains("verify failed") || l.contains("CRC:") || l.starts_with("verify: ")
                })
                .map(String::from)
                .collect()
        };
        let args = job(&f, kind, "read", &[]);
        let (h, p) = (hb(&d, &strs(&args)), fio(&d, &strs(&args)));
        assert_eq!(h.code, 1, "{kind}: {}", h.err);
        assert_eq!(h.code, p.code, "{kind}");
        let first = format!(
            "{kind}: verify failed at file {} offset 8192, length 4096 (requested block: \
             offset=8192, length=4096, flags=8)",
            s(&f)
        )
        .replace("crc32c: ", "crc32c: ");
        assert_eq!(lines(&h)[0], first, "{}", h.err);
        assert_eq!(lines(&h), lines(&p), "fio's stderr:\n{}", p.err);
        // The job stops at the first bad block: three reads, err=84, as in fio.
        assert_eq!(counts(&h), (3, 0, 84), "{kind}");
        assert_eq!(counts(&h), counts(&p), "{kind}");
        // The header: with the data byte repaired the sixth block's header crc is named.
        b[9000] ^= 0xff;
        std::fs::write(&f, &b).unwrap();
        let (h, p) = (hb(&d, &strs(&args)), fio(&d, &strs(&args)));
        assert_eq!(lines(&h), lines(&p), "fio's stderr:\n{}", p.err);
        assert!(
            lines(&h)[0].starts_with("verify: bad header crc "),
            "{}",
            h.err
        );
        assert!(
            lines(&h)[0].ends_with(&format!(
                "at file {} offset 20480, length 4096 (requested block: offset=20480, length=4096)",
                s(&f)
            )),
            "{}",
            h.err
        );
        assert_eq!(counts(&h), counts(&p), "{kind}");
    }
}

#[test]
fn a_write_job_reads_back_what_it_wrote_as_fio_counts_it() {
    if !need_fio("a_write_job_reads_back_what_it_wrote_as_fio_counts_it") {
        return;
    }
    let d = tmp("verify-rw");
    for (rw, extra) in [
        ("write", vec![]),
        ("randwrite", vec![]),
        ("randwrite", vec!["--norandommap"]),
        ("randwrite", vec!["--verify_backlog=4"]),
        ("write", vec!["--ioengine=libaio", "--iodepth=8"]),
        (
            "randwrite",
            vec![
                "--ioengine=io_uring",
                "--iodepth=4",
                "--verify_backlog=8",
                "--verify_backlog_batch=4",
            ],
        ),
        ("write", vec!["--bsrange=4k-16k"]),
        ("randwrite", vec!["--loops=2"]),
    ] {
        let f = d.join("rw.dat");
        let mut extra: Vec<&str> = extra;
        extra.push("--randseed=7");
        let args = job(&f, "crc32c", rw, &extra);
        let (h, p) = (hb(&d, &strs(&args)), fio(&d, &strs(&args)));
        assert_eq!(h.code, 0, "{rw} {extra:?}: {}", h.err);
        assert_eq!(p.code, 0, "{rw} {extra:?}: {}", p.err);
        let (hr, hw, he) = counts(&h);
        assert_eq!(he, 0);
        // Every block written is read back once (norandommap: each offset once, the
        // newest write; fio drops the older ones too).
        if extra.contains(&"--loops=2") {
            // Each pass's blocks are checked after it, as fio checks them: 32 reads.
            assert_eq!((hr, hw), (32, 32), "{rw} {extra:?}");
            assert_eq!((hr, hw), (counts(&p).0, counts(&p).1), "{rw} {extra:?}");
        } else if extra.contains(&"--norandommap") || extra.contains(&"--bsrange=4k-16k") {
            assert!(
                hr >= 1 && hr <= hw,
                "{rw} {extra:?}: {hr} reads of {hw} writes"
            );
        } else {
            assert_eq!((hr, hw), (16, 16), "{rw} {extra:?}");
            assert_eq!((hr, hw), (counts(&p).0, counts(&p).1), "{rw} {extra:?}");
            let v = doc(&h.out);
            let j = &v["jobs"][0];
            assert_eq!(
                j["read"]["io_bytes"], j["write"]["io_bytes"],
                "{rw} {extra:?}"
            );
        }
        let v = doc(&h.out);
        assert!(
            v["jobs"][0]["read"]["runtime"].as_u64().unwrap() >= 1,
            "{}",
            h.out
        );
    }
    // The normal layout: a read: section next to write:, READ: and WRITE: in Run status.
    let f = d.join("n.dat");
    let mut a = job(&f, "md5", "write", &[]);
    a.retain(|x| !x.starts_with("--output-format"));
    let h = hb(&d, &strs(&a));
    assert_eq!(h.code, 0, "{}", h.err);
    for needle in [
        "  read: IOPS=",
        "  write: IOPS=",
        "   READ: bw=",
        "  WRITE: bw=",
        "issued rwts: total=16,16,0,0",
    ] {
        assert!(h.out.contains(needle), "{needle}:\n{}", h.out);
    }
}

#[test]
fn patterns_are_the_bytes_fio_writes() {
    if !need_fio("patterns_are_the_bytes_fio_writes") {
        return;
    }
    let d = tmp("verify-pat");
    for pat in ["0xaa555aa5\"ab\"-2", "%o", "\"xyz\"%o66", "0xabc0x14"] {
        let arg = format!("--verify_pattern={pat}");
        let (fh, ff) = (d.join("h.dat"), d.join("f.dat"));
        let hw = hb(&d, &strs(&job(&fh, "pattern", "write", &[&arg])));
        assert_eq!(hw.code, 0, "{pat}: {}", hw.err);
        let fw = fio(&d, &strs(&job(&ff, "pattern", "write", &[&arg])));
        assert_eq!(fw.code, 0, "{pat}: {}", fw.err);
        assert!(
            std::fs::read(&fh).unwrap() == std::fs::read(&ff).unwrap(),
            "{pat}: the files differ"
        );
    }
}

#[test]
fn bad_verify_options_are_one_clear_line() {
    let d = tmp("verify-badopt");
    let f = format!("--filename={}", s(&d.join("x")));
    for (opt, needle) in [
        ("--verify=md6", "verify=md6: expected one of"),
        ("--verify=sha3-255", "verify=sha3-255: expected one of"),
        (
            "--verify_interval=10",
            "verify_interval=10: min value out of range",
        ),
        (
            "--verify_offset=8",
            "verify_offset=8: min value out of range",
        ),
        ("--verify_pattern=zz", "verify_pattern=zz: cannot read"),
        ("--verify=pattern", "verify=pattern needs a verify_pattern"),
    ] {
        let r = hb(&d, &["--name=a", "--rw=write", "--size=64k", &f, opt]);
        assert_eq!(r.code, 2, "{opt}: {}", r.err);
        assert!(r.err.contains(needle), "{opt}: {}", r.err);
        assert_eq!(r.err.trim().lines().count(), 1, "{opt}: {}", r.err);
    }
}

/// Starts `program` (`hostbench fio` or fio) on `args` in `dir`, lets it write for a while
/// and stops it with SIGTERM, as a user stops a write job part way.
fn stopped_part_way(dir: &Path, hostbench: bool, args: &[&str]) {
    let mut c = if hostbench {
        let mut c = std::process::Command::new(crate::common::bin());
        c.arg("fio").arg("--no-save");
        c
    } else {
        std::process::Command::new("fio")
    };
    let child = c
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // 3 s of a 17 s job: part way even on a busy machine.
    std::thread::sleep(std::time::Duration::from_millis(3000));
    let k = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(k.success());
    let o = child.wait_with_output().unwrap();
    assert!(o.status.code() != Some(101), "the writer panicked");
}

/// The writes a state file says were issued (fio's `numberio`), and the file's bytes.
fn saved(dir: &Path) -> (u64, Vec<u8>) {
    let b = std::fs::read(dir.join("local-w-0-verify.state")).expect("the state file");
    assert!(b.len() >= 48, "{} bytes", b.len());
    (u64::from_le_bytes(b[40..48].try_into().unwrap()), b)
}

/// fio's verify state, side by side with fio 3.33: a write job stopped part way (SIGTERM)
/// leaves `local-w-0-verify.state`, and `verify_only=1,verify_state_load=1` then checks
/// exactly the blocks written (without the state the first unwritten block fails), for a
/// sequential and a random job, written by either tool; a sequential job's state loads in
/// the other tool too (the format is fio's), and a finished job's file is fio's byte for
/// byte but for fio's random state.
#[test]
fn verify_state_of_a_stopped_write_job_checks_what_was_written_as_fio() {
    if !need_fio("verify_state_of_a_stopped_write_job_checks_what_was_written_as_fio") {
        return;
    }
    for rw in ["write", "randwrite"] {
        for hostbench_writes in [true, false] {
            let d = tmp(&format!("verify-state-{rw}-{hostbench_writes}"));
            let job = [
                "--name=w",
                "--filename=f",
                "--size=4m",
                "--bs=4k",
                "--verify=crc32c",
                "--output-format=json",
            ];
            let rwo = format!("--rw={rw}");
            let w = [&job[..], &[&rwo[..], "--rate_iops=60"]].concat();
            stopped_part_way(&d, hostbench_writes, &w);
            let (written, _) = saved(&d);
            assert!(
                written > 0 && written < 1024,
                "{rw}: the writer was to be stopped part way, it saved {written} writes"
            );
            let v = [
                &job[..],
                &[&rwo[..], "--verify_only=1", "--verify_state_load=1"],
            ]
            .concat();
            // The writer's own tool replays its write order; a sequential one is the
            // same order in both.
            let mut checkers = vec![hostbench_writes];
            if rw == "write" {
                checkers.push(!hostbench_writes);
            }
            for hostbench_checks in checkers {
                // Each verify run saves the state again (all its blocks): put it back.
                let (_, bytes) = saved(&d);
                let r = if hostbench_checks {
                    hb(&d, &v)
                } else {
                    fio(&d, &v)
                };
                std::fs::write(d.join("local-w-0-verify.state"), &bytes).unwrap();
                let who = format!(
                    "{rw}, written by {}, checked by {}",
                    if hostbench_writes { "hostbench" } else { "fio" },
                    if hostbench_checks { "hostbench" } else { "fio" }
                );
                assert_eq!(r.code, 0, "{who}: {}", r.err);
                assert_eq!(counts(&r).0, written, "{who}");
                assert_eq!(counts(&r).2, 0, "{who}");
            }
            // Without the state, the first block not written does not verify (in
            // hostbench's order: a random job's is its own).
            if hostbench_writes || rw == "write" {
                let all = [&job[..], &[&rwo[..], "--verify_only=1"]].concat();
                let r = hb(&d, &all);
                assert_eq!(r.code, 1, "{rw}: {}", r.err);
                assert_eq!(counts(&r).0, written + 1, "{rw}");
            }
        }
    }
    // A finished sequential job: the same bytes as fio's file but fio's random state
    // (bytes 56..112 of the state, never read back) and the checksum over it.
    let d = tmp("verify-state-same");
    let job = [
        "--name=w",
        "--filename=f",
        "--size=256k",
        "--bs=4k",
        "--rw=write",
        "--verify=md5",
        "--iodepth=4",
        "--do_verify=0",
    ];
    assert_eq!(fio(&d, &job).code, 0);
    let (_, theirs) = saved(&d);
    assert_eq!(hb(&d, &job).code, 0);
    let (_, ours) = saved(&d);
    assert_eq!(ours.len(), theirs.len());
    let mask = |b: &[u8]| {
        let mut b = b.to_vec();
        b[16..24].fill(0);
        b[24 + 32..24 + 88].fill(0);
        b
    };
    assert_eq!(mask(&ours), mask(&theirs));
}

/// A missing, corrupt or foreign verify state is one clear line naming the file, exit 2,
/// before anything runs (fio exits 1 with `fio: verify state is corrupt`).
#[test]
fn a_bad_verify_state_is_refused_clearly() {
    let d = tmp("verify-state-bad");
    let job = [
        "--name=w",
        "--filename=f",
        "--size=64k",
        "--bs=4k",
        "--rw=write",
        "--verify=md5",
        "--verify_only=1",
        "--verify_state_load=1",
    ];
    let state = d.join("local-w-0-verify.state");
    let r = hb(&d, &job);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains("cannot open local-w-0-verify.state"),
        "{}",
        r.err
    );
    assert_eq!(r.err.trim().lines().count(), 1, "{}", r.err);
    // A good state first (a finished write job saves it), then spoilt three ways.
    let w = hb(&d, &job[..6]);
    assert_eq!(w.code, 0, "{}", w.err);
    let good = std::fs::read(&state).unwrap();
    let mut flipped = good.clone();
    *flipped.last_mut().unwrap() ^= 1;
    let mut huge = good.clone();
    // A header claiming more than the file holds is never read past the file.
    huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    for (bytes, needle) in [
        (&b"garbage"[..], "shorter than the 24-byte header"),
        (&flipped[..], "the file is corrupt"),
        (&huge[..], "the file holds"),
    ] {
        std::fs::write(&state, bytes).unwrap();
        let r = hb(&d, &job);
        assert_eq!(r.code, 2, "{needle}: {}", r.err);
        assert!(
            r.err
                .contains("local-w-0-verify.state is not a valid fio verify state file"),
            "{}",
            r.err
        );
        assert!(r.err.contains(needle), "{needle}: {}", r.err);
        assert_eq!(r.err.trim().lines().count(), 1, "{}", r.err);
    }
    // verify_state_save=0: no state file.
    std::fs::remove_file(&state).unwrap();
    let w = hb(&d, &[&job[..6], &["--verify_state_save=0"][..]].concat());
    assert_eq!(w.code, 0, "{}", w.err);
    assert!(!state.exists());
}

/// The native grammar keeps the verify state in the run's `dir`, where it was told to
/// write, never in the current directory (`hostbench fio` keeps fio's place, the current
/// directory); a later native run loads it from there.
#[test]
fn the_native_grammar_keeps_the_verify_state_in_its_dir() {
    let d = tmp("vstate-native");
    let (dir, cwd) = (d.join("dir"), d.join("cwd"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    let run = |jobs: &str| {
        let o = crate::common::hb()
            .current_dir(&cwd)
            .args(["run", "disk.fio", "--no-save", "--time=0", "--set"])
            .arg(format!("jobs={jobs}"))
            .args(["--set", &format!("dir={}", s(&dir))])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{jobs}: {err}");
    };
    run("--name=v --rw=write --size=64k --verify=crc32c --filename=vf");
    let names = |p: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names(&cwd),
        Vec::<String>::new(),
        "nothing in the current directory"
    );
    assert_eq!(names(&dir), ["local-v-0-verify.state", "vf"]);
    run(
        "--name=v --rw=write --size=64k --verify=crc32c --filename=vf --verify_only=1 \
         --verify_state_load=1",
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// `verify_only`'s counts, as fio's dry run counts them: the writes it does not do are
/// issued and in the write total (`issued rwts: total=16,16`, JSON `write.io_bytes` and
/// `total_ios`, terse's write KiB), with no runtime (no `write:` section, no `WRITE:` line);
/// without a `verify` to check, nothing is written either (the file keeps its bytes).
#[test]
fn verify_only_counts_the_writes_it_skips_as_fio() {
    let d = tmp("vonly");
    let base = [
        "--name=v",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--filename=vf",
    ];
    // What one run shows: the issued line, whether a write section or WRITE line is
    // there, the JSON write (bytes, ios, runtime), terse's write KiB; the file's bytes.
    let show = |real: bool, extra: &[&str]| {
        let run = |fmt: &str| {
            let mut a: Vec<&str> = base.to_vec();
            a.extend_from_slice(extra);
            a.push(fmt);
            let r: Ran = if real { fio(&d, &a) } else { hb(&d, &a) };
            assert_eq!(r.code, 0, "{extra:?} {fmt}: {}", r.err);
            r.out
        };
        let normal = run("--output-format=normal");
        let issued = normal
            .lines()
            .find(|l| l.contains("issued rwts"))
            .unwrap_or_default()
            .trim()
            .to_string();
        let write_shown = normal.contains("  write:") || normal.contains("WRITE:");
        let j = doc(&run("--output-format=json"));
        let w = &j["jobs"][0]["write"];
        let json = (
            w["io_bytes"].as_u64().unwrap(),
            w["total_ios"].as_u64().unwrap(),
            w["runtime"].as_u64().unwrap(),
        );
        let terse = run("--output-format=terse");
        let line = terse
            .lines()
            .find(|l| l.starts_with("3;"))
            .unwrap()
            .to_string();
        let write_kb = line.split(';').nth(46).unwrap().to_string();
        (issued, write_shown, json, write_kb)
    };
    let mut seen = Vec::new();
    for real in [false, true] {
        if real && !need_fio("verify_only_counts_the_writes_it_skips_as_fio") {
            break;
        }
        // A file written and verified, then verify_only on it; then verify_only without
        // a verify on a file of zeros.
        let mut a: Vec<&str> = base.to_vec();
        a.push("--verify=crc32c");
        let r = if real { fio(&d, &a) } else { hb(&d, &a) };
        assert_eq!(r.code, 0, "{}", r.err);
        let checked = show(real, &["--verify=crc32c", "--verify_only=1"]);
        std::fs::write(d.join("vf"), vec![0u8; 64 << 10]).unwrap();
        let plain = show(real, &["--verify_only=1"]);
        let kept = std::fs::read(d.join("vf")).unwrap().iter().all(|&b| b == 0);
        std::fs::remove_file(d.join("vf")).unwrap();
        seen.push((checked, plain, kept));
    }
    let (checked, plain, kept) = &seen[0];
    assert_eq!(
        checked,
        &(
            "issued rwts: total=16,16,0,0 short=0,0,0,0 dropped=0,0,0,0".to_string(),
            false,
            (65536, 16, 0),
            "64".to_string()
        )
    );
    assert_eq!(
        plain,
        &(
            "issued rwts: total=0,16,0,0 short=0,0,0,0 dropped=0,0,0,0".to_string(),
            false,
            (65536, 16, 0),
            "64".to_string()
        )
    );
    assert!(kept, "verify_only wrote the file");
    if seen.len() == 2 {
        assert_eq!(seen[0], seen[1], "hostbench vs fio");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// fio verifies after each pass (`do_verify` after every `do_io` of `thread_main`'s loop):
/// with `loops=2` it writes the region, reads it back, writes it again and reads it back
/// again; its verify reads count toward `io_size` (`keep_running` sums every direction),
/// so `size=256k,io_size=1m` writes 512 KiB and reads 512 KiB back. Compared with fio:
/// the JSON counts, and the order of the directions in the latency log.
#[test]
fn verify_runs_after_each_pass_and_counts_toward_io_size_as_fio() {
    let d = tmp("verify-pass");
    let peer = need_fio("verify_runs_after_each_pass_and_counts_toward_io_size_as_fio");
    let cases: [&[&str]; 5] = [
        &["--loops=2"],
        &["--io_size=1m"],
        &["--io_size=1m", "--rw=randwrite"],
        &["--io_size=1m", "--ioengine=libaio", "--iodepth=8"],
        &["--loops=2", "--ioengine=io_uring", "--iodepth=4"],
    ];
    // The directions of the latency log's rows, runs of one direction collapsed.
    let order = |d: &std::path::Path| -> Vec<String> {
        let text = std::fs::read_to_string(d.join("v_lat.1.log")).unwrap();
        let mut runs: Vec<String> = Vec::new();
        for l in text.lines() {
            let dir = l.split(", ").nth(2).unwrap().to_string();
            if runs.last() != Some(&dir) {
                runs.push(dir);
            }
        }
        runs
    };
    for extra in cases {
        let mut args = vec![
            "--name=v",
            "--filename=f",
            "--size=256k",
            "--bs=4k",
            "--rw=write",
            "--verify=crc32c",
            "--write_lat_log=v",
            "--output-format=json",
        ];
        args.extend_from_slice(extra);
        let _ = std::fs::remove_file(d.join("f"));
        let (out, _) = super::fio_seq::hb(&d, &args);
        let j = &super::fio::json(&out)["jobs"][0];
        let counts =
            |j: &serde_json::Value| ["read", "write"].map(|k| j[k]["io_bytes"].as_u64().unwrap());
        assert_eq!(counts(j), [512 << 10, 512 << 10], "{extra:?}: {out}");
        let ours = order(&d);
        if !extra.contains(&"--rw=randwrite") {
            assert_eq!(ours, ["1", "0", "1", "0"], "{extra:?}");
        }
        if peer {
            let _ = std::fs::remove_file(d.join("f"));
            let (theirs, _) = super::fio_seq::fio(&d, &args);
            let t = &super::fio::json(&theirs)["jobs"][0];
            assert_eq!(counts(j), counts(t), "{extra:?}");
            assert_eq!(ours, order(&d), "{extra:?}");
        }
    }
}

/// A buffered write job's verify phase reads back through the page cache, as fio's does
/// (a user review: hostbench's read phase took a second from the disk where fio's took
/// 40 ms): fio closes the job's files before the phase (`clear_io_state`), so its
/// `do_verify` syncs and drops nothing, and the file opened again gets only fio's
/// `invalidate` (`POSIX_FADV_DONTNEED`), which leaves dirty pages where they are. hostbench
/// synced the file first, then dropped it.
#[test]
fn the_verify_phase_syncs_nothing_first_as_fio() {
    if !super::fio_engines::have_strace("the_verify_phase_syncs_nothing_first_as_fio") {
        return;
    }
    let d = tmp("vsync");
    let args = [
        "--name=v",
        "--rw=randwrite",
        "--bs=4k",
        "--size=256k",
        "--filename=tf",
        "--verify=crc32c",
        "--output-format=terse",
    ];
    // The calls on the job's file: (syncs, cache drops).
    let calls = |log: &str| {
        let on_tf = |call: &str| {
            log.lines()
                .filter(|l| l.contains(call) && l.contains("/tf>"))
                .count()
        };
        (
            on_tf("fsync(") + on_tf("fdatasync("),
            on_tf("POSIX_FADV_DONTNEED"),
        )
    };
    let mut a = vec!["fio"];
    a.extend(args);
    a.push("--no-save");
    let (o, log) = super::fio_engines::strace_f(
        &d,
        crate::common::bin(),
        &a,
        "fsync,fdatasync,fadvise64",
        &["-y"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // One drop as the job opens its file, one as the verify phase begins.
    assert_eq!(calls(&log), (0, 2), "{log}");
    if need_fio("the_verify_phase_syncs_nothing_first_as_fio") {
        std::fs::remove_file(d.join("tf")).ok();
        let (o, log) =
            super::fio_engines::strace_f(&d, "fio", &args, "fsync,fdatasync,fadvise64", &["-y"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // (fio's parent drops the file it laid out once more.)
        let (syncs, drops) = calls(&log);
        assert_eq!(syncs, 0, "{log}");
        assert!(drops >= 2, "{log}");
    }
    std::fs::remove_dir_all(d).ok();
}
