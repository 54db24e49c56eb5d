//! The sysbench front-end: `hostbench [options] <test> <command> [options]`, sysbench 1.0.20's
//! grammar (options anywhere, `--name=value`, dashes and underscores alike, bare booleans,
//! K/M/G/T sizes, `--config-file`, the deprecated 0.4/1.0 aliases with a warning), turned
//! into a [`Plan`] and output settings. Test options come from each workload's parameter
//! table (`ParamSpec::sysbench`), so a new workload needs no change here.

use crate::exec::SaveOptions;
use crate::present::sysbench::{SysbenchFormat, SysbenchOut};
use anyhow::{Context, Result, bail};
use hostbench_core::params::{ParamKind, Params};
use hostbench_core::plan::Plan;
use hostbench_core::rand::Distribution;
use hostbench_core::units::{parse_bool, parse_seconds};
use hostbench_core::workload::Workload;
use hostbench_workloads::{WORKLOADS, by_sysbench_test};

/// What the command line asked for.
pub enum Invocation {
    /// Run a plan, print and save its result.
    Run(Box<Plan>, SysbenchOut, SaveOptions),
    /// Print text (help) and exit 0.
    Print(String),
    /// `prepare` or `cleanup`: run the workload's stage with the plan's parameters and threads.
    Stage(hostbench_core::workload::Stage, Box<Plan>, SysbenchOut),
    /// The OLTP tests' `prewarm` command (1.1.0's `warmup`).
    Prewarm(Box<Plan>, SysbenchOut),
    /// A Lua script and its command (none: load it only), run by `crate::lua`.
    #[cfg_attr(not(feature = "lua"), allow(dead_code))]
    Lua(Box<Plan>, SysbenchOut, SaveOptions, Option<String>),
}

/// General options sysbench knows, with their kind (for help and validation).
const GENERAL: &[(&str, &str, &str)] = &[
    ("threads", "N", "number of threads to use [1]"),
    ("events", "N", "limit for total number of events [0]"),
    (
        "time",
        "N",
        "limit for total execution time in seconds [10]",
    ),
    (
        "warmup_time",
        "N",
        "execute events for this many seconds with statistics disabled before the actual benchmark run [0]",
    ),
    (
        "forced_shutdown",
        "STRING",
        "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable [off]",
    ),
    (
        "thread_stack_size",
        "SIZE",
        "size of stack per thread [64K] (accepted; hostbench uses the platform default)",
    ),
    (
        "thread_init_timeout",
        "N",
        "wait time in seconds for worker threads to initialize [30] (accepted; not needed)",
    ),
    (
        "rate",
        "N",
        "average transactions rate. 0 for unlimited rate [0]",
    ),
    (
        "report_interval",
        "N",
        "periodically report intermediate statistics with a specified interval in seconds (fractions allowed). 0 disables [0]",
    ),
    (
        "report_checkpoints",
        "[LIST,...]",
        "dump full statistics and reset all counters at specified points in time (seconds since the start) []",
    ),
    ("debug", "[=on|off]", "print more debugging info [off]"),
    (
        "validate",
        "[=on|off]",
        "perform validation checks where possible [off]",
    ),
    ("help", "[=on|off]", "print help and exit [off]"),
    ("version", "[=on|off]", "print version and exit [off]"),
    (
        "config_file",
        "FILENAME",
        "file containing command line options",
    ),
    (
        "luajit_cmd",
        "STRING",
        "accepted for compatibility; hostbench has no LuaJIT",
    ),
    (
        "percentile",
        "LIST",
        "percentiles to calculate in latency statistics (0-100), comma-separated; 0 disables [95]",
    ),
    (
        "histogram",
        "[=on|off]",
        "print latency histogram in report [off]",
    ),
    (
        "verbosity",
        "N",
        "verbosity level {5 - debug, 0 - only critical messages} [3]",
    ),
    (
        "rand_type",
        "STRING",
        "random numbers distribution {uniform, gaussian, special, pareto, zipfian} [special]",
    ),
    (
        "rand_seed",
        "N",
        "seed for random number generator. 0 = use the current time [0]",
    ),
    (
        "rand_spec_iter",
        "N",
        "number of iterations for the special/gaussian distributions [12]",
    ),
    (
        "rand_spec_pct",
        "N",
        "percentage of values treated as 'special' [1]",
    ),
    (
        "rand_spec_res",
        "N",
        "percentage of 'special' values to use [75]",
    ),
    (
        "rand_pareto_h",
        "N",
        "parameter h for pareto distribution [0.2]",
    ),
    (
        "rand_zipfian_exp",
        "N",
        "shape parameter (exponent, theta) for the Zipfian distribution [0.8]",
    ),
    (
        "format",
        "STRING",
        "hostbench: output format {text, json, csv} [text]",
    ),
    (
        "lua",
        "[=on|off]",
        "hostbench: run a bundled test (oltp_read_write, ...) through its Lua script instead of natively [off]",
    ),
    (
        "label",
        "NAME",
        "hostbench: name what this run stands for (machine, instance type, variant); stored with the result []",
    ),
    (
        "no_save",
        "[=on|off]",
        "hostbench: do not save the result in the results store [off]",
    ),
    (
        "results_db",
        "PATH|URL",
        "hostbench: results store, an SQLite file or a postgres:// URL [$HOSTBENCH_RESULTS_DB or ~/.local/share/hostbench/results.db]",
    ),
];

/// Options hostbench adds to sysbench's grammar (for suggestions; handled in `parse`).
const HOSTBENCH_OPTIONS: &[&str] = &["format", "label", "no_save", "results_db", "lua"];

/// The default `--forced-shutdown` of a Lua script's run (sysbench's is off): seconds
/// after the time limit before the run ends without the events still running.
pub const LUA_FORCED_SHUTDOWN_S: f64 = 5.0;

/// Deprecated names and what replaced them.
const DEPRECATED: &[(&str, &str)] = &[
    ("num_threads", "threads"),
    ("max_requests", "events"),
    ("max_time", "time"),
    ("tx_rate", "rate"),
];

/// Test names sysbench has that hostbench does not run yet, with a pointer.
const NOT_YET: &[&str] = &[];

/// The workload a test word names, by name only (`oltp_read_write`, `cpu`).
fn lookup(word: &str) -> Option<&'static dyn Workload> {
    by_sysbench_test(word)
}

/// SHA-256 of sysbench 1.0.20's bundled test scripts, with the test each one is: upstream's
/// files (tag 1.0.20, `src/lua/`) and Debian's (`/usr/share/sysbench/`, package
/// 1.0.20+ds, whose only change is the `#!` line). Only the hashes are kept, never the
/// scripts. `oltp_common.lua` is a module, not a test.
const BUNDLED_SCRIPTS: &[(&str, &str)] = &[
    // upstream 1.0.20
    (
        "b183f7a112ce78e7d6f5d1c151c0192f83318593db8a51122f2e93e344b7cee6",
        "bulk_insert",
    ),
    (
        "c6a7fb30e997fdcd41ded5715e0ec4ed74022660975017c774a7a510c3398ef3",
        "oltp_delete",
    ),
    (
        "2f7f740ef7281b0ce77236d979ff67e16580b6de5082dd711d6a91560ccdbdb3",
        "oltp_insert",
    ),
    (
        "ffd9a921aac15b2e7031502e39d83b9d155190bde3e537fe66a3b7bb36dfd737",
        "oltp_point_select",
    ),
    (
        "fceacbc1f33fed843dd6e266d3459814d1bf4301f27c7ab89da0407942c8e380",
        "oltp_read_only",
    ),
    (
        "09620dd1aa3168444b9cb738e3ab0c049ecff1aa003ffba6e416f7ae59254ae4",
        "oltp_read_write",
    ),
    (
        "49ede5944e74c083c65acfdd551709d2f9aab45310887b7ec0f368af61f931bf",
        "oltp_update_index",
    ),
    (
        "8711cd26a0dbc7214322afef62f9cf31be8763ea57e9a082cfe996496d13a8cd",
        "oltp_update_non_index",
    ),
    (
        "8adb32e1833e712494db101f6f6f90448d0465535b9769b0f86d2ba596bb2c71",
        "oltp_write_only",
    ),
    (
        "c84d035191a8c895f31b9d6e92089105041aa6a1cf21f3dec07aca8c15d62306",
        "select_random_points",
    ),
    (
        "aba6f88f3fe18a24a9ff2926e0fd535164f3b22866e96db32b7d6319bd288593",
        "select_random_ranges",
    ),
    // Debian 1.0.20+ds
    (
        "90ef17c63b8f959fa85f7c459b106b26d44d7f1686bfff467837a4c41d0a84de",
        "bulk_insert",
    ),
    (
        "11dc20862684615384145641e0114c1ea76b80d7c9ba8c755e0fd9ad0fe62711",
        "oltp_delete",
    ),
    (
        "46d250ef3be841b1a349b23e6390d6f7adfb2435a239802ef4ceed9873d1cd68",
        "oltp_insert",
    ),
    (
        "5002f6d702e1099fff451cfba06b03b77fc6a3110144c9a1102bfdb5de14b83d",
        "oltp_point_select",
    ),
    (
        "25eeb32f5877c254c7fceb5f0bc23a2da9ed708a9f07df5b95f0a9fdfe4817eb",
        "oltp_read_only",
    ),
    (
        "d3d68413ecce348242308cf693d5db7a320292e1def93ecc9cb080b2b4f32b45",
        "oltp_read_write",
    ),
    (
        "b79f401177f44f02dacf88175327e5bfd9410c54c75faf347b9458ae638fd21a",
        "oltp_update_index",
    ),
    (
        "5c6c923cc000bb6d4a535dd2dafbd3c4da2003c411ad8e585f146be4d713b984",
        "oltp_update_non_index",
    ),
    (
        "fcb462e264097d93c1d8cd0f7b55151c42261a5ab84ce553e41d6bd8bec8d690",
        "oltp_write_only",
    ),
    (
        "028832d7ce71e1bd615eaa61149ef1652d828ccfe2dec8d5c39fe35075f06c54",
        "select_random_points",
    ),
    (
        "be269a98a901e1305e69653c5fc977299a97487e5ef673051bcacee3c16dfaa0",
        "select_random_ranges",
    ),
];

/// The largest bundled script is 2.4 KB; anything much larger is not one of them.
const SCRIPT_READ_LIMIT: u64 = 64 * 1024;

/// The test a script's content is, when it is one of sysbench 1.0.20's bundled scripts.
fn bundled_test(content: &[u8]) -> Option<&'static str> {
    use sha2::{Digest, Sha256};
    let hex: String = Sha256::digest(content)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    BUNDLED_SCRIPTS
        .iter()
        .find(|(h, _)| *h == hex)
        .map(|(_, t)| *t)
}

/// What a test word names.
enum Target {
    /// A workload hostbench runs natively (a sysbench test, or a bundled script recognised
    /// by its content).
    Native(&'static dyn Workload),
    /// A Lua script: the file found, and the name as given.
    #[cfg(feature = "lua")]
    Lua(String),
}

/// The test a test word names: a sysbench test name, or a Lua script (a path, or a name on
/// sysbench's module path). A script runs natively when its content is one of sysbench
/// 1.0.20's bundled scripts (its name does not matter) unless `lua` (`--lua`) asks for Lua;
/// every other script runs through Lua.
fn resolve_test(word: &str, lua: bool) -> Result<Target> {
    if let Some(w) = lookup(word) {
        #[cfg(feature = "lua")]
        if lua && w.sysbench_test().is_some() {
            use hostbench_workloads::lua::find;
            return match find::find_script(word, &find::package_path()) {
                Some(p) => Ok(Target::Lua(p.display().to_string())),
                None => bail!(
                    "--lua: cannot find the script of '{word}' on the Lua module path ({}); give its path instead",
                    find::package_path()
                ),
            };
        }
        return Ok(Target::Native(w));
    }
    #[cfg(feature = "lua")]
    {
        use hostbench_workloads::lua::find;
        let found = find::find_script(word, &find::package_path());
        if let Some(path) = found {
            if !lua && let Some(w) = native_bundled(&path) {
                return Ok(Target::Native(w));
            }
            return Ok(Target::Lua(path.display().to_string()));
        }
        if word.ends_with(".lua") || word.contains('/') {
            bail!("Cannot find benchmark '{word}': no such built-in test, file or module");
        }
    }
    let _ = lua;
    if !word.ends_with(".lua") {
        bail!(
            "unknown test '{word}'{}. Tests: {}",
            hostbench_core::suggest::did_you_mean(word, sysbench_names()),
            sysbench_names().join(", ")
        );
    }
    let content = read_script(word)?;
    match bundled_test(&content).and_then(lookup) {
        Some(w) => Ok(Target::Native(w)),
        None => bail!(
            "'{word}' is not one of sysbench 1.0.20's bundled scripts, and this hostbench was built without Lua (the `lua` feature)"
        ),
    }
}

fn read_script(word: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let read = || -> std::io::Result<Vec<u8>> {
        let f = std::fs::File::open(word)?;
        if f.metadata()?.is_dir() {
            return Err(std::io::Error::other("it is a directory"));
        }
        let mut buf = Vec::new();
        f.take(SCRIPT_READ_LIMIT + 1).read_to_end(&mut buf)?;
        Ok(buf)
    };
    read().with_context(|| format!("cannot read the script '{word}'"))
}

/// The native workload a script file is, when its content is a bundled script's.
#[cfg(feature = "lua")]
fn native_bundled(path: &std::path::Path) -> Option<&'static dyn Workload> {
    let content = read_script(path.to_str()?).ok()?;
    bundled_test(&content).and_then(lookup)
}

/// True when `args` look like a sysbench command line: the first word is a sysbench test
/// name (or a Lua script: a `.lua` file, or a name sysbench would load as a module, such as
/// `tpcc` beside `./tpcc.lua`), or `--test=` is given. hostbench's own commands (`run`,
/// `suite`, `results`, ...) keep their names: a module of that name is not claimed.
pub fn claims(args: &[String]) -> bool {
    if args.iter().any(|a| a.starts_with("--test=")) {
        return true;
    }
    match args.iter().find(|a| !a.starts_with('-')) {
        Some(w) => {
            lookup(w).is_some()
                || NOT_YET.contains(&w.as_str())
                || w.ends_with(".lua")
                || (!crate::native::is_command(w) && lua_module(w))
        }
        None => false,
    }
}

/// True when `word` names a Lua script as sysbench finds one: a file of that name without
/// an extension, or a module on its search path (`./NAME.lua`, `./sub/NAME.lua` for
/// `sub/NAME`, `LUA_PATH`, /usr/share/sysbench).
fn lua_module(word: &str) -> bool {
    #[cfg(feature = "lua")]
    {
        use hostbench_workloads::lua::find;
        let plain = !word.is_empty()
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
        // A file with another extension (`my.toml`, `r.json`) is not taken for a script:
        // it is likelier a mistyped command than Lua.
        let file_name = word.rsplit('/').next().unwrap_or(word);
        plain
            && (find::find_module(word, &find::package_path()).is_some()
                || (!file_name.contains('.') && find::find_script(word, "").is_some()))
    }
    #[cfg(not(feature = "lua"))]
    {
        let _ = word;
        false
    }
}

struct Opt {
    name: String,
    value: Option<String>,
    shown: String,
}

impl Opt {
    /// The option as typed, without its value: what "invalid option" errors quote, so that
    /// a mistyped password option (`--pgsql-pasword=...`) does not echo the password.
    fn typed_name(&self) -> &str {
        self.shown.split('=').next().unwrap_or(&self.shown)
    }
}

fn split_opt(arg: &str) -> Option<Opt> {
    let body = arg.strip_prefix("--")?;
    let (n, v) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (body, None),
    };
    Some(Opt {
        name: n.replace('-', "_"),
        value: v,
        shown: arg.to_string(),
    })
}

fn read_config(path: &str) -> Result<Vec<String>> {
    use hostbench_core::input;
    let text = input::read_text(
        std::path::Path::new(path),
        "--config-file",
        input::CONFIG_FILE_MAX,
    )?;
    crate::config_file::parse(&text, path).map_err(anyhow::Error::msg)
}

fn want_value<'a>(o: &'a Opt, what: &str) -> Result<&'a str> {
    o.value
        .as_deref()
        .with_context(|| format!("{} needs a value: {}=<{what}>", o.shown, o.shown))
}

fn flag(o: &Opt) -> Result<bool> {
    match &o.value {
        None => Ok(true),
        Some(v) => parse_bool(v).map_err(|e| anyhow::anyhow!("invalid value for {}: {e}", o.shown)),
    }
}

fn int(o: &Opt) -> Result<u64> {
    let v = want_value(o, "N")?;
    let name = o.shown.split('=').next().unwrap_or(&o.shown);
    hostbench_core::units::parse_count(v).map_err(|e| {
        if e.problem.starts_with("is too large") {
            anyhow::anyhow!("invalid value for {name}: {e}")
        } else {
            anyhow::anyhow!(
                "invalid value for {name}: '{v}' is not a whole number (write digits, e.g. {name}=4)"
            )
        }
    })
}

fn float(o: &Opt) -> Result<f64> {
    let v = want_value(o, "N")?;
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .with_context(|| format!("invalid value for {}: '{v}' is not a number ≥ 0", o.shown))
}

fn seconds(o: &Opt) -> Result<f64> {
    let v = want_value(o, "seconds")?;
    parse_seconds(v).map_err(|e| anyhow::anyhow!("invalid value for {}: {e}", o.shown))
}

fn test_help(w: &dyn Workload) -> String {
    let mut s = format!("{} options:\n", w.sysbench_test().unwrap_or(w.id()));
    let rows: Vec<(String, String)> = w
        .params()
        .iter()
        .filter(|p| p.sysbench.is_some())
        .map(|p| param_row(p.sysbench.unwrap_or(p.name), p))
        .collect();
    // sysbench pads the option column to the longest option of the test, plus one space.
    push_rows(&mut s, &rows);
    s
}

/// The general options' names as sysbench spells them (`--threads=N`), for `hostbench
/// --help`.
pub fn general_option_names() -> Vec<String> {
    GENERAL
        .iter()
        .filter(|(n, _, _)| !matches!(*n, "help" | "version"))
        .map(|(n, arg, _)| option_form(n, arg))
        .collect()
}

/// A general option as sysbench's help writes it: `--threads=N`, `--debug[=on|off]`,
/// `--report-checkpoints=[LIST,...]`.
fn option_form(name: &str, arg: &str) -> String {
    let name = name.replace('_', "-");
    if arg.starts_with("[=") {
        format!("--{name}{arg}")
    } else {
        format!("--{name}={arg}")
    }
}

/// The groups `--help` prints the general options in, in sysbench's order, by name (each
/// name once, from [`GENERAL`]); the database groups come from the database workloads'
/// parameter table. An empty title continues the group before it after a blank line, as
/// sysbench prints `--percentile` and `--histogram` under "Log options".
const HELP_GROUPS: &[(&str, &[&str])] = &[
    (
        "General options",
        &[
            "threads",
            "events",
            "time",
            "warmup_time",
            "forced_shutdown",
            "thread_stack_size",
            "thread_init_timeout",
            "rate",
            "report_interval",
            "report_checkpoints",
            "debug",
            "validate",
            "help",
            "version",
            "config_file",
            "luajit_cmd",
        ],
    ),
    (
        "Pseudo-Random Numbers Generator options",
        &[
            "rand_type",
            "rand_spec_iter",
            "rand_spec_pct",
            "rand_spec_res",
            "rand_seed",
            "rand_pareto_h",
            "rand_zipfian_exp",
        ],
    ),
    ("Log options", &["verbosity"]),
    ("", &["percentile", "histogram"]),
    (
        "hostbench options",
        &["format", "label", "no_save", "results_db"],
    ),
];

/// Option rows padded as sysbench pads them: to the group's longest option, plus one space.
fn push_rows(s: &mut String, rows: &[(String, String)]) {
    let width = rows.iter().map(|(o, _)| o.len()).max().unwrap_or(0);
    for (opt, h) in rows {
        s.push_str(&format!("  {opt:<width$} {h}\n"));
    }
}

/// The database options every database test takes (`--db-driver`, `--mysql-host`, ...), as
/// sysbench's `--help` groups them: general, then one group per driver. They are read from
/// a database workload's parameter table, so they are defined once.
fn database_help() -> String {
    let Some(w) = WORKLOADS
        .iter()
        .find(|w| w.params().iter().any(|p| p.name == "db_driver"))
    else {
        return String::new();
    };
    let params = w.params();
    let rows = |prefix: &str| -> Vec<(String, String)> {
        params
            .iter()
            .filter(|p| p.name.starts_with(prefix))
            .map(|p| param_row(p.sysbench.unwrap_or(p.name), p))
            .collect()
    };
    let mut s = String::from("General database options:\n\n");
    push_rows(&mut s, &rows("db_"));
    s.push_str(
        "\n\nCompiled-in database drivers:\n  sqlite - SQLite driver (embedded; hostbench's default)\n  mysql - MySQL driver (MariaDB and MySQL)\n  pgsql - PostgreSQL driver\n",
    );
    for (driver, prefix) in [
        ("sqlite", "sqlite_"),
        ("mysql", "mysql_"),
        ("pgsql", "pgsql_"),
    ] {
        s.push_str(&format!("\n{driver} options:\n"));
        push_rows(&mut s, &rows(prefix));
    }
    s
}

/// One test option as sysbench's help writes it (`--table-size=N`, the name as the test
/// declares it), with its help, choices and default.
fn param_row(name: &str, p: &hostbench_core::params::ParamSpec) -> (String, String) {
    let (arg, choices) = match p.kind {
        ParamKind::Bool => ("[=on|off]", String::new()),
        ParamKind::Size => ("=SIZE", String::new()),
        ParamKind::Choice(c) => ("=STRING", format!(" {{{}}}", c.join(", "))),
        ParamKind::Text => ("=STRING", String::new()),
        _ => ("=N", String::new()),
    };
    (
        format!("--{name}{arg}"),
        format!("{}{choices} [{}]", p.help, p.default),
    )
}

/// Full `hostbench <test> help`-less usage (sysbench's `--help`): the general options in
/// sysbench's groups, the database options, the compiled-in tests.
pub fn usage() -> String {
    let mut s = String::from(
        "Usage:\n  hostbench [options]... [testname] [command]\n\nCommands implemented by most tests: prepare run cleanup help\n",
    );
    for (title, names) in HELP_GROUPS {
        let mut rows: Vec<(String, String)> = names
            .iter()
            .filter_map(|n| GENERAL.iter().find(|(g, _, _)| g == n))
            .map(|(n, arg, h)| (option_form(n, arg), h.to_string()))
            .collect();
        if *title == "General options" {
            // sysbench lists its deprecated aliases at the end of the general options.
            rows.extend(DEPRECATED.iter().filter_map(|(old, new)| {
                let (_, arg, h) = GENERAL.iter().find(|(g, _, _)| g == new)?;
                let default = h.rsplit_once(" [").map_or("]", |(_, d)| d);
                Some((
                    option_form(old, arg),
                    format!(
                        "deprecated alias for --{} [{default}",
                        new.replace('_', "-")
                    ),
                ))
            }));
        }
        if title.is_empty() {
            s.push('\n');
        } else {
            s.push_str(&format!("\n{title}:\n"));
        }
        push_rows(&mut s, &rows);
    }
    s.push('\n');
    s.push_str(&database_help());
    s.push_str("\nCompiled-in tests:\n");
    for w in WORKLOADS.iter().filter(|w| w.sysbench_test().is_some()) {
        s.push_str(&format!(
            "  {:<10} - {}\n",
            w.sysbench_test().unwrap_or_default(),
            w.summary()
        ));
    }
    s.push_str("\nSee 'hostbench <testname> help' for a list of options for each test.\n");
    s
}

/// sysbench's command words (`prewarm` is the OLTP scripts' own, `warmup` its 1.1.0 name).
const COMMANDS: [&str; 6] = ["run", "prepare", "cleanup", "help", "prewarm", "warmup"];

/// Parses a sysbench command line (without the program name).
pub fn parse(args: &[String], warn: &mut Vec<String>) -> Result<Invocation> {
    // Expand --config-file first; the command line wins over the file.
    let mut expanded: Vec<String> = Vec::new();
    for a in args {
        if let Some(o) = split_opt(a)
            && o.name == "config_file"
        {
            expanded.extend(read_config(want_value(&o, "FILE")?)?);
            continue;
        }
    }
    // `-h` is `--help` (sysbench itself knows only the long form).
    expanded.extend(args.iter().map(|a| {
        if a == "-h" {
            "--help".to_string()
        } else {
            a.clone()
        }
    }));

    let mut words: Vec<String> = Vec::new();
    let mut opts: Vec<Opt> = Vec::new();
    let mut prev: Option<&str> = None;
    for a in &expanded {
        let after = prev.take();
        if a.starts_with("--") {
            let mut o = split_opt(a).expect("starts with --");
            if let Some((_, new)) = DEPRECATED.iter().find(|(old, _)| *old == o.name) {
                // sysbench 1.0 applies an alias only when it differs from the old default,
                // so `--threads=2 --num-threads=1` keeps 2 threads.
                let inert = if o.name == "num_threads" { "1" } else { "0" };
                if o.value.as_deref() == Some(inert) {
                    continue;
                }
                warn.push(format!(
                    "--{} is deprecated, use --{} instead",
                    o.name.replace('_', "-"),
                    new.replace('_', "-")
                ));
                o.name = new.to_string();
            }
            if o.name == "test" {
                warn.push("the --test option is deprecated. You can pass a script name or path on the command line without any options.".into());
                words.insert(0, want_value(&o, "TEST")?.to_string());
                continue;
            }
            if o.value.is_none() {
                prev = Some(a.as_str());
            }
            opts.push(o);
        } else if a.starts_with('-') && a.len() > 1 {
            bail!("invalid option: {a} (sysbench options are written --name=value)");
        } else {
            let is_word = COMMANDS.contains(&a.as_str())
                || lookup(a).is_some()
                || a.ends_with(".lua")
                || NOT_YET.contains(&a.as_str())
                || (words.is_empty() && lua_module(a));
            if let (Some(opt), false) = (after, is_word) {
                // `--no-save ru`: a mistyped command word is likelier than a value for a
                // flag written without '='.
                if let Some(c) = hostbench_core::suggest::closest(a, COMMANDS) {
                    bail!(
                        "'{a}' after {opt} is not a test or command (did you mean {c}?); commands: {}",
                        COMMANDS.join(", ")
                    );
                }
                // The word after a password option is the password: never echo it.
                if hostbench_core::secret::is_secret_name(opt) {
                    bail!(
                        "the word after {opt} is not a test or command: sysbench options take their value after '=' (write {opt}=PASSWORD)"
                    );
                }
                bail!(
                    "'{a}' after {opt} is not a test or command: sysbench options take their value after '=' (did you mean {opt}={a}?)"
                );
            }
            words.push(a.clone());
        }
    }
    // `--help` and `--version` are sysbench's booleans: `--help=off` does not print.
    let on = |name: &str| -> Result<bool> {
        let mut on = false;
        for o in opts.iter().filter(|o| o.name == name) {
            on = flag(o)?;
        }
        Ok(on)
    };
    if on("version")? {
        return Ok(Invocation::Print(format!(
            "hostbench {} (sysbench 1.0.20 compatible)\n",
            env!("CARGO_PKG_VERSION")
        )));
    }
    let test = match words.first() {
        Some(t) => t.clone(),
        None => return Ok(Invocation::Print(usage())),
    };
    // `TEST --help` (and `-h`) is sysbench's `--help`, its general options, followed here by
    // the test's own (`TEST help`).
    let full_help = on("help")?;
    if full_help {
        words.truncate(1);
        words.push("help".into());
    }
    let lua_flag = match opts.iter().rev().find(|o| o.name == "lua") {
        Some(o) => flag(o)?,
        None => false,
    };
    let target = match NOT_YET.contains(&test.as_str()) {
        true => bail!(
            "the sysbench '{test}' test is not in this version of hostbench yet; `hostbench list` shows what is"
        ),
        false => resolve_test(&test, lua_flag)?,
    };
    #[cfg(feature = "lua")]
    let lua_script = match &target {
        Target::Lua(p) => Some(p.clone()),
        Target::Native(_) => None,
    };
    #[cfg(not(feature = "lua"))]
    let lua_script: Option<String> = None;
    let workload = match target {
        Target::Native(w) => w,
        #[cfg(feature = "lua")]
        Target::Lua(_) => hostbench_workloads::find("lua").context("the lua workload")?,
    };
    if lua_script.is_some() {
        if let Some(extra) = words.get(2) {
            bail!("Unrecognized command line argument: {extra}");
        }
        if full_help {
            words.truncate(1);
            words.push("help".into());
        }
    }
    let command = match words.get(1) {
        Some(_) if lua_script.is_some() => "run",
        None if lua_script.is_some() => "run",
        Some(c) => c.as_str(),
        None => {
            // Which words the test takes: run for all, prepare/cleanup for those with files
            // or tables (sysbench's message names none).
            let words = if workload.caps().stages {
                "`run` (or `prepare`/`cleanup`)"
            } else {
                "`run`"
            };
            bail!(
                "the '{test}' test requires a command argument: add {words} after the options, \
                 e.g. `hostbench {test} [options] run`. See 'hostbench {test} help'"
            )
        }
    };
    if let Some(extra) = words.get(2) {
        bail!("unexpected word '{extra}' after '{test} {command}'");
    }
    use hostbench_core::workload::Stage;
    let has_prewarm = workload.id().starts_with("db.")
        && !matches!(workload.id(), "db.bulk_insert" | "db.insert_race");
    let mut prewarm = false;
    let stage = match command {
        "run" => None,
        "help" if full_help => {
            return Ok(Invocation::Print(format!(
                "{}\n{}",
                usage(),
                test_help(workload)
            )));
        }
        "help" => return Ok(Invocation::Print(test_help(workload))),
        "prepare" => Some(Stage::Prepare),
        "cleanup" => Some(Stage::Cleanup),
        "prewarm" | "warmup" if has_prewarm => {
            prewarm = true;
            None
        }
        "prewarm" | "warmup" => bail!(
            "the '{test}' test has no '{command}' command (the OLTP tests have it, except bulk_insert): use run, help, prepare or cleanup"
        ),
        other => bail!(
            "unknown command '{other}' for the '{test}' test{}: use run, help, prepare or cleanup",
            hostbench_core::suggest::did_you_mean(other, COMMANDS)
        ),
    };

    let mut plan = Plan::new(workload.id(), Params::default());
    let mut out = SysbenchOut::default();
    // A script's options: every option as typed (its `sysbench.opt`), the undeclared ones
    // checked by the script's declarations later.
    let mut script_opts: Vec<(String, Option<String>)> = Vec::new();
    let mut overrides: Vec<(String, String)> = Vec::new();
    let (mut iter, mut pct, mut res, mut h, mut zexp) = (12u32, 1.0, 75.0, 0.2, 0.8);
    let mut rand_type = "special".to_string();
    let mut forced: Option<String> = None;
    let (mut label, mut no_save, mut results_db) = (None, false, None);
    for o in &opts {
        if lua_script.is_some()
            && !HOSTBENCH_OPTIONS.contains(&o.name.as_str())
            && o.name != "config_file"
        {
            script_opts.push((o.name.clone(), o.value.clone()));
        }
        match o.name.as_str() {
            "threads" => {
                let n = int(o)?;
                if n == 0 {
                    bail!(
                        "invalid value for {}: the number of threads must be at least 1",
                        o.shown
                    );
                }
                plan.threads = n as usize;
            }
            // Turned off (`--help=off`, `--version=off`): read above, nothing to do.
            "help" | "version" => {}
            "events" => plan.events = int(o)?,
            "time" => plan.time_s = seconds(o)?,
            "warmup_time" => plan.warmup_s = seconds(o)?,
            "rate" => plan.rate = float(o)?,
            "report_interval" => plan.report_interval_s = seconds(o)?,
            "report_checkpoints" => {
                plan.report_checkpoints = want_value(o, "LIST")?
                    .split(',')
                    .filter(|s| !s.trim().is_empty())
                    .map(|s| {
                        parse_seconds(s)
                            .map_err(|e| anyhow::anyhow!("invalid value for {}: {e}", o.shown))
                    })
                    .collect::<Result<_>>()?;
            }
            "percentile" => {
                plan.percentiles = want_value(o, "LIST")?
                    .split(',')
                    .map(|s| {
                        s.trim()
                            .parse::<f64>()
                            .ok()
                            .filter(|p| (0.0..=100.0).contains(p))
                            .with_context(|| {
                                format!(
                                    "invalid value for {}: '{s}' is not a percentile from 0 to 100",
                                    o.shown
                                )
                            })
                    })
                    .collect::<Result<_>>()?;
            }
            "histogram" => out.histogram = flag(o)?,
            "forced_shutdown" => forced = Some(want_value(o, "N|N%|off")?.to_string()),
            "rand_type" => rand_type = want_value(o, "TYPE")?.to_string(),
            "rand_seed" => {
                plan.seed = int(o)?;
                out.seed_given = plan.seed != 0;
            }
            "rand_spec_iter" => iter = int(o)?.clamp(1, 1_000) as u32,
            "rand_spec_pct" => pct = float(o)?,
            "rand_spec_res" => res = float(o)?,
            "rand_pareto_h" => h = float(o)?,
            "rand_zipfian_exp" => zexp = float(o)?,
            "verbosity" => {
                let v = int(o)?;
                if v > 5 {
                    bail!("invalid value for {}: verbosity is 0..5", o.shown);
                }
                out.verbosity = v as u8;
            }
            "debug" => {
                out.debug = flag(o)?;
                if out.debug {
                    out.verbosity = 5;
                }
            }
            "validate" => out.validate = flag(o)?,
            "format" => {
                out.format = match want_value(o, "text|json|csv")? {
                    "text" => SysbenchFormat::Text,
                    "json" => SysbenchFormat::Json,
                    "csv" => SysbenchFormat::Csv,
                    f => bail!(
                        "invalid value for {}: '{f}' (use text, json or csv)",
                        o.shown
                    ),
                }
            }
            "label" => label = Some(want_value(o, "NAME")?.to_string()),
            "no_save" => no_save = flag(o)?,
            "results_db" => results_db = Some(want_value(o, "PATH|URL")?.to_string()),
            "config_file" | "thread_stack_size" | "thread_init_timeout" | "luajit_cmd" => {
                let _ = &o.value;
            }
            "lua" => {}
            _ if lua_script.is_some() && GENERAL.iter().all(|(n, _, _)| *n != o.name) => {
                // The script's own option: typed and checked against its declarations.
            }
            name => {
                let spec = workload
                    .params()
                    .iter()
                    .find(|p| p.sysbench.map(|s| s.replace('-', "_")) == Some(name.to_string()));
                match spec {
                    Some(p) => {
                        let v = match (&o.value, p.kind) {
                            (Some(v), _) => v.clone(),
                            (None, ParamKind::Bool) => "on".into(),
                            (None, _) => bail!("{} needs a value: {}=<value>", o.shown, o.shown),
                        };
                        overrides.push((p.name.to_string(), v));
                    }
                    None => {
                        let owner = WORKLOADS.iter().find(|w| {
                            w.params().iter().any(|p| {
                                p.sysbench.map(|s| s.replace('-', "_")) == Some(name.to_string())
                            })
                        });
                        match owner {
                            Some(w) => bail!(
                                "invalid option: {} is an option of the '{}' test, not of '{test}'",
                                o.typed_name(),
                                w.sysbench_test().unwrap_or(w.id())
                            ),
                            None => {
                                let known: Vec<String> = GENERAL
                                    .iter()
                                    .map(|(n, _, _)| *n)
                                    .chain(HOSTBENCH_OPTIONS.iter().copied())
                                    .chain(workload.params().iter().filter_map(|p| p.sysbench))
                                    .map(|n| format!("--{}", n.replace('_', "-")))
                                    .collect();
                                let typed = format!("--{}", name.replace('_', "-"));
                                bail!(
                                    "invalid option: {}{} (see 'hostbench {test} help' and 'hostbench --help')",
                                    o.typed_name(),
                                    hostbench_core::suggest::did_you_mean(
                                        &typed,
                                        known.iter().map(String::as_str)
                                    )
                                )
                            }
                        }
                    }
                }
            }
        }
    }
    if out.debug {
        // sysbench: --debug forces verbosity 5 wherever --verbosity appears.
        out.verbosity = 5;
    }
    if rand_type == "special" && !(0.0..100.0).contains(&res) {
        bail!("invalid value for --rand-spec-res: {res} (use 0 to 99)");
    }
    plan.rand =
        Distribution::from_name(&rand_type, iter, pct, res, h, zexp).with_context(|| {
            format!(
                "invalid value for --rand-type: '{rand_type}' (use {})",
                Distribution::NAMES.join(", ")
            )
        })?;
    if let Some(f) = forced {
        plan.forced_shutdown_s = forced_shutdown(&f, plan.time_s)?;
    }
    if out.histogram && plan.percentiles.iter().all(|&p| p == 0.0) {
        bail!("--histogram needs latency statistics: it cannot be combined with --percentile=0");
    }
    if plan.percentiles.iter().all(|&p| p == 0.0) {
        plan.percentiles = vec![0.0];
    }
    if let Some(script) = &lua_script {
        let command = words.get(1).cloned();
        let is_secret = |k: &str| hostbench_core::secret::is_secret_name(k);
        let (secret, plain): (Vec<_>, Vec<_>) =
            script_opts.into_iter().partition(|(k, _)| is_secret(k));
        let sep = hostbench_workloads::lua::SEP;
        if args.iter().any(|a| a.contains(sep)) {
            bail!(
                "the command line holds the character U+001F, which hostbench cannot pass to a Lua script"
            );
        }
        let argv: Vec<String> = std::iter::once("sysbench".to_string())
            .chain(args.iter().cloned())
            .collect();
        let ov = vec![
            ("script".to_string(), script.clone()),
            ("script_path".to_string(), test.clone()),
            ("command".to_string(), command.clone().unwrap_or_default()),
            ("argv".to_string(), argv.join(&sep.to_string())),
            (
                "options".to_string(),
                hostbench_workloads::lua::encode_options(&plain),
            ),
            (
                "secret_options".to_string(),
                hostbench_workloads::lua::encode_options(&secret),
            ),
        ];
        plan.params = workload.resolve(&ov).map_err(|e| anyhow::anyhow!("{e}"))?;
        if plan.time_s > 0.0 && !opts.iter().any(|o| o.name == "forced_shutdown") {
            // A script's event() can loop forever, and LuaJIT's compiled code cannot be
            // interrupted: without a forced shutdown such a run would never end.
            plan.forced_shutdown_s = Some(LUA_FORCED_SHUTDOWN_S);
        }
        plan.report_checkpoints.sort_by(f64::total_cmp);
        plan.validate().map_err(anyhow::Error::msg)?;
        let saving = SaveOptions::new(label, no_save, results_db)?;
        plan.layout = Some(hostbench_core::layout::Layout::Sysbench(
            hostbench_core::layout::SysbenchLayout {
                histogram: out.histogram,
            },
        ));
        return Ok(Invocation::Lua(Box::new(plan), out, saving, command));
    }
    plan.params = workload.resolve(&overrides).map_err(|e| {
        // Speak sysbench's option names in errors.
        let msg = e.to_string();
        let mut m = msg;
        for p in workload.params() {
            if let Some(sb) = p.sysbench {
                m = m.replace(&format!("for {}:", p.name), &format!("for --{sb}:"));
            }
        }
        anyhow::anyhow!(m)
    })?;
    plan.report_checkpoints.sort_by(f64::total_cmp);
    if workload.caps().own_event_quota {
        // sysbench's test init sets max_requests to 0: --events has no effect.
        plan.events = 0;
    }
    plan.validate().map_err(anyhow::Error::msg)?;
    if prewarm {
        return Ok(Invocation::Prewarm(Box::new(plan), out));
    }
    if let Some(stage) = stage {
        return Ok(Invocation::Stage(stage, Box::new(plan), out));
    }
    if plan.time_s == 0.0 && plan.events == 0 && !workload.caps().ends_itself {
        warn.push("Both event and time limits are disabled, running an endless test".into());
    }
    let saving = SaveOptions::new(label, no_save, results_db)?;
    // The report's options go into the result too (`results show ID -f sysbench`).
    plan.layout = Some(hostbench_core::layout::Layout::Sysbench(
        hostbench_core::layout::SysbenchLayout {
            histogram: out.histogram,
        },
    ));
    Ok(Invocation::Run(Box::new(plan), out, saving))
}

/// `--forced-shutdown`'s value: seconds after the time limit, N% of `time_s`, or `off`.
fn forced_shutdown(f: &str, time_s: f64) -> Result<Option<f64>> {
    Ok(match f {
        // sysbench: 0 is "force at the time limit", only "off" disables it.
        "off" => None,
        s if s.ends_with('%') => {
            let p: f64 = s[..s.len() - 1]
                .parse()
                .ok()
                .filter(|p: &f64| *p >= 0.0)
                .with_context(|| {
                    format!("invalid value for --forced-shutdown: '{f}' (use N, N% or off)")
                })?;
            Some(time_s * p / 100.0)
        }
        s => Some(
            parse_seconds(s)
                .map_err(|e| anyhow::anyhow!("invalid value for --forced-shutdown: {e}"))?,
        ),
    })
}

/// Hands the prewarm command's lines to sysbench's output object (its header before the
/// first line, the database named on stderr).
struct PrewarmLog<'a> {
    output: &'a SysbenchOut,
    run: crate::present::RunInfo<'a>,
}

impl hostbench_core::workload::StageLog for PrewarmLog<'_> {
    fn line(&self, line: &str) {
        use crate::present::Presenter;
        self.output.stage_line(&self.run, line);
    }
}

/// Runs the OLTP `prewarm` command of `plan`'s workload.
pub fn prewarm(plan: &Plan, output: &SysbenchOut) -> Result<std::process::ExitCode> {
    use hostbench_core::workload::{SetupCtx, StageDone};
    let workload = hostbench_workloads::find(&plan.workload).context("no such workload")?;
    let log = PrewarmLog {
        output,
        run: crate::present::RunInfo { plan, workload },
    };
    let ctx = SetupCtx {
        params: &plan.params,
        threads: plan.threads,
        dist: plan.rand,
        seed: if plan.seed == 0 {
            hostbench_core::rand::time_seed()
        } else {
            plan.seed
        },
        host: None,
    };
    let done = hostbench_workloads::db::oltp::prewarm(&plan.workload, &ctx, &log)
        .context("this test has no prewarm command")?
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(match done {
        StageDone::Interrupted => crate::interrupted_exit(),
        _ => std::process::ExitCode::SUCCESS,
    })
}

fn sysbench_names() -> Vec<&'static str> {
    WORKLOADS.iter().filter_map(|w| w.sysbench_test()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--help=off` and `--version=off` are sysbench's booleans turned off: the test runs.
    #[test]
    fn help_and_version_off_do_not_print() {
        for off in ["--help=off", "--version=off"] {
            let (p, _) = run(&format!("cpu {off} --time=0.1 run"));
            assert_eq!(p.time_s, 0.1, "{off}");
        }
        for on in ["--help", "--help=on"] {
            let a: Vec<String> = ["cpu", on].iter().map(|s| s.to_string()).collect();
            assert!(matches!(
                parse(&a, &mut Vec::new()).unwrap(),
                Invocation::Print(_)
            ));
        }
    }

    /// A test option whose help already lists its choices gets them once (fileio's
    /// `--file-fsync-mode` printed `{fsync, fdatasync} {fsync, fdatasync}`).
    #[test]
    fn test_help_lists_choices_once() {
        for test in [
            "fileio",
            "memory",
            "cpu",
            "threads",
            "mutex",
            "oltp_read_write",
        ] {
            let a: Vec<String> = [test, "help"].iter().map(|s| s.to_string()).collect();
            let Invocation::Print(help) = parse(&a, &mut Vec::new()).unwrap() else {
                panic!("{test} help printed nothing");
            };
            for line in help.lines() {
                assert!(line.matches('{').count() <= 1, "{test}: {line}");
            }
        }
    }

    fn run(args: &str) -> (Plan, Vec<String>) {
        let a: Vec<String> = args.split_whitespace().map(String::from).collect();
        let mut w = Vec::new();
        match parse(&a, &mut w).unwrap() {
            Invocation::Run(p, _, _) => (*p, w),
            _ => panic!("not a run"),
        }
    }

    #[test]
    fn options_anywhere_and_dash_underscore() {
        let (p, _) = run("--threads=2 cpu --cpu_max_prime=300 run --time=0.5");
        assert_eq!(p.threads, 2);
        assert_eq!(p.params.int("max_prime"), 300);
        assert_eq!(p.time_s, 0.5);
    }

    #[test]
    fn old_grammar_warns() {
        let (p, w) = run("--test=threads --num-threads=128 --max-time=10s run");
        assert_eq!(p.workload, "threads");
        assert_eq!(p.threads, 128);
        assert_eq!(p.time_s, 10.0);
        assert!(w.iter().any(|m| m.contains("--num-threads is deprecated")));
        assert!(w.iter().any(|m| m.contains("--test option is deprecated")));
        let (p, _) = run("cpu --threads=2 --num-threads=1 --events=50 --max-requests=0 run");
        assert_eq!(
            (p.threads, p.events),
            (2, 50),
            "inert aliases do not override"
        );
        let (p, _) = run("--test=cpu --cpu-max-prime=3 --max-requests=524288 run");
        assert_eq!(p.events, 524_288);
    }

    #[test]
    fn saving_options_are_general_options() {
        let a: Vec<String> = "cpu --label=graviton3 --no-save --results-db=/tmp/x.db run"
            .split_whitespace()
            .map(String::from)
            .collect();
        let Invocation::Run(_, _, s) = parse(&a, &mut Vec::new()).unwrap() else {
            panic!("not a run")
        };
        assert_eq!(s.label.as_deref(), Some("graviton3"));
        assert!(s.no_save);
        assert_eq!(s.results_db.as_deref(), Some("/tmp/x.db"));
        let Invocation::Run(_, _, s) =
            parse(&["cpu".into(), "run".into()], &mut Vec::new()).unwrap()
        else {
            panic!("not a run")
        };
        assert_eq!((s.label, s.no_save, s.results_db), (None, false, None));
        let u = usage();
        for o in [
            "--label=NAME",
            "--no-save[=on|off]",
            "--results-db=PATH|URL",
        ] {
            assert!(u.contains(o), "{o} missing from usage:\n{u}");
        }
    }

    /// sysbench's --help layout: `=` before a list argument, one column for the help.
    #[test]
    fn general_options_are_written_as_sysbench_writes_them() {
        let u = usage();
        let at = |o: &str| {
            u.lines()
                .find(|l| l.starts_with(&format!("  {o} ")))
                .and_then(|l| l.find(|c: char| c != ' ' && c != '-').map(|_| l))
                .unwrap_or_else(|| panic!("{o} missing:\n{u}"))
                .len()
                - u.lines()
                    .find(|l| l.starts_with(&format!("  {o} ")))
                    .unwrap()
                    .trim_start_matches(&format!("  {o}"))
                    .trim_start()
                    .len()
        };
        assert_eq!(at("--report-checkpoints=[LIST,...]"), at("--threads=N"));
        assert_eq!(at("--debug[=on|off]"), at("--threads=N"));
        assert!(general_option_names().contains(&"--report-checkpoints=[LIST,...]".to_string()));
    }

    #[test]
    fn errors_are_specific() {
        let e = |s: &str| {
            let a: Vec<String> = s.split_whitespace().map(String::from).collect();
            match parse(&a, &mut Vec::new()) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{s} parsed"),
            }
        };
        assert!(e("cpu --threads=0 run").contains("at least 1"));
        assert!(e("cpu --foo=1 run").contains("invalid option: --foo ("));
        assert!(e("mutex --cpu-max-prime=5 run").contains("option of the 'cpu' test"));
        assert!(e("cpu --cpu-max-prime=abc run").contains("--cpu-max-prime"));
        assert!(e("cpu").contains("requires a command"));
        assert!(e("cpu --threads 4 run").contains("did you mean --threads=4?"));
        assert!(e("cpu --rand-type=normal run").contains("uniform, gaussian"));
    }
}
