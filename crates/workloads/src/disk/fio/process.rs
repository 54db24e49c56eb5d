//! fio's per-job process options, applied by each clone in its own thread before its first
//! I/O (fio's `backend.c:thread_main` order): `cpus_allowed` with `cpus_allowed_policy`
//! (`sched_setaffinity`; `split` gives clone *n* of the run the *n*-th allowed CPU, cycling),
//! `numa_cpu_nodes` (the CPUs of those NUMA nodes, from sysfs) and `numa_mem_policy`
//! (`set_mempolicy` with libnuma's arguments: `bind`, `interleave`, `prefer`, `local`;
//! `default` makes no call), then `prio`/`prioclass`, then `nice` (fio calls `nice(0)` for a
//! job without one too, and so does hostbench) (`ioprio_set` on the thread; a priority without a class is
//! best-effort, as fio sets it). A refusal ends the clone with fio's error
//! (`func=cpu_set_affinity`, `func=ioprio_set`).

#![allow(unsafe_code)]

use super::job::JobError;

/// `cpus_allowed`, `cpus_allowed_policy`, `numa_cpu_nodes`, `numa_mem_policy`, `prio`,
/// `prioclass`, `nice`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcOpts {
    /// The allowed CPUs, ascending (`None`: not given).
    pub cpus: Option<Vec<usize>>,
    /// `cpus_allowed_policy=split`: one CPU of the set per clone.
    pub split: bool,
    /// `prio` (0 highest .. 7 lowest).
    pub prio: Option<u32>,
    /// `prioclass` (0 none, 1 realtime, 2 best-effort, 3 idle).
    pub prioclass: Option<u32>,
    /// `numa_cpu_nodes`: the CPUs of these nodes (checked to exist at parse time).
    pub numa_cpus: Option<Vec<usize>>,
    /// `numa_mem_policy`: the kernel's mode (`MPOL_*`) and its nodes.
    pub numa_mem: Option<(i32, Vec<usize>)>,
    /// `nice`: added to the clone thread's nice value (-20..19).
    pub nice: Option<i32>,
    /// `exec_prerun`: a shell command each clone runs before its first I/O.
    pub prerun: Option<String>,
    /// `exec_postrun`: a shell command each clone runs after its last.
    pub postrun: Option<String>,
}

/// Whether `key` (a canonical option name) is one of these options.
pub fn handles(key: &str) -> bool {
    matches!(
        key,
        "cpus_allowed"
            | "cpumask"
            | "cpus_allowed_policy"
            | "prio"
            | "prioclass"
            | "numa_cpu_nodes"
            | "numa_mem_policy"
            | "nice"
            | "log_compression_cpus"
            | "exec_prerun"
            | "exec_postrun"
    )
}

/// CPUs this machine has configured (fio's `cpus_configured`).
pub(super) fn cpus_configured() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// fio's `cpus_allowed` list (`0,5,8-15`) checked against `max` CPUs.
pub fn parse_cpus(v: &str, at: &str, max: usize) -> Result<Vec<usize>, JobError> {
    parse_cpus_of("cpus_allowed", v, at, max)
}

/// A CPU list (`0,5,8-15`) of option `key` (`cpus_allowed`, `verify_async_cpus`,
/// `log_compression_cpus`) checked
/// against `max` CPUs.
pub fn parse_cpus_of(key: &str, v: &str, at: &str, max: usize) -> Result<Vec<usize>, JobError> {
    let bad = |why: String| JobError(format!("{at}: {key}={v}: {why}"));
    let mut cpus = Vec::new();
    for part in v.trim().split(',') {
        let part = part.trim();
        if part.is_empty() {
            break;
        }
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let num = |s: &str| {
            s.trim().parse::<usize>().map_err(|_| {
                bad(format!(
                    "'{part}' is not a CPU number or a range such as 2-5"
                ))
            })
        };
        let (a, b) = (num(a)?, num(b)?);
        for c in a..=b {
            if c >= max {
                return Err(bad(format!(
                    "CPU {c} too large (max={}; fio's message): this machine has CPUs 0-{}",
                    max - 1,
                    max - 1
                )));
            }
            cpus.push(c);
        }
    }
    if cpus.is_empty() {
        return Err(bad(format!("no CPU given; e.g. {key}=0,2-3")));
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// fio's `cpumask`: a whole number (`0x` hex, or decimal with fio's size suffixes) whose
/// bit N allows CPU N, for bits 0 to 31; a set bit past the machine's CPUs is refused with
/// fio's message.
pub fn parse_cpumask(v: &str, at: &str, max: usize) -> Result<Vec<usize>, JobError> {
    let mask = super::job::parse_fio_size(v).ok_or_else(|| {
        JobError(format!(
            "{at}: cpumask={v}: expected a CPU bitmask such as 0x3 (CPUs 0 and 1) or 5 \
             (CPUs 0 and 2); for a list use cpus_allowed=0,2"
        ))
    })?;
    let mut cpus = Vec::new();
    for c in 0..32usize {
        if mask & (1 << c) == 0 {
            continue;
        }
        if c >= max {
            return Err(JobError(format!(
                "{at}: cpumask={v}: CPU {c} too large (max={}; fio's message): this machine \
                 has CPUs 0-{}",
                max - 1,
                max - 1
            )));
        }
        cpus.push(c);
    }
    Ok(cpus)
}

/// The NUMA nodes this machine has (sysfs `node<N>` directories); node 0 alone when the
/// kernel shows none (a machine without NUMA support is one node).
fn numa_nodes() -> Vec<usize> {
    let mut nodes: Vec<usize> = std::fs::read_dir("/sys/devices/system/node")
        .map(|d| {
            d.filter_map(|e| {
                let name = e.ok()?.file_name();
                name.to_str()?.strip_prefix("node")?.parse().ok()
            })
            .collect()
        })
        .unwrap_or_default();
    if nodes.is_empty() {
        nodes.push(0);
    }
    nodes.sort_unstable();
    nodes
}

/// The CPUs of NUMA node `n` (its sysfs `cpulist`); all CPUs when the kernel shows no nodes.
fn node_cpus(n: usize) -> Vec<usize> {
    match std::fs::read_to_string(format!("/sys/devices/system/node/node{n}/cpulist")) {
        Ok(l) => parse_cpus(l.trim(), "", 1 << 16).unwrap_or_default(),
        Err(_) => (0..cpus_configured()).collect(),
    }
}

/// A node list (`0`, `0-1`, `0,2`, `all`) of option `key`, each node one this machine has.
fn parse_nodes(key: &str, list: &str, v: &str, at: &str) -> Result<Vec<usize>, JobError> {
    let have = numa_nodes();
    let nodes = if list.trim() == "all" {
        have.clone()
    } else {
        parse_cpus(list, at, 4096).map_err(|_| {
            JobError(format!(
                "{at}: {key}={v}: expected NUMA nodes below 4096 such as 0, 0-1 or 0,2 (or all)"
            ))
        })?
    };
    if let Some(n) = nodes.iter().find(|n| !have.contains(n)) {
        return Err(JobError(format!(
            "{at}: {key}={v}: NUMA node {n} is out of range: this machine has node{} {} \
             (fio: numa_parse_nodestring failed)",
            if have.len() == 1 { "" } else { "s" },
            have.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(",")
        )));
    }
    Ok(nodes)
}

/// Applies option `key` (canonical) with value `v`, written at `at`, to `p`.
pub fn apply(p: &mut ProcOpts, key: &str, v: &str, at: &str) -> Result<(), JobError> {
    let small = |max: u32| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n <= max)
            .ok_or_else(|| JobError(format!("{at}: {key}={v}: expected 0 to {max}")))
    };
    match key {
        "cpus_allowed" => p.cpus = Some(parse_cpus(v, at, cpus_configured())?),
        // fio's bitmask form: the same affinity as cpus_allowed (the later one wins: fio
        // keeps one set for both), bit N CPU N, of the mask's low 32 bits (fio's loop over
        // an int's bits); a mask without a CPU fails the job when it starts, as in fio.
        "cpumask" => p.cpus = Some(parse_cpumask(v, at, cpus_configured())?),
        // fio pins its log compression threads to these CPUs. hostbench writes its logs as
        // they fill and compresses nothing in memory (`log_compression` changes what the
        // logs hold, as in fio, not where they are kept): no thread to pin. The list is
        // checked as fio checks it (`CPU 7 too large (max=1)`).
        "log_compression_cpus" => {
            parse_cpus_of(key, v, at, cpus_configured())?;
        }
        "cpus_allowed_policy" => {
            p.split = match v.trim() {
                "shared" => false,
                "split" => true,
                _ => {
                    return Err(JobError(format!(
                        "{at}: cpus_allowed_policy={v}: expected shared or split"
                    )));
                }
            }
        }
        "numa_cpu_nodes" => {
            let nodes = parse_nodes(key, v, v, at)?;
            let mut cpus: Vec<usize> = nodes.into_iter().flat_map(node_cpus).collect();
            cpus.sort_unstable();
            cpus.dedup();
            p.numa_cpus = Some(cpus);
        }
        "numa_mem_policy" => {
            let (mode, list) = v.trim().split_once(':').unwrap_or((v.trim(), ""));
            // The kernel's MPOL_* values.
            let (m, needs) = match mode {
                "default" => (0, false),
                "prefer" => (1, true),
                "bind" => (2, true),
                "interleave" => (3, true),
                "local" => (4, false),
                _ => {
                    return Err(JobError(format!(
                        "{at}: numa_mem_policy={v}: expected default, prefer:N, bind:NODES, \
                         interleave:NODES or local"
                    )));
                }
            };
            let nodes = if needs {
                if list.trim().is_empty() {
                    return Err(JobError(format!(
                        "{at}: numa_mem_policy={v}: {mode} needs its nodes, e.g. {mode}:0"
                    )));
                }
                let n = parse_nodes(key, list, v, at)?;
                if m == 1 && n.len() != 1 {
                    return Err(JobError(format!(
                        "{at}: numa_mem_policy={v}: prefer takes one node (fio: \
                         numa_mem_policy=prefer:N)"
                    )));
                }
                n
            } else {
                Vec::new()
            };
            p.numa_mem = Some((m, nodes));
        }
        "nice" => {
            p.nice = Some(
                v.trim()
                    .parse::<i32>()
                    .ok()
                    .filter(|n| (-20..=19).contains(n))
                    .ok_or_else(|| JobError(format!("{at}: nice={v}: expected -20 to 19")))?,
            )
        }
        "exec_prerun" => p.prerun = Some(v.to_string()),
        "exec_postrun" => p.postrun = Some(v.to_string()),
        "prio" => p.prio = Some(small(7)?),
        "prioclass" => p.prioclass = Some(small(3)?),
        _ => {}
    }
    Ok(())
}

/// fio's `exec_prerun`/`exec_postrun` for job `name`: `cmd` run by the shell (fio's
/// `system()`) with `> NAME.MODE.txt 2>&1` appended to its text — so of a list
/// (`a; b`) only the last command's output goes to the file, as in fio — in the current
/// directory, after fio's line on stdout. True when the shell ran it and it exited 0 (a
/// failed prerun ends the clone before its first I/O, without an error, as in fio).
pub fn exec_string(name: &str, cmd: &str, mode: &str) -> bool {
    use std::io::Write;
    let full = format!("{cmd} > {name}.{mode}.txt 2>&1");
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{name} : Saving output of {mode} in {name}.{mode}.txt");
        let _ = out.flush();
    }
    match std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(&full)
        .status()
    {
        Ok(st) => st.success(),
        Err(_) => {
            eprintln!("fio: exec of cmd <{full}> failed");
            false
        }
    }
}

/// What failed when a clone set its process options: errno, fio's function name, detail.
pub type ProcError = (i32, &'static str, String);

impl ProcOpts {
    /// The CPUs thread `index` (0-based, fio's `thread_number - 1`) may run on.
    pub fn cpus_for(&self, index: usize) -> Option<Vec<usize>> {
        let cpus = self.cpus.as_ref()?;
        Some(if self.split && !cpus.is_empty() {
            vec![cpus[index % cpus.len()]]
        } else {
            cpus.clone()
        })
    }

    /// fio's I/O priority value: the class (best-effort when none) shifted by 13, or'ed
    /// with the level; `None` when neither option was given.
    pub fn ioprio_value(&self) -> Option<u32> {
        if self.prio.is_none() && self.prioclass.is_none() {
            return None;
        }
        let class = match self.prioclass.unwrap_or(0) {
            0 => 2,
            c => c,
        };
        Some((class << 13) | self.prio.unwrap_or(0))
    }

    /// Sets the calling thread's affinity and I/O priority (thread `index` of the run).
    pub fn apply_to_this_thread(&self, index: usize) -> Result<(), ProcError> {
        if let Some(cpus) = self.cpus_for(index) {
            set_affinity(&cpus)?;
        }
        if let Some(cpus) = &self.numa_cpus {
            set_affinity(cpus)?;
        }
        if let Some((mode, nodes)) = &self.numa_mem
            && *mode != 0
        {
            // libnuma's call: a 1024-node mask, maxnode 1025.
            let mut mask = [0u64; 16];
            for &n in nodes {
                mask[n / 64] |= 1 << (n % 64);
            }
            // SAFETY: the mask outlives the call and holds `maxnode - 1` bits.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_set_mempolicy,
                    *mode as libc::c_long,
                    mask.as_ptr(),
                    1025,
                )
            };
            if r != 0 {
                let e = std::io::Error::last_os_error();
                return Err((
                    e.raw_os_error().unwrap_or(libc::EINVAL),
                    "set_mempolicy",
                    format!("set_mempolicy(mode {mode}, nodes {nodes:?}) failed: {e}"),
                ));
            }
        }
        if let Some(v) = self.ioprio_value() {
            // IOPRIO_WHO_PROCESS (1) with who = 0: the calling thread.
            // SAFETY: a plain system call with integer arguments.
            let r = unsafe { libc::syscall(libc::SYS_ioprio_set, 1, 0, v as libc::c_long) };
            if r != 0 {
                let e = std::io::Error::last_os_error();
                return Err((
                    e.raw_os_error().unwrap_or(libc::EINVAL),
                    "ioprio_set",
                    format!(
                        "ioprio_set(class {}, level {}) failed: {e} (the realtime class needs \
                         CAP_SYS_ADMIN)",
                        v >> 13,
                        v & 7
                    ),
                ));
            }
        }
        {
            // fio calls nice(nice) for every job, 0 by default (after ioprio_set).
            let n = self.nice.unwrap_or(0);
            // glibc's nice(): the calling thread's value on Linux; -1 may be a valid result,
            // so errno tells a failure.
            // SAFETY: errno is thread-local; nice has no other preconditions.
            let failed = unsafe {
                *libc::__errno_location() = 0;
                libc::nice(n) == -1 && *libc::__errno_location() != 0
            };
            if failed {
                let e = std::io::Error::last_os_error();
                return Err((
                    e.raw_os_error().unwrap_or(libc::EPERM),
                    "nice",
                    format!("nice({n}) failed: {e} (a negative nice needs CAP_SYS_NICE)"),
                ));
            }
        }
        Ok(())
    }
}

/// `sched_setaffinity` of the calling thread to `cpus`.
pub(super) fn set_affinity(cpus: &[usize]) -> Result<(), ProcError> {
    // SAFETY: a zeroed cpu_set_t filled with CPU_SET for CPUs below the configured count
    // (checked at parse time; the set holds 1024).
    let r = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < 1024) {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err((
            e.raw_os_error().unwrap_or(libc::EINVAL),
            "cpu_set_affinity",
            format!("sched_setaffinity to CPUs {cpus:?} failed: {e}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_as_fio_reads_them() {
        assert_eq!(parse_cpus("0,2-3", "x", 4).unwrap(), vec![0, 2, 3]);
        assert_eq!(parse_cpus(" 1 ", "x", 4).unwrap(), vec![1]);
        let e = parse_cpus("0,5", "x", 2).unwrap_err().0;
        assert!(e.contains("CPU 5 too large (max=1"), "{e}");
        assert!(parse_cpus("a", "x", 2).is_err());
        assert!(parse_cpus("", "x", 2).is_err());
        let e = parse_cpus_of("log_compression_cpus", "7", "x", 2)
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("x: log_compression_cpus=7: CPU 7 too large (max=1"),
            "{e}"
        );
        let mut p = ProcOpts::default();
        apply(&mut p, "log_compression_cpus", "0", "x").unwrap();
        assert_eq!(p, ProcOpts::default(), "nothing to pin");
    }

    #[test]
    fn split_gives_each_clone_one_cpu_in_turn() {
        let p = ProcOpts {
            cpus: Some(vec![1, 3]),
            split: true,
            ..Default::default()
        };
        assert_eq!(p.cpus_for(0), Some(vec![1]));
        assert_eq!(p.cpus_for(1), Some(vec![3]));
        assert_eq!(p.cpus_for(2), Some(vec![1]));
        let shared = ProcOpts { split: false, ..p };
        assert_eq!(shared.cpus_for(5), Some(vec![1, 3]));
    }

    #[test]
    fn numa_nodes_must_exist() {
        let mut p = ProcOpts::default();
        apply(&mut p, "numa_cpu_nodes", "0", "x").unwrap();
        assert!(!p.numa_cpus.as_ref().unwrap().is_empty());
        apply(&mut p, "numa_mem_policy", "bind:0", "x").unwrap();
        assert_eq!(p.numa_mem, Some((2, vec![0])));
        apply(&mut p, "numa_mem_policy", "local", "x").unwrap();
        assert_eq!(p.numa_mem, Some((4, vec![])));
        let e = apply(&mut p, "numa_cpu_nodes", "4095", "x").unwrap_err().0;
        assert!(e.contains("NUMA node 4095 is out of range"), "{e}");
        let e = apply(&mut p, "numa_mem_policy", "bind", "x").unwrap_err().0;
        assert!(e.contains("bind needs its nodes"), "{e}");
        assert!(apply(&mut p, "numa_mem_policy", "spread:0", "x").is_err());
    }

    #[test]
    fn a_priority_without_a_class_is_best_effort() {
        let mut p = ProcOpts {
            prio: Some(4),
            ..Default::default()
        };
        assert_eq!(p.ioprio_value(), Some((2 << 13) | 4));
        p.prioclass = Some(3);
        assert_eq!(p.ioprio_value(), Some((3 << 13) | 4));
        assert_eq!(ProcOpts::default().ioprio_value(), None);
    }
}
