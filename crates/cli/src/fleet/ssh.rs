//! The one transport: the system's `ssh`, so `~/.ssh/config`, agents, ProxyJump, bastions
//! and known_hosts work as they do for Ansible. Batch mode (never a prompt), one master
//! connection per host (`ControlMaster`, its socket in the fleet's private temporary
//! directory), every ssh in a process group of its own so that a terminal's Ctrl-C reaches
//! hostbench alone, which then stops the remote runs in order.

use super::hosts::Target;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How ssh is run for a fleet. The master sockets are named by the host's slot, not
/// ssh's `%C` (40 hex digits), so their path stays under the 108 bytes a Unix socket's
/// name may have.
#[derive(Debug, Clone)]
pub struct Ssh {
    /// `ssh -F FILE`.
    pub config: Option<PathBuf>,
    /// Where the master connections' sockets live.
    pub control_dir: PathBuf,
    /// `ConnectTimeout`, s.
    pub connect_timeout_s: u64,
}

/// `s` as one word of a POSIX shell.
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl Ssh {
    /// `ssh ... HOST REMOTE`: `remote` is a shell command line (quote its words).
    pub fn command(&self, t: &Target, remote: &str) -> Command {
        let mut c = Command::new("ssh");
        if let Some(f) = &self.config {
            c.arg("-F").arg(f);
        }
        c.args([
            "-o",
            "BatchMode=yes",
            "-o",
            "ControlMaster=auto",
            "-o",
            "ControlPersist=30",
        ])
        .arg("-o")
        .arg(format!(
            "ControlPath={}/{}",
            self.control_dir.display(),
            t.slot
        ))
        .arg("-o")
        .arg(format!("ConnectTimeout={}", self.connect_timeout_s))
        .args([
            "-o",
            "ServerAliveInterval=10",
            "-o",
            "ServerAliveCountMax=3",
        ]);
        if let Some(u) = &t.user {
            c.arg("-l").arg(u);
        }
        if let Some(p) = t.port {
            c.arg("-p").arg(p.to_string());
        }
        c.arg("--").arg(&t.host).arg(remote);
        // Its own process group: a Ctrl-C at the terminal is hostbench's to handle.
        c.process_group(0);
        c
    }

    /// Ends the hosts' master connections (quietly: some may never have started), all at
    /// once: one after the other cost a process start and a round trip a host.
    pub fn close_all(&self, targets: &[Target]) {
        let children: Vec<Child> = targets
            .iter()
            .filter_map(|t| {
                let mut c = Command::new("ssh");
                if let Some(f) = &self.config {
                    c.arg("-F").arg(f);
                }
                c.arg("-o")
                    .arg(format!(
                        "ControlPath={}/{}",
                        self.control_dir.display(),
                        t.slot
                    ))
                    .args(["-O", "exit"]);
                if let Some(u) = &t.user {
                    c.arg("-l").arg(u);
                }
                if let Some(p) = t.port {
                    c.arg("-p").arg(p.to_string());
                }
                c.arg("--").arg(&t.host);
                c.stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .process_group(0)
                    .spawn()
                    .ok()
            })
            .collect();
        for mut c in children {
            let _ = c.wait();
        }
    }
}

/// What one ssh command gave.
#[derive(Debug)]
pub struct Output {
    /// Its exit status (`None`: killed at the deadline or on Ctrl-C).
    pub status: Option<ExitStatus>,
    /// Its stdout (at most `stdout_max` bytes kept).
    pub stdout: Vec<u8>,
    /// The last [`TAIL_MAX`] bytes of its stderr.
    pub stderr_tail: Vec<u8>,
    /// Why it was stopped, when it was.
    pub stopped: Option<Stop>,
}

/// Why a command was stopped before it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The host's time ran out.
    Timeout,
    /// Ctrl-C (or SIGTERM, SIGHUP) reached hostbench.
    Interrupt,
}

/// stderr kept per command.
pub const TAIL_MAX: usize = 16 << 10;

fn read_tail(mut r: impl Read) -> Vec<u8> {
    let mut tail = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = r.read(&mut buf) {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > 2 * TAIL_MAX {
            tail.drain(..tail.len() - TAIL_MAX);
        }
    }
    if tail.len() > TAIL_MAX {
        tail.drain(..tail.len() - TAIL_MAX);
    }
    tail
}

/// Reads `r` to its end, keeping at most `max` bytes.
pub fn read_max(mut r: impl Read, max: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    while let Ok(n) = r.read(&mut buf) {
        if n == 0 {
            break;
        }
        if out.len() + n <= max {
            out.extend_from_slice(&buf[..n]);
        }
    }
    out
}

/// How a running command is stopped: `soft` first (for the fleet agent: close its stdin,
/// which stops the remote run and lets it send its partial results), the kill after
/// `grace`.
pub struct Running {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    out: std::thread::JoinHandle<Vec<u8>>,
    err: std::thread::JoinHandle<Vec<u8>>,
}

/// Starts `cmd` with stdin from `input` (written then closed) or kept open (`None`), and
/// stdout (at most `stdout_max` bytes) and stderr collected.
pub fn spawn(cmd: Command, input: Option<Input>, stdout_max: usize) -> std::io::Result<Running> {
    spawn_with(cmd, input, move |out| read_max(out, stdout_max))
}

/// [`spawn`] with stdout read by `reader` (in a thread of its own).
pub fn spawn_with(
    mut cmd: Command,
    input: Option<Input>,
    reader: impl FnOnce(std::process::ChildStdout) -> Vec<u8> + Send + 'static,
) -> std::io::Result<Running> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let out = child.stdout.take().expect("piped");
    let err = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || reader(out));
    let err = std::thread::spawn(move || read_tail(err));
    let mut stdin = child.stdin.take();
    if let Some(input) = input {
        let mut w = stdin.take().expect("piped");
        std::thread::spawn(move || {
            let _ = match input {
                Input::Bytes(b) => w.write_all(&b),
                Input::File(p) => std::fs::File::open(&p)
                    .and_then(|mut f| std::io::copy(&mut f, &mut w).map(|_| ())),
            };
        });
    }
    Ok(Running {
        child,
        stdin,
        out,
        err,
    })
}

/// What a command reads on stdin.
pub enum Input {
    /// These bytes.
    Bytes(Vec<u8>),
    /// This file's bytes.
    File(PathBuf),
}

impl Running {
    /// Writes `line` to the command's stdin; false when it is closed.
    pub fn send(&mut self, line: &str) -> bool {
        match self.stdin.as_mut() {
            Some(w) => w.write_all(line.as_bytes()).and_then(|_| w.flush()).is_ok(),
            None => false,
        }
    }

    /// Closes the command's stdin (the fleet agent's signal to stop).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits for the end, stopping the command at `deadline` or on Ctrl-C: stdin closed
    /// first, then killed `grace` later.
    pub fn wait(mut self, deadline: Option<Instant>, grace: Duration) -> Output {
        let mut stopped = None;
        let mut kill_at: Option<Instant> = None;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) => {}
                Err(_) => break None,
            }
            let now = Instant::now();
            if stopped.is_none() {
                let why = if hostbench_core::runner::INTERRUPT.load(Ordering::SeqCst) {
                    Some(Stop::Interrupt)
                } else if deadline.is_some_and(|d| now >= d) {
                    Some(Stop::Timeout)
                } else {
                    None
                };
                if let Some(w) = why {
                    stopped = Some(w);
                    self.stdin = None;
                    kill_at = Some(now + grace);
                }
            }
            if kill_at.is_some_and(|k| now >= k) {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        drop(self.stdin.take());
        let stdout = self.out.join().unwrap_or_default();
        let stderr_tail = self.err.join().unwrap_or_default();
        Output {
            status,
            stdout,
            stderr_tail,
            stopped,
        }
    }
}

/// Runs `cmd` to its end (or the deadline, or Ctrl-C).
pub fn run(
    cmd: Command,
    input: Option<Input>,
    deadline: Option<Instant>,
) -> std::io::Result<Output> {
    let input = Some(input.unwrap_or(Input::Bytes(Vec::new())));
    Ok(spawn(cmd, input, 1 << 20)?.wait(deadline, Duration::ZERO))
}

/// The last line worth showing of a command's stderr.
pub fn last_lines(tail: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(tail);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_every_word_one_word() {
        assert_eq!(quote("abc-1.2/x=y"), "abc-1.2/x=y");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("it's $HOME"), r"'it'\''s $HOME'");
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s|' {} {}", quote("a b'c"), quote("$(x)")))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&o.stdout), "a b'c|$(x)|");
    }
}
