//! Memory: sizes from /proc/meminfo, NUMA nodes from /sys/devices/system/node, transparent
//! hugepages mode from /sys/kernel/mm/transparent_hugepage.

use hostbench_core::host::MemoryInfo;

use crate::cpu::parse_cpu_list;
use crate::fs::Fs;

/// Value of a /proc/meminfo line in bytes; the kernel writes `kB` (meaning KiB) for sizes
/// and no unit for counts such as `HugePages_Total`.
fn meminfo_value(v: &str) -> Option<u64> {
    let mut it = v.split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    match it.next() {
        None => Some(n),
        Some(u) if u.eq_ignore_ascii_case("kb") => n.checked_mul(1024),
        Some(_) => None,
    }
}

/// Parses /proc/meminfo into the size fields of [`MemoryInfo`]; absent lines stay 0.
pub(crate) fn parse_meminfo(s: &str) -> MemoryInfo {
    let mut m = MemoryInfo::default();
    for line in s.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let Some(v) = meminfo_value(value) else {
            continue;
        };
        match key.trim() {
            "MemTotal" => m.total_bytes = v,
            "MemAvailable" => m.available_bytes = v,
            "SwapTotal" => m.swap_total_bytes = v,
            "HugePages_Total" => m.hugepages_total = v,
            _ => {}
        }
    }
    m
}

/// The selected mode in a sysfs choice file such as `always [madvise] never`.
pub(crate) fn bracketed(s: &str) -> Option<String> {
    let start = s.find('[')? + 1;
    let len = s[start..].find(']')?;
    let word = s[start..start + len].trim();
    (!word.is_empty()).then(|| word.to_string())
}

/// Everything about memory.
pub(crate) fn collect(fs: &Fs) -> MemoryInfo {
    let mut m = fs
        .read("/proc/meminfo")
        .map(|s| parse_meminfo(&s))
        .unwrap_or_default();
    m.numa_nodes = match fs.read_trimmed("/sys/devices/system/node/online") {
        Some(list) => parse_cpu_list(&list).len() as u32,
        // Kernels built without NUMA support have no node directory, and such a machine
        // is one node.
        None => 1,
    };
    m.transparent_hugepages = fs
        .read("/sys/kernel/mm/transparent_hugepage/enabled")
        .and_then(|s| bracketed(&s));
    m
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::fs::fixture::put;

    pub(crate) const MEMINFO: &str = "\
MemTotal:       24684084 kB
MemFree:        23912340 kB
MemAvailable:   24132884 kB
Buffers:           20436 kB
Cached:           456012 kB
SwapCached:            0 kB
SwapTotal:       2097148 kB
SwapFree:        2097148 kB
AnonHugePages:         0 kB
HugePages_Total:      64
HugePages_Free:       64
Hugepagesize:       2048 kB
";

    #[test]
    fn meminfo_parses_to_bytes() {
        let m = parse_meminfo(MEMINFO);
        assert_eq!(m.total_bytes, 24684084 * 1024);
        assert_eq!(m.available_bytes, 24132884 * 1024);
        assert_eq!(m.swap_total_bytes, 2097148 * 1024);
        assert_eq!(m.hugepages_total, 64);
        assert_eq!(
            parse_meminfo("garbage\nMemTotal: lots kB\n"),
            MemoryInfo::default()
        );
    }

    #[test]
    fn thp_mode_is_the_bracketed_word() {
        assert_eq!(
            bracketed("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            bracketed("[always] madvise never").as_deref(),
            Some("always")
        );
        assert_eq!(bracketed("always madvise never"), None);
        assert_eq!(bracketed("[]"), None);
        assert_eq!(bracketed("always [madvise"), None);
    }

    #[test]
    fn collect_from_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        put(root, "/proc/meminfo", MEMINFO);
        put(root, "/sys/devices/system/node/online", "0-1\n");
        put(
            root,
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "always madvise [never]\n",
        );
        let m = collect(&Fs::at(root));
        assert_eq!(m.numa_nodes, 2);
        assert_eq!(m.transparent_hugepages.as_deref(), Some("never"));
        assert_eq!(m.hugepages_total, 64);

        let empty = tempfile::tempdir().unwrap();
        let m = collect(&Fs::at(empty.path()));
        assert_eq!(
            m,
            MemoryInfo {
                numa_nodes: 1,
                ..MemoryInfo::default()
            }
        );
    }
}
