//! TLS to databases, client side: libpq's `sslmode` and MySQL's `--ssl-mode` over rustls with
//! the `ring` provider (no OpenSSL, no cmake: the static binary stays static). Shared by
//! hostbench's own database clients, the `postgres` crate client ([`pg::MakeRustls`]) and the
//! results store's PostgreSQL backend.
//!
//! What is verified, per [`Mode`] (libpq's rules, which MySQL's client follows too):
//! - `disable`: no TLS.
//! - `prefer`, `require` without a CA file: TLS (required or not), the certificate is not
//!   checked: the server's signature over the handshake is verified with the public key of
//!   whatever certificate it sent, which proves nothing about who the server is (anyone in
//!   the middle can send a certificate of their own); the traffic is encrypted, not
//!   authenticated. (The `mysql` crate client, `--mysql-client=crate`, does not even check
//!   that signature in this mode.)
//! - `prefer`, `require` with a CA file (`sslrootcert`, `--mysql-ssl-ca`): the chain must lead
//!   to that CA, as `verify-ca` (libpq does the same when a root certificate is present).
//! - `verify-ca`: the chain must lead to the CA file; the host name is not checked. A CA file
//!   is required ([`Opts::check`]): without one, any publicly trusted certificate for any
//!   name would pass (libpq refuses it too).
//! - `verify-full`: the chain must lead to the CA file, or without one to the Mozilla roots
//!   compiled in (`webpki-roots`; no platform store is read), and the certificate must name
//!   the host connected to (a DNS name, or an IP address in the certificate's IP SANs; the
//!   subject's CN is never used, unlike libpq with a certificate without SANs).
//!
//! Unix sockets never use TLS (as libpq): callers skip the negotiation there.

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, ring as provider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, SignatureScheme};
use std::io::{self, Read, Write};
use std::sync::Arc;

#[cfg(feature = "postgres")]
pub mod pg;

/// How much TLS a connection asks for (libpq's `sslmode`, MySQL's `--ssl-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No TLS.
    Disable,
    /// TLS when the server offers it, else plaintext.
    Prefer,
    /// TLS or fail; the certificate is checked only when a CA file is given.
    Require,
    /// TLS, and the certificate chain must lead to the CA file (which is required).
    VerifyCa,
    /// The chain must lead to the CA file (or the public roots without one), and the
    /// certificate must name the host.
    VerifyFull,
}

/// The PostgreSQL words, in order (`allow` is refused with its own message).
pub const PG_MODES: &[&str] = &["disable", "prefer", "require", "verify-ca", "verify-full"];
/// The MySQL words (case-insensitive), sysbench 1.0.20's `on`/`off` included.
pub const MYSQL_MODES: &[&str] = &[
    "DISABLED",
    "PREFERRED",
    "REQUIRED",
    "VERIFY_CA",
    "VERIFY_IDENTITY",
    "on",
    "off",
];

impl Mode {
    /// libpq's `sslmode` word. `allow` (plaintext first, TLS only when the server refuses
    /// plaintext) is not offered: it is an error saying so.
    pub fn parse_pg(s: &str) -> Result<Mode, ModeError> {
        Ok(match s.trim() {
            "disable" => Mode::Disable,
            "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            "allow" => return Err(ModeError::PgAllow),
            other => return Err(ModeError::UnknownPg(other.to_string())),
        })
    }

    /// MySQL's `--ssl-mode` word (case-insensitive), or sysbench 1.0.20's `on` (REQUIRED)
    /// and `off` (DISABLED).
    pub fn parse_mysql(s: &str) -> Result<Mode, ModeError> {
        Ok(match s.trim().to_ascii_uppercase().as_str() {
            "DISABLED" | "OFF" | "0" | "FALSE" => Mode::Disable,
            "PREFERRED" => Mode::Prefer,
            "REQUIRED" | "ON" | "1" | "TRUE" => Mode::Require,
            "VERIFY_CA" => Mode::VerifyCa,
            "VERIFY_IDENTITY" => Mode::VerifyFull,
            _ => return Err(ModeError::UnknownMysql(s.trim().to_string())),
        })
    }

    /// The libpq word.
    pub fn pg_name(self) -> &'static str {
        match self {
            Mode::Disable => "disable",
            Mode::Prefer => "prefer",
            Mode::Require => "require",
            Mode::VerifyCa => "verify-ca",
            Mode::VerifyFull => "verify-full",
        }
    }

    /// The MySQL word.
    pub fn mysql_name(self) -> &'static str {
        match self {
            Mode::Disable => "DISABLED",
            Mode::Prefer => "PREFERRED",
            Mode::Require => "REQUIRED",
            Mode::VerifyCa => "VERIFY_CA",
            Mode::VerifyFull => "VERIFY_IDENTITY",
        }
    }

    /// TLS must be used: a server without it is an error.
    pub fn required(self) -> bool {
        !matches!(self, Mode::Disable | Mode::Prefer)
    }
}

/// What a client asks for: the mode and the CA file (empty: none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opts {
    /// How much TLS.
    pub mode: Mode,
    /// PEM file of the CA certificate(s) the server's chain must lead to (empty: none).
    pub ca: String,
}

/// What the certificate check covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Nothing (only the handshake signatures).
    Nothing,
    /// The chain leads to a trusted CA.
    Ca,
    /// The chain, and the host name.
    Full,
}

impl Opts {
    /// No TLS.
    pub fn disabled() -> Opts {
        Opts {
            mode: Mode::Disable,
            ca: String::new(),
        }
    }

    /// Refuses what would verify less than it says: `verify-ca` / `VERIFY_CA` without a CA
    /// file (the public roots with no host name check accept any publicly trusted
    /// certificate, whoever it was issued to). `mysql` picks the words of the message.
    pub fn check(&self, mysql: bool) -> Result<(), ModeError> {
        if self.mode != Mode::VerifyCa || !self.ca.is_empty() {
            return Ok(());
        }
        Err(ModeError::VerifyCaWithoutCa { mysql })
    }
}

/// A TLS mode that is not one, or options that would verify less than they say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModeError {
    /// libpq's `sslmode=allow`, which hostbench does not offer.
    PgAllow,
    /// Not a libpq `sslmode` word.
    UnknownPg(String),
    /// Not a MySQL `--ssl-mode` word.
    UnknownMysql(String),
    /// `verify-ca` without a CA file ([`Opts::check`]), in MySQL's words or libpq's.
    VerifyCaWithoutCa {
        /// MySQL's option names (else PostgreSQL's).
        mysql: bool,
    },
}

impl std::fmt::Display for ModeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModeError::PgAllow => f.write_str(
                "sslmode=allow is not offered by hostbench (use disable for plaintext or \
                 prefer for TLS when the server offers it)",
            ),
            ModeError::UnknownPg(other) => write!(
                f,
                "unknown sslmode '{other}' (use one of {})",
                PG_MODES.join(", ")
            ),
            ModeError::UnknownMysql(other) => write!(
                f,
                "unknown MySQL SSL mode '{other}' (use one of {})",
                MYSQL_MODES.join(", ")
            ),
            &ModeError::VerifyCaWithoutCa { mysql } => {
                let (mode, full, ca) = if mysql {
                    (
                        "--mysql-ssl=VERIFY_CA",
                        "--mysql-ssl=VERIFY_IDENTITY",
                        "--mysql-ssl-ca=PATH (ssl-ca=PATH in a URL)",
                    )
                } else {
                    (
                        "sslmode=verify-ca",
                        "sslmode=verify-full",
                        "sslrootcert=PATH (--pgsql-sslrootcert=PATH, or in the results store URL)",
                    )
                };
                write!(
                    f,
                    "{mode} needs a CA file: without one any publicly trusted certificate would pass, \
             whoever it names (the host name is not checked in this mode). Give the CA \
             certificate that signed the server's with {ca}, or use {full} to check the \
             server's name against the public roots"
                )
            }
        }
    }
}

impl std::error::Error for ModeError {}

impl Opts {
    /// What is verified (see the module's table).
    pub fn verify(&self) -> Verify {
        match self.mode {
            Mode::Disable => Verify::Nothing,
            Mode::VerifyFull => Verify::Full,
            Mode::VerifyCa => Verify::Ca,
            Mode::Prefer | Mode::Require if self.ca.is_empty() => Verify::Nothing,
            Mode::Prefer | Mode::Require => Verify::Ca,
        }
    }

    /// The rustls client config for these options (TLS 1.2 and 1.3, no client certificate).
    /// Errors name the CA file and what is wrong with it; `verify-ca` without a CA file is
    /// refused (see [`Opts::check`]).
    pub fn client_config(&self) -> Result<Arc<ClientConfig>, TlsError> {
        if self.mode == Mode::VerifyCa && self.ca.is_empty() {
            return Err(TlsError::VerifyCaWithoutCa);
        }
        let p = Arc::new(provider::default_provider());
        let builder = ClientConfig::builder_with_provider(p.clone())
            .with_protocol_versions(rustls::ALL_VERSIONS)
            .map_err(|e| TlsError::Setup(e.to_string()))?;
        let verify = self.verify();
        let mut cfg = if verify == Verify::Nothing {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AcceptAnyCert(p)))
                .with_no_client_auth()
        } else {
            let roots = Arc::new(self.roots()?);
            let full = WebPkiServerVerifier::builder_with_provider(roots, p)
                .build()
                .map_err(|e| TlsError::Setup(e.to_string()))?;
            if verify == Verify::Full {
                builder.with_webpki_verifier(full).with_no_client_auth()
            } else {
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(AnyName(full)))
                    .with_no_client_auth()
            }
        };
        // Databases are reached by name or address; SNI is harmless and some proxies route
        // by it.
        cfg.enable_sni = true;
        Ok(Arc::new(cfg))
    }

    /// The CA file's certificates, or the public roots when there is no CA file (only
    /// `verify-full` gets there: [`Opts::client_config`] refuses `verify-ca` without one).
    fn roots(&self) -> Result<rustls::RootCertStore, TlsError> {
        if self.ca.is_empty() {
            return Ok(rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            });
        }
        let ca_file = |what: String| TlsError::CaFile {
            path: self.ca.clone(),
            what,
        };
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&self.ca)
            .map_err(|e| ca_file(e.to_string()))?
            .collect::<Result<_, _>>()
            .map_err(|e| ca_file(e.to_string()))?;
        if certs.is_empty() {
            return Err(ca_file("no CERTIFICATE block found (expected PEM)".into()));
        }
        let mut roots = rustls::RootCertStore::empty();
        for c in certs {
            roots.add(c).map_err(|e| ca_file(e.to_string()))?;
        }
        Ok(roots)
    }
}

/// What went wrong setting up TLS to a database or shaking hands with it, in words for the
/// user ([`std::fmt::Display`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsError {
    /// `verify-ca` without a CA file.
    VerifyCaWithoutCa,
    /// rustls refused the configuration (its message).
    Setup(String),
    /// The CA file could not be read, holds no certificate or a bad one.
    CaFile {
        /// The file.
        path: String,
        /// What is wrong with it.
        what: String,
    },
    /// Not a DNS name or an IP address.
    ServerName(String),
    /// The handshake failed ([`handshake_error`]'s words).
    Handshake(String),
}

impl std::fmt::Display for TlsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TlsError::VerifyCaWithoutCa => f.write_str(
                "verify-ca without a CA file is refused: give the CA certificate that signed \
                 the server's",
            ),
            TlsError::Setup(e) => write!(f, "TLS setup: {e}"),
            TlsError::CaFile { path, what } => write!(f, "CA file {path}: {what}"),
            TlsError::ServerName(host) => write!(f, "'{host}' is not a valid TLS server name"),
            TlsError::Handshake(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for TlsError {}

/// The server name for SNI and verification: a DNS name or an IP address.
pub fn server_name(host: &str) -> Result<ServerName<'static>, TlsError> {
    ServerName::try_from(host.to_string()).map_err(|_| TlsError::ServerName(host.to_string()))
}

/// `TLSv1.3 TLS_AES_256_GCM_SHA384`: the negotiated version and suite of a connection, the
/// suite by its OpenSSL name (what the servers report, `Ssl_cipher` and `pg_stat_ssl`).
pub fn describe(c: &rustls::ClientConnection) -> String {
    let v = match c.protocol_version() {
        Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3",
        Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2",
        _ => "TLS",
    };
    match c.negotiated_cipher_suite() {
        Some(s) => format!("{v} {}", openssl_name(s)),
        None => v.to_string(),
    }
}

/// (OpenSSL name, rustls/IANA name) of every suite the ring provider has.
pub const SUITE_NAMES: &[(&str, &str)] = &[
    ("TLS_AES_256_GCM_SHA384", "TLS13_AES_256_GCM_SHA384"),
    ("TLS_AES_128_GCM_SHA256", "TLS13_AES_128_GCM_SHA256"),
    (
        "TLS_CHACHA20_POLY1305_SHA256",
        "TLS13_CHACHA20_POLY1305_SHA256",
    ),
    (
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
    (
        "ECDHE-RSA-AES256-GCM-SHA384",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-RSA-AES128-GCM-SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-RSA-CHACHA20-POLY1305",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
];

/// OpenSSL's name of a suite (what ab, `psql` and the servers print); rustls's own name
/// for one OpenSSL has no name for.
pub fn openssl_name(s: rustls::SupportedCipherSuite) -> String {
    let n = format!("{:?}", s.suite());
    SUITE_NAMES
        .iter()
        .find(|(_, r)| *r == n)
        .map_or(n, |(o, _)| (*o).to_string())
}

/// A finished TLS connection over a blocking socket.
pub type Stream<S> = rustls::StreamOwned<rustls::ClientConnection, S>;

/// Runs the handshake over `sock` (blocking; the socket's read timeout bounds it).
/// `fix` is what to tell the user when the certificate does not verify.
pub fn handshake<S: Read + Write>(
    cfg: Arc<ClientConfig>,
    host: &str,
    mut sock: S,
    fix: &str,
) -> Result<Stream<S>, TlsError> {
    let name = server_name(host)?;
    let mut c =
        rustls::ClientConnection::new(cfg, name).map_err(|e| TlsError::Setup(e.to_string()))?;
    while c.is_handshaking() {
        if let Err(e) = c.complete_io(&mut sock) {
            return Err(TlsError::Handshake(handshake_error(&e, fix)));
        }
    }
    Ok(rustls::StreamOwned::new(c, sock))
}

/// The rustls error inside an I/O error, if any.
pub fn rustls_error(e: &io::Error) -> Option<&rustls::Error> {
    e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>())
}

/// A failed handshake in words: a certificate that does not verify says why and `fix`.
pub fn handshake_error(e: &io::Error, fix: &str) -> String {
    match rustls_error(e) {
        Some(
            r @ (rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented),
        ) => format!("the server's TLS certificate was refused: {r}; {fix}"),
        Some(r) => format!("the TLS handshake failed: {r}"),
        None => format!("the TLS handshake failed: {e}"),
    }
}

/// Accepts any certificate. The server's handshake signature is still verified against the
/// public key of the certificate it sent, which only proves the server holds the key of a
/// certificate nobody checked: encryption without authentication.
#[derive(Debug)]
pub struct AcceptAnyCert(pub Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the full check, with a certificate that does not name the host accepted.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            r => r,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_as_libpq_and_mysql() {
        for w in PG_MODES {
            assert_eq!(Mode::parse_pg(w).unwrap().pg_name(), *w);
        }
        assert_eq!(Mode::parse_pg("allow").unwrap_err(), ModeError::PgAllow);
        assert!(ModeError::PgAllow.to_string().contains("allow"));
        assert!(Mode::parse_pg("VERIFY-FULL").is_err());
        assert_eq!(Mode::parse_mysql("on").unwrap(), Mode::Require);
        assert_eq!(Mode::parse_mysql("off").unwrap(), Mode::Disable);
        assert_eq!(
            Mode::parse_mysql("verify_identity").unwrap(),
            Mode::VerifyFull
        );
        assert!(Mode::parse_mysql("yes please").is_err());
        let with_ca = Opts {
            mode: Mode::Require,
            ca: "/x.pem".into(),
        };
        assert_eq!(
            with_ca.verify(),
            Verify::Ca,
            "require + a CA file = verify-ca"
        );
        assert_eq!(
            Opts {
                mode: Mode::Require,
                ca: String::new()
            }
            .verify(),
            Verify::Nothing
        );
    }

    /// A test CA (PEM) and a server identity for `names` signed by it.
    fn ca_and_server(
        names: &[&str],
    ) -> (
        String,
        Vec<CertificateDer<'static>>,
        rustls::pki_types::PrivateKeyDer<'static>,
    ) {
        let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "hostbench test CA");
        let ca =
            rcgen::CertifiedIssuer::self_signed(ca, rcgen::KeyPair::generate().unwrap()).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let leaf =
            rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .unwrap()
                .signed_by(&key, &ca)
                .unwrap();
        (
            ca.pem(),
            vec![leaf.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
    }

    /// Handshakes `opts` against an in-process TLS server whose certificate names `names`;
    /// `with_ca` gives the CA file of the test CA that signed it, `other_ca` (with `with_ca`)
    /// that of another test CA instead.
    fn against(names: &[&str], mode: Mode, with_ca: bool) -> Result<String, String> {
        against_ca(names, mode, with_ca, false)
    }

    fn against_ca(
        names: &[&str],
        mode: Mode,
        with_ca: bool,
        other_ca: bool,
    ) -> Result<String, String> {
        let (mut ca_pem, certs, key) = ca_and_server(names);
        if other_ca {
            ca_pem = ca_and_server(names).0;
        }
        let dir = std::env::temp_dir().join(format!(
            "hostbench-tls-test-{}-{}",
            std::process::id(),
            names.join("_")
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let ca_file = dir.join(format!("ca-{mode:?}-{with_ca}-{other_ca}.pem"));
        std::fs::write(&ca_file, ca_pem).unwrap();
        let server =
            rustls::ServerConfig::builder_with_provider(Arc::new(provider::default_provider()))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(certs, key)
                .unwrap();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut c = rustls::ServerConnection::new(Arc::new(server)).unwrap();
            while c.is_handshaking() {
                if c.complete_io(&mut s).is_err() {
                    return;
                }
            }
        });
        let opts = Opts {
            mode,
            ca: if with_ca {
                ca_file.to_string_lossy().into_owned()
            } else {
                String::new()
            },
        };
        let sock = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let cfg = opts.client_config().map_err(|e| e.to_string())?;
        let r = handshake(cfg, "127.0.0.1", sock, "THE FIX")
            .map(|s| describe(&s.conn))
            .map_err(|e| e.to_string());
        t.join().unwrap();
        r
    }

    #[test]
    fn each_mode_verifies_what_libpq_does() {
        // The certificate names another host, signed by the test CA.
        let other = ["db.example"];
        let e = against(&other, Mode::VerifyFull, true).unwrap_err();
        assert!(e.contains("certificate") && e.contains("THE FIX"), "{e}");
        assert!(e.contains("not valid for name"), "the reason: {e}");
        assert!(
            against(&other, Mode::VerifyCa, true)
                .unwrap()
                .starts_with("TLSv1.3 ")
        );
        assert!(
            against(&other, Mode::Require, true).is_ok(),
            "require + CA = verify-ca"
        );
        assert!(
            against(&other, Mode::Require, false).is_ok(),
            "require checks nothing"
        );
        // verify-full without a CA file: the built-in roots decide, and the test CA is not
        // among them.
        let e = against(&["127.0.0.1"], Mode::VerifyFull, false).unwrap_err();
        assert!(e.contains("UnknownIssuer") && e.contains("THE FIX"), "{e}");
        // verify-ca without a CA file would take any public certificate for any name: no.
        let e = against(&other, Mode::VerifyCa, false).unwrap_err();
        assert!(e.contains("verify-ca without a CA file"), "{e}");
        // A CA file of another CA: refused in every mode that checks the chain.
        for mode in [Mode::Require, Mode::VerifyCa, Mode::VerifyFull] {
            // (Same subject as the right CA: the signature does not verify.)
            let e = against_ca(&["127.0.0.1"], mode, true, true).unwrap_err();
            assert!(
                e.contains("certificate was refused")
                    && e.contains("BadSignature")
                    && e.contains("THE FIX"),
                "{mode:?}: {e}"
            );
        }
        // The right address, the right CA: verify-full passes.
        assert!(against(&["127.0.0.1"], Mode::VerifyFull, true).is_ok());
    }

    #[test]
    fn verify_ca_without_a_ca_file_is_refused_with_what_to_give() {
        let o = Opts {
            mode: Mode::VerifyCa,
            ca: String::new(),
        };
        let e = o.check(false).unwrap_err();
        assert_eq!(e, ModeError::VerifyCaWithoutCa { mysql: false });
        let e = e.to_string();
        assert!(
            e.contains("sslmode=verify-ca") && e.contains("sslrootcert=PATH"),
            "{e}"
        );
        assert!(e.contains("sslmode=verify-full"), "{e}");
        let e = o.check(true).unwrap_err().to_string();
        assert!(
            e.contains("--mysql-ssl=VERIFY_CA") && e.contains("--mysql-ssl-ca=PATH"),
            "{e}"
        );
        assert!(o.client_config().is_err(), "no config either");
        for ok in [
            Opts {
                mode: Mode::VerifyCa,
                ca: "/x.pem".into(),
            },
            Opts {
                mode: Mode::VerifyFull,
                ca: String::new(),
            },
            Opts {
                mode: Mode::Require,
                ca: String::new(),
            },
        ] {
            assert!(ok.check(false).is_ok() && ok.check(true).is_ok(), "{ok:?}");
        }
    }

    #[test]
    fn suites_are_named_as_openssl_does() {
        let p = provider::default_provider();
        let find = |n: &str| {
            *p.cipher_suites
                .iter()
                .find(|s| format!("{:?}", s.suite()) == n)
                .unwrap()
        };
        assert_eq!(
            openssl_name(find("TLS13_AES_256_GCM_SHA384")),
            "TLS_AES_256_GCM_SHA384"
        );
        assert_eq!(
            openssl_name(find("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")),
            "ECDHE-RSA-AES128-GCM-SHA256"
        );
    }

    #[test]
    fn ca_file_errors_name_the_file() {
        let o = Opts {
            mode: Mode::VerifyCa,
            ca: "/nonexistent/ca.pem".into(),
        };
        let e = o.client_config().unwrap_err();
        assert!(
            matches!(&e, TlsError::CaFile { path, .. } if path == "/nonexistent/ca.pem"),
            "{e:?}"
        );
        assert!(
            e.to_string().starts_with("CA file /nonexistent/ca.pem: "),
            "{e}"
        );
        assert!(Opts::disabled().client_config().is_ok());
        // verify-ca without a CA file, and a name that is no name: typed, in words.
        let e = Opts {
            mode: Mode::VerifyCa,
            ca: String::new(),
        }
        .client_config()
        .unwrap_err();
        assert_eq!(e, TlsError::VerifyCaWithoutCa);
        assert!(
            e.to_string()
                .starts_with("verify-ca without a CA file is refused")
        );
        let e = server_name("bad name").unwrap_err();
        assert_eq!(e.to_string(), "'bad name' is not a valid TLS server name");
    }
}
