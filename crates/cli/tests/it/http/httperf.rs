//! `hostbench httperf`: httperf's layout (snapshot), its rate past 1024 sockets, sessions with
//! think times, and the echo of its options.

use super::*;

#[test]
fn httperf_layout() {
    let s = Serve::start(&[]);
    let port = s.port.to_string();
    let out = stdout_ok(&[
        "httperf",
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--rate",
        "200",
        "--num-conns",
        "100",
        "--num-calls",
        "2",
    ]);
    assert!(
        out.contains("Total: connections 100 requests 200 replies 200 test-duration"),
        "{out}"
    );
    assert!(
        out.contains("Connection length [replies/conn]: 2.000\n"),
        "{out}"
    );
    assert!(
        out.contains("Reply status: 1xx=0 2xx=200 3xx=0 4xx=0 5xx=0\n"),
        "{out}"
    );
    insta::assert_snapshot!("httperf_layout", redact(&out));
}

#[test]
fn httperf_records_the_connections_it_was_asked_for() {
    // --num-conns 30 at a rate: the stored run says 30 connections (it once said the
    // model's unlimited cap, 10000000, and `results show -f ab` printed that as the
    // concurrency).
    let s = Serve::start(&[]);
    let port = s.port.to_string();
    let v = json_of(&[
        "httperf",
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--rate",
        "300",
        "--num-conns",
        "30",
        "--format=json",
    ]);
    assert_eq!(v["metrics"]["events"], 30);
    assert_eq!(
        v["workload"]["params"]["connections"], 30,
        "{}",
        v["workload"]
    );
    assert_eq!(fact(&v, "connections_requested"), 30.0);
}

#[test]
fn httperf_holds_its_rate_past_1024_sockets() {
    // Each reply takes 1.5 s, so at 1000 connections/s about 1500 are open at once:
    // httperf's select() build stops at 1024; this must not.
    let s = Serve::start(&["--delay", "1500ms"]);
    let port = s.port.to_string();
    let v = json_of(&[
        "httperf",
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--rate",
        "1000",
        "--num-conns",
        "2000",
        "--hog",
        "--format=json",
    ]);
    assert_eq!(v["metrics"]["events"], 2000);
    assert_eq!(fact(&v, "errors"), 0.0);
    assert!(
        fact(&v, "max_open_connections") > 1024.0,
        "{}",
        v["workload"]["facts"]
    );
    assert_eq!(v["config"]["grammar"], "httperf");
}

#[test]
fn httperf_sessions_think_between_calls() {
    // 5 sessions started 0.1 s apart, 3 calls each, 0.2 s apart: the last session starts at
    // 0.4 s and ends after two think times, at 0.8 s. Each lives about 0.4 s.
    let s = Serve::start(&[]);
    let port = s.port.to_string();
    let args = [
        "httperf",
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--wsess=5,3,0.2",
        "--rate",
        "10",
    ];
    let v = json_of(&[&args[..], &["--format=json"]].concat());
    assert_eq!(v["metrics"]["events"], 15);
    assert_eq!(fact(&v, "connections_opened"), 5.0);
    assert_eq!(fact(&v, "errors"), 0.0);
    let d = v["metrics"]["duration_s"].as_f64().unwrap();
    assert!(d >= 0.75, "{d}");
    // httperf's layout adds its Session lines, every call answered.
    let out = stdout_ok(&args);
    assert!(
        out.lines().next().unwrap().ends_with(" --wsess=5,3,0.200"),
        "{out}"
    );
    let tail: Vec<&str> = out.lines().rev().take(5).collect();
    assert!(
        tail[4].starts_with("Session rate [sess/s]: min 0.00 avg ") && tail[4].ends_with(" (5/5)"),
        "{out}"
    );
    assert_eq!(tail[3], "Session: avg 1.00 connections/session", "{out}");
    assert_eq!(tail[2], "Session lifetime [s]: 0.4", "{out}");
    assert_eq!(tail[1], "Session failtime [s]: 0.0", "{out}");
    assert_eq!(tail[0], "Session length histogram: 0 0 0 5", "{out}");
    // Refused: every session fails with no call answered.
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port().to_string()
    };
    let out = stdout_ok(&[
        "httperf",
        "--server",
        "127.0.0.1",
        "--port",
        &closed,
        "--wsess=3,2,0",
        "--rate",
        "100",
    ]);
    assert!(out.contains(" (0/3)\n"), "{out}");
    assert!(out.ends_with("Session length histogram: 3 0 0\n"), "{out}");
    // Without --wsess: no Session lines.
    let out = stdout_ok(&[
        "httperf",
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--num-conns",
        "2",
    ]);
    assert!(!out.contains("Session"), "{out}");
}

#[test]
fn httperf_echoes_its_options_as_httperf_does() {
    // The first line of httperf's report, checked against httperf 0.9.0 (Debian 12).
    let s = Serve::start(&[]);
    let port = s.port.to_string();
    let out = stdout_ok(&[
        "httperf",
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--uri",
        "/x",
        "--num-conns",
        "2",
        "--period=e0.01",
        "--num-calls",
        "2",
        "--http-version",
        "1.0",
        "--hog",
        "--add-header",
        "X: y\\n",
        "--timeout",
        "2",
    ]);
    assert_eq!(
        out.lines().next().unwrap(),
        format!(
            "httperf --timeout=2 --hog --client=0/1 --server=127.0.0.1 --port={port} --uri=/x \
             --http-version=1.0 --period=e0.01 --send-buffer=4096 --recv-buffer=16384 \
             --add-header='X: y\\n' --num-conns=2 --num-calls=2"
        )
    );
    // No --rate given: none echoed.
    let out = stdout_ok(&[
        "httperf",
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--num-conn",
        "1",
    ]);
    assert_eq!(
        out.lines().next().unwrap(),
        format!(
            "httperf --client=0/1 --server=127.0.0.1 --port={port} --uri=/ --send-buffer=4096 \
             --recv-buffer=16384 --num-conns=1 --num-calls=1"
        )
    );
    // Connections one after another are bursts of one, as httperf says (it was 0 here).
    assert!(out.contains("\nMaximum connect burst length: 1\n"), "{out}");
}
