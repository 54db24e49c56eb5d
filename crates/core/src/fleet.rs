//! The fleet report's model: one fleet run's results grouped by what ran, each host's
//! headline figure set against the fleet's median, with the median absolute deviation, a
//! robust z-score (Iglewicz and Hoaglin) and a verdict per host. Renderers live in
//! `hostbench-report` (`fleet.rs`); this module only computes.

use crate::result::{Better, RunResult};
use crate::runner::StopReason;
use crate::stats;
use serde::Serialize;

/// Iglewicz and Hoaglin's outlier rule: |z| above this.
pub const Z_OUTLIER: f64 = 3.5;

/// The report of one fleet run.
#[derive(Debug, Clone, Serialize)]
pub struct FleetReport {
    /// The fleet run's id.
    pub run: String,
    /// Hosts with at least one run.
    pub hosts: usize,
    /// Spread of the hosts' recorded starts (the largest minus the smallest lateness), ns,
    /// when at least two hosts recorded one.
    pub start_skew_ns: Option<i64>,
    /// `--fail-below` as a fraction (0.1 = 10 %), when given.
    pub fail_below: Option<f64>,
    /// The label of the runs `--fail-below` judges against (`--baseline`), instead of the
    /// fleet's median.
    pub baseline: Option<String>,
    /// One group per workload (suite entry) that ran.
    pub groups: Vec<Group>,
    /// Hosts the fleet's controller was asked for that brought back no run (unreachable,
    /// the command failed, timed out, interrupted), with why: each is `failed` in every
    /// group too. Empty for runs that joined with `HOSTBENCH_FLEET_RUN` (no controller).
    pub without_run: Vec<Missing>,
}

/// A host of the fleet run with no run in the store.
#[derive(Debug, Clone, Serialize)]
pub struct Missing {
    /// The host as the user named it.
    pub host: String,
    /// Why it has no run, as the controller recorded it.
    pub reason: String,
}

/// The hosts' runs of one workload.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    /// What ran: the workload id, or `suite/entry` for a suite's entry.
    pub what: String,
    /// The headline figure's key (`events_per_s`).
    pub figure: String,
    /// The figure in words, with its unit.
    pub title: String,
    /// Its unit.
    pub unit: String,
    /// Whether more is better.
    pub higher_is_better: bool,
    /// Median over the hosts that completed.
    pub median: Option<f64>,
    /// Median absolute deviation over them.
    pub mad: Option<f64>,
    /// (largest − smallest) / median, over them.
    pub spread: Option<f64>,
    /// The baseline's figure: the median over the baseline label's completed runs of
    /// this workload (`--baseline`).
    pub baseline: Option<f64>,
    /// How many runs that median is of.
    pub baseline_runs: usize,
    /// One row per host, by host name.
    pub rows: Vec<Row>,
}

/// One host's figure in a group.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The host as the user named it.
    pub host: String,
    /// The stored run.
    pub run_id: String,
    /// The figure (`None` when the run has none).
    pub value: Option<f64>,
    /// value / median.
    pub ratio: Option<f64>,
    /// value / the baseline's figure, with `--baseline`.
    pub vs_baseline: Option<f64>,
    /// Robust z-score; `None` when the MAD is 0 or the run did not complete.
    pub z: Option<f64>,
    /// `pass`, `slow`, `fast` or `failed`.
    pub verdict: Verdict,
    /// Outside |z| > [`Z_OUTLIER`].
    pub outlier: bool,
    /// Why the host has no run (a host of [`FleetReport::without_run`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A host's verdict in a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Within the thresholds.
    Pass,
    /// Worse than `--fail-below` allows, or an outlier on the worse side.
    Slow,
    /// An outlier on the better side.
    Fast,
    /// The run did not complete (error, interrupted, forced shutdown).
    Failed,
}

impl Verdict {
    /// The word printed.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Slow => "slow",
            Verdict::Fast => "fast",
            Verdict::Failed => "failed",
        }
    }
}

fn completed(r: &RunResult) -> bool {
    r.outcome.error.is_none()
        && matches!(
            r.outcome.stop_reason,
            StopReason::TimeLimit | StopReason::EventLimit | StopReason::WorkersDone
        )
}

/// Builds the report of fleet run `run` from its results (`runs` may hold others: only
/// those whose `fleet.run` is `run` count). A host with several runs of one workload is
/// represented by its last.
pub fn report(run: &str, runs: &[RunResult], fail_below: Option<f64>) -> FleetReport {
    report_against(run, runs, fail_below, None)
}

/// Runs to judge a fleet run's hosts against (`fleet report --baseline LABEL`): their
/// label and the runs (any with that label; those of the fleet run itself are left out).
#[derive(Debug, Clone, Copy)]
pub struct Baseline<'a> {
    /// The label.
    pub label: &'a str,
    /// Its runs.
    pub runs: &'a [RunResult],
}

/// What ran: the workload id, or `suite/entry` for a suite's entry.
fn what(r: &RunResult) -> String {
    match &r.suite {
        Some(s) => format!("{}/{}", s.name, s.entry),
        None => r.workload.id.clone(),
    }
}

/// A run's parameters and threads, in words (`cpu_max_prime=5000 threads=1`): runs whose
/// figures can be set against each other have the same.
/// The same as what makes runs repetitions of one another in `results compare`.
fn setup(r: &RunResult) -> String {
    let mut words: Vec<String> = r
        .workload
        .params
        .values()
        .iter()
        .map(|(k, v)| format!("{k}={}", crate::compare::value_text(v)))
        .collect();
    words.push(format!("threads={}", r.config.threads));
    if r.config.rate_per_s > 0.0 {
        words.push(format!("rate={}", r.config.rate_per_s));
    }
    words.join(" ")
}

/// The baseline's runs of `what` `k` (those of fleet run `run` itself left out).
fn baseline_candidates<'a>(
    run: &'a str,
    b: Baseline<'a>,
    k: &'a str,
) -> impl Iterator<Item = &'a RunResult> + 'a {
    b.runs.iter().filter(move |r| {
        r.label.as_deref() == Some(b.label)
            && what(r) == k
            && r.fleet.as_ref().is_none_or(|f| f.run != run)
            && !is_load_share(r, b.runs)
    })
}

/// The merged run of fleet run `run`'s distributed load of `k`, if it was one: the whole
/// load, whose parameters are the fleet's (its hosts ran shares of them).
fn merged_load<'a>(run: &str, runs: &'a [RunResult], k: &str) -> Option<&'a RunResult> {
    runs.iter().find(|r| {
        what(r) == k
            && r.fleet
                .as_ref()
                .is_some_and(|f| f.run == run && !f.parts.is_empty())
    })
}

/// `r` is one host's share of a distributed load whose merged run is among `runs`: not a
/// run of the whole load.
fn is_load_share(r: &RunResult, runs: &[RunResult]) -> bool {
    r.fleet.as_ref().is_some_and(|f| {
        f.parts.is_empty()
            && runs.iter().any(|m| {
                m.fleet
                    .as_ref()
                    .is_some_and(|g| g.run == f.run && g.parts.iter().any(|p| p.run_id == r.id))
            })
    })
}

/// The row of a distributed load's merged run in its group (after the hosts').
pub const WHOLE_LOAD: &str = "(all hosts)";

/// Why `baseline` cannot judge fleet run `run`: for a workload the baseline label has runs
/// of, none has the parameters and threads the fleet ran with. One line naming both (the
/// parameters that differ, from the baseline's last run).
pub fn baseline_mismatch(run: &str, runs: &[RunResult], baseline: Baseline<'_>) -> Option<String> {
    let rep = report_against(run, runs, None, Some(baseline));
    for g in &rep.groups {
        if g.baseline.is_some() {
            continue;
        }
        let Some(first) = g
            .rows
            .first()
            .and_then(|row| runs.iter().find(|r| r.id == row.run_id))
        else {
            continue;
        };
        let Some(last) = baseline_candidates(run, baseline, &g.what).last() else {
            continue;
        };
        // A distributed load's parameters are the whole load's, not a host's share.
        let first = merged_load(run, runs, &g.what).unwrap_or(first);
        let (mine, theirs) = (setup(first), setup(last));
        if mine == theirs {
            // Same setup but no completed run with a figure: judged against the median.
            continue;
        }
        let a: Vec<&str> = mine.split(' ').collect();
        let b: Vec<&str> = theirs.split(' ').collect();
        let only = |x: &[&str], y: &[&str]| {
            x.iter()
                .filter(|w| !y.contains(w))
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        };
        return Some(format!(
            "--baseline {}: no run of {} with the fleet's parameters: the baseline ran {}, the \
             fleet ran {} (save a baseline run with the fleet's command line)",
            baseline.label,
            g.what,
            only(&b, &a),
            only(&a, &b)
        ));
    }
    None
}

/// [`report`], with `--fail-below` judging each host against `baseline`'s figure for the
/// same workload (the median of its completed runs) instead of the fleet's median. A
/// workload the baseline has no run of is judged against the fleet's median
/// (`Group::baseline` is `None`).
pub fn report_against(
    run: &str,
    runs: &[RunResult],
    fail_below: Option<f64>,
    baseline: Option<Baseline<'_>>,
) -> FleetReport {
    let mut mine: Vec<&RunResult> = runs
        .iter()
        // A distributed load's merged run stands for the fleet, not a host: it is not set
        // against the hosts.
        .filter(|r| {
            r.fleet
                .as_ref()
                .is_some_and(|f| f.run == run && f.parts.is_empty())
        })
        .collect();
    mine.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    let host = |r: &RunResult| r.fleet.as_ref().map(|f| f.host.clone()).unwrap_or_default();
    let mut hosts: Vec<String> = mine.iter().map(|r| host(r)).collect();
    hosts.sort();
    hosts.dedup();
    let lates: Vec<i64> = hosts
        .iter()
        .filter_map(|h| {
            mine.iter()
                .filter(|r| &host(r) == h)
                .find_map(|r| r.fleet.as_ref().and_then(|f| f.start_late_ns))
        })
        .collect();
    let start_skew_ns = (lates.len() > 1).then(|| {
        lates.iter().max().copied().unwrap_or(0) - lates.iter().min().copied().unwrap_or(0)
    });
    let mut keys: Vec<String> = Vec::new();
    for r in &mine {
        let k = what(r);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let groups = keys
        .into_iter()
        .map(|k| {
            // The last run of each host.
            let mut per_host: Vec<(String, &RunResult)> = Vec::new();
            for r in mine.iter().filter(|r| what(r) == k) {
                let h = host(r);
                match per_host.iter_mut().find(|(x, _)| *x == h) {
                    Some(slot) => slot.1 = r,
                    None => per_host.push((h, r)),
                }
            }
            per_host.sort_by(|a, b| a.0.cmp(&b.0));
            let first = per_host[0].1;
            let fig = first
                .figures
                .first()
                .cloned()
                .unwrap_or_else(|| first.default_figures()[0].clone());
            let value_of = |r: &RunResult| {
                r.figures
                    .iter()
                    .chain(r.default_figures().iter())
                    .find(|f| f.name == fig.name)
                    .map(|f| f.value)
                    .filter(|v| v.is_finite())
            };
            let good: Vec<f64> = per_host
                .iter()
                .filter(|(_, r)| completed(r))
                .filter_map(|(_, r)| value_of(r))
                .collect();
            let median = stats::median(&good);
            let mad = stats::mad(&good);
            let spread = match (
                median,
                good.iter().copied().reduce(f64::max),
                good.iter().copied().reduce(f64::min),
            ) {
                (Some(m), Some(hi), Some(lo)) if m != 0.0 && good.len() > 1 => Some((hi - lo) / m),
                _ => None,
            };
            let higher = fig.better == Better::Higher;
            // Only the baseline's runs of the same workload with the same parameters and
            // threads as the fleet's count: its first host's run's, or for a distributed
            // load the whole load's (its merged run: the hosts ran shares of it).
            let whole = merged_load(run, runs, &k);
            let fleet_setup = setup(whole.unwrap_or(first));
            let base_values: Vec<f64> = baseline
                .map(|b| {
                    baseline_candidates(run, b, &k)
                        .filter(|r| completed(r) && setup(r) == fleet_setup)
                        .filter_map(&value_of)
                        .collect()
                })
                .unwrap_or_default();
            let base = stats::median(&base_values).filter(|b| *b != 0.0);
            // A load's hosts each made a share of it: they are set against one another
            // (the median); the whole load against the baseline, in a row of its own.
            let reference = if whole.is_some() {
                median
            } else {
                base.or(median)
            };
            let mut rows: Vec<Row> = per_host
                .iter()
                .map(|(h, r)| {
                    let value = value_of(r);
                    let ok = completed(r) && value.is_some();
                    let ratio = match (value, median) {
                        (Some(v), Some(m)) if m != 0.0 => Some(v / m),
                        _ => None,
                    };
                    let vs_baseline = match (value, base) {
                        (Some(v), Some(b)) => Some(v / b),
                        _ => None,
                    };
                    let judged = match (value, reference) {
                        (Some(v), Some(m)) if m != 0.0 => Some(v / m),
                        _ => None,
                    };
                    let z = match (ok, value, median, mad) {
                        (true, Some(v), Some(m), Some(d)) => stats::robust_z(v, m, d),
                        _ => None,
                    };
                    let outlier = z.is_some_and(|z| z.abs() > Z_OUTLIER);
                    // On the worse side: below the median for a throughput, above for a time.
                    let worse_side = |x: f64| if higher { x < 0.0 } else { x > 0.0 };
                    let below = match (fail_below, judged) {
                        (Some(fb), Some(q)) => {
                            if higher {
                                q < 1.0 - fb
                            } else {
                                q > 1.0 + fb
                            }
                        }
                        _ => false,
                    };
                    let verdict = if !ok {
                        Verdict::Failed
                    } else if below || (outlier && z.is_some_and(worse_side)) {
                        Verdict::Slow
                    } else if outlier {
                        Verdict::Fast
                    } else {
                        Verdict::Pass
                    };
                    Row {
                        host: h.clone(),
                        run_id: r.id.clone(),
                        value,
                        ratio,
                        vs_baseline: if whole.is_some() { None } else { vs_baseline },
                        z,
                        verdict,
                        outlier,
                        reason: None,
                    }
                })
                .collect();
            if let (Some(m), Some(b)) = (whole, base) {
                // The whole load judged against the baseline (`--fail-below`).
                let value = value_of(m);
                let q = value.map(|v| v / b);
                let below = match (fail_below, q) {
                    (Some(fb), Some(q)) => {
                        if higher {
                            q < 1.0 - fb
                        } else {
                            q > 1.0 + fb
                        }
                    }
                    _ => false,
                };
                rows.push(Row {
                    host: WHOLE_LOAD.to_string(),
                    run_id: m.id.clone(),
                    value,
                    ratio: None,
                    vs_baseline: q,
                    z: None,
                    verdict: if !completed(m) || value.is_none() {
                        Verdict::Failed
                    } else if below {
                        Verdict::Slow
                    } else {
                        Verdict::Pass
                    },
                    outlier: false,
                    reason: None,
                });
            }
            Group {
                what: k,
                figure: fig.name.clone(),
                title: fig.title_with_unit(),
                unit: fig.unit.clone(),
                higher_is_better: higher,
                median,
                mad,
                spread,
                baseline: base,
                baseline_runs: base_values.len(),
                rows,
            }
        })
        .collect();
    FleetReport {
        run: run.to_string(),
        hosts: hosts.len(),
        start_skew_ns,
        fail_below,
        baseline: baseline.map(|b| b.label.to_string()),
        groups,
        without_run: Vec::new(),
    }
}

impl FleetReport {
    /// Adds the hosts of the controller's roster (`(host, why it failed)`, in the user's
    /// order) that have no run in this report: each is listed in
    /// [`FleetReport::without_run`] and as a `failed` row of every group, so a
    /// qualification cannot pass without them.
    pub fn with_roster(mut self, roster: &[(String, Option<String>)]) -> FleetReport {
        let with_run: Vec<String> = self
            .groups
            .iter()
            .flat_map(|g| g.rows.iter().map(|r| r.host.clone()))
            .collect();
        for (host, why) in roster {
            if with_run.contains(host) || self.without_run.iter().any(|m| &m.host == host) {
                continue;
            }
            let reason = why
                .clone()
                .unwrap_or_else(|| "no run brought back".to_string());
            for g in &mut self.groups {
                g.rows.push(Row {
                    host: host.clone(),
                    run_id: String::new(),
                    value: None,
                    ratio: None,
                    vs_baseline: None,
                    z: None,
                    verdict: Verdict::Failed,
                    outlier: false,
                    reason: Some(reason.clone()),
                });
                // By host, a distributed load's whole-load row last.
                g.rows.sort_by(|a, b| {
                    (a.host == WHOLE_LOAD, &a.host).cmp(&(b.host == WHOLE_LOAD, &b.host))
                });
            }
            self.without_run.push(Missing {
                host: host.clone(),
                reason,
            });
        }
        self
    }

    /// True when a host failed or is slow: the qualification did not pass.
    pub fn any_failed(&self) -> bool {
        !self.without_run.is_empty()
            || self
                .groups
                .iter()
                .flat_map(|g| &g.rows)
                .any(|r| matches!(r.verdict, Verdict::Slow | Verdict::Failed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::run;
    use crate::result::FleetRef;

    fn on(host: &str, id: &str, v: f64, late: i64) -> RunResult {
        let mut r = run(id, "cpu", 1, &[("events_per_s", v)]);
        r.fleet = Some(FleetRef {
            run: "f1".into(),
            host: host.into(),
            start_at_unix_ns: Some(0),
            start_late_ns: Some(late),
            clock_offset_ns: None,
            clock_rtt_ns: None,
            parts: Vec::new(),
        });
        r
    }

    #[test]
    fn hosts_of_the_roster_without_a_run_fail_the_qualification() {
        let runs = vec![on("a", "1", 1000.0, 0), on("b", "2", 1010.0, 0)];
        assert!(!report("f1", &runs, Some(0.1)).any_failed());
        let roster = [
            ("a".to_string(), None),
            ("b".to_string(), None),
            ("c".to_string(), Some("unreachable (connect)".to_string())),
        ];
        let rep = report("f1", &runs, Some(0.1)).with_roster(&roster);
        assert!(rep.any_failed());
        assert_eq!(rep.without_run.len(), 1);
        assert_eq!(rep.without_run[0].reason, "unreachable (connect)");
        let c = &rep.groups[0].rows[2];
        assert_eq!((c.host.as_str(), c.verdict), ("c", Verdict::Failed));
        // The median is the hosts' with runs.
        assert_eq!(rep.groups[0].median, Some(1005.0));
        // No host with a run: still one entry per host.
        let none = report("f1", &[], Some(0.1)).with_roster(&roster);
        assert_eq!(none.without_run.len(), 3);
        assert!(none.any_failed());
    }

    #[test]
    fn the_slow_host_is_an_outlier_and_fails_the_threshold() {
        let mut runs = vec![
            on("a", "1", 1000.0, 100),
            on("b", "2", 1010.0, 300),
            on("c", "3", 990.0, 200),
            on("d", "4", 1005.0, 150),
            on("e", "5", 200.0, 120),
            run("x", "cpu", 1, &[("events_per_s", 1.0)]), // not in the fleet run
        ];
        let mut broken = on("f", "6", 0.0, 0);
        broken.outcome.stop_reason = StopReason::Interrupted;
        runs.push(broken);
        let rep = report("f1", &runs, Some(0.1));
        assert_eq!((rep.hosts, rep.start_skew_ns), (6, Some(300)));
        let g = &rep.groups[0];
        // The median and MAD are of the completed hosts only.
        assert_eq!((g.median, g.mad), (Some(1000.0), Some(10.0)));
        let v: Vec<(&str, Verdict)> = g
            .rows
            .iter()
            .map(|r| (r.host.as_str(), r.verdict))
            .collect();
        assert_eq!(
            v,
            [
                ("a", Verdict::Pass),
                ("b", Verdict::Pass),
                ("c", Verdict::Pass),
                ("d", Verdict::Pass),
                ("e", Verdict::Slow),
                ("f", Verdict::Failed),
            ]
        );
        assert!(g.rows[4].outlier && g.rows[4].z.unwrap() < -50.0);
        assert!(rep.any_failed());
        // Without the failed host and the slow one, the qualification passes.
        let ok = report("f1", &runs[..4], Some(0.1));
        assert!(!ok.any_failed());
    }

    #[test]
    fn fail_below_judges_against_the_baseline_label_when_given() {
        // Every host 20 % below the baseline machine: the fleet median sees nothing wrong.
        let mut runs = vec![
            on("a", "1", 800.0, 0),
            on("b", "2", 810.0, 0),
            on("c", "3", 790.0, 0),
        ];
        for (i, v) in [1000.0, 1010.0, 990.0].into_iter().enumerate() {
            let mut r = run(&format!("g{i}"), "cpu", 1, &[("events_per_s", v)]);
            r.label = Some("golden".into());
            runs.push(r);
        }
        assert!(!report("f1", &runs, Some(0.1)).any_failed());
        let b = Baseline {
            label: "golden",
            runs: &runs,
        };
        let rep = report_against("f1", &runs, Some(0.1), Some(b));
        let g = &rep.groups[0];
        assert_eq!((g.baseline, g.baseline_runs), (Some(1000.0), 3));
        assert!(g.rows.iter().all(|r| r.verdict == Verdict::Slow));
        assert_eq!(g.rows[0].vs_baseline, Some(0.8));
        // Within 25 % of the baseline: pass.
        assert!(!report_against("f1", &runs, Some(0.25), Some(b)).any_failed());
        assert_eq!(rep.baseline.as_deref(), Some("golden"));
    }

    /// A distributed load's parameters are the whole load's: a baseline run of the whole
    /// command (one machine, or an earlier fleet's merged run) counts, a host's share does
    /// not; the hosts are set against one another and the whole load against the baseline.
    #[test]
    fn a_distributed_loads_baseline_is_of_the_whole_load() {
        use crate::params::Value;
        let share = |host: &str, id: &str, v: f64, c: i64| {
            let mut r = on(host, id, v, 0);
            r.workload.params.set("connections", Value::Int(c));
            r
        };
        // `-c 6` over 3 hosts: 2 connections each, 1000 requests/s each, 3000 in all.
        let mut runs = vec![
            share("a", "1", 1000.0, 2),
            share("b", "2", 1010.0, 2),
            share("c", "3", 990.0, 2),
        ];
        let mut merged = share("*", "m", 3000.0, 6);
        merged.config.threads = 3;
        merged.fleet.as_mut().unwrap().parts = ["a", "b", "c"]
            .iter()
            .zip(["1", "2", "3"])
            .map(|(h, id)| crate::result::FleetPart {
                host: h.to_string(),
                run_id: id.to_string(),
                events: 1,
            })
            .collect();
        runs.push(merged);
        let golden = |id: &str, c: i64, threads: usize, v: f64| {
            let mut r = run(id, "cpu", threads, &[("events_per_s", v)]);
            r.workload.params.set("connections", Value::Int(c));
            r.label = Some("golden".into());
            r
        };
        let mut all = runs.clone();
        // A run with one host's share of the load is not the whole load.
        all.push(golden("g1", 2, 1, 1000.0));
        let b = Baseline {
            label: "golden",
            runs: &all,
        };
        let e = baseline_mismatch("f1", &all, b).expect("no whole-load baseline");
        assert!(
            e.contains(
                "the baseline ran connections=2 threads=1, the fleet ran connections=6 threads=3"
            ),
            "{e}"
        );
        // The whole load on one machine (6 connections, 3 threads), 4000/s: the fleet's
        // 3000/s is 25 % below it.
        all.push(golden("g2", 6, 3, 4000.0));
        let b = Baseline {
            label: "golden",
            runs: &all,
        };
        assert_eq!(baseline_mismatch("f1", &all, b), None);
        let rep = report_against("f1", &all, Some(0.1), Some(b));
        let g = &rep.groups[0];
        assert_eq!((g.baseline, g.baseline_runs), (Some(4000.0), 1));
        let hosts: Vec<&str> = g.rows.iter().map(|r| r.host.as_str()).collect();
        assert_eq!(hosts, ["a", "b", "c", WHOLE_LOAD]);
        // Each host is judged against the others (within 10 %): pass.
        assert!(g.rows[..3].iter().all(|r| r.verdict == Verdict::Pass));
        let whole = &g.rows[3];
        assert_eq!(whole.value, Some(3000.0));
        assert_eq!(whole.vs_baseline, Some(0.75));
        assert_eq!(whole.verdict, Verdict::Slow);
        assert!(rep.any_failed());
        // Within 30 %: the whole load passes.
        let rep = report_against("f1", &all, Some(0.3), Some(b));
        assert!(!rep.any_failed());
        // An earlier fleet's shares (same host count) are not the whole load either: only
        // its merged run counts.
        let mut earlier: Vec<RunResult> = runs
            .iter()
            .map(|r| {
                let mut r = r.clone();
                r.id = format!("e{}", r.id);
                r.label = Some("prev".into());
                let f = r.fleet.as_mut().unwrap();
                f.run = "f0".into();
                for p in &mut f.parts {
                    p.run_id = format!("e{}", p.run_id);
                }
                r
            })
            .collect();
        earlier[3].metrics.events_per_s = 3100.0;
        earlier[3].figures = vec![crate::result::figure::EVENTS_PER_S.at(3100.0)];
        let mut all = runs.clone();
        all.extend(earlier);
        let b = Baseline {
            label: "prev",
            runs: &all,
        };
        let rep = report_against("f1", &all, Some(0.1), Some(b));
        assert_eq!(rep.groups[0].baseline_runs, 1, "the merged run alone");
        assert_eq!(rep.groups[0].baseline, Some(3100.0));
    }

    #[test]
    fn only_a_baseline_run_with_the_same_parameters_counts() {
        use crate::params::Value;
        let mut runs = vec![on("a", "1", 800.0, 0), on("b", "2", 810.0, 0)];
        for r in &mut runs {
            r.workload.params.set("cpu_max_prime", Value::Int(5000));
        }
        let golden = |id: &str, prime: i64, threads: usize, v: f64| {
            let mut r = run(id, "cpu", threads, &[("events_per_s", v)]);
            r.workload.params.set("cpu_max_prime", Value::Int(prime));
            r.label = Some("golden".into());
            r
        };
        let mut all = runs.clone();
        all.push(golden("g1", 10000, 1, 5000.0));
        let b = Baseline {
            label: "golden",
            runs: &all,
        };
        let e = baseline_mismatch("f1", &all, b).expect("no comparable baseline run");
        assert!(
            e.contains("the baseline ran cpu_max_prime=10000, the fleet ran cpu_max_prime=5000"),
            "{e}"
        );
        let rep = report_against("f1", &all, Some(0.1), Some(b));
        assert_eq!(rep.groups[0].baseline, None);
        // Another thread count does not count either.
        all.push(golden("g2", 5000, 4, 3000.0));
        let b = Baseline {
            label: "golden",
            runs: &all,
        };
        assert!(
            baseline_mismatch("f1", &all, b)
                .unwrap()
                .contains("threads=4")
        );
        // The same parameters and threads: that run alone is the baseline.
        all.push(golden("g3", 5000, 1, 1000.0));
        let b = Baseline {
            label: "golden",
            runs: &all,
        };
        assert_eq!(baseline_mismatch("f1", &all, b), None);
        let rep = report_against("f1", &all, Some(0.1), Some(b));
        assert_eq!(
            (rep.groups[0].baseline, rep.groups[0].baseline_runs),
            (Some(1000.0), 1)
        );
    }

    #[test]
    fn a_fast_outlier_is_flagged_but_not_failed() {
        let runs = vec![
            on("a", "1", 1000.0, 0),
            on("b", "2", 1010.0, 0),
            on("c", "3", 990.0, 0),
            on("d", "4", 3000.0, 0),
        ];
        let rep = report("f1", &runs, None);
        let d = &rep.groups[0].rows[3];
        assert_eq!((d.verdict, d.outlier), (Verdict::Fast, true));
        assert!(!rep.any_failed());
    }
}
