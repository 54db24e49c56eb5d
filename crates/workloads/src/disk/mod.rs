//! Disk workloads: sysbench fileio, the fio-class queue-depth engine, iozone, small files.
//! Files live only in the directory the user gave; cleanup removes only what hostbench made.

pub mod diskstat;
pub mod fileio;
pub mod files;
pub mod fio;
pub mod iozone;
pub mod smallfiles;

use hostbench_core::recorder::Counter;

/// The counters every disk workload reports: read and write calls, fsyncs and other file
/// operations, and the bytes moved each way.
pub(crate) const IO_COUNTERS: &[Counter] = &[
    Counter::Reads,
    Counter::Writes,
    Counter::Other,
    Counter::BytesRead,
    Counter::BytesWritten,
];
