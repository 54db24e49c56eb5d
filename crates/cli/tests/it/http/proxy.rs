//! Proxies and bound addresses: ab's absolute URLs and proxy credentials, the native
//! command's proxy and bind options, `ab -B`, and each grammar's request headers.

use super::*;

/// Request lines and Proxy-Authorization values a test proxy saw.
type SeenRequests = Arc<std::sync::Mutex<Vec<(String, String)>>>;

/// A forward proxy for tests: for each connection, reads the request head, keeps its
/// request line and Proxy-Authorization value, and forwards it in origin form to the host
/// and port of the absolute `http://` URL on the request line (400 without one), then copies
/// the answer back until the server closes (HTTP/1.0, one request per connection).
fn forward_proxy() -> (u16, SeenRequests) {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let log = seen.clone();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            let log = log.clone();
            std::thread::spawn(move || {
                let mut c = c;
                let mut head = Vec::new();
                let mut b = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match c.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&b[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let mut lines = text.split("\r\n");
                let line = lines.next().unwrap_or("").to_string();
                let auth = text
                    .split("\r\n")
                    .find_map(|h| h.strip_prefix("Proxy-Authorization: "))
                    .unwrap_or("")
                    .to_string();
                log.lock().unwrap().push((line.clone(), auth));
                let parts: Vec<&str> = line.split(' ').collect();
                let Some(target) = parts.get(1).and_then(|t| t.strip_prefix("http://")) else {
                    let _ = c.write_all(b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
                    return;
                };
                let (authority, path) = target.split_at(target.find('/').unwrap_or(target.len()));
                let Ok(mut up) = TcpStream::connect(authority) else {
                    let _ = c.write_all(b"HTTP/1.0 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
                    return;
                };
                let mut fwd = format!("{} {} {}\r\n", parts[0], path, parts[2]);
                for h in lines.filter(|h| !h.is_empty() && !h.starts_with("Proxy-Authorization")) {
                    fwd.push_str(h);
                    fwd.push_str("\r\n");
                }
                fwd.push_str("\r\n");
                if up.write_all(fwd.as_bytes()).is_ok() {
                    let _ = std::io::copy(&mut up, &mut c);
                }
            });
        }
    });
    (port, seen)
}

#[test]
fn ab_sends_absolute_urls_through_a_proxy_with_its_credentials() {
    let s = Serve::start(&["--body-size", "123"]);
    let (proxy, seen) = forward_proxy();
    let url = format!("{}a/b?c=1", s.url);
    let out = stdout_ok(&[
        "ab",
        "-X",
        &format!("127.0.0.1:{proxy}"),
        "-P",
        "user:pass",
        "-n",
        "20",
        "-c",
        "2",
        &url,
    ]);
    // The report names the server, not the proxy; the body is the server's.
    assert!(
        out.contains(&format!(
            "Benchmarking 127.0.0.1 [through 127.0.0.1:{proxy}] (be patient)"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("Server Port:            {}\n", s.port)),
        "{out}"
    );
    assert!(out.contains("Document Path:          /a/b?c=1\n"), "{out}");
    assert!(out.contains("Document Length:        123 bytes\n"), "{out}");
    assert!(out.contains("Complete requests:      20\n"), "{out}");
    assert!(out.contains("Failed requests:        0\n"), "{out}");
    assert!(!out.contains("Non-2xx"), "{out}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 20);
    for (line, auth) in seen.iter() {
        assert_eq!(
            line,
            &format!("GET http://127.0.0.1:{}/a/b?c=1 HTTP/1.0", s.port)
        );
        assert_eq!(auth, "Basic dXNlcjpwYXNz");
    }
}

/// A server that answers every request with a 2-byte body and keeps each client's address.
fn address_recording_server() -> (String, Arc<std::sync::Mutex<Vec<std::net::IpAddr>>>) {
    let peers = Arc::new(std::sync::Mutex::new(Vec::new()));
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    let log = peers.clone();
    std::thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            if let Ok(a) = c.peer_addr() {
                log.lock().unwrap().push(a.ip());
            }
            if read_head(&mut c) {
                let _ = c.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
            }
        }
    });
    (url, peers)
}

#[test]
fn the_native_command_binds_and_goes_through_a_proxy_too() {
    let (url, peers) = address_recording_server();
    let v = json_run(&[
        "http",
        &url,
        "--bind",
        "127.0.0.2",
        "-n",
        "4",
        "-c",
        "2",
        "-t",
        "1",
        "--no-keepalive",
    ]);
    assert_eq!(v["metrics"]["events"], 4);
    let seen: Vec<_> = std::mem::take(&mut *peers.lock().unwrap());
    assert_eq!(seen.len(), 4);
    assert!(
        seen.iter().all(|a| a.to_string() == "127.0.0.2"),
        "{seen:?}"
    );

    let s = Serve::start(&["--body-size", "7"]);
    let (proxy, lines) = forward_proxy();
    let v = json_run(&[
        "http",
        &format!("{}x", s.url),
        "--proxy",
        &format!("127.0.0.1:{proxy}"),
        "-H",
        "Proxy-Authorization: Basic dTpw",
        "-n",
        "3",
        "-c",
        "1",
        "-t",
        "1",
        "--http1.0",
        "--no-keepalive",
    ]);
    assert_eq!(v["metrics"]["events"], 3);
    let lines = lines.lock().unwrap();
    assert_eq!(lines.len(), 3);
    for (line, auth) in lines.iter() {
        assert_eq!(line, &format!("GET http://127.0.0.1:{}/x HTTP/1.0", s.port));
        assert_eq!(auth, "Basic dTpw");
    }
}

#[test]
fn ab_binds_connections_to_the_address_given_with_b() {
    let (url, peers) = address_recording_server();
    stdout_ok(&["ab", "-n", "6", "-c", "2", &url]);
    let before: Vec<_> = std::mem::take(&mut *peers.lock().unwrap());
    assert_eq!(before.len(), 6);
    assert!(
        before.iter().all(|a| a.to_string() == "127.0.0.1"),
        "{before:?}"
    );
    let out = stdout_ok(&["ab", "-B", "127.0.0.2", "-n", "6", "-c", "2", &url]);
    assert!(out.contains("Complete requests:      6\n"), "{out}");
    let after = peers.lock().unwrap();
    assert_eq!(after.len(), 6);
    assert!(
        after.iter().all(|a| a.to_string() == "127.0.0.2"),
        "{after:?}"
    );
}

/// A server that answers each connection's first request (2-byte body, then closes) and keeps
/// the request heads it read.
fn head_recording_server() -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    let heads = Arc::new(std::sync::Mutex::new(Vec::new()));
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/p", l.local_addr().unwrap());
    let log = heads.clone();
    std::thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            let mut head = Vec::new();
            let mut b = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match c.read(&mut b) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&b[..n]),
                }
            }
            log.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&head).into_owned());
            let _ =
                c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    (url, heads)
}

#[test]
fn each_grammar_sends_its_peers_request_headers() {
    let (url, heads) = head_recording_server();
    let version = env!("CARGO_PKG_VERSION");
    let port = url
        .trim_end_matches("/p")
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    // Without the native command's connection test (it sends nothing).
    let take = || -> Vec<String> {
        std::mem::take(&mut *heads.lock().unwrap())
            .into_iter()
            .filter(|h| !h.is_empty())
            .collect()
    };

    // Native (wrk's request): Host only.
    json_run(&[
        "http",
        &url,
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "1",
        "--no-keepalive",
    ]);
    assert_eq!(
        take(),
        [format!(
            "GET /p HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        )]
    );
    // -H adds to it; a User-Agent given is the one sent.
    json_run(&[
        "http",
        &url,
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "1",
        "--no-keepalive",
        "-H",
        "User-Agent: x",
    ]);
    let h = take();
    assert!(
        h[0].contains("\r\nUser-Agent: x\r\n") && !h[0].contains("Accept"),
        "{h:?}"
    );

    // ab: User-Agent and Accept, as ab sends them.
    stdout_ok(&["ab", "-n", "1", &url]);
    assert_eq!(
        take(),
        [format!(
            "GET /p HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: hostbench/{version}\r\n\
             Accept: */*\r\n\r\n"
        )]
    );
    // -H replaces a default of the same name (any case), never adds a second one.
    stdout_ok(&[
        "ab",
        "-n",
        "1",
        "-H",
        "user-agent: x",
        "-H",
        "ACCEPT: y",
        &url,
    ]);
    assert_eq!(
        take(),
        [format!(
            "GET /p HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nuser-agent: x\r\nACCEPT: y\r\n\r\n"
        )]
    );
    // httperf: User-Agent only.
    stdout_ok(&[
        "httperf",
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--uri",
        "/p",
        "--num-conns",
        "1",
    ]);
    let h = take();
    assert_eq!(h.len(), 1, "{h:?}");
    assert!(
        h[0].contains(&format!("\r\nUser-Agent: hostbench/{version}\r\n"))
            && !h[0].contains("Accept"),
        "{h:?}"
    );
}
