//! The runner: the only code that owns time.
//!
//! It starts one OS thread per worker behind a start barrier, enforces `--time`/`--events`,
//! warmup, the open-loop arrival schedule, interval reports, checkpoints, forced shutdown and
//! Ctrl-C, and hands back a [`Measurement`].
//!
//! How data leaves the workers without locks in the hot path: each worker records into its
//! own [`LatencyRec`] and bumps its own [`Counters`]. When the controller needs the whole
//! record (checkpoint, end of warmup, end of run) it bumps `epoch`; every worker notices the
//! change after its current event, moves its record into its slot (one uncontended lock per
//! checkpoint, not per event) and acknowledges. The controller waits a short grace period
//! for the acknowledgements; a worker still inside a long event hands its record over
//! later (after warmup, an event that straddled its end then counts in the measurement,
//! as its counters do).
//!
//! Interval reports do not wait for workers at all: their event counts are read from the
//! counters at the tick, and their latencies from each thread's
//! [`LiveLatency`], which the controller reads at the
//! tick without the thread's help. So an interval's latency is that of the events that
//! completed in it, even when every thread is inside a long event at the tick.
//!
//! Time limits are checked by workers against the timestamp they already took at the end of
//! each event (no extra clock read); the controller also raises `stop` at the deadline for
//! workers that are waiting rather than running (open-loop queue).
//!
//! Interval reports are deterministic at the end: when a run ends by its time limit and the
//! limit falls on the report grid (`--time=10 --report-interval=1`), the interval ending at
//! the limit is always reported, whether or not the workers have already stopped when the
//! controller gets there (sysbench prints that last line only when its reporting thread wins
//! the race). An interval cut short by any other end (event limit, workers done, Ctrl-C) is
//! not reported; the final report covers it.

use crate::clock::Clock;
use crate::plan::Plan;
use crate::rand::Rng;
use crate::recorder::live::{LiveLatency, LiveTotals};
use crate::recorder::{CounterSnapshot, Counters, LatencyRec, LatencySummary};
use crate::workload::{EventWorker, Instance, Step, Worker};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

/// Set by the front-end's SIGINT handler; the runner stops and reports what it has.
pub static INTERRUPT: AtomicBool = AtomicBool::new(false);

/// The signal that set [`INTERRUPT`] (SIGINT, SIGTERM or SIGHUP; 0 when none): the
/// front-end exits with 128 + it.
pub static INTERRUPT_SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

thread_local! {
    /// The run a worker thread belongs to (set by the runner for its worker threads only).
    static RUN: std::cell::RefCell<Option<Arc<Shared>>> = const { std::cell::RefCell::new(None) };
}

/// True when the run the calling worker thread belongs to is ending: its time limit has
/// passed, another worker failed, or Ctrl-C was pressed (outside a worker thread: Ctrl-C
/// only). An event that waits on something outside the run (a database reconnecting while
/// its server restarts) polls this to give up waiting when the run is over, instead of
/// keeping the run past its limit; the runner keeps owning time, the worker only asks.
pub fn stopping() -> bool {
    INTERRUPT.load(Relaxed)
        || RUN.with(|r| r.borrow().as_ref().is_some_and(|s| s.stop.load(Relaxed)))
}

/// Pending arrivals the open-loop queue holds before it declares the workers overrun
/// (sysbench's ring size).
pub const RATE_QUEUE_CAPACITY: usize = 131_072;

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
    /// A worker failed.
    Error,
    /// `--forced-shutdown` gave up on workers stuck in an event.
    ForcedShutdown,
}

/// The runner could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The plan is inconsistent.
    #[error("{0}")]
    Plan(String),
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
    #[error("{0}")]
    TooManyThreads(String),
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

#[repr(align(128))]
struct Slot {
    counters: Counters,
    pending: Mutex<LatencyRec>,
    /// Filled on the thread's first event when interval reports are on.
    live: std::sync::OnceLock<LiveLatency>,
    acked: AtomicU64,
    done: AtomicBool,
}

struct Shared {
    clock: Clock,
    /// No new events or operations (deadline, events exhausted, or an abort).
    stop: AtomicBool,
    /// Drop what is in flight too (Ctrl-C, error, forced shutdown).
    abort: AtomicBool,
    epoch: AtomicU64,
    warmup: AtomicBool,
    claimed: AtomicU64,
    events_limit: u64,
    deadline: AtomicU64,
    start: AtomicU64,
    rate_per_thread: f64,
    seed: u64,
    slots: Vec<Slot>,
    ready: AtomicUsize,
    running: AtomicUsize,
    in_event: AtomicU64,
    error: Mutex<Option<String>>,
    events_exhausted: AtomicBool,
    /// Claims against `--events` whose event never ran because the time limit came first:
    /// with any, the run ended by its time limit even if the claims reached the limit.
    claims_unused: AtomicU64,
    controller: Thread,
    queue: Option<RateQueue>,
    /// Interval reports are on (workers keep live histograms).
    live: bool,
}

impl Shared {
    /// The run ended because `--events` were all done (not merely all claimed: a claim
    /// made just as the time limit passed is never run).
    fn event_limit_reached(&self) -> bool {
        self.events_exhausted.load(Acquire) && self.claims_unused.load(Acquire) == 0
    }

    fn fail(&self, msg: String) {
        let mut e = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if e.is_none() {
            *e = Some(msg);
        }
        self.abort.store(true, Release);
        self.stop.store(true, Release);
        self.controller.unpark();
    }
}

/// Arrival timestamps of the open-loop schedule, shared by event workers (sysbench's model:
/// one queue, any idle worker takes the next arrival).
struct RateQueue {
    q: Mutex<VecDeque<u64>>,
    cv: Condvar,
}

impl RateQueue {
    fn pop(&self, stop: &AtomicBool) -> Option<u64> {
        let mut g = self.q.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if stop.load(Acquire) {
                return None;
            }
            if let Some(a) = g.pop_front() {
                return Some(a);
            }
            g = self
                .cv
                .wait_timeout(g, Duration::from_millis(10))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    fn len(&self) -> u64 {
        self.q.lock().unwrap_or_else(|p| p.into_inner()).len() as u64
    }
}

/// A worker thread's private state.
struct ThreadState {
    tid: usize,
    rec: LatencyRec,
    epoch: u64,
    in_warmup: bool,
    deadline: u64,
    /// Interval reports are on: record into the slot's live histogram too.
    live: bool,
    /// The open-loop schedule passed the time limit: idle until it once the worker returns.
    idle_to_deadline: bool,
}

impl ThreadState {
    #[inline(always)]
    fn check_epoch(&mut self, shared: &Shared) {
        if shared.epoch.load(Relaxed) != self.epoch {
            self.publish(shared);
        }
    }

    fn publish(&mut self, shared: &Shared) {
        let e = shared.epoch.load(Acquire);
        let slot = &shared.slots[self.tid];
        slot.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .merge(&self.rec);
        self.rec.reset();
        self.in_warmup = shared.warmup.load(Acquire);
        self.epoch = e;
        slot.acked.store(e, Release);
    }

    /// Records one event's latency (its counter is bumped by the caller).
    #[inline(always)]
    fn record(&mut self, shared: &Shared, ns: u64) {
        self.rec.record(ns);
        if self.live {
            shared.slots[self.tid]
                .live
                .get_or_init(LiveLatency::default)
                .record(ns);
        }
    }

    /// Claims one event against `--events`; false when the limit is reached.
    #[inline(always)]
    fn claim(&self, shared: &Shared) -> bool {
        if shared.events_limit == 0 || self.in_warmup {
            return true;
        }
        if shared.claimed.fetch_add(1, Relaxed) < shared.events_limit {
            true
        } else {
            shared.events_exhausted.store(true, Relaxed);
            false
        }
    }
}

/// What a [`LoopWorker`](crate::workload::LoopWorker) uses to pace itself and record completions.
pub struct RunControl<'a> {
    shared: &'a Shared,
    st: &'a mut ThreadState,
    next_due: u64,
    mean_gap: f64,
    /// Constant pacing (`next_due` kept exact in `due_f`) instead of Poisson arrivals.
    constant: bool,
    due_f: f64,
    rng: Rng,
}

impl RunControl<'_> {
    /// The run's clock.
    #[inline]
    pub fn clock(&self) -> Clock {
        self.shared.clock
    }

    /// Now, in ticks.
    #[inline]
    pub fn now(&self) -> u64 {
        self.shared.clock.now()
    }

    /// This thread's counters.
    #[inline]
    pub fn counters(&self) -> &Counters {
        &self.shared.slots[self.st.tid].counters
    }

    /// True when the worker should stop starting operations (time limit, Ctrl-C, error).
    #[inline]
    pub fn should_stop(&mut self, now: u64) -> bool {
        self.st.check_epoch(self.shared);
        now >= self.st.deadline || self.shared.stop.load(Relaxed)
    }

    /// True while the run is warming up (`--warmup-time`, fio's `ramp_time`): what the worker
    /// records through [`RunControl::record`] is discarded, and so should anything it keeps
    /// on its own. Changes only between operations (at an epoch change).
    #[inline]
    pub fn warming_up(&self) -> bool {
        self.st.in_warmup
    }

    /// True on a hard stop (Ctrl-C, error, forced shutdown): abandon operations in flight.
    /// At the time limit this stays false, so in-flight operations complete and count.
    pub fn aborted(&self) -> bool {
        self.shared.abort.load(Relaxed)
    }

    /// Claims the next operation and returns its intended start in ticks: `now` in closed
    /// loop, the scheduled arrival in open loop (which may lie in the past when the worker
    /// is behind, or in the future, in which case the caller waits for it). `None` when the
    /// run is over for this worker.
    #[inline]
    pub fn next_op(&mut self, now: u64) -> Option<u64> {
        if self.should_stop(now) {
            return None;
        }
        if self.mean_gap > 0.0 && self.next_due >= self.st.deadline {
            // Scheduled after the time limit: not part of this run. Waiting for it would
            // keep the run going past its end (a rate of 0.2/s and --time=2 took 5 s). The
            // worker is told the run is over for it at once, so it finishes what is in
            // flight with true latencies; its thread then idles until the limit (see
            // `thread_main`), as an event worker does at the queue.
            self.st.idle_to_deadline = true;
            return None;
        }
        if !self.st.claim(self.shared) {
            return None;
        }
        if self.mean_gap == 0.0 {
            return Some(now);
        }
        let due = self.next_due;
        if self.constant {
            self.due_f += self.mean_gap;
            self.next_due = self.due_f as u64;
        } else {
            let u = self.rng.next_f64();
            self.next_due += (-self.mean_gap * (1.0 - u).ln()) as u64;
        }
        Some(due)
    }

    /// True in open loop (`--rate`): [`next_op`](Self::next_op) returns scheduled arrivals.
    pub fn open_loop(&self) -> bool {
        self.mean_gap > 0.0
    }

    /// Paces this thread's open-loop schedule at a constant rate (wrk2's and vegeta's model:
    /// one arrival every `threads / rate` seconds, threads staggered evenly across one
    /// period) instead of the default Poisson arrivals. Call before the first `next_op`; a
    /// no-op in closed loop.
    pub fn constant_schedule(&mut self) {
        if self.mean_gap == 0.0 || self.constant {
            return;
        }
        self.constant = true;
        let threads = self.shared.slots.len() as f64;
        self.due_f = self.next_due as f64 + self.mean_gap * self.st.tid as f64 / threads;
        self.next_due = self.due_f as u64;
    }

    /// Records an operation that was meant to start at `intended` and completed at `done`.
    #[inline]
    pub fn record(&mut self, intended: u64, done: u64) {
        let ns = self.shared.clock.to_ns(done.saturating_sub(intended));
        self.st.record(self.shared, ns);
        self.shared.slots[self.st.tid].counters.add_event();
    }

    /// Waits until the clock reaches `t` (sleeping when far, spinning when near) or the run
    /// is aborted; returns the time reached.
    pub fn wait_until(&mut self, t: u64) -> u64 {
        wait_until(&self.shared.clock, t, &self.shared.abort)
    }
}

fn wait_until(clock: &Clock, t: u64, stop: &AtomicBool) -> u64 {
    loop {
        let now = clock.now();
        if now >= t || stop.load(Relaxed) {
            return now;
        }
        let left_ns = clock.to_ns(t - now);
        // Sleeping overshoots by 50 µs (timer slack) to milliseconds (a busy guest), so only
        // long waits sleep, and they wake a millisecond early. A sleep lasts at most 10 ms,
        // so a stop is noticed in time however far away `t` is (an arrival of
        // --rate=0.0000001 lies months ahead).
        if left_ns > 2_000_000 {
            thread::sleep(Duration::from_nanos((left_ns - 1_000_000).min(10_000_000)));
        } else if left_ns > 20_000 {
            thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

fn event_loop(w: &mut dyn EventWorker, st: &mut ThreadState, shared: &Shared) {
    let clock = shared.clock;
    let counters = &shared.slots[st.tid].counters;
    loop {
        if shared.stop.load(Relaxed) || !st.claim(shared) {
            break;
        }
        let arrival = match &shared.queue {
            Some(q) => match q.pop(&shared.stop) {
                Some(a) => Some(a),
                None => break,
            },
            None => None,
        };
        if arrival.is_some() {
            shared.in_event.fetch_add(1, Relaxed);
        }
        let t0 = clock.now();
        if arrival.is_none() && t0 >= st.deadline {
            if shared.events_limit != 0 && !st.in_warmup {
                shared.claims_unused.fetch_add(1, Relaxed);
            }
            // No event starts after the time limit (sysbench checks its timer before each
            // event too). A thread that first runs after the limit — with thousands of
            // threads on a few CPUs, most threads wait that long for their first time
            // slice — would otherwise run a whole event and keep the run going: 4000 cpu
            // threads with --time=1 took 1.9-4.4 s.
            break;
        }
        let step = w.event(counters);
        let t1 = clock.now();
        if arrival.is_some() {
            shared.in_event.fetch_sub(1, Relaxed);
        }
        match step {
            Ok(Step::Done) => {}
            Ok(Step::End) => break,
            Err(e) => {
                shared.fail(format!("thread {}: {e}", st.tid));
                break;
            }
        }
        st.record(shared, clock.to_ns(t1 - arrival.unwrap_or(t0)));
        counters.add_event();
        if t1 >= st.deadline {
            break;
        }
        st.check_epoch(shared);
    }
}

fn thread_main(shared: Arc<Shared>, tid: usize, worker: Worker, gate: Arc<(Mutex<bool>, Condvar)>) {
    let mut st = ThreadState {
        tid,
        rec: LatencyRec::default(),
        epoch: 0,
        in_warmup: shared.warmup.load(Acquire),
        deadline: 0,
        live: shared.live,
        idle_to_deadline: false,
    };
    RUN.with(|r| *r.borrow_mut() = Some(shared.clone()));
    shared.ready.fetch_add(1, AcqRel);
    shared.controller.unpark();
    {
        let (m, cv) = &*gate;
        let mut open = m.lock().unwrap_or_else(|p| p.into_inner());
        while !*open {
            open = cv.wait(open).unwrap_or_else(|p| p.into_inner());
        }
    }
    st.deadline = shared.deadline.load(Acquire);
    match worker {
        Worker::Event(mut w) => {
            event_loop(w.as_mut(), &mut st, &shared);
            if !shared.abort.load(Acquire)
                && let Err(e) = w.finish(&shared.slots[tid].counters)
            {
                shared.fail(format!("thread {tid}: {e}"));
            }
        }
        Worker::Loop(mut w) => {
            let rate = shared.rate_per_thread;
            let mut ctl = RunControl {
                shared: &shared,
                next_due: shared.start.load(Acquire),
                mean_gap: if rate > 0.0 {
                    shared.clock.from_ns(1_000_000_000) as f64 / rate
                } else {
                    0.0
                },
                constant: false,
                due_f: 0.0,
                rng: Rng::for_thread(shared.seed ^ 0x5EED_0000_0000_0000, tid as u64),
                st: &mut st,
            };
            if let Err(e) = w.run(&mut ctl) {
                shared.fail(format!("thread {tid}: {e}"));
            }
            if st.idle_to_deadline {
                wait_until(&shared.clock, st.deadline, &shared.stop);
            }
        }
    }
    st.publish(&shared);
    RUN.with(|r| *r.borrow_mut() = None);
    let slot = &shared.slots[tid];
    slot.done.store(true, Release);
    if shared.running.fetch_sub(1, AcqRel) == 1 {
        shared.controller.unpark();
    }
}

fn generator(shared: Arc<Shared>, rate: f64) {
    let q = shared
        .queue
        .as_ref()
        .expect("generator runs only with a queue");
    let clock = shared.clock;
    let mean = clock.from_ns(1_000_000_000) as f64 / rate;
    let mut rng = Rng::for_thread(shared.seed ^ 0xA771_7A15, u64::MAX);
    let mut next = shared.start.load(Acquire) as f64;
    while !shared.stop.load(Relaxed) {
        next += -mean * (1.0 - rng.next_f64()).ln();
        let due = next as u64;
        wait_until(&clock, due, &shared.stop);
        if shared.stop.load(Acquire) {
            break;
        }
        let len = {
            let mut g = q.q.lock().unwrap_or_else(|p| p.into_inner());
            g.push_back(due);
            g.len()
        };
        q.cv.notify_one();
        if len > RATE_QUEUE_CAPACITY {
            shared.fail(format!(
                "the event queue is full ({RATE_QUEUE_CAPACITY} arrivals waiting): {} worker \
                 thread(s) cannot keep up with --rate={rate}. Lower --rate or raise --threads.",
                shared.slots.len()
            ));
            break;
        }
    }
    q.cv.notify_all();
}

/// Runs `plan` on `instance`, calling `observer` from this thread for live reports.
pub fn run(
    plan: &Plan,
    instance: &dyn Instance,
    clock: Clock,
    observer: &dyn Observer,
) -> Result<Measurement, RunError> {
    plan.validate().map_err(RunError::Plan)?;
    let n = plan.threads;
    check_thread_capacity(n, &HostLimits::read()).map_err(RunError::TooManyThreads)?;
    let seed = if plan.seed == 0 {
        crate::rand::time_seed()
    } else {
        plan.seed
    };
    let mut workers = Vec::with_capacity(n);
    for tid in 0..n {
        workers.push(instance.worker(tid, Rng::for_thread(seed, tid as u64))?);
    }
    let has_loop = workers.iter().any(|w| matches!(w, Worker::Loop(_)));
    let use_queue = plan.rate > 0.0 && !has_loop;
    let shared = Arc::new(Shared {
        clock,
        stop: AtomicBool::new(false),
        abort: AtomicBool::new(false),
        epoch: AtomicU64::new(0),
        warmup: AtomicBool::new(plan.warmup_s > 0.0),
        claimed: AtomicU64::new(0),
        events_limit: plan.events,
        deadline: AtomicU64::new(u64::MAX),
        start: AtomicU64::new(0),
        rate_per_thread: if has_loop { plan.rate / n as f64 } else { 0.0 },
        seed,
        slots: (0..n)
            .map(|_| Slot {
                counters: Counters::default(),
                pending: Mutex::new(LatencyRec::default()),
                live: std::sync::OnceLock::new(),
                acked: AtomicU64::new(0),
                done: AtomicBool::new(false),
            })
            .collect(),
        ready: AtomicUsize::new(0),
        running: AtomicUsize::new(n),
        in_event: AtomicU64::new(0),
        error: Mutex::new(None),
        events_exhausted: AtomicBool::new(false),
        claims_unused: AtomicU64::new(0),
        controller: thread::current(),
        queue: use_queue.then(|| RateQueue {
            q: Mutex::new(VecDeque::new()),
            cv: Condvar::new(),
        }),
        live: plan.report_interval_s > 0.0,
    });
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let mut handles: Vec<Option<JoinHandle<()>>> = Vec::with_capacity(n);
    for (tid, w) in workers.into_iter().enumerate() {
        let (s, g) = (shared.clone(), gate.clone());
        let h = thread::Builder::new()
            .name(format!("hb-worker-{tid}"))
            .spawn(move || thread_main(s, tid, w, g));
        match h {
            Ok(h) => handles.push(Some(h)),
            Err(error) => {
                shared.stop.store(true, Release);
                shared.deadline.store(0, Release);
                open_gate(&gate);
                for h in handles.into_iter().flatten() {
                    let _ = h.join();
                }
                return Err(RunError::Spawn { tid, error });
            }
        }
    }
    while shared.ready.load(Acquire) < n {
        thread::park_timeout(Duration::from_millis(5));
    }
    // Time starts when every worker is ready, just before the gate opens.
    let start = clock.now();
    let start_i = Instant::now();
    shared.start.store(start, Release);
    if plan.time_s > 0.0 {
        let ns = ((plan.warmup_s + plan.time_s) * 1e9) as u64;
        shared.deadline.store(start + clock.from_ns(ns), Release);
    }
    open_gate(&gate);
    let arrivals = use_queue.then(|| {
        let s = shared.clone();
        let rate = plan.rate;
        thread::Builder::new()
            .name("hb-arrivals".into())
            .spawn(move || generator(s, rate))
    });
    let arrivals = match arrivals.transpose() {
        Ok(g) => g,
        Err(source) => {
            shared.fail(format!("could not start the arrival generator: {source}"));
            None
        }
    };
    observer.started();

    let mut ctl = Controller::new(&shared, plan, start_i);
    let result = ctl.drive(observer, &mut handles);
    shared.stop.store(true, Release);
    if let Some(q) = &shared.queue {
        q.cv.notify_all();
    }
    if let Some(g) = arrivals {
        let _ = g.join();
    }
    let mut m = Measurement { seed, ..result };
    if matches!(m.stop, StopReason::Interrupted | StopReason::ForcedShutdown) {
        // At a time limit what was in flight is simply past the end, as for every workload.
        m.unfinished = m.unfinished.max(instance.abandoned());
    }
    Ok(m)
}

/// What bounds the number of threads this process can start (Linux; `None` = unknown).
#[derive(Debug, Clone, Default)]
pub struct HostLimits {
    /// `kernel.pid_max` and `kernel.threads-max`, the smaller: tasks the system can hold.
    pub tasks_max: Option<u64>,
    /// Tasks that exist now (every thread of every process).
    pub tasks_now: Option<u64>,
    /// `vm.max_map_count`: memory maps per process.
    pub max_map_count: Option<u64>,
    /// This process's memory maps now.
    pub maps_now: Option<u64>,
    /// RLIMIT_NPROC (tasks per user; not enforced for root).
    pub nproc: Option<u64>,
    /// The process runs as root (RLIMIT_NPROC does not apply).
    pub root: bool,
    /// Memory available, bytes (MemAvailable).
    pub mem_available: Option<u64>,
}

/// Memory maps a worker thread adds: its stack and guard page, and the signal stack and
/// guard page Rust's runtime gives every thread (measured: a 20,000-thread run failed at
/// thread 16,426 with vm.max_map_count = 65,530).
const MAPS_PER_THREAD: u64 = 4;
/// Memory a worker thread costs at least: touched stack pages and the runner's per-thread
/// records (measured: ~73 KiB per idle null.loop thread); a floor, not an estimate of any
/// workload's own state, so a run is refused only when it cannot possibly fit.
const BYTES_PER_THREAD: u64 = 64 * 1024;

impl HostLimits {
    /// Reads the limits from /proc and getrlimit.
    pub fn read() -> HostLimits {
        let num = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
        };
        let tasks_max = match (
            num("/proc/sys/kernel/pid_max"),
            num("/proc/sys/kernel/threads-max"),
        ) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // /proc/loadavg's fourth field: running/total tasks.
        let tasks_now = std::fs::read_to_string("/proc/loadavg").ok().and_then(|s| {
            s.split_whitespace()
                .nth(3)?
                .split('/')
                .nth(1)?
                .parse::<u64>()
                .ok()
        });
        let maps_now = std::fs::read("/proc/self/maps")
            .ok()
            .map(|b| b.iter().filter(|&&c| c == b'\n').count() as u64);
        let mut rl = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct we own.
        let nproc = (unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut rl) } == 0
            && rl.rlim_cur != libc::RLIM_INFINITY)
            .then_some(rl.rlim_cur);
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let mem_available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map(|kb| kb * 1024)
        });
        HostLimits {
            tasks_max,
            tasks_now,
            max_map_count: num("/proc/sys/vm/max_map_count"),
            maps_now,
            nproc,
            root,
            mem_available,
        }
    }
}

/// Refuses `n` worker threads when the host cannot hold them, naming the limit, so a run
/// that cannot start fails at once instead of after starting thousands of threads.
pub fn check_thread_capacity(n: usize, l: &HostLimits) -> Result<(), String> {
    let n = n as u64;
    let fix = "lower --threads (or raise the limit)";
    if let (Some(max), Some(now)) = (l.tasks_max, l.tasks_now)
        && now + n + 16 > max
    {
        return Err(format!(
            "{n} threads do not fit the system's task limit: kernel.pid_max/threads-max is {max} and {now} tasks exist already; {fix}"
        ));
    }
    if let (Some(max), Some(now)) = (l.max_map_count, l.maps_now)
        && now + MAPS_PER_THREAD * n + 256 > max
    {
        return Err(format!(
            "{n} threads need about {} memory maps and vm.max_map_count is {max} ({now} in use): at most about {} threads; {fix} (sysctl vm.max_map_count)",
            MAPS_PER_THREAD * n,
            max.saturating_sub(now + 256) / MAPS_PER_THREAD
        ));
    }
    if let Some(max) = l.nproc
        && !l.root
        && n + 16 > max
    {
        return Err(format!(
            "{n} threads exceed this user's process limit (RLIMIT_NPROC, ulimit -u) of {max}; {fix}"
        ));
    }
    if let Some(avail) = l.mem_available
        && n * BYTES_PER_THREAD > avail
    {
        return Err(format!(
            "{n} threads need at least {} MiB and only {} MiB of memory is available; {fix}",
            (n * BYTES_PER_THREAD) >> 20,
            avail >> 20
        ));
    }
    Ok(())
}

fn open_gate(gate: &(Mutex<bool>, Condvar)) {
    *gate.0.lock().unwrap_or_else(|p| p.into_inner()) = true;
    gate.1.notify_all();
}

struct Controller<'a> {
    shared: &'a Shared,
    plan: &'a Plan,
    measure_start: Instant,
    segment_start: Instant,
    baseline: CounterSnapshot,
    cumulative: LatencyRec,
    per_thread: Vec<ThreadTotals>,
    interval_base: CounterSnapshot,
    last_tick: Instant,
    intervals: Vec<IntervalSample>,
    /// The live histograms' totals at the last tick.
    live: LiveTotals,
    /// Workers running at the last look before the time limit: the final interval's count.
    last_running: usize,
}

impl<'a> Controller<'a> {
    fn new(shared: &'a Shared, plan: &'a Plan, start: Instant) -> Self {
        let measure_start = start + Duration::from_secs_f64(plan.warmup_s);
        Controller {
            shared,
            plan,
            measure_start,
            segment_start: measure_start,
            baseline: CounterSnapshot::default(),
            cumulative: LatencyRec::default(),
            per_thread: vec![ThreadTotals::default(); plan.threads],
            interval_base: CounterSnapshot::default(),
            last_tick: measure_start,
            intervals: Vec::new(),
            live: LiveTotals::default(),
            last_running: plan.threads,
        }
    }

    fn counters(&self) -> CounterSnapshot {
        let mut t = CounterSnapshot::default();
        for s in &self.shared.slots {
            t.add(&s.counters.snapshot());
        }
        t
    }

    /// Asks workers to publish, waits up to `grace` for the ones still running, and moves
    /// everything published into `into` (and the per-thread totals).
    fn collect(&mut self, grace: Duration, into: &mut LatencyRec, keep: bool) {
        let e = self.shared.epoch.fetch_add(1, AcqRel) + 1;
        let until = Instant::now() + grace;
        for s in &self.shared.slots {
            while !s.done.load(Acquire) && s.acked.load(Acquire) < e && Instant::now() < until {
                thread::sleep(Duration::from_micros(50));
            }
        }
        for (tid, s) in self.shared.slots.iter().enumerate() {
            let mut p = s.pending.lock().unwrap_or_else(|p| p.into_inner());
            if keep {
                self.per_thread[tid].events += p.count;
                self.per_thread[tid].latency_sum_ns += p.sum_ns;
                into.merge(&p);
            }
            p.reset();
        }
    }

    /// The latencies recorded in the live histograms since the last call.
    fn advance_live(&mut self) -> crate::recorder::live::IntervalLatency {
        self.live
            .advance(self.shared.slots.iter().filter_map(|s| s.live.get()))
    }

    fn grace(&self) -> Duration {
        let base = if self.plan.report_interval_s > 0.0 {
            self.plan.report_interval_s * 0.05
        } else {
            0.05
        };
        Duration::from_secs_f64(base.clamp(0.001, 0.05))
    }

    fn running(&self) -> usize {
        self.shared.running.load(Acquire)
    }

    fn snapshot(&self, stop: StopReason, unfinished: u64) -> Measurement {
        let now = Instant::now();
        let mut counters = self.counters().since(&self.baseline);
        counters.events = self.per_thread.iter().map(|t| t.events).sum();
        Measurement {
            total_time_s: now
                .saturating_duration_since(self.measure_start)
                .as_secs_f64(),
            elapsed_s: now
                .saturating_duration_since(self.segment_start)
                .as_secs_f64(),
            counters,
            latency: self.cumulative.clone(),
            threads: self.per_thread.clone(),
            intervals: Vec::new(),
            stop,
            unfinished,
            error: self
                .shared
                .error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            seed: 0,
        }
    }

    fn drive(
        &mut self,
        observer: &dyn Observer,
        handles: &mut [Option<JoinHandle<()>>],
    ) -> Measurement {
        let plan = self.plan;
        let dur = Duration::from_secs_f64;
        let mut warming = plan.warmup_s > 0.0;
        let mut next_tick = (plan.report_interval_s > 0.0)
            .then(|| self.measure_start + dur(plan.report_interval_s));
        let mut tick_no = 1u64;
        let mut checkpoints: Vec<f64> = plan.report_checkpoints.clone();
        checkpoints.sort_by(f64::total_cmp);
        let mut checkpoints = checkpoints.into_iter().peekable();
        let deadline = (plan.time_s > 0.0).then(|| self.measure_start + dur(plan.time_s));
        let forced_at = deadline
            .zip(plan.forced_shutdown_s)
            .map(|(d, f)| d + dur(f));
        let mut interrupted_at: Option<Instant> = None;
        // The tick that falls on the time limit (within a millisecond: the grid is computed in
        // floating point), if any: always reported when the run ends by its time limit.
        let final_tick = deadline
            .filter(|_| plan.report_interval_s > 0.0)
            .and_then(|_| {
                let n = (plan.time_s / plan.report_interval_s).round();
                (n >= 1.0 && (n * plan.report_interval_s - plan.time_s).abs() < 1e-3)
                    .then_some(n as u64)
            });

        loop {
            let now = Instant::now();
            let running = self.running();
            if running == 0 {
                break;
            }
            if deadline.is_none_or(|d| now < d) {
                self.last_running = running;
            }
            if INTERRUPT.load(Relaxed) && interrupted_at.is_none() {
                interrupted_at = Some(now);
                self.shared.abort.store(true, Release);
                self.shared.stop.store(true, Release);
                if let Some(q) = &self.shared.queue {
                    q.cv.notify_all();
                }
            }
            if let Some(t) = interrupted_at
                && now >= t + Duration::from_secs(2)
            {
                return self.give_up(StopReason::Interrupted);
            }
            if let Some(f) = forced_at
                && now >= f
            {
                return self.give_up(StopReason::ForcedShutdown);
            }
            if let Some(d) = deadline
                && now >= d
                && !self.shared.stop.load(Relaxed)
            {
                self.shared.stop.store(true, Release);
                if let Some(q) = &self.shared.queue {
                    q.cv.notify_all();
                }
            }
            if warming && now >= self.measure_start {
                warming = false;
                self.shared.warmup.store(false, Release);
                self.baseline = self.counters();
                let mut discard = LatencyRec::default();
                self.collect(self.grace(), &mut discard, false);
                self.advance_live();
                self.baseline = self.counters();
                self.interval_base = self.baseline;
                self.last_tick = Instant::now();
                observer.warmup_done();
            }
            if let Some(t) = next_tick
                && !warming
                && now >= t
            {
                // The last grid point passed. A controller that wakes late (thousands of
                // runnable threads on a few CPUs keep it waiting for a time slice) reports
                // one interval up to now, named after the last point it passed — never
                // after a point the interval ends long after — and a wake past the limit is
                // the limit's interval.
                let passed = (now
                    .saturating_duration_since(self.measure_start)
                    .as_secs_f64()
                    / plan.report_interval_s)
                    .floor() as u64;
                let mut due = passed.max(tick_no);
                if let Some(n) = final_tick {
                    due = due.min(n);
                } else if deadline.is_some() {
                    // Off the grid: the last point within the limit, if not reported yet
                    // (the final report covers what comes after it).
                    let last = (plan.time_s / plan.report_interval_s + 1e-9).floor() as u64;
                    due = due.min(last);
                }
                let at_limit = final_tick == Some(due) && interrupted_at.is_none();
                if due >= tick_no {
                    self.tick(
                        observer,
                        (due as f64 * plan.report_interval_s * 1e6).round() / 1e6,
                        at_limit,
                    );
                }
                // Stay on the grid; skip ticks that were missed, but never the limit's.
                let elapsed = Instant::now().saturating_duration_since(self.measure_start);
                tick_no = ((elapsed.as_secs_f64() / plan.report_interval_s).floor() as u64 + 1)
                    .max(due + 1);
                if let Some(n) = final_tick
                    && due < n
                {
                    tick_no = tick_no.min(n);
                }
                next_tick = Some(self.measure_start + dur(tick_no as f64 * plan.report_interval_s));
            }
            if let Some(&c) = checkpoints.peek()
                && !warming
                && now >= self.measure_start + dur(c)
            {
                checkpoints.next();
                let mut cum = std::mem::take(&mut self.cumulative);
                self.collect(self.grace(), &mut cum, true);
                self.cumulative = cum;
                let m = self.snapshot(StopReason::TimeLimit, 0);
                observer.checkpoint(&m);
                self.cumulative.reset();
                self.per_thread
                    .iter_mut()
                    .for_each(|t| *t = ThreadTotals::default());
                self.baseline = self.counters();
                self.segment_start = Instant::now();
            }
            if !warming && observer.wants_progress() {
                observer.progress(self.counters().events - self.baseline.events);
            }
            let mut wake = now + Duration::from_millis(50);
            for t in [
                next_tick,
                deadline,
                forced_at,
                checkpoints.peek().map(|&c| self.measure_start + dur(c)),
            ]
            .into_iter()
            .flatten()
            .chain(warming.then_some(self.measure_start))
            {
                if t > now && t < wake {
                    wake = t;
                }
            }
            thread::park_timeout(wake.saturating_duration_since(Instant::now()));
        }
        for h in handles.iter_mut() {
            if let Some(h) = h.take() {
                let _ = h.join();
            }
        }
        if !warming && observer.wants_progress() {
            observer.progress(self.counters().events - self.baseline.events);
        }
        // Every worker stopped at the time limit before the controller reached the tick on
        // it: report that interval all the same, so the last line does not depend on who
        // got there first.
        if let (Some(n), Some(d)) = (final_tick, deadline)
            && tick_no <= n
            && !warming
            && interrupted_at.is_none()
            && !self.shared.event_limit_reached()
            && Instant::now() >= d
            && self
                .shared
                .error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_none()
        {
            self.tick(
                observer,
                (n as f64 * plan.report_interval_s * 1e6).round() / 1e6,
                true,
            );
        }
        let mut cum = std::mem::take(&mut self.cumulative);
        self.collect(Duration::ZERO, &mut cum, true);
        self.cumulative = cum;
        let reason = if self
            .shared
            .error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
        {
            StopReason::Error
        } else if interrupted_at.is_some() {
            StopReason::Interrupted
        } else if self.shared.event_limit_reached() {
            StopReason::EventLimit
        } else if deadline.is_some_and(|d| Instant::now() >= d) {
            StopReason::TimeLimit
        } else {
            StopReason::WorkersDone
        };
        let mut m = self.snapshot(reason, 0);
        m.intervals = std::mem::take(&mut self.intervals);
        m
    }

    /// Reports what has been published and leaves workers stuck in an event behind.
    fn give_up(&mut self, reason: StopReason) -> Measurement {
        self.shared.abort.store(true, Release);
        self.shared.stop.store(true, Release);
        let mut cum = std::mem::take(&mut self.cumulative);
        self.collect(self.grace(), &mut cum, true);
        self.cumulative = cum;
        let unfinished = self
            .shared
            .slots
            .iter()
            .filter(|s| !s.done.load(Acquire))
            .count() as u64;
        let mut m = self.snapshot(reason, unfinished);
        m.intervals = std::mem::take(&mut self.intervals);
        m
    }

    /// One interval report at `t_s`. `at_limit`: the tick on the time limit, reported even
    /// when the workers have stopped (see the module docs).
    fn tick(&mut self, observer: &dyn Observer, t_s: f64, at_limit: bool) {
        let mut now_counters = self.counters();
        let now = Instant::now();
        let lat = self.advance_live();
        if self.shared.live {
            // The interval's events are the ones whose latency it holds: counted from the
            // same reading, so an interval never has events without a latency (an event
            // finishing between two separate readings would land in one interval's count
            // and the other's latency). The total of the counts is the same.
            now_counters.events = self.interval_base.events + lat.count();
        }
        let running = self.running();
        if running == 0 && !at_limit {
            // The run ended before the tick (event limit, workers done): the final report
            // covers the rest (sysbench silences interval reports once workers are done).
            return;
        }
        // At the limit some workers may have stopped already: they ran in this interval.
        let threads = if at_limit {
            running.max(self.last_running)
        } else {
            running
        };
        // Measured to the moment the counters were read, the limit's interval too: events
        // that finish after the limit (each thread's last) are in its count, so cutting its
        // length at the limit would inflate its rate (4000 threads on 2 CPUs: by 20%).
        let sample = IntervalSample {
            t_s,
            elapsed_s: now.saturating_duration_since(self.last_tick).as_secs_f64(),
            threads,
            delta: now_counters.since(&self.interval_base),
            latency: lat.summary(&self.plan.percentiles),
            queue_len: self.shared.queue.as_ref().map(|q| q.len()),
            concurrency: self
                .shared
                .queue
                .as_ref()
                .map(|_| self.shared.in_event.load(Relaxed)),
        };
        self.interval_base = now_counters;
        self.last_tick = now;
        observer.interval(&sample);
        // Samples keep a summary, not a histogram: memory stays small however long the run.
        self.intervals.push(sample);
    }
}

/// Counter deltas as a rate per second over `secs`.
pub fn per_second(v: u64, secs: f64) -> f64 {
    if secs > 0.0 { v as f64 / secs } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use crate::workload::WorkloadError;

    /// Events of a fixed length (a sleep), so a run's timing is known.
    struct Sleepy(Duration);
    struct SleepyWorker(Duration);
    impl EventWorker for SleepyWorker {
        fn event(&mut self, _c: &crate::recorder::Counters) -> Result<Step, WorkloadError> {
            thread::sleep(self.0);
            Ok(Step::Done)
        }
    }
    impl Instance for Sleepy {
        fn worker(&self, _tid: usize, _rng: Rng) -> Result<Worker, WorkloadError> {
            Ok(Worker::Event(Box::new(SleepyWorker(self.0))))
        }
    }
    struct Quiet;
    impl Observer for Quiet {}

    fn plan(threads: usize, time_s: f64, interval_s: f64, events: u64) -> Plan {
        let mut p = Plan::new("test.sleepy", Params::default());
        p.threads = threads;
        p.time_s = time_s;
        p.report_interval_s = interval_s;
        p.events = events;
        p
    }

    fn grid(m: &Measurement) -> Vec<f64> {
        m.intervals.iter().map(|i| i.t_s).collect()
    }

    #[test]
    fn the_interval_ending_on_the_time_limit_is_always_reported() {
        // Short events stop within microseconds of the limit, usually before the controller
        // reaches the tick on it: the race sysbench loses sometimes. Every run must report
        // the last interval, with the threads that ran in it.
        for (threads, event) in [(1, 200), (2, 50), (3, 2000)] {
            for _ in 0..4 {
                let m = run(
                    &plan(threads, 0.3, 0.1, 0),
                    &Sleepy(Duration::from_micros(event)),
                    Clock::monotonic(),
                    &Quiet,
                )
                .unwrap();
                assert_eq!(m.stop, StopReason::TimeLimit);
                assert_eq!(grid(&m), [0.1, 0.2, 0.3], "{threads} thread(s), {event} µs");
                let last = m.intervals.last().unwrap();
                assert_eq!(last.threads, threads);
                assert!(last.delta.events > 0, "{:?}", last.delta);
                assert!(last.elapsed_s > 0.0 && last.elapsed_s <= 0.3, "{last:?}");
            }
        }
    }

    #[test]
    fn a_limit_off_the_grid_or_another_end_reports_no_partial_interval() {
        let m = run(
            &plan(1, 0.25, 0.1, 0),
            &Sleepy(Duration::from_micros(100)),
            Clock::monotonic(),
            &Quiet,
        )
        .unwrap();
        assert_eq!(grid(&m), [0.1, 0.2]);
        // An event limit reached long before the time limit: no interval at all.
        let m = run(
            &plan(1, 0.3, 0.1, 5),
            &Sleepy(Duration::from_micros(100)),
            Clock::monotonic(),
            &Quiet,
        )
        .unwrap();
        assert_eq!(m.stop, StopReason::EventLimit);
        assert!(m.intervals.is_empty(), "{:?}", grid(&m));
    }

    /// An event that waits on something outside the run (a server coming back) until the
    /// run is over, then ends its thread.
    struct Waiter;
    struct WaiterWorker(u32);
    impl EventWorker for WaiterWorker {
        fn event(&mut self, _c: &crate::recorder::Counters) -> Result<Step, WorkloadError> {
            if self.0 == 3 {
                // The fourth event waits "forever" (10 s), as a reconnect would.
                let t = Instant::now();
                while !stopping() {
                    if t.elapsed() > Duration::from_secs(10) {
                        return Err(WorkloadError("never told to stop".into()));
                    }
                    thread::sleep(Duration::from_millis(2));
                }
                return Ok(Step::End);
            }
            self.0 += 1;
            Ok(Step::Done)
        }
    }
    impl Instance for Waiter {
        fn worker(&self, _tid: usize, _rng: Rng) -> Result<Worker, WorkloadError> {
            Ok(Worker::Event(Box::new(WaiterWorker(0))))
        }
    }

    /// An observer that takes 1.6 s to print its first interval, as a controller kept
    /// from its CPU by thousands of runnable threads does.
    struct SlowFirst(Mutex<Vec<(f64, usize)>>);
    impl Observer for SlowFirst {
        fn interval(&self, s: &IntervalSample) {
            let mut v = self.0.lock().unwrap();
            v.push((s.t_s, s.threads));
            if v.len() == 1 {
                thread::sleep(Duration::from_millis(1600));
            }
        }
    }

    /// A late controller still reports the interval that ends on the limit, and names an
    /// interval after the last grid point it passed (4000 cpu threads printed `[ 1s ]` for
    /// 0-2.3 s and nothing for 2 s).
    #[test]
    fn a_late_controller_still_reports_the_interval_ending_on_the_limit() {
        let obs = SlowFirst(Mutex::new(Vec::new()));
        let m = run(
            &plan(2, 2.0, 0.5, 0),
            &Sleepy(Duration::from_millis(10)),
            Clock::monotonic(),
            &obs,
        )
        .unwrap();
        assert_eq!(m.stop, StopReason::TimeLimit);
        let seen = obs.0.lock().unwrap().clone();
        assert_eq!(seen.first().map(|s| s.0), Some(0.5), "{seen:?}");
        assert_eq!(seen.last(), Some(&(2.0, 2)), "{seen:?}");
        assert_eq!(grid(&m).last(), Some(&2.0));
        // Its length is the real one (0.5 s to the late wake), as its count is.
        let last = m.intervals.last().unwrap();
        assert!(last.elapsed_s >= 1.55, "{last:?}");
        // Off the grid (--time=1, intervals of 0.3 s): a late wake past the limit names the
        // interval after the last point within it, never after 1.2 s.
        let obs = SlowFirst(Mutex::new(Vec::new()));
        let m = run(
            &plan(2, 1.0, 0.3, 0),
            &Sleepy(Duration::from_millis(10)),
            Clock::monotonic(),
            &obs,
        )
        .unwrap();
        let points = grid(&m);
        assert!(points.iter().all(|&t| t <= 1.0), "{points:?}");
    }

    /// Events that keep a CPU busy for 5 ms and note when they started.
    struct Burner(Arc<Mutex<Vec<Instant>>>);
    struct BurnerWorker(Arc<Mutex<Vec<Instant>>>);
    impl EventWorker for BurnerWorker {
        fn event(&mut self, _c: &crate::recorder::Counters) -> Result<Step, WorkloadError> {
            let t = Instant::now();
            self.0.lock().unwrap().push(t);
            while t.elapsed() < Duration::from_millis(5) {
                std::hint::spin_loop();
            }
            Ok(Step::Done)
        }
    }
    impl Instance for Burner {
        fn worker(&self, _tid: usize, _rng: Rng) -> Result<Worker, WorkloadError> {
            Ok(Worker::Event(Box::new(BurnerWorker(self.0.clone()))))
        }
    }

    /// Many more threads than CPUs: most threads get their first time slice late, some
    /// after the time limit. None of them may start an event then (4000 cpu threads with
    /// --time=1 ran 1.9-4.4 s when each late thread ran one event first).
    #[test]
    fn no_event_starts_after_the_time_limit_however_many_threads_wait_for_a_cpu() {
        let starts = Arc::new(Mutex::new(Vec::new()));
        let m = run(
            &plan(1000, 0.05, 0.0, 0),
            &Burner(starts.clone()),
            Clock::monotonic(),
            &Quiet,
        )
        .unwrap();
        assert_eq!(m.stop, StopReason::TimeLimit);
        // The run starts before any event does: the limit is no later than the first
        // event's start plus the run time. 30 ms of slack for a thread preempted between
        // its check and the event's first instruction.
        let starts = starts.lock().unwrap();
        let first = *starts.iter().min().unwrap();
        let limit = first + Duration::from_millis(50 + 30);
        let late = starts.iter().filter(|&&t| t > limit).count();
        assert_eq!(
            late,
            0,
            "{late} of {} events started after the limit",
            starts.len()
        );
        drop(starts);
        // With --events too: the late threads' claims against it are never run, and a run
        // its time limit ended says so (it said event_limit). A run whose 500 events all
        // started in time did reach its event limit.
        let mut cut = 0;
        for _ in 0..3 {
            let m = run(
                &plan(1000, 0.02, 0.0, 500),
                &Burner(Arc::new(Mutex::new(Vec::new()))),
                Clock::monotonic(),
                &Quiet,
            )
            .unwrap();
            let want = if m.counters.events < 500 {
                cut += 1;
                StopReason::TimeLimit
            } else {
                StopReason::EventLimit
            };
            assert_eq!(m.stop, want, "{} events", m.counters.events);
        }
        assert!(cut > 0, "no run was cut by its time limit");
    }

    #[test]
    fn a_waiting_event_learns_that_the_run_is_over() {
        assert!(!stopping(), "outside a worker thread only Ctrl-C stops");
        let t = Instant::now();
        let m = run(&plan(2, 0.3, 0.0, 0), &Waiter, Clock::monotonic(), &Quiet).unwrap();
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert_eq!(m.stop, StopReason::TimeLimit);
        assert_eq!(m.counters.events, 6, "the abandoned events are not counted");
        assert!(!stopping(), "the run's flag stays with its worker threads");
    }

    #[test]
    fn an_interval_has_the_latency_of_the_events_completed_in_it() {
        // 2 threads of 90 ms events, ticks every 200 ms: at every tick both threads are
        // (almost always) inside an event, and each interval completed ~4 of them. The
        // interval's latency is theirs, never 0 (the old runner waited 10 ms for the
        // threads to hand over their records, then printed p95 0).
        let m = run(
            &plan(2, 0.6, 0.2, 0),
            &Sleepy(Duration::from_millis(90)),
            Clock::monotonic(),
            &Quiet,
        )
        .unwrap();
        assert_eq!(grid(&m), [0.2, 0.4, 0.6]);
        for s in &m.intervals {
            assert!(s.delta.events > 0, "{s:?}");
            let l = &s.latency;
            assert!(l.count > 0, "events completed but no latency: {s:?}");
            for p in &l.percentiles {
                assert!(p.ns >= 90_000_000 && p.ns < 200_000_000, "{s:?}");
            }
            assert!(l.min_ns >= 90_000_000 && l.max_ns < 200_000_000, "{s:?}");
            assert!(l.avg_ns() >= 90_000_000, "{s:?}");
        }
        // No event is in two intervals (the ones that end past the limit are only in the
        // final report).
        let in_intervals: u64 = m.intervals.iter().map(|s| s.latency.count).sum();
        assert!(in_intervals <= m.latency.count);
    }

    #[test]
    fn thread_counts_beyond_the_hosts_limits_are_refused_naming_the_limit() {
        let l = HostLimits {
            tasks_max: Some(32_768),
            tasks_now: Some(250),
            max_map_count: Some(65_530),
            maps_now: Some(100),
            nproc: Some(1_000),
            root: false,
            mem_available: Some(1 << 28),
        };
        assert!(check_thread_capacity(500, &l).is_ok());
        let e = check_thread_capacity(20_000, &l).unwrap_err();
        assert!(e.contains("vm.max_map_count is 65530"), "{e}");
        let e = check_thread_capacity(40_000, &l).unwrap_err();
        assert!(e.contains("pid_max"), "{e}");
        let e = check_thread_capacity(2_000, &l).unwrap_err();
        assert!(e.contains("RLIMIT_NPROC"), "{e}");
        let root = HostLimits {
            root: true,
            ..l.clone()
        };
        let e = check_thread_capacity(5_000, &root).unwrap_err();
        assert!(e.contains("memory is available"), "{e}");
        assert!(check_thread_capacity(4_000, &root).is_ok());
        // Unknown limits refuse nothing.
        assert!(check_thread_capacity(50_000, &HostLimits::default()).is_ok());
    }
}
