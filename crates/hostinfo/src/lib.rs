//! hostbench-hostinfo: the host fingerprint carried in every result, and the timer probe
//! behind `hostbench timer`.
//!
//! [`collect`] fills [`HostInfo`] from files the kernel already publishes:
//!
//! - `/proc/cpuinfo` (model, vendor, flags), `/sys/devices/system/cpu` (online CPUs,
//!   topology, CPU 0's caches and cpufreq);
//! - `/proc/meminfo`, `/sys/devices/system/node/online`,
//!   `/sys/kernel/mm/transparent_hugepage/enabled`;
//! - `/proc/sys/kernel/{hostname,osrelease}` (`uname(2)` when /proc is missing) and
//!   `/etc/os-release`;
//! - `/sys/hypervisor/type`, `/sys/class/dmi/id/{sys_vendor,product_name}` (never serial
//!   numbers or UUIDs), the CPUID hypervisor signature on x86, and the `/.dockerenv` and
//!   `/run/.containerenv` markers; the cloud provider (and on AWS the instance type) from
//!   those DMI strings, `bios_version`, and `chassis_asset_tag`/`/sys/hypervisor/uuid`
//!   compared with providers' fixed values;
//! - `/sys/devices/system/clocksource/clocksource0`;
//! - for [`dir_info`]: `/proc/self/mountinfo`, `/sys/dev/block`, `/sys/block/*/{queue,device}`
//!   and statfs(2).
//!
//! It never touches the network: no cloud metadata endpoint, no DNS. A fingerprint must be
//! cheap, work offline and in sandboxes, and must not leak anything beyond what it shows.
//! Nothing here panics on a missing or unreadable file; the field is left at its default.
//!
//! [`activity`] samples the host's load, CPU time, steal and swapping around a run (two cheap
//! reads of /proc) and turns what it saw, and the frequency governor, into typed warnings.
//!
//! [`probe_timers`] measures what each clock costs to read and explains in plain words when
//! that cost, or the clocksource, distorts latency figures.
#![deny(missing_docs)]

pub mod activity;
mod cpu;
mod dir;
mod fs;
mod memory;
mod os;
pub mod procs;
mod timer;

use hostbench_core::clock::Clock;
use hostbench_core::host::{ClocksourceInfo, DirInfo, HostInfo, TimerReport};

pub use cpu::{parse_cpu_list, parse_size_k};

use fs::Fs;

/// Describes this machine from /proc and /sys. Missing information is left at its default
/// (empty string, 0, `None`) rather than reported as an error.
pub fn collect() -> HostInfo {
    let mut host = collect_at(&Fs::system(), os::cpuid_hypervisor_signature());
    if (host.hostname.is_empty() || host.os.kernel.is_empty())
        && let Some((release, nodename)) = os::uname()
    {
        if host.os.kernel.is_empty() {
            host.os.kernel = release;
        }
        if host.hostname.is_empty() {
            host.hostname = nodename;
        }
    }
    host
}

/// The storage under `path`: mount point, file system and mount options, block device and
/// its disk's model, driver, size, rotational flag and I/O scheduler (see [`DirInfo`]). For
/// disk workloads to record the directory they test, and `hostbench sysinfo --dir`. A path
/// that does not exist gives a `DirInfo` with only `path` set.
pub fn dir_info(path: &std::path::Path) -> DirInfo {
    dir::dir_info(path)
}

/// The current and available clocksources from
/// /sys/devices/system/clocksource/clocksource0 (empty when unreadable).
pub fn clocksource() -> ClocksourceInfo {
    os::clocksource(&Fs::system())
}

/// Measures ns per call of each POSIX clock (`clock_gettime`) and of the CPU's raw counter,
/// describes `clock` (the one hostbench times events with), and adds plain-language warnings
/// when reading the clock is slow or the clocksource is paravirtual or not the cheapest.
/// Takes about a tenth of a second.
pub fn probe_timers(clock: &Clock) -> TimerReport {
    timer::probe(clock, clocksource())
}

/// [`collect`] over the tree at `fs`, with the CPUID signature passed in so tests can stand in
/// for the real CPU.
fn collect_at(fs: &Fs, cpuid_signature: Option<String>) -> HostInfo {
    let cpuinfo = cpu::parse_cpuinfo(&fs.read("/proc/cpuinfo").unwrap_or_default());
    let dmi = os::dmi(fs);
    let evidence = os::VirtEvidence {
        sys_hypervisor_type: fs.read_trimmed("/sys/hypervisor/type"),
        hypervisor_flag: cpuinfo.has_flag("hypervisor"),
        arch_has_hypervisor_flag: cfg!(any(target_arch = "x86_64", target_arch = "x86")),
        dmi: dmi.clone(),
        cpuid_signature,
        // Only a hint: a VM whose root file system was made from a container image keeps
        // these files although nothing isolates it beyond the VM.
        container: fs.exists("/.dockerenv") || fs.exists("/run/.containerenv"),
    };
    HostInfo {
        hostname: os::hostname(fs).unwrap_or_default(),
        cpu: cpu::collect(fs, &cpuinfo),
        memory: memory::collect(fs),
        os: os::os_info(fs),
        virtualization: os::classify_virtualization(&evidence),
        dmi,
        clocksource: os::clocksource(fs),
        cloud: os::cloud(&os::CloudEvidence::read(fs)),
        dirs: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::fixture::put;
    use hostbench_core::host::{CacheInfo, DmiInfo};

    #[test]
    fn collect_from_a_fixture_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        put(root, "/proc/cpuinfo", cpu::tests::CPUINFO_X86);
        put(root, "/proc/meminfo", memory::tests::MEMINFO);
        put(root, "/proc/sys/kernel/hostname", "guest\n");
        put(root, "/proc/sys/kernel/osrelease", "6.1.0-25-cloud-amd64\n");
        put(
            root,
            "/etc/os-release",
            "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n",
        );
        put(root, "/sys/devices/system/cpu/online", "0-1\n");
        for cpu in 0..2 {
            let t = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
            put(root, &format!("{t}/physical_package_id"), "0\n");
            put(root, &format!("{t}/thread_siblings_list"), "0-1\n");
        }
        let c = "/sys/devices/system/cpu/cpu0/cache/index0";
        put(root, &format!("{c}/level"), "1\n");
        put(root, &format!("{c}/type"), "Data\n");
        put(root, &format!("{c}/size"), "32K\n");
        put(root, &format!("{c}/shared_cpu_list"), "0-1\n");
        put(root, "/sys/devices/system/node/online", "0\n");
        put(
            root,
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "always [madvise] never\n",
        );
        put(root, "/sys/class/dmi/id/sys_vendor", "Google\n");
        put(
            root,
            "/sys/class/dmi/id/product_name",
            "Google Compute Engine\n",
        );
        put(
            root,
            "/sys/class/dmi/id/product_serial",
            "GoogleCloud-SECRET\n",
        );
        let cs = "/sys/devices/system/clocksource/clocksource0";
        put(root, &format!("{cs}/current_clocksource"), "kvm-clock\n");
        put(
            root,
            &format!("{cs}/available_clocksource"),
            "kvm-clock tsc acpi_pm\n",
        );
        put(root, "/run/.containerenv", "");

        let h = collect_at(&Fs::at(root), None);
        assert_eq!(h.hostname, "guest");
        assert_eq!(h.cpu.model, "AMD EPYC 9R14 96-Core Processor");
        assert_eq!((h.cpu.sockets, h.cpu.cores, h.cpu.threads), (1, 1, 2));
        assert_eq!(
            h.cpu.caches,
            [CacheInfo {
                level: 1,
                kind: "Data".into(),
                size_bytes: 32768,
                shared_by: 2
            }]
        );
        assert_eq!(h.cpu.arch, std::env::consts::ARCH);
        assert_eq!(h.memory.total_bytes, 24684084 * 1024);
        assert_eq!(h.memory.numa_nodes, 1);
        assert_eq!(h.memory.transparent_hugepages.as_deref(), Some("madvise"));
        assert_eq!(h.os.kernel, "6.1.0-25-cloud-amd64");
        assert_eq!(h.os.distribution, "Debian GNU/Linux 12 (bookworm)");
        #[cfg(target_arch = "x86_64")]
        assert_eq!(h.virtualization.as_deref(), Some("kvm (gce), container"));
        assert_eq!(
            h.dmi,
            Some(DmiInfo {
                vendor: Some("Google".into()),
                product: Some("Google Compute Engine".into())
            })
        );
        assert!(!format!("{h:?}").contains("SECRET"));
        assert_eq!(h.cloud.as_ref().map(|c| c.provider.as_str()), Some("gcp"));
        assert_eq!(h.clocksource.current, "kvm-clock");
    }

    #[test]
    fn collect_from_nothing_is_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let h = collect_at(&Fs::at(dir.path()), None);
        assert_eq!(h.hostname, "");
        assert_eq!(h.cpu.threads, 0);
        assert_eq!(h.virtualization, None);
        assert_eq!(h.dmi, None);
        assert_eq!(h.os, Default::default());
    }

    #[test]
    fn collect_on_this_machine() {
        let h = collect();
        assert_eq!(h.cpu.arch, std::env::consts::ARCH);
        assert!(!h.os.kernel.is_empty());
        if std::path::Path::new("/sys/devices/system/cpu/online").exists() {
            assert!(
                h.cpu.threads >= 1 && h.cpu.cores >= 1 && h.cpu.sockets >= 1,
                "{h:?}"
            );
        }
        if std::path::Path::new("/proc/meminfo").exists() {
            assert!(h.memory.total_bytes > 0);
        }
    }
}
