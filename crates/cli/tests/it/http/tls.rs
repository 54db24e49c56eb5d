//! HTTPS against `hostbench serve --tls`: requests and handshakes counted, untrusted
//! certificates and plain ports as TLS errors, ab and httperf over TLS, PEM certificates.

use super::*;

fn has_row(v: &Value, table: &str, label: &str) -> bool {
    v["tables"].as_array().is_some_and(|ts| {
        ts.iter().any(|t| {
            t["name"] == table
                && t["rows"]
                    .as_array()
                    .is_some_and(|rs| rs.iter().any(|r| r["label"] == label))
        })
    })
}

#[test]
fn https_against_serve_tls_counts_requests_and_handshakes() {
    let s = Serve::start(&["--tls", "--body-size", "1000"]);
    assert!(s.url.starts_with("https://"), "{}", s.url);
    let v = json_run(&[
        "http", &s.url, "-k", "-n", "300", "-d", "0", "-c", "3", "-t", "1",
    ]);
    assert_eq!(v["metrics"]["events"], 300);
    assert_eq!(fact(&v, "errors"), 0.0);
    assert_eq!(fact(&v, "body_bytes"), 300_000.0);
    let opened = fact(&v, "connections_opened");
    assert_eq!(fact(&v, "keepalive_responses"), 300.0 - opened);
    assert_eq!(
        fact(&v, "tls_full_handshakes") + fact(&v, "tls_resumed_handshakes"),
        opened
    );
    assert!(table_value(&v, "http_times", "tls_handshake").unwrap() >= opened);
    assert!(table_value(&v, "http_times", "tcp_connect").unwrap() >= opened);
    // A new connection per request on one connection: the first handshake is full, every
    // later one resumes the session (TLS 1.3 tickets, TLS 1.2 session ids).
    for version in ["1.3", "1.2"] {
        let v = json_run(&[
            "http",
            &s.url,
            "-k",
            "--no-keepalive",
            "--tls-version",
            version,
            "-n",
            "40",
            "-d",
            "0",
            "-c",
            "1",
        ]);
        assert_eq!(v["metrics"]["events"], 40, "{version}");
        assert_eq!(fact(&v, "connections_opened"), 40.0, "{version}");
        assert_eq!(fact(&v, "tls_full_handshakes"), 1.0, "{version}");
        assert_eq!(fact(&v, "tls_resumed_handshakes"), 39.0, "{version}");
        // Connections a loop starts before it holds a session have none to resume: at most
        // its first -c handshakes are full, every later one resumes (what docs/http.md says;
        // it used to say "only the first", and a run showed 10 full for 10 connections).
        let v = json_run(&[
            "http",
            &s.url,
            "-k",
            "--no-keepalive",
            "--tls-version",
            version,
            "-n",
            "40",
            "-d",
            "0",
            "-c",
            "4",
            "-t",
            "1",
        ]);
        let full = fact(&v, "tls_full_handshakes");
        assert!(
            (1.0..=4.0).contains(&full),
            "{version}: {full} full handshakes"
        );
        assert_eq!(full + fact(&v, "tls_resumed_handshakes"), 40.0, "{version}");
        assert!(
            has_row(&v, "http_tls", &format!("protocol:TLSv{version}")),
            "{version}: {}",
            v["tables"]
        );
    }
    // Resumption off: every handshake is full.
    let v = json_run(&[
        "http",
        &s.url,
        "-k",
        "--no-keepalive",
        "--no-tls-resume",
        "-n",
        "30",
        "-d",
        "0",
        "-c",
        "1",
    ]);
    assert_eq!(v["metrics"]["events"], 30);
    assert_eq!(fact(&v, "tls_full_handshakes"), 30.0);
    assert_eq!(fact(&v, "tls_resumed_handshakes"), 0.0);
    let text = stdout_ok(&["http", &s.url, "-k", "-n", "20", "-d", "0", "-c", "2"]);
    assert!(
        text.contains("hostbench http: https://127.0.0.1:"),
        "{text}"
    );
    assert!(text.contains("TLS:        TLSv1.3, TLS_"), "{text}");
}

#[test]
fn untrusted_certificates_and_plain_ports_fail_as_tls_errors() {
    let s = Serve::start(&["--tls"]);
    // The self-signed certificate is not trusted without -k: the first failed handshake
    // ends the run with the way out (every other one would fail the same way).
    let t0 = Instant::now();
    let (code, out, err) = run(&[
        "http", &s.url, "-d", "20s", "-c", "4", "-t", "2", "-f", "json",
    ]);
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("FATAL") && err.contains("certificate") && err.contains("--insecure"),
        "{err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_valid(&v, "untrusted");
    assert_eq!(v["metrics"]["events"], 0);
    let n = errors(&v, "tls_certificate");
    assert!((1.0..=4.0).contains(&n), "{}", v["tables"]);
    let w = warnings_text(&v);
    assert!(w.contains("certificate") && w.contains("--insecure"), "{w}");
    // An https URL to a port that speaks plain HTTP: TLS errors, quickly, no hang.
    let plain = Serve::start(&[]);
    let url = plain.url.replacen("http://", "https://", 1);
    let t0 = Instant::now();
    let v = json_failed(&[
        "http", &url, "-k", "-n", "10", "-d", "0", "-c", "2", "-t", "1",
    ]);
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
    assert_eq!(errors(&v, "tls"), 10.0, "{}", v["tables"]);
    // ab stops at the first failure (exit 1) with the reason on stderr, as for refusals.
    let (code, _out, err) = run(&["ab", "-n", "5", &url]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("TLS"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn ab_and_httperf_speak_tls() {
    let s = Serve::start(&["--tls", "--body-size", "512"]);
    let local = s.url.replacen("127.0.0.1", "localhost", 1);
    let out = stdout_ok(&[
        "ab",
        "-k",
        "-n",
        "100",
        "-c",
        "2",
        "-f",
        "TLS1.2",
        "-Z",
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        &local,
    ]);
    assert!(
        out.contains("SSL/TLS Protocol:       TLSv1.2,ECDHE-ECDSA-AES128-GCM-SHA256,256,128\n"),
        "{out}"
    );
    assert!(out.contains("Server Temp Key:        "), "{out}");
    assert!(out.contains("TLS Server Name:        localhost\n"), "{out}");
    assert!(out.contains("Complete requests:      100\n"), "{out}");
    assert!(out.contains("Failed requests:        0\n"), "{out}");
    let out = stdout_ok(&["ab", "-n", "50", "-c", "2", "-f", "TLS1.3", "-I", &local]);
    assert!(
        out.contains("SSL/TLS Protocol:       TLSv1.3,TLS_"),
        "{out}"
    );
    assert!(!out.contains("TLS Server Name:"), "{out}");
    assert!(out.contains("Complete requests:      50\n"), "{out}");
    let out = stdout_ok(&[
        "httperf",
        "--ssl",
        "--server",
        "127.0.0.1",
        "--port",
        &s.port.to_string(),
        "--num-conns",
        "20",
        "--num-calls",
        "3",
    ]);
    assert!(
        out.contains("Total: connections 20 requests 60 replies 60 "),
        "{out}"
    );
    assert!(
        out.contains(" --recv-buffer=16384 --ssl --num-conns=20"),
        "{out}"
    );
    let v = json_of(&[
        "httperf",
        "--ssl",
        "--ssl-no-reuse",
        "--ssl-ciphers=TLS_CHACHA20_POLY1305_SHA256",
        "--server",
        "127.0.0.1",
        "--port",
        &s.port.to_string(),
        "--num-conns",
        "10",
        "--format=json",
    ]);
    assert_eq!(fact(&v, "tls_full_handshakes"), 10.0);
    assert_eq!(
        table_value(&v, "http_tls", "cipher:TLS_CHACHA20_POLY1305_SHA256"),
        Some(256.0)
    );
    for (args, needle) in [
        (
            vec!["ab", "-f", "SSL3", "-n", "1", "https://127.0.0.1:1/"],
            "SSL3",
        ),
        (
            vec!["ab", "-Z", "RC4-SHA", "-n", "1", "https://127.0.0.1:1/"],
            "RC4-SHA",
        ),
        (
            vec!["ab", "-E", "c.pem", "-n", "1", "https://127.0.0.1:1/"],
            "-E",
        ),
        (vec!["httperf", "--ssl-no-reuse"], "--ssl"),
        (
            vec!["http", "https://127.0.0.1:1/", "--ciphers", "NULL-MD5"],
            "NULL-MD5",
        ),
        (
            vec![
                "serve",
                "--tls",
                "--cert",
                "/nonexistent.pem",
                "--key",
                "/x",
            ],
            "--cert",
        ),
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn self_target_over_tls_verifies_its_own_certificate() {
    let v = json_run(&[
        "http", "self", "--tls", "-n", "50", "-d", "0", "-c", "2", "-t", "1",
    ]);
    assert_eq!(v["metrics"]["events"], 50);
    assert_eq!(fact(&v, "errors"), 0.0);
    assert_eq!(fact(&v, "tls"), 1.0);
}

#[test]
fn serve_takes_a_pem_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = pem_pair(dir.path());
    let s = Serve::start(&["--tls", "--cert", &cert, "--key", &key]);
    let v = json_run(&[
        "http", &s.url, "-k", "-n", "20", "-d", "0", "-c", "2", "-t", "1",
    ]);
    assert_eq!(v["metrics"]["events"], 20);
}
