//! The remote half of `hostbench fleet`: `hostbench fleet agent ...`, run over ssh by the
//! deployed binary. Not for people (hidden from help); its interface may change with the
//! binary, which is why the controller deploys its own.
//!
//! - `agent run --dir DIR --run ID --host NAME [--start-at NS] [--offset NS] [--rtt NS] --
//!   COMMAND...`: runs `hostbench COMMAND...` with the fleet settings in its environment
//!   ([`super::gate`]) and a results store of its own in DIR; its report goes to stderr.
//!   Without `--start-at`, the start is a barrier: the command says `ready` on a pipe once
//!   it is set up, which the agent passes on as an `@ready` line on stdout; the controller
//!   answers `go NS` (the common start in this host's clock) on stdin, which the agent
//!   passes on to the command's other pipe.
//!   With `--clock` (the controller's way: one ssh session for everything), the agent
//!   first answers each empty line on stdin with this host's wall clock (Unix ns), so the
//!   controller can measure the offset over the ssh channel, until `clock OFFSET RTT`
//!   gives it the measured offset and round trip.
//!   When stdin closes (the controller stopped the run: Ctrl-C, timeout, lost connection)
//!   the command gets SIGINT and ends as interrupted, keeping its partial results. Then the
//!   runs it saved go to stdout as one export document, and DIR is removed.

use super::gate;
use anyhow::{Context, Result, bail};
use std::io::{BufRead, Write};
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

/// `hostbench fleet agent ARGS`.
pub fn main(args: &[String]) -> Result<ExitCode> {
    match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        _ => bail!("hostbench fleet agent is run by hostbench fleet over ssh: agent run"),
    }
}

struct RunArgs {
    dir: PathBuf,
    run: String,
    host: String,
    start_at: Option<String>,
    offset: Option<String>,
    rtt: Option<String>,
    /// `--clock`: answer clock samples on stdin first.
    clock: bool,
    command: Vec<String>,
}

fn parse(args: &[String]) -> Result<RunArgs> {
    let (opts, command) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], args[i + 1..].to_vec()),
        None => bail!("agent run: no -- before the command"),
    };
    let mut r = RunArgs {
        dir: PathBuf::new(),
        run: String::new(),
        host: String::new(),
        start_at: None,
        offset: None,
        rtt: None,
        clock: false,
        command,
    };
    let mut it = opts.iter();
    while let Some(k) = it.next() {
        if k == "--clock" {
            r.clock = true;
            continue;
        }
        let v = it
            .next()
            .with_context(|| format!("agent run: {k} needs a value"))?
            .clone();
        match k.as_str() {
            "--dir" => r.dir = PathBuf::from(v),
            "--run" => r.run = v,
            "--host" => r.host = v,
            "--start-at" => r.start_at = Some(v),
            "--offset" => r.offset = Some(v),
            "--rtt" => r.rtt = Some(v),
            _ => bail!("agent run: unknown option {k}"),
        }
    }
    if r.dir.as_os_str().is_empty() || r.run.is_empty() || r.host.is_empty() || r.command.is_empty()
    {
        bail!("agent run needs --dir, --run, --host and a command");
    }
    Ok(r)
}

/// A pipe, both ends close-on-exec.
fn pipe() -> Result<(std::fs::File, std::fs::File)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("agent: pipe");
    }
    // SAFETY: both descriptors are new and owned by nothing else.
    Ok(unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    })
}

/// `--clock`'s exchange: each empty line on stdin is answered with this host's clock until
/// `clock OFFSET RTT`, which is returned. `None`: stdin ended first (the controller stopped).
fn clock_exchange() -> Result<Option<(String, String)>> {
    let mut stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    let mut line = String::new();
    loop {
        line.clear();
        if stdin.read_line(&mut line).unwrap_or(0) == 0 {
            return Ok(None);
        }
        let l = line.trim_end();
        if l.is_empty() {
            writeln!(out, "{}", gate::now_ns()).and_then(|_| out.flush())?;
            continue;
        }
        let mut words = l.split(' ');
        match (words.next(), words.next(), words.next(), words.next()) {
            (Some("clock"), Some(o), Some(r), None)
                if o.parse::<i64>().is_ok() && r.parse::<i64>().is_ok() =>
            {
                return Ok(Some((o.to_string(), r.to_string())));
            }
            _ => bail!("agent run --clock: {l:?} is not a clock sample or `clock OFFSET RTT`"),
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode> {
    let mut a = parse(args)?;
    if a.clock {
        match clock_exchange()? {
            Some((offset, rtt)) => {
                a.offset = Some(offset);
                a.rtt = Some(rtt);
            }
            // Stopped before it began: nothing ran, nothing to send back.
            None => return Ok(ExitCode::from(130)),
        }
    }
    std::fs::create_dir_all(&a.dir)
        .with_context(|| format!("agent: cannot make {}", a.dir.display()))?;
    let store = a.dir.join("results.db");
    let me = std::env::current_exe().context("agent: where is this binary?")?;
    let mut cmd = Command::new(me);
    cmd.args(&a.command)
        .env("HOSTBENCH_RESULTS_DB", &store)
        .env_remove(hostbench_store::ENV_NO_SAVE)
        .env(gate::ENV_RUN, &a.run)
        .env(gate::ENV_HOST, &a.host)
        .stdin(Stdio::null())
        // The command's report goes to stderr: stdout carries the results document.
        .stdout(Stdio::from(std::io::stderr().as_fd().try_clone_to_owned()?))
        .stderr(Stdio::inherit());
    for (var, v) in [
        (gate::ENV_START_AT, &a.start_at),
        (gate::ENV_OFFSET, &a.offset),
        (gate::ENV_RTT, &a.rtt),
    ] {
        match v {
            Some(v) => cmd.env(var, v),
            None => cmd.env_remove(var),
        };
    }
    // The barrier's two pipes: the command's ends stay open across exec, ours do not.
    let (ready_r, ready_w) = pipe()?;
    let (go_r, go_w) = pipe()?;
    let barrier = a.start_at.is_none();
    if barrier {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let (w, r) = (ready_w.as_raw_fd(), go_r.as_raw_fd());
        cmd.env(gate::ENV_READY_FD, w.to_string())
            .env(gate::ENV_GO_FD, r.to_string());
        // SAFETY: fcntl is async-signal-safe; it only clears close-on-exec on two
        // descriptors this process owns.
        unsafe {
            cmd.pre_exec(move || {
                for fd in [w, r] {
                    if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    } else {
        cmd.env_remove(gate::ENV_READY_FD)
            .env_remove(gate::ENV_GO_FD);
    }
    let mut child = cmd.spawn().context("agent: cannot start the command")?;
    drop(ready_w);
    drop(go_r);
    let pid = child.id() as libc::pid_t;
    // `ready` from the command becomes `@ready` on stdout.
    let relay = std::thread::spawn(move || {
        for line in std::io::BufReader::new(ready_r).lines() {
            match line {
                Ok(l) if l == "ready" => {
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(b"@ready\n").and_then(|_| out.flush());
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    });
    // `go NS` on stdin goes to the command; stdin closing is the controller's stop:
    // Ctrl-C for the command.
    std::thread::spawn(move || {
        let mut go = Some(go_w);
        let mut line = String::new();
        let mut stdin = std::io::stdin().lock();
        loop {
            line.clear();
            match stdin.read_line(&mut line) {
                Ok(n) if n > 0 => {
                    if line.starts_with("go ")
                        && let Some(mut w) = go.take()
                    {
                        let _ = w.write_all(line.as_bytes());
                    }
                }
                _ => break,
            }
        }
        // SAFETY: signalling our own child, which we have not reaped yet (the main thread
        // reaps it; a pid reused after that would need this thread to run after exit).
        unsafe { libc::kill(pid, libc::SIGINT) };
        drop(go);
    });
    let status = child.wait().context("agent: waiting for the command")?;
    let _ = relay.join();
    let runs = match hostbench_store::Store::open_existing(&hostbench_store::Location::Sqlite(
        store.clone(),
    )) {
        Ok(Some(mut s)) => s.load(&hostbench_store::Filter::default())?,
        Ok(None) => Vec::new(),
        Err(e) => return Err(e).context("agent: reading the run's results"),
    };
    let doc = hostbench_store::export_document(&runs);
    let _ = std::fs::remove_dir_all(&a.dir);
    // The fleet run's directory, once its last host's is gone (the same host named twice
    // shares it).
    if let Some(parent) = a.dir.parent() {
        let _ = std::fs::remove_dir(parent);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(doc.as_bytes())?;
    out.flush()?;
    Ok(match (status.code(), status.signal()) {
        (Some(c), _) => ExitCode::from(c.clamp(0, 255) as u8),
        (None, Some(sig)) => ExitCode::from((128 + sig).clamp(0, 255) as u8),
        _ => ExitCode::from(1),
    })
}
