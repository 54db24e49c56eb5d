//! Text renderings of `hostbench sysinfo` and `hostbench timer`.

use hostbench_core::clock::ClockInfo;
use hostbench_core::host::{DirInfo, HostInfo, TimerReport};
use hostbench_core::units::Bytes;
use std::fmt::Write;

/// `hostbench sysinfo` as text; `clock` adds the measured cost of the clock hostbench
/// times events with.
pub fn sysinfo_text(h: &HostInfo, clock: Option<&ClockInfo>) -> String {
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
    if let Some(c) = &h.cloud {
        let _ = writeln!(
            s,
            "cloud           {}, instance type {}",
            c.provider,
            c.instance_type
                .as_deref()
                .unwrap_or("not in DMI (name it with --label)")
        );
    }
    let _ = writeln!(
        s,
        "clocksource     {} (available: {})",
        h.clocksource.current,
        h.clocksource.available.join(" ")
    );
    if let Some(c) = clock {
        let _ = writeln!(
            s,
            "timer           {}, {:.1} ns per read (`hostbench timer` for every clock)",
            c.source.name(),
            c.read_cost_ns
        );
    }
    for d in &h.dirs {
        s.push_str(&dir_text(d));
    }
    s
}

/// The storage facts of one directory, as `sysinfo --dir` prints them.
pub fn dir_text(d: &DirInfo) -> String {
    let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
    let mut s = String::new();
    let _ = writeln!(s, "dir             {}", d.path);
    let _ = writeln!(
        s,
        "  filesystem    {} on {} (mounted at {}), options {}",
        or(&d.filesystem),
        or(&d.mount_source),
        or(&d.mount_point),
        or(&d.mount_options)
    );
    if d.device.is_some() {
        let mut disk = or(&d.disk);
        if !d.underlying.is_empty() {
            let _ = write!(disk, " over {}", d.underlying.join(", "));
        }
        let _ = writeln!(
            s,
            "  device        {} ({}), disk {}",
            or(&d.device),
            or(&d.device_number),
            disk
        );
        let _ = writeln!(
            s,
            "  disk          model {}, driver {}, size {}",
            d.model.as_deref().unwrap_or("not exposed"),
            or(&d.driver),
            d.size_bytes
                .map(|b| Bytes(b).to_string())
                .unwrap_or_else(|| "?".into())
        );
        let _ = writeln!(
            s,
            "  queue         rotational {}, scheduler {}",
            match d.rotational {
                Some(true) => "1 (the kernel's flag; unreliable in VMs)",
                Some(false) => "0 (the kernel's flag; unreliable in VMs)",
                None => "?",
            },
            or(&d.scheduler)
        );
    } else {
        let _ = writeln!(
            s,
            "  device        none (no block device under this file system)"
        );
    }
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
            "\nhostbench times events with {} ({:.0} ticks/s): {:.1} ns per read",
            h.source.name(),
            h.ticks_per_s,
            h.read_cost_ns
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
