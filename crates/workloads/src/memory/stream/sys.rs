//! Thread primitives of the STREAM run: a cache-line padded cell, the spinning barrier
//! that times kernel passes, and pinning a thread to a CPU.

use hostbench_core::clock::Clock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};

#[repr(align(128))]
pub(super) struct Padded<T>(pub(super) T);

/// A barrier that spins, then sleeps, and timestamps its release.
///
/// Kernel passes last microseconds to milliseconds, and a futex wake-up (std's Barrier)
/// would add tens of microseconds to every timed pass, so waiters spin first. A thread that
/// is still waiting after [`SPIN_NS`] parks instead: its partner has most likely been
/// preempted (a busy or oversubscribed machine), and a spinning waiter would keep its CPU
/// from the task that preempted the partner, which pinning keeps on the partner's CPU.
///
/// The last thread to arrive reads the clock just before it releases the others: that
/// instant ends one pass and starts the next, exactly, whichever thread is late (STREAM's
/// master thread reads the clock before forking, so no worker can start early; a timestamp
/// read by one thread *after* the release could miss work others did while it was
/// descheduled).
pub(super) struct SpinBarrier {
    n: usize,
    arrived: Padded<AtomicUsize>,
    generation: Padded<AtomicUsize>,
    released_at: Padded<AtomicU64>,
    /// Each thread's handle, registered before its first wait, and whether it sleeps.
    sleepers: Vec<Padded<(std::sync::OnceLock<std::thread::Thread>, AtomicBool)>>,
}

/// How long a waiter spins before it parks.
const SPIN_NS: u64 = 200_000;

impl SpinBarrier {
    pub(super) fn new(n: usize) -> SpinBarrier {
        SpinBarrier {
            n,
            arrived: Padded(AtomicUsize::new(0)),
            generation: Padded(AtomicUsize::new(0)),
            released_at: Padded(AtomicU64::new(0)),
            sleepers: (0..n)
                .map(|_| Padded((std::sync::OnceLock::new(), AtomicBool::new(false))))
                .collect(),
        }
    }

    /// Makes thread `tid` wakeable; call before its first [`SpinBarrier::wait`].
    pub(super) fn register(&self, tid: usize) {
        let _ = self.sleepers[tid].0.0.set(std::thread::current());
    }

    /// Waits for every thread; returns the clock reading taken at the release.
    pub(super) fn wait(&self, tid: usize, clock: &Clock) -> u64 {
        let g = self.generation.0.load(Acquire);
        if self.arrived.0.fetch_add(1, AcqRel) + 1 == self.n {
            let now = clock.now();
            self.released_at.0.store(now, Relaxed);
            self.arrived.0.store(0, Relaxed);
            self.generation.0.store(g.wrapping_add(1), SeqCst);
            for s in &self.sleepers {
                if s.0.1.load(SeqCst)
                    && let Some(t) = s.0.0.get()
                {
                    t.unpark();
                }
            }
            return now;
        }
        let start = clock.now();
        let budget = clock.from_ns(SPIN_NS);
        let mut spins = 0u32;
        while self.generation.0.load(Acquire) == g {
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(64) && clock.now().wrapping_sub(start) > budget {
                self.sleep(tid, g);
                break;
            }
        }
        // Written before the release, and not again before every thread has arrived at the
        // next barrier, which this one has not.
        self.released_at.0.load(Relaxed)
    }

    /// Parks until the generation moves on. SeqCst on both sides: either the releaser sees
    /// `sleeping` and unparks, or this thread sees the new generation before parking.
    fn sleep(&self, tid: usize, g: usize) {
        let me = &self.sleepers[tid].0;
        if me.0.get().is_none() {
            while self.generation.0.load(Acquire) == g {
                std::thread::yield_now();
            }
            return;
        }
        me.1.store(true, SeqCst);
        while self.generation.0.load(SeqCst) == g {
            std::thread::park();
        }
        me.1.store(false, Relaxed);
    }
}

/// Why a thread could not be pinned to a CPU (a warning in the result, never a failed run).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AffinityError {
    /// `sched_getaffinity` failed (with this errno).
    #[error("sched_getaffinity: {}", std::io::Error::from_raw_os_error(*.0))]
    Get(i32),
    /// A CPU number beyond what a `cpu_set_t` holds.
    #[error("CPU {cpu} is beyond the {max} hostbench can address")]
    Beyond {
        /// The CPU.
        cpu: usize,
        /// CPUs a `cpu_set_t` can name.
        max: usize,
    },
    /// `sched_setaffinity` failed (with this errno).
    #[error("sched_setaffinity(CPU {cpu}): {}", std::io::Error::from_raw_os_error(*errno))]
    Set {
        /// The CPU.
        cpu: usize,
        /// The OS error.
        errno: i32,
    },
    /// The process's CPU set is empty.
    #[error("the process may run on no CPU?")]
    NoCpu,
    /// Not Linux.
    #[cfg(not(target_os = "linux"))]
    #[error("thread pinning is implemented for Linux only")]
    Unsupported,
}

#[cfg(target_os = "linux")]
pub(super) mod affinity {
    use super::AffinityError;

    /// CPUs a `cpu_set_t` can name (1024 with glibc and musl).
    const MAX: usize = 8 * std::mem::size_of::<libc::cpu_set_t>();

    /// The CPUs this process may run on, in order.
    pub fn allowed() -> Result<Vec<usize>, AffinityError> {
        // SAFETY: cpu_set_t is plain bits; all-zero is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid cpu_set_t of the size passed.
        let rc =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc != 0 {
            return Err(AffinityError::Get(errno()));
        }
        // SAFETY: CPU_ISSET reads within the set for c < MAX.
        Ok((0..MAX)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect())
    }

    /// Binds the calling thread to `cpu`.
    pub fn pin(cpu: usize) -> Result<(), AffinityError> {
        if cpu >= MAX {
            return Err(AffinityError::Beyond { cpu, max: MAX });
        }
        // SAFETY: as above; CPU_SET writes within the set for cpu < MAX; pid 0 is the
        // calling thread.
        let rc = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if rc != 0 {
            return Err(AffinityError::Set {
                cpu,
                errno: errno(),
            });
        }
        Ok(())
    }

    /// The calling thread's `errno`.
    fn errno() -> i32 {
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) mod affinity {
    use super::AffinityError;
    pub fn allowed() -> Result<Vec<usize>, AffinityError> {
        Err(AffinityError::Unsupported)
    }
    pub fn pin(_cpu: usize) -> Result<(), AffinityError> {
        Err(AffinityError::Unsupported)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_beyond_the_set_is_refused_by_name() {
        let e = affinity::pin(1 << 20).unwrap_err();
        assert!(
            matches!(e, AffinityError::Beyond { cpu: 1_048_576, .. }),
            "{e}"
        );
        assert!(
            e.to_string().starts_with("CPU 1048576 is beyond the "),
            "{e}"
        );
        let e = AffinityError::Set {
            cpu: 3,
            errno: libc::EINVAL,
        };
        assert_eq!(
            e.to_string(),
            format!(
                "sched_setaffinity(CPU 3): {}",
                std::io::Error::from_raw_os_error(libc::EINVAL)
            )
        );
    }
}
