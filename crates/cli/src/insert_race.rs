//! The `hostbench insert-race` front-end: the parallel single-row INSERT test with its own
//! options (`--sessions --rows --table-mode --commit`) and the database options of the OLTP
//! workloads (`--db-url`, or sysbench's `--db-driver`, `--pgsql-*` and `--mysql-*`; without
//! `--db-driver` the connection options given choose the driver, as in the OLTP tests). The plan's only
//! limit is the rows (`--time` caps it when given); the report is the insert-race layout.

use crate::exec;
use crate::present::{Plain, Text};
use anyhow::{Result, anyhow};
use clap::{Parser, ValueEnum};
use hostbench_core::plan::Plan;
use hostbench_core::units::parse_seconds;
use hostbench_core::workload::Workload;
use hostbench_workloads::db::insert_race::{InsertRace, check_commit};
use std::process::ExitCode;

/// Sessions race to insert rows one statement at a time; the makespan (start barrier to the
/// last session done) is the result.
#[derive(Debug, Parser)]
#[command(
    name = "hostbench insert-race",
    bin_name = "hostbench insert-race",
    version,
    after_help = "Examples:\n  hostbench insert-race --sessions 10 --rows 100000 --db-url mysql://root@127.0.0.1/test --engine myisam\n  hostbench insert-race --mode procedure --stagger 1s --sessions 10 --rows 1000000 --mysql-host 127.0.0.1 --mysql-user root --mysql-db test --engine myisam\n  hostbench insert-race --table-mode per-session --commit row --db-url postgres://postgres@127.0.0.1/test\nSee docs/db.md."
)]
struct Args {
    /// Concurrent sessions (one thread and one connection each).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=4096))]
    sessions: u32,
    /// Rows each session inserts.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(1..))]
    rows: u32,
    /// Where the rows go.
    #[arg(long = "table-mode", value_enum, default_value_t = TableMode::Temp)]
    table_mode: TableMode,
    /// row (autocommit), batch:N (COMMIT every N rows) or none (one transaction per session).
    #[arg(long, default_value = "row", value_parser = parse_commit)]
    commit: String,
    /// MySQL/MariaDB storage engine (myisam, innodb, aria) [default: the server's].
    #[arg(long, default_value = "")]
    engine: String,
    /// client: one prepared INSERT per row from the session; procedure: the session CALLs a
    /// stored procedure that inserts the rows in a WHILE loop on the server (MySQL/MariaDB,
    /// PostgreSQL; --table-mode temp)
    #[arg(long, value_enum, default_value_t = Mode::Client)]
    mode: Mode,
    /// --mode procedure: start session n's CALL n × this after the start barrier (1s is the
    /// write-up's `sleep 1`); 0 = all sessions together
    #[arg(long, default_value = "0", value_parser = seconds)]
    stagger: f64,
    /// Values: random (index inserts land anywhere) or seq (increasing).
    #[arg(long, default_value = "random", value_parser = ["random", "seq"])]
    values: String,
    /// Connection URL: sqlite:PATH, postgres://USER:PASS@HOST:PORT/DB or mysql://... (password
    /// and port optional)
    #[arg(long = "db-url", default_value = "")]
    db_url: String,
    /// Driver when no --db-url is given [default: mysql with --mysql-* options, pgsql with
    /// --pgsql-* options, else sqlite]
    #[arg(long = "db-driver", value_parser = ["sqlite", "pgsql", "mysql"])]
    db_driver: Option<String>,
    /// MariaDB/MySQL server host [default: localhost]
    #[arg(long = "mysql-host", value_name = "HOST")]
    mysql_host: Option<String>,
    /// MariaDB/MySQL server port [default: 3306]
    #[arg(long = "mysql-port", value_name = "PORT")]
    mysql_port: Option<String>,
    /// MariaDB/MySQL unix socket (wins over host and port)
    #[arg(long = "mysql-socket", value_name = "PATH")]
    mysql_socket: Option<String>,
    /// MariaDB/MySQL user [default: sbtest]
    #[arg(long = "mysql-user", value_name = "USER")]
    mysql_user: Option<String>,
    /// MariaDB/MySQL password [default: none]
    #[arg(long = "mysql-password", value_name = "PASSWORD")]
    mysql_password: Option<String>,
    /// MariaDB/MySQL database [default: sbtest]
    #[arg(long = "mysql-db", value_name = "DB")]
    mysql_db: Option<String>,
    /// PostgreSQL server host or socket directory [default: localhost]
    #[arg(long = "pgsql-host", value_name = "HOST")]
    pgsql_host: Option<String>,
    /// PostgreSQL server port [default: 5432]
    #[arg(long = "pgsql-port", value_name = "PORT")]
    pgsql_port: Option<String>,
    /// PostgreSQL user [default: sbtest]
    #[arg(long = "pgsql-user", value_name = "USER")]
    pgsql_user: Option<String>,
    /// PostgreSQL password [default: none]
    #[arg(long = "pgsql-password", value_name = "PASSWORD")]
    pgsql_password: Option<String>,
    /// PostgreSQL database [default: sbtest]
    #[arg(long = "pgsql-db", value_name = "DB")]
    pgsql_db: Option<String>,
    /// PostgreSQL TLS, as libpq's sslmode: disable, prefer, require, verify-ca, verify-full
    /// (sslmode= in --db-url wins) [default: prefer]
    #[arg(long = "pgsql-sslmode", value_name = "MODE")]
    pgsql_sslmode: Option<String>,
    /// PEM file of the CA the PostgreSQL server's certificate must lead to (sslrootcert)
    #[arg(long = "pgsql-sslrootcert", value_name = "PATH")]
    pgsql_sslrootcert: Option<String>,
    /// MariaDB/MySQL TLS, as --ssl-mode: DISABLED (off), PREFERRED, REQUIRED (on), VERIFY_CA,
    /// VERIFY_IDENTITY (ssl-mode= in --db-url wins) [default: off]
    #[arg(long = "mysql-ssl", value_name = "MODE")]
    mysql_ssl: Option<String>,
    /// PEM file of the CA the MariaDB/MySQL server's certificate must lead to
    #[arg(long = "mysql-ssl-ca", value_name = "PATH")]
    mysql_ssl_ca: Option<String>,
    /// MariaDB/MySQL client: lean (hostbench's own) or crate (the mysql crate) [default: lean]
    #[arg(long = "mysql-client", value_parser = ["lean", "crate"])]
    mysql_client: Option<String>,
    /// PostgreSQL client: lean (hostbench's own) or crate (the postgres crate) [default: lean]
    #[arg(long = "pgsql-client", value_parser = ["lean", "crate"])]
    pgsql_client: Option<String>,
    /// How long a session keeps trying to reconnect after a lost connection, e.g. while the
    /// server restarts (10s, 1m).
    #[arg(long = "db-reconnect-timeout", default_value = "10", value_parser = seconds)]
    db_reconnect_timeout: f64,
    /// Table name prefix (`PREFIX_<session>`, `PREFIX_shared`).
    #[arg(long = "table-prefix", default_value = "hb_insert_race")]
    table_prefix: String,
    /// SQLite file (with --db-driver=sqlite).
    #[arg(long = "sqlite-db", default_value = "hb_insert_race.db")]
    sqlite_db: String,
    /// Stop after this long even if sessions are not done (10s, 2m; 0 = no cap).
    #[arg(long, default_value = "0", value_parser = seconds)]
    time: f64,
    /// Latency percentiles, comma-separated.
    #[arg(long, default_value = "50,95,99,99.9", value_delimiter = ',')]
    percentile: Vec<f64>,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutFormat::Text)]
    format: OutFormat,
    #[command(flatten)]
    save: exec::SaveArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum TableMode {
    /// a temporary table per session
    Temp,
    /// a regular table per session
    PerSession,
    /// one table for every session
    Shared,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Mode {
    /// one prepared INSERT per row, sent by the session
    Client,
    /// a stored procedure's WHILE loop inserts the rows on the server
    Procedure,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum OutFormat {
    /// the insert-race report
    Text,
    /// the full result as JSON
    Json,
}

fn parse_commit(s: &str) -> Result<String, String> {
    check_commit(s).map_err(|e| e.message)?;
    Ok(s.to_string())
}

fn seconds(s: &str) -> Result<f64, String> {
    parse_seconds(s).map_err(|e| e.to_string())
}

/// Runs `hostbench insert-race ...`.
pub fn main(argv: &[String]) -> Result<ExitCode> {
    let Some(args) = crate::frontend::clap_parse::<Args>("insert-race", argv[1..].iter().cloned())?
    else {
        return Ok(ExitCode::SUCCESS);
    };
    if args.percentile.iter().any(|p| !(0.0..=100.0).contains(p)) {
        return Err(anyhow!(
            "insert-race: --percentile takes values from 0 to 100"
        ));
    }
    let w = &InsertRace;
    let mode = match args.table_mode {
        TableMode::Temp => "temp",
        TableMode::PerSession => "per-session",
        TableMode::Shared => "shared",
    };
    let mut overrides: Vec<(String, String)> = [
        ("rows", args.rows.to_string()),
        ("table_mode", mode.to_string()),
        ("commit", args.commit.clone()),
        ("engine", args.engine.clone()),
        ("values", args.values.clone()),
        ("db_url", args.db_url.clone()),
        ("sqlite_db", args.sqlite_db.clone()),
        (
            "db_reconnect_timeout",
            args.db_reconnect_timeout.to_string(),
        ),
        ("table_prefix", args.table_prefix.clone()),
        (
            "mode",
            match args.mode {
                Mode::Client => "client",
                Mode::Procedure => "procedure",
            }
            .to_string(),
        ),
        ("stagger", args.stagger.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    // Only the connection options given: the driver follows them as in the OLTP tests.
    for (k, v) in [
        ("db_driver", &args.db_driver),
        ("mysql_host", &args.mysql_host),
        ("mysql_port", &args.mysql_port),
        ("mysql_socket", &args.mysql_socket),
        ("mysql_user", &args.mysql_user),
        ("mysql_password", &args.mysql_password),
        ("mysql_db", &args.mysql_db),
        ("pgsql_host", &args.pgsql_host),
        ("pgsql_port", &args.pgsql_port),
        ("pgsql_user", &args.pgsql_user),
        ("pgsql_password", &args.pgsql_password),
        ("pgsql_db", &args.pgsql_db),
        ("pgsql_sslmode", &args.pgsql_sslmode),
        ("pgsql_sslrootcert", &args.pgsql_sslrootcert),
        ("mysql_ssl", &args.mysql_ssl),
        ("mysql_ssl_ca", &args.mysql_ssl_ca),
        ("mysql_client", &args.mysql_client),
        ("pgsql_client", &args.pgsql_client),
    ] {
        if let Some(v) = v {
            overrides.push((k.to_string(), v.clone()));
        }
    }
    let params = w
        .resolve(&overrides)
        .map_err(|e| anyhow!("insert-race: {e}"))?;
    let mut plan = Plan::new(w.id(), params);
    plan.threads = args.sessions as usize;
    plan.time_s = args.time;
    plan.events = 0;
    plan.percentiles = args.percentile.clone();
    plan.validate().map_err(|e| anyhow!("insert-race: {e}"))?;
    let output = Plain::new(match args.format {
        OutFormat::Text => Text::Layout(hostbench_report::insert_race::render),
        OutFormat::Json => Text::Json,
    });
    let saving = args.save.options()?;
    exec::execute(&plan, w, &output, &saving, "insert-race", argv).map(|(code, _)| code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Args::command().debug_assert();
    }
}
