//! The run: the state the threads share, and the loop worker each thread runs (pin,
//! first-touch, timing check, the kernel passes between barriers, the error sums).

use super::arrays::{Arrays, partition};
use super::kernels::{Isa, Kernel};
use super::size::SizeChoice;
use super::sys::{AffinityError, Padded, SpinBarrier, affinity};
use super::validation::{ErrorSums, RESTART_ITERATIONS, Validation, expected};
use hostbench_core::runner::RunControl;
use hostbench_core::workload::*;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Mutex};

/// What thread 0 found, kept for the result.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    /// Nanoseconds of each completed kernel pass, in order.
    pub(super) times_ns: Vec<u64>,
    /// The timing check (`a = 2a`), ns.
    pub(super) timing_check_ns: u64,
    /// Smallest step of the clock observed, ns.
    pub(super) granularity_ns: u64,
    /// The verdict, once the run has finished.
    pub(super) validation: Option<Validation>,
}

pub(super) struct Shared {
    pub(super) arrays: Arrays,
    pub(super) threads: usize,
    pub(super) ntimes: u64,
    /// Kernel order of one iteration (four, or eight with the non-temporal variant).
    pub(super) order: Vec<(Kernel, bool)>,
    pub(super) isa: Isa,
    pub(super) nt_requested: bool,
    pub(super) size: SizeChoice,
    pub(super) offset: u64,
    pub(super) cpus: Result<Vec<usize>, AffinityError>,
    pub(super) barrier: SpinBarrier,
    /// Passes every thread may run; only ever grows, written by thread 0 before a barrier.
    pub(super) allowed: Padded<AtomicU64>,
    pub(super) counted: AtomicUsize,
    pub(super) pinned: Mutex<Vec<Option<Result<usize, AffinityError>>>>,
    pub(super) sums: Mutex<Vec<ErrorSums>>,
    pub(super) outcome: Mutex<Outcome>,
    #[cfg(test)]
    pub(super) corrupt: Option<usize>,
}

impl Shared {
    fn chunk(&self, tid: usize) -> Range<usize> {
        partition(self.arrays.n, self.threads, tid)
    }

    /// Runs one kernel over this thread's chunk.
    fn pass(&self, k: Kernel, nt: bool, r: &Range<usize>) {
        let p = self.arrays.abc();
        let (d, x, y) = k.operands();
        // SAFETY: `r` lies within 0..n of each array; this thread alone touches these
        // elements (partition), and the barrier orders passes.
        unsafe {
            self.isa.run(
                k,
                nt,
                p[d].add(r.start),
                p[x].add(r.start),
                p[y].add(r.start),
                r.len(),
            )
        }
    }

    fn first_touch(&self, r: &Range<usize>) {
        let [a, b, c] = self.arrays.abc();
        for (p, v) in [(a, 1.0), (b, 2.0), (c, 0.0)] {
            // SAFETY: this thread's chunk of one array; nobody else touches it.
            let s = unsafe { std::slice::from_raw_parts_mut(p.add(r.start), r.len()) };
            s.fill(v);
        }
    }

    /// Sets this thread's chunk of a back to 2.0 ([`RESTART_ITERATIONS`]).
    fn restart_a(&self, r: &Range<usize>) {
        let [a, _, _] = self.arrays.abc();
        // SAFETY: this thread's chunk of a; nobody else touches it.
        let s = unsafe { std::slice::from_raw_parts_mut(a.add(r.start), r.len()) };
        s.fill(2.0);
    }

    /// STREAM's timing check, `a = 2a`, over this thread's chunk.
    fn double_a(&self, r: &Range<usize>) {
        let [a, _, _] = self.arrays.abc();
        // SAFETY: this thread's chunk of a; nobody else touches it.
        let s = unsafe { std::slice::from_raw_parts_mut(a.add(r.start), r.len()) };
        s.iter_mut().for_each(|v| *v *= 2.0);
    }

    fn error_sums(&self, r: &Range<usize>, exp: [f64; 3]) -> ErrorSums {
        let [a, b, c] = self.arrays.abc();
        // SAFETY: this thread's chunk, read after the last barrier of the kernels.
        let s = |p: *mut f64| unsafe { std::slice::from_raw_parts(p.add(r.start), r.len()) };
        ErrorSums::of([s(a), s(b), s(c)], exp)
    }
}

/// Smallest non-zero step between successive readings of the clock, in ns (STREAM's
/// `checktick`, over 20 distinct readings).
fn clock_granularity(ctl: &RunControl<'_>) -> u64 {
    let clock = ctl.clock();
    let mut best = u64::MAX;
    let mut t1 = ctl.now();
    for _ in 0..20 {
        let mut t2 = ctl.now();
        let mut spins = 0u32;
        while t2 == t1 && spins < 1_000_000 {
            t2 = ctl.now();
            spins += 1;
        }
        best = best.min(clock.to_ns(t2.saturating_sub(t1)).max(1));
        t1 = t2;
    }
    best
}

pub(super) struct StreamWorker {
    pub(super) s: Arc<Shared>,
    pub(super) tid: usize,
}

impl StreamWorker {
    /// Waits until every worker has started. In a normal run they all have been spawned
    /// before the runner opens its gate, so this takes microseconds; only when the runner
    /// failed to spawn one (and told the others to stop) does it give up, after a second.
    fn roll_call(&self, ctl: &mut RunControl<'_>) -> bool {
        let mut stopped_since: Option<std::time::Instant> = None;
        while self.s.counted.load(Acquire) < self.s.threads {
            if ctl.should_stop(ctl.now()) {
                let t = *stopped_since.get_or_insert_with(std::time::Instant::now);
                if t.elapsed() > std::time::Duration::from_secs(1) {
                    return false;
                }
            }
            std::thread::yield_now();
        }
        true
    }

    /// Thread 0: may pass `p` run? Claims it from the runner (limits, Ctrl-C).
    fn want(&self, ctl: &mut RunControl<'_>, p: u64) -> bool {
        let limit = self.s.ntimes.saturating_mul(self.s.order.len() as u64);
        if self.s.ntimes > 0 && p >= limit {
            return false;
        }
        let now = ctl.now();
        !ctl.aborted() && ctl.next_op(now).is_some()
    }
}

impl LoopWorker for StreamWorker {
    fn run(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        let s = &*self.s;
        let tid = self.tid;
        let lead = tid == 0;
        s.barrier.register(tid);
        s.counted.fetch_add(1, AcqRel);
        if !self.roll_call(ctl) {
            // Some worker thread never started (the runner could not spawn it): the barriers
            // could never complete, so do nothing.
            return Ok(());
        }
        let pinned = match &s.cpus {
            Ok(cpus) if !cpus.is_empty() => {
                let cpu = cpus[tid % cpus.len()];
                affinity::pin(cpu).map(|()| cpu)
            }
            Ok(_) => Err(AffinityError::NoCpu),
            Err(e) => Err(e.clone()),
        };
        if let Ok(mut p) = s.pinned.lock() {
            p[tid] = Some(pinned);
        }
        let r = s.chunk(tid);
        s.first_touch(&r);
        let granularity = if lead { clock_granularity(ctl) } else { 0 };

        // STREAM's timing check, which is also part of the validated recurrence.
        let clock = ctl.clock();
        let t0 = s.barrier.wait(tid, &clock);
        s.double_a(&r);
        if lead && self.want(ctl, 0) {
            s.allowed.0.store(1, Release);
        }
        let mut t_prev = s.barrier.wait(tid, &clock);
        let mut times = Vec::new();
        if lead {
            let mut o = s.outcome.lock().unwrap_or_else(|p| p.into_inner());
            o.timing_check_ns = clock.to_ns(t_prev.saturating_sub(t0));
            o.granularity_ns = granularity;
            let planned = s.ntimes.saturating_mul(s.order.len() as u64);
            times.reserve(planned.clamp(64, 1 << 16) as usize);
        }

        // Each pass runs from one barrier's release to the next's.
        let mut p = 0u64;
        while p < s.allowed.0.load(Acquire) {
            let (k, nt) = s.order[(p % s.order.len() as u64) as usize];
            s.pass(k, nt, &r);
            if lead && self.want(ctl, p + 1) {
                s.allowed.0.store(p + 2, Release);
            }
            let t = s.barrier.wait(tid, &clock);
            if lead {
                times.push(clock.to_ns(t.saturating_sub(t_prev)));
                ctl.record(t_prev, t);
            }
            t_prev = t;
            p += 1;
            // A long run restarts the recurrence before it overflows; the rewrite of `a`
            // runs between two barriers, outside every timed pass. Every thread reads the
            // same `allowed` (thread 0 wrote it before the barrier above).
            if p.is_multiple_of(RESTART_ITERATIONS * s.order.len() as u64)
                && p < s.allowed.0.load(Acquire)
            {
                s.restart_a(&r);
                t_prev = s.barrier.wait(tid, &clock);
            }
        }

        #[cfg(test)]
        if let Some(i) = s.corrupt
            && r.contains(&i)
        {
            let [a, _, _] = s.arrays.abc();
            // SAFETY: element i of a lies in this thread's chunk.
            unsafe { *a.add(i) += 1.0 };
        }

        let order: Vec<Kernel> = s.order.iter().map(|&(k, _)| k).collect();
        let exp = expected(&order, p);
        let sums = s.error_sums(&r, exp);
        s.sums.lock().unwrap_or_else(|p| p.into_inner())[tid] = sums;
        s.barrier.wait(tid, &clock);
        if !lead {
            return Ok(());
        }
        let mut total = ErrorSums::default();
        for t in s.sums.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            total.merge(t);
        }
        let v = Validation::judge(&total, s.arrays.n as u64, exp);
        let failure = v.failure();
        let mut o = s.outcome.lock().unwrap_or_else(|p| p.into_inner());
        o.times_ns = times;
        o.validation = Some(v);
        match failure {
            Some(msg) => Err(WorkloadError::failed(msg)),
            None => Ok(()),
        }
    }
}
