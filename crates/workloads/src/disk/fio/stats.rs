//! fio's statistics, reimplemented from its documented behaviour: running min/max/mean and
//! variance (Welford; stddev over N−1) and the log-linear latency histogram fio reports
//! percentiles and json+ `bins` from.
//!
//! The histogram groups a value (ns) by its most significant bit and splits each group into
//! 64 sub-buckets (6 bits below the MSB): values below 128 have a bucket each, the relative
//! error above is < 1/128, and 29 groups (1856 buckets) reach 2^34 ns; larger values land
//! in the last bucket. A percentile is the representative value (midpoint) of the first
//! bucket whose cumulative count reaches p/100 × N, as fio computes it.

/// Sub-bucket bits per group.
pub const PLAT_BITS: u32 = 6;
/// Sub-buckets per group.
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// Groups.
pub const PLAT_GROUPS: usize = 29;
/// Buckets.
pub const PLAT_NR: usize = PLAT_GROUPS * PLAT_VAL as usize;

/// The bucket of value `v` (ns).
#[inline(always)]
pub fn plat_idx(v: u64) -> usize {
    let msb = if v == 0 { 0 } else { 63 - v.leading_zeros() };
    if msb <= PLAT_BITS {
        return v as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as u64) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (v >> error_bits);
    ((base + offset) as usize).min(PLAT_NR - 1)
}

/// The representative value (ns) of bucket `idx`: the value itself below 128, else the
/// middle of the bucket's range.
pub fn plat_val(idx: usize) -> u64 {
    let idx = idx as u64;
    if idx < (PLAT_VAL << 1) {
        return idx;
    }
    let error_bits = (idx >> PLAT_BITS) - 1;
    let base = 1u64 << (error_bits + PLAT_BITS as u64);
    let k = idx % PLAT_VAL;
    base + ((k as f64 + 0.5) * (1u64 << error_bits) as f64) as u64
}

/// A latency histogram in fio's buckets (heap-allocated once).
#[derive(Debug, Clone)]
pub struct Plat(pub Box<[u64; PLAT_NR]>);

impl Default for Plat {
    fn default() -> Self {
        Plat(Box::new([0; PLAT_NR]))
    }
}

impl Plat {
    /// Counts one value.
    #[inline(always)]
    pub fn add(&mut self, ns: u64) {
        self.0[plat_idx(ns)] += 1;
    }
    /// Adds every count of `o`.
    pub fn merge(&mut self, o: &Plat) {
        for (a, b) in self.0.iter_mut().zip(o.0.iter()) {
            *a += *b;
        }
    }
    /// Forgets everything.
    pub fn reset(&mut self) {
        self.0.fill(0);
    }
    /// Total count.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

/// The values (ns) at the sorted percentiles `plist` (0 < p ≤ 100) of a bucket array with
/// `n` samples, as fio computes them; empty when there are no samples.
pub fn percentiles(bins: &[u64], n: u64, plist: &[f64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(plist.len());
    if n == 0 || plist.is_empty() {
        return out;
    }
    let mut sum = 0u64;
    let mut j = 0;
    for (i, &c) in bins.iter().enumerate() {
        sum += c;
        while j < plist.len() && sum as f64 >= plist[j] / 100.0 * n as f64 {
            out.push(plat_val(i));
            j += 1;
        }
        if j == plist.len() {
            break;
        }
    }
    while out.len() < plist.len() {
        out.push(plat_val(bins.len().saturating_sub(1)));
    }
    out
}

/// Running min/max/mean/variance of one metric (Welford's update), as fio keeps them.
#[derive(Debug, Clone, Copy)]
pub struct RunStat {
    /// Samples.
    pub n: u64,
    /// Smallest (u64::MAX when empty).
    pub min: u64,
    /// Largest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// Sum of squared deviations from the mean.
    pub m2: f64,
}

impl Default for RunStat {
    fn default() -> Self {
        RunStat {
            n: 0,
            min: u64::MAX,
            max: 0,
            mean: 0.0,
            m2: 0.0,
        }
    }
}

impl RunStat {
    /// Adds one sample.
    #[inline(always)]
    pub fn add(&mut self, v: u64) {
        self.n += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let x = v as f64;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    /// Combines two sets of samples (Chan et al.'s parallel update).
    pub fn merge(&mut self, o: &RunStat) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        let n = (self.n + o.n) as f64;
        let d = o.mean - self.mean;
        self.mean += d * o.n as f64 / n;
        self.m2 += o.m2 + d * d * self.n as f64 * o.n as f64 / n;
        self.n += o.n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    /// Standard deviation over N−1 (0 for fewer than 2 samples), as fio prints it.
    pub fn stddev(&self) -> f64 {
        if self.n > 1 {
            (self.m2 / (self.n - 1) as f64).sqrt()
        } else {
            0.0
        }
    }

    /// Smallest, 0 when empty.
    pub fn min_or_zero(&self) -> u64 {
        if self.n == 0 { 0 } else { self.min }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_below_128_and_within_1_percent_above() {
        for v in 0..128u64 {
            assert_eq!(plat_val(plat_idx(v)), v);
        }
        for v in [128u64, 1000, 4096, 99_999, 1 << 20, 123_456_789, 1 << 33] {
            let r = plat_val(plat_idx(v)) as f64;
            assert!((r - v as f64).abs() / (v as f64) < 1.0 / 64.0, "{v} -> {r}");
        }
        assert_eq!(plat_idx(u64::MAX), PLAT_NR - 1);
        // Indices are monotone in the value.
        let mut last = 0;
        for v in (0..5_000_000u64).step_by(997) {
            let i = plat_idx(v);
            assert!(i >= last);
            last = i;
        }
    }

    #[test]
    fn percentiles_pick_the_first_bucket_reaching_the_rank() {
        let mut p = Plat::default();
        for v in 1..=100u64 {
            p.add(v);
        }
        let got = percentiles(&p.0[..], 100, &[1.0, 50.0, 99.0, 100.0]);
        assert_eq!(got, vec![1, 50, 99, 100]);
    }

    #[test]
    fn welford_matches_the_two_pass_formula_and_merges() {
        let xs: Vec<u64> = (0..1000).map(|i| (i * 7919 % 1000) + 10).collect();
        let mut a = RunStat::default();
        let mut b = RunStat::default();
        let mut all = RunStat::default();
        for (i, &x) in xs.iter().enumerate() {
            all.add(x);
            if i % 3 == 0 { a.add(x) } else { b.add(x) }
        }
        let mean = xs.iter().sum::<u64>() as f64 / xs.len() as f64;
        let var =
            xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64;
        assert!((all.mean - mean).abs() < 1e-9);
        assert!((all.stddev() - var.sqrt()).abs() < 1e-6);
        a.merge(&b);
        assert_eq!(a.n, all.n);
        assert!((a.mean - all.mean).abs() < 1e-9);
        assert!((a.stddev() - all.stddev()).abs() < 1e-6);
        assert_eq!((a.min, a.max), (all.min, all.max));
    }
}
