//! Memory workloads: sysbench's `memory` test (compatible), STREAM's four kernels, and a
//! pointer-chasing load-latency ladder.

pub mod memlat;
pub mod stream;
pub mod sysbench_memory;

use hostbench_core::host::{CacheInfo, HostInfo};

/// The last-level data or unified cache the host reports (the highest level; the largest
/// if a level lists several), one instance of it.
pub fn last_level_cache(host: &HostInfo) -> Option<&CacheInfo> {
    host.cpu
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction" && c.size_bytes > 0)
        .max_by_key(|c| (c.level, c.size_bytes))
}
