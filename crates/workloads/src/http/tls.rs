//! TLS for the HTTP engine and the built-in server: rustls with the `ring` provider (static
//! musl builds need no cmake), configs built once per run, a `Read`/`Write` adaptor over a
//! nonblocking descriptor, OpenSSL's names for the suites rustls has (ab's `-Z`, httperf's
//! `--ssl-ciphers`, ab's report line), error kinds, and a self-signed certificate for
//! `serve --tls`.
//!
//! Verification: by default the server's certificate is checked against the Mozilla roots
//! compiled in (`webpki-roots`; no platform store is read). `insecure` accepts any
//! certificate but still checks the handshake signatures, so the key exchange is real.

use hostbench_core::workload::WorkloadError;
use rustls::crypto::ring as provider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ProtocolVersion, ServerConfig};
use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;

/// `Read`/`Write` over a nonblocking descriptor for rustls' `read_tls`/`write_tls`. EAGAIN
/// becomes `WouldBlock`; `short` records whether the last read returned less than it was
/// offered (the socket is drained: no extra read to see EAGAIN under edge triggering).
pub struct FdIo {
    /// The socket.
    pub fd: RawFd,
    /// The last read returned less than the space offered.
    pub short: bool,
}

impl io::Read for FdIo {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match super::sys::read(self.fd, buf) {
                Ok(n) => {
                    self.short = n < buf.len();
                    return Ok(n);
                }
                Err(libc::EINTR) => {}
                Err(e) => return Err(io::Error::from_raw_os_error(e)),
            }
        }
    }
}

impl io::Write for FdIo {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        loop {
            match super::sys::write(self.fd, buf) {
                Ok(n) => return Ok(n),
                Err(libc::EINTR) => {}
                Err(e) => return Err(io::Error::from_raw_os_error(e)),
            }
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes a connection's queued TLS records to `fd` (client or server side): Ok(true) when
/// all went out, Ok(false) when the socket is full (an EPOLLOUT edge follows), Err(errno) on
/// a socket error.
pub fn flush<D>(t: &mut rustls::ConnectionCommon<D>, fd: RawFd) -> Result<bool, i32> {
    let mut io = FdIo { fd, short: false };
    while t.wants_write() {
        match t.write_tls(&mut io) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    }
    Ok(true)
}

/// Which protocol versions to offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Versions {
    /// TLS 1.2 and 1.3.
    All,
    /// TLS 1.2 only.
    Tls12,
    /// TLS 1.3 only.
    Tls13,
}

impl Versions {
    /// From the parameter's text (`all`, `1.2`, `1.3`).
    pub fn parse(s: &str) -> Result<Versions, WorkloadError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "all" | "" => Ok(Versions::All),
            "1.2" | "tls1.2" | "tlsv1.2" => Ok(Versions::Tls12),
            "1.3" | "tls1.3" | "tlsv1.3" => Ok(Versions::Tls13),
            _ => Err(WorkloadError::usage(format!(
                "tls_version '{s}': use all, 1.2 or 1.3 (SSLv2, SSLv3, TLS 1.0 and 1.1 are not \
                 offered: rustls implements TLS 1.2 and 1.3 only)"
            ))),
        }
    }

    fn list(self) -> &'static [&'static rustls::SupportedProtocolVersion] {
        static V12: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
        static V13: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
        match self {
            Versions::All => rustls::ALL_VERSIONS,
            Versions::Tls12 => &V12,
            Versions::Tls13 => &V13,
        }
    }
}

use hostbench_tls::SUITE_NAMES;

fn rustls_name(s: rustls::SupportedCipherSuite) -> String {
    format!("{:?}", s.suite())
}

/// OpenSSL's name of a negotiated suite (what ab prints).
pub use hostbench_tls::openssl_name;

/// Secret key bits of a suite (OpenSSL's SSL_CIPHER_get_bits).
pub fn cipher_bits(s: rustls::SupportedCipherSuite) -> u32 {
    if rustls_name(s).contains("AES_128") {
        128
    } else {
        256
    }
}

/// The suites named in `list` (OpenSSL names or rustls/IANA names, separated by ':' or ','),
/// in the order given; an error names what rustls does not have.
fn select_suites(list: &str) -> Result<Vec<rustls::SupportedCipherSuite>, WorkloadError> {
    let all = provider::default_provider().cipher_suites;
    let mut out = Vec::new();
    for name in list
        .split([':', ','])
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        let found = all.iter().find(|s| {
            let r = rustls_name(**s);
            r.eq_ignore_ascii_case(name)
                || SUITE_NAMES
                    .iter()
                    .any(|(o, rn)| o.eq_ignore_ascii_case(name) && *rn == r)
        });
        match found {
            Some(s) => out.push(*s),
            None => {
                let known: Vec<&str> = SUITE_NAMES.iter().map(|(o, _)| *o).collect();
                return Err(WorkloadError::usage(format!(
                    "cipher suite '{name}' is not available (rustls implements only modern \
                     AEAD suites); use one of {}",
                    known.join(", ")
                )));
            }
        }
    }
    if out.is_empty() {
        return Err(WorkloadError::usage(format!(
            "cipher list '{list}' names no suite"
        )));
    }
    Ok(out)
}

/// What the client side asks for.
#[derive(Debug, Clone)]
pub struct ClientOpts {
    /// Verify the server's certificate against the compiled-in Mozilla roots.
    pub verify: bool,
    /// Protocol versions offered.
    pub versions: Versions,
    /// Cipher suites (empty = rustls' defaults).
    pub ciphers: String,
    /// A certificate trusted besides the roots (the built-in server's, for `url=self`).
    pub extra_root: Option<CertificateDer<'static>>,
}

/// The client config of a run (resumption is set per thread by the engine).
pub fn client_config(o: &ClientOpts) -> Result<ClientConfig, WorkloadError> {
    let mut p = provider::default_provider();
    if !o.ciphers.trim().is_empty() {
        p.cipher_suites = select_suites(&o.ciphers)?;
    }
    let p = Arc::new(p);
    let builder = ClientConfig::builder_with_provider(p.clone())
        .with_protocol_versions(o.versions.list())
        .map_err(|e| {
            WorkloadError::usage(format!(
                "the cipher suites and TLS versions asked for do not fit together: {e}"
            ))
        })?;
    let mut cfg = if o.verify {
        let mut roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        if let Some(c) = &o.extra_root {
            roots.add(c.clone()).map_err(|e| {
                WorkloadError::environment(format!(
                    "cannot trust the built-in server's certificate: {e}"
                ))
            })?;
        }
        builder.with_root_certificates(roots).with_no_client_auth()
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCert(p)))
            .with_no_client_auth()
    };
    cfg.enable_sni = true;
    Ok(cfg)
}

/// The server name for SNI and verification: a DNS name, or an IP address (no SNI is sent
/// for those, and the certificate must name the address).
pub fn server_name(host: &str) -> Result<ServerName<'static>, WorkloadError> {
    ServerName::try_from(host.to_string())
        .map_err(|_| WorkloadError::usage(format!("'{host}' is not a valid TLS server name")))
}

// Accepts any certificate (`--insecure`, ab, httperf); handshake signatures are still
// verified with the provider's algorithms. The same verifier as the database clients'.
use hostbench_tls::AcceptAnyCert;

/// Whether a rustls error is about the server's certificate (else: any other TLS failure).
pub fn is_certificate_error(e: &rustls::Error) -> bool {
    matches!(
        e,
        rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented
    )
}

/// OpenSSL's spelling of a protocol version (`TLSv1.3`).
pub fn version_name(v: ProtocolVersion) -> &'static str {
    match v {
        ProtocolVersion::TLSv1_3 => "TLSv1.3",
        ProtocolVersion::TLSv1_2 => "TLSv1.2",
        _ => "unknown",
    }
}

/// OpenSSL's "Server Temp Key" text of a key-exchange group, and its bits.
pub fn group_name(g: rustls::NamedGroup) -> (&'static str, u32) {
    match g {
        rustls::NamedGroup::X25519 => ("X25519", 253),
        rustls::NamedGroup::secp256r1 => ("ECDH P-256", 256),
        rustls::NamedGroup::secp384r1 => ("ECDH P-384", 384),
        rustls::NamedGroup::secp521r1 => ("ECDH P-521", 521),
        _ => ("unknown", 0),
    }
}

/// Public key bits of a DER certificate (OpenSSL's EVP_PKEY_bits: RSA modulus bits, EC
/// curve size), found by the key's algorithm identifiers; 0 when not recognised.
pub fn public_key_bits(der: &[u8]) -> u32 {
    const P256: &[u8] = &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
    const P384: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22];
    const P521: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23];
    const ED25519: &[u8] = &[0x06, 0x03, 0x2b, 0x65, 0x70];
    const RSA: &[u8] = &[
        0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01,
    ];
    let has = |pat: &[u8]| der.windows(pat.len()).position(|w| w == pat);
    if has(P256).is_some() {
        return 256;
    }
    if has(P384).is_some() {
        return 384;
    }
    if has(P521).is_some() {
        return 521;
    }
    if has(ED25519).is_some() {
        return 253;
    }
    // rsaEncryption, NULL, BIT STRING { 0, SEQUENCE { INTEGER modulus, ... } }
    let Some(i) = has(RSA) else { return 0 };
    let mut p = i + RSA.len();
    let len = |p: &mut usize| -> Option<usize> {
        let b = *der.get(*p)? as usize;
        *p += 1;
        if b < 0x80 {
            return Some(b);
        }
        let n = b & 0x7f;
        let mut v = 0usize;
        for _ in 0..n {
            v = v << 8 | *der.get(*p)? as usize;
            *p += 1;
        }
        Some(v)
    };
    let step = |tag: u8, p: &mut usize, enter: bool| -> Option<usize> {
        if *der.get(*p)? != tag {
            return None;
        }
        *p += 1;
        let l = len(p)?;
        if !enter {
            *p += l;
        }
        Some(l)
    };
    let bits = (|| {
        step(0x05, &mut p, false)?; // NULL parameters
        step(0x03, &mut p, true)?; // BIT STRING
        p += 1; // unused bits
        step(0x30, &mut p, true)?; // SEQUENCE
        let mut l = step(0x02, &mut p, true)?; // INTEGER modulus
        if der.get(p) == Some(&0) {
            l -= 1;
        }
        Some(l as u32 * 8)
    })();
    bits.unwrap_or(0)
}

/// A certificate chain and its key, for the server.
pub struct Identity {
    /// Leaf first.
    pub certs: Vec<CertificateDer<'static>>,
    /// Its private key.
    pub key: PrivateKeyDer<'static>,
}

/// A fresh self-signed ECDSA P-256 certificate for `localhost`, `127.0.0.1` and `::1`
/// (plus `extra` names), and its key as PEM (for tests that hand it to another server).
pub fn self_signed(extra: &[String]) -> Result<(Identity, String, String), WorkloadError> {
    let mut names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    names.extend(extra.iter().cloned());
    let ck = rcgen::generate_simple_self_signed(names).map_err(|e| {
        WorkloadError::environment(format!("cannot generate a self-signed certificate: {e}"))
    })?;
    let cert_pem = ck.cert.pem();
    let key_pem = ck.signing_key.serialize_pem();
    let id = Identity {
        certs: vec![ck.cert.der().clone()],
        key: PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into()),
    };
    Ok((id, cert_pem, key_pem))
}

/// A certificate chain and key from PEM files.
pub fn load_pem(cert: &str, key: &str) -> Result<Identity, WorkloadError> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| WorkloadError::usage(format!("--cert {cert}: {e}")))?
        .collect::<Result<_, _>>()
        .map_err(|e| WorkloadError::usage(format!("--cert {cert}: {e}")))?;
    if certs.is_empty() {
        return Err(WorkloadError::usage(format!(
            "--cert {cert}: no CERTIFICATE block found"
        )));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
        WorkloadError::usage(format!(
            "--key {key}: {e} (expected a PEM private key: PKCS#8, RSA or EC)"
        ))
    })?;
    Ok(Identity { certs, key })
}

/// The built-in server's TLS config (TLS 1.2 and 1.3, session resumption by cache and
/// tickets).
pub fn server_config(id: Identity) -> Result<Arc<ServerConfig>, WorkloadError> {
    let mut cfg = ServerConfig::builder_with_provider(Arc::new(provider::default_provider()))
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| WorkloadError::usage(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(id.certs, id.key)
        .map_err(|e| WorkloadError::usage(format!("the certificate and key do not fit: {e}")))?;
    cfg.session_storage = rustls::server::ServerSessionMemoryCache::new(16 * 1024);
    Ok(Arc::new(cfg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_names_map_both_ways() {
        let s = select_suites("TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES256-GCM-SHA384").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(openssl_name(s[0]), "TLS_AES_128_GCM_SHA256");
        assert_eq!(cipher_bits(s[0]), 128);
        assert_eq!(openssl_name(s[1]), "ECDHE-RSA-AES256-GCM-SHA384");
        assert!(
            select_suites("RC4-SHA")
                .unwrap_err()
                .message
                .contains("RC4-SHA")
        );
        assert!(select_suites(":").is_err());
        for (o, _) in SUITE_NAMES {
            assert_eq!(select_suites(o).unwrap().len(), 1, "{o}");
        }
    }

    #[test]
    fn versions_and_key_bits() {
        assert_eq!(Versions::parse("1.3").unwrap(), Versions::Tls13);
        assert!(Versions::parse("ssl3").is_err());
        let (id, _, _) = self_signed(&[]).unwrap();
        assert_eq!(public_key_bits(&id.certs[0]), 256);
        assert!(server_config(id).is_ok());
        assert_eq!(public_key_bits(b"nothing"), 0);
    }
}
