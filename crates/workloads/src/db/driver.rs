//! The driver layer: where to connect ([`Target`], from sysbench's `--db-driver`,
//! `--pgsql-*`, `--mysql-*` options or a native `--db-url`), one connection ([`Conn`]),
//! and a [`Session`] that keeps the statements a worker prepared so it can re-prepare them
//! after a reconnect.
//!
//! Invariants: SQL is written with `?` placeholders (the PostgreSQL driver numbers them);
//! a statement is classified by its result as sysbench does — a result set is a read,
//! otherwise affected rows > 0 a write, otherwise "other" (BEGIN, COMMIT, an UPDATE that
//! matched nothing). Passwords appear only in [`Target`] and never in its `Display` or in
//! an error message.

use hostbench_core::params::{ParamKind, ParamSpec, Params};
use hostbench_core::secret::mask;
use hostbench_core::workload::WorkloadError;
use std::fmt;
use std::time::Duration;

pub use hostbench_tls::{Mode as TlsMode, Opts as TlsOpts};

/// Why the `mysql` crate client takes no CA file.
pub const MYSQL_CRATE_CA: &str = "--mysql-client=crate cannot verify the server against a CA \
    file (--mysql-ssl-ca, ssl-ca=): the mysql crate always trusts the public Mozilla roots \
    besides it, so any publicly trusted certificate would pass. Use hostbench's own client \
    (the default, --mysql-client=lean) to verify with a CA file, or --mysql-ssl=REQUIRED \
    without one to encrypt without verifying";

/// TLS options that would verify less than they say ([`Target::check_tls`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsCheckError {
    /// `verify-ca` without a CA file.
    #[error(transparent)]
    Mode(#[from] hostbench_tls::ModeError),
    /// A CA file on the `mysql` crate client, which trusts the public roots besides it.
    #[error("{MYSQL_CRATE_CA}")]
    CrateWithCa,
}

/// Which database a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// SQLite, embedded (bundled).
    Sqlite,
    /// PostgreSQL.
    Pgsql,
    /// MariaDB or MySQL.
    Mysql,
}

impl Driver {
    /// sysbench's driver name.
    pub fn name(self) -> &'static str {
        match self {
            Driver::Sqlite => "sqlite",
            Driver::Pgsql => "pgsql",
            Driver::Mysql => "mysql",
        }
    }
}

/// A bound parameter. Borrowed text, so binding allocates nothing on our side.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    /// An INTEGER column value.
    Int(i32),
    /// A CHAR/TEXT column value.
    Text(&'a str),
    /// A 64-bit integer (sysbench's Lua binds every integer type as BIGINT).
    Big(i64),
    /// A double (sysbench's FLOAT/DOUBLE binds).
    Double(f64),
    /// SQL NULL.
    Null,
}

/// Result rows read as text, as sysbench's Lua API hands them over (`query_row`,
/// `fetch_row`): values row after row in one buffer, NULL as None. Only callers that look
/// at values use it ([`Conn::query_rows`], [`Conn::exec_rows`]); the benchmark paths
/// ([`Conn::exec`], [`Conn::query`]) read rows without keeping them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Rows {
    /// Columns per row (0 for a result whose values the client cannot read: MySQL's
    /// binary-protocol rows of a prepared statement, as in sysbench).
    pub fields: usize,
    /// The values' bytes, end to end.
    data: Vec<u8>,
    /// Each value's (start, end) in `data`, row after row; None = NULL.
    cells: Vec<Option<(usize, usize)>>,
}

impl Rows {
    /// Forgets every value (keeps the buffers).
    pub fn clear(&mut self) {
        self.fields = 0;
        self.data.clear();
        self.cells.clear();
    }

    /// Appends one value (None = NULL) to the current row.
    pub fn push(&mut self, v: Option<&[u8]>) {
        self.cells.push(v.map(|b| {
            let at = self.data.len();
            self.data.extend_from_slice(b);
            (at, self.data.len())
        }));
    }

    /// Appends one value written by `f` (None = NULL) to the current row.
    pub fn push_with(&mut self, f: impl FnOnce(&mut Vec<u8>)) {
        let at = self.data.len();
        f(&mut self.data);
        self.cells.push(Some((at, self.data.len())));
    }

    /// How many rows hold values (0 when `fields` is 0).
    pub fn len(&self) -> usize {
        self.cells.len().checked_div(self.fields).unwrap_or(0)
    }

    /// True when no row holds values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`'s values (`fields` of them), or None past the last row.
    pub fn row(&self, i: usize) -> Option<impl Iterator<Item = Option<&[u8]>>> {
        if i >= self.len() {
            return None;
        }
        let cells = &self.cells[i * self.fields..(i + 1) * self.fields];
        Some(cells.iter().map(|c| c.map(|(a, b)| &self.data[a..b])))
    }
}

/// What a statement returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Res {
    /// A result set with this many rows (a read, even when empty).
    Rows(u64),
    /// No result set; this many rows changed (> 0: a write, else "other").
    Affected(u64),
}

/// How an error is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrClass {
    /// The connection is gone: reconnect, re-prepare, restart the transaction.
    Lost,
    /// Deadlock, serialization failure, lock wait, busy database, unique violation: the
    /// transaction may succeed when run again (sysbench's default ignorable set).
    Retry,
    /// Anything else: fatal unless `--db-ignore-errors=all` or the code is listed.
    Other,
}

/// A database error: class, the server's code (SQLSTATE, MySQL errno, SQLite result code)
/// and the message (never with a password).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    /// How to treat it.
    pub class: ErrClass,
    /// The server's code, empty when there is none (I/O errors).
    pub code: String,
    /// The SQLSTATE a MySQL server sends beside its errno (`23000`); empty elsewhere
    /// (PostgreSQL's code is its SQLSTATE).
    pub state: String,
    /// What happened.
    pub message: String,
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.code.is_empty() {
            write!(f, "{}", mask(&self.message))
        } else {
            write!(f, "{} (error {})", mask(&self.message), self.code)
        }
    }
}

impl DbError {
    /// An error of class `class` with no server code.
    pub fn new(class: ErrClass, message: impl Into<String>) -> DbError {
        DbError {
            class,
            code: String::new(),
            state: String::new(),
            message: message.into(),
        }
    }
}

/// A prepared statement of one connection.
pub type Stmt = usize;

/// One connection to a database.
pub trait Conn: Send {
    /// Prepares `sql` (with `?` placeholders) on the server (or in the library).
    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError>;
    /// Runs prepared statement `s` with `args`, reading (and dropping) every row.
    fn exec(&mut self, s: Stmt, args: &[Arg<'_>]) -> Result<Res, DbError>;
    /// Runs `sql` as text (DDL, multi-row INSERTs, sysbench's non-prepared queries).
    fn query(&mut self, sql: &str) -> Result<Res, DbError>;
    /// As [`Conn::query`], keeping the rows' values as text in `out` (cleared first).
    fn query_rows(&mut self, sql: &str, out: &mut Rows) -> Result<Res, DbError>;
    /// As [`Conn::exec`], keeping the rows' values as text in `out` (cleared first). MySQL
    /// clients leave `out.fields` 0 (binary-protocol rows are counted, not read), as
    /// sysbench's MySQL driver does.
    fn exec_rows(&mut self, s: Stmt, args: &[Arg<'_>], out: &mut Rows) -> Result<Res, DbError>;
    /// Forgets every prepared statement (they are re-prepared on the new connection).
    fn clear(&mut self);
    /// Which database this is.
    fn driver(&self) -> Driver;
    /// The server's version string.
    fn server_version(&mut self) -> String;
    /// TLS on this connection: `TLSv1.3 TLS_AES_256_GCM_SHA384` (the suite by its OpenSSL
    /// name), `none`, or None for an embedded database (SQLite) or when the client could
    /// not tell (the `mysql` crate client asks the server; an unknown state is never
    /// reported as `none`).
    fn tls(&mut self) -> Option<String> {
        None
    }
}

/// Where to connect.
#[derive(Clone)]
pub enum Target {
    /// An SQLite database file.
    Sqlite {
        /// The file.
        path: String,
    },
    /// A PostgreSQL server.
    Pgsql {
        /// Host name, address or socket directory.
        host: String,
        /// TCP port.
        port: u16,
        /// User.
        user: String,
        /// Password (empty = none).
        password: String,
        /// Database.
        db: String,
        /// Which client: hostbench's own (true, `--pgsql-client=lean`) or the `postgres`
        /// crate's.
        lean: bool,
        /// TLS: `sslmode` and `sslrootcert` (never used over a unix socket).
        tls: TlsOpts,
    },
    /// A MariaDB/MySQL server.
    Mysql {
        /// Host name or address.
        host: String,
        /// TCP port.
        port: u16,
        /// Unix socket (wins over host and port when set).
        socket: String,
        /// User.
        user: String,
        /// Password (empty = none).
        password: String,
        /// Database.
        db: String,
        /// Which client: hostbench's own (true, `--mysql-client=lean`) or the `mysql`
        /// crate's.
        lean: bool,
        /// TLS: `--mysql-ssl` / `ssl-mode` and `--mysql-ssl-ca` / `ssl-ca` (never used over
        /// a unix socket).
        tls: TlsOpts,
    },
}

impl fmt::Display for Target {
    /// The target as a URL with the password hidden.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pw = |p: &str| if p.is_empty() { "" } else { ":***" };
        match self {
            Target::Sqlite { path } => write!(f, "sqlite:{path}"),
            Target::Pgsql {
                host,
                port,
                user,
                password,
                db,
                tls,
                ..
            } => {
                write!(f, "postgres://{user}{}@{host}:{port}/{db}", pw(password))?;
                let mut sep = '?';
                if tls.mode != TlsMode::Prefer {
                    write!(f, "{sep}sslmode={}", tls.mode.pg_name())?;
                    sep = '&';
                }
                if !tls.ca.is_empty() {
                    write!(f, "{sep}sslrootcert={}", tls.ca)?;
                }
                Ok(())
            }
            Target::Mysql {
                host,
                port,
                socket,
                user,
                password,
                db,
                tls,
                ..
            } => {
                let mut sep = '?';
                if socket.is_empty() {
                    write!(f, "mysql://{user}{}@{host}:{port}/{db}", pw(password))?;
                } else {
                    write!(
                        f,
                        "mysql://{user}{}@localhost/{db}?socket={socket}",
                        pw(password)
                    )?;
                    sep = '&';
                }
                if tls.mode != TlsMode::Disable {
                    write!(f, "{sep}ssl-mode={}", tls.mode.mysql_name())?;
                    sep = '&';
                }
                if !tls.ca.is_empty() {
                    write!(f, "{sep}ssl-ca={}", tls.ca)?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Target({self})")
    }
}

/// The connection parameters every database workload takes (sysbench's option names).
#[macro_export]
#[doc(hidden)]
macro_rules! db_params {
    ($($extra:expr),* $(,)?) => {
        &[
            $($extra,)*
            $crate::db::driver::p_choice("db_driver", &["sqlite", "pgsql", "mysql"], "sqlite",
                "database driver (hostbench's default is the embedded SQLite; sysbench's is mysql)", "db-driver"),
            $crate::db::driver::p_text("db_url", "",
                "hostbench: connection URL, sqlite:PATH, postgres://USER@HOST[:PORT]/DB[?sslmode=MODE&sslrootcert=PATH] or mysql://USER@HOST[:PORT]/DB[?ssl-mode=MODE&ssl-ca=PATH] (USER:PASSWORD@HOST when the server wants a password) (wins over the driver options; any other URL parameter is an error)", "db-url"),
            $crate::db::driver::p_choice("db_ps_mode", &["auto", "disable"], "auto",
                "prepared statements: auto = server-side, disable = values substituted into the SQL text", "db-ps-mode"),
            $crate::db::driver::p_text("db_ignore_errors", "auto",
                "errors that restart the transaction instead of stopping the run: auto (deadlocks, serialization failures, lock waits, busy, unique violations; lost connections always reconnect), all, or a list of codes (SQLSTATEs, MySQL errnos, SQLite result codes)", "db-ignore-errors"),
            $crate::db::driver::p_seconds("db_reconnect_timeout", "10",
                "hostbench: how long a worker keeps trying to reconnect after a lost connection (the server restarting) before the run fails; the run's own end stops the wait sooner", "db-reconnect-timeout"),
            $crate::db::driver::p_text("mysql_ignore_errors", "",
                "sysbench's name for --db-ignore-errors with the MySQL driver (codes, or all)", "mysql-ignore-errors"),
            $crate::db::driver::p_text("sqlite_db", "sbtest.db", "SQLite database file", "sqlite-db"),
            $crate::db::driver::p_text("pgsql_host", "localhost", "PostgreSQL server host", "pgsql-host"),
            $crate::db::driver::p_port("pgsql_port", "5432", "PostgreSQL server port", "pgsql-port"),
            $crate::db::driver::p_text("pgsql_user", "sbtest", "PostgreSQL user", "pgsql-user"),
            $crate::db::driver::p_text("pgsql_password", "", "PostgreSQL password", "pgsql-password"),
            $crate::db::driver::p_text("pgsql_db", "sbtest", "PostgreSQL database name", "pgsql-db"),
            $crate::db::driver::p_choice("pgsql_sslmode", &["disable", "prefer", "require", "verify-ca", "verify-full"], "prefer",
                "PostgreSQL TLS, as libpq's sslmode: disable, prefer (TLS when the server offers it; libpq's default), require (TLS or fail; the certificate is checked only with --pgsql-sslrootcert), verify-ca (the certificate chain must lead to --pgsql-sslrootcert, which it requires), verify-full (the chain must lead to --pgsql-sslrootcert, else to the Mozilla roots built in, and the certificate must name the host); never over a unix socket; sslmode= in --db-url wins", "pgsql-sslmode"),
            $crate::db::driver::p_text("pgsql_sslrootcert", "",
                "hostbench: PEM file of the CA the PostgreSQL server's certificate must lead to (libpq's sslrootcert; with require, verifies as verify-ca); sslrootcert= in --db-url wins", "pgsql-sslrootcert"),
            $crate::db::driver::p_text("mysql_host", "localhost", "MySQL server host", "mysql-host"),
            $crate::db::driver::p_port("mysql_port", "3306", "MySQL server port", "mysql-port"),
            $crate::db::driver::p_text("mysql_socket", "", "MySQL socket", "mysql-socket"),
            $crate::db::driver::p_text("mysql_user", "sbtest", "MySQL user", "mysql-user"),
            $crate::db::driver::p_text("mysql_password", "", "MySQL password", "mysql-password"),
            $crate::db::driver::p_text("mysql_db", "sbtest", "MySQL database name", "mysql-db"),
            $crate::db::driver::p_text("mysql_ssl", "off",
                "MariaDB/MySQL TLS, as the mysql client's --ssl-mode: DISABLED (off, the default), PREFERRED, REQUIRED (on: TLS or fail; the certificate is checked only with --mysql-ssl-ca), VERIFY_CA (the chain must lead to --mysql-ssl-ca, which it requires), VERIFY_IDENTITY (the chain must lead to --mysql-ssl-ca, else to the Mozilla roots built in, and the certificate must name the host); never over a unix socket; ssl-mode= in --db-url wins", "mysql-ssl"),
            $crate::db::driver::p_text("mysql_ssl_ca", "",
                "PEM file of the CA the MariaDB/MySQL server's certificate must lead to (with REQUIRED, verifies as VERIFY_CA; not with --mysql-client=crate); ssl-ca= in --db-url wins", "mysql-ssl-ca"),
            $crate::db::driver::p_choice("mysql_client", &["lean", "crate"], "lean",
                "hostbench: MariaDB/MySQL client, lean = hostbench's own binary-protocol client (mysql_native_password, caching_sha2_password, TLS with rustls), crate = the mysql crate", "mysql-client"),
            $crate::db::driver::p_choice("pgsql_client", &["lean", "crate"], "lean",
                "hostbench: PostgreSQL client, lean = hostbench's own blocking protocol-3 client (trust, password, md5, SCRAM-SHA-256; TLS with rustls), crate = the postgres crate", "pgsql-client"),
        ]
    };
}

/// A text parameter (helper for [`db_params!`]).
pub const fn p_text(
    name: &'static str,
    default: &'static str,
    help: &'static str,
    sb: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Text,
        default,
        unit: "",
        help,
        sysbench: Some(sb),
    }
}

/// A duration parameter in seconds (helper for [`db_params!`]).
pub const fn p_seconds(
    name: &'static str,
    default: &'static str,
    help: &'static str,
    sb: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Seconds,
        default,
        unit: "s",
        help,
        sysbench: Some(sb),
    }
}

/// How long [`Session::reconnect`] may wait for a server to come back: the
/// `db_reconnect_timeout` parameter (`--db-reconnect-timeout`).
pub fn reconnect_window(p: &Params) -> Duration {
    Duration::try_from_secs_f64(p.float("db_reconnect_timeout")).unwrap_or(Duration::MAX)
}

/// A choice parameter (helper for [`db_params!`]).
pub const fn p_choice(
    name: &'static str,
    words: &'static [&'static str],
    default: &'static str,
    help: &'static str,
    sb: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Choice(words),
        default,
        unit: "",
        help,
        sysbench: Some(sb),
    }
}

/// A TCP port parameter (helper for [`db_params!`]).
pub const fn p_port(
    name: &'static str,
    default: &'static str,
    help: &'static str,
    sb: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Int { min: 1, max: 65535 },
        default,
        unit: "",
        help,
        sysbench: Some(sb),
    }
}

/// A bad option ([`WorkloadError::usage`]), any password in it masked.
fn bad(msg: String) -> WorkloadError {
    WorkloadError::usage(mask(&msg).into_owned())
}

/// The server refused ([`WorkloadError::environment`]), any password in it masked.
fn refused(msg: String) -> WorkloadError {
    WorkloadError::environment(mask(&msg).into_owned())
}

struct UrlParts {
    user: Option<String>,
    password: Option<String>,
    host: Option<String>,
    port: Option<u16>,
    db: Option<String>,
    /// The query's `key=value` pairs, decoded, in order.
    query: Vec<(String, String)>,
}

fn split_url(url: &str, rest: &str) -> Result<UrlParts, WorkloadError> {
    let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = main.split_once('/').unwrap_or((main, ""));
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let (user, password) = match userinfo {
        Some(u) => match u.split_once(':') {
            Some((u, p)) => (
                Some(hostbench_core::input::percent_decode(u)),
                Some(hostbench_core::input::percent_decode(p)),
            ),
            None => (Some(hostbench_core::input::percent_decode(u)), None),
        },
        None => (None, None),
    };
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() || !p.is_empty() => {
            let port = p.parse::<u16>().map_err(|_| {
                bad(format!(
                    "--db-url={url}: '{p}' is not a port number (write HOST:PORT, e.g. 127.0.0.1:5432)"
                ))
            })?;
            (Some(hostbench_core::input::percent_decode(h)), Some(port))
        }
        // A percent-encoded socket directory (`%2Fvar%2Frun%2Fpostgresql`), as libpq takes it.
        _ => (Some(hostbench_core::input::percent_decode(hostport)), None),
    };
    let mut pairs = Vec::new();
    for kv in query.split('&').filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        pairs.push((
            hostbench_core::input::percent_decode(k),
            hostbench_core::input::percent_decode(v),
        ));
    }
    Ok(UrlParts {
        user,
        password,
        host: host.filter(|h| !h.is_empty()),
        port,
        db: Some(hostbench_core::input::percent_decode(path)).filter(|d| !d.is_empty()),
        query: pairs,
    })
}

/// The URL's parameters checked against `known` (an unknown one is an error naming it and
/// the known ones, never silently dropped); the last value of each wins.
fn url_params<'a>(
    url: &str,
    u: &'a UrlParts,
    known: &[&str],
) -> Result<Vec<(&'a str, &'a str)>, WorkloadError> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for (k, v) in &u.query {
        if !known.contains(&k.as_str()) {
            return Err(bad(format!(
                "--db-url={url}: unknown URL parameter '{k}' (known: {})",
                known.join(", ")
            )));
        }
        out.retain(|(o, _)| *o != k.as_str());
        out.push((k.as_str(), v.as_str()));
    }
    Ok(out)
}

fn url_param<'a>(ps: &[(&str, &'a str)], k: &str) -> Option<&'a str> {
    ps.iter().find(|(n, _)| *n == k).map(|(_, v)| *v)
}

impl Target {
    /// The target the parameters name: `db_url` when set, else `db_driver` and its
    /// sysbench options.
    pub fn from_params(p: &Params) -> Result<Target, WorkloadError> {
        let lean = p.text("mysql_client") != "crate";
        let pg_lean = p.text("pgsql_client") != "crate";
        let pg_tls = TlsOpts {
            mode: TlsMode::parse_pg(p.text("pgsql_sslmode"))
                .map_err(|e| bad(format!("--pgsql-sslmode: {e}")))?,
            ca: p.text("pgsql_sslrootcert").to_string(),
        };
        let my_tls = TlsOpts {
            mode: TlsMode::parse_mysql(p.text("mysql_ssl"))
                .map_err(|e| bad(format!("--mysql-ssl: {e}")))?,
            ca: p.text("mysql_ssl_ca").to_string(),
        };
        let url = p.text("db_url");
        if !url.is_empty() {
            let mut t = Target::from_url_with(url, &pg_tls, &my_tls)?;
            match &mut t {
                Target::Mysql { lean: l, .. } => *l = lean,
                Target::Pgsql { lean: l, .. } => *l = pg_lean,
                Target::Sqlite { .. } => {}
            }
            t.check_tls().map_err(|e| bad(e.to_string()))?;
            return Ok(t);
        }
        let t = match p.text("db_driver") {
            "pgsql" => Target::Pgsql {
                host: p.text("pgsql_host").to_string(),
                port: p.int("pgsql_port") as u16,
                user: p.text("pgsql_user").to_string(),
                password: p.text("pgsql_password").to_string(),
                db: p.text("pgsql_db").to_string(),
                lean: pg_lean,
                tls: pg_tls,
            },
            "mysql" => Target::Mysql {
                host: p.text("mysql_host").to_string(),
                port: p.int("mysql_port") as u16,
                socket: p.text("mysql_socket").to_string(),
                user: p.text("mysql_user").to_string(),
                password: p.text("mysql_password").to_string(),
                db: p.text("mysql_db").to_string(),
                lean,
                tls: my_tls,
            },
            _ => Target::Sqlite {
                path: p.text("sqlite_db").to_string(),
            },
        };
        t.check_tls().map_err(|e| bad(e.to_string()))?;
        Ok(t)
    }

    /// Refuses TLS options that would verify less than they say: `verify-ca` without a CA
    /// file (see `hostbench_tls::Opts::check`), and a CA file on the `mysql` crate client,
    /// which always trusts the public roots besides it.
    pub fn check_tls(&self) -> Result<(), TlsCheckError> {
        match self {
            Target::Sqlite { .. } => Ok(()),
            Target::Pgsql { tls, .. } => Ok(tls.check(false)?),
            Target::Mysql { tls, lean, .. } => {
                tls.check(true)?;
                if !lean && tls.mode != TlsMode::Disable && !tls.ca.is_empty() {
                    return Err(TlsCheckError::CrateWithCa);
                }
                Ok(())
            }
        }
    }

    /// Parses `sqlite:PATH`, `postgres://…` (or `postgresql://`) and `mysql://…`
    /// (or `mariadb://`).
    pub fn from_url(url: &str) -> Result<Target, WorkloadError> {
        let pg = TlsOpts {
            mode: TlsMode::Prefer,
            ca: String::new(),
        };
        Target::from_url_with(url, &pg, &TlsOpts::disabled())
    }

    /// As [`Target::from_url`], with the TLS options a URL without TLS parameters gets
    /// (`--pgsql-sslmode`, `--mysql-ssl`, ...): PostgreSQL URLs take `host` (a socket
    /// directory), `sslmode` and `sslrootcert`; MySQL URLs `socket` (or `host=/path`),
    /// `ssl-mode` and `ssl-ca`. Any other parameter is an error.
    pub fn from_url_with(
        url: &str,
        pg_tls: &TlsOpts,
        my_tls: &TlsOpts,
    ) -> Result<Target, WorkloadError> {
        if let Some(path) = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            if path.is_empty() {
                return Err(bad(format!(
                    "--db-url={url}: no file after 'sqlite:' (e.g. sqlite:sbtest.db)"
                )));
            }
            return Ok(Target::Sqlite {
                path: path.to_string(),
            });
        }
        if let Some(rest) = url
            .strip_prefix("postgres://")
            .or_else(|| url.strip_prefix("postgresql://"))
        {
            let u = split_url(url, rest)?;
            let ps = url_params(url, &u, &["host", "sslmode", "sslrootcert"])?;
            let mut tls = pg_tls.clone();
            if let Some(m) = url_param(&ps, "sslmode") {
                tls.mode = TlsMode::parse_pg(m).map_err(|e| bad(format!("--db-url={url}: {e}")))?;
            }
            if let Some(c) = url_param(&ps, "sslrootcert") {
                tls.ca = c.to_string();
            }
            let host = url_param(&ps, "host").map(str::to_string);
            let t = Target::Pgsql {
                host: host
                    .filter(|h| !h.is_empty())
                    .or(u.host.clone())
                    .unwrap_or_else(|| "localhost".into()),
                port: u.port.unwrap_or(5432),
                user: u.user.clone().unwrap_or_else(|| "postgres".into()),
                password: u.password.clone().unwrap_or_default(),
                db: u.db.clone().unwrap_or_else(|| "postgres".into()),
                lean: true,
                tls,
            };
            t.check_tls()
                .map_err(|e| bad(format!("--db-url={url}: {e}")))?;
            return Ok(t);
        }
        if let Some(rest) = url
            .strip_prefix("mysql://")
            .or_else(|| url.strip_prefix("mariadb://"))
        {
            let u = split_url(url, rest)?;
            let ps = url_params(url, &u, &["socket", "host", "ssl-mode", "ssl-ca"])?;
            let mut tls = my_tls.clone();
            if let Some(m) = url_param(&ps, "ssl-mode") {
                tls.mode =
                    TlsMode::parse_mysql(m).map_err(|e| bad(format!("--db-url={url}: {e}")))?;
            }
            if let Some(c) = url_param(&ps, "ssl-ca") {
                tls.ca = c.to_string();
            }
            let socket = url_param(&ps, "socket")
                .or_else(|| url_param(&ps, "host").filter(|h| h.starts_with('/')))
                .unwrap_or_default()
                .to_string();
            let host = url_param(&ps, "host")
                .filter(|h| !h.is_empty() && !h.starts_with('/'))
                .map(str::to_string)
                .or(u.host.clone());
            let t = Target::Mysql {
                host: host.unwrap_or_else(|| "localhost".into()),
                port: u.port.unwrap_or(3306),
                socket,
                user: u.user.clone().unwrap_or_else(|| "root".into()),
                password: u.password.clone().unwrap_or_default(),
                db: u.db.clone().unwrap_or_else(|| "test".into()),
                lean: true,
                tls,
            };
            t.check_tls()
                .map_err(|e| bad(format!("--db-url={url}: {e}")))?;
            return Ok(t);
        }
        Err(bad(format!(
            "--db-url={url}: unknown kind of URL (use sqlite:PATH, postgres://USER@HOST:PORT/DB or mysql://USER@HOST:PORT/DB)"
        )))
    }

    /// Which database this is.
    pub fn driver(&self) -> Driver {
        match self {
            Target::Sqlite { .. } => Driver::Sqlite,
            Target::Pgsql { .. } => Driver::Pgsql,
            Target::Mysql { .. } => Driver::Mysql,
        }
    }

    /// Opens one connection (an SQLite file must exist).
    pub fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        self.connect_with(false)
    }

    /// Opens one connection; `create` lets SQLite create its file (prepare).
    pub fn connect_with(&self, create: bool) -> Result<Box<dyn Conn>, DbError> {
        let _ = create;
        match self {
            #[cfg(feature = "sqlite")]
            Target::Sqlite { path } => {
                Ok(Box::new(crate::db::sqlite::SqliteConn::open(path, create)?))
            }
            #[cfg(feature = "postgres")]
            Target::Pgsql { lean: true, .. } => {
                Ok(Box::new(crate::db::pg_lean::PgLeanConn::open(self)?))
            }
            #[cfg(feature = "postgres")]
            Target::Pgsql { .. } => Ok(Box::new(crate::db::pg::PgConn::open(self)?)),
            #[cfg(feature = "mysql")]
            Target::Mysql { lean: true, .. } => {
                Ok(Box::new(crate::db::mysql_lean::LeanConn::open(self)?))
            }
            #[cfg(feature = "mysql")]
            Target::Mysql { .. } => Ok(Box::new(crate::db::mysql::MysqlConn::open(self)?)),
            #[allow(unreachable_patterns)]
            _ => Err(DbError::new(
                ErrClass::Other,
                format!(
                    "this hostbench was built without the {} driver (cargo feature)",
                    self.driver().name()
                ),
            )),
        }
    }

    /// Opens one connection, or a setup error naming the target (password hidden) and
    /// what to check; `create` lets SQLite create its file (prepare).
    pub fn connect_for_setup(&self, create: bool) -> Result<Box<dyn Conn>, WorkloadError> {
        self.connect_with(create).map_err(|e| {
            let hint = match self.driver() {
                Driver::Sqlite => "check the path and its directory's permissions",
                Driver::Pgsql => {
                    "check --pgsql-host/--pgsql-port/--pgsql-user/--pgsql-password/--pgsql-db or --db-url, and that the server is running"
                }
                Driver::Mysql => {
                    "check --mysql-host/--mysql-port/--mysql-user/--mysql-password/--mysql-db or --db-url, and that the server is running"
                }
            };
            if e.message.contains("TLS") || e.message.contains("CA file") {
                // The TLS message says what to do; the connection options are fine.
                refused(format!("cannot connect to {self}: {e}"))
            } else {
                refused(format!("cannot connect to {self}: {e} ({hint})"))
            }
        })
    }
}

/// The facts a connection's TLS gives a result: `db_tls` (1 = TLS, 0 = plaintext) and, with
/// TLS, `db_tls_version` (1.2, 1.3). Nothing for an embedded database. TLS costs client and
/// server CPU per query: runs with and without it are not comparable (compare says so).
pub fn tls_facts(tls: Option<&str>) -> Vec<(String, f64)> {
    let Some(t) = tls else { return Vec::new() };
    let mut f = vec![(
        hostbench_core::names::db::fact::TLS.to_string(),
        if t.starts_with("TLS") { 1.0 } else { 0.0 },
    )];
    let v = t.split_whitespace().next().unwrap_or("");
    if let Some(n) = v.strip_prefix("TLSv").and_then(|n| n.parse::<f64>().ok()) {
        f.push((hostbench_core::names::db::fact::TLS_VERSION.to_string(), n));
    }
    f
}

/// `PostgreSQL 15.4 at postgres://…, TLS TLSv1.3 TLS_AES_256_GCM_SHA384` (or `TLS none`):
/// the stderr line that names the server.
pub fn server_line(version: &str, target: &Target, tls: Option<&str>) -> String {
    let v = if version.is_empty() {
        target.driver().name()
    } else {
        version
    };
    match tls {
        Some(t) => format!("{v} at {target}, TLS {t}"),
        None => format!("{v} at {target}"),
    }
}

/// The driver a `--db-url` names (`sqlite`, `pgsql`, `mysql`), None for an unknown kind.
pub fn url_driver(url: &str) -> Option<&'static str> {
    let d = if url.starts_with("sqlite:") {
        Driver::Sqlite
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Driver::Pgsql
    } else if url.starts_with("mysql://") || url.starts_with("mariadb://") {
        Driver::Mysql
    } else {
        return None;
    };
    Some(d.name())
}

/// Makes the saved `db_driver` parameter the driver actually used:
/// - when the overrides set `db_url`, the URL's driver is appended as the last `db_driver`
///   override (the URL wins over the driver options, so the recorded driver must follow it);
/// - when they set neither `db_url` nor `db_driver`, the connection options choose, as in
///   sysbench, whose default driver is mysql: any `--mysql-*` option means MySQL, else any
///   `--pgsql-*` option means PostgreSQL. A command line with neither keeps SQLite, the
///   embedded default, so `--mysql-host=…` never silently lands in `./sbtest.db`.
pub(crate) fn record_url_driver(overrides: &mut Vec<(String, String)>) {
    let d = overrides
        .iter()
        .rev()
        .find(|(k, _)| k == "db_url")
        .and_then(|(_, v)| url_driver(v));
    if let Some(d) = d {
        overrides.push(("db_driver".into(), d.into()));
        return;
    }
    if overrides
        .iter()
        .any(|(k, v)| k == "db_driver" || k == "db_url" && !v.is_empty())
    {
        return;
    }
    let names = |prefix: &str| overrides.iter().any(|(k, _)| k.starts_with(prefix));
    let implied = if names("mysql_") {
        Driver::Mysql
    } else if names("pgsql_") {
        Driver::Pgsql
    } else {
        return;
    };
    overrides.push(("db_driver".into(), implied.name().into()));
}

/// Which errors restart a transaction instead of stopping the run (`--db-ignore-errors`).
#[derive(Debug, Clone)]
pub enum IgnorePolicy {
    /// Lost connections, deadlocks, serialization failures, lock waits, busy, unique
    /// violations.
    Auto,
    /// Every error.
    All,
    /// Lost connections plus these codes.
    Codes(Vec<String>),
}

impl IgnorePolicy {
    /// From `db_ignore_errors` (and sysbench's `mysql_ignore_errors`, which wins when set).
    pub fn from_params(p: &Params) -> IgnorePolicy {
        let my = p.text("mysql_ignore_errors");
        let v = if my.is_empty() {
            p.text("db_ignore_errors")
        } else {
            my
        };
        match v.trim() {
            "auto" | "" => IgnorePolicy::Auto,
            "all" => IgnorePolicy::All,
            list => IgnorePolicy::Codes(
                list.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect(),
            ),
        }
    }

    /// True when `e` restarts the transaction rather than stopping the run.
    pub fn ignores(&self, e: &DbError) -> bool {
        match self {
            _ if e.class == ErrClass::Lost => true,
            IgnorePolicy::Auto => e.class == ErrClass::Retry,
            IgnorePolicy::All => true,
            IgnorePolicy::Codes(c) => c.contains(&e.code),
        }
    }
}

/// A connection and the statements prepared on it, so that a reconnect can re-prepare
/// them under the same ids.
pub struct Session {
    target: Target,
    conn: Box<dyn Conn>,
    sqls: Vec<String>,
    ids: Vec<Stmt>,
    /// Session state a new connection needs before the statements are prepared again.
    on_connect: Vec<String>,
    prepared: bool,
    text: String,
}

impl Session {
    /// Connects; `prepared` = false is `--db-ps-mode=disable`.
    pub fn open(target: &Target, prepared: bool) -> Result<Session, WorkloadError> {
        Ok(Session {
            conn: target.connect_for_setup(false)?,
            target: target.clone(),
            sqls: Vec::new(),
            ids: Vec::new(),
            on_connect: Vec::new(),
            prepared,
            text: String::new(),
        })
    }

    /// A session over connection `conn` to `target`, already open.
    pub fn with_conn(target: &Target, conn: Box<dyn Conn>, prepared: bool) -> Session {
        Session {
            conn,
            target: target.clone(),
            sqls: Vec::new(),
            ids: Vec::new(),
            on_connect: Vec::new(),
            prepared,
            text: String::new(),
        }
    }

    /// Runs statement `s`, keeping the rows' values as text in `out`.
    pub fn exec_rows(&mut self, s: Stmt, args: &[Arg<'_>], out: &mut Rows) -> Result<Res, DbError> {
        if self.prepared {
            return self.conn.exec_rows(self.ids[s], args, out);
        }
        self.text.clear();
        substitute(&mut self.text, &self.sqls[s], args);
        self.conn.query_rows(&self.text, out)
    }

    /// Runs text SQL, keeping the rows' values as text in `out`.
    pub fn query_rows(&mut self, sql: &str, out: &mut Rows) -> Result<Res, DbError> {
        self.conn.query_rows(sql, out)
    }

    /// Prepares `sql` (or remembers it, without server-side statements).
    pub fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError> {
        let id = if self.prepared {
            self.conn.prepare(sql)?
        } else {
            0
        };
        self.sqls.push(sql.to_string());
        self.ids.push(id);
        Ok(self.sqls.len() - 1)
    }

    /// Runs statement `s`.
    #[inline]
    pub fn exec(&mut self, s: Stmt, args: &[Arg<'_>]) -> Result<Res, DbError> {
        if self.prepared {
            return self.conn.exec(self.ids[s], args);
        }
        self.text.clear();
        substitute(&mut self.text, &self.sqls[s], args);
        self.conn.query(&self.text)
    }

    /// Runs text SQL.
    pub fn query(&mut self, sql: &str) -> Result<Res, DbError> {
        self.conn.query(sql)
    }

    /// Runs text SQL now and again first thing on every new connection after a reconnect,
    /// before the statements are prepared again: session state the statements depend on,
    /// such as a temporary table (it vanishes with the connection).
    pub fn query_on_connect(&mut self, sql: &str) -> Result<Res, DbError> {
        let r = self.conn.query(sql)?;
        self.on_connect.push(sql.to_string());
        Ok(r)
    }

    /// The connection.
    pub fn conn(&mut self) -> &mut dyn Conn {
        self.conn.as_mut()
    }

    /// Which database this is.
    pub fn driver(&self) -> Driver {
        self.target.driver()
    }

    /// After a lost connection: drops it, opens a new one and re-prepares every statement
    /// under the same ids. While the server is away (refused connections, PostgreSQL's
    /// "starting up"/"shutting down" 57P03, MariaDB's 1053, a connection lost again during
    /// the re-prepare) it tries again with a short backoff (10 ms doubling to 200 ms) for
    /// up to `window`, and gives up early, returning [`Reconnected::RunOver`], as soon as
    /// the run is over (time limit, Ctrl-C, another worker's error). An error the new
    /// connection gives while putting the session state back or re-preparing that is not a
    /// lost connection (a dropped table) fails at once.
    pub fn reconnect(&mut self, window: Duration) -> Result<Reconnected, DbError> {
        use hostbench_core::runner::stopping;
        self.conn.clear();
        let start = std::time::Instant::now();
        let mut wait = Duration::from_millis(10);
        loop {
            if stopping() {
                return Ok(Reconnected::RunOver);
            }
            let last = match self.reconnect_once() {
                Ok(()) => return Ok(Reconnected::Yes),
                Err(Attempt::Again(e)) => e,
                Err(Attempt::Fatal(e)) => {
                    return Err(DbError {
                        message: format!(
                            "reconnected to {} after a lost connection, then: {}",
                            self.target, e.message
                        ),
                        ..e
                    });
                }
            };
            let left = window.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(DbError::new(
                    ErrClass::Other,
                    format!(
                        "lost the connection to {} and could not reconnect within {} s: {last}",
                        self.target,
                        window.as_secs_f64()
                    ),
                ));
            }
            // Sleep in short slices: the run may end meanwhile.
            let until = std::time::Instant::now() + wait.min(left);
            while !stopping() {
                let now = std::time::Instant::now();
                if now >= until {
                    break;
                }
                std::thread::sleep((until - now).min(Duration::from_millis(10)));
            }
            wait = (wait * 2).min(Duration::from_millis(200));
        }
    }

    /// One try: connect (any failure is worth another try while the server comes back),
    /// put the session state back and re-prepare (a lost connection is worth another try;
    /// anything else is not).
    fn reconnect_once(&mut self) -> Result<(), Attempt> {
        self.conn = self.target.connect().map_err(Attempt::Again)?;
        let again = |e: DbError| {
            if e.class == ErrClass::Lost {
                Attempt::Again(e)
            } else {
                Attempt::Fatal(e)
            }
        };
        for sql in &self.on_connect {
            self.conn.query(sql).map_err(again)?;
        }
        if self.prepared {
            for (i, sql) in self.sqls.iter().enumerate() {
                self.ids[i] = self.conn.prepare(sql).map_err(again)?;
            }
        }
        Ok(())
    }
}

/// TCP keepalive on a client socket: a server host that vanishes without closing the
/// connection (power loss, a network partition) is noticed after about 25 s of silence
/// (10 s idle, then 3 probes 5 s apart) as a lost connection, instead of blocking the worker
/// forever. A long query on a live server is not affected: its kernel answers the probes.
pub fn tcp_keepalive(s: &std::net::TcpStream) {
    use std::os::fd::AsRawFd;
    let fd = s.as_raw_fd();
    for (level, opt, v) in [
        (libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1),
        (libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, 10),
        (libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, 5),
        (libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 3),
    ] {
        let v: libc::c_int = v;
        // SAFETY: setsockopt on our own socket with a c_int option value; failure leaves the
        // kernel's defaults.
        unsafe {
            libc::setsockopt(
                fd,
                level,
                opt,
                &v as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
}

/// What [`Session::reconnect`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reconnected {
    /// A new connection with every statement prepared again.
    Yes,
    /// The run ended while the server was still away: stop this worker (no reconnect).
    RunOver,
}

enum Attempt {
    Again(DbError),
    Fatal(DbError),
}

/// Writes `sql` with each `?` replaced by the literal of the next argument
/// (`--db-ps-mode=disable`).
pub fn substitute(out: &mut String, sql: &str, args: &[Arg<'_>]) {
    use std::fmt::Write;
    let mut it = args.iter();
    for ch in sql.chars() {
        if ch != '?' {
            out.push(ch);
            continue;
        }
        match it.next() {
            Some(Arg::Int(v)) => {
                let _ = write!(out, "{v}");
            }
            Some(Arg::Big(v)) => {
                let _ = write!(out, "{v}");
            }
            Some(Arg::Double(v)) => {
                let _ = write!(out, "{v}");
            }
            Some(Arg::Null) => out.push_str("NULL"),
            Some(Arg::Text(t)) => {
                out.push('\'');
                for c in t.chars() {
                    if c == '\'' {
                        out.push('\'');
                    }
                    out.push(c);
                }
                out.push('\'');
            }
            None => out.push('?'),
        }
    }
}

/// Counts one statement's result into `counters` the way sysbench does.
#[inline]
pub fn count(counters: &hostbench_core::recorder::Counters, r: Res) {
    use hostbench_core::recorder::Counter;
    match r {
        Res::Rows(_) => counters.add(Counter::Reads, 1),
        Res::Affected(n) if n > 0 => counters.add(Counter::Writes, 1),
        Res::Affected(_) => counters.add(Counter::Other, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::workload::ErrorKind;

    #[test]
    fn a_refused_connection_is_the_environment_a_bad_url_the_command_line() {
        // A port nobody listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        for url in [
            format!("postgres://u@127.0.0.1:{port}/d"),
            format!("mysql://u@127.0.0.1:{port}/d"),
        ] {
            let e = Target::from_url(&url)
                .unwrap()
                .connect_for_setup(false)
                .err()
                .expect("nothing listens there");
            assert_eq!(e.kind, ErrorKind::Environment, "{e}");
            assert!(e.message.starts_with("cannot connect to"), "{e}");
        }
        let e = Target::from_url("mysql://u@127.0.0.1:3306/d?nosuch=1").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Usage, "{e}");
    }

    #[test]
    fn urls_parse_and_never_show_passwords() {
        let t = Target::from_url("postgres://bob:pa%40ss@db.example:6543/bench").unwrap();
        match &t {
            Target::Pgsql {
                host,
                port,
                user,
                password,
                db,
                lean,
                tls,
            } => {
                assert!(lean, "the lean client is the default");
                assert_eq!(tls.mode, TlsMode::Prefer, "libpq's default");
                assert_eq!(
                    (
                        host.as_str(),
                        *port,
                        user.as_str(),
                        password.as_str(),
                        db.as_str()
                    ),
                    ("db.example", 6543, "bob", "pa@ss", "bench")
                );
            }
            _ => panic!("{t}"),
        }
        assert_eq!(t.to_string(), "postgres://bob:***@db.example:6543/bench");
        let m = Target::from_url("mysql://root@127.0.0.1:3306/test").unwrap();
        assert_eq!(m.to_string(), "mysql://root@127.0.0.1:3306/test");
        assert!(matches!(
            Target::from_url("sqlite:/tmp/x.db").unwrap(),
            Target::Sqlite { .. }
        ));
        let e = Target::from_url("postgres://u:secret@h:notaport/d").unwrap_err();
        assert!(!e.message.contains("secret"), "{e}");
        assert_eq!(
            e.kind,
            ErrorKind::Usage,
            "a bad URL is the command line's: {e}"
        );
        assert!(Target::from_url("oracle://x").is_err());
        // A socket directory, percent-encoded as libpq takes it, or as ?host=.
        for u in [
            "postgres://bob@%2Fvar%2Frun%2Fpostgresql/bench",
            "postgres://bob@localhost/bench?host=/var/run/postgresql",
        ] {
            match Target::from_url(u).unwrap() {
                Target::Pgsql { host, .. } => assert_eq!(host, "/var/run/postgresql", "{u}"),
                t => panic!("{t}"),
            }
        }
    }

    #[test]
    fn client_sockets_get_tcp_keepalive() {
        use std::os::fd::AsRawFd;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        tcp_keepalive(&s);
        let get = |level, opt| {
            let mut v: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: getsockopt into a c_int on our own socket.
            let r = unsafe {
                libc::getsockopt(
                    s.as_raw_fd(),
                    level,
                    opt,
                    &mut v as *mut libc::c_int as *mut libc::c_void,
                    &mut len,
                )
            };
            assert_eq!(r, 0);
            v
        };
        assert_ne!(get(libc::SOL_SOCKET, libc::SO_KEEPALIVE), 0);
        assert_eq!(get(libc::IPPROTO_TCP, libc::TCP_KEEPIDLE), 10);
        assert_eq!(get(libc::IPPROTO_TCP, libc::TCP_KEEPINTVL), 5);
        assert_eq!(get(libc::IPPROTO_TCP, libc::TCP_KEEPCNT), 3);
    }

    #[test]
    fn the_url_names_the_recorded_driver() {
        let mut ov = vec![
            ("db_driver".to_string(), "sqlite".to_string()),
            ("db_url".to_string(), "mysql://root@h/test".to_string()),
        ];
        record_url_driver(&mut ov);
        assert_eq!(ov.last().unwrap(), &("db_driver".into(), "mysql".into()));
        let mut ov = vec![("db_url".to_string(), "postgresql://u@h/d".to_string())];
        record_url_driver(&mut ov);
        assert_eq!(ov.last().unwrap().1, "pgsql");
        let mut ov = vec![("db_url".to_string(), "oracle://x".to_string())];
        record_url_driver(&mut ov);
        assert_eq!(
            ov.len(),
            1,
            "an unknown URL is left to Target::from_url's error"
        );
        let implied = |ov: &[(&str, &str)]| {
            let mut ov: Vec<(String, String)> = ov
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            record_url_driver(&mut ov);
            ov.iter()
                .rev()
                .find(|(k, _)| k == "db_driver")
                .map(|(_, v)| v.clone())
        };
        assert_eq!(implied(&[("mysql_host", "h")]).as_deref(), Some("mysql"));
        assert_eq!(implied(&[("pgsql_port", "1")]).as_deref(), Some("pgsql"));
        assert_eq!(
            implied(&[("pgsql_port", "1"), ("mysql_user", "u")]).as_deref(),
            Some("mysql"),
            "sysbench's default driver takes its own options"
        );
        assert_eq!(
            implied(&[("db_driver", "sqlite"), ("mysql_host", "h")]).as_deref(),
            Some("sqlite"),
            "an explicit driver wins"
        );
        assert_eq!(
            implied(&[("tables", "2")]),
            None,
            "SQLite stays the default"
        );
    }

    #[test]
    fn substitution_quotes_text() {
        let mut s = String::new();
        substitute(
            &mut s,
            "UPDATE t SET c=? WHERE id=?",
            &[Arg::Text("it's"), Arg::Int(7)],
        );
        assert_eq!(s, "UPDATE t SET c='it''s' WHERE id=7");
    }

    #[test]
    fn ignore_policy() {
        let lost = DbError::new(ErrClass::Lost, "gone");
        let dl = DbError {
            class: ErrClass::Retry,
            code: "40P01".into(),
            state: String::new(),
            message: "deadlock".into(),
        };
        let other = DbError {
            class: ErrClass::Other,
            code: "42P01".into(),
            state: String::new(),
            message: "no table".into(),
        };
        assert!(IgnorePolicy::Auto.ignores(&lost));
        assert!(IgnorePolicy::Auto.ignores(&dl));
        assert!(!IgnorePolicy::Auto.ignores(&other));
        assert!(IgnorePolicy::All.ignores(&other));
        assert!(IgnorePolicy::Codes(vec!["42P01".into()]).ignores(&other));
        assert!(!IgnorePolicy::Codes(vec!["1213".into()]).ignores(&dl));
    }
}
