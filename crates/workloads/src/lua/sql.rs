//! The Rust half of `sysbench.sql` (first slice): a driver from the options in
//! `sysbench.opt` (`--db-driver=mysql|pgsql|sqlite` and the `--mysql-*`, `--pgsql-*`,
//! `--sqlite-db` options), connections over hostbench's own database clients
//! (`db/driver.rs`: the lean PostgreSQL and MySQL clients, SQLite), and text queries,
//! counted into the thread's counters as sysbench counts them (a result set is a read,
//! affected rows > 0 a write, anything else "other", a failure an error). The Lua half
//! (objects, error tables and messages) is in the prelude.
//!
//! Not yet: result rows (`query_row`, `fetch_row`, `nfields`), prepared statements, bulk
//! inserts, reconnects (docs/lua.md, Status).

use super::state;
use crate::db::driver::{Conn, DbError, ErrClass, Res, Target, TlsMode, TlsOpts};
use mlua::{Lua, Table, UserData, Value};

/// One connection, owned by the Lua state that opened it (closed when collected).
struct SqlConn(Option<Box<dyn Conn>>);

impl UserData for SqlConn {}

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
    let tls = TlsOpts {
        mode: TlsMode::Prefer,
        ca: String::new(),
    };
    Ok(match name {
        "mysql" => Target::Mysql {
            host: text(opt, "mysql_host"),
            port: port("mysql_port", 3306),
            socket: text(opt, "mysql_socket"),
            user: text(opt, "mysql_user"),
            password: text(opt, "mysql_password"),
            db: text(opt, "mysql_db"),
            lean: true,
            tls,
        },
        "pgsql" => Target::Pgsql {
            host: text(opt, "pgsql_host"),
            port: port("pgsql_port", 5432),
            user: text(opt, "pgsql_user"),
            password: text(opt, "pgsql_password"),
            db: text(opt, "pgsql_db"),
            lean: true,
            tls,
        },
        "sqlite" => Target::Sqlite {
            path: text(opt, "sqlite_db"),
        },
        other => return Err(format!("invalid database driver name: '{other}'")),
    })
}

fn error_values(lua: &Lua, e: &DbError) -> mlua::Result<mlua::MultiValue> {
    let class = match e.class {
        ErrClass::Retry => "ignorable",
        ErrClass::Lost | ErrClass::Other => "fatal",
    };
    lua.pack_multi((
        "error",
        class,
        e.code.clone(),
        hostbench_core::secret::mask(&e.message).into_owned(),
    ))
}

/// Adds the functions the prelude's `sysbench.sql` wraps to `hb`.
pub fn install(lua: &Lua, hb: &Table) -> mlua::Result<()> {
    let t = lua.create_table()?;
    // check(name, opt) -> nil | message: whether the driver name and options make a target.
    t.set(
        "check",
        lua.create_function(|_, (name, opt): (String, Table)| Ok(target(&name, &opt).err()))?,
    )?;
    // connect(name, opt) -> conn | nil, message
    t.set(
        "connect",
        lua.create_function(|lua, (name, opt): (String, Table)| {
            let tgt = match target(&name, &opt) {
                Ok(t) => t,
                Err(m) => return lua.pack_multi((Value::Nil, m)),
            };
            // SQLite: the file the options name is created, as a server database exists.
            match tgt.connect_with(true) {
                Ok(c) => lua.pack_multi(SqlConn(Some(c))),
                Err(e) => lua.pack_multi((Value::Nil, format!("connection to {tgt} failed: {e}"))),
            }
        })?,
    )?;
    // query(conn, sql) -> "rows", n | "none", affected | "error", class, code, message |
    // "closed"
    t.set(
        "query",
        lua.create_function(|lua, (conn, sql): (mlua::AnyUserData, mlua::String)| {
            let mut c = conn.borrow_mut::<SqlConn>()?;
            let Some(conn) = c.0.as_mut() else {
                return lua.pack_multi("closed");
            };
            let sql = sql.to_str()?;
            match conn.query(&sql) {
                Ok(r) => {
                    state::count_result(r);
                    match r {
                        Res::Rows(n) => lua.pack_multi(("rows", n)),
                        Res::Affected(n) => lua.pack_multi(("none", n)),
                    }
                }
                Err(e) => {
                    state::count_error();
                    error_values(lua, &e)
                }
            }
        })?,
    )?;
    t.set(
        "disconnect",
        lua.create_function(|_, conn: mlua::AnyUserData| {
            conn.borrow_mut::<SqlConn>()?.0 = None;
            Ok(())
        })?,
    )?;
    hb.set("sql", t)?;
    Ok(())
}
