//! Block devices and sizes as fio 3.33 takes them: a device's size when none is given
//! (and the base of percentages), a `size` past the device's end stopped there, as fio
//! does, side by side with the installed fio on an unmounted loop device (root only;
//! skipped elsewhere).

use super::fio::tmp;
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_seq::need_fio;

/// (exit status, read I/Os, bytes read) of a run whose JSON report is on stdout.
fn reads(r: &Ran) -> (i32, u64, u64) {
    if r.code != 0 {
        return (r.code, 0, 0);
    }
    let d = doc(&r.out);
    let j = &d["jobs"].as_array().unwrap()[0]["read"];
    (
        r.code,
        j["total_ios"].as_u64().unwrap(),
        j["io_bytes"].as_u64().unwrap(),
    )
}

#[test]
fn a_block_device_gives_its_size_and_ends_the_region_as_fio() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skip: loop devices need root");
        return;
    }
    const DEV: u64 = 32 << 20;
    let d = tmp("devsize");
    let img = d.join("img");
    std::fs::File::create(&img).unwrap().set_len(DEV).unwrap();
    let img2 = d.join("img2");
    std::fs::File::create(&img2)
        .unwrap()
        .set_len(DEV / 2)
        .unwrap();
    // Detached however the test ends.
    let Some(lo) = crate::common::LoopImage::attach(&img) else {
        return;
    };
    let Some(lo2) = crate::common::LoopImage::attach(&img2) else {
        return;
    };
    let dev = format!("--filename={}", lo.dev);
    let both = format!("--filename={}:{}", lo.dev, lo2.dev);
    let m = |n: u64| format!("{}m", n >> 20);
    let (twice, off_in, off_past) = (m(2 * DEV), m(DEV - (4 << 20)), m(DEV + (8 << 20)));
    let size8 = "--size=8m".to_string();
    // (case, arguments, what hostbench must do without fio to compare with: exit status,
    // and bytes read when it runs)
    let cases: Vec<(&str, Vec<String>, (i32, u64))> = vec![
        (
            "no size: the device's",
            vec!["--rw=read".into(), "--bs=1m".into()],
            (0, DEV),
        ),
        (
            "no size, number_ios",
            vec![
                "--rw=randread".into(),
                "--bs=4k".into(),
                "--direct=1".into(),
                "--number_ios=1000".into(),
            ],
            (0, 1000 * 4096),
        ),
        (
            "no size, io_size",
            vec![
                "--rw=randread".into(),
                "--bs=4k".into(),
                "--direct=1".into(),
                "--io_size=4m".into(),
            ],
            (0, 4 << 20),
        ),
        (
            "percent of the device",
            vec![
                "--rw=read".into(),
                "--bs=4k".into(),
                "--size=50%".into(),
                "--offset=25%".into(),
            ],
            (0, DEV / 2),
        ),
        (
            "size past the end: a sequential read stops there",
            vec![
                "--rw=read".into(),
                "--bs=1m".into(),
                format!("--size={twice}"),
            ],
            (0, DEV),
        ),
        (
            "from an offset, past the end",
            vec![
                "--rw=read".into(),
                "--bs=1m".into(),
                size8.clone(),
                format!("--offset={off_in}"),
            ],
            (0, 4 << 20),
        ),
        (
            "past the end, blocks that do not divide it, two loops",
            vec![
                "--rw=read".into(),
                "--bs=3m".into(),
                format!("--size={twice}"),
                "--loops=2".into(),
            ],
            (0, 2 * (DEV - DEV % (3 << 20))),
        ),
        (
            "random, past the end: the map fills at the device's end",
            vec![
                "--rw=randread".into(),
                "--bs=1m".into(),
                format!("--size={twice}"),
            ],
            (0, DEV),
        ),
        (
            "random without the map: size's bytes within the device",
            vec![
                "--rw=randread".into(),
                "--bs=1m".into(),
                format!("--size={twice}"),
                "--norandommap".into(),
            ],
            (0, 2 * DEV),
        ),
        (
            "no size, offset past the end",
            vec![
                "--rw=read".into(),
                "--bs=1m".into(),
                format!("--offset={off_past}"),
            ],
            (2, 0),
        ),
    ];
    let peer = need_fio("a_block_device_gives_its_size_and_ends_the_region_as_fio");
    let mut got = Vec::new();
    for (what, extra, want) in &cases {
        let mut args = vec!["--name=a".to_string(), dev.clone()];
        args.extend(extra.iter().cloned());
        args.push("--output-format=json".into());
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let h = hb(&d, &a);
        let p = peer.then(|| fio(&d, &a));
        got.push((what, h, p, want));
    }
    // Several devices without a size: each read whole.
    let a = [
        "--name=a",
        both.as_str(),
        "--rw=read",
        "--bs=1m",
        "--output-format=json",
    ];
    let h2 = hb(&d, &a);
    let p2 = peer.then(|| fio(&d, &a));
    // A random read drawn past the device's end ends the job there (fio's file done).
    let a = [
        "--name=a",
        dev.as_str(),
        "--rw=randread",
        "--bs=1m",
        size8.as_str(),
        "--offset=28m",
        "--output-format=json",
    ];
    let h3 = hb(&d, &a);
    let p3 = peer.then(|| fio(&d, &a));
    // Reads and writes, each sequential (the device is the test's own, unmounted): the
    // first direction at the device's end ends the pass, as fio's file done.
    let mut mixed = Vec::new();
    for extra in [
        &["--rwmixread=50"][..],
        &["--rwmixread=70"],
        &["--loops=2"],
        &["--io_size=100m"],
        &[size8.as_str(), "--offset=28m"],
    ] {
        let mut a = vec![
            "--name=a",
            dev.as_str(),
            "--rw=rw",
            "--bs=1m",
            "--output-format=json",
        ];
        if !extra.contains(&size8.as_str()) {
            a.push("--size=64m");
        }
        a.extend_from_slice(extra);
        mixed.push((extra.join(" "), hb(&d, &a), peer.then(|| fio(&d, &a))));
    }
    drop((lo, lo2));
    let rw = |r: &Ran| {
        assert_eq!(r.code, 0, "{}", r.err);
        let j = &doc(&r.out)["jobs"][0];
        (
            j["read"]["io_bytes"].as_u64().unwrap(),
            j["write"]["io_bytes"].as_u64().unwrap(),
        )
    };
    for (what, h, p) in mixed {
        let (r, w) = rw(&h);
        assert!(r <= 2 * DEV && w <= 2 * DEV, "{what}: {r} {w}");
        if let Some(p) = p {
            assert_eq!((r, w), rw(&p), "{what}: as fio");
        }
    }
    for (what, h, p, want) in got {
        let r = reads(&h);
        match p {
            // fio's exit status is 1 where hostbench refuses the job (2) before it runs.
            Some(p) if p.code != 0 => assert_eq!(r.0, 2, "{what}: fio failed ({})", p.err),
            Some(p) => assert_eq!(r, reads(&p), "{what}: as fio\n{}", h.err),
            None => {
                assert_eq!(r.0, want.0, "{what}: {}", h.err);
                if want.0 == 0 {
                    assert_eq!(r.2, want.1, "{what}");
                }
            }
        }
        if r.0 == 2 {
            assert!(h.err.contains("offset"), "{what}: says why: {}", h.err);
        }
    }
    assert_eq!(
        reads(&h2),
        (0, (DEV + DEV / 2) >> 20, DEV + DEV / 2),
        "{}",
        h2.err
    );
    if let Some(p) = p2 {
        assert_eq!(reads(&h2), reads(&p));
    }
    let r3 = reads(&h3);
    assert!(r3.0 == 0 && r3.2 <= 4 << 20, "{r3:?} {}", h3.err);
    if let Some(p) = p3 {
        assert_eq!(r3, reads(&p), "a draw past the end ends it as fio");
    }
}

/// fio 3.33's time values: whole µs, a suffix it does not know (`ns`, `sec`, `min`) leaves
/// the number in µs, and the fraction is dropped (`1.5s` is 1 s). Every time option takes
/// them, as fio (hostbench refused `ns` and read `2sec` as 2 s).
#[test]
fn time_units_are_fios() {
    let d = tmp("devsize-time");
    let base = [
        "--name=a",
        "--ioengine=null",
        "--size=1m",
        "--rw=read",
        "--output-format=json",
    ];
    let runtime_ms = |r: &Ran| -> u64 {
        assert_eq!(r.code, 0, "{}", r.err);
        doc(&r.out)["jobs"][0]["job_runtime"].as_u64().unwrap()
    };
    let peer = need_fio("time_units_are_fios");
    for opt in [
        "--runtime=1ns",
        "--thinktime=10ns",
        "--startdelay=1ns",
        "--max_latency=500ns",
        "--latency_target=100ns",
        "--thinktime=1.5ms",
    ] {
        let mut a = base.to_vec();
        a.push(opt);
        let h = hb(&d, &a);
        assert_eq!(h.code, 0, "{opt}: taken as fio takes it: {}", h.err);
        if peer {
            assert_eq!(fio(&d, &a).code, 0, "{opt}: fio takes it");
        }
    }
    // A time-based job of `2sec` runs 2 µs in fio (its unit when the suffix is unknown),
    // `2.9s` runs 2 s: the report's job_runtime in ms says which.
    let timed = |rt: &str| {
        let mut a = base.to_vec();
        a.extend(["--time_based", rt]);
        let h = runtime_ms(&hb(&d, &a));
        let p = peer.then(|| runtime_ms(&fio(&d, &a)));
        (h, p)
    };
    let (h, p) = timed("--runtime=2sec");
    assert!(h < 500, "2sec is 2 µs: ran {h} ms");
    if let Some(p) = p {
        assert!(p < 500, "fio: {p} ms");
    }
    // fio says nothing; hostbench says how it read the value (on stderr, once).
    let mut a = base.to_vec();
    a.extend(["--time_based", "--runtime=2sec"]);
    let err = hb(&d, &a).err;
    assert_eq!(
        err.matches("note: runtime=2sec is 2 µs, as fio 3.33 reads it")
            .count(),
        1,
        "{err}"
    );
    // (A wide gap: a loaded machine overruns a runtime by a few hundred ms.)
    let (h, p) = timed("--runtime=2.9s");
    assert!((1900..2850).contains(&h), "2.9s is 2 s: ran {h} ms");
    if let Some(p) = p {
        assert!((1900..2850).contains(&p), "fio: {p} ms");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// `filesize` with percentages (fio's `setup_files`): `offset=P%` is of the file's length
/// before the run (0 for a new file), `size=P%` of the length filesize gives; the file is
/// laid out to the region's end. Exit status, bytes read and the file's length as fio's.
#[test]
fn filesize_with_percentages_is_fios() {
    let peer = need_fio("filesize_with_percentages_is_fios");
    // (case, length of the file before, arguments)
    let cases: [(&str, Option<u64>, &[&str]); 5] = [
        (
            "new file",
            None,
            &["--filesize=16m", "--offset=25%", "--size=50%"],
        ),
        (
            "existing shorter file",
            Some(4 << 20),
            &["--filesize=16m", "--offset=25%", "--size=50%"],
        ),
        (
            "existing shorter file, offset only",
            Some(4 << 20),
            &["--filesize=16m", "--offset=25%"],
        ),
        (
            "new file, size only",
            None,
            &["--filesize=16m", "--size=25%"],
        ),
        (
            "existing file within filesize",
            Some(8 << 20),
            &["--filesize=4m-16m", "--offset=50%", "--size=50%"],
        ),
    ];
    let run = |tag: &str, before: Option<u64>, extra: &[&str], real: bool| {
        let d = tmp(tag);
        if let Some(n) = before {
            std::fs::write(d.join("f"), vec![0x5a; n as usize]).unwrap();
        }
        let mut a = vec![
            "--name=a",
            "--filename=f",
            "--rw=read",
            "--bs=1m",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        let r = if real { fio(&d, &a) } else { hb(&d, &a) };
        let len = std::fs::metadata(d.join("f")).map_or(0, |m| m.len());
        std::fs::remove_dir_all(&d).unwrap();
        (reads(&r), len, r.err)
    };
    for (i, (what, before, extra)) in cases.iter().enumerate() {
        let (h, hlen, err) = run(&format!("devsize-fs{i}"), *before, extra, false);
        assert_eq!(h.0, 0, "{what}: {err}");
        // The region ends at the file's end at most.
        assert!(h.2 <= hlen, "{what}: read {} of a {hlen}-byte file", h.2);
        if peer {
            let (p, plen, _) = run(&format!("devsize-fs{i}-fio"), *before, extra, true);
            assert_eq!((h, hlen), (p, plen), "{what}: as fio");
        }
    }
}

/// The scheduler selected in a `queue/scheduler` file's text (`[mq-deadline] none`).
fn selected(text: &str) -> Option<String> {
    let a = text.find('[')?;
    let b = a + text[a..].find(']')?;
    Some(text[a + 1..b].to_string())
}

/// `ioscheduler=NAME` on a block device named in `filename=` (a loop device; root only):
/// each clone selects NAME in the disk's `queue/scheduler` as fio's `switch_ioscheduler`
/// does (seen from `exec_postrun` while the job's disk is still switched); hostbench
/// selects the earlier one again when the run ends, where fio leaves it switched. A
/// scheduler the kernel does not offer: fio's `unable to set io scheduler` and the job's
/// EINVAL, as fio. A file on a filesystem: refused (exit 2), its disk untouched.
#[test]
fn ioscheduler_switches_a_named_device_as_fio_and_restores_it() {
    let d = tmp("iosched");
    let img = d.join("img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let Some(lo) = crate::common::LoopImage::attach(&img) else {
        return;
    };
    let name = lo.dev.trim_start_matches("/dev/");
    let sched = format!("/sys/block/{name}/queue/scheduler");
    let Ok(text) = std::fs::read_to_string(&sched) else {
        eprintln!("skip: {sched} is not there");
        return;
    };
    let before = selected(&text).unwrap_or_else(|| panic!("{sched}: {text}"));
    // Another scheduler the kernel offers, if any.
    let other = text
        .split_whitespace()
        .map(|w| w.trim_matches(['[', ']']))
        .find(|w| *w != before)
        .map(str::to_string);
    let dev = format!("--filename={}", lo.dev);
    let run = |target: &str, numjobs: &str| {
        vec![
            "--name=s".to_string(),
            dev.clone(),
            format!("--ioscheduler={target}"),
            "--rw=read".into(),
            "--size=1m".into(),
            format!("--numjobs={numjobs}"),
            format!("--exec_postrun=cat {sched}"),
            "--output-format=json".into(),
        ]
    };
    let strs = |v: &[String]| v.iter().map(String::as_str).collect::<Vec<_>>().join(" ");
    let postrun = || selected(&std::fs::read_to_string(d.join("s.postrun.txt")).unwrap());
    if let Some(other) = &other {
        let args = run(other, "2");
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let h = hb(&d, &a);
        assert_eq!(h.code, 0, "{}: {}", strs(&args), h.err);
        assert_eq!(doc(&h.out)["jobs"][0]["error"], 0);
        assert_eq!(
            postrun().as_deref(),
            Some(other.as_str()),
            "switched during the run"
        );
        let now = selected(&std::fs::read_to_string(&sched).unwrap());
        assert_eq!(
            now.as_deref(),
            Some(before.as_str()),
            "restored after the run"
        );
        if need_fio("ioscheduler_switches_a_named_device_as_fio_and_restores_it") {
            let p = fio(&d, &a);
            let now = selected(&std::fs::read_to_string(&sched).unwrap());
            // fio leaves it switched: select the earlier one again.
            std::fs::write(&sched, &before).unwrap();
            assert_eq!(p.code, 0, "{}", p.err);
            assert_eq!(postrun().as_deref(), Some(other.as_str()));
            assert_eq!(
                now.as_deref(),
                Some(other.as_str()),
                "fio leaves it switched"
            );
            for r in [&h, &p] {
                assert!(!r.err.contains("io scheduler"), "{}", r.err);
            }
        }
    } else {
        eprintln!("{sched} offers only {before}: the switch itself not tried");
    }
    // A scheduler not offered: the job fails with EINVAL, after fio's line.
    let args = run("nosuch-sched", "1");
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let h = hb(&d, &a);
    assert!(
        h.err
            .contains("fio: unable to set io scheduler to nosuch-sched"),
        "{}",
        h.err
    );
    assert_eq!(doc(&h.out)["jobs"][0]["error"], 22, "{}", h.out);
    assert_eq!(doc(&h.out)["jobs"][0]["read"]["total_ios"], 0);
    let now = selected(&std::fs::read_to_string(&sched).unwrap());
    assert_eq!(now.as_deref(), Some(before.as_str()));
    if need_fio("ioscheduler_switches_a_named_device_as_fio_and_restores_it") {
        let p = fio(&d, &a);
        std::fs::write(&sched, &before).unwrap();
        assert_eq!(h.code, p.code, "{}\n{}", h.err, p.err);
        assert!(
            p.err
                .contains("fio: unable to set io scheduler to nosuch-sched")
        );
        assert_eq!(doc(&p.out)["jobs"][0]["error"], 22);
    }
    // A file on a filesystem: refused, nothing run, nothing switched.
    let f = hb(
        &d,
        &[
            "--name=f",
            "--filename=plain",
            "--size=64k",
            "--ioscheduler=none",
        ],
    );
    if f.code == 0 {
        // A filesystem without a disk (tmpfs): fio switches nothing either.
        assert!(!f.err.contains("ioscheduler"), "{}", f.err);
    } else {
        assert_eq!(f.code, 2, "{}", f.err);
        assert!(
            f.err
                .contains("hostbench switches only a block device named in filename="),
            "{}",
            f.err
        );
        assert!(!d.join("plain").exists(), "refused, yet laid out");
    }
}
