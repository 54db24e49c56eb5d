//! `hostbench insert-race` on SQLite and the servers: every table and commit mode, lost
//! connections and rows, sysbench's connection options, procedure mode and Ctrl-C, bad input.

use super::*;

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
        // Enough rows that the run lasts while `kill` polls the server's process list
        // (4000 were done before the poller, a process per query, saw an INSERT: CI failed).
        "--rows",
        "20000",
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
        assert!(t["events"].as_u64().unwrap() >= 20000, "{r}");
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
