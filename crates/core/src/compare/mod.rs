//! Comparing runs side by side: the model behind `hostbench compare` and `hostbench report`.
//!
//! Each *side* is a set of runs (a label, a run, a file). Runs are grouped into *variants*:
//! the same workload with the same parameters, thread count and open-loop rate. Runs of one
//! variant on one side are repetitions. A variant present on the baseline (the first side)
//! and on at least one other side is compared figure by figure ([`Row`]): median, a
//! confidence interval of the median, the ratio to the baseline, and a verdict from the
//! Mann-Whitney U test *and* a noise threshold ([`Verdict`]). Variants that cannot be
//! compared (parameters differ, missing on the baseline, on one side only) are kept with the
//! reason. A `disk.fio` run of several report blocks (jobs, clones, `group_reporting`
//! groups) adds rows job by job after its own figures ([`fio_jobs`]), matched by job name
//! and place. A geometric mean of the direction-normalised ratios sums each side up, and
//! [`Warning`]s name host or run differences that skew the comparison.
//!
//! Invariants: building a comparison never panics on any input; the order of sides is the
//! order given (the first is the baseline); the order of runs within a side does not change
//! any figure; everything here is data (JSON: `schemas/compare.v1.json`), rendering lives in
//! `hostbench-report`.

use crate::params::{Params, Value};
use crate::result::{Better, Figure, RunResult};
use crate::stats;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

pub mod fio_jobs;
mod price;
mod score;
mod warnings;
pub use warnings::{TIMER_COST_RATIO, timer_cost_ns, timer_costs_differ};

use warnings::warnings;

/// Value of the `schema` field.
pub const SCHEMA_ID: &str = "hostbench.compare";
/// Current schema version.
pub const SCHEMA_VERSION: u32 = 1;

/// How the comparison decides.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Options {
    /// Noise threshold: a relative difference of medians at or below this (0.02 = 2 %) is
    /// never called a difference, however significant.
    pub threshold: f64,
    /// Significance level of the rank test (0.05).
    pub alpha: f64,
    /// Confidence level of the intervals of the median and of the score (0.95).
    pub confidence: f64,
    /// Score every figure (`--all-figures`), not only each variant's headline.
    #[serde(default)]
    pub all_figures: bool,
    /// The workloads that draw from `--rand-type` ([`Caps::rand_type`]); a difference in the
    /// random distribution is only a warning for those. `None` = warn for every workload (the
    /// caller does not know the registry).
    ///
    /// [`Caps::rand_type`]: crate::workload::Caps::rand_type
    #[serde(skip)]
    pub rand_workloads: Option<&'static [&'static str]>,
    /// The `(workload, parameter)` pairs that are byte sizes, printed as `512.0 MiB` in
    /// variant labels instead of 536870912 (the caller knows the registry); `None` = print
    /// every number as it is.
    #[serde(skip)]
    pub size_params: Option<&'static [(&'static str, &'static str)]>,
    /// The `(workload, parameter, fact)` triples where 0 means "chosen automatically" and
    /// the fact holds what was chosen (STREAM's `array_size` and `array_elements`): variant
    /// labels print `auto (45000000)` instead of 0.
    #[serde(skip)]
    pub auto_params: Option<&'static [(&'static str, &'static str, &'static str)]>,
    /// A parameter value's short form in variant labels, `(workload, parameter, value)` →
    /// text, for values too long for a label (`disk.fio`'s job text: one line per job
    /// file); `None` (or an answer of `None`) = [`value_text`], a multi-line text's lines
    /// joined by `; `.
    #[serde(skip)]
    pub short_value: Option<ShortValue>,
    /// Keep failed runs' figures in the rows (`trend`, which shows them unjudged); `compare`
    /// leaves them out: a failed run measured nothing.
    #[serde(skip)]
    pub keep_failed: bool,
}

/// [`Options::short_value`]: `(workload, parameter, value)` → the value's short form, if
/// the workload has one. Options with any two are equal (a way of printing, not a setting).
#[derive(Debug, Clone, Copy)]
pub struct ShortValue(pub fn(&str, &str, &Value) -> Option<String>);

impl PartialEq for ShortValue {
    fn eq(&self, _other: &ShortValue) -> bool {
        true
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            threshold: 0.02,
            alpha: 0.05,
            confidence: 0.95,
            all_figures: false,
            rand_workloads: None,
            size_params: None,
            auto_params: None,
            short_value: None,
            keep_failed: false,
        }
    }
}

/// One side as given: a name and its runs.
#[derive(Debug, Clone)]
pub struct SideInput {
    /// What to call the side (a label, or what the user typed).
    pub name: String,
    /// What the user typed to select it.
    pub spec: String,
    /// The runs.
    pub runs: Vec<RunResult>,
}

/// A whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Always `hostbench.compare`.
    pub schema: String,
    /// Schema version (1).
    pub schema_version: u32,
    /// How verdicts were decided.
    pub options: Options,
    /// The sides, baseline first.
    pub sides: Vec<Side>,
    /// Workload variants seen on any side, compared or not.
    pub variants: Vec<Variant>,
    /// One row per compared variant and figure.
    pub rows: Vec<Row>,
    /// Per side: the geometric mean of the direction-normalised ratios to the baseline over
    /// the rows both have; `null` for the baseline and for a side with no such row.
    pub geomean: Vec<Option<GeoMean>>,
    /// With three or more sides: the sides ranked by score, with their ties
    /// ([`Comparison::ranking`]); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranking: Vec<Rank>,
    /// Per side: its price and what it buys ([`Comparison::apply_prices`]); empty when no
    /// side has a price.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub price_performance: Vec<Option<PricePerformance>>,
    /// What differs between the sides in ways that skew the comparison.
    pub warnings: Vec<Warning>,
}

/// A side's summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// Display name (unique within the comparison).
    pub name: String,
    /// What the user typed.
    pub spec: String,
    /// Number of runs.
    pub runs: usize,
    /// Host names of its runs (distinct, sorted).
    pub hosts: Vec<String>,
    /// hostbench versions of its runs (distinct, sorted).
    pub tool_versions: Vec<String>,
    /// The notes the user added to its runs (`results annotate`), `key=value`, distinct and
    /// sorted; a key whose runs disagree shows each value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A workload with one set of parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    /// Workload id.
    pub workload: String,
    /// The settings that tell this variant from others of the same workload
    /// (`threads=2, max_prime=20000`), always starting with the thread count; or, for runs
    /// a suite made, the suite entry's name (`cpu 20000, 1 thread`).
    pub label: String,
    /// The suite entry every run of the variant came from, when they all did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// Every workload parameter.
    pub params: Params,
    /// Worker threads.
    pub threads: usize,
    /// Open-loop rate, events/s (0 = closed loop).
    pub rate_per_s: f64,
    /// Run ids per side (same order as `sides`), oldest first.
    pub runs: Vec<Vec<String>>,
    /// Whether rows compare it.
    pub compared: bool,
    /// Why not, when not compared.
    pub reason: Option<String>,
}

/// One figure of one variant across the sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Index into `variants`.
    pub variant: usize,
    /// Figure name (`events_per_s`): the key rows are matched on.
    pub figure: String,
    /// What the figure is, in words (`event rate`): the first label any run of the row
    /// carries; `null` when none does (results written before labels, schema 1.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Unit as printed.
    pub unit: String,
    /// Which way is better.
    pub better: Better,
    /// Per side (same order as `sides`); `null` where the side has no value.
    pub cells: Vec<Option<Cell>>,
}

/// A figure's repetitions on one side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Runs with this figure.
    pub n: usize,
    /// Their values, oldest run first.
    pub values: Vec<f64>,
    /// Median.
    pub median: f64,
    /// Order-statistic confidence interval of the median; `null` with too few runs.
    pub ci: Option<Ci>,
    /// Relative standard deviation (sample stddev / mean); `null` for one run.
    pub rsd: Option<f64>,
    /// Median over the baseline's median; `null` on the baseline.
    pub ratio: Option<f64>,
    /// `ratio` turned so that above 1 is better (the inverse for lower-is-better figures).
    pub speedup: Option<f64>,
    /// Two-sided p-value of the Mann-Whitney U test against the baseline's runs.
    pub p_value: Option<f64>,
    /// Whether the p-value is exact (or the normal approximation).
    pub p_exact: Option<bool>,
    /// The verdict against the baseline; `null` on the baseline.
    pub verdict: Option<Verdict>,
}

/// A confidence interval of the median.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ci {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// Confidence it actually has (order statistics give discrete levels).
    pub level: f64,
}

/// What a side's runs say against the baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significantly better (p < alpha) and by more than the noise threshold.
    Faster,
    /// Significantly worse and by more than the noise threshold.
    Slower,
    /// Not significant, or within the noise threshold.
    NoDifference,
    /// One side has a single run: a ratio, no verdict.
    SingleRun,
    /// Both sides repeat, but too few times for the test to ever reach alpha.
    TooFewRuns,
}

impl Verdict {
    /// How the verdict reads in tables.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoDifference => "no significant difference",
            Verdict::SingleRun => "single run, no verdict",
            Verdict::TooFewRuns => "too few runs for a verdict",
        }
    }
}

/// How many runs a row without a verdict would need ([`Comparison::runs_needed`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunsNeeded {
    /// The observed relative difference of the medians.
    pub observed: f64,
    /// Runs per side to find it (when it is above the noise threshold).
    pub for_observed: Option<usize>,
    /// Runs per side to find a 5 % difference.
    pub for_5_percent: Option<usize>,
    /// Runs now: (baseline, side).
    pub have: (usize, usize),
}

/// A side's score against the baseline: the geometric mean of its speedups over the
/// headline rows both have enough runs of (see `score.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GeoMean {
    /// Geometric mean of the rows' speedups (above 1: better than the baseline).
    pub speedup: f64,
    /// Rows it covers.
    pub rows: usize,
    /// Lower end of its confidence interval (bootstrap over runs); `None` when it could
    /// not be formed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_lo: Option<f64>,
    /// Upper end of its confidence interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_hi: Option<f64>,
    /// Rows of both sides left out for too few runs ([`MIN_RUNS_FOR_SCORE`]).
    #[serde(default)]
    pub rows_left_out: usize,
}

pub use price::{HOURS_PER_MONTH, PerPrice, Price, PricePerformance};
pub use score::{BOOTSTRAP_ROUNDS, MIN_RUNS_FOR_INTERVAL, MIN_RUNS_FOR_SCORE, Rank};

/// Kinds of comparison warning; stable snake_case names in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// The current clocksources differ.
    Clocksource,
    /// One clock read costs more than twice as much on one side.
    TimerCost,
    /// Virtualization differs (or is present on one side only).
    Virtualization,
    /// Transparent hugepage settings differ.
    TransparentHugepages,
    /// cpufreq governors differ.
    Governor,
    /// Different hostbench versions measured.
    ToolVersion,
    /// Variants whose parameters differ between the sides were not compared.
    Params,
    /// Compared runs differ in run length, warmup or random distribution.
    RunSettings,
    /// One side's runs come from several hosts.
    MixedHosts,
    /// Some runs did not end normally.
    IncompleteRuns,
    /// Some runs were measured on a busy or unsettled host (other load, steal, swapping).
    NoisyRuns,
    /// Too few repetitions for verdicts.
    FewRuns,
    /// Two sides share runs (`compare Q Q`): a run compared with itself says nothing.
    SameRuns,
}

/// Something that makes the comparison less fair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    /// Kind.
    pub kind: WarningKind,
    /// What differs, per side, and why it matters.
    pub message: String,
}

/// The figures of a run: its own, or (results saved before figures existed) the defaults.
pub fn run_figures(r: &RunResult) -> Vec<Figure> {
    if r.figures.is_empty() {
        r.default_figures()
    } else {
        r.figures.clone()
    }
}

/// The figures rows are made of: the run's own ([`run_figures`]), then, for a `disk.fio`
/// run of several report blocks, each block's per direction ([`fio_jobs::job_figures`]).
pub fn compared_figures(r: &RunResult) -> Vec<Figure> {
    let mut f = run_figures(r);
    f.extend(fio_jobs::job_figures(r));
    f
}

/// What makes runs repetitions of one another.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Key {
    workload: String,
    params: String,
    threads: usize,
    rate_bits: u64,
}

impl Key {
    fn of(r: &RunResult) -> Key {
        Key {
            workload: r.workload.id.clone(),
            params: serde_json::to_string(&r.workload.params).unwrap_or_default(),
            threads: r.config.threads,
            rate_bits: r.config.rate_per_s.to_bits(),
        }
    }
}

/// A parameter value as a person writes it.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f}"),
        Value::Bool(b) => if *b { "on" } else { "off" }.to_string(),
        Value::Text(t) => t.clone(),
    }
}

impl Comparison {
    /// Compares `sides` (the first is the baseline).
    pub fn build(sides: &[SideInput], opts: Options) -> Comparison {
        let nsides = sides.len();
        // Variants in order of first appearance, baseline first; runs per side in the
        // order given.
        let mut keys: Vec<Key> = Vec::new();
        let mut members: BTreeMap<Key, Vec<Vec<&RunResult>>> = BTreeMap::new();
        for (s, side) in sides.iter().enumerate() {
            for r in &side.runs {
                let k = Key::of(r);
                let slot = members.entry(k.clone()).or_insert_with(|| {
                    keys.push(k.clone());
                    vec![Vec::new(); nsides]
                });
                slot[s].push(r);
            }
        }
        let mut variants = Vec::with_capacity(keys.len());
        // Per variant: what each automatically chosen parameter was (distinct values of its
        // runs, joined by `|` when the runs chose differently).
        let mut autos: Vec<BTreeMap<String, String>> = Vec::with_capacity(keys.len());
        let mut rows = Vec::new();
        for k in &keys {
            let per_side = &members[k];
            let any = per_side.iter().flatten().next().expect("a key has a run");
            let present: Vec<usize> = (0..nsides).filter(|&s| !per_side[s].is_empty()).collect();
            // With one side (a report of one machine) every variant gets its rows, with
            // medians and intervals but nothing to compare against.
            let (compared, reason) = if nsides < 2 {
                (true, None)
            } else if !present.contains(&0) {
                (
                    false,
                    Some(format!(
                        "not run on the baseline ({}){}",
                        sides[0].name,
                        differing_params(k, &keys, &members, 0, sides, &opts)
                    )),
                )
            } else if present.len() < 2 {
                let others: Vec<String> = (1..nsides)
                    .map(|s| {
                        format!(
                            "{}{}",
                            sides[s].name,
                            differing_params(k, &keys, &members, s, sides, &opts)
                        )
                    })
                    .collect();
                (
                    false,
                    Some(format!(
                        "only on the baseline; not on {}",
                        others.join("; ")
                    )),
                )
            } else {
                (true, None)
            };
            let vi = variants.len();
            // The suite entry (and its figure) when every run of the variant came from one.
            let suite: BTreeSet<Option<(&str, Option<&str>)>> = per_side
                .iter()
                .flatten()
                .map(|r| {
                    r.suite
                        .as_ref()
                        .map(|x| (x.entry.as_str(), x.figure.as_deref()))
                })
                .collect();
            let entry = match suite.into_iter().collect::<Vec<_>>()[..] {
                [Some(e)] => Some(e),
                _ => None,
            };
            let mut auto = BTreeMap::new();
            for (w, param, fact) in opts.auto_params.unwrap_or(&[]) {
                if *w != k.workload
                    || any.workload.params.values().get(*param) != Some(&Value::Int(0))
                {
                    continue;
                }
                let chosen: BTreeSet<String> = per_side
                    .iter()
                    .flatten()
                    .filter_map(|r| r.workload.facts.get(*fact))
                    .map(|f| format!("{f}"))
                    .collect();
                if !chosen.is_empty() {
                    auto.insert(
                        param.to_string(),
                        chosen.into_iter().collect::<Vec<_>>().join("|"),
                    );
                }
            }
            autos.push(auto);
            variants.push(Variant {
                workload: k.workload.clone(),
                label: String::new(),
                entry: entry.map(|(e, _)| e.to_string()),
                params: any.workload.params.clone(),
                threads: k.threads,
                rate_per_s: f64::from_bits(k.rate_bits),
                runs: per_side
                    .iter()
                    .map(|rs| rs.iter().map(|r| r.id.clone()).collect())
                    .collect(),
                compared,
                reason,
            });
            if compared {
                let mut r = figure_rows(vi, per_side, &opts);
                if let Some((_, figure)) = entry {
                    // A suite entry: its figure (named, else the first) is the headline,
                    // and the only row unless every figure was asked for.
                    if let Some(i) = figure.and_then(|f| r.iter().position(|x| x.figure == f)) {
                        let head = r.remove(i);
                        r.insert(0, head);
                    }
                    if !opts.all_figures {
                        r.truncate(1);
                    }
                }
                rows.extend(r);
            }
        }
        label_variants(&mut variants, &opts, &autos);
        let scored = score::score_rows(&rows, opts.all_figures);
        let geomean = (0..nsides)
            .map(|s| {
                if s == 0 {
                    return None;
                }
                score::score(&scored, s, &opts)
            })
            .collect();
        let mut c = Comparison {
            schema: SCHEMA_ID.into(),
            schema_version: SCHEMA_VERSION,
            options: opts,
            sides: sides
                .iter()
                .map(|s| Side {
                    name: s.name.clone(),
                    spec: s.spec.clone(),
                    runs: s.runs.len(),
                    hosts: distinct(s.runs.iter().map(|r| {
                        r.host
                            .as_ref()
                            .map(|h| h.hostname.clone())
                            .unwrap_or_else(|| "unknown".into())
                    })),
                    tool_versions: distinct(s.runs.iter().map(tool_text)),
                    notes: distinct(
                        s.runs
                            .iter()
                            .flat_map(|r| r.annotations.iter().map(|(k, v)| format!("{k}={v}"))),
                    ),
                })
                .collect(),
            variants,
            rows,
            geomean,
            price_performance: Vec::new(),
            ranking: Vec::new(),
            warnings: Vec::new(),
        };
        c.warnings = warnings(&c, sides, &members, &keys);
        c.ranking = c.ranking();
        c
    }

    /// How many of the rows a score would cover (headlines, or all with `all_figures`)
    /// side `s` and the baseline share but have too few runs of to count
    /// ([`MIN_RUNS_FOR_SCORE`]).
    pub fn rows_left_out(&self, s: usize) -> usize {
        score::left_out(&score::score_rows(&self.rows, self.options.all_figures), s)
    }

    /// Whether every side's score covers the same number of rows (else the scores are over
    /// different rows, and not comparable with each other).
    pub fn scores_cover_the_same_rows(&self) -> bool {
        let counts: std::collections::BTreeSet<usize> =
            self.geomean.iter().flatten().map(|g| g.rows).collect();
        counts.len() <= 1
    }

    /// For a row without a verdict for side `s` (no significant difference, too few runs):
    /// the observed relative difference and the runs per side a rank test would need to
    /// find it, and to find a 5 % difference, at the two sides' larger spread (80 % power;
    /// [`stats::runs_needed`]). `None` with a single run on a side (no spread yet) or when
    /// the row has a verdict.
    pub fn runs_needed(&self, row: &Row, s: usize) -> Option<RunsNeeded> {
        let (b, x) = (row.cells.first()?.as_ref()?, row.cells.get(s)?.as_ref()?);
        if matches!(x.verdict, Some(Verdict::Faster | Verdict::Slower) | None) {
            return None;
        }
        let rsd = b.rsd?.max(x.rsd?);
        let observed = (x.speedup? - 1.0).abs();
        let alpha = self.options.alpha;
        Some(RunsNeeded {
            observed,
            for_observed: (observed > self.options.threshold)
                .then(|| stats::runs_needed(rsd, observed, alpha, 0.8))
                .flatten(),
            for_5_percent: stats::runs_needed(rsd, 0.05, alpha, 0.8),
            have: (b.n, x.n),
        })
    }

    /// The variant a row belongs to.
    pub fn variant_of(&self, row: &Row) -> &Variant {
        &self.variants[row.variant]
    }
}

/// ` (parameters differ: max_prime 10000 there)` when side `s` ran the same workload with
/// other parameters, else empty.
fn differing_params(
    k: &Key,
    keys: &[Key],
    members: &BTreeMap<Key, Vec<Vec<&RunResult>>>,
    s: usize,
    sides: &[SideInput],
    opts: &Options,
) -> String {
    let mine = members[k].iter().flatten().next().expect("a key has a run");
    let mut diffs = BTreeSet::new();
    for other in keys
        .iter()
        .filter(|o| o.workload == k.workload && *o != k && !members[*o][s].is_empty())
    {
        let theirs = members[other][s][0];
        for d in setting_diffs(mine, theirs, opts) {
            diffs.insert(d);
        }
    }
    if diffs.is_empty() {
        if sides.len() > s && !sides[s].runs.is_empty() {
            String::new()
        } else {
            " (no runs)".into()
        }
    } else {
        format!(
            ", where it ran with other parameters: {}",
            diffs.into_iter().collect::<Vec<_>>().join(", ")
        )
    }
}

/// `name mine→theirs` for every setting that tells two runs' variants apart.
fn setting_diffs(a: &RunResult, b: &RunResult, opts: &Options) -> Vec<String> {
    let mut d = Vec::new();
    if a.config.threads != b.config.threads {
        d.push(format!("threads {}→{}", a.config.threads, b.config.threads));
    }
    if a.config.rate_per_s != b.config.rate_per_s {
        d.push(format!(
            "rate {}→{}",
            a.config.rate_per_s, b.config.rate_per_s
        ));
    }
    let (pa, pb) = (a.workload.params.values(), b.workload.params.values());
    let names: BTreeSet<&String> = pa.keys().chain(pb.keys()).collect();
    for n in names {
        let (x, y) = (pa.get(n), pb.get(n));
        if x != y {
            let t = |v: Option<&Value>| {
                v.map(|v| param_text(opts, &a.workload.id, n, v))
                    .unwrap_or_else(|| "unset".into())
            };
            let (tx, ty) = (t(x), t(y));
            match (x, y) {
                // Short forms that coincide (`disk.fio`'s job texts differing only in a
                // `filename`) say nothing: the lines that differ, with their section.
                (Some(Value::Text(p)), Some(Value::Text(q))) if tx == ty => {
                    d.push(format!(
                        "{n} {}→{}",
                        lines_only_in(p, q),
                        lines_only_in(q, p)
                    ));
                }
                _ => d.push(format!("{n} {tx}→{ty}")),
            }
        }
    }
    d
}

/// The non-empty lines of `a` that `b` lacks, each after the `[section]` it is in, joined by
/// `; ` (`[j] filename=a.dat`); `(none)` when every line of `a` is in `b`.
fn lines_only_in(a: &str, b: &str) -> String {
    let theirs: BTreeSet<(&str, &str)> = sectioned_lines(b).collect();
    let out: Vec<String> = sectioned_lines(a)
        .filter(|l| !theirs.contains(l))
        .map(|(sec, l)| {
            if sec.is_empty() || sec == l {
                l.to_string()
            } else {
                format!("{sec} {l}")
            }
        })
        .collect();
    if out.is_empty() {
        "(none)".into()
    } else {
        out.join("; ")
    }
}

/// `(section header, line)` for every trimmed non-empty line of `t`.
fn sectioned_lines(t: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut sec = "";
    t.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(move |l| {
            if l.starts_with('[') {
                sec = l;
            }
            (sec, l)
        })
}

/// A parameter's value as labels print it: a byte size (per [`Options::size_params`]) as
/// `512.0 MiB`, anything else as [`value_text`].
fn param_text(opts: &Options, workload: &str, name: &str, v: &Value) -> String {
    let size = opts
        .size_params
        .is_some_and(|l| l.iter().any(|(a, b)| *a == workload && *b == name));
    if let Some(t) = opts.short_value.and_then(|f| (f.0)(workload, name, v)) {
        return t;
    }
    match v {
        Value::Int(b) if *b >= 0 && size => crate::units::Bytes(*b as u64).to_string(),
        // A label is one line.
        Value::Text(t) if t.contains('\n') => t
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; "),
        _ => value_text(v),
    }
}

/// Fills each variant's label: the thread count, the rate if open loop, and every
/// parameter whose value differs among the variants of the same workload.
fn label_variants(variants: &mut [Variant], opts: &Options, autos: &[BTreeMap<String, String>]) {
    let text = |vi: usize, w: &str, n: &str, v: &Value| match v {
        Value::Int(0) if autos.get(vi).is_some_and(|a| a.contains_key(n)) => {
            format!("auto ({})", autos[vi][n])
        }
        _ => param_text(opts, w, n, v),
    };
    let mut varying: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut seen: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for v in variants.iter() {
        let per = seen.entry(v.workload.clone()).or_default();
        for (name, val) in v.params.values() {
            per.entry(name.clone()).or_default().insert(value_text(val));
        }
    }
    for (w, per) in seen {
        let names = per
            .into_iter()
            .filter(|(_, vals)| vals.len() > 1)
            .map(|(n, _)| n)
            .collect();
        varying.insert(w, names);
    }
    for (vi, v) in variants.iter_mut().enumerate() {
        let mut parts = vec![format!("threads={}", v.threads)];
        if v.rate_per_s > 0.0 {
            parts.push(format!("rate={}/s", v.rate_per_s));
        }
        if let Some(names) = varying.get(&v.workload) {
            for n in names {
                let val = v
                    .params
                    .values()
                    .get(n)
                    .map(|x| text(vi, &v.workload, n, x))
                    .unwrap_or_else(|| "unset".into());
                parts.push(format!("{n}={val}"));
            }
        }
        v.label = match &v.entry {
            Some(e) => e.clone(),
            None => parts.join(", "),
        };
    }
    // A short form can leave two variants of a workload with one label (fio jobs that
    // differ in an option the short form leaves out): each gets a tag of its parameters,
    // the same for the same parameters whatever the order of the runs.
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for v in variants.iter() {
        *seen
            .entry((v.workload.clone(), v.label.clone()))
            .or_default() += 1;
    }
    for v in variants.iter_mut() {
        if seen[&(v.workload.clone(), v.label.clone())] > 1 && v.entry.is_none() {
            let text = serde_json::to_string(&v.params).unwrap_or_default();
            // FNV-1a: stable across builds and platforms.
            let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
            });
            v.label = format!("{} [params {:04x}]", v.label, h & 0xffff);
        }
    }
}

/// The rows of one compared variant.
fn figure_rows(variant: usize, per_side: &[Vec<&RunResult>], opts: &Options) -> Vec<Row> {
    // Figure names in order of first appearance, baseline first; unit and direction from
    // the first run that has the figure, its label from the first run that has one (a run
    // stored before labels existed has none).
    let mut order: Vec<(String, Option<String>, String, Better)> = Vec::new();
    let mut values: Vec<BTreeMap<String, Vec<f64>>> = vec![BTreeMap::new(); per_side.len()];
    for (s, runs) in per_side.iter().enumerate() {
        // A failed run's figures measure nothing (a fio job that ended with an error keeps
        // its 0 IOPS): left out of the rows, and named in the warnings. An interrupted run
        // keeps its figures over the part it ran.
        for r in runs.iter().filter(|r| {
            opts.keep_failed || r.outcome.stop_reason != crate::runner::StopReason::Error
        }) {
            for f in compared_figures(r) {
                match order.iter_mut().find(|(n, ..)| *n == f.name) {
                    None => order.push((f.name.clone(), f.label.clone(), f.unit.clone(), f.better)),
                    Some((_, label @ None, ..)) => label.clone_from(&f.label),
                    Some(_) => {}
                }
                if f.value.is_finite() {
                    values[s].entry(f.name).or_default().push(f.value);
                }
            }
        }
    }
    order
        .into_iter()
        .map(|(name, label, unit, better)| {
            let base = values[0].get(&name).cloned().unwrap_or_default();
            let base_median = stats::median(&base);
            let cells = values
                .iter()
                .enumerate()
                .map(|(s, m)| {
                    let v = m.get(&name)?;
                    Some(cell(v, s == 0, &base, base_median, better, opts))
                })
                .collect();
            Row {
                variant,
                figure: name,
                label,
                unit,
                better,
                cells,
            }
        })
        .collect()
}

fn cell(
    v: &[f64],
    is_base: bool,
    base: &[f64],
    base_median: Option<f64>,
    better: Better,
    opts: &Options,
) -> Cell {
    let median = stats::median(v).unwrap_or(f64::NAN);
    let ci = stats::median_ci(v, opts.confidence).map(|i| Ci {
        lo: i.lo,
        hi: i.hi,
        level: i.level,
    });
    let mut c = Cell {
        n: v.len(),
        values: v.to_vec(),
        median,
        ci,
        rsd: stats::relative_stddev(v),
        ratio: None,
        speedup: None,
        p_value: None,
        p_exact: None,
        verdict: None,
    };
    if is_base {
        return c;
    }
    let Some(bm) = base_median else {
        return c;
    };
    if bm != 0.0 && bm.is_finite() && median.is_finite() {
        let ratio = median / bm;
        c.ratio = Some(ratio);
        c.speedup = match better {
            Better::Higher => Some(ratio),
            Better::Lower if ratio > 0.0 => Some(1.0 / ratio),
            Better::Lower => None,
        };
    }
    if let Some(t) = stats::mann_whitney_u(base, v) {
        c.p_value = Some(t.p);
        c.p_exact = Some(t.exact);
    }
    c.verdict = Some(if base.len() < 2 || v.len() < 2 {
        Verdict::SingleRun
    } else if stats::min_p_value(base.len(), v.len()) >= opts.alpha {
        Verdict::TooFewRuns
    } else {
        match (c.p_value, c.ratio, c.speedup) {
            (Some(p), Some(ratio), Some(sp))
                if p < opts.alpha && (ratio - 1.0).abs() > opts.threshold =>
            {
                if sp > 1.0 {
                    Verdict::Faster
                } else {
                    Verdict::Slower
                }
            }
            _ => Verdict::NoDifference,
        }
    });
    c
}

fn distinct(it: impl Iterator<Item = String>) -> Vec<String> {
    it.collect::<BTreeSet<_>>().into_iter().collect()
}

fn tool_text(r: &RunResult) -> String {
    match &r.tool.git_hash {
        Some(h) if !h.is_empty() => {
            format!(
                "{} ({})",
                r.tool.version,
                h.chars().take(9).collect::<String>()
            )
        }
        _ => r.tool.version.clone(),
    }
}

/// The smallest equal number of runs per side with which the exact rank test can reach
/// `alpha`.
pub fn min_runs_for_verdict(alpha: f64) -> usize {
    (2..=64)
        .find(|&n| stats::min_p_value(n, n) < alpha)
        .unwrap_or(64)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal run of `workload` with one figure per `(name, value)`, built through JSON
    /// so the test follows the schema rather than the struct literal.
    pub(crate) fn run(id: &str, workload: &str, threads: usize, figs: &[(&str, f64)]) -> RunResult {
        let figures: Vec<serde_json::Value> = figs
            .iter()
            .map(|(n, v)| {
                serde_json::json!({"name": n, "unit": "events/s", "value": v,
                    "better": if n.ends_with("_ns") { "lower" } else { "higher" }})
            })
            .collect();
        let j = serde_json::json!({
            "schema": "hostbench.result", "schema_version": 1, "id": id,
            "tool": {"name": "hostbench", "version": "0.1.0", "git_hash": null},
            "started_at": "2026-01-01T00:00:00.000Z", "label": null,
            "workload": {"id": workload, "category": "cpu", "params": {"max_prime": 10000}, "facts": {}},
            "config": {"threads": threads, "time_limit_s": 10.0, "event_limit": 0, "warmup_s": 0.0,
                "rate_per_s": 0.0, "report_interval_s": 0.0, "percentiles": [95.0],
                "rand": {"type": "uniform"}, "seed": 1, "grammar": "native",
                "command_line": ["hostbench", "run", workload]},
            "clock": {"source": "monotonic", "ticks_per_s": 1e9, "read_cost_ns": 20.0},
            "host": null,
            "outcome": {"stop_reason": "time_limit", "unfinished_events": 0, "error": null},
            "metrics": {"duration_s": 10.0, "events": 100, "events_per_s": 10.0,
                "counters": {}, "counters_per_s": {}},
            "latency": {"count": 0, "min_ns": 0, "avg_ns": 0, "max_ns": 0, "sum_ns": 0,
                "stddev_ns": 0.0, "percentiles": [], "hdr_histogram": ""},
            "fairness": {"events_avg": 0.0, "events_stddev": 0.0, "exec_time_avg_s": 0.0,
                "exec_time_stddev_s": 0.0, "per_thread": []},
            "intervals": [], "warnings": [], "figures": figures,
        });
        serde_json::from_value(j).expect("a valid result")
    }

    pub(crate) fn side(name: &str, runs: Vec<RunResult>) -> SideInput {
        SideInput {
            name: name.into(),
            spec: name.into(),
            runs,
        }
    }

    pub(crate) fn reps(prefix: &str, vals: &[f64]) -> Vec<RunResult> {
        vals.iter()
            .enumerate()
            .map(|(i, v)| run(&format!("{prefix}{i}"), "cpu", 1, &[("events_per_s", *v)]))
            .collect()
    }

    pub(crate) const BASE: [f64; 6] = [100.0, 101.0, 99.5, 100.4, 99.8, 100.9];

    #[test]
    fn identical_sides_show_no_difference() {
        let c = Comparison::build(
            &[side("a", reps("a", &BASE)), side("b", reps("b", &BASE))],
            Options::default(),
        );
        assert_eq!(c.rows.len(), 1);
        let cell = c.rows[0].cells[1].as_ref().unwrap();
        assert_eq!(cell.verdict, Some(Verdict::NoDifference));
        assert_eq!(cell.ratio, Some(1.0));
        assert!(cell.p_value.unwrap() > 0.9);
        assert!(c.rows[0].cells[0].as_ref().unwrap().ci.is_some());
        assert_eq!(c.geomean[1].unwrap().speedup, 1.0);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn a_2x_shift_is_found_in_both_directions() {
        let doubled: Vec<f64> = BASE.iter().map(|v| v * 2.0).collect();
        let c = Comparison::build(
            &[side("a", reps("a", &BASE)), side("b", reps("b", &doubled))],
            Options::default(),
        );
        let cell = c.rows[0].cells[1].as_ref().unwrap();
        assert_eq!(cell.verdict, Some(Verdict::Faster));
        assert!((cell.ratio.unwrap() - 2.0).abs() < 1e-9);
        assert!((c.geomean[1].unwrap().speedup - 2.0).abs() < 1e-9);
        // Lower is better for latencies: twice the latency is slower, speedup 0.5.
        let lat = |p: &str, vals: &[f64]| -> Vec<RunResult> {
            vals.iter()
                .enumerate()
                .map(|(i, v)| run(&format!("{p}{i}"), "cpu", 1, &[("latency_avg_ns", *v)]))
                .collect()
        };
        let c = Comparison::build(
            &[side("a", lat("a", &BASE)), side("b", lat("b", &doubled))],
            Options::default(),
        );
        let cell = c.rows[0].cells[1].as_ref().unwrap();
        assert_eq!(cell.verdict, Some(Verdict::Slower));
        assert!((cell.speedup.unwrap() - 0.5).abs() < 1e-9);
    }

    /// A failed run (a fio job that ended with an error, 0 IOPS) is not a repetition: its
    /// figures stay out of the rows, so the median is of the runs that measured.
    #[test]
    fn failed_runs_stay_out_of_the_rows() {
        let mut bad = run("a3", "cpu", 1, &[("events_per_s", 0.0)]);
        bad.outcome.stop_reason = crate::runner::StopReason::Error;
        let a = vec![
            run("a1", "cpu", 1, &[("events_per_s", 4000.0)]),
            run("a2", "cpu", 1, &[("events_per_s", 4063.0)]),
            bad,
        ];
        let c = Comparison::build(&[side("a", a)], Options::default());
        let cell = c.rows[0].cells[0].as_ref().unwrap();
        assert_eq!(cell.n, 2);
        assert_eq!(cell.median, 4031.5);
        assert!(
            c.warnings
                .iter()
                .any(|w| w.message.contains("a3") && w.message.contains("left out")),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn threshold_and_run_counts_decide() {
        // About 3 % better, consistently: significant and above the 2 % default threshold,
        // but inside a 5 % one.
        let up: Vec<f64> = BASE.iter().map(|v| v * 1.01 + 2.0).collect();
        let c = Comparison::build(
            &[side("a", reps("a", &BASE)), side("b", reps("b", &up))],
            Options::default(),
        );
        let cell = c.rows[0].cells[1].as_ref().unwrap();
        assert!(cell.p_value.unwrap() < 0.05);
        assert_eq!(cell.verdict, Some(Verdict::Faster), "3 % up");
        let c = Comparison::build(
            &[side("a", reps("a", &BASE)), side("b", reps("b", &up))],
            Options {
                threshold: 0.05,
                ..Options::default()
            },
        );
        let cell = c.rows[0].cells[1].as_ref().unwrap();
        assert_eq!(cell.verdict, Some(Verdict::NoDifference));
        // One run: a ratio, no verdict; three against three: too few.
        let c = Comparison::build(
            &[
                side("a", reps("a", &[100.0])),
                side("b", reps("b", &[150.0])),
            ],
            Options::default(),
        );
        let cell = c.rows[0].cells[1].as_ref().unwrap();
        assert_eq!(cell.verdict, Some(Verdict::SingleRun));
        assert_eq!(cell.ratio, Some(1.5));
        assert!(c.warnings.iter().any(|w| w.kind == WarningKind::FewRuns));
        let c = Comparison::build(
            &[
                side("a", reps("a", &[100.0, 101.0, 102.0])),
                side("b", reps("b", &[200.0, 201.0, 202.0])),
            ],
            Options::default(),
        );
        let cell = c.rows[0].cells[1].as_ref().unwrap();
        assert_eq!(cell.verdict, Some(Verdict::TooFewRuns));
        assert_eq!(min_runs_for_verdict(0.05), 4);
    }

    #[test]
    fn differing_params_are_listed_not_compared() {
        let a = vec![run("a1", "cpu", 1, &[("events_per_s", 10.0)])];
        let mut b1 = run("b1", "cpu", 1, &[("events_per_s", 20.0)]);
        b1.workload.params =
            serde_json::from_value(serde_json::json!({"max_prime": 20000})).unwrap();
        let b2 = run("b2", "cpu", 2, &[("events_per_s", 30.0)]);
        let a2 = run("a2", "cpu", 2, &[("events_per_s", 15.0)]);
        let c = Comparison::build(
            &[side("a", [a, vec![a2]].concat()), side("b", vec![b1, b2])],
            Options::default(),
        );
        // threads=2 is compared; max_prime 10000 (a) and 20000 (b) are not.
        assert_eq!(c.rows.len(), 1);
        assert_eq!(c.variant_of(&c.rows[0]).threads, 2);
        let not: Vec<&Variant> = c.variants.iter().filter(|v| !v.compared).collect();
        assert_eq!(not.len(), 2, "{:?}", c.variants);
        assert!(not.iter().all(|v| v.label.contains("max_prime=")));
        assert!(
            not[0]
                .reason
                .as_deref()
                .unwrap()
                .contains("max_prime 10000→20000"),
            "{:?}",
            not[0].reason
        );
        assert!(c.warnings.iter().any(|w| w.kind == WarningKind::Params));
    }

    /// Two job texts whose short forms coincide (they differ in a filename only): the
    /// reason names the lines that differ, not `j rw=read→j rw=read` (a user review).
    #[test]
    fn texts_alike_in_short_form_name_the_lines_that_differ() {
        fn short(_: &str, _: &str, v: &Value) -> Option<String> {
            match v {
                Value::Text(t) => t.lines().next().map(String::from),
                _ => None,
            }
        }
        let with = |id: &str, text: &str| {
            let mut r = run(id, "disk.fio", 1, &[("iops", 10.0)]);
            r.workload.params =
                serde_json::from_value(serde_json::json!({ "jobs": text })).unwrap();
            r
        };
        let c = Comparison::build(
            &[
                side("a", vec![with("a1", "[j]\nrw=read\nfilename=a.dat\n")]),
                side(
                    "b",
                    vec![with("b1", "[j]\nrw=read\nfilename=b.dat\nbs=8k\n")],
                ),
            ],
            Options {
                short_value: Some(ShortValue(short)),
                ..Options::default()
            },
        );
        let not: Vec<&Variant> = c.variants.iter().filter(|v| !v.compared).collect();
        let why = not[0].reason.as_deref().unwrap();
        assert!(
            why.contains("jobs [j] filename=a.dat→[j] filename=b.dat; [j] bs=8k"),
            "{why}"
        );
    }

    #[test]
    fn empty_and_odd_input_does_not_panic() {
        let c = Comparison::build(&[], Options::default());
        assert!(c.rows.is_empty());
        let c = Comparison::build(&[side("a", vec![]), side("b", vec![])], Options::default());
        assert!(c.rows.is_empty() && c.geomean == vec![None, None]);
        let mut odd = reps("a", &[0.0, 1.0]);
        odd[1].figures[0].value = f64::NAN;
        let c = Comparison::build(
            &[
                side("a", odd),
                side("b", reps("b", &[1.0])),
                side("c", vec![]),
            ],
            Options::default(),
        );
        assert_eq!(c.rows.len(), 1);
        assert_eq!(c.rows[0].cells[1].as_ref().unwrap().ratio, None);
        assert!(c.rows[0].cells[2].is_none());
        let only = Comparison::build(&[side("a", reps("a", &[1.0, 2.0]))], Options::default());
        assert_eq!(only.rows.len(), 1);
        assert_eq!(only.rows[0].cells[0].as_ref().unwrap().median, 1.5);
        assert_eq!(only.geomean, vec![None]);
        assert!(only.warnings.is_empty());
    }
}
