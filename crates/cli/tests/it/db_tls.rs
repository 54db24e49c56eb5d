//! TLS to the databases through the real binary: an unknown `--db-url` or `--results-db`
//! parameter exits 2 naming it; against the local servers (`HOSTBENCH_TEST_PG_URL`,
//! `HOSTBENCH_TEST_MYSQL_URL`, TLS enabled by `.ci/run`, which exports the test CA as
//! `HOSTBENCH_TEST_DB_CA`; unset = a printed skip) a run records `db_tls` in its result (valid
//! against the schema) and names the negotiated TLS on stderr. Tables are `hbt_tls_*`.

use crate::common::*;
use serde_json::Value;

fn var(name: &str) -> Option<String> {
    match std::env::var(name) {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            eprintln!("skipped: {name} is not set (see .ci/run)");
            None
        }
    }
}

#[test]
fn an_unknown_url_parameter_exits_2_naming_it() {
    for (url, known) in [
        (
            "postgres://u@127.0.0.1:1/db?sslmode=require&sslmdoe=disable",
            "host, sslmode, sslrootcert",
        ),
        (
            "mysql://u@127.0.0.1:1/db?ssl_mode=REQUIRED",
            "socket, host, ssl-mode, ssl-ca",
        ),
    ] {
        let (code, _, err) = run(&[
            "oltp_point_select",
            &format!("--db-url={url}"),
            "--time=1",
            "run",
        ]);
        assert_eq!(code, 2, "{url}: {err}");
        let name = if url.starts_with("postgres") {
            "'sslmdoe'"
        } else {
            "'ssl_mode'"
        };
        assert!(
            err.contains(&format!("unknown URL parameter {name}")) && err.contains(known),
            "{err}"
        );
    }
    // A bad mode is named too.
    let (code, _, err) = run(&[
        "oltp_point_select",
        "--db-url=postgres://u@127.0.0.1:1/db?sslmode=allow",
        "run",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("sslmode=allow is not offered"), "{err}");
    // The results store's URL.
    let (code, _, err) = run(&[
        "results",
        "list",
        "--results-db",
        "postgres://u@127.0.0.1:1/db?sslrootcrt=/x.pem",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("sslrootcrt")
            && err.contains("known parameters: schema, sslmode, sslrootcert"),
        "{err}"
    );
}

#[test]
fn tls_options_that_verify_less_than_they_say_exit_2() {
    // Nothing listens on port 1: each is refused before connecting.
    let pg_needs = ["sslmode=verify-ca needs a CA file", "sslrootcert=PATH"];
    let my_needs = [
        "--mysql-ssl=VERIFY_CA needs a CA file",
        "--mysql-ssl-ca=PATH",
    ];
    let crate_ca = ["--mysql-client=crate cannot verify", "--mysql-client=lean"];
    for (args, words) in [
        (
            vec!["--db-url=postgres://u@127.0.0.1:1/db?sslmode=verify-ca"],
            &pg_needs,
        ),
        (
            vec![
                "--db-driver=pgsql",
                "--pgsql-port=1",
                "--pgsql-sslmode=verify-ca",
            ],
            &pg_needs,
        ),
        (
            vec![
                "--db-url=postgres://u@127.0.0.1:1/db?sslmode=verify-ca",
                "--pgsql-client=crate",
            ],
            &pg_needs,
        ),
        (
            vec!["--db-url=mysql://u@127.0.0.1:1/db?ssl-mode=VERIFY_CA"],
            &my_needs,
        ),
        (
            vec![
                "--db-driver=mysql",
                "--mysql-port=1",
                "--mysql-ssl=VERIFY_CA",
            ],
            &my_needs,
        ),
        (
            vec![
                "--db-url=mysql://u@127.0.0.1:1/db?ssl-mode=REQUIRED&ssl-ca=/x.pem",
                "--mysql-client=crate",
            ],
            &crate_ca,
        ),
        (
            vec![
                "--db-driver=mysql",
                "--mysql-port=1",
                "--mysql-ssl=VERIFY_IDENTITY",
                "--mysql-ssl-ca=/x.pem",
                "--mysql-client=crate",
            ],
            &crate_ca,
        ),
    ] {
        let mut a = vec!["oltp_point_select"];
        a.extend_from_slice(&args);
        a.extend_from_slice(&["--time=1", "run"]);
        let (code, _, err) = run(&a);
        assert_eq!(code, 2, "{a:?}: {err}");
        assert!(words.iter().all(|w| err.contains(w)), "{a:?}: {err}");
    }
    // The results store.
    let (code, _, err) = run(&[
        "results",
        "list",
        "--results-db",
        "postgres://u@127.0.0.1:1/db?sslmode=verify-ca",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(pg_needs.iter().all(|w| err.contains(w)), "{err}");
}

/// prepare, run (JSON) and cleanup of oltp_point_select at `url`: the result's facts and
/// the run's stderr.
fn json_run(url: &str, prefix: &str) -> (Value, String) {
    let base = [
        "oltp_point_select".to_string(),
        format!("--db-url={url}"),
        format!("--table-prefix={prefix}"),
        "--table-size=20".to_string(),
    ];
    let stage = |extra: &[&str]| {
        let mut a: Vec<&str> = base.iter().map(String::as_str).collect();
        a.extend_from_slice(extra);
        let (code, out, err) = run(&a);
        assert_eq!(code, 0, "{a:?}: {err}\n{out}");
        (out, err)
    };
    stage(&["cleanup"]);
    stage(&["prepare"]);
    let (out, err) = stage(&[
        "--events=50",
        "--time=0",
        "--no-save",
        "--format=json",
        "run",
    ]);
    stage(&["cleanup"]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_valid(&v, url);
    (v["workload"]["facts"].clone(), err)
}

#[test]
fn the_result_records_whether_the_connection_used_tls() {
    let Some(ca) = var("HOSTBENCH_TEST_DB_CA") else {
        return;
    };
    for (var_name, on, off, prefix) in [
        (
            "HOSTBENCH_TEST_PG_URL",
            format!("sslmode=verify-full&sslrootcert={ca}"),
            "sslmode=disable".to_string(),
            "hbt_tls_pg_",
        ),
        (
            "HOSTBENCH_TEST_MYSQL_URL",
            format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}"),
            "ssl-mode=DISABLED".to_string(),
            "hbt_tls_my_",
        ),
    ] {
        let Some(url) = var(var_name) else { continue };
        let sep = if url.contains('?') { '&' } else { '?' };
        let (facts, err) = json_run(&format!("{url}{sep}{on}"), prefix);
        assert_eq!(facts["db_tls"], 1.0, "{facts}");
        assert!(
            facts["db_tls_version"] == 1.3 || facts["db_tls_version"] == 1.2,
            "{facts}"
        );
        assert!(
            err.contains("hostbench: server: ") && err.contains(", TLS TLSv1."),
            "{err}"
        );
        let (facts, err) = json_run(&format!("{url}{sep}{off}"), prefix);
        assert_eq!(facts["db_tls"], 0.0, "{facts}");
        assert!(facts.get("db_tls_version").is_none(), "{facts}");
        assert!(err.contains(", TLS none"), "{err}");
    }
}
