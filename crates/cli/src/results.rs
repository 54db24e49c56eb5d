//! `hostbench results list|show|export|import|rm|relabel|annotate`: the results store from
//! the command line.
//! Read-only commands never create a store; every change is one transaction. Bad input (an
//! unknown id, an unreadable file, a file that is not an export, a bad date) is an error
//! (exit 2) that says what to fix.

use crate::exec;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use hostbench_core::result::RunResult;
use hostbench_store::time::{Bound, now_ms, parse_bound};
use hostbench_store::{
    Filter, Location, RunSummary, Store, export_document_with, load_document, read_document,
};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// `hostbench results ...`.
#[derive(Debug, Args)]
pub struct ResultsArgs {
    #[command(subcommand)]
    command: ResultsCommand,
}

#[derive(Debug, Subcommand)]
enum ResultsCommand {
    /// List stored runs, newest first: id, start, label, workload, host, headline figure.
    List(ListArgs),
    /// Print the report of a stored run (or, with --format json, its stored JSON).
    Show(ShowArgs),
    /// Write stored runs as one JSON document that `results import` reads back.
    Export(ExportArgs),
    /// Add the runs in export files (or result JSON files) to the store; runs already
    /// stored are skipped.
    Import(ImportArgs),
    /// Remove runs by id (or unambiguous id prefix), or every run the filters select
    /// (`--label`, `--workload`, `--host`, `--since`, `--until`); `--dry-run` lists them.
    Rm(RmArgs),
    /// Give the runs of an id or a label another label.
    Relabel(RelabelArgs),
    /// Add notes to runs (instance type, region, price): `KEY=VALUE`, shown by `compare`
    /// and `results show`; `KEY=` removes one.
    Annotate(AnnotateArgs),
}

/// `--results-db`, shared by every command that touches the store.
#[derive(Debug, Args)]
pub struct StoreArg {
    /// Results store: an SQLite file or a postgres:// URL [default: $HOSTBENCH_RESULTS_DB,
    /// else $XDG_DATA_HOME/hostbench/results.db, else ~/.local/share/hostbench/results.db].
    #[arg(long = "results-db", value_name = "PATH|URL")]
    pub results_db: Option<String>,
}

#[derive(Debug, Args)]
struct FilterArgs {
    /// Only runs with exactly this label.
    #[arg(long, value_name = "NAME")]
    label: Option<String>,
    /// Only this workload id, or every id of this family (`null` matches `null.loop`), or
    /// the name it is run by (`oltp_point_select`, `fio`, `ab`).
    #[arg(long, value_name = "ID")]
    workload: Option<String>,
    /// Only this host name (the machine's, or its name in a fleet run as `hostbench fleet`
    /// was given it), or host fingerprint (or its first 4+ hex digits).
    #[arg(long, value_name = "NAME|FINGERPRINT")]
    host: Option<String>,
    /// Only the runs of this fleet run (the id `hostbench fleet` prints).
    #[arg(long, value_name = "ID")]
    fleet_run: Option<String>,
    /// Only runs started at or after DATE: `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS][Z|+HH:MM]`
    /// (UTC unless an offset is given) or a time ago (30m, 12h, 7d, 2w).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Only runs started at or before DATE (a date alone includes that whole day).
    #[arg(long, value_name = "DATE")]
    until: Option<String>,
    /// At most N runs, the most recent ones.
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
}

/// The workload id (or family) a `--workload` word stands for: an id or a family as it is,
/// else the workload a sysbench test name or a command word runs (`oltp_point_select` is
/// `db.oltp_point_select`, `fio` is `disk.fio`, `ab` is `http.load`); an unknown word as it
/// is (it then matches nothing).
pub fn workload_id(word: &str) -> String {
    use hostbench_workloads::{WORKLOADS, by_command, by_sysbench_test};
    let known = WORKLOADS
        .iter()
        .any(|w| w.id() == word || w.id().split('.').next() == Some(word));
    if known {
        return word.to_string();
    }
    by_sysbench_test(word)
        .or_else(|| by_command(word))
        .map_or_else(|| word.to_string(), |w| w.id().to_string())
}

/// `--since` and `--until` as Unix ms (each a date or a time ago, see `parse_bound`).
pub fn date_bounds(since: Option<&str>, until: Option<&str>) -> Result<(Option<i64>, Option<i64>)> {
    let now = now_ms();
    let bound = |v: Option<&str>, b, name| -> Result<Option<i64>> {
        v.map(|s| parse_bound(s, b, now).with_context(|| format!("--{name}")))
            .transpose()
    };
    Ok((
        bound(since, Bound::Since, "since")?,
        bound(until, Bound::Until, "until")?,
    ))
}

impl FilterArgs {
    fn filter(&self) -> Result<Filter> {
        let (since_ms, until_ms) = date_bounds(self.since.as_deref(), self.until.as_deref())?;
        Ok(Filter {
            label: self.label.clone(),
            workload: self.workload.as_deref().map(workload_id),
            host: self.host.clone(),
            since_ms,
            until_ms,
            limit: self.limit,
            fleet_run: self.fleet_run.clone(),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TextJson {
    Text,
    Json,
}

/// What `results show` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ShowFormat {
    Text,
    Json,
    Sysbench,
    Fio,
    Ab,
    Iozone,
    Httperf,
    Stream,
}

/// The peer layouts a stored run can be printed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Peer {
    Sysbench,
    Fio,
    Ab,
    Iozone,
    Httperf,
    Stream,
}

const PEERS: [Peer; 6] = [
    Peer::Sysbench,
    Peer::Fio,
    Peer::Ab,
    Peer::Iozone,
    Peer::Httperf,
    Peer::Stream,
];

impl Peer {
    fn name(self) -> &'static str {
        match self {
            Peer::Sysbench => "sysbench",
            Peer::Fio => "fio",
            Peer::Ab => "ab",
            Peer::Iozone => "iozone",
            Peer::Httperf => "httperf",
            Peer::Stream => "stream",
        }
    }

    /// `r` in this peer's layout, from the result alone (the measurement and the layout
    /// options its front-end recorded), or why it cannot be: the layout is for other
    /// workloads, or the run was stored before results carried what the layout needs. A run
    /// typed in another grammar gave none of this peer's options: the layout then prints
    /// what the peer prints without them (what `hostbench http --format ab` prints).
    fn render(self, r: &RunResult) -> std::result::Result<String, String> {
        use hostbench_core::layout::Layout;
        use hostbench_report as report;
        let id = r.workload.id.as_str();
        let older = |what: &str| {
            format!(
                "it was stored by hostbench {} before results recorded {what} (result schema \
                 1.{}; 1.1 has it)",
                r.tool.version, r.schema_minor
            )
        };
        // The grammar's own options: recorded, or not given at all (another grammar).
        let options = |recorded: bool| {
            if recorded || r.config.grammar != self.name() {
                Ok(())
            } else {
                Err(older(&format!("{}'s layout options", self.name())))
            }
        };
        let not_for = |what: &str| Err(format!("{}'s layout is for {what}, not {id}", self.name()));
        let layout = r.config.layout.as_ref();
        match self {
            Peer::Sysbench => {
                if hostbench_workloads::registry::find(id)
                    .and_then(|w| w.sysbench_test())
                    .is_none()
                {
                    return not_for("its tests (cpu, memory, fileio, threads, mutex, OLTP)");
                }
                options(matches!(layout, Some(Layout::Sysbench(_))))?;
                Ok(report::sysbench::report(r))
            }
            Peer::Fio => {
                if id != "disk.fio" {
                    return not_for("disk.fio runs");
                }
                if r.fio.is_none() {
                    return Err(older("fio's statistics as one typed section"));
                }
                options(matches!(layout, Some(Layout::Fio(_))))?;
                Ok(report::fio::render_as_run(r))
            }
            Peer::Ab | Peer::Httperf => {
                if id != HTTP_LOAD {
                    return not_for("http.load runs");
                }
                if self == Peer::Ab {
                    options(matches!(layout, Some(Layout::Ab(_))))?;
                    Ok(report::ab::render(r))
                } else {
                    options(matches!(layout, Some(Layout::Httperf(_))))?;
                    Ok(report::httperf::render(r))
                }
            }
            Peer::Iozone => {
                if id != "iozone" {
                    return not_for("iozone runs");
                }
                match layout {
                    Some(Layout::Iozone(_)) => Ok(report::iozone::render(r)),
                    _ if r.config.grammar == "iozone" => Err(older("IOzone's layout options")),
                    // IOzone's header echoes its own command line and flags.
                    _ => Err(format!(
                        "IOzone's header echoes the IOzone command line, and this run was typed \
                         in the {} grammar",
                        r.config.grammar
                    )),
                }
            }
            Peer::Stream => {
                if id != "stream" {
                    return not_for("stream runs");
                }
                Ok(report::stream::render(r))
            }
        }
    }
}

/// Every format `r` can be shown in, for the message that refuses another.
fn formats_for(r: &RunResult) -> String {
    let mut f = vec!["text", "json"];
    f.extend(
        PEERS
            .iter()
            .filter(|p| p.render(r).is_ok())
            .map(|p| p.name()),
    );
    f.join(", ")
}

#[derive(Debug, Args)]
struct ListArgs {
    #[command(flatten)]
    filter: FilterArgs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = TextJson::Text)]
    format: TextJson,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, Args)]
struct ShowArgs {
    /// Run id, or an unambiguous prefix of one (at least 4 characters).
    id: String,
    /// `text`: the report; `json`: the stored result JSON, exactly as stored; `sysbench`,
    /// `fio`, `ab`, `iozone`, `httperf`, `stream`: the run's report in that program's layout,
    /// as the run printed it (a layout the run has the data for).
    #[arg(short, long, value_enum, default_value_t = ShowFormat::Text)]
    format: ShowFormat,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, Args)]
struct ExportArgs {
    #[command(flatten)]
    filter: FilterArgs,
    /// Write the document to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, Args)]
struct ImportArgs {
    /// Files written by `results export`, by `--format json`, or JSON arrays of results;
    /// `-` reads stdin.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, Args)]
struct RmArgs {
    /// Run ids (or unambiguous prefixes). If one is unknown, nothing is removed.
    #[arg(value_name = "ID", conflicts_with_all = ["label", "workload", "host", "since", "until"])]
    ids: Vec<String>,
    /// Remove every run with exactly this label.
    #[arg(long, value_name = "NAME")]
    label: Option<String>,
    /// Remove the runs of this workload id, family, or the name it is run by.
    #[arg(long, value_name = "ID")]
    workload: Option<String>,
    /// Remove the runs of this host name or host fingerprint (4+ hex digits).
    #[arg(long, value_name = "NAME|FINGERPRINT")]
    host: Option<String>,
    /// Remove the runs started at or after DATE (as `results list --since`).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Remove the runs started at or before DATE (as `results list --until`).
    #[arg(long, value_name = "DATE")]
    until: Option<String>,
    /// List what would be removed, and remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// Do not ask before removing several runs (on a terminal, `rm` asks when it would
    /// remove more than one).
    #[arg(long, short = 'y')]
    yes: bool,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, Args)]
struct RelabelArgs {
    /// A run id (or unambiguous prefix), or a label: every run with it (`id:ID`,
    /// `label:NAME` when a label is spelled like the start of an id).
    #[arg(value_name = "ID|LABEL")]
    runs: String,
    /// The new label.
    #[arg(value_name = "NEW_LABEL")]
    label: String,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, Args)]
struct AnnotateArgs {
    /// A run id (or unambiguous prefix), or a label: every run with it (`id:ID`,
    /// `label:NAME` when a label is spelled like the start of an id).
    #[arg(value_name = "ID|LABEL")]
    runs: String,
    /// `KEY=VALUE` notes (`instance=c7g.xlarge`, `price=0.145/h`, `region=eu-west-1`);
    /// `KEY=` removes a note. Keys: lower-case letters, digits, `_`, `.`, `-` (at most 40);
    /// values: at most 200 printable characters; never a secret.
    #[arg(value_name = "KEY=VALUE", required = true)]
    notes: Vec<String>,
    #[command(flatten)]
    store: StoreArg,
}

fn location(a: &StoreArg) -> Result<Location> {
    Location::resolve(a.results_db.as_deref()).context("results store")
}

/// The store if it exists; read-only commands never create one.
fn existing(a: &StoreArg) -> Result<(Location, Option<Store>)> {
    let loc = location(a)?;
    let s = Store::open_existing(&loc)?;
    Ok((loc, s))
}

/// Runs `hostbench results ...`.
pub fn main(a: ResultsArgs) -> Result<ExitCode> {
    match a.command {
        ResultsCommand::List(a) => list(a),
        ResultsCommand::Show(a) => show(a),
        ResultsCommand::Export(a) => export(a),
        ResultsCommand::Import(a) => import(a),
        ResultsCommand::Rm(a) => rm(a),
        ResultsCommand::Relabel(a) => relabel(a),
        ResultsCommand::Annotate(a) => annotate(a),
    }
}

fn list(a: ListArgs) -> Result<ExitCode> {
    let filter = a.filter.filter()?;
    let (loc, mut store) = existing(&a.store)?;
    let runs = match &mut store {
        Some(s) => s.list(&filter)?,
        None => Vec::new(),
    };
    // Threads and the parameters that differ from the workload's defaults, read from each
    // stored result (the index has neither); HTTP runs, which all read `http.load`, add
    // their grammar and URL.
    let details = match &mut store {
        Some(s) => details(s, &runs),
        None => Default::default(),
    };
    if a.format == TextJson::Json {
        #[derive(serde::Serialize)]
        struct Row<'a> {
            #[serde(flatten)]
            summary: &'a RunSummary,
            threads: Option<usize>,
            params: &'a std::collections::BTreeMap<String, String>,
        }
        let empty = Default::default();
        let rows: Vec<Row> = runs
            .iter()
            .map(|r| {
                let d = details.get(&r.id);
                Row {
                    summary: r,
                    threads: d.and_then(|d| d.threads),
                    params: d.map_or(&empty, |d| &d.params),
                }
            })
            .collect();
        exec::out(&(serde_json::to_string_pretty(&rows)? + "\n"));
    } else if store.is_none() {
        eprintln!("no results store at {loc} yet: nothing has been saved there");
    } else if runs.is_empty() {
        eprintln!("no stored run matches (store: {loc})");
    } else {
        exec::out(&table(&runs, &details));
    }
    Ok(ExitCode::SUCCESS)
}

/// The [`Details`] of these runs, by id.
fn details(store: &mut Store, runs: &[RunSummary]) -> std::collections::HashMap<String, Details> {
    runs.iter()
        .filter_map(|r| Some((r.id.clone(), Details::of(&store.get(&r.id).ok()?.json))))
        .collect()
}

/// What `results list` shows of a run beyond the index: threads, the parameters that
/// differ from the workload's defaults (`max_prime=20000`, sizes readable), and an HTTP
/// run's grammar and URL.
#[derive(Debug, Default)]
struct Details {
    threads: Option<usize>,
    params: std::collections::BTreeMap<String, String>,
    target: Option<String>,
}

impl Details {
    fn of(json: &str) -> Details {
        let Ok(r) = serde_json::from_str::<RunResult>(json) else {
            return Details::default();
        };
        let target = (r.workload.id == HTTP_LOAD)
            .then(|| http_target(json))
            .flatten();
        let mut params = std::collections::BTreeMap::new();
        if let Some(w) = hostbench_workloads::find(&r.workload.id) {
            use hostbench_core::params::{ParamKind, Value};
            for spec in w.params() {
                let Some(v) = r.workload.params.values().get(spec.name) else {
                    continue;
                };
                // The URL is in the workload column already; the default is what it says.
                if spec.name == "url" || spec.parse(spec.default).ok().as_ref() == Some(v) {
                    continue;
                }
                let text = match (v, spec.kind) {
                    (Value::Int(n), ParamKind::Size) if *n >= 0 => {
                        hostbench_core::units::Bytes(*n as u64).to_string()
                    }
                    // A job file's text (fio): its jobs' names, not its lines in a table
                    // cell.
                    (Value::Text(t), _) if t.contains('\n') => section_names(t),
                    // As compare's labels print values.
                    (v, _) => hostbench_core::secret::mask(&hostbench_core::compare::value_text(v))
                        .into_owned(),
                };
                params.insert(spec.name.to_string(), text);
            }
        }
        Details {
            threads: Some(r.config.threads),
            params,
            target,
        }
    }

    /// `name=value ...` for the table.
    fn params_cell(&self) -> String {
        let all: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if all.is_empty() {
            "-".into()
        } else {
            all.join(" ")
        }
    }
}

/// A stored string as a table cell: control characters escaped (a stored label comes from
/// whoever wrote the store or the imported file), at most `max` characters (then `…`).
fn cell(s: &str, max: usize) -> String {
    let s = hostbench_core::input::printable(s);
    if s.chars().count() <= max {
        return s.into_owned();
    }
    let mut t: String = s.chars().take(max - 1).collect();
    t.push('…');
    t
}

const HTTP_LOAD: &str = "http.load";

/// An HTTP run's grammar and target URL, as `results list` shows them after the workload
/// (`ab http://127.0.0.1:8080/`), the URL's password masked.
fn http_target(json: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let grammar = v["config"]["grammar"].as_str().unwrap_or("");
    let url = v["workload"]["params"]["url"].as_str()?;
    let url = hostbench_core::secret::mask(url);
    Some(format!("{grammar} {url}").trim().to_string())
}

/// The runs as an aligned table; ids shortened to 12 characters (any unique prefix works);
/// `details` adds threads and key parameters, and to the workload of HTTP runs their
/// grammar and URL.
fn table(runs: &[RunSummary], details: &std::collections::HashMap<String, Details>) -> String {
    let rows: Vec<[String; 8]> = runs
        .iter()
        .map(|r| {
            let mut head = match r.headline.value {
                Some(v) => format!("{v:.2} {}", r.headline.unit),
                None => "-".into(),
            };
            if !matches!(
                r.stop_reason.as_str(),
                "time_limit" | "event_limit" | "workers_done"
            ) {
                let _ = write!(head, " ({})", r.stop_reason.replace('_', " "));
            }
            let d = details.get(&r.id);
            [
                hostbench_core::input::printable(&r.id)
                    .chars()
                    .take(12)
                    .collect(),
                cell(r.started_at.get(..19).unwrap_or(&r.started_at), 19).replace('T', " "),
                r.label
                    .as_deref()
                    .map_or_else(|| "-".into(), |l| cell(l, 60)),
                match d.and_then(|d| d.target.as_ref()) {
                    // The URL last: a masked `?password=***` ends the cell.
                    Some(t) => cell(&format!("{} {t}", r.workload), 80),
                    None => cell(&r.workload, 40),
                },
                d.and_then(|d| d.threads)
                    .map_or_else(|| "-".into(), |t| t.to_string()),
                d.map_or_else(|| "-".into(), |d| cell(&d.params_cell(), 48)),
                r.hostname
                    .as_deref()
                    .map_or_else(|| "-".into(), |h| cell(h, 40)),
                head,
            ]
        })
        .collect();
    let header = [
        "ID",
        "STARTED (UTC)",
        "LABEL",
        "WORKLOAD",
        "THREADS",
        "PARAMETERS",
        "HOST",
        "RESULT",
    ];
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut s = String::new();
    let mut line = |cells: &[String]| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                l.push_str(c);
            } else {
                let pad = w[i] - c.chars().count();
                let _ = write!(l, "{c}{}  ", " ".repeat(pad));
            }
        }
        s.push_str(l.trim_end());
        s.push('\n');
    };
    line(&header.map(String::from));
    for r in &rows {
        line(r);
    }
    s
}

fn show(a: ShowArgs) -> Result<ExitCode> {
    let (loc, store) = existing(&a.store)?;
    let Some(mut store) = store else {
        bail!(
            "no stored run has the id '{}': there is no results store at {loc} yet",
            a.id
        );
    };
    let run = store.get(&a.id)?;
    if a.format == ShowFormat::Json {
        exec::out(&format!("{}\n", run.json));
        return Ok(ExitCode::SUCCESS);
    }
    let r = run
        .result()
        .context("`--format json` prints the stored text as it is")?;
    let peer = match a.format {
        ShowFormat::Text | ShowFormat::Json => None,
        ShowFormat::Sysbench => Some(Peer::Sysbench),
        ShowFormat::Fio => Some(Peer::Fio),
        ShowFormat::Ab => Some(Peer::Ab),
        ShowFormat::Iozone => Some(Peer::Iozone),
        ShowFormat::Httperf => Some(Peer::Httperf),
        ShowFormat::Stream => Some(Peer::Stream),
    };
    if let Some(peer) = peer {
        // The report as the run printed it on stdout, its warnings on stderr as it did.
        let text = peer.render(&r).map_err(|why| {
            // Stored strings (id, workload, grammar) are printed escaped.
            let msg = format!(
                "run {} ({} run typed in the {} grammar) cannot be shown in {}'s layout: {why}; \
                 it can be shown as: {}",
                r.id,
                r.workload.id,
                r.config.grammar,
                peer.name(),
                formats_for(&r)
            );
            anyhow::anyhow!("{}", hostbench_core::input::printable(&msg))
        })?;
        exec::out(&text);
        for w in &r.warnings {
            eprintln!("WARNING: {}", w.message);
        }
        return Ok(ExitCode::SUCCESS);
    }
    use hostbench_core::input::printable;
    let mut s = format!(
        "run {}  started {}",
        printable(&r.id),
        printable(&r.started_at)
    );
    if let Some(l) = &r.label {
        let _ = write!(s, "  label {}", printable(l));
    }
    if let Some(h) = &r.host {
        let _ = write!(
            s,
            "  host {} (fingerprint {})",
            printable(&h.hostname),
            hostbench_store::host_fingerprint(h)
        );
    }
    let _ = writeln!(
        s,
        "\ncommand: {}  [{} grammar, hostbench {}]\n",
        r.config.command_line.join(" "),
        r.config.grammar,
        r.tool.version
    );
    s.push_str(&hostbench_report::native::render_with(
        &r,
        Some(hostbench_core::compare::ShortValue(
            crate::compare::short_value,
        )),
    ));
    for w in &r.warnings {
        let _ = writeln!(s, "warning: {}", w.message);
    }
    exec::out(&s);
    Ok(ExitCode::SUCCESS)
}

fn export(a: ExportArgs) -> Result<ExitCode> {
    let filter = a.filter.filter()?;
    let (loc, store) = existing(&a.store)?;
    let (runs, rosters) = match store {
        Some(mut s) => {
            let runs = s.load(&filter)?;
            // The hosts of the runs' fleet runs travel with them (`fleet report`).
            let rosters = s.rosters_of(&runs)?;
            (runs, rosters)
        }
        None => (Vec::new(), Vec::new()),
    };
    if runs.is_empty() {
        eprintln!("no stored run matches (store: {loc}); the export is empty");
    }
    let doc = export_document_with(&runs, &rosters);
    match &a.output {
        Some(path) => {
            crate::output::write(path, doc.as_bytes(), "-o", a.store.results_db.as_deref())?;
            exec::out(&format!(
                "exported {} run(s) to {}\n",
                runs.len(),
                path.display()
            ));
        }
        None => exec::out(&doc),
    }
    Ok(ExitCode::SUCCESS)
}

fn import(a: ImportArgs) -> Result<ExitCode> {
    // Read and check every file first: a bad file imports nothing.
    let mut runs = Vec::new();
    let mut rosters = Vec::new();
    for f in &a.files {
        let (r, h) = if f == "-" {
            read_document(std::io::stdin().lock(), "stdin")?
        } else {
            load_document(std::path::Path::new(f))?
        };
        runs.extend(r);
        rosters.extend(h);
    }
    let loc = location(&a.store)?;
    let mut store = Store::open(&loc)?;
    let rep = store.import(&runs)?;
    let fleets = store.import_rosters(&rosters)?;
    for id in &rep.conflicts {
        eprintln!(
            "WARNING: run {id} is already stored with different content; the stored run was kept \
             (remove it with `hostbench results rm {id}` to replace it)"
        );
    }
    exec::out(&format!(
        "imported {} run(s) into {loc}; {} already stored{}{}\n",
        rep.added,
        rep.already_present,
        if rep.conflicts.is_empty() {
            String::new()
        } else {
            format!(", {} conflicting (kept)", rep.conflicts.len())
        },
        if fleets == 0 {
            String::new()
        } else {
            format!("; the hosts of {fleets} fleet run(s)")
        }
    ));
    Ok(ExitCode::SUCCESS)
}

fn rm(a: RmArgs) -> Result<ExitCode> {
    let filtered = a.label.is_some()
        || a.workload.is_some()
        || a.host.is_some()
        || a.since.is_some()
        || a.until.is_some();
    if a.ids.is_empty() && !filtered {
        bail!(
            "say which runs to remove: run ids, or filters (--label, --workload, --host, \
             --since, --until); `hostbench results list` shows what is stored"
        );
    }
    let (loc, store) = existing(&a.store)?;
    let Some(mut store) = store else {
        if filtered {
            exec::out(&format!(
                "removed 0 run(s) from {loc} (there is no store yet)\n"
            ));
            return Ok(ExitCode::SUCCESS);
        }
        bail!(
            "no stored run has the id '{}': there is no results store at {loc} yet",
            a.ids.first().map(String::as_str).unwrap_or_default()
        );
    };
    // What goes: every id resolved first (one unknown id removes nothing), or what the
    // filters select.
    let ids: Vec<String> = if filtered {
        let filter = FilterArgs {
            label: a.label.clone(),
            workload: a.workload.clone(),
            host: a.host.clone(),
            fleet_run: None,
            since: a.since.clone(),
            until: a.until.clone(),
            limit: None,
        }
        .filter()?;
        store.list(&filter)?.into_iter().map(|r| r.id).collect()
    } else {
        let mut full = Vec::new();
        for id in &a.ids {
            let f = store.resolve_id(id)?;
            if !full.contains(&f) {
                full.push(f);
            }
        }
        full
    };
    if a.dry_run {
        let summaries: Vec<RunSummary> = store
            .list(&Filter::default())?
            .into_iter()
            .filter(|r| ids.contains(&r.id))
            .collect();
        let mut s = format!("would remove {} run(s) from {loc}", ids.len());
        if summaries.is_empty() {
            s.push('\n');
        } else {
            s.push_str(":\n");
            s.push_str(&table(&summaries, &details(&mut store, &summaries)));
        }
        exec::out(&s);
        return Ok(ExitCode::SUCCESS);
    }
    if ids.len() > 1
        && !a.yes
        && asks()
        && !confirm(&format!("remove {} runs from {loc}?", ids.len()))?
    {
        eprintln!("nothing removed");
        return Ok(ExitCode::SUCCESS);
    }
    let n = if ids.is_empty() {
        0
    } else {
        store.remove(&ids)?
    };
    exec::out(&format!("removed {n} run(s) from {loc}\n"));
    Ok(ExitCode::SUCCESS)
}

/// Whether `rm` may ask: stdin and stderr are a terminal (a script's `rm` never waits).
fn asks() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks `question [y/N]` on stderr and reads the answer from stdin: yes only for `y`/`yes`.
fn confirm(question: &str) -> Result<bool> {
    eprint!("{question} [y/N] ");
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("cannot read the answer")?;
    Ok(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// The runs an `ID|LABEL` word names in the store: the run with that id (or unambiguous
/// prefix), else every run with that label.
fn pick(a: &StoreArg, word: &str) -> Result<(Store, Vec<RunResult>)> {
    let (loc, store) = existing(a)?;
    let Some(mut store) = store else {
        bail!("no stored run has the id or label '{word}': there is no results store at {loc} yet");
    };
    let by_label = |store: &mut Store, label: &str| {
        store.load(&Filter {
            label: Some(label.to_string()),
            ..Filter::default()
        })
    };
    let runs = if let Some(label) = word.strip_prefix("label:") {
        by_label(&mut store, label)?
    } else if let Some(id) = word.strip_prefix("id:") {
        vec![store.get(id)?]
    } else {
        match store.get(word) {
            Ok(r) => {
                // A label spelled like the start of a run id: say which is meant, as
                // `compare` does, rather than change the run with that id.
                let labelled = by_label(&mut store, word)?;
                if !labelled.is_empty() {
                    bail!(
                        "'{word}' is both a label ({} run(s)) and the start of a run id: write \
                         label:{word} or id:{word}",
                        labelled.len()
                    );
                }
                vec![r]
            }
            Err(
                hostbench_store::StoreError::UnknownRun(_)
                | hostbench_store::StoreError::ShortPrefix(_),
            ) => by_label(&mut store, word)?,
            Err(e) => return Err(e.into()),
        }
    };
    if runs.is_empty() {
        bail!(
            "no stored run has the id or label '{word}' (see `hostbench results list`){}",
            if word.chars().count() < 4 {
                "; an id prefix needs at least 4 characters"
            } else {
                ""
            }
        );
    }
    let runs = runs
        .iter()
        .map(|r| r.result().map_err(anyhow::Error::from))
        .collect::<Result<Vec<_>>>()?;
    Ok((store, runs))
}

fn relabel(a: RelabelArgs) -> Result<ExitCode> {
    let label = a.label.trim();
    if label.is_empty() || label.chars().any(char::is_control) || label.chars().count() > 200 {
        bail!("the new label must be 1 to 200 printable characters");
    }
    let (mut store, mut runs) = pick(&a.store, &a.runs)?;
    for r in &mut runs {
        r.label = Some(label.to_string());
    }
    let n = store.rewrite(&runs)?;
    exec::out(&format!("relabelled {n} run(s) as '{label}'\n"));
    Ok(ExitCode::SUCCESS)
}

/// A `KEY=VALUE` note checked: `(key, None)` removes the key.
fn note(word: &str) -> Result<(String, Option<String>)> {
    let Some((key, value)) = word.split_once('=') else {
        bail!("'{word}' is not KEY=VALUE (write instance=c7g.xlarge; KEY= removes a note)");
    };
    let key_ok = !key.is_empty()
        && key.len() <= 40
        && key.as_bytes()[0].is_ascii_alphanumeric()
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-".contains(&b));
    if !key_ok {
        bail!(
            "'{key}' is not a note key: use 1 to 40 lower-case letters, digits, '_', '.' or '-', \
             starting with a letter or digit"
        );
    }
    if hostbench_core::secret::is_secret_name(key) {
        bail!(
            "'{key}' looks like the name of a password or key, which hostbench never stores; leave it out"
        );
    }
    if value.chars().count() > 200 || value.chars().any(char::is_control) {
        bail!("the value of '{key}' must be at most 200 printable characters");
    }
    if let std::borrow::Cow::Owned(masked) = hostbench_core::secret::mask(value) {
        bail!(
            "the value of '{key}' holds a password ({masked}), which hostbench never stores; \
             leave it out"
        );
    }
    if key == "price"
        && !value.is_empty()
        && let Err(e) = hostbench_core::compare::Price::parse(value)
    {
        bail!("price={value}: {e} (compare and report read this note as the runs' price)");
    }
    Ok((
        key.to_string(),
        (!value.is_empty()).then(|| value.to_string()),
    ))
}

fn annotate(a: AnnotateArgs) -> Result<ExitCode> {
    let notes = a
        .notes
        .iter()
        .map(|w| note(w))
        .collect::<Result<Vec<_>>>()?;
    let (mut store, mut runs) = pick(&a.store, &a.runs)?;
    for r in &mut runs {
        for (k, v) in &notes {
            match v {
                Some(v) => r.annotations.insert(k.clone(), v.clone()),
                None => r.annotations.remove(k),
            };
        }
    }
    let n = store.rewrite(&runs)?;
    exec::out(&format!("annotated {n} run(s)\n"));
    Ok(ExitCode::SUCCESS)
}

/// A job file's text as a table cell: its job sections' names (`[global]` left out), the
/// first few and how many more (`seqread,randwrite4k +2`), or its line count when it has
/// no sections.
fn section_names(text: &str) -> String {
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix('[')?.strip_suffix(']'))
        .filter(|n| *n != "global")
        .collect();
    if names.is_empty() {
        return format!("({} lines)", text.lines().count());
    }
    let mut shown = String::new();
    let mut n = 0;
    for name in &names {
        if n > 0 && shown.len() + name.len() > 40 {
            break;
        }
        if n > 0 {
            shown.push(',');
        }
        shown.push_str(name);
        n += 1;
    }
    if n < names.len() {
        shown.push_str(&format!(" +{}", names.len() - n));
    }
    hostbench_core::secret::mask(&shown).into_owned()
}

#[cfg(test)]
mod tests {
    use super::section_names;

    /// A job file in `results list`: its jobs' names, the first few and how many more; a
    /// text without sections its line count.
    #[test]
    fn a_job_files_cell_names_its_jobs() {
        assert_eq!(
            section_names("[global]\nsize=1m\n[seqread]\nrw=read\n[randwrite4k]\nrw=randwrite\n"),
            "seqread,randwrite4k"
        );
        let many: String = (0..12)
            .map(|i| format!("[job-number-{i}]\nrw=read\n"))
            .collect();
        assert_eq!(
            section_names(&many),
            "job-number-0,job-number-1,job-number-2 +9"
        );
        assert_eq!(section_names("a\nb\n"), "(2 lines)");
    }
}
