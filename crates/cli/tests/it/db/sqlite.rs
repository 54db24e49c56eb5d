//! sysbench's OLTP tests on the embedded SQLite (always run): every test's query mix, the
//! default target and Lua script paths, sysbench's SQL layout (snapshots) and interval lines,
//! bad input, how connection options choose the driver, and sysbench's small behaviours.

use super::*;

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
/// runs as the Lua script it is (here one without prepare, event or help: sysbench's
/// messages, exit 1, nothing created); sysbench 1.0.20's bundled scripts are recognised by
/// their content, Debian's and upstream's (which differ in the `#!` line), whatever their
/// file name, and run natively.
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
    for (stage, msg) in [
        (
            "prepare",
            "'oltp_insert.lua' test does not implement the 'prepare' command.",
        ),
        (
            "run",
            "FATAL: cannot find the event() function in oltp_insert.lua",
        ),
        (
            "help",
            "'oltp_insert.lua' test does not implement the 'help' command.",
        ),
    ] {
        let out = run(&["./oltp_insert.lua", "--table-size=10", &url, stage]);
        let (o, err) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(1), "{stage}: {err}");
        assert!(o.contains("hello"), "the script's body ran: {o}");
        assert!(o.contains(msg) || err.contains(msg), "{stage}: {o}{err}");
    }
    let out = run(&[
        "./nosuch/oltp_insert.lua",
        "--table-size=10",
        &url,
        "prepare",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("Cannot find benchmark './nosuch/oltp_insert.lua'"),
        "{err}"
    );
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
