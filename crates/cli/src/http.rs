//! `hostbench http URL ...`: the native HTTP load command (wrk-like options) mapped onto
//! the `http.load` workload and a plan. `-n` is an event limit, `-d` a time limit, `-R` the
//! runner's open-loop rate; everything else is a workload parameter.

use crate::exec;
use crate::present::{Plain, Text};
use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, ValueEnum};
use hostbench_core::plan::Plan;
use hostbench_core::result::RunResult;
use hostbench_core::runner::StopReason;
use hostbench_core::units::parse_seconds;
use hostbench_core::workload::Workload;
use hostbench_workloads::http::HttpLoad;
use std::process::ExitCode;

/// HTTP load against URL: closed loop over -c connections, open loop at -R requests/s
/// (latency from each request's intended start), or httperf's connection rate
/// (--model connections).
#[derive(Debug, Args)]
#[command(
    after_help = "URL 'self' starts the built-in server (hostbench serve) inside the \
                        run. Peer grammars: `hostbench ab ...`, `hostbench httperf ...`. See \
                        docs/http.md."
)]
pub struct HttpArgs {
    /// Target: an http:// or https:// URL (host, optional port, path), or 'self'.
    url: String,
    /// Worker threads, each with its own event loop [default: one per CPU, at most -c].
    #[arg(short, long)]
    threads: Option<usize>,
    /// Connections, spread over the threads.
    #[arg(short, long, default_value_t = 10)]
    connections: u64,
    /// Duration (10s, 500ms, 2m); 0 = until -n requests.
    #[arg(short, long, default_value = "10s", value_parser = seconds)]
    duration: f64,
    /// Stop after this many responses (0 = none).
    #[arg(short = 'n', long, default_value_t = 0)]
    requests: u64,
    /// Open loop: this many requests per second in total (0 = closed loop).
    #[arg(short = 'R', long, default_value_t = 0.0)]
    rate: f64,
    /// Open-loop arrivals: evenly spaced or Poisson.
    #[arg(long, value_enum, default_value_t = Schedule::Constant)]
    schedule: Schedule,
    /// Request method.
    #[arg(short, long, default_value = "GET")]
    method: String,
    /// Extra header 'Name: value' (repeatable).
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    headers: Vec<String>,
    /// Send this file's bytes as the request body.
    #[arg(long, value_name = "FILE")]
    body: Option<String>,
    /// Content-Type of the body.
    #[arg(long, value_name = "TYPE")]
    content_type: Option<String>,
    /// A new connection per request.
    #[arg(long)]
    no_keepalive: bool,
    /// Requests written back to back per connection (keep-alive, closed loop).
    #[arg(long, default_value_t = 1)]
    pipeline: u32,
    /// Send HTTP/1.0 requests.
    #[arg(long = "http1.0")]
    http10: bool,
    /// A request (connect included) taking longer fails with a timeout.
    #[arg(long, default_value = "10s", value_parser = seconds)]
    timeout: f64,
    /// One operation = a new connection carrying --calls requests.
    #[arg(long, value_enum, default_value_t = ModelArg::Requests)]
    model: ModelArg,
    /// Requests per connection with --model connections.
    #[arg(long, default_value_t = 1)]
    calls: u32,
    /// https: do not verify the server's certificate (self-signed targets).
    #[arg(short = 'k', long)]
    insecure: bool,
    /// https: no TLS session resumption (a full handshake per new connection).
    #[arg(long)]
    no_tls_resume: bool,
    /// https: TLS versions offered.
    #[arg(long, value_enum, default_value_t = TlsVersion::All)]
    tls_version: TlsVersion,
    /// https: cipher suites, OpenSSL or IANA names separated by ':'.
    #[arg(long, value_name = "LIST")]
    ciphers: Option<String>,
    /// https: SNI and the name checked in the certificate [default: the URL's host].
    #[arg(long, value_name = "NAME")]
    tls_server_name: Option<String>,
    /// URL 'self': the built-in server speaks HTTPS (self-signed; the client trusts it).
    #[arg(long)]
    tls: bool,
    /// Local address each connection is bound to before connecting (ab's -B).
    #[arg(long, value_name = "ADDRESS")]
    bind: Option<String>,
    /// Send requests through this HTTP forward proxy, HOST:PORT (ab's -X); credentials go
    /// in -H 'Proxy-Authorization: Basic ...'.
    #[arg(long, value_name = "HOST:PORT")]
    proxy: Option<String>,
    /// Percentiles to report, comma-separated.
    #[arg(
        short = 'p',
        long,
        default_value = "50,75,90,99,99.9",
        value_delimiter = ','
    )]
    percentile: Vec<f64>,
    /// Keep a per-interval sample (requests/s, latency) this often in the result (0 = none).
    #[arg(short = 'i', long = "report-interval", default_value = "1s", value_parser = seconds)]
    report_interval: f64,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = HttpFormat::Text)]
    format: HttpFormat,
    /// Only the report: no warnings on stderr.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    save: exec::SaveArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Schedule {
    Constant,
    Poisson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TlsVersion {
    All,
    #[value(name = "1.2")]
    V12,
    #[value(name = "1.3")]
    V13,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ModelArg {
    Requests,
    Connections,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum HttpFormat {
    /// hostbench's HTTP report
    Text,
    /// the full result as JSON
    Json,
    /// one CSV row
    Csv,
    /// ApacheBench's layout
    Ab,
    /// httperf's layout
    Httperf,
}

fn seconds(s: &str) -> Result<f64, String> {
    parse_seconds(s).map_err(|e| e.to_string())
}

/// Checks a URL the way the workload will, so a typo is a usage error before anything runs.
pub fn check_url(url: &str) -> Result<()> {
    if url.trim() == "self" {
        return Ok(());
    }
    hostbench_workloads::http::url::Url::parse(url).map_err(|e| anyhow!("{e}"))?;
    Ok(())
}

/// What every HTTP grammar says after exec has printed its run: a closed-loop run that its
/// time limit ended before its request count (`requests`: the count is of requests, not of
/// httperf's connections) is said on stderr; a run in which the server never answered is a
/// failed run (FATAL, exit 1), whatever the timeout was. `code` is exec's.
pub fn verdict(code: ExitCode, r: &RunResult, requests: bool) -> ExitCode {
    if code != ExitCode::SUCCESS {
        return code;
    }
    let c = &r.config;
    if hostbench_workloads::http::server_never_answered(r) {
        eprintln!(
            "FATAL: no response arrived from {}; the run measured nothing",
            r.workload.params.text("url")
        );
        return ExitCode::from(1);
    }
    if requests
        && r.outcome.stop_reason == StopReason::TimeLimit
        && c.rate_per_s == 0.0
        && c.event_limit > r.metrics.events
    {
        eprintln!(
            "NOTE: the time limit ({} s) ended the run after {} of the {} requests asked for",
            c.time_limit_s, r.metrics.events, c.event_limit
        );
    }
    code
}

/// Runs `hostbench http ...`.
pub fn run(a: HttpArgs, argv: &[String]) -> Result<ExitCode> {
    check_url(&a.url)?;
    for (i, h) in a.headers.iter().enumerate() {
        hostbench_workloads::http::url::check_header_line(h)
            .map_err(|e| anyhow!("-H #{} {e}", i + 1))?;
    }
    if a.connections == 0 {
        bail!("-c/--connections must be at least 1");
    }
    if !(a.rate.is_finite() && a.rate >= 0.0) {
        bail!("-R/--rate must be zero (closed loop) or a positive number of requests/s");
    }
    if a.duration == 0.0 && a.requests == 0 {
        bail!("give a limit: -d DURATION or -n REQUESTS (or both)");
    }
    if a.pipeline == 0 || a.pipeline as usize > hostbench_workloads::http::engine::MAX_PIPELINE {
        bail!(
            "--pipeline must be from 1 to {}",
            hostbench_workloads::http::engine::MAX_PIPELINE
        );
    }
    if let Some(b) = &a.body {
        std::fs::metadata(b).with_context(|| format!("--body {b}"))?;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = a.threads.unwrap_or(cpus).min(a.connections as usize).max(1);
    if a.threads == Some(0) {
        bail!("-t/--threads must be at least 1");
    }
    let w = &HttpLoad;
    let mut ov: Vec<(String, String)> = vec![
        ("url".into(), a.url.clone()),
        ("connections".into(), a.connections.to_string()),
        (
            "keepalive".into(),
            if a.no_keepalive { "off" } else { "on" }.into(),
        ),
        ("method".into(), a.method.clone()),
        ("headers".into(), a.headers.join("\n")),
        ("timeout".into(), format!("{}", a.timeout)),
        ("pipeline".into(), a.pipeline.to_string()),
        (
            "http_version".into(),
            if a.http10 { "1.0" } else { "1.1" }.into(),
        ),
        (
            "schedule".into(),
            match a.schedule {
                Schedule::Constant => "constant",
                Schedule::Poisson => "poisson",
            }
            .into(),
        ),
        (
            "model".into(),
            match a.model {
                ModelArg::Requests => "requests",
                ModelArg::Connections => "connections",
            }
            .into(),
        ),
        ("calls".into(), a.calls.max(1).to_string()),
        (
            "tls_verify".into(),
            if a.insecure { "off" } else { "on" }.into(),
        ),
        (
            "tls_resume".into(),
            if a.no_tls_resume { "off" } else { "on" }.into(),
        ),
        (
            "tls_version".into(),
            match a.tls_version {
                TlsVersion::All => "all",
                TlsVersion::V12 => "1.2",
                TlsVersion::V13 => "1.3",
            }
            .into(),
        ),
        ("self_tls".into(), if a.tls { "on" } else { "off" }.into()),
        ("connect_check".into(), "on".into()),
    ];
    if a.url.trim() == "self" && (a.proxy.is_some() || a.bind.is_some()) {
        bail!(
            "--proxy and --bind are for an external server; URL 'self' is the built-in one, \
             reached directly on loopback"
        );
    }
    if a.tls && a.url.trim() != "self" {
        bail!("--tls is for URL 'self' (the built-in server); for another server write https://");
    }
    if let Some(c) = &a.ciphers {
        ov.push(("tls_ciphers".into(), c.clone()));
    }
    if let Some(b) = &a.bind {
        ov.push(("bind".into(), b.trim().to_string()));
    }
    if let Some(x) = &a.proxy {
        ov.push(("proxy".into(), x.trim().to_string()));
    }
    if let Some(n) = &a.tls_server_name {
        ov.push(("tls_server_name".into(), n.clone()));
    }
    if let Some(b) = &a.body {
        ov.push(("body_file".into(), b.clone()));
    }
    if let Some(t) = &a.content_type {
        ov.push(("content_type".into(), t.clone()));
    }
    let params = w.resolve(&ov)?;
    let mut plan = Plan::new(w.id(), params);
    plan.threads = threads;
    plan.time_s = a.duration;
    plan.events = a.requests;
    plan.rate = a.rate;
    plan.report_interval_s = a.report_interval;
    plan.percentiles = a.percentile;
    if a.format == HttpFormat::Ab {
        for p in hostbench_report::ab::PERCENTILES {
            if !plan.percentiles.contains(&p) {
                plan.percentiles.push(p);
            }
        }
    }
    plan.validate_as(&hostbench_core::plan::OptionNames::HTTP)
        .map_err(anyhow::Error::msg)?;
    let text = match a.format {
        HttpFormat::Text => Text::Layout(hostbench_report::http::render),
        HttpFormat::Json => Text::Json,
        HttpFormat::Csv => Text::Csv,
        HttpFormat::Ab => Text::Layout(hostbench_report::ab::render),
        HttpFormat::Httperf => Text::Layout(hostbench_report::httperf::render),
    };
    let mut output = Plain {
        // -q silences the warnings, never the report: a layout keeps the verbosity it is
        // printed at (3); JSON and CSV print at any.
        verbosity: if a.quiet && !matches!(text, Text::Layout(_)) {
            1
        } else {
            3
        },
        quiet: a.quiet,
        ..Plain::new(text)
    };
    let saving = a.save.options()?;
    if a.format == HttpFormat::Text {
        // wrk's first lines, before the run: a long run does not look hung.
        let what = if a.duration > 0.0 {
            format!("{}s test", a.duration)
        } else {
            format!("test of {} requests", a.requests)
        };
        output.started = Some(format!(
            "Running {what} @ {}\n  {threads} threads and {} connections\n",
            a.url, a.connections
        ));
    }
    let (code, result) = exec::execute(&plan, w, &output, &saving, "native", argv)?;
    let code = verdict(code, &result, true);
    let failed = result
        .workload
        .facts
        .get(hostbench_core::names::http::fact::ERRORS)
        .is_some_and(|&e| e > 0.0);
    if code == ExitCode::SUCCESS && result.metrics.events == 0 && failed {
        // Every request failed (a server that went away, TLS to a plain port, one that
        // never answers): a failed run, not a measurement of zero.
        eprintln!("FATAL: no request succeeded; the errors are above (and in the result)");
        return Ok(ExitCode::from(1));
    }
    Ok(code)
}
