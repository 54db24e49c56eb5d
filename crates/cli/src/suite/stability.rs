//! The stability rule: run an entry at least `min` times, then keep repeating while the
//! relative standard deviation (sample standard deviation over the mean, in percent) of its
//! headline figure is not below the rule's threshold, and never more than `max` times.
//! Without a rule an entry runs exactly `max` times. Every repetition counts; none is dropped
//! as an outlier, so a first run that reads low (frequency ramp, cold page cache) shows up as
//! spread instead of being hidden.

use serde::Serialize;

/// Relative standard deviation above which an entry without a rule of its own gets a
/// `wide_spread` warning, percent.
pub const WIDE_SPREAD_PCT: f64 = 5.0;

/// How many times an entry may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Reps {
    /// Runs always made.
    pub min: u32,
    /// Runs never exceeded.
    pub max: u32,
}

/// Summary statistics of one entry's headline values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    /// Values.
    pub n: usize,
    /// Median (mean of the middle two for an even count).
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation over the mean, percent; 0 for one value.
    pub rsd_pct: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Stats {
    /// Statistics of `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Stats> {
        if values.is_empty() {
            return None;
        }
        let n = values.len();
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let mean = v.iter().sum::<f64>() / n as f64;
        let rsd_pct = if n < 2 {
            0.0
        } else {
            let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            if mean == 0.0 {
                if var == 0.0 { 0.0 } else { f64::INFINITY }
            } else {
                var.sqrt() / mean.abs() * 100.0
            }
        };
        Some(Stats {
            n,
            median,
            mean,
            rsd_pct,
            min: v[0],
            max: v[n - 1],
        })
    }
}

/// Whether another repetition is needed after `values` (one headline value per run so far).
pub fn another_run(values: &[f64], reps: Reps, rule_pct: Option<f64>) -> bool {
    let n = values.len() as u32;
    if n < reps.min {
        return true;
    }
    if n >= reps.max {
        return false;
    }
    match rule_pct {
        // No rule: every allowed run is made.
        None => true,
        // One value has no spread to judge.
        Some(_) if n < 2 => true,
        Some(limit) => Stats::of(values).is_none_or(|s| s.rsd_pct >= limit),
    }
}

/// What the repetitions of an entry say about its figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The spread fell below the rule.
    Stable,
    /// The rule was not met within `max` runs.
    Unstable,
    /// No rule, and the spread is within [`WIDE_SPREAD_PCT`].
    Consistent,
    /// No rule, and the spread is above [`WIDE_SPREAD_PCT`].
    WideSpread,
    /// One run: no spread to judge.
    Single,
}

impl Verdict {
    /// The verdict for final statistics `s` under `rule_pct`.
    pub fn of(s: &Stats, rule_pct: Option<f64>) -> Verdict {
        if s.n < 2 {
            return Verdict::Single;
        }
        match rule_pct {
            Some(limit) if s.rsd_pct < limit => Verdict::Stable,
            Some(_) => Verdict::Unstable,
            None if s.rsd_pct > WIDE_SPREAD_PCT => Verdict::WideSpread,
            None => Verdict::Consistent,
        }
    }

    /// Whether the figure should carry a `wide_spread` warning.
    pub fn is_wide(self) -> bool {
        matches!(self, Verdict::Unstable | Verdict::WideSpread)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Reps = Reps { min: 3, max: 10 };

    /// Runs the rule over a stream of synthetic timings; returns how many it consumed.
    fn runs_taken(stream: &[f64], reps: Reps, rule: Option<f64>) -> usize {
        let mut seen = Vec::new();
        for &v in stream {
            if !another_run(&seen, reps, rule) {
                break;
            }
            seen.push(v);
        }
        seen.len()
    }

    #[test]
    fn statistics() {
        let s = Stats::of(&[10.0, 12.0, 11.0, 13.0]).unwrap();
        assert_eq!(s.median, 11.5);
        assert_eq!(s.mean, 11.5);
        assert_eq!((s.min, s.max), (10.0, 13.0));
        // Sample stddev of 10..13 is sqrt(5/3).
        assert!((s.rsd_pct - (5.0f64 / 3.0).sqrt() / 11.5 * 100.0).abs() < 1e-9);
        assert_eq!(Stats::of(&[7.0]).unwrap().rsd_pct, 0.0);
        assert_eq!(Stats::of(&[0.0, 0.0]).unwrap().rsd_pct, 0.0);
        assert_eq!(Stats::of(&[0.0, 1.0, -1.0]).unwrap().rsd_pct, f64::INFINITY);
        assert!(Stats::of(&[]).is_none());
    }

    #[test]
    fn steady_timings_stop_at_the_minimum() {
        let steady = [100.0, 100.5, 99.8, 100.2, 100.1, 99.9];
        assert_eq!(runs_taken(&steady, R, Some(2.0)), 3);
        let s = Stats::of(&steady[..3]).unwrap();
        assert_eq!(Verdict::of(&s, Some(2.0)), Verdict::Stable);
    }

    #[test]
    fn a_noisy_start_needs_more_runs_until_the_spread_settles() {
        // A cold first run 5% low, then steady ones: with one value 5 below n-1 equal ones the
        // spread is 5/sqrt(n) / (100 - 5/n) percent, which first falls below 2% at n = 7.
        let stream = [
            95.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0,
        ];
        assert_eq!(runs_taken(&stream, R, Some(2.0)), 7);
        assert!(Stats::of(&stream[..6]).unwrap().rsd_pct >= 2.0);
        let s = Stats::of(&stream[..7]).unwrap();
        assert!(s.rsd_pct < 2.0, "{s:?}");
        assert_eq!(Verdict::of(&s, Some(2.0)), Verdict::Stable);
        // A start 20% low never settles below 2% within 10 runs.
        let mut cold = stream;
        cold[0] = 80.0;
        assert_eq!(runs_taken(&cold, R, Some(2.0)), 10);
    }

    #[test]
    fn noise_that_never_settles_stops_at_the_maximum_and_is_unstable() {
        let noisy: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 100.0 } else { 120.0 })
            .collect();
        assert_eq!(runs_taken(&noisy, R, Some(2.0)), 10);
        let s = Stats::of(&noisy[..10]).unwrap();
        let v = Verdict::of(&s, Some(2.0));
        assert_eq!(v, Verdict::Unstable);
        assert!(v.is_wide());
    }

    #[test]
    fn without_a_rule_every_allowed_run_is_made() {
        let steady = [100.0; 12];
        assert_eq!(runs_taken(&steady, R, None), 10);
        assert_eq!(
            runs_taken(&steady, Reps { min: 3, max: 3 }, None),
            3,
            "repetitions = 3"
        );
        let s = Stats::of(&[100.0, 90.0, 110.0]).unwrap();
        assert_eq!(Verdict::of(&s, None), Verdict::WideSpread);
        let s = Stats::of(&[100.0, 101.0, 99.0]).unwrap();
        assert_eq!(Verdict::of(&s, None), Verdict::Consistent);
    }

    #[test]
    fn one_run_is_judged_by_nobody() {
        let one = Reps { min: 1, max: 1 };
        assert_eq!(runs_taken(&[5.0, 5.0], one, Some(1.0)), 1);
        let s = Stats::of(&[5.0]).unwrap();
        assert_eq!(Verdict::of(&s, Some(1.0)), Verdict::Single);
        // min 1 with a rule: a second run is needed before anything can be judged.
        assert_eq!(
            runs_taken(&[5.0, 5.0, 5.0], Reps { min: 1, max: 5 }, Some(1.0)),
            2
        );
    }
}
