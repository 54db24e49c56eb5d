//! The resolved options of one OLTP run ([`Cfg`]) and what follows from them: table and
//! index names, the DDL per driver, whether the script writes and runs explicit
//! transactions.

use super::{Oltp, Script};
use crate::db::driver::{Driver, IgnorePolicy, Target, reconnect_window};
use hostbench_core::params::Params;
use hostbench_core::workload::*;
use std::time::Duration;

/// Resolved options.
#[derive(Debug, Clone)]
pub(super) struct Cfg {
    pub(super) script: Script,
    pub(super) test: &'static str,
    pub(super) target: Target,
    pub(super) prepared: bool,
    pub(super) ignore: IgnorePolicy,
    pub(super) reconnect_window: Duration,
    pub(super) prefix: String,
    pub(super) tables: u32,
    pub(super) table_size: u32,
    pub(super) range_size: u32,
    pub(super) point_selects: u32,
    pub(super) simple_ranges: u32,
    pub(super) sum_ranges: u32,
    pub(super) order_ranges: u32,
    pub(super) distinct_ranges: u32,
    pub(super) index_updates: u32,
    pub(super) non_index_updates: u32,
    pub(super) delete_inserts: u32,
    pub(super) range_selects: bool,
    pub(super) auto_inc: bool,
    pub(super) skip_trx: bool,
    pub(super) secondary: bool,
    pub(super) create_secondary: bool,
    pub(super) engine: String,
    pub(super) random_points: u32,
    pub(super) number_of_ranges: u32,
    pub(super) delta: u32,
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
    pub(super) fn new(w: &Oltp, p: &Params) -> Result<Cfg, WorkloadError> {
        let target = Target::from_params(p)?;
        let prefix = p.text("table_prefix").to_string();
        if prefix.is_empty()
            || !prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
            || prefix.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(WorkloadError::usage(format!(
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
            return Err(WorkloadError::usage(format!(
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
                return Err(WorkloadError::usage(
                    "--random-points and --number-of-ranges must be at least 1",
                ));
            }
        }
        if c.table_size == 0 && !matches!(c.script, Script::Insert | Script::BulkInsert) {
            return Err(WorkloadError::usage(format!(
                "--table-size=0 leaves {} nothing to read or change (use at least 1)",
                c.test
            )));
        }
        Ok(c)
    }

    pub(super) fn table(&self, i: u32) -> String {
        format!("{}{i}", self.prefix)
    }

    pub(super) fn index_name(&self, base: &str, i: u32) -> String {
        if self.prefix == "sbtest" {
            format!("{base}_{i}")
        } else {
            format!("{}_{base}_{i}", self.prefix)
        }
    }

    pub(super) fn driver(&self) -> Driver {
        self.target.driver()
    }

    /// True when the event writes (SQLite then takes the write lock at BEGIN).
    pub(super) fn writes(&self) -> bool {
        !matches!(
            self.script,
            Script::ReadOnly | Script::PointSelect | Script::RandomPoints | Script::RandomRanges
        )
    }

    pub(super) fn explicit_trx(&self) -> bool {
        !self.skip_trx
            && matches!(
                self.script,
                Script::ReadWrite | Script::ReadOnly | Script::WriteOnly
            )
    }

    pub(super) fn create_sql(&self, i: u32) -> String {
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
    pub(super) fn table_count(&self, threads: usize) -> u32 {
        if self.script == Script::BulkInsert {
            threads as u32
        } else {
            self.tables
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::oltp::{READ_WRITE, SELECT_RANDOM_POINTS};

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
                .message
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
