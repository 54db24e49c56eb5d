//! The worker threads' side of a run: each thread's private state, the event loop that
//! times event workers, the [`RunControl`] loop workers pace themselves with, the
//! open-loop arrival queue and its generator thread. Everything here runs per event or
//! per operation: no locks, allocations or prints on the way.

use super::{RATE_QUEUE_CAPACITY, RUN, Shared};
use crate::clock::Clock;
use crate::rand::Rng;
use crate::recorder::live::LiveLatency;
use crate::recorder::{Counters, LatencyRec};
use crate::workload::{EventWorker, Step, Worker};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

/// Arrival timestamps of the open-loop schedule, shared by event workers (sysbench's model:
/// one queue, any idle worker takes the next arrival).
pub(super) struct RateQueue {
    pub(super) q: Mutex<VecDeque<u64>>,
    pub(super) cv: Condvar,
}

impl RateQueue {
    pub(super) fn pop(&self, stop: &AtomicBool) -> Option<u64> {
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

    pub(super) fn len(&self) -> u64 {
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

    /// When the run started (the gate opened), in ticks: the origin of a loop worker's own
    /// delays (fio's `startdelay` counts from there).
    pub fn run_start(&self) -> u64 {
        self.shared.start.load(Acquire)
    }

    /// Ends this thread's part of the run at `t` (ticks) if that is before the run's own
    /// limit: from then on [`should_stop`](Self::should_stop) and [`next_op`](Self::next_op)
    /// say stop, as at the run's time limit (operations in flight complete and count). For
    /// loop workers whose threads have limits of their own (fio's per-job `runtime`).
    pub fn end_at(&mut self, t: u64) {
        self.st.deadline = self.st.deadline.min(t);
    }

    /// Moves this thread's end to `t` (ticks), later or earlier than before, never past the
    /// run's own limit: for loop workers whose own time starts again (fio's queue-depth
    /// search starts a job's `runtime` again for its final window).
    pub fn restart_end(&mut self, t: u64) {
        self.st.deadline = t.min(self.shared.deadline.load(Acquire));
    }

    /// When this thread's part of the run ends (ticks): the run's time limit, or earlier
    /// after [`end_at`](Self::end_at). Far in the future for a run without one.
    pub fn deadline(&self) -> u64 {
        self.st.deadline
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

    /// Sleeps until the clock reaches `t` in one sleep, as fio's `usec_sleep` (a
    /// `nanosleep` of the whole wait, slept again for what is left when it wakes early):
    /// where [`wait_until`](Self::wait_until) wakes every 10 ms to look for a stop and
    /// spends its last 2 ms yielding and spinning for precision, this costs the thread one
    /// context switch per wait, also on a loaded machine (where each yield of the last 2 ms
    /// was one: 437 for 31 think times under a test suite's load), and overshoots as a
    /// sleep does (timer slack, tens of µs). Ends at once when the run stops or aborts, or
    /// when `woken()` says so after a [`ring`](Self::ring) (it is asked under the bell's
    /// lock, so a signal stored before the ring is never missed). Returns the time reached.
    pub fn sleep_until(&mut self, t: u64, woken: &dyn Fn() -> bool) -> u64 {
        let clock = self.shared.clock;
        let (lock, cv) = &self.shared.bell;
        let mut g = lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let now = clock.now();
            if now >= t || self.shared.stop.load(Acquire) || woken() {
                return now;
            }
            g = cv
                .wait_timeout(g, Duration::from_nanos(clock.to_ns(t - now).max(1)))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Wakes the run's threads sleeping in [`sleep_until`](Self::sleep_until), to look at
    /// a signal of the workload's own just stored (a job told to stop).
    pub fn ring(&self) {
        self.shared.ring();
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

pub(super) fn thread_main(
    shared: Arc<Shared>,
    tid: usize,
    worker: Worker,
    gate: Arc<(Mutex<bool>, Condvar)>,
) {
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
    let mut worker = worker;
    let started = match &mut worker {
        Worker::Event(w) => w.start(&shared.slots[tid].counters),
        Worker::Loop(w) => w.start(&shared.slots[tid].counters),
    };
    if let Err(e) = started {
        shared.fail(format!("thread {tid}: {e}"));
    }
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

pub(super) fn generator(shared: Arc<Shared>, rate: f64) {
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
