//! `hostbench serve`: stops on its own, answers 400 and closes on what it cannot read,
//! closes idle connections, and backs off when out of file descriptors.

use super::*;

#[test]
fn serve_answers_and_stops_on_its_own() {
    let out = hb_std()
        .args(["serve", "--port", "0", "--duration", "300ms"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("listening on http://127.0.0.1:"));
}

/// Sends `req` on a new connection to `port` and reads until the server closes.
fn exchange(port: u16, req: &[u8]) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(req).unwrap();
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn serve_answers_400_and_closes_on_what_it_cannot_read() {
    let s = Serve::start(&[]);
    for req in [
        // Bare LF line endings.
        &b"GET / HTTP/1.1\nHost: x\n\n"[..],
        b"GET / HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n",
        // Conflicting lengths.
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 4\r\n\r\nabcd",
        // A length and chunked together (a request-smuggling shape).
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n\
          3\r\nabc\r\n0\r\n\r\n",
        // Chunked bodies it cannot read.
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc",
        // Not HTTP/1.x.
        b"GET / SPDY/3\r\n\r\n",
    ] {
        let t0 = Instant::now();
        let out = exchange(s.port, req);
        assert!(
            out.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{:?}: {out:?}",
            String::from_utf8_lossy(req)
        );
        assert!(out.contains("\r\nConnection: close\r\n"), "{out:?}");
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    }
    // A chunked body it can read is skipped, and the next request on the connection answered.
    let out = exchange(
        s.port,
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\n\
          0\r\nX-T: 1\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(out.matches("HTTP/1.1 200 OK\r\n").count(), 2, "{out:?}");
    // A request answered, then a bad one: the answer, then the 400.
    let out = exchange(
        s.port,
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\nHost: x\n\n",
    );
    assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out:?}");
    assert!(out.contains("HTTP/1.1 400 Bad Request\r\n"), "{out:?}");
}

#[test]
fn serve_closes_connections_that_send_nothing() {
    let s = Serve::start(&["--idle-timeout", "1s"]);
    // Nothing at all; half a request head (slowloris); a request, then silence.
    for req in [
        &b""[..],
        b"GET / HTTP/1.1\r\nHost:",
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    ] {
        let t0 = Instant::now();
        let out = exchange(s.port, req);
        let took = t0.elapsed();
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_secs(10),
            "{:?}: {took:?}",
            String::from_utf8_lossy(req)
        );
        assert_eq!(
            out.matches("HTTP/1.1 200 OK").count(),
            usize::from(req.ends_with(b"\r\n\r\n")),
            "{out:?}"
        );
    }
    let (code, _out, err) = run(&["serve", "--idle-timeout", "soon"]);
    assert_eq!(code, 2, "{err}");
}

/// Clock ticks of CPU time (user + system) process `pid` has used.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    // Fields 14 and 15 of stat; `rest` starts at field 3.
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

#[test]
fn serve_backs_off_when_out_of_file_descriptors() {
    use std::os::unix::process::CommandExt;
    let mut cmd = hb_std();
    cmd.args(["serve", "--port", "0", "--idle-timeout", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            let l = libc::rlimit {
                rlim_cur: 32,
                rlim_max: 32,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &l) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line
        .trim()
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // More connections than it has descriptors: the rest wait in the accept queue.
    let held: Vec<TcpStream> = (0..60)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let t0 = cpu_ticks(child.id());
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu_ticks(child.id()) - t0;
    drop(held);
    // Descriptors free again: it accepts and answers.
    std::thread::sleep(Duration::from_millis(500));
    let out = exchange(
        port,
        b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    let _ = child.kill();
    let _ = child.wait();
    // Spinning on the listening socket costs a CPU (100 ticks a second); backing off, next
    // to nothing.
    assert!(used < 15, "{used} ticks in 2 s");
    assert!(out.starts_with("HTTP/1.1 200 OK"), "{out:?}");
}
