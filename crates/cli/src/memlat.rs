//! The `hostbench memlat` front-end (being written).

use anyhow::{Result, bail};
use std::process::ExitCode;

/// Runs `hostbench memlat ...`.
pub fn main(_argv: &[String]) -> Result<ExitCode> {
    bail!("memlat is not available yet")
}
