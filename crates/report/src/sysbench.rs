//! sysbench 1.0.20's text layout, line for line, so parsers written for sysbench read ours.
//!
//! Differences, all documented in docs/compatibility.md: the header names hostbench; the
//! percentile comes from an HDR histogram (0.1 % precision) instead of sysbench's 1024
//! buckets (±0.9 %), so it never lands outside [min, max]; several `--percentile` values
//! print one line each; interval timestamps keep their fraction when `--report-interval`
//! is not a whole number of seconds.

use crate::{ms, pct_label};
use hostbench_core::params::Params;
use hostbench_core::result::{Interval, RunResult, decode_histogram};
use std::fmt::Write;

/// The first line, then a blank line.
pub fn header(version: &str) -> String {
    format!("hostbench {version} (sysbench 1.0.20 compatible)\n\n")
}

/// The general options block that opens a run.
#[derive(Debug, Clone, Default)]
pub struct RunMode<'a> {
    /// Threads.
    pub threads: usize,
    /// Warmup, s.
    pub warmup_s: f64,
    /// Target rate.
    pub rate: f64,
    /// Interval report period, s.
    pub report_interval_s: f64,
    /// Checkpoint times, s.
    pub checkpoints: &'a [f64],
    /// The seed if the user gave one.
    pub seed: Option<u64>,
    /// Forced shutdown delay after the time limit, s.
    pub forced_shutdown_s: Option<f64>,
    /// `--time`, s (the forced-shutdown line prints time + delay).
    pub time_s: f64,
    /// `--debug`.
    pub debug: bool,
    /// `--validate`.
    pub validate: bool,
}

fn secs(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as u64)
    } else {
        format!("{v}")
    }
}

/// "Running the test with following options:" ... up to the blank lines before the test's
/// own mode lines.
pub fn run_mode(m: &RunMode<'_>) -> String {
    let mut s = String::from("Running the test with following options:\n");
    let _ = writeln!(s, "Number of threads: {}", m.threads);
    if m.warmup_s > 0.0 {
        let _ = writeln!(s, "Warmup time: {}s", secs(m.warmup_s));
    }
    if m.rate > 0.0 {
        let _ = writeln!(s, "Target transaction rate: {}/sec", secs(m.rate));
    }
    if m.report_interval_s > 0.0 {
        let _ = writeln!(
            s,
            "Report intermediate results every {} second(s)",
            secs(m.report_interval_s)
        );
    }
    if !m.checkpoints.is_empty() {
        let list: Vec<String> = m.checkpoints.iter().map(|&c| secs(c)).collect();
        let _ = writeln!(s, "Report checkpoint(s) at {} seconds", list.join(", "));
    }
    if m.debug {
        s.push_str("Debug mode enabled.\n\n");
    }
    if m.validate {
        s.push_str("Validation checks: on.\n\n");
    }
    match m.seed {
        Some(seed) => {
            let _ = writeln!(
                s,
                "Initializing random number generator from seed ({seed})."
            );
        }
        None => s.push_str("Initializing random number generator from current time\n"),
    }
    s.push('\n');
    if let Some(f) = m.forced_shutdown_s
        && m.time_s > 0.0
    {
        // sysbench prints the moment of the shutdown, counted from the start.
        let _ = writeln!(s, "Forcing shutdown in {} seconds", secs(m.time_s + f));
    }
    s.push('\n');
    s
}

/// The test's own mode lines and "Initializing worker threads..."; `verbosity` ≥ 4 adds
/// sysbench's informational lines.
pub fn test_mode(workload: &str, params: &Params, verbosity: u8) -> String {
    let mut s = String::new();
    if verbosity >= 4 {
        match workload {
            "cpu" => s.push_str("Doing CPU performance benchmark\n\n"),
            "threads" => {
                let _ = writeln!(
                    s,
                    "Doing thread subsystem performance test\nThread yields per test: {} Locks used: {}",
                    params.int("yields"),
                    params.int("locks")
                );
            }
            "mutex" => s.push_str("Doing mutex performance test\n"),
            _ => {}
        }
    }
    match workload {
        "cpu" => {
            let _ = writeln!(s, "Prime numbers limit: {}\n", params.int("max_prime"));
        }
        "memory" => {
            // sysbench prints whole KiB and MiB, truncated (a 64-byte block shows as 0KiB).
            let _ = writeln!(
                s,
                "Running memory speed test with the following options:\n  block size: {}KiB\n  total size: {}MiB\n  operation: {}\n  scope: {}\n",
                params.int("block_size") / 1024,
                params.int("total_size") / 1024 / 1024,
                params.text("oper"),
                params.text("scope"),
            );
        }
        _ => {}
    }
    s.push_str("Initializing worker threads...\n\n");
    s
}

/// [`test_mode`] with what some tests print from the plan beyond their parameters
/// (fileio's "Number of IO requests" is `--events`).
pub fn test_mode_with_events(
    workload: &str,
    params: &Params,
    events: u64,
    verbosity: u8,
) -> String {
    let mut s = String::new();
    if workload == "fileio" {
        s.push_str(&crate::fileio::mode_lines(params, events));
    }
    s.push_str(&test_mode(workload, params, verbosity));
    s
}

/// What sysbench logs at verbosity ≥ 4 when the workers have stopped: one "Time limit
/// exceeded" per thread (its logger folds repeats) and, unless the shutdown was forced,
/// "Done.".
pub fn workers_done(time_limit: bool, done: bool, threads: usize) -> String {
    let mut s = String::new();
    if time_limit {
        s.push_str("Time limit exceeded, exiting...\n");
        if threads > 1 {
            let _ = writeln!(s, "(last message repeated {} times)", threads - 1);
        }
    }
    if done {
        s.push_str("Done.\n\n");
    }
    s
}

/// "Threads started!" and the blank line after it.
pub fn started() -> &'static str {
    "Threads started!\n\n"
}

/// One interval line (plus the queue line in open-loop mode); the memory test prints its
/// own (`[ 1s ] 31891.16 MiB/sec`).
pub fn interval_line(i: &Interval, workload: &str, params: &Params) -> String {
    if workload == "memory" {
        let mib = i.events_per_s * params.int("block_size") as f64 / MIB;
        return format!("[ {} ] {mib:4.2} MiB/sec\n", stamp(i.t_s));
    }
    if workload == "fileio" {
        return crate::fileio::interval_line(i, &stamp(i.t_s));
    }
    let t = stamp(i.t_s);
    let mut s = format!("[ {t} ] thds: {} eps: {:4.2}", i.threads, i.events_per_s);
    for p in &i.latency.percentiles {
        let _ = write!(s, " lat (ms,{}%): {:4.2}", pct_label(p.p), ms(p.ns));
    }
    s.push('\n');
    if let (Some(q), Some(c)) = (i.queue_len, i.concurrency) {
        let _ = writeln!(s, "[ {t} ] queue length: {q} concurrency: {c}");
    }
    s
}

/// `--histogram`: the latency distribution folded into sysbench's 1024 logarithmic buckets
/// (0.001 ms … 100 000 ms), printed as sysbench prints it.
pub fn histogram(r: &RunResult) -> String {
    let mut s = String::from(
        "Latency histogram (values are in milliseconds)\n       value  ------------- distribution ------------- count\n",
    );
    let m = 1023.0 / (1e5f64 / 1e-3).ln();
    let mut buckets = vec![0u64; 1024];
    if let Some(h) = decode_histogram(&r.latency.hdr_histogram) {
        for v in h.iter_recorded() {
            let ms = h.median_equivalent(v.value_iterated_to()) as f64 / 1e6;
            let i = ((ms.ln() - 1e-3f64.ln()) * m + 0.5)
                .floor()
                .clamp(0.0, 1023.0) as usize;
            buckets[i] += v.count_at_value();
        }
    }
    let max = buckets.iter().copied().max().unwrap_or(0);
    for (i, &c) in buckets.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let value = 1e-3 * (i as f64 / m).exp();
        let stars = ((c as f64 * 40.0 / max as f64) + 0.5).floor() as usize;
        let _ = writeln!(s, "{value:12.3} |{:<40} {c}", "*".repeat(stars));
    }
    s.push_str(" \n");
    s
}

const MIB: f64 = 1024.0 * 1024.0;

/// An interval timestamp: whole seconds as sysbench prints them, else milliseconds kept.
fn stamp(t: f64) -> String {
    if t.fract() == 0.0 {
        format!("{t:.0}s")
    } else {
        format!("{}s", (t * 1000.0).round() / 1000.0)
    }
}

/// The test's own final lines (before "General statistics").
pub fn test_report(r: &RunResult) -> String {
    match r.workload.id.as_str() {
        "cpu" => format!(
            "CPU speed:\n    events per second: {:8.2}\n",
            r.metrics.events_per_s
        ),
        "memory" => {
            let mut s = format!(
                "Total operations: {} ({:8.2} per second)\n\n",
                r.metrics.events, r.metrics.events_per_s
            );
            if r.workload.params.text("oper") != "none" {
                let block = r.workload.params.int("block_size") as f64;
                let mib = r.metrics.events as f64 * block / MIB;
                let _ = writeln!(
                    s,
                    "{mib:4.2} MiB transferred ({:4.2} MiB/sec)\n",
                    r.metrics.events_per_s * block / MIB
                );
            }
            s
        }
        "fileio" => crate::fileio::report(r),
        _ => String::new(),
    }
}

/// The common final report: General statistics, Latency (ms), Threads fairness.
pub fn common_report(r: &RunResult) -> String {
    let l = &r.latency;
    let f = &r.fairness;
    let mut s = String::new();
    let _ = writeln!(s, "\nGeneral statistics:");
    let _ = writeln!(
        s,
        "    total time:                          {:.4}s",
        r.metrics.duration_s
    );
    let _ = writeln!(
        s,
        "    total number of events:              {}",
        r.metrics.events
    );
    let _ = writeln!(s, "\nLatency (ms):");
    let _ = writeln!(s, "         min: {:39.2}", ms(l.min_ns));
    let _ = writeln!(s, "         avg: {:39.2}", ms(l.avg_ns));
    let _ = writeln!(s, "         max: {:39.2}", ms(l.max_ns));
    if l.percentiles.iter().all(|p| p.p == 0.0) {
        let _ = writeln!(s, "         percentile stats:               disabled");
    }
    for p in l.percentiles.iter().filter(|p| p.p > 0.0) {
        let label = format!("{:>3}th percentile:", pct_label(p.p));
        let _ = writeln!(
            s,
            "        {label} {:>width$.2}",
            ms(p.ns),
            width = 44 - label.len()
        );
    }
    let _ = writeln!(s, "         sum: {:39.2}", l.sum_ns as f64 / 1e6);
    let _ = writeln!(s, "\nThreads fairness:");
    let _ = writeln!(
        s,
        "    events (avg/stddev):           {:.4}/{:3.2}",
        f.events_avg, f.events_stddev
    );
    let _ = writeln!(
        s,
        "    execution time (avg/stddev):   {:.4}/{:3.2}",
        f.exec_time_avg_s, f.exec_time_stddev_s
    );
    s.push('\n');
    s
}

/// Everything printed after the run: forced-shutdown notes, optional histogram, the test's
/// report and the common report.
pub fn final_report(r: &RunResult, with_histogram: bool) -> String {
    let mut s = String::new();
    if r.outcome.stop_reason == hostbench_core::runner::StopReason::ForcedShutdown {
        s.push_str("The --max-time limit has expired, forcing shutdown...\n");
        let _ = writeln!(
            s,
            "Number of unfinished transactions on forced shutdown: {}",
            r.outcome.unfinished_events
        );
    }
    if with_histogram {
        s.push_str(&histogram(r));
    }
    s.push_str(&test_report(r));
    s.push_str(&common_report(r));
    s
}

/// A checkpoint: its title line, then a full report.
pub fn checkpoint(r: &RunResult) -> String {
    format!(
        "[ {:.0}s ] Checkpoint report:\n{}",
        r.metrics.duration_s,
        final_report(r, false)
    )
}
