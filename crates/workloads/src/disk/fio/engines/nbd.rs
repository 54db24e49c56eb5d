//! fio's `nbd` engine (`engines/nbd.c`): the job's I/Os are requests to a Network Block
//! Device server; its one "file" is the server's export, whose size is the file's size.
//!
//! fio uses libnbd; hostbench speaks the NBD protocol itself (the protocol is
//! NetworkBlockDevice's `doc/proto.md`):
//! - `uri` names the server as libnbd's `nbd_connect_uri` reads it: `nbd://host[:port][/export]`
//!   (TCP, port 10809 by default, an IPv6 address in brackets) or
//!   `nbd+unix:///[export]?socket=PATH` (a unix socket); the export name is the path after
//!   the first `/`, percent-decoded (empty: the server's default export);
//! - the fixed newstyle handshake, `NBD_OPT_GO` for the export, `NBD_OPT_EXPORT_NAME` when the
//!   server does not know `NBD_OPT_GO`; simple replies only (no structured replies);
//! - reads are `NBD_CMD_READ`, writes `NBD_CMD_WRITE`, trims `NBD_CMD_TRIM`, `fsync`/
//!   `end_fsync` `NBD_CMD_FLUSH`; a trim or a flush the export does not offer, or a write to a
//!   read-only export, fails with EINVAL/EPERM before it is sent (as libnbd refuses them);
//! - up to `iodepth` requests in flight on the connection, each named by its slot (the NBD
//!   handle), their replies matched by handle in whatever order they come;
//! - a server's error reply is the I/O's error (NBD's error values are Linux errnos).
//!
//! Where hostbench differs, on purpose: connecting and the handshake give up after 10 s, a
//! reply awaited 60 s is an error (ETIMEDOUT; libnbd waits for ever); a trim is sent once
//! nothing else is in flight, and a flush waits for its reply (fio queues both with the
//! other I/Os); `nbds` (TLS) and `nbd+vsock` URIs are refused.

#![allow(unsafe_code)]

use super::super::engine::{Dir, Done};
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// How long connecting and the handshake may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one reply may be awaited once requests are in flight.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest request fio sends (its `NBD_MAX_REQUEST_SIZE`).
pub const MAX_REQUEST: u64 = 64 << 20;

const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
const OLDSTYLE: u64 = 0x0000_4202_8186_1253;
const REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
const REQUEST_MAGIC: u32 = 0x2560_9513;
const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

const FLAG_FIXED_NEWSTYLE: u16 = 1;
const FLAG_NO_ZEROES: u16 = 2;

const OPT_EXPORT_NAME: u32 = 1;
const OPT_GO: u32 = 7;
const REP_ACK: u32 = 1;
const REP_INFO: u32 = 3;
const REP_ERR_UNSUP: u32 = (1 << 31) + 1;
const INFO_EXPORT: u16 = 0;

const TFLAG_READ_ONLY: u16 = 1 << 1;
const TFLAG_SEND_FLUSH: u16 = 1 << 2;
const TFLAG_SEND_TRIM: u16 = 1 << 5;

const CMD_READ: u16 = 0;
const CMD_WRITE: u16 = 1;
const CMD_DISC: u16 = 2;
const CMD_FLUSH: u16 = 3;
const CMD_TRIM: u16 = 4;

/// The handle of a request made outside the slots (a flush, a trim, a verify read).
const SYNC_HANDLE: u64 = u64::MAX;

/// Where the server is, as a `uri` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uri {
    /// TCP `host:port`, or a unix socket's path.
    pub addr: Addr,
    /// The export's name (empty: the default export).
    pub export: String,
}

/// A server's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addr {
    /// Host (a name, an IPv4 or an IPv6 address without brackets) and port.
    Tcp(String, u16),
    /// A unix socket's path.
    Unix(String),
}

fn percent_decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad percent escape at '{}'", &s[i..]))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "a percent escape is not UTF-8".to_string())
}

impl Uri {
    /// Parses `uri` (see the module's description); the error says what is wrong.
    pub fn parse(uri: &str) -> Result<Uri, String> {
        let uri = uri.trim();
        let (scheme, rest) = uri
            .split_once("://")
            .ok_or_else(|| format!("'{uri}' is not a URI (expected nbd://host[:port][/export] or nbd+unix:///[export]?socket=PATH)"))?;
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        let export = percent_decode(path)?;
        let mut socket = None;
        for kv in query.unwrap_or("").split('&').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            if k == "socket" {
                socket = Some(percent_decode(v)?);
            }
        }
        match scheme {
            "nbd" => {
                if socket.is_some() {
                    return Err(format!(
                        "'{uri}': socket= goes with nbd+unix:// (nbd:// is TCP)"
                    ));
                }
                let (host, port) = if let Some(r) = authority.strip_prefix('[') {
                    let (h, after) = r
                        .split_once(']')
                        .ok_or_else(|| format!("'{uri}': an IPv6 address lacks its ']'"))?;
                    (h, after.strip_prefix(':'))
                } else {
                    match authority.rsplit_once(':') {
                        Some((h, p)) => (h, Some(p)),
                        None => (authority, None),
                    }
                };
                let host = if host.is_empty() { "localhost" } else { host };
                let port = match port {
                    None | Some("") => 10809,
                    Some(p) => p.parse::<u16>().ok().filter(|&n| n > 0).ok_or_else(|| {
                        format!("'{uri}': port '{p}' is not a number from 1 to 65535")
                    })?,
                };
                Ok(Uri {
                    addr: Addr::Tcp(percent_decode(host)?, port),
                    export,
                })
            }
            "nbd+unix" => {
                if !authority.is_empty() {
                    return Err(format!(
                        "'{uri}': nbd+unix:// takes no host (write nbd+unix:///export?socket=PATH)"
                    ));
                }
                let path = socket
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| format!("'{uri}': nbd+unix:// needs ?socket=PATH"))?;
                Ok(Uri {
                    addr: Addr::Unix(path),
                    export,
                })
            }
            "nbds" | "nbds+unix" | "nbds+vsock" => Err(format!(
                "'{uri}': {scheme}:// (NBD over TLS) is not supported by hostbench; use nbd:// or nbd+unix://"
            )),
            "nbd+vsock" => Err(format!(
                "'{uri}': nbd+vsock:// is not supported by hostbench; use nbd:// or nbd+unix://"
            )),
            s => Err(format!(
                "'{uri}': unknown NBD URI scheme: {s} (expected nbd or nbd+unix)"
            )),
        }
    }
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    fn fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }
    fn set_timeouts(&self, t: Duration) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => {
                s.set_read_timeout(Some(t))?;
                s.set_write_timeout(Some(t))
            }
            Stream::Unix(s) => {
                s.set_read_timeout(Some(t))?;
                s.set_write_timeout(Some(t))
            }
        }
    }
}

impl Read for Stream {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(b),
            Stream::Unix(s) => s.read(b),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(b),
            Stream::Unix(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Why connecting failed: libnbd's step (`connect`, `handshake`) and the reason.
#[derive(Debug)]
pub struct ConnectError {
    /// The step that failed.
    pub step: &'static str,
    /// The reason.
    pub err: io::Error,
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.step, self.err)
    }
}

fn timed_out(e: io::Error, what: &str) -> io::Error {
    if matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    ) {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "no answer from the server within {} s ({what})",
                CONNECT_TIMEOUT.as_secs()
            ),
        )
    } else if e.kind() == io::ErrorKind::UnexpectedEof {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the server closed the connection ({what})"),
        )
    } else {
        e
    }
}

fn proto(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// A request in flight in a slot.
#[derive(Clone, Copy)]
struct Pending {
    dir: Dir,
    buf: *mut u8,
    len: u32,
}

/// One connection to the server, the engine of one clone.
pub struct Nbd {
    s: Stream,
    /// The export's size in bytes.
    pub size: u64,
    /// The export's transmission flags.
    pub flags: u16,
    pending: Vec<Option<Pending>>,
    sync_result: Option<i64>,
    sync_buf: Option<Pending>,
    ready: VecDeque<Done>,
}

// SAFETY: the buffer pointers are the worker's slot buffers, used by the thread that owns
// both the worker and this engine.
unsafe impl Send for Nbd {}

impl Nbd {
    /// Connects to `uri` and does the handshake, for `depth` requests in flight.
    pub fn connect(uri: &Uri, depth: u32) -> Result<Nbd, ConnectError> {
        let cerr = |err| ConnectError {
            step: "connect",
            err,
        };
        let s = match &uri.addr {
            Addr::Tcp(host, port) => {
                let addrs: Vec<_> = (host.as_str(), *port)
                    .to_socket_addrs()
                    .map_err(|e| {
                        cerr(io::Error::new(
                            e.kind(),
                            format!("{host}:{port}: cannot resolve the host: {e}"),
                        ))
                    })?
                    .collect();
                let mut last = io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{host}:{port}: no address"),
                );
                let mut got = None;
                for a in addrs {
                    match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
                        Ok(t) => {
                            got = Some(t);
                            break;
                        }
                        Err(e) => {
                            last = io::Error::new(
                                e.kind(),
                                format!("{host}:{port}: could not connect to remote host: {e}"),
                            )
                        }
                    }
                }
                let t = got.ok_or_else(|| cerr(last))?;
                let _ = t.set_nodelay(true);
                Stream::Tcp(t)
            }
            Addr::Unix(p) => Stream::Unix(
                UnixStream::connect(p)
                    .map_err(|e| cerr(io::Error::new(e.kind(), format!("{p}: {e}"))))?,
            ),
        };
        Nbd::over(s, &uri.export, depth, CONNECT_TIMEOUT)
    }

    /// The handshake for `export` on a connected stream.
    fn over(s: Stream, export: &str, depth: u32, within: Duration) -> Result<Nbd, ConnectError> {
        let cerr = |err| ConnectError {
            step: "connect",
            err,
        };
        s.set_timeouts(within).map_err(cerr)?;
        let mut n = Nbd {
            s,
            size: 0,
            flags: 0,
            pending: vec![None; depth.max(1) as usize],
            sync_result: None,
            sync_buf: None,
            ready: VecDeque::new(),
        };
        n.handshake(export).map_err(|err| ConnectError {
            step: "handshake",
            err,
        })?;
        n.s.set_timeouts(REPLY_TIMEOUT).map_err(cerr)?;
        Ok(n)
    }

    fn read_exact(&mut self, b: &mut [u8], what: &str) -> io::Result<()> {
        self.s.read_exact(b).map_err(|e| timed_out(e, what))
    }
    fn u64(&mut self, what: &str) -> io::Result<u64> {
        let mut b = [0u8; 8];
        self.read_exact(&mut b, what)?;
        Ok(u64::from_be_bytes(b))
    }
    fn u32(&mut self, what: &str) -> io::Result<u32> {
        let mut b = [0u8; 4];
        self.read_exact(&mut b, what)?;
        Ok(u32::from_be_bytes(b))
    }
    fn u16(&mut self, what: &str) -> io::Result<u16> {
        let mut b = [0u8; 2];
        self.read_exact(&mut b, what)?;
        Ok(u16::from_be_bytes(b))
    }

    fn send_option(&mut self, opt: u32, data: &[u8]) -> io::Result<()> {
        let mut m = Vec::with_capacity(16 + data.len());
        m.extend_from_slice(&IHAVEOPT.to_be_bytes());
        m.extend_from_slice(&opt.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        self.s
            .write_all(&m)
            .map_err(|e| timed_out(e, "sending an option"))
    }

    fn handshake(&mut self, export: &str) -> io::Result<()> {
        let w = "the handshake";
        if self.u64(w)? != NBDMAGIC {
            return Err(proto(
                "the server is not an NBD server (no NBDMAGIC)".into(),
            ));
        }
        let m = self.u64(w)?;
        if m == OLDSTYLE {
            return Err(proto(
                "the server speaks the oldstyle handshake, which hostbench does not (use a newstyle server, e.g. qemu-nbd or nbdkit)".into(),
            ));
        }
        if m != IHAVEOPT {
            return Err(proto(format!("unexpected handshake magic {m:#x}")));
        }
        let sflags = self.u16(w)?;
        if sflags & FLAG_FIXED_NEWSTYLE == 0 {
            return Err(proto(
                "the server does not offer the fixed newstyle handshake".into(),
            ));
        }
        let no_zeroes = sflags & FLAG_NO_ZEROES != 0;
        let cflags = u32::from(FLAG_FIXED_NEWSTYLE) | if no_zeroes { 2 } else { 0 };
        self.s
            .write_all(&cflags.to_be_bytes())
            .map_err(|e| timed_out(e, w))?;
        // NBD_OPT_GO: the name, no information requests (the export's size and flags come
        // anyway).
        let mut data = Vec::with_capacity(6 + export.len());
        data.extend_from_slice(&(export.len() as u32).to_be_bytes());
        data.extend_from_slice(export.as_bytes());
        data.extend_from_slice(&0u16.to_be_bytes());
        self.send_option(OPT_GO, &data)?;
        let mut got_info = false;
        loop {
            if self.u64(w)? != REPLY_MAGIC {
                return Err(proto("bad option reply magic".into()));
            }
            let opt = self.u32(w)?;
            let ty = self.u32(w)?;
            let len = self.u32(w)?;
            if opt != OPT_GO {
                return Err(proto(format!("a reply to option {opt}, not to NBD_OPT_GO")));
            }
            if len > 1 << 20 {
                return Err(proto(format!("an option reply of {len} bytes")));
            }
            let mut body = vec![0u8; len as usize];
            self.read_exact(&mut body, w)?;
            match ty {
                REP_ACK => {
                    if !got_info {
                        return Err(proto("NBD_OPT_GO ended without the export's size".into()));
                    }
                    return Ok(());
                }
                REP_INFO
                    if body.len() >= 12
                        && u16::from_be_bytes([body[0], body[1]]) == INFO_EXPORT =>
                {
                    self.size = u64::from_be_bytes(body[2..10].try_into().expect("8 bytes"));
                    self.flags = u16::from_be_bytes([body[10], body[11]]);
                    got_info = true;
                }
                REP_ERR_UNSUP => break,
                t if t & (1 << 31) != 0 => return Err(rep_error(t, export, &body)),
                _ => {} // replies of other types are ignored
            }
        }
        // An older server: NBD_OPT_EXPORT_NAME (a refusal closes the connection).
        self.send_option(OPT_EXPORT_NAME, export.as_bytes())?;
        let what = "NBD_OPT_EXPORT_NAME";
        self.size = self.u64(what).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("server has no export named '{export}' (it closed the connection)"),
                )
            } else {
                e
            }
        })?;
        self.flags = self.u16(what)?;
        if !no_zeroes {
            let mut z = [0u8; 124];
            self.read_exact(&mut z, what)?;
        }
        Ok(())
    }

    /// Whether the export takes flushes.
    pub fn can_flush(&self) -> bool {
        self.flags & TFLAG_SEND_FLUSH != 0
    }

    /// An error the request meets before it is sent (libnbd's checks), as −errno.
    fn refused(&self, ty: u16, off: u64, len: u32) -> Option<i64> {
        let e = match ty {
            CMD_WRITE | CMD_TRIM if self.flags & TFLAG_READ_ONLY != 0 => libc::EPERM,
            CMD_TRIM if self.flags & TFLAG_SEND_TRIM == 0 => libc::EINVAL,
            CMD_FLUSH if !self.can_flush() => libc::EINVAL,
            CMD_READ | CMD_WRITE | CMD_TRIM
                if off
                    .checked_add(u64::from(len))
                    .is_none_or(|e| e > self.size) =>
            {
                libc::EINVAL
            }
            _ => return None,
        };
        Some(-i64::from(e))
    }

    fn header(ty: u16, handle: u64, off: u64, len: u32) -> [u8; 28] {
        let mut h = [0u8; 28];
        h[0..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
        h[6..8].copy_from_slice(&ty.to_be_bytes());
        h[8..16].copy_from_slice(&handle.to_be_bytes());
        h[16..24].copy_from_slice(&off.to_be_bytes());
        h[24..28].copy_from_slice(&len.to_be_bytes());
        h
    }

    /// Sends `b` whole; while the socket cannot take more, replies that arrive are read
    /// (a server blocked on sending them would not read more requests).
    fn send_all(&mut self, mut b: &[u8]) -> io::Result<()> {
        let fd = self.s.fd();
        while !b.is_empty() {
            // SAFETY: sending from a live slice on our socket.
            let r = unsafe {
                libc::send(
                    fd,
                    b.as_ptr().cast(),
                    b.len(),
                    libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
                )
            };
            if r > 0 {
                b = &b[r as usize..];
                continue;
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => {
                    let ev = poll(fd, libc::POLLIN | libc::POLLOUT, Some(REPLY_TIMEOUT))?;
                    if ev == 0 {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "the server took no request for 60 s",
                        ));
                    }
                    if ev & libc::POLLOUT == 0 && ev & (libc::POLLIN | libc::POLLHUP) != 0 {
                        self.read_reply()?;
                    }
                }
                _ => return Err(e),
            }
        }
        Ok(())
    }

    /// Reads one reply and files its completion.
    fn read_reply(&mut self) -> io::Result<()> {
        let w = "a reply";
        let mut h = [0u8; 16];
        self.s.read_exact(&mut h).map_err(|e| io_timed_out(e, w))?;
        let magic = u32::from_be_bytes(h[0..4].try_into().expect("4 bytes"));
        if magic != SIMPLE_REPLY_MAGIC {
            return Err(proto(format!("bad reply magic {magic:#x}")));
        }
        let err = u32::from_be_bytes(h[4..8].try_into().expect("4 bytes"));
        let handle = u64::from_be_bytes(h[8..16].try_into().expect("8 bytes"));
        let p = if handle == SYNC_HANDLE {
            self.sync_buf.take()
        } else {
            self.pending.get_mut(handle as usize).and_then(|p| p.take())
        };
        let Some(p) = p else {
            return Err(proto(format!(
                "a reply for handle {handle}, which is not in flight"
            )));
        };
        let res = if err != 0 {
            -i64::from(err.min(i32::MAX as u32))
        } else {
            if p.dir == Dir::Read && p.len > 0 {
                // SAFETY: the slot's buffer holds at least `len` bytes and is not used
                // elsewhere while its request is in flight.
                let b = unsafe { std::slice::from_raw_parts_mut(p.buf, p.len as usize) };
                self.s.read_exact(b).map_err(|e| io_timed_out(e, w))?;
            }
            i64::from(p.len)
        };
        if handle == SYNC_HANDLE {
            self.sync_result = Some(res);
        } else {
            self.ready.push_back(Done {
                slot: handle as u32,
                res,
            });
        }
        Ok(())
    }

    fn send_request(
        &mut self,
        ty: u16,
        handle: u64,
        buf: *mut u8,
        off: u64,
        len: u32,
    ) -> io::Result<()> {
        let h = Self::header(ty, handle, off, len);
        self.send_all(&h)?;
        if ty == CMD_WRITE && len > 0 {
            // SAFETY: the slot's buffer holds `len` bytes to write.
            let b = unsafe { std::slice::from_raw_parts(buf.cast_const(), len as usize) };
            self.send_all(b)?;
        }
        Ok(())
    }

    /// Sends one I/O from slot `slot` (its completion comes from [`reap`](Self::reap)).
    pub fn queue(&mut self, slot: u32, dir: Dir, buf: *mut u8, off: u64, len: u32) {
        let ty = match dir {
            Dir::Read => CMD_READ,
            Dir::Write => CMD_WRITE,
            Dir::Trim => CMD_TRIM,
        };
        if let Some(res) = self.refused(ty, off, len) {
            self.ready.push_back(Done { slot, res });
            return;
        }
        let Some(p) = self.pending.get_mut(slot as usize) else {
            self.ready.push_back(Done {
                slot,
                res: -i64::from(libc::EINVAL),
            });
            return;
        };
        *p = Some(Pending { dir, buf, len });
        if let Err(e) = self.send_request(ty, u64::from(slot), buf, off, len) {
            self.pending[slot as usize] = None;
            self.ready.push_back(Done {
                slot,
                res: -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
            });
        }
    }

    /// Waits for at least `min` completions (the first one at most `timeout_ns` when
    /// given: then 0 when none came), stores up to `out.len()` in `out`.
    pub fn reap(
        &mut self,
        min: usize,
        out: &mut [Done],
        timeout_ns: Option<u64>,
    ) -> io::Result<usize> {
        let mut n = 0;
        let fd = self.s.fd();
        loop {
            while n < out.len() {
                let Some(d) = self.ready.pop_front() else {
                    break;
                };
                out[n] = d;
                n += 1;
            }
            if n >= out.len() {
                return Ok(n);
            }
            let inflight = self.pending.iter().any(Option::is_some);
            if !inflight {
                return Ok(n);
            }
            if n >= min {
                // Whatever else has already come, without waiting.
                if poll(fd, libc::POLLIN, Some(Duration::ZERO))? == 0 {
                    return Ok(n);
                }
            } else if n == 0
                && let Some(t) = timeout_ns
                && poll(fd, libc::POLLIN, Some(Duration::from_nanos(t)))? == 0
            {
                return Ok(0);
            }
            self.read_reply()?;
        }
    }

    /// One request made and awaited outside the slots (nothing else need be idle: replies
    /// to the slots' requests that come first are kept for [`reap`](Self::reap)); bytes or
    /// −errno.
    fn sync_cmd(&mut self, ty: u16, buf: *mut u8, off: u64, len: u32) -> i64 {
        if let Some(res) = self.refused(ty, off, len) {
            return res;
        }
        let dir = if ty == CMD_READ {
            Dir::Read
        } else {
            Dir::Write
        };
        self.sync_buf = Some(Pending { dir, buf, len });
        self.sync_result = None;
        let errno = |e: io::Error| -i64::from(e.raw_os_error().unwrap_or(libc::EIO));
        if let Err(e) = self.send_request(ty, SYNC_HANDLE, buf, off, len) {
            self.sync_buf = None;
            return errno(e);
        }
        while self.sync_result.is_none() {
            if let Err(e) = self.read_reply() {
                self.sync_buf = None;
                return errno(e);
            }
        }
        let r = self.sync_result.take().expect("awaited above");
        if ty == CMD_FLUSH && r > 0 { 0 } else { r }
    }

    /// A flush (`fsync`, `end_fsync`): 0, or −errno.
    pub fn flush(&mut self) -> i64 {
        self.sync_cmd(CMD_FLUSH, std::ptr::null_mut(), 0, 0)
    }

    /// A trim awaited now: bytes, or −errno.
    pub fn trim_now(&mut self, off: u64, len: u32) -> i64 {
        self.sync_cmd(CMD_TRIM, std::ptr::null_mut(), off, len)
    }

    /// A read awaited now (the verify phase): bytes, or −errno.
    pub fn read_now(&mut self, buf: *mut u8, off: u64, len: u32) -> i64 {
        self.sync_cmd(CMD_READ, buf, off, len)
    }
}

impl Drop for Nbd {
    fn drop(&mut self) {
        // A polite end: NBD_CMD_DISC (the server closes; nothing answers it).
        if self.pending.iter().all(Option::is_none) {
            let h = Self::header(CMD_DISC, 0, 0, 0);
            let _ = self.s.write_all(&h);
        }
    }
}

fn io_timed_out(e: io::Error, what: &str) -> io::Error {
    if matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    ) {
        io::Error::from_raw_os_error(libc::ETIMEDOUT)
    } else if e.kind() == io::ErrorKind::UnexpectedEof {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the server closed the connection (awaiting {what})"),
        )
    } else {
        e
    }
}

fn rep_error(t: u32, export: &str, body: &[u8]) -> io::Error {
    let msg = String::from_utf8_lossy(body);
    let (kind, what) = match t - (1 << 31) {
        2 => (
            io::ErrorKind::PermissionDenied,
            "the server's policy refuses the export".to_string(),
        ),
        3 => (
            io::ErrorKind::InvalidInput,
            "the server calls the request invalid".to_string(),
        ),
        5 => (
            io::ErrorKind::Unsupported,
            "the server requires TLS, which hostbench does not speak".to_string(),
        ),
        6 => (
            io::ErrorKind::NotFound,
            format!("server has no export named '{export}'"),
        ),
        7 => (
            io::ErrorKind::ConnectionAborted,
            "the server is shutting down".to_string(),
        ),
        n => (
            io::ErrorKind::Other,
            format!("the server refused the export (error {n})"),
        ),
    };
    if msg.is_empty() {
        io::Error::new(kind, what)
    } else {
        io::Error::new(kind, format!("{what}: {msg}"))
    }
}

/// `poll` on one descriptor: the events that came (0: the timeout passed).
fn poll(fd: RawFd, events: libc::c_short, timeout: Option<Duration>) -> io::Result<libc::c_short> {
    let ms = timeout.map_or(-1, |t| {
        let ms = t.as_nanos().div_ceil(1_000_000);
        ms.min(i32::MAX as u128) as i32
    });
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    loop {
        // SAFETY: one pollfd on the stack.
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        if r >= 0 {
            return Ok(if r == 0 { 0 } else { p.revents });
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// The export's size (fio's setup connects once for it): connects, reads it, disconnects.
pub fn export_size(uri: &Uri) -> Result<u64, ConnectError> {
    Nbd::connect(uri, 1).map(|n| n.size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_parse_as_libnbd_reads_them() {
        let u = Uri::parse("nbd://localhost:10810/disk%20a").unwrap();
        assert_eq!(u.addr, Addr::Tcp("localhost".into(), 10810));
        assert_eq!(u.export, "disk a");
        let u = Uri::parse("nbd://[::1]").unwrap();
        assert_eq!(u.addr, Addr::Tcp("::1".into(), 10809));
        assert_eq!(u.export, "");
        let u = Uri::parse("nbd+unix:///exp?socket=/tmp/s").unwrap();
        assert_eq!(u.addr, Addr::Unix("/tmp/s".into()));
        assert_eq!(u.export, "exp");
        let u = Uri::parse("nbd+unix:///?socket=/tmp/s").unwrap();
        assert_eq!(u.export, "");
        for bad in [
            "http://x/",
            "nbd+unix:///",
            "nbd://h:0/",
            "nbd://h:99999/",
            "nbds://h/",
            "localhost",
            "nbd://h/%zz",
        ] {
            assert!(Uri::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn refused_requests_fail_before_they_are_sent() {
        let (a, _b) = UnixStream::pair().unwrap();
        let mut n = Nbd {
            s: Stream::Unix(a),
            size: 8192,
            flags: TFLAG_READ_ONLY,
            pending: vec![None; 2],
            sync_result: None,
            sync_buf: None,
            ready: VecDeque::new(),
        };
        assert_eq!(n.flush(), -i64::from(libc::EINVAL));
        assert_eq!(n.trim_now(0, 4096), -i64::from(libc::EPERM));
        let mut buf = [0u8; 4096];
        n.queue(1, Dir::Write, buf.as_mut_ptr(), 0, 4096);
        n.queue(0, Dir::Read, buf.as_mut_ptr(), 8192, 4096);
        let mut out = [Done::default(); 2];
        assert_eq!(n.reap(2, &mut out, None).unwrap(), 2);
        assert_eq!((out[0].slot, out[0].res), (1, -i64::from(libc::EPERM)));
        assert_eq!((out[1].slot, out[1].res), (0, -i64::from(libc::EINVAL)));
    }

    /// A server on the other end of `b`: the fixed newstyle handshake with NBD_OPT_GO
    /// (an export of `size` bytes, `flags`), then `serve` on the requests.
    fn fake(b: UnixStream, size: u64, flags: u16, serve: impl FnOnce(UnixStream) + Send + 'static) {
        std::thread::spawn(move || {
            let mut b = b;
            b.write_all(&NBDMAGIC.to_be_bytes()).unwrap();
            b.write_all(&IHAVEOPT.to_be_bytes()).unwrap();
            b.write_all(&3u16.to_be_bytes()).unwrap();
            let mut cf = [0u8; 4];
            b.read_exact(&mut cf).unwrap();
            let mut oh = [0u8; 16];
            b.read_exact(&mut oh).unwrap();
            let len = u32::from_be_bytes(oh[12..16].try_into().unwrap());
            let mut data = vec![0u8; len as usize];
            b.read_exact(&mut data).unwrap();
            let reply = |b: &mut UnixStream, ty: u32, body: &[u8]| {
                b.write_all(&REPLY_MAGIC.to_be_bytes()).unwrap();
                b.write_all(&OPT_GO.to_be_bytes()).unwrap();
                b.write_all(&ty.to_be_bytes()).unwrap();
                b.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
                b.write_all(body).unwrap();
            };
            let mut info = INFO_EXPORT.to_be_bytes().to_vec();
            info.extend_from_slice(&size.to_be_bytes());
            info.extend_from_slice(&flags.to_be_bytes());
            reply(&mut b, REP_INFO, &info);
            reply(&mut b, REP_ACK, &[]);
            serve(b);
        });
    }

    fn request(b: &mut UnixStream) -> (u16, u64, u64, u32) {
        let mut h = [0u8; 28];
        b.read_exact(&mut h).unwrap();
        assert_eq!(
            u32::from_be_bytes(h[0..4].try_into().unwrap()),
            REQUEST_MAGIC
        );
        (
            u16::from_be_bytes([h[6], h[7]]),
            u64::from_be_bytes(h[8..16].try_into().unwrap()),
            u64::from_be_bytes(h[16..24].try_into().unwrap()),
            u32::from_be_bytes(h[24..28].try_into().unwrap()),
        )
    }

    fn simple_reply(b: &mut UnixStream, err: u32, handle: u64, data: &[u8]) {
        b.write_all(&SIMPLE_REPLY_MAGIC.to_be_bytes()).unwrap();
        b.write_all(&err.to_be_bytes()).unwrap();
        b.write_all(&handle.to_be_bytes()).unwrap();
        b.write_all(data).unwrap();
    }

    #[test]
    fn replies_in_any_order_complete_their_slots_and_errors_are_errnos() {
        let (a, b) = UnixStream::pair().unwrap();
        fake(
            b,
            1 << 20,
            1 | TFLAG_SEND_FLUSH | TFLAG_SEND_TRIM,
            |mut b| {
                let r0 = request(&mut b);
                let r1 = request(&mut b);
                assert_eq!((r0.0, r0.2, r0.3), (CMD_READ, 4096, 8));
                assert_eq!((r1.0, r1.2, r1.3), (CMD_WRITE, 0, 8));
                let mut w = [0u8; 8];
                b.read_exact(&mut w).unwrap();
                assert_eq!(&w, b"written!");
                let r2 = request(&mut b);
                assert_eq!(r2.0, CMD_READ);
                // Last first; the write fails on the server (EIO), the first read has data.
                simple_reply(&mut b, 0, r2.1, b"22222222");
                simple_reply(&mut b, 5, r1.1, &[]);
                simple_reply(&mut b, 0, r0.1, b"00000000");
                let f = request(&mut b);
                assert_eq!(f.0, CMD_FLUSH);
                simple_reply(&mut b, 28, f.1, &[]);
            },
        );
        let mut n = Nbd::over(Stream::Unix(a), "", 4, CONNECT_TIMEOUT).unwrap();
        assert_eq!(n.size, 1 << 20);
        let mut bufs = [[0u8; 8]; 3];
        let mut w = *b"written!";
        n.queue(0, Dir::Read, bufs[0].as_mut_ptr(), 4096, 8);
        n.queue(1, Dir::Write, w.as_mut_ptr(), 0, 8);
        n.queue(2, Dir::Read, bufs[2].as_mut_ptr(), 8192, 8);
        let mut out = [Done::default(); 4];
        let mut got = Vec::new();
        while got.len() < 3 {
            let k = n.reap(1, &mut out, None).unwrap();
            got.extend(out[..k].iter().map(|d| (d.slot, d.res)));
        }
        assert_eq!(got, vec![(2, 8), (1, -i64::from(libc::EIO)), (0, 8)]);
        assert_eq!(&bufs[0], b"00000000");
        assert_eq!(&bufs[2], b"22222222");
        assert_eq!(n.flush(), -i64::from(libc::ENOSPC));
    }

    #[test]
    fn a_server_that_says_nothing_is_given_up_on() {
        let (a, _b) = UnixStream::pair().unwrap();
        let t = std::time::Instant::now();
        let e = Nbd::over(Stream::Unix(a), "", 1, Duration::from_millis(300))
            .err()
            .expect("no handshake");
        assert_eq!(e.step, "handshake");
        assert!(e.err.to_string().contains("no answer"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
