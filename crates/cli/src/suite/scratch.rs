//! Where a suite's entries that write files run: each such entry (a workload whose
//! capabilities say *destructive*, or that has prepare/cleanup *stages*) gets a fresh directory of its own inside the suite's
//! directory (`--directory`, the file's `directory`, or the current one), is prepared there,
//! runs, is cleaned up, and the directory is removed. The process's working directory is
//! the scratch directory for the entry's lifetime, because the peer grammars (sysbench's
//! fileio, SQLite's default database file) put their files in the current directory.
//!
//! Invariant: only a directory this module created is ever removed, and only after the
//! workload's own cleanup ran.

use anyhow::{Context, Result};
use hostbench_core::plan::Plan;
use hostbench_core::workload::{SetupCtx, Stage, StageDone, StageLog, Workload};
use std::path::{Path, PathBuf};

/// Prefix of the scratch directories (so a user can recognise, and remove, one left behind
/// by a killed suite).
pub const PREFIX: &str = "hostbench-suite-";

/// A stage log that keeps quiet: the suite shows progress with its own bar.
struct Quiet;

impl StageLog for Quiet {
    fn line(&self, _: &str) {}
}

/// An entry's scratch directory, entered; leaving it (drop) cleans up.
pub struct Scratch {
    dir: PathBuf,
    previous: PathBuf,
    prepared: bool,
    workload: &'static dyn Workload,
    plan: Plan,
}

fn stage(w: &dyn Workload, s: Stage, plan: &Plan) -> Result<StageDone> {
    let host = hostbench_hostinfo::collect();
    w.stage(
        s,
        &SetupCtx {
            params: &plan.params,
            threads: plan.threads,
            dist: plan.rand,
            seed: if plan.seed == 0 { 1 } else { plan.seed },
            host: Some(&host),
        },
        &Quiet,
    )
    .map_err(|e| anyhow::anyhow!("{} {}: {e}", w.id(), s.name()))
}

/// Whether entries of `workload` run in a scratch directory (it writes files or has
/// prepare/cleanup stages).
pub fn needs_scratch(workload: &dyn Workload) -> bool {
    let caps = workload.caps();
    caps.destructive || caps.stages
}

impl Scratch {
    /// Creates a directory for entry `index` under `base`, enters it and runs the
    /// workload's prepare step there (if it has one). `None` when the workload writes no
    /// files.
    pub fn enter(
        base: &Path,
        index: usize,
        workload: &'static dyn Workload,
        plan: &Plan,
    ) -> Result<Option<Scratch>> {
        if !needs_scratch(workload) {
            return Ok(None);
        }
        let previous = std::env::current_dir().context("the current directory is unreadable")?;
        let base = if base.is_absolute() {
            base.to_path_buf()
        } else {
            previous.join(base)
        };
        let dir = base.join(format!("{PREFIX}{}-{index}", std::process::id()));
        // Private (0700): nobody else can put a file in it that the removal would take.
        std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
            .create(&dir)
            .with_context(|| {
                format!(
                    "cannot create a scratch directory in {} for the disk entries; give a writable \
                 directory with --directory DIR",
                    base.display()
                )
            })?;
        std::env::set_current_dir(&dir)
            .with_context(|| format!("cannot enter {}", dir.display()))?;
        let mut s = Scratch {
            dir,
            previous,
            prepared: false,
            workload,
            plan: plan.clone(),
        };
        match stage(workload, Stage::Prepare, plan)? {
            StageDone::Done => s.prepared = true,
            StageDone::NotImplemented => {}
            StageDone::Interrupted => anyhow::bail!("interrupted while preparing"),
        }
        Ok(Some(s))
    }
}

impl Scratch {
    /// Makes this scratch directory the current one again (after another entry's, as
    /// `suite --interleave` alternates two).
    pub fn activate(&self) -> Result<()> {
        std::env::set_current_dir(&self.dir)
            .with_context(|| format!("cannot enter {}", self.dir.display()))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.prepared
            && let Err(e) = stage(self.workload, Stage::Cleanup, &self.plan)
        {
            eprintln!("WARNING: {e:#}");
        }
        let _ = std::env::set_current_dir(&self.previous);
        // The directory is ours (created here, mode 0700, never a symlink: `create` fails
        // on any existing name) and only the entry's runs wrote in it; remove_dir_all does
        // not follow symlinks inside it.
        if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            eprintln!(
                "WARNING: could not remove the scratch directory {}: {e}",
                self.dir.display()
            );
        }
    }
}
