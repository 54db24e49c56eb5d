//! ApacheBench 2.3's report layout for `http.load` runs, from a [`RunResult`] alone: the
//! same labels in the same order, so scripts that grep `Requests per second:` or split the
//! Connection Times rows on whitespace read hostbench's output unchanged.
//!
//! Differences, all on purpose (docs/http.md): times print in milliseconds with three
//! decimals where ab rounds to whole milliseconds (ab's loopback tables are all 0s and 1s);
//! medians and percentiles come from an HDR histogram (3 significant digits) rather than a
//! sorted array of every request; the banner says this is hostbench.
//!
//! The options that shape the report (`-d`, `-S`, `-w` and its attributes, the heartbeat)
//! are the ab layout options the front-end recorded in the result (`config.layout`).
//!
//! Also here: ab's `-w` HTML tables ([`render_html`]) and its `-g` gnuplot file
//! ([`write_gnuplot`]), which alone needs every request's times and gets them from the
//! caller, not from the result.

use crate::http::{fact, is_tls, param_text, target, time_row, tls_row};
use hostbench_core::layout::{AbHtml, AbLayout, Layout};
use hostbench_core::names::http::{ERRORS_COLUMN, error, fact, table, times, tls_kind};
use hostbench_core::params::Value;
use hostbench_core::recorder::Counter;
use hostbench_core::result::RunResult;
use std::fmt::Write;
use std::io;

/// Percentiles of ab's table.
pub const PERCENTILES: [f64; 9] = [50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0, 100.0];

/// What both of ab's layouts (text and HTML) print, read from the result once.
struct Summary {
    host: String,
    port: u16,
    path: String,
    /// `[through HOST:PORT] ` with a proxy, else empty.
    through: String,
    server: String,
    variable: bool,
    doc_len: f64,
    conc: i64,
    secs: f64,
    done: u64,
    connect_err: f64,
    receive_err: f64,
    length_err: f64,
    failed: f64,
    non_2xx: f64,
    keepalive: Option<f64>,
    read: u64,
    written: u64,
    posting: bool,
    body_bytes: f64,
    /// ab printed no report: a socket error ended the run.
    aborted: bool,
}

impl Summary {
    fn of(r: &RunResult) -> Summary {
        let url = param_text(r, "url");
        let (host, port, path) = target(&url, fact(r, fact::TARGET_PORT));
        let through = match param_text(r, "proxy").trim() {
            "" => String::new(),
            p => format!("[through {p}] "),
        };
        let server = r
            .tables
            .iter()
            .find(|t| t.name == table::SERVER)
            .and_then(|t| t.rows.first())
            .map(|row| ab_server_software(&row.label))
            .unwrap_or_default();
        let values = r.workload.params.values();
        let variable = values.get("variable_length") == Some(&Value::Bool(true));
        let conc = match values.get("connections") {
            Some(Value::Int(i)) => *i,
            _ => 1,
        };
        let f = |n: &str| fact(r, n).unwrap_or(0.0);
        let err = |k: &str| {
            r.tables
                .iter()
                .find(|t| t.name == table::ERRORS)
                .and_then(|t| t.get(k, ERRORS_COLUMN))
                .unwrap_or(0.0)
        };
        // A failed TLS handshake is part of connecting.
        let connect_err = err(error::REFUSED)
            + err(error::FD_UNAVAIL)
            + err(error::ADDR_UNAVAIL)
            + err(error::TLS_CERTIFICATE)
            + err(error::TLS);
        let receive_err = err(error::RESET)
            + err(error::CLOSED)
            + err(error::TIMEOUT)
            + err(error::BAD_RESPONSE)
            + err(error::OTHER);
        let length_err = if variable {
            0.0
        } else {
            f(fact::LENGTH_FAILURES)
        };
        let counter = |n: &str| r.metrics.counters.get(n).copied().unwrap_or(0);
        Summary {
            host,
            port,
            path,
            through,
            server,
            variable,
            doc_len: f(fact::DOCUMENT_LENGTH),
            conc,
            secs: r.metrics.duration_s,
            done: r.metrics.events,
            connect_err,
            receive_err,
            length_err,
            failed: connect_err + receive_err + length_err,
            non_2xx: f(fact::NON_2XX_RESPONSES),
            // ab counts every response whose head keeps the connection open, the first on
            // each connection included (results saved before that fact: reused only).
            keepalive: (values.get("keepalive") == Some(&Value::Bool(true))).then(|| {
                fact(r, fact::KEEPALIVE_ALLOWED_RESPONSES)
                    .unwrap_or_else(|| f(fact::KEEPALIVE_RESPONSES))
            }),
            read: counter(Counter::BytesRead.name()),
            written: counter(Counter::BytesWritten.name()),
            posting: !param_text(r, "body_file").is_empty(),
            body_bytes: f(fact::BODY_BYTES),
            aborted: r.outcome.stop_reason == hostbench_core::runner::StopReason::Error,
        }
    }

    /// Per second of the run (0 for a run of no time).
    fn per_s(&self, v: f64) -> f64 {
        if self.secs > 0.0 { v / self.secs } else { 0.0 }
    }
}

/// ab's layout options of `r`: what the ab front-end recorded, or ab's defaults (every
/// section, no heartbeat, the text report) for a run typed in another grammar.
pub fn layout_of(r: &RunResult) -> AbLayout {
    match &r.config.layout {
        Some(Layout::Ab(l)) => l.clone(),
        _ => AbLayout::default(),
    }
}

/// The Server header as ab shows it: up to its first blank (ab copies the value while the
/// bytes are above a space), so `SimpleHTTP/0.6 Python/3.11.7` is `SimpleHTTP/0.6`.
fn ab_server_software(header: &str) -> String {
    header
        .trim_start()
        .split(|c: char| c.is_whitespace() || c.is_control())
        .next()
        .unwrap_or_default()
        .to_string()
}

/// What ab prints before the run: its banner and `Benchmarking HOST [through PROXY] (be
/// patient)`, then `...` (the rest of the line comes after the run) or, with the heartbeat, a
/// line end (progress goes to stderr). `through` is `[through HOST:PORT] ` or empty.
pub fn started(version: &str, host: &str, through: &str, heartbeat: bool) -> String {
    format!(
        "This is ApacheBench, Version 2.3 (hostbench {version}: a reimplementation, not ab)\n\
         \nBenchmarking {host} {through}(be patient){}",
        if heartbeat { "\n" } else { "..." }
    )
}

/// ab's text report, shaped by the options `r` recorded (`-d`, `-S`, the heartbeat);
/// `banner_printed`: the banner and the Benchmarking line were printed before the run
/// ([`started`]), so the report goes on from there.
pub fn render_with(r: &RunResult, banner_printed: bool) -> String {
    let o = layout_of(r);
    let m = Summary::of(r);
    let (host, through) = (&m.host, &m.through);
    let mut s = if banner_printed {
        String::new()
    } else {
        started(&r.tool.version, host, through, o.heartbeat)
    };
    if m.aborted {
        // ab prints no report when a socket error ends the run (the error goes to stderr),
        // only how far it got.
        if !o.heartbeat {
            s.push('\n');
        }
        if r.metrics.events > 0 {
            let _ = writeln!(s, "Total of {} requests completed", r.metrics.events);
        }
        return s;
    }
    // With ab's heartbeat the line ended at "(be patient)" (progress went to stderr);
    // without it ab adds "..done" to the "..." printed before the run, unless Ctrl-C ended
    // it: ab's signal handler prints the report at once, without the "..done".
    let interrupted = r.outcome.stop_reason == hostbench_core::runner::StopReason::Interrupted;
    s.push_str(if o.heartbeat || interrupted {
        "\n\n"
    } else {
        "..done\n\n\n"
    });
    let _ = writeln!(s, "Server Software:        {}", m.server);
    let _ = writeln!(s, "Server Hostname:        {host}");
    let _ = writeln!(s, "Server Port:            {}", m.port);
    if is_tls(r)
        && let (Some((v, _)), Some((c, bits))) =
            (tls_row(r, tls_kind::PROTOCOL), tls_row(r, tls_kind::CIPHER))
    {
        // ab: version, cipher, the certificate's key bits, the cipher's secret bits.
        let pk = tls_row(r, tls_kind::CERTIFICATE_KEY).and_then(|(_, b)| b);
        let _ = writeln!(
            s,
            "SSL/TLS Protocol:       {v},{c},{:.0},{:.0}",
            pk.unwrap_or(0.0),
            bits.unwrap_or(0.0)
        );
        if let Some((k, Some(b))) = tls_row(r, tls_kind::KEY_EXCHANGE) {
            let _ = writeln!(s, "Server Temp Key:        {k} {b:.0} bits");
        }
        if let Some((n, _)) = tls_row(r, tls_kind::SERVER_NAME) {
            let _ = writeln!(s, "TLS Server Name:        {n}");
        }
    }
    s.push('\n');
    let _ = writeln!(s, "Document Path:          {}", m.path);
    if m.variable {
        let _ = writeln!(s, "Document Length:        Variable\n");
    } else {
        let _ = writeln!(s, "Document Length:        {:.0} bytes\n", m.doc_len);
    }
    let (t, done, conc) = (m.secs, m.done, m.conc);
    let _ = writeln!(s, "Concurrency Level:      {conc}");
    let _ = writeln!(s, "Time taken for tests:   {t:.3} seconds");
    let _ = writeln!(s, "Complete requests:      {done}");
    let _ = writeln!(s, "Failed requests:        {:.0}", m.failed);
    if m.failed > 0.0 {
        let _ = writeln!(
            s,
            "   (Connect: {:.0}, Receive: {:.0}, Length: {:.0}, Exceptions: 0)",
            m.connect_err, m.receive_err, m.length_err
        );
    }
    if m.non_2xx > 0.0 {
        let _ = writeln!(s, "Non-2xx responses:      {:.0}", m.non_2xx);
    }
    if let Some(ka) = m.keepalive {
        let _ = writeln!(s, "Keep-Alive requests:    {ka:.0}");
    }
    let (read, written) = (m.read, m.written);
    let _ = writeln!(s, "Total transferred:      {read} bytes");
    if m.posting {
        let _ = writeln!(s, "Total body sent:        {written}");
    }
    let _ = writeln!(s, "HTML transferred:       {:.0} bytes", m.body_bytes);
    let _ = writeln!(
        s,
        "Requests per second:    {:.2} [#/sec] (mean)",
        m.per_s(done as f64)
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
        m.per_s(read as f64) / 1024.0
    );
    if m.posting {
        let _ = writeln!(
            s,
            "                        {:.2} kb/s sent",
            m.per_s(written as f64) / 1024.0
        );
        let _ = writeln!(
            s,
            "                        {:.2} kb/s total",
            m.per_s((read + written) as f64) / 1024.0
        );
    }
    s.push('\n');
    if done > 0 {
        connection_times(&mut s, r, o.no_sd);
        // ab prints percentiles of more than one request only.
        if !o.no_pct && done > 1 {
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

/// ab's `-w` report: the banner as a paragraph, then one table, row for row as ab's
/// (attributes inserted verbatim, as ab does; values are not HTML-escaped either, except
/// that hostbench escapes `<`, `>` and `&` in the server name and path it did not choose).
/// Connection Times are milliseconds with three decimals (ab: whole milliseconds), and
/// Processing is the processing time's own min/avg/max (ab subtracts Connect's min and
/// max from Total's); the failure breakdown names Receive errors, as ab's text report does.
pub fn render_html(r: &RunResult, a: &AbHtml) -> String {
    let mut s = String::new();
    let m = Summary::of(r);
    let (tr, td) = (&a.tr, &a.td);
    let _ = writeln!(
        s,
        "<p>\n This is ApacheBench, Version 2.3 <i>&lt;hostbench {}: a reimplementation, not \
         ab&gt;</i><br>\n</p>\n<p>",
        r.tool.version
    );
    if m.aborted {
        return s;
    }
    let _ = writeln!(s, "..done\n\n");
    let _ = writeln!(s, "<table {}>", a.table);
    let row = |s: &mut String, label: &str, value: &str| {
        let _ = writeln!(
            s,
            "<tr {tr}><th colspan=2 {td}>{label}:</th><td colspan=2 {td}>{value}</td></tr>"
        );
    };
    row(&mut s, "Server Software", &escape(&m.server));
    row(&mut s, "Server Hostname", &escape(&m.host));
    row(&mut s, "Server Port", &m.port.to_string());
    row(&mut s, "Document Path", &escape(&m.path));
    if m.variable {
        row(&mut s, "Document Length", "Variable");
    } else {
        row(
            &mut s,
            "Document Length",
            &format!("{:.0} bytes", m.doc_len),
        );
    }
    row(&mut s, "Concurrency Level", &m.conc.to_string());
    row(
        &mut s,
        "Time taken for tests",
        &format!("{:.3} seconds", m.secs),
    );
    row(&mut s, "Complete requests", &m.done.to_string());
    row(&mut s, "Failed requests", &format!("{:.0}", m.failed));
    if m.failed > 0.0 {
        let _ = writeln!(
            s,
            "<tr {tr}><td colspan=4 {td} >   (Connect: {:.0}, Receive: {:.0}, Length: {:.0}, \
             Exceptions: 0)</td></tr>",
            m.connect_err, m.receive_err, m.length_err
        );
    }
    if m.non_2xx > 0.0 {
        row(&mut s, "Non-2xx responses", &format!("{:.0}", m.non_2xx));
    }
    if let Some(ka) = m.keepalive {
        row(&mut s, "Keep-Alive requests", &format!("{ka:.0}"));
    }
    row(&mut s, "Total transferred", &format!("{} bytes", m.read));
    if m.posting {
        row(&mut s, "Total body sent", &m.written.to_string());
    }
    row(
        &mut s,
        "HTML transferred",
        &format!("{:.0} bytes", m.body_bytes),
    );
    if m.secs > 0.0 {
        row(
            &mut s,
            "Requests per second",
            &format!("{:.2}", m.per_s(m.done as f64)),
        );
        row(
            &mut s,
            "Transfer rate",
            &format!("{:.2} kb/s received", m.per_s(m.read as f64) / 1024.0),
        );
        if m.posting {
            for (v, what) in [(m.written, "sent"), (m.read + m.written, "total")] {
                let _ = writeln!(
                    s,
                    "<tr {tr}><td colspan=2 {td}>&nbsp;</td><td colspan=2 {td}>{:.2} kb/s \
                     {what}</td></tr>",
                    m.per_s(v as f64) / 1024.0
                );
            }
        }
    }
    if m.done > 0 {
        let _ = writeln!(
            s,
            "<tr {tr}><th {td} colspan=4>Connection Times (ms)</th></tr>"
        );
        let _ = writeln!(
            s,
            "<tr {tr}><th {td}>&nbsp;</th> <th {td}>min</th>   <th {td}>avg</th>   <th \
             {td}>max</th></tr>"
        );
        let total = (
            r.latency.min_ns as f64,
            r.latency.avg_ns as f64,
            r.latency.max_ns as f64,
        );
        let rows = [
            (
                "Connect:",
                time_row(r, times::CONNECT).map(|t| (t.0, t.1, t.4)),
            ),
            (
                "Processing:",
                time_row(r, times::PROCESSING).map(|t| (t.0, t.1, t.4)),
            ),
            ("Total:", Some(total)),
        ];
        for (label, v) in rows {
            let (min, avg, max) = v.unwrap_or((0.0, 0.0, 0.0));
            let _ = writeln!(
                s,
                "<tr {tr}><th {td}>{label}</th><td {td}>{:5.3}</td><td {td}>{:5.3}</td><td \
                 {td}>{:5.3}</td></tr>",
                min / 1e6,
                avg / 1e6,
                max / 1e6
            );
        }
    }
    s.push_str("</table>\n");
    s
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// ab's whole output for `r`, as the options it recorded shape it: the HTML table with
/// `-w`, else the banner and the text report.
pub fn render(r: &RunResult) -> String {
    match layout_of(r).html {
        Some(h) => render_html(r, &h),
        None => render_with(r, false),
    }
}

fn connection_times(s: &mut String, r: &RunResult, no_sd: bool) {
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
        ("Connect:", time_row(r, times::CONNECT)),
        ("Processing:", time_row(r, times::PROCESSING)),
        ("Waiting:", time_row(r, times::WAITING)),
        ("Total:", Some(total)),
    ];
    let _ = writeln!(s, "Connection Times (ms)");
    if no_sd {
        let _ = writeln!(s, "              min     avg       max");
    } else {
        let _ = writeln!(s, "              min    mean[+/-sd]   median       max");
    }
    let mut notes = String::new();
    for (label, row) in rows {
        let (min, mean, sd, median, max) = row.unwrap_or((0.0, 0.0, 0.0, 0.0, 0.0));
        if no_sd {
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

/// One request's times for ab's `-g` file, in microseconds (ab's unit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GnuplotRow {
    /// When the request started, Unix time.
    pub start_us: i64,
    /// Connecting (0 on a kept-alive connection).
    pub ctime_us: i64,
    /// Start to the end of the response.
    pub ttime_us: i64,
    /// Last request byte written to the first response byte.
    pub wait_us: i64,
}

/// ab's rounding of microseconds to whole milliseconds (half up).
fn round_ms(us: i64) -> i64 {
    (us + 500) / 1000
}

/// ab's `-g` file: a header, then one tab-separated row per request with its start (as
/// `ctime` formats the Unix second), the Unix second, and the connect, processing (total −
/// connect), total and waiting times rounded to whole milliseconds, as ab writes them.
///
/// Rows come in ab's order: ab sorts its array by connect, processing, waiting and total
/// time in turn before writing (glibc's qsort is a stable merge sort), so rows are ordered
/// by total time, ties by waiting, processing, connect, then the order given here.
pub fn write_gnuplot(
    w: &mut dyn io::Write,
    rows: &mut [GnuplotRow],
    ctime: &mut dyn FnMut(i64) -> String,
) -> io::Result<()> {
    rows.sort_by_key(|r| (r.ttime_us, r.wait_us, r.ttime_us - r.ctime_us, r.ctime_us));
    writeln!(w, "starttime\tseconds\tctime\tdtime\tttime\twait")?;
    let mut last: Option<(i64, String)> = None;
    for r in rows.iter() {
        let sec = r.start_us.div_euclid(1_000_000);
        if last.as_ref().is_none_or(|(s, _)| *s != sec) {
            last = Some((sec, ctime(sec)));
        }
        let when = last.as_ref().map_or("", |(_, t)| t.as_str());
        writeln!(
            w,
            "{when}\t{sec}\t{}\t{}\t{}\t{}",
            round_ms(r.ctime_us),
            round_ms(r.ttime_us - r.ctime_us),
            round_ms(r.ttime_us),
            round_ms(r.wait_us)
        )?;
    }
    Ok(())
}

/// `Wed Jun 03 21:49:08 1993` for a count of seconds since 1970 in the wanted time zone
/// (Unix time plus the zone's offset): APR's `apr_ctime`, which ab's `-g` uses — C's
/// `ctime` without the newline, the day of the month padded with a zero, not a space.
pub fn apr_ctime(local_s: i64) -> String {
    crate::ctime(local_s, true)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_software_stops_at_the_first_blank_as_ab_does() {
        assert_eq!(
            ab_server_software("SimpleHTTP/0.6 Python/3.11.7"),
            "SimpleHTTP/0.6"
        );
        assert_eq!(ab_server_software("nginx/1.22.1"), "nginx/1.22.1");
        assert_eq!(ab_server_software(" Apache"), "Apache");
        assert_eq!(ab_server_software(""), "");
    }

    #[test]
    fn apr_ctime_pads_the_day_with_a_zero() {
        assert_eq!(apr_ctime(1_795_540_680), "Tue Nov 24 17:18:00 2026");
        assert_eq!(apr_ctime(0), "Thu Jan 01 00:00:00 1970");
        assert_eq!(apr_ctime(951_825_600), "Tue Feb 29 12:00:00 2000");
        assert_eq!(apr_ctime(-1), "Wed Dec 31 23:59:59 1969");
    }

    #[test]
    fn gnuplot_rows_in_abs_order_and_rounding() {
        let r = |start_us, ctime_us, ttime_us, wait_us| GnuplotRow {
            start_us,
            ctime_us,
            ttime_us,
            wait_us,
        };
        let t0 = 1_795_540_680_000_000;
        let mut rows = vec![
            r(t0 + 1_999_999, 0, 2_600, 2_000),
            r(t0, 1_400, 2_600, 900),
            r(t0 + 5, 499, 1_500, 600),
            r(t0 + 6, 500, 1_500, 600),
            r(t0 + 7, 0, 2_600, 900),
        ];
        let mut out = Vec::new();
        write_gnuplot(&mut out, &mut rows, &mut |s| apr_ctime(s)).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "starttime\tseconds\tctime\tdtime\tttime\twait\n\
             Tue Nov 24 17:18:00 2026\t1795540680\t1\t1\t2\t1\n\
             Tue Nov 24 17:18:00 2026\t1795540680\t0\t1\t2\t1\n\
             Tue Nov 24 17:18:00 2026\t1795540680\t1\t1\t3\t1\n\
             Tue Nov 24 17:18:00 2026\t1795540680\t0\t3\t3\t1\n\
             Tue Nov 24 17:18:01 2026\t1795540681\t0\t3\t3\t2\n"
        );
    }
}
