//! The OLTP scripts' options, as sysbench's Lua scripts declare them: one `ParamSpec` per
//! option and the parameter table of each family of scripts.

use hostbench_core::params::{ParamKind, ParamSpec};

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
const P_ENGINE: ParamSpec = crate::db::driver::p_text(
    "mysql_storage_engine",
    "innodb",
    "Storage engine, if MySQL is used",
    "mysql-storage-engine",
);
const P_VARIANT: ParamSpec = crate::db::driver::p_text(
    "pgsql_variant",
    "",
    "PostgreSQL variant; only 'redshift' is known (disables create_secondary and delete_inserts)",
    "pgsql-variant",
);
const P_PREFIX: ParamSpec = crate::db::driver::p_text(
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

pub(super) const COMMON: &[ParamSpec] = common!();
pub(super) const POINTS: &[ParamSpec] = common!(P_POINTS);
pub(super) const RANGES: &[ParamSpec] = common!(P_NRANGES, P_DELTA);
/// bulk_insert.lua declares no options, and sysbench 1.0.20 takes any option a script does not
/// declare: `--tables` and `--table-size` are accepted and change nothing (one table per
/// thread, rows as many as events).
pub(super) const BULK: &[ParamSpec] = crate::db_params!(
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
