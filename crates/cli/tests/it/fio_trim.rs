//! fio's trims (`rw=trim`, `randtrim`, `trimwrite`, `randtrimwrite`), side by side with the
//! installed fio 3.33 where fio can run them (the null engine, a block device): the third
//! direction in the counts, the JSON `trim` object, the normal layout's `trim:` and `TRIM:`
//! lines and `issued rwts`, terse's trim fields; on a regular file hostbench punches holes
//! (fio 3.33's psync fails there with ENOTTY: it sends BLKDISCARD to a file); the queue
//! engines (libaio, io_uring) trim in their queue call once nothing is in flight, as fio
//! 3.33 does, and mmap through its file. The mounted-device refusal is in `safety.rs`.

use super::fio::{json, s, tmp};
use super::fio_seq::{fio, hb, need_fio};
use serde_json::Value;

/// (ios, bytes, ran) of the read, write and trim objects of the first JSON job.
pub(crate) fn dirs(v: &Value) -> Vec<(u64, u64, bool)> {
    let j = &v["jobs"][0];
    ["read", "write", "trim"]
        .iter()
        .map(|d| {
            (
                j[d]["total_ios"].as_u64().unwrap(),
                j[d]["io_bytes"].as_u64().unwrap(),
                j[d]["runtime"].as_u64().unwrap() > 0,
            )
        })
        .collect()
}

/// The lines of a normal report that say which directions ran and how much.
pub(crate) fn shape(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let t = l.trim_start();
            if t.starts_with("issued rwts:") {
                return Some(t.to_string());
            }
            for p in ["read:", "write:", "trim:", "READ:", "WRITE:", "TRIM:"] {
                if let Some(rest) = t.strip_prefix(p) {
                    // The direction and the amount, not the speed.
                    let amount = rest
                        .split(", ")
                        .find_map(|f| f.strip_prefix("io="))
                        .map(|a| a.split(' ').next().unwrap_or(a).to_string())
                        .or_else(|| {
                            rest.rfind('(')
                                .map(|i| rest[i..].split('/').next().unwrap().to_string())
                        })
                        .unwrap_or_default();
                    return Some(format!("{p} {amount}"));
                }
            }
            None
        })
        .collect()
}

#[test]
fn trim_modes_count_and_report_as_fio() {
    if !need_fio("trim_modes_count_and_report_as_fio") {
        return;
    }
    let d = tmp("trim-null");
    for rw in ["trim", "randtrim", "trimwrite", "randtrimwrite"] {
        // The trim slot of bs (`bs=4k,4k,16k`: trims of 16k), for plain sequential trims
        // only: with trims larger than the other sizes fio 3.33 ends a random trim job
        // early (10 of 16 trims in 256k), and trimwrite writes the range in write-size
        // pieces (61 writes of 4k after 16 trims of 16k); hostbench trims them all and
        // writes each range at once (docs/fio.md, Differences).
        let extras: &[&[&str]] = if rw != "trim" {
            &[&[]]
        } else {
            &[&[], &["--bs=4k,4k,16k"]]
        };
        for &extra in extras {
            let mut args = vec![
                "--name=t".to_string(),
                "--ioengine=null".into(),
                "--size=256k".into(),
                format!("--rw={rw}"),
            ];
            if extra.is_empty() {
                args.push("--bs=16k".into());
            }
            args.extend(extra.iter().map(|a| a.to_string()));
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let with = |f: &'static str| {
                let mut v = a.clone();
                v.push(f);
                v
            };
            let (f, _) = fio(&d, &with("--output-format=json"));
            let (h, _) = hb(&d, &with("--output-format=json"));
            let (fv, hv) = (json(&f), json(&h));
            assert_eq!(dirs(&hv), dirs(&fv), "{rw} {extra:?}: read, write, trim");
            assert!(dirs(&hv)[2].0 > 0, "{rw}: trims were done");
            let keys = |v: &Value| {
                let mut k: Vec<String> = v["jobs"][0]["trim"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .cloned()
                    .collect();
                k.sort();
                k
            };
            assert_eq!(keys(&hv), keys(&fv), "{rw}: the trim object's keys");
            let (f, _) = fio(&d, &a);
            let (h, _) = hb(&d, &a);
            assert_eq!(shape(&h), shape(&f), "{rw} {extra:?}: normal layout\n{h}");
            // Terse version 5 has a trim section (version 3 has none, in fio as here).
            let mut terse = with("--output-format=terse");
            terse.push("--terse-version=5");
            let (f, _) = fio(&d, &terse);
            let (h, _) = hb(&d, &terse);
            let fields = |t: &str| -> Vec<String> {
                t.lines()
                    .next()
                    .unwrap()
                    .split(';')
                    .map(String::from)
                    .collect()
            };
            assert_eq!(fields(&h).len(), fields(&f).len(), "{rw}: terse fields");
            // KiB of reads, writes and trims: the first field of each direction's section.
            let io = |t: &str| {
                let f = fields(t);
                (f[5].clone(), f[52].clone(), f[99].clone())
            };
            assert_eq!(io(&h), io(&f), "{rw}: terse KiB per direction");
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn trim_punches_holes_in_a_regular_file() {
    let d = tmp("trim-file");
    let f = d.join("f.dat");
    let name = format!("--filename={}", s(&f));
    hb(
        &d,
        &["--name=w", &name, "--size=4m", "--rw=write", "--bs=64k"],
    );
    let blocks = |p: &std::path::Path| {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(p).unwrap();
        (m.len(), m.blocks())
    };
    let (len0, b0) = blocks(&f);
    assert_eq!(len0, 4 << 20);
    if b0 == 0 {
        eprintln!("skip: this filesystem keeps no blocks for written data");
        return;
    }
    // Half the file, at random: half the blocks go, the length stays.
    let (out, _) = hb(
        &d,
        &[
            "--name=t",
            &name,
            "--size=2m",
            "--rw=randtrim",
            "--bs=64k",
            "--output-format=json",
        ],
    );
    let v = json(&out);
    let punched = v["jobs"][0]["error"].as_i64() == Some(0);
    if !punched {
        // A filesystem that cannot punch holes: the job says so, as an I/O error.
        let e = v["jobs"][0]["error"].as_i64().unwrap();
        assert_eq!(e, libc::EOPNOTSUPP as i64, "{out}");
        eprintln!("skip: this filesystem cannot punch holes");
        return;
    }
    assert_eq!(
        dirs(&v),
        [(0, 0, false), (0, 0, false), (32, 2 << 20, true)]
    );
    let (len1, b1) = blocks(&f);
    assert_eq!(len1, len0, "the length stays (KEEP_SIZE)");
    assert!(
        b1 <= b0 / 2 + 64,
        "the first 2 MiB were punched out: {b0} blocks before, {b1} after"
    );
    // trimwrite: each range is trimmed and written again; the file is whole afterwards.
    let (out, _) = hb(
        &d,
        &[
            "--name=tw",
            &name,
            "--size=4m",
            "--rw=trimwrite",
            "--bs=64k",
            "--output-format=json",
        ],
    );
    let v = json(&out);
    assert_eq!(
        dirs(&v),
        [(0, 0, false), (64, 4 << 20, true), (64, 4 << 20, true)]
    );
    assert!(blocks(&f).1 >= b0 - 64, "written back: {:?}", blocks(&f));
    std::fs::remove_dir_all(d).unwrap();
}

/// libaio, io_uring and mmap trim a regular file as psync does (a punched hole): every
/// trim and write counted, the holes there.
#[test]
fn queue_engines_trim_a_regular_file() {
    let d = tmp("trim-queued-file");
    let f = d.join("f");
    let name = format!("--filename={}", s(&f));
    for engine in ["libaio", "io_uring", "mmap"] {
        let eng = format!("--ioengine={engine}");
        for (rw, want) in [
            (
                "randtrim",
                [(0, 0, false), (0, 0, false), (16, 1 << 20, true)],
            ),
            (
                "trimwrite",
                [(0, 0, false), (16, 1 << 20, true), (16, 1 << 20, true)],
            ),
        ] {
            let _ = std::fs::remove_file(&f);
            let rwo = format!("--rw={rw}");
            let (out, _) = hb(
                &d,
                &[
                    "--name=t",
                    &name,
                    "--size=1m",
                    "--bs=64k",
                    &rwo,
                    &eng,
                    "--iodepth=4",
                    "--output-format=json",
                ],
            );
            // (mmap at iodepth=4: fio's note that the depth is capped comes first.)
            assert_eq!(dirs(&super::fio_files::doc(&out)), want, "{engine} {rw}");
            let blocks = {
                use std::os::unix::fs::MetadataExt;
                std::fs::metadata(&f).unwrap().blocks()
            };
            if rw == "randtrim" {
                assert!(blocks <= 64, "{engine}: the file was punched out: {blocks}");
            } else {
                assert!(blocks >= 2048, "{engine}: written back: {blocks}");
            }
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// A loop device over a scratch file: BLKDISCARD frees the backing file's blocks, as fio's
/// trims do on the same device (root only; skipped elsewhere).
#[test]
fn trim_discards_an_unmounted_block_device_as_fio() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skip: loop devices need root");
        return;
    }
    let d = tmp("trim-dev");
    let img = d.join("img");
    std::fs::write(&img, vec![0x5au8; 16 << 20]).unwrap();
    // Detached however the test ends (a panic in a run below included).
    let Some(detach) = crate::common::LoopImage::attach(&img) else {
        return;
    };
    let dev = detach.dev.clone();
    let name = format!("--filename={dev}");
    let blocks = || {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&img).unwrap().blocks()
    };
    let b0 = blocks();
    let args = [
        "--name=t",
        name.as_str(),
        "--size=8m",
        "--rw=trim",
        "--bs=1m",
        "--output-format=json",
    ];
    let (out, _) = hb(&d, &args);
    let got = dirs(&json(&out));
    let b1 = blocks();
    let peer = need_fio("trim_discards_an_unmounted_block_device_as_fio");
    let pf = peer.then(|| fio(&d, &args).0);
    // The queue engines and mmap, every trim mode: the counts fio's (each trim done in
    // the queue call once nothing is in flight; trimwrite's writes queued between them).
    let mut queued = Vec::new();
    for engine in ["libaio", "io_uring", "mmap"] {
        for rw in ["trim", "randtrim", "trimwrite", "randtrimwrite"] {
            let (eng, rwo) = (format!("--ioengine={engine}"), format!("--rw={rw}"));
            // (fio notes on stdout that mmap caps a larger iodepth: none asked there.)
            let depth = if engine == "mmap" {
                "--iodepth=1"
            } else {
                "--iodepth=4"
            };
            let a = [
                "--name=t",
                name.as_str(),
                "--size=8m",
                "--bs=64k",
                depth,
                &eng,
                &rwo,
                "--output-format=json",
            ];
            let h = dirs(&json(&hb(&d, &a).0));
            let p = peer.then(|| dirs(&json(&fio(&d, &a).0)));
            queued.push((engine, rw, h, p));
        }
    }
    drop(detach);
    assert_eq!(got, [(0, 0, false), (0, 0, false), (8, 8 << 20, true)]);
    assert!(
        b1 + 8192 <= b0 + 64,
        "8 MiB discarded: {b0} blocks, then {b1}"
    );
    if let Some(f) = pf {
        assert_eq!(got, dirs(&json(&f)), "the same trims as fio");
    }
    for (engine, rw, h, p) in queued {
        let writes = rw.contains("write");
        let w = if writes {
            (128, 8 << 20, true)
        } else {
            (0, 0, false)
        };
        assert_eq!(h, [(0, 0, false), w, (128, 8 << 20, true)], "{engine} {rw}");
        if let Some(p) = p {
            assert_eq!(h, p, "{engine} {rw}: the same counts as fio");
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// trimwrite with `io_size`: fio's passes go on while the bytes done in every direction
/// (trims and writes together, `keep_running`'s sum) are short of `io_size`, each pass
/// trimming and writing the whole region; within a pass the writes stop at `io_size`
/// (`size=1m,io_size=512k`: 512 KiB of each). `number_ios` counts trims and writes (fio
/// doubles it for trimwrite). Compared with fio on a loop device (root), else hostbench
/// alone on a file.
#[test]
fn trimwrite_counts_trims_and_writes_toward_io_size_as_fio() {
    let d = tmp("trimwrite-iosize");
    let img = d.join("img");
    std::fs::write(&img, vec![0u8; 4 << 20]).unwrap();
    let lo = crate::common::LoopImage::attach(&img);
    let target = lo
        .as_ref()
        .map_or_else(|| "f".to_string(), |l| l.dev.clone());
    let file = format!("--filename={target}");
    let peer = lo.is_some() && need_fio("trimwrite_counts_trims_and_writes_toward_io_size_as_fio");
    // (job options, the (ios, bytes) of trims and of writes, each)
    let cases: [(&[&str], (u64, u64)); 4] = [
        (&["--size=256k", "--io_size=1m"], (128, 512 << 10)),
        (&["--size=256k", "--io_size=768k"], (128, 512 << 10)),
        (&["--size=1m", "--io_size=512k"], (128, 512 << 10)),
        (
            &["--size=256k", "--io_size=1m", "--bs=64k", "--number_ios=3"],
            (3, 192 << 10),
        ),
    ];
    for (extra, (ios, bytes)) in cases {
        for rw in ["trimwrite", "randtrimwrite"] {
            let rwo = format!("--rw={rw}");
            let mut args = vec!["--name=t", file.as_str(), "--bs=4k", rwo.as_str()];
            args.extend_from_slice(extra);
            args.push("--output-format=json");
            let (out, _) = hb(&d, &args);
            let got = dirs(&json(&out));
            if rw == "trimwrite" {
                assert_eq!(got[2].0, ios, "{args:?}: trims {got:?}");
                assert_eq!(got[2].1, bytes, "{args:?}: trims {got:?}");
                assert_eq!(got[1].1, bytes, "{args:?}: writes {got:?}");
            }
            if peer {
                let (theirs, _) = fio(&d, &args);
                let want = dirs(&json(&theirs));
                let counts =
                    |v: &[(u64, u64, bool)]| v.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>();
                assert_eq!(counts(&got), counts(&want), "{args:?}");
            }
        }
    }
}
