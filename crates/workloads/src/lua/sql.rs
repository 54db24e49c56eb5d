//! The Rust half of `sysbench.sql` (first slice): a driver from the options in
//! `sysbench.opt` (`--db-driver=mysql|pgsql|sqlite` and the `--mysql-*`, `--pgsql-*`,
//! `--sqlite-db` options), connections over hostbench's own database clients
//! (`db/driver.rs`: the lean PostgreSQL and MySQL clients, SQLite), and text queries,
//! counted into the thread's counters as sysbench counts them (a result set is a read,
//! affected rows > 0 a write, anything else "other", a failure an error). The Lua half
//! (objects, error tables and messages) is in the prelude.
//!
//! Results come back with their rows as text (`Rows`, read by `fetch_row` when the script
//! asks); prepared statements run on the clients' own prepared-statement paths (through a
//! [`Session`], which also does `--db-ps-mode=disable`'s substitution and re-prepares after
//! a reconnect). Errors are classified as sysbench's drivers do: MySQL errnos in
//! `--mysql-ignore-errors` (or `all`) are ignorable and a lost MySQL connection reconnects
//! (counted as a reconnect) and restarts the event; PostgreSQL's and SQLite's retryable
//! errors are ignorable (after an uncounted ROLLBACK, as sysbench's pgsql driver does);
//! anything else is fatal.

use super::state;
use crate::db::driver::{
    Arg, DbError, Driver, ErrClass, Reconnected, Res, Rows, Session, Target, TlsMode, TlsOpts,
};
use mlua::{AnyUserData, LightUserData, Lua, Table, UserData, Value};
use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// How long a lost MySQL connection is retried before the query fails (sysbench retries
/// until the run ends; the run's end stops the wait sooner here too).
const RECONNECT_WINDOW: Duration = Duration::from_secs(10);

/// Set once a state of the loaded script creates a driver (`sysbench.sql.driver()`): the
/// run then reports in sysbench's SQL layout, as sysbench does once a driver exists.
static DRIVER_USED: AtomicBool = AtomicBool::new(false);

/// True when a state of the loaded script has created a database driver.
pub fn driver_used() -> bool {
    DRIVER_USED.load(Relaxed)
}

/// Forgets [`driver_used`] (a new script is loaded).
pub fn reset_driver_used() {
    DRIVER_USED.store(false, Relaxed);
}

/// One connection, owned by the Lua state that opened it (closed when collected).
///
/// Like sysbench, a connection keeps one result: the rows of its last statement, in a
/// buffer reused by every statement (no allocation per statement once it has grown), named
/// by a generation number that result objects carry.
struct SqlConn {
    s: Option<Session>,
    driver: Driver,
    /// MySQL errnos that are ignorable (`--mysql-ignore-errors`); `all` = every one.
    ignore: Vec<String>,
    /// The last statement's rows.
    rows: Rows,
    /// Which statement `rows` belongs to.
    generation: u64,
    /// The values of an execute's parameters (reused).
    bound: Vec<Bound>,
    /// The last failure, as the prelude raises it (`err` hands it over).
    err: Option<ErrValues>,
}

/// A failed statement as the prelude reads it: "ignorable"|"fatal", the code (MySQL's
/// errno, PostgreSQL's SQLSTATE), the message, MySQL's SQLSTATE.
struct ErrValues {
    class: &'static str,
    code: String,
    message: String,
    state: String,
}

/// What a query or execute returns to the prelude: four numbers, so that the hot path
/// creates no Lua string and no argument list: `(ROWS, nrows, nfields, generation)`,
/// `(NONE, affected, 0, 0)`, `(CLOSED, ..)` or `(FAILED, ..)` (the error values then come
/// from `err(conn)`).
type Outcome = (u8, u64, u64, u64);
const ROWS: u8 = 0;
const NONE: u8 = 1;
const CLOSED: u8 = 2;
const FAILED: u8 = 3;

/// The userdata a connection object holds: it owns the connection, which the thread's
/// slot table also names (weakly) for [`hb_sql_execute`], the FFI path of `execute`.
struct ConnHandle(Rc<RefCell<SqlConn>>);

impl UserData for ConnHandle {}

thread_local! {
    /// This thread's connections by slot (`hb_sql_execute`'s first argument), each with
    /// its key; a slot whose connection was collected is reused.
    static SLOTS: RefCell<Vec<(u64, Weak<RefCell<SqlConn>>)>> = const { RefCell::new(Vec::new()) };
}

/// The next connection's key: with its slot it names one connection of one thread, so a
/// slot number that reaches another thread (or a reused slot) never finds another
/// connection (`hb_sql_execute` then says [`ELSEWHERE`] and the prelude takes the Lua C-API
/// path, which works anywhere).
static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

/// `hb_sql_execute`'s answer for a slot and key that name no connection of this thread.
const ELSEWHERE: u8 = 4;

/// Gives `c` a slot in this thread's table: (slot, key).
fn register(c: &Rc<RefCell<SqlConn>>) -> (usize, u64) {
    // Keys stay below 2^53, exact in a Lua number.
    let key = NEXT_KEY.fetch_add(1, Relaxed) & ((1 << 53) - 1);
    SLOTS.with(|t| {
        let mut t = t.borrow_mut();
        let e = (key, Rc::downgrade(c));
        match t.iter().position(|s| s.1.strong_count() == 0) {
            Some(i) => {
                t[i] = e;
                (i, key)
            }
            None => {
                t.push(e);
                (t.len() - 1, key)
            }
        }
    })
}

/// The connection userdata `ud` holds.
fn conn_of(ud: &AnyUserData) -> mlua::Result<mlua::UserDataRef<ConnHandle>> {
    ud.borrow::<ConnHandle>()
}

fn in_use() -> mlua::Error {
    mlua::Error::runtime("the connection is in use")
}

/// `execute` of a prepared statement whose parameters (at most four) are all numbers or
/// NULL, called by the prelude through LuaJIT's FFI: a compiled trace calls it directly,
/// with no Lua C-API call, no argument conversion and no error frame (mlua's callbacks cost
/// about a microsecond a statement, and a C-API function also ends LuaJIT's trace).
/// `kinds` holds each parameter's kind in two bits (1 integer, 2 double, the first
/// parameter's lowest), `nulls` a bit per NULL parameter, `v1..v4` the values. Returns the
/// outcome's kind ([`ROWS`], [`NONE`], [`CLOSED`], [`FAILED`]) and writes its three
/// numbers to `out[0..3]`; the same values, counts and errors as the `execute` function.
/// `slot` and `key` name the connection (see [`register`]); [`ELSEWHERE`] when they name
/// none of this thread's, and nothing was sent.
extern "C" fn hb_sql_execute(
    slot: u32,
    key: f64,
    id: u32,
    kinds: u32,
    n: u32,
    nulls: u32,
    v1: f64,
    v2: f64,
    v3: f64,
    v4: f64,
    out: *mut f64,
) -> c_int {
    let run = || -> Outcome {
        let conn = SLOTS.with(|t| {
            t.borrow()
                .get(slot as usize)
                .filter(|e| e.0 as f64 == key)
                .and_then(|e| e.1.upgrade())
        });
        let Some(conn) = conn else {
            return (ELSEWHERE, 0, 0, 0);
        };
        let Ok(mut c) = conn.try_borrow_mut() else {
            return (ELSEWHERE, 0, 0, 0);
        };
        let c = &mut *c;
        let Some(s) = c.s.as_mut() else {
            return (CLOSED, 0, 0, 0);
        };
        let n = (n as usize).min(4);
        let vals = [v1, v2, v3, v4];
        let mut args = [Arg::Null; 4];
        for (i, (a, &v)) in args.iter_mut().zip(&vals).take(n).enumerate() {
            *a = fast_number(nulls >> i & 1 == 1, (kinds >> (2 * i)) & 3, v);
        }
        c.generation += 1;
        let r = s.exec_rows(id as usize, &args[..n], &mut c.rows);
        outcome(c, r)
    };
    // A panic must not cross the FFI boundary: it is a failure without a message.
    let (kind, a, b, g) =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or((FAILED, 0, 0, 0));
    if !out.is_null() {
        // SAFETY: the prelude passes an array of three doubles it owns.
        unsafe {
            *out = a as f64;
            *out.add(1) = b as f64;
            *out.add(2) = g as f64;
        }
    }
    c_int::from(kind)
}

/// The argument a numeric parameter of kind `k` (1 integer, 2 double) with value `v`
/// sends (`null`: NULL); as [`fast_arg`] converts a Lua number.
#[inline]
fn fast_number(null: bool, k: u32, v: f64) -> Arg<'static> {
    match (null, k) {
        (true, _) => Arg::Null,
        (false, 2) => Arg::Double(v),
        (false, _) => Arg::Big(v as i64),
    }
}

fn list(opt: &Table, k: &str) -> Vec<String> {
    match opt.get::<Value>(k) {
        Ok(Value::Table(t)) => t
            .sequence_values::<Value>()
            .filter_map(|v| match v {
                Ok(Value::String(s)) => Some(s.to_string_lossy()),
                Ok(Value::Integer(n)) => Some(n.to_string()),
                Ok(Value::Number(n)) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        Ok(Value::String(s)) => s
            .to_string_lossy()
            .split(',')
            .map(|x| x.trim().to_string())
            .collect(),
        _ => Vec::new(),
    }
}

fn text(opt: &Table, k: &str) -> String {
    match opt.get::<Value>(k) {
        Ok(Value::String(s)) => s.to_string_lossy(),
        Ok(Value::Integer(n)) => n.to_string(),
        Ok(Value::Number(n)) => n.to_string(),
        Ok(Value::Table(t)) => t
            .get::<Value>(1)
            .ok()
            .and_then(|v| match v {
                Value::String(s) => Some(s.to_string_lossy()),
                Value::Integer(n) => Some(n.to_string()),
                _ => None,
            })
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// The target `sysbench.opt` names for driver `name` (the options' values as exported).
fn target(name: &str, opt: &Table) -> Result<Target, String> {
    let port = |k: &str, d: u16| text(opt, k).parse::<u16>().unwrap_or(d);
    let t = match name {
        "mysql" => Target::Mysql {
            host: text(opt, "mysql_host"),
            port: port("mysql_port", 3306),
            socket: text(opt, "mysql_socket"),
            user: text(opt, "mysql_user"),
            password: text(opt, "mysql_password"),
            db: text(opt, "mysql_db"),
            lean: true,
            tls: mysql_tls(opt)?,
        },
        "pgsql" => Target::Pgsql {
            host: text(opt, "pgsql_host"),
            port: port("pgsql_port", 5432),
            user: text(opt, "pgsql_user"),
            password: text(opt, "pgsql_password"),
            db: text(opt, "pgsql_db"),
            lean: true,
            tls: TlsOpts {
                mode: TlsMode::parse_pg(&text(opt, "pgsql_sslmode"))
                    .map_err(|e| format!("--pgsql-sslmode: {e}"))?,
                ca: text(opt, "pgsql_sslrootcert"),
            },
        },
        "sqlite" => Target::Sqlite {
            path: text(opt, "sqlite_db"),
        },
        other => return Err(format!("invalid database driver name: '{other}'")),
    };
    t.check_tls().map_err(|e| e.to_string())?;
    Ok(t)
}

/// `--mysql-ssl` (sysbench 1.0.20's `on`/`off`, or the native path's modes) and
/// `--mysql-ssl-ca`, as the native path reads them: off (sysbench's default) is no TLS,
/// on is REQUIRED (verified when a CA is given).
fn mysql_tls(opt: &Table) -> Result<TlsOpts, String> {
    let mode = match opt.get::<Value>("mysql_ssl") {
        Ok(Value::Boolean(true)) => TlsMode::Require,
        Ok(Value::Boolean(false) | Value::Nil) => TlsMode::Disable,
        _ => TlsMode::parse_mysql(&text(opt, "mysql_ssl"))
            .map_err(|e| format!("--mysql-ssl: {e}"))?,
    };
    Ok(TlsOpts {
        mode,
        ca: text(opt, "mysql_ssl_ca"),
    })
}

/// What a failed statement means for the script: the error values the prelude raises
/// (kept in `c.err`), after counting it and, for a lost MySQL connection, reconnecting.
fn failed(c: &mut SqlConn, e: &DbError) -> Outcome {
    let ignorable = match c.driver {
        Driver::Mysql if e.class == ErrClass::Lost => {
            // sysbench's MySQL driver reconnects and counts a reconnect, not an error.
            let Some(s) = c.s.as_mut() else {
                return (CLOSED, 0, 0, 0);
            };
            match s.reconnect(RECONNECT_WINDOW) {
                Ok(Reconnected::Yes) => {
                    state::count_reconnect();
                    true
                }
                Ok(Reconnected::RunOver) => {
                    state::count_error();
                    true
                }
                Err(e2) => {
                    state::count_error();
                    let message = e2.message.clone();
                    return keep_error(c, "fatal", &e2, message);
                }
            }
        }
        Driver::Mysql => {
            state::count_error();
            e.class != ErrClass::Lost && c.ignore.iter().any(|x| x == "all" || *x == e.code)
        }
        Driver::Pgsql | Driver::Sqlite => {
            state::count_error();
            let retry = e.class == ErrClass::Retry;
            if retry && let Some(s) = c.s.as_mut() {
                // The failed transaction is rolled back, uncounted (sysbench's pgsql
                // driver does so), so the restarted event can BEGIN again.
                let _ = s.query("ROLLBACK");
            }
            retry
        }
    };
    let message = script_message(c.driver, &e.message);
    keep_error(c, if ignorable { "ignorable" } else { "fatal" }, e, message)
}

/// The server's message as sysbench gives it to a script: PostgreSQL's without the
/// severity hostbench's client puts in front (`ERROR: relation ... does not exist` is
/// `relation ... does not exist` in sysbench's `sql_errmsg` and its `SQL error` line).
fn script_message(driver: Driver, message: &str) -> String {
    if driver == Driver::Pgsql {
        for severity in ["ERROR: ", "FATAL: ", "PANIC: "] {
            if let Some(rest) = message.strip_prefix(severity) {
                return rest.to_string();
            }
        }
    }
    message.to_string()
}

fn keep_error(c: &mut SqlConn, class: &'static str, e: &DbError, message: String) -> Outcome {
    c.err = Some(ErrValues {
        class,
        code: e.code.clone(),
        message: hostbench_core::secret::mask(&message).into_owned(),
        state: e.state.clone(),
    });
    (FAILED, 0, 0, 0)
}

/// A statement's outcome as the prelude reads it (see [`Outcome`]).
#[inline]
fn outcome(c: &mut SqlConn, r: Result<Res, DbError>) -> Outcome {
    match r {
        Ok(r) => {
            state::count_result(r);
            match r {
                Res::Rows(n) => (ROWS, n, c.rows.fields as u64, c.generation),
                Res::Affected(n) => (NONE, n, 0, 0),
            }
        }
        Err(e) => failed(c, &e),
    }
}

/// A bound value as the prelude keeps it in a parameter object: `_k` (1 integer,
/// 2 double, 3 text) and `_v` (nil = NULL).
enum Bound {
    Int(i64),
    Double(f64),
    Text(mlua::String),
    Null,
}

fn bound(p: &Table) -> mlua::Result<Bound> {
    let k: i64 = p.raw_get("_k")?;
    bound_value(k, p.raw_get::<Value>("_v")?)
}

/// The value `v` of a parameter of kind `k` (1 integer, 2 double, 3 text).
#[inline]
fn bound_value(k: i64, v: Value) -> mlua::Result<Bound> {
    Ok(match (k, v) {
        (_, Value::Nil) => Bound::Null,
        (1, Value::Integer(v)) => Bound::Int(v),
        (1, Value::Number(v)) => Bound::Int(v as i64),
        (2, Value::Integer(v)) => Bound::Double(v as f64),
        (2, Value::Number(v)) => Bound::Double(v),
        (_, Value::String(s)) => Bound::Text(s),
        (_, v) => {
            return Err(mlua::Error::runtime(format!(
                "cannot bind a {} value",
                v.type_name()
            )));
        }
    })
}

/// The argument a bound value sends (`text`: a string value's text, None when it is not
/// UTF-8).
fn arg<'a>(b: &Bound, text: Option<&'a str>) -> mlua::Result<Arg<'a>> {
    Ok(match b {
        Bound::Int(v) => Arg::Big(*v),
        Bound::Double(v) => Arg::Double(*v),
        Bound::Null => Arg::Null,
        Bound::Text(_) => match text {
            Some(t) => Arg::Text(t),
            None => return Err(mlua::Error::runtime("a bound string is not valid UTF-8")),
        },
    })
}

/// The argument a parameter of kind `k` (1 integer, 2 double, 3 text) with value `v`
/// sends (`text`: a string value's text).
#[inline]
fn fast_arg<'a>(k: i64, v: &Value, text: Option<&'a str>) -> mlua::Result<Arg<'a>> {
    Ok(match (k, v) {
        (_, Value::Nil) => Arg::Null,
        (1, Value::Integer(v)) => Arg::Big(*v),
        (1, Value::Number(v)) => Arg::Big(*v as i64),
        (2, Value::Integer(v)) => Arg::Double(*v as f64),
        (2, Value::Number(v)) => Arg::Double(*v),
        (_, Value::String(_)) => match text {
            Some(t) => Arg::Text(t),
            None => return Err(mlua::Error::runtime("a bound string is not valid UTF-8")),
        },
        (_, v) => {
            return Err(mlua::Error::runtime(format!(
                "cannot bind a {} value",
                v.type_name()
            )));
        }
    })
}

/// Adds the functions the prelude's `sysbench.sql` wraps to `hb`.
pub fn install(lua: &Lua, hb: &Table) -> mlua::Result<()> {
    let t = lua.create_table()?;
    // check(name, opt) -> nil | message: whether the driver name and options make a target.
    t.set(
        "check",
        lua.create_function(|_, (name, opt): (String, Table)| {
            let bad = target(&name, &opt).err();
            if bad.is_none() {
                DRIVER_USED.store(true, Relaxed);
            }
            Ok(bad)
        })?,
    )?;
    // connect(name, opt) -> conn | nil, message
    t.set(
        "connect",
        lua.create_function(|lua, (name, opt): (String, Table)| {
            let tgt = match target(&name, &opt) {
                Ok(t) => t,
                Err(m) => return lua.pack_multi((Value::Nil, m)),
            };
            let prepared = text(&opt, "db_ps_mode") != "disable";
            // SQLite: the file the options name is created, as a server database exists.
            match tgt.connect_with(true) {
                Ok(c) => {
                    let c = Rc::new(RefCell::new(SqlConn {
                        driver: tgt.driver(),
                        s: Some(Session::with_conn(&tgt, c, prepared)),
                        ignore: list(&opt, "mysql_ignore_errors"),
                        rows: Rows::default(),
                        generation: 0,
                        bound: Vec::new(),
                        err: None,
                    }));
                    let (slot, key) = register(&c);
                    lua.pack_multi((ConnHandle(c), slot, key))
                }
                Err(e) => lua.pack_multi((Value::Nil, format!("connection to {tgt} failed: {e}"))),
            }
        })?,
    )?;
    // query(conn, sql) -> outcome
    t.set(
        "query",
        lua.create_function(|_, (conn, sql): (AnyUserData, mlua::String)| {
            let h = conn_of(&conn)?;
            let mut c = h.0.try_borrow_mut().map_err(|_| in_use())?;
            let c = &mut *c;
            let Some(s) = c.s.as_mut() else {
                return Ok((CLOSED, 0, 0, 0));
            };
            let sql = sql.to_str()?;
            c.generation += 1;
            let r = s.query_rows(&sql, &mut c.rows);
            Ok(outcome(c, r))
        })?,
    )?;
    // err(conn) -> the last failure's values: class, code, message, MySQL's SQLSTATE
    t.set(
        "err",
        lua.create_function(|lua, conn: AnyUserData| {
            let h = conn_of(&conn)?;
            let mut c = h.0.try_borrow_mut().map_err(|_| in_use())?;
            match c.err.take() {
                Some(e) => lua.pack_multi((e.class, e.code, e.message, e.state)),
                None => lua.pack_multi(("fatal", "0", "unknown error", "")),
            }
        })?,
    )?;
    // prepare(conn, sql) -> id | "error" (values from err) | "api", code, message | "closed"
    t.set(
        "prepare",
        lua.create_function(|lua, (conn, sql): (AnyUserData, mlua::String)| {
            let h = conn_of(&conn)?;
            let mut c = h.0.try_borrow_mut().map_err(|_| in_use())?;
            let Some(s) = c.s.as_mut() else {
                return lua.pack_multi("closed");
            };
            let sql = sql.to_str()?;
            match s.prepare(&sql) {
                Ok(id) => lua.pack_multi(id),
                Err(e) => {
                    if c.driver == Driver::Mysql {
                        // sysbench's MySQL prepare error carries no SQL state: "SQL API error".
                        return lua.pack_multi(("api", e.code.clone(), e.message.clone()));
                    }
                    match failed(&mut c, &e) {
                        (CLOSED, ..) => lua.pack_multi("closed"),
                        _ => lua.pack_multi("error"),
                    }
                }
            }
        })?,
    )?;
    // execute(conn, id, kinds, n, v1, v2, v3, v4, params) -> outcome: up to four
    // parameters come as their values, with their kinds (1 integer, 2 double, 3 text) in
    // the two-bit fields of `kinds` (the first parameter's lowest), so that no table is
    // read; more come as `params`, the parameter objects.
    t.set(
        "execute",
        lua.create_function(
            |_,
             (conn, id, kinds, n, v1, v2, v3, v4, params): (
                AnyUserData,
                usize,
                u32,
                usize,
                Value,
                Value,
                Value,
                Value,
                Option<Table>,
            )| {
                let h = conn_of(&conn)?;
                let mut c = h.0.try_borrow_mut().map_err(|_| in_use())?;
                let c = &mut *c;
                if c.s.is_none() {
                    return Ok((CLOSED, 0, 0, 0));
                }
                c.generation += 1;
                if n <= 4 {
                    // The common case: the values straight from the stack, no Vec.
                    let vals = [v1, v2, v3, v4];
                    let mut strs: [Option<mlua::BorrowedStr<'_>>; 4] = [None, None, None, None];
                    for (i, v) in vals.iter().take(n).enumerate() {
                        if let Value::String(t) = v {
                            strs[i] = Some(t.to_str().map_err(|_| {
                                mlua::Error::runtime("a bound string is not valid UTF-8")
                            })?);
                        }
                    }
                    let mut args = [Arg::Null; 4];
                    for (i, v) in vals.iter().take(n).enumerate() {
                        args[i] =
                            fast_arg(i64::from((kinds >> (2 * i)) & 3), v, strs[i].as_deref())?;
                    }
                    let s = c.s.as_mut().expect("checked above");
                    let r = s.exec_rows(id, &args[..n], &mut c.rows);
                    return Ok(outcome(c, r));
                }
                c.bound.clear();
                if let Some(ps) = &params {
                    for i in 1..=ps.raw_len() {
                        c.bound.push(bound(&ps.raw_get::<Table>(i)?)?);
                    }
                }
                let r = {
                    let strs: Vec<Option<mlua::BorrowedStr<'_>>> = c
                        .bound
                        .iter()
                        .map(|b| match b {
                            Bound::Text(t) => t.to_str().ok(),
                            _ => None,
                        })
                        .collect();
                    let args = c
                        .bound
                        .iter()
                        .zip(&strs)
                        .map(|(b, t)| arg(b, t.as_deref()))
                        .collect::<mlua::Result<Vec<_>>>()?;
                    let s = c.s.as_mut().expect("checked above");
                    s.exec_rows(id, &args, &mut c.rows)
                };
                c.bound.clear();
                Ok(outcome(c, r))
            },
        )?,
    )?;
    // fetch(conn, generation, i) -> row i (0-based) of the connection's last result as a
    // table of strings (NULL leaves a hole) | nil past the last row | "replaced" when a
    // later statement on the connection replaced that result
    t.set(
        "fetch",
        lua.create_function(|lua, (conn, generation, i): (AnyUserData, u64, usize)| {
            let h = conn_of(&conn)?;
            let c = h.0.try_borrow().map_err(|_| in_use())?;
            if c.generation != generation {
                return Ok(Value::String(lua.create_string("replaced")?));
            }
            let Some(vals) = c.rows.row(i) else {
                return Ok(Value::Nil);
            };
            let t = lua.create_table_with_capacity(c.rows.fields, 0)?;
            for (k, v) in vals.enumerate() {
                if let Some(b) = v {
                    t.raw_set(k + 1, lua.create_string(b)?)?;
                }
            }
            Ok(Value::Table(t))
        })?,
    )?;
    // reconnect(conn) -> true | false, message
    t.set(
        "reconnect",
        lua.create_function(|lua, conn: AnyUserData| {
            let h = conn_of(&conn)?;
            let mut c = h.0.try_borrow_mut().map_err(|_| in_use())?;
            let Some(s) = c.s.as_mut() else {
                return lua.pack_multi("closed");
            };
            match s.reconnect(RECONNECT_WINDOW) {
                Ok(_) => {
                    state::count_reconnect();
                    lua.pack_multi(true)
                }
                Err(e) => {
                    state::count_error();
                    lua.pack_multi((false, hostbench_core::secret::mask(&e.message).into_owned()))
                }
            }
        })?,
    )?;
    t.set(
        "disconnect",
        lua.create_function(|_, conn: AnyUserData| {
            conn_of(&conn)?.0.try_borrow_mut().map_err(|_| in_use())?.s = None;
            Ok(())
        })?,
    )?;
    // The FFI path of execute (see hb_sql_execute), cast by the prelude.
    t.set(
        "execute_ptr",
        LightUserData(hb_sql_execute as *const () as *mut c_void),
    )?;
    hb.set("sql", t)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "sqlite")]
    fn exec(slot: u32, key: f64, id: u32, out: &mut [f64; 3]) -> c_int {
        hb_sql_execute(slot, key, id, 0, 0, 0, 0.0, 0.0, 0.0, 0.0, out.as_mut_ptr())
    }

    /// The FFI path runs a statement only on the connection its slot and key name in this
    /// thread: a wrong key, a slot of another thread or of a dropped connection send
    /// nothing and say ELSEWHERE (the prelude then takes the C-API path).
    #[cfg(feature = "sqlite")]
    #[test]
    fn the_ffi_path_finds_only_this_threads_connection() {
        let d = std::env::temp_dir().join(format!("hostbench-luasql-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let tgt = Target::Sqlite {
            path: d.join("s.db").display().to_string(),
        };
        let conn = tgt.connect_with(true).unwrap();
        let c = Rc::new(RefCell::new(SqlConn {
            driver: tgt.driver(),
            s: Some(Session::with_conn(&tgt, conn, true)),
            ignore: Vec::new(),
            rows: Rows::default(),
            generation: 0,
            bound: Vec::new(),
            err: None,
        }));
        let id = c
            .borrow_mut()
            .s
            .as_mut()
            .unwrap()
            .prepare("SELECT 1, 2")
            .unwrap() as u32;
        let (slot, key) = register(&c);
        let (slot, key) = (slot as u32, key as f64);
        let mut out = [9.0; 3];
        assert_eq!(exec(slot, key, id, &mut out), c_int::from(ROWS));
        assert_eq!(out, [1.0, 2.0, 1.0], "rows, fields, generation");
        assert_eq!(exec(slot, key + 1.0, id, &mut out), c_int::from(ELSEWHERE));
        assert_eq!(exec(slot + 100, key, id, &mut out), c_int::from(ELSEWHERE));
        assert_eq!(out, [0.0; 3]);
        let there = std::thread::spawn(move || {
            let mut out = [9.0; 3];
            exec(slot, key, id, &mut out)
        });
        assert_eq!(there.join().unwrap(), c_int::from(ELSEWHERE));
        assert_eq!(c.borrow().generation, 1, "only the first call ran");
        drop(c);
        assert_eq!(exec(slot, key, id, &mut out), c_int::from(ELSEWHERE));
        let _ = std::fs::remove_dir_all(&d);
    }
}
