//! Tests of the engine's connection state machine. Each drives one worker through
//! `runner::run`, as a run does, against a scripted server on 127.0.0.1 (a thread per
//! connection that reads requests and answers, stalls or closes as the test says), and
//! checks what the engine counted: connections opened, requests written, responses
//! completed, reuse, retries and errors by kind. Every run has a 30 s limit, so a broken
//! transition fails its test rather than hanging it.

use super::*;
use hostbench_core::params::Params;
use hostbench_core::plan::Plan;
use hostbench_core::rand::Rng;
use hostbench_core::runner::{Measurement, Silent, StopReason, run};
use hostbench_core::workload::{Instance, Worker};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

const REQUEST: &[u8] = b"GET /t HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/// A response with a `Content-Length` body (keep-alive allowed: HTTP/1.1).
fn ok(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A server on 127.0.0.1 whose every connection runs `conn` (with the connection's index,
/// counted from 0) on its own thread.
struct Script {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Script {
    fn start(conn: impl Fn(TcpStream, usize) + Send + Sync + 'static) -> Script {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (a, s, conn) = (accepted.clone(), stop.clone(), Arc::new(conn));
        std::thread::spawn(move || {
            for c in l.incoming() {
                if s.load(SeqCst) {
                    break;
                }
                let Ok(c) = c else { continue };
                let i = a.fetch_add(1, SeqCst);
                c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                c.set_nodelay(true).unwrap();
                let f = conn.clone();
                std::thread::spawn(move || f(c, i));
            }
        });
        Script {
            addr,
            accepted,
            stop,
        }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(SeqCst)
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        self.stop.store(true, SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

/// Reads the next request head (the engine's requests here have no body) from `c`,
/// keeping what follows it in `pending`; None at the end of the stream or after 5 s of
/// silence.
fn read_request(c: &mut TcpStream, pending: &mut Vec<u8>) -> Option<Vec<u8>> {
    loop {
        if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            return Some(pending.drain(..end + 4).collect());
        }
        let mut b = [0u8; 4096];
        match c.read(&mut b) {
            Ok(0) | Err(_) => return None,
            Ok(n) => pending.extend_from_slice(&b[..n]),
        }
    }
}

/// Answers every request on the connection with `response` until the client closes;
/// returns how many it answered.
fn answer_all(c: &mut TcpStream, response: &[u8]) -> usize {
    let mut pending = Vec::new();
    let mut n = 0;
    while let Some(req) = read_request(c, &mut pending) {
        assert_eq!(req, REQUEST, "the engine sends the request as built");
        c.write_all(response).unwrap();
        n += 1;
    }
    n
}

/// Waits (at most 5 s) until `done` holds: server threads note what they saw after the
/// client has closed, which can be just after the run returned.
fn wait_for(done: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(5);
    while !done() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// One thread, one connection, keep-alive, closed loop, 10 s timeout.
fn cfg(addr: SocketAddr) -> EngineCfg {
    EngineCfg {
        addr,
        bind: None,
        log: None,
        trace: None,
        request: REQUEST.to_vec(),
        head_request: false,
        conns: vec![1],
        keep_alive: true,
        pipeline: 1,
        model: Model::Requests,
        timeout_ns: 10_000_000_000,
        constant: false,
        stop_on_error: false,
        think_ns: 0,
        sessions: false,
        sndbuf: 0,
        rcvbuf: 0,
        tls: None,
    }
}

struct OneWorker {
    cfg: Arc<EngineCfg>,
    sink: Arc<Mutex<Stats>>,
}

impl Instance for OneWorker {
    fn worker(&self, tid: usize, _rng: Rng) -> Result<Worker, WorkloadError> {
        Ok(Worker::Loop(Box::new(HttpWorker::new(
            self.cfg.clone(),
            tid,
            self.sink.clone(),
        ))))
    }
}

/// Runs `events` operations on one thread (open loop at `rate` per second when it is
/// above 0) and returns the measurement and the engine's stats.
fn drive(cfg: EngineCfg, events: u64, rate: f64) -> (Measurement, Stats) {
    let inst = OneWorker {
        cfg: Arc::new(cfg),
        sink: Arc::new(Mutex::new(Stats::default())),
    };
    let mut plan = Plan::new("http.load", Params::default());
    plan.threads = 1;
    plan.events = events;
    plan.time_s = 30.0;
    plan.rate = rate;
    plan.seed = 1;
    let m = run(&plan, &inst, Clock::detect(), &Silent).unwrap();
    assert_ne!(m.stop, StopReason::TimeLimit, "the run must end by itself");
    let s = inst.sink.lock().unwrap().clone();
    (m, s)
}

/// [`drive`] for a run that must end without a worker error; returns the engine's stats.
fn drive_ok(cfg: EngineCfg, events: u64, rate: f64) -> Stats {
    let (m, s) = drive(cfg, events, rate);
    assert!(m.error.is_none(), "{:?}", m.error);
    s
}

#[test]
fn a_request_connects_is_written_and_its_response_read() {
    const HEAD: &str = "HTTP/1.1 200 OK\r\nServer: scripted\r\nContent-Length: 5\r\n\r\n";
    let srv = Script::start(|mut c, _| {
        let mut pending = Vec::new();
        let req = read_request(&mut c, &mut pending).unwrap();
        assert_eq!(req, REQUEST);
        c.write_all(format!("{HEAD}hello").as_bytes()).unwrap();
        // Hold the connection until the client closes it.
        let _ = read_request(&mut c, &mut pending);
    });
    let (m, s) = drive(cfg(srv.addr), 1, 0.0);
    assert!(m.error.is_none(), "{:?}", m.error);
    assert_eq!(m.counters.events, 1);
    assert_eq!((s.conns_opened, s.requests_sent, s.responses), (1, 1, 1));
    assert_eq!(s.status[200], 1);
    assert_eq!(s.body_bytes, 5);
    assert_eq!(s.header_bytes, HEAD.len() as u64);
    assert_eq!(s.server.as_deref(), Some("scripted"));
    assert_eq!(s.doc_len, Some(5));
    assert_eq!((s.error_total(), s.unfinished, s.retries), (0, 0, 0));
    assert_eq!(s.connect.count, 1, "one connect time");
    assert_eq!(s.keepalive_responses, 0, "a new connection is not a reuse");
    assert_eq!(srv.accepted(), 1);
}

#[test]
fn a_response_that_arrives_in_pieces_is_put_together() {
    let head_a = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nServer: scripted\r\n\r\n";
    let head_b = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    let chunked = "4\r\nabcd\r\n3\r\nefg\r\n0\r\n\r\n";
    let srv = Script::start(move |mut c, _| {
        let mut pending = Vec::new();
        let pause = || std::thread::sleep(Duration::from_millis(30));
        // The head cut inside a header name, then the body cut in two.
        read_request(&mut c, &mut pending).unwrap();
        let a = format!("{head_a}0123456789");
        for piece in [&a[..25], &a[25..head_a.len() + 5], &a[head_a.len() + 5..]] {
            c.write_all(piece.as_bytes()).unwrap();
            pause();
        }
        // A chunked body cut inside a chunk and inside the last chunk's framing.
        read_request(&mut c, &mut pending).unwrap();
        let b = format!("{head_b}{chunked}");
        let cut = head_b.len();
        for piece in [&b[..cut + 5], &b[cut + 5..cut + 19], &b[cut + 19..]] {
            c.write_all(piece.as_bytes()).unwrap();
            pause();
        }
        let _ = read_request(&mut c, &mut pending);
    });
    let s = drive_ok(cfg(srv.addr), 2, 0.0);
    assert_eq!(s.responses, 2);
    assert_eq!(s.error_total(), 0);
    assert_eq!(s.header_bytes, (head_a.len() + head_b.len()) as u64);
    assert_eq!(s.body_bytes, 10 + 7);
    assert_eq!(s.footer_bytes, (chunked.len() - 7) as u64);
    assert_eq!(s.doc_len, Some(10));
    assert_eq!(s.length_mismatch, 1, "the second body is 7 bytes, not 10");
    assert_eq!(s.conns_opened, 1);
}

#[test]
fn keep_alive_carries_every_request_on_one_connection() {
    let srv = Script::start(|mut c, _| {
        answer_all(&mut c, &ok("ka"));
    });
    let s = drive_ok(cfg(srv.addr), 5, 0.0);
    assert_eq!((s.responses, s.requests_sent), (5, 5));
    assert_eq!(s.conns_opened, 1);
    assert_eq!(srv.accepted(), 1);
    assert_eq!(
        s.keepalive_responses, 4,
        "every response after the first reused it"
    );
    assert_eq!(s.keepalive_allowed, 5);
    assert_eq!(s.connect.count, 1);
    assert_eq!(s.connect_per_req.count, 5);
}

#[test]
fn without_keep_alive_each_request_has_its_own_connection() {
    let srv = Script::start(|mut c, _| {
        answer_all(&mut c, &ok("x"));
    });
    let mut cfg = cfg(srv.addr);
    cfg.keep_alive = false;
    let s = drive_ok(cfg, 3, 0.0);
    assert_eq!(s.responses, 3);
    assert_eq!(s.conns_opened, 3);
    assert_eq!(s.keepalive_responses, 0);
    assert_eq!(s.keepalive_allowed, 0);
    assert_eq!((s.conns_with_reply, s.replies_on_conns), (3, 3));
    wait_for(|| srv.accepted() == 3);
    assert_eq!(srv.accepted(), 3);
}

#[test]
fn a_response_that_says_close_ends_its_connection() {
    // The server says `Connection: close` but leaves the connection open: only the header
    // can make the engine open a new one.
    let srv = Script::start(|mut c, _| {
        answer_all(
            &mut c,
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
        );
    });
    let s = drive_ok(cfg(srv.addr), 3, 0.0);
    assert_eq!(s.responses, 3);
    assert_eq!(s.conns_opened, 3);
    assert_eq!(s.keepalive_allowed, 0);
    assert_eq!(s.error_total(), 0);
}

#[test]
fn a_body_without_length_ends_with_the_close() {
    let (first, last) = ("until-close", "!");
    let srv = Script::start(move |mut c, _| {
        let mut pending = Vec::new();
        read_request(&mut c, &mut pending).unwrap();
        c.write_all(format!("HTTP/1.1 200 OK\r\n\r\n{first}").as_bytes())
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        c.write_all(last.as_bytes()).unwrap();
    });
    let s = drive_ok(cfg(srv.addr), 1, 0.0);
    assert_eq!(s.responses, 1);
    assert_eq!(s.body_bytes, (first.len() + last.len()) as u64);
    assert_eq!(s.error_total(), 0);
}

#[test]
fn a_kept_alive_connection_closed_under_a_request_is_retried_once() {
    // Connection 0 answers the first request, then reads the second and closes without
    // answering; connection 1 answers everything.
    let srv = Script::start(|mut c, i| {
        if i == 0 {
            let mut pending = Vec::new();
            read_request(&mut c, &mut pending).unwrap();
            c.write_all(&ok("first")).unwrap();
            read_request(&mut c, &mut pending).unwrap();
            let _ = c.shutdown(Shutdown::Both);
        } else {
            answer_all(&mut c, &ok("again"));
        }
    });
    let s = drive_ok(cfg(srv.addr), 2, 0.0);
    assert_eq!(s.responses, 2);
    assert_eq!(s.retries, 1);
    assert_eq!(s.error_total(), 0, "a retried request is not an error");
    assert_eq!(s.conns_opened, 2);
    assert_eq!(srv.accepted(), 2);
}

#[test]
fn a_server_that_closes_mid_response_is_a_closed_error() {
    let srv = Script::start(|mut c, _| {
        let mut pending = Vec::new();
        read_request(&mut c, &mut pending).unwrap();
        c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
            .unwrap();
    });
    let (m, s) = drive(cfg(srv.addr), 1, 0.0);
    assert!(
        m.error.is_none(),
        "a close is counted, not fatal: {:?}",
        m.error
    );
    assert_eq!(s.responses, 0);
    assert_eq!(s.errors[ErrKind::Closed as usize], 1);
    assert_eq!(s.error_total(), 1);
    assert_eq!(s.retries, 0, "a new connection is not retried");
}

#[test]
fn no_response_within_the_timeout_is_a_timeout() {
    let srv = Script::start(|mut c, _| {
        let mut pending = Vec::new();
        read_request(&mut c, &mut pending).unwrap();
        // Never answer; wait for the client to give up.
        let _ = read_request(&mut c, &mut pending);
    });
    let mut cfg = cfg(srv.addr);
    cfg.timeout_ns = 100_000_000;
    let t = Instant::now();
    let s = drive_ok(cfg, 1, 0.0);
    assert!(t.elapsed() >= Duration::from_millis(100));
    assert_eq!(s.requests_sent, 1);
    assert_eq!(s.responses, 0);
    assert_eq!(s.errors[ErrKind::Timeout as usize], 1);
    assert_eq!(s.error_total(), 1);
}

#[test]
fn a_refused_connect_is_counted_or_with_stop_on_error_ends_the_run() {
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let s = drive_ok(cfg(addr), 3, 0.0);
    assert_eq!(s.errors[ErrKind::Refused as usize], 3);
    assert_eq!((s.responses, s.requests_sent), (0, 0));

    let mut stop = cfg(addr);
    stop.stop_on_error = true;
    let (m, s) = drive(stop, 3, 0.0);
    let e = m
        .error
        .expect("stop_on_error ends the run at the first error");
    assert!(
        e.contains("connect") && e.contains(&addr.to_string()),
        "{e}"
    );
    assert_eq!(s.errors[ErrKind::Refused as usize], 1);
}

#[test]
fn a_response_that_is_not_http_is_a_bad_response() {
    let srv = Script::start(|mut c, _| {
        let mut pending = Vec::new();
        read_request(&mut c, &mut pending).unwrap();
        c.write_all(b"SSH-2.0-OpenSSH_9.6\r\n").unwrap();
        let _ = read_request(&mut c, &mut pending);
    });
    let s = drive_ok(cfg(srv.addr), 1, 0.0);
    assert_eq!(s.errors[ErrKind::BadResponse as usize], 1);
    assert_eq!(s.responses, 0);
}

#[test]
fn an_interim_response_is_not_the_response() {
    const INTERIM: &str = "HTTP/1.1 100 Continue\r\n\r\n";
    const HEAD: &str = "HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n";
    let srv = Script::start(|mut c, _| {
        answer_all(&mut c, format!("{INTERIM}{HEAD}no").as_bytes());
    });
    let s = drive_ok(cfg(srv.addr), 2, 0.0);
    assert_eq!(s.responses, 2);
    assert_eq!((s.status[100], s.status[404]), (0, 2));
    assert_eq!(s.header_bytes, 2 * (INTERIM.len() + HEAD.len()) as u64);
    assert_eq!(s.conns_opened, 1);
}

#[test]
fn pipelined_requests_are_written_before_the_first_answer() {
    let all_before_answer = Arc::new(AtomicBool::new(false));
    let flag = all_before_answer.clone();
    let srv = Script::start(move |mut c, _| {
        let mut pending = Vec::new();
        let got = (0..3)
            .filter_map(|_| read_request(&mut c, &mut pending))
            .count();
        flag.store(got == 3, SeqCst);
        let three: Vec<u8> = [ok("1"), ok("2"), ok("3")].concat();
        c.write_all(&three).unwrap();
        answer_all(&mut c, &ok("n"));
    });
    let mut cfg = cfg(srv.addr);
    cfg.pipeline = 3;
    let s = drive_ok(cfg, 3, 0.0);
    assert!(
        all_before_answer.load(SeqCst),
        "three requests sent back to back"
    );
    assert_eq!((s.requests_sent, s.responses), (3, 3));
    assert_eq!(s.conns_opened, 1);
    assert_eq!(s.error_total(), 0);
}

#[test]
fn an_idle_connection_the_server_closes_is_replaced_without_error() {
    // Open loop, one request every 200 ms: between requests the connection is idle, and
    // the server closes it 20 ms after each response.
    let srv = Script::start(|mut c, _| {
        let mut pending = Vec::new();
        if read_request(&mut c, &mut pending).is_some() {
            c.write_all(&ok("idle")).unwrap();
            std::thread::sleep(Duration::from_millis(20));
            let _ = c.shutdown(Shutdown::Write);
            // Whatever the client sends now is never answered.
            let _ = read_request(&mut c, &mut pending);
        }
    });
    let mut cfg = cfg(srv.addr);
    cfg.constant = true;
    cfg.timeout_ns = 2_000_000_000;
    let s = drive_ok(cfg, 3, 5.0);
    assert_eq!(s.responses, 3);
    assert_eq!((s.error_total(), s.retries), (0, 0));
    assert_eq!(s.conns_opened, 3);
    assert_eq!(s.keepalive_responses, 0);
}

#[test]
fn a_connection_carries_its_calls_then_closes() {
    let per_conn = Arc::new(Mutex::new(Vec::new()));
    let seen = per_conn.clone();
    let srv = Script::start(move |mut c, _| {
        let n = answer_all(&mut c, &ok("call"));
        seen.lock().unwrap().push(n);
    });
    let mut cfg = cfg(srv.addr);
    cfg.model = Model::Connections(3);
    cfg.sessions = true;
    let s = drive_ok(cfg, 2, 0.0);
    assert_eq!(s.responses, 6);
    assert_eq!(s.conns_opened, 2);
    assert_eq!(
        s.keepalive_responses, 4,
        "calls 2 and 3 reuse the connection"
    );
    assert_eq!((s.sessions.ok, s.sessions.failed), (2, 0));
    assert_eq!(s.sessions.lengths.get(3), Some(&2));
    wait_for(|| per_conn.lock().unwrap().len() == 2);
    assert_eq!(*per_conn.lock().unwrap(), vec![3, 3]);
}

#[test]
fn think_time_separates_the_calls_of_a_connection() {
    let gap = Arc::new(Mutex::new(None));
    let g = gap.clone();
    let srv = Script::start(move |mut c, _| {
        let mut pending = Vec::new();
        read_request(&mut c, &mut pending).unwrap();
        c.write_all(&ok("one")).unwrap();
        let answered = Instant::now();
        read_request(&mut c, &mut pending).unwrap();
        *g.lock().unwrap() = Some(answered.elapsed());
        c.write_all(&ok("two")).unwrap();
        let _ = read_request(&mut c, &mut pending);
    });
    let mut cfg = cfg(srv.addr);
    cfg.model = Model::Connections(2);
    cfg.think_ns = 50_000_000;
    cfg.sessions = true;
    let s = drive_ok(cfg, 1, 0.0);
    assert_eq!(s.responses, 2);
    assert_eq!(
        s.conns_opened, 1,
        "the connection is kept through the think time"
    );
    assert_eq!(s.keepalive_responses, 1);
    assert_eq!(s.sessions.ok, 1);
    let gap = gap.lock().unwrap().expect("the second call arrived");
    // The server's clock starts just after its answer left, a little after the client
    // could have seen it; the think time runs from the client's reading.
    assert!(gap >= Duration::from_millis(45), "{gap:?}");
}

#[test]
fn a_connection_the_server_closes_with_its_response_is_not_reused() {
    // The server's close rides on the segment that carries the response (corked until the
    // shutdown), so the engine sees both in one wake-up: the response is complete and
    // allows keep-alive, but the connection must not carry the next request (which would
    // go unanswered and be retried on a new connection).
    let srv = Script::start(|mut c, _| {
        let mut pending = Vec::new();
        if read_request(&mut c, &mut pending).is_some() {
            c.set_nodelay(false).unwrap();
            let on: libc::c_int = 1;
            // SAFETY: a valid socket and an int option of the size passed.
            let rc = unsafe {
                libc::setsockopt(
                    std::os::fd::AsRawFd::as_raw_fd(&c),
                    libc::IPPROTO_TCP,
                    libc::TCP_CORK,
                    (&on as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            assert_eq!(rc, 0, "TCP_CORK");
            c.write_all(&ok("last")).unwrap();
            let _ = c.shutdown(Shutdown::Write);
            let _ = read_request(&mut c, &mut pending);
        }
    });
    let mut cfg = cfg(srv.addr);
    cfg.timeout_ns = 2_000_000_000;
    let s = drive_ok(cfg, 3, 0.0);
    assert_eq!(s.responses, 3);
    assert_eq!((s.error_total(), s.retries), (0, 0));
    assert_eq!(s.conns_opened, 3);
}
