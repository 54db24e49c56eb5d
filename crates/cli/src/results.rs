//! `hostbench results list|show|export|import|rm`: the results store from the command line.
//! Read-only commands never create a store; every change is one transaction. Bad input (an
//! unknown id, an unreadable file, a file that is not an export, a bad date) is an error
//! (exit 2) that says what to fix.

use crate::exec;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use hostbench_core::result::RunResult;
use hostbench_store::time::{Bound, now_ms, parse_bound};
use hostbench_store::{
    Filter, Location, RunSummary, Store, StoredRun, export_document, load_file, read_runs,
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
    /// Remove runs by id (or unambiguous id prefix), or every run with a label.
    Rm(RmArgs),
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
    /// Only this workload id, or every id of this family (`null` matches `null.loop`).
    #[arg(long, value_name = "ID")]
    workload: Option<String>,
    /// Only this host name, or host fingerprint (or its first 4+ hex digits).
    #[arg(long, value_name = "NAME|FINGERPRINT")]
    host: Option<String>,
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

impl FilterArgs {
    fn filter(&self) -> Result<Filter> {
        let now = now_ms();
        let bound = |v: &Option<String>, b, name| -> Result<Option<i64>> {
            v.as_deref()
                .map(|s| parse_bound(s, b, now).with_context(|| format!("--{name}")))
                .transpose()
        };
        Ok(Filter {
            label: self.label.clone(),
            workload: self.workload.clone(),
            host: self.host.clone(),
            since_ms: bound(&self.since, Bound::Since, "since")?,
            until_ms: bound(&self.until, Bound::Until, "until")?,
            limit: self.limit,
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
    #[arg(
        value_name = "ID",
        required_unless_present = "label",
        conflicts_with = "label"
    )]
    ids: Vec<String>,
    /// Remove every run with exactly this label.
    #[arg(long, value_name = "NAME")]
    label: Option<String>,
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
    }
}

fn list(a: ListArgs) -> Result<ExitCode> {
    let filter = a.filter.filter()?;
    let (loc, mut store) = existing(&a.store)?;
    let runs = match &mut store {
        Some(s) => s.list(&filter)?,
        None => Vec::new(),
    };
    if a.format == TextJson::Json {
        exec::out(&(serde_json::to_string_pretty(&runs)? + "\n"));
    } else if runs.is_empty() {
        eprintln!("no stored run matches (store: {loc})");
    } else {
        // HTTP runs all read `http.load`: their grammar and URL tell them apart (read from
        // the stored result; only for these rows).
        let mut targets = std::collections::HashMap::new();
        if let Some(s) = &mut store {
            for r in runs.iter().filter(|r| r.workload == HTTP_LOAD) {
                if let Some(t) = s.get(&r.id).ok().and_then(|run| http_target(&run.json)) {
                    targets.insert(r.id.clone(), t);
                }
            }
        }
        exec::out(&table(&runs, &targets));
    }
    Ok(ExitCode::SUCCESS)
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
/// `targets` adds to the workload of the runs it has (HTTP runs: grammar and URL).
fn table(runs: &[RunSummary], targets: &std::collections::HashMap<String, String>) -> String {
    let rows: Vec<[String; 6]> = runs
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
            [
                hostbench_core::input::printable(&r.id)
                    .chars()
                    .take(12)
                    .collect(),
                cell(r.started_at.get(..19).unwrap_or(&r.started_at), 19).replace('T', " "),
                r.label
                    .as_deref()
                    .map_or_else(|| "-".into(), |l| cell(l, 60)),
                match targets.get(&r.id) {
                    // The URL last: a masked `?password=***` ends the cell.
                    Some(t) => cell(&format!("{} {t}", r.workload), 80),
                    None => cell(&r.workload, 40),
                },
                r.hostname
                    .as_deref()
                    .map_or_else(|| "-".into(), |h| cell(h, 40)),
                head,
            ]
        })
        .collect();
    let header = ["ID", "STARTED (UTC)", "LABEL", "WORKLOAD", "HOST", "RESULT"];
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
    s.push_str(&hostbench_report::native::render(&r));
    for w in &r.warnings {
        let _ = writeln!(s, "warning: {}", w.message);
    }
    exec::out(&s);
    Ok(ExitCode::SUCCESS)
}

fn export(a: ExportArgs) -> Result<ExitCode> {
    let filter = a.filter.filter()?;
    let (loc, store) = existing(&a.store)?;
    let runs: Vec<StoredRun> = match store {
        Some(mut s) => s.load(&filter)?,
        None => Vec::new(),
    };
    if runs.is_empty() {
        eprintln!("no stored run matches (store: {loc}); the export is empty");
    }
    let doc = export_document(&runs);
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
    for f in &a.files {
        if f == "-" {
            runs.extend(read_runs(std::io::stdin().lock(), "stdin")?);
        } else {
            runs.extend(load_file(std::path::Path::new(f))?);
        }
    }
    let loc = location(&a.store)?;
    let rep = Store::open(&loc)?.import(&runs)?;
    for id in &rep.conflicts {
        eprintln!(
            "WARNING: run {id} is already stored with different content; the stored run was kept \
             (remove it with `hostbench results rm {id}` to replace it)"
        );
    }
    exec::out(&format!(
        "imported {} run(s) into {loc}; {} already stored{}\n",
        rep.added,
        rep.already_present,
        if rep.conflicts.is_empty() {
            String::new()
        } else {
            format!(", {} conflicting (kept)", rep.conflicts.len())
        }
    ));
    Ok(ExitCode::SUCCESS)
}

fn rm(a: RmArgs) -> Result<ExitCode> {
    let (loc, store) = existing(&a.store)?;
    let n = match (store, &a.label) {
        (Some(mut s), Some(l)) => s.remove_label(l)?,
        (Some(mut s), None) => s.remove(&a.ids)?,
        (None, Some(_)) => 0,
        (None, None) => bail!(
            "no stored run has the id '{}': there is no results store at {loc} yet",
            a.ids.first().map(String::as_str).unwrap_or_default()
        ),
    };
    exec::out(&format!("removed {n} run(s) from {loc}\n"));
    Ok(ExitCode::SUCCESS)
}
