//! Databases: sysbench OLTP workloads and insert-race over SQLite, PostgreSQL and
//! MariaDB/MySQL.
