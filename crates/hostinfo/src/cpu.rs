//! Processor: model and vendor from /proc/cpuinfo, topology, caches and cpufreq from
//! /sys/devices/system/cpu.
//!
//! /proc/cpuinfo looks different on x86 (`model name`, `vendor_id`, `flags`) and on Arm
//! (`CPU implementer`, `CPU part`, `Features`, usually no model name at all), so the parser
//! accepts both layouts whatever the build target is; that also lets both be tested anywhere.

use std::collections::HashSet;

use hostbench_core::host::{CacheInfo, CpuInfo};

use crate::fs::Fs;

/// Flags worth reporting because they change what a benchmark measures: vector widths and
/// crypto instructions change throughput, the TSC flags decide whether the cheap clock is
/// trustworthy, and `hypervisor` says the figures come from a guest.
const FLAGS_OF_NOTE: &[&str] = &[
    "avx",
    "avx2",
    "avx512f",
    "sse4_2",
    "aes",
    "sha_ni",
    "constant_tsc",
    "nonstop_tsc",
    "hypervisor",
    "asimd",
    "sve",
    "sve2",
    "atomics",
];

/// A kernel CPU list never names more CPUs than this; the cap only guards against a corrupt
/// range like `0-4294967295` turning into a multi-gigabyte vector.
const MAX_LISTED_CPUS: usize = 1 << 20;

/// Parses a kernel CPU (or node) list such as `0-3,8,10-11` into sorted, distinct numbers.
///
/// Pieces that do not parse, and descending ranges, are skipped rather than failing the whole
/// list, since a partial count is still better than none in a host description.
pub fn parse_cpu_list(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for piece in s.trim().split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match piece.split_once('-') {
            Some((a, b)) => {
                let (Ok(a), Ok(b)) = (a.trim().parse::<u32>(), b.trim().parse::<u32>()) else {
                    continue;
                };
                let room = MAX_LISTED_CPUS.saturating_sub(out.len());
                if a > b || (b - a) as usize >= room {
                    continue;
                }
                out.extend(a..=b);
            }
            None => {
                if let Ok(n) = piece.parse::<u32>() {
                    out.push(n);
                }
            }
        }
        if out.len() >= MAX_LISTED_CPUS {
            break;
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Parses a size as sysfs and /proc print it (`32K`, `1024K`, `8M`, `1024 KB`) into bytes.
///
/// Suffixes `K`/`KB`/`KiB`, `M`/`MB`/`MiB`, `G`/`GB`/`GiB` and `B` are accepted in any case
/// and all mean powers of 1024, as they do in these files. A bare number is taken as KiB,
/// the unit sysfs cache sizes are given in. `None` for anything else or on overflow.
pub fn parse_size_k(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..digits].parse().ok()?;
    let mult: u64 = match s[digits..].trim().to_ascii_lowercase().as_str() {
        "" | "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "b" => 1,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// What /proc/cpuinfo tells, before it is combined with sysfs.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Cpuinfo {
    /// `model name`, whitespace collapsed.
    pub(crate) model: Option<String>,
    /// `vendor_id` (x86).
    pub(crate) vendor: Option<String>,
    /// `flags` (x86) or `Features` (Arm) of the first processor.
    pub(crate) flags: Vec<String>,
    /// `cpu MHz` of the first processor (x86).
    pub(crate) mhz: Option<f64>,
    /// `CPU implementer` (Arm).
    pub(crate) implementer: Option<u32>,
    /// `CPU part` (Arm).
    pub(crate) part: Option<u32>,
    /// Number of `processor : N` blocks.
    pub(crate) processors: u32,
    /// (`physical id`, `core id`) of each processor that has both (x86).
    pub(crate) package_core: Vec<(String, String)>,
}

impl Cpuinfo {
    /// Whether the first processor lists `flag`.
    pub(crate) fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
}

fn parse_hex(v: &str) -> Option<u32> {
    let v = v.trim();
    let v = v
        .strip_prefix("0x")
        .or_else(|| v.strip_prefix("0X"))
        .unwrap_or(v);
    u32::from_str_radix(v, 16).ok()
}

/// Parses /proc/cpuinfo. Per-machine fields are taken from the first processor that has
/// them; heterogeneous (big.LITTLE, P/E-core) machines are thereby described by CPU 0, like
/// the caches and frequencies are.
pub(crate) fn parse_cpuinfo(s: &str) -> Cpuinfo {
    let mut ci = Cpuinfo::default();
    let mut flags_seen = false;
    let (mut pkg, mut core): (Option<String>, Option<String>) = (None, None);
    fn end_block(pkg: &mut Option<String>, core: &mut Option<String>, ci: &mut Cpuinfo) {
        if let (Some(p), Some(c)) = (pkg.take(), core.take()) {
            ci.package_core.push((p, c));
        }
    }
    for line in s.lines() {
        let Some((key, value)) = line.split_once(':') else {
            if line.trim().is_empty() {
                end_block(&mut pkg, &mut core, &mut ci);
            }
            continue;
        };
        let value = value.trim();
        match key.trim() {
            // Old Arm kernels also print "Processor : AArch64 Processor rev 1" (capital P),
            // which is not a processor block.
            "processor" if value.parse::<u32>().is_ok() => {
                end_block(&mut pkg, &mut core, &mut ci);
                ci.processors += 1;
            }
            "model name" if ci.model.is_none() && !value.is_empty() => {
                ci.model = Some(value.split_whitespace().collect::<Vec<_>>().join(" "));
            }
            "vendor_id" if ci.vendor.is_none() && !value.is_empty() => {
                ci.vendor = Some(value.to_string());
            }
            "flags" | "Features" if !flags_seen => {
                flags_seen = true;
                ci.flags = value.split_whitespace().map(str::to_string).collect();
            }
            "cpu MHz" if ci.mhz.is_none() => ci.mhz = value.parse().ok().filter(|m| *m > 0.0),
            "CPU implementer" if ci.implementer.is_none() => ci.implementer = parse_hex(value),
            "CPU part" if ci.part.is_none() => ci.part = parse_hex(value),
            "physical id" => pkg = Some(value.to_string()),
            "core id" => core = Some(value.to_string()),
            _ => {}
        }
    }
    end_block(&mut pkg, &mut core, &mut ci);
    ci
}

/// Arm implementer codes (MIDR_EL1 bits 31:24) as named in the kernel's cputype.h.
fn arm_implementer_name(implementer: u32) -> Option<&'static str> {
    Some(match implementer {
        0x41 => "ARM",
        0x42 => "Broadcom",
        0x43 => "Cavium",
        0x46 => "Fujitsu",
        0x48 => "HiSilicon",
        0x4e => "NVIDIA",
        0x50 => "APM",
        0x51 => "Qualcomm",
        0x61 => "Apple",
        0x6d => "Microsoft",
        0xc0 => "Ampere",
        _ => return None,
    })
}

/// Names of the Arm cores met on servers and cloud instances; the rest fall back to the raw
/// implementer/part numbers, which are still enough to tell two machines apart.
fn arm_part_name(implementer: u32, part: u32) -> Option<&'static str> {
    Some(match (implementer, part) {
        (0x41, 0xd03) => "Cortex-A53",
        (0x41, 0xd05) => "Cortex-A55",
        (0x41, 0xd07) => "Cortex-A57",
        (0x41, 0xd08) => "Cortex-A72",
        (0x41, 0xd0b) => "Cortex-A76",
        (0x41, 0xd0c) => "Neoverse-N1",
        (0x41, 0xd40) => "Neoverse-V1",
        (0x41, 0xd49) => "Neoverse-N2",
        (0x41, 0xd4f) => "Neoverse-V2",
        (0x41, 0xd84) => "Neoverse-V3",
        (0x41, 0xd8e) => "Neoverse-N3",
        (0xc0, 0xac3) => "Ampere-1",
        (0xc0, 0xac4) => "Ampere-1a",
        _ => return None,
    })
}

/// Model and vendor strings from what /proc/cpuinfo gave.
pub(crate) fn model_and_vendor(ci: &Cpuinfo) -> (String, String) {
    let arm = ci.implementer.map(|imp| {
        let vendor = arm_implementer_name(imp)
            .map(str::to_string)
            .unwrap_or_else(|| format!("0x{imp:02x}"));
        let model = match ci.part {
            Some(part) => arm_part_name(imp, part)
                .map(str::to_string)
                .unwrap_or_else(|| format!("ARM implementer 0x{imp:02x} part 0x{part:03x}")),
            None => format!("ARM implementer 0x{imp:02x}"),
        };
        (model, vendor)
    });
    let model = match (&arm, &ci.model) {
        // A known Arm part name beats the generic "ARMv8 Processor rev 1" some kernels print.
        (Some((m, _)), _) if !m.starts_with("ARM implementer") => m.clone(),
        (_, Some(m)) => m.clone(),
        (Some((m, _)), None) => m.clone(),
        (None, None) => String::new(),
    };
    let vendor = ci
        .vendor
        .clone()
        .or(arm.map(|(_, v)| v))
        .unwrap_or_default();
    (model, vendor)
}

/// The flags in [`FLAGS_OF_NOTE`] that the CPU has, in that list's order.
pub(crate) fn flags_of_note(ci: &Cpuinfo) -> Vec<String> {
    let have: HashSet<&str> = ci.flags.iter().map(String::as_str).collect();
    FLAGS_OF_NOTE
        .iter()
        .filter(|f| have.contains(*f))
        .map(|f| f.to_string())
        .collect()
}

/// Counts distinct packages and distinct (package, core) keys.
fn count_topology<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> (u32, u32) {
    let mut packages = HashSet::new();
    let mut cores = HashSet::new();
    for (pkg, core) in entries {
        packages.insert(pkg);
        cores.insert((pkg, core));
    }
    (packages.len() as u32, cores.len() as u32)
}

/// (sockets, cores) from sysfs topology of the online CPUs, or `None` when none is readable.
///
/// A core is identified by the set of its hardware threads (`core_cpus_list`, older kernels'
/// `thread_siblings_list`) rather than by `core_id`, because `core_id` is only unique within
/// a die on some multi-die parts and is platform-defined on Arm.
fn sysfs_topology(fs: &Fs, online: &[u32]) -> Option<(u32, u32)> {
    let mut entries = Vec::new();
    for cpu in online {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
        let Some(pkg) = fs.read_trimmed(&format!("{dir}/physical_package_id")) else {
            continue;
        };
        let core = fs
            .read_trimmed(&format!("{dir}/core_cpus_list"))
            .or_else(|| fs.read_trimmed(&format!("{dir}/thread_siblings_list")))
            .map(|l| format!("{:?}", parse_cpu_list(&l)))
            .or_else(|| {
                fs.read_trimmed(&format!("{dir}/core_id"))
                    .map(|c| format!("id {c}"))
            })
            .unwrap_or_else(|| format!("cpu {cpu}"));
        entries.push((pkg, core));
    }
    if entries.is_empty() {
        return None;
    }
    Some(count_topology(
        entries.iter().map(|(p, c)| (p.as_str(), c.as_str())),
    ))
}

/// Caches of CPU 0, in index order.
fn caches(fs: &Fs) -> Vec<CacheInfo> {
    let base = "/sys/devices/system/cpu/cpu0/cache";
    let mut indices: Vec<u32> = fs
        .list_dir(base)
        .iter()
        .filter_map(|n| n.strip_prefix("index")?.parse().ok())
        .collect();
    indices.sort_unstable();
    indices
        .into_iter()
        .filter_map(|i| {
            let dir = format!("{base}/index{i}");
            let level = fs.read_trimmed(&format!("{dir}/level"))?.parse().ok()?;
            let kind = fs.read_trimmed(&format!("{dir}/type")).unwrap_or_default();
            let size_bytes = fs
                .read_trimmed(&format!("{dir}/size"))
                .and_then(|s| parse_size_k(&s))
                .unwrap_or(0);
            // CPU 0's own cache is shared by at least CPU 0.
            let shared_by = fs
                .read_trimmed(&format!("{dir}/shared_cpu_list"))
                .map(|l| parse_cpu_list(&l).len() as u32)
                .filter(|n| *n > 0)
                .unwrap_or(1);
            Some(CacheInfo {
                level,
                kind,
                size_bytes,
                shared_by,
            })
        })
        .collect()
}

fn khz_to_mhz(s: Option<String>) -> Option<f64> {
    s?.parse::<u64>()
        .ok()
        .filter(|k| *k > 0)
        .map(|k| k as f64 / 1000.0)
}

/// Everything about the processor. `ci` is the parsed /proc/cpuinfo, shared with the
/// virtualization check.
pub(crate) fn collect(fs: &Fs, ci: &Cpuinfo) -> CpuInfo {
    let (model, vendor) = model_and_vendor(ci);
    let online = fs
        .read_trimmed("/sys/devices/system/cpu/online")
        .map(|s| parse_cpu_list(&s))
        .unwrap_or_default();
    let threads = if online.is_empty() {
        ci.processors
    } else {
        online.len() as u32
    };
    let (sockets, cores) = sysfs_topology(fs, &online)
        .or_else(|| {
            (!ci.package_core.is_empty()).then(|| {
                count_topology(
                    ci.package_core
                        .iter()
                        .map(|(p, c)| (p.as_str(), c.as_str())),
                )
            })
        })
        // Without any topology the safest statement is one package with one core per thread.
        .unwrap_or((u32::from(threads > 0), threads));
    let freq = "/sys/devices/system/cpu/cpu0/cpufreq";
    CpuInfo {
        model,
        vendor,
        arch: std::env::consts::ARCH.to_string(),
        sockets,
        cores,
        threads,
        flags_of_note: flags_of_note(ci),
        caches: caches(fs),
        governor: fs.read_trimmed(&format!("{freq}/scaling_governor")),
        mhz_current: khz_to_mhz(fs.read_trimmed(&format!("{freq}/scaling_cur_freq"))).or(ci.mhz),
        mhz_max: khz_to_mhz(fs.read_trimmed(&format!("{freq}/cpuinfo_max_freq"))),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::fs::fixture::put;

    /// Two logical CPUs of a KVM guest on AMD EPYC (trimmed).
    pub(crate) const CPUINFO_X86: &str = "\
processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC 9R14   96-Core Processor
stepping\t: 1
cpu MHz\t\t: 2596.138
cache size\t: 1024 KB
physical id\t: 0
siblings\t: 2
core id\t\t: 0
cpu cores\t: 1
flags\t\t: fpu vme tsc msr pae constant_tsc rep_good nopl nonstop_tsc sse4_1 sse4_2 aes \
xsave avx hypervisor avx2 avx512f avx512dq sha_ni rdpid
bogomips\t: 5192.27
power management:

processor\t: 1
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 9R14   96-Core Processor
cpu MHz\t\t: 2596.138
physical id\t: 0
siblings\t: 2
core id\t\t: 0
cpu cores\t: 1
flags\t\t: fpu vme tsc msr pae constant_tsc rep_good nopl nonstop_tsc sse4_1 sse4_2 aes \
xsave avx hypervisor avx2 avx512f avx512dq sha_ni rdpid
power management:
";

    /// Two CPUs of an AWS Graviton2 instance.
    pub(crate) const CPUINFO_AARCH64: &str = "\
processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm \
lrcpc dcpop asimddp ssbs
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x3
CPU part\t: 0xd0c
CPU revision\t: 1

processor\t: 1
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm \
lrcpc dcpop asimddp ssbs
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x3
CPU part\t: 0xd0c
CPU revision\t: 1
";

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("0"), vec![0]);
        assert_eq!(parse_cpu_list("0-1,4"), vec![0, 1, 4]);
        assert_eq!(parse_cpu_list(""), Vec::<u32>::new());
        assert_eq!(parse_cpu_list(" 4,0-1,1 "), vec![0, 1, 4]);
        assert_eq!(parse_cpu_list("3-1,x,2"), vec![2]);
        assert_eq!(parse_cpu_list("0-4294967295").len(), 0);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size_k("32K"), Some(32 * 1024));
        assert_eq!(parse_size_k("1024K\n"), Some(1 << 20));
        assert_eq!(parse_size_k("32768K"), Some(32 << 20));
        assert_eq!(parse_size_k("8M"), Some(8 << 20));
        assert_eq!(parse_size_k("1024 KB"), Some(1 << 20));
        assert_eq!(parse_size_k("2GiB"), Some(2 << 30));
        assert_eq!(parse_size_k("48"), Some(48 << 10));
        assert_eq!(parse_size_k("512B"), Some(512));
        assert_eq!(parse_size_k("K"), None);
        assert_eq!(parse_size_k("12Q"), None);
        assert_eq!(parse_size_k("99999999999999999999K"), None);
        assert_eq!(parse_size_k("18446744073709551615K"), None);
    }

    #[test]
    fn x86_cpuinfo() {
        let ci = parse_cpuinfo(CPUINFO_X86);
        assert_eq!(ci.processors, 2);
        assert_eq!(
            model_and_vendor(&ci),
            (
                "AMD EPYC 9R14 96-Core Processor".into(),
                "AuthenticAMD".into()
            )
        );
        assert_eq!(ci.mhz, Some(2596.138));
        assert_eq!(
            ci.package_core,
            vec![("0".into(), "0".into()), ("0".into(), "0".into())]
        );
        assert_eq!(
            flags_of_note(&ci),
            [
                "avx",
                "avx2",
                "avx512f",
                "sse4_2",
                "aes",
                "sha_ni",
                "constant_tsc",
                "nonstop_tsc",
                "hypervisor"
            ]
        );
        assert!(ci.has_flag("hypervisor"));
    }

    #[test]
    fn aarch64_cpuinfo() {
        let ci = parse_cpuinfo(CPUINFO_AARCH64);
        assert_eq!(ci.processors, 2);
        assert_eq!((ci.implementer, ci.part), (Some(0x41), Some(0xd0c)));
        assert_eq!(model_and_vendor(&ci), ("Neoverse-N1".into(), "ARM".into()));
        assert_eq!(flags_of_note(&ci), ["aes", "asimd", "atomics"]);
        assert_eq!(ci.mhz, None);
    }

    #[test]
    fn unknown_arm_part_falls_back_to_numbers() {
        let ci = parse_cpuinfo(&CPUINFO_AARCH64.replace("0xd0c", "0xd0f"));
        assert_eq!(
            model_and_vendor(&ci),
            ("ARM implementer 0x41 part 0xd0f".into(), "ARM".into())
        );
        let ci = parse_cpuinfo(
            "processor : 0\nmodel name : Some SoC\nCPU implementer : 0x99\nCPU part : 0x001\n",
        );
        assert_eq!(model_and_vendor(&ci), ("Some SoC".into(), "0x99".into()));
    }

    #[test]
    fn empty_cpuinfo_gives_defaults() {
        let ci = parse_cpuinfo("");
        assert_eq!(ci, Cpuinfo::default());
        assert_eq!(model_and_vendor(&ci), (String::new(), String::new()));
    }

    #[test]
    fn sysfs_tree_two_sockets_with_smt() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        put(root, "/sys/devices/system/cpu/online", "0-7\n");
        for cpu in 0..8u32 {
            let t = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
            let pkg = cpu / 4;
            // Thread siblings are cpu n and n+2 within each package.
            let first = pkg * 4 + (cpu % 2);
            put(
                root,
                &format!("{t}/physical_package_id"),
                &format!("{pkg}\n"),
            );
            put(
                root,
                &format!("{t}/core_cpus_list"),
                &format!("{},{}\n", first, first + 2),
            );
            // core_id repeats across packages, which must not merge cores.
            put(root, &format!("{t}/core_id"), &format!("{}\n", cpu % 2));
        }
        let c = "/sys/devices/system/cpu/cpu0/cache";
        for (i, (level, kind, size, shared)) in [
            ("1", "Data", "48K", "0,2"),
            ("1", "Instruction", "32K", "0,2"),
            ("2", "Unified", "2048K", "0,2"),
            ("3", "Unified", "105M", "0-3"),
        ]
        .into_iter()
        .enumerate()
        {
            put(root, &format!("{c}/index{i}/level"), level);
            put(root, &format!("{c}/index{i}/type"), kind);
            put(root, &format!("{c}/index{i}/size"), size);
            put(root, &format!("{c}/index{i}/shared_cpu_list"), shared);
        }
        put(root, &format!("{c}/uevent"), "");
        let f = "/sys/devices/system/cpu/cpu0/cpufreq";
        put(root, &format!("{f}/scaling_governor"), "performance\n");
        put(root, &format!("{f}/scaling_cur_freq"), "3100000\n");
        put(root, &format!("{f}/cpuinfo_max_freq"), "3800000\n");

        let cpu = collect(&Fs::at(root), &parse_cpuinfo(CPUINFO_X86));
        assert_eq!((cpu.sockets, cpu.cores, cpu.threads), (2, 4, 8));
        assert_eq!(cpu.caches.len(), 4);
        assert_eq!(
            cpu.caches[0],
            CacheInfo {
                level: 1,
                kind: "Data".into(),
                size_bytes: 48 << 10,
                shared_by: 2
            }
        );
        assert_eq!(cpu.caches[3].size_bytes, 105 << 20);
        assert_eq!(cpu.caches[3].shared_by, 4);
        assert_eq!(cpu.governor.as_deref(), Some("performance"));
        assert_eq!(cpu.mhz_current, Some(3100.0));
        assert_eq!(cpu.mhz_max, Some(3800.0));
    }

    #[test]
    fn without_sysfs_cpuinfo_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let cpu = collect(&Fs::at(dir.path()), &parse_cpuinfo(CPUINFO_X86));
        assert_eq!((cpu.sockets, cpu.cores, cpu.threads), (1, 1, 2));
        assert_eq!(cpu.mhz_current, Some(2596.138));
        assert_eq!(cpu.mhz_max, None);
        assert!(cpu.caches.is_empty());

        let cpu = collect(&Fs::at(dir.path()), &parse_cpuinfo(CPUINFO_AARCH64));
        assert_eq!((cpu.sockets, cpu.cores, cpu.threads), (1, 2, 2));
    }
}
