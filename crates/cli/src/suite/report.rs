//! The suite document (`hostbench.suite`, schema in `schemas/suite.v1.json`) and its text and
//! markdown summaries: one line per entry with its headline figure (the median over the
//! repetitions), unit, spread, number of runs and a stability note, then notes about the host
//! and the warnings the runs raised.

use super::stability::{Reps, Stats, Verdict};
use hostbench_core::result::{Better, FigureDef, WarningKind};
use serde::Serialize;
use std::fmt::Write as _;

/// Value of the document's `schema` field.
pub const SCHEMA_ID: &str = "hostbench.suite";
/// Version of the suite document.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything a suite run produced.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteReport {
    /// Always `hostbench.suite`.
    pub schema: &'static str,
    /// 1.
    pub schema_version: u32,
    /// The suite's `name`.
    pub suite: String,
    /// The suite's `description`.
    pub description: String,
    /// `built-in` or the file's path.
    pub source: String,
    /// Label every result was saved under.
    pub label: Option<String>,
    /// The suite's directory for disk tests (`null`: none given).
    pub directory: Option<String>,
    /// Host name.
    pub hostname: String,
    /// Start, RFC 3339 UTC.
    pub started_at: String,
    /// Wall time of the whole suite, s.
    pub duration_s: f64,
    /// Ctrl-C stopped the suite; later entries did not run.
    pub interrupted: bool,
    /// Where the results were saved (`null` with `--no-save`).
    pub saved_in: Option<String>,
    /// Things about the host worth knowing when reading the figures.
    pub notes: Vec<String>,
    /// One per entry, in suite order.
    pub entries: Vec<EntryReport>,
}

/// How an entry ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every repetition it needed ran.
    Done,
    /// A run failed; the message is in `error`.
    Failed,
    /// Ctrl-C stopped it.
    Interrupted,
    /// It did not start (an earlier Ctrl-C).
    Skipped,
}

/// The headline figure's identity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureRef {
    /// snake_case name with its unit (`events_per_s`): what a suite file's `figure` names.
    pub name: String,
    /// What it is, in words (`event rate`), as the summary shows it; `null` when the run
    /// was stored before figures had labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Unit as printed.
    pub unit: String,
    /// Which way is better.
    pub better: Better,
}

impl FigureRef {
    /// The reference to a figure known in advance.
    pub fn of(d: &FigureDef) -> FigureRef {
        FigureRef {
            name: d.name.into(),
            label: Some(d.label.into()),
            unit: d.unit.into(),
            better: d.better,
        }
    }
}

/// One warning kind raised by an entry's runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntryWarning {
    /// Kind.
    pub kind: WarningKind,
    /// The first run's message: what it means and what to do.
    pub message: String,
    /// How many of the entry's runs raised it (0 for the suite's own `wide_spread`).
    pub runs: usize,
}

/// One entry's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct EntryReport {
    /// Display name.
    pub name: String,
    /// Workload id (`null` for probes).
    pub workload: Option<String>,
    /// Probe name (`timer`), `null` for workloads.
    pub probe: Option<String>,
    /// Worker threads (`null` for probes).
    pub threads: Option<usize>,
    /// Repetitions allowed.
    pub repetitions: Reps,
    /// The stability rule, percent (`null`: none).
    pub stable_rsd: Option<f64>,
    /// How it ended.
    pub status: Status,
    /// The headline figure of every run (`null` before the first one completes).
    pub figure: Option<FigureRef>,
    /// The headline value of each completed run, in order.
    pub values: Vec<f64>,
    /// Median, mean, spread, extremes of `values`.
    pub stats: Option<Stats>,
    /// What the spread says.
    pub verdict: Option<Verdict>,
    /// The summary's note column.
    pub note: String,
    /// Ids of its runs, interrupted ones included; in the store unless saving was off.
    pub result_ids: Vec<String>,
    /// Runs of the baseline's configuration made to decide it (`--interleave`), saved
    /// under the baseline's label; absent when there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_runs: Option<BaselineRuns>,
    /// Warnings of its runs, one per kind, plus `wide_spread`.
    pub warnings: Vec<EntryWarning>,
    /// Why it failed.
    pub error: Option<String>,
}

/// Runs an entry made of the baseline's configuration (`suite --interleave`).
#[derive(Debug, Clone, Serialize)]
pub struct BaselineRuns {
    /// The baseline's label, which they were saved under.
    pub label: String,
    /// Their ids.
    pub result_ids: Vec<String>,
}

/// Formats a figure with about four significant digits (no exponent).
pub fn figure(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        format!("{v}")
    } else if a >= 1000.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

fn spread(e: &EntryReport) -> String {
    match &e.stats {
        Some(s) if s.n >= 2 => {
            if s.rsd_pct.is_finite() {
                format!("{:.1}%", s.rsd_pct)
            } else {
                "-".into()
            }
        }
        _ => "-".into(),
    }
}

/// What an entry's own warnings say its figure measures instead of what the entry names (a
/// CPU cache, the harness, the page cache), for the note column: a steady figure of the
/// wrong thing is steady, not right.
pub fn caveat(warnings: &[EntryWarning]) -> Option<&'static str> {
    warnings.iter().find_map(|w| match w.kind {
        WarningKind::CacheResident => Some("measures a CPU cache"),
        WarningKind::HarnessDominated => Some("measures the harness"),
        WarningKind::PageCache => Some("measures the page cache"),
        WarningKind::SlowClock => Some("slow clock reads distort it"),
        WarningKind::NoWork => Some("does little work"),
        _ => None,
    })
}

/// The note column for an entry: the verdict on its spread, then what its warnings say it
/// measures when that is not what it names.
pub fn note(
    status: Status,
    verdict: Option<Verdict>,
    rule: Option<f64>,
    s: Option<&Stats>,
    warnings: &[EntryWarning],
) -> String {
    match status {
        Status::Failed => return "FAILED (see below)".into(),
        Status::Interrupted if s.is_none() => return "interrupted".into(),
        Status::Skipped => return "not run (interrupted)".into(),
        _ => {}
    }
    let base = match (verdict, rule) {
        (Some(Verdict::Stable), Some(r)) => format!("stable (< {}%)", trim_pct(r)),
        (Some(Verdict::Unstable), Some(r)) => format!("UNSTABLE (rule < {}%)", trim_pct(r)),
        (Some(Verdict::Consistent), _) => "consistent".into(),
        (Some(Verdict::WideSpread), _) => "WIDE SPREAD".into(),
        (Some(Verdict::Single), _) => "one run: no spread".into(),
        _ => String::new(),
    };
    let base = match caveat(warnings) {
        Some(c) if base.is_empty() => format!("{c} (see warnings)"),
        Some(c) => format!("{base}, but {c} (see warnings)"),
        None => base,
    };
    if status == Status::Interrupted {
        format!("{base}; interrupted")
    } else {
        base
    }
}

fn trim_pct(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

struct Row {
    cells: [String; 7],
}

const HEAD: [&str; 7] = [
    "entry", "figure", "median", "unit", "spread", "runs", "note",
];

fn rows(r: &SuiteReport) -> Vec<Row> {
    r.entries
        .iter()
        .map(|e| {
            // Nanoseconds and bytes per second in a readable unit (µs, MiB/s, …).
            let (unit, div) = match (&e.figure, &e.stats) {
                (Some(f), Some(s)) => {
                    hostbench_report::compare::scaled_unit(&f.unit, s.median.abs())
                }
                (Some(f), None) => (f.unit.clone(), 1.0),
                _ => (String::new(), 1.0),
            };
            (e, unit, div)
        })
        .map(|(e, unit, div)| Row {
            cells: [
                e.name.clone(),
                e.figure
                    .as_ref()
                    .map_or("-".into(), |f| f.label.clone().unwrap_or(f.name.clone())),
                e.stats
                    .as_ref()
                    .map_or("-".into(), |s| figure(s.median / div)),
                unit,
                spread(e),
                e.values.len().to_string(),
                e.note.clone(),
            ],
        })
        .collect()
}

/// Warnings about the machine rather than one workload: said once for the whole suite.
const HOST_KINDS: [WarningKind; 5] = [
    WarningKind::NoisyHost,
    WarningKind::StealTime,
    WarningKind::SwapActivity,
    WarningKind::Governor,
    WarningKind::Clocksource,
];

fn kind_name(k: WarningKind) -> String {
    serde_json::to_value(k)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

fn warning_lines(r: &SuiteReport) -> Vec<String> {
    let mut out = Vec::new();
    let total_runs: usize = r.entries.iter().map(|e| e.result_ids.len()).sum();
    for kind in HOST_KINDS {
        let hits: Vec<(&EntryReport, &EntryWarning)> = r
            .entries
            .iter()
            .flat_map(|e| {
                e.warnings
                    .iter()
                    .filter(|w| w.kind == kind)
                    .map(move |w| (e, w))
            })
            .collect();
        if let Some((_, first)) = hits.first() {
            let runs: usize = hits.iter().map(|(_, w)| w.runs).sum();
            out.push(format!(
                "{} in {runs} of {total_runs} run(s), {} of {} entries (first: {}): {}",
                kind_name(kind),
                hits.len(),
                r.entries.len(),
                hits[0].0.name,
                first.message
            ));
        }
    }
    for e in &r.entries {
        if let Some(err) = &e.error {
            out.push(format!("{}: FAILED: {err}", e.name));
        }
        for w in e.warnings.iter().filter(|w| !HOST_KINDS.contains(&w.kind)) {
            let runs = if w.runs > 0 {
                format!(" ({} of {} run(s))", w.runs, e.result_ids.len().max(w.runs))
            } else {
                String::new()
            };
            out.push(format!(
                "{}: {}{runs}: {}",
                e.name,
                kind_name(w.kind),
                w.message
            ));
        }
    }
    out
}

fn footer(r: &SuiteReport) -> String {
    let runs: usize = r.entries.iter().map(|e| e.result_ids.len()).sum();
    let mut s = format!("{} run(s) in {:.1} s", runs, r.duration_s);
    match &r.saved_in {
        Some(loc) => {
            let _ = write!(s, ", saved in {loc}");
            if let Some(l) = &r.label {
                let _ = write!(
                    s,
                    " with label '{l}' (`hostbench results list --label {l}`)"
                );
            } else {
                s.push_str(" (`hostbench results list`)");
            }
        }
        None => s.push_str(", not saved"),
    }
    // Runs of a baseline's configuration (`--interleave`) went under its label.
    let mut baseline: Vec<(&str, usize)> = Vec::new();
    for b in r.entries.iter().filter_map(|e| e.baseline_runs.as_ref()) {
        match baseline.iter_mut().find(|(l, _)| *l == b.label) {
            Some((_, n)) => *n += b.result_ids.len(),
            None => baseline.push((&b.label, b.result_ids.len())),
        }
    }
    for (label, n) in baseline.into_iter().filter(|(_, n)| *n > 0) {
        let _ = write!(
            s,
            "; and {n} run(s) of {label}'s configuration (--interleave), {}",
            if r.saved_in.is_some() {
                format!("saved with label '{label}'")
            } else {
                "not saved".to_string()
            }
        );
    }
    if r.interrupted {
        s.push_str("; interrupted: later entries did not run");
    }
    s
}

/// The summary as aligned text.
pub fn text(r: &SuiteReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "suite {} ({}) on {}", r.suite, r.source, host(r));
    if !r.description.is_empty() {
        let _ = writeln!(s, "{}", r.description);
    }
    s.push('\n');
    let rows = rows(r);
    let mut w = HEAD.map(str::len);
    for row in &rows {
        for (i, c) in row.cells.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: [&str; 7]| {
        // Figures right-aligned, words left-aligned; the last column is not padded.
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = w[i].saturating_sub(c.chars().count());
            let right = matches!(i, 2 | 4 | 5);
            if i > 0 {
                l.push_str("  ");
            }
            if right {
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            } else if i == 6 {
                l.push_str(c);
            } else {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            }
        }
        l.trim_end().to_string() + "\n"
    };
    s.push_str(&line(HEAD));
    for row in &rows {
        s.push_str(&line(row.cells.each_ref().map(String::as_str)));
    }
    s.push('\n');
    let _ = writeln!(
        s,
        "median of the runs; spread = relative standard deviation of the runs"
    );
    if !r.notes.is_empty() {
        s.push_str("\nnotes:\n");
        for n in &r.notes {
            let _ = writeln!(s, "  - {n}");
        }
    }
    let warnings = warning_lines(r);
    if !warnings.is_empty() {
        s.push_str("\nwarnings:\n");
        for w in &warnings {
            let _ = writeln!(s, "  - {w}");
        }
    }
    let _ = writeln!(s, "\n{}", footer(r));
    s
}

fn host(r: &SuiteReport) -> String {
    if r.hostname.is_empty() {
        "this host".into()
    } else {
        r.hostname.clone()
    }
}

fn md_cell(c: &str) -> String {
    c.replace('|', "\\|")
}

/// The summary as a markdown table with notes and warnings as lists.
pub fn markdown(r: &SuiteReport) -> String {
    let mut s = format!(
        "## suite {} on {}\n\n",
        md_cell(&r.suite),
        md_cell(&host(r))
    );
    if !r.description.is_empty() {
        let _ = writeln!(s, "{}\n", r.description);
    }
    let _ = writeln!(s, "| {} |", HEAD.join(" | "));
    let _ = writeln!(s, "|---|---|---:|---|---:|---:|---|");
    for row in rows(r) {
        let cells: Vec<String> = row.cells.iter().map(|c| md_cell(c)).collect();
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    s.push_str("\nMedian of the runs; spread = relative standard deviation of the runs.\n");
    if !r.notes.is_empty() {
        s.push_str("\n**Notes**\n\n");
        for n in &r.notes {
            let _ = writeln!(s, "- {}", md_cell(n));
        }
    }
    let warnings = warning_lines(r);
    if !warnings.is_empty() {
        s.push_str("\n**Warnings**\n\n");
        for w in &warnings {
            let _ = writeln!(s, "- {}", md_cell(w));
        }
    }
    let _ = writeln!(s, "\n{}", footer(r));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, values: &[f64], rule: Option<f64>) -> EntryReport {
        let stats = Stats::of(values);
        let verdict = stats.as_ref().map(|s| Verdict::of(s, rule));
        EntryReport {
            name: name.into(),
            workload: Some("cpu".into()),
            probe: None,
            threads: Some(1),
            repetitions: Reps { min: 3, max: 5 },
            stable_rsd: rule,
            status: Status::Done,
            figure: Some(FigureRef::of(&hostbench_core::result::figure::EVENTS_PER_S)),
            values: values.to_vec(),
            stats,
            verdict,
            note: note(Status::Done, verdict, rule, stats.as_ref(), &[]),
            result_ids: values.iter().map(|_| "x".to_string()).collect(),
            baseline_runs: None,
            warnings: Vec::new(),
            error: None,
        }
    }

    fn report(entries: Vec<EntryReport>) -> SuiteReport {
        SuiteReport {
            schema: SCHEMA_ID,
            schema_version: SCHEMA_VERSION,
            suite: "t".into(),
            description: "d".into(),
            source: "built-in".into(),
            label: None,
            directory: None,
            hostname: "h".into(),
            started_at: "2026-01-01T00:00:00.000Z".into(),
            duration_s: 1.0,
            interrupted: false,
            saved_in: None,
            notes: vec![],
            entries,
        }
    }

    #[test]
    fn figures_keep_four_digits() {
        assert_eq!(figure(123456.7), "123457");
        assert_eq!(figure(1234.5), "1234");
        assert_eq!(figure(123.45), "123.5");
        assert_eq!(figure(12.345), "12.35");
        assert_eq!(figure(1.2345), "1.234");
        assert_eq!(figure(0.012345), "0.0123");
        assert_eq!(figure(0.0), "0");
    }

    #[test]
    fn text_has_one_aligned_line_per_entry() {
        let r = report(vec![
            entry("cpu, 1 thread", &[1000.0, 1010.0, 990.0], Some(2.0)),
            entry("a much longer name", &[5.0, 6.0, 7.0], None),
        ]);
        let t = text(&r);
        let lines: Vec<&str> = t.lines().collect();
        let head = lines.iter().position(|l| l.starts_with("entry")).unwrap();
        let a = lines[head + 1];
        let b = lines[head + 2];
        assert!(a.starts_with("cpu, 1 thread "), "{t}");
        assert!(
            a.contains("1000") && a.contains("1.0%") && a.contains("stable (< 2%)"),
            "{a}"
        );
        assert!(b.contains("WIDE SPREAD") && b.contains("16.7%"), "{b}");
        // The figure column ends at the same place on every line.
        let end = |l: &str, what: &str| l.find(what).unwrap() + what.len();
        assert_eq!(end(a, "1000"), end(b, "6.000"), "{t}");
        assert_eq!(end(lines[head], "median"), end(a, "1000"), "{t}");
        assert!(t.contains("1 run(s)") || t.contains("6 run(s)"), "{t}");
    }

    #[test]
    fn host_warnings_are_said_once_and_workload_ones_per_entry() {
        let mut a = entry("a", &[1.0, 1.0], None);
        let mut b = entry("b", &[1.0, 1.0], None);
        let host = |runs| EntryWarning {
            kind: WarningKind::NoisyHost,
            message: "busy".into(),
            runs,
        };
        a.warnings.push(host(2));
        b.warnings.push(host(1));
        b.warnings.push(EntryWarning {
            kind: WarningKind::CacheResident,
            message: "in L1".into(),
            runs: 2,
        });
        let t = text(&report(vec![a, b]));
        assert!(
            t.contains("noisy_host in 3 of 4 run(s), 2 of 2 entries (first: a): busy"),
            "{t}"
        );
        assert_eq!(t.matches("noisy_host").count(), 1, "{t}");
        assert!(
            t.contains("b: cache_resident (2 of 2 run(s)): in L1"),
            "{t}"
        );
    }

    #[test]
    fn markdown_is_a_table() {
        let r = report(vec![entry("a|b", &[1.0, 1.0], None)]);
        let m = markdown(&r);
        assert!(m.contains("| entry | figure | median |"), "{m}");
        assert!(m.contains("| a\\|b | event rate | 1.000 |"), "{m}");
    }

    #[test]
    fn notes() {
        let s = Stats::of(&[1.0]).unwrap();
        assert_eq!(
            note(Status::Done, Some(Verdict::Single), None, Some(&s), &[]),
            "one run: no spread"
        );
        assert_eq!(
            note(Status::Skipped, None, None, None, &[]),
            "not run (interrupted)"
        );
        assert_eq!(
            note(
                Status::Done,
                Some(Verdict::Unstable),
                Some(2.5),
                Some(&s),
                &[]
            ),
            "UNSTABLE (rule < 2.5%)"
        );
    }

    /// A stable figure of a cache (sysbench memory's default 1 KiB blocks) is not just
    /// "stable": the summary says what it measures.
    #[test]
    fn stable_notes_carry_the_caveat_of_their_warnings() {
        let s = Stats::of(&[1.0, 1.01, 0.99]).unwrap();
        let w = |kind| EntryWarning {
            kind,
            message: "m".into(),
            runs: 3,
        };
        assert_eq!(
            note(
                Status::Done,
                Some(Verdict::Stable),
                Some(2.0),
                Some(&s),
                &[w(WarningKind::NoisyHost), w(WarningKind::CacheResident)]
            ),
            "stable (< 2%), but measures a CPU cache (see warnings)"
        );
        assert_eq!(
            note(
                Status::Done,
                Some(Verdict::Stable),
                Some(2.0),
                Some(&s),
                &[w(WarningKind::NoisyHost)]
            ),
            "stable (< 2%)"
        );
        assert_eq!(
            note(
                Status::Done,
                Some(Verdict::Consistent),
                None,
                Some(&s),
                &[w(WarningKind::HarnessDominated)]
            ),
            "consistent, but measures the harness (see warnings)"
        );
    }
}
