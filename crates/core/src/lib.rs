//! hostbench-core: the model every front-end, workload and renderer shares.
//!
//! `Plan` (what to run) → [`runner::run`] (threads, limits, warmup, rate, intervals, Ctrl-C)
//! → workers from a [`workload::Instance`] → per-thread [`recorder`] state → a
//! [`runner::Measurement`] → a [`result::RunResult`] (versioned, schema in
//! `schemas/result.v1.json`). [`stats`] and [`compare`] set runs side by side (`hostbench
//! compare`, `hostbench report`). No command-line parsing, drivers or printing live here.
#![deny(missing_docs)]

pub mod base64;
pub mod civil;
pub mod clock;
pub mod compare;
pub mod error;
pub mod fio_hist;
pub mod fio_num;
pub mod fio_result;
pub mod fleet;
pub mod host;
pub mod input;
pub mod layout;
pub mod merge;
pub mod names;
pub mod params;
pub mod plan;
pub mod rand;
pub mod recorder;
pub mod result;
pub mod runner;
pub mod secret;
pub mod stats;
pub mod suggest;
pub mod trend;
pub mod units;
pub mod workload;
