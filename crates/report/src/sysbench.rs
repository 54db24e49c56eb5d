//! sysbench 1.0.20's text layout, line for line, so parsers written for sysbench read ours.
//!
//! Differences, all documented in docs/compatibility.md: the header names hostbench; the
//! percentile comes from an HDR histogram (0.1 % precision) instead of sysbench's 1024
//! buckets (±0.9 %), so it never lands outside [min, max]; several `--percentile` values
//! print one line each; interval timestamps keep their fraction when `--report-interval`
//! is not a whole number of seconds.

use crate::{ms, pct_label};
use hostbench_core::layout::{Layout, SysbenchLayout};
use hostbench_core::params::Params;
use hostbench_core::recorder::Counter;
use hostbench_core::result::{Interval, RunResult, decode_histogram};
use std::fmt::Write;

/// The first line, then a blank line.
pub fn header(version: &str) -> String {
    format!("hostbench {version} (sysbench 1.0.20 compatible)\n\n")
}

/// The line that names the database an OLTP run or stage talks to, from its parameters:
/// `hostbench: oltp_read_write on mysql, server mysql://root@127.0.0.1:3306/test` (the
/// password hidden). None for workloads without a database. sysbench's layout prints it on
/// stderr, so stdout stays sysbench's.
pub fn db_target(workload: &str, params: &Params) -> Option<String> {
    use hostbench_core::params::Value;
    if !workload.starts_with("db.") {
        return None;
    }
    let v = params.values();
    let text = |k: &str| match v.get(k) {
        Some(Value::Text(t)) => t.as_str(),
        _ => "",
    };
    let num = |k: &str| match v.get(k) {
        Some(Value::Int(n)) => n.to_string(),
        _ => String::new(),
    };
    let driver = text("db_driver");
    if driver.is_empty() {
        return None;
    }
    let url = text("db_url");
    let pw = |k: &str| if text(k).is_empty() { "" } else { ":***" };
    let server = if !url.is_empty() {
        hostbench_core::secret::mask(url).into_owned()
    } else {
        match driver {
            "pgsql" => format!(
                "postgres://{}{}@{}:{}/{}",
                text("pgsql_user"),
                pw("pgsql_password"),
                text("pgsql_host"),
                num("pgsql_port"),
                text("pgsql_db")
            ),
            "mysql" if !text("mysql_socket").is_empty() => format!(
                "mysql://{}{}@localhost/{}?socket={}",
                text("mysql_user"),
                pw("mysql_password"),
                text("mysql_db"),
                text("mysql_socket")
            ),
            "mysql" => format!(
                "mysql://{}{}@{}:{}/{}",
                text("mysql_user"),
                pw("mysql_password"),
                text("mysql_host"),
                num("mysql_port"),
                text("mysql_db")
            ),
            _ => format!("sqlite:{}", text("sqlite_db")),
        }
    };
    let test = workload.trim_start_matches("db.");
    Some(format!("hostbench: {test} on {driver}, server {server}\n"))
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
/// `sql`: the run used a database driver (sysbench's SQL line: tps, qps, r/w/o).
pub fn interval_line(i: &Interval, workload: &str, params: &Params, sql: bool) -> String {
    if workload == "memory" {
        let mib = i.events_per_s * params.int("block_size") as f64 / MIB;
        return format!("[ {} ] {mib:4.2} MiB/sec\n", stamp(i.t_s));
    }
    if workload == "fileio" {
        return crate::fileio::interval_line(i, &stamp(i.t_s));
    }
    let t = stamp(i.t_s);
    if sql {
        return sql_interval_line(i, &t);
    }
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

/// True for workloads that report in sysbench's SQL layout (the OLTP Lua scripts).
pub fn is_sql(workload: &str) -> bool {
    workload.starts_with("db.") && workload != "db.insert_race"
}

/// The fact a run records when it used a database driver without being a database
/// workload (a Lua script that called `sysbench.sql.driver()`): sysbench then prints its
/// SQL report, whatever the test.
pub const SQL_DRIVER_FACT: &str = "sql_driver_used";

/// True when `r` reports in sysbench's SQL layout: a database workload, or a run that
/// used a database driver ([`SQL_DRIVER_FACT`]).
pub fn uses_sql(r: &RunResult) -> bool {
    is_sql(&r.workload.id)
        || r.workload
            .facts
            .get(SQL_DRIVER_FACT)
            .is_some_and(|v| *v > 0.0)
}

fn rate(m: &std::collections::BTreeMap<String, f64>, k: &str) -> f64 {
    m.get(k).copied().unwrap_or(0.0)
}

/// sysbench's SQL interval line: tps, qps with the read/write/other split, latency, errors
/// and reconnects per second.
fn sql_interval_line(i: &Interval, t: &str) -> String {
    let c = &i.counters_per_s;
    let (r, w, o) = (
        rate(c, Counter::Reads.name()),
        rate(c, Counter::Writes.name()),
        rate(c, Counter::Other.name()),
    );
    let mut s = format!(
        "[ {t} ] thds: {} tps: {:4.2} qps: {:4.2} (r/w/o: {r:4.2}/{w:4.2}/{o:4.2})",
        i.threads,
        i.events_per_s,
        r + w + o
    );
    for p in &i.latency.percentiles {
        let _ = write!(s, " lat (ms,{}%): {:4.2}", pct_label(p.p), ms(p.ns));
    }
    let _ = writeln!(
        s,
        " err/s: {:4.2} reconn/s: {:4.2}",
        rate(c, Counter::Errors.name()),
        rate(c, Counter::Reconnects.name())
    );
    if let (Some(q), Some(c)) = (i.queue_len, i.concurrency) {
        let _ = writeln!(s, "[ {t} ] queue length: {q}, concurrency: {c}");
    }
    s
}

/// sysbench's "SQL statistics" block (before the common report).
pub fn sql_report(r: &RunResult) -> String {
    let get = |k: &str| r.metrics.counters.get(k).copied().unwrap_or(0);
    let (rd, wr, ot) = (
        get(Counter::Reads.name()),
        get(Counter::Writes.name()),
        get(Counter::Other.name()),
    );
    let total = rd + wr + ot;
    let t = r.metrics.duration_s;
    let per = |n: u64| if t > 0.0 { n as f64 / t } else { 0.0 };
    let mut s = String::from("SQL statistics:\n    queries performed:\n");
    let _ = writeln!(s, "        read:                            {rd}");
    let _ = writeln!(s, "        write:                           {wr}");
    let _ = writeln!(s, "        other:                           {ot}");
    let _ = writeln!(s, "        total:                           {total}");
    let ev = r.metrics.events;
    let _ = writeln!(
        s,
        "    transactions:                        {ev:<6} ({:.2} per sec.)",
        per(ev)
    );
    let _ = writeln!(
        s,
        "    queries:                             {total:<6} ({:.2} per sec.)",
        per(total)
    );
    let (e, rc) = (get(Counter::Errors.name()), get(Counter::Reconnects.name()));
    let _ = writeln!(
        s,
        "    ignored errors:                      {e:<6} ({:.2} per sec.)",
        per(e)
    );
    let _ = writeln!(
        s,
        "    reconnects:                          {rc:<6} ({:.2} per sec.)",
        per(rc)
    );
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
        _ if uses_sql(r) => sql_report(r),
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
    let forced = r.outcome.stop_reason == hostbench_core::runner::StopReason::ForcedShutdown;
    if forced {
        // sysbench's order: its FATAL line, the test's report, then the unfinished count
        // and a blank line before the common report.
        s.push_str("FATAL: The --max-time limit has expired, forcing shutdown...\n");
    }
    if with_histogram {
        s.push_str(&histogram(r));
    }
    s.push_str(&test_report(r));
    if forced {
        let _ = writeln!(
            s,
            "\nNumber of unfinished transactions on forced shutdown: {}",
            r.outcome.unfinished_events
        );
    }
    s.push_str(&common_report(r));
    s
}

/// The final report of a stored run, with the histogram when its sysbench command line
/// asked for one (`--histogram`, recorded in the result's layout options).
pub fn report(r: &RunResult) -> String {
    let histogram = matches!(
        &r.config.layout,
        Some(Layout::Sysbench(SysbenchLayout { histogram: true }))
    );
    final_report(r, histogram)
}

/// A checkpoint: its title line, then a full report.
pub fn checkpoint(r: &RunResult) -> String {
    format!(
        "[ {:.0}s ] Checkpoint report:\n{}",
        r.metrics.duration_s,
        final_report(r, false)
    )
}
