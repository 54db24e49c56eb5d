//! Parsing of the value grammars shared by every front-end: sizes with K/M/G/T suffixes
//! (powers of 1024, as sysbench and fio count), durations in seconds with optional fractions
//! and unit suffixes, and booleans in every spelling sysbench accepts.
//!
//! Errors name the offending text and the accepted forms; callers add *where* (which option).

use std::fmt;

/// A value that could not be parsed, or is out of range; the message names the text and the
/// accepted forms or the limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{text}' {problem}")]
pub struct UnitError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it: `is not <accepted forms>` or `is too large (at most <limit>)`.
    pub problem: String,
}

impl UnitError {
    /// What would have been accepted, for messages of the form "expected ...".
    pub fn expected(&self) -> String {
        if let Some(rest) = self.problem.strip_prefix("is not ") {
            rest.to_string()
        } else if let Some(limit) = self
            .problem
            .strip_prefix("is too large (")
            .and_then(|r| r.strip_suffix(')'))
        {
            limit.to_string()
        } else {
            self.problem.clone()
        }
    }
}

fn err(text: &str, expected: &'static str) -> UnitError {
    UnitError {
        text: text.to_string(),
        problem: format!("is not {expected}"),
    }
}

fn too_large(text: &str, limit: &str) -> UnitError {
    UnitError {
        text: text.to_string(),
        problem: format!("is too large (at most {limit})"),
    }
}

/// The longest duration any option takes: 10 years (365-day), in seconds. Long enough for
/// any benchmark, short enough that every deadline in nanoseconds or clock ticks fits a u64.
pub const MAX_SECONDS: f64 = 315_360_000.0;

/// Parses a whole number (a count: events, requests, threads); too large for a u64 says so.
pub fn parse_count(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err(text, "a whole number (digits, e.g. 4)"));
    }
    t.parse::<u64>()
        .map_err(|_| too_large(text, &u64::MAX.to_string()))
}

const SIZE_FORMS: &str = "a size (an integer with an optional K, M, G or T suffix, powers of 1024)";

/// Parses `16384`, `16K`, `1m`, `2G`, `4KiB`, `8KB` into bytes (K = 1024).
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits_end == 0 {
        return Err(err(text, SIZE_FORMS));
    }
    let n: u64 = t[..digits_end]
        .parse()
        .map_err(|_| too_large(text, "16 EiB - 1"))?;
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
        .ok_or_else(|| too_large(text, "16 EiB - 1"))
}

const DURATION_FORMS: &str =
    "a duration (seconds such as 10 or 0.5, or with a unit: 500ms, 10s, 2m, 1h)";

/// Parses a duration into seconds: `10`, `0.5`, `10s`, `250ms`, `2m`, `1h`, `100us`.
pub fn parse_seconds(text: &str) -> Result<f64, UnitError> {
    let t = text.trim();
    // A plain number in any notation Rust reads (`1e3`, `inf`): seconds.
    if let Ok(x) = t.parse::<f64>() {
        if x.is_nan() || x < 0.0 || t.starts_with(['-', '+']) {
            return Err(err(text, DURATION_FORMS));
        }
        if x > MAX_SECONDS {
            return Err(too_large(text, "315360000 s, 10 years"));
        }
        return Ok(x);
    }
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
    if !s.is_finite() || s > MAX_SECONDS {
        return Err(too_large(text, "315360000 s, 10 years"));
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
        assert!(parse_seconds("-1").is_err());
        assert_eq!(parse_seconds("1e3").unwrap(), 1000.0);
        for big in [
            "99999999999999999999",
            "1e30",
            "inf",
            "6000000h",
            "315360001",
        ] {
            let e = parse_seconds(big).unwrap_err().to_string();
            assert!(
                e.contains("is too large (at most 315360000 s"),
                "{big}: {e}"
            );
        }
        assert_eq!(parse_seconds("315360000").unwrap(), MAX_SECONDS);
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count(" 42 ").unwrap(), 42);
        assert!(
            parse_count("-1")
                .unwrap_err()
                .to_string()
                .contains("is not a whole number")
        );
        assert!(parse_count("4.5").is_err());
        let e = parse_count("99999999999999999999").unwrap_err().to_string();
        assert!(
            e.contains("is too large (at most 18446744073709551615)"),
            "{e}"
        );
        let e = parse_size("99999999999999999999").unwrap_err().to_string();
        assert!(e.contains("is too large"), "{e}");
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
