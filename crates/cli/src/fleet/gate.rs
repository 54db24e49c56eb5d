//! The remote half of a fleet's common start, and a run's fleet identity: read from the
//! environment `hostbench fleet agent run` (or anything else that joins a fleet run: a
//! Kubernetes DaemonSet, a Slurm job, an Ansible play) gives the command it runs.
//!
//! `exec` calls [`from_env`] before a run and [`Gate::wait`] just before the runner starts
//! (after the workload's setup, the host fingerprint and the activity sample, whose time
//! differs from host to host), so the hosts' runners start at the same instant. Only the
//! first run of a process waits (a suite's later entries follow it as they come).

use anyhow::{Result, bail};
use hostbench_core::result::FleetRef;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The fleet run id a run belongs to.
pub const ENV_RUN: &str = "HOSTBENCH_FLEET_RUN";
/// The host's name as the user wrote it (default: the machine's host name).
pub const ENV_HOST: &str = "HOSTBENCH_FLEET_HOST";
/// The common start, Unix ns in this host's clock.
pub const ENV_START_AT: &str = "HOSTBENCH_FLEET_START_AT_NS";
/// This host's clock minus the controller's, ns.
pub const ENV_OFFSET: &str = "HOSTBENCH_FLEET_CLOCK_OFFSET_NS";
/// The round trip of the offset's sample, ns.
pub const ENV_RTT: &str = "HOSTBENCH_FLEET_CLOCK_RTT_NS";
/// A pipe (file descriptor) the run writes `ready` to once it is set up (the agent's).
pub const ENV_READY_FD: &str = "HOSTBENCH_FLEET_READY_FD";
/// A pipe the run then reads `go NS` from: the common start, Unix ns in this host's clock
/// (end of file: do not wait, the run is being stopped).
pub const ENV_GO_FD: &str = "HOSTBENCH_FLEET_GO_FD";

/// Longest fleet run id or host name.
const NAME_MAX: usize = 200;

static WAITED: AtomicBool = AtomicBool::new(false);

/// The fleet settings of this process's runs.
#[derive(Debug, Clone)]
pub struct Gate {
    run: String,
    host: Option<String>,
    start_at_ns: Option<i64>,
    offset_ns: Option<i64>,
    rtt_ns: Option<i64>,
    /// [`ENV_READY_FD`] and [`ENV_GO_FD`].
    pipes: Option<(i32, i32)>,
}

/// A file descriptor named by `var`: open, and not stdin, stdout or stderr.
fn fd(var: &str) -> Result<Option<i32>> {
    let Some(n) = number(var)? else {
        return Ok(None);
    };
    // SAFETY: F_GETFD only reads the descriptor's flags.
    if n < 3 || n > i64::from(i32::MAX) || unsafe { libc::fcntl(n as i32, libc::F_GETFD) } < 0 {
        bail!("{var}={n} is not an open pipe hostbench fleet agent made");
    }
    Ok(Some(n as i32))
}

/// True when `v` can be a fleet run id or a host's name: 1 to [`NAME_MAX`] characters,
/// ASCII letters, digits and `. _ - @ : [ ] % +` (a host as `user@host:port`, an IPv6
/// address as `[fe80::1%eth0]:22`), not starting with `-`. Nothing a shell, a file name or
/// a report would read otherwise (no space, `/`, `;`, quote or control character).
pub fn is_name(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= NAME_MAX
        && !v.starts_with('-')
        && v.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'.' | b'_' | b'-' | b'@' | b':' | b'[' | b']' | b'%' | b'+'
                )
        })
}

/// `v` when it [`is_name`]; else a usage error naming `var` (a variable or an option).
pub fn name(var: &str, v: String) -> Result<String> {
    if !is_name(&v) {
        bail!(
            "{var}={v:?} is not a name: give 1 to {NAME_MAX} of letters, digits and . _ - @ : \
             [ ] % + (not starting with -), e.g. {var}=qualify-2026-11"
        );
    }
    Ok(v)
}

fn number(var: &str) -> Result<Option<i64>> {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => match v.parse::<i64>() {
            Ok(n) => Ok(Some(n)),
            Err(_) => bail!("{var}={v:?} is not a whole number of nanoseconds"),
        },
        _ => Ok(None),
    }
}

/// `--fleet-run ID` and `--fleet-host NAME` from the command line ([`take_flags`]), which
/// win over [`ENV_RUN`] and [`ENV_HOST`].
static FLAGS: std::sync::OnceLock<(Option<String>, Option<String>)> = std::sync::OnceLock::new();

/// Takes `--fleet-run ID` and `--fleet-host NAME` (or `--fleet-run=ID`) out of any
/// command line, in any grammar (before a `--`): the same as [`ENV_RUN`] and [`ENV_HOST`]
/// for this process. Called once, before the grammars read `argv`.
pub fn take_flags(argv: &mut Vec<String>) -> Result<()> {
    let mut found: [Option<String>; 2] = [None, None];
    let names = ["--fleet-run", "--fleet-host"];
    let mut i = 1;
    while i < argv.len() {
        if argv[i] == "--" {
            break;
        }
        let hit = names.iter().enumerate().find_map(|(k, n)| {
            if argv[i] == *n {
                Some((k, None))
            } else {
                argv[i]
                    .strip_prefix(n)
                    .and_then(|v| v.strip_prefix('='))
                    .map(|v| (k, Some(v.to_string())))
            }
        });
        let Some((k, inline)) = hit else {
            i += 1;
            continue;
        };
        let flag = argv.remove(i);
        let v = match inline {
            Some(v) => v,
            None if i < argv.len() && !argv[i].starts_with('-') => argv.remove(i),
            None => bail!(
                "{} needs a value, e.g. {} qualify-2026-11",
                names[k],
                names[k]
            ),
        };
        let var = if k == 0 { ENV_RUN } else { ENV_HOST };
        found[k] = Some(name(var, v).map_err(|e| {
            anyhow::anyhow!(
                "{}",
                e.to_string()
                    .replace(var, flag.split('=').next().unwrap_or(""))
            )
        })?);
    }
    let [run, host] = found;
    if host.is_some() && run.is_none() && std::env::var(ENV_RUN).is_err() {
        bail!("--fleet-host names this host in a fleet run: give --fleet-run ID with it");
    }
    let _ = FLAGS.set((run, host));
    Ok(())
}

/// The fleet settings in the environment (or `--fleet-run`): `None` when neither says a
/// fleet run.
pub fn from_env() -> Result<Option<Gate>> {
    let flags = FLAGS.get().cloned().unwrap_or_default();
    let run = match (flags.0, std::env::var(ENV_RUN)) {
        (Some(r), _) => r,
        (None, Ok(v)) if !v.is_empty() => name(ENV_RUN, v)?,
        _ => return Ok(None),
    };
    let host = match (flags.1, std::env::var(ENV_HOST)) {
        (Some(h), _) => Some(h),
        (None, Ok(v)) if !v.is_empty() => Some(name(ENV_HOST, v)?),
        _ => None,
    };
    Ok(Some(Gate {
        run,
        host,
        start_at_ns: number(ENV_START_AT)?,
        offset_ns: number(ENV_OFFSET)?,
        rtt_ns: number(ENV_RTT)?,
        // Only the first run of the process waits; the pipes are closed after it.
        pipes: match if WAITED.load(Ordering::SeqCst) {
            (None, None)
        } else {
            (fd(ENV_READY_FD)?, fd(ENV_GO_FD)?)
        } {
            (Some(r), Some(g)) => Some((r, g)),
            (None, None) => None,
            _ => bail!("{ENV_READY_FD} and {ENV_GO_FD} go together"),
        },
    }))
}

/// Unix time now, ns.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// A run stopped (Ctrl-C, SIGTERM, the fleet's controller closing the session) while it
/// waited for the fleet's common start: it never started, so it has no result (a run of
/// no time would be no measurement) and does no work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeverStarted;

impl std::fmt::Display for NeverStarted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "stopped while waiting for the fleet's common start: the run never started, no \
             result was saved",
        )
    }
}

impl std::error::Error for NeverStarted {}

impl Gate {
    /// Waits for the common start (the first run of the process only) and returns how late
    /// it started, ns; `None` when there is nothing to wait for. Ctrl-C (or the controller
    /// stopping the run before its start) ends the wait with [`NeverStarted`].
    pub fn wait(&mut self) -> Result<Option<i64>, NeverStarted> {
        if WAITED.swap(true, Ordering::SeqCst) {
            return Ok(None);
        }
        if let Some((ready, go)) = self.pipes.take() {
            use std::io::{BufRead, Write};
            use std::os::fd::FromRawFd;
            // SAFETY: descriptors the agent opened for this and checked open in `from_env`;
            // taken once (`WAITED`), so each is owned and closed once.
            let mut ready = unsafe { std::fs::File::from_raw_fd(ready) };
            // SAFETY: as above.
            let go = unsafe { std::fs::File::from_raw_fd(go) };
            let _ = ready.write_all(b"ready\n");
            drop(ready);
            let mut line = String::new();
            let _ = std::io::BufReader::new(go).read_line(&mut line);
            match line.trim().strip_prefix("go ").map(str::parse::<i64>) {
                Some(Ok(at)) => self.start_at_ns = Some(at),
                // Stopped before the start.
                _ => return Err(NeverStarted),
            }
        }
        let Some(at) = self.start_at_ns else {
            return Ok(None);
        };
        loop {
            if hostbench_core::runner::INTERRUPT.load(Ordering::SeqCst) {
                return Err(NeverStarted);
            }
            let left = at - now_ns();
            if left <= 0 {
                break;
            }
            // Short sleeps, so Ctrl-C is seen; the last one ends at the instant.
            std::thread::sleep(Duration::from_nanos(left.min(50_000_000) as u64));
        }
        // A signal in the last sleep: not started either.
        if hostbench_core::runner::INTERRUPT.load(Ordering::SeqCst) {
            return Err(NeverStarted);
        }
        Ok(Some(now_ns() - at))
    }

    /// The run's fleet section: `late_ns` from [`Gate::wait`], `hostname` the machine's
    /// name, used when no host name was given.
    pub fn fleet_ref(&self, late_ns: Option<i64>, hostname: &str) -> FleetRef {
        let offset = self.offset_ns.unwrap_or(0);
        FleetRef {
            run: self.run.clone(),
            host: self.host.clone().unwrap_or_else(|| hostname.to_string()),
            start_at_unix_ns: late_ns.and(self.start_at_ns.map(|s| s - offset)),
            start_late_ns: late_ns,
            clock_offset_ns: self.offset_ns,
            clock_rtt_ns: self.rtt_ns,
            parts: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_letters_digits_and_the_punctuation_of_host_addresses() {
        for ok in [
            "20261126-052551-1d46",
            "qualify-2026-11",
            "web1",
            "root@10.0.0.7:2222",
            "[fe80::1%eth0]:22",
            "admin@[2001:db8::1]:2222",
            "node_7.example.com",
        ] {
            assert!(is_name(ok), "{ok}");
        }
        for bad in [
            "",
            "bad id!",
            "a/b;c",
            "a b",
            "-x",
            "a\tb",
            "x'y",
            "é",
            &"x".repeat(201),
        ] {
            assert!(!is_name(bad), "{bad:?}");
        }
        let e = name(ENV_HOST, "a b".into()).unwrap_err().to_string();
        assert!(
            e.starts_with("HOSTBENCH_FLEET_HOST=\"a b\" is not a name"),
            "{e}"
        );
    }
}
