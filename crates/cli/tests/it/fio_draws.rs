//! Random offsets as fio 3.33 draws them, I/O by I/O: both tools write fio's iolog v3 of
//! the same job and the I/Os of each file must come in the same order (fio's
//! `random_state` with its random map's next free block, `norandommap`, `lfsr`,
//! `allrandrepeat`, `percentage_random`). Without fio, the first offsets fio gave are
//! pinned.

use super::fio::tmp;
use super::fio_files::{counts, fio, hb};
use super::fio_seq::need_fio;
use std::collections::BTreeMap;
use std::path::Path;

/// I/Os per file (by its base name), in order: "read OFF LEN".
type Ios = BTreeMap<String, Vec<String>>;

/// The I/Os of an iolog.
fn ios(log: &str) -> Ios {
    let mut out = Ios::new();
    for l in log.lines().skip(1) {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() == 5 && matches!(w[2], "read" | "write" | "trim") {
            let base = w[1].rsplit('/').next().unwrap_or(w[1]).to_string();
            out.entry(base)
                .or_default()
                .push(format!("{} {} {}", w[2], w[3], w[4]));
        }
    }
    out
}

/// Runs `args` through one tool in a fresh `dir` with `--write_iolog`: its I/Os per file
/// and its counts.
fn logged(dir: &Path, ours: bool, args: &[&str]) -> (Ios, Vec<(u64, u64)>) {
    for f in std::fs::read_dir(dir).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }
    let mut a = vec![
        "--name=j",
        "--bs=4k",
        "--ioengine=psync",
        "--output-format=json",
        "--write_iolog=w.log",
    ];
    a.extend_from_slice(args);
    let r = if ours { hb(dir, &a) } else { fio(dir, &a) };
    assert_eq!(r.code, 0, "{args:?} (ours: {ours}): {}", r.err);
    let log = std::fs::read_to_string(dir.join("w.log")).unwrap();
    (ios(&log), counts(&r.out))
}

/// How many I/Os of `a` equal `b`'s, in order, over all files: (equal, total).
fn same(a: &BTreeMap<String, Vec<String>>, b: &BTreeMap<String, Vec<String>>) -> (usize, usize) {
    let mut eq = 0;
    let mut n = 0;
    for (f, x) in b {
        n += x.len();
        if let Some(y) = a.get(f) {
            eq += x.iter().zip(y).take_while(|(p, q)| p == q).count();
        }
    }
    (eq, n)
}

/// Each case through both tools: the cases whose I/Os are not all in fio's order (the
/// counts must be equal).
/// [`beside_fio`] on `cases`, then `d` removed: every case's I/Os in fio's order.
fn in_fios_order(d: &Path, cases: &[&[&str]]) {
    let bad = beside_fio(d, cases);
    std::fs::remove_dir_all(d).unwrap();
    assert!(bad.is_empty(), "not in fio's order: {bad:#?}");
}

fn beside_fio(d: &Path, cases: &[&[&str]]) -> Vec<String> {
    let mut bad = Vec::new();
    for case in cases {
        let (ours, oc) = logged(d, true, case);
        let (theirs, tc) = logged(d, false, case);
        assert_eq!(oc, tc, "{case:?}: counts");
        let (eq, n) = same(&ours, &theirs);
        eprintln!("{case:?}: {eq} of {n} I/Os in fio's order");
        if eq != n {
            bad.push(format!("{case:?}: {eq} of {n}"));
        }
    }
    bad
}

#[test]
fn allrandrepeat_seeds_every_generator_as_fio() {
    // fio seeds each generator 0xb1899bed × thread + its number: directions, files,
    // sizes, offsets (under randrepeat the offsets keep 0xb1899bed × thread).
    let cases: &[&[&str]] = &[
        &["--rw=randrw", "--size=1m", "--allrandrepeat=1"],
        &[
            "--rw=randrw",
            "--size=1m",
            "--allrandrepeat=1",
            "--randseed=5",
        ],
        &[
            "--rw=randrw",
            "--size=1m",
            "--allrandrepeat=1",
            "--numjobs=2",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--allrandrepeat=1",
            "--randrepeat=0",
            "--loops=2",
        ],
        &[
            "--rw=randrw",
            "--size=1m",
            "--allrandrepeat=1",
            "--randrepeat=0",
            "--nrfiles=3",
            "--file_service_type=random",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--allrandrepeat=1",
            "--bsrange=4k-16k",
        ],
        &[
            "--rw=read",
            "--size=1m",
            "--allrandrepeat=1",
            "--bsrange=4k-16k",
            "--randrepeat=0",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--allrandrepeat=1",
            "--random_generator=lfsr",
            "--randrepeat=0",
        ],
    ];
    let d = tmp("draws-all");
    if !need_fio("allrandrepeat_seeds_every_generator_as_fio") {
        // Without fio: the same I/Os on every run, even with randrepeat=0.
        let (a, _) = logged(&d, true, cases[3]);
        let (b, _) = logged(&d, true, cases[3]);
        assert_eq!(a, b);
        std::fs::remove_dir_all(&d).unwrap();
        return;
    }
    in_fios_order(&d, cases);
}

#[test]
fn percentage_random_draws_as_fio() {
    // fio's `seq_rand_state` decides each I/O: random (marking the map) or after the last.
    let cases: &[&[&str]] = &[
        &["--rw=randread", "--size=1m", "--percentage_random=50"],
        &["--rw=randread", "--size=1m", "--percentage_random=10"],
        &[
            "--rw=randwrite",
            "--size=1m",
            "--percentage_random=90",
            "--randseed=3",
        ],
        &["--rw=randrw", "--size=1m", "--percentage_random=50,20"],
        &[
            "--rw=randread",
            "--size=1m",
            "--percentage_random=50",
            "--norandommap=1",
        ],
        &["--rw=randread:4", "--size=1m"],
        // Three files picked at random, three loops, an explicit seed (one I/O of 768
        // used to come out of fio's order).
        &[
            "--rw=randread",
            "--size=1m",
            "--percentage_random=30",
            "--nrfiles=3",
            "--file_service_type=random",
            "--loops=3",
            "--randseed=9",
        ],
    ];
    let d = tmp("draws-pct");
    if !need_fio("percentage_random_draws_as_fio") {
        // Without fio: fio 3.33's 132nd read of j.0.0 in the last case (measured): a block
        // an I/O placed sequentially read (not in the map) is drawn again, because the
        // I/O unit kept BUSY_OK from an attempt that found its file done (hostbench gave
        // 274432, the next block the map had free).
        let (ios, _) = logged(&d, true, cases[6]);
        assert_eq!(ios["j.0.0"][131], "read 266240 4096");
        std::fs::remove_dir_all(&d).unwrap();
        return;
    }
    in_fios_order(&d, cases);
}

#[test]
fn fixed_size_random_offsets_come_in_fios_order() {
    let cases: &[&[&str]] = &[
        &["--rw=randread", "--size=1m"],
        &["--rw=randwrite", "--size=1m"],
        &["--rw=randrw", "--size=1m"],
        &["--rw=randread", "--size=16m"],
        &["--rw=randread", "--size=1m", "--numjobs=2"],
        &["--rw=randrw", "--size=1m", "--numjobs=2"],
        &["--rw=randread", "--size=1m", "--randseed=1234"],
        &["--rw=randread", "--size=1m", "--loops=2"],
        &[
            "--rw=randread",
            "--size=1m",
            "--loops=2",
            "--randrepeat=0",
            "--randseed=7",
        ],
        &["--rw=randread", "--size=1m", "--nrfiles=3"],
        &["--rw=randrw", "--size=1m", "--nrfiles=3"],
        &["--rw=randread", "--size=1m", "--norandommap=1"],
        &[
            "--rw=randwrite",
            "--size=1m",
            "--norandommap=1",
            "--nrfiles=3",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--norandommap=1",
            "--nrfiles=3",
            "--loops=2",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--norandommap=1",
            "--loops=2",
            "--randrepeat=0",
            "--randseed=3",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--random_generator=lfsr",
            "--randrepeat=0",
            "--randseed=9",
        ],
        &[
            "--rw=randwrite",
            "--size=1m",
            "--nrfiles=3",
            "--file_service_type=random",
            "--loops=2",
        ],
        &["--rw=randrw", "--size=1m", "--nrfiles=3", "--loops=2"],
        &[
            "--rw=randread",
            "--size=1m",
            "--nrfiles=3",
            "--loops=2",
            "--randrepeat=0",
            "--randseed=11",
        ],
        &[
            "--rw=randrw",
            "--size=1m",
            "--random_generator=lfsr",
            "--nrfiles=3",
            "--loops=2",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--ioengine=libaio",
            "--iodepth=8",
        ],
        &["--rw=randread", "--size=1m", "--random_generator=lfsr"],
        &[
            "--rw=randread",
            "--size=1m",
            "--random_generator=lfsr",
            "--loops=2",
        ],
        &[
            "--rw=randrw",
            "--size=1m",
            "--random_generator=lfsr",
            "--nrfiles=3",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--random_generator=tausworthe64",
        ],
    ];
    let d = tmp("draws");
    let (first, _) = logged(&d, true, cases[0]);
    // fio 3.33's first reads of `--rw=randread --size=1m --bs=4k` (measured).
    let want = [
        61440, 774144, 880640, 491520, 417792, 884736, 397312, 368640,
    ];
    let got: Vec<String> = want.iter().map(|o| format!("read {o} 4096")).collect();
    assert_eq!(first["j.0.0"][..8], got[..]);
    if !need_fio("fixed_size_random_offsets_come_in_fios_order") {
        std::fs::remove_dir_all(&d).unwrap();
        return;
    }
    let mut bad = beside_fio(&d, cases);
    // time_based: passes follow each other (a draw spent on the full map, the map reset);
    // the counts depend on the clock, the first 600 I/Os are compared.
    let tb = [
        "--rw=randread",
        "--size=1m",
        "--time_based=1",
        "--runtime=1s",
    ];
    let (ours, _) = logged(&d, true, &tb);
    let (theirs, _) = logged(&d, false, &tb);
    let cut = |m: &BTreeMap<String, Vec<String>>| -> BTreeMap<String, Vec<String>> {
        m.iter()
            .map(|(k, v)| (k.clone(), v[..v.len().min(600)].to_vec()))
            .collect()
    };
    let (eq, n) = same(&cut(&ours), &cut(&theirs));
    eprintln!("{tb:?}: {eq} of the first {n} I/Os in fio's order");
    if eq != n {
        bad.push(format!("{tb:?}: {eq} of {n}"));
    }
    std::fs::remove_dir_all(&d).unwrap();
    assert!(bad.is_empty(), "not in fio's order: {bad:#?}");
}

#[test]
fn randrepeat_0_is_random_with_fios_counts() {
    let d = tmp("draws0");
    for case in [
        &["--rw=randread", "--size=1m", "--randrepeat=0"][..],
        &[
            "--rw=randread",
            "--size=1m",
            "--randrepeat=0",
            "--nrfiles=3",
        ][..],
        &[
            "--rw=randread",
            "--size=1m",
            "--randrepeat=0",
            "--norandommap=1",
        ][..],
    ] {
        let (a, ac) = logged(&d, true, case);
        let (b, bc) = logged(&d, true, case);
        assert_eq!(ac, bc, "{case:?}");
        assert_ne!(a, b, "{case:?}: two runs drew the same offsets");
        if need_fio("randrepeat_0_is_random_with_fios_counts") {
            let (_, fc) = logged(&d, false, case);
            assert_eq!(ac, fc, "{case:?}: counts");
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_explicit_randseed_keeps_every_draw_going_across_loops() {
    // fio: `randseed` given turns `randrepeat` off once the seeds are set
    // (fixup_options), so no loop seeds the generators again (clear_io_state): the
    // block sizes, the file picks and the offsets of loop 2 follow loop 1's.
    let cases: &[&[&str]] = &[
        &[
            "--rw=randread",
            "--size=1m",
            "--loops=3",
            "--bsrange=4k-16k",
            "--randseed=1234",
        ],
        &[
            "--rw=read",
            "--size=256k",
            "--loops=3",
            "--bsrange=4k-16k",
            "--randseed=77",
        ],
        &[
            "--rw=randread",
            "--size=256k",
            "--loops=3",
            "--nrfiles=3",
            "--file_service_type=random",
            "--randseed=1234",
        ],
        &["--rw=randrw", "--size=256k", "--loops=2", "--randseed=5"],
    ];
    let d = tmp("draws-seed");
    if !need_fio("an_explicit_randseed_keeps_every_draw_going_across_loops") {
        std::fs::remove_dir_all(&d).unwrap();
        return;
    }
    in_fios_order(&d, cases);
}

#[test]
fn a_file_found_done_by_its_draws_ends_where_fio_ends_it() {
    // fio's `fill_io_u` finds a file done when it cannot place an I/O there, not after a
    // count of bytes: reads and writes of two sizes (`bs=4k,16k`) end a pass where the
    // writes' next free block lies past the region (short of its bytes), and
    // `percentage_random`'s sequential I/Os (which leave the map alone) end a file of a
    // partial last block where the next one would pass its end (and a loop goes on past
    // the region's bytes while the map has room), `bs_unaligned` sizes end where the map
    // has no block left. The next loop, or the next file, goes on from there.
    let cases: &[&[&str]] = &[
        &["--rw=randrw", "--bs=4k,16k", "--size=256k", "--loops=2"],
        &["--rw=randrw", "--bs=4k,16k", "--size=256k", "--nrfiles=2"],
        &[
            "--rw=randrw",
            "--bs=4k,16k",
            "--size=1m",
            "--nrfiles=3",
            "--loops=3",
            "--file_service_type=random",
        ],
        &[
            "--rw=randrw",
            "--bs=4k,16k",
            "--size=1m",
            "--nrfiles=3",
            "--loops=2",
            "--file_service_type=sequential",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--nrfiles=3",
            "--percentage_random=50",
        ],
        &[
            "--rw=randrw",
            "--size=1m",
            "--nrfiles=3",
            "--percentage_random=50",
            "--loops=2",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--percentage_random=50",
            "--loops=3",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--nrfiles=3",
            "--bsrange=1k-9k",
            "--bs_unaligned=1",
        ],
        &[
            "--rw=randrw",
            "--size=1m",
            "--bsrange=1k-9k",
            "--bs_unaligned=1",
            "--loops=2",
        ],
        // Ranges of two smallest sizes (each direction's blocks index fio's map by its own
        // smallest size): an I/O near the region's end draws a size that fits, the pass
        // does not end there (fio 14 reads, 15 writes; hostbench ended it, 13/12).
        &["--rw=randrw", "--bsrange=4k-8k,16k-32k", "--size=2m"],
        &[
            "--rw=randrw",
            "--bsrange=4k-8k,16k-32k",
            "--size=2m",
            "--loops=2",
            "--nrfiles=2",
        ],
    ];
    let d = tmp("draws-done");
    if !need_fio("a_file_found_done_by_its_draws_ends_where_fio_ends_it") {
        // Without fio: fio 3.33's counts of the first two (measured).
        let (_, c) = logged(&d, true, cases[0]);
        assert_eq!(c, [(26, 24)]);
        let (_, c) = logged(&d, true, cases[1]);
        assert_eq!(c, [(12, 8)]);
        std::fs::remove_dir_all(&d).unwrap();
        return;
    }
    in_fios_order(&d, cases);
}

#[test]
fn a_mixed_jobs_writes_are_read_back_after_each_loop_as_fio() {
    // fio runs its verify phase after each loop's I/O (`do_io`, then `do_verify`), for a
    // mixed job too (its loop may end with a read), and write_iolog logs each verify read
    // as it is issued; `verify_backlog`'s reads come between the writes (fio counts them
    // as reads in the direction limit: the writes stay fio's).
    let cases: &[&[&str]] = &[
        &["--rw=randrw", "--size=1m", "--verify=crc32c"],
        &["--rw=randrw", "--size=1m", "--verify=crc32c", "--loops=2"],
        &[
            "--rw=randrw",
            "--size=1m",
            "--verify=crc32c",
            "--loops=3",
            "--rwmixread=70",
        ],
        &[
            "--rw=randrw",
            "--size=1m",
            "--verify=crc32c",
            "--loops=2",
            "--ioengine=libaio",
            "--iodepth=4",
        ],
        &[
            "--rw=randrw",
            "--size=1m",
            "--verify=crc32c",
            "--verify_backlog=8",
            "--rwmixread=30",
        ],
        &["--rw=write", "--size=256k", "--verify=crc32c", "--loops=2"],
        // A sequential mixed job's loop ends where a direction passes the region's end
        // (as without verify), then its writes are read back.
        &["--rw=rw", "--size=1m", "--verify=crc32c", "--loops=2"],
        &[
            "--rw=rw",
            "--size=1m",
            "--verify=crc32c",
            "--loops=3",
            "--rwmixread=30",
        ],
        // Several files: each loop's writes over all of them are read back after it.
        &[
            "--rw=randrw",
            "--size=1m",
            "--verify=crc32c",
            "--loops=2",
            "--nrfiles=2",
        ],
        &[
            "--rw=randrw",
            "--size=1m",
            "--verify=crc32c",
            "--loops=3",
            "--nrfiles=3",
            "--file_service_type=random",
        ],
        &[
            "--rw=randwrite",
            "--size=1m",
            "--verify=crc32c",
            "--loops=2",
            "--nrfiles=3",
        ],
        // Files that find themselves done (two sizes, percentage_random): the verify comes
        // once every file was found done, before the next loop's first I/O.
        &[
            "--rw=randrw",
            "--bs=4k,16k",
            "--size=256k",
            "--verify=crc32c",
            "--loops=2",
            "--nrfiles=2",
        ],
        &[
            "--rw=randrw",
            "--size=1m",
            "--verify=crc32c",
            "--percentage_random=50,100",
            "--loops=2",
            "--nrfiles=3",
        ],
    ];
    let d = tmp("draws-verify");
    if !need_fio("a_mixed_jobs_writes_are_read_back_after_each_loop_as_fio") {
        // Without fio: fio 3.33's counts of the second (measured): 264 reads and 248
        // writes, and each loop's 124 writes read back.
        let (_, c) = logged(&d, true, cases[1]);
        assert_eq!(c, [(512, 248)]);
        // rw=rw's loop ends where a direction passes the region's end: 268 writes (not
        // 248), all read back; two files' loops each read back (512 reads, not 388).
        let (_, c) = logged(&d, true, cases[6]);
        assert_eq!(c, [(512, 268)]);
        let (_, c) = logged(&d, true, cases[8]);
        assert_eq!(c, [(512, 248)]);
        let (_, c) = logged(&d, true, cases[11]);
        assert_eq!(c, [(40, 16)]);
        std::fs::remove_dir_all(&d).unwrap();
        return;
    }
    in_fios_order(&d, cases);
}

#[test]
fn zipf_and_pareto_offsets_come_in_fios_order() {
    // fio's zipf/pareto: a 32-bit generator per file seeded with the file's name hashed
    // (jhash) times the thread number under randrepeat (else the offsets' seed), a
    // rotation drawn first, each value scattered by a golden-ratio multiply. A block past
    // the region finds the file done (`bs=4k,8k`: fio's job ends after 3 reads).
    let cases: &[&[&str]] = &[
        &[
            "--rw=randread",
            "--size=1m",
            "--random_distribution=zipf:1.2",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--random_distribution=pareto:0.3",
        ],
        &[
            "--rw=randrw",
            "--size=1m",
            "--random_distribution=zipf:0.8",
            "--nrfiles=2",
            "--loops=2",
        ],
        // (Two clones of fio write one log: past its buffer their lines may be lost, so
        // one loop.)
        &[
            "--rw=randread",
            "--size=1m",
            "--random_distribution=zipf:1.2",
            "--numjobs=2",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--random_distribution=zipf:1.2",
            "--loops=2",
        ],
        &[
            "--rw=randwrite",
            "--size=1m",
            "--random_distribution=pareto:0.2",
            "--loops=2",
            "--randseed=3",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--random_distribution=pareto:0.5",
            "--allrandrepeat=1",
        ],
        &[
            "--rw=randrw",
            "--bs=4k,8k",
            "--size=1m",
            "--random_distribution=zipf:1.1",
        ],
        // fio's normal (gauss.c): the mean of twelve draws, a deviation, the hash.
        &["--rw=randread", "--size=1m", "--random_distribution=normal"],
        &[
            "--rw=randrw",
            "--size=1m",
            "--random_distribution=normal:20",
            "--loops=2",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--random_distribution=normal:10:0.2",
            "--nrfiles=2",
        ],
        // The non-uniform file services: fio's generator over nrfiles << 10 ranges, no hash.
        &[
            "--rw=randread",
            "--size=1m",
            "--nrfiles=4",
            "--file_service_type=zipf",
        ],
        &[
            "--rw=randwrite",
            "--size=1m",
            "--nrfiles=4",
            "--file_service_type=pareto:0.3",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--nrfiles=4",
            "--file_service_type=normal:30",
        ],
        &[
            "--rw=randrw",
            "--size=1m",
            "--nrfiles=3",
            "--file_service_type=gauss",
            "--loops=2",
        ],
    ];
    let d = tmp("draws-zipf");
    let (first, _) = logged(&d, true, cases[0]);
    // fio 3.33's first reads of `zipf:1.2` over 1 MiB (measured).
    let got: Vec<String> = [520192, 659456, 831488]
        .iter()
        .map(|o| format!("read {o} 4096"))
        .collect();
    assert_eq!(first["j.0.0"][..3], got[..]);
    // fio 3.33's first reads of `normal` over 1 MiB, and the first files `zipf` picks of
    // four (measured).
    let (normal, _) = logged(&d, true, cases[8]);
    let got: Vec<String> = [626688, 696320, 970752]
        .iter()
        .map(|o| format!("read {o} 4096"))
        .collect();
    assert_eq!(normal["j.0.0"][..3], got[..]);
    let (zipf_files, _) = logged(&d, true, cases[11]);
    let per_file: Vec<usize> = (0..4)
        .map(|k| zipf_files[&format!("j.0.{k}")].len())
        .collect();
    assert_eq!(per_file, [13, 9, 4, 230]);
    if !need_fio("zipf_and_pareto_offsets_come_in_fios_order") {
        std::fs::remove_dir_all(&d).unwrap();
        return;
    }
    in_fios_order(&d, cases);
}

/// An engine that queues (libaio, io_uring, posixaio, null above depth 1: fio 3.33's log
/// of a queued null job has each I/O twice, so it is compared by counts only, by hand)
/// ends each loop
/// once `size` bytes are queued, before drawing the next I/O — fio 3.33's `do_io` counts
/// `bytes_issued` only for queued I/Os — where a synchronous engine's loop runs on until
/// a direction or the map finds the file done, spending that I/O's draws. So a mixed job
/// without the random map repeats its first loop (`rw=rw,loops=2`: libaio 264/248, psync
/// 244/268 in fio), and with an explicit `randseed` the draw psync spent is the first I/O
/// of libaio's next loop. Every case's I/Os in fio's order, counts equal.
#[test]
fn an_engine_that_queues_ends_each_loop_at_size_bytes_as_fio() {
    let cases: &[&[&str]] = &[
        &["--rw=rw", "--size=1m", "--loops=2", "--ioengine=libaio"],
        &["--rw=rw", "--size=1m", "--loops=2", "--ioengine=psync"],
        &[
            "--rw=randrw",
            "--norandommap",
            "--size=256k",
            "--loops=3",
            "--ioengine=io_uring",
            "--iodepth=4",
        ],
        &[
            "--rw=randrw",
            "--percentage_random=50",
            "--size=256k",
            "--loops=3",
            "--ioengine=libaio",
        ],
        &[
            "--rw=randrw",
            "--size=64k",
            "--loops=2",
            "--randseed=7",
            "--ioengine=libaio",
        ],
        &[
            "--rw=randrw",
            "--size=256k",
            "--bssplit=4k/50:16k/50",
            "--loops=2",
            "--randseed=3",
            "--ioengine=libaio",
            "--iodepth=4",
        ],
        &[
            "--rw=randread",
            "--size=1m",
            "--bsrange=4k-16k",
            "--loops=3",
            "--randseed=11",
            "--ioengine=posixaio",
        ],
    ];
    let d = tmp("draws-queued-loops");
    if !need_fio("an_engine_that_queues_ends_each_loop_at_size_bytes_as_fio") {
        // fio's counts, measured: the first case's reads and writes.
        let (_, c) = logged(&d, true, cases[0]);
        assert_eq!(c, [(264, 248)]);
        std::fs::remove_dir_all(&d).unwrap();
        return;
    }
    in_fios_order(&d, cases);
}

#[test]
fn written_bytes_are_fios_under_its_seeds() {
    // fio's `buf_state` (seeded FIO_RAND_BUF_OFF of the thread: `allrandrepeat` or
    // `randseed`) gives each buffer fill a seed (the product of two draws) and
    // `__fill_random_buf` spreads it over four streams of golden-ratio products: the
    // queue slot's first fill, then each refill. The files both tools write are the same
    // bytes.
    let cases: &[&[&str]] = &[
        &["--rw=write", "--refill_buffers", "--allrandrepeat=1"],
        &["--rw=write", "--refill_buffers"],
        &[
            "--rw=randwrite",
            "--refill_buffers",
            "--bsrange=4k-16k",
            "--allrandrepeat=1",
        ],
        &[
            "--rw=write",
            "--buffer_compress_percentage=50",
            "--allrandrepeat=1",
        ],
        &["--rw=write", "--scramble_buffers=0", "--randseed=5"],
        &[
            "--rw=write",
            "--refill_buffers",
            "--numjobs=2",
            "--allrandrepeat=1",
        ],
    ];
    let d = tmp("draws-bytes");
    let files = |dir: &Path| -> BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name().to_string_lossy().starts_with("j."))
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect()
    };
    let run = |ours: bool, case: &[&str]| -> BTreeMap<String, Vec<u8>> {
        for f in std::fs::read_dir(&d).unwrap() {
            std::fs::remove_file(f.unwrap().path()).unwrap();
        }
        let mut a = vec!["--name=j", "--size=64k", "--bs=4k", "--ioengine=psync"];
        a.extend_from_slice(case);
        let r = if ours { hb(&d, &a) } else { fio(&d, &a) };
        assert_eq!(r.code, 0, "{case:?} (ours: {ours}): {}", r.err);
        files(&d)
    };
    // fio 3.33's first word of the first case's file (measured): the second seed, the
    // first having filled the slot when the job started.
    let first = run(true, cases[0]);
    assert_eq!(
        u64::from_ne_bytes(first["j.0.0"][..8].try_into().unwrap()),
        0x81e5_44ac_3d8a_902a
    );
    // A layout keeps a generator per file: two readers' files are not the same bytes.
    let laid = run(true, &["--rw=read", "--numjobs=2"]);
    assert_ne!(laid["j.0.0"], laid["j.1.0"]);
    if !need_fio("written_bytes_are_fios_under_its_seeds") {
        std::fs::remove_dir_all(&d).unwrap();
        return;
    }
    let mut bad = Vec::new();
    for case in cases {
        let ours = run(true, case);
        let theirs = run(false, case);
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            theirs.keys().collect::<Vec<_>>(),
            "{case:?}: files"
        );
        if ours != theirs {
            bad.push(format!("{case:?}"));
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
    assert!(bad.is_empty(), "not fio's bytes: {bad:#?}");
}
