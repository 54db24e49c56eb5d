//! fio 3.33's `net` engine (`engines/net.c`), side by side with the installed fio on the
//! loopback: fio's examples `netio.fio` (TCP receiver and sender) and
//! `netio_multicast.fio` (UDP multicast, pingpong), adapted only in size and port (and the
//! multicast one kept on the loopback with `interface=127.0.0.1`), a unix socket, UDP;
//! compared on what does not depend on speed — exit status, each job's bytes and I/Os,
//! the JSON key sets; then what hostbench refuses, and that a listener nobody connects to
//! ends with the run (runtime, Ctrl-C).
//!
//! Without fio the comparisons are skipped with a message (`HOSTBENCH_TEST_FIO` set: fail).

use super::fio::{s, tmp};
use super::fio_exec::keys;
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_seq::need_fio;
use crate::common;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// A TCP and UDP port free on the loopback now (fio takes a port, not port 0).
fn free_port() -> u16 {
    loop {
        let t = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let p = t.local_addr().unwrap().port();
        if std::net::UdpSocket::bind(("0.0.0.0", p)).is_ok() {
            return p;
        }
    }
}

/// Each job's (name, error, read bytes, read I/Os, write bytes, write I/Os).
fn jobs(v: &Value) -> Vec<(String, i64, u64, u64, u64, u64)> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let n = |d: &str, k: &str| j[d][k].as_u64().unwrap();
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["error"].as_i64().unwrap(),
                n("read", "io_bytes"),
                n("read", "total_ios"),
                n("write", "io_bytes"),
                n("write", "total_ios"),
            )
        })
        .collect()
}

fn key_set(v: &Value) -> BTreeSet<String> {
    let mut k = BTreeSet::new();
    keys(&v["jobs"][0], "", &mut k);
    k
}

/// A job file `file` with `text`, written in `d`.
fn example(d: &Path, text: &str, file: &str) {
    std::fs::write(d.join(file), text).unwrap();
}

/// fio 3.33's `examples/netio.fio`, sized 8 MiB on `port`.
fn netio(port: u16) -> String {
    format!(
        "[global]\nioengine=net\nport={port}\nprotocol=tcp\nbs=4k\nsize=8m\n\n\
         [receiver]\nlisten\nrw=read\n\n\
         [sender]\nhostname=localhost\nstartdelay=1\nrw=write\n"
    )
}

fn both(d: &Path, file: &str) -> (Ran, Option<Ran>) {
    let a = [file, "--output-format=json"];
    let h = hb(d, &a);
    let f = need_fio("fio_net").then(|| fio(d, &a));
    (h, f)
}

#[test]
fn netio_example_runs_as_in_fio() {
    let d = tmp("net-tcp");
    example(&d, &netio(free_port()), "netio.fio");
    let (h, f) = both(&d, "netio.fio");
    assert_eq!(h.code, 0, "{}\n{}", h.out, h.err);
    assert!(h.err.contains("fio: waiting for connection"), "{}", h.err);
    let hv = doc(&h.out);
    let hj = jobs(&hv);
    let size = 8 << 20;
    assert_eq!(hj[0], ("receiver".into(), 0, size, size / 4096, 0, 0));
    assert_eq!(hj[1], ("sender".into(), 0, 0, 0, size, size / 4096));
    if let Some(f) = f {
        assert_eq!(f.code, 0, "{}", f.err);
        assert!(f.out.contains("fio: waiting for connection"));
        let fv = doc(&f.out);
        let fj = jobs(&fv);
        // The senders alike. fio's receiver counts a short read as an I/O of its own and
        // stops once its reads were issued for `size` bytes, short or not: it reports up to
        // `size` (8263203 bytes in 2064 reads in one run), hostbench's waits for whole
        // messages and reports all of them.
        assert_eq!((fj[1].4, fj[1].5), (hj[1].4, hj[1].5));
        assert!(fj[0].2 <= hj[0].2 && fj[0].3 >= hj[0].3, "{fj:?}");
        assert_eq!(key_set(&hv), key_set(&fv));
    }
}

#[test]
fn a_unix_socket_receiver_and_sender_as_in_fio() {
    let d = tmp("net-unix");
    let sock = d.join("fio.sock");
    let job = format!(
        "[global]\nioengine=net\nprotocol=unix\nfilename={}\nbs=4k\nsize=2m\n\n\
         [receiver]\nrw=read\n\n[sender]\nstartdelay=1\nrw=write\n",
        s(&sock)
    );
    example(&d, &job, "unix.fio");
    let h = hb(&d, &["unix.fio", "--output-format=json"]);
    assert_eq!(h.code, 0, "{}\n{}", h.out, h.err);
    let hj = jobs(&doc(&h.out));
    assert_eq!(hj[0], ("receiver".into(), 0, 2 << 20, 512, 0, 0));
    assert_eq!(hj[1], ("sender".into(), 0, 0, 0, 2 << 20, 512));
    assert!(
        std::fs::symlink_metadata(&sock).is_err(),
        "the socket file hostbench made is removed"
    );
    // A path that is there already is never removed: refused, and left as it was.
    std::fs::write(&sock, "mine").unwrap();
    let h = hb(&d, &["unix.fio"]);
    assert_ne!(h.code, 0);
    assert!(
        h.err.contains("does not remove a file it did not create"),
        "{}",
        h.err
    );
    assert_eq!(std::fs::read_to_string(&sock).unwrap(), "mine");
    std::fs::remove_file(&sock).unwrap();
    if need_fio("fio_net") {
        let f = fio(&d, &["unix.fio", "--output-format=json"]);
        let fj = jobs(&doc(&f.out));
        // fio sends its UDP close message down the stream too (EISCONN: the receiver's
        // err=106); the bytes are the same.
        assert_eq!((fj[0].2, fj[1].4), (hj[0].2, hj[1].4));
    }
}

#[test]
fn udp_receiver_ends_with_the_senders_close_message() {
    let d = tmp("net-udp");
    let job = format!(
        "[global]\nioengine=net\nprotocol=udp\nport={}\nbs=1k\nsize=256k\n\n\
         [receiver]\nrw=read\nruntime=30\n\n[sender]\nhostname=127.0.0.1\nstartdelay=1\nrw=write\nrate=1m\n",
        free_port()
    );
    example(&d, &job, "udp.fio");
    let (h, f) = both(&d, "udp.fio");
    assert_eq!(h.code, 0, "{}\n{}", h.out, h.err);
    let hj = jobs(&doc(&h.out));
    // The sender sends all (paced: fio's receiver, which sees the close message once and
    // cannot time out in its receive, waits for ever when the message is lost in a burst);
    // UDP may lose some on the way, never add.
    assert_eq!(hj[1].4, 256 << 10);
    assert_eq!(hj[1].5, 256);
    assert!(hj[0].2 > 0 && hj[0].2 <= hj[1].4, "{hj:?}");
    assert_eq!(hj[0].2, hj[0].3 * 1024, "whole messages: {hj:?}");
    if let Some(f) = f {
        assert_eq!(f.code, 0, "{}", f.err);
        let fj = jobs(&doc(&f.out));
        assert_eq!((fj[1].4, fj[1].5), (hj[1].4, hj[1].5));
    }
}

#[test]
fn netio_multicast_example_runs_as_in_fio() {
    let d = tmp("net-mcast");
    // fio's example at 64 KiB, its port free, on the loopback interface.
    let job = format!(
        "[global]\nioengine=net\nprotocol=udp\nbs=64\nsize=64k\ninterface=127.0.0.1\n\
         port={}\nhostname=239.0.0.0\nttl=1\n\n\
         [pingpong_reader]\npingpong=1\nrw=read\n\n[normal_reader]\nrw=read\n\n\
         [pingpong_writer]\nstartdelay=1\npingpong=1\nrw=write\n",
        free_port()
    );
    example(&d, &job, "mcast.fio");
    let (h, f) = both(&d, "mcast.fio");
    assert_eq!(h.code, 0, "{}\n{}", h.out, h.err);
    let hj = jobs(&doc(&h.out));
    // Each answer is awaited: nothing is lost on the loopback.
    assert_eq!(hj[0], ("pingpong_reader".into(), 0, 65536, 1024, 0, 0));
    assert_eq!(hj[1], ("normal_reader".into(), 0, 65536, 1024, 0, 0));
    assert_eq!(hj[2], ("pingpong_writer".into(), 0, 0, 0, 65536, 1024));
    if let Some(f) = f {
        assert_eq!(f.code, 0, "{}", f.err);
        let fj = jobs(&doc(&f.out));
        assert_eq!(fj[..2], hj[..2]);
        // fio's pingpong writer reports 1023 of its 1024 round trips in some runs (65472
        // bytes), all 1024 in others; the readers' counts show all 1024 went out.
        assert_eq!(fj[2].0, hj[2].0);
        assert!(fj[2].5 == 1024 || fj[2].5 == 1023, "{fj:?}");
        assert_eq!(fj[2].4, fj[2].5 * 64);
    }
}

#[test]
fn what_fio_refuses_and_what_hostbench_does_not_do() {
    let d = tmp("net-refuse");
    let p = free_port();
    for (opts, says) in [
        ("protocol=udp\nlisten\nrw=read", "listen is only valid"),
        ("protocol=tcp\nlisten\nrw=randread", "can't be random"),
        ("protocol=tcp\nrw=write", "needs hostname="),
        ("protocol=unix\nrw=write\nhostname=/x", "port is not valid"),
        ("protocol=udp\nhostname=127.0.0.1\nrw=rw", "not both"),
        (
            "protocol=sctp\nrw=write",
            "expected tcp, tcpv6, udp, udpv6 or unix",
        ),
    ] {
        let job = format!("[j]\nioengine=net\nport={p}\nsize=1m\n{opts}\n");
        example(&d, &job, "bad.fio");
        let h = hb(&d, &["bad.fio"]);
        assert_eq!(h.code, 2, "{opts}: {}\n{}", h.out, h.err);
        assert!(h.err.contains(says), "{opts}: {}", h.err);
    }
    example(&d, "[j]\nioengine=netsplice\nport=1\nsize=1m\n", "ns.fio");
    let h = hb(&d, &["ns.fio"]);
    assert_eq!(h.code, 2);
    assert!(h.err.contains("netsplice is not supported"), "{}", h.err);
}

#[test]
fn a_listener_nobody_connects_to_ends_with_its_runtime_and_on_ctrl_c() {
    let d = tmp("net-alone");
    let job = format!(
        "[receiver]\nioengine=net\nport={}\nhostname=127.0.0.1\nlisten\nrw=read\nsize=1m\n\
         runtime=1\n",
        free_port()
    );
    example(&d, &job, "alone.fio");
    let h = hb(&d, &["alone.fio", "--output-format=json"]);
    assert_eq!(h.code, 0, "{}\n{}", h.out, h.err);
    assert!(h.took < Duration::from_secs(10), "{:?}", h.took);
    assert_eq!(jobs(&doc(&h.out))[0].2, 0);
    // No runtime: only Ctrl-C ends it.
    let job = format!(
        "[receiver]\nioengine=net\nport={}\nhostname=127.0.0.1\nlisten\nrw=read\nsize=1m\n",
        free_port()
    );
    example(&d, &job, "wait.fio");
    let mut c = common::hb_std()
        .current_dir(&d)
        .args(["fio", "wait.fio", "--no-save"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(c.id() as i32, libc::SIGINT) };
    let t = Instant::now();
    loop {
        if let Some(st) = c.try_wait().unwrap() {
            assert_eq!(st.code(), Some(130));
            break;
        }
        if t.elapsed() > Duration::from_secs(10) {
            let _ = c.kill();
            panic!("the listener did not stop on SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
