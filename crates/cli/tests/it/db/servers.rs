//! The OLTP tests on PostgreSQL and MariaDB/MySQL (`HOSTBENCH_TEST_PG_URL`,
//! `HOSTBENCH_TEST_MYSQL_URL`): every test, prewarm, sysbench's connection options, reconnects
//! after a killed connection, the lean and crate clients, duplicate keys, credentials and
//! passwords, `--db-ps-mode=disable`.

use super::*;

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

/// sysbench-style connection options for a `postgres://user@host:port/db` URL.
fn pg_opts(url: &str) -> Vec<String> {
    vec![format!("--db-url={url}")]
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
