//! The native grammar (clap): `hostbench run WORKLOAD --set k=v ...`, `list`, `timer`,
//! `sysinfo`, `results ...`, `compare`, `report`. It maps to the same [`Plan`] as the peer
//! grammars, so suites and later commands can build plans the same way.

use crate::exec;
use crate::present::sysbench::SysbenchOut;
use crate::present::{Plain, Presenter, Text};
use crate::results::ResultsArgs;
use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use hostbench_core::clock::Clock;
use hostbench_core::plan::Plan;
use hostbench_core::rand::Distribution;
use hostbench_core::units::parse_seconds;
use hostbench_core::workload::Workload;
use hostbench_workloads::{WORKLOADS, find};
use std::process::ExitCode;

/// hostbench: one binary for system benchmarks.
///
/// Besides the commands below, peer command lines run as written with the program name
/// swapped: `hostbench cpu --cpu-max-prime=20000 run` (sysbench grammar).
#[derive(Debug, Parser)]
#[command(
    name = "hostbench",
    version,
    about,
    long_about = None,
    disable_help_subcommand = true,
    after_help = after_help()
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Peer grammars, sysbench's general options and how saving works, for `hostbench --help`.
fn after_help() -> String {
    let mut general = String::from(
        "sysbench's general options, in every sysbench test (`hostbench cpu --help` explains each):\n",
    );
    let mut line = String::from(" ");
    for name in crate::sysbench::general_option_names() {
        if line.len() + 1 + name.len() > 100 {
            general.push_str(&line);
            general.push('\n');
            line = String::from(" ");
        }
        line.push(' ');
        line.push_str(&name);
    }
    general.push_str(&line);
    format!("{PEERS_HELP}\n\n{FLEET_HELP}\n\n{general}\n\n{SAVING_HELP}")
}

/// Peer grammars, for `hostbench --help`.
const PEERS_HELP: &str = "Peer command lines run as written, with the program name swapped:
  hostbench cpu|memory|threads|mutex [--option=value ...] run|help    (sysbench 1.0.20)
  hostbench fileio --file-total-size=8G ... prepare|run|cleanup        (sysbench fileio)
  hostbench fio --name=N --rw=randread --bs=4k ... | JOBFILE...        (fio 3.33)
  hostbench iozone -s 2g -r 4k -i 0 -i 1 [-t N] ...                    (IOzone)
  hostbench smallfiles --directory DIR [--files 1000] ...              (small-file check)
  hostbench stream [--array-size=N] [--ntimes=N] [--threads=N] ...    (STREAM)
  hostbench memlat [--max-size=SIZE] ...                               (load latency ladder)
  hostbench oltp_read_write --db-driver=pgsql ... prepare|run|cleanup   (sysbench OLTP scripts)
  hostbench insert-race --sessions N --rows N --db-url URL ...         (parallel INSERT race)
  hostbench ab [-n N] [-c C] [-t S] [-k] ... http://HOST[:PORT]/PATH   (ApacheBench 2.3)
  hostbench httperf --server HOST [--port P] [--rate R] ...           (httperf 0.9)
Each has its own help: `hostbench cpu help`, `hostbench stream --help`.";

/// Fleets, for `hostbench --help`.
const FLEET_HELP: &str =
    "Many hosts over ssh: hostbench fleet HOSTS|@FILE|-i INVENTORY:GROUP -- COMMAND...
  runs COMMAND (any line above) on every host, started together; results saved here
  (`hostbench fleet --help`).";

/// How saving works, for `hostbench --help`.
const SAVING_HELP: &str = "Every run is saved in the results store unless --no-save is given \
(or HOSTBENCH_NO_SAVE=1); --label NAME names what the run stands for; --results-db PATH|URL \
(or HOSTBENCH_RESULTS_DB) chooses the store (default: $XDG_DATA_HOME/hostbench/results.db). In \
the sysbench grammar: --label=NAME, --no-save, --results-db=PATH|URL, e.g. \
`hostbench cpu --label=graviton3 run`. See `hostbench results --help`.";

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one workload with hostbench's own options.
    Run(RunArgs),
    /// HTTP load against a URL (closed loop, open loop at -R, connection rate).
    Http(crate::http::HttpArgs),
    /// Run the built-in HTTP target server until Ctrl-C.
    Serve(crate::serve::ServeArgs),
    /// List every workload and its parameters.
    List(ListArgs),
    /// Measure what reading each clock costs on this machine.
    Timer(FormatArgs),
    /// Show the host fingerprint recorded with every result.
    Sysinfo(SysinfoArgs),
    /// Stored results: list, show, export, import, rm.
    Results(ResultsArgs),
    /// Compare runs side by side: labels, run ids or exported files; the first is the
    /// baseline.
    Compare(crate::compare::CompareArgs),
    /// Write one self-contained HTML report (host fingerprints, comparison, charts) of
    /// labels, run ids or exported files.
    Report(crate::compare::ReportArgs),
    /// Follow a label's or a host's headline figures over time, with the runs that step
    /// out of line marked (text, JSON, an HTML chart).
    Trend(crate::trend::TrendArgs),
    /// Run a suite (quick, standard, full, or FILE.toml) and print a summary table.
    Suite(crate::suite::SuiteArgs),
    /// Generate the man page or shell completions.
    Generate(crate::generate::GenerateArgs),
}

#[derive(Debug, Args)]
struct SysinfoArgs {
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = TextJson::Text)]
    format: TextJson,
    /// Also describe the storage under DIR: mount, file system and options, device, disk
    /// model, rotational flag, I/O scheduler (repeatable).
    #[arg(long, value_name = "DIR")]
    dir: Vec<std::path::PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OutFormat {
    Text,
    Json,
    Csv,
    /// sysbench 1.0.20's layout
    Sysbench,
}

#[derive(Debug, Args)]
struct RunArgs {
    /// Workload id (see `hostbench list`).
    workload: String,
    /// Set a workload parameter, NAME=VALUE (repeatable).
    #[arg(short = 's', long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Worker threads.
    #[arg(short, long, default_value_t = 1)]
    threads: usize,
    /// Time limit (10s, 500ms, 2m; 0 = none).
    #[arg(long, default_value = "10s", value_parser = seconds)]
    time: f64,
    /// Event limit across all threads (0 = none).
    #[arg(short = 'n', long, default_value_t = 0)]
    events: u64,
    /// Run this long before measuring (results discarded).
    #[arg(long, default_value = "0", value_parser = seconds)]
    warmup: f64,
    /// Open-loop target rate, events/s (0 = closed loop).
    #[arg(short = 'R', long, default_value_t = 0.0)]
    rate: f64,
    /// Print an interval report this often (0 = never).
    #[arg(short = 'i', long = "report-interval", default_value = "0", value_parser = seconds)]
    report_interval: f64,
    /// Percentiles to report, comma-separated.
    #[arg(
        short = 'p',
        long,
        default_value = "50,95,99,99.9",
        value_delimiter = ','
    )]
    percentile: Vec<f64>,
    /// Distribution of random choices.
    #[arg(long = "rand-type", default_value = "uniform")]
    rand_type: String,
    /// Seed of every random stream (0 = from the clock; the seed used is in the result).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutFormat::Text)]
    format: OutFormat,
    /// Only the report: no warnings on stderr.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    save: exec::SaveArgs,
}

#[derive(Debug, Args)]
struct ListArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct FormatArgs {
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = TextJson::Text)]
    format: TextJson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TextJson {
    Text,
    Json,
}

pub fn seconds(s: &str) -> Result<f64, String> {
    parse_seconds(s).map_err(|e| e.to_string())
}

/// Runs the native command line.
pub fn main(argv: &[String]) -> Result<ExitCode> {
    let cli = match Cli::try_parse_from(argv) {
        Ok(c) => c,
        Err(e) if e.kind() == clap::error::ErrorKind::InvalidSubcommand => {
            let word = argv.get(1).map(String::as_str).unwrap_or("");
            let tests: Vec<&str> = WORKLOADS.iter().filter_map(|w| w.sysbench_test()).collect();
            let peers: Vec<&str> = crate::PEERS.iter().map(|(n, _)| *n).collect();
            let cmd = <Cli as clap::CommandFactory>::command();
            let commands: Vec<&str> = cmd
                .get_subcommands()
                .filter(|c| !c.is_hide_set())
                .map(|c| c.get_name())
                .collect();
            let all = tests.iter().chain(&peers).chain(&commands).copied();
            bail!(
                "unknown test or command '{word}'{}. sysbench tests: {} (e.g. `hostbench cpu \
                 run`); peer tools: {}; hostbench commands: {} (see `hostbench --help`)",
                hostbench_core::suggest::did_you_mean(word, all),
                tests.join(", "),
                peers.join(", "),
                commands.join(", ")
            );
        }
        Err(e) => {
            // Rendered to text so that it goes through the masking printers: clap quotes
            // what was typed (`--pasword=...`).
            let text = e.render().to_string();
            if e.use_stderr() {
                let cmd = <Cli as clap::CommandFactory>::command();
                let help = crate::frontend::command_path(&cmd, argv.get(1..).unwrap_or_default());
                bail!("{}", crate::frontend::clap_error_line("", &help, &text));
            }
            // Help and version: clap's text of hostbench's own options.
            exec::out_help(&text);
            return Ok(ExitCode::SUCCESS);
        }
    };
    if matches!(
        cli.command,
        Command::List(_)
            | Command::Timer(_)
            | Command::Sysinfo(_)
            | Command::Results(_)
            | Command::Compare(_)
            | Command::Report(_)
            | Command::Trend(_)
            | Command::Generate(_)
    ) {
        crate::stop_at_once_on_signals();
    }
    match cli.command {
        Command::Run(a) => run(a, argv),
        Command::Http(a) => crate::http::run(a, argv),
        Command::Serve(a) => crate::serve::run(a),
        Command::List(a) => {
            exec::out(&list(a.json));
            Ok(ExitCode::SUCCESS)
        }
        Command::Timer(a) => {
            let r = hostbench_hostinfo::probe_timers(&Clock::detect());
            exec::out(&if a.format == TextJson::Json {
                serde_json::to_string_pretty(&r)? + "\n"
            } else {
                crate::info::timer_text(&r)
            });
            Ok(ExitCode::SUCCESS)
        }
        Command::Sysinfo(a) => {
            for d in &a.dir {
                std::fs::metadata(d).with_context(|| format!("--dir {}", d.display()))?;
            }
            let mut h = hostbench_hostinfo::collect();
            h.dirs = a
                .dir
                .iter()
                .map(|d| hostbench_hostinfo::dir_info(d))
                .collect();
            exec::out(&if a.format == TextJson::Json {
                serde_json::to_string_pretty(&h)? + "\n"
            } else {
                crate::info::sysinfo_text(&h, Some(&Clock::detect().info()))
            });
            Ok(ExitCode::SUCCESS)
        }
        Command::Results(a) => crate::results::main(a),
        Command::Compare(a) => crate::compare::compare(a),
        Command::Report(a) => crate::compare::report(a),
        Command::Trend(a) => crate::trend::main(a),
        Command::Suite(a) => crate::suite::main(a, argv),
        Command::Generate(a) => crate::generate::main(a, command()),
    }
}

fn run(a: RunArgs, argv: &[String]) -> Result<ExitCode> {
    let Some(w) = find(&a.workload) else {
        bail!(
            "unknown workload '{}'. Workloads: {}",
            a.workload,
            WORKLOADS
                .iter()
                .map(|w| w.id())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    let overrides = a
        .set
        .iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                .with_context(|| format!("--set {kv}: expected NAME=VALUE"))
        })
        .collect::<Result<Vec<_>>>()?;
    let params = w.resolve(&overrides)?;
    let mut plan = Plan::new(w.id(), params);
    plan.threads = a.threads;
    plan.time_s = a.time;
    plan.events = a.events;
    plan.warmup_s = a.warmup;
    plan.rate = a.rate;
    plan.report_interval_s = a.report_interval;
    plan.percentiles = a.percentile;
    plan.seed = a.seed;
    plan.rand =
        Distribution::from_name(&a.rand_type, 12, 1.0, 75.0, 0.2, 0.8).with_context(|| {
            format!(
                "--rand-type {}: use one of {}",
                a.rand_type,
                Distribution::NAMES.join(", ")
            )
        })?;
    plan.validate_as(&hostbench_core::plan::OptionNames::NATIVE)
        .map_err(anyhow::Error::msg)?;
    let saving = a.save.options()?;
    // -q silences the warnings, never the report: a text report keeps the verbosity it is
    // printed at (3); JSON and CSV print at any.
    let verbosity = if a.quiet && matches!(a.format, OutFormat::Json | OutFormat::Csv) {
        1
    } else {
        3
    };
    let text = match a.format {
        OutFormat::Text => Text::Native,
        OutFormat::Json => Text::Json,
        OutFormat::Csv => Text::Csv,
        OutFormat::Sysbench => {
            let mut output = SysbenchOut::default();
            output.verbosity = verbosity;
            output.quiet = a.quiet;
            output.seed_given = a.seed != 0;
            return execute(&plan, w, &output, &saving, argv, true);
        }
    };
    let output = Plain {
        verbosity,
        quiet: a.quiet,
        ..Plain::new(text)
    };
    execute(
        &plan,
        w,
        &output,
        &saving,
        argv,
        matches!(text, Text::Native),
    )
}

/// Runs the plan through exec; a Lua script's run (the `lua` workload) gets its report
/// hooks and `done()` around the output object (`text`: the output is text, where the
/// hooks may print), and its main state is closed afterwards.
fn execute(
    plan: &Plan,
    w: &'static dyn Workload,
    output: &dyn Presenter,
    saving: &exec::SaveOptions,
    argv: &[String],
    text: bool,
) -> Result<ExitCode> {
    #[cfg(feature = "lua")]
    if w.id() == "lua" {
        let hooks = crate::present::lua::LuaHooks {
            inner: output,
            hooks: text,
        };
        let code = exec::execute(plan, w, &hooks, saving, "native", argv).map(|(code, _)| code);
        hostbench_workloads::lua::script::unload();
        return code;
    }
    #[cfg(not(feature = "lua"))]
    let _ = text;
    exec::execute(plan, w, output, saving, "native", argv).map(|(code, _)| code)
}

/// The clap definition of the native command line (for the man page and completions).
/// True when `word` is one of hostbench's own subcommands (or an alias of one).
pub fn is_command(word: &str) -> bool {
    command()
        .get_subcommands()
        .any(|c| c.get_name() == word || c.get_all_aliases().any(|a| a == word))
        || matches!(word, "help")
}

pub fn command() -> clap::Command {
    use clap::CommandFactory;
    Cli::command()
}

/// `hostbench list`.
pub fn list(json: bool) -> String {
    if json {
        let v: Vec<serde_json::Value> = WORKLOADS
            .iter()
            .map(|w| {
                serde_json::json!({
                    "id": w.id(),
                    "category": w.category().name(),
                    "summary": w.summary(),
                    "sysbench_test": w.sysbench_test(),
                    "commands": w.commands(),
                    "shape": if w.caps().loop_worker { "loop" } else { "event" },
                    "params": w.params().iter().map(|p| serde_json::json!({
                        "name": p.name, "kind": p.kind_name(), "default": p.default,
                        "unit": p.unit, "help": p.help, "sysbench_option": p.sysbench.map(|s| format!("--{s}")),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        return serde_json::to_string_pretty(&v).unwrap_or_default() + "\n";
    }
    let mut s = String::new();
    for w in WORKLOADS {
        s.push_str(&format!(
            "{:<10} {:<7} {}\n",
            w.id(),
            w.category().name(),
            w.summary()
        ));
        if let Some(t) = w.sysbench_test() {
            s.push_str(&format!(
                "           sysbench: hostbench {t} [options] run\n"
            ));
        }
        for c in w.commands() {
            s.push_str(&format!(
                "           command:  hostbench {c} [options]  (see `hostbench {c} --help`)\n"
            ));
        }
        // One column for the help text per workload: NAME=DEFAULT padded to the longest.
        let width = w
            .params()
            .iter()
            .map(|p| p.name.len() + 1 + p.default.len())
            .max()
            .unwrap_or(0);
        for p in w.params() {
            let sb = p.sysbench.map(|s| format!("  (--{s})")).unwrap_or_default();
            let assign = format!("{}={}", p.name, p.default);
            s.push_str(&format!(
                "           --set {assign:<width$}  {} [{}]{sb}\n",
                p.help,
                p.kind_name()
            ));
        }
    }
    s
}

/// The table of workloads in Markdown (docs/workloads.md, `hostbench generate workloads`):
/// each workload, its category, the commands that run it and what one event is.
pub fn workloads_markdown() -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut s = String::from(
        "# Workloads\n\n\
         Generated from the registry (`crates/workloads/src/registry.rs`) by\n\
         `hostbench generate workloads > docs/workloads.md`; a test fails when the two differ.\n\
         `hostbench list` shows every parameter with its default, type and help.\n\n\
         | workload | category | run it with | one event |\n\
         |---|---|---|---|\n",
    );
    for w in WORKLOADS {
        let mut how = vec![format!("`hostbench run {}`", w.id())];
        if let Some(t) = w.sysbench_test() {
            how.push(format!("`hostbench {t} run` (sysbench)"));
        }
        how.extend(w.commands().iter().map(|c| format!("`hostbench {c}`")));
        s.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            w.id(),
            w.category().name(),
            how.join(", "),
            cell(w.summary())
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    /// Every command word a workload declares reaches a front-end (a peer grammar or a
    /// native subcommand) and `hostbench --help` names it; every peer grammar runs a
    /// registered workload.
    #[test]
    fn command_words_are_dispatched_and_named_in_the_help() {
        let cmd = Cli::command();
        let native: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
        for w in WORKLOADS {
            for c in w.commands() {
                let peer = crate::PEERS.iter().any(|(n, _)| n == c);
                assert!(
                    peer || native.contains(c),
                    "{}: command word '{c}' has no front-end (crate::PEERS)",
                    w.id()
                );
                assert!(
                    native.contains(c) || after_help().contains(&format!("hostbench {c} ")),
                    "{}: `hostbench --help` does not name '{c}'",
                    w.id()
                );
            }
        }
        for (n, _) in crate::PEERS {
            assert!(
                hostbench_workloads::by_command(n).is_some(),
                "peer grammar '{n}': no workload declares it (Workload::commands)"
            );
        }
    }

    /// The list comes from the registry: a row per workload, and under it a row per command
    /// word that runs it (it once named only stream, memlat and insert-race).
    #[test]
    fn list_shows_every_workload_with_its_commands() {
        let text = list(false);
        let mut blocks: Vec<Vec<&str>> = Vec::new();
        for l in text.lines() {
            if l.starts_with(' ') {
                blocks.last_mut().expect("a workload row first").push(l);
            } else {
                blocks.push(vec![l]);
            }
        }
        assert_eq!(blocks.len(), WORKLOADS.len(), "{text}");
        for (w, b) in WORKLOADS.iter().zip(&blocks) {
            assert!(b[0].starts_with(&format!("{} ", w.id())), "{b:?}");
            let commands: Vec<String> = b
                .iter()
                .filter_map(|l| l.trim_start().strip_prefix("command:  hostbench "))
                .map(|l| l.split(' ').next().unwrap_or_default().to_string())
                .collect();
            assert_eq!(commands, w.commands(), "{}: {b:?}", w.id());
        }
        for word in ["iozone", "smallfiles", "fio", "ab", "httperf"] {
            assert!(
                text.contains(&format!("command:  hostbench {word} [options]")),
                "{word}: {text}"
            );
        }
        let json: serde_json::Value = serde_json::from_str(&list(true)).unwrap();
        for (w, j) in WORKLOADS.iter().zip(json.as_array().unwrap()) {
            assert_eq!(j["id"], w.id());
            assert_eq!(j["commands"], serde_json::json!(w.commands()), "{}", w.id());
        }
    }
}
