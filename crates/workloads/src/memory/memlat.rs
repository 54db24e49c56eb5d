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

use hostbench_core::clock::measure_read_cost;
use hostbench_core::host::HostInfo;
use hostbench_core::params::{ParamKind, ParamSpec, Params};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counter;
use hostbench_core::result::{Better, Column, Figure, Row, RunResult, Table, Warning, WarningKind};
use hostbench_core::runner::RunControl;
use hostbench_core::workload::*;
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

/// The load-latency ladder.
pub struct Memlat;

/// Name of the result table.
pub const TABLE: &str = "memlat";

/// Names of the columns of the result table, in order.
pub mod col {
    /// Working-set size, bytes.
    pub const SIZE_BYTES: &str = "size_bytes";
    /// Timed elapsed time / timed loads, ns.
    pub const NS_PER_LOAD: &str = "ns_per_load";
    /// Median over the timed chunks of each chunk's ns per load (robust to preemption).
    pub const MEDIAN_NS_PER_LOAD: &str = "median_ns_per_load";
    /// The fastest chunk's ns per load (what the hardware does when nothing disturbs it;
    /// tinymembench reports this best-of figure).
    pub const MIN_NS_PER_LOAD: &str = "min_ns_per_load";
    /// Timed loads.
    pub const LOADS: &str = "loads";
    /// Timed chunks (runner events) of this size.
    pub const CHUNKS: &str = "chunks";
}

/// Names of the facts the instance reports.
pub mod fact {
    /// Bytes per chain slot (one pointer per line).
    pub const LINE_BYTES: &str = "line_bytes";
    /// Ladder points per doubling of the size.
    pub const STEPS_PER_DOUBLING: &str = "steps_per_doubling";
    /// Smallest size of the ladder, bytes (after rounding to whole lines).
    pub const MIN_SIZE_BYTES: &str = "min_size_bytes";
    /// Largest size of the ladder, bytes (after rounding to whole lines).
    pub const MAX_SIZE_BYTES: &str = "max_size_bytes";
    /// 1 when hostbench chose the largest size, 0 when the user gave it.
    pub const MAX_SIZE_AUTO: &str = "max_size_auto";
    /// Last-level cache as the host reports it, bytes.
    pub const LLC_REPORTED_BYTES: &str = "llc_reported_bytes";
    /// Level of that cache (3 for an L3).
    pub const LLC_LEVEL: &str = "llc_level";
    /// The last-level cache size the automatic max size was derived from, bytes.
    pub const LLC_ASSUMED_BYTES: &str = "llc_assumed_bytes";
    /// Automatic max size = this × the assumed last-level cache (before memory caps).
    pub const MAX_SIZE_LLC_FACTOR: &str = "max_size_llc_factor";
    /// Sizes in the ladder.
    pub const SIZES_PLANNED: &str = "sizes_planned";
    /// Sizes measured to the end.
    pub const SIZES_MEASURED: &str = "sizes_measured";
    /// 1 when huge pages were asked for.
    pub const HUGE_PAGES: &str = "huge_pages";
    /// Bytes of the buffer the kernel backed with huge pages (from /proc/self/smaps).
    pub const HUGE_PAGE_BYTES: &str = "huge_page_bytes";
    /// Bytes of the buffer the ladder touched.
    pub const TOUCHED_BYTES: &str = "touched_bytes";
    /// Target length of one timed chunk, ns.
    pub const CHUNK_TARGET_NS: &str = "chunk_target_ns";
}

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

/// How the largest size was chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxChoice {
    /// The max size before rounding to whole lines, bytes.
    pub bytes: u64,
    /// True when hostbench chose it.
    pub auto: bool,
    /// The last-level cache the host reports: (level, bytes, logical CPUs sharing it).
    pub llc: Option<(u32, u64, u32)>,
    /// The last-level cache size the automatic choice used, bytes.
    pub llc_assumed: Option<u64>,
    /// Why the automatic choice differs from `AUTO_LLC_FACTOR × reported LLC`, if it does.
    pub note: Option<String>,
}

/// A checked `memlat` configuration: what the worker will do.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Bytes per chain slot.
    pub line: u64,
    /// Ladder points per doubling.
    pub steps: u32,
    /// Working-set sizes, bytes, ascending.
    pub sizes: Vec<u64>,
    /// madvise(MADV_HUGEPAGE) rather than MADV_NOHUGEPAGE.
    pub huge_pages: bool,
    /// Timed seconds per size, at least.
    pub min_time_s: f64,
    /// Timed loads per size, at least.
    pub min_loads: u64,
    /// How the max size was chosen.
    pub max: MaxChoice,
    /// Transparent-huge-page mode of the host (`always`, `madvise`, `never`), if known.
    pub thp: Option<String>,
}

fn err(msg: String) -> WorkloadError {
    WorkloadError(msg)
}

/// A size in binary units, exact to two decimals: `4 KiB`, `1.5 MiB`, `5.33 KiB`, `100 B`.
pub fn size_label(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut i = 0;
    while i + 1 < UNITS.len() && bytes >= 1u64 << (10 * (i + 1)) {
        i += 1;
    }
    let v = bytes as f64 / (1u64 << (10 * i)) as f64;
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} {}", UNITS[i])
}

/// The ladder: `min`, every point `2^k × (1 + j/steps)` strictly between, and `max`, each
/// rounded down to whole `line`s, strictly increasing. Points of that form land on real
/// cache sizes (48 KiB = 1.5 × 32 KiB, 1.25 MiB, 3 MiB), which geometric `2^(k/steps)`
/// points never do. Requires `line ≤ min ≤ max` and `steps ≥ 1`.
pub fn ladder(min: u64, max: u64, steps: u32, line: u64) -> Vec<u64> {
    let down = |x: u64| x / line * line;
    let (lo, hi) = (down(min), down(max));
    let steps = u64::from(steps.max(1));
    let mut out = vec![lo];
    let mut k = 63 - lo.leading_zeros();
    while k < 63 && 1u64 << k <= hi {
        let base = 1u64 << k;
        for j in 0..steps {
            // base × (steps + j) / steps without overflow for any base ≤ 2^62.
            let p = down(base / steps * (steps + j) + base % steps * (steps + j) / steps);
            if p > *out.last().unwrap_or(&0) && p < hi {
                out.push(p);
            }
        }
        k += 1;
    }
    if hi > *out.last().unwrap_or(&0) {
        out.push(hi);
    }
    out
}

/// Uniform integer in `[0, bound)` (multiply-shift; bias below 2^-32 for bounds < 2^32).
#[inline]
fn below(rng: &mut Rng, bound: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(bound)) >> 64) as u64
}

/// Fills `next` with a uniformly random cyclic permutation (Sattolo's algorithm): starting
/// anywhere and following `i → next[i]` visits every slot exactly once before returning.
pub fn sattolo(next: &mut [u32], rng: &mut Rng) {
    for (i, v) in next.iter_mut().enumerate() {
        *v = i as u32;
    }
    let mut i = next.len();
    while i > 1 {
        i -= 1;
        // j < i strictly: that is what makes the result one cycle (Fisher–Yates allows j = i).
        let j = below(rng, i as u64) as usize;
        next.swap(i, j);
    }
}

/// The last-level cache the host reports: (level, bytes, sharing CPUs).
fn last_level_cache(host: &HostInfo) -> Option<(u32, u64, u32)> {
    super::last_level_cache(host).map(|c| (c.level, c.size_bytes, c.shared_by))
}

/// Bytes the worker allocates for a ladder up to `max`: the buffer (whole huge pages) and
/// the 4-byte-per-line index Sattolo's algorithm shuffles.
pub fn memory_needed(max: u64, line: u64) -> u64 {
    max.div_ceil(HUGE_PAGE)
        .saturating_mul(HUGE_PAGE)
        .saturating_add(max / line * 4)
}

fn auto_max(host: Option<&HostInfo>, min: u64) -> MaxChoice {
    let llc = host.and_then(last_level_cache);
    let mut notes = Vec::new();
    let (mut bytes, llc_assumed) = match llc {
        Some((level, size, shared)) => {
            let cap = LLC_PER_CPU_CAP.saturating_mul(u64::from(shared.max(1)));
            let assumed = size.min(cap);
            if assumed < size {
                notes.push(format!(
                    "the host reports an L{level} of {} shared by {} CPU(s), more than any \
                     part gives {} CPU(s) (a VM seeing the host socket's cache?), so it was \
                     counted as {}",
                    size_label(size),
                    shared.max(1),
                    shared.max(1),
                    size_label(assumed)
                ));
            }
            (assumed.saturating_mul(AUTO_LLC_FACTOR), Some(assumed))
        }
        None => {
            notes.push(format!(
                "the host's cache sizes are unknown, so the ladder goes to {}",
                size_label(FALLBACK_MAX_SIZE)
            ));
            (FALLBACK_MAX_SIZE, None)
        }
    };
    let avail = host.map_or(0, |h| h.memory.available_bytes);
    if avail > 0 && bytes > avail / AUTO_MEMORY_SHARE {
        bytes = avail / AUTO_MEMORY_SHARE;
        notes.push(format!(
            "it was cut to {} (1/{AUTO_MEMORY_SHARE} of the {} available)",
            size_label(bytes),
            size_label(avail)
        ));
    }
    if bytes < min {
        notes.push(format!("it was raised to the min size {}", size_label(min)));
        bytes = min;
    }
    MaxChoice {
        bytes,
        auto: true,
        llc,
        llc_assumed,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

impl Config {
    /// Checks `params` against each other and the host, and plans the ladder. Every error
    /// is one line that says what is wrong and what to use instead.
    pub fn from_params(p: &Params, host: Option<&HostInfo>) -> Result<Config, WorkloadError> {
        let line = p.int("line_size") as u64;
        if !line.is_power_of_two() || !(8..=4096).contains(&line) {
            return Err(err(format!(
                "line size {line} B is not a power of two from 8 B to 4 KiB (each line holds \
                 one 8-byte pointer); use 64, or 128 on Apple M-series and POWER"
            )));
        }
        let min = p.int("min_size") as u64;
        if min < line {
            return Err(err(format!(
                "min size {} is below one cache line ({line} B); use a min size of at least {line} B",
                size_label(min)
            )));
        }
        let given = p.int("max_size") as u64;
        let max = if given == 0 {
            auto_max(host, min)
        } else {
            if given < min {
                return Err(err(format!(
                    "max size {} is below min size {}; raise the max size or lower the min size",
                    size_label(given),
                    size_label(min)
                )));
            }
            MaxChoice {
                bytes: given,
                auto: false,
                llc: host.and_then(last_level_cache),
                llc_assumed: None,
                note: None,
            }
        };
        let lines = max.bytes / line;
        if lines > u64::from(u32::MAX) {
            return Err(err(format!(
                "max size {} is more than 2^32 lines of {line} B; use a max size up to {}",
                size_label(max.bytes),
                size_label(u64::from(u32::MAX) * line)
            )));
        }
        let need = memory_needed(max.bytes, line);
        let avail = host.map_or(0, |h| h.memory.available_bytes);
        if avail > 0 && need > avail {
            return Err(err(format!(
                "max size {} needs {} (buffer and chain index) but only {} of memory is \
                 available; use a max size below {}",
                size_label(max.bytes),
                size_label(need),
                size_label(avail),
                size_label(avail / 17 * 16 / line * line)
            )));
        }
        let steps = p.int("steps_per_doubling") as u32;
        Ok(Config {
            line,
            steps,
            sizes: ladder(min, max.bytes, steps, line),
            huge_pages: p.bool("huge_pages"),
            min_time_s: p.float("min_time"),
            min_loads: p.int("min_loads") as u64,
            max,
            thp: host.and_then(|h| h.memory.transparent_hugepages.clone()),
        })
    }
}

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

struct MemlatWorker {
    cfg: Arc<Config>,
    state: Arc<Mutex<State>>,
    rng: Rng,
    /// The chain's final position, kept so the chase stays observable.
    sink: *const u8,
}

// SAFETY: `sink` is never dereferenced; it only keeps the chase's result alive.
unsafe impl Send for MemlatWorker {}

/// An idle worker for threads beyond the first.
struct Idle;

impl LoopWorker for Idle {
    fn run(&mut self, _ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        Ok(())
    }
}

/// The chain buffer: 2 MiB aligned, whole huge pages long, never read before written.
struct Buffer {
    ptr: NonNull<u8>,
    layout: Layout,
}

impl Buffer {
    /// Allocates (without touching) room for `bytes` and advises the page size; the second
    /// value is the madvise error, if any.
    fn new(bytes: u64, huge: bool) -> Result<(Buffer, Option<String>), WorkloadError> {
        let len = bytes.max(1).div_ceil(HUGE_PAGE).saturating_mul(HUGE_PAGE);
        let layout = usize::try_from(len)
            .ok()
            .and_then(|l| Layout::from_size_align(l, HUGE_PAGE as usize).ok())
            .ok_or_else(|| {
                err(format!(
                    "a buffer of {} cannot be laid out",
                    size_label(len)
                ))
            })?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc(layout) }).ok_or_else(|| {
            err(format!(
                "could not allocate {} for the chain; use a smaller max size",
                size_label(len)
            ))
        })?;
        let b = Buffer { ptr, layout };
        let e = b.advise(huge).err();
        Ok((b, e))
    }

    #[cfg(target_os = "linux")]
    fn advise(&self, huge: bool) -> Result<(), String> {
        let advice = if huge {
            libc::MADV_HUGEPAGE
        } else {
            libc::MADV_NOHUGEPAGE
        };
        // SAFETY: the range is one live allocation, page aligned, whole pages long.
        let rc = unsafe { libc::madvise(self.ptr.as_ptr().cast(), self.layout.size(), advice) };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error().to_string())
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn advise(&self, huge: bool) -> Result<(), String> {
        if huge {
            Err("transparent huge pages are a Linux feature".into())
        } else {
            Ok(())
        }
    }

    /// Links slot `i` (at `i × line`) to slot `next[i]`.
    fn link(&mut self, next: &[u32], line: u64) {
        let base = self.ptr.as_ptr();
        let line = line as usize;
        debug_assert!(next.len() * line <= self.layout.size());
        for (i, &n) in next.iter().enumerate() {
            // SAFETY: i and n are below next.len(), and next.len() × line fits the buffer;
            // line ≥ 8 and the base is 2 MiB aligned, so every slot is pointer aligned.
            unsafe {
                base.add(i * line)
                    .cast::<*const u8>()
                    .write(base.add(n as usize * line));
            }
        }
    }

    /// Bytes of `[ptr, ptr + touched)` backed by huge pages, from /proc/self/smaps.
    fn huge_page_bytes(&self, touched: u64) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let start = self.ptr.as_ptr() as u64;
        let end = start + touched;
        let mut in_range = false;
        let mut total = 0u64;
        for l in smaps.lines() {
            let head = l.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = head.split_once('-')
                && let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16))
            {
                in_range = a < end && b > start;
                continue;
            }
            if in_range && let Some(v) = l.strip_prefix("AnonHugePages:") {
                let kb: u64 = v.trim().trim_end_matches("kB").trim().parse().ok()?;
                total += kb * 1024;
            }
        }
        Some(total.min(touched))
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

macro_rules! step16 {
    ($p:ident) => {
        step16!(@ $p; 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
    };
    (@ $p:ident; $($n:tt)*) => {
        {
            $( $p = *$p.cast::<*const u8>(); let _ = $n; )*
        }
    };
}

/// Follows the chain from `p` for `loads` (a multiple of 16) dependent loads.
///
/// # Safety
/// `p` must point into a chain built by [`Buffer::link`] that is still alive.
#[inline(never)]
unsafe fn chase(mut p: *const u8, loads: u64) -> *const u8 {
    for _ in 0..loads / UNROLL {
        // SAFETY: every slot of the chain holds a pointer to another slot.
        unsafe { step16!(p) };
    }
    p
}

/// Length of one timed chunk: long enough that the clock reads around it do not matter,
/// short enough for Ctrl-C, interval reports and a median over several chunks.
pub fn chunk_target_ns(clock_read_ns: f64, min_time_s: f64) -> f64 {
    let floor = CHUNK_CLOCK_READS * clock_read_ns.max(1.0);
    (min_time_s * 1e9 / CHUNKS_PER_MIN_TIME)
        .min(CHUNK_MAX_NS)
        .max(floor)
}

impl MemlatWorker {
    fn finish(&self, cut: Option<Cut>) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.cut = cut;
    }
}

impl LoopWorker for MemlatWorker {
    fn run(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        let cfg = self.cfg.clone();
        let clock = ctl.clock();
        let target_ns = chunk_target_ns(measure_read_cost(|| clock.now()), cfg.min_time_s);
        let target_ticks = clock.from_ns(target_ns as u64).max(1);
        let max = *cfg.sizes.last().unwrap_or(&cfg.line);
        let max_lines = (max / cfg.line) as usize;
        let (mut buf, madvise_error) = Buffer::new(max, cfg.huge_pages)?;
        let mut next: Vec<u32> = Vec::new();
        next.try_reserve_exact(max_lines).map_err(|_| {
            err(format!(
                "could not allocate the {} chain index; use a smaller max size",
                size_label(max_lines as u64 * 4)
            ))
        })?;
        let mut per_chunk: Vec<f64> = Vec::with_capacity(1024);
        {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            st.chunk_target_ns = Some(target_ns);
            st.madvise_error = madvise_error;
        }
        let min_ns = cfg.min_time_s * 1e9;
        let mut p: *const u8 = buf.ptr.as_ptr();
        let mut cut = None;
        'sizes: for &size in &cfg.sizes {
            if ctl.should_stop(ctl.now()) {
                cut = Some(if ctl.aborted() {
                    Cut::Abort
                } else {
                    Cut::Limit
                });
                break;
            }
            let n = (size / cfg.line) as usize;
            next.clear();
            next.resize(n, 0);
            sattolo(&mut next, &mut self.rng);
            buf.link(&next, cfg.line);
            {
                let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
                st.touched = st.touched.max(size);
            }
            p = buf.ptr.as_ptr();
            // Warm: one full pass, untimed, so every line has been loaded once.
            let mut left = (n as u64).next_multiple_of(UNROLL);
            while left > 0 {
                let k = left.min(WARM_SLICE);
                // SAFETY: p is in the chain just linked; buf outlives the loop.
                p = unsafe { chase(p, k) };
                left -= k;
                if ctl.aborted() {
                    cut = Some(Cut::Abort);
                    break 'sizes;
                }
            }
            // Calibrate the chunk length (these loads are untimed too): double until a run
            // takes a quarter of the target, then scale by the fastest of three timings, so
            // one disturbed timing does not shrink every chunk of the size.
            let mut k = UNROLL;
            let timed = |p: &mut *const u8, k: u64| {
                let t0 = clock.now();
                // SAFETY: as above.
                *p = unsafe { chase(*p, k) };
                clock.now().saturating_sub(t0)
            };
            while k < 1 << 40 && timed(&mut p, k) < target_ticks / 4 {
                k *= 2;
            }
            let dt = (0..3).map(|_| timed(&mut p, k)).min().unwrap_or(1).max(1);
            k = ((k as f64 * target_ticks as f64 / dt as f64) as u64)
                .clamp(UNROLL, 1 << 40)
                .next_multiple_of(UNROLL);
            // Timed chunks.
            per_chunk.clear();
            let (mut loads, mut ns) = (0u64, 0f64);
            loop {
                let Some(intended) = ctl.next_op(clock.now()) else {
                    cut = Some(if ctl.aborted() {
                        Cut::Abort
                    } else {
                        Cut::Limit
                    });
                    break 'sizes;
                };
                // Only an open-loop rate (meaningless here, but allowed) makes us wait.
                if intended > clock.now() {
                    ctl.wait_until(intended);
                }
                let t0 = clock.now();
                // SAFETY: as above.
                p = unsafe { chase(p, k) };
                let t1 = clock.now();
                ctl.record(intended, t1);
                ctl.counters().add(Counter::Reads, k);
                let chunk_ns = clock.to_ns(t1.saturating_sub(t0)) as f64;
                per_chunk.push(chunk_ns / k as f64);
                loads += k;
                ns += chunk_ns;
                if loads >= cfg.min_loads && ns >= min_ns {
                    break;
                }
            }
            per_chunk.sort_by(f64::total_cmp);
            let median = per_chunk[per_chunk.len() / 2];
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            st.rows.push(Measured {
                size,
                loads,
                ns,
                chunks: per_chunk.len() as u64,
                median_ns_per_load: median,
                min_ns_per_load: per_chunk[0],
            });
        }
        self.sink = std::hint::black_box(p);
        let touched = self.state.lock().map(|s| s.touched).unwrap_or(0);
        let huge = buf.huge_page_bytes(touched);
        {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            st.huge_page_bytes = huge;
        }
        self.finish(cut);
        Ok(())
    }
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

impl Workload for Memlat {
    fn id(&self) -> &'static str {
        "memlat"
    }
    fn figures(&self, r: &RunResult) -> Vec<Figure> {
        // The two ends of the staircase: the largest size measured (DRAM when the ladder
        // goes past the last-level cache) and the smallest (L1), as medians over chunks.
        let Some(t) = r.tables.iter().find(|t| t.name == "memlat") else {
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
            f.push(Figure::new("max_size_ns_per_load", "ns", v, Better::Lower));
        }
        if let Some(v) = at(t.rows.first()) {
            f.push(Figure::new("min_size_ns_per_load", "ns", v, Better::Lower));
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
mod tests {
    use super::*;
    use hostbench_core::host::{CacheInfo, CpuInfo, MemoryInfo};

    fn params(ov: &[(&str, &str)]) -> Params {
        let ov: Vec<(String, String)> = ov
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Params::resolve("memlat", PARAMS, &ov).unwrap()
    }

    fn host(caches: &[(u32, &str, u64, u32)], avail: u64) -> HostInfo {
        HostInfo {
            cpu: CpuInfo {
                caches: caches
                    .iter()
                    .map(|&(level, kind, size_bytes, shared_by)| CacheInfo {
                        level,
                        kind: kind.into(),
                        size_bytes,
                        shared_by,
                    })
                    .collect(),
                ..CpuInfo::default()
            },
            memory: MemoryInfo {
                available_bytes: avail,
                ..MemoryInfo::default()
            },
            ..HostInfo::default()
        }
    }

    /// Follows the chain from slot 0; returns the cycle length (n+1 means "did not return").
    fn cycle_len(next: &[u32]) -> usize {
        let mut seen = vec![false; next.len()];
        let (mut i, mut len) = (0usize, 0usize);
        while !seen[i] {
            seen[i] = true;
            i = next[i] as usize;
            len += 1;
        }
        if i == 0 { len } else { next.len() + 1 }
    }

    /// Property: for every n in 1..=512 and several seeds each, plus random larger n, the
    /// chain is a permutation and one cycle over all n slots. (A sweep rather than proptest:
    /// proptest is not a dev-dependency of this crate; this covers every small n exactly.)
    #[test]
    fn sattolo_is_one_cycle_over_every_slot() {
        let mut cases: Vec<(usize, u64)> = Vec::new();
        for n in 1..=512usize {
            for s in 0..3u64 {
                cases.push((n, (n as u64) << 8 | s));
            }
        }
        let mut r = Rng::for_thread(0xC1C1E, 0);
        for _ in 0..25 {
            cases.push((513 + below(&mut r, 100_000) as usize, r.next_u64()));
        }
        let mut next = Vec::new();
        for (n, seed) in cases {
            next.clear();
            next.resize(n, 0u32);
            sattolo(&mut next, &mut Rng::for_thread(seed, 0));
            assert_eq!(cycle_len(&next), n, "n={n} seed={seed}");
            let mut sorted = next.clone();
            sorted.sort_unstable();
            assert!(
                sorted.iter().enumerate().all(|(i, &v)| v as usize == i),
                "n={n} seed={seed}: not a permutation"
            );
        }
    }

    /// Property: over random bounds, line sizes and steps, the ladder starts at min and ends
    /// at max (rounded down to lines), strictly increases, stays line aligned, and has at
    /// most `steps` points per doubling plus its ends.
    #[test]
    fn ladder_is_increasing_bounded_and_line_aligned() {
        let mut r = Rng::for_thread(0x1ADDE2, 0);
        for case in 0..20_000 {
            let line = 1u64 << (3 + below(&mut r, 10));
            let span_bits = 1 + below(&mut r, 40);
            let span = below(&mut r, 1 << span_bits);
            let min_bits = 1 + below(&mut r, 20);
            let min = (1 + below(&mut r, 1 << min_bits)) * line + span % line;
            let max = min + span;
            let steps = 1 + below(&mut r, 16) as u32;
            let s = ladder(min, max, steps, line);
            let what = format!("case {case}: ladder({min}, {max}, {steps}, {line}) = {s:?}");
            assert_eq!(s[0], min / line * line, "{what}");
            assert_eq!(*s.last().unwrap(), max / line * line, "{what}");
            assert!(s.windows(2).all(|w| w[0] < w[1]), "{what}");
            assert!(
                s.iter().all(|&x| x % line == 0 && x >= line && x <= max),
                "{what}"
            );
            let log2 = |x: u64| u64::from(63 - x.leading_zeros());
            let doublings = log2(max) - log2(min);
            assert!(
                s.len() as u64 <= u64::from(steps) * (doublings + 1) + 2,
                "{what}"
            );
        }
    }

    #[test]
    fn sattolo_edge_sizes_and_shuffles() {
        let mut one = vec![7u32];
        sattolo(&mut one, &mut Rng::for_thread(1, 0));
        assert_eq!(one, [0]);
        let mut two = vec![0u32; 2];
        sattolo(&mut two, &mut Rng::for_thread(1, 0));
        assert_eq!(two, [1, 0]);
        // Different seeds give different chains (a fixed pattern would be prefetchable).
        let mut a = vec![0u32; 64];
        let mut b = vec![0u32; 64];
        sattolo(&mut a, &mut Rng::for_thread(1, 0));
        sattolo(&mut b, &mut Rng::for_thread(2, 0));
        assert_ne!(a, b);
        assert!(a.iter().enumerate().all(|(i, &v)| v as usize != i));
    }

    #[test]
    fn ladder_points_land_on_cache_sizes() {
        let s = ladder(4 << 10, 2 << 20, 4, 64);
        for want in [
            4 << 10,
            5 << 10,
            6 << 10,
            7 << 10,
            48 << 10,
            1280 << 10,
            2 << 20,
        ] {
            assert!(s.contains(&want), "{} missing from {s:?}", size_label(want));
        }
        assert_eq!(s.len(), 4 * 9 + 1);
        assert_eq!(ladder(4096, 4096, 4, 64), [4096]);
        // Odd bounds are kept (rounded down to lines) as the ends.
        assert_eq!(ladder(100, 300, 1, 64), [64, 128, 256]);
        assert_eq!(ladder(4096, 5000, 2, 64), [4096, 4992]);
    }

    #[test]
    fn size_labels() {
        assert_eq!(size_label(4096), "4 KiB");
        assert_eq!(size_label(1536 << 10), "1.5 MiB");
        assert_eq!(size_label(5461), "5.33 KiB");
        assert_eq!(size_label(100), "100 B");
        assert_eq!(size_label(1 << 30), "1 GiB");
    }

    #[test]
    fn auto_max_follows_the_llc_with_caps() {
        let p = params(&[]);
        // Bare metal: 8 × a 32 MiB L3 shared by 16 CPUs.
        let h = host(
            &[(1, "Data", 48 << 10, 2), (3, "Unified", 32 << 20, 16)],
            64 << 30,
        );
        let c = Config::from_params(&p, Some(&h)).unwrap();
        assert_eq!(*c.sizes.last().unwrap(), 256 << 20);
        assert_eq!(c.max.note, None);
        // A 2-vCPU guest reporting a 480 MiB socket L3: counted as 2 × the per-CPU cap.
        let h = host(&[(3, "Unified", 480 << 20, 2)], 64 << 30);
        let c = Config::from_params(&p, Some(&h)).unwrap();
        assert_eq!(c.max.llc_assumed, Some(2 * LLC_PER_CPU_CAP));
        assert_eq!(c.max.bytes, 2 * LLC_PER_CPU_CAP * AUTO_LLC_FACTOR);
        assert!(c.max.note.as_deref().unwrap().contains("480 MiB"));
        // Little memory: a quarter of what is available.
        let h = host(&[(3, "Unified", 32 << 20, 16)], 400 << 20);
        let c = Config::from_params(&p, Some(&h)).unwrap();
        assert_eq!(c.max.bytes, 100 << 20);
        assert!(c.max.note.as_deref().unwrap().contains("1/4"));
        // Unknown host: the fallback, said so.
        let c = Config::from_params(&p, None).unwrap();
        assert_eq!(c.max.bytes, FALLBACK_MAX_SIZE);
        assert!(c.max.note.is_some());
        // A min above the automatic max raises it.
        let p = params(&[("min_size", "512M")]);
        let h = host(&[(3, "Unified", 8 << 20, 8)], 64 << 30);
        let c = Config::from_params(&p, Some(&h)).unwrap();
        assert_eq!(c.sizes, [512 << 20]);
    }

    #[test]
    fn bad_combinations_are_clear_errors() {
        let h = host(&[(3, "Unified", 32 << 20, 16)], 1 << 30);
        let e = |ov: &[(&str, &str)]| {
            Config::from_params(&params(ov), Some(&h))
                .unwrap_err()
                .to_string()
        };
        let m = e(&[("min_size", "1M"), ("max_size", "64K")]);
        assert!(m.contains("max size 64 KiB is below min size 1 MiB"), "{m}");
        let m = e(&[("min_size", "32")]);
        assert!(m.contains("below one cache line (64 B)"), "{m}");
        let m = e(&[("line_size", "48")]);
        assert!(m.contains("not a power of two"), "{m}");
        let m = e(&[("line_size", "4")]);
        assert!(m.contains("not a power of two from 8 B"), "{m}");
        let m = e(&[("max_size", "2G")]);
        assert!(m.contains("only 1 GiB of memory is available"), "{m}");
        let m = e(&[("max_size", "1T"), ("line_size", "8")]);
        assert!(m.contains("2^32 lines"), "{m}");
        for m in [
            e(&[("min_size", "1M"), ("max_size", "64K")]),
            e(&[("max_size", "2G")]),
        ] {
            assert!(!m.contains('\n'), "{m}");
        }
    }

    #[test]
    fn chunk_target_respects_the_clock_and_min_time() {
        // Plenty of time: capped at 1 ms.
        assert_eq!(chunk_target_ns(20.0, 0.1), CHUNK_MAX_NS);
        // Short min time: a few chunks fit.
        assert_eq!(chunk_target_ns(20.0, 0.0008), 100_000.0);
        // A slow clock sets the floor.
        assert_eq!(chunk_target_ns(2000.0, 0.0008), 2_000_000.0);
    }

    #[test]
    fn chase_follows_the_chain() {
        let (mut buf, _) = Buffer::new(64 * 64, false).unwrap();
        let mut next = vec![0u32; 64];
        sattolo(&mut next, &mut Rng::for_thread(9, 0));
        buf.link(&next, 64);
        let base = buf.ptr.as_ptr() as *const u8;
        // 64 loads around a 64-cycle come back to the start; 16 loads land on slot
        // next^16(0).
        // SAFETY: the chain was just linked in buf.
        assert_eq!(unsafe { chase(base, 64) }, base);
        let mut i = 0usize;
        for _ in 0..16 {
            i = next[i] as usize;
        }
        // SAFETY: as above.
        let p = unsafe { chase(base, 16) };
        assert_eq!((p as usize - base as usize) / 64, i);
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
