//! A mixed job's directions as fio 3.33 draws them: the reads and writes of each clone equal
//! fio's, run for run (fio keeps a direction until its count reaches a limit, spends a draw
//! on each file it finds done, starts each loop's draws over under `randrepeat`; a `random`
//! file service picks with fio's generator). Without fio, the counts fio gave are pinned.

use super::fio::tmp;
use super::fio_files::{doc, fio, hb};
use super::fio_seq::need_fio;

/// (reads, writes) of each job entry of a JSON report.
fn counts(out: &str) -> Vec<(u64, u64)> {
    doc(out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["read"]["total_ios"].as_u64().unwrap(),
                j["write"]["total_ios"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn mixed_jobs_split_their_ios_as_fio() {
    // Each case, and what fio 3.33 gave (measured on 2026-11-27, every run the same). A
    // rate limit's switches depend on the clock: not pinned here.
    let cases: &[(&[&str], &[(u64, u64)])] = &[
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
    ];
    let peer = need_fio("mixed_jobs_split_their_ios_as_fio");
    for (case, measured) in cases {
        let d = tmp("mix");
        let mut args = vec![
            "--name=j",
            "--size=1m",
            "--bs=4k",
            "--ioengine=psync",
            "--output-format=json",
        ];
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
