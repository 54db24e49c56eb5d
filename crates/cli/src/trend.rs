//! `hostbench trend LABEL|HOST`: a headline figure over time per workload variant, with the
//! runs that step out of line marked (`hostbench_core::trend`), as text, JSON or one HTML
//! page. Read-only: it never changes the store.

use crate::exec;
use crate::results::StoreArg;
use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use hostbench_core::compare::{Comparison, Options, SideInput, compared_figures};
use hostbench_core::result::RunResult;
use hostbench_core::trend::{Trend, TrendPoint, TrendSeries, judge};
use hostbench_store::{Filter, Store};
use std::path::PathBuf;
use std::process::ExitCode;

/// `hostbench trend`.
#[derive(Debug, Args)]
pub struct TrendArgs {
    /// The runs to follow: a label (every run with it), else a host name or host
    /// fingerprint (4+ hex digits); `label:NAME` or `host:NAME` says which.
    #[arg(value_name = "LABEL|HOST")]
    subject: String,
    /// Only this workload id, family, or the name it is run by (`cpu`, `fio`,
    /// `oltp_point_select`).
    #[arg(long, value_name = "ID")]
    workload: Option<String>,
    /// Only runs started at or after DATE (`YYYY-MM-DD`, or a time ago: `30d`).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Only runs started at or before DATE.
    #[arg(long, value_name = "DATE")]
    until: Option<String>,
    /// Follow this figure instead of each variant's headline (`latency_p95_ns`).
    #[arg(long, value_name = "NAME")]
    figure: Option<String>,
    /// Noise threshold: a run closer than this to the median of the runs before it is
    /// never out of line (`2%` or `0.02`).
    #[arg(long, default_value = "2%", value_parser = crate::compare::threshold, value_name = "PERCENT")]
    threshold: f64,
    /// Output format on stdout.
    #[arg(short, long, value_enum, default_value_t = TrendFormat::Text)]
    format: TrendFormat,
    /// Also write the trend as one self-contained HTML page (a chart per variant) to FILE.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TrendFormat {
    Text,
    Json,
}

/// Runs `hostbench trend`.
pub fn main(a: TrendArgs) -> Result<ExitCode> {
    let trend = load(
        &a.subject,
        a.workload.as_deref(),
        a.since.as_deref(),
        a.until.as_deref(),
        a.figure.as_deref(),
        a.threshold,
        a.store.results_db.as_deref(),
    )?;
    exec::out(&match a.format {
        TrendFormat::Text => hostbench_report::trend::text(&trend),
        TrendFormat::Json => serde_json::to_string_pretty(&trend)? + "\n",
    });
    if let Some(path) = &a.output {
        let title = format!("hostbench trend: {}", trend.subject);
        let generator = format!("hostbench {}", env!("CARGO_PKG_VERSION"));
        let html = hostbench_report::trend::html(&trend, &title, &generator);
        crate::output::write(path, html.as_bytes(), "-o", a.store.results_db.as_deref())?;
        eprintln!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The trend of `subject` (a label, else a host) in the store at `results_db`, narrowed by
/// the filters (also what `hostbench report --trend` draws).
pub fn load(
    subject_word: &str,
    workload: Option<&str>,
    since: Option<&str>,
    until: Option<&str>,
    figure: Option<&str>,
    threshold: f64,
    results_db: Option<&str>,
) -> Result<Trend> {
    let loc = hostbench_store::Location::resolve(results_db)?;
    let Some(mut store) = Store::open_existing(&loc)? else {
        bail!("there is no results store at {loc} yet: nothing to follow");
    };
    let (since_ms, until_ms) = crate::results::date_bounds(since, until)?;
    // `label:NAME` and `host:NAME` say which; a bare word is a label, else a host.
    let (word, only) = match subject_word.split_once(':') {
        Some(("label", w)) => (w, Some(true)),
        Some(("host", w)) => (w, Some(false)),
        _ => (subject_word, None),
    };
    let base = Filter {
        workload: workload.map(crate::results::workload_id),
        since_ms,
        until_ms,
        ..Filter::default()
    };
    let by_label = Filter {
        label: Some(word.to_string()),
        ..base.clone()
    };
    let by_host = Filter {
        host: Some(word.to_string()),
        ..base
    };
    let (mut subject, mut stored) = (String::new(), Vec::new());
    if only != Some(false) {
        subject = format!("label {word}");
        stored = store.load(&by_label)?;
    }
    if stored.is_empty() && only != Some(true) {
        subject = format!("host {word}");
        stored = store.load(&by_host)?;
    } else if only.is_none() {
        let host_runs = store.list(&by_host)?.len();
        if host_runs > 0 {
            eprintln!(
                "note: '{word}' is a label and also a host name ({host_runs} run(s)); this follows \
                 the label: write host:{word} to follow the host"
            );
        }
    }
    if stored.is_empty() {
        bail!(
            "no stored run has the label or host '{}'{} (see `hostbench results list`)",
            word,
            if workload.is_some() || since.is_some() || until.is_some() {
                " with these filters"
            } else {
                ""
            }
        );
    }
    let mut runs = stored
        .iter()
        .map(|r| r.result().map_err(anyhow::Error::from))
        .collect::<Result<Vec<RunResult>>>()?;
    runs.sort_by(|x, y| x.started_at.cmp(&y.started_at).then(x.id.cmp(&y.id)));
    // One machine per series: a label's runs from several hosts are split by host (else a
    // slower machine's runs read as outliers or changes of one).
    let hosts: std::collections::BTreeSet<String> = runs.iter().map(host_of).collect();
    if hosts.len() < 2 {
        return build(&subject, &runs, figure, threshold);
    }
    let mut all: Option<Trend> = None;
    for h in &hosts {
        let mine: Vec<RunResult> = runs.iter().filter(|r| host_of(r) == *h).cloned().collect();
        let Ok(mut t) = build(&subject, &mine, figure, threshold) else {
            continue;
        };
        for s in &mut t.series {
            s.variant = format!("{} on {h}", s.variant);
        }
        match &mut all {
            Some(a) => a.series.extend(t.series),
            None => all = Some(t),
        }
    }
    match all {
        Some(t) => Ok(t),
        // Say why as for one host (an unknown --figure).
        None => build(&subject, &runs, figure, threshold),
    }
}

/// The host a run was measured on, as its series is named.
fn host_of(r: &RunResult) -> String {
    r.host
        .as_ref()
        .map_or_else(|| "an unknown host".to_string(), |h| h.hostname.clone())
}

/// How `r` ended when not as planned (`error`, `interrupted`, `forced_shutdown`).
fn incomplete(r: &RunResult) -> Option<String> {
    use hostbench_core::runner::StopReason;
    match r.outcome.stop_reason {
        StopReason::Error | StopReason::Interrupted | StopReason::ForcedShutdown => {
            serde_json::to_value(r.outcome.stop_reason)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
        }
        _ => None,
    }
}

/// The trend of `runs` (oldest first): variants as `compare` groups repetitions, each
/// followed on its headline figure (or `figure`).
fn build(subject: &str, runs: &[RunResult], figure: Option<&str>, threshold: f64) -> Result<Trend> {
    let c = Comparison::build(
        &[SideInput {
            name: subject.to_string(),
            spec: subject.to_string(),
            runs: runs.to_vec(),
        }],
        Options {
            threshold,
            size_params: Some(crate::compare::size_params()),
            short_value: Some(hostbench_core::compare::ShortValue(
                crate::compare::short_value,
            )),
            keep_failed: true,
            ..Options::default()
        },
    );
    let by_id: std::collections::HashMap<&str, &RunResult> =
        runs.iter().map(|r| (r.id.as_str(), r)).collect();
    let mut series = Vec::new();
    for (vi, v) in c.variants.iter().enumerate() {
        let rows: Vec<_> = c.rows.iter().filter(|r| r.variant == vi).collect();
        let row = match figure {
            Some(f) => rows.iter().find(|r| r.figure == f).copied(),
            None => rows.first().copied(),
        };
        let Some(row) = row else { continue };
        let members: Vec<&RunResult> = v.runs[0]
            .iter()
            .filter_map(|id| by_id.get(id.as_str()).copied())
            .collect();
        let values: Vec<f64> = members
            .iter()
            .map(|r| {
                compared_figures(r)
                    .into_iter()
                    .find(|f| f.name == row.figure)
                    .map_or(f64::NAN, |f| f.value)
            })
            .collect();
        // A run that failed or was cut short is shown but neither judged nor taken as
        // history: its figure is not a repetition of the others (`judge` leaves a
        // non-finite value out).
        let incomplete: Vec<Option<String>> = members.iter().map(|r| incomplete(r)).collect();
        let judged: Vec<f64> = values
            .iter()
            .zip(&incomplete)
            .map(|(&v, i)| if i.is_some() { f64::NAN } else { v })
            .collect();
        let points = judge(&judged, threshold)
            .into_iter()
            .zip(&members)
            .zip(values.iter().zip(incomplete))
            .map(|((mut point, r), (&value, incomplete))| {
                point.value = value;
                TrendPoint {
                    id: r.id.clone(),
                    started_at: r.started_at.clone(),
                    label: r.label.clone(),
                    point,
                    incomplete,
                }
            })
            .collect();
        series.push(TrendSeries {
            workload: v.workload.clone(),
            variant: v.label.clone(),
            figure: row.figure.clone(),
            label: row.label.clone(),
            unit: row.unit.clone(),
            better: row.better,
            points,
        });
    }
    if series.is_empty() {
        match figure {
            Some(f) => bail!(
                "no run of {subject} has the figure '{f}' (`hostbench results show ID -f json` lists a run's figures)"
            ),
            None => bail!("the runs of {subject} have no figures to follow"),
        }
    }
    Ok(Trend {
        schema: "hostbench.trend".into(),
        subject: subject.to_string(),
        threshold,
        series,
    })
}
