//! Where each clone's region lies in each of its files, and which files grow, side by side
//! with the installed fio 3.33 (`filesetup.c:setup_files`): the offsets of every read of
//! each file (hostbench's through strace, fio's from `--debug=io`) and the files' lengths
//! after the run, each program starting from the same files; and what an interrupted
//! layout says it left.
//!
//! Without fio the comparisons are skipped with a message, unless `HOSTBENCH_TEST_FIO` is
//! set: then a missing fio fails the test.

use super::fio::tmp;
use super::fio_files::{hb, offsets_per_file};
use super::fio_seq::need_fio;
use crate::common;
use std::path::Path;
use std::time::Duration;

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
    // (Each file's reads in short: how many, the first, the last; then the lengths.)
    let brief = |o: &(Vec<Vec<u64>>, Vec<u64>)| {
        let reads: Vec<_> =
            o.0.iter()
                .map(|v| (v.len(), v.first().copied(), v.last().copied()))
                .collect();
        format!("reads {reads:?}, lengths {:?}", o.1)
    };
    assert!(
        ours == theirs,
        "{args:?}:\nhostbench {}\nfio       {}",
        brief(&ours),
        brief(&theirs)
    );
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
    // Three clones sharing a list grown by the clones before them: fio sets up clone 0,
    // then 2, then 1 (pb ends 151552 bytes long, not 155648).
    let ours = as_fio(
        "pct-order",
        &[("pa", 256 * K), ("pb", 128 * K)],
        &[
            "--name=j",
            "--filename=pa:pb",
            "--offset=25%",
            "--size=200k",
            "--offset_increment=5%",
            "--numjobs=3",
        ],
    );
    assert_eq!(ours.1, [256 * K as u64, 151_552]);
    // Three clones sharing one file the same way (it ends 1600 KiB long, as fio).
    let ours = as_fio(
        "pct-one-shared",
        &[("s", M)],
        &[
            "--name=s",
            "--filename=s",
            "--offset=25%",
            "--size=1m",
            "--offset_increment=10%",
            "--numjobs=3",
        ],
    );
    assert_eq!(ours.1, [1_638_400]);
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

/// Ctrl-C while a job's 32 files are laid out: every file the layout had created is
/// removed, and the message says how many, which, and where (it said "the file it was
/// creating was removed" whatever it removed); nothing was measured, so nothing is stored,
/// as any run stopped before it measures.
#[test]
fn ctrl_c_in_a_layout_of_many_files_says_what_it_removed() {
    let d = tmp("lay-ctrlc");
    let db = d.join("r.db");
    let mut c = common::hb_std();
    c.env("HOSTBENCH_RESULTS_DB", &db)
        .args(["fio", "--name=j", "--nrfiles=32", "--size=1g", "--rw=read"])
        .current_dir(&d);
    let child = common::spawn_piped(&mut c);
    // Stopped once its second file is there (32 MiB each: the layout is still going).
    let t = std::time::Instant::now();
    while !d.join("j.0.1").exists() {
        assert!(t.elapsed() < Duration::from_secs(60), "no layout");
        std::thread::sleep(Duration::from_millis(2));
    }
    let o = common::interrupt(child);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(130), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("prepare interrupted"))
        .unwrap_or_else(|| panic!("{err}"));
    let n: usize = line
        .split("removed the ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count: {line}"));
    assert!((2..=32).contains(&n), "{line}");
    let dir = std::fs::canonicalize(&d).unwrap();
    let names = if n == 2 {
        "j.0.0 and j.0.1, in".to_string()
    } else {
        format!("(j.0.0 to j.0.{})", n - 1)
    };
    assert!(line.contains(&names), "{line}");
    assert!(line.contains(&format!(" in {}", dir.display())), "{line}");
    assert!(line.contains("nothing was measured or stored"), "{line}");
    assert!(!line.contains("the file it was creating"), "{line}");
    // All removed, and no run stored.
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Ctrl-C while an existing short file is extended: it is not removed, and the message
/// says it stays short.
#[test]
fn ctrl_c_while_extending_a_file_says_it_stays_short() {
    let d = tmp("lay-ctrlc-short");
    std::fs::write(d.join("short.dat"), vec![7u8; 4096]).unwrap();
    let mut c = common::hb_std();
    c.env("HOSTBENCH_RESULTS_DB", d.join("r.db"))
        .args([
            "fio",
            "--name=j",
            "--filename=short.dat",
            "--size=512m",
            "--rw=read",
        ])
        .current_dir(&d);
    let child = common::spawn_piped(&mut c);
    let t = std::time::Instant::now();
    while std::fs::metadata(d.join("short.dat")).unwrap().len() < 2 << 20 {
        assert!(t.elapsed() < Duration::from_secs(60), "no layout");
        std::thread::sleep(Duration::from_millis(2));
    }
    let o = common::interrupt(child);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.contains("prepare interrupted; short.dat (in ")
            && err.contains("), which it was extending, stays short;"),
        "{err}"
    );
    assert!(!err.contains("removed"), "{err}");
    // Back to its own length, its data untouched: the reservation (fallocate) made it 512
    // MiB of unwritten blocks, which the next run took for laid out and measured reads of
    // nothing (a user review: 200 MiB long with 53 MiB written).
    let m = std::fs::metadata(d.join("short.dat")).unwrap();
    assert_eq!(m.len(), 4096);
    assert_eq!(std::fs::read(d.join("short.dat")).unwrap(), vec![7u8; 4096]);
    std::fs::remove_dir_all(&d).unwrap();
}

/// The page-cache warnings say only what is true: a character device (/dev/full, whose
/// /dev is devtmpfs) is not a file on tmpfs and has no page cache, and the ftruncate and
/// falloc engines move no data through it; a buffered read of a regular file smaller than
/// RAM is warned of (or of its filesystem in RAM).
#[test]
fn page_cache_warnings_only_where_true() {
    let d = tmp("lay-warn");
    let warned = |args: &[&str]| -> Vec<String> {
        let r = hb(&d, args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.err);
        r.err
            .lines()
            .filter(|l| l.contains("page cache") || l.contains("keeps them in RAM"))
            .map(String::from)
            .collect()
    };
    let quiet: &[&[&str]] = &[
        &["--name=a", "--filename=/dev/full", "--rw=read", "--size=1m"],
        &[
            "--name=a",
            "--filename=/dev/zero",
            "--rw=randread",
            "--size=1m",
        ],
        &[
            "--name=a",
            "--filename=ft",
            "--ioengine=ftruncate",
            "--rw=write",
            "--size=1m",
        ],
        &[
            "--name=a",
            "--filename=fa",
            "--ioengine=falloc",
            "--rw=write",
            "--size=1m",
        ],
    ];
    for args in quiet {
        assert_eq!(warned(args), Vec::<String>::new(), "{args:?}");
    }
    // The same data through psync: warned.
    let w = warned(&["--name=a", "--filename=ft", "--rw=read", "--size=1m"]);
    assert_eq!(w.len(), 1, "{w:?}");
    std::fs::remove_dir_all(&d).unwrap();
}
