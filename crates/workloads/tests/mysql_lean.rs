//! The lean MariaDB/MySQL client against the real server (`HOSTBENCH_TEST_MYSQL_URL`; unset
//! = a printed skip, set = must pass) and against a fake server in this process that speaks
//! just enough of the handshake to test authentication.
//!
//! This binary counts heap allocations made by the thread that asks for it (a counting
//! global allocator), to prove that executions allocate nothing in steady state.

#![cfg(feature = "mysql")]

use hostbench_workloads::db::driver::{Arg, Conn, ErrClass, Res, Target};
use hostbench_workloads::db::mysql_lean::{LeanConn, caching_sha2, read_packet};
use std::io::Write;
use std::net::TcpListener;

mod alloc_count;
use alloc_count::allocations;

fn mysql_url() -> Option<String> {
    match std::env::var("HOSTBENCH_TEST_MYSQL_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            eprintln!("skipped: HOSTBENCH_TEST_MYSQL_URL is not set (see .ci/run)");
            None
        }
    }
}

#[test]
fn oltp_statements_allocate_nothing_in_steady_state() {
    let Some(url) = mysql_url() else { return };
    let t = Target::from_url(&url).unwrap();
    let mut c = LeanConn::open(&t).expect("connect");
    if c.server_version().contains("MariaDB") {
        assert!(c.caches_metadata(), "{}", c.server_version());
    }
    let tbl = "hbt_lean_alloc";
    c.query(&format!("DROP TABLE IF EXISTS {tbl}")).unwrap();
    c.query(&format!(
        "CREATE TABLE {tbl} (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))"
    ))
    .unwrap();
    let mut ins = String::from("INSERT INTO ");
    ins.push_str(tbl);
    ins.push_str(" (k, c, pad) VALUES ");
    for i in 1..=100 {
        if i > 1 {
            ins.push(',');
        }
        ins.push_str(&format!("({i}, '{:0>119}', '{:0>59}')", i, i));
    }
    assert_eq!(c.query(&ins).unwrap(), Res::Affected(100));
    let point = c
        .prepare(&format!("SELECT c FROM {tbl} WHERE id=?"))
        .unwrap();
    let range = c
        .prepare(&format!("SELECT c FROM {tbl} WHERE id BETWEEN ? AND ?"))
        .unwrap();
    let sum = c
        .prepare(&format!(
            "SELECT SUM(k) FROM {tbl} WHERE id BETWEEN ? AND ?"
        ))
        .unwrap();
    let order = c
        .prepare(&format!(
            "SELECT DISTINCT c FROM {tbl} WHERE id BETWEEN ? AND ? ORDER BY c"
        ))
        .unwrap();
    let upd = c
        .prepare(&format!("UPDATE {tbl} SET c=? WHERE id=?"))
        .unwrap();
    let del = c.prepare(&format!("DELETE FROM {tbl} WHERE id=?")).unwrap();
    let insert = c
        .prepare(&format!(
            "INSERT INTO {tbl} (id, k, c, pad) VALUES (?, ?, ?, ?)"
        ))
        .unwrap();
    let cval = "1".repeat(119);
    let pad = "2".repeat(59);
    let round = |c: &mut LeanConn, i: i32| -> Vec<Res> {
        let id = i % 100 + 1;
        let mut out = [Res::Affected(0); 9];
        out[0] = c.query("BEGIN").unwrap();
        out[1] = c.exec(point, &[Arg::Int(id)]).unwrap();
        out[2] = c.exec(range, &[Arg::Int(1), Arg::Int(10)]).unwrap();
        out[3] = c.exec(sum, &[Arg::Int(1), Arg::Int(10)]).unwrap();
        out[4] = c.exec(order, &[Arg::Int(1), Arg::Int(10)]).unwrap();
        out[5] = c.exec(upd, &[Arg::Text(&cval), Arg::Int(id)]).unwrap();
        out[6] = c.exec(del, &[Arg::Int(id)]).unwrap();
        out[7] = c
            .exec(
                insert,
                &[Arg::Int(id), Arg::Int(i), Arg::Text(&cval), Arg::Text(&pad)],
            )
            .unwrap();
        out[8] = c.query("COMMIT").unwrap();
        out.to_vec()
    };
    // Warm-up: buffers grow to their working size, parameter types are sent.
    let first = round(&mut c, 0);
    assert_eq!(
        first,
        vec![
            Res::Affected(0),
            Res::Rows(1),
            Res::Rows(10),
            Res::Rows(1),
            Res::Rows(10),
            Res::Affected(1),
            Res::Affected(1),
            Res::Affected(1),
            Res::Affected(0)
        ]
    );
    for i in 1..20 {
        round(&mut c, i);
    }
    const N: i32 = 500;
    let (n, ()) = allocations(|| {
        for i in 0..N {
            let id = i % 100 + 1;
            assert!(matches!(c.query("BEGIN"), Ok(Res::Affected(0))));
            assert!(matches!(c.exec(point, &[Arg::Int(id)]), Ok(Res::Rows(1))));
            assert!(matches!(
                c.exec(range, &[Arg::Int(1), Arg::Int(10)]),
                Ok(Res::Rows(10))
            ));
            assert!(matches!(
                c.exec(sum, &[Arg::Int(1), Arg::Int(10)]),
                Ok(Res::Rows(1))
            ));
            assert!(matches!(
                c.exec(order, &[Arg::Int(1), Arg::Int(10)]),
                Ok(Res::Rows(_))
            ));
            assert!(c.exec(upd, &[Arg::Text(&cval), Arg::Int(id)]).is_ok());
            assert!(matches!(c.exec(del, &[Arg::Int(id)]), Ok(Res::Affected(1))));
            assert!(matches!(
                c.exec(
                    insert,
                    &[Arg::Int(id), Arg::Int(i), Arg::Text(&cval), Arg::Text(&pad)]
                ),
                Ok(Res::Affected(1))
            ));
            assert!(matches!(c.query("COMMIT"), Ok(Res::Affected(0))));
        }
    });
    // The counter works: a connection allocates.
    let (opened, c2) = allocations(|| LeanConn::open(&t));
    drop(c2);
    assert!(opened > 0, "the counting allocator counts nothing");
    assert_eq!(
        n, 0,
        "{n} allocations in {N} transactions (9 statements each) of steady state"
    );
    // Duplicate key: 1062, not retryable by default (ignorable when listed).
    let e = c
        .exec(
            insert,
            &[Arg::Int(1), Arg::Int(1), Arg::Text(&cval), Arg::Text(&pad)],
        )
        .unwrap_err();
    assert_eq!((e.code.as_str(), e.class), ("1062", ErrClass::Other), "{e}");
    // The connection is still usable after a server error.
    assert_eq!(c.exec(point, &[Arg::Int(2)]).unwrap(), Res::Rows(1));
    c.query(&format!("DROP TABLE {tbl}")).unwrap();
}

/// A fake server: sends a greeting naming `plugin` with `scramble`, reads the handshake
/// response, then answers with `replies` (payloads, in order; `None` = read a packet from
/// the client) and returns what the client sent as its auth response.
fn fake_server(
    plugin: &'static str,
    scramble: &'static [u8; 20],
    replies: Vec<Option<Vec<u8>>>,
) -> (u16, std::thread::JoinHandle<Vec<u8>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        serve(s, plugin, scramble, replies)
    });
    (port, h)
}

/// [`fake_server`]'s conversation on one accepted connection.
fn serve<S: std::io::Read + Write>(
    mut s: S,
    plugin: &'static str,
    scramble: &'static [u8; 20],
    replies: Vec<Option<Vec<u8>>>,
) -> Vec<u8> {
    {
        let mut g = vec![10u8];
        g.extend_from_slice(b"8.0.99-fake\0");
        g.extend_from_slice(&1u32.to_le_bytes());
        g.extend_from_slice(&scramble[..8]);
        g.push(0);
        let caps: u32 = 1 | 8 | 512 | 8192 | 32768 | (1 << 19) | (1 << 24);
        g.extend_from_slice(&(caps as u16).to_le_bytes());
        g.push(45);
        g.extend_from_slice(&2u16.to_le_bytes());
        g.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        g.push(21);
        g.extend_from_slice(&[0; 10]);
        g.extend_from_slice(&scramble[8..]);
        g.push(0);
        g.extend_from_slice(plugin.as_bytes());
        g.push(0);
        let mut seq = 0u8;
        let send = |s: &mut S, seq: &mut u8, p: &[u8]| {
            let mut w = (p.len() as u32).to_le_bytes()[..3].to_vec();
            w.push(*seq);
            *seq = seq.wrapping_add(1);
            w.extend_from_slice(p);
            s.write_all(&w).unwrap();
        };
        send(&mut s, &mut seq, &g);
        let mut resp = Vec::new();
        read_packet(&mut s, &mut seq, &mut resp).unwrap();
        // caps(4) max(4) charset(1) filler(23) user\0 len auth
        let mut at = 32;
        while resp[at] != 0 {
            at += 1;
        }
        at += 1;
        let n = resp[at] as usize;
        let auth = resp[at + 1..at + 1 + n].to_vec();
        for r in replies {
            match r {
                Some(r) => send(&mut s, &mut seq, &r),
                None => read_packet(&mut s, &mut seq, &mut Vec::new()).unwrap(),
            }
        }
        // Wait for the client to hang up.
        let _ = read_packet(&mut s, &mut 0, &mut resp);
        auth
    }
}

fn target(port: u16, password: &str) -> Target {
    Target::from_url(&format!("mysql://bob:{password}@127.0.0.1:{port}/test")).unwrap()
}

const SCRAMBLE: &[u8; 20] = b"0123456789abcdefghij";
const OK: &[u8] = &[0, 0, 0, 2, 0, 0, 0];

#[test]
fn caching_sha2_fast_auth_against_a_fake_server() {
    let (port, h) = fake_server(
        "caching_sha2_password",
        SCRAMBLE,
        vec![Some(vec![1, 3]), Some(OK.to_vec())],
    );
    let mut c = LeanConn::open(&target(port, "s3cret")).expect("fast auth");
    assert_eq!(c.server_version(), "MySQL/MariaDB 8.0.99-fake");
    drop(c);
    let auth = h.join().unwrap();
    // What the server checks: XOR with SHA256(SHA256(SHA256(pw)) + scramble) gives SHA256(pw).
    assert_eq!(auth, caching_sha2("s3cret", SCRAMBLE));
    assert_eq!(auth.len(), 32);
    use sha2::{Digest, Sha256};
    let stored = Sha256::digest(Sha256::digest(b"s3cret"));
    let mut h = Sha256::new();
    h.update(stored);
    h.update(SCRAMBLE);
    let x = h.finalize();
    let pw1: Vec<u8> = auth.iter().zip(x.iter()).map(|(a, b)| a ^ b).collect();
    assert_eq!(Sha256::digest(&pw1).as_slice(), stored.as_slice());
}

#[test]
fn caching_sha2_full_auth_is_refused_clearly() {
    let (port, h) = fake_server("caching_sha2_password", SCRAMBLE, vec![Some(vec![1, 4])]);
    let e = match LeanConn::open(&target(port, "s3cret")) {
        Ok(_) => panic!("full authentication must be refused"),
        Err(e) => e,
    };
    drop(h);
    let m = e.to_string();
    assert!(m.contains("full authentication"), "{m}");
    assert!(m.contains("mysql_native_password"), "{m}");
    assert!(m.contains("--mysql-client=crate"), "{m}");
    assert!(!m.contains("s3cret"), "{m}");
    assert_eq!(e.class, ErrClass::Other);
}

#[test]
fn auth_switch_to_native_password_and_server_errors() {
    // The server greets with caching_sha2 and switches us to mysql_native_password.
    let mut switch = vec![0xFE];
    switch.extend_from_slice(b"mysql_native_password\0");
    switch.extend_from_slice(b"ABCDEFGHIJKLMNOPQRST\0");
    let mut denied = vec![0xFF];
    denied.extend_from_slice(&1045u16.to_le_bytes());
    denied
        .extend_from_slice(b"#28000Access denied for user 'bob'@'localhost' (using password: YES)");
    let (port, h) = fake_server(
        "caching_sha2_password",
        SCRAMBLE,
        vec![Some(switch), None, Some(denied)],
    );
    let e = match LeanConn::open(&target(port, "s3cret")) {
        Ok(_) => panic!("access denied expected"),
        Err(e) => e,
    };
    drop(h);
    assert_eq!(e.code, "1045");
    assert!(e.message.contains("Access denied"), "{e}");
    assert!(!e.to_string().contains("s3cret"));
    // An unknown plugin in a switch is a clear refusal.
    let mut switch = vec![0xFE];
    switch.extend_from_slice(b"client_ed25519\0abc\0");
    let (port, h) = fake_server("mysql_native_password", SCRAMBLE, vec![Some(switch)]);
    let e = match LeanConn::open(&target(port, "pw")) {
        Ok(_) => panic!("unknown plugin must be refused"),
        Err(e) => e,
    };
    drop(h);
    assert!(e.message.contains("client_ed25519"), "{e}");
    assert!(e.message.contains("--mysql-client=crate"), "{e}");
}

#[test]
fn native_password_over_a_unix_socket() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("lean-socket");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fake.sock");
    let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let h = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        serve(
            s,
            "mysql_native_password",
            SCRAMBLE,
            vec![Some(OK.to_vec())],
        )
    });
    let t = Target::from_url(&format!(
        "mysql://bob:pw@localhost/test?socket={}",
        path.display()
    ))
    .unwrap();
    let c = LeanConn::open(&t).expect("login over the socket");
    drop(c);
    let auth = h.join().unwrap();
    assert_eq!(
        auth,
        hostbench_workloads::db::mysql_lean::native_password("pw", SCRAMBLE)
    );
    assert_eq!(auth.len(), 20);
    let _ = std::fs::remove_dir_all(&dir);
}
