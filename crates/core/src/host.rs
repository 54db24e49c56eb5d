//! Host fingerprint and timer-probe data types. The `hostinfo` crate fills them from /proc
//! and /sys; they live here so that every result can carry them.

use serde::{Deserialize, Serialize};

/// Everything about the machine that decides whether two results are comparable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// Processor.
    pub cpu: CpuInfo,
    /// Memory.
    pub memory: MemoryInfo,
    /// Kernel and distribution.
    pub os: OsInfo,
    /// Virtualization, if any (`kvm`, `xen`, `vmware`, `microsoft`, ...); `None` on bare metal
    /// or when it cannot be told.
    pub virtualization: Option<String>,
    /// Cloud/DMI product information where the DMI tables tell it.
    pub dmi: Option<DmiInfo>,
    /// Current and available clocksources.
    pub clocksource: ClocksourceInfo,
}

/// Processor description.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuInfo {
    /// Model name (`AMD EPYC 7B13`, `Neoverse-N1`).
    pub model: String,
    /// Vendor id (`GenuineIntel`, `AuthenticAMD`, `ARM`).
    pub vendor: String,
    /// Architecture (`x86_64`, `aarch64`).
    pub arch: String,
    /// Physical packages.
    pub sockets: u32,
    /// Physical cores in total.
    pub cores: u32,
    /// Logical CPUs online.
    pub threads: u32,
    /// Flags that matter for benchmarks (avx2, avx512f, sse4_2, aes, constant_tsc,
    /// nonstop_tsc, hypervisor; asimd, sve, atomics on Arm).
    pub flags_of_note: Vec<String>,
    /// Caches of CPU 0.
    pub caches: Vec<CacheInfo>,
    /// cpufreq governor of CPU 0, if cpufreq is exposed.
    pub governor: Option<String>,
    /// Current frequency of CPU 0, MHz.
    pub mhz_current: Option<f64>,
    /// Maximum frequency of CPU 0, MHz.
    pub mhz_max: Option<f64>,
}

/// One cache level as seen by CPU 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheInfo {
    /// 1, 2, 3...
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Logical CPUs sharing it.
    pub shared_by: u32,
}

/// Memory description.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryInfo {
    /// MemTotal, bytes.
    pub total_bytes: u64,
    /// MemAvailable, bytes.
    pub available_bytes: u64,
    /// SwapTotal, bytes.
    pub swap_total_bytes: u64,
    /// NUMA nodes online.
    pub numa_nodes: u32,
    /// Transparent hugepages mode (`always`, `madvise`, `never`).
    pub transparent_hugepages: Option<String>,
    /// Reserved huge pages (HugePages_Total).
    pub hugepages_total: u64,
}

/// Operating system.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OsInfo {
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// PRETTY_NAME from os-release.
    pub distribution: String,
}

/// DMI product strings (no serial numbers).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DmiInfo {
    /// sys_vendor.
    pub vendor: Option<String>,
    /// product_name (on clouds, often the instance type).
    pub product: Option<String>,
}

/// Clocksources from /sys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClocksourceInfo {
    /// current_clocksource.
    pub current: String,
    /// available_clocksource.
    pub available: Vec<String>,
}

/// What reading each clock costs here (`hostbench timer`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimerReport {
    /// One entry per clock probed.
    pub clocks: Vec<ClockCost>,
    /// Clocksources.
    pub clocksource: ClocksourceInfo,
    /// The clock hostbench times events with, and its cost.
    pub hostbench_clock: Option<crate::clock::ClockInfo>,
    /// Plain-language warnings (slow clock, unstable clocksource).
    pub warnings: Vec<String>,
}

/// The cost of one clock.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockCost {
    /// `CLOCK_MONOTONIC`, `CLOCK_REALTIME`, ..., or `TSC (rdtsc)`.
    pub name: String,
    /// Nanoseconds per call (median of batches).
    pub ns_per_call: f64,
    /// Resolution reported by clock_getres, ns (absent for the TSC).
    pub resolution_ns: Option<u64>,
}
