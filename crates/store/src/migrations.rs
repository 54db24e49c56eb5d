//! Numbered schema migrations, the same logical schema for both backends.
//!
//! Rules: a migration is never edited once released; a change is a new entry with the next
//! number. Each runs inside the transaction that records its number (SQLite `user_version`,
//! PostgreSQL `schema_migrations`), so a store is always at exactly one version. Indexed
//! columns are derived from `result_json` (see `index.rs`), so a migration that changes a
//! derivation can recompute them from the JSON it keeps.

/// One step of the schema.
pub(crate) struct Migration {
    /// Version the store is at after this step (1, 2, ...).
    pub version: u32,
    /// What it does, recorded in PostgreSQL's `schema_migrations`.
    pub name: &'static str,
    /// SQLite statements.
    pub sqlite: &'static str,
    /// PostgreSQL statements (run with `search_path` set to the store's schema).
    pub postgres: &'static str,
}

/// The schema version this build writes and reads.
pub const LATEST_VERSION: u32 = 3;

pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "runs: one row per result, the JSON text plus indexed columns",
        sqlite: "
        CREATE TABLE runs (
            id                    TEXT PRIMARY KEY NOT NULL,
            started_at            TEXT NOT NULL,
            started_ms            INTEGER NOT NULL,
            stored_ms             INTEGER NOT NULL,
            label                 TEXT,
            workload              TEXT NOT NULL,
            workload_family       TEXT NOT NULL,
            category              TEXT NOT NULL,
            hostname              TEXT,
            host_fingerprint      TEXT,
            tool_version          TEXT NOT NULL,
            stop_reason           TEXT NOT NULL,
            headline_metric       TEXT NOT NULL,
            headline_value        REAL,
            headline_unit         TEXT NOT NULL,
            result_schema_version INTEGER NOT NULL,
            result_json           TEXT NOT NULL
        );
        CREATE INDEX runs_by_started ON runs (started_ms);
        CREATE INDEX runs_by_label ON runs (label, started_ms);
        CREATE INDEX runs_by_workload ON runs (workload, started_ms);
        CREATE INDEX runs_by_family ON runs (workload_family, started_ms);
        CREATE INDEX runs_by_hostname ON runs (hostname, started_ms);
        CREATE INDEX runs_by_fingerprint ON runs (host_fingerprint, started_ms);
    ",
        postgres: "
        CREATE TABLE runs (
            id                    TEXT PRIMARY KEY NOT NULL,
            started_at            TEXT NOT NULL,
            started_ms            BIGINT NOT NULL,
            stored_ms             BIGINT NOT NULL,
            label                 TEXT,
            workload              TEXT NOT NULL,
            workload_family       TEXT NOT NULL,
            category              TEXT NOT NULL,
            hostname              TEXT,
            host_fingerprint      TEXT,
            tool_version          TEXT NOT NULL,
            stop_reason           TEXT NOT NULL,
            headline_metric       TEXT NOT NULL,
            headline_value        DOUBLE PRECISION,
            headline_unit         TEXT NOT NULL,
            result_schema_version INTEGER NOT NULL,
            result_json           TEXT NOT NULL
        );
        CREATE INDEX runs_by_started ON runs (started_ms);
        CREATE INDEX runs_by_label ON runs (label, started_ms);
        CREATE INDEX runs_by_workload ON runs (workload, started_ms);
        CREATE INDEX runs_by_family ON runs (workload_family, started_ms);
        CREATE INDEX runs_by_hostname ON runs (hostname, started_ms);
        CREATE INDEX runs_by_fingerprint ON runs (host_fingerprint, started_ms);
    ",
    },
    Migration {
        version: 2,
        name: "runs.fleet_run: the fleet run a run belongs to (result.fleet.run), indexed",
        sqlite: "
        ALTER TABLE runs ADD COLUMN fleet_run TEXT;
        UPDATE runs SET fleet_run = json_extract(result_json, '$.fleet.run')
            WHERE json_valid(result_json);
        CREATE INDEX runs_by_fleet_run ON runs (fleet_run, started_ms);
    ",
        postgres: "
        ALTER TABLE runs ADD COLUMN fleet_run TEXT;
        UPDATE runs SET fleet_run = (result_json::jsonb -> 'fleet' ->> 'run');
        CREATE INDEX runs_by_fleet_run ON runs (fleet_run, started_ms);
    ",
    },
    Migration {
        version: 3,
        name: "fleet_hosts: every host a fleet controller was asked for and how it ended; \
               runs.fleet_host (result.fleet.host), indexed",
        sqlite: "
        ALTER TABLE runs ADD COLUMN fleet_host TEXT;
        UPDATE runs SET fleet_host = json_extract(result_json, '$.fleet.host')
            WHERE json_valid(result_json);
        CREATE INDEX runs_by_fleet_host ON runs (fleet_host, started_ms);
        CREATE TABLE fleet_hosts (
            fleet_run  TEXT NOT NULL,
            position   INTEGER NOT NULL,
            host       TEXT NOT NULL,
            status     TEXT NOT NULL,
            reason     TEXT,
            runs       INTEGER NOT NULL,
            stored_ms  INTEGER NOT NULL,
            PRIMARY KEY (fleet_run, host)
        );
    ",
        postgres: "
        ALTER TABLE runs ADD COLUMN fleet_host TEXT;
        UPDATE runs SET fleet_host = (result_json::jsonb -> 'fleet' ->> 'host');
        CREATE INDEX runs_by_fleet_host ON runs (fleet_host, started_ms);
        CREATE TABLE fleet_hosts (
            fleet_run  TEXT NOT NULL,
            position   BIGINT NOT NULL,
            host       TEXT NOT NULL,
            status     TEXT NOT NULL,
            reason     TEXT,
            runs       BIGINT NOT NULL,
            stored_ms  BIGINT NOT NULL,
            PRIMARY KEY (fleet_run, host)
        );
    ",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_one_by_one_up_to_latest() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1, "{}", m.name);
        }
        assert_eq!(MIGRATIONS.last().map(|m| m.version), Some(LATEST_VERSION));
    }
}
