//! Tables prepared by Debian's sysbench run in hostbench and the other way round, on
//! PostgreSQL and on MariaDB.

use super::*;

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
