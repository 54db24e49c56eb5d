//! hostbench's own MariaDB/MySQL client for the OLTP path (`--mysql-client=lean`, the
//! default): the wire protocol's handshake v10, `mysql_native_password` and the
//! `caching_sha2_password` fast path, `COM_QUERY`, `COM_STMT_PREPARE` and
//! `COM_STMT_EXECUTE` with the binary protocol, over TCP (TLS per `--mysql-ssl`, rustls) or
//! a unix socket.
//!
//! Invariants: one send buffer and one receive buffer per connection, reused by every
//! command, so a query allocates nothing once they have grown to the largest packet.
//! Column definitions are parsed once, at prepare time: executions skip them (MariaDB's
//! `MARIADB_CLIENT_CACHE_METADATA` spares even sending them when the server offers it).
//! Parameter types go with the first execution of a statement and again only when they
//! change. Result rows are walked in place: every value is bounds-checked against the
//! column's type and the row must end where its packet ends. Errors are classified as the
//! crate client does (1213/1020/1205 retry, 1927/2006/2013/2055/1053 and I/O errors lost).
//! The password is used to compute the auth response and is never printed.

use super::driver::{Arg, Conn, DbError, Driver, ErrClass, Res, Rows, Stmt, Target, TlsMode};
use super::wire::Stream;
use std::io::{self, BufReader, Read, Write};

const CLIENT_MYSQL: u64 = 1; // MySQL's CLIENT_LONG_PASSWORD; MariaDB 10.2+ servers clear it
const CLIENT_LONG_FLAG: u64 = 4;
const CLIENT_CONNECT_WITH_DB: u64 = 8;
const CLIENT_PROTOCOL_41: u64 = 512;
const CLIENT_SSL: u64 = 2048;
const CLIENT_TRANSACTIONS: u64 = 8192;
const CLIENT_SECURE_CONNECTION: u64 = 32768;
const CLIENT_MULTI_RESULTS: u64 = 1 << 17;
const CLIENT_PS_MULTI_RESULTS: u64 = 1 << 18;
const CLIENT_PLUGIN_AUTH: u64 = 1 << 19;
const CLIENT_DEPRECATE_EOF: u64 = 1 << 24;
/// MariaDB extended capability (bit 4 of the upper 32 bits).
const MARIADB_CLIENT_CACHE_METADATA: u64 = 1 << 36;
const SERVER_MORE_RESULTS_EXISTS: u16 = 8;

/// Largest payload of one frame; a payload this long continues in the next frame.
pub const MAX_PAYLOAD: usize = 0xFF_FFFF;

const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;

/// Binary-protocol type codes we send.
const TYPE_LONG: u8 = 3;
const TYPE_DOUBLE: u8 = 5;
const TYPE_NULL: u8 = 6;
const TYPE_LONGLONG: u8 = 8;
const TYPE_VAR_STRING: u8 = 253;

struct LeanStmt {
    id: u32,
    params: usize,
    /// Binary type code of each result column (from prepare, refreshed when an execution
    /// sends metadata).
    cols: Vec<u8>,
    /// The parameter types sent last; empty until the first execution.
    bound: Vec<u8>,
}

/// One MariaDB/MySQL connection speaking the protocol directly.
pub struct LeanConn {
    r: BufReader<Stream>,
    wbuf: Vec<u8>,
    pkt: Vec<u8>,
    seq: u8,
    caps: u64,
    stmts: Vec<LeanStmt>,
    version: String,
    sink: u64,
}

fn lost(e: io::Error) -> DbError {
    DbError::new(
        ErrClass::Lost,
        format!("lost the connection to the MySQL server: {e}"),
    )
}

fn proto(what: &str) -> DbError {
    DbError::new(
        ErrClass::Lost,
        format!("malformed packet from the MySQL server ({what})"),
    )
}

fn setup(msg: String) -> DbError {
    DbError::new(ErrClass::Other, msg)
}

/// The class of a server error code, as the crate client classifies it.
pub fn classify(code: u16) -> ErrClass {
    match code {
        1213 | 1020 | 1205 => ErrClass::Retry,
        1927 | 2006 | 2013 | 2055 | 1053 => ErrClass::Lost,
        _ => ErrClass::Other,
    }
}

/// An ERR packet (`0xFF`, code, optional `#SQLSTATE`, message) as a [`DbError`].
pub fn server_err(p: &[u8]) -> DbError {
    if p.len() < 3 {
        return proto("short error packet");
    }
    let code = u16::from_le_bytes([p[1], p[2]]);
    let (state, msg) = if p.len() >= 9 && p[3] == b'#' {
        (String::from_utf8_lossy(&p[4..9]).into_owned(), &p[9..])
    } else {
        (String::new(), &p[3..])
    };
    DbError {
        class: classify(code),
        code: code.to_string(),
        state,
        message: String::from_utf8_lossy(msg).into_owned(),
    }
}

/// Reads a length-encoded integer at `*at`; `None` for the NULL marker (0xFB) or when the
/// buffer is too short.
#[inline]
pub fn get_lenenc(p: &[u8], at: &mut usize) -> Option<u64> {
    let i = *at;
    let first = *p.get(i)?;
    let (v, n) = match first {
        0..=0xFA => (first as u64, 1),
        0xFC => (
            u16::from_le_bytes(p.get(i + 1..i + 3)?.try_into().ok()?) as u64,
            3,
        ),
        0xFD => {
            let b = p.get(i + 1..i + 4)?;
            (u32::from_le_bytes([b[0], b[1], b[2], 0]) as u64, 4)
        }
        0xFE => (u64::from_le_bytes(p.get(i + 1..i + 9)?.try_into().ok()?), 9),
        _ => return None,
    };
    *at = i + n;
    Some(v)
}

/// Appends `v` as a length-encoded integer.
#[inline]
pub fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    if v < 0xFB {
        out.push(v as u8);
    } else if v <= 0xFFFF {
        out.push(0xFC);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v <= 0xFF_FFFF {
        out.push(0xFD);
        out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xFE);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// True when column `i` of a binary row is NULL (the row's bitmap starts 2 bits in).
#[inline]
pub fn binary_row_null(bitmap: &[u8], i: usize) -> bool {
    let b = i + 2;
    bitmap[b / 8] & (1 << (b % 8)) != 0
}

/// Length of a binary row's NULL bitmap for `ncols` columns.
#[inline]
pub fn binary_row_bitmap_len(ncols: usize) -> usize {
    (ncols + 9) / 8
}

/// Splits `payload` into frames (4-byte header: 3-byte length, sequence id) appended to
/// `out`; a payload that ends on a frame boundary gets an empty last frame.
pub fn frame(payload: &[u8], seq: &mut u8, out: &mut Vec<u8>) {
    let mut rest = payload;
    loop {
        let n = rest.len().min(MAX_PAYLOAD);
        out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        out.push(*seq);
        *seq = seq.wrapping_add(1);
        out.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        if n < MAX_PAYLOAD {
            return;
        }
    }
}

/// Reads one packet into `out`, joining the frames of a payload of 16 MiB or more, and
/// checks the sequence ids.
pub fn read_packet<R: Read>(r: &mut R, seq: &mut u8, out: &mut Vec<u8>) -> io::Result<()> {
    out.clear();
    loop {
        let mut h = [0u8; 4];
        r.read_exact(&mut h)?;
        if h[3] != *seq {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "packets out of sequence",
            ));
        }
        *seq = seq.wrapping_add(1);
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        let at = out.len();
        out.resize(at + len, 0);
        r.read_exact(&mut out[at..])?;
        if len < MAX_PAYLOAD {
            return Ok(());
        }
    }
}

/// What the server's initial handshake says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    /// Server version string.
    pub version: String,
    /// Capabilities (MariaDB's extended ones in the upper 32 bits).
    pub caps: u64,
    /// The 20-byte scramble.
    pub scramble: Vec<u8>,
    /// The default auth plugin.
    pub plugin: String,
}

fn cstr(p: &[u8], at: &mut usize) -> Option<String> {
    let rest = p.get(*at..)?;
    let n = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    *at += (n + 1).min(rest.len());
    Some(String::from_utf8_lossy(&rest[..n]).into_owned())
}

/// The server's greeting is not a protocol-10 handshake ([`parse_handshake`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the server's greeting is not a MySQL protocol-10 handshake")]
pub struct HandshakeError;

/// Parses a protocol-10 handshake packet.
pub fn parse_handshake(p: &[u8]) -> Result<Handshake, HandshakeError> {
    let bad = || HandshakeError;
    if p.first() != Some(&10) {
        return Err(bad());
    }
    let mut at = 1;
    let version = cstr(p, &mut at).ok_or_else(bad)?;
    let need = |at: usize, n: usize| p.get(at..at + n).ok_or_else(bad);
    at += 4; // connection id
    let mut scramble = need(at, 8)?.to_vec();
    at += 9;
    let lo = need(at, 2)?;
    let mut caps = u16::from_le_bytes([lo[0], lo[1]]) as u64;
    at += 2 + 1 + 2; // caps, charset, status
    if let Ok(hi) = need(at, 2) {
        caps |= (u16::from_le_bytes([hi[0], hi[1]]) as u64) << 16;
        at += 2;
        let auth_len = *need(at, 1)?.first().unwrap_or(&0) as usize;
        at += 1 + 6;
        let ext = need(at, 4)?;
        if caps & CLIENT_MYSQL == 0 {
            caps |= (u32::from_le_bytes([ext[0], ext[1], ext[2], ext[3]]) as u64) << 32;
        }
        at += 4;
        if caps & CLIENT_SECURE_CONNECTION != 0 {
            let n = auth_len.saturating_sub(8).max(13);
            let part = need(at, n)?;
            // The second part is NUL-terminated: the scramble is 20 bytes in all.
            let part = &part[..part.iter().position(|&b| b == 0).unwrap_or(part.len())];
            scramble.extend_from_slice(part);
            at += n;
        }
    }
    let plugin = if caps & CLIENT_PLUGIN_AUTH != 0 {
        cstr(p, &mut at).unwrap_or_default()
    } else {
        String::new()
    };
    Ok(Handshake {
        version,
        caps,
        scramble,
        plugin,
    })
}

/// `mysql_native_password`: SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))); empty for no
/// password.
pub fn native_password(password: &str, scramble: &[u8]) -> Vec<u8> {
    use sha1::{Digest, Sha1};
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = Sha1::digest(password.as_bytes());
    let h2 = Sha1::digest(h1);
    let mut h = Sha1::new();
    h.update(&scramble[..scramble.len().min(20)]);
    h.update(h2);
    let h3 = h.finalize();
    h1.iter().zip(h3.iter()).map(|(a, b)| a ^ b).collect()
}

/// `caching_sha2_password`'s scramble: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + scramble);
/// empty for no password.
pub fn caching_sha2(password: &str, scramble: &[u8]) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = Sha256::digest(password.as_bytes());
    let h2 = Sha256::digest(h1);
    let mut h = Sha256::new();
    h.update(h2);
    h.update(&scramble[..scramble.len().min(20)]);
    let h3 = h.finalize();
    h1.iter().zip(h3.iter()).map(|(a, b)| a ^ b).collect()
}

fn auth_response(plugin: &str, password: &str, scramble: &[u8]) -> Result<Vec<u8>, DbError> {
    match plugin {
        "mysql_native_password" | "" => Ok(native_password(password, scramble)),
        "caching_sha2_password" => Ok(caching_sha2(password, scramble)),
        other => Err(setup(format!(
            "the server asks for the '{other}' authentication plugin, which hostbench's lean MySQL client does not speak (it speaks mysql_native_password and caching_sha2_password): give the user mysql_native_password or use --mysql-client=crate"
        ))),
    }
}

/// Bytes a binary-protocol value of `ty` takes at `p[at..]`, checked against the buffer;
/// `sink` folds in what was read so the walk cannot be optimised away.
#[inline]
fn binary_value_len(ty: u8, p: &[u8], at: usize, sink: &mut u64) -> Option<usize> {
    let fixed = match ty {
        1 => 1,
        2 | 13 => 2,
        3 | 9 | 4 => 4,
        8 | 5 => 8,
        6 => 0,
        7 | 10 | 11 | 12 => 1 + *p.get(at)? as usize,
        _ => {
            let mut i = at;
            let n = get_lenenc(p, &mut i)? as usize;
            let end = i.checked_add(n)?;
            if end > p.len() {
                return None;
            }
            *sink = sink.wrapping_add(n as u64);
            return Some(end - at);
        }
    };
    let b = p.get(at..at + fixed)?;
    if fixed == 4 && ty != 4 {
        *sink = sink.wrapping_add(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64);
    }
    Some(fixed)
}

/// Walks one binary-protocol result row in place: every non-NULL value must fit, and the
/// row must end where the packet ends.
pub fn check_binary_row(p: &[u8], cols: &[u8], sink: &mut u64) -> bool {
    let bm = binary_row_bitmap_len(cols.len());
    let Some(bitmap) = p.get(1..1 + bm) else {
        return false;
    };
    let mut at = 1 + bm;
    for (i, &ty) in cols.iter().enumerate() {
        if binary_row_null(bitmap, i) {
            continue;
        }
        match binary_value_len(ty, p, at, sink) {
            Some(n) => at += n,
            None => return false,
        }
    }
    at == p.len()
}

/// Walks one text-protocol row: `ncols` length-encoded strings or NULLs (0xFB).
pub fn check_text_row(p: &[u8], ncols: usize) -> bool {
    let mut at = 0;
    for _ in 0..ncols {
        if p.get(at) == Some(&0xFB) {
            at += 1;
            continue;
        }
        let Some(n) = get_lenenc(p, &mut at) else {
            return false;
        };
        at += n as usize;
    }
    at == p.len()
}

/// Appends a text-protocol row's `ncols` values to `out` (0xFB = NULL); false when the
/// row is malformed.
pub fn text_row_values(p: &[u8], ncols: usize, out: &mut Rows) -> bool {
    let mut at = 0;
    for _ in 0..ncols {
        if p.get(at) == Some(&0xFB) {
            at += 1;
            out.push(None);
            continue;
        }
        let Some(n) = get_lenenc(p, &mut at) else {
            return false;
        };
        let Some(v) = usize::try_from(n)
            .ok()
            .and_then(|n| p.get(at..at.checked_add(n)?))
        else {
            return false;
        };
        out.push(Some(v));
        at += v.len();
    }
    at == p.len()
}

/// The type code of a column definition packet (protocol 4.1), without allocating.
fn coldef_type(p: &[u8]) -> Option<u8> {
    let mut at = 0;
    for _ in 0..6 {
        let n = get_lenenc(p, &mut at)? as usize;
        at += n;
    }
    get_lenenc(p, &mut at)?;
    p.get(at + 6).copied()
}

/// What to do about a certificate that does not verify.
pub(crate) const MY_TLS_FIX: &str = "give the CA certificate that signed it with --mysql-ssl-ca=PATH \
    (ssl-ca=PATH in the URL), or use --mysql-ssl=REQUIRED to encrypt without verifying the \
    server";

/// The capabilities the client asks for, given the server's.
fn client_caps(server: u64, db: &str) -> u64 {
    let mut caps = CLIENT_MYSQL
        | CLIENT_LONG_FLAG
        | CLIENT_CONNECT_WITH_DB
        | CLIENT_PROTOCOL_41
        | CLIENT_TRANSACTIONS
        | CLIENT_SECURE_CONNECTION
        | CLIENT_MULTI_RESULTS
        | CLIENT_PS_MULTI_RESULTS
        | CLIENT_PLUGIN_AUTH
        | CLIENT_DEPRECATE_EOF
        | MARIADB_CLIENT_CACHE_METADATA;
    caps &= server;
    if db.is_empty() {
        caps &= !CLIENT_CONNECT_WITH_DB;
    }
    caps
}

/// Reads the server's greeting from the unbuffered socket and, when `tls` asks for it and
/// the server offers it (CLIENT_SSL), sends the SSL request and runs the TLS handshake.
/// Returns the stream, the greeting, the next sequence id and whether TLS is on. A server
/// without TLS is an error when the mode requires it. Unix sockets never use TLS.
fn greet(
    mut stream: Stream,
    tls: &hostbench_tls::Opts,
    host: &str,
    port: u16,
    db: &str,
) -> Result<(Stream, Vec<u8>, u8, bool), DbError> {
    let (mut seq, mut greeting) = (0u8, Vec::with_capacity(256));
    read_packet(&mut stream, &mut seq, &mut greeting).map_err(lost)?;
    if tls.mode == TlsMode::Disable || stream.is_unix() || greeting.first() == Some(&0xFF) {
        return Ok((stream, greeting, seq, false));
    }
    let hs = parse_handshake(&greeting).map_err(|e| setup(e.to_string()))?;
    if hs.caps & CLIENT_SSL == 0 {
        if tls.mode.required() {
            return Err(setup(format!(
                "the MySQL/MariaDB server at {host}:{port} does not offer TLS (no CLIENT_SSL in \
                 its greeting) and --mysql-ssl={} requires it: enable TLS on the server \
                 (ssl_cert, ssl_key), or use --mysql-ssl=PREFERRED or DISABLED",
                tls.mode.mysql_name()
            )));
        }
        return Ok((stream, greeting, seq, false));
    }
    let caps = client_caps(hs.caps, db) | CLIENT_SSL;
    let mut p = Vec::with_capacity(36);
    p.extend_from_slice(&[32, 0, 0, seq]);
    p.extend_from_slice(&(caps as u32).to_le_bytes());
    p.extend_from_slice(&(MAX_PAYLOAD as u32).to_le_bytes());
    p.push(45); // utf8mb4_general_ci
    p.extend_from_slice(&[0; 19]);
    p.extend_from_slice(&((caps >> 32) as u32).to_le_bytes());
    stream.write_all(&p).map_err(lost)?;
    seq = seq.wrapping_add(1);
    let stream = stream.start_tls(tls, host, MY_TLS_FIX)?;
    Ok((stream, greeting, seq, true))
}

impl LeanConn {
    /// Connects to the MariaDB/MySQL `target` and logs in.
    pub fn open(target: &Target) -> Result<LeanConn, DbError> {
        let Target::Mysql {
            host,
            port,
            socket,
            user,
            password,
            db,
            tls,
            ..
        } = target
        else {
            return Err(setup("not a MySQL target".into()));
        };
        let stream = if socket.is_empty() {
            Stream::tcp(host, *port)?
        } else {
            Stream::unix(socket)?
        };
        stream.login_timeout(true);
        let (stream, greeting, seq, ssl) = greet(stream, tls, host, *port, db)
            .map_err(|e| super::wire::login_error(e, "MySQL/MariaDB", 3306))?;
        let mut c = LeanConn {
            r: BufReader::with_capacity(64 * 1024, stream),
            wbuf: Vec::with_capacity(4096),
            pkt: greeting,
            seq,
            caps: 0,
            stmts: Vec::new(),
            version: String::new(),
            sink: 0,
        };
        let login = c.login(user, password, db, ssl);
        c.r.get_ref().login_timeout(false);
        login.map_err(|e| super::wire::login_error(e, "MySQL/MariaDB", 3306))?;
        Ok(c)
    }

    /// True when the server agreed to skip result metadata it already sent
    /// (`MARIADB_CLIENT_CACHE_METADATA`, MariaDB 10.6+).
    pub fn caches_metadata(&self) -> bool {
        self.caps & MARIADB_CLIENT_CACHE_METADATA != 0
    }

    #[inline]
    fn read(&mut self) -> Result<(), DbError> {
        read_packet(&mut self.r, &mut self.seq, &mut self.pkt).map_err(lost)
    }

    /// Starts a packet in the send buffer (header filled in by [`LeanConn::send`]).
    #[inline]
    fn start(&mut self) {
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[0, 0, 0, 0]);
    }

    /// Sends the packet in the send buffer with the current sequence id.
    #[inline]
    fn send(&mut self) -> Result<(), DbError> {
        let n = self.wbuf.len() - 4;
        if n < MAX_PAYLOAD {
            self.wbuf[..3].copy_from_slice(&(n as u32).to_le_bytes()[..3]);
            self.wbuf[3] = self.seq;
            self.seq = self.seq.wrapping_add(1);
            self.r.get_mut().write_all(&self.wbuf).map_err(lost)
        } else {
            let mut out = Vec::with_capacity(n + n / MAX_PAYLOAD * 4 + 8);
            frame(&self.wbuf[4..], &mut self.seq, &mut out);
            self.r.get_mut().write_all(&out).map_err(lost)
        }
    }

    /// Logs in after [`greet`]: the greeting is in `self.pkt`; `ssl` = TLS is on.
    fn login(&mut self, user: &str, password: &str, db: &str, ssl: bool) -> Result<(), DbError> {
        if self.pkt.first() == Some(&0xFF) {
            return Err(server_err(&self.pkt));
        }
        let hs = parse_handshake(&self.pkt).map_err(|e| setup(e.to_string()))?;
        if hs.caps & CLIENT_PROTOCOL_41 == 0 || hs.caps & CLIENT_SECURE_CONNECTION == 0 {
            return Err(setup(format!(
                "server {} is too old for hostbench's lean MySQL client (no protocol 4.1); use --mysql-client=crate",
                hs.version
            )));
        }
        let mut caps = client_caps(hs.caps, db);
        if ssl {
            caps |= CLIENT_SSL;
        }
        self.caps = caps;
        self.version = hs
            .version
            .strip_prefix("5.5.5-")
            .unwrap_or(&hs.version)
            .to_string();
        let mut plugin = if hs.plugin.is_empty() {
            "mysql_native_password".to_string()
        } else {
            hs.plugin.clone()
        };
        let mut scramble = hs.scramble.clone();
        // The greeting's default plugin may be one we do not speak; answer with
        // mysql_native_password then and let the server switch us if it must.
        let auth = match auth_response(&plugin, password, &scramble) {
            Ok(a) => a,
            Err(_) => {
                plugin = "mysql_native_password".into();
                native_password(password, &scramble)
            }
        };
        self.start();
        self.wbuf.extend_from_slice(&(caps as u32).to_le_bytes());
        self.wbuf
            .extend_from_slice(&(MAX_PAYLOAD as u32).to_le_bytes());
        self.wbuf.push(45); // utf8mb4_general_ci
        self.wbuf.extend_from_slice(&[0; 19]);
        self.wbuf
            .extend_from_slice(&((caps >> 32) as u32).to_le_bytes());
        self.wbuf.extend_from_slice(user.as_bytes());
        self.wbuf.push(0);
        self.wbuf.push(auth.len() as u8);
        self.wbuf.extend_from_slice(&auth);
        if caps & CLIENT_CONNECT_WITH_DB != 0 {
            self.wbuf.extend_from_slice(db.as_bytes());
            self.wbuf.push(0);
        }
        if caps & CLIENT_PLUGIN_AUTH != 0 {
            self.wbuf.extend_from_slice(plugin.as_bytes());
            self.wbuf.push(0);
        }
        self.send()?;
        loop {
            self.read()?;
            match self.pkt.first() {
                Some(0x00) => return Ok(()),
                Some(0xFF) => return Err(server_err(&self.pkt)),
                Some(0xFE) => {
                    // Auth switch: plugin name, then its data (NUL-terminated).
                    let mut at = 1;
                    plugin = cstr(&self.pkt, &mut at).unwrap_or_default();
                    let data = &self.pkt[at.min(self.pkt.len())..];
                    scramble =
                        data[..data.iter().position(|&b| b == 0).unwrap_or(data.len())].to_vec();
                    let auth = auth_response(&plugin, password, &scramble)?;
                    self.start();
                    self.wbuf.extend_from_slice(&auth);
                    self.send()?;
                }
                Some(0x01) if plugin == "caching_sha2_password" => match self.pkt.get(1) {
                    Some(3) => {} // fast auth succeeded; the OK follows
                    // Full authentication: over TLS or a unix socket (a secure transport,
                    // as MySQL's clients treat it) the password goes in clear, NUL-ended.
                    Some(4) if ssl || self.r.get_ref().is_unix() => {
                        self.start();
                        self.wbuf.extend_from_slice(password.as_bytes());
                        self.wbuf.push(0);
                        self.send()?;
                    }
                    Some(4) => {
                        return Err(setup(format!(
                            "user '{user}' needs caching_sha2_password's full authentication, which sends the password and so needs TLS (or RSA key exchange, which hostbench's lean MySQL client does not do): use --mysql-ssl=REQUIRED (or ssl-mode=REQUIRED in the URL), give the user mysql_native_password, or use --mysql-client=crate"
                        )));
                    }
                    _ => return Err(proto("caching_sha2_password exchange")),
                },
                _ => {
                    return Err(setup(format!(
                        "unexpected reply during authentication with '{plugin}'; use --mysql-client=crate"
                    )));
                }
            }
        }
    }

    /// Status flags of the OK or EOF packet that ends a result set.
    fn end_status(&self) -> u16 {
        let p = &self.pkt;
        if self.caps & CLIENT_DEPRECATE_EOF != 0 {
            let mut at = 1;
            let _ = get_lenenc(p, &mut at);
            let _ = get_lenenc(p, &mut at);
            p.get(at..at + 2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .unwrap_or(0)
        } else {
            p.get(3..5)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .unwrap_or(0)
        }
    }

    /// Reads a command's whole response; `stmt` = the prepared statement whose binary rows
    /// these are (None: text rows of COM_QUERY).
    fn read_result(
        &mut self,
        stmt: Option<usize>,
        mut out: Option<&mut Rows>,
    ) -> Result<Res, DbError> {
        let mut rows = 0u64;
        let mut sets = false;
        let mut affected = 0u64;
        loop {
            self.read()?;
            match self.pkt.first() {
                Some(0x00) => {
                    let p = &self.pkt;
                    let mut at = 1;
                    affected += get_lenenc(p, &mut at).ok_or_else(|| proto("OK"))?;
                    get_lenenc(p, &mut at).ok_or_else(|| proto("OK"))?;
                    let status = p
                        .get(at..at + 2)
                        .map(|b| u16::from_le_bytes([b[0], b[1]]))
                        .unwrap_or(0);
                    if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                        break;
                    }
                    continue;
                }
                Some(0xFF) => return Err(server_err(&self.pkt)),
                None => return Err(proto("empty packet")),
                _ => {}
            }
            let mut at = 0;
            let ncols =
                get_lenenc(&self.pkt, &mut at).ok_or_else(|| proto("column count"))? as usize;
            let meta = if self.caps & MARIADB_CLIENT_CACHE_METADATA != 0 {
                self.pkt.get(at) != Some(&0)
            } else {
                true
            };
            if meta {
                for i in 0..ncols {
                    self.read()?;
                    if let Some(s) = stmt {
                        let ty =
                            coldef_type(&self.pkt).ok_or_else(|| proto("column definition"))?;
                        let cols = &mut self.stmts[s].cols;
                        if cols.len() != ncols {
                            cols.resize(ncols, 0);
                        }
                        cols[i] = ty;
                    }
                }
                if self.caps & CLIENT_DEPRECATE_EOF == 0 {
                    self.read()?;
                }
            }
            if let Some(s) = stmt
                && self.stmts[s].cols.len() != ncols
            {
                return Err(proto("column count differs from the prepared statement's"));
            }
            sets = true;
            if let Some(o) = out.as_deref_mut() {
                o.clear();
                // Binary rows (a prepared statement's) are counted, not read: sysbench's
                // MySQL driver gives them no fields either.
                o.fields = if stmt.is_none() { ncols } else { 0 };
            }
            let status = loop {
                self.read()?;
                let p = &self.pkt;
                match p.first() {
                    Some(0xFE) if p.len() < MAX_PAYLOAD => break self.end_status(),
                    Some(0xFF) => return Err(server_err(p)),
                    _ => {}
                }
                let ok = match stmt {
                    Some(s) => {
                        p.first() == Some(&0)
                            && check_binary_row(p, &self.stmts[s].cols, &mut self.sink)
                    }
                    None => match out.as_deref_mut() {
                        Some(o) => text_row_values(p, ncols, o),
                        None => check_text_row(p, ncols),
                    },
                };
                if !ok {
                    return Err(proto("result row"));
                }
                rows += 1;
            };
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                break;
            }
        }
        std::hint::black_box(self.sink);
        Ok(if sets {
            Res::Rows(rows)
        } else {
            Res::Affected(affected)
        })
    }
}

#[inline]
fn arg_type(a: &Arg<'_>) -> u8 {
    match a {
        Arg::Int(_) => TYPE_LONG,
        Arg::Text(_) => TYPE_VAR_STRING,
        Arg::Big(_) => TYPE_LONGLONG,
        Arg::Double(_) => TYPE_DOUBLE,
        Arg::Null => TYPE_NULL,
    }
}

impl LeanConn {
    fn prepare_stmt(&mut self, sql: &str) -> Result<Stmt, DbError> {
        self.seq = 0;
        self.start();
        self.wbuf.push(COM_STMT_PREPARE);
        self.wbuf.extend_from_slice(sql.as_bytes());
        self.send()?;
        self.read()?;
        let p = &self.pkt;
        match p.first() {
            Some(0x00) if p.len() >= 12 => {}
            Some(0xFF) => return Err(server_err(p)),
            _ => return Err(proto("prepare reply")),
        }
        let id = u32::from_le_bytes([p[1], p[2], p[3], p[4]]);
        let ncols = u16::from_le_bytes([p[5], p[6]]) as usize;
        let params = u16::from_le_bytes([p[7], p[8]]) as usize;
        let eof = self.caps & CLIENT_DEPRECATE_EOF == 0;
        if params > 0 {
            for _ in 0..params {
                self.read()?;
            }
            if eof {
                self.read()?;
            }
        }
        let mut cols = Vec::with_capacity(ncols);
        if ncols > 0 {
            for _ in 0..ncols {
                self.read()?;
                cols.push(coldef_type(&self.pkt).ok_or_else(|| proto("column definition"))?);
            }
            if eof {
                self.read()?;
            }
        }
        self.stmts.push(LeanStmt {
            id,
            params,
            cols,
            bound: Vec::with_capacity(params),
        });
        Ok(self.stmts.len() - 1)
    }

    /// Sends COM_STMT_EXECUTE for statement `s` with `args`.
    #[inline]
    fn send_execute(&mut self, s: Stmt, args: &[Arg<'_>]) -> Result<(), DbError> {
        let st = &mut self.stmts[s];
        if args.len() != st.params {
            return Err(setup(format!(
                "statement takes {} parameters, {} given",
                st.params,
                args.len()
            )));
        }
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[0, 0, 0, 0, COM_STMT_EXECUTE]);
        self.wbuf.extend_from_slice(&st.id.to_le_bytes());
        self.wbuf.push(0); // no cursor
        self.wbuf.extend_from_slice(&1u32.to_le_bytes());
        if !args.is_empty() {
            // The NULL bitmap: a bit per NULL parameter.
            let bm = self.wbuf.len();
            self.wbuf
                .resize(self.wbuf.len() + args.len().div_ceil(8), 0);
            for (i, a) in args.iter().enumerate() {
                if matches!(a, Arg::Null) {
                    self.wbuf[bm + i / 8] |= 1 << (i % 8);
                }
            }
            let same = st.bound.len() == args.len()
                && args.iter().zip(&st.bound).all(|(a, t)| arg_type(a) == *t);
            self.wbuf.push(!same as u8);
            if !same {
                st.bound.clear();
                for a in args {
                    let t = arg_type(a);
                    st.bound.push(t);
                    self.wbuf.extend_from_slice(&[t, 0]);
                }
            }
            for a in args {
                match a {
                    Arg::Int(v) => self.wbuf.extend_from_slice(&v.to_le_bytes()),
                    Arg::Text(t) => {
                        put_lenenc(&mut self.wbuf, t.len() as u64);
                        self.wbuf.extend_from_slice(t.as_bytes());
                    }
                    Arg::Big(v) => self.wbuf.extend_from_slice(&v.to_le_bytes()),
                    Arg::Double(v) => self.wbuf.extend_from_slice(&v.to_le_bytes()),
                    Arg::Null => {}
                }
            }
        }
        self.seq = 0;
        self.send()?;
        Ok(())
    }

    /// Sends COM_QUERY with `sql`.
    fn send_query(&mut self, sql: &str) -> Result<(), DbError> {
        self.seq = 0;
        self.start();
        self.wbuf.push(COM_QUERY);
        self.wbuf.extend_from_slice(sql.as_bytes());
        self.send()
    }
}

impl Conn for LeanConn {
    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError> {
        self.prepare_stmt(sql)
    }

    #[inline]
    fn exec(&mut self, s: Stmt, args: &[Arg<'_>]) -> Result<Res, DbError> {
        self.send_execute(s, args)?;
        self.read_result(Some(s), None)
    }

    fn exec_rows(&mut self, s: Stmt, args: &[Arg<'_>], out: &mut Rows) -> Result<Res, DbError> {
        out.clear();
        self.send_execute(s, args)?;
        self.read_result(Some(s), Some(out))
    }

    fn query(&mut self, sql: &str) -> Result<Res, DbError> {
        self.send_query(sql)?;
        self.read_result(None, None)
    }

    fn query_rows(&mut self, sql: &str, out: &mut Rows) -> Result<Res, DbError> {
        out.clear();
        self.send_query(sql)?;
        self.read_result(None, Some(out))
    }

    fn clear(&mut self) {
        self.stmts.clear();
    }

    fn driver(&self) -> Driver {
        Driver::Mysql
    }

    fn server_version(&mut self) -> String {
        format!("MySQL/MariaDB {}", self.version)
    }

    fn tls(&mut self) -> Option<String> {
        Some(self.r.get_ref().tls())
    }
}

impl Drop for LeanConn {
    fn drop(&mut self) {
        // COM_QUIT is not sent (the server takes the closed socket as the end, as before);
        // a TLS session still says close_notify.
        self.r.get_mut().close_tls();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trips_at_every_width() {
        for v in [
            0u64,
            1,
            250,
            251,
            252,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_lenenc(&mut b, v);
            let want = match v {
                0..=250 => 1,
                251..=0xFFFF => 3,
                0x1_0000..=0xFF_FFFF => 4,
                _ => 9,
            };
            assert_eq!(b.len(), want, "{v}");
            let mut at = 0;
            assert_eq!(get_lenenc(&b, &mut at), Some(v));
            assert_eq!(at, b.len());
            // Truncated: no value, position unchanged.
            let mut at = 0;
            if b.len() > 1 {
                assert_eq!(get_lenenc(&b[..b.len() - 1], &mut at), None);
                assert_eq!(at, 0);
            }
        }
        let mut at = 0;
        assert_eq!(get_lenenc(&[0xFB], &mut at), None, "NULL marker");
        assert_eq!(get_lenenc(&[0xFF], &mut at), None);
    }

    #[test]
    fn binary_row_null_bitmap_starts_two_bits_in() {
        assert_eq!(binary_row_bitmap_len(1), 1);
        assert_eq!(binary_row_bitmap_len(6), 1);
        assert_eq!(binary_row_bitmap_len(7), 2);
        // Columns 0 and 6 NULL: bits 2 and 8.
        let bm = [0b0000_0100, 0b0000_0001];
        let nulls: Vec<usize> = (0..8).filter(|&i| binary_row_null(&bm, i)).collect();
        assert_eq!(nulls, vec![0, 6]);
        // A row (LONG, VAR_STRING, LONGLONG) with the string NULL.
        let mut row = vec![0u8, 0b0000_1000];
        row.extend_from_slice(&7u32.to_le_bytes());
        row.extend_from_slice(&9u64.to_le_bytes());
        let mut sink = 0;
        assert!(check_binary_row(&row, &[3, 253, 8], &mut sink));
        // Not NULL: the string must be there.
        row[1] = 0;
        assert!(!check_binary_row(&row, &[3, 253, 8], &mut sink));
        let mut row = vec![0u8, 0];
        row.extend_from_slice(&7u32.to_le_bytes());
        put_lenenc(&mut row, 3);
        row.extend_from_slice(b"abc");
        row.extend_from_slice(&9u64.to_le_bytes());
        assert!(check_binary_row(&row, &[3, 253, 8], &mut sink));
        row.push(0);
        assert!(
            !check_binary_row(&row, &[3, 253, 8], &mut sink),
            "trailing byte"
        );
        assert!(!check_binary_row(&row[..6], &[3, 253, 8], &mut sink));
        assert!(check_text_row(&[1, b'x', 0xFB], 2));
        assert!(!check_text_row(&[2, b'x'], 1));
    }

    #[test]
    fn frames_split_and_join_at_the_16_mib_boundary() {
        for len in [
            0usize,
            5,
            MAX_PAYLOAD - 1,
            MAX_PAYLOAD,
            MAX_PAYLOAD + 1,
            2 * MAX_PAYLOAD,
        ] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let mut wire = Vec::new();
            let mut seq = 3;
            frame(&payload, &mut seq, &mut wire);
            let frames = len / MAX_PAYLOAD + 1;
            assert_eq!(wire.len(), len + 4 * frames, "{len}");
            assert_eq!(seq, 3 + frames as u8);
            let mut r = &wire[..];
            let mut rseq = 3;
            let mut out = Vec::new();
            read_packet(&mut r, &mut rseq, &mut out).unwrap();
            assert!(out == payload, "{len}");
            assert!(r.is_empty());
            assert_eq!(rseq, seq);
        }
        // A wrong sequence id is refused.
        let mut wire = Vec::new();
        frame(b"hi", &mut 1, &mut wire);
        let mut out = Vec::new();
        assert!(read_packet(&mut &wire[..], &mut 0, &mut out).is_err());
    }

    #[test]
    fn handshake_and_scrambles() {
        let mut p = vec![10u8];
        p.extend_from_slice(b"5.5.5-10.11.19-MariaDB\0");
        p.extend_from_slice(&7u32.to_le_bytes());
        p.extend_from_slice(b"abcdefgh\0");
        let caps = (CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH) as u32;
        p.extend_from_slice(&(caps as u16).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&2u16.to_le_bytes());
        p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0; 6]);
        p.extend_from_slice(&16u32.to_le_bytes()); // CACHE_METADATA
        p.extend_from_slice(b"ijklmnopqrst\0");
        p.extend_from_slice(b"mysql_native_password\0");
        let h = parse_handshake(&p).unwrap();
        assert_eq!(h.version, "5.5.5-10.11.19-MariaDB");
        assert_eq!(h.scramble, b"abcdefghijklmnopqrst");
        assert_eq!(h.plugin, "mysql_native_password");
        assert!(h.caps & MARIADB_CLIENT_CACHE_METADATA != 0);
        assert!(parse_handshake(&p[..20]).is_err());
        assert_eq!(parse_handshake(b"\x09").unwrap_err(), HandshakeError);
        // Known answers (computed with Python's hashlib for this scramble).
        assert_eq!(
            hex(&native_password("secret", b"abcdefghijklmnopqrst")),
            NATIVE_KAT
        );
        assert_eq!(
            hex(&caching_sha2("secret", b"abcdefghijklmnopqrst")),
            SHA2_KAT
        );
        assert!(native_password("", b"abcdefghijklmnopqrst").is_empty());
    }

    const NATIVE_KAT: &str = "8817c50fa779daef010ee7577825b0847df9842e";
    const SHA2_KAT: &str = "c76e2898612a4cf042c77fa8c4702c4c64c0c2c557c53c4d75595aaa6abae809";

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn error_packets_classify() {
        let mut p = vec![0xFF];
        p.extend_from_slice(&1213u16.to_le_bytes());
        p.extend_from_slice(b"#40001Deadlock found");
        let e = server_err(&p);
        assert_eq!(
            (e.class, e.code.as_str(), e.message.as_str()),
            (ErrClass::Retry, "1213", "Deadlock found")
        );
        p[1..3].copy_from_slice(&1062u16.to_le_bytes());
        assert_eq!(server_err(&p).class, ErrClass::Other);
        p[1..3].copy_from_slice(&1927u16.to_le_bytes());
        assert_eq!(server_err(&p).class, ErrClass::Lost);
        assert_eq!(server_err(&[0xFF]).class, ErrClass::Lost);
    }
}
