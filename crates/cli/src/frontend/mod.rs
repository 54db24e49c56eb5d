//! What every front-end shares: the getopt tokenizer and flag tables of the hand-written
//! peer grammars ([`getopt`]), hostbench's own options that every grammar takes
//! ([`Common`]: `--label`, `--no-save`, `--results-db`, `--format`), and parsing a clap
//! grammar into one error line, in one style.
//!
//! Every usage error of every grammar reaches the user as one line on stderr,
//! `hostbench: error: GRAMMAR: WHAT WAS WRONG (see hostbench GRAMMAR --help)`, exit 2
//! (the prefix is `main`'s). clap's own error text runs over several lines (the error, the
//! accepted values, a tip, the usage block): [`clap_error_line`] keeps what says what was
//! wrong and how to fix it, on one line.

use anyhow::{Result, anyhow};

use crate::exec::{self, SaveOptions};
use getopt::{Arg, Flag};

pub mod getopt;

/// `--label NAME`, in a peer grammar's flag table.
pub const LABEL: Flag = Flag::long("label", "NAME", "");
/// `--no-save`.
pub const NO_SAVE: Flag = Flag::long("no-save", "", "");
/// `--results-db PATH|URL`.
pub const RESULTS_DB: Flag = Flag::long("results-db", "PATH|URL", "");

/// hostbench's own options, as a peer grammar's getopt front-end reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Common {
    /// `--label`.
    pub label: Option<String>,
    /// `--no-save`.
    pub no_save: bool,
    /// `--results-db`.
    pub results_db: Option<String>,
    /// `--format`, as typed (the grammar checks it against its formats).
    pub format: Option<String>,
}

impl Common {
    /// Takes `arg` when it is one of hostbench's own options ([`LABEL`], [`NO_SAVE`],
    /// [`RESULTS_DB`], or a `--format` entry of the grammar's table); false leaves it to the
    /// grammar.
    pub fn take(&mut self, arg: &Arg) -> bool {
        let Arg::Opt { flag, value, .. } = arg else {
            return false;
        };
        let value = || value.clone().unwrap_or_default();
        match flag.long {
            "label" => self.label = Some(value()),
            "no-save" => self.no_save = true,
            "results-db" => self.results_db = Some(value()),
            "format" => self.format = Some(value()),
            _ => return false,
        }
        true
    }

    /// The usage line that lists hostbench's own options in `flags`:
    /// `--label=NAME, --no-save, --results-db=PATH|URL, --format=ab|json|text`.
    pub fn usage(flags: &[Flag]) -> String {
        flags
            .iter()
            .filter(|f| matches!(f.long, "label" | "no-save" | "results-db" | "format"))
            .map(|f| match f.value {
                "" => format!("--{}", f.long),
                v => format!("--{}={v}", f.long),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The checked saving options (`SaveOptions::new`).
    pub fn saving(&self) -> Result<SaveOptions> {
        SaveOptions::new(self.label.clone(), self.no_save, self.results_db.clone())
    }
}

/// Parses `args` (the program name first, as clap wants it) with grammar `T`. `Ok(None)`
/// when clap printed help or the version (the caller exits 0); a usage error is one line
/// naming `grammar` (`stream`, `memlat`; empty for the native command line).
pub fn clap_parse<T: clap::Parser>(
    grammar: &str,
    args: impl IntoIterator<Item = String>,
) -> Result<Option<T>> {
    match T::try_parse_from(args) {
        Ok(a) => Ok(Some(a)),
        Err(e) if !e.use_stderr() => {
            // Help and version: clap's text of hostbench's own options, printed as it is
            // (its examples look like credentials to the masking printer).
            exec::out_help(&e.render().to_string());
            Ok(None)
        }
        Err(e) => Err(anyhow!(
            "{}",
            clap_error_line(
                grammar,
                &format!("hostbench {grammar}"),
                &e.render().to_string()
            )
        )),
    }
}

/// clap's error `text` as one line: the error (and the lines it runs on to, such as the
/// missing arguments), the accepted values, clap's tip, then where to read more: `grammar`
/// names the peer grammar (empty for the native command line) and `help` the command whose
/// `--help` to read (`hostbench stream`, `hostbench results show`). What the user typed is
/// quoted in it, so it goes through the masking printers like any error.
pub fn clap_error_line(grammar: &str, help: &str, text: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut tips: Vec<String> = Vec::new();
    for l in text.lines().take_while(|l| !l.starts_with("Usage:")) {
        let l = l.trim();
        if l.is_empty() || l.starts_with("For more information, try") {
            continue;
        }
        if let Some(tip) = l.strip_prefix("tip:") {
            tips.push(format!("tip:{tip}"));
        } else {
            parts.push(l.strip_prefix("error: ").unwrap_or(l).to_string());
        }
    }
    let mut line = if parts.is_empty() {
        "invalid arguments".to_string()
    } else {
        parts.join(" ")
    };
    for t in tips {
        line.push_str("; ");
        line.push_str(&t);
    }
    let prefix = if grammar.is_empty() {
        String::new()
    } else {
        format!("{grammar}: ")
    };
    format!("{prefix}{line} (see `{help} --help`)")
}

/// The (sub)command `args` (without the program name) address in `cmd`: `hostbench results
/// show` for `results show 12 --bogus`; stops at the first word that is not a subcommand.
pub fn command_path(cmd: &clap::Command, args: &[String]) -> String {
    let mut path = vec![cmd.get_name().to_string()];
    let mut at = cmd;
    for a in args {
        match at.find_subcommand(a) {
            Some(sub) => {
                path.push(sub.get_name().to_string());
                at = sub;
            }
            None => break,
        }
    }
    path.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, clap::Parser)]
    #[command(name = "hostbench demo")]
    struct Demo {
        #[arg(long, value_enum, default_value_t = Shape::Round)]
        shape: Shape,
        #[arg(long)]
        size: u32,
    }

    #[derive(Debug, Clone, Copy, clap::ValueEnum)]
    enum Shape {
        Round,
        Square,
    }

    fn err(args: &[&str]) -> String {
        let argv = std::iter::once("demo")
            .chain(args.iter().copied())
            .map(String::from);
        match clap_parse::<Demo>("demo", argv) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{args:?} parsed"),
        }
    }

    #[test]
    fn one_line_with_values_tip_and_where_to_read() {
        let e = err(&["--size", "1", "--shape", "oval"]);
        assert!(!e.contains('\n'), "{e}");
        assert!(
            e.starts_with("demo: invalid value 'oval' for '--shape <SHAPE>'"),
            "{e}"
        );
        assert!(e.contains("[possible values: round, square]"), "{e}");
        assert!(e.ends_with("(see `hostbench demo --help`)"), "{e}");
        let e = err(&["--size", "1", "--bogus"]);
        assert!(
            e.starts_with("demo: unexpected argument '--bogus' found ("),
            "{e}"
        );
        // clap's tip, when it has one, stays on the line.
        let e = err(&["--siz", "1"]);
        assert!(
            e.starts_with("demo: unexpected argument '--siz' found; tip: "),
            "{e}"
        );
        assert!(e.contains("'--size'"), "{e}");
        // A missing argument: clap names it on the next line.
        let e = err(&[]);
        assert!(
            e.starts_with("demo: the following required arguments were not provided: --size"),
            "{e}"
        );
        assert!(!e.contains("Usage"), "{e}");
    }

    #[test]
    fn the_native_grammar_names_the_subcommand() {
        let l = clap_error_line(
            "",
            "hostbench results show",
            "error: invalid value 'abc' for '--threshold <PCT>': 'abc' is not a threshold\n\nFor more information, try '--help'.\n",
        );
        assert_eq!(
            l,
            "invalid value 'abc' for '--threshold <PCT>': 'abc' is not a threshold (see `hostbench results show --help`)"
        );
        let cmd = clap::Command::new("hostbench")
            .subcommand(clap::Command::new("results").subcommand(clap::Command::new("show")));
        let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(
            command_path(&cmd, &args("results show 12 --x")),
            "hostbench results show"
        );
        assert_eq!(command_path(&cmd, &args("--x results")), "hostbench");
    }
}
