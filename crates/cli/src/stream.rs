//! The `hostbench stream` front-end: STREAM's knobs (which stream.c takes as `-D` compile
//! options) as command-line options, mapped onto the `stream` workload's parameters and a
//! plan whose only limit is the workload's own iteration count (`time_s = 0`, `events = 0`).
//!
//! Usage errors are one line (returned as `Err`, exit 2); `--help` prints clap's help.
//! Element counts take decimal suffixes as STREAM users write them (`80M` = 80 000 000) and
//! binary ones when asked (`64Mi` = 67 108 864).

use crate::exec;
use crate::present::{Plain, Text};
use anyhow::{Result, anyhow};
use clap::{Parser, ValueEnum};
use hostbench_core::plan::Plan;
use hostbench_core::workload::Workload;
use hostbench_workloads::memory::stream::Stream;
use std::process::ExitCode;

/// STREAM's four kernels (Copy, Scale, Add, Triad) over three arrays of doubles.
///
/// Reports STREAM's layout by default: best rate in MB/s (MB = 10^6 bytes, as STREAM
/// counts them) over all iterations but the first, and STREAM's validation.
#[derive(Debug, Parser)]
#[command(
    name = "hostbench stream",
    bin_name = "hostbench stream",
    version,
    after_help = "Without --array-size each array is at least 4x the last-level caches (STREAM's \
                  rule), with a sanity cap for virtual machines that report the host's cache and \
                  at most half of MemAvailable for the three arrays; the report says which size \
                  was chosen and why. See docs/stream.md."
)]
struct Args {
    /// Elements per array [default: STREAM's rule]. Suffixes: K, M, G = 10^3, 10^6, 10^9;
    /// Ki, Mi, Gi = 2^10, 2^20, 2^30.
    #[arg(long = "array-size", value_name = "N", value_parser = parse_count)]
    array_size: Option<u64>,
    /// Iterations of the four kernels; the first is not counted.
    #[arg(long, value_name = "N", default_value = "10", value_parser = parse_ntimes)]
    ntimes: u64,
    /// Elements of padding after each array (STREAM's OFFSET): shifts their relative alignment.
    #[arg(long, value_name = "N", default_value = "0", value_parser = parse_offset)]
    offset: u64,
    /// Threads, each pinned to one CPU [default: every CPU this process may use].
    #[arg(short = 't', long, value_name = "N", value_parser = parse_threads)]
    threads: Option<usize>,
    /// Also run the kernels with non-temporal (streaming) stores; reported as separate rows.
    #[arg(long = "nt-stores")]
    nt_stores: bool,
    /// Vector width of the kernels.
    #[arg(long, value_enum, default_value_t = Simd::Auto)]
    simd: Simd,
    /// Ask for transparent huge pages (madvise) rather than the system's default policy.
    #[arg(long = "huge-pages")]
    huge_pages: bool,
    /// Output format (warnings always go to stderr).
    #[arg(short, long, value_enum, default_value_t = StreamFormat::Stream)]
    format: StreamFormat,
    #[command(flatten)]
    save: exec::SaveArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StreamFormat {
    /// STREAM 5.10's layout
    Stream,
    /// hostbench's native text
    Text,
    /// the full result as JSON
    Json,
    /// one line per kernel
    Csv,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Simd {
    /// AVX when the CPU has it, else SSE2
    Auto,
    Sse2,
    Avx,
    Avx512,
    /// plain loops left to the compiler
    Portable,
}

impl Simd {
    fn name(self) -> &'static str {
        match self {
            Simd::Auto => "auto",
            Simd::Sse2 => "sse2",
            Simd::Avx => "avx",
            Simd::Avx512 => "avx512",
            Simd::Portable => "portable",
        }
    }
}

/// Parses an element count: digits with an optional K/M/G (decimal) or Ki/Mi/Gi suffix.
pub fn parse_count(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let forms = "a whole number of elements, optionally with K, M, G (10^3, 10^6, 10^9) or Ki, \
                 Mi, Gi (2^10, 2^20, 2^30)";
    if end == 0 {
        return Err(format!("'{text}' is not {forms}"));
    }
    let n: u64 = t[..end]
        .parse()
        .map_err(|_| format!("'{text}' is too large"))?;
    let mult: u64 = match &t[end..] {
        "" => 1,
        "k" | "K" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        _ => return Err(format!("'{text}' is not {forms}")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{text}' is too large"))
}

fn parse_ntimes(text: &str) -> Result<u64, String> {
    let n = parse_count(text)?;
    if n < 2 {
        return Err(format!(
            "--ntimes={n}: STREAM does not count the first iteration, so at least 2 are needed"
        ));
    }
    if n > 1 << 32 {
        return Err(format!("--ntimes={n} is more than 2^32 iterations"));
    }
    Ok(n)
}

fn parse_offset(text: &str) -> Result<u64, String> {
    let n = parse_count(text)?;
    if n > 1 << 24 {
        return Err(format!(
            "--offset={n}: at most 16777216 elements (it pads alignment, not size)"
        ));
    }
    Ok(n)
}

fn parse_threads(text: &str) -> Result<usize, String> {
    let n: usize = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number of threads"))?;
    if n == 0 {
        return Err("--threads must be at least 1".into());
    }
    Ok(n)
}

/// Runs `hostbench stream ...`.
pub fn main(argv: &[String]) -> Result<ExitCode> {
    let Some(args) = crate::frontend::clap_parse::<Args>("stream", argv[1..].iter().cloned())?
    else {
        return Ok(ExitCode::SUCCESS);
    };
    if let Some(0) = args.array_size {
        return Err(anyhow!(
            "stream: --array-size=0: give at least 1 element per array, or leave it out for \
             STREAM's rule"
        ));
    }
    let threads = match args.threads {
        Some(t) => t,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if let Some(n) = args.array_size
        && n < threads as u64
    {
        return Err(anyhow!(
            "stream: --array-size={n} is smaller than the {threads} thread(s); every thread \
             needs at least one element (lower --threads or raise --array-size)"
        ));
    }
    let w = &Stream;
    let overrides: Vec<(String, String)> = [
        ("array_size", args.array_size.unwrap_or(0).to_string()),
        ("ntimes", args.ntimes.to_string()),
        ("offset", args.offset.to_string()),
        (
            "nt_stores",
            if args.nt_stores { "on" } else { "off" }.into(),
        ),
        ("simd", args.simd.name().into()),
        (
            "huge_pages",
            if args.huge_pages { "on" } else { "off" }.into(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let params = w.resolve(&overrides).map_err(|e| anyhow!("stream: {e}"))?;
    let mut plan = Plan::new(w.id(), params);
    plan.threads = threads;
    plan.time_s = 0.0;
    plan.events = 0;
    plan.validate().map_err(|e| anyhow!("stream: {e}"))?;
    let output = Plain::new(match args.format {
        StreamFormat::Stream => Text::Layout(hostbench_report::stream::render),
        StreamFormat::Text => Text::Native,
        StreamFormat::Json => Text::Json,
        // The generic CSV has no tables; STREAM's figures are the point here.
        StreamFormat::Csv => Text::Layout(hostbench_report::stream::render_csv),
    });
    let saving = args.save.options()?;
    exec::execute(&plan, w, &output, &saving, "stream", argv).map(|(code, _)| code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Args::command().debug_assert();
    }

    #[test]
    fn counts_take_decimal_and_binary_suffixes() {
        assert_eq!(parse_count("80000000"), Ok(80_000_000));
        assert_eq!(parse_count("80M"), Ok(80_000_000));
        assert_eq!(parse_count("64Mi"), Ok(64 << 20));
        assert_eq!(parse_count("2k"), Ok(2_000));
        assert!(parse_count("1.5M").is_err());
        assert!(parse_count("-3").is_err());
        assert!(parse_count("99999999999G").is_err());
        assert!(parse_ntimes("1").unwrap_err().contains("at least 2"));
    }
}
