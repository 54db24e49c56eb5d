//! STREAM's validation: the expected values of a, b and c replayed from the scalar
//! recurrence, the per-thread error sums, and the verdict against [`EPSILON`].

use super::EPSILON;
use super::kernels::Kernel;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::stream::kernels::Isa;
    use crate::memory::stream::kernels::tests::run_kernels;

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
}
