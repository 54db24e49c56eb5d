//! Databases: sysbench's OLTP workloads and the parallel single-row insert test
//! (`insert-race`) over SQLite (embedded, the default), PostgreSQL and MariaDB/MySQL.
//!
//! Layering: [`driver`] is a small trait over one connection with prepared statements and a
//! [`driver::Session`] that re-prepares after a reconnect; [`sqlite`], [`pg_lean`] (hostbench's own PostgreSQL client, the
//! default), [`pg`] (the `postgres` crate, `--pgsql-client=crate`), [`mysql_lean`]
//! (hostbench's own MariaDB/MySQL client, the default) and [`mysql`] (the `mysql` crate,
//! `--mysql-client=crate`)
//! implement it (each behind a cargo feature, all on by default); [`oltp`] is sysbench's
//! OLTP family (one parametrised workload per Lua script) and [`insert_race`] the insert
//! test. One OS thread and one connection per worker; statements are prepared once per
//! connection; workers never print, read the clock for limits or handle signals.

pub mod driver;
pub mod insert_race;
#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "mysql")]
pub mod mysql_lean;
pub mod oltp;
#[cfg(feature = "postgres")]
pub mod pg;
#[cfg(feature = "postgres")]
pub mod pg_lean;
#[cfg(feature = "sqlite")]
pub mod sqlite;
#[cfg(any(feature = "postgres", feature = "mysql"))]
pub mod wire;
