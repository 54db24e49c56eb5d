//! The `hostbench httperf ...` front-end: httperf 0.9's options (`--opt=value` or
//! `--opt value`) mapped onto the `http.load` workload in its connections model (each
//! operation a new connection carrying `--num-calls` requests, opened at `--rate` per
//! second on a constant schedule, `--num-conns` in total), and httperf's report layout.
//!
//! Differences, on purpose (docs/http.md): no FD_SETSIZE cap (RLIMIT_NOFILE is raised to the
//! hard limit, so rates hold past 1,024 open sockets); no busy polling; `--hog` is accepted
//! and changes nothing (local ports are always chosen by the kernel); without `--timeout`
//! a request gives up after 60 s rather than never, so a run always ends.

use crate::exec;
use crate::frontend::{
    self,
    getopt::{Arg, Flag, Getopt, GetoptError, Style},
};
use crate::present::{Plain, Text};
use anyhow::{Result, anyhow, bail};
use hostbench_core::layout::{HttperfLayout, Layout};
use hostbench_core::plan::Plan;
use hostbench_core::workload::Workload;
use hostbench_workloads::http::HttpLoad;
use std::process::ExitCode;

/// httperf's options (and hostbench's), one definition each: the parser below and the usage
/// text come from it. Entries without help are listed in the usage's closing lines.
pub(crate) const FLAGS: &[Flag] = &[
    Flag::long(
        "server",
        "HOST",
        "server name or address (default localhost)",
    ),
    Flag::long("port", "N", "port (default 80)"),
    Flag::long("uri", "PATH", "path (default /)"),
    Flag::long(
        "rate",
        "X",
        "new connections per second, evenly spaced (0 = one after another)",
    ),
    Flag::long(
        "period",
        "[d|e]T",
        "T seconds between connections, deterministic (d) or exponential (e)",
    ),
    Flag::long("num-conns", "N", "connections in total (default 1)"),
    Flag::long("num-calls", "N", "requests per connection (default 1)"),
    Flag::long(
        "wsess",
        "N1,N2,X",
        "N1 sessions (connections) of N2 calls, X seconds apart",
    ),
    Flag::long(
        "timeout",
        "S",
        "seconds a request may take, connect included (default 60)",
    ),
    Flag::long("method", "M", "request method (default GET)"),
    Flag::long(
        "add-header",
        "S",
        "extra header lines ('\\n' separates several)",
    ),
    Flag::long("http-version", "V", "1.0 or 1.1 (default 1.1)"),
    Flag::long("send-buffer", "N", "SO_SNDBUF (default 4096)"),
    Flag::long("recv-buffer", "N", "SO_RCVBUF (default 16384)"),
    Flag::long(
        "hog",
        "",
        "accepted (local ports are always the kernel's choice)",
    ),
    Flag::long(
        "ssl",
        "",
        "HTTPS (TLS 1.2/1.3 via rustls; certificates are not verified, as httperf)",
    ),
    Flag::long(
        "ssl-no-reuse",
        "",
        "a full TLS handshake on every connection (default: sessions are resumed)",
    ),
    Flag::long(
        "ssl-ciphers",
        "L",
        "cipher suites, OpenSSL names separated by ':'",
    ),
    Flag::long("tls-server-name", "N", "SNI name (default: --server)"),
    // Accepted, and listed together at the end of the usage.
    Flag::long("client", "I/N", ""),
    Flag::long("burst-length", "N", ""),
    Flag {
        short: "v",
        long: "verbose",
        value: "",
        help: "",
    },
    Flag::long("use-timer-cache", "", ""),
    Flag::long("no-host-hdr", "", ""),
    Flag {
        short: "d",
        long: "debug",
        value: "",
        help: "",
    },
    Flag {
        short: "h",
        long: "help",
        value: "",
        help: "",
    },
    Flag::long("version", "", ""),
    // hostbench's additions.
    Flag::long("threads", "N", ""),
    Flag::long("runtime", "S", ""),
    frontend::LABEL,
    frontend::NO_SAVE,
    frontend::RESULTS_DB,
    Flag::long("format", "httperf|json|text", ""),
    // httperf's, refused with a clear message.
    Flag::long("wlog", "B,F", ""),
    Flag::long("wset", "N,X", ""),
    Flag::long("wsesslog", "N,X,F", ""),
    Flag::long("print-request", "[=header|body]", ""),
    Flag::long("print-reply", "[=header|body]", ""),
    Flag::long("think-timeout", "S", ""),
    Flag::long("session-cookies", "", ""),
    Flag::long("periodic-stats", "", ""),
    Flag::long("max-connections", "N", ""),
    Flag::long("max-piped-calls", "N", ""),
    Flag::long("failure-status", "N", ""),
    Flag::long("retry-on-failure", "", ""),
];

/// `hostbench httperf --help`, from [`FLAGS`].
fn usage() -> String {
    format!(
        "Usage: hostbench httperf [options]\n\
         {}\
         \x20 --client=0/1, --burst-length=1, --verbose, --use-timer-cache: accepted\n\
         hostbench additions: --threads=N (event loops, default 1), --runtime=S (time limit),\n\
         \x20 {}.\n\
         Not supported (exit 2): --wlog, --wset, --wsesslog, --period=u|v, --burst-length>1,\n\
         \x20 --print-request, --print-reply, --think-timeout, --session-cookies.\n",
        frontend::getopt::usage(FLAGS, 2, 23),
        frontend::Common::usage(FLAGS)
    )
}

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
    /// What httperf's first line echoes only when it was given: `--timeout`, `--hog`.
    echo: HttperfLayout,
    ssl: bool,
    ssl_no_reuse: bool,
    ssl_ciphers: Option<String>,
    tls_server_name: Option<String>,
    /// `--label`, `--no-save`, `--results-db`, `--format` (default httperf).
    common: frontend::Common,
}

fn parse(args: &[String]) -> Result<Parsed> {
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
        echo: HttperfLayout::default(),
        ssl: false,
        ssl_no_reuse: false,
        ssl_ciphers: None,
        tls_server_name: None,
        common: frontend::Common::default(),
    };
    // How many --add-header so far (an error names one by its position).
    let mut add_headers = 0;
    // getopt_long's: unique prefixes, and `--` ends the options (httperf takes no
    // operands, so whatever follows is an unexpected argument).
    let style = Style {
        long_prefixes: true,
        double_dash_ends: true,
    };
    for item in Getopt::new(FLAGS, args, style) {
        let item = item.map_err(|e| match e {
            GetoptError::UnknownLong(o) => {
                anyhow!("httperf: unrecognized option '--{o}' (see `hostbench httperf --help`)")
            }
            GetoptError::UnknownShort(o) => {
                anyhow!("httperf: invalid option -- '{o}' (see `hostbench httperf --help`)")
            }
            GetoptError::Ambiguous(o, names) => anyhow!(
                "httperf: --{o} is ambiguous: it could be --{}; write more of the name",
                names.join(", --")
            ),
            GetoptError::MissingValue(o) => anyhow!("httperf: {o} needs a value"),
            GetoptError::UnexpectedValue(o) => anyhow!("httperf: {o} takes no value"),
        })?;
        if a.common.take(&item) {
            continue;
        }
        let (k, v) = match item {
            Arg::Word(w) => bail!(
                "httperf: unexpected argument '{w}' (options start with --; see `hostbench httperf --help`)"
            ),
            Arg::Opt { flag, value, .. } => (flag.long, value.unwrap_or_default()),
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
            "help" => return Ok(Parsed::Print(usage())),
            "version" => {
                return Ok(Parsed::Print(format!(
                    "httperf: hostbench {} (httperf 0.9.0 compatible: its options and report, \
                     reimplemented)\n",
                    env!("CARGO_PKG_VERSION")
                )));
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
                if a.num_conns == 0 || a.num_calls == 0 {
                    bail!("httperf: --wsess={v}: give at least 1 session of at least 1 call");
                }
                a.think = think;
                a.wsess = true;
            }
            "timeout" => {
                a.echo.timeout = true;
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
            "hog" => a.echo.hog = true,
            "verbose" | "use-timer-cache" | "no-host-hdr" | "debug" => {}
            "ssl" => a.ssl = true,
            "ssl-no-reuse" => a.ssl_no_reuse = true,
            "ssl-ciphers" => a.ssl_ciphers = Some(v),
            "tls-server-name" => a.tls_server_name = Some(v),
            "wlog" | "wset" | "wsesslog" | "print-request" | "print-reply" | "think-timeout"
            | "session-cookies" | "periodic-stats" => {
                bail!("httperf: --{k} is not supported")
            }
            _ => bail!("httperf: unrecognized option '--{k}' (see `hostbench httperf --help`)"),
        }
    }
    Ok(Parsed::Run(Box::new(a)))
}

/// What the command line asks for.
enum Parsed {
    /// Run the load.
    Run(Box<Args>),
    /// Print help or the version and exit 0.
    Print(String),
}

/// Runs `hostbench httperf ...`.
pub fn main(argv: &[String]) -> Result<ExitCode> {
    let a = match parse(&argv[2..])? {
        Parsed::Run(a) => *a,
        Parsed::Print(text) => {
            exec::out_help(&text);
            return Ok(ExitCode::SUCCESS);
        }
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
        // At most this many open at once: one after another without a rate, else every
        // connection asked for (httperf has no cap; a run never opens more than that).
        (
            "connections".into(),
            if sequential {
                1
            } else {
                a.num_conns.clamp(1, 10_000_000)
            }
            .to_string(),
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
    plan.layout = Some(Layout::Httperf(a.echo.clone()));
    let format_name = a.common.format.clone().unwrap_or_else(|| "httperf".into());
    let format = match format_name.as_str() {
        // The first line (the options echoed) when the run starts, the rest after it.
        "httperf" => Text::Layout(hostbench_report::httperf::render_after_echo),
        "json" => Text::Json,
        "text" => Text::Layout(hostbench_report::http::render),
        f => bail!("httperf: --format={f}: use httperf, json or text"),
    };
    let mut output = Plain {
        // --num-conns 5 asked for 5 connections: doing them is not "only 5".
        count_is_the_request: true,
        ..Plain::new(format)
    };
    let saving = a.common.saving()?;
    if format_name == "httperf" {
        output.started = Some(hostbench_report::httperf::echo(
            &plan.params,
            plan.rate,
            plan.events,
            None,
            plan.params.text("url").starts_with("https://"),
            &a.echo,
        ));
    }
    let (code, result) = exec::execute(&plan, w, &output, &saving, "httperf", argv)?;
    // --num-conns counts connections, not requests: no note about a count not reached.
    Ok(crate::http::verdict(code, &result, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &[&str]) -> Result<Option<Args>> {
        parse(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>()).map(|p| match p {
            Parsed::Run(a) => Some(*a),
            Parsed::Print(_) => None,
        })
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
        // An abbreviated --timeout is --timeout: the echo says it was given.
        assert!(a.echo.timeout && !a.echo.hog);
        let e = p(&["--num-c", "5"]).err().unwrap().to_string();
        assert!(
            e.contains("ambiguous") && e.contains("--num-calls, --num-conns"),
            "{e}"
        );
        // `--ssl` is a whole name, not a prefix of --ssl-ciphers.
        assert!(p(&["--ssl"]).unwrap().unwrap().ssl);
        // As httperf says it, with or without a value (which is never echoed).
        for bogus in [&["--bogus", "1"][..], &["--bogus=SECRET"], &["--bogus"]] {
            let e = p(bogus).err().unwrap().to_string();
            assert!(
                e.starts_with("httperf: unrecognized option '--bogus' ("),
                "{e}"
            );
            assert!(!e.contains("SECRET"), "{e}");
        }
        // httperf's options this build refuses say so, whichever form they take.
        for o in [
            "--print-reply",
            "--print-reply=header",
            "--print-request",
            "--print-req=body",
        ] {
            let e = p(&[o]).err().unwrap().to_string();
            assert!(e.contains("is not supported"), "{o}: {e}");
        }
    }

    #[test]
    fn help_and_version_print_and_exit() {
        let v = |args: &[&str]| match parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        {
            Ok(Parsed::Print(t)) => t,
            _ => panic!("{args:?} did not print"),
        };
        assert!(v(&["--version"]).contains("httperf 0.9.0 compatible"));
        // getopt stops at help, as httperf does: a later bad option is not looked at.
        assert!(v(&["-h", "--bogus"]).starts_with("Usage: hostbench httperf [options]\n"));
        assert_eq!(v(&["--help"]), usage());
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
        assert!(a.echo.hog && !a.echo.timeout);
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
        // A zero names the option that was typed.
        for w in ["--wsess=2,0,0", "--wsess=0,2,0"] {
            let e = p(&[w]).unwrap_err().to_string();
            assert!(e.contains(w) && e.contains("at least 1 session"), "{e}");
        }
        assert!(p(&["server"]).is_err());
    }
}
