//! fio's verify-side trims and the rest of its verify options, side by side with the
//! installed fio 3.33: `trim_percentage` (which logged writes go on the trim list: fio's own
//! generator and seeds, so the same blocks), `trim_backlog` and `trim_backlog_batch` (when
//! they are trimmed), `trim_verify_zero` (a trimmed block must read back as zeros, or leaves
//! the verify log), fio's `trim entries leaked?` note; `experimental_verify`; and
//! `verify_async_cpus` (fio 3.33 pins the job's own thread with it).
//!
//! fio 3.33 runs the trim list only for `rw=trimwrite`/`randtrimwrite` (a plain write job
//! with `trim_backlog` aborts on an assertion at its first backlog trim, measured), and its
//! psync trims only block devices (BLKDISCARD): the counts are compared on the null engine
//! and the calls on a loop device; hostbench also trims a write job's blocks (a punched hole
//! in a file), docs/fio.md, Differences.

use super::fio::{json, s, tmp};
use super::fio_engines::have_strace;
use super::fio_seq::{fio, hb, need_fio};
use super::fio_trim::{dirs, shape};
use crate::common;
use serde_json::Value;
use std::path::Path;

/// The keys of the first job's `trim` object, sorted.
fn trim_keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v["jobs"][0]["trim"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    k.sort();
    k
}

/// fio's `trim entries leaked?` line, if its stderr has one.
fn leaked(err: &str) -> Option<String> {
    err.lines()
        .find(|l| l.contains("trim entries leaked?"))
        .map(String::from)
}

/// fio on `args` in `dir`: (exit code, stdout, stderr), whatever the outcome.
fn fio_any(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let o = std::process::Command::new("timeout")
        .args(["-k", "5", "120", "fio"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// hostbench's fio on `args` in `dir`: (exit code, stdout, stderr).
fn hb_any(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut a = vec!["fio"];
    a.extend_from_slice(args);
    a.push("--no-save");
    common::run_in(dir, &a)
}

#[test]
fn trim_backlog_counts_and_reports_as_fio() {
    if !need_fio("trim_backlog_counts_and_reports_as_fio") {
        return;
    }
    let d = tmp("trimv-null");
    let sets: &[&[&str]] = &[
        &["--trim_percentage=50", "--trim_backlog=8"],
        &[
            "--trim_percentage=30",
            "--trim_backlog=5",
            "--trim_backlog_batch=2",
            "--trim_verify_zero=0",
        ],
        &[
            "--trim_percentage=40",
            "--trim_backlog=4",
            "--randseed=1234",
            "--random_generator=tausworthe64",
        ],
        // No backlog: nothing is trimmed, and fio counts what is left on the list.
        &["--trim_percentage=50"],
    ];
    for rw in ["trimwrite", "randtrimwrite"] {
        for (i, set) in sets.iter().enumerate() {
            let rwo = format!("--rw={rw}");
            let mut a = vec![
                "--name=t",
                "--ioengine=null",
                "--size=1m",
                "--bs=4k",
                "--verify=crc32c",
                rwo.as_str(),
            ];
            a.extend_from_slice(set);
            let mut j = a.clone();
            j.push("--output-format=json");
            let (fc, fo, fe) = fio_any(&d, &j);
            let (hc, ho, he) = hb_any(&d, &j);
            assert_eq!((fc, hc), (0, 0), "{rw} {set:?}: {fe}\n{he}");
            let (fv, hv) = (json(&fo), json(&ho));
            assert_eq!(dirs(&hv), dirs(&fv), "{rw} {set:?}: read, write, trim");
            assert_eq!(trim_keys(&hv), trim_keys(&fv), "{rw} {set:?}: trim keys");
            assert_eq!(leaked(&he), leaked(&fe), "{rw} {set:?}: the leak note");
            if i == 0 {
                // More trims than the mode's own: the list's.
                assert!(dirs(&hv)[2].0 > dirs(&hv)[1].0, "{rw}: {:?}", dirs(&hv));
                let (f, _) = fio(&d, &a);
                let (h, _) = hb(&d, &a);
                assert_eq!(shape(&h), shape(&f), "{rw}: normal layout\n{h}");
                let mut t = a.clone();
                t.extend(["--output-format=terse", "--terse-version=5"]);
                let (f, _) = fio(&d, &t);
                let (h, _) = hb(&d, &t);
                let io = |t: &str| {
                    let f: Vec<String> = t
                        .lines()
                        .next()
                        .unwrap()
                        .split(';')
                        .map(String::from)
                        .collect();
                    (f.len(), f[5].clone(), f[52].clone(), f[99].clone())
                };
                assert_eq!(io(&h), io(&f), "{rw}: terse fields, KiB per direction");
            }
        }
    }
    // time_based: fio logs every write (no verify phase follows) and trims the list's
    // share of them all the same: half again as many trims as writes at 50%.
    let a = [
        "--name=t",
        "--ioengine=null",
        "--size=64k",
        "--bs=4k",
        "--rw=trimwrite",
        "--verify=crc32c",
        "--trim_percentage=50",
        "--trim_backlog=8",
        "--time_based",
        "--runtime=1",
        "--output-format=json",
    ];
    for (who, out) in [("fio", fio(&d, &a).0), ("hostbench", hb(&d, &a).0)] {
        // fio puts its note that no verify phase follows before the JSON, on stdout.
        let r = dirs(&json(&out[out.find('{').unwrap_or(0)..]));
        let ratio = r[2].0 as f64 / r[1].0 as f64;
        assert!((1.4..1.6).contains(&ratio), "{who}: {r:?}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// A write job's trims on a regular file: holes punched, read back as zeros (the verify
/// passes); with `trim_verify_zero=0` the trimmed blocks are not read back. The blocks
/// trimmed are the ones fio's generator picks: as many as fio's trimwrite trims beyond its
/// own (fio 3.33 itself aborts a plain write job at its first backlog trim).
#[test]
fn a_write_jobs_trims_punch_holes_that_verify_as_zeros() {
    let d = tmp("trimv-file");
    let f = d.join("f.dat");
    let name = format!("--filename={}", s(&f));
    let base = [
        "--name=t",
        name.as_str(),
        "--size=1m",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
        "--trim_percentage=50",
        "--trim_backlog=8",
        "--output-format=json",
    ];
    let (c, out, err) = hb_any(&d, &base);
    assert_eq!(c, 0, "{err}");
    let v = json(&out);
    if v["jobs"][0]["error"].as_i64() == Some(libc::EOPNOTSUPP as i64) {
        eprintln!("skip: this filesystem cannot punch holes");
        return;
    }
    assert_eq!(v["jobs"][0]["error"].as_i64(), Some(0), "{out}\n{err}");
    let got = dirs(&v);
    assert_eq!((got[0].0, got[1].0), (256, 256), "every block read back");
    let trims = got[2].0;
    assert!((100..160).contains(&trims), "{trims} trims");
    assert!(!err.contains("verify failed"), "{err}");
    let blocks = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&f).unwrap().blocks()
    };
    assert!(
        blocks * 512 <= (1 << 20) - (trims - 8) * 4096,
        "{trims} holes punched: {blocks} blocks left"
    );
    if need_fio("a_write_jobs_trims_punch_holes_that_verify_as_zeros") {
        let (_, fo, _) = fio_any(
            &d,
            &[
                "--name=t",
                "--ioengine=null",
                "--size=1m",
                "--bs=4k",
                "--rw=trimwrite",
                "--verify=crc32c",
                "--trim_percentage=50",
                "--trim_backlog=8",
                "--output-format=json",
            ],
        );
        let fd = dirs(&json(&fo));
        assert_eq!(trims, fd[2].0 - fd[1].0, "the list's trims, as fio's");
    }
    // trim_verify_zero=0: a trimmed block leaves the verify log.
    let mut a = base.to_vec();
    a.push("--trim_verify_zero=0");
    let (c, out, err) = hb_any(&d, &a);
    assert_eq!(c, 0, "{err}");
    let got = dirs(&json(&out));
    assert_eq!(got[0].0, 256 - got[2].0, "{got:?}");
    std::fs::remove_dir_all(d).unwrap();
}

/// On a loop device (root), trimwrite with a trim list: fio's and hostbench's calls are the
/// same, one by one — each BLKDISCARD (the mode's and the list's), write and verify read.
#[test]
fn trim_list_calls_are_fios_on_a_loop_device() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skip: loop devices need root");
        return;
    }
    if !need_fio("trim_list_calls_are_fios_on_a_loop_device")
        || !have_strace("trim_list_calls_are_fios_on_a_loop_device")
    {
        return;
    }
    let d = tmp("trimv-dev");
    let img = d.join("img");
    std::fs::write(&img, vec![0u8; 4 << 20]).unwrap();
    let Some(lo) = crate::common::LoopImage::attach(&img) else {
        return;
    };
    let dev = lo.dev.clone();
    let name = format!("--filename={dev}");
    let args = [
        "--name=t",
        name.as_str(),
        "--size=256k",
        "--bs=4k",
        "--rw=trimwrite",
        "--verify=crc32c",
        "--trim_percentage=30",
        "--trim_backlog=6",
        "--output-format=json",
    ];
    // The device's calls: trims (offset, length), 4 KiB writes and reads (offset).
    let calls = |trace: &Path| -> Vec<String> {
        let t = std::fs::read_to_string(trace).unwrap();
        t.lines()
            .filter_map(|l| {
                let l = l.split_once(' ').map_or(l, |(_, r)| r.trim_start());
                if let Some(r) = l.strip_prefix("ioctl(")
                    && let Some(i) = r.find("BLKDISCARD, [")
                {
                    let nums = &r[i + 13..];
                    let nums = &nums[..nums.find(']')?];
                    return Some(format!("T {nums}"));
                }
                let (kind, r) = if let Some(r) = l.strip_prefix("pwrite64(") {
                    ("W", r)
                } else {
                    ("R", l.strip_prefix("pread64(")?)
                };
                // ..., 4096, OFFSET) = 4096
                let (head, ret) = r.rsplit_once(") = ")?;
                let mut it = head.rsplitn(3, ", ");
                let off = it.next()?;
                let len = it.next()?;
                (len == "4096" && ret.trim() == "4096").then(|| format!("{kind} {off}"))
            })
            .collect()
    };
    let mut seqs = Vec::new();
    for who in ["fio", "hb"] {
        let trace = d.join(format!("{who}.trace"));
        let mut cmd = std::process::Command::new("strace");
        cmd.args(["-f", "-qq", "-e", "trace=ioctl,pwrite64,pread64", "-o"])
            .arg(&trace)
            .current_dir(&d);
        if who == "fio" {
            cmd.arg("fio").args(args);
        } else {
            cmd.env("HOSTBENCH_RESULTS_DB", common::process_store())
                .arg(common::bin())
                .arg("fio")
                .args(args)
                .arg("--no-save");
        }
        let o = &mut cmd;
        let out = o.output().unwrap();
        assert!(
            out.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json(&String::from_utf8_lossy(&out.stdout));
        seqs.push((dirs(&v), calls(&trace)));
    }
    let (f, h) = (&seqs[0], &seqs[1]);
    assert_eq!(h.0, f.0, "read, write, trim");
    assert!(f.1.iter().filter(|c| c.starts_with('T')).count() > 64);
    assert_eq!(h.1, f.1, "the calls, in order");
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn experimental_verify_reads_what_fio_reads() {
    if !need_fio("experimental_verify_reads_what_fio_reads") {
        return;
    }
    let d = tmp("trimv-xv");
    let f = d.join("f.dat");
    let name = format!("--filename={}", s(&f));
    let sets: &[&[&str]] = &[
        &["--rw=write"],
        &["--rw=randwrite"],
        &["--rw=randwrite", "--bsrange=4k-16k"],
        &["--rw=write", "--verify_backlog=8"],
        // Nothing is logged, so nothing goes on the trim list (fio does not abort).
        &["--rw=write", "--trim_percentage=50", "--trim_backlog=4"],
    ];
    for set in sets {
        let mut a = vec![
            "--name=t",
            name.as_str(),
            "--size=256k",
            "--bs=4k",
            "--verify=crc32c",
            "--experimental_verify=1",
            "--output-format=json",
        ];
        a.extend_from_slice(set);
        let _ = std::fs::remove_file(&f);
        let (fo, _) = fio(&d, &a);
        let _ = std::fs::remove_file(&f);
        let (ho, _) = hb(&d, &a);
        let (fv, hv) = (json(&fo), json(&ho));
        assert_eq!(fv["jobs"][0]["error"].as_i64(), Some(0), "{set:?}");
        assert_eq!(hv["jobs"][0]["error"].as_i64(), Some(0), "{set:?}");
        assert_eq!(dirs(&hv), dirs(&fv), "{set:?}: read, write, trim");
    }
    // norandommap: fio regenerates the offsets, and a block written twice fails its
    // numberio check (measured: `verify: bad header numberio 44, wanted 0`, err=84);
    // hostbench reads back each block's newest write, which verifies.
    let a = [
        "--name=t",
        name.as_str(),
        "--size=256k",
        "--bs=4k",
        "--verify=crc32c",
        "--experimental_verify=1",
        "--rw=randwrite",
        "--norandommap",
        "--output-format=json",
    ];
    let _ = std::fs::remove_file(&f);
    let (ho, _) = hb(&d, &a);
    let hv = json(&ho);
    assert_eq!(hv["jobs"][0]["error"].as_i64(), Some(0), "{ho}");
    let got = dirs(&hv);
    assert_eq!(got[1].0, 64);
    assert!(
        got[0].0 > 0 && got[0].0 < 64,
        "{got:?}: the distinct blocks"
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// fio 3.33's verify threads pin the job's own thread to `verify_async_cpus` (their
/// `fio_setaffinity(td->pid, ...)`; measured: the job thread on the mask, the verify threads
/// on all CPUs); hostbench checks in the job's thread and pins it the same. A CPU the
/// machine lacks is fio's error.
#[test]
fn verify_async_cpus_pins_the_job_thread_as_fio() {
    let d = tmp("trimv-cpus");
    let (c, _, e) = hb_any(
        &d,
        &[
            "--name=t",
            "--ioengine=null",
            "--size=1m",
            "--verify=crc32c",
            "--verify_async=1",
            "--verify_async_cpus=4096",
        ],
    );
    assert_eq!(c, 2, "{e}");
    assert!(
        e.contains("verify_async_cpus=4096: CPU 4096 too large (max="),
        "{e}"
    );
    // SAFETY: sysconf has no preconditions.
    let ncpu = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if ncpu < 2 {
        eprintln!("skip: one CPU, nothing to pin to");
        return;
    }
    let cpu = (ncpu - 1).to_string();
    let mask = format!("--verify_async_cpus={cpu}");
    let args = [
        "--name=t",
        "--ioengine=null",
        "--size=1m",
        "--rw=read",
        "--time_based",
        "--runtime=3",
        "--verify=crc32c",
        "--verify_async=1",
        &mask,
        "--thread",
        "--output-format=json",
    ];
    // The Cpus_allowed_list of each thread of `pid`, polled until one is `cpu` (or 2.5 s).
    let pinned = |pid: u32| -> bool {
        let t0 = std::time::Instant::now();
        while t0.elapsed() < std::time::Duration::from_millis(2500) {
            if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
                for t in tasks.flatten() {
                    let st = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
                    if st.lines().any(|l| {
                        l.starts_with("Cpus_allowed_list:")
                            && l.split_whitespace().nth(1) == Some(&cpu)
                    }) {
                        return true;
                    }
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        false
    };
    let mut hbc = common::hb_std();
    hbc.current_dir(&d)
        .arg("fio")
        .args(args)
        .arg("--no-save")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = hbc.spawn().unwrap();
    let hb_pinned = pinned(child.id());
    assert!(child.wait().unwrap().success());
    assert!(hb_pinned, "a hostbench thread runs on CPU {cpu} alone");
    if need_fio("verify_async_cpus_pins_the_job_thread_as_fio") {
        let mut child = std::process::Command::new("fio")
            .args(args)
            .current_dir(&d)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let fio_pinned = pinned(child.id());
        assert!(child.wait().unwrap().success());
        assert!(fio_pinned, "fio's job thread runs on CPU {cpu} alone");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// `verify=null` reads every written block back, as fio does (it pretends to check them);
/// hostbench read nothing back.
#[test]
fn verify_null_reads_back_as_fio() {
    if !need_fio("verify_null_reads_back_as_fio") {
        return;
    }
    let d = tmp("trimv-vnull");
    let f = d.join("f.dat");
    let name = format!("--filename={}", s(&f));
    for rw in ["write", "randwrite"] {
        let rwo = format!("--rw={rw}");
        let a = [
            "--name=t",
            name.as_str(),
            "--size=64k",
            "--bs=4k",
            rwo.as_str(),
            "--verify=null",
            "--output-format=json",
        ];
        let (fo, _) = fio(&d, &a);
        let (ho, _) = hb(&d, &a);
        let (fv, hv) = (json(&fo), json(&ho));
        assert_eq!(dirs(&fv)[0].0, 16, "{rw}: fio reads back");
        assert_eq!(dirs(&hv), dirs(&fv), "{rw}: read, write, trim");
    }
    std::fs::remove_dir_all(d).unwrap();
}
