//! fio 3.33's process, output and CPU options and the `posixaio` engine, side by side with
//! the installed fio: the I/O counts and sizes of the JSON report, the files each run
//! leaves, the errors. Without fio each test still checks hostbench alone.

use super::fio::tmp;
use super::fio_engines::{have_strace, io_thread_calls};
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_seq::need_fio;
use crate::common;
use serde_json::Value;
use std::path::Path;

/// (io_bytes, total_ios, clat samples) of direction `dir` in a JSON job entry.
fn counts(j: &Value, dir: &str) -> (u64, u64, u64) {
    let d = &j[dir];
    (
        d["io_bytes"].as_u64().unwrap(),
        d["total_ios"].as_u64().unwrap(),
        d["clat_ns"]["N"].as_u64().unwrap(),
    )
}

fn job0(r: &Ran) -> Value {
    doc(&r.out)["jobs"][0].clone()
}

fn rm(d: &Path, names: &[&str]) {
    for n in names {
        let _ = std::fs::remove_file(d.join(n));
    }
}

#[test]
fn posixaio_moves_what_fio_moves() {
    let d = tmp("posixaio");
    let cases: &[&[&str]] = &[
        &["--rw=randrw", "--iodepth=8", "--size=1m"],
        &["--rw=write", "--iodepth=4", "--size=512k", "--bs=16k"],
        &["--rw=read", "--iodepth=16", "--size=1m", "--nrfiles=3"],
        &["--rw=randread", "--iodepth=32", "--size=2m", "--bs=8k"],
    ];
    for extra in cases {
        let mut args = vec!["--name=px", "--ioengine=posixaio", "--output-format=json"];
        args.extend_from_slice(extra);
        let files = ["px.0.0", "px.0.1", "px.0.2"];
        rm(&d, &files);
        let h = hb(&d, &args);
        assert_eq!(h.code, 0, "{extra:?}: {}{}", h.err, h.out);
        let hj = job0(&h);
        assert_eq!(hj["error"], 0, "{extra:?}");
        // Alone: the whole size moved, each I/O completed once.
        let size = hostbench_size(extra);
        let total: u64 = ["read", "write", "trim"]
            .iter()
            .map(|dir| counts(&hj, dir).0)
            .sum();
        // Each file gets its share of the size in whole 4k blocks (fio's rule).
        let nfiles = if extra.contains(&"--nrfiles=3") { 3 } else { 1 };
        let size = size / nfiles / 4096 * 4096 * nfiles;
        let want = if extra.contains(&"--rw=trimwrite") {
            2 * size
        } else {
            size
        };
        assert_eq!(total, want, "{extra:?}");
        for dir in ["read", "write", "trim"] {
            let (_, n, clat) = counts(&hj, dir);
            assert_eq!(n, clat, "{extra:?} {dir}");
        }
        // The queue engine's submission latency is there for reads and writes.
        for dir in ["read", "write"] {
            let (_, n, _) = counts(&hj, dir);
            assert_eq!(
                hj[dir]["slat_ns"]["N"].as_u64().unwrap(),
                n,
                "{extra:?} {dir}"
            );
        }
        if !need_fio("posixaio_moves_what_fio_moves") {
            continue;
        }
        let hsizes: Vec<_> = files
            .iter()
            .map(|f| std::fs::metadata(d.join(f)).map(|m| m.len()).ok())
            .collect();
        rm(&d, &files);
        let p = fio(&d, &args);
        assert_eq!(p.code, 0, "{extra:?}: {}", p.err);
        let pj = job0(&p);
        // A mix's split between reads and writes is the rwmix draw, not the engine's
        // (hostbench's draw differs from fio 3.33's for every engine, psync too: 122/134
        // against 132/124 for a 1 MiB 4k randrw): compared as the sum.
        let mix = extra.contains(&"--rw=randrw");
        let dirs: &[&str] = if mix {
            &["trim"]
        } else {
            &["read", "write", "trim"]
        };
        for dir in dirs {
            assert_eq!(counts(&hj, dir), counts(&pj, dir), "{extra:?} {dir}");
            assert_eq!(
                hj[dir]["slat_ns"]["N"], pj[dir]["slat_ns"]["N"],
                "{extra:?} {dir} slat"
            );
        }
        let sum = |j: &Value| {
            let (r, w) = (counts(j, "read"), counts(j, "write"));
            (r.0 + w.0, r.1 + w.1, r.2 + w.2)
        };
        assert_eq!(sum(&hj), sum(&pj), "{extra:?}");
        let psizes: Vec<_> = files
            .iter()
            .map(|f| std::fs::metadata(d.join(f)).map(|m| m.len()).ok())
            .collect();
        assert_eq!(hsizes, psizes, "{extra:?}: the files left");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// The `--size=` of `args`, in bytes (k and m only).
fn hostbench_size(args: &[&str]) -> u64 {
    let v = args.iter().find_map(|a| a.strip_prefix("--size=")).unwrap();
    let (n, unit) = v.split_at(v.len() - 1);
    n.parse::<u64>().unwrap()
        * match unit {
            "k" => 1 << 10,
            "m" => 1 << 20,
            _ => panic!("{v}"),
        }
}

/// A posixaio read of a file's end past EOF: short reads, as fio reports them; an I/O error
/// (a write to /dev/full) ends the job with fio's error.
#[test]
fn posixaio_errors_as_fio() {
    let d = tmp("posixaio-err");
    let args = [
        "--name=full",
        "--ioengine=posixaio",
        "--iodepth=4",
        "--filename=/dev/full",
        "--rw=write",
        "--size=64k",
        "--output-format=json",
    ];
    let h = hb(&d, &args);
    let hj = job0(&h);
    assert_eq!(hj["error"], libc_enospc(), "{}", h.out);
    assert_ne!(h.code, 0);
    if need_fio("posixaio_errors_as_fio") {
        let p = fio(&d, &args);
        let pj = job0(&p);
        assert_eq!(hj["error"], pj["error"]);
        assert_eq!(h.code, p.code);
    }
    std::fs::remove_dir_all(d).unwrap();
}

fn libc_enospc() -> Value {
    Value::from(28)
}

/// `cpumask`, the bitmask form of `cpus_allowed`: the same affinity calls as fio's, a CPU
/// the machine lacks refused as fio refuses it, an empty mask failing the job as in fio.
#[test]
fn cpumask_sets_the_affinity_fio_sets() {
    let d = tmp("cpumask");
    // SAFETY: sysconf has no preconditions.
    let ncpu = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.clamp(1, 31) as u32;
    let all = format!("--cpumask={:#x}", (1u64 << ncpu) - 1);
    let beyond = format!("--cpumask={}", 1u64 << ncpu);
    let base = [
        "--name=p",
        "--ioengine=ftruncate",
        "--rw=write",
        "--size=32k",
        "--bs=16k",
        "--numjobs=2",
    ];
    // A CPU this machine lacks: fio's message, exit 2.
    let mut args = base.to_vec();
    args.push(&beyond);
    let h = hb(&d, &args);
    assert_eq!(h.code, 2, "{}", h.err);
    let want = format!("CPU {ncpu} too large (max={}", ncpu - 1);
    assert!(h.err.contains(&want), "{}", h.err);
    assert!(h.err.contains("cpumask="), "{}", h.err);
    // No CPU at all: the job fails with EINVAL from cpu_set_affinity.
    let mut args = base.to_vec();
    args.extend(["--cpumask=0", "--output-format=json"]);
    let clean = || {
        for f in ["p.0.0", "p.1.0"] {
            let _ = std::fs::remove_file(d.join(f));
        }
    };
    clean();
    let h = hb(&d, &args);
    assert_eq!(job0(&h)["error"], 22, "{}{}", h.out, h.err);
    if !need_fio("cpumask_sets_the_affinity_fio_sets") {
        return;
    }
    clean();
    let p = fio(&d, &args);
    assert_eq!(job0(&p)["error"], 22);
    assert_eq!(h.code, p.code);
    let mut args = base.to_vec();
    args.push(&beyond);
    let p = fio(&d, &args);
    assert_ne!(p.code, 0);
    assert!(p.err.contains(&want), "{}", p.err);
    if !have_strace("cpumask_sets_the_affinity_fio_sets") {
        return;
    }
    let hbp = common::bin();
    let hbp = hbp.to_str().expect("a UTF-8 path");
    for extra in [
        vec![all.as_str()],
        vec![all.as_str(), "--cpus_allowed_policy=split"],
        vec!["--cpumask=1"],
        // The later of cpus_allowed and cpumask wins, as fio's one cpumask.
        vec!["--cpus_allowed=0", all.as_str()],
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(&extra);
        clean();
        let mut ours = vec!["fio"];
        ours.extend_from_slice(&args);
        ours.push("--no-save");
        let calls = "sched_setaffinity,ftruncate";
        let h = io_thread_calls(&d, hbp, &ours, calls);
        clean();
        let p = io_thread_calls(&d, "fio", &args, calls);
        assert_eq!(h, p, "{extra:?}");
        assert_eq!(h.len(), 2, "{extra:?}: {h:?}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// What `exec_prerun`/`exec_postrun` leave: each clone runs the command through the shell
/// with `> NAME.MODE.txt 2>&1` appended (so only the last command of a list is redirected),
/// and says so on stdout; a failing prerun ends the job before any I/O, without an error.
#[test]
fn exec_prerun_and_postrun_run_as_fio_runs_them() {
    let d = tmp("execrun");
    let run = |program: &str| -> (i32, String, Vec<Option<String>>, Value) {
        let mut out = Vec::new();
        let mut code = 0;
        let mut docs = Vec::new();
        for args in [
            &[
                "--name=e",
                "--ioengine=null",
                "--size=8k",
                "--numjobs=2",
                "--exec_prerun=echo pre-out; echo pre-err >&2",
                "--exec_postrun=echo post $PWD",
                "--output-format=json",
            ][..],
            &[
                "--name=f",
                "--ioengine=null",
                "--size=8k",
                "--exec_prerun=echo failing; exit 3",
                "--exec_postrun=echo post",
                "--output-format=json",
            ][..],
        ] {
            let r = if program == "hb" {
                hb(&d, args)
            } else {
                fio(&d, args)
            };
            code = code.max(r.code);
            // The lines before the JSON document.
            let pre = &r.out[..r.out.find('{').unwrap()];
            out.push(pre.to_string());
            docs.push(doc(&r.out));
        }
        let files = [
            "e.prerun.txt",
            "e.postrun.txt",
            "f.prerun.txt",
            "f.postrun.txt",
        ]
        .iter()
        .map(|f| std::fs::read_to_string(d.join(f)).ok())
        .collect();
        let f = &docs[1]["jobs"][0];
        let summary = serde_json::json!({
            "e_jobs": docs[0]["jobs"].as_array().unwrap().len(),
            "e_reads": docs[0]["jobs"][0]["read"]["total_ios"],
            "f_error": f["error"],
            "f_reads": f["read"]["total_ios"],
        });
        let mut lines: Vec<&str> = out.iter().flat_map(|o| o.lines()).collect();
        lines.sort();
        (code, lines.join("\n"), files, summary)
    };
    let clean = || {
        for f in [
            "e.prerun.txt",
            "e.postrun.txt",
            "f.prerun.txt",
            "f.postrun.txt",
        ] {
            let _ = std::fs::remove_file(d.join(f));
        }
    };
    clean();
    let h = run("hb");
    let here = d.canonicalize().unwrap();
    assert_eq!(h.0, 0);
    assert_eq!(
        h.2,
        vec![
            Some("pre-err\n".to_string()),
            Some(format!("post {}\n", here.display())),
            Some(String::new()),
            None
        ]
    );
    assert_eq!(h.3["f_error"], 0);
    assert_eq!(h.3["f_reads"], 0);
    assert_eq!(h.3["e_reads"], 2);
    assert!(
        h.1.contains("e : Saving output of prerun in e.prerun.txt"),
        "{}",
        h.1
    );
    if need_fio("exec_prerun_and_postrun_run_as_fio_runs_them") {
        clean();
        let p = run("fio");
        assert_eq!(h, p);
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// The part of fio's `latency of N nsec exceeds specified max (M nsec): FILE DIR OFF LEN`
/// line after N (which is the machine's).
fn max_line(err: &str) -> Option<String> {
    let l = err.lines().find(|l| l.contains("exceeds specified max"))?;
    Some(l[l.find(" nsec exceeds")?..].to_string())
}

/// `max_latency` (µs, per direction): the first I/O over it fails the job with ETIMEDOUT
/// and fio's line; a limit no I/O reaches changes nothing.
#[test]
fn max_latency_fails_the_job_as_fio() {
    let d = tmp("maxlat");
    let cases: &[(&[&str], bool)] = &[
        (&["--rw=write", "--max_latency=1"], true),
        // reads 1 s, writes (and trims) 2 µs.
        (&["--rw=write", "--max_latency=1s,2"], true),
        (&["--rw=read", "--max_latency=1s,2"], false),
        (
            &[
                "--rw=randwrite",
                "--ioengine=libaio",
                "--iodepth=4",
                "--max_latency=1",
            ],
            true,
        ),
        (&["--rw=write", "--max_latency=10s"], false),
    ];
    for (extra, fails) in cases {
        let mut args = vec!["--name=m", "--size=64k", "--output-format=json"];
        args.extend_from_slice(extra);
        let _ = std::fs::remove_file(d.join("m.0.0"));
        let h = hb(&d, &args);
        let hj = job0(&h);
        let want_err = if *fails { 110 } else { 0 };
        assert_eq!(hj["error"], want_err, "{extra:?}: {}", h.err);
        assert_eq!(max_line(&h.err).is_some(), *fails, "{extra:?}: {}", h.err);
        if !*fails {
            assert_eq!(
                counts(&hj, "read").0 + counts(&hj, "write").0,
                64 << 10,
                "{extra:?}"
            );
        }
        if !need_fio("max_latency_fails_the_job_as_fio") {
            continue;
        }
        let _ = std::fs::remove_file(d.join("m.0.0"));
        let p = fio(&d, &args);
        let pj = job0(&p);
        assert_eq!(hj["error"], pj["error"], "{extra:?}");
        assert_eq!(h.code, p.code, "{extra:?}");
        if !extra.contains(&"--ioengine=libaio") {
            // At depth 1 the line and the counts too (with a queue, which I/O is seen late
            // first and what completes with it are the machine's).
            assert_eq!(max_line(&h.err), max_line(&p.err), "{extra:?}: {}", h.err);
            for dir in ["read", "write"] {
                assert_eq!(counts(&hj, dir), counts(&pj, dir), "{extra:?} {dir}");
            }
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// The I/O amounts of a normal report (deterministic, unlike the rates): the job line's
/// `(IO/` and the group line's `io=A (B)`.
fn io_figures(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            if l.contains("IOPS=") {
                let s = l.rfind(")(")?;
                Some(l[s + 2..l.rfind('/')?].to_string())
            } else if l.contains(", io=") {
                let s = l.find(", io=")?;
                Some(l[s + 5..l.rfind(", run=")?].to_string())
            } else {
                None
            }
        })
        .collect()
}

/// `significant_figures` (1 to 10): the figures of the normal layout's rate, amount and
/// group lines, as fio prints them; JSON does not change.
#[test]
fn significant_figures_shape_the_normal_layout_as_fio() {
    let d = tmp("sigfigs");
    for n in ["1", "2", "3", "4", "6", "10"] {
        let sf = format!("--significant_figures={n}");
        let args = ["--name=s", "--ioengine=null", "--size=1234k", &sf];
        let h = hb(&d, &args);
        assert_eq!(h.code, 0, "{}", h.err);
        let hf = io_figures(&h.out);
        assert_eq!(hf.len(), 2, "{}", h.out);
        if n == "10" {
            assert_eq!(hf, ["1261568B", "1261568B (1261568B)"]);
        }
        if need_fio("significant_figures_shape_the_normal_layout_as_fio") {
            let p = fio(&d, &args);
            assert_eq!(hf, io_figures(&p.out), "significant_figures={n}");
        }
    }
    let h = hb(
        &d,
        &[
            "--name=s",
            "--ioengine=null",
            "--size=8k",
            "--significant_figures=11",
        ],
    );
    assert_eq!(h.code, 2);
    assert!(h.err.contains("significant_figures=11"), "{}", h.err);
    std::fs::remove_dir_all(d).unwrap();
}

/// `numruns` is an option of fio 3.33's tiobench profile: without `profile=tiobench` fio
/// checks it is a number and runs the job once; so does hostbench, and says so.
#[test]
fn numruns_is_tiobenchs_and_runs_the_job_once_as_fio() {
    let d = tmp("numruns");
    let args = [
        "--name=a",
        "--ioengine=null",
        "--size=64k",
        "--numruns=3",
        "--output-format=json",
    ];
    let h = hb(&d, &args);
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(doc(&h.out)["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(counts(&job0(&h), "read").1, 16);
    assert!(h.err.contains("tiobench"), "{}", h.err);
    let bad = hb(
        &d,
        &["--name=a", "--ioengine=null", "--size=64k", "--numruns=x"],
    );
    assert_eq!(bad.code, 2);
    assert!(bad.err.contains("numruns=x"), "{}", bad.err);
    if need_fio("numruns_is_tiobenchs_and_runs_the_job_once_as_fio") {
        let p = fio(&d, &args);
        assert_eq!(doc(&p.out)["jobs"].as_array().unwrap().len(), 1);
        assert_eq!(counts(&job0(&p), "read").1, 16);
        let p = fio(
            &d,
            &["--name=a", "--ioengine=null", "--size=64k", "--numruns=x"],
        );
        assert_ne!(p.code, 0);
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// The job blocks' names of a normal report.
fn block_names(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.contains(": (groupid="))
        .map(|l| l[..l.find(": (groupid=").unwrap()].to_string())
        .collect()
}

/// `stats=0`: the job runs, and its figures are left out of the report and of its group's
/// totals, as in fio (whose JSON then has an entry without a name for it: not copied).
#[test]
fn stats_0_leaves_the_job_out_of_the_report_as_fio() {
    let d = tmp("stats0");
    let args = [
        "--name=a",
        "--ioengine=null",
        "--size=64k",
        "--stats=0",
        "--name=b",
        "--ioengine=null",
        "--size=32k",
    ];
    let h = hb(&d, &args);
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(block_names(&h.out), ["b"], "{}", h.out);
    let group = |out: &str| {
        out.lines()
            .find(|l| l.contains(", io="))
            .map(|l| l[l.find(", io=").unwrap()..l.find(", run=").unwrap()].to_string())
    };
    assert_eq!(group(&h.out).as_deref(), Some(", io=32.0KiB (32.8kB)"));
    let mut json = args.to_vec();
    json.push("--output-format=json");
    let hj = hb(&d, &json);
    let names = |out: &str| -> Vec<String> {
        doc(out)["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|j| j["jobname"].as_str().map(str::to_string))
            .collect()
    };
    assert_eq!(names(&hj.out), ["b"]);
    if need_fio("stats_0_leaves_the_job_out_of_the_report_as_fio") {
        let p = fio(&d, &args);
        assert_eq!(block_names(&p.out), block_names(&h.out));
        assert_eq!(group(&p.out), group(&h.out));
        let pj = fio(&d, &json);
        assert_eq!(names(&pj.out), names(&hj.out));
    }
    std::fs::remove_dir_all(d).unwrap();
}
