//! hostbench-report: every output format is a renderer over [`RunResult`] (or, for
//! `compare` and `report`, over a [`Comparison`] and its runs); none of them measures or
//! decides anything. One file per format; [`svg`] holds the charts [`html`] embeds.
//!
//! [`RunResult`]: hostbench_core::result::RunResult
//! [`Comparison`]: hostbench_core::compare::Comparison
#![deny(missing_docs)]

pub mod ab;
pub mod biff;
pub mod compare;
pub mod csv;
pub mod fileio;
pub mod fio;
pub mod fleet;
pub mod html;
pub mod http;
pub mod httperf;
pub mod insert_race;
pub mod iozone;
pub mod json;
pub mod native;
pub mod smallfiles;
pub mod stream;
pub mod svg;
pub mod sysbench;
pub mod trend;

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

/// A figure with about four significant digits, without exponent notation for everyday
/// magnitudes: `1234567` → `1.235M`, `12345.6` → `12346`, `12.3456` → `12.35`,
/// `0.0012345` → `0.001234`.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    let s = if a >= 1e12 {
        format!("{:.3}T", v / 1e12)
    } else if a >= 1e9 {
        format!("{:.3}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.3}M", v / 1e6)
    } else if a >= 1000.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        let digits = (3 - a.log10().floor() as i32).clamp(0, 12) as usize;
        format!("{v:.digits$}")
    };
    if s == "-0" { "0".into() } else { s }
}

pub use hostbench_core::civil::ctime;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(num(1_234_567.0), "1.235M");
        assert_eq!(num(12_345.6), "12346");
        assert_eq!(num(999.94), "999.9");
        assert_eq!(num(12.3456), "12.35");
        assert_eq!(num(1.0), "1.000");
        assert_eq!(num(0.001_234_5), "0.001234");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(-2_500_000_000.0), "-2.500G");
        assert_eq!(num(f64::NAN), "-");
    }
}
