//! `hostbench fleet report RUN_ID`: the hosts of one fleet run side by side per workload,
//! with the fleet median, the spread, a robust z-score per host and a verdict
//! (`hostbench_core::fleet`), rendered by `hostbench_report::fleet`.

use crate::results::StoreArg;
use anyhow::{Result, bail};
use clap::{Parser, ValueEnum};
use std::process::ExitCode;

/// Report one fleet run: per workload, each host's headline figure against the fleet's
/// median, with a robust z-score (median and MAD; |z| > 3.5 is an outlier) and a verdict.
/// Exit 1 when --fail-below is given and a host is slow or failed.
#[derive(Debug, Parser)]
#[command(name = "hostbench fleet report")]
struct ReportArgs {
    /// The fleet run's id (`hostbench fleet` prints it; every run of it records it).
    #[arg(value_name = "RUN_ID")]
    run: String,
    /// Output format [default: text; from -o's extension: .html, .md, .csv, .json].
    #[arg(short, long, value_enum)]
    format: Option<Format>,
    /// Write the report to this file instead of stdout (`-o report.html`: one
    /// self-contained HTML page with a bar per host per figure).
    #[arg(short, long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// Fail a host whose figure is worse than the fleet median (or the --baseline) by more
    /// than this (10%, 0.1).
    #[arg(long, value_name = "PERCENT")]
    fail_below: Option<String>,
    /// Judge each host against the runs saved under this label (a reference machine), per
    /// workload the median of its runs, instead of the fleet's median.
    #[arg(long, value_name = "LABEL")]
    baseline: Option<String>,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Markdown,
    Csv,
    Json,
    Html,
}

/// The format `-o FILE` asks for by its extension (`.html`/`.htm`, `.md`/`.markdown`,
/// `.csv`, `.json`; anything else: text).
fn format_of_extension(e: &str) -> Format {
    match e.to_ascii_lowercase().as_str() {
        "html" | "htm" => Format::Html,
        "md" | "markdown" => Format::Markdown,
        "csv" => Format::Csv,
        "json" => Format::Json,
        _ => Format::Text,
    }
}

/// `10%` or `0.1`: a fraction in (0, 1).
fn fraction(s: &str) -> Result<f64> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(x) if x > 0.0 && x < 1.0 => Ok(x),
        _ => bail!("--fail-below {s:?}: give a share of the median between 0 and 100 %, e.g. 10%"),
    }
}

/// `hostbench fleet report ARGS` (`argv` from `report` on).
pub fn main(argv: &[String]) -> Result<ExitCode> {
    crate::stop_at_once_on_signals();
    let Some(args) = crate::frontend::clap_parse::<ReportArgs>(
        "fleet report",
        std::iter::once("hostbench fleet report".to_string()).chain(argv.iter().cloned()),
    )?
    else {
        return Ok(ExitCode::SUCCESS);
    };
    let fail_below = args.fail_below.as_deref().map(fraction).transpose()?;
    let store_arg = args.store.results_db.as_deref();
    if let Some(o) = &args.output {
        crate::output::check_writable(o, "-o", store_arg)?;
    }
    let format = args.format.unwrap_or_else(|| {
        args.output
            .as_ref()
            .and_then(|o| o.extension())
            .and_then(|e| e.to_str())
            .map_or(Format::Text, format_of_extension)
    });
    let location = hostbench_store::Location::resolve(args.store.results_db.as_deref())?;
    let Some(mut store) = hostbench_store::Store::open_existing(&location)? else {
        bail!(
            "no results store at {location}: no fleet run {} there",
            args.run
        );
    };
    // The store's fleet_run column is indexed: only this fleet run's runs are read.
    let mut runs = Vec::new();
    for s in store.load(&hostbench_store::Filter {
        fleet_run: Some(args.run.clone()),
        ..Default::default()
    })? {
        let r = s.result()?;
        if r.fleet.as_ref().is_some_and(|f| f.run == args.run) {
            runs.push(r);
        }
    }
    // The hosts the controller was asked for and how each ended (none for runs that
    // joined with HOSTBENCH_FLEET_RUN).
    let roster: Vec<(String, Option<String>)> = store
        .fleet_roster(&args.run)?
        .into_iter()
        .map(|h| {
            let why = match (h.status.as_str(), h.reason) {
                (_, Some(r)) => Some(r),
                ("ok", None) => None,
                (s, None) => Some(s.to_string()),
            };
            (h.host, why)
        })
        .collect();
    if runs.is_empty() && roster.is_empty() {
        bail!(
            "no run of fleet run {:?} in {location}; `hostbench fleet` prints the id (or give \
             --results-db where it saved)",
            args.run
        );
    }
    let base_runs = match &args.baseline {
        Some(label) => {
            let mut v = Vec::new();
            for s in store.load(&hostbench_store::Filter {
                label: Some(label.clone()),
                ..Default::default()
            })? {
                v.push(s.result()?);
            }
            if v.is_empty() {
                bail!(
                    "--baseline {label:?}: no run with that label in {location} (`hostbench \
                     results list` shows the labels)"
                );
            }
            v
        }
        None => Vec::new(),
    };
    if let Some(label) = &args.baseline
        && let Some(why) = hostbench_core::fleet::baseline_mismatch(
            &args.run,
            &runs,
            hostbench_core::fleet::Baseline {
                label,
                runs: &base_runs,
            },
        )
    {
        bail!("{why}");
    }
    let report = hostbench_core::fleet::report_against(
        &args.run,
        &runs,
        fail_below,
        args.baseline
            .as_deref()
            .map(|label| hostbench_core::fleet::Baseline {
                label,
                runs: &base_runs,
            }),
    )
    .with_roster(&roster);
    let text = match format {
        Format::Text => hostbench_report::fleet::text(&report),
        Format::Markdown => hostbench_report::fleet::markdown(&report),
        Format::Csv => hostbench_report::fleet::csv(&report),
        Format::Json => hostbench_report::fleet::json(&report),
        Format::Html => hostbench_report::fleet::html(
            &report,
            &format!("hostbench {}", env!("CARGO_PKG_VERSION")),
        ),
    };
    match &args.output {
        Some(o) => {
            crate::output::write(o, text.as_bytes(), "-o", store_arg)?;
            eprintln!("fleet report {}: written to {}", args.run, o.display());
        }
        None => crate::exec::out(&text),
    }
    Ok(if fail_below.is_some() && report.any_failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_files_extension_picks_the_format() {
        for (e, f) in [
            ("html", Format::Html),
            ("HTM", Format::Html),
            ("md", Format::Markdown),
            ("csv", Format::Csv),
            ("json", Format::Json),
            ("txt", Format::Text),
        ] {
            assert_eq!(format_of_extension(e), f, "{e}");
        }
    }
}
