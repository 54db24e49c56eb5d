//! Text renderings of `hostbench sysinfo` and `hostbench timer`.

use hostbench_core::host::{HostInfo, TimerReport};
use hostbench_core::units::Bytes;
use std::fmt::Write;

/// `hostbench sysinfo` as text.
pub fn sysinfo_text(h: &HostInfo) -> String {
    let mut s = String::new();
    let c = &h.cpu;
    let _ = writeln!(s, "host            {}", h.hostname);
    let _ = writeln!(s, "cpu             {} ({}, {})", c.model, c.vendor, c.arch);
    let _ = writeln!(
        s,
        "topology        {} socket(s), {} core(s), {} thread(s)",
        c.sockets, c.cores, c.threads
    );
    let caches: Vec<String> = c
        .caches
        .iter()
        .map(|k| {
            format!(
                "L{}{} {} (shared by {})",
                k.level,
                k.kind.chars().next().unwrap_or('?').to_ascii_lowercase(),
                Bytes(k.size_bytes),
                k.shared_by
            )
        })
        .collect();
    let _ = writeln!(
        s,
        "caches          {}",
        if caches.is_empty() {
            "unknown".into()
        } else {
            caches.join(", ")
        }
    );
    let _ = writeln!(s, "flags           {}", c.flags_of_note.join(" "));
    let _ = writeln!(
        s,
        "frequency       governor {}, current {}, max {}",
        c.governor.as_deref().unwrap_or("n/a (no cpufreq)"),
        c.mhz_current
            .map(|m| format!("{m:.0} MHz"))
            .unwrap_or("n/a".into()),
        c.mhz_max
            .map(|m| format!("{m:.0} MHz"))
            .unwrap_or("n/a".into())
    );
    let m = &h.memory;
    let _ = writeln!(
        s,
        "memory          {} total, {} available, swap {}, {} NUMA node(s)",
        Bytes(m.total_bytes),
        Bytes(m.available_bytes),
        Bytes(m.swap_total_bytes),
        m.numa_nodes
    );
    let _ = writeln!(
        s,
        "hugepages       THP {}, {} reserved",
        m.transparent_hugepages.as_deref().unwrap_or("n/a"),
        m.hugepages_total
    );
    let _ = writeln!(s, "kernel          {}", h.os.kernel);
    let _ = writeln!(s, "distribution    {}", h.os.distribution);
    let _ = writeln!(
        s,
        "virtualization  {}",
        h.virtualization.as_deref().unwrap_or("none detected")
    );
    if let Some(d) = &h.dmi {
        let _ = writeln!(
            s,
            "dmi             {} / {}",
            d.vendor.as_deref().unwrap_or("?"),
            d.product.as_deref().unwrap_or("?")
        );
    }
    let _ = writeln!(
        s,
        "clocksource     {} (available: {})",
        h.clocksource.current,
        h.clocksource.available.join(" ")
    );
    s
}

/// `hostbench timer` as text.
pub fn timer_text(r: &TimerReport) -> String {
    let mut s = String::from("clock                         ns/call   resolution\n");
    for c in &r.clocks {
        let _ = writeln!(
            s,
            "{:<28} {:>8.1}   {}",
            c.name,
            c.ns_per_call,
            c.resolution_ns
                .map(|n| format!("{n} ns"))
                .unwrap_or_else(|| "-".into())
        );
    }
    if let Some(h) = &r.hostbench_clock {
        let _ = writeln!(
            s,
            "\nhostbench times events with {:?} ({:.0} ticks/s): {:.1} ns per read",
            h.source, h.ticks_per_s, h.read_cost_ns
        );
    }
    let _ = writeln!(
        s,
        "clocksource: {} (available: {})",
        r.clocksource.current,
        r.clocksource.available.join(" ")
    );
    for w in &r.warnings {
        let _ = writeln!(s, "\nWARNING: {w}");
    }
    s
}
