//! hostbench-report: every output format is a renderer over [`RunResult`]; none of them
//! measures or decides anything. One file per format.
//!
//! [`RunResult`]: hostbench_core::result::RunResult
#![deny(missing_docs)]

pub mod csv;
pub mod json;
pub mod native;
pub mod stream;
pub mod sysbench;

/// Milliseconds from nanoseconds, for layouts that print ms.
pub fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// A percentile label: `95` for whole numbers, `99.9` otherwise.
pub fn pct_label(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as u64)
    } else {
        format!("{p}")
    }
}
