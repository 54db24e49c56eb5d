//! The lean PostgreSQL client against the real server (`HOSTBENCH_TEST_PG_URL`; unset = a
//! printed skip, set = must pass) and against a fake server in this process that speaks
//! just enough of the startup to test authentication.
//!
//! This binary counts heap allocations made by the thread that asks for it (a counting
//! global allocator), to prove that executions allocate nothing in steady state.

#![cfg(feature = "postgres")]

use hostbench_workloads::db::driver::{Arg, Conn, ErrClass, Res, Target};
use hostbench_workloads::db::pg_lean::PgLeanConn;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
thread_local! {
    static COUNT_HERE: Cell<bool> = const { Cell::new(false) };
}

fn note() {
    if COUNT_HERE.try_with(|c| c.get()).unwrap_or(false) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as ours.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        note();
        // SAFETY: same contract as ours.
        unsafe { System.realloc(p, l, n) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations this thread makes while running `f`.
fn allocations<T>(f: impl FnOnce() -> T) -> (u64, T) {
    ALLOCS.store(0, Ordering::Relaxed);
    COUNT_HERE.with(|c| c.set(true));
    let v = f();
    COUNT_HERE.with(|c| c.set(false));
    (ALLOCS.load(Ordering::Relaxed), v)
}

fn pg_url() -> Option<String> {
    match std::env::var("HOSTBENCH_TEST_PG_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            eprintln!("skipped: HOSTBENCH_TEST_PG_URL is not set (see .ci/run)");
            None
        }
    }
}

#[test]
fn oltp_statements_allocate_nothing_in_steady_state() {
    let Some(url) = pg_url() else { return };
    let t = Target::from_url(&url).unwrap();
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

/// A fake server: reads the startup message, sends `auth` (an Authentication message body)
/// and, unless `answer_expected` is None, reads the client's password message and checks it
/// against that; then AuthenticationOk, a server_version and ReadyForQuery.
fn fake_server(
    auth: Vec<u8>,
    answer_expected: Option<Vec<u8>>,
) -> (u16, std::thread::JoinHandle<Vec<u8>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut len = [0u8; 4];
        s.read_exact(&mut len).unwrap();
        let mut startup = vec![0u8; u32::from_be_bytes(len) as usize - 4];
        s.read_exact(&mut startup).unwrap();
        let msg = |t: u8, body: &[u8]| {
            let mut m = vec![t];
            m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
            m.extend_from_slice(body);
            m
        };
        s.write_all(&msg(b'R', &auth)).unwrap();
        let Some(expected) = answer_expected else {
            // Wait for the client to hang up.
            let _ = s.read(&mut [0u8; 64]);
            return startup;
        };
        let mut h = [0u8; 5];
        s.read_exact(&mut h).unwrap();
        assert_eq!(h[0], b'p');
        let mut answer = vec![0u8; u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize - 4];
        s.read_exact(&mut answer).unwrap();
        if answer != expected {
            s.write_all(&msg(
                b'E',
                b"SFATAL\0C28P01\0Mpassword authentication failed for user \"bob\"\0\0",
            ))
            .unwrap();
            return startup;
        }
        let mut ok = msg(b'R', &0u32.to_be_bytes());
        ok.extend(msg(b'S', b"server_version\09.9fake\0"));
        ok.extend(msg(b'Z', b"I"));
        s.write_all(&ok).unwrap();
        let _ = s.read(&mut [0u8; 64]);
        startup
    });
    (port, h)
}

fn target(port: u16, password: &str) -> Target {
    Target::from_url(&format!("postgres://bob:{password}@127.0.0.1:{port}/db1")).unwrap()
}

#[test]
fn md5_auth_against_a_fake_server() {
    let mut auth = 5u32.to_be_bytes().to_vec();
    auth.extend_from_slice(&[9, 8, 7, 6]);
    // "md5" || md5(md5("pw" || "bob") || salt), computed with Python's hashlib.
    let (port, h) = fake_server(
        auth,
        Some(b"md5dcd7cdea2ec0b6b6b889b738ae52b26e\0".to_vec()),
    );
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
    let mut auth = 5u32.to_be_bytes().to_vec();
    auth.extend_from_slice(&[9, 8, 7, 6]);
    let (port, h) = fake_server(auth, Some(b"md5-not-this\0".to_vec()));
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
    let (port, h) = fake_server(3u32.to_be_bytes().to_vec(), Some(b"s3cret\0".to_vec()));
    PgLeanConn::open(&target(port, "s3cret")).expect("cleartext login");
    h.join().unwrap();
}

#[test]
fn no_password_and_unknown_methods_are_clear_errors() {
    let (port, h) = fake_server(
        5u32.to_be_bytes()
            .iter()
            .chain(&[1, 2, 3, 4])
            .copied()
            .collect(),
        None,
    );
    let e = PgLeanConn::open(
        &Target::from_url(&format!("postgres://bob@127.0.0.1:{port}/db1")).unwrap(),
    )
    .err()
    .expect("refused");
    assert!(e.message.contains("asks for a password (md5)"), "{e}");
    assert!(e.message.contains("--pgsql-password"), "{e}");
    h.join().unwrap();
    // GSSAPI (7): not spoken; the crate client is named.
    let (port, h) = fake_server(7u32.to_be_bytes().to_vec(), None);
    let e = PgLeanConn::open(&target(port, "pw"))
        .err()
        .expect("refused");
    assert!(e.message.contains("--pgsql-client=crate"), "{e}");
    h.join().unwrap();
    // SASL without SCRAM-SHA-256.
    let mut sasl = 10u32.to_be_bytes().to_vec();
    sasl.extend_from_slice(b"SCRAM-SHA-256-PLUS\0\0");
    let (port, h) = fake_server(sasl, None);
    let e = PgLeanConn::open(&target(port, "pw"))
        .err()
        .expect("refused");
    assert!(
        e.message.contains("SCRAM-SHA-256-PLUS") && e.message.contains("--pgsql-client=crate"),
        "{e}"
    );
    h.join().unwrap();
}
