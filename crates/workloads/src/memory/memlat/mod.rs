//! `memlat`: load-to-use memory latency over a ladder of working-set sizes, the
//! lmbench `lat_mem_rd` / tinymembench staircase.
//!
//! For each size the worker links one pointer per cache line into a single random cycle
//! (Sattolo's algorithm), walks it once untimed to warm caches and TLBs, and then times
//! chunks of `p = *p` — every load's address is the value of the previous load, so loads
//! cannot overlap and no prefetcher can guess the next line. ns per load = elapsed / loads.
//! As the working set outgrows L1d, L2, L3 the figure steps up, and past the last-level
//! cache it shows DRAM latency (plus TLB misses with 4 KiB pages; see `docs/memlat.md`).
//!
//! Invariants:
//! - the chain over `n` slots is one cycle of length `n` ([`sattolo`]), so a walk from any
//!   slot touches every line of the working set before it repeats;
//! - sizes are multiples of the line size, strictly increasing, within `[min, max]`
//!   ([`ladder`]);
//! - every timed chunk goes through `RunControl::next_op`/`record`, so `--time`, `--events`
//!   and Ctrl-C end the ladder between chunks; sizes cut short are dropped, sizes finished
//!   are kept (a partial table);
//! - one thread measures (thread 0). A second chasing thread would share caches and memory
//!   bandwidth and change what is measured; extra threads get no work and a warning.
//! - the buffer is allocated by the worker (not in `setup`), so bad options fail before any
//!   memory is touched; it is 2 MiB aligned and advised `MADV_HUGEPAGE` or
//!   `MADV_NOHUGEPAGE` so the page size is what the user asked for, whatever the system's
//!   transparent-huge-page default.

use hostbench_core::params::{ParamKind, ParamSpec};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counter;
use hostbench_core::result::{
    Better, Column, Figure, FigureDef, Row, RunResult, Table, Warning, WarningKind,
};
use hostbench_core::workload::*;
use std::sync::{Arc, Mutex};

mod chase;
mod ladder;

pub use chase::chunk_target_ns;
pub use ladder::{Config, MaxChoice, ladder, memory_needed, sattolo, size_label};

use chase::{Idle, MemlatWorker};

/// The load-latency ladder.
pub struct Memlat;

// The table, its columns and the facts: names the front-end and the HTML report read too.
pub use hostbench_core::names::memlat::{TABLE, col, fact};

/// The automatic max size is this many times the last-level cache: a random walk over
/// `k × LLC` hits the cache about `1/k` of the time, so at 8× the last rows are mostly DRAM.
pub const AUTO_LLC_FACTOR: u64 = 8;

/// The largest last-level cache one logical CPU plausibly owns. The largest shipping share
/// is about 12 MiB per core (AMD 3D V-Cache: 96 MiB per 8-core CCD); a larger figure per
/// sharing CPU means a VM reports the host socket's cache, which a few vCPUs share with
/// every other tenant. The automatic max size counts at most this much per sharing CPU.
pub const LLC_PER_CPU_CAP: u64 = 16 << 20;

/// The automatic max size uses at most this fraction (1/n) of MemAvailable, leaving the
/// rest to the system and other tenants.
pub const AUTO_MEMORY_SHARE: u64 = 4;

/// Automatic max size when the host's caches are unknown: past the last-level cache of
/// nearly every part, small enough to allocate anywhere.
pub const FALLBACK_MAX_SIZE: u64 = 256 << 20;

/// Buffer alignment and length granule: one x86-64/aarch64 huge page.
const HUGE_PAGE: u64 = 2 << 20;

/// Loads per iteration of the chase loop.
const UNROLL: u64 = 16;

/// A timed chunk lasts at least this many clock reads, so the two reads around it cost
/// ≤ 0.1 % of it.
const CHUNK_CLOCK_READS: f64 = 1000.0;
/// Longest chunk target: short enough that Ctrl-C and interval reports stay responsive.
const CHUNK_MAX_NS: f64 = 1e6;
/// At least this many chunks fit in `min_time`, so the per-size median means something.
const CHUNKS_PER_MIN_TIME: f64 = 8.0;
/// The untimed warm pass checks for Ctrl-C every this many loads.
const WARM_SLICE: u64 = 1 << 20;

/// Parameters of `memlat`.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "min_size",
        kind: ParamKind::Size,
        default: "4K",
        unit: "bytes",
        help: "smallest working set (at least one line)",
        sysbench: None,
    },
    ParamSpec {
        name: "max_size",
        kind: ParamKind::Size,
        default: "0",
        unit: "bytes",
        help: "largest working set; 0 = auto: 8x the last-level cache (capped for VMs and by memory)",
        sysbench: None,
    },
    ParamSpec {
        name: "steps_per_doubling",
        kind: ParamKind::Int { min: 1, max: 16 },
        default: "4",
        unit: "sizes",
        help: "ladder points per doubling: 2^k x (1 + j/steps), so 48 KiB or 1.25 MiB caches fall on a point",
        sysbench: None,
    },
    ParamSpec {
        name: "line_size",
        kind: ParamKind::Size,
        default: "64",
        unit: "bytes",
        help: "distance between chained pointers (one per cache line; 128 on Apple M-series and POWER)",
        sysbench: None,
    },
    ParamSpec {
        name: "huge_pages",
        kind: ParamKind::Bool,
        default: "off",
        unit: "",
        help: "back the buffer with transparent huge pages (madvise), so large sizes show memory, not TLB misses",
        sysbench: None,
    },
    ParamSpec {
        name: "min_time",
        kind: ParamKind::Seconds,
        default: "100ms",
        unit: "s",
        help: "timed duration per size, at least (the warm pass and calibration come on top)",
        sysbench: None,
    },
    ParamSpec {
        name: "min_loads",
        kind: ParamKind::Int {
            min: 1,
            max: 1 << 40,
        },
        default: "2000000",
        unit: "loads",
        help: "timed loads per size, at least",
        sysbench: None,
    },
];

/// One measured size.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Measured {
    size: u64,
    loads: u64,
    ns: f64,
    chunks: u64,
    median_ns_per_load: f64,
    min_ns_per_load: f64,
}

/// Why the ladder ended before its last size.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cut {
    /// Time or event limit.
    Limit,
    /// Ctrl-C or another thread's error (the runner's own warnings say so).
    Abort,
}

/// What the measuring worker found, read by the instance after the run.
#[derive(Debug, Default)]
struct State {
    rows: Vec<Measured>,
    cut: Option<Cut>,
    chunk_target_ns: Option<f64>,
    touched: u64,
    huge_page_bytes: Option<u64>,
    madvise_error: Option<String>,
}

struct MemlatInstance {
    cfg: Arc<Config>,
    threads: usize,
    state: Arc<Mutex<State>>,
}
impl Instance for MemlatInstance {
    fn worker(&self, tid: usize, rng: Rng) -> Result<Worker, WorkloadError> {
        if tid > 0 {
            return Ok(Worker::Loop(Box::new(Idle)));
        }
        Ok(Worker::Loop(Box::new(MemlatWorker {
            cfg: self.cfg.clone(),
            state: self.state.clone(),
            rng,
            sink: std::ptr::null(),
        })))
    }

    fn facts(&self) -> Vec<(String, f64)> {
        let c = &self.cfg;
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut f = vec![
            (fact::LINE_BYTES, c.line as f64),
            (fact::STEPS_PER_DOUBLING, f64::from(c.steps)),
            (fact::MIN_SIZE_BYTES, c.sizes[0] as f64),
            (fact::MAX_SIZE_BYTES, *c.sizes.last().unwrap_or(&0) as f64),
            (fact::MAX_SIZE_AUTO, f64::from(u8::from(c.max.auto))),
            (fact::SIZES_PLANNED, c.sizes.len() as f64),
            (fact::SIZES_MEASURED, st.rows.len() as f64),
            (fact::HUGE_PAGES, f64::from(u8::from(c.huge_pages))),
            (fact::TOUCHED_BYTES, st.touched as f64),
        ];
        if let Some((level, bytes, _)) = c.max.llc {
            f.push((fact::LLC_LEVEL, f64::from(level)));
            f.push((fact::LLC_REPORTED_BYTES, bytes as f64));
        }
        if let Some(a) = c.max.llc_assumed {
            f.push((fact::LLC_ASSUMED_BYTES, a as f64));
            f.push((fact::MAX_SIZE_LLC_FACTOR, AUTO_LLC_FACTOR as f64));
        }
        if let Some(h) = st.huge_page_bytes {
            f.push((fact::HUGE_PAGE_BYTES, h as f64));
        }
        if let Some(t) = st.chunk_target_ns {
            f.push((fact::CHUNK_TARGET_NS, t.round()));
        }
        f.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    fn tables(&self) -> Vec<Table> {
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let column = |name: &str, unit: &str| Column {
            name: name.into(),
            unit: unit.into(),
        };
        vec![Table {
            name: TABLE.into(),
            title: format!(
                "load-to-use latency per working-set size: one dependent load at a time, \
                 random cyclic order over {} B lines, {} pages",
                self.cfg.line,
                if self.cfg.huge_pages { "huge" } else { "4 KiB" }
            ),
            columns: vec![
                column(col::SIZE_BYTES, "B"),
                column(col::NS_PER_LOAD, "ns"),
                column(col::MEDIAN_NS_PER_LOAD, "ns"),
                column(col::MIN_NS_PER_LOAD, "ns"),
                column(col::LOADS, ""),
                column(col::CHUNKS, ""),
            ],
            rows: st
                .rows
                .iter()
                .map(|m| Row {
                    label: size_label(m.size),
                    values: vec![
                        Some(m.size as f64),
                        Some(m.ns / m.loads as f64),
                        Some(m.median_ns_per_load),
                        Some(m.min_ns_per_load),
                        Some(m.loads as f64),
                        Some(m.chunks as f64),
                    ],
                })
                .collect(),
        }]
    }

    fn warnings(&self) -> Vec<Warning> {
        let c = &self.cfg;
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut w = Vec::new();
        let max = *c.sizes.last().unwrap_or(&0);
        if let Some(note) = &c.max.note {
            w.push(Warning {
                kind: WarningKind::SizeChosen,
                message: format!(
                    "max size {} was chosen for you: {note}. If the last rows have not \
                     levelled off, give a larger max size.",
                    size_label(max)
                ),
            });
        }
        if self.threads > 1 {
            w.push(Warning {
                kind: WarningKind::NoWork,
                message: format!(
                    "memlat measures with one thread (a second chasing thread would share \
                     the caches and change what is measured); {} other thread(s) had no \
                     work. Run it with one thread.",
                    self.threads - 1
                ),
            });
        }
        if st.cut == Some(Cut::Limit) {
            let last = st
                .rows
                .last()
                .map_or("no size".into(), |m| size_label(m.size));
            w.push(Warning {
                kind: WarningKind::SizeChosen,
                message: format!(
                    "the run's time or event limit ended the ladder after {} of {} sizes \
                     (last: {last}, planned up to {}). `hostbench memlat` runs the whole \
                     ladder; with `hostbench run memlat` pass --time 0.",
                    st.rows.len(),
                    c.sizes.len(),
                    size_label(max)
                ),
            });
        }
        if c.huge_pages {
            let how = "Measured with 4 KiB pages; large sizes include TLB misses.";
            if c.thp.as_deref() == Some("never") {
                w.push(Warning {
                    kind: WarningKind::Unavailable,
                    message: format!(
                        "huge pages were asked for but transparent huge pages are off \
                         (never). {how} Enable them with `echo madvise | sudo tee \
                         /sys/kernel/mm/transparent_hugepage/enabled`."
                    ),
                });
            } else if let Some(e) = &st.madvise_error {
                w.push(Warning {
                    kind: WarningKind::Unavailable,
                    message: format!(
                        "huge pages were asked for but madvise(MADV_HUGEPAGE) failed: {e}. {how}"
                    ),
                });
            } else if let Some(h) = st.huge_page_bytes
                && st.touched >= HUGE_PAGE
                && h < st.touched / 2
            {
                w.push(Warning {
                    kind: WarningKind::Unavailable,
                    message: format!(
                        "huge pages were asked for but the kernel backed only {} of the {} \
                         buffer with them (memory fragmented, or THP defrag off); large \
                         sizes include TLB misses. Retry, or drop caches and compact memory \
                         first.",
                        size_label(h),
                        size_label(st.touched)
                    ),
                });
            }
        }
        w
    }
}

/// The median ns per load at the largest working set (DRAM when the ladder goes past the
/// last-level cache).
pub const MAX_SIZE_NS_PER_LOAD: FigureDef = FigureDef {
    name: "max_size_ns_per_load",
    label: "load-to-use latency at the largest size",
    unit: "ns",
    better: Better::Lower,
};
/// The median ns per load at the smallest working set (L1).
pub const MIN_SIZE_NS_PER_LOAD: FigureDef = FigureDef {
    name: "min_size_ns_per_load",
    label: "load-to-use latency at the smallest size",
    unit: "ns",
    better: Better::Lower,
};

impl Workload for Memlat {
    fn id(&self) -> &'static str {
        "memlat"
    }
    fn figures(&self, r: &RunResult) -> Vec<Figure> {
        // The two ends of the staircase: the largest size measured (DRAM when the ladder
        // goes past the last-level cache) and the smallest (L1), as medians over chunks.
        let Some(t) = r.tables.iter().find(|t| t.name == TABLE) else {
            return r.default_figures();
        };
        let at = |row: Option<&Row>| {
            let c = t
                .columns
                .iter()
                .position(|c| c.name == col::MEDIAN_NS_PER_LOAD)?;
            row?.values.get(c).copied().flatten()
        };
        let mut f = Vec::new();
        if let Some(v) = at(t.rows.last()) {
            f.push(MAX_SIZE_NS_PER_LOAD.at(v));
        }
        if let Some(v) = at(t.rows.first()) {
            f.push(MIN_SIZE_NS_PER_LOAD.at(v));
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
        "load-to-use latency ladder: pointer chase through a random cycle, ns per load per working-set size"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn caps(&self) -> Caps {
        Caps {
            loop_worker: true,
            // The ladder ends after its largest size.
            ends_itself: true,
            ..Caps::default()
        }
    }
    fn counters(&self) -> &'static [Counter] {
        &[Counter::Reads]
    }
    fn commands(&self) -> &'static [&'static str] {
        &["memlat"]
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        let cfg = Config::from_params(ctx.params, ctx.host)?;
        Ok(Box::new(MemlatInstance {
            cfg: Arc::new(cfg),
            threads: ctx.threads,
            state: Arc::new(Mutex::new(State::default())),
        }))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use hostbench_core::params::Params;
    pub(crate) fn params(ov: &[(&str, &str)]) -> Params {
        let ov: Vec<(String, String)> = ov
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Params::resolve("memlat", PARAMS, &ov).unwrap()
    }

    #[test]
    fn runs_a_small_ladder_and_reports_it() {
        use hostbench_core::clock::Clock;
        use hostbench_core::plan::Plan;
        use hostbench_core::runner::{Silent, StopReason, run};
        let p = params(&[
            ("max_size", "16K"),
            ("min_time", "1ms"),
            ("min_loads", "1000"),
        ]);
        let mut plan = Plan::new("memlat", p.clone());
        plan.time_s = 0.0;
        plan.seed = 3;
        let inst = Memlat
            .setup(&SetupCtx {
                params: &p,
                threads: 1,
                dist: plan.rand,
                seed: 3,
                host: None,
            })
            .unwrap();
        let m = run(&plan, inst.as_ref(), Clock::detect(), &Silent).unwrap();
        assert_eq!(m.stop, StopReason::WorkersDone);
        let t = &inst.tables()[0];
        let labels: Vec<&str> = t.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "4 KiB", "5 KiB", "6 KiB", "7 KiB", "8 KiB", "10 KiB", "12 KiB", "14 KiB", "16 KiB"
            ]
        );
        let loads: f64 = t.rows.iter().map(|r| r.values[4].unwrap()).sum();
        assert_eq!(loads as u64, m.counters.get(Counter::Reads));
        let chunks: f64 = t.rows.iter().map(|r| r.values[5].unwrap()).sum();
        assert_eq!(chunks as u64, m.counters.events);
        for r in &t.rows {
            assert!(r.values[4].unwrap() >= 1000.0, "{r:?}");
            let (mean, median, min) = (r.values[1], r.values[2], r.values[3]);
            let (mean, median, min) = (mean.unwrap(), median.unwrap(), min.unwrap());
            assert!(min > 0.0 && min <= median && min <= mean, "{r:?}");
        }
        let facts: std::collections::BTreeMap<_, _> = inst.facts().into_iter().collect();
        assert_eq!(facts[fact::SIZES_MEASURED], 9.0);
        assert_eq!(facts[fact::MAX_SIZE_AUTO], 0.0);
        assert!(inst.warnings().is_empty(), "{:?}", inst.warnings());
    }

    #[test]
    fn an_event_limit_cuts_the_ladder_and_says_so() {
        use hostbench_core::clock::Clock;
        use hostbench_core::plan::Plan;
        use hostbench_core::runner::{Silent, run};
        let p = params(&[("max_size", "1M"), ("min_time", "10ms")]);
        let mut plan = Plan::new("memlat", p.clone());
        plan.time_s = 0.0;
        plan.events = 20;
        plan.threads = 2;
        let inst = Memlat
            .setup(&SetupCtx {
                params: &p,
                threads: 2,
                dist: plan.rand,
                seed: 1,
                host: None,
            })
            .unwrap();
        let m = run(&plan, inst.as_ref(), Clock::detect(), &Silent).unwrap();
        assert_eq!(m.counters.events, 20);
        assert_eq!(m.threads[1].events, 0, "thread 1 is idle");
        let w = inst.warnings();
        assert!(
            w.iter().any(
                |w| w.kind == WarningKind::SizeChosen && w.message.contains("ended the ladder")
            ),
            "{w:?}"
        );
        assert!(w.iter().any(|w| w.kind == WarningKind::NoWork), "{w:?}");
        let t = &inst.tables()[0];
        assert!(t.rows.len() < 20, "cut short");
    }
}
