//! "Did you mean …?" for the hand-written grammars (sysbench options and commands, fio
//! options on the command line and in job files, suite names; clap suggests on its own for
//! the native grammar): the closest candidate by edit distance, when it is close enough to be
//! a typo.

/// Edit distance between `a` and `b` by characters, counting a swap of two neighbours as one
/// edit (optimal string alignment: the usual typo model).
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev2 = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (prev[j] + 1).min(row[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(prev2[j - 2] + 1);
            }
        }
        prev2 = std::mem::replace(&mut prev, row);
    }
    prev[b.len()]
}

/// The candidate closest to `typed`, if it is within a third of its length (at least one
/// edit, at most three) or `typed` is a prefix of exactly one candidate.
pub fn closest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    let limit = (typed.chars().count() / 3).clamp(1, 3);
    let best = candidates
        .iter()
        .map(|c| (distance(typed, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c);
    best.or_else(|| {
        let mut pre = candidates.iter().filter(|c| c.starts_with(typed));
        match (pre.next(), pre.next()) {
            (Some(c), None) if typed.len() >= 3 => Some(*c),
            _ => None,
        }
    })
}

/// `" (did you mean X?)"` or nothing.
pub fn did_you_mean<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(typed, candidates)
        .map(|c| format!(" (did you mean {c}?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("same", "same"), 0);
        assert_eq!(distance("tiem", "time"), 1);
    }

    #[test]
    fn typos_are_found_and_strangers_are_not() {
        let c = ["cpu_max_prime", "threads", "time", "events"];
        assert_eq!(closest("cpu_max_prim", c), Some("cpu_max_prime"));
        assert_eq!(closest("thread", c), Some("threads"));
        assert_eq!(closest("tiem", c), Some("time"));
        assert_eq!(closest("bogus_option", c), None);
        assert_eq!(closest("cpu_max", c), Some("cpu_max_prime"));
        assert_eq!(did_you_mean("zzz", c), "");
    }
}
