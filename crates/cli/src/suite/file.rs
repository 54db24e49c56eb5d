//! Suite files (TOML): parsing and validation into runnable [`Suite`]s.
//!
//! Everything is checked before anything runs: TOML syntax, unknown keys, unknown workloads
//! and parameters, values out of range, plans that would never end. Every error names the
//! file, line and column of the offending value (spans from the `toml` crate) and says what
//! would be accepted. The format is described in `docs/suites.md`.

use super::stability::Reps;
use hostbench_core::params::Params;
use hostbench_core::plan::Plan;
use hostbench_core::rand::Distribution;
use hostbench_core::units::parse_seconds;
use hostbench_core::workload::Workload;
use hostbench_workloads::{WORKLOADS, find};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;
use toml::{Spanned, Value};

/// Percentiles every suite run records (the native command line's default).
const PERCENTILES: [f64; 4] = [50.0, 95.0, 99.0, 99.9];
/// Most repetitions an entry may ask for.
const MAX_REPETITIONS: i64 = 1000;
/// Probes: measurements that are not registry workloads.
pub const PROBES: &[&str] = &["timer"];

/// A validated suite, ready to run.
#[derive(Debug)]
pub struct Suite {
    /// `name` from the file.
    pub name: String,
    /// `description` from the file.
    pub description: String,
    /// Where it came from: `built-in` or the path given.
    pub source: String,
    /// Label for every saved result, unless `--label` overrides it.
    pub label: Option<String>,
    /// Directory for disk tests (checked to exist): each disk entry runs in a scratch
    /// directory of its own inside it.
    pub directory: Option<PathBuf>,
    /// The entries, in order.
    pub entries: Vec<Entry>,
}

/// One line of the suite's summary: a workload (or probe) with its repetitions.
#[derive(Debug)]
pub struct Entry {
    /// Display name.
    pub name: String,
    /// Line of its `[[entry]]` header in the file.
    pub line: usize,
    /// What runs.
    pub what: What,
    /// How many times.
    pub reps: Reps,
    /// Stop repeating once the headline's relative standard deviation is below this, percent.
    pub stable_rsd: Option<f64>,
    /// The figure the entry tracks (its headline), by name; `None`: the workload's first.
    pub figure: Option<String>,
}

/// What an entry runs.
pub enum What {
    /// A registry workload with a complete plan.
    Workload {
        /// The workload.
        workload: &'static dyn Workload,
        /// Its plan (seed 0: a fresh seed per run).
        plan: Box<Plan>,
    },
    /// `hostbench timer`: what one read of hostbench's clock costs.
    Timer,
}

impl std::fmt::Debug for What {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            What::Workload { workload, plan } => f
                .debug_struct("Workload")
                .field("workload", &workload.id())
                .field("plan", plan)
                .finish(),
            What::Timer => f.write_str("Timer"),
        }
    }
}

/// A problem in a suite file, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteError {
    /// The file as the user named it (or `quick.toml` for a built-in).
    pub file: String,
    /// 1-based line and column, when the problem has a place.
    pub at: Option<(usize, usize)>,
    /// What is wrong and what would be accepted.
    pub message: String,
}

impl std::fmt::Display for SuiteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at {
            Some((l, c)) => write!(f, "{}:{l}:{c}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for SuiteError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    name: Spanned<String>,
    #[serde(default)]
    description: String,
    label: Option<Spanned<String>>,
    directory: Option<Spanned<String>>,
    defaults: Option<RawSettings>,
    #[serde(default)]
    entry: Vec<Spanned<RawEntry>>,
}

/// Keys shared by `[defaults]` and every `[[entry]]`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSettings {
    threads: Option<Spanned<Value>>,
    time: Option<Spanned<Value>>,
    events: Option<Spanned<Value>>,
    warmup: Option<Spanned<Value>>,
    repetitions: Option<Spanned<Value>>,
    stable_rsd: Option<Spanned<Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    name: Option<Spanned<String>>,
    workload: Option<Spanned<String>>,
    probe: Option<Spanned<String>>,
    params: Option<BTreeMap<Spanned<String>, Spanned<Value>>>,
    threads: Option<Spanned<Value>>,
    time: Option<Spanned<Value>>,
    events: Option<Spanned<Value>>,
    warmup: Option<Spanned<Value>>,
    repetitions: Option<Spanned<Value>>,
    stable_rsd: Option<Spanned<Value>>,
    figure: Option<Spanned<String>>,
}

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn err(&self, span: Range<usize>, message: impl Into<String>) -> SuiteError {
        SuiteError {
            file: self.file.to_string(),
            at: Some(line_col(self.text, span.start)),
            message: message.into(),
        }
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before, |i| &before[i + 1..])
        .chars()
        .count()
        + 1;
    (line, col)
}

/// The general settings of a run, after defaults.
#[derive(Debug, Clone)]
struct Settings {
    threads: usize,
    time_s: f64,
    events: u64,
    warmup_s: f64,
    reps: Reps,
    stable_rsd: Option<f64>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            threads: 1,
            time_s: 10.0,
            events: 0,
            warmup_s: 0.0,
            reps: Reps { min: 3, max: 3 },
            stable_rsd: None,
        }
    }
}

/// Parses and validates suite `text`; `file` names it in errors, `source` says where it came
/// from (`built-in` or a path).
pub fn parse(text: &str, file: &str, source: &str) -> Result<Suite, SuiteError> {
    let cx = Ctx { file, text };
    let raw: RawSuite = toml::from_str(text).map_err(|e| SuiteError {
        file: file.to_string(),
        at: e.span().map(|s| line_col(text, s.start)),
        message: e.message().trim().to_string(),
    })?;
    let name = raw.name.get_ref().trim().to_string();
    if name.is_empty() {
        return Err(cx.err(raw.name.span(), "`name` must not be empty"));
    }
    let label = match raw.label {
        Some(l) => {
            let v = l.get_ref();
            if v.trim().is_empty()
                || v.chars().any(char::is_control)
                || v.chars().count() > hostbench_core::input::LABEL_MAX_CHARS
            {
                return Err(cx.err(
                    l.span(),
                    "`label` needs a non-empty name of at most 200 characters without control \
                     characters, e.g. label = \"graviton3\"",
                ));
            }
            Some(v.clone())
        }
        None => None,
    };
    let directory = match raw.directory {
        Some(d) => {
            let p = PathBuf::from(d.get_ref());
            if !p.is_dir() {
                return Err(cx.err(
                    d.span(),
                    format!(
                        "`directory` {:?} is not an existing directory; create it or name \
                         another (disk tests write their files there)",
                        d.get_ref()
                    ),
                ));
            }
            Some(p)
        }
        None => None,
    };
    let mut defaults = Settings::default();
    if let Some(d) = &raw.defaults {
        apply(&cx, &mut defaults, d)?;
    }
    if raw.entry.is_empty() {
        return Err(SuiteError {
            file: file.to_string(),
            at: None,
            message: "the suite has no entries; add at least one [[entry]] with a `workload` \
                      (see `hostbench list`) or `probe = \"timer\"`"
                .into(),
        });
    }
    let mut entries: Vec<Entry> = Vec::with_capacity(raw.entry.len());
    for e in &raw.entry {
        let entry = build_entry(&cx, &defaults, e)?;
        if entries.iter().any(|x| x.name == entry.name) {
            return Err(cx.err(
                e.get_ref().name.as_ref().map_or(e.span(), |n| n.span()),
                format!(
                    "two entries are named '{}'; give each a distinct `name`",
                    entry.name
                ),
            ));
        }
        entries.push(entry);
    }
    Ok(Suite {
        name,
        description: raw.description.trim().to_string(),
        source: source.to_string(),
        label,
        directory,
        entries,
    })
}

fn settings_of(e: &RawEntry) -> RawSettings {
    RawSettings {
        threads: e.threads.clone(),
        time: e.time.clone(),
        events: e.events.clone(),
        warmup: e.warmup.clone(),
        repetitions: e.repetitions.clone(),
        stable_rsd: e.stable_rsd.clone(),
    }
}

fn build_entry(
    cx: &Ctx<'_>,
    defaults: &Settings,
    e: &Spanned<RawEntry>,
) -> Result<Entry, SuiteError> {
    let span = e.span();
    let line = line_col(cx.text, span.start).0;
    let r = e.get_ref();
    let mut s = defaults.clone();
    let raw_settings = settings_of(r);
    apply(cx, &mut s, &raw_settings)?;
    let what = match (&r.workload, &r.probe) {
        (Some(w), Some(p)) => {
            return Err(cx.err(
                p.span(),
                format!(
                    "an entry has either `workload` or `probe`, not both (workload '{}')",
                    w.get_ref()
                ),
            ));
        }
        (None, None) => {
            return Err(cx.err(
                span,
                format!(
                    "this entry names no `workload` (one of {}) and no `probe` (one of {})",
                    workload_ids(),
                    PROBES.join(", ")
                ),
            ));
        }
        (None, Some(p)) => {
            if p.get_ref() != "timer" {
                return Err(cx.err(
                    p.span(),
                    format!(
                        "unknown probe '{}'; probes: {}",
                        p.get_ref(),
                        PROBES.join(", ")
                    ),
                ));
            }
            // A probe has no threads, limits or parameters; say so rather than ignore them.
            let stray = [
                (
                    "params",
                    r.params.as_ref().map(|m| first_key_span(m, &span)),
                ),
                ("threads", r.threads.as_ref().map(Spanned::span)),
                ("time", r.time.as_ref().map(Spanned::span)),
                ("events", r.events.as_ref().map(Spanned::span)),
                ("warmup", r.warmup.as_ref().map(Spanned::span)),
                ("figure", r.figure.as_ref().map(Spanned::span)),
            ];
            if let Some((key, Some(sp))) = stray.into_iter().find(|(_, sp)| sp.is_some()) {
                return Err(cx.err(sp, format!("the timer probe takes no `{key}`; remove it")));
            }
            What::Timer
        }
        (Some(w), None) => {
            let Some(workload) = find(w.get_ref()) else {
                let hint = if PROBES.contains(&w.get_ref().as_str()) {
                    format!(
                        " ('{}' is a probe: write probe = \"{}\")",
                        w.get_ref(),
                        w.get_ref()
                    )
                } else {
                    String::new()
                };
                return Err(cx.err(
                    w.span(),
                    format!(
                        "unknown workload '{}'{hint}; workloads: {} (see `hostbench list`)",
                        w.get_ref(),
                        workload_ids()
                    ),
                ));
            };
            let plan = build_plan(cx, workload, r, &s)?;
            What::Workload {
                workload,
                plan: Box::new(plan),
            }
        }
    };
    let name = match &r.name {
        Some(n) if n.get_ref().trim().is_empty() => {
            return Err(cx.err(n.span(), "`name` must not be empty"));
        }
        Some(n) => n.get_ref().trim().to_string(),
        None => match &what {
            What::Timer => "timer".into(),
            What::Workload { workload, plan } => {
                format!("{}, {} thread(s)", workload.id(), plan.threads)
            }
        },
    };
    Ok(Entry {
        name,
        line,
        what,
        reps: s.reps,
        stable_rsd: s.stable_rsd,
        figure: match &r.figure {
            Some(f) if !is_figure_name(f.get_ref()) => {
                return Err(cx.err(
                    f.span(),
                    format!(
                        "`figure` '{}' is not a figure name: names are snake_case with their \
                         unit, e.g. figure = \"read_bytes_per_s\" (`hostbench compare` lists \
                         a workload's figures)",
                        f.get_ref()
                    ),
                ));
            }
            Some(f) => Some(f.get_ref().clone()),
            None => None,
        },
    })
}

fn is_figure_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn first_key_span(
    m: &BTreeMap<Spanned<String>, Spanned<Value>>,
    or: &Range<usize>,
) -> Range<usize> {
    m.keys()
        .map(Spanned::span)
        .min_by_key(|s| s.start)
        .unwrap_or_else(|| or.clone())
}

fn workload_ids() -> String {
    WORKLOADS
        .iter()
        .map(|w| w.id())
        .collect::<Vec<_>>()
        .join(", ")
}

fn build_plan(
    cx: &Ctx<'_>,
    w: &'static dyn Workload,
    r: &RawEntry,
    s: &Settings,
) -> Result<Plan, SuiteError> {
    let mut overrides = Vec::new();
    if let Some(params) = &r.params {
        // In file order, so the first bad one is the one reported.
        let mut items: Vec<_> = params.iter().collect();
        items.sort_by_key(|(k, _)| k.span().start);
        for (k, v) in items {
            let text = param_text(cx, k.get_ref(), v)?;
            let pair = (k.get_ref().clone(), text);
            w.resolve(std::slice::from_ref(&pair)).map_err(|e| {
                let at = match e {
                    hostbench_core::params::ParamError::Unknown { .. } => k.span(),
                    hostbench_core::params::ParamError::Invalid { .. } => v.span(),
                };
                cx.err(at, e.to_string())
            })?;
            overrides.push(pair);
        }
    }
    let params = w
        .resolve(&overrides)
        .map_err(|e| cx.err(0..0, e.to_string()))?;
    let mut plan = Plan::new(w.id(), params);
    plan.threads = s.threads;
    plan.time_s = s.time_s;
    plan.events = s.events;
    plan.warmup_s = s.warmup_s;
    plan.percentiles = PERCENTILES.to_vec();
    plan.rand = Distribution::Uniform;
    let where_ = r.workload.as_ref().map_or(0..0, |w| w.span());
    plan.validate()
        .map_err(|e| cx.err(where_.clone(), e.to_string()))?;
    // What only the workload can read (a fio job string): pointed at the first parameter's
    // value, the usual home of such a string.
    w.check(&plan.params).map_err(|e| {
        let at = r
            .params
            .as_ref()
            .and_then(|m| m.iter().min_by_key(|(k, _)| k.span().start))
            .map_or(where_.clone(), |(_, v)| v.span());
        cx.err(at, e.message)
    })?;
    // A shared suite file never writes outside the entry's scratch directory.
    hostbench_workloads::disk::confine_to_current_dir(w.id(), &plan.params).map_err(|e| {
        let at = r
            .params
            .as_ref()
            .and_then(|m| m.iter().min_by_key(|(k, _)| k.span().start))
            .map_or(where_.clone(), |(_, v)| v.span());
        cx.err(at, e.message)
    })?;
    if plan.time_s == 0.0 && plan.events == 0 && !ends_by_itself(w, &plan.params) {
        return Err(cx.err(
            r.time.as_ref().map_or(where_, Spanned::span),
            format!(
                "'{}' with time = 0 and no events would never end; give a `time` (\"10s\") or \
                 `events`",
                w.id()
            ),
        ));
    }
    Ok(plan)
}

/// Whether a run of `w` with neither a time nor an event limit ends: workloads with their own
/// quota (sysbench memory's total size, mutex's one event per thread) and STREAM with a fixed
/// iteration count (`ntimes`).
fn ends_by_itself(w: &dyn Workload, params: &Params) -> bool {
    w.caps().ends_itself
        || (w.params().iter().any(|p| p.name == "ntimes") && params.int("ntimes") > 0)
}

fn param_text(cx: &Ctx<'_>, name: &str, v: &Spanned<Value>) -> Result<String, SuiteError> {
    Ok(match v.get_ref() {
        Value::String(s) => s.clone(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Boolean(b) => if *b { "on" } else { "off" }.to_string(),
        other => {
            return Err(cx.err(
                v.span(),
                format!(
                    "parameter `{name}` must be a string, number or boolean, not {}",
                    other.type_str()
                ),
            ));
        }
    })
}

fn apply(cx: &Ctx<'_>, s: &mut Settings, raw: &RawSettings) -> Result<(), SuiteError> {
    if let Some(v) = &raw.threads {
        s.threads = match v.get_ref() {
            Value::Integer(n) if *n >= 1 && *n <= 100_000 => *n as usize,
            Value::String(w) if w == "all" => {
                std::thread::available_parallelism().map_or(1, |n| n.get())
            }
            _ => {
                return Err(cx.err(
                    v.span(),
                    "`threads` takes a number from 1 to 100000, or \"all\" (every CPU this \
                     process may use)",
                ));
            }
        };
    }
    if let Some(v) = &raw.time {
        s.time_s = seconds(cx, "time", v)?;
    }
    if let Some(v) = &raw.warmup {
        s.warmup_s = seconds(cx, "warmup", v)?;
    }
    if let Some(v) = &raw.events {
        s.events = match v.get_ref() {
            Value::Integer(n) if *n >= 0 => *n as u64,
            _ => {
                return Err(cx.err(
                    v.span(),
                    "`events` takes a whole number, 0 or more (0 = no event limit)",
                ));
            }
        };
    }
    if let Some(v) = &raw.repetitions {
        s.reps = repetitions(cx, v)?;
    }
    if let Some(v) = &raw.stable_rsd {
        s.stable_rsd = stable_rsd(cx, v)?;
    }
    Ok(())
}

fn seconds(cx: &Ctx<'_>, key: &str, v: &Spanned<Value>) -> Result<f64, SuiteError> {
    let bad = || {
        cx.err(
            v.span(),
            format!(
                "`{key}` takes seconds, 0 or more: a number (2.5) or a duration (\"10s\", \
                 \"500ms\", \"2m\")"
            ),
        )
    };
    let secs = match v.get_ref() {
        Value::Integer(n) => *n as f64,
        Value::Float(f) => *f,
        Value::String(t) => parse_seconds(t).map_err(|_| bad())?,
        _ => return Err(bad()),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(bad());
    }
    Ok(secs)
}

fn repetitions(cx: &Ctx<'_>, v: &Spanned<Value>) -> Result<Reps, SuiteError> {
    let usage = format!(
        "`repetitions` takes a number of runs (3) or {{ min = 3, max = 10 }}, each from 1 to \
         {MAX_REPETITIONS} with min <= max"
    );
    let count = |x: &Value| match x {
        Value::Integer(n) if (1..=MAX_REPETITIONS).contains(n) => Some(*n as u32),
        _ => None,
    };
    match v.get_ref() {
        Value::Integer(_) => {
            let n = count(v.get_ref()).ok_or_else(|| cx.err(v.span(), usage.clone()))?;
            Ok(Reps { min: n, max: n })
        }
        Value::Table(t) => {
            if let Some(k) = t.keys().find(|k| *k != "min" && *k != "max") {
                return Err(cx.err(v.span(), format!("unknown key `{k}`: {usage}")));
            }
            let min = t.get("min").and_then(count);
            let max = t.get("max").and_then(count);
            match (min, max) {
                (Some(min), Some(max)) if min <= max => Ok(Reps { min, max }),
                _ => Err(cx.err(v.span(), usage)),
            }
        }
        _ => Err(cx.err(v.span(), usage)),
    }
}

fn stable_rsd(cx: &Ctx<'_>, v: &Spanned<Value>) -> Result<Option<f64>, SuiteError> {
    let bad = || {
        cx.err(
            v.span(),
            "`stable_rsd` takes a relative standard deviation in percent, above 0 and below \
             100 (2.5 or \"2.5%\"), or false for no rule",
        )
    };
    let pct = match v.get_ref() {
        Value::Boolean(false) => return Ok(None),
        Value::Integer(n) => *n as f64,
        Value::Float(f) => *f,
        Value::String(t) => {
            let t = t.trim();
            if t == "off" {
                return Ok(None);
            }
            t.strip_suffix('%')
                .unwrap_or(t)
                .trim()
                .parse()
                .map_err(|_| bad())?
        }
        _ => return Err(bad()),
    };
    if !(pct > 0.0 && pct < 100.0) {
        return Err(bad());
    }
    Ok(Some(pct))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Suite {
        parse(text, "t.toml", "t.toml").unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(text: &str) -> String {
        parse(text, "t.toml", "t.toml").unwrap_err().to_string()
    }

    #[test]
    fn line_and_column() {
        assert_eq!(line_col("ab\ncd\n", 0), (1, 1));
        assert_eq!(line_col("ab\ncd\n", 4), (2, 2));
        assert_eq!(line_col("é\nx", 3), (2, 1));
        assert_eq!(line_col("abc", 99), (1, 4));
    }

    #[test]
    fn a_full_entry_becomes_a_plan() {
        let s = ok(r#"
name = "mine"
description = "two entries"
label = "box-1"

[defaults]
time = "2s"
repetitions = { min = 2, max = 4 }
stable_rsd = "3%"

[[entry]]
name = "cpu single"
workload = "cpu"
params = { max_prime = 20000 }
threads = 1

[[entry]]
workload = "null"
threads = 2
time = 0.5
warmup = "100ms"
repetitions = 1
stable_rsd = false

[[entry]]
probe = "timer"
"#);
        assert_eq!(s.name, "mine");
        assert_eq!(s.label.as_deref(), Some("box-1"));
        assert_eq!(s.entries.len(), 3);
        let e = &s.entries[0];
        assert_eq!((e.name.as_str(), e.line), ("cpu single", 11));
        assert_eq!(e.reps, Reps { min: 2, max: 4 });
        assert_eq!(e.stable_rsd, Some(3.0));
        let What::Workload { plan, .. } = &e.what else {
            panic!()
        };
        assert_eq!(plan.params.int("max_prime"), 20000);
        assert_eq!((plan.threads, plan.time_s), (1, 2.0));
        let e = &s.entries[1];
        assert_eq!(e.name, "null, 2 thread(s)");
        assert_eq!((e.reps, e.stable_rsd), (Reps { min: 1, max: 1 }, None));
        let What::Workload { plan, .. } = &e.what else {
            panic!()
        };
        assert_eq!((plan.threads, plan.time_s, plan.warmup_s), (2, 0.5, 0.1));
        assert!(matches!(s.entries[2].what, What::Timer));
        assert_eq!(s.entries[2].name, "timer");
    }

    #[test]
    fn threads_all_is_every_cpu() {
        let s = ok("name = \"x\"\n[[entry]]\nworkload = \"null\"\nthreads = \"all\"\n");
        let What::Workload { plan, .. } = &s.entries[0].what else {
            panic!()
        };
        assert_eq!(
            plan.threads,
            std::thread::available_parallelism().unwrap().get()
        );
    }

    #[test]
    fn errors_say_where() {
        let head = "name = \"x\"\n[[entry]]\n";
        let cases: &[(&str, &str, &str)] = &[
            (
                "workload = \"cpux\"\n",
                "t.toml:3:12:",
                "unknown workload 'cpux'",
            ),
            (
                "workload = \"timer\"\n",
                "t.toml:3:12:",
                "write probe = \"timer\"",
            ),
            (
                "workload = \"cpu\"\nparams = { max_prime = 20000, nope = 1 }\n",
                "t.toml:4:31:",
                "unknown parameter 'nope'",
            ),
            (
                "workload = \"cpu\"\nparams = { max_prime = 0 }\n",
                "t.toml:4:24:",
                "invalid value '0' for max_prime",
            ),
            (
                "workload = \"cpu\"\n[entry.params]\nmax_prime = [1]\n",
                "t.toml:5:13:",
                "must be a string, number or boolean",
            ),
            (
                "workload = \"cpu\"\nthreads = 0\n",
                "t.toml:4:11:",
                "`threads` takes",
            ),
            (
                "workload = \"cpu\"\nthreads = \"many\"\n",
                "t.toml:4:11:",
                "\"all\"",
            ),
            (
                "workload = \"cpu\"\ntime = \"soon\"\n",
                "t.toml:4:8:",
                "`time` takes seconds",
            ),
            (
                "workload = \"cpu\"\ntime = -1\n",
                "t.toml:4:8:",
                "`time` takes seconds",
            ),
            (
                "workload = \"cpu\"\nevents = -5\n",
                "t.toml:4:10:",
                "`events` takes",
            ),
            (
                "workload = \"cpu\"\nrepetitions = { min = 5, max = 2 }\n",
                "t.toml:4:15:",
                "min <= max",
            ),
            (
                "workload = \"cpu\"\nrepetitions = 0\n",
                "t.toml:4:15:",
                "`repetitions` takes",
            ),
            (
                "workload = \"cpu\"\nstable_rsd = \"120%\"\n",
                "t.toml:4:14:",
                "percent",
            ),
            (
                "workload = \"cpu\"\ntime = 0\n",
                "t.toml:4:8:",
                "would never end",
            ),
            (
                "workload = \"cpu\"\nthread = 2\n",
                "t.toml:4:1:",
                "unknown field `thread`",
            ),
            (
                "probe = \"timer\"\nthreads = 2\n",
                "t.toml:4:11:",
                "takes no `threads`",
            ),
            (
                "probe = \"clock\"\n",
                "t.toml:3:9:",
                "unknown probe 'clock'",
            ),
            ("name = \"a\"\n", "t.toml:2:1:", "no `workload`"),
            (
                "workload = \"cpu\"\nworkload = \"null\"\n",
                "t.toml:4:1:",
                "duplicate key",
            ),
        ];
        for (body, at, what) in cases {
            let e = err(&format!("{head}{body}"));
            assert!(e.starts_with(at), "{body:?}: expected {at}, got: {e}");
            assert!(e.contains(what), "{body:?}: expected {what:?} in: {e}");
            assert_eq!(e.lines().count(), 1, "one line: {e}");
        }
    }

    #[test]
    fn suite_level_errors() {
        assert!(err("description = \"no name\"\n").contains("missing field `name`"));
        assert!(err("name = \"x\"\n").contains("no entries"));
        assert!(err("name = \"x\"\n[[entry]\n").starts_with("t.toml:2:"));
        let e = err("name = \"x\"\ndirectory = \"/no/such/dir\"\n[[entry]]\nworkload = \"null\"\n");
        assert!(
            e.starts_with("t.toml:2:13:") && e.contains("not an existing directory"),
            "{e}"
        );
        let e = err("name = \"x\"\nlabel = \" \"\n[[entry]]\nworkload = \"null\"\n");
        assert!(e.starts_with("t.toml:2:9:"), "{e}");
        let e = err("name = \"x\"\n[defaults]\nthreads = -1\n[[entry]]\nworkload = \"null\"\n");
        assert!(e.starts_with("t.toml:3:11:"), "{e}");
        let e =
            err("name = \"x\"\n[[entry]]\nworkload = \"null\"\n[[entry]]\nworkload = \"null\"\n");
        assert!(
            e.contains("two entries are named 'null, 1 thread(s)'"),
            "{e}"
        );
    }

    #[test]
    fn stream_with_a_fixed_iteration_count_may_have_no_time_limit() {
        let s = ok(
            "name = \"x\"\n[[entry]]\nworkload = \"stream\"\ntime = 0\nparams = { ntimes = 10 }\n",
        );
        assert_eq!(s.entries.len(), 1);
        assert!(
            err("name = \"x\"\n[[entry]]\nworkload = \"stream\"\ntime = 0\n")
                .contains("would never end")
        );
        // Workloads with their own quota end by themselves.
        ok("name = \"x\"\n[[entry]]\nworkload = \"mutex\"\ntime = 0\n");
    }
}
