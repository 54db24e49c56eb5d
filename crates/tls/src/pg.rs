//! TLS for the `postgres` crate: a `MakeTlsConnect` over tokio-rustls with a config from
//! [`crate::Opts::client_config`]. The negotiated version and suite are kept for the caller
//! ([`MakeRustls::negotiated`]). No channel binding is offered (SCRAM without `-PLUS`).

use postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};
use rustls::ClientConfig;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Makes a rustls connector per connection.
#[derive(Clone)]
pub struct MakeRustls {
    cfg: Arc<ClientConfig>,
    fix: Arc<str>,
    seen: Arc<Mutex<String>>,
}

impl MakeRustls {
    /// A connector with `cfg`; `fix` is what to tell the user when the certificate does
    /// not verify.
    pub fn new(cfg: Arc<ClientConfig>, fix: &str) -> MakeRustls {
        MakeRustls {
            cfg,
            fix: fix.into(),
            seen: Arc::new(Mutex::new(String::new())),
        }
    }

    /// `TLSv1.3 TLS_AES_…` once a handshake finished on a connection made by this connector;
    /// empty while none has (plaintext, or not connected yet).
    pub fn negotiated(&self) -> String {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl<S> MakeTlsConnect<S> for MakeRustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnect;
    type Error = io::Error;

    fn make_tls_connect(&mut self, domain: &str) -> Result<RustlsConnect, io::Error> {
        let name = crate::server_name(domain)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        Ok(RustlsConnect {
            name,
            connector: tokio_rustls::TlsConnector::from(self.cfg.clone()),
            fix: self.fix.clone(),
            seen: self.seen.clone(),
        })
    }
}

/// One connection's connector.
pub struct RustlsConnect {
    name: rustls::pki_types::ServerName<'static>,
    connector: tokio_rustls::TlsConnector,
    fix: Arc<str>,
    seen: Arc<Mutex<String>>,
}

impl<S> TlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<RustlsStream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let s = self
                .connector
                .connect(self.name, stream)
                .await
                .map_err(|e| io::Error::other(crate::handshake_error(&e, &self.fix)))?;
            *self.seen.lock().unwrap_or_else(|e| e.into_inner()) = crate::describe(s.get_ref().1);
            Ok(RustlsStream(Box::new(s)))
        })
    }
}

/// A TLS stream under the `postgres` crate.
pub struct RustlsStream<S>(Box<tokio_rustls::client::TlsStream<S>>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(self.0.as_mut()).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(self.0.as_mut()).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(self.0.as_mut()).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(self.0.as_mut()).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for RustlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}

/// The `postgres` crate's `sslmode` for a [`crate::Mode`] (it knows disable, prefer and
/// require; the verify modes are require with the check done by the rustls config).
pub fn crate_mode(m: crate::Mode) -> postgres::config::SslMode {
    match m {
        crate::Mode::Disable => postgres::config::SslMode::Disable,
        crate::Mode::Prefer => postgres::config::SslMode::Prefer,
        _ => postgres::config::SslMode::Require,
    }
}
