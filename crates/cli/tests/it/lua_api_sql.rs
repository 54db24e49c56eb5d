//! The reference notes' checks T11 (one probe script: every kind of statement, the values
//! it returns and the counter it lands in) and T12 (sysbench's SQL API constants and
//! errors, after `tests/include/api_sql_common.sh`), against MariaDB and PostgreSQL when
//! the test environment names them (HOSTBENCH_TEST_MYSQL_URL, HOSTBENCH_TEST_PG_URL). The
//! expected lines are sysbench 1.0.20's output for the same scripts (checked by hand
//! against both servers, 2026-11-26); sysbench prints its FATAL and ALERT lines on stdout,
//! hostbench on stderr. Also: the Lua driver's TLS options reach its connections as the
//! native path's do. Tables are `hb_t11`, `hb_t12`.

use super::lua::{hb, lines_with, scripts, server_options};

const T11: &str = include_str!("lua_scripts/t11_probe.lua");
const T12: &str = include_str!("lua_scripts/api_sql.lua");

fn servers() -> Vec<(&'static str, Vec<String>)> {
    let mut t = Vec::new();
    for (var, name) in [
        ("HOSTBENCH_TEST_MYSQL_URL", "mysql"),
        ("HOSTBENCH_TEST_PG_URL", "pgsql"),
    ] {
        match std::env::var(var) {
            Ok(u) if !u.is_empty() => t.push((name, server_options(&u))),
            _ => eprintln!("skipped {name}: {var} is not set (see .ci/run)"),
        }
    }
    t
}

fn args<'a>(script: &'a str, opts: &'a [String], rest: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![script];
    a.extend(opts.iter().map(String::as_str));
    a.extend(rest);
    a
}

/// T11: `query_row` gives `1 x`, one nil without a row; NULL leaves a hole in a fetched
/// row; a VARCHAR(5) parameter cuts `abcdefgh` to `abcde`; `set_rand_str("##@@")` gives
/// two digits and two letters; a missing table is sysbench's `SQL error` line (MySQL's
/// errno 1146 and state 42S02, PostgreSQL's errno 0 and state 42P01); and the probe counts
/// reads=9 writes=3 other=7 errors=1 on both, as sysbench does.
#[test]
fn t11_probe_matches_sysbench_on_both_servers() {
    let d = scripts(&[("t11.lua", T11)]);
    for (name, opts) in servers() {
        let (code, out, err) = hb(d.path(), &args("t11.lua", &opts, &["--events=1", "run"]));
        assert_eq!(code, 0, "{name}: {err}\n{out}");
        let bad = if name == "mysql" {
            "bad: false SQL error, errno = 1146, state = '42S02': Table 'test.hb_t11_missing' doesn't exist (2)"
        } else {
            "bad: false SQL error, errno = 0, state = '42P01': relation \"hb_t11_missing\" does not exist (2)"
        };
        let got: Vec<&str> = out
            .lines()
            .filter(|l| {
                (l.contains(": ") && l.starts_with(|c: char| c.is_ascii_lowercase()))
                    || l.starts_with("reads=")
            })
            .collect();
        assert_eq!(
            got,
            [
                "rs: 2 3 (2)",
                "row1: 1 x nil 2 (4)",
                "row2: 2 yy 5 (3)",
                "end: nil (1)",
                "empty: 0 1 (2)",
                "empty_row: nil (1)",
                "query_row: 1 x (2)",
                "noresult: true (1)",
                "varchar5: abcde (1)",
                "rand_str: 4 true (2)",
                "count: 2 (1)",
                bad,
                "reads=9 writes=3 other=7 errors=1",
            ],
            "{name}: {out}\n{err}"
        );
        let fatal = if name == "mysql" {
            "FATAL: mysql_drv_query() returned error 1146 (Table 'test.hb_t11_missing' doesn't exist) for query 'SELECT * FROM hb_t11_missing'"
        } else {
            "FATAL: PQexec() failed: 7 relation \"hb_t11_missing\" does not exist"
        };
        assert!(err.contains(fatal), "{name}: {err}");
    }
}

/// T12: the type and error constants, a bad driver name ("failed to initialize the DB
/// driver"), a 100-row bulk insert, the objects' names, an unsupported bind type
/// ("Unsupported argument type: 8") and a closed connection ("SQL API error", at the
/// script's line), with sysbench's lines.
#[test]
fn t12_api_sql_matches_sysbench() {
    let d = scripts(&[("t12.lua", T12)]);
    for (name, opts) in servers() {
        let (code, out, err) = hb(d.path(), &args("t12.lua", &opts, &["--events=1", "run"]));
        assert_eq!(code, 0, "{name}: {err}\n{out}");
        let mut want: Vec<String> = [
            "NONE",
            "TINYINT",
            "SMALLINT",
            "INT",
            "BIGINT",
            "FLOAT",
            "DOUBLE",
            "TIME",
            "DATE",
            "DATETIME",
            "TIMESTAMP",
            "CHAR",
            "VARCHAR",
        ]
        .iter()
        .enumerate()
        .map(|(i, t)| format!("type {t} = {i}"))
        .collect();
        want.extend(
            [
                "error NONE = 0",
                "error IGNORABLE = 1",
                "error FATAL = 2",
                "bad driver: false failed to initialize the DB driver",
                &format!("driver name: {name}"),
                "tostring: <sql_driver> <sql_connection>",
                "rows: 100",
                "min max: 1 100",
                "stmt: <sql_statement>",
                "date: false Unsupported argument type: 8",
                "param: <sql_param>",
                "closed: false t12.lua:38: SQL API error",
            ]
            .map(str::to_string),
        );
        let got: Vec<&str> = out
            .lines()
            .filter(|l| {
                [
                    "type ", "error ", "bad ", "driver ", "tostring", "rows", "min ", "stmt",
                    "date", "param", "closed",
                ]
                .iter()
                .any(|p| l.starts_with(p))
            })
            .collect();
        assert_eq!(got, want, "{name}: {out}\n{err}");
        assert!(
            err.contains("FATAL: invalid database driver name: 'nosuchdriver'")
                && err.contains("ALERT: attempt to use an already closed connection"),
            "{name}: {err}"
        );
    }
}

const TLS: &str = r#"
function event()
  sysbench.sql.driver():connect()
  return true
end
"#;

const TLS_PG: &str = r#"
function event()
  local con = sysbench.sql.driver():connect()
  print("server", con:query_row("SHOW ssl"))
  print("ssl", con:query_row("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"))
  return true
end
"#;

const TLS_MY: &str = r#"
function event()
  local con = sysbench.sql.driver():connect()
  print("server", con:query_row("SELECT @@have_ssl"))
  local _, cipher = con:query_row("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
  print("ssl", cipher ~= nil and cipher ~= "")
  return true
end
"#;

/// The Lua driver's connections take TLS from the same options as the native path:
/// `--pgsql-sslmode` (PostgreSQL says in `pg_stat_ssl` whether the session is encrypted),
/// `--mysql-ssl` (sysbench's `off`, the default, is no TLS; `on` is REQUIRED, which a server
/// without TLS refuses) with the native path's modes and `--mysql-ssl-ca`, and
/// `--pgsql-sslrootcert`; VERIFY_CA without a CA fails before connecting. With the CI's
/// test CA (HOSTBENCH_TEST_DB_CA) the verified modes connect over TLS.
#[test]
fn the_lua_driver_takes_the_native_tls_options() {
    // No server needed: refused when the driver is made.
    let d = scripts(&[
        ("tls.lua", TLS),
        ("tls_pg.lua", TLS_PG),
        ("tls_my.lua", TLS_MY),
    ]);
    for (opts, words) in [
        (
            [
                "--db-driver=pgsql",
                "--pgsql-port=1",
                "--pgsql-sslmode=verify-ca",
            ],
            "sslrootcert",
        ),
        (
            [
                "--db-driver=mysql",
                "--mysql-port=1",
                "--mysql-ssl=VERIFY_CA",
            ],
            "--mysql-ssl-ca",
        ),
    ] {
        let mut a = vec!["tls.lua"];
        a.extend(opts);
        a.extend(["--events=1", "run"]);
        let (code, out, err) = hb(d.path(), &a);
        assert_eq!(code, 1, "{a:?}: {err}\n{out}");
        assert!(
            err.contains(words) && err.contains("failed to initialize the DB driver"),
            "{a:?}: {err}"
        );
    }
    // --mysql-ssl takes sysbench's booleans and the native modes; anything else is a bad
    // option, refused before the script runs.
    let (code, _, err) = hb(
        d.path(),
        &["tls.lua", "--mysql-ssl=sometimes", "--events=1", "run"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("invalid option: --mysql-ssl=sometimes"),
        "{err}"
    );
    let ca = std::env::var("HOSTBENCH_TEST_DB_CA").unwrap_or_default();
    for (name, opts) in servers() {
        let (script, plain, tls, verified) = if name == "pgsql" {
            (
                "tls_pg.lua",
                vec!["--pgsql-sslmode=disable".to_string()],
                vec!["--pgsql-sslmode=require".to_string()],
                vec![
                    "--pgsql-sslmode=verify-full".to_string(),
                    format!("--pgsql-sslrootcert={ca}"),
                ],
            )
        } else {
            (
                "tls_my.lua",
                vec![],
                vec!["--mysql-ssl=on".to_string()],
                vec![
                    "--mysql-ssl=VERIFY_IDENTITY".to_string(),
                    format!("--mysql-ssl-ca={ca}"),
                ],
            )
        };
        let go = |extra: &[String]| {
            let mut o = opts.clone();
            o.extend_from_slice(extra);
            let (code, out, err) = hb(d.path(), &args(script, &o, &["--events=1", "run"]));
            (code, out, err)
        };
        let (code, out, err) = go(&plain);
        assert_eq!(code, 0, "{name}: {err}\n{out}");
        let no = if name == "pgsql" {
            "ssl\tf"
        } else {
            "ssl\tfalse"
        };
        assert_eq!(lines_with(&out, "ssl"), [no], "{name}: {out}");
        let offered = ["server\ton", "server\tYES"]
            .iter()
            .any(|s| lines_with(&out, "server").contains(s));
        let (code, out, err) = go(&tls);
        if offered {
            assert_eq!(code, 0, "{name}: {err}\n{out}");
            let yes = if name == "pgsql" {
                "ssl\tt"
            } else {
                "ssl\ttrue"
            };
            assert_eq!(lines_with(&out, "ssl"), [yes], "{name}: {out}");
        } else {
            // The server offers no TLS: a mode that requires it cannot connect.
            assert_eq!(code, 1, "{name}: {err}\n{out}");
            assert!(err.contains("connection creation failed"), "{name}: {err}");
            eprintln!("{name}: the server offers no TLS; only the refusal was checked");
        }
        if ca.is_empty() {
            eprintln!(
                "skipped {name}'s verified TLS: HOSTBENCH_TEST_DB_CA is not set (see .ci/run)"
            );
            continue;
        }
        let (code, out, err) = go(&verified);
        assert_eq!(code, 0, "{name}: {err}\n{out}");
        let yes = if name == "pgsql" {
            "ssl\tt"
        } else {
            "ssl\ttrue"
        };
        assert_eq!(lines_with(&out, "ssl"), [yes], "{name}: {out}");
    }
}
