//! fio's output: the "Laying out IO file" lines of the prepare stage kept (the front-end
//! stores them in the result's layout options, from which the normal layout prints them
//! after fio's start-up lines; on stdout, start-up and layout lines are printed when the
//! jobs start, as fio's), then the report in every format of `--output-format`
//! (normal, json, json+, terse, in fio's order; or hostbench's own JSON result), on stdout
//! or in `--output=FILE`.
//! Diagnostics go to stderr only, so JSON output always parses; a failed run says
//! `fio: error: ...` as fio does.

use super::{Presenter, RunInfo, exit_code, print_warnings, say_saved};
use crate::exec::out;
use anyhow::Result;
use hostbench_core::layout::{FioFormat, FioLayout};
use hostbench_core::result::RunResult;
use hostbench_core::runner::StopReason;
use hostbench_store::Location;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

/// fio's report after the run.
#[derive(Debug)]
pub struct FioOut {
    /// `--output-format` (every format selected) and `--terse-version`.
    pub formats: FioLayout,
    /// `--output-format=hostbench-json`: the whole hostbench result instead.
    pub hostbench_json: bool,
    /// `--output=FILE`.
    pub output: Option<PathBuf>,
    /// `--results-db`, which `--output` must never overwrite.
    pub results_db: Option<String>,
    /// The prepare stage's lines, kept for the normal layout.
    layout: Mutex<Vec<String>>,
    /// `--status-interval`: full reports while the jobs run.
    pub status_interval: bool,
    /// The reports printed so far while the jobs ran (with `--output`: written before the
    /// final one), and whether the start-up lines were among them.
    interim: Mutex<(String, bool)>,
}

impl FioOut {
    /// The output `--output-format` and `--output` ask for.
    pub fn new(
        formats: FioLayout,
        hostbench_json: bool,
        output: Option<PathBuf>,
        results_db: Option<String>,
    ) -> FioOut {
        FioOut {
            formats,
            hostbench_json,
            output,
            results_db,
            layout: Mutex::new(Vec::new()),
            status_interval: false,
            interim: Mutex::new((String::new(), false)),
        }
    }

    /// fio's normal layout (alone or with others) on stdout: the only one with the layout
    /// lines.
    fn normal_on_stdout(&self) -> bool {
        self.formats.has(FioFormat::Normal) && !self.hostbench_json && self.output.is_none()
    }

    /// The layout lines kept so far (they go into the result's layout options, from which
    /// the normal layout prints them).
    pub fn layout_lines(&self) -> Vec<String> {
        self.layout
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Prints the kept layout lines (the stage or the run failed: no report will carry
    /// them).
    pub fn flush_layout(&self) {
        for l in self
            .layout
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            out(&format!("{l}\n"));
        }
    }
}

impl Presenter for FioOut {
    /// 3 (the layout lines, a progress bar while laying out) in fio's normal layout on
    /// stdout; 0 otherwise, so nothing but the report reaches stdout.
    fn verbosity(&self) -> u8 {
        if self.normal_on_stdout() { 3 } else { 0 }
    }

    fn stage_line(&self, _run: &RunInfo, line: &str) {
        if self.normal_on_stdout() {
            self.layout
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(line.to_string());
        }
    }

    /// fio's start-up lines go first, before the jobs start and their status line
    /// (`--eta`) with them, when the normal layout goes to stdout.
    fn wants_start(&self) -> bool {
        self.normal_on_stdout()
    }

    /// (The layout lines go with them: printed now, not again if the run fails.)
    fn starting(&self, r: &RunResult) {
        let mut l = self.formats.clone();
        l.laid_out = std::mem::take(&mut *self.layout.lock().unwrap_or_else(|e| e.into_inner()));
        let text = hostbench_report::fio::start_lines(r, &l);
        let mut g = self.interim.lock().unwrap_or_else(|e| e.into_inner());
        out(&text);
        g.1 = true;
    }

    fn wants_live_results(&self) -> bool {
        self.status_interval && !self.hostbench_json
    }

    /// fio's `--status-interval`: the whole report of the jobs so far, in every format,
    /// the start-up lines only before the first.
    fn live_result(&self, r: &RunResult) {
        let mut l = self.formats.clone();
        l.laid_out = self.layout_lines();
        let mut g = self.interim.lock().unwrap_or_else(|e| e.into_inner());
        let text = hostbench_report::fio::render_status(r, &l, !g.1);
        g.1 = true;
        if self.output.is_some() {
            g.0.push_str(&text);
        } else {
            out(&text);
        }
    }

    fn report(&self, _run: &RunInfo, r: &RunResult) -> Result<()> {
        let (interim, banner_done) = {
            let mut g = self.interim.lock().unwrap_or_else(|e| e.into_inner());
            (std::mem::take(&mut g.0), g.1)
        };
        // fio's line when a stop signal ends the run, before the report (in it with the
        // normal layout, as fio's: `render_final` writes it; on stderr otherwise, so JSON
        // and terse stay parsable).
        let stopped_in_report = !self.hostbench_json && self.formats.has(FioFormat::Normal);
        if let Some(sig) = hostbench_report::fio::stop_signal(r).filter(|_| !stopped_in_report) {
            eprintln!("fio: terminating on signal {sig}");
        }
        let report = if self.hostbench_json {
            hostbench_report::json::render(r)
        } else {
            // Every format selected, as the result records them (fio's order).
            let mut l = self.formats.clone();
            l.laid_out = hostbench_report::fio::layout_of(r).laid_out;
            // After interim reports the start-up lines were printed with the first.
            let last = hostbench_report::fio::render_final(r, &l, !banner_done);
            format!("{interim}{last}")
        };
        match &self.output {
            Some(path) => crate::output::write(
                path,
                report.as_bytes(),
                "fio: --output",
                self.results_db.as_deref(),
            ),
            None => {
                out(&report);
                Ok(())
            }
        }
    }

    /// Every warning, whatever the format: they go to stderr, never into the report.
    fn warnings(&self, r: &RunResult) {
        print_warnings(r, false);
    }

    /// Silent unless the save failed.
    fn saved(&self, r: &RunResult, saved: Result<Option<Location>>, ms: f64) {
        say_saved(r, saved, ms, false, 0);
    }

    /// fio's exit status: the number of clones that ended with an error (their jobs'
    /// `err=`; the run's outcome is `error` then, its warning says which), else 1 when the
    /// run failed, else 0.
    fn exit_code(&self, r: &RunResult) -> ExitCode {
        let fio = r.fio.as_ref();
        let failed: u32 = fio
            .iter()
            .flat_map(|f| &f.blocks)
            .filter_map(|b| b.error.as_ref())
            .map(|e| e.clones)
            .sum();
        let jobs_failed =
            r.outcome.stop_reason == StopReason::Error && failed > 0 && !r.failed_beyond_jobs();
        if jobs_failed {
            return ExitCode::from(failed.min(255) as u8);
        }
        if matches!(
            r.outcome.stop_reason,
            StopReason::Error | StopReason::Interrupted | StopReason::ForcedShutdown
        ) {
            return exit_code(r, "fio: error: ", "a job failed");
        }
        ExitCode::from(failed.min(255) as u8)
    }
}
