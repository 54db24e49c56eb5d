//! Database workloads through the real binary: sysbench's OLTP family on SQLite (always),
//! PostgreSQL (`HOSTBENCH_TEST_PG_URL`) and MariaDB/MySQL (`HOSTBENCH_TEST_MYSQL_URL`).
//! A server variable that is set must answer (the tests fail otherwise); unset, the server
//! tests print a skip line. Every test uses tables or databases of its own (a table prefix
//! `hbt_<test>_`), so the tests can run in parallel with each other and with the results
//! store's tests. The server-restart tests ([`db_restart`], `HOSTBENCH_TEST_DB_RESTART`)
//! restart private servers of their own, never the shared ones.

mod db_restart;

use crate::common::*;
use serde_json::Value;
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

/// Every OLTP test and the (reads, writes, other) one event makes with default options; `None`
/// where the split depends on the data (oltp_delete: write or other; bulk_insert: one write
/// per flushed statement).
type Mix = Option<(u64, u64, u64)>;

const MIX: &[(&str, Mix)] = &[
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

#[test]
fn sqlite_every_oltp_test_prepare_run_cleanup() {
    let d = scratch("sqlite-all");
    let url = format!("--db-url=sqlite:{}", d.join("all.db").display());
    every_test_on(&[url], "hbt_s", "1");
    assert!(
        !d.join("all.db").exists(),
        "cleanup removes the SQLite file it created"
    );
}

#[test]
fn sqlite_is_the_default_and_lua_paths_work() {
    let d = scratch("sqlite-default");
    let run = |a: &[&str]| {
        let out = hb()
            .current_dir(&d)
            .args(a)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{a:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    run(&[
        "/usr/share/sysbench/oltp_read_only.lua",
        "--table-size=200",
        "prepare",
    ]);
    assert!(d.join("sbtest.db").exists(), "default file in the cwd");
    let out = run(&[
        "/usr/share/sysbench/oltp_read_only.lua",
        "--table-size=200",
        "--events=30",
        "--time=0",
        "--percentile=95",
        "run",
    ]);
    assert!(out.contains("SQL statistics:"), "{out}");
    assert!(
        out.contains("        read:                            420\n"),
        "{out}"
    );
    assert!(
        out.contains("        other:                           60\n"),
        "{out}"
    );
    run(&["oltp_read_only", "cleanup"]);
    assert!(!d.join("sbtest.db").exists());
}

#[test]
fn sysbench_sql_layout() {
    let d = scratch("sqlite-layout");
    let url = format!("--db-url=sqlite:{}", d.join("l.db").display());
    let a = |extra: &[&str]| {
        let mut v = vec![
            "oltp_read_write".to_string(),
            url.clone(),
            "--table-size=500".into(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let p = ok(&a(&["prepare"]));
    insta::assert_snapshot!("sqlite_prepare", redact(&p));
    let out = ok(&a(&[
        "--events=50",
        "--time=0",
        "--report-interval=1",
        "run",
    ]));
    assert_sysbench_columns(&out);
    // sysbench's SQL block: counts at column 41, "(x per sec.)" after a 6-wide count.
    for l in out.lines().filter(|l| {
        l.starts_with("    transactions:")
            || l.starts_with("    queries:")
            || l.starts_with("    ignored")
    }) {
        assert_eq!(l.find(|c: char| c.is_ascii_digit()), Some(41), "{l:?}");
        assert!(l.ends_with(" per sec.)"), "{l:?}");
    }
    insta::assert_snapshot!("sqlite_oltp_read_write", redact(&out));
    ok(&a(&["cleanup"]));
}

#[test]
fn sql_interval_lines() {
    let d = scratch("sqlite-interval");
    let url = format!("--db-url=sqlite:{}", d.join("i.db").display());
    let a = |extra: &[&str]| {
        let mut v = args(&["oltp_point_select", &url, "--table-size=200"]);
        v.extend(args(extra));
        v
    };
    ok(&a(&["prepare"]));
    let out = ok(&a(&["--time=1.6", "--report-interval=0.5", "run"]));
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("[ ")).collect();
    assert!(lines.len() >= 2, "{out}");
    for l in &lines {
        // sysbench: [ 1s ] thds: 1 tps: X qps: X (r/w/o: X/X/X) lat (ms,95%): X err/s: X reconn/s: X
        // Whole seconds print as sysbench does ("1s"), fractions keep their digits ("0.5s").
        let r = redact(l).replacen("[ #.#s ]", "[ #s ]", 1);
        assert_eq!(
            r,
            "[ #s ] thds: # tps: #.# qps: #.# (r/w/o: #.#/#.#/#.#) lat (ms,#%): #.# err/s: #.# reconn/s: #.#",
            "{l}"
        );
    }
    ok(&a(&["cleanup"]));
}

#[test]
fn bad_database_input_is_one_clear_line_and_exit_2() {
    let d = scratch("sqlite-bad");
    let missing = format!("--db-url=sqlite:{}", d.join("none.db").display());
    let cases: &[(&[&str], &str)] = &[
        (&["oltp_read_write", "--tables=0", "run"], "--tables"),
        (
            &["oltp_read_write", "--db-driver=oracle", "run"],
            "--db-driver",
        ),
        (
            &["oltp_read_write", "--db-url=oracle://x/y", "run"],
            "unknown kind of URL",
        ),
        (&["oltp_point_select", &missing, "run"], "prepare"),
        (
            &["oltp_read_write", &missing, "prewarm"],
            "prewarm is MySQL only",
        ),
        (
            &["bulk_insert", &missing, "prewarm"],
            "no 'prewarm' command",
        ),
        (
            &["oltp_read_write", "--table-prefix=x;drop", &missing, "run"],
            "--table-prefix",
        ),
        (
            &[
                "oltp_read_write",
                "--db-url=postgres://u:Sekr1tPw@127.0.0.1:1/x",
                "run",
            ],
            "cannot connect to postgres://u:***@127.0.0.1:1/x",
        ),
        (
            &[
                "oltp_read_write",
                "--db-driver=mysql",
                "--mysql-host=127.0.0.1",
                "--mysql-port=1",
                "--mysql-password=Sekr1tPw",
                "prepare",
            ],
            "cannot connect to mysql://sbtest:***@127.0.0.1:1/sbtest",
        ),
    ];
    for (a, needle) in cases {
        let out = hb()
            .current_dir(&d)
            .args(*a)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert!(err.contains(needle), "{a:?}: expected '{needle}' in: {err}");
        assert!(!err.contains("Sekr1tPw"), "{a:?}: password shown: {err}");
        assert!(!err.contains("panicked"), "{a:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{a:?}: one line: {err}");
    }
    assert!(
        !d.join("none.db").exists(),
        "a run does not create a database"
    );
}

/// sysbench's default driver is mysql: `--mysql-*` options without `--db-driver` mean MySQL,
/// `--pgsql-*` options PostgreSQL, never a silent `./sbtest.db`. (Closed ports, so no server
/// is needed: the error must name the right server.)
#[test]
fn connection_options_choose_the_driver() {
    let d = scratch("driver-choice");
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "oltp_point_select",
                "--mysql-host=127.0.0.1",
                "--mysql-port=1",
            ],
            "cannot connect to mysql://sbtest@127.0.0.1:1/sbtest",
        ),
        (
            &[
                "oltp_point_select",
                "--pgsql-host=127.0.0.1",
                "--pgsql-port=1",
            ],
            "cannot connect to postgres://sbtest@127.0.0.1:1/sbtest",
        ),
    ];
    for (a, needle) in cases {
        for stage in ["prepare", "run", "cleanup"] {
            let out = hb()
                .current_dir(&d)
                .args(*a)
                .arg(stage)
                .timeout(Duration::from_secs(30))
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{a:?} {stage}: {err}");
            assert!(err.contains(needle), "{a:?} {stage}: {err}");
            assert!(
                std::fs::read_dir(&d).unwrap().next().is_none(),
                "{a:?} {stage}: a file appeared in the cwd"
            );
        }
    }
}

/// A script path is not a name: a file called oltp_insert.lua that is not sysbench's script
/// is refused (exit 2, nothing created); sysbench 1.0.20's bundled scripts are recognised by
/// their content, Debian's and upstream's (which differ in the `#!` line), whatever their
/// file name.
#[test]
fn lua_scripts_are_recognised_by_content() {
    let d = scratch("lua-content");
    std::fs::write(d.join("oltp_insert.lua"), "print(\"hello\")\n").unwrap();
    let db = d.join("s.db");
    let url = format!("--db-url=sqlite:{}", db.display());
    let run = |a: &[&str]| {
        hb().current_dir(&d)
            .args(a)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap()
    };
    for stage in ["prepare", "run", "help"] {
        let out = run(&["./oltp_insert.lua", "--table-size=10", &url, stage]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stage}: {err}");
        assert!(
            err.contains("'./oltp_insert.lua' is not one of sysbench 1.0.20's bundled scripts"),
            "{stage}: {err}"
        );
        assert!(err.contains("hostbench oltp_insert"), "the fix: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    let out = run(&[
        "./nosuch/oltp_insert.lua",
        "--table-size=10",
        &url,
        "prepare",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot find the script"), "{err}");
    assert!(!db.exists(), "nothing was prepared");

    let debian = std::path::Path::new("/usr/share/sysbench/oltp_point_select.lua");
    let Ok(text) = std::fs::read_to_string(debian) else {
        eprintln!("skipped: {} is not installed", debian.display());
        return;
    };
    let upstream = text.replacen("#!/usr/bin/sysbench", "#!/usr/bin/env sysbench", 1);
    assert_ne!(upstream, text, "Debian's #! line");
    for (name, body) in [("renamed.lua", &text), ("upstream.lua", &upstream)] {
        std::fs::write(d.join(name), body).unwrap();
        let out = run(&[name, "--table-size=10", &url, "prepare"]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = run(&[
            name,
            "--table-size=10",
            &url,
            "--events=5",
            "--time=0",
            "--format=json",
            "run",
        ]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["workload"]["id"], "db.oltp_point_select", "{name}");
        assert_eq!(counter(&r, "reads"), 5, "{name}");
        let out = run(&[name, "--table-size=10", &url, "cleanup"]);
        assert!(out.status.success(), "{name}");
    }
}

/// sysbench 1.0.20's small behaviours: select_random_points/ranges take `--tables > 1`
/// (prepare makes every table, run reads the first; hostbench's cleanup drops them all),
/// bulk_insert takes and ignores `--tables`/`--table-size`, and a prepare with `--threads > 1`
/// says `Initializing worker threads...` as sysbench's parallel prepare does.
#[test]
fn sysbench_small_behaviours() {
    let d = scratch("sqlite-small");
    let db = d.join("s.db");
    let url = format!("--db-url=sqlite:{}", db.display());
    let with = |test: &str, extra: &[&str]| {
        let mut a = args(&[test, &url, "--table-size=50"]);
        a.extend(args(extra));
        a
    };
    for test in ["select_random_points", "select_random_ranges"] {
        let p = ok(&with(test, &["--tables=2", "prepare"]));
        assert!(p.contains("Creating table 'sbtest2'..."), "{p}");
        let out = hb()
            .args(with(test, &["--tables=2", "--events=5", "--time=0", "run"]))
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let se = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{test}: {se}");
        let so = String::from_utf8_lossy(&out.stdout);
        assert!(
            so.contains("        read:                            5\n"),
            "{so}"
        );
        assert!(se.contains("reads only sbtest1"), "{se}");
        let c = ok(&with(test, &["--tables=2", "cleanup"]));
        assert!(c.contains("Dropping table 'sbtest2'..."), "{c}");
        assert!(!db.exists(), "cleanup dropped every table");
    }
    let b = |extra: &[&str]| {
        let mut a = args(&["bulk_insert", &url, "--tables=4", "--table-size=100"]);
        a.extend(args(extra));
        a
    };
    ok(&b(&["prepare"]));
    let out = ok(&b(&["--events=10", "--time=0", "run"]));
    assert!(
        out.contains("total number of events:              10\n"),
        "{out}"
    );
    ok(&b(&["cleanup"]));
    assert!(!db.exists());
    let p = ok(&with(
        "oltp_read_write",
        &["--tables=2", "--threads=2", "prepare"],
    ));
    assert!(
        p.contains("compatible)\n\nInitializing worker threads...\n\nCreating table 'sbtest1'..."),
        "{p}"
    );
    let p = ok(&with(
        "oltp_read_write",
        &["--tables=2", "--threads=2", "cleanup"],
    ));
    assert!(
        !p.contains("Initializing"),
        "cleanup is not a parallel command: {p}"
    );
    let p = ok(&with("oltp_read_write", &["--tables=1", "prepare"]));
    assert!(!p.contains("Initializing"), "one thread: {p}");
    ok(&with("oltp_read_write", &["cleanup"]));
}

/// `prewarm` (MySQL only, as in sysbench): each table analysed and scanned, shared among the
/// threads.
#[test]
fn mysql_prewarm() {
    let Some(url) = server("HOSTBENCH_TEST_MYSQL_URL") else {
        return;
    };
    let a = |extra: &[&str]| {
        let mut v = args(&[
            "oltp_read_only",
            "--tables=2",
            "--table-size=100",
            "--table-prefix=hbt_prewarm_",
            "--threads=2",
        ]);
        v.push(format!("--db-url={url}"));
        v.extend(args(extra));
        v
    };
    ok(&a(&["cleanup"]));
    ok(&a(&["prepare"]));
    let out = ok(&a(&["prewarm"]));
    assert!(
        out.contains("compatible)\n\nInitializing worker threads...\n\n"),
        "{out}"
    );
    for t in ["hbt_prewarm_1", "hbt_prewarm_2"] {
        assert!(out.contains(&format!("Prewarming table {t}\n")), "{out}");
    }
    let out = ok(&a(&["warmup"]));
    assert!(out.contains("Prewarming table hbt_prewarm_1\n"), "{out}");
    ok(&a(&["cleanup"]));
    let out = hb()
        .args(a(&["prewarm"]))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("prepare"), "missing tables: {err}");
}

/// (user, host, port, db) of a `scheme://user@host:port/db` test URL.
fn url_parts(url: &str) -> (String, String, String, String) {
    let rest = url.split_once("://").unwrap().1;
    let (auth, db) = rest.split_once('/').unwrap();
    let (user, hp) = auth.split_once('@').unwrap();
    let (host, port) = hp.split_once(':').unwrap_or((hp, ""));
    (user.into(), host.into(), port.into(), db.into())
}

/// With sysbench's connection options and no `--db-driver`, prepare, run and cleanup talk
/// to the server those options name, and say so on stderr (stdout stays sysbench's).
#[test]
fn sysbench_connection_options_reach_the_servers() {
    for (var, drv, scheme) in [
        ("HOSTBENCH_TEST_MYSQL_URL", "mysql", "mysql"),
        ("HOSTBENCH_TEST_PG_URL", "pgsql", "postgres"),
    ] {
        let Some(url) = server(var) else { continue };
        let (user, host, port, db) = url_parts(&url);
        let d = scratch(&format!("driver-{drv}"));
        let mut base = args(&["oltp_point_select", "--table-size=50"]);
        base.push(format!("--table-prefix=hbt_drv_{drv}_"));
        base.push(format!("--{drv}-host={host}"));
        if !port.is_empty() {
            base.push(format!("--{drv}-port={port}"));
        }
        base.push(format!("--{drv}-user={user}"));
        base.push(format!("--{drv}-db={db}"));
        let stage = |extra: &[&str]| {
            let out = hb()
                .current_dir(&d)
                .args(&base)
                .args(extra)
                .timeout(Duration::from_secs(60))
                .output()
                .unwrap();
            let so = String::from_utf8_lossy(&out.stdout).into_owned();
            let se = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(out.status.success(), "{base:?} {extra:?}: {se}\n{so}");
            (so, se)
        };
        stage(&["cleanup"]);
        let (so, se) = stage(&["prepare"]);
        let named = format!("hostbench: oltp_point_select on {drv}, server {scheme}://{user}@");
        assert!(se.contains(&named), "prepare names the server: {se}");
        assert!(so.starts_with("hostbench "), "{so}");
        assert!(!so.contains("hostbench: "), "stdout stays sysbench's: {so}");
        let (so, se) = stage(&["--events=20", "--time=0", "run"]);
        assert!(se.contains(&named), "run names the server: {se}");
        assert!(
            so.contains("    total number of events:              20\n"),
            "{so}"
        );
        stage(&["cleanup"]);
        assert!(
            std::fs::read_dir(&d).unwrap().next().is_none(),
            "no SQLite file in the cwd"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Servers

/// sysbench-style connection options for a `postgres://user@host:port/db` URL.
fn pg_opts(url: &str) -> Vec<String> {
    vec![format!("--db-url={url}")]
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

#[test]
fn pgsql_every_oltp_test_prepare_run_cleanup() {
    let Some(url) = server("HOSTBENCH_TEST_PG_URL") else {
        return;
    };
    every_test_on(&pg_opts(&url), "hbt_pg", "2");
}

#[test]
fn mysql_every_oltp_test_prepare_run_cleanup() {
    let Some(url) = server("HOSTBENCH_TEST_MYSQL_URL") else {
        return;
    };
    every_test_on(&[format!("--db-url={url}")], "hbt_my", "2");
}

/// The connection is killed from another session mid-run: the run counts the reconnect and
/// the error, and goes on to its time limit.
fn reconnects(conn: Vec<String>, prefix: &str, kill: &dyn Fn()) {
    let with = |extra: &[&str]| {
        let mut a = vec!["oltp_read_only".to_string()];
        a.extend(conn.iter().cloned());
        a.push(format!("--table-prefix={prefix}"));
        a.push("--table-size=200".into());
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    ok(&with(&["cleanup"]));
    ok(&with(&["prepare"]));
    let child = hb_std()
        .args(with(&["--time=4", "--format=json", "run"]))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_millis(500));
    kill();
    let out = child.wait_with_output().unwrap();
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{se}\n{so}");
    let r: Value = serde_json::from_str(&so).unwrap();
    assert_valid(&r, "reconnect run");
    assert!(counter(&r, "reconnects") >= 1, "no reconnect counted: {r}");
    assert!(counter(&r, "errors") >= counter(&r, "reconnects"));
    assert!(
        t0.elapsed() >= Duration::from_millis(3900),
        "ran to its time limit"
    );
    assert!(r["metrics"]["duration_s"].as_f64().unwrap() >= 3.9);
    ok(&with(&["cleanup"]));
}

#[test]
fn pgsql_backend_terminated_mid_run_reconnects() {
    let Some(url) = server("HOSTBENCH_TEST_PG_URL") else {
        return;
    };
    for client in ["lean", "crate"] {
        let prefix = &format!("hbt_pgkill_{client}_");
        let mut conn = pg_opts(&url);
        conn.push(format!("--pgsql-client={client}"));
        // Poll until the run's backend is there (start-up is slow on a loaded machine).
        reconnects(conn, prefix, &|| {
            terminate_backends(&url, &format!("%{prefix}%"), 400, 10)
        });
    }
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

#[test]
fn mysql_connection_killed_mid_run_reconnects() {
    let Some(url) = server("HOSTBENCH_TEST_MYSQL_URL") else {
        return;
    };
    for client in ["lean", "crate"] {
        mysql_kill_mid_run(&url, client);
    }
}

fn mysql_kill_mid_run(url: &str, client: &str) {
    let prefix = format!("hbt_mykill_{client}_");
    let prefix = prefix.as_str();
    // MariaDB's process list shows a connection's statement only while it runs: poll until
    // the run's connection is caught inside one of its (busy) statements on our tables.
    let u = url.to_string();
    let conn = vec![
        format!("--db-url={url}"),
        format!("--mysql-client={client}"),
    ];
    reconnects(conn, prefix, &move || {
        for _ in 0..200 {
            let ids = mysql_cli(
                &u,
                &format!(
                    "SELECT id FROM information_schema.processlist \
                     WHERE info LIKE '%{prefix}%' AND id <> connection_id()"
                ),
            );
            if let Some(id) = ids.split_whitespace().next() {
                mysql_cli(&u, &format!("KILL {id}"));
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("no connection of the run found to kill");
    });
}

/// The lean and the crate client of one server run the same transactions and count the
/// exact same query mix; the client and the driver used are saved with the result.
fn lean_and_crate_clients_count_the_same(url: &str, driver: &str, prefix: &str) {
    let a = |test: &str, extra: &[&str]| {
        let mut v = args(&[
            test,
            &format!("--db-url={url}"),
            &format!("--table-prefix={prefix}"),
            "--tables=2",
            "--table-size=300",
        ]);
        v.extend(args(extra));
        v
    };
    let (flag, param) = if driver == "mysql" {
        ("--mysql-client", "mysql_client")
    } else {
        ("--pgsql-client", "pgsql_client")
    };
    ok(&a("oltp_read_write", &["cleanup"]));
    ok(&a("oltp_read_write", &["prepare"]));
    for (test, events, mix) in [
        ("oltp_read_write", 50u64, (14u64, 4u64, 2u64)),
        ("oltp_point_select", 200, (1, 0, 0)),
        ("oltp_read_only", 30, (14, 0, 2)),
    ] {
        let mut seen = Vec::new();
        for client in ["lean", "crate"] {
            let out = ok(&a(
                test,
                &[
                    &format!("{flag}={client}"),
                    &format!("--events={events}"),
                    "--time=0",
                    "--format=json",
                    // A seed per client: with the same seed, the second run's non-index
                    // UPDATEs would write the c values the first run left, change nothing
                    // and count as "other" on MySQL.
                    if client == "lean" {
                        "--rand-seed=11"
                    } else {
                        "--rand-seed=12"
                    },
                    "run",
                ],
            ));
            let r: Value = serde_json::from_str(&out).unwrap();
            assert_valid(&r, "db client");
            // The client and the driver actually used are recorded (the URL names the
            // driver; db_driver's own default is sqlite).
            assert_eq!(r["workload"]["params"][param], client, "{test}");
            assert_eq!(r["workload"]["params"]["db_driver"], driver, "{test}");
            assert_eq!(counter(&r, "errors"), 0, "{test} {client}: {r}");
            let got = (
                counter(&r, "reads"),
                counter(&r, "writes"),
                counter(&r, "other"),
            );
            assert_eq!(
                got,
                (mix.0 * events, mix.1 * events, mix.2 * events),
                "{test} {client}: the exact query mix per transaction"
            );
            seen.push(got);
        }
        assert_eq!(seen[0], seen[1], "{test}: both clients count the same");
    }
    // A client name that does not exist is a usage error.
    let bad = hb()
        .args(a("oltp_point_select", &[&format!("{flag}=libpq"), "run"]))
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    ok(&a("oltp_read_write", &["cleanup"]));
}

#[test]
fn pgsql_lean_and_crate_clients_count_the_same() {
    let Some(url) = server("HOSTBENCH_TEST_PG_URL") else {
        return;
    };
    lean_and_crate_clients_count_the_same(&url, "pgsql", "hbt_pgclients_");
}

#[test]
fn mysql_lean_and_crate_clients_count_the_same() {
    let Some(url) = server("HOSTBENCH_TEST_MYSQL_URL") else {
        return;
    };
    lean_and_crate_clients_count_the_same(&url, "mysql", "hbt_myclients_");
    ok(&args(&[
        "oltp_read_write",
        &format!("--db-url={url}"),
        "--table-prefix=hbt_myclients_",
        "--tables=2",
        "--table-size=300",
        "prepare",
    ]));
    // Without a URL: the sysbench options with the crate client still name mysql.
    let (host, port) = url
        .trim_start_matches("mysql://")
        .split_once('@')
        .map(|(_, h)| h.split('/').next().unwrap_or(h))
        .and_then(|h| h.split_once(':'))
        .unwrap_or(("127.0.0.1", "3306"));
    let db = url.rsplit('/').next().unwrap_or("test");
    let out = ok(&args(&[
        "oltp_point_select",
        "--db-driver=mysql",
        &format!("--mysql-host={host}"),
        &format!("--mysql-port={port}"),
        "--mysql-user=root",
        &format!("--mysql-db={db}"),
        "--mysql-client=crate",
        "--table-prefix=hbt_myclients_",
        "--tables=2",
        "--table-size=300",
        "--events=20",
        "--time=0",
        "--format=json",
        "run",
    ]));
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["workload"]["params"]["mysql_client"], "crate");
    assert_eq!(counter(&r, "reads"), 20);
    ok(&args(&[
        "oltp_read_write",
        &format!("--db-url={url}"),
        "--table-prefix=hbt_myclients_",
        "--tables=2",
        "cleanup",
    ]));
}

#[test]
fn mysql_duplicate_keys_stop_the_run_unless_ignored() {
    let Some(url) = server("HOSTBENCH_TEST_MYSQL_URL") else {
        return;
    };
    for client in ["lean", "crate"] {
        // With --auto-inc=off, oltp_insert draws its ids from the seed: a second run with the
        // same seed inserts the same ids again.
        let a = |extra: &[&str]| {
            let mut v = args(&[
                "oltp_insert",
                &format!("--db-url={url}"),
                &format!("--mysql-client={client}"),
                "--table-prefix=hbt_mydup_",
                "--tables=1",
                "--auto-inc=off",
            ]);
            v.extend(args(extra));
            v
        };
        let run = ["--events=20", "--time=0", "--rand-seed=5", "--format=json"];
        ok(&a(&["cleanup"]));
        ok(&a(&["prepare"]));
        let first: Value = serde_json::from_str(&ok(&a(&[&run[..], &["run"]].concat()))).unwrap();
        assert_eq!(counter(&first, "writes"), 20, "{client}");
        let out = hb()
            .args(a(&[&run[..], &["run"]].concat()))
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{client}: {err}");
        assert!(err.contains("Duplicate entry"), "{client}: {err}");
        assert!(err.contains("error 1062"), "{client}: {err}");
        assert!(err.contains("--db-ignore-errors"), "{client}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        // Listed, each duplicate is an ignored error and the event goes on with the next id.
        let again: Value =
            serde_json::from_str(&ok(&a(
                &[&run[..], &["--db-ignore-errors=1062", "run"]].concat()
            )))
            .unwrap();
        assert_eq!(counter(&again, "writes"), 20, "{client}");
        assert_eq!(counter(&again, "errors"), 20, "{client}: {again}");
        ok(&a(&["cleanup"]));
    }
}

#[test]
fn wrong_credentials_are_clear_and_hide_the_password() {
    let mut cases: Vec<(Vec<String>, &str)> = Vec::new();
    if let Some(url) = server("HOSTBENCH_TEST_PG_URL") {
        let hostpart = url
            .rsplit_once('@')
            .map(|(_, h)| h)
            .unwrap_or("127.0.0.1/test");
        cases.push((
            args(&[
                "oltp_point_select",
                &format!("--db-url=postgres://no_such_role_hb:Sekr1tPw@{hostpart}"),
                "run",
            ]),
            "no_such_role_hb",
        ));
    }
    if let Some(url) = server("HOSTBENCH_TEST_MYSQL_URL") {
        let hostpart = url
            .rsplit_once('@')
            .map(|(_, h)| h)
            .unwrap_or("127.0.0.1/test");
        for client in ["lean", "crate"] {
            cases.push((
                args(&[
                    "oltp_point_select",
                    &format!("--db-url=mysql://root:Sekr1tPw@{hostpart}"),
                    &format!("--mysql-client={client}"),
                    "run",
                ]),
                "Access denied",
            ));
        }
    }
    for (a, needle) in cases {
        let out = hb()
            .args(&a)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert!(err.contains(needle), "{a:?}: expected {needle}: {err}");
        assert!(err.contains(":***@"), "{a:?}: {err}");
        assert!(!err.contains("Sekr1tPw"), "{a:?}: {err}");
    }
}

#[test]
fn passwords_are_not_saved_with_the_result() {
    let Some(url) = server("HOSTBENCH_TEST_PG_URL") else {
        return;
    };
    // The local server trusts loopback connections, so any password is accepted.
    let with_pw = match url.split_once('@') {
        Some((a, b)) if !a.trim_start_matches("postgres://").contains(':') => {
            format!("{a}:Sekr1tPw@{b}")
        }
        _ => url.clone(),
    };
    let conn = format!("--db-url={with_pw}");
    let base = [
        "oltp_point_select",
        conn.as_str(),
        "--table-prefix=hbt_pw_",
        "--table-size=100",
        "--pgsql-password=Sekr1tPw",
    ];
    let mut a = args(&base);
    a.push("cleanup".into());
    ok(&a);
    a.pop();
    a.push("prepare".into());
    ok(&a);
    a.pop();
    a.extend(args(&["--events=5", "--time=0", "--format=json", "run"]));
    let out = ok(&a);
    assert!(!out.contains("Sekr1tPw"), "{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_valid(&r, "pw run");
    assert_eq!(r["workload"]["params"]["pgsql_password"], "***");
    let (list, _) = run_ok(&[
        "results",
        "show",
        r["id"].as_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(
        !list.contains("Sekr1tPw"),
        "saved result holds the password"
    );
    a.truncate(base.len());
    a.push("cleanup".into());
    ok(&a);
}

/// The same on MariaDB: sysbench's tables run here and ours run in sysbench.
#[test]
fn sysbench_and_hostbench_share_tables_mysql() {
    let Some(url) = server("HOSTBENCH_TEST_MYSQL_URL") else {
        return;
    };
    if StdCommand::new("sysbench")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: sysbench is not installed");
        return;
    }
    mysql_cli(&url, "CREATE DATABASE IF NOT EXISTS hbt_interop");
    let rest = url.trim_start_matches("mysql://");
    let (auth, hostdb) = rest.split_once('@').unwrap_or(("root", rest));
    let hostport = hostdb.split('/').next().unwrap_or("127.0.0.1:3306");
    let (host, port) = hostport.split_once(':').unwrap_or((hostport, "3306"));
    let user = auth.split(':').next().unwrap_or("root");
    let opts = [
        "--db-driver=mysql".to_string(),
        format!("--mysql-host={host}"),
        format!("--mysql-port={port}"),
        format!("--mysql-user={user}"),
        "--mysql-db=hbt_interop".into(),
        "--tables=2".into(),
        "--table-size=500".into(),
        "--events=30".into(),
        "--time=0".into(),
    ];
    let sb = |cmd: &str| {
        let out = StdCommand::new("sysbench")
            .arg("oltp_read_write")
            .args(&opts)
            .arg(cmd)
            .output()
            .unwrap();
        let so = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "sysbench {cmd}: {so}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        so
    };
    let hbx = |cmd: &str| {
        let mut a = vec!["oltp_read_write".to_string()];
        a.extend(opts.iter().cloned());
        a.push(cmd.into());
        ok(&a)
    };
    sb("cleanup");
    sb("prepare");
    let out = hbx("run");
    assert!(
        out.contains("        read:                            420\n"),
        "{out}"
    );
    hbx("cleanup");
    hbx("prepare");
    let out = sb("run");
    assert!(
        out.contains("        read:                            420\n"),
        "{out}"
    );
    sb("cleanup");
}

/// Tables prepared by Debian's sysbench run here, and tables prepared here run in sysbench.
#[test]
fn sysbench_and_hostbench_share_tables() {
    let Some(url) = server("HOSTBENCH_TEST_PG_URL") else {
        return;
    };
    if StdCommand::new("sysbench")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: sysbench is not installed");
        return;
    }
    // sysbench's table names are fixed (sbtest1..N): a database of this test's own.
    let _ = StdCommand::new("psql")
        .args([url.as_str(), "-XAtq", "-c", "CREATE DATABASE hbt_interop"])
        .output();
    let db_url = match url.rsplit_once('/') {
        Some((head, _)) => format!("{head}/hbt_interop"),
        None => panic!("{url}"),
    };
    let hostport = url
        .rsplit_once('@')
        .map(|(_, h)| h.split('/').next().unwrap_or(""))
        .unwrap_or("127.0.0.1:5432");
    let (host, port) = hostport.split_once(':').unwrap_or((hostport, "5432"));
    let user = url
        .trim_start_matches("postgres://")
        .split(['@', ':'])
        .next()
        .unwrap();
    let sb = |cmd: &str| {
        let out = StdCommand::new("sysbench")
            .args([
                "oltp_read_write",
                "--db-driver=pgsql",
                &format!("--pgsql-host={host}"),
                &format!("--pgsql-port={port}"),
                &format!("--pgsql-user={user}"),
                "--pgsql-db=hbt_interop",
                "--tables=2",
                "--table-size=500",
                "--events=30",
                "--time=0",
                cmd,
            ])
            .output()
            .unwrap();
        let so = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "sysbench {cmd}: {so}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        so
    };
    let hbx = |cmd: &str| {
        ok(&args(&[
            "oltp_read_write",
            &format!("--db-url={db_url}"),
            "--tables=2",
            "--table-size=500",
            "--events=30",
            "--time=0",
            cmd,
        ]))
    };
    sb("cleanup");
    sb("prepare");
    let out = hbx("run");
    assert!(
        out.contains("        read:                            420\n"),
        "{out}"
    );
    hbx("cleanup");
    hbx("prepare");
    let out = sb("run");
    assert!(
        out.contains("        read:                            420\n"),
        "{out}"
    );
    assert!(
        out.contains("ignored errors:                      0 "),
        "{out}"
    );
    sb("cleanup");
}

// ---------------------------------------------------------------------------------------
// insert-race

fn insert_race(conn: &str, extra: &[&str]) -> Value {
    let mut a = args(&[
        "insert-race",
        "--sessions",
        "3",
        "--rows",
        "150",
        "--format",
        "json",
        conn,
    ]);
    a.extend(args(extra));
    let out = ok(&a);
    let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{a:?}: {e}\n{out}"));
    assert_valid(&r, "insert-race");
    assert_eq!(r["workload"]["id"], "db.insert_race");
    assert_eq!(r["outcome"]["stop_reason"], "workers_done", "{a:?}");
    assert_eq!(
        r["metrics"]["events"], 450,
        "{a:?}: every session inserts every row"
    );
    assert_eq!(counter(&r, "writes"), 450, "{a:?}");
    let per: Vec<u64> = r["fairness"]["per_thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["events"].as_u64().unwrap())
        .collect();
    assert_eq!(per, vec![150, 150, 150], "{a:?}");
    let figures: Vec<&str> = r["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(figures[0], "makespan_s", "{a:?}");
    r
}

#[test]
fn insert_race_on_sqlite_every_mode() {
    let d = scratch("race-sqlite");
    let url = format!("--db-url=sqlite:{}", d.join("race.db").display());
    let r = insert_race(&url, &["--table-mode", "temp"]);
    assert_eq!(counter(&r, "other"), 0, "autocommit: no BEGIN/COMMIT");
    let r = insert_race(
        &url,
        &["--table-mode", "per-session", "--commit", "batch:50"],
    );
    // 3 batches of 50 per session, each BEGIN + COMMIT.
    assert_eq!(counter(&r, "other"), 3 * 3 * 2);
    let r = insert_race(&url, &["--table-mode", "shared", "--commit", "none"]);
    assert_eq!(counter(&r, "other"), 3 * 2);
    assert!(
        !d.join("race.db").exists(),
        "the run removes the file it created"
    );
    // The report layout.
    let out = ok(&args(&[
        "insert-race",
        "--sessions",
        "2",
        "--rows",
        "100",
        &url,
    ]));
    for needle in [
        "insert-race: 2 session(s) x 100 row(s), table mode temp, commit row",
        "makespan:",
        "rows inserted:            200 ",
        "session   1:        100 rows",
        "session   2:        100 rows",
        "insert latency (ms): min",
        " p99 ",
    ] {
        assert!(out.contains(needle), "{needle:?} missing:\n{out}");
    }
}

#[test]
fn insert_race_on_servers() {
    if let Some(url) = server("HOSTBENCH_TEST_PG_URL") {
        let u = format!("--db-url={url}");
        insert_race(&u, &["--table-mode", "temp"]);
        insert_race(
            &u,
            &[
                "--table-mode",
                "per-session",
                "--commit",
                "batch:10",
                "--values",
                "seq",
            ],
        );
    }
    if let Some(url) = server("HOSTBENCH_TEST_MYSQL_URL") {
        let u = format!("--db-url={url}");
        insert_race(&u, &["--table-mode", "temp", "--engine", "myisam"]);
        insert_race(&u, &["--table-mode", "shared", "--commit", "batch:25"]);
    }
}

/// insert-race with a session's connection killed by `kill` (given the table prefix; it
/// picks a backend whose query is an INSERT: usually one inserting, sometimes one still
/// preparing that INSERT, whose set-up is then retried): the run reconnects and finishes
/// every session's rows.
fn insert_race_survives(url: &str, prefix: &str, extra: &[&str], kill: &dyn Fn(&str)) {
    let mut a = args(&[
        "insert-race",
        "--sessions",
        "2",
        "--rows",
        "4000",
        "--table-mode",
        "per-session",
        "--commit",
        "batch:50",
        "--format",
        "json",
        &format!("--db-url={url}"),
        &format!("--table-prefix={prefix}"),
    ]);
    a.extend(args(extra));
    let child = hb_std()
        .args(&a)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    kill(prefix);
    let out = child.wait_with_output().unwrap();
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{a:?}: {se}\n{so}");
    let r: Value = serde_json::from_str(&so).unwrap();
    assert_valid(&r, "insert-race reconnect");
    assert_eq!(r["outcome"]["stop_reason"], "workers_done");
    let setup_retries = r["workload"]["facts"]["setup_retries"].as_f64().unwrap();
    assert!(
        counter(&r, "reconnects") as f64 + setup_retries >= 1.0,
        "no reconnect counted: {r}"
    );
    assert!(counter(&r, "errors") >= counter(&r, "reconnects"));
    // The rolled-back batch is inserted again: at least every row, each session.
    for t in r["fairness"]["per_thread"].as_array().unwrap() {
        assert!(t["events"].as_u64().unwrap() >= 4000, "{r}");
    }
}

#[test]
fn insert_race_survives_a_lost_connection() {
    if let Some(url) = server("HOSTBENCH_TEST_MYSQL_URL") {
        for client in ["lean", "crate"] {
            let u = url.clone();
            insert_race_survives(
                &url,
                &format!("hbt_racekill_{client}"),
                &["--mysql-client", client],
                &move |prefix| {
                    for _ in 0..1000 {
                        let ids = mysql_cli(
                            &u,
                            &format!(
                                "SELECT id FROM information_schema.processlist \
                                 WHERE info LIKE 'INSERT INTO {prefix}%' AND id <> connection_id()"
                            ),
                        );
                        if let Some(id) = ids.split_whitespace().next() {
                            mysql_cli(&u, &format!("KILL {id}"));
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    panic!("no connection of the run found to kill");
                },
            );
        }
    }
    if let Some(url) = server("HOSTBENCH_TEST_PG_URL") {
        for client in ["lean", "crate"] {
            let u = url.clone();
            insert_race_survives(
                &url,
                &format!("hbt_racekill_pg_{client}"),
                &["--pgsql-client", client],
                &move |prefix| terminate_backends(&u, &format!("INSERT INTO {prefix}%"), 1000, 5),
            );
        }
    }
}

/// A MyISAM temporary table whose connection is killed mid-run: the session reconnects, the
/// rows it held are counted as lost (fact `rows_lost`, a warning, the report), and, since
/// MyISAM has no transactions, nothing is rolled back and no row is inserted twice.
#[test]
fn insert_race_counts_rows_lost_with_a_temporary_table() {
    let Some(url) = server("HOSTBENCH_TEST_MYSQL_URL") else {
        return;
    };
    let prefix = "hbt_racelost";
    let a = args(&[
        "insert-race",
        "--sessions",
        "2",
        "--rows",
        "30000",
        "--table-mode",
        "temp",
        "--engine",
        "myisam",
        "--commit",
        "batch:50",
        "--format",
        "json",
        &format!("--db-url={url}"),
        &format!("--table-prefix={prefix}"),
    ]);
    let child = hb_std()
        .args(&a)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut killed = false;
    for _ in 0..2000 {
        let ids = mysql_cli(
            &url,
            &format!(
                "SELECT id FROM information_schema.processlist \
                 WHERE info LIKE 'INSERT INTO {prefix}%' AND id <> connection_id()"
            ),
        );
        if let Some(id) = ids.split_whitespace().next() {
            // Let the session insert some rows first.
            std::thread::sleep(Duration::from_millis(300));
            mysql_cli(&url, &format!("KILL {id}"));
            killed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(killed, "no connection of the run found to kill");
    let out = child.wait_with_output().unwrap();
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{se}\n{so}");
    let r: Value = serde_json::from_str(&so).unwrap();
    assert_valid(&r, "insert-race rows lost");
    if counter(&r, "reconnects") == 0 {
        eprintln!("skipped: the session finished before the kill landed: {se}");
        return;
    }
    let lost = r["workload"]["facts"]["rows_lost"].as_f64().unwrap();
    assert!(lost > 0.0, "rows lost not counted: {r}");
    for t in r["fairness"]["per_thread"].as_array().unwrap() {
        assert_eq!(
            t["events"], 30000,
            "no transactions: nothing inserted twice: {r}"
        );
    }
    assert!(se.contains("were lost"), "{se}");
    assert!(se.contains("has no transactions"), "{se}");
}

/// insert-race takes sysbench's connection options (no `--db-driver`: they choose it), names
/// the server and engine in its report, and warns when `--engine` is ignored (PostgreSQL)
/// or has no transactions for `--commit batch:N` (MyISAM).
#[test]
fn insert_race_takes_sysbench_connection_options() {
    let out = hb()
        .args([
            "insert-race",
            "--rows",
            "5",
            "--mysql-host=127.0.0.1",
            "--mysql-port=1",
            "--mysql-password",
            "Sekr1tPw",
        ])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot connect to mysql://sbtest:***@127.0.0.1:1/sbtest"),
        "{err}"
    );
    assert!(!err.contains("Sekr1tPw"), "{err}");
    for (var, drv) in [
        ("HOSTBENCH_TEST_MYSQL_URL", "mysql"),
        ("HOSTBENCH_TEST_PG_URL", "pgsql"),
    ] {
        let Some(url) = server(var) else { continue };
        let (user, host, port, db) = url_parts(&url);
        let mut a = args(&[
            "insert-race",
            "--sessions",
            "2",
            "--rows",
            "40",
            "--engine",
            "myisam",
            "--commit",
            "batch:10",
            "--table-mode",
            "temp",
        ]);
        a.push(format!("--{drv}-host={host}"));
        if !port.is_empty() {
            a.push(format!("--{drv}-port={port}"));
        }
        a.extend([format!("--{drv}-user"), user.clone()]);
        a.push(format!("--{drv}-db={db}"));
        let out = hb()
            .args(&a)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let so = String::from_utf8_lossy(&out.stdout);
        let se = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{a:?}: {se}\n{so}");
        assert!(so.contains("rows inserted:             80 "), "{so}");
        if drv == "mysql" {
            assert!(so.contains(", engine MyISAM (no transactions)\n"), "{so}");
            assert!(so.contains("server: MySQL/MariaDB "), "{so}");
            assert!(
                se.contains("MyISAM has no transactions: --commit batch:10"),
                "{se}"
            );
        } else {
            assert!(so.contains("server: PostgreSQL"), "{so}");
            assert!(se.contains("--engine myisam is ignored"), "{se}");
        }
        a.extend(args(&["--format", "json"]));
        let r: Value = serde_json::from_str(&ok(&a)).unwrap();
        assert_valid(&r, "insert-race options");
        assert_eq!(r["workload"]["params"]["db_driver"], drv, "{r}");
    }
}

/// The write-up's test: `--mode procedure` CALLs a stored procedure whose WHILE loop inserts
/// the rows on the server, one CALL per session, the sessions started `--stagger` apart.
#[test]
fn insert_race_procedure_mode() {
    for (var, extra) in [
        ("HOSTBENCH_TEST_MYSQL_URL", &["--engine", "myisam"][..]),
        ("HOSTBENCH_TEST_PG_URL", &["--commit", "batch:100"][..]),
    ] {
        let Some(url) = server(var) else { continue };
        let mut a = args(&[
            "insert-race",
            "--mode",
            "procedure",
            "--stagger",
            "0.3s",
            "--sessions",
            "3",
            "--rows",
            "300",
            "--table-prefix",
            "hbt_raceproc",
        ]);
        a.push(format!("--db-url={url}"));
        a.extend(args(extra));
        let text = ok(&a);
        for needle in [
            "mode procedure (a WHILE loop on the server), sessions 0.3 s apart",
            "rows inserted:            900 ",
            "session   3:        300 rows",
        ] {
            assert!(text.contains(needle), "{needle:?} missing:\n{text}");
        }
        a.extend(args(&["--format", "json"]));
        let out = ok(&a);
        let r: Value = serde_json::from_str(&out).unwrap();
        assert_valid(&r, "insert-race procedure");
        assert_eq!(r["outcome"]["stop_reason"], "workers_done", "{r}");
        assert_eq!(r["metrics"]["events"], 3, "one CALL per session: {r}");
        assert_eq!(counter(&r, "writes"), 900, "{r}");
        let per: Vec<u64> = r["fairness"]["per_thread"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["events"].as_u64().unwrap())
            .collect();
        assert_eq!(per, vec![1, 1, 1]);
        let makespan = r["metrics"]["duration_s"].as_f64().unwrap();
        assert!(
            makespan >= 0.6,
            "the third session starts 2 × 0.3 s after the barrier: {makespan}"
        );
        let fig = |n: &str| {
            r["figures"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["name"] == n)
                .and_then(|f| f["value"].as_f64())
                .unwrap()
        };
        assert_eq!(r["figures"][0]["name"], "makespan_s");
        assert!((fig("rows_per_s") - 900.0 / makespan).abs() < 1e-6 * fig("rows_per_s").max(1.0));
        let check = |sql: &str| {
            if var.contains("MYSQL") {
                mysql_cli(&url, sql)
            } else {
                psql(&url, sql)
            }
        };
        let left = if var.contains("MYSQL") {
            check(
                "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_NAME = 'hbt_raceproc_proc'",
            )
        } else {
            check("SELECT COUNT(*) FROM pg_proc WHERE proname = 'hbt_raceproc_proc'")
        };
        assert_eq!(left.trim(), "0", "the procedure is dropped after the run");
    }
}

/// Ctrl-C in procedure mode: the CALLs the client abandons stop on the server too (the stop
/// table), instead of inserting on after hostbench has exited.
#[test]
fn insert_race_procedure_stops_on_ctrl_c() {
    for (var, extra) in [
        ("HOSTBENCH_TEST_MYSQL_URL", &["--engine", "myisam"][..]),
        ("HOSTBENCH_TEST_PG_URL", &["--commit", "none"][..]),
    ] {
        let Some(url) = server(var) else { continue };
        let mysql = var.contains("MYSQL");
        let running = || {
            let sql = "CALL hbt_raceint_proc";
            let n = if mysql {
                mysql_cli(
                    &url,
                    &format!(
                        "SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE '{sql}%'"
                    ),
                )
            } else {
                psql(
                    &url,
                    &format!(
                        "SELECT COUNT(*) FROM pg_stat_activity WHERE query LIKE '{sql}%' AND state <> 'idle'"
                    ),
                )
            };
            n.trim().parse::<u32>().unwrap()
        };
        let mut cmd = hb_std();
        cmd.args([
            "insert-race",
            "--mode",
            "procedure",
            "--sessions",
            "2",
            "--rows",
            "50000000",
            "--table-prefix",
            "hbt_raceint",
        ])
        .arg(format!("--db-url={url}"))
        .args(extra);
        let child = spawn_piped(&mut cmd);
        let t = Instant::now();
        while running() < 2 {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "the CALLs never started"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = interrupt(child);
        assert_eq!(
            out.status.code(),
            Some(130),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let t = Instant::now();
        while running() > 0 {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "a CALL goes on on the server after hostbench exited"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[test]
fn insert_race_bad_input() {
    for (a, needle) in [
        (&["insert-race", "--commit", "sometimes"][..], "batch:N"),
        (&["insert-race", "--sessions", "0"][..], "--sessions"),
        (
            &[
                "insert-race",
                "--mode",
                "procedure",
                "--sqlite-db",
                "/nonexistent/x.db",
            ][..],
            "SQLite has none",
        ),
        (
            &[
                "insert-race",
                "--stagger",
                "1s",
                "--sqlite-db",
                "/nonexistent/x.db",
            ][..],
            "--stagger",
        ),
        (
            &[
                "insert-race",
                "--mode",
                "procedure",
                "--table-mode",
                "shared",
                "--db-url",
                "mysql://u@127.0.0.1:1/x",
            ][..],
            "--table-mode shared is for --mode client",
        ),
        (
            &["insert-race", "--table-mode", "global"][..],
            "--table-mode",
        ),
        (
            &[
                "insert-race",
                "--db-url",
                "mysql://u:Sekr1tPw@127.0.0.1:1/x",
            ][..],
            "mysql://u:***@127.0.0.1:1/x",
        ),
    ] {
        let out = hb()
            .args(a)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert!(err.contains(needle), "{a:?}: expected {needle}: {err}");
        assert!(
            !err.contains("Sekr1tPw") && !err.contains("panicked"),
            "{err}"
        );
    }
}

/// `--db-ps-mode=disable` sends values inside the SQL text: same counts, same results.
#[test]
fn ps_mode_disable_gives_the_same_mix() {
    let d = scratch("sqlite-psmode");
    let mut targets = vec![format!("--db-url=sqlite:{}", d.join("p.db").display())];
    if let Some(url) = server("HOSTBENCH_TEST_PG_URL") {
        targets.push(format!("--db-url={url}"));
    }
    if let Some(url) = server("HOSTBENCH_TEST_MYSQL_URL") {
        targets.push(format!("--db-url={url}"));
    }
    for t in targets {
        let a = |extra: &[&str]| {
            let mut v = args(&[
                "oltp_read_write",
                &t,
                "--table-prefix=hbt_psm_",
                "--table-size=200",
            ]);
            v.extend(args(extra));
            v
        };
        ok(&a(&["cleanup"]));
        ok(&a(&["prepare"]));
        let out = ok(&a(&[
            "--db-ps-mode=disable",
            "--events=20",
            "--time=0",
            "--format=json",
            "run",
        ]));
        let r: Value = serde_json::from_str(&out).unwrap();
        assert_valid(&r, "ps-mode disable");
        assert_eq!(
            (
                counter(&r, "reads"),
                counter(&r, "writes"),
                counter(&r, "other")
            ),
            (280, 80, 40),
            "{t}"
        );
        ok(&a(&["cleanup"]));
    }
}
