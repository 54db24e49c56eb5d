//! fio's `--cpuclock-test`: whether the clock reads the same time on every CPU, as fio
//! 3.33 tests its CPU clock (`gettime.c`, `fio_monotonic_clocktest` with its debug output
//! on) — one thread pinned to each CPU the process may run on, the threads taking turns
//! through one shared sequence number (a compare-and-swap: a reading counts only when the
//! number did not move meanwhile), each keeping 100 000 (sequence, CPU, reading) entries;
//! then all entries sorted by sequence number must read a clock that never goes back.
//!
//! The clock tested is hostbench's own ([`Clock`]), the one its jobs time their I/Os with:
//! the CPU's counter where the kernel trusts it (x86 TSC, aarch64's architected counter),
//! `CLOCK_MONOTONIC` otherwise (`cs: reliable_tsc` says which: `yes` is the counter). fio
//! tests the CPU's counter whether its jobs use it or not.

use hostbench_core::clock::Clock;
use std::sync::atomic::{AtomicU32, Ordering, fence};
use std::sync::{Barrier, Mutex};

/// Entries each CPU's thread keeps (fio's `CLOCK_ENTRIES_DEBUG`).
pub const ENTRIES: usize = 100_000;

/// One reading: the sequence number it was taken under, its CPU and the clock's ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The sequence number it was taken under.
    pub seq: u32,
    /// The CPU whose thread took it.
    pub cpu: u32,
    /// The clock's reading, in ticks.
    pub ticks: u64,
}

/// The CPUs this process may run on (its affinity), and how many the machine has
/// (configured: fio's `cpus_configured`).
fn cpus() -> (Vec<u32>, u32) {
    // SAFETY: sysconf reads a number; sched_getaffinity fills a zeroed set we own.
    let (conf, set) = unsafe {
        let conf = libc::sysconf(libc::_SC_NPROCESSORS_CONF).max(1) as u32;
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            // Unknown: every CPU, as fio without thread affinity.
            for c in 0..conf.min(libc::CPU_SETSIZE as u32) {
                libc::CPU_SET(c as usize, &mut set);
            }
        }
        (conf, set)
    };
    let allowed = (0..conf.min(libc::CPU_SETSIZE as u32))
        // SAFETY: reading a set we own.
        .filter(|&c| unsafe { libc::CPU_ISSET(c as usize, &set) })
        .collect();
    (allowed, conf)
}

/// Pins the calling thread to `cpu`.
fn pin(cpu: u32) -> std::io::Result<()> {
    // SAFETY: a zeroed set with one CPU, passed to the kernel for this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The readings in sequence order that went back: (the one before, the one after).
pub fn mismatches(entries: &mut [Entry]) -> Vec<(Entry, Entry)> {
    entries.sort_unstable_by_key(|e| e.seq);
    entries
        .windows(2)
        .filter(|w| w[0].ticks > w[1].ticks)
        .map(|w| (w[0], w[1]))
        .collect()
}

/// Runs the test on `clock` with `n` entries per CPU; `out` takes each line of the report
/// (stdout in fio), `err` each error line (stderr). The exit status: 0 when the clock never
/// went back, 1 otherwise or when a thread failed, as fio's.
pub fn run(
    clock: Clock,
    trusted: bool,
    n: usize,
    out: &(dyn Fn(String) + Sync),
    err: &(dyn Fn(String) + Sync),
) -> u8 {
    out(format!(
        "cs: reliable_tsc: {}",
        if trusted { "yes" } else { "no" }
    ));
    let (allowed, conf) = cpus();
    out(format!("cs: Testing {conf} CPUs"));
    let seq = AtomicU32::new(0);
    let start = Barrier::new(allowed.len() + 1);
    let all: Mutex<Vec<Entry>> = Mutex::new(Vec::with_capacity(n * allowed.len()));
    let failed = AtomicU32::new(0);
    std::thread::scope(|s| {
        for &cpu in &allowed {
            let (seq, start, all, failed) = (&seq, &start, &all, &failed);
            s.spawn(move || {
                let pinned = pin(cpu);
                start.wait();
                if let Err(e) = pinned {
                    err(format!("clock setaffinity failed: {e}"));
                    failed.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                let first = clock.now();
                let mut mine = Vec::with_capacity(n);
                'entries: for _ in 0..n {
                    let (s, t) = loop {
                        let s = seq.load(Ordering::SeqCst);
                        if s == u32::MAX {
                            break 'entries;
                        }
                        fence(Ordering::SeqCst);
                        let t = clock.now();
                        if seq
                            .compare_exchange(s, s + 1, Ordering::SeqCst, Ordering::SeqCst)
                            .is_ok()
                        {
                            break (s, t);
                        }
                    };
                    mine.push(Entry {
                        seq: s,
                        cpu,
                        ticks: t,
                    });
                }
                let seen = match (mine.first(), mine.last()) {
                    (Some(a), Some(b)) => b.ticks.wrapping_sub(a.ticks),
                    _ => 0,
                };
                out(format!("cs: cpu{cpu:3}: {seen} clocks seen, first {first}"));
                // A clock stuck at zero is the common breakage fio checks for.
                if mine.len() > 1 && mine[0].ticks == 0 && mine[mine.len() - 1].ticks == 0 {
                    failed.fetch_add(1, Ordering::Relaxed);
                }
                all.lock().unwrap_or_else(|p| p.into_inner()).extend(mine);
            });
        }
        start.wait();
    });
    let failed = failed.into_inner();
    if failed > 0 {
        err(format!("Clocksource test: {failed} threads failed"));
        return 1;
    }
    let mut all = all.into_inner().unwrap_or_else(|p| p.into_inner());
    let bad = mismatches(&mut all);
    for (a, b) in &bad {
        out(format!(
            "cs: CPU clock mismatch (diff={}):",
            a.ticks - b.ticks
        ));
        for e in [a, b] {
            out(format!("\t CPU{:3}: TSC={}, SEQ={}", e.cpu, e.ticks, e.seq));
        }
    }
    if bad.is_empty() {
        out("cs: Pass!".into());
        0
    } else {
        out(format!("cs: Failed: {}", bad.len()));
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_that_goes_back_is_found_in_sequence_order() {
        let e = |seq, cpu, ticks| Entry { seq, cpu, ticks };
        let mut v = vec![e(2, 1, 30), e(0, 0, 10), e(1, 1, 20), e(3, 0, 25)];
        assert_eq!(mismatches(&mut v), vec![(e(2, 1, 30), e(3, 0, 25))]);
        let mut ok = vec![e(1, 0, 5), e(0, 1, 5), e(2, 1, 6)];
        assert!(mismatches(&mut ok).is_empty());
    }

    #[test]
    fn every_cpu_takes_its_turns_and_the_monotonic_clock_passes() {
        let lines = Mutex::new(Vec::new());
        let say = |l: String| lines.lock().unwrap().push(l);
        let code = run(Clock::monotonic(), false, 2000, &say, &|l: String| {
            panic!("{l}")
        });
        let lines = lines.into_inner().unwrap();
        assert_eq!(code, 0, "{lines:?}");
        assert_eq!(lines[0], "cs: reliable_tsc: no");
        assert!(lines[1].starts_with("cs: Testing "), "{lines:?}");
        let (allowed, _) = cpus();
        let per_cpu = lines
            .iter()
            .filter(|l| l.contains("clocks seen, first"))
            .count();
        assert_eq!(per_cpu, allowed.len(), "{lines:?}");
        assert_eq!(lines.last().unwrap(), "cs: Pass!");
    }
}
