//! httperf 0.9's report layout for `http.load` runs, from a [`RunResult`] alone: the same
//! lines, labels and units (`Total: connections ...`, `Reply rate [replies/s]: min ...`,
//! `Errors: total ...`), so scripts written for httperf parse hostbench's output.
//!
//! The options httperf echoes only when given (`--timeout`, `--hog`) come from the httperf
//! layout options the front-end recorded in the result (`config.layout`), never from the
//! command line. Sources of each figure: connection counts, lifetimes and connect times from the
//! workload's facts and its `http_times` table; reply-rate samples from the run's intervals
//! (the httperf front-end asks for one every 5 s, as httperf samples); CPU time from
//! getrusage over the run (with `url=self` it includes the built-in server). Differences
//! (docs/http.md): the connection-time median is exact to 3 significant digits rather than
//! taken from httperf's 1 ms bins.

use crate::http::{errors, fact, is_tls, target, time_row};
use hostbench_core::layout::{HttperfLayout, Layout};
use hostbench_core::names::http::{error, fact, table, times};
use hostbench_core::params::{Params, Value};
use hostbench_core::recorder::Counter;
use hostbench_core::result::RunResult;
use std::fmt::Write;

/// httperf's report.
pub fn render(r: &RunResult) -> String {
    let mut s = echo(
        &r.workload.params,
        r.config.rate_per_s,
        r.config.event_limit,
        fact(r, fact::TARGET_PORT),
        is_tls(r),
        &layout_of(r),
    );
    s.push_str(&render_after_echo(r));
    s
}

/// httperf's layout options of `r`: what the httperf front-end recorded, or none given (a
/// run of another grammar has neither `--timeout` nor `--hog`).
pub fn layout_of(r: &RunResult) -> HttperfLayout {
    match &r.config.layout {
        Some(Layout::Httperf(l)) => l.clone(),
        _ => HttperfLayout::default(),
    }
}

/// httperf's first line: the options it runs with, in its order, from the run's
/// parameters, its rate and connection count (`port_fact`: the built-in server's port with
/// `url=self`; `given`: the options echoed only when the command line gave them). The
/// httperf front-end prints it when the run starts, as httperf does.
pub fn echo(
    params: &Params,
    rate: f64,
    conns: u64,
    port_fact: Option<f64>,
    tls: bool,
    given: &HttperfLayout,
) -> String {
    let mut s = String::new();
    let values = params.values();
    let text = |n: &str| match values.get(n) {
        Some(Value::Text(t)) => t.clone(),
        _ => String::new(),
    };
    let int = |n: &str| match values.get(n) {
        Some(Value::Int(i)) => *i,
        _ => 0,
    };
    let (host, port, path) = target(&text("url"), port_fact);
    // httperf echoes its TLS options after the buffers.
    let mut ssl = String::new();
    if tls {
        ssl.push_str(" --ssl");
        let ciphers = text("tls_ciphers");
        if !ciphers.is_empty() {
            let _ = write!(ssl, " --ssl-ciphers={ciphers}");
        }
        if values.get("tls_resume") == Some(&Value::Bool(false)) {
            ssl.push_str(" --ssl-no-reuse");
        }
    }
    // The options line, in httperf's order; --timeout and --hog only when the httperf
    // command line gave them (httperf prints what was set, and a run of another grammar has
    // neither).
    let mut line = String::from("httperf");
    if given.timeout
        && let Some(Value::Float(t)) = values.get("timeout")
    {
        let _ = write!(line, " --timeout={t}");
    }
    if given.hog {
        line.push_str(" --hog");
    }
    let _ = write!(
        line,
        " --client=0/1 --server={host} --port={port} --uri={path}"
    );
    if text("http_version") == "1.0" {
        line.push_str(" --http-version=1.0");
    }
    if rate > 0.0 {
        if text("schedule") == "poisson" {
            let _ = write!(line, " --period=e{}", 1.0 / rate);
        } else {
            let _ = write!(line, " --rate={rate}");
        }
    }
    let buf = |n: &str, default: i64| match int(n) {
        0 => default,
        b => b,
    };
    let _ = write!(
        line,
        " --send-buffer={} --recv-buffer={}{ssl}",
        buf("send_buffer", 4096),
        buf("recv_buffer", 16384)
    );
    let headers = text("headers");
    if !headers.trim().is_empty() {
        let joined: String = headers
            .lines()
            .filter(|h| !h.trim().is_empty())
            .map(|h| format!("{h}\\n"))
            .collect();
        let _ = write!(line, " --add-header='{joined}'");
    }
    if values.get("sessions") == Some(&Value::Bool(true)) {
        let think = match values.get("think") {
            Some(Value::Float(t)) => *t,
            _ => 0.0,
        };
        let _ = writeln!(
            s,
            "{line} --wsess={conns},{},{think:.3}",
            int("calls").max(1)
        );
    } else {
        let _ = writeln!(
            s,
            "{line} --num-conns={conns} --num-calls={}",
            int("calls").max(1)
        );
    }
    s
}

/// httperf's report after its first line ([`echo`], printed when the run started).
pub fn render_after_echo(r: &RunResult) -> String {
    let mut s = String::new();
    let f = |n: &str| fact(r, n).unwrap_or(0.0);
    let _ = writeln!(
        s,
        "Maximum connect burst length: {:.0}\n",
        f(fact::MAX_CONNECT_BURST)
    );
    let d = r.metrics.duration_s;
    let per = |v: f64| if d > 0.0 { v / d } else { 0.0 };
    let conns = f(fact::CONNECTIONS_OPENED);
    let reqs = f(fact::REQUESTS_SENT);
    let replies = f(fact::RESPONSES);
    let _ = writeln!(
        s,
        "Total: connections {conns:.0} requests {reqs:.0} replies {replies:.0} test-duration {d:.3} s\n"
    );
    let period = |rate: f64| if rate > 0.0 { 1000.0 / rate } else { 0.0 };
    let _ = writeln!(
        s,
        "Connection rate: {:.1} conn/s ({:.1} ms/conn, <={:.0} concurrent connections)",
        per(conns),
        period(per(conns)),
        f(fact::MAX_OPEN_CONNECTIONS)
    );
    let (min, avg, sd, median, max) = time_row(r, times::CONNECTION_LIFE).unwrap_or_default();
    let _ = writeln!(
        s,
        "Connection time [ms]: min {:.1} avg {:.1} max {:.1} median {:.1} stddev {:.1}",
        min / 1e6,
        avg / 1e6,
        max / 1e6,
        median / 1e6,
        sd / 1e6
    );
    let connect = time_row(r, times::CONNECT_NEW).map_or(0.0, |t| t.1);
    let _ = writeln!(s, "Connection time [ms]: connect {:.1}", connect / 1e6);
    let with_reply = f(fact::CONNECTIONS_WITH_REPLY);
    let _ = writeln!(
        s,
        "Connection length [replies/conn]: {:.3}\n",
        if with_reply > 0.0 {
            f(fact::REPLIES_ON_THOSE_CONNECTIONS) / with_reply
        } else {
            0.0
        }
    );
    let _ = writeln!(
        s,
        "Request rate: {:.1} req/s ({:.1} ms/req)",
        per(reqs),
        period(per(reqs))
    );
    let _ = writeln!(s, "Request size [B]: {:.1}\n", f(fact::REQUEST_BYTES));
    let samples: Vec<f64> = r.intervals.iter().map(|i| i.events_per_s).collect();
    let (smin, savg, smax, ssd) = sample_stats(&samples);
    let _ = writeln!(
        s,
        "Reply rate [replies/s]: min {smin:.1} avg {savg:.1} max {smax:.1} stddev {ssd:.1} ({} samples)",
        samples.len()
    );
    let response = time_row(r, times::WAITING).map_or(0.0, |t| t.1);
    let transfer = time_row(r, times::TRANSFER).map_or(0.0, |t| t.1);
    let _ = writeln!(
        s,
        "Reply time [ms]: response {:.1} transfer {:.1}",
        response / 1e6,
        transfer / 1e6
    );
    let n = replies.max(1.0);
    let (h, c, fo) = (
        f(fact::HEADER_BYTES) / n,
        f(fact::BODY_BYTES) / n,
        f(fact::FOOTER_BYTES) / n,
    );
    let _ = writeln!(
        s,
        "Reply size [B]: header {h:.1} content {c:.1} footer {fo:.1} (total {:.1})",
        h + c + fo
    );
    let _ = writeln!(
        s,
        "Reply status: 1xx={:.0} 2xx={:.0} 3xx={:.0} 4xx={:.0} 5xx={:.0}\n",
        f(&fact::status_class(1)),
        f(&fact::status_class(2)),
        f(&fact::status_class(3)),
        f(&fact::status_class(4)),
        f(&fact::status_class(5))
    );
    let (u, sy) = (f(fact::CPU_USER_S), f(fact::CPU_SYSTEM_S));
    let pct = |v: f64| if d > 0.0 { 100.0 * v / d } else { 0.0 };
    let _ = writeln!(
        s,
        "CPU time [s]: user {u:.2} system {sy:.2} (user {:.1}% system {:.1}% total {:.1}%)",
        pct(u),
        pct(sy),
        pct(u + sy)
    );
    let bytes = r
        .metrics
        .counters
        .get(Counter::BytesRead.name())
        .copied()
        .unwrap_or(0)
        + r.metrics
            .counters
            .get(Counter::BytesWritten.name())
            .copied()
            .unwrap_or(0);
    let _ = writeln!(
        s,
        "Net I/O: {:.1} KB/s ({:.1}*10^6 bps)\n",
        per(bytes as f64) / 1024.0,
        per(bytes as f64) * 8.0 / 1e6
    );
    let e = |k: &str| errors(r, k);
    let total: f64 = error::ALL.iter().map(|k| e(k)).sum();
    let _ = writeln!(
        s,
        "Errors: total {total:.0} client-timo {:.0} socket-timo 0 connrefused {:.0} connreset {:.0}",
        e(error::TIMEOUT),
        e(error::REFUSED),
        e(error::RESET) + e(error::CLOSED)
    );
    let _ = writeln!(
        s,
        "Errors: fd-unavail {:.0} addrunavail {:.0} ftab-full 0 other {:.0}",
        e(error::FD_UNAVAIL),
        e(error::ADDR_UNAVAIL),
        // httperf counts a failed TLS handshake among the other errors.
        e(error::BAD_RESPONSE) + e(error::OTHER) + e(error::TLS_CERTIFICATE) + e(error::TLS)
    );
    if let (Some(ok), Some(failed)) = (fact(r, fact::SESSIONS_OK), fact(r, fact::SESSIONS_FAILED)) {
        sessions(&mut s, r, ok, failed);
    }
    s
}

/// httperf's Session lines (`--wsess`): rate (5-second samples of successful sessions, only
/// whole periods, as httperf samples), connections per session, lifetimes, and the
/// histogram of sessions by calls answered.
fn sessions(s: &mut String, r: &RunResult, ok: f64, failed: f64) {
    let rows = |name: &str| -> Vec<f64> {
        r.tables
            .iter()
            .find(|t| t.name == name)
            .map(|t| {
                t.rows
                    .iter()
                    .map(|row| row.values[0].unwrap_or(0.0))
                    .collect()
            })
            .unwrap_or_default()
    };
    let d = r.metrics.duration_s;
    let whole = (d / 5.0).floor() as usize;
    let mut per_5s = rows(table::SESSIONS_PER_5S);
    per_5s.resize(per_5s.len().max(whole), 0.0);
    let samples: Vec<f64> = per_5s[..whole].iter().map(|n| n / 5.0).collect();
    let (min, _, max, sd) = sample_stats(&samples);
    let total = ok + failed;
    let avg = if d > 0.0 { ok / d } else { 0.0 };
    let _ = writeln!(
        s,
        "\nSession rate [sess/s]: min {min:.2} avg {avg:.2} max {max:.2} stddev {sd:.2} ({ok:.0}/{total:.0})"
    );
    let conns = fact(r, fact::CONNECTIONS_OPENED).unwrap_or(0.0);
    let _ = writeln!(
        s,
        "Session: avg {:.2} connections/session",
        if total > 0.0 { conns / total } else { 0.0 }
    );
    let _ = writeln!(
        s,
        "Session lifetime [s]: {:.1}",
        fact(r, fact::SESSION_LIFE_AVG_S).unwrap_or(0.0)
    );
    let _ = writeln!(
        s,
        "Session failtime [s]: {:.1}",
        fact(r, fact::SESSION_FAILTIME_AVG_S).unwrap_or(0.0)
    );
    let hist: Vec<String> = rows(table::SESSION_LENGTHS)
        .iter()
        .map(|n| format!("{n:.0}"))
        .collect();
    let _ = writeln!(s, "Session length histogram: {}", hist.join(" "));
}

/// min, mean, max and sample standard deviation (0 for fewer than two samples).
fn sample_stats(v: &[f64]) -> (f64, f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sd = if v.len() > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (min, mean, max, sd)
}
