//! The SQLite driver (rusqlite, bundled SQLite): the embedded default.
//!
//! The database file is opened in WAL mode with a busy timeout, so readers never wait and
//! writers queue; `SQLITE_BUSY`/`SQLITE_LOCKED` and constraint violations are retryable.
//! Statements live in rusqlite's per-connection cache (sized to hold all of a worker's), so
//! "prepare once" holds: each execution is a cache lookup by SQL text, no re-parse and no
//! allocation on our side.

use super::driver::{Arg, Conn, DbError, Driver, ErrClass, Res, Rows, Stmt};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode};

/// One SQLite connection.
pub struct SqliteConn {
    conn: Connection,
    sqls: Vec<(String, bool)>,
}

/// True for statements whose `sqlite3_changes()` is their own (INSERT, UPDATE, DELETE,
/// REPLACE); for anything else (BEGIN IMMEDIATE, COMMIT, DDL) it still holds the previous
/// statement's count.
fn is_dml(sql: &str) -> bool {
    let head = sql.trim_start().get(..7).unwrap_or("").to_ascii_uppercase();
    ["INSERT", "UPDATE", "DELETE", "REPLACE"]
        .iter()
        .any(|k| head.starts_with(k))
}

fn err(e: rusqlite::Error) -> DbError {
    match &e {
        rusqlite::Error::SqliteFailure(f, msg) => {
            let class = match f.code {
                ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => ErrClass::Retry,
                ErrorCode::ConstraintViolation => ErrClass::Retry,
                _ => ErrClass::Other,
            };
            DbError {
                class,
                code: f.extended_code.to_string(),
                state: String::new(),
                message: msg.clone().unwrap_or_else(|| e.to_string()),
            }
        }
        _ => DbError::new(ErrClass::Other, e.to_string()),
    }
}

impl SqliteConn {
    /// Opens the database file at `path`.
    /// A run against a missing file is an error, not a new empty database: the file is
    /// created only when `create` (prepare) is set.
    pub fn open(path: &str, create: bool) -> Result<SqliteConn, DbError> {
        if !create && !std::path::Path::new(path).exists() {
            return Err(DbError::new(
                ErrClass::Other,
                format!("no SQLite database '{path}': no such table (prepare creates it)"),
            ));
        }
        let conn = Connection::open(path).map_err(|e| {
            DbError::new(
                ErrClass::Other,
                format!("cannot open SQLite database '{path}': {e}"),
            )
        })?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(err)?;
        // Switching a new file to WAL needs the database to itself, and SQLite answers a
        // second connection doing the same at that moment with SQLITE_BUSY at once, without
        // its busy handler (two Lua threads connecting together hit it): retry within the
        // same 10 s the busy timeout allows.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match conn.pragma_update(None, "journal_mode", "WAL") {
                Ok(()) => break,
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if matches!(
                        f.code,
                        rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                    ) && std::time::Instant::now() < until =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(e) => return Err(err(e)),
            }
        }
        conn.set_prepared_statement_cache_capacity(256);
        Ok(SqliteConn {
            conn,
            sqls: Vec::new(),
        })
    }

    fn run(
        &mut self,
        sql_idx: Option<Stmt>,
        text: &str,
        args: &[Arg<'_>],
        out: Option<&mut Rows>,
    ) -> Result<Res, DbError> {
        let (sql, dml) = match sql_idx {
            Some(i) => (self.sqls[i].0.as_str(), self.sqls[i].1),
            None => (text, is_dml(text)),
        };
        let mut st = self.conn.prepare_cached(sql).map_err(err)?;
        for (i, a) in args.iter().enumerate() {
            let r = match a {
                Arg::Int(v) => st.raw_bind_parameter(i + 1, v),
                Arg::Text(t) => st.raw_bind_parameter(i + 1, t),
                Arg::Big(v) => st.raw_bind_parameter(i + 1, v),
                Arg::Double(v) => st.raw_bind_parameter(i + 1, v),
                Arg::Null => st.raw_bind_parameter(i + 1, rusqlite::types::Null),
            };
            r.map_err(err)?;
        }
        if st.column_count() > 0 {
            return read_rows(&mut st, out);
        }

        st.raw_execute().map_err(err)?;
        // sqlite3_changes() keeps the last INSERT/UPDATE/DELETE's count through BEGIN and
        // COMMIT, so transaction control (read-only statements) reports 0.
        Ok(Res::Affected(if dml { self.conn.changes() } else { 0 }))
    }
}

impl Conn for SqliteConn {
    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError> {
        self.conn.prepare_cached(sql).map_err(err)?;
        self.sqls.push((sql.to_string(), is_dml(sql)));
        Ok(self.sqls.len() - 1)
    }

    fn exec(&mut self, s: Stmt, args: &[Arg<'_>]) -> Result<Res, DbError> {
        self.run(Some(s), "", args, None)
    }

    fn query(&mut self, sql: &str) -> Result<Res, DbError> {
        self.text(sql, None)
    }

    fn query_rows(&mut self, sql: &str, out: &mut Rows) -> Result<Res, DbError> {
        out.clear();
        self.text(sql, Some(out))
    }

    fn exec_rows(&mut self, s: Stmt, args: &[Arg<'_>], out: &mut Rows) -> Result<Res, DbError> {
        out.clear();
        self.run(Some(s), "", args, Some(out))
    }

    fn clear(&mut self) {
        self.conn.flush_prepared_statement_cache();
        self.sqls.clear();
    }

    fn driver(&self) -> Driver {
        Driver::Sqlite
    }

    fn server_version(&mut self) -> String {
        format!("SQLite {}", rusqlite::version())
    }
}

impl SqliteConn {
    fn text(&mut self, sql: &str, out: Option<&mut Rows>) -> Result<Res, DbError> {
        if sql.len() > 4096 || sql.trim_start().to_ascii_uppercase().starts_with("CREATE") {
            // One-off statements (bulk loads, DDL) stay out of the statement cache.
            let mut st = self.conn.prepare(sql).map_err(err)?;
            if st.column_count() > 0 {
                return read_rows(&mut st, out);
            }
            st.raw_execute().map_err(err)?;
            return Ok(Res::Affected(if is_dml(sql) {
                self.conn.changes()
            } else {
                0
            }));
        }
        self.run(None, sql, &[], out)
    }
}

/// Steps through a statement's rows, counting them, and keeps their values as text in
/// `out` when given (integers and reals in decimal, blobs as their bytes).
fn read_rows(st: &mut rusqlite::Statement<'_>, mut out: Option<&mut Rows>) -> Result<Res, DbError> {
    let ncols = st.column_count();
    if let Some(o) = out.as_deref_mut() {
        o.fields = ncols;
    }
    let mut rows = st.raw_query();
    let mut n = 0u64;
    while let Some(row) = rows.next().map_err(err)? {
        n += 1;
        let Some(o) = out.as_deref_mut() else {
            continue;
        };
        for i in 0..ncols {
            match row.get_ref(i).map_err(err)? {
                ValueRef::Null => o.push(None),
                ValueRef::Integer(v) => o.push_with(|b| {
                    use std::io::Write;
                    let _ = write!(b, "{v}");
                }),
                ValueRef::Real(v) => o.push_with(|b| {
                    use std::io::Write;
                    let _ = write!(b, "{v:?}");
                }),
                ValueRef::Text(t) | ValueRef::Blob(t) => o.push(Some(t)),
            }
        }
    }
    Ok(Res::Rows(n))
}
