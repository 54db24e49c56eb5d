//! STREAM's four kernels: the scalar definition (what validation replays) and the explicit
//! SIMD implementations (SSE2, AVX, AVX-512 on x86_64; portable loops elsewhere), with
//! regular or non-temporal stores.

use super::SCALAR;
use hostbench_core::workload::WorkloadError;

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
    pub(super) fn operands(self) -> (usize, usize, usize) {
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
                other => Err(WorkloadError::environment(format!(
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
            other => Err(WorkloadError::environment(format!(
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::memory::stream::arrays::Arrays;
    use crate::memory::stream::validation::{ErrorSums, Validation, expected};

    /// Runs the kernels single-threaded over small arrays, as the workers do.
    pub(crate) fn run_kernels(isa: Isa, nt: bool, n: usize, offset: usize, iters: u64) -> Arrays {
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
}
