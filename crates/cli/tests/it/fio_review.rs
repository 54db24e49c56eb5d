//! Gaps a user review found against fio 3.33 (issue 21), each compared with the installed
//! fio on the same job where it runs: device counters in `--status-interval` reports, JSON
//! `disk_util` of a job that ends in error, the harness-overhead warning of file jobs,
//! values fio accepts (`filename` lists, `file_service_type=random:0`, `openfiles=-1`,
//! `filename=:`), the `filename_format` message, `verify` and `registerfiles` with several
//! files per clone.

use super::fio::{on_block_device, s, tmp};
use super::fio_out::json_docs;
use super::fio_seq::{fio, hb, need_fio};

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

/// `--status-interval` reports of a job on a file carry the device counters as the final
/// report does, in every format: the "Disk stats" block, JSON `disk_util` and the terse
/// device fields (130 fields, as fio's, not 121).
#[test]
fn status_interval_reports_have_disk_stats() {
    let d = tmp("review-si-disk");
    if !on_block_device(&d) {
        eprintln!("skip: the test directory is not on a block device");
        return;
    }
    let f = d.join("f");
    let fname = format!("--filename={}", s(&f));
    let base = [
        "--name=a",
        fname.as_str(),
        "--size=1m",
        "--rw=read",
        "--time_based",
        "--runtime=2",
        "--rate_iops=100",
        "--status-interval=1",
    ];
    let shape = |normal: &str, json: &str, terse: &str| {
        let blocks = normal.matches("\nDisk stats (read/write):\n").count();
        let reports = normal.matches("Run status group 0 (all jobs):").count();
        let docs = json_docs(json);
        let with_disks = docs.iter().filter(|v| v.get("disk_util").is_some()).count();
        let fields: Vec<usize> = terse
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| l.split(';').count())
            .collect();
        (reports, blocks, docs.len(), with_disks, fields)
    };
    let run = |f: &dyn Fn(&[&str]) -> String| {
        shape(
            &f(&base),
            &f(&with(&base, &["--output-format=json"])),
            &f(&with(&base, &["--minimal"])),
        )
    };
    let h = run(&|a| hb(&d, a).0);
    assert_eq!(h, (3, 3, 3, 3, vec![130, 130, 130]), "hostbench");
    if need_fio("status_interval_reports_have_disk_stats") {
        let p = run(&|a| fio(&d, a).0);
        assert_eq!(h, p, "hostbench vs fio");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// (error, issued reads, whether `disk_util` is there) of a JSON report.
fn err_reads_disks(out: &str) -> (i64, u64, bool) {
    let v = &json_docs(out)[0];
    let j = &v["jobs"][0];
    (
        j["error"].as_i64().unwrap(),
        j["read"]["total_ios"].as_u64().unwrap(),
        v.get("disk_util").is_some(),
    )
}

/// JSON `disk_util` stays when the job ends in error, and is there for a file the job's
/// open creates (`create_on_open`: fio watches the file's directory when the file is not
/// there yet). A reader's create_on_open makes an empty file whose first read moves
/// nothing: fio's `full resid`, EIO, exit 1.
#[test]
fn disk_util_stays_with_an_error_and_create_on_open() {
    let d = tmp("review-du-err");
    if !on_block_device(&d) {
        eprintln!("skip: the test directory is not on a block device");
        return;
    }
    let dir = format!("--directory={}", s(&d));
    let run = |f: &dyn Fn(&[&str]) -> (i32, String), rw: &str| {
        let rw = format!("--rw={rw}");
        let (code, out) = f(&[
            "--name=a",
            dir.as_str(),
            rw.as_str(),
            "--size=64k",
            "--create_on_open=1",
            "--output-format=json",
        ]);
        for e in std::fs::read_dir(&d).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
        (code, err_reads_disks(&out))
    };
    let hbr = |a: &[&str]| {
        let r = super::fio_files::hb(&d, a);
        (r.code, r.out)
    };
    let h = (run(&hbr, "read"), run(&hbr, "write"));
    assert_eq!(h, ((1, (5, 1, true)), (0, (0, 0, true))), "hostbench");
    if need_fio("disk_util_stays_with_an_error_and_create_on_open") {
        let fior = |a: &[&str]| {
            let r = super::fio_files::fio(&d, a);
            (r.code, r.out)
        };
        let p = (run(&fior, "read"), run(&fior, "write"));
        assert_eq!(h, p, "hostbench vs fio");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// The file engines' event is the harness's own loop (their clat is the file call, timed
/// apart): the harness-overhead warning, about events too short for the clock, does not
/// apply to them; it stays for the null engine, whose event is the harness's alone.
#[test]
fn file_engines_get_no_harness_overhead_warning() {
    let d = tmp("review-overhead");
    let dir = format!("--directory={}", s(&d));
    let warned = |engine: &str| {
        let eng = format!("--ioengine={engine}");
        let r = super::fio_files::hb(
            &d,
            &[
                "--name=f",
                dir.as_str(),
                eng.as_str(),
                "--nrfiles=300",
                "--filesize=4k",
                "--openfiles=1",
            ],
        );
        assert_eq!(r.code, 0, "{engine}: {}", r.err);
        r.err.contains("the figures measure the harness")
    };
    // Created, then stat'ed, then deleted: each engine finds what it needs.
    for engine in ["filecreate", "filestat", "filedelete"] {
        assert!(!warned(engine), "{engine} warned of the harness's overhead");
    }
    let r = super::fio_files::hb(
        &d,
        &["--name=n", "--ioengine=null", "--size=64m", "--bs=512"],
    );
    assert!(
        r.err.contains("the figures measure the harness"),
        "null engine: {}",
        r.err
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// The files a run left in `dir` (name, size), sorted; `dir` emptied. fio's verify state
/// file (`local-*-verify.state`, which hostbench does not write) is left out.
fn take_files(dir: &std::path::Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            let n = e.file_name().to_string_lossy().into_owned();
            let len = e.metadata().unwrap().len();
            std::fs::remove_file(e.path()).unwrap();
            (!n.ends_with("-verify.state")).then_some((n, len))
        })
        .collect();
    v.sort();
    v
}

/// Values fio 3.33 takes: a `filename` list longer than a later `nrfiles` (its first
/// nrfiles names), `file_service_type=random:0` (a file kept until done), `openfiles=-1`
/// (every file open): the same files, sizes and I/O counts as fio. `filename=:` names no
/// file: fio runs the job on nothing, hostbench refuses it in one line.
#[test]
fn values_fio_takes_are_taken() {
    let d = tmp("review-values");
    let base = ["--name=j", "--size=64k", "--bs=4k", "--rw=write"];
    let cases: &[&[&str]] = &[
        &["--filename=a1:a2:a3", "--nrfiles=2"],
        &["--nrfiles=2", "--filename=a1:a2:a3"],
        &["--nrfiles=3", "--file_service_type=random:0"],
        &["--nrfiles=2", "--openfiles=-1"],
    ];
    let run = |f: &dyn Fn(&[&str]) -> (i32, String), extra: &[&str]| {
        let mut a = with(&base, extra);
        a.push("--output-format=json");
        let (code, out) = f(&a);
        let v = &json_docs(&out)[0];
        let ios = v["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
        (code, ios, take_files(&d))
    };
    let hbr = |a: &[&str]| {
        let r = super::fio_files::hb(&d, a);
        (r.code, r.out)
    };
    let h: Vec<_> = cases.iter().map(|c| run(&hbr, c)).collect();
    assert_eq!(
        h[0],
        (0, 16, vec![("a1".into(), 32768), ("a2".into(), 32768)]),
        "the first nrfiles names"
    );
    assert_eq!(h[2].1, 15, "random:0 does every file's blocks");
    if need_fio("values_fio_takes_are_taken") {
        let fior = |a: &[&str]| {
            let r = super::fio_files::fio(&d, a);
            (r.code, r.out)
        };
        for (c, hv) in cases.iter().zip(&h) {
            assert_eq!(*hv, run(&fior, c), "{c:?}: hostbench vs fio");
        }
    }
    let r = super::fio_files::hb(&d, &with(&base, &["--filename=:"]));
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("names no file"), "{}", r.err);
    assert_eq!(r.err.trim().lines().count(), 1, "{}", r.err);
    std::fs::remove_dir_all(d).unwrap();
}

/// An absolute `filename_format` is the user's own path outside a suite, as fio takes it
/// (under `directory` when one is given, as fio nests it); a suite entry refuses it, and
/// only there does the message speak of the entry's scratch directory.
#[test]
fn absolute_filename_format_outside_and_inside_a_suite() {
    let d = tmp("review-ffmt");
    let work = d.join("work");
    std::fs::create_dir(&work).unwrap();
    let fmt = format!("--filename_format={}/abs.$jobnum", s(&d));
    let dd = d.join("dd");
    let dir = format!("--directory={}", s(&dd));
    let run = |f: &dyn Fn(&[&str]) -> i32| {
        let a = f(&[
            "--name=j",
            "--size=64k",
            "--rw=write",
            fmt.as_str(),
            "--output-format=terse",
        ]);
        let plain = std::fs::metadata(d.join("abs.0")).map(|m| m.len()).ok();
        let _ = std::fs::remove_file(d.join("abs.0"));
        std::fs::create_dir_all(&dd).unwrap();
        let b = f(&[
            "--name=j",
            "--size=64k",
            "--rw=write",
            fmt.as_str(),
            dir.as_str(),
            "--output-format=terse",
        ]);
        let nested = dd.join(d.strip_prefix("/").unwrap()).join("abs.0");
        let under = std::fs::metadata(&nested).map(|m| m.len()).ok();
        std::fs::remove_dir_all(&dd).unwrap();
        (a, plain, b, under)
    };
    let hbr = |a: &[&str]| super::fio_files::hb(&work, a).code;
    let h = run(&hbr);
    assert_eq!(h, (0, Some(65536), 0, Some(65536)), "hostbench");
    if need_fio("absolute_filename_format_outside_and_inside_a_suite") {
        let fior = |a: &[&str]| super::fio_files::fio(&work, a).code;
        assert_eq!(h, run(&fior), "hostbench vs fio");
    }
    // In a suite the entry's files stay in its scratch directory.
    let suite = d.join("s.toml");
    std::fs::write(
        &suite,
        format!(
            "name = \"s\"\n[[entry]]\ntime = \"1s\"\nworkload = \"disk.fio\"\n\
             params = {{ jobs = \"--name=a --rw=write --size=64k --filename_format={}/x.$jobnum\" }}\n",
            s(&d)
        ),
    )
    .unwrap();
    let o = crate::common::hb()
        .current_dir(&work)
        .args(["suite", &s(&suite), "--no-save", "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("filename_format") && err.contains("suite entry"),
        "{err}"
    );
    assert!(!d.join("x.0").exists(), "the suite wrote outside");
    std::fs::remove_dir_all(d).unwrap();
}

/// (error, reads, writes) of a JSON report, and the stderr lines about verification.
fn verify_outcome(out: &str, err: &str) -> ((i64, u64, u64), Vec<String>) {
    let v = &json_docs(out)[0];
    let j = &v["jobs"][0];
    (
        (
            j["error"].as_i64().unwrap(),
            j["read"]["total_ios"].as_u64().unwrap(),
            j["write"]["total_ios"].as_u64().unwrap(),
        ),
        // fio's first line of each bad block (the CRCs are of each run's own data).
        err.lines()
            .filter(|l| l.contains("verify failed") && !l.starts_with("WARNING"))
            .map(|l| l.trim().to_string())
            .collect(),
    )
}

/// `verify` with several files per clone, as fio: each file's blocks written, then read
/// back and checked (a sequential job file by file, by offset; a random one in write
/// order); a block corrupted in the second file is reported as fio reports it, by the
/// writer's verify phase (`verify_only`) and by a reader.
#[test]
fn verify_with_several_files_per_clone() {
    let d = tmp("review-verify-nf");
    let job = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "--name=v",
            "--size=32k",
            "--bs=4k",
            "--nrfiles=2",
            "--verify=md5",
            "--output-format=json",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect();
        a.extend(extra.iter().map(|x| x.to_string()));
        a
    };
    let steps: &[&[&str]] = &[
        &["--rw=write"],
        &["--rw=randwrite"],
        &["--rw=write", "--nrfiles=3", "--file_service_type=random"],
        &["--rw=write", "--do_verify=0"],
        &["--rw=write", "--verify_only=1"],
        &["--rw=read"],
    ];
    let run = |f: &dyn Fn(&[&str]) -> (String, String)| {
        let mut outs = Vec::new();
        for (i, st) in steps.iter().enumerate() {
            let a = job(st);
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let (out, err) = f(&a);
            // (verify_only's writes are counted as issued, as fio's dry run counts them.)
            outs.push(verify_outcome(&out, &err));
            if i < 3 {
                // Each of the first jobs on files of its own making.
                for e in std::fs::read_dir(&d).unwrap() {
                    std::fs::remove_file(e.unwrap().path()).unwrap();
                }
            }
            if i == 3 {
                // A data byte of the second file's second block.
                let p = d.join("v.0.1");
                let mut b = std::fs::read(&p).unwrap();
                b[4096 + 100] ^= 0xff;
                std::fs::write(&p, &b).unwrap();
            }
        }
        for e in std::fs::read_dir(&d).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
        outs
    };
    let h = run(&|a| {
        let r = super::fio_files::hb(&d, a);
        (r.out, r.err)
    });
    let counts: Vec<_> = h.iter().map(|x| x.0).collect();
    assert_eq!(
        counts,
        [
            (0, 8, 8),
            (0, 8, 8),
            (0, 6, 6),
            (0, 0, 8),
            (84, 6, 8),
            (84, 4, 0)
        ],
        "hostbench: {h:?}"
    );
    assert!(
        h[4].1[0].starts_with("md5: verify failed at file v.0.1 offset 4096, length 4096"),
        "{:?}",
        h[4].1
    );
    if need_fio("verify_with_several_files_per_clone") {
        let p = run(&|a| {
            let r = super::fio_files::fio(&d, a);
            (r.out, r.err)
        });
        assert_eq!(h, p, "hostbench vs fio");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// io_uring's `registerfiles` with several files per clone, as fio: every file opened when
/// the clone starts and registered with the ring at once (`IORING_REGISTER_FILES` with
/// one descriptor per file, in order), each I/O naming its file by index; what each file
/// received verifies (md5) and the counts are fio's. With `unlink_each_loop` it stays
/// refused (fio's registered descriptors would keep writing the files it unlinked).
#[test]
fn registerfiles_with_several_files_per_clone() {
    let d = tmp("review-regfiles");
    let have_strace = std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    let args = [
        "--name=r",
        "--ioengine=io_uring",
        "--registerfiles=1",
        "--iodepth=4",
        "--rw=randwrite",
        "--size=64k",
        "--bs=4k",
        "--nrfiles=3",
        "--verify=md5",
        "--output-format=json",
    ];
    let run = |program: &str| {
        let log = d.join("strace.txt");
        let mut c = std::process::Command::new("timeout");
        c.args(["-k", "5", "120"]);
        if have_strace {
            c.args(["strace", "-f", "-o"])
                .arg(&log)
                .args(["-e", "trace=io_uring_register"]);
        }
        if program == "fio" {
            c.arg("fio");
        } else {
            c.arg(crate::common::bin()).args(["fio", "--no-save"]);
        }
        let o = c.args(args).current_dir(&d).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert!(o.status.success(), "{program}: {err}");
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        let v = &json_docs(&out)[0];
        let j = &v["jobs"][0];
        let counts = (
            j["error"].as_i64().unwrap(),
            j["read"]["total_ios"].as_u64().unwrap(),
            j["write"]["total_ios"].as_u64().unwrap(),
        );
        // The descriptors registered at once, per call.
        let regs: Vec<usize> = if have_strace {
            std::fs::read_to_string(&log)
                .unwrap()
                .lines()
                .filter(|l| l.contains("IORING_REGISTER_FILES"))
                .map(|l| {
                    l.rsplit(", ")
                        .next()
                        .unwrap()
                        .split(')')
                        .next()
                        .unwrap()
                        .parse()
                        .unwrap()
                })
                .collect()
        } else {
            Vec::new()
        };
        let _ = std::fs::remove_file(&log);
        (counts, regs, take_files(&d))
    };
    let h = run("hostbench");
    assert_eq!(h.0, (0, 15, 15), "{h:?}");
    if have_strace {
        assert_eq!(h.1, [3], "one registration of the three files: {h:?}");
    }
    if need_fio("registerfiles_with_several_files_per_clone") {
        assert_eq!(h, run("fio"), "hostbench vs fio");
    }
    let r = super::fio_files::hb(
        &d,
        &[
            "--name=r",
            "--ioengine=io_uring",
            "--registerfiles=1",
            "--size=16k",
            "--loops=2",
            "--unlink_each_loop=1",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains("registerfiles with unlink_each_loop"),
        "{}",
        r.err
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// `io_submit_mode=offload` with the mmap engine: the submitting threads copy to and from
/// their own mappings of the file; every block written is there (a psync reader verifies
/// all 256). (fio 3.33 hangs on most offload runs on this machine, see docs/fio.md: not
/// compared.) io_uring stays refused in fio's words, as fio refuses it.
#[test]
fn offload_runs_the_mmap_engine() {
    let d = tmp("review-offload-mmap");
    let common = ["--name=o", "--size=1m", "--bs=4k", "--verify=md5"];
    let w = super::fio_files::hb(
        &d,
        &with(
            &common,
            &[
                "--rw=randwrite",
                "--ioengine=mmap",
                "--io_submit_mode=offload",
                "--iodepth=4",
                "--do_verify=0",
                "--output-format=json",
            ],
        ),
    );
    assert_eq!(w.code, 0, "{}", w.err);
    let v = &json_docs(&w.out)[0];
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 256);
    let r = super::fio_files::hb(&d, &with(&common, &["--rw=read", "--output-format=json"]));
    assert_eq!(r.code, 0, "{}", r.err);
    let v = &json_docs(&r.out)[0];
    assert_eq!(
        (
            v["jobs"][0]["error"].as_i64(),
            v["jobs"][0]["read"]["total_ios"].as_u64()
        ),
        (Some(0), Some(256))
    );
    let u = super::fio_files::hb(
        &d,
        &[
            "--name=o",
            "--size=64k",
            "--ioengine=io_uring",
            "--io_submit_mode=offload",
        ],
    );
    assert_eq!(u.code, 2, "{}", u.err);
    assert!(
        u.err.contains("can't be used with offloaded submit"),
        "{}",
        u.err
    );
    std::fs::remove_dir_all(d).unwrap();
}
