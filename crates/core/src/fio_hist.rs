//! fio's log-linear latency histogram, shared by the fio engine (which counts into it) and
//! the fio report layouts (which read percentiles and json+ `bins` from it).
//!
//! A value (ns) is grouped by its most significant bit and each group is split into 64
//! sub-buckets (6 bits below the MSB): values below 128 have a bucket each, the relative
//! error above is < 1/128, and 29 groups (1856 buckets) reach 2^34 ns; larger values land in
//! the last bucket. A percentile is the representative value (midpoint) of the first bucket
//! whose cumulative count reaches p/100 × N, as fio computes it.

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

/// fio's default `percentile_list`.
pub const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

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
        let mut bins = vec![0u64; PLAT_NR];
        bins[plat_idx(100)] = 90;
        bins[plat_idx(200)] = 10;
        let p = percentiles(&bins, 100, &PERCENTILES);
        assert_eq!(p[0], 100, "p1");
        assert_eq!(p[10], 100, "p90");
        assert_eq!(p[11], plat_val(plat_idx(200)), "p95");
        assert!(percentiles(&bins, 0, &PERCENTILES).is_empty());
    }
}
