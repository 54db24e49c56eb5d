//! What reading each clock costs here, and plain-language warnings when that cost or the
//! clocksource distorts latency figures.
//!
//! Every latency a benchmark reports is the difference of two clock reads, so the cost and
//! granularity of the clock are part of every figure. Measuring them beside the results is
//! what lets a reader tell a slow host from a slow timer.

use hostbench_core::clock::{Clock, ClockInfo, ClockSource, measure_read_cost};
use hostbench_core::host::{ClockCost, ClocksourceInfo, TimerReport};

/// Above this, a clock read is a visible share of any sub-microsecond latency.
const SLOW_CLOCK_NS: f64 = 100.0;

/// Ticks coarser than this quantize short latencies noticeably.
const COARSE_TICK_NS: f64 = 20.0;

/// Clocksources through which the hypervisor supplies guest time.
const PARAVIRTUAL_CLOCKSOURCES: &[&str] = &[
    "kvm-clock",
    "xen",
    "hyperv_clocksource_tsc_page",
    "hyperv_clocksource_msr",
];

/// Clocksources that read the CPU's own counter, the cheapest there is.
const COUNTER_CLOCKSOURCES: &[&str] = &["tsc", "arch_sys_counter"];

/// The POSIX clocks probed, in report order. The coarse clock is included because some tools
/// use it for speed, at the price of jiffy resolution.
const POSIX_CLOCKS: &[(&str, libc::clockid_t)] = &[
    ("CLOCK_REALTIME", libc::CLOCK_REALTIME),
    ("CLOCK_MONOTONIC", libc::CLOCK_MONOTONIC),
    ("CLOCK_MONOTONIC_RAW", libc::CLOCK_MONOTONIC_RAW),
    ("CLOCK_BOOTTIME", libc::CLOCK_BOOTTIME),
    ("CLOCK_MONOTONIC_COARSE", libc::CLOCK_MONOTONIC_COARSE),
];

fn timespec_ns(ts: &libc::timespec) -> u64 {
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// Cost and resolution of one POSIX clock, or `None` when this kernel does not have it.
fn probe_posix(name: &str, id: libc::clockid_t) -> Option<ClockCost> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes a timespec through a valid pointer.
    if unsafe { libc::clock_gettime(id, &mut ts) } != 0 {
        return None;
    }
    let ns_per_call = measure_read_cost(|| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: as above.
        unsafe { libc::clock_gettime(id, &mut ts) };
        timespec_ns(&ts)
    });
    let mut res = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_getres writes a timespec through a valid pointer.
    let resolution_ns =
        (unsafe { libc::clock_getres(id, &mut res) } == 0).then(|| timespec_ns(&res));
    Some(ClockCost {
        name: name.to_string(),
        ns_per_call,
        resolution_ns,
    })
}

/// The raw CPU counter read from user space, as hostbench's own clock reads it.
#[cfg(target_arch = "x86_64")]
fn probe_counter() -> Option<ClockCost> {
    // SAFETY: rdtsc has no preconditions on x86_64.
    let ns_per_call = measure_read_cost(|| unsafe { core::arch::x86_64::_rdtsc() });
    // The TSC's rate is not exposed to user space reliably, so no resolution is claimed.
    Some(ClockCost {
        name: "TSC (rdtsc)".to_string(),
        ns_per_call,
        resolution_ns: None,
    })
}

/// The raw CPU counter read from user space, as hostbench's own clock reads it.
#[cfg(target_arch = "aarch64")]
fn probe_counter() -> Option<ClockCost> {
    let ns_per_call = measure_read_cost(|| {
        let v: u64;
        // SAFETY: CNTVCT_EL0 is readable from EL0 on Linux. The isb matches hostbench's own
        // read, so the cost reported is the cost paid.
        unsafe {
            core::arch::asm!("isb", "mrs {}, cntvct_el0", out(reg) v, options(nomem, nostack))
        };
        v
    });
    let hz: u64;
    // SAFETY: CNTFRQ_EL0 is readable from EL0 on Linux.
    unsafe { core::arch::asm!("mrs {}, cntfrq_el0", out(reg) hz, options(nomem, nostack)) };
    let resolution_ns = (hz > 0).then(|| 1_000_000_000u64.div_ceil(hz));
    Some(ClockCost {
        name: "CNTVCT_EL0".to_string(),
        ns_per_call,
        resolution_ns,
    })
}

/// No user-space counter probed on other architectures.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn probe_counter() -> Option<ClockCost> {
    None
}

fn source_name(s: ClockSource) -> &'static str {
    match s {
        ClockSource::Monotonic => "CLOCK_MONOTONIC",
        ClockSource::Tsc => "the TSC",
        ClockSource::ArmCounter => "CNTVCT_EL0",
        ClockSource::Gettimeofday => "gettimeofday",
    }
}

/// Plain-language warnings for the measured clocks; each says what the condition does to the
/// figures and what can be done about it.
pub(crate) fn warnings(
    clocks: &[ClockCost],
    cs: &ClocksourceInfo,
    hostbench: Option<&ClockInfo>,
) -> Vec<String> {
    let mut out = Vec::new();
    let current = cs.current.as_str();
    let cs_label = if current.is_empty() {
        "unknown".to_string()
    } else {
        format!("'{current}'")
    };

    if let Some(mono) = clocks.iter().find(|c| c.name == "CLOCK_MONOTONIC")
        && mono.ns_per_call > SLOW_CLOCK_NS
    {
        let own = match hostbench {
            Some(h) if h.source != ClockSource::Monotonic => format!(
                " (hostbench itself times events with {} at {:.0} ns per read)",
                source_name(h.source),
                h.read_cost_ns
            ),
            _ => ", hostbench's own latencies included".to_string(),
        };
        out.push(format!(
            "Reading CLOCK_MONOTONIC costs {:.0} ns per call here (clocksource {cs_label}), and \
             every latency that sysbench-style tools report includes about two such reads, so \
             the latencies of sub-microsecond events are dominated by the timer{own}; compare \
             such events by throughput rather than latency, or use a 'tsc' clocksource where \
             the hardware allows it, which typically costs 10-30 ns per read.",
            mono.ns_per_call
        ));
    }

    if PARAVIRTUAL_CLOCKSOURCES.contains(&current) {
        out.push(format!(
            "The clocksource '{current}' is a paravirtual clock supplied by the hypervisor, so \
             this is a guest whose clock-read cost, and every latency timed with it, depends on \
             the host: compare these figures only with runs on the same kind of virtual machine."
        ));
    }

    if !current.is_empty()
        && !COUNTER_CLOCKSOURCES.contains(&current)
        && cs.available.iter().any(|a| a == "tsc")
    {
        out.push(format!(
            "The clocksource is '{current}' although 'tsc' is also available, and the TSC is \
             usually the cheapest clock to read, so clock reads and the latencies built from \
             them may cost more than they need to; if the kernel considers the TSC stable \
             (dmesg shows no 'tsc unstable' message), root can switch with `echo tsc > \
             /sys/devices/system/clocksource/clocksource0/current_clocksource` and rerun."
        ));
    }

    if let Some(h) = hostbench
        && h.ticks_per_s > 0.0
        && 1e9 / h.ticks_per_s > COARSE_TICK_NS
    {
        let tick = 1e9 / h.ticks_per_s;
        out.push(format!(
            "hostbench's clock ({}) ticks every {tick:.0} ns ({:.1} MHz), so every latency is \
             rounded to that step: treat differences smaller than a few ticks as noise.",
            source_name(h.source),
            h.ticks_per_s / 1e6
        ));
    }
    out
}

/// Measures each clock and assembles the report.
pub(crate) fn probe(clock: &Clock, cs: ClocksourceInfo) -> TimerReport {
    let mut clocks: Vec<ClockCost> = POSIX_CLOCKS
        .iter()
        .filter_map(|(name, id)| probe_posix(name, *id))
        .collect();
    clocks.extend(probe_counter());
    let hostbench = clock.info();
    let warnings = warnings(&clocks, &cs, Some(&hostbench));
    TimerReport {
        clocks,
        clocksource: cs,
        hostbench_clock: Some(hostbench),
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(name: &str, ns: f64) -> ClockCost {
        ClockCost {
            name: name.into(),
            ns_per_call: ns,
            resolution_ns: Some(1),
        }
    }

    fn cs(current: &str, available: &[&str]) -> ClocksourceInfo {
        ClocksourceInfo {
            current: current.into(),
            available: available.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn fast_tsc_host_has_no_warnings() {
        let hb = ClockInfo {
            source: ClockSource::Tsc,
            ticks_per_s: 2.6e9,
            read_cost_ns: 8.0,
        };
        let w = warnings(
            &[cost("CLOCK_MONOTONIC", 21.0)],
            &cs("tsc", &["tsc", "kvm-clock"]),
            Some(&hb),
        );
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn slow_xen_guest_gets_all_three() {
        let hb = ClockInfo {
            source: ClockSource::Monotonic,
            ticks_per_s: 1e9,
            read_cost_ns: 640.0,
        };
        let w = warnings(
            &[cost("CLOCK_MONOTONIC", 640.4)],
            &cs("xen", &["xen", "tsc", "hpet", "acpi_pm"]),
            Some(&hb),
        );
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("costs 640 ns") && w[0].contains("clocksource 'xen'"));
        assert!(w[0].contains("hostbench's own latencies included"));
        assert!(w[1].contains("paravirtual"));
        assert!(w[2].contains("echo tsc > /sys/devices/system/clocksource"));
    }

    #[test]
    fn hpet_without_tsc_only_warns_about_cost() {
        let w = warnings(
            &[cost("CLOCK_MONOTONIC", 1500.0)],
            &cs("hpet", &["hpet"]),
            None,
        );
        assert_eq!(w.len(), 1);
        let w = warnings(&[cost("CLOCK_MONOTONIC", 1500.0)], &cs("", &[]), None);
        assert!(w[0].contains("clocksource unknown"));
    }

    #[test]
    fn coarse_arm_counter_is_noted() {
        let hb = ClockInfo {
            source: ClockSource::ArmCounter,
            ticks_per_s: 25e6,
            read_cost_ns: 9.0,
        };
        let w = warnings(
            &[cost("CLOCK_MONOTONIC", 150.0)],
            &cs("arch_sys_counter", &["arch_sys_counter"]),
            Some(&hb),
        );
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("hostbench itself times events with CNTVCT_EL0 at 9 ns"));
        assert!(w[1].contains("ticks every 40 ns (25.0 MHz)"));
    }

    #[test]
    fn probes_every_clock() {
        let r = probe(&Clock::monotonic(), ClocksourceInfo::default());
        let names: Vec<&str> = r.clocks.iter().map(|c| c.name.as_str()).collect();
        assert!(
            names.starts_with(&["CLOCK_REALTIME", "CLOCK_MONOTONIC"]),
            "{names:?}"
        );
        for c in &r.clocks {
            assert!(c.ns_per_call > 0.0 && c.ns_per_call < 1e6, "{c:?}");
        }
        let mono = r
            .clocks
            .iter()
            .find(|c| c.name == "CLOCK_MONOTONIC")
            .unwrap();
        assert!(mono.resolution_ns.is_some_and(|r| r >= 1));
        assert!(r.hostbench_clock.is_some());
        #[cfg(target_arch = "x86_64")]
        assert!(names.contains(&"TSC (rdtsc)"));
        #[cfg(target_arch = "aarch64")]
        assert!(names.contains(&"CNTVCT_EL0"));
    }
}
