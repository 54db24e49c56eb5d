//! What fio's write jobs write (`refill_buffers`, `scramble_buffers`, `zero_buffers`,
//! `buffer_pattern`, `buffer_compress_*`, `dedupe_*`), side by side with the installed fio:
//! the same 16 MiB job written by both, each file measured the same way — the share of
//! distinct 4 KiB blocks (sha256), the zlib level-1 size of each 4 KiB block on its own,
//! and of the whole file as one stream (which sees a buffer written again within 32 KiB).
//! Those are what a deduplicating or compressing device sees, and they must agree within a
//! few percent. hostbench's figures are also held to what the options promise, so the test
//! means something without fio too.
//!
//! The measuring is python3's zlib and hashlib (no compressor crate in the workspace);
//! without python3 the tests are skipped with a message. Without fio the comparisons are
//! skipped with a message, unless `HOSTBENCH_TEST_FIO` is set: then a missing fio fails.

use super::fio::{s, tmp};
use super::fio_files::{fio, hb};
use super::fio_seq::need_fio;
use std::path::Path;

/// Prints, per file: blocks, distinct blocks, zlib-1 ratio of the stream, of each block.
const MEASURE: &str = r#"
import sys, zlib, hashlib
for p in sys.argv[1:]:
    d = open(p, 'rb').read()
    bs = 4096
    n = len(d) // bs
    b = [d[i*bs:(i+1)*bs] for i in range(n)]
    distinct = len({hashlib.sha256(x).digest() for x in b})
    stream = len(zlib.compress(d, 1)) / max(len(d), 1)
    per = sum(len(zlib.compress(x, 1)) for x in b) / max(n * bs, 1)
    print(n, distinct, stream, per)
"#;

/// Prints the distinct 4 KiB blocks of each file and of all of them together.
const DISTINCT: &str = r#"
import sys, hashlib
all = []
for p in sys.argv[1:]:
    d = open(p, 'rb').read()
    h = [hashlib.sha256(d[i:i+4096]).digest() for i in range(0, len(d) - len(d) % 4096, 4096)]
    all += h
    print(len(h), len(set(h)))
print(len(all), len(set(all)))
"#;

/// One file's figures.
#[derive(Debug, Clone, Copy)]
struct Fig {
    blocks: u64,
    /// Share of distinct blocks.
    distinct: f64,
    /// zlib-1 size / size, the file as one stream.
    stream: f64,
    /// zlib-1 size / size, each block on its own.
    block: f64,
}

fn python() -> bool {
    let ok = std::process::Command::new("python3")
        .arg("-c")
        .arg("import zlib, hashlib")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skip: python3 (with zlib) is not installed; buffer contents not measured");
    }
    ok
}

fn py(script: &str, files: &[&Path]) -> Vec<Vec<f64>> {
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(files)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect()
}

fn measure(f: &Path) -> Fig {
    let v = &py(MEASURE, &[f])[0];
    Fig {
        blocks: v[0] as u64,
        distinct: v[1] / v[0],
        stream: v[2],
        block: v[3],
    }
}

/// A 16 MiB sequential write of `file` with 4 KiB blocks (psync) and `extra`.
fn args(file: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "--name=bufs",
        "--rw=write",
        "--bs=4k",
        "--size=16m",
        "--ioengine=psync",
        "--output-format=json",
    ]
    .iter()
    .map(|x| x.to_string())
    .collect();
    a.push(format!("--filename={}", s(file)));
    a.extend(extra.iter().map(|x| x.to_string()));
    a
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(|x| x.as_str()).collect()
}

/// The cases: options, and what hostbench's file must show whatever fio does
/// (distinct share, per-block zlib ratio, each as (low, high)).
type Case = (&'static [&'static str], (f64, f64), (f64, f64));
const CASES: &[Case] = &[
    // Scrambled: no block repeats; the stream compressor sees the one buffer again.
    (&[], (1.0, 1.0), (0.85, 0.97)),
    // Given as 0, compression turns scrambling off and refills nothing: one block.
    (
        &["--buffer_compress_percentage=0"],
        (0.0, 0.001),
        (0.99, 1.01),
    ),
    (
        &["--buffer_compress_percentage=50"],
        (1.0, 1.0),
        (0.48, 0.56),
    ),
    (
        &["--buffer_compress_percentage=90"],
        (1.0, 1.0),
        (0.09, 0.15),
    ),
    (
        &[
            "--buffer_compress_percentage=50",
            "--buffer_compress_chunk=0",
        ],
        (1.0, 1.0),
        (0.48, 0.56),
    ),
    (&["--dedupe_percentage=50"], (0.47, 0.53), (0.99, 1.01)),
    // dedupe_percentage, 0 too, turns refill_buffers on: every block distinct; a
    // refill_buffers=0 after it turns it off again: one block.
    (&["--dedupe_percentage=0"], (1.0, 1.0), (0.99, 1.01)),
    (
        &["--dedupe_percentage=0", "--refill_buffers=0"],
        (0.0, 0.001),
        (0.99, 1.01),
    ),
    (
        &["--dedupe_percentage=50", "--dedupe_mode=working_set"],
        (0.47, 0.53),
        (0.99, 1.01),
    ),
    (
        &["--dedupe_percentage=50", "--buffer_compress_percentage=50"],
        (0.47, 0.53),
        (0.48, 0.56),
    ),
    (&["--zero_buffers"], (0.0, 0.001), (0.0, 0.02)),
    (
        &["--zero_buffers", "--scramble_buffers=1"],
        (1.0, 1.0),
        (0.03, 0.09),
    ),
    (&["--buffer_pattern=0xdeadbeef"], (0.0, 0.001), (0.0, 0.02)),
    (
        &["--buffer_pattern=\"hostbench\"0x0a"],
        (0.0, 0.001),
        (0.0, 0.03),
    ),
    (&["--refill_buffers"], (1.0, 1.0), (0.99, 1.01)),
    (&["--scramble_buffers=0"], (0.0, 0.001), (0.99, 1.01)),
    // verify makes each block; compression still zeroes each block's tail.
    (
        &["--verify=md5", "--buffer_compress_percentage=60"],
        (1.0, 1.0),
        (0.38, 0.46),
    ),
];

#[test]
fn write_buffers_compress_and_dedupe_as_fios() {
    if !python() {
        return;
    }
    let with_fio = need_fio("write_buffers_compress_and_dedupe_as_fios");
    let d = tmp("bufs");
    let mut bad = Vec::new();
    for (extra, dist, blk) in CASES {
        let hf = d.join("hb.dat");
        let r = hb(&d, &strs(&args(&hf, extra)));
        assert_eq!(r.code, 0, "hostbench {extra:?}: {}", r.err);
        let h = measure(&hf);
        std::fs::remove_file(&hf).unwrap();
        assert_eq!(h.blocks, 4096, "{extra:?}");
        if !(dist.0 - 1e-9..=dist.1 + 1e-9).contains(&h.distinct)
            || !(blk.0..=blk.1).contains(&h.block)
        {
            bad.push(format!(
                "{extra:?}: hostbench {h:?}, expected distinct {dist:?}, block zlib {blk:?}"
            ));
        }
        if !with_fio {
            continue;
        }
        let ff = d.join("fio.dat");
        let r = fio(&d, &strs(&args(&ff, extra)));
        assert_eq!(r.code, 0, "fio {extra:?}: {}", r.err);
        let f = measure(&ff);
        std::fs::remove_file(&ff).unwrap();
        eprintln!("{extra:?}\n  fio {f:?}\n  hb  {h:?}");
        let near = |a: f64, b: f64| (a - b).abs() <= 0.02 + 0.03 * a.max(b);
        if !near(f.distinct, h.distinct) || !near(f.stream, h.stream) || !near(f.block, h.block) {
            bad.push(format!("{extra:?}: fio {f:?}, hostbench {h:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// fio's examples/dedupe-global.fio (size 16m instead of 100m): two jobs whose working sets
/// are spread over both, so each file alone dedupes less than the two together.
#[test]
fn fios_dedupe_global_example_dedupes_as_in_fio() {
    if !python() {
        return;
    }
    let text = "[global]\nioengine=libaio\niodepth=256\nsize=16m\ndedupe_mode=working_set\n\
                dedupe_global=1\ndedupe_percentage=50\nblocksize=4k\nrw=write\n\
                buffer_compress_percentage=50\ndedupe_working_set_percentage=50\n\n[a]\n\n[b]\n";
    let ratios = |dir: &Path| {
        let v = py(DISTINCT, &[&dir.join("a.0.0"), &dir.join("b.0.0")]);
        v.iter().map(|r| r[1] / r[0]).collect::<Vec<f64>>()
    };
    let d = tmp("bufs-dg");
    std::fs::write(d.join("dedupe-global.fio"), text).unwrap();
    let r = hb(&d, &["dedupe-global.fio"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let h = ratios(&d);
    // Each alone: about 2048 unique writes and the other's part of the working set;
    // together the working set is mostly written already (fio: 0.67, 0.68, 0.53).
    assert!(h[0] > 0.62 && h[0] < 0.73, "{h:?}");
    assert!(h[1] > 0.62 && h[1] < 0.73, "{h:?}");
    assert!(h[2] > 0.49 && h[2] < 0.56 && h[2] < h[0] - 0.08, "{h:?}");
    if !need_fio("fios_dedupe_global_example_dedupes_as_in_fio") {
        return;
    }
    let fd = tmp("bufs-dg-fio");
    std::fs::write(fd.join("dedupe-global.fio"), text).unwrap();
    let r = fio(&fd, &["dedupe-global.fio"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let f = ratios(&fd);
    eprintln!("dedupe-global a, b, a+b distinct: fio {f:?}, hostbench {h:?}");
    for (a, b) in f.iter().zip(&h) {
        assert!((a - b).abs() < 0.035, "fio {f:?}, hostbench {h:?}");
    }
}

#[test]
fn bad_buffer_options_are_one_line_and_exit_2() {
    let d = tmp("bufs-bad");
    for (extra, needle) in [
        (
            &["--buffer_compress_percentage=120"][..],
            "max value out of range",
        ),
        (
            &["--dedupe_mode=often"][..],
            "expected repeat or working_set",
        ),
        (
            &[
                "--dedupe_percentage=60",
                "--dedupe_mode=working_set",
                "--dedupe_working_set_percentage=50",
            ][..],
            "at most 100",
        ),
        (&["--buffer_pattern=0xzz"][..], "buffer_pattern"),
        (&["--buffer_pattern=%o"][..], "no %o"),
        (
            &["--buffer_compress_chunk=lots"][..],
            "buffer_compress_chunk",
        ),
    ] {
        let f = d.join("x.dat");
        let r = hb(&d, &strs(&args(&f, extra)));
        assert_eq!(r.code, 2, "{extra:?}: {}", r.err);
        assert!(r.err.contains(needle), "{extra:?}: {}", r.err);
        assert_eq!(r.err.trim().lines().count(), 1, "{extra:?}: {}", r.err);
        assert!(!f.exists(), "{extra:?} wrote a file");
    }
}

/// The distinct 4 KiB blocks of `f`, as a share of its blocks.
fn distinct_share(f: &Path) -> f64 {
    let d = std::fs::read(f).unwrap();
    let blocks: Vec<&[u8]> = d.chunks(4096).collect();
    let set: std::collections::HashSet<&[u8]> = blocks.iter().copied().collect();
    set.len() as f64 / blocks.len() as f64
}

/// A reader's file laid out by hostbench holds what fio's `extend_file` writes: each block
/// filled afresh (no block twice: before, one random MiB repeated, so a deduplicating
/// device stored an eighth of an 8 MiB file), or the job's buffer_pattern / zero_buffers.
#[test]
fn laid_out_files_hold_what_fios_layout_writes() {
    let d = tmp("bufs-layout");
    let lay = d.join("lay");
    for (extra, want) in [
        (&[][..], 1.0),
        (&["--zero_buffers"][..], 1.0 / 2048.0),
        (&["--buffer_pattern=0xab"][..], 1.0 / 2048.0),
    ] {
        let _ = std::fs::remove_file(&lay);
        let mut a = vec![
            "--name=w",
            "--filename=lay",
            "--size=8m",
            "--bs=4k",
            "--rw=read",
        ];
        a.extend_from_slice(extra);
        let r = hb(&d, &a);
        assert_eq!(r.code, 0, "{extra:?}: {}", r.err);
        let share = distinct_share(&lay);
        assert!((share - want).abs() < 1e-9, "{extra:?}: {share}");
        if extra.is_empty() {
            continue;
        }
        let bytes = std::fs::read(&lay).unwrap();
        let b = if extra[0] == "--zero_buffers" {
            0
        } else {
            0xab
        };
        assert!(bytes.iter().all(|&x| x == b), "{extra:?}");
    }
    if need_fio("laid_out_files_hold_what_fios_layout_writes") {
        let _ = std::fs::remove_file(&lay);
        let r = fio(
            &d,
            &[
                "--name=w",
                "--filename=lay",
                "--size=8m",
                "--bs=4k",
                "--rw=read",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.err);
        assert_eq!(distinct_share(&lay), 1.0, "fio's layout");
    }
}
