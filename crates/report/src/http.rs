//! hostbench's own text report for `http.load` runs (`hostbench http`), and the helpers the
//! ab and httperf layouts share: reading the workload's facts, its `http_times`,
//! `http_status` and `http_errors` tables, and the target from the `url` parameter.

use crate::{ms, pct_label};
use hostbench_core::names::http::{ERRORS_COLUMN, fact, table, times, tls_kind};
use hostbench_core::params::Value;
use hostbench_core::recorder::Counter;
use hostbench_core::result::RunResult;
use std::fmt::Write;

/// A fact of the run.
pub fn fact(r: &RunResult, name: &str) -> Option<f64> {
    r.workload.facts.get(name).copied()
}

/// A text parameter (empty when absent).
pub fn param_text(r: &RunResult, name: &str) -> String {
    match r.workload.params.values().get(name) {
        Some(Value::Text(t)) => t.clone(),
        _ => String::new(),
    }
}

/// Host, port and path of the run's target (`url=self`: the built-in server on 127.0.0.1,
/// whose port is the `target_port` fact).
pub fn target(url: &str, port_fact: Option<f64>) -> (String, u16, String) {
    let url = url.trim();
    let (rest, default) = match url.strip_prefix("https://") {
        Some(r) => (r, 443),
        None => (url.strip_prefix("http://").unwrap_or(""), 80),
    };
    let (auth, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let fallback = port_fact.map_or(default, |p| p as u16);
    if auth.is_empty() {
        return ("127.0.0.1".into(), fallback, "/".into());
    }
    let (host, port) = if let Some(h) = auth.strip_prefix('[') {
        match h.split_once(']') {
            Some((h, p)) => (h, p.strip_prefix(':')),
            None => (h, None),
        }
    } else {
        match auth.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (auth, None),
        }
    };
    let port = port.and_then(|p| p.parse().ok()).unwrap_or(fallback);
    (host.to_string(), port, path.to_string())
}

/// Whether the run was HTTPS.
pub fn is_tls(r: &RunResult) -> bool {
    fact(r, fact::TLS).unwrap_or(0.0) > 0.0
}

/// A row of the `http_tls` table (labels are `kind:value`): its value text and bits.
pub fn tls_row(r: &RunResult, kind: &str) -> Option<(String, Option<f64>)> {
    let t = r.tables.iter().find(|t| t.name == table::TLS)?;
    t.rows.iter().find_map(|row| {
        let v = match row.label.split_once(':') {
            Some((k, v)) if k == kind => v.to_string(),
            None if row.label == kind => String::new(),
            _ => return None,
        };
        Some((v, row.values.first().copied().flatten()))
    })
}

/// One row of the `http_times` table: (min, mean, sd, median, max) in ns.
pub fn time_row(r: &RunResult, label: &str) -> Option<(f64, f64, f64, f64, f64)> {
    let t = r.tables.iter().find(|t| t.name == table::TIMES)?;
    if t.get(label, times::COUNT).unwrap_or(0.0) == 0.0 {
        return None;
    }
    Some((
        t.get(label, times::MIN_NS)?,
        t.get(label, times::MEAN_NS)?,
        t.get(label, times::SD_NS).unwrap_or(0.0),
        t.get(label, times::MEDIAN_NS)?,
        t.get(label, times::MAX_NS)?,
    ))
}

/// Errors of one kind.
pub fn errors(r: &RunResult, kind: &str) -> f64 {
    r.tables
        .iter()
        .find(|t| t.name == table::ERRORS)
        .and_then(|t| t.get(kind, ERRORS_COLUMN))
        .unwrap_or(0.0)
}

fn dur(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2}s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.2}us", ns / 1e3)
    }
}

/// `hostbench http`'s report.
pub fn render(r: &RunResult) -> String {
    let mut s = String::new();
    let url = param_text(r, "url");
    let (host, port, path) = target(&url, fact(r, fact::TARGET_PORT));
    let f = |n: &str| fact(r, n).unwrap_or(0.0);
    let int = |n: &str| match r.workload.params.values().get(n) {
        Some(Value::Int(i)) => *i,
        _ => 0,
    };
    let model = if param_text(r, "model") == "connections" {
        format!(
            "connection rate, {} request(s) per connection",
            int("calls")
        )
    } else if r.config.rate_per_s > 0.0 {
        format!(
            "open loop at {} req/s ({} schedule)",
            r.config.rate_per_s,
            param_text(r, "schedule")
        )
    } else {
        "closed loop".into()
    };
    let scheme = if is_tls(r) { "https" } else { "http" };
    let _ = writeln!(s, "hostbench http: {scheme}://{host}:{port}{path}");
    let _ = writeln!(
        s,
        "  {} thread(s), {} connection(s), {model}, {:.2} s",
        r.config.threads,
        int("connections"),
        r.metrics.duration_s
    );
    let read = r
        .metrics
        .counters
        .get(Counter::BytesRead.name())
        .copied()
        .unwrap_or(0) as f64;
    let t = r.metrics.duration_s.max(1e-9);
    let _ = writeln!(
        s,
        "Requests:   {} completed, {:.2}/s; {:.0} failed, {:.0} unfinished",
        r.metrics.events,
        r.metrics.events_per_s,
        f(fact::ERRORS),
        f(fact::UNFINISHED_REQUESTS)
    );
    let _ = writeln!(
        s,
        "Transfer:   {:.2} MiB read ({:.2} MiB/s), {:.0} connection(s) opened",
        read / 1048576.0,
        read / 1048576.0 / t,
        f(fact::CONNECTIONS_OPENED)
    );
    if r.latency.count > 0 {
        let what = if r.config.rate_per_s > 0.0 {
            "from each request's intended start"
        } else {
            "from the start of each request"
        };
        let _ = writeln!(s, "Latency ({what}):");
        let _ = writeln!(
            s,
            "  avg {}  sd {}  min {}  max {}",
            dur(r.latency.avg_ns as f64),
            dur(r.latency.stddev_ns),
            dur(r.latency.min_ns as f64),
            dur(r.latency.max_ns as f64)
        );
        let pcts: Vec<String> = r
            .latency
            .percentiles
            .iter()
            .map(|p| format!("p{} {}", pct_label(p.p), dur(p.ns as f64)))
            .collect();
        let _ = writeln!(s, "  {}", pcts.join("  "));
    }
    for (label, name) in [
        ("service time (actual send to end)", "service"),
        ("connect", "connect_new"),
        ("tcp connect", "tcp_connect"),
        ("tls handshake", "tls_handshake"),
        ("waiting (time to first byte)", "waiting"),
    ] {
        if let Some((min, mean, _sd, median, max)) = time_row(r, name) {
            let _ = writeln!(
                s,
                "  {label}: avg {}  p50 {}  min {}  max {}",
                dur(mean),
                dur(median),
                dur(min),
                dur(max)
            );
        }
    }
    if is_tls(r) {
        let mut what = Vec::new();
        if let Some((v, _)) = tls_row(r, tls_kind::PROTOCOL) {
            what.push(v);
        }
        if let Some((c, _)) = tls_row(r, tls_kind::CIPHER) {
            what.push(c);
        }
        if let Some((k, _)) = tls_row(r, tls_kind::KEY_EXCHANGE) {
            what.push(k);
        }
        let _ = writeln!(
            s,
            "TLS:        {}; handshakes {:.0} full, {:.0} resumed",
            if what.is_empty() {
                "no handshake completed".to_string()
            } else {
                what.join(", ")
            },
            f(fact::TLS_FULL_HANDSHAKES),
            f(fact::TLS_RESUMED_HANDSHAKES)
        );
    }
    if r.config.rate_per_s > 0.0 {
        let _ = writeln!(
            s,
            "Schedule:   {:.0} send(s) more than 1 ms late, largest lag {:.3} ms",
            f(fact::LATE_SENDS),
            ms(f(fact::MAX_SCHEDULE_LAG_NS) as u64)
        );
    }
    if let Some(t) = r.tables.iter().find(|t| t.name == table::STATUS) {
        let codes: Vec<String> = t
            .rows
            .iter()
            .map(|row| format!("{} {:.0}", row.label, row.values[0].unwrap_or(0.0)))
            .collect();
        if !codes.is_empty() {
            let _ = writeln!(s, "Status:     {}", codes.join(", "));
        }
    }
    if f(fact::ERRORS) > 0.0
        && let Some(t) = r.tables.iter().find(|t| t.name == table::ERRORS)
    {
        let kinds: Vec<String> = t
            .rows
            .iter()
            .filter(|row| row.values[0].unwrap_or(0.0) > 0.0)
            .map(|row| {
                format!(
                    "{} {:.0}",
                    row.label.replace('_', " "),
                    row.values[0].unwrap_or(0.0)
                )
            })
            .collect();
        let _ = writeln!(s, "Errors:     {}", kinds.join(", "));
    }
    let _ = writeln!(
        s,
        "CPU:        user {:.2}s, system {:.2}s ({:.2} us per request)",
        f(fact::CPU_USER_S),
        f(fact::CPU_SYSTEM_S),
        if r.metrics.events > 0 {
            (f(fact::CPU_USER_S) + f(fact::CPU_SYSTEM_S)) * 1e6 / r.metrics.events as f64
        } else {
            0.0
        }
    );
    if let Some(c) = r.workload.facts.get(fact::LOCAL_SERVER_CPUS) {
        let _ = writeln!(
            s,
            "Server CPU: {c:.2} CPU(s) on average (the processes listening on the target port \
             on this machine)"
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        assert_eq!(
            target("http://127.0.0.1:8080/4k.txt", None),
            ("127.0.0.1".into(), 8080, "/4k.txt".into())
        );
        assert_eq!(target("http://h", None), ("h".into(), 80, "/".into()));
        assert_eq!(target("https://h/a", None), ("h".into(), 443, "/a".into()));
        assert_eq!(
            target("self", Some(4242.0)),
            ("127.0.0.1".into(), 4242, "/".into())
        );
        assert_eq!(
            target("http://[::1]:81/x", None),
            ("::1".into(), 81, "/x".into())
        );
    }
}
