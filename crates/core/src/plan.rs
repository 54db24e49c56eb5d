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
    pub fn validate(&self) -> Result<(), String> {
        self.validate_as(&OptionNames::SYSBENCH)
    }

    /// [`validate`](Self::validate), naming the options as the front-end's grammar does.
    pub fn validate_as(&self, n: &OptionNames) -> Result<(), String> {
        if self.threads == 0 {
            return Err(format!("{} must be at least 1", n.threads));
        }
        if self.threads > 100_000 {
            return Err(format!(
                "{} is more than hostbench can start",
                spell(n.threads, self.threads)
            ));
        }
        for (name, v) in [
            (n.time, self.time_s),
            (n.warmup, self.warmup_s),
            (n.rate, self.rate),
            (n.report_interval, self.report_interval_s),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(format!("{name} must be zero or positive, not {v}"));
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
                return Err(format!(
                    "{} is too large (at most {} s, 10 years)",
                    spell(name, v),
                    crate::units::MAX_SECONDS
                ));
            }
        }
        if self.seed > crate::rand::MAX_SEED {
            return Err(format!(
                "{} is too large (at most {} = 2^53 - 1, so that the seed in the result \
                 reads back exactly in jq and JavaScript)",
                spell(n.seed, self.seed),
                crate::rand::MAX_SEED
            ));
        }
        if let Some(f) = self.forced_shutdown_s
            && !(f.is_finite() && f <= crate::units::MAX_SECONDS)
        {
            return Err(format!(
                "--forced-shutdown={f:e} is too large (at most {} s, 10 years)",
                crate::units::MAX_SECONDS
            ));
        }
        if let Some(c) = self
            .report_checkpoints
            .iter()
            .find(|&&c| !(c.is_finite() && c <= crate::units::MAX_SECONDS))
        {
            return Err(format!(
                "--report-checkpoints value {c:e} is too large (at most {} s, 10 years)",
                crate::units::MAX_SECONDS
            ));
        }
        if self.rate > MAX_RATE {
            return Err(format!(
                "{} is too large (at most {MAX_RATE:.0} events per second)",
                spell(
                    n.rate,
                    if self.rate < 1e15 {
                        self.rate.to_string()
                    } else {
                        format!("{:e}", self.rate)
                    }
                )
            ));
        }
        if self.report_interval_s > 0.0 && self.report_interval_s < 0.001 {
            return Err(format!("{} must be at least 0.001 s", n.report_interval));
        }
        for &p in &self.percentiles {
            if !(0.0..=100.0).contains(&p) {
                return Err(format!(
                    "--percentile values must be within 0..100, not {p}"
                ));
            }
        }
        if self.report_checkpoints.len() > 256 {
            return Err("--report-checkpoints takes at most 256 values".into());
        }
        Ok(())
    }
}
