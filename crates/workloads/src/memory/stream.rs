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

use hostbench_core::clock::Clock;
use hostbench_core::host::HostInfo;
use hostbench_core::params::{ParamKind, ParamSpec};
use hostbench_core::rand::Rng;
use hostbench_core::result::{Better, Column, Figure, Row, RunResult, Table, Warning, WarningKind};
use hostbench_core::runner::RunControl;
use hostbench_core::workload::*;
use std::alloc::Layout;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Mutex};

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

// ---------------------------------------------------------------------------------------
// Sizing
// ---------------------------------------------------------------------------------------

/// How the array size was decided; stored as the `size_rule` fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeRule {
    /// The user gave `--array-size`.
    Given = 0,
    /// Each array 4x the (possibly capped) last-level caches.
    CacheRule = 1,
    /// 4x the caches is below stream.c's default; the default was used.
    StreamDefault = 2,
    /// STREAM's rule asked for more than memory allows; cut to the memory cap.
    MemoryCapped = 3,
    /// No host information; stream.c's default was used.
    NoHostInfo = 4,
}

/// The array size and the facts behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeChoice {
    /// Elements per array.
    pub elements: u64,
    /// Which rule decided it.
    pub rule: SizeRule,
    /// Sum of the last-level caches as the machine reports them, bytes.
    pub llc_reported: Option<u64>,
    /// The cache size the rule used (after the guest sanity cap), bytes.
    pub llc_assumed: Option<u64>,
    /// MemAvailable at setup, bytes.
    pub mem_available: Option<u64>,
    /// One sentence: what was chosen and why (absent when the user chose).
    pub message: Option<String>,
}

/// Bytes in MiB as STREAM prints them (B, KiB, GiB or TiB at the extremes).
fn mib(b: u64) -> String {
    let f = b as f64;
    match b {
        0..1024 => format!("{b} B"),
        1024..1048576 => format!("{:.1} KiB", f / 1024.0),
        1048576..0x2_8000_0000 => format!("{:.1} MiB", f / (1u64 << 20) as f64),
        0x2_8000_0000..0x100_0000_0000 => format!("{:.1} GiB", f / (1u64 << 30) as f64),
        _ => format!("{:.1} TiB", f / (1u64 << 40) as f64),
    }
}

fn array_bytes(elements: u64, offset: u64) -> Option<u64> {
    elements
        .checked_add(offset)?
        .checked_mul(3 * BYTES_PER_ELEMENT)
}

/// Sum of the last-level (data or unified) caches of the machine, and whether it is a guest.
fn llc(host: &HostInfo) -> Option<(u64, u32, bool)> {
    let c = super::last_level_cache(host)?;
    let level = c.level;
    let cpus = host.cpu.threads.max(1);
    let instances = cpus.div_ceil(c.shared_by.max(1));
    let guest =
        host.virtualization.is_some() || host.cpu.flags_of_note.iter().any(|f| f == "hypervisor");
    Some((
        c.size_bytes.saturating_mul(u64::from(instances)),
        level,
        guest,
    ))
}

/// STREAM's sizing rule, made safe for guests and small machines (docs/stream.md).
pub fn choose_size(host: Option<&HostInfo>, offset: u64) -> SizeChoice {
    let Some(host) = host else {
        return SizeChoice {
            elements: STREAM_DEFAULT_ELEMENTS,
            rule: SizeRule::NoHostInfo,
            llc_reported: None,
            llc_assumed: None,
            mem_available: None,
            message: Some(format!(
                "array size {STREAM_DEFAULT_ELEMENTS} elements (stream.c's default): no host \
                 information to apply STREAM's 4x-cache rule to"
            )),
        };
    };
    let cpus = u64::from(host.cpu.threads.max(1));
    let (llc_reported, llc_assumed, why_cache) = match llc(host) {
        Some((bytes, level, guest)) => {
            let cap = GUEST_LLC_PER_CPU * cpus;
            if guest && bytes > cap {
                (
                    Some(bytes),
                    Some(cap),
                    format!(
                        "this virtual machine reports {} of L{level} for its {cpus} vCPU(s), the \
                         host's cache rather than the guest's share, so {} ({} per vCPU) is \
                         assumed",
                        mib(bytes),
                        mib(cap),
                        mib(GUEST_LLC_PER_CPU)
                    ),
                )
            } else {
                (
                    Some(bytes),
                    Some(bytes),
                    format!("{} of L{level} reported for {cpus} CPU(s)", mib(bytes)),
                )
            }
        }
        None => (None, None, "no cache sizes reported".to_string()),
    };
    let rule_elements = llc_assumed
        .map(|b| (4 * b).div_ceil(BYTES_PER_ELEMENT))
        .unwrap_or(0);
    let (mut elements, mut rule) = if rule_elements >= STREAM_DEFAULT_ELEMENTS {
        (
            rule_elements.div_ceil(AUTO_ROUND_ELEMENTS) * AUTO_ROUND_ELEMENTS,
            SizeRule::CacheRule,
        )
    } else {
        (STREAM_DEFAULT_ELEMENTS, SizeRule::StreamDefault)
    };
    let avail = host.memory.available_bytes;
    let mut message = match rule {
        SizeRule::CacheRule => format!(
            "STREAM's rule, each array at least 4x the last-level cache ({why_cache}), rounded \
             up to a multiple of {AUTO_ROUND_ELEMENTS} elements"
        ),
        _ => format!(
            "stream.c's default of {STREAM_DEFAULT_ELEMENTS} elements, which is more than 4x \
             the last-level cache ({why_cache})"
        ),
    };
    if avail > 0 {
        let cap_bytes = (avail as f64 * AUTO_MEMORY_FRACTION) as u64;
        let cap_elements = (cap_bytes / (3 * BYTES_PER_ELEMENT)).saturating_sub(offset);
        if elements > cap_elements {
            let wanted = elements;
            elements = if cap_elements >= AUTO_ROUND_ELEMENTS {
                cap_elements / AUTO_ROUND_ELEMENTS * AUTO_ROUND_ELEMENTS
            } else {
                cap_elements.max(1)
            };
            rule = SizeRule::MemoryCapped;
            message = format!(
                "{message}, which asks for {wanted} elements, cut to fit the three arrays in half \
                 of MemAvailable ({} of {}); arrays smaller than 4x the cache may measure the \
                 cache, not memory",
                mib(3 * BYTES_PER_ELEMENT * (elements + offset)),
                mib(avail),
            );
        }
    }
    let per_array = elements * BYTES_PER_ELEMENT;
    SizeChoice {
        elements,
        rule,
        llc_reported,
        llc_assumed,
        mem_available: (avail > 0).then_some(avail),
        message: Some(format!(
            "array size {elements} elements ({} per array, {} in all) chosen by {message}. Set \
             --array-size to override.",
            mib(per_array),
            mib(3 * per_array),
        )),
    }
}

/// Checks a user-given size against memory before anything is allocated.
pub fn check_given_size(
    elements: u64,
    offset: u64,
    host: Option<&HostInfo>,
) -> Result<SizeChoice, WorkloadError> {
    let need = array_bytes(elements, offset).ok_or_else(|| {
        WorkloadError(format!(
            "--array-size={elements} with --offset={offset} does not fit in memory addresses"
        ))
    })?;
    let avail = host.map(|h| h.memory.available_bytes).filter(|&a| a > 0);
    if let Some(avail) = avail {
        let limit = (avail as f64 * USER_MEMORY_FRACTION) as u64;
        if need > limit {
            let max = (limit / (3 * BYTES_PER_ELEMENT)).saturating_sub(offset);
            return Err(WorkloadError(format!(
                "--array-size={elements} needs 3 arrays x {} = {} but only {} is available \
                 (MemAvailable); use --array-size={max} or less, or leave it out for an \
                 automatic size",
                mib((elements + offset) * BYTES_PER_ELEMENT),
                mib(need),
                mib(avail)
            )));
        }
    }
    let (llc_reported, llc_assumed) = match host.and_then(llc) {
        Some((bytes, _, guest)) => {
            let cap = GUEST_LLC_PER_CPU * u64::from(host.map_or(1, |h| h.cpu.threads.max(1)));
            (
                Some(bytes),
                Some(if guest { bytes.min(cap) } else { bytes }),
            )
        }
        None => (None, None),
    };
    Ok(SizeChoice {
        elements,
        rule: SizeRule::Given,
        llc_reported,
        llc_assumed,
        mem_available: avail,
        message: None,
    })
}

// ---------------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------------

/// The three arrays in one allocation laid out as stream.c's static arrays are:
/// `a[N+OFFSET]`, `b[N+OFFSET]`, `c[N+OFFSET]`, back to back, never touched here.
struct Arrays {
    base: *mut f64,
    layout: Layout,
    n: usize,
    stride: usize,
    huge_pages: bool,
}

// SAFETY: the arrays are plain memory; which thread touches which element is governed by
// the partition and the barrier (see the module docs).
unsafe impl Send for Arrays {}
// SAFETY: as above.
unsafe impl Sync for Arrays {}

const HUGE_PAGE: usize = 2 << 20;

impl Arrays {
    fn new(n: usize, offset: usize, huge_pages: bool) -> Result<Arrays, WorkloadError> {
        let stride = n
            .checked_add(offset)
            .ok_or_else(|| WorkloadError("array size overflows".into()))?;
        let bytes = stride
            .checked_mul(3 * BYTES_PER_ELEMENT as usize)
            .ok_or_else(|| WorkloadError("array size overflows".into()))?;
        let layout = Layout::from_size_align(bytes.max(1), HUGE_PAGE)
            .map_err(|e| WorkloadError(format!("cannot lay out {bytes} bytes: {e}")))?;
        // SAFETY: the layout has a non-zero size. `alloc` (not `alloc_zeroed`) leaves the
        // pages untouched, so the threads that use them fault them in.
        let base = unsafe { std::alloc::alloc(layout) } as *mut f64;
        if base.is_null() {
            return Err(WorkloadError(format!(
                "could not allocate {} for the three arrays; lower --array-size",
                mib(bytes as u64)
            )));
        }
        let mut advised = false;
        if huge_pages {
            advised = advise_huge_pages(base as *mut u8, bytes);
        }
        Ok(Arrays {
            base,
            layout,
            n,
            stride,
            huge_pages: advised,
        })
    }

    /// Pointers to a, b and c.
    fn abc(&self) -> [*mut f64; 3] {
        // SAFETY: each offset is within the allocation of 3 * stride elements.
        unsafe {
            [
                self.base,
                self.base.add(self.stride),
                self.base.add(2 * self.stride),
            ]
        }
    }

    /// The three arrays as slices; only when no thread is running kernels.
    #[cfg(test)]
    fn slices(&mut self) -> [&mut [f64]; 3] {
        let [a, b, c] = self.abc();
        // SAFETY: disjoint ranges of the allocation, initialised by the run, and `&mut self`
        // guarantees nobody else uses them.
        unsafe {
            [
                std::slice::from_raw_parts_mut(a, self.n),
                std::slice::from_raw_parts_mut(b, self.n),
                std::slice::from_raw_parts_mut(c, self.n),
            ]
        }
    }
}

impl Drop for Arrays {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.base as *mut u8, self.layout) }
    }
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(p: *mut u8, len: usize) -> bool {
    // SAFETY: the range is one live allocation, aligned to 2 MiB (hence to the page size).
    unsafe { libc::madvise(p.cast(), len, libc::MADV_HUGEPAGE) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_p: *mut u8, _len: usize) -> bool {
    false
}

// ---------------------------------------------------------------------------------------
// Partition and barrier
// ---------------------------------------------------------------------------------------

/// Elements per partition unit: one 64-byte cache line of doubles, so neighbouring threads
/// never write the same line (given aligned arrays).
pub const PARTITION_UNIT: usize = 8;

/// Thread `tid`'s static chunk of `n` elements among `threads`: whole cache lines handed
/// out as OpenMP's static schedule does (the first `units % threads` threads get one more),
/// the last thread also taking the tail shorter than a line. The chunks are disjoint and
/// cover `0..n` exactly.
pub fn partition(n: usize, threads: usize, tid: usize) -> Range<usize> {
    let threads = threads.max(1);
    let units = n / PARTITION_UNIT;
    let (q, r) = (units / threads, units % threads);
    let start = tid * q + tid.min(r);
    let len = q + usize::from(tid < r);
    let end = if tid + 1 == threads {
        n
    } else {
        (start + len) * PARTITION_UNIT
    };
    start * PARTITION_UNIT..end
}

#[repr(align(128))]
struct Padded<T>(T);

/// A barrier that spins, then sleeps, and timestamps its release.
///
/// Kernel passes last microseconds to milliseconds, and a futex wake-up (std's Barrier)
/// would add tens of microseconds to every timed pass, so waiters spin first. A thread that
/// is still waiting after [`SPIN_NS`] parks instead: its partner has most likely been
/// preempted (a busy or oversubscribed machine), and a spinning waiter would keep its CPU
/// from the task that preempted the partner, which pinning keeps on the partner's CPU.
///
/// The last thread to arrive reads the clock just before it releases the others: that
/// instant ends one pass and starts the next, exactly, whichever thread is late (STREAM's
/// master thread reads the clock before forking, so no worker can start early; a timestamp
/// read by one thread *after* the release could miss work others did while it was
/// descheduled).
struct SpinBarrier {
    n: usize,
    arrived: Padded<AtomicUsize>,
    generation: Padded<AtomicUsize>,
    released_at: Padded<AtomicU64>,
    /// Each thread's handle, registered before its first wait, and whether it sleeps.
    sleepers: Vec<Padded<(std::sync::OnceLock<std::thread::Thread>, AtomicBool)>>,
}

/// How long a waiter spins before it parks.
const SPIN_NS: u64 = 200_000;

impl SpinBarrier {
    fn new(n: usize) -> SpinBarrier {
        SpinBarrier {
            n,
            arrived: Padded(AtomicUsize::new(0)),
            generation: Padded(AtomicUsize::new(0)),
            released_at: Padded(AtomicU64::new(0)),
            sleepers: (0..n)
                .map(|_| Padded((std::sync::OnceLock::new(), AtomicBool::new(false))))
                .collect(),
        }
    }

    /// Makes thread `tid` wakeable; call before its first [`SpinBarrier::wait`].
    fn register(&self, tid: usize) {
        let _ = self.sleepers[tid].0.0.set(std::thread::current());
    }

    /// Waits for every thread; returns the clock reading taken at the release.
    fn wait(&self, tid: usize, clock: &Clock) -> u64 {
        let g = self.generation.0.load(Acquire);
        if self.arrived.0.fetch_add(1, AcqRel) + 1 == self.n {
            let now = clock.now();
            self.released_at.0.store(now, Relaxed);
            self.arrived.0.store(0, Relaxed);
            self.generation.0.store(g.wrapping_add(1), SeqCst);
            for s in &self.sleepers {
                if s.0.1.load(SeqCst)
                    && let Some(t) = s.0.0.get()
                {
                    t.unpark();
                }
            }
            return now;
        }
        let start = clock.now();
        let budget = clock.from_ns(SPIN_NS);
        let mut spins = 0u32;
        while self.generation.0.load(Acquire) == g {
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(64) && clock.now().wrapping_sub(start) > budget {
                self.sleep(tid, g);
                break;
            }
        }
        // Written before the release, and not again before every thread has arrived at the
        // next barrier, which this one has not.
        self.released_at.0.load(Relaxed)
    }

    /// Parks until the generation moves on. SeqCst on both sides: either the releaser sees
    /// `sleeping` and unparks, or this thread sees the new generation before parking.
    fn sleep(&self, tid: usize, g: usize) {
        let me = &self.sleepers[tid].0;
        if me.0.get().is_none() {
            while self.generation.0.load(Acquire) == g {
                std::thread::yield_now();
            }
            return;
        }
        me.1.store(true, SeqCst);
        while self.generation.0.load(SeqCst) == g {
            std::thread::park();
        }
        me.1.store(false, Relaxed);
    }
}

// ---------------------------------------------------------------------------------------
// Pinning
// ---------------------------------------------------------------------------------------

#[cfg(target_os = "linux")]
mod affinity {
    /// CPUs a `cpu_set_t` can name (1024 with glibc and musl).
    const MAX: usize = 8 * std::mem::size_of::<libc::cpu_set_t>();

    /// The CPUs this process may run on, in order.
    pub fn allowed() -> Result<Vec<usize>, String> {
        // SAFETY: cpu_set_t is plain bits; all-zero is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid cpu_set_t of the size passed.
        let rc =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc != 0 {
            return Err(format!(
                "sched_getaffinity: {}",
                std::io::Error::last_os_error()
            ));
        }
        // SAFETY: CPU_ISSET reads within the set for c < MAX.
        Ok((0..MAX)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect())
    }

    /// Binds the calling thread to `cpu`.
    pub fn pin(cpu: usize) -> Result<(), String> {
        if cpu >= MAX {
            return Err(format!(
                "CPU {cpu} is beyond the {MAX} hostbench can address"
            ));
        }
        // SAFETY: as above; CPU_SET writes within the set for cpu < MAX; pid 0 is the
        // calling thread.
        let rc = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if rc != 0 {
            return Err(format!(
                "sched_setaffinity(CPU {cpu}): {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod affinity {
    pub fn allowed() -> Result<Vec<usize>, String> {
        Err("thread pinning is implemented for Linux only".into())
    }
    pub fn pin(_cpu: usize) -> Result<(), String> {
        Err("thread pinning is implemented for Linux only".into())
    }
}

// ---------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------

/// One of STREAM's kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// `c = a`
    Copy,
    /// `b = q c`
    Scale,
    /// `c = a + b`
    Add,
    /// `a = b + q c`
    Triad,
}

impl Kernel {
    /// In STREAM's order.
    pub const ALL: [Kernel; 4] = [Kernel::Copy, Kernel::Scale, Kernel::Add, Kernel::Triad];

    /// STREAM's label.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Copy => "Copy",
            Kernel::Scale => "Scale",
            Kernel::Add => "Add",
            Kernel::Triad => "Triad",
        }
    }

    /// Arrays named by the kernel (reads plus the write): STREAM's byte credit per element
    /// is this times 8.
    pub fn streams(self) -> u64 {
        match self {
            Kernel::Copy | Kernel::Scale => 2,
            Kernel::Add | Kernel::Triad => 3,
        }
    }

    /// (destination, first source, second source) as indices into [a, b, c].
    fn operands(self) -> (usize, usize, usize) {
        match self {
            Kernel::Copy => (2, 0, 0),
            Kernel::Scale => (1, 2, 2),
            Kernel::Add => (2, 0, 1),
            Kernel::Triad => (0, 1, 2),
        }
    }

    /// Applies the kernel to scalars, as STREAM's validation replays it.
    pub fn apply(self, abc: &mut [f64; 3]) {
        match self {
            Kernel::Copy => abc[2] = abc[0],
            Kernel::Scale => abc[1] = SCALAR * abc[2],
            Kernel::Add => abc[2] = abc[0] + abc[1],
            Kernel::Triad => abc[0] = abc[1] + SCALAR * abc[2],
        }
    }
}

/// The instruction set the kernels use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// Plain Rust loops (architectures without hand-written kernels).
    Portable,
    /// 128-bit SSE2 (every x86_64 CPU).
    Sse2,
    /// 256-bit AVX.
    Avx,
    /// 512-bit AVX-512F.
    Avx512,
}

impl Isa {
    /// Vector width in bits (64 for scalar code).
    pub fn bits(self) -> u32 {
        match self {
            Isa::Portable => 64,
            Isa::Sse2 => 128,
            Isa::Avx => 256,
            Isa::Avx512 => 512,
        }
    }

    /// Whether non-temporal stores are implemented for this choice.
    pub fn has_nt(self) -> bool {
        self != Isa::Portable
    }

    /// Resolves the `simd` parameter on this CPU.
    pub fn select(choice: &str) -> Result<Isa, WorkloadError> {
        #[cfg(target_arch = "x86_64")]
        {
            let avx = std::arch::is_x86_feature_detected!("avx");
            let avx512 = std::arch::is_x86_feature_detected!("avx512f");
            match choice {
                "auto" => Ok(if avx { Isa::Avx } else { Isa::Sse2 }),
                "sse2" => Ok(Isa::Sse2),
                "avx" if avx => Ok(Isa::Avx),
                "avx512" if avx512 => Ok(Isa::Avx512),
                "portable" => Ok(Isa::Portable),
                other => Err(WorkloadError(format!(
                    "--simd={other}: this CPU does not support {other}; use auto, sse2{}{} or \
                     portable",
                    if avx { ", avx" } else { "" },
                    if avx512 { ", avx512" } else { "" }
                ))),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        match choice {
            "auto" | "portable" => Ok(Isa::Portable),
            other => Err(WorkloadError(format!(
                "--simd={other} is for x86_64; this build has portable kernels only (use auto)"
            ))),
        }
    }

    /// Runs `k` over `n` elements: `d[i] = f(x[i], y[i])`.
    ///
    /// # Safety
    /// `d`, `x` and `y` must be valid for `n` elements; `d` may equal `x` or `y` but must not
    /// partially overlap them; the ISA must be supported (as [`Isa::select`] guarantees);
    /// `nt` only where [`Isa::has_nt`].
    #[inline]
    pub unsafe fn run(
        self,
        k: Kernel,
        nt: bool,
        d: *mut f64,
        x: *const f64,
        y: *const f64,
        n: usize,
    ) {
        // SAFETY: forwarded from the caller.
        unsafe {
            match self {
                #[cfg(target_arch = "x86_64")]
                Isa::Sse2 => x86::sse2(k, nt, d, x, y, n, SCALAR),
                #[cfg(target_arch = "x86_64")]
                Isa::Avx => x86::avx(k, nt, d, x, y, n, SCALAR),
                #[cfg(target_arch = "x86_64")]
                Isa::Avx512 => x86::avx512(k, nt, d, x, y, n, SCALAR),
                _ => {
                    // NT stores exist only as x86_64 kernels; elsewhere only the regular
                    // stores run and an `unavailable` warning says so.
                    let _ = nt;
                    portable(k, d, x, y, n, SCALAR)
                }
            }
        }
    }
}

/// One element, for heads and tails of the vector loops.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn scalar_one(k: Kernel, d: *mut f64, x: *const f64, y: *const f64, i: usize, q: f64) {
    // SAFETY: the caller keeps `i` within the arrays.
    unsafe {
        *d.add(i) = match k {
            Kernel::Copy => *x.add(i),
            Kernel::Scale => q * *x.add(i),
            Kernel::Add => *x.add(i) + *y.add(i),
            Kernel::Triad => *x.add(i) + q * *y.add(i),
        }
    }
}

/// Scalar loops the compiler vectorises for the target's baseline; Copy may become a
/// `memcpy` here, which is why x86_64 has explicit kernels.
unsafe fn portable(k: Kernel, d: *mut f64, x: *const f64, y: *const f64, n: usize, q: f64) {
    // SAFETY: forwarded from `Isa::run`.
    unsafe {
        match k {
            Kernel::Copy => (0..n).for_each(|i| *d.add(i) = *x.add(i)),
            Kernel::Scale => (0..n).for_each(|i| *d.add(i) = q * *x.add(i)),
            Kernel::Add => (0..n).for_each(|i| *d.add(i) = *x.add(i) + *y.add(i)),
            Kernel::Triad => (0..n).for_each(|i| *d.add(i) = *x.add(i) + q * *y.add(i)),
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! Hand-vectorised kernels: four vectors per step (one to two cache lines per stream),
    //! unaligned loads, and either regular stores or non-temporal stores after a scalar head
    //! that aligns the destination. Multiply then add, as STREAM's C compiles without FMA.

    use super::{Kernel, scalar_one};
    use std::arch::x86_64::*;

    /// The vector loop of one kernel with one store instruction.
    macro_rules! sweep {
        ($k:expr, $i:ident, $end:expr, $l:expr, $d:ident, $x:ident, $y:ident, $qv:ident,
         $load:ident, $store:ident, $add:ident, $mul:ident) => {
            match $k {
                Kernel::Copy => {
                    while $i < $end {
                        let v0 = $load($x.add($i));
                        let v1 = $load($x.add($i + $l));
                        let v2 = $load($x.add($i + 2 * $l));
                        let v3 = $load($x.add($i + 3 * $l));
                        $store($d.add($i), v0);
                        $store($d.add($i + $l), v1);
                        $store($d.add($i + 2 * $l), v2);
                        $store($d.add($i + 3 * $l), v3);
                        $i += 4 * $l;
                    }
                }
                Kernel::Scale => {
                    while $i < $end {
                        let v0 = $mul($qv, $load($x.add($i)));
                        let v1 = $mul($qv, $load($x.add($i + $l)));
                        let v2 = $mul($qv, $load($x.add($i + 2 * $l)));
                        let v3 = $mul($qv, $load($x.add($i + 3 * $l)));
                        $store($d.add($i), v0);
                        $store($d.add($i + $l), v1);
                        $store($d.add($i + 2 * $l), v2);
                        $store($d.add($i + 3 * $l), v3);
                        $i += 4 * $l;
                    }
                }
                Kernel::Add => {
                    while $i < $end {
                        let v0 = $add($load($x.add($i)), $load($y.add($i)));
                        let v1 = $add($load($x.add($i + $l)), $load($y.add($i + $l)));
                        let v2 = $add($load($x.add($i + 2 * $l)), $load($y.add($i + 2 * $l)));
                        let v3 = $add($load($x.add($i + 3 * $l)), $load($y.add($i + 3 * $l)));
                        $store($d.add($i), v0);
                        $store($d.add($i + $l), v1);
                        $store($d.add($i + 2 * $l), v2);
                        $store($d.add($i + 3 * $l), v3);
                        $i += 4 * $l;
                    }
                }
                Kernel::Triad => {
                    while $i < $end {
                        let v0 = $add($load($x.add($i)), $mul($qv, $load($y.add($i))));
                        let v1 = $add($load($x.add($i + $l)), $mul($qv, $load($y.add($i + $l))));
                        let v2 = $add(
                            $load($x.add($i + 2 * $l)),
                            $mul($qv, $load($y.add($i + 2 * $l))),
                        );
                        let v3 = $add(
                            $load($x.add($i + 3 * $l)),
                            $mul($qv, $load($y.add($i + 3 * $l))),
                        );
                        $store($d.add($i), v0);
                        $store($d.add($i + $l), v1);
                        $store($d.add($i + 2 * $l), v2);
                        $store($d.add($i + 3 * $l), v3);
                        $i += 4 * $l;
                    }
                }
            }
        };
    }

    /// One kernel function per vector width.
    macro_rules! kernel_fn {
        ($(#[$attr:meta])* $name:ident, $l:expr, $set1:ident, $load:ident, $store:ident,
         $stream:ident, $add:ident, $mul:ident) => {
            $(#[$attr])*
            pub(super) unsafe fn $name(
                k: Kernel,
                nt: bool,
                d: *mut f64,
                x: *const f64,
                y: *const f64,
                n: usize,
                q: f64,
            ) {
                const L: usize = $l;
                // SAFETY: the caller (`Isa::run`) guarantees valid ranges and CPU support;
                // non-temporal stores are only issued at addresses aligned to the vector.
                unsafe {
                    let mut i = 0usize;
                    if nt {
                        while i < n && (d.add(i) as usize) % (L * 8) != 0 {
                            scalar_one(k, d, x, y, i, q);
                            i += 1;
                        }
                    }
                    let qv = $set1(q);
                    let end = i + (n - i) / (4 * L) * (4 * L);
                    if nt {
                        sweep!(k, i, end, L, d, x, y, qv, $load, $stream, $add, $mul);
                    } else {
                        sweep!(k, i, end, L, d, x, y, qv, $load, $store, $add, $mul);
                    }
                    while i < n {
                        scalar_one(k, d, x, y, i, q);
                        i += 1;
                    }
                    if nt {
                        // Streaming stores are weakly ordered: drain them before the barrier
                        // so the pass is complete when it is timed and the next kernel reads.
                        _mm_sfence();
                    }
                }
            }
        };
    }

    kernel_fn!(
        #[inline(never)]
        sse2,
        2,
        _mm_set1_pd,
        _mm_loadu_pd,
        _mm_storeu_pd,
        _mm_stream_pd,
        _mm_add_pd,
        _mm_mul_pd
    );
    kernel_fn!(
        #[inline(never)]
        #[target_feature(enable = "avx")]
        avx,
        4,
        _mm256_set1_pd,
        _mm256_loadu_pd,
        _mm256_storeu_pd,
        _mm256_stream_pd,
        _mm256_add_pd,
        _mm256_mul_pd
    );
    kernel_fn!(
        #[inline(never)]
        #[target_feature(enable = "avx512f")]
        avx512,
        8,
        _mm512_set1_pd,
        _mm512_loadu_pd,
        _mm512_storeu_pd,
        _mm512_stream_pd,
        _mm512_add_pd,
        _mm512_mul_pd
    );
}

// ---------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------

/// Iterations after which a long run sets `a` back to 2.0 (untimed, between two
/// barriers): each iteration multiplies the values by 15 (Copy, Scale, Add, Triad with
/// q = 3 take a to 15a), so past about 260 iterations they overflow to infinity and nothing
/// can be validated. STREAM itself runs 10. At an iteration boundary the next iteration reads
/// only `a` (Copy rewrites c, Scale b), so restarting `a` restarts the recurrence.
pub const RESTART_ITERATIONS: u64 = 64;

/// STREAM's expected values of a, b and c after the initialisation, the timing check
/// (`a = 2a`) and `passes` kernel passes in `order`, with `a` set back to 2.0 before every
/// pass that starts a multiple of [`RESTART_ITERATIONS`] iterations.
pub fn expected(order: &[Kernel], passes: u64) -> [f64; 3] {
    let mut abc = [1.0, 2.0, 0.0];
    abc[0] *= 2.0;
    let period = RESTART_ITERATIONS * order.len() as u64;
    for p in 0..passes {
        if p > 0 && p.is_multiple_of(period) {
            abc[0] = 2.0;
        }
        order[(p % order.len() as u64) as usize].apply(&mut abc);
    }
    abc
}

/// Partial error sums over some elements of the three arrays.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ErrorSums {
    /// Sum of |observed − expected| per array.
    pub abs: [f64; 3],
    /// Elements whose relative error exceeds [`EPSILON`] (STREAM's "errors were found").
    pub bad: [u64; 3],
}

impl ErrorSums {
    /// Accumulates `arrays` (a, b, c slices of equal length) against `exp`.
    pub fn of(arrays: [&[f64]; 3], exp: [f64; 3]) -> ErrorSums {
        let mut s = ErrorSums::default();
        for (k, arr) in arrays.iter().enumerate() {
            let e = exp[k];
            let tol = EPSILON * e.abs();
            let (mut sum, mut bad) = (0.0f64, 0u64);
            for &v in arr.iter() {
                let d = (v - e).abs();
                sum += d;
                // `<=` is false for NaN, so a NaN counts as bad (STREAM's `>` lets it through).
                let within = d <= tol;
                bad += u64::from(!within);
            }
            s.abs[k] = sum;
            s.bad[k] = bad;
        }
        s
    }

    /// Adds another partial sum.
    pub fn merge(&mut self, o: &ErrorSums) {
        for k in 0..3 {
            self.abs[k] += o.abs[k];
            self.bad[k] += o.bad[k];
        }
    }
}

/// The verdict on the three arrays.
#[derive(Debug, Clone, PartialEq)]
pub struct Validation {
    /// Expected a, b, c.
    pub expected: [f64; 3],
    /// Average absolute error per array.
    pub avg_abs: [f64; 3],
    /// Average relative error per array (the absolute error where the expected value is 0).
    pub avg_rel: [f64; 3],
    /// Elements off by more than [`EPSILON`] relative, per array.
    pub bad: [u64; 3],
    /// Whether each array passed.
    pub ok: [bool; 3],
}

impl Validation {
    /// STREAM's test: the average relative absolute error of each array is at most
    /// [`EPSILON`] (and is a number).
    pub fn judge(sums: &ErrorSums, n: u64, expected: [f64; 3]) -> Validation {
        let n = n.max(1) as f64;
        let mut v = Validation {
            expected,
            avg_abs: [0.0; 3],
            avg_rel: [0.0; 3],
            bad: sums.bad,
            ok: [true; 3],
        };
        for (k, &e) in expected.iter().enumerate() {
            v.avg_abs[k] = sums.abs[k] / n;
            v.avg_rel[k] = if e != 0.0 {
                v.avg_abs[k] / e.abs()
            } else {
                v.avg_abs[k]
            };
            // `<=` is false for NaN, so a NaN error fails (STREAM's `>` would pass it).
            v.ok[k] = v.avg_rel[k] <= EPSILON;
        }
        v
    }

    /// All three arrays passed.
    pub fn passed(&self) -> bool {
        self.ok.iter().all(|&o| o)
    }

    /// What failed, for the error and the warning.
    pub fn failure(&self) -> Option<String> {
        let parts: Vec<String> = (0..3)
            .filter(|&k| !self.ok[k])
            .map(|k| {
                format!(
                    "array {}[]: average relative error {:e} > {EPSILON:e} (expected {:e}, \
                     {} element(s) off)",
                    ["a", "b", "c"][k],
                    self.avg_rel[k],
                    self.expected[k],
                    self.bad[k]
                )
            })
            .collect();
        (!parts.is_empty()).then(|| {
            format!(
                "STREAM validation failed: {}. The kernels did not compute what they should \
                 (faulty memory, an overclock, or a hostbench bug): do not use these figures.",
                parts.join("; ")
            )
        })
    }
}

// ---------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------

/// What thread 0 found, kept for the result.
#[derive(Debug, Default)]
struct Outcome {
    /// Nanoseconds of each completed kernel pass, in order.
    times_ns: Vec<u64>,
    /// The timing check (`a = 2a`), ns.
    timing_check_ns: u64,
    /// Smallest step of the clock observed, ns.
    granularity_ns: u64,
    /// The verdict, once the run has finished.
    validation: Option<Validation>,
}

struct Shared {
    arrays: Arrays,
    threads: usize,
    ntimes: u64,
    /// Kernel order of one iteration (four, or eight with the non-temporal variant).
    order: Vec<(Kernel, bool)>,
    isa: Isa,
    nt_requested: bool,
    size: SizeChoice,
    offset: u64,
    cpus: Result<Vec<usize>, String>,
    barrier: SpinBarrier,
    /// Passes every thread may run; only ever grows, written by thread 0 before a barrier.
    allowed: Padded<AtomicU64>,
    counted: AtomicUsize,
    pinned: Mutex<Vec<Option<Result<usize, String>>>>,
    sums: Mutex<Vec<ErrorSums>>,
    outcome: Mutex<Outcome>,
    #[cfg(test)]
    corrupt: Option<usize>,
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

struct StreamWorker {
    s: Arc<Shared>,
    tid: usize,
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
            Ok(_) => Err("the process may run on no CPU?".to_string()),
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
            Some(msg) => Err(WorkloadError(msg)),
            None => Ok(()),
        }
    }
}

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
    ("best_rate_mb_per_s", "MB/s"),
    ("avg_time_s", "s"),
    ("min_time_s", "s"),
    ("max_time_s", "s"),
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
            name: if nt { "stream_nt" } else { "stream" }.into(),
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
            ("array_elements", n as f64),
            ("offset_elements", s.offset as f64),
            ("bytes_per_element", BYTES_PER_ELEMENT as f64),
            ("array_bytes", (n * BYTES_PER_ELEMENT) as f64),
            ("total_bytes", (3 * n * BYTES_PER_ELEMENT) as f64),
            ("ntimes", s.ntimes as f64),
            ("passes", o.times_ns.len() as f64),
            (
                "iterations",
                (o.times_ns.len() / s.order.len().max(1)) as f64,
            ),
            ("threads_counted", s.counted.load(Relaxed) as f64),
            (
                "threads_pinned",
                s.pinned
                    .lock()
                    .map(|p| p.iter().filter(|x| matches!(x, Some(Ok(_)))).count())
                    .unwrap_or(0) as f64,
            ),
            ("nt_stores", f64::from(u8::from(self.nt_ran()))),
            ("simd_bits", f64::from(s.isa.bits())),
            (
                "huge_pages_advised",
                f64::from(u8::from(s.arrays.huge_pages)),
            ),
            ("size_rule", s.size.rule as u8 as f64),
            ("clock_granularity_ns", o.granularity_ns as f64),
            ("timing_check_us", o.timing_check_ns as f64 / 1e3),
            ("epsilon", EPSILON),
        ];
        if let Some(b) = s.size.llc_reported {
            f.push(("llc_reported_bytes", b as f64));
        }
        if let Some(b) = s.size.llc_assumed {
            f.push(("llc_assumed_bytes", b as f64));
        }
        if let Some(b) = s.size.mem_available {
            f.push(("mem_available_bytes", b as f64));
        }
        let mut out: Vec<(String, f64)> = f.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        if let Some(v) = &o.validation {
            out.push(("validated".into(), f64::from(u8::from(v.passed()))));
            for (k, name) in ["a", "b", "c"].iter().enumerate() {
                let mut put = |what: &str, x: f64| {
                    // JSON has no NaN or infinity; a non-number error is shown by `validated`
                    // and the error-element count.
                    if x.is_finite() {
                        out.push((format!("{what}_{name}"), x));
                    }
                };
                put("expected", v.expected[k]);
                put("avg_abs_error", v.avg_abs[k]);
                put("avg_rel_error", v.avg_rel[k]);
                put("error_elements", v.bad[k] as f64);
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
            return Err(WorkloadError(
                "--ntimes=1: STREAM discards the first iteration, so at least 2 are needed".into(),
            ));
        }
        let isa = Isa::select(p.text("simd"))?;
        let size = if given > 0 {
            check_given_size(given, offset, ctx.host)?
        } else {
            choose_size(ctx.host, offset)
        };
        if size.elements < threads as u64 {
            return Err(WorkloadError(format!(
                "--array-size={} is smaller than --threads={threads}: every thread needs at \
                 least one element",
                size.elements
            )));
        }
        let n = usize::try_from(size.elements).map_err(|_| {
            WorkloadError("--array-size does not fit this machine's addresses".into())
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
        for (table, suffix) in [("stream", ""), ("stream_nt", "_nt")] {
            let Some(t) = r.tables.iter().find(|t| t.name == table) else {
                continue;
            };
            for k in ["Triad", "Copy", "Scale", "Add"] {
                if let Some(v) = t.get(k, "best_rate_mb_per_s") {
                    let name = format!("{}{suffix}_best_mb_per_s", k.to_lowercase());
                    f.push(Figure::new(&name, "MB/s", v, Better::Higher));
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
    use hostbench_core::host::{CacheInfo, CpuInfo, MemoryInfo};
    use hostbench_core::params::Params;
    use hostbench_core::plan::Plan;
    use hostbench_core::runner::{Silent, run};

    fn host(l3: u64, shared_by: u32, cpus: u32, avail: u64, vm: bool) -> HostInfo {
        HostInfo {
            cpu: CpuInfo {
                threads: cpus,
                caches: vec![
                    CacheInfo {
                        level: 2,
                        kind: "Unified".into(),
                        size_bytes: 1 << 20,
                        shared_by: 1,
                    },
                    CacheInfo {
                        level: 3,
                        kind: "Unified".into(),
                        size_bytes: l3,
                        shared_by,
                    },
                ],
                ..CpuInfo::default()
            },
            memory: MemoryInfo {
                available_bytes: avail,
                ..MemoryInfo::default()
            },
            virtualization: vm.then(|| "kvm".to_string()),
            ..HostInfo::default()
        }
    }

    #[test]
    fn partition_covers_every_element_exactly_once() {
        for n in [1usize, 7, 8, 9, 63, 64, 65, 1000, 1001, 4096 + 3] {
            for threads in 1..=9 {
                let mut seen = vec![0u8; n];
                let mut last_end = 0;
                for tid in 0..threads {
                    let r = partition(n, threads, tid);
                    assert_eq!(
                        r.start, last_end,
                        "n={n} t={threads} tid={tid}: gap or overlap"
                    );
                    assert!(r.start <= r.end && r.end <= n);
                    if tid + 1 < threads {
                        assert_eq!(r.end % PARTITION_UNIT, 0, "chunks end on cache lines");
                    }
                    r.for_each(|i| seen[i] += 1);
                    last_end = partition(n, threads, tid).end;
                }
                assert_eq!(last_end, n);
                assert!(seen.iter().all(|&c| c == 1), "n={n} threads={threads}");
            }
        }
        // Balanced to within one cache line.
        let lens: Vec<usize> = (0..3).map(|t| partition(8 * 100, 3, t).len()).collect();
        assert_eq!(lens, vec![272, 264, 264]);
    }

    /// Runs the kernels single-threaded over small arrays, as the workers do.
    fn run_kernels(isa: Isa, nt: bool, n: usize, offset: usize, iters: u64) -> Arrays {
        let arrays = Arrays::new(n, offset, false).unwrap();
        let [a, b, c] = arrays.abc();
        // SAFETY: whole arrays, one thread.
        unsafe {
            for i in 0..n {
                *a.add(i) = 2.0;
                *b.add(i) = 2.0;
                *c.add(i) = 0.0;
            }
            for _ in 0..iters {
                for k in Kernel::ALL {
                    let (d, x, y) = k.operands();
                    let p = arrays.abc();
                    isa.run(k, nt, p[d], p[x], p[y], n);
                }
            }
        }
        arrays
    }

    fn isas() -> Vec<Isa> {
        ["sse2", "avx", "avx512", "portable"]
            .iter()
            .filter_map(|c| Isa::select(c).ok())
            .collect()
    }

    #[test]
    fn kernels_compute_streams_recurrence_at_any_alignment() {
        for isa in isas() {
            for nt in [false, isa.has_nt()] {
                for (n, offset) in [(1, 0), (37, 0), (1000, 1), (1003, 3), (4096, 5)] {
                    let mut arrays = run_kernels(isa, nt, n, offset, 3);
                    let exp = expected(&Kernel::ALL, 12);
                    let [a, b, c] = arrays.slices();
                    let v = Validation::judge(&ErrorSums::of([a, b, c], exp), n as u64, exp);
                    assert!(v.passed(), "{isa:?} nt={nt} n={n} offset={offset}: {v:?}");
                    assert_eq!(
                        v.avg_abs, [0.0; 3],
                        "{isa:?}: bit-exact with the scalar replay"
                    );
                }
            }
        }
    }

    #[test]
    fn validation_catches_a_corrupted_element() {
        let n = 1000;
        let mut arrays = run_kernels(Isa::select("auto").unwrap(), false, n, 0, 10);
        let exp = expected(&Kernel::ALL, 40);
        let [a, b, c] = arrays.slices();
        assert!(Validation::judge(&ErrorSums::of([a, b, c], exp), n as u64, exp).passed());
        // One element of b off by a part in 10^9: the average relative error is 1e-12.
        b[417] *= 1.0 + 1e-9;
        let v = Validation::judge(&ErrorSums::of([a, b, c], exp), n as u64, exp);
        assert!(!v.passed());
        assert_eq!(v.ok, [true, false, true]);
        assert_eq!(v.bad, [0, 1, 0]);
        let msg = v.failure().unwrap();
        assert!(msg.contains("array b[]"), "{msg}");
        // A NaN must fail too (STREAM's `>` comparison would let it through).
        b[417] = f64::NAN;
        let v = Validation::judge(&ErrorSums::of([a, b, c], exp), n as u64, exp);
        assert!(!v.ok[1] && v.bad[1] == 1);
    }

    #[test]
    fn expected_values_follow_stream_c() {
        // stream.c with NTIMES=10: a = 1.1534e12-ish; check the first iteration by hand.
        let e = expected(&Kernel::ALL, 4);
        // a=2 → c=2 → b=6 → c=8 → a=6+24=30
        assert_eq!(e, [30.0, 6.0, 8.0]);
        assert_eq!(expected(&Kernel::ALL, 0), [2.0, 2.0, 0.0]);
    }

    #[test]
    fn long_replays_stay_finite() {
        // Past RESTART_ITERATIONS the recurrence starts again from a = 2.
        let period = RESTART_ITERATIONS * 4;
        assert_eq!(
            expected(&Kernel::ALL, period + 4),
            expected(&Kernel::ALL, 4)
        );
        let e = expected(&Kernel::ALL, 10_000 * 4 + 3);
        assert!(e.iter().all(|v| v.is_finite()), "{e:?}");
    }

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

    #[test]
    fn default_size_follows_the_rule_and_its_caps() {
        // Bare metal, 32 MiB L3 shared by 8 CPUs, 2 instances: 64 MiB -> 4x = 32 Mi elements.
        let h = host(32 << 20, 8, 16, 64 << 30, false);
        let c = choose_size(Some(&h), 0);
        assert_eq!(c.rule, SizeRule::CacheRule);
        assert_eq!(c.llc_reported, Some(64 << 20));
        assert_eq!(c.elements, 4 * (64 << 20) / 8);
        // A 2-vCPU guest reporting the host's 480 MiB L3: capped to 32 MiB per vCPU.
        let g = host(480 << 20, 2, 2, 23 << 30, true);
        let c = choose_size(Some(&g), 0);
        assert_eq!(c.llc_reported, Some(480 << 20));
        assert_eq!(c.llc_assumed, Some(64 << 20));
        assert_eq!(c.elements, 4 * (64 << 20) / 8);
        assert!(c.message.as_deref().unwrap().contains("virtual machine"));
        // Small cache: stream.c's default.
        let s = host(4 << 20, 4, 4, 8 << 30, false);
        assert_eq!(choose_size(Some(&s), 0).elements, STREAM_DEFAULT_ELEMENTS);
        assert_eq!(choose_size(Some(&s), 0).rule, SizeRule::StreamDefault);
        // Little memory: at most half of MemAvailable for the three arrays.
        let m = host(256 << 20, 16, 16, 1 << 30, false);
        let c = choose_size(Some(&m), 0);
        assert_eq!(c.rule, SizeRule::MemoryCapped);
        assert!(3 * 8 * c.elements <= 1 << 29, "{c:?}");
        assert!(c.message.unwrap().contains("MemAvailable"));
        assert_eq!(choose_size(None, 0).rule, SizeRule::NoHostInfo);
    }

    #[test]
    fn a_given_size_beyond_memory_is_refused() {
        let h = host(32 << 20, 2, 2, 1 << 30, false);
        let e = check_given_size(100_000_000, 0, Some(&h)).unwrap_err();
        assert!(e.0.contains("--array-size="), "{e}");
        assert!(check_given_size(10_000_000, 0, Some(&h)).is_ok());
        assert!(check_given_size(u64::MAX / 4, 0, None).is_err());
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
                .map(|e| e.0)
        };
        let e = try_build(&params(&[("ntimes", "1")]), 1).unwrap();
        assert!(e.contains("--ntimes=1"), "{e}");
        let e = try_build(&params(&[("array_size", "3")]), 4).unwrap();
        assert!(e.contains("--threads=4"), "{e}");
    }
}
