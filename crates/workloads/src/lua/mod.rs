//! `lua`: sysbench 1.0.20 Lua scripts, run unmodified on an embedded LuaJIT.
//!
//! sysbench is a Lua-scriptable benchmark; this workload makes hostbench one too. The
//! script's `event()` is the event of an ordinary event worker, so the runner owns time,
//! limits, rates, intervals and the results exactly as for every other workload; the Lua
//! API is a thin binding over hostbench's own parts:
//!
//! - [`state`]: one LuaJIT state as sysbench builds it (all libraries, `ffi` global,
//!   sysbench's `package.path`, the `sysbench` table, the FFI declarations, the legacy
//!   globals), and the C functions scripts reach through `ffi.C` (`sb_counter_inc` into
//!   the thread's runner counters, `sb_rand_*` on core's generators).
//! - [`options`]: declared options, sysbench's typing and validation rules, `help`.
//! - [`find`]: finding a script by path or on sysbench's module path.
//! - [`script`]: the main state ("gstate") the front-end drives: the script's body, its
//!   options and commands, `prepare`/`cleanup`/`help`/custom commands, `init`/`done`, and
//!   the report hooks.
//! - [`sql`]: `sysbench.sql` on hostbench's database clients (queries, result rows,
//!   prepared statements, bulk inserts, reconnects).
//! - [`worker`]: the worker of one thread: its own state, created in that thread (a Lua
//!   state never moves between threads), `thread_init`, `event`, `thread_done`.
//!
//! What the front-end decides travels in the workload's parameters (the script, the
//! command, argv and the options as typed), so a result records what ran and every state
//! sees the same options. Options whose names say they hold a secret travel in
//! `secret_options`, which a saved result never shows.
//!
//! The one process-wide rule: a Lua state is used only by the thread that created it. The
//! main state lives in [`script`]'s thread-local slot on the main thread; each worker's
//! lives inside its worker and is created by [`EventWorker::start`] in the worker's
//! thread, which is also where the runner drops it.

mod event_loop;
pub mod find;
pub mod options;
pub mod script;
pub mod sql;
pub mod state;
pub mod worker;

use hostbench_core::params::{ParamKind, ParamSpec, Params};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counter;
use hostbench_core::workload::*;
use std::sync::Arc;

/// A Lua script.
pub struct LuaScript;

/// The separator of list-valued parameters (argv, options): a byte no command line holds.
pub const SEP: char = '\u{1f}';

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "script",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "the script file (as found on the command line or sysbench's module path)",
        sysbench: None,
    },
    ParamSpec {
        name: "code",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "the script's text, when no script file is given",
        sysbench: None,
    },
    ParamSpec {
        name: "script_path",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "the script's name as given (sysbench.cmdline.script_path)",
        sysbench: None,
    },
    ParamSpec {
        name: "command",
        kind: ParamKind::Text,
        default: "run",
        unit: "",
        help: "the command (sysbench.cmdline.command)",
        sysbench: None,
    },
    ParamSpec {
        name: "argv",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "the command line, words separated by U+001F (sysbench.cmdline.argv)",
        sysbench: None,
    },
    ParamSpec {
        name: "options",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "the script's options, name=value pairs separated by blanks (or U+001F)",
        sysbench: None,
    },
    ParamSpec {
        name: "secret_options",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "options holding secrets (passwords), as `options`; never saved",
        sysbench: None,
    },
];

/// What every state of one script needs, read from the workload's parameters.
#[derive(Debug, Clone)]
pub struct Config {
    /// The script's text.
    pub source: Vec<u8>,
    /// Its chunk name (`@path`, as Lua names files; `=code` for inline code).
    pub chunk_name: String,
    /// `sysbench.cmdline.script_path`.
    pub script_path: Option<String>,
    /// `sysbench.cmdline.command`.
    pub command: Option<String>,
    /// `sysbench.cmdline.argv`.
    pub argv: Vec<String>,
    /// The options as typed (underscore names), secrets included.
    pub given: Vec<(String, Option<String>)>,
}

/// The largest script read (sysbench-tpcc's biggest file is 40 KB).
const SCRIPT_MAX: u64 = 16 << 20;

/// Splits a U+001F-separated list (empty text: no items).
pub fn split_list(text: &str) -> Vec<String> {
    if text.is_empty() {
        Vec::new()
    } else {
        text.split(SEP).map(str::to_string).collect()
    }
}

/// Encodes options as the `options` parameter holds them.
pub fn encode_options(opts: &[(String, Option<String>)]) -> String {
    opts.iter()
        .map(|(k, v)| match v {
            Some(v) => format!("{k}={v}"),
            None => k.clone(),
        })
        .collect::<Vec<_>>()
        .join(&SEP.to_string())
}

/// The `options` parameter's pairs. The script path joins them with U+001F; typed by hand
/// (`--set "options=tables=2 table-size=100"`, or with sysbench's `--` before each name)
/// they are separated by blanks.
fn decode_options(text: &str) -> Vec<(String, Option<String>)> {
    let words: Vec<String> = if text.contains(SEP) {
        split_list(text)
    } else {
        text.split_whitespace()
            .map(|w| w.strip_prefix("--").unwrap_or(w).to_string())
            .collect()
    };
    words
        .into_iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (p, None),
        })
        .collect()
}

impl Config {
    /// The configuration `params` describe; reads the script file.
    pub fn from_params(params: &Params) -> Result<Config, WorkloadError> {
        let script = params.text("script");
        let (source, chunk_name) = if script.is_empty() {
            let code = params.text("code");
            if code.is_empty() {
                return Err(WorkloadError::usage(
                    "the lua workload needs a script: give `script` (a file) or `code` (its text)",
                ));
            }
            (code.as_bytes().to_vec(), "=code".to_string())
        } else {
            let read = || -> std::io::Result<Vec<u8>> {
                use std::io::Read;
                let mut buf = Vec::new();
                std::fs::File::open(script)?
                    .take(SCRIPT_MAX + 1)
                    .read_to_end(&mut buf)?;
                Ok(buf)
            };
            let buf = read().map_err(|e| {
                WorkloadError::environment(format!("cannot read the script '{script}': {e}"))
            })?;
            if buf.len() as u64 > SCRIPT_MAX {
                return Err(WorkloadError::usage(format!(
                    "the script '{script}' is larger than {} MiB: is it a Lua script?",
                    SCRIPT_MAX >> 20
                )));
            }
            (buf, format!("@{script}"))
        };
        let nonempty = |s: &str| (!s.is_empty()).then(|| s.to_string());
        let mut given = decode_options(params.text("options"));
        given.extend(decode_options(params.text("secret_options")));
        Ok(Config {
            source,
            chunk_name,
            script_path: nonempty(params.text("script_path")),
            command: nonempty(params.text("command")),
            argv: split_list(params.text("argv")),
            given,
        })
    }

    /// The script's short name for messages (`basename` of its path as given).
    pub fn sname(&self) -> String {
        match &self.script_path {
            Some(p) => p.rsplit('/').next().unwrap_or(p).to_string(),
            None => "(stdin)".into(),
        }
    }
}

struct LuaInstance {
    cfg: Arc<Config>,
    values: Arc<Vec<(String, options::OptValue)>>,
    legacy: bool,
    rand: options::RandCfg,
    help: String,
    own_loop: bool,
    open_events: Arc<std::sync::atomic::AtomicU64>,
}

impl Instance for LuaInstance {
    fn facts(&self) -> Vec<(String, f64)> {
        // The report crate's SQL_DRIVER_FACT: the run reports in sysbench's SQL layout.
        if sql::driver_used() {
            vec![("sql_driver_used".to_string(), 1.0)]
        } else {
            Vec::new()
        }
    }

    fn in_flight(&self) -> Option<u64> {
        // A replaced thread_run says when it is inside an event; hostbench's own event
        // loop leaves the count to the runner.
        self.own_loop
            .then(|| self.open_events.load(std::sync::atomic::Ordering::Acquire))
    }

    fn worker(&self, tid: usize, rng: Rng) -> Result<Worker, WorkloadError> {
        let w = worker::LuaWorker::new(
            worker::WorkerSetup {
                cfg: self.cfg.clone(),
                values: self.values.clone(),
                legacy: self.legacy,
                rand: self.rand,
                help: self.help.clone(),
                open_events: self.open_events.clone(),
            },
            tid,
            rng,
        );
        Ok(if self.own_loop {
            Worker::Loop(Box::new(event_loop::LuaLoopWorker(w)))
        } else {
            Worker::Event(Box::new(w))
        })
    }
}

impl Workload for LuaScript {
    fn id(&self) -> &'static str {
        "lua"
    }
    fn category(&self) -> Category {
        Category::System
    }
    fn summary(&self) -> &'static str {
        "a sysbench Lua script: one call of its event() function"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn counters(&self) -> &'static [Counter] {
        // What `sb_counter_inc` and sysbench.sql count.
        &[
            Counter::Reads,
            Counter::Writes,
            Counter::Other,
            Counter::Errors,
            Counter::Reconnects,
        ]
    }
    fn small_params(&self) -> &'static [(&'static str, &'static str)] {
        &[("code", "local n = 0\nfunction event() n = n + 1 end")]
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        let cfg = Arc::new(Config::from_params(ctx.params)?);
        // The main state: the front-end has usually loaded it already (and run init()).
        let script::RunSetup {
            values,
            legacy,
            help,
            own_loop,
        } = script::prepare_run(&cfg)?;
        let rand = options::RandCfg::from_values(&values)
            .map_err(|e| WorkloadError::usage(e.to_string()))?;
        Ok(Box::new(LuaInstance {
            cfg,
            values: Arc::new(values),
            legacy,
            rand,
            help,
            own_loop,
            open_events: Default::default(),
        }))
    }
}
