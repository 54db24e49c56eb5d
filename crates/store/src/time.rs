//! Times the store filters on: RFC 3339 timestamps (what results carry), dates and
//! "so long ago" durations typed on the command line, as milliseconds since the Unix epoch.
//! No time zone database: a time without an offset is UTC.

use crate::StoreError;
use hostbench_core::civil::{parse_date, parse_digits, parse_rfc3339_ms};

/// Parses an RFC 3339 timestamp into Unix milliseconds (`civil::parse_rfc3339_ms`).
pub fn parse_timestamp_ms(s: &str) -> Option<i64> {
    parse_rfc3339_ms(s)
}

/// Which end of a date range a bound is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// `--since`: the earliest start time included.
    Since,
    /// `--until`: the latest start time included; a date alone includes that whole day.
    Until,
}

const DAY_MS: i64 = 86_400_000;

/// Parses `7d`, `12h`, `90m`, `30s`, `2w` into milliseconds.
fn parse_ago(s: &str) -> Option<i64> {
    let unit = s.chars().last()?;
    let per = match unit {
        's' => 1_000,
        'm' => 60_000,
        'h' => 3_600_000,
        'd' => DAY_MS,
        'w' => 7 * DAY_MS,
        _ => return None,
    };
    let n: i64 = parse_digits(&s[..s.len() - 1])?.into();
    Some(n * per)
}

/// Turns a `--since`/`--until` value into Unix milliseconds: a date (`2026-11-01`, the
/// start of the day for `--since`, its last millisecond for `--until`), a timestamp
/// (`2026-11-01T12:00`, `2026-11-01 12:00:00Z`, `...+02:00`; UTC unless it says otherwise)
/// or a duration ago (`30m`, `12h`, `7d`, `2w`).
pub fn parse_bound(s: &str, bound: Bound, now_ms: i64) -> Result<i64, StoreError> {
    let t = s.trim();
    let parsed = if t.len() == 10 {
        parse_date(t).map(|d| match bound {
            Bound::Since => d * DAY_MS,
            Bound::Until => (d + 1) * DAY_MS - 1,
        })
    } else if let Some(ago) = parse_ago(t) {
        Some(now_ms - ago)
    } else {
        parse_timestamp_ms(t)
    };
    parsed.ok_or_else(|| StoreError::BadDate {
        input: s.to_string(),
    })
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::civil::rfc3339_utc;

    #[test]
    fn timestamps_round_trip_with_the_result_format() {
        for ms in [0i64, 951_782_400_000, 1_795_000_000_250, 4_102_444_799_999] {
            let s = rfc3339_utc(ms as f64 / 1000.0);
            assert_eq!(parse_timestamp_ms(&s), Some(ms), "{s}");
        }
    }

    #[test]
    fn offsets_and_spaces() {
        let z = parse_timestamp_ms("2026-11-18T11:06:40Z").unwrap();
        assert_eq!(parse_timestamp_ms("2026-11-18T13:06:40+02:00"), Some(z));
        assert_eq!(parse_timestamp_ms("2026-11-18T10:36:40-00:30"), Some(z));
        assert_eq!(parse_timestamp_ms("2026-11-18 11:06:40"), Some(z));
        assert_eq!(parse_timestamp_ms("2026-11-18T11:06"), Some(z - 40_000));
        assert_eq!(parse_timestamp_ms("2026-11-18T11:06:40.5Z"), Some(z + 500));
    }

    #[test]
    fn bounds() {
        let day = parse_bound("2026-11-18", Bound::Since, 0).unwrap();
        assert_eq!(
            parse_bound("2026-11-18", Bound::Until, 0).unwrap(),
            day + DAY_MS - 1
        );
        assert_eq!(
            Some(day),
            parse_timestamp_ms("2026-11-18T00:00:00.000Z"),
            "a date starts at midnight UTC"
        );
        assert_eq!(
            parse_bound("7d", Bound::Since, 10 * DAY_MS).unwrap(),
            3 * DAY_MS
        );
        assert_eq!(parse_bound("90m", Bound::Since, 0).unwrap(), -5_400_000);
    }

    #[test]
    fn bad_dates_are_errors() {
        for s in [
            "",
            "yesterday",
            "2026-13-01",
            "2026-02-30",
            "2025-02-29",
            "2026-1-1",
            "2026-11-18T25:00",
            "2026-11-18T11:06:40+2",
            "7x",
            "d",
            "2026-11-18T11:06.5",
        ] {
            assert!(
                parse_bound(s, Bound::Since, 0).is_err(),
                "{s:?} should not parse"
            );
        }
        assert!(parse_bound("2024-02-29", Bound::Since, 0).is_ok());
    }
}
