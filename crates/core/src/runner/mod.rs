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
use crate::recorder::live::LiveLatency;
use crate::recorder::{Counters, LatencyRec};
use crate::workload::{Instance, Worker};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

mod controller;
mod limits;
mod measurement;
mod worker;

pub use limits::{CapacityError, HostLimits, check_thread_capacity};
pub use measurement::{
    IntervalSample, Measurement, Observer, RunError, Silent, StopReason, ThreadTotals,
};
pub use worker::RunControl;

use controller::Controller;
use worker::{RateQueue, generator, thread_main};

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
    /// Where [`RunControl::sleep_until`] sleeps: rung at every stop or abort, and by a
    /// worker's [`RunControl::ring`].
    bell: (Mutex<()>, Condvar),
}

impl Shared {
    /// Wakes every thread sleeping in [`RunControl::sleep_until`] (after a stop, an abort
    /// or a worker's own signal was stored: they check it under the bell's lock).
    fn ring(&self) {
        let _g = self.bell.0.lock().unwrap_or_else(|p| p.into_inner());
        self.bell.1.notify_all();
    }

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
        self.ring();
        self.controller.unpark();
    }
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
        bell: (Mutex::new(()), Condvar::new()),
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
                shared.ring();
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
    // A worker that failed to start (its `start` hook) failed the run before it began.
    if !shared.abort.load(Acquire) {
        observer.started();
    }

    let mut ctl = Controller::new(&shared, plan, start_i);
    let result = ctl.drive(observer, &mut handles);
    shared.stop.store(true, Release);
    shared.ring();
    if let Some(q) = &shared.queue {
        q.cv.notify_all();
    }
    if let Some(g) = arrivals {
        let _ = g.join();
    }
    let mut m = Measurement { seed, ..result };
    if matches!(m.stop, StopReason::Interrupted | StopReason::ForcedShutdown) {
        // At a time limit what was in flight is simply past the end, as for every workload.
        m.unfinished = match instance.in_flight() {
            Some(n) => n,
            None => m.unfinished.max(instance.abandoned()),
        };
    }
    Ok(m)
}

fn open_gate(gate: &(Mutex<bool>, Condvar)) {
    *gate.0.lock().unwrap_or_else(|p| p.into_inner()) = true;
    gate.1.notify_all();
}
/// Counter deltas as a rate per second over `secs`.
pub fn per_second(v: u64, secs: f64) -> f64 {
    if secs > 0.0 { v as f64 / secs } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use crate::workload::{EventWorker, Step, WorkloadError};

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

    /// `EventWorker::start` runs in the worker's own thread before the run starts; when it
    /// fails, the run fails without starting (no `started`, no events) and says why.
    #[test]
    fn start_runs_in_the_worker_thread_and_its_failure_stops_the_run() {
        use std::sync::atomic::AtomicBool;
        struct Starting {
            fail_tid: Option<usize>,
        }
        struct StartingWorker {
            tid: usize,
            fail: bool,
            started_here: bool,
        }
        impl EventWorker for StartingWorker {
            fn start(&mut self, _c: &crate::recorder::Counters) -> Result<(), WorkloadError> {
                self.started_here = thread::current()
                    .name()
                    .is_some_and(|n| n == format!("hb-worker-{}", self.tid));
                if self.fail {
                    return Err(WorkloadError::failed("no state"));
                }
                Ok(())
            }
            fn event(&mut self, _c: &crate::recorder::Counters) -> Result<Step, WorkloadError> {
                assert!(self.started_here, "start ran in this worker's thread");
                Ok(Step::Done)
            }
        }
        impl Instance for Starting {
            fn worker(&self, tid: usize, _rng: Rng) -> Result<Worker, WorkloadError> {
                Ok(Worker::Event(Box::new(StartingWorker {
                    tid,
                    fail: self.fail_tid == Some(tid),
                    started_here: false,
                })))
            }
        }
        struct Seen(AtomicBool);
        impl Observer for Seen {
            fn started(&self) {
                self.0.store(true, Relaxed);
            }
        }
        let seen = Seen(AtomicBool::new(false));
        let m = run(
            &plan(2, 0.0, 0.0, 100),
            &Starting { fail_tid: None },
            Clock::monotonic(),
            &seen,
        )
        .unwrap();
        assert_eq!((m.stop, m.counters.events), (StopReason::EventLimit, 100));
        assert!(seen.0.load(Relaxed));
        let seen = Seen(AtomicBool::new(false));
        let m = run(
            &plan(2, 0.0, 0.0, 100),
            &Starting { fail_tid: Some(1) },
            Clock::monotonic(),
            &seen,
        )
        .unwrap();
        assert_eq!(m.stop, StopReason::Error);
        assert_eq!(m.counters.events, 0);
        assert_eq!(m.error.as_deref(), Some("thread 1: no state"));
        assert!(
            !seen.0.load(Relaxed),
            "a run that never began is not announced"
        );
    }

    /// A think time or a rate's wait is one sleep, as fio's `usec_sleep`: it costs the
    /// thread no CPU. (It used to spend each wait's last 2 ms yielding and spinning: 2 ms
    /// of CPU per wait, and on a loaded machine one context switch per yield.)
    #[test]
    fn sleep_until_sleeps_without_spinning() {
        use crate::workload::LoopWorker;
        use std::sync::Mutex;
        struct Sleeper(Arc<Mutex<Option<(Duration, u64, u64)>>>);
        fn thread_cpu() -> Duration {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: clock_gettime writes the timespec it is given.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
        }
        impl LoopWorker for Sleeper {
            fn run(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
                let clock = ctl.clock();
                let (cpu0, mut late) = (thread_cpu(), 0u64);
                for _ in 0..20 {
                    let t = ctl.now() + clock.from_ns(5_000_000);
                    let reached = ctl.sleep_until(t, &|| false);
                    assert!(reached >= t);
                    late = late.max(clock.to_ns(reached - t));
                }
                *self.0.lock().unwrap() = Some((thread_cpu() - cpu0, late, 20));
                Ok(())
            }
        }
        struct Sleepers(Arc<Mutex<Option<(Duration, u64, u64)>>>);
        impl Instance for Sleepers {
            fn worker(&self, _tid: usize, _rng: Rng) -> Result<Worker, WorkloadError> {
                Ok(Worker::Loop(Box::new(Sleeper(self.0.clone()))))
            }
        }
        let seen = Arc::new(Mutex::new(None));
        run(
            &plan(1, 0.0, 0.0, 0),
            &Sleepers(seen.clone()),
            Clock::monotonic(),
            &Quiet,
        )
        .unwrap();
        let (cpu, late, n) = seen.lock().unwrap().take().expect("the worker ran");
        // 20 waits of 5 ms: tens of µs of CPU each to go to sleep and wake (0.5 ms for
        // the 20 under a load of 10 on 2 cores; the yielding version took 10.8 ms there,
        // up to 2 ms a wait on an idle machine).
        assert!(
            cpu < Duration::from_millis(4),
            "{n} sleeps cost {cpu:?} of CPU"
        );
        assert!(late < 1_000_000_000, "a wake-up {late} ns late");
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
                        return Err(WorkloadError::failed("never told to stop"));
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
}
