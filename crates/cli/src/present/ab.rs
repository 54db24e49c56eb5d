//! ab's own report (and its `-w` HTML table): after the run, "Finished N requests" on stderr
//! when ab's heartbeat was on, then the report shaped by `-d`/`-S`, or the HTML table, as
//! the layout options stored in the result say. The banner and the Benchmarking line are
//! printed by the front-end before the run starts, as ab does, so a long run does not look
//! hung; the `-e`/`-g` files are the front-end's too.

use super::{Presenter, Progress, RunInfo};
use crate::exec::out;
use anyhow::Result;
use hostbench_core::result::RunResult;
use hostbench_core::runner::StopReason;

/// ab's report after the run (its shape is in the result's layout options).
#[derive(Debug, Clone)]
pub struct AbOut {
    /// ab's heartbeat: "Completed N requests" lines during the run and "Finished N
    /// requests" after it, on stderr.
    pub heartbeat: Option<Progress>,
}

impl Presenter for AbOut {
    fn progress(&self) -> Option<Progress> {
        self.heartbeat
    }

    /// `-n 5` asked for 5 requests: doing them is not "only 5".
    fn count_is_the_request(&self) -> bool {
        true
    }

    fn report(&self, _run: &RunInfo, r: &RunResult) -> Result<()> {
        // ab's last heartbeat line, after the "Completed N requests" lines, unless a socket
        // error ended the run (no report then).
        if self.heartbeat.is_some() && r.outcome.stop_reason != StopReason::Error {
            eprintln!("Finished {} requests", r.metrics.events);
        }
        // The banner was printed before the run; `-w`'s HTML has none.
        let html = hostbench_report::ab::layout_of(r).html.is_some();
        out(&if html {
            hostbench_report::ab::render(r)
        } else {
            hostbench_report::ab::render_with(r, true)
        });
        Ok(())
    }
}
