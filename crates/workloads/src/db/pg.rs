//! The PostgreSQL driver through the `postgres` crate (`--pgsql-client=crate`, TLS per `sslmode` through rustls): server-side prepared statements,
//! parameters bound straight from borrowed values.
//!
//! Lost connections (closed socket, `pg_terminate_backend`'s 57P01, a server shutting down,
//! class 08) are [`ErrClass::Lost`]; 40P01, 40001 and 23505 are retryable, as sysbench's
//! pgsql driver treats them. Allocation: we allocate nothing per query; the `postgres` crate
//! itself builds each message in a buffer and hands rows over as small heap objects.

use super::driver::{Arg, Conn, DbError, Driver, ErrClass, Res, Rows, Stmt, Target, TlsMode};
use super::pg_lean::{classify, number_placeholders};
use bytes::BytesMut;
use hostbench_tls::pg::{MakeRustls, crate_mode};
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls, Statement};
use std::time::Duration;

/// One PostgreSQL connection.
pub struct PgConn {
    client: Client,
    stmts: Vec<Statement>,
    tls: String,
}

impl ToSql for Arg<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Arg::Int(v) => match *ty {
                Type::INT8 => (*v as i64).to_sql(ty, out),
                Type::INT2 => (*v as i16).to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            Arg::Text(t) => t.to_sql(ty, out),
            Arg::Big(v) => match *ty {
                Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            Arg::Double(v) => match *ty {
                Type::FLOAT4 => (*v as f32).to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            Arg::Null => Ok(IsNull::Yes),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <f64 as ToSql>::accepts(ty)
            || <f32 as ToSql>::accepts(ty)
            || <i32 as ToSql>::accepts(ty)
            || <i64 as ToSql>::accepts(ty)
            || <i16 as ToSql>::accepts(ty)
            || <&str as ToSql>::accepts(ty)
    }

    to_sql_checked!();
}

/// A binary-format value as PostgreSQL's text output: integers, floats and booleans
/// decoded, text types as they are (their binary form is their text).
struct AsText(Vec<u8>);

impl<'a> postgres::types::FromSql<'a> for AsText {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(AsText(match *ty {
            Type::BOOL => if bool::from_sql(ty, raw)? { b"t" } else { b"f" }.to_vec(),
            Type::INT2 => i16::from_sql(ty, raw)?.to_string().into_bytes(),
            Type::INT4 => i32::from_sql(ty, raw)?.to_string().into_bytes(),
            Type::INT8 => i64::from_sql(ty, raw)?.to_string().into_bytes(),
            Type::OID => u32::from_sql(ty, raw)?.to_string().into_bytes(),
            Type::FLOAT4 => f32::from_sql(ty, raw)?.to_string().into_bytes(),
            Type::FLOAT8 => f64::from_sql(ty, raw)?.to_string().into_bytes(),
            _ => raw.to_vec(),
        }))
    }

    fn accepts(ty: &Type) -> bool {
        matches!(
            *ty,
            Type::BOOL
                | Type::INT2
                | Type::INT4
                | Type::INT8
                | Type::OID
                | Type::FLOAT4
                | Type::FLOAT8
                | Type::TEXT
                | Type::VARCHAR
                | Type::BPCHAR
                | Type::NAME
                | Type::UNKNOWN
        )
    }
}

fn err(e: postgres::Error) -> DbError {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        return DbError {
            class: classify(code),
            code: code.to_string(),
            state: String::new(),
            message: db.message().to_string(),
        };
    }
    let source = std::error::Error::source(&e);
    let io = source.is_some_and(|s| s.is::<std::io::Error>());
    // The crate's text names only the kind ("error connecting to server"); the cause
    // ("Connection refused") is what a user needs.
    let text = match source {
        Some(s) => format!("{e}: {s}"),
        None => e.to_string(),
    };
    let class = if e.is_closed()
        || io
        || text.contains("connection")
        || text.contains("communicating with the server")
    {
        ErrClass::Lost
    } else {
        ErrClass::Other
    };
    DbError::new(class, text)
}

impl PgConn {
    /// Connects to the PostgreSQL `target`.
    pub fn open(target: &Target) -> Result<PgConn, DbError> {
        let Target::Pgsql {
            host,
            port,
            user,
            password,
            db,
            tls,
            ..
        } = target
        else {
            return Err(DbError::new(ErrClass::Other, "not a PostgreSQL target"));
        };
        // Unix sockets never use TLS (as libpq).
        let use_tls = tls.mode != TlsMode::Disable && !host.starts_with('/');
        let maker = if use_tls {
            let cfg = tls
                .client_config()
                .map_err(|e| DbError::new(ErrClass::Other, e.to_string()))?;
            Some(MakeRustls::new(cfg, super::pg_lean::PG_TLS_FIX))
        } else {
            None
        };
        let mut cfg = postgres::Config::new();
        cfg.host(host)
            .port(*port)
            .user(user)
            .dbname(db)
            .application_name("hostbench")
            .connect_timeout(Duration::from_secs(5))
            .ssl_mode(if use_tls {
                crate_mode(tls.mode)
            } else {
                postgres::config::SslMode::Disable
            });
        if !password.is_empty() {
            cfg.password(password);
        }
        // The crate bounds the TCP connect only; a server that accepts and never answers
        // (another protocol on the port, a stopped process) would hold the login for ever.
        // Log in on a helper thread and give up after the lean clients' login time limit;
        // the thread ends when that server hangs up.
        let (tx, rx) = std::sync::mpsc::channel();
        let m = maker.clone();
        std::thread::Builder::new()
            .name("hb-pg-login".into())
            .spawn(move || {
                let _ = tx.send(match m {
                    Some(m) => cfg.connect(m),
                    None => cfg.connect(NoTls),
                });
            })
            .map_err(|e| DbError::new(ErrClass::Other, format!("cannot start a thread: {e}")))?;
        let timeout = Duration::from_secs(super::wire::LOGIN_TIMEOUT_S);
        let client = match rx.recv_timeout(timeout) {
            Ok(r) => r.map_err(|e| {
                let mut d = err(e);
                // Not reachable or refused at start: not a "lost" connection but a setup
                // error.
                d.class = ErrClass::Other;
                if d.message.contains("server does not support TLS") {
                    d.message = format!(
                        "the PostgreSQL server at {host}:{port} does not offer TLS and \
                         sslmode={} requires it: enable ssl on the server, or use \
                         sslmode=prefer or disable",
                        tls.mode.pg_name()
                    );
                }
                d
            })?,
            Err(_) => {
                return Err(DbError::new(
                    ErrClass::Other,
                    format!(
                        "no answer to the login within {} s: is a PostgreSQL server listening \
                         there (its usual port is 5432)?",
                        super::wire::LOGIN_TIMEOUT_S
                    ),
                ));
            }
        };
        let tls = maker
            .map(|m| m.negotiated())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "none".into());
        Ok(PgConn {
            client,
            stmts: Vec::new(),
            tls,
        })
    }
}

impl Conn for PgConn {
    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError> {
        let s = self
            .client
            .prepare(&number_placeholders(sql))
            .map_err(err)?;
        self.stmts.push(s);
        Ok(self.stmts.len() - 1)
    }

    #[inline]
    fn exec(&mut self, s: Stmt, args: &[Arg<'_>]) -> Result<Res, DbError> {
        let st = &self.stmts[s];
        let has_rows = !st.columns().is_empty();
        let mut it = self.client.query_raw(st, args.iter()).map_err(err)?;
        let mut n = 0u64;
        while it.next().map_err(err)?.is_some() {
            n += 1;
        }
        Ok(if has_rows {
            Res::Rows(n)
        } else {
            Res::Affected(it.rows_affected().unwrap_or(0))
        })
    }

    fn exec_rows(&mut self, s: Stmt, args: &[Arg<'_>], out: &mut Rows) -> Result<Res, DbError> {
        out.clear();
        let st = &self.stmts[s];
        let has_rows = !st.columns().is_empty();
        out.fields = st.columns().len();
        let mut it = self.client.query_raw(st, args.iter()).map_err(err)?;
        let mut n = 0u64;
        while let Some(row) = it.next().map_err(err)? {
            n += 1;
            for i in 0..out.fields {
                let v: Option<AsText> = row
                    .try_get(i)
                    .map_err(|e| DbError::new(ErrClass::Other, format!("column {}: {e}", i + 1)))?;
                out.push(v.as_ref().map(|t| t.0.as_slice()));
            }
        }
        Ok(if has_rows {
            Res::Rows(n)
        } else {
            Res::Affected(it.rows_affected().unwrap_or(0))
        })
    }

    fn query_rows(&mut self, sql: &str, out: &mut Rows) -> Result<Res, DbError> {
        use postgres::SimpleQueryMessage as M;
        out.clear();
        let msgs = self.client.simple_query(sql).map_err(err)?;
        let (mut rows, mut affected, mut has_rows) = (0u64, 0u64, false);
        for m in &msgs {
            match m {
                M::Row(r) => {
                    if !has_rows {
                        out.fields = r.len();
                    }
                    rows += 1;
                    for i in 0..r.len() {
                        out.push(r.get(i).map(str::as_bytes));
                    }
                }
                M::RowDescription(c) => {
                    has_rows = true;
                    out.clear();
                    out.fields = c.len();
                }
                M::CommandComplete(n) => affected = *n,
                _ => {}
            }
        }
        Ok(if has_rows || rows > 0 {
            Res::Rows(rows)
        } else {
            Res::Affected(affected)
        })
    }

    fn query(&mut self, sql: &str) -> Result<Res, DbError> {
        use postgres::SimpleQueryMessage as M;
        let msgs = self.client.simple_query(sql).map_err(err)?;
        let (mut rows, mut affected, mut has_rows) = (0u64, 0u64, false);
        for m in &msgs {
            match m {
                M::Row(_) => rows += 1,
                M::RowDescription(_) => has_rows = true,
                M::CommandComplete(n) => affected = *n,
                _ => {}
            }
        }
        Ok(if has_rows || rows > 0 {
            Res::Rows(rows)
        } else {
            Res::Affected(affected)
        })
    }

    fn clear(&mut self) {
        self.stmts.clear();
    }

    fn driver(&self) -> Driver {
        Driver::Pgsql
    }

    fn server_version(&mut self) -> String {
        match self.client.simple_query("SHOW server_version") {
            Ok(m) => m
                .iter()
                .find_map(|m| match m {
                    postgres::SimpleQueryMessage::Row(r) => {
                        r.get(0).map(|v| format!("PostgreSQL {v}"))
                    }
                    _ => None,
                })
                .unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    fn tls(&mut self) -> Option<String> {
        Some(self.tls.clone())
    }
}
