//! The main state ("gstate", tid 0) of a script, on the thread that loads it (the main
//! thread): the script's body, its declared options and commands, the built-in commands
//! (`help`, `prepare`, `cleanup`), custom commands (sequential here, parallel in threads of
//! their own), `init()` before a run and `done()` after it, and the report hooks (in a
//! reporter state of their own, tid = threads, as sysbench does).
//!
//! The state sits in a thread-local slot so that the workload's `setup` and the front-end's
//! output object reach the state the front-end loaded without carrying a `!Send` value
//! through the runner.

use super::Config;
use super::options::{self, Declared, OptValue, RandCfg};
use super::state::{self, StateInit};
use hostbench_core::rand::Rng;
use hostbench_core::workload::WorkloadError;
use mlua::{Function, Lua, Table, Value};
use std::cell::RefCell;
use std::sync::Arc;

struct Main {
    lua: Lua,
    cfg: Arc<Config>,
    declared: Vec<Declared>,
    values: Vec<(String, OptValue)>,
    threads: usize,
    reporter: Option<Lua>,
    initialized: bool,
    done_called: bool,
}

thread_local! {
    static MAIN: RefCell<Option<Main>> = const { RefCell::new(None) };
}

/// A script that could not be loaded or whose options are wrong; the message is the Lua
/// message or sysbench's.
#[derive(Debug, Clone)]
pub struct ScriptError(pub String);

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn lua_err(e: mlua::Error) -> ScriptError {
    ScriptError(state::message(&e))
}

/// Runs `f` on the main state; what the script printed is flushed after it.
fn with_main<T>(f: impl FnOnce(&mut Main) -> T) -> Option<T> {
    let r = MAIN.with(|m| m.borrow_mut().as_mut().map(f));
    state::flush_stdio();
    r
}

/// Loads `cfg`'s script in a new main state: the body runs, then its declared options are
/// read. Replaces a state loaded before.
pub fn load(cfg: &Config) -> Result<(), ScriptError> {
    unload();
    super::sql::reset_driver_used();
    state::set_thread_rand(
        Rng::for_thread(hostbench_core::rand::time_seed(), u64::MAX),
        RandCfg::DEFAULT,
    );
    let lua = state::new_state(&StateInit {
        tid: 0,
        argv: &cfg.argv,
        command: cfg.command.as_deref(),
        script_path: cfg.script_path.as_deref(),
        options_help: String::new(),
    })
    .map_err(lua_err)?;
    let body = state::run_body(&lua, &cfg.source, &cfg.chunk_name);
    state::flush_stdio();
    body.map_err(lua_err)?;
    let declared = options::declared(&lua).map_err(|m| {
        ScriptError(format!(
            "`sysbench.cmdline.read_cmdline_options' function failed: {m}"
        ))
    })?;
    let help = options::help_text(&declared, None);
    // print_test_options() in this state prints the declared options.
    let hb_help = lua
        .create_function(move |_, ()| Ok(help.clone()))
        .map_err(lua_err)?;
    let cl: Table = lua
        .globals()
        .get::<Table>("sysbench")
        .and_then(|s| s.get("cmdline"))
        .map_err(lua_err)?;
    let print = lua
        .load("local f = ... return function() io.write(f()) end")
        .call::<Function>(hb_help)
        .map_err(lua_err)?;
    cl.set("print_test_options", print).map_err(lua_err)?;
    MAIN.with(|m| {
        *m.borrow_mut() = Some(Main {
            lua,
            cfg: Arc::new(cfg.clone()),
            declared,
            values: Vec::new(),
            threads: 1,
            reporter: None,
            initialized: false,
            done_called: false,
        })
    });
    Ok(())
}

/// Closes the main state (its finalisers run now).
pub fn unload() {
    let old = MAIN.with(|m| m.borrow_mut().take());
    drop(old);
    state::flush_stdio();
}

/// The options the loaded script declares (sorted by name).
pub fn declared() -> Vec<Declared> {
    with_main(|m| m.declared.clone()).unwrap_or_default()
}

/// Types and checks the command line's options against the loaded script's declarations
/// (sysbench's rules, §2.2) and keeps them for every state; `threads` is the run's.
pub fn set_options(threads: usize) -> Result<(), ScriptError> {
    with_main(|m| {
        let v = options::typed_values(&m.declared, &m.cfg.given)
            .map_err(|e| ScriptError(e.to_string()))?;
        RandCfg::from_values(&v).map_err(|e| ScriptError(e.to_string()))?;
        m.values = v;
        m.threads = threads.max(1);
        Ok(())
    })
    .unwrap_or_else(|| Err(ScriptError("no script is loaded".into())))
}

/// `sysbench SCRIPT help` without a `help()` function: "`<sname>` options:" and the list;
/// `None` when the script declares no options.
pub fn options_help() -> Option<String> {
    with_main(|m| {
        (!m.declared.is_empty()).then(|| options::help_text(&m.declared, Some(&m.cfg.sname())))
    })
    .flatten()
}

fn export(m: &Main, lua: &Lua) -> Result<(), ScriptError> {
    state::export_options(lua, &m.values, m.declared.is_empty()).map_err(lua_err)
}

/// Whether `name` is a custom command of the script (`Some(parallel)`), as
/// `sysbench.cmdline.command_defined`/`command_parallel` say.
pub fn custom_command(name: &str) -> Option<bool> {
    with_main(|m| {
        let cl: Table = m
            .lua
            .globals()
            .get::<Table>("sysbench")
            .and_then(|s| s.get("cmdline"))
            .ok()?;
        let defined: Function = cl.get("command_defined").ok()?;
        if !defined.call::<bool>(name).unwrap_or(false) {
            return None;
        }
        let parallel: Function = cl.get("command_parallel").ok()?;
        Some(parallel.call::<bool>(name).unwrap_or(false))
    })
    .flatten()
}

/// True when the script defines a global function `name`.
pub fn has_function(name: &str) -> bool {
    with_main(|m| matches!(m.lua.globals().get::<Value>(name), Ok(Value::Function(_))))
        .unwrap_or(false)
}

/// Calls the global function `name` with no arguments in the main state after exporting
/// the options (sysbench's `prepare`, `cleanup`, `help`, `init`). The error is the Lua
/// message.
pub fn call_function(name: &str) -> Result<(), ScriptError> {
    with_main(|m| {
        export(m, &m.lua)?;
        let f: Function = m.lua.globals().get(name).map_err(lua_err)?;
        f.call::<()>(()).map_err(lua_err)
    })
    .unwrap_or_else(|| Err(ScriptError("no script is loaded".into())))
}

fn call_command_in(lua: &Lua, name: &str) -> Result<bool, ScriptError> {
    let cl: Table = lua
        .globals()
        .get::<Table>("sysbench")
        .and_then(|s| s.get("cmdline"))
        .map_err(lua_err)?;
    let call: Function = cl.get("call_command").map_err(lua_err)?;
    call.call::<bool>(name).map_err(lua_err)
}

/// Runs custom command `name` in the main state; `Ok(false)` when it returned `false`.
pub fn call_command(name: &str) -> Result<bool, ScriptError> {
    with_main(|m| {
        export(m, &m.lua)?;
        call_command_in(&m.lua, name)
    })
    .unwrap_or_else(|| Err(ScriptError("no script is loaded".into())))
}

/// Runs parallel custom command `name` in `threads` threads, each with a state of its own
/// (tid 0..threads) and its own generator stream from `seed`. Every thread's failure is
/// reported (sysbench ignores them and exits 0; hostbench does not): the messages, in
/// thread order, and whether every command returned something other than `false`.
pub fn call_parallel(name: &str, threads: usize, seed: u64) -> (bool, Vec<String>) {
    let Some((cfg, values, legacy, help)) = with_main(|m| {
        (
            m.cfg.clone(),
            m.values.clone(),
            m.declared.is_empty(),
            options::help_text(&m.declared, None),
        )
    }) else {
        return (false, vec!["no script is loaded".into()]);
    };
    let rand = RandCfg::from_values(&values).unwrap_or(RandCfg::DEFAULT);
    let handles: Vec<_> = (0..threads)
        .map(|tid| {
            let (cfg, values, help, name) =
                (cfg.clone(), values.clone(), help.clone(), name.to_string());
            std::thread::Builder::new()
                .name(format!("hb-lua-cmd-{tid}"))
                .spawn(move || -> Result<bool, String> {
                    state::set_thread_rand(Rng::for_thread(seed, tid as u64), rand);
                    let lua = state::new_state(&StateInit {
                        tid,
                        argv: &cfg.argv,
                        command: cfg.command.as_deref(),
                        script_path: cfg.script_path.as_deref(),
                        options_help: help,
                    })
                    .map_err(|e| state::message(&e))?;
                    state::run_body(&lua, &cfg.source, &cfg.chunk_name)
                        .map_err(|e| state::message(&e))?;
                    state::export_options(&lua, &values, legacy).map_err(|e| state::message(&e))?;
                    let r = call_command_in(&lua, &name).map_err(|e| e.0);
                    drop(lua);
                    state::flush_stdio();
                    r
                })
        })
        .collect();
    let mut ok = true;
    let mut errors = Vec::new();
    for h in handles {
        match h {
            Ok(h) => match h.join() {
                Ok(Ok(r)) => ok &= r,
                Ok(Err(e)) => errors.push(e),
                Err(_) => errors.push("a command thread panicked".into()),
            },
            Err(e) => errors.push(format!("cannot start a command thread: {e}")),
        }
    }
    (ok && errors.is_empty(), errors)
}

/// What the workers of a run need from the main state.
#[derive(Debug, Clone)]
pub struct RunSetup {
    /// `sysbench.opt`'s values.
    pub values: Vec<(String, OptValue)>,
    /// The script declares no options (legacy: options as globals too).
    pub legacy: bool,
    /// `print_test_options()`'s text.
    pub help: String,
    /// The script replaces `thread_run` (its workers run it: `lua/event_loop.rs`).
    pub own_loop: bool,
}

/// Before a run (the workload's `setup`): the main state the front-end loaded (or a new
/// one, for `hostbench run lua`), its options exported and `init()` called, and a global
/// `event` checked. Returns what the workers need.
pub fn prepare_run(cfg: &Config) -> Result<RunSetup, WorkloadError> {
    let same =
        with_main(|m| m.cfg.source == cfg.source && m.cfg.given == cfg.given).unwrap_or(false);
    if !same {
        load(cfg).map_err(|e| WorkloadError::usage(e.0))?;
        let threads = cfg
            .given
            .iter()
            .rev()
            .find(|(k, _)| k == "threads")
            .and_then(|(_, v)| v.as_deref()?.parse().ok())
            .unwrap_or(1);
        set_options(threads).map_err(|e| WorkloadError::usage(e.0))?;
    }
    with_main(|m| -> Result<_, WorkloadError> {
        export(m, &m.lua).map_err(|e| WorkloadError::failed(e.0))?;
        let g = m.lua.globals();
        if !m.initialized
            && let Ok(Value::Function(f)) = g.get::<Value>("init")
        {
            m.initialized = true;
            f.call::<()>(()).map_err(|e| {
                WorkloadError::failed(format!("`init' function failed: {}", state::message(&e)))
            })?;
        }
        if !matches!(g.get::<Value>("event"), Ok(Value::Function(_))) {
            return Err(WorkloadError::failed(format!(
                "cannot find the event() function in {}",
                m.cfg.sname()
            )));
        }
        Ok(RunSetup {
            values: m.values.clone(),
            legacy: m.declared.is_empty(),
            help: options::help_text(&m.declared, None),
            own_loop: state::thread_run_replaced(&m.lua),
        })
    })
    .unwrap_or_else(|| Err(WorkloadError::failed("no script is loaded")))
}

/// After a run's report: `done()` in the main state, once. The error is the Lua message.
pub fn done() -> Result<(), ScriptError> {
    with_main(|m| {
        if m.done_called {
            return Ok(());
        }
        m.done_called = true;
        let g = m.lua.globals();
        if let Ok(Value::Function(f)) = g.get::<Value>("done") {
            f.call::<()>(()).map_err(|e| {
                ScriptError(format!("`done' function failed: {}", state::message(&e)))
            })?;
        }
        Ok(())
    })
    .unwrap_or(Ok(()))
}

/// What a report hook receives (§1.6; seconds and counts over the report's interval).
#[derive(Debug, Clone, Default)]
pub struct Stat {
    /// Threads running (0 in the final report).
    pub threads_running: u64,
    /// Seconds since the previous report of the same kind.
    pub time_interval: f64,
    /// Seconds since the start.
    pub time_total: f64,
    /// `--percentile` latency over the interval, in seconds.
    pub latency_pct: f64,
    /// Events.
    pub events: u64,
    /// Reads.
    pub reads: u64,
    /// Writes.
    pub writes: u64,
    /// Other queries.
    pub other: u64,
    /// Errors.
    pub errors: u64,
    /// Reconnects.
    pub reconnects: u64,
    /// Intermediate reports: the open-loop queue's length.
    pub queue_length: u64,
    /// Intermediate reports: events in progress (with `--rate`).
    pub concurrency: u64,
    /// Cumulative reports: latency minimum, maximum, mean and sum, in seconds.
    pub latency: Option<(f64, f64, f64, f64)>,
}

fn stat_table(lua: &Lua, s: &Stat) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("threads_running", s.threads_running)?;
    t.set("time_interval", s.time_interval)?;
    t.set("time_total", s.time_total)?;
    t.set("latency_pct", s.latency_pct)?;
    t.set("events", s.events)?;
    t.set("reads", s.reads)?;
    t.set("writes", s.writes)?;
    t.set("other", s.other)?;
    t.set("errors", s.errors)?;
    t.set("reconnects", s.reconnects)?;
    match s.latency {
        Some((min, max, avg, sum)) => {
            t.set("latency_min", min)?;
            t.set("latency_max", max)?;
            t.set("latency_avg", avg)?;
            t.set("latency_sum", sum)?;
        }
        None => {
            t.set("queue_length", s.queue_length)?;
            t.set("concurrency", s.concurrency)?;
        }
    }
    Ok(t)
}

fn hook(lua: &Lua, name: &str) -> Option<Function> {
    let sb: Table = lua.globals().get("sysbench").ok()?;
    let hooks: Table = sb.get("hooks").ok()?;
    match hooks.get::<Value>(name) {
        Ok(Value::Function(f)) => Some(f),
        _ => None,
    }
}

/// True when the loaded script sets `sysbench.hooks.<name>` (looked at in the main state,
/// after its body, as sysbench does).
pub fn has_hook(name: &str) -> bool {
    with_main(|m| hook(&m.lua, name).is_some()).unwrap_or(false)
}

/// Creates the reporter state (tid = threads; the script's body runs in it) if it is not
/// there yet: sysbench makes it when a run with `--report-interval` starts.
pub fn start_reporter() {
    let r = with_main(|m| reporter(m).map(|_| ()));
    if let Some(Err(e)) = r {
        eprintln!("FATAL: {e}");
    }
}

fn reporter(m: &mut Main) -> Result<&Lua, String> {
    if m.reporter.is_none() {
        let help = options::help_text(&m.declared, None);
        let lua = state::new_state(&StateInit {
            tid: m.threads,
            argv: &m.cfg.argv,
            command: m.cfg.command.as_deref(),
            script_path: m.cfg.script_path.as_deref(),
            options_help: help,
        })
        .map_err(|e| state::message(&e))?;
        state::run_body(&lua, &m.cfg.source, &m.cfg.chunk_name).map_err(|e| state::message(&e))?;
        state::export_options(&lua, &m.values, m.declared.is_empty())
            .map_err(|e| state::message(&e))?;
        m.reporter = Some(lua);
    }
    Ok(m.reporter.as_ref().expect("just made"))
}

/// Calls `report_intermediate(stat)` in the reporter state (created on first use, tid =
/// threads). A failing hook prints sysbench's FATAL line; the run goes on.
pub fn report_intermediate(stat: &Stat) {
    let r = with_main(|m| -> Result<(), String> {
        let lua = reporter(m)?;
        if let Some(f) = hook(lua, "report_intermediate") {
            let t = stat_table(lua, stat).map_err(|e| state::message(&e))?;
            f.call::<()>(t).map_err(|e| state::message(&e))?;
        }
        Ok(())
    });
    if let Some(Err(e)) = r {
        eprintln!("FATAL: `report_intermediate' function failed: {e}");
    }
}

/// Calls `report_cumulative(stat)` in the main state (options exported afresh).
pub fn report_cumulative(stat: &Stat) {
    let r = with_main(|m| -> Result<(), String> {
        state::export_options(&m.lua, &m.values, m.declared.is_empty())
            .map_err(|e| state::message(&e))?;
        if let Some(f) = hook(&m.lua, "report_cumulative") {
            let t = stat_table(&m.lua, stat).map_err(|e| state::message(&e))?;
            f.call::<()>(t).map_err(|e| state::message(&e))?;
        }
        Ok(())
    });
    if let Some(Err(e)) = r {
        eprintln!("FATAL: `report_cumulative' function failed: {e}");
    }
}

/// Closes the reporter state (its JSON array closes), leaving the main state.
pub fn close_reporter() {
    let r = with_main(|m| m.reporter.take()).flatten();
    drop(r);
    state::flush_stdio();
}
