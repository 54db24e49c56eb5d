//! The remote half of `hostbench fleet`: `hostbench fleet agent ...`, run over ssh by the
//! deployed binary. Not for people (hidden from help); its interface may change with the
//! binary, which is why the controller deploys its own.
//!
//! - `agent clock`: answers each line on stdin with this host's wall clock (Unix ns), so the
//!   controller can measure the offset over the ssh channel.
//! - `agent run --dir DIR --run ID --host NAME [--start-at NS] [--offset NS] [--rtt NS] --
//!   COMMAND...`: runs `hostbench COMMAND...` with the fleet settings in its environment
//!   ([`super::gate`]) and a results store of its own in DIR; its report goes to stderr.
//!   When stdin closes (the controller stopped the run: Ctrl-C, timeout, lost connection)
//!   the command gets SIGINT and ends as interrupted, keeping its partial results. Then the
//!   runs it saved go to stdout as one export document, and DIR is removed.

use super::gate;
use anyhow::{Context, Result, bail};
use std::io::{BufRead, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

/// `hostbench fleet agent ARGS`.
pub fn main(args: &[String]) -> Result<ExitCode> {
    match args.first().map(String::as_str) {
        Some("clock") => clock(),
        Some("run") => run(&args[1..]),
        _ => bail!("hostbench fleet agent is run by hostbench fleet over ssh: agent clock|run"),
    }
}

fn clock() -> Result<ExitCode> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        if line.is_err() {
            break;
        }
        if writeln!(out, "{}", gate::now_ns())
            .and_then(|_| out.flush())
            .is_err()
        {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

struct RunArgs {
    dir: PathBuf,
    run: String,
    host: String,
    start_at: Option<String>,
    offset: Option<String>,
    rtt: Option<String>,
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
        command,
    };
    let mut it = opts.iter();
    while let Some(k) = it.next() {
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

fn run(args: &[String]) -> Result<ExitCode> {
    let a = parse(args)?;
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
    let mut child = cmd.spawn().context("agent: cannot start the command")?;
    let pid = child.id() as libc::pid_t;
    // stdin closing is the controller's stop: Ctrl-C for the command.
    std::thread::spawn(move || {
        let mut sink = [0u8; 256];
        let mut stdin = std::io::stdin();
        while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
        // SAFETY: signalling our own child, which we have not reaped yet (the main thread
        // reaps it; a pid reused after that would need this thread to run after exit).
        unsafe { libc::kill(pid, libc::SIGINT) };
    });
    let status = child.wait().context("agent: waiting for the command")?;
    let runs = match hostbench_store::Store::open_existing(&hostbench_store::Location::Sqlite(
        store.clone(),
    )) {
        Ok(Some(mut s)) => s.load(&hostbench_store::Filter::default())?,
        Ok(None) => Vec::new(),
        Err(e) => return Err(e).context("agent: reading the run's results"),
    };
    let doc = hostbench_store::export_document(&runs);
    let _ = std::fs::remove_dir_all(&a.dir);
    let mut out = std::io::stdout().lock();
    out.write_all(doc.as_bytes())?;
    out.flush()?;
    Ok(match (status.code(), status.signal()) {
        (Some(c), _) => ExitCode::from(c.clamp(0, 255) as u8),
        (None, Some(sig)) => ExitCode::from((128 + sig).clamp(0, 255) as u8),
        _ => ExitCode::from(1),
    })
}
