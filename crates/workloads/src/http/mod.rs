//! HTTP load: the client engine (closed loop, open loop, connection rate) and the target
//! server.
//!
//! `http.load` is one workload whose event is one HTTP response: [`engine`] drives the
//! requests, [`parse`] reads the responses, [`server`] is the built-in target (`url=self`
//! starts it inside the run's setup, so a suite entry needs no external server), [`url`]
//! parses targets and builds the request bytes. What the engine saw beyond latencies
//! (status codes, errors by kind, connect/waiting/processing times, bytes) comes back as the
//! instance's facts and tables, which the ab and httperf layouts render.

pub mod engine;
pub mod parse;
pub mod reqlog;
pub mod server;
pub mod sys;
pub mod tls;
pub mod url;

use engine::{EngineCfg, ErrKind, HttpWorker, Model, Stats};
use hostbench_core::names::http::{ERRORS_COLUMN, fact, table, times, tls_kind};
use hostbench_core::params::{ParamKind, ParamSpec};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::{Counter, LatencyRec};
use hostbench_core::result::{
    Better, Column, Figure, FigureDef, Row, RunResult, Table, Warning, WarningKind, figure,
};
use hostbench_core::workload::*;
use reqlog::RequestLog;
use server::{ServeConfig, Server};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};

/// The HTTP load workload.
pub struct HttpLoad;

/// `http.load` watched by its front-end: the same workload (id, parameters, result), plus
/// a record of every request in `log` (ab's `-g`; the caller takes them after the run)
/// and/or the request and every response head shown to `trace` (ab's `-v 2` and up).
pub struct HttpLoadLogged {
    /// Where the records go; its capacity bounds them.
    pub log: Option<Arc<RequestLog>>,
    /// What sees the traffic.
    pub trace: Option<Arc<dyn engine::Trace>>,
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "url",
        kind: ParamKind::Text,
        default: "self",
        unit: "",
        help: "target, http://HOST[:PORT]/PATH or https://...; 'self' starts the built-in \
               server (hostbench serve) on 127.0.0.1 inside the run",
        sysbench: None,
    },
    ParamSpec {
        name: "connections",
        kind: ParamKind::Int {
            min: 1,
            max: 10_000_000,
        },
        default: "10",
        unit: "connections",
        help: "connections kept open, spread over the threads (model=connections: most open \
               at once)",
        sysbench: None,
    },
    ParamSpec {
        name: "keepalive",
        kind: ParamKind::Bool,
        default: "on",
        unit: "",
        help: "reuse connections; off = a new connection per request",
        sysbench: None,
    },
    ParamSpec {
        name: "method",
        kind: ParamKind::Text,
        default: "GET",
        unit: "",
        help: "request method",
        sysbench: None,
    },
    ParamSpec {
        name: "headers",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "extra request headers 'Name: value', separated by newlines; they replace \
               defaults of the same name",
        sysbench: None,
    },
    ParamSpec {
        name: "default_headers",
        kind: ParamKind::Choice(&["wrk", "httperf", "ab"]),
        default: "wrk",
        unit: "",
        help: "headers sent besides Host, as the peer sends them: wrk = none, httperf = \
               'User-Agent: hostbench/VERSION', ab = that and 'Accept: */*' (each header \
               costs the server a parse)",
        sysbench: None,
    },
    ParamSpec {
        name: "connect_check",
        kind: ParamKind::Bool,
        default: "off",
        unit: "",
        help: "connect once before the run and fail at once if the server is not there \
               (wrk's check; the native command turns it on)",
        sysbench: None,
    },
    ParamSpec {
        name: "body_file",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "file whose bytes are the request body",
        sysbench: None,
    },
    ParamSpec {
        name: "content_type",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "Content-Type of the request body",
        sysbench: None,
    },
    ParamSpec {
        name: "http_version",
        kind: ParamKind::Choice(&["1.1", "1.0"]),
        default: "1.1",
        unit: "",
        help: "HTTP version of the request line",
        sysbench: None,
    },
    ParamSpec {
        name: "timeout",
        kind: ParamKind::Seconds,
        default: "10s",
        unit: "s",
        help: "a request (connect included) that takes longer fails with a timeout",
        sysbench: None,
    },
    ParamSpec {
        name: "pipeline",
        kind: ParamKind::Int {
            min: 1,
            max: engine::MAX_PIPELINE as i64,
        },
        default: "1",
        unit: "requests",
        help: "requests written back to back on a keep-alive connection (closed loop)",
        sysbench: None,
    },
    ParamSpec {
        name: "model",
        kind: ParamKind::Choice(&["requests", "connections"]),
        default: "requests",
        unit: "",
        help: "one operation is a request on a pooled connection, or (connections) a new \
               connection carrying 'calls' requests (httperf's model; --rate is then \
               connections/s)",
        sysbench: None,
    },
    ParamSpec {
        name: "calls",
        kind: ParamKind::Int {
            min: 1,
            max: 1_000_000_000,
        },
        default: "1",
        unit: "requests",
        help: "requests per connection in model=connections",
        sysbench: None,
    },
    ParamSpec {
        name: "think",
        kind: ParamKind::Seconds,
        default: "0",
        unit: "s",
        help: "model=connections: pause between the calls of one connection (httperf's \
               --wsess think time)",
        sysbench: None,
    },
    ParamSpec {
        name: "sessions",
        kind: ParamKind::Bool,
        default: "off",
        unit: "",
        help: "model=connections: report each connection as an httperf session (--wsess): \
               session rate, lifetime, failures, length histogram",
        sysbench: None,
    },
    ParamSpec {
        name: "schedule",
        kind: ParamKind::Choice(&["constant", "poisson"]),
        default: "constant",
        unit: "",
        help: "open-loop arrivals (--rate): evenly spaced (wrk2, vegeta, httperf) or Poisson",
        sysbench: None,
    },
    ParamSpec {
        name: "stop_on_error",
        kind: ParamKind::Bool,
        default: "off",
        unit: "",
        help: "end the run on the first socket error (ab without -r)",
        sysbench: None,
    },
    ParamSpec {
        name: "variable_length",
        kind: ParamKind::Bool,
        default: "off",
        unit: "",
        help: "responses may differ in length (ab -l): no length failures in the ab layout",
        sysbench: None,
    },
    ParamSpec {
        name: "send_buffer",
        kind: ParamKind::Size,
        default: "0",
        unit: "bytes",
        help: "SO_SNDBUF of each connection (0 = system default)",
        sysbench: None,
    },
    ParamSpec {
        name: "recv_buffer",
        kind: ParamKind::Size,
        default: "0",
        unit: "bytes",
        help: "SO_RCVBUF of each connection (0 = system default)",
        sysbench: None,
    },
    ParamSpec {
        name: "bind",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "local address (IP or host name) every connection is bound to before connecting \
               (ab -B); empty = the kernel's choice",
        sysbench: None,
    },
    ParamSpec {
        name: "proxy",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "HTTP proxy HOST:PORT: connections go there and request lines carry the \
               absolute URL (ab -X); http:// targets only (no CONNECT tunnels)",
        sysbench: None,
    },
    ParamSpec {
        name: "tls_verify",
        kind: ParamKind::Bool,
        default: "on",
        unit: "",
        help: "https: check the server's certificate against the compiled-in Mozilla roots \
               (off = accept any certificate, as ab and httperf do; --insecure)",
        sysbench: None,
    },
    ParamSpec {
        name: "tls_resume",
        kind: ParamKind::Bool,
        default: "on",
        unit: "",
        help: "https: resume TLS sessions (one session cache per thread); off = a full \
               handshake on every new connection",
        sysbench: None,
    },
    ParamSpec {
        name: "tls_version",
        kind: ParamKind::Choice(&["all", "1.2", "1.3"]),
        default: "all",
        unit: "",
        help: "https: TLS versions offered",
        sysbench: None,
    },
    ParamSpec {
        name: "tls_ciphers",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "https: cipher suites offered, OpenSSL or IANA names separated by ':' (empty = \
               rustls' defaults)",
        sysbench: None,
    },
    ParamSpec {
        name: "tls_server_name",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "https: name sent as SNI and checked in the certificate (empty = the URL's host)",
        sysbench: None,
    },
    ParamSpec {
        name: "tls_sni",
        kind: ParamKind::Bool,
        default: "on",
        unit: "",
        help: "https: send the server name (SNI) in the handshake (ab -I turns it off)",
        sysbench: None,
    },
    ParamSpec {
        name: "self_tls",
        kind: ParamKind::Bool,
        default: "off",
        unit: "",
        help: "url=self: the built-in server speaks HTTPS with a fresh self-signed certificate \
               (which the client trusts)",
        sysbench: None,
    },
    ParamSpec {
        name: "self_body",
        kind: ParamKind::Size,
        default: "4K",
        unit: "bytes",
        help: "url=self: body size of the built-in server's responses",
        sysbench: None,
    },
    ParamSpec {
        name: "self_threads",
        kind: ParamKind::Int { min: 1, max: 1024 },
        default: "1",
        unit: "threads",
        help: "url=self: event-loop threads of the built-in server",
        sysbench: None,
    },
];

/// Completed requests per second, the headline.
pub const REQUESTS_PER_S: FigureDef = FigureDef {
    name: "requests_per_s",
    label: "request rate",
    unit: "req/s",
    better: Better::Higher,
};
/// The 99th percentile of request latency.
pub const LATENCY_P99_NS: FigureDef = FigureDef {
    name: "latency_p99_ns",
    label: "99th percentile latency",
    unit: "ns",
    better: Better::Lower,
};

impl Workload for HttpLoad {
    fn id(&self) -> &'static str {
        "http.load"
    }
    fn category(&self) -> Category {
        Category::Http
    }
    fn summary(&self) -> &'static str {
        "HTTP/1.1 load: one event is one complete response (closed loop, open loop at --rate, \
         or httperf's connection rate)"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn caps(&self) -> Caps {
        Caps {
            needs_server: true,
            loop_worker: true,
            ..Caps::default()
        }
    }
    fn counters(&self) -> &'static [Counter] {
        &[
            Counter::Reads,
            Counter::Writes,
            Counter::Errors,
            Counter::Reconnects,
            Counter::BytesRead,
            Counter::BytesWritten,
        ]
    }
    fn figures(&self, r: &RunResult) -> Vec<Figure> {
        let mut f = vec![REQUESTS_PER_S.at(r.metrics.events_per_s)];
        if r.latency.count > 0 {
            f.push(figure::LATENCY_AVG_NS.at(r.latency.avg_ns as f64));
            if let Some(p) = r.percentile_ns(99.0) {
                f.push(LATENCY_P99_NS.at(p as f64));
            }
        }
        f
    }
    fn commands(&self) -> &'static [&'static str] {
        &["http", "ab", "httperf"]
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        setup(ctx, None, None)
    }
}

impl Workload for HttpLoadLogged {
    fn id(&self) -> &'static str {
        HttpLoad.id()
    }
    fn category(&self) -> Category {
        HttpLoad.category()
    }
    fn summary(&self) -> &'static str {
        HttpLoad.summary()
    }
    fn params(&self) -> &'static [ParamSpec] {
        HttpLoad.params()
    }
    fn caps(&self) -> Caps {
        HttpLoad.caps()
    }
    fn counters(&self) -> &'static [Counter] {
        HttpLoad.counters()
    }
    fn figures(&self, r: &RunResult) -> Vec<Figure> {
        HttpLoad.figures(r)
    }
    fn commands(&self) -> &'static [&'static str] {
        HttpLoad.commands()
    }
    fn small_params(&self) -> &'static [(&'static str, &'static str)] {
        HttpLoad.small_params()
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        if let Some(log) = &self.log {
            let need = RequestLog::bytes_needed(log.capacity(), ctx.threads);
            let avail = ctx.host.map_or(0, |h| h.memory.available_bytes);
            if avail > 0 && need > avail / 10 * 9 {
                return Err(WorkloadError::environment(format!(
                    "keeping a record of each of {} requests takes {} MiB, more than this \
                     host's available memory ({} MiB); ask for fewer requests",
                    log.capacity(),
                    need >> 20,
                    avail >> 20
                )));
            }
            log.prepare(ctx.threads)?;
        }
        setup(ctx, self.log.clone(), self.trace.clone())
    }
}

/// The server never answered: requests went out, not one response came back, and every
/// request that ended, ended at the timeout (the others were still waiting when the run
/// ended). Such a run measured nothing, whatever the timeout was.
fn never_answered(sent: u64, responses: u64, errors: u64, timeouts: u64) -> bool {
    sent > 0 && responses == 0 && errors == timeouts
}

/// `never_answered`, read from the result of an `http.load` run: the front-ends make such
/// a run a failed one (exit 1).
pub fn server_never_answered(r: &RunResult) -> bool {
    let fact = |n: &str| r.workload.facts.get(n).copied().unwrap_or(0.0) as u64;
    let timeouts = r
        .tables
        .iter()
        .find(|t| t.name == table::ERRORS)
        .and_then(|t| t.get(ErrKind::Timeout.name(), ERRORS_COLUMN))
        .unwrap_or(0.0) as u64;
    r.workload.id == HttpLoad.id()
        && never_answered(
            fact(fact::REQUESTS_SENT),
            fact(fact::RESPONSES),
            fact(fact::ERRORS),
            timeouts,
        )
}

/// The local address `text` names (an IP address or a host name; port 0), checked by
/// binding a socket to it. Errors say what is wrong and what to give instead.
pub fn bind_addr(text: &str) -> Result<SocketAddr, WorkloadError> {
    let t = text.trim();
    let bare = t
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(t);
    let a = if let Ok(ip) = bare.parse::<IpAddr>() {
        SocketAddr::new(ip, 0)
    } else if t.parse::<SocketAddr>().is_ok() {
        return Err(WorkloadError::usage(
            "give an address without a port (each connection needs a port of its own), \
             e.g. 127.0.0.2",
        ));
    } else if t.is_empty() || t.contains(['/', ' ', ':']) {
        return Err(WorkloadError::usage(
            "not an address: give an IP address of this host, e.g. 127.0.0.2",
        ));
    } else {
        (t, 0)
            .to_socket_addrs()
            .map_err(|e| WorkloadError::environment(format!("cannot resolve the name: {e}")))?
            .next()
            .ok_or_else(|| WorkloadError::environment("the name has no address"))?
    };
    sys::check_bind(&a).map_err(|e| {
        WorkloadError::environment(format!(
            "cannot bind to {}: {e}; give an address of this host (see `ip -brief address`)",
            a.ip()
        ))
    })?;
    Ok(a)
}

fn setup(
    ctx: &SetupCtx<'_>,
    log: Option<Arc<RequestLog>>,
    trace: Option<Arc<dyn engine::Trace>>,
) -> Result<Box<dyn Instance>, WorkloadError> {
    let p = ctx.params;
    let self_target = p.text("url").trim() == "self";
    let mut self_cert = None;
    let server = if self_target {
        let tls = if p.bool("self_tls") {
            let (id, _, _) = tls::self_signed(&[])?;
            self_cert = Some(id.certs[0].clone());
            Some(tls::server_config(id)?)
        } else {
            None
        };
        let cfg = ServeConfig {
            body_size: p.int("self_body") as usize,
            threads: p.int("self_threads") as usize,
            tls,
            ..ServeConfig::default()
        };
        let s =
            Server::start("127.0.0.1:0".parse().expect("static address"), cfg).map_err(|e| {
                WorkloadError::environment(format!(
                    "url=self: cannot start the built-in server: {e}"
                ))
            })?;
        Some(s)
    } else {
        None
    };
    let url_text = match &server {
        Some(s) if self_cert.is_some() => format!("https://{}/", s.addr()),
        Some(s) => format!("http://{}/", s.addr()),
        None => p.text("url").to_string(),
    };
    let url = url::Url::parse(&url_text).map_err(|e| e.map_message(|m| format!("url: {m}")))?;
    let bind = match p.text("bind").trim() {
        "" => None,
        b => Some(bind_addr(b).map_err(|e| e.map_message(|m| format!("bind '{b}': {m}")))?),
    };
    let proxy = match p.text("proxy").trim() {
        "" => None,
        t => Some(url::parse_proxy(t)?),
    };
    let addr = match &proxy {
        Some(_) if url.tls => {
            return Err(WorkloadError::usage(format!(
                "proxy: {url_text}: https:// through a proxy needs a CONNECT tunnel, which \
                 hostbench does not make; target the server directly, or use an http:// URL"
            )));
        }
        Some(px) => px
            .resolve_like(bind.as_ref())
            .map_err(|e| e.map_message(|m| format!("proxy: {m}")))?,
        None => url
            .resolve_like(bind.as_ref())
            .map_err(|e| e.map_message(|m| format!("url: {m}")))?,
    };
    let body = match p.text("body_file") {
        "" => Vec::new(),
        f => hostbench_core::input::read_bytes(
            std::path::Path::new(f),
            "body_file",
            hostbench_core::input::BODY_FILE_MAX,
        )
        .map_err(|e| WorkloadError::usage(e.to_string()))?,
    };
    let headers: Vec<String> = p
        .text("headers")
        .split('\n')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(String::from)
        .collect();
    let keep_alive = p.bool("keepalive");
    let method = p.text("method").trim().to_ascii_uppercase();
    let version = if p.text("http_version") == "1.0" {
        "HTTP/1.0"
    } else {
        "HTTP/1.1"
    };
    let ct = p.text("content_type");
    let request = url::build_request(&url::RequestSpec {
        method: &method,
        url: &url,
        version,
        headers: &headers,
        keep_alive,
        body: &body,
        content_type: (!ct.is_empty()).then_some(ct),
        user_agent: (p.text("default_headers") != "wrk")
            .then_some(concat!("hostbench/", env!("CARGO_PKG_VERSION"))),
        accept: p.text("default_headers") == "ab",
        via_proxy: proxy.is_some(),
    })?;
    if let Some(t) = &trace {
        t.request(&request);
    }
    let model = match p.text("model") {
        "connections" => Model::Connections(p.int("calls") as u32),
        _ => Model::Requests,
    };
    let threads = ctx.threads.max(1);
    let total = p.int("connections") as usize;
    let conns = (0..threads)
        .map(|t| match model {
            Model::Requests => total / threads + usize::from(t < total % threads),
            Model::Connections(_) => total.div_ceil(threads),
        })
        .collect();
    let timeout = p.float("timeout");
    if timeout <= 0.0 {
        return Err(WorkloadError::usage(
            "timeout must be more than 0 (e.g. timeout=10s)",
        ));
    }
    let tls = if url.tls {
        let versions = tls::Versions::parse(p.text("tls_version"))?;
        let config = tls::client_config(&tls::ClientOpts {
            verify: p.bool("tls_verify"),
            versions,
            ciphers: p.text("tls_ciphers").to_string(),
            extra_root: self_cert,
        })
        .map_err(|e| e.map_message(|m| format!("tls: {m}")))?;
        let mut config = config;
        config.enable_sni = p.bool("tls_sni");
        let name = match p.text("tls_server_name").trim() {
            "" => url.host.as_str(),
            n => n,
        };
        Some(engine::TlsCfg {
            config: Arc::new(config),
            server_name: tls::server_name(name)?,
            resume: p.bool("tls_resume"),
        })
    } else {
        None
    };
    let nofile = sys::raise_nofile();
    // Every connection is an open file; refused before the run, naming the limit, rather
    // than a run of "Too many open files" errors (`ab -c 30000` with 20,000 descriptors).
    // Some are hostbench's own: standard streams, the results store, epoll, the built-in
    // server's sockets.
    const OWN_FILES: u64 = 64;
    if model == Model::Requests && total as u64 + OWN_FILES > nofile {
        return Err(WorkloadError::environment(format!(
            "{total} connections need as many open files, and this process may open {nofile} \
             (RLIMIT_NOFILE; {OWN_FILES} are kept for hostbench's own): open at most {} \
             connections, or raise the limit (`ulimit -n` in the shell that starts hostbench, \
             /etc/security/limits.conf, or LimitNOFILE= for a systemd unit)",
            nofile.saturating_sub(OWN_FILES)
        )));
    }
    let cfg = EngineCfg {
        addr,
        bind,
        log,
        trace,
        request,
        head_request: method == "HEAD",
        conns,
        keep_alive,
        pipeline: if keep_alive {
            p.int("pipeline") as usize
        } else {
            1
        },
        model,
        timeout_ns: (timeout * 1e9) as u64,
        constant: p.text("schedule") == "constant",
        stop_on_error: p.bool("stop_on_error"),
        think_ns: (p.float("think") * 1e9) as u64,
        sessions: p.bool("sessions") && model != Model::Requests,
        sndbuf: p.int("send_buffer").clamp(0, i32::MAX as i64) as u32,
        rcvbuf: p.int("recv_buffer").clamp(0, i32::MAX as i64) as u32,
        tls,
    };
    // One TCP connect before the run, as wrk does (native command): a server that is down
    // is a clear setup error, not a run of refused connections. Not with a bound local
    // address (the test would come from another one) nor the built-in server.
    if p.bool("connect_check") && server.is_none() && cfg.bind.is_none() {
        std::net::TcpStream::connect_timeout(&cfg.addr, std::time::Duration::from_secs(5))
            .map_err(|e| {
                WorkloadError::environment(format!(
                    "cannot connect to {}{}: {e}; is the server up?",
                    cfg.addr,
                    if proxy.is_some() { " (the proxy)" } else { "" }
                ))
            })?;
    }
    Ok(Box::new(HttpInstance {
        cfg: Arc::new(cfg),
        stats: Arc::new(Mutex::new(Stats::default())),
        server,
        cpu0: sys::cpu_times(),
        nofile,
        requested_conns: total,
        target_port: url.port,
    }))
}

struct HttpInstance {
    cfg: Arc<EngineCfg>,
    stats: Arc<Mutex<Stats>>,
    server: Option<Server>,
    cpu0: (f64, f64),
    nofile: u64,
    requested_conns: usize,
    /// The URL's port (connections may go to a proxy's).
    target_port: u16,
}

impl HttpInstance {
    fn stats(&self) -> Stats {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

fn time_row(label: &str, r: &LatencyRec) -> Row {
    let some = r.count > 0;
    let v = |x: f64| some.then_some(x);
    Row {
        label: label.into(),
        values: vec![
            Some(r.count as f64),
            v(r.min_ns as f64),
            v(r.sum_ns as f64 / r.count.max(1) as f64),
            v(if some { r.stdev() } else { 0.0 }),
            v(r.percentile(50.0) as f64),
            v(r.max_ns as f64),
        ],
    }
}

impl Instance for HttpInstance {
    fn worker(&self, tid: usize, _rng: Rng) -> Result<Worker, WorkloadError> {
        Ok(Worker::Loop(Box::new(HttpWorker::new(
            self.cfg.clone(),
            tid,
            self.stats.clone(),
        ))))
    }

    fn abandoned(&self) -> u64 {
        self.stats().unfinished
    }

    fn local_server_ports(&self) -> Vec<u16> {
        // The server connections go to (or the proxy), when it is on loopback and not the
        // built-in one (whose CPU time is this process's).
        if self.server.is_none() && self.cfg.addr.ip().is_loopback() {
            vec![self.cfg.addr.port()]
        } else {
            Vec::new()
        }
    }

    fn facts(&self) -> Vec<(String, f64)> {
        let s = self.stats();
        let (u0, s0) = self.cpu0;
        let (u1, s1) = sys::cpu_times();
        let class = |c: usize| s.status[c * 100..c * 100 + 100].iter().sum::<u64>() as f64;
        let non_2xx: u64 = s.status.iter().sum::<u64>() - class(2) as u64;
        let mut f: Vec<(String, f64)> = vec![
            (fact::RESPONSES.into(), s.responses as f64),
            (fact::REQUESTS_SENT.into(), s.requests_sent as f64),
            (fact::REQUEST_BYTES.into(), self.cfg.request.len() as f64),
            (fact::CONNECTIONS_OPENED.into(), s.conns_opened as f64),
            (
                fact::CONNECTIONS_WITH_REPLY.into(),
                s.conns_with_reply as f64,
            ),
            (
                fact::REPLIES_ON_THOSE_CONNECTIONS.into(),
                s.replies_on_conns as f64,
            ),
            (fact::MAX_OPEN_CONNECTIONS.into(), s.max_open as f64),
            (
                fact::CONNECTIONS_REQUESTED.into(),
                self.requested_conns as f64,
            ),
            (
                fact::KEEPALIVE_RESPONSES.into(),
                s.keepalive_responses as f64,
            ),
            (
                fact::KEEPALIVE_ALLOWED_RESPONSES.into(),
                s.keepalive_allowed as f64,
            ),
            (fact::HEADER_BYTES.into(), s.header_bytes as f64),
            (fact::BODY_BYTES.into(), s.body_bytes as f64),
            (fact::FOOTER_BYTES.into(), s.footer_bytes as f64),
            (fact::LENGTH_FAILURES.into(), s.length_mismatch as f64),
            (fact::NON_2XX_RESPONSES.into(), non_2xx as f64),
            (fact::ERRORS.into(), s.error_total() as f64),
            (fact::UNFINISHED_REQUESTS.into(), s.unfinished as f64),
            (fact::LATE_SENDS.into(), s.late_sends as f64),
            (fact::MAX_SCHEDULE_LAG_NS.into(), s.max_lag_ns as f64),
            (fact::RETRIED_REQUESTS.into(), s.retries as f64),
            (fact::MAX_CONNECT_BURST.into(), s.max_burst as f64),
            (fact::CPU_USER_S.into(), u1 - u0),
            (fact::CPU_SYSTEM_S.into(), s1 - s0),
            (fact::OPEN_FILE_LIMIT.into(), self.nofile as f64),
            (fact::TARGET_PORT.into(), self.target_port as f64),
            (
                fact::SELF_SERVER.into(),
                f64::from(u8::from(self.server.is_some())),
            ),
        ];
        if self.cfg.tls.is_some() {
            f.push((fact::TLS.into(), 1.0));
            f.push((fact::TLS_FULL_HANDSHAKES.into(), s.tls_full as f64));
            f.push((fact::TLS_RESUMED_HANDSHAKES.into(), s.tls_resumed as f64));
        }
        if let Some(d) = s.doc_len {
            f.push((fact::DOCUMENT_LENGTH.into(), d as f64));
        }
        for c in 1..=5 {
            f.push((fact::status_class(c), class(c)));
        }
        if self.cfg.sessions {
            let ss = &s.sessions;
            let avg = |sum: u64, n: u64| {
                if n > 0 {
                    sum as f64 / n as f64 / 1e9
                } else {
                    0.0
                }
            };
            f.push((fact::SESSIONS_OK.into(), ss.ok as f64));
            f.push((fact::SESSIONS_FAILED.into(), ss.failed as f64));
            f.push((fact::SESSION_LIFE_AVG_S.into(), avg(ss.life_ok_ns, ss.ok)));
            f.push((
                fact::SESSION_FAILTIME_AVG_S.into(),
                avg(ss.life_failed_ns, ss.failed),
            ));
        }
        f
    }

    fn histograms(&self) -> Vec<(String, String)> {
        let s = self.stats();
        let mut phases = vec![
            (times::CONNECT, &s.connect_per_req),
            (times::CONNECT_NEW, &s.connect),
            (times::WAITING, &s.waiting),
            (times::PROCESSING, &s.processing),
            (times::SERVICE, &s.service),
            (times::TRANSFER, &s.transfer),
            (times::CONNECTION_LIFE, &s.conn_life),
        ];
        if self.cfg.tls.is_some() {
            phases.push((times::TCP_CONNECT, &s.tcp_connect));
            phases.push((times::TLS_HANDSHAKE, &s.tls_handshake));
        }
        phases
            .into_iter()
            .filter(|(_, r)| r.count > 0)
            .map(|(name, r)| {
                (
                    format!("{}/{name}", table::TIMES),
                    hostbench_core::result::encode_histogram(&r.histogram()),
                )
            })
            .collect()
    }

    fn tables(&self) -> Vec<Table> {
        let s = self.stats();
        let times = Table {
            name: table::TIMES.into(),
            title: "phases of each request (ab's Connection Times, httperf's connect, \
                    response and transfer times)"
                .into(),
            columns: times::COLUMNS
                .iter()
                .map(|c| Column {
                    name: c.to_string(),
                    unit: if *c == times::COUNT { "" } else { "ns" }.into(),
                })
                .collect(),
            rows: vec![
                time_row(times::CONNECT, &s.connect_per_req),
                time_row(times::CONNECT_NEW, &s.connect),
                time_row(times::WAITING, &s.waiting),
                time_row(times::PROCESSING, &s.processing),
                time_row(times::SERVICE, &s.service),
                time_row(times::TRANSFER, &s.transfer),
                time_row(times::CONNECTION_LIFE, &s.conn_life),
            ],
        };
        let mut times = times;
        if self.cfg.tls.is_some() {
            times
                .rows
                .insert(2, time_row(times::TCP_CONNECT, &s.tcp_connect));
            times
                .rows
                .insert(3, time_row(times::TLS_HANDSHAKE, &s.tls_handshake));
        }
        let status = Table {
            name: table::STATUS.into(),
            title: "responses by status code".into(),
            columns: vec![Column {
                name: "responses".into(),
                unit: String::new(),
            }],
            rows: s
                .status
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(code, n)| Row {
                    label: if code == 0 {
                        "other".into()
                    } else {
                        code.to_string()
                    },
                    values: vec![Some(*n as f64)],
                })
                .collect(),
        };
        let errors = Table {
            name: table::ERRORS.into(),
            title: "failed requests by kind".into(),
            columns: vec![Column {
                name: ERRORS_COLUMN.into(),
                unit: String::new(),
            }],
            rows: ErrKind::ALL
                .iter()
                .map(|k| Row {
                    label: k.name().into(),
                    values: vec![Some(s.errors[*k as usize] as f64)],
                })
                .collect(),
        };
        let mut t = vec![times, status, errors];
        if self.cfg.sessions {
            // Sessions by calls answered (0..=calls), and successful sessions per 5 s period
            // (httperf's session-rate samples; the last, partial period included).
            let calls = match self.cfg.model {
                Model::Connections(c) => c as usize,
                Model::Requests => 0,
            };
            let ss = &s.sessions;
            let mut lengths = ss.lengths.clone();
            lengths.resize(lengths.len().max(calls + 1), 0);
            let count = |name: &str| Column {
                name: name.into(),
                unit: String::new(),
            };
            t.push(Table {
                name: table::SESSION_LENGTHS.into(),
                title: "sessions by calls answered".into(),
                columns: vec![count("sessions")],
                rows: lengths
                    .iter()
                    .enumerate()
                    .map(|(k, n)| Row {
                        label: k.to_string(),
                        values: vec![Some(*n as f64)],
                    })
                    .collect(),
            });
            t.push(Table {
                name: table::SESSIONS_PER_5S.into(),
                title: "successful sessions ended in each 5-second period of the run".into(),
                columns: vec![count("sessions")],
                rows: ss
                    .per_5s
                    .iter()
                    .enumerate()
                    .map(|(k, n)| Row {
                        label: format!("{}", k * 5),
                        values: vec![Some(*n as f64)],
                    })
                    .collect(),
            });
        }
        if let (Some(c), Some(i)) = (&self.cfg.tls, &s.tls_info) {
            // Text facts as row labels "kind:value" (the result's facts are numbers).
            let sni = match &c.server_name {
                rustls::pki_types::ServerName::DnsName(n) if c.config.enable_sni => {
                    Some(n.as_ref().to_string())
                }
                _ => None,
            };
            let mut rows = vec![
                Row {
                    label: format!("{}:{}", tls_kind::PROTOCOL, i.version),
                    values: vec![None],
                },
                Row {
                    label: format!("{}:{}", tls_kind::CIPHER, i.suite),
                    values: vec![Some(i.suite_bits as f64)],
                },
                Row {
                    label: tls_kind::CERTIFICATE_KEY.into(),
                    values: vec![(i.cert_bits > 0).then_some(i.cert_bits as f64)],
                },
            ];
            if let Some((g, bits)) = i.group {
                rows.push(Row {
                    label: format!("{}:{g}", tls_kind::KEY_EXCHANGE),
                    values: vec![Some(bits as f64)],
                });
            }
            if let Some(n) = sni {
                rows.push(Row {
                    label: format!("{}:{n}", tls_kind::SERVER_NAME),
                    values: vec![None],
                });
            }
            t.push(Table {
                name: table::TLS.into(),
                title: "the first TLS handshake: protocol, cipher suite (OpenSSL's name), \
                        certificate key, key exchange, SNI (row label kind:value)"
                    .into(),
                columns: vec![Column {
                    name: "bits".into(),
                    unit: String::new(),
                }],
                rows,
            });
        }
        if let Some(server) = &s.server {
            t.push(Table {
                name: table::SERVER.into(),
                title: "the Server header of the first response (row label), and the port".into(),
                columns: vec![Column {
                    name: "port".into(),
                    unit: String::new(),
                }],
                rows: vec![Row {
                    label: server.clone(),
                    values: vec![Some(self.cfg.addr.port() as f64)],
                }],
            });
        }
        t
    }

    fn warnings(&self) -> Vec<Warning> {
        let s = self.stats();
        let mut w = Vec::new();
        let total = s.error_total();
        let timeouts = s.errors[ErrKind::Timeout as usize];
        if never_answered(s.requests_sent, s.responses, total, timeouts) {
            let mut how = Vec::new();
            if timeouts > 0 {
                how.push(format!(
                    "{timeouts} timed out after {} s",
                    self.cfg.timeout_ns as f64 / 1e9
                ));
            }
            if s.unfinished > 0 {
                how.push(format!("{} still waiting when the run ended", s.unfinished));
            }
            w.push(Warning {
                kind: WarningKind::Errors,
                message: format!(
                    "no response arrived: {} request(s) went to {} and none was answered ({}). \
                     The server accepted the connections but did not answer: check that this \
                     port serves HTTP and that the server is not stalled (e.g. `curl -v URL`).",
                    s.requests_sent,
                    self.cfg.addr,
                    how.join(", ")
                ),
            });
        } else if total > 0 {
            let kinds: Vec<String> = ErrKind::ALL
                .iter()
                .filter(|k| s.errors[**k as usize] > 0)
                .map(|k| format!("{} {}", k.name().replace('_', " "), s.errors[*k as usize]))
                .collect();
            let covered = if s.responses == 0 {
                "none completed".to_string()
            } else {
                format!(
                    "the figures cover the {} responses that completed",
                    s.responses
                )
            };
            w.push(Warning {
                kind: WarningKind::Errors,
                message: format!(
                    "{total} request(s) failed ({}); {covered}. Check that the server at {} is \
                     up and sized for this load.",
                    kinds.join(", "),
                    self.cfg.addr
                ),
            });
        }
        let answered: u64 = s.status.iter().sum();
        let ok_2xx: u64 = s.status[200..300].iter().sum();
        if answered > ok_2xx {
            // The most frequent non-2xx codes, e.g. "404 x120, 500 x3".
            let mut codes: Vec<(usize, u64)> = s
                .status
                .iter()
                .enumerate()
                .filter(|&(c, &n)| n > 0 && !(200..300).contains(&c))
                .map(|(c, &n)| (c, n))
                .collect();
            codes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let list: Vec<String> = codes
                .iter()
                .take(3)
                .map(|&(c, n)| {
                    let c = if c == 0 {
                        "other".to_string()
                    } else {
                        c.to_string()
                    };
                    format!("{c} x{n}")
                })
                .collect();
            w.push(Warning {
                kind: WarningKind::Errors,
                message: format!(
                    "{} of {answered} responses had a status outside 2xx ({}): the server \
                     did not serve the page (an error or a redirect), and the rates count them \
                     as completed requests (as ab and wrk do). Check the URL, method and \
                     headers.",
                    answered - ok_2xx,
                    list.join(", ")
                ),
            });
        }
        if let Some(e) = &s.tls_error {
            let hint = if s.errors[ErrKind::TlsCertificate as usize] > 0 {
                " The certificate is checked against the Mozilla roots built into hostbench; \
                 for a self-signed target pass -k/--insecure (tls_verify=off)."
            } else {
                " Check that the port speaks TLS and shares a version and cipher suite with \
                 rustls (TLS 1.2/1.3, AEAD suites)."
            };
            w.push(Warning {
                kind: WarningKind::Errors,
                message: format!("TLS failed: {e}.{hint}"),
            });
        }
        if self.server.is_some() {
            w.push(Warning {
                kind: WarningKind::Contention,
                message: "url=self: the built-in server ran in this process and shared the \
                          CPUs with the load generator; the figures describe both together."
                    .into(),
            });
        }
        w
    }
}

impl Drop for HttpInstance {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            s.stop();
        }
    }
}
