//! The contract between the runner and a workload.
//!
//! A workload describes itself (id, category, parameters, capabilities) and, given resolved
//! parameters, builds an [`Instance`] that hands out one worker per thread. Workers come in
//! two shapes:
//! - [`EventWorker`]: the runner calls `event()` in a loop and times each call, exactly as
//!   sysbench does (cpu, memory, mutex, threads, fileio, db);
//! - [`LoopWorker`]: the worker owns its loop (queue depth, thousands of connections), asks
//!   the [`RunControl`] when to stop and when the next operation
//!   is due, and records completions with their intended start times.
//!
//! Workloads never read the clock for limits, print, or handle signals: the runner owns time.

use crate::host::HostInfo;
use crate::params::{ParamError, ParamSpec, Params};
use crate::rand::{Distribution, Rng};
use crate::recorder::{Counter, Counters};
use crate::result::{Figure, RunResult, Table, Warning};
use crate::runner::RunControl;
use serde::{Deserialize, Serialize};

/// Broad area of a workload, for listings and suites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Processor work.
    Cpu,
    /// Memory bandwidth and latency.
    Memory,
    /// Files and block devices.
    Disk,
    /// HTTP load.
    Http,
    /// Databases.
    Db,
    /// Scheduler, locks, timers, the harness itself.
    System,
}

impl Category {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Category::Cpu => "cpu",
            Category::Memory => "memory",
            Category::Disk => "disk",
            Category::Http => "http",
            Category::Db => "db",
            Category::System => "system",
        }
    }
}

/// What a workload needs or does, beyond its parameters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Caps {
    /// Writes or deletes files (only in the directory the user gave).
    pub destructive: bool,
    /// Needs a server (database, HTTP target).
    pub needs_server: bool,
    /// Uses a loop worker rather than event workers.
    pub loop_worker: bool,
    /// Ends by itself (a quota of its own), so a run without time or event limits is not
    /// endless.
    pub ends_itself: bool,
    /// Sets its own event quota and ignores sysbench's `--events` (sysbench's memory test).
    pub own_event_quota: bool,
    /// Has prepare and cleanup stages ([`Workload::stage`]): a run needs what `prepare` made
    /// (files, tables), so a suite prepares it once, in a scratch directory, before the runs.
    pub stages: bool,
    /// Draws from sysbench's `--rand-type` distribution (the OLTP family), so runs with
    /// different distributions measure different things.
    pub rand_type: bool,
}

/// What `setup` gets to build an instance.
#[derive(Debug, Clone)]
pub struct SetupCtx<'a> {
    /// Resolved parameters, defaults included.
    pub params: &'a Params,
    /// Number of worker threads.
    pub threads: usize,
    /// `--rand-type` distribution.
    pub dist: Distribution,
    /// The run's seed (never 0: a time-derived seed is chosen when the user gave none).
    pub seed: u64,
    /// The host fingerprint (caches, memory), when it could be read.
    pub host: Option<&'a HostInfo>,
}

pub use crate::error::{ErrorKind, WorkloadError};

/// A kind of benchmark. Implementations are unit structs listed in the registry.
pub trait Workload: Send + Sync {
    /// Stable id (`cpu`, `null.loop`, later `disk.fio`).
    fn id(&self) -> &'static str;
    /// Area.
    fn category(&self) -> Category;
    /// One line saying what one event or operation is.
    fn summary(&self) -> &'static str;
    /// Parameter table.
    fn params(&self) -> &'static [ParamSpec];
    /// Capabilities.
    fn caps(&self) -> Caps {
        Caps::default()
    }
    /// The sysbench test name this workload answers to, if any.
    fn sysbench_test(&self) -> Option<&'static str> {
        None
    }
    /// The command words that run this workload in a grammar of their own, after the program
    /// name (`hostbench stream`, `hostbench ab`): `hostbench list`, the help and the docs
    /// table name them, and the binary dispatches each to its front-end. Default: none (the
    /// workload runs through `hostbench run ID` and its sysbench test name, if any).
    fn commands(&self) -> &'static [&'static str] {
        &[]
    }
    /// Parameters (native names, text values) that make a run of this workload small: a few
    /// milliseconds of work per event, little memory and few files, for the conformance tests
    /// and smoke runs. The caller adds where it may write (`dir`, `db_url`). Default: none.
    fn small_params(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    /// Adds the parameters that follow from the ones given (`db_url` names the driver, so the
    /// saved `db_driver` is the one used); applied by [`Workload::resolve`] before the
    /// parameters are resolved. Default: none.
    fn derive_params(&self, overrides: &mut Vec<(String, String)>) {
        let _ = overrides;
    }
    /// This workload's parameters from `overrides` (native names, text values) over the
    /// defaults, after [`Workload::derive_params`]: how every front-end resolves them.
    fn resolve(&self, overrides: &[(String, String)]) -> Result<Params, ParamError> {
        let mut ov = overrides.to_vec();
        self.derive_params(&mut ov);
        Params::resolve(self.id(), self.params(), &ov)
    }
    /// The counters this workload fills (beyond events), in report order.
    fn counters(&self) -> &'static [Counter] {
        &[]
    }
    /// The figures people quote for a run of this workload, headline first (see
    /// [`RunResult::default_figures`]).
    fn figures(&self, r: &RunResult) -> Vec<Figure> {
        r.default_figures()
    }
    /// Checks what only the workload understands in its parameters (a fio job string), so a
    /// suite can refuse a bad entry when it loads instead of when the entry's turn comes.
    /// Cheap and side-effect free: no files, no connections. Default: nothing to check.
    fn check(&self, params: &Params) -> Result<(), WorkloadError> {
        let _ = params;
        Ok(())
    }
    /// Builds the shared state of one run.
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError>;
    /// Runs a step outside the measured run (sysbench's `prepare` and `cleanup`): lays out
    /// files, creates and loads tables, removes them. Lines for the report go to `log`, never
    /// to stdout directly; a long step reports progress and checks [`StageLog::interrupted`].
    /// The default is sysbench's "does not implement".
    fn stage(
        &self,
        stage: Stage,
        ctx: &SetupCtx<'_>,
        log: &dyn StageLog,
    ) -> Result<StageDone, WorkloadError> {
        let _ = (stage, ctx, log);
        Ok(StageDone::NotImplemented)
    }
}

/// A step outside the measured run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Lay out what `run` needs (files, tables).
    Prepare,
    /// Remove what `prepare` made, and only that.
    Cleanup,
}

impl Stage {
    /// The command word (`prepare`, `cleanup`).
    pub fn name(self) -> &'static str {
        match self {
            Stage::Prepare => "prepare",
            Stage::Cleanup => "cleanup",
        }
    }
}

/// What [`Workload::stage`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageDone {
    /// The step ran to the end.
    Done,
    /// Ctrl-C stopped it; what it left behind is marked so that a run will not trust it.
    Interrupted,
    /// This workload has no such step (sysbench prints "does not implement" and exits 1).
    NotImplemented,
}

/// Where a stage reports: report lines (stdout, in the grammar's layout) and progress (a bar
/// with an ETA on stderr when it is a terminal).
pub trait StageLog: Sync {
    /// One line of the stage's report, without the newline.
    fn line(&self, line: &str);
    /// `done` of `total` units (bytes, rows) of `what` are finished.
    fn progress(&self, what: &str, done: u64, total: u64) {
        let _ = (what, done, total);
    }
    /// True once the user pressed Ctrl-C: stop, leave nothing a run would trust, and return
    /// [`StageDone::Interrupted`].
    fn interrupted(&self) -> bool {
        crate::runner::INTERRUPT.load(std::sync::atomic::Ordering::Relaxed)
    }
    /// What a stage that Ctrl-C stopped did about what it had made (`removed the 32 files
    /// it had created in /data`), said with the interruption. Ignored by default.
    fn left_behind(&self, note: &str) {
        let _ = note;
    }
}

/// A [`StageLog`] that keeps its lines (tests, and callers that print them later).
#[derive(Debug, Default)]
pub struct CollectLog(pub std::sync::Mutex<Vec<String>>);

impl StageLog for CollectLog {
    fn line(&self, line: &str) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(line.to_string());
    }
}

/// The shared state of one run; hands out workers.
pub trait Instance: Send + Sync {
    /// The worker for thread `tid`, owning `rng` (that thread's stream).
    fn worker(&self, tid: usize, rng: Rng) -> Result<Worker, WorkloadError>;
    /// Facts about the work worth keeping with the result (e.g. divisions per event).
    /// Asked after the run (and at checkpoints), so it may report what the run found.
    fn facts(&self) -> Vec<(String, f64)> {
        Vec::new()
    }
    /// The server the run talks to, for one line on stderr after setup (a database's
    /// version, address and TLS). Default: none.
    fn server(&self) -> Option<String> {
        None
    }
    /// Result tables (STREAM's kernels, a latency ladder), asked after the run.
    fn tables(&self) -> Vec<Table> {
        Vec::new()
    }
    /// Other latency distributions worth keeping whole (`http.load`: one per phase of a
    /// request), by name, encoded with [`crate::result::encode_histogram`]; asked after the
    /// run. A fleet merges them exactly. Default: none.
    fn histograms(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// fio's statistics (`disk.fio` alone), asked after the run: the result's typed `fio`
    /// section, which fio's layouts render. Default: none.
    fn fio(&self) -> Option<crate::fio_result::FioResult> {
        None
    }
    /// fio's statistics so far, asked while the run goes on (fio's `--status-interval`):
    /// ended clones as they ended, running ones as of their last published snapshot.
    /// Default: none.
    fn fio_live(&self) -> Option<crate::fio_result::FioResult> {
        None
    }
    /// What the user is really measuring with these options, and what to do about it;
    /// asked after the run.
    fn warnings(&self) -> Vec<Warning> {
        Vec::new()
    }
    /// The runner's events time only the harness's loop, the work itself being timed by
    /// the workload apart (fio's file engines: the event is the loop, the clat the file
    /// call): then short events say nothing of the measurement and the result gets no
    /// harness-overhead warning. Default: false.
    fn events_time_the_harness(&self) -> bool {
        false
    }
    /// The clock the run asks for (fio's `clocksource`), read whether this machine trusts
    /// it or not ([`crate::clock::Clock::with_source`]). Default: none, the machine's own
    /// choice ([`crate::clock::Clock::detect`]).
    fn clock_source(&self) -> Option<crate::clock::ClockSource> {
        None
    }
    /// Operations a loop worker abandoned in flight when the run was cut short (Ctrl-C,
    /// forced shutdown): the runner sees only events, not what a loop keeps in flight.
    /// Asked after the run. Default: none.
    fn abandoned(&self) -> u64 {
        0
    }
    /// For loop workers that know whether each of their threads is inside an event (a
    /// Lua script's own `thread_run` between `sb_more_events` and `sb_event_stop`): the
    /// events in flight when the run was cut short. When given, it is the run's count of
    /// unfinished events, and worker threads still running beyond those are reported as
    /// threads left running outside an event instead of being counted as events. Default:
    /// not known (every thread that did not stop counts as one unfinished event).
    fn in_flight(&self) -> Option<u64> {
        None
    }
    /// TCP ports of servers on this machine that the run loads (a web server on loopback),
    /// asked before the run: their processes' CPU time is reported as the server's, not as
    /// other activity. Default: none.
    fn local_server_ports(&self) -> Vec<u16> {
        Vec::new()
    }
}

/// One thread's worker, of either shape.
pub enum Worker {
    /// Timed by the runner, one call per event.
    Event(Box<dyn EventWorker>),
    /// Owns its loop.
    Loop(Box<dyn LoopWorker>),
}

/// What one call of [`EventWorker::event`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// One event ran; count and time it.
    Done,
    /// No event ran and this thread has no more (sysbench's `next_event` returning NULL).
    End,
}

/// A worker the runner drives one event at a time.
pub trait EventWorker: Send {
    /// Called once in the worker's own thread before the start barrier, so the time it
    /// takes is no event's and no part of the measured run (sysbench's `thread_init`): a
    /// worker that must build thread-bound state (a Lua state, which may not move between
    /// threads) builds it here. An error fails the run before it starts. `counters` is the
    /// thread's, as in [`EventWorker::event`].
    fn start(&mut self, counters: &Counters) -> Result<(), WorkloadError> {
        let _ = counters;
        Ok(())
    }
    /// Runs one event. `counters` is this thread's, for reads/writes/bytes and the like.
    fn event(&mut self, counters: &Counters) -> Result<Step, WorkloadError>;
    /// Called once after this thread's last event, before its totals are published (sysbench's
    /// `thread_done`): finishing work that is not an event, such as fsyncing files at the end
    /// or waiting for asynchronous I/O still in flight. What it counts goes into `counters`;
    /// its time is not an event's. Not called after Ctrl-C or an error.
    fn finish(&mut self, counters: &Counters) -> Result<(), WorkloadError> {
        let _ = counters;
        Ok(())
    }
}

/// A worker that owns its loop.
pub trait LoopWorker: Send {
    /// Called once in the worker's own thread before the start barrier (untimed), as
    /// [`EventWorker::start`]: state bound to the thread is built here. An error fails the
    /// run before it starts.
    fn start(&mut self, counters: &Counters) -> Result<(), WorkloadError> {
        let _ = counters;
        Ok(())
    }
    /// Runs until `ctl` says stop, recording every completed operation through `ctl`.
    fn run(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError>;
}
