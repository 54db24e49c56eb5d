//! `insert-race` (`db.insert_race`): the parallel single-row INSERT test DBAs use to compare
//! disks. `--sessions` workers (threads), one connection each, leave a start barrier
//! together and each inserts `--rows` rows one prepared statement at a time into a table
//! with an auto-increment key, a date, two integer columns and secondary indexes on the
//! date and the first integer. One event = one INSERT (plus the COMMIT that ends a batch).
//!
//! `table_mode`: `temp` (a temporary table per session; the blog's MyISAM-temp setup when
//! `engine=myisam` on MySQL), `per-session` (a regular table `PREFIX_<n>` per session) or
//! `shared` (every session inserts into `PREFIX_shared`). `commit`: `row` (autocommit: one
//! durable commit per row), `batch:N` (COMMIT every N rows) or `none` (one transaction per
//! session, committed with its last row). Tables are created before the barrier and dropped
//! when the workers go (temp tables vanish with their connection).
//!
//! The headline is the makespan (start barrier to the last session done, the runner's total
//! time since the workload ends itself); per-session times are the fairness block, rows/s
//! the event rate, per-insert latency the histogram.

use super::driver::{
    Arg, DbError, Driver, ErrClass, IgnorePolicy, Reconnected, Session, Stmt, Target, count,
    reconnect_window,
};
use hostbench_core::names::insert_race;
use hostbench_core::params::{ParamKind, ParamSpec, Params};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::{Counter, Counters};
use hostbench_core::result::{
    Better, Column, Figure, FigureDef, Row, RunResult, Table, Warning, WarningKind,
};
use hostbench_core::workload::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The result table that names the database under test: one row labelled with the server
/// and the engine the tables really use (`MySQL/MariaDB 10.11.6, engine MyISAM`), with a
/// `transactions` column (1 when the engine has them).
pub use hostbench_core::names::insert_race::SERVER_TABLE;

/// The insert test.
pub struct InsertRace;

const PARAMS: &[ParamSpec] = crate::db_params!(
    ParamSpec {
        name: "rows",
        kind: ParamKind::Int {
            min: 1,
            max: i32::MAX as i64,
        },
        default: "100000",
        unit: "rows",
        help: "rows each session inserts",
        sysbench: None,
    },
    ParamSpec {
        name: "table_mode",
        kind: ParamKind::Choice(&["temp", "per-session", "shared"]),
        default: "temp",
        unit: "",
        help: "temp: a temporary table per session; per-session: a regular table per session; shared: one table for all sessions",
        sysbench: None,
    },
    ParamSpec {
        name: "commit",
        kind: ParamKind::Text,
        default: "row",
        unit: "",
        help: "row: autocommit, one commit per row; batch:N: COMMIT every N rows; none: one transaction per session, committed at its end",
        sysbench: None,
    },
    ParamSpec {
        name: "engine",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "MySQL/MariaDB storage engine of the tables (myisam, innodb, aria); empty = the server's default",
        sysbench: None,
    },
    ParamSpec {
        name: "values",
        kind: ParamKind::Choice(&["random", "seq"]),
        default: "random",
        unit: "",
        help: "random: d, a, b drawn uniformly (index inserts land anywhere); seq: increasing values",
        sysbench: None,
    },
    super::driver::p_text(
        "table_prefix",
        "hb_insert_race",
        "table name prefix (PREFIX_<session>, PREFIX_shared)",
        "table-prefix"
    ),
    ParamSpec {
        name: "mode",
        kind: ParamKind::Choice(&["client", "procedure"]),
        default: "client",
        unit: "",
        help: "client: the session sends one prepared INSERT per row; procedure: the session CALLs a stored procedure that inserts the rows one by one in a WHILE loop on the server (MySQL/MariaDB, PostgreSQL)",
        sysbench: None,
    },
    ParamSpec {
        name: "stagger",
        kind: ParamKind::Seconds,
        default: "0",
        unit: "s",
        help: "procedure mode: session n starts its CALL n × stagger after the start barrier (the write-up's `sleep 1` between sessions); 0 = all together",
        sysbench: None,
    },
);

/// How often to commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitMode {
    /// Autocommit.
    Row,
    /// COMMIT every N rows.
    Batch(u64),
    /// One transaction per session.
    None,
}

impl CommitMode {
    /// Parses `row`, `batch:N`, `none`.
    pub fn parse(s: &str) -> Result<CommitMode, WorkloadError> {
        match s.trim() {
            "row" => Ok(CommitMode::Row),
            "none" => Ok(CommitMode::None),
            b => match b.strip_prefix("batch:").map(|n| n.parse::<u64>()) {
                Some(Ok(n)) if n >= 1 => Ok(CommitMode::Batch(n)),
                _ => Err(WorkloadError::usage(format!(
                    "invalid value for commit: '{s}' (use row, batch:N with N ≥ 1, or none)"
                ))),
            },
        }
    }
}

#[derive(Debug, Clone)]
struct Cfg {
    target: Target,
    prepared: bool,
    ignore: IgnorePolicy,
    reconnect_window: std::time::Duration,
    rows: u64,
    mode: String,
    commit: CommitMode,
    engine: String,
    seq: bool,
    prefix: String,
    /// The tables' engine has transactions (MyISAM, Aria, MEMORY do not): only then does a
    /// lost connection roll back the rows since the last COMMIT.
    transactional: bool,
    /// `mode=procedure`: the server inserts the rows in a stored procedure's loop.
    procedure: bool,
    /// Procedure mode: session n CALLs n × this after the start barrier.
    stagger: std::time::Duration,
}

impl Cfg {
    fn new(p: &Params) -> Result<Cfg, WorkloadError> {
        let prefix = p.text("table_prefix").to_string();
        let ident = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if prefix.is_empty() || !ident(&prefix) || prefix.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(WorkloadError::usage(format!(
                "invalid value for table_prefix: '{prefix}' (letters, digits and '_')"
            )));
        }
        let engine = p.text("engine").to_string();
        if !ident(&engine) {
            return Err(WorkloadError::usage(format!(
                "invalid value for engine: '{engine}' (an engine name such as myisam, innodb, aria)"
            )));
        }
        Ok(Cfg {
            target: Target::from_params(p)?,
            prepared: p.text("db_ps_mode") == "auto",
            ignore: IgnorePolicy::from_params(p),
            reconnect_window: reconnect_window(p),
            rows: p.int("rows") as u64,
            mode: p.text("table_mode").to_string(),
            commit: CommitMode::parse(p.text("commit"))?,
            engine,
            seq: p.text("values") == "seq",
            prefix,
            transactional: true,
            procedure: p.text("mode") == "procedure",
            stagger: std::time::Duration::try_from_secs_f64(p.float("stagger")).map_err(|_| {
                WorkloadError::usage("invalid value for stagger: use seconds such as 1s or 0.5")
            })?,
        })
    }

    fn table(&self, sid: usize) -> String {
        if self.procedure {
            // One name for every session: the procedure names it, and each session's
            // temporary table hides the others'.
            return format!("{}_t", self.prefix);
        }
        match self.mode.as_str() {
            "shared" => format!("{}_shared", self.prefix),
            _ => format!("{}_{}", self.prefix, sid + 1),
        }
    }

    fn create_sql(&self, sid: usize) -> String {
        let t = self.table(sid);
        let temp = if self.mode == "temp" {
            "TEMPORARY "
        } else {
            ""
        };
        let exists = if self.mode == "shared" {
            "IF NOT EXISTS "
        } else {
            ""
        };
        match self.target.driver() {
            Driver::Mysql => {
                let engine = if self.engine.is_empty() {
                    String::new()
                } else {
                    format!(" ENGINE={}", self.engine)
                };
                format!(
                    "CREATE {temp}TABLE {exists}{t} (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, d DATE NOT NULL, a INT NOT NULL, b INT NOT NULL, KEY {t}_d (d), KEY {t}_a (a)){engine}"
                )
            }
            Driver::Pgsql => format!(
                "CREATE {temp}TABLE {exists}{t} (id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, d DATE NOT NULL, a INTEGER NOT NULL, b INTEGER NOT NULL)"
            ),
            // INTEGER PRIMARY KEY is the rowid (no AUTOINCREMENT: it would add a write to
            // sqlite_sequence per row); SQLite has no DATE type: d is 'YYYY-MM-DD' text.
            Driver::Sqlite => format!(
                "CREATE {temp}TABLE {exists}{t} (id INTEGER PRIMARY KEY, d TEXT NOT NULL, a INTEGER NOT NULL, b INTEGER NOT NULL)"
            ),
        }
    }

    fn index_sql(&self, sid: usize) -> Vec<String> {
        let t = self.table(sid);
        let exists = if self.mode == "shared" {
            "IF NOT EXISTS "
        } else {
            ""
        };
        match self.target.driver() {
            Driver::Mysql => Vec::new(),
            _ => vec![
                format!("CREATE INDEX {exists}{t}_d ON {t}(d)"),
                format!("CREATE INDEX {exists}{t}_a ON {t}(a)"),
            ],
        }
    }

    fn insert_sql(&self, sid: usize) -> String {
        let t = self.table(sid);
        match self.target.driver() {
            Driver::Mysql => format!(
                "INSERT INTO {t} (d, a, b) VALUES (DATE_ADD('2000-01-01', INTERVAL ? DAY), ?, ?)"
            ),
            Driver::Pgsql => {
                format!(
                    "INSERT INTO {t} (d, a, b) VALUES (DATE '2000-01-01' + CAST(? AS INTEGER), ?, ?)"
                )
            }
            Driver::Sqlite => format!("INSERT INTO {t} (d, a, b) VALUES (date(2451545 + ?), ?, ?)"),
        }
    }

    /// The stored procedure's name.
    fn proc_name(&self) -> String {
        format!("{}_proc", self.prefix)
    }

    /// The table whose first row tells running procedures to stop (Ctrl-C, a failed run):
    /// a CALL the client abandoned would otherwise go on inserting on the server.
    fn stop_table(&self) -> String {
        format!("{}_stop", self.prefix)
    }

    /// Rows between two looks at the stop table (one small lookup per 10 000 inserts).
    const STOP_CHECK: u64 = 10_000;

    /// The stored procedure of `mode=procedure`: `PROC(n)` inserts n rows one by one in a
    /// WHILE loop into the session's temporary table, committing as `--commit` says.
    fn procedure_sql(&self) -> Vec<String> {
        let (t, name) = (self.table(0), self.proc_name());
        match self.target.driver() {
            Driver::Mysql => {
                let values = if self.seq {
                    "DATE_ADD('2000-01-01', INTERVAL i % 10000 DAY), i, i"
                } else {
                    "DATE_ADD('2000-01-01', INTERVAL FLOOR(RAND() * 10000) DAY), \
                     FLOOR(RAND() * 4294967296) - 2147483648, FLOOR(RAND() * 4294967296) - 2147483648"
                };
                let (open, every, close) = match self.commit {
                    CommitMode::Row => ("", String::new(), ""),
                    CommitMode::Batch(k) => (
                        "START TRANSACTION; ",
                        format!(" IF i % {k} = 0 THEN COMMIT; START TRANSACTION; END IF;"),
                        " COMMIT;",
                    ),
                    CommitMode::None => ("START TRANSACTION; ", String::new(), " COMMIT;"),
                };
                let (stop, k) = (self.stop_table(), Self::STOP_CHECK);
                vec![
                    // Not transactional, so a stop row is seen inside any open transaction.
                    format!("CREATE TABLE IF NOT EXISTS {stop} (x INT) ENGINE=MEMORY"),
                    format!("DELETE FROM {stop}"),
                    format!("DROP PROCEDURE IF EXISTS {name}"),
                    format!(
                        "CREATE PROCEDURE {name}(IN n INT) BEGIN DECLARE i INT DEFAULT 0; {open}\
                         WHILE i < n DO INSERT INTO {t} (d, a, b) VALUES ({values}); SET i = i + 1;{every} \
                         IF i % {k} = 0 AND EXISTS (SELECT 1 FROM {stop}) THEN \
                         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'insert-race stopped'; END IF; \
                         END WHILE;{close} END"
                    ),
                ]
            }
            _ => {
                let values = if self.seq {
                    "DATE '2000-01-01' + i % 10000, i, i"
                } else {
                    "DATE '2000-01-01' + floor(random() * 10000)::integer, \
                     (floor(random() * 4294967296) - 2147483648)::integer, \
                     (floor(random() * 4294967296) - 2147483648)::integer"
                };
                let every = match self.commit {
                    CommitMode::Row => " COMMIT;".to_string(),
                    CommitMode::Batch(k) => format!(" IF i % {k} = 0 THEN COMMIT; END IF;"),
                    CommitMode::None => String::new(),
                };
                let (stop, k) = (self.stop_table(), Self::STOP_CHECK);
                vec![
                    // Each statement of the loop sees rows committed before it started.
                    format!("CREATE TABLE IF NOT EXISTS {stop} (x integer)"),
                    format!("DELETE FROM {stop}"),
                    format!(
                        "CREATE OR REPLACE PROCEDURE {name}(n integer) LANGUAGE plpgsql AS $hb$ \
                         DECLARE i integer := 0; BEGIN WHILE i < n LOOP \
                         INSERT INTO {t} (d, a, b) VALUES ({values}); i := i + 1;{every} \
                         IF i % {k} = 0 AND EXISTS (SELECT 1 FROM {stop}) THEN \
                         RAISE EXCEPTION 'insert-race stopped'; END IF; \
                         END LOOP; END $hb$"
                    ),
                ]
            }
        }
    }
}

/// A session of `mode=procedure`: waits its turn (`stagger`), then one CALL inserts every
/// row on the server; the CALL is the session's one operation, timed from its start.
struct ProcWorker {
    cfg: Arc<Cfg>,
    s: Session,
    sid: usize,
}

impl LoopWorker for ProcWorker {
    fn run(
        &mut self,
        ctl: &mut hostbench_core::runner::RunControl<'_>,
    ) -> Result<(), WorkloadError> {
        let start = ctl.now();
        let wait = self.cfg.stagger.as_nanos() as u64 * self.sid as u64;
        if wait > 0 {
            let due = start + ctl.clock().from_ns(wait);
            ctl.wait_until(due);
        }
        let now = ctl.now();
        let Some(intended) = ctl.next_op(now) else {
            return Ok(());
        };
        let call = format!("CALL {}({})", self.cfg.proc_name(), self.cfg.rows);
        let r = self.s.query(&call);
        let done = ctl.now();
        if ctl.aborted() {
            // Stopped (the stop table) or abandoned: not a finished session.
            return Ok(());
        }
        r.map_err(|e| {
            WorkloadError::failed(format!(
                "insert-race session {} on {}: {call}: {e}",
                self.sid + 1,
                self.cfg.target
            ))
        })?;
        ctl.counters().add(Counter::Writes, self.cfg.rows);
        ctl.record(intended, done);
        Ok(())
    }
}

/// The engine the tables get and whether it has transactions, asked of a MySQL/MariaDB
/// server with queries whose row count is the answer (the clients count rows; they do not
/// copy values out). `None` when the server does not say.
fn mysql_engine(conn: &mut dyn super::driver::Conn, cfg: &Cfg) -> Option<(String, bool)> {
    let expr = if !cfg.engine.is_empty() {
        format!("'{}'", cfg.engine)
    } else if cfg.mode == "temp" {
        "COALESCE(NULLIF(@@default_tmp_storage_engine, ''), @@default_storage_engine)".into()
    } else {
        "@@default_storage_engine".into()
    };
    let yes = |conn: &mut dyn super::driver::Conn, sql: &str| matches!(conn.query(sql), Ok(super::driver::Res::Rows(n)) if n > 0);
    let name = [
        "InnoDB", "MyISAM", "Aria", "MEMORY", "RocksDB", "TokuDB", "ARCHIVE", "CSV",
    ]
    .into_iter()
    .find(|e| {
        yes(
            conn,
            &format!("SELECT 1 FROM DUAL WHERE UPPER({expr}) = UPPER('{e}')"),
        )
    })
    .map(str::to_string)
    .or_else(|| (!cfg.engine.is_empty()).then(|| cfg.engine.clone()))?;
    let transactional = !yes(
        conn,
        &format!(
            "SELECT 1 FROM information_schema.ENGINES WHERE UPPER(ENGINE) = UPPER({expr}) AND TRANSACTIONS = 'NO'"
        ),
    );
    Some((name, transactional))
}

struct RaceWorker {
    cfg: Arc<Cfg>,
    s: Session,
    rng: Rng,
    insert: Stmt,
    begin: Stmt,
    commit: Stmt,
    done: u64,
    sid: usize,
    drop_table: bool,
    /// Rows the run lost: counted done, then gone with a temporary table that vanished with
    /// its connection (shared by the sessions; a fact of the result).
    lost: Arc<AtomicU64>,
}

impl RaceWorker {
    fn one(&mut self, c: &Counters) -> Result<(), DbError> {
        let n = self.done;
        if self.cfg.commit != CommitMode::Row && self.begin_due() {
            count(c, self.s.exec(self.begin, &[])?);
        }
        let (d, a, b) = if self.cfg.seq {
            ((n % 10_000) as i32, n as i32, n as i32)
        } else {
            (
                self.rng.uniform(0, 9_999) as i32,
                self.rng.next_u64() as i32,
                self.rng.next_u64() as i32,
            )
        };
        count(
            c,
            self.s
                .exec(self.insert, &[Arg::Int(d), Arg::Int(a), Arg::Int(b)])?,
        );
        let last = n + 1 == self.cfg.rows;
        let commit_now = match self.cfg.commit {
            CommitMode::Row => false,
            CommitMode::Batch(k) => (n + 1).is_multiple_of(k) || last,
            CommitMode::None => last,
        };
        if commit_now {
            count(c, self.s.exec(self.commit, &[])?);
        }
        Ok(())
    }

    /// After a lost connection: reconnect (putting a temporary table back, since it vanished
    /// with the connection, and re-preparing the statements), count it and go back to the
    /// last commit, since the server rolled the open transaction back: those rows are inserted
    /// again (and counted again as events). [`Reconnected::RunOver`] when the run ended
    /// while the server was away.
    fn recover(&mut self, c: &Counters) -> Result<Reconnected, DbError> {
        if self.s.reconnect(self.cfg.reconnect_window)? == Reconnected::RunOver {
            return Ok(Reconnected::RunOver);
        }
        c.add(Counter::Reconnects, 1);
        // Without transactions the server rolled nothing back: every row sent is there.
        self.done = match self.cfg.commit {
            _ if !self.cfg.transactional => self.done,
            CommitMode::Row => self.done,
            CommitMode::Batch(k) => self.done - self.done % k,
            CommitMode::None => 0,
        };
        if self.cfg.mode == "temp" {
            // The new connection has a new, empty table: the rows this session had counted
            // are gone, and it goes on with the rest (it does not insert them again).
            self.lost.fetch_add(self.done, Ordering::Relaxed);
        }
        Ok(Reconnected::Yes)
    }

    fn begin_due(&self) -> bool {
        match self.cfg.commit {
            CommitMode::Row => false,
            CommitMode::Batch(k) => self.done.is_multiple_of(k),
            CommitMode::None => self.done == 0,
        }
    }
}

impl EventWorker for RaceWorker {
    fn event(&mut self, c: &Counters) -> Result<Step, WorkloadError> {
        if self.done >= self.cfg.rows {
            return Ok(Step::End);
        }
        loop {
            match self.one(c) {
                Ok(()) => {
                    self.done += 1;
                    return Ok(Step::Done);
                }
                Err(e) if self.cfg.ignore.ignores(&e) && e.class != ErrClass::Lost => {
                    // Retry the row (its transaction is rolled back; a batch restarts).
                    c.add(Counter::Errors, 1);
                    let _ = self.s.query("ROLLBACK");
                    if hostbench_core::runner::INTERRUPT.load(Ordering::Relaxed) {
                        return Ok(Step::End);
                    }
                }
                Err(e) if e.class == ErrClass::Lost => {
                    c.add(Counter::Errors, 1);
                    let r = self.recover(c).map_err(|e| {
                        WorkloadError::environment(format!(
                            "insert-race session {} on {}: {e}",
                            self.sid + 1,
                            self.cfg.target
                        ))
                    })?;
                    if r == Reconnected::RunOver {
                        // The rows in flight never finished: not an event.
                        return Ok(Step::End);
                    }
                    if hostbench_core::runner::INTERRUPT.load(Ordering::Relaxed) {
                        return Ok(Step::End);
                    }
                }
                Err(e) => {
                    return Err(WorkloadError::failed(format!(
                        "insert-race session {} on {}: {e}",
                        self.sid + 1,
                        self.cfg.target
                    )));
                }
            }
        }
    }
}

impl Drop for RaceWorker {
    fn drop(&mut self) {
        if self.cfg.commit != CommitMode::Row && self.done < self.cfg.rows {
            let _ = self.s.query("ROLLBACK");
        }
        if self.drop_table {
            let _ = self.s.query(&format!(
                "DROP TABLE IF EXISTS {}",
                self.cfg.table(self.sid)
            ));
        }
    }
}

struct RaceInstance {
    cfg: Arc<Cfg>,
    threads: usize,
    version: String,
    /// The setup connection's TLS (`None`: SQLite).
    tls: Option<String>,
    /// The SQLite file this run created (removed again at the end when it holds nothing).
    created_file: Option<String>,
    /// Session set-ups retried after a lost connection (before the run).
    setup_retries: std::sync::atomic::AtomicU64,
    /// Rows lost with vanished temporary tables (see [`RaceWorker::lost`]).
    lost: Arc<AtomicU64>,
    /// The server and the tables' engine, as the server reports them, with whether the
    /// engine has transactions.
    engine: Option<(String, bool)>,
}

impl Instance for RaceInstance {
    fn worker(&self, sid: usize, rng: Rng) -> Result<Worker, WorkloadError> {
        // A connection lost while the session sets up (a server restarting, a backend
        // killed) is retried as one lost mid-run is, within the reconnect time limit.
        let until = std::time::Instant::now() + self.cfg.reconnect_window;
        loop {
            match self.open_worker(sid, rng.clone()) {
                Err((ErrClass::Lost, _)) if std::time::Instant::now() < until => {
                    self.setup_retries
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                r => return r.map_err(|(_, e)| e),
            }
        }
    }

    fn warnings(&self) -> Vec<Warning> {
        self.warnings_now()
    }

    fn facts(&self) -> Vec<(String, f64)> {
        let n = self
            .setup_retries
            .load(std::sync::atomic::Ordering::Relaxed);
        let mut f = vec![
            ("setup_retries".into(), n as f64),
            (
                insert_race::fact::ROWS_LOST.into(),
                self.lost.load(Ordering::Relaxed) as f64,
            ),
        ];
        f.extend(super::driver::tls_facts(self.tls.as_deref()));
        f
    }

    fn server(&self) -> Option<String> {
        self.tls.as_ref()?;
        Some(super::driver::server_line(
            &self.version,
            &self.cfg.target,
            self.tls.as_deref(),
        ))
    }

    fn tables(&self) -> Vec<Table> {
        let engine = match (self.cfg.target.driver(), &self.engine) {
            (Driver::Mysql, Some((e, _))) => format!("engine {e}"),
            (Driver::Mysql, None) => "engine unknown".into(),
            (Driver::Pgsql, _) => "heap tables".into(),
            (Driver::Sqlite, _) => "B-tree file".into(),
        };
        let transactions = match (self.cfg.target.driver(), &self.engine) {
            (Driver::Mysql, None) => None,
            _ => Some(if self.cfg.transactional { 1.0 } else { 0.0 }),
        };
        let server = if self.version.is_empty() {
            self.cfg.target.driver().name().to_string()
        } else {
            self.version.clone()
        };
        vec![Table {
            name: SERVER_TABLE.into(),
            title: "the database under test and the engine of its tables".into(),
            columns: vec![Column {
                name: "transactions".into(),
                unit: String::new(),
            }],
            rows: vec![Row {
                label: format!("{server}, {engine}"),
                values: vec![transactions],
            }],
        }]
    }
}

impl RaceInstance {
    /// One try at session `sid`'s connection, table and statements; an error carries the
    /// class of the database error behind it.
    fn open_worker(&self, sid: usize, rng: Rng) -> Result<Worker, (ErrClass, WorkloadError)> {
        let cfg = &self.cfg;
        let mut s = Session::open(&cfg.target, cfg.prepared).map_err(|e| (ErrClass::Other, e))?;
        let setup = |e: DbError| {
            (
                e.class,
                WorkloadError::environment(format!(
                    "insert-race: cannot create session {}'s table on {}: {e}",
                    sid + 1,
                    cfg.target
                )),
            )
        };
        if cfg.target.driver() == Driver::Sqlite {
            let _ = s.query("PRAGMA temp_store = FILE");
        }
        if cfg.mode != "shared" || sid == 0 {
            if cfg.mode == "per-session" {
                s.query(&format!("DROP TABLE IF EXISTS {}", cfg.table(sid)))
                    .map_err(setup)?;
            }
            if cfg.mode == "temp" {
                // A reconnect creates it again before preparing the INSERT into it.
                s.query_on_connect(&cfg.create_sql(sid)).map_err(setup)?;
                for i in cfg.index_sql(sid) {
                    s.query_on_connect(&i).map_err(setup)?;
                }
            } else {
                s.query(&cfg.create_sql(sid)).map_err(setup)?;
                for i in cfg.index_sql(sid) {
                    s.query(&i).map_err(setup)?;
                }
            }
        }
        if cfg.procedure {
            return Ok(Worker::Loop(Box::new(ProcWorker {
                cfg: cfg.clone(),
                s,
                sid,
            })));
        }
        let prepared = (|| {
            let insert = s.prepare(&cfg.insert_sql(sid))?;
            if cfg.commit == CommitMode::Row {
                return Ok((insert, usize::MAX, usize::MAX));
            }
            let b = if cfg.target.driver() == Driver::Sqlite && cfg.mode != "temp" {
                "BEGIN IMMEDIATE"
            } else {
                "BEGIN"
            };
            Ok((insert, s.prepare(b)?, s.prepare("COMMIT")?))
        })();
        let (insert, begin, commit) = match prepared {
            Ok(v) => v,
            Err(e) => {
                if cfg.mode != "temp" {
                    let _ = s.query(&format!("DROP TABLE IF EXISTS {}", cfg.table(sid)));
                }
                return Err(setup(e));
            }
        };
        Ok(Worker::Event(Box::new(RaceWorker {
            cfg: cfg.clone(),
            s,
            rng,
            insert,
            begin,
            commit,
            done: 0,
            sid,
            drop_table: cfg.mode == "per-session",
            lost: self.lost.clone(),
        })))
    }

    fn warnings_now(&self) -> Vec<Warning> {
        let mut w = Vec::new();
        if self.cfg.target.driver() == Driver::Sqlite && self.cfg.mode != "temp" && self.threads > 1
        {
            w.push(Warning {
                kind: WarningKind::Contention,
                message: "SQLite has one writer per database file: the sessions take turns, so the makespan measures the lock as much as the disk (use --table-mode=temp, or a server database)".into(),
            });
        }
        if !self.cfg.engine.is_empty() && self.cfg.target.driver() != Driver::Mysql {
            w.push(Warning {
                kind: WarningKind::Unavailable,
                message: format!(
                    "--engine {} is ignored: storage engines are MySQL/MariaDB's; {} has one kind of table",
                    self.cfg.engine,
                    match self.cfg.target.driver() {
                        Driver::Pgsql => "PostgreSQL",
                        _ => "SQLite",
                    }
                ),
            });
        }
        if !self.cfg.transactional && self.cfg.commit != CommitMode::Row {
            let engine = self
                .engine
                .as_ref()
                .map_or("the engine", |(e, _)| e.as_str());
            w.push(Warning {
                kind: WarningKind::NoWork,
                message: format!(
                    "{engine} has no transactions: --commit {} sends BEGIN and COMMIT, but every row is written when it is inserted, as with --commit row",
                    match self.cfg.commit {
                        CommitMode::Batch(k) => format!("batch:{k}"),
                        _ => "none".into(),
                    }
                ),
            });
        }
        let lost = self.lost.load(Ordering::Relaxed);
        if lost > 0 {
            w.push(Warning {
                kind: WarningKind::Errors,
                message: format!(
                    "{lost} row(s) were lost: a session's connection was lost and its temporary table went with it; the session went on in a new, empty table (rows_lost)"
                ),
            });
        }
        if self.cfg.mode == "temp" {
            w.push(Warning {
                kind: WarningKind::PageCache,
                message: format!(
                    "temporary tables are not durable: inserts land in the page cache ({}), so the disk matters only once dirty pages are written back (vm.dirty_* settings and RAM size decide when)",
                    if self.version.is_empty() { "server" } else { &self.version }
                ),
            });
        }
        w
    }
}

impl Drop for RaceInstance {
    fn drop(&mut self) {
        if self.cfg.procedure
            && let Ok(mut c) = self.cfg.target.connect()
        {
            // CALLs still running (Ctrl-C, a failed session) stop at their next look at the
            // stop table instead of inserting on for minutes; the DROPs wait for them at most
            // a few seconds.
            let stop = self.cfg.stop_table();
            let _ = c.query(&format!("INSERT INTO {stop} VALUES (1)"));
            let _ = c.query(match self.cfg.target.driver() {
                Driver::Mysql => "SET SESSION lock_wait_timeout = 10",
                _ => "SET lock_timeout = '10s'",
            });
            let _ = c.query(&format!(
                "DROP PROCEDURE IF EXISTS {}",
                self.cfg.proc_name()
            ));
            let _ = c.query(&format!("DROP TABLE IF EXISTS {stop}"));
        }
        if self.cfg.mode == "shared"
            && let Ok(mut c) = self.cfg.target.connect()
        {
            let _ = c.query(&format!("DROP TABLE IF EXISTS {}", self.cfg.table(0)));
        }
        if let Some(path) = &self.created_file {
            let empty = self.cfg.target.connect().is_ok_and(|mut c| {
                c.query("SELECT name FROM sqlite_master WHERE type = 'table'")
                    == Ok(super::driver::Res::Rows(0))
            });
            if empty {
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{path}{suffix}"));
                }
            }
        }
    }
}

/// The time from the first client's start to the last row inserted.
pub const MAKESPAN_S: FigureDef = FigureDef {
    name: "makespan_s",
    label: "time to insert every row",
    unit: "s",
    better: Better::Lower,
};
/// Rows inserted per second over the whole race.
pub const ROWS_PER_S: FigureDef = FigureDef {
    name: "rows_per_s",
    label: "rows inserted per second",
    unit: "rows/s",
    better: Better::Higher,
};
/// The 99th percentile of one insert's latency.
pub const INSERT_P99_MS: FigureDef = FigureDef {
    name: "insert_p99_ms",
    label: "99th percentile insert latency",
    unit: "ms",
    better: Better::Lower,
};

impl Workload for InsertRace {
    fn id(&self) -> &'static str {
        "db.insert_race"
    }
    fn category(&self) -> Category {
        Category::Db
    }
    fn summary(&self) -> &'static str {
        "parallel single-row INSERTs: sessions race to insert N rows each (makespan, fairness, latency)"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn caps(&self) -> Caps {
        Caps {
            destructive: true,
            ends_itself: true,
            ..Caps::default()
        }
    }
    fn counters(&self) -> &'static [Counter] {
        &[
            Counter::Writes,
            Counter::Other,
            Counter::Errors,
            Counter::Reconnects,
        ]
    }
    fn figures(&self, r: &RunResult) -> Vec<Figure> {
        let mut f = vec![
            MAKESPAN_S.at(r.metrics.duration_s),
            ROWS_PER_S.at(rows_per_s(r)),
        ];
        if procedure(r) {
            // One operation per session: its latency is the session's duration.
            return f;
        }
        if let Some(p99) = r.percentile_ns(99.0) {
            f.push(INSERT_P99_MS.at(p99 as f64 / 1e6));
        }
        f
    }
    fn commands(&self) -> &'static [&'static str] {
        &["insert-race"]
    }
    fn small_params(&self) -> &'static [(&'static str, &'static str)] {
        &[("rows", "200")]
    }
    fn derive_params(&self, overrides: &mut Vec<(String, String)>) {
        crate::db::driver::record_url_driver(overrides);
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        let mut cfg = Cfg::new(ctx.params)?;
        if cfg.procedure && cfg.target.driver() == Driver::Sqlite {
            return Err(WorkloadError::usage(
                "insert-race: --mode procedure needs a server with stored procedures (MySQL/MariaDB or PostgreSQL); SQLite has none: give --db-url or the --mysql-*/--pgsql-* options, or use --mode client",
            ));
        }
        if cfg.procedure && cfg.mode != "temp" {
            return Err(WorkloadError::usage(format!(
                "insert-race: --mode procedure inserts into each session's temporary table (the write-up's test); --table-mode {} is for --mode client",
                cfg.mode
            )));
        }
        if !cfg.procedure && !cfg.stagger.is_zero() {
            return Err(WorkloadError::usage(
                "insert-race: --stagger starts the sessions' procedure calls apart; it needs --mode procedure",
            ));
        }
        let create = cfg.target.driver() == Driver::Sqlite;
        let created_file = match &cfg.target {
            Target::Sqlite { path } if !std::path::Path::new(path).exists() => Some(path.clone()),
            _ => None,
        };
        let mut conn = cfg.target.connect_for_setup(create)?;
        let version = conn.server_version();
        let tls = conn.tls();
        let engine = match cfg.target.driver() {
            Driver::Mysql => mysql_engine(conn.as_mut(), &cfg),
            _ => None,
        };
        if let Some((_, t)) = &engine {
            cfg.transactional = *t;
        }
        if cfg.mode == "shared" {
            conn.query(&format!("DROP TABLE IF EXISTS {}", cfg.table(0)))
                .map_err(|e| {
                    WorkloadError::environment(format!("insert-race on {}: {e}", cfg.target))
                })?;
        }
        if cfg.procedure {
            for sql in cfg.procedure_sql() {
                conn.query(&sql).map_err(|e| {
                    WorkloadError::environment(format!(
                        "insert-race: cannot create the procedure {} on {}: {e}",
                        cfg.proc_name(),
                        cfg.target
                    ))
                })?;
            }
        }
        Ok(Box::new(RaceInstance {
            cfg: Arc::new(cfg),
            threads: ctx.threads.max(1),
            version,
            tls,
            created_file,
            setup_retries: Default::default(),
            lost: Default::default(),
            engine,
        }))
    }
}

fn procedure(r: &RunResult) -> bool {
    matches!(
        r.workload.params.values().get("mode"),
        Some(hostbench_core::params::Value::Text(m)) if m == "procedure"
    )
}

/// Rows inserted per second over the makespan: events (one per row) in client mode, the
/// rows the procedure calls inserted in procedure mode.
fn rows_per_s(r: &RunResult) -> f64 {
    if !procedure(r) {
        return r.metrics.events_per_s;
    }
    let rows = r
        .metrics
        .counters
        .get(Counter::Writes.name())
        .copied()
        .unwrap_or(0) as f64;
    if r.metrics.duration_s > 0.0 {
        rows / r.metrics.duration_s
    } else {
        0.0
    }
}

/// Parses a commit mode (for front-ends that check options before building a plan).
pub fn check_commit(s: &str) -> Result<(), WorkloadError> {
    CommitMode::parse(s).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_modes() {
        assert_eq!(CommitMode::parse("row").unwrap(), CommitMode::Row);
        assert_eq!(
            CommitMode::parse("batch:100").unwrap(),
            CommitMode::Batch(100)
        );
        assert_eq!(CommitMode::parse("none").unwrap(), CommitMode::None);
        assert!(CommitMode::parse("batch:0").is_err());
        assert!(
            CommitMode::parse("sometimes")
                .unwrap_err()
                .message
                .contains("batch:N")
        );
    }
}
