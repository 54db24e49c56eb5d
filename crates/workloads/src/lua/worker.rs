//! The worker of one thread: a Lua state of its own, built in its thread before the start
//! barrier ([`EventWorker::start`]: body, options, `thread_init(tid)`), one call of the
//! script's `event(tid)` per runner event, and `thread_done(tid)` at the end.
//!
//! `event` runs through the prelude's `__hostbench_event`, which retries an event that
//! raised a restart error (`{errcode = 1}`, an ignorable SQL error) after the
//! `before_restart_event` hook, as sysbench's `thread_run` does, but gives up when the run
//! is over. A truthy return value ends this thread's events without counting that call
//! ([`Step::End`]); an error fails the run with the Lua message (file and line).
//!
//! A script that replaces `thread_run` runs it instead, as a loop worker
//! (`lua/event_loop.rs`).

use super::Config;
use super::options::{OptValue, RandCfg};
use super::state::{self, StateInit};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counters;
use hostbench_core::workload::{EventWorker, Step, WorkloadError};
use mlua::{Function, Lua, Value};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// What every worker of a run shares.
pub struct WorkerSetup {
    /// The script.
    pub cfg: Arc<Config>,
    /// `sysbench.opt`.
    pub values: Arc<Vec<(String, OptValue)>>,
    /// A legacy script (options as globals too).
    pub legacy: bool,
    /// The generators' settings.
    pub rand: RandCfg,
    /// `print_test_options()`'s text.
    pub help: String,
    /// Events claimed by a replaced `thread_run` and not stopped yet, over all threads
    /// (see `lua/event_loop.rs`).
    pub open_events: Arc<AtomicU64>,
}

struct Live {
    lua: Lua,
    event: Function,
}

/// One thread's worker; its Lua state exists from `start` on.
pub struct LuaWorker {
    pub(super) setup: WorkerSetup,
    tid: usize,
    rng: Option<Rng>,
    live: Option<Live>,
}

// SAFETY: the only field that is not `Send` is the Lua state in `live`, and it is created
// in `start`, which the runner calls in the worker's own thread after the worker has been
// moved there; `event`, `finish` and the drop happen in that same thread (the runner's
// `thread_main` owns the worker until the thread ends). Before `start`, when the worker
// does move, `live` is `None`.
unsafe impl Send for LuaWorker {}

impl LuaWorker {
    /// The worker of thread `tid`, with its generator stream.
    pub fn new(setup: WorkerSetup, tid: usize, rng: Rng) -> LuaWorker {
        LuaWorker {
            setup,
            tid,
            rng: Some(rng),
            live: None,
        }
    }

    fn build(&mut self, own_loop: bool) -> Result<Live, String> {
        let cfg = &self.setup.cfg;
        let lua = state::new_state(&StateInit {
            tid: self.tid,
            argv: &cfg.argv,
            command: cfg.command.as_deref(),
            script_path: cfg.script_path.as_deref(),
            options_help: self.setup.help.clone(),
        })
        .map_err(|e| state::message(&e))?;
        state::run_body(&lua, &cfg.source, &cfg.chunk_name).map_err(|e| state::message(&e))?;
        if !own_loop && state::thread_run_replaced(&lua) {
            return Err(format!(
                "{} replaces thread_run() in worker thread {} but not in the main state: \
                 define thread_run() the same way in every state",
                cfg.sname(),
                self.tid
            ));
        }
        state::export_options(&lua, &self.setup.values, self.setup.legacy)
            .map_err(|e| state::message(&e))?;
        let g = lua.globals();
        if let Value::Function(f) = g.get::<Value>("thread_init").map_err(|e| e.to_string())? {
            f.call::<()>(self.tid)
                .map_err(|e| format!("`thread_init' function failed: {}", state::message(&e)))?;
        }
        if !matches!(g.get::<Value>("event"), Ok(Value::Function(_))) {
            return Err(format!(
                "cannot find the event() function in {}",
                cfg.sname()
            ));
        }
        let event: Function = g.get("__hostbench_event").map_err(|e| state::message(&e))?;
        drop(g);
        Ok(Live { lua, event })
    }
}

impl LuaWorker {
    /// Builds this thread's state (`own_loop`: the script's `thread_run` will run, see
    /// `lua/event_loop.rs`).
    pub(super) fn start_state(
        &mut self,
        counters: &Counters,
        own_loop: bool,
    ) -> Result<(), WorkloadError> {
        if let Some(rng) = self.rng.take() {
            state::set_thread_rand(rng, self.setup.rand);
        }
        // SAFETY: the runner's counters of this thread outlive the thread.
        unsafe { state::set_thread_counters(counters) };
        let live = self.build(own_loop);
        state::flush_stdio();
        self.live = Some(live.map_err(WorkloadError::failed)?);
        Ok(())
    }

    /// Calls the script's own `thread_run(tid)`.
    pub(super) fn thread_run(&mut self) -> Result<(), WorkloadError> {
        let Some(live) = &self.live else {
            return Err(WorkloadError::failed("the Lua state was not started"));
        };
        let f: Function = live
            .lua
            .globals()
            .get("thread_run")
            .map_err(|e| WorkloadError::failed(state::message(&e)))?;
        let ran = f.call::<Value>(self.tid);
        state::flush_stdio();
        ran.map(|_| ()).map_err(|e| {
            WorkloadError::failed(format!(
                "`thread_run' function failed: {}",
                state::message(&e)
            ))
        })
    }

    /// `thread_done(tid)`.
    pub(super) fn finish_state(&mut self) -> Result<(), WorkloadError> {
        let Some(live) = &self.live else {
            return Ok(());
        };
        if let Ok(Value::Function(f)) = live.lua.globals().get::<Value>("thread_done") {
            f.call::<()>(self.tid).map_err(|e| {
                WorkloadError::failed(format!(
                    "`thread_done' function failed: {}",
                    state::message(&e)
                ))
            })?;
        }
        state::flush_stdio();
        Ok(())
    }
}

impl EventWorker for LuaWorker {
    fn start(&mut self, counters: &Counters) -> Result<(), WorkloadError> {
        self.start_state(counters, false)
    }

    #[inline]
    fn event(&mut self, _counters: &Counters) -> Result<Step, WorkloadError> {
        let Some(live) = &self.live else {
            return Err(WorkloadError::failed("the Lua state was not started"));
        };
        match live.event.call::<Value>(self.tid) {
            Ok(Value::Nil | Value::Boolean(false)) => Ok(Step::Done),
            Ok(_) => Ok(Step::End),
            Err(e) => Err(WorkloadError::failed(format!(
                "`thread_run' function failed: {}",
                state::message(&e)
            ))),
        }
    }

    fn finish(&mut self, _counters: &Counters) -> Result<(), WorkloadError> {
        self.finish_state()
    }
}

impl Drop for LuaWorker {
    fn drop(&mut self) {
        // The state closes (its finalisers run: report_json's "]") in this thread; the
        // counters it pointed at are the runner's, which stop being ours now.
        self.live = None;
        state::flush_stdio();
        // SAFETY: null means "count nowhere".
        unsafe { state::set_thread_counters(std::ptr::null()) };
    }
}
