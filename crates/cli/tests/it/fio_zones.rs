//! fio's strided zones (`zonemode=strided` with `zonesize`, `zonerange`, `zoneskip`) side by
//! side with the installed fio: the offsets of every I/O, read from each run's IOPS log
//! (`write_iops_log` with `log_offset=1` logs every I/O with its offset; with psync the
//! order is the order of issue), and the bandwidth log of fio's `disk-zone-profile.fio`.
//! One test needs no fio: the offsets hostbench visits, worked out by hand.
//!
//! Without fio the comparisons are skipped with a message, unless `HOSTBENCH_TEST_FIO` is
//! set: then a missing fio fails the test.

use super::fio::tmp;
use super::fio_files::{fio, hb};
use super::fio_seq::need_fio;
use std::path::Path;

const MIB: u64 = 1 << 20;
const BS: u64 = 64 << 10;

/// The offsets of every `*_iops.*.log` in `dir` whose name starts with `job`, one list per
/// log (per clone), in the order of the logs' numbers.
fn logged_offsets(dir: &Path, job: &str) -> Vec<Vec<u64>> {
    logged_ios(dir, job)
        .into_iter()
        .map(|l| l.into_iter().map(|(_, off, _)| off).collect())
        .collect()
}

/// The I/Os of every `*_iops.*.log` in `dir` whose name starts with `job`, one list per
/// log (per clone), in the order of the logs' numbers: (direction: 0 read, 1 write;
/// offset; length).
pub(crate) fn logged_ios(dir: &Path, job: &str) -> Vec<Vec<(u8, u64, u64)>> {
    let mut logs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.ok()?.file_name().to_string_lossy().into_owned();
            let k: u32 = n
                .strip_prefix(&format!("{job}_iops."))?
                .strip_suffix(".log")?
                .parse()
                .ok()?;
            Some((k, n))
        })
        .collect();
    logs.sort();
    logs.iter()
        .map(|(_, n)| {
            std::fs::read_to_string(dir.join(n))
                .unwrap()
                .lines()
                .map(|l| {
                    let f: Vec<&str> = l.split(',').map(str::trim).collect();
                    assert_eq!(f.len(), 6, "log_offset=1 gives six fields: {l}");
                    (
                        f[2].parse().unwrap(),
                        f[4].parse().unwrap(),
                        f[3].parse().unwrap(),
                    )
                })
                .collect()
        })
        .collect()
}

/// Runs job file `text` (one job named `z`, writing its IOPS log) through hostbench
/// (`fio == false`) or fio in a fresh directory holding a 16 MiB file `f16`; the offsets.
fn zone_offsets(tag: &str, text: &str, real_fio: bool) -> Vec<Vec<u64>> {
    let d = tmp(tag);
    std::fs::write(d.join("f16"), vec![7u8; 16 << 20]).unwrap();
    std::fs::write(d.join("z.fio"), text).unwrap();
    let r = if real_fio {
        fio(&d, &["z.fio", "--output=out.txt"])
    } else {
        hb(&d, &["z.fio", "--output=out.txt"])
    };
    assert_eq!(r.code, 0, "{tag} (fio: {real_fio}):\n{}", r.err);
    let o = logged_offsets(&d, "z");
    std::fs::remove_dir_all(&d).ok();
    o
}

fn job(opts: &str) -> String {
    format!(
        "[z]\nfilename=f16\nioengine=psync\nbs=64k\nzonemode=strided\nwrite_iops_log=z\n\
         log_offset=1\n{}\n",
        opts.replace(' ', "\n")
    )
}

/// Sequential zones: every offset of every clone as fio's, in order.
#[test]
fn strided_zones_visit_fios_offsets() {
    if !need_fio("strided_zones_visit_fios_offsets") {
        return;
    }
    let cases = [
        // Zones of 1 MiB every 4 MiB, cycled until 16 MiB are read (4 times each).
        "rw=read size=16m zonesize=1m zoneskip=3m",
        "rw=write size=16m zonesize=1m zoneskip=3m",
        // From 2 MiB on: zones at 2, 6, 10, 14 MiB, back to 2 MiB past the file's end.
        "rw=read offset=2m size=8m zonesize=1m zoneskip=3m",
        // The zone at 15 MiB reaches the file's end after 1 MiB: the job ends there
        // (176 I/Os, not 256); with loops=2 the second loop starts again at 0.
        "rw=read size=16m zonesize=2m zoneskip=1m",
        "rw=read size=16m zonesize=2m zoneskip=1m loops=2",
        // Loops go on where the last one left off (no restart at 0).
        "rw=read size=3m zonesize=1m zoneskip=1m loops=2",
        // zonesize > zonerange: each zone read twice; a range that is not a multiple of
        // bs: an I/O runs past it, the next starts the zone again.
        "rw=read size=8m zonesize=2m zonerange=1m",
        "rw=read size=4m zonesize=256k zonerange=100k",
        // Two clones, each from its own offset, wrapping to it.
        "rw=read size=8m zonesize=1m zoneskip=1m numjobs=2 offset_increment=8m",
        // fio's parser splits `-3m` at the `-`: a 3m skip. A percent zone size is fio's
        // percent marker taken as bytes (~2^64): a zone that never ends, or a range that
        // steps past the file's end back to its start.
        "rw=read size=16m zonesize=1m zoneskip=-3m",
        "rw=read size=4m zonesize=10%",
        "rw=read size=4m zonesize=1m zonerange=10%",
    ];
    for c in cases {
        let text = job(c);
        let ours = zone_offsets("zs", &text, false);
        let theirs = zone_offsets("zs-fio", &text, true);
        assert!(!theirs.is_empty() && !theirs[0].is_empty(), "{c}: no log");
        assert_eq!(ours.len(), theirs.len(), "{c}: logs");
        for (k, (o, t)) in ours.iter().zip(&theirs).enumerate() {
            assert_eq!(o.len(), t.len(), "{c}: clone {k}: I/O count");
            assert_eq!(o, t, "{c}: clone {k}");
        }
    }
}

/// time_based: the same offsets as fio's as far as both ran (the counts depend on time):
/// past the file's end back to the start, and fio's quirk of a time_based job's zone at the
/// region's end (the last zone read twice; a region smaller than the file reads its
/// zone's first block again and again).
#[test]
fn time_based_zones_wrap_as_fio() {
    if !need_fio("time_based_zones_wrap_as_fio") {
        return;
    }
    for c in [
        "rw=read size=16m zonesize=2m zoneskip=1m time_based runtime=1 rate_iops=400",
        "rw=read size=8m zonesize=1m zoneskip=3m time_based runtime=1 rate_iops=400",
    ] {
        let text = job(c);
        let ours = zone_offsets("zt", &text, false).remove(0);
        let theirs = zone_offsets("zt-fio", &text, true).remove(0);
        let n = ours.len().min(theirs.len());
        assert!(n > 250, "{c}: {} and {} I/Os", ours.len(), theirs.len());
        assert_eq!(ours[..n], theirs[..n], "{c}");
    }
}

/// Random zones: hostbench's random numbers are not fio's, so the comparison is of where
/// each I/O may go: the i-th I/O in the same zone as fio's (16 I/Os of 64 KiB in each
/// 4 MiB range), and with the random map no block twice within a zone.
#[test]
fn random_zones_stay_in_fios_zones() {
    if !need_fio("random_zones_stay_in_fios_zones") {
        return;
    }
    for (c, map) in [
        (
            "rw=randread size=16m zonesize=1m zonerange=4m norandommap",
            false,
        ),
        ("rw=randread size=16m zonesize=1m zonerange=4m", true),
        (
            "rw=randwrite size=8m zonesize=512k zonerange=1m zoneskip=1m",
            true,
        ),
    ] {
        let text = job(c);
        let ours = zone_offsets("zr", &text, false).remove(0);
        let theirs = zone_offsets("zr-fio", &text, true).remove(0);
        assert_eq!(ours.len(), theirs.len(), "{c}");
        let (size, range, skip) = if c.contains("zoneskip") {
            (MIB / 2, MIB, MIB)
        } else {
            (MIB, 4 * MIB, 0)
        };
        let per = (size / BS) as usize;
        for (who, o) in [("hostbench", &ours), ("fio", &theirs)] {
            for (i, &x) in o.iter().enumerate() {
                let start = (i / per) as u64 * (range + skip) % (16 * MIB);
                assert!(
                    (start..start + range).contains(&x) && x % BS == 0,
                    "{c}: {who}: I/O {i} at {x}, zone {start}"
                );
            }
            if map {
                for (z, g) in o.chunks(per).enumerate() {
                    let mut s = g.to_vec();
                    s.sort_unstable();
                    s.dedup();
                    assert_eq!(s.len(), g.len(), "{c}: {who}: zone {z} repeats a block");
                }
            }
        }
    }
}

/// fio's examples/disk-zone-profile.fio adapted to a 16 MiB file (zones of 1 MiB every
/// 4 MiB in place of 256 MiB every 2 GiB): the bandwidth log's offsets, as fio's.
#[test]
fn disk_zone_profile_logs_fios_offsets() {
    if !need_fio("disk_zone_profile_logs_fios_offsets") {
        return;
    }
    let text = "[global]\nbs=64k\ndirect=1\nrw=read\nioengine=libaio\niodepth=2\n\
                zonemode=strided\nzonesize=1m\nzoneskip=3m\n\n[disk-zone-profile]\n\
                filename=f16\nsize=16m\nwrite_bw_log\nlog_offset=1\n";
    let mut got = Vec::new();
    for real in [false, true] {
        let d = tmp("dzp");
        std::fs::write(d.join("f16"), vec![7u8; 16 << 20]).unwrap();
        std::fs::write(d.join("dzp.fio"), text).unwrap();
        let r = if real {
            fio(&d, &["dzp.fio", "--output=out.txt"])
        } else {
            hb(&d, &["dzp.fio", "--output=out.txt"])
        };
        if r.code != 0 && r.err.contains("Invalid argument") {
            eprintln!("skip: no O_DIRECT in {}", d.display());
            return;
        }
        assert_eq!(r.code, 0, "fio: {real}:\n{}", r.err);
        let log = std::fs::read_to_string(d.join("disk-zone-profile_bw.1.log")).unwrap();
        let offs: Vec<u64> = log
            .lines()
            .map(|l| l.split(',').nth(4).unwrap().trim().parse().unwrap())
            .collect();
        got.push(offs);
        std::fs::remove_dir_all(&d).ok();
    }
    assert_eq!(got[0].len(), 256);
    assert_eq!(got[0], got[1]);
}

/// Without fio: the offsets hostbench visits with the null engine (no file; its end is the
/// region's end), worked out from fio's rules, and fio's refusals.
#[test]
fn strided_zone_offsets_without_fio() {
    let d = tmp("zn");
    let text = "[z]\nioengine=null\nsize=16m\noffset=2m\nbs=64k\nrw=read\nzonemode=strided\n\
                zonesize=1m\nzoneskip=3m\nwrite_iops_log=z\nlog_offset=1\n";
    std::fs::write(d.join("z.fio"), text).unwrap();
    let r = hb(&d, &["z.fio", "--output=out.txt"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let got = logged_offsets(&d, "z").remove(0);
    // Zones at 2, 6, 10 and 14 MiB (1 MiB read in each, 3 MiB skipped), back to 2 MiB at
    // the region's end (18 MiB), until 16 MiB are read.
    let want: Vec<u64> = (0..4)
        .flat_map(|_| [2, 6, 10, 14])
        .flat_map(|z| (0..16).map(move |b| z * MIB + b * BS))
        .collect();
    assert_eq!(got, want);
    // `zoneskip=-3m` is fio's 3m skip (its parser keeps the part after the `-`).
    let neg = text.replace("zoneskip=3m", "zoneskip=-3m");
    std::fs::write(d.join("z.fio"), &neg).unwrap();
    let r = hb(&d, &["z.fio", "--output=out.txt"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(logged_offsets(&d, "z").remove(0), want, "zoneskip=-3m");
    // `zonesize=10%`: ~2^64 bytes (fio's percent marker): one zone, the whole region.
    let pct = text.replace("zonesize=1m\nzoneskip=3m", "zonesize=10%");
    std::fs::write(d.join("z.fio"), &pct).unwrap();
    let r = hb(&d, &["z.fio", "--output=out.txt"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let whole: Vec<u64> = (0..256).map(|b| 2 * MIB + b * BS).collect();
    assert_eq!(logged_offsets(&d, "z").remove(0), whole, "zonesize=10%");
    // fio's checks of the options, with what to do.
    for (opts, says) in [
        ("--zonesize=1m", "zonesize needs zonemode=strided"),
        ("--zonemode=strided", "zonemode=strided needs a zonesize"),
        ("--zonemode=zbd", "zonemode=zbd needs a zonesize"),
        (
            "--zonemode=stride",
            "expected none (the default), strided or zbd",
        ),
        // Random offsets in a percent zone: fio fails allocating its random map.
        (
            "--zonemode=strided --zonesize=10% --rw=randread",
            "failed allocating random map",
        ),
    ] {
        let mut args = vec!["--name=z", "--ioengine=null", "--size=1m"];
        args.extend(opts.split(' '));
        let r = hb(&d, &args);
        assert_eq!(r.code, 2, "{opts}: {}", r.err);
        assert!(r.err.contains(says), "{opts}: {}", r.err);
        assert!(!r.err.contains("panicked"), "{}", r.err);
    }
    std::fs::remove_dir_all(&d).ok();
}
