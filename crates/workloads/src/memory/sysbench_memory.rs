//! `memory`: sysbench 1.0.20's memory test, event for event.
//!
//! The buffer is one block (`block_size` bytes, page-aligned, zero-filled and faulted in at
//! setup): a single buffer shared by every thread (`scope=global`) or one per thread
//! (`local`). One event walks the block once in machine words (8 bytes): `seq` touches each
//! word in order, `rnd` touches `block/8` uniformly chosen words; `write` stores, `read`
//! loads, `none` runs the loop without touching memory. Each thread's quota is
//! `total_size / block_size / threads` events (the remainder is dropped, as sysbench does);
//! `--time` still applies, whichever ends first.
//!
//! Loads are volatile and stores are relaxed atomics: one plain 8-byte `mov` per word, never
//! merged into wider vector accesses or deleted — the same instructions as sysbench's
//! ConcurrencyKit accessors, so MiB/s compare.
//!
//! The compatible semantics mislead in well-known ways (the working set is one block, the
//! total is a quota not a footprint, shared-block writers measure coherence traffic); the
//! instance says so in typed warnings rather than changing the figures.

use hostbench_core::host::HostInfo;
use hostbench_core::params::{ParamKind, ParamSpec};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::{Counter, Counters};
use hostbench_core::result::{Better, Figure, FigureDef, RunResult, Warning, WarningKind};
use hostbench_core::units::Bytes;
use hostbench_core::workload::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// sysbench's memory test.
pub struct Memory;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "block_size",
        kind: ParamKind::Size,
        default: "1K",
        unit: "B",
        help: "size of the buffer and of one event; a power of two, at least 8",
        sysbench: Some("memory-block-size"),
    },
    ParamSpec {
        name: "total_size",
        kind: ParamKind::Size,
        default: "100G",
        unit: "B",
        help: "bytes to transfer across all threads (an event quota, not a buffer size)",
        sysbench: Some("memory-total-size"),
    },
    ParamSpec {
        name: "scope",
        kind: ParamKind::Choice(&["global", "local"]),
        default: "global",
        unit: "",
        help: "one buffer shared by all threads, or one per thread",
        sysbench: Some("memory-scope"),
    },
    ParamSpec {
        name: "hugetlb",
        kind: ParamKind::Bool,
        default: "off",
        unit: "",
        help: "allocate the buffers from the reserved huge-page pool",
        sysbench: Some("memory-hugetlb"),
    },
    ParamSpec {
        name: "oper",
        kind: ParamKind::Choice(&["read", "write", "none"]),
        default: "write",
        unit: "",
        help: "what one access does",
        sysbench: Some("memory-oper"),
    },
    ParamSpec {
        name: "access_mode",
        kind: ParamKind::Choice(&["seq", "rnd"]),
        default: "seq",
        unit: "",
        help: "walk the block in order, or touch uniformly random words",
        sysbench: Some("memory-access-mode"),
    },
];

const WORD: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Oper {
    Read,
    Write,
    None,
}

/// An anonymous mapping of words, unmapped on drop.
struct Buffer {
    ptr: *mut AtomicU64,
    words: usize,
    map_len: usize,
}

// SAFETY: the mapping is owned by the Buffer and only accessed through atomics or volatile
// loads; threads share it exactly as sysbench's global buffer is shared.
unsafe impl Send for Buffer {}
// SAFETY: as above.
unsafe impl Sync for Buffer {}

impl Buffer {
    fn new(bytes: usize, huge: Option<usize>) -> Result<Buffer, String> {
        let map_len = match huge {
            Some(h) => bytes.div_ceil(h) * h,
            None => bytes.div_ceil(4096) * 4096,
        };
        let mut flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        if huge.is_some() {
            flags |= libc::MAP_HUGETLB;
        }
        // SAFETY: a fresh anonymous mapping; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error().to_string());
        }
        // SAFETY: the mapping is map_len ≥ bytes long and writable; zero-filling faults every
        // page in now, as sysbench's memset does, so events never pay first-touch faults.
        unsafe { std::ptr::write_bytes(p as *mut u8, 0, map_len) };
        Ok(Buffer {
            ptr: p as *mut AtomicU64,
            words: bytes / WORD,
            map_len,
        })
    }

    #[inline(always)]
    fn words(&self) -> &[AtomicU64] {
        // SAFETY: ptr is page-aligned and valid for `words` AtomicU64 while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.words) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what new() mapped; no worker outlives the instance.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.map_len) };
    }
}

struct Inst {
    buffers: Vec<Arc<Buffer>>,
    global: bool,
    block: usize,
    quota: u64,
    oper: Oper,
    rnd: bool,
    warnings: Vec<Warning>,
    facts: Vec<(String, f64)>,
}

struct MemWorker {
    buf: Arc<Buffer>,
    left: u64,
    block: u64,
    oper: Oper,
    rnd: bool,
    rng: Rng,
}

impl MemWorker {
    #[inline(always)]
    fn seq_write(&self) {
        let v = self.left;
        for w in self.buf.words() {
            w.store(v, Relaxed);
        }
    }

    #[inline(always)]
    fn seq_read(&self) {
        for w in self.buf.words() {
            // SAFETY: a valid, aligned word of the buffer; nobody writes in read mode.
            unsafe { std::ptr::read_volatile(w.as_ptr()) };
        }
    }

    #[inline(always)]
    fn seq_none(&self) {
        for _ in 0..self.buf.words {
            // An empty asm statement: the loop stays, nothing touches memory (sysbench's
            // compiler barrier).
            // SAFETY: empty.
            unsafe { std::arch::asm!("", options(nostack, preserves_flags)) };
        }
    }

    fn rnd(&mut self) {
        // Split borrows: the words are read through `buf` while `rng` advances.
        let MemWorker {
            buf,
            rng,
            oper,
            left,
            ..
        } = self;
        let words = buf.words();
        let n = words.len();
        for _ in 0..n {
            // sysbench 1.0.20: a uniform double in [0, 1) scaled to the word count.
            let i = ((rng.next_f64() * n as f64) as usize).min(n - 1);
            match oper {
                Oper::Write => words[i].store(*left, Relaxed),
                // SAFETY: a valid, aligned word; nobody writes in read mode.
                Oper::Read => unsafe {
                    std::ptr::read_volatile(words[i].as_ptr());
                },
                // SAFETY: empty asm that only consumes the index.
                Oper::None => unsafe {
                    std::arch::asm!("/* {0} */", in(reg) i, options(nostack, preserves_flags))
                },
            }
        }
    }
}

impl EventWorker for MemWorker {
    #[inline]
    fn event(&mut self, c: &Counters) -> Result<Step, WorkloadError> {
        if self.left == 0 {
            return Ok(Step::End);
        }
        self.left -= 1;
        if self.rnd {
            self.rnd();
        } else {
            match self.oper {
                Oper::Write => self.seq_write(),
                Oper::Read => self.seq_read(),
                Oper::None => self.seq_none(),
            }
        }
        match self.oper {
            Oper::Write => c.add(Counter::BytesWritten, self.block),
            Oper::Read => c.add(Counter::BytesRead, self.block),
            Oper::None => {}
        }
        Ok(Step::Done)
    }
}

impl Instance for Inst {
    fn worker(&self, tid: usize, rng: Rng) -> Result<Worker, WorkloadError> {
        let buf = if self.global {
            Arc::clone(&self.buffers[0])
        } else {
            Arc::clone(&self.buffers[tid])
        };
        Ok(Worker::Event(Box::new(MemWorker {
            buf,
            left: self.quota,
            block: self.block as u64,
            oper: self.oper,
            rnd: self.rnd,
            rng,
        })))
    }

    fn facts(&self) -> Vec<(String, f64)> {
        self.facts.clone()
    }

    fn warnings(&self) -> Vec<Warning> {
        self.warnings.clone()
    }
}

/// sysbench's headline: MiB transferred per second.
pub const MIB_PER_S: FigureDef = FigureDef {
    name: "mib_per_s",
    label: "transfer rate",
    unit: "MiB/s",
    better: Better::Higher,
};

impl Workload for Memory {
    fn id(&self) -> &'static str {
        "memory"
    }
    fn category(&self) -> Category {
        Category::Memory
    }
    fn summary(&self) -> &'static str {
        "walk one block of memory in 8-byte words, read or write (sysbench memory)"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn sysbench_test(&self) -> Option<&'static str> {
        Some("memory")
    }
    fn counters(&self) -> &'static [Counter] {
        &[Counter::BytesRead, Counter::BytesWritten]
    }
    fn figures(&self, r: &RunResult) -> Vec<Figure> {
        let mut f = r.default_figures();
        if r.workload.params.text("oper") != "none" {
            // sysbench's headline: MiB/sec = events × block / 2^20 per second.
            let block = r.workload.params.int("block_size") as f64;
            let mib = r.metrics.events_per_s * block / (1024.0 * 1024.0);
            f.insert(0, MIB_PER_S.at(mib));
        }
        f
    }
    fn caps(&self) -> Caps {
        Caps {
            ends_itself: true,
            own_event_quota: true,
            ..Caps::default()
        }
    }
    fn small_params(&self) -> &'static [(&'static str, &'static str)] {
        &[("total_size", "1M")]
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        let p = ctx.params;
        let block = p.int("block_size") as u64;
        let total = p.int("total_size") as u64;
        if block < WORD as u64 || !block.is_power_of_two() {
            return Err(WorkloadError::usage(format!(
                "invalid value for --memory-block-size (block_size): {block} bytes; it must be \
                 a power of two of at least {WORD} bytes, e.g. 1K or 1M"
            )));
        }
        let global = p.text("scope") == "global";
        let oper = match p.text("oper") {
            "read" => Oper::Read,
            "write" => Oper::Write,
            _ => Oper::None,
        };
        let rnd = p.text("access_mode") == "rnd";
        let threads = ctx.threads as u64;
        let quota = total / block / threads;
        let nbuf = if global { 1 } else { ctx.threads };
        let footprint = block.saturating_mul(nbuf as u64);
        let block = usize::try_from(block).map_err(|_| {
            WorkloadError::usage(format!("--memory-block-size={block} is too large"))
        })?;
        if let Some(h) = ctx.host {
            let avail = h.memory.available_bytes;
            if avail > 0 && footprint > avail / 10 * 9 {
                return Err(WorkloadError::environment(format!(
                    "the buffers need {} ({} buffer(s) of {}) but only {} of memory is available; \
                     use a smaller --memory-block-size{}",
                    Bytes(footprint),
                    nbuf,
                    Bytes(block as u64),
                    Bytes(avail),
                    if global {
                        ""
                    } else {
                        " or --memory-scope=global"
                    }
                )));
            }
        }
        let huge = if p.bool("hugetlb") {
            Some(hugepage_size())
        } else {
            None
        };
        let mut buffers = Vec::with_capacity(nbuf);
        for _ in 0..nbuf {
            let b = Buffer::new(block, huge).map_err(|e| match huge {
                Some(h) => WorkloadError::environment(hugetlb_error(h, block, nbuf, &e)),
                None => WorkloadError::environment(format!(
                    "could not allocate a {} buffer: {e}",
                    Bytes(block as u64)
                )),
            })?;
            buffers.push(Arc::new(b));
        }
        let mut facts = vec![
            ("block_size_bytes".to_string(), block as f64),
            ("buffers".to_string(), nbuf as f64),
            ("footprint_bytes".to_string(), footprint as f64),
            ("events_quota_per_thread".to_string(), quota as f64),
            ("accesses_per_event".to_string(), (block / WORD) as f64),
        ];
        if let Some(h) = huge {
            facts.push(("hugepage_bytes".into(), h as f64));
        }
        let warnings = advice(&Advice {
            block: block as u64,
            total,
            threads,
            global,
            oper,
            rnd,
            footprint,
            quota,
            host: ctx.host,
        });
        Ok(Box::new(Inst {
            buffers,
            global,
            block,
            quota,
            oper,
            rnd,
            warnings,
            facts,
        }))
    }
}

/// The kernel's huge page size (Hugepagesize in /proc/meminfo), 2 MiB if unreadable.
fn hugepage_size() -> usize {
    meminfo("Hugepagesize:").map_or(2 << 20, |kb| kb as usize * 1024)
}

fn meminfo(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

fn hugetlb_error(page: usize, block: usize, nbuf: usize, err: &str) -> String {
    let total = meminfo("HugePages_Total:").unwrap_or(0);
    let free = meminfo("HugePages_Free:").unwrap_or(0);
    let need = block.div_ceil(page) * nbuf;
    if total == 0 {
        format!(
            "--memory-hugetlb: no huge pages are reserved on this machine (HugePages_Total is 0 \
             in /proc/meminfo). Reserve {need} or more as root (`sysctl vm.nr_hugepages={need}`, \
             {} each) or run without --memory-hugetlb",
            Bytes(page as u64)
        )
    } else {
        format!(
            "--memory-hugetlb: could not map {need} huge page(s) of {} ({err}); {free} of \
             {total} reserved pages are free. Reserve more (`sysctl vm.nr_hugepages=N`) or \
             free some",
            Bytes(page as u64)
        )
    }
}

struct Advice<'a> {
    block: u64,
    total: u64,
    threads: u64,
    global: bool,
    oper: Oper,
    rnd: bool,
    footprint: u64,
    quota: u64,
    host: Option<&'a HostInfo>,
}

/// The smallest data or unified cache level, as the CPU reports it, that holds `bytes`.
fn cache_holding(bytes: u64, host: &HostInfo) -> Option<(String, u64)> {
    let mut caches: Vec<_> = host
        .cpu
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction" && c.size_bytes > 0)
        .collect();
    caches.sort_by_key(|c| c.level);
    caches
        .into_iter()
        .find(|c| bytes <= c.size_bytes)
        .map(|c| (format!("L{}", c.level), c.size_bytes))
}

/// What these options really measure, as typed warnings.
fn advice(a: &Advice<'_>) -> Vec<Warning> {
    let mut w = Vec::new();
    if a.quota == 0 {
        w.push(Warning {
            kind: WarningKind::NoWork,
            message: format!(
                "--memory-total-size={} is less than --memory-block-size={} × --threads={}: \
                 each thread's quota (total / block / threads) is 0 events and nothing is \
                 measured (sysbench does the same). --memory-total-size is the number of bytes \
                 to transfer, not a buffer size: raise it, e.g. --memory-total-size=100G",
                Bytes(a.total),
                Bytes(a.block),
                a.threads
            ),
        });
    }
    if let Some(h) = a.host
        && let Some((level, size)) = cache_holding(a.footprint, h)
        && a.oper != Oper::None
    {
        w.push(Warning {
            kind: WarningKind::CacheResident,
            message: format!(
                "every event reuses the same {} block{}, which fits in the {level} cache ({} \
                 as the CPU reports it): this measures {level} bandwidth and hostbench's \
                 per-event cost, not DRAM. For DRAM bandwidth use a block larger than 4× the \
                 last-level cache (e.g. --memory-block-size=1G --memory-total-size=100G) or \
                 `hostbench stream`",
                Bytes(a.block),
                if a.global { "" } else { " per thread" },
                Bytes(size)
            ),
        });
    }
    if a.global && a.threads > 1 && a.oper == Oper::Write {
        w.push(Warning {
            kind: WarningKind::Contention,
            message: format!(
                "all {} threads write the same {} block (--memory-scope=global): the figure \
                 includes cache lines bouncing between cores, not just memory bandwidth. Use \
                 --memory-scope=local for one buffer per thread",
                a.threads,
                Bytes(a.block)
            ),
        });
    }
    if a.rnd && a.oper != Oper::None {
        w.push(Warning {
            kind: WarningKind::HarnessDominated,
            message: "rnd draws one random number per 8-byte access, so it measures the random \
                      generator as much as memory (sysbench versions differ by up to 10× here); \
                      compare rnd figures only from the same tool. For random-access latency \
                      use `hostbench memlat`"
                .into(),
        });
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::params::Params;
    use hostbench_core::rand::Distribution;
    use hostbench_core::recorder::Counters;

    fn setup(kv: &[(&str, &str)], threads: usize) -> Result<Box<dyn Instance>, WorkloadError> {
        let o: Vec<(String, String)> = kv
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let params = Params::resolve("memory", PARAMS, &o).unwrap();
        Memory.setup(&SetupCtx {
            params: &params,
            threads,
            dist: Distribution::Uniform,
            seed: 1,
            host: None,
        })
    }

    fn drain(inst: &dyn Instance, tid: usize) -> (u64, Counters) {
        let Worker::Event(mut w) = inst.worker(tid, Rng::for_thread(1, tid as u64)).unwrap() else {
            panic!("event worker expected")
        };
        let c = Counters::default();
        let mut n = 0;
        while w.event(&c).unwrap() == Step::Done {
            n += 1;
        }
        (n, c)
    }

    #[test]
    fn quota_is_total_over_block_over_threads() {
        let i = setup(&[("block_size", "1K"), ("total_size", "1M")], 1).unwrap();
        let (n, c) = drain(i.as_ref(), 0);
        assert_eq!(n, 1024);
        assert_eq!(c.snapshot().get(Counter::BytesWritten), 1 << 20);
        // 3 threads: 1024 / 3 = 341 each, the remainder dropped.
        let i = setup(&[("block_size", "1K"), ("total_size", "1M")], 3).unwrap();
        for t in 0..3 {
            assert_eq!(drain(i.as_ref(), t).0, 341);
        }
    }

    #[test]
    fn block_times_threads_above_total_does_nothing_and_says_so() {
        let i = setup(&[("block_size", "1K"), ("total_size", "1K")], 2).unwrap();
        assert_eq!(drain(i.as_ref(), 0).0, 0);
        assert!(i.warnings().iter().any(|w| w.kind == WarningKind::NoWork));
    }

    #[test]
    fn rnd_read_counts_bytes_read_only() {
        let i = setup(
            &[
                ("block_size", "64"),
                ("total_size", "640"),
                ("oper", "read"),
                ("access_mode", "rnd"),
            ],
            1,
        )
        .unwrap();
        let (n, c) = drain(i.as_ref(), 0);
        assert_eq!(n, 10);
        assert_eq!(c.snapshot().get(Counter::BytesRead), 640);
        assert_eq!(c.snapshot().get(Counter::BytesWritten), 0);
    }

    #[test]
    fn seq_write_touches_every_word() {
        let b = Arc::new(Buffer::new(256, None).unwrap());
        let w = MemWorker {
            buf: Arc::clone(&b),
            left: 7,
            block: 256,
            oper: Oper::Write,
            rnd: false,
            rng: Rng::for_thread(1, 0),
        };
        w.seq_write();
        assert!(b.words().iter().all(|x| x.load(Relaxed) == 7));
        assert_eq!(b.words().len(), 32);
    }

    #[test]
    fn bad_block_sizes_are_refused() {
        for bad in ["12", "4", "0", "1000"] {
            let e = setup(&[("block_size", bad)], 1).err().expect(bad);
            assert!(e.message.contains("power of two"), "{}", e.message);
            assert_eq!(e.kind, ErrorKind::Usage, "{e}");
        }
    }

    #[test]
    fn advice_names_the_cache_level() {
        let mut h = HostInfo::default();
        h.cpu.caches = vec![
            hostbench_core::host::CacheInfo {
                level: 1,
                kind: "Data".into(),
                size_bytes: 48 << 10,
                shared_by: 1,
            },
            hostbench_core::host::CacheInfo {
                level: 2,
                kind: "Unified".into(),
                size_bytes: 1 << 20,
                shared_by: 1,
            },
        ];
        let a = |block: u64| Advice {
            block,
            total: 1 << 30,
            threads: 1,
            global: true,
            oper: Oper::Write,
            rnd: false,
            footprint: block,
            quota: 1,
            host: Some(&h),
        };
        let w = advice(&a(1024));
        assert!(w[0].message.contains("L1 cache"), "{}", w[0].message);
        let w = advice(&a(512 << 10));
        assert!(w[0].message.contains("L2 cache"), "{}", w[0].message);
        assert!(advice(&a(64 << 20)).is_empty());
    }
}
