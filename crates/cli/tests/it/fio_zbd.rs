//! fio's emulated zoned block device (`zonemode=zbd` on a regular file) side by side with
//! the installed fio: every I/O of each run from its IOPS log (`log_offset=1`; with psync
//! in the order of issue) and the `N zone resets` of the normal output. Sequential jobs
//! give fio's I/Os one for one; random ones draw other offsets than fio (another
//! generator), so both runs are replayed over the zones and must keep fio's rules: each
//! write at its zone's write pointer (or at its start after a reset), never past the
//! zone's capacity, each read inside written data, no more zones partly written than
//! `max_open_zones`, and as many resets as the run reports.
//!
//! Without fio the comparisons are skipped with a message, unless `HOSTBENCH_TEST_FIO` is
//! set: then a missing fio fails the test.

use super::fio::tmp;
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_seq::need_fio;
use super::fio_zones::logged_ios;

const MIB: u64 = 1 << 20;
const KIB: u64 = 1 << 10;

/// (direction: 0 read, 1 write; offset; length).
type Io = (u8, u64, u64);

/// What one run of a job file gave: each named job's I/Os (its clones' logs one after
/// the other), the zone resets of each job's block, the run.
struct Zrun {
    ios: Vec<Vec<Io>>,
    resets: Vec<u64>,
    /// Each job block's trims and reads (`issued rwts: total=R,W,T`).
    trims: Vec<u64>,
    reads: Vec<u64>,
    ran: Ran,
}

/// Runs `text` (jobs named in `jobs`, each writing its IOPS log under its own name)
/// through hostbench (`real_fio == false`) or fio, in a fresh directory holding the 4 MiB
/// file `f4` (fio emulates zones only in a file that is there before the run).
fn zrun(tag: &str, text: &str, jobs: &[&str], real_fio: bool) -> Zrun {
    let d = tmp(tag);
    std::fs::write(d.join("f4"), vec![7u8; 4 << 20]).unwrap();
    std::fs::write(d.join("z.fio"), text).unwrap();
    let ran = if real_fio {
        fio(&d, &["z.fio", "--output=out.txt"])
    } else {
        hb(&d, &["z.fio", "--output=out.txt"])
    };
    let out = std::fs::read_to_string(d.join("out.txt")).unwrap_or_default();
    // Reads and writes only (the trims are compared by count, below).
    let ios = jobs
        .iter()
        .map(|j| {
            let mut v = logged_ios(&d, j).concat();
            v.retain(|io| io.0 != 2);
            v
        })
        .collect();
    let issued = |i: usize| {
        out.lines()
            .filter_map(|l| {
                let t = l.split("issued rwts: total=").nth(1)?;
                t.split([',', ' ']).nth(i)?.parse().ok()
            })
            .collect()
    };
    let (trims, reads) = (issued(2), issued(0));
    let resets = out
        .lines()
        .filter_map(|l| {
            l.strip_suffix(" zone resets")?
                .rsplit("; ")
                .next()?
                .parse()
                .ok()
        })
        .collect();
    std::fs::remove_dir_all(&d).ok();
    Zrun {
        ios,
        resets,
        trims,
        reads,
        ran,
    }
}

/// One job `z` on `f4` with zones of 1 MiB and `opts` (spaces between options).
fn job(opts: &str) -> String {
    format!(
        "[z]\nfilename=f4\nioengine=psync\nsize=4m\nzonemode=zbd\nzonesize=1m\n\
         write_iops_log=z\nlog_offset=1\n{}\n",
        opts.replace(' ', "\n")
    )
}

/// Both runs of `text`: (hostbench's, fio's).
fn both(text: &str, jobs: &[&str]) -> (Zrun, Zrun) {
    let ours = zrun("zbd", text, jobs, false);
    let theirs = zrun("zbd-fio", text, jobs, true);
    assert_eq!(ours.ran.code, 0, "{text}\n{}", ours.ran.err);
    assert_eq!(theirs.ran.code, 0, "{text}\n{}", theirs.ran.err);
    (ours, theirs)
}

/// Sequential jobs: every I/O (direction, offset, length) as fio's, and its zone resets.
#[test]
fn zbd_sequential_ios_are_fios() {
    if !need_fio("zbd_sequential_ios_are_fios") {
        return;
    }
    let cases = [
        // Zone after zone, from each write pointer.
        "rw=write bs=256k",
        // 384 KiB does not divide the zone: the third write does not fit, so zone 0 is
        // reset and written again, over and over (5 resets, 11 writes for 4 MiB).
        "rw=write bs=384k",
        // A capacity of 768 KiB: the writer jumps to each zone's end (3 MiB written).
        "rw=write bs=256k zonecapacity=768k",
        // 640 KiB: the last 128 KiB of each zone's capacity is less than a block: reset.
        "rw=write bs=256k zonecapacity=640k",
        // Each pass ends at the region's end; the next resets the full zones.
        "rw=write bs=64k zonecapacity=512k loops=3",
        // The region rounded to whole zones (1 MiB to 3 MiB).
        "rw=write bs=256k offset=512k size=3m",
        // Every write 1 in 2 resets its zone once 30% of the region holds data.
        "rw=write bs=128k zone_reset_frequency=0.5 zone_reset_threshold=0.3 loops=2",
        "rw=write bs=128k zone_reset_frequency=0.25",
        // Nothing is written when the run starts: a reader has nothing to read...
        "rw=read bs=256k",
        // ... unless it may read past the write pointers.
        "rw=read bs=256k read_beyond_wp=1",
    ];
    for c in cases {
        let (ours, theirs) = both(&job(c), &["z"]);
        assert_eq!(ours.ios, theirs.ios, "{c}");
        assert_eq!(ours.resets, theirs.resets, "{c}: zone resets");
    }
    // A later job reads what an earlier one wrote (the file's zones are shared): up to
    // each write pointer, then the next zone.
    let text = "[global]\nfilename=f4\nioengine=psync\nsize=4m\nbs=256k\nzonemode=zbd\n\
                zonesize=1m\nzonecapacity=768k\nlog_offset=1\n\
                [w]\nrw=write\nwrite_iops_log=w\n[r]\nstonewall\nrw=read\nwrite_iops_log=r\n";
    let (ours, theirs) = both(text, &["w", "r"]);
    assert_eq!(ours.ios, theirs.ios);
    assert_eq!(ours.ios[1].len(), 12, "{:?}", ours.ios[1]);
}

/// Replays `ios` over zones of `zone` bytes with `cap` writable in each, on a file of
/// `zones` zones: every write at its zone's write pointer, or at its start when the zone
/// holds data (a reset), never past the capacity; every read inside written data; at most
/// `max_open` zones partly written at once. The resets counted.
fn replay(ios: &[Io], zone: u64, cap: u64, zones: usize, max_open: Option<usize>) -> u64 {
    let mut wp: Vec<u64> = (0..zones as u64).map(|z| z * zone).collect();
    let mut resets = 0;
    for (i, &(d, off, len)) in ios.iter().enumerate() {
        let z = (off / zone) as usize;
        let start = z as u64 * zone;
        if d == 1 {
            if off == start && wp[z] != start {
                resets += 1;
                wp[z] = start;
            }
            assert_eq!(off, wp[z], "I/O {i} {:?}: not at the write pointer", ios[i]);
            assert!(
                off + len <= start + cap,
                "I/O {i} {:?}: past the capacity",
                ios[i]
            );
            wp[z] += len;
        } else {
            assert!(
                off + len <= wp[z],
                "I/O {i} {:?}: reads unwritten data",
                ios[i]
            );
        }
        if let Some(m) = max_open {
            let open = (0..zones)
                .filter(|&z| wp[z] > z as u64 * zone && wp[z] < z as u64 * zone + cap)
                .count();
            assert!(open <= m, "I/O {i}: {open} zones open, at most {m}");
        }
    }
    resets
}

/// Random jobs: other offsets than fio's, the same rules (see [`replay`]), the same
/// amount of I/O, and where the draws cannot change it, the same resets.
#[test]
fn zbd_random_ios_keep_fios_rules() {
    if !need_fio("zbd_random_ios_keep_fios_rules") {
        return;
    }
    // (options, capacity, max_open, resets when they do not depend on the draws)
    let cases: [(&str, u64, Option<usize>, Option<u64>); 6] = [
        // Each zone's blocks drawn once (the random map): filled, never reset.
        ("rw=randwrite bs=256k", MIB, None, Some(0)),
        // Four blocks drawn in each zone, three fit: each zone reset once.
        (
            "rw=randwrite bs=256k zonecapacity=768k",
            768 * KIB,
            None,
            Some(4),
        ),
        (
            "rw=randwrite bs=128k max_open_zones=1 loops=2",
            MIB,
            Some(1),
            None,
        ),
        ("rw=randwrite bs=64k max_open_zones=2", MIB, Some(2), None),
        (
            "rw=randwrite bs=64k max_open_zones=3 job_max_open_zones=2",
            MIB,
            Some(2),
            None,
        ),
        // Mixed: writes first (nothing to read yet), reads only of written data.
        ("rw=randrw bs=64k", MIB, None, None),
    ];
    for (c, cap, open, want) in cases {
        let (ours, theirs) = both(&job(c), &["z"]);
        for (who, r) in [("hostbench", &ours), ("fio", &theirs)] {
            let ios = &r.ios[0];
            assert!(!ios.is_empty(), "{c}: {who}: no I/O");
            assert_eq!(ios[0].0, 1, "{c}: {who}: the first I/O is a write");
            let resets = replay(ios, MIB, cap, 4, open);
            assert_eq!(r.resets, [resets], "{c}: {who}: the resets reported");
            if let Some(w) = want {
                assert_eq!(resets, w, "{c}: {who}");
            }
        }
        let bytes = |r: &Zrun| r.ios[0].iter().map(|i| i.2).sum::<u64>();
        if !c.contains("randrw") {
            // (A mixed job's reads stop it early when they find nothing: draw-dependent.)
            assert_eq!(bytes(&ours), bytes(&theirs), "{c}: bytes");
        }
    }
    // A random reader after a writer: inside what was written.
    let text = "[global]\nfilename=f4\nioengine=psync\nsize=4m\nbs=64k\nzonemode=zbd\n\
                zonesize=1m\nlog_offset=1\n[w]\nrw=randwrite\nio_size=1m\nwrite_iops_log=w\n\
                [r]\nstonewall\nrw=randread\nwrite_iops_log=r\n";
    let (ours, theirs) = both(text, &["w", "r"]);
    for r in [&ours, &theirs] {
        assert_eq!(r.ios[0].len(), 16);
        assert!(!r.ios[1].is_empty());
        replay(&r.ios.concat(), MIB, MIB, 4, None);
    }
}

/// Bad combinations: fio's message (quoted in ours, with what to do), exit 2; fio fails
/// on each too.
#[test]
fn zbd_bad_combinations_are_fios_errors() {
    let d = tmp("zbd-err");
    std::fs::write(d.join("f4"), vec![0u8; 4 << 20]).unwrap();
    let cases: [(&str, &str); 13] = [
        // With verify no zone is reset during a pass: the blocks must fill it exactly.
        (
            "--filename=f4 --zonesize=1m --bs=384k --verify=crc32c",
            "f4: block size 393216 is not a divisor of the zone size 1048576",
        ),
        // A trim is a zone reset: of one whole zone.
        (
            "--filename=f4 --zonesize=1m --rw=trim --bs=256k",
            "f4: trim block size 262144 is not the zone size 1048576",
        ),
        (
            "--filename=f4 --zonesize=1m --rw=randtrim --bsrange=1m-2m",
            "bsrange and bssplit are not allowed for trim with zonemode=zbd",
        ),
        (
            "--filename=f4",
            "Specifying the zone size is mandatory for regular file/block device with \
             --zonemode=zbd",
        ),
        (
            "--filename=f4 --zonesize=256",
            "zone size must be at least 512 bytes for --zonemode=zbd",
        ),
        (
            "--filename=f4 --zonesize=1m --zonecapacity=2m",
            "zonecapacity 2097152 is larger than zone size 1048576",
        ),
        (
            "--filename=f4 --zonesize=1m --job_max_open_zones=2",
            "'job_max_open_zones' cannot be used without a global open zones limit",
        ),
        (
            "--filename=f4 --zonesize=1m --create_serialize=0",
            "--zonemode=zbd and --create_serialize=0 are not compatible.",
        ),
        (
            "--filename=f4 --zonesize=1m --zoneskip=512k",
            "zoneskip 524288 is not a multiple of the device zone size 1048576.",
        ),
        // The zones are of the file as it is before the run.
        (
            "--filename=new --zonesize=1m",
            "new: file/device size 0 is smaller than zone size 1048576",
        ),
        (
            "--filename=f4 --zonesize=8m",
            "f4: file/device size 4194304 is smaller than zone size 8388608",
        ),
        (
            "--filename=f4 --zonesize=1m --offset=512k --size=1m",
            "f4: io_size must be at least one zone",
        ),
        (
            "--filename=f4 --zonesize=1m --max_open_zones=5000",
            "max_open_zones",
        ),
    ];
    let real = need_fio("zbd_bad_combinations_are_fios_errors");
    for (opts, says) in cases {
        let mut args = vec!["--name=z", "--size=4m", "--rw=write", "--zonemode=zbd"];
        args.extend(opts.split(' '));
        let r = hb(&d, &args);
        assert_eq!(r.code, 2, "{opts}: {}", r.err);
        assert!(r.err.contains(says), "{opts}: {}", r.err);
        assert!(!d.join("new").exists(), "{opts}: a file was made");
        if real {
            let f = fio(&d, &args);
            assert_ne!(f.code, 0, "{opts}: fio ran");
            assert!(
                f.out.contains(says) || f.err.contains(says),
                "{opts}: fio: {}{}",
                f.out,
                f.err
            );
            std::fs::remove_file(d.join("new")).ok();
        }
    }
    // A write longer than a zone fails the job at its first write (fio's err=22).
    let args = [
        "--name=z",
        "--filename=f4",
        "--size=4m",
        "--rw=randwrite",
        "--bs=2m",
        "--zonemode=zbd",
        "--zonesize=1m",
        "--output-format=json",
    ];
    let mut runs = vec![hb(&d, &args)];
    if real {
        runs.push(fio(&d, &args));
    }
    for r in runs {
        assert_eq!(r.code, 1, "{}", r.err);
        let j = &doc(&r.out)["jobs"][0];
        assert_eq!(j["error"], 22, "{}", r.out);
        assert_eq!(j["write"]["total_ios"], 0, "{}", r.out);
    }
    std::fs::remove_dir_all(&d).ok();
}

/// `io_size` past the region: fio starts the region again (its `keep_running`) until
/// `io_size` bytes are done or less than a block is left, resetting each full zone it
/// comes back to; every I/O as fio's, and the resets.
#[test]
fn zbd_io_size_past_the_region_makes_more_passes_as_fio() {
    if !need_fio("zbd_io_size_past_the_region_makes_more_passes_as_fio") {
        return;
    }
    // (options, the writes, the resets)
    let cases = [
        // Three passes: the second and third reset each of the 4 zones.
        ("rw=write bs=64k io_size=12m", 192, 8),
        // Capacities of 768 KiB: 3 MiB a pass, four passes.
        ("rw=write bs=64k io_size=12m zonecapacity=768k", 192, 12),
        ("rw=write bs=64k io_size=12m max_open_zones=2", 192, 8),
        // An aligned offset: the passes go over zones 1 to 3.
        ("rw=write bs=64k io_size=7m offset=1m size=3m", 112, 4),
        // `loops` first, then io_size (fio's order): 3 passes, not 2.
        ("rw=write bs=64k io_size=12m loops=2", 192, 8),
        // One block left after a pass: one more I/O; less than a block: none.
        ("rw=write bs=64k io_size=4160k", 65, 1),
        ("rw=write bs=64k io_size=4100k", 64, 0),
        // Random writes go on too (a fresh random map each pass).
        ("rw=randwrite bs=64k io_size=12m", 192, 8),
    ];
    for (c, n, resets) in cases {
        let (ours, theirs) = both(&job(c), &["z"]);
        if c.contains("rand") {
            for (who, r) in [("hostbench", &ours), ("fio", &theirs)] {
                assert_eq!(r.ios[0].len(), n, "{c}: {who}");
                assert_eq!(replay(&r.ios[0], MIB, MIB, 4, None), resets, "{c}: {who}");
                assert_eq!(r.resets, [resets], "{c}: {who}");
            }
            continue;
        }
        assert_eq!(ours.ios, theirs.ios, "{c}");
        assert_eq!(ours.ios[0].len(), n, "{c}");
        assert_eq!(ours.resets, theirs.resets, "{c}: zone resets");
        assert_eq!(ours.resets, [resets], "{c}: zone resets");
    }
    // An offset rounded up to a zone: fio 3.33 aborts at its second pass (`zone_lock`'s
    // assertion, signal 6, after one pass's writes); hostbench goes on over the rounded
    // region, 1 MiB to 4 MiB: 48 writes, then 32 more resetting two zones.
    let ours = zrun(
        "zbd",
        &job("rw=write bs=64k offset=512k io_size=5m"),
        &["z"],
        false,
    );
    assert_eq!(ours.ran.code, 0, "{}", ours.ran.err);
    let first: Vec<Io> = (16..64).map(|i| (1, i * 64 * KIB, 64 * KIB)).collect();
    assert_eq!(ours.ios[0][..48], first[..]);
    assert_eq!(ours.ios[0][48..], first[..32]);
    assert_eq!(ours.resets, [2]);
}

/// The figure before `tail` on the line holding it (`; 4507 zone resets`), and the writes
/// of `issued rwts: total=R,W,...`: (writes, resets) of a run's one job block.
fn writes_and_resets(out: &str) -> (u64, u64) {
    let resets = out
        .lines()
        .find_map(|l| {
            l.strip_suffix(" zone resets")?
                .rsplit("; ")
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no zone resets in:\n{out}"));
    let writes = out
        .lines()
        .find_map(|l| {
            let t = l.split("issued rwts: total=").nth(1)?;
            t.split([',', ' ']).nth(1)?.parse().ok()
        })
        .unwrap_or_else(|| panic!("no issued rwts in:\n{out}"));
    (writes, resets)
}

/// fio 3.33's `examples/zbd-rand-write.fio`, adapted in sizes, runtime and path only (a
/// 64 MiB file of 1 MiB zones instead of /dev/sdj's 256 MiB zones, 2 s instead of 180):
/// sixteen clones writing at random, at most 32 zones open, in one group-reported block.
/// The counts follow the speed; what does not: one block of 16 jobs, one group, writes
/// only, and the resets — each 512 KiB write fills half a zone and a zone is reset only
/// when full, so the writes less twice the resets are the halves still in the zones
/// (0 to 128).
#[test]
fn zbd_rand_write_example_adapted_runs_as_fio() {
    let real = need_fio("zbd_rand_write_example_adapted_runs_as_fio");
    let d = tmp("zbd-ex-rw");
    std::fs::write(d.join("dev64"), vec![0u8; 64 << 20]).unwrap();
    let text = "[global]\nname=zbd-rand-write\ngroup_reporting\nrw=randwrite\nzonemode=zbd\n\
                zonesize=1M\nmax_open_zones=32\nbs=512K\ndirect=1\nnumjobs=16\ntime_based\n\
                runtime=2\n\n[dev1]\nfilename=dev64\nioengine=psync\n";
    std::fs::write(d.join("zbd-rand-write.fio"), text).unwrap();
    let mut runs = vec![("hostbench", hb(&d, &["zbd-rand-write.fio"]))];
    if real {
        runs.push(("fio", fio(&d, &["zbd-rand-write.fio"])));
    }
    for (who, r) in runs {
        assert_eq!(r.code, 0, "{who}: {}", r.err);
        let out = &r.out;
        assert_eq!(out.matches("(groupid=").count(), 1, "{who}: {out}");
        assert!(
            out.contains("dev1: (groupid=0, jobs=16): err= 0"),
            "{who}: {out}"
        );
        assert_eq!(out.matches("Run status group").count(), 1, "{who}: {out}");
        assert!(out.contains("issued rwts: total=0,"), "{who}: {out}");
        let (writes, resets) = writes_and_resets(out);
        assert!(
            writes > 0 && resets > 0,
            "{who}: {writes} writes, {resets} resets"
        );
        let left = writes.checked_sub(2 * resets);
        assert!(
            left.is_some_and(|l| l <= 128),
            "{who}: {writes} writes, {resets} resets"
        );
    }
    std::fs::remove_dir_all(&d).ok();
}

/// fio 3.33's `examples/zbd-seq-read.fio`, adapted in sizes and path only (zone 8 of a
/// 48 MiB file of 1 MiB zones instead of zone 524 of /dev/sdd, 40 zones): libaio at depth
/// 16, reading only written data. Every zone of a regular file starts empty, so neither
/// program reads anything, and neither prints a block for the job; in JSON the same keys
/// and no read.
#[test]
fn zbd_seq_read_example_adapted_runs_as_fio() {
    let real = need_fio("zbd_seq_read_example_adapted_runs_as_fio");
    let d = tmp("zbd-ex-sr");
    std::fs::write(d.join("dev48"), vec![0u8; 48 << 20]).unwrap();
    let text = "[global]\nname=zbd-seq-read\nrw=read\nbs=256K\ndirect=1\nnumjobs=1\n\
                zonemode=zbd\nzonesize=1M\nread_beyond_wp=0\n\n[dev1]\nfilename=dev48\n\
                offset=8388608\nsize=40M\nioengine=libaio\niodepth=16\n";
    std::fs::write(d.join("zbd-seq-read.fio"), text).unwrap();
    let json = ["zbd-seq-read.fio", "--output-format=json"];
    let mut runs = vec![("hostbench", hb(&d, &["zbd-seq-read.fio"]), hb(&d, &json))];
    if real {
        runs.push(("fio", fio(&d, &["zbd-seq-read.fio"]), fio(&d, &json)));
    }
    let mut key_sets = Vec::new();
    for (who, normal, j) in &runs {
        assert_eq!(normal.code, 0, "{who}: {}", normal.err);
        assert_eq!(j.code, 0, "{who}: {}", j.err);
        assert!(!normal.out.contains("(groupid="), "{who}: {}", normal.out);
        assert!(
            normal.out.contains("Run status group 0 (all jobs):"),
            "{who}"
        );
        let v = doc(&j.out);
        assert_eq!(v["jobs"].as_array().map(Vec::len), Some(1), "{who}");
        let job = &v["jobs"][0];
        assert_eq!(job["jobname"], "dev1", "{who}");
        assert_eq!(job["error"], 0, "{who}");
        for dir in ["read", "write", "trim"] {
            assert_eq!(job[dir]["total_ios"], 0, "{who}: {dir}");
        }
        let mut k = std::collections::BTreeSet::new();
        super::fio_exec::keys(job, "", &mut k);
        key_sets.push(k);
    }
    if let [ours, theirs] = &key_sets[..] {
        assert_eq!(ours, theirs, "the job's JSON keys");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// A `time_based` reader of empty zones (nothing written, `read_beyond_wp=0`) ends at
/// once with no I/O in both programs: fio ends a job whose first pass did none (its
/// `job_runtime` 0 ms on an idle machine), it does not spin until `runtime`.
#[test]
fn zbd_time_based_reader_with_nothing_to_read_ends_as_fio() {
    let real = need_fio("zbd_time_based_reader_with_nothing_to_read_ends_as_fio");
    let d = tmp("zbd-tb");
    std::fs::write(d.join("f4"), vec![0u8; 4 << 20]).unwrap();
    for rw in ["read", "randread"] {
        let rw = format!("--rw={rw}");
        let args = [
            "--name=z",
            "--filename=f4",
            "--ioengine=psync",
            "--zonemode=zbd",
            "--zonesize=1m",
            "--bs=64k",
            &rw,
            "--time_based",
            "--runtime=30",
            "--output-format=json",
        ];
        let mut runs = vec![("hostbench", hb(&d, &args))];
        if real {
            runs.push(("fio", fio(&d, &args)));
        }
        for (who, r) in runs {
            assert_eq!(r.code, 0, "{who} {rw}: {}", r.err);
            assert!(r.took.as_secs() < 15, "{who} {rw}: ran {:?}", r.took);
            let j = &doc(&r.out)["jobs"][0];
            assert_eq!(j["read"]["total_ios"], 0, "{who} {rw}");
            // (fio's job_runtime is the ms from its epoch to the job's end: 0 on an idle
            // machine, a millisecond or two under load, in either program.)
            let ms = j["job_runtime"].as_u64().unwrap();
            assert!(ms < 1000, "{who} {rw}: job_runtime {ms} ms");
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

/// Trims under `zonemode=zbd` are zone resets (fio's `zbd_do_io_u_trim`: the zone's write
/// pointer back to its start, nothing sent to the file), of whole zones: a sequential
/// trim goes where drawn, a random one to the nearest zone holding data (none: the pass
/// ends). After 2.5 MiB written in zones of 1 MiB: the trims counted as fio's, every read
/// and write as fio's, the writes' resets, and a reader after finds nothing. (The trims'
/// own offsets are not compared.)
#[test]
fn zbd_trims_reset_zones_as_fio() {
    if !need_fio("zbd_trims_reset_zones_as_fio") {
        return;
    }
    let head = "[global]\nfilename=f4\nioengine=psync\nsize=4m\nzonemode=zbd\nzonesize=1m\n\
                log_offset=1\n[w]\nrw=write\nbs=256k\nio_size=2560k\nwrite_iops_log=w\n";
    let writes: Vec<Io> = (0..10).map(|i| (1, i * 256 * KIB, 256 * KIB)).collect();
    // Sequential: four trims of a zone each, then nothing to read; random: each trim at
    // a zone holding data until none does (3 trims, whatever the draws).
    for (rw, n) in [("trim", 4), ("randtrim", 3)] {
        let text = format!(
            "{head}[t]\nstonewall\nrw={rw}\nbs=1m\nwrite_iops_log=t\n\
             [r]\nstonewall\nrw=randread\nbs=256k\nwrite_iops_log=r\n"
        );
        let (ours, theirs) = both(&text, &["w", "t", "r"]);
        assert_eq!(ours.ios, theirs.ios, "{rw}");
        assert_eq!(ours.ios[0], writes, "{rw}");
        assert!(ours.ios[2].is_empty(), "{rw}: {:?}", ours.ios[2]);
        assert_eq!(ours.trims, theirs.trims, "{rw}");
        // (The reader did nothing: no block for it.)
        assert_eq!(ours.trims, [0, n], "{rw}");
    }
    // trimwrite, two passes: each zone trimmed, then written whole; the first pass resets
    // the three zones with data, the second all four (7 resets, on the write line).
    let text = format!("{head}[tw]\nstonewall\nrw=trimwrite\nbs=1m\nloops=2\nwrite_iops_log=tw\n");
    let (ours, theirs) = both(&text, &["w", "tw"]);
    assert_eq!(ours.ios, theirs.ios);
    let whole: Vec<Io> = (0..8).map(|i| (1, i % 4 * MIB, MIB)).collect();
    assert_eq!(ours.ios[1], whole);
    assert_eq!(
        (ours.trims.clone(), ours.resets.clone()),
        (vec![0, 8], vec![0, 7])
    );
    assert_eq!((ours.trims, ours.resets), (theirs.trims, theirs.resets));
    // On fresh zones: a random trim (or randtrimwrite) finds nothing, a sequential one
    // trims every zone, trimwrite writes each after.
    for (rw, n, w) in [
        ("randtrim", 0, 0),
        ("randtrimwrite", 0, 0),
        ("trim", 4, 0),
        ("trimwrite", 4, 4),
    ] {
        let (ours, theirs) = both(&job(&format!("rw={rw} bs=1m")), &["z"]);
        assert_eq!(ours.ios, theirs.ios, "{rw}");
        assert_eq!(ours.ios[0].len(), w, "{rw}");
        assert_eq!(ours.trims, theirs.trims, "{rw}");
        // (A job without I/O has no block.)
        let want: &[u64] = if n == 0 { &[] } else { &[n] };
        assert_eq!(ours.trims, want, "{rw}");
        assert_eq!(ours.resets, theirs.resets, "{rw}");
    }
}

/// `verify` under `zonemode=zbd`, as fio 3.33: when a writer's pass starts, the zones of
/// its region holding data are reset (`zbd_file_reset`), and no zone is reset during the
/// pass — a full zone is not written again (the writes go to another zone, or the pass
/// ends); then the verify phase reads every block back. Sequential writes as fio's, I/O
/// by I/O (the logs' writes: hostbench's logs have no rows of the verify phase), the
/// same reads and resets; random ones by the rules, as many reads as writes.
#[test]
fn zbd_verify_writes_and_reads_back_as_fio() {
    if !need_fio("zbd_verify_writes_and_reads_back_as_fio") {
        return;
    }
    // (options, writes = reads)
    let cases = [
        ("rw=write bs=64k verify=crc32c zonecapacity=768k", 48),
        ("rw=write bs=256k verify=md5 offset=512k size=3584k", 12),
        ("rw=write bs=128k verify=crc32c zonecapacity=640k", 20),
        ("rw=write bs=128k verify=crc32c max_open_zones=1", 32),
    ];
    for (c, n) in cases {
        let (ours, theirs) = both(&job(c), &["z"]);
        let writes =
            |r: &Zrun| -> Vec<Io> { r.ios[0].iter().copied().filter(|i| i.0 == 1).collect() };
        assert_eq!(writes(&ours), writes(&theirs), "{c}");
        assert_eq!(writes(&ours).len(), n, "{c}");
        assert_eq!(
            (&ours.reads, &ours.resets),
            (&theirs.reads, &theirs.resets),
            "{c}"
        );
        assert_eq!(
            (ours.reads.clone(), ours.resets.clone()),
            (vec![n as u64], vec![0]),
            "{c}"
        );
    }
    // A verified writer after 2.5 MiB written: the three zones holding data reset first.
    let text = "[global]\nfilename=f4\nioengine=psync\nsize=4m\nzonemode=zbd\nzonesize=1m\n\
                log_offset=1\n[w]\nrw=write\nbs=256k\nio_size=2560k\nwrite_iops_log=w\n\
                [v]\nstonewall\nrw=write\nbs=64k\nverify=crc32c\nwrite_iops_log=v\n";
    let (ours, theirs) = both(text, &["w", "v"]);
    let writes = |r: &Zrun| -> Vec<Io> { r.ios[1].iter().copied().filter(|i| i.0 == 1).collect() };
    assert_eq!(writes(&ours), writes(&theirs));
    assert_eq!(writes(&ours).len(), 64);
    assert_eq!((&ours.reads, &ours.resets), (&theirs.reads, &theirs.resets));
    assert_eq!(
        (ours.reads.clone(), ours.resets.clone()),
        (vec![0, 64], vec![0, 3])
    );
    // Random writes: every block of each zone drawn once, at its write pointer; with a
    // capacity of 768 KiB the blocks past it go to other zones until all are full.
    for (c, cap, n) in [
        ("rw=randwrite bs=64k verify=crc32c", MIB, 64),
        (
            "rw=randwrite bs=64k verify=crc32c zonecapacity=768k",
            768 * KIB,
            48,
        ),
        (
            "rw=randwrite bs=64k verify=crc32c max_open_zones=2",
            MIB,
            64,
        ),
    ] {
        let (ours, theirs) = both(&job(c), &["z"]);
        for (who, r) in [("hostbench", &ours), ("fio", &theirs)] {
            let w: Vec<Io> = r.ios[0].iter().copied().filter(|i| i.0 == 1).collect();
            assert_eq!(w.len(), n, "{c}: {who}");
            assert_eq!(replay(&w, MIB, cap, 4, None), 0, "{c}: {who}");
            assert_eq!(
                (r.reads.clone(), r.resets.clone()),
                (vec![n as u64], vec![0]),
                "{c}: {who}"
            );
        }
    }
}

/// `zoneskip` under `zonemode=zbd` (sequential jobs only, as fio's
/// `setup_zbd_zone_mode`): after a zone's worth of I/O, or at the zone's end (for a read,
/// at its write pointer), the job goes on `zoneskip` bytes past the zone's end, and from
/// the region's start again past the file's end, until its size is done. Every I/O and
/// the resets as fio's.
#[test]
fn zbd_zoneskip_ios_are_fios() {
    if !need_fio("zbd_zoneskip_ios_are_fios") {
        return;
    }
    let cases = [
        // Zones 0 and 2, then again from zone 0, resetting each (2 resets).
        "rw=write bs=256k zoneskip=1m",
        // 384 KiB does not fit a third time: the zone's worth is done at 768 KiB.
        "rw=write bs=384k zoneskip=1m",
        // At the capacity the writer jumps to the zone's end, then skips.
        "rw=write bs=256k zoneskip=2m zonecapacity=768k io_size=6m",
        "rw=write bs=128k zoneskip=1m loops=2",
        // In zones (fio's `Nz`): 2 zones.
        "rw=write bs=128k zoneskip=2z io_size=6m",
        "rw=write bs=256k zoneskip=1m offset=1m size=3m",
        // Nothing written: nothing to read.
        "rw=read bs=256k zoneskip=1m",
    ];
    for c in cases {
        let (ours, theirs) = both(&job(c), &["z"]);
        assert_eq!(ours.ios, theirs.ios, "{c}");
        assert_eq!(ours.resets, theirs.resets, "{c}: zone resets");
    }
    // A reader skips at each write pointer: 2.5 MiB written, read zone 0, then zone 2's
    // half, then from zone 0 again.
    let text = "[global]\nfilename=f4\nioengine=psync\nsize=4m\nzonemode=zbd\nzonesize=1m\n\
                log_offset=1\n[w]\nrw=write\nbs=256k\nio_size=2560k\nwrite_iops_log=w\n\
                [r]\nstonewall\nrw=read\nbs=128k\nzoneskip=1m\nwrite_iops_log=r\n";
    let (ours, theirs) = both(text, &["w", "r"]);
    assert_eq!(ours.ios, theirs.ios);
    assert!(!ours.ios[1].is_empty());
    // A skip past the region but inside the file: fio 3.33 aborts (`zone_lock`'s
    // assertion, signal 6); hostbench starts from the region's start again, as fio does
    // past the file's end: zone 0 twice (one reset).
    let ours = zrun(
        "zbd",
        &job("rw=write bs=256k zoneskip=1m size=2m"),
        &["z"],
        false,
    );
    assert_eq!(ours.ran.code, 0, "{}", ours.ran.err);
    let zone0: Vec<Io> = (0..4).map(|i| (1, i * 256 * KIB, 256 * KIB)).collect();
    assert_eq!(ours.ios[0], [zone0.clone(), zone0].concat());
    assert_eq!(ours.resets, [1]);
}
