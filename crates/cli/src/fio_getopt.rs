//! fio's command line as fio 3.33 reads it: `getopt_long_only` over its own options and its
//! option table. Each option word is rewritten to its `--long[=value]` form for
//! [`super::fio`]'s parser:
//!
//! - a single-dash word is a long option too (`-rw=randread`, `-iodepth 1`, `-thread`),
//!   unless it is one of fio's short options (`-o FILE`, `-ofile`, `-x NAME`, `-mb`): as
//!   in glibc, a word of one letter that is a short option is one, a longer word is looked
//!   up as a long option first, then read as short options when none matches;
//! - a long name may be abbreviated to any prefix that is unique among fio's long options
//!   (`--numj=2`); an exact name wins (`--bs`, though `--bsrange` exists); a prefix of
//!   several is refused as fio refuses it, with the same list of possibilities;
//! - the value of an option that needs one is the word after it when there is no `=`
//!   (and that word is left as it is).
//!
//! fio adds its I/O engine's own options to the table once `ioengine=` names it (the last
//! one named, whichever job it was in): from there on a unique prefix of one of them is
//! that option (`--ioengine=libaio --userspace=1`); before, and in job files, only its
//! exact name.

use anyhow::{Result, bail};
use hostbench_workloads::disk::fio::fio_names::{self, Arg};
use hostbench_workloads::disk::fio::job;

/// hostbench's own options, looked up after fio's.
const OWN: &[(&str, Arg)] = &[
    ("label", Arg::Required),
    ("no-save", Arg::None),
    ("results-db", Arg::Required),
];

/// fio's long options in its lookup order (its own, then its option table's names and
/// aliases), then hostbench's own.
fn long_options() -> impl Iterator<Item = (&'static str, Arg)> {
    let job_arg = |n: &str| {
        if fio_names::is_set_option(n) || fio_names::is_set_option(fio_names::canonical_name(n)) {
            Arg::Optional
        } else {
            Arg::Required
        }
    };
    fio_names::COMMAND_LINE_OPTIONS_IN_ORDER
        .iter()
        .map(|&(n, _, a)| (n, a))
        .chain(
            fio_names::OPTION_TABLE
                .iter()
                .flat_map(|&(n, a)| [n, a])
                .filter(|n| !n.is_empty())
                .chain(fio_names::PROFILE_OPTIONS.iter().copied())
                .map(move |n| (n, job_arg(n))),
        )
        .chain(OWN.iter().copied())
}

enum Found {
    One(&'static str, Arg),
    Ambiguous(Vec<&'static str>),
    None,
}

/// `name` looked up as `getopt_long_only` does: the exact name, else the only option it
/// is a prefix of (two or more: ambiguous), the options of `engine` (the last `ioengine=`
/// so far) among them, after fio's own; any other engine's option by its exact name.
fn lookup(name: &str, engine: Option<&str>) -> Found {
    if name.is_empty() {
        return Found::None;
    }
    let engine_opts = engine.map(job::engine_option_names).unwrap_or_default();
    let all = || {
        long_options().chain(engine_opts.iter().map(|&n| {
            let arg = if fio_names::is_set_option(n) {
                Arg::Optional
            } else {
                Arg::Required
            };
            (n, arg)
        }))
    };
    if let Some((n, a)) = all().find(|(n, _)| *n == name) {
        return Found::One(n, a);
    }
    let matches: Vec<_> = all().filter(|(n, _)| n.starts_with(name)).collect();
    match matches.as_slice() {
        [] if fio_names::is_job_option(name) => {
            let arg = if fio_names::is_set_option(name) {
                Arg::Optional
            } else {
                Arg::Required
            };
            Found::One(
                fio_names::JOB_OPTIONS
                    .iter()
                    .find(|n| **n == name)
                    .copied()
                    .unwrap_or_default(),
                arg,
            )
        }
        [] => Found::None,
        [(n, a)] => Found::One(n, *a),
        m => Found::Ambiguous(m.iter().map(|(n, _)| *n).collect()),
    }
}

fn short(c: char) -> Option<(&'static str, Arg)> {
    fio_names::COMMAND_LINE_OPTIONS_IN_ORDER
        .iter()
        .find(|(_, s, _)| *s == c)
        .map(|&(n, _, a)| (n, a))
}

/// Whether the word after an option that needs a value is taken as its value (hostbench
/// takes it unless it is a `--` option, so that `--name --rw=read` says what is missing).
fn takes(next: Option<&String>) -> bool {
    next.is_some_and(|v| !v.starts_with("--"))
}

/// The command line with every option word in its `--long[=value]` form; values and job
/// files as they are.
pub fn normalize(args: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(args.len());
    // The last ioengine= so far: its options join the long options.
    let mut engine: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            // getopt's end of options: the rest are job files.
            for f in &args[i..] {
                if f.starts_with('-') && f.len() > 1 {
                    bail!(
                        "fio: job file '{f}' after '--': hostbench cannot take a job file whose \
                         name starts with '-'; name it ./{f}"
                    );
                }
                out.push(f.clone());
            }
            break;
        }
        let (dashes, body) = if let Some(b) = a.strip_prefix("--") {
            ("--", b)
        } else if let Some(b) = a.strip_prefix('-').filter(|b| !b.is_empty()) {
            ("-", b)
        } else {
            out.push(a.clone());
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (body, None),
        };
        let first = body.chars().next().unwrap_or('-');
        let one_short = dashes == "-" && body.chars().count() == 1 && short(first).is_some();
        let found = if one_short {
            Found::None
        } else {
            lookup(name, engine.as_deref())
        };
        match found {
            Found::One(long, arg) => {
                match inline {
                    Some(v) => out.push(format!("--{long}={v}")),
                    None => out.push(format!("--{long}")),
                }
                let mut value = inline.map(str::to_string);
                if arg == Arg::Required && inline.is_none() && takes(args.get(i)) {
                    out.push(args[i].clone());
                    value = Some(args[i].clone());
                    i += 1;
                }
                if long == "ioengine" {
                    engine = value;
                }
            }
            Found::Ambiguous(names) => {
                let list: Vec<String> = names.iter().map(|n| format!("'{dashes}{n}'")).collect();
                bail!(
                    "fio: option '{a}' is ambiguous; possibilities: {} (as in fio 3.33: give \
                     more of the name)",
                    list.join(" ")
                );
            }
            Found::None if dashes == "-" && short(first).is_some() => {
                // fio's short options, several in one word (`-mb`), the last one's value
                // the rest of the word or the next one (`-ofile`, `-o file`).
                let chars: Vec<char> = body.chars().collect();
                for (n, &c) in chars.iter().enumerate() {
                    let Some((long, arg)) = short(c) else {
                        bail!(
                            "fio: invalid option -- '{c}' (in '{a}'; fio's short options are \
                             one letter each, its long ones --name=value: see `hostbench fio \
                             --help`)"
                        );
                    };
                    let rest: String = chars[n + 1..].iter().collect();
                    match arg {
                        Arg::None => {
                            out.push(format!("--{long}"));
                            continue;
                        }
                        _ if !rest.is_empty() => out.push(format!("--{long}={rest}")),
                        Arg::Optional => out.push(format!("--{long}")),
                        Arg::Required => {
                            out.push(format!("--{long}"));
                            if takes(args.get(i)) {
                                out.push(args[i].clone());
                                i += 1;
                            }
                        }
                    }
                    break;
                }
            }
            // Not an option of fio's: named as written.
            Found::None if dashes == "-" => bail!(
                "fio: command line: {}",
                job::unsupported_option(name, &format!("-{name}"))
            ),
            // The parser names the problem (it knows hostbench's reasons).
            Found::None => out.push(format!("--{body}")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Result<String> {
        let a: Vec<String> = s.split_whitespace().map(String::from).collect();
        normalize(&a).map(|v| v.join(" "))
    }

    #[test]
    fn single_dash_long_options_as_getopt_long_only() {
        assert_eq!(
            n("-filename=tf -iodepth 1 -thread -rw=randread -name=mytest j.fio").unwrap(),
            "--filename=tf --iodepth 1 --thread --rw=randread --name=mytest j.fio"
        );
        // fio's short options: one letter, a cluster, a value attached or next.
        assert_eq!(
            n("-o out -x a -mb -ofile -").unwrap(),
            "--output out --section a --minimal --bandwidth-log --output=file -"
        );
        // A word that is a long option's prefix is one, before the short options.
        assert_eq!(n("-readw=read -r").unwrap(), "--readwrite=read --readonly");
        // Set-only options take no following word.
        assert_eq!(n("--thread 1").unwrap(), "--thread 1");
        assert_eq!(n("--name --rw=read").unwrap(), "--name --rw=read");
    }

    #[test]
    fn unique_prefixes_and_ambiguous_ones() {
        assert_eq!(
            n("--numj=2 --bs=4k --runt 1").unwrap(),
            "--numjobs=2 --bs=4k --runtime 1"
        );
        assert_eq!(n("--no-s --lab x").unwrap(), "--no-save --label x");
        let e = n("--num=2").unwrap_err().to_string();
        assert!(
            e.starts_with(
                "fio: option '--num=2' is ambiguous; possibilities: '--number_ios' '--numjobs' \
                 '--numa_cpu_nodes' '--numa_mem_policy' '--numruns'"
            ),
            "{e}"
        );
        let e = n("-num=2").unwrap_err().to_string();
        assert!(
            e.contains("'-num=2' is ambiguous; possibilities: '-number_ios'"),
            "{e}"
        );
        assert!(
            n("-mz")
                .unwrap_err()
                .to_string()
                .contains("invalid option -- 'z'")
        );
        // An engine's option, exactly.
        assert_eq!(n("--userspace_reap").unwrap(), "--userspace_reap");
    }
}
