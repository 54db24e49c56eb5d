//! What the engine counts: errors by kind, the per-thread [`Stats`] (status codes, the
//! connect/waiting/processing/transfer histograms, connection and keep-alive counts,
//! httperf's session figures, the first TLS handshake's parameters), merged over threads at
//! the end of the run.

use hostbench_core::recorder::LatencyRec;

/// The first handshake's parameters (ab's `SSL/TLS Protocol:` and `Server Temp Key:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsInfo {
    /// `TLSv1.3`.
    pub version: &'static str,
    /// OpenSSL's name of the suite.
    pub suite: String,
    /// Secret key bits of the suite.
    pub suite_bits: u32,
    /// Public key bits of the server's certificate (0 = not known).
    pub cert_bits: u32,
    /// Key-exchange group and its bits.
    pub group: Option<(&'static str, u32)>,
}

/// Kinds of error, counted separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrKind {
    /// Connection refused.
    Refused,
    /// Connection reset by the server.
    Reset,
    /// No complete response within the timeout (connect included).
    Timeout,
    /// The response could not be parsed.
    BadResponse,
    /// The server closed the connection before the response was complete.
    Closed,
    /// Out of file descriptors (EMFILE/ENFILE).
    FdUnavail,
    /// Out of local ports (EADDRNOTAVAIL).
    AddrUnavail,
    /// Anything else.
    Other,
    /// The server's TLS certificate was not accepted (untrusted, expired, wrong name).
    TlsCertificate,
    /// Any other TLS failure: handshake refused, no common version or suite, an alert, a
    /// server that does not speak TLS, a record that does not decrypt.
    Tls,
}

impl ErrKind {
    /// Number of kinds.
    pub const COUNT: usize = 10;
    /// Every kind, in index order.
    pub const ALL: [ErrKind; ErrKind::COUNT] = [
        ErrKind::Refused,
        ErrKind::Reset,
        ErrKind::Timeout,
        ErrKind::BadResponse,
        ErrKind::Closed,
        ErrKind::FdUnavail,
        ErrKind::AddrUnavail,
        ErrKind::Other,
        ErrKind::TlsCertificate,
        ErrKind::Tls,
    ];
    /// snake_case name: the row of the `http_errors` table.
    pub fn name(self) -> &'static str {
        use hostbench_core::names::http::error;
        match self {
            ErrKind::Refused => error::REFUSED,
            ErrKind::Reset => error::RESET,
            ErrKind::Timeout => error::TIMEOUT,
            ErrKind::BadResponse => error::BAD_RESPONSE,
            ErrKind::Closed => error::CLOSED,
            ErrKind::FdUnavail => error::FD_UNAVAIL,
            ErrKind::AddrUnavail => error::ADDR_UNAVAIL,
            ErrKind::Other => error::OTHER,
            ErrKind::TlsCertificate => error::TLS_CERTIFICATE,
            ErrKind::Tls => error::TLS,
        }
    }

    pub(super) fn from_errno(e: i32) -> ErrKind {
        match e {
            libc::ECONNREFUSED => ErrKind::Refused,
            libc::ECONNRESET | libc::EPIPE | libc::ECONNABORTED => ErrKind::Reset,
            libc::ETIMEDOUT => ErrKind::Timeout,
            libc::EMFILE | libc::ENFILE => ErrKind::FdUnavail,
            libc::EADDRNOTAVAIL => ErrKind::AddrUnavail,
            _ => ErrKind::Other,
        }
    }
}

/// What the workers saw, merged over threads at the end.
#[derive(Debug, Clone)]
pub struct Stats {
    /// Responses by status code (index = code; 0 = outside 100..=599).
    pub status: Vec<u64>,
    /// Errors by kind.
    pub errors: [u64; ErrKind::COUNT],
    /// Connect time of each new connection (TCP plus the TLS handshake).
    pub connect: LatencyRec,
    /// TCP connect time of each new connection (HTTPS).
    pub tcp_connect: LatencyRec,
    /// TLS handshake time of each new connection (HTTPS).
    pub tls_handshake: LatencyRec,
    /// Full TLS handshakes.
    pub tls_full: u64,
    /// Resumed TLS handshakes.
    pub tls_resumed: u64,
    /// The first handshake's parameters.
    pub tls_info: Option<TlsInfo>,
    /// The first TLS error's message (for the warning).
    pub tls_error: Option<String>,
    /// Connect time per request (0 on a reused connection): ab's Connect row.
    pub connect_per_req: LatencyRec,
    /// First response byte − last request byte written: ab's Waiting.
    pub waiting: LatencyRec,
    /// Response complete − connection established: ab's Processing.
    pub processing: LatencyRec,
    /// Response complete − actual start (connect or send): service time, without the wait
    /// for a connection or for the schedule.
    pub service: LatencyRec,
    /// First response byte → last: httperf's transfer time.
    pub transfer: LatencyRec,
    /// Lifetime of connections that carried at least one reply: httperf's connection time.
    pub conn_life: LatencyRec,
    /// Connections opened.
    pub conns_opened: u64,
    /// Connections that carried at least one reply.
    pub conns_with_reply: u64,
    /// Replies on those connections.
    pub replies_on_conns: u64,
    /// Most connections open at once (sum over threads of each thread's maximum).
    pub max_open: u64,
    /// Requests written completely.
    pub requests_sent: u64,
    /// Complete responses.
    pub responses: u64,
    /// Responses on a reused connection.
    pub keepalive_responses: u64,
    /// Responses whose head lets the connection be kept alive, with keep-alive on (ab's
    /// "Keep-Alive requests": the first response of a connection counts too).
    pub keepalive_allowed: u64,
    /// Response head bytes.
    pub header_bytes: u64,
    /// Decoded body bytes.
    pub body_bytes: u64,
    /// Framing bytes of chunked bodies (sizes, CRLFs, trailer).
    pub footer_bytes: u64,
    /// Body length of the first response, per thread's first (ab's Document Length).
    pub doc_len: Option<u64>,
    /// Responses whose body length differed from `doc_len`.
    pub length_mismatch: u64,
    /// Requests in flight when the run ended (abandoned).
    pub unfinished: u64,
    /// Open-loop sends more than 1 ms after their intended start.
    pub late_sends: u64,
    /// Largest open-loop send lag, ns.
    pub max_lag_ns: u64,
    /// `Server:` header of the first response.
    pub server: Option<String>,
    /// Connections reopened to retry a request the server had closed under it.
    pub retries: u64,
    /// Most open-loop operations started at once to catch up with the schedule (httperf's
    /// "maximum connect burst length").
    pub max_burst: u64,
    /// httperf sessions (`EngineCfg::sessions`).
    pub sessions: SessionStats,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            status: vec![0; 600],
            errors: [0; ErrKind::COUNT],
            connect: LatencyRec::default(),
            tcp_connect: LatencyRec::default(),
            tls_handshake: LatencyRec::default(),
            tls_full: 0,
            tls_resumed: 0,
            tls_info: None,
            tls_error: None,
            connect_per_req: LatencyRec::default(),
            waiting: LatencyRec::default(),
            processing: LatencyRec::default(),
            service: LatencyRec::default(),
            transfer: LatencyRec::default(),
            conn_life: LatencyRec::default(),
            conns_opened: 0,
            conns_with_reply: 0,
            replies_on_conns: 0,
            max_open: 0,
            requests_sent: 0,
            responses: 0,
            keepalive_responses: 0,
            keepalive_allowed: 0,
            header_bytes: 0,
            body_bytes: 0,
            footer_bytes: 0,
            doc_len: None,
            length_mismatch: 0,
            unfinished: 0,
            late_sends: 0,
            max_lag_ns: 0,
            server: None,
            retries: 0,
            max_burst: 0,
            sessions: SessionStats::default(),
        }
    }
}

/// httperf's session figures: a session is one operation of the connections model (a
/// connection carrying `calls` requests with think time between them).
#[derive(Debug, Clone, Default)]
pub struct SessionStats {
    /// Sessions whose every call was answered.
    pub ok: u64,
    /// Sessions ended by an error (or a server that closed before the last call).
    pub failed: u64,
    /// Summed lifetime of the successful ones, ns.
    pub life_ok_ns: u64,
    /// Summed lifetime of the failed ones, ns.
    pub life_failed_ns: u64,
    /// Sessions by the number of calls answered (index = calls).
    pub lengths: Vec<u64>,
    /// Successful sessions ended in each 5-second period since the start (httperf's
    /// samples).
    pub per_5s: Vec<u64>,
}

impl SessionStats {
    fn merge(&mut self, o: &SessionStats) {
        self.ok += o.ok;
        self.failed += o.failed;
        self.life_ok_ns += o.life_ok_ns;
        self.life_failed_ns += o.life_failed_ns;
        for (v, o) in [
            (&mut self.lengths, &o.lengths),
            (&mut self.per_5s, &o.per_5s),
        ] {
            if v.len() < o.len() {
                v.resize(o.len(), 0);
            }
            for (a, b) in v.iter_mut().zip(o) {
                *a += b;
            }
        }
    }
}

impl Stats {
    /// Adds `o` (another thread's stats).
    pub fn merge(&mut self, o: &Stats) {
        for (a, b) in self.status.iter_mut().zip(&o.status) {
            *a += b;
        }
        for (a, b) in self.errors.iter_mut().zip(&o.errors) {
            *a += b;
        }
        for (a, b) in [
            (&mut self.connect, &o.connect),
            (&mut self.tcp_connect, &o.tcp_connect),
            (&mut self.tls_handshake, &o.tls_handshake),
            (&mut self.connect_per_req, &o.connect_per_req),
            (&mut self.waiting, &o.waiting),
            (&mut self.processing, &o.processing),
            (&mut self.service, &o.service),
            (&mut self.transfer, &o.transfer),
            (&mut self.conn_life, &o.conn_life),
        ] {
            a.merge(b);
        }
        self.conns_opened += o.conns_opened;
        self.tls_full += o.tls_full;
        self.tls_resumed += o.tls_resumed;
        if self.tls_info.is_none() {
            self.tls_info.clone_from(&o.tls_info);
        }
        if self.tls_error.is_none() {
            self.tls_error.clone_from(&o.tls_error);
        }
        self.conns_with_reply += o.conns_with_reply;
        self.replies_on_conns += o.replies_on_conns;
        self.max_open += o.max_open;
        self.requests_sent += o.requests_sent;
        self.responses += o.responses;
        self.keepalive_responses += o.keepalive_responses;
        self.keepalive_allowed += o.keepalive_allowed;
        self.header_bytes += o.header_bytes;
        self.body_bytes += o.body_bytes;
        self.footer_bytes += o.footer_bytes;
        // Length failures are counted against the first thread's document length.
        match (self.doc_len, o.doc_len) {
            (None, d) => {
                self.doc_len = d;
                self.length_mismatch += o.length_mismatch;
            }
            (Some(a), Some(b)) if a != b => {
                self.length_mismatch += o.responses - o.length_mismatch;
            }
            _ => self.length_mismatch += o.length_mismatch,
        }
        self.unfinished += o.unfinished;
        self.late_sends += o.late_sends;
        self.max_lag_ns = self.max_lag_ns.max(o.max_lag_ns);
        if self.server.is_none() {
            self.server.clone_from(&o.server);
        }
        self.retries += o.retries;
        self.max_burst = self.max_burst.max(o.max_burst);
        self.sessions.merge(&o.sessions);
    }

    /// Errors of every kind.
    pub fn error_total(&self) -> u64 {
        self.errors.iter().sum()
    }
}
