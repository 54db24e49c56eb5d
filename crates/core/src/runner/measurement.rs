//! What a run hands back ([`Measurement`], its interval samples and per-thread totals, why
//! it stopped), why a run could not start ([`RunError`]), and the [`Observer`] that hears
//! about it while it runs.

use crate::recorder::{CounterSnapshot, LatencyRec, LatencySummary};
use serde::{Deserialize, Serialize};

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// `--time` elapsed.
    TimeLimit,
    /// `--events` were all run.
    EventLimit,
    /// Every worker ran out of work on its own (e.g. one event per thread).
    WorkersDone,
    /// Ctrl-C.
    Interrupted,
    /// A worker failed (or a `disk.fio` job ended with an error: the result's outcome).
    Error,
    /// `--forced-shutdown` gave up on workers stuck in an event.
    ForcedShutdown,
}

/// The runner could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The plan is inconsistent.
    #[error(transparent)]
    Plan(#[from] crate::plan::PlanError),
    /// The workload could not build a worker.
    #[error(transparent)]
    Workload(#[from] crate::workload::WorkloadError),
    /// The OS refused a thread.
    #[error("could not start worker thread {tid}: {error}")]
    Spawn {
        /// Thread index.
        tid: usize,
        /// OS error.
        error: std::io::Error,
    },
    /// More threads than the host allows; says which limit.
    #[error(transparent)]
    TooManyThreads(#[from] crate::runner::CapacityError),
}

/// Per-thread totals for fairness.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadTotals {
    /// Events this thread completed.
    pub events: u64,
    /// Sum of its event latencies, ns.
    pub latency_sum_ns: u64,
}

/// One interval report.
#[derive(Debug, Clone)]
pub struct IntervalSample {
    /// Seconds since the measurement start at the tick (on the report grid).
    pub t_s: f64,
    /// Actual length of the interval, seconds.
    pub elapsed_s: f64,
    /// Workers still running.
    pub threads: usize,
    /// Counter deltas over the interval (events included).
    pub delta: CounterSnapshot,
    /// Latencies of the events that completed in this interval (count exact; sum, min, max
    /// and percentiles to the precision of [`crate::recorder::live`]).
    pub latency: LatencySummary,
    /// Open-loop queue length at the tick (event workers with `--rate`).
    pub queue_len: Option<u64>,
    /// Events in progress at the tick (with `--rate`).
    pub concurrency: Option<u64>,
}

/// What a run (or a checkpoint segment) measured.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Seconds from the measurement start (after warmup) to this report.
    pub total_time_s: f64,
    /// Seconds since the last reset (checkpoint), the denominator of rates.
    pub elapsed_s: f64,
    /// Counter totals since the last reset; `events` is the number of timed events.
    pub counters: CounterSnapshot,
    /// Latencies since the last reset.
    pub latency: LatencyRec,
    /// Per-thread totals since the last reset.
    pub threads: Vec<ThreadTotals>,
    /// Interval reports (final measurement only).
    pub intervals: Vec<IntervalSample>,
    /// Why the run ended.
    pub stop: StopReason,
    /// Workers still inside an event when the report was taken (forced shutdown, Ctrl-C).
    pub unfinished: u64,
    /// Worker threads that had not stopped when the run gave up on them (forced shutdown,
    /// Ctrl-C), inside an event or not.
    pub stuck_threads: u64,
    /// First worker error, if any.
    pub error: Option<String>,
    /// The seed actually used.
    pub seed: u64,
}

/// Callbacks for live output. Called from the controller thread only.
pub trait Observer: Sync {
    /// All workers passed the start barrier.
    fn started(&self) {}
    /// Warmup ended; measurement starts now.
    fn warmup_done(&self) {}
    /// An interval elapsed.
    fn interval(&self, _s: &IntervalSample) {}
    /// A checkpoint was reached; counters reset after this returns.
    fn checkpoint(&self, _m: &Measurement) {}
    /// True if [`Observer::progress`] should be called.
    fn wants_progress(&self) -> bool {
        false
    }
    /// Events completed since measurement started, or since the last checkpoint (warmup
    /// excluded): at every controller wake-up (at most 50 ms apart) and once more when the
    /// workers have stopped.
    fn progress(&self, _events: u64) {}
}

/// An observer that ignores everything.
pub struct Silent;
impl Observer for Silent {}
