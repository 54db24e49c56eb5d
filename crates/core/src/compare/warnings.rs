//! What may skew a comparison, as typed [`Warning`]s: host differences (clock source, timer
//! cost, virtualisation, transparent huge pages, governor, tool version), variants not
//! compared because their parameters differ, run settings that differ between sides (time,
//! warmup, random distribution, database TLS), a side whose runs come from several hosts,
//! runs that saw a busy host or did not end normally, too few runs for a verdict, and
//! sides that share runs.

use super::{
    Comparison, Key, SideInput, Verdict, Warning, WarningKind, min_runs_for_verdict, tool_text,
};
use crate::names::db;
use crate::result::RunResult;
use crate::runner::StopReason;
use crate::stats;
use std::collections::{BTreeMap, BTreeSet};

/// How many times the clock read may cost on one side what it costs on the other before
/// the comparison says so: a difference below is measurement noise (8.0 vs 7.8 ns), not a
/// difference between the hosts.
pub const TIMER_COST_RATIO: f64 = 2.0;

/// The median clock-read cost of `runs`, ns; None when no run measured one.
pub fn timer_cost_ns(runs: &[RunResult]) -> Option<f64> {
    let v: Vec<f64> = runs.iter().map(|r| r.clock.read_cost_ns).collect();
    stats::median(&stats::finite(&v)).filter(|c| *c > 0.0)
}

/// Whether the known per-side costs (from [`timer_cost_ns`]) differ by more than
/// [`TIMER_COST_RATIO`]: a difference between the hosts, not measurement noise.
pub fn timer_costs_differ(costs: impl IntoIterator<Item = f64>) -> bool {
    let (lo, hi) = costs
        .into_iter()
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), c| {
            (lo.min(c), hi.max(c))
        });
    lo.is_finite() && hi > TIMER_COST_RATIO * lo
}

/// Run warnings that describe the host rather than the workload.
fn is_host_noise(k: crate::result::WarningKind) -> bool {
    use crate::result::WarningKind as K;
    matches!(k, K::NoisyHost | K::StealTime | K::SwapActivity)
}

/// Seconds as a person writes them (`10 s`, `0.5 s`).
fn secs(s: f64) -> String {
    format!("{s} s")
}

/// Per side, the distinct values `f` gives over its runs.
fn per_side(
    sides: &[SideInput],
    f: impl Fn(&RunResult) -> Option<String>,
) -> Vec<BTreeSet<String>> {
    sides
        .iter()
        .map(|s| s.runs.iter().filter_map(&f).collect())
        .collect()
}

/// `A: x; B: y` for a per-side list of values.
fn listing(sides: &[SideInput], vals: &[BTreeSet<String>]) -> String {
    sides
        .iter()
        .zip(vals)
        .map(|(s, v)| {
            let v = if v.is_empty() {
                "unknown".to_string()
            } else {
                v.iter().cloned().collect::<Vec<_>>().join(" / ")
            };
            format!("{}: {v}", s.name)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether the sides disagree: some side's set differs from another's (sides with no
/// value at all are ignored).
fn differ(vals: &[BTreeSet<String>]) -> bool {
    let known: Vec<&BTreeSet<String>> = vals.iter().filter(|v| !v.is_empty()).collect();
    known.windows(2).any(|w| w[0] != w[1]) || known.iter().any(|v| v.len() > 1)
}

pub(super) fn warnings(
    c: &Comparison,
    sides: &[SideInput],
    members: &BTreeMap<Key, Vec<Vec<&RunResult>>>,
    keys: &[Key],
) -> Vec<Warning> {
    let mut w = Vec::new();
    let mut push = |kind, message: String| w.push(Warning { kind, message });
    // Sides that share runs (the same label twice, a label and one of its ids).
    let ids: Vec<BTreeSet<&str>> = sides
        .iter()
        .map(|s| s.runs.iter().map(|r| r.id.as_str()).collect())
        .collect();
    for (i, a) in ids.iter().enumerate() {
        for (j, b) in ids.iter().enumerate().skip(i + 1) {
            let shared = a.intersection(b).count();
            if shared > 0 {
                push(
                    WarningKind::SameRuns,
                    format!(
                        "{} and {} share {shared} run(s){}: a run compared with itself always \
                         agrees, so these figures say nothing about a difference",
                        sides[i].name,
                        sides[j].name,
                        if a == b {
                            " (they are the same runs)"
                        } else {
                            ""
                        }
                    ),
                );
            }
        }
    }
    if sides.len() >= 2 {
        let host = |f: fn(&crate::host::HostInfo) -> Option<String>| {
            per_side(sides, move |r| r.host.as_ref().and_then(f))
        };
        let cs = host(|h| Some(h.clocksource.current.clone()).filter(|s| !s.is_empty()));
        if differ(&cs) {
            push(
                WarningKind::Clocksource,
                format!(
                    "the clocksources differ ({}): every event is timed with two clock reads, \
                     and a clocksource without a vDSO fast path (xen, hpet, acpi_pm) makes each \
                     read a system call, deflating event rates and inflating latencies",
                    listing(sides, &cs)
                ),
            );
        }
        let cost: Vec<Option<f64>> = sides.iter().map(|s| timer_cost_ns(&s.runs)).collect();
        if timer_costs_differ(cost.iter().flatten().copied()) {
            let list = sides
                .iter()
                .zip(&cost)
                .map(|(s, c)| match c {
                    Some(c) => format!("{}: {c:.0} ns", s.name),
                    None => format!("{}: unknown", s.name),
                })
                .collect::<Vec<_>>()
                .join("; ");
            push(
                WarningKind::TimerCost,
                format!(
                    "reading the clock costs more than twice as much on one side ({list}): \
                     short events and their latencies are skewed by the timer, not the work"
                ),
            );
        }
        let virt = per_side(sides, |r| {
            let h = r.host.as_ref()?;
            Some(h.virtualization.clone().unwrap_or_else(|| "none".into()))
        });
        if differ(&virt) {
            let one_side = virt.iter().any(|v| v.contains("none"))
                && virt.iter().any(|v| v.iter().any(|x| x != "none"));
            push(
                WarningKind::Virtualization,
                format!(
                    "{} ({}): a hypervisor adds its own overheads (timer and I/O exits, steal, \
                     nested paging) that bare metal does not have",
                    if one_side {
                        "virtualization on one side only"
                    } else {
                        "the virtualization differs"
                    },
                    listing(sides, &virt)
                ),
            );
        }
        let thp = host(|h| h.memory.transparent_hugepages.clone());
        if differ(&thp) {
            push(
                WarningKind::TransparentHugepages,
                format!(
                    "transparent hugepage settings differ ({}): memory bandwidth and latency \
                     figures depend on TLB reach",
                    listing(sides, &thp)
                ),
            );
        }
        let gov = host(|h| {
            Some(
                h.cpu
                    .governor
                    .clone()
                    .unwrap_or_else(|| "not exposed".into()),
            )
        });
        if differ(&gov) {
            push(
                WarningKind::Governor,
                format!(
                    "the cpufreq governors differ ({}): `powersave` or `ondemand` clocks \
                     down between bursts, `performance` does not",
                    listing(sides, &gov)
                ),
            );
        }
        let tools = per_side(sides, |r| Some(tool_text(r)));
        if differ(&tools) {
            push(
                WarningKind::ToolVersion,
                format!(
                    "different hostbench versions measured ({}): a workload's definition may \
                     have changed between them",
                    listing(sides, &tools)
                ),
            );
        }
    }
    let param_diffs: Vec<String> = c
        .variants
        .iter()
        .filter(|v| {
            v.reason
                .as_deref()
                .is_some_and(|r| r.contains("other parameters"))
        })
        .map(|v| format!("{} ({})", v.workload, v.label))
        .collect();
    if !param_diffs.is_empty() {
        push(
            WarningKind::Params,
            format!(
                "{} variant(s) ran with different parameters on different sides and were not \
                 compared: {}",
                param_diffs.len(),
                param_diffs.join(", ")
            ),
        );
    }
    // Settings outside the variant key that still change what a run measures.
    for (k, v) in keys.iter().zip(&c.variants) {
        if !v.compared {
            continue;
        }
        let runs = &members[k];
        let mut diffs = Vec::new();
        let setting = |f: &dyn Fn(&RunResult) -> String| -> Option<String> {
            let vals: Vec<BTreeSet<String>> = runs
                .iter()
                .map(|rs| rs.iter().map(|r| f(r)).collect())
                .collect();
            differ(&vals).then(|| listing(sides, &vals))
        };
        if let Some(l) = setting(&|r| {
            if r.config.time_limit_s > 0.0 {
                secs(r.config.time_limit_s)
            } else {
                format!("{} events", r.config.event_limit)
            }
        }) {
            diffs.push(format!("run length ({l})"));
        }
        if let Some(l) = setting(&|r| secs(r.config.warmup_s)) {
            diffs.push(format!("warmup ({l})"));
        }
        let draws = c
            .options
            .rand_workloads
            .is_none_or(|ids| ids.contains(&v.workload.as_str()));
        if draws && let Some(l) = setting(&|r| r.config.rand.name().to_string()) {
            diffs.push(format!("random distribution ({l})"));
        }
        // TLS to a database costs CPU on both ends per query: the same parameters
        // (sslmode=prefer) can give TLS on one server and plaintext on another.
        let db_tls = |r: &RunResult| -> Option<String> {
            let on = *r.workload.facts.get(db::fact::TLS)?;
            Some(if on > 0.0 {
                match r.workload.facts.get(db::fact::TLS_VERSION) {
                    Some(v) => format!("TLS {v}"),
                    None => "TLS".into(),
                }
            } else {
                "plaintext".into()
            })
        };
        if runs.iter().flatten().any(|r| db_tls(r).is_some())
            && let Some(l) = setting(&|r| db_tls(r).unwrap_or_else(|| "unknown".into()))
        {
            diffs.push(format!(
                "database connection TLS ({l}): encryption costs client and server CPU per query"
            ));
        }
        if !diffs.is_empty() {
            push(
                WarningKind::RunSettings,
                format!(
                    "{} ({}) ran with different settings: {}",
                    v.workload,
                    v.label,
                    diffs.join(", ")
                ),
            );
        }
    }
    let mut noisy_sides: Vec<(usize, &str, usize)> = Vec::new();
    let mut noisy_example: Option<String> = None;
    for (s, side) in sides.iter().enumerate() {
        if c.sides[s].hosts.len() > 1 {
            push(
                WarningKind::MixedHosts,
                format!(
                    "the runs of {} come from {} hosts ({}): its repetitions mix machines",
                    side.name,
                    c.sides[s].hosts.len(),
                    c.sides[s].hosts.join(", ")
                ),
            );
        }
        let bad: Vec<String> = side
            .runs
            .iter()
            .filter(|r| {
                matches!(
                    r.outcome.stop_reason,
                    StopReason::Interrupted | StopReason::Error | StopReason::ForcedShutdown
                )
            })
            .map(|r| r.id.chars().take(12).collect())
            .collect();
        // What the runs themselves said about the host while they ran: one warning for
        // every side, after this loop.
        let noisy: Vec<&RunResult> = side
            .runs
            .iter()
            .filter(|r| r.warnings.iter().any(|w| is_host_noise(w.kind)))
            .collect();
        if !noisy.is_empty() {
            noisy_sides.push((noisy.len(), side.name.as_str(), side.runs.len()));
            if noisy_example.is_none() {
                noisy_example = noisy[0]
                    .warnings
                    .iter()
                    .find(|w| is_host_noise(w.kind))
                    .map(|w| w.message.clone());
            }
        }
        if !bad.is_empty() {
            push(
                WarningKind::IncompleteRuns,
                format!(
                    "{} of {}'s runs did not end normally (interrupted, failed or shut down: \
                     {}); a failed run's figures are left out, the others cover part of a run",
                    bad.len(),
                    side.name,
                    bad.join(", ")
                ),
            );
        }
    }
    if !noisy_sides.is_empty() {
        // Once for all sides, with a count per side: the same sentence per side only
        // repeated itself.
        let counts: Vec<String> = noisy_sides
            .iter()
            .map(|(n, name, of)| format!("{n} of {name}'s {of} runs"))
            .collect();
        let counts = match counts.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => counts.join(""),
        };
        push(
            WarningKind::NoisyRuns,
            format!(
                "{counts} were measured on a busy or unsettled host, so a difference may come \
                 from the host's load rather than the machine; e.g. \"{}\"",
                noisy_example.unwrap_or_default()
            ),
        );
    }
    let few = c
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .filter(|x| matches!(x.verdict, Some(Verdict::SingleRun | Verdict::TooFewRuns)))
        .count();
    if few > 0 {
        push(
            WarningKind::FewRuns,
            format!(
                "{few} comparison(s) have too few runs for a verdict: repeat each side at least \
                 {} times for the rank test to be able to reach p < {} ({} for a {:.0} % \
                 interval of the median)",
                min_runs_for_verdict(c.options.alpha),
                c.options.alpha,
                stats::min_samples_for_ci(c.options.confidence),
                c.options.confidence * 100.0
            ),
        );
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Options;
    use crate::compare::tests::{BASE, reps, side};
    use crate::host::HostInfo;

    #[test]
    fn database_tls_on_one_side_only_is_flagged() {
        let tls = |prefix: &str, on: f64| {
            let mut v = reps(prefix, &BASE);
            for r in &mut v {
                r.workload.facts.insert("db_tls".into(), on);
                if on > 0.0 {
                    r.workload.facts.insert("db_tls_version".into(), 1.3);
                }
            }
            v
        };
        let kinds = |a: Vec<RunResult>, b: Vec<RunResult>| {
            Comparison::build(&[side("a", a), side("b", b)], Options::default())
                .warnings
                .into_iter()
                .filter(|w| w.kind == WarningKind::RunSettings)
                .map(|w| w.message)
                .collect::<Vec<_>>()
        };
        let w = kinds(tls("a", 1.0), tls("b", 0.0));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("database connection TLS (a: TLS 1.3; b: plaintext)"),
            "{}",
            w[0]
        );
        assert!(kinds(tls("a", 1.0), tls("b", 1.0)).is_empty());
        assert!(kinds(reps("a", &BASE), reps("b", &BASE)).is_empty());
    }

    #[test]
    fn a_random_distribution_difference_matters_only_where_it_is_drawn() {
        let mut other = reps("b", &BASE);
        for r in &mut other {
            r.config.rand = crate::rand::Distribution::Pareto { h: 0.2 };
        }
        let settings = |opts: Options| {
            Comparison::build(
                &[side("a", reps("a", &BASE)), side("b", other.clone())],
                opts,
            )
            .warnings
            .into_iter()
            .filter(|w| w.kind == WarningKind::RunSettings)
            .collect::<Vec<_>>()
        };
        // Without the registry's word every workload is suspect ...
        let w = settings(Options::default());
        assert_eq!(w.len(), 1);
        assert!(
            w[0].message.contains("random distribution"),
            "{}",
            w[0].message
        );
        // ... with it, a cpu run (which draws no random numbers) is not.
        static DRAWS: [&str; 1] = ["db.oltp_read_only"];
        let w = settings(Options {
            rand_workloads: Some(&DRAWS),
            ..Options::default()
        });
        assert!(w.is_empty(), "{w:?}");
        static CPU: [&str; 1] = ["cpu"];
        let w = settings(Options {
            rand_workloads: Some(&CPU),
            ..Options::default()
        });
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn runs_that_saw_a_busy_host_are_named() {
        let mut busy = reps("b", &BASE);
        busy[2].warnings.push(crate::result::Warning {
            kind: crate::result::WarningKind::NoisyHost,
            message: "other processes used 54% of the CPU time".into(),
        });
        let c = Comparison::build(
            &[side("a", reps("a", &BASE)), side("b", busy)],
            Options::default(),
        );
        let w: Vec<_> = c
            .warnings
            .iter()
            .filter(|w| w.kind == WarningKind::NoisyRuns)
            .collect();
        assert_eq!(w.len(), 1, "{:?}", c.warnings);
        assert!(
            w[0].message.starts_with("1 of b's 6 runs"),
            "{}",
            w[0].message
        );
        assert!(w[0].message.contains("54%"), "{}", w[0].message);
        // Both sides busy: one warning counting each, not the same sentence twice.
        let mut busy_a = reps("a", &BASE);
        busy_a[0].warnings.push(crate::result::Warning {
            kind: crate::result::WarningKind::StealTime,
            message: "steal".into(),
        });
        let mut busy_b = reps("b", &BASE);
        busy_b[1].warnings.push(crate::result::Warning {
            kind: crate::result::WarningKind::NoisyHost,
            message: "other processes used 54% of the CPU time".into(),
        });
        let c = Comparison::build(&[side("a", busy_a), side("b", busy_b)], Options::default());
        let w: Vec<_> = c
            .warnings
            .iter()
            .filter(|w| w.kind == WarningKind::NoisyRuns)
            .collect();
        assert_eq!(w.len(), 1, "{:?}", c.warnings);
        assert!(
            w[0].message
                .starts_with("1 of a's 6 runs and 1 of b's 6 runs were measured"),
            "{}",
            w[0].message
        );
    }

    #[test]
    fn host_differences_are_warned() {
        let mut a = reps("a", &BASE);
        let mut b = reps("b", &BASE);
        for (runs, cs, virt, cost) in [
            (&mut a, "tsc", None, 20.0),
            (&mut b, "xen", Some("xen".to_string()), 90.0),
        ] {
            for r in runs.iter_mut() {
                let mut h = HostInfo::default();
                h.clocksource.current = cs.into();
                h.virtualization = virt.clone();
                h.memory.transparent_hugepages = Some("always".into());
                r.host = Some(h);
                r.clock.read_cost_ns = cost;
            }
        }
        b[0].tool.version = "0.2.0".into();
        b[1].config.time_limit_s = 30.0;
        let c = Comparison::build(&[side("a", a), side("b", b)], Options::default());
        let kinds: Vec<WarningKind> = c.warnings.iter().map(|w| w.kind).collect();
        for k in [
            WarningKind::Clocksource,
            WarningKind::TimerCost,
            WarningKind::Virtualization,
            WarningKind::ToolVersion,
            WarningKind::RunSettings,
        ] {
            assert!(kinds.contains(&k), "{k:?} missing from {kinds:?}");
        }
        assert!(!kinds.contains(&WarningKind::TransparentHugepages));
        let v = c
            .warnings
            .iter()
            .find(|w| w.kind == WarningKind::Virtualization);
        assert!(v.unwrap().message.contains("one side only"));
    }
}
