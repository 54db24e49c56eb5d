//! A job's draws as fio 3.33 draws them. A mixed job's directions: the reads and writes of
//! each clone equal fio's, run for run (fio keeps a direction until its count reaches a
//! limit, spends a draw on each file it finds done, starts each loop's draws over under
//! `randrepeat`; a `random` file service picks with fio's generator). Block sizes from
//! `bsrange`/`bssplit`: a sequential job's sizes, hence its counts, are fio's. Without fio,
//! the counts fio gave are pinned.

use super::fio::tmp;
use super::fio_files::{counts, fio, hb};
use super::fio_seq::need_fio;

/// A case's options and the (reads, writes) of each job fio gave.
pub(crate) type Case = (&'static [&'static str], &'static [(u64, u64)]);

#[test]
fn mixed_jobs_split_their_ios_as_fio() {
    // Each case, and what fio 3.33 gave (measured on 2026-11-27, every run the same). A
    // rate limit's switches depend on the clock: not pinned here.
    let cases: &[Case] = &[
        (&["--rw=randrw"], &[(132, 124)]),
        (&["--rw=rw"], &[(132, 124)]),
        (&["--rw=randrw", "--rwmixread=70"], &[(184, 72)]),
        (&["--rw=randrw", "--loops=3"], &[(396, 372)]),
        (
            &["--rw=randrw", "--ioengine=libaio", "--iodepth=8"],
            &[(132, 124)],
        ),
        (&["--rw=randrw", "--numjobs=2"], &[(132, 124), (116, 140)]),
        (&["--rw=randrw", "--randseed=1234"], &[(142, 114)]),
        (
            &["--rw=randrw", "--loops=2", "--randrepeat=0", "--randseed=7"],
            &[(266, 246)],
        ),
        (&["--rw=randrw", "--nrfiles=3", "--loops=2"], &[(262, 248)]),
        (
            &[
                "--rw=randrw",
                "--nrfiles=2",
                "--file_service_type=sequential",
            ],
            &[(133, 123)],
        ),
        (
            &[
                "--rw=randrw",
                "--nrfiles=4",
                "--file_service_type=random",
                "--loops=2",
            ],
            &[(264, 248)],
        ),
        // Sizes drawn from a range or a split (sequential: the offsets follow the sizes).
        (&["--rw=read", "--bsrange=4k-16k"], &[(108, 0)]),
        (&["--rw=write", "--bsrange=4k-16k"], &[(0, 99)]),
        (&["--rw=read", "--bsrange=4k-16k", "--loops=2"], &[(216, 0)]),
        (&["--rw=read", "--bssplit=4k/50:16k/30:64k/20"], &[(49, 0)]),
        (&["--rw=rw", "--bsrange=4k-16k"], &[(50, 56)]),
        (
            &["--rw=read", "--bsrange=1k-9k", "--bs_unaligned=1"],
            &[(194, 0)],
        ),
        (
            &[
                "--rw=read",
                "--bsrange=4k-16k",
                "--random_generator=tausworthe64",
            ],
            &[(102, 0)],
        ),
        (
            &["--rw=write", "--bsrange=4k-16k", "--verify=crc32c"],
            &[(108, 108)],
        ),
        (
            &["--rw=read", "--bsrange=4k-16k", "--nrfiles=2"],
            &[(106, 0)],
        ),
        (
            &["--rw=read", "--bsrange=4k-64k", "--nrfiles=3"],
            &[(36, 0)],
        ),
        // Random offsets with sizes from a range: fio's draws and its random map (an I/O
        // cut where used blocks begin), so the counts are fio's.
        (&["--rw=randread", "--bsrange=4k-16k"], &[(134, 0)]),
        (&["--rw=randwrite", "--bsrange=4k-16k"], &[(0, 119)]),
        (&["--rw=randrw", "--bssplit=4k/50:16k/50"], &[(62, 66)]),
        (
            &["--rw=randread", "--bsrange=4k-16k", "--loops=2"],
            &[(268, 0)],
        ),
        (
            &["--rw=randread", "--bsrange=4k-16k", "--randseed=99"],
            &[(125, 0)],
        ),
        (
            &[
                "--rw=randread",
                "--bsrange=4k-16k",
                "--loops=3",
                "--randrepeat=0",
                "--randseed=5",
            ],
            &[(374, 0)],
        ),
        (
            &["--rw=randread", "--bsrange=1k-9k", "--bs_unaligned=1"],
            &[(240, 0)],
        ),
        (
            &["--rw=randread", "--bsrange=4k-64k", "--nrfiles=3"],
            &[(43, 0)],
        ),
        (
            &["--rw=randrw", "--bsrange=4k-16k", "--nrfiles=3"],
            &[(64, 66)],
        ),
        (
            &["--rw=randwrite", "--bsrange=4k-16k", "--verify=crc32c"],
            &[(134, 134)],
        ),
    ];
    run_cases("mixed_jobs_split_their_ios_as_fio", cases);
}

/// Runs each case (`--name=j --size=1m --bs=4k --ioengine=psync` and its options) and
/// compares the (reads, writes) of each job with what fio 3.33 gave, and with fio beside.
fn run_cases(test: &str, cases: &[Case]) {
    let base = ["--name=j", "--size=1m", "--bs=4k", "--ioengine=psync"];
    run_cases_on(test, &base, cases);
}

/// [`run_cases`] on other `base` options (JSON output added).
pub(crate) fn run_cases_on(test: &str, base: &[&str], cases: &[Case]) {
    let peer = need_fio(test);
    for (case, measured) in cases {
        let d = tmp("mix");
        let mut args = base.to_vec();
        args.push("--output-format=json");
        args.extend_from_slice(case);
        let ours = hb(&d, &args);
        assert_eq!(ours.code, 0, "{case:?}: {}", ours.err);
        let got = counts(&ours.out);
        assert_eq!(got, *measured, "{case:?}: as fio 3.33 gave");
        if peer {
            for f in std::fs::read_dir(&d).unwrap() {
                std::fs::remove_file(f.unwrap().path()).unwrap();
            }
            let theirs = fio(&d, &args);
            assert_eq!(theirs.code, 0, "{case:?}: {}", theirs.err);
            assert_eq!(got, counts(&theirs.out), "{case:?}: beside this fio");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}

#[test]
fn io_size_past_the_region_goes_on_with_random_sizes() {
    // fio 3.33 (measured on 2026-11-27): with sizes from a range or a split, a random job
    // whose io_size is more than its region starts the region over (a new pass of its
    // random map) until io_size is done, as with a fixed size; it used to stop after one.
    let cases: &[Case] = &[
        (
            &["--rw=randread", "--bsrange=4k-16k", "--io_size=3m"],
            &[(402, 0)],
        ),
        (
            &["--rw=randread", "--bsrange=4k-16k", "--io_size=2500k"],
            &[(317, 0)],
        ),
        // Less than the largest size left after a pass: the job ends there.
        (
            &["--rw=randread", "--bsrange=4k-16k", "--io_size=2060k"],
            &[(268, 0)],
        ),
        (
            &[
                "--rw=randread",
                "--bsrange=4k-16k",
                "--io_size=3m",
                "--loops=2",
            ],
            &[(402, 0)],
        ),
        (
            &[
                "--rw=randread",
                "--bsrange=4k-16k",
                "--io_size=3m",
                "--nrfiles=3",
            ],
            &[(390, 0)],
        ),
        (
            &[
                "--rw=randread",
                "--bsrange=4k-16k",
                "--io_size=3m",
                "--numjobs=2",
                "--group_reporting",
            ],
            &[(762, 0)],
        ),
        (
            &["--rw=randwrite", "--bssplit=4k/50:64k/50", "--io_size=2m"],
            &[(0, 110)],
        ),
        (
            &["--rw=read", "--bsrange=4k-16k", "--io_size=3m"],
            &[(324, 0)],
        ),
    ];
    run_cases("io_size_past_the_region_goes_on_with_random_sizes", cases);
}

#[test]
fn per_direction_block_sizes_share_fios_random_map() {
    // fio 3.33 (measured on 2026-11-27): with `bs=R,W` of two sizes the random map has a
    // bit per smallest size, each direction draws its block in its own size and marks
    // the map at that index, and a pass ends when a block's next free bit lies past the
    // region; every I/O keeps its size. hostbench used to cut the I/Os where used blocks
    // began (8k-56k writes of bs=8k,64k) and issue twice as many.
    let cases: &[Case] = &[
        (&["--rw=randrw", "--bs=4k,16k"], &[(13, 12)]),
        (&["--rw=randrw", "--bs=4k,16k", "--randseed=7"], &[(14, 15)]),
        (&["--rw=randwrite", "--bs=4k,16k"], &[(0, 29)]),
        (&["--rw=randread", "--bs=4k,16k"], &[(256, 0)]),
        (&["--rw=randrw", "--bs=8k,64k", "--size=16m"], &[(196, 200)]),
        (&["--rw=randrw", "--bs=64k,8k", "--size=16m"], &[(174, 181)]),
        // Ranges: an I/O near the region's end draws a size that fits (fio redraws until
        // one does); hostbench ended the pass there (13/12).
        (
            &["--rw=randrw", "--bsrange=4k-8k,16k-32k", "--size=2m"],
            &[(14, 15)],
        ),
    ];
    run_cases("per_direction_block_sizes_share_fios_random_map", cases);
}

#[test]
fn sequential_and_unmapped_mixed_loops_split_as_fio() {
    // fio 3.33 (measured on 2026-11-27): a mixed job without the random map does not end
    // a loop at each region's worth of bytes; its loop goes on until the job's bytes are
    // issued or a sequential direction passes the region's end (the next loop then starts
    // both directions over), and an explicit randseed keeps the directions' generator
    // going across loops. hostbench used to repeat the first loop's 132/124.
    let cases: &[Case] = &[
        (&["--rw=rw", "--loops=2"], &[(244, 268)]),
        (&["--rw=rw", "--loops=3"], &[(375, 393)]),
        (
            &["--rw=rw", "--rwmixwrite=30", "--io_size=3m"],
            &[(528, 240)],
        ),
        (
            &["--rw=randrw", "--norandommap", "--loops=2"],
            &[(242, 270)],
        ),
        (&["--rw=rw", "--loops=2", "--randseed=3"], &[(263, 249)]),
        (
            &["--rw=rw", "--rwmixread=70", "--loops=2", "--randseed=3"],
            &[(366, 146)],
        ),
    ];
    run_cases("sequential_and_unmapped_mixed_loops_split_as_fio", cases);
}

#[test]
fn random_sizes_without_the_map_draw_fios_offsets() {
    // fio 3.33 (measured on 2026-11-27): with norandommap and sizes from a range, fio
    // draws the offsets from its `random_state` as with the map, and the last I/O is
    // whole (1060864 bytes for 1 MiB); hostbench drew its own offsets, so the sizes
    // redrawn near the region's end differed (102 writes where fio does 99).
    let cases: &[Case] = &[
        (
            &["--rw=randread", "--bsrange=4k-16k", "--norandommap"],
            &[(108, 0)],
        ),
        (
            &["--rw=randwrite", "--bsrange=4k-16k", "--norandommap"],
            &[(0, 102)],
        ),
        (
            &[
                "--rw=randread",
                "--bsrange=4k-16k",
                "--norandommap",
                "--loops=2",
            ],
            &[(213, 0)],
        ),
        (
            &["--rw=randrw", "--bsrange=4k-16k", "--norandommap"],
            &[(50, 56)],
        ),
    ];
    run_cases("random_sizes_without_the_map_draw_fios_offsets", cases);
    // The bytes too: fio's last I/O is not cut to the job's size.
    let d = tmp("mixbytes");
    let args = [
        "--name=j",
        "--size=1m",
        "--ioengine=psync",
        "--output-format=json",
        "--rw=randread",
        "--bsrange=4k-16k",
        "--norandommap",
    ];
    let ours = hb(&d, &args);
    assert_eq!(ours.code, 0, "{}", ours.err);
    assert_eq!(
        super::fio_files::doc(&ours.out)["jobs"][0]["read"]["io_bytes"].as_u64(),
        Some(1060864)
    );
    std::fs::remove_dir_all(&d).unwrap();
}
