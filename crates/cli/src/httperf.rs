//! The `hostbench httperf ...` front-end: httperf 0.9's options (`--opt=value` or
//! `--opt value`) mapped onto the `http.load` workload in its connections model (each
//! operation a new connection carrying `--num-calls` requests, opened at `--rate` per
//! second on a constant schedule, `--num-conns` in total), and httperf's report layout.
//!
//! Differences, on purpose (docs/http.md): no FD_SETSIZE cap (RLIMIT_NOFILE is raised to the
//! hard limit, so rates hold past 1,024 open sockets); no busy polling; `--hog` is accepted
//! and changes nothing (local ports are always chosen by the kernel); without `--timeout`
//! a request gives up after 60 s rather than never, so a run always ends.

use crate::exec::{self, Format, Output, SaveOptions};
use anyhow::{Result, anyhow, bail};
use hostbench_core::plan::Plan;
use hostbench_core::workload::Workload;
use hostbench_workloads::http::HttpLoad;
use std::process::ExitCode;

const USAGE: &str = "Usage: hostbench httperf [options]
  --server=HOST        server name or address (default localhost)
  --port=N             port (default 80)
  --uri=PATH           path (default /)
  --rate=X             new connections per second, evenly spaced (0 = one after another)
  --period=[d|e]T      T seconds between connections, deterministic (d) or exponential (e)
  --num-conns=N        connections in total (default 1)
  --num-calls=N        requests per connection (default 1)
  --wsess=N1,N2,X      N1 sessions (connections) of N2 calls, X seconds apart
  --timeout=S          seconds a request may take, connect included (default 60)
  --method=M           request method (default GET)
  --add-header=S       extra header lines ('\\n' separates several)
  --http-version=V     1.0 or 1.1 (default 1.1)
  --send-buffer=N      SO_SNDBUF (default 4096)
  --recv-buffer=N      SO_RCVBUF (default 16384)
  --hog                accepted (local ports are always the kernel's choice)
  --ssl                HTTPS (TLS 1.2/1.3 via rustls; certificates are not verified, as httperf)
  --ssl-no-reuse       a full TLS handshake on every connection (default: sessions are resumed)
  --ssl-ciphers=L      cipher suites, OpenSSL names separated by ':'
  --tls-server-name=N  SNI name (default: --server)
  --client=0/1, --burst-length=1, --verbose, --use-timer-cache: accepted
hostbench additions: --threads=N (event loops, default 1), --runtime=S (time limit),
  --label=NAME, --no-save, --results-db=PATH|URL, --format=httperf|json|text.
Not supported (exit 2): --wlog, --wset, --wsesslog, --period=u|v, --burst-length>1,
  --print-request, --print-reply, --think-timeout, --session-cookies.
";

#[derive(Debug)]
struct Args {
    server: String,
    port: u16,
    uri: String,
    rate: f64,
    poisson: bool,
    num_conns: u64,
    num_calls: u64,
    timeout: f64,
    method: String,
    headers: Vec<String>,
    http10: bool,
    send_buffer: u64,
    recv_buffer: u64,
    threads: usize,
    runtime: f64,
    think: f64,
    /// `--wsess` was given (the report adds httperf's Session lines).
    wsess: bool,
    ssl: bool,
    ssl_no_reuse: bool,
    ssl_ciphers: Option<String>,
    tls_server_name: Option<String>,
    label: Option<String>,
    no_save: bool,
    results_db: Option<String>,
    format: String,
}

fn parse(args: &[String]) -> Result<Option<Args>> {
    let mut a = Args {
        server: "localhost".into(),
        port: 80,
        uri: "/".into(),
        rate: 0.0,
        poisson: false,
        num_conns: 1,
        num_calls: 1,
        timeout: 60.0,
        method: "GET".into(),
        headers: Vec::new(),
        http10: false,
        send_buffer: 4096,
        recv_buffer: 16384,
        threads: 1,
        runtime: 0.0,
        think: 0.0,
        wsess: false,
        ssl: false,
        ssl_no_reuse: false,
        ssl_ciphers: None,
        tls_server_name: None,
        label: None,
        no_save: false,
        results_db: None,
        format: "httperf".into(),
    };
    // How many --add-header so far (an error names one by its position).
    let mut add_headers = 0;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "-v" || arg == "-d" {
            continue;
        }
        if arg == "-h" {
            return Ok(None);
        }
        let Some(long) = arg.strip_prefix("--") else {
            bail!(
                "httperf: unexpected argument '{arg}' (options start with --; see `hostbench httperf --help`)"
            );
        };
        let (k, inline) = match long.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (long, None),
        };
        let k = long_name(k)?;
        let flag = matches!(
            k,
            "hog"
                | "verbose"
                | "use-timer-cache"
                | "no-host-hdr"
                | "help"
                | "version"
                | "no-save"
                | "debug"
                | "ssl"
                | "ssl-no-reuse"
        );
        let v = if flag {
            String::new()
        } else if let Some(v) = inline {
            v
        } else {
            let v = args
                .get(i)
                .cloned()
                .ok_or_else(|| anyhow!("httperf: --{k} needs a value"))?;
            i += 1;
            v
        };
        let number = |what: &str| -> Result<f64> {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| anyhow!("httperf: --{k}={v}: expected {what}"))
        };
        let count = |what: &str| -> Result<u64> {
            v.trim()
                .parse::<u64>()
                .map_err(|_| anyhow!("httperf: --{k}={v}: expected {what}"))
        };
        match k {
            "help" => return Ok(None),
            "version" => {
                return Err(anyhow!(
                    "httperf: hostbench {} reimplements httperf 0.9's options and report",
                    env!("CARGO_PKG_VERSION")
                ));
            }
            "server" => a.server = v,
            "port" => {
                a.port = match count("a port from 1 to 65535")? {
                    p @ 1..=65535 => p as u16,
                    _ => bail!("httperf: --port={v}: expected a port from 1 to 65535"),
                }
            }
            "uri" => a.uri = v,
            "rate" => a.rate = number("connections per second")?,
            "period" => {
                let (kind, t) = match v.chars().next() {
                    Some(c @ ('d' | 'e')) => (c, &v[1..]),
                    Some('u' | 'v') => bail!(
                        "httperf: --period={v}: uniform and variable periods are not supported; \
                         use d or e"
                    ),
                    _ => ('d', v.as_str()),
                };
                let t: f64 = t
                    .parse()
                    .ok()
                    .filter(|t: &f64| t.is_finite() && *t > 0.0)
                    .ok_or_else(|| anyhow!("httperf: --period={v}: expected [d|e]SECONDS"))?;
                a.rate = 1.0 / t;
                a.poisson = kind == 'e';
            }
            "num-conns" => a.num_conns = count("a number of connections")?,
            "num-calls" => a.num_calls = count("a number of calls")?,
            "wsess" => {
                let parts: Vec<&str> = v.split(',').collect();
                let bad = || anyhow!("httperf: --wsess={v}: expected N1,N2,X");
                if parts.len() != 3 {
                    return Err(bad());
                }
                a.num_conns = parts[0].trim().parse().map_err(|_| bad())?;
                a.num_calls = parts[1].trim().parse().map_err(|_| bad())?;
                let think: f64 = parts[2].trim().parse().map_err(|_| bad())?;
                if !(think.is_finite() && think >= 0.0) {
                    return Err(bad());
                }
                a.think = think;
                a.wsess = true;
            }
            "timeout" => {
                a.timeout = number("seconds")?;
                if a.timeout == 0.0 {
                    bail!("httperf: --timeout=0: give a positive number of seconds");
                }
            }
            "method" => a.method = v,
            "add-header" => {
                // httperf's own separator is the two characters `\n`; a real CR or LF
                // would smuggle a header in. An error names the option and line by
                // position, never by text.
                add_headers += 1;
                hostbench_workloads::http::url::check_header_arg(&v)
                    .map_err(|e| anyhow!("httperf: --add-header #{add_headers} {e}"))?;
                let lines: Vec<&str> = v
                    .split("\\n")
                    .map(str::trim)
                    .filter(|h| !h.is_empty())
                    .collect();
                for (n, h) in lines.iter().enumerate() {
                    hostbench_workloads::http::url::check_header_line(h).map_err(|e| {
                        if lines.len() == 1 {
                            anyhow!("httperf: --add-header #{add_headers} {e}")
                        } else {
                            anyhow!("httperf: --add-header #{add_headers}, line {} {e}", n + 1)
                        }
                    })?;
                    a.headers.push(h.to_string());
                }
            }
            "http-version" => match v.as_str() {
                "1.0" => a.http10 = true,
                "1.1" => a.http10 = false,
                _ => bail!("httperf: --http-version={v}: use 1.0 or 1.1"),
            },
            "send-buffer" => a.send_buffer = count("a size in bytes")?,
            "recv-buffer" => a.recv_buffer = count("a size in bytes")?,
            "threads" => {
                a.threads = count("a number of threads")? as usize;
                if a.threads == 0 {
                    bail!("httperf: --threads=0: give at least 1");
                }
            }
            "runtime" => a.runtime = number("seconds")?,
            "client" => {
                if v != "0/1" {
                    bail!("httperf: --client={v}: only 0/1 (one client) is supported");
                }
            }
            "burst-length" => {
                if v != "1" {
                    bail!("httperf: --burst-length={v}: only 1 is supported");
                }
            }
            "max-connections" | "max-piped-calls" | "failure-status" | "retry-on-failure" => {
                bail!("httperf: --{k} is not supported")
            }
            "hog" | "verbose" | "use-timer-cache" | "no-host-hdr" | "debug" => {}
            "label" => a.label = Some(v),
            "results-db" => a.results_db = Some(v),
            "no-save" => a.no_save = true,
            "format" => a.format = v,
            "ssl" => a.ssl = true,
            "ssl-no-reuse" => a.ssl_no_reuse = true,
            "ssl-ciphers" => a.ssl_ciphers = Some(v),
            "tls-server-name" => a.tls_server_name = Some(v),
            "wlog" | "wset" | "wsesslog" | "print-request" | "print-reply" | "think-timeout"
            | "session-cookies" | "periodic-stats" => {
                bail!("httperf: --{k} is not supported")
            }
            _ => bail!("httperf: unknown option --{k} (see `hostbench httperf --help`)"),
        }
    }
    Ok(Some(a))
}

/// Every long option this front-end knows (httperf's, then hostbench's own).
const LONG_OPTIONS: &[&str] = &[
    "add-header",
    "burst-length",
    "client",
    "debug",
    "failure-status",
    "help",
    "hog",
    "http-version",
    "max-connections",
    "max-piped-calls",
    "method",
    "no-host-hdr",
    "num-calls",
    "num-conns",
    "period",
    "periodic-stats",
    "port",
    "print-reply",
    "print-request",
    "rate",
    "recv-buffer",
    "retry-on-failure",
    "send-buffer",
    "server",
    "session-cookies",
    "ssl",
    "ssl-ciphers",
    "ssl-no-reuse",
    "think-timeout",
    "timeout",
    "uri",
    "use-timer-cache",
    "verbose",
    "version",
    "wlog",
    "wsess",
    "wsesslog",
    "wset",
    "format",
    "label",
    "no-save",
    "results-db",
    "runtime",
    "threads",
    "tls-server-name",
];

/// The option `k` names: itself, or the one option it is a prefix of (httperf parses with
/// getopt_long, which takes unambiguous abbreviations: `--num-conn`, `--ra`).
fn long_name(k: &str) -> Result<&str> {
    if LONG_OPTIONS.contains(&k) || k.is_empty() {
        return Ok(k);
    }
    let hits: Vec<&str> = LONG_OPTIONS
        .iter()
        .copied()
        .filter(|o| o.starts_with(k))
        .collect();
    match hits[..] {
        [one] => Ok(one),
        [] => Ok(k),
        _ => bail!(
            "httperf: --{k} is ambiguous: it could be --{}; write more of the name",
            hits.join(", --")
        ),
    }
}

/// Runs `hostbench httperf ...`.
pub fn main(argv: &[String]) -> Result<ExitCode> {
    let Some(a) = parse(&argv[2..])? else {
        exec::out_help(USAGE);
        return Ok(ExitCode::SUCCESS);
    };
    if a.num_conns == 0 {
        bail!("httperf: --num-conns=0: give at least 1 connection");
    }
    if a.num_calls == 0 {
        bail!("httperf: --num-calls=0: give at least 1 call");
    }
    if !a.uri.starts_with('/') {
        bail!("httperf: --uri={}: the path must start with /", a.uri);
    }
    let host = if a.server.contains(':') && !a.server.starts_with('[') {
        format!("[{}]", a.server)
    } else {
        a.server.clone()
    };
    let scheme = if a.ssl { "https" } else { "http" };
    let url = format!("{scheme}://{host}:{}{}", a.port, a.uri);
    if !a.ssl && (a.ssl_no_reuse || a.ssl_ciphers.is_some() || a.tls_server_name.is_some()) {
        bail!("httperf: --ssl-no-reuse, --ssl-ciphers and --tls-server-name need --ssl");
    }
    crate::http::check_url(&url).map_err(|e| anyhow!("httperf: {e}"))?;
    let w = &HttpLoad;
    let sequential = a.rate == 0.0;
    let mut ov: Vec<(String, String)> = vec![
        ("url".into(), url),
        ("model".into(), "connections".into()),
        ("calls".into(), a.num_calls.to_string()),
        (
            "connections".into(),
            if sequential { "1" } else { "10000000" }.into(),
        ),
        ("method".into(), a.method.clone()),
        ("headers".into(), a.headers.join("\n")),
        // The peer's request headers (User-Agent).
        ("default_headers".into(), "httperf".into()),
        (
            "http_version".into(),
            if a.http10 { "1.0" } else { "1.1" }.into(),
        ),
        ("timeout".into(), format!("{}", a.timeout)),
        (
            "schedule".into(),
            if a.poisson { "poisson" } else { "constant" }.into(),
        ),
        ("send_buffer".into(), a.send_buffer.to_string()),
        ("recv_buffer".into(), a.recv_buffer.to_string()),
        ("think".into(), format!("{}", a.think)),
        ("sessions".into(), if a.wsess { "on" } else { "off" }.into()),
        // httperf never verifies certificates.
        ("tls_verify".into(), "off".into()),
        (
            "tls_resume".into(),
            if a.ssl_no_reuse { "off" } else { "on" }.into(),
        ),
    ];
    if let Some(c) = &a.ssl_ciphers {
        ov.push(("tls_ciphers".into(), c.clone()));
    }
    if let Some(n) = &a.tls_server_name {
        ov.push(("tls_server_name".into(), n.clone()));
    }
    let params = w.resolve(&ov).map_err(|e| anyhow!("httperf: {e}"))?;
    let mut plan = Plan::new(w.id(), params);
    plan.threads = if sequential { 1 } else { a.threads };
    plan.time_s = a.runtime;
    plan.events = a.num_conns;
    plan.rate = a.rate;
    // httperf samples the reply rate every 5 s.
    plan.report_interval_s = 5.0;
    plan.percentiles = vec![50.0, 90.0, 99.0];
    plan.validate_as(&hostbench_core::plan::OptionNames::HTTPERF)
        .map_err(|e| anyhow!("httperf: {e}"))?;
    let format = match a.format.as_str() {
        // The first line (the options echoed) when the run starts, the rest after it.
        "httperf" => Format::Layout(hostbench_report::httperf::render_after_echo),
        "json" => Format::Json,
        "text" => Format::Layout(hostbench_report::http::render),
        f => bail!("httperf: --format={f}: use httperf, json or text"),
    };
    let output = Output::report(format);
    let saving = SaveOptions::new(a.label, a.no_save, a.results_db)?;
    if a.format == "httperf" {
        let typed = |name: &str| hostbench_report::httperf::typed_in("httperf", argv, name);
        exec::print_when_started(hostbench_report::httperf::echo(
            &plan.params,
            plan.rate,
            plan.events,
            None,
            plan.params.text("url").starts_with("https://"),
            &typed,
        ));
    }
    let (code, result) = exec::execute_returning(&plan, w, &output, &saving, "httperf", argv)?;
    // --num-conns counts connections, not requests: no note about a count not reached.
    Ok(crate::http::verdict(code, &result, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &[&str]) -> Result<Option<Args>> {
        parse(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn abbreviations_as_getopt_long_takes_them() {
        let a = p(&["--num-conn", "5", "--ra=10", "--num-cal", "3", "--ti", "2"])
            .unwrap()
            .unwrap();
        assert_eq!(
            (a.num_conns, a.rate, a.num_calls, a.timeout),
            (5, 10.0, 3, 2.0)
        );
        let e = p(&["--num-c", "5"]).err().unwrap().to_string();
        assert!(
            e.contains("ambiguous") && e.contains("--num-calls, --num-conns"),
            "{e}"
        );
        // `--ssl` is a whole name, not a prefix of --ssl-ciphers.
        assert!(p(&["--ssl"]).unwrap().unwrap().ssl);
        let e = p(&["--bogus", "1"]).err().unwrap().to_string();
        assert!(e.contains("unknown option --bogus"), "{e}");
    }

    #[test]
    fn both_value_forms() {
        let a = p(&[
            "--server",
            "h",
            "--rate=1000",
            "--num-conns",
            "20000",
            "--hog",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            (a.server.as_str(), a.rate, a.num_conns),
            ("h", 1000.0, 20000)
        );
        let a = p(&["--period=e0.01", "--add-header=A: 1\\nB: 2"])
            .unwrap()
            .unwrap();
        assert!(a.poisson && (a.rate - 100.0).abs() < 1e-9);
        assert_eq!(a.headers, ["A: 1", "B: 2"]);
    }

    #[test]
    fn bad_options() {
        assert!(p(&["--bogus=1"]).is_err());
        assert!(p(&["--rate=x"]).is_err());
        assert!(p(&["--port=0"]).is_err());
        assert!(p(&["--ssl-ciphers"]).is_err());
        assert!(
            p(&["--ssl", "--ssl-no-reuse"])
                .unwrap()
                .unwrap()
                .ssl_no_reuse
        );
        assert!(p(&["--wsess=1,2"]).is_err());
        assert!(p(&["--wsess=1,2,-1"]).is_err());
        assert!(p(&["server"]).is_err());
    }
}
