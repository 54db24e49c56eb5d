//! Random numbers: a per-thread xoroshiro128+ generator and sysbench's `--rand-type`
//! distributions.
//!
//! Unlike sysbench (which seeds every thread from the shared libc `random()` stream, so
//! `--rand-seed` does not make runs repeatable, sysbench #524), each thread's state here is
//! derived from `(seed, thread index)` alone with splitmix64, and nothing else (reporters,
//! the rate generator) draws from a worker's stream. The same seed and thread count give
//! the same sequences on every run.
//!
//! Distribution semantics follow sysbench 1.0.20 (`special` included, with its hot spot),
//! plus `zipfian` from sysbench master; `gaussian` works (it is broken on master).

use serde::{Deserialize, Serialize};

/// xoroshiro128+ — the generator sysbench uses; fast and good enough for workload choices.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 2],
}

/// One step of splitmix64: seeds streams and derives ids from a single 64-bit value.
pub(crate) fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// The stream of thread `tid` for run seed `seed`.
    pub fn for_thread(seed: u64, tid: u64) -> Rng {
        let mut x = seed ^ tid.wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03);
        let mut s = [splitmix64(&mut x), splitmix64(&mut x)];
        if s == [0, 0] {
            s[0] = 1;
        }
        Rng { s }
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let [s0, mut s1] = self.s;
        let r = s0.wrapping_add(s1);
        s1 ^= s0;
        self.s[0] = s0.rotate_left(24) ^ s1 ^ (s1 << 16);
        self.s[1] = s1.rotate_left(37);
        r
    }

    /// Uniform double in [0, 1) from the top 52 bits (as sysbench does).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        f64::from_bits(0x3FF0_0000_0000_0000 | (self.next_u64() >> 12)) - 1.0
    }

    /// Uniform integer in [a, b] (`a + floor(u·(b−a+1))`).
    #[inline]
    pub fn uniform(&mut self, a: u64, b: u64) -> u64 {
        a + (self.next_f64() * (b - a + 1) as f64) as u64
    }
}

/// A seed from the current time, for runs where the user gave none (recorded in the result
/// so that the run can be replayed); below 2^53 ([`MAX_SEED`]).
pub fn time_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let mut x = t ^ u64::from(std::process::id()).rotate_left(32);
    (splitmix64(&mut x) & MAX_SEED).max(1)
}

/// The largest seed: 2^53 − 1, the largest integer a JSON reader that keeps numbers as
/// doubles (jq, JavaScript) reads back exactly, so a seed copied from a result replays the
/// run.
pub const MAX_SEED: u64 = (1 << 53) - 1;

/// `--rand-type` and its tuning options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Distribution {
    /// Every value equally likely.
    Uniform,
    /// Mean of `iter` uniform draws: approximately normal, centred.
    Gaussian {
        /// `--rand-spec-iter` (12).
        iter: u32,
    },
    /// sysbench 1.0.20's default: `res`% of draws in a window of `pct`% of the range around
    /// its middle, the rest gaussian. A deliberate hot spot.
    Special {
        /// `--rand-spec-iter` (12).
        iter: u32,
        /// `--rand-spec-pct` (1).
        pct: f64,
        /// `--rand-spec-res` (75).
        res: f64,
    },
    /// `a + (b−a+1)·u^(ln h / ln(1−h))`.
    Pareto {
        /// `--rand-pareto-h` (0.2).
        h: f64,
    },
    /// P(k) ∝ k^−exp over [1, n], rejection-inversion sampling.
    Zipfian {
        /// `--rand-zipfian-exp` (0.8).
        exp: f64,
    },
}

impl Distribution {
    /// The names accepted by `--rand-type`.
    pub const NAMES: &'static [&'static str] =
        &["uniform", "gaussian", "special", "pareto", "zipfian"];

    /// Builds a distribution from its name and sysbench's tuning values.
    pub fn from_name(name: &str, iter: u32, pct: f64, res: f64, h: f64, exp: f64) -> Option<Self> {
        Some(match name {
            "uniform" => Distribution::Uniform,
            "gaussian" => Distribution::Gaussian { iter: iter.max(1) },
            "special" => Distribution::Special {
                iter: iter.max(1),
                pct,
                res,
            },
            "pareto" => Distribution::Pareto { h },
            "zipfian" => Distribution::Zipfian { exp },
            _ => return None,
        })
    }

    /// The name as `--rand-type` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Gaussian { .. } => "gaussian",
            Distribution::Special { .. } => "special",
            Distribution::Pareto { .. } => "pareto",
            Distribution::Zipfian { .. } => "zipfian",
        }
    }

    /// One value in [a, b] (inclusive, either order), without keeping a [`Sampler`]: for
    /// callers that draw from a different range each time (sysbench's Lua `sb_rand_*`).
    /// The same values as `self.sampler(a, b).sample(rng)`.
    #[inline]
    pub fn sample_once(&self, a: u64, b: u64, rng: &mut Rng) -> u64 {
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        match *self {
            Distribution::Zipfian { exp } => {
                let z = Zipf::new((b - a + 1) as f64, exp);
                sample_in(*self, a, b, Some(&z), rng)
            }
            d => sample_in(d, a, b, None, rng),
        }
    }

    /// A sampler for values in [a, b] (inclusive). Precomputes what the distribution needs.
    pub fn sampler(&self, a: u64, b: u64) -> Sampler {
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        let zipf = match *self {
            Distribution::Zipfian { exp } => Some(Zipf::new((b - a + 1) as f64, exp)),
            _ => None,
        };
        Sampler {
            dist: *self,
            a,
            b,
            zipf,
        }
    }
}

/// Draws values in a fixed range from a [`Distribution`].
#[derive(Debug, Clone)]
pub struct Sampler {
    dist: Distribution,
    a: u64,
    b: u64,
    zipf: Option<Zipf>,
}

impl Sampler {
    /// One value in [a, b].
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        sample_in(self.dist, self.a, self.b, self.zipf.as_ref(), rng)
    }
}

/// One value of `dist` in [a, b] (a <= b); `zipf` is the Zipfian's precomputed state.
#[inline]
fn sample_in(dist: Distribution, a: u64, b: u64, zipf: Option<&Zipf>, rng: &mut Rng) -> u64 {
    let n = (b - a + 1) as f64;
    let v = match dist {
        Distribution::Uniform => a + (rng.next_f64() * n) as u64,
        Distribution::Gaussian { iter } => {
            let sum: f64 = (0..iter).map(|_| rng.next_f64() * n).sum();
            a + (sum / iter as f64) as u64
        }
        Distribution::Special { iter, pct, res } => {
            // Over a stretched range t·100/(100−res): the first t go gaussian, the rest
            // (res%) land in a pct% window centred on the middle of [a, b].
            let t = (b - a) as f64;
            let stretch = (100.0 / (100.0 - res)).floor().max(1.0);
            let u = rng.next_f64();
            if u * t * stretch < t {
                let sum: f64 = (0..iter).map(|_| rng.next_f64()).sum();
                a + (sum * t / iter as f64) as u64
            } else {
                let w = t * pct / 100.0;
                a + (u * (w + 1.0) + t / 2.0 - t * pct / 200.0) as u64
            }
        }
        Distribution::Pareto { h } => {
            let power = h.ln() / (1.0 - h).ln();
            a + (n * rng.next_f64().powf(power)) as u64
        }
        Distribution::Zipfian { .. } => {
            let z = zipf.expect("zipf state is built with the sampler");
            a + z.sample(rng) - 1
        }
    };
    v.min(b)
}

/// Hörmann & Derflinger's rejection-inversion sampler for a bounded Zipf distribution
/// ("Rejection-inversion to generate variates from monotone discrete distributions",
/// ACM TOMACS 6.3, 1996), in the form that works for every positive exponent.
#[derive(Debug, Clone)]
struct Zipf {
    n: f64,
    e: f64,
    h_x1: f64,
    h_n: f64,
    s: f64,
}

impl Zipf {
    fn new(n: f64, e: f64) -> Zipf {
        let h_x1 = Self::h_integral(1.5, e) - 1.0;
        let h_n = Self::h_integral(n + 0.5, e);
        let s = 2.0 - Self::h_integral_inv(Self::h_integral(2.5, e) - Self::h(2.0, e), e);
        Zipf { n, e, h_x1, h_n, s }
    }

    fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.next_f64() * (self.h_x1 - self.h_n);
            let x = Self::h_integral_inv(u, self.e);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= Self::h_integral(k + 0.5, self.e) - Self::h(k, self.e) {
                return k as u64;
            }
        }
    }

    /// H(x) = (x^(1−e) − 1)/(1−e), or ln x when e = 1.
    fn h_integral(x: f64, e: f64) -> f64 {
        let lx = x.ln();
        expm1_over_x((1.0 - e) * lx) * lx
    }

    /// h(x) = x^−e.
    fn h(x: f64, e: f64) -> f64 {
        (-e * x.ln()).exp()
    }

    fn h_integral_inv(x: f64, e: f64) -> f64 {
        let t = (x * (1.0 - e)).max(-1.0);
        (ln1p_over_x(t) * x).exp()
    }
}

fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(d: Distribution, a: u64, b: u64, n: usize) -> Vec<usize> {
        let s = d.sampler(a, b);
        let mut rng = Rng::for_thread(42, 0);
        let mut c = vec![0; (b - a + 1) as usize];
        for _ in 0..n {
            let v = s.sample(&mut rng);
            assert!((a..=b).contains(&v), "{v} outside [{a}, {b}]");
            c[(v - a) as usize] += 1;
        }
        c
    }

    #[test]
    fn streams_are_repeatable_and_distinct_per_thread() {
        let draw = |seed, tid| {
            let mut r = Rng::for_thread(seed, tid);
            (0..4).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(7, 0), draw(7, 0));
        assert_ne!(draw(7, 0), draw(7, 1));
        assert_ne!(draw(7, 0), draw(8, 0));
    }

    #[test]
    fn uniform_is_flat() {
        let c = counts(Distribution::Uniform, 1, 10, 100_000);
        for x in c {
            assert!((9_000..11_000).contains(&x), "{x}");
        }
    }

    #[test]
    fn gaussian_is_centred_and_not_degenerate() {
        let c = counts(Distribution::Gaussian { iter: 12 }, 1, 100, 100_000);
        let mid: usize = c[40..60].iter().sum();
        assert!(mid > 50_000, "middle fifth holds {mid}");
        assert!(
            c[0] < 100,
            "sysbench master's bug returns only `a`; we must not"
        );
    }

    #[test]
    fn special_has_its_hot_spot() {
        let c = counts(
            Distribution::Special {
                iter: 12,
                pct: 1.0,
                res: 75.0,
            },
            1,
            100,
            100_000,
        );
        let hot = c[49] + c[50];
        assert!((70_000..80_000).contains(&hot), "hot spot {hot}");
    }

    #[test]
    fn pareto_skews_to_low_values() {
        let c = counts(Distribution::Pareto { h: 0.2 }, 1, 100, 100_000);
        let low: usize = c[..20].iter().sum();
        assert!(low > 60_000, "{low}");
    }

    #[test]
    fn zipfian_follows_its_law() {
        let c = counts(Distribution::Zipfian { exp: 0.8 }, 1, 1000, 400_000);
        // P(1)/P(2) = 2^0.8 ≈ 1.74; P(1)/P(10) = 10^0.8 ≈ 6.3
        let r12 = c[0] as f64 / c[1] as f64;
        let r110 = c[0] as f64 / c[9] as f64;
        assert!((1.6..1.9).contains(&r12), "{r12}");
        assert!((5.5..7.2).contains(&r110), "{r110}");
    }

    #[test]
    fn sample_once_draws_what_a_sampler_draws() {
        for d in [
            Distribution::Uniform,
            Distribution::Gaussian { iter: 12 },
            Distribution::Special {
                iter: 12,
                pct: 1.0,
                res: 75.0,
            },
            Distribution::Pareto { h: 0.2 },
            Distribution::Zipfian { exp: 0.8 },
        ] {
            let (mut r1, mut r2) = (Rng::for_thread(7, 3), Rng::for_thread(7, 3));
            for (a, b) in [(1u64, 100u64), (5, 5), (1000, 10), (0, 1 << 32)] {
                let s = d.sampler(a, b);
                for _ in 0..200 {
                    assert_eq!(
                        d.sample_once(a, b, &mut r1),
                        s.sample(&mut r2),
                        "{d:?} {a} {b}"
                    );
                }
            }
        }
        // `Rng::uniform` (sysbench Lua's sb_rand_uniform) is the uniform distribution's draw.
        let (mut r1, mut r2) = (Rng::for_thread(9, 1), Rng::for_thread(9, 1));
        for (a, b) in [(1u64, 100u64), (7, 7), (0, u64::from(u32::MAX))] {
            for _ in 0..1000 {
                assert_eq!(
                    r1.uniform(a, b),
                    Distribution::Uniform.sample_once(a, b, &mut r2)
                );
            }
        }
    }

    #[test]
    fn next_f64_in_unit_interval() {
        let mut r = Rng::for_thread(1, 1);
        for _ in 0..10_000 {
            let u = r.next_f64();
            assert!((0.0..1.0).contains(&u));
        }
    }
}
