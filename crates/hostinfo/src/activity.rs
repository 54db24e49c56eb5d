//! Other activity on the host around a run: load average, CPU time used by other processes,
//! steal time and swapping, from two cheap samples (`/proc/loadavg`, `/proc/stat`,
//! `/proc/vmstat`, `/proc/self/stat`) taken just before and just after the measurement.
//! Also the frequency-governor check.
//!
//! Invariants: sampling reads four small files and allocates a little, never blocks and never
//! fails (a missing file leaves its field `None`, and a check without data stays silent);
//! ratios are only judged over at least [`MIN_TICKS`] of CPU time, because /proc/stat counts
//! in 10 ms ticks and a short run's ratio is mostly rounding.

use hostbench_core::host::ClocksourceInfo;
use hostbench_core::result::{Warning, WarningKind};

use crate::fs::Fs;

/// Share of the CPU time during a run that other processes may use before the host is
/// called noisy.
pub const OTHERS_BUSY_MAX: f64 = 0.10;
/// Share of the CPU time the hypervisor may steal before the host is called noisy.
pub const STEAL_MAX: f64 = 0.05;
/// CPU time (summed over CPUs, in /proc/stat ticks) a run must span before the shares above
/// are judged: one CPU-second at the usual 100 ticks per second.
pub const MIN_TICKS: u64 = 100;

/// Aggregate CPU time from the `cpu` line of /proc/stat, in ticks (USER_HZ).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// user + nice + system: time some process was running.
    pub busy: u64,
    /// Time stolen by the hypervisor for other guests.
    pub steal: u64,
    /// Every state (user, nice, system, idle, iowait, irq, softirq, steal).
    pub total: u64,
}

/// One look at the host's activity counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActivitySample {
    /// 1-minute load average.
    pub load1: Option<f64>,
    /// Aggregate CPU times.
    pub cpu: Option<CpuTimes>,
    /// CPU time of this process (all its threads, user + system), ticks.
    pub self_ticks: Option<u64>,
    /// Pages swapped in since boot (`pswpin`).
    pub swap_in: Option<u64>,
    /// Pages swapped out since boot (`pswpout`).
    pub swap_out: Option<u64>,
    /// CPU time of the local server processes under test (see [`sample_with_servers`]),
    /// ticks; they are part of the experiment, not other activity.
    pub server_ticks: Option<u64>,
}

/// Samples the live system.
pub fn sample() -> ActivitySample {
    sample_at(&Fs::system())
}

/// [`sample`], plus the CPU time of `servers`: processes on this machine that the run talks
/// to (a web server on loopback), whose CPU time is then not counted as other activity.
pub fn sample_with_servers(servers: &[u32]) -> ActivitySample {
    let mut s = sample();
    if !servers.is_empty() {
        s.server_ticks = Some(crate::procs::cpu_ticks(servers).0);
    }
    s
}

/// Average number of CPUs the server processes used between `before` and `after` (their CPU
/// time over the wall time), when both samples have them and span at least [`MIN_TICKS`].
pub fn server_cpus(before: &ActivitySample, after: &ActivitySample, cpus: u32) -> Option<f64> {
    let (b, a) = (before.cpu?, after.cpu?);
    let total = a.total.saturating_sub(b.total);
    if total < MIN_TICKS || cpus == 0 {
        return None;
    }
    let used = after.server_ticks?.saturating_sub(before.server_ticks?);
    Some(used as f64 / total as f64 * f64::from(cpus))
}

/// [`sample`] over the tree at `fs`.
pub(crate) fn sample_at(fs: &Fs) -> ActivitySample {
    let vmstat = fs.read("/proc/vmstat").unwrap_or_default();
    ActivitySample {
        load1: fs.read("/proc/loadavg").and_then(|s| parse_loadavg(&s)),
        cpu: fs.read("/proc/stat").and_then(|s| parse_stat(&s)),
        self_ticks: fs.read("/proc/self/stat").and_then(|s| parse_self_stat(&s)),
        swap_in: vmstat_value(&vmstat, "pswpin"),
        swap_out: vmstat_value(&vmstat, "pswpout"),
        server_ticks: None,
    }
}

fn parse_loadavg(s: &str) -> Option<f64> {
    s.split_whitespace().next()?.parse().ok()
}

fn parse_stat(s: &str) -> Option<CpuTimes> {
    let line = s.lines().find(|l| l.starts_with("cpu "))?;
    // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already
    // inside user and nice, so it is not added again.
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    if v.len() < 4 {
        return None;
    }
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(CpuTimes {
        busy: at(0) + at(1) + at(2),
        steal: at(7),
        total: (0..8).map(at).sum(),
    })
}

fn parse_self_stat(s: &str) -> Option<u64> {
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Field 3 (state) is f[0]; utime and stime are fields 14 and 15.
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    Some(utime + stime)
}

fn vmstat_value(s: &str, key: &str) -> Option<u64> {
    s.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// Warnings about what else happened on the host between `before` and `after` (taken around
/// one run on a machine with `cpus` online CPUs): other processes using more than
/// [`OTHERS_BUSY_MAX`] of the CPU time (or, when the run is too short to tell, a load average
/// above the CPU count when it started), steal above [`STEAL_MAX`], and any swapping.
pub fn activity_warnings(
    before: &ActivitySample,
    after: &ActivitySample,
    cpus: u32,
) -> Vec<Warning> {
    let mut w = Vec::new();
    // The direct measure: other processes' share of the CPU time during the run itself.
    let mut judged_cpu = false;
    if let (Some(b), Some(a)) = (before.cpu, after.cpu) {
        let total = a.total.saturating_sub(b.total);
        if total >= MIN_TICKS {
            let busy = a.busy.saturating_sub(b.busy);
            let steal = a.steal.saturating_sub(b.steal);
            // A process that ran for a CPU-second and used no CPU time at all is an emulator
            // (qemu-user reports zeros): its own share is unknown, not zero.
            let own = before
                .self_ticks
                .zip(after.self_ticks)
                .map(|(sb, sa)| sa.saturating_sub(sb))
                .filter(|&t| t > 0);
            if let Some(own) = own {
                judged_cpu = true;
                let server = before
                    .server_ticks
                    .zip(after.server_ticks)
                    .map_or(0, |(sb, sa)| sa.saturating_sub(sb));
                let others = busy.saturating_sub(own).saturating_sub(server);
                let share = others as f64 / total as f64;
                if share > OTHERS_BUSY_MAX {
                    w.push(Warning {
                        kind: WarningKind::NoisyHost,
                        message: format!(
                            "other processes used {:.0}% of the CPU time during the run: the \
                             figures describe a shared machine. Stop other jobs (`top` shows \
                             them) and run again.",
                            share * 100.0
                        ),
                    });
                }
            }
            let share = steal as f64 / total as f64;
            if share > STEAL_MAX {
                w.push(Warning {
                    kind: WarningKind::StealTime,
                    message: format!(
                        "the hypervisor stole {:.1}% of the CPU time during the run (other \
                         guests were using this host's CPUs): figures vary with the neighbours' \
                         load. Repeat at another time, or use a dedicated or larger instance \
                         type for stable figures.",
                        share * 100.0
                    ),
                });
            }
        }
    }
    // The load average lags (it remembers work that ended up to a minute ago), so it only
    // speaks when the run was too short, or /proc too sparse, for the direct measure.
    if !judged_cpu
        && let Some(load) = before.load1
        && cpus > 0
        && load > f64::from(cpus)
    {
        w.push(Warning {
            kind: WarningKind::NoisyHost,
            message: format!(
                "the 1-minute load average was {load:.2} on {cpus} CPU(s) when the run started: \
                 other work was running in the last minute and may have competed for the \
                 CPUs, so throughput may read low and latencies high. Stop other jobs (`top` \
                 shows them) and run again; in a suite, an earlier entry with more threads than \
                 CPUs also raises this average for a minute."
            ),
        });
    }
    let delta = |b: Option<u64>, a: Option<u64>| a.zip(b).map(|(a, b)| a.saturating_sub(b));
    let swapped_in = delta(before.swap_in, after.swap_in).unwrap_or(0);
    let swapped_out = delta(before.swap_out, after.swap_out).unwrap_or(0);
    if swapped_in + swapped_out > 0 {
        w.push(Warning {
            kind: WarningKind::SwapActivity,
            message: format!(
                "the system swapped during the run ({swapped_in} page(s) in, {swapped_out} out): \
                 memory was short, and waiting for the swap device distorts every figure. Use \
                 smaller sizes or free memory (stop other jobs), and run again."
            ),
        });
    }
    w
}

/// A warning when the CPU frequency governor is reported and is not `performance`. `None`
/// (no cpufreq, usual in virtual machines) gives no warning: see [`governor_note`].
pub fn governor_warning(governor: Option<&str>) -> Option<Warning> {
    let g = governor?.trim();
    if g.is_empty() || g == "performance" {
        return None;
    }
    Some(Warning {
        kind: WarningKind::Governor,
        message: format!(
            "the CPU frequency governor is '{g}', not 'performance': the clock speed follows the \
             load, so short runs and first repetitions can read low and figures move between \
             runs. For benchmarking, set `cpupower frequency-set -g performance` (as root), or \
             use longer runs with a warmup."
        ),
    })
}

/// Clocksources the kernel falls back to when it finds the CPU's counter unusable (the TSC
/// marked unstable by the clocksource watchdog, or never trusted): slow to read and, for
/// jiffies, coarse.
const FALLBACK_CLOCKSOURCES: &[&str] = &["hpet", "acpi_pm", "pit", "jiffies", "refined-jiffies"];

/// A `clocksource` warning when the kernel keeps time with a fallback clocksource
/// (`FALLBACK_CLOCKSOURCES`). The usual cheap ones (`tsc`, `arch_sys_counter`) and the
/// hypervisors' paravirtual clocks (`kvm-clock`, `xen`, Hyper-V's) give none; neither does an
/// unknown clocksource (no /sys).
pub fn clocksource_warning(cs: &ClocksourceInfo) -> Option<Warning> {
    let current = cs.current.trim();
    if !FALLBACK_CLOCKSOURCES.contains(&current) {
        return None;
    }
    let tsc_listed = cs.available.iter().any(|a| a == "tsc");
    let why = if tsc_listed {
        "'tsc' is listed as available, so the kernel most likely marked it unstable (`dmesg | \
         grep -i clocksource` says why)"
    } else {
        "the CPU's own counter is not offered, or the kernel does not trust it (`dmesg | grep -i \
         clocksource` says why)"
    };
    Some(Warning {
        kind: WarningKind::Clocksource,
        message: format!(
            "the kernel keeps time with the '{current}' clocksource, a fallback: {why}. Reading \
             the time then costs up to microseconds and its steps are coarser, so latencies, \
             short runs and anything timed with the system clock are distorted, and figures are \
             not comparable with hosts on 'tsc'. Fix the cause (firmware TSC settings, or the \
             instance type), or, if the TSC is in fact stable, boot with `tsc=reliable`; `hostbench \
             timer` shows what each clock costs."
        ),
    })
}

/// One line about the frequency governor for summaries: `None` when it is `performance`.
pub fn governor_note(governor: Option<&str>) -> Option<String> {
    match governor.map(str::trim) {
        Some("performance") => None,
        Some(g) if !g.is_empty() => Some(format!(
            "frequency governor '{g}' (not 'performance'): see the governor warnings"
        )),
        _ => Some(
            "no frequency governor is reported (no cpufreq, usual in virtual machines and \
             containers): the hypervisor or firmware sets the clock speed, and turbo or power \
             limits may still move the figures"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::fixture::put;

    const STAT: &str = "cpu  1000 10 200 5000 30 0 5 0 0 0\ncpu0 500 5 100 2500 15 0 2 0 0 0\n";
    const VMSTAT: &str = "nr_free_pages 123\npswpin 7\npswpout 9\n";
    const SELF: &str = "4242 (host bench) (x) R 1 2 3 0 -1 4194304 100 0 0 0 300 50 0 0 20 0 3 0\n";

    fn tree(load: &str, stat: &str, vmstat: &str, self_stat: &str) -> ActivitySample {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        put(root, "/proc/loadavg", load);
        put(root, "/proc/stat", stat);
        put(root, "/proc/vmstat", vmstat);
        put(root, "/proc/self/stat", self_stat);
        sample_at(&Fs::at(root))
    }

    fn kinds(w: &[Warning]) -> Vec<WarningKind> {
        w.iter().map(|w| w.kind).collect()
    }

    #[test]
    fn parses_the_proc_files() {
        let s = tree("0.52 0.40 0.30 2/148 999\n", STAT, VMSTAT, SELF);
        assert_eq!(s.load1, Some(0.52));
        assert_eq!(
            s.cpu,
            Some(CpuTimes {
                busy: 1210,
                steal: 0,
                total: 6245
            })
        );
        assert_eq!(s.self_ticks, Some(350));
        assert_eq!((s.swap_in, s.swap_out), (Some(7), Some(9)));
    }

    #[test]
    fn missing_files_sample_nothing_and_warn_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let s = sample_at(&Fs::at(dir.path()));
        assert_eq!(s, ActivitySample::default());
        assert!(activity_warnings(&s, &s, 2).is_empty());
    }

    #[test]
    fn quiet_host_gives_no_warning() {
        let b = tree("0.50 0 0 1/1 1\n", STAT, VMSTAT, SELF);
        // 2 CPUs for 2 s = 400 ticks; this process used 390 of the 395 busy ones.
        let a = tree(
            "1.20 0 0 1/1 1\n",
            "cpu  1385 10 210 5005 30 0 5 0 0 0\n",
            VMSTAT,
            "4242 (host bench) (x) R 1 2 3 0 -1 4194304 100 0 0 0 680 60 0 0 20 0 3 0\n",
        );
        assert_eq!(a.cpu.unwrap().total - b.cpu.unwrap().total, 400);
        assert!(activity_warnings(&b, &a, 2).is_empty());
    }

    #[test]
    fn load_average_above_the_cpu_count_is_a_noisy_host() {
        let b = tree("2.50 1 1 3/100 1\n", STAT, VMSTAT, SELF);
        let w = activity_warnings(&b, &b, 2);
        assert_eq!(kinds(&w), [WarningKind::NoisyHost]);
        assert!(
            w[0].message.contains("2.50 on 2 CPU(s)"),
            "{}",
            w[0].message
        );
        // The same load on 4 CPUs is fine.
        assert!(activity_warnings(&b, &b, 4).is_empty());
    }

    #[test]
    fn a_lagging_load_average_is_overruled_by_a_quiet_run() {
        // The load average still remembers a build that ended, but during the 2 s run the
        // other processes used almost nothing.
        let b = tree("3.80 1 1 1/100 1\n", STAT, VMSTAT, SELF);
        let a = tree(
            "3.10 0 0 1/1 1\n",
            "cpu  1385 10 210 5005 30 0 5 0 0 0\n",
            VMSTAT,
            "4242 (host bench) (x) R 1 2 3 0 -1 4194304 100 0 0 0 680 60 0 0 20 0 3 0\n",
        );
        assert!(activity_warnings(&b, &a, 2).is_empty());
    }

    #[test]
    fn other_processes_using_the_cpus_is_a_noisy_host() {
        let b = tree("0.1 0 0 1/1 1\n", STAT, VMSTAT, SELF);
        // 400 ticks, 380 busy, only 200 of them ours: others had 45%.
        let a = tree(
            "0.1 0 0 1/1 1\n",
            "cpu  1360 10 220 5010 30 0 15 0 0 0\n",
            VMSTAT,
            "4242 (host bench) (x) R 1 2 3 0 -1 4194304 100 0 0 0 500 50 0 0 20 0 3 0\n",
        );
        let w = activity_warnings(&b, &a, 2);
        assert_eq!(kinds(&w), [WarningKind::NoisyHost]);
        assert!(
            w[0].message.contains("used 45% of the CPU time"),
            "{}",
            w[0].message
        );
    }

    #[test]
    fn an_emulator_reporting_no_own_cpu_time_is_not_a_noisy_host() {
        // qemu-user: the host's CPUs were busy with this very run, but /proc/self/stat says
        // the process used nothing. Its own share is unknown, so the busy time is not blamed
        // on others; the (low) load average decides.
        let b = tree("0.1 0 0 1/1 1\n", STAT, VMSTAT, SELF);
        let a = tree(
            "0.1 0 0 1/1 1\n",
            "cpu  1385 10 210 5005 30 0 5 0 0 0\n",
            VMSTAT,
            SELF,
        );
        assert!(activity_warnings(&b, &a, 2).is_empty());
    }

    #[test]
    fn steal_above_five_percent_is_reported() {
        let b = tree("0.1 0 0 1/1 1\n", STAT, VMSTAT, SELF);
        // 400 ticks, 40 stolen (10%); 350 busy, all ours.
        let a = tree(
            "0.1 0 0 1/1 1\n",
            "cpu  1360 10 200 5000 30 0 5 40 0 0\n",
            VMSTAT,
            "4242 (host bench) (x) R 1 2 3 0 -1 4194304 100 0 0 0 700 0 0 0 20 0 3 0\n",
        );
        let w = activity_warnings(&b, &a, 2);
        assert_eq!(kinds(&w), [WarningKind::StealTime]);
        assert!(w[0].message.contains("10.0%"), "{}", w[0].message);
    }

    #[test]
    fn short_runs_are_not_judged_on_ratios() {
        let b = tree("0.1 0 0 1/1 1\n", STAT, VMSTAT, SELF);
        // 50 ticks, all of them stolen or someone else's: too short to say.
        let a = tree(
            "0.1 0 0 1/1 1\n",
            "cpu  1025 10 200 5000 30 0 5 25 0 0\n",
            VMSTAT,
            SELF,
        );
        assert!(activity_warnings(&b, &a, 2).is_empty());
    }

    #[test]
    fn any_swapping_is_reported() {
        let b = tree("0.1 0 0 1/1 1\n", STAT, VMSTAT, SELF);
        let a = tree("0.1 0 0 1/1 1\n", STAT, "pswpin 7\npswpout 300\n", SELF);
        let w = activity_warnings(&b, &a, 2);
        assert_eq!(kinds(&w), [WarningKind::SwapActivity]);
        assert!(
            w[0].message.contains("0 page(s) in, 291 out"),
            "{}",
            w[0].message
        );
    }

    #[test]
    fn governor() {
        assert_eq!(governor_warning(Some("performance")), None);
        assert_eq!(governor_warning(None), None);
        let w = governor_warning(Some("powersave")).unwrap();
        assert_eq!(w.kind, WarningKind::Governor);
        assert!(w.message.contains("'powersave'"));
        assert_eq!(governor_note(Some("performance")), None);
        assert!(
            governor_note(None)
                .unwrap()
                .contains("no frequency governor")
        );
        assert!(
            governor_note(Some("schedutil"))
                .unwrap()
                .contains("schedutil")
        );
    }

    #[test]
    fn a_fallback_clocksource_is_reported() {
        let cs = |current: &str, available: &[&str]| ClocksourceInfo {
            current: current.into(),
            available: available.iter().map(|s| s.to_string()).collect(),
        };
        for fine in ["tsc", "arch_sys_counter", "kvm-clock", "xen", ""] {
            assert_eq!(
                clocksource_warning(&cs(fine, &["tsc", "hpet", "acpi_pm"])),
                None,
                "{fine}"
            );
        }
        let w = clocksource_warning(&cs("hpet", &["tsc", "hpet", "acpi_pm"])).unwrap();
        assert_eq!(w.kind, WarningKind::Clocksource);
        assert!(w.message.contains("'hpet'") && w.message.contains("marked it unstable"));
        let w = clocksource_warning(&cs("acpi_pm\n", &["acpi_pm", "jiffies"])).unwrap();
        assert!(w.message.contains("'acpi_pm'") && w.message.contains("not offered"));
        // One space between words: no run of spaces left by a string broken over lines.
        assert!(!w.message.contains("  "), "{}", w.message);
    }

    #[test]
    fn this_machine_samples_without_panicking() {
        let s = sample();
        if std::path::Path::new("/proc/stat").exists() {
            assert!(s.cpu.is_some_and(|c| c.total > 0), "{s:?}");
            assert!(s.self_ticks.is_some(), "{s:?}");
        }
    }
}
