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
