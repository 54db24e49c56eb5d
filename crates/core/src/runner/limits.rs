//! How many threads this host lets a run start: task, memory-map, RLIMIT_NPROC and memory
//! limits, read from /proc, checked before any thread is spawned.

/// What bounds the number of threads this process can start (Linux; `None` = unknown).
#[derive(Debug, Clone, Default)]
pub struct HostLimits {
    /// `kernel.pid_max` and `kernel.threads-max`, the smaller: tasks the system can hold.
    pub tasks_max: Option<u64>,
    /// Tasks that exist now (every thread of every process).
    pub tasks_now: Option<u64>,
    /// `vm.max_map_count`: memory maps per process.
    pub max_map_count: Option<u64>,
    /// This process's memory maps now.
    pub maps_now: Option<u64>,
    /// RLIMIT_NPROC (tasks per user; not enforced for root).
    pub nproc: Option<u64>,
    /// The process runs as root (RLIMIT_NPROC does not apply).
    pub root: bool,
    /// Memory available, bytes (MemAvailable).
    pub mem_available: Option<u64>,
}

/// Memory maps a worker thread adds: its stack and guard page, and the signal stack and
/// guard page Rust's runtime gives every thread (measured: a 20,000-thread run failed at
/// thread 16,426 with vm.max_map_count = 65,530).
const MAPS_PER_THREAD: u64 = 4;
/// Memory a worker thread costs at least: touched stack pages and the runner's per-thread
/// records (measured: ~73 KiB per idle null.loop thread); a floor, not an estimate of any
/// workload's own state, so a run is refused only when it cannot possibly fit.
const BYTES_PER_THREAD: u64 = 64 * 1024;

impl HostLimits {
    /// Reads the limits from /proc and getrlimit.
    pub fn read() -> HostLimits {
        let num = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
        };
        let tasks_max = match (
            num("/proc/sys/kernel/pid_max"),
            num("/proc/sys/kernel/threads-max"),
        ) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // /proc/loadavg's fourth field: running/total tasks.
        let tasks_now = std::fs::read_to_string("/proc/loadavg").ok().and_then(|s| {
            s.split_whitespace()
                .nth(3)?
                .split('/')
                .nth(1)?
                .parse::<u64>()
                .ok()
        });
        let maps_now = std::fs::read("/proc/self/maps")
            .ok()
            .map(|b| b.iter().filter(|&&c| c == b'\n').count() as u64);
        let mut rl = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct we own.
        let nproc = (unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut rl) } == 0
            && rl.rlim_cur != libc::RLIM_INFINITY)
            .then_some(rl.rlim_cur);
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let mem_available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map(|kb| kb * 1024)
        });
        HostLimits {
            tasks_max,
            tasks_now,
            max_map_count: num("/proc/sys/vm/max_map_count"),
            maps_now,
            nproc,
            root,
            mem_available,
        }
    }
}

/// Refuses `n` worker threads when the host cannot hold them, naming the limit, so a run
/// that cannot start fails at once instead of after starting thousands of threads.
pub fn check_thread_capacity(n: usize, l: &HostLimits) -> Result<(), CapacityError> {
    let n = n as u64;
    if let (Some(max), Some(now)) = (l.tasks_max, l.tasks_now)
        && now + n + 16 > max
    {
        return Err(CapacityError::Tasks { n, max, now });
    }
    if let (Some(max), Some(now)) = (l.max_map_count, l.maps_now)
        && now + MAPS_PER_THREAD * n + 256 > max
    {
        return Err(CapacityError::Maps {
            n,
            need: MAPS_PER_THREAD * n,
            max,
            now,
            fit: max.saturating_sub(now + 256) / MAPS_PER_THREAD,
        });
    }
    if let Some(max) = l.nproc
        && !l.root
        && n + 16 > max
    {
        return Err(CapacityError::Processes { n, max });
    }
    if let Some(avail) = l.mem_available
        && n * BYTES_PER_THREAD > avail
    {
        return Err(CapacityError::Memory {
            n,
            need_mib: (n * BYTES_PER_THREAD) >> 20,
            avail_mib: avail >> 20,
        });
    }
    Ok(())
}

/// Which host limit `n` threads exceed ([`check_thread_capacity`]); each message names the
/// limit and ends with how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CapacityError {
    /// kernel.pid_max / threads-max.
    #[error(
        "{n} threads do not fit the system's task limit: kernel.pid_max/threads-max is {max} and {now} tasks exist already; {FIX}"
    )]
    Tasks {
        /// Threads asked for.
        n: u64,
        /// The limit.
        max: u64,
        /// Tasks that exist now.
        now: u64,
    },
    /// vm.max_map_count.
    #[error(
        "{n} threads need about {need} memory maps and vm.max_map_count is {max} ({now} in use): at most about {fit} threads; {FIX} (sysctl vm.max_map_count)"
    )]
    Maps {
        /// Threads asked for.
        n: u64,
        /// Maps they need.
        need: u64,
        /// The limit.
        max: u64,
        /// Maps in use now.
        now: u64,
        /// Threads that would fit.
        fit: u64,
    },
    /// RLIMIT_NPROC.
    #[error(
        "{n} threads exceed this user's process limit (RLIMIT_NPROC, ulimit -u) of {max}; {FIX}"
    )]
    Processes {
        /// Threads asked for.
        n: u64,
        /// The limit.
        max: u64,
    },
    /// MemAvailable.
    #[error(
        "{n} threads need at least {need_mib} MiB and only {avail_mib} MiB of memory is available; {FIX}"
    )]
    Memory {
        /// Threads asked for.
        n: u64,
        /// Memory they need, MiB.
        need_mib: u64,
        /// Memory available, MiB.
        avail_mib: u64,
    },
}

/// How to fix a [`CapacityError`].
const FIX: &str = "lower --threads (or raise the limit)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_counts_beyond_the_hosts_limits_are_refused_naming_the_limit() {
        let l = HostLimits {
            tasks_max: Some(32_768),
            tasks_now: Some(250),
            max_map_count: Some(65_530),
            maps_now: Some(100),
            nproc: Some(1_000),
            root: false,
            mem_available: Some(1 << 28),
        };
        assert!(check_thread_capacity(500, &l).is_ok());
        let e = check_thread_capacity(20_000, &l).unwrap_err();
        assert!(matches!(e, CapacityError::Maps { max: 65_530, .. }), "{e}");
        assert!(e.to_string().contains("vm.max_map_count is 65530"), "{e}");
        let e = check_thread_capacity(40_000, &l).unwrap_err();
        assert!(e.to_string().contains("pid_max"), "{e}");
        let e = check_thread_capacity(2_000, &l).unwrap_err();
        assert!(e.to_string().contains("RLIMIT_NPROC"), "{e}");
        let root = HostLimits {
            root: true,
            ..l.clone()
        };
        let e = check_thread_capacity(5_000, &root).unwrap_err();
        assert!(e.to_string().contains("memory is available"), "{e}");
        assert!(check_thread_capacity(4_000, &root).is_ok());
        // Unknown limits refuse nothing.
        assert!(check_thread_capacity(50_000, &HostLimits::default()).is_ok());
    }
}
