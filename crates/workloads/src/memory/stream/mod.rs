//! `stream`: John McCalpin's STREAM (v5.10) — Copy, Scale, Add and Triad over three arrays
//! of doubles — as a loop worker per thread.
//!
//! One event is one *kernel pass*: one kernel over the whole arrays by all threads, timed by
//! thread 0 from the barrier that starts it to the barrier that ends it (what STREAM times
//! around an `omp parallel for`). STREAM's conventions are kept exactly: bytes are credited
//! as the kernel names them (16 B per element for Copy and Scale, 24 B for Add and Triad; no
//! write-allocate traffic), MB = 10^6, statistics skip the first iteration, and the result is
//! validated by replaying the scalar recurrence (average absolute error per array against a
//! relative 1e-13).
//!
//! Invariants:
//! - The arrays are allocated untouched; each thread pins itself, then first-touches exactly
//!   the chunk it will later work on ([`partition`]), so pages land where they are used.
//! - Every element is read and written by one thread only, for the whole run; threads
//!   synchronise only at the barrier between kernel passes.
//! - Thread 0 alone decides whether the next pass runs (`--ntimes`, and the runner's limits
//!   and Ctrl-C through `RunControl::next_op`), publishing a monotonic pass count before the
//!   barrier, so every thread leaves the loop after the same pass and no barrier deadlocks.
//! - The kernels are explicit SIMD (SSE2 baseline; AVX or AVX-512 chosen at run time on
//!   x86_64) with regular stores, so no compiler can turn Copy into `memcpy` (whose large-size
//!   path uses non-temporal stores). Non-temporal stores are a separate, labelled variant.
//! - `ntimes = 0` (the native grammar's default) runs until the runner stops it (`--time`,
//!   `--events`); the STREAM front-end always sets it (default 10).

use hostbench_core::names::stream::{FIGURE_SUFFIX, col, fact, table};
use hostbench_core::params::{ParamKind, ParamSpec};
use hostbench_core::rand::Rng;
use hostbench_core::result::{Better, Column, Figure, Row, RunResult, Table, Warning, WarningKind};
use hostbench_core::workload::*;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Mutex};

mod arrays;
mod kernels;
mod size;
mod sys;
mod validation;
mod worker;

pub use arrays::{PARTITION_UNIT, partition};
pub use kernels::{Isa, Kernel};
pub use size::{SizeChoice, SizeRule, check_given_size, choose_size};
pub use validation::{ErrorSums, RESTART_ITERATIONS, Validation, expected};

use arrays::Arrays;
use size::mib;
use sys::{Padded, SpinBarrier, affinity};
use worker::{Outcome, Shared, StreamWorker};

/// The STREAM workload.
pub struct Stream;

/// Bytes per array element (`STREAM_TYPE` = double).
pub const BYTES_PER_ELEMENT: u64 = 8;
/// STREAM's scalar `q`.
pub const SCALAR: f64 = 3.0;
/// STREAM's validation threshold for doubles (average relative absolute error).
pub const EPSILON: f64 = 1e-13;
/// stream.c's default `STREAM_ARRAY_SIZE`, and the smallest size the automatic rule picks.
pub const STREAM_DEFAULT_ELEMENTS: u64 = 10_000_000;
/// In a virtual machine, the most last-level cache per vCPU believed to be the guest's
/// (see docs/stream.md: guests report the host socket's whole L3).
pub const GUEST_LLC_PER_CPU: u64 = 32 << 20;
/// The automatic size keeps the three arrays within this fraction of MemAvailable.
pub const AUTO_MEMORY_FRACTION: f64 = 0.5;
/// A size given by the user is refused when the arrays need more than this fraction of
/// MemAvailable (the rest is for the kernel, page tables and everything else running).
pub const USER_MEMORY_FRACTION: f64 = 0.9;
/// Automatic sizes are rounded up to a multiple of this many elements (8 MiB per array).
pub const AUTO_ROUND_ELEMENTS: u64 = 1 << 20;
/// STREAM's advice: each kernel should take at least this many clock ticks.
pub const MIN_TICKS: f64 = 20.0;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "array_size",
        kind: ParamKind::Int {
            min: 0,
            max: 1 << 40,
        },
        default: "0",
        unit: "elements",
        help: "elements per array (0 = STREAM's rule: each array at least 4x the last-level \
               caches, sanity-capped in VMs and by MemAvailable)",
        sysbench: None,
    },
    ParamSpec {
        name: "ntimes",
        kind: ParamKind::Int {
            min: 0,
            max: 1 << 32,
        },
        default: "0",
        unit: "iterations",
        help: "iterations of the four kernels, the first not counted (0 = until --time or \
               --events stops the run; must otherwise be at least 2)",
        sysbench: None,
    },
    ParamSpec {
        name: "offset",
        kind: ParamKind::Int {
            min: 0,
            max: 1 << 24,
        },
        default: "0",
        unit: "elements",
        help: "padding after each array (STREAM's OFFSET): shifts the arrays' relative alignment",
        sysbench: None,
    },
    ParamSpec {
        name: "nt_stores",
        kind: ParamKind::Bool,
        default: "off",
        unit: "",
        help: "also run the kernels with non-temporal (streaming) stores, reported separately",
        sysbench: None,
    },
    ParamSpec {
        name: "simd",
        kind: ParamKind::Choice(&["auto", "sse2", "avx", "avx512", "portable"]),
        default: "auto",
        unit: "",
        help: "vector width of the kernels (auto = AVX when the CPU has it, else SSE2)",
        sysbench: None,
    },
    ParamSpec {
        name: "huge_pages",
        kind: ParamKind::Bool,
        default: "off",
        unit: "",
        help: "ask for transparent huge pages (madvise) instead of the system's default policy",
        sysbench: None,
    },
];

/// Per-kernel statistics over iterations 2.. (STREAM skips the first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelStats {
    /// Timed passes counted.
    pub samples: u64,
    /// Shortest pass, s.
    pub min_s: f64,
    /// Mean pass, s.
    pub avg_s: f64,
    /// Longest pass, s.
    pub max_s: f64,
}

/// Statistics of slot `slot` of an iteration of `per_iter` passes, skipping iteration 0.
pub fn kernel_stats(times_ns: &[u64], per_iter: usize, slot: usize) -> Option<KernelStats> {
    let xs: Vec<f64> = times_ns
        .iter()
        .enumerate()
        .filter(|(p, _)| p % per_iter == slot && p / per_iter >= 1)
        .map(|(_, &t)| t as f64 / 1e9)
        .collect();
    if xs.is_empty() {
        return None;
    }
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(0.0, f64::max);
    Some(KernelStats {
        samples: xs.len() as u64,
        min_s: min,
        avg_s: xs.iter().sum::<f64>() / xs.len() as f64,
        max_s: max,
    })
}

/// Column names of the `stream` and `stream_nt` tables, in order.
pub const COLUMNS: [(&str, &str); 8] = [
    (col::BEST_RATE_MB_PER_S, "MB/s"),
    (col::AVG_TIME_S, "s"),
    (col::MIN_TIME_S, "s"),
    (col::MAX_TIME_S, "s"),
    ("bytes_per_iteration", "B"),
    ("samples", ""),
    ("traffic_bytes_per_iteration", "B"),
    ("best_traffic_rate_mb_per_s", "MB/s"),
];

struct StreamInstance(Arc<Shared>);

impl StreamInstance {
    fn table(&self, nt: bool) -> Table {
        let s = &self.0;
        let o = s.outcome.lock().unwrap_or_else(|p| p.into_inner());
        let n = s.arrays.n as u64;
        let per_iter = s.order.len();
        let rows = s
            .order
            .iter()
            .enumerate()
            .filter(|(_, (_, is_nt))| *is_nt == nt)
            .map(|(slot, &(k, _))| {
                let credited = k.streams() * BYTES_PER_ELEMENT * n;
                // A regular store first reads the line it writes (write-allocate).
                let traffic = credited + if nt { 0 } else { BYTES_PER_ELEMENT * n };
                let st = kernel_stats(&o.times_ns, per_iter, slot).filter(|x| x.min_s > 0.0);
                let rate = |b: u64| st.map(|x| 1e-6 * b as f64 / x.min_s);
                Row {
                    label: if nt {
                        format!("{} NT", k.name())
                    } else {
                        k.name().to_string()
                    },
                    values: vec![
                        rate(credited),
                        st.map(|x| x.avg_s),
                        st.map(|x| x.min_s),
                        st.map(|x| x.max_s),
                        Some(credited as f64),
                        Some(st.map_or(0, |x| x.samples) as f64),
                        Some(traffic as f64),
                        rate(traffic),
                    ],
                }
            })
            .collect();
        Table {
            name: if nt { table::STREAM_NT } else { table::STREAM }.into(),
            title: if nt {
                "STREAM kernels with non-temporal (streaming) stores: best rate over iterations \
                 2.. (MB = 10^6 B); no write-allocate traffic"
            } else {
                "STREAM kernels: best rate over iterations 2.. (MB = 10^6 B), credited bytes as \
                 STREAM counts them; traffic adds the write-allocate reads of regular stores"
            }
            .into(),
            columns: COLUMNS
                .iter()
                .map(|&(name, unit)| Column {
                    name: name.into(),
                    unit: unit.into(),
                })
                .collect(),
            rows,
        }
    }

    /// The fastest kernel's best time, s.
    fn shortest_pass_s(&self) -> Option<f64> {
        let o = self.0.outcome.lock().unwrap_or_else(|p| p.into_inner());
        let per_iter = self.0.order.len();
        (0..per_iter)
            .filter_map(|slot| kernel_stats(&o.times_ns, per_iter, slot))
            .map(|x| x.min_s)
            .reduce(f64::min)
    }

    fn nt_ran(&self) -> bool {
        self.0.order.iter().any(|&(_, nt)| nt)
    }
}

impl Instance for StreamInstance {
    fn worker(&self, tid: usize, _rng: Rng) -> Result<Worker, WorkloadError> {
        Ok(Worker::Loop(Box::new(StreamWorker {
            s: self.0.clone(),
            tid,
        })))
    }

    fn facts(&self) -> Vec<(String, f64)> {
        let s = &self.0;
        let o = s.outcome.lock().unwrap_or_else(|p| p.into_inner());
        let n = s.arrays.n as u64;
        let mut f: Vec<(&str, f64)> = vec![
            (fact::ARRAY_ELEMENTS, n as f64),
            (fact::OFFSET_ELEMENTS, s.offset as f64),
            (fact::BYTES_PER_ELEMENT, BYTES_PER_ELEMENT as f64),
            (fact::ARRAY_BYTES, (n * BYTES_PER_ELEMENT) as f64),
            (fact::TOTAL_BYTES, (3 * n * BYTES_PER_ELEMENT) as f64),
            (fact::NTIMES, s.ntimes as f64),
            (fact::PASSES, o.times_ns.len() as f64),
            (
                fact::ITERATIONS,
                (o.times_ns.len() / s.order.len().max(1)) as f64,
            ),
            (fact::THREADS_COUNTED, s.counted.load(Relaxed) as f64),
            (
                fact::THREADS_PINNED,
                s.pinned
                    .lock()
                    .map(|p| p.iter().filter(|x| matches!(x, Some(Ok(_)))).count())
                    .unwrap_or(0) as f64,
            ),
            (fact::NT_STORES, f64::from(u8::from(self.nt_ran()))),
            (fact::SIMD_BITS, f64::from(s.isa.bits())),
            (
                fact::HUGE_PAGES_ADVISED,
                f64::from(u8::from(s.arrays.huge_pages)),
            ),
            (fact::SIZE_RULE, s.size.rule as u8 as f64),
            (fact::CLOCK_GRANULARITY_NS, o.granularity_ns as f64),
            (fact::TIMING_CHECK_US, o.timing_check_ns as f64 / 1e3),
            (fact::EPSILON, EPSILON),
        ];
        if let Some(b) = s.size.llc_reported {
            f.push((fact::LLC_REPORTED_BYTES, b as f64));
        }
        if let Some(b) = s.size.llc_assumed {
            f.push((fact::LLC_ASSUMED_BYTES, b as f64));
        }
        if let Some(b) = s.size.mem_available {
            f.push((fact::MEM_AVAILABLE_BYTES, b as f64));
        }
        let mut out: Vec<(String, f64)> = f.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        if let Some(v) = &o.validation {
            out.push((fact::VALIDATED.into(), f64::from(u8::from(v.passed()))));
            for (k, name) in ["a", "b", "c"].iter().enumerate() {
                let mut put = |what: &str, x: f64| {
                    // JSON has no NaN or infinity; a non-number error is shown by `validated`
                    // and the error-element count.
                    if x.is_finite() {
                        out.push((fact::per_array(what, name), x));
                    }
                };
                put(fact::EXPECTED, v.expected[k]);
                put(fact::AVG_ABS_ERROR, v.avg_abs[k]);
                put(fact::AVG_REL_ERROR, v.avg_rel[k]);
                put(fact::ERROR_ELEMENTS, v.bad[k] as f64);
            }
        }
        out
    }

    fn tables(&self) -> Vec<Table> {
        let mut t = vec![self.table(false)];
        if self.nt_ran() {
            t.push(self.table(true));
        }
        t
    }

    fn warnings(&self) -> Vec<Warning> {
        let s = &self.0;
        let mut w = Vec::new();
        // The layout always says how the size was chosen; a warning only when hostbench
        // departed from STREAM's rule (memory cap, a VM's cache discounted, no host facts).
        let departed = matches!(s.size.rule, SizeRule::MemoryCapped | SizeRule::NoHostInfo)
            || s.size.llc_assumed != s.size.llc_reported;
        if let Some(m) = s.size.message.as_ref().filter(|_| departed) {
            w.push(Warning {
                kind: WarningKind::SizeChosen,
                message: m.clone(),
            });
        }
        let per_array = s.arrays.n as u64 * BYTES_PER_ELEMENT;
        if let Some(llc) = s.size.llc_assumed
            && per_array < 4 * llc
        {
            w.push(Warning {
                kind: WarningKind::CacheResident,
                message: format!(
                    "each array is {} but STREAM's rule asks for at least 4x the last-level \
                     cache ({} assumed): part of the traffic may be served by the cache and the \
                     rates overstate memory bandwidth. Use --array-size={} or more.",
                    mib(per_array),
                    mib(llc),
                    (4 * llc).div_ceil(BYTES_PER_ELEMENT)
                ),
            });
        }
        if s.nt_requested && !s.isa.has_nt() {
            w.push(Warning {
                kind: WarningKind::Unavailable,
                message: format!(
                    "non-temporal stores are implemented for x86_64 only (kernels here: {:?}); \
                     only the regular-store figures were measured",
                    s.isa
                ),
            });
        }
        let pinned = s.pinned.lock().map(|p| p.clone()).unwrap_or_default();
        let failures: Vec<String> = pinned
            .iter()
            .enumerate()
            .filter_map(|(t, p)| match p {
                Some(Err(e)) => Some(format!("thread {t}: {e}")),
                _ => None,
            })
            .collect();
        if !failures.is_empty() {
            w.push(Warning {
                kind: WarningKind::Unavailable,
                message: format!(
                    "threads could not be pinned ({}); the scheduler may move them and their \
                     pages may sit on another NUMA node",
                    failures.join("; ")
                ),
            });
        }
        if let Ok(cpus) = &s.cpus
            && !cpus.is_empty()
            && s.threads > cpus.len()
        {
            w.push(Warning {
                kind: WarningKind::Unavailable,
                message: format!(
                    "{} threads share {} CPU(s): threads wait for each other at every kernel \
                     and the rates measure the scheduler. Use --threads={} or fewer.",
                    s.threads,
                    cpus.len(),
                    cpus.len()
                ),
            });
        }
        if let Some(min_s) = self.shortest_pass_s() {
            let o = s.outcome.lock().unwrap_or_else(|p| p.into_inner());
            let quantum_us = (o.granularity_ns as f64 / 1e3).max(1.0);
            let ticks = min_s * 1e6 / quantum_us;
            if ticks < MIN_TICKS {
                let suggest = (s.arrays.n as f64 * MIN_TICKS / ticks.max(1e-3)).ceil();
                w.push(Warning {
                    kind: WarningKind::HarnessDominated,
                    message: format!(
                        "the fastest kernel pass took {:.1} us, {ticks:.1} clock ticks of \
                         {quantum_us:.0} us; STREAM asks for at least {MIN_TICKS} ticks per \
                         kernel, or the timer and the barrier between kernels distort the \
                         rates. Use --array-size={suggest:.0} or more.",
                        min_s * 1e6
                    ),
                });
            }
        }
        if let Some(v) = &s
            .outcome
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .validation
            && let Some(m) = v.failure()
        {
            w.push(Warning {
                kind: WarningKind::ValidationFailed,
                message: m,
            });
        }
        w
    }
}

impl Stream {
    fn build(&self, ctx: &SetupCtx<'_>) -> Result<Shared, WorkloadError> {
        let p = ctx.params;
        let given = p.int("array_size").max(0) as u64;
        let ntimes = p.int("ntimes").max(0) as u64;
        let offset = p.int("offset").max(0) as u64;
        let threads = ctx.threads.max(1);
        if ntimes == 1 {
            return Err(WorkloadError::usage(
                "--ntimes=1: STREAM discards the first iteration, so at least 2 are needed",
            ));
        }
        let isa = Isa::select(p.text("simd"))?;
        let size = if given > 0 {
            check_given_size(given, offset, ctx.host)?
        } else {
            choose_size(ctx.host, offset)
        };
        if size.elements < threads as u64 {
            return Err(WorkloadError::usage(format!(
                "--array-size={} is smaller than --threads={threads}: every thread needs at \
                 least one element",
                size.elements
            )));
        }
        let n = usize::try_from(size.elements).map_err(|_| {
            WorkloadError::usage("--array-size does not fit this machine's addresses")
        })?;
        let nt_requested = p.bool("nt_stores");
        let mut order: Vec<(Kernel, bool)> = Kernel::ALL.iter().map(|&k| (k, false)).collect();
        if nt_requested && isa.has_nt() {
            order.extend(Kernel::ALL.iter().map(|&k| (k, true)));
        }
        let arrays = Arrays::new(n, offset as usize, p.bool("huge_pages"))?;
        Ok(Shared {
            arrays,
            threads,
            ntimes,
            order,
            isa,
            nt_requested,
            size,
            offset,
            cpus: affinity::allowed(),
            barrier: SpinBarrier::new(threads),
            allowed: Padded(AtomicU64::new(0)),
            counted: AtomicUsize::new(0),
            pinned: Mutex::new(vec![None; threads]),
            sums: Mutex::new(vec![ErrorSums::default(); threads]),
            outcome: Mutex::new(Outcome::default()),
            #[cfg(test)]
            corrupt: None,
        })
    }
}

impl Workload for Stream {
    fn id(&self) -> &'static str {
        "stream"
    }
    fn figures(&self, r: &RunResult) -> Vec<Figure> {
        // STREAM's best rates, Triad first (the figure people publish), then the NT block.
        let mut f = Vec::new();
        for (table, suffix, stores) in [
            (table::STREAM, "", ""),
            (table::STREAM_NT, "_nt", " with non-temporal stores"),
        ] {
            let Some(t) = r.tables.iter().find(|t| t.name == table) else {
                continue;
            };
            for k in ["Triad", "Copy", "Scale", "Add"] {
                if let Some(v) = t.get(k, col::BEST_RATE_MB_PER_S) {
                    let name = format!("{}{suffix}{FIGURE_SUFFIX}", k.to_lowercase());
                    let label = format!("{k} best rate{stores}");
                    f.push(Figure::labelled(&name, &label, "MB/s", v, Better::Higher));
                }
            }
        }
        if f.is_empty() {
            return r.default_figures();
        }
        f
    }
    fn category(&self) -> Category {
        Category::Memory
    }
    fn summary(&self) -> &'static str {
        "STREAM's Copy, Scale, Add and Triad over three arrays of doubles; one event is one \
         kernel pass over the arrays by all threads"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn caps(&self) -> Caps {
        Caps {
            loop_worker: true,
            ..Caps::default()
        }
    }
    fn commands(&self) -> &'static [&'static str] {
        &["stream"]
    }
    fn small_params(&self) -> &'static [(&'static str, &'static str)] {
        &[("array_size", "100000")]
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        Ok(Box::new(StreamInstance(Arc::new(self.build(ctx)?))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::clock::Clock;
    use hostbench_core::params::Params;
    use hostbench_core::plan::Plan;
    use hostbench_core::runner::{Silent, run};

    #[test]
    fn stats_skip_the_first_iteration() {
        // Two kernels per iteration, three iterations.
        let t = [100, 5, 10, 6, 30, 7];
        let s0 = kernel_stats(&t, 2, 0).unwrap();
        assert_eq!(s0.samples, 2);
        assert_eq!((s0.min_s, s0.max_s), (10e-9, 30e-9));
        assert!((s0.avg_s - 20e-9).abs() < 1e-18);
        assert!(kernel_stats(&t[..2], 2, 0).is_none());
    }

    fn setup(ov: &[(&str, &str)], threads: usize) -> Shared {
        let ov: Vec<(String, String)> = ov
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let params = Params::resolve("stream", PARAMS, &ov).unwrap();
        Stream
            .build(&SetupCtx {
                params: &params,
                threads,
                dist: hostbench_core::rand::Distribution::Uniform,
                seed: 1,
                host: None,
            })
            .unwrap()
    }

    fn plan(threads: usize) -> Plan {
        let mut p = Plan::new("stream", Params::default());
        p.threads = threads;
        p.time_s = 0.0;
        p.seed = 1;
        p
    }

    #[test]
    fn a_threaded_run_validates_and_counts_passes() {
        let inst = StreamInstance(Arc::new(setup(
            &[
                ("array_size", "10007"),
                ("ntimes", "3"),
                ("nt_stores", "on"),
            ],
            3,
        )));
        let m = run(&plan(3), &inst, Clock::detect(), &Silent).unwrap();
        assert!(m.error.is_none(), "{:?}", m.error);
        let per_iter = if inst.0.isa.has_nt() { 8 } else { 4 };
        assert_eq!(m.counters.events, 3 * per_iter);
        let facts: std::collections::HashMap<String, f64> = inst.facts().into_iter().collect();
        assert_eq!(facts["validated"], 1.0);
        assert_eq!(facts["threads_counted"], 3.0);
        assert_eq!(facts["passes"], (3 * per_iter) as f64);
        let t = &inst.tables()[0];
        assert_eq!(t.rows.len(), 4);
        assert_eq!(t.get("Triad", "samples"), Some(2.0));
        assert_eq!(t.get("Triad", "bytes_per_iteration"), Some(24.0 * 10007.0));
        assert!(t.get("Copy", "best_rate_mb_per_s").unwrap() > 0.0);
    }

    #[test]
    fn a_corrupted_run_fails_with_a_validation_warning() {
        let mut shared = setup(&[("array_size", "5000"), ("ntimes", "2")], 2);
        shared.corrupt = Some(4321);
        let inst = StreamInstance(Arc::new(shared));
        let m = run(&plan(2), &inst, Clock::detect(), &Silent).unwrap();
        let err = m.error.expect("the run must fail");
        assert!(
            err.contains("validation failed") && err.contains("array a[]"),
            "{err}"
        );
        let facts: std::collections::HashMap<String, f64> = inst.facts().into_iter().collect();
        assert_eq!(facts["validated"], 0.0);
        assert_eq!(facts["error_elements_a"], 1.0);
        assert!(
            inst.warnings()
                .iter()
                .any(|w| w.kind == WarningKind::ValidationFailed)
        );
    }

    #[test]
    fn the_runners_event_limit_stops_mid_iteration() {
        let inst = StreamInstance(Arc::new(setup(&[("array_size", "4096")], 2)));
        let mut p = plan(2);
        p.events = 7;
        let m = run(&p, &inst, Clock::detect(), &Silent).unwrap();
        assert!(m.error.is_none(), "{:?}", m.error);
        assert_eq!(m.counters.events, 7);
        let facts: std::collections::HashMap<String, f64> = inst.facts().into_iter().collect();
        assert_eq!(facts["passes"], 7.0);
        assert_eq!(
            facts["validated"], 1.0,
            "validation replays the passes that ran"
        );
        let t = &inst.tables()[0];
        assert_eq!(t.get("Add", "samples"), Some(1.0));
        assert_eq!(t.get("Triad", "samples"), Some(0.0));
        assert_eq!(t.get("Triad", "best_rate_mb_per_s"), None);
    }

    #[test]
    fn bad_combinations_are_refused() {
        let params = |ov: &[(&str, &str)]| {
            let ov: Vec<(String, String)> = ov
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Params::resolve("stream", PARAMS, &ov).unwrap()
        };
        let try_build = |p: &Params, threads| {
            Stream
                .build(&SetupCtx {
                    params: p,
                    threads,
                    dist: hostbench_core::rand::Distribution::Uniform,
                    seed: 1,
                    host: None,
                })
                .err()
                .map(|e| e.message)
        };
        let e = try_build(&params(&[("ntimes", "1")]), 1).unwrap();
        assert!(e.contains("--ntimes=1"), "{e}");
        let e = try_build(&params(&[("array_size", "3")]), 4).unwrap();
        assert!(e.contains("--threads=4"), "{e}");
    }
}
