//! sysbench 1.0.20's output: its header before the first line (a stage's, or the run's with
//! its run mode and test mode), "Threads started!", interval lines, checkpoints, the
//! workers-done lines at verbosity ≥ 4 and the final report; `--format=json|csv` print the
//! structured result instead. The database an OLTP run talks to is named on stderr with the
//! header, so stdout stays sysbench's.

use super::{Presenter, RunInfo};
use crate::exec::out;
use anyhow::Result;
use hostbench_core::result::{Interval, RunResult};
use hostbench_core::runner::StopReason;
use hostbench_report::{csv, json, sysbench};
use std::sync::atomic::{AtomicBool, Ordering};

/// What `--format` asks of the sysbench grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SysbenchFormat {
    /// sysbench's own text.
    Text,
    /// The JSON result.
    Json,
    /// One CSV row.
    Csv,
}

/// sysbench's output, shaped by its general options.
#[derive(Debug)]
pub struct SysbenchOut {
    /// `--format`.
    pub format: SysbenchFormat,
    /// `--verbosity` 0..5 (3 = reports; 0 = nothing).
    pub verbosity: u8,
    /// `--histogram`.
    pub histogram: bool,
    /// The user gave a seed (sysbench says so in its header).
    pub seed_given: bool,
    /// `--debug` (the header says so; verbosity is 5).
    pub debug: bool,
    /// `--validate` (the header says so; hostbench's workloads always check).
    pub validate: bool,
    /// `hostbench run -q --format sysbench`: the report without warnings on stderr.
    pub quiet: bool,
    /// The header has been printed (once, before a stage's first line).
    header_done: AtomicBool,
}

impl Default for SysbenchOut {
    fn default() -> Self {
        SysbenchOut {
            format: SysbenchFormat::Text,
            verbosity: 3,
            histogram: false,
            seed_given: false,
            debug: false,
            validate: false,
            quiet: false,
            header_done: AtomicBool::new(false),
        }
    }
}

impl SysbenchOut {
    /// Prints the header now, if the text layout wants it and it has not been printed (a
    /// Lua script's output comes from its body, before anything else).
    #[cfg_attr(not(feature = "lua"), allow(dead_code))]
    pub fn header_now(&self, run: &RunInfo) {
        if self.text() {
            self.header_once(run);
        }
    }

    /// One interval line; `sql`: in sysbench's SQL layout (a Lua run that used a driver
    /// asks for it).
    pub fn interval_as(&self, run: &RunInfo, i: &Interval, sql: bool) {
        if self.text() {
            out(&sysbench::interval_line(
                i,
                run.workload.id(),
                &run.plan.params,
                sql,
            ));
        }
    }

    /// sysbench's text at verbosity ≥ 3.
    fn text(&self) -> bool {
        self.format == SysbenchFormat::Text && self.verbosity >= 3
    }

    /// The database target on stderr and the header on stdout, once.
    fn header_once(&self, run: &RunInfo) {
        if !self.header_done.swap(true, Ordering::Relaxed) {
            if let Some(t) = sysbench::db_target(run.workload.id(), &run.plan.params) {
                eprint!("{t}");
            }
            out(&sysbench::header(env!("CARGO_PKG_VERSION")));
        }
    }
}

impl Presenter for SysbenchOut {
    fn verbosity(&self) -> u8 {
        self.verbosity
    }

    fn stage_line(&self, run: &RunInfo, line: &str) {
        if self.verbosity < 3 {
            return;
        }
        if self.format == SysbenchFormat::Text {
            self.header_once(run);
        }
        out(&format!("{line}\n"));
    }

    fn before_run(&self, run: &RunInfo) {
        if !self.text() {
            return;
        }
        self.header_once(run);
        let plan = run.plan;
        let mut s = sysbench::run_mode(&sysbench::RunMode {
            threads: plan.threads,
            warmup_s: plan.warmup_s,
            rate: plan.rate,
            report_interval_s: plan.report_interval_s,
            checkpoints: &plan.report_checkpoints,
            seed: self.seed_given.then_some(plan.seed),
            forced_shutdown_s: plan.forced_shutdown_s,
            time_s: plan.time_s,
            debug: self.debug,
            validate: self.validate,
        });
        s.push_str(&sysbench::test_mode_with_events(
            run.workload.id(),
            &plan.params,
            plan.events,
            self.verbosity,
        ));
        out(&s);
    }

    fn started(&self, _run: &RunInfo) {
        if self.text() {
            out(sysbench::started());
        }
    }

    fn interval(&self, run: &RunInfo, i: &Interval) {
        self.interval_as(run, i, sysbench::is_sql(run.workload.id()));
    }

    fn warnings(&self, r: &RunResult) {
        if self.verbosity >= 2 && !self.quiet {
            super::print_warnings(r, false);
        }
    }

    fn wants_checkpoints(&self) -> bool {
        self.text()
    }

    fn checkpoint(&self, r: &RunResult) {
        out(&sysbench::checkpoint(r));
    }

    fn report(&self, run: &RunInfo, r: &RunResult) -> Result<()> {
        match self.format {
            SysbenchFormat::Text if self.verbosity >= 3 => {
                if self.verbosity >= 4 {
                    let stop = r.outcome.stop_reason;
                    out(&sysbench::workers_done(
                        matches!(stop, StopReason::TimeLimit | StopReason::ForcedShutdown),
                        stop != StopReason::ForcedShutdown,
                        run.plan.threads,
                    ));
                }
                out(&sysbench::final_report(r, self.histogram));
            }
            SysbenchFormat::Text => {}
            SysbenchFormat::Json => out(&json::render(r)),
            SysbenchFormat::Csv => out(&csv::render(std::slice::from_ref(r))),
        }
        Ok(())
    }
}
