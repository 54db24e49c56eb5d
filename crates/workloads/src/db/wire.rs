//! The socket under hostbench's own database clients ([`super::pg_lean`],
//! [`super::mysql_lean`]): TCP (no Nagle, keepalive) or a unix socket, connected with a
//! timeout, and the login's time limit and error wording.

use super::driver::{DbError, ErrClass, tcp_keepalive};
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// How long a TCP connect may take, per address.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the login may wait for the server's next message, in seconds.
pub const LOGIN_TIMEOUT_S: u64 = 10;

/// A connected client socket.
pub enum Stream {
    /// TCP.
    Tcp(TcpStream),
    /// A unix-domain socket.
    Unix(UnixStream),
    /// TLS over TCP (boxed: the plaintext variants stay small).
    Tls(Box<hostbench_tls::Stream<TcpStream>>),
}

impl Read for Stream {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(b),
            Stream::Unix(s) => s.read(b),
            Stream::Tls(s) => s.read(b),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(b),
            Stream::Unix(s) => s.write(b),
            Stream::Tls(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            // rustls' writer queues records until flushed.
            Stream::Tls(s) => s.flush(),
            _ => Ok(()),
        }
    }
}

impl Stream {
    /// Connects to `host:port` (each resolved address in turn, 5 s each), with
    /// `TCP_NODELAY` and TCP keepalive.
    pub fn tcp(host: &str, port: u16) -> Result<Stream, DbError> {
        let addrs = (host, port)
            .to_socket_addrs()
            .map_err(|e| setup(format!("cannot resolve '{host}': {e}")))?;
        let mut last = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    tcp_keepalive(&s);
                    return Ok(Stream::Tcp(s));
                }
                Err(e) => last = Some(e),
            }
        }
        Err(setup(format!(
            "cannot connect to {host}:{port}: {}",
            last.map(|e| e.to_string())
                .unwrap_or_else(|| "no address".into())
        )))
    }

    /// Connects to the unix socket at `path`.
    pub fn unix(path: &str) -> Result<Stream, DbError> {
        UnixStream::connect(path)
            .map(Stream::Unix)
            .map_err(|e| setup(format!("cannot connect to socket {path}: {e}")))
    }

    /// Bounds every read by the login time limit (`true`) or lifts the bound (`false`): a
    /// server that never answers the handshake (another kind of server on this port, a
    /// stopped process) must not hold the run, and a long query later must not be cut.
    pub fn login_timeout(&self, on: bool) {
        let d = on.then_some(Duration::from_secs(LOGIN_TIMEOUT_S));
        let _ = match self {
            Stream::Tcp(s) => s.set_read_timeout(d),
            Stream::Unix(s) => s.set_read_timeout(d),
            Stream::Tls(s) => s.sock.set_read_timeout(d),
        };
    }

    /// Ends a TLS session with close_notify, so the server logs a clean close rather than
    /// an unexpected EOF; nothing for plaintext. Best effort (the connection is going).
    pub fn close_tls(&mut self) {
        if let Stream::Tls(s) = self {
            s.conn.send_close_notify();
            let s = &mut **s;
            while s.conn.wants_write() {
                if s.conn.write_tls(&mut s.sock).is_err() {
                    break;
                }
            }
        }
    }

    /// True for a unix-domain socket (never TLS, as libpq).
    pub fn is_unix(&self) -> bool {
        matches!(self, Stream::Unix(_))
    }

    /// The TLS in use: `TLSv1.3 TLS_AES_…`, or `none`.
    pub fn tls(&self) -> String {
        match self {
            Stream::Tls(s) => hostbench_tls::describe(&s.conn),
            _ => "none".into(),
        }
    }

    /// Runs the TLS handshake over this TCP connection with `opts`, verifying `host` as
    /// they say; `fix` tells the user what to do about a certificate that does not verify.
    pub fn start_tls(
        self,
        opts: &hostbench_tls::Opts,
        host: &str,
        fix: &str,
    ) -> Result<Stream, DbError> {
        let Stream::Tcp(tcp) = self else {
            return Err(setup("TLS is only used over TCP".into()));
        };
        let cfg = opts.client_config().map_err(|e| setup(e.to_string()))?;
        hostbench_tls::handshake(cfg, host, tcp, fix)
            .map(|s| Stream::Tls(Box::new(s)))
            .map_err(|e| setup(e.to_string()))
    }
}

fn setup(msg: String) -> DbError {
    DbError::new(ErrClass::Other, msg)
}

/// A failed login as a setup error (not a lost connection to reconnect); a lost connection
/// or garbage during the login asks whether `kind`'s server listens there at all. An error
/// the server sent (it has a code: a missing role or database, a refused password) is the
/// server's answer, so it gets no such question.
pub fn login_error(mut e: DbError, kind: &str, usual_port: u16) -> DbError {
    if e.class == ErrClass::Lost && e.code.is_empty() {
        let timed_out = e.message.contains("Resource temporarily unavailable")
            || e.message.contains("timed out");
        e.message = if timed_out {
            format!(
                "no answer to the login within {LOGIN_TIMEOUT_S} s: is a {kind} server listening there (its usual port is {usual_port})?"
            )
        } else {
            format!(
                "{}: is a {kind} server listening there (its usual port is {usual_port})?",
                e.message
            )
        };
    }
    e.class = ErrClass::Other;
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `role "x" does not exist` is the server's answer: no "is a server listening?".
    #[test]
    fn a_servers_own_login_error_gets_no_listening_question() {
        let sent = DbError::new(
            ErrClass::Lost,
            "FATAL: role \"x\" does not exist".to_string(),
        );
        let sent = DbError {
            code: "28000".into(),
            ..sent
        };
        let e = login_error(sent, "PostgreSQL", 5432);
        assert_eq!(e.message, "FATAL: role \"x\" does not exist");
        assert_eq!(e.class, ErrClass::Other);
        let lost = DbError::new(ErrClass::Lost, "unexpected end of file".to_string());
        let e = login_error(lost, "PostgreSQL", 5432);
        assert!(
            e.message.contains("is a PostgreSQL server listening there"),
            "{e}"
        );
    }
}
