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

use super::driver::{
    Arg, DbError, Driver, ErrClass, IgnorePolicy, Reconnected, Res, Session, Stmt, Target, count,
    reconnect_window,
};
use hostbench_core::params::{ParamKind, ParamSpec, Params};
use hostbench_core::rand::{Distribution, Rng, Sampler};
use hostbench_core::recorder::{Counter, Counters};
use hostbench_core::result::{Warning, WarningKind};
use hostbench_core::workload::*;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

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

const fn int(
    name: &'static str,
    default: &'static str,
    help: &'static str,
    sb: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Int {
            min: 0,
            max: i32::MAX as i64,
        },
        default,
        unit: "",
        help,
        sysbench: Some(sb),
    }
}

const fn flag(
    name: &'static str,
    default: &'static str,
    help: &'static str,
    sb: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Bool,
        default,
        unit: "",
        help,
        sysbench: Some(sb),
    }
}

const P_TABLE_SIZE: ParamSpec = int(
    "table_size",
    "10000",
    "Number of rows per table",
    "table-size",
);
const P_RANGE_SIZE: ParamSpec = int(
    "range_size",
    "100",
    "Range size for range SELECT queries",
    "range-size",
);
const P_TABLES: ParamSpec = ParamSpec {
    name: "tables",
    kind: ParamKind::Int {
        min: 1,
        max: 1_000_000,
    },
    default: "1",
    unit: "",
    help: "Number of tables",
    sysbench: Some("tables"),
};
const P_POINT: ParamSpec = int(
    "point_selects",
    "10",
    "Number of point SELECT queries per transaction",
    "point-selects",
);
const P_SIMPLE: ParamSpec = int(
    "simple_ranges",
    "1",
    "Number of simple range SELECT queries per transaction",
    "simple-ranges",
);
const P_SUM: ParamSpec = int(
    "sum_ranges",
    "1",
    "Number of SELECT SUM() queries per transaction",
    "sum-ranges",
);
const P_ORDER: ParamSpec = int(
    "order_ranges",
    "1",
    "Number of SELECT ORDER BY queries per transaction",
    "order-ranges",
);
const P_DISTINCT: ParamSpec = int(
    "distinct_ranges",
    "1",
    "Number of SELECT DISTINCT queries per transaction",
    "distinct-ranges",
);
const P_IDX: ParamSpec = int(
    "index_updates",
    "1",
    "Number of UPDATE index queries per transaction",
    "index-updates",
);
const P_NONIDX: ParamSpec = int(
    "non_index_updates",
    "1",
    "Number of UPDATE non-index queries per transaction",
    "non-index-updates",
);
const P_DELINS: ParamSpec = int(
    "delete_inserts",
    "1",
    "Number of DELETE/INSERT combinations per transaction",
    "delete-inserts",
);
const P_RANGES: ParamSpec = flag(
    "range_selects",
    "on",
    "Enable/disable all range SELECT queries",
    "range-selects",
);
const P_AUTOINC: ParamSpec = flag(
    "auto_inc",
    "on",
    "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs",
    "auto-inc",
);
const P_SKIPTRX: ParamSpec = flag(
    "skip_trx",
    "off",
    "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode",
    "skip-trx",
);
const P_SECONDARY: ParamSpec = flag(
    "secondary",
    "off",
    "Use a secondary index in place of the PRIMARY KEY",
    "secondary",
);
const P_CREATE_SEC: ParamSpec = flag(
    "create_secondary",
    "on",
    "Create a secondary index in addition to the PRIMARY KEY",
    "create-secondary",
);
const P_ENGINE: ParamSpec = super::driver::p_text(
    "mysql_storage_engine",
    "innodb",
    "Storage engine, if MySQL is used",
    "mysql-storage-engine",
);
const P_VARIANT: ParamSpec = super::driver::p_text(
    "pgsql_variant",
    "",
    "PostgreSQL variant; only 'redshift' is known (disables create_secondary and delete_inserts)",
    "pgsql-variant",
);
const P_PREFIX: ParamSpec = super::driver::p_text(
    "table_prefix",
    "sbtest",
    "hostbench: table name prefix (tables are PREFIX1..PREFIXN)",
    "table-prefix",
);
const P_POINTS: ParamSpec = int(
    "random_points",
    "10",
    "Number of random points in the IN() clause in generated SELECTs",
    "random-points",
);
const P_NRANGES: ParamSpec = int(
    "number_of_ranges",
    "10",
    "Number of random BETWEEN ranges per SELECT",
    "number-of-ranges",
);
const P_DELTA: ParamSpec = int("delta", "5", "Size of BETWEEN ranges", "delta");

macro_rules! common {
    ($($extra:expr),*) => {
        crate::db_params!(
            P_TABLE_SIZE, P_RANGE_SIZE, P_TABLES, P_POINT, P_SIMPLE, P_SUM, P_ORDER, P_DISTINCT,
            P_IDX, P_NONIDX, P_DELINS, P_RANGES, P_AUTOINC, P_SKIPTRX, P_SECONDARY, P_CREATE_SEC,
            P_ENGINE, P_VARIANT, P_PREFIX $(, $extra)*
        )
    };
}

const COMMON: &[ParamSpec] = common!();
const POINTS: &[ParamSpec] = common!(P_POINTS);
const RANGES: &[ParamSpec] = common!(P_NRANGES, P_DELTA);
/// bulk_insert.lua declares no options, and sysbench 1.0.20 takes any option a script does not
/// declare: `--tables` and `--table-size` are accepted and change nothing (one table per
/// thread, rows as many as events).
const BULK: &[ParamSpec] = crate::db_params!(
    P_PREFIX,
    ParamSpec {
        help: "accepted and ignored, as sysbench's bulk_insert does (it uses one table per thread)",
        ..P_TABLES
    },
    ParamSpec {
        help: "accepted and ignored, as sysbench's bulk_insert does (it inserts as many rows as events)",
        ..P_TABLE_SIZE
    }
);

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

/// Resolved options.
#[derive(Debug, Clone)]
struct Cfg {
    script: Script,
    test: &'static str,
    target: Target,
    prepared: bool,
    ignore: IgnorePolicy,
    reconnect_window: Duration,
    prefix: String,
    tables: u32,
    table_size: u32,
    range_size: u32,
    point_selects: u32,
    simple_ranges: u32,
    sum_ranges: u32,
    order_ranges: u32,
    distinct_ranges: u32,
    index_updates: u32,
    non_index_updates: u32,
    delete_inserts: u32,
    range_selects: bool,
    auto_inc: bool,
    skip_trx: bool,
    secondary: bool,
    create_secondary: bool,
    engine: String,
    random_points: u32,
    number_of_ranges: u32,
    delta: u32,
}

fn get(p: &Params, name: &str, default: u32) -> u32 {
    if p.values().contains_key(name) {
        p.int(name) as u32
    } else {
        default
    }
}

fn getb(p: &Params, name: &str, default: bool) -> bool {
    if p.values().contains_key(name) {
        p.bool(name)
    } else {
        default
    }
}

impl Cfg {
    fn new(w: &Oltp, p: &Params) -> Result<Cfg, WorkloadError> {
        let target = Target::from_params(p)?;
        let prefix = p.text("table_prefix").to_string();
        if prefix.is_empty()
            || !prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
            || prefix.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(WorkloadError(format!(
                "invalid value for --table-prefix: '{prefix}' (letters, digits and '_', not starting with a digit)"
            )));
        }
        let redshift =
            p.values().contains_key("pgsql_variant") && p.text("pgsql_variant") == "redshift";
        let mut c = Cfg {
            script: w.script,
            test: w.test,
            prepared: p.text("db_ps_mode") == "auto",
            ignore: IgnorePolicy::from_params(p),
            reconnect_window: reconnect_window(p),
            prefix,
            tables: get(p, "tables", 1),
            table_size: get(p, "table_size", 10_000),
            range_size: get(p, "range_size", 100),
            point_selects: get(p, "point_selects", 10),
            simple_ranges: get(p, "simple_ranges", 1),
            sum_ranges: get(p, "sum_ranges", 1),
            order_ranges: get(p, "order_ranges", 1),
            distinct_ranges: get(p, "distinct_ranges", 1),
            index_updates: get(p, "index_updates", 1),
            non_index_updates: get(p, "non_index_updates", 1),
            delete_inserts: get(p, "delete_inserts", 1),
            range_selects: getb(p, "range_selects", true),
            auto_inc: getb(p, "auto_inc", true),
            skip_trx: getb(p, "skip_trx", false),
            secondary: getb(p, "secondary", false),
            create_secondary: getb(p, "create_secondary", true),
            engine: if p.values().contains_key("mysql_storage_engine") {
                p.text("mysql_storage_engine").to_string()
            } else {
                "innodb".into()
            },
            random_points: get(p, "random_points", 10),
            number_of_ranges: get(p, "number_of_ranges", 10),
            delta: get(p, "delta", 5),
            target,
        };
        if redshift && c.target.driver() == Driver::Pgsql {
            c.create_secondary = false;
            c.delete_inserts = 0;
        }
        if c.script == Script::PointSelect {
            c.point_selects = 1;
        }
        if !c
            .engine
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        {
            return Err(WorkloadError(format!(
                "invalid value for --mysql-storage-engine: '{}' (an engine name such as innodb, myisam, aria)",
                c.engine
            )));
        }
        if c.script == Script::BulkInsert {
            // Ignored, as sysbench ignores them (see BULK).
            c.tables = 1;
            c.table_size = 10_000;
        }
        if matches!(c.script, Script::RandomPoints | Script::RandomRanges) {
            // sysbench 1.0.20 prepares every table (its parallel prepare command wins over
            // the script's own prepare(), which would refuse --tables > 1) and reads only
            // the first one.
            if c.random_points == 0 || c.number_of_ranges == 0 {
                return Err(WorkloadError(
                    "--random-points and --number-of-ranges must be at least 1".into(),
                ));
            }
        }
        if c.table_size == 0 && !matches!(c.script, Script::Insert | Script::BulkInsert) {
            return Err(WorkloadError(format!(
                "--table-size=0 leaves {} nothing to read or change (use at least 1)",
                c.test
            )));
        }
        Ok(c)
    }

    fn table(&self, i: u32) -> String {
        format!("{}{i}", self.prefix)
    }

    fn index_name(&self, base: &str, i: u32) -> String {
        if self.prefix == "sbtest" {
            format!("{base}_{i}")
        } else {
            format!("{}_{base}_{i}", self.prefix)
        }
    }

    fn driver(&self) -> Driver {
        self.target.driver()
    }

    /// True when the event writes (SQLite then takes the write lock at BEGIN).
    fn writes(&self) -> bool {
        !matches!(
            self.script,
            Script::ReadOnly | Script::PointSelect | Script::RandomPoints | Script::RandomRanges
        )
    }

    fn explicit_trx(&self) -> bool {
        !self.skip_trx
            && matches!(
                self.script,
                Script::ReadWrite | Script::ReadOnly | Script::WriteOnly
            )
    }

    fn create_sql(&self, i: u32) -> String {
        let t = self.table(i);
        if self.script == Script::BulkInsert {
            return format!(
                "CREATE TABLE IF NOT EXISTS {t} (\n  id INTEGER NOT NULL,\n  k INTEGER DEFAULT '0' NOT NULL,\n  PRIMARY KEY (id))"
            );
        }
        let (id_def, key, tail) = match self.driver() {
            Driver::Mysql => (
                if self.auto_inc {
                    "INTEGER NOT NULL AUTO_INCREMENT"
                } else {
                    "INTEGER NOT NULL"
                },
                if self.secondary {
                    ",\n  KEY xid (id)"
                } else {
                    ",\n  PRIMARY KEY (id)"
                },
                format!(" /*! ENGINE = {} */ ", self.engine),
            ),
            Driver::Pgsql => (
                if self.auto_inc {
                    "SERIAL"
                } else {
                    "INTEGER NOT NULL"
                },
                if self.secondary {
                    ""
                } else {
                    ",\n  PRIMARY KEY (id)"
                },
                " ".to_string(),
            ),
            // INTEGER + PRIMARY KEY makes id SQLite's rowid: auto-assigned when omitted.
            Driver::Sqlite => (
                "INTEGER NOT NULL",
                if self.secondary {
                    ""
                } else {
                    ",\n  PRIMARY KEY (id)"
                },
                " ".to_string(),
            ),
        };
        format!(
            "CREATE TABLE {t}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL{key}\n){tail}"
        )
    }

    /// Tables this script uses: sbtest1..tables (bulk_insert: one per thread).
    fn table_count(&self, threads: usize) -> u32 {
        if self.script == Script::BulkInsert {
            threads as u32
        } else {
            self.tables
        }
    }
}

/// Fills `buf` with sysbench's c/pad shape: groups of 11 random digits joined by '-'.
#[inline]
pub fn fill_digits(rng: &mut Rng, buf: &mut [u8]) {
    let mut bits = 0u64;
    let mut left = 0;
    for (i, b) in buf.iter_mut().enumerate() {
        if (i + 1) % 12 == 0 {
            *b = b'-';
            continue;
        }
        if left == 0 {
            bits = rng.next_u64();
            left = 6; // six 10-bit chunks per draw
        }
        // A 10-bit chunk scaled to 0..9 (bias < 0.5 %, invisible in a benchmark string).
        *b = b'0' + (((bits & 0x3FF) * 10) >> 10) as u8;
        bits >>= 10;
        left -= 1;
    }
}

fn digits(buf: &[u8]) -> &str {
    std::str::from_utf8(buf).unwrap_or("")
}

/// One thread's statements for one table (`NONE` when the script does not use one).
#[derive(Clone, Copy)]
struct TableStmts {
    point: Stmt,
    simple: Stmt,
    sum: Stmt,
    order: Stmt,
    distinct: Stmt,
    idx_upd: Stmt,
    nonidx_upd: Stmt,
    delete: Stmt,
    insert: Stmt,
}

const NONE: Stmt = usize::MAX;

struct OltpWorker {
    cfg: Arc<Cfg>,
    s: Session,
    rng: Rng,
    ids: Sampler,
    tabs: Vec<TableStmts>,
    begin: Stmt,
    commit: Stmt,
    special: Stmt,
    c: [u8; 119],
    pad: [u8; 59],
    text: String,
    tid: usize,
    threads: usize,
    bulk_rows: u64,
    in_bulk: bool,
    args: Vec<i32>,
    range_sampler: Sampler,
}

impl OltpWorker {
    fn prepare_all(&mut self) -> Result<(), DbError> {
        let cfg = self.cfg.clone();
        let rw = matches!(cfg.script, Script::ReadWrite | Script::ReadOnly);
        let wo = matches!(cfg.script, Script::ReadWrite | Script::WriteOnly);
        if cfg.explicit_trx() {
            let begin = if cfg.driver() == Driver::Sqlite && cfg.writes() {
                // A deferred read-then-write transaction in WAL mode can fail with a busy
                // snapshot that waiting cannot fix; take the write lock up front.
                "BEGIN IMMEDIATE"
            } else {
                "BEGIN"
            };
            self.begin = self.s.prepare(begin)?;
            self.commit = self.s.prepare("COMMIT")?;
        }
        self.tabs.clear();
        match cfg.script {
            Script::RandomPoints => {
                let list = vec!["?"; cfg.random_points as usize].join(", ");
                self.special = self.s.prepare(&format!(
                    "SELECT id, k, c, pad FROM {} WHERE k IN ({list})",
                    cfg.table(1)
                ))?;
                return Ok(());
            }
            Script::RandomRanges => {
                let list = vec!["k BETWEEN ? AND ?"; cfg.number_of_ranges as usize].join(" OR ");
                self.special = self.s.prepare(&format!(
                    "SELECT count(k) FROM {} WHERE {list}",
                    cfg.table(1)
                ))?;
                return Ok(());
            }
            Script::Insert | Script::BulkInsert => return Ok(()),
            _ => {}
        }
        for i in 1..=cfg.tables {
            let t = cfg.table(i);
            let mut ts = TableStmts {
                point: NONE,
                simple: NONE,
                sum: NONE,
                order: NONE,
                distinct: NONE,
                idx_upd: NONE,
                nonidx_upd: NONE,
                delete: NONE,
                insert: NONE,
            };
            let ranges = rw && cfg.range_selects;
            if rw || cfg.script == Script::PointSelect {
                ts.point = self.s.prepare(&format!("SELECT c FROM {t} WHERE id=?"))?;
            }
            if ranges {
                ts.simple = self
                    .s
                    .prepare(&format!("SELECT c FROM {t} WHERE id BETWEEN ? AND ?"))?;
                ts.sum = self
                    .s
                    .prepare(&format!("SELECT SUM(k) FROM {t} WHERE id BETWEEN ? AND ?"))?;
                ts.order = self.s.prepare(&format!(
                    "SELECT c FROM {t} WHERE id BETWEEN ? AND ? ORDER BY c"
                ))?;
                ts.distinct = self.s.prepare(&format!(
                    "SELECT DISTINCT c FROM {t} WHERE id BETWEEN ? AND ? ORDER BY c"
                ))?;
            }
            if wo || cfg.script == Script::UpdateIndex {
                ts.idx_upd = self
                    .s
                    .prepare(&format!("UPDATE {t} SET k=k+1 WHERE id=?"))?;
            }
            if wo || cfg.script == Script::UpdateNonIndex {
                ts.nonidx_upd = self.s.prepare(&format!("UPDATE {t} SET c=? WHERE id=?"))?;
            }
            if wo || cfg.script == Script::Delete {
                ts.delete = self.s.prepare(&format!("DELETE FROM {t} WHERE id=?"))?;
            }
            if wo {
                ts.insert = self.s.prepare(&format!(
                    "INSERT INTO {t} (id, k, c, pad) VALUES (?, ?, ?, ?)"
                ))?;
            }
            self.tabs.push(ts);
        }
        Ok(())
    }

    #[inline]
    fn id(&mut self) -> i32 {
        self.ids.sample(&mut self.rng) as i32
    }

    #[inline]
    fn table(&mut self) -> usize {
        (self.rng.uniform(1, self.cfg.tables as u64) - 1) as usize
    }

    #[inline]
    fn run(&mut self, c: &Counters, s: Stmt, args: &[Arg<'_>]) -> Result<(), DbError> {
        let r = self.s.exec(s, args)?;
        count(c, r);
        Ok(())
    }

    fn ranges(
        &mut self,
        c: &Counters,
        n: u32,
        pick: fn(&TableStmts) -> Stmt,
    ) -> Result<(), DbError> {
        let t = self.table();
        let s = pick(&self.tabs[t]);
        for _ in 0..n {
            let id = self.id();
            let hi = id.saturating_add(self.cfg.range_size as i32 - 1);
            self.run(c, s, &[Arg::Int(id), Arg::Int(hi)])?;
        }
        Ok(())
    }

    fn point_selects(&mut self, c: &Counters) -> Result<(), DbError> {
        let t = self.table();
        let s = self.tabs[t].point;
        for _ in 0..self.cfg.point_selects {
            let id = self.id();
            self.run(c, s, &[Arg::Int(id)])?;
        }
        Ok(())
    }

    fn index_updates(&mut self, c: &Counters) -> Result<(), DbError> {
        let t = self.table();
        let s = self.tabs[t].idx_upd;
        for _ in 0..self.cfg.index_updates {
            let id = self.id();
            self.run(c, s, &[Arg::Int(id)])?;
        }
        Ok(())
    }

    fn non_index_updates(&mut self, c: &Counters) -> Result<(), DbError> {
        let t = self.table();
        let s = self.tabs[t].nonidx_upd;
        for _ in 0..self.cfg.non_index_updates {
            fill_digits(&mut self.rng, &mut self.c);
            let id = self.id();
            let r = self
                .s
                .exec(s, &[Arg::Text(digits(&self.c)), Arg::Int(id)])?;
            count(c, r);
        }
        Ok(())
    }

    fn delete_inserts(&mut self, c: &Counters) -> Result<(), DbError> {
        let t = self.table();
        let (del, ins) = (self.tabs[t].delete, self.tabs[t].insert);
        for _ in 0..self.cfg.delete_inserts {
            let id = self.id();
            let k = self.id();
            fill_digits(&mut self.rng, &mut self.c);
            fill_digits(&mut self.rng, &mut self.pad);
            self.run(c, del, &[Arg::Int(id)])?;
            let r = self.s.exec(
                ins,
                &[
                    Arg::Int(id),
                    Arg::Int(k),
                    Arg::Text(digits(&self.c)),
                    Arg::Text(digits(&self.pad)),
                ],
            )?;
            count(c, r);
        }
        Ok(())
    }

    fn insert(&mut self, c: &Counters) -> Result<(), DbError> {
        let t = self.rng.uniform(1, self.cfg.tables as u64) as u32;
        let k = self.id();
        fill_digits(&mut self.rng, &mut self.c);
        fill_digits(&mut self.rng, &mut self.pad);
        self.text.clear();
        let (prefix, cv, pv) = (&self.cfg.prefix, digits(&self.c), digits(&self.pad));
        if self.cfg.auto_inc {
            if self.cfg.driver() == Driver::Mysql {
                let _ = write!(
                    self.text,
                    "INSERT INTO {prefix}{t} (id, k, c, pad) VALUES (0, {k}, '{cv}', '{pv}')"
                );
            } else {
                let _ = write!(
                    self.text,
                    "INSERT INTO {prefix}{t} (k, c, pad) VALUES ({k}, '{cv}', '{pv}')"
                );
            }
        } else {
            // sysbench: a unique random uint32 shifted into INT's range; a rare collision is
            // a unique violation, an ignorable error that retries the event.
            let id = self.rng.next_u64() as u32 as i64 - 2_147_483_648;
            let _ = write!(
                self.text,
                "INSERT INTO {prefix}{t} (id, k, c, pad) VALUES ({id}, {k}, '{cv}', '{pv}')"
            );
        }
        let r = self.s.query(&self.text)?;
        count(c, r);
        Ok(())
    }

    fn bulk_flush(&mut self, c: Option<&Counters>) -> Result<(), DbError> {
        if !self.in_bulk {
            return Ok(());
        }
        self.in_bulk = false;
        let r = self.s.query(&self.text)?;
        if let Some(c) = c {
            count(c, r);
        }
        Ok(())
    }

    fn bulk(&mut self, c: &Counters) -> Result<(), DbError> {
        self.bulk_rows += 1;
        let n = self.bulk_rows;
        let mut tuple = [0u8; 48];
        let len = {
            let mut w = &mut tuple[..];
            let _ = std::io::Write::write_fmt(&mut w, format_args!("({n},{n})"));
            48 - w.len()
        };
        if self.in_bulk && self.text.len() + 1 + len > BULK_BYTES {
            self.bulk_flush(Some(c))?;
        }
        if !self.in_bulk {
            self.text.clear();
            let _ = write!(
                self.text,
                "INSERT INTO {}{} VALUES",
                self.cfg.prefix,
                self.tid + 1
            );
            self.in_bulk = true;
        } else {
            self.text.push(',');
        }
        self.text.push_str(digits(&tuple[..len]));
        Ok(())
    }

    fn attempt(&mut self, c: &Counters) -> Result<(), DbError> {
        let cfg = self.cfg.clone();
        let trx = cfg.explicit_trx();
        if trx {
            self.run(c, self.begin, &[])?;
        }
        match cfg.script {
            Script::ReadWrite | Script::ReadOnly | Script::WriteOnly => {
                if cfg.script != Script::WriteOnly {
                    self.point_selects(c)?;
                    if cfg.range_selects {
                        self.ranges(c, cfg.simple_ranges, |t| t.simple)?;
                        self.ranges(c, cfg.sum_ranges, |t| t.sum)?;
                        self.ranges(c, cfg.order_ranges, |t| t.order)?;
                        self.ranges(c, cfg.distinct_ranges, |t| t.distinct)?;
                    }
                }
                if cfg.script != Script::ReadOnly {
                    self.index_updates(c)?;
                    self.non_index_updates(c)?;
                    self.delete_inserts(c)?;
                }
            }
            Script::PointSelect => self.point_selects(c)?,
            Script::UpdateIndex => self.index_updates(c)?,
            Script::UpdateNonIndex => self.non_index_updates(c)?,
            Script::Delete => {
                let t = self.table();
                let s = self.tabs[t].delete;
                let id = self.id();
                self.run(c, s, &[Arg::Int(id)])?;
            }
            Script::Insert => self.insert(c)?,
            Script::BulkInsert => self.bulk(c)?,
            Script::RandomPoints | Script::RandomRanges => {
                self.args.clear();
                let n = if cfg.script == Script::RandomPoints {
                    cfg.random_points
                } else {
                    cfg.number_of_ranges
                };
                for _ in 0..n {
                    let v = self.range_sampler.sample(&mut self.rng) as i32;
                    self.args.push(v);
                    if cfg.script == Script::RandomRanges {
                        self.args.push(v.saturating_add(cfg.delta as i32));
                    }
                }
                let mut buf = [Arg::Int(0); 64];
                let n = self.args.len();
                if n <= buf.len() {
                    for (b, v) in buf.iter_mut().zip(&self.args) {
                        *b = Arg::Int(*v);
                    }
                    self.run(c, self.special, &buf[..n])?;
                } else {
                    let v: Vec<Arg<'_>> = self.args.iter().map(|v| Arg::Int(*v)).collect();
                    let r = self.s.exec(self.special, &v)?;
                    count(c, r);
                }
            }
        }
        if trx {
            self.run(c, self.commit, &[])?;
        }
        Ok(())
    }
}

impl EventWorker for OltpWorker {
    fn event(&mut self, c: &Counters) -> Result<Step, WorkloadError> {
        loop {
            let e = match self.attempt(c) {
                Ok(()) => return Ok(Step::Done),
                Err(e) => e,
            };
            if !self.cfg.ignore.ignores(&e) {
                return Err(WorkloadError(format!(
                    "{} on {}: {e} (add the code to --db-ignore-errors to count it and go on)",
                    self.cfg.test, self.cfg.target
                )));
            }
            c.add(Counter::Errors, 1);
            if e.class == ErrClass::Lost {
                self.in_bulk = false;
                let r = self
                    .s
                    .reconnect(self.cfg.reconnect_window)
                    .map_err(|e| WorkloadError(format!("{}: {e}", self.cfg.test)))?;
                if r == Reconnected::RunOver {
                    // The run ended while the server was away: this transaction never
                    // finished, so it is not an event.
                    return Ok(Step::End);
                }
                // Counted once the new connection is there: one per lost connection, however
                // many tries it took.
                c.add(Counter::Reconnects, 1);
            } else {
                // PostgreSQL refuses everything in an aborted transaction until ROLLBACK.
                let _ = self.s.query("ROLLBACK");
            }
            if hostbench_core::runner::INTERRUPT.load(Ordering::Relaxed) {
                return Ok(Step::Done);
            }
        }
    }
}

impl Drop for OltpWorker {
    fn drop(&mut self) {
        // sysbench's thread_done: the rows still buffered are sent, outside the timed run.
        let _ = self.bulk_flush(None);
    }
}

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
            WorkloadError(format!(
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

fn prepare_first(cfg: &Cfg) -> String {
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

fn missing_hint(e: &DbError, cfg: &Cfg) -> String {
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
    fn prepare(&self, ctx: &SetupCtx<'_>, log: &dyn StageLog) -> Result<StageDone, WorkloadError> {
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
                                WorkloadError(format!(
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
                        .unwrap_or_else(|_| Err(WorkloadError("a prepare thread panicked".into())))
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

    fn cleanup(&self, ctx: &SetupCtx<'_>, log: &dyn StageLog) -> Result<StageDone, WorkloadError> {
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
        let fail =
            |e: DbError| WorkloadError(format!("{} cleanup on {}: {e}", cfg.test, cfg.target));
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
            return Err(WorkloadError(format!(
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
                            WorkloadError(format!(
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
                        .unwrap_or_else(|_| Err(WorkloadError("a prewarm thread panicked".into())))
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
    conn: &mut dyn super::driver::Conn,
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
            if e.0.contains("no such table") {
                WorkloadError(format!("{e}; {}", prepare_first(&cfg)))
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
                return Err(WorkloadError(format!(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_and_pad_have_sysbench_shape() {
        let mut rng = Rng::for_thread(1, 0);
        let mut c = [0u8; 119];
        fill_digits(&mut rng, &mut c);
        let s = digits(&c);
        let groups: Vec<&str> = s.split('-').collect();
        assert_eq!(groups.len(), 10, "{s}");
        assert!(
            groups
                .iter()
                .all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit()))
        );
        let mut pad = [0u8; 59];
        fill_digits(&mut rng, &mut pad);
        assert_eq!(digits(&pad).split('-').count(), 5);
    }

    #[test]
    fn ddl_per_driver() {
        let p = Params::resolve(READ_WRITE.id, READ_WRITE.params, &[]).unwrap();
        let c = Cfg::new(&READ_WRITE, &p).unwrap();
        let sql = c.create_sql(1);
        assert!(
            sql.starts_with("CREATE TABLE sbtest1(\n  id INTEGER NOT NULL,"),
            "{sql}"
        );
        assert!(sql.contains("PRIMARY KEY (id)"));
        let p = Params::resolve(
            READ_WRITE.id,
            READ_WRITE.params,
            &[("db_driver".into(), "mysql".into())],
        )
        .unwrap();
        let c = Cfg::new(&READ_WRITE, &p).unwrap();
        assert!(c.create_sql(2).contains("AUTO_INCREMENT"));
        assert!(c.create_sql(2).contains("/*! ENGINE = innodb */"));
    }

    #[test]
    fn bad_options_are_clear() {
        let p = Params::resolve(
            READ_WRITE.id,
            READ_WRITE.params,
            &[("table_prefix".into(), "x; drop".into())],
        )
        .unwrap();
        assert!(
            Cfg::new(&READ_WRITE, &p)
                .unwrap_err()
                .0
                .contains("--table-prefix")
        );
        let p = Params::resolve(
            SELECT_RANDOM_POINTS.id,
            SELECT_RANDOM_POINTS.params,
            &[("tables".into(), "2".into())],
        )
        .unwrap();
        assert_eq!(
            Cfg::new(&SELECT_RANDOM_POINTS, &p).unwrap().tables,
            2,
            "sysbench 1.0.20 takes --tables > 1"
        );
    }
}
