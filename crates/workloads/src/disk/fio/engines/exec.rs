//! fio's `exec` engine: no file and no data; the job runs a program of the user's for its
//! runtime (a monitoring tool beside the jobs that load the machine).
//!
//! As fio 3.33 (`engines/exec.c`) does it:
//! - the job's first "I/O" starts `program` with `arguments` (`%r`: the runtime in whole
//!   seconds, `%n`: the job's name), the command line split at each space (no shell, no
//!   quoting: `arguments=-c "a b"` gives the words `-c`, `"a`, `b"`), a name without `/`
//!   looked up in `PATH`;
//! - with `std_redirect` (the default) its stdout and stderr go to `JOBNAME.stdout` and
//!   `JOBNAME.stderr` in the current directory, created or truncated (mode 0644);
//! - each later "I/O" sleeps 50 ms (and the job thinks 50 ms after each, fio's
//!   `thinktime=50000` for the engine), so a job counts about ten reads of 0 bytes a second;
//!   once the runtime has passed, that I/O sends SIGTERM and waits up to `grace_time`
//!   seconds (default 1) before SIGKILL;
//! - a program that ends early does not end the job: it runs its runtime all the same.
//!
//! Where hostbench does more than fio, on purpose:
//! - the program runs in a process group of its own, and the signals go to the group, so
//!   what it started (`sh -c '...; sleep 5'`) stops with it (fio signals the pid alone and
//!   leaves such children running); its stdin is `/dev/null` (it runs in the background);
//! - it is also stopped (SIGTERM, `grace_time`, SIGKILL) whenever the job ends otherwise:
//!   Ctrl-C or SIGTERM of hostbench, `exitall`, an error; and the kernel kills it
//!   (`PR_SET_PDEATHSIG`) should hostbench itself die without stopping it;
//! - after SIGTERM it waits only until the program has exited, not the whole `grace_time`
//!   (fio sleeps `grace_time` seconds whatever the program does);
//! - the program is waited for (fio leaves a zombie until the job's process ends); its pid
//!   is kept reserved (not reaped) until the end, so a signal can never reach a process
//!   that reused it;
//! - a program that cannot be started fails the job with the reason (fio's forked child
//!   goes on as a second copy of the job and fio exits 0); the output files are opened
//!   with `O_NOFOLLOW` and must be regular files (a symlink, FIFO or device named so is
//!   refused, where fio writes through it).

#![allow(unsafe_code)]

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The engine's pause per "I/O" once the program runs, and the job's think after each
/// (fio's `thinktime=50000` set by the engine's init).
pub const POLL_US: u64 = 50_000;

/// What an exec job runs: its options as fio takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOpts {
    /// `program` (required).
    pub program: Option<String>,
    /// `arguments`, as written (`None`: not given, fio prints `(null)`).
    pub arguments: Option<String>,
    /// `grace_time`, seconds between SIGTERM and SIGKILL (fio's default 1).
    pub grace_time_s: u64,
    /// `std_redirect` (default on): stdout/stderr to `JOBNAME.stdout`/`.stderr`.
    pub std_redirect: bool,
}

impl Default for ExecOpts {
    fn default() -> Self {
        ExecOpts {
            program: None,
            arguments: None,
            grace_time_s: 1,
            std_redirect: true,
        }
    }
}

/// fio's expansion of `arguments`: every `%r` becomes the runtime in whole seconds, then
/// every `%n` the job's name.
pub fn expand(arguments: &str, runtime_s: f64, name: &str) -> String {
    let secs = (runtime_s.max(0.0) * 1e6) as u64 / 1_000_000;
    arguments
        .replace("%r", &secs.to_string())
        .replace("%n", name)
}

/// The words of fio's command line `program [expanded]`: split at spaces, empty words
/// dropped (no quoting, tabs are not separators).
pub fn words(program: &str, expanded: Option<&str>) -> Vec<String> {
    let line = match expanded {
        Some(a) => format!("{program} {a}"),
        None => program.to_string(),
    };
    line.split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The output files of job `name`: `NAME.stdout`, `NAME.stderr`.
pub fn output_names(name: &str) -> [String; 2] {
    [format!("{name}.stdout"), format!("{name}.stderr")]
}

/// Opens (creating or truncating, 0644) one output file as fio does, but never through a
/// symlink and only a regular file (a FIFO would block, a device would be written).
pub fn open_output(path: &str) -> std::io::Result<OwnedFd> {
    let c = CString::new(path)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a NUL in the name"))?;
    // SAFETY: open with a NUL-terminated path; O_NONBLOCK so a FIFO does not block the open
    // (it is refused just below).
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
            0o644,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is ours.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: fstat into our struct on our descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    // Truncated only now that it is known to be a regular file; the flags back to blocking.
    // SAFETY: ftruncate and fcntl on our descriptor.
    unsafe {
        if libc::ftruncate(fd.as_raw_fd(), 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, libc::O_WRONLY);
    }
    Ok(fd)
}

/// An error's text without Rust's ` (os error N)` tail.
fn plain(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Whether `path` is a file this user may execute.
fn executable(path: &std::path::Path) -> Result<(), String> {
    let m = std::fs::metadata(path).map_err(|e| plain(&e))?;
    if !m.is_file() {
        return Err("not a file".into());
    }
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| "a NUL in the name")?;
    // SAFETY: access with a NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
        return Err(plain(&std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Where `execvp` finds `prog`: itself when it has a `/`, else the first executable of
/// that name in `PATH` (`/usr/bin:/bin` when unset).
fn resolve(prog: &str) -> Option<std::path::PathBuf> {
    if prog.contains('/') {
        return Some(prog.into());
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(prog))
        .find(|p| executable(p).is_ok())
}

/// Checks before the run that job `name` can start its program (found as `execvp` finds
/// it: a word with `/` is a path, another is looked up in `PATH`) and that its output
/// files, when it has them, are regular files or absent (never a symlink): the clear
/// error then comes before anything runs.
pub fn preflight(name: &str, o: &ExecOpts, runtime_s: f64) -> Result<(), String> {
    let expanded = o.arguments.as_deref().map(|a| expand(a, runtime_s, name));
    let argv = words(o.program.as_deref().unwrap_or(""), expanded.as_deref());
    let Some(prog) = argv.first() else {
        return Err(format!("job '{name}': ioengine=exec: program= is empty"));
    };
    let found = if prog.contains('/') {
        executable(std::path::Path::new(prog))
    } else {
        resolve(prog)
            .map(|_| ())
            .ok_or_else(|| "not found in PATH".to_string())
    };
    if let Err(why) = found {
        return Err(format!(
            "job '{name}': ioengine=exec cannot run program={prog}: {why} (give the path of \
             an executable, or a name found in PATH)"
        ));
    }
    if o.std_redirect {
        for path in output_names(name) {
            if let Ok(m) = std::fs::symlink_metadata(&path)
                && !m.file_type().is_file()
            {
                return Err(format!(
                    "job '{name}': ioengine=exec writes the program's output to {path}, which \
                     is there and is not a regular file (a symlink, directory, FIFO or \
                     device); move it away or set std_redirect=0"
                ));
            }
        }
    }
    Ok(())
}

/// One exec clone's program.
pub struct Exec {
    name: String,
    argv: Vec<String>,
    redirect: bool,
    grace: Duration,
    runtime: Duration,
    /// The program, once started (kept unreaped until [`Exec::stop`]).
    child: Option<Child>,
    /// When the first I/O started it (fio's job start, for the runtime check).
    started: Option<Instant>,
    /// Whether SIGTERM was sent by an I/O (the program then is not signalled again).
    stopped: bool,
    /// The reason the program could not be started, for the job's error.
    error: Option<String>,
}

impl Exec {
    /// The engine of job `name` running `o` for `runtime_s` seconds.
    pub fn new(name: &str, o: &ExecOpts, runtime_s: f64) -> Exec {
        let program = o.program.clone().unwrap_or_default();
        let expanded = o.arguments.as_deref().map(|a| expand(a, runtime_s, name));
        Exec {
            name: name.to_string(),
            argv: words(&program, expanded.as_deref()),
            redirect: o.std_redirect,
            grace: Duration::from_secs(o.grace_time_s),
            runtime: Duration::from_secs_f64(runtime_s.max(0.0)),
            child: None,
            started: None,
            stopped: false,
            error: None,
        }
    }

    /// Why the program could not be started (after an I/O failed).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// One "I/O": the first starts the program; each later one sleeps [`POLL_US`] and, once
    /// the runtime has passed, stops the program. 0, or −errno when it cannot be started.
    pub fn io(&mut self) -> i64 {
        let Some(t0) = self.started else {
            self.started = Some(Instant::now());
            return match self.spawn() {
                Ok(c) => {
                    self.child = Some(c);
                    0
                }
                Err((errno, why)) => {
                    self.error = Some(why);
                    -i64::from(errno)
                }
            };
        };
        std::thread::sleep(Duration::from_micros(POLL_US));
        if !self.stopped && t0.elapsed() > self.runtime {
            self.stopped = true;
            self.stop();
        }
        0
    }

    fn spawn(&self) -> Result<Child, (i32, String)> {
        let errno = |e: &std::io::Error| e.raw_os_error().unwrap_or(libc::EIO);
        let Some((prog, args)) = self.argv.split_first() else {
            return Err((libc::EINVAL, "program= is empty".into()));
        };
        let mut outs = Vec::new();
        if self.redirect {
            for path in output_names(&self.name) {
                let fd = open_output(&path).map_err(|e| {
                    (
                        errno(&e),
                        format!(
                            "cannot open output file {path}: {} (ioengine=exec writes the \
                             program's output there; remove or rename what is there, or set \
                             std_redirect=0)",
                            plain(&e)
                        ),
                    )
                })?;
                outs.push(fd);
            }
        }
        let start = |prog: &str, args: &[String]| -> std::io::Result<Child> {
            let mut cmd = Command::new(prog);
            cmd.args(args).stdin(Stdio::null()).process_group(0);
            if let [out, err] = &outs[..] {
                cmd.stdout(Stdio::from(out.try_clone()?));
                cmd.stderr(Stdio::from(err.try_clone()?));
            }
            // SAFETY: prctl is async-signal-safe; the closure allocates nothing. The program
            // is killed if the thread that started it (this worker) dies without stopping it.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            cmd.spawn()
        };
        // Started through execvp (Rust's fork-and-exec path, which `pre_exec` selects), as
        // fio starts it: a name is looked up in PATH, and a script without `#!` is run by
        // /bin/sh.
        let child = start(prog, args);
        child.map_err(|e| {
            (
                errno(&e),
                format!(
                    "cannot run {prog}: {} (ioengine=exec: program= names an executable, a \
                     path or a name found in PATH)",
                    plain(&e)
                ),
            )
        })
    }

    /// Whether the program has exited (not reaped: its pid stays reserved).
    fn exited(pid: libc::pid_t) -> bool {
        // SAFETY: waitid into our struct; WNOWAIT leaves the child waitable.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        // SAFETY: si_pid is valid for a waitid result (0 when no child changed state).
        r != 0 || unsafe { info.si_pid() } != 0
    }

    /// Stops the program (SIGTERM to its group, up to `grace_time` for it to exit, then
    /// SIGKILL to the group) and reaps it; nothing when it was never started.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id() as libc::pid_t;
        // The leader is not reaped yet, so its pid (the group's id) is not reused.
        // SAFETY: kill of our own child's process group.
        unsafe { libc::kill(-pid, libc::SIGTERM) };
        let end = Instant::now() + self.grace;
        while !Self::exited(pid) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5).min(self.grace));
        }
        // SAFETY: as above; what of the group is left (the program past its grace, or what
        // it started) is killed.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = child.wait();
    }
}

impl Drop for Exec {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_expand_and_split_as_fio() {
        assert_eq!(expand("%r %n-%n x%r", 2.9, "job"), "2 job-job x2");
        assert_eq!(
            words("/bin/sh", Some("-c \"echo  hi\"")),
            ["/bin/sh", "-c", "\"echo", "hi\""]
        );
        assert_eq!(words("prog  a", None), ["prog", "a"]);
        assert_eq!(words("p", Some("")), ["p"]);
    }

    #[test]
    fn an_output_file_is_never_a_symlink() {
        let d = std::env::temp_dir().join(format!("wt-fio-exec-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let target = d.join("t");
        std::fs::write(&target, "keep").unwrap();
        let link = d.join("j.stdout");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(open_output(link.to_str().unwrap()).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        std::fs::remove_file(&link).unwrap();
        std::fs::write(&link, "old").unwrap();
        open_output(link.to_str().unwrap()).unwrap();
        assert_eq!(
            std::fs::read_to_string(&link).unwrap(),
            "",
            "truncated as fio"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_program_that_ignores_sigterm_is_killed_after_the_grace() {
        let o = ExecOpts {
            program: Some("/bin/sh".into()),
            grace_time_s: 1,
            std_redirect: false,
            ..ExecOpts::default()
        };
        let mut e = Exec::new("t", &o, 0.0);
        e.argv = ["/bin/sh", "-c", "trap '' TERM; sleep 30"]
            .map(String::from)
            .to_vec();
        assert_eq!(e.io(), 0);
        let pid = e.child.as_ref().unwrap().id() as i32;
        // Time for the shell to set its trap.
        std::thread::sleep(Duration::from_millis(300));
        let t = Instant::now();
        e.stop();
        let took = t.elapsed();
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_secs(10),
            "{took:?}: SIGKILL after the grace of 1 s"
        );
        // SAFETY: probing a pid (reaped: gone).
        assert_ne!(unsafe { libc::kill(pid, 0) }, 0, "the program is gone");
    }

    #[test]
    fn a_program_that_exits_on_sigterm_is_not_waited_for_the_whole_grace() {
        let o = ExecOpts {
            program: Some("/bin/sleep".into()),
            arguments: Some("30".into()),
            grace_time_s: 5,
            std_redirect: false,
        };
        let mut e = Exec::new("t", &o, 0.0);
        assert_eq!(e.io(), 0);
        let t = Instant::now();
        e.stop();
        assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    }

    #[test]
    fn a_script_without_a_shebang_runs_under_sh_as_execvp_runs_it() {
        use std::os::unix::fs::PermissionsExt;
        let d = std::env::temp_dir().join(format!("wt-fio-exec-sh-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let script = d.join("noshebang");
        let mark = d.join("ran");
        std::fs::write(&script, format!("echo ok > {}\n", mark.display())).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let o = ExecOpts {
            program: Some(script.display().to_string()),
            std_redirect: false,
            ..ExecOpts::default()
        };
        let mut e = Exec::new("t", &o, 1.0);
        assert_eq!(e.io(), 0, "{:?}", e.error());
        let pid = e.child.as_ref().unwrap().id() as i32;
        let end = Instant::now() + Duration::from_secs(10);
        while !Exec::exited(pid) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        e.stop();
        assert_eq!(std::fs::read_to_string(&mark).unwrap(), "ok\n");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_missing_program_is_an_error() {
        let o = ExecOpts {
            program: Some("/nonexistent/hb-prog".into()),
            ..ExecOpts::default()
        };
        let mut e = Exec::new("t", &o, 1.0);
        // No redirect files for this test: std_redirect would make them in the cwd.
        e.redirect = false;
        assert_eq!(e.io(), -i64::from(libc::ENOENT));
        assert!(
            e.error()
                .unwrap()
                .contains("cannot run /nonexistent/hb-prog")
        );
    }
}
