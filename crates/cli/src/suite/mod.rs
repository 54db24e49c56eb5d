//! `hostbench suite quick|standard|full|FILE.toml`: runs a list of workloads (and probes) with
//! repetitions and a stability rule, saves every run in the results store, and ends with a
//! summary table (text, markdown or a JSON suite document).
//!
//! Order of events: the whole file is validated first (nothing runs if any entry is wrong);
//! then each entry runs until the stability rule is met or its repetitions are spent; a
//! failed run ends its entry (the suite goes on, exit 1 at the end); Ctrl-C ends the current
//! run, keeps (and saves) what finished, prints the summary and exits 130. The built-in suites
//! are the TOML files in `suites/`, embedded at build time. Nothing is written anywhere but
//! the results store.

mod file;
pub mod progress;
mod report;
mod scratch;
mod stability;

use crate::exec::{self, SaveOptions};
use crate::results::StoreArg;
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use file::{Entry, Suite, What};
use hostbench_core::clock::Clock;
use hostbench_core::params::Params;
use hostbench_core::result::{Better, RunResult, Warning, WarningKind, rfc3339_utc};
use hostbench_core::runner::{INTERRUPT, StopReason};
use hostbench_hostinfo::activity;
use progress::Progress;
use report::{EntryReport, EntryWarning, FigureRef, Status, SuiteReport};
use stability::{Stats, Verdict, another_run};
use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// The built-in suites: (name, TOML).
pub const BUILTIN: &[(&str, &str)] = &[
    ("quick", include_str!("../../../../suites/quick.toml")),
    ("standard", include_str!("../../../../suites/standard.toml")),
    ("full", include_str!("../../../../suites/full.toml")),
];

/// `hostbench suite ...`.
#[derive(Debug, Args)]
#[command(
    after_help = "Built-in suites: quick (about 2 minutes: the first thing to run), \
standard (about 15 minutes: the comparisons operators publish), full (longer, larger). \
`hostbench suite quick --print > my.toml` starts a suite of your own; the format is in \
docs/suites.md. Every run is saved in the results store (see `hostbench results --help`)."
)]
pub struct SuiteArgs {
    /// A built-in suite (quick, standard, full) or a suite file (FILE.toml).
    #[arg(value_name = "quick|standard|full|FILE.toml")]
    suite: String,
    /// Summary format on stdout.
    #[arg(short, long, value_enum, default_value_t = SuiteFormat::Text)]
    format: SuiteFormat,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Check the suite and list what it would run, without running anything.
    #[arg(long, conflicts_with = "print")]
    check: bool,
    /// Print the suite's TOML (to copy and edit) and exit.
    #[arg(long)]
    print: bool,
    /// Where disk entries write their files (each in a scratch directory of its own, removed
    /// afterwards) [default: the suite's `directory`, else the current directory].
    #[arg(long, value_name = "DIR")]
    directory: Option<std::path::PathBuf>,
    /// Label for every saved result [default: the suite's `label`].
    #[arg(long, value_name = "NAME")]
    label: Option<String>,
    /// Do not save the results in the results store (also: HOSTBENCH_NO_SAVE=1).
    #[arg(long)]
    no_save: bool,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SuiteFormat {
    /// an aligned table
    Text,
    /// the suite document (docs/suites.md)
    Json,
    /// a markdown table
    #[value(alias = "md")]
    Markdown,
}

/// Finds the suite's text: a built-in name, or a file.
fn load(name: &str) -> Result<(String, String, String)> {
    let looks_like_file = name.ends_with(".toml") || name.contains('/');
    if !looks_like_file && let Some((n, text)) = BUILTIN.iter().find(|(n, _)| *n == name) {
        return Ok((text.to_string(), format!("{n}.toml"), "built-in".into()));
    }
    if !looks_like_file && !std::path::Path::new(name).exists() {
        bail!(
            "unknown suite '{name}'{}: built-in suites are {}; a suite file ends in .toml",
            hostbench_core::suggest::did_you_mean(name, BUILTIN.iter().map(|(n, _)| *n)),
            BUILTIN
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let text = std::fs::read_to_string(name).with_context(|| {
        format!("cannot read suite file {name} (give a built-in name or a readable .toml file)")
    })?;
    Ok((text, name.to_string(), name.to_string()))
}

/// Runs `hostbench suite ...`.
pub fn main(a: SuiteArgs, argv: &[String]) -> Result<ExitCode> {
    let (text, file_name, source) = load(&a.suite)?;
    if a.print {
        exec::out(&text);
        return Ok(ExitCode::SUCCESS);
    }
    let mut suite = file::parse(&text, &file_name, &source)?;
    if let Some(d) = a.directory {
        if !d.is_dir() {
            bail!(
                "--directory {}: not an existing directory; create it or name another",
                d.display()
            );
        }
        suite.directory = Some(d);
    }
    let saving = SaveOptions::new(
        a.label.or_else(|| suite.label.clone()),
        a.no_save,
        a.store.results_db,
    )?;
    if a.check {
        exec::out(&check_text(&suite));
        return Ok(ExitCode::SUCCESS);
    }
    let show = progress::wanted(a.quiet);
    let (report, code) = run(&suite, &saving, argv, show);
    exec::out(&match a.format {
        SuiteFormat::Text => report::text(&report),
        SuiteFormat::Markdown => report::markdown(&report),
        SuiteFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
    });
    Ok(code)
}

/// Seconds a run of `e` is expected to take, for the progress bar.
fn run_estimate(e: &Entry) -> f64 {
    match &e.what {
        What::Timer => 0.2,
        What::Workload { plan, .. } if plan.time_s > 0.0 => plan.time_s + plan.warmup_s + 0.3,
        // Event limits and workloads with their own quota: a guess.
        What::Workload { .. } => 2.0,
    }
}

/// `--check`: what would run.
fn check_text(s: &Suite) -> String {
    let mut out = format!(
        "suite {} ({}): {} entries, about {:.0} s at the minimum repetitions\n",
        s.name,
        s.source,
        s.entries.len(),
        s.entries
            .iter()
            .map(|e| run_estimate(e) * f64::from(e.reps.min))
            .sum::<f64>()
    );
    for (i, e) in s.entries.iter().enumerate() {
        let what = match &e.what {
            What::Timer => "probe timer".to_string(),
            What::Workload { workload, plan } => {
                let defaults =
                    Params::resolve(workload.id(), workload.params(), &[]).unwrap_or_default();
                let set: Vec<String> = plan
                    .params
                    .values()
                    .iter()
                    .filter(|(k, v)| defaults.values().get(*k) != Some(*v))
                    .map(|(k, v)| format!("{k}={}", param_text(v)))
                    .collect();
                let mut w = workload.id().to_string();
                if !set.is_empty() {
                    let _ = write!(w, " {}", set.join(" "));
                }
                let _ = write!(w, ", {} thread(s)", plan.threads);
                if plan.time_s > 0.0 {
                    let _ = write!(w, ", time {}s", plan.time_s);
                }
                if plan.events > 0 {
                    let _ = write!(w, ", {} events", plan.events);
                }
                if plan.warmup_s > 0.0 {
                    let _ = write!(w, ", warmup {}s", plan.warmup_s);
                }
                w
            }
        };
        let reps = if e.reps.min == e.reps.max {
            format!("{} run(s)", e.reps.min)
        } else {
            format!("{}..{} runs", e.reps.min, e.reps.max)
        };
        let rule = e
            .stable_rsd
            .map(|r| format!(" until spread < {r}%"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{:>3}  {}  (line {}): {what}; {reps}{rule}",
            i + 1,
            e.name,
            e.line
        );
    }
    out
}

fn param_text(v: &hostbench_core::params::Value) -> String {
    use hostbench_core::params::Value;
    match v {
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Bool(b) => if *b { "on" } else { "off" }.into(),
        Value::Text(t) => t.clone(),
    }
}

/// Per-entry accumulator.
struct Acc {
    values: Vec<f64>,
    ids: Vec<String>,
    figure: Option<FigureRef>,
    warnings: Vec<EntryWarning>,
    error: Option<String>,
    interrupted: bool,
    timer: bool,
}

impl Acc {
    fn warn(&mut self, w: &Warning) {
        match self.warnings.iter_mut().find(|x| x.kind == w.kind) {
            Some(x) => x.runs += 1,
            None => self.warnings.push(EntryWarning {
                kind: w.kind,
                message: w.message.clone(),
                runs: 1,
            }),
        }
    }
}

/// One repetition of `e`. A failed save is one WARNING line on stderr for the whole suite
/// (`save_error` remembers it) and never fails the entry.
fn one_run(
    e: &Entry,
    acc: &mut Acc,
    saving: &SaveOptions,
    argv: &[String],
    p: &Progress,
    save_error: &mut Option<String>,
) {
    match &e.what {
        What::Timer => {
            let r = hostbench_hostinfo::probe_timers(&Clock::detect());
            let Some(h) = &r.hostbench_clock else {
                acc.error = Some("the timer probe found no clock to measure".into());
                return;
            };
            acc.figure.get_or_insert(FigureRef {
                name: "clock_read_ns".into(),
                unit: "ns".into(),
                better: Better::Lower,
            });
            acc.values.push(h.read_cost_ns);
            for w in &r.warnings {
                acc.warn(&Warning {
                    kind: WarningKind::SlowClock,
                    message: w.clone(),
                });
            }
        }
        What::Workload { workload, plan } => {
            let r: RunResult =
                match exec::measure(plan, *workload, saving.label.clone(), "suite", argv) {
                    Ok(r) => r,
                    Err(err) => {
                        acc.error = Some(format!("{err:#}"));
                        return;
                    }
                };
            if let Err(err) = exec::save_silently(&r, saving)
                && save_error.is_none()
            {
                p.suspend(|| eprintln!("WARNING: the suite's results are not saved: {err:#}"));
                *save_error = Some(format!("{err:#}"));
            }
            acc.ids.push(r.id.clone());
            match r.outcome.stop_reason {
                StopReason::Interrupted => {
                    acc.interrupted = true;
                    return;
                }
                StopReason::Error | StopReason::ForcedShutdown => {
                    acc.error = Some(
                        r.outcome
                            .error
                            .clone()
                            .unwrap_or_else(|| "the run did not finish".into()),
                    );
                    return;
                }
                _ => {}
            }
            let Some(f) = r.figures.first() else {
                acc.error = Some(format!("{} reported no figure", workload.id()));
                return;
            };
            acc.figure.get_or_insert(FigureRef {
                name: f.name.clone(),
                unit: f.unit.clone(),
                better: f.better,
            });
            acc.values.push(f.value);
            // The null workloads exist to measure the harness: saying so is no warning.
            let harness_is_the_point = workload.id().starts_with("null");
            for w in &r.warnings {
                if !(harness_is_the_point && w.kind == WarningKind::HarnessDominated) {
                    acc.warn(w);
                }
            }
        }
    }
}

fn run(
    suite: &Suite,
    saving: &SaveOptions,
    argv: &[String],
    show: bool,
) -> (SuiteReport, ExitCode) {
    let t0 = Instant::now();
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let host = hostbench_hostinfo::collect();
    let estimate: f64 = suite
        .entries
        .iter()
        .map(|e| run_estimate(e) * f64::from(e.reps.min))
        .sum();
    let p = Progress::new(show, &suite.name, estimate);
    let n = suite.entries.len();
    let mut entries = Vec::with_capacity(n);
    let mut interrupted = false;
    let mut failed = false;
    let mut save_error = None;
    for (i, e) in suite.entries.iter().enumerate() {
        let mut acc = Acc {
            values: Vec::new(),
            ids: Vec::new(),
            figure: None,
            warnings: Vec::new(),
            error: None,
            interrupted: false,
            timer: matches!(e.what, What::Timer),
        };
        let est = run_estimate(e);
        let mut made = 0u32;
        // Disk entries run in a scratch directory of their own, prepared once for all
        // repetitions and cleaned up (and removed) when the entry ends.
        let scratch = match &e.what {
            What::Workload { workload, plan } if !interrupted => {
                let base = suite.directory.clone().unwrap_or_else(|| ".".into());
                p.run_started(format!("[{}/{n}] {} (prepare)", i + 1, e.name), 0.0);
                let s = scratch::Scratch::enter(&base, i, *workload, plan);
                p.run_finished();
                s
            }
            _ => Ok(None),
        };
        let _scratch = match scratch {
            Ok(s) => s,
            Err(err) => {
                acc.error = Some(format!("{err:#}"));
                None
            }
        };
        while !interrupted && acc.error.is_none() && another_run(&acc.values, e.reps, e.stable_rsd)
        {
            if INTERRUPT.load(Ordering::SeqCst) {
                interrupted = true;
                break;
            }
            made += 1;
            if made > e.reps.min {
                p.adjust(est);
            }
            p.run_started(format!("[{}/{n}] {} (run {made})", i + 1, e.name), est);
            one_run(e, &mut acc, saving, argv, &p, &mut save_error);
            p.run_finished();
            if acc.interrupted || INTERRUPT.load(Ordering::SeqCst) {
                interrupted = true;
            }
            if acc.error.is_some() || acc.interrupted {
                break;
            }
        }
        // Repetitions planned but not made (the entry failed or was interrupted).
        if made < e.reps.min {
            p.adjust(-est * f64::from(e.reps.min - made));
        }
        let status = if acc.error.is_some() {
            failed = true;
            Status::Failed
        } else if acc.interrupted || (interrupted && made == 0) {
            if made == 0 {
                Status::Skipped
            } else {
                Status::Interrupted
            }
        } else if interrupted && another_run(&acc.values, e.reps, e.stable_rsd) {
            Status::Interrupted
        } else {
            Status::Done
        };
        entries.push(finish_entry(e, acc, status));
    }
    p.finish();
    let mut notes = Vec::new();
    notes.extend(activity::governor_note(host.cpu.governor.as_deref()));
    let saved_in = if saving.enabled()
        && save_error.is_none()
        && entries.iter().any(|e| !e.result_ids.is_empty())
    {
        hostbench_store::Location::resolve(saving.results_db.as_deref())
            .ok()
            .map(|l| l.to_string())
    } else {
        None
    };
    let report = SuiteReport {
        schema: report::SCHEMA_ID,
        schema_version: report::SCHEMA_VERSION,
        suite: suite.name.clone(),
        description: suite.description.clone(),
        source: suite.source.clone(),
        label: saving.label.clone(),
        directory: suite.directory.as_ref().map(|d| d.display().to_string()),
        hostname: host.hostname.clone(),
        started_at: rfc3339_utc(started),
        duration_s: t0.elapsed().as_secs_f64(),
        interrupted,
        saved_in,
        notes,
        entries,
    };
    let code = if interrupted {
        ExitCode::from(130)
    } else if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    };
    (report, code)
}

fn finish_entry(e: &Entry, mut acc: Acc, status: Status) -> EntryReport {
    let stats = Stats::of(&acc.values);
    let verdict = stats.as_ref().map(|s| Verdict::of(s, e.stable_rsd));
    if let (Some(s), Some(v)) = (&stats, verdict)
        && v.is_wide()
    {
        let limit = e.stable_rsd.unwrap_or(stability::WIDE_SPREAD_PCT);
        acc.warnings.push(EntryWarning {
            kind: WarningKind::WideSpread,
            message: format!(
                "the {} runs spread {:.1}% (relative standard deviation; min {}, max {}), more \
                 than {limit}%: the median should not be trusted on its own. Look for other \
                 load on the machine or frequency changes, and run again with more \
                 repetitions or longer runs.",
                s.n,
                s.rsd_pct,
                report::figure(s.min),
                report::figure(s.max),
            ),
            runs: 0,
        });
    }
    let (workload, threads) = match &e.what {
        What::Workload { workload, plan } => (Some(workload.id().to_string()), Some(plan.threads)),
        What::Timer => (None, None),
    };
    EntryReport {
        name: e.name.clone(),
        workload,
        probe: acc.timer.then(|| "timer".to_string()),
        threads,
        repetitions: e.reps,
        stable_rsd: e.stable_rsd,
        status,
        figure: acc.figure,
        values: acc.values,
        stats,
        verdict,
        note: report::note(status, verdict, e.stable_rsd, stats.as_ref()),
        result_ids: acc.ids,
        warnings: acc.warnings,
        error: acc.error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_suites_are_valid() {
        for (name, text) in BUILTIN {
            let s = file::parse(text, &format!("{name}.toml"), "built-in")
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.name, *name);
            assert!(!s.description.is_empty(), "{name} has no description");
            assert!(!s.entries.is_empty());
        }
    }

    #[test]
    fn the_quick_suite_fits_in_its_budget() {
        // The estimate (time limits × repetitions at the cap) stays well inside 2 minutes, so
        // the real run has room for set-up and untimed entries.
        let (_, text) = BUILTIN[0];
        let s = file::parse(text, "quick.toml", "built-in").unwrap();
        let worst: f64 = s
            .entries
            .iter()
            .map(|e| run_estimate(e) * f64::from(e.reps.max))
            .sum();
        assert!(worst <= 110.0, "quick could take {worst:.0} s");
    }
}
