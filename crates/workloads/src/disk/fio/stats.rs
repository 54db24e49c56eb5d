//! fio's statistics, reimplemented from its documented behaviour: running min/max/mean and
//! variance (Welford; stddev over N−1) and the per-clone latency histogram in fio's buckets
//! (the bucket arithmetic lives in `hostbench_core::fio_hist`, shared with the report).

pub use hostbench_core::fio_hist::{
    PLAT_BITS, PLAT_GROUPS, PLAT_NR, PLAT_VAL, percentiles, plat_idx, plat_val,
};

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
    /// Touches every page of the histogram, so the first counts of a run take no page
    /// faults (fio's histograms are in memory it has touched before it reads its starting
    /// rusage; a zeroed allocation here is mapped lazily, and each new page of buckets
    /// would count as a minor fault of the job).
    pub fn prefault(&mut self) {
        const STEP: usize = 4096 / std::mem::size_of::<u64>();
        for i in (0..PLAT_NR).step_by(STEP) {
            let p: *mut u64 = &mut self.0[i];
            // SAFETY: an in-bounds element of our own array; the volatile read and write
            // of its own value keep the touch from being optimised away.
            unsafe { std::ptr::write_volatile(p, std::ptr::read_volatile(p)) };
        }
    }
    /// Total count.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
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

    /// The result's form (the smallest is 0 when there are no samples).
    pub fn to_fio(&self) -> hostbench_core::fio_result::FioStat {
        hostbench_core::fio_result::FioStat {
            n: self.n,
            min: self.min_or_zero(),
            max: self.max,
            mean: self.mean,
            m2: self.m2,
        }
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
        // Clones merge in the result's shape (group_reporting), exactly.
        let mut m = a.to_fio();
        m.merge(&b.to_fio());
        assert_eq!(m.n, all.n);
        assert!((m.mean - all.mean).abs() < 1e-9);
        assert!((m.stddev() - all.stddev()).abs() < 1e-6);
        assert_eq!((m.min, m.max), (all.min, all.max));
    }
}
