//! `disk.fio`: fio's queue-depth I/O engine, for fio's command lines and job files.
//!
//! One run holds every job of one fio command; each job's `numjobs` clones are the runner's
//! threads, and each waits for its turn as fio starts it (`sequence.rs`: `stonewall`
//! phases, `wait_for`, `startdelay`, stopped by `exitall`), then keeps its own `ramp_time`
//! and `runtime` from its own start. A clone opens its file, builds its
//! engine with its own queue of `iodepth` aligned buffers (allocated once), and runs as a
//! loop worker (`worker.rs`) that times each I/O as fio does. Per-direction statistics (fio
//! reports reads and writes separately) are kept by the worker in fio's own shapes
//! ([`stats`]) and handed over once, at the end, as the result's typed `fio` section
//! (`result.rs`: jobs with their reporting groups, report blocks with `group_reporting`
//! merged as fio merges them, devices), which fio's layouts in hostbench-report render.
//!
//! Files are laid out before the run when missing or short (`layout.rs`), never deleted
//! afterwards (fio's `unlink=0`).

pub mod blktrace;
pub mod bufs;
pub mod clocktest;
pub mod cmdhelp;
pub mod cmdprio;
pub mod crctest;
pub mod enghelp;
pub mod engine;
pub mod engines;
pub mod errors;
pub mod expr;
mod files;
pub mod fio_names;
pub mod idle;
pub mod iolog;
mod iosched;
pub mod job;
pub mod jobfile;
pub mod lattarget;
mod layout;
pub mod logs;
pub mod mem;
mod mix;
mod pattern;
pub mod process;
mod rate;
pub mod report_opts;
mod result;
mod sequence;
pub mod stats;
pub mod status;
pub mod steadystate;
pub mod trigger;
pub mod verify;
pub mod vstate;
mod worker;
mod zbd;

use crate::disk::diskstat::Watch;
use hostbench_core::fio_result::{FioOption, FioResult};
use hostbench_core::params::{ParamKind, ParamSpec};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counter;
use hostbench_core::result::{Figure, RunResult, Warning, WarningKind};
use hostbench_core::workload::*;
use job::JobSpec;
use layout::layout_files;
use result::CloneStats;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// fio's I/O engine.
pub struct Fio;

/// The `jobs` parameter's default: one small null-engine job (the conformance run).
pub const DEFAULT_JOBS: &str = "--name=null --ioengine=null --size=64m";

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "jobs",
        kind: ParamKind::Text,
        default: DEFAULT_JOBS,
        unit: "fio job file",
        help: "the jobs: fio's command-line form (--name=a --rw=randread ...) or a job file's text ([global] and job sections); `hostbench fio` fills it from fio's command line or job files",
        sysbench: None,
    },
    ParamSpec {
        name: "dir",
        kind: ParamKind::Text,
        default: "",
        unit: "path",
        help: "directory for the files of jobs that give no directory (fio's default: the current one)",
        sysbench: None,
    },
];

/// The counters the workload fills.
const COUNTERS: &[Counter] = super::IO_COUNTERS;

/// What the clones of one run share.
struct Shared {
    jobs: Vec<JobSpec>,
    /// The `[global]` sections' options (fio's JSON "global options").
    global_options: Vec<FioOption>,
    /// (job index, clone number) of each thread.
    threads: Vec<(usize, u32)>,
    results: Mutex<Vec<Option<CloneStats>>>,
    warnings: Vec<Warning>,
    /// The job files' devices, watched from just before the run (fio's `disk_util`).
    disks: Option<Watch>,
    /// `--idle-prof=system|percpu`: the CPUs' idle threads, counting from just before the
    /// jobs start until the report.
    idle: Option<idle::Profiler>,
    /// When each clone starts and what stops it (stonewall, wait_for, startdelay, exitall).
    seq: sequence::Sequencer,
    /// fio's flows (`flow`, `flow_id`): per id, the I/Os counted and the clones' weights.
    flows: rate::Flows,
    /// Steady-state detection: the clones' live totals and who attained it.
    ss: steadystate::Board,
    /// The clones' live state for fio's status line.
    live: status::Live,
    /// The clones' statistics so far, for `--status-interval`.
    snaps: Snapshots,
    /// Each clone's buffer seed (its generator of write data; `dedupe_global` spreads a
    /// working set over all of them).
    buf_seeds: Vec<u64>,
    /// `verify_state_load`: each clone's loaded verify state (`vstate.rs`).
    vstates: Vec<Option<vstate::State>>,
    /// `zonemode=zbd`: each file's zones, shared by the jobs that name it.
    zbd: zbd::Tables,
    /// `--trigger-file`, `--trigger-timeout`: the clones' states for the trigger's save.
    trigger: trigger::Board,
    /// `lockfile=exclusive`: per job, a lock per named file its clones share (fio's
    /// per-file semaphore, which a job's clones share and other jobs do not); empty for
    /// jobs without it.
    file_locks: Vec<Arc<[Mutex<()>]>>,
    /// `ioscheduler`: the disks switched and the schedulers they had.
    iosched: iosched::Restore,
}

/// `--status-interval` is on: the clones publish their statistics when asked
/// ([`enable_snapshots`]).
static SNAPSHOTS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns on the clones' snapshots for runs set up from now on (fio's `--status-interval`:
/// full reports while the jobs run). Off by default: the hot loops then never look.
pub fn enable_snapshots(on: bool) {
    SNAPSHOTS.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// The clones' statistics while they run: a reader bumps `epoch`; each running clone
/// notices it after its next I/O and leaves a copy of its statistics (with the epoch it
/// answered) in its slot. Nothing is locked in the hot path unless asked.
struct Snapshots {
    on: bool,
    epoch: std::sync::atomic::AtomicU64,
    slots: Vec<Mutex<(u64, Option<CloneStats>)>>,
    /// Which clones have had their turn (the others have nothing to show yet).
    started: Vec<std::sync::atomic::AtomicBool>,
}

struct FioInstance {
    shared: Arc<Shared>,
}

/// The time limits the runner can hold for every clone at once: `Some((runtime, ramp_time))`
/// when all jobs start together (no `stonewall` after the first job, no `startdelay`, no
/// `wait_for`) and share `runtime`, `time_based` and `ramp_time`; then the run's time limit
/// and warmup are the jobs'. Otherwise `None`: each clone keeps its own limits from its own
/// start (they always do; the run's limits then stay open).
pub fn common_limits(jobs: &[JobSpec]) -> Option<(Option<f64>, f64)> {
    let first = jobs.first()?;
    let together = jobs.iter().enumerate().all(|(i, j)| {
        (!j.stonewall || i == 0)
            && j.startdelay_s.1 == 0.0
            && j.wait_for.is_none()
            && j.runtime_s == first.runtime_s
            && j.time_based == first.time_based
            && j.ramp_time_s == first.ramp_time_s
    });
    together.then_some((first.runtime_s, first.ramp_time_s))
}

/// The jobs of a parameter set (the `jobs` text), checked.
pub fn jobs_of(params: &hostbench_core::params::Params) -> Result<Vec<JobSpec>, WorkloadError> {
    let sections = job::from_text(params.text("jobs")).map_err(|e| WorkloadError::usage(e.0))?;
    let mut jobs = job::jobs_from_sections(&sections).map_err(|e| WorkloadError::usage(e.0))?;
    let dir = params.text("dir");
    if !dir.is_empty() {
        for j in &mut jobs {
            j.run_dir = dir.to_string();
            if j.directory == "." {
                j.directory = dir.to_string();
            }
            if j.filename_dir.as_deref() == Some(".") {
                j.filename_dir = Some(dir.to_string());
            }
        }
    }
    // read_iolog: the job takes its file, directions and sizes from its log.
    for j in &mut jobs {
        iolog::resolve(j).map_err(WorkloadError::usage)?;
    }
    // ioscheduler: only block devices named in filename= are switched (checked before
    // anything is laid out).
    for j in &jobs {
        iosched::check(j).map_err(WorkloadError::usage)?;
    }
    // fio's --aux-path: the verify state files go there.
    if let Some(aux) = trigger::aux_path() {
        for j in &mut jobs {
            j.run_dir = aux.clone();
        }
    }
    for j in &jobs {
        // The generated name ($jobname.$jobnum.$filenum) and a relative filename stay in the
        // job's directory; an absolute one is the user's own choice (as fio: under
        // `directory` when one is given). A suite entry's are checked again, absolute ones
        // refused ([`crate::disk::confine_to_current_dir`]).
        // A job name with `/` (`[sub/job]`) names a file in a subdirectory, as fio's
        // (sub/job.0.0; the directory is made as fio's `create_work_dirs` makes it).
        if j.filename.is_none() {
            let whose = if j.filename_format.is_some() {
                "filename_format gives"
            } else {
                "its name gives the file"
            };
            for (c, k) in (0..j.numjobs).flat_map(|c| (0..j.nfiles()).map(move |k| (c, k))) {
                let n = j.generated_name_k(c, k);
                crate::disk::files::stays_inside(&n, true, &format!("job '{}': {whose}", j.name))?;
                if n.is_empty() || n.ends_with('/') {
                    return Err(WorkloadError::usage(format!(
                        "job '{}': {whose} {n:?}, which names no file",
                        j.name
                    )));
                }
            }
        }
        for f in j.filenames() {
            crate::disk::files::stays_inside(f, true, &format!("job '{}': filename", j.name))?;
        }
    }
    Ok(jobs)
}

/// The figures of a fio run, headline first.
pub mod figures {
    use hostbench_core::result::{Better, FigureDef};

    /// I/O operations per second, both directions.
    pub const IOPS: FigureDef = FigureDef {
        name: "iops",
        label: "I/O operations per second",
        unit: "IOPS",
        better: Better::Higher,
    };
    /// Reads per second.
    pub const READ_IOPS: FigureDef = FigureDef {
        name: "read_iops",
        label: "reads per second",
        unit: "IOPS",
        better: Better::Higher,
    };
    /// Writes per second.
    pub const WRITE_IOPS: FigureDef = FigureDef {
        name: "write_iops",
        label: "writes per second",
        unit: "IOPS",
        better: Better::Higher,
    };
    /// Bytes read per second.
    pub const READ_BYTES_PER_S: FigureDef = FigureDef {
        name: "read_bytes_per_s",
        label: "read throughput",
        unit: "B/s",
        better: Better::Higher,
    };
    /// Bytes written per second.
    pub const WRITE_BYTES_PER_S: FigureDef = FigureDef {
        name: "write_bytes_per_s",
        label: "write throughput",
        unit: "B/s",
        better: Better::Higher,
    };
    /// Mean latency of one I/O (submission to completion).
    pub const LAT_AVG_NS: FigureDef = FigureDef {
        name: "lat_avg_ns",
        label: "mean I/O latency",
        unit: "ns",
        better: Better::Lower,
    };
}

impl Workload for Fio {
    fn id(&self) -> &'static str {
        "disk.fio"
    }
    fn category(&self) -> Category {
        Category::Disk
    }
    fn summary(&self) -> &'static str {
        "fio's jobs: reads and writes at a queue depth through psync, sync, vsync, pvsync, pvsync2, libaio, posixaio, io_uring, mmap or null; fio's falloc, ftruncate, e4defrag, cpuio, exec, net, netsplice and nbd engines"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn caps(&self) -> Caps {
        Caps {
            destructive: true,
            loop_worker: true,
            ends_itself: true,
            stages: true,
            ..Caps::default()
        }
    }
    fn counters(&self) -> &'static [Counter] {
        COUNTERS
    }
    /// The job string parses: options, values and engines as `setup` takes them.
    fn check(&self, params: &hostbench_core::params::Params) -> Result<(), WorkloadError> {
        jobs_of(params).map(|_| ())
    }
    /// fio's figures: IOPS and bandwidth as fio's `Run status group` defines them (all the
    /// I/O over the longest job's run time, phase by phase: [`FioResult::rates`]), not over
    /// the run's wall time, which counts start delays and the waits of stonewalled groups.
    /// A run without a fio section (hosts merged by a fleet) keeps the harness's rates.
    fn figures(&self, r: &RunResult) -> Vec<Figure> {
        let (iops, dir_iops, dir_bytes) = match &r.fio {
            Some(fio) => {
                let x = fio.rates();
                (x.iops, x.dir_iops, x.dir_bytes_per_s)
            }
            None => {
                let per = |k: Counter| {
                    r.metrics
                        .counters_per_s
                        .get(k.name())
                        .copied()
                        .unwrap_or(0.0)
                };
                (
                    r.metrics.events_per_s,
                    [per(Counter::Reads), per(Counter::Writes), 0.0],
                    [per(Counter::BytesRead), per(Counter::BytesWritten), 0.0],
                )
            }
        };
        let mut f = vec![figures::IOPS.at(iops)];
        for (def, v) in [
            (figures::READ_IOPS, dir_iops[0]),
            (figures::WRITE_IOPS, dir_iops[1]),
            (figures::READ_BYTES_PER_S, dir_bytes[0]),
            (figures::WRITE_BYTES_PER_S, dir_bytes[1]),
        ] {
            if v > 0.0 {
                f.push(def.at(v));
            }
        }
        if r.latency.count > 0 {
            f.push(figures::LAT_AVG_NS.at(r.latency.avg_ns as f64));
        }
        f
    }
    /// Prepare lays out the job files (fio does it before every run; `hostbench fio` runs
    /// this stage first so the layout is reported and shows progress). Cleanup is not
    /// offered: fio never deletes job files (`unlink=0`).
    fn stage(
        &self,
        stage: Stage,
        ctx: &SetupCtx<'_>,
        log: &dyn StageLog,
    ) -> Result<StageDone, WorkloadError> {
        if stage != Stage::Prepare {
            return Ok(StageDone::NotImplemented);
        }
        let mut jobs = jobs_of(ctx.params)?;
        Ok(
            match layout_files(&mut jobs, ctx, Some(log), layout::Pass::Prepare)? {
                Some(_) => StageDone::Done,
                None => StageDone::Interrupted,
            },
        )
    }
    fn commands(&self) -> &'static [&'static str] {
        &["fio"]
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        let mut jobs = jobs_of(ctx.params)?;
        for _ in jobs.iter().filter(|j| j.write_iolog_dropped) {
            eprintln!("{}", job::READ_IOLOG_OVERRIDES);
        }
        let global_options = job::from_text(ctx.params.text("jobs"))
            .map(|s| result::global_options(&s))
            .unwrap_or_default();
        let total: u32 = jobs.iter().map(|j| j.numjobs).sum();
        if ctx.threads != total as usize {
            // The native grammar's --threads is fio's numjobs for a single job.
            if jobs.len() == 1 {
                jobs[0].numjobs = ctx.threads as u32;
            } else {
                return Err(WorkloadError::usage(format!(
                    "{} threads asked for jobs that have {total} clones in all; set numjobs in the jobs instead",
                    ctx.threads
                )));
            }
        }
        let threads = fio_threads(&jobs);
        // fio reads every clone's verify state before any clone runs (and saves them when
        // they end).
        let vstates = threads
            .iter()
            .enumerate()
            .map(|(tid, &(ji, _))| {
                let j = &jobs[ji];
                j.verify
                    .state_load
                    .then(|| vstate::load(&j.run_dir, &j.name, tid))
                    .transpose()
                    .map_err(|e| WorkloadError::usage(format!("job '{}': {e}", j.name)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let warnings =
            layout_files(&mut jobs, ctx, None, layout::Pass::Setup)?.ok_or_else(|| {
                WorkloadError::environment("interrupted while laying out the job files")
            })?;
        let n = threads.len();
        // fio reports the devices when any job keeps `disk_util` on (its default).
        let disks = jobs.iter().any(|j| j.disk_util).then(|| {
            // fio's diskless engines (null, cpuio, and the file engines) watch no device.
            let paths: Vec<PathBuf> = jobs
                .iter()
                .filter(|j| j.disk_util && !j.engine.fileless() && !j.engine.file_op())
                // A replay's files come from its log once it runs, after fio looked for
                // the jobs' disks: only a file named in filename= is watched.
                .filter(|j| j.replay.as_ref().is_none_or(|r| r.named))
                .flat_map(|j| {
                    (0..j.numjobs)
                        .flat_map(move |c| (0..j.nfiles()).map(move |k| j.file_path_k(c, k)))
                })
                .collect();
            Watch::start(paths.iter().map(PathBuf::as_path))
        });
        // fio's idle profiling calibrates and starts after the files' setup, just before
        // the jobs (`run_threads`).
        let idle = idle::mode().map(|m| {
            let p = idle::Profiler::start(m);
            for f in p.failures() {
                eprintln!("fio: idle profiling: {f}: every idleness figure will be 0");
            }
            p
        });
        let seq = sequence::Sequencer::new(&jobs, &threads, ctx.seed);
        let file_locks = jobs
            .iter()
            .map(|j| {
                let n = if j.filename_lockfile == job::LockFile::Exclusive && j.filename.is_some() {
                    j.nfiles() as usize
                } else {
                    0
                };
                (0..n).map(|_| Mutex::new(())).collect::<Arc<[_]>>()
            })
            .collect();
        let flows = rate::Flows::new(&jobs, &threads);
        let ss = steadystate::Board::new(&jobs, &threads);
        let live = status::Live::new(n, &jobs);
        let snaps = Snapshots {
            on: SNAPSHOTS.load(std::sync::atomic::Ordering::Relaxed),
            epoch: std::sync::atomic::AtomicU64::new(0),
            slots: (0..n).map(|_| Mutex::new((0, None))).collect(),
            started: (0..n).map(|_| Default::default()).collect(),
        };
        let buf_seeds = (0..n)
            .map(|t| {
                hostbench_core::rand::Rng::for_thread(ctx.seed ^ 0xB0F5_5EED, t as u64).next_u64()
            })
            .collect();
        let shared = Arc::new(Shared {
            buf_seeds,
            snaps,
            seq,
            flows,
            ss,
            live,
            jobs,
            global_options,
            threads,
            results: Mutex::new(vec![None; n]),
            vstates,
            warnings,
            disks,
            idle,
            zbd: Default::default(),
            trigger: trigger::Board::new(n),
            file_locks,
            iosched: Default::default(),
        });
        status::start(&shared);
        trigger::start(&shared);
        Ok(Box::new(FioInstance { shared }))
    }
}

/// The run's clones in fio's thread order, as (job, clone): tid `t` is fio's
/// `thread_number` `t + 1`, which numbers the clone's logs (`NAME_bw.N.log`) and places it
/// under `cpus_allowed_policy=split`. fio adds a job's clones after its first in reverse
/// (`init.c:add_job` counts `subjob_number` down from `numjobs - 1`), so the clones of a
/// job of 5 come as 0, 4, 3, 2, 1; the clone (fio's `subjob_number`) picks the files,
/// directory and `offset_increment` share.
pub(super) fn fio_threads(jobs: &[JobSpec]) -> Vec<(usize, u32)> {
    let mut threads = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        if j.numjobs > 0 {
            threads.push((i, 0));
            threads.extend((1..j.numjobs).rev().map(|c| (i, c)));
        }
    }
    threads
}

impl Drop for FioInstance {
    /// The status line stops with the run at the latest.
    fn drop(&mut self) {
        trigger::finish(&self.shared);
        // ioscheduler: each disk switched gets its earlier scheduler back (fio leaves it).
        self.shared.iosched.restore();
        self.shared.live.stop_printer();
        // --bandwidth-log: written when the last clone ended; here when none did.
        if let Err(e) = self.shared.live.write_agg() {
            eprintln!("fio: --bandwidth-log: {e}");
        }
    }
}

impl Instance for FioInstance {
    fn worker(&self, tid: usize, rng: Rng) -> Result<Worker, WorkloadError> {
        worker::new_worker(&self.shared, tid, rng)
    }

    fn fio(&self) -> Option<FioResult> {
        // A trigger that fired runs its command before the report, as fio's.
        trigger::finish(&self.shared);
        Some(result::fio_result(&self.shared))
    }

    /// fio's file engines: the event is the harness's loop, the file call is timed apart
    /// (their clat); when every job is one, short events are no warning.
    fn events_time_the_harness(&self) -> bool {
        self.shared.jobs.iter().all(|j| j.engine.file_op())
    }

    /// fio's `clocksource`: one for the whole run (every job carries the last one given).
    fn clock_source(&self) -> Option<hostbench_core::clock::ClockSource> {
        self.shared.jobs.first().and_then(|j| j.clocksource)
    }

    /// The jobs so far: each running clone is asked for a copy of its statistics and
    /// given up to 300 ms to answer after its next I/O (one waiting for its turn has none
    /// yet; one between I/Os longer than that shows its previous copy).
    fn fio_live(&self) -> Option<FioResult> {
        use std::sync::atomic::Ordering::*;
        let s = &self.shared;
        if !s.snaps.on {
            return None;
        }
        let e = s.snaps.epoch.fetch_add(1, SeqCst) + 1;
        let until = std::time::Instant::now() + std::time::Duration::from_millis(300);
        loop {
            let answered = {
                let res = s.results.lock().unwrap_or_else(|x| x.into_inner());
                (0..res.len()).all(|t| {
                    res[t].is_some()
                        || s.snaps.slots[t].lock().unwrap_or_else(|x| x.into_inner()).0 >= e
                        || !s.snaps.started[t].load(Relaxed)
                })
            };
            if answered || std::time::Instant::now() >= until {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        Some(result::fio_result_live(s))
    }

    /// The layout's warnings, then one per clone that ended with an error (its `io_u error`
    /// line was printed when it happened, as fio prints it; the warning names the job and
    /// keeps it in the stored result).
    fn warnings(&self) -> Vec<Warning> {
        let mut w = self.shared.warnings.clone();
        let res = self
            .shared
            .results
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for s in res.iter().flatten() {
            if let Some(c) = s
                .errors
                .as_ref()
                .filter(|c| c.total > 0 && s.error.is_none())
                && let Some(first) = &c.first
            {
                w.push(Warning {
                    kind: WarningKind::Errors,
                    message: format!(
                        "job '{}' went on after {} error(s) (continue_on_error/ignore_error); \
                         the first: {}",
                        self.shared.jobs[s.job].name, c.total, first.detail
                    ),
                });
            }
            if let Some(e) = &s.error {
                let j = &self.shared.jobs[s.job];
                let then = if j.exitall_on_error {
                    "exitall_on_error stopped the jobs its exit_what names"
                } else {
                    "the other jobs went on, as in fio (exitall_on_error stops them)"
                };
                w.push(Warning {
                    kind: WarningKind::Errors,
                    message: format!(
                        "job '{}' ended with err={} ({}): {}; {then}",
                        j.name, e.errno, e.text, e.detail
                    ),
                });
            }
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::clock::Clock;
    use hostbench_core::params::Params;
    use hostbench_core::plan::Plan;
    use hostbench_core::rand::Distribution;
    use hostbench_core::runner::{Silent, run};

    fn run_jobs(
        text: &str,
        threads: usize,
    ) -> Result<(hostbench_core::runner::Measurement, FioResult), String> {
        let params = Params::resolve("disk.fio", PARAMS, &[("jobs".into(), text.into())]).unwrap();
        let mut plan = Plan::new("disk.fio", params.clone());
        plan.threads = threads;
        plan.time_s = 0.0;
        plan.seed = 1;
        let inst = Fio
            .setup(&SetupCtx {
                params: &params,
                threads,
                dist: Distribution::Uniform,
                seed: 1,
                host: None,
            })
            .unwrap();
        let m = run(&plan, inst.as_ref(), Clock::detect(), &Silent).map_err(|e| e.to_string())?;
        Ok((m, inst.fio().expect("disk.fio hands over its fio section")))
    }

    #[test]
    fn size_bounds_the_io_of_a_null_job_and_directions_split() {
        let (m, f) = run_jobs(
            "[a]\nioengine=null\nsize=4m\nbs=4k\nrw=randrw\nrwmixread=75\n",
            1,
        )
        .unwrap();
        assert!(m.error.is_none(), "{:?}", m.error);
        assert_eq!(m.counters.events, 1024);
        assert_eq!(f.blocks.len(), 1);
        let b = &f.blocks[0];
        let (r, w) = (b.read.total_ios, b.write.total_ios);
        assert_eq!(r + w, 1024);
        assert!(r > w, "75% reads: {r} reads, {w} writes");
        assert_eq!(b.read.io_bytes, r * 4096);
        assert_eq!(b.read.clat.n, r);
        let binned: u64 = b.read.clat_bins.0.iter().map(|[_, c]| c).sum();
        assert_eq!(binned, r, "every read's latency is in the histogram");
        assert_eq!((f.jobs[0].rw.as_str(), f.jobs[0].bs_read), ("randrw", 4096));
    }

    #[test]
    fn group_reporting_merges_the_clones_of_a_job_into_one_block() {
        let job = "[global]\nioengine=null\nsize=1m\nbs=4k\n[g]\nrw=randread\nnumjobs=3\n";
        let (_, apart) = run_jobs(job, 3).unwrap();
        assert_eq!(apart.blocks.len(), 3, "a block per clone");
        let (m, merged) = run_jobs(&format!("{job}group_reporting\n"), 3).unwrap();
        assert_eq!(merged.blocks.len(), 1, "one block for the job");
        let b = &merged.blocks[0];
        assert_eq!(b.clones, 3);
        assert_eq!(b.read.total_ios, 3 * 256);
        assert_eq!(b.read.total_ios, m.counters.events);
        assert_eq!(b.read.clat.n, 3 * 256, "latency statistics merged");
        let binned: u64 = b.read.clat_bins.0.iter().map(|[_, c]| c).sum();
        assert_eq!(binned, 3 * 256, "histograms merged");
        assert_eq!(b.write.total_ios, 0);
        assert_eq!(merged.jobs[0].numjobs, 3);
        assert_eq!(merged.global_options[0].name, "ioengine");
    }

    #[test]
    fn psync_and_libaio_on_a_real_file() {
        let dir = std::env::temp_dir().join(format!("wt-fio-mod-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for engine in ["psync", "libaio", "io_uring", "sync", "mmap"] {
            let text = format!(
                "[global]\ndirectory={}\nsize=1m\nbs=4k\n[j{engine}]\nioengine={engine}\niodepth=4\nrw=randrw\nnumjobs=2\n",
                dir.display()
            );
            let params =
                Params::resolve("disk.fio", PARAMS, &[("jobs".into(), text.clone())]).unwrap();
            let inst = match Fio.setup(&SetupCtx {
                params: &params,
                threads: 2,
                dist: Distribution::Uniform,
                seed: 1,
                host: None,
            }) {
                Ok(i) => i,
                Err(e) => panic!("{engine}: {e}"),
            };
            drop(inst);
            let (m, f) = match run_jobs(&text, 2) {
                Err(e) if engine == "io_uring" && e.contains("io_uring_setup") => continue,
                r => r.unwrap(),
            };
            assert!(m.error.is_none(), "{engine}: {:?}", m.error);
            assert_eq!(m.counters.events, 512, "{engine}: 2 clones × 256 blocks");
            assert_eq!(f.blocks.len(), 2, "{engine}: a block per clone");
            assert!(dir.join(format!("j{engine}.1.0")).exists());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
