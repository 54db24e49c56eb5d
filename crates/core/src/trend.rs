//! A figure over time: which runs step out of line with the runs before them.
//!
//! `hostbench trend` shows one headline figure per workload variant, run after run. A run is
//! *out of line* when it lies further from the median of the runs before it (since the last
//! change) than both
//! - [`ROBUST_Z`] robust standard deviations of those runs (1.4826 × their median absolute
//!   deviation: the standard deviation of a normal sample, read without being moved by the
//!   outliers themselves), and
//! - the noise threshold (2 % by default, as `compare` uses): a machine's figures move by
//!   that much from run to run without anything having changed.
//!
//! Two out-of-line runs in a row on the same side are a *change*: the level moved, and the
//! first of them starts the new level (the runs before it no longer describe what comes).
//! A lone out-of-line run is an *outlier*. A run needs [`MIN_HISTORY`] runs before it in its
//! level to be judged at all. The rule is simple on purpose: it says where to look, in
//! words a person can check against the numbers printed beside it.

use crate::stats;
use serde::{Deserialize, Serialize};

/// How many robust standard deviations from the median make a run out of line.
pub const ROBUST_Z: f64 = 3.0;

/// Runs before a run (in its level) needed to judge it.
pub const MIN_HISTORY: usize = 3;

/// How a run stands against the runs before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// Too few runs before it to judge (the first runs, or the first after a change).
    Unjudged,
    /// In line with the runs before it.
    InLine,
    /// Out of line, alone: the run after it is back in line (or there is none yet).
    Outlier,
    /// Out of line, and so is the next run on the same side: the level changed here.
    Change,
}

/// One run's judgement, with what it was judged against.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The run's value.
    pub value: f64,
    /// How it stands.
    pub mark: Mark,
    /// Median of the runs it was judged against (`None` when unjudged).
    pub baseline: Option<f64>,
    /// `value / baseline - 1` (`None` when unjudged).
    pub change: Option<f64>,
}

/// Judges `values` (oldest first) as the module doc says, with the noise threshold
/// `threshold` (a fraction: 0.02). Non-finite values are unjudged and do not count as
/// history.
pub fn judge(values: &[f64], threshold: f64) -> Vec<Point> {
    // First pass: out of line or not against the current level; a change restarts it.
    let mut points: Vec<Point> = Vec::with_capacity(values.len());
    let mut level_start = 0;
    let mut i = 0;
    while i < values.len() {
        let v = values[i];
        let history: Vec<f64> = stats::finite(&values[level_start..i]);
        let verdict = if !v.is_finite() || history.len() < MIN_HISTORY {
            None
        } else {
            let med = stats::median(&history).expect("history is not empty");
            Some((med, side(v, &history, med, threshold)))
        };
        match verdict {
            None => points.push(Point {
                value: v,
                mark: Mark::Unjudged,
                baseline: None,
                change: None,
            }),
            Some((med, 0)) => points.push(point(v, med, Mark::InLine)),
            Some((med, s)) => {
                // The next run, against the same history: out on the same side too?
                let next_same = values
                    .get(i + 1)
                    .filter(|n| n.is_finite())
                    .is_some_and(|&n| side(n, &history, med, threshold) == s);
                if next_same {
                    points.push(point(v, med, Mark::Change));
                    level_start = i;
                } else {
                    points.push(point(v, med, Mark::Outlier));
                }
            }
        }
        i += 1;
    }
    points
}

fn point(value: f64, baseline: f64, mark: Mark) -> Point {
    Point {
        value,
        mark,
        baseline: Some(baseline),
        change: (baseline != 0.0).then(|| value / baseline - 1.0),
    }
}

/// -1 below, +1 above, 0 in line: further from `med` than [`ROBUST_Z`] robust standard
/// deviations of `history` and than `threshold` of `med`.
fn side(v: f64, history: &[f64], med: f64, threshold: f64) -> i8 {
    let dev: Vec<f64> = history.iter().map(|x| (x - med).abs()).collect();
    let mad = stats::median(&dev).unwrap_or(0.0);
    let allowed = (ROBUST_Z * 1.4826 * mad).max(threshold * med.abs());
    let d = v - med;
    if d.abs() <= allowed {
        0
    } else if d > 0.0 {
        1
    } else {
        -1
    }
}

/// `hostbench trend`'s document: one series per workload variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    /// `hostbench.trend`.
    pub schema: String,
    /// What was followed: `label NAME` or `host NAME`.
    pub subject: String,
    /// The noise threshold the runs were judged with (a fraction).
    pub threshold: f64,
    /// One per workload variant, in order of first appearance.
    pub series: Vec<TrendSeries>,
}

/// One variant's figure, run after run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrendSeries {
    /// Workload id.
    pub workload: String,
    /// The settings that tell the variant from others of its workload (`threads=1,
    /// max_prime=20000`).
    pub variant: String,
    /// The figure followed (its headline unless `--figure` chose another).
    pub figure: String,
    /// What the figure is, in words (absent for runs stored before figures had labels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Its unit.
    pub unit: String,
    /// Which way is better.
    pub better: crate::result::Better,
    /// Its runs, oldest first.
    pub points: Vec<TrendPoint>,
}

/// One run in a series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrendPoint {
    /// Run id.
    pub id: String,
    /// Start, RFC 3339.
    pub started_at: String,
    /// The run's label.
    pub label: Option<String>,
    /// The judgement ([`judge`]).
    #[serde(flatten)]
    pub point: Point,
    /// How the run ended when not as planned (`error`, `interrupted`, `forced_shutdown`):
    /// such a run is never judged and is no history for the runs after it (its figure
    /// covers part of a run, or a failed one). Absent for a run that ended normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn marks(values: &[f64]) -> Vec<Mark> {
        judge(values, 0.02).into_iter().map(|p| p.mark).collect()
    }

    #[test]
    fn a_step_is_a_change_and_a_spike_an_outlier() {
        use Mark::*;
        let v = [
            100.0, 101.0, 99.5, 100.5, 90.0, 90.5, 89.8, 90.2, 120.0, 90.1,
        ];
        assert_eq!(
            marks(&v),
            [
                Unjudged, Unjudged, Unjudged, InLine, Change, Unjudged, Unjudged, InLine, Outlier,
                InLine
            ]
        );
        let p = judge(&v, 0.02);
        assert_eq!(p[4].baseline, Some(100.25));
        assert!((p[4].change.unwrap() + 0.1022).abs() < 1e-3, "{:?}", p[4]);
    }

    #[test]
    fn noise_within_the_threshold_is_never_out_of_line() {
        // Identical history (MAD 0): the noise threshold alone decides.
        let v = [100.0, 100.0, 100.0, 101.9, 98.1, 100.0];
        assert!(
            marks(&v)[3..].iter().all(|m| *m == Mark::InLine),
            "{:?}",
            marks(&v)
        );
        assert_eq!(marks(&[100.0, 100.0, 100.0, 103.0])[3], Mark::Outlier);
    }

    #[test]
    fn too_short_and_non_finite_are_unjudged() {
        assert!(judge(&[], 0.02).is_empty());
        assert!(marks(&[1.0, 2.0, 3.0]).iter().all(|m| *m == Mark::Unjudged));
        let m = marks(&[1.0, 1.0, f64::NAN, 1.0, f64::INFINITY, 1.0]);
        assert_eq!(m[2], Mark::Unjudged);
        assert_eq!(m[3], Mark::Unjudged, "NaN is no history");
        assert_eq!(m[4], Mark::Unjudged);
        assert_eq!(m[5], Mark::InLine);
    }

    proptest! {
        /// Figures that wander less than the threshold around one level are never flagged,
        /// whatever their order.
        #[test]
        fn steady_figures_are_in_line(noise in proptest::collection::vec(-0.009f64..0.009, 4..40),
                                      level in 1.0f64..1e9) {
            let v: Vec<f64> = noise.iter().map(|n| level * (1.0 + n)).collect();
            for p in judge(&v, 0.02) {
                prop_assert!(matches!(p.mark, Mark::Unjudged | Mark::InLine), "{:?}", p);
            }
        }

        /// A step of 20 % after a steady stretch is found, at the step.
        #[test]
        fn a_step_is_found_where_it_is(before in 3usize..15, after in 2usize..15,
                                       up in any::<bool>(), level in 1.0f64..1e6) {
            let to = if up { level * 1.2 } else { level * 0.8 };
            let v: Vec<f64> = std::iter::repeat_n(level, before)
                .chain(std::iter::repeat_n(to, after))
                .collect();
            let m: Vec<Mark> = judge(&v, 0.02).into_iter().map(|p| p.mark).collect();
            prop_assert_eq!(m[before], Mark::Change);
            prop_assert!(m.iter().filter(|x| **x == Mark::Change).count() == 1, "{:?}", m);
        }
    }
}
