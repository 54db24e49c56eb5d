//! ApacheBench 2.3's report layout for `http.load` runs, from a [`RunResult`] alone: the
//! same labels in the same order, so scripts that grep `Requests per second:` or split the
//! Connection Times rows on whitespace read hostbench's output unchanged.
//!
//! Differences, all on purpose (docs/http.md): times print in milliseconds with three
//! decimals where ab rounds to whole milliseconds (ab's loopback tables are all 0s and 1s);
//! medians and percentiles come from an HDR histogram (3 significant digits) rather than a
//! sorted array of every request; the banner says this is hostbench.

use crate::http::{fact, is_tls, param_text, target, time_row, tls_row};
use hostbench_core::result::RunResult;
use std::fmt::Write;

/// Percentiles of ab's table.
pub const PERCENTILES: [f64; 9] = [50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0, 100.0];

/// ab's report (`-d`: no percentile table; `-S`: no sd/median columns and no warnings).
pub fn render_with<const NO_PCT: bool, const NO_SD: bool>(r: &RunResult) -> String {
    let mut s = String::new();
    let url = param_text(r, "url");
    let (host, port, path) = target(&url, fact(r, "target_port"));
    let _ = writeln!(
        s,
        "This is ApacheBench, Version 2.3 (hostbench {}: a reimplementation, not ab)",
        r.tool.version
    );
    if r.outcome.stop_reason == hostbench_core::runner::StopReason::Error {
        // ab prints no report when a socket error ends the run (the error goes to stderr).
        let _ = writeln!(s, "\nBenchmarking {host} (be patient)");
        return s;
    }
    let _ = writeln!(s, "\nBenchmarking {host} (be patient).....done\n\n");
    let server = r
        .tables
        .iter()
        .find(|t| t.name == "http_server")
        .and_then(|t| t.rows.first())
        .map(|row| row.label.clone())
        .unwrap_or_default();
    let _ = writeln!(s, "Server Software:        {server}");
    let _ = writeln!(s, "Server Hostname:        {host}");
    let _ = writeln!(s, "Server Port:            {port}");
    if is_tls(r)
        && let (Some((v, _)), Some((c, bits))) = (tls_row(r, "protocol"), tls_row(r, "cipher"))
    {
        // ab: version, cipher, the certificate's key bits, the cipher's secret bits.
        let pk = tls_row(r, "certificate_key").and_then(|(_, b)| b);
        let _ = writeln!(
            s,
            "SSL/TLS Protocol:       {v},{c},{:.0},{:.0}",
            pk.unwrap_or(0.0),
            bits.unwrap_or(0.0)
        );
        if let Some((k, Some(b))) = tls_row(r, "key_exchange") {
            let _ = writeln!(s, "Server Temp Key:        {k} {b:.0} bits");
        }
        if let Some((n, _)) = tls_row(r, "server_name") {
            let _ = writeln!(s, "TLS Server Name:        {n}");
        }
    }
    s.push('\n');
    let _ = writeln!(s, "Document Path:          {path}");
    let variable = r.workload.params.values().get("variable_length")
        == Some(&hostbench_core::params::Value::Bool(true));
    if variable {
        let _ = writeln!(s, "Document Length:        Variable\n");
    } else {
        let _ = writeln!(
            s,
            "Document Length:        {:.0} bytes\n",
            fact(r, "document_length").unwrap_or(0.0)
        );
    }
    let conc = r
        .workload
        .params
        .values()
        .get("connections")
        .and_then(|v| match v {
            hostbench_core::params::Value::Int(i) => Some(*i),
            _ => None,
        })
        .unwrap_or(1);
    let t = r.metrics.duration_s;
    let done = r.metrics.events;
    let f = |n: &str| fact(r, n).unwrap_or(0.0);
    let err = |k: &str| {
        r.tables
            .iter()
            .find(|t| t.name == "http_errors")
            .and_then(|t| t.get(k, "errors"))
            .unwrap_or(0.0)
    };
    // A failed TLS handshake is part of connecting.
    let connect_err = err("refused")
        + err("fd_unavail")
        + err("addr_unavail")
        + err("tls_certificate")
        + err("tls");
    let receive_err =
        err("reset") + err("closed") + err("timeout") + err("bad_response") + err("other");
    let length_err = if variable { 0.0 } else { f("length_failures") };
    let failed = connect_err + receive_err + length_err;
    let _ = writeln!(s, "Concurrency Level:      {conc}");
    let _ = writeln!(s, "Time taken for tests:   {t:.3} seconds");
    let _ = writeln!(s, "Complete requests:      {done}");
    let _ = writeln!(s, "Failed requests:        {failed:.0}");
    if failed > 0.0 {
        let _ = writeln!(
            s,
            "   (Connect: {connect_err:.0}, Receive: {receive_err:.0}, Length: {length_err:.0}, Exceptions: 0)"
        );
    }
    if f("non_2xx_responses") > 0.0 {
        let _ = writeln!(s, "Non-2xx responses:      {:.0}", f("non_2xx_responses"));
    }
    let keepalive = r.workload.params.values().get("keepalive")
        == Some(&hostbench_core::params::Value::Bool(true));
    if keepalive {
        let _ = writeln!(s, "Keep-Alive requests:    {:.0}", f("keepalive_responses"));
    }
    let read = r.metrics.counters.get("bytes_read").copied().unwrap_or(0);
    let written = r
        .metrics
        .counters
        .get("bytes_written")
        .copied()
        .unwrap_or(0);
    let posting = !param_text(r, "body_file").is_empty();
    let _ = writeln!(s, "Total transferred:      {read} bytes");
    if posting {
        let _ = writeln!(s, "Total body sent:        {written}");
    }
    let _ = writeln!(s, "HTML transferred:       {:.0} bytes", f("body_bytes"));
    let per = |v: f64| if t > 0.0 { v / t } else { 0.0 };
    let _ = writeln!(
        s,
        "Requests per second:    {:.2} [#/sec] (mean)",
        per(done as f64)
    );
    let tpr = if done > 0 {
        t * 1000.0 / done as f64
    } else {
        0.0
    };
    let _ = writeln!(
        s,
        "Time per request:       {:.3} [ms] (mean)",
        tpr * conc as f64
    );
    let _ = writeln!(
        s,
        "Time per request:       {tpr:.3} [ms] (mean, across all concurrent requests)"
    );
    let _ = writeln!(
        s,
        "Transfer rate:          {:.2} [Kbytes/sec] received",
        per(read as f64) / 1024.0
    );
    if posting {
        let _ = writeln!(
            s,
            "                        {:.2} kb/s sent",
            per(written as f64) / 1024.0
        );
        let _ = writeln!(
            s,
            "                        {:.2} kb/s total",
            per((read + written) as f64) / 1024.0
        );
    }
    s.push('\n');
    if done > 0 {
        connection_times::<NO_SD>(&mut s, r);
        if !NO_PCT {
            let _ = writeln!(
                s,
                "Percentage of the requests served within a certain time (ms)"
            );
            for p in PERCENTILES {
                let v = if p == 100.0 {
                    Some(r.latency.max_ns)
                } else {
                    r.percentile_ns(p)
                };
                let v = v.map_or("-".to_string(), |ns| format!("{:.3}", ns as f64 / 1e6));
                if p == 100.0 {
                    let _ = writeln!(s, " 100%  {v:>8} (longest request)");
                } else {
                    let _ = writeln!(s, "  {p:.0}%  {v:>8}");
                }
            }
        }
    }
    s
}

/// ab's report with every section.
pub fn render(r: &RunResult) -> String {
    render_with::<false, false>(r)
}

fn connection_times<const NO_SD: bool>(s: &mut String, r: &RunResult) {
    let ms = |ns: f64| ns / 1e6;
    // Total is the recorded latency (ab's done − start); the phases come from the workload.
    let total = (
        r.latency.min_ns as f64,
        r.latency.avg_ns as f64,
        r.latency.stddev_ns,
        r.percentile_ns(50.0).map_or(0.0, |v| v as f64),
        r.latency.max_ns as f64,
    );
    let rows = [
        ("Connect:", time_row(r, "connect")),
        ("Processing:", time_row(r, "processing")),
        ("Waiting:", time_row(r, "waiting")),
        ("Total:", Some(total)),
    ];
    let _ = writeln!(s, "Connection Times (ms)");
    if NO_SD {
        let _ = writeln!(s, "              min     avg       max");
    } else {
        let _ = writeln!(s, "              min    mean[+/-sd]   median       max");
    }
    let mut notes = String::new();
    for (label, row) in rows {
        let (min, mean, sd, median, max) = row.unwrap_or((0.0, 0.0, 0.0, 0.0, 0.0));
        if NO_SD {
            let _ = writeln!(
                s,
                "{label:<12}{:>7.3} {:>7.3} {:>9.3}",
                ms(min),
                ms(mean),
                ms(max)
            );
        } else {
            let _ = writeln!(
                s,
                "{label:<12}{:>7.3} {:>7.3} {:>6.3} {:>8.3} {:>9.3}",
                ms(min),
                ms(mean),
                ms(sd),
                ms(median),
                ms(max)
            );
            let name = label.trim_end_matches(':').to_lowercase();
            let gap = (mean - median).abs();
            if sd > 0.0 && gap > 2.0 * sd {
                let _ = writeln!(
                    notes,
                    "ERROR: The median and mean for the {name} time are more than twice the standard\n       deviation apart. These results are NOT reliable."
                );
            } else if sd > 0.0 && gap > sd {
                let _ = writeln!(
                    notes,
                    "WARNING: The median and mean for the {name} time are not within a normal deviation\n        These results are probably not that reliable."
                );
            }
        }
    }
    s.push_str(&notes);
    s.push('\n');
}

/// ab's `-e` file: the percentage of requests served within each time, 0..100 %.
pub fn csv_percentages(r: &RunResult) -> String {
    let mut s = String::from("Percentage served,Time in ms\n");
    for p in 0..=100 {
        let ns = match p {
            0 => Some(r.latency.min_ns),
            100 => Some(r.latency.max_ns),
            _ => r.percentile_ns(p as f64),
        }
        .unwrap_or(0);
        let _ = writeln!(s, "{p},{:.3}", ns as f64 / 1e6);
    }
    s
}
