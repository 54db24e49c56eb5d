//! blktrace binary logs given to `read_iolog` (fio 3.33's `blktrace.c`) and their merging
//! (`merge_blktrace_file`, `--merge-blktrace-only`): traces written here record by record
//! (`struct blk_io_trace`, native byte order or swapped, with payloads, events fio takes
//! and events it skips, several devices), replayed by hostbench and by the installed fio
//! onto the same file, compared call by call through strace.

use super::fio::{s, tmp};
use super::fio_engines::have_strace;
use super::fio_files::{doc, fio, hb};
use super::fio_iolog::traced;
use super::fio_seq::need_fio;
use std::path::Path;

const MAGIC: u32 = 0x6561_7407;
const READ: u32 = 1 << 16;
const WRITE: u32 = 2 << 16;
const FLUSH: u32 = 4 << 16;
const SYNC: u32 = 8 << 16;
const QUEUE: u32 = 16 << 16;
const ISSUE: u32 = 64 << 16;
const COMPLETE: u32 = 128 << 16;
const NOTIFY: u32 = 1024 << 16;
const DISCARD: u32 = 8192 << 16;
/// Queued, back merged, request allocated, issued, completed.
const Q: u32 = 1 | QUEUE;
const M: u32 = 2 | QUEUE;
const G: u32 = 4 | QUEUE;
const D: u32 = 7 | ISSUE;
const C: u32 = 8 | COMPLETE;

/// Devices 8:0 and 8:16 (`dev_t` with 20 minor bits, as the kernel's blktrace writes it).
const SDA: u32 = 8 << 20;
const SDB: u32 = 8 << 20 | 16;

/// One record: time (ns), action, sector, bytes, device, payload.
struct Ev(u64, u32, u64, u32, u32, &'static [u8]);

/// The records of `evs`, in native byte order or swapped.
fn trace(evs: &[Ev], swap: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, Ev(time, action, sector, bytes, dev, pdu)) in evs.iter().enumerate() {
        let f32 = |v: u32| if swap { v.swap_bytes() } else { v }.to_ne_bytes();
        let f64 = |v: u64| if swap { v.swap_bytes() } else { v }.to_ne_bytes();
        let f16 = |v: u16| if swap { v.swap_bytes() } else { v }.to_ne_bytes();
        out.extend(f32(MAGIC));
        out.extend(f32(i as u32));
        out.extend(f64(*time));
        out.extend(f64(*sector));
        out.extend(f32(*bytes));
        out.extend(f32(*action));
        out.extend(f32(4242));
        out.extend(f32(*dev));
        out.extend(f32(1));
        out.extend(f16(0));
        out.extend(f16(pdu.len() as u16));
        out.extend(*pdu);
    }
    out
}

/// A trace of two devices: reads, writes, a flush, a zero-byte read; merges, issues,
/// completions and notifications (with payloads) that a replay skips.
fn mixed() -> Vec<Ev> {
    vec![
        Ev(
            1_000_000,
            NOTIFY,
            0,
            0,
            SDA,
            b"fio\0\0\0\0\0\0\0\0\0\0\0\0\0",
        ),
        Ev(1_000_000, Q | READ, 0, 4096, SDA, b""),
        Ev(1_010_000, G | READ, 0, 4096, SDA, b""),
        Ev(1_020_000, D | READ, 0, 4096, SDA, b""),
        Ev(1_030_000, C | READ, 0, 4096, SDA, b""),
        Ev(
            2_000_000,
            Q | WRITE,
            16,
            8192,
            SDB,
            b"\x01\x02\x03\x04\x05\x06\x07\x08",
        ),
        Ev(2_100_000, Q | WRITE | SYNC, 32, 4096, SDA, b""),
        Ev(2_200_000, M | WRITE, 40, 4096, SDA, b""),
        Ev(2_300_000, Q | READ, 8, 0, SDB, b""),
        Ev(2_400_000, Q | WRITE | FLUSH, 0, 0, SDA, b""),
        // A timestamp notification: its action's low bits read as a queue event's.
        Ev(2_500_000, 1 | NOTIFY, 0, 0, SDA, b"\0\0\0\0\0\0\0\0"),
        Ev(2_600_000, 2 | NOTIFY, 0, 0, SDA, b"hello"),
        Ev(3_000_000, Q | READ, 64, 2048, SDB, b""),
        Ev(3_100_000, C | WRITE, 16, 8192, SDB, b""),
        Ev(3_200_000, C | WRITE, 32, 8192, SDA, b""),
        Ev(4_000_000, Q | WRITE | SYNC, 128, 512, SDA, b""),
    ]
}

/// What a replay of [`mixed`] does to its file.
const MIXED: [&str; 6] = [
    "read 0 4096",
    "write 8192 8192",
    "write 16384 4096",
    "sync",
    "read 32768 2048",
    "write 65536 512",
];

/// The zero-byte queue event's line, as fio says it.
const ZERO: &str = "blktrace: ignoring zero byte trace: action=110001";

#[test]
fn a_blktrace_replays_its_queue_events_as_fio() {
    if !need_fio("a_blktrace_replays_its_queue_events_as_fio")
        || !have_strace("a_blktrace_replays_its_queue_events_as_fio")
    {
        return;
    }
    let d = tmp("bt-replay");
    std::fs::write(d.join("bt.bin"), trace(&mixed(), false)).unwrap();
    std::fs::write(d.join("sw.bin"), trace(&mixed(), true)).unwrap();
    for (log, opts, want) in [
        ("bt.bin", &[][..], &MIXED[..]),
        ("sw.bin", &[][..], &MIXED[..]),
        (
            "bt.bin",
            &["--replay_skip=write,sync"][..],
            &["read 0 4096", "read 32768 2048"][..],
        ),
        (
            "bt.bin",
            &["--replay_scale=2", "--replay_align=4096"][..],
            &[
                "read 0 4096",
                "write 4096 8192",
                "write 8192 4096",
                "sync",
                "read 16384 4096",
                "write 32768 4096",
            ][..],
        ),
    ] {
        for ours in [true, false] {
            // (A replay reads what is there: the file is made first.)
            std::fs::write(d.join("g"), vec![0u8; 128 << 10]).unwrap();
            let rl = format!("--read_iolog={log}");
            let a = [
                &[
                    "--name=j",
                    &rl,
                    "--replay_redirect=g",
                    "--replay_no_stall=1",
                    "--ioengine=psync",
                    "--output-format=json",
                ][..],
                opts,
            ]
            .concat();
            let who = if ours { "hostbench" } else { "fio" };
            let got = traced(&d, ours, &a, "g");
            assert_eq!(got, want, "{log} {opts:?} replayed by {who}");
            std::fs::write(d.join("g"), vec![0u8; 128 << 10]).unwrap();
            let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
            assert_eq!(r.code, 0, "{who}: {}", r.err);
            // fio says it once.
            assert_eq!(
                r.err.lines().filter(|l| *l == ZERO).count(),
                1,
                "{who}: {}",
                r.err
            );
            let j = &doc(&r.out)["jobs"][0];
            let n = |w: &str| want.iter().filter(|x| x.starts_with(w)).count() as u64;
            let bytes = |w: &str| -> u64 {
                want.iter()
                    .filter(|x| x.starts_with(w))
                    .map(|x| x.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
                    .sum()
            };
            assert_eq!(j["read"]["total_ios"], n("read "), "{log} {opts:?} {who}");
            assert_eq!(j["write"]["total_ios"], n("write "), "{log} {opts:?} {who}");
            assert_eq!(j["sync"]["total_ios"], n("sync"), "{log} {opts:?} {who}");
            assert_eq!(j["read"]["io_bytes"], bytes("read "), "{log} {who}");
            assert_eq!(j["write"]["io_bytes"], bytes("write "), "{log} {who}");
        }
    }
}

/// The trace's deepest queue becomes the job's iodepth unless one is given: four reads
/// queued before their completions replay at depth 4 with libaio (fio's depth histogram),
/// at 1 with iodepth=1 or read_iolog_chunked.
#[test]
fn a_blktraces_queue_depth_is_the_jobs_iodepth() {
    if !need_fio("a_blktraces_queue_depth_is_the_jobs_iodepth") {
        return;
    }
    let d = tmp("bt-depth");
    let mut evs = Vec::new();
    for round in 0..8u64 {
        let t = round * 1_000_000;
        for k in 0..4u64 {
            evs.push(Ev(t + k + 1, Q | READ, (round * 4 + k) * 8, 4096, SDA, b""));
        }
        for k in 0..4u64 {
            evs.push(Ev(
                t + 500 + k,
                C | READ,
                (round * 4 + k) * 8,
                4096,
                SDA,
                b"",
            ));
        }
    }
    std::fs::write(d.join("q4.bin"), trace(&evs, false)).unwrap();
    std::fs::write(d.join("g"), vec![0u8; 256 << 10]).unwrap();
    // (A chunked read of the trace keeps the job's depth, as fio's.)
    for (extra, deep) in [
        (None, true),
        (Some("--iodepth=1"), false),
        (Some("--read_iolog_chunked=1"), false),
    ] {
        let mut levels = Vec::new();
        for ours in [true, false] {
            let mut a = vec![
                "--name=j",
                "--read_iolog=q4.bin",
                "--replay_redirect=g",
                "--replay_no_stall=1",
                "--ioengine=libaio",
                "--output-format=json",
            ];
            a.extend(extra);
            let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
            assert_eq!(r.code, 0, "{ours}: {}", r.err);
            let j = &doc(&r.out)["jobs"][0];
            assert_eq!(j["read"]["total_ios"], 32, "{ours}");
            let one = j["iodepth_level"]["1"].as_f64().unwrap();
            assert_eq!(
                one < 100.0,
                deep,
                "{extra:?} {ours}: {}",
                j["iodepth_level"]
            );
            levels.push(j["iodepth_level"].clone());
        }
        // (Measured: 1=3.125%, 2=6.25%, 4=90.625% in both.)
        assert_eq!(levels[0], levels[1], "{extra:?}: hostbench, fio");
    }
}

#[test]
fn a_trace_writes_only_what_the_user_named() {
    let d = tmp("bt-safe");
    // A device no machine has (major 4095): no file to replay onto.
    let far = 4095 << 20 | 3;
    std::fs::write(
        d.join("far.bin"),
        trace(&[Ev(1, Q | WRITE, 0, 4096, far, b"")], false),
    )
    .unwrap();
    let r = hb(&d, &["--name=j", "--read_iolog=far.bin"]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains("device 4095:3 is no block device in /dev"),
        "{}",
        r.err
    );
    assert!(r.err.contains("replay_redirect=FILE"), "{}", r.err);
    // A device that is there (the first loop device's node) but not named by the job:
    // refused, nothing written.
    if Path::new("/dev/loop0").exists() {
        std::fs::write(
            d.join("loop.bin"),
            trace(&[Ev(1, Q | WRITE, 0, 4096, 7 << 20, b"")], false),
        )
        .unwrap();
        let r = hb(&d, &["--name=j", "--read_iolog=loop.bin"]);
        assert_eq!(r.code, 2, "{}", r.err);
        assert!(
            r.err
                .contains("replays onto /dev/loop0 (device 7:0), which the job does not name"),
            "{}",
            r.err
        );
        let r = hb(
            &d,
            &["--name=j", "--read_iolog=loop.bin", "--filename=other"],
        );
        assert_eq!(r.code, 2, "{}", r.err);
        assert!(!d.join("other").exists());
    }
    // Several devices onto one file need replay_redirect.
    if Path::new("/dev/loop0").exists() && Path::new("/dev/loop1").exists() {
        let two = trace(
            &[
                Ev(1, Q | READ, 0, 4096, 7 << 20, b""),
                Ev(2, Q | READ, 0, 4096, 7 << 20 | 1, b""),
            ],
            false,
        );
        std::fs::write(d.join("two.bin"), two).unwrap();
        let r = hb(
            &d,
            &["--name=j", "--read_iolog=two.bin", "--filename=/dev/loop0"],
        );
        assert_eq!(r.code, 2, "{}", r.err);
        assert!(r.err.contains("the trace names 2 devices"), "{}", r.err);
    }
    // Trims are refused with their way out.
    std::fs::write(
        d.join("trim.bin"),
        trace(
            &[
                Ev(1, Q | WRITE | DISCARD, 0, 4096, far, b""),
                Ev(2, Q | READ, 0, 4096, far, b""),
            ],
            false,
        ),
    )
    .unwrap();
    std::fs::write(d.join("g"), vec![0u8; 64 << 10]).unwrap();
    let base = ["--name=j", "--read_iolog=trim.bin", "--replay_redirect=g"];
    let r = hb(&d, &base);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("replay_skip=trim"), "{}", r.err);
    let r = hb(&d, &[&base[..], &["--replay_skip=trim"]].concat());
    assert_eq!(r.code, 0, "{}", r.err);
    // A record cut short, a bad magic after the first record.
    let mut bad = trace(&mixed(), false);
    bad.truncate(30);
    std::fs::write(d.join("short.bin"), bad).unwrap();
    let r = hb(
        &d,
        &["--name=j", "--read_iolog=short.bin", "--replay_redirect=g"],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("shorter than one record"), "{}", r.err);
    // (The second record starts after the first's 16-byte payload; its magic's top byte
    // last in native order, its version first.)
    let top = if cfg!(target_endian = "little") { 3 } else { 0 };
    for (at, what) in [
        (top, "record 2 has a bad magic"),
        (3 - top, "blktrace version 6"),
    ] {
        let mut bad = trace(&mixed(), false);
        bad[64 + at] = if at == top { 0x12 } else { 6 };
        std::fs::write(d.join("magic.bin"), bad).unwrap();
        let r = hb(
            &d,
            &["--name=j", "--read_iolog=magic.bin", "--replay_redirect=g"],
        );
        assert_eq!(r.code, 2, "{}", r.err);
        assert!(r.err.contains(what), "{}", r.err);
    }
}

/// `--readonly`: fio skips the trace's writes (every record with the write bit, queue
/// events or not) and says how many; the reads replay.
#[test]
fn readonly_skips_a_traces_writes_as_fio() {
    if !need_fio("readonly_skips_a_traces_writes_as_fio")
        || !have_strace("readonly_skips_a_traces_writes_as_fio")
    {
        return;
    }
    let d = tmp("bt-ro");
    std::fs::write(d.join("bt.bin"), trace(&mixed(), false)).unwrap();
    for ours in [true, false] {
        std::fs::write(d.join("g"), vec![0u8; 128 << 10]).unwrap();
        let a = [
            "--name=j",
            "--read_iolog=bt.bin",
            "--replay_redirect=g",
            "--replay_no_stall=1",
            "--readonly",
            "--output-format=json",
        ];
        let got = traced(&d, ours, &a, "g");
        assert_eq!(got, ["read 0 4096", "read 32768 2048"], "{ours}");
        let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
        assert_eq!(r.code, 0, "{ours}: {}", r.err);
        assert!(
            r.err
                .lines()
                .any(|l| l == "fio: j skips replay of 7 writes due to read-only"),
            "{ours}: {}",
            r.err
        );
    }
}

/// The record of each event of a merged trace: (time, action, sector).
fn records(b: &[u8]) -> Vec<(u64, u32, u64)> {
    b.chunks(48)
        .map(|r| {
            let u64_at = |i: usize| u64::from_ne_bytes(r[i..i + 8].try_into().unwrap());
            let u32_at = |i: usize| u32::from_ne_bytes(r[i..i + 4].try_into().unwrap());
            assert_eq!(u32_at(0), MAGIC);
            assert_eq!(
                u16::from_ne_bytes([r[46], r[47]]),
                0,
                "a merged record has no payload"
            );
            (u64_at(8), u32_at(28), u64_at(16))
        })
        .collect()
}

/// merge_blktrace_file: the traces' read/write queue events in time order, each trace's
/// times scaled by its scalar and run its iterations; the merged trace is what replays.
/// `--merge-blktrace-only` merges and runs nothing. (fio 3.33's merge reads 8 bytes per
/// record and fails, `fio: iolog short read`: not compared; see docs/fio.md.)
#[test]
fn merged_traces_replay_in_time_order() {
    let d = tmp("bt-merge");
    // a: reads at 1 and 3 ms (and a completion, dropped); b: writes at 2 and 4 ms.
    std::fs::write(
        d.join("a.bin"),
        trace(
            &[
                Ev(1_000_000, Q | READ, 0, 4096, SDA, b"\0\0\0\0"),
                Ev(1_500_000, C | READ, 0, 4096, SDA, b""),
                Ev(3_000_000, Q | READ, 8, 4096, SDA, b""),
            ],
            false,
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("b.bin"),
        trace(
            &[
                Ev(2_000_000, Q | WRITE, 16, 4096, SDB, b""),
                Ev(4_000_000, Q | WRITE, 24, 4096, SDB, b""),
            ],
            false,
        ),
    )
    .unwrap();
    let a = [
        "--name=j",
        "--read_iolog=a.bin:b.bin",
        "--merge_blktrace_file=m.bin",
        "--merge_blktrace_scalars=100:50",
        "--merge_blktrace_iters=2:1",
        "--merge-blktrace-only",
    ];
    let r = hb(&d, &a);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "");
    // a twice (its second pass shifted by its length, 3 ms), b at half time.
    assert_eq!(
        records(&std::fs::read(d.join("m.bin")).unwrap()),
        [
            (1_000_000, Q | READ, 0),
            (1_000_000, Q | WRITE, 16),
            (2_000_000, Q | WRITE, 24),
            (3_000_000, Q | READ, 8),
            (4_000_000, Q | READ, 0),
            (6_000_000, Q | READ, 8),
        ]
    );
    // Without --merge-blktrace-only the merged trace replays.
    std::fs::remove_file(d.join("m.bin")).unwrap();
    std::fs::write(d.join("g"), vec![0u8; 64 << 10]).unwrap();
    let r = hb(
        &d,
        &[
            &a[..5],
            &[
                "--replay_redirect=g",
                "--replay_no_stall=1",
                "--output-format=json",
            ],
        ]
        .concat(),
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let j = &doc(&r.out)["jobs"][0];
    assert_eq!(
        (
            j["read"]["total_ios"].as_u64(),
            j["write"]["total_ios"].as_u64()
        ),
        (Some(4), Some(2))
    );
    assert!(d.join("m.bin").exists());
    // One scalar for two logs is refused (fio 3.33 says `merge_blktrace_scalars(1) !=
    // nr_logs(2)` and goes on without merging).
    let r = hb(
        &d,
        &[
            "--name=j",
            "--read_iolog=a.bin:b.bin",
            "--merge_blktrace_file=m.bin",
            "--merge_blktrace_scalars=100",
            "--merge-blktrace-only",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("merge_blktrace_scalars"), "{}", r.err);
    // A merged file that is one of its logs, a merge of no logs: refused, a.bin kept.
    let r = hb(
        &d,
        &[
            "--name=j",
            "--read_iolog=a.bin:b.bin",
            "--merge_blktrace_file=a.bin",
            "--merge-blktrace-only",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("is also a log to merge"), "{}", r.err);
    assert_eq!(
        std::fs::metadata(d.join("a.bin")).unwrap().len(),
        3 * 48 + 4
    );
    let r = hb(
        &d,
        &[
            "--name=j",
            "--merge_blktrace_file=m.bin",
            "--merge-blktrace-only",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("merges the logs of read_iolog"), "{}", r.err);
    // fio 3.33 (measured): its merge fails, the merged file stays empty.
    if need_fio("merged_traces_replay_in_time_order") {
        let _ = std::fs::remove_file(d.join("m.bin"));
        let r = fio(&d, &a);
        assert!(r.err.contains("fio: iolog short read"), "{}", r.err);
        assert_eq!(std::fs::read(d.join("m.bin")).unwrap().len(), 0);
    }
    let _ = s(&d);
}

/// Each queue event waits its time since the previous one (the trace's ns): five reads
/// 100 ms apart take 400 ms, 200 ms at `replay_time_scale=200`, next to nothing with
/// `replay_no_stall` (measured: fio 402, 200 and 5 ms of `job_runtime`).
#[test]
fn a_traces_times_are_kept_as_fio() {
    let d = tmp("bt-time");
    let evs: Vec<Ev> = (0..5u64)
        .map(|k| Ev(k * 100_000_000 + 1, Q | READ, k * 8, 4096, SDA, b""))
        .collect();
    std::fs::write(d.join("slow.bin"), trace(&evs, false)).unwrap();
    std::fs::write(d.join("g"), vec![0u8; 64 << 10]).unwrap();
    let with_fio = need_fio("a_traces_times_are_kept_as_fio");
    for (opt, lo, hi) in [
        ("--replay_time_scale=100", 395, 1500),
        ("--replay_time_scale=200", 195, 1000),
        ("--replay_no_stall=1", 0, 150),
    ] {
        for ours in [true, false] {
            if !ours && !with_fio {
                continue;
            }
            let a = [
                "--name=j",
                "--read_iolog=slow.bin",
                "--replay_redirect=g",
                opt,
                "--output-format=json",
            ];
            let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
            assert_eq!(r.code, 0, "{ours}: {}", r.err);
            let j = &doc(&r.out)["jobs"][0];
            assert_eq!(j["read"]["total_ios"], 5);
            let ms = j["job_runtime"].as_u64().unwrap();
            assert!((lo..hi).contains(&ms), "{opt} {ours}: {ms} ms");
        }
    }
}
