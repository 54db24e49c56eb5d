//! fio's number formatting (`lib/num2str.c`'s behaviour), shared by its layouts and its
//! status line.

/// fio's `num2str`: at most `maxlen` digits, dividing by 1000 or 1024 and adding a prefix
/// (`k`/`Ki`, `M`/`Mi`, ... `E`/`Ei`) until the number fits, with as many decimals as the
/// room left. Rounding is fio's: the decimals are the remainder of the last division
/// rounded to that many places, and a fraction that rounds up to one carries into the
/// integer part (20.99 MiB prints `21.0MiB`, 9.9990 MiB `10.00MiB`); with no room for
/// decimals the integer part is rounded half up. Every size, bandwidth and IOPS figure of
/// fio's normal layout goes through here.
pub fn num2str(num: u64, maxlen: usize, pow2: bool, unit: &str) -> String {
    num2str_from(num, 0, maxlen, pow2, unit)
}

/// fio's `num2str` of a number already in units of the `first` prefix (fio's `base`
/// argument: 1 = `k`/`Ki`, as for a figure in KiB/s). A unit in bits (`bit`, `bit/s`:
/// fio's `N2S_BIT`, `N2S_BITPERSEC`) takes a number of bytes and prints 8 times it, as
/// fio's does (after the prefix `first` is chosen).
pub fn num2str_from(num: u64, first: usize, maxlen: usize, pow2: bool, unit: &str) -> String {
    let num = if unit.starts_with("bit") {
        num.wrapping_mul(8)
    } else {
        num
    };
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let prefix = if pow2 { IEC } else { SI };
    let base: u64 = if pow2 { 1024 } else { 1000 };
    let digits = |n: u64| n.to_string().len();
    let mut whole = num;
    let mut post = first;
    // The remainder of the last division, when there was one.
    let mut rest: Option<u64> = None;
    while post < prefix.len() && digits(whole) > maxlen {
        rest = Some(whole % base);
        whole /= base;
        post += 1;
    }
    // fio's table ends at E; past it (not reachable with 64 bits and maxlen >= 3) fio
    // prints no prefix.
    let post = if post >= prefix.len() { 0 } else { post };
    let Some(rest) = rest else {
        return format!("{whole}{}{unit}", prefix[post]);
    };
    let room = maxlen as i64 - digits(whole) as i64;
    if room <= 1 {
        if rest >= base / 2 {
            whole += 1;
        }
        return format!("{whole}{}{unit}", prefix[post]);
    }
    let places = (room - 1) as usize;
    // "0.99" or, when the remainder rounds up to a whole unit, "1.00".
    let frac = format!("{:.*}", places, rest as f64 / base as f64);
    if frac.starts_with('1') {
        whole += 1;
    }
    format!("{whole}.{}{}{unit}", &frac[2..], prefix[post])
}
