//! The `hostbench ab ...` front-end: ApacheBench 2.3's flags (getopt style: `-n 100`,
//! `-n100`, bundled `-kq`) mapped onto the `http.load` workload, and ab's report layout.
//!
//! Semantics follow ab (HTTP/1.0 requests, a new connection per request unless `-k`, the run
//! ends at the first socket error unless `-r`, `-s` 30 s timeout) with deliberate fixes,
//! documented in docs/http.md: `-t` follows ab's order rule (it replaces an earlier `-n`; a
//! later `-n` holds, and then whichever comes first ends the run) but never caps the run at
//! 50,000 requests, times print with
//! sub-millisecond precision, and the requests run on several event loops (`-W`, httpd
//! trunk's option; default one per CPU, at most `-c`).
//!
//! `-g` is the one option that keeps something per request: only when given, in memory
//! allocated before the run and bounded by `-n` (with `-t` and no `-n`, by ab's 50,000).

use crate::exec;
use crate::frontend::{
    self,
    getopt::{Arg, Flag, Getopt, GetoptError, Style},
};
use crate::present::ab::AbOut;
use crate::present::{Plain, Presenter, Progress, Text};
use anyhow::{Result, anyhow, bail};
use hostbench_core::layout::{AbHtml, AbLayout, Layout};
use hostbench_core::plan::Plan;
use hostbench_core::workload::Workload;
use hostbench_report::ab::GnuplotRow;
use hostbench_workloads::http::engine::Trace;
use hostbench_workloads::http::reqlog::RequestLog;
use hostbench_workloads::http::{HttpLoad, HttpLoadLogged};
use std::process::ExitCode;
use std::sync::Arc;

/// ab's request count with `-t` and no `-n` (its array size): what `-g` keeps and what its
/// heartbeat is a tenth of. hostbench's `-t` itself has no such cap.
const AB_TIME_REQUESTS: u64 = 50_000;

/// ab's options, one definition each: the parser below and the usage text come from it.
pub(crate) const FLAGS: &[Flag] = &[
    Flag::short("n", "requests", "Number of requests to perform"),
    Flag::short(
        "c",
        "concurrency",
        "Number of multiple requests to make at a time",
    ),
    Flag::short(
        "t",
        "timelimit",
        "Seconds to max. to spend on benchmarking (no 50000-request cap)",
    ),
    Flag::short(
        "s",
        "timeout",
        "Seconds to max. wait for each response (default 30)",
    ),
    Flag::short(
        "b",
        "windowsize",
        "Size of TCP send/receive buffer, in bytes",
    ),
    Flag::short(
        "B",
        "address",
        "Address to bind to when making outgoing connections",
    ),
    Flag::short(
        "p",
        "postfile",
        "File containing data to POST. Remember also to set -T",
    ),
    Flag::short(
        "u",
        "putfile",
        "File containing data to PUT. Remember also to set -T",
    ),
    Flag::short(
        "T",
        "content-type",
        "Content-type header to use for POST/PUT data (default text/plain)",
    ),
    Flag::short(
        "v",
        "verbosity",
        "How much troubleshooting info to print (2: the request, then each\n\
         response's head and non-2xx codes, on stdout; 3 and up: each code)",
    ),
    Flag::short("w", "", "Print out results in HTML tables"),
    Flag::short("i", "", "Use HEAD instead of GET"),
    Flag::short("x", "attributes", "String to insert as table attributes"),
    Flag::short("y", "attributes", "String to insert as tr attributes"),
    Flag::short("z", "attributes", "String to insert as td or th attributes"),
    Flag::short(
        "C",
        "attribute",
        "Add cookie, eg. 'Apache=1234'. (repeatable)",
    ),
    Flag::short(
        "H",
        "attribute",
        "Add Arbitrary header line, eg. 'Accept-Encoding: gzip' (repeatable)",
    ),
    Flag::short(
        "A",
        "attribute",
        "Add Basic WWW Authentication, the attributes are a colon\n\
         separated username and password.",
    ),
    Flag::short(
        "P",
        "attribute",
        "Add Basic Proxy Authentication, the attributes\n\
         are a colon separated username and password.",
    ),
    Flag::short(
        "X",
        "proxy:port",
        "Proxyserver and port number to use (http:// URLs)",
    ),
    Flag::short("m", "method", "Method name"),
    Flag::short("k", "", "Use HTTP KeepAlive feature"),
    Flag::short("d", "", "Do not show percentiles served table."),
    Flag::short("S", "", "Do not show confidence estimators and warnings."),
    Flag::short(
        "q",
        "",
        "Do not show progress when doing more than 150 requests",
    ),
    Flag::short(
        "l",
        "",
        "Accept variable document length (use this for dynamic pages)",
    ),
    Flag::short(
        "g",
        "filename",
        "Output collected data to gnuplot format file (every request; with -t\n\
         and no -n, the first 50000)",
    ),
    Flag::short("e", "filename", "Output CSV file with percentages served"),
    Flag::short("r", "", "Don't exit on socket receive errors."),
    Flag::short(
        "W",
        "workers",
        "Event-loop threads (httpd trunk's option; default: one per CPU, at most -c;\n\
         one with -k against a server on this machine)",
    ),
    Flag::short(
        "f",
        "protocol",
        "Specify SSL/TLS protocol (TLS1.2, TLS1.3 or ALL)",
    ),
    Flag::short(
        "Z",
        "ciphersuite",
        "Specify SSL/TLS cipher suite(s) (OpenSSL names, ':'-separated)",
    ),
    Flag::short(
        "I",
        "",
        "Disable TLS Server Name Indication (SNI) extension",
    ),
    Flag::short("E", "certfile", ""),
    Flag::short("V", "", "Print version number and exit"),
    Flag::short("h", "", "Display usage information (this message)"),
    frontend::LABEL,
    frontend::NO_SAVE,
    frontend::RESULTS_DB,
    Flag::long("format", "ab|json|text", ""),
    Flag::long("help", "", ""),
    Flag::long("version", "", ""),
];

/// `hostbench ab -h`: ab's usage, from [`FLAGS`].
fn usage() -> String {
    format!(
        "Usage: hostbench ab [options] [http://]hostname[:port]/path\n\
         Options are:\n\
         {}\
         hostbench additions: {}.\n\
         https:// URLs: TLS 1.2/1.3 via rustls, certificates not verified (as ab), sessions resumed.\n\
         Not supported (exit 2): -E (client certificate), -f SSL2/SSL3/TLS1/TLS1.1, https:// with -X.\n",
        frontend::getopt::usage(FLAGS, 4, 20),
        frontend::Common::usage(FLAGS)
    )
}

/// What the command line asked for.
#[derive(Debug, Default)]
struct AbArgs {
    requests: Option<u64>,
    /// A `-n` that a later `-t` replaced (ab's `-t` sets the request count).
    requests_reset: Option<u64>,
    concurrency: Option<u64>,
    time: Option<f64>,
    timeout: Option<f64>,
    window: Option<u64>,
    post: Option<String>,
    put: Option<String>,
    content_type: Option<String>,
    head: bool,
    headers: Vec<String>,
    method: Option<String>,
    keepalive: bool,
    no_pct: bool,
    no_sd: bool,
    quiet: bool,
    variable: bool,
    csv: Option<String>,
    gnuplot: Option<String>,
    html: bool,
    attrs: AbHtml,
    proxy: Option<String>,
    bind: Option<String>,
    keep_going: bool,
    workers: Option<usize>,
    verbosity: u32,
    protocol: Option<String>,
    ciphers: Option<String>,
    no_sni: bool,
    url: Option<String>,
    /// `--label`, `--no-save`, `--results-db`, `--format`.
    common: frontend::Common,
}

enum Parsed {
    Run(Box<AbArgs>),
    Print(String),
}

fn num<T: std::str::FromStr>(opt: char, v: &str, what: &str) -> Result<T> {
    v.trim()
        .parse()
        .map_err(|_| anyhow!("ab: -{opt} {v}: expected {what}"))
}

fn parse(args: &[String]) -> Result<Parsed> {
    let mut a = AbArgs::default();
    // How many -H and -C so far: an error names one by its position, never by its text.
    let (mut headers, mut cookies) = (0, 0);
    // As ab's getopt: `--` ends the options (`ab -n 1 -- URL`).
    let style = Style {
        double_dash_ends: true,
        ..Style::default()
    };
    for item in Getopt::new(FLAGS, args, style) {
        let item = item.map_err(|e| match e {
            GetoptError::UnknownShort(c) => {
                anyhow!("ab: illegal option -- {c} (see `hostbench ab -h`)")
            }
            GetoptError::MissingValue(o) if o.starts_with("--") => {
                anyhow!("ab: {o} needs a value")
            }
            GetoptError::MissingValue(o) => anyhow!("ab: option {o} requires an argument"),
            GetoptError::UnknownLong(o) | GetoptError::Ambiguous(o, _) => {
                anyhow!("ab: unknown option --{o} (see `hostbench ab -h`)")
            }
            GetoptError::UnexpectedValue(o) => anyhow!("ab: {o} takes no value"),
        })?;
        if a.common.take(&item) {
            continue;
        }
        let (flag, v) = match item {
            Arg::Word(arg) => {
                if a.url.is_some() {
                    bail!(
                        "ab: more than one URL ('{}' and '{arg}'); give exactly one, last",
                        a.url.as_deref().unwrap_or("")
                    );
                }
                a.url = Some(arg);
                continue;
            }
            Arg::Opt { flag, value, .. } => (flag, value.unwrap_or_default()),
        };
        let c = flag.short.chars().next().unwrap_or_default();
        match (flag.short, flag.long) {
            (_, "help") | ("h", _) => return Ok(Parsed::Print(usage())),
            (_, "version") | ("V", _) => return Ok(Parsed::Print(version())),
            ("k", _) => a.keepalive = true,
            ("r", _) => a.keep_going = true,
            ("q", _) => a.quiet = true,
            ("i", _) => a.head = true,
            ("l", _) => a.variable = true,
            ("d", _) => a.no_pct = true,
            ("S", _) => a.no_sd = true,
            ("w", _) => a.html = true,
            ("I", _) => a.no_sni = true,
            ("n", _) => {
                let n: u64 = num(c, &v, "a number of requests")?;
                if n == 0 {
                    bail!("ab: -n 0: give at least 1 request");
                }
                a.requests = Some(n);
                a.requests_reset = None;
            }
            ("c", _) => a.concurrency = Some(num(c, &v, "a number of connections")?),
            ("t", _) => {
                a.time = Some(num(c, &v, "a number of seconds")?);
                // As in ab: -t sets the request count, unless -n follows.
                if let Some(n) = a.requests.take() {
                    a.requests_reset = Some(n);
                }
            }
            ("s", _) => a.timeout = Some(num(c, &v, "a number of seconds")?),
            ("b", _) => a.window = Some(num(c, &v, "a buffer size in bytes")?),
            ("W", _) => a.workers = Some(num(c, &v, "a number of threads")?),
            ("p", _) => a.post = Some(v),
            ("u", _) => a.put = Some(v),
            ("T", _) => a.content_type = Some(v),
            ("v", _) => a.verbosity = num(c, &v, "a verbosity level")?,
            ("e", _) => a.csv = Some(v),
            ("C", _) => {
                cookies += 1;
                hostbench_workloads::http::url::check_header_arg(&v)
                    .map_err(|e| anyhow!("ab: -C #{cookies} {e}"))?;
                a.headers.push(format!("Cookie: {v}"));
            }
            ("H", _) => {
                headers += 1;
                hostbench_workloads::http::url::check_header_line(&v)
                    .map_err(|e| anyhow!("ab: -H #{headers} {e}"))?;
                a.headers.push(v);
            }
            ("A" | "P", _) => {
                // ab skips leading blanks, then encodes the rest as it is.
                let v = v.trim_start();
                if !v.contains(':') {
                    // The value is not echoed: it may be the password alone.
                    bail!(
                        "ab: -{c}: expected username:password, with a colon \
                         (e.g. -{c} user:secret)"
                    );
                }
                let name = if c == 'A' {
                    "Authorization"
                } else {
                    "Proxy-Authorization"
                };
                a.headers.push(format!(
                    "{name}: Basic {}",
                    hostbench_core::base64::encode(v.as_bytes())
                ));
            }
            ("m", _) => a.method = Some(v),
            ("g", _) => {
                if v.is_empty() {
                    bail!("ab: -g needs a file name, e.g. -g out.tsv");
                }
                a.gnuplot = Some(v);
            }
            ("X", _) => {
                hostbench_workloads::http::url::parse_proxy(&v)
                    .map_err(|e| anyhow!("ab: -X {v}: {e}"))?;
                a.proxy = Some(v);
            }
            ("B", _) => a.bind = Some(v),
            // Any of the attribute options turns HTML on, as in ab.
            ("x", _) => {
                a.html = true;
                a.attrs.table = v;
            }
            ("y", _) => {
                a.html = true;
                a.attrs.tr = v;
            }
            ("z", _) => {
                a.html = true;
                a.attrs.td = v;
            }
            ("f", _) => a.protocol = Some(tls_protocol(&v)?.into()),
            ("Z", _) => a.ciphers = Some(v),
            ("E", _) => bail!(
                "ab: -E (client certificate) is not supported; hostbench's TLS \
                 client does not authenticate itself"
            ),
            _ => bail!("ab: illegal option -- {c} (see `hostbench ab -h`)"),
        }
    }
    Ok(Parsed::Run(Box::new(a)))
}

/// ab's `-f` protocol names → the `tls_version` parameter.
fn tls_protocol(v: &str) -> Result<&'static str> {
    match v.to_ascii_uppercase().as_str() {
        "ALL" => Ok("all"),
        "TLS1.2" => Ok("1.2"),
        "TLS1.3" => Ok("1.3"),
        "SSL2" | "SSL3" | "TLS1" | "TLS1.1" => bail!(
            "ab: -f {v}: not supported: rustls implements TLS 1.2 and 1.3 only (SSLv2, SSLv3, \
             TLS 1.0 and 1.1 are obsolete); use TLS1.2, TLS1.3 or ALL"
        ),
        _ => bail!("ab: -f {v}: use TLS1.2, TLS1.3 or ALL"),
    }
}

/// What ab's `-v` prints of one received response: at most this many bytes (ab's header
/// buffer less its terminating NUL), so a huge response head prints no more.
const AB_TRACE_BYTES: usize = 8191;

/// ab's `-v 2` and up, on stdout as ab prints it: the request once ("INFO: GET header ==",
/// between `---` lines), then for each response "LOG: header received:" and what arrived
/// of it (head and the body bytes that came with it, up to `AB_TRACE_BYTES`, up to a NUL
/// byte as C's `%s` stops there), then "WARNING: Response code not 2xx (CODE)" for a
/// non-2xx code, or at `-v 3` and up "LOG: Response code = CODE". Every block goes
/// through the one masking function (a credential header prints as `Basic ***`).
#[derive(Debug)]
struct AbTrace {
    verbosity: u32,
}

impl AbTrace {
    fn request_text(request: &[u8]) -> String {
        // The head only: ab prints the header it built, not the body sent after it.
        let head = request
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(request, |p| &request[..p + 4]);
        let method = head.split(|&b| b == b' ').next().unwrap_or_default();
        format!(
            "INFO: {} header == \n---\n{}\n---\n",
            String::from_utf8_lossy(method),
            String::from_utf8_lossy(head)
        )
    }

    fn response_text(&self, received: &[u8], status: u16) -> String {
        let shown = &received[..received.len().min(AB_TRACE_BYTES)];
        let shown = shown
            .iter()
            .position(|&b| b == 0)
            .map_or(shown, |z| &shown[..z]);
        let mut s = format!(
            "LOG: header received:\n{}\n",
            String::from_utf8_lossy(shown)
        );
        if status / 100 != 2 {
            s.push_str(&format!("WARNING: Response code not 2xx ({status:03})\n"));
        } else if self.verbosity >= 3 {
            s.push_str(&format!("LOG: Response code = {status:03}\n"));
        }
        s
    }
}

impl Trace for AbTrace {
    fn request(&self, request: &[u8]) {
        exec::out(&Self::request_text(request));
    }
    fn response(&self, received: &[u8], status: u16) {
        exec::out(&self.response_text(received, status));
    }
}

/// ab's `-g` start time: `apr_ctime` in the local time zone (TZ, /etc/localtime).
fn local_ctime(unix_s: i64) -> String {
    let t = unix_s as libc::time_t;
    // SAFETY: an all-zero `tm` is a valid value to be overwritten.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; localtime_r keeps no reference to them.
    let ok = !unsafe { libc::localtime_r(&t, &mut tm) }.is_null();
    let offset = if ok { tm.tm_gmtoff } else { 0 };
    hostbench_report::ab::apr_ctime(unix_s + offset)
}

fn version() -> String {
    format!(
        "This is ApacheBench, Version 2.3 (hostbench {}: a reimplementation, not ab)\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// Runs `hostbench ab ...`.
pub fn main(argv: &[String]) -> Result<ExitCode> {
    let a = match parse(&argv[2..])? {
        Parsed::Print(s) => {
            // Usage or version: constant text.
            exec::out_help(&s);
            return Ok(ExitCode::SUCCESS);
        }
        Parsed::Run(a) => *a,
    };
    let Some(url) = a.url.clone() else {
        bail!(
            "ab: wrong number of arguments: give the URL last, e.g. `hostbench ab -n 1000 -c 10 http://127.0.0.1:8080/`"
        );
    };
    let url = if url.contains("://") {
        url
    } else {
        format!("http://{url}")
    };
    crate::http::check_url(&url).map_err(|e| anyhow!("ab: invalid URL {e}"))?;
    if let Some(x) = &a.proxy
        && url.starts_with("https://")
    {
        bail!(
            "ab: -X {x} with {url}: https:// through a proxy needs a CONNECT tunnel, which \
             hostbench does not make; leave out -X to reach the server directly, or use an \
             http:// URL"
        );
    }
    if let Some(b) = &a.bind {
        hostbench_workloads::http::bind_addr(b).map_err(|e| anyhow!("ab: -B {b}: {e}"))?;
    }
    let requests = match (a.requests, a.time) {
        (Some(n), _) => n,
        (None, Some(_)) => 0,
        (None, None) => 1,
    };
    if a.requests == Some(0) {
        bail!("ab: -n 0: give at least 1 request");
    }
    let conc = a.concurrency.unwrap_or(1);
    if conc == 0 {
        bail!("ab: -c 0: give at least 1 connection");
    }
    if requests > 0 && conc > requests {
        bail!("ab: Cannot use concurrency level greater than total number of requests");
    }
    if let Some(t) = a.time
        && !(t.is_finite() && t > 0.0)
    {
        bail!("ab: -t {t}: give a positive number of seconds");
    }
    if let (Some(t), None) = (a.time, a.requests) {
        // ab's -t sets its request count to 50,000 (unless -n comes after it); hostbench
        // drops that cap, and says so once.
        match a.requests_reset {
            Some(n) => eprintln!(
                "ab: -t {t} after -n {n}: as in ab, -t replaces the request count (ab's with \
                 50,000, hostbench's with no cap), so the run lasts {t} s; put -n after -t to \
                 stop at {n} requests"
            ),
            None => eprintln!(
                "ab: -t {t}: ab would also stop at 50,000 requests; hostbench runs for the \
                 whole {t} s (give -n after -t for a request limit)"
            ),
        }
    }
    let timeout = a.timeout.unwrap_or(30.0);
    if !(timeout.is_finite() && timeout > 0.0) {
        bail!("ab: -s {timeout}: give a positive number of seconds");
    }
    if a.post.is_some() && a.put.is_some() {
        bail!("ab: -p and -u cannot be combined");
    }
    let body = a.post.as_ref().or(a.put.as_ref());
    if let Some(b) = body
        && let Err(e) = std::fs::metadata(b)
    {
        bail!("ab: could not open {b}: {e}");
    }
    let method = match (&a.method, a.head, &a.post, &a.put) {
        (Some(m), _, _, _) => m.clone(),
        (None, true, _, _) => "HEAD".into(),
        (None, _, Some(_), _) => "POST".into(),
        (None, _, _, Some(_)) => "PUT".into(),
        _ => "GET".into(),
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if a.workers == Some(0) {
        bail!("ab: -W 0: give at least 1 thread");
    }
    // Default event loops: one per CPU, except for keep-alive runs against a server on
    // this machine, where a second loop takes the CPU the server needs (2 vCPUs, one nginx
    // worker: 0.94x ab's rate with two loops, 1.00x with one; without keep-alive two loops
    // are 1.1-1.25x ab, one 1.04-1.08x; bench/RESULTS.md).
    let local_server = || {
        let target = a.proxy.as_deref().map_or_else(
            || url.clone(),
            |x| format!("http://{}/", x.trim().trim_start_matches("http://")),
        );
        hostbench_workloads::http::url::Url::parse(&target)
            .ok()
            .and_then(|u| u.resolve_like(None).ok())
            .is_some_and(|addr| addr.ip().is_loopback())
    };
    let default_loops = if a.keepalive && local_server() {
        1
    } else {
        cpus
    };
    let threads = a.workers.unwrap_or(default_loops).min(conc as usize).max(1);
    let w = &HttpLoad;
    let url_shown = url.clone();
    let mut ov: Vec<(String, String)> = vec![
        ("url".into(), url),
        ("connections".into(), conc.to_string()),
        (
            "keepalive".into(),
            if a.keepalive { "on" } else { "off" }.into(),
        ),
        ("method".into(), method),
        ("headers".into(), a.headers.join("\n")),
        ("http_version".into(), "1.0".into()),
        // The peer's request headers (User-Agent, Accept).
        ("default_headers".into(), "ab".into()),
        // ab never verifies certificates.
        ("tls_verify".into(), "off".into()),
        ("tls_sni".into(), if a.no_sni { "off" } else { "on" }.into()),
        ("timeout".into(), format!("{timeout}")),
        (
            "stop_on_error".into(),
            if a.keep_going { "off" } else { "on" }.into(),
        ),
        (
            "variable_length".into(),
            if a.variable { "on" } else { "off" }.into(),
        ),
    ];
    if let Some(b) = body {
        ov.push(("body_file".into(), b.clone()));
        ov.push((
            "content_type".into(),
            a.content_type
                .clone()
                .unwrap_or_else(|| "text/plain".into()),
        ));
    } else if let Some(t) = &a.content_type {
        ov.push(("content_type".into(), t.clone()));
    }
    if let Some(p) = &a.protocol {
        ov.push(("tls_version".into(), p.clone()));
    }
    if let Some(z) = &a.ciphers {
        ov.push(("tls_ciphers".into(), z.clone()));
    }
    if let Some(b) = a.window {
        ov.push(("send_buffer".into(), b.to_string()));
        ov.push(("recv_buffer".into(), b.to_string()));
    }
    if let Some(x) = &a.proxy {
        ov.push(("proxy".into(), x.trim().to_string()));
    }
    if let Some(b) = &a.bind {
        ov.push(("bind".into(), b.trim().to_string()));
    }
    let params = w.resolve(&ov).map_err(|e| anyhow!("ab: {e}"))?;
    let mut plan = Plan::new(w.id(), params);
    plan.threads = threads;
    plan.time_s = a.time.unwrap_or(0.0);
    plan.events = requests;
    plan.percentiles = hostbench_report::ab::PERCENTILES.to_vec();
    if a.csv.is_some() {
        plan.percentiles = (0..=100).map(f64::from).collect();
    }
    plan.validate_as(&hostbench_core::plan::OptionNames::AB)
        .map_err(|e| anyhow!("ab: {e}"))?;
    // ab's heartbeat: past 150 requests (and with -t, whose request count is 50,000) and
    // without -q it ends the Benchmarking line there and reports progress on stderr, then
    // "Finished N requests"; otherwise it prints "(be patient).....done".
    let heartbeat = !a.quiet && (requests > 150 || (a.requests.is_none() && a.time.is_some()));
    // What shapes ab's report goes into the result with the measurement: the report is
    // rendered from the result alone, now and from the store.
    plan.layout = Some(Layout::Ab(AbLayout {
        no_pct: a.no_pct,
        no_sd: a.no_sd,
        heartbeat,
        html: a.html.then(|| a.attrs.clone()),
    }));
    let ab_layout = !a.html && matches!(a.common.format.as_deref(), None | Some("ab"));
    // -w: the HTML is printed after the run, from the result; so is ab's own layout, which
    // depends on the heartbeat.
    let plain = match a.common.format.as_deref() {
        None | Some("ab") => None,
        Some(f) if a.html => bail!(
            "ab: -w (or -x, -y, -z) asks for ab's HTML report and --format={f} for another; \
             give one of them"
        ),
        Some("json") => Some(Plain {
            count_is_the_request: true,
            ..Plain::new(Text::Json)
        }),
        Some("text") => Some(Plain {
            count_is_the_request: true,
            ..Plain::new(Text::Layout(hostbench_report::http::render))
        }),
        Some(f) => bail!("ab: --format={f}: use ab, json or text"),
    };
    if a.verbosity >= 2 && !(ab_layout || a.html) {
        bail!(
            "ab: -v {} prints the request and every response head on stdout, which would mix \
             with --format={}; leave out -v, or --format",
            a.verbosity,
            a.common.format.as_deref().unwrap_or_default()
        );
    }
    // ab's heartbeat: a line every tenth of the requests (of its 50,000 with -t alone), at
    // least 100 apart.
    let planned = if requests > 0 {
        requests
    } else {
        AB_TIME_REQUESTS
    };
    let ab_out = AbOut {
        heartbeat: heartbeat.then_some(Progress {
            every: (planned / 10).max(100),
            line: |n| format!("Completed {n} requests"),
        }),
    };
    let output: &dyn Presenter = match &plain {
        Some(p) => p,
        None => &ab_out,
    };
    let saving = a.common.saving()?;
    if ab_layout {
        // ab's banner and Benchmarking line come before the run, so a long run does not
        // look hung and `2>&1` logs keep ab's order.
        let (host, _, _) = hostbench_report::http::target(&url_shown, None);
        let through = match a.proxy.as_deref().map(str::trim) {
            None | Some("") => String::new(),
            Some(p) => format!("[through {p}] "),
        };
        exec::out(&hostbench_report::ab::started(
            env!("CARGO_PKG_VERSION"),
            &host,
            &through,
            heartbeat,
        ));
    }
    // -g: the file is created before the run (a bad path fails now, not after it), and the
    // records are bounded by -n, or by ab's 50,000 with -t alone.
    if let Some(path) = &a.csv {
        crate::output::check_writable(
            std::path::Path::new(path),
            "ab: -e",
            saving.results_db.as_deref(),
        )?;
    }
    let gnuplot = match &a.gnuplot {
        Some(path) => {
            crate::output::check_writable(
                std::path::Path::new(path),
                "ab: -g",
                saving.results_db.as_deref(),
            )?;
            let cap = if requests > 0 {
                requests
            } else {
                AB_TIME_REQUESTS
            };
            let cap = usize::try_from(cap)
                .map_err(|_| anyhow!("ab: -g with -n {requests}: too many requests to keep"))?;
            Some((path, Arc::new(RequestLog::new(cap))))
        }
        None => None,
    };
    let trace = (a.verbosity >= 2).then(|| {
        Arc::new(AbTrace {
            verbosity: a.verbosity,
        }) as Arc<dyn Trace>
    });
    let logged = (gnuplot.is_some() || trace.is_some()).then(|| HttpLoadLogged {
        log: gnuplot.as_ref().map(|(_, log)| log.clone()),
        trace,
    });
    let workload: &dyn Workload = match &logged {
        Some(l) => l,
        None => w,
    };
    let (code, result) = exec::execute(&plan, workload, output, &saving, "ab", argv)?;
    if let Some((path, log)) = gnuplot {
        let taken = log.take();
        let kept = taken.samples.len();
        if taken.dropped > 0 {
            eprintln!(
                "ab: -g {path}: kept the first {kept} of {} responses (with -t and no -n, -g \
                 keeps at most {AB_TIME_REQUESTS}, as ab does; give -n to keep more)",
                kept as u64 + taken.dropped
            );
        }
        let mut rows: Vec<GnuplotRow> = taken
            .samples
            .into_iter()
            .map(|s| GnuplotRow {
                start_us: (s.start_unix_ns / 1000) as i64,
                ctime_us: (s.connect_ns / 1000) as i64,
                ttime_us: (s.total_ns / 1000) as i64,
                wait_us: (s.wait_ns / 1000) as i64,
            })
            .collect();
        let mut out = Vec::new();
        hostbench_report::ab::write_gnuplot(&mut out, &mut rows, &mut local_ctime)
            .map_err(|e| anyhow!("ab: -g {path}: cannot write: {e}"))?;
        crate::output::write(
            std::path::Path::new(path),
            &out,
            "ab: -g",
            saving.results_db.as_deref(),
        )?;
    }
    if let Some(path) = &a.csv {
        crate::output::write(
            std::path::Path::new(path),
            hostbench_report::ab::csv_percentages(&result).as_bytes(),
            "ab: -e",
            saving.results_db.as_deref(),
        )?;
    }
    Ok(crate::http::verdict(code, &result, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> AbArgs {
        match parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap() {
            Parsed::Run(a) => *a,
            Parsed::Print(_) => panic!("printed"),
        }
    }

    #[test]
    fn getopt_forms() {
        let a = p(&["-n100", "-c", "10", "-kr", "-t", "5", "http://h/"]);
        // ab's rule: -t after -n replaces the request count (ab: 50,000; here: none).
        assert_eq!(a.requests, None);
        assert_eq!(p(&["-t", "5", "-n100", "h/"]).requests, Some(100));
        assert_eq!(a.concurrency, Some(10));
        assert!(a.keepalive && a.keep_going);
        assert_eq!(a.time, Some(5.0));
        assert_eq!(a.url.as_deref(), Some("http://h/"));
        let a = p(&["-H", "X-A: 1", "-C", "s=1", "-A", "u:p", "h/"]);
        assert_eq!(
            a.headers,
            ["X-A: 1", "Cookie: s=1", "Authorization: Basic dTpw"]
        );
    }

    /// The saved command line is redacted by core's word-level redaction, which must skip
    /// the value of each long option that takes one: its list is the usage's.
    #[test]
    fn long_options_with_a_value_are_the_ones_redaction_skips() {
        let usage = usage();
        let additions = usage
            .lines()
            .find_map(|l| l.strip_prefix("hostbench additions: "))
            .unwrap();
        let mut with_value: Vec<&str> = additions
            .trim_end_matches('.')
            .split(", ")
            .filter_map(|o| o.strip_prefix("--")?.split_once('=').map(|(n, _)| n))
            .collect();
        with_value.sort_unstable();
        let mut skipped = hostbench_core::secret::AB_LONG_VALUE_OPTIONS.to_vec();
        skipped.sort_unstable();
        assert_eq!(with_value, skipped);
        for name in skipped {
            // The value is taken whatever it looks like.
            let a = p(&[&format!("--{name}"), "-A", "h/"]);
            assert!(a.headers.is_empty(), "--{name}");
        }
        assert_eq!(p(&["--no-save", "-A", "u:p", "h/"]).headers.len(), 1);
    }

    #[test]
    fn headers_are_checked_and_named_by_position() {
        let e = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            parse(&args)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        let m = e(&["-H", "X: 1", "-C", "a=1", "-HTOKEN123", "h/"]);
        assert!(m.contains("-H #2") && m.contains("no colon"), "{m}");
        assert!(!m.contains("TOKEN123"), "{m}");
        let m = e(&["-C", "a=1", "-C", "b=TOKEN123\r\nX: 1", "h/"]);
        assert!(m.contains("-C #2") && !m.contains("TOKEN123"), "{m}");
        let m = e(&["-H", "Authorization : Basic TOKEN123", "h/"]);
        assert!(m.contains("-H #1") && m.contains("blank"), "{m}");
    }

    #[test]
    fn html_proxy_bind_and_gnuplot_flags() {
        let a = p(&["-w", "h/"]);
        assert!(a.html);
        assert_eq!(a.attrs, AbHtml::default());
        // Any attribute option turns HTML on, as in ab.
        let a = p(&["-z", "align=left", "-y", "class=r", "h/"]);
        assert!(a.html);
        assert_eq!(
            (
                a.attrs.table.as_str(),
                a.attrs.tr.as_str(),
                a.attrs.td.as_str()
            ),
            ("", "class=r", "align=left")
        );
        let a = p(&["-x", "border=1", "h/"]);
        assert!(a.html && a.attrs.table == "border=1" && a.attrs.td == "bgcolor=white");
        let a = p(&[
            "-X",
            "127.0.0.1:3128",
            "-P",
            " u:p",
            "-B",
            "127.0.0.2",
            "-gout.tsv",
            "h/",
        ]);
        assert_eq!(a.proxy.as_deref(), Some("127.0.0.1:3128"));
        assert_eq!(a.headers, ["Proxy-Authorization: Basic dTpw"]);
        assert_eq!(a.bind.as_deref(), Some("127.0.0.2"));
        assert_eq!(a.gnuplot.as_deref(), Some("out.tsv"));
    }

    #[test]
    fn base64_encodes() {
        assert_eq!(hostbench_core::base64::encode(b"u:p"), "dTpw");
        assert_eq!(hostbench_core::base64::encode(b"user:pass"), "dXNlcjpwYXNz");
        assert_eq!(hostbench_core::base64::encode(b"ab"), "YWI=");
    }

    #[test]
    fn bad_flags_are_errors() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(parse(&s(&["-j", "h/"])).is_err());
        assert!(parse(&s(&["-n"])).is_err());
        assert!(parse(&s(&["-n", "x", "h/"])).is_err());
        assert!(parse(&s(&["-g", "", "h/"])).is_err());
        assert!(parse(&s(&["-X", "proxy", "h/"])).is_err());
        assert!(parse(&s(&["-P", "nocolon", "h/"])).is_err());
        assert!(parse(&s(&["-f", "SSL3", "https://h/"])).is_err());
        assert!(parse(&s(&["-E", "c.pem", "https://h/"])).is_err());
        // `--` ends the options, as in ab's getopt: what follows is the URL, even one that
        // starts with a dash; a second URL after it is still one too many.
        let a = p(&["-n", "1", "--", "h/"]);
        assert_eq!(a.url.as_deref(), Some("h/"));
        assert_eq!(a.requests, Some(1));
        let e = parse(&s(&["--", "h/", "-k"])).err().unwrap().to_string();
        assert!(e.contains("more than one URL"), "{e}");
        let a = p(&[
            "-f",
            "tls1.3",
            "-Z",
            "TLS_AES_128_GCM_SHA256",
            "-I",
            "https://h/",
        ]);
        assert_eq!(a.protocol.as_deref(), Some("1.3"));
        assert!(a.no_sni);
    }
}
