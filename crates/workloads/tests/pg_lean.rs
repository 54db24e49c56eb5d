//! The lean PostgreSQL client against the real server (`HOSTBENCH_TEST_PG_URL`; unset = a
//! printed skip, set = must pass) and against a fake server in this process that speaks
//! just enough of the startup to test authentication.
//!
//! This binary counts heap allocations made by the thread that asks for it (a counting
//! global allocator), to prove that executions allocate nothing in steady state.

#![cfg(feature = "postgres")]

use hostbench_workloads::db::driver::{Arg, Conn, ErrClass, Res, Target};
use hostbench_workloads::db::pg_lean::PgLeanConn;
use std::io::{Read, Write};
use std::net::TcpListener;

mod alloc_count;
use alloc_count::allocations;

fn pg_url() -> Option<String> {
    match std::env::var("HOSTBENCH_TEST_PG_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            eprintln!("skipped: HOSTBENCH_TEST_PG_URL is not set (see .ci/run)");
            None
        }
    }
}

/// `url` with `sslmode=disable`.
fn plain(url: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}sslmode=disable")
}

#[test]
fn oltp_statements_allocate_nothing_in_steady_state() {
    let Some(url) = pg_url() else { return };
    // Plaintext: rustls allocates a buffer per TLS record it writes, so the promise is the
    // plaintext path's (docs/db.md says so).
    let t = Target::from_url(&plain(&url)).unwrap();
    let mut c = PgLeanConn::open(&t).expect("connect");
    assert!(
        c.server_version().starts_with("PostgreSQL "),
        "{}",
        c.server_version()
    );
    let tbl = "hbt_pglean_alloc";
    c.query(&format!("DROP TABLE IF EXISTS {tbl}")).unwrap();
    c.query(&format!(
        "CREATE TABLE {tbl} (id SERIAL, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, b BIGINT, s SMALLINT, n NUMERIC, PRIMARY KEY (id))"
    ))
    .unwrap();
    let mut ins = format!("INSERT INTO {tbl} (id, k, c, pad) VALUES ");
    for i in 1..=100 {
        if i > 1 {
            ins.push(',');
        }
        ins.push_str(&format!("({i}, {i}, '{:0>119}', '{:0>59}')", i, i));
    }
    assert_eq!(c.query(&ins).unwrap(), Res::Affected(100));
    // A statement the server rejects leaves the connection ready for the next one.
    let e = c
        .prepare("SELECT c FROM hbt_no_such_table WHERE id=?")
        .unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.class),
        ("42P01", ErrClass::Other),
        "{e}"
    );
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
        .prepare(&format!("UPDATE {tbl} SET k=k+1 WHERE id=?"))
        .unwrap();
    let upd_c = c
        .prepare(&format!("UPDATE {tbl} SET c=? WHERE id=?"))
        .unwrap();
    let del = c.prepare(&format!("DELETE FROM {tbl} WHERE id=?")).unwrap();
    let insert = c
        .prepare(&format!(
            "INSERT INTO {tbl} (id, k, c, pad) VALUES (?, ?, ?, ?)"
        ))
        .unwrap();
    // Integers bound to BIGINT, SMALLINT and NUMERIC parameters (binary for the first two,
    // text for the last) land as the same numbers.
    let typed = c
        .prepare(&format!("UPDATE {tbl} SET b=?, s=?, n=? WHERE id=?"))
        .unwrap();
    assert_eq!(
        c.exec(
            typed,
            &[Arg::Int(-7), Arg::Int(300), Arg::Int(-123456), Arg::Int(5)]
        )
        .unwrap(),
        Res::Affected(1)
    );
    let check = c
        .prepare(&format!(
            "SELECT id FROM {tbl} WHERE b=-7 AND s=300 AND n=-123456 AND id=?"
        ))
        .unwrap();
    assert_eq!(c.exec(check, &[Arg::Int(5)]).unwrap(), Res::Rows(1));
    // A value that does not fit a SMALLINT is the server's range error, not a truncation.
    let e = c
        .exec(
            typed,
            &[Arg::Int(1), Arg::Int(70000), Arg::Int(0), Arg::Int(5)],
        )
        .unwrap_err();
    assert_eq!(e.code, "22003", "{e}");
    let cval = "1".repeat(119);
    let pad = "2".repeat(59);
    let round = |c: &mut PgLeanConn, i: i32| -> Vec<Res> {
        let id = i % 100 + 1;
        vec![
            c.query("BEGIN").unwrap(),
            c.exec(point, &[Arg::Int(id)]).unwrap(),
            c.exec(range, &[Arg::Int(1), Arg::Int(10)]).unwrap(),
            c.exec(sum, &[Arg::Int(1), Arg::Int(10)]).unwrap(),
            c.exec(order, &[Arg::Int(1), Arg::Int(10)]).unwrap(),
            c.exec(upd, &[Arg::Int(id)]).unwrap(),
            c.exec(upd_c, &[Arg::Text(&cval), Arg::Int(id)]).unwrap(),
            c.exec(del, &[Arg::Int(id)]).unwrap(),
            c.exec(
                insert,
                &[Arg::Int(id), Arg::Int(i), Arg::Text(&cval), Arg::Text(&pad)],
            )
            .unwrap(),
            c.query("COMMIT").unwrap(),
        ]
    };
    // Warm-up: buffers grow to their working size.
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
            assert!(matches!(c.exec(upd, &[Arg::Int(id)]), Ok(Res::Affected(1))));
            assert!(c.exec(upd_c, &[Arg::Text(&cval), Arg::Int(id)]).is_ok());
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
    let (opened, c2) = allocations(|| PgLeanConn::open(&t));
    drop(c2);
    assert!(opened > 0, "the counting allocator counts nothing");
    assert_eq!(
        n, 0,
        "{n} allocations in {N} transactions (10 statements each) of steady state"
    );
    // Duplicate key: 23505, retryable as sysbench's pgsql driver treats it.
    let e = c
        .exec(
            insert,
            &[Arg::Int(1), Arg::Int(1), Arg::Text(&cval), Arg::Text(&pad)],
        )
        .unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.class),
        ("23505", ErrClass::Retry),
        "{e}"
    );
    // A bad text query: the SQLSTATE and the server's message.
    let e = c.query("SELECT * FROM hbt_no_such_table").unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.class),
        ("42P01", ErrClass::Other),
        "{e}"
    );
    assert!(e.message.contains("hbt_no_such_table"), "{e}");
    // The connection is still usable after server errors.
    assert_eq!(c.exec(point, &[Arg::Int(2)]).unwrap(), Res::Rows(1));
    // A multi-statement text query counts the rows of its result sets.
    assert_eq!(
        c.query(&format!("SELECT 1; SELECT id FROM {tbl} WHERE id <= 3"))
            .unwrap(),
        Res::Rows(4)
    );
    c.query(&format!("DROP TABLE {tbl}")).unwrap();
}

#[test]
fn a_terminated_backend_is_a_lost_connection() {
    let Some(url) = pg_url() else { return };
    let t = Target::from_url(&url).unwrap();
    let mut c = PgLeanConn::open(&t).expect("connect");
    let mut killer = PgLeanConn::open(&t).expect("connect");
    c.query("SET application_name = 'hbt_pglean_victim'")
        .unwrap();
    assert_eq!(
        killer
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE application_name = 'hbt_pglean_victim'"
            )
            .unwrap(),
        Res::Rows(1)
    );
    let e = c.query("SELECT 1").unwrap_err();
    assert_eq!(e.class, ErrClass::Lost, "{e}");
}

/// One step of a [`fake_server`]'s conversation.
enum Step {
    /// Send a message: type byte and body.
    Send(u8, Vec<u8>),
    /// Read one message; with `Some`, it must be a password message with this body (else
    /// the server answers 28P01 and stops).
    Recv(Option<Vec<u8>>),
}

fn auth(code: u32, rest: &[u8]) -> Step {
    let mut b = code.to_be_bytes().to_vec();
    b.extend_from_slice(rest);
    Step::Send(b'R', b)
}

/// The end of a successful startup: AuthenticationOk, a server_version, ReadyForQuery.
fn welcome() -> Vec<Step> {
    vec![
        auth(0, &[]),
        Step::Send(b'S', b"server_version\09.9fake\0".to_vec()),
        Step::Send(b'Z', b"I".to_vec()),
    ]
}

/// A fake server on a free port: reads the startup message, then plays `script`, then waits
/// for the client to hang up; returns the startup message's body.
fn fake_server(script: Vec<Step>) -> (u16, std::thread::JoinHandle<Vec<u8>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut len = [0u8; 4];
        s.read_exact(&mut len).unwrap();
        let mut startup = vec![0u8; u32::from_be_bytes(len) as usize - 4];
        s.read_exact(&mut startup).unwrap();
        for step in script {
            match step {
                Step::Send(t, body) => {
                    let mut m = vec![t];
                    m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
                    m.extend_from_slice(&body);
                    if s.write_all(&m).is_err() {
                        return startup;
                    }
                }
                Step::Recv(expected) => {
                    let mut h = [0u8; 5];
                    if s.read_exact(&mut h).is_err() {
                        return startup;
                    }
                    let n = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize - 4;
                    let mut body = vec![0u8; n];
                    s.read_exact(&mut body).unwrap();
                    if let Some(want) = expected
                        && (h[0] != b'p' || body != want)
                    {
                        let e = b"SFATAL\0VFATAL\0C28P01\0Mpassword authentication failed for user \"bob\"\0\0";
                        let mut m = vec![b'E'];
                        m.extend_from_slice(&(e.len() as u32 + 4).to_be_bytes());
                        m.extend_from_slice(e);
                        let _ = s.write_all(&m);
                        return startup;
                    }
                }
            }
        }
        // Wait for the client to hang up.
        let _ = s.read(&mut [0u8; 64]);
        startup
    });
    (port, h)
}

fn target(port: u16, password: &str) -> Target {
    // The fake servers speak the startup, not SSLRequest: plaintext (tests/db_tls.rs covers TLS).
    Target::from_url(&format!(
        "postgres://bob:{password}@127.0.0.1:{port}/db1?sslmode=disable"
    ))
    .unwrap()
}

#[test]
fn md5_auth_against_a_fake_server() {
    // "md5" || md5(md5("pw" || "bob") || salt), computed with Python's hashlib.
    let mut script = vec![
        auth(5, &[9, 8, 7, 6]),
        Step::Recv(Some(b"md5dcd7cdea2ec0b6b6b889b738ae52b26e\0".to_vec())),
    ];
    script.extend(welcome());
    let (port, h) = fake_server(script);
    let mut c = PgLeanConn::open(&target(port, "pw")).expect("md5 login");
    assert_eq!(c.server_version(), "PostgreSQL 9.9fake");
    drop(c);
    let startup = h.join().unwrap();
    let s = String::from_utf8_lossy(&startup);
    assert!(
        s.contains("user\0bob\0") && s.contains("database\0db1\0"),
        "{s:?}"
    );
}

#[test]
fn a_wrong_password_is_the_servers_error_and_never_printed() {
    let (port, h) = fake_server(vec![
        auth(5, &[9, 8, 7, 6]),
        Step::Recv(Some(b"md5-not-this\0".to_vec())),
    ]);
    let e = PgLeanConn::open(&target(port, "hunter2"))
        .err()
        .expect("refused");
    assert_eq!(
        (e.code.as_str(), e.class),
        ("28P01", ErrClass::Other),
        "{e}"
    );
    assert!(e.message.contains("password authentication failed"), "{e}");
    assert!(!e.to_string().contains("hunter2"), "{e}");
    h.join().unwrap();
}

#[test]
fn cleartext_auth_sends_the_password() {
    let mut script = vec![auth(3, &[]), Step::Recv(Some(b"s3cret\0".to_vec()))];
    script.extend(welcome());
    let (port, h) = fake_server(script);
    PgLeanConn::open(&target(port, "s3cret")).expect("cleartext login");
    h.join().unwrap();
}

#[test]
fn no_password_and_unknown_methods_are_clear_errors() {
    let (port, h) = fake_server(vec![auth(5, &[1, 2, 3, 4])]);
    let e = PgLeanConn::open(
        &Target::from_url(&format!(
            "postgres://bob@127.0.0.1:{port}/db1?sslmode=disable"
        ))
        .unwrap(),
    )
    .err()
    .expect("refused");
    assert!(e.message.contains("asks for a password (md5)"), "{e}");
    assert!(e.message.contains("--pgsql-password"), "{e}");
    h.join().unwrap();
    // GSSAPI (7): not spoken; the crate client is named.
    let (port, h) = fake_server(vec![auth(7, &[])]);
    let e = PgLeanConn::open(&target(port, "pw"))
        .err()
        .expect("refused");
    assert!(e.message.contains("--pgsql-client=crate"), "{e}");
    h.join().unwrap();
    // SASL without SCRAM-SHA-256.
    let (port, h) = fake_server(vec![auth(10, b"SCRAM-SHA-256-PLUS\0\0")]);
    let e = PgLeanConn::open(&target(port, "pw"))
        .err()
        .expect("refused");
    assert!(
        e.message.contains("SCRAM-SHA-256-PLUS") && e.message.contains("--pgsql-client=crate"),
        "{e}"
    );
    h.join().unwrap();
}

#[test]
fn a_server_that_skips_the_scram_proof_is_refused() {
    // AuthenticationOk right after the client's first SCRAM message: the server never proved
    // it knows the password.
    let mut script = vec![auth(10, b"SCRAM-SHA-256\0\0"), Step::Recv(None)];
    script.extend(welcome());
    let (port, h) = fake_server(script);
    let e = PgLeanConn::open(&target(port, "pw"))
        .err()
        .expect("refused");
    assert!(e.message.contains("without proving"), "{e}");
    h.join().unwrap();
    // The server's final message before its first one.
    let (port, h) = fake_server(vec![
        auth(10, b"SCRAM-SHA-256\0\0"),
        Step::Recv(None),
        auth(12, b"v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="),
    ]);
    let e = PgLeanConn::open(&target(port, "pw"))
        .err()
        .expect("refused");
    assert!(e.message.contains("before the client's"), "{e}");
    h.join().unwrap();
    // Falling back from SCRAM to cleartext, which would hand over the password.
    let (port, h) = fake_server(vec![
        auth(10, b"SCRAM-SHA-256\0\0"),
        Step::Recv(None),
        auth(3, &[]),
    ]);
    let e = PgLeanConn::open(&target(port, "pw"))
        .err()
        .expect("refused");
    assert!(e.message.contains("weaker"), "{e}");
    h.join().unwrap();
}

#[test]
fn a_fatal_error_after_login_is_a_lost_connection_with_the_servers_words() {
    // A FATAL error with a code outside the "lost" list (53300, too many connections at a
    // point the server gives up on the session), then the socket closes.
    let mut script = welcome();
    script.push(Step::Recv(None));
    script.push(Step::Send(
        b'E',
        b"SFATAL\0VFATAL\0C53300\0Msorry, too many clients already\0\0".to_vec(),
    ));
    let (port, h) = fake_server(script);
    let mut c = PgLeanConn::open(&target(port, "pw")).expect("trust login");
    let e = c.query("SELECT 1").unwrap_err();
    assert_eq!(e.class, ErrClass::Lost, "{e}");
    assert!(e.message.contains("too many clients"), "{e}");
    drop(c);
    h.join().unwrap();
}

#[test]
fn a_bogus_length_is_refused_before_anything_is_allocated_for_it() {
    // Not PostgreSQL: an 'E' message that claims 1 GiB.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let p2 = l.local_addr().unwrap().port();
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut buf = [0u8; 256];
        let _ = s.read(&mut buf);
        s.write_all(&[b'E', 0x40, 0, 0, 0]).unwrap();
        let _ = s.read(&mut buf);
    });
    let e = PgLeanConn::open(&target(p2, "pw")).err().expect("refused");
    assert!(e.message.contains("message length"), "{e}");
    t.join().unwrap();
}

#[test]
fn the_crate_client_gives_up_on_a_silent_server_too() {
    // --pgsql-client=crate: the postgres crate bounds only the TCP connect; the login is
    // bounded by hostbench (10 s), as the lean client's.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let _ = s.read(&mut [0u8; 256]);
        std::thread::sleep(std::time::Duration::from_secs(15));
    });
    let t0 = std::time::Instant::now();
    let e = hostbench_workloads::db::pg::PgConn::open(&target(port, "pw"))
        .err()
        .expect("refused");
    let took = t0.elapsed();
    assert!(
        took >= std::time::Duration::from_secs(9) && took < std::time::Duration::from_secs(14),
        "{took:?}: {e}"
    );
    assert_eq!(e.class, ErrClass::Other, "{e}");
    assert!(e.message.contains("no answer to the login"), "{e}");
}

#[test]
fn a_silent_server_and_another_protocol_are_clear_setup_errors() {
    // Accepts and says nothing (a stopped process, a server waiting for its own greeting):
    // the login gives up after 10 s instead of holding the run.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let _ = s.read(&mut [0u8; 256]);
        let _ = s.read(&mut [0u8; 256]);
    });
    let t0 = std::time::Instant::now();
    let e = PgLeanConn::open(&target(port, "pw"))
        .err()
        .expect("refused");
    assert!(t0.elapsed() < std::time::Duration::from_secs(20), "{e}");
    assert_eq!(e.class, ErrClass::Other, "{e}");
    assert!(e.message.contains("no answer to the login"), "{e}");
    t.join().unwrap();
    // A MySQL server's greeting where PostgreSQL's answer was expected.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut g = vec![0x4a, 0, 0, 0, 10];
        g.extend_from_slice(b"10.11.19-MariaDB\0");
        s.write_all(&g).unwrap();
        let _ = s.read(&mut [0u8; 256]);
    });
    let e = PgLeanConn::open(&target(port, "pw"))
        .err()
        .expect("refused");
    assert!(
        e.message.contains("is a PostgreSQL server listening there"),
        "{e}"
    );
    t.join().unwrap();
}
