//! The session of `hostbench fio`'s jobs, as fio has it.
//!
//! fio forks a process per job, and each job process calls `setsid()` (fio 3.33's
//! `thread_main`; not with `thread`, whose jobs are threads of fio's own process). Under
//! the kernel's autogroup scheduling (`kernel.sched_autogroup_enabled=1`, the default of
//! most distributions) a new session is a new scheduling group: on a busy machine each of
//! fio's jobs gets a group's share of the CPUs, while a process left in its caller's session
//! shares one group with everything else started from that terminal or script. With the
//! machine loaded by other sessions (load 15 on 2 CPUs), that alone decided a comparison:
//! a libaio QD32 job's completions waited 3x longer for a CPU in hostbench than in fio, and
//! hostbench ran 0.3-0.4 of fio's IOPS (1.0 once run under `setsid`).
//!
//! So `hostbench fio` runs its jobs the same way: unless every job sets `thread`, the
//! process starts itself again as a child that leads a session of its own, passes on to it
//! the stop signals it receives (Ctrl-C reaches only the terminal's foreground group, which
//! the child has left) and exits with the child's code. The child dies with its parent
//! (`PR_SET_PDEATHSIG`), which fio's job processes do not. `HOSTBENCH_FIO_SESSION=0` keeps
//! everything in the calling process.

use std::ffi::OsString;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};

/// The variable that marks the child (`child`) or turns the session off (`0`).
const VAR: &str = "HOSTBENCH_FIO_SESSION";

/// The signals passed on to the child: hostbench's stop signals, and SIGQUIT.
const FORWARDED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The signals `hostbench fio` handles even when it inherited them ignored, as fio 3.33
/// does (its SIGINT and SIGTERM handlers are installed unconditionally).
pub const ALWAYS_HANDLED: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

/// The child's pid once it runs (0 before).
static CHILD: AtomicI32 = AtomicI32::new(0);
/// A signal received before the child ran (0: none), passed on once it runs.
static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int) {
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe; the pid is our child, not yet reaped.
        unsafe { libc::kill(pid, sig) };
    } else {
        PENDING.store(sig, Ordering::SeqCst);
    }
}

/// Whether the jobs should move to a session of their own: not in the child already, not
/// turned off, not when every job is a thread (`all_threads`), and not when this process
/// leads its session already (started by `setsid`: its group is its own).
pub fn wanted(all_threads: bool) -> bool {
    if all_threads || std::env::var_os(VAR).is_some() {
        return false;
    }
    // SAFETY: getsid(0) and getpid() only read our own ids.
    unsafe { libc::getsid(0) != libc::getpid() }
}

/// Runs this same command line again in a child leading a new session and returns its exit
/// code (128 + the signal when a signal ended it). `Err` only when the child could not start.
pub fn run_in_own_session() -> std::io::Result<ExitCode> {
    let exe = std::env::current_exe()?;
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| OsString::from("hostbench"));
    // The stop signals that are not ignored are passed on (an ignored one stays ignored in
    // the child: exec keeps SIG_IGN, and hostbench keeps an inherited SIG_IGN), and SIGINT
    // and SIGTERM always, as fio handles them whatever it inherited.
    for sig in FORWARDED {
        // SAFETY: sigaction with a null new action only reads the disposition; the handler
        // installed touches atomics and calls kill, both async-signal-safe.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
                && !ALWAYS_HANDLED.contains(&sig)
            {
                continue;
            }
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = forward as *const () as libc::sighandler_t;
            act.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
    // SAFETY: getpid is async-signal-safe; read before the fork.
    let parent = unsafe { libc::getpid() };
    let mut cmd = std::process::Command::new(exe);
    cmd.arg0(arg0).args(args).env(VAR, "child");
    // SAFETY: between fork and exec the child only makes async-signal-safe calls.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Ends with its parent (a parent killed by SIGKILL passes nothing on).
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            if libc::getppid() != parent {
                libc::_exit(128 + libc::SIGTERM);
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    let early = PENDING.swap(0, Ordering::SeqCst);
    if early > 0 {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, early) };
    }
    let status = loop {
        match child.wait() {
            Ok(s) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    };
    CHILD.store(0, Ordering::SeqCst);
    Ok(match (status.code(), status.signal()) {
        (Some(c), _) => ExitCode::from(c as u8),
        (None, Some(s)) => ExitCode::from((128 + s) as u8),
        (None, None) => ExitCode::FAILURE,
    })
}
