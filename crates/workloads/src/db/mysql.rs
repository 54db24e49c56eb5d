//! The MariaDB/MySQL driver (the pure-Rust `mysql` crate, TLS through its rustls/ring feature, rust flate2 backend so
//! the static musl build needs no C libraries): binary-protocol prepared statements.
//!
//! Lost connections (I/O errors, 2006/2013/2055 and the server's 1927 "connection killed",
//! 1053 "server shutdown") are [`ErrClass::Lost`]; sysbench's default ignorable set
//! (1213 deadlock, 1020 record changed, 1205 lock wait timeout) is retryable.
//! Allocation: the crate takes parameters as an owned `Vec<Value>` (text as `Vec<u8>`) and
//! hands each row over as an owned `Row`, so every execution allocates a few small buffers
//! in the client; we allocate nothing else.

use super::driver::{Arg, Conn, DbError, Driver, ErrClass, Res, Rows, Stmt, Target, TlsMode};
use mysql::prelude::Queryable;
use mysql::{Conn as MyConn, OptsBuilder, Params, Statement, Value};
use std::time::Duration;

/// One MariaDB/MySQL connection.
pub struct MysqlConn {
    conn: MyConn,
    stmts: Vec<Statement>,
}

fn err(e: mysql::Error) -> DbError {
    match &e {
        mysql::Error::MySqlError(m) => {
            let class = match m.code {
                1213 | 1020 | 1205 => ErrClass::Retry,
                1927 | 2006 | 2013 | 2055 | 1053 => ErrClass::Lost,
                _ => ErrClass::Other,
            };
            DbError {
                class,
                code: m.code.to_string(),
                state: m.state.clone(),
                message: m.message.clone(),
            }
        }
        mysql::Error::IoError(_) | mysql::Error::CodecError(_) => {
            DbError::new(ErrClass::Lost, e.to_string())
        }
        mysql::Error::DriverError(d) => {
            let class = match d {
                mysql::DriverError::ConnectTimeout | mysql::DriverError::CouldNotConnect(_) => {
                    ErrClass::Other
                }
                _ => ErrClass::Lost,
            };
            DbError::new(class, e.to_string())
        }
        _ => DbError::new(ErrClass::Other, e.to_string()),
    }
}

impl MysqlConn {
    /// Connects to the MariaDB/MySQL `target`.
    pub fn open(target: &Target) -> Result<MysqlConn, DbError> {
        let Target::Mysql {
            host,
            port,
            socket,
            user,
            password,
            db,
            tls,
            ..
        } = target
        else {
            return Err(DbError::new(ErrClass::Other, "not a MySQL target"));
        };
        // The crate always trusts the public roots besides a CA file: refused (Target's
        // check says so before any connection; this is for callers that skip it).
        target
            .check_tls()
            .map_err(|e| DbError::new(ErrClass::Other, e.to_string()))?;
        // Unix sockets never use TLS.
        let use_tls = tls.mode != TlsMode::Disable && socket.is_empty();
        let mut o = OptsBuilder::new()
            .user(Some(user.as_str()))
            .db_name(Some(db.as_str()))
            .prefer_socket(false)
            .stmt_cache_size(4096)
            .tcp_connect_timeout(Some(Duration::from_secs(5)));
        if !password.is_empty() {
            o = o.pass(Some(password.as_str()));
        }
        o = if socket.is_empty() {
            o.ip_or_hostname(Some(host.as_str())).tcp_port(*port)
        } else {
            o.socket(Some(socket.as_str()))
        };
        let setup_err = |e: mysql::Error| {
            let mut d = err(e);
            d.class = ErrClass::Other;
            d
        };
        let conn = if use_tls {
            // No CA file here (refused above): REQUIRED and PREFERRED accept any certificate
            // (the crate then checks no handshake signature either), VERIFY_IDENTITY checks
            // the chain against the public roots and the host name (VERIFY_CA without a CA
            // file is refused too).
            let v = tls.verify();
            let ssl = mysql::SslOpts::default()
                .with_danger_accept_invalid_certs(v == hostbench_tls::Verify::Nothing)
                .with_danger_skip_domain_validation(v != hostbench_tls::Verify::Full);
            match MyConn::new(o.clone().ssl_opts(ssl)) {
                Err(mysql::Error::DriverError(mysql::DriverError::TlsNotSupported))
                    if !tls.mode.required() =>
                {
                    MyConn::new(o).map_err(setup_err)?
                }
                Err(mysql::Error::DriverError(mysql::DriverError::TlsNotSupported)) => {
                    return Err(DbError::new(
                        ErrClass::Other,
                        format!(
                            "the MySQL/MariaDB server at {host}:{port} does not offer TLS and \
                             --mysql-ssl={} requires it: enable TLS on the server (ssl_cert, \
                             ssl_key), or use --mysql-ssl=PREFERRED or DISABLED",
                            tls.mode.mysql_name()
                        ),
                    ));
                }
                r => r.map_err(|e| {
                    let mut d = setup_err(e);
                    if d.message.contains("certificate") || d.message.contains("Certificate") {
                        d.message = format!(
                            "the server's TLS certificate was refused: {}; {}",
                            d.message,
                            super::mysql_lean::MY_TLS_FIX
                        );
                    }
                    d
                })?,
            }
        } else {
            MyConn::new(o).map_err(setup_err)?
        };
        Ok(MysqlConn {
            conn,
            stmts: Vec::new(),
        })
    }
}

fn value(a: &Arg<'_>) -> Value {
    match a {
        Arg::Int(v) => Value::Int(*v as i64),
        Arg::Text(t) => Value::Bytes(t.as_bytes().to_vec()),
        Arg::Big(v) => Value::Int(*v),
        Arg::Double(v) => Value::Double(*v),
        Arg::Null => Value::NULL,
    }
}

impl Conn for MysqlConn {
    fn prepare(&mut self, sql: &str) -> Result<Stmt, DbError> {
        let s = self.conn.prep(sql).map_err(err)?;
        self.stmts.push(s);
        Ok(self.stmts.len() - 1)
    }

    #[inline]
    fn exec(&mut self, s: Stmt, args: &[Arg<'_>]) -> Result<Res, DbError> {
        let params = if args.is_empty() {
            Params::Empty
        } else {
            Params::Positional(args.iter().map(value).collect())
        };
        let st = &self.stmts[s];
        let has_rows = !st.columns().is_empty();
        let mut qr = self.conn.exec_iter(st, params).map_err(err)?;
        let affected = qr.affected_rows();
        let mut n = 0u64;
        for row in qr.by_ref() {
            row.map_err(err)?;
            n += 1;
        }
        Ok(if has_rows {
            Res::Rows(n)
        } else {
            Res::Affected(affected)
        })
    }

    fn exec_rows(&mut self, s: Stmt, args: &[Arg<'_>], out: &mut Rows) -> Result<Res, DbError> {
        // Binary-protocol rows are counted, not read: sysbench's MySQL driver gives them no
        // fields either.
        out.clear();
        self.exec(s, args)
    }

    fn query_rows(&mut self, sql: &str, out: &mut Rows) -> Result<Res, DbError> {
        out.clear();
        let mut qr = self.conn.query_iter(sql).map_err(err)?;
        let has_rows = !qr.columns().as_ref().is_empty();
        out.fields = qr.columns().as_ref().len();
        let affected = qr.affected_rows();
        let mut n = 0u64;
        for row in qr.by_ref() {
            let row = row.map_err(err)?;
            n += 1;
            for i in 0..out.fields {
                match row.as_ref(i) {
                    None | Some(Value::NULL) => out.push(None),
                    Some(Value::Bytes(b)) => out.push(Some(b)),
                    Some(v) => out.push(Some(v.as_sql(true).trim_matches('\'').as_bytes())),
                }
            }
        }
        Ok(if has_rows {
            Res::Rows(n)
        } else {
            Res::Affected(affected)
        })
    }

    fn query(&mut self, sql: &str) -> Result<Res, DbError> {
        let mut qr = self.conn.query_iter(sql).map_err(err)?;
        let has_rows = !qr.columns().as_ref().is_empty();
        let affected = qr.affected_rows();
        let mut n = 0u64;
        for row in qr.by_ref() {
            row.map_err(err)?;
            n += 1;
        }
        Ok(if has_rows {
            Res::Rows(n)
        } else {
            Res::Affected(affected)
        })
    }

    fn clear(&mut self) {
        self.stmts.clear();
    }

    fn driver(&self) -> Driver {
        Driver::Mysql
    }

    fn server_version(&mut self) -> String {
        self.conn
            .query_first::<String, _>("SELECT VERSION()")
            .ok()
            .flatten()
            .map(|v| format!("MySQL/MariaDB {v}"))
            .unwrap_or_default()
    }

    fn tls(&mut self) -> Option<String> {
        // The crate does not say what it negotiated: the server does (`Ssl_version`
        // `TLSv1.3`, `Ssl_cipher` by its OpenSSL name, as hostbench_tls::describe spells
        // it). A failed query or a missing row leaves TLS unknown (None: no db_tls fact),
        // never "none".
        let mut get = |what: &str| {
            self.conn
                .query_first::<(String, String), _>(format!("SHOW SESSION STATUS LIKE '{what}'"))
                .ok()
                .flatten()
                .map(|(_, v)| v)
        };
        let cipher = get("Ssl_cipher")?;
        if cipher.is_empty() {
            return Some("none".into());
        }
        let version = get("Ssl_version")?;
        Some(format!("{version} {cipher}"))
    }
}
