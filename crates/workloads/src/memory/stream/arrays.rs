//! The three arrays (one allocation, transparent huge pages on request, never touched
//! before the threads first-touch their chunks) and the static partition that gives each
//! thread its chunk.

use super::BYTES_PER_ELEMENT;
use super::size::mib;
use hostbench_core::workload::WorkloadError;
use std::alloc::Layout;
use std::ops::Range;

/// The three arrays in one allocation laid out as stream.c's static arrays are:
/// `a[N+OFFSET]`, `b[N+OFFSET]`, `c[N+OFFSET]`, back to back, never touched here.
pub(super) struct Arrays {
    base: *mut f64,
    layout: Layout,
    pub(super) n: usize,
    stride: usize,
    pub(super) huge_pages: bool,
}

// SAFETY: the arrays are plain memory; which thread touches which element is governed by
// the partition and the barrier (see the `stream` module docs).
unsafe impl Send for Arrays {}
// SAFETY: as above.
unsafe impl Sync for Arrays {}

const HUGE_PAGE: usize = 2 << 20;

impl Arrays {
    pub(super) fn new(n: usize, offset: usize, huge_pages: bool) -> Result<Arrays, WorkloadError> {
        let stride = n
            .checked_add(offset)
            .ok_or_else(|| WorkloadError::usage("array size overflows"))?;
        let bytes = stride
            .checked_mul(3 * BYTES_PER_ELEMENT as usize)
            .ok_or_else(|| WorkloadError::usage("array size overflows"))?;
        let layout = Layout::from_size_align(bytes.max(1), HUGE_PAGE)
            .map_err(|e| WorkloadError::usage(format!("cannot lay out {bytes} bytes: {e}")))?;
        // SAFETY: the layout has a non-zero size. `alloc` (not `alloc_zeroed`) leaves the
        // pages untouched, so the threads that use them fault them in.
        let base = unsafe { std::alloc::alloc(layout) } as *mut f64;
        if base.is_null() {
            return Err(WorkloadError::environment(format!(
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
    pub(super) fn abc(&self) -> [*mut f64; 3] {
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
    pub(super) fn slices(&mut self) -> [&mut [f64]; 3] {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
