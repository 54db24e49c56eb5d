//! fio 3.33's `exec` engine (`engines/exec.c`), side by side with the installed fio: a job
//! file adapted from fio's `examples/exec.fio` (a program of ours instead of turbostat,
//! cpuio beside it, a stonewalled `sleep`), compared on what does not depend on speed — exit
//! status, the files made and their contents, the JSON key sets and groups, the start-up
//! lines; then how the program is stopped: SIGTERM, SIGKILL after `grace_time`, and when
//! hostbench itself is stopped; then the errors fio does not give (or gives badly).
//!
//! Without fio the comparisons are skipped with a message (`HOSTBENCH_TEST_FIO` set: fail).

use super::fio::tmp;
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_seq::need_fio;
use crate::common;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// The job file in `d`: a monitoring program (a shell script of ours, in `d`'s parent so
/// both runs name the same: its arguments and a line on each stream), two cpuio clones,
/// then in a group of its own `/bin/sleep %r` without redirection and with no grace.
fn write_example(d: &Path) {
    let script = d.parent().unwrap().join("mon.sh");
    std::fs::write(&script, "echo hi \"$@\"\necho err >&2\nexec sleep 30\n").unwrap();
    let job = format!(
        "[global]\ntime_based\nruntime=1\n\n\
         [monitoring]\nioengine=exec\nprogram=/bin/sh\narguments={} %n %r\n\n\
         [cpuload]\nioengine=cpuio\ncpuload=20\nnumjobs=2\n\n\
         [sleep]\nstonewall\nioengine=exec\nruntime=1\nprogram=/bin/sleep\narguments=%r\n\
         grace_time=0\nstd_redirect=0\n",
        script.display()
    );
    std::fs::write(d.join("exec.fio"), job).unwrap();
}

/// A fresh directory `sub` of `d` with the example in it.
fn fresh(d: &Path, sub: &str) -> std::path::PathBuf {
    let w = d.join(sub);
    let _ = std::fs::remove_dir_all(&w);
    std::fs::create_dir_all(&w).unwrap();
    write_example(&w);
    w
}

/// The file names in `d`.
fn names(d: &Path) -> BTreeSet<String> {
    std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Every key path of `v` (arrays' elements and percentile keys left out: they follow the
/// figures).
pub(crate) fn keys(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    if let Value::Object(m) = v {
        for (k, x) in m {
            if at.ends_with("/percentile") {
                continue;
            }
            let p = format!("{at}/{k}");
            out.insert(p.clone());
            keys(x, &p, out);
        }
    }
}

/// The start-up lines the engines print (exec's, cpuio's, the "..." of further clones).
fn engine_lines(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| {
            l.contains(" : program=")
                || l.contains(" : Saving output of ")
                || l.contains(" : Running ")
                || l.contains("ioengine=cpuio")
                || *l == "..."
        })
        .collect()
}

/// Whether process `pid` is still there (a zombie counts as gone).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// The pid a script wrote to `path`, waiting up to 10 s for it.
fn read_pid(path: &Path) -> i32 {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(s) = std::fs::read_to_string(path)
            && let Ok(p) = s.trim().parse()
        {
            return p;
        }
        assert!(Instant::now() < end, "{} never written", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_exec_example_runs_as_in_fio() {
    if !need_fio("the_exec_example_runs_as_in_fio") {
        return;
    }
    let d = tmp("exec");
    let (hd, fd) = (fresh(&d, "hb"), fresh(&d, "fio"));
    let json = ["exec.fio", "--output-format=json"];
    let (h, p) = (hb(&hd, &json), fio(&fd, &json));
    assert_eq!((h.code, p.code), (0, 0), "{}\n{}", h.err, p.err);
    // The same files: the monitor's two outputs, nothing for the job without redirection.
    assert_eq!(names(&hd), names(&fd));
    assert!(names(&hd).contains("monitoring.stdout"), "{:?}", names(&hd));
    assert!(!names(&hd).iter().any(|n| n.starts_with("sleep.")));
    for f in ["monitoring.stdout", "monitoring.stderr"] {
        let a = std::fs::read_to_string(hd.join(f)).unwrap();
        let b = std::fs::read_to_string(fd.join(f)).unwrap();
        assert_eq!(a, b, "{f}");
    }
    assert_eq!(
        std::fs::read_to_string(hd.join("monitoring.stdout")).unwrap(),
        "hi monitoring 1\n",
        "%n and %r expanded"
    );
    // The same report: jobs, groups, key sets; each exec "I/O" a read of 0 bytes.
    let (hv, pv) = (doc(&h.out), doc(&p.out));
    let (hj, pj) = (
        hv["jobs"].as_array().unwrap(),
        pv["jobs"].as_array().unwrap(),
    );
    assert_eq!(hj.len(), 4);
    assert_eq!(hj.len(), pj.len());
    for (a, b) in hj.iter().zip(pj) {
        assert_eq!(a["jobname"], b["jobname"]);
        assert_eq!(a["groupid"], b["groupid"], "{}", a["jobname"]);
        assert_eq!(a["error"], b["error"]);
        assert_eq!(a["job options"], b["job options"]);
        let (mut ka, mut kb) = (BTreeSet::new(), BTreeSet::new());
        keys(a, "", &mut ka);
        keys(b, "", &mut kb);
        assert_eq!(ka, kb, "{}: key sets", a["jobname"]);
        for j in [a, b] {
            let r = &j["read"];
            assert_eq!(r["io_bytes"], 0, "{j}");
            assert_eq!(r["runtime"], 0, "no rate: {j}");
            assert_eq!(r["total_ios"], r["clat_ns"]["N"]);
            assert_eq!(j["write"]["total_ios"], 0);
            assert_eq!(j["trim"]["total_ios"], 0);
        }
    }
    // A program started, then polled each 100 ms (50 ms in the engine, 50 ms of think):
    // about 11 in a second for both, fewer on a busy machine.
    for (who, v) in [("hostbench", &hj), ("fio", &pj)] {
        for i in [0, 3] {
            let n = v[i]["read"]["total_ios"].as_u64().unwrap();
            assert!((2..=12).contains(&n), "{who} job {i}: {n} I/Os");
        }
    }
    assert_eq!(hj[3]["groupid"], 1);

    // The normal layout: the engines' lines, no start-up line of the exec jobs' own, no
    // rate line.
    let (hd, fd) = (fresh(&d, "hb"), fresh(&d, "fio"));
    let (h, p) = (hb(&hd, &["exec.fio"]), fio(&fd, &["exec.fio"]));
    assert_eq!((h.code, p.code), (0, 0), "{}\n{}", h.err, p.err);
    let mut hl = engine_lines(&h.out);
    let mut pl = engine_lines(&p.out);
    // fio prints them as the clones get there: the order between jobs varies.
    hl.sort();
    pl.sort();
    assert_eq!(hl, pl, "hostbench:\n{}\nfio:\n{}", h.out, p.out);
    assert!(hl.contains(&"sleep : Running /bin/sleep 1"), "{hl:?}");
    for out in [&h.out, &p.out] {
        assert!(!out.contains("(g=0)") && !out.contains("  read:"), "{out}");
        assert!(out.contains("Run status group 1 (all jobs):"), "{out}");
    }
}

/// The stored result carries the exec job's program (typed), valid against the schema.
#[test]
fn the_result_keeps_the_program() {
    let d = tmp("execres");
    let w = fresh(&d, "hb");
    let o = common::hb()
        .current_dir(&w)
        .args([
            "fio",
            "exec.fio",
            "--output-format=hostbench-json",
            "--no-save",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_valid(&r, "an exec job's result");
    let jobs = r["fio"]["jobs"].as_array().unwrap();
    assert_eq!(jobs[0]["exec"]["program"], "/bin/sh");
    assert!(
        jobs[0]["exec"]["expanded"]
            .as_str()
            .unwrap()
            .ends_with("mon.sh monitoring 1")
    );
    assert_eq!(jobs[0]["exec"]["std_redirect"], true);
    assert_eq!(jobs[2]["exec"]["expanded"], "1");
    assert!(jobs[1].get("exec").is_none(), "cpuio has none");
}

/// A program that ignores SIGTERM gets SIGKILL once `grace_time` has passed (with fio too);
/// one that exits early does not end the job, which runs its runtime.
#[test]
fn the_program_is_stopped_as_fio_stops_it() {
    let d = tmp("execkill");
    std::fs::write(
        d.join("deaf.sh"),
        "trap '' TERM\necho $$ > \"$1\"\nexec sleep 30\n",
    )
    .unwrap();
    let with_fio = need_fio("the_program_is_stopped_as_fio_stops_it");
    for who in ["hostbench", "fio"] {
        if who == "fio" && !with_fio {
            continue;
        }
        let pidf = d.join(format!("pid-{who}"));
        let _ = std::fs::remove_file(&pidf);
        let args = format!(
            "--arguments={} {}",
            d.join("deaf.sh").display(),
            pidf.display()
        );
        let a = [
            "--name=deaf",
            "--ioengine=exec",
            "--program=/bin/sh",
            &args,
            "--runtime=1",
            "--grace_time=2",
            "--std_redirect=0",
        ];
        let r: Ran = if who == "fio" {
            fio(&d, &a)
        } else {
            hb(&d, &a)
        };
        assert_eq!(r.code, 0, "{who}: {}", r.err);
        let pid = read_pid(&pidf);
        assert!(!alive(pid), "{who}: the program ({pid}) is still running");
        // hostbench: the runtime, then the whole grace (the program does not exit). fio sends
        // SIGTERM and sleeps the grace only when its last poll sees the runtime over; when
        // its loop sees it first, its cleanup sends SIGKILL at once (1.7 s here).
        if who == "hostbench" {
            assert!(r.took >= Duration::from_millis(2900), "{who}: {:?}", r.took);
        }
        assert!(
            r.out.contains("deaf : Running /bin/sh "),
            "{who}: {}",
            r.out
        );
    }

    // A program that handles SIGTERM gets it first, and is not waited for the whole grace
    // (fio: only when its last poll sees the runtime over, see above; then it sleeps the
    // whole grace).
    std::fs::write(
        d.join("polite.sh"),
        "trap 'echo term >> \"$1\"; exit 0' TERM\nwhile :; do sleep 0.1; done\n",
    )
    .unwrap();
    {
        let who = "hostbench";
        let got = d.join(format!("got-{who}"));
        let _ = std::fs::remove_file(&got);
        let args = format!(
            "--arguments={} {}",
            d.join("polite.sh").display(),
            got.display()
        );
        let a = [
            "--name=polite",
            "--ioengine=exec",
            "--program=/bin/sh",
            &args,
            "--runtime=1",
            "--grace_time=3",
            "--std_redirect=0",
        ];
        let r = hb(&d, &a);
        assert_eq!(r.code, 0, "{who}: {}", r.err);
        assert_eq!(
            std::fs::read_to_string(&got).unwrap_or_default(),
            "term\n",
            "{who}: SIGTERM once"
        );
        assert!(r.took < Duration::from_millis(3500), "{:?}", r.took);
    }

    // A program that ends at once: the job still runs its runtime (fio: 11 polls a second).
    let r = hb(
        &d,
        &[
            "--name=quick",
            "--ioengine=exec",
            "--program=true",
            "--runtime=1",
            "--std_redirect=0",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let j = &doc(&r.out)["jobs"][0];
    assert!(j["job_runtime"].as_u64().unwrap() >= 990, "{j}");
    assert!(j["read"]["total_ios"].as_u64().unwrap() >= 2, "{j}");
}

/// SIGTERM (or Ctrl-C) of hostbench stops the program and what it started: nothing is left
/// running. (fio signals the program's pid alone: a shell's children outlive it.)
#[test]
fn stopping_hostbench_stops_the_program_and_its_children() {
    let d = tmp("execsig");
    std::fs::write(
        d.join("tree.sh"),
        "sleep 60 &\necho $! > \"$1.child\"\necho $$ > \"$1\"\nwait\n",
    )
    .unwrap();
    for (sig, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let pidf = d.join(format!("pid-{sig}"));
        let _ = std::fs::remove_file(&pidf);
        let _ = std::fs::remove_file(d.join(format!("pid-{sig}.child")));
        let mut cmd = common::hb_std();
        cmd.current_dir(&d).args([
            "fio",
            "--name=tree",
            "--ioengine=exec",
            "--program=/bin/sh",
            &format!(
                "--arguments={} {}",
                d.join("tree.sh").display(),
                pidf.display()
            ),
            "--runtime=60",
            "--no-save",
        ]);
        let child = common::spawn_piped(&mut cmd);
        let pid = read_pid(&pidf);
        let grandchild = read_pid(&d.join(format!("pid-{sig}.child")));
        assert!(alive(pid) && alive(grandchild));
        let t = Instant::now();
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, sig) };
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{err}");
        assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
        assert!(
            !alive(pid),
            "signal {sig}: the program ({pid}) is left running"
        );
        assert!(
            !alive(grandchild),
            "signal {sig}: its child ({grandchild}) is left running"
        );
        // The job's output files were made, as fio makes them.
        assert!(d.join("tree.stdout").is_file() && d.join("tree.stderr").is_file());
    }
}

/// What fio takes badly is refused before anything runs, in one line, exit 2: no program
/// (fio: exit 1), no runtime (fio runs for ever), a program that is not there (fio's forked
/// child carries on as a second copy of the job and fio exits 0), an output file that is a
/// symlink (fio writes through it).
#[test]
fn bad_exec_jobs_are_refused_clearly() {
    let d = tmp("execbad");
    std::fs::write(d.join("kept"), "keep").unwrap();
    std::os::unix::fs::symlink(d.join("kept"), d.join("ln.stdout")).unwrap();
    for (args, says) in [
        (
            vec!["--name=a", "--ioengine=exec", "--runtime=1"],
            "ioengine=exec needs program=",
        ),
        (
            vec!["--name=a", "--ioengine=exec", "--program=true"],
            "ioengine=exec needs runtime=",
        ),
        (
            vec![
                "--name=a",
                "--ioengine=exec",
                "--program=/nonexistent/hb-exec-prog",
                "--runtime=1",
            ],
            "cannot run program=/nonexistent/hb-exec-prog: No such file or directory",
        ),
        (
            vec![
                "--name=a",
                "--ioengine=exec",
                "--program=hb-exec-no-such-prog",
                "--runtime=1",
            ],
            "hb-exec-no-such-prog: not found in PATH",
        ),
        (
            vec![
                "--name=ln",
                "--ioengine=exec",
                "--program=true",
                "--runtime=1",
            ],
            "ln.stdout, which is there and is not a regular file",
        ),
        (
            vec![
                "--name=a",
                "--ioengine=psync",
                "--grace_time=2",
                "--size=4k",
            ],
            "grace_time is an option of ioengine=exec",
        ),
    ] {
        let r = hb(&d, &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.err);
        assert!(r.err.contains(says), "{args:?}: {}", r.err);
        assert_eq!(r.err.trim().lines().count(), 1, "{args:?}: {}", r.err);
    }
    assert_eq!(std::fs::read_to_string(d.join("kept")).unwrap(), "keep");
    assert!(!d.join("a.stdout").exists(), "nothing ran");
}

/// The clone's context switches (`ctx`) mean what fio's mean: a think or the exec engine's
/// wait is one sleep, as fio's `usec_sleep` (hostbench woke every 10 ms to look for a stop:
/// a 500 ms think counted ~50 switches, fio's 1). Each job runs 3 s; its `ctx` stays near
/// its count of sleeps (fio 3.33 here: thinktime=500ms ~7, exec ~62, 2 sleeps per exec
/// I/O), and within twice fio's where fio is installed (both with room for a loaded
/// machine's preemptions).
#[test]
fn context_switches_count_the_sleeps_as_fios() {
    // ctx counts involuntary switches too. A think used to end in 2 ms of yields, each a
    // switch on a loaded machine (1778 for 31 exec I/Os in a CI run, 63 alone): thinks are
    // now one sleep each, as fio's, so the count holds under the suite's load.
    let d = tmp("ctx");
    std::fs::write(d.join("tf"), vec![1u8; 64 << 10]).unwrap();
    let jobs: [(&[&str], u64); 2] = [
        (
            &[
                "--rw=read",
                "--bs=4k",
                "--size=64k",
                "--filename=tf",
                "--thinktime=500ms",
            ],
            // One sleep per think.
            1,
        ),
        (
            &["--ioengine=exec", "--program=/bin/sleep", "--arguments=3"],
            // The engine's 50 ms wait and the job's 50 ms think.
            2,
        ),
    ];
    let peer = need_fio("context_switches_count_the_sleeps_as_fios");
    for (extra, per_io) in jobs {
        let mut a = vec![
            "--name=c",
            "--time_based",
            "--runtime=3",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        let ctx = |r: Ran| -> (u64, u64) {
            assert_eq!(r.code, 0, "{extra:?}: {}", r.err);
            let j = &doc(&r.out)["jobs"][0];
            let ios = j["read"]["total_ios"].as_u64().unwrap();
            (j["ctx"].as_u64().unwrap(), ios)
        };
        let (ours, ios) = ctx(hb(&d, &a));
        // More for the start, the end and the machine's other work: ctx counts involuntary
        // switches too, and a loaded machine (the whole test suite at once) preempts a
        // worker each time it wakes. Waking every 10 ms to look for a stop, as before,
        // adds 300 in 3 s.
        assert!(
            ours <= per_io * ios + 100,
            "{extra:?}: ctx={ours} for {ios} I/Os of {per_io} sleep(s) each"
        );
        if peer {
            let (theirs, _) = ctx(fio(&d, &a));
            assert!(
                ours <= 2 * theirs + 100,
                "{extra:?}: ctx={ours}, fio's {theirs}"
            );
        }
    }
    std::fs::remove_dir_all(&d).ok();
}
