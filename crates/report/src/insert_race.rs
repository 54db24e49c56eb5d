//! The `insert-race` report: makespan first (the number the test is run for), then rows/s,
//! per-session times and their spread, and per-insert latency percentiles.

use crate::ms;
use hostbench_core::names::insert_race;
use hostbench_core::recorder::Counter;
use hostbench_core::result::RunResult;
use std::fmt::Write;

fn text<'a>(r: &'a RunResult, k: &str) -> &'a str {
    match r.workload.params.values().get(k) {
        Some(hostbench_core::params::Value::Text(t)) => t,
        _ => "",
    }
}

/// The full report.
pub fn render(r: &RunResult) -> String {
    let mut s = String::new();
    let sessions = r.config.threads;
    let rows = match r.workload.params.values().get("rows") {
        Some(hostbench_core::params::Value::Int(n)) => *n as u64,
        _ => 0,
    };
    let target = if text(r, "db_url").is_empty() {
        text(r, "db_driver").to_string()
    } else {
        text(r, "db_url").to_string()
    };
    let procedure = text(r, "mode") == "procedure";
    let how = if procedure {
        let stagger = match r.workload.params.values().get("stagger") {
            Some(hostbench_core::params::Value::Float(v)) if *v > 0.0 => {
                format!(", sessions {v} s apart")
            }
            _ => ", sessions together".into(),
        };
        format!(", mode procedure (a WHILE loop on the server){stagger}")
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "insert-race: {sessions} session(s) x {rows} row(s), table mode {}, commit {}, on {target}{how}",
        text(r, "table_mode"),
        text(r, "commit"),
    );
    // The server and the engine its tables really use (the workload asked the server).
    if let Some(t) = r
        .tables
        .iter()
        .find(|t| t.name == insert_race::SERVER_TABLE)
        && let Some(row) = t.rows.first()
    {
        let tx = match row.values.first().copied().flatten() {
            Some(0.0) => " (no transactions)",
            _ => "",
        };
        let _ = writeln!(s, "server: {}{tx}", row.label);
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "makespan:        {:>12.3} s   (start barrier to the last session done)",
        r.metrics.duration_s
    );
    let get = |k: &str| r.metrics.counters.get(k).copied().unwrap_or(0);
    // Client mode: one event per row. Procedure mode: one event (a CALL) per session, and
    // the rows it inserted are the writes.
    let inserted = if procedure {
        get(Counter::Writes.name())
    } else {
        r.metrics.events
    };
    let rate = if procedure && r.metrics.duration_s > 0.0 {
        inserted as f64 / r.metrics.duration_s
    } else {
        r.metrics.events_per_s
    };
    let _ = writeln!(
        s,
        "rows inserted:   {:>12}     ({rate:.1} rows/s)",
        inserted
    );
    let _ = writeln!(
        s,
        "BEGIN/COMMIT:    {:>12}     errors retried: {}",
        get(Counter::Other.name()),
        get(Counter::Errors.name())
    );
    let lost = r
        .workload
        .facts
        .get(insert_race::fact::ROWS_LOST)
        .copied()
        .unwrap_or(0.0);
    if get(Counter::Reconnects.name()) > 0 || lost > 0.0 {
        let _ = writeln!(
            s,
            "reconnects:      {:>12}     rows lost with a vanished temporary table: {lost}",
            get(Counter::Reconnects.name())
        );
    }
    let times: Vec<f64> = r
        .fairness
        .per_thread
        .iter()
        .map(|t| t.latency_sum_ns as f64 / 1e9)
        .collect();
    if !times.is_empty() {
        let min = times.iter().copied().fold(f64::INFINITY, f64::min);
        let max = times.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "session times (s, {}):",
            if procedure {
                "each session's CALL, from its start to its end"
            } else {
                "time spent inserting"
            }
        );
        let _ = writeln!(
            s,
            "    min {min:.3}  avg {:.3}  max {max:.3}  stddev {:.3}  max/min {}",
            r.fairness.exec_time_avg_s,
            r.fairness.exec_time_stddev_s,
            if min > 0.0 {
                format!("{:.2}", max / min)
            } else {
                "-".into()
            }
        );
        for (i, (t, th)) in times.iter().zip(&r.fairness.per_thread).enumerate() {
            let n = if procedure {
                th.events * rows
            } else {
                th.events
            };
            let rate = if *t > 0.0 { n as f64 / t } else { 0.0 };
            let _ = writeln!(
                s,
                "    session {:>3}: {:>10} rows  {t:>10.3} s  {rate:>12.1} rows/s",
                i + 1,
                n
            );
        }
    }
    let l = &r.latency;
    let _ = writeln!(s);
    if procedure {
        let _ = writeln!(
            s,
            "insert latency: not measured (the server inserts the rows in the procedure's loop)"
        );
        return finish(r, s);
    }
    let _ = write!(
        s,
        "insert latency (ms): min {:.3}  avg {:.3}",
        ms(l.min_ns),
        ms(l.avg_ns)
    );
    for p in &l.percentiles {
        if p.p > 0.0 {
            let _ = write!(s, "  p{} {:.3}", crate::pct_label(p.p), ms(p.ns));
        }
    }
    let _ = writeln!(s, "  max {:.3}", ms(l.max_ns));
    finish(r, s)
}

fn finish(r: &RunResult, mut s: String) -> String {
    if r.outcome.stop_reason != hostbench_core::runner::StopReason::WorkersDone {
        let _ = writeln!(
            s,
            "\nnote: the run ended by {:?} before every session finished; the makespan covers the part that ran",
            r.outcome.stop_reason
        );
    }
    s
}
