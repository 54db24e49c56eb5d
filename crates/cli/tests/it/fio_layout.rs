//! Where each clone's region lies in each of its files, and which files grow, side by side
//! with the installed fio 3.33 (`filesetup.c:setup_files`): the offsets of every read of
//! each file (hostbench's through strace, fio's from `--debug=io`) and the files' lengths
//! after the run, each program starting from the same files.
//!
//! Without fio the comparisons are skipped with a message, unless `HOSTBENCH_TEST_FIO` is
//! set: then a missing fio fails the test.

use super::fio::tmp;
use super::fio_files::{hb, offsets_per_file};
use super::fio_seq::need_fio;
use std::path::Path;

const K: usize = 1024;
const M: usize = 1024 * 1024;

/// `files` (name, length; filled with data) made afresh in a new directory before each
/// program runs `args` (with `--bs=4k --rw=read` before them): hostbench's offsets of each
/// file's reads and its lengths after, which must be fio's. Returns hostbench's.
fn as_fio(tag: &str, files: &[(&str, usize)], args: &[&str]) -> (Vec<Vec<u64>>, Vec<u64>) {
    let d = tmp(tag);
    let make = |d: &Path| {
        for (f, n) in files {
            let _ = std::fs::remove_file(d.join(f));
            if *n > 0 {
                std::fs::write(d.join(f), vec![7u8; *n]).unwrap();
            }
        }
    };
    let mut all = vec!["--bs=4k", "--rw=read"];
    all.extend_from_slice(args);
    let names: Vec<&str> = files.iter().map(|(f, _)| *f).collect();
    let [ours, theirs] = offsets_per_file(&d, &make, &all, &names);
    assert_eq!(ours, theirs, "{args:?}: hostbench (left), fio (right)");
    std::fs::remove_dir_all(&d).unwrap();
    ours
}

/// How many reads of each file, and the first offset read in it.
fn counts(o: &(Vec<Vec<u64>>, Vec<u64>)) -> Vec<(usize, u64)> {
    o.0.iter()
        .map(|v| (v.len(), v.first().copied().unwrap_or(u64::MAX)))
        .collect()
}

/// `offset=P%`/`offset_increment=P%` with several files: each clone's region of each file
/// starts at that share of the file's length as fio's setup measures it, and a file grows
/// only to the end of a region past it, as in fio. Each clone's files were grown once by
/// the prepare stage and measured again by the run (the share taken of the grown file:
/// clone 0 read from 640 KiB, not 512 KiB, and the files grew to 2.75 MiB and 3 MiB).
#[test]
fn percent_offsets_of_several_files_as_fio() {
    if !need_fio("fio_layout::percent_offsets_of_several_files_as_fio") {
        return;
    }
    // The review's case: four 2 MiB files, 2 MiB of each from 25% (+10% for clone 1).
    let two = 2 * M;
    let ours = as_fio(
        "pct-nrfiles",
        &[
            ("g.0.0", two),
            ("g.0.1", two),
            ("g.1.0", two),
            ("g.1.1", two),
        ],
        &[
            "--name=g",
            "--nrfiles=2",
            "--size=4m",
            "--offset=25%",
            "--offset_increment=10%",
            "--numjobs=2",
        ],
    );
    assert_eq!(ours.1, [2_621_440, 2_621_440, 2_834_432, 2_834_432]);
    assert_eq!(
        counts(&ours),
        [
            (512, 524_288),
            (512, 524_288),
            (512, 737_280),
            (512, 737_280)
        ]
    );
    // A shared list, to each file's end (size=100%): nothing grows; 1152 and 997 reads.
    let ours = as_fio(
        "pct-list",
        &[("pa", 4 * M), ("pb", two)],
        &[
            "--name=j",
            "--filename=pa:pb",
            "--offset=25%",
            "--size=100%",
            "--offset_increment=10%",
            "--numjobs=2",
        ],
    );
    assert_eq!(ours.1, [4 * M as u64, two as u64]);
    assert_eq!(ours.0[0].len() + ours.0[1].len(), 1152 + 997);
    // A shared list grown by clone 0: clone 1 takes its share of the grown files.
    as_fio(
        "pct-grown",
        &[("pa", 256 * K), ("pb", 128 * K)],
        &[
            "--name=j",
            "--filename=pa:pb",
            "--offset=25%",
            "--size=1m",
            "--offset_increment=10%",
            "--numjobs=2",
        ],
    );
    // Three clones of their own files, of different lengths.
    as_fio(
        "pct-three",
        &[
            ("t.0.0", 256 * K),
            ("t.0.1", 128 * K),
            ("t.1.0", 256 * K),
            ("t.1.1", 200_000),
            ("t.2.0", 64 * K),
            ("t.2.1", 256 * K),
        ],
        &[
            "--name=t",
            "--nrfiles=2",
            "--numjobs=3",
            "--offset=10%",
            "--offset_increment=20%",
            "--size=256k",
        ],
    );
    // One file: the prepare stage's growth is not measured again either.
    let ours = as_fio(
        "pct-one",
        &[("s", M)],
        &["--name=s", "--filename=s", "--offset=25%", "--size=1m"],
    );
    assert_eq!(ours.1, [1_310_720]);
    assert_eq!(counts(&ours), [(256, 262_144)]);
}

/// Existing files given by `filename=a:b` without a size are each read as they are, from
/// the clone's offset to the file's end, as fio (it was refused: "2 files need a size").
#[test]
fn existing_files_without_a_size_are_read_as_they_are_as_fio() {
    if !need_fio("fio_layout::existing_files_without_a_size_are_read_as_they_are_as_fio") {
        return;
    }
    let list: &[(&str, usize)] = &[("na", 256 * K), ("nb", 128 * K)];
    let cases: &[&[&str]] = &[
        &["--name=j", "--filename=na:nb"],
        &["--name=j", "--filename=na:nb", "--numjobs=3"],
        &[
            "--name=j",
            "--filename=na:nb",
            "--offset=64k",
            "--numjobs=2",
        ],
        &[
            "--name=j",
            "--filename=na:nb",
            "--offset_increment=32k",
            "--numjobs=3",
        ],
        &[
            "--name=j",
            "--filename=na:nb",
            "--offset=10%",
            "--numjobs=2",
            "--rw=randread",
        ],
        &["--name=j", "--filename=na:nb", "--size=50%", "--numjobs=2"],
    ];
    for args in cases {
        let ours = as_fio("nosize-list", list, args);
        assert_eq!(ours.1, [256 * K as u64, 128 * K as u64], "{args:?}: kept");
    }
    // The first case in figures: each file whole, once.
    let ours = as_fio("nosize-one", list, cases[0]);
    assert_eq!(counts(&ours), [(64, 0), (32, 0)]);
    // Generated names of different lengths, each clone its own.
    as_fio(
        "nosize-gen",
        &[
            ("g.0.0", 256 * K),
            ("g.0.1", 128 * K),
            ("g.1.0", 64 * K),
            ("g.1.1", 200_000),
        ],
        &["--name=g", "--nrfiles=2", "--numjobs=2"],
    );
    // A missing file has nothing to read and no size to lay out: refused, naming it (fio
    // fails the job on its open).
    let d = tmp("nosize-missing");
    std::fs::write(d.join("na"), vec![7u8; 64 * K]).unwrap();
    let r = hb(&d, &["--name=j", "--filename=na:nb", "--rw=read"]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("nb does not exist"), "{}", r.err);
    assert!(!d.join("nb").exists());
    std::fs::remove_dir_all(&d).unwrap();
}

/// Offsets in bytes with several files, laid out or existing, one to three clones: each
/// file's region and length as fio's.
#[test]
fn byte_offsets_of_several_files_as_fio() {
    if !need_fio("fio_layout::byte_offsets_of_several_files_as_fio") {
        return;
    }
    // Missing files, laid out to each clone's region's end.
    for n in ["1", "2", "3"] {
        let numjobs = format!("--numjobs={n}");
        let files: Vec<(String, usize)> = (0..3)
            .flat_map(|c| (0..2).map(move |k| (format!("b.{c}.{k}"), 0)))
            .collect();
        let files: Vec<(&str, usize)> = files.iter().map(|(f, n)| (f.as_str(), *n)).collect();
        let ours = as_fio(
            "bytes-new",
            &files,
            &[
                "--name=b",
                "--nrfiles=2",
                &numjobs,
                "--offset=64k",
                "--offset_increment=32k",
                "--size=256k",
            ],
        );
        // Clone c's files are 64k + c × 32k + 128k long.
        let c = n.parse::<u64>().unwrap() - 1;
        assert_eq!(ours.1[2 * c as usize], (192 + 32 * c) << 10, "{n}");
    }
    // A shared list, existing, offsets past some of it.
    as_fio(
        "bytes-list",
        &[("xa", 256 * K), ("xb", 64 * K)],
        &[
            "--name=x",
            "--filename=xa:xb",
            "--offset=32k",
            "--offset_increment=16k",
            "--size=128k",
            "--numjobs=3",
        ],
    );
}
