//! Differences a third user review of `hostbench fio` found beside fio 3.33, each compared
//! with the installed fio: the null engine at a queue depth above 1, job names with `/` or
//! spaces, a missing `include` file, integer options with suffixes, `size` ranges and
//! prefixes of engine options.

use super::fio::tmp;
use super::fio_files::{doc, fio, hb};
use super::fio_seq::need_fio;

/// `ioengine=null` above `iodepth=1` queues and commits as fio's null engine does: a batch
/// is committed whole and reaped whole before the next is queued, so the depth, submit and
/// complete distributions are the batch's (fio: "IO depths : 8=100%" for a batch of 8), and
/// its I/Os have a submission latency.
#[test]
fn null_engine_queues_at_depth_as_fio() {
    if !need_fio("null_engine_queues_at_depth_as_fio") {
        return;
    }
    let d = tmp("review3-null");
    // (4096 I/Os in batches of 3 leave one over: fio commits it from its final reap and
    // leaves it out of the depth distribution, whose shares it takes of all I/Os issued;
    // hostbench's are of the I/Os counted, so only the submit and complete distributions
    // are compared there.)
    let cases: [(&[&str], bool); 6] = [
        (
            &[
                "--iodepth=32",
                "--iodepth_batch=8",
                "--iodepth_batch_complete_min=4",
            ],
            true,
        ),
        (&["--iodepth=4"], true),
        (&["--iodepth=8", "--iodepth_batch=3"], false),
        (
            &[
                "--iodepth=16",
                "--iodepth_batch=8",
                "--iodepth_batch_complete_max=2",
            ],
            true,
        ),
        (
            &[
                "--iodepth=32",
                "--iodepth_batch=16",
                "--iodepth_low=4",
                "--rw=randrw",
            ],
            true,
        ),
        (&["--iodepth=2", "--rw=write"], true),
    ];
    for (extra, level) in cases {
        let mut a = vec![
            "--name=x",
            "--ioengine=null",
            "--size=16m",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        let h = hb(&d, &a);
        let p = fio(&d, &a);
        assert_eq!((h.code, p.code), (0, 0), "{extra:?}: {}\n{}", h.err, p.err);
        let (hj, pj) = (&doc(&h.out)["jobs"][0], &doc(&p.out)["jobs"][0]);
        for key in ["iodepth_level", "iodepth_submit", "iodepth_complete"] {
            if key == "iodepth_level" && !level {
                continue;
            }
            assert_eq!(hj[key], pj[key], "{extra:?}: {key}");
        }
        for dir in ["read", "write"] {
            assert_eq!(
                hj[dir]["total_ios"], pj[dir]["total_ios"],
                "{extra:?}: {dir} total_ios"
            );
            assert_eq!(
                hj[dir]["slat_ns"]["N"], pj[dir]["slat_ns"]["N"],
                "{extra:?}: {dir} slat"
            );
        }
    }
}

/// A job named with `/` (`[sub/job]`) writes `sub/job.0.0`, `sub` made with mode 0700, as
/// fio's `create_work_dirs` does; a name that climbs out (`../x`) stays refused.
#[test]
fn job_name_with_a_slash_names_a_file_in_a_subdirectory() {
    use std::os::unix::fs::PermissionsExt;
    if !need_fio("job_name_with_a_slash_names_a_file_in_a_subdirectory") {
        return;
    }
    let job = "[sub/job]\nioengine=psync\nrw=write\nsize=64k\n";
    let mut seen = Vec::new();
    for (tag, fio_too) in [("hb", false), ("fio", true)] {
        let d = tmp(&format!("review3-slash-{tag}"));
        std::fs::write(d.join("j.fio"), job).unwrap();
        let a = ["j.fio", "--output-format=json"];
        let r = if fio_too { fio(&d, &a) } else { hb(&d, &a) };
        assert_eq!(r.code, 0, "{tag}: {}", r.err);
        let j = &doc(&r.out)["jobs"][0];
        let f = d.join("sub/job.0.0");
        let mode = std::fs::metadata(d.join("sub"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        seen.push((
            j["jobname"].as_str().unwrap().to_string(),
            j["write"]["total_ios"].as_u64().unwrap(),
            std::fs::metadata(&f).map(|m| m.len()).ok(),
            mode,
        ));
    }
    assert_eq!(seen[0], seen[1], "hostbench, fio");
    assert_eq!(seen[0], ("sub/job".to_string(), 16, Some(65536), 0o700));
    let d = tmp("review3-slash-out");
    let r = hb(&d, &["--name=../x", "--rw=write", "--size=64k"]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("climbs out"), "{}", r.err);
}

/// (jobs, reads, writes, syncs) of a JSON report.
fn ios(out: &str) -> (usize, u64, u64, u64) {
    let v = doc(out);
    let j = &v["jobs"][0];
    (
        v["jobs"].as_array().unwrap().len(),
        j["read"]["total_ios"].as_u64().unwrap(),
        j["write"]["total_ios"].as_u64().unwrap(),
        // (fio's sync `total_ios` stays 0 for fdatasync; its latency count is the calls.)
        j["sync"]["lat_ns"]["N"].as_u64().unwrap(),
    )
}

/// Runs `args` (a job on file `f`) through both and compares [`ios`].
fn same_ios(tag: &str, cases: &[&[&str]]) {
    let d = tmp(tag);
    for extra in cases {
        let mut a = vec!["--name=x", "--filename=f", "--output-format=json"];
        a.extend_from_slice(extra);
        let (h, p) = (hb(&d, &a), fio(&d, &a));
        assert_eq!((h.code, p.code), (0, 0), "{extra:?}: {}\n{}", h.err, p.err);
        assert_eq!(ios(&h.out), ios(&p.out), "{extra:?}: hostbench, fio");
    }
}

/// fio's integer options take its size suffixes and hex (`check_str_bytes`): `fsync=1k` is
/// every 1024 writes, `numjobs=0x2` two clones; of a list (`fsync=2:3`) the first number.
#[test]
fn integer_options_take_fios_suffixes() {
    if !need_fio("integer_options_take_fios_suffixes") {
        return;
    }
    same_ios(
        "review3-int",
        &[
            &["--rw=write", "--size=8m", "--fsync=1k"],
            &["--rw=write", "--size=64k", "--fsync=2:3"],
            &["--rw=write", "--size=1m", "--fdatasync=0x10"],
            &[
                "--rw=write",
                "--size=64k",
                "--numjobs=0x2",
                "--ioengine=null",
            ],
            &[
                "--rw=write",
                "--size=64k",
                "--iodepth=4:8",
                "--ioengine=null",
            ],
        ],
    );
}

/// An option with a callback in fio (`size`, `offset`, `io_size`, `rwmixread`, ...) keeps
/// the last part of a list: `size=1m:2m` is 2 MiB (fio's `handle_option` cuts at `,`, `:`
/// or `-` and calls the callback with each part).
#[test]
fn size_lists_keep_their_last_part_as_fio() {
    if !need_fio("size_lists_keep_their_last_part_as_fio") {
        return;
    }
    same_ios(
        "review3-size",
        &[
            &["--rw=write", "--size=1m:2m"],
            &["--rw=write", "--size=1m-2m"],
            &["--rw=write", "--size=1m,2m"],
            &["--rw=write", "--size=2m:1m"],
            &["--rw=write", "--size=2m", "--io_size=64k:128k"],
            &[
                "--rw=randrw",
                "--size=1m",
                "--rwmixread=20:70",
                "--ioengine=null",
            ],
        ],
    );
}

/// `[ a ]`: fio keeps the spaces inside the brackets, in the job's name (reports, JSON
/// `jobname`) and its file (` a .0.0`).
#[test]
fn section_name_keeps_its_spaces_as_fio() {
    if !need_fio("section_name_keeps_its_spaces_as_fio") {
        return;
    }
    let mut seen = Vec::new();
    for (tag, real) in [("hb", false), ("fio", true)] {
        let d = tmp(&format!("review3-spaces-{tag}"));
        std::fs::write(d.join("j.fio"), "[ a ]\nrw=write\nsize=64k\n").unwrap();
        let run = |a: &[&str]| if real { fio(&d, a) } else { hb(&d, a) };
        let j = run(&["j.fio", "--output-format=json"]);
        let n = run(&["j.fio"]);
        assert_eq!((j.code, n.code), (0, 0), "{tag}: {}{}", j.err, n.err);
        let head = n
            .out
            .lines()
            .filter(|l| l.contains("(g=0)") || l.contains("(groupid=0"))
            .map(|l| l[..l.find(": (").unwrap()].to_string())
            .collect::<Vec<_>>();
        seen.push((
            doc(&j.out)["jobs"][0]["jobname"]
                .as_str()
                .unwrap()
                .to_string(),
            head,
            std::fs::metadata(d.join(" a .0.0")).map(|m| m.len()).ok(),
        ));
    }
    assert_eq!(seen[0], seen[1], "hostbench, fio");
    assert_eq!(seen[0].0, " a ");
}

/// Once `ioengine=` names the engine, fio's command line takes a unique prefix of one of the
/// engine's options (`--userspace=1` is `userspace_reap`); a job file takes exact names only
/// (fio drops the job: "Bad option"), and so does the command line before `ioengine=`.
#[test]
fn engine_option_prefixes_on_the_command_line_as_fio() {
    if !need_fio("engine_option_prefixes_on_the_command_line_as_fio") {
        return;
    }
    let d = tmp("review3-engprefix");
    for (engine, given, full) in [
        ("libaio", "--userspace=1", "userspace_reap"),
        ("io_uring", "--fixedb=1", "fixedbufs"),
    ] {
        let e = format!("--ioengine={engine}");
        let a = [
            "--name=x",
            "--filename=f",
            "--size=64k",
            &e,
            given,
            "--output-format=json",
        ];
        let (h, p) = (hb(&d, &a), fio(&d, &a));
        assert_eq!((h.code, p.code), (0, 0), "{given}: {}\n{}", h.err, p.err);
        for r in [&h, &p] {
            assert_eq!(doc(&r.out)["jobs"][0]["job options"][full], "1", "{given}");
        }
    }
    std::fs::write(
        d.join("p.fio"),
        "[x]\nfilename=f\nsize=64k\nioengine=libaio\nuserspace=1\n",
    )
    .unwrap();
    let (h, p) = (hb(&d, &["p.fio"]), fio(&d, &["p.fio"]));
    assert_ne!(p.code, 0, "fio took a prefix in a job file");
    assert_eq!(h.code, 2, "{}", h.err);
    let r = hb(
        &d,
        &[
            "--name=x",
            "--filename=f",
            "--userspace=1",
            "--ioengine=libaio",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.err);
}
