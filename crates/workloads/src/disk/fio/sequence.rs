//! When each clone starts and what stops it, as fio 3.33 decides (`backend.c:run_threads`,
//! `libfio.c:fio_terminate_threads`): every clone of a run is a thread of one runner run,
//! built and gated with the others; before its first I/O it waits here for its turn.
//!
//! The turn rule is fio's scan over the clones in order (the same order as fio's thread
//! numbers: jobs in file order, each job's clones together), done again whenever a clone ends
//! and at least every 10 ms while some clone waits on a start delay:
//! - a clone whose `startdelay` (counted from the start of the run, not from the previous
//!   phase) has not passed is skipped, and does not hold up the clones after it;
//! - a `stonewall` job (its first clone) waits while any clone is running, and so does every
//!   clone after it in the scan: jobs between two stonewalls run together, and each
//!   stonewall starts a phase once the previous one has ended;
//! - a `wait_for=NAME` clone is skipped while a clone of the job NAME has not ended;
//! - a clone told to stop before it started never starts.
//!
//! What stops clones: with `exitall` anywhere in the jobs (fio makes it process-wide) every
//! clone that ends, and with `exitall_on_error` a clone that ends in an error, stops the
//! clones its job's `exit_what` names: `group` every clone of its reporting group (those not
//! started never start), `stonewall` every clone running at that moment, `all` every clone.
//! A running clone reads its stop flag before each I/O ([`Sequencer::told_to_stop`]), so it
//! ends as at its time limit: what is in flight completes and counts.
//!
//! Time stays the runner's: the clone's own limits (`ramp_time`, `runtime`) are set through
//! `RunControl::end_at` once its turn comes, and a Ctrl-C or a failed clone ends every
//! wait at once.

use super::job::{ExitWhat, JobSpec};
use hostbench_core::rand::Rng;
use hostbench_core::runner::RunControl;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Where a clone is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    /// Not started yet.
    Pending,
    /// Started (its I/O loop runs).
    Running,
    /// Ended, or told to stop before it started.
    Exited,
}

/// One clone as the scan sees it.
#[derive(Debug, Clone)]
pub(super) struct Td {
    /// Index of its job (names compared through it).
    pub(super) job: usize,
    pub(super) group: u32,
    /// Only a job's first clone carries `stonewall` (fio clears it on the clones).
    pub(super) stonewall: bool,
    /// Start delay from the start of the run, ns.
    pub(super) delay_ns: u64,
    pub(super) state: State,
    /// Told to stop.
    pub(super) terminate: bool,
}

/// Whether a clone may start: fio's `run_threads` scan, over clones in order. `names[j]` is
/// job `j`'s name, `wait_for[j]` the name it waits for. Returns true when a clone changed
/// state.
pub(super) fn schedule(
    tds: &mut [Td],
    names: &[String],
    wait_for: &[Option<String>],
    elapsed_ns: u64,
) -> bool {
    let mut changed = false;
    let mut busy = tds.iter().any(|t| t.state == State::Running);
    for i in 0..tds.len() {
        if tds[i].state != State::Pending {
            continue;
        }
        if tds[i].terminate {
            tds[i].state = State::Exited;
            changed = true;
            continue;
        }
        if tds[i].delay_ns > elapsed_ns {
            continue;
        }
        if tds[i].stonewall && busy {
            break;
        }
        if let Some(w) = &wait_for[tds[i].job] {
            let me = &names[tds[i].job];
            let fenced = tds
                .iter()
                .any(|t| names[t.job] != *me && names[t.job] == *w && t.state != State::Exited);
            if fenced {
                continue;
            }
        }
        tds[i].state = State::Running;
        busy = true;
        changed = true;
    }
    changed
}

/// Marks the clones `what` names (from a clone of `group` that ends) as told to stop; the
/// running ones see it through `flags`.
fn terminate(tds: &mut [Td], flags: &[AtomicBool], group: u32, what: ExitWhat) {
    for (t, f) in tds.iter_mut().zip(flags) {
        let hit = match what {
            ExitWhat::Group => t.group == group,
            ExitWhat::Stonewall => t.state == State::Running,
            ExitWhat::All => true,
        };
        if hit && !t.terminate {
            t.terminate = true;
            t.delay_ns = 0;
            f.store(true, Relaxed);
        }
    }
}

/// What a clone's turn came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Turn {
    /// Start now.
    Run,
    /// Never start (told to stop first, or the run is over).
    Never,
}

/// The clones' shared start and stop state.
pub(super) struct Sequencer {
    tds: Mutex<Vec<Td>>,
    cv: Condvar,
    stop: Vec<AtomicBool>,
    names: Vec<String>,
    wait_for: Vec<Option<String>>,
    exit_what: Vec<ExitWhat>,
    exitall_on_error: Vec<bool>,
    /// Some job has `exitall`: every clone's end stops what its `exit_what` names.
    exitall: bool,
    /// Per job: it uses the cpuio engine (no I/O).
    cpu: Vec<bool>,
    /// Per job: fio's `thread` (fio reaps threads and processes differently, below).
    thread: Vec<bool>,
}

impl Sequencer {
    /// The clones `threads` ((job, clone) per thread) of `jobs`; `seed` draws the start
    /// delays of ranges (one value per clone, the same on every run with the same seed).
    pub(super) fn new(jobs: &[JobSpec], threads: &[(usize, u32)], seed: u64) -> Sequencer {
        let tds: Vec<Td> = threads
            .iter()
            .enumerate()
            .map(|(tid, &(ji, clone))| {
                let j = &jobs[ji];
                let (lo, hi) = j.startdelay_s;
                let delay = if hi > lo {
                    let u = Rng::for_thread(seed ^ 0x57A7_DE1A, tid as u64).next_f64();
                    lo + (hi - lo) * u
                } else {
                    lo
                };
                Td {
                    job: ji,
                    group: j.groupid,
                    stonewall: j.stonewall && clone == 0,
                    delay_ns: (delay * 1e9) as u64,
                    // A clone fio gives no file never starts, nor one whose file could
                    // not be laid out (fio reaps it at its setup).
                    state: if j.idle_clones.contains(&clone) || j.layout_failure(clone).is_some() {
                        State::Exited
                    } else {
                        State::Pending
                    },
                    terminate: false,
                }
            })
            .collect();
        Sequencer {
            stop: tds.iter().map(|_| AtomicBool::new(false)).collect(),
            tds: Mutex::new(tds),
            cv: Condvar::new(),
            names: jobs.iter().map(|j| j.name.clone()).collect(),
            wait_for: jobs.iter().map(|j| j.wait_for.clone()).collect(),
            exit_what: jobs.iter().map(|j| j.exit_what).collect(),
            exitall_on_error: jobs.iter().map(|j| j.exitall_on_error).collect(),
            exitall: jobs.iter().any(|j| j.exitall),
            cpu: jobs
                .iter()
                .map(|j| j.engine == super::job::EngineKind::Cpuio)
                .collect(),
            thread: jobs.iter().map(|j| j.thread).collect(),
        }
    }

    /// Whether a clone that does I/O (not cpuio) is running or has yet to start (fio's
    /// `fio_running_or_pending_io_threads`, which cpuio's `exit_on_io_done` reads).
    pub(super) fn io_clones_left(&self) -> bool {
        self.lock()
            .iter()
            .any(|t| !self.cpu[t.job] && t.state != State::Exited)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Td>> {
        self.tds.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until clone `tid` may start (fio's rules above), the run is over, or the clone
    /// is told to stop first.
    pub(super) fn wait_turn(&self, tid: usize, ctl: &mut RunControl<'_>) -> Turn {
        let clock = ctl.clock();
        let genesis = ctl.run_start();
        let mut g = self.lock();
        loop {
            let elapsed = clock.to_ns(ctl.now().saturating_sub(genesis));
            if schedule(&mut g, &self.names, &self.wait_for, elapsed) {
                self.cv.notify_all();
            }
            match g[tid].state {
                State::Running => return Turn::Run,
                State::Exited => return Turn::Never,
                State::Pending => {}
            }
            if ctl.should_stop(ctl.now()) || ctl.aborted() {
                g[tid].state = State::Exited;
                self.cv.notify_all();
                return Turn::Never;
            }
            // A clone ending wakes every waiter; a start delay passes without one, so the
            // scan runs again when it is due, and at least every 10 ms (fio's runs every
            // 100 ms).
            let left = g[tid].delay_ns.saturating_sub(elapsed);
            let nap = if left > 0 {
                Duration::from_nanos(left.clamp(100_000, 10_000_000))
            } else {
                Duration::from_millis(10)
            };
            g = self
                .cv
                .wait_timeout(g, nap)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Clone `tid` has ended (`failed`: with an error): stops what `exitall` /
    /// `exitall_on_error` say, and lets waiting clones look again.
    pub(super) fn finish(&self, tid: usize, failed: bool) {
        let mut g = self.lock();
        g[tid].state = State::Exited;
        let job = g[tid].job;
        if self.exitall || (failed && self.exitall_on_error[job]) {
            let group = g[tid].group;
            terminate(&mut g, &self.stop, group, self.exit_what[job]);
        }
        if cpu_jobs_left_alone(&g, &self.cpu, &self.thread) {
            for (t, stop) in g.iter_mut().zip(&self.stop) {
                t.terminate = true;
                stop.store(true, Relaxed);
            }
        }
        self.cv.notify_all();
    }

    /// fio's `fio_terminate_threads(TERMINATE_ALL)` (a trigger): every clone is told to
    /// stop; those not started never start.
    pub(super) fn stop_all(&self) {
        let mut g = self.lock();
        for (t, stop) in g.iter_mut().zip(&self.stop) {
            t.terminate = true;
            t.delay_ns = 0;
            stop.store(true, Relaxed);
        }
        self.cv.notify_all();
    }

    /// Whether some clone is running.
    pub(super) fn any_running(&self) -> bool {
        self.lock().iter().any(|t| t.state == State::Running)
    }

    /// Whether every clone has ended (or will never start).
    pub(super) fn all_exited(&self) -> bool {
        self.lock().iter().all(|t| t.state == State::Exited)
    }

    /// True once clone `tid` has been told to stop (read before each I/O).
    #[inline]
    pub(super) fn told_to_stop(&self, tid: usize) -> bool {
        self.stop[tid].load(Relaxed)
    }
}

/// fio's `reap_threads` end of cpuio jobs: once the clones still there are exactly the
/// run's cpuio clones (every one that does I/O has ended, no cpuio one has), none is yet to
/// start, and there were clones doing I/O, fio stops everything. fio counts a running clone
/// started as a process (no `thread`) as pending, so the rule only fires when every clone
/// still running is a thread (measured with fio 3.33: a cpuio job with `thread` ends with
/// the I/O jobs, without it runs its whole runtime).
fn cpu_jobs_left_alone(tds: &[Td], cpu: &[bool], thread: &[bool]) -> bool {
    let cpu_total = tds.iter().filter(|t| cpu[t.job]).count();
    let real_total = tds.len() - cpu_total;
    let left = tds.iter().filter(|t| t.state != State::Exited).count();
    let pending = tds
        .iter()
        .filter(|t| t.state == State::Pending || (t.state == State::Running && !thread[t.job]))
        .count();
    real_total > 0 && cpu_total > 0 && left == cpu_total && pending == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn td(job: usize, group: u32, stonewall: bool, delay_ms: u64) -> Td {
        Td {
            job,
            group,
            stonewall,
            delay_ns: delay_ms * 1_000_000,
            state: State::Pending,
            terminate: false,
        }
    }

    fn states(tds: &[Td]) -> String {
        tds.iter()
            .map(|t| match t.state {
                State::Pending => 'P',
                State::Running => 'R',
                State::Exited => 'E',
            })
            .collect()
    }

    #[test]
    fn cpuio_threads_end_when_the_io_jobs_have_ended() {
        let mut t = vec![td(0, 0, false, 0), td(1, 0, false, 0)];
        t[1].state = State::Running;
        t[0].state = State::Exited;
        // job 1 is cpuio: as threads it is stopped, as a process it runs on (fio).
        assert!(cpu_jobs_left_alone(&t, &[false, true], &[true, true]));
        assert!(!cpu_jobs_left_alone(&t, &[false, true], &[true, false]));
        // No job doing I/O in the run: nothing to end with.
        assert!(!cpu_jobs_left_alone(&t[1..], &[false, true], &[true, true]));
        // The I/O job still runs.
        t[0].state = State::Running;
        assert!(!cpu_jobs_left_alone(&t, &[false, true], &[true, true]));
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn stonewalls_make_phases_and_the_jobs_between_run_together() {
        // a ×2, b, c (new_group: no wait), d (stonewall), e.
        let n = names(&["a", "b", "c", "d", "e"]);
        let w = vec![None; 5];
        let mut t = vec![
            td(0, 0, false, 0),
            td(0, 0, false, 0),
            td(1, 0, false, 0),
            td(2, 1, false, 0),
            td(3, 2, true, 0),
            td(4, 2, false, 0),
        ];
        assert!(schedule(&mut t, &n, &w, 0));
        assert_eq!(states(&t), "RRRRPP");
        for x in &mut t[..3] {
            x.state = State::Exited;
        }
        assert!(!schedule(&mut t, &n, &w, 0), "c still runs: d waits");
        assert_eq!(states(&t), "EEERPP");
        t[3].state = State::Exited;
        schedule(&mut t, &n, &w, 0);
        assert_eq!(
            states(&t),
            "EEEERR",
            "d and the job after it start together"
        );
    }

    #[test]
    fn a_start_delay_counts_from_the_run_start_and_holds_up_no_one() {
        let n = names(&["a", "b", "c"]);
        let w = vec![None; 3];
        // b is delayed 1 s; c (no stonewall) starts at once; a delayed stonewall job is
        // skipped without blocking the scan, as in fio.
        let mut t = vec![td(0, 0, false, 0), td(1, 0, true, 1000), td(2, 0, false, 0)];
        schedule(&mut t, &n, &w, 0);
        assert_eq!(states(&t), "RPR");
        schedule(&mut t, &n, &w, 999_000_000);
        assert_eq!(states(&t), "RPR");
        // At 1 s b's delay has passed, but it is a stonewall and a and c still run.
        schedule(&mut t, &n, &w, 1_000_000_000);
        assert_eq!(states(&t), "RPR");
        t[0].state = State::Exited;
        t[2].state = State::Exited;
        schedule(&mut t, &n, &w, 1_000_000_000);
        assert_eq!(states(&t), "ERE");
    }

    #[test]
    fn wait_for_waits_for_every_clone_of_the_waitee() {
        let n = names(&["w", "r"]);
        let w = vec![None, Some("w".to_string())];
        let mut t = vec![td(0, 0, false, 0), td(0, 0, false, 0), td(1, 1, false, 0)];
        schedule(&mut t, &n, &w, 0);
        assert_eq!(states(&t), "RRP");
        t[0].state = State::Exited;
        schedule(&mut t, &n, &w, 0);
        assert_eq!(states(&t), "ERP");
        t[1].state = State::Exited;
        schedule(&mut t, &n, &w, 0);
        assert_eq!(states(&t), "EER");
    }

    #[test]
    fn exit_what_stops_the_group_the_running_or_everything() {
        let flags: Vec<AtomicBool> = (0..4).map(|_| AtomicBool::new(false)).collect();
        let base = || {
            let mut t = vec![
                td(0, 0, false, 0),
                td(1, 0, false, 0),
                td(2, 1, false, 0),
                td(3, 2, true, 0),
            ];
            for x in &mut t[..3] {
                x.state = State::Running;
            }
            t
        };
        let told = |t: &[Td]| t.iter().map(|x| x.terminate).collect::<Vec<_>>();
        let mut t = base();
        terminate(&mut t, &flags, 0, ExitWhat::Group);
        assert_eq!(told(&t), [true, true, false, false]);
        let mut t = base();
        terminate(&mut t, &flags, 0, ExitWhat::Stonewall);
        assert_eq!(told(&t), [true, true, true, false]);
        let mut t = base();
        terminate(&mut t, &flags, 0, ExitWhat::All);
        assert_eq!(told(&t), [true, true, true, true]);
        // A clone told to stop before it started never starts.
        for x in &mut t[..3] {
            x.state = State::Exited;
        }
        schedule(
            &mut t,
            &names(&["a", "b", "c", "d"]),
            &[None, None, None, None],
            0,
        );
        assert_eq!(states(&t), "EEEE");
    }
}
