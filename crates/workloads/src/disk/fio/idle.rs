//! fio's `--idle-prof=calibrate|system|percpu`: how idle the CPUs stayed while the jobs ran
//! (fio 3.33's `idletime.c`, rewritten).
//!
//! One thread per configured CPU, pinned to it, first calibrates a *unit of work* — a byte
//! store into each byte of a page-sized buffer, checking between bytes whether to stop —
//! as the fastest of 10 runs of 1000 units (fio's `CALIBRATE_RUNS`, `CALIBRATE_SCALE`), in
//! whole microseconds as fio times it; the CPUs' mean and sample standard deviation of that time are the `unit work` line.
//! Then each thread drops to `SCHED_IDLE` (it runs only when nothing else on its CPU wants
//! to) and counts the units it completes until the jobs have ended. A CPU's idleness is
//! units × mean unit time / elapsed time; `system` is the CPUs' mean.
//!
//! What the figure means: the share of each CPU that nothing else wanted — not only the
//! benchmark's jobs but every other process, and on a virtual machine the hypervisor's
//! steal: a `SCHED_IDLE` thread gets what is left. Compare it between runs on one machine,
//! not between machines (the unit is calibrated on each). hostbench's unit is its own
//! code, not fio's, so the unit time differs from fio's; the idleness, a ratio of the same
//! unit's counts, is what compares.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Instant;

use hostbench_core::fio_result::FioIdleness;

/// Calibration runs per CPU (fio's `CALIBRATE_RUNS`).
const RUNS: usize = 10;
/// Units of work per calibration run (fio's `CALIBRATE_SCALE`).
const SCALE: usize = 1000;

/// What `--idle-prof` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `calibrate`: the unit's time, printed; no job runs.
    Calibrate,
    /// `system`: the CPUs' mean idleness.
    System,
    /// `percpu`: the mean and each CPU's.
    Percpu,
}

impl Mode {
    /// fio's word for it (`--idle-prof=WORD`), `None` for any other word.
    pub fn parse(word: &str) -> Option<Mode> {
        match word {
            "calibrate" => Some(Mode::Calibrate),
            "system" => Some(Mode::System),
            "percpu" => Some(Mode::Percpu),
            _ => None,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Mode::Calibrate => "calibrate",
            Mode::System => "system",
            Mode::Percpu => "percpu",
        }
    }
}

/// 0: off; else 1 + the mode's index.
static MODE: AtomicU8 = AtomicU8::new(0);

/// Turns idle profiling on (`Some`) or off for runs set up from now on.
pub fn enable(mode: Option<Mode>) {
    let v = match mode {
        None => 0,
        Some(Mode::Calibrate) => 1,
        Some(Mode::System) => 2,
        Some(Mode::Percpu) => 3,
    };
    MODE.store(v, Ordering::Relaxed);
}

/// The mode runs set up now profile with (`calibrate` never reaches a run).
pub(super) fn mode() -> Option<Mode> {
    match MODE.load(Ordering::Relaxed) {
        2 => Some(Mode::System),
        3 => Some(Mode::Percpu),
        _ => None,
    }
}

/// The threads' shared state: the stop flag the unit of work checks between bytes, and the
/// gate they wait at between calibration and counting.
struct Common {
    stop: AtomicBool,
    /// `Some(true)`: count; `Some(false)`: end (calibration only, or a thread failed).
    gate: Mutex<Option<bool>>,
    opened: Condvar,
}

/// What one CPU's thread measured.
#[derive(Debug, Clone, Copy, Default)]
struct Cpu {
    /// Its calibrated unit time, µs (0 when it failed).
    unit_us: f64,
    /// Units counted while the jobs ran (fractional: the last one partly done).
    units: f64,
    /// Whole µs it counted for.
    elapsed_us: u64,
}

/// A running profiler: calibrated, counting until [`Profiler::finish`].
pub(super) struct Profiler {
    mode: Mode,
    common: Arc<Common>,
    threads: Mutex<Vec<JoinHandle<Cpu>>>,
    /// Per CPU, its calibrated unit time (µs), or why its thread could not run.
    calibrated: Vec<Result<f64, String>>,
    done: OnceLock<FioIdleness>,
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

/// One unit of work: a byte store into each byte of `data`, from `j`'s place on, checking
/// `stop` after each. `Some(k)`: stopped after `k` bytes.
#[inline(never)]
fn unit(data: &mut [u8], j: usize, stop: &AtomicBool) -> Option<usize> {
    let n = data.len();
    for k in 0..n {
        // SAFETY: (k + j) % n is within data; a volatile store keeps every byte's store.
        unsafe { std::ptr::write_volatile(data.as_mut_ptr().add((k + j) % n), k as u8) };
        if stop.load(Ordering::Relaxed) {
            return Some(k);
        }
    }
    None
}

/// The fastest of [`RUNS`] runs of [`SCALE`] units, per unit, µs (fio's `calibrate_unit`:
/// whole microseconds; a run timed at 0 µs does not count).
fn calibrate(data: &mut [u8], stop: &AtomicBool) -> f64 {
    let mut best: Option<u64> = None;
    for _ in 0..RUNS {
        let t0 = Instant::now();
        for j in 0..SCALE {
            if unit(data, j, stop).is_some() {
                return 0.0;
            }
        }
        let t = t0.elapsed().as_micros() as u64;
        if t == 0 {
            continue;
        }
        best = Some(best.map_or(t, |b| b.min(t)));
    }
    best.unwrap_or(0) as f64 / SCALE as f64
}

fn pin(cpu: usize) -> Result<(), String> {
    // SAFETY: a zeroed cpu_set_t with one CPU below the set's 1024 set.
    let r = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu.min(1023), &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if r != 0 {
        return Err(format!(
            "fio_setaffinity failed (CPU {cpu}: {})",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

fn sched_idle() -> Result<(), String> {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; p is a valid sched_param.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &p) };
    if r != 0 {
        return Err(format!(
            "fio_set_sched_idle failed ({})",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

impl Profiler {
    /// Starts a thread on each configured CPU, waits for their calibration and, unless
    /// `mode` is `calibrate` or a thread failed, lets them count from now on.
    pub(super) fn start(mode: Mode) -> Profiler {
        let ncpu = super::process::cpus_configured();
        let page = page_size();
        let common = Arc::new(Common {
            stop: AtomicBool::new(false),
            gate: Mutex::new(None),
            opened: Condvar::new(),
        });
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Result<f64, String>)>();
        let mut threads = Vec::with_capacity(ncpu);
        let mut calibrated: Vec<Result<f64, String>> =
            vec![Err("its thread did not start".into()); ncpu];
        for (cpu, slot) in calibrated.iter_mut().enumerate() {
            let common = Arc::clone(&common);
            let tx = tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("idle-prof-{cpu}"))
                .spawn(move || {
                    let mut data = vec![0u8; page];
                    let cali = pin(cpu).and_then(|()| {
                        let t = calibrate(&mut data, &common.stop);
                        // The idle class only after calibrating, as fio: calibration
                        // wants the CPU.
                        sched_idle().map(|()| t)
                    });
                    let ok = cali.is_ok();
                    let unit_us = *cali.as_ref().unwrap_or(&0.0);
                    let _ = tx.send((cpu, cali));
                    drop(tx);
                    let go = {
                        let mut g = common.gate.lock().unwrap_or_else(|e| e.into_inner());
                        loop {
                            if let Some(go) = *g {
                                break go;
                            }
                            g = common.opened.wait(g).unwrap_or_else(|e| e.into_inner());
                        }
                    };
                    if !ok || !go {
                        return Cpu {
                            unit_us,
                            ..Cpu::default()
                        };
                    }
                    let t0 = Instant::now();
                    let mut j = 0usize;
                    loop {
                        if let Some(k) = unit(&mut data, j, &common.stop) {
                            return Cpu {
                                unit_us,
                                units: j as f64 + k as f64 / page as f64,
                                elapsed_us: t0.elapsed().as_micros() as u64,
                            };
                        }
                        j += 1;
                    }
                });
            match spawned {
                Ok(h) => threads.push(h),
                Err(e) => *slot = Err(format!("pthread_create {e}")),
            }
        }
        drop(tx);
        for (cpu, r) in rx {
            calibrated[cpu] = r;
        }
        let all_ok = calibrated.iter().all(Result::is_ok);
        {
            let mut g = common.gate.lock().unwrap_or_else(|e| e.into_inner());
            *g = Some(all_ok && mode != Mode::Calibrate);
            common.opened.notify_all();
        }
        Profiler {
            mode,
            common,
            threads: Mutex::new(threads),
            calibrated,
            done: OnceLock::new(),
        }
    }

    /// Why profiling could not run (fio logs each thread's failure and reports zeros),
    /// one message per failed CPU.
    pub(super) fn failures(&self) -> Vec<String> {
        self.calibrated
            .iter()
            .enumerate()
            .filter_map(|(cpu, r)| r.as_ref().err().map(|e| format!("CPU {cpu}: {e}")))
            .collect()
    }

    /// Stops the counting (the first call; later calls return the same figures) and the
    /// figures: fio's `fio_idle_prof_stop` and `calibration_stats`.
    pub(super) fn finish(&self) -> FioIdleness {
        self.done
            .get_or_init(|| {
                self.common.stop.store(true, Ordering::Relaxed);
                let handles: Vec<_> =
                    std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
                let cpus: Vec<Cpu> = handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_default())
                    .collect();
                figures(self.mode, &cpus, self.calibrated.iter().all(Result::is_ok))
            })
            .clone()
    }
}

impl Drop for Profiler {
    fn drop(&mut self) {
        // A run that ended without a report (an error): the threads must not spin on.
        self.common.stop.store(true, Ordering::Relaxed);
        let mut g = self.common.gate.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            *g = Some(false);
            self.common.opened.notify_all();
        }
    }
}

/// fio's figures from the CPUs' measurements: the unit's mean and sample standard deviation
/// over the CPUs (0 when a thread failed, as fio, or with one CPU, where fio's is 0/0), each
/// CPU's idleness (units × mean / elapsed) and their mean, in percent.
fn figures(mode: Mode, cpus: &[Cpu], all_ok: bool) -> FioIdleness {
    let n = cpus.len().max(1) as f64;
    let (mean, stddev) = if all_ok && !cpus.is_empty() {
        let mean = cpus.iter().map(|c| c.unit_us).sum::<f64>() / n;
        let var = cpus.iter().map(|c| (c.unit_us - mean).powi(2)).sum::<f64>();
        let sd = if cpus.len() > 1 {
            (var / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        (mean, sd)
    } else {
        (0.0, 0.0)
    };
    let per_cpu: Vec<f64> = cpus
        .iter()
        .map(|c| {
            if mean == 0.0 || c.elapsed_us == 0 {
                0.0
            } else {
                c.units * mean / c.elapsed_us as f64 * 100.0
            }
        })
        .collect();
    let system = per_cpu.iter().sum::<f64>() / n;
    FioIdleness {
        mode: mode.word().to_string(),
        system,
        per_cpu: if mode == Mode::Percpu {
            per_cpu
        } else {
            Vec::new()
        },
        unit_mean_us: mean,
        unit_stddev_us: stddev,
    }
}

/// `--idle-prof=calibrate`: fio's calibration alone (its figures and why a CPU's thread
/// failed, if one did); nothing runs.
pub fn calibrate_only() -> (FioIdleness, Vec<String>) {
    let p = Profiler::start(Mode::Calibrate);
    (p.finish(), p.failures())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's arithmetic: idleness = units × mean unit / elapsed; `system` the CPUs' mean;
    /// the unit's standard deviation over the CPUs a sample one (n − 1).
    #[test]
    fn figures_are_fios_arithmetic() {
        let cpus = [
            Cpu {
                unit_us: 10.0,
                units: 50_000.0,
                elapsed_us: 1_000_000,
            },
            Cpu {
                unit_us: 14.0,
                units: 25_000.0,
                elapsed_us: 1_000_000,
            },
        ];
        let f = figures(Mode::Percpu, &cpus, true);
        assert_eq!(f.unit_mean_us, 12.0);
        assert!((f.unit_stddev_us - 8f64.sqrt()).abs() < 1e-12);
        assert!((f.per_cpu[0] - 60.0).abs() < 1e-9);
        assert!((f.per_cpu[1] - 30.0).abs() < 1e-9);
        assert!((f.system - 45.0).abs() < 1e-9);
        // A failed thread: fio reports zeros.
        let f = figures(Mode::System, &cpus, false);
        assert_eq!((f.system, f.unit_mean_us), (0.0, 0.0));
        assert!(f.per_cpu.is_empty());
    }

    /// A profiler on this machine: every CPU calibrates a unit that takes some time, and an
    /// idle wait is mostly idle (not asserted tightly: the machine is shared).
    #[test]
    fn a_profiler_measures_an_idle_wait() {
        let p = Profiler::start(Mode::Percpu);
        assert!(p.failures().is_empty(), "{:?}", p.failures());
        std::thread::sleep(std::time::Duration::from_millis(300));
        let f = p.finish();
        assert!(f.unit_mean_us > 0.0, "{f:?}");
        assert_eq!(f.per_cpu.len(), super::super::process::cpus_configured());
        assert!(f.system > 0.0 && f.system <= 150.0, "{f:?}");
        // finish() again: the same figures.
        assert_eq!(p.finish(), f);
    }
}
