//! Servers that refuse, reset, stay silent, send garbage or go away, and bad input: every
//! run ends on time with the failure counted and named, and bad input is one line and exit 2.

use super::*;

#[test]
fn refused_connections_are_counted_and_ab_stops() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/");
    // The native command tries one connection first, as wrk does: one line, exit 2 (a
    // setup error, as for a database that is down).
    let t0 = Instant::now();
    let (code, out, err) = run(&["http", &url, "-d", "5s", "-c", "2", "-t", "1"]);
    assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains(&format!("cannot connect to 127.0.0.1:{port}")) && err.contains("refused"),
        "{err}"
    );
    // httperf counts them, as httperf does.
    let v = json_of(&[
        "httperf",
        "--server",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--num-conns",
        "3",
        "--format=json",
    ]);
    assert_eq!(errors(&v, "refused"), 3.0, "{}", v["tables"]);
    assert_eq!(v["metrics"]["events"], 0);
    let kinds: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"errors"), "{kinds:?}");
    // ab ends at the first socket error (exit 1) unless -r.
    let (code, _out, err) = run(&["ab", "-n", "10", &url]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Connection refused"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // Nothing completed: the error and what failed, not "too few events".
    assert!(!err.contains("event(s) completed"), "{err}");
    assert!(err.contains("none completed"), "{err}");
    let (code, out, err) = run(&["ab", "-r", "-n", "10", &url]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Failed requests:        10\n"), "{out}");
}

#[test]
fn reset_silent_and_garbage_servers_end_on_time() {
    let reset = misbehaving_server(|c| {
        let mut c = c;
        read_head(&mut c);
        let l = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        use std::os::fd::AsRawFd;
        // SAFETY: setting SO_LINGER on a socket we own.
        unsafe {
            libc::setsockopt(
                c.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                &l as *const libc::linger as *const libc::c_void,
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            )
        };
    });
    let v = json_failed(&["http", &reset, "-n", "20", "-d", "5s", "-c", "2", "-t", "1"]);
    assert_eq!(v["metrics"]["events"], 0);
    assert_eq!(
        errors(&v, "reset") + errors(&v, "closed"),
        20.0,
        "{}",
        v["tables"]
    );

    let silent = misbehaving_server(|mut c| {
        read_head(&mut c);
        std::thread::sleep(Duration::from_secs(30));
    });
    let t0 = Instant::now();
    let v = json_failed(&[
        "http",
        &silent,
        "-d",
        "1s",
        "-c",
        "3",
        "-t",
        "1",
        "--timeout",
        "300ms",
    ]);
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    assert!(errors(&v, "timeout") >= 3.0, "{}", v["tables"]);
    // With a request limit: each request gives up at the timeout, then the run ends.
    let t0 = Instant::now();
    let v = json_failed(&[
        "http",
        &silent,
        "-n",
        "4",
        "-d",
        "0",
        "-c",
        "2",
        "--timeout",
        "300ms",
    ]);
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    assert_eq!(errors(&v, "timeout"), 4.0, "{}", v["tables"]);

    let garbage = misbehaving_server(|mut c| {
        while read_head(&mut c) {
            if c.write_all(b"SPDY/9 what\r\n\r\n").is_err() {
                return;
            }
        }
    });
    let v = json_failed(&["http", &garbage, "-n", "10", "-d", "5s", "-c", "1"]);
    assert_eq!(errors(&v, "bad_response"), 10.0, "{}", v["tables"]);
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    for (args, needle) in [
        (vec!["http", "ftp://x/"], "http://"),
        (vec!["http", "127.0.0.1:8080/"], "not a URL"),
        (vec!["http", "http://h:99999/"], "port"),
        (
            vec!["http", "http://127.0.0.1:1/", "-c", "0"],
            "connections",
        ),
        (vec!["http", "https:///x"], "no host"),
        (vec!["http", "self", "--tls-version", "1.1"], "1.1"),
        (vec!["ab", "-n", "10"], "URL"),
        (
            vec!["ab", "-n", "10", "-c", "20", "http://127.0.0.1:1/"],
            "concurrency",
        ),
        (vec!["ab", "-j", "http://127.0.0.1:1/"], "illegal option"),
        (
            vec!["ab", "-g", "/nonexistent-dir/x.tsv", "http://127.0.0.1:1/"],
            "cannot create",
        ),
        (vec!["ab", "-X", "proxy", "http://127.0.0.1:1/"], "no port"),
        (
            vec!["ab", "-X", "127.0.0.1:3128", "https://127.0.0.1:1/"],
            "CONNECT",
        ),
        (
            vec!["ab", "-P", "nocolon", "http://127.0.0.1:1/"],
            "username:password",
        ),
        (
            vec!["ab", "-B", "192.0.2.1", "http://127.0.0.1:1/"],
            "cannot bind",
        ),
        (
            vec!["ab", "-B", "127.0.0.2:80", "http://127.0.0.1:1/"],
            "without a port",
        ),
        (vec!["ab", "-B", "::1", "http://127.0.0.1:1/"], "::1"),
        (
            vec!["ab", "-w", "--format=json", "http://127.0.0.1:1/"],
            "give one of them",
        ),
        (vec!["ab", "-n", "many", "http://127.0.0.1:1/"], "-n"),
        (vec!["httperf", "--bogus=1"], "--bogus"),
        (vec!["httperf", "--rate=fast"], "--rate"),
        (vec!["httperf", "--uri=x"], "--uri"),
        (vec!["serve", "--status", "42"], "42"),
        // A CR or LF in a header would end its line and smuggle in another header.
        (
            vec!["ab", "-H", "X-A: 1\r\nX-B: 2", "http://127.0.0.1:1/"],
            "CR or LF",
        ),
        (
            vec!["ab", "-C", "a=1\nX-B: 2", "http://127.0.0.1:1/"],
            "CR or LF",
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-H", "X-A: 1\nX-B: 2"],
            "CR or LF",
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-H", "X-A: 1\rX-B: 2"],
            "CR or LF",
        ),
        (vec!["httperf", "--add-header=X-A: 1\r\nX-B: 2"], "CR or LF"),
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn ab_says_how_far_it_got_when_the_server_goes_away() {
    // The server stops after 4 s of a 15 s run: ab's "Total of N requests completed", no
    // report, the error on stderr, exit 1. (With 1 s, a loaded machine sometimes started ab
    // after the server had gone: nothing completed, no "Total" line.)
    let s = Serve::start(&["--duration", "4s"]);
    let (code, out, err) = run(&["ab", "-t", "15", "-c", "2", &s.url]);
    assert_eq!(code, 1, "{err}");
    let total = out
        .lines()
        .find_map(|l| l.strip_prefix("Total of "))
        .and_then(|l| l.strip_suffix(" requests completed"))
        .and_then(|n| n.parse::<u64>().ok());
    assert!(total.is_some_and(|n| n > 0), "{out}");
    assert!(!out.contains("Requests per second"), "{out}");
    assert!(err.contains("FATAL: "), "{err}");
}

#[test]
fn a_server_that_never_answers_is_a_failed_run() {
    // It accepts and reads, and never answers. Whatever the timeout, each grammar ends on
    // time, says that no response arrived, and exits 1.
    let silent = misbehaving_server(|mut c| {
        read_head(&mut c);
        std::thread::sleep(Duration::from_secs(60));
    });
    let port = silent
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    let check = |args: &[&str], limit: Duration| -> String {
        let t0 = Instant::now();
        let (code, out, err) = run(args);
        let took = t0.elapsed();
        assert!(took < limit, "{args:?}: {took:?}");
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert!(err.contains("no response arrived"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("event(s) completed"), "{args:?}: {err}");
        out
    };
    // The timeout is longer than the run: the requests are still waiting at the end.
    let out = check(
        &[
            "http",
            &silent,
            "-d",
            "2s",
            "-c",
            "2",
            "-t",
            "1",
            "--timeout",
            "60s",
            "-f",
            "json",
        ],
        Duration::from_secs(10),
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_valid(&v, "silent");
    assert_eq!(v["metrics"]["events"], 0);
    assert_eq!(fact(&v, "unfinished_requests"), 2.0);
    assert!(
        warnings_text(&v).contains("no response arrived"),
        "{}",
        v["warnings"]
    );
    // ... or shorter: each request times out, again and again.
    check(
        &["http", &silent, "-d", "2s", "-c", "2", "--timeout", "300ms"],
        Duration::from_secs(10),
    );
    check(
        &["ab", "-t", "2", "-c", "2", &silent],
        Duration::from_secs(10),
    );
    check(
        &["ab", "-r", "-t", "2", "-c", "2", "-s", "1", &silent],
        Duration::from_secs(10),
    );
    check(
        &[
            "httperf",
            "--server=127.0.0.1",
            &format!("--port={port}"),
            "--num-conns=2",
            "--timeout=1",
        ],
        Duration::from_secs(10),
    );
    check(
        &[
            "httperf",
            "--server=127.0.0.1",
            &format!("--port={port}"),
            "--num-conns=2",
            "--runtime=2",
        ],
        Duration::from_secs(10),
    );
}
