//! The controller: the thread that started the run watches it from here. It ends warmup,
//! ticks interval reports, takes checkpoints, applies the deadline, forced shutdown and
//! Ctrl-C, collects the workers' records and builds the [`Measurement`].

use super::{INTERRUPT, IntervalSample, Measurement, Observer, Shared, StopReason, ThreadTotals};
use crate::plan::Plan;
use crate::recorder::live::LiveTotals;
use crate::recorder::{CounterSnapshot, LatencyRec};
use std::sync::atomic::Ordering::*;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

pub(super) struct Controller<'a> {
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
    pub(super) fn new(shared: &'a Shared, plan: &'a Plan, start: Instant) -> Self {
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
            stuck_threads: unfinished,
            error: self
                .shared
                .error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            seed: 0,
        }
    }

    pub(super) fn drive(
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
                self.shared.ring();
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
                self.shared.ring();
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
        self.shared.ring();
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
