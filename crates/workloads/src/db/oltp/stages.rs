//! The OLTP stages outside the run: `prepare` (tables, rows, indexes, loaded in parallel
//! where the driver allows), `cleanup`, MySQL's `prewarm`, and the hints that name the
//! command to run when the tables are missing or already there.

use super::cfg::Cfg;
use super::worker::{digits, fill_digits};
use super::{
    BULK_BYTES, DELETE, INSERT, Oltp, POINT_SELECT, READ_ONLY, READ_WRITE, SELECT_RANDOM_POINTS,
    SELECT_RANDOM_RANGES, Script, UPDATE_INDEX, UPDATE_NON_INDEX, WRITE_ONLY,
};
use crate::db::driver::{DbError, Driver, Res, Target};
use hostbench_core::rand::{Rng, Sampler};
use hostbench_core::workload::*;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

/// The command line of `stage` for these tables (the prefix when it is not sbtest's).
fn stage_command(cfg: &Cfg, stage: &str) -> String {
    let prefix = if cfg.prefix == "sbtest" {
        String::new()
    } else {
        format!(" --table-prefix={}", cfg.prefix)
    };
    format!(
        "hostbench {} --tables={} --table-size={}{prefix} {stage}",
        cfg.test, cfg.tables, cfg.table_size
    )
}

pub(super) fn prepare_first(cfg: &Cfg) -> String {
    format!(
        "run `{}` with the same driver options first",
        stage_command(cfg, "prepare")
    )
}

/// For a prepare that found its table already there.
fn exists_hint(e: &DbError, cfg: &Cfg) -> String {
    let m = e.message.to_ascii_lowercase();
    if m.contains("already exists") || e.code == "42P07" || e.code == "1050" {
        format!(
            "; the tables are there already: run `{}` first, or choose another --table-prefix",
            stage_command(cfg, "cleanup")
        )
    } else {
        String::new()
    }
}

pub(super) fn missing_hint(e: &DbError, cfg: &Cfg) -> String {
    let m = e.message.to_ascii_lowercase();
    if m.contains("no such table")
        || m.contains("does not exist")
        || m.contains("doesn't exist")
        || e.code == "42P01"
        || e.code == "1146"
    {
        format!("; the tables are missing: {}", prepare_first(cfg))
    } else {
        String::new()
    }
}

impl Oltp {
    pub(super) fn prepare(
        &self,
        ctx: &SetupCtx<'_>,
        log: &dyn StageLog,
    ) -> Result<StageDone, WorkloadError> {
        let cfg = Cfg::new(self, ctx.params)?;
        let n = cfg.table_count(ctx.threads);
        // SQLite has one writer at a time: parallel loading would only queue.
        let threads = if cfg.driver() == Driver::Sqlite {
            1
        } else {
            ctx.threads.min(n as usize).max(1)
        };
        let rows_each =
            if cfg.script == Script::Insert && !cfg.auto_inc || cfg.script == Script::BulkInsert {
                0
            } else {
                cfg.table_size
            };
        let total = rows_each as u64 * n as u64;
        if ctx.threads > 1 && cfg.script != Script::BulkInsert {
            // sysbench's prepare is a parallel command: its worker threads announce themselves
            // (bulk_insert's prepare is a plain function and does not).
            log.line("Initializing worker threads...");
            log.line("");
        }
        let done = AtomicU64::new(0);
        let interrupted = std::sync::atomic::AtomicBool::new(false);
        let results: Vec<Result<(), WorkloadError>> = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let (cfg, done, interrupted) = (&cfg, &done, &interrupted);
                    sc.spawn(move || -> Result<(), WorkloadError> {
                        let mut conn = cfg.target.connect_for_setup(true)?;
                        let mut rng = Rng::for_thread(ctx.seed, t as u64);
                        let k = ctx.dist.sampler(1, cfg.table_size.max(1) as u64);
                        let mut i = t as u32 + 1;
                        while i <= n {
                            if log.interrupted() {
                                interrupted.store(true, Ordering::Relaxed);
                                return Ok(());
                            }
                            create_table(
                                cfg,
                                conn.as_mut(),
                                i,
                                rows_each,
                                &mut rng,
                                &k,
                                log,
                                done,
                                total,
                            )
                            .map_err(|e| {
                                WorkloadError::environment(format!(
                                    "{} prepare on {}: table '{}': {e}{}",
                                    cfg.test,
                                    cfg.target,
                                    cfg.table(i),
                                    exists_hint(&e, cfg)
                                ))
                            })?;
                            i += threads as u32;
                        }
                        Ok(())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(WorkloadError::failed("a prepare thread panicked")))
                })
                .collect()
        });
        for r in results {
            r?;
        }
        if interrupted.load(Ordering::Relaxed) {
            return Ok(StageDone::Interrupted);
        }
        Ok(StageDone::Done)
    }

    pub(super) fn cleanup(
        &self,
        ctx: &SetupCtx<'_>,
        log: &dyn StageLog,
    ) -> Result<StageDone, WorkloadError> {
        let cfg = Cfg::new(self, ctx.params)?;
        let n = cfg.table_count(ctx.threads);
        if let Target::Sqlite { path } = &cfg.target
            && !std::path::Path::new(path).exists()
        {
            // Nothing was prepared here: nothing to drop.
            for i in 1..=n {
                log.line(&format!("Dropping table '{}'...", cfg.table(i)));
            }
            return Ok(StageDone::Done);
        }
        let mut conn = cfg.target.connect_for_setup(false)?;
        let fail = |e: DbError| {
            WorkloadError::environment(format!("{} cleanup on {}: {e}", cfg.test, cfg.target))
        };
        for i in 1..=n {
            log.line(&format!("Dropping table '{}'...", cfg.table(i)));
            conn.query(&format!("DROP TABLE IF EXISTS {}", cfg.table(i)))
                .map_err(fail)?;
        }
        if let Target::Sqlite { path } = &cfg.target {
            // The file prepare created goes too once it holds no table at all.
            let left = conn
                .query("SELECT name FROM sqlite_master WHERE type = 'table'")
                .map_err(fail)?;
            drop(conn);
            if left == Res::Rows(0) {
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{path}{suffix}"));
                }
            }
        }
        Ok(StageDone::Done)
    }
}

/// sysbench's `prewarm` command for the OLTP test `workload_id` (None for a test without it:
/// bulk_insert). MySQL only, as in sysbench: per table, ANALYZE TABLE, then a scan of the
/// primary key and one of the rows (`k LIKE '%0%'`), with the session's in-memory temporary
/// tables raised to 2 GiB first. Tables are shared among `--threads` like prepare's.
pub fn prewarm(
    workload_id: &str,
    ctx: &SetupCtx<'_>,
    log: &dyn StageLog,
) -> Option<Result<StageDone, WorkloadError>> {
    let w = [
        &READ_WRITE,
        &READ_ONLY,
        &WRITE_ONLY,
        &POINT_SELECT,
        &INSERT,
        &UPDATE_INDEX,
        &UPDATE_NON_INDEX,
        &DELETE,
        &SELECT_RANDOM_POINTS,
        &SELECT_RANDOM_RANGES,
    ]
    .into_iter()
    .find(|w| w.id == workload_id)?;
    Some(w.prewarm(ctx, log))
}

impl Oltp {
    fn prewarm(&self, ctx: &SetupCtx<'_>, log: &dyn StageLog) -> Result<StageDone, WorkloadError> {
        let cfg = Cfg::new(self, ctx.params)?;
        if cfg.driver() != Driver::Mysql {
            return Err(WorkloadError::usage(format!(
                "{} prewarm: prewarm is MySQL only, as in sysbench (the driver is {}); give --db-driver=mysql with --mysql-* options or a mysql:// --db-url",
                cfg.test,
                cfg.driver().name()
            )));
        }
        let n = cfg.tables as usize;
        let threads = ctx.threads.max(1);
        if threads > 1 {
            log.line("Initializing worker threads...");
            log.line("");
        }
        let results: Vec<Result<(), WorkloadError>> = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..threads.min(n))
                .map(|t| {
                    let cfg = &cfg;
                    sc.spawn(move || -> Result<(), WorkloadError> {
                        let mut conn = cfg.target.connect_for_setup(false)?;
                        let fail = |e: DbError| {
                            WorkloadError::environment(format!(
                                "{} prewarm on {}: {e}{}",
                                cfg.test,
                                cfg.target,
                                missing_hint(&e, cfg)
                            ))
                        };
                        conn.query("SET tmp_table_size=2*1024*1024*1024")
                            .map_err(fail)?;
                        conn.query("SET max_heap_table_size=2*1024*1024*1024")
                            .map_err(fail)?;
                        for i in (t + 1..=n).step_by(threads) {
                            if log.interrupted() {
                                return Ok(());
                            }
                            let tb = cfg.table(i as u32);
                            log.line(&format!("Prewarming table {tb}"));
                            conn.query(&format!("ANALYZE TABLE {tb}")).map_err(fail)?;
                            conn.query(&format!(
                                "SELECT AVG(id) FROM (SELECT * FROM {tb} FORCE KEY (PRIMARY) LIMIT {}) t",
                                cfg.table_size
                            ))
                            .map_err(fail)?;
                            conn.query(&format!(
                                "SELECT COUNT(*) FROM (SELECT * FROM {tb} WHERE k LIKE '%0%' LIMIT {}) t",
                                cfg.table_size
                            ))
                            .map_err(fail)?;
                        }
                        Ok(())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(WorkloadError::failed("a prewarm thread panicked")))
                })
                .collect()
        });
        for r in results {
            r?;
        }
        if log.interrupted() {
            return Ok(StageDone::Interrupted);
        }
        Ok(StageDone::Done)
    }
}

#[allow(clippy::too_many_arguments)]
fn create_table(
    cfg: &Cfg,
    conn: &mut dyn crate::db::driver::Conn,
    i: u32,
    rows: u32,
    rng: &mut Rng,
    k: &Sampler,
    log: &dyn StageLog,
    done: &AtomicU64,
    total: u64,
) -> Result<(), DbError> {
    let t = cfg.table(i);
    log.line(&format!("Creating table '{t}'..."));
    conn.query(&cfg.create_sql(i))?;
    if cfg.script == Script::BulkInsert {
        return Ok(());
    }
    if rows > 0 {
        log.line(&format!("Inserting {rows} records into '{t}'"));
    }
    let head = if cfg.auto_inc {
        format!("INSERT INTO {t}(k, c, pad) VALUES")
    } else {
        format!("INSERT INTO {t}(id, k, c, pad) VALUES")
    };
    let sqlite = cfg.driver() == Driver::Sqlite;
    if sqlite && rows > 0 {
        conn.query("BEGIN")?;
    }
    let mut sql = String::with_capacity(BULK_BYTES + 256);
    let mut tuple = String::with_capacity(256);
    let (mut c, mut pad) = ([0u8; 119], [0u8; 59]);
    let mut pending = 0u64;
    for id in 1..=rows {
        fill_digits(rng, &mut c);
        fill_digits(rng, &mut pad);
        let kv = k.sample(rng);
        tuple.clear();
        if cfg.auto_inc {
            let _ = write!(tuple, "({kv}, '{}', '{}')", digits(&c), digits(&pad));
        } else {
            let _ = write!(tuple, "({id}, {kv}, '{}', '{}')", digits(&c), digits(&pad));
        }
        if !sql.is_empty() && sql.len() + 1 + tuple.len() > BULK_BYTES {
            conn.query(&sql)?;
            sql.clear();
            let d = done.fetch_add(pending, Ordering::Relaxed) + pending;
            pending = 0;
            log.progress("rows", d, total);
            if log.interrupted() {
                break;
            }
        }
        if sql.is_empty() {
            sql.push_str(&head);
        } else {
            sql.push(',');
        }
        sql.push_str(&tuple);
        pending += 1;
    }
    if !sql.is_empty() && !log.interrupted() {
        conn.query(&sql)?;
        let d = done.fetch_add(pending, Ordering::Relaxed) + pending;
        log.progress("rows", d, total);
    }
    if sqlite && rows > 0 {
        conn.query("COMMIT")?;
    }
    if log.interrupted() {
        return Ok(());
    }
    if cfg.secondary && cfg.driver() != Driver::Mysql {
        conn.query(&format!(
            "CREATE INDEX {} ON {t}(id)",
            cfg.index_name("xid", i)
        ))?;
    }
    if cfg.create_secondary {
        log.line(&format!("Creating a secondary index on '{t}'..."));
        conn.query(&format!(
            "CREATE INDEX {} ON {t}(k)",
            cfg.index_name("k", i)
        ))?;
    }
    Ok(())
}
