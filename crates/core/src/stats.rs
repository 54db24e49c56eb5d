//! Statistics for comparing repeated runs, after benchstat and criterion: the median with a
//! distribution-free confidence interval from order statistics, the Mann-Whitney U rank test
//! (exact for small samples, normal approximation with tie correction otherwise), the
//! geometric mean and the relative standard deviation.
//!
//! Invariants: every function takes samples in any order and gives the same answer for any
//! permutation of them; none panics: an empty or non-finite input gives `None` (the callers
//! drop non-finite values before they get here, see [`finite`]).

/// The finite values of `xs`, in order.
pub fn finite(xs: &[f64]) -> Vec<f64> {
    xs.iter().copied().filter(|x| x.is_finite()).collect()
}

fn sorted(xs: &[f64]) -> Option<Vec<f64>> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    Some(v)
}

/// The median (the mean of the middle two for an even count).
pub fn median(xs: &[f64]) -> Option<f64> {
    let v = sorted(xs)?;
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The median absolute deviation from the median (unscaled).
pub fn mad(xs: &[f64]) -> Option<f64> {
    let m = median(xs)?;
    let dev: Vec<f64> = finite(xs).iter().map(|x| (x - m).abs()).collect();
    median(&dev)
}

/// Iglewicz and Hoaglin's modified z-score of `x` in a sample of median `median` and
/// median absolute deviation `mad`: 0.6745 (x − median) / MAD; |z| > 3.5 is their outlier
/// rule. `None` when the MAD is 0 (half the sample or more is one value): the score is
/// then undefined, and a relative threshold has to judge.
pub fn robust_z(x: f64, median: f64, mad: f64) -> Option<f64> {
    (mad > 0.0 && mad.is_finite()).then(|| 0.6745 * (x - median) / mad)
}

/// The arithmetic mean.
pub fn mean(xs: &[f64]) -> Option<f64> {
    sorted(xs).map(|v| v.iter().sum::<f64>() / v.len() as f64)
}

/// The sample standard deviation (n − 1); `None` for fewer than two values.
pub fn stddev(xs: &[f64]) -> Option<f64> {
    let v = sorted(xs)?;
    if v.len() < 2 {
        return None;
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let ss: f64 = v.iter().map(|x| (x - m) * (x - m)).sum();
    Some((ss / (v.len() - 1) as f64).sqrt())
}

/// Sample standard deviation over the mean (the coefficient of variation, 0.02 = 2 %);
/// `None` for fewer than two values or a zero mean.
pub fn relative_stddev(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    let s = stddev(xs)?;
    (m != 0.0).then(|| s / m.abs())
}

/// The geometric mean of positive values; `None` if any value is zero, negative or not
/// finite (a geometric mean of such values means nothing).
pub fn geomean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite() || *x <= 0.0) {
        return None;
    }
    Some((xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

/// A confidence interval of a median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// The confidence the interval actually has (≥ the level asked for: order statistics
    /// give discrete levels).
    pub level: f64,
}

/// P(X ≤ k) for X ~ Binomial(n, 1/2).
fn binom_half_cdf(n: usize, k: usize) -> f64 {
    // Sum of C(n, i) / 2^n computed in logs to stay finite for large n.
    let ln2n = n as f64 * std::f64::consts::LN_2;
    let mut ln_c = 0.0; // ln C(n, 0)
    let mut total = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        total += (ln_c - ln2n).exp();
    }
    total.min(1.0)
}

/// The smallest sample size for which [`median_ci`] gives an interval at `level`.
pub fn min_samples_for_ci(level: f64) -> usize {
    (1..=64)
        .find(|&n| 1.0 - 2.0 * binom_half_cdf(n, 0) >= level)
        .unwrap_or(usize::MAX)
}

/// A distribution-free confidence interval of the median from order statistics (as
/// benchstat does): the interval `[x(k), x(n−k+1)]` of the sorted sample with the largest
/// `k` whose coverage `1 − 2·P(Binomial(n, ½) ≤ k − 1)` is at least `level`. `None` when even
/// the full range falls short of `level` (at 0.95, fewer than 6 values) or the input is empty.
pub fn median_ci(xs: &[f64], level: f64) -> Option<Interval> {
    let v = sorted(xs)?;
    let n = v.len();
    let coverage = |k: usize| 1.0 - 2.0 * binom_half_cdf(n, k - 1);
    if !(level > 0.0 && level < 1.0) || coverage(1) < level {
        return None;
    }
    let mut k = 1;
    while k < n.div_ceil(2) && coverage(k + 1) >= level {
        k += 1;
    }
    Some(Interval {
        lo: v[k - 1],
        hi: v[n - k],
        level: coverage(k),
    })
}

/// The outcome of a two-sided Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of the first sample: how many (a, b) pairs have a > b, ties counting ½.
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether `p` is exact (the permutation distribution of the rank sum, ties included)
    /// rather than the normal approximation.
    pub exact: bool,
}

/// Above this many values in total the normal approximation is used.
pub const EXACT_MAX_N: usize = 50;

/// Midranks (1-based) of `all`, and the tie-correction term Σ(t³ − t).
fn midranks(all: &[f64]) -> (Vec<f64>, f64) {
    let mut idx: Vec<usize> = (0..all.len()).collect();
    idx.sort_by(|&i, &j| all[i].total_cmp(&all[j]));
    let mut ranks = vec![0.0; all.len()];
    let mut ties = 0.0;
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && all[idx[j + 1]] == all[idx[i]] {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            ranks[k] = r;
        }
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    (ranks, ties)
}

/// The two-sided Mann-Whitney U (Wilcoxon rank-sum) test of `a` against `b`: is one
/// stochastically larger than the other? Exact — the rank sum's distribution over every
/// way to split the pooled midranks, which handles ties — when there are at most
/// [`EXACT_MAX_N`] values in total; otherwise the normal approximation with tie and
/// continuity corrections. `None` if a sample is empty or holds a non-finite value.
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let all: Vec<f64> = a.iter().chain(b).copied().collect();
    let (ranks, ties) = midranks(&all);
    let r1: f64 = ranks[..n1].iter().sum();
    let u = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let n = n1 + n2;
    if n <= EXACT_MAX_N {
        // Doubled midranks are integers; count the subsets of size n1 by their sum.
        let doubled: Vec<usize> = ranks.iter().map(|r| (r * 2.0).round() as usize).collect();
        let max_sum: usize = doubled.iter().sum();
        // ways[j][s]: subsets of j of the values seen so far whose doubled ranks sum to s.
        let mut ways = vec![vec![0f64; max_sum + 1]; n1 + 1];
        ways[0][0] = 1.0;
        let mut reach = 0; // largest sum any subset of the values seen so far can have
        for (i, &r) in doubled.iter().enumerate() {
            reach += r;
            for j in (1..=n1.min(i + 1)).rev() {
                let (lower, upper) = ways.split_at_mut(j);
                let (prev, cur) = (&lower[j - 1][..=reach - r], &mut upper[0][r..=reach]);
                for (c, p) in cur.iter_mut().zip(prev) {
                    *c += *p;
                }
            }
        }
        let dist = &ways[n1];
        let total: f64 = dist.iter().sum();
        let obs = (r1 * 2.0).round() as usize;
        let le: f64 = dist[..=obs.min(max_sum)].iter().sum();
        let ge: f64 = dist[obs.min(max_sum)..].iter().sum();
        let p = (2.0 * le.min(ge) / total).min(1.0);
        return Some(MannWhitney { u, p, exact: true });
    }
    let (f1, f2, nf) = (n1 as f64, n2 as f64, n as f64);
    let mu = f1 * f2 / 2.0;
    let var = f1 * f2 / 12.0 * ((nf + 1.0) - ties / (nf * (nf - 1.0)));
    if var <= 0.0 {
        return Some(MannWhitney {
            u,
            p: 1.0,
            exact: false,
        });
    }
    let z = ((u - mu).abs() - 0.5).max(0.0) / var.sqrt();
    Some(MannWhitney {
        u,
        p: erfc(z / std::f64::consts::SQRT_2).min(1.0),
        exact: false,
    })
}

/// The smallest two-sided p-value an exact Mann-Whitney test can give with samples of
/// `n1` and `n2` values (no ties): `2 / C(n1 + n2, n1)`. Below the significance level, the
/// test can find a difference; above it, no data could.
pub fn min_p_value(n1: usize, n2: usize) -> f64 {
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    let (k, n) = (n1.min(n2), n1 + n2);
    let mut c = 1.0f64;
    for i in 0..k {
        c = c * (n - i) as f64 / (i + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

/// Runs per side a two-sided Mann-Whitney test needs to find a relative difference `diff`
/// (0.05 = 5 %) between two machines whose runs spread by `rsd` (relative standard
/// deviation) with probability `power` at level `alpha`: the normal-approximation sample
/// size of a two-sample comparison, `2 (z(1-α/2) + z(power))² (rsd/diff)²`, times π/3 (the
/// rank test's efficiency against the t test on normal data is 3/π), and never fewer than
/// the exact test needs to be able to reach `alpha` at all. An estimate for planning, not a
/// promise: it assumes the spread seen so far is the spread to come. `None` without a
/// spread or a difference.
pub fn runs_needed(rsd: f64, diff: f64, alpha: f64, power: f64) -> Option<usize> {
    if !(rsd > 0.0 && rsd.is_finite() && diff > 0.0 && diff.is_finite()) {
        return None;
    }
    let z = |p: f64| normal_quantile(p);
    let n = 2.0
        * (z(1.0 - alpha / 2.0) + z(power)).powi(2)
        * (rsd / diff).powi(2)
        * std::f64::consts::PI
        / 3.0;
    let floor = (2..=64).find(|&k| min_p_value(k, k) < alpha).unwrap_or(64);
    Some((n.ceil() as usize).max(floor))
}

/// The standard normal quantile (inverse CDF), by bisection on [`erfc`] (to 1e-9; called a
/// few times per comparison).
pub fn normal_quantile(p: f64) -> f64 {
    let p = p.clamp(1e-12, 1.0 - 1e-12);
    let (mut lo, mut hi) = (-10.0f64, 10.0f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        // CDF(x) = erfc(-x/√2)/2.
        if 0.5 * erfc(-mid / std::f64::consts::SQRT_2) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The complementary error function, to about 1e-7 relative (Numerical Recipes' erfcc,
/// Chebyshev fit).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn runs_needed_follows_the_sample_size_formula() {
        assert!((normal_quantile(0.975) - 1.959964).abs() < 1e-5);
        assert!((normal_quantile(0.8) - 0.841621).abs() < 1e-5);
        // 2 (1.96 + 0.84)² (0.05/0.05)² π/3 = 16.4 → 17 runs per side.
        assert_eq!(runs_needed(0.05, 0.05, 0.05, 0.8), Some(17));
        // Half the spread: a quarter of the runs (4.1 → 5), never under the exact test's 4.
        assert_eq!(runs_needed(0.025, 0.05, 0.05, 0.8), Some(5));
        assert_eq!(runs_needed(0.001, 0.05, 0.05, 0.8), Some(4));
        assert_eq!(runs_needed(0.0, 0.05, 0.05, 0.8), None);
        assert_eq!(runs_needed(0.05, 0.0, 0.05, 0.8), None);
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-12)
    }

    #[test]
    fn summaries() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        // Sample stddev of 2,4,4,4,5,5,7,9 is sqrt(32/7).
        let s = stddev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!(close(s, (32.0f64 / 7.0).sqrt(), 1e-12), "{s}");
        assert_eq!(stddev(&[1.0]), None);
        assert!(close(
            relative_stddev(&[9.0, 11.0]).unwrap(),
            2f64.sqrt() / 10.0,
            1e-12
        ));
        assert_eq!(relative_stddev(&[-1.0, 1.0]), None);
        assert!(close(geomean(&[1.0, 4.0]).unwrap(), 2.0, 1e-12));
        assert!(close(geomean(&[0.5, 2.0, 8.0]).unwrap(), 2.0, 1e-12));
        assert_eq!(geomean(&[1.0, 0.0]), None);
        assert_eq!(geomean(&[]), None);
        assert_eq!(finite(&[1.0, f64::INFINITY, 2.0]), vec![1.0, 2.0]);
    }

    #[test]
    fn erfc_matches_known_values() {
        for (x, want) in [
            (0.0, 1.0),
            (0.5, 0.479_500_122_186_953_5),
            (1.0, 0.157_299_207_050_285_13),
            (2.0, 0.004_677_734_981_047_266),
            (-1.0, 1.842_700_792_949_715),
        ] {
            assert!(close(erfc(x), want, 2e-7), "erfc({x}) = {}", erfc(x));
        }
    }

    #[test]
    fn median_ci_uses_order_statistics() {
        // 5 values cannot give 95 %: the full range covers 1 - 2/32 = 93.75 %.
        assert_eq!(median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95), None);
        assert_eq!(min_samples_for_ci(0.95), 6);
        let six = median_ci(&[6.0, 1.0, 5.0, 2.0, 4.0, 3.0], 0.95).unwrap();
        assert_eq!((six.lo, six.hi), (1.0, 6.0));
        assert!(close(six.level, 1.0 - 2.0 / 64.0, 1e-12));
        // n = 10: [x(2), x(9)] covers 1 - 2·11/1024 = 97.85 %; [x(3), x(8)] only 89 %.
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        let ci = median_ci(&ten, 0.95).unwrap();
        assert_eq!((ci.lo, ci.hi), (2.0, 9.0));
        assert!(close(ci.level, 1.0 - 2.0 * 11.0 / 1024.0, 1e-12));
        // n = 20: [x(6), x(15)], as tables of the sign test give.
        let twenty: Vec<f64> = (1..=20).map(f64::from).collect();
        let ci = median_ci(&twenty, 0.95).unwrap();
        assert_eq!((ci.lo, ci.hi), (6.0, 15.0));
        assert_eq!(median_ci(&ten, 1.0), None);
    }

    #[test]
    fn mann_whitney_exact_small_samples() {
        // Complete separation of 4 and 4: p = 2/70.
        let a = [1.0, 2.0, 3.0, 4.0];
        let b = [5.0, 6.0, 7.0, 8.0];
        let t = mann_whitney_u(&a, &b).unwrap();
        assert!(t.exact);
        assert_eq!(t.u, 0.0);
        assert!(close(t.p, 2.0 / 70.0, 1e-12), "{}", t.p);
        assert!(close(min_p_value(4, 4), 2.0 / 70.0, 1e-12));
        let back = mann_whitney_u(&b, &a).unwrap();
        assert_eq!(back.u, 16.0);
        assert!(close(back.p, t.p, 1e-12));
        // 3 against 3 can never reach 0.05.
        assert!(min_p_value(3, 3) > 0.05);
        // Known value: a = {1,3,5}, b = {2,4,6,7}: U = 3, P(U ≤ 3) = 7/35, p = 0.4.
        let t = mann_whitney_u(&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0, 7.0]).unwrap();
        assert_eq!(t.u, 3.0);
        assert!(close(t.p, 0.4, 1e-12), "{}", t.p);
    }

    #[test]
    fn mann_whitney_ties_and_identical() {
        let t = mann_whitney_u(&[5.0; 6], &[5.0; 6]).unwrap();
        assert_eq!(t.p, 1.0);
        let big = vec![5.0; 40];
        let t = mann_whitney_u(&big, &big).unwrap();
        assert!(!t.exact);
        assert_eq!(t.p, 1.0);
        // Ties across samples: still a valid probability, and symmetric.
        let a = [1.0, 2.0, 2.0, 3.0, 3.0];
        let b = [2.0, 3.0, 3.0, 4.0, 4.0];
        let ab = mann_whitney_u(&a, &b).unwrap();
        let ba = mann_whitney_u(&b, &a).unwrap();
        assert!(ab.p > 0.0 && ab.p <= 1.0);
        assert!(close(ab.p, ba.p, 1e-12));
        assert_eq!(ab.u + ba.u, 25.0);
        assert_eq!(mann_whitney_u(&[], &[1.0]), None);
    }

    #[test]
    fn exact_and_normal_agree_on_moderate_samples() {
        // 25 + 25 values, interleaved with an offset: both methods should be close.
        let a: Vec<f64> = (0..25).map(|i| f64::from(i) * 2.0).collect();
        let b: Vec<f64> = (0..25).map(|i| f64::from(i) * 2.0 + 9.0).collect();
        let exact = mann_whitney_u(&a, &b).unwrap();
        assert!(exact.exact);
        let mut a2 = a.clone();
        a2.push(-1.0);
        let mut b2 = b.clone();
        b2.push(100.0);
        let normal = mann_whitney_u(&a2, &b2).unwrap();
        assert!(!normal.exact);
        assert!(exact.p < 0.05 && normal.p < 0.05, "{exact:?} {normal:?}");
        assert!(exact.p > 1e-6 && normal.p > 1e-6);
    }

    fn sample() -> impl Strategy<Value = Vec<f64>> {
        proptest::collection::vec(1.0f64..1000.0, 1..30)
    }

    proptest! {
        #[test]
        fn identical_samples_show_no_difference(xs in sample()) {
            let t = mann_whitney_u(&xs, &xs).unwrap();
            prop_assert!(t.p > 0.9, "p = {}", t.p);
            prop_assert!((t.u - (xs.len() * xs.len()) as f64 / 2.0).abs() < 1e-9);
        }

        #[test]
        fn a_2x_shift_is_found(xs in proptest::collection::vec(100.0f64..150.0, 5..40)) {
            // Every value of the second sample is above every value of the first.
            let ys: Vec<f64> = xs.iter().map(|x| x * 2.0).collect();
            let t = mann_whitney_u(&xs, &ys).unwrap();
            prop_assert!(t.p < 0.05, "p = {} for n = {}", t.p, xs.len());
            let ratio = median(&ys).unwrap() / median(&xs).unwrap();
            prop_assert!((ratio - 2.0).abs() < 1e-9);
        }

        #[test]
        fn permutation_invariance(xs in sample(), ys in sample(), seed in any::<u64>()) {
            let mut px = xs.clone();
            let mut py = ys.clone();
            // A deterministic shuffle from the seed.
            let mut s = seed;
            for v in [&mut px, &mut py] {
                for i in (1..v.len()).rev() {
                    let j = (crate::rand::splitmix64(&mut s) % (i as u64 + 1)) as usize;
                    v.swap(i, j);
                }
            }
            prop_assert_eq!(median(&xs), median(&px));
            prop_assert_eq!(median_ci(&xs, 0.95), median_ci(&px, 0.95));
            let a = mann_whitney_u(&xs, &ys).unwrap();
            let b = mann_whitney_u(&px, &py).unwrap();
            prop_assert!((a.p - b.p).abs() < 1e-12 && (a.u - b.u).abs() < 1e-9);
            prop_assert!(a.p >= 0.0 && a.p <= 1.0);
            // Swapping the samples keeps p and mirrors U.
            let c = mann_whitney_u(&ys, &xs).unwrap();
            prop_assert!((a.p - c.p).abs() < 1e-9);
            prop_assert!((a.u + c.u - (xs.len() * ys.len()) as f64).abs() < 1e-9);
        }

        #[test]
        fn ci_contains_the_median(xs in sample()) {
            if let Some(ci) = median_ci(&xs, 0.95) {
                let m = median(&xs).unwrap();
                prop_assert!(ci.lo <= m && m <= ci.hi);
                prop_assert!(ci.level >= 0.95);
            } else {
                prop_assert!(xs.len() < 6);
            }
        }
    }

    #[test]
    fn robust_z_flags_the_one_slow_host() {
        let xs = [1000.0, 1010.0, 990.0, 1005.0, 200.0];
        let m = median(&xs).unwrap();
        let d = mad(&xs).unwrap();
        assert_eq!((m, d), (1000.0, 10.0));
        let z = robust_z(200.0, m, d).unwrap();
        assert!((z - (-53.96)).abs() < 0.01, "{z}");
        assert!(robust_z(1005.0, m, d).unwrap().abs() < 3.5);
        assert_eq!(robust_z(5.0, 5.0, 0.0), None);
    }
}
