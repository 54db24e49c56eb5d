//! `hostbench fleet HOSTS -- COMMAND...`: the same hostbench command on many hosts over the
//! system's OpenSSH client, started at one wall-clock instant, with every host's results
//! brought back over the ssh channel and saved in one store (docs/fleet.md).
//!
//! Per host, in a thread of its own (at most `--parallel` hosts at once, a wave each):
//! 1. connect (one master connection) and look for the binary in the host's cache
//!    (`${XDG_CACHE_HOME:-~/.cache}/hostbench/bin/SHA256/hostbench`); copy it there when it
//!    is missing, checked by SHA-256 on the host before it is moved into place;
//! 2. copy the files the command names (job files, suite files) into a run directory;
//! 3. measure the host's clock offset over ssh ([`agent`]'s `clock`): the sample with the
//!    shortest round trip, offset = remote − (send + rtt/2);
//! 4. start `agent run`: the command sets itself up (workload setup, host fingerprint) and
//!    says `@ready` just before its runner would start ([`gate`]). When every host of the
//!    wave is ready (or failed), the controller picks an instant a little ahead (enough
//!    for one line to reach every host) and sends each host `go` with the instant in its
//!    own clock (the instant plus its offset); the command waits for it and starts;
//! 5. collect the export document the agent prints, and save each run with the fleet run
//!    id, the host's name and the label.
//!
//! A host that fails at any step is reported with the tail of its stderr while the others
//! go on. Ctrl-C closes each running host's stdin: the agent stops the command, which ends
//! as interrupted and sends its partial results.

pub mod agent;
pub mod fioclient;
pub mod gate;
mod hosts;
mod load;
mod progress;
mod report;
mod split;
mod ssh;

use crate::results::StoreArg;
use anyhow::{Context, Result, bail};
use clap::Parser;
use hosts::Target;
use sha2::Digest;
use ssh::{Input, Ssh, Stop};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

/// Run hostbench on many hosts over ssh, started together, results saved here.
///
/// HOSTS is a comma list (web1,root@10.0.0.7:2222) or @FILE (one host a line, # comments);
/// or give -i INVENTORY:GROUP (an Ansible INI inventory). Everything after -- is the
/// hostbench command line each host runs, e.g.
/// `hostbench fleet @nodes.txt --label qual -- cpu --cpu-max-prime=20000 --time=30 run`.
/// Files the command names (job files, suite files) are copied to each host with the
/// binary. Exit 0 when every host succeeded, 1 when one failed, 130 on Ctrl-C.
#[derive(Debug, Parser)]
#[command(
    name = "hostbench fleet",
    version,
    override_usage = "hostbench fleet [OPTIONS] HOSTS|-i INVENTORY:GROUP -- COMMAND...\n       \
                      hostbench fleet report RUN_ID [-f text|markdown|csv|json|html] [-o FILE] [--fail-below PCT] [--baseline LABEL]"
)]
struct FleetArgs {
    /// The hosts: a comma list or @FILE.
    #[arg(value_name = "HOSTS")]
    hosts: Option<String>,
    /// An Ansible INI inventory and group (`all` for every host).
    #[arg(short = 'i', long = "inventory", value_name = "FILE:GROUP")]
    inventory: Option<String>,
    /// ssh's configuration file (`ssh -F`), instead of ~/.ssh/config.
    #[arg(short = 'F', long = "ssh-config", value_name = "FILE")]
    ssh_config: Option<PathBuf>,
    /// Hosts worked on at once; more hosts run in waves of this many, each wave started
    /// together.
    #[arg(long, default_value_t = 64, value_name = "N")]
    parallel: usize,
    /// Time each host gets for everything (copy, run, results); a host past it is stopped
    /// and reported as failed (e.g. 10m; default: no limit).
    #[arg(long, value_name = "DURATION", value_parser = crate::native::seconds)]
    timeout: Option<f64>,
    /// ssh's connection timeout.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = crate::native::seconds)]
    connect_timeout: f64,
    /// The binary to deploy (a static build for the hosts' architecture); default: this one.
    #[arg(long, value_name = "PATH")]
    binary: Option<PathBuf>,
    /// How far ahead of the moment every host's command is set up the common start is
    /// (default: 200 ms + 4 × the slowest round trip + 0.5 ms a host, at most 5 s).
    #[arg(long, value_name = "DURATION", value_parser = crate::native::seconds)]
    start_delay: Option<f64>,
    /// Remove what was deployed (the binary, the run's files) from each host at the end;
    /// by default the binary stays in the host's cache for the next fleet.
    #[arg(long)]
    clean: bool,
    /// The label every host's runs are saved under.
    #[arg(long, value_name = "NAME")]
    label: Option<String>,
    #[command(flatten)]
    store: StoreArg,
}

/// Largest file the command names that is copied along.
const CARRY_MAX: u64 = 64 << 20;
/// Largest results document read back from one host.
const RESULTS_MAX: usize = 256 << 20;
/// Clock samples per host.
const CLOCK_SAMPLES: usize = 16;
/// Clock offsets (and start skews) above this are warned about.
const SKEW_WARN_NS: i64 = 10_000_000;

/// `hostbench fleet ...` (`argv[1]` is `fleet`).
pub fn main(argv: &[String]) -> Result<ExitCode> {
    let rest = &argv[2.min(argv.len())..];
    if rest.first().is_some_and(|w| w == "agent") {
        return agent::main(&rest[1..]);
    }
    // `fleet report RUN_ID`; a host named `report` is written `report,` or `user@report`.
    if rest.first().is_some_and(|w| w == "report") {
        return report::main(&rest[1..]);
    }
    let (ours, command) = match rest.iter().position(|a| a == "--") {
        Some(i) => (&rest[..i], rest[i + 1..].to_vec()),
        None => (rest, Vec::new()),
    };
    run(ours.to_vec(), command, None)
}

/// A fleet run: `ours` the fleet's options (and HOSTS), `command` the command after `--`;
/// or, with `clients`, fio's client mode (its hosts and commands instead).
fn run(
    ours: Vec<String>,
    command: Vec<String>,
    clients: Option<fioclient::FioClients>,
) -> Result<ExitCode> {
    let parsed = crate::frontend::clap_parse::<FleetArgs>(
        "fleet",
        std::iter::once("hostbench fleet".to_string()).chain(ours.iter().cloned()),
    )?;
    let Some(mut args) = parsed else {
        return Ok(ExitCode::SUCCESS);
    };
    let command = match &clients {
        Some(c) => c.command(),
        None => command,
    };
    if command.is_empty() {
        bail!(
            "fleet: give the hostbench command each host runs after --, e.g. \
             hostbench fleet web1,web2 -- cpu --time=10 run"
        );
    }
    if command[0] == "fleet" {
        bail!("fleet: the command after -- cannot be another fleet");
    }
    if let Some(a) = command
        .iter()
        .find(|a| a.starts_with("--results-db") || a.starts_with("--no-save"))
    {
        bail!(
            "fleet: {a} in the command after -- is the fleet's business: every host's runs come \
             back here; give --results-db before -- instead"
        );
    }
    let saving =
        crate::exec::SaveOptions::new(args.label.clone(), false, args.store.results_db.clone())?;
    let targets = match (&args.hosts, &args.inventory) {
        _ if clients.is_some() => {
            let t = clients.as_ref().expect("clients").targets()?;
            // fio's clients all run at once.
            args.parallel = t.len();
            t
        }
        (Some(h), None) => hosts::from_arg(h)?,
        (None, Some(i)) => hosts::from_inventory(i)?,
        (Some(_), Some(_)) => bail!("fleet: give HOSTS or -i INVENTORY:GROUP, not both"),
        (None, None) => {
            bail!("fleet: which hosts? give a comma list (web1,web2), @FILE or -i INVENTORY:GROUP")
        }
    };
    if args.parallel == 0 {
        bail!("fleet: --parallel must be at least 1");
    }
    if split::is_load(&command) && targets.len() > args.parallel {
        bail!(
            "fleet: a distributed load runs on every host at once: --parallel {} is fewer than \
             the {} hosts (give --parallel {} or more)",
            args.parallel,
            targets.len(),
            targets.len()
        );
    }
    if let Some(f) = &args.ssh_config
        && !f.is_file()
    {
        bail!("fleet: --ssh-config {} is not a file", f.display());
    }
    let binary = match &args.binary {
        Some(p) => p.clone(),
        None => {
            std::env::current_exe().context("fleet: where is this binary? give --binary PATH")?
        }
    };
    check_binary(&binary)?;
    let sha = sha256_file(&binary)?;
    let user_command = command.clone();
    let (command, carried) = carried_files(&command)?;
    let names: Vec<String> = targets.iter().map(|t| t.name.clone()).collect();
    let per_host = match &clients {
        Some(c) => Some(c.per_host(&command)),
        None => split::split(&command, &names)?,
    };
    if let Some(p) = per_host.as_ref().filter(|_| clients.is_none()) {
        for (t, c) in targets.iter().zip(p) {
            let shown: Vec<String> = c.iter().map(|w| remote_word(w, "…")).collect();
            eprintln!("fleet: {}: its share: {}", t.name, shown.join(" "));
        }
    }
    let location = hostbench_store::Location::resolve(saving.results_db.as_deref())?;
    let control_dir = private_temp_dir()?;
    let run_id = new_run_id();
    let ctx = Ctx {
        ssh: Ssh {
            config: args.ssh_config.clone(),
            control_dir: control_dir.clone(),
            connect_timeout_s: args.connect_timeout.ceil().max(1.0) as u64,
        },
        size: std::fs::metadata(&binary).map(|m| m.len()).unwrap_or(0),
        binary,
        sha,
        command,
        carried,
        run_id: run_id.clone(),
        timeout: args
            .timeout
            .filter(|t| *t > 0.0)
            .map(Duration::from_secs_f64),
        start_delay: args.start_delay.map(Duration::from_secs_f64),
        clean: args.clean,
        saver: Saver {
            location: location.clone(),
            label: args.label.clone(),
            run_id: run_id.clone(),
            store: Mutex::new(None),
            saved: Default::default(),
            error: Mutex::new(None),
            kept: (per_host.is_some() || clients.is_some()).then(|| Mutex::new(Vec::new())),
        },
        per_host,
        progress: Arc::new(progress::Progress::new(&names)),
    };
    eprintln!(
        "fleet {run_id}: {} host{} ({} at once)",
        targets.len(),
        if targets.len() == 1 { "" } else { "s" },
        args.parallel.min(targets.len())
    );
    let t0 = Instant::now();
    {
        let p = ctx.progress.clone();
        std::thread::spawn(move || p.tick());
    }
    let mut outcomes = Vec::new();
    for (w, wave) in targets.chunks(args.parallel).enumerate() {
        if hostbench_core::runner::INTERRUPT.load(Ordering::SeqCst) {
            for t in wave {
                outcomes.push(Outcome::failed(
                    t,
                    "not started (interrupted)",
                    String::new(),
                ));
            }
            continue;
        }
        outcomes.extend(run_wave(&ctx, wave, w * args.parallel));
    }
    let ran = t0.elapsed();
    ctx.progress.finish();
    ctx.ssh.close_all(&targets);
    let _ = std::fs::remove_dir_all(&control_dir);
    let merged = match &ctx.saver.kept {
        Some(kept) => {
            let kept = std::mem::take(&mut *kept.lock().unwrap_or_else(|e| e.into_inner()));
            if clients.is_some() {
                fioclient::show(&targets, &kept)
            } else {
                load::merge_and_show(&ctx.saver, &user_command, kept, &outcomes)
            }
        }
        None => Ok(()),
    };
    if let Err(e) = &merged {
        if clients.is_some() {
            eprintln!("WARNING: fio --client: no report: {e:#}");
        } else {
            eprintln!("WARNING: the hosts' load was not merged: {e:#}");
        }
    }
    ctx.saver.roster(&outcomes);
    let saved = match ctx
        .saver
        .error
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        Some(e) => Err(anyhow::anyhow!(e)),
        None => Ok(ctx.saver.saved.load(Ordering::SeqCst)),
    };
    eprintln!(
        "fleet {run_id}: hosts done and saved after {:.2} s, ended after {:.2} s",
        ran.as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
    // fio's client mode: stdout is fio's report alone (its JSON parses).
    let code = summary(&run_id, &outcomes, saved, &location, clients.is_some())?;
    Ok(if merged.is_err() && code == ExitCode::SUCCESS {
        ExitCode::from(1)
    } else {
        code
    })
}

/// What every host's thread reads.
struct Ctx {
    ssh: Ssh,
    binary: PathBuf,
    sha: String,
    /// The binary's size, bytes.
    size: u64,
    /// The command, with carried files' words replaced by `\0NAME` markers (see
    /// [`carried_files`]).
    command: Vec<String>,
    carried: Vec<PathBuf>,
    run_id: String,
    timeout: Option<Duration>,
    start_delay: Option<Duration>,
    /// `--clean`.
    clean: bool,
    saver: Saver,
    /// A distributed load: each host's own command (its share of the load), by the
    /// host's index ([`split`]).
    per_host: Option<Vec<Vec<String>>>,
    /// What each host is doing, on stderr.
    progress: Arc<progress::Progress>,
}

/// How one host did.
struct Outcome {
    name: String,
    /// Runs brought back.
    runs: Vec<hostbench_store::StoredRun>,
    /// Why it failed, when it did.
    failure: Option<String>,
    /// The last lines of its stderr, for a failure.
    tail: String,
    deployed: Option<&'static str>,
    offset_ns: Option<i64>,
    rtt_ns: Option<i64>,
    interrupted: bool,
    /// The host's `…/hostbench` cache directory, once known.
    base: Option<String>,
    /// Runs brought back (once [`Saver::take`] has them).
    run_count: usize,
    /// How late its first run started, ns.
    late_ns: Option<i64>,
}

impl Outcome {
    fn failed(t: &Target, why: &str, tail: String) -> Outcome {
        Outcome {
            name: t.name.clone(),
            runs: Vec::new(),
            failure: Some(why.to_string()),
            tail,
            deployed: None,
            offset_ns: None,
            rtt_ns: None,
            interrupted: false,
            base: None,
            run_count: 0,
            late_ns: None,
        }
    }
}

/// `--binary`'s file is a Linux program: a regular file with an ELF header of an
/// executable or a position-independent one (checked before anything is copied).
fn check_binary(p: &Path) -> Result<()> {
    use std::io::Read;
    let shown = p.display();
    let m =
        std::fs::metadata(p).with_context(|| format!("fleet: --binary {shown}: cannot read it"))?;
    if !m.is_file() {
        bail!(
            "fleet: --binary {shown} is not a regular file: give the hostbench program to deploy"
        );
    }
    let mut head = [0u8; 18];
    let n = std::fs::File::open(p)
        .and_then(|mut f| f.read(&mut head))
        .with_context(|| format!("fleet: --binary {shown}: cannot read it"))?;
    // e_ident: magic, class, data (byte order); e_type at 16: 2 executable, 3 shared (PIE).
    let e_type = match head[5] {
        1 => u16::from_le_bytes([head[16], head[17]]),
        _ => u16::from_be_bytes([head[16], head[17]]),
    };
    if n < head.len() || &head[..4] != b"\x7fELF" || !matches!(e_type, 2 | 3) {
        bail!(
            "fleet: --binary {shown} is not a Linux executable (no ELF program header): give a \
             hostbench built for the hosts, e.g. target/x86_64-unknown-linux-musl/release/hostbench"
        );
    }
    Ok(())
}

fn sha256_file(p: &Path) -> Result<String> {
    let meta = std::fs::metadata(p).with_context(|| format!("fleet: binary {}", p.display()))?;
    if !meta.is_file() {
        bail!("fleet: binary {} is not a regular file", p.display());
    }
    let mut f = std::fs::File::open(p).with_context(|| format!("fleet: binary {}", p.display()))?;
    let mut h = sha2::Sha256::new();
    std::io::copy(&mut f, &mut h).with_context(|| format!("fleet: reading {}", p.display()))?;
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The words of `command` that name local files to copy along: an existing regular file
/// whose name has a `/` or a `.` (`jobs.fio`, `./suite.toml`, a sysbench script
/// `./my.lua` as the first word; not `run`, which is a command word even where a file of
/// that name exists), as a word or as the value of `--option=VALUE` (`--test=./my.lua`).
/// Returns the command with each such file replaced by a marker (`\0NAME`, NAME its name
/// on the host: [`carried_name`]) and the files.
fn carried_files(command: &[String]) -> Result<(Vec<String>, Vec<PathBuf>)> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    for w in command {
        let (prefix, value) = match w.split_once('=') {
            Some((k, v)) if w.starts_with('-') => (format!("{k}="), v),
            _ => (String::new(), w.as_str()),
        };
        let p = Path::new(value);
        let looks_like_file = value.contains('/') || value.contains('.');
        match std::fs::metadata(p) {
            Ok(m) if looks_like_file && m.is_file() => {
                if m.len() > CARRY_MAX {
                    bail!(
                        "fleet: {value} is larger than {} MiB; put it on the hosts yourself and \
                         name it by its path there",
                        CARRY_MAX >> 20
                    );
                }
                out.push(format!("{prefix}\0{}", carried_name(files.len(), p)));
                files.push(p.to_path_buf());
            }
            _ => out.push(w.clone()),
        }
    }
    Ok((out, files))
}

/// The name the `n`-th carried file has in the run's `files/` directory on a host: `n`,
/// with the file's extension when it is a plain one (`0.lua`, `1.fio`), since a command
/// may tell a file's kind by it (a sysbench script by `.lua`).
fn carried_name(n: usize, p: &Path) -> String {
    match p.extension().and_then(|e| e.to_str()) {
        Some(e)
            if !e.is_empty() && e.len() <= 16 && e.bytes().all(|b| b.is_ascii_alphanumeric()) =>
        {
            format!("{n}.{e}")
        }
        _ => n.to_string(),
    }
}

/// A directory only we can use, for the ssh master sockets.
fn private_temp_dir() -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    // The sockets' path must fit a Unix socket's name (108 bytes): a long TMPDIR is not
    // used.
    let base = Some(std::env::temp_dir())
        .filter(|d| d.as_os_str().len() <= 64)
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    for _ in 0..16 {
        let d = base.join(format!(
            "hostbench-fleet-{}-{:08x}",
            std::process::id(),
            hostbench_core::rand::time_seed() as u32
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&d) {
            Ok(()) => return Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("fleet: cannot make {}", d.display())),
        }
    }
    bail!(
        "fleet: cannot make a temporary directory in {}",
        base.display()
    )
}

/// `YYYYMMDD-HHMMSS-xxxx` (UTC).
fn new_run_id() -> String {
    let now = gate::now_ns() as f64 / 1e9;
    let t = hostbench_core::civil::rfc3339_utc(now);
    let compact: String = t.chars().filter(char::is_ascii_digit).take(14).collect();
    format!(
        "{}-{}-{:04x}",
        &compact[..8.min(compact.len())],
        &compact[8.min(compact.len())..],
        hostbench_core::rand::time_seed() as u16
    )
}

/// What a host's thread tells the controller before the start.
enum Ready {
    /// The command is set up; `rtt` is the host's round trip over ssh.
    Ready {
        rtt: Duration,
    },
    Failed,
}

/// The common start, once chosen: `Some(ns)` (controller clock) or `None` (do not start).
type Start = Arc<(Mutex<Option<Option<i64>>>, Condvar)>;

fn run_wave(ctx: &Ctx, wave: &[Target], first: usize) -> Vec<Outcome> {
    let (tx, rx) = mpsc::channel::<Ready>();
    let start: Start = Arc::new((Mutex::new(None), Condvar::new()));
    let wave_t0 = Instant::now();
    std::thread::scope(|s| {
        let handles: Vec<_> = wave
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let tx = tx.clone();
                let start = start.clone();
                s.spawn(move || host(ctx, t, first + i, tx, start))
            })
            .collect();
        drop(tx);
        // Every host ready (or failed): pick the instant.
        let mut slowest = Duration::ZERO;
        let mut ready = 0;
        let mut reports = 0;
        while reports < wave.len() {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(Ready::Ready { rtt }) => {
                    reports += 1;
                    ready += 1;
                    slowest = slowest.max(rtt);
                }
                Ok(Ready::Failed) => reports += 1,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if hostbench_core::runner::INTERRUPT.load(Ordering::SeqCst) {
                        break;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let go = if hostbench_core::runner::INTERRUPT.load(Ordering::SeqCst) || ready == 0 {
            None
        } else {
            // Every command is set up and waiting: the start only has to reach them, one
            // line over each host's open ssh session.
            let delay = ctx.start_delay.unwrap_or(
                (Duration::from_millis(200)
                    + slowest * 4
                    + Duration::from_micros(500) * ready as u32)
                    .min(Duration::from_secs(5)),
            );
            let at = gate::now_ns() + delay.as_nanos() as i64;
            ctx.progress.note(&format!(
                "fleet {}: {ready} host{} ready after {:.2} s; start at {} (in {:.2} s)",
                ctx.run_id,
                if ready == 1 { "" } else { "s" },
                wave_t0.elapsed().as_secs_f64(),
                hostbench_core::civil::rfc3339_utc(at as f64 / 1e9),
                delay.as_secs_f64()
            ));
            Some(at)
        };
        {
            let (m, c) = &*start;
            *m.lock().unwrap_or_else(|e| e.into_inner()) = Some(go);
            c.notify_all();
        }
        handles
            .into_iter()
            .zip(wave)
            .map(|(h, t)| {
                h.join().unwrap_or_else(|_| {
                    Outcome::failed(t, "internal error (thread panicked)", String::new())
                })
            })
            .collect()
    })
}

/// Why an ssh command failed, in words: ssh's own failures (exit 255) by their message.
fn ssh_failure(step: &str, out: &ssh::Output) -> String {
    let tail = String::from_utf8_lossy(&out.stderr_tail).to_lowercase();
    match (out.stopped, out.status.and_then(|s| s.code())) {
        (Some(Stop::Timeout), _) => format!("timed out ({step})"),
        (Some(Stop::Interrupt), _) => format!("interrupted ({step})"),
        (None, Some(255)) if tail.contains("permission denied") => {
            format!("authentication failed ({step})")
        }
        (None, Some(255)) if tail.contains("host key verification failed") => {
            format!("host key not trusted ({step})")
        }
        (None, Some(255)) => format!("unreachable ({step})"),
        (None, Some(c)) => format!("exit {c} ({step})"),
        (None, None) => format!("killed ({step})"),
    }
}

fn ok(out: &ssh::Output) -> bool {
    out.stopped.is_none() && out.status.is_some_and(|s| s.success())
}

/// One host, start to end.
fn host(ctx: &Ctx, t: &Target, index: usize, ready: mpsc::Sender<Ready>, start: Start) -> Outcome {
    let mut o = host_run(ctx, t, index, ready, start);
    ctx.saver.take(&mut o);
    if ctx.clean
        && let Some(base) = &o.base
    {
        // What this fleet put there: the binary and this run's directory (the agent
        // removes the latter itself when the run gets that far).
        // Then the cache's `bin` and `runs` when that left them empty (rmdir removes only
        // an empty directory, never a link), and nothing else.
        let rm = format!(
            "rm -rf -- {bin} {dir}; rmdir -- {run} 2>/dev/null; \
             rmdir -- {bins} {runs} 2>/dev/null; true",
            bin = ssh::quote(&format!("{base}/bin/{}", ctx.sha)),
            dir = ssh::quote(&format!("{base}/runs/{}/{index}", ctx.run_id)),
            run = ssh::quote(&format!("{base}/runs/{}", ctx.run_id)),
            bins = ssh::quote(&format!("{base}/bin")),
            runs = ssh::quote(&format!("{base}/runs")),
        );
        match ssh::run(ctx.ssh.command(t, &rm), None, None) {
            Ok(out) if ok(&out) => ctx
                .progress
                .note(&format!("fleet: {}: removed what was deployed", t.name)),
            Ok(out) => ctx.progress.note(&format!(
                "WARNING: {}: what was deployed could not be removed: {}",
                t.name,
                ssh::last_lines(&out.stderr_tail, 1)
            )),
            Err(e) => ctx
                .progress
                .note(&format!("WARNING: {}: ssh cannot start: {e}", t.name)),
        }
    }
    o
}

fn host_run(
    ctx: &Ctx,
    t: &Target,
    index: usize,
    ready: mpsc::Sender<Ready>,
    start: Start,
) -> Outcome {
    let deadline = ctx.timeout.map(|d| Instant::now() + d);
    let mut o = Outcome::failed(t, "", String::new());
    o.failure = None;
    let fail = |mut o: Outcome, why: String, tail: &[u8]| {
        let _ = ready.send(Ready::Failed);
        o.failure = Some(why);
        o.tail = ssh::last_lines(tail, 5);
        ctx.progress.host(
            index,
            &format!("FAILED: {}", o.failure.as_deref().unwrap_or("")),
            false,
        );
        o
    };
    ctx.progress.host(index, "connecting", false);
    // Files the command names need the host's run directory before the command starts:
    // one session that finds the cache (and copies the binary there when it is missing),
    // then one per file.
    if !ctx.carried.is_empty()
        && let Err((why, tail)) = prepare(ctx, t, index, deadline, &mut o)
    {
        return fail(o, why, &tail);
    }
    // The run's session: the binary is looked for in the cache, and when it is there the
    // same session measures the clock, sets the command up and runs it. A host whose
    // cache lacks it costs one more session (the copy) and this one again.
    let mut session = None;
    for attempt in 0..2 {
        match start_session(ctx, t, index, deadline, &mut o) {
            Ok(Some(s)) => {
                session = Some(s);
                break;
            }
            Ok(None) if attempt == 0 => {
                if let Err((why, tail)) = deploy(ctx, t, index, deadline, &mut o) {
                    return fail(o, why, &tail);
                }
            }
            Ok(None) => {
                return fail(
                    o,
                    "the binary copied into the host's cache is not found there".into(),
                    &[],
                );
            }
            Err((why, tail)) => return fail(o, why, &tail),
        }
    }
    let Some((mut running, lines)) = session else {
        return fail(o, "the run's session did not start".into(), &[]);
    };
    if o.deployed.is_none() {
        o.deployed = Some("cached");
    }
    let offset = o.offset_ns.unwrap_or(0);
    ctx.progress.host(
        index,
        &format!(
            "ready (binary {}, clock offset {:+.3} ms ± {:.3} ms)",
            o.deployed.unwrap_or("?"),
            offset as f64 / 1e6,
            o.rtt_ns.unwrap_or(0) as f64 / 2e6
        ),
        false,
    );
    // Ready when the command says so; not when it ends first, the host's time runs out or
    // Ctrl-C comes.
    let set_up = loop {
        match next_line(&lines, deadline) {
            Some(Line::Ready) => break true,
            Some(_) => {}
            None => break false,
        }
    };
    if set_up {
        let _ = ready.send(Ready::Ready {
            rtt: Duration::from_nanos(o.rtt_ns.unwrap_or(0).max(0) as u64),
        });
        let go = {
            let (m, c) = &*start;
            let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
            while g.is_none() {
                g = c.wait(g).unwrap_or_else(|e| e.into_inner());
            }
            g.expect("set")
        };
        match go {
            Some(at) => {
                running.send(&format!("go {}\n", at + offset));
                ctx.progress.host(index, "running", true);
            }
            None => running.close_stdin(),
        }
    } else {
        let _ = ready.send(Ready::Failed);
    }
    let out = running.wait(deadline, Duration::from_secs(60));
    o.interrupted = out.stopped == Some(Stop::Interrupt);
    // Whatever came back is kept, a failed or stopped run's partial results included.
    let text = String::from_utf8_lossy(&out.stdout);
    if !text.trim().is_empty() {
        match hostbench_store::parse_runs(&text, &format!("host {}", t.name)) {
            Ok(runs) => o.runs = runs,
            Err(e) => {
                o.failure = Some(format!("its results could not be read: {e}"));
                o.tail = ssh::last_lines(&out.stderr_tail, 5);
                ctx.progress.host(
                    index,
                    &format!("FAILED: its results could not be read: {e}"),
                    false,
                );
                return o;
            }
        }
    }
    let fail_late = |mut o: Outcome, why: String| {
        o.failure = Some(why);
        o.tail = ssh::last_lines(&out.stderr_tail, 5);
        ctx.progress.host(
            index,
            &format!("FAILED: {}", o.failure.as_deref().unwrap_or("")),
            false,
        );
        o
    };
    if !ok(&out) {
        let why = ssh_failure("run", &out);
        return fail_late(o, why);
    }
    if o.runs.is_empty() {
        return fail_late(o, "the command saved no run".into());
    }
    ctx.progress.host(
        index,
        &format!(
            "done, {} run{}",
            o.runs.len(),
            if o.runs.len() == 1 { "" } else { "s" }
        ),
        false,
    );
    o
}

/// A word of the command as the host sees it: carried files' markers become their path in
/// the host's run directory.
fn remote_word(w: &str, dir: &str) -> String {
    match w.split_once('\0') {
        Some((prefix, n)) => format!("{prefix}{dir}/files/{n}"),
        None => w.to_string(),
    }
}

/// The host's cache directory in `$b` (a POSIX shell fragment).
const CACHE_BASE: &str = "b=\"${XDG_CACHE_HOME:-$HOME/.cache}\"; \
     case \"$b\" in /*) ;; *) b=\"$HOME/.cache\";; esac; b=\"$b/hostbench\"; ";

/// A shell test that the cached binary `$f` is the one deployed: a regular file (not a
/// link) of the right size. The cache is content-addressed and a file gets there only by
/// a rename after its SHA-256 was checked on the host, in a directory only the user can
/// write: finding it with the right size is enough (hashing it again on every run cost
/// each host a read of the whole binary).
fn cached_test(size: u64) -> String {
    format!("[ -f \"$f\" ] && [ ! -L \"$f\" ] && [ \"$(wc -c < \"$f\")\" -eq {size} ]")
}

/// What the run's session says on stdout before the results document.
enum Line {
    /// `base DIR`: the host's cache directory.
    Base(String),
    /// The binary is not in the cache (and the session ends).
    Missing,
    /// The binary is in the cache (and the agent starts).
    Present,
    /// A clock sample: the host's wall clock (`remote`, Unix ns) and when its line was
    /// read here (`at`, this clock).
    Clock { at: i64, remote: i64 },
    /// `@ready`: the command is set up and waits for the start.
    Ready,
}

/// The run's session once the command is setting itself up, and what it says.
type Session = (ssh::Running, mpsc::Receiver<Line>);

/// The next line of the run's session; `None` when it ended (or said something else: the
/// results document), the host's time ran out or Ctrl-C came.
fn next_line(lines: &mpsc::Receiver<Line>, deadline: Option<Instant>) -> Option<Line> {
    loop {
        match lines.recv_timeout(Duration::from_millis(10)) {
            Ok(l) => return Some(l),
            Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if hostbench_core::runner::INTERRUPT.load(Ordering::SeqCst)
                    || deadline.is_some_and(|d| Instant::now() >= d)
                {
                    return None;
                }
            }
        }
    }
}

/// Starts the run's session: the binary looked for in the cache and, when it is there,
/// `agent run --clock`, whose clock is then measured (the sample with the shortest round
/// trip; offset = remote − (send + rtt/2)) and handed to it. `Ok(None)`: the binary is
/// missing (the session has ended). `Ok(Some)`: the command is setting itself up; its
/// `@ready` and results document follow.
fn start_session(
    ctx: &Ctx,
    t: &Target,
    index: usize,
    deadline: Option<Instant>,
    o: &mut Outcome,
) -> std::result::Result<Option<Session>, (String, Vec<u8>)> {
    let dir = o
        .base
        .as_ref()
        .map(|b| format!("{b}/runs/{}/{index}", ctx.run_id))
        .unwrap_or_default();
    let mut remote = format!(
        "{CACHE_BASE}f=\"$b/bin/{sha}/hostbench\"; d=\"$b/runs/\"{run}/{index}; \
         echo \"base $b\"; if {cached}; then echo present; exec \"$f\" fleet agent run --clock --dir \"$d\" \
         --run {run} --host {host} --",
        sha = ctx.sha,
        run = ssh::quote(&ctx.run_id),
        host = ssh::quote(&t.name),
        cached = cached_test(ctx.size),
    );
    let command = ctx
        .per_host
        .as_ref()
        .and_then(|c| c.get(index))
        .unwrap_or(&ctx.command);
    for w in command {
        remote.push(' ');
        remote.push_str(&ssh::quote(&remote_word(w, &dir)));
    }
    remote.push_str("; else echo missing; fi");
    let (tx, rx) = mpsc::channel::<Line>();
    let reader = move |out: std::process::ChildStdout| {
        let mut r = BufReader::new(out);
        let mut line = String::new();
        loop {
            line.clear();
            match r.read_line(&mut line) {
                Ok(n) if n > 0 => {
                    let at = gate::now_ns();
                    let l = line.trim_end();
                    let said = if let Some(b) = l.strip_prefix("base ") {
                        Line::Base(b.to_string())
                    } else if l == "missing" {
                        Line::Missing
                    } else if l == "present" {
                        Line::Present
                    } else if l == "@ready" {
                        Line::Ready
                    } else if let Ok(remote) = l.parse::<i64>() {
                        Line::Clock { at, remote }
                    } else {
                        break;
                    };
                    let _ = tx.send(said);
                }
                _ => return Vec::new(),
            }
        }
        drop(tx);
        let mut doc = line.clone().into_bytes();
        doc.extend(ssh::read_max(r, RESULTS_MAX));
        doc
    };
    let mut running = ssh::spawn_with(ctx.ssh.command(t, &remote), None, reader)
        .map_err(|e| (format!("ssh cannot start: {e}"), Vec::new()))?;
    let ended = |running: ssh::Running, step: &str| {
        let out = running.wait(deadline, Duration::ZERO);
        (ssh_failure(step, &out), out.stderr_tail)
    };
    match next_line(&rx, deadline) {
        Some(Line::Base(b)) => o.base = Some(b),
        _ => return Err(ended(running, "connect")),
    }
    match next_line(&rx, deadline) {
        Some(Line::Present) => {}
        Some(Line::Missing) => {
            let out = running.wait(deadline, Duration::ZERO);
            if !ok(&out) {
                return Err((ssh_failure("connect", &out), out.stderr_tail));
            }
            return Ok(None);
        }
        _ => return Err(ended(running, "connect")),
    }
    let mut best: Option<(i64, i64)> = None;
    for _ in 0..CLOCK_SAMPLES {
        let sent = gate::now_ns();
        if !running.send("\n") {
            break;
        }
        match next_line(&rx, deadline) {
            Some(Line::Clock { at, remote }) => {
                let rtt = at - sent;
                let offset = remote - (sent + rtt / 2);
                if best.is_none_or(|(_, r)| rtt < r) {
                    best = Some((offset, rtt));
                }
            }
            _ => break,
        }
    }
    let Some((offset, rtt)) = best else {
        let (why, tail) = ended(running, "clock");
        return Err((
            format!("the deployed binary did not answer (clock): {why}"),
            tail,
        ));
    };
    o.offset_ns = Some(offset);
    o.rtt_ns = Some(rtt);
    if !running.send(&format!("clock {offset} {rtt}\n")) {
        return Err(ended(running, "clock"));
    }
    Ok(Some((running, rx)))
}

/// Finds the host's cache (`o.base`), copies the binary there when it is missing
/// ([`deploy`]) and the files the command names into the run directory.
fn prepare(
    ctx: &Ctx,
    t: &Target,
    index: usize,
    deadline: Option<Instant>,
    o: &mut Outcome,
) -> std::result::Result<(), (String, Vec<u8>)> {
    let check = format!(
        "{CACHE_BASE}f=\"$b/bin/{sha}/hostbench\"; echo \"base $b\"; \
         if {cached}; then echo present; else echo missing; fi",
        sha = ctx.sha,
        cached = cached_test(ctx.size),
    );
    let out = ssh::run(ctx.ssh.command(t, &check), None, deadline)
        .map_err(|e| (format!("ssh cannot start: {e}"), Vec::new()))?;
    if !ok(&out) {
        return Err((ssh_failure("connect", &out), out.stderr_tail));
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let base = text
        .lines()
        .find_map(|l| l.strip_prefix("base "))
        .map(str::to_string)
        .ok_or_else(|| {
            (
                format!("the host's shell said {text:?}, not where its cache is"),
                Vec::new(),
            )
        })?;
    o.base = Some(base);
    if !text.lines().any(|l| l == "present") {
        deploy(ctx, t, index, deadline, o)?;
    }
    let dir = format!(
        "{}/runs/{}/{index}",
        o.base.as_deref().unwrap_or_default(),
        ctx.run_id
    );
    for (n, f) in ctx.carried.iter().enumerate() {
        let put = format!(
            "umask 077; mkdir -p {d}/files && cat > {d}/files/{name}",
            d = ssh::quote(&dir),
            name = carried_name(n, f)
        );
        let out = ssh::run(
            ctx.ssh.command(t, &put),
            Some(Input::File(f.clone())),
            deadline,
        )
        .map_err(|e| (format!("ssh cannot start: {e}"), Vec::new()))?;
        if !ok(&out) {
            return Err((
                ssh_failure(&format!("copying {}", f.display()), &out),
                out.stderr_tail,
            ));
        }
    }
    Ok(())
}

/// Copies the binary into the host's cache (`o.base`, known), checked by SHA-256 on the
/// host before it is moved into place.
fn deploy(
    ctx: &Ctx,
    t: &Target,
    index: usize,
    deadline: Option<Instant>,
    o: &mut Outcome,
) -> std::result::Result<(), (String, Vec<u8>)> {
    let Some(base) = o.base.clone() else {
        return Err(("the host's cache directory is not known".into(), Vec::new()));
    };
    ctx.progress.host(index, "copying the binary", false);
    let sha = &ctx.sha;
    let bin_dir = format!("{base}/bin/{sha}");
    let upload = format!(
        "set -e; umask 077; d={}; mkdir -p \"$d\"; t=\"$d/.upload.$$\"; cat > \"$t\"; \
         s=$(sha256sum < \"$t\" | cut -c1-64); if [ \"$s\" != {sha} ]; then rm -f \"$t\"; \
         echo \"SHA-256 mismatch after the copy: $s\" >&2; exit 3; fi; chmod 700 \"$t\"; \
         mv -f \"$t\" \"$d/hostbench\"; echo copied",
        ssh::quote(&bin_dir)
    );
    let out = ssh::run(
        ctx.ssh.command(t, &upload),
        Some(Input::File(ctx.binary.clone())),
        deadline,
    )
    .map_err(|e| (format!("ssh cannot start: {e}"), Vec::new()))?;
    if !ok(&out) || !String::from_utf8_lossy(&out.stdout).contains("copied") {
        return Err((ssh_failure("copying the binary", &out), out.stderr_tail));
    }
    o.deployed = Some("copied");
    Ok(())
}

/// Saves each host's runs as the host ends, so the controller holds one host's results at
/// a time, not the fleet's.
struct Saver {
    location: hostbench_store::Location,
    label: Option<String>,
    run_id: String,
    store: Mutex<Option<hostbench_store::Store>>,
    saved: std::sync::atomic::AtomicUsize,
    error: Mutex<Option<String>>,
    /// A distributed load's host results, kept for the merge (with the host's name).
    kept: Option<Mutex<Vec<hostbench_core::result::RunResult>>>,
}

impl Saver {
    /// Saves `o`'s runs with the fleet's identity (which wins over anything the host's
    /// environment said) and the label, then lets go of them.
    fn take(&self, o: &mut Outcome) {
        let runs = std::mem::take(&mut o.runs);
        o.run_count = runs.len();
        let mut results = Vec::new();
        for r in &runs {
            match r.result() {
                Ok(mut result) => {
                    let mut fleet =
                        result
                            .fleet
                            .take()
                            .unwrap_or(hostbench_core::result::FleetRef {
                                run: self.run_id.clone(),
                                host: o.name.clone(),
                                start_at_unix_ns: None,
                                start_late_ns: None,
                                clock_offset_ns: o.offset_ns,
                                clock_rtt_ns: o.rtt_ns,
                                parts: Vec::new(),
                            });
                    fleet.run = self.run_id.clone();
                    fleet.host = o.name.clone();
                    o.late_ns = o.late_ns.or(fleet.start_late_ns);
                    result.fleet = Some(fleet);
                    if let Some(l) = &self.label {
                        result.label = Some(l.clone());
                    }
                    results.push(result);
                }
                Err(e) => self.fail(format!("{}: {e}", o.name)),
            }
        }
        if results.is_empty() {
            return;
        }
        let mut store = self.store.lock().unwrap_or_else(|e| e.into_inner());
        if store.is_none() {
            match hostbench_store::Store::open(&self.location) {
                Ok(st) => *store = Some(st),
                Err(e) => return self.fail(e.to_string()),
            }
        }
        let st = store.as_mut().expect("opened");
        for r in &results {
            match st.save(r) {
                Ok(()) => {
                    self.saved.fetch_add(1, Ordering::SeqCst);
                }
                Err(e) => self.fail(format!("{}: {e}", o.name)),
            }
        }
        drop(store);
        if let Some(kept) = &self.kept {
            kept.lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(results);
        }
    }

    /// Saves one result the controller made (a merged load), with the label.
    fn save_one(&self, r: &mut hostbench_core::result::RunResult) -> Result<()> {
        if let Some(l) = &self.label {
            r.label = Some(l.clone());
        }
        let mut store = self.store.lock().unwrap_or_else(|e| e.into_inner());
        if store.is_none() {
            *store = Some(hostbench_store::Store::open(&self.location)?);
        }
        store.as_mut().expect("opened").save(r)?;
        self.saved.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// Records every host of the fleet run and how it ended (the store's `fleet_hosts`), so
    /// `fleet report` can name the hosts that brought back no run.
    fn roster(&self, outcomes: &[Outcome]) {
        let hosts: Vec<hostbench_store::FleetHost> = outcomes
            .iter()
            .enumerate()
            .map(|(i, o)| hostbench_store::FleetHost {
                host: o.name.clone(),
                position: i as i64,
                status: if o.interrupted {
                    "interrupted"
                } else if o.failure.is_some() {
                    "failed"
                } else {
                    "ok"
                }
                .to_string(),
                reason: o.failure.clone(),
                runs: o.run_count as i64,
            })
            .collect();
        let mut store = self.store.lock().unwrap_or_else(|e| e.into_inner());
        if store.is_none() {
            match hostbench_store::Store::open(&self.location) {
                Ok(st) => *store = Some(st),
                Err(e) => return self.fail(e.to_string()),
            }
        }
        if let Err(e) = store
            .as_mut()
            .expect("opened")
            .save_fleet_roster(&self.run_id, &hosts)
        {
            self.fail(format!("the fleet's hosts: {e}"));
        }
    }

    fn fail(&self, why: String) {
        self.error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(why);
    }
}

fn summary(
    run_id: &str,
    outcomes: &[Outcome],
    saved: Result<usize>,
    location: &hostbench_store::Location,
    on_stderr: bool,
) -> Result<ExitCode> {
    let mut text = format!("fleet run {run_id}\n");
    text.push_str(&format!(
        "{:<24} {:<8} {:>4} {:>14} {:>12}  {}\n",
        "host", "binary", "runs", "clock offset", "start late", "status"
    ));
    let mut lates = Vec::new();
    for o in outcomes {
        let late = o.late_ns;
        if let Some(l) = late {
            lates.push(l);
        }
        text.push_str(&format!(
            "{:<24} {:<8} {:>4} {:>14} {:>12}  {}\n",
            o.name,
            o.deployed.unwrap_or("-"),
            o.run_count,
            o.offset_ns
                .map_or("-".into(), |v| format!("{:+.3} ms", v as f64 / 1e6)),
            late.map_or("-".into(), |v| format!("{:.3} ms", v as f64 / 1e6)),
            match &o.failure {
                None => "ok".to_string(),
                Some(f) => format!("FAILED: {f}"),
            }
        ));
    }
    if lates.len() > 1 {
        let skew = lates.iter().max().unwrap_or(&0) - lates.iter().min().unwrap_or(&0);
        text.push_str(&format!(
            "start skew: {:.3} ms over {} hosts (from each host's recorded start)\n",
            skew as f64 / 1e6,
            lates.len()
        ));
        if skew > SKEW_WARN_NS {
            eprintln!(
                "WARNING: the hosts started {:.1} ms apart: more than {} ms (busy hosts, or a \
                 start delay too short for the command's setup: --start-delay)",
                skew as f64 / 1e6,
                SKEW_WARN_NS / 1_000_000
            );
        }
    }
    if on_stderr {
        eprint!("{text}");
    } else {
        crate::exec::out(&text);
    }
    for o in outcomes {
        if let Some(off) = o.offset_ns
            && off.abs() > SKEW_WARN_NS
        {
            eprintln!(
                "WARNING: {}'s clock is {:+.1} ms off this host's: the common start was \
                 corrected for it, but the times its results record are off by as much \
                 (is chrony/NTP running there?)",
                o.name,
                off as f64 / 1e6
            );
        }
        if o.failure.is_some() && !o.tail.is_empty() {
            eprintln!("fleet: {} stderr (last lines):", o.name);
            for l in o.tail.lines() {
                eprintln!("  {l}");
            }
        }
    }
    match saved {
        Ok(n) => eprintln!(
            "fleet {run_id}: {n} run{} saved in {location}",
            if n == 1 { "" } else { "s" }
        ),
        Err(e) => {
            eprintln!("WARNING: the fleet's results were not saved: {e:#}");
            return Ok(ExitCode::from(1));
        }
    }
    if outcomes.iter().any(|o| o.interrupted)
        || hostbench_core::runner::INTERRUPT.load(Ordering::SeqCst)
    {
        return Ok(crate::interrupted_exit());
    }
    Ok(if outcomes.iter().all(|o| o.failure.is_none()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_named_first_travels_with_its_extension() {
        let dir = std::env::temp_dir().join(format!("hb-carried-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lua = dir.join("my.lua");
        std::fs::write(&lua, "function event() end\n").unwrap();
        let words = |v: &[&str]| v.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let l = lua.to_str().unwrap();
        let (cmd, files) = carried_files(&words(&[l, "--time=1", "run"])).unwrap();
        assert_eq!(cmd, words(&["\u{0}0.lua", "--time=1", "run"]));
        assert_eq!(files, std::slice::from_ref(&lua));
        assert_eq!(remote_word(&cmd[0], "/d"), "/d/files/0.lua");
        let test = format!("--test={l}");
        let (cmd, files) = carried_files(&words(&[&test, "run"])).unwrap();
        assert_eq!(remote_word(&cmd[0], "/d"), "--test=/d/files/0.lua");
        assert_eq!(files.len(), 1);
        // A command word is not a file, even where one of that name exists.
        let (cmd, files) = carried_files(&words(&["cpu", "run"])).unwrap();
        assert_eq!((cmd, files.len()), (words(&["cpu", "run"]), 0));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
