//! `suite --until-decided BASELINE --interleave`: the extra runs that decide an entry
//! alternate between this side and the baseline's configuration, re-created from the
//! baseline's stored run of the same entry, so both sides meet the same noise (a neighbour's
//! load, the page cache's state, thermal drift) instead of the baseline's runs coming from
//! another hour.
//!
//! What can be re-created is what a run records: the workload, its parameters, threads,
//! limits and rate, and the directory a disk entry ran in. What cannot is the machine's
//! state (a kernel setting, a governor, a service that was running): so the baseline must
//! come from this machine (same host name and host fingerprint), and when nothing recorded
//! differs between the sides — the same plan in the same directory — interleaving would
//! re-run this side under the baseline's name, and is refused for that entry with the reason
//! in its note.

use super::file::Entry;
use super::scratch;
use hostbench_core::host::HostInfo;
use hostbench_core::plan::Plan;
use hostbench_core::result::RunResult;
use hostbench_core::workload::Workload;
use std::path::{Path, PathBuf};

/// The baseline's configuration of one entry, re-created.
pub struct Baseline {
    pub workload: &'static dyn Workload,
    pub plan: Plan,
    /// Where its scratch directory goes (disk entries), as the baseline's run recorded it.
    pub directory: Option<PathBuf>,
}

/// The baseline's runs of `entry` (of suite `suite`), latest last.
fn runs_of<'a>(runs: &'a [RunResult], suite: &str, entry: &str) -> Vec<&'a RunResult> {
    let mut v: Vec<&RunResult> = runs
        .iter()
        .filter(|r| {
            r.suite
                .as_ref()
                .is_some_and(|s| s.name == suite && s.entry == entry)
        })
        .collect();
    v.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    v
}

/// The directory a suite run's disk entry ran in: recorded since schema 1.3
/// (`suite.directory`); for older runs, an absolute `--directory` on its command line.
fn recorded_directory(r: &RunResult) -> Option<PathBuf> {
    if let Some(d) = r.suite.as_ref().and_then(|s| s.directory.as_ref()) {
        return Some(PathBuf::from(d));
    }
    let args = &r.config.command_line;
    let given = args.iter().enumerate().find_map(|(i, a)| {
        if a == "--directory" {
            args.get(i + 1).cloned()
        } else {
            a.strip_prefix("--directory=").map(str::to_string)
        }
    })?;
    let p = PathBuf::from(given);
    p.is_absolute().then_some(p)
}

/// Re-creates the baseline's configuration of `entry`, or says why it cannot be.
/// `here` is this side's directory for the entry (absolute; `None` when it writes no files)
/// and `plan` this side's plan.
pub fn recreate(
    runs: &[RunResult],
    suite: &str,
    entry: &Entry,
    plan: &Plan,
    here: Option<&Path>,
    host: &HostInfo,
) -> Result<Baseline, String> {
    let mine = runs_of(runs, suite, &entry.name);
    let Some(last) = mine.last() else {
        return Err("the baseline has no run of this entry".into());
    };
    let Some(theirs) = &last.host else {
        return Err("the baseline's run records no host".into());
    };
    if theirs.hostname != host.hostname {
        return Err(format!(
            "the baseline ran on {}, not on this machine",
            theirs.hostname
        ));
    }
    if hostbench_store::host_fingerprint(theirs) != hostbench_store::host_fingerprint(host) {
        return Err(
            "the baseline ran on this host name with other hardware, kernel or clocksource \
             (its host fingerprint differs)"
                .into(),
        );
    }
    let id = &last.workload.id;
    let Some(workload) = hostbench_workloads::registry::find(id) else {
        return Err(format!(
            "the baseline's workload {id} is not in this hostbench"
        ));
    };
    let params = last.workload.params.clone();
    if params.values().values().any(|v| {
        matches!(v, hostbench_core::params::Value::Text(t) if t.contains(hostbench_core::secret::MASK))
    }) {
        return Err("the baseline's parameters hold a secret, which the store does not keep".into());
    }
    // A seed the runs share was fixed by the entry; otherwise each run drew its own.
    let seed = if mine.len() >= 2 && mine.iter().all(|r| r.config.seed == last.config.seed) {
        last.config.seed
    } else {
        0
    };
    let c = &last.config;
    let base = Plan {
        workload: id.clone(),
        params,
        threads: c.threads,
        time_s: c.time_limit_s,
        events: c.event_limit,
        warmup_s: c.warmup_s,
        rate: c.rate_per_s,
        report_interval_s: plan.report_interval_s,
        report_checkpoints: Vec::new(),
        percentiles: c.percentiles.clone(),
        forced_shutdown_s: plan.forced_shutdown_s,
        rand: c.rand,
        seed,
        layout: c.layout.clone(),
    };
    let directory = if scratch::needs_scratch(workload) {
        let Some(d) = recorded_directory(last) else {
            return Err(
                "the baseline's run does not record the directory it ran in (a run of an \
                 older hostbench without an absolute --directory)"
                    .into(),
            );
        };
        if !d.is_dir() {
            return Err(format!(
                "the baseline's directory {} is not there any more",
                d.display()
            ));
        }
        Some(d)
    } else {
        None
    };
    let same_plan = base.workload == plan.workload
        && base.params == plan.params
        && base.threads == plan.threads
        && base.time_s == plan.time_s
        && base.events == plan.events
        && base.warmup_s == plan.warmup_s
        && base.rate == plan.rate
        && base.rand == plan.rand;
    let same_place = match (&directory, here) {
        (Some(a), Some(b)) => same_dir(a, b),
        _ => true,
    };
    if same_plan && same_place {
        return Err(
            "nothing the runs record differs between the sides (same parameters and directory): \
             the difference is in the machine's state, which hostbench cannot re-create, so the \
             baseline's stored runs are used as they are"
                .into(),
        );
    }
    Ok(Baseline {
        workload,
        plan: base,
        directory,
    })
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
