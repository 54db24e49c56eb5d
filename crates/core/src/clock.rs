//! The one clock every measurement goes through.
//!
//! Event latencies are taken as raw *ticks* and converted to nanoseconds only when they are
//! recorded. Where the kernel itself trusts the time-stamp counter (x86 `constant_tsc` +
//! `nonstop_tsc` and the `tsc` clocksource) or on aarch64's architected counter, a tick is one
//! counter increment read straight from user space, which costs a few nanoseconds; otherwise
//! a tick is one nanosecond of `CLOCK_MONOTONIC` (vDSO). Whichever is used, its cost per read
//! is measured at start-up and carried in every result, so a slow clock (a guest on
//! `kvm-clock` or `xen`) is visible rather than silently inflating every latency.
//!
//! The module reads two small files under /sys and /proc to decide whether the counter is
//! trustworthy; that is the only I/O in `core`.

use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Which source the clock reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// `clock_gettime(CLOCK_MONOTONIC)`; one tick = 1 ns.
    Monotonic,
    /// x86 `rdtsc`, calibrated against `CLOCK_MONOTONIC`.
    Tsc,
    /// aarch64 `CNTVCT_EL0`, frequency from `CNTFRQ_EL0`.
    ArmCounter,
    /// `gettimeofday`: the wall clock in microsecond steps (fio's `clocksource=gettimeofday`);
    /// one tick = 1 ns, every reading a whole microsecond. Only when asked for.
    Gettimeofday,
}

impl ClockSource {
    /// The name used in JSON and text (`tsc`, `monotonic`, `arm_counter`).
    pub fn name(self) -> &'static str {
        match self {
            ClockSource::Monotonic => "monotonic",
            ClockSource::Tsc => "tsc",
            ClockSource::ArmCounter => "arm_counter",
            ClockSource::Gettimeofday => "gettimeofday",
        }
    }
}

/// A calibrated clock. Cheap to copy; reading it never allocates or locks.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    source: ClockSource,
    /// ns per tick as a 32.32 fixed-point multiplier.
    mult: u64,
    hz: f64,
}

/// What the clock is and what one read of it costs, as stored in every result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockInfo {
    /// The source event latencies were timed with.
    pub source: ClockSource,
    /// Ticks per second.
    pub ticks_per_s: f64,
    /// Measured cost of one read, in nanoseconds (median of several batches).
    pub read_cost_ns: f64,
}

#[inline(always)]
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes a timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[inline(always)]
fn gettimeofday_ns() -> u64 {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    // SAFETY: gettimeofday writes a timeval through a valid pointer; no time zone asked.
    unsafe { libc::gettimeofday(&mut tv, std::ptr::null_mut()) };
    tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn raw_counter() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86_64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn raw_counter() -> u64 {
    let v: u64;
    // SAFETY: CNTVCT_EL0 is readable from EL0 on Linux.
    unsafe { core::arch::asm!("isb", "mrs {}, cntvct_el0", out(reg) v, options(nomem, nostack)) };
    v
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline(always)]
fn raw_counter() -> u64 {
    monotonic_ns()
}

impl Clock {
    /// A clock on `CLOCK_MONOTONIC`, available everywhere.
    pub fn monotonic() -> Clock {
        Clock {
            source: ClockSource::Monotonic,
            mult: 1 << 32,
            hz: 1e9,
        }
    }

    /// The clock `source` whether this machine trusts it or not (a run that names its
    /// clock, as fio's `clocksource`): the CPU's counter calibrated against
    /// `CLOCK_MONOTONIC` (on a machine with none, `CLOCK_MONOTONIC`), `CLOCK_MONOTONIC`, or
    /// `gettimeofday`.
    pub fn with_source(source: ClockSource) -> Clock {
        match source {
            ClockSource::Monotonic => Clock::monotonic(),
            ClockSource::Gettimeofday => Clock {
                source,
                mult: 1 << 32,
                hz: 1e9,
            },
            ClockSource::Tsc | ClockSource::ArmCounter => {
                #[cfg(target_arch = "x86_64")]
                return Clock::calibrated(ClockSource::Tsc);
                #[cfg(target_arch = "aarch64")]
                {
                    let f: u64;
                    // SAFETY: CNTFRQ_EL0 is readable from EL0 on Linux.
                    unsafe {
                        core::arch::asm!("mrs {}, cntfrq_el0", out(reg) f, options(nomem, nostack))
                    };
                    if f > 0 {
                        return Clock::with_hz(ClockSource::ArmCounter, f as f64);
                    }
                }
                #[allow(unreachable_code)]
                Clock::monotonic()
            }
        }
    }

    /// Whether the kernel trusts the CPU's counter as a clock here (x86: the `tsc`
    /// clocksource with `constant_tsc` and `nonstop_tsc`; aarch64's architected counter
    /// always): what [`detect`](Self::detect) picks it by.
    pub fn counter_trusted() -> bool {
        #[cfg(target_arch = "x86_64")]
        return tsc_trusted();
        #[cfg(target_arch = "aarch64")]
        return true;
        #[allow(unreachable_code)]
        false
    }

    /// The cheapest trustworthy clock on this machine (see the module docs).
    pub fn detect() -> Clock {
        if std::env::var_os("HOSTBENCH_CLOCK").is_some_and(|v| v == "monotonic") {
            return Clock::monotonic();
        }
        #[cfg(target_arch = "x86_64")]
        if tsc_trusted() {
            return Clock::calibrated(ClockSource::Tsc);
        }
        #[cfg(target_arch = "aarch64")]
        {
            let f: u64;
            // SAFETY: CNTFRQ_EL0 is readable from EL0 on Linux.
            unsafe { core::arch::asm!("mrs {}, cntfrq_el0", out(reg) f, options(nomem, nostack)) };
            if f > 0 {
                return Clock::with_hz(ClockSource::ArmCounter, f as f64);
            }
        }
        Clock::monotonic()
    }

    fn with_hz(source: ClockSource, hz: f64) -> Clock {
        Clock {
            source,
            mult: ((1e9 / hz) * (1u64 << 32) as f64) as u64,
            hz,
        }
    }

    #[allow(dead_code)]
    fn calibrated(source: ClockSource) -> Clock {
        // Pair counter and monotonic reads, keeping the tightest pair at each end.
        let pair = || {
            let mut best = (u64::MAX, 0u64, 0u64);
            for _ in 0..32 {
                let a = monotonic_ns();
                let c = raw_counter();
                let b = monotonic_ns();
                if b - a < best.0 {
                    best = (b - a, (a + b) / 2, c);
                }
            }
            (best.1, best.2)
        };
        let (ns0, c0) = pair();
        std::thread::sleep(Duration::from_millis(15));
        let (ns1, c1) = pair();
        let hz = (c1.wrapping_sub(c0)) as f64 * 1e9 / (ns1 - ns0) as f64;
        if !(1e6..1e11).contains(&hz) {
            return Clock::monotonic();
        }
        Clock::with_hz(source, hz)
    }

    /// Reads the clock, in ticks.
    #[inline(always)]
    pub fn now(&self) -> u64 {
        match self.source {
            ClockSource::Monotonic => monotonic_ns(),
            ClockSource::Gettimeofday => gettimeofday_ns(),
            _ => raw_counter(),
        }
    }

    /// Converts a tick difference to nanoseconds.
    #[inline(always)]
    pub fn to_ns(&self, ticks: u64) -> u64 {
        ((ticks as u128 * self.mult as u128) >> 32) as u64
    }

    /// Converts nanoseconds to ticks (for deadlines).
    pub fn from_ns(&self, ns: u64) -> u64 {
        (ns as f64 * self.hz / 1e9) as u64
    }

    /// The source this clock reads.
    pub fn source(&self) -> ClockSource {
        self.source
    }

    /// Measures what one read costs (median over batches) and describes the clock.
    pub fn info(&self) -> ClockInfo {
        ClockInfo {
            source: self.source,
            ticks_per_s: self.hz,
            read_cost_ns: measure_read_cost(|| self.now()),
        }
    }
}

/// Median ns per call of `read` over several batches; used for every clock we report.
pub fn measure_read_cost(mut read: impl FnMut() -> u64) -> f64 {
    const BATCH: u32 = 2000;
    let mut samples = Vec::with_capacity(15);
    for _ in 0..15 {
        let start = Instant::now();
        let mut acc = 0u64;
        for _ in 0..BATCH {
            acc = acc.wrapping_add(read());
        }
        std::hint::black_box(acc);
        samples.push(start.elapsed().as_nanos() as f64 / BATCH as f64);
    }
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

#[cfg(target_arch = "x86_64")]
fn tsc_trusted() -> bool {
    let cs =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    if cs.trim() != "tsc" {
        return false;
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or("");
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    has("constant_tsc") && has("nonstop_tsc")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_convert_to_plausible_nanoseconds() {
        let c = Clock::detect();
        let t0 = c.now();
        let i0 = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        let ns = c.to_ns(c.now() - t0) as f64;
        let real = i0.elapsed().as_nanos() as f64;
        assert!(
            (ns / real - 1.0).abs() < 0.05,
            "clock {ns} ns vs Instant {real} ns"
        );
        assert!((c.from_ns(1_000_000) as f64 / c.hz * 1e9 - 1e6).abs() < 1e3);
    }

    #[test]
    fn a_named_source_is_the_one_read() {
        for src in [ClockSource::Monotonic, ClockSource::Gettimeofday] {
            assert_eq!(Clock::with_source(src).source(), src);
        }
        // gettimeofday reads whole microseconds.
        let c = Clock::with_source(ClockSource::Gettimeofday);
        assert!((0..50).all(|_| c.now().is_multiple_of(1000)));
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            Clock::with_source(ClockSource::Tsc).source(),
            ClockSource::Tsc
        );
    }

    #[test]
    fn read_cost_is_measured() {
        let info = Clock::monotonic().info();
        assert!(info.read_cost_ns > 0.0 && info.read_cost_ns < 100_000.0);
    }
}
