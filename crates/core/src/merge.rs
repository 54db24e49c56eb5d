//! A fleet's distributed load as one run: the runs of several load generators that ran the
//! same `http.load` together (each with its share of the rate, connections and requests)
//! merged into one result, exactly where the data allows it.
//!
//! - Latency: the hosts' HDR histograms are added (exact at their precision), the counts,
//!   sums, minima and maxima combined exactly; percentiles, mean and standard deviation are
//!   read from the merged distribution, never averaged across hosts. The same for each
//!   phase of the `http_times` table, from the result's `histograms` (schema 1.7).
//! - Counts (events, counters, responses, errors, bytes, status codes, error kinds) are
//!   summed; the duration is the longest host's; rates (events/s, each counter's per
//!   second) are the summed counts over that duration, not the sum of the hosts' rates
//!   (hosts given a share of a request count end at different times).
//! - Maxima that describe one host (`max_schedule_lag_ns`, `max_connect_burst`) are the
//!   largest; `max_open_connections` is the sum of the hosts' (the hosts' peaks need not
//!   coincide: an upper bound); means of sessions are weighted by their counts.
//! - What cannot be merged exactly is left out rather than approximated: the interval
//!   series (each host keeps its own in its part) and the host fingerprint.

use crate::params::Value;
use crate::recorder::LatencyRec;
use crate::result::{
    FleetPart, FleetRef, Latency, RunResult, Table, Warning, decode_histogram, encode_histogram,
};
use crate::runner::StopReason;
use std::collections::BTreeMap;

/// Facts whose merged value is the largest host's.
const MAX_FACTS: [&str; 2] = ["max_schedule_lag_ns", "max_connect_burst"];
/// Facts every host has the same value of (what was asked, where it went): the first's.
const SAME_FACTS: [&str; 7] = [
    "request_bytes",
    "open_file_limit",
    "target_port",
    "self_server",
    "tls",
    "document_length",
    "local_server_cpus",
];
/// Means, weighted by the fact that counts them.
const MEAN_FACTS: [(&str, &str); 2] = [
    ("session_life_avg_s", "sessions_ok"),
    ("session_failtime_avg_s", "sessions_failed"),
];
/// Tables whose rows are counts, summed by row label.
const SUM_TABLES: [&str; 4] = [
    "http_status",
    "http_errors",
    "http_session_lengths",
    "http_sessions_per_5s",
];

fn host(r: &RunResult) -> String {
    r.fleet.as_ref().map(|f| f.host.clone()).unwrap_or_default()
}

/// A stored distribution as a record, with its exact totals.
fn rec(
    who: &str,
    what: &str,
    b64: &str,
    count: u64,
    min: u64,
    max: u64,
    sum: u64,
) -> Result<LatencyRec, String> {
    if count == 0 {
        return Ok(LatencyRec::default());
    }
    let h = decode_histogram(b64).ok_or_else(|| {
        format!(
            "{who}'s result has no readable {what} histogram (written by a hostbench older than \
             result schema 1.7?): deploy this binary with --binary"
        )
    })?;
    Ok(LatencyRec::from_histogram(count, min, max, sum, h))
}

/// Merges `parts` (one run per load generator, each with its `fleet.host`) into one run of
/// fleet run `run`. The caller saves it and recomputes its figures (the workload's).
pub fn merge_load(run: &str, parts: &[&RunResult]) -> Result<RunResult, String> {
    let first = *parts.first().ok_or("no host's run to merge")?;
    if let Some(o) = parts.iter().find(|r| r.workload.id != first.workload.id) {
        return Err(format!(
            "{} ran {} and {} ran {}: only runs of one workload merge",
            host(first),
            first.workload.id,
            host(o),
            o.workload.id
        ));
    }
    let mut m = first.clone();
    m.id = format!("{}-all", first.id);
    m.started_at = parts
        .iter()
        .map(|r| r.started_at.clone())
        .min()
        .unwrap_or_default();
    m.host = None;
    m.annotations.clear();
    m.fio = None;
    m.intervals.clear();
    m.figures.clear();

    // Latency of a request: the histograms added.
    let mut lat = LatencyRec::default();
    for r in parts {
        let l = &r.latency;
        lat.merge(&rec(
            &host(r),
            "latency",
            &l.hdr_histogram,
            l.count,
            l.min_ns,
            l.max_ns,
            l.sum_ns,
        )?);
    }
    m.latency = Latency::from_rec(&lat, &first.config.percentiles);

    // Counts and rates.
    let mx = &mut m.metrics;
    mx.duration_s = parts
        .iter()
        .map(|r| r.metrics.duration_s)
        .fold(0.0, f64::max);
    mx.events = parts.iter().map(|r| r.metrics.events).sum();
    // A rate is the total over the merged duration (the longest host's), never the sum of
    // the hosts' rates: hosts that ended early (a request count split among them) would
    // count their rate over a window shorter than the run's.
    let duration = mx.duration_s;
    mx.events_per_s = crate::runner::per_second(mx.events, duration);
    for (k, v) in mx.counters.iter_mut() {
        *v = parts
            .iter()
            .map(|r| r.metrics.counters.get(k).copied().unwrap_or(0))
            .sum();
    }
    for (k, v) in mx.counters_per_s.iter_mut() {
        let total: u64 = parts
            .iter()
            .map(|r| r.metrics.counters.get(k).copied().unwrap_or(0))
            .sum();
        *v = crate::runner::per_second(total, duration);
    }
    let threads: Vec<_> = parts
        .iter()
        .flat_map(|r| r.fairness.per_thread.iter().cloned())
        .collect();
    m.fairness = crate::result::Fairness::from_threads(&threads);

    // What was asked, in total.
    m.config.threads = parts.iter().map(|r| r.config.threads).sum();
    m.config.rate_per_s = parts.iter().map(|r| r.config.rate_per_s).sum();
    m.config.event_limit = parts.iter().map(|r| r.config.event_limit).sum();
    m.config.time_limit_s = parts
        .iter()
        .map(|r| r.config.time_limit_s)
        .fold(0.0, f64::max);
    if let Some(Value::Int(_)) = first.workload.params.values().get("connections") {
        let total = parts
            .iter()
            .map(|r| match r.workload.params.values().get("connections") {
                Some(Value::Int(c)) => *c,
                _ => 0,
            })
            .sum();
        m.workload.params.set("connections", Value::Int(total));
    }

    // How it ended: the first host that did not complete says why.
    m.outcome.unfinished_events = parts.iter().map(|r| r.outcome.unfinished_events).sum();
    if let Some(bad) = parts.iter().find(|r| r.outcome.error.is_some()) {
        m.outcome.error = bad
            .outcome
            .error
            .as_ref()
            .map(|e| format!("{}: {e}", host(bad)));
        m.outcome.stop_reason = bad.outcome.stop_reason;
    } else if let Some(cut) = parts
        .iter()
        .map(|r| r.outcome.stop_reason)
        .filter(|s| matches!(s, StopReason::Interrupted | StopReason::ForcedShutdown))
        .max_by_key(|s| *s == StopReason::ForcedShutdown)
    {
        // One host cut short cuts the load short: the merged figures cover less than asked.
        m.outcome.stop_reason = cut;
    } else if let Some(bad) = parts
        .iter()
        .find(|r| r.outcome.stop_reason != first.outcome.stop_reason)
    {
        m.outcome.stop_reason = bad.outcome.stop_reason;
    }

    // Facts.
    let fact = |r: &RunResult, k: &str| r.workload.facts.get(k).copied().unwrap_or(0.0);
    let keys: Vec<String> = parts
        .iter()
        .flat_map(|r| r.workload.facts.keys().cloned())
        .collect();
    let mut facts = BTreeMap::new();
    for k in keys {
        if facts.contains_key(&k) {
            continue;
        }
        let v = if SAME_FACTS.contains(&k.as_str()) {
            match parts.iter().find_map(|r| r.workload.facts.get(&k)) {
                Some(v) => *v,
                None => continue,
            }
        } else if MAX_FACTS.contains(&k.as_str()) {
            parts.iter().map(|r| fact(r, &k)).fold(0.0, f64::max)
        } else if let Some((_, by)) = MEAN_FACTS.iter().find(|(n, _)| *n == k) {
            let n: f64 = parts.iter().map(|r| fact(r, by)).sum();
            if n > 0.0 {
                parts.iter().map(|r| fact(r, &k) * fact(r, by)).sum::<f64>() / n
            } else {
                0.0
            }
        } else {
            parts.iter().map(|r| fact(r, &k)).sum()
        };
        facts.insert(k, v);
    }
    m.workload.facts = facts;

    // Tables: counts summed; the phases from their merged histograms; the rest the first's.
    let mut histograms = BTreeMap::new();
    for t in m.tables.iter_mut() {
        if SUM_TABLES.contains(&t.name.as_str()) {
            *t = sum_table(t, parts);
        } else if t.name == crate::names::http::table::TIMES {
            let (table, hists) = times_table(t, parts)?;
            *t = table;
            histograms.extend(hists);
        }
    }
    m.histograms = histograms;

    // Warnings, each with the host it is about.
    let mut warnings: Vec<Warning> = Vec::new();
    for r in parts {
        for w in &r.warnings {
            let w = Warning {
                kind: w.kind,
                message: format!("{}: {}", host(r), w.message),
            };
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
    // The merged run's own "cut short" warning (the hosts' say which host), as a run
    // stopped on one host says it.
    if let Some(w) = m.cut_short_warning(0) {
        warnings.insert(0, w);
    }
    m.warnings = warnings;

    let f = first.fleet.clone();
    m.fleet = Some(FleetRef {
        run: run.to_string(),
        host: "*".into(),
        start_at_unix_ns: f.as_ref().and_then(|f| f.start_at_unix_ns),
        start_late_ns: None,
        clock_offset_ns: None,
        clock_rtt_ns: None,
        parts: parts
            .iter()
            .map(|r| FleetPart {
                host: host(r),
                run_id: r.id.clone(),
                events: r.metrics.events,
            })
            .collect(),
    });
    Ok(m)
}

/// A table of counts: each row label's values summed over the hosts (labels in the order
/// they first appear; `http_status` by code).
fn sum_table(t: &Table, parts: &[&RunResult]) -> Table {
    let mut out = Table {
        rows: Vec::new(),
        ..t.clone()
    };
    for r in parts {
        let Some(pt) = r.tables.iter().find(|x| x.name == t.name) else {
            continue;
        };
        for row in &pt.rows {
            match out.rows.iter_mut().find(|x| x.label == row.label) {
                Some(o) => {
                    for (a, b) in o.values.iter_mut().zip(&row.values) {
                        *a = match (*a, *b) {
                            (Some(x), Some(y)) => Some(x + y),
                            (x, y) => x.or(y),
                        };
                    }
                }
                None => out.rows.push(row.clone()),
            }
        }
    }
    if t.name == crate::names::http::table::STATUS {
        let code = |l: &str| l.parse::<u32>().unwrap_or(0);
        out.rows.sort_by_key(|r| code(&r.label));
    }
    out
}

/// The `http_times` table from each phase's merged histogram, computed as the workload
/// computes a host's (count, min, mean, sd, median, max); and the merged histograms.
fn times_table(t: &Table, parts: &[&RunResult]) -> Result<(Table, Vec<(String, String)>), String> {
    use crate::names::http::{table, times};
    let col = |name: &str| t.columns.iter().position(|c| c.name == name);
    let mut out = t.clone();
    let mut hists = Vec::new();
    for row in out.rows.iter_mut() {
        let key = format!("{}/{}", table::TIMES, row.label);
        let mut merged = LatencyRec::default();
        for r in parts {
            let Some(pt) = r.tables.iter().find(|x| x.name == t.name) else {
                continue;
            };
            let get = |c: &str| pt.get(&row.label, c).unwrap_or(0.0);
            let count = get(times::COUNT) as u64;
            if count == 0 {
                continue;
            }
            let b64 = r.histograms.get(&key).map(String::as_str).unwrap_or("");
            let mean = get(times::MEAN_NS);
            merged.merge(&rec(
                &host(r),
                &format!("{} phase", row.label),
                b64,
                count,
                get(times::MIN_NS) as u64,
                get(times::MAX_NS) as u64,
                (mean * count as f64).round() as u64,
            )?);
        }
        let some = merged.count > 0;
        let v = |x: f64| some.then_some(x);
        let values = [
            (times::COUNT, Some(merged.count as f64)),
            (times::MIN_NS, v(merged.min_ns as f64)),
            (
                times::MEAN_NS,
                v(merged.sum_ns as f64 / merged.count.max(1) as f64),
            ),
            (times::SD_NS, v(if some { merged.stdev() } else { 0.0 })),
            (times::MEDIAN_NS, v(merged.percentile(50.0) as f64)),
            (times::MAX_NS, v(merged.max_ns as f64)),
        ];
        for (name, x) in values {
            if let Some(i) = col(name)
                && let Some(slot) = row.values.get_mut(i)
            {
                *slot = x;
            }
        }
        if some {
            hists.push((key, encode_histogram(&merged.histogram())));
        }
    }
    Ok((out, hists))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::LatencyRec;

    fn part(host: &str, lats: &[u64], status200: f64) -> RunResult {
        let mut r = crate::compare::tests::run(host, "http.load", 1, &[]);
        let mut rec = LatencyRec::default();
        for &l in lats {
            rec.record(l);
        }
        r.config.percentiles = vec![50.0, 99.0];
        r.latency = Latency::from_rec(&rec, &r.config.percentiles);
        r.metrics.events = lats.len() as u64;
        r.metrics.events_per_s = lats.len() as f64;
        r.workload
            .facts
            .insert("responses".into(), lats.len() as f64);
        r.workload.facts.insert("max_connect_burst".into(), 3.0);
        r.workload.facts.insert("target_port".into(), 80.0);
        r.tables = vec![Table {
            name: "http_status".into(),
            title: String::new(),
            columns: vec![],
            rows: vec![crate::result::Row {
                label: "200".into(),
                values: vec![Some(status200)],
            }],
        }];
        r.fleet = Some(FleetRef {
            run: "f".into(),
            host: host.into(),
            start_at_unix_ns: None,
            start_late_ns: None,
            clock_offset_ns: None,
            clock_rtt_ns: None,
            parts: Vec::new(),
        });
        r
    }

    #[test]
    fn merging_equals_recording_every_hosts_requests_in_one_histogram() {
        let a: Vec<u64> = (1..=900).map(|i| 1_000 + i * 10).collect();
        let b: Vec<u64> = (1..=100).map(|i| 5_000_000 + i * 1000).collect();
        let (ra, rb) = (part("a", &a, 900.0), part("b", &b, 100.0));
        let m = merge_load("f", &[&ra, &rb]).unwrap();
        let mut all = LatencyRec::default();
        for &l in a.iter().chain(&b) {
            all.record(l);
        }
        let want = Latency::from_rec(&all, &[50.0, 99.0]);
        assert_eq!(m.latency.count, 1000);
        assert_eq!(
            (m.latency.min_ns, m.latency.max_ns, m.latency.sum_ns),
            (want.min_ns, want.max_ns, want.sum_ns)
        );
        assert_eq!(m.latency.percentiles, want.percentiles);
        // Not the mean of the hosts' p99 (which would be ~2.5 ms).
        assert!(m.percentile_ns(99.0).unwrap() > 5_000_000);
        assert_eq!(m.metrics.events, 1000);
        assert_eq!(m.workload.facts["responses"], 1000.0);
        assert_eq!(m.workload.facts["max_connect_burst"], 3.0);
        assert_eq!(m.workload.facts["target_port"], 80.0);
        assert_eq!(m.tables[0].rows[0].values[0], Some(1000.0));
        let f = m.fleet.unwrap();
        assert_eq!(f.host, "*");
        assert_eq!(
            f.parts.iter().map(|p| p.events).collect::<Vec<_>>(),
            [900, 100]
        );
    }

    #[test]
    fn merged_rates_are_the_total_over_the_longest_hosts_duration() {
        // ab -n split: both hosts did 1500 requests, one in half the other's time.
        let mut ra = part("a", &[1000; 1500], 1500.0);
        let mut rb = part("b", &[1000; 1500], 1500.0);
        for (r, d) in [(&mut ra, 0.045), (&mut rb, 0.090)] {
            r.metrics.duration_s = d;
            r.metrics.events_per_s = 1500.0 / d;
            r.metrics.counters.insert("bytes_read".into(), 1_000_000);
            r.metrics
                .counters_per_s
                .insert("bytes_read".into(), 1_000_000.0 / d);
        }
        let m = merge_load("f", &[&ra, &rb]).unwrap();
        assert_eq!(m.metrics.duration_s, 0.090);
        assert_eq!(m.metrics.events, 3000);
        // Not 1500/0.045 + 1500/0.090 = 50000.
        assert!((m.metrics.events_per_s - 3000.0 / 0.090).abs() < 1e-6);
        assert_eq!(m.metrics.counters["bytes_read"], 2_000_000);
        assert!((m.metrics.counters_per_s["bytes_read"] - 2_000_000.0 / 0.090).abs() < 1e-3);
    }

    /// A load one of whose hosts was interrupted is itself cut short, and says so in its
    /// own words (not only in the host's), with the merged duration and unfinished requests.
    #[test]
    fn a_load_with_an_interrupted_host_is_cut_short() {
        let mut ra = part("a", &[1000; 10], 10.0);
        let mut rb = part("b", &[1000; 10], 10.0);
        ra.outcome.stop_reason = StopReason::Interrupted;
        ra.outcome.unfinished_events = 3;
        rb.outcome.stop_reason = StopReason::TimeLimit;
        rb.outcome.unfinished_events = 2;
        ra.metrics.duration_s = 1.5;
        rb.metrics.duration_s = 2.0;
        ra.warnings = ra.cut_short_warning(0).into_iter().collect();
        // Whichever host comes first.
        for parts in [[&ra, &rb], [&rb, &ra]] {
            let m = merge_load("f", &parts).unwrap();
            assert_eq!(m.outcome.stop_reason, StopReason::Interrupted);
            let w = &m.warnings[0];
            assert_eq!(w.kind, crate::result::WarningKind::Partial);
            assert!(
                w.message.starts_with(
                    "the run was cut short (interrupted); the figures cover 2.00 s and 5 event(s)"
                ),
                "{}",
                w.message
            );
            assert!(
                m.warnings
                    .iter()
                    .any(|w| w.message.starts_with("a: the run was cut short"))
            );
        }
        // No host cut short: no such warning.
        let m = merge_load("f", &[&rb, &rb.clone()]).unwrap();
        assert!(
            m.warnings
                .iter()
                .all(|w| w.kind != crate::result::WarningKind::Partial)
        );
    }

    #[test]
    fn a_result_without_its_histogram_is_refused_not_guessed() {
        let mut ra = part("a", &[1000, 2000], 2.0);
        ra.latency.hdr_histogram.clear();
        let rb = part("b", &[1000], 1.0);
        let e = merge_load("f", &[&ra, &rb]).unwrap_err();
        assert!(
            e.contains("a's result has no readable latency histogram"),
            "{e}"
        );
    }
}
