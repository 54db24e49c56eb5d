//! The SQLite backend: one file, WAL journal, a busy timeout so that several hostbench
//! processes can save at once, `synchronous=NORMAL` (a committed run survives a process
//! crash; a power cut may lose the last runs, never corrupt the file). The schema version
//! is `PRAGMA user_version`, and `PRAGMA application_id` marks the file as hostbench's so a
//! foreign database is refused rather than altered.

use crate::index::Indexed;
use crate::migrations::MIGRATIONS;
use crate::{Arg, Backend, FleetHost, Inserted, Result, RunSummary, StoreError, StoredRun, chain};
use rusqlite::config::DbConfig;
use rusqlite::types::Value;
use rusqlite::{
    Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior, params_from_iter,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `PRAGMA application_id` of a hostbench store: "HBRS" in ASCII.
pub(crate) const APPLICATION_ID: i32 = 0x4842_5253;

/// How long a writer waits for another one before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(15);

pub(crate) struct Sqlite {
    conn: Connection,
    location: String,
    /// The WAL file beside the database.
    wal: PathBuf,
}

/// WAL size past which a writer checkpoints and truncates it. The first connection to a
/// WAL database reads the whole WAL to rebuild its index, so a WAL left to grow would make
/// every later run's save slower; a checkpoint costs an fsync, so not on every save.
pub(crate) const WAL_CHECKPOINT_BYTES: u64 = 1 << 20;

impl Sqlite {
    fn err(&self, action: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |e| to_store_error(&self.location, action, e)
    }

    /// Opens (or, with `create`, creates) the store at `path` and migrates it to `target`.
    /// `None` when the file does not exist and `create` is false.
    pub(crate) fn open(path: &Path, create: bool, target: u32) -> Result<Option<Sqlite>> {
        let location = path.display().to_string();
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let read_only = match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => {
                // SQLite would write `PATH-journal` beside it (`/dev/null-journal`).
                return Err(StoreError::BadLocation(format!(
                    "the results store {location} is {}, not a regular file: give the path of \
                     an SQLite file (--results-db or HOSTBENCH_RESULTS_DB)",
                    file_kind(&m)
                )));
            }
            Ok(m) => is_read_only(path, &m),
            // Not there (or its directory is not one): nothing to read; creating it says
            // what is wrong with the directory.
            Err(_) => {
                if !create {
                    return Ok(None);
                }
                false
            }
        };
        if read_only {
            return Sqlite::open_read_only(path, create, target, location, wal.into()).map(Some);
        }
        if create && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::File {
                action: "cannot create the results store's directory",
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| to_store_error(&location, "cannot open it", e))?;
        let mut s = Sqlite {
            conn,
            location,
            wal: wal.into(),
        };
        s.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(s.err("cannot set the busy timeout"))?;
        // Refuse a foreign database before changing anything in it (even its journal mode).
        let found = s.check_identity()?;
        if found > target {
            return Err(StoreError::TooNew {
                location: s.location.clone(),
                found,
                supported: target,
            });
        }
        let mode: String = s
            .conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .map_err(s.err("cannot read the journal mode"))?;
        if !mode.eq_ignore_ascii_case("wal") {
            // Switching the journal mode needs the file to itself, and SQLite may answer BUSY
            // at once, without calling the busy handler, while another connection opening
            // the same fresh store holds a lock: retry until the busy timeout runs out.
            let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
            loop {
                match s
                    .conn
                    .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))
                {
                    Ok(_) => break,
                    Err(rusqlite::Error::SqliteFailure(f, _))
                        if f.code == rusqlite::ErrorCode::DatabaseBusy
                            && std::time::Instant::now() < deadline =>
                    {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                    Err(e) => return Err(s.err("cannot switch to WAL")(e)),
                }
            }
        }
        s.conn
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(s.err("cannot set synchronous=NORMAL"))?;
        // Closing the last connection would checkpoint the WAL into the file and fsync it:
        // milliseconds on every run. A save is a WAL append without fsync instead, and
        // `checkpoint_if_large` folds the WAL back every ~1 MiB.
        s.conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(s.err("cannot configure checkpoints"))?;
        if found < target {
            s.migrate(target)?;
        }
        Ok(Some(s))
    }

    /// A store file nobody may write (no write permission bit, or a read-only file system):
    /// opened read-only, so that even root changes nothing in it. Reading works if its
    /// schema is the one this build knows; saving into it is refused.
    fn open_read_only(
        path: &Path,
        for_writing: bool,
        target: u32,
        location: String,
        wal: PathBuf,
    ) -> Result<Sqlite> {
        if for_writing {
            return Err(StoreError::BadLocation(format!(
                "the results store {location} is read-only (no write permission, or a \
                 read-only file system): hostbench will not write to it; make it writable or \
                 give another --results-db"
            )));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut shm = path.as_os_str().to_owned();
        shm.push("-shm");
        // A WAL store without its -wal and -shm files (everything checkpointed) on a
        // read-only file system: SQLite cannot create the -shm index, and there is nothing
        // it would hold, so the file is opened as immutable.
        let conn = if !wal.exists() && !Path::new(&shm).exists() {
            let uri = format!("file:{}?immutable=1", uri_path(path));
            Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)
        } else {
            Connection::open_with_flags(path, flags)
        }
        .map_err(|e| to_store_error(&location, "cannot open it read-only", e))?;
        let s = Sqlite {
            conn,
            location,
            wal,
        };
        s.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(s.err("cannot set the busy timeout"))?;
        let found = s.check_identity()?;
        if found != target {
            return Err(StoreError::BadLocation(format!(
                "the results store {} is read-only and has schema version {found}, not {target}: \
                 this hostbench cannot read it without upgrading it; make it writable (or use \
                 the hostbench that wrote it)",
                s.location
            )));
        }
        Ok(s)
    }

    /// Reads the header; errors if this is not (or cannot become) a hostbench store.
    /// Returns the schema version.
    fn check_identity(&self) -> Result<u32> {
        // One read transaction: the header and the table count must come from the same
        // snapshot, or a concurrent first open that migrates between the two reads makes a
        // fresh store look like another program's database.
        let snapshot = self
            .conn
            .unchecked_transaction()
            .map_err(self.err("cannot read the header"))?;
        let (app, version): (i32, i64) = snapshot
            .query_row(
                "SELECT application_id, user_version FROM pragma_application_id, pragma_user_version",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(self.err("cannot read the header"))?;
        let not = |why: String| StoreError::NotAStore {
            location: self.location.clone(),
            why,
        };
        if app != 0 && app != APPLICATION_ID {
            return Err(not(format!(
                "its application id is {app:#x}, another program's"
            )));
        }
        if version == 0 {
            let tables: i64 = snapshot
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
                    [],
                    |r| r.get(0),
                )
                .map_err(self.err("cannot list its tables"))?;
            if tables > 0 {
                return Err(not(format!(
                    "it is an SQLite database with {tables} table(s)/index(es) of another program"
                )));
            }
        } else if app != APPLICATION_ID {
            return Err(not(format!(
                "it has schema version {version} but no hostbench application id"
            )));
        }
        u32::try_from(version).map_err(|_| not(format!("its user_version is {version}")))
    }

    /// Applies the migrations above the current version, up to `target`, in one
    /// transaction that also re-reads the version (another process may have migrated
    /// since we looked).
    fn migrate(&mut self, target: u32) -> Result<()> {
        let location = self.location.clone();
        let loc = location.as_str();
        let e = |action| move |err| to_store_error(loc, action, err);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e("cannot start the migration"))?;
        let current: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(e("cannot read the schema version"))?;
        for m in MIGRATIONS
            .iter()
            .filter(|m| i64::from(m.version) > current && m.version <= target)
        {
            tx.execute_batch(m.sqlite)
                .map_err(e("cannot apply a schema migration"))?;
            tx.pragma_update(None, "user_version", m.version)
                .map_err(e("cannot record the schema version"))?;
        }
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(e("cannot mark the file as hostbench's"))?;
        tx.commit().map_err(e("cannot commit the migration"))
    }

    /// After a write: when the WAL has grown past [`WAL_CHECKPOINT_BYTES`], copy it into the
    /// database and truncate it. The write is already committed, so failing (another
    /// process reading, say) only means a later write tries again; hence a short wait and
    /// errors ignored.
    fn checkpoint_if_large(&self) {
        let big = std::fs::metadata(&self.wal).is_ok_and(|m| m.len() > WAL_CHECKPOINT_BYTES);
        if big && self.conn.busy_timeout(Duration::from_millis(50)).is_ok() {
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
            let _ = self.conn.busy_timeout(BUSY_TIMEOUT);
        }
    }

    #[cfg(test)]
    pub(crate) fn wal_path(&self) -> &Path {
        &self.wal
    }

    #[cfg(test)]
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }
}

/// `path` for an SQLite `file:` URI: `%`, `?` and `#` percent-encoded.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' | '?' | '#' => out.push_str(&format!("%{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// What a non-regular file is, for the error.
fn file_kind(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a named pipe"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// True when the file must not be written: no write permission bit for anyone (root could
/// still write it), or it cannot be opened for writing (a read-only file system, another
/// user's file). Opening for writing changes nothing; it is only done on a regular file.
fn is_read_only(path: &Path, m: &std::fs::Metadata) -> bool {
    m.permissions().readonly() || std::fs::OpenOptions::new().write(true).open(path).is_err()
}

fn to_store_error(location: &str, action: &'static str, e: rusqlite::Error) -> StoreError {
    if let rusqlite::Error::SqliteFailure(f, _) = &e
        && f.code == ErrorCode::ReadOnly
    {
        return StoreError::BadLocation(format!(
            "the results store {location} is read-only ({action}): make it writable or give \
             another --results-db"
        ));
    }
    if let rusqlite::Error::SqliteFailure(f, _) = &e
        && f.code == ErrorCode::NotADatabase
    {
        return StoreError::NotAStore {
            location: location.to_string(),
            why: "it is not an SQLite database".into(),
        };
    }
    StoreError::Database {
        location: location.to_string(),
        action,
        detail: chain(&e),
    }
}

fn values(args: &[Arg]) -> Vec<Value> {
    args.iter()
        .map(|a| match a {
            Arg::Text(s) => Value::Text(s.clone()),
            Arg::Int(i) => Value::Integer(*i),
        })
        .collect()
}

impl Backend for Sqlite {
    fn placeholder(&self, n: usize) -> String {
        format!("?{n}")
    }

    fn version(&mut self) -> Result<u32> {
        let v: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(self.err("cannot read the schema version"))?;
        Ok(u32::try_from(v).unwrap_or(0))
    }

    fn insert(&mut self, rows: &[(Indexed, &str)], stored_ms: i64) -> Result<Vec<Inserted>> {
        let location = self.location.clone();
        let loc = location.as_str();
        let e = |action| move |err| to_store_error(loc, action, err);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e(
                "cannot start a write (another hostbench kept the store busy)",
            ))?;
        let mut out = Vec::with_capacity(rows.len());
        {
            let mut ins = tx
                .prepare_cached(
                    "INSERT INTO runs (id, started_at, started_ms, stored_ms, label, workload, \
                     workload_family, category, hostname, host_fingerprint, tool_version, \
                     stop_reason, headline_metric, headline_value, headline_unit, \
                     result_schema_version, result_json, fleet_run, fleet_host) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19) \
                     ON CONFLICT (id) DO NOTHING",
                )
                .map_err(e("cannot prepare the insert"))?;
            let mut existing = tx
                .prepare_cached("SELECT result_json FROM runs WHERE id = ?1")
                .map_err(e("cannot prepare a lookup"))?;
            for (ix, json) in rows {
                let n = ins
                    .execute(rusqlite::params![
                        ix.id,
                        ix.started_at,
                        ix.started_ms,
                        stored_ms,
                        ix.label,
                        ix.workload,
                        ix.workload_family,
                        ix.category,
                        ix.hostname,
                        ix.host_fingerprint,
                        ix.tool_version,
                        ix.stop_reason,
                        ix.headline.metric,
                        ix.headline.value,
                        ix.headline.unit,
                        i64::from(ix.result_schema_version),
                        json,
                        ix.fleet_run,
                        ix.fleet_host,
                    ])
                    .map_err(e("cannot insert a run"))?;
                out.push(if n == 1 {
                    Inserted::New
                } else {
                    let stored: String = existing
                        .query_row([&ix.id], |r| r.get(0))
                        .map_err(e("cannot read a stored run"))?;
                    if crate::same_run_json(&stored, json) {
                        Inserted::Same
                    } else {
                        Inserted::Conflict
                    }
                });
            }
        }
        tx.commit().map_err(e("cannot commit"))?;
        self.checkpoint_if_large();
        Ok(out)
    }

    fn summaries(&mut self, tail: &str, args: &[Arg]) -> Result<Vec<RunSummary>> {
        let sql = format!("SELECT {} FROM runs {tail}", crate::SUMMARY_COLUMNS);
        let mut st = self.conn.prepare(&sql).map_err(self.err("cannot query"))?;
        let rows = st
            .query_map(params_from_iter(values(args)), |r| {
                Ok(RunSummary {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    label: r.get(2)?,
                    workload: r.get(3)?,
                    category: r.get(4)?,
                    hostname: r.get(5)?,
                    host_fingerprint: r.get(6)?,
                    tool_version: r.get(7)?,
                    stop_reason: r.get(8)?,
                    headline: crate::Headline {
                        metric: r.get(9)?,
                        value: r.get(10)?,
                        unit: r.get(11)?,
                    },
                })
            })
            .and_then(|it| it.collect::<rusqlite::Result<Vec<_>>>());
        rows.map_err(|e| to_store_error(&self.location, "cannot read runs", e))
    }

    fn runs(&mut self, tail: &str, args: &[Arg]) -> Result<Vec<StoredRun>> {
        let sql = format!("SELECT id, result_json FROM runs {tail}");
        let mut st = self.conn.prepare(&sql).map_err(self.err("cannot query"))?;
        let rows = st
            .query_map(params_from_iter(values(args)), |r| {
                Ok(StoredRun {
                    id: r.get(0)?,
                    json: r.get(1)?,
                })
            })
            .and_then(|it| it.collect::<rusqlite::Result<Vec<_>>>());
        rows.map_err(|e| to_store_error(&self.location, "cannot read runs", e))
    }

    fn delete_ids(&mut self, ids: &[String]) -> Result<u64> {
        let location = self.location.clone();
        let loc = location.as_str();
        let e = |action| move |err| to_store_error(loc, action, err);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e("cannot start a write"))?;
        let mut n = 0;
        let mut fleet_runs: Vec<String> = Vec::new();
        for id in ids {
            let fr: Option<String> = tx
                .query_row("SELECT fleet_run FROM runs WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(e("cannot read a run"))?
                .flatten();
            fleet_runs.extend(fr.filter(|f| !fleet_runs.contains(f)));
            n += tx
                .execute("DELETE FROM runs WHERE id = ?1", [id])
                .map_err(e("cannot remove a run"))? as u64;
        }
        drop_orphan_rosters(&tx, &fleet_runs).map_err(e("cannot remove a fleet roster"))?;
        tx.commit().map_err(e("cannot commit"))?;
        self.checkpoint_if_large();
        Ok(n)
    }

    fn replace(&mut self, rows: &[(Indexed, &str)]) -> Result<u64> {
        let location = self.location.clone();
        let loc = location.as_str();
        let e = |action| move |err| to_store_error(loc, action, err);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e("cannot start a write"))?;
        let mut n = 0;
        for (ix, json) in rows {
            n += tx
                .execute(
                    "UPDATE runs SET label = ?1, result_schema_version = ?2, result_json = ?3 \
                     WHERE id = ?4",
                    rusqlite::params![ix.label, i64::from(ix.result_schema_version), json, ix.id],
                )
                .map_err(e("cannot update a run"))? as u64;
        }
        tx.commit().map_err(e("cannot commit"))?;
        self.checkpoint_if_large();
        Ok(n)
    }

    fn delete_label(&mut self, label: &str) -> Result<u64> {
        let location = self.location.clone();
        let loc = location.as_str();
        let e = |action| move |err| to_store_error(loc, action, err);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e("cannot start a write"))?;
        let fleet_runs: Vec<String> = tx
            .prepare(
                "SELECT DISTINCT fleet_run FROM runs WHERE label = ?1 AND fleet_run IS NOT NULL",
            )
            .and_then(|mut st| {
                st.query_map([label], |r| r.get(0))?
                    .collect::<rusqlite::Result<Vec<String>>>()
            })
            .map_err(e("cannot read runs"))?;
        let n = tx
            .execute("DELETE FROM runs WHERE label = ?1", [label])
            .map_err(e("cannot remove runs"))? as u64;
        drop_orphan_rosters(&tx, &fleet_runs).map_err(e("cannot remove a fleet roster"))?;
        tx.commit().map_err(e("cannot commit"))?;
        self.checkpoint_if_large();
        Ok(n)
    }

    fn put_roster(&mut self, run: &str, hosts: &[FleetHost], stored_ms: i64) -> Result<()> {
        let location = self.location.clone();
        let loc = location.as_str();
        let e = |action| move |err| to_store_error(loc, action, err);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e("cannot start a write"))?;
        tx.execute("DELETE FROM fleet_hosts WHERE fleet_run = ?1", [run])
            .map_err(e("cannot replace a fleet roster"))?;
        for h in hosts {
            tx.execute(
                "INSERT INTO fleet_hosts (fleet_run, position, host, status, reason, runs, \
                 stored_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                rusqlite::params![
                    run, h.position, h.host, h.status, h.reason, h.runs, stored_ms
                ],
            )
            .map_err(e("cannot record a fleet roster"))?;
        }
        tx.commit().map_err(e("cannot commit"))?;
        self.checkpoint_if_large();
        Ok(())
    }

    fn roster(&mut self, run: &str) -> Result<Vec<FleetHost>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT host, position, status, reason, runs FROM fleet_hosts \
                 WHERE fleet_run = ?1 ORDER BY position, host",
            )
            .map_err(self.err("cannot query"))?;
        let rows = st
            .query_map([run], |r| {
                Ok(FleetHost {
                    host: r.get(0)?,
                    position: r.get(1)?,
                    status: r.get(2)?,
                    reason: r.get(3)?,
                    runs: r.get(4)?,
                })
            })
            .and_then(|it| it.collect::<rusqlite::Result<Vec<_>>>());
        rows.map_err(|e| to_store_error(&self.location, "cannot read a fleet roster", e))
    }
}

/// Removes the rosters (`fleet_hosts`) of those of `fleet_runs` (the fleet runs of runs
/// just removed) that have no run left: a fleet run whose runs were all removed is gone,
/// its roster with it.
fn drop_orphan_rosters(tx: &rusqlite::Transaction, fleet_runs: &[String]) -> rusqlite::Result<()> {
    for fr in fleet_runs {
        tx.execute(
            "DELETE FROM fleet_hosts WHERE fleet_run = ?1 AND NOT EXISTS \
             (SELECT 1 FROM runs WHERE fleet_run = ?1)",
            [fr],
        )?;
    }
    Ok(())
}
