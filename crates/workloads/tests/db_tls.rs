//! TLS to the databases, both clients of each driver: every mode against the local servers
//! (`HOSTBENCH_TEST_PG_URL`, `HOSTBENCH_TEST_MYSQL_URL`, with TLS enabled by `.ci/run`,
//! which exports the test CA as `HOSTBENCH_TEST_DB_CA`; unset = a printed skip, set = must
//! pass), checked on the server side from the same connection (`pg_stat_ssl`, `Ssl_cipher`);
//! and fake servers in this process: one without TLS (`require` must fail clearly), one whose
//! certificate names another host (`verify-full` must refuse it, `verify-ca` accept it), and a
//! MySQL server that asks for `caching_sha2_password`'s full authentication over TLS.

#![cfg(all(feature = "postgres", feature = "mysql"))]

use hostbench_workloads::db::driver::{Conn, Res, Target};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

fn var(name: &str) -> Option<String> {
    match std::env::var(name) {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            eprintln!("skipped: {name} is not set (see .ci/run)");
            None
        }
    }
}

/// `url` with `params` added to its query.
fn with(url: &str, params: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{params}")
}

fn target(url: &str, lean: bool) -> Target {
    let mut t = Target::from_url(url).unwrap();
    match &mut t {
        Target::Pgsql { lean: l, .. } | Target::Mysql { lean: l, .. } => *l = lean,
        Target::Sqlite { .. } => unreachable!(),
    }
    t
}

/// The server's word on whether this connection is encrypted.
fn server_says_tls(c: &mut dyn Conn, pg: bool) -> bool {
    let sql = if pg {
        "SELECT 1 FROM pg_stat_ssl WHERE pid = pg_backend_pid() AND ssl"
    } else {
        "SELECT 1 FROM information_schema.SESSION_STATUS \
         WHERE VARIABLE_NAME = 'SSL_CIPHER' AND VARIABLE_VALUE <> ''"
    };
    match c.query(sql) {
        Ok(Res::Rows(n)) => n == 1,
        r => panic!("{sql}: {r:?}"),
    }
}

/// The server's word on this connection's TLS version and suite.
fn server_says(c: &mut dyn Conn, pg: bool, version: &str, cipher: &str) -> bool {
    let sql = if pg {
        format!(
            "SELECT 1 FROM pg_stat_ssl WHERE pid = pg_backend_pid() AND version = '{version}' \
             AND cipher = '{cipher}'"
        )
    } else {
        format!(
            "SELECT 1 FROM information_schema.SESSION_STATUS \
             WHERE (VARIABLE_NAME = 'SSL_CIPHER' AND VARIABLE_VALUE = '{cipher}') \
             OR (VARIABLE_NAME = 'SSL_VERSION' AND VARIABLE_VALUE = '{version}')"
        )
    };
    match c.query(&sql) {
        Ok(Res::Rows(n)) => n == if pg { 1 } else { 2 },
        r => panic!("{sql}: {r:?}"),
    }
}

fn every_mode(url_var: &str, pg: bool) {
    let (Some(url), Some(ca)) = (var(url_var), var("HOSTBENCH_TEST_DB_CA")) else {
        return;
    };
    let (mode, rootcert) = if pg {
        ("sslmode", "sslrootcert")
    } else {
        ("ssl-mode", "ssl-ca")
    };
    let words: &[(&str, bool)] = if pg {
        &[
            ("disable", false),
            ("prefer", true),
            ("require", true),
            ("verify-ca", true),
            ("verify-full", true),
        ]
    } else {
        &[
            ("DISABLED", false),
            ("PREFERRED", true),
            ("REQUIRED", true),
            ("VERIFY_CA", true),
            ("VERIFY_IDENTITY", true),
        ]
    };
    for lean in [true, false] {
        for &(m, tls) in words {
            for ca_given in [false, true] {
                let verify = m.starts_with("verify") || m.starts_with("VERIFY");
                if verify && !ca_given {
                    continue; // the built-in roots do not hold the test CA
                }
                let mut q = format!("{mode}={m}");
                if ca_given {
                    q.push_str(&format!("&{rootcert}={ca}"));
                }
                let u = with(&url, &q);
                let t = target(&u, lean);
                if !pg && !lean && ca_given && tls {
                    // The mysql crate would trust the public roots besides the CA file.
                    let e = t.connect().err().expect("refused").to_string();
                    assert!(e.contains("--mysql-client=crate cannot verify"), "{u}: {e}");
                    continue;
                }
                let mut c = t
                    .connect()
                    .unwrap_or_else(|e| panic!("{u} lean={lean}: {e}"));
                assert_eq!(
                    server_says_tls(c.as_mut(), pg),
                    tls,
                    "{u} lean={lean}: the server's view"
                );
                let ours = c.tls().unwrap();
                assert_eq!(ours.starts_with("TLSv1."), tls, "{u} lean={lean}: {ours}");
                if tls {
                    // Version and suite spelled as the server does (OpenSSL's names), by
                    // both clients.
                    let (version, cipher) = ours.split_once(' ').unwrap();
                    assert!(
                        server_says(c.as_mut(), pg, version, cipher),
                        "{u} lean={lean}: the server does not say {ours}"
                    );
                }
            }
        }
    }
}

#[test]
fn postgres_every_sslmode_on_both_clients() {
    every_mode("HOSTBENCH_TEST_PG_URL", true);
}

#[test]
fn mariadb_every_ssl_mode_on_both_clients() {
    every_mode("HOSTBENCH_TEST_MYSQL_URL", false);
}

/// A PostgreSQL ErrorResponse (FATAL, 28000) saying `msg`.
fn pg_error(msg: &str) -> Vec<u8> {
    let mut body = Vec::new();
    for (k, v) in [
        (b'S', "FATAL"),
        (b'V', "FATAL"),
        (b'C', "28000"),
        (b'M', msg),
    ] {
        body.push(k);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut m = vec![b'E'];
    m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
    m.extend_from_slice(&body);
    m
}

/// Reads a PostgreSQL startup message (length-prefixed) from `s`.
fn read_startup(s: &mut impl Read) -> bool {
    let mut len = [0u8; 4];
    if s.read_exact(&mut len).is_err() {
        return false;
    }
    let n = u32::from_be_bytes(len) as usize;
    let mut body = vec![0u8; n.saturating_sub(4).min(4096)];
    s.read_exact(&mut body).is_ok()
}

/// A PostgreSQL server on a free port that answers 'N' to SSLRequest, then the plaintext
/// startup message with an error saying "plaintext login reached the fake server".
fn pg_without_tls() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let mut req = [0u8; 8];
            if s.read_exact(&mut req).is_ok() && req == [0, 0, 0, 8, 4, 210, 22, 47] {
                let _ = s.write_all(b"N");
            }
            if read_startup(&mut s) {
                let _ = s.write_all(&pg_error("plaintext login reached the fake server"));
            }
            let _ = s.read(&mut [0u8; 512]);
        }
    });
    port
}

/// A MySQL greeting (protocol 10) with `caps`, `caching_sha2_password` as its plugin.
fn mysql_greeting(caps: u32) -> Vec<u8> {
    let mut g = vec![10u8];
    g.extend_from_slice(b"8.0.99-fake\0");
    g.extend_from_slice(&1u32.to_le_bytes());
    g.extend_from_slice(b"01234567");
    g.push(0);
    g.extend_from_slice(&(caps as u16).to_le_bytes());
    g.push(45);
    g.extend_from_slice(&2u16.to_le_bytes());
    g.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    g.push(21);
    g.extend_from_slice(&[0; 10]);
    g.extend_from_slice(b"89abcdefghij");
    g.push(0);
    g.extend_from_slice(b"caching_sha2_password\0");
    let mut p = (g.len() as u32).to_le_bytes()[..3].to_vec();
    p.push(0);
    p.extend_from_slice(&g);
    p
}

const MY_CAPS: u32 = 1 | 8 | 512 | 8192 | 32768 | (1 << 19) | (1 << 24);

/// A MySQL server on a free port whose greeting has no CLIENT_SSL; it answers the
/// (plaintext) login with error 1045 "plaintext login reached the fake server".
fn mysql_without_tls() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let _ = s.write_all(&mysql_greeting(MY_CAPS));
            let mut h = [0u8; 4];
            if s.read_exact(&mut h).is_err() {
                continue;
            }
            let mut p = vec![0u8; u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize];
            if s.read_exact(&mut p).is_err() {
                continue;
            }
            let mut e = vec![0xFF];
            e.extend_from_slice(&1045u16.to_le_bytes());
            e.extend_from_slice(b"#28000plaintext login reached the fake server");
            let mut pkt = (e.len() as u32).to_le_bytes()[..3].to_vec();
            pkt.push(h[3] + 1);
            pkt.extend_from_slice(&e);
            let _ = s.write_all(&pkt);
            let _ = s.read(&mut [0u8; 512]);
        }
    });
    port
}

#[test]
fn require_against_a_server_without_tls_is_a_clear_error() {
    let port = pg_without_tls();
    for lean in [true, false] {
        // prefer goes on in plaintext: the login reaches the server, which refuses it.
        let u = format!("postgres://bob@127.0.0.1:{port}/db?sslmode=prefer");
        let m = target(&u, lean)
            .connect()
            .err()
            .expect("refused login")
            .to_string();
        assert!(
            m.contains("plaintext login reached the fake server"),
            "lean={lean}: {m}"
        );
        let u = format!("postgres://bob@127.0.0.1:{port}/db?sslmode=require");
        let e = target(&u, lean).connect().err().expect("refused");
        let m = e.to_string();
        assert!(
            m.contains("does not offer TLS")
                && m.contains("sslmode=require")
                && m.contains(&format!("127.0.0.1:{port}")),
            "lean={lean}: {m}"
        );
    }
    let port = mysql_without_tls();
    for lean in [true, false] {
        let u = format!("mysql://bob@127.0.0.1:{port}/db?ssl-mode=PREFERRED");
        let m = target(&u, lean)
            .connect()
            .err()
            .expect("refused login")
            .to_string();
        assert!(
            m.contains("plaintext login reached the fake server") && m.contains("1045"),
            "lean={lean}: {m}"
        );
        let u = format!("mysql://bob@127.0.0.1:{port}/db?ssl-mode=REQUIRED");
        let e = target(&u, lean).connect().err().expect("refused");
        let m = e.to_string();
        assert!(
            m.contains("does not offer TLS")
                && m.contains("--mysql-ssl=REQUIRED")
                && m.contains(&format!("127.0.0.1:{port}")),
            "lean={lean}: {m}"
        );
    }
}

/// A self-signed CA named `cn`.
fn test_ca(cn: &str) -> rcgen::CertifiedIssuer<'static, rcgen::KeyPair> {
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name.push(rcgen::DnType::CommonName, cn);
    rcgen::CertifiedIssuer::self_signed(ca, rcgen::KeyPair::generate().unwrap()).unwrap()
}

/// The PEM file of another CA than the one that signed the fake servers' certificates.
fn other_ca_file(tag: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("db-tls");
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(format!("other-ca-{tag}.pem"));
    std::fs::write(&f, test_ca("another test CA").pem()).unwrap();
    f.to_string_lossy().into_owned()
}

/// A test CA (PEM file in a scratch directory) and a server config whose certificate, signed
/// by it, names `db.example` only.
fn ca_and_server(tag: &str) -> (String, Arc<rustls::ServerConfig>) {
    let ca = test_ca("hostbench test CA");
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["db.example".to_string()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("db-tls");
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join(format!("ca-{tag}.pem"));
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![leaf.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    )
    .unwrap();
    (ca_file.to_string_lossy().into_owned(), Arc::new(cfg))
}

/// A PostgreSQL server that answers 'S' followed by `after_s` (plaintext bytes a man in the
/// middle could inject), shakes hands with `cfg`, and answers the startup message, over
/// TLS, with an error saying "login over TLS reached the fake server".
fn pg_with_cert_and(cfg: Arc<rustls::ServerConfig>, after_s: &'static [u8]) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let mut req = [0u8; 8];
            let mut answer = b"S".to_vec();
            answer.extend_from_slice(after_s);
            if s.read_exact(&mut req).is_err() || s.write_all(&answer).is_err() {
                continue;
            }
            let mut c = rustls::ServerConnection::new(cfg.clone()).unwrap();
            let mut ok = true;
            while c.is_handshaking() {
                if c.complete_io(&mut s).is_err() {
                    ok = false;
                    break;
                }
            }
            if !ok {
                continue;
            }
            let mut t = rustls::StreamOwned::new(c, s);
            if read_startup(&mut t) {
                let _ = t.write_all(&pg_error("login over TLS reached the fake server"));
                let _ = t.flush();
            }
            let _ = t.read(&mut [0u8; 512]);
        }
    });
    port
}

fn pg_with_cert(cfg: Arc<rustls::ServerConfig>) -> u16 {
    pg_with_cert_and(cfg, b"")
}

#[test]
fn verify_full_refuses_a_certificate_for_another_host_and_verify_ca_takes_it() {
    let (ca, cfg) = ca_and_server("pg");
    let port = pg_with_cert(cfg);
    for lean in [true, false] {
        let u = format!("postgres://bob@127.0.0.1:{port}/db?sslmode=verify-full&sslrootcert={ca}");
        let m = target(&u, lean)
            .connect()
            .err()
            .expect("refused")
            .to_string();
        assert!(
            m.contains("certificate was refused")
                && m.contains("not valid for name")
                && m.contains("sslrootcert"),
            "lean={lean}: {m}"
        );
        // verify-ca: the chain is good; the login goes over TLS and the server refuses it.
        let u = format!("postgres://bob@127.0.0.1:{port}/db?sslmode=verify-ca&sslrootcert={ca}");
        let m = target(&u, lean)
            .connect()
            .err()
            .expect("refused login")
            .to_string();
        assert!(
            m.contains("login over TLS reached the fake server"),
            "lean={lean}: {m}"
        );
    }
}

#[test]
fn verify_ca_without_a_ca_file_is_refused_before_connecting() {
    // Nothing listens on port 1: the refusal comes first.
    for (url, words) in [
        (
            "postgres://bob@127.0.0.1:1/db?sslmode=verify-ca",
            ["sslmode=verify-ca needs a CA file", "sslrootcert=PATH"],
        ),
        (
            "mysql://bob@127.0.0.1:1/db?ssl-mode=VERIFY_CA",
            [
                "--mysql-ssl=VERIFY_CA needs a CA file",
                "--mysql-ssl-ca=PATH",
            ],
        ),
    ] {
        let e = Target::from_url(url).expect_err("refused").to_string();
        assert!(words.iter().all(|w| e.contains(w)), "{url}: {e}");
    }
    // verify-full without a CA file keeps the public roots (the host name is checked).
    assert!(Target::from_url("postgres://bob@127.0.0.1:1/db?sslmode=verify-full").is_ok());
    assert!(Target::from_url("mysql://bob@127.0.0.1:1/db?ssl-mode=VERIFY_IDENTITY").is_ok());
}

#[test]
fn plaintext_bytes_after_s_are_never_read_as_protocol() {
    // 'S', then an AuthenticationOk and a ReadyForQuery in plaintext: taken as protocol,
    // they would log the client in without TLS.
    let (ca, cfg) = ca_and_server("inject");
    let port = pg_with_cert_and(cfg, &[b'R', 0, 0, 0, 8, 0, 0, 0, 0, b'Z', 0, 0, 0, 5, b'I']);
    for lean in [true, false] {
        for mode in ["require", "verify-ca"] {
            let u = format!("postgres://bob@127.0.0.1:{port}/db?sslmode={mode}&sslrootcert={ca}");
            let m = target(&u, lean)
                .connect()
                .err()
                .expect("the handshake must fail")
                .to_string();
            assert!(
                m.contains("the TLS handshake failed"),
                "{mode} lean={lean}: {m}"
            );
        }
    }
}

#[test]
fn a_certificate_from_another_ca_is_refused_when_a_ca_file_is_set() {
    let (_, cfg) = ca_and_server("pg-other");
    let other = other_ca_file("pg");
    let port = pg_with_cert(cfg);
    for lean in [true, false] {
        for mode in ["prefer", "require", "verify-ca", "verify-full"] {
            let u =
                format!("postgres://bob@localhost:{port}/db?sslmode={mode}&sslrootcert={other}");
            let m = target(&u, lean)
                .connect()
                .err()
                .expect("refused")
                .to_string();
            assert!(
                m.contains("certificate was refused") && m.contains("UnknownIssuer"),
                "{mode} lean={lean}: {m}"
            );
        }
    }
    let (_, cfg) = ca_and_server("my-other");
    let other = other_ca_file("my");
    let port = mysql_with_cert(cfg);
    for mode in ["PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"] {
        let u = format!("mysql://bob@localhost:{port}/test?ssl-mode={mode}&ssl-ca={other}");
        let m = target(&u, true)
            .connect()
            .err()
            .expect("refused")
            .to_string();
        assert!(
            m.contains("certificate was refused") && m.contains("UnknownIssuer"),
            "{mode}: {m}"
        );
        // The crate client takes no CA file at all (it would add the public roots).
        let m = target(&u, false)
            .connect()
            .err()
            .expect("refused")
            .to_string();
        assert!(
            m.contains("--mysql-client=crate cannot verify"),
            "{mode}: {m}"
        );
    }
}

/// A MySQL server that offers TLS with `cfg`, shakes hands, then hangs up.
fn mysql_with_cert(cfg: Arc<rustls::ServerConfig>) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            s.write_all(&mysql_greeting(MY_CAPS | 2048)).unwrap();
            let mut req = [0u8; 36];
            if s.read_exact(&mut req).is_err() {
                continue;
            }
            let mut c = rustls::ServerConnection::new(cfg.clone()).unwrap();
            while c.is_handshaking() {
                if c.complete_io(&mut s).is_err() {
                    break;
                }
            }
        }
    });
    port
}

#[test]
fn verify_identity_refuses_a_mysql_certificate_for_another_host() {
    let (ca, cfg) = ca_and_server("my-name");
    let port = mysql_with_cert(cfg);
    let u = format!("mysql://bob@127.0.0.1:{port}/test?ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}");
    let m = target(&u, true)
        .connect()
        .err()
        .expect("refused")
        .to_string();
    assert!(
        m.contains("certificate was refused")
            && m.contains("not valid for name")
            && m.contains("--mysql-ssl-ca"),
        "{m}"
    );
    // The crate client refuses the CA file before connecting.
    let m = target(&u, false)
        .connect()
        .err()
        .expect("refused")
        .to_string();
    assert!(m.contains("--mysql-client=crate cannot verify"), "{m}");
}

#[test]
fn caching_sha2_full_authentication_sends_the_password_over_tls() {
    let (ca, cfg) = ca_and_server("my");
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let server = std::thread::spawn(move || -> Vec<u8> {
        let (mut s, _) = l.accept().unwrap();
        s.write_all(&mysql_greeting(MY_CAPS | 2048)).unwrap();
        // The SSL request: 32 bytes, sequence 1, CLIENT_SSL set.
        let mut h = [0u8; 4];
        s.read_exact(&mut h).unwrap();
        assert_eq!((h[0], h[3]), (32, 1));
        let mut req = [0u8; 32];
        s.read_exact(&mut req).unwrap();
        assert_ne!(u32::from_le_bytes(req[..4].try_into().unwrap()) & 2048, 0);
        let mut c = rustls::ServerConnection::new(cfg).unwrap();
        while c.is_handshaking() {
            c.complete_io(&mut s).unwrap();
        }
        let mut t = rustls::StreamOwned::new(c, s);
        let read = |t: &mut rustls::StreamOwned<_, _>| {
            let mut h = [0u8; 4];
            t.read_exact(&mut h).unwrap();
            let mut p = vec![0u8; u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize];
            t.read_exact(&mut p).unwrap();
            (h[3], p)
        };
        let (seq, _response) = read(&mut t);
        assert_eq!(seq, 2, "the handshake response follows the SSL request");
        // "perform full authentication"
        t.write_all(&[2, 0, 0, 3, 1, 4]).unwrap();
        t.flush().unwrap();
        let (seq, password) = read(&mut t);
        assert_eq!(seq, 4);
        t.write_all(&[7, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0]).unwrap();
        t.flush().unwrap();
        let _ = t.read(&mut [0u8; 64]);
        password
    });
    let u = format!("mysql://bob:s3cret@127.0.0.1:{port}/test?ssl-mode=VERIFY_CA&ssl-ca={ca}");
    let mut c = target(&u, true)
        .connect()
        .expect("full authentication over TLS");
    assert!(c.tls().unwrap().starts_with("TLSv1.3 "));
    drop(c);
    assert_eq!(server.join().unwrap(), b"s3cret\0");
}
