//! The `hostbench stream` front-end (being written).

use anyhow::{Result, bail};
use std::process::ExitCode;

/// Runs `hostbench stream ...`.
pub fn main(_argv: &[String]) -> Result<ExitCode> {
    bail!("stream is not available yet")
}
