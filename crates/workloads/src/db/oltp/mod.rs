//! sysbench's OLTP family as native workloads, one per Lua script of sysbench 1.0.20:
//! oltp_read_write, oltp_read_only, oltp_write_only, oltp_point_select, oltp_insert,
//! oltp_update_index, oltp_update_non_index, oltp_delete, bulk_insert,
//! select_random_points, select_random_ranges.
//!
//! Same schema (`sbtest1..N`: id, k, c CHAR(120), pad CHAR(60)), same data (k drawn with
//! `--rand-type` in [1, table_size]; c and pad are groups of 11 random digits joined by
//! '-'), same statements, parameters and per-event mix, same read/write/other counting (by
//! the statement's result), so tables prepared by sysbench run here and the other way round.
//! One event = one transaction (one script `event()`); an ignorable error restarts the whole
//! event inside the same timed event and counts an error; a lost connection also counts a
//! reconnect and re-prepares every statement on the new connection (waiting up to
//! `--db-reconnect-timeout` for a restarting server, less when the run ends first: then the
//! unfinished transaction is no event and no reconnect is counted).
//!
//! Differences from sysbench, documented in docs/db.md: SQLite is supported (and the
//! default); lost connections always reconnect (sysbench needs the code in
//! `--mysql-ignore-errors`); `--db-ignore-errors` also applies to PostgreSQL and SQLite;
//! `--secondary` on PostgreSQL/SQLite creates an index `xid_N` instead of MySQL's `KEY`.

use super::driver::{Driver, Session};
use hostbench_core::params::ParamSpec;
use hostbench_core::rand::{Distribution, Rng};
use hostbench_core::recorder::Counter;
use hostbench_core::result::{Warning, WarningKind};
use hostbench_core::workload::*;
use std::sync::Arc;

mod cfg;
mod params;
mod stages;
mod worker;

pub use stages::prewarm;
pub use worker::fill_digits;

use cfg::Cfg;
use params::{BULK, COMMON, POINTS, RANGES};
use stages::{missing_hint, prepare_first};
use worker::{NONE, OltpWorker};

/// Which sysbench script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// oltp_read_write.lua
    ReadWrite,
    /// oltp_read_only.lua
    ReadOnly,
    /// oltp_write_only.lua
    WriteOnly,
    /// oltp_point_select.lua
    PointSelect,
    /// oltp_insert.lua
    Insert,
    /// oltp_update_index.lua
    UpdateIndex,
    /// oltp_update_non_index.lua
    UpdateNonIndex,
    /// oltp_delete.lua
    Delete,
    /// bulk_insert.lua
    BulkInsert,
    /// select_random_points.lua
    RandomPoints,
    /// select_random_ranges.lua
    RandomRanges,
}

/// One OLTP workload (a sysbench Lua script).
pub struct Oltp {
    id: &'static str,
    test: &'static str,
    script: Script,
    summary: &'static str,
    params: &'static [ParamSpec],
}
macro_rules! oltp {
    ($name:ident, $test:literal, $script:ident, $params:ident, $summary:literal) => {
        #[doc = concat!("sysbench's `", $test, "`.")]
        pub static $name: Oltp = Oltp {
            id: concat!("db.", $test),
            test: $test,
            script: Script::$script,
            summary: $summary,
            params: $params,
        };
    };
}

oltp!(
    READ_WRITE,
    "oltp_read_write",
    ReadWrite,
    COMMON,
    "OLTP read/write transaction (sysbench's 20-query mix) on SQLite, PostgreSQL or MySQL"
);
oltp!(
    READ_ONLY,
    "oltp_read_only",
    ReadOnly,
    COMMON,
    "OLTP read-only transaction: point selects and range queries"
);
oltp!(
    WRITE_ONLY,
    "oltp_write_only",
    WriteOnly,
    COMMON,
    "OLTP write-only transaction: updates, delete + insert"
);
oltp!(
    POINT_SELECT,
    "oltp_point_select",
    PointSelect,
    COMMON,
    "one primary-key SELECT per event"
);
oltp!(
    INSERT,
    "oltp_insert",
    Insert,
    COMMON,
    "one single-row INSERT (text query) per event"
);
oltp!(
    UPDATE_INDEX,
    "oltp_update_index",
    UpdateIndex,
    COMMON,
    "UPDATE of the indexed column k per event"
);
oltp!(
    UPDATE_NON_INDEX,
    "oltp_update_non_index",
    UpdateNonIndex,
    COMMON,
    "UPDATE of the non-indexed column c per event"
);
oltp!(
    DELETE,
    "oltp_delete",
    Delete,
    COMMON,
    "one DELETE of a random id per event"
);
oltp!(
    BULK_INSERT,
    "bulk_insert",
    BulkInsert,
    BULK,
    "multi-row INSERT throughput: one row per event, sent in 512 KiB statements"
);
oltp!(
    SELECT_RANDOM_POINTS,
    "select_random_points",
    RandomPoints,
    POINTS,
    "SELECT with an IN() list of random k values"
);
oltp!(
    SELECT_RANDOM_RANGES,
    "select_random_ranges",
    RandomRanges,
    RANGES,
    "SELECT count(k) over several random BETWEEN ranges"
);

/// sysbench's bulk insert flushes a multi-row INSERT before it would exceed this.
const BULK_BYTES: usize = 512 * 1024;
struct OltpInstance {
    cfg: Arc<Cfg>,
    dist: Distribution,
    threads: usize,
    /// The server's version string, from the setup connection.
    version: String,
    /// The setup connection's TLS (`None`: SQLite).
    tls: Option<String>,
}

impl Instance for OltpInstance {
    fn facts(&self) -> Vec<(String, f64)> {
        super::driver::tls_facts(self.tls.as_deref())
    }

    fn server(&self) -> Option<String> {
        self.tls.as_ref()?;
        Some(super::driver::server_line(
            &self.version,
            &self.cfg.target,
            self.tls.as_deref(),
        ))
    }

    fn worker(&self, tid: usize, rng: Rng) -> Result<Worker, WorkloadError> {
        let cfg = &self.cfg;
        let s = Session::open(&cfg.target, cfg.prepared)?;
        let rlen = (cfg.table_size as u64 / self.threads as u64).max(1);
        let rmin = rlen * (tid as u64 % self.threads as u64);
        let mut w = OltpWorker {
            cfg: cfg.clone(),
            s,
            rng,
            ids: self.dist.sampler(1, cfg.table_size.max(1) as u64),
            range_sampler: self.dist.sampler(rmin, rmin + rlen),
            tabs: Vec::new(),
            begin: NONE,
            commit: NONE,
            special: NONE,
            c: [b'0'; 119],
            pad: [b'0'; 59],
            text: String::with_capacity(if cfg.script == Script::BulkInsert {
                BULK_BYTES + 64
            } else {
                512
            }),
            tid,
            threads: self.threads,
            bulk_rows: 0,
            in_bulk: false,
            args: Vec::with_capacity(64),
        };
        let _ = w.threads;
        w.prepare_all().map_err(|e| {
            WorkloadError::environment(format!(
                "{}: cannot prepare statements on {}: {e}{}",
                cfg.test,
                cfg.target,
                missing_hint(&e, cfg)
            ))
        })?;
        Ok(Worker::Event(Box::new(w)))
    }

    fn warnings(&self) -> Vec<Warning> {
        let mut w = Vec::new();
        if self.cfg.script == Script::Delete {
            w.push(Warning {
                kind: WarningKind::NoWork,
                message: "oltp_delete never re-inserts: as the tables empty, more deletes hit absent rows and count as 'other' rather than 'write' (as in sysbench); compare write counts, not transactions".into(),
            });
        }
        if matches!(self.cfg.script, Script::RandomPoints | Script::RandomRanges)
            && self.cfg.tables > 1
        {
            w.push(Warning {
                kind: WarningKind::NoWork,
                message: format!(
                    "{} reads only {} (as sysbench 1.0.20 does): --tables={} changes nothing in the run",
                    self.cfg.test,
                    self.cfg.table(1),
                    self.cfg.tables
                ),
            });
        }
        if self.cfg.driver() == Driver::Sqlite && self.threads > 1 && self.cfg.writes() {
            w.push(Warning {
                kind: WarningKind::Contention,
                message: "SQLite serialises writers: with several threads, write transactions wait for the database lock (busy waits are part of the latency)".into(),
            });
        }
        w
    }
}
impl Workload for Oltp {
    fn id(&self) -> &'static str {
        self.id
    }
    fn category(&self) -> Category {
        Category::Db
    }
    fn summary(&self) -> &'static str {
        self.summary
    }
    fn params(&self) -> &'static [ParamSpec] {
        self.params
    }
    fn caps(&self) -> Caps {
        Caps {
            destructive: !matches!(
                self.script,
                Script::ReadOnly
                    | Script::PointSelect
                    | Script::RandomPoints
                    | Script::RandomRanges
            ),
            stages: true,
            needs_server: false,
            rand_type: true,
            ..Caps::default()
        }
    }
    fn sysbench_test(&self) -> Option<&'static str> {
        Some(self.test)
    }
    fn counters(&self) -> &'static [Counter] {
        &[
            Counter::Reads,
            Counter::Writes,
            Counter::Other,
            Counter::Errors,
            Counter::Reconnects,
        ]
    }
    fn small_params(&self) -> &'static [(&'static str, &'static str)] {
        if self.params.iter().any(|p| p.name == "table_size") {
            &[("table_size", "100")]
        } else {
            &[]
        }
    }
    fn derive_params(&self, overrides: &mut Vec<(String, String)>) {
        crate::db::driver::record_url_driver(overrides);
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        let cfg = Cfg::new(self, ctx.params)?;
        // Fail before the run with one clear line when the server is unreachable or the
        // tables are missing.
        let mut conn = cfg.target.connect_for_setup(false).map_err(|e| {
            if e.message.contains("no such table") {
                e.map_message(|m| format!("{m}; {}", prepare_first(&cfg)))
            } else {
                e
            }
        })?;
        let used = match cfg.script {
            Script::RandomPoints | Script::RandomRanges => 1,
            _ => cfg.table_count(ctx.threads),
        };
        for i in 1..=used {
            let t = cfg.table(i);
            if let Err(e) = conn.query(&format!("SELECT 1 FROM {t} WHERE 1 = 0")) {
                let _ = &e;
                return Err(WorkloadError::environment(format!(
                    "table '{t}' is not there on {} ({e}); {}",
                    cfg.target,
                    prepare_first(&cfg)
                )));
            }
        }
        let version = conn.server_version();
        let tls = conn.tls();
        drop(conn);
        Ok(Box::new(OltpInstance {
            cfg: Arc::new(cfg),
            dist: ctx.dist,
            threads: ctx.threads.max(1),
            version,
            tls,
        }))
    }
    fn stage(
        &self,
        stage: Stage,
        ctx: &SetupCtx<'_>,
        log: &dyn StageLog,
    ) -> Result<StageDone, WorkloadError> {
        match stage {
            Stage::Prepare => self.prepare(ctx, log),
            Stage::Cleanup => self.cleanup(ctx, log),
        }
    }
}

/// The counts one event of `script` makes with default options: reads, writes, other.
/// (Tests compare runs against it.)
pub fn default_mix(script: Script) -> (u64, u64, u64) {
    match script {
        Script::ReadWrite => (14, 4, 2),
        Script::ReadOnly => (14, 0, 2),
        Script::WriteOnly => (0, 4, 2),
        Script::PointSelect => (1, 0, 0),
        Script::UpdateIndex | Script::UpdateNonIndex | Script::Insert => (0, 1, 0),
        Script::Delete | Script::BulkInsert => (0, 0, 0),
        Script::RandomPoints | Script::RandomRanges => (1, 0, 0),
    }
}
