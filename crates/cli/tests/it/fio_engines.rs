//! fio 3.33's simple engines (`falloc`, `ftruncate`, `cpuio`) and per-job process options
//! (`cpus_allowed`, `cpus_allowed_policy`, `prio`, `prioclass`, `thread`), side by side with
//! the installed fio: the system calls each I/O thread makes (through `strace -ff`), the I/O
//! counts and sizes in the JSON report, the file sizes left, the errors and the report
//! lines. Speed is not compared; cpuio's cycle counts are checked against what its load
//! allows at most (they follow the clock and the machine's load).

use super::fio::tmp;
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_seq::need_fio;
use crate::common;
use serde_json::Value;
use std::path::Path;

/// Whether strace is here (the call comparisons need it; CI installs it with fio).
pub(crate) fn have_strace(test: &str) -> bool {
    let ok = std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("HOSTBENCH_TEST_FIO").is_none(),
            "{test}: HOSTBENCH_TEST_FIO is set but strace is not installed"
        );
        eprintln!("skip: strace is not installed; {test}'s calls not compared");
    }
    ok
}

/// `program args` run in `dir` under `strace -ff -qq -e trace=CALLS` (saving into the
/// directory's own store): its output, and each traced process's or thread's log, sorted.
pub(crate) fn strace_ff(
    dir: &Path,
    program: &str,
    args: &[&str],
    calls: &str,
) -> (std::process::Output, Vec<String>) {
    let logs = dir.join("st");
    let _ = std::fs::remove_dir_all(&logs);
    std::fs::create_dir(&logs).unwrap();
    let o = std::process::Command::new("strace")
        .args(["-ff", "-qq", "-e"])
        .arg(format!("trace={calls}"))
        .arg("-o")
        .arg(logs.join("t"))
        .arg(program)
        .args(args)
        .current_dir(dir)
        .env("HOSTBENCH_RESULTS_DB", dir.join("r.db"))
        .output()
        .unwrap();
    let mut texts: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    texts.sort();
    (o, texts)
}

/// `program args` run in `dir` under `strace -f -qq FLAGS -e trace=CALLS` (saving into
/// the directory's own store): its output and the one log of every thread's calls (strace
/// splits a call another thread interrupts into `<unfinished ...>` and `resumed` lines).
pub(crate) fn strace_f(
    dir: &Path,
    program: impl AsRef<std::ffi::OsStr>,
    args: &[&str],
    calls: &str,
    flags: &[&str],
) -> (std::process::Output, String) {
    let log = dir.join("strace-f.log");
    let o = std::process::Command::new("strace")
        .args(["-f", "-qq"])
        .args(flags)
        .arg("-e")
        .arg(format!("trace={calls}"))
        .arg("-o")
        .arg(&log)
        .arg(program)
        .args(args)
        .current_dir(dir)
        .env("HOSTBENCH_RESULTS_DB", dir.join("r.db"))
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    (o, text)
}

/// The calls `calls` (strace names) of each thread of `program args` that made an engine
/// call (fallocate/ftruncate at an offset below `io_max`... every one but the layout's),
/// one list per thread, sorted; the first argument (a pid or fd) left out.
pub(crate) fn io_thread_calls(
    dir: &Path,
    program: &str,
    args: &[&str],
    calls: &str,
) -> Vec<Vec<String>> {
    let (o, texts) = strace_ff(dir, program, args, calls);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut threads = Vec::new();
    for text in texts {
        let list: Vec<String> = text
            .lines()
            .filter(|l| !l.starts_with("---") && !l.starts_with("+++"))
            .filter_map(|l| {
                let (name, rest) = l.split_once('(')?;
                let args = rest.rsplit_once(')')?.0;
                let all: Vec<&str> = args.split(", ").collect();
                // The pid or fd goes; so do the affinity set's size (fio's libnuma passes
                // 32 bytes, its own calls 128) and the memory policy's mask beyond its
                // first word.
                let args: Vec<&str> = match name {
                    "sched_setaffinity" => all.iter().skip(2).copied().collect(),
                    "set_mempolicy" => vec![all[0], all.get(1).copied().unwrap_or("")],
                    _ => all.iter().skip(1).copied().collect(),
                };
                let ret = l
                    .rsplit_once("= ")
                    .map_or("?", |r| r.1.split(' ').next().unwrap());
                Some(format!("{name}({}) = {ret}", args.join(", ")))
            })
            .collect();
        // The I/O threads: those that set their affinity, priority or memory policy, or did more than
        // one engine call (the layout makes one or two).
        let engine_calls = list
            .iter()
            .filter(|c| c.starts_with("fallocate") || c.starts_with("ftruncate"))
            .count();
        let sets = list.iter().any(|c| {
            ["sched_setaffinity", "ioprio_set", "set_mempolicy"]
                .iter()
                .any(|n| c.starts_with(n))
        });
        if engine_calls > 2 || (sets && engine_calls > 0) {
            threads.push(list);
        }
    }
    threads.sort();
    threads
}

fn jobs(out: &str) -> Vec<Value> {
    doc(out)["jobs"].as_array().unwrap().clone()
}

/// (io_bytes, total_ios, clat samples) of `dir` in a JSON job entry.
fn counts(j: &Value, dir: &str) -> (u64, u64, u64) {
    let d = &j[dir];
    (
        d["io_bytes"].as_u64().unwrap(),
        d["total_ios"].as_u64().unwrap(),
        d["clat_ns"]["N"].as_u64().unwrap(),
    )
}

fn both(d: &Path, args: &[&str]) -> (Ran, Ran) {
    (hb(d, args), fio(d, args))
}

#[test]
fn falloc_and_ftruncate_make_fios_calls() {
    if !need_fio("falloc_and_ftruncate_make_fios_calls") {
        return;
    }
    let d = tmp("engcalls");
    let hbp = common::bin();
    let hbp = hbp.to_str().expect("a UTF-8 path");
    for (engine, rw) in [
        ("falloc", "read"),
        ("falloc", "write"),
        ("falloc", "trim"),
        ("ftruncate", "write"),
    ] {
        let e = format!("--ioengine={engine}");
        let r = format!("--rw={rw}");
        let args = ["--name=en", &e, &r, "--size=64k", "--bs=16k"];
        let files = || {
            let _ = std::fs::remove_file(d.join("en.0.0"));
        };
        if have_strace("falloc_and_ftruncate_make_fios_calls") {
            files();
            let mut ours = vec!["fio"];
            ours.extend_from_slice(&args);
            ours.push("--no-save");
            let h = io_thread_calls(&d, hbp, &ours, "fallocate,ftruncate");
            files();
            let p = io_thread_calls(&d, "fio", &args, "fallocate,ftruncate");
            assert_eq!(h, p, "{engine} {rw}: the I/O thread's calls");
            assert_eq!(h.len(), 1, "{engine} {rw}: {h:?}");
        }
        // The report's counts and the file left behind.
        let mut json = args.to_vec();
        json.push("--output-format=json");
        files();
        let h = hb(&d, &json);
        let hsize = std::fs::metadata(d.join("en.0.0")).unwrap().len();
        files();
        let p = fio(&d, &json);
        let psize = std::fs::metadata(d.join("en.0.0")).unwrap().len();
        assert_eq!(
            (h.code, p.code),
            (0, 0),
            "{engine} {rw}: {}\n{}",
            h.err,
            p.err
        );
        let (hj, pj) = (&jobs(&h.out)[0], &jobs(&p.out)[0]);
        for dir in ["read", "write", "trim"] {
            assert_eq!(counts(hj, dir), counts(pj, dir), "{engine} {rw} {dir}");
        }
        assert_eq!(hsize, psize, "{engine} {rw}: the file's size");
    }
    // A randomly mixed falloc job: the same bytes in all (each block once), split between
    // the directions by the draw.
    let args = [
        "--name=en",
        "--ioengine=falloc",
        "--rw=randrw",
        "--size=256k",
        "--output-format=json",
    ];
    let _ = std::fs::remove_file(d.join("en.0.0"));
    let (h, p) = both(&d, &args);
    let sum = |j: &Value| counts(j, "read").0 + counts(j, "write").0;
    assert_eq!(sum(&jobs(&h.out)[0]), sum(&jobs(&p.out)[0]));
    assert_eq!(sum(&jobs(&h.out)[0]), 256 << 10);
}

#[test]
fn an_ftruncate_read_fails_as_in_fio() {
    if !need_fio("an_ftruncate_read_fails_as_in_fio") {
        return;
    }
    let d = tmp("engftr");
    let args = [
        "--name=t",
        "--ioengine=ftruncate",
        "--rw=read",
        "--size=64k",
        "--output-format=json",
    ];
    let (h, p) = both(&d, &args);
    assert_eq!(h.code, p.code, "{}\n{}", h.err, p.err);
    assert_eq!(h.code, 1);
    let (hj, pj) = (&jobs(&h.out)[0], &jobs(&p.out)[0]);
    assert_eq!(hj["error"], pj["error"]);
    assert_eq!(hj["error"].as_u64(), Some(22));
    assert_eq!(hj["read"]["total_ios"], pj["read"]["total_ios"]);
    // The normal block names fio's failing call.
    let h = hb(&d, &args[..4]);
    assert!(
        h.out
            .contains("err=22 (func=td_io_queue, error=Invalid argument)"),
        "{}",
        h.out
    );
    assert!(h.err.contains("ftruncate engine only writes"), "{}", h.err);
}

#[test]
fn cpuio_burns_its_load_as_fio() {
    if !need_fio("cpuio_burns_its_load_as_fio") {
        return;
    }
    let d = tmp("engcpu");
    // 10 ms of spinning, then 10 ms of thinking: about 50 cycles a second.
    let args = [
        "--name=c",
        "--ioengine=cpuio",
        "--cpuload=50",
        "--cpuchunks=10000",
        "--runtime=1",
        "--time_based",
    ];
    let (h, p) = both(&d, &args);
    assert_eq!((h.code, p.code), (0, 0), "{}\n{}", h.err, p.err);
    for (who, out) in [("hostbench", &h.out), ("fio", &p.out)] {
        assert!(
            out.contains("c (noop): ioengine=cpuio, cpuload=50, cpucycle=10000\n"),
            "{who}: {out}"
        );
        assert!(
            !out.contains("(g=0)"),
            "{who}: no start-up line of its own\n{out}"
        );
        assert!(!out.contains("  read: IOPS="), "{who}: no rate line\n{out}");
        // Most cycles take 10-20 ms (the 20 ms bucket); under load one can end in the
        // 10 ms one before it, for fio too (`10=2.00%, 20=98.00%` in a CI run).
        assert!(
            out.lines()
                .any(|l| l.starts_with("  lat (msec)   : ") && l.contains("20=")),
            "{who}: {out}"
        );
        assert!(
            out.contains("Run status group 0 (all jobs):"),
            "{who}: {out}"
        );
    }
    let mut json = args.to_vec();
    json.push("--output-format=json");
    let h = hb(&d, &json);
    let p = fio(&d, &json);
    let (hj, pj) = (&jobs(&h.out)[0], &jobs(&p.out)[0]);
    let (hb_, hn, hc) = counts(hj, "read");
    let (pb, pn, pc) = counts(pj, "read");
    assert_eq!((hb_, pb), (0, 0), "no data moves");
    assert_eq!(hn, hc, "each cycle is a clat sample");
    assert_eq!(pn, pc);
    // A cycle is at least 10 ms of spinning and 10 ms of thinking: at most 50 in 1 s (a few
    // more for the rounding of the run's end), for both; how many fewer depends on the load
    // of the machine, so no lower bound but one cycle.
    for (who, n) in [("hostbench", hn), ("fio", pn)] {
        assert!((1..=52).contains(&n), "{who}: {n} cycles in 1 s");
    }
    assert_eq!(hj["read"]["runtime"], pj["read"]["runtime"]);
    assert_eq!(hj["read"]["short_ios"], pj["read"]["short_ios"]);
    // The cycle is the latency: 10 ms of spinning on the clock (more when the machine is
    // busy: the spin's end can wait for the CPU). The CPU share is not asserted: on a
    // loaded machine wall-clock spinning is not CPU time, for fio too.
    let mean = hj["read"]["clat_ns"]["mean"].as_f64().unwrap();
    let min = hj["read"]["clat_ns"]["min"].as_f64().unwrap();
    assert!(min >= 10e6 && mean < 1e9, "clat min {min}, mean {mean}");

    // qsort times its own cycle and runs too.
    let q = hb(
        &d,
        &[
            "--name=q",
            "--ioengine=cpuio",
            "--cpuload=50",
            "--cpumode=qsort",
            "--runtime=1",
            "--time_based",
        ],
    );
    assert_eq!(q.code, 0, "{}", q.err);
    assert!(
        q.out
            .contains("q (qsort): ioengine=cpuio, cpuload=50, cpucycle=50000")
    );
}

#[test]
fn cpuio_ends_with_the_io_jobs_as_fio_ends_it() {
    if !need_fio("cpuio_ends_with_the_io_jobs_as_fio_ends_it") {
        return;
    }
    let d = tmp("engcpuend");
    let base = [
        "--name=a",
        "--ioengine=null",
        "--size=64m",
        "--name=b",
        "--ioengine=cpuio",
        "--cpuload=10",
        "--cpuchunks=10000",
        "--runtime=3",
        "--time_based",
        "--output-format=json",
    ];
    // fio reaps a cpuio thread once the I/O jobs are done (with `thread`); a cpuio process
    // runs its whole runtime (up to 30 cycles of 100 ms in 3 s; at least 10 however busy the
    // machine); `exit_on_io_done` ends it at its next cycle either way.
    // (An engine option goes after its ioengine=: fio does not know it before.)
    for (extra, short) in [
        (Some("--thread"), true),
        (None, false),
        (Some("--exit_on_io_done=1"), true),
    ] {
        let mut args: Vec<&str> = extra.filter(|e| *e == "--thread").into_iter().collect();
        args.extend_from_slice(&base);
        args.extend(extra.filter(|e| *e != "--thread"));
        let (h, p) = both(&d, &args);
        assert_eq!((h.code, p.code), (0, 0), "{}\n{}", h.err, p.err);
        for (who, r) in [("hostbench", &h), ("fio", &p)] {
            let cycles = jobs(&r.out)[1]["read"]["total_ios"].as_u64().unwrap();
            if short {
                assert!(
                    cycles <= 3,
                    "{who} {extra:?}: {cycles} cycles, {:?}",
                    r.took
                );
            } else {
                assert!(
                    cycles >= 10,
                    "{who} {extra:?}: {cycles} cycles, {:?}",
                    r.took
                );
            }
        }
    }
}

#[test]
fn engine_options_are_checked_as_fio_checks_them() {
    let d = tmp("engopts");
    let bad = |args: &[&str], want: &str| {
        let r = hb_fail(&d, args);
        assert!(r.contains(want), "{args:?}: {r}");
    };
    bad(
        &["--name=c", "--ioengine=cpuio", "--runtime=1"],
        "ioengine=cpuio needs cpuload=",
    );
    bad(
        &["--name=c", "--ioengine=psync", "--cpuload=20", "--size=64k"],
        "cpuload is an option of ioengine=cpuio",
    );
    bad(
        &[
            "--name=c",
            "--ioengine=cpuio",
            "--cpuload=20",
            "--cpumode=bubble",
        ],
        "cpumode=bubble: expected noop or qsort",
    );
    bad(
        &["--name=c", "--size=64k", "--cpus_allowed=0,4096"],
        "CPU 4096 too large",
    );
    bad(
        &["--name=c", "--size=64k", "--cpus_allowed_policy=half"],
        "expected shared or split",
    );
    bad(
        &["--name=c", "--size=64k", "--prio=8"],
        "prio=8: expected 0 to 7",
    );
    bad(
        &["--name=c", "--size=64k", "--prioclass=4"],
        "prioclass=4: expected 0 to 3",
    );
}

/// hostbench's fio front-end on `args` that must fail with a usage error: its stderr.
fn hb_fail(d: &Path, args: &[&str]) -> String {
    let o = common::hb()
        .current_dir(d)
        .arg("fio")
        .args(args)
        .arg("--no-save")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn affinity_and_io_priority_are_set_as_fio_sets_them() {
    if !need_fio("affinity_and_io_priority_are_set_as_fio_sets_them")
        || !have_strace("affinity_and_io_priority_are_set_as_fio_sets_them")
    {
        return;
    }
    // SAFETY: sysconf has no preconditions.
    let ncpu = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1);
    let last = format!("--cpus_allowed=0-{}", ncpu - 1);
    let d = tmp("engproc");
    let hbp = common::bin();
    let hbp = hbp.to_str().expect("a UTF-8 path");
    for extra in [
        vec![last.as_str(), "--cpus_allowed_policy=split", "--prio=4"],
        vec!["--cpus_allowed=0", "--prioclass=3"],
        vec![last.as_str(), "--prioclass=2", "--prio=7", "--thread"],
        vec!["--numa_cpu_nodes=0", "--numa_mem_policy=bind:0"],
        vec!["--numa_cpu_nodes=0", "--numa_mem_policy=interleave:0"],
        vec!["--numa_mem_policy=prefer:0"],
        vec!["--numa_mem_policy=local", "--cpus_allowed=0"],
        vec!["--nice=5", "--prio=2"],
    ] {
        let mut args = vec![
            "--name=p",
            "--ioengine=ftruncate",
            "--rw=write",
            "--size=32k",
            "--bs=16k",
            "--numjobs=2",
        ];
        args.extend_from_slice(&extra);
        let clean = || {
            for f in ["p.0.0", "p.1.0"] {
                let _ = std::fs::remove_file(d.join(f));
            }
        };
        clean();
        let mut ours = vec!["fio"];
        ours.extend_from_slice(&args);
        ours.push("--no-save");
        let calls = "sched_setaffinity,ioprio_set,set_mempolicy,setpriority,ftruncate";
        let h = io_thread_calls(&d, hbp, &ours, calls);
        clean();
        let p = io_thread_calls(&d, "fio", &args, calls);
        assert_eq!(h, p, "{extra:?}");
        assert_eq!(h.len(), 2, "{extra:?}: {h:?}");
    }
}

#[test]
fn io_uring_options_run_as_in_fio() {
    if !need_fio("io_uring_options_run_as_in_fio") {
        return;
    }
    let d = tmp("enguring");
    let hbp = common::bin();
    let hbp = hbp.to_str().expect("a UTF-8 path");
    let base = [
        "--name=u",
        "--ioengine=io_uring",
        "--filename=uf",
        "--size=1m",
        "--rw=randread",
        "--direct=1",
        "--iodepth=4",
        "--output-format=json",
    ];
    for extra in [
        vec!["--fixedbufs"],
        vec!["--registerfiles"],
        vec!["--fixedbufs", "--registerfiles"],
        vec!["--sqthread_poll=1"],
        vec!["--sqthread_poll=1", "--sqthread_poll_cpu=0"],
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(&extra);
        let (h, p) = both(&d, &args);
        if p.code != 0 {
            // A kernel or container without the feature: fio fails too; so must we.
            assert_ne!(
                h.code, 0,
                "{extra:?}: fio failed ({}), hostbench ran",
                p.err
            );
            continue;
        }
        assert_eq!(h.code, 0, "{extra:?}: {}", h.err);
        let (hj, pj) = (&jobs(&h.out)[0], &jobs(&p.out)[0]);
        assert_eq!(counts(hj, "read").0, counts(pj, "read").0, "{extra:?}");
        assert_eq!(counts(hj, "read").1, counts(pj, "read").1, "{extra:?}");
        assert_eq!(hj["error"], 0);
        // The registrations fio makes, made by hostbench's ring too.
        if have_strace("io_uring_options_run_as_in_fio") {
            let mut ours = vec!["fio"];
            ours.extend_from_slice(&args);
            ours.push("--no-save");
            let (o, t) = strace_f(&d, hbp, &ours, "io_uring_register,io_uring_setup", &[]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            for (opt, call) in [
                ("--fixedbufs", "IORING_REGISTER_BUFFERS"),
                ("--registerfiles", "IORING_REGISTER_FILES"),
                ("--sqthread_poll=1", "IORING_SETUP_SQPOLL"),
                ("--sqthread_poll_cpu=0", "IORING_SETUP_SQ_AFF"),
            ] {
                assert_eq!(
                    extra.contains(&opt),
                    t.contains(call),
                    "{extra:?} {call}:\n{t}"
                );
            }
        }
    }
    // hipri on a file of a filesystem: every I/O fails with EOPNOTSUPP, for fio too.
    let mut args = base.to_vec();
    args.push("--hipri");
    let (h, p) = both(&d, &args);
    assert_eq!(h.code, p.code, "{}\n{}", h.err, p.err);
    if p.code != 0 {
        let (hj, pj) = (&jobs(&h.out)[0], &jobs(&p.out)[0]);
        assert_eq!(hj["error"], pj["error"]);
        assert!(h.err.contains("polled queues"), "{}", h.err);
    }
    // An io_uring option on another engine is refused.
    let r = hb_fail(&d, &["--name=u", "--size=64k", "--fixedbufs"]);
    assert!(
        r.contains("fixedbufs is an option of ioengine=io_uring"),
        "{r}"
    );
}

/// io_uring's `nonvectored` (READV/WRITEV of one iovec at 0, plain READ/WRITE otherwise,
/// fio's default -1 probing the kernel) and `force_async=N` (every Nth request
/// `IOSQE_ASYNC`): taken as fio takes them, the same I/Os done and counted (the opcodes
/// and flags themselves are in the sqes, which no strace shows: the engine's unit test
/// `uring_sqes_follow_nonvectored_and_force_async_as_fio` reads them back), listed by
/// `--enghelp=io_uring`, and refused on another engine.
#[test]
fn io_uring_nonvectored_and_force_async_run_as_in_fio() {
    let d = tmp("enguring-nv");
    let (out, _, code) = {
        let o = common::hb()
            .args(["fio", "--enghelp=io_uring"])
            .output()
            .unwrap();
        (
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
            o.status.code(),
        )
    };
    assert_eq!(code, Some(0));
    let names: Vec<&str> = out
        .lines()
        .map(|l| l.split(':').next().unwrap().trim())
        .collect();
    for k in ["nonvectored", "force_async"] {
        assert!(names.contains(&k), "{k} not listed:\n{out}");
    }
    // fio's order: ... sqthread_poll_cpu, nonvectored, uncached, nowait, force_async.
    let at = |k: &str| names.iter().position(|n| *n == k).unwrap();
    assert!(at("sqthread_poll_cpu") < at("nonvectored") && at("nonvectored") < at("uncached"));
    assert!(at("nowait") < at("force_async"));
    let r = hb_fail(&d, &["--name=u", "--size=64k", "--force_async=2"]);
    assert!(
        r.contains("force_async is an option of ioengine=io_uring"),
        "{r}"
    );
    if !need_fio("io_uring_nonvectored_and_force_async_run_as_in_fio") {
        return;
    }
    let base = [
        "--name=u",
        "--ioengine=io_uring",
        "--filename=nvf",
        "--size=1m",
        "--rw=randrw",
        "--iodepth=4",
        "--fsync=5",
        "--output-format=json",
    ];
    for extra in [
        vec!["--nonvectored=0"],
        vec!["--nonvectored=1"],
        vec!["--nonvectored=-1"],
        vec!["--nonvectored=0", "--direct=1"],
        vec!["--force_async=2"],
        vec!["--force_async=1", "--nonvectored=0"],
        vec!["--force_async=3", "--fixedbufs"],
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(&extra);
        let (h, p) = both(&d, &args);
        assert_eq!(p.code, 0, "{extra:?}: fio failed: {}", p.err);
        assert_eq!(h.code, 0, "{extra:?}: {}", h.err);
        let (hj, pj) = (&jobs(&h.out)[0], &jobs(&p.out)[0]);
        for dir in ["read", "write"] {
            let (hc, pc) = (counts(hj, dir), counts(pj, dir));
            assert_eq!((hc.0, hc.1), (pc.0, pc.1), "{extra:?} {dir}");
        }
        // (fio's io_uring sync count varies from run to run — 87, 96 for the same job —
        // where its libaio's does not: not compared.)
        assert_eq!(hj["error"], 0, "{extra:?}");
        assert_eq!(
            hj["job options"], pj["job options"],
            "{extra:?}: the options as given"
        );
    }
}

/// `ioengine=cpp_null` (fio's examples/cpp_null.fio) and `ioengine=external:PATH`: fio loads
/// such an engine from a shared object (it fails here too, exit 1, with no such object);
/// hostbench, one static binary, cannot load one: exit 2, saying so, and that
/// `ioengine=null` measures the same.
#[test]
fn external_engines_are_refused_with_the_reason() {
    let d = tmp("eng-external");
    for engine in ["cpp_null", "external:/nonexistent/engine.so"] {
        let e = format!("--ioengine={engine}");
        let args = ["--name=null", e.as_str(), "--size=1m", "--rw=randread"];
        let r = hb(&d, &args);
        assert_eq!(r.code, 2, "{engine}: {}", r.err);
        for want in [
            "shared object",
            "static binary and cannot load",
            "ioengine=null measures the same",
        ] {
            assert!(r.err.contains(want), "{engine}: no '{want}' in: {}", r.err);
        }
        assert_eq!(r.err.trim().lines().count(), 1, "{}", r.err);
        if need_fio("fio_engines::external_engines_are_refused_with_the_reason") {
            let f = fio(&d, &args);
            assert_eq!(f.code, 1, "{engine}: {}", f.err);
            let lib = engine.trim_start_matches("external:");
            assert!(f.err.contains(lib), "{engine}: {}", f.err);
        }
    }
    assert!(
        std::fs::read_dir(&d).unwrap().next().is_none(),
        "nothing made"
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// The mapping calls of `program args` for its `len`-byte file region: each `mmap` of that
/// length named by its sharing flag, each `madvise` of that length by its advice.
fn mapping_calls(dir: &Path, program: &str, args: &[&str], len: &str) -> Vec<String> {
    let (o, text) = strace_f(dir, program, args, "mmap,madvise", &[]);
    assert!(
        o.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut calls = Vec::new();
    for l in text.lines() {
        let Some((_, call)) = l.split_once(' ') else {
            continue;
        };
        let Some((name, rest)) = call.trim_start().split_once('(') else {
            continue;
        };
        let args: Vec<&str> = rest.split(')').next().unwrap_or("").split(", ").collect();
        if args.get(1) != Some(&len) {
            continue;
        }
        match name {
            "mmap" if !args[3].contains("MAP_ANONYMOUS") => {
                let share = args[3].split('|').next().unwrap_or("");
                calls.push(format!("mmap({share})"));
            }
            "madvise" => calls.push(format!("madvise({})", args[2])),
            _ => {}
        }
    }
    calls
}

/// The mmap engine's `thp=1` (fio's "Memory Advise Huge Page"): the file is mapped
/// privately and `MADV_HUGEPAGE` advised on the mapping before the access pattern's advice;
/// `thp=0` maps it shared with no such advice. strace of fio and hostbench, call for call.
#[test]
fn mmap_thp_maps_privately_and_advises_huge_pages_as_fio() {
    if !have_strace("mmap_thp") {
        return;
    }
    let d = tmp("mmap-thp");
    let size = "4194304";
    let cases: [(&[&str], &[&str]); 3] = [
        (
            &["--thp=1", "--rw=randread"],
            &[
                "mmap(MAP_PRIVATE)",
                "madvise(MADV_HUGEPAGE)",
                "madvise(MADV_RANDOM)",
            ],
        ),
        (
            &["--thp=1", "--rw=write", "--fadvise_hint=0"],
            &["mmap(MAP_PRIVATE)", "madvise(MADV_HUGEPAGE)"],
        ),
        (
            &["--thp=0", "--rw=read"],
            &["mmap(MAP_SHARED)", "madvise(MADV_SEQUENTIAL)"],
        ),
    ];
    let bin = common::bin();
    let bin = bin.to_str().expect("a UTF-8 path");
    for (extra, want) in cases {
        let mut args = vec!["--name=x", "--ioengine=mmap", "--size=4m", "--bs=64k"];
        args.extend(extra);
        let mut ours = vec!["fio", "--filename=hb.dat", "--no-save"];
        ours.extend(&args);
        assert_eq!(mapping_calls(&d, bin, &ours, size), want, "{extra:?}");
        if need_fio("mmap_thp") {
            let mut theirs = vec!["--filename=fio.dat"];
            theirs.extend(&args);
            assert_eq!(
                mapping_calls(&d, "fio", &theirs, size),
                want,
                "fio {extra:?}"
            );
        }
    }
    // An engine option needs its engine, a number its digits.
    for bad in [
        &["--ioengine=psync", "--thp=1"][..],
        &["--ioengine=mmap", "--thp=huge"],
    ] {
        let mut a = vec!["--name=x", "--size=1m", "--filename=bad.dat"];
        a.extend(bad);
        let r: Ran = hb(&d, &a);
        assert_eq!(r.code, 2, "{bad:?}: {}", r.err);
        assert!(r.err.contains("thp"), "{bad:?}: {}", r.err);
        assert!(!r.err.contains("panicked"), "{}", r.err);
    }
    std::fs::remove_dir_all(d).unwrap();
}
