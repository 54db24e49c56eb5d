//! HTTP load: `hostbench http`, `ab`, `httperf` and `serve`, run as the real binary against
//! `hostbench serve`, tiny in-test servers that misbehave (refuse, reset, stay silent, send
//! garbage, stall), and nginx when `HOSTBENCH_TEST_NGINX` is set (`.ci/run` sets it); HTTPS
//! against `serve --tls` and nginx with a certificate made in the test.

use crate::common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

mod ab;
mod client;
mod failures;
mod httperf;
mod nginx;
mod proxy;
mod serve;
mod tls;

fn json_run(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend_from_slice(&["-f", "json"]);
    let out = stdout_ok(&a);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_valid(&v, &format!("{args:?}"));
    v
}

fn fact(v: &Value, name: &str) -> f64 {
    v["workload"]["facts"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no fact {name}"))
}

fn table_value(v: &Value, table: &str, row: &str) -> Option<f64> {
    let t = v["tables"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == table)?;
    t["rows"].as_array()?.iter().find(|r| r["label"] == row)?["values"][0].as_f64()
}

fn errors(v: &Value, kind: &str) -> f64 {
    table_value(v, "http_errors", kind).unwrap_or(0.0)
}

/// Runs a command that prints a JSON result.
/// A native run in which every request failed: exit 1 with the reason on stderr, and the
/// result (every error counted) still on stdout.
fn json_failed(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend_from_slice(&["-f", "json"]);
    let (code, out, err) = run(&a);
    assert_eq!(code, 1, "{a:?}: {err}");
    // A server that never answered says so; one that failed the requests otherwise, that
    // none succeeded; an untrusted certificate ends the run at once, with the way out.
    assert!(
        err.contains("FATAL: no request succeeded")
            || err.contains("FATAL: no response arrived")
            || (err.contains("FATAL: ") && err.contains("--insecure")),
        "{err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_valid(&v, &format!("{args:?}"));
    assert_eq!(v["metrics"]["events"], 0);
    v
}

fn json_of(args: &[&str]) -> Value {
    let out = stdout_ok(args);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_valid(&v, &format!("{args:?}"));
    v
}

/// A server that accepts and then does `f` with each connection.
fn misbehaving_server(f: fn(TcpStream)) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            std::thread::spawn(move || f(c));
        }
    });
    url
}

fn read_head(c: &mut TcpStream) -> bool {
    let mut buf = Vec::new();
    let mut b = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match c.read(&mut b) {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&b[..n]),
        }
    }
    true
}

fn warnings_text(v: &Value) -> String {
    v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["message"].as_str().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A PEM certificate and key for localhost and 127.0.0.1, written into `dir`.
fn pem_pair(dir: &std::path::Path) -> (String, String) {
    let ck =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let (c, k) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&c, ck.cert.pem()).unwrap();
    std::fs::write(&k, ck.signing_key.serialize_pem()).unwrap();
    (c.display().to_string(), k.display().to_string())
}
