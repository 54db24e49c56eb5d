//! Memory workloads: sysbench's `memory` test (compatible), STREAM's four kernels, and a
//! pointer-chasing load-latency ladder.

pub mod memlat;
pub mod stream;
pub mod sysbench_memory;
