//! The measuring worker: the 2 MiB aligned chain buffer (huge pages or not, as asked), the
//! untimed warm walk, and the timed chunks of dependent loads, one runner event each.

use super::ladder::{Config, sattolo, size_label};
use super::{
    CHUNK_CLOCK_READS, CHUNK_MAX_NS, CHUNKS_PER_MIN_TIME, Cut, HUGE_PAGE, Measured, State, UNROLL,
    WARM_SLICE,
};
use hostbench_core::clock::measure_read_cost;
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counter;
use hostbench_core::runner::RunControl;
use hostbench_core::workload::*;
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

pub(super) struct MemlatWorker {
    pub(super) cfg: Arc<Config>,
    pub(super) state: Arc<Mutex<State>>,
    pub(super) rng: Rng,
    /// The chain's final position, kept so the chase stays observable.
    pub(super) sink: *const u8,
}

// SAFETY: `sink` is never dereferenced; it only keeps the chase's result alive.
unsafe impl Send for MemlatWorker {}

/// An idle worker for threads beyond the first.
pub(super) struct Idle;

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
                WorkloadError::usage(format!(
                    "a buffer of {} cannot be laid out",
                    size_label(len)
                ))
            })?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc(layout) }).ok_or_else(|| {
            WorkloadError::environment(format!(
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
            WorkloadError::environment(format!(
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
