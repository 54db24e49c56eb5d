//! The plan: everything a front-end decided, in one grammar-free value. Nothing after the
//! front-end knows whether the user typed sysbench's, fio's or the native command line; the
//! one exception is [`Plan::layout`], the options of the grammar's report, which only
//! renderers read (from the result).

use crate::params::Params;
use crate::rand::Distribution;
use serde::{Deserialize, Serialize};

/// One run of one workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Registry id of the workload.
    pub workload: String,
    /// Resolved parameters (defaults included).
    pub params: Params,
    /// Worker threads (≥ 1).
    pub threads: usize,
    /// Time limit in seconds, excluding warmup; 0 = none.
    pub time_s: f64,
    /// Event limit across all threads; 0 = none.
    pub events: u64,
    /// Warmup before measuring, seconds (events then are run and discarded).
    pub warmup_s: f64,
    /// Open-loop target rate in events/s; 0 = closed loop.
    pub rate: f64,
    /// Interval report period, seconds; 0 = none.
    pub report_interval_s: f64,
    /// Times (seconds after the measurement start) of full reports that then reset counters.
    pub report_checkpoints: Vec<f64>,
    /// Percentiles to report (0–100).
    pub percentiles: Vec<f64>,
    /// Stop waiting for workers this long after the time limit; `None` = wait forever.
    pub forced_shutdown_s: Option<f64>,
    /// `--rand-type`.
    pub rand: Distribution,
    /// Seed of every random stream; 0 = derive one from the clock (the chosen seed is
    /// recorded in the result).
    pub seed: u64,
    /// The options of the grammar's report layout (recorded in the result, where renderers
    /// read them); `None` for grammars whose layouts take none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<crate::layout::Layout>,
}

/// How a grammar spells the general options, for the messages of [`Plan::validate_as`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionNames {
    /// Worker threads.
    pub threads: &'static str,
    /// Time limit.
    pub time: &'static str,
    /// Warmup.
    pub warmup: &'static str,
    /// Open-loop rate.
    pub rate: &'static str,
    /// Interval reports.
    pub report_interval: &'static str,
    /// Random seed.
    pub seed: &'static str,
}

impl OptionNames {
    /// sysbench's.
    pub const SYSBENCH: OptionNames = OptionNames {
        threads: "--threads",
        time: "--time",
        warmup: "--warmup-time",
        rate: "--rate",
        report_interval: "--report-interval",
        seed: "--rand-seed",
    };
    /// The native command line's (`hostbench run`).
    pub const NATIVE: OptionNames = OptionNames {
        threads: "--threads",
        time: "--time",
        warmup: "--warmup",
        rate: "--rate",
        report_interval: "--report-interval",
        seed: "--seed",
    };
    /// ab's (`-W` event loops, `-t` time limit; the rest are hostbench's).
    pub const AB: OptionNames = OptionNames {
        threads: "-W",
        time: "-t",
        warmup: "--warmup",
        rate: "--rate",
        report_interval: "--report-interval",
        seed: "--seed",
    };
    /// httperf's (`--threads` and `--runtime` are hostbench's additions).
    pub const HTTPERF: OptionNames = OptionNames {
        threads: "--threads",
        time: "--runtime",
        warmup: "--warmup",
        rate: "--rate",
        report_interval: "--report-interval",
        seed: "--seed",
    };
    /// The native `hostbench http` command's.
    pub const HTTP: OptionNames = OptionNames {
        threads: "--threads",
        time: "--duration",
        warmup: "--warmup",
        rate: "--rate",
        report_interval: "--report-interval",
        seed: "--seed",
    };
    /// fio's (job options, as in a job file or after `--` on the command line).
    pub const FIO: OptionNames = OptionNames {
        threads: "numjobs (all jobs together)",
        time: "runtime",
        warmup: "ramp_time",
        rate: "rate_iops",
        report_interval: "status-interval",
        seed: "randseed",
    };
}

/// An option with its value as the user typed it: `--time=5`, `-t 5`, `runtime=5`.
fn spell(name: &str, v: impl std::fmt::Display) -> String {
    if name.starts_with('-') && !name.starts_with("--") {
        format!("{name} {v}")
    } else {
        format!("{name}={v}")
    }
}

/// The highest `--rate` accepted: one arrival per nanosecond. A rate beyond the clock's
/// resolution cannot be scheduled (and `1e300` printed as a 301-digit number).
pub const MAX_RATE: f64 = 1e9;

impl Plan {
    /// A plan with sysbench 1.0.20's general defaults for `workload`.
    pub fn new(workload: &str, params: Params) -> Plan {
        Plan {
            workload: workload.to_string(),
            params,
            threads: 1,
            time_s: 10.0,
            events: 0,
            warmup_s: 0.0,
            rate: 0.0,
            report_interval_s: 0.0,
            report_checkpoints: Vec::new(),
            percentiles: vec![95.0],
            forced_shutdown_s: None,
            rand: Distribution::Special {
                iter: 12,
                pct: 1.0,
                res: 75.0,
            },
            seed: 0,
            layout: None,
        }
    }

    /// Checks the general limits; the message names the option to fix, as sysbench spells
    /// it (front-ends of other grammars call [`validate_as`](Self::validate_as) first).
    pub fn validate(&self) -> Result<(), PlanError> {
        self.validate_as(&OptionNames::SYSBENCH)
    }

    /// [`validate`](Self::validate), naming the options as the front-end's grammar does.
    pub fn validate_as(&self, n: &OptionNames) -> Result<(), PlanError> {
        if self.threads == 0 {
            return Err(PlanError::NoThreads { option: n.threads });
        }
        if self.threads > 100_000 {
            return Err(PlanError::TooManyThreads {
                given: spell(n.threads, self.threads),
            });
        }
        for (name, v) in [
            (n.time, self.time_s),
            (n.warmup, self.warmup_s),
            (n.rate, self.rate),
            (n.report_interval, self.report_interval_s),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(PlanError::Negative {
                    option: name,
                    value: v,
                });
            }
        }
        for (name, v) in [
            (n.time, self.time_s),
            (n.warmup, self.warmup_s),
            (n.report_interval, self.report_interval_s),
        ] {
            if v > crate::units::MAX_SECONDS {
                let v = if v < 1e15 {
                    v.to_string()
                } else {
                    format!("{v:e}")
                };
                return Err(PlanError::TooLong {
                    given: spell(name, v),
                });
            }
        }
        if self.seed > crate::rand::MAX_SEED {
            return Err(PlanError::SeedTooLarge {
                given: spell(n.seed, self.seed),
            });
        }
        if let Some(f) = self.forced_shutdown_s
            && !(f.is_finite() && f <= crate::units::MAX_SECONDS)
        {
            return Err(PlanError::ForcedShutdownTooLong { value: f });
        }
        if let Some(&c) = self
            .report_checkpoints
            .iter()
            .find(|&&c| !(c.is_finite() && c <= crate::units::MAX_SECONDS))
        {
            return Err(PlanError::CheckpointTooLate { value: c });
        }
        if self.rate > MAX_RATE {
            return Err(PlanError::RateTooHigh {
                given: spell(
                    n.rate,
                    if self.rate < 1e15 {
                        self.rate.to_string()
                    } else {
                        format!("{:e}", self.rate)
                    },
                ),
            });
        }
        if self.report_interval_s > 0.0 && self.report_interval_s < 0.001 {
            return Err(PlanError::IntervalTooShort {
                option: n.report_interval,
            });
        }
        for &p in &self.percentiles {
            if !(0.0..=100.0).contains(&p) {
                return Err(PlanError::Percentile { value: p });
            }
        }
        if self.report_checkpoints.len() > 256 {
            return Err(PlanError::TooManyCheckpoints);
        }
        Ok(())
    }
}

/// Why a plan is refused ([`Plan::validate_as`]); each message names the option to fix, as
/// the front-end's grammar spells it (`given` is the option with its value, `--time=5` or
/// `-n 5`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// No worker thread.
    #[error("{option} must be at least 1")]
    NoThreads {
        /// The threads option.
        option: &'static str,
    },
    /// More threads than hostbench starts.
    #[error("{given} is more than hostbench can start")]
    TooManyThreads {
        /// The option and its value.
        given: String,
    },
    /// A time, a rate or an interval below zero, or not a number.
    #[error("{option} must be zero or positive, not {value}")]
    Negative {
        /// The option.
        option: &'static str,
        /// Its value.
        value: f64,
    },
    /// A time or an interval beyond [`crate::units::MAX_SECONDS`].
    #[error(
        "{given} is too large (at most {} s, 10 years)",
        crate::units::MAX_SECONDS
    )]
    TooLong {
        /// The option and its value.
        given: String,
    },
    /// A seed beyond [`crate::rand::MAX_SEED`].
    #[error(
        "{given} is too large (at most {} = 2^53 - 1, so that the seed in the result \
         reads back exactly in jq and JavaScript)",
        crate::rand::MAX_SEED
    )]
    SeedTooLarge {
        /// The option and its value.
        given: String,
    },
    /// `--forced-shutdown` beyond [`crate::units::MAX_SECONDS`].
    #[error(
        "--forced-shutdown={value:e} is too large (at most {} s, 10 years)",
        crate::units::MAX_SECONDS
    )]
    ForcedShutdownTooLong {
        /// Its value, s.
        value: f64,
    },
    /// A checkpoint beyond [`crate::units::MAX_SECONDS`].
    #[error(
        "--report-checkpoints value {value:e} is too large (at most {} s, 10 years)",
        crate::units::MAX_SECONDS
    )]
    CheckpointTooLate {
        /// The checkpoint, s.
        value: f64,
    },
    /// A rate beyond [`MAX_RATE`].
    #[error("{given} is too large (at most {MAX_RATE:.0} events per second)")]
    RateTooHigh {
        /// The option and its value.
        given: String,
    },
    /// An interval below 1 ms.
    #[error("{option} must be at least 0.001 s")]
    IntervalTooShort {
        /// The interval option.
        option: &'static str,
    },
    /// A percentile outside 0..100.
    #[error("--percentile values must be within 0..100, not {value}")]
    Percentile {
        /// The percentile.
        value: f64,
    },
    /// More than 256 checkpoints.
    #[error("--report-checkpoints takes at most 256 values")]
    TooManyCheckpoints,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_plan_says_which_limit_in_the_grammars_spelling() {
        let mut p = Plan::new("null", Params::default());
        p.threads = 0;
        let e = p.validate_as(&OptionNames::AB).unwrap_err();
        assert_eq!(e, PlanError::NoThreads { option: "-W" });
        assert_eq!(e.to_string(), "-W must be at least 1");
        p.threads = 200_000;
        let e = p.validate_as(&OptionNames::AB).unwrap_err();
        assert_eq!(e.to_string(), "-W 200000 is more than hostbench can start");
        p.threads = 1;
        p.rate = 2e9;
        let e = p.validate().unwrap_err();
        assert!(matches!(e, PlanError::RateTooHigh { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            "--rate=2000000000 is too large (at most 1000000000 events per second)"
        );
        p.rate = 0.0;
        p.seed = crate::rand::MAX_SEED + 1;
        let e = p.validate().unwrap_err().to_string();
        assert!(
            e.contains("= 2^53 - 1, so that the seed in the result reads back"),
            "{e}"
        );
    }
}
