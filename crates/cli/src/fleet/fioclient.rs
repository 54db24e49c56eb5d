//! `hostbench fio --client=HOSTS job.fio`: fio's client mode over the fleet. Each host runs
//! `hostbench fio job.fio` over the fleet's ssh path (the binary deployed, the job file
//! carried, one common start) instead of a `fio --server`; the hosts' runs are saved as a
//! fleet's, and printed as fio's client prints them: each host's report, then "All
//! clients" (`hostbench_report::fio::render_clients`).
//!
//! The command line, as fio reads it: `--client=HOSTS` (a comma list, `@FILE`, or a file of
//! hosts, one a line, as fio's `--client=hostfile`) starts a client; the job files after it
//! are that client's (`--client=h1 a.fio --client=h2 b.fio`); job files before any
//! `--client`, and every option, are every client's. The fleet's own options in this form:
//! `--ssh-config=FILE` (`-F`), `--binary=PATH`, `--connect-timeout=D`, `--start-delay=D`,
//! `--clean`, and `--label`/`--results-db` (the runs are saved here).

use super::hosts::{self, Target};
use anyhow::{Result, bail};
use hostbench_core::result::RunResult;
use std::process::ExitCode;

/// One `--client`: its hosts and its own job files.
pub(super) struct Group {
    pub(super) hosts: Vec<Target>,
    pub(super) jobs: Vec<String>,
}

/// A fio client-mode run, read from fio's command line.
pub(super) struct FioClients {
    pub(super) groups: Vec<Group>,
    /// Options and job files every host's command has (after `fio`).
    pub(super) common: Vec<String>,
}

impl FioClients {
    /// The command whose words name every file to carry: `fio`, the common words, then each
    /// group's job files; and each host's command as ranges of it.
    pub(super) fn command(&self) -> Vec<String> {
        let mut c = vec!["fio".to_string()];
        c.extend(self.common.iter().cloned());
        for g in &self.groups {
            c.extend(g.jobs.iter().cloned());
        }
        c
    }

    /// Each host's command from [`FioClients::command`] as rewritten for carrying
    /// (`carried`: the same words, the files replaced by their markers), hosts in order.
    pub(super) fn per_host(&self, carried: &[String]) -> Vec<Vec<String>> {
        let head = 1 + self.common.len();
        let mut at = head;
        let mut out = Vec::new();
        for g in &self.groups {
            let mut c = carried[..head].to_vec();
            c.extend(carried[at..at + g.jobs.len()].iter().cloned());
            at += g.jobs.len();
            for _ in &g.hosts {
                out.push(c.clone());
            }
        }
        out
    }

    pub(super) fn targets(&self) -> Result<Vec<Target>> {
        hosts::check(self.groups.iter().flat_map(|g| g.hosts.clone()).collect())
    }
}

/// The hosts of one `--client=VALUE`: `@FILE`, an existing file (fio's host file), or a
/// comma list.
fn client_hosts(v: &str) -> Result<Vec<Target>> {
    if v.is_empty() {
        bail!("fio: --client= names no host: give --client=HOST[,HOST...] or --client=@FILE");
    }
    if !v.starts_with('@') && !v.contains(',') && std::path::Path::new(v).is_file() {
        return hosts::from_arg(&format!("@{v}"));
    }
    hosts::from_arg(v)
}

/// Reads fio's client-mode command line (`argv[2..]` of `hostbench fio ...`, with at least
/// one `--client`); returns the fleet's own arguments (before `--`) and the clients.
pub(super) fn parse(args: &[String]) -> Result<(Vec<String>, FioClients)> {
    const FLEET_VALUED: [&str; 6] = [
        "--ssh-config",
        "--binary",
        "--connect-timeout",
        "--start-delay",
        "--label",
        "--results-db",
    ];
    let mut fleet = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut common = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--client" || a == "-client" {
            let Some(v) = args.get(i) else {
                bail!("fio: --client needs a value: --client=HOST[,HOST...] or --client=@FILE");
            };
            i += 1;
            groups.push(Group {
                hosts: client_hosts(v)?,
                jobs: Vec::new(),
            });
            continue;
        }
        if let Some(v) = a.strip_prefix("--client=") {
            groups.push(Group {
                hosts: client_hosts(v)?,
                jobs: Vec::new(),
            });
            continue;
        }
        if a == "-F" {
            let Some(v) = args.get(i) else {
                bail!("fio: -F needs ssh's configuration file");
            };
            i += 1;
            fleet.push("-F".into());
            fleet.push(v.clone());
            continue;
        }
        if a == "--clean" {
            fleet.push(a.clone());
            continue;
        }
        if let Some((k, v)) = a.split_once('=')
            && FLEET_VALUED.contains(&k)
        {
            fleet.push(k.to_string());
            fleet.push(v.to_string());
            continue;
        }
        if a == "--output" || a.starts_with("--output=") {
            bail!(
                "fio: --output with --client: the hosts' reports and \"All clients\" are printed \
                 here on stdout; redirect it (> FILE) instead"
            );
        }
        if a == "--server" || a.starts_with("--server=") || a == "--daemonize" {
            bail!(
                "fio: {a}: hostbench has no fio server; --client runs each host's job over ssh \
                 (see docs/fleet.md)"
            );
        }
        match groups.last_mut() {
            Some(g) if !a.starts_with('-') => g.jobs.push(a.clone()),
            _ => common.push(a.clone()),
        }
    }
    if groups.iter().all(|g| g.jobs.is_empty())
        && !common.iter().any(|w| !w.starts_with('-'))
        && !common.iter().any(|w| w.starts_with("--name"))
    {
        bail!(
            "fio: --client: no job file: give one after the hosts, e.g. hostbench fio \
             --client=web1,web2 job.fio"
        );
    }
    Ok((fleet, FioClients { groups, common }))
}

/// `hostbench fio ... --client=HOSTS ... job.fio` (`argv[1]` is `fio`).
pub fn main(argv: &[String]) -> Result<ExitCode> {
    let (fleet_args, clients) = parse(&argv[2..])?;
    super::run(fleet_args, Vec::new(), Some(clients))
}

/// Prints the hosts' runs (`kept`, the last of each host, in the fleet's order) as fio's
/// client mode does, in the output formats the runs recorded.
pub(super) fn show(targets: &[Target], kept: &[RunResult]) -> Result<()> {
    let mut clients = Vec::new();
    for t in targets {
        let run = kept
            .iter()
            .rev()
            .find(|r| r.fleet.as_ref().is_some_and(|f| f.host == t.name));
        if let Some(run) = run {
            clients.push(hostbench_report::fio::Client {
                name: &t.name,
                port: t.port.unwrap_or(22),
                run,
            });
        }
    }
    let Some(first) = clients.first() else {
        bail!("no host brought a run back");
    };
    let layout = hostbench_report::fio::layout_of(first.run);
    crate::exec::out(&hostbench_report::fio::render_clients(&clients, &layout));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// fio's command line: options and job files before any `--client` are every host's,
    /// job files after one are its own; the fleet's options are taken out.
    #[test]
    fn each_client_has_the_job_files_after_it() {
        let (fleet, c) = parse(&words(
            "--output-format=json --ssh-config=cfg --client=h1,h2 a.fio --client h3 b.fio \
             c.fio --label=x --clean",
        ))
        .unwrap();
        assert_eq!(fleet, words("--ssh-config cfg --label x --clean"));
        assert_eq!(c.common, words("--output-format=json"));
        assert_eq!(c.groups.len(), 2);
        assert_eq!(c.groups[0].hosts.len(), 2);
        assert_eq!(c.groups[0].jobs, words("a.fio"));
        assert_eq!(c.groups[1].jobs, words("b.fio c.fio"));
        let all = c.command();
        assert_eq!(all, words("fio --output-format=json a.fio b.fio c.fio"));
        let per = c.per_host(&all);
        assert_eq!(per.len(), 3);
        assert_eq!(per[0], words("fio --output-format=json a.fio"));
        assert_eq!(per[1], per[0]);
        assert_eq!(per[2], words("fio --output-format=json b.fio c.fio"));
        assert_eq!(c.targets().unwrap().len(), 3);
    }

    #[test]
    fn bad_client_command_lines_are_refused_with_what_to_do() {
        let e = |s: &str| parse(&words(s)).err().expect(s).to_string();
        assert!(e("--client= job.fio").contains("names no host"));
        assert!(e("--client=h1").contains("no job file"));
        assert!(e("--client=h1 --output=x job.fio").contains("redirect it"));
        assert!(e("--server job.fio --client=h1").contains("no fio server"));
        assert!(e("--client=-x job.fio").contains("-x"));
        // A host named twice across clients.
        assert!(
            parse(&words("--client=h1 a.fio --client=h1 b.fio"))
                .unwrap()
                .1
                .targets()
                .is_err()
        );
    }
}
