//! Times the store filters on: RFC 3339 timestamps (what results carry), dates and
//! "so long ago" durations typed on the command line, as milliseconds since the Unix epoch.
//! No time zone database: a time without an offset is UTC.

use crate::StoreError;

/// Which end of a date range a bound is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// `--since`: the earliest start time included.
    Since,
    /// `--until`: the latest start time included; a date alone includes that whole day.
    Until,
}

const DAY_MS: i64 = 86_400_000;

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

fn num(s: &str) -> Option<u32> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Parses `YYYY-MM-DD`; returns the day number.
fn parse_date(s: &str) -> Option<i64> {
    let mut it = s.splitn(3, '-');
    let (y, m, d) = (it.next()?, it.next()?, it.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d) = (i64::from(num(y)?), num(m)?, num(d)?);
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

/// Parses `HH:MM[:SS[.fff]]`; returns milliseconds into the day.
fn parse_clock(s: &str) -> Option<i64> {
    let (hms, frac) = match s.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.len() != 2) {
        return None;
    }
    let h = num(parts[0])?;
    let mi = num(parts[1])?;
    let sec = parts.get(2).map_or(Some(0), |p| num(p))?;
    if h > 23 || mi > 59 || sec > 60 || (frac.is_some() && parts.len() != 3) {
        return None;
    }
    let ms = match frac {
        Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => {
            let f3: String = f.chars().chain("000".chars()).take(3).collect();
            i64::from(num(&f3)?)
        }
        Some(_) => return None,
        None => 0,
    };
    Some(((i64::from(h) * 60 + i64::from(mi)) * 60 + i64::from(sec)) * 1000 + ms)
}

/// Parses an RFC 3339 timestamp (`2026-11-18T11:06:40.250Z`, `...+02:00`; a space instead of
/// `T` and a missing offset, taken as UTC, are accepted) into Unix milliseconds.
pub fn parse_timestamp_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.len() < 16 {
        return None;
    }
    let (date, rest) = s.split_at(10);
    let day = parse_date(date)?;
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let (clock, offset_ms) = if let Some(c) = rest.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else if let Some(i) = rest.rfind(['+', '-']) {
        let (c, off) = rest.split_at(i);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let (oh, om) = off[1..].split_once(':')?;
        let (oh, om) = (num(oh)?, num(om)?);
        if oh > 23 || om > 59 || off.len() != 6 {
            return None;
        }
        (c, sign * i64::from(oh * 60 + om) * 60_000)
    } else {
        (rest, 0)
    };
    Some(day * DAY_MS + parse_clock(clock)? - offset_ms)
}

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
    let n: i64 = num(&s[..s.len() - 1])?.into();
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
    use hostbench_core::result::rfc3339_utc;

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
