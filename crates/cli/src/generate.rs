//! `hostbench generate man` and `hostbench generate completions bash|zsh|fish`: the man page
//! and shell completions, generated from the clap definition of the native command line, so
//! they never drift from `--help`; `hostbench generate workloads`: docs/workloads.md, the table
//! of workloads, generated from the registry.
//!
//! Peer grammars (sysbench's test words, `hostbench stream`) are not clap subcommands of the
//! native CLI; the man page mentions them (the top-level help text) and completions offer
//! the native commands.

use crate::exec;
use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use std::process::ExitCode;

/// `hostbench generate ...`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// Print the man page (roff) on stdout: `hostbench generate man > hostbench.1`; with
    /// --dir, write it and one page per subcommand (hostbench-suite.1, ...) into DIR.
    Man {
        /// Write hostbench.1 and a page per subcommand into this existing directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
    /// Print a completion script for SHELL on stdout, e.g.
    /// `hostbench generate completions bash > /etc/bash_completion.d/hostbench`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the table of workloads (Markdown) from the registry:
    /// `hostbench generate workloads > docs/workloads.md`.
    Workloads,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// The man page of `cmd`, in roff.
pub fn man_page(cmd: clap::Command) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut buf)?;
    Ok(buf)
}

/// A completion script for `cmd` in `shell`.
fn completions(mut cmd: clap::Command, shell: Shell) -> Vec<u8> {
    let mut buf = Vec::new();
    let name = cmd.get_name().to_string();
    match shell {
        Shell::Bash => {
            clap_complete::generate(clap_complete::Shell::Bash, &mut cmd, name, &mut buf)
        }
        Shell::Zsh => clap_complete::generate(clap_complete::Shell::Zsh, &mut cmd, name, &mut buf),
        Shell::Fish => {
            clap_complete::generate(clap_complete::Shell::Fish, &mut cmd, name, &mut buf)
        }
    }
    buf
}

/// Runs `hostbench generate ...` for the CLI `cmd`.
pub fn main(a: GenerateArgs, cmd: clap::Command) -> Result<ExitCode> {
    let bytes = match a.what {
        What::Man { dir: Some(dir) } => {
            // A signal waits until the pages are written (no half page left behind).
            let _critical = crate::Critical::enter();
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("cannot write man pages into {}", dir.display()))?;
            return Ok(ExitCode::SUCCESS);
        }
        What::Man { dir: None } => man_page(cmd)?,
        What::Completions { shell } => completions(cmd, shell),
        What::Workloads => crate::native::workloads_markdown().into_bytes(),
    };
    exec::out(&String::from_utf8_lossy(&bytes));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/workloads.md is the registry's table as generated: a workload added, renamed or
    /// re-described in the registry fails here until the file is generated again.
    #[test]
    fn the_docs_table_of_workloads_is_generated_from_the_registry() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/workloads.md");
        let docs = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            docs == crate::native::workloads_markdown(),
            "{path} differs from the registry: run \
             `cargo run -- generate workloads > docs/workloads.md`"
        );
        for w in hostbench_workloads::WORKLOADS {
            assert!(docs.contains(&format!("| `{}` |", w.id())), "{}", w.id());
        }
    }

    #[test]
    fn every_shell_gets_a_script_naming_the_commands() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let s = String::from_utf8(completions(crate::native::command(), shell)).unwrap();
            for word in ["suite", "run", "results", "generate"] {
                assert!(s.contains(word), "{shell:?} completions lack {word}");
            }
        }
    }
}
