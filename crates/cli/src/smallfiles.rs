//! `hostbench smallfiles`: the small-file check git-hosting guides use (write 1,000 tiny
//! files, read them back; under 10 s is healthy), as four timed phases (create, stat, read,
//! delete) with per-operation latency, optional threads and directory fan-out. Exit 1 when
//! create + read takes longer than `--max-seconds`, with a line saying so.

use crate::exec::{self, SaveOptions};
use crate::present::{Plain, Text};
use anyhow::{Result, anyhow};
use clap::{Parser, ValueEnum};
use hostbench_core::plan::Plan;
use hostbench_core::workload::Workload;
use hostbench_workloads::disk::smallfiles::SmallFiles;
use std::process::ExitCode;

/// Creates, stats, reads and deletes small files in a fresh subdirectory of --directory,
/// timing every operation; passes when create + read stay under --max-seconds.
#[derive(Debug, Parser)]
#[command(
    name = "hostbench smallfiles",
    bin_name = "hostbench smallfiles",
    version,
    after_help = "Only files hostbench creates are removed, and the subdirectory only when it is \
                  empty. See docs/smallfiles.md."
)]
struct Args {
    /// Directory on the file system to test (must exist).
    #[arg(long, short = 'd', value_name = "DIR")]
    directory: String,
    /// Number of files.
    #[arg(long, value_name = "N", default_value = "1000")]
    files: String,
    /// Bytes per file (K, M = 1024-based).
    #[arg(long, value_name = "SIZE", default_value = "4k")]
    size: String,
    /// Threads, each handling every N-th file.
    #[arg(long, short = 't', value_name = "N", default_value = "1")]
    threads: usize,
    /// Spread the files over this many subdirectories (0: one directory).
    #[arg(long, value_name = "N", default_value = "0")]
    fanout: String,
    /// Fail (exit 1) when create + read take longer than this.
    #[arg(long, value_name = "SECONDS", default_value = "10")]
    max_seconds: String,
    /// Output format (warnings go to stderr).
    #[arg(short, long, value_enum, default_value_t = SmallFormat::Text)]
    format: SmallFormat,
    #[command(flatten)]
    save: exec::SaveArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SmallFormat {
    /// the phase table and the verdict
    Text,
    /// the full result as JSON
    Json,
}

/// Runs `hostbench smallfiles ...`.
pub fn main(argv: &[String]) -> Result<ExitCode> {
    let Some(args) = crate::frontend::clap_parse::<Args>("smallfiles", argv[1..].iter().cloned())?
    else {
        return Ok(ExitCode::SUCCESS);
    };
    if args.threads == 0 {
        return Err(anyhow!("smallfiles: --threads must be at least 1"));
    }
    let w = &SmallFiles;
    let overrides: Vec<(String, String)> = [
        ("files", args.files.clone()),
        ("size", args.size.clone()),
        ("fanout", args.fanout.clone()),
        ("max_seconds", args.max_seconds.clone()),
        ("dir", args.directory.clone()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let params = w.resolve(&overrides).map_err(|e| {
        let m = e.to_string();
        anyhow!(
            "smallfiles: {}",
            m.replace("for max_seconds:", "for --max-seconds:")
                .replace("for files:", "for --files:")
                .replace("for size:", "for --size:")
                .replace("for fanout:", "for --fanout:")
        )
    })?;
    let mut plan = Plan::new(w.id(), params);
    plan.threads = args.threads;
    plan.time_s = 0.0;
    plan.events = 0;
    plan.percentiles = vec![50.0, 95.0, 99.0];
    plan.validate().map_err(|e| anyhow!("smallfiles: {e}"))?;
    let saving: SaveOptions = args.save.options()?;
    let output = Plain::new(match args.format {
        SmallFormat::Text => Text::Layout(hostbench_report::smallfiles::render),
        SmallFormat::Json => Text::Json,
    });
    let (code, r) = exec::execute(&plan, w, &output, &saving, "smallfiles", argv)?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    Ok(match hostbench_report::smallfiles::verdict(&r) {
        Some((took, max, false)) => {
            eprintln!(
                "smallfiles: FAIL: creating and reading {} files took {took:.3} s, more than --max-seconds {max}; the file system under {} is slow for many small files",
                r.workload.params.int("files"),
                args.directory
            );
            ExitCode::from(1)
        }
        _ => ExitCode::SUCCESS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Args::command().debug_assert();
    }
}
