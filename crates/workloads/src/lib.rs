//! hostbench-workloads: every benchmark hostbench can run, one file each, listed once in
//! [`registry`]. Workloads implement [`hostbench_core::workload::Workload`] and never touch
//! time limits, printing or signals: the runner owns those.
#![deny(missing_docs)]

pub mod cpu;
pub mod db;
pub mod disk;
pub mod http;
#[cfg(feature = "lua")]
pub mod lua;
pub mod memory;
pub mod registry;
pub mod sys;

pub use registry::{WORKLOADS, by_command, by_sysbench_test, find};
