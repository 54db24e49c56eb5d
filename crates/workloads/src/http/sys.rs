//! Thin, safe wrappers over the few Linux calls the HTTP engine and server use: epoll,
//! nonblocking TCP sockets, read/write/close, RLIMIT_NOFILE. Each wrapper returns the errno
//! rather than panicking; callers classify errors.

use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;

/// An epoll instance, closed on drop.
#[derive(Debug)]
pub struct Epoll(RawFd);

/// Interest flags.
pub const IN: u32 = libc::EPOLLIN as u32;
/// Writable.
pub const OUT: u32 = libc::EPOLLOUT as u32;
/// Edge-triggered.
pub const ET: u32 = libc::EPOLLET as u32;
/// Peer closed its write side.
pub const RDHUP: u32 = libc::EPOLLRDHUP as u32;
/// Error.
pub const ERR: u32 = libc::EPOLLERR as u32;
/// Hang-up.
pub const HUP: u32 = libc::EPOLLHUP as u32;
/// Wake only one waiter (shared listening sockets).
pub const EXCLUSIVE: u32 = libc::EPOLLEXCLUSIVE as u32;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

impl Epoll {
    /// A new epoll instance.
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain syscall.
        cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }).map(Epoll)
    }

    /// Registers `fd` with `events`, tagged with `token`.
    pub fn add(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: `ev` is a valid epoll_event for the duration of the call.
        cvt(unsafe { libc::epoll_ctl(self.0, libc::EPOLL_CTL_ADD, fd, &mut ev) }).map(|_| ())
    }

    /// Changes the registration of `fd`.
    pub fn modify(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: as above.
        cvt(unsafe { libc::epoll_ctl(self.0, libc::EPOLL_CTL_MOD, fd, &mut ev) }).map(|_| ())
    }

    /// Removes `fd` from the set.
    pub fn delete(&self, fd: RawFd) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: as above (a non-null event for kernels before 2.6.9).
        cvt(unsafe { libc::epoll_ctl(self.0, libc::EPOLL_CTL_DEL, fd, &mut ev) }).map(|_| ())
    }

    /// Waits up to `timeout_ms` (-1 = forever) and fills `events`; returns how many.
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout_ms: i32) -> usize {
        // SAFETY: the buffer is valid for `events.len()` entries.
        let n = unsafe {
            libc::epoll_wait(
                self.0,
                events.as_mut_ptr(),
                events.len().min(i32::MAX as usize) as i32,
                timeout_ms,
            )
        };
        n.max(0) as usize
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        // SAFETY: we own the descriptor.
        unsafe { libc::close(self.0) };
    }
}

/// An empty event buffer.
pub fn events(n: usize) -> Vec<libc::epoll_event> {
    vec![libc::epoll_event { events: 0, u64: 0 }; n]
}

fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: an all-zero sockaddr_storage is valid.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is large enough and suitably aligned for sockaddr_in.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in, sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: as above, for sockaddr_in6.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in6, sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

fn tcp_socket(addr: &SocketAddr) -> io::Result<RawFd> {
    let family = match addr {
        SocketAddr::V4(_) => libc::AF_INET,
        SocketAddr::V6(_) => libc::AF_INET6,
    };
    // SAFETY: plain syscall.
    cvt(unsafe {
        libc::socket(
            family,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })
}

/// Binds `fd` to `local`. With port 0 the port is left to `connect`
/// (IP_BIND_ADDRESS_NO_PORT), so connections to different targets may share local ports as
/// they do without a bind.
fn bind(fd: RawFd, local: &SocketAddr) -> io::Result<()> {
    if local.port() == 0 {
        set_int(fd, libc::IPPROTO_IP, libc::IP_BIND_ADDRESS_NO_PORT, 1);
    }
    let (ss, len) = sockaddr(local);
    // SAFETY: `ss` holds a valid address of `len` bytes.
    cvt(unsafe { libc::bind(fd, &ss as *const _ as *const libc::sockaddr, len) }).map(|_| ())
}

/// Checks that a TCP socket can be bound to `local` (an address of this host, a family the
/// kernel has), before a run relies on it.
pub fn check_bind(local: &SocketAddr) -> io::Result<()> {
    let fd = tcp_socket(local)?;
    let r = bind(fd, local);
    close(fd);
    r
}

/// A nonblocking TCP socket with TCP_NODELAY, bound to `local` if given, connecting to
/// `addr`. Returns the descriptor and whether the connection is already established.
pub fn connect(
    addr: &SocketAddr,
    local: Option<&SocketAddr>,
    sndbuf: u32,
    rcvbuf: u32,
) -> io::Result<(RawFd, bool)> {
    let fd = tcp_socket(addr)?;
    if let Some(local) = local
        && let Err(e) = bind(fd, local)
    {
        close(fd);
        return Err(e);
    }
    set_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1);
    if sndbuf > 0 {
        set_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, sndbuf as i32);
    }
    if rcvbuf > 0 {
        set_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, rcvbuf as i32);
    }
    let (ss, len) = sockaddr(addr);
    // SAFETY: `ss` holds a valid address of `len` bytes.
    let r = unsafe { libc::connect(fd, &ss as *const _ as *const libc::sockaddr, len) };
    if r == 0 {
        return Ok((fd, true));
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EINPROGRESS) {
        Ok((fd, false))
    } else {
        close(fd);
        Err(e)
    }
}

fn set_int(fd: RawFd, level: libc::c_int, opt: libc::c_int, v: i32) {
    // SAFETY: `v` lives for the call; failures are harmless (a hint).
    unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            &v as *const i32 as *const libc::c_void,
            std::mem::size_of::<i32>() as libc::socklen_t,
        );
    }
}

/// The pending error of a socket (connect result), 0 when none.
pub fn so_error(fd: RawFd) -> i32 {
    let mut v: i32 = 0;
    let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
    // SAFETY: `v` and `len` are valid for the call.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            &mut v as *mut i32 as *mut libc::c_void,
            &mut len,
        )
    };
    if r < 0 {
        io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    } else {
        v
    }
}

/// `read(2)`: bytes read, or the errno.
#[inline]
pub fn read(fd: RawFd, buf: &mut [u8]) -> Result<usize, i32> {
    // SAFETY: the buffer is valid for `buf.len()` bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    } else {
        Ok(n as usize)
    }
}

/// `send(2)` without SIGPIPE: bytes written, or the errno.
#[inline]
pub fn write(fd: RawFd, buf: &[u8]) -> Result<usize, i32> {
    // SAFETY: the buffer is valid for `buf.len()` bytes.
    let n = unsafe {
        libc::send(
            fd,
            buf.as_ptr() as *const libc::c_void,
            buf.len(),
            libc::MSG_NOSIGNAL,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    } else {
        Ok(n as usize)
    }
}

/// Closes `fd`.
#[inline]
pub fn close(fd: RawFd) {
    // SAFETY: callers pass descriptors they own and never use again.
    unsafe { libc::close(fd) };
}

/// Closes `fd` with a reset (SO_LINGER 0): no TIME_WAIT on our side. Used for abandoned
/// connections.
pub fn abort(fd: RawFd) {
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `l` lives for the call.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &l as *const libc::linger as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    close(fd);
}

/// Raises the soft RLIMIT_NOFILE to the hard limit; returns the new soft limit.
pub fn raise_nofile() -> u64 {
    // SAFETY: plain syscalls on a local struct.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return 1024;
        }
        if r.rlim_cur < r.rlim_max {
            let want = libc::rlimit {
                rlim_cur: r.rlim_max,
                rlim_max: r.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                return want.rlim_cur;
            }
        }
        r.rlim_cur
    }
}

/// User and system CPU seconds of this process.
pub fn cpu_times() -> (f64, f64) {
    // SAFETY: getrusage fills a local struct.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        (tv(u.ru_utime), tv(u.ru_stime))
    }
}

/// A one-shot CLOCK_MONOTONIC timerfd, for sub-millisecond wake-ups inside epoll.
#[derive(Debug)]
pub struct Timer(RawFd);

impl Timer {
    /// A new disarmed timer.
    pub fn new() -> io::Result<Timer> {
        // SAFETY: plain syscall.
        cvt(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        })
        .map(Timer)
    }

    /// The descriptor, for epoll.
    pub fn fd(&self) -> RawFd {
        self.0
    }

    /// Fires once after `ns` nanoseconds; false if the timer could not be armed.
    pub fn arm(&self, ns: u64) -> bool {
        let ns = ns.max(1);
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (ns / 1_000_000_000) as _, // time_t: its alias is deprecated on musl
                tv_nsec: (ns % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: `spec` lives for the call; the old value is not wanted.
        unsafe { libc::timerfd_settime(self.0, 0, &spec, std::ptr::null_mut()) == 0 }
    }

    /// Consumes an expiry so level-triggered epoll stops reporting it.
    pub fn clear(&self) {
        let mut v = [0u8; 8];
        let _ = read(self.0, &mut v);
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        close(self.0);
    }
}
