//! The native client (`hostbench http`) against `hostbench serve` and tiny in-test servers:
//! exact counts, keep-alive, chunked bodies and pipelining, open-loop rates and stalls, how a
//! response ends, 1xx answers, time limits, Ctrl-C, file-descriptor limits, and what a run
//! says and saves.

use super::*;

fn percentile_ms(v: &Value, p: f64) -> f64 {
    v["latency"]["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["p"].as_f64() == Some(p))
        .unwrap_or_else(|| panic!("no p{p}"))["ns"]
        .as_f64()
        .unwrap()
        / 1e6
}

#[test]
fn counts_status_codes_and_bytes_are_exact() {
    let s = Serve::start(&["--status", "404", "--body-size", "100"]);
    let v = json_run(&["http", &s.url, "-n", "500", "-d", "0", "-c", "8", "-t", "2"]);
    assert_eq!(v["metrics"]["events"], 500);
    assert_eq!(table_value(&v, "http_status", "404"), Some(500.0));
    assert_eq!(fact(&v, "responses"), 500.0);
    assert_eq!(fact(&v, "body_bytes"), 50_000.0);
    assert_eq!(fact(&v, "non_2xx_responses"), 500.0);
    assert_eq!(fact(&v, "errors"), 0.0);
    // Not failures, but said: every response was a 404.
    let w = warnings_text(&v);
    assert!(
        w.contains("500 of 500 responses had a status outside 2xx (404 x500)"),
        "{w}"
    );
    assert_eq!(v["workload"]["id"], "http.load");
    assert_eq!(v["figures"][0]["name"], "requests_per_s");
}

#[test]
fn keep_alive_reuses_connections_and_close_does_not() {
    let s = Serve::start(&[]);
    let v = json_run(&["http", &s.url, "-n", "400", "-d", "0", "-c", "4", "-t", "2"]);
    assert_eq!(v["metrics"]["events"], 400);
    let opened = fact(&v, "connections_opened");
    assert!(
        opened >= 4.0 && opened <= 4.0 + fact(&v, "retried_requests"),
        "{opened}"
    );
    assert_eq!(fact(&v, "keepalive_responses"), 400.0 - opened);
    let v = json_run(&[
        "http",
        &s.url,
        "-n",
        "300",
        "-d",
        "0",
        "-c",
        "4",
        "--no-keepalive",
    ]);
    assert_eq!(v["metrics"]["events"], 300);
    assert_eq!(fact(&v, "connections_opened"), 300.0);
    assert_eq!(fact(&v, "keepalive_responses"), 0.0);
    // A server that closes after every response: the client follows.
    let s = Serve::start(&["--no-keepalive"]);
    let v = json_run(&["http", &s.url, "-n", "200", "-d", "0", "-c", "2"]);
    assert_eq!(v["metrics"]["events"], 200);
    assert_eq!(fact(&v, "errors"), 0.0);
    assert_eq!(fact(&v, "connections_opened"), 200.0);
}

#[test]
fn chunked_bodies_and_pipelining() {
    let s = Serve::start(&["--chunked", "--body-size", "10000"]);
    let v = json_run(&[
        "http",
        &s.url,
        "-n",
        "300",
        "-d",
        "0",
        "-c",
        "3",
        "--pipeline",
        "4",
    ]);
    assert_eq!(v["metrics"]["events"], 300);
    assert_eq!(fact(&v, "errors"), 0.0);
    assert_eq!(fact(&v, "body_bytes"), 3_000_000.0);
    assert!(fact(&v, "footer_bytes") > 0.0);
    assert_eq!(fact(&v, "document_length"), 10_000.0);
}

#[test]
fn built_in_target_needs_no_server() {
    let v = json_run(&["http", "self", "-n", "200", "-d", "0", "-c", "2"]);
    assert_eq!(v["metrics"]["events"], 200);
    assert_eq!(fact(&v, "self_server"), 1.0);
}

#[test]
fn open_loop_holds_the_rate() {
    let s = Serve::start(&[]);
    let v = json_run(&[
        "http", &s.url, "-R", "500", "-d", "2s", "-c", "20", "-t", "2",
    ]);
    let rate = v["metrics"]["events_per_s"].as_f64().unwrap();
    assert!((rate - 500.0).abs() < 25.0, "{rate}");
    assert_eq!(v["config"]["rate_per_s"], 500.0);
}

/// A server on its own thread per connection that answers at once, except that the
/// first request arriving `after` the first one waits `stall` before its answer.
fn stalling_server(after: Duration, stall: Duration) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let stalled = Arc::new(AtomicBool::new(false));
    let first = Arc::new(std::sync::OnceLock::<Instant>::new());
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { return };
            let (stalled, first) = (stalled.clone(), first.clone());
            std::thread::spawn(move || {
                let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let n = match c.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    buf.extend_from_slice(&chunk[..n]);
                    while let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..p + 4);
                        let t0 = *first.get_or_init(Instant::now);
                        if t0.elapsed() >= after && !stalled.swap(true, Ordering::SeqCst) {
                            std::thread::sleep(stall);
                        }
                        if c.write_all(resp).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    port
}

#[test]
fn a_stall_shows_in_open_loop_percentiles() {
    // 100 requests/s on one connection; the server stalls once for 1 s. Every request due
    // during the stall waits for it, and is timed from its intended start: the stall is
    // in the tail (a closed-loop tool would show one slow request among hundreds).
    let port = stalling_server(Duration::from_millis(500), Duration::from_secs(1));
    let url = format!("http://127.0.0.1:{port}/");
    let v = json_run(&[
        "http", &url, "-R", "100", "-d", "3s", "-c", "1", "-t", "1", "-p", "50,90,99",
    ]);
    let n = v["metrics"]["events"].as_f64().unwrap();
    assert!(n >= 250.0, "{n}");
    assert!(percentile_ms(&v, 90.0) >= 200.0, "{}", v["latency"]);
    assert!(percentile_ms(&v, 99.0) >= 800.0, "{}", v["latency"]);
    assert!(percentile_ms(&v, 50.0) < 200.0, "{}", v["latency"]);
    // Service time (from the actual send) does not see the queue.
    assert!(fact(&v, "late_sends") >= 50.0, "{}", v["workload"]["facts"]);
}

#[test]
fn ctrl_c_stops_a_run_and_keeps_what_it_measured() {
    let s = Serve::start(&[]);
    let child = spawn_piped(hb_std().args(["http", &s.url, "-d", "60s", "-c", "4", "-f", "json"]));
    // Long enough for the run to start on a loaded machine (0.8 s was not, under the whole
    // test file on 2 busy CPUs).
    std::thread::sleep(Duration::from_millis(2500));
    let t0 = Instant::now();
    let out = interrupt(child);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(130));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["outcome"]["stop_reason"], "interrupted");
    assert!(v["metrics"]["events"].as_u64().unwrap() > 0);
}

#[test]
fn a_server_on_this_machine_has_its_cpu_reported_not_counted_as_noise() {
    // `hostbench serve` is another process listening on loopback: found by its socket, its CPU
    // time is the server's (a fact and a report line), not other processes' activity.
    let s = Serve::start(&[]);
    let v = json_run(&["http", &s.url, "-d", "1500ms", "-c", "8", "-t", "1"]);
    let c = fact(&v, "local_server_cpus");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    assert!(c > 0.05 && c <= cpus + 0.5, "{c}");
    let out = stdout_ok(&["http", &s.url, "-d", "1s", "-c", "4", "-t", "1"]);
    assert!(out.contains("\nServer CPU: "), "{out}");
    // The built-in server runs inside the load generator: nothing to report apart.
    let v = json_run(&["http", "self", "-d", "1s", "-c", "4", "-t", "1"]);
    assert!(
        v["workload"]["facts"].get("local_server_cpus").is_none(),
        "{v}"
    );
}

#[test]
fn a_closed_stderr_is_not_a_panic() {
    // `hostbench ab ... 2>&1 | head -3`: the reader goes away while progress lines are due.
    let s = Serve::start(&[]);
    let mut child = hb_std()
        .args(["ab", "-n", "3000", "-c", "2", &s.url])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// A server that reads one request per connection, writes `resp` and closes at once, so
/// the close (FIN) arrives with the last bytes of the response.
fn answer_and_close(resp: &'static [u8]) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            std::thread::spawn(move || {
                if read_head(&mut c) {
                    let _ = c.write_all(resp);
                }
            });
        }
    });
    url
}

#[test]
fn a_close_with_the_last_bytes_ends_the_response() {
    // No length: the body ends at the server's close, which arrives with it. ab: 20 of 20
    // in a few ms; the old engine waited for the timeout on most of them.
    for resp in [
        &b"HTTP/1.0 200 OK\r\nServer: t\r\n\r\nhello world"[..],
        &b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nhello world"[..],
    ] {
        let url = answer_and_close(resp);
        let t0 = Instant::now();
        let (code, out, err) = run(&["ab", "-n", "20", "-c", "2", "-s", "20", &url]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("Complete requests:      20\n"), "{out}");
        assert!(out.contains("Failed requests:        0\n"), "{out}");
        assert!(out.contains("Document Length:        11 bytes\n"), "{out}");
        let v = json_run(&[
            "http",
            &url,
            "-n",
            "20",
            "-d",
            "0",
            "-c",
            "2",
            "-t",
            "1",
            "--http1.0",
            "--timeout",
            "20s",
        ]);
        assert_eq!(v["metrics"]["events"], 20, "{}", v["tables"]);
        assert_eq!(fact(&v, "errors"), 0.0, "{}", v["tables"]);
        assert_eq!(fact(&v, "body_bytes"), 220.0);
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    }
    // A body cut short (Content-Length 100, 10 bytes, close) fails at once, as a closed
    // connection; ab goes on (a close is not a receive error that ends ab's run).
    let url = answer_and_close(
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n0123456789",
    );
    let t0 = Instant::now();
    let v = json_failed(&[
        "http",
        &url,
        "-n",
        "10",
        "-d",
        "0",
        "-c",
        "1",
        "--timeout",
        "20s",
    ]);
    assert_eq!(errors(&v, "closed"), 10.0, "{}", v["tables"]);
    assert_eq!(errors(&v, "timeout"), 0.0, "{}", v["tables"]);
    let (code, out, err) = run(&["ab", "-n", "10", "-s", "20", &url]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Failed requests:        10\n"), "{out}");
    assert!(out.contains("(Connect: 0, Receive: 10, Length: 0"), "{out}");
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
}

#[test]
fn interim_1xx_responses_are_skipped() {
    // 100 Continue and 103 Early Hints come before the response; they are not it.
    let url = answer_and_close(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n\
          HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    );
    let v = json_run(&[
        "http",
        &url,
        "-n",
        "6",
        "-d",
        "0",
        "-c",
        "1",
        "--timeout",
        "20s",
    ]);
    assert_eq!(v["metrics"]["events"], 6, "{}", v["tables"]);
    assert_eq!(
        table_value(&v, "http_status", "200"),
        Some(6.0),
        "{}",
        v["tables"]
    );
    assert_eq!(
        table_value(&v, "http_status", "100"),
        None,
        "{}",
        v["tables"]
    );
    assert_eq!(fact(&v, "non_2xx_responses"), 0.0);
    assert_eq!(fact(&v, "body_bytes"), 12.0);
    assert_eq!(fact(&v, "errors"), 0.0);
    // On a kept-alive connection too, and in ab's layout.
    let s = misbehaving_server(|mut c| {
        while read_head(&mut c) {
            let r = b"HTTP/1.1 100 Continue\r\n\r\n\
                      HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok";
            if c.write_all(r).is_err() {
                return;
            }
        }
    });
    let (code, out, err) = run(&["ab", "-k", "-n", "8", "-c", "2", "-s", "20", &s]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Complete requests:      8\n"), "{out}");
    assert!(out.contains("Document Length:        2 bytes\n"), "{out}");
    assert!(!out.contains("Non-2xx"), "{out}");
    assert!(out.contains("Keep-Alive requests:    8\n"), "{out}");
}

#[test]
fn a_time_limit_that_ends_the_run_before_its_request_count_says_so() {
    let s = Serve::start(&["--delay", "50ms"]);
    let (code, _out, err) = run(&["http", &s.url, "-n", "1000", "-d", "1s", "-c", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("the time limit (1 s) ended the run") && err.contains("of the 1000 requests"),
        "{err}"
    );
    let (code, _out, err) = run(&["ab", "-t", "1", "-n", "1000", "-s", "5", &s.url]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("of the 1000 requests"), "{err}");
    // Reached: nothing to say.
    let (code, _out, err) = run(&["http", &s.url, "-n", "3", "-d", "10s", "-c", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("ended the run"), "{err}");
}

/// More connections than the process may open files: refused before the run, naming the
/// limit (it ran and failed every connection with "Too many open files").
#[test]
fn more_connections_than_open_files_are_refused_before_the_run() {
    use std::os::unix::process::CommandExt;
    for args in [
        &["ab", "-c", "200", "-n", "400", "http://127.0.0.1:9/"][..],
        &["http", "-c", "200", "-d", "1s", "http://127.0.0.1:9/"][..],
    ] {
        let mut cmd = hb_std();
        cmd.args(args).env("HOSTBENCH_NO_SAVE", "1");
        // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child before exec.
        unsafe {
            cmd.pre_exec(|| {
                let l = libc::rlimit {
                    rlim_cur: 100,
                    rlim_max: 100,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &l) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        };
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("200 connections need as many open files")
                && err.contains("may open 100")
                && err.contains("open at most 36 connections"),
            "{args:?}: {err}"
        );
    }
}

/// Spawns `args` and returns the stdout lines that arrived within `within` of the start
/// (the process still running), then the rest once it exits, and its stderr.
fn early_lines(args: &[&str], within: Duration) -> (Vec<String>, String, String) {
    let mut child = hb_std()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        loop {
            let mut buf = Vec::new();
            // Lines, or what is there at a pause (ab's "(be patient)..." has no newline).
            match r.fill_buf() {
                Ok([]) | Err(_) => return,
                Ok(b) => buf.extend_from_slice(b),
            }
            let n = buf.len();
            r.consume(n);
            if tx.send(String::from_utf8_lossy(&buf).into_owned()).is_err() {
                return;
            }
        }
    });
    let t0 = Instant::now();
    let mut early = Vec::new();
    while let Some(left) = within.checked_sub(t0.elapsed()) {
        match rx.recv_timeout(left) {
            Ok(s) => early.push(s),
            Err(_) => break,
        }
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "{args:?} ended before {within:?}"
    );
    let out = child.wait_with_output().unwrap();
    // Until the reader saw the end of the output (it may still hold the last lines).
    let rest: String = rx.iter().collect();
    (
        early,
        rest,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn long_runs_say_what_they_do_before_they_start() {
    let s = Serve::start(&["--delay", "50ms"]);
    // ab: the banner and the Benchmarking line come first, the report after the run.
    let (early, rest, err) = early_lines(
        &["ab", "-t", "6", "-c", "2", &s.url],
        Duration::from_secs(4),
    );
    let early = early.concat();
    assert!(
        early.starts_with("This is ApacheBench, Version 2.3")
            && early.contains("\nBenchmarking 127.0.0.1 (be patient)"),
        "{early:?}"
    );
    assert!(!early.contains("Complete requests"), "{early:?}");
    assert!(rest.contains("Complete requests:"), "{rest:?} {err}");
    assert_eq!(rest.matches("Benchmarking").count(), 0, "{rest:?}");
    // The native command: wrk's first line.
    let (early, rest, _err) = early_lines(
        &["http", &s.url, "-d", "6s", "-c", "2", "-t", "1"],
        Duration::from_secs(4),
    );
    let early = early.concat();
    assert!(
        early.starts_with(&format!("Running 6s test @ {}\n", s.url)),
        "{early:?}"
    );
    assert!(rest.contains("Requests:"), "{rest:?}");
    // httperf: its options echoed, then the report after the run.
    let (early, rest, _err) = early_lines(
        &[
            "httperf",
            "--server=127.0.0.1",
            &format!("--port={}", s.port),
            "--rate=1",
            "--num-conns=7",
        ],
        Duration::from_secs(4),
    );
    let early = early.concat();
    assert!(
        early.starts_with(&format!(
            "httperf --client=0/1 --server=127.0.0.1 --port={} --uri=/ --rate=1 ",
            s.port
        )) && early.ends_with("--num-conns=7 --num-calls=1\n"),
        "{early:?}"
    );
    assert!(rest.starts_with("Maximum connect burst length"), "{rest:?}");
    assert!(rest.contains("Total: connections 7 "), "{rest:?}");
}

#[test]
fn results_list_tells_http_runs_apart() {
    let d = tempfile::Builder::new()
        .prefix("hostbench-test-http-list-")
        .tempdir()
        .unwrap();
    let db = d.path().join("results.db");
    let s = Serve::start(&[]);
    let port = s.port.to_string();
    let native = format!("http://127.0.0.1:{port}/x?password=Pw7Secret");
    for args in [
        vec!["ab", "-n", "20", s.url.as_str()],
        vec![
            "httperf",
            "--server=127.0.0.1",
            &format!("--port={port}"),
            "--num-conns=5",
        ],
        vec!["http", native.as_str(), "-n", "20", "-c", "1"],
        vec!["cpu", "--events=10", "--time=0", "run"],
    ] {
        let out = hb_with_store(&db)
            .args(&args)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
    }
    let out = hb_with_store(&db)
        .args(["results", "list"])
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&out.stdout);
    let host = format!("127.0.0.1:{port}");
    for want in [
        format!("http.load ab http://{host}/ "),
        format!("http.load httperf http://{host}/ "),
        format!("http.load native http://{host}/x?password=*** "),
    ] {
        assert!(list.contains(&want), "no '{want}' in:\n{list}");
    }
    assert!(!list.contains("Pw7Secret"), "{list}");
    // Other workloads are listed as before.
    assert!(list.contains(" cpu "), "{list}");
}

/// `http -q`: the report, and no warnings on stderr, in wrk's layout as in JSON (every
/// response a 404 is always a warning).
#[test]
fn quiet_keeps_the_report_and_drops_the_warnings() {
    let s = Serve::start(&["--status", "404"]);
    for format in ["text", "json", "ab", "httperf"] {
        let args = [
            "http",
            &s.url,
            "-n",
            "20",
            "-c",
            "1",
            "--no-save",
            "-f",
            format,
        ];
        let (code, _, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("outside 2xx"), "{format}: {err}");
        let (code, out, err) = run(&[&args[..], &["-q"]].concat());
        assert_eq!(code, 0, "{err}");
        assert!(!err.contains("WARNING"), "{format} -q: {err}");
        assert!(!out.trim().is_empty(), "{format} -q printed no report");
    }
}
