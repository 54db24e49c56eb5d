//! fio's remaining log and statistics options, side by side with the installed fio where it
//! is here: `bwavgtime`/`iopsavgtime` (the windows of the bw/iops samples), log times since
//! the Unix or another clock's epoch (`log_unix_epoch`, `log_alternate_epoch`),
//! `log_compression`/`log_store_compressed` (`.log.fz` files and `--inflate-log`).
//!
//! Without fio the comparisons are skipped (the checks of hostbench's own output still
//! run), unless `HOSTBENCH_TEST_FIO` is set.

use super::fio::{json, tmp};
use super::fio_seq::{fio, hb, need_fio};
use crate::common;
use std::path::Path;

/// The files of `dir` whose names contain `.log`, sorted.
fn logs(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".log"))
        .collect();
    v.sort();
    v
}

/// Rows of log text, split on fio's `", "`.
fn rows_of(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| l.split(", ").map(String::from).collect())
        .collect()
}

fn rows(dir: &Path, name: &str) -> Vec<Vec<String>> {
    rows_of(&std::fs::read_to_string(dir.join(name)).unwrap())
}

/// The read direction's (bw_samples, iops_samples) of the first job of fio's JSON.
fn samples(out: &str) -> (u64, u64) {
    let v = json(out);
    let r = &v["jobs"][0]["read"];
    (
        r["bw_samples"].as_u64().unwrap(),
        r["iops_samples"].as_u64().unwrap(),
    )
}

const RATE_JOB: &[&str] = &[
    "--name=x",
    "--ioengine=null",
    "--size=64m",
    "--time_based",
    "--runtime=2",
    "--rate_iops=200",
    "--rw=read",
    "--output-format=json",
];

/// The bandwidth and IOPS samples each have their window: `bwavgtime`/`iopsavgtime`, or a
/// windowed log's `log_avg_msec` for its own kind only (and the smaller of the two for a
/// log when both are given), as fio's `init.c` sets them.
#[test]
fn bw_and_iops_samples_have_their_own_windows() {
    // (options, fio 3.33's bw_samples and iops_samples on this 2 s job, log rows)
    type Case<'a> = (&'a [&'a str], (u64, u64), Option<usize>);
    let cases: &[Case] = &[
        (&["--bwavgtime=250", "--iopsavgtime=1000"], (7, 1), None),
        (&["--write_bw_log=w", "--log_avg_msec=250"], (7, 3), Some(7)),
        (
            &[
                "--write_iops_log=w",
                "--log_avg_msec=1000",
                "--bwavgtime=250",
            ],
            (7, 1),
            Some(1),
        ),
        (
            &["--write_bw_log=w", "--log_avg_msec=250", "--bwavgtime=1000"],
            (1, 3),
            Some(1),
        ),
    ];
    let with_fio = need_fio("bw_and_iops_samples_have_their_own_windows");
    for (opts, want, log_rows) in cases {
        let args: Vec<&str> = RATE_JOB.iter().chain(opts.iter()).copied().collect();
        let d = tmp("avgtime");
        let (out, _) = hb(&d, &args);
        let (bw, iops) = samples(&out);
        assert!(
            bw.abs_diff(want.0) <= 1 && iops.abs_diff(want.1) <= 1,
            "{opts:?}: bw/iops samples {bw}/{iops}, fio's {want:?}"
        );
        let log = logs(&d).into_iter().next();
        if let Some(n) = log_rows {
            let r = rows(&d, log.as_deref().unwrap());
            assert!(r.len().abs_diff(*n) <= 1, "{opts:?}: {r:?}");
        }
        if with_fio {
            let f = tmp("avgtime-fio");
            let (fout, _) = fio(&f, &args);
            let (fbw, fiops) = samples(&fout);
            assert!(
                bw.abs_diff(fbw) <= 1 && iops.abs_diff(fiops) <= 1,
                "{opts:?}: bw/iops samples {bw}/{iops}, fio {fbw}/{fiops}"
            );
            assert_eq!(logs(&f), logs(&d), "{opts:?}");
        }
    }
    // Checked as fio checks an int option.
    let d = tmp("avgtime-bad");
    common::hb()
        .current_dir(&d)
        .args(["fio", "--name=x", "--ioengine=null", "--bwavgtime=soon"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("bwavgtime"));
}

/// A clock's time now, ms.
fn clock_ms(id: libc::clockid_t) -> u64 {
    // SAFETY: clock_gettime fills the zeroed struct.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::clock_gettime(id, &mut ts) }, 0);
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// `log_unix_epoch`: times in ms since the Unix epoch; `log_alternate_epoch` with
/// `log_alternate_epoch_clock_id=N`: since clock N's epoch (fio adds the clock's time at
/// the job's measured start to each row's time).
#[test]
fn log_times_since_an_epoch() {
    let job = |extra: &str| {
        format!(
            "[x]\nioengine=null\nsize=64m\ntime_based\nruntime=1\nrate_iops=100\nrw=read\n\
             write_lat_log=e\nwrite_bw_log=e\nlog_avg_msec=200\n{extra}"
        )
    };
    for (extra, clock) in [
        ("log_unix_epoch=1\n", libc::CLOCK_REALTIME),
        (
            "log_alternate_epoch=1\nlog_alternate_epoch_clock_id=1\n",
            libc::CLOCK_MONOTONIC,
        ),
    ] {
        let d = tmp("epoch");
        std::fs::write(d.join("j.fio"), job(extra)).unwrap();
        let before = clock_ms(clock);
        hb(&d, &["j.fio"]);
        let after = clock_ms(clock);
        for n in ["e_bw.1.log", "e_lat.1.log"] {
            let r = rows(&d, n);
            assert!((3..=6).contains(&r.len()), "{extra}{n}: {r:?}");
            let mut prev = 0;
            for x in &r {
                let t: u64 = x[0].parse().unwrap();
                assert!(
                    (before + 150..=after).contains(&t) && t >= prev,
                    "{extra}{n}: {t} not in {before}..{after}"
                );
                prev = t;
            }
        }
        if need_fio("log_times_since_an_epoch") {
            let f = tmp("epoch-fio");
            std::fs::write(f.join("j.fio"), job(extra)).unwrap();
            let before = clock_ms(clock);
            fio(&f, &["j.fio"]);
            let r = rows(&f, "e_lat.1.log");
            let t: u64 = r[0][0].parse().unwrap();
            assert!(t >= before, "fio too: {t} since the same epoch");
            assert_eq!(logs(&f), logs(&d));
        }
    }
    let d = tmp("epoch-bad");
    common::hb()
        .current_dir(&d)
        .args([
            "fio",
            "--name=x",
            "--ioengine=null",
            "--log_alternate_epoch=1",
            "--log_alternate_epoch_clock_id=99",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("log_alternate_epoch_clock_id"));
}

/// `hostbench fio --inflate-log=F` (or fio's) on `dir`'s file `name`: its text.
fn inflate(dir: &Path, name: &str, with_fio: bool) -> String {
    let arg = format!("--inflate-log={name}");
    let out = if with_fio {
        std::process::Command::new("fio")
            .arg(&arg)
            .current_dir(dir)
            .output()
            .unwrap()
    } else {
        common::hb()
            .current_dir(dir)
            .args(["fio", &arg])
            .output()
            .unwrap()
    };
    assert!(
        out.status.success(),
        "{} {arg}: {}",
        if with_fio { "fio" } else { "hostbench fio" },
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

const GZ_JOB: &str = "[x]\nioengine=psync\nfilename=f\nsize=2m\nrw=randrw\ntime_based\n\
                      runtime=1\nrate_iops=200\nwrite_lat_log=c\nwrite_iops_log=c\n\
                      log_offset=1\nlog_store_compressed=1\n";

/// `log_store_compressed=1`: fio's `.log.fz` files (zlib streams of its binary samples),
/// which fio's `--inflate-log` and hostbench's turn back into the plain log.
#[test]
fn compressed_logs_inflate_with_fio_and_hostbench() {
    let d = tmp("gz");
    std::fs::write(d.join("j.fio"), GZ_JOB).unwrap();
    hb(&d, &["j.fio"]);
    let names = logs(&d);
    assert_eq!(
        names,
        [
            "c_clat.1.log.fz",
            "c_iops.1.log.fz",
            "c_lat.1.log.fz",
            "c_slat.1.log.fz"
        ]
    );
    let lat = inflate(&d, "c_lat.1.log.fz", false);
    let r = rows_of(&lat);
    assert!((300..=500).contains(&r.len()), "{} rows", r.len());
    for x in &r {
        assert_eq!(x.len(), 6, "log_offset=1: {x:?}");
        assert_eq!(x[3], "4096");
        assert!(x[2] == "0" || x[2] == "1");
    }
    // A bad file: one line, not a panic.
    std::fs::write(d.join("bad.fz"), b"not zlib at all").unwrap();
    common::hb()
        .current_dir(&d)
        .args(["fio", "--inflate-log=bad.fz"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("bad.fz"));
    if !need_fio("compressed_logs_inflate_with_fio_and_hostbench") {
        return;
    }
    // fio reads hostbench's files as hostbench does...
    for n in ["c_clat.1.log.fz", "c_iops.1.log.fz", "c_lat.1.log.fz"] {
        assert_eq!(inflate(&d, n, true), inflate(&d, n, false), "{n}");
    }
    // ... and hostbench reads fio's as fio does, with the same names.
    let f = tmp("gz-fio");
    std::fs::write(f.join("j.fio"), GZ_JOB).unwrap();
    fio(&f, &["j.fio"]);
    assert_eq!(logs(&f), names);
    for n in ["c_clat.1.log.fz", "c_iops.1.log.fz", "c_lat.1.log.fz"] {
        let text = inflate(&f, n, true);
        assert_eq!(inflate(&f, n, false), text, "{n}");
        assert_eq!(rows_of(&text)[0].len(), 6);
    }
}

/// `log_compression` (and `log_store_compressed`) make fio's bandwidth and IOPS logs
/// per-I/O logs even with `log_avg_msec` (`per_unit_log`): the windows average per-I/O
/// values, and the job's bw/iops statistics are per-I/O samples.
#[test]
fn log_compression_makes_per_io_bandwidth_samples() {
    let job = "[x]\nioengine=psync\nfilename=f\nsize=2m\nrw=read\ntime_based\nruntime=1\n\
               rate_iops=200\nwrite_bw_log=z\nlog_avg_msec=250\nlog_compression=1m\n";
    let d = tmp("gzmem");
    std::fs::write(d.join("j.fio"), job).unwrap();
    let (out, _) = hb(&d, &["j.fio", "--output-format=json"]);
    assert_eq!(logs(&d), ["z_bw.1.log"], "in memory only: a plain log");
    let (bw, _) = samples(&out);
    assert!(bw > 100, "per-I/O bw samples: {bw}");
    let r = rows(&d, "z_bw.1.log");
    assert!((3..=5).contains(&r.len()), "{r:?}");
    // A per-I/O value (bytes × 10^6 / clat ns) is far above the job's 800 KiB/s.
    for x in &r {
        assert!(x[1].parse::<u64>().unwrap() > 8000, "{x:?}");
    }
    if need_fio("log_compression_makes_per_io_bandwidth_samples") {
        let f = tmp("gzmem-fio");
        std::fs::write(f.join("j.fio"), job).unwrap();
        let (fout, _) = fio(&f, &["j.fio", "--output-format=json"]);
        assert_eq!(logs(&f), logs(&d));
        assert!(samples(&fout).0 > 100);
        let fr = rows(&f, "z_bw.1.log");
        assert!(fr.len().abs_diff(r.len()) <= 1, "{fr:?} vs {r:?}");
        assert!(fr.iter().all(|x| x[1].parse::<u64>().unwrap() > 8000));
    }
}

/// The rows of each direction (0 read, 1 write, 2 trim) in each log of `dir`, with the
/// log's name: `name ddir=N` per direction that has rows.
fn rows_per_ddir(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for n in logs(dir) {
        let mut per = std::collections::BTreeMap::new();
        for r in rows(dir, &n) {
            *per.entry(r[2].clone()).or_insert(0u64) += 1;
        }
        // The log's name without the job's prefix (the same in both runs).
        let kind = n.split_once('_').map_or(n.as_str(), |x| x.1).to_string();
        out.push(format!("{kind} {per:?}"));
    }
    out
}

/// fio logs trims as it logs reads and writes (`add_log_sample` takes every direction:
/// ddir 2), per I/O and in windows (`log_avg_msec`), with the trims' block size. fio
/// 3.33's psync trims only a block device (BLKDISCARD; a regular file fails with ENOTTY):
/// compared with fio on a loop device (root), else hostbench alone on a file (which it
/// punches holes in).
#[test]
fn trims_are_logged_as_fio_logs_them() {
    let d = tmp("logtrim");
    let img = d.join("img");
    std::fs::write(&img, vec![0u8; 4 << 20]).unwrap();
    let lo = crate::common::LoopImage::attach(&img);
    let target = lo
        .as_ref()
        .map_or_else(|| "f".to_string(), |l| l.dev.clone());
    let file = format!("--filename={target}");
    for avg in ["0", "100"] {
        let avg_opt = format!("--log_avg_msec={avg}");
        let args = [
            "--name=t",
            file.as_str(),
            "--size=1m",
            "--bs=64k",
            "--rw=randtrim",
            "--ioengine=psync",
            "--write_lat_log=t",
            "--write_bw_log=t",
            "--write_iops_log=t",
            avg_opt.as_str(),
            "--output-format=json",
        ];
        let clean = || {
            for n in logs(&d) {
                std::fs::remove_file(d.join(n)).unwrap();
            }
        };
        clean();
        let (out, _) = hb(&d, &args);
        let trims = json(&out)["jobs"][0]["trim"]["total_ios"].as_u64().unwrap();
        assert_eq!(trims, 16, "{out}");
        let ours = rows_per_ddir(&d);
        if avg == "0" {
            // A row per trim in each log but slat's (a sync engine has none), ddir 2, bs 64k.
            for n in ["t_lat.1.log", "t_clat.1.log", "t_bw.1.log", "t_iops.1.log"] {
                let r = rows(&d, n);
                assert_eq!(r.len() as u64, trims, "{n}: {r:?}");
                assert!(
                    r.iter().all(|r| r[2] == "2" && r[3] == "65536"),
                    "{n}: {r:?}"
                );
            }
        } else {
            // The latency logs' last window is written at the end (bs 0).
            let r = rows(&d, "t_lat.1.log");
            assert!(!r.is_empty() && r.iter().all(|r| r[2] == "2"), "{r:?}");
        }
        if lo.is_some() && need_fio("trims_are_logged_as_fio_logs_them") {
            clean();
            fio(&d, &args);
            let theirs = rows_per_ddir(&d);
            if avg == "0" {
                assert_eq!(ours, theirs, "log_avg_msec={avg}");
            } else {
                // Which windows close depends on the timing: the logs that have rows,
                // and their directions, are compared.
                let has = |v: &[String]| -> Vec<String> {
                    v.iter()
                        .map(|l| {
                            let (kind, per) = l.split_once(' ').unwrap();
                            let dirs: Vec<&str> = per.split('"').skip(1).step_by(2).collect();
                            format!("{kind} {dirs:?}")
                        })
                        .collect()
                };
                assert_eq!(
                    has(&ours),
                    has(&theirs),
                    "log_avg_msec={avg}: {ours:?} {theirs:?}"
                );
            }
        }
    }
}

/// fio logs its verify phase's reads (ddir 0) in the job's logs, as it counts them in its
/// report: a writer with `verify` has a row per write and one per block read back.
#[test]
fn verify_reads_are_logged_as_fio_logs_them() {
    let d = tmp("logverify");
    let args = [
        "--name=t",
        "--filename=f",
        "--size=256k",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
        "--write_lat_log=t",
        "--output-format=json",
    ];
    let (out, _) = hb(&d, &args);
    let j = &json(&out)["jobs"][0];
    let reads = j["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(reads, 64, "{out}");
    let ours = rows_per_ddir(&d);
    assert!(
        ours.contains(&r#"lat.1.log {"0": 64, "1": 64}"#.to_string()),
        "{ours:?}"
    );
    if need_fio("verify_reads_are_logged_as_fio_logs_them") {
        for n in logs(&d) {
            std::fs::remove_file(d.join(n)).unwrap();
        }
        fio(&d, &args);
        assert_eq!(ours, rows_per_ddir(&d));
    }
}

/// What a run shows of each statistic: (JSON facts, normal-layout line kinds, logs with
/// whether each has rows).
fn shown(dir: &Path, json_out: &str, normal: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    let v = json(json_out);
    let j = &v["jobs"][0];
    let mut facts = Vec::new();
    for d in ["read", "write"] {
        for k in ["slat_ns", "clat_ns", "lat_ns"] {
            if j[d][k]["N"].as_u64().unwrap() > 0 {
                facts.push(format!("{d}.{k}"));
            }
            if j[d][k].get("percentile").is_some() {
                facts.push(format!("{d}.{k}.percentile"));
            }
        }
        for k in ["bw_samples", "iops_samples"] {
            if j[d][k].as_u64().unwrap() > 0 {
                facts.push(format!("{d}.{k}"));
            }
        }
    }
    let dist: f64 = ["latency_ns", "latency_us", "latency_ms"]
        .iter()
        .flat_map(|k| j[k].as_object().unwrap().values())
        .map(|x| x.as_f64().unwrap())
        .sum();
    if dist > 0.0 {
        facts.push("latency distribution".into());
    }
    let mut lines: Vec<String> = normal
        .lines()
        .filter_map(|l| {
            let t = l.trim_start();
            // The latency line and the distribution's lines, whatever their unit: which
            // units the distribution has depends on how long the I/Os took, not on the
            // options.
            if t.starts_with("lat (") {
                return Some(
                    if t.contains("min=") {
                        "lat"
                    } else {
                        "lat distribution"
                    }
                    .into(),
                );
            }
            [
                "slat (",
                "clat (",
                "clat percentiles",
                "lat percentiles",
                "bw (",
                "iops ",
            ]
            .iter()
            .find(|p| t.starts_with(**p))
            .map(|p| p.trim_end_matches(" (").to_string())
        })
        .collect();
    lines.sort();
    lines.dedup();
    let logs = logs(dir)
        .into_iter()
        .map(|n| {
            let r = rows(dir, &n).len();
            format!("{n}:{}", if r > 0 { "rows" } else { "empty" })
        })
        .collect();
    (facts, lines, logs)
}

/// `--output-format=json,normal`'s output: the JSON, and the normal layout's lines around it.
fn split(out: &str) -> (&str, String) {
    let s = out.find("{\n").unwrap();
    let e = s + out[s..].find("\n}\n").unwrap() + 3;
    (&out[s..e], format!("{}{}", &out[..s], &out[e..]))
}

/// `disable_lat`, `disable_clat`, `disable_slat`, `disable_bw_measurement`: what fio leaves
/// out of its JSON, its normal layout and its logs (the disabled latency's log is not even
/// created; disable_bw only stops per-I/O bandwidth samples).
#[test]
fn disabled_measurements_are_left_out_as_fio_leaves_them() {
    let base = [
        "--name=x",
        "--filename=f",
        "--size=2m",
        "--rw=randrw",
        "--ioengine=libaio",
        "--iodepth=2",
        "--time_based",
        "--runtime=1",
        "--rate_iops=100",
        "--write_lat_log=d",
        "--write_bw_log=d",
        "--output-format=json,normal",
    ];
    let with_fio = need_fio("disabled_measurements_are_left_out_as_fio_leaves_them");
    for (opt, gone_json, gone_log) in [
        ("--disable_lat=1", "read.lat_ns", "d_lat.1.log"),
        ("--disable_clat=1", "read.clat_ns", "d_clat.1.log"),
        ("--disable_slat=1", "read.slat_ns", "d_slat.1.log"),
        ("--disable_bw_measurement=1", "", ""),
    ] {
        let args: Vec<&str> = base.iter().copied().chain([opt]).collect();
        let d = tmp("disable");
        let (out, _) = hb(&d, &args);
        let (j, n) = split(&out);
        let (facts, lines, logs) = shown(&d, j, &n);
        if !gone_json.is_empty() {
            assert!(!facts.contains(&gone_json.to_string()), "{opt}: {facts:?}");
            assert!(
                !logs.iter().any(|n| n.starts_with(gone_log)),
                "{opt}: {logs:?}"
            );
        }
        if opt.contains("_bw") {
            // Per-I/O bandwidth rows are what disable_bw stops.
            assert!(logs.contains(&"d_bw.1.log:empty".to_string()), "{logs:?}");
        }
        if with_fio {
            let f = tmp("disable-fio");
            let (fout, _) = fio(&f, &args);
            let (j, n) = split(&fout);
            let want = shown(&f, j, &n);
            assert_eq!((facts, lines, logs), want, "{opt}: hostbench vs fio");
        }
    }
}

/// `--bandwidth-log`: fio's `agg-{read,write,trim}_bw.log`, sampled where fio computes its
/// status line (so empty when no line is printed and no JSON report written), one more
/// row when a JSON report is written.
#[test]
fn bandwidth_log_is_sampled_as_fio_samples_it() {
    let job = [
        "--bandwidth-log",
        "--name=x",
        "--ioengine=null",
        "--size=64m",
        "--time_based",
        "--runtime=2",
        "--rate_iops=100",
        "--rw=randrw",
    ];
    let names = ["agg-read_bw.log", "agg-trim_bw.log", "agg-write_bw.log"];
    let with_fio = need_fio("bandwidth_log_is_sampled_as_fio_samples_it");
    // (extra options, rows per file)
    for (extra, want) in [
        (&["--output-format=json"][..], 1..=1),
        (&["--eta=never"][..], 0..=0),
        (&["--eta=always"][..], 2..=4),
    ] {
        let args: Vec<&str> = job.iter().chain(extra).copied().collect();
        let d = tmp("agglog");
        hb(&d, &args);
        assert_eq!(logs(&d), names, "{extra:?}");
        let mut counts = Vec::new();
        for (dir, n) in [(0, names[0]), (2, names[1]), (1, names[2])] {
            let r = rows(&d, n);
            assert!(want.contains(&r.len()), "{extra:?} {n}: {r:?}");
            for x in &r {
                assert_eq!(x.len(), 5, "{x:?}");
                assert_eq!(
                    (x[2].as_str(), x[3].as_str()),
                    (dir.to_string().as_str(), "0")
                );
                let (t, v): (u64, u64) = (x[0].parse().unwrap(), x[1].parse().unwrap());
                assert!(t > 400 && t < 4000, "{n}: {x:?}");
                if dir == 2 {
                    assert_eq!(v, 0);
                } else {
                    assert!((250..=550).contains(&v), "{n}: {x:?} (400 KiB/s)");
                }
            }
            counts.push(r.len());
        }
        if with_fio {
            let f = tmp("agglog-fio");
            fio(&f, &args);
            assert_eq!(logs(&f), names, "{extra:?}");
            let fc: Vec<usize> = [names[0], names[1], names[2]]
                .iter()
                .map(|n| rows(&f, n).len())
                .collect();
            for (a, b) in counts.iter().zip(&fc) {
                assert!(
                    a.abs_diff(*b) <= 1,
                    "{extra:?}: rows {counts:?}, fio {fc:?}"
                );
            }
        }
    }
}

/// `log_compression_cpus` (fio pins its log compression threads there) is taken and its
/// list checked as fio checks it; hostbench has no compression thread to pin, so the job
/// runs as without it. A CPU the machine lacks is fio's error, with exit 2.
#[test]
fn log_compression_cpus_is_checked_and_taken() {
    let d = tmp("logs2-gzcpus");
    let args = [
        "--name=a",
        "--ioengine=null",
        "--size=1m",
        "--log_compression=1m",
        "--write_bw_log=a",
        "--log_compression_cpus=0",
        "--output-format=json",
    ];
    let (out, _) = hb(&d, &args);
    assert_eq!(json(&out)["jobs"][0]["read"]["total_ios"], 256);
    if need_fio("log_compression_cpus_is_checked_and_taken") {
        let (f, _) = fio(&d, &args);
        assert_eq!(json(&f)["jobs"][0]["read"]["total_ios"], 256);
    }
    let o = common::hb()
        .current_dir(&d)
        .args(["fio", "--name=a", "--ioengine=null", "--size=1m"])
        .arg("--log_compression_cpus=4096")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("log_compression_cpus=4096: CPU 4096 too large (max="),
        "{err}"
    );
    std::fs::remove_dir_all(d).unwrap();
}
