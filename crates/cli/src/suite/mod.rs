//! `hostbench suite quick|standard|full|FILE.toml`: runs a list of workloads (and probes) with
//! repetitions and a stability rule, saves every run in the results store, and ends with a
//! summary table (text, markdown or a JSON suite document).
//!
//! Order of events: the whole file is validated first (nothing runs if any entry is wrong);
//! then each entry runs until the stability rule is met or its repetitions are spent; a
//! failed run ends its entry (the suite goes on, exit 1 at the end); Ctrl-C ends the current
//! run, keeps (and saves) what finished, prints the summary and exits 128 + the signal (130 for Ctrl-C). The built-in suites
//! are the TOML files in `suites/`, embedded at build time. Nothing is written anywhere but
//! the results store.

mod file;
mod interleave;
pub mod progress;
mod report;
mod scratch;
mod stability;

use crate::exec::{self, SaveOptions};
use crate::results::StoreArg;
use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use file::{Entry, Suite, What};
use hostbench_core::civil::rfc3339_utc;
use hostbench_core::clock::Clock;
use hostbench_core::result::{Better, FigureDef, RunResult, Warning, WarningKind};
use hostbench_core::runner::{INTERRUPT, StopReason};
use hostbench_hostinfo::activity;
use progress::Progress;
use report::{EntryReport, EntryWarning, FigureRef, Status, SuiteReport};
use stability::{Stats, Verdict, another_run};
use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// The timer probe's figure: the cost of one read of hostbench's clock.
pub const CLOCK_READ_NS: FigureDef = FigureDef {
    name: "clock_read_ns",
    label: "clock read cost",
    unit: "ns",
    better: Better::Lower,
};

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
standard (about 15-20 minutes: the comparisons operators publish, each entry run often enough for `compare` to decide), full (longer, larger). \
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
    /// Compare each entry with the stored runs labelled BASELINE as it goes, and repeat it
    /// (beyond its own repetitions) until `compare` can give its headline a verdict
    /// (faster, slower or no significant difference), or --max-extra-runs is spent.
    #[arg(long, value_name = "BASELINE")]
    until_decided: Option<String>,
    /// With --until-decided: at most this many runs an entry adds to decide.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        requires = "until_decided"
    )]
    max_extra_runs: u32,
    /// With --until-decided: alternate the extra runs with runs of the baseline's own
    /// configuration of the entry (re-created from its stored run: parameters, threads,
    /// limits, directory), when the baseline ran on this machine; saved under the baseline's
    /// label. For sides that differ in what a run records (a directory, an option), not in
    /// the machine's state. See docs/suites.md.
    #[arg(long, requires = "until_decided")]
    interleave: bool,
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
    let text = hostbench_core::input::read_text(
        std::path::Path::new(name),
        "suite file",
        hostbench_core::input::SUITE_FILE_MAX,
    )
    .map_err(|e| anyhow::anyhow!("{e} (give a built-in suite name or a readable .toml file)"))?;
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
    let decide = match &a.until_decided {
        Some(label) => Some(Decide::load(
            label,
            &saving,
            a.max_extra_runs,
            a.interleave,
        )?),
        None => None,
    };
    let (report, code) = run(&suite, &saving, argv, show, decide.as_ref());
    exec::out(&match a.format {
        SuiteFormat::Text => report::text(&report),
        SuiteFormat::Markdown => report::markdown(&report),
        SuiteFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
    });
    Ok(code)
}

/// Seconds a run of `e` is expected to take, when its time limit says so; None for runs that
/// end by an event count or their own quota (fio's size, small files' count).
fn known_estimate(e: &Entry) -> Option<f64> {
    match &e.what {
        What::Timer => Some(0.2),
        What::Workload { plan, .. } if plan.time_s > 0.0 => Some(plan.time_s + plan.warmup_s + 0.3),
        What::Workload { .. } => None,
    }
}

/// Seconds a run of `e` is expected to take, for the progress bar (2 s where no time
/// limit tells: a guess the bar corrects as the run goes).
fn run_estimate(e: &Entry) -> f64 {
    known_estimate(e).unwrap_or(2.0)
}

/// `--check`: what would run, one aligned line per entry, with the time each run is expected
/// to take and the whole suite's estimate at the minimum and maximum repetitions.
fn check_text(s: &Suite) -> String {
    let at = |reps: fn(&Entry) -> u32| -> f64 {
        s.entries
            .iter()
            .filter_map(|e| Some(known_estimate(e)? * f64::from(reps(e))))
            .sum()
    };
    let untimed = s
        .entries
        .iter()
        .filter(|e| known_estimate(e).is_none())
        .count();
    let (low, high) = (at(|e| e.reps.min), at(|e| e.reps.max));
    let staged = s
        .entries
        .iter()
        .filter(|e| matches!(&e.what, What::Workload { workload, .. } if scratch::needs_scratch(*workload)))
        .count();
    let mut out = format!(
        "suite {} ({}): {} {}, about {} at the minimum repetitions, up to {} at the maximum",
        s.name,
        s.source,
        s.entries.len(),
        if s.entries.len() == 1 {
            "entry"
        } else {
            "entries"
        },
        duration_text(low),
        duration_text(high),
    );
    if untimed > 0 {
        let _ = write!(
            out,
            ", plus {untimed} entr{} with no time limit (they end by size or count: not \
             estimated)",
            if untimed == 1 { "y" } else { "ies" }
        );
    }
    if staged > 0 {
        let _ = write!(
            out,
            ", plus preparing {staged} disk/database entr{} (laying out files and tables: \
             depends on the device)",
            if staged == 1 { "y" } else { "ies" }
        );
    }
    out.push('\n');
    let rows: Vec<[String; 6]> = s
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let reps = if e.reps.min == e.reps.max {
                e.reps.min.to_string()
            } else {
                format!("{}..{}", e.reps.min, e.reps.max)
            };
            let reps = match e.stable_rsd {
                Some(r) => format!("{reps} <{r}%"),
                None => reps,
            };
            [
                (i + 1).to_string(),
                e.name.clone(),
                e.line.to_string(),
                reps,
                known_estimate(e).map_or_else(|| "size/count".into(), duration_text),
                what_text(&e.what),
            ]
        })
        .collect();
    let head = ["#", "entry", "line", "runs", "each", "what"];
    let mut width = head.map(str::len);
    for r in &rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: [&str; 6]| {
        let pad = |c: &str, w: usize| " ".repeat(w.saturating_sub(c.chars().count()));
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(width).enumerate() {
            // Numbers to the right, text to the left; the last column is not padded.
            match i {
                0 | 2 | 4 => l.push_str(&format!("{}{c}", pad(c, w))),
                5 => l.push_str(c),
                _ => l.push_str(&format!("{c}{}", pad(c, w))),
            }
            if i < 5 {
                l.push_str("  ");
            }
        }
        l.trim_end().to_string() + "\n"
    };
    out.push_str(&line(head));
    for r in &rows {
        out.push_str(&line([&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]]));
    }
    out.push_str(
        "(runs: minimum..maximum, and the stability rule: repeat until the spread is below it; \
         each: the expected length of one run)\n",
    );
    out
}

/// What an entry runs: the workload, the parameters that differ from its defaults (sizes in
/// binary units), threads and limits.
fn what_text(w: &What) -> String {
    let (workload, plan) = match w {
        What::Timer => return "probe timer".into(),
        What::Workload { workload, plan } => (workload, plan),
    };
    let defaults = workload.resolve(&[]).unwrap_or_default();
    let set: Vec<String> =
        plan.params
            .values()
            .iter()
            .filter(|(k, v)| defaults.values().get(*k) != Some(*v))
            .map(|(k, v)| {
                let size = workload.params().iter().any(|p| {
                    p.name == k.as_str() && p.kind == hostbench_core::params::ParamKind::Size
                });
                format!("{k}={}", param_text(v, size))
            })
            .collect();
    let mut t = workload.id().to_string();
    if !set.is_empty() {
        let _ = write!(t, " {}", set.join(" "));
    }
    let _ = write!(t, ", {} thread(s)", plan.threads);
    if plan.time_s > 0.0 {
        let _ = write!(t, ", time {}", duration_text(plan.time_s));
    }
    if plan.events > 0 {
        let _ = write!(t, ", {} events", plan.events);
    }
    if plan.warmup_s > 0.0 {
        let _ = write!(t, ", warmup {}", duration_text(plan.warmup_s));
    }
    t
}

/// `45 s`, `2.5 s`, `4 min`, `1 min 30 s`, `1 h 5 min`.
fn duration_text(secs: f64) -> String {
    let s = secs.max(0.0);
    if s < 10.0 && s.fract() != 0.0 {
        return format!("{} s", (s * 10.0).round() / 10.0);
    }
    let s = s.round() as u64;
    match s {
        0..90 => format!("{s} s"),
        90..3600 => {
            let (m, r) = (s / 60, s % 60);
            // Past ten minutes the seconds are noise in an estimate.
            if r == 0 || m >= 10 {
                format!("{} min", (s + 30) / 60)
            } else {
                format!("{m} min {r} s")
            }
        }
        _ => format!("{} h {} min", s / 3600, (s % 3600 + 30) / 60),
    }
}

/// A parameter as the file would write it; sizes in binary units (`4GiB`, `1.5MiB`).
fn param_text(v: &hostbench_core::params::Value, size: bool) -> String {
    use hostbench_core::params::Value;
    match v {
        Value::Int(i) if size && *i > 0 => size_text(*i as u64),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Bool(b) => if *b { "on" } else { "off" }.into(),
        Value::Text(t) => t.clone(),
    }
}

fn size_text(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut i = 0;
    while i + 1 < UNITS.len() && b >= 1u64 << (10 * (i + 1)) {
        i += 1;
    }
    let v = b as f64 / (1u64 << (10 * i)) as f64;
    if v.fract() == 0.0 {
        format!("{v}{}", UNITS[i])
    } else {
        format!("{}{}", (v * 100.0).round() / 100.0, UNITS[i])
    }
}

/// Per-entry accumulator.
struct Acc {
    values: Vec<f64>,
    ids: Vec<String>,
    /// The runs (for `--until-decided`).
    results: Vec<RunResult>,
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
/// (`save_error` remembers it) and never fails the entry. `directory`: where the entry's
/// scratch directory is (entries that write files), recorded in the result.
#[allow(clippy::too_many_arguments)]
fn one_run(
    suite: &str,
    e: &Entry,
    directory: Option<&std::path::Path>,
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
            acc.figure.get_or_insert(FigureRef::of(&CLOCK_READ_NS));
            acc.values.push(h.read_cost_ns);
            for w in &r.warnings {
                acc.warn(&Warning {
                    kind: WarningKind::SlowClock,
                    message: w.clone(),
                });
            }
        }
        What::Workload { workload, plan } => {
            let mut r: RunResult =
                match exec::measure(plan, *workload, saving.label.clone(), "suite", argv) {
                    Ok(r) => r,
                    Err(err) => {
                        acc.error = Some(format!("{err:#}"));
                        return;
                    }
                };
            // Which entry made it: compare names the variant after it.
            r.suite = Some(hostbench_core::result::SuiteRef {
                name: suite.to_string(),
                entry: e.name.clone(),
                figure: e.figure.clone(),
                directory: directory.map(|d| d.display().to_string()),
            });
            if let Err(err) = exec::save_silently(&r, saving)
                && save_error.is_none()
            {
                p.suspend(|| eprintln!("WARNING: the suite's results are not saved: {err:#}"));
                *save_error = Some(format!("{err:#}"));
            }
            acc.ids.push(r.id.clone());
            acc.results.push(r.clone());
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
            let f = match &e.figure {
                Some(name) => r.figures.iter().find(|f| &f.name == name),
                None => r.figures.first(),
            };
            let Some(f) = f else {
                acc.error = Some(match &e.figure {
                    Some(name) => format!(
                        "`figure` '{name}' (the entry at line {}) is not among this run's \
                         figures ({}); name one of them",
                        e.line,
                        r.figures
                            .iter()
                            .map(|f| f.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    None => format!("{} reported no figure", workload.id()),
                });
                return;
            };
            acc.figure.get_or_insert(FigureRef {
                name: f.name.clone(),
                label: f.label.clone(),
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

/// `--until-decided`: the baseline's stored runs, how many extra runs an entry may add, and
/// whether they alternate with re-created runs of the baseline (`--interleave`).
struct Decide {
    label: String,
    runs: Vec<RunResult>,
    max_extra: u32,
    interleave: bool,
}

impl Decide {
    fn load(label: &str, saving: &SaveOptions, max_extra: u32, interleave: bool) -> Result<Decide> {
        let loc = hostbench_store::Location::resolve(saving.results_db.as_deref())?;
        let Some(mut store) = hostbench_store::Store::open_existing(&loc)? else {
            bail!("--until-decided {label}: there is no results store at {loc} yet");
        };
        let runs = store
            .load(&hostbench_store::Filter {
                label: Some(label.to_string()),
                ..Default::default()
            })?
            .iter()
            .map(|r| r.result().map_err(anyhow::Error::from))
            .collect::<Result<Vec<_>>>()?;
        if runs.is_empty() {
            bail!(
                "--until-decided {label}: no stored run has that label (see `hostbench results list`)"
            );
        }
        if interleave && saving.label.as_deref() == Some(label) {
            bail!(
                "--interleave: this suite saves its runs under {label} too, so the baseline's \
                 re-created runs and this side's would mix; give this side another --label"
            );
        }
        Ok(Decide {
            label: label.to_string(),
            runs,
            max_extra,
            interleave,
        })
    }

    /// The verdict of `mine` (one entry's runs) against the baseline's runs (`base`) of the
    /// same variant: `None` when the baseline has none; `Some(None)` when there is no
    /// verdict yet.
    fn verdict(
        &self,
        base: &[RunResult],
        mine: &[RunResult],
    ) -> Option<(Option<hostbench_core::compare::Verdict>, f64, usize)> {
        use hostbench_core::compare::{Comparison, Options, SideInput};
        let c = Comparison::build(
            &[
                SideInput {
                    name: self.label.clone(),
                    spec: self.label.clone(),
                    runs: base.to_vec(),
                },
                SideInput {
                    name: "this run".into(),
                    spec: "this run".into(),
                    runs: mine.to_vec(),
                },
            ],
            Options::default(),
        );
        let id = &mine.first()?.id;
        let vi = c.variants.iter().position(|v| v.runs[1].contains(id))?;
        let row = c.rows.iter().find(|r| r.variant == vi)?;
        let cell = row.cells.get(1)?.as_ref()?;
        let base_runs = c.variants[vi].runs[0].len();
        Some((cell.verdict, cell.speedup.unwrap_or(f64::NAN), base_runs))
    }
}

/// One run of the baseline's re-created configuration of entry `e` (`--interleave`), saved
/// under the baseline's label. `Err` says why the interleaving stops.
fn baseline_run(
    suite: &str,
    e: &Entry,
    b: &interleave::Baseline,
    label: &str,
    saving: &SaveOptions,
    argv: &[String],
) -> std::result::Result<RunResult, String> {
    let mut r = exec::measure(&b.plan, b.workload, Some(label.to_string()), "suite", argv)
        .map_err(|err| format!("the baseline's run failed: {err:#}"))?;
    r.suite = Some(hostbench_core::result::SuiteRef {
        name: suite.to_string(),
        entry: e.name.clone(),
        figure: e.figure.clone(),
        directory: b.directory.as_ref().map(|d| d.display().to_string()),
    });
    let keep = SaveOptions {
        label: Some(label.to_string()),
        ..saving.clone()
    };
    if let Err(err) = exec::save_silently(&r, &keep) {
        eprintln!("WARNING: a run of the baseline's configuration is not saved: {err:#}");
    }
    match r.outcome.stop_reason {
        StopReason::Interrupted => Err("interrupted".into()),
        StopReason::Error | StopReason::ForcedShutdown => Err(format!(
            "the baseline's run failed: {}",
            r.outcome.error.as_deref().unwrap_or("it did not finish")
        )),
        _ => Ok(r),
    }
}

fn run(
    suite: &Suite,
    saving: &SaveOptions,
    argv: &[String],
    show: bool,
    decide: Option<&Decide>,
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
            results: Vec::new(),
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
        // The absolute directory a disk entry's scratch directory goes in (recorded in its
        // results: what --interleave re-creates).
        let entry_dir = match &e.what {
            What::Workload { workload, .. } if scratch::needs_scratch(*workload) => {
                let base = suite.directory.clone().unwrap_or_else(|| ".".into());
                Some(if base.is_absolute() {
                    base
                } else {
                    std::env::current_dir().map_or(base.clone(), |c| c.join(&base))
                })
            }
            _ => None,
        };
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
            one_run(
                &suite.name,
                e,
                entry_dir.as_deref(),
                &mut acc,
                saving,
                argv,
                &p,
                &mut save_error,
            );
            p.run_finished();
            if acc.interrupted || INTERRUPT.load(Ordering::SeqCst) {
                interrupted = true;
            }
            if acc.error.is_some() || acc.interrupted {
                break;
            }
        }
        // --until-decided: more runs while the headline has no verdict against the baseline
        // (with --interleave, each preceded by a run of the baseline's configuration).
        let mut decision = None;
        let mut base_ids: Vec<String> = Vec::new();
        // Declared after `_scratch`: dropped (cleaned up) first, back into ours.
        let mut base_scratch: Option<scratch::Scratch> = None;
        if let (Some(d), What::Workload { plan, .. }) = (decide, &e.what)
            && acc.error.is_none()
        {
            let mut base_runs = d.runs.clone();
            let mut base = None;
            let mut why_not = None;
            if d.interleave {
                match interleave::recreate(
                    &d.runs,
                    &suite.name,
                    e,
                    plan,
                    entry_dir.as_deref(),
                    &host,
                ) {
                    Ok(b) => base = Some(b),
                    Err(reason) => why_not = Some(reason),
                }
            }
            let mut extra = 0;
            loop {
                let Some((v, speedup, n_base)) = d.verdict(&base_runs, &acc.results) else {
                    decision = Some(format!(
                        "{} has no run of this entry to compare with",
                        d.label
                    ));
                    break;
                };
                use hostbench_core::compare::Verdict as V;
                let decided = matches!(v, Some(V::Faster | V::Slower | V::NoDifference));
                // Without interleaving the baseline's runs are fixed: when even the whole
                // budget of runs here could not bring the rank test below alpha, spending it
                // would decide nothing.
                let alpha = hostbench_core::compare::Options::default().alpha;
                let reachable = acc.results.len() + d.max_extra.saturating_sub(extra) as usize;
                if !decided
                    && base.is_none()
                    && hostbench_core::stats::min_p_value(n_base, reachable) >= alpha
                {
                    decision = Some(format!(
                        "vs {}: ×{speedup:.2} no verdict: {} has only {n_base} run(s) of this \
                         entry, too few for a verdict even after {} more run(s) here; run {} \
                         again with more repetitions{}",
                        d.label,
                        d.label,
                        d.max_extra.saturating_sub(extra),
                        d.label,
                        why_not
                            .as_ref()
                            .map(|w| format!(" (not interleaved: {w})"))
                            .unwrap_or_default()
                    ));
                    break;
                }
                if decided || extra >= d.max_extra || interrupted || acc.error.is_some() {
                    let what = v.map_or("no verdict", |v| v.text());
                    let runs = match (base.is_some(), extra) {
                        (true, n) => format!(
                            "{n} extra run(s) of each side, interleaved with {}'s configuration",
                            d.label
                        ),
                        (false, n) => format!("{n} extra run(s)"),
                    };
                    decision = Some(format!(
                        "vs {}: ×{speedup:.2} {what}{}{}",
                        d.label,
                        match (decided, extra) {
                            (true, 0) => String::new(),
                            (true, _) => format!(" after {runs}"),
                            (false, _) => format!(" after {runs}: the budget is spent"),
                        },
                        why_not
                            .as_ref()
                            .map(|w| format!(" (not interleaved: {w})"))
                            .unwrap_or_default()
                    ));
                    break;
                }
                if INTERRUPT.load(Ordering::SeqCst) {
                    interrupted = true;
                    continue;
                }
                extra += 1;
                if let Some(b) = &base {
                    p.adjust(est);
                    p.run_started(
                        format!("[{}/{n}] {} ({}'s configuration)", i + 1, e.name, d.label),
                        est,
                    );
                    let entered = match &base_scratch {
                        Some(s) => s.activate(),
                        None => match b.directory.as_deref() {
                            Some(dir) => scratch::Scratch::enter(dir, n + i, b.workload, &b.plan)
                                .map(|s| base_scratch = s),
                            None => Ok(()),
                        },
                    };
                    let made_base = entered
                        .map_err(|err| format!("{err:#}"))
                        .and_then(|()| baseline_run(&suite.name, e, b, &d.label, saving, argv));
                    p.run_finished();
                    match made_base {
                        Ok(r) => {
                            base_ids.push(r.id.clone());
                            base_runs.push(r);
                        }
                        Err(reason) => {
                            if INTERRUPT.load(Ordering::SeqCst) {
                                interrupted = true;
                            }
                            why_not = Some(reason);
                            base = None;
                        }
                    }
                    if let Some(s) = &_scratch
                        && let Err(err) = s.activate()
                    {
                        acc.error = Some(format!("{err:#}"));
                        continue;
                    }
                    if interrupted {
                        continue;
                    }
                }
                made += 1;
                p.adjust(est);
                p.run_started(
                    format!("[{}/{n}] {} (run {made}, deciding)", i + 1, e.name),
                    est,
                );
                one_run(
                    &suite.name,
                    e,
                    entry_dir.as_deref(),
                    &mut acc,
                    saving,
                    argv,
                    &p,
                    &mut save_error,
                );
                p.run_finished();
                if acc.interrupted || INTERRUPT.load(Ordering::SeqCst) {
                    interrupted = true;
                }
            }
        }
        drop(base_scratch);
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
        let mut entry = finish_entry(e, acc, status);
        if let Some(d) = decide.filter(|_| !base_ids.is_empty()) {
            entry.baseline_runs = Some(report::BaselineRuns {
                label: d.label.clone(),
                result_ids: base_ids,
            });
        }
        if let Some(d) = decision {
            entry.note = if entry.note.is_empty() {
                d
            } else {
                format!("{}; {d}", entry.note)
            };
        }
        entries.push(entry);
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
        crate::interrupted_exit()
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
        note: report::note(status, verdict, e.stable_rsd, stats.as_ref(), &acc.warnings),
        result_ids: acc.ids,
        baseline_runs: None,
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

    /// The suites people compare machines with repeat each entry often enough for `compare`
    /// to call a difference (4 runs per side at p < 0.05); quick is a first look (2-3 runs
    /// an entry, about two minutes) and says so in its description.
    #[test]
    fn comparison_suites_repeat_enough_for_a_verdict() {
        let need = hostbench_core::compare::min_runs_for_verdict(0.05) as u32;
        for (name, text) in BUILTIN {
            let s = file::parse(text, &format!("{name}.toml"), "built-in").unwrap();
            if *name == "quick" {
                assert!(s.description.contains("first look"), "{}", s.description);
                continue;
            }
            for e in &s.entries {
                assert!(
                    e.reps.min >= need,
                    "{name}: {} runs {}..{}",
                    e.name,
                    e.reps.min,
                    e.reps.max
                );
            }
        }
    }

    #[test]
    fn check_output_reads_as_a_table() {
        assert_eq!(size_text(128 << 20), "128MiB");
        assert_eq!(size_text(4 << 30), "4GiB");
        assert_eq!(size_text(1536 << 10), "1.5MiB");
        assert_eq!(size_text(1000), "1000B");
        assert_eq!(duration_text(2.0), "2 s");
        assert_eq!(duration_text(0.2), "0.2 s");
        assert_eq!(duration_text(95.0), "1 min 35 s");
        assert_eq!(duration_text(14.0 * 60.0 + 20.0), "14 min");
        assert_eq!(duration_text(3900.0), "1 h 5 min");
        let text = "name = \"t\"\ndescription = \"d\"\n[[entry]]\nworkload = \"fileio\"\n\
                    params = { total_size = \"256M\", test_mode = \"rndrw\" }\ntime = 5\n\
                    repetitions = 2\n[[entry]]\nname = \"a much longer entry name\"\n\
                    probe = \"timer\"\n";
        let s = file::parse(text, "t.toml", "t.toml").unwrap();
        let out = check_text(&s);
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines[0].starts_with("suite t (t.toml): 2 entries, about 11 s"),
            "{out}"
        );
        assert!(
            lines[0].contains("plus preparing 1 disk/database entry"),
            "{out}"
        );
        assert!(lines[2].contains("total_size=256MiB"), "{out}");
        assert!(lines[2].contains("time 5 s"), "{out}");
        // Columns line up: every row's `what` starts where the header's does.
        let col = lines[1].find("what").unwrap();
        assert!(lines[2][col..].starts_with("fileio"), "{out}");
        assert!(lines[3][col..].starts_with("probe timer"), "{out}");
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
