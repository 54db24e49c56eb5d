//! hostbench-store: every run's [`RunResult`] in a results store, an embedded SQLite file
//! by default or a PostgreSQL database for teams, with the same schema and behaviour.
//!
//! Invariants:
//! - A stored run is its result JSON text, kept byte for byte, plus columns derived from it
//!   for filtering (id, start time, label, workload, category, host name and fingerprint,
//!   tool version, stop reason, headline figure). The JSON is the truth; the columns are an
//!   index ([`index`]).
//! - Every write (a save, an import, a removal) is one transaction: an interrupted
//!   process leaves the store as it was before, never half a result.
//! - Opening a store brings it to the schema this build knows ([`migrations`]); a store
//!   written by a newer hostbench is refused with a clear error, never modified.
//! - Read-only commands never create a store: [`Store::open_existing`] returns `None`.
//!
//! Later commands (compare, report) load runs with [`Store::select`] (a file, a run id or a
//! label), [`Store::load`] (a [`Filter`]) or [`Store::get`].

#![deny(missing_docs)]

pub mod export;
pub mod index;
mod location;
pub mod migrations;
mod pg;
mod sqlite;
pub mod time;

pub use export::{
    EXPORT_SCHEMA_ID, EXPORT_SCHEMA_VERSION, export_document, export_document_with, load_document,
    load_file, parse_rosters, parse_runs, read_document, read_runs,
};
pub use index::{Headline, host_fingerprint};
pub use location::{DEFAULT_PG_SCHEMA, ENV_NO_SAVE, ENV_RESULTS_DB, Location};
pub use migrations::LATEST_VERSION;

use hostbench_core::result::RunResult;
use index::Indexed;
use serde::Serialize;
use std::path::PathBuf;

/// Why a store operation failed. Messages say what, where and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database reported an error.
    #[error("results store {location}: {action}: {detail}")]
    Database {
        /// The store (passwords redacted).
        location: String,
        /// What hostbench was doing.
        action: &'static str,
        /// The database's message, with its causes.
        detail: String,
    },
    /// A file or directory could not be read or written.
    #[error("{action} {}: {source}", path.display())]
    File {
        /// What hostbench was doing (`cannot read`, `cannot create the directory`).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Neither `HOME` nor `XDG_DATA_HOME` tell where the default store is.
    #[error(
        "cannot tell where the results store is (neither XDG_DATA_HOME nor HOME is set): give \
         --results-db PATH or set HOSTBENCH_RESULTS_DB"
    )]
    NoLocation,
    /// The `--results-db` value is not a path or a PostgreSQL URL.
    #[error("{0}")]
    BadLocation(String),
    /// The database exists but is not a hostbench results store.
    #[error(
        "{location} is not a hostbench results store ({why}); give another --results-db, \
         hostbench will not change this one"
    )]
    NotAStore {
        /// The store.
        location: String,
        /// What gave it away.
        why: String,
    },
    /// The store was written by a newer hostbench.
    #[error(
        "the results store {location} has schema version {found}, newer than this hostbench \
         understands ({supported}): upgrade hostbench, or use another --results-db"
    )]
    TooNew {
        /// The store.
        location: String,
        /// Its schema version.
        found: u32,
        /// The newest this build knows.
        supported: u32,
    },
    /// No stored run has this id (or id prefix).
    #[error("no stored run has the id '{0}' (see `hostbench results list`)")]
    UnknownRun(String),
    /// A word too short to be an id prefix matched no id exactly.
    #[error(
        "no stored run has the id '{0}', and an id prefix needs at least 4 characters (see \
         `hostbench results list`)"
    )]
    ShortPrefix(String),
    /// An id prefix matches several runs.
    #[error("the id prefix '{prefix}' matches {count} runs ({examples}, ...): give more of the id")]
    AmbiguousId {
        /// What was typed.
        prefix: String,
        /// How many runs match.
        count: usize,
        /// A few of them.
        examples: String,
    },
    /// A run spec is neither a file, a run id nor a label.
    #[error("'{0}' is not a results file, a stored run id or a label of stored runs")]
    NoMatch(String),
    /// A `--since`/`--until` value could not be read.
    #[error(
        "'{input}' is not a date: use YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS][Z|+HH:MM] (UTC unless \
         an offset is given) or a time ago such as 30m, 12h, 7d, 2w"
    )]
    BadDate {
        /// What was typed.
        input: String,
    },
    /// A file is not a hostbench export or result.
    #[error("{origin} is not a hostbench export or result: {why}")]
    NotAnExport {
        /// The file.
        origin: String,
        /// What is wrong with it.
        why: String,
    },
    /// A result cannot be stored.
    #[error("run '{id}' cannot be stored: {why}")]
    BadResult {
        /// The run's id.
        id: String,
        /// Why.
        why: String,
    },
    /// A different run with the same id is already stored.
    #[error("a different run with the id '{0}' is already stored; it was kept")]
    Conflict(String),
}

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Which runs to read. Every field narrows the selection; the default selects all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Exactly this label.
    pub label: Option<String>,
    /// This workload id, or every id of this family (`memory` matches `memory.stream`).
    pub workload: Option<String>,
    /// This host name (the machine's, or its name in a fleet run: `fleet.host`), or a host
    /// fingerprint (or a prefix of one, at least 4 hex digits).
    pub host: Option<String>,
    /// Started at or after this time, Unix ms (see [`time::parse_bound`]).
    pub since_ms: Option<i64>,
    /// Started at or before this time, Unix ms.
    pub until_ms: Option<i64>,
    /// At most this many runs: the most recent ones.
    pub limit: Option<u64>,
    /// Runs of this fleet run (`fleet.run`; an indexed column).
    pub fleet_run: Option<String>,
}

/// One line of `results list`: a stored run's indexed columns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// Run id.
    pub id: String,
    /// Start, RFC 3339, as in the result.
    pub started_at: String,
    /// User label.
    pub label: Option<String>,
    /// Workload id.
    pub workload: String,
    /// Workload category.
    pub category: String,
    /// Host name.
    pub hostname: Option<String>,
    /// [`host_fingerprint`] of the host.
    pub host_fingerprint: Option<String>,
    /// hostbench version that measured.
    pub tool_version: String,
    /// Why the run stopped (`time_limit`, `interrupted`, ...).
    pub stop_reason: String,
    /// The figure shown in lists.
    pub headline: Headline,
}

/// A stored run: its id and its result JSON exactly as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRun {
    /// Run id.
    pub id: String,
    /// The result JSON text.
    pub json: String,
}

impl StoredRun {
    /// The stored text as a [`RunResult`].
    /// Figures whose definition changed since it was saved are brought up to date
    /// ([`RunResult::upgrade_figures`]); the stored text is left as it was.
    pub fn result(&self) -> Result<RunResult> {
        let mut r: RunResult =
            serde_json::from_str(&self.json).map_err(|e| StoreError::BadResult {
                id: self.id.clone(),
                why: format!("its stored JSON does not read as a result of this version ({e})"),
            })?;
        r.upgrade_figures();
        Ok(r)
    }
}

/// One host of a fleet run as the controller (`hostbench fleet`) saw it end: the roster
/// lets `fleet report` name the hosts that brought back no run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FleetHost {
    /// The host as the user named it.
    pub host: String,
    /// Its place in the user's list (0-based).
    pub position: i64,
    /// `ok`, `failed` or `interrupted`.
    pub status: String,
    /// Why it failed (`unreachable (connect)`, `timed out`, ...).
    pub reason: Option<String>,
    /// Runs it brought back.
    pub runs: i64,
}

/// The hosts one fleet run's controller recorded ([`Store::fleet_roster`]), as exports
/// carry them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetRoster {
    /// The fleet run id.
    pub run: String,
    /// Its hosts, in the user's order.
    pub hosts: Vec<FleetHost>,
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Runs added.
    pub added: usize,
    /// Runs already stored with the same JSON (nothing to do).
    pub already_present: usize,
    /// Ids stored with a different JSON: the stored run was kept.
    pub conflicts: Vec<String>,
}

/// Outcome of inserting one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inserted {
    New,
    Same,
    Conflict,
}

/// A value bound to a query parameter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg {
    Text(String),
    Int(i64),
}

/// Column list of [`RunSummary`] rows, in the order the backends read them.
pub(crate) const SUMMARY_COLUMNS: &str = "id, started_at, label, workload, category, hostname, \
     host_fingerprint, tool_version, stop_reason, headline_metric, headline_value, headline_unit";

/// What each backend does; SQL text is shared, only parameter syntax and types differ.
pub(crate) trait Backend: Send {
    /// Parameter placeholder number `n` (1-based).
    fn placeholder(&self, n: usize) -> String;
    /// Schema version of the store.
    fn version(&mut self) -> Result<u32>;
    /// Inserts rows in one transaction.
    fn insert(&mut self, rows: &[(Indexed, &str)], stored_ms: i64) -> Result<Vec<Inserted>>;
    /// `SELECT SUMMARY_COLUMNS FROM runs {tail}`.
    fn summaries(&mut self, tail: &str, args: &[Arg]) -> Result<Vec<RunSummary>>;
    /// `SELECT id, result_json FROM runs {tail}`.
    fn runs(&mut self, tail: &str, args: &[Arg]) -> Result<Vec<StoredRun>>;
    /// Deletes these exact ids in one transaction; returns how many rows went.
    fn delete_ids(&mut self, ids: &[String]) -> Result<u64>;
    /// Deletes every run with this label in one transaction.
    fn delete_label(&mut self, label: &str) -> Result<u64>;
    /// Replaces the label, schema version and JSON of runs already stored (by id) in one
    /// transaction; returns how many rows changed.
    fn replace(&mut self, rows: &[(Indexed, &str)]) -> Result<u64>;
    /// Records (replacing) the roster of fleet run `run` in one transaction.
    fn put_roster(&mut self, run: &str, hosts: &[FleetHost], stored_ms: i64) -> Result<()>;
    /// The roster of fleet run `run`, by position.
    fn roster(&mut self, run: &str) -> Result<Vec<FleetHost>>;
}

/// An open results store.
pub struct Store {
    backend: Box<dyn Backend>,
    location: Location,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.location.to_string())
            .finish()
    }
}

impl Store {
    /// Opens the store at `location`, creating it (and its directory, or PostgreSQL schema)
    /// if needed, and migrating it to [`LATEST_VERSION`].
    pub fn open(location: &Location) -> Result<Store> {
        Store::open_mode(location, true)?.ok_or_else(|| {
            StoreError::BadLocation(format!("the results store {location} could not be created"))
        })
    }

    /// Opens the store if it exists (migrating it if it is older); `None` when there is no
    /// store there yet. Nothing is created.
    pub fn open_existing(location: &Location) -> Result<Option<Store>> {
        Store::open_mode(location, false)
    }

    fn open_mode(location: &Location, create: bool) -> Result<Option<Store>> {
        if let Location::Sqlite(path) = location
            && create
            && !location::is_default_path(path)
            && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && let Some(up) = dir.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.is_dir()
            && !up.is_dir()
        {
            // A named store's own directory is made (`--results-db ~/bench/r.db`), but not
            // a chain of them: a mistyped path (`/nonexist/dir/x.db`) makes nothing.
            return Err(StoreError::BadLocation(format!(
                "the results store {location}: its directory {} does not exist and neither \
                 does {}; create them first or give another --results-db / \
                 HOSTBENCH_RESULTS_DB",
                dir.display(),
                up.display()
            )));
        }
        let backend: Option<Box<dyn Backend>> = match location {
            Location::Sqlite(path) => sqlite::Sqlite::open(path, create, LATEST_VERSION)?
                .map(|b| Box::new(b) as Box<dyn Backend>),
            Location::Postgres { url, schema } => {
                pg::Pg::open(url, schema, create, LATEST_VERSION)?
                    .map(|b| Box::new(b) as Box<dyn Backend>)
            }
        };
        Ok(backend.map(|backend| Store {
            backend,
            location: location.clone(),
        }))
    }

    /// Where this store is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The store's schema version.
    pub fn schema_version(&mut self) -> Result<u32> {
        self.backend.version()
    }

    /// Saves a finished (or interrupted) run in one transaction. Saving the same run twice
    /// is a no-op; another run with the same id is a [`StoreError::Conflict`].
    pub fn save(&mut self, r: &RunResult) -> Result<()> {
        let json = serde_json::to_string(r).map_err(|e| StoreError::BadResult {
            id: r.id.clone(),
            why: format!("it does not serialize ({e})"),
        })?;
        let ix = Indexed::of(r)?;
        match self.backend.insert(&[(ix, &json)], time::now_ms())?[..] {
            [Inserted::Conflict] => Err(StoreError::Conflict(r.id.clone())),
            _ => Ok(()),
        }
    }

    /// Records every host fleet run `run` was asked for and how each ended (replacing what
    /// was recorded for `run`).
    pub fn save_fleet_roster(&mut self, run: &str, hosts: &[FleetHost]) -> Result<()> {
        self.backend.put_roster(run, hosts, time::now_ms())
    }

    /// The hosts fleet run `run`'s controller recorded, in the user's order; empty when
    /// none did (runs that joined with `HOSTBENCH_FLEET_RUN`, or a store from before).
    pub fn fleet_roster(&mut self, run: &str) -> Result<Vec<FleetHost>> {
        self.backend.roster(run)
    }

    /// The rosters of the fleet runs of `runs` (each fleet run once, in the order its first
    /// run comes), for an export.
    pub fn rosters_of(&mut self, runs: &[StoredRun]) -> Result<Vec<FleetRoster>> {
        let mut seen: Vec<String> = Vec::new();
        let mut out = Vec::new();
        // Only the fleet run id is read of each run.
        #[derive(serde::Deserialize)]
        struct Probe {
            fleet: Option<FleetId>,
        }
        #[derive(serde::Deserialize)]
        struct FleetId {
            run: String,
        }
        for r in runs {
            let Ok(Probe { fleet: Some(f) }) = serde_json::from_str::<Probe>(&r.json) else {
                continue;
            };
            if seen.contains(&f.run) {
                continue;
            }
            seen.push(f.run.clone());
            let hosts = self.fleet_roster(&f.run)?;
            if !hosts.is_empty() {
                out.push(FleetRoster { run: f.run, hosts });
            }
        }
        Ok(out)
    }

    /// Records imported fleet rosters, each only when this store has none for its fleet run
    /// (a store's own record of its fleet runs is kept); returns how many were added.
    pub fn import_rosters(&mut self, rosters: &[FleetRoster]) -> Result<usize> {
        let mut n = 0;
        for r in rosters {
            if self.fleet_roster(&r.run)?.is_empty() {
                self.save_fleet_roster(&r.run, &r.hosts)?;
                n += 1;
            }
        }
        Ok(n)
    }

    /// Stores runs read from a file (see [`parse_runs`]) in one transaction, keeping each
    /// JSON text as it is. Runs already stored are skipped, so importing twice adds nothing.
    pub fn import(&mut self, runs: &[StoredRun]) -> Result<ImportReport> {
        let mut rows = Vec::with_capacity(runs.len());
        for r in runs {
            rows.push((Indexed::of(&r.result()?)?, r.json.as_str()));
        }
        let outcome = self.backend.insert(&rows, time::now_ms())?;
        let mut rep = ImportReport::default();
        for (o, r) in outcome.iter().zip(runs) {
            match o {
                Inserted::New => rep.added += 1,
                Inserted::Same => rep.already_present += 1,
                Inserted::Conflict => rep.conflicts.push(r.id.clone()),
            }
        }
        Ok(rep)
    }

    fn where_clause(&self, f: &Filter) -> (String, Vec<Arg>) {
        let mut conds = Vec::new();
        let mut args = Vec::new();
        let ph = |a: Arg, args: &mut Vec<Arg>| {
            args.push(a);
            self.backend.placeholder(args.len())
        };
        if let Some(l) = &f.label {
            let p = ph(Arg::Text(l.clone()), &mut args);
            conds.push(format!("label = {p}"));
        }
        if let Some(w) = &f.workload {
            let p = ph(Arg::Text(w.clone()), &mut args);
            conds.push(format!("(workload = {p} OR workload_family = {p})"));
        }
        if let Some(h) = &f.host {
            let p = ph(Arg::Text(h.clone()), &mut args);
            let hex = h.to_ascii_lowercase();
            if hex.len() >= 4 && hex.len() <= 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                let q = ph(Arg::Text(format!("{hex}%")), &mut args);
                conds.push(format!(
                    "(hostname = {p} OR fleet_host = {p} OR host_fingerprint LIKE {q})"
                ));
            } else {
                conds.push(format!("(hostname = {p} OR fleet_host = {p})"));
            }
        }
        if let Some(r) = &f.fleet_run {
            let p = ph(Arg::Text(r.clone()), &mut args);
            conds.push(format!("fleet_run = {p}"));
        }
        if let Some(s) = f.since_ms {
            let p = ph(Arg::Int(s), &mut args);
            conds.push(format!("started_ms >= {p}"));
        }
        if let Some(u) = f.until_ms {
            let p = ph(Arg::Int(u), &mut args);
            conds.push(format!("started_ms <= {p}"));
        }
        let mut sql = if conds.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", conds.join(" AND "))
        };
        // Newest first, so a limit keeps the most recent runs.
        sql.push_str(" ORDER BY started_ms DESC, id DESC");
        if let Some(n) = f.limit {
            let p = ph(Arg::Int(i64::try_from(n).unwrap_or(i64::MAX)), &mut args);
            sql.push_str(&format!(" LIMIT {p}"));
        }
        (sql, args)
    }

    /// Summaries of the runs `f` selects, newest first.
    pub fn list(&mut self, f: &Filter) -> Result<Vec<RunSummary>> {
        let (tail, args) = self.where_clause(f);
        self.backend.summaries(&tail, &args)
    }

    /// The runs `f` selects, oldest first (ties by id): the order of exports and reports.
    pub fn load(&mut self, f: &Filter) -> Result<Vec<StoredRun>> {
        let (tail, args) = self.where_clause(f);
        let mut runs = self.backend.runs(&tail, &args)?;
        runs.reverse();
        Ok(runs)
    }

    /// The full id of the run whose id is `id`, or starts with `id` (at least 4
    /// characters) when that is unambiguous.
    pub fn resolve_id(&mut self, id: &str) -> Result<String> {
        let p1 = self.backend.placeholder(1);
        let exact = self
            .backend
            .summaries(&format!("WHERE id = {p1}"), &[Arg::Text(id.to_string())])?;
        if let Some(s) = exact.into_iter().next() {
            return Ok(s.id);
        }
        if id.chars().count() < 4 {
            return Err(StoreError::ShortPrefix(id.to_string()));
        }
        let escaped: String = id
            .chars()
            .flat_map(|c| match c {
                '%' | '_' | '\\' => vec!['\\', c],
                c => vec![c],
            })
            .collect();
        // LIKE may ignore case (SQLite): it narrows, `starts_with` decides.
        let mut ids: Vec<String> = self
            .backend
            .summaries(
                &format!("WHERE id LIKE {p1} ESCAPE '\\' ORDER BY id"),
                &[Arg::Text(format!("{escaped}%"))],
            )?
            .into_iter()
            .map(|s| s.id)
            .filter(|full| full.starts_with(id))
            .collect();
        match ids.len() {
            0 => Err(StoreError::UnknownRun(id.to_string())),
            1 => Ok(ids.remove(0)),
            n => Err(StoreError::AmbiguousId {
                prefix: id.to_string(),
                count: n,
                examples: ids.iter().take(3).cloned().collect::<Vec<_>>().join(", "),
            }),
        }
    }

    /// The run with this id (or unambiguous id prefix).
    pub fn get(&mut self, id: &str) -> Result<StoredRun> {
        let full = self.resolve_id(id)?;
        let p1 = self.backend.placeholder(1);
        self.backend
            .runs(&format!("WHERE id = {p1}"), &[Arg::Text(full.clone())])?
            .into_iter()
            .next()
            .ok_or(StoreError::UnknownRun(full))
    }

    /// The runs a command-line word stands for: the runs in a file if `spec` is a file, else
    /// the run with that id (or unambiguous prefix), else every run with that label
    /// (oldest first).
    pub fn select(&mut self, spec: &str) -> Result<Vec<StoredRun>> {
        let path = std::path::Path::new(spec);
        if path.is_file() {
            return load_file(path);
        }
        let short = match self.get(spec) {
            Ok(r) => return Ok(vec![r]),
            Err(StoreError::UnknownRun(_)) => false,
            Err(StoreError::ShortPrefix(_)) => true,
            Err(e) => return Err(e),
        };
        let runs = self.load(&Filter {
            label: Some(spec.to_string()),
            ..Filter::default()
        })?;
        match (runs.is_empty(), short) {
            (false, _) => Ok(runs),
            (true, true) => Err(StoreError::ShortPrefix(spec.to_string())),
            (true, false) => Err(StoreError::NoMatch(spec.to_string())),
        }
    }

    /// Removes the runs with these ids (or unambiguous prefixes) in one transaction. Every
    /// id is resolved first: if one is unknown, nothing is removed.
    pub fn remove(&mut self, ids: &[String]) -> Result<u64> {
        let mut full = Vec::with_capacity(ids.len());
        for id in ids {
            let f = self.resolve_id(id)?;
            if !full.contains(&f) {
                full.push(f);
            }
        }
        self.backend.delete_ids(&full)
    }

    /// Replaces stored runs by these new versions of them (same ids: a new label, new
    /// annotations), index columns and JSON, in one transaction; returns how many were
    /// replaced. Every id must be stored already.
    pub fn rewrite(&mut self, runs: &[RunResult]) -> Result<u64> {
        let mut rows = Vec::with_capacity(runs.len());
        let mut texts = Vec::with_capacity(runs.len());
        for r in runs {
            self.resolve_id(&r.id)?;
            texts.push(serde_json::to_string(r).map_err(|e| StoreError::BadResult {
                id: r.id.clone(),
                why: format!("it does not serialize ({e})"),
            })?);
            rows.push(Indexed::of(r)?);
        }
        let pairs: Vec<(Indexed, &str)> = rows
            .into_iter()
            .zip(texts.iter().map(String::as_str))
            .collect();
        self.backend.replace(&pairs)
    }

    /// Removes every run with exactly this label, in one transaction.
    pub fn remove_label(&mut self, label: &str) -> Result<u64> {
        self.backend.delete_label(label)
    }
}

/// Whether a run's JSON as stored and as offered again are the same run: the same text, or
/// the same JSON values once parsed (another program may have re-formatted an export:
/// `jq .` changes spacing, member order and how a number is written, `1.0` as `1`).
pub(crate) fn same_run_json(stored: &str, offered: &str) -> bool {
    if stored == offered {
        return true;
    }
    match (
        serde_json::from_str::<serde_json::Value>(stored),
        serde_json::from_str::<serde_json::Value>(offered),
    ) {
        (Ok(a), Ok(b)) => same_value(&a, &b),
        _ => false,
    }
}

/// JSON equality with numbers compared by value (`1.0` equals `1`) and objects whatever
/// their member order.
fn same_value(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as V;
    match (a, b) {
        (V::Number(x), V::Number(y)) => match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
            (Some(i), Some(j), _, _) => i == j,
            (_, _, Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (V::Array(x), V::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (V::Object(x), V::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// The full message of an error and its causes, joined by `: ` (database drivers put the
/// useful part in the causes).
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests;
