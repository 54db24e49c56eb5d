//! STREAM's array size: its rule (each array at least 4x the last-level caches), made safe
//! for guests that report the host's whole cache and for small memories, and the check of a
//! size the user gave against MemAvailable.

use super::{
    AUTO_MEMORY_FRACTION, AUTO_ROUND_ELEMENTS, BYTES_PER_ELEMENT, GUEST_LLC_PER_CPU,
    STREAM_DEFAULT_ELEMENTS, USER_MEMORY_FRACTION,
};
use hostbench_core::host::HostInfo;
use hostbench_core::workload::WorkloadError;

/// How the array size was decided; stored as the `size_rule` fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeRule {
    /// The user gave `--array-size`.
    Given = 0,
    /// Each array 4x the (possibly capped) last-level caches.
    CacheRule = 1,
    /// 4x the caches is below stream.c's default; the default was used.
    StreamDefault = 2,
    /// STREAM's rule asked for more than memory allows; cut to the memory cap.
    MemoryCapped = 3,
    /// No host information; stream.c's default was used.
    NoHostInfo = 4,
}

/// The array size and the facts behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeChoice {
    /// Elements per array.
    pub elements: u64,
    /// Which rule decided it.
    pub rule: SizeRule,
    /// Sum of the last-level caches as the machine reports them, bytes.
    pub llc_reported: Option<u64>,
    /// The cache size the rule used (after the guest sanity cap), bytes.
    pub llc_assumed: Option<u64>,
    /// MemAvailable at setup, bytes.
    pub mem_available: Option<u64>,
    /// One sentence: what was chosen and why (absent when the user chose).
    pub message: Option<String>,
}

/// Bytes in MiB as STREAM prints them (B, KiB, GiB or TiB at the extremes).
pub(super) fn mib(b: u64) -> String {
    let f = b as f64;
    match b {
        0..1024 => format!("{b} B"),
        1024..1048576 => format!("{:.1} KiB", f / 1024.0),
        1048576..0x2_8000_0000 => format!("{:.1} MiB", f / (1u64 << 20) as f64),
        0x2_8000_0000..0x100_0000_0000 => format!("{:.1} GiB", f / (1u64 << 30) as f64),
        _ => format!("{:.1} TiB", f / (1u64 << 40) as f64),
    }
}

fn array_bytes(elements: u64, offset: u64) -> Option<u64> {
    elements
        .checked_add(offset)?
        .checked_mul(3 * BYTES_PER_ELEMENT)
}

/// Sum of the last-level (data or unified) caches of the machine, and whether it is a guest.
fn llc(host: &HostInfo) -> Option<(u64, u32, bool)> {
    let c = crate::memory::last_level_cache(host)?;
    let level = c.level;
    let cpus = host.cpu.threads.max(1);
    let instances = cpus.div_ceil(c.shared_by.max(1));
    let guest =
        host.virtualization.is_some() || host.cpu.flags_of_note.iter().any(|f| f == "hypervisor");
    Some((
        c.size_bytes.saturating_mul(u64::from(instances)),
        level,
        guest,
    ))
}

/// STREAM's sizing rule, made safe for guests and small machines (docs/stream.md).
pub fn choose_size(host: Option<&HostInfo>, offset: u64) -> SizeChoice {
    let Some(host) = host else {
        return SizeChoice {
            elements: STREAM_DEFAULT_ELEMENTS,
            rule: SizeRule::NoHostInfo,
            llc_reported: None,
            llc_assumed: None,
            mem_available: None,
            message: Some(format!(
                "array size {STREAM_DEFAULT_ELEMENTS} elements (stream.c's default): no host \
                 information to apply STREAM's 4x-cache rule to"
            )),
        };
    };
    let cpus = u64::from(host.cpu.threads.max(1));
    let (llc_reported, llc_assumed, why_cache) = match llc(host) {
        Some((bytes, level, guest)) => {
            let cap = GUEST_LLC_PER_CPU * cpus;
            if guest && bytes > cap {
                (
                    Some(bytes),
                    Some(cap),
                    format!(
                        "this virtual machine reports {} of L{level} for its {cpus} vCPU(s), the \
                         host's cache rather than the guest's share, so {} ({} per vCPU) is \
                         assumed",
                        mib(bytes),
                        mib(cap),
                        mib(GUEST_LLC_PER_CPU)
                    ),
                )
            } else {
                (
                    Some(bytes),
                    Some(bytes),
                    format!("{} of L{level} reported for {cpus} CPU(s)", mib(bytes)),
                )
            }
        }
        None => (None, None, "no cache sizes reported".to_string()),
    };
    let rule_elements = llc_assumed
        .map(|b| (4 * b).div_ceil(BYTES_PER_ELEMENT))
        .unwrap_or(0);
    let (mut elements, mut rule) = if rule_elements >= STREAM_DEFAULT_ELEMENTS {
        (
            rule_elements.div_ceil(AUTO_ROUND_ELEMENTS) * AUTO_ROUND_ELEMENTS,
            SizeRule::CacheRule,
        )
    } else {
        (STREAM_DEFAULT_ELEMENTS, SizeRule::StreamDefault)
    };
    let avail = host.memory.available_bytes;
    let mut message = match rule {
        SizeRule::CacheRule => format!(
            "STREAM's rule, each array at least 4x the last-level cache ({why_cache}), rounded \
             up to a multiple of {AUTO_ROUND_ELEMENTS} elements"
        ),
        _ => format!(
            "stream.c's default of {STREAM_DEFAULT_ELEMENTS} elements, which is more than 4x \
             the last-level cache ({why_cache})"
        ),
    };
    if avail > 0 {
        let cap_bytes = (avail as f64 * AUTO_MEMORY_FRACTION) as u64;
        let cap_elements = (cap_bytes / (3 * BYTES_PER_ELEMENT)).saturating_sub(offset);
        if elements > cap_elements {
            let wanted = elements;
            elements = if cap_elements >= AUTO_ROUND_ELEMENTS {
                cap_elements / AUTO_ROUND_ELEMENTS * AUTO_ROUND_ELEMENTS
            } else {
                cap_elements.max(1)
            };
            rule = SizeRule::MemoryCapped;
            message = format!(
                "{message}, which asks for {wanted} elements, cut to fit the three arrays in half \
                 of MemAvailable ({} of {}); arrays smaller than 4x the cache may measure the \
                 cache, not memory",
                mib(3 * BYTES_PER_ELEMENT * (elements + offset)),
                mib(avail),
            );
        }
    }
    let per_array = elements * BYTES_PER_ELEMENT;
    SizeChoice {
        elements,
        rule,
        llc_reported,
        llc_assumed,
        mem_available: (avail > 0).then_some(avail),
        message: Some(format!(
            "array size {elements} elements ({} per array, {} in all) chosen by {message}. Set \
             --array-size to override.",
            mib(per_array),
            mib(3 * per_array),
        )),
    }
}

/// Checks a user-given size against memory before anything is allocated.
pub fn check_given_size(
    elements: u64,
    offset: u64,
    host: Option<&HostInfo>,
) -> Result<SizeChoice, WorkloadError> {
    let need = array_bytes(elements, offset).ok_or_else(|| {
        WorkloadError::usage(format!(
            "--array-size={elements} with --offset={offset} does not fit in memory addresses"
        ))
    })?;
    let avail = host.map(|h| h.memory.available_bytes).filter(|&a| a > 0);
    if let Some(avail) = avail {
        let limit = (avail as f64 * USER_MEMORY_FRACTION) as u64;
        if need > limit {
            let max = (limit / (3 * BYTES_PER_ELEMENT)).saturating_sub(offset);
            return Err(WorkloadError::environment(format!(
                "--array-size={elements} needs 3 arrays x {} = {} but only {} is available \
                 (MemAvailable); use --array-size={max} or less, or leave it out for an \
                 automatic size",
                mib((elements + offset) * BYTES_PER_ELEMENT),
                mib(need),
                mib(avail)
            )));
        }
    }
    let (llc_reported, llc_assumed) = match host.and_then(llc) {
        Some((bytes, _, guest)) => {
            let cap = GUEST_LLC_PER_CPU * u64::from(host.map_or(1, |h| h.cpu.threads.max(1)));
            (
                Some(bytes),
                Some(if guest { bytes.min(cap) } else { bytes }),
            )
        }
        None => (None, None),
    };
    Ok(SizeChoice {
        elements,
        rule: SizeRule::Given,
        llc_reported,
        llc_assumed,
        mem_available: avail,
        message: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::host::{CacheInfo, CpuInfo, MemoryInfo};

    fn host(l3: u64, shared_by: u32, cpus: u32, avail: u64, vm: bool) -> HostInfo {
        HostInfo {
            cpu: CpuInfo {
                threads: cpus,
                caches: vec![
                    CacheInfo {
                        level: 2,
                        kind: "Unified".into(),
                        size_bytes: 1 << 20,
                        shared_by: 1,
                    },
                    CacheInfo {
                        level: 3,
                        kind: "Unified".into(),
                        size_bytes: l3,
                        shared_by,
                    },
                ],
                ..CpuInfo::default()
            },
            memory: MemoryInfo {
                available_bytes: avail,
                ..MemoryInfo::default()
            },
            virtualization: vm.then(|| "kvm".to_string()),
            ..HostInfo::default()
        }
    }

    #[test]
    fn default_size_follows_the_rule_and_its_caps() {
        // Bare metal, 32 MiB L3 shared by 8 CPUs, 2 instances: 64 MiB -> 4x = 32 Mi elements.
        let h = host(32 << 20, 8, 16, 64 << 30, false);
        let c = choose_size(Some(&h), 0);
        assert_eq!(c.rule, SizeRule::CacheRule);
        assert_eq!(c.llc_reported, Some(64 << 20));
        assert_eq!(c.elements, 4 * (64 << 20) / 8);
        // A 2-vCPU guest reporting the host's 480 MiB L3: capped to 32 MiB per vCPU.
        let g = host(480 << 20, 2, 2, 23 << 30, true);
        let c = choose_size(Some(&g), 0);
        assert_eq!(c.llc_reported, Some(480 << 20));
        assert_eq!(c.llc_assumed, Some(64 << 20));
        assert_eq!(c.elements, 4 * (64 << 20) / 8);
        assert!(c.message.as_deref().unwrap().contains("virtual machine"));
        // Small cache: stream.c's default.
        let s = host(4 << 20, 4, 4, 8 << 30, false);
        assert_eq!(choose_size(Some(&s), 0).elements, STREAM_DEFAULT_ELEMENTS);
        assert_eq!(choose_size(Some(&s), 0).rule, SizeRule::StreamDefault);
        // Little memory: at most half of MemAvailable for the three arrays.
        let m = host(256 << 20, 16, 16, 1 << 30, false);
        let c = choose_size(Some(&m), 0);
        assert_eq!(c.rule, SizeRule::MemoryCapped);
        assert!(3 * 8 * c.elements <= 1 << 29, "{c:?}");
        assert!(c.message.unwrap().contains("MemAvailable"));
        assert_eq!(choose_size(None, 0).rule, SizeRule::NoHostInfo);
    }

    #[test]
    fn a_given_size_beyond_memory_is_refused() {
        let h = host(32 << 20, 2, 2, 1 << 30, false);
        let e = check_given_size(100_000_000, 0, Some(&h)).unwrap_err();
        assert!(e.message.contains("--array-size="), "{e}");
        assert!(check_given_size(10_000_000, 0, Some(&h)).is_ok());
        assert!(check_given_size(u64::MAX / 4, 0, None).is_err());
    }
}
