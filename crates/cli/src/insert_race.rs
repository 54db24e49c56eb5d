//! The `hostbench insert-race` front-end: the parallel single-row INSERT test with its own
//! options (`--sessions --rows --table-mode --commit`) and the database options of the OLTP
//! workloads (`--db-url`, or `--db-driver` with `--pgsql-*`/`--mysql-*`). The plan's only
//! limit is the rows (`--time` caps it when given); the report is the insert-race layout.

use crate::exec::{self, Format, Output};
use anyhow::{Result, anyhow};
use clap::{Parser, ValueEnum};
use hostbench_core::params::Params;
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
    after_help = "Examples:\n  hostbench insert-race --sessions 10 --rows 100000 --db-url mysql://root@127.0.0.1/test --engine myisam\n  hostbench insert-race --table-mode per-session --commit row --db-url postgres://postgres@127.0.0.1/test\nSee docs/db.md."
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
    /// Values: random (index inserts land anywhere) or seq (increasing).
    #[arg(long, default_value = "random", value_parser = ["random", "seq"])]
    values: String,
    /// Connection URL: sqlite:PATH, postgres://USER:PASS@HOST:PORT/DB or mysql://... (password
    /// and port optional)
    #[arg(long = "db-url", default_value = "")]
    db_url: String,
    /// Driver when no --db-url is given (sysbench's option names below apply).
    #[arg(long = "db-driver", default_value = "sqlite", value_parser = ["sqlite", "pgsql", "mysql"])]
    db_driver: String,
    /// MariaDB/MySQL client: lean (hostbench's own) or crate (the mysql crate).
    #[arg(long = "mysql-client", default_value = "lean", value_parser = ["lean", "crate"])]
    mysql_client: String,
    /// PostgreSQL client: lean (hostbench's own) or crate (the postgres crate).
    #[arg(long = "pgsql-client", default_value = "lean", value_parser = ["lean", "crate"])]
    pgsql_client: String,
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
enum OutFormat {
    /// the insert-race report
    Text,
    /// the full result as JSON
    Json,
}

fn parse_commit(s: &str) -> Result<String, String> {
    check_commit(s).map_err(|e| e.0)?;
    Ok(s.to_string())
}

fn seconds(s: &str) -> Result<f64, String> {
    parse_seconds(s).map_err(|e| e.to_string())
}

/// Runs `hostbench insert-race ...`.
pub fn main(argv: &[String]) -> Result<ExitCode> {
    let args = match Args::try_parse_from(&argv[1..]) {
        Ok(a) => a,
        Err(e) if !e.use_stderr() => {
            exec::out(&e.render().to_string());
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => {
            let text = e.render().to_string();
            let line = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            return Err(anyhow!(
                "insert-race: {} (see `hostbench insert-race --help`)",
                hostbench_core::secret::mask(line)
            ));
        }
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
        ("db_driver", args.db_driver.clone()),
        ("sqlite_db", args.sqlite_db.clone()),
        ("mysql_client", args.mysql_client.clone()),
        ("pgsql_client", args.pgsql_client.clone()),
        (
            "db_reconnect_timeout",
            args.db_reconnect_timeout.to_string(),
        ),
        ("table_prefix", args.table_prefix.clone()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    hostbench_workloads::db::driver::record_url_driver(&mut overrides);
    let params =
        Params::resolve(w.id(), w.params(), &overrides).map_err(|e| anyhow!("insert-race: {e}"))?;
    let mut plan = Plan::new(w.id(), params);
    plan.threads = args.sessions as usize;
    plan.time_s = args.time;
    plan.events = 0;
    plan.percentiles = args.percentile.clone();
    plan.validate().map_err(|e| anyhow!("insert-race: {e}"))?;
    let output = Output::report(match args.format {
        OutFormat::Text => Format::Layout(hostbench_report::insert_race::render),
        OutFormat::Json => Format::Json,
    });
    let saving = args.save.options()?;
    exec::execute_with(&plan, w, &output, &saving, "insert-race", argv)
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
