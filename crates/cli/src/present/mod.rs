//! The output object of a grammar: what a command line prints around a run, from the moment
//! the workload is set up to the exit code.
//!
//! Each grammar builds one [`Presenter`] in its front-end and hands it to `exec`, which
//! drives it and knows no grammar: `exec` sets the workload up, calls
//! [`Presenter::before_run`] (sysbench's header, run mode and test mode), runs the plan with
//! [`Presenter::started`] when the clock starts, [`Presenter::interval`] for each interval
//! report, [`Presenter::checkpoint`] for each `--report-checkpoints` and
//! [`Presenter::progress`] for live progress lines, then [`Presenter::report`] with the
//! [`RunResult`], the warnings ([`Presenter::warnings`]), the save ([`Presenter::saved`]) and
//! the exit code ([`Presenter::exit_code`]). A prepare/cleanup stage prints through
//! [`Presenter::stage_line`].
//!
//! The output objects:
//! - [`Plain`]: hostbench's own text, JSON and CSV, or a peer's layout printed after the run
//!   from the result alone (STREAM, IOzone, memlat, wrk, httperf); what most front-ends use.
//! - `sysbench::SysbenchOut` (cli/src/sysbench.rs): sysbench 1.0.20's header, interval
//!   lines, checkpoints and report, with its verbosity levels.
//! - `ab::AbOut`, `fio::FioOut`, `smallfiles::SmallOut`: their peers' reports, each in its
//!   front-end's file.
//! - [`Quiet`]: nothing at all (suites, which print their own summary).
//!
//! A new grammar is a front-end plus, when none of these prints what its peer prints, an
//! output object of its own implementing [`Presenter`].

use anyhow::Result;
use hostbench_core::plan::Plan;
use hostbench_core::result::{Interval, RunResult, WarningKind};
use hostbench_core::runner::StopReason;
use hostbench_core::workload::Workload;
use hostbench_report::{csv, json, native};
use hostbench_store::Location;
use std::process::ExitCode;

use crate::exec::out;

pub mod ab;
pub mod fio;
#[cfg(feature = "lua")]
pub mod lua;
pub mod sysbench;

/// What the output object knows of the run it presents: the plan (its seed resolved) and the
/// workload.
pub struct RunInfo<'a> {
    /// The plan as it runs (a seed of 0 replaced by the one drawn).
    pub plan: &'a Plan,
    /// The workload.
    pub workload: &'a dyn Workload,
}

/// A line on stderr each time the completed events reach a multiple of `every`.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Events between two lines (more than 0).
    pub every: u64,
    /// The line for a count.
    pub line: fn(u64) -> String,
}

/// What a grammar prints around a run; see the module documentation for the order `exec`
/// calls these in. Every method but [`Presenter::report`] has a default that prints
/// nothing or does what most grammars do.
pub trait Presenter: Sync {
    /// sysbench's verbosity scale, which every grammar maps onto: 0 nothing but a structured
    /// report, 2 warnings, 3 the reports (the default), 4 "saved as" and sysbench's
    /// workers-done lines, 5 debug lines.
    fn verbosity(&self) -> u8 {
        3
    }

    /// A line a prepare or cleanup stage reports (fileio's "Creating file test_file.0").
    fn stage_line(&self, _run: &RunInfo, line: &str) {
        if self.verbosity() >= 3 {
            out(&format!("{line}\n"));
        }
    }

    /// After the workload's setup, before its threads start.
    fn before_run(&self, _run: &RunInfo) {}

    /// Whether [`Presenter::starting`] wants the result as it stands before the threads
    /// start (fio's start-up lines, which describe the jobs).
    fn wants_start(&self) -> bool {
        false
    }

    /// The result before anything ran (nothing measured), just before the threads start.
    fn starting(&self, _r: &RunResult) {}

    /// When the measured time starts (all threads ready).
    fn started(&self, _run: &RunInfo) {}

    /// One interval report (`--report-interval`); called on the runner's controller thread.
    fn interval(&self, _run: &RunInfo, _i: &Interval) {}

    /// Whether [`Presenter::checkpoint`] wants the cumulative result at each checkpoint
    /// (building it costs a merge of every thread's histogram).
    fn wants_checkpoints(&self) -> bool {
        false
    }

    /// The cumulative result at a `--report-checkpoints` time.
    fn checkpoint(&self, _r: &RunResult) {}

    /// Whether [`Presenter::live_result`] wants the result so far at each interval tick
    /// (fio's `--status-interval`: full reports of the jobs so far).
    fn wants_live_results(&self) -> bool {
        false
    }

    /// The result so far, at an interval tick (counters not reset).
    fn live_result(&self, _r: &RunResult) {}

    /// Live progress lines on stderr (ab's "Completed N requests").
    fn progress(&self) -> Option<Progress> {
        None
    }

    /// The report after the run, on stdout or in the file the user named.
    fn report(&self, run: &RunInfo, r: &RunResult) -> Result<()>;

    /// The run's warnings, on stderr (at verbosity ≥ 2; see [`print_warnings`]).
    fn warnings(&self, r: &RunResult) {
        if self.verbosity() >= 2 {
            print_warnings(r, self.count_is_the_request());
        }
    }

    /// Whether a run that did the number of events the user asked for (ab's `-n`,
    /// httperf's `--num-conns`) did what was asked: then "only N events completed" is not
    /// said on stderr (it stays in the result).
    fn count_is_the_request(&self) -> bool {
        false
    }

    /// Says where the result was saved: `saved` is `Ok(None)` when saving is off, the error
    /// when the save failed (one WARNING line; never changes the exit code), `ms` how long
    /// it took. By default "saved as" is said at verbosity ≥ 4 only.
    fn saved(&self, r: &RunResult, saved: Result<Option<Location>>, ms: f64) {
        say_saved(r, saved, ms, self.verbosity() >= 4, self.verbosity());
    }

    /// The exit code for the run's outcome; a failed run's error on stderr.
    fn exit_code(&self, r: &RunResult) -> ExitCode {
        exit_code(r, "FATAL: ", "a worker failed")
    }
}

/// The run's warnings on stderr, one `WARNING:` line each. A run where nothing completed
/// because requests failed does not add "too few events": that only restates it; nor does
/// one that did the count the user asked for when `asked_count` (ab's `-n 5`).
///
/// `HOSTBENCH_NO_WARNINGS=1` leaves them off stderr (a script that merges stderr into what
/// it parses); they stay in the saved result (`hostbench results show`).
pub fn print_warnings(r: &RunResult, asked_count: bool) {
    if std::env::var_os("HOSTBENCH_NO_WARNINGS").is_some_and(|v| v == "1") {
        return;
    }
    let failed_empty = r.metrics.events == 0
        && (r.outcome.stop_reason == StopReason::Error
            || r.warnings.iter().any(|w| w.kind == WarningKind::Errors));
    let as_asked = asked_count && r.outcome.stop_reason == StopReason::EventLimit;
    for w in r
        .warnings
        .iter()
        .filter(|w| !((failed_empty || as_asked) && w.kind == WarningKind::FewEvents))
    {
        eprintln!("WARNING: {}", w.message);
    }
}

/// [`Presenter::saved`]'s lines: nothing when saving is off, "saved as" when `announce`
/// (with the time it took at verbosity 5), a WARNING when it failed.
pub fn say_saved(
    r: &RunResult,
    saved: Result<Option<Location>>,
    ms: f64,
    announce: bool,
    verbosity: u8,
) {
    match saved {
        Ok(None) => {}
        Ok(Some(loc)) => {
            if verbosity >= 5 {
                eprintln!("DEBUG: saved as {} in {loc} ({ms:.2} ms)", r.id);
            } else if announce {
                eprintln!("saved as {} in {loc}", r.id);
            }
        }
        Err(e) => eprintln!("WARNING: the result was not saved: {e}"),
    }
}

/// The exit code every grammar uses: 0 for a run that ended as planned, 1 for a failed run
/// (its error on stderr after `prefix`, or `otherwise`), 2 for a forced shutdown, 128 + the
/// signal for a run stopped by SIGINT/SIGTERM/SIGHUP.
pub fn exit_code(r: &RunResult, prefix: &str, otherwise: &str) -> ExitCode {
    match r.outcome.stop_reason {
        StopReason::Error => {
            eprintln!(
                "{prefix}{}",
                r.outcome.error.as_deref().unwrap_or(otherwise)
            );
            ExitCode::from(1)
        }
        StopReason::ForcedShutdown => ExitCode::from(2),
        StopReason::Interrupted => crate::interrupted_exit(),
        _ => ExitCode::SUCCESS,
    }
}

/// What [`Plain`] prints.
#[derive(Debug, Clone, Copy)]
pub enum Text {
    /// hostbench's own text, with interval lines.
    Native,
    /// The JSON result (intervals are in it: nothing else on stdout).
    Json,
    /// One CSV row.
    Csv,
    /// A peer's layout printed after the run, from the result alone (STREAM's table).
    Layout(fn(&RunResult) -> String),
}

/// hostbench's own reports and the peers' layouts that need nothing but the result.
#[derive(Debug, Clone)]
pub struct Plain {
    /// What to print.
    pub text: Text,
    /// 0: only a structured report (JSON/CSV); 2: warnings; 3: reports (the default).
    pub verbosity: u8,
    /// Printed on stdout when the run starts (wrk's `Running 10s test @ URL`, httperf's
    /// echo of its command line).
    pub started: Option<String>,
    /// Live progress lines on stderr.
    pub progress: Option<Progress>,
    /// The grammar's event count is the user's request (httperf's `--num-conns`): a run
    /// that did it is not told it did "only" that many.
    pub count_is_the_request: bool,
    /// `-q`: no warnings on stderr, whatever the verbosity (a text report keeps verbosity 3
    /// to be printed; the warnings stay in the result).
    pub quiet: bool,
}

impl Plain {
    /// `text` at the default verbosity, nothing at the start, no progress lines.
    pub fn new(text: Text) -> Plain {
        Plain {
            text,
            verbosity: 3,
            started: None,
            progress: None,
            count_is_the_request: false,
            quiet: false,
        }
    }
}

impl Presenter for Plain {
    fn verbosity(&self) -> u8 {
        self.verbosity
    }

    fn started(&self, _run: &RunInfo) {
        if let Some(t) = &self.started {
            out(t);
        }
    }

    fn interval(&self, run: &RunInfo, i: &Interval) {
        let _ = run;
        if self.verbosity >= 3 && matches!(self.text, Text::Native) {
            out(&native::interval_line(i));
        }
    }

    fn progress(&self) -> Option<Progress> {
        self.progress
    }

    fn count_is_the_request(&self) -> bool {
        self.count_is_the_request
    }

    fn warnings(&self, r: &RunResult) {
        if self.verbosity >= 2 && !self.quiet {
            print_warnings(r, self.count_is_the_request);
        }
    }

    fn report(&self, _run: &RunInfo, r: &RunResult) -> Result<()> {
        let text = self.verbosity >= 3;
        match self.text {
            Text::Native if text => out(&native::render_with(
                r,
                Some(hostbench_core::compare::ShortValue(
                    crate::compare::short_value,
                )),
            )),
            Text::Json => out(&json::render(r)),
            Text::Csv => out(&csv::render(std::slice::from_ref(r))),
            Text::Layout(render) if text => out(&render(r)),
            _ => {}
        }
        Ok(())
    }

    fn saved(&self, r: &RunResult, saved: Result<Option<Location>>, ms: f64) {
        // hostbench's own text says where the run went; the peers' layouts do not (their
        // users parse stderr too).
        let announce =
            self.verbosity >= 4 || (self.verbosity >= 3 && matches!(self.text, Text::Native));
        say_saved(r, saved, ms, announce, self.verbosity);
    }
}

/// Prints nothing: suites run their entries through it and print their own summary.
pub struct Quiet;

impl Presenter for Quiet {
    fn verbosity(&self) -> u8 {
        0
    }

    fn report(&self, _run: &RunInfo, _r: &RunResult) -> Result<()> {
        Ok(())
    }
}
