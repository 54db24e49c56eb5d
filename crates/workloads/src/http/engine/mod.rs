//! The HTTP/1.1 load engine: one loop worker per thread, each owning an edge-triggered
//! epoll instance and its connections.
//!
//! Per keep-alive request the engine makes one `send` and (usually) one `read`, plus an
//! amortised `epoll_wait`: sockets are registered once for IN|OUT|RDHUP edges, so nothing is
//! toggled per request (wrk toggles EPOLLOUT with two `epoll_ctl` calls). A read that returns
//! less than the space offered drained the socket, so no extra read is needed to see EAGAIN.
//! Request bytes are built once; responses are parsed in place in a per-connection buffer
//! that is reused, so nothing is allocated per request.
//!
//! Load models (chosen by [`Model`] and the runner's rate):
//! - closed loop: every connection sends its next request when the previous response ends;
//! - open loop (`--rate`): requests are due on the runner's schedule; a due request takes an
//!   idle connection from the pool and its latency runs from the *intended* start, so a
//!   stalled server shows in the percentiles (no coordinated omission);
//! - connection rate (httperf): each operation is a new connection carrying `calls`
//!   requests one after the other, opened on the schedule.
//!
//! Time: workers never decide when the run ends; they ask [`RunControl`]. At the time limit
//! requests in flight are abandoned and counted as unfinished (so a silent server cannot hold
//! the run); with an event limit they complete, each bounded by the response timeout.

use super::parse::{Body, ParseError, parse_head};
use super::reqlog::{LogWriter, RequestLog, Sample};
use super::sys::{self, Epoll};
use super::tls::{self, FdIo};
use hostbench_core::clock::Clock;
use hostbench_core::recorder::Counter;
use hostbench_core::runner::RunControl;
use hostbench_core::workload::{LoopWorker, WorkloadError};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};
use std::io::{ErrorKind as IoKind, Read, Write};
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex};

mod stats;
#[cfg(test)]
mod tests;

pub use stats::{ErrKind, SessionStats, Stats, TlsInfo};

/// Most requests sent back to back on one connection.
pub const MAX_PIPELINE: usize = 16;
const BUF: usize = 16 * 1024;

/// What one operation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// One request (on a pooled connection).
    Requests,
    /// A new connection carrying this many requests, then closed (httperf).
    Connections(u32),
}

/// Everything the workers share, fixed for the run.
#[derive(Debug, Clone)]
pub struct EngineCfg {
    /// Address connections go to: the target's, or the proxy's.
    pub addr: SocketAddr,
    /// Local address each connection is bound to before connecting (None: the kernel's
    /// choice).
    pub bind: Option<SocketAddr>,
    /// Per-request records (ab's `-g`), when asked for.
    pub log: Option<Arc<RequestLog>>,
    /// Sees every response head as it arrives (ab's `-v 2` and up), when asked for.
    pub trace: Option<Arc<dyn Trace>>,
    /// One request, pre-built.
    pub request: Vec<u8>,
    /// The method is HEAD (responses have no body).
    pub head_request: bool,
    /// Connections per thread (closed and open loop), or the cap on concurrent
    /// connections per thread in the connections model (0 = none).
    pub conns: Vec<usize>,
    /// Reuse connections.
    pub keep_alive: bool,
    /// Requests written back to back per connection (closed loop, keep-alive).
    pub pipeline: usize,
    /// Operation.
    pub model: Model,
    /// Connect plus response timeout, ns.
    pub timeout_ns: u64,
    /// Constant open-loop pacing rather than Poisson.
    pub constant: bool,
    /// Fail the run on the first socket error (ab without `-r`).
    pub stop_on_error: bool,
    /// Connections model: pause between the calls of one connection (httperf's session
    /// think time), ns.
    pub think_ns: u64,
    /// Connections model: account each operation as an httperf session (`--wsess`).
    pub sessions: bool,
    /// SO_SNDBUF / SO_RCVBUF (0 = system default).
    pub sndbuf: u32,
    /// See `sndbuf`.
    pub rcvbuf: u32,
    /// HTTPS: the client config and server name (None = plain HTTP).
    pub tls: Option<TlsCfg>,
}

/// What a front-end sees of the traffic when it prints it (ab's `-v 2` and up). Called on
/// the event-loop threads, so implementations print each call's text in one write.
pub trait Trace: Send + Sync + std::fmt::Debug {
    /// The request as built, once, before the run.
    fn request(&self, request: &[u8]);
    /// A final (not 1xx) response's head has arrived: `received` is what the connection's
    /// buffer holds of this response at that moment (its head, then as much of its body as
    /// came with it; at most the 16 KiB buffer, as a longer head fails the response), and
    /// `status` its status code.
    fn response(&self, received: &[u8], status: u16);
}

/// What an HTTPS run shares.
#[derive(Debug, Clone)]
pub struct TlsCfg {
    /// Built once per run; each thread adds its own session cache.
    pub config: Arc<ClientConfig>,
    /// SNI and the name the certificate must carry.
    pub server_name: ServerName<'static>,
    /// Resume sessions (a cache shared by the thread's connections).
    pub resume: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// No request in flight (the descriptor may be open for reuse).
    Idle,
    Connecting,
    /// TCP is up; the TLS handshake runs.
    Handshaking,
    Writing,
    Reading,
    /// Between two calls of a connection (think time); `deadline` is the next call's start.
    Thinking,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Head,
    Body(Body),
}

struct Slot {
    fd: RawFd,
    /// The TLS session of an HTTPS connection (None: plain).
    tls: Option<Box<ClientConnection>>,
    /// TCP connection established (HTTPS: the handshake starts).
    t_tcp: u64,
    generation: u32,
    st: St,
    buf: Box<[u8]>,
    len: usize,
    wrote: usize,
    wlen: usize,
    intended: [u64; MAX_PIPELINE],
    batch: usize,
    answered: usize,
    /// Actual start of the operation: connect call, or first write on a reused connection.
    t_start: u64,
    t_conn: u64,
    t_written: u64,
    t_first: u64,
    t_open: u64,
    reused: bool,
    retried: bool,
    /// The server closed its side (an event said so): this connection carries no more
    /// requests.
    peer_closed: bool,
    phase: Phase,
    ka: bool,
    content: u64,
    footer: u64,
    deadline: u64,
    calls_left: u32,
    replies: u32,
    /// Start of this slot's session, and its calls answered (connections model).
    t_sess: u64,
    sess_replies: u32,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            fd: -1,
            tls: None,
            t_tcp: 0,
            generation: 0,
            st: St::Idle,
            buf: vec![0u8; BUF].into_boxed_slice(),
            len: 0,
            wrote: 0,
            wlen: 0,
            intended: [0; MAX_PIPELINE],
            batch: 0,
            answered: 0,
            t_start: 0,
            t_conn: 0,
            t_written: 0,
            t_first: 0,
            t_open: 0,
            reused: false,
            retried: false,
            peer_closed: false,
            phase: Phase::Head,
            ka: false,
            content: 0,
            footer: 0,
            deadline: 0,
            calls_left: 0,
            replies: 0,
            t_sess: 0,
            sess_replies: 0,
        }
    }
}

/// One thread's engine.
pub struct HttpWorker {
    cfg: Arc<EngineCfg>,
    /// The request repeated `pipeline` times.
    wbuf: Vec<u8>,
    req_len: usize,
    tid: usize,
    sink: Arc<Mutex<Stats>>,
}

impl HttpWorker {
    /// The worker of thread `tid`; its stats go to `sink` when it ends.
    pub fn new(cfg: Arc<EngineCfg>, tid: usize, sink: Arc<Mutex<Stats>>) -> HttpWorker {
        let req_len = cfg.request.len();
        let wbuf = cfg.request.repeat(cfg.pipeline.clamp(1, MAX_PIPELINE));
        HttpWorker {
            cfg,
            wbuf,
            req_len,
            tid,
            sink,
        }
    }
}

impl LoopWorker for HttpWorker {
    fn run(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        let conns = self.cfg.conns.get(self.tid).copied().unwrap_or(0);
        if conns == 0 && self.cfg.model == Model::Requests {
            return Ok(());
        }
        let ep =
            Epoll::new().map_err(|e| WorkloadError::environment(format!("epoll_create1: {e}")))?;
        // Each thread's connections share one session cache (resumption on), or none.
        let tls = self.cfg.tls.as_ref().map(|t| {
            let mut c = (*t.config).clone();
            c.resumption = if t.resume {
                rustls::client::Resumption::in_memory_sessions(1024)
            } else {
                rustls::client::Resumption::disabled()
            };
            (Arc::new(c), t.server_name.clone())
        });
        let cfg: &EngineCfg = &self.cfg;
        let mut eng = Engine {
            tls,
            log: cfg.log.as_deref().map(|l| LogWriter::new(l, ctl.clock())),
            cfg,
            wbuf: &self.wbuf,
            req_len: self.req_len,
            ep,
            slots: Vec::new(),
            idle: Vec::new(),
            stats: Stats::default(),
            open: 0,
            in_flight: 0,
            generation: 0,
            fatal: None,
            t0: ctl.clock().now(),
            exhausted: false,
            pending: None,
            ticks_1ms: ctl.clock().from_ns(1_000_000),
            clock: ctl.clock(),
            timer: sys::Timer::new().ok(),
            timeout: ctl.clock().from_ns(self.cfg.timeout_ns),
            think: ctl.clock().from_ns(self.cfg.think_ns),
            cap: conns,
        };
        let r = eng.run(ctl);
        if let Ok(mut s) = self.sink.lock() {
            s.merge(&eng.stats);
        }
        r
    }
}

struct Engine<'a> {
    /// HTTPS: this thread's client config and the server name.
    tls: Option<(Arc<ClientConfig>, ServerName<'static>)>,
    /// This thread's end of the per-request records, when they are kept.
    log: Option<LogWriter<'a>>,
    cfg: &'a EngineCfg,
    wbuf: &'a [u8],
    req_len: usize,
    ep: Epoll,
    slots: Vec<Slot>,
    /// Slots without a request in flight (closed and open loop: the pool; connections
    /// model: free slots).
    idle: Vec<usize>,
    stats: Stats,
    open: u64,
    in_flight: u64,
    generation: u32,
    fatal: Option<String>,
    /// Start of this thread's run (session rate samples).
    t0: u64,
    exhausted: bool,
    /// An open-loop operation claimed but not yet started (its intended start).
    pending: Option<u64>,
    ticks_1ms: u64,
    clock: Clock,
    /// Wakes the loop for an open-loop arrival less than 2 ms away (epoll_wait counts in
    /// whole milliseconds).
    timer: Option<sys::Timer>,
    timeout: u64,
    think: u64,
    cap: usize,
}

const TIMER: u64 = u64::MAX;

impl Engine<'_> {
    fn run(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        if self.cfg.constant {
            ctl.constant_schedule();
        }
        let open_loop = ctl.open_loop();
        if self.cfg.model == Model::Requests {
            for i in 0..self.cap {
                self.slots.push(Slot::new());
                self.idle.push(self.cap - 1 - i);
            }
        }
        let mut evs = sys::events(1024);
        let clock = ctl.clock();
        if let Some(t) = &self.timer {
            let _ = self.ep.add(t.fd(), sys::IN, TIMER);
        }
        let mut next_sweep = clock.now() + 10 * self.ticks_1ms;
        loop {
            let now = clock.now();
            if ctl.should_stop(now) {
                break;
            }
            self.issue(ctl, now, open_loop);
            if self.fatal.is_some() {
                break;
            }
            if self.exhausted && self.in_flight == 0 {
                break;
            }
            // Sleep until the next due operation (open loop), at most 10 ms so the time
            // limit and timeouts are seen promptly.
            let mut wait_ms = 10;
            if let Some(due) = self.pending
                && self.has_free_slot()
            {
                let now = clock.now();
                let left = clock.to_ns(due.saturating_sub(now));
                wait_ms = if left == 0 {
                    0
                } else if left < 2_000_000 {
                    match &self.timer {
                        Some(t) if t.arm(left) => 10,
                        _ => 0,
                    }
                } else {
                    (left / 1_000_000 - 1).min(10) as i32
                };
            }
            let n = self.ep.wait(&mut evs, wait_ms);
            for ev in &evs[..n] {
                let (token, bits) = (ev.u64, ev.events);
                if token == TIMER {
                    if let Some(t) = &self.timer {
                        t.clear();
                    }
                    continue;
                }
                self.ready(ctl, token, bits);
                if self.fatal.is_some() {
                    break;
                }
            }
            if self.fatal.is_some() {
                break;
            }
            let now = clock.now();
            if now >= next_sweep {
                next_sweep = now + self.ticks_1ms * if self.think > 0 { 1 } else { 10 };
                self.sweep(ctl, now);
            }
        }
        // Abandon what is in flight.
        for i in 0..self.slots.len() {
            if !matches!(self.slots[i].st, St::Idle | St::Thinking) {
                let s = &self.slots[i];
                self.stats.unfinished += s.batch.saturating_sub(s.answered) as u64;
            }
            if self.slots[i].fd >= 0 {
                self.close_fd(i);
            }
        }
        match self.fatal.take() {
            Some(m) => Err(WorkloadError::failed(m)),
            None => Ok(()),
        }
    }

    fn has_free_slot(&self) -> bool {
        match self.cfg.model {
            Model::Requests => !self.idle.is_empty(),
            Model::Connections(_) => self.cap == 0 || (self.in_flight as usize) < self.cap,
        }
    }

    /// Starts every operation that is due and has a connection.
    fn issue(&mut self, ctl: &mut RunControl<'_>, now: u64, open_loop: bool) {
        // Bounded, so failing connects (a refused port) cannot keep us from the clock.
        let mut budget = self.slots.len().max(64);
        let mut burst = 0;
        while !self.exhausted && self.has_free_slot() && self.fatal.is_none() && budget > 0 {
            budget -= 1;
            let intended = match self.pending.take() {
                Some(t) => t,
                None => match ctl.next_op(now) {
                    Some(t) => t,
                    None => {
                        self.exhausted = true;
                        return;
                    }
                },
            };
            if open_loop && intended > now {
                self.pending = Some(intended);
                return;
            }
            // Connections (or requests) started back to back in this pass: httperf's
            // "maximum connect burst length", 1 when they go one after another.
            burst += 1;
            self.stats.max_burst = self.stats.max_burst.max(burst);
            if open_loop {
                let lag = ctl.clock().to_ns(now - intended);
                if lag > 1_000_000 {
                    self.stats.late_sends += 1;
                }
                self.stats.max_lag_ns = self.stats.max_lag_ns.max(lag);
            }
            let idx = match self.cfg.model {
                Model::Requests => self.idle.pop().expect("checked by has_free_slot"),
                Model::Connections(calls) => {
                    let i = self.idle.pop().unwrap_or_else(|| {
                        self.slots.push(Slot::new());
                        self.slots.len() - 1
                    });
                    let s = &mut self.slots[i];
                    s.calls_left = calls;
                    s.replies = 0;
                    s.t_sess = now;
                    s.sess_replies = 0;
                    i
                }
            };
            let mut batch = [intended; MAX_PIPELINE];
            let n = if self.cfg.model == Model::Requests && !open_loop {
                self.claim_batch(ctl, now, &mut batch)
            } else {
                1
            };
            self.start(ctl, idx, &batch[..n]);
        }
    }

    /// Closed-loop pipelining: claims the rest of a batch whose first request is
    /// `batch[0]`; returns the batch size.
    fn claim_batch(
        &mut self,
        ctl: &mut RunControl<'_>,
        now: u64,
        batch: &mut [u64; MAX_PIPELINE],
    ) -> usize {
        let mut n = 1;
        if !self.cfg.keep_alive {
            return n;
        }
        while n < self.cfg.pipeline {
            match ctl.next_op(now) {
                Some(t) => {
                    batch[n] = t;
                    n += 1;
                }
                None => {
                    self.exhausted = true;
                    break;
                }
            }
        }
        n
    }

    /// Starts an operation on slot `idx` (a batch of pipelined requests, usually one):
    /// reuses its connection or opens one.
    fn start(&mut self, ctl: &mut RunControl<'_>, idx: usize, intended: &[u64]) {
        let now = ctl.now();
        self.in_flight += 1;
        let timeout = self.timeout;
        let batch = intended.len();
        let s = &mut self.slots[idx];
        s.intended[..batch].copy_from_slice(intended);
        s.batch = batch;
        s.answered = 0;
        s.wrote = 0;
        s.wlen = self.req_len * batch;
        s.t_start = now;
        s.t_first = 0;
        s.retried = false;
        s.phase = Phase::Head;
        s.content = 0;
        s.footer = 0;
        s.deadline = now.saturating_add(timeout);
        if s.fd >= 0 {
            s.reused = true;
            s.t_conn = now;
            s.st = St::Writing;
            self.write(ctl, idx);
        } else {
            self.connect(ctl, idx);
        }
    }

    fn connect(&mut self, ctl: &mut RunControl<'_>, idx: usize) {
        let now = ctl.now();
        match sys::connect(
            &self.cfg.addr,
            self.cfg.bind.as_ref(),
            self.cfg.sndbuf,
            self.cfg.rcvbuf,
        ) {
            Ok((fd, done)) => {
                self.generation = self.generation.wrapping_add(1);
                let token = idx as u64 | (self.generation as u64) << 32;
                if let Err(e) = self
                    .ep
                    .add(fd, sys::IN | sys::OUT | sys::ET | sys::RDHUP, token)
                {
                    sys::close(fd);
                    let errno = e.raw_os_error().unwrap_or(libc::EIO);
                    self.fail(
                        ctl,
                        idx,
                        ErrKind::from_errno(errno),
                        &format!("epoll_ctl: {e}"),
                    );
                    return;
                }
                self.open += 1;
                self.stats.max_open = self.stats.max_open.max(self.open);
                self.stats.conns_opened += 1;
                ctl.counters().add(Counter::Reconnects, 1);
                let s = &mut self.slots[idx];
                s.fd = fd;
                s.generation = self.generation;
                s.reused = false;
                s.peer_closed = false;
                s.len = 0;
                s.t_open = now;
                s.replies = 0;
                if done {
                    self.tcp_connected(ctl, idx);
                } else {
                    s.st = St::Connecting;
                }
            }
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.fail(
                    ctl,
                    idx,
                    ErrKind::from_errno(errno),
                    &format!("connect: {e}"),
                );
            }
        }
    }

    /// TCP is up: plain connections are ready; HTTPS ones start their handshake.
    fn tcp_connected(&mut self, ctl: &mut RunControl<'_>, idx: usize) {
        let Some((config, name)) = &self.tls else {
            self.connected(ctl, idx);
            return;
        };
        let now = ctl.now();
        let s = &mut self.slots[idx];
        s.t_tcp = now;
        self.stats
            .tcp_connect
            .record(ctl.clock().to_ns(now - s.t_start));
        match ClientConnection::new(config.clone(), name.clone()) {
            Ok(c) => s.tls = Some(Box::new(c)),
            Err(e) => {
                let kind = tls_kind(&e);
                self.fail(ctl, idx, kind, &format!("TLS: {e}"));
                return;
            }
        }
        s.st = St::Handshaking;
        self.handshake(ctl, idx);
    }

    /// Drives the TLS handshake as far as the socket allows.
    fn handshake(&mut self, ctl: &mut RunControl<'_>, idx: usize) {
        loop {
            let s = &mut self.slots[idx];
            let Some(t) = s.tls.as_mut() else { return };
            let fd = s.fd;
            if let Err(e) = tls::flush(t, fd) {
                self.io_error(ctl, idx, e, "TLS handshake: send");
                return;
            }
            if !t.is_handshaking() {
                break;
            }
            let mut io = FdIo { fd, short: false };
            match t.read_tls(&mut io) {
                Ok(0) => {
                    self.fail(
                        ctl,
                        idx,
                        ErrKind::Tls,
                        "TLS handshake: the server closed the connection (does it speak TLS on this port?)",
                    );
                    return;
                }
                Ok(_) => {
                    if let Err(e) = t.process_new_packets() {
                        // Tell the server why (the alert is queued), then give up.
                        let _ = tls::flush(t, fd);
                        self.fail(ctl, idx, tls_kind(&e), &format!("TLS handshake: {e}"));
                        return;
                    }
                }
                Err(e) if e.kind() == IoKind::WouldBlock => {
                    if !t.wants_write() {
                        return;
                    }
                }
                Err(e) => {
                    let errno = e.raw_os_error().unwrap_or(libc::EIO);
                    self.io_error(ctl, idx, errno, "TLS handshake: recv");
                    return;
                }
            }
        }
        let s = &mut self.slots[idx];
        if let Some(t) = s.tls.as_ref() {
            match t.handshake_kind() {
                Some(rustls::HandshakeKind::Resumed) => self.stats.tls_resumed += 1,
                _ => self.stats.tls_full += 1,
            }
            if self.stats.tls_info.is_none()
                && let Some(suite) = t.negotiated_cipher_suite()
            {
                self.stats.tls_info = Some(TlsInfo {
                    version: t.protocol_version().map_or("unknown", tls::version_name),
                    suite: tls::openssl_name(suite),
                    suite_bits: tls::cipher_bits(suite),
                    cert_bits: t
                        .peer_certificates()
                        .and_then(|c| c.first())
                        .map_or(0, |c| tls::public_key_bits(c)),
                    group: t
                        .negotiated_key_exchange_group()
                        .map(|g| tls::group_name(g.name())),
                });
            }
        }
        self.connected(ctl, idx);
    }

    /// Reads an HTTPS connection: records in, plaintext through the parser.
    fn read_tls(&mut self, ctl: &mut RunControl<'_>, idx: usize, closing: bool) {
        loop {
            let s = &mut self.slots[idx];
            let fd = s.fd;
            let Some(t) = s.tls.as_mut() else { return };
            let mut io = FdIo { fd, short: false };
            let eof = match t.read_tls(&mut io) {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) if e.kind() == IoKind::WouldBlock => return,
                Err(e) => {
                    let errno = e.raw_os_error().unwrap_or(libc::EIO);
                    self.io_error(ctl, idx, errno, "recv");
                    return;
                }
            };
            if !eof && let Err(e) = t.process_new_packets() {
                let _ = tls::flush(t, fd);
                self.fail(ctl, idx, tls_kind(&e), &format!("TLS: {e}"));
                return;
            }
            loop {
                let s = &mut self.slots[idx];
                let Some(t) = s.tls.as_mut() else { return };
                if s.len == s.buf.len() {
                    self.fail(
                        ctl,
                        idx,
                        ErrKind::BadResponse,
                        ParseError::TooLarge.describe(),
                    );
                    return;
                }
                match t.reader().read(&mut s.buf[s.len..]) {
                    Ok(0) => {
                        // close_notify: the server closed.
                        self.eof(ctl, idx);
                        return;
                    }
                    Ok(n) => {
                        if s.t_first == 0 {
                            s.t_first = ctl.now();
                        }
                        s.len += n;
                        ctl.counters().add(Counter::BytesRead, n as u64);
                        if !self.process(ctl, idx) {
                            return;
                        }
                    }
                    Err(e) if e.kind() == IoKind::WouldBlock => break,
                    Err(_) => {
                        // Closed without close_notify.
                        self.eof(ctl, idx);
                        return;
                    }
                }
            }
            if eof {
                self.eof(ctl, idx);
                return;
            }
            if io.short && !closing {
                return;
            }
        }
    }

    /// An idle HTTPS connection became readable: session tickets and the like are taken in
    /// (true: keep it); a close, an error or stray plaintext end it (false).
    fn idle_tls(&mut self, idx: usize) -> bool {
        let s = &mut self.slots[idx];
        let Some(t) = s.tls.as_mut() else {
            return false;
        };
        let mut io = FdIo {
            fd: s.fd,
            short: false,
        };
        loop {
            match t.read_tls(&mut io) {
                Ok(0) => return false,
                Ok(_) => {
                    if t.process_new_packets().is_err() {
                        return false;
                    }
                    let mut probe = [0u8; 1];
                    match t.reader().read(&mut probe) {
                        Err(e) if e.kind() == IoKind::WouldBlock => {}
                        _ => return false,
                    }
                    if io.short {
                        return true;
                    }
                }
                Err(e) => return e.kind() == IoKind::WouldBlock,
            }
        }
    }

    fn connected(&mut self, ctl: &mut RunControl<'_>, idx: usize) {
        let now = ctl.now();
        let clock = ctl.clock();
        let s = &mut self.slots[idx];
        s.t_conn = now;
        self.stats.connect.record(clock.to_ns(now - s.t_start));
        if s.tls.is_some() {
            self.stats
                .tls_handshake
                .record(clock.to_ns(now.saturating_sub(s.t_tcp)));
        }
        s.st = St::Writing;
        self.write(ctl, idx);
    }

    fn write(&mut self, ctl: &mut RunControl<'_>, idx: usize) {
        let s = &mut self.slots[idx];
        if let Some(t) = s.tls.as_mut() {
            // Plaintext into the session, records out to the socket.
            loop {
                match tls::flush(t, s.fd) {
                    Ok(true) => {}
                    Ok(false) => return,
                    Err(e) => {
                        self.io_error(ctl, idx, e, "send");
                        return;
                    }
                }
                if s.wrote == s.wlen {
                    break;
                }
                let n = t.writer().write(&self.wbuf[s.wrote..s.wlen]).unwrap_or(0);
                s.wrote += n;
                if n == 0 && !t.wants_write() {
                    self.fail(ctl, idx, ErrKind::Tls, "TLS: the session took no data");
                    return;
                }
            }
        }
        while s.wrote < s.wlen {
            match sys::write(s.fd, &self.wbuf[s.wrote..s.wlen]) {
                Ok(n) => s.wrote += n,
                Err(libc::EAGAIN) => return,
                Err(libc::EINTR) => {}
                Err(e) => {
                    self.io_error(ctl, idx, e, "send");
                    return;
                }
            }
        }
        let now = ctl.now();
        s.t_written = now;
        s.st = St::Reading;
        self.stats.requests_sent += s.batch as u64;
        ctl.counters().add(Counter::Writes, s.batch as u64);
        ctl.counters().add(Counter::BytesWritten, s.wlen as u64);
    }

    fn ready(&mut self, ctl: &mut RunControl<'_>, token: u64, bits: u32) {
        let (idx, generation) = ((token & 0xffff_ffff) as usize, (token >> 32) as u32);
        match self.slots.get(idx) {
            Some(s) if s.fd >= 0 && s.generation == generation => {}
            _ => return,
        }
        match self.slots[idx].st {
            St::Connecting => {
                let fd = self.slots[idx].fd;
                if bits & (sys::ERR | sys::HUP) != 0 {
                    let e = sys::so_error(fd);
                    let e = if e == 0 { libc::ECONNREFUSED } else { e };
                    self.io_error(ctl, idx, e, "connect");
                } else if bits & sys::OUT != 0 {
                    // Writable without an error: connected. (A failed connect reports ERR;
                    // should one slip through, the send fails with its errno.)
                    self.tcp_connected(ctl, idx);
                }
            }
            St::Handshaking => self.handshake(ctl, idx),
            St::Writing => {
                if bits & (sys::OUT | sys::ERR | sys::HUP) != 0 {
                    self.write(ctl, idx);
                }
                if self.slots[idx].st == St::Reading && bits & (sys::IN | sys::RDHUP) != 0 {
                    self.read(ctl, idx, closing(bits));
                }
            }
            St::Reading => {
                if bits & (sys::IN | sys::RDHUP | sys::ERR | sys::HUP) != 0 {
                    self.read(ctl, idx, closing(bits));
                }
            }
            St::Idle | St::Thinking => {
                if bits & (sys::IN | sys::RDHUP | sys::ERR | sys::HUP) != 0 && !self.idle_tls(idx) {
                    // The server closed (or wrote to) an idle kept-alive connection.
                    self.close_fd(idx);
                }
            }
        }
    }

    /// Reads what the socket has. A short read usually means it is drained; but when the
    /// event also said the server closed (`closing`), that edge will not come again, so the
    /// loop goes on to the end of the stream (the close that ends an unframed body, or cuts
    /// one short, arrives with the last bytes).
    fn read(&mut self, ctl: &mut RunControl<'_>, idx: usize, closing: bool) {
        if closing {
            self.slots[idx].peer_closed = true;
        }
        if self.slots[idx].tls.is_some() {
            self.read_tls(ctl, idx, closing);
            return;
        }
        loop {
            let s = &mut self.slots[idx];
            if s.len == s.buf.len() {
                self.fail(
                    ctl,
                    idx,
                    ErrKind::BadResponse,
                    ParseError::TooLarge.describe(),
                );
                return;
            }
            let room = s.buf.len() - s.len;
            let r = sys::read(s.fd, &mut s.buf[s.len..]);
            match r {
                Ok(0) => {
                    self.eof(ctl, idx);
                    return;
                }
                Ok(n) => {
                    let s = &mut self.slots[idx];
                    if s.t_first == 0 {
                        s.t_first = ctl.now();
                    }
                    s.len += n;
                    ctl.counters().add(Counter::BytesRead, n as u64);
                    if !self.process(ctl, idx) {
                        return;
                    }
                    if n < room && !closing {
                        return;
                    }
                }
                Err(libc::EAGAIN) => return,
                Err(libc::EINTR) => {}
                Err(e) => {
                    self.io_error(ctl, idx, e, "recv");
                    return;
                }
            }
        }
    }

    /// The server closed the connection.
    fn eof(&mut self, ctl: &mut RunControl<'_>, idx: usize) {
        let s = &mut self.slots[idx];
        if let Phase::Body(Body::UntilClose) = s.phase {
            s.len = 0;
            self.response_done(ctl, idx, false);
            return;
        }
        self.io_error(ctl, idx, 0, "recv");
    }

    /// Parses what is in the buffer; false when the slot stopped reading (done, failed).
    fn process(&mut self, ctl: &mut RunControl<'_>, idx: usize) -> bool {
        let head_req = self.cfg.head_request;
        let mut pos = 0;
        loop {
            let s = &mut self.slots[idx];
            if s.st != St::Reading {
                return false;
            }
            match s.phase {
                Phase::Head => match parse_head(&s.buf[pos..s.len], head_req) {
                    Err(e) => {
                        self.fail(ctl, idx, ErrKind::BadResponse, e.describe());
                        return false;
                    }
                    Ok(None) => break,
                    Ok(Some(h)) if h.interim() => {
                        // 100 Continue, 103 Early Hints: not the response; its head is
                        // received bytes, the final response follows.
                        self.stats.header_bytes += h.len as u64;
                        pos += h.len;
                    }
                    Ok(Some(h)) => {
                        // One predictable branch per response when not traced.
                        if let Some(t) = &self.cfg.trace {
                            t.response(&s.buf[pos..s.len], h.status);
                        }
                        let code = h.status as usize;
                        self.stats.status[if code < 600 { code } else { 0 }] += 1;
                        self.stats.header_bytes += h.len as u64;
                        if self.stats.server.is_none() {
                            let (o, l) = h.server;
                            self.stats.server = Some(
                                String::from_utf8_lossy(&s.buf[pos + o..pos + o + l]).into_owned(),
                            );
                        }
                        pos += h.len;
                        s.ka = h.keep_alive;
                        s.phase = Phase::Body(Body::start(h.body));
                        s.content = 0;
                        s.footer = 0;
                    }
                },
                Phase::Body(mut b) => {
                    let avail = s.len - pos;
                    match b.feed(&s.buf[pos..s.len]) {
                        Err(e) => {
                            self.fail(ctl, idx, ErrKind::BadResponse, e.describe());
                            return false;
                        }
                        Ok(f) => {
                            pos += f.used;
                            s.content += f.content;
                            s.footer += f.used as u64 - f.content;
                            s.phase = Phase::Body(b);
                            if f.done {
                                s.phase = Phase::Head;
                                // Compact first: what is left belongs to the next response.
                                s.buf.copy_within(pos..s.len, 0);
                                s.len -= pos;
                                pos = 0;
                                let more = self.response_done(ctl, idx, true);
                                if !more {
                                    return false;
                                }
                            } else if f.used == avail {
                                break;
                            }
                        }
                    }
                }
            }
        }
        let s = &mut self.slots[idx];
        s.buf.copy_within(pos..s.len, 0);
        s.len -= pos;
        true
    }

    /// One response is complete. Returns true while the slot expects more responses of the
    /// same batch.
    fn response_done(&mut self, ctl: &mut RunControl<'_>, idx: usize, reusable: bool) -> bool {
        let now = ctl.now();
        let clock = ctl.clock();
        let s = &mut self.slots[idx];
        let k = s.answered;
        // Open loop: from the intended start (no coordinated omission). Closed loop: from
        // when the request's operation began, as ab's start (so Connect + Processing =
        // Total, and the previous connection's close is not in it); a retried request
        // keeps its first start.
        let from = if ctl.open_loop() || s.retried {
            s.intended[k]
        } else {
            s.t_start.max(s.intended[k])
        };
        ctl.record(from, now);
        let connect_ns = clock.to_ns(s.t_conn - s.t_start);
        let wait_ns = if s.t_first >= s.t_written {
            Some(clock.to_ns(s.t_first - s.t_written))
        } else {
            None
        };
        if let Some(log) = &mut self.log
            && !ctl.warming_up()
        {
            let start = from;
            log.push(Sample {
                start_unix_ns: log.unix_ns(start),
                connect_ns,
                wait_ns: wait_ns.unwrap_or(0),
                total_ns: clock.to_ns(now.saturating_sub(start)),
            });
        }
        ctl.counters().add(Counter::Reads, 1);
        let st = &mut self.stats;
        st.responses += 1;
        if s.reused {
            st.keepalive_responses += 1;
        }
        if s.ka && self.cfg.keep_alive {
            st.keepalive_allowed += 1;
        }
        st.body_bytes += s.content;
        st.footer_bytes += s.footer;
        match st.doc_len {
            None => st.doc_len = Some(s.content),
            Some(d) if d != s.content => st.length_mismatch += 1,
            _ => {}
        }
        st.connect_per_req.record(connect_ns);
        if let Some(w) = wait_ns {
            st.waiting.record(w);
            st.transfer
                .record(clock.to_ns(now.saturating_sub(s.t_first)));
        }
        st.processing
            .record(clock.to_ns(now.saturating_sub(s.t_conn)));
        st.service
            .record(clock.to_ns(now.saturating_sub(s.t_start)));
        s.replies += 1;
        s.sess_replies += 1;
        s.answered += 1;
        // Later pipelined responses time their first byte from the previous one's end.
        s.t_first = now;
        if s.answered < s.batch {
            return true;
        }
        // The operation is complete.
        self.in_flight -= 1;
        let keep = reusable && s.ka && self.cfg.keep_alive && s.len == 0 && !s.peer_closed;
        s.st = St::Idle;
        match self.cfg.model {
            Model::Requests => {
                if !keep {
                    self.close_fd(idx);
                }
                if ctl.open_loop() || self.exhausted || self.fatal.is_some() {
                    self.idle.push(idx);
                    return false;
                }
                match ctl.next_op(now) {
                    Some(t) => {
                        let mut batch = [t; MAX_PIPELINE];
                        let n = self.claim_batch(ctl, now, &mut batch);
                        self.start(ctl, idx, &batch[..n]);
                    }
                    None => {
                        self.exhausted = true;
                        self.idle.push(idx);
                    }
                }
                false
            }
            Model::Connections(_) => {
                let s = &mut self.slots[idx];
                s.calls_left = s.calls_left.saturating_sub(1);
                if s.calls_left > 0 && self.cfg.think_ns > 0 {
                    // The next call starts after the think time (reconnecting if the server
                    // closed the connection meanwhile).
                    if !keep {
                        self.close_fd(idx);
                    }
                    let s = &mut self.slots[idx];
                    s.st = St::Thinking;
                    s.deadline = now + self.think;
                    self.in_flight += 1;
                } else if keep && s.calls_left > 0 {
                    // The next call on this connection starts now (closed loop within it).
                    self.start(ctl, idx, &[now]);
                } else {
                    // The last call, or a server that closed before it: the session ends.
                    let ok = s.calls_left == 0;
                    self.session_done(idx, now, ok);
                    self.close_fd(idx);
                    self.idle.push(idx);
                }
                false
            }
        }
    }

    fn io_error(&mut self, ctl: &mut RunControl<'_>, idx: usize, errno: i32, what: &str) {
        let s = &self.slots[idx];
        // A kept-alive connection the server closed before answering: retry once on a new
        // connection (not an error; wrk and ab reconnect too).
        if s.reused && !s.retried && s.answered == 0 && s.t_first == 0 && s.len == 0 {
            let (intended, batch) = (s.intended, s.batch);
            self.close_fd(idx);
            self.stats.retries += 1;
            self.in_flight -= 1;
            self.start(ctl, idx, &intended[..batch]);
            self.slots[idx].retried = true;
            return;
        }
        let (kind, msg) = if errno == 0 {
            (
                ErrKind::Closed,
                format!(
                    "{what}: the server closed the connection before the response was complete"
                ),
            )
        } else {
            (
                ErrKind::from_errno(errno),
                format!("{what}: {}", std::io::Error::from_raw_os_error(errno)),
            )
        };
        self.fail(ctl, idx, kind, &msg);
    }

    /// The operation on `idx` failed: count it, close, and move on.
    fn fail(&mut self, ctl: &mut RunControl<'_>, idx: usize, kind: ErrKind, msg: &str) {
        self.stats.errors[kind as usize] += 1;
        if matches!(kind, ErrKind::Tls | ErrKind::TlsCertificate) && self.stats.tls_error.is_none()
        {
            self.stats.tls_error = Some(msg.to_string());
        }
        ctl.counters().add(Counter::Errors, 1);
        if self.slots[idx].fd >= 0 {
            self.close_fd(idx);
        }
        let s = &mut self.slots[idx];
        let lost = s.batch.saturating_sub(s.answered + 1) as u64;
        // The other requests of a pipelined batch are lost with it.
        self.stats.errors[kind as usize] += lost;
        s.st = St::Idle;
        self.in_flight -= 1;
        if matches!(self.cfg.model, Model::Connections(_)) {
            let now = self.clock.now();
            self.session_done(idx, now, false);
        }
        if kind == ErrKind::TlsCertificate && self.fatal.is_none() {
            // Every handshake would fail the same way: stop at the first, with the way out,
            // rather than count thousands.
            self.fatal = Some(format!(
                "{msg} ({}:{}); the server's certificate is not trusted: for a self-signed \
                 target pass -k/--insecure (tls_verify=off)",
                self.cfg.addr.ip(),
                self.cfg.addr.port()
            ));
        }
        // A close is not a socket error: ab counts the request and goes on.
        if self.cfg.stop_on_error && self.fatal.is_none() && kind != ErrKind::Closed {
            self.fatal = Some(format!(
                "{msg} ({}:{})",
                self.cfg.addr.ip(),
                self.cfg.addr.port()
            ));
        }
        self.idle.push(idx);
        let _ = ctl;
    }

    /// The session on slot `idx` ended at `now` (httperf's `--wsess` accounting).
    fn session_done(&mut self, idx: usize, now: u64, ok: bool) {
        if !self.cfg.sessions {
            return;
        }
        let s = &self.slots[idx];
        let life = self.clock.to_ns(now.saturating_sub(s.t_sess));
        let st = &mut self.stats.sessions;
        let n = s.sess_replies as usize;
        if st.lengths.len() <= n {
            st.lengths.resize(n + 1, 0);
        }
        st.lengths[n] += 1;
        if ok {
            st.ok += 1;
            st.life_ok_ns += life;
            let k = (self.clock.to_ns(now.saturating_sub(self.t0)) / 5_000_000_000) as usize;
            if k < 1 << 20 {
                if st.per_5s.len() <= k {
                    st.per_5s.resize(k + 1, 0);
                }
                st.per_5s[k] += 1;
            }
        } else {
            st.failed += 1;
            st.life_failed_ns += life;
        }
    }

    fn close_fd(&mut self, idx: usize) {
        let s = &mut self.slots[idx];
        if s.fd < 0 {
            return;
        }
        if s.replies > 0 {
            self.stats.conns_with_reply += 1;
            self.stats.replies_on_conns += s.replies as u64;
            let now = self.clock.now();
            self.stats
                .conn_life
                .record(self.clock.to_ns(now.saturating_sub(s.t_open)));
        }
        sys::close(s.fd);
        s.fd = -1;
        s.tls = None;
        s.len = 0;
        s.replies = 0;
        self.open -= 1;
    }

    /// Fails operations past their deadline; starts calls whose think time is over.
    fn sweep(&mut self, ctl: &mut RunControl<'_>, now: u64) {
        for i in 0..self.slots.len() {
            let s = &self.slots[i];
            if s.st == St::Thinking {
                if now >= s.deadline {
                    let due = s.deadline;
                    self.in_flight -= 1;
                    self.start(ctl, i, &[due]);
                }
                continue;
            }
            if s.st != St::Idle && now > s.deadline {
                self.fail(ctl, i, ErrKind::Timeout, "no response within the timeout");
            }
        }
    }
}

/// The event says the peer closed its side (or the connection is gone): reading must go on
/// until the end of the stream, because edge-triggered epoll reports that only once.
fn closing(bits: u32) -> bool {
    bits & (sys::RDHUP | sys::HUP | sys::ERR) != 0
}

fn tls_kind(e: &rustls::Error) -> ErrKind {
    if tls::is_certificate_error(e) {
        ErrKind::TlsCertificate
    } else {
        ErrKind::Tls
    }
}
