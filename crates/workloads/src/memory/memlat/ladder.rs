//! The ladder of working-set sizes and what decides it: the options checked against each
//! other and the host ([`Config`]), the automatic largest size from the last-level cache and
//! MemAvailable, the sizes themselves, and Sattolo's single random cycle the chain follows.

use super::{AUTO_LLC_FACTOR, AUTO_MEMORY_SHARE, FALLBACK_MAX_SIZE, HUGE_PAGE, LLC_PER_CPU_CAP};
use hostbench_core::host::HostInfo;
use hostbench_core::params::Params;
use hostbench_core::rand::Rng;
use hostbench_core::workload::*;

/// How the largest size was chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxChoice {
    /// The max size before rounding to whole lines, bytes.
    pub bytes: u64,
    /// True when hostbench chose it.
    pub auto: bool,
    /// The last-level cache the host reports: (level, bytes, logical CPUs sharing it).
    pub llc: Option<(u32, u64, u32)>,
    /// The last-level cache size the automatic choice used, bytes.
    pub llc_assumed: Option<u64>,
    /// Why the automatic choice differs from `AUTO_LLC_FACTOR × reported LLC`, if it does.
    pub note: Option<String>,
}

/// A checked `memlat` configuration: what the worker will do.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Bytes per chain slot.
    pub line: u64,
    /// Ladder points per doubling.
    pub steps: u32,
    /// Working-set sizes, bytes, ascending.
    pub sizes: Vec<u64>,
    /// madvise(MADV_HUGEPAGE) rather than MADV_NOHUGEPAGE.
    pub huge_pages: bool,
    /// Timed seconds per size, at least.
    pub min_time_s: f64,
    /// Timed loads per size, at least.
    pub min_loads: u64,
    /// How the max size was chosen.
    pub max: MaxChoice,
    /// Transparent-huge-page mode of the host (`always`, `madvise`, `never`), if known.
    pub thp: Option<String>,
}
/// A size in binary units, exact to two decimals: `4 KiB`, `1.5 MiB`, `5.33 KiB`, `100 B`.
pub fn size_label(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut i = 0;
    while i + 1 < UNITS.len() && bytes >= 1u64 << (10 * (i + 1)) {
        i += 1;
    }
    let v = bytes as f64 / (1u64 << (10 * i)) as f64;
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} {}", UNITS[i])
}

/// The ladder: `min`, every point `2^k × (1 + j/steps)` strictly between, and `max`, each
/// rounded down to whole `line`s, strictly increasing. Points of that form land on real
/// cache sizes (48 KiB = 1.5 × 32 KiB, 1.25 MiB, 3 MiB), which geometric `2^(k/steps)`
/// points never do. Requires `line ≤ min ≤ max` and `steps ≥ 1`.
pub fn ladder(min: u64, max: u64, steps: u32, line: u64) -> Vec<u64> {
    let down = |x: u64| x / line * line;
    let (lo, hi) = (down(min), down(max));
    let steps = u64::from(steps.max(1));
    let mut out = vec![lo];
    let mut k = 63 - lo.leading_zeros();
    while k < 63 && 1u64 << k <= hi {
        let base = 1u64 << k;
        for j in 0..steps {
            // base × (steps + j) / steps without overflow for any base ≤ 2^62.
            let p = down(base / steps * (steps + j) + base % steps * (steps + j) / steps);
            if p > *out.last().unwrap_or(&0) && p < hi {
                out.push(p);
            }
        }
        k += 1;
    }
    if hi > *out.last().unwrap_or(&0) {
        out.push(hi);
    }
    out
}

/// Uniform integer in `[0, bound)` (multiply-shift; bias below 2^-32 for bounds < 2^32).
#[inline]
fn below(rng: &mut Rng, bound: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(bound)) >> 64) as u64
}

/// Fills `next` with a uniformly random cyclic permutation (Sattolo's algorithm): starting
/// anywhere and following `i → next[i]` visits every slot exactly once before returning.
pub fn sattolo(next: &mut [u32], rng: &mut Rng) {
    for (i, v) in next.iter_mut().enumerate() {
        *v = i as u32;
    }
    let mut i = next.len();
    while i > 1 {
        i -= 1;
        // j < i strictly: that is what makes the result one cycle (Fisher–Yates allows j = i).
        let j = below(rng, i as u64) as usize;
        next.swap(i, j);
    }
}

/// The last-level cache the host reports: (level, bytes, sharing CPUs).
fn last_level_cache(host: &HostInfo) -> Option<(u32, u64, u32)> {
    crate::memory::last_level_cache(host).map(|c| (c.level, c.size_bytes, c.shared_by))
}

/// Bytes the worker allocates for a ladder up to `max`: the buffer (whole huge pages) and
/// the 4-byte-per-line index Sattolo's algorithm shuffles.
pub fn memory_needed(max: u64, line: u64) -> u64 {
    max.div_ceil(HUGE_PAGE)
        .saturating_mul(HUGE_PAGE)
        .saturating_add(max / line * 4)
}

fn auto_max(host: Option<&HostInfo>, min: u64) -> MaxChoice {
    let llc = host.and_then(last_level_cache);
    let mut notes = Vec::new();
    let (mut bytes, llc_assumed) = match llc {
        Some((level, size, shared)) => {
            let cap = LLC_PER_CPU_CAP.saturating_mul(u64::from(shared.max(1)));
            let assumed = size.min(cap);
            if assumed < size {
                notes.push(format!(
                    "the host reports an L{level} of {} shared by {} CPU(s), more than any \
                     part gives {} CPU(s) (a VM seeing the host socket's cache?), so it was \
                     counted as {}",
                    size_label(size),
                    shared.max(1),
                    shared.max(1),
                    size_label(assumed)
                ));
            }
            (assumed.saturating_mul(AUTO_LLC_FACTOR), Some(assumed))
        }
        None => {
            notes.push(format!(
                "the host's cache sizes are unknown, so the ladder goes to {}",
                size_label(FALLBACK_MAX_SIZE)
            ));
            (FALLBACK_MAX_SIZE, None)
        }
    };
    let avail = host.map_or(0, |h| h.memory.available_bytes);
    if avail > 0 && bytes > avail / AUTO_MEMORY_SHARE {
        bytes = avail / AUTO_MEMORY_SHARE;
        notes.push(format!(
            "it was cut to {} (1/{AUTO_MEMORY_SHARE} of the {} available)",
            size_label(bytes),
            size_label(avail)
        ));
    }
    if bytes < min {
        notes.push(format!("it was raised to the min size {}", size_label(min)));
        bytes = min;
    }
    MaxChoice {
        bytes,
        auto: true,
        llc,
        llc_assumed,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

impl Config {
    /// Checks `params` against each other and the host, and plans the ladder. Every error
    /// is one line that says what is wrong and what to use instead.
    pub fn from_params(p: &Params, host: Option<&HostInfo>) -> Result<Config, WorkloadError> {
        let line = p.int("line_size") as u64;
        if !line.is_power_of_two() || !(8..=4096).contains(&line) {
            return Err(WorkloadError::usage(format!(
                "line size {line} B is not a power of two from 8 B to 4 KiB (each line holds \
                 one 8-byte pointer); use 64, or 128 on Apple M-series and POWER"
            )));
        }
        let min = p.int("min_size") as u64;
        if min < line {
            return Err(WorkloadError::usage(format!(
                "min size {} is below one cache line ({line} B); use a min size of at least {line} B",
                size_label(min)
            )));
        }
        let given = p.int("max_size") as u64;
        let max = if given == 0 {
            auto_max(host, min)
        } else {
            if given < min {
                return Err(WorkloadError::usage(format!(
                    "max size {} is below min size {}; raise the max size or lower the min size",
                    size_label(given),
                    size_label(min)
                )));
            }
            MaxChoice {
                bytes: given,
                auto: false,
                llc: host.and_then(last_level_cache),
                llc_assumed: None,
                note: None,
            }
        };
        let lines = max.bytes / line;
        if lines > u64::from(u32::MAX) {
            return Err(WorkloadError::usage(format!(
                "max size {} is more than 2^32 lines of {line} B; use a max size up to {}",
                size_label(max.bytes),
                size_label(u64::from(u32::MAX) * line)
            )));
        }
        let need = memory_needed(max.bytes, line);
        let avail = host.map_or(0, |h| h.memory.available_bytes);
        if avail > 0 && need > avail {
            return Err(WorkloadError::environment(format!(
                "max size {} needs {} (buffer and chain index) but only {} of memory is \
                 available; use a max size below {}",
                size_label(max.bytes),
                size_label(need),
                size_label(avail),
                size_label(avail / 17 * 16 / line * line)
            )));
        }
        let steps = p.int("steps_per_doubling") as u32;
        Ok(Config {
            line,
            steps,
            sizes: ladder(min, max.bytes, steps, line),
            huge_pages: p.bool("huge_pages"),
            min_time_s: p.float("min_time"),
            min_loads: p.int("min_loads") as u64,
            max,
            thp: host.and_then(|h| h.memory.transparent_hugepages.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::memlat::tests::params;
    use hostbench_core::host::{CacheInfo, CpuInfo, MemoryInfo};

    fn host(caches: &[(u32, &str, u64, u32)], avail: u64) -> HostInfo {
        HostInfo {
            cpu: CpuInfo {
                caches: caches
                    .iter()
                    .map(|&(level, kind, size_bytes, shared_by)| CacheInfo {
                        level,
                        kind: kind.into(),
                        size_bytes,
                        shared_by,
                    })
                    .collect(),
                ..CpuInfo::default()
            },
            memory: MemoryInfo {
                available_bytes: avail,
                ..MemoryInfo::default()
            },
            ..HostInfo::default()
        }
    }

    /// Follows the chain from slot 0; returns the cycle length (n+1 means "did not return").
    fn cycle_len(next: &[u32]) -> usize {
        let mut seen = vec![false; next.len()];
        let (mut i, mut len) = (0usize, 0usize);
        while !seen[i] {
            seen[i] = true;
            i = next[i] as usize;
            len += 1;
        }
        if i == 0 { len } else { next.len() + 1 }
    }

    /// Property: for every n in 1..=512 and several seeds each, plus random larger n, the
    /// chain is a permutation and one cycle over all n slots. (A sweep rather than proptest:
    /// proptest is not a dev-dependency of this crate; this covers every small n exactly.)
    #[test]
    fn sattolo_is_one_cycle_over_every_slot() {
        let mut cases: Vec<(usize, u64)> = Vec::new();
        for n in 1..=512usize {
            for s in 0..3u64 {
                cases.push((n, (n as u64) << 8 | s));
            }
        }
        let mut r = Rng::for_thread(0xC1C1E, 0);
        for _ in 0..25 {
            cases.push((513 + below(&mut r, 100_000) as usize, r.next_u64()));
        }
        let mut next = Vec::new();
        for (n, seed) in cases {
            next.clear();
            next.resize(n, 0u32);
            sattolo(&mut next, &mut Rng::for_thread(seed, 0));
            assert_eq!(cycle_len(&next), n, "n={n} seed={seed}");
            let mut sorted = next.clone();
            sorted.sort_unstable();
            assert!(
                sorted.iter().enumerate().all(|(i, &v)| v as usize == i),
                "n={n} seed={seed}: not a permutation"
            );
        }
    }

    /// Property: over random bounds, line sizes and steps, the ladder starts at min and ends
    /// at max (rounded down to lines), strictly increases, stays line aligned, and has at
    /// most `steps` points per doubling plus its ends.
    #[test]
    fn ladder_is_increasing_bounded_and_line_aligned() {
        let mut r = Rng::for_thread(0x1ADDE2, 0);
        for case in 0..20_000 {
            let line = 1u64 << (3 + below(&mut r, 10));
            let span_bits = 1 + below(&mut r, 40);
            let span = below(&mut r, 1 << span_bits);
            let min_bits = 1 + below(&mut r, 20);
            let min = (1 + below(&mut r, 1 << min_bits)) * line + span % line;
            let max = min + span;
            let steps = 1 + below(&mut r, 16) as u32;
            let s = ladder(min, max, steps, line);
            let what = format!("case {case}: ladder({min}, {max}, {steps}, {line}) = {s:?}");
            assert_eq!(s[0], min / line * line, "{what}");
            assert_eq!(*s.last().unwrap(), max / line * line, "{what}");
            assert!(s.windows(2).all(|w| w[0] < w[1]), "{what}");
            assert!(
                s.iter().all(|&x| x % line == 0 && x >= line && x <= max),
                "{what}"
            );
            let log2 = |x: u64| u64::from(63 - x.leading_zeros());
            let doublings = log2(max) - log2(min);
            assert!(
                s.len() as u64 <= u64::from(steps) * (doublings + 1) + 2,
                "{what}"
            );
        }
    }

    #[test]
    fn sattolo_edge_sizes_and_shuffles() {
        let mut one = vec![7u32];
        sattolo(&mut one, &mut Rng::for_thread(1, 0));
        assert_eq!(one, [0]);
        let mut two = vec![0u32; 2];
        sattolo(&mut two, &mut Rng::for_thread(1, 0));
        assert_eq!(two, [1, 0]);
        // Different seeds give different chains (a fixed pattern would be prefetchable).
        let mut a = vec![0u32; 64];
        let mut b = vec![0u32; 64];
        sattolo(&mut a, &mut Rng::for_thread(1, 0));
        sattolo(&mut b, &mut Rng::for_thread(2, 0));
        assert_ne!(a, b);
        assert!(a.iter().enumerate().all(|(i, &v)| v as usize != i));
    }

    #[test]
    fn ladder_points_land_on_cache_sizes() {
        let s = ladder(4 << 10, 2 << 20, 4, 64);
        for want in [
            4 << 10,
            5 << 10,
            6 << 10,
            7 << 10,
            48 << 10,
            1280 << 10,
            2 << 20,
        ] {
            assert!(s.contains(&want), "{} missing from {s:?}", size_label(want));
        }
        assert_eq!(s.len(), 4 * 9 + 1);
        assert_eq!(ladder(4096, 4096, 4, 64), [4096]);
        // Odd bounds are kept (rounded down to lines) as the ends.
        assert_eq!(ladder(100, 300, 1, 64), [64, 128, 256]);
        assert_eq!(ladder(4096, 5000, 2, 64), [4096, 4992]);
    }

    #[test]
    fn size_labels() {
        assert_eq!(size_label(4096), "4 KiB");
        assert_eq!(size_label(1536 << 10), "1.5 MiB");
        assert_eq!(size_label(5461), "5.33 KiB");
        assert_eq!(size_label(100), "100 B");
        assert_eq!(size_label(1 << 30), "1 GiB");
    }

    #[test]
    fn auto_max_follows_the_llc_with_caps() {
        let p = params(&[]);
        // Bare metal: 8 × a 32 MiB L3 shared by 16 CPUs.
        let h = host(
            &[(1, "Data", 48 << 10, 2), (3, "Unified", 32 << 20, 16)],
            64 << 30,
        );
        let c = Config::from_params(&p, Some(&h)).unwrap();
        assert_eq!(*c.sizes.last().unwrap(), 256 << 20);
        assert_eq!(c.max.note, None);
        // A 2-vCPU guest reporting a 480 MiB socket L3: counted as 2 × the per-CPU cap.
        let h = host(&[(3, "Unified", 480 << 20, 2)], 64 << 30);
        let c = Config::from_params(&p, Some(&h)).unwrap();
        assert_eq!(c.max.llc_assumed, Some(2 * LLC_PER_CPU_CAP));
        assert_eq!(c.max.bytes, 2 * LLC_PER_CPU_CAP * AUTO_LLC_FACTOR);
        assert!(c.max.note.as_deref().unwrap().contains("480 MiB"));
        // Little memory: a quarter of what is available.
        let h = host(&[(3, "Unified", 32 << 20, 16)], 400 << 20);
        let c = Config::from_params(&p, Some(&h)).unwrap();
        assert_eq!(c.max.bytes, 100 << 20);
        assert!(c.max.note.as_deref().unwrap().contains("1/4"));
        // Unknown host: the fallback, said so.
        let c = Config::from_params(&p, None).unwrap();
        assert_eq!(c.max.bytes, FALLBACK_MAX_SIZE);
        assert!(c.max.note.is_some());
        // A min above the automatic max raises it.
        let p = params(&[("min_size", "512M")]);
        let h = host(&[(3, "Unified", 8 << 20, 8)], 64 << 30);
        let c = Config::from_params(&p, Some(&h)).unwrap();
        assert_eq!(c.sizes, [512 << 20]);
    }

    #[test]
    fn bad_combinations_are_clear_errors() {
        let h = host(&[(3, "Unified", 32 << 20, 16)], 1 << 30);
        let e = |ov: &[(&str, &str)]| {
            Config::from_params(&params(ov), Some(&h))
                .unwrap_err()
                .to_string()
        };
        let m = e(&[("min_size", "1M"), ("max_size", "64K")]);
        assert!(m.contains("max size 64 KiB is below min size 1 MiB"), "{m}");
        let m = e(&[("min_size", "32")]);
        assert!(m.contains("below one cache line (64 B)"), "{m}");
        let m = e(&[("line_size", "48")]);
        assert!(m.contains("not a power of two"), "{m}");
        let m = e(&[("line_size", "4")]);
        assert!(m.contains("not a power of two from 8 B"), "{m}");
        let m = e(&[("max_size", "2G")]);
        assert!(m.contains("only 1 GiB of memory is available"), "{m}");
        let m = e(&[("max_size", "1T"), ("line_size", "8")]);
        assert!(m.contains("2^32 lines"), "{m}");
        for m in [
            e(&[("min_size", "1M"), ("max_size", "64K")]),
            e(&[("max_size", "2G")]),
        ] {
            assert!(!m.contains('\n'), "{m}");
        }
    }
}
