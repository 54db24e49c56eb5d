//! `hostbench ab`: ApacheBench's layout (snapshot), its seed command line, percentiles, CSV,
//! POST bodies, the gnuplot and HTML outputs, `-t` and `-n`, keep-alive and `-v`.

use super::*;

fn strip_ab_notes(out: &str) -> String {
    // ab's mean/median notes depend on the measured distribution.
    let mut keep = Vec::new();
    let mut skip = false;
    for l in out.lines() {
        if l.starts_with("ERROR: The median") || l.starts_with("WARNING: The median") {
            skip = true;
            continue;
        }
        if skip && l.starts_with(' ') {
            continue;
        }
        skip = false;
        keep.push(l);
    }
    keep.join("\n") + "\n"
}

#[test]
fn ab_layout() {
    let s = Serve::start(&[]);
    let out = stdout_ok(&["ab", "-n", "200", "-c", "4", "-k", &s.url]);
    assert!(out.contains("Complete requests:      200\n"), "{out}");
    assert!(out.contains("Failed requests:        0\n"), "{out}");
    assert!(
        out.contains("Document Length:        4096 bytes\n"),
        "{out}"
    );
    assert!(out.contains("Server Software:        hostbench/"), "{out}");
    assert!(out.contains("Total transferred:      "), "{out}");
    // As ab counts them: every response that keeps its connection open, the first one on
    // each of the 4 connections included (ab 2.3 prints 200 here).
    assert!(out.contains("Keep-Alive requests:    200\n"), "{out}");
    insta::assert_snapshot!("ab_layout", redact(&strip_ab_notes(&out)));
    // ab's heartbeat form past 150 requests: the Benchmarking line ends there and stderr
    // gets a line every tenth of the requests (at least 100 apart), then "Finished N
    // requests"; -q (or 150 requests or fewer) keeps ".....done" and stderr quiet.
    assert!(out.contains("(be patient)\n"), "{out}");
    let stderr_of = |args: &[&str]| {
        let run = hb()
            .args(args)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(run.status.success(), "{run:?}");
        // Without the machine's own warnings (a busy test machine gets some).
        String::from_utf8_lossy(&run.stderr)
            .lines()
            .filter(|l| !l.starts_with("WARNING: "))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    assert_eq!(
        stderr_of(&["ab", "-n", "200", "-c", "4", &s.url]),
        "Completed 100 requests\nCompleted 200 requests\nFinished 200 requests\n"
    );
    let err = stderr_of(&["ab", "-n", "3000", "-c", "4", &s.url]);
    let want: String = (1..=10)
        .map(|k| format!("Completed {} requests\n", k * 300))
        .chain(["Finished 3000 requests\n".to_string()])
        .collect();
    assert_eq!(err, want);
    assert_eq!(stderr_of(&["ab", "-q", "-n", "200", "-c", "4", &s.url]), "");
    let quiet = stdout_ok(&["ab", "-q", "-n", "200", "-c", "4", &s.url]);
    assert!(quiet.contains("(be patient).....done\n"), "{quiet}");
    // Without -k: no Keep-Alive line; one connection per request.
    let out = stdout_ok(&["ab", "-n", "50", "-c", "5", &s.url]);
    assert!(!out.contains("Keep-Alive requests"), "{out}");
    assert!(out.contains("Complete requests:      50\n"), "{out}");
    assert!(out.contains("(be patient).....done\n"), "{out}");
}

#[test]
fn ab_seed_command_runs_as_written() {
    // The seed's `ab -c 1000 -n 1000 -t 10 URL` (shortened to -t 3): 1000 connections at
    // once, and, as in ab, -t after -n replaces the request count: the run lasts the time
    // limit (ab's published run: 10 s, 19,804 requests).
    let s = Serve::start(&[]);
    let out = stdout_ok(&["ab", "-c", "1000", "-n", "1000", "-t", "3", &s.url]);
    assert!(out.contains("Concurrency Level:      1000\n"), "{out}");
    assert!(out.contains("Failed requests:        0\n"), "{out}");
    let secs: f64 = out
        .lines()
        .find_map(|l| l.strip_prefix("Time taken for tests:"))
        .and_then(|l| l.trim().strip_suffix(" seconds"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(secs >= 2.9, "{out}");
}

#[test]
fn ab_percentile_csv_and_no_50000_cap() {
    let s = Serve::start(&["--body-size", "10"]);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("p.csv");
    // `-t` before `-n` in ab silently caps -n at 50000; here -n is what was asked.
    let out = stdout_ok(&[
        "ab",
        "-t",
        "30",
        "-n",
        "60000",
        "-c",
        "20",
        "-k",
        "-e",
        csv.to_str().unwrap(),
        &s.url,
    ]);
    assert!(out.contains("Complete requests:      60000\n"), "{out}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Percentage served,Time in ms");
    assert_eq!(lines.len(), 102);
    assert!(lines[101].starts_with("100,"));
}

#[test]
fn ab_posts_a_body_and_the_native_command_prints_peer_layouts() {
    let s = Serve::start(&["--body-size", "16"]);
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("post.json");
    std::fs::write(&body, br#"{"k":"v"}"#).unwrap();
    let out = stdout_ok(&[
        "ab",
        "-n",
        "40",
        "-c",
        "2",
        "-k",
        "-p",
        body.to_str().unwrap(),
        "-T",
        "application/json",
        &s.url,
    ]);
    assert!(out.contains("Complete requests:      40\n"), "{out}");
    assert!(out.contains("Total body sent:"), "{out}");
    assert!(out.contains("kb/s sent"), "{out}");
    let out = stdout_ok(&[
        "http", &s.url, "-n", "30", "-d", "0", "-c", "2", "-f", "httperf",
    ]);
    assert!(out.contains("replies 30 test-duration"), "{out}");
    let out = stdout_ok(&["http", &s.url, "-n", "30", "-d", "0", "-c", "2", "-f", "ab"]);
    assert!(out.contains("Complete requests:      30\n"), "{out}");
    assert!(out.contains("(longest request)"), "{out}");
}

/// The rows of an ab `-g` file after its header, split on tabs; asserts the header.
fn gnuplot_rows(path: &std::path::Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("starttime\tseconds\tctime\tdtime\tttime\twait"),
        "{text}"
    );
    lines
        .map(|l| l.split('\t').map(String::from).collect::<Vec<_>>())
        .collect()
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

#[test]
fn ab_gnuplot_file_lists_every_request_as_ab_writes_it() {
    // Each response is held 2 ms, so times are whole milliseconds ab's rounding keeps.
    let s = Serve::start(&["--delay", "2ms", "--body-size", "100"]);
    let dir = tempfile::tempdir().unwrap();
    let tsv = dir.path().join("ab.tsv");
    let t0 = unix_now();
    // A zone 5:30 east of UTC (a POSIX TZ string: no tz database needed), so the start
    // column is seen to be local time, as ab's apr_ctime writes it.
    let out = hb()
        .env("TZ", "XYZ-5:30")
        .args([
            "ab",
            "-n",
            "60",
            "-c",
            "3",
            "-g",
            tsv.to_str().unwrap(),
            &s.url,
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let t1 = unix_now();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("Complete requests:      60\n"), "{stdout}");
    let rows = gnuplot_rows(&tsv);
    assert_eq!(rows.len(), 60);
    let mut last_total = 0;
    for r in &rows {
        assert_eq!(r.len(), 6, "{r:?}");
        let n = |i: usize| -> i64 { r[i].parse().unwrap_or_else(|_| panic!("{r:?}")) };
        let (secs, ctime, dtime, ttime, wait) = (n(1), n(2), n(3), n(4), n(5));
        assert!((t0..=t1).contains(&secs), "{r:?} not in {t0}..={t1}");
        // `Tue Nov 24 17:18:00 2026`: apr_ctime pads the day with a zero.
        let when: Vec<&str> = r[0].split(' ').collect();
        assert_eq!(when.len(), 5, "{r:?}");
        assert_eq!(when[2].len(), 2, "{r:?}");
        let local = secs + 5 * 3600 + 30 * 60;
        let hms = format!(
            "{:02}:{:02}:{:02}",
            local.rem_euclid(86_400) / 3600,
            local.rem_euclid(3600) / 60,
            local.rem_euclid(60)
        );
        assert_eq!(when[3], hms, "{r:?}");
        // Whole milliseconds, each rounded on its own (so they may differ by one).
        assert!(ttime >= 2, "{r:?}");
        assert!((ctime + dtime - ttime).abs() <= 1, "{r:?}");
        assert!(wait <= ttime + 1 && wait >= 1, "{r:?}");
        // ab writes its array sorted by total time.
        assert!(ttime >= last_total, "not sorted by ttime: {rows:?}");
        last_total = ttime;
    }
    // Without keep-alive every request connects; with it only the first few do.
    let ka = dir.path().join("ka.tsv");
    stdout_ok(&[
        "ab",
        "-k",
        "-n",
        "40",
        "-c",
        "2",
        "-g",
        ka.to_str().unwrap(),
        &s.url,
    ]);
    assert_eq!(gnuplot_rows(&ka).len(), 40);
}

#[test]
fn ab_gnuplot_with_only_a_time_limit_keeps_the_first_50000() {
    let s = Serve::start(&["--body-size", "10"]);
    let dir = tempfile::tempdir().unwrap();
    let tsv = dir.path().join("t.tsv");
    let (code, out, err) = run(&[
        "ab",
        "-t",
        "4",
        "-k",
        "-c",
        "8",
        "-g",
        tsv.to_str().unwrap(),
        &s.url,
    ]);
    assert_eq!(code, 0, "{err}");
    let done: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("Complete requests:"))
        .unwrap_or_else(|| panic!("{out}"))
        .trim()
        .parse()
        .unwrap();
    let rows = gnuplot_rows(&tsv);
    // How many complete depends on the machine; the bound does not.
    assert_eq!(rows.len() as u64, done.min(50_000), "{err}");
    if done > 50_000 {
        assert!(
            err.contains(&format!("kept the first 50000 of {done} responses")),
            "{err}"
        );
    } else {
        assert!(!err.contains("kept the first"), "{err}");
    }
}

/// The `<th>` labels and the `<td>` texts of an HTML report, cell by cell.
fn html_cells(html: &str) -> Vec<String> {
    let doc = scraper::Html::parse_fragment(html);
    let sel = scraper::Selector::parse("th, td").unwrap();
    doc.select(&sel)
        .map(|c| c.text().collect::<String>().trim().to_string())
        .collect()
}

#[test]
fn ab_html_report_has_abs_rows_and_attributes() {
    let s = Serve::start(&["--body-size", "100"]);
    let out = stdout_ok(&["ab", "-w", "-k", "-n", "30", "-c", "2", &s.url]);
    insta::assert_snapshot!("ab_html", redact(&out));
    assert!(out.starts_with("<p>\n This is ApacheBench, Version 2.3 <i>&lt;hostbench "));
    assert!(out.contains("\n<table >\n<tr ><th colspan=2 bgcolor=white>Server Software:</th>"));
    assert!(out.ends_with("</table>\n"), "{out}");
    let cells = html_cells(&out);
    let labels: Vec<&str> = cells
        .iter()
        .map(String::as_str)
        .filter(|c| c.ends_with(':') || *c == "Connection Times (ms)")
        .collect();
    assert_eq!(
        labels,
        [
            "Server Software:",
            "Server Hostname:",
            "Server Port:",
            "Document Path:",
            "Document Length:",
            "Concurrency Level:",
            "Time taken for tests:",
            "Complete requests:",
            "Failed requests:",
            "Keep-Alive requests:",
            "Total transferred:",
            "HTML transferred:",
            "Requests per second:",
            "Transfer rate:",
            "Connection Times (ms)",
            "Connect:",
            "Processing:",
            "Total:",
        ]
    );
    let after = |label: &str| {
        let i = cells.iter().position(|c| c == label).unwrap();
        cells[i + 1].clone()
    };
    assert_eq!(after("Complete requests:"), "30");
    assert_eq!(after("Document Length:"), "100 bytes");
    assert_eq!(after("Server Port:"), s.port.to_string());
    assert!(after("Transfer rate:").ends_with(" kb/s received"));
    // -x, -y, -z (each of which also turns HTML on) go into the tags verbatim; a POST adds
    // the body lines.
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("body");
    std::fs::write(&body, "x=1").unwrap();
    let out = stdout_ok(&[
        "ab",
        "-x",
        "border=1",
        "-y",
        "class=r",
        "-z",
        "align=left",
        "-n",
        "5",
        "-p",
        body.to_str().unwrap(),
        &s.url,
    ]);
    assert!(out.contains("\n<table border=1>\n"), "{out}");
    assert!(
        out.contains("<tr class=r><th colspan=2 align=left>Complete requests:</th><td colspan=2 align=left>5</td></tr>"),
        "{out}"
    );
    assert!(
        out.contains("<tr class=r><td colspan=2 align=left>&nbsp;</td><td colspan=2 align=left>"),
        "{out}"
    );
    assert!(out.contains(" kb/s sent</td></tr>\n"), "{out}");
    assert!(!out.contains("bgcolor"), "{out}");
    assert!(!out.contains("Benchmarking"), "{out}");
}

#[test]
fn ab_keeps_one_event_loop_for_keep_alive_against_a_local_server() {
    let s = Serve::start(&[]);
    let threads = |args: &[&str]| -> u64 {
        let mut a = vec!["ab", "--format=json", "-n", "200", "-c", "4"];
        a.extend_from_slice(args);
        a.push(&s.url);
        let v: Value = serde_json::from_str(&stdout_ok(&a)).unwrap();
        v["config"]["threads"].as_u64().unwrap()
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    assert_eq!(threads(&["-k"]), 1);
    assert_eq!(threads(&[]), cpus.min(4));
    assert_eq!(threads(&["-k", "-W", "2"]), 2);
}

#[test]
fn ab_t_resets_the_request_count_unless_n_follows() {
    let s = Serve::start(&[]);
    let complete = |out: &str| -> u64 {
        out.lines()
            .find_map(|l| l.strip_prefix("Complete requests:"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{out}"))
    };
    // -n before -t: ab's -t sets the count (to 50,000; hostbench: no cap), so the run lasts
    // the time limit: the published `ab -c 1000 -n 1000 -t 10` ran 10 s and 19,804 requests.
    let t0 = Instant::now();
    let (code, out, err) = run(&["ab", "-q", "-c", "2", "-n", "10", "-t", "1", &s.url]);
    assert_eq!(code, 0, "{err}");
    assert!(
        t0.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t0.elapsed()
    );
    assert!(complete(&out) > 10, "{out}");
    assert_eq!(err.matches("50,000").count(), 1, "{err}");
    assert!(err.contains("-n 10"), "{err}");
    // -t alone: the same note.
    let (code, _out, err) = run(&["ab", "-q", "-c", "2", "-t", "1", &s.url]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err.matches("50,000").count(), 1, "{err}");
    // -n after -t: the count holds, whichever comes first.
    let (code, out, err) = run(&["ab", "-q", "-c", "2", "-t", "30", "-n", "10", &s.url]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(complete(&out), 10, "{out}");
    assert!(!err.contains("50,000"), "{err}");
}

/// A server of the test's own for `ab -v`: `/` answers 200 with a Date header, `/err` 500,
/// `/big` 200 with a 12 KiB header, `/huge` an endless header (5 MiB, never ended).
fn verbose_server() -> String {
    misbehaving_server(|mut c| {
        let mut buf = Vec::new();
        let mut b = [0u8; 1024];
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
            match c.read(&mut b) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&b[..n]),
            }
        }
        let head = String::from_utf8_lossy(&buf);
        let path = head.split(' ').nth(1).unwrap_or("/").to_string();
        // A date that changes (Unix seconds, not HTTP's format): the snapshot redacts it.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let date = format!("Date: {now}\r\n");
        let reply = match path.as_str() {
            "/err" => format!(
                "HTTP/1.1 500 Internal Server Error\r\n{date}Content-Length: 4\r\n\r\nbad\n"
            ),
            "/big" => format!(
                "HTTP/1.1 200 OK\r\nX-Big: {}\r\nContent-Length: 2\r\n\r\nok",
                "b".repeat(12 * 1024)
            ),
            "/huge" => {
                let _ = c.write_all(b"HTTP/1.1 200 OK\r\nX-Huge: ");
                let chunk = vec![b'h'; 64 * 1024];
                for _ in 0..80 {
                    if c.write_all(&chunk).is_err() {
                        return;
                    }
                }
                return;
            }
            _ => format!(
                "HTTP/1.1 200 OK\r\nServer: t\r\n{date}Content-Type: text/plain\r\nContent-Length: 6\r\n\r\nhello\n"
            ),
        };
        let _ = c.write_all(reply.as_bytes());
    })
}

/// From "Benchmarking" to "..done", carriage returns shown, the port, version and dates
/// replaced.
fn ab_trace(out: &str, url: &str) -> String {
    let port = url.trim_end_matches('/').rsplit(':').next().unwrap();
    let from = out.find("Benchmarking").expect("Benchmarking line");
    let to = out.find("..done").expect("..done") + "..done".len();
    out[from..to]
        .split_inclusive('\n')
        .map(|l| {
            if l.starts_with("Date: ") {
                "Date: DATE\r\n"
            } else {
                l
            }
        })
        .collect::<String>()
        .replace('\r', "\\r")
        .replace(&format!(":{port}"), ":PORT")
        .replace(env!("CARGO_PKG_VERSION"), "VERSION")
}

#[test]
fn ab_verbose_prints_the_request_and_each_response_head() {
    let url = verbose_server();
    let err = format!("{url}err");
    let mut snap = String::new();
    for (v, target, n) in [
        ("2", &url, "2"),
        ("2", &err, "1"),
        ("3", &url, "2"),
        ("4", &err, "1"),
    ] {
        let out = stdout_ok(&[
            "ab",
            "-n",
            n,
            "-v",
            v,
            "-H",
            "Authorization: Basic dTpw",
            target,
        ]);
        snap.push_str(&format!(
            "=== ab -n {n} -v {v} {}\n",
            target.replace(&url, "URL/")
        ));
        snap.push_str(&ab_trace(&out, &url));
        snap.push('\n');
    }
    insta::assert_snapshot!("ab_verbose", snap);
    // -v 1 and no -v: the report only.
    for v in [&["-v", "1"][..], &[]] {
        let mut a = vec!["ab", "-n", "2"];
        a.extend_from_slice(v);
        a.push(&url);
        let out = stdout_ok(&a);
        assert!(!out.contains("LOG:") && !out.contains("INFO:"), "{out}");
    }
    // What one response prints is bounded: a 12 KiB head prints ab's 8191 bytes, an
    // endless one fails the response (the head buffer is 16 KiB) and prints nothing more.
    let big = stdout_ok(&["ab", "-n", "1", "-v", "2", &format!("{url}big")]);
    let trace = &big[big.find("LOG: header received:\n").unwrap()..big.find("..done").unwrap()];
    assert_eq!(
        trace.len(),
        "LOG: header received:\n".len() + 8191 + 1,
        "{trace}"
    );
    let (code, out, _) = run(&["ab", "-n", "1", "-v", "4", &format!("{url}huge")]);
    assert_ne!(code, 0);
    assert!(out.len() < 16 * 1024, "{} bytes", out.len());
    assert!(!out.contains("LOG: header received"), "{out}");
    // Not with a layout of hostbench's (the trace would mix with it).
    let (code, _, err) = run(&["ab", "-n", "1", "-v", "2", "--format=json", &url]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--format=json"), "{err}");
}

/// ab prints the percentile table for more than one request only; with one it ends at the
/// Connection Times.
#[test]
fn ab_of_one_request_has_no_percentile_table() {
    let s = Serve::start(&[]);
    let one = stdout_ok(&["ab", "-n", "1", &s.url]);
    assert!(one.contains("Complete requests:      1\n"), "{one}");
    assert!(one.contains("Connection Times (ms)"), "{one}");
    assert!(!one.contains("Percentage of the requests"), "{one}");
    let two = stdout_ok(&["ab", "-n", "2", &s.url]);
    assert!(two.contains("Percentage of the requests served"), "{two}");
    // Asked for one request, did one: not "only 1 event" on stderr (ab and httperf alike).
    let (code, _, err) = run(&["ab", "-n", "1", &s.url]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("only 1 event"), "{err}");
    let (code, _, err) = run(&[
        "httperf",
        "--server",
        "127.0.0.1",
        "--port",
        &s.port.to_string(),
        "--num-conns",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("only 2 event"), "{err}");
}

/// Ctrl-C ends ab's run with the report of what was done, printed by its signal handler:
/// without the "..done" that a run that ran its course adds to the Benchmarking line.
#[test]
fn an_interrupted_ab_prints_its_report_without_done() {
    let s = Serve::start(&[]);
    let child = spawn_piped(hb_std().args(["ab", "-q", "-t", "30", "-c", "2", &s.url]));
    std::thread::sleep(Duration::from_millis(1500));
    let out = interrupt(child);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{text}");
    assert!(
        text.contains("(be patient)...\n\nServer Software:"),
        "{text}"
    );
    assert!(!text.contains("..done"), "{text}");
    assert!(text.contains("Complete requests:"), "{text}");
}

#[test]
fn ab_connect_and_processing_add_up_to_total() {
    // ab: Processing = Total − Connect for each request, so the means add up (to the
    // rounding of three decimals each). Without -k every request opens a connection; the
    // close of the previous one once counted in Total and in neither row.
    let s = Serve::start(&[]);
    for extra in [&[][..], &["-k"][..]] {
        let mut args = vec!["ab", "-n", "400", "-c", "4"];
        args.extend_from_slice(extra);
        args.push(&s.url);
        let out = stdout_ok(&args);
        let mean = |label: &str| -> f64 {
            let line = out
                .lines()
                .find(|l| l.starts_with(label))
                .unwrap_or_else(|| panic!("no {label} row: {out}"));
            line.split_whitespace().nth(2).unwrap().parse().unwrap()
        };
        let (c, p, t) = (mean("Connect:"), mean("Processing:"), mean("Total:"));
        assert!(
            (c + p - t).abs() <= 0.0021,
            "{extra:?}: {c} + {p} != {t}\n{out}"
        );
    }
}
