//! fio runs each job process in a session of its own (`setsid()` in the forked job, unless
//! `thread`). Under the kernel's autogroup scheduling (`kernel.sched_autogroup_enabled=1`,
//! the default of most distributions) a new session is a new scheduling group: on a busy
//! machine fio's job gets a group's share of the CPUs, not a share of its caller's group.
//! hostbench does the same: `hostbench fio` runs its jobs in a child process of its own
//! session, forwarding the signals it gets; `thread` keeps them in the caller's session.

use crate::common;
use std::time::{Duration, Instant};

/// (ppid, session) of `pid` from /proc/PID/stat.
fn ppid_sid(pid: i32) -> Option<(i32, i32)> {
    let st = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &st[st.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some((f[1].parse().ok()?, f[3].parse().ok()?))
}

/// The children of `pid` (all its threads').
fn children(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            let c = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            out.extend(c.split_whitespace().filter_map(|x| x.parse::<i32>().ok()));
        }
    }
    out
}

fn spawn(extra: &[&str]) -> std::process::Child {
    let mut cmd = common::hb_std();
    cmd.args([
        "fio",
        "--name=sess",
        "--ioengine=null",
        "--rw=read",
        "--bs=4k",
        "--size=1g",
        "--time_based",
        "--runtime=20",
    ])
    .args(extra)
    .env_remove("HOSTBENCH_FIO_SESSION");
    common::spawn_piped(&mut cmd)
}

#[test]
fn jobs_run_in_a_session_of_their_own_and_signals_reach_them() {
    // SAFETY: getsid(0) only reads our own session.
    let ours = unsafe { libc::getsid(0) };
    let child = spawn(&[]);
    let pid = child.id() as i32;
    let t0 = Instant::now();
    let mut job = None;
    while job.is_none() && t0.elapsed() < Duration::from_secs(20) {
        job = children(pid).into_iter().next();
        std::thread::sleep(Duration::from_millis(20));
    }
    let Some(job) = job else {
        let out = common::interrupt(child);
        panic!(
            "no job process under hostbench fio: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let (ppid, sid) = ppid_sid(job).expect("the job process's stat");
    assert_eq!(ppid, pid, "the job process is hostbench's child");
    assert_eq!(sid, job, "the job process leads a session of its own");
    assert_ne!(sid, ours);
    // Ctrl-C reaches the parent (the terminal's foreground group) and is passed on: the
    // job stops early with its report, and the parent's exit code is the job's.
    let out = common::interrupt(child);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}");
    assert!(stdout.contains("Run status group 0"), "{stdout}");
    assert!(
        t0.elapsed() < Duration::from_secs(19),
        "the job ran to its end"
    );
    assert!(
        ppid_sid(job).is_none(),
        "the job process outlived its parent"
    );
}

#[test]
fn thread_keeps_the_jobs_in_the_callers_session() {
    let ours = unsafe { libc::getsid(0) };
    let child = spawn(&["--thread", "--runtime=1"]);
    let pid = child.id() as i32;
    std::thread::sleep(Duration::from_millis(300));
    assert!(children(pid).is_empty(), "thread: no job process");
    assert_eq!(ppid_sid(pid).map(|p| p.1), Some(ours));
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
}

#[test]
fn exit_codes_pass_through() {
    // A failure in the job process (a file it cannot create) is the parent's exit code.
    let d = tempfile::tempdir().unwrap();
    let out = common::hb()
        .args([
            "fio",
            "--name=x",
            "--rw=read",
            "--bs=4k",
            "--size=1m",
            &format!("--filename={}/no/such/dir/f", d.path().display()),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let code = out.status.code();
    let again = common::hb()
        .env("HOSTBENCH_FIO_SESSION", "0")
        .args([
            "fio",
            "--name=x",
            "--rw=read",
            "--bs=4k",
            "--size=1m",
            &format!("--filename={}/no/such/dir/f", d.path().display()),
        ])
        .output()
        .unwrap();
    assert_eq!(code, again.status.code(), "same exit code in place");
}

/// A job file from a pipe (`hostbench fio /dev/stdin`, a shell's `<(...)`) is read once, by
/// the process that parses it: its jobs run there (a child could not read the pipe again).
#[test]
fn a_job_file_from_a_pipe_runs() {
    let d = tempfile::tempdir().unwrap();
    let o = common::hb()
        .current_dir(d.path())
        .args(["fio", "/dev/stdin", "--no-save"])
        .write_stdin("[s]\nioengine=null\nrw=read\nsize=1m\n")
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("s: (groupid=0, jobs=1)"), "{out}");
    assert!(out.contains("issued rwts: total=256,0,0,0"), "{out}");
}

/// `cmd` started as a background job of a non-interactive shell starts it (`job &` in a
/// script): SIGINT and SIGQUIT inherited as ignored; `extra` ignored as well.
fn spawn_as_background_job(cmd: &mut std::process::Command, extra: &[i32]) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let extra = extra.to_vec();
    // SAFETY: signal() is async-signal-safe; nothing else runs in the child before exec.
    unsafe {
        cmd.pre_exec(move || {
            for sig in [libc::SIGINT, libc::SIGQUIT].iter().chain(&extra) {
                libc::signal(*sig, libc::SIG_IGN);
            }
            Ok(())
        });
    }
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary starts")
}

/// A script's `hostbench fio job.fio &` then `kill -INT $!`: fio 3.33 installs its SIGINT
/// and SIGTERM handlers whatever it inherited, so the job stops with its report (measured:
/// `fio ... &` in `sh`, SigIgn without SIGINT, `kill -INT` ends it at once, exit 128).
/// hostbench kept the inherited SIG_IGN and ran to the end. A hang-up stays ignored, as in
/// fio (which has no SIGHUP handler: `trap '' HUP` keeps it running) and `nohup`.
#[test]
fn a_background_job_stops_on_sigint_as_fio_and_keeps_an_ignored_hangup() {
    for (with_session, sig, code) in [
        (true, libc::SIGINT, 130),
        (false, libc::SIGINT, 130),
        (true, libc::SIGTERM, 143),
    ] {
        let mut cmd = common::hb_std();
        cmd.args([
            "fio",
            "--name=bg",
            "--ioengine=null",
            "--rw=read",
            "--bs=4k",
            "--size=1g",
            "--time_based",
            "--runtime=20",
        ]);
        if with_session {
            cmd.env_remove("HOSTBENCH_FIO_SESSION");
        } else {
            cmd.env("HOSTBENCH_FIO_SESSION", "0");
        }
        let child = spawn_as_background_job(&mut cmd, &[libc::SIGTERM, libc::SIGHUP]);
        let pid = child.id() as i32;
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_millis(1500));
        // A hang-up first: ignored, the job goes on.
        // SAFETY: signals to our own child.
        unsafe { libc::kill(pid, libc::SIGHUP) };
        std::thread::sleep(Duration::from_millis(300));
        unsafe { libc::kill(pid, sig) };
        let out = child.wait_with_output().expect("the child exits");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(code),
            "session {with_session}, signal {sig}: {stdout}\n{stderr}"
        );
        assert!(stdout.contains("Run status group 0"), "{stdout}");
        assert!(
            t0.elapsed() < Duration::from_secs(15),
            "session {with_session}, signal {sig}: the job ran to its end"
        );
    }
}
