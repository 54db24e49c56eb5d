//! `hostbench serve`: a small, fast HTTP/1.1 target server for tests, demos and the quick
//! suite. Every thread runs its own edge-triggered epoll loop over a shared nonblocking
//! listening socket (EPOLLEXCLUSIVE, so one thread wakes per connection); responses are
//! built once at start (fixed body size, status code, Content-Length or chunked) and written
//! from that one buffer. An optional fixed delay holds each response in a per-thread FIFO
//! (a fixed delay keeps it sorted), so a slow server costs no thread per request.
//!
//! Invariants: the server never allocates per request (connection buffers are reused), never
//! panics on any input (a request it cannot read — bare LF line endings, conflicting
//! lengths, a body framing it cannot follow — gets `400 Bad Request` and a close), holds no
//! connection that sends nothing past its idle timeout, backs off (rather than spins) when it
//! runs out of file descriptors, and stops within 100 ms of [`Server::stop`] or drop.

use super::parse::{Body, BodyKind};
use super::sys::{self, Epoll};
use super::tls::{self, FdIo};
use rustls::{ServerConfig, ServerConnection};
use std::collections::VecDeque;
use std::io::{self, ErrorKind as IoKind, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the server answers.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Body bytes of every response.
    pub body_size: usize,
    /// Hold every response this long before sending it.
    pub delay: Duration,
    /// Status code of every response.
    pub status: u16,
    /// Send the body with `Transfer-Encoding: chunked` (4 KiB chunks).
    pub chunked: bool,
    /// Keep connections open between requests (when the client allows it).
    pub keep_alive: bool,
    /// Event-loop threads.
    pub threads: usize,
    /// Serve HTTPS with this config (None = plain HTTP).
    pub tls: Option<Arc<ServerConfig>>,
    /// Close a connection that has not completed a request for this long (accepted and
    /// silent, a head sent a byte at a time, kept alive and unused). Zero = never.
    pub idle_timeout: Duration,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            body_size: 4096,
            delay: Duration::ZERO,
            status: 200,
            chunked: false,
            keep_alive: true,
            threads: 1,
            tls: None,
            idle_timeout: Duration::from_secs(60),
        }
    }
}

/// A running server; stops on drop.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    served: Arc<AtomicU64>,
    threads: Vec<JoinHandle<()>>,
    _listener: TcpListener,
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// The response bytes for `cfg`, with `Connection: Keep-Alive` or `close`.
pub fn response(cfg: &ServeConfig, keep_alive: bool) -> Vec<u8> {
    let no_body = cfg.status < 200 || cfg.status == 204 || cfg.status == 304;
    let mut r = format!(
        "HTTP/1.1 {} {}\r\nServer: hostbench/{}\r\nContent-Type: text/plain\r\n",
        cfg.status,
        reason(cfg.status),
        env!("CARGO_PKG_VERSION")
    );
    if no_body {
    } else if cfg.chunked {
        r.push_str("Transfer-Encoding: chunked\r\n");
    } else {
        r.push_str(&format!("Content-Length: {}\r\n", cfg.body_size));
    }
    r.push_str(if keep_alive {
        "Connection: Keep-Alive\r\n\r\n"
    } else {
        "Connection: close\r\n\r\n"
    });
    let mut b = r.into_bytes();
    if no_body {
        return b;
    }
    let fill = |b: &mut Vec<u8>, n: usize| {
        b.extend((0..n).map(|i| b"abcdefghijklmnopqrstuvwxyz\n"[i % 27]))
    };
    if cfg.chunked {
        let mut left = cfg.body_size;
        while left > 0 {
            let n = left.min(4096);
            b.extend_from_slice(format!("{n:x}\r\n").as_bytes());
            fill(&mut b, n);
            b.extend_from_slice(b"\r\n");
            left -= n;
        }
        b.extend_from_slice(b"0\r\n\r\n");
    } else {
        fill(&mut b, cfg.body_size);
    }
    b
}

impl Server {
    /// Binds `bind` (port 0 picks one) and starts `cfg.threads` event loops.
    pub fn start(bind: SocketAddr, cfg: ServeConfig) -> io::Result<Server> {
        sys::raise_nofile();
        let listener = TcpListener::bind(bind)?;
        listener.set_nonblocking(true)?;
        // A deep accept queue: connection-rate clients open thousands per second.
        // SAFETY: plain syscall on our listening socket.
        unsafe { libc::listen(listener.as_raw_fd(), 4096) };
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicU64::new(0));
        let shared = Arc::new(Responses {
            keep: response(&cfg, true),
            close: response(&cfg, false),
            cfg,
        });
        let mut threads = Vec::new();
        for i in 0..shared.cfg.threads.max(1) {
            let ep = Epoll::new()?;
            ep.add(listener.as_raw_fd(), sys::IN | sys::EXCLUSIVE, LISTENER)?;
            let (stop, served, shared) = (stop.clone(), served.clone(), shared.clone());
            let lfd = listener.as_raw_fd();
            let h = std::thread::Builder::new()
                .name(format!("hb-serve-{i}"))
                .spawn(move || Loop::new(ep, lfd, shared).run(&stop, &served))?;
            threads.push(h);
        }
        Ok(Server {
            addr,
            stop,
            served,
            threads,
            _listener: listener,
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Responses queued so far (all threads, updated once per event batch).
    pub fn requests(&self) -> u64 {
        self.served.load(Relaxed)
    }

    /// Stops the event loops and closes every connection.
    pub fn stop(mut self) -> u64 {
        self.shutdown();
        self.requests()
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Release);
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

const LISTENER: u64 = u64::MAX;
const MAX_REQUEST_HEAD: usize = 64 * 1024;
/// How long accepting pauses when the process is out of file descriptors.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// The answer to a request the server cannot read.
const BAD_REQUEST: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

struct Responses {
    cfg: ServeConfig,
    keep: Vec<u8>,
    close: Vec<u8>,
}

struct SConn {
    fd: RawFd,
    /// The TLS session of an HTTPS connection.
    tls: Option<Box<ServerConnection>>,
    generation: u32,
    buf: Vec<u8>,
    len: usize,
    /// Bytes of `buf` already searched for the end of a head.
    scanned: usize,
    /// Request body bytes still to skip (Content-Length).
    skip: u64,
    /// A chunked request body being skipped, and whether its request keeps the connection
    /// (it is answered once the body has been read).
    chunked: Option<(Body, bool)>,
    /// The last sign of progress: accepted, a request complete, body bytes read.
    since: Instant,
    /// The client sent what cannot be read: answer 400 (after what is queued) and close.
    bad: bool,
    /// Responses ready to write.
    queued: u32,
    /// Responses waiting for their delay.
    delayed: u32,
    /// Offset into the response being written.
    off: usize,
    /// Close after the last queued response.
    close_after: bool,
    /// No more requests are read (a close is coming).
    closing: bool,
}

struct Loop {
    ep: Epoll,
    lfd: RawFd,
    r: Arc<Responses>,
    conns: Vec<Option<SConn>>,
    free: Vec<usize>,
    generation: u32,
    later: VecDeque<(Instant, usize, u32)>,
    served: u64,
    /// Out of descriptors: the listening socket is out of the epoll set until then.
    paused_until: Option<Instant>,
    next_sweep: Instant,
}

enum Parsed {
    /// A complete request head of this many bytes, its body, and whether the client allows
    /// keep-alive.
    Request(usize, BodyKind, bool),
    Incomplete,
    Bad,
}

fn parse_request(buf: &[u8], from: usize) -> (Parsed, usize) {
    if buf.first().is_some_and(|b| !b.is_ascii_alphabetic()) {
        // Not a request line (a TLS ClientHello on a plain port starts with 0x16).
        return (Parsed::Bad, buf.len());
    }
    let start = from.saturating_sub(3);
    let end = buf[start..]
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| start + p + 4);
    // Lines end in CR LF; a bare LF is refused (a server reading it as a line end and a
    // proxy reading it as data would see different requests).
    let scan = &buf[..end.unwrap_or(buf.len())];
    if (from.max(1)..scan.len()).any(|i| scan[i] == b'\n' && scan[i - 1] != b'\r')
        || scan.first() == Some(&b'\n')
    {
        return (Parsed::Bad, buf.len());
    }
    let Some(end) = end else {
        return (Parsed::Incomplete, buf.len());
    };
    let head = &buf[..end];
    let mut lines = head.split(|&c| c == b'\n');
    let first = lines.next().unwrap_or_default();
    let http10 = first.ends_with(b"HTTP/1.0\r");
    if !(http10 || first.ends_with(b"HTTP/1.1\r")) {
        return (Parsed::Bad, end);
    }
    let mut keep = !http10;
    let mut len: Option<u64> = None;
    let mut chunked = false;
    for l in lines {
        let Some(c) = l.iter().position(|&b| b == b':') else {
            continue;
        };
        let (name, value) = (&l[..c], trim_ascii(&l[c + 1..]));
        if name.eq_ignore_ascii_case(b"content-length") {
            // One number; a repeated header (or a list) must not disagree.
            let n = match std::str::from_utf8(value).ok().and_then(|v| v.parse().ok()) {
                Some(n) => n,
                None => return (Parsed::Bad, end),
            };
            if len.is_some_and(|l| l != n) {
                return (Parsed::Bad, end);
            }
            len = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            // Only `chunked` can be followed (as the last coding); anything else leaves
            // the body's end unknown.
            if !value.eq_ignore_ascii_case(b"chunked") {
                return (Parsed::Bad, end);
            }
            chunked = true;
        } else if name.eq_ignore_ascii_case(b"connection") {
            if value.eq_ignore_ascii_case(b"close") {
                keep = false;
            } else if value.eq_ignore_ascii_case(b"keep-alive") {
                keep = true;
            }
        }
    }
    let body = match (chunked, len) {
        // Both: which one ends the body is what request smuggling plays on.
        (true, Some(_)) => return (Parsed::Bad, end),
        (true, None) => BodyKind::Chunked,
        (false, n) => BodyKind::Length(n.unwrap_or(0)),
    };
    (Parsed::Request(end, body, keep), end)
}

fn trim_ascii(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t' | b'\r'] = s {
        s = rest;
    }
    s
}

impl Loop {
    fn new(ep: Epoll, lfd: RawFd, r: Arc<Responses>) -> Loop {
        Loop {
            ep,
            lfd,
            r,
            conns: Vec::new(),
            free: Vec::new(),
            generation: 0,
            later: VecDeque::new(),
            served: 0,
            paused_until: None,
            next_sweep: Instant::now(),
        }
    }

    fn run(mut self, stop: &AtomicBool, served: &AtomicU64) {
        let mut evs = sys::events(256);
        while !stop.load(Relaxed) {
            let now = Instant::now();
            let left = |due: Instant| due.saturating_duration_since(now).as_millis() as i32 + 1;
            let mut timeout = match self.later.front() {
                Some((due, _, _)) => left(*due).min(100),
                None => 100,
            };
            if let Some(t) = self.paused_until {
                timeout = timeout.min(left(t));
            }
            let n = self.ep.wait(&mut evs, timeout);
            for ev in &evs[..n] {
                let (token, bits) = (ev.u64, ev.events);
                if token == LISTENER {
                    self.accept();
                } else {
                    self.ready(token, bits);
                }
            }
            self.release_delayed();
            let now = Instant::now();
            if self.paused_until.is_some_and(|t| now >= t) {
                self.paused_until = None;
                if self
                    .ep
                    .add(self.lfd, sys::IN | sys::EXCLUSIVE, LISTENER)
                    .is_err()
                {
                    self.paused_until = Some(now + ACCEPT_BACKOFF);
                }
            }
            if now >= self.next_sweep {
                self.sweep_idle(now);
            }
            if self.served > 0 {
                served.fetch_add(self.served, Relaxed);
                self.served = 0;
            }
        }
        for c in self.conns.iter().flatten() {
            sys::close(c.fd);
        }
    }

    fn accept(&mut self) {
        loop {
            // SAFETY: accept4 with null address pointers is valid.
            let fd = unsafe {
                libc::accept4(
                    self.lfd,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                )
            };
            if fd < 0 {
                let e = io::Error::last_os_error().raw_os_error().unwrap_or(0);
                if matches!(
                    e,
                    libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM
                ) {
                    // The connection stays queued and the (level-triggered) listening socket
                    // readable: waiting on it would spin. Leave it out of the set for a while;
                    // the idle sweep and clients closing free descriptors meanwhile.
                    let _ = self.ep.delete(self.lfd);
                    self.paused_until = Some(Instant::now() + ACCEPT_BACKOFF);
                }
                return; // EAGAIN: another thread took it
            }
            let one: i32 = 1;
            // SAFETY: `one` lives for the call.
            unsafe {
                libc::setsockopt(
                    fd,
                    libc::IPPROTO_TCP,
                    libc::TCP_NODELAY,
                    &one as *const i32 as *const libc::c_void,
                    4,
                )
            };
            let idx = self.free.pop().unwrap_or_else(|| {
                self.conns.push(None);
                self.conns.len() - 1
            });
            self.generation = self.generation.wrapping_add(1);
            let generation = self.generation;
            let mut buf = match self.conns[idx].take() {
                Some(old) => old.buf,
                None => Vec::new(),
            };
            if buf.len() < 4096 {
                buf = vec![0; 4096];
            }
            let tls = match &self.r.cfg.tls {
                Some(c) => match ServerConnection::new(c.clone()) {
                    Ok(t) => Some(Box::new(t)),
                    Err(_) => {
                        sys::close(fd);
                        self.free.push(idx);
                        continue;
                    }
                },
                None => None,
            };
            let token = idx as u64 | (generation as u64) << 32;
            if self
                .ep
                .add(fd, sys::IN | sys::OUT | sys::ET | sys::RDHUP, token)
                .is_err()
            {
                sys::close(fd);
                self.free.push(idx);
                continue;
            }
            self.conns[idx] = Some(SConn {
                fd,
                tls,
                generation,
                buf,
                len: 0,
                scanned: 0,
                skip: 0,
                chunked: None,
                since: Instant::now(),
                bad: false,
                queued: 0,
                delayed: 0,
                off: 0,
                close_after: false,
                closing: false,
            });
        }
    }

    fn ready(&mut self, token: u64, bits: u32) {
        let (idx, generation) = ((token & 0xffff_ffff) as usize, (token >> 32) as u32);
        match self.conns.get(idx) {
            Some(Some(c)) if c.generation == generation => {}
            _ => return,
        }
        if bits & (sys::IN | sys::RDHUP | sys::HUP | sys::ERR) != 0 && !self.read(idx) {
            return;
        }
        self.flush(idx);
    }

    /// Reads and parses what arrived; false when the connection was closed.
    fn read(&mut self, idx: usize) -> bool {
        let keep_alive = self.r.cfg.keep_alive;
        let delay = self.r.cfg.delay;
        let Some(c) = self.conns[idx].as_mut() else {
            return false;
        };
        let mut served = 0;
        let mut later = Vec::new();
        let open = 'io: loop {
            if c.len == c.buf.len() {
                if c.buf.len() >= MAX_REQUEST_HEAD {
                    break 'io false;
                }
                c.buf.resize(c.buf.len() * 2, 0);
            }
            let r = match c.tls.as_mut() {
                Some(t) => tls_read(t, c.fd, &mut c.buf[c.len..]),
                None => sys::read(c.fd, &mut c.buf[c.len..]),
            };
            let n = match r {
                Ok(0) => {
                    // The client closed: answer what was asked, then close.
                    c.closing = true;
                    c.close_after = true;
                    break 'io c.queued > 0 || c.delayed > 0 || c.bad;
                }
                Ok(n) => n,
                Err(libc::EAGAIN) => break 'io true,
                Err(libc::EINTR) => continue,
                Err(_) => break 'io false,
            };
            c.len += n;
            // Every complete request in the buffer.
            let mut pos = 0;
            loop {
                if c.skip > 0 {
                    let k = c.skip.min((c.len - pos) as u64) as usize;
                    c.skip -= k as u64;
                    pos += k;
                    c.since = Instant::now();
                    if c.skip > 0 {
                        break;
                    }
                }
                if let Some((body, keep)) = c.chunked.as_mut() {
                    let keep = *keep;
                    match body.feed(&c.buf[pos..c.len]) {
                        Err(_) => {
                            c.chunked = None;
                            reject(c);
                            pos = c.len;
                            break;
                        }
                        Ok(f) => {
                            pos += f.used;
                            c.since = Instant::now();
                            if !f.done {
                                break;
                            }
                            c.chunked = None;
                            answer(c, keep && keep_alive, delay, idx, &mut later);
                            served += 1;
                        }
                    }
                }
                if c.closing || pos == c.len {
                    break;
                }
                let (p, scanned) = parse_request(&c.buf[pos..c.len], c.scanned);
                match p {
                    Parsed::Incomplete => {
                        c.scanned = scanned;
                        break;
                    }
                    Parsed::Bad => {
                        reject(c);
                        pos = c.len;
                        break;
                    }
                    Parsed::Request(end, body, keep) => {
                        pos += end;
                        c.scanned = 0;
                        c.since = Instant::now();
                        match body {
                            BodyKind::Chunked => {
                                c.chunked = Some((Body::start(BodyKind::Chunked), keep));
                            }
                            BodyKind::Length(n) => {
                                c.skip = n;
                                answer(c, keep && keep_alive, delay, idx, &mut later);
                                served += 1;
                            }
                            BodyKind::None | BodyKind::UntilClose => {
                                answer(c, keep && keep_alive, delay, idx, &mut later);
                                served += 1;
                            }
                        }
                    }
                }
            }
            c.buf.copy_within(pos..c.len, 0);
            c.len -= pos;
        };
        self.served += served;
        self.later.extend(later);
        if !open {
            self.close(idx);
        }
        open
    }

    fn release_delayed(&mut self) {
        let now = Instant::now();
        while let Some(&(due, idx, generation)) = self.later.front() {
            if due > now {
                break;
            }
            self.later.pop_front();
            let Some(Some(c)) = self.conns.get_mut(idx) else {
                continue;
            };
            if c.generation != generation {
                continue;
            }
            c.delayed -= 1;
            c.queued += 1;
            if c.delayed == 0 && c.closing && !c.bad {
                c.close_after = true;
            }
            self.flush(idx);
        }
    }

    /// Writes queued responses until done or the socket is full.
    fn flush(&mut self, idx: usize) {
        let Some(c) = self.conns[idx].as_mut() else {
            return;
        };
        if c.fd < 0 {
            return;
        }
        let close = loop {
            if let Some(t) = c.tls.as_mut() {
                // Records first (handshake messages, earlier responses), so the session
                // never holds more than one response.
                match tls::flush(t, c.fd) {
                    Ok(true) => {}
                    Ok(false) => break false,
                    Err(_) => break true,
                }
            }
            if c.queued == 0 && !(c.bad && c.delayed == 0) {
                break c.closing && c.delayed == 0;
            }
            // Past what was asked, a request it could not read: 400, then close.
            let rejecting = c.queued == 0;
            let last_closes = rejecting || (c.queued == 1 && c.close_after);
            let resp: &[u8] = if rejecting {
                BAD_REQUEST
            } else if last_closes {
                &self.r.close
            } else {
                &self.r.keep
            };
            let w = match c.tls.as_mut() {
                Some(t) => tls_write(t, c.fd, &resp[c.off..]),
                None => sys::write(c.fd, &resp[c.off..]),
            };
            match w {
                Ok(n) => {
                    c.off += n;
                    if c.off == resp.len() {
                        c.off = 0;
                        c.since = Instant::now();
                        if rejecting {
                            c.bad = false;
                        } else {
                            c.queued -= 1;
                        }
                        if last_closes {
                            if let Some(t) = c.tls.as_mut() {
                                t.send_close_notify();
                                let _ = tls::flush(t, c.fd);
                            }
                            break true;
                        }
                    }
                }
                Err(libc::EAGAIN) => break false,
                Err(libc::EINTR) => {}
                Err(_) => break true,
            }
        };
        if close {
            self.close(idx);
        }
    }

    /// Closes connections that have shown no progress for the idle timeout and have
    /// nothing to answer.
    fn sweep_idle(&mut self, now: Instant) {
        let idle = self.r.cfg.idle_timeout;
        if idle.is_zero() {
            self.next_sweep = now + Duration::from_secs(3600);
            return;
        }
        self.next_sweep = now + (idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
        for i in 0..self.conns.len() {
            if let Some(c) = &self.conns[i]
                && c.fd >= 0
                && c.queued == 0
                && c.delayed == 0
                && now.saturating_duration_since(c.since) >= idle
            {
                self.close(i);
            }
        }
    }

    fn close(&mut self, idx: usize) {
        if let Some(c) = self.conns[idx].as_mut()
            && c.fd >= 0
        {
            sys::close(c.fd);
            c.fd = -1;
            c.generation = 0;
            self.free.push(idx);
        }
    }
}

/// The client sent what cannot be read: nothing more is parsed, and after what is queued
/// the connection gets `400 Bad Request` and is closed.
fn reject(c: &mut SConn) {
    c.bad = true;
    c.closing = true;
}

/// Queues the response to a complete request (or holds it for the delay).
fn answer(
    c: &mut SConn,
    keep: bool,
    delay: Duration,
    idx: usize,
    later: &mut Vec<(Instant, usize, u32)>,
) {
    if !keep {
        c.closing = true;
    }
    if delay.is_zero() {
        c.queued += 1;
        c.close_after = c.closing;
    } else {
        c.delayed += 1;
        later.push((Instant::now() + delay, idx, c.generation));
    }
}

/// Reads plaintext from an HTTPS connection, as `sys::read` does from a plain one: Ok(0) at
/// the end, Err(EAGAIN) when nothing more is there. Handshake replies are flushed on the way.
fn tls_read(t: &mut ServerConnection, fd: RawFd, buf: &mut [u8]) -> Result<usize, i32> {
    loop {
        match t.reader().read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == IoKind::WouldBlock => {}
            Err(_) => return Ok(0),
        }
        let mut io = FdIo { fd, short: false };
        match t.read_tls(&mut io) {
            Ok(0) => return Ok(0),
            Ok(_) => {
                if t.process_new_packets().is_err() {
                    let _ = tls::flush(t, fd);
                    return Err(libc::EPROTO);
                }
                if tls::flush(t, fd).is_err() {
                    return Err(libc::EPIPE);
                }
            }
            Err(e) => return Err(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    }
}

/// Queues plaintext (nothing while earlier records wait) and writes records out.
fn tls_write(t: &mut ServerConnection, fd: RawFd, buf: &[u8]) -> Result<usize, i32> {
    if !tls::flush(t, fd)? {
        return Err(libc::EAGAIN);
    }
    let n = t.writer().write(buf).map_err(|_| libc::EIO)?;
    tls::flush(t, fd)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn serves_keep_alive_and_close() {
        let s = Server::start("127.0.0.1:0".parse().unwrap(), ServeConfig::default()).unwrap();
        let mut c = std::net::TcpStream::connect(s.addr()).unwrap();
        c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let want = response(&ServeConfig::default(), true);
        let mut got = vec![0; want.len() * 2];
        c.read_exact(&mut got).unwrap();
        assert_eq!(&got[..want.len()], &want[..]);
        c.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
        let mut rest = Vec::new();
        c.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, response(&ServeConfig::default(), false));
        assert_eq!(s.stop(), 3);
    }
}
