//! fio's `net` engine (`engines/net.c`): a job's reads receive from a socket and its
//! writes send to one, `bs` bytes a message; no file.
//!
//! As fio 3.33 does it:
//! - `protocol` `tcp` (default), `tcpv6`, `udp`, `udpv6` or `unix` (a stream socket at the
//!   path given by `hostname` or `filename`); `port` (1-65535) for tcp and udp, refused
//!   for unix; a job's clone *n* uses `port + n`;
//! - a TCP job with `listen` binds the wildcard address (`0.0.0.0`, tcpv6 `::`) at its
//!   port when it is set up and accepts one connection when it starts (printing
//!   `fio: waiting for connection`); its statistics start once connected; a TCP job without
//!   `listen` connects to `hostname`:`port`;
//! - udp and unix jobs are readers or writers, never both: a reader binds (udp: the
//!   wildcard address, or joins the multicast group `hostname` names; unix: the path) and a
//!   writer sends there; a UDP writer first sends an *open* message that the reader waits
//!   for, and at its end a *close* message that ends the reader;
//! - a receiver ends without error when the sender is done (TCP/unix: end of stream; UDP:
//!   the close message);
//! - `pingpong`: each message is sent back by the receiver, and the sender waits for it;
//! - `nodelay` (TCP_NODELAY), `window_size` (SO_RCVBUF for a receiver, SO_SNDBUF for a
//!   sender, both with pingpong), `mss` (TCP_MAXSEG), `ttl` (multicast TTL, default 1),
//!   `interface` (the multicast interface's address).
//! - a UDP message of 24 bytes or more ends with fio's trailer (magic, sequence number,
//!   size; not under `verify`), and a UDP receiver counts the numbers it never got
//!   (`drop_ios`);
//! - `netsplice`: TCP messages go through a pipe (`vmsplice` and `splice`); udp and unix
//!   as `net`.
//!
//! Where hostbench differs, on purpose:
//! - a TCP/unix receive waits for the whole message (fio may count a short read and issue
//!   the rest as another I/O);
//! - a unix listener never removes a file it did not create: an existing path is refused
//!   (fio unlinks whatever is there), and the socket file it made is removed at the end;
//!   fio's close message is UDP-only here (fio also sends it down a unix stream, which
//!   fails with EISCONN and marks the receiver `err=106`);
//! - a TCP listener or UDP reader may name a `hostname` (an IP address) to bind only that
//!   address (fio refuses a hostname there unless it is a multicast group);
//! - waiting for a connection or a message gives up when the run stops (Ctrl-C, runtime);
//! - a UDP writer's close message is sent 5 times over 80 ms (fio's once is lost when the
//!   reader's buffer is full, and the reader then waits for ever).
//! - netsplice moves a message larger than the pipe a pipe's worth at a time (fio fills
//!   the pipe with the whole message first, and waits for ever);
//! - a UDP message that comes late is not counted as a drop (fio's unsigned difference
//!   counts 2^64 − k).

use socket2::{Domain, SockAddr, Socket, Type};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// fio's link open/close messages: a magic and a command.
const LINK_MAGIC: u32 = 0x6c69_6e6b;
const LINK_OPEN: u32 = 0x98;
const LINK_CLOSE: u32 = 0x89;
/// The sequence trailer fio puts at the end of each UDP message.
const SEQ_MAGIC: u64 = 0x6573_7571_6e55_6563;

/// `protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Proto {
    /// TCP over IPv4 (fio's default).
    #[default]
    Tcp,
    /// TCP over IPv6.
    Tcpv6,
    /// UDP over IPv4.
    Udp,
    /// UDP over IPv6.
    Udpv6,
    /// A unix stream socket.
    Unix,
}

impl Proto {
    /// The protocol named `s` (fio's names).
    pub fn parse(s: &str) -> Option<Proto> {
        Some(match s.trim() {
            "tcp" => Proto::Tcp,
            "tcpv6" => Proto::Tcpv6,
            "udp" => Proto::Udp,
            "udpv6" => Proto::Udpv6,
            "unix" => Proto::Unix,
            _ => return None,
        })
    }
    /// TCP (v4 or v6).
    pub fn tcp(self) -> bool {
        matches!(self, Proto::Tcp | Proto::Tcpv6)
    }
    /// UDP (v4 or v6).
    pub fn udp(self) -> bool {
        matches!(self, Proto::Udp | Proto::Udpv6)
    }
    /// IPv6.
    pub fn v6(self) -> bool {
        matches!(self, Proto::Tcpv6 | Proto::Udpv6)
    }
}

/// The net engine's options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NetOpts {
    /// `hostname` (or the job's `filename`): the peer, a multicast group, or a unix path.
    pub host: Option<String>,
    /// `port` (0: not given).
    pub port: u32,
    /// `protocol`.
    pub proto: Proto,
    /// `listen` (TCP; udp and unix readers listen anyway).
    pub listen: bool,
    /// `pingpong`.
    pub pingpong: bool,
    /// `nodelay`.
    pub nodelay: bool,
    /// `ttl` (multicast; fio's default 1).
    pub ttl: u32,
    /// `window_size` (0: the system's).
    pub window_size: u32,
    /// `mss` (0: the system's).
    pub mss: u32,
    /// `interface`: the multicast interface's IPv4 address.
    pub interface: Option<String>,
    /// UDP sequence numbers: a sender writes its trailer at the end of each message and a
    /// receiver counts the messages missing from them (fio does both only without
    /// `verify`, whose header would be overwritten).
    pub udp_seq: bool,
    /// `ioengine=netsplice`: TCP messages go through a pipe (`vmsplice` the buffer in,
    /// `splice` it to the socket; `splice` from the socket, `vmsplice` it out).
    pub splice: bool,
}

/// Whether `key` is one of the net engine's options.
pub fn option(key: &str) -> bool {
    matches!(
        key,
        "hostname"
            | "port"
            | "protocol"
            | "nodelay"
            | "listen"
            | "pingpong"
            | "interface"
            | "ttl"
            | "window_size"
            | "mss"
    )
}

/// Whether `host` is an IPv4 multicast group (224.0.0.0 to 239.255.255.255).
pub fn multicast(host: &str) -> Option<Ipv4Addr> {
    host.trim()
        .parse::<Ipv4Addr>()
        .ok()
        .filter(|a| a.is_multicast())
}

/// What a job checks before it runs (fio's engine `init`): `Err` is the message.
/// `reads`/`writes`: the job's directions; `random`: random offsets.
pub fn check(o: &mut NetOpts, reads: bool, writes: bool, random: bool) -> Result<(), String> {
    if random {
        return Err("network I/O can't be random (use rw=read or rw=write)".into());
    }
    if o.proto == Proto::Unix && o.port != 0 {
        return Err(
            "port is not valid with protocol=unix (the socket is the path in \
                    hostname= or filename=)"
                .into(),
        );
    }
    if o.proto != Proto::Unix && o.port == 0 {
        return Err("protocol=tcp/udp needs port= (1-65535)".into());
    }
    if !o.proto.tcp() {
        if o.listen {
            return Err(
                "listen is only valid with protocol=tcp or tcpv6 (a udp or unix \
                        reader, rw=read, listens)"
                    .into(),
            );
        }
        if reads && writes {
            return Err("udp and unix jobs must read or write, not both".into());
        }
        if o.proto == Proto::Unix && o.host.is_none() {
            return Err("protocol=unix needs the socket's path in hostname= or filename=".into());
        }
        o.listen = reads;
    }
    if o.listen {
        if let Some(h) = &o.host {
            let mc = o.proto == Proto::Udp && multicast(h).is_some();
            if o.proto != Proto::Unix && !mc && h.trim().parse::<IpAddr>().is_err() {
                return Err(format!(
                    "hostname={h}: a listener binds an IP address or (udp) joins a multicast \
                     group; drop hostname= to listen on every address"
                ));
            }
            if o.proto.v6() && multicast(h).is_some() {
                return Err("multicast is not supported with IPv6".into());
            }
        }
    } else if o.host.is_none() {
        return Err(format!(
            "a network {} needs hostname= (the peer){}",
            if writes { "writer" } else { "reader" },
            if reads && o.proto.tcp() {
                "; did you forget listen?"
            } else {
                ""
            }
        ));
    }
    Ok(())
}

/// An error of the engine: errno, fio's function name, and the reason.
pub type NetError = (i32, &'static str, String);

fn err(func: &'static str, e: io::Error) -> NetError {
    (e.raw_os_error().unwrap_or(libc::EIO), func, e.to_string())
}

/// One clone's socket(s).
pub struct Net {
    o: NetOpts,
    port: u16,
    /// The bound socket of a listener / reader.
    listener: Option<Socket>,
    /// The socket I/O goes through.
    sock: Option<Socket>,
    /// The peer (a sender's destination; a UDP reader's last sender).
    peer: Option<SockAddr>,
    /// The unix socket file this engine created (removed at the end).
    made: Option<PathBuf>,
    /// netsplice's pipe (read end, write end), made at setup as fio's.
    pipe: Option<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)>,
    writes: bool,
    seq_tx: u64,
    /// The sequence number the next UDP message should carry.
    seq_rx: u64,
    /// A message whose trailer names another size was seen: sequence numbers are not
    /// checked any more (fio's `seq_off`).
    seq_off: bool,
    /// Messages missing from the sequence, counted in the direction of the I/O that
    /// received past them (reads; a pingpong writer's answers: writes).
    drops: [u64; 2],
    /// The job's size, for MSG_MORE (TCP: more to come).
    size: u64,
    sent: u64,
}

fn stream_or_dgram(p: Proto) -> Type {
    if p.udp() { Type::DGRAM } else { Type::STREAM }
}

impl Net {
    /// fio's engine init for clone `clone`: a listener binds now; a sender resolves its peer.
    pub fn setup(o: &NetOpts, clone: u32, writes: bool, size: u64) -> Result<Net, NetError> {
        let port = o.port + clone;
        if o.proto != Proto::Unix && port > 65535 {
            return Err((
                libc::EINVAL,
                "port",
                format!("port {} + clone {clone} is past 65535", o.port),
            ));
        }
        let mut n = Net {
            o: o.clone(),
            port: port as u16,
            listener: None,
            sock: None,
            peer: None,
            made: None,
            pipe: None,
            writes,
            seq_tx: 0,
            seq_rx: 0,
            seq_off: false,
            drops: [0; 2],
            size,
            sent: 0,
        };
        // fio's netsplice makes its pipe for every job; only TCP uses it.
        if o.splice {
            let mut fds = [0i32; 2];
            // SAFETY: pipe2 fills the two descriptors, which are then owned here.
            #[allow(unsafe_code)]
            let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
            if r < 0 {
                return Err(err("pipe", io::Error::last_os_error()));
            }
            use std::os::fd::FromRawFd;
            // SAFETY: both descriptors were just made and are owned by nothing else.
            #[allow(unsafe_code)]
            let p = unsafe {
                (
                    std::os::fd::OwnedFd::from_raw_fd(fds[0]),
                    std::os::fd::OwnedFd::from_raw_fd(fds[1]),
                )
            };
            n.pipe = Some(p);
        }
        if o.listen {
            n.bind()?;
        } else {
            n.peer = Some(n.resolve()?);
        }
        Ok(n)
    }

    fn resolve(&self) -> Result<SockAddr, NetError> {
        let host = self.o.host.as_deref().unwrap_or_default();
        if self.o.proto == Proto::Unix {
            return SockAddr::unix(host).map_err(|e| err("connect", e));
        }
        let want6 = self.o.proto.v6();
        let found = (host, self.port)
            .to_socket_addrs()
            .map_err(|e| (libc::EINVAL, "getaddrinfo", format!("hostname={host}: {e}")))?
            .find(|a| a.is_ipv6() == want6);
        found.map(SockAddr::from).ok_or_else(|| {
            (
                libc::EINVAL,
                "getaddrinfo",
                format!(
                    "hostname={host}: no {} address",
                    if want6 { "IPv6" } else { "IPv4" }
                ),
            )
        })
    }

    fn opts(&self, s: &Socket, listening: bool) -> Result<(), NetError> {
        if self.o.window_size > 0 {
            let w = self.o.window_size as usize;
            if listening || self.o.pingpong {
                s.set_recv_buffer_size(w)
                    .map_err(|e| err("rcvbuf window size", e))?;
            }
            if !listening || self.o.pingpong {
                s.set_send_buffer_size(w)
                    .map_err(|e| err("sndbuf window size", e))?;
            }
        }
        if self.o.mss > 0 && self.o.proto.tcp() {
            s.set_tcp_mss(self.o.mss)
                .map_err(|e| err("setsockopt TCP_MAXSEG", e))?;
        }
        Ok(())
    }

    fn nodelay(&self, s: &Socket) -> Result<(), NetError> {
        if self.o.nodelay && self.o.proto.tcp() {
            s.set_tcp_nodelay(true)
                .map_err(|e| err("setsockopt TCP_NODELAY", e))?;
        }
        Ok(())
    }

    fn interface(&self) -> Result<Option<Ipv4Addr>, NetError> {
        match &self.o.interface {
            None => Ok(None),
            Some(i) => i.trim().parse::<Ipv4Addr>().map(Some).map_err(|_| {
                (
                    libc::EINVAL,
                    "interface",
                    format!("interface={i}: not an IPv4 address (the interface's address)"),
                )
            }),
        }
    }

    fn bind(&mut self) -> Result<(), NetError> {
        let p = self.o.proto;
        if p == Proto::Unix {
            let path = PathBuf::from(self.o.host.clone().unwrap_or_default());
            if std::fs::symlink_metadata(&path).is_ok() {
                return Err((
                    libc::EEXIST,
                    "bind",
                    format!(
                        "{} exists; hostbench does not remove a file it did not create \
                         (remove it, or name another path)",
                        path.display()
                    ),
                ));
            }
            let s = Socket::new(Domain::UNIX, Type::STREAM, None).map_err(|e| err("socket", e))?;
            let a = SockAddr::unix(&path).map_err(|e| err("bind", e))?;
            s.bind(&a).map_err(|e| err("bind", e))?;
            self.made = Some(path);
            s.listen(10).map_err(|e| err("listen", e))?;
            self.listener = Some(s);
            return Ok(());
        }
        let domain = if p.v6() { Domain::IPV6 } else { Domain::IPV4 };
        let s = Socket::new(domain, stream_or_dgram(p), None).map_err(|e| err("socket", e))?;
        s.set_reuse_address(true)
            .map_err(|e| err("setsockopt", e))?;
        s.set_reuse_port(true).map_err(|e| err("setsockopt", e))?;
        self.opts(&s, true)?;
        let host = self.o.host.as_deref().map(str::trim);
        let ip: IpAddr = match host {
            Some(h) => {
                if let Some(g) = multicast(h).filter(|_| p.udp()) {
                    let ifc = self.interface()?.unwrap_or(Ipv4Addr::UNSPECIFIED);
                    s.join_multicast_v4(&g, &ifc)
                        .map_err(|e| err("setsockopt IP_ADD_MEMBERSHIP", e))?;
                }
                h.parse().map_err(|_| {
                    (
                        libc::EINVAL,
                        "bind",
                        format!("hostname={h}: not an IP address"),
                    )
                })?
            }
            None if p.v6() => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
            None => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        };
        s.bind(&SockAddr::from(SocketAddr::new(ip, self.port)))
            .map_err(|e| err("bind", e))?;
        if p.tcp() {
            s.listen(10).map_err(|e| err("listen", e))?;
        }
        self.listener = Some(s);
        Ok(())
    }

    /// Waits for `fd` to be ready for `events`, in slices, until `stop` says the run is
    /// over: Ok(false) then.
    fn wait(fd: i32, events: i16, stop: &dyn Fn() -> bool) -> Result<bool, NetError> {
        loop {
            if stop() {
                return Ok(false);
            }
            let mut p = libc::pollfd {
                fd,
                events,
                revents: 0,
            };
            // SAFETY: poll on one pollfd of ours.
            #[allow(unsafe_code)]
            let r = unsafe { libc::poll(&mut p, 1, 100) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(err("poll", e));
            }
            if r > 0 {
                return Ok(true);
            }
        }
    }

    /// fio's open: a listener accepts (TCP/unix) or waits for the open message (UDP
    /// reader); a sender connects (TCP/unix) or sends the open message (UDP).
    /// Ok(false): the run stopped while waiting.
    pub fn open(&mut self, stop: &dyn Fn() -> bool) -> Result<bool, NetError> {
        let p = self.o.proto;
        if self.o.listen {
            let l = self.listener.as_ref().expect("bound at setup");
            if p.udp() {
                let s = l.try_clone().map_err(|e| err("socket", e))?;
                s.set_nonblocking(true).map_err(|e| err("socket", e))?;
                // The open message: 8 bytes, magic and command in network order.
                loop {
                    if !Self::wait(s.as_raw_fd(), libc::POLLIN, stop)? {
                        return Ok(false);
                    }
                    let mut m = [std::mem::MaybeUninit::<u8>::uninit(); 64];
                    match s.recv_from(&mut m) {
                        Ok((n, from)) => {
                            // SAFETY: recv_from initialised the first n bytes.
                            #[allow(unsafe_code)]
                            let b: Vec<u8> =
                                m[..n].iter().map(|x| unsafe { x.assume_init() }).collect();
                            if n == 8
                                && u32::from_be_bytes(b[0..4].try_into().unwrap()) == LINK_MAGIC
                                && u32::from_be_bytes(b[4..8].try_into().unwrap()) == LINK_OPEN
                            {
                                self.peer = Some(from);
                                break;
                            }
                            return Err((
                                libc::EINVAL,
                                "recvfrom udp link open",
                                format!(
                                    "the first message ({n} bytes) is not fio's link open message"
                                ),
                            ));
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                        Err(e) => return Err(err("recvfrom udp link open", e)),
                    }
                }
                self.sock = Some(s);
                return Ok(true);
            }
            // fio prints it on stdout; here on stderr, as stdout may carry JSON.
            eprintln!("fio: waiting for connection");
            if !Self::wait(l.as_raw_fd(), libc::POLLIN, stop)? {
                return Ok(false);
            }
            let (s, from) = l.accept().map_err(|e| err("accept", e))?;
            self.nodelay(&s)?;
            s.set_nonblocking(true).map_err(|e| err("accept", e))?;
            self.peer = Some(from);
            self.sock = Some(s);
            return Ok(true);
        }
        let peer = self.peer.clone().expect("resolved at setup");
        let domain = if p == Proto::Unix {
            Domain::UNIX
        } else if p.v6() {
            Domain::IPV6
        } else {
            Domain::IPV4
        };
        let s = Socket::new(domain, stream_or_dgram(p), None).map_err(|e| err("socket", e))?;
        self.nodelay(&s)?;
        self.opts(&s, false)?;
        if p.udp() {
            if multicast(self.o.host.as_deref().unwrap_or_default()).is_some() {
                if let Some(i) = self.interface()? {
                    s.set_multicast_if_v4(&i)
                        .map_err(|e| err("setsockopt IP_MULTICAST_IF", e))?;
                }
                s.set_multicast_ttl_v4(self.o.ttl)
                    .map_err(|e| err("setsockopt IP_MULTICAST_TTL", e))?;
            }
            if self.writes {
                let mut m = [0u8; 8];
                m[0..4].copy_from_slice(&LINK_MAGIC.to_be_bytes());
                m[4..8].copy_from_slice(&LINK_OPEN.to_be_bytes());
                s.send_to(&m, &peer)
                    .map_err(|e| err("sendto udp link open", e))?;
            }
        } else {
            s.connect(&peer).map_err(|e| err("connect", e))?;
        }
        s.set_nonblocking(true).map_err(|e| err("socket", e))?;
        self.sock = Some(s);
        Ok(true)
    }

    /// One message, `b`: a write sends it, a read receives it (then, with pingpong, the
    /// other way). Bytes moved, 0 when the peer is done, or −errno.
    pub fn io(&mut self, write: bool, b: &mut [u8], stop: &dyn Fn() -> bool) -> i64 {
        let r = if write {
            self.send(b, stop)
        } else {
            self.recv(b, stop, 0)
        };
        if r <= 0 || !self.o.pingpong {
            return r;
        }
        let back = if write {
            self.recv(b, stop, 1)
        } else {
            self.send(b, stop)
        };
        if back < 0 { back } else { r }
    }

    /// The UDP messages found missing since the last call, reads' and writes'.
    pub fn take_drops(&mut self) -> [u64; 2] {
        std::mem::take(&mut self.drops)
    }

    /// fio's `verify_udp_seq` over a received message `b` (`n` bytes arrived), counted in
    /// direction `d`: a message whose trailer has fio's magic and `b`'s size carries the
    /// sender's sequence number; numbers skipped since the last one are drops.
    fn check_seq(&mut self, b: &[u8], n: usize, d: usize) {
        if !self.o.udp_seq || self.seq_off || b.len() < 24 || n != b.len() {
            return;
        }
        let t = b.len() - 24;
        let word = |i: usize| u64::from_le_bytes(b[t + i..t + i + 8].try_into().unwrap());
        if word(0) != SEQ_MAGIC {
            return;
        }
        if word(16) != b.len() as u64 {
            self.seq_off = true;
            return;
        }
        let seq = word(8);
        // A message that comes late (after a later one) is not a drop; fio's unsigned
        // difference would count it as 2^64 - k of them.
        if seq > self.seq_rx {
            self.drops[d] += seq - self.seq_rx;
        }
        self.seq_rx = seq + 1;
    }

    fn send(&mut self, b: &mut [u8], stop: &dyn Fn() -> bool) -> i64 {
        let udp = self.o.proto.udp();
        if self.pipe.is_some() && self.o.proto.tcp() {
            return self.splice_out(b, stop);
        }
        if udp && self.o.udp_seq && b.len() >= 24 {
            // fio's sequence trailer: magic, sequence number, message size (little-endian).
            let (t, n) = (b.len() - 24, b.len() as u64);
            b[t..t + 8].copy_from_slice(&SEQ_MAGIC.to_le_bytes());
            b[t + 8..t + 16].copy_from_slice(&self.seq_tx.to_le_bytes());
            b[t + 16..].copy_from_slice(&n.to_le_bytes());
            self.seq_tx += 1;
        }
        let Some(s) = self.sock.as_ref() else {
            return -i64::from(libc::ENOTCONN);
        };
        let mut done = 0usize;
        let more = !udp && !self.o.pingpong && self.sent + (b.len() as u64) < self.size;
        while done < b.len() {
            let r = if udp {
                match self.peer.as_ref() {
                    Some(p) => s.send_to(&b[done..], p),
                    None => return -i64::from(libc::ENOTCONN),
                }
            } else {
                let flags = libc::MSG_NOSIGNAL | if more { libc::MSG_MORE } else { 0 };
                s.send_with_flags(&b[done..], flags)
            };
            match r {
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    match Self::wait(s.as_raw_fd(), libc::POLLOUT, stop) {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(e) => return -i64::from(e.0),
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
            }
        }
        self.sent += done as u64;
        done as i64
    }

    /// Receives one message into `b` for an I/O of direction `d` (0 reads, 1 writes).
    fn recv(&mut self, b: &mut [u8], stop: &dyn Fn() -> bool, d: usize) -> i64 {
        let udp = self.o.proto.udp();
        if self.pipe.is_some() && self.o.proto.tcp() {
            return self.splice_in(b, stop);
        }
        let Some(s) = self.sock.as_ref() else {
            return -i64::from(libc::ENOTCONN);
        };
        let mut done = 0usize;
        while done < b.len() {
            // SAFETY: the bytes are initialised; socket2 takes MaybeUninit.
            #[allow(unsafe_code)]
            let dst = unsafe {
                std::slice::from_raw_parts_mut(
                    b[done..].as_mut_ptr().cast::<std::mem::MaybeUninit<u8>>(),
                    b.len() - done,
                )
            };
            let r = if udp {
                s.recv_from(dst).map(|(n, from)| {
                    if self.o.listen {
                        self.peer = Some(from);
                    }
                    n
                })
            } else {
                s.recv(dst)
            };
            match r {
                Ok(0) if !udp => break,
                Ok(n) => {
                    if udp {
                        if n == 8
                            && u32::from_le_bytes(b[0..4].try_into().unwrap()) == LINK_MAGIC
                            && u32::from_le_bytes(b[4..8].try_into().unwrap()) == LINK_CLOSE
                        {
                            return 0;
                        }
                        // A datagram is a message, whatever its size.
                        self.check_seq(b, n, d);
                        return n as i64;
                    }
                    done += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    match Self::wait(s.as_raw_fd(), libc::POLLIN, stop) {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(e) => return -i64::from(e.0),
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
            }
        }
        done as i64
    }

    /// netsplice's send: the buffer `vmsplice`d into the pipe, then `splice`d from the pipe
    /// to the socket, a pipe's worth at a time (fio fills the pipe with the whole message
    /// first, which waits for ever when `bs` is larger than the pipe). Bytes sent or −errno.
    fn splice_out(&mut self, b: &[u8], stop: &dyn Fn() -> bool) -> i64 {
        use std::os::fd::AsRawFd as _;
        let (Some(s), Some((pr, pw))) = (self.sock.as_ref(), self.pipe.as_ref()) else {
            return -i64::from(libc::ENOTCONN);
        };
        let (sock, pr, pw) = (s.as_raw_fd(), pr.as_raw_fd(), pw.as_raw_fd());
        let mut done = 0usize;
        while done < b.len() {
            let iov = libc::iovec {
                iov_base: b[done..].as_ptr() as *mut libc::c_void,
                iov_len: b.len() - done,
            };
            // SAFETY: one iovec over our buffer, into our pipe's write end.
            #[allow(unsafe_code)]
            let n = unsafe { libc::vmsplice(pw, &iov, 1, libc::SPLICE_F_MOVE) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return -i64::from(e.raw_os_error().unwrap_or(libc::EIO));
            }
            let mut left = n as usize;
            while left > 0 {
                // SAFETY: splice between descriptors of ours.
                #[allow(unsafe_code)]
                let m = unsafe {
                    libc::splice(
                        pr,
                        std::ptr::null_mut(),
                        sock,
                        std::ptr::null_mut(),
                        left,
                        0,
                    )
                };
                if m < 0 {
                    let e = io::Error::last_os_error();
                    match e.kind() {
                        io::ErrorKind::Interrupted => continue,
                        io::ErrorKind::WouldBlock => match Self::wait(sock, libc::POLLOUT, stop) {
                            Ok(true) => continue,
                            Ok(false) => return (done + n as usize - left) as i64,
                            Err(e) => return -i64::from(e.0),
                        },
                        _ => return -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
                    }
                }
                if m == 0 {
                    break;
                }
                left -= m as usize;
            }
            done += n as usize;
        }
        self.sent += done as u64;
        done as i64
    }

    /// netsplice's receive: `splice` from the socket into the pipe, then `vmsplice` the
    /// pipe's bytes out into the buffer, until the whole message is in (as `net`'s
    /// receive) or the stream ends. Bytes received or −errno.
    fn splice_in(&mut self, b: &mut [u8], stop: &dyn Fn() -> bool) -> i64 {
        use std::os::fd::AsRawFd as _;
        let (Some(s), Some((pr, pw))) = (self.sock.as_ref(), self.pipe.as_ref()) else {
            return -i64::from(libc::ENOTCONN);
        };
        let (sock, pr, pw) = (s.as_raw_fd(), pr.as_raw_fd(), pw.as_raw_fd());
        let mut done = 0usize;
        while done < b.len() {
            // SAFETY: splice between descriptors of ours.
            #[allow(unsafe_code)]
            let n = unsafe {
                libc::splice(
                    sock,
                    std::ptr::null_mut(),
                    pw,
                    std::ptr::null_mut(),
                    b.len() - done,
                    0,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::WouldBlock => match Self::wait(sock, libc::POLLIN, stop) {
                        Ok(true) => continue,
                        Ok(false) => break,
                        Err(e) => return -i64::from(e.0),
                    },
                    _ => return -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
                }
            }
            if n == 0 {
                break;
            }
            let mut left = n as usize;
            while left > 0 {
                let iov = libc::iovec {
                    iov_base: b[done..].as_mut_ptr().cast::<libc::c_void>(),
                    iov_len: left,
                };
                // SAFETY: one iovec over our buffer, filled from our pipe's read end.
                #[allow(unsafe_code)]
                let m = unsafe { libc::vmsplice(pr, &iov, 1, 0) };
                if m < 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    return -i64::from(e.raw_os_error().unwrap_or(libc::EIO));
                }
                if m == 0 {
                    break;
                }
                left -= m as usize;
                done += m as usize;
            }
        }
        done as i64
    }

    /// fio's close: a UDP writer tells its readers it is done (the close message).
    pub fn close(&mut self) {
        if self.o.proto.udp()
            && self.writes
            && let (Some(s), Some(p)) = (self.sock.as_ref(), self.peer.as_ref())
        {
            let mut m = [0u8; 8];
            m[0..4].copy_from_slice(&LINK_MAGIC.to_le_bytes());
            m[4..8].copy_from_slice(&LINK_CLOSE.to_le_bytes());
            // Sent 5 times over 80 ms (fio sends it once): right after a burst the reader's
            // buffer may be full, and a lost close message leaves the reader waiting.
            for i in 0..5 {
                if i > 0 {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                let _ = s.send_to(&m, p);
            }
        }
        self.sock = None;
    }
}

impl Net {
    /// The end of the clone: [`Net::close`], the listener closed, and the unix socket file
    /// this engine made removed.
    pub fn finish(&mut self) {
        self.close();
        self.listener = None;
        if let Some(p) = self.made.take() {
            // Only the socket this engine bound (still a socket).
            use std::os::unix::fs::FileTypeExt;
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_socket()) {
                let _ = std::fs::remove_file(&p);
            }
        }
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(proto: Proto, port: u32, host: Option<&str>) -> NetOpts {
        NetOpts {
            proto,
            port,
            host: host.map(str::to_string),
            ttl: 1,
            ..Default::default()
        }
    }

    #[test]
    fn fio_s_init_checks() {
        let mut o = opts(Proto::Tcp, 0, Some("h"));
        assert!(
            check(&mut o, false, true, false)
                .unwrap_err()
                .contains("port")
        );
        let mut o = opts(Proto::Unix, 5, Some("/p"));
        assert!(
            check(&mut o, true, false, false)
                .unwrap_err()
                .contains("unix")
        );
        let mut o = opts(Proto::Udp, 5, None);
        o.listen = true;
        assert!(
            check(&mut o, true, false, false)
                .unwrap_err()
                .contains("listen")
        );
        let mut o = opts(Proto::Udp, 5, None);
        check(&mut o, true, false, false).unwrap();
        assert!(o.listen, "a udp reader listens");
        let mut o = opts(Proto::Udp, 5, Some("h"));
        assert!(check(&mut o, true, true, false).is_err());
        let mut o = opts(Proto::Tcp, 5, None);
        assert!(
            check(&mut o, true, false, false)
                .unwrap_err()
                .contains("listen")
        );
        let mut o = opts(Proto::Tcp, 5, Some("h"));
        assert!(
            check(&mut o, false, true, true)
                .unwrap_err()
                .contains("random")
        );
        let mut o = opts(Proto::Tcp, 5, Some("somehost"));
        o.listen = true;
        assert!(check(&mut o, true, false, false).is_err());
    }

    #[test]
    fn multicast_groups() {
        assert!(multicast("239.0.0.0").is_some());
        assert!(multicast("224.0.0.1").is_some());
        assert!(multicast("127.0.0.1").is_none());
        assert!(multicast("localhost").is_none());
    }
}
