//! The `hostbench memlat` front-end: a load-to-use latency ladder with lmbench
//! `lat_mem_rd`-like options (`--min-size`, `--max-size`, sizes with K/M/G = 1024), and its
//! own text and CSV views of the result.
//!
//! Options become `memlat` workload parameters (the same ones `hostbench run memlat --set`
//! takes), so defaults live once, in the workload's parameter table. The plan has no time or
//! event limit: the workload ends itself after the last size, and Ctrl-C keeps the sizes
//! measured so far. Bad input is one line on stderr and exit 2, before any memory is
//! allocated (the workload checks sizes against each other and the host in `setup`).

use crate::exec;
use crate::present::{Plain, Text};
use anyhow::{Result, bail};
use clap::{Parser, ValueEnum};
use hostbench_core::host::CacheInfo;
use hostbench_core::params::ParamError;
use hostbench_core::plan::Plan;
use hostbench_core::rand::Distribution;
use hostbench_core::result::{RunResult, Table};
use hostbench_core::units::{parse_seconds, parse_size};
use hostbench_core::workload::Workload;
use hostbench_workloads::memory::memlat::{self, Memlat, col, fact, size_label};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::process::ExitCode;

/// Load-to-use memory latency: ns per dependent load for working sets from a few KiB to
/// well past the last-level cache.
///
/// Each size is a random cyclic chain with one pointer per cache line, walked `p = *p`, so
/// loads cannot overlap and prefetchers cannot help. The staircase shows L1d, L2, L3 and
/// DRAM; rows are marked where the host's reported cache sizes fall. Sizes take K, M, G
/// suffixes (powers of 1024). See docs/memlat.md.
#[derive(Debug, Parser)]
#[command(
    name = "hostbench memlat",
    bin_name = "hostbench memlat",
    after_help = "Also: hostbench run memlat --set max_size=64M (same parameters, runner options)."
)]
struct Args {
    /// Smallest working set.
    #[arg(long, value_name = "SIZE", value_parser = size_text)]
    min_size: Option<String>,
    /// Largest working set; `auto` = 8x the last-level cache, capped for VMs (16 MiB per
    /// sharing CPU) and at 1/4 of available memory.
    #[arg(long, value_name = "SIZE|auto", value_parser = max_size_text)]
    max_size: Option<String>,
    /// Ladder points per doubling (1-16): 2^k x (1 + j/N).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=16))]
    steps_per_doubling: Option<u32>,
    /// Back the buffer with transparent huge pages (madvise), so large sizes show memory
    /// latency rather than TLB misses.
    #[arg(long)]
    huge_pages: bool,
    /// Timed duration per size, at least [default: 100ms].
    #[arg(long, value_name = "DURATION", value_parser = seconds_text)]
    min_time: Option<String>,
    /// Timed loads per size, at least [default: 2000000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1u64 << 40))]
    min_loads: Option<u64>,
    /// Bytes between chained pointers, one per cache line [default: 64].
    #[arg(long, value_name = "SIZE", value_parser = size_text)]
    line_size: Option<String>,
    /// Seed of the random chains (0 = from the clock; the seed used is in the result).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// memlat measures with one thread; anything else is refused.
    #[arg(short, long, default_value_t = 1, hide = true)]
    threads: usize,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutFormat::Text)]
    format: OutFormat,
    #[command(flatten)]
    save: exec::SaveArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum OutFormat {
    /// The ladder as an aligned table with cache-size markers.
    Text,
    /// The full result (schemas/result.v1.json).
    Json,
    /// One row per size.
    Csv,
}

fn size_text(s: &str) -> Result<String, String> {
    parse_size(s)
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

fn max_size_text(s: &str) -> Result<String, String> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok("0".into());
    }
    match parse_size(s) {
        Ok(0) => Err("0 is not a size; use auto for the automatic choice".into()),
        Ok(_) => Ok(s.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

fn seconds_text(s: &str) -> Result<String, String> {
    parse_seconds(s)
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

/// Runs `hostbench memlat ...`.
pub fn main(argv: &[String]) -> Result<ExitCode> {
    // argv[0] is the program, argv[1] is `memlat`: clap sees `hostbench memlat ARGS...`.
    let Some(args) = crate::frontend::clap_parse::<Args>("memlat", argv.iter().skip(1).cloned())?
    else {
        return Ok(ExitCode::SUCCESS);
    };
    if args.threads != 1 {
        bail!(
            "memlat: --threads={} is not supported: memlat measures with one thread (a second \
             chasing thread shares the caches and changes what is measured)",
            args.threads
        );
    }
    let mut ov: Vec<(&str, String)> = Vec::new();
    if let Some(v) = args.min_size {
        ov.push(("min_size", v));
    }
    if let Some(v) = args.max_size {
        ov.push(("max_size", v));
    }
    if let Some(v) = args.steps_per_doubling {
        ov.push(("steps_per_doubling", v.to_string()));
    }
    if args.huge_pages {
        ov.push(("huge_pages", "on".into()));
    }
    if let Some(v) = args.min_time {
        ov.push(("min_time", v));
    }
    if let Some(v) = args.min_loads {
        ov.push(("min_loads", v.to_string()));
    }
    if let Some(v) = args.line_size {
        ov.push(("line_size", v));
    }
    let ov: Vec<(String, String)> = ov.into_iter().map(|(k, v)| (k.into(), v)).collect();
    let params = Memlat.resolve(&ov).map_err(|e| match e {
        ParamError::Invalid {
            name,
            value,
            expected,
        } => anyhow::anyhow!(
            "memlat: --{}={value}: expected {expected}",
            name.replace('_', "-")
        ),
        e => anyhow::anyhow!("memlat: {e}"),
    })?;
    let mut plan = Plan::new(Memlat.id(), params);
    plan.threads = 1;
    plan.time_s = 0.0;
    plan.events = 0;
    plan.percentiles = vec![50.0, 95.0, 99.0];
    plan.rand = Distribution::Uniform;
    plan.seed = args.seed;
    let output = Plain::new(match args.format {
        OutFormat::Text => Text::Layout(text),
        OutFormat::Json => Text::Json,
        OutFormat::Csv => Text::Layout(csv),
    });
    let saving = args.save.options()?;
    exec::execute(&plan, &Memlat, &output, &saving, "memlat", argv).map(|(code, _)| code)
}

fn memlat_table(r: &RunResult) -> Option<&Table> {
    r.tables.iter().find(|t| t.name == memlat::TABLE)
}

/// One CSV line per size: the row label, then the table's columns.
fn csv(r: &RunResult) -> String {
    let Some(t) = memlat_table(r) else {
        return String::new();
    };
    let mut s = String::from("size");
    for c in &t.columns {
        s.push(',');
        s.push_str(&c.name);
    }
    s.push('\n');
    for row in &t.rows {
        s.push_str(&row.label);
        for v in &row.values {
            s.push(',');
            if let Some(v) = v {
                let _ = write!(s, "{v}");
            }
        }
        s.push('\n');
    }
    s
}

/// The text view of a result: header, one line per size, cache markers.
fn text(r: &RunResult) -> String {
    let Some(t) = memlat_table(r) else {
        return "memlat: no table in the result\n".into();
    };
    let caches = r.host.as_ref().map_or(&[][..], |h| &h.cpu.caches[..]);
    ladder_text(t, caches, &r.workload.facts, r.config.seed)
}

/// Width of the bar column (log scale from the fastest to the slowest size).
const BAR: f64 = 30.0;

/// A row whose mean ns per load is this far (relative) from its median chunk is marked.
const NOISE: f64 = 0.10;

/// The ladder as text. Before the first size larger than each reported data or unified
/// cache comes a marker line (`-- L2 1 MiB ---`), so the staircase's steps can be read
/// against the caches; a bar on a log scale draws the staircase itself.
fn ladder_text(
    t: &Table,
    caches: &[CacheInfo],
    facts: &BTreeMap<String, f64>,
    seed: u64,
) -> String {
    let fact = |k: &str| facts.get(k).copied();
    let colx = |name: &str| t.columns.iter().position(|c| c.name == name);
    let get = |row: &hostbench_core::result::Row, name: &str| {
        colx(name).and_then(|i| row.values.get(i).copied().flatten())
    };
    let mut s = String::new();
    let line = fact(fact::LINE_BYTES).unwrap_or(0.0) as u64;
    let _ = writeln!(
        s,
        "memlat: load-to-use latency, one dependent load at a time through a random cycle of {line} B lines"
    );
    let (min, max) = (
        fact(fact::MIN_SIZE_BYTES).unwrap_or(0.0) as u64,
        fact(fact::MAX_SIZE_BYTES).unwrap_or(0.0) as u64,
    );
    let how = if fact(fact::MAX_SIZE_AUTO) == Some(1.0) {
        match (fact(fact::LLC_ASSUMED_BYTES), fact(fact::LLC_LEVEL)) {
            (Some(a), Some(l)) if max == a as u64 * memlat::AUTO_LLC_FACTOR => format!(
                "max = {} x L{l} {}",
                memlat::AUTO_LLC_FACTOR,
                size_label(a as u64)
            ),
            _ => "max chosen automatically (see warning)".into(),
        }
    } else {
        "max given".into()
    };
    let pages = if fact(fact::HUGE_PAGES) == Some(1.0) {
        match (fact(fact::HUGE_PAGE_BYTES), fact(fact::TOUCHED_BYTES)) {
            (Some(h), Some(t)) => format!(
                "huge pages asked: {} of {} on huge pages",
                size_label(h as u64),
                size_label(t as u64)
            ),
            _ => "huge pages asked".into(),
        }
    } else {
        "4 KiB pages".into()
    };
    let _ = writeln!(
        s,
        "  sizes {} to {} ({} sizes, {} per doubling; {how}), {pages}, seed {seed}",
        size_label(min),
        size_label(max),
        fact(fact::SIZES_PLANNED).unwrap_or(0.0),
        fact(fact::STEPS_PER_DOUBLING).unwrap_or(0.0),
    );
    s.push('\n');

    // The staircase is drawn from the median chunk, which one disturbance cannot move.
    let staircase: Vec<f64> = t
        .rows
        .iter()
        .map(|r| {
            get(r, col::MEDIAN_NS_PER_LOAD)
                .or(get(r, col::NS_PER_LOAD))
                .unwrap_or(f64::NAN)
        })
        .collect();
    let lo = staircase
        .iter()
        .copied()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let hi = staircase.iter().copied().fold(0.0, f64::max);
    let bar = |v: f64| -> String {
        // NaN (no figure) and a flat ladder both draw the shortest bar.
        let drawable = v > 0.0 && hi > lo && lo.is_finite();
        if !drawable {
            return "#".into();
        }
        let n = 1.0 + (BAR * (v / lo).ln() / (hi / lo).ln()).round();
        "#".repeat(n.clamp(1.0, BAR + 1.0) as usize)
    };
    let head = format!(
        "  {:>10}  {:>9}  {:>9}  {:>8}  {:>13}  {:>6}",
        "size", "ns/load", "median", "best", "loads", "chunks"
    );
    let width = head.chars().count();
    let _ = writeln!(s, "{head}  staircase (log scale)");
    let mut marks: Vec<&CacheInfo> = caches
        .iter()
        .filter(|c| c.kind != "Instruction" && c.size_bytes > 0)
        .collect();
    marks.sort_by_key(|c| c.size_bytes);
    let mut marks = marks.into_iter().peekable();
    let marker = |c: &CacheInfo| {
        let kind = if c.kind == "Data" { "d" } else { "" };
        let shared = if c.shared_by > 1 {
            format!(", shared by {} CPUs", c.shared_by)
        } else {
            String::new()
        };
        let text = format!(
            "-- L{}{kind} {}{shared} ",
            c.level,
            size_label(c.size_bytes)
        );
        format!("  {text:-<w$}\n", w = width - 2)
    };
    let mut noisy = false;
    for (row, step) in t.rows.iter().zip(&staircase) {
        let size = get(row, col::SIZE_BYTES).unwrap_or(0.0) as u64;
        let mean = get(row, col::NS_PER_LOAD);
        while let Some(c) = marks.next_if(|c| c.size_bytes < size) {
            s.push_str(&marker(c));
        }
        let num = |v: Option<f64>, prec: usize| match v {
            Some(v) => format!("{v:.prec$}"),
            None => "-".into(),
        };
        let median = get(row, col::MEDIAN_NS_PER_LOAD);
        let disturbed = mean
            .zip(median)
            .is_some_and(|(v, m)| (v - m).abs() > NOISE * m);
        noisy |= disturbed;
        let _ = writeln!(
            s,
            "  {:>10}  {:>9}  {:>8}{}  {:>8}  {:>13}  {:>6}  {}",
            row.label,
            num(mean, 2),
            num(median, 2),
            if disturbed { '*' } else { ' ' },
            num(get(row, col::MIN_NS_PER_LOAD), 2),
            num(get(row, col::LOADS), 0),
            num(get(row, col::CHUNKS), 0),
            bar(*step)
        );
    }
    let (planned, measured) = (
        fact(fact::SIZES_PLANNED).unwrap_or(0.0),
        fact(fact::SIZES_MEASURED).unwrap_or(0.0),
    );
    if noisy {
        let _ = writeln!(
            s,
            "  * mean and median differ by more than {:.0}%: something disturbed this size\n    \
             (other tenants, interrupts, vCPU moves); trust the median, or rerun.",
            NOISE * 100.0
        );
    }
    if measured < planned {
        let _ = writeln!(s, "  (stopped after {measured} of {planned} sizes)");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use hostbench_core::result::{Column, Row};

    #[test]
    fn verify_cli() {
        Args::command().debug_assert();
    }

    fn table(sizes: &[(u64, f64)]) -> Table {
        Table {
            name: memlat::TABLE.into(),
            title: String::new(),
            columns: [col::SIZE_BYTES, col::NS_PER_LOAD, col::MEDIAN_NS_PER_LOAD]
                .iter()
                .map(|n| Column {
                    name: n.to_string(),
                    unit: String::new(),
                })
                .collect(),
            rows: sizes
                .iter()
                .map(|&(b, ns)| Row {
                    label: size_label(b),
                    values: vec![Some(b as f64), Some(ns), Some(ns)],
                })
                .collect(),
        }
    }

    fn cache(level: u32, kind: &str, size: u64) -> CacheInfo {
        CacheInfo {
            level,
            kind: kind.into(),
            size_bytes: size,
            shared_by: 1,
        }
    }

    #[test]
    fn markers_fall_between_the_sizes_around_each_cache() {
        let t = table(&[
            (32 << 10, 1.0),
            (48 << 10, 1.1),
            (64 << 10, 4.0),
            (1 << 20, 4.5),
            (2 << 20, 12.0),
        ]);
        let caches = [
            cache(1, "Data", 48 << 10),
            cache(1, "Instruction", 32 << 10),
            cache(2, "Unified", 1 << 20),
            cache(3, "Unified", 32 << 20),
        ];
        let out = ladder_text(&t, &caches, &BTreeMap::new(), 7);
        let lines: Vec<&str> = out.lines().collect();
        let at = |needle: &str| {
            lines
                .iter()
                .position(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("{needle} missing:\n{out}"))
        };
        // L1d 48 KiB sits after the 48 KiB row and before 64 KiB; L2 1 MiB before 2 MiB;
        // L3 beyond the ladder is not drawn; instruction caches never are.
        assert!(at("  48 KiB") < at("-- L1d 48 KiB") && at("-- L1d 48 KiB") < at("  64 KiB"));
        assert!(at("   1 MiB") < at("-- L2 1 MiB") && at("-- L2 1 MiB") < at("   2 MiB"));
        assert!(!out.contains("L3") && !out.contains("L1i"), "{out}");
        // Every table line has the same width up to the bar; bars grow with latency.
        let bars: Vec<usize> = lines
            .iter()
            .filter(|l| l.contains(" KiB  ") || l.contains(" MiB  "))
            .filter(|l| !l.contains("--"))
            .map(|l| l.chars().rev().take_while(|c| *c == '#').count())
            .collect();
        assert_eq!(bars.len(), 5, "{out}");
        assert!(bars.windows(2).all(|w| w[0] <= w[1]), "{bars:?}\n{out}");
        assert_eq!((bars[0], bars[4]), (1, BAR as usize + 1));
    }
}
