//! The output of a sysbench Lua script's run: sysbench's output ([`SysbenchOut`]) unless
//! the script sets report hooks. `sysbench.hooks.report_intermediate` replaces the
//! interval line and `report_cumulative` the whole final report (§1.6 of the reference
//! notes); after the final report the script's `done()` runs, as in sysbench. The hooks
//! run in the script's states on the main thread, which is where the runner calls
//! `interval` (its controller) and exec calls `report`.

use super::sysbench::SysbenchOut;
use super::{Presenter, RunInfo};
use anyhow::Result;
use hostbench_core::result::{Interval, RunResult};
use hostbench_core::runner::StopReason;
use hostbench_store::Location;
use hostbench_workloads::lua::script::{self, Stat};
use std::process::ExitCode;

/// sysbench's output with the script's hooks.
pub struct LuaOut {
    /// What prints when the script sets no hook.
    pub inner: SysbenchOut,
    /// `sysbench.hooks.report_intermediate` is set.
    pub intermediate: bool,
    /// `sysbench.hooks.report_cumulative` is set.
    pub cumulative: bool,
}

fn pct(l: &hostbench_core::recorder::LatencySummary) -> f64 {
    l.percentiles
        .iter()
        .find(|p| p.p > 0.0)
        .map_or(0.0, |p| p.ns as f64 / 1e9)
}

fn count(per_s: &std::collections::BTreeMap<String, f64>, k: &str, secs: f64) -> u64 {
    per_s.get(k).map_or(0, |v| (v * secs).round() as u64)
}

/// The hook's view of one interval.
pub fn interval_stat(i: &Interval) -> Stat {
    let c = |k| count(&i.counters_per_s, k, i.elapsed_s);
    Stat {
        threads_running: i.threads as u64,
        time_interval: i.elapsed_s,
        time_total: i.t_s,
        latency_pct: pct(&i.latency),
        events: i.events,
        reads: c("reads"),
        writes: c("writes"),
        other: c("other"),
        errors: c("errors"),
        reconnects: c("reconnects"),
        queue_length: i.queue_len.unwrap_or(0),
        concurrency: i.concurrency.unwrap_or(0),
        latency: None,
    }
}

/// The hook's view of the whole run.
pub fn cumulative_stat(r: &RunResult) -> Stat {
    let m = &r.metrics;
    let c = |k: &str| m.counters.get(k).copied().unwrap_or(0);
    let l = &r.latency;
    Stat {
        threads_running: 0,
        time_interval: m.duration_s,
        time_total: m.duration_s,
        latency_pct: l
            .percentiles
            .iter()
            .find(|p| p.p > 0.0)
            .map_or(0.0, |p| p.ns as f64 / 1e9),
        events: m.events,
        reads: c("reads"),
        writes: c("writes"),
        other: c("other"),
        errors: c("errors"),
        reconnects: c("reconnects"),
        queue_length: 0,
        concurrency: 0,
        latency: Some((
            l.min_ns as f64 / 1e9,
            l.max_ns as f64 / 1e9,
            l.avg_ns as f64 / 1e9,
            l.sum_ns as f64 / 1e9,
        )),
    }
}

impl Presenter for LuaOut {
    fn verbosity(&self) -> u8 {
        self.inner.verbosity()
    }

    fn stage_line(&self, run: &RunInfo, line: &str) {
        self.inner.stage_line(run, line);
    }

    fn before_run(&self, run: &RunInfo) {
        self.inner.before_run(run);
    }

    fn started(&self, run: &RunInfo) {
        if run.plan.report_interval_s > 0.0 {
            // sysbench's reporter state exists from the start of a run with intervals.
            script::start_reporter();
        }
        self.inner.started(run);
    }

    fn interval(&self, run: &RunInfo, i: &Interval) {
        if self.intermediate {
            hostbench_workloads::lua::state::flush_stdio();
            script::report_intermediate(&interval_stat(i));
        } else {
            // sysbench's SQL line once a script has initialised a driver.
            let sql = hostbench_workloads::lua::sql::driver_used();
            self.inner.interval_as(run, i, sql);
        }
    }

    fn wants_checkpoints(&self) -> bool {
        self.inner.wants_checkpoints()
    }

    fn checkpoint(&self, r: &RunResult) {
        self.inner.checkpoint(r);
    }

    fn report(&self, run: &RunInfo, r: &RunResult) -> Result<()> {
        if r.outcome.stop_reason == StopReason::Error {
            // sysbench: a failed thread sets its global error flag; no final report and no
            // done() follow.
            script::close_reporter();
            return Ok(());
        }
        if self.cumulative {
            hostbench_workloads::lua::state::flush_stdio();
            script::report_cumulative(&cumulative_stat(r));
        } else {
            self.inner.report(run, r)?;
        }
        hostbench_workloads::lua::state::flush_stdio();
        script::close_reporter();
        if let Err(e) = script::done() {
            eprintln!("FATAL: {e}");
        }
        Ok(())
    }

    fn warnings(&self, r: &RunResult) {
        self.inner.warnings(r);
    }

    fn saved(&self, r: &RunResult, saved: Result<Option<Location>>, ms: f64) {
        self.inner.saved(r, saved, ms);
    }

    fn exit_code(&self, r: &RunResult) -> ExitCode {
        if r.outcome.stop_reason != StopReason::Error {
            return self.inner.exit_code(r);
        }
        // sysbench's lines: the Lua message without the runner's "thread N: ".
        let msg = r.outcome.error.as_deref().unwrap_or("a worker failed");
        let msg = match msg.split_once(": ") {
            Some((t, rest)) if t.starts_with("thread ") => rest,
            _ => msg,
        };
        eprintln!("FATAL: {msg}");
        if msg.starts_with("`thread_init'") {
            eprintln!("FATAL: Thread initialization failed!");
        }
        ExitCode::from(1)
    }
}

/// hostbench's own output of the `lua` workload (`hostbench run lua --set script=...`,
/// `--set code=...`) with what a script expects around its run, as [`LuaOut`] gives the
/// sysbench front-end: `report_intermediate` replaces the interval line and
/// `report_cumulative` the final report when the output is text (JSON and CSV keep their
/// own report, which must stay machine-readable), and `done()` runs after the report. The
/// main state is loaded by the workload's setup, so the hooks are looked up when they are
/// needed.
pub struct LuaHooks<'a> {
    /// The grammar's own output object.
    pub inner: &'a dyn Presenter,
    /// The output is text: the script's hooks may print in it.
    pub hooks: bool,
}

impl LuaHooks<'_> {
    fn hook(&self, name: &str) -> bool {
        self.hooks && script::has_hook(name)
    }
}

impl Presenter for LuaHooks<'_> {
    fn verbosity(&self) -> u8 {
        self.inner.verbosity()
    }

    fn stage_line(&self, run: &RunInfo, line: &str) {
        self.inner.stage_line(run, line);
    }

    fn before_run(&self, run: &RunInfo) {
        self.inner.before_run(run);
    }

    fn started(&self, run: &RunInfo) {
        if run.plan.report_interval_s > 0.0 && self.hook("report_intermediate") {
            script::start_reporter();
        }
        self.inner.started(run);
    }

    fn interval(&self, run: &RunInfo, i: &Interval) {
        if self.hook("report_intermediate") {
            hostbench_workloads::lua::state::flush_stdio();
            script::report_intermediate(&interval_stat(i));
        } else {
            self.inner.interval(run, i);
        }
    }

    fn wants_checkpoints(&self) -> bool {
        self.inner.wants_checkpoints()
    }

    fn checkpoint(&self, r: &RunResult) {
        self.inner.checkpoint(r);
    }

    fn progress(&self) -> Option<super::Progress> {
        self.inner.progress()
    }

    fn report(&self, run: &RunInfo, r: &RunResult) -> Result<()> {
        if r.outcome.stop_reason == StopReason::Error {
            // As in sysbench: no final report hook and no done() after a failed thread;
            // hostbench's own report still says what failed.
            script::close_reporter();
            return self.inner.report(run, r);
        }
        if self.hook("report_cumulative") {
            hostbench_workloads::lua::state::flush_stdio();
            script::report_cumulative(&cumulative_stat(r));
        } else {
            self.inner.report(run, r)?;
        }
        hostbench_workloads::lua::state::flush_stdio();
        script::close_reporter();
        if let Err(e) = script::done() {
            eprintln!("FATAL: {e}");
        }
        hostbench_workloads::lua::state::flush_stdio();
        Ok(())
    }

    fn warnings(&self, r: &RunResult) {
        self.inner.warnings(r);
    }

    fn count_is_the_request(&self) -> bool {
        self.inner.count_is_the_request()
    }

    fn saved(&self, r: &RunResult, saved: Result<Option<Location>>, ms: f64) {
        self.inner.saved(r, saved, ms);
    }

    fn exit_code(&self, r: &RunResult) -> ExitCode {
        self.inner.exit_code(r)
    }
}
