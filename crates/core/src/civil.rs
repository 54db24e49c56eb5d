//! Civil dates without a time zone database: days since 1970 to and from year-month-day
//! (Howard Hinnant's algorithms, proleptic Gregorian), RFC 3339 timestamps as results carry
//! them, and C's `ctime` layout the peers' reports print. One copy for the whole project:
//! results, the store's date filters and the fio, IOzone and ab layouts use these.

const DAY_MS: i64 = 86_400_000;

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Year, month (1-12) and day (1-31) of `days` since 1970-01-01 (Howard Hinnant's
/// days-to-civil, proleptic Gregorian).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Formats unix seconds as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn rfc3339_utc(unix_s: f64) -> String {
    let secs = unix_s.floor() as i64;
    let ms = ((unix_s - secs as f64) * 1000.0) as u32;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

/// C's `ctime` of seconds since 1970 (`Sun Nov 22 09:49:20 2026`, no newline), the day of
/// the month padded with a space as C does, or with a zero (`zero_day`) as APR's
/// `apr_ctime` does.
pub fn ctime(secs: i64, zero_day: bool) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let day = if zero_day {
        format!("{d:02}")
    } else {
        format!("{d:2}")
    };
    format!(
        "{} {} {day} {:02}:{:02}:{:02} {y}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(m - 1) as usize],
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// A run of ASCII digits as a number (no sign, no spaces); None otherwise.
pub fn parse_digits(s: &str) -> Option<u32> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Parses `YYYY-MM-DD`; returns the day number.
pub fn parse_date(s: &str) -> Option<i64> {
    let mut it = s.splitn(3, '-');
    let (y, m, d) = (it.next()?, it.next()?, it.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d) = (
        i64::from(parse_digits(y)?),
        parse_digits(m)?,
        parse_digits(d)?,
    );
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
    let h = parse_digits(parts[0])?;
    let mi = parse_digits(parts[1])?;
    let sec = parts.get(2).map_or(Some(0), |p| parse_digits(p))?;
    if h > 23 || mi > 59 || sec > 60 || (frac.is_some() && parts.len() != 3) {
        return None;
    }
    let ms = match frac {
        Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => {
            let f3: String = f.chars().chain("000".chars()).take(3).collect();
            i64::from(parse_digits(&f3)?)
        }
        Some(_) => return None,
        None => 0,
    };
    Some(((i64::from(h) * 60 + i64::from(mi)) * 60 + i64::from(sec)) * 1000 + ms)
}

/// Parses an RFC 3339 timestamp (`2026-11-18T11:06:40.250Z`, `...+02:00`; a space instead of
/// `T` and a missing offset, taken as UTC, are accepted) into Unix milliseconds.
pub fn parse_rfc3339_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.len() < 16 {
        return None;
    }
    // Not split_at: a multi-byte character across byte 10 would panic.
    let (date, rest) = (s.get(..10)?, s.get(10..)?);
    let day = parse_date(date)?;
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let (clock, offset_ms) = if let Some(c) = rest.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else if let Some(i) = rest.rfind(['+', '-']) {
        let (c, off) = rest.split_at(i);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let (oh, om) = off[1..].split_once(':')?;
        let (oh, om) = (parse_digits(oh)?, parse_digits(om)?);
        if oh > 23 || om > 59 || off.len() != 6 {
            return None;
        }
        (c, sign * i64::from(oh * 60 + om) * 60_000)
    } else {
        (rest, 0)
    };
    Some(day * DAY_MS + parse_clock(clock)? - offset_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(rfc3339_utc(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_utc(1_795_000_000.25), "2026-11-18T11:06:40.250Z");
        assert_eq!(rfc3339_utc(951_782_400.0), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn ctime_pads_the_day_as_c_or_apr_does() {
        assert_eq!(ctime(1_795_340_960, false), "Sun Nov 22 09:49:20 2026");
        assert_eq!(ctime(0, false), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(0, true), "Thu Jan 01 00:00:00 1970");
        assert_eq!(ctime(-1, true), "Wed Dec 31 23:59:59 1969");
    }

    #[test]
    fn odd_timestamps_are_none_never_a_panic() {
        for t in [
            "2026-11-1éT00:00:00Z",
            "éééééééééééééééé",
            "2026-11-18T11:06:40+0é:00",
        ] {
            assert_eq!(parse_rfc3339_ms(t), None, "{t}");
        }
    }

    #[test]
    fn days_round_trip() {
        for days in [-800_000i64, -1, 0, 1, 11_016, 20_414, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m as u32, d as u32), days);
        }
    }
}
