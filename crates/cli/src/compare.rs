//! `hostbench compare SIDE SIDE...` and `hostbench report SIDE... -o FILE`: resolve each side
//! (a label, a run id, or a results file) to runs, build the [`Comparison`] and render it.
//! The comparison itself lives in `hostbench_core::compare`, the output formats in
//! `hostbench_report::{compare, html}`; this file is the command line around them.
//!
//! Resolution of a side, first that applies:
//! 1. `file:PATH`, `label:NAME`, `id:ID` say which it is.
//! 2. An existing file (an export, a `--format json` result, or a JSON array of results).
//!    If a label or run id of the store is spelled the same, that is an error that says to
//!    write `file:` or `label:`/`id:`.
//! 3. A label of stored runs (exact). If it is also the start of a run id, an error asks
//!    for `label:` or `id:`.
//! 4. A run id, or a unique prefix of 4+ characters.
//!
//! These commands never add, change or remove runs; without a store only files resolve.

use crate::exec;
use crate::results::StoreArg;
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use hostbench_core::compare::{Comparison, Options, Price, SideInput};
use hostbench_core::result::RunResult;
use hostbench_store::{Filter, Location, Store, StoreError, load_file};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `hostbench compare`.
#[derive(Debug, Args)]
#[command(after_help = SIDES_HELP)]
pub struct CompareArgs {
    /// Two or more sides: labels, run ids (or unique prefixes of 4+ characters), or files
    /// written by `results export` or `--format json`. The first is the baseline.
    #[arg(required = true, num_args = 2.., value_name = "SIDE")]
    sides: Vec<String>,
    #[command(flatten)]
    common: Common,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = CompareFormat::Text)]
    format: CompareFormat,
    /// A gate for CI: exit 1 when a variant's headline figure (its first) is significantly
    /// worse on another side than on the baseline by more than PERCENT (`3%`), or a side's
    /// whole score interval is, and say which on stderr. Rows without a verdict (too few
    /// runs) are named, not failed.
    #[arg(long, value_parser = threshold, value_name = "PERCENT")]
    fail_if_slower: Option<f64>,
}

/// `hostbench report`.
#[derive(Debug, Args)]
#[command(after_help = SIDES_HELP)]
pub struct ReportArgs {
    /// One or more sides: labels, run ids (or unique prefixes), or results files. The first
    /// is the baseline.
    #[arg(required = true, num_args = 1.., value_name = "SIDE")]
    sides: Vec<String>,
    /// Write the HTML report to FILE (`-` for stdout).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Page title [default: hostbench report: A vs B ...].
    #[arg(long)]
    title: Option<String>,
    /// Add the trend of a label (or host) over time: a chart per workload variant with its
    /// changes marked, as `hostbench trend` draws it. Repeatable.
    #[arg(long = "trend", value_name = "LABEL|HOST")]
    trends: Vec<String>,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args)]
struct Common {
    /// Noise threshold: a difference of medians at or below this is never called faster
    /// or slower (`2%` or `0.02`).
    #[arg(long, default_value = "2%", value_parser = threshold, value_name = "PERCENT")]
    threshold: f64,
    /// Only runs of this workload id, or of every id of this family (`null` matches
    /// `null.loop`), or of the workload a name runs (`oltp_point_select`, `fio`, `ab`).
    #[arg(long, value_name = "ID")]
    workload: Option<String>,
    /// Score every figure, not only each variant's headline (its first figure): fileio's
    /// eight figures of one measurement then weigh eight times.
    #[arg(long)]
    all_figures: bool,
    /// A side's price, for price-performance: `SIDE=0.0725/h` (also /day, /month; a bare
    /// number is per hour). Repeatable. A side without one takes its runs' `price` note
    /// (`hostbench results annotate`).
    #[arg(long = "price", value_name = "SIDE=PRICE")]
    prices: Vec<String>,
    /// Prices from a file: CSV lines `SIDE,PRICE[,UNIT]` (`c7g,0.0725,h`; a header line
    /// `label,price,unit` is skipped) or TOML `[prices]` with `SIDE = "0.0725/h"`.
    /// `--price` wins.
    #[arg(long = "prices", value_name = "FILE")]
    prices_file: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArg,
}

const SIDES_HELP: &str = "A SIDE is, first that applies: file:PATH, label:NAME or id:ID as \
written; an existing file; a label of stored runs; a run id or unique id prefix. Runs of the \
same workload with the same parameters and threads on one side are repetitions: the median, a \
95% interval of it, and a verdict (Mann-Whitney U test, p < 0.05, and a difference above the \
noise threshold) come from them. See docs/compare.md.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CompareFormat {
    Text,
    Markdown,
    Csv,
    Json,
}

pub(crate) fn threshold(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| {
        format!("'{s}' is not a threshold: give a percentage such as 2% or a fraction such as 0.02")
    })?;
    if !(0.0..1.0).contains(&v) {
        let hint = match t.strip_suffix('%') {
            // A bare number is a fraction: `3` is 300%; say how to write 3%.
            None if (1.0..100.0).contains(&v) => {
                format!(
                    ": a number without % is a fraction; write {t}% or {}",
                    v / 100.0
                )
            }
            _ => String::new(),
        };
        return Err(format!("'{s}' is not between 0% and 100%{hint}"));
    }
    Ok(v)
}

/// How a side was given.
enum Spec<'a> {
    File(&'a str),
    Label(&'a str),
    Id(&'a str),
    Any(&'a str),
}

fn parse_spec(s: &str) -> Spec<'_> {
    if let Some(p) = s.strip_prefix("file:") {
        Spec::File(p)
    } else if let Some(l) = s.strip_prefix("label:") {
        Spec::Label(l)
    } else if let Some(i) = s.strip_prefix("id:") {
        Spec::Id(i)
    } else {
        Spec::Any(s)
    }
}

/// The runs of one side, and the name to show for it.
struct Resolved {
    name: String,
    runs: Vec<RunResult>,
}

fn results_of(runs: Vec<hostbench_store::StoredRun>) -> Result<Vec<RunResult>> {
    runs.iter()
        .map(|r| r.result().map_err(anyhow::Error::from))
        .collect()
}

fn from_file(path: &str) -> Result<Resolved> {
    let runs = results_of(load_file(Path::new(path))?)?;
    // A file whose runs share one label stands for that label.
    let labels: std::collections::BTreeSet<&str> =
        runs.iter().filter_map(|r| r.label.as_deref()).collect();
    let name = match (labels.len(), labels.iter().next()) {
        (1, Some(l)) if runs.iter().all(|r| r.label.is_some()) => l.to_string(),
        _ => Path::new(path)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.to_string()),
    };
    Ok(Resolved { name, runs })
}

fn label_runs(store: &mut Store, label: &str) -> Result<Vec<RunResult>> {
    results_of(store.load(&Filter {
        label: Some(label.to_string()),
        ..Filter::default()
    })?)
}

fn short(id: &str) -> String {
    id.chars().take(12).collect()
}

fn by_id(store: &mut Store, full: &str) -> Result<Resolved> {
    let r = store.get(full)?.result()?;
    Ok(Resolved {
        name: format!("{} {}", r.label.as_deref().unwrap_or("run"), short(&r.id)),
        runs: vec![r],
    })
}

fn no_store(spec: &str, loc: &Location) -> anyhow::Error {
    anyhow::anyhow!(
        "'{spec}' is not a file, and there is no results store at {loc} to look up labels and \
         run ids in (give --results-db, or a file written by `hostbench results export`)"
    )
}

fn resolve(spec: &str, store: &mut Option<Store>, loc: &Location) -> Result<Resolved> {
    match parse_spec(spec) {
        Spec::File(p) => from_file(p),
        Spec::Label(l) => {
            let s = store.as_mut().ok_or_else(|| no_store(spec, loc))?;
            let runs = label_runs(s, l)?;
            if runs.is_empty() {
                bail!("no stored run has the label '{l}' (see `hostbench results list`)");
            }
            Ok(Resolved {
                name: l.to_string(),
                runs,
            })
        }
        Spec::Id(i) => {
            let s = store.as_mut().ok_or_else(|| no_store(spec, loc))?;
            let full = s.resolve_id(i)?;
            by_id(s, &full)
        }
        Spec::Any(word) => {
            let is_file = Path::new(word).is_file();
            let Some(s) = store.as_mut() else {
                if is_file {
                    return from_file(word);
                }
                return Err(no_store(spec, loc));
            };
            let labelled = label_runs(s, word)?;
            // An ambiguous prefix is still an id match for the purpose of ambiguity.
            let id = match s.resolve_id(word) {
                Ok(full) => Some(Ok(full)),
                Err(StoreError::UnknownRun(_) | StoreError::ShortPrefix(_)) => None,
                Err(e @ StoreError::AmbiguousId { .. }) => Some(Err(e)),
                Err(e) => return Err(e.into()),
            };
            if is_file && (!labelled.is_empty() || id.is_some()) {
                bail!(
                    "'{word}' is both a file here and a {} in the store: write file:{word} or \
                     {}:{word}",
                    if labelled.is_empty() {
                        "run id"
                    } else {
                        "label"
                    },
                    if labelled.is_empty() { "id" } else { "label" }
                );
            }
            if is_file {
                return from_file(word);
            }
            match (labelled.is_empty(), id) {
                (false, Some(_)) => bail!(
                    "'{word}' is both a label ({} run(s)) and the start of a run id: write \
                     label:{word} or id:{word}",
                    labelled.len()
                ),
                (false, None) => Ok(Resolved {
                    name: word.to_string(),
                    runs: labelled,
                }),
                (true, Some(Ok(full))) => by_id(s, &full),
                (true, Some(Err(e))) => Err(e.into()),
                (true, None) => bail!(
                    "'{word}' is not a file, a label or a run id in the results store {loc} \
                     (see `hostbench results list`){}",
                    if word.chars().count() < 4 {
                        "; an id prefix needs at least 4 characters"
                    } else {
                        ""
                    }
                ),
            }
        }
    }
}

/// Resolves every side, applies `--workload`, and names the sides uniquely.
fn sides(specs: &[String], c: &Common) -> Result<Vec<SideInput>> {
    let loc = Location::resolve(c.store.results_db.as_deref()).context("results store")?;
    // Bare words need the store even when they name a file: to check they are not also a
    // label or a run id.
    let needs_store = specs
        .iter()
        .any(|s| !matches!(parse_spec(s), Spec::File(_)));
    let mut store = if needs_store {
        Store::open_existing(&loc)?
    } else {
        None
    };
    let mut out: Vec<SideInput> = Vec::with_capacity(specs.len());
    for spec in specs {
        let mut r = resolve(spec, &mut store, &loc).with_context(|| format!("side '{spec}'"))?;
        if let Some(w) = c.workload.as_deref().map(crate::results::workload_id) {
            let w = &w;
            r.runs.retain(|x| {
                x.workload.id == *w || x.workload.id.split('.').next() == Some(w.as_str())
            });
            if r.runs.is_empty() {
                bail!("side '{spec}' has no run of workload '{w}'");
            }
        } else if r.runs.is_empty() {
            bail!("side '{spec}' has no runs");
        }
        let mut name = r.name;
        if out.iter().any(|s| s.name == name) {
            name = format!("{name} ({spec})");
            let mut k = 2;
            while out.iter().any(|s| s.name == name) {
                name = format!("{} #{k}", r.runs[0].id.chars().take(8).collect::<String>());
                k += 1;
            }
        }
        out.push(SideInput {
            name,
            spec: spec.clone(),
            runs: r.runs,
        });
    }
    Ok(out)
}

/// The price of each side, in `sides` order: `--price`, else the prices file, else the
/// side's runs' `price` note when they agree. A `--price` for a side that is not there is
/// an error (a typo would otherwise go unnoticed); a prices file may list more machines.
fn prices(c: &Common, sides: &[SideInput]) -> Result<Vec<Option<Price>>> {
    let mut given: Vec<(String, String, &'static str)> = Vec::new();
    if let Some(f) = &c.prices_file {
        let text = hostbench_core::input::read_text(f, "a prices file", 1 << 20)
            .with_context(|| format!("--prices {}", f.display()))?;
        for (k, v) in read_prices(&text).with_context(|| format!("--prices {}", f.display()))? {
            given.push((k, v, "--prices"));
        }
    }
    for p in &c.prices {
        let Some((k, v)) = p.split_once('=') else {
            bail!("--price {p}: write SIDE=PRICE, e.g. --price c7g=0.0725/h");
        };
        if given
            .iter()
            .any(|(g, w, f)| g == k.trim() && *f == "--price" && w != v.trim())
        {
            bail!(
                "--price {}: given twice with different prices; give one",
                k.trim()
            );
        }
        given.retain(|(g, _, _)| g != k.trim());
        given.push((k.trim().to_string(), v.trim().to_string(), "--price"));
    }
    // A price list may name machines this comparison leaves out; a --price may not (a typo
    // would go unnoticed).
    for (k, _, flag) in given.iter().filter(|(_, _, f)| *f == "--price") {
        if !sides.iter().any(|s| s.name == *k || s.spec == *k) {
            bail!(
                "{flag} {k}: no side is called '{k}' (sides: {})",
                sides
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    sides
        .iter()
        .map(|s| {
            if let Some((_, v, flag)) = given.iter().find(|(k, _, _)| *k == s.name || *k == s.spec)
            {
                return Price::parse(v)
                    .map(Some)
                    .map_err(|e| anyhow::anyhow!("{flag} {}: {e}", s.name));
            }
            let notes: std::collections::BTreeSet<&str> = s
                .runs
                .iter()
                .filter_map(|r| r.annotations.get("price").map(String::as_str))
                .collect();
            match notes.into_iter().collect::<Vec<_>>()[..] {
                [one] => Price::parse(one)
                    .map(Some)
                    .map_err(|e| anyhow::anyhow!("side {}: its runs' price note {e}", s.name)),
                [] => Ok(None),
                ref several => {
                    eprintln!(
                        "WARNING: side {}: its runs' price notes disagree ({}), so it has no \
                         price; give one with --price {}=PRICE",
                        s.name,
                        several.join(", "),
                        s.name
                    );
                    Ok(None)
                }
            }
        })
        .collect()
}

/// `(side, price text)` pairs of a prices file: TOML (`[prices]` table) or CSV.
fn read_prices(text: &str) -> Result<Vec<(String, String)>> {
    if text.lines().any(|l| l.trim() == "[prices]") {
        let v: toml::Value = toml::from_str(text).context("not a TOML prices file")?;
        let table = v
            .get("prices")
            .and_then(|p| p.as_table())
            .context("a TOML prices file has a [prices] table")?;
        return table
            .iter()
            .map(|(k, v)| {
                let text = match v {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Float(f) => f.to_string(),
                    toml::Value::Integer(i) => i.to_string(),
                    _ => bail!("{k}: a price is \"0.0725/h\" or a number"),
                };
                Ok((k.clone(), text))
            })
            .collect();
    }
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if n == 0 && f.first().is_some_and(|h| h.eq_ignore_ascii_case("label")) {
            continue;
        }
        match f[..] {
            [label, price] => out.push((label.to_string(), price.to_string())),
            [label, price, unit] => out.push((
                label.to_string(),
                format!("{price}/{}", unit.trim_start_matches('/')),
            )),
            _ => bail!("line {}: write SIDE,PRICE[,UNIT] (c7g,0.0725,h)", n + 1),
        }
    }
    Ok(out)
}

fn options(c: &Common) -> Options {
    Options {
        threshold: c.threshold,
        all_figures: c.all_figures,
        rand_workloads: Some(rand_workloads()),
        size_params: Some(size_params()),
        auto_params: Some(AUTO_PARAMS),
        short_value: Some(hostbench_core::compare::ShortValue(short_value)),
        ..Options::default()
    }
}

/// A parameter's short form in variant labels: `disk.fio`'s job text as its jobs' names,
/// `rw`, `bs` and `iodepth` on one line (the whole text is a dozen lines).
pub fn short_value(
    workload: &str,
    name: &str,
    v: &hostbench_core::params::Value,
) -> Option<String> {
    match v {
        hostbench_core::params::Value::Text(t) if workload == "disk.fio" && name == "jobs" => {
            hostbench_workloads::disk::fio::jobfile::variant_summary(t)
        }
        _ => None,
    }
}

/// Parameters where 0 means "chosen at run time", with the fact that records the choice:
/// STREAM's array size.
const AUTO_PARAMS: &[(&str, &str, &str)] = &[(
    "stream",
    "array_size",
    hostbench_core::names::stream::fact::ARRAY_ELEMENTS,
)];

/// The registered workloads' byte-size parameters, `(workload, parameter)` (computed once
/// per process), so variant labels print `512.0 MiB`.
pub(crate) fn size_params() -> &'static [(&'static str, &'static str)] {
    static PAIRS: std::sync::OnceLock<Vec<(&'static str, &'static str)>> =
        std::sync::OnceLock::new();
    PAIRS.get_or_init(|| {
        hostbench_workloads::registry::WORKLOADS
            .iter()
            .flat_map(|w| {
                w.params()
                    .iter()
                    .filter(|p| p.kind == hostbench_core::params::ParamKind::Size)
                    .map(move |p| (w.id(), p.name))
            })
            .collect()
    })
}

/// The registered workloads that draw from `--rand-type` (computed once per process).
fn rand_workloads() -> &'static [&'static str] {
    static IDS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    IDS.get_or_init(|| {
        hostbench_workloads::registry::WORKLOADS
            .iter()
            .filter(|w| w.caps().rand_type)
            .map(|w| w.id())
            .collect()
    })
}

/// Runs `hostbench compare`.
pub fn compare(a: CompareArgs) -> Result<ExitCode> {
    let sides = sides(&a.sides, &a.common)?;
    let prices = prices(&a.common, &sides)?;
    let mut c = Comparison::build(&sides, options(&a.common));
    if prices.iter().any(Option::is_some) {
        c.apply_prices(&prices);
    }
    use hostbench_report::compare as r;
    exec::out(&match a.format {
        CompareFormat::Text => r::text(&c),
        CompareFormat::Markdown => r::markdown(&c),
        CompareFormat::Csv => r::csv(&c),
        CompareFormat::Json => r::json(&c),
    });
    match a.fail_if_slower {
        Some(limit) => Ok(gate(&c, limit)),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// `--fail-if-slower`: the headline rows (each variant's first) where a side is
/// significantly worse than the baseline by more than `limit`, said on stderr; exit 1 when
/// there is one. Headline rows that could not be decided (one run, too few runs) are named
/// too, so a gate that checked nothing does not pass silently unnoticed; a side with no
/// figure in common with the baseline fails it.
fn gate(c: &Comparison, limit: f64) -> ExitCode {
    use hostbench_core::compare::Verdict;
    let mut seen = std::collections::BTreeSet::new();
    let (mut slower, mut undecided) = (Vec::new(), Vec::new());
    for row in &c.rows {
        if !seen.insert(row.variant) {
            continue; // not the headline of its variant
        }
        let v = c.variant_of(row);
        let name = hostbench_report::compare::variant_name(v);
        let what = match &row.label {
            Some(l) => format!("{name} {l} ({})", row.figure),
            None => format!("{name} {}", row.figure),
        };
        for (s, cell) in row.cells.iter().enumerate().skip(1) {
            let Some(cell) = cell else { continue };
            let side = &c.sides[s].name;
            match (cell.verdict, cell.speedup) {
                (Some(Verdict::Slower), Some(sp)) if sp < 1.0 - limit => slower.push(format!(
                    "{what}: {side} is {:.1}% worse than {} (p={:.3})",
                    (1.0 - sp) * 100.0,
                    c.sides[0].name,
                    cell.p_value.unwrap_or(f64::NAN)
                )),
                (Some(Verdict::SingleRun | Verdict::TooFewRuns), _) => {
                    undecided.push(format!("{what} on {side}"))
                }
                _ => {}
            }
        }
    }
    // The score too: its whole interval below 1 - limit (significantly worse by more).
    for (s, g) in c.geomean.iter().enumerate().skip(1) {
        if let Some(g) = g
            && g.ci_hi.is_some_and(|hi| hi < 1.0 - limit)
        {
            slower.push(format!(
                "the score: {} is {:.1}% worse than {} over {} row(s) ({:.0}% interval: {:.1}% to {:.1}% worse)",
                c.sides[s].name,
                (1.0 - g.speedup) * 100.0,
                c.sides[0].name,
                g.rows,
                c.options.confidence * 100.0,
                (1.0 - g.ci_hi.unwrap_or(g.speedup)) * 100.0,
                (1.0 - g.ci_lo.unwrap_or(g.speedup)) * 100.0
            ));
        }
    }
    // A side none of whose figures met the baseline's (other parameters, other workloads):
    // the gate checked nothing there, and a gate that checks nothing fails.
    let mut unchecked = Vec::new();
    for (s, side) in c.sides.iter().enumerate().skip(1) {
        let met = c.rows.iter().any(|r| {
            r.cells.first().is_some_and(Option::is_some)
                && r.cells.get(s).is_some_and(Option::is_some)
        });
        if !met {
            unchecked.push(format!(
                "nothing of {} was compared with {}: no variant ran on both (see `not compared` above); the gate checked nothing",
                side.name, c.sides[0].name
            ));
        }
    }
    let pct = limit * 100.0;
    for u in &undecided {
        eprintln!(
            "WARNING: --fail-if-slower could not decide {u}: too few runs (run each side {} times or more)",
            hostbench_core::compare::min_runs_for_verdict(c.options.alpha)
        );
    }
    if slower.is_empty() && unchecked.is_empty() {
        eprintln!(
            "compare: no headline figure is significantly worse than the baseline by more than {pct}%"
        );
        return ExitCode::SUCCESS;
    }
    for s in slower.iter().chain(&unchecked) {
        eprintln!("FAILED: {s}");
    }
    if !slower.is_empty() {
        eprintln!(
            "compare: {} finding(s) significantly worse than the baseline by more than {pct}% (headline figures, or a side's score; --fail-if-slower)",
            slower.len()
        );
    }
    if !unchecked.is_empty() {
        eprintln!(
            "compare: {} side(s) had nothing in common with the baseline (--fail-if-slower fails a gate that checked nothing)",
            unchecked.len()
        );
    }
    ExitCode::from(1)
}

/// Runs `hostbench report`.
pub fn report(a: ReportArgs) -> Result<ExitCode> {
    let start = std::time::Instant::now();
    let sides = sides(&a.sides, &a.common)?;
    let prices = prices(&a.common, &sides)?;
    let mut c = Comparison::build(&sides, options(&a.common));
    if prices.iter().any(Option::is_some) {
        c.apply_prices(&prices);
    }
    let title = a.title.clone().unwrap_or_else(|| {
        format!(
            "hostbench report: {}",
            sides
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(" vs ")
        )
    });
    let generator = format!("hostbench {}", env!("CARGO_PKG_VERSION"));
    let mut html = hostbench_report::html::render(&hostbench_report::html::ReportInput {
        title: &title,
        comparison: &c,
        sides: sides.iter().map(|s| s.runs.as_slice()).collect(),
        generator: &generator,
    });
    if !a.trends.is_empty() {
        let mut extra = String::from("<section id=\"trends\"><h2>Trends</h2>\n");
        for (k, subject) in a.trends.iter().enumerate() {
            let t = crate::trend::load(
                subject,
                a.common.workload.as_deref(),
                None,
                None,
                None,
                a.common.threshold,
                a.common.store.results_db.as_deref(),
            )
            .with_context(|| format!("--trend {subject}"))?;
            extra.push_str(&format!(
                "<p class=\"muted\">{}: changes and outliers marked as `hostbench trend` marks them.</p>\n",
                hostbench_report::svg::esc(&t.subject)
            ));
            extra.push_str(&hostbench_report::trend::sections(&t, &format!("trend{k}")));
        }
        extra.push_str("</section>\n");
        match html.rfind("</body>") {
            Some(at) => html.insert_str(at, &extra),
            None => html.push_str(&extra),
        }
    }
    if a.output.as_os_str() == "-" {
        exec::out(&html);
        return Ok(ExitCode::SUCCESS);
    }
    crate::output::write(
        &a.output,
        html.as_bytes(),
        "-o",
        a.common.store.results_db.as_deref(),
    )?;
    let runs: usize = sides.iter().map(|s| s.runs.len()).sum();
    eprintln!(
        "wrote {} ({} KiB: {} side(s), {runs} run(s), {} row(s), {} warning(s)) in {:.0} ms",
        a.output.display(),
        html.len().div_ceil(1024),
        sides.len(),
        c.rows.len(),
        c.warnings.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse() {
        assert_eq!(threshold("2%"), Ok(0.02));
        assert_eq!(threshold("0.05"), Ok(0.05));
        assert_eq!(threshold(" 10 % "), Ok(0.1));
        assert!(threshold("abc").is_err());
        assert!(threshold("150%").is_err());
        assert!(threshold("-1%").is_err());
        // A bare number is a fraction: `3` (meant as 3%) is 300%, and the message says how
        // to write 3% rather than naming --threshold's default under --fail-if-slower.
        let e = threshold("3").unwrap_err();
        assert!(e.contains("3%") && e.contains("0.03"), "{e}");
        assert!(!e.contains("default"), "{e}");
    }
}
