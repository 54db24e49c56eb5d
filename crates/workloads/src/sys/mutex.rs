//! `mutex`: sysbench's lock-contention test. Each thread runs exactly one event: `locks`
//! times, pick a mutex uniformly from `num`, spin `loops` empty iterations, lock it,
//! increment a shared counter, unlock. The figure is the total time (the events are the
//! threads), so compare `total time` or the latency of the one event per thread.
//!
//! Each mutex sits on its own 256-byte block as in sysbench, so neighbouring mutexes do not
//! share cache lines. sysbench's `--mutex-locks=0` wraps to ~4.3 billion iterations (an
//! unsigned do-while); here 0 is rejected instead.

use hostbench_core::params::{ParamKind, ParamSpec};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counters;
use hostbench_core::result::{Better, Figure, FigureDef, RunResult};
use hostbench_core::workload::*;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// The mutex workload.
pub struct MutexTest;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "num",
        kind: ParamKind::Int {
            min: 1,
            max: 1 << 24,
        },
        default: "4096",
        unit: "",
        help: "size of the mutex array",
        sysbench: Some("mutex-num"),
    },
    ParamSpec {
        name: "locks",
        kind: ParamKind::Int {
            min: 1,
            max: i64::MAX,
        },
        default: "50000",
        unit: "",
        help: "lock operations per thread (in its one event)",
        sysbench: Some("mutex-locks"),
    },
    ParamSpec {
        name: "loops",
        kind: ParamKind::Int {
            min: 0,
            max: i64::MAX,
        },
        default: "10000",
        unit: "",
        help: "empty loop iterations before each lock",
        sysbench: Some("mutex-loops"),
    },
];

#[repr(align(256))]
struct PaddedMutex(Mutex<()>);

struct Shared {
    mutexes: Vec<PaddedMutex>,
    global: AtomicU64,
    locks: u64,
    loops: u64,
}

struct Instance(Arc<Shared>);

struct Worker {
    s: Arc<Shared>,
    rng: Rng,
    done: bool,
}

impl EventWorker for Worker {
    fn event(&mut self, _c: &Counters) -> Result<Step, WorkloadError> {
        if self.done {
            return Ok(Step::End);
        }
        self.done = true;
        let s = &*self.s;
        let n = s.mutexes.len() as u64;
        for _ in 0..s.locks {
            let i = self.rng.uniform(0, n - 1) as usize;
            for j in 0..s.loops {
                black_box(j);
            }
            let g = s.mutexes[i].0.lock().unwrap_or_else(|p| p.into_inner());
            // A plain load+store under the lock, like sysbench's global_var++.
            s.global.store(s.global.load(Relaxed) + 1, Relaxed);
            drop(g);
        }
        Ok(Step::Done)
    }
}

impl hostbench_core::workload::Instance for Instance {
    fn worker(
        &self,
        _tid: usize,
        rng: Rng,
    ) -> Result<hostbench_core::workload::Worker, WorkloadError> {
        Ok(hostbench_core::workload::Worker::Event(Box::new(Worker {
            s: self.0.clone(),
            rng,
            done: false,
        })))
    }
}

/// The run's length: every thread's one event done.
pub const TOTAL_TIME_S: FigureDef = FigureDef {
    name: "total_time_s",
    label: "total time",
    unit: "s",
    better: Better::Lower,
};

impl Workload for MutexTest {
    fn id(&self) -> &'static str {
        "mutex"
    }
    fn category(&self) -> Category {
        Category::System
    }
    fn summary(&self) -> &'static str {
        "one event per thread: `locks` × (spin `loops`, lock a random mutex, bump a counter) (sysbench mutex)"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn sysbench_test(&self) -> Option<&'static str> {
        Some("mutex")
    }
    fn figures(&self, r: &RunResult) -> Vec<Figure> {
        // One event per thread: the run's length is the figure (sysbench users quote
        // "total time"), not its event rate.
        let mut f = vec![TOTAL_TIME_S.at(r.metrics.duration_s)];
        f.extend(r.default_figures().into_iter().skip(1));
        f
    }
    fn caps(&self) -> Caps {
        // One event per thread: the run ends when every thread has done its one.
        Caps {
            ends_itself: true,
            ..Caps::default()
        }
    }
    fn small_params(&self) -> &'static [(&'static str, &'static str)] {
        &[("locks", "100"), ("loops", "10")]
    }
    fn setup(
        &self,
        ctx: &SetupCtx<'_>,
    ) -> Result<Box<dyn hostbench_core::workload::Instance>, WorkloadError> {
        let n = ctx.params.int("num") as usize;
        Ok(Box::new(Instance(Arc::new(Shared {
            mutexes: (0..n).map(|_| PaddedMutex(Mutex::new(()))).collect(),
            global: AtomicU64::new(0),
            locks: ctx.params.int("locks") as u64,
            loops: ctx.params.int("loops") as u64,
        }))))
    }
}
