//! nginx on loopback (`HOSTBENCH_TEST_NGINX`, set by `.ci/run`; required when set): plain,
//! TLS, and as a forward proxy reached from a bound address.

use super::*;

/// nginx on loopback with one worker, when `.ci/run` says it is installed.
#[test]
fn against_nginx() {
    let Ok(nginx) = std::env::var("HOSTBENCH_TEST_NGINX") else {
        eprintln!("skipped: set HOSTBENCH_TEST_NGINX=/usr/sbin/nginx to test against nginx");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("www")).unwrap();
    std::fs::write(d.join("www/4k.txt"), vec![b'x'; 4096]).unwrap();
    std::fs::create_dir_all(d.join("www/gz")).unwrap();
    std::fs::write(d.join("www/gz/4k.txt"), vec![b'x'; 4096]).unwrap();
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let p = d.display();
    let conf = format!(
        "worker_processes 1; daemon off; master_process off; pid {p}/nginx.pid; error_log {p}/error.log;\n\
         events {{ worker_connections 4096; }}\n\
         http {{ access_log off; client_body_temp_path {p}/t1; proxy_temp_path {p}/t2;\n\
         fastcgi_temp_path {p}/t3; uwsgi_temp_path {p}/t4; scgi_temp_path {p}/t5;\n\
         keepalive_requests 100000;\n\
         server {{ listen 127.0.0.1:{port}; root {p}/www;\n\
         location /gz/ {{ gzip on; gzip_http_version 1.0; gzip_min_length 0; gzip_types text/plain; }} }} }}\n"
    );
    std::fs::write(d.join("nginx.conf"), conf).unwrap();
    let mut child = std::process::Command::new(&nginx)
        .args(["-p", &p.to_string(), "-c", &format!("{p}/nginx.conf")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("HOSTBENCH_TEST_NGINX={nginx} is set but cannot start: {e}"));
    let url = format!("http://127.0.0.1:{port}/4k.txt");
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "nginx did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let v = json_run(&["http", &url, "-n", "2000", "-d", "0", "-c", "10", "-t", "2"]);
    let out = stdout_ok(&["ab", "-n", "500", "-c", "5", &url]);
    // Compressed on the fly for ab's HTTP/1.0 requests: no length, the body ends at
    // nginx's close (which arrives with the last bytes).
    let t0 = Instant::now();
    let gz = stdout_ok(&[
        "ab",
        "-n",
        "200",
        "-c",
        "2",
        "-s",
        "20",
        "-H",
        "Accept-Encoding: gzip",
        &format!("http://127.0.0.1:{port}/gz/4k.txt"),
    ]);
    let gz_time = t0.elapsed();
    let missing = json_run(&[
        "http",
        &format!("http://127.0.0.1:{port}/nope"),
        "-n",
        "50",
        "-d",
        "0",
    ]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(v["metrics"]["events"], 2000);
    assert_eq!(table_value(&v, "http_status", "200"), Some(2000.0));
    assert_eq!(fact(&v, "document_length"), 4096.0);
    assert!(out.contains("Server Software:        nginx"), "{out}");
    assert!(out.contains("Complete requests:      500\n"), "{out}");
    assert!(
        out.contains("Document Length:        4096 bytes\n"),
        "{out}"
    );
    assert_eq!(table_value(&missing, "http_status", "404"), Some(50.0));
    assert!(gz.contains("Complete requests:      200\n"), "{gz}");
    assert!(gz.contains("Failed requests:        0\n"), "{gz}");
    assert!(!gz.contains("Document Length:        4096 bytes"), "{gz}");
    assert!(gz_time < Duration::from_secs(15), "{gz_time:?}");
}

/// nginx with TLS on loopback, when `.ci/run` says it is installed.
#[test]
fn against_nginx_over_tls() {
    let Ok(nginx) = std::env::var("HOSTBENCH_TEST_NGINX") else {
        eprintln!("skipped: set HOSTBENCH_TEST_NGINX=/usr/sbin/nginx to test against nginx");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (cert, key) = pem_pair(d);
    std::fs::create_dir_all(d.join("www")).unwrap();
    std::fs::write(d.join("www/4k.txt"), vec![b'x'; 4096]).unwrap();
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let p = d.display();
    let conf = format!(
        "worker_processes 1; daemon off; master_process off; pid {p}/nginx.pid; error_log {p}/error.log;\n\
         events {{ worker_connections 4096; }}\n\
         http {{ access_log off; client_body_temp_path {p}/t1; proxy_temp_path {p}/t2;\n\
         fastcgi_temp_path {p}/t3; uwsgi_temp_path {p}/t4; scgi_temp_path {p}/t5;\n\
         keepalive_requests 100000;\n\
         server {{ listen 127.0.0.1:{port} ssl; ssl_certificate {cert}; ssl_certificate_key {key};\n\
         ssl_protocols TLSv1.2 TLSv1.3; ssl_session_cache shared:hb:1m; root {p}/www; }} }}\n"
    );
    std::fs::write(d.join("nginx.conf"), conf).unwrap();
    let mut child = std::process::Command::new(&nginx)
        .args(["-p", &p.to_string(), "-c", &format!("{p}/nginx.conf")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("HOSTBENCH_TEST_NGINX={nginx} is set but cannot start: {e}"));
    let url = format!("https://127.0.0.1:{port}/4k.txt");
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "nginx did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let v = json_run(&[
        "http", &url, "-k", "-n", "2000", "-d", "0", "-c", "10", "-t", "2",
    ]);
    let fresh = json_run(&[
        "http",
        &url,
        "-k",
        "--no-keepalive",
        "-n",
        "100",
        "-d",
        "0",
        "-c",
        "1",
    ]);
    let untrusted = json_failed(&["http", &url, "-n", "5", "-d", "0", "-c", "1"]);
    let out = stdout_ok(&["ab", "-n", "300", "-c", "5", "-k", &url]);
    let perf = stdout_ok(&[
        "httperf",
        "--ssl",
        "--server",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--uri",
        "/4k.txt",
        "--num-conns",
        "30",
        "--num-calls",
        "2",
    ]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(v["metrics"]["events"], 2000);
    assert_eq!(table_value(&v, "http_status", "200"), Some(2000.0));
    assert_eq!(fact(&v, "body_bytes"), 2000.0 * 4096.0);
    assert_eq!(fresh["metrics"]["events"], 100);
    assert_eq!(fact(&fresh, "tls_full_handshakes"), 1.0);
    assert_eq!(fact(&fresh, "tls_resumed_handshakes"), 99.0);
    // The first failed handshake ends the run (each would fail the same way).
    assert_eq!(errors(&untrusted, "tls_certificate"), 1.0);
    assert!(out.contains("Server Software:        nginx"), "{out}");
    assert!(
        out.contains("SSL/TLS Protocol:       TLSv1.3,TLS_"),
        "{out}"
    );
    assert!(out.contains("Complete requests:      300\n"), "{out}");
    assert!(
        perf.contains("Total: connections 30 requests 60 replies 60 "),
        "{perf}"
    );
}

/// nginx as a forward proxy (`proxy_pass http://$http_host$request_uri`) logging what each
/// request looked like, reached from 127.0.0.2, when `.ci/run` says nginx is installed.
#[test]
fn ab_through_nginx_as_a_proxy_from_a_bound_address() {
    let Ok(nginx) = std::env::var("HOSTBENCH_TEST_NGINX") else {
        eprintln!("skipped: set HOSTBENCH_TEST_NGINX=/usr/sbin/nginx to test against nginx");
        return;
    };
    let s = Serve::start(&["--body-size", "321"]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let p = d.display();
    let conf = format!(
        "worker_processes 1; daemon off; master_process off; pid {p}/nginx.pid; error_log {p}/error.log;\n\
         events {{ worker_connections 1024; }}\n\
         http {{ client_body_temp_path {p}/t1; proxy_temp_path {p}/t2;\n\
         fastcgi_temp_path {p}/t3; uwsgi_temp_path {p}/t4; scgi_temp_path {p}/t5;\n\
         log_format fwd '$remote_addr|$request|$http_proxy_authorization|$status';\n\
         access_log {p}/access.log fwd;\n\
         server {{ listen 127.0.0.1:{port}; location / {{ proxy_pass http://$http_host$request_uri; }} }} }}\n"
    );
    std::fs::write(d.join("nginx.conf"), conf).unwrap();
    let mut child = std::process::Command::new(&nginx)
        .args(["-p", &p.to_string(), "-c", &format!("{p}/nginx.conf")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("HOSTBENCH_TEST_NGINX={nginx} is set but cannot start: {e}"));
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "nginx did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let url = format!("{}x", s.url);
    let (code, out, err) = run(&[
        "ab",
        "-B",
        "127.0.0.2",
        "-X",
        &format!("127.0.0.1:{port}"),
        "-P",
        "u:p",
        "-n",
        "10",
        "-c",
        "2",
        &url,
    ]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Document Length:        321 bytes\n"), "{out}");
    assert!(out.contains("Complete requests:      10\n"), "{out}");
    let log = std::fs::read_to_string(d.join("access.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 10, "{log}");
    let want = format!(
        "127.0.0.2|GET http://127.0.0.1:{}/x HTTP/1.0|Basic dTpw|200",
        s.port
    );
    assert!(lines.iter().all(|l| *l == want), "{log}");
}
