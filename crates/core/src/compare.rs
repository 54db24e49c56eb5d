//! Comparing runs side by side: the model behind `hostbench compare` and `hostbench report`.
//!
//! Each *side* is a set of runs (a label, a run, a file). Runs are grouped into *variants*:
//! the same workload with the same parameters, thread count and open-loop rate. Runs of one
//! variant on one side are repetitions. A variant present on the baseline (the first side)
//! and on at least one other side is compared figure by figure ([`Row`]): median, a
//! confidence interval of the median, the ratio to the baseline, and a verdict from the
//! Mann-Whitney U test *and* a noise threshold ([`Verdict`]). Variants that cannot be
//! compared (parameters differ, missing on the baseline, on one side only) are kept with the
//! reason. A geometric mean of the direction-normalised ratios sums each side up, and
//! [`Warning`]s name host or run differences that skew the comparison.
//!
//! Invariants: building a comparison never panics on any input; the order of sides is the
//! order given (the first is the baseline); the order of runs within a side does not change
//! any figure; everything here is data (JSON: `schemas/compare.v1.json`), rendering lives in
//! `hostbench-report`.

use crate::params::{Params, Value};
use crate::result::{Better, Figure, RunResult};
use crate::runner::StopReason;
use crate::stats;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

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
    /// Confidence level of the intervals of the median (0.95).
    pub confidence: f64,
    /// The workloads that draw from `--rand-type` ([`Caps::rand_type`]); a difference in the
    /// random distribution is only a warning for those. `None` = warn for every workload (the
    /// caller does not know the registry).
    ///
    /// [`Caps::rand_type`]: crate::workload::Caps::rand_type
    #[serde(skip)]
    pub rand_workloads: Option<&'static [&'static str]>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            threshold: 0.02,
            alpha: 0.05,
            confidence: 0.95,
            rand_workloads: None,
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
}

/// A workload with one set of parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    /// Workload id.
    pub workload: String,
    /// The settings that tell this variant from others of the same workload
    /// (`threads=2, max_prime=20000`); always starts with the thread count.
    pub label: String,
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
    /// Figure name (`events_per_s`).
    pub figure: String,
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

/// A side's summary against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GeoMean {
    /// Geometric mean of the rows' speedups (above 1: better than the baseline).
    pub speedup: f64,
    /// Rows it covers.
    pub rows: usize,
}

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
}

/// Something that makes the comparison less fair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    /// Kind.
    pub kind: WarningKind,
    /// What differs, per side, and why it matters.
    pub message: String,
}

/// Run warnings that describe the host rather than the workload.
fn is_host_noise(k: crate::result::WarningKind) -> bool {
    use crate::result::WarningKind as K;
    matches!(k, K::NoisyHost | K::StealTime | K::SwapActivity)
}

/// The figures of a run: its own, or (results saved before figures existed) the defaults.
pub fn run_figures(r: &RunResult) -> Vec<Figure> {
    if r.figures.is_empty() {
        r.default_figures()
    } else {
        r.figures.clone()
    }
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

/// Seconds as a person writes them (`10 s`, `0.5 s`).
fn secs(s: f64) -> String {
    format!("{s} s")
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
                        differing_params(k, &keys, &members, 0, sides)
                    )),
                )
            } else if present.len() < 2 {
                let others: Vec<String> = (1..nsides)
                    .map(|s| {
                        format!(
                            "{}{}",
                            sides[s].name,
                            differing_params(k, &keys, &members, s, sides)
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
            variants.push(Variant {
                workload: k.workload.clone(),
                label: String::new(),
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
                rows.extend(figure_rows(vi, per_side, &opts));
            }
        }
        label_variants(&mut variants);
        let geomean = (0..nsides)
            .map(|s| {
                if s == 0 {
                    return None;
                }
                let sp: Vec<f64> = rows
                    .iter()
                    .filter(|r| r.cells[0].is_some())
                    .filter_map(|r| r.cells[s].as_ref()?.speedup)
                    .collect();
                Some(GeoMean {
                    speedup: stats::geomean(&sp)?,
                    rows: sp.len(),
                })
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
                })
                .collect(),
            variants,
            rows,
            geomean,
            warnings: Vec::new(),
        };
        c.warnings = warnings(&c, sides, &members, &keys);
        c
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
) -> String {
    let mine = members[k].iter().flatten().next().expect("a key has a run");
    let mut diffs = BTreeSet::new();
    for other in keys
        .iter()
        .filter(|o| o.workload == k.workload && *o != k && !members[*o][s].is_empty())
    {
        let theirs = members[other][s][0];
        for d in setting_diffs(mine, theirs) {
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
fn setting_diffs(a: &RunResult, b: &RunResult) -> Vec<String> {
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
            let t = |v: Option<&Value>| v.map(value_text).unwrap_or_else(|| "unset".into());
            d.push(format!("{n} {}→{}", t(x), t(y)));
        }
    }
    d
}

/// Fills each variant's label: the thread count, the rate if open loop, and every
/// parameter whose value differs among the variants of the same workload.
fn label_variants(variants: &mut [Variant]) {
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
    for v in variants.iter_mut() {
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
                    .map(value_text)
                    .unwrap_or_else(|| "unset".into());
                parts.push(format!("{n}={val}"));
            }
        }
        v.label = parts.join(", ");
    }
}

/// The rows of one compared variant.
fn figure_rows(variant: usize, per_side: &[Vec<&RunResult>], opts: &Options) -> Vec<Row> {
    // Figure names in order of first appearance, baseline first; unit and direction from
    // the first run that has the figure.
    let mut order: Vec<(String, String, Better)> = Vec::new();
    let mut values: Vec<BTreeMap<String, Vec<f64>>> = vec![BTreeMap::new(); per_side.len()];
    for (s, runs) in per_side.iter().enumerate() {
        for r in runs {
            for f in run_figures(r) {
                if !order.iter().any(|(n, _, _)| *n == f.name) {
                    order.push((f.name.clone(), f.unit.clone(), f.better));
                }
                if f.value.is_finite() {
                    values[s].entry(f.name).or_default().push(f.value);
                }
            }
        }
    }
    order
        .into_iter()
        .map(|(name, unit, better)| {
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

fn warnings(
    c: &Comparison,
    sides: &[SideInput],
    members: &BTreeMap<Key, Vec<Vec<&RunResult>>>,
    keys: &[Key],
) -> Vec<Warning> {
    let mut w = Vec::new();
    let mut push = |kind, message: String| w.push(Warning { kind, message });
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
        let cost: Vec<Option<f64>> = sides
            .iter()
            .map(|s| {
                let v: Vec<f64> = s.runs.iter().map(|r| r.clock.read_cost_ns).collect();
                stats::median(&stats::finite(&v)).filter(|c| *c > 0.0)
            })
            .collect();
        let known: Vec<f64> = cost.iter().flatten().copied().collect();
        if let (Some(lo), Some(hi)) = (
            known.iter().copied().reduce(f64::min),
            known.iter().copied().reduce(f64::max),
        ) && hi > 2.0 * lo
        {
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
            let on = *r.workload.facts.get("db_tls")?;
            Some(if on > 0.0 {
                match r.workload.facts.get("db_tls_version") {
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
        // What the runs themselves said about the host while they ran.
        let noisy: Vec<&RunResult> = side
            .runs
            .iter()
            .filter(|r| r.warnings.iter().any(|w| is_host_noise(w.kind)))
            .collect();
        if let Some(first) = noisy.first() {
            let example = first
                .warnings
                .iter()
                .find(|w| is_host_noise(w.kind))
                .map(|w| w.message.as_str())
                .unwrap_or("");
            push(
                WarningKind::NoisyRuns,
                format!(
                    "{} of {}'s {} runs were measured on a busy or unsettled host, so a \
                     difference may come from the host's load rather than the machine; e.g. \
                     \"{example}\"",
                    noisy.len(),
                    side.name,
                    side.runs.len(),
                ),
            );
        }
        if !bad.is_empty() {
            push(
                WarningKind::IncompleteRuns,
                format!(
                    "{} of {}'s runs did not end normally (interrupted, failed or shut down: \
                     {}); their figures cover part of a run",
                    bad.len(),
                    side.name,
                    bad.join(", ")
                ),
            );
        }
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
    use crate::host::HostInfo;

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

    fn side(name: &str, runs: Vec<RunResult>) -> SideInput {
        SideInput {
            name: name.into(),
            spec: name.into(),
            runs,
        }
    }

    fn reps(prefix: &str, vals: &[f64]) -> Vec<RunResult> {
        vals.iter()
            .enumerate()
            .map(|(i, v)| run(&format!("{prefix}{i}"), "cpu", 1, &[("events_per_s", *v)]))
            .collect()
    }

    const BASE: [f64; 6] = [100.0, 101.0, 99.5, 100.4, 99.8, 100.9];

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
