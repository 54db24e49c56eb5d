//! Database workloads through the real binary: sysbench's OLTP family on SQLite (always),
//! PostgreSQL (`HOSTBENCH_TEST_PG_URL`) and MariaDB/MySQL (`HOSTBENCH_TEST_MYSQL_URL`).
//! A server variable that is set must answer (the tests fail otherwise); unset, the server
//! tests print a skip line. Every test uses tables or databases of its own (a table prefix
//! `hbt_<test>_`), so the tests can run in parallel with each other and with the results
//! store's tests. The server-restart tests ([`restart`], `HOSTBENCH_TEST_DB_RESTART`)
//! restart private servers of their own, never the shared ones.

use crate::common::*;
use serde_json::Value;
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

mod insert_race;
mod interop;
mod restart;
mod servers;
mod sqlite;

/// Every OLTP test and the (reads, writes, other) one event makes with default options; `None`
/// where the split depends on the data (oltp_delete: write or other; bulk_insert: one write
/// per flushed statement).
pub(crate) type Mix = Option<(u64, u64, u64)>;

pub(crate) const MIX: &[(&str, Mix)] = &[
    ("oltp_read_write", Some((14, 4, 2))),
    ("oltp_read_only", Some((14, 0, 2))),
    ("oltp_write_only", Some((0, 4, 2))),
    ("oltp_point_select", Some((1, 0, 0))),
    ("oltp_insert", Some((0, 1, 0))),
    ("oltp_update_index", Some((0, 1, 0))),
    ("oltp_update_non_index", Some((0, 1, 0))),
    ("oltp_delete", None),
    ("bulk_insert", None),
    ("select_random_points", Some((1, 0, 0))),
    ("select_random_ranges", Some((1, 0, 0))),
];

fn server(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            eprintln!("skipped: {var} is not set (see .ci/run)");
            None
        }
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("db-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `args` (sysbench grammar) and returns stdout; fails with stderr otherwise.
fn ok(args: &[String]) -> String {
    let out = hb()
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let so = String::from_utf8_lossy(&out.stdout).into_owned();
    let se = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?} failed: {se}\n{so}");
    assert!(!se.contains("panicked"), "{se}");
    so
}

fn args(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn counter(r: &Value, k: &str) -> u64 {
    r["metrics"]["counters"][k].as_u64().unwrap_or(0)
}

/// prepare, run a fixed number of events as JSON (checked against the schema and the
/// reference query mix), cleanup — for every OLTP test on one target.
fn every_test_on(conn: &[String], prefix: &str, threads: &str) {
    for (test, mix) in MIX {
        let mut base = conn.to_vec();
        base.push(format!("--table-prefix={prefix}_"));
        base.push(format!("--threads={threads}"));
        if *test != "bulk_insert" {
            base.push("--table-size=300".into());
        }
        if test.starts_with("oltp") {
            base.push("--tables=2".into());
        }
        let with = |extra: &[&str]| {
            let mut a = vec![test.to_string()];
            a.extend(base.iter().cloned());
            a.extend(extra.iter().map(|s| s.to_string()));
            a
        };
        ok(&with(&["cleanup"]));
        let p = ok(&with(&["prepare"]));
        assert!(p.contains("Creating table '"), "{test}: {p}");
        let out = ok(&with(&[
            "--events=40",
            "--time=0",
            "--format=json",
            "--rand-seed=7",
            "run",
        ]));
        let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{test}: {e}\n{out}"));
        assert_valid(&r, test);
        assert_eq!(r["metrics"]["events"], 40, "{test}");
        let (rd, wr, ot) = (
            counter(&r, "reads"),
            counter(&r, "writes"),
            counter(&r, "other"),
        );
        let errors = counter(&r, "errors");
        // With one thread the split is exact. With two, an UPDATE or DELETE can find its row
        // gone (another thread's delete+insert in flight) and count as "other", and a
        // deadlock retries a transaction (an ignored error; the queries of the failed try
        // are counted too, as sysbench counts them).
        match (test, mix) {
            (_, Some((a, b, c))) if threads == "1" => {
                assert_eq!(errors, 0, "{test}: {r}");
                assert_eq!((rd, wr, ot), (a * 40, b * 40, c * 40), "{test}")
            }
            (_, Some((a, b, c))) if errors == 0 => {
                assert_eq!((rd, wr + ot), (a * 40, (b + c) * 40), "{test}")
            }
            (_, Some((a, b, c))) => {
                assert!(rd >= a * 40 && wr + ot >= (b + c) * 40, "{test}: {r}")
            }
            (&"oltp_delete", None) => assert_eq!((rd, wr + ot), (0, 40), "{test}"),
            _ => assert_eq!((rd, ot), (0, 0), "{test}"),
        }
        assert!(
            r["workload"]["id"].as_str().unwrap().ends_with(test),
            "{test}"
        );
        let c = ok(&with(&["cleanup"]));
        assert!(c.contains("Dropping table '"), "{test}: {c}");
    }
}

/// (user, host, port, db) of a `scheme://user@host:port/db` test URL.
fn url_parts(url: &str) -> (String, String, String, String) {
    let rest = url.split_once("://").unwrap().1;
    let (auth, db) = rest.split_once('/').unwrap();
    let (user, hp) = auth.split_once('@').unwrap();
    let (host, port) = hp.split_once(':').unwrap_or((hp, ""));
    (user.into(), host.into(), port.into(), db.into())
}

fn psql(url: &str, sql: &str) -> String {
    // Plaintext: the servers offer TLS (.ci/run), and a TLS handshake per call would slow
    // the polling loops that must catch a run's statement in flight.
    let out = StdCommand::new("psql")
        .args([url, "-XAtq", "-c", sql])
        .env("PGSSLMODE", "disable")
        .output()
        .expect("psql is installed with the server");
    assert!(
        out.status.success(),
        "psql {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Terminates the run's PostgreSQL backends whose current query is LIKE `pattern`, polling
/// `tries` times `pause_ms` apart until there is one; panics when none shows up.
fn terminate_backends(url: &str, pattern: &str, tries: u32, pause_ms: u64) {
    for _ in 0..tries {
        let n = psql(
            url,
            &format!(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE query LIKE '{pattern}' AND pid <> pg_backend_pid() \
                 AND application_name = 'hostbench'"
            ),
        );
        if n.trim() != "0" {
            return;
        }
        std::thread::sleep(Duration::from_millis(pause_ms));
    }
    panic!("no backend of the run found to terminate");
}

fn mysql_cli(url: &str, sql: &str) -> String {
    // mysql://user@host:port/db → mysql -h host -P port -u user db
    let rest = url.trim_start_matches("mysql://");
    let (auth, hostdb) = rest.split_once('@').unwrap_or(("root", rest));
    let (hostport, db) = hostdb.split_once('/').unwrap_or((hostdb, "test"));
    let (host, port) = hostport.split_once(':').unwrap_or((hostport, "3306"));
    let user = auth.split(':').next().unwrap_or("root");
    // Plaintext (MariaDB's client uses TLS when the server offers it, three times slower
    // per call): the polling loops must catch a run's statement in flight.
    let out = StdCommand::new("mysql")
        .args([
            "--skip-ssl",
            "-h",
            host,
            "-P",
            port,
            "-u",
            user,
            "-N",
            "-B",
            "-e",
            sql,
            db,
        ])
        .output()
        .expect("the mysql client is installed with the server");
    assert!(
        out.status.success(),
        "mysql {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
