//! hostbench's own PostgreSQL client for the OLTP path (`--pgsql-client=lean`, the
//! default): protocol 3.0 over TCP (TLS per `sslmode`, rustls) or a unix socket; trust, cleartext, MD5
//! and SCRAM-SHA-256 authentication; statements prepared once (Parse + Describe) and run
//! with the extended protocol (Bind + Execute + Sync in one write); text queries with the
//! simple protocol.
//!
//! Why: the `postgres` crate (`--pgsql-client=crate`) runs each query through a tokio
//! runtime on the worker thread (a channel to the connection task, an `epoll_wait` per
//! reply, a heap row per result row): measured, that is where most of its client CPU goes.
//! This client blocks on the socket as libpq does.
//!
//! Invariants: one send buffer and one receive buffer per connection, reused by every
//! query, so a query allocates nothing once they have grown to the largest message.
//! Integer parameters go in binary when the server typed the parameter int2/int4/int8,
//! else as text; results come back in binary and are not decoded, but every `DataRow` is
//! walked: its column count must match the statement's and every value must lie inside the
//! message. Errors are classified as the crate client does (40P01, 40001, 23505 retry;
//! 57P01-57P03, class 08 and I/O errors lost). The password is used to answer the server's
//! challenge and is never printed.

use super::driver::{Arg, Conn, DbError, Driver, ErrClass, Res, Rows, Stmt, Target, TlsMode};
use super::wire::Stream;
use sha2::{Digest, Sha256};
use std::io::{self, BufReader, Read, Write};

/// Type OIDs sent in binary.
const INT8: u32 = 20;
const INT2: u32 = 21;
const INT4: u32 = 23;

/// Largest data row we accept from the server (PostgreSQL's own limit on a row is 1 GB).
const MAX_MESSAGE: usize = 1 << 30;
/// Largest message of any other type.
const MAX_OTHER: usize = 16 << 20;
/// Most SCRAM iterations we compute (PostgreSQL's default is 4096): more is a server making
/// the client burn CPU.
const MAX_SCRAM_ITERATIONS: u32 = 1 << 20;

struct LeanStmt {
    /// Server-side name, `hb<N>`, NUL-terminated.
    name: Vec<u8>,
    /// Type OID of each parameter, from the server's ParameterDescription.
    params: Vec<u32>,
    /// Result columns (0: the statement returns no rows).
    cols: usize,
}

/// One PostgreSQL connection speaking the protocol directly.
pub struct PgLeanConn {
    r: BufReader<Stream>,
    wbuf: Vec<u8>,
    msg: Vec<u8>,
    stmts: Vec<LeanStmt>,
    /// Next server-side statement name: never reused on a connection, even after
    /// [`Conn::clear`], so a name the server still holds cannot collide.
    next_name: u64,
    version: String,
    sink: u64,
}

fn lost(e: io::Error) -> DbError {
    DbError::new(
        ErrClass::Lost,
        format!("lost the connection to the PostgreSQL server: {e}"),
    )
}

fn proto(what: &str) -> DbError {
    DbError::new(
        ErrClass::Lost,
        format!("malformed message from the PostgreSQL server ({what})"),
    )
}

/// A message the client does not handle after `what`: COPY and a suspended portal are the
/// server's answer to SQL this client does not run (a clear error that stops the run);
/// anything else means the stream is out of step (lost: reconnect).
fn unexpected(t: u8, what: &str) -> DbError {
    match t {
        b'G' | b'H' | b'W' | b'd' | b'c' => DbError::new(
            ErrClass::Other,
            "the statement started a COPY, which hostbench's PostgreSQL client does not run",
        ),
        b's' => DbError::new(ErrClass::Other, "the portal was suspended (partial fetch)"),
        _ => proto(&format!(
            "unexpected message '{}' after {what}",
            (t as char).escape_default()
        )),
    }
}

fn setup(msg: String) -> DbError {
    DbError::new(ErrClass::Other, msg)
}

/// The class of a SQLSTATE, as sysbench's pgsql driver treats it.
pub fn classify(code: &str) -> ErrClass {
    match code {
        "40P01" | "40001" | "23505" => ErrClass::Retry,
        "57P01" | "57P02" | "57P03" => ErrClass::Lost,
        c if c.starts_with("08") => ErrClass::Lost,
        _ => ErrClass::Other,
    }
}

/// An ErrorResponse body (fields `<type byte><text>\0`, then `\0`) as a [`DbError`].
///
/// The severity decides whether the connection is gone: FATAL and PANIC end the session (the
/// server closes the socket after sending them), whatever the code. An ERROR leaves the
/// session usable, so it is retryable or not by its SQLSTATE but never "lost", even in
/// class 08 (08P01 at ERROR is a protocol mistake of the client, not a lost connection).
pub fn server_err(body: &[u8]) -> DbError {
    let (mut code, mut message, mut severity) = (String::new(), String::new(), String::new());
    let mut localized = String::new();
    for field in body.split(|&b| b == 0) {
        let Some((&t, v)) = field.split_first() else {
            continue;
        };
        // Startup errors may come in the server's encoding: keep what can be read.
        let v = String::from_utf8_lossy(v).into_owned();
        match t {
            b'C' => code = v,
            b'M' => message = v,
            b'V' => severity = v,
            b'S' => localized = v,
            _ => {}
        }
    }
    // V (9.6+) is never translated; S is, so it decides only when V is absent.
    let shown = if severity.is_empty() {
        localized.clone()
    } else {
        severity.clone()
    };
    let fatal = matches!(severity.as_str(), "FATAL" | "PANIC")
        || (severity.is_empty() && matches!(localized.as_str(), "FATAL" | "PANIC"));
    if message.is_empty() {
        message = "error without a message".into();
    }
    let class = match classify(&code) {
        _ if fatal => ErrClass::Lost,
        ErrClass::Lost => ErrClass::Other,
        c => c,
    };
    let severity = shown;
    DbError {
        class,
        code: code.to_string(),
        state: String::new(),
        message: if severity.is_empty() {
            message
        } else {
            format!("{severity}: {message}")
        },
    }
}

/// `?` placeholders to `$1, $2, …` (outside quoted strings).
pub fn number_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let (mut n, mut quoted) = (0, false);
    for ch in sql.chars() {
        match ch {
            '\'' => {
                quoted = !quoted;
                out.push(ch);
            }
            '?' if !quoted => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            _ => out.push(ch),
        }
    }
    out
}

/// The number at the end of a CommandComplete tag (`UPDATE 3`, `INSERT 0 1`, `SELECT 10`);
/// 0 for tags without one (`BEGIN`, `COMMIT`, `CREATE TABLE`).
pub fn tag_count(body: &[u8]) -> u64 {
    let tag = body.strip_suffix(&[0]).unwrap_or(body);
    let digits = tag.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits == tag.len() || tag[tag.len() - digits - 1] != b' ' {
        return 0;
    }
    tag[tag.len() - digits..].iter().fold(0u64, |n, &d| {
        n.wrapping_mul(10).wrapping_add((d - b'0') as u64)
    })
}

/// Walks a DataRow body: `ncols` values, each an i32 length (-1 = NULL) and that many
/// bytes, ending exactly where the message ends. Folds the lengths into `sink`.
pub fn check_row(body: &[u8], ncols: usize, sink: &mut u64) -> bool {
    if body.len() < 2 || u16::from_be_bytes([body[0], body[1]]) as usize != ncols {
        return false;
    }
    let mut at = 2usize;
    for _ in 0..ncols {
        let Some(l) = body.get(at..at + 4) else {
            return false;
        };
        let len = i32::from_be_bytes([l[0], l[1], l[2], l[3]]);
        at += 4;
        if len >= 0 {
            at += len as usize;
            if at > body.len() {
                return false;
            }
            *sink = sink.wrapping_add(len as u64);
        } else if len != -1 {
            return false;
        }
    }
    at == body.len()
}

/// Appends a (text-format) DataRow's values to `out`; false when the row is malformed or
/// its column count is not `out.fields`.
pub fn row_values(body: &[u8], out: &mut Rows) -> bool {
    if body.len() < 2 || u16::from_be_bytes([body[0], body[1]]) as usize != out.fields {
        return false;
    }
    let mut at = 2usize;
    for _ in 0..out.fields {
        let Some(l) = body.get(at..at + 4) else {
            return false;
        };
        let len = i32::from_be_bytes([l[0], l[1], l[2], l[3]]);
        at += 4;
        if len == -1 {
            out.push(None);
            continue;
        }
        let Some(v) = usize::try_from(len).ok().and_then(|n| body.get(at..at + n)) else {
            return false;
        };
        out.push(Some(v));
        at += v.len();
    }
    at == body.len()
}

/// MD5 authentication's answer: `"md5" + hex(md5(hex(md5(password + user)) + salt))`.
pub fn md5_password(user: &str, password: &str, salt: &[u8]) -> String {
    use md5::{Digest as _, Md5};
    let inner = hex(&Md5::new()
        .chain_update(password.as_bytes())
        .chain_update(user.as_bytes())
        .finalize());
    let outer = Md5::new()
        .chain_update(inner.as_bytes())
        .chain_update(salt)
        .finalize();
    format!("md5{}", hex(&outer))
}

fn hex(b: &[u8]) -> String {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &x in b {
        s.push(D[(x >> 4) as usize] as char);
        s.push(D[(x & 15) as usize] as char);
    }
    s
}

fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(k.map(|b| b ^ 0x36));
    for p in parts {
        inner.update(p);
    }
    let ih = inner.finalize();
    let mut outer = Sha256::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(ih);
    outer.finalize().into()
}

/// PBKDF2-HMAC-SHA-256 with one output block (SCRAM's SaltedPassword).
fn pbkdf2_sha256(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut u = hmac_sha256(password, &[salt, &1u32.to_be_bytes()]);
    let mut out = u;
    for _ in 1..iterations {
        u = hmac_sha256(password, &[&u]);
        for (o, x) in out.iter_mut().zip(u) {
            *o ^= x;
        }
    }
    out
}

use hostbench_core::base64::{decode as b64_decode, encode as b64_encode};

/// One SCRAM-SHA-256 exchange (RFC 5802/7677, no channel binding), client side.
pub struct Scram {
    password: Vec<u8>,
    nonce: String,
    /// `n=,r=<nonce>` (PostgreSQL ignores the SCRAM user name: the startup message's counts).
    client_first_bare: String,
    /// What the server must prove, once the client-final message is computed.
    server_signature: Option<[u8; 32]>,
    /// The server proved it knows the password.
    verified: bool,
}

impl Scram {
    /// Starts an exchange with the client's `nonce` (printable, no comma).
    pub fn new(password: &str, nonce: &str) -> Scram {
        Scram {
            password: password.as_bytes().to_vec(),
            nonce: nonce.to_string(),
            client_first_bare: format!("n=,r={nonce}"),
            server_signature: None,
            verified: false,
        }
    }

    /// The client-first message.
    pub fn client_first(&self) -> String {
        format!("n,,{}", self.client_first_bare)
    }

    /// The client-final message for the server-first message `sf`.
    pub fn client_final(&mut self, sf: &str) -> Result<String, ScramError> {
        let (mut r, mut s, mut i) = (None, None, None);
        for kv in sf.split(',') {
            match kv.split_once('=') {
                Some(("r", v)) => r = Some(v),
                Some(("s", v)) => s = Some(v),
                Some(("i", v)) => i = v.parse::<u32>().ok(),
                _ => {}
            }
        }
        let (Some(r), Some(s), Some(i)) = (r, s, i) else {
            return Err(ScramError::ServerFirst(sf.to_string()));
        };
        if !r.starts_with(&self.nonce) || r.len() == self.nonce.len() {
            return Err(ScramError::Nonce);
        }
        if i == 0 || i > MAX_SCRAM_ITERATIONS {
            return Err(ScramError::Iterations(i));
        }
        let salt = b64_decode(s).ok_or(ScramError::Salt)?;
        let salted = pbkdf2_sha256(&self.password, &salt, i);
        let client_key = hmac_sha256(&salted, &[b"Client Key"]);
        let stored_key: [u8; 32] = Sha256::digest(client_key).into();
        let without_proof = format!("c=biws,r={r}");
        let auth = [
            self.client_first_bare.as_bytes(),
            b",",
            sf.as_bytes(),
            b",",
            without_proof.as_bytes(),
        ];
        let sig = hmac_sha256(&stored_key, &auth);
        let proof: Vec<u8> = client_key.iter().zip(sig).map(|(a, b)| a ^ b).collect();
        let server_key = hmac_sha256(&salted, &[b"Server Key"]);
        self.server_signature = Some(hmac_sha256(&server_key, &auth));
        Ok(format!("{without_proof},p={}", b64_encode(&proof)))
    }

    /// Checks the server-final message (`v=<signature>`): the server knew the password.
    pub fn verify(&mut self, sf: &str) -> Result<(), ScramError> {
        if let Some(e) = sf.strip_prefix("e=") {
            return Err(ScramError::Refused(e.to_string()));
        }
        let Some(expected) = self.server_signature else {
            return Err(ScramError::Early);
        };
        match sf.strip_prefix("v=").and_then(b64_decode) {
            Some(v) if v == expected => {
                self.verified = true;
                Ok(())
            }
            _ => Err(ScramError::Signature),
        }
    }
}

/// What went wrong in a SCRAM-SHA-256 exchange.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScramError {
    /// The server-first message lacks r, s or i.
    #[error("unexpected SCRAM server-first message '{0}'")]
    ServerFirst(String),
    /// The server's nonce is not the client's extended.
    #[error("the server's SCRAM nonce does not extend the client's")]
    Nonce,
    /// An iteration count of 0 or beyond the accepted maximum.
    #[error("the server asks for {0} SCRAM iterations (accepted: 1 to {MAX_SCRAM_ITERATIONS})")]
    Iterations(u32),
    /// The salt is not base64.
    #[error("the server's SCRAM salt is not base64")]
    Salt,
    /// The server refused (`e=`).
    #[error("SCRAM authentication failed: {0}")]
    Refused(String),
    /// A server-final message before the client-final one.
    #[error("the server sent its SCRAM proof before the client's")]
    Early,
    /// The server's signature is wrong.
    #[error(
        "the server's SCRAM signature does not match (not the server the password belongs to?)"
    )]
    Signature,
}

fn nonce() -> String {
    let mut b = [0u8; 18];
    // SAFETY: getrandom writes at most b.len() bytes into b.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != b.len() as isize {
        // Fallback: the clock and the address of a local, hashed (still unique per exchange).
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let h = Sha256::digest(format!("{t}{:p}", &b));
        b.copy_from_slice(&h[..18]);
    }
    b64_encode(&b)
}

/// What to do about a certificate that does not verify.
pub(crate) const PG_TLS_FIX: &str = "give the CA certificate that signed it with sslrootcert=PATH in \
    the URL or --pgsql-sslrootcert=PATH, or use sslmode=require to encrypt without verifying \
    the server";

/// SSLRequest on a fresh TCP connection: 'S' starts the TLS handshake, 'N' leaves the
/// connection plaintext (an error when the mode requires TLS). Exactly one byte is read
/// before the handshake, so nothing the server (or a man in the middle) sent in plaintext
/// is taken as part of the TLS session.
fn negotiate_tls(
    mut stream: Stream,
    tls: &hostbench_tls::Opts,
    host: &str,
    port: u16,
) -> Result<Stream, DbError> {
    stream
        .write_all(&[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f])
        .map_err(lost)?;
    let mut b = [0u8; 1];
    stream.read_exact(&mut b).map_err(lost)?;
    match b[0] {
        b'S' => stream.start_tls(tls, host, PG_TLS_FIX),
        b'N' if !tls.mode.required() => Ok(stream),
        b'N' => Err(setup(format!(
            "the PostgreSQL server at {host}:{port} does not offer TLS (it answered 'N' to \
             SSLRequest) and sslmode={} requires it: enable ssl on the server, or use \
             sslmode=prefer or disable",
            tls.mode.pg_name()
        ))),
        // An ErrorResponse: a server older than 7.0, or not PostgreSQL at all.
        b'E' => Err(setup(format!(
            "the server at {host}:{port} refused SSLRequest with an error (a very old \
             PostgreSQL?); use sslmode=disable"
        ))),
        _ => Err(proto("answer to SSLRequest")),
    }
}

impl PgLeanConn {
    /// Connects to the PostgreSQL `target` and logs in.
    pub fn open(target: &Target) -> Result<PgLeanConn, DbError> {
        let Target::Pgsql {
            host,
            port,
            user,
            password,
            db,
            tls,
            ..
        } = target
        else {
            return Err(setup("not a PostgreSQL target".into()));
        };
        let mut stream = if host.starts_with('/') {
            Stream::unix(&format!("{host}/.s.PGSQL.{port}"))?
        } else {
            Stream::tcp(host, *port)?
        };
        // Unix sockets never use TLS (as libpq).
        if tls.mode != TlsMode::Disable && !stream.is_unix() {
            stream.login_timeout(true);
            stream = negotiate_tls(stream, tls, host, *port)
                .map_err(|e| super::wire::login_error(e, "PostgreSQL", 5432))?;
        }
        let mut c = PgLeanConn {
            r: BufReader::with_capacity(64 * 1024, stream),
            wbuf: Vec::with_capacity(4096),
            msg: Vec::with_capacity(64 * 1024),
            stmts: Vec::new(),
            next_name: 0,
            version: String::new(),
            sink: 0,
        };
        c.r.get_ref().login_timeout(true);
        let login = c.login(user, password, db);
        c.r.get_ref().login_timeout(false);
        login.map_err(|e| super::wire::login_error(e, "PostgreSQL", 5432))?;
        Ok(c)
    }

    /// Reads one message into `self.msg`; returns its type byte.
    #[inline]
    fn read(&mut self) -> Result<u8, DbError> {
        let mut h = [0u8; 5];
        self.r.read_exact(&mut h).map_err(lost)?;
        let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
        // Only a data row can be large; anything else this long means the stream is not
        // (or no longer) PostgreSQL's.
        let max = if h[0] == b'D' { MAX_MESSAGE } else { MAX_OTHER };
        if !(4..=max).contains(&len) {
            return Err(proto("message length"));
        }
        // The buffer grows as bytes arrive, not to what the header claims.
        self.msg.clear();
        let n = (&mut self.r)
            .take(len as u64 - 4)
            .read_to_end(&mut self.msg)
            .map_err(lost)?;
        if n != len - 4 {
            return Err(lost(io::ErrorKind::UnexpectedEof.into()));
        }
        Ok(h[0])
    }

    /// Starts a message of type `t` in the send buffer (length filled in by `end`).
    #[inline]
    fn begin(&mut self, t: u8) -> usize {
        self.wbuf.push(t);
        let at = self.wbuf.len();
        self.wbuf.extend_from_slice(&[0; 4]);
        at
    }

    #[inline]
    fn end(&mut self, at: usize) {
        let len = (self.wbuf.len() - at) as u32;
        self.wbuf[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }

    #[inline]
    fn flush(&mut self) -> Result<(), DbError> {
        let r = self.r.get_mut().write_all(&self.wbuf);
        self.wbuf.clear();
        r.map_err(lost)
    }

    fn login(&mut self, user: &str, password: &str, db: &str) -> Result<(), DbError> {
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[0; 4]);
        self.wbuf.extend_from_slice(&196608u32.to_be_bytes());
        for (k, v) in [
            ("user", user),
            ("database", db),
            ("application_name", "hostbench"),
            ("client_encoding", "UTF8"),
        ] {
            self.wbuf.extend_from_slice(k.as_bytes());
            self.wbuf.push(0);
            self.wbuf.extend_from_slice(v.as_bytes());
            self.wbuf.push(0);
        }
        self.wbuf.push(0);
        let len = self.wbuf.len() as u32;
        self.wbuf[..4].copy_from_slice(&len.to_be_bytes());
        self.flush()?;
        let mut scram: Option<Scram> = None;
        loop {
            let t = self.read()?;
            match t {
                b'R' => {
                    if self.msg.len() < 4 {
                        return Err(proto("short authentication request"));
                    }
                    let code =
                        u32::from_be_bytes([self.msg[0], self.msg[1], self.msg[2], self.msg[3]]);
                    let need_pw = |what: &str| {
                        if password.is_empty() {
                            Err(setup(format!(
                                "the server asks for a password ({what}) and none was given: add it to the URL (postgres://USER:PASSWORD@HOST/DB) or use --pgsql-password"
                            )))
                        } else {
                            Ok(())
                        }
                    };
                    match code {
                        0 => {
                            if scram.as_ref().is_some_and(|s| !s.verified) {
                                return Err(setup(
                                    "the server ended SCRAM-SHA-256 authentication without \
                                     proving it knows the password (is this the server the \
                                     password belongs to?)"
                                        .into(),
                                ));
                            }
                        }
                        3 | 5 if scram.is_some() => {
                            return Err(setup(
                                "the server switched from SCRAM-SHA-256 to a weaker password \
                                 method in the middle of authentication; refused"
                                    .into(),
                            ));
                        }
                        3 => {
                            need_pw("cleartext")?;
                            let at = self.begin(b'p');
                            self.wbuf.extend_from_slice(password.as_bytes());
                            self.wbuf.push(0);
                            self.end(at);
                            self.flush()?;
                        }
                        5 => {
                            need_pw("md5")?;
                            let salt = self.msg.get(4..8).ok_or_else(|| proto("md5 salt"))?;
                            let answer = md5_password(user, password, salt);
                            let at = self.begin(b'p');
                            self.wbuf.extend_from_slice(answer.as_bytes());
                            self.wbuf.push(0);
                            self.end(at);
                            self.flush()?;
                        }
                        10 => {
                            let mechs = &self.msg[4..];
                            if !mechs.split(|&b| b == 0).any(|m| m == b"SCRAM-SHA-256") {
                                return Err(setup(format!(
                                    "the server offers SASL mechanisms hostbench's lean client does not speak ({}); use --pgsql-client=crate",
                                    String::from_utf8_lossy(mechs)
                                        .trim_matches('\0')
                                        .replace('\0', ", ")
                                )));
                            }
                            need_pw("SCRAM-SHA-256")?;
                            let s = Scram::new(password, &nonce());
                            let first = s.client_first();
                            let at = self.begin(b'p');
                            self.wbuf.extend_from_slice(b"SCRAM-SHA-256\0");
                            self.wbuf
                                .extend_from_slice(&(first.len() as u32).to_be_bytes());
                            self.wbuf.extend_from_slice(first.as_bytes());
                            self.end(at);
                            self.flush()?;
                            scram = Some(s);
                        }
                        11 => {
                            let s = scram.as_mut().ok_or_else(|| proto("SASL continue"))?;
                            let sf = String::from_utf8_lossy(&self.msg[4..]).into_owned();
                            let fin = s.client_final(&sf).map_err(|e| setup(e.to_string()))?;
                            let at = self.begin(b'p');
                            self.wbuf.extend_from_slice(fin.as_bytes());
                            self.end(at);
                            self.flush()?;
                        }
                        12 => {
                            let s = scram.as_mut().ok_or_else(|| proto("SASL final"))?;
                            s.verify(&String::from_utf8_lossy(&self.msg[4..]))
                                .map_err(|e| setup(e.to_string()))?;
                        }
                        other => {
                            return Err(setup(format!(
                                "the server asks for an authentication method hostbench's lean client does not speak (code {other}: Kerberos, GSSAPI or SSPI); use --pgsql-client=crate"
                            )));
                        }
                    }
                }
                b'S' => {
                    let mut it = self.msg.split(|&b| b == 0);
                    if it.next() == Some(b"server_version") {
                        let v = String::from_utf8_lossy(it.next().unwrap_or(b"")).into_owned();
                        self.version = format!("PostgreSQL {v}");
                    }
                }
                b'E' => return Err(server_err(&self.msg)),
                b'Z' => return Ok(()),
                b'K' | b'N' => {}
                _ => return Err(proto("unexpected message during startup")),
            }
        }
    }

    /// Reads one reply up to ReadyForQuery: the data rows (each walked against the
    /// statement's `cols` when known), the last command tag's count, and whether a row
    /// description came (a simple query's result set). A server ERROR is returned once
    /// ReadyForQuery is read (the connection stays in step); a FATAL at once. `after` names
    /// the request in an "unexpected message" error.
    #[inline]
    fn reply(
        &mut self,
        cols: Option<usize>,
        after: &str,
        mut out: Option<&mut Rows>,
    ) -> Result<(u64, u64, bool), DbError> {
        let (mut rows, mut affected, mut has_rows) = (0u64, 0u64, false);
        let mut failed = None;
        loop {
            match self.read()? {
                b'D' => {
                    if let Some(n) = cols
                        && failed.is_none()
                        && !check_row(&self.msg, n, &mut self.sink)
                    {
                        return Err(proto("data row"));
                    }
                    if let Some(o) = out.as_deref_mut()
                        && failed.is_none()
                        && !row_values(&self.msg, o)
                    {
                        return Err(proto("data row"));
                    }
                    rows += 1;
                }
                b'T' => {
                    has_rows = true;
                    if let Some(o) = out.as_deref_mut() {
                        o.clear();
                        o.fields = self
                            .msg
                            .get(..2)
                            .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]))
                            as usize;
                    }
                }
                b'C' => affected = tag_count(&self.msg),
                b'E' => {
                    let e = server_err(&self.msg);
                    if e.class == ErrClass::Lost {
                        return Err(e);
                    }
                    failed = Some(e);
                }
                b'Z' => break,
                // BindComplete, notices, parameter changes, notifications, an empty query.
                b'2' | b'N' | b'S' | b'A' | b'I' => {}
                t => return Err(unexpected(t, after)),
            }
        }
        std::hint::black_box(self.sink);
        match failed {
            Some(e) => Err(e),
            None => Ok((rows, affected, has_rows)),
        }
    }
}

impl Conn for PgLeanConn {
    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError> {
        let mut name = format!("hb{}", self.next_name).into_bytes();
        self.next_name += 1;
        name.push(0);
        let sql = number_placeholders(sql);
        let at = self.begin(b'P');
        self.wbuf.extend_from_slice(&name);
        self.wbuf.extend_from_slice(sql.as_bytes());
        self.wbuf.push(0);
        self.wbuf.extend_from_slice(&0u16.to_be_bytes());
        self.end(at);
        let at = self.begin(b'D');
        self.wbuf.push(b'S');
        self.wbuf.extend_from_slice(&name);
        self.end(at);
        let at = self.begin(b'S');
        self.end(at);
        self.flush()?;
        let (mut params, mut cols) = (Vec::new(), 0usize);
        let mut failed = None;
        loop {
            match self.read()? {
                b'1' | b'n' | b'N' | b'S' | b'A' => {}
                b't' => {
                    let m = &self.msg;
                    let n = m.get(..2).map_or(0, |b| u16::from_be_bytes([b[0], b[1]])) as usize;
                    if m.len() != 2 + 4 * n {
                        return Err(proto("parameter description"));
                    }
                    params = m[2..]
                        .chunks_exact(4)
                        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                        .collect();
                }
                b'T' => {
                    cols = self
                        .msg
                        .get(..2)
                        .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]))
                        as usize;
                }
                b'E' => failed = Some(server_err(&self.msg)),
                b'Z' => break,
                _ => return Err(proto("unexpected message after Parse")),
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        self.stmts.push(LeanStmt { name, params, cols });
        Ok(self.stmts.len() - 1)
    }

    #[inline]
    fn exec(&mut self, s: Stmt, args: &[Arg<'_>]) -> Result<Res, DbError> {
        let cols = self.bind_execute(s, args, false)?;
        let (rows, affected, _) = self.reply(Some(cols), "Execute", None)?;
        Ok(if cols > 0 {
            Res::Rows(rows)
        } else {
            Res::Affected(affected)
        })
    }

    fn exec_rows(&mut self, s: Stmt, args: &[Arg<'_>], out: &mut Rows) -> Result<Res, DbError> {
        out.clear();
        let cols = self.bind_execute(s, args, true)?;
        out.fields = cols;
        let (rows, affected, _) = self.reply(Some(cols), "Execute", Some(out))?;
        Ok(if cols > 0 {
            Res::Rows(rows)
        } else {
            Res::Affected(affected)
        })
    }

    fn query(&mut self, sql: &str) -> Result<Res, DbError> {
        self.simple(sql, None)
    }

    fn query_rows(&mut self, sql: &str, out: &mut Rows) -> Result<Res, DbError> {
        out.clear();
        self.simple(sql, Some(out))
    }

    fn clear(&mut self) {
        self.stmts.clear();
    }

    fn driver(&self) -> Driver {
        Driver::Pgsql
    }

    fn server_version(&mut self) -> String {
        self.version.clone()
    }

    fn tls(&mut self) -> Option<String> {
        Some(self.r.get_ref().tls())
    }
}

impl PgLeanConn {
    /// Sends Bind + Execute + Sync for statement `s` with `args`, results in binary (or in
    /// text when `text`); returns the statement's column count.
    #[inline]
    fn bind_execute(&mut self, s: Stmt, args: &[Arg<'_>], text: bool) -> Result<usize, DbError> {
        let st = &self.stmts[s];
        if args.len() != st.params.len() {
            return Err(DbError::new(
                ErrClass::Other,
                format!(
                    "statement takes {} parameters, {} given",
                    st.params.len(),
                    args.len()
                ),
            ));
        }
        let cols = st.cols;
        // Bind: unnamed portal, this statement, per-parameter formats, values, results in
        // binary.
        self.wbuf.push(b'B');
        let at = self.wbuf.len();
        self.wbuf.extend_from_slice(&[0; 4]);
        self.wbuf.push(0);
        self.wbuf.extend_from_slice(&st.name);
        self.wbuf
            .extend_from_slice(&(args.len() as u16).to_be_bytes());
        for (a, &ty) in args.iter().zip(&st.params) {
            let binary = binary_int(a, ty);
            self.wbuf.extend_from_slice(&(binary as u16).to_be_bytes());
        }
        self.wbuf
            .extend_from_slice(&(args.len() as u16).to_be_bytes());
        for (a, &ty) in args.iter().zip(&st.params) {
            match *a {
                Arg::Int(v) if !binary_int(a, ty) => {
                    let mut b = itoa_buf();
                    let t = fmt_int(v as i64, &mut b);
                    self.wbuf.extend_from_slice(&(t.len() as u32).to_be_bytes());
                    self.wbuf.extend_from_slice(t);
                }
                Arg::Int(v) => match ty {
                    INT2 => {
                        self.wbuf.extend_from_slice(&2u32.to_be_bytes());
                        self.wbuf.extend_from_slice(&(v as i16).to_be_bytes());
                    }
                    INT4 => {
                        self.wbuf.extend_from_slice(&4u32.to_be_bytes());
                        self.wbuf.extend_from_slice(&v.to_be_bytes());
                    }
                    _ => {
                        self.wbuf.extend_from_slice(&8u32.to_be_bytes());
                        self.wbuf.extend_from_slice(&(v as i64).to_be_bytes());
                    }
                },
                Arg::Text(t) => {
                    self.wbuf.extend_from_slice(&(t.len() as u32).to_be_bytes());
                    self.wbuf.extend_from_slice(t.as_bytes());
                }
                Arg::Big(v) => match ty {
                    INT8 => {
                        self.wbuf.extend_from_slice(&8u32.to_be_bytes());
                        self.wbuf.extend_from_slice(&v.to_be_bytes());
                    }
                    INT4 if i32::try_from(v).is_ok() => {
                        self.wbuf.extend_from_slice(&4u32.to_be_bytes());
                        self.wbuf.extend_from_slice(&(v as i32).to_be_bytes());
                    }
                    INT2 if i16::try_from(v).is_ok() => {
                        self.wbuf.extend_from_slice(&2u32.to_be_bytes());
                        self.wbuf.extend_from_slice(&(v as i16).to_be_bytes());
                    }
                    _ => {
                        let mut b = itoa_buf();
                        let t = fmt_int(v, &mut b);
                        self.wbuf.extend_from_slice(&(t.len() as u32).to_be_bytes());
                        self.wbuf.extend_from_slice(t);
                    }
                },
                Arg::Double(v) => {
                    use std::io::Write as _;
                    let at = self.wbuf.len();
                    self.wbuf.extend_from_slice(&[0; 4]);
                    let _ = write!(self.wbuf, "{v:?}");
                    let n = (self.wbuf.len() - at - 4) as u32;
                    self.wbuf[at..at + 4].copy_from_slice(&n.to_be_bytes());
                }
                Arg::Null => self.wbuf.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        self.wbuf.extend_from_slice(&1u16.to_be_bytes());
        self.wbuf.extend_from_slice(&(!text as u16).to_be_bytes());
        self.end(at);
        // Execute the unnamed portal, all rows; Sync.
        self.wbuf
            .extend_from_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0, b'S', 0, 0, 0, 4]);
        self.flush()?;
        Ok(cols)
    }

    /// A text query (simple protocol); its rows' values go to `out` when given.
    fn simple(&mut self, sql: &str, out: Option<&mut Rows>) -> Result<Res, DbError> {
        let at = self.begin(b'Q');
        self.wbuf.extend_from_slice(sql.as_bytes());
        self.wbuf.push(0);
        self.end(at);
        self.flush()?;
        let (rows, affected, has_rows) = self.reply(None, "Query", out)?;
        Ok(if has_rows || rows > 0 {
            Res::Rows(rows)
        } else {
            Res::Affected(affected)
        })
    }
}

impl Drop for PgLeanConn {
    fn drop(&mut self) {
        // Terminate: the server ends the session at once instead of logging an unexpected EOF.
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[b'X', 0, 0, 0, 4]);
        let _ = self.r.get_mut().write_all(&self.wbuf);
        self.r.get_mut().close_tls();
    }
}

/// An integer goes in binary to an int2 (when it fits), int4 or int8 parameter; anything
/// else goes as text and the server converts it (or says it is out of range).
#[inline]
fn binary_int(a: &Arg<'_>, ty: u32) -> bool {
    match (a, ty) {
        (Arg::Int(v), INT2) => i16::try_from(*v).is_ok(),
        (Arg::Int(_), INT4 | INT8) => true,
        (Arg::Big(v), INT2) => i16::try_from(*v).is_ok(),
        (Arg::Big(v), INT4) => i32::try_from(*v).is_ok(),
        (Arg::Big(_), INT8) => true,
        _ => false,
    }
}

fn itoa_buf() -> [u8; 20] {
    [0; 20]
}

/// Formats `v` in decimal into the end of `b`, returning the digits.
fn fmt_int(v: i64, b: &mut [u8; 20]) -> &[u8] {
    let mut n = v.unsigned_abs();
    let mut i = b.len();
    loop {
        i -= 1;
        b[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        i -= 1;
        b[i] = b'-';
    }
    &b[i..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered() {
        assert_eq!(
            number_placeholders("SELECT c FROM t WHERE id BETWEEN ? AND ? AND c <> '?'"),
            "SELECT c FROM t WHERE id BETWEEN $1 AND $2 AND c <> '?'"
        );
    }

    #[test]
    fn command_tags_give_their_counts() {
        assert_eq!(tag_count(b"UPDATE 3\0"), 3);
        assert_eq!(tag_count(b"INSERT 0 1\0"), 1);
        assert_eq!(tag_count(b"SELECT 100\0"), 100);
        assert_eq!(tag_count(b"DELETE 0\0"), 0);
        assert_eq!(tag_count(b"BEGIN\0"), 0);
        assert_eq!(tag_count(b"CREATE TABLE\0"), 0);
        assert_eq!(tag_count(b"12\0"), 0);
    }

    #[test]
    fn rows_are_walked_to_their_end() {
        let mut s = 0;
        // 2 columns: 4 bytes, NULL.
        let row = [0, 2, 0, 0, 0, 4, 1, 2, 3, 4, 255, 255, 255, 255];
        assert!(check_row(&row, 2, &mut s));
        assert!(!check_row(&row, 3, &mut s), "column count");
        assert!(!check_row(&row[..row.len() - 1], 2, &mut s), "cut short");
        let mut long = row.to_vec();
        long.push(0);
        assert!(!check_row(&long, 2, &mut s), "trailing bytes");
        let over = [0, 1, 0, 0, 0, 9, 1];
        assert!(!check_row(&over, 1, &mut s), "value past the end");
        let neg = [0, 1, 255, 255, 255, 254];
        assert!(!check_row(&neg, 1, &mut s), "length -2");
    }

    #[test]
    fn integers_format_in_decimal() {
        let mut b = itoa_buf();
        assert_eq!(fmt_int(0, &mut b), b"0");
        assert_eq!(fmt_int(-42, &mut b), b"-42");
        assert_eq!(fmt_int(i64::MIN, &mut b), b"-9223372036854775808");
        assert_eq!(fmt_int(1234567, &mut b), b"1234567");
    }

    #[test]
    fn errors_keep_sqlstate_severity_and_class() {
        let e = server_err(
            b"SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0",
        );
        assert_eq!(e.code, "57P01");
        assert_eq!(e.class, ErrClass::Lost);
        assert_eq!(
            e.message,
            "FATAL: terminating connection due to administrator command"
        );
        assert_eq!(
            server_err(b"SERROR\0C40P01\0Mdeadlock\0\0").class,
            ErrClass::Retry
        );
        assert_eq!(server_err(b"C42P01\0Mno table\0\0").class, ErrClass::Other);
        // The severity decides "lost": FATAL whatever the code (V wins over the translated
        // S), never an ERROR, even in class 08.
        assert_eq!(server_err(b"C08006\0Mx\0\0").class, ErrClass::Other);
        assert_eq!(
            server_err(b"SFATAL\0VFATAL\0C53300\0Mtoo many\0\0").class,
            ErrClass::Lost
        );
        assert_eq!(server_err(b"SFATAL\0C08006\0Mx\0\0").class, ErrClass::Lost);
        assert_eq!(
            server_err(b"SERREUR\0VERROR\0C08P01\0Mbind message supplies 1 parameters\0\0").class,
            ErrClass::Other
        );
        // A message in another encoding is kept, not dropped.
        let e = server_err(b"SFATAL\0VFATAL\0C28000\0Mr\xf4le inconnu\0\0");
        assert!(e.message.contains("le inconnu"), "{}", e.message);
    }

    #[test]
    fn md5_answer_matches_postgres() {
        // "md5" || md5(md5(password || user) || salt), computed with Python's hashlib.
        assert_eq!(
            md5_password("sbtest", "secret", &[1, 2, 3, 4]),
            "md5296a6dee710ca91ac07f3d4180fad285"
        );
    }

    #[test]
    fn scram_matches_rfc7677() {
        // RFC 7677 §3's example (user "user", password "pencil"); PostgreSQL leaves n= empty,
        // which changes the client-first-bare and so the proof: the example's messages are
        // used with its own n=user.
        let mut s = Scram::new("pencil", "rOprNGfwEbeRWgbNEkqO");
        s.client_first_bare = "n=user,r=rOprNGfwEbeRWgbNEkqO".into();
        let sf = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let fin = s.client_final(sf).unwrap();
        assert_eq!(
            fin,
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        s.verify("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
        assert!(s.verify("v=AAAA").is_err());
        assert_eq!(
            s.verify("e=invalid-proof").unwrap_err(),
            ScramError::Refused("invalid-proof".into())
        );
        // A proof checked before the client's final message has nothing to match.
        let mut early = Scram::new("pencil", "abc");
        assert!(early.verify("v=AAAA").is_err() && !early.verified);
        // A server nonce that does not extend ours is refused, and absurd iteration counts.
        let mut t = Scram::new("pencil", "abc");
        assert!(t.client_final("r=xyz123,s=AAAA,i=4096").is_err());
        assert!(t.client_final("r=abc123,s=AAAA,i=0").is_err());
        assert!(t.client_final("r=abc123,s=AAAA,i=4000000000").is_err());
    }

    #[test]
    fn base64_roundtrips() {
        for n in 0..40u8 {
            let v: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
            assert_eq!(b64_decode(&b64_encode(&v)).unwrap(), v);
        }
        assert_eq!(b64_encode(b"pencil"), "cGVuY2ls");
        assert!(b64_decode("a*b").is_none());
    }
}
