//! The suite's progress bar on stderr: how far through the suite's estimated time it is, an
//! ETA, and the entry and repetition running now.
//!
//! Shown only when stderr is a terminal (and `TERM` is not `dumb`) and `--quiet` is not given;
//! otherwise every method is a no-op and nothing at all is written, so piped or redirected
//! stderr stays free of escape codes. Colours follow `NO_COLOR`.
//!
//! The runner blocks the main thread for the length of a run, so a small ticker thread moves
//! the bar along the run's own estimate (its time limit) and refreshes the ETA; the bar is
//! measured in tenths of estimated seconds.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Whether a progress bar should be drawn: stderr is a terminal that can draw one and the
/// user did not ask for quiet.
pub fn wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal() && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

#[derive(Debug)]
struct State {
    /// Estimated seconds of the runs already finished (tenths).
    done: u64,
    /// Start and estimate (tenths) of the run in progress.
    run: Option<(Instant, u64)>,
    /// What is running.
    what: String,
}

/// A suite's progress bar (or nothing).
pub struct Progress {
    bar: Option<ProgressBar>,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

fn tenths(s: f64) -> u64 {
    (s.max(0.0) * 10.0).round() as u64
}

fn eta_text(tenths_left: u64) -> String {
    let s = tenths_left.div_ceil(10);
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

impl Progress {
    /// A bar for suite `name` whose runs are estimated to take `estimate_s`; hidden unless
    /// `show`.
    pub fn new(show: bool, name: &str, estimate_s: f64) -> Progress {
        let state = Arc::new(Mutex::new(State {
            done: 0,
            run: None,
            what: String::new(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        if !show {
            return Progress {
                bar: None,
                state,
                stop,
                ticker: None,
            };
        }
        let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let template = if colour {
            "{prefix:.bold} [{bar:30.cyan/blue}] {percent:>3}% {wide_msg}"
        } else {
            "{prefix} [{bar:30}] {percent:>3}% {wide_msg}"
        };
        let style = ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        let bar = ProgressBar::with_draw_target(
            Some(tenths(estimate_s).max(1)),
            ProgressDrawTarget::stderr(),
        )
        .with_style(style)
        .with_prefix(format!("suite {name}"));
        let ticker = {
            let (bar, state, stop) = (bar.clone(), state.clone(), stop.clone());
            std::thread::Builder::new()
                .name("progress".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        Self::draw(&bar, &state);
                        std::thread::sleep(Duration::from_millis(100));
                    }
                })
                .ok()
        };
        Progress {
            bar: Some(bar),
            state,
            stop,
            ticker,
        }
    }

    fn draw(bar: &ProgressBar, state: &Mutex<State>) {
        let Ok(s) = state.lock() else { return };
        let in_run = s
            .run
            .map_or(0, |(t0, est)| tenths(t0.elapsed().as_secs_f64()).min(est));
        let pos = s.done + in_run;
        let len = bar.length().unwrap_or(pos).max(pos);
        bar.set_position(pos);
        bar.set_message(format!("ETA {}  {}", eta_text(len - pos), s.what));
    }

    /// A run of `what` starts, estimated to take `estimate_s`.
    pub fn run_started(&self, what: String, estimate_s: f64) {
        if let Ok(mut s) = self.state.lock() {
            s.what = what;
            s.run = Some((Instant::now(), tenths(estimate_s)));
        }
    }

    /// The run in progress ended; the bar moves to the end of its estimate.
    pub fn run_finished(&self) {
        if let Ok(mut s) = self.state.lock()
            && let Some((_, est)) = s.run.take()
        {
            s.done += est;
        }
    }

    /// An entry needs `estimate_s` more than planned (another repetition), or less (it was
    /// stable early; negative).
    pub fn adjust(&self, estimate_s: f64) {
        if let Some(bar) = &self.bar {
            let delta = tenths(estimate_s.abs());
            let len = bar.length().unwrap_or(0);
            bar.set_length(if estimate_s >= 0.0 {
                len + delta
            } else {
                len.saturating_sub(delta).max(1)
            });
        }
    }

    /// Runs `f` with the bar cleared, for writing to stderr.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// Removes the bar.
    pub fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// A bar over `total` bytes with throughput and an ETA (file layout, table loading), drawn on
/// stderr; callers create it only when [`wanted`] says so.
pub fn bytes_bar(total: u64) -> ProgressBar {
    let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let template = if colour {
        "{msg:.bold} [{bar:30.cyan/blue}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}"
    } else {
        "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}"
    };
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_reads_in_minutes_and_seconds() {
        assert_eq!(eta_text(0), "0s");
        assert_eq!(eta_text(1), "1s");
        assert_eq!(eta_text(595), "1m00s");
        assert_eq!(eta_text(1234), "2m04s");
    }

    #[test]
    fn a_hidden_bar_does_nothing() {
        let p = Progress::new(false, "t", 10.0);
        p.run_started("x".into(), 1.0);
        p.run_finished();
        p.adjust(5.0);
        assert_eq!(p.suspend(|| 7), 7);
        p.finish();
    }
}
