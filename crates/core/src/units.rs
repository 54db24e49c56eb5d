//! Parsing of the value grammars shared by every front-end: sizes with K/M/G/T suffixes
//! (powers of 1024, as sysbench and fio count), durations in seconds with optional fractions
//! and unit suffixes, and booleans in every spelling sysbench accepts.
//!
//! Errors name the offending text and the accepted forms; callers add *where* (which option).

use std::fmt;

/// A value that could not be parsed; `expected` is a human description of the accepted forms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{text}' is not {expected}")]
pub struct UnitError {
    /// The text as given.
    pub text: String,
    /// What would have been accepted.
    pub expected: &'static str,
}

fn err(text: &str, expected: &'static str) -> UnitError {
    UnitError {
        text: text.to_string(),
        expected,
    }
}

const SIZE_FORMS: &str = "a size (an integer with an optional K, M, G or T suffix, powers of 1024)";

/// Parses `16384`, `16K`, `1m`, `2G`, `4KiB`, `8KB` into bytes (K = 1024).
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits_end == 0 {
        return Err(err(text, SIZE_FORMS));
    }
    let n: u64 = t[..digits_end].parse().map_err(|_| err(text, SIZE_FORMS))?;
    let suffix = t[digits_end..].to_ascii_lowercase();
    let shift = match suffix.as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(err(text, SIZE_FORMS)),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| err(text, "a size below 16 EiB"))
}

const DURATION_FORMS: &str =
    "a duration (seconds such as 10 or 0.5, or with a unit: 500ms, 10s, 2m, 1h)";

/// Parses a duration into seconds: `10`, `0.5`, `10s`, `250ms`, `2m`, `1h`, `100us`.
pub fn parse_seconds(text: &str) -> Result<f64, UnitError> {
    let t = text.trim();
    let num_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    if num_end == 0 {
        return Err(err(text, DURATION_FORMS));
    }
    let n: f64 = t[..num_end]
        .parse()
        .map_err(|_| err(text, DURATION_FORMS))?;
    // Sub-second units divide rather than multiply by 1e-3 etc., so 200us is exactly 0.0002.
    let s = match t[num_end..].trim().to_ascii_lowercase().as_str() {
        "" | "s" | "sec" | "secs" => n,
        "ms" => n / 1e3,
        "us" | "µs" => n / 1e6,
        "ns" => n / 1e9,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(err(text, DURATION_FORMS)),
    };
    if !s.is_finite() {
        return Err(err(text, DURATION_FORMS));
    }
    Ok(s)
}

/// Parses on/off, true/false, yes/no, 1/0 (case-insensitive).
pub fn parse_bool(text: &str) -> Result<bool, UnitError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(err(text, "a boolean (on/off, true/false, yes/no, 1/0)")),
    }
}

/// Bytes, printed with a binary unit (KiB, MiB, ...) where that reads better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut v = self.0 as f64;
        let mut i = 0;
        while v >= 1024.0 && i + 1 < UNITS.len() {
            v /= 1024.0;
            i += 1;
        }
        if i == 0 {
            write!(f, "{} B", self.0)
        } else {
            write!(f, "{v:.1} {}", UNITS[i])
        }
    }
}

/// Formats nanoseconds with an auto-scaled unit (ns, µs, ms, s).
pub fn fmt_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// sysbench's `sb_print_value_size`: `%.5g` of the value scaled by 1024 with a `Ki`/`Mi`/…
/// suffix (callers append `B`).
pub fn sysbench_size(v: f64) -> String {
    const MODS: &[char] = &['K', 'M', 'G', 'T', 'P', 'E'];
    let (mut v, mut i) = (v, 0);
    while i < MODS.len() && v >= 1024.0 {
        v /= 1024.0;
        i += 1;
    }
    let g = fmt_g5(v);
    if i > 0 {
        format!("{g}{}i", MODS[i - 1])
    } else {
        g
    }
}

/// C's `%.5g` for values from 0 to 10^5.
fn fmt_g5(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let exp = v.abs().log10().floor() as i32;
    if !(-4..5).contains(&exp) {
        return format!("{v:.4e}");
    }
    let decimals = (4 - exp).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("16384").unwrap(), 16384);
        assert_eq!(parse_size("16K").unwrap(), 16384);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("2G").unwrap(), 2 << 30);
        assert_eq!(parse_size("256G").unwrap(), 256 << 30);
        assert_eq!(parse_size("1T").unwrap(), 1 << 40);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert!(parse_size("").is_err());
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_seconds("10").unwrap(), 10.0);
        assert_eq!(parse_seconds("0.5").unwrap(), 0.5);
        assert_eq!(parse_seconds("10s").unwrap(), 10.0);
        assert!((parse_seconds("250ms").unwrap() - 0.25).abs() < 1e-12);
        assert_eq!(parse_seconds("200us").unwrap(), 0.0002);
        assert_eq!(parse_seconds("2m").unwrap(), 120.0);
        assert!(parse_seconds("ten").is_err());
        assert!(parse_seconds("5 parsecs").is_err());
    }

    #[test]
    fn bools() {
        for t in ["on", "TRUE", "yes", "1"] {
            assert!(parse_bool(t).unwrap());
        }
        for t in ["off", "false", "No", "0"] {
            assert!(!parse_bool(t).unwrap());
        }
        assert!(parse_bool("maybe").is_err());
    }

    #[test]
    fn display() {
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(2048).to_string(), "2.0 KiB");
        assert_eq!(fmt_ns(15.0), "15.0 ns");
        assert_eq!(fmt_ns(1500.0), "1.50 µs");
    }
}
