//! `null` and `null.loop`: workloads that do nothing, to measure hostbench itself.
//!
//! `null` is an empty event: its events/s is the harness ceiling (two clock reads, one
//! histogram record, one counter bump and the limit checks per event).
//!
//! `null.loop` is the loop-worker shape without real I/O: each thread keeps `depth`
//! synthetic operations in flight, each completing `latency` after it was issued, and
//! records completions through the runner's `RunControl`. In open-loop mode (`--rate`) an
//! operation that finds all `depth` slots busy waits, and that wait is part of its latency
//! (it is measured from the intended start). It proves limits, warmup, rate schedules,
//! intervals and Ctrl-C for the shape HTTP and fio-style I/O build on.

use hostbench_core::params::{ParamKind, ParamSpec};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counters;
use hostbench_core::runner::RunControl;
use hostbench_core::workload::*;
use std::collections::VecDeque;

/// Empty events.
pub struct Null;

/// Synthetic operations at a queue depth.
pub struct NullLoop;

struct NullWorker;

impl EventWorker for NullWorker {
    #[inline]
    fn event(&mut self, _c: &Counters) -> Result<Step, WorkloadError> {
        Ok(Step::Done)
    }
}

struct NullInstance;

impl Instance for NullInstance {
    fn worker(&self, _tid: usize, _rng: Rng) -> Result<Worker, WorkloadError> {
        Ok(Worker::Event(Box::new(NullWorker)))
    }
}

impl Workload for Null {
    fn id(&self) -> &'static str {
        "null"
    }
    fn category(&self) -> Category {
        Category::System
    }
    fn summary(&self) -> &'static str {
        "an empty event: measures hostbench's own cost per event"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }
    fn setup(&self, _ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        Ok(Box::new(NullInstance))
    }
}

const LOOP_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "depth",
        kind: ParamKind::Int {
            min: 1,
            max: 1 << 20,
        },
        default: "16",
        unit: "operations",
        help: "operations each thread keeps in flight",
        sysbench: None,
    },
    ParamSpec {
        name: "latency",
        kind: ParamKind::Seconds,
        default: "100us",
        unit: "s",
        help: "time from issuing a synthetic operation to its completion",
        sysbench: None,
    },
];

struct LoopInstance {
    depth: usize,
    latency_ns: u64,
}

struct LoopWorkerImpl {
    depth: usize,
    latency_ns: u64,
    /// (intended start, completion time) of operations in flight, in completion order
    /// (constant latency keeps it FIFO).
    inflight: VecDeque<(u64, u64)>,
}

impl LoopWorker for LoopWorkerImpl {
    fn run(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        let lat = ctl.clock().from_ns(self.latency_ns);
        let mut now = ctl.now();
        // The next operation, claimed from the runner but not yet issued.
        let mut claimed: Option<u64> = None;
        let mut more = true;
        loop {
            let room = self.inflight.len() < self.depth;
            // Claim only with a free slot: in closed loop the intended start is the claim
            // time, and a full queue must not count as this operation's latency.
            if claimed.is_none() && more && room {
                claimed = ctl.next_op(now);
                more = claimed.is_some();
            }
            if let Some(t) = claimed.filter(|&t| room && t <= now) {
                // Issued now; it completes `lat` later, whenever it was meant to start.
                self.inflight.push_back((t, now + lat));
                claimed = None;
                continue;
            }
            // Sleep until the next thing happens: an issue falling due or a completion.
            let due = claimed.filter(|_| room);
            let done = self.inflight.front().map(|&(_, d)| d);
            let Some(wake) = due.into_iter().chain(done).min() else {
                return Ok(());
            };
            now = ctl.wait_until(wake);
            if ctl.aborted() {
                return Ok(());
            }
            while let Some(&(intended, d)) = self.inflight.front() {
                if d > now {
                    break;
                }
                ctl.record(intended, d);
                self.inflight.pop_front();
            }
        }
    }
}

impl Instance for LoopInstance {
    fn worker(&self, _tid: usize, _rng: Rng) -> Result<Worker, WorkloadError> {
        Ok(Worker::Loop(Box::new(LoopWorkerImpl {
            depth: self.depth,
            latency_ns: self.latency_ns,
            inflight: VecDeque::with_capacity(self.depth),
        })))
    }
}

impl Workload for NullLoop {
    fn id(&self) -> &'static str {
        "null.loop"
    }
    fn category(&self) -> Category {
        Category::System
    }
    fn summary(&self) -> &'static str {
        "synthetic operations at a queue depth and fixed latency: the loop-worker shape without I/O"
    }
    fn params(&self) -> &'static [ParamSpec] {
        LOOP_PARAMS
    }
    fn caps(&self) -> Caps {
        Caps {
            loop_worker: true,
            ..Caps::default()
        }
    }
    fn small_params(&self) -> &'static [(&'static str, &'static str)] {
        &[("latency", "1us")]
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        Ok(Box::new(LoopInstance {
            depth: ctx.params.int("depth") as usize,
            latency_ns: (ctx.params.float("latency") * 1e9) as u64,
        }))
    }
}
