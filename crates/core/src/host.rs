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
    /// The cloud the DMI tables name, and the instance type where they tell it; absent
    /// when they name none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud: Option<CloudInfo>,
    /// The directories under test (disk workloads, `sysinfo --dir`): their device, disk
    /// model, rotational flag, I/O scheduler, file system and mount options.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<DirInfo>,
}

/// A cloud provider as the DMI tables tell it (nothing is asked of any metadata service).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CloudInfo {
    /// `aws`, `gcp`, `azure`, `openstack`, `digitalocean`, `oracle`, `alibaba`, `hetzner`.
    pub provider: String,
    /// The instance type, where DMI carries it (AWS Nitro: `c7g.large`); `None` where only
    /// the provider's metadata service knows it.
    pub instance_type: Option<String>,
}

/// The storage under one directory, from /proc/self/mountinfo, /sys/dev/block, /sys/block
/// and statfs(2). Every field is optional: tmpfs and overlay have no device, VMs often no
/// model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirInfo {
    /// The directory, as given.
    pub path: String,
    /// Where its file system is mounted.
    pub mount_point: Option<String>,
    /// File system type (`ext4`, `xfs`, `tmpfs`, `overlay`).
    pub filesystem: Option<String>,
    /// What is mounted (`/dev/nvme0n1p1`, `overlay`).
    pub mount_source: Option<String>,
    /// Mount options, per-mount then super-block options, without repeats
    /// (`rw,relatime,discard`).
    pub mount_options: Option<String>,
    /// The block device holding it (`nvme0n1p1`, `dm-0`, `vda`).
    pub device: Option<String>,
    /// Its `major:minor`.
    pub device_number: Option<String>,
    /// The whole disk of that device (`nvme0n1` for `nvme0n1p1`).
    pub disk: Option<String>,
    /// Disks under a device-mapper or md device (`dm-0` over `nvme0n1p3`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub underlying: Vec<String>,
    /// Disk model (`Amazon Elastic Block Store`, `Samsung SSD 980 PRO 1TB`); virtio disks
    /// have none.
    pub model: Option<String>,
    /// Kernel driver of the disk (`nvme`, `virtio_blk`, `sd`).
    pub driver: Option<String>,
    /// Disk size, bytes.
    pub size_bytes: Option<u64>,
    /// The kernel's rotational flag. Unreliable in VMs (virtio says 1, EBS NVMe says 0
    /// whatever the media): never call a disk an SSD or HDD from it alone.
    pub rotational: Option<bool>,
    /// Active I/O scheduler (`none`, `mq-deadline`, `bfq`, `kyber`).
    pub scheduler: Option<String>,
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
