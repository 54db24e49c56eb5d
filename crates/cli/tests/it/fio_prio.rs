//! fio 3.33's per-I/O priorities (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`,
//! `cmdprio_bssplit` on libaio and io_uring) side by side with the installed fio: what each
//! I/O carries to the kernel (the iocbs of `io_submit` through strace), the per-priority
//! statistics in the normal layout (`clat prio C/L` lines and percentile blocks), in JSON
//! (`prios`) and json+ (`bins`), terse's field count (fio adds none), the log's priority
//! field, fio's `cmdprio-bssplit.fio` adapted, and the errors. Latencies are not compared,
//! only which priorities appear, their keys and their counts.

use super::fio::tmp;
use super::fio_engines::have_strace;
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_seq::need_fio;
use crate::common;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// A priority fio's way: (class, level).
fn prio(p: &Value) -> (u64, u64) {
    (
        p["prioclass"].as_u64().unwrap(),
        p["prio"].as_u64().unwrap(),
    )
}

/// One `prios` entry: (class, level), its object's keys, its latency's keys, N.
type PrioEntry = ((u64, u64), Vec<String>, Vec<String>, u64);

/// The direction `dir` of the first job: its keys, and its `prios` entries.
fn prios(out: &str, dir: &str) -> (Vec<String>, Vec<PrioEntry>) {
    let d = &doc(out)["jobs"][0][dir];
    let keys = d.as_object().unwrap().keys().cloned().collect();
    let list = d["prios"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    let o = p.as_object().unwrap();
                    let lat = o.iter().find(|(k, _)| k.ends_with("_ns")).unwrap().1;
                    (
                        prio(p),
                        o.keys().cloned().collect(),
                        lat.as_object().unwrap().keys().cloned().collect(),
                        lat["N"].as_u64().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    (keys, list)
}

/// The lines of a normal report that name a priority, with their figures cut off.
fn prio_lines(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.contains(" prio "))
        .map(|l| {
            // `clat prio 3/0 (usec): min=...` and `clat prio 3/0 (82.03% of IOs) percentiles
            // (usec):`: name and kind kept, shares and units (timing) dropped.
            let name = l.split(" (").next().unwrap().to_string();
            if l.contains("percentiles") {
                format!("{name} percentiles")
            } else {
                name
            }
        })
        .collect()
}

fn both(d: &Path, args: &[&str]) -> (Ran, Ran) {
    let (h, p) = (hb(d, args), fio(d, args));
    assert_eq!(h.code, 0, "{args:?}: {}", h.err);
    assert_eq!(p.code, 0, "fio {args:?}: {}", p.err);
    (h, p)
}

#[test]
fn per_priority_statistics_are_fios_in_every_layout() {
    if !need_fio("per_priority_statistics_are_fios_in_every_layout") {
        return;
    }
    let d = tmp("prio");
    for engine in ["--ioengine=libaio", "--ioengine=io_uring"] {
        for extra in [
            // 30% of the reads best-effort level 5, the rest idle (the clone's own).
            vec![
                "--prioclass=3",
                "--cmdprio_percentage=30",
                "--cmdprio_class=2",
                "--cmdprio=5",
            ],
            // The total latency with lat_percentiles; the clone's own priority is 0/0.
            vec![
                "--cmdprio_percentage=50",
                "--cmdprio_class=3",
                "--lat_percentiles=1",
            ],
            // Per direction: writes only (reads keep one priority: no lines for them).
            vec![
                "--rw=randrw",
                "--cmdprio_percentage=0,40",
                "--cmdprio_class=2,3",
            ],
            // Every I/O at the same priority: one priority with samples, no lines.
            vec!["--cmdprio_percentage=100", "--cmdprio_class=2"],
            // A split keyed on the exact block size, entries with their own priority.
            vec![
                "--bssplit=4k/50:8k/50",
                "--cmdprio_bssplit=4k/60/2/1:4k/40/3/2:8k/0",
            ],
        ] {
            let mut args = vec![
                "--name=p",
                engine,
                "--filename=pf",
                "--size=2m",
                "--rw=randread",
                "--direct=1",
                "--iodepth=4",
            ];
            // A later --rw wins, as in fio.
            args.extend_from_slice(&extra);
            let what = format!("{engine} {extra:?}");
            let mut json = args.clone();
            json.push("--output-format=json");
            let (h, p) = both(&d, &json);
            for dir in ["read", "write"] {
                let (hk, hp) = prios(&h.out, dir);
                let (pk, pp) = prios(&p.out, dir);
                assert_eq!(hk, pk, "{what} {dir}: keys");
                let set = |v: &[PrioEntry]| {
                    v.iter()
                        .map(|e| (e.0, e.1.clone(), e.2.clone()))
                        .collect::<BTreeSet<_>>()
                };
                // With a 30-70 draw over hundreds of I/Os both have both priorities; the
                // split of 4k reads the same (8k ones keep the clone's).
                assert_eq!(set(&hp), set(&pp), "{what} {dir}");
                let total = doc(&h.out)["jobs"][0][dir]["total_ios"].as_u64().unwrap();
                if !hp.is_empty() {
                    assert_eq!(hp.iter().map(|e| e.3).sum::<u64>(), total, "{what} {dir}");
                }
            }
            // The share drawn: within 10 points of what was asked (fio's own draw, too).
            if extra.contains(&"--cmdprio_percentage=30") {
                for out in [&h.out, &p.out] {
                    let (_, l) = prios(out, "read");
                    let n: u64 = l.iter().map(|e| e.3).sum();
                    let be = l.iter().find(|e| e.0 == (2, 5)).unwrap().3;
                    let share = be as f64 / n as f64;
                    assert!((0.2..0.4).contains(&share), "{what}: {share}");
                }
            }
            // The normal layout: the same lines, in the same order.
            let (h, p) = both(&d, &args);
            let (hl, pl) = (prio_lines(&h.out), prio_lines(&p.out));
            let sorted = |v: &[String]| v.iter().cloned().collect::<BTreeSet<_>>();
            assert_eq!(sorted(&hl), sorted(&pl), "{what}:\n{}\n{}", h.out, p.out);
            // json+: each priority's bins.
            let mut plus = args.clone();
            plus.push("--output-format=json+");
            let (h, p) = both(&d, &plus);
            assert_eq!(prios(&h.out, "read").1.len(), prios(&p.out, "read").1.len());
            for (_, l) in [prios(&h.out, "read"), prios(&p.out, "read")] {
                for e in l {
                    assert!(e.2.contains(&"bins".to_string()), "{what}: {:?}", e.2);
                }
            }
            // Terse: fio adds no field for priorities.
            let mut terse = args.clone();
            terse.push("--minimal");
            let (h, p) = both(&d, &terse);
            let fields = |o: &str| o.trim().split(';').count();
            assert_eq!(fields(&h.out), fields(&p.out), "{what}");
        }
    }
    // group_reporting over clones of different `prio`: fio keeps per-priority statistics.
    let args = [
        "--group_reporting",
        "--ioengine=psync",
        "--filename=pf",
        "--size=256k",
        "--name=a",
        "--prio=1",
        "--name=b",
        "--prio=5",
    ];
    let (h, p) = both(&d, &args);
    assert_eq!(prio_lines(&h.out), prio_lines(&p.out), "{}", h.out);
    assert_eq!(prio_lines(&h.out).len(), 4, "{}", h.out);
    // A job without priorities of its own has none.
    let (h, p) = both(
        &d,
        &[
            "--name=a",
            "--ioengine=libaio",
            "--filename=pf",
            "--size=256k",
        ],
    );
    assert!(prio_lines(&h.out).is_empty() && prio_lines(&p.out).is_empty());
}

/// Each iocb of `program args`'s `io_submit` calls: Some(aio_reqprio text) when it carries
/// IOCB_FLAG_IOPRIO, None otherwise.
fn iocb_prios(d: &Path, program: &str, args: &[&str]) -> Vec<Option<String>> {
    let log = d.join("iocb.txt");
    let o = std::process::Command::new("timeout")
        .args([
            "-k",
            "5",
            "300",
            "strace",
            "-f",
            "-qq",
            "-e",
            "trace=io_submit",
            "-o",
        ])
        .arg(&log)
        .arg(program)
        .args(args)
        .current_dir(d)
        .env("HOSTBENCH_RESULTS_DB", d.join("r.db"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t = std::fs::read_to_string(&log).unwrap();
    let mut out = Vec::new();
    for l in t.lines().filter(|l| l.contains("io_submit(")) {
        for cb in l.split("{aio_data=").skip(1) {
            let flag = cb.contains("IOCB_FLAG_IOPRIO");
            let req = cb
                .split("aio_reqprio=")
                .nth(1)
                .map(|r| r.split(", aio_fildes").next().unwrap().to_string());
            assert_eq!(flag, req.is_some(), "{cb}");
            out.push(req);
        }
    }
    out
}

#[test]
fn each_io_carries_its_priority_to_the_kernel_as_fios() {
    if !need_fio("each_io_carries_its_priority_to_the_kernel_as_fios")
        || !have_strace("each_io_carries_its_priority_to_the_kernel_as_fios")
    {
        return;
    }
    let d = tmp("prioio");
    let hbp = common::bin();
    let hbp = hbp.to_str().expect("a UTF-8 path");
    let args = [
        "--name=p",
        "--ioengine=libaio",
        "--filename=pf",
        "--size=2m",
        "--bs=4k",
        "--rw=randread",
        "--direct=1",
        "--iodepth=4",
        "--cmdprio_percentage=25",
        "--cmdprio_class=2",
        "--cmdprio=6",
    ];
    // The file first, so neither run lays it out under strace.
    let _ = hb(&d, &args);
    let mut ours = vec!["fio"];
    ours.extend_from_slice(&args);
    ours.push("--no-save");
    let h = iocb_prios(&d, hbp, &ours);
    let p = iocb_prios(&d, "fio", &args);
    assert_eq!(h.len(), 512);
    assert_eq!(p.len(), 512);
    let kinds = |v: &[Option<String>]| v.iter().flatten().cloned().collect::<BTreeSet<_>>();
    assert_eq!(kinds(&h), kinds(&p));
    assert_eq!(
        kinds(&h).into_iter().collect::<Vec<_>>(),
        vec!["IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 6)".to_string()]
    );
    for v in [&h, &p] {
        let share = v.iter().flatten().count() as f64 / v.len() as f64;
        assert!((0.18..0.32).contains(&share), "{share}");
    }
}

#[test]
fn fios_cmdprio_bssplit_example_runs_as_in_fio() {
    if !need_fio("fios_cmdprio_bssplit_example_runs_as_in_fio") {
        return;
    }
    // examples/cmdprio-bssplit.fio, on a file, with a 128 MiB region; priorities of
    // realtime class need CAP_SYS_ADMIN, so the realtime entries become best-effort ones
    // for a run as any user. fio 3.33 stops a randrw job with different block sizes per
    // direction early (see docs/fio.md), so its draws may miss a rare priority: its
    // priorities are a subset of hostbench's, which are every one the job file names.
    let d = tmp("priobss");
    let job = "[global]
filename=bf
size=128m
direct=1
write_lat_log=prio-run.log
log_prio=1
rw=randrw
ioengine=libaio
iodepth=16

[cmdprio]
bssplit=64k/40:1024k/60,1024k/100
cmdprio_bssplit=64k/100:1024k/0,1024k/0
cmdprio_class=2
cmdprio=0

[cmdprio-adv]
stonewall
bssplit=64k/40:1024k/60,1024k/100
cmdprio_bssplit=64k/25/2/1:64k/75/3/2:1024k/0,1024k/0

[cmdprio-adv-def]
stonewall
prioclass=2
prio=7
bssplit=64k/40:1024k/60,1024k/100
cmdprio_bssplit=64k/25/2/1:64k/75/3/2:1024k/0,1024k/0
";
    for who in ["hb", "fio"] {
        std::fs::create_dir_all(d.join(who)).unwrap();
        std::fs::write(d.join(who).join("bss.fio"), job).unwrap();
    }
    let args = ["bss.fio", "--output-format=json"];
    let h = hb(&d.join("hb"), &args);
    let p = fio(&d.join("fio"), &args);
    assert_eq!((h.code, p.code), (0, 0), "{}\n{}", h.err, p.err);
    let (hd, pd) = (doc(&h.out), doc(&p.out));
    for i in 0..3 {
        let set = |v: &Value| {
            v["jobs"][i]["read"]["prios"]
                .as_array()
                .map(|a| a.iter().map(prio).collect::<BTreeSet<_>>())
                .unwrap_or_default()
        };
        assert!(set(&pd).is_subset(&set(&hd)), "job {i}");
        assert!(hd["jobs"][i]["write"].get("prios").is_none());
        assert!(pd["jobs"][i]["write"].get("prios").is_none());
    }
    let want: [&[(u64, u64)]; 3] = [
        &[(0, 0), (2, 0)],
        &[(0, 0), (2, 1), (3, 2)],
        &[(2, 7), (2, 1), (3, 2)],
    ];
    for (i, w) in want.iter().enumerate() {
        let got: BTreeSet<_> = hd["jobs"][i]["read"]["prios"]
            .as_array()
            .unwrap()
            .iter()
            .map(prio)
            .collect();
        assert_eq!(got, w.iter().copied().collect(), "job {i}");
    }
    // The latency logs' priority field (log_prio=1: the whole value): the same values.
    for n in 1..=3 {
        let vals = |who: &str| {
            let t = std::fs::read_to_string(d.join(who).join(format!("prio-run.log_clat.{n}.log")))
                .unwrap();
            t.lines()
                .map(|l| l.rsplit(", ").next().unwrap().to_string())
                .collect::<BTreeSet<_>>()
        };
        assert!(vals("fio").is_subset(&vals("hb")), "log {n}");
        let want: &[&str] = match n {
            1 => &["0x0000", "0x4000"],
            2 => &["0x0000", "0x4001", "0x6002"],
            _ => &["0x4007", "0x4001", "0x6002"],
        };
        assert_eq!(
            vals("hb"),
            want.iter().map(|s| s.to_string()).collect(),
            "log {n}"
        );
    }
}

#[test]
fn bad_priority_options_are_one_clear_line() {
    let d = tmp("priobad");
    let bad = |args: &[&str], want: &str| {
        let o = common::hb()
            .current_dir(&d)
            .arg("fio")
            .args(["--name=c", "--size=64k"])
            .args(args)
            .arg("--no-save")
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    };
    bad(
        &["--cmdprio_percentage=10"],
        "cmdprio_percentage is an option of ioengine=libaio and ioengine=io_uring",
    );
    bad(
        &["--ioengine=libaio", "--cmdprio_percentage=101"],
        "cmdprio_percentage=101: expected a whole number from 0 to 100",
    );
    bad(
        &["--ioengine=libaio", "--cmdprio_class=0"],
        "cmdprio_class=0: expected a whole number from 1 to 3",
    );
    bad(
        &["--ioengine=io_uring", "--cmdprio=9"],
        "cmdprio=9: expected a whole number from 0 to 7",
    );
    bad(
        &[
            "--ioengine=libaio",
            "--cmdprio_percentage=10",
            "--cmdprio_bssplit=4k/10",
        ],
        "mutually exclusive",
    );
    bad(
        &["--ioengine=libaio", "--cmdprio_bssplit=4k/70:4k/40"],
        "exceeds 100",
    );
}

/// The per-priority statistics are part of the stored result (schema-valid): a stored run
/// shows in fio's layouts as it printed, byte for byte, priority lines included.
#[test]
fn a_stored_run_keeps_its_priorities() {
    let d = tmp("priostored");
    let db = d.join("r.db");
    let run = |args: &[&str]| {
        let o = common::hb_with_store(&db)
            .current_dir(&d)
            .args(args)
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let printed = run(&[
        "fio",
        "--name=s",
        "--ioengine=libaio",
        "--filename=sf",
        "--size=1m",
        "--rw=randrw",
        "--iodepth=4",
        "--cmdprio_percentage=40",
        "--cmdprio_class=3",
        "--output-format=normal,json",
    ]);
    assert!(printed.contains("clat prio 3/0 ("), "{printed}");
    assert!(printed.contains("clat prio 0/0 ("), "{printed}");
    let list = run(&["results", "list", "--format", "json", "--limit", "1"]);
    let list: Value = serde_json::from_str(&list).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_string();
    assert_eq!(run(&["results", "show", &id, "-f", "fio"]), printed);
    let stored: Value =
        serde_json::from_str(&run(&["results", "show", &id, "-f", "json"])).unwrap();
    common::assert_valid(&stored, "fio run with per-I/O priorities");
    let block = &stored["fio"]["blocks"][0];
    for dir in ["read", "write"] {
        let p = block[dir]["prios"].as_array().unwrap();
        assert_eq!(p.len(), 2, "{dir}: {p:?}");
        assert_eq!(p[0]["ioprio"], 0, "the clone's own first");
        assert_eq!(p[1]["ioprio"], 3 << 13);
        let n: u64 = p.iter().map(|e| e["lat"]["n"].as_u64().unwrap()).sum();
        assert_eq!(n, block[dir]["total_ios"].as_u64().unwrap());
    }
    std::fs::remove_dir_all(d).unwrap();
}
