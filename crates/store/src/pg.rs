//! The PostgreSQL backend: the same tables as SQLite, in their own schema (`hostbench`, or
//! `?schema=NAME` in the URL), with the applied migrations in `schema_migrations`. Migrations
//! run under a transaction-scoped advisory lock, so several clients opening a fresh database
//! at once apply each migration exactly once.

use crate::index::Indexed;
use crate::migrations::MIGRATIONS;
use crate::{Arg, Backend, FleetHost, Inserted, Result, RunSummary, StoreError, StoredRun, chain};
use hostbench_tls::{Mode, Opts};
use postgres::types::ToSql;
use postgres::{Client, Config, GenericClient, NoTls};
use std::time::Duration;

pub(crate) struct Pg {
    client: Client,
    location: String,
}

fn to_store_error(location: &str, action: &'static str, e: &postgres::Error) -> StoreError {
    StoreError::Database {
        location: location.to_string(),
        action,
        detail: chain(e),
    }
}

/// Advisory lock key of a schema's migrations: FNV-1a of a fixed tag and the schema name.
fn lock_key(schema: &str) -> i64 {
    let mut x: u64 = 0xcbf2_9ce4_8422_2325;
    for b in "hostbench.store.migrate:".bytes().chain(schema.bytes()) {
        x ^= u64::from(b);
        x = x.wrapping_mul(0x0100_0000_01b3);
    }
    x as i64
}

/// Schema version recorded in the current `search_path` schema (0 if none).
fn recorded_version(c: &mut impl GenericClient) -> std::result::Result<i64, postgres::Error> {
    let exists: bool = c
        .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let v: Option<i32> = c
        .query_one("SELECT max(version) FROM schema_migrations", &[])?
        .get(0);
    Ok(i64::from(v.unwrap_or(0)))
}

/// Takes `sslmode` and `sslrootcert` out of a PostgreSQL URL (the `postgres` crate knows
/// only disable, prefer and require, and no root certificate): the URL without them and the
/// TLS options (libpq's default, prefer, when the URL says nothing). Any other parameter is
/// left for the crate, which refuses what it does not know.
fn split_tls(url: &str) -> Result<(String, Opts)> {
    let mut tls = Opts {
        mode: Mode::Prefer,
        ca: String::new(),
    };
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), tls));
    };
    let mut rest = Vec::new();
    for kv in query.split('&').filter(|kv| !kv.is_empty()) {
        if let Some(m) = kv.strip_prefix("sslmode=") {
            tls.mode = Mode::parse_pg(m).map_err(|e| {
                StoreError::BadLocation(format!("{}: {e}", hostbench_core::secret::mask(url)))
            })?;
        } else if let Some(c) = kv.strip_prefix("sslrootcert=") {
            tls.ca = hostbench_core::input::percent_decode(c);
        } else {
            rest.push(kv);
        }
    }
    tls.check(false).map_err(|e| {
        StoreError::BadLocation(format!("{}: {e}", hostbench_core::secret::mask(url)))
    })?;
    let url = if rest.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    Ok((url, tls))
}

impl Pg {
    fn err(&self, action: &'static str) -> impl Fn(postgres::Error) -> StoreError + '_ {
        move |e| to_store_error(&self.location, action, &e)
    }

    /// Connects and migrates the schema to `target`. Without `create`, a database where the
    /// schema has no tables yet is `None` (nothing is created).
    pub(crate) fn open(url: &str, schema: &str, create: bool, target: u32) -> Result<Option<Pg>> {
        let location = crate::Location::Postgres {
            url: url.to_string(),
            schema: schema.to_string(),
        }
        .to_string();
        let (rest, tls) = split_tls(url)?;
        let mut cfg: Config = rest.parse().map_err(|e: postgres::Error| {
            let detail = chain(&e);
            let known = if detail.contains("unknown option") {
                " (known parameters: schema, sslmode, sslrootcert, user, password, dbname, \
                 options, application_name, host, hostaddr, port, connect_timeout, \
                 tcp_user_timeout, keepalives, keepalives_idle, keepalives_interval, \
                 keepalives_retries, target_session_attrs, channel_binding, sslnegotiation, \
                 load_balance_hosts)"
            } else {
                ""
            };
            StoreError::BadLocation(format!(
                "{} is not a usable PostgreSQL URL: {detail}{known}",
                hostbench_core::secret::mask(url),
            ))
        })?;
        // Unix sockets never use TLS (as libpq).
        let unix = cfg
            .get_hosts()
            .iter()
            .any(|h| matches!(h, postgres::config::Host::Unix(_)));
        let maker = if tls.mode == Mode::Disable || unix {
            cfg.ssl_mode(postgres::config::SslMode::Disable);
            None
        } else {
            cfg.ssl_mode(hostbench_tls::pg::crate_mode(tls.mode));
            let c = tls
                .client_config()
                .map_err(|e| StoreError::BadLocation(e.to_string()))?;
            Some(hostbench_tls::pg::MakeRustls::new(
                c,
                "give the CA certificate that signed it with sslrootcert=PATH in the results \
                 store URL, or use sslmode=require to encrypt without verifying the server",
            ))
        };
        if cfg.get_connect_timeout().is_none() {
            cfg.connect_timeout(Duration::from_secs(10));
        }
        if cfg.get_application_name().is_none() {
            cfg.application_name("hostbench");
        }
        let connected = match maker {
            Some(m) => cfg.connect(m),
            None => cfg.connect(NoTls),
        };
        let client = connected.map_err(|e| {
            let mut err = to_store_error(&location, "cannot connect", &e);
            if let StoreError::Database { detail, .. } = &mut err
                && detail.contains("server does not support TLS")
            {
                *detail = format!(
                    "the server does not offer TLS and sslmode={} requires it: enable ssl on \
                     the server, or use sslmode=prefer or disable in the results store URL",
                    tls.mode.pg_name()
                );
            }
            err
        })?;
        let mut pg = Pg { client, location };
        // The schema name was checked to be a plain identifier (location.rs). Commits do not
        // wait for the server's WAL flush, as SQLite's synchronous=NORMAL: a server crash can
        // lose the last runs, never corrupt anything, and a save stays cheap.
        pg.client
            .batch_execute(&format!(
                "SET search_path TO \"{schema}\"; SET synchronous_commit TO off"
            ))
            .map_err(pg.err("cannot set up the session"))?;
        let found =
            recorded_version(&mut pg.client).map_err(pg.err("cannot read the schema version"))?;
        if found > i64::from(target) {
            return Err(too_new(&pg.location, found, target));
        }
        if found == 0 && !create {
            return Ok(None);
        }
        if found < i64::from(target) {
            pg.migrate(schema, target)?;
        }
        Ok(Some(pg))
    }

    fn migrate(&mut self, schema: &str, target: u32) -> Result<()> {
        let location = self.location.clone();
        let loc = location.as_str();
        let e = |action| move |err: postgres::Error| to_store_error(loc, action, &err);
        let mut tx = self
            .client
            .transaction()
            .map_err(e("cannot start the migration"))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&lock_key(schema)])
            .map_err(e("cannot lock the schema for migration"))?;
        let has_schema = tx
            .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&schema])
            .map_err(e("cannot look for the schema"))?
            .is_some();
        if !has_schema {
            tx.batch_execute(&format!("CREATE SCHEMA \"{schema}\""))
                .map_err(e(
                    "cannot create the schema (does the user have CREATE on the database?)",
                ))?;
        }
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (
                version    INTEGER PRIMARY KEY,
                name       TEXT NOT NULL,
                applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )",
        )
        .map_err(e("cannot create schema_migrations"))?;
        let current = recorded_version(&mut tx).map_err(e("cannot read the schema version"))?;
        if current > i64::from(target) {
            return Err(too_new(&self.location, current, target));
        }
        for m in MIGRATIONS
            .iter()
            .filter(|m| i64::from(m.version) > current && m.version <= target)
        {
            tx.batch_execute(m.postgres)
                .map_err(e("cannot apply a schema migration"))?;
            tx.execute(
                "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                &[&(m.version as i32), &m.name],
            )
            .map_err(e("cannot record the schema version"))?;
        }
        tx.commit().map_err(e("cannot commit the migration"))
    }
}

fn too_new(location: &str, found: i64, target: u32) -> StoreError {
    StoreError::TooNew {
        location: location.to_string(),
        found: u32::try_from(found).unwrap_or(u32::MAX),
        supported: target,
    }
}

fn bind(args: &[Arg]) -> Vec<Box<dyn ToSql + Sync>> {
    args.iter()
        .map(|a| -> Box<dyn ToSql + Sync> {
            match a {
                Arg::Text(s) => Box::new(s.clone()),
                Arg::Int(i) => Box::new(*i),
            }
        })
        .collect()
}

impl Backend for Pg {
    fn placeholder(&self, n: usize) -> String {
        format!("${n}")
    }

    fn version(&mut self) -> Result<u32> {
        let v = recorded_version(&mut self.client)
            .map_err(|e| to_store_error(&self.location, "cannot read the schema version", &e))?;
        Ok(u32::try_from(v).unwrap_or(0))
    }

    fn insert(&mut self, rows: &[(Indexed, &str)], stored_ms: i64) -> Result<Vec<Inserted>> {
        let location = self.location.clone();
        let loc = location.as_str();
        let e = |action| move |err: postgres::Error| to_store_error(loc, action, &err);
        let mut tx = self
            .client
            .transaction()
            .map_err(e("cannot start a write"))?;
        let ins = tx
            .prepare(
                "INSERT INTO runs (id, started_at, started_ms, stored_ms, label, workload, \
                 workload_family, category, hostname, host_fingerprint, tool_version, \
                 stop_reason, headline_metric, headline_value, headline_unit, \
                 result_schema_version, result_json, fleet_run, fleet_host) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) \
                 ON CONFLICT (id) DO NOTHING",
            )
            .map_err(e("cannot prepare the insert"))?;
        let mut out = Vec::with_capacity(rows.len());
        for (ix, json) in rows {
            let version = ix.result_schema_version as i32;
            let n = tx
                .execute(
                    &ins,
                    &[
                        &ix.id,
                        &ix.started_at,
                        &ix.started_ms,
                        &stored_ms,
                        &ix.label,
                        &ix.workload,
                        &ix.workload_family,
                        &ix.category,
                        &ix.hostname,
                        &ix.host_fingerprint,
                        &ix.tool_version,
                        &ix.stop_reason,
                        &ix.headline.metric,
                        &ix.headline.value,
                        &ix.headline.unit,
                        &version,
                        json,
                        &ix.fleet_run,
                        &ix.fleet_host,
                    ],
                )
                .map_err(e("cannot insert a run"))?;
            out.push(if n == 1 {
                Inserted::New
            } else {
                let stored: String = tx
                    .query_one("SELECT result_json FROM runs WHERE id = $1", &[&ix.id])
                    .map_err(e("cannot read a stored run"))?
                    .get(0);
                if crate::same_run_json(&stored, json) {
                    Inserted::Same
                } else {
                    Inserted::Conflict
                }
            });
        }
        tx.commit().map_err(e("cannot commit"))?;
        Ok(out)
    }

    fn summaries(&mut self, tail: &str, args: &[Arg]) -> Result<Vec<RunSummary>> {
        let sql = format!("SELECT {} FROM runs {tail}", crate::SUMMARY_COLUMNS);
        let owned = bind(args);
        let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
        let rows = self
            .client
            .query(&sql, &refs)
            .map_err(|e| to_store_error(&self.location, "cannot read runs", &e))?;
        Ok(rows
            .iter()
            .map(|r| RunSummary {
                id: r.get(0),
                started_at: r.get(1),
                label: r.get(2),
                workload: r.get(3),
                category: r.get(4),
                hostname: r.get(5),
                host_fingerprint: r.get(6),
                tool_version: r.get(7),
                stop_reason: r.get(8),
                headline: crate::Headline {
                    metric: r.get(9),
                    value: r.get(10),
                    unit: r.get(11),
                },
            })
            .collect())
    }

    fn runs(&mut self, tail: &str, args: &[Arg]) -> Result<Vec<StoredRun>> {
        let sql = format!("SELECT id, result_json FROM runs {tail}");
        let owned = bind(args);
        let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
        let rows = self
            .client
            .query(&sql, &refs)
            .map_err(|e| to_store_error(&self.location, "cannot read runs", &e))?;
        Ok(rows
            .iter()
            .map(|r| StoredRun {
                id: r.get(0),
                json: r.get(1),
            })
            .collect())
    }

    fn delete_ids(&mut self, ids: &[String]) -> Result<u64> {
        let location = self.location.clone();
        let loc = location.as_str();
        let e = |action| move |err: postgres::Error| to_store_error(loc, action, &err);
        let mut tx = self
            .client
            .transaction()
            .map_err(e("cannot start a write"))?;
        let mut n = 0;
        let mut fleet_runs: Vec<String> = Vec::new();
        for id in ids {
            let fr: Option<String> = tx
                .query_opt("SELECT fleet_run FROM runs WHERE id = $1", &[id])
                .map_err(e("cannot read a run"))?
                .and_then(|r| r.get(0));
            fleet_runs.extend(fr.filter(|f| !fleet_runs.contains(f)));
            n += tx
                .execute("DELETE FROM runs WHERE id = $1", &[id])
                .map_err(e("cannot remove a run"))?;
        }
        drop_orphan_rosters(&mut tx, &fleet_runs).map_err(e("cannot remove a fleet roster"))?;
        tx.commit().map_err(e("cannot commit"))?;
        Ok(n)
    }

    fn replace(&mut self, rows: &[(Indexed, &str)]) -> Result<u64> {
        let location = self.location.clone();
        let loc = location.as_str();
        let e = |action| move |err: postgres::Error| to_store_error(loc, action, &err);
        let mut tx = self
            .client
            .transaction()
            .map_err(e("cannot start a write"))?;
        let mut n = 0;
        for (ix, json) in rows {
            let version = ix.result_schema_version as i32;
            n += tx
                .execute(
                    "UPDATE runs SET label = $1, result_schema_version = $2, result_json = $3 \
                     WHERE id = $4",
                    &[&ix.label, &version, json, &ix.id],
                )
                .map_err(e("cannot update a run"))?;
        }
        tx.commit().map_err(e("cannot commit"))?;
        Ok(n)
    }

    fn delete_label(&mut self, label: &str) -> Result<u64> {
        let location = self.location.clone();
        let loc = location.as_str();
        let e = |action| move |err: postgres::Error| to_store_error(loc, action, &err);
        let mut tx = self
            .client
            .transaction()
            .map_err(e("cannot start a write"))?;
        let fleet_runs: Vec<String> = tx
            .query(
                "SELECT DISTINCT fleet_run FROM runs WHERE label = $1 AND fleet_run IS NOT NULL",
                &[&label],
            )
            .map_err(e("cannot read runs"))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let n = tx
            .execute("DELETE FROM runs WHERE label = $1", &[&label])
            .map_err(e("cannot remove runs"))?;
        drop_orphan_rosters(&mut tx, &fleet_runs).map_err(e("cannot remove a fleet roster"))?;
        tx.commit().map_err(e("cannot commit"))?;
        Ok(n)
    }

    fn put_roster(&mut self, run: &str, hosts: &[FleetHost], stored_ms: i64) -> Result<()> {
        let location = self.location.clone();
        let loc = location.as_str();
        let e = |action| move |err: postgres::Error| to_store_error(loc, action, &err);
        let mut tx = self
            .client
            .transaction()
            .map_err(e("cannot start a write"))?;
        tx.execute("DELETE FROM fleet_hosts WHERE fleet_run = $1", &[&run])
            .map_err(e("cannot replace a fleet roster"))?;
        for h in hosts {
            tx.execute(
                "INSERT INTO fleet_hosts (fleet_run, position, host, status, reason, runs, \
                 stored_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                &[
                    &run,
                    &h.position,
                    &h.host,
                    &h.status,
                    &h.reason,
                    &h.runs,
                    &stored_ms,
                ],
            )
            .map_err(e("cannot record a fleet roster"))?;
        }
        tx.commit().map_err(e("cannot commit"))
    }

    fn roster(&mut self, run: &str) -> Result<Vec<FleetHost>> {
        let rows = self
            .client
            .query(
                "SELECT host, position, status, reason, runs FROM fleet_hosts \
                 WHERE fleet_run = $1 ORDER BY position, host",
                &[&run],
            )
            .map_err(|e| to_store_error(&self.location, "cannot read a fleet roster", &e))?;
        Ok(rows
            .iter()
            .map(|r| FleetHost {
                host: r.get(0),
                position: r.get(1),
                status: r.get(2),
                reason: r.get(3),
                runs: r.get(4),
            })
            .collect())
    }
}

/// Removes the rosters (`fleet_hosts`) of those of `fleet_runs` that have no run left (the
/// SQLite backend's rule).
fn drop_orphan_rosters(
    tx: &mut postgres::Transaction,
    fleet_runs: &[String],
) -> Result<(), postgres::Error> {
    for fr in fleet_runs {
        tx.execute(
            "DELETE FROM fleet_hosts WHERE fleet_run = $1 AND NOT EXISTS \
             (SELECT 1 FROM runs WHERE fleet_run = $1)",
            &[fr],
        )?;
    }
    Ok(())
}
