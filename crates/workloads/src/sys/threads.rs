//! `threads`: sysbench's scheduler test. Each event takes one of `locks` mutexes (chosen
//! round-robin by a global counter) and, `yields` times, locks it, yields the CPU and
//! unlocks it. With more threads than locks, threads contend on the same mutex while
//! yielding inside the critical section: the figure is scheduler plus mutex hand-off cost.

use hostbench_core::params::{ParamKind, ParamSpec};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counters;
use hostbench_core::workload::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// The threads workload.
pub struct Threads;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "yields",
        kind: ParamKind::Int {
            min: 1,
            max: i64::MAX,
        },
        default: "1000",
        unit: "",
        help: "lock/yield/unlock cycles per event",
        sysbench: Some("thread-yields"),
    },
    ParamSpec {
        name: "locks",
        kind: ParamKind::Int {
            min: 1,
            max: 1 << 20,
        },
        default: "8",
        unit: "",
        help: "number of mutexes shared by all threads",
        sysbench: Some("thread-locks"),
    },
];

struct Shared {
    locks: Vec<Mutex<()>>,
    next: AtomicU64,
    yields: u64,
}

struct Instance(Arc<Shared>);

struct Worker(Arc<Shared>);

impl EventWorker for Worker {
    fn event(&mut self, _c: &Counters) -> Result<Step, WorkloadError> {
        let s = &*self.0;
        let i = (s.next.fetch_add(1, Relaxed) % s.locks.len() as u64) as usize;
        let m = &s.locks[i];
        for _ in 0..s.yields {
            let g = m.lock().unwrap_or_else(|p| p.into_inner());
            std::thread::yield_now();
            drop(g);
        }
        Ok(Step::Done)
    }
}

impl hostbench_core::workload::Instance for Instance {
    fn worker(
        &self,
        _tid: usize,
        _rng: Rng,
    ) -> Result<hostbench_core::workload::Worker, WorkloadError> {
        Ok(hostbench_core::workload::Worker::Event(Box::new(Worker(
            self.0.clone(),
        ))))
    }
}

impl Workload for Threads {
    fn id(&self) -> &'static str {
        "threads"
    }
    fn category(&self) -> Category {
        Category::System
    }
    fn summary(&self) -> &'static str {
        "lock, yield, unlock a shared mutex `yields` times per event (sysbench threads)"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn sysbench_test(&self) -> Option<&'static str> {
        Some("threads")
    }
    fn small_params(&self) -> &'static [(&'static str, &'static str)] {
        &[("yields", "10")]
    }
    fn setup(
        &self,
        ctx: &SetupCtx<'_>,
    ) -> Result<Box<dyn hostbench_core::workload::Instance>, WorkloadError> {
        let n = ctx.params.int("locks") as usize;
        Ok(Box::new(Instance(Arc::new(Shared {
            locks: (0..n).map(|_| Mutex::new(())).collect(),
            next: AtomicU64::new(0),
            yields: ctx.params.int("yields") as u64,
        }))))
    }
}
