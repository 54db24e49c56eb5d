//! `disk.fio`: fio's queue-depth I/O engine, for fio's command lines and job files.
//!
//! One run holds every job of one fio command (all jobs of a reporting group run at once);
//! each job's `numjobs` clones are the runner's threads. A clone opens its file, builds its
//! engine with its own queue of `iodepth` aligned buffers (allocated once), and runs as a
//! loop worker: it claims each I/O from [`RunControl::next_op`], times it as fio does
//! (start = prepared, issue = after the submit call returned, completion = reaped; slat =
//! issue − start, clat = completion − issue, lat = completion − start; sync engines have no
//! slat) and records `lat` through [`RunControl::record`]. Per-direction statistics (fio
//! reports reads and writes separately) are kept by the worker in fio's own shapes
//! ([`stats`]) and handed over once, at the end, as result tables:
//! - `fio_clones`: one row per clone (label = job name), numeric columns named after fio's
//!   JSON fields (`read_io_bytes`, `write_clat_mean`, `usr_cpu_pct`, ...; `_m2` columns are
//!   sums of squared deviations so that group reporting can merge clones exactly);
//! - `fio_bins`: the non-empty buckets of fio's latency histogram (columns `row`, `dir`
//!   0 read / 1 write / 2 sync, `bucket`, `count`), for percentiles and json+ `bins`.
//!
//! Files are laid out before the run when missing or short (1 MiB buffered writes of random
//! data, then fsync), never deleted afterwards (fio's `unlink=0`), and only a file this run
//! created is removed when Ctrl-C interrupts its layout.

pub mod engine;
pub mod fio_names;
pub mod job;
pub mod stats;

use crate::disk::diskstat::Watch;
use engine::{Buffers, Dir, Done, Engine};
use hostbench_core::params::{ParamKind, ParamSpec};
use hostbench_core::rand::{Distribution, Rng, Sampler};
use hostbench_core::recorder::Counter;
use hostbench_core::result::{Better, Column, Figure, Row, RunResult, Table, Warning};
use hostbench_core::runner::RunControl;
use hostbench_core::workload::*;
use job::{EngineKind, JobSpec, RandDist};
use stats::{Plat, RunStat};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
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

/// Statistics of one direction of one clone.
#[derive(Debug, Clone, Default)]
struct DirStats {
    bytes: u64,
    ios: u64,
    short: u64,
    slat: RunStat,
    clat: RunStat,
    lat: RunStat,
    clat_plat: Plat,
    bw: RunStat,
    iops: RunStat,
    // Interval sample state.
    last_bytes: u64,
    last_ios: u64,
}

/// What one clone measured.
#[derive(Debug, Clone, Default)]
struct CloneStats {
    job: usize,
    clone: u32,
    dirs: [DirStats; 2],
    sync: RunStat,
    sync_plat: Plat,
    runtime_ns: u64,
    usr_ns: u64,
    sys_ns: u64,
    ctx: u64,
    majf: u64,
    minf: u64,
    depth_map: [u64; 7],
    submit_map: [u64; 7],
    complete_map: [u64; 7],
}

struct Shared {
    jobs: Vec<JobSpec>,
    /// (job index, clone number) of each thread.
    threads: Vec<(usize, u32)>,
    results: Mutex<Vec<Option<CloneStats>>>,
    warnings: Vec<Warning>,
    /// The job files' devices, watched from just before the run (fio's `disk_util`).
    disks: Option<Watch>,
}

struct FioInstance {
    shared: Arc<Shared>,
}

/// The jobs of a parameter set (the `jobs` text), checked.
pub fn jobs_of(params: &hostbench_core::params::Params) -> Result<Vec<JobSpec>, WorkloadError> {
    let sections = job::from_text(params.text("jobs")).map_err(|e| WorkloadError(e.0))?;
    let mut jobs = job::jobs_from_sections(&sections).map_err(|e| WorkloadError(e.0))?;
    let dir = params.text("dir");
    if !dir.is_empty() {
        for j in &mut jobs {
            if j.directory == "." {
                j.directory = dir.to_string();
            }
        }
    }
    for j in &jobs {
        // The generated name ($jobname.$jobnum.$filenum) and a relative filename stay in the
        // job's directory; an absolute filename is the user's own choice.
        if j.filename.is_none() && (j.name.contains('/') || j.name == "..") {
            return Err(WorkloadError(format!(
                "job name '{}' contains a path: the job's file is named after it inside its \
                 directory; use a plain name (and `directory`/`filename` for where it goes)",
                j.name
            )));
        }
        if let Some(f) = &j.filename {
            crate::disk::files::stays_inside(f, true, &format!("job '{}': filename", j.name))?;
        }
    }
    Ok(jobs)
}

impl Workload for Fio {
    fn id(&self) -> &'static str {
        "disk.fio"
    }
    fn category(&self) -> Category {
        Category::Disk
    }
    fn summary(&self) -> &'static str {
        "fio's jobs: reads and writes at a queue depth through psync, sync, libaio, io_uring, mmap or null"
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
    fn figures(&self, r: &RunResult) -> Vec<Figure> {
        let mut f = vec![Figure::new(
            "iops",
            "IOPS",
            r.metrics.events_per_s,
            Better::Higher,
        )];
        for (name, key, unit) in [
            ("read_iops", "reads", "IOPS"),
            ("write_iops", "writes", "IOPS"),
            ("read_bytes_per_s", "bytes_read", "B/s"),
            ("write_bytes_per_s", "bytes_written", "B/s"),
        ] {
            if let Some(&v) = r.metrics.counters_per_s.get(key)
                && v > 0.0
            {
                f.push(Figure::new(name, unit, v, Better::Higher));
            }
        }
        if r.latency.count > 0 {
            f.push(Figure::new(
                "lat_avg_ns",
                "ns",
                r.latency.avg_ns as f64,
                Better::Lower,
            ));
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
        Ok(match layout_files(&mut jobs, ctx, Some(log))? {
            Some(_) => StageDone::Done,
            None => StageDone::Interrupted,
        })
    }
    fn commands(&self) -> &'static [&'static str] {
        &["fio"]
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        let mut jobs = jobs_of(ctx.params)?;
        let total: u32 = jobs.iter().map(|j| j.numjobs).sum();
        if ctx.threads != total as usize {
            // The native grammar's --threads is fio's numjobs for a single job.
            if jobs.len() == 1 {
                jobs[0].numjobs = ctx.threads as u32;
            } else {
                return Err(WorkloadError(format!(
                    "{} threads asked for jobs that have {total} clones in all; set numjobs in the jobs instead",
                    ctx.threads
                )));
            }
        }
        let mut threads = Vec::new();
        for (i, j) in jobs.iter().enumerate() {
            for c in 0..j.numjobs {
                threads.push((i, c));
            }
        }
        let warnings = layout_files(&mut jobs, ctx, None)?
            .ok_or_else(|| WorkloadError("interrupted while laying out the job files".into()))?;
        let n = threads.len();
        // fio reports the devices when any job keeps `disk_util` on (its default).
        let disks = jobs.iter().any(|j| j.disk_util).then(|| {
            let paths: Vec<PathBuf> = jobs
                .iter()
                .filter(|j| j.disk_util)
                .flat_map(|j| (0..j.numjobs).map(|c| j.file_path(c)))
                .collect();
            Watch::start(paths.iter().map(PathBuf::as_path))
        });
        Ok(Box::new(FioInstance {
            shared: Arc::new(Shared {
                jobs,
                threads,
                results: Mutex::new(vec![None; n]),
                warnings,
                disks,
            }),
        }))
    }
}

fn io_err(what: &str, path: &Path, e: &std::io::Error) -> WorkloadError {
    WorkloadError(format!("{what} {}: {e}", path.display()))
}

/// Resolves sizes, checks free space and O_DIRECT, and lays out missing or short files
/// (reporting through `log` when given: fio's "Laying out IO file" line and progress).
/// `Ok(None)` when Ctrl-C stopped a layout.
fn layout_files(
    jobs: &mut [JobSpec],
    ctx: &SetupCtx<'_>,
    log: Option<&dyn StageLog>,
) -> Result<Option<Vec<Warning>>, WorkloadError> {
    let mut warnings = Vec::new();
    let mut data_set = 0u64;
    let mut any_buffered = false;
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut first_dir: Option<PathBuf> = None;
    for j in jobs.iter_mut() {
        if j.engine == EngineKind::Null {
            if j.size.is_none() {
                return Err(WorkloadError(format!(
                    "job '{}': ioengine=null needs a size (e.g. --size=1g)",
                    j.name
                )));
            }
            continue;
        }
        for c in 0..j.numjobs {
            let path = j.file_path(c);
            let (path, meta) = resolve_job_file(j, path)?;
            let is_dev = meta.as_ref().is_some_and(|m| {
                use std::os::unix::fs::FileTypeExt;
                m.file_type().is_block_device() || m.file_type().is_char_device()
            });
            if is_dev && j.rw.writes(0) {
                crate::disk::files::check_device_write(
                    &path,
                    j.allow_mounted_write,
                    &format!("job '{}'", j.name),
                    Some("allow_mounted_write=1 to the job"),
                )?;
            }
            let have = meta.as_ref().map_or(0, |m| m.len());
            let size = match j.size {
                Some(s) => s,
                None if is_dev => {
                    return Err(WorkloadError(format!(
                        "job '{}': give a size for device {}",
                        j.name,
                        path.display()
                    )));
                }
                None if have > j.offset => have - j.offset,
                None => {
                    return Err(WorkloadError(format!(
                        "job '{}': {} does not exist (or is empty); give a size (e.g. --size=1g) to have it laid out",
                        j.name,
                        path.display()
                    )));
                }
            };
            j.size = Some(size);
            if size < j.max_bs() {
                return Err(WorkloadError(format!(
                    "job '{}': size {size} is smaller than the block size {}",
                    j.name,
                    j.max_bs()
                )));
            }
            if !j.direct {
                any_buffered = true;
            }
            if seen.contains(&path) {
                continue;
            }
            seen.push(path.clone());
            data_set += size;
            if first_dir.is_none() {
                first_dir = Some(
                    path.parent()
                        .filter(|p| !p.as_os_str().is_empty())
                        .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
                );
            }
            if !is_dev && !lay_out(j, &path, j.offset + size, have, log)? {
                return Ok(None);
            }
            if j.direct {
                check_direct(&path)?;
            }
        }
    }
    if data_set > 0
        && let Some(dir) = first_dir
        && let Some(w) = crate::disk::files::page_cache_warning(
            &dir,
            data_set,
            !any_buffered,
            ctx.host,
            "use --direct=1 (or files larger than RAM) to measure the device",
        )
    {
        warnings.push(w);
    }
    Ok(Some(warnings))
}

/// fio's `fadvise_hint`: tells the kernel the job's access pattern over its region of the
/// file just opened (`posix_fadvise` RANDOM or SEQUENTIAL), as fio does for every job by
/// default. Random advice turns off readahead, so buffered random reads go to the device
/// instead of hitting pages the kernel read ahead. Advice only: a refusal changes nothing
/// the job does, and fio ignores it too.
fn advise_access(f: &std::fs::File, j: &JobSpec, size: u64) {
    let Some(random) = j.advises_random() else {
        return;
    };
    let advice = if random {
        libc::POSIX_FADV_RANDOM
    } else {
        libc::POSIX_FADV_SEQUENTIAL
    };
    // SAFETY: advisory call on a descriptor we own.
    unsafe {
        libc::posix_fadvise(f.as_raw_fd(), j.offset as i64, size as i64, advice);
    }
}

/// The job's file at `path`, checked before anything is written: a symlink there is
/// refused ([`crate::disk::files::symlink_refused`]) unless it leads to a device node (the
/// `/dev/disk/by-id/…` names people give fio), which then stands for the device itself (the
/// job's `filename` is rewritten to it, so every later open and the in-use check see the
/// device). Returns the path to use and its metadata (`None` when nothing is there yet).
fn resolve_job_file(
    j: &mut JobSpec,
    path: PathBuf,
) -> Result<(PathBuf, Option<std::fs::Metadata>), WorkloadError> {
    use std::os::unix::fs::FileTypeExt;
    let lmeta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((path, None)),
        Err(e) => return Err(io_err("cannot stat", &path, &e)),
    };
    if !lmeta.file_type().is_symlink() {
        return Ok((path, Some(lmeta)));
    }
    let target = std::fs::canonicalize(&path).ok();
    let tmeta = target.as_ref().and_then(|t| std::fs::metadata(t).ok());
    match (target, tmeta) {
        (Some(t), Some(m))
            if j.filename.is_some()
                && (m.file_type().is_block_device() || m.file_type().is_char_device()) =>
        {
            j.filename = Some(t.to_string_lossy().into_owned());
            Ok((t, Some(m)))
        }
        _ => Err(WorkloadError(format!(
            "job '{}': {}",
            j.name,
            crate::disk::files::symlink_refused(&path).0
        ))),
    }
}

fn check_direct(path: &Path) -> Result<(), WorkloadError> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT | libc::O_NOFOLLOW)
        .open(path)
        .map(drop)
        .map_err(|e| crate::disk::files::open_error(path, true, &e))
}

/// Lays out `path` to `need` bytes if it is shorter (`have`): 1 MiB buffered writes of random
/// data from the current end, then fsync. A file this call created is removed if Ctrl-C
/// stops it (returns false); an existing file is only ever extended, so a short file is
/// never trusted.
fn lay_out(
    j: &JobSpec,
    path: &Path,
    need: u64,
    have: u64,
    log: Option<&dyn StageLog>,
) -> Result<bool, WorkloadError> {
    if have >= need {
        return Ok(true);
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    if !dir.is_dir() {
        return Err(WorkloadError(format!(
            "job '{}': directory {} does not exist; create it or give another --directory",
            j.name,
            dir.display()
        )));
    }
    let missing = need - have;
    crate::disk::files::ensure_space(
        &dir,
        missing,
        &format!("laying out {} for job '{}'", path.display(), j.name),
    )?;
    let created = std::fs::symlink_metadata(path).is_err();
    if let Some(log) = log {
        // fio counts whole MiB (its `extend_size >> 20`): 1500 KiB reads "1MiB".
        log.line(&format!(
            "{}: Laying out IO file (1 file / {}MiB)",
            j.name,
            need >> 20
        ));
    }
    let interrupted = || match log {
        Some(l) => l.interrupted(),
        None => hostbench_core::runner::INTERRUPT.load(std::sync::atomic::Ordering::Relaxed),
    };
    let r = (|| -> Result<bool, WorkloadError> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| crate::disk::files::open_error(path, false, &e))?;
        use std::io::{Seek, SeekFrom, Write};
        f.seek(SeekFrom::Start(have))
            .map_err(|e| io_err("cannot seek in", path, &e))?;
        let chunk = 1usize << 20;
        let bufs = Buffers::new(1, chunk, 0x5eed).map_err(|e| io_err("buffers for", path, &e))?;
        // SAFETY: one slot of `chunk` bytes.
        let data = unsafe { std::slice::from_raw_parts(bufs.slot(0), chunk) };
        let mut left = missing;
        while left > 0 {
            if interrupted() {
                return Ok(false);
            }
            let n = left.min(chunk as u64) as usize;
            f.write_all(&data[..n])
                .map_err(|e| crate::disk::files::write_error(path, &e, missing, created))?;
            left -= n as u64;
            if let Some(log) = log {
                log.progress("laying out", missing - left, missing);
            }
        }
        f.sync_all().map_err(|e| io_err("cannot fsync", path, &e))?;
        Ok(true)
    })();
    if !matches!(r, Ok(true)) && created {
        // Only the file this call created (still a regular file at the name).
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
            let _ = std::fs::remove_file(path);
        }
    }
    r
}

impl Instance for FioInstance {
    fn worker(&self, tid: usize, rng: Rng) -> Result<Worker, WorkloadError> {
        let (ji, clone) = self.shared.threads[tid];
        let j = &self.shared.jobs[ji];
        let size = j.size.expect("sizes are resolved at setup");
        let (fd, path) = if j.engine == EngineKind::Null {
            (None, PathBuf::new())
        } else {
            let path = j.file_path(clone);
            let writes = j.rw.writes(j.rwmixread);
            let mut o = std::fs::OpenOptions::new();
            o.read(true).write(writes || j.engine == EngineKind::Mmap);
            // Never through a symlink planted at the name after the layout checked it.
            let mut flags = libc::O_NOFOLLOW;
            if j.direct {
                flags |= libc::O_DIRECT;
            }
            o.custom_flags(flags);
            let f = o
                .open(&path)
                .map_err(|e| crate::disk::files::open_error(&path, j.direct, &e))?;
            if !j.direct && j.invalidate {
                // SAFETY: advisory call on our fd.
                unsafe {
                    libc::posix_fadvise(
                        f.as_raw_fd(),
                        j.offset as i64,
                        size as i64,
                        libc::POSIX_FADV_DONTNEED,
                    );
                }
            }
            advise_access(&f, j, size);
            (Some(OwnedFd::from(f)), path)
        };
        let depth = if j.engine.is_sync() { 1 } else { j.iodepth };
        let raw = fd.as_ref().map_or(-1, |f| f.as_raw_fd());
        let engine = Engine::new(j.engine, raw, depth, (j.offset, size))
            .map_err(|e| WorkloadError(format!("job '{}': {e}", j.name)))?;
        if let Some(random) = j.advises_random() {
            engine
                .advise_mapping(random)
                .map_err(|e| WorkloadError(format!("job '{}': madvise: {e}", j.name)))?;
        }
        // An io_uring ring is single-issuer: it is built again in the worker's own thread
        // (this one only proves that it can be built, so a failure is a setup error).
        let engine = if j.engine == EngineKind::IoUring {
            drop(engine);
            None
        } else {
            Some(engine)
        };
        let bufs = Buffers::new(depth as usize, j.max_bs() as usize, rng.clone().next_u64())
            .map_err(|e| WorkloadError(format!("job '{}': {e}", j.name)))?;
        let gran = j.bs_read.min(j.bs_write);
        let positions = (size - j.max_bs()) / gran + 1;
        let sampler = match j.dist {
            RandDist::Random => None,
            RandDist::Zipf(t) => Some(Distribution::Zipfian { exp: t }.sampler(0, positions - 1)),
            RandDist::Pareto(h) => Some(Distribution::Pareto { h }.sampler(0, positions - 1)),
        };
        let map = j.rw.random() && !j.norandommap && sampler.is_none();
        Ok(Worker::Loop(Box::new(FioWorker {
            shared: self.shared.clone(),
            tid,
            job: j.clone(),
            path,
            _fd: fd,
            engine,
            engine_args: (j.engine, raw, depth, (j.offset, size)),
            bufs,
            depth,
            rng,
            offsets: OffsetGen::new(positions, map),
            sampler,
            gran,
            size,
            read_pct: j.rw.read_pct(j.rwmixread),
            seq_pos: [0, 0],
            stats: CloneStats {
                job: ji,
                clone,
                ..CloneStats::default()
            },
            writes_since_sync: 0,
            submit_batch: j.iodepth_batch_submit.clamp(1, depth) as usize,
            complete_min: j.iodepth_batch_complete_min.min(depth) as usize,
            // fio: a maximum below the minimum (0 by default) is the minimum; at least one.
            complete_max: j
                .iodepth_batch_complete_max
                .max(j.iodepth_batch_complete_min)
                .clamp(1, depth) as usize,
        })))
    }

    fn tables(&self) -> Vec<Table> {
        let res = self
            .shared
            .results
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let cols = clone_columns();
        let mut rows = Vec::new();
        let mut bins = Vec::new();
        for (i, s) in res.iter().enumerate() {
            let Some(s) = s else { continue };
            let row_no = rows.len();
            let j = &self.shared.jobs[s.job];
            rows.push(Row {
                label: j.name.clone(),
                values: clone_row(s, j).into_iter().map(Some).collect(),
            });
            for (d, plat) in [
                (0, &s.dirs[0].clat_plat),
                (1, &s.dirs[1].clat_plat),
                (2, &s.sync_plat),
            ] {
                for (b, &c) in plat.0.iter().enumerate() {
                    if c > 0 {
                        bins.push(Row {
                            label: "bin".into(),
                            values: vec![
                                Some(row_no as f64),
                                Some(d as f64),
                                Some(b as f64),
                                Some(c as f64),
                            ],
                        });
                    }
                }
            }
            let _ = i;
        }
        vec![
            Table {
                name: "fio_clones".into(),
                title: "fio: one row per job clone (fio's per-direction statistics)".into(),
                columns: cols
                    .iter()
                    .map(|c| Column {
                        name: c.clone(),
                        unit: column_unit(c).into(),
                    })
                    .collect(),
                rows,
            },
            Table {
                name: "fio_bins".into(),
                title: "fio: non-empty latency histogram buckets (fio's log-linear buckets, ns)"
                    .into(),
                columns: ["row", "dir", "bucket", "count"]
                    .iter()
                    .map(|c| Column {
                        name: (*c).into(),
                        unit: String::new(),
                    })
                    .collect(),
                rows: bins,
            },
            Table {
                name: "fio_disk_util".into(),
                title: "fio: block-device counters over the run (fio's Disk stats)".into(),
                columns: DISK_COLUMNS
                    .iter()
                    .map(|(c, u)| Column {
                        name: (*c).into(),
                        unit: (*u).into(),
                    })
                    .collect(),
                rows: self
                    .shared
                    .disks
                    .as_ref()
                    .map(|w| w.finish())
                    .unwrap_or_default()
                    .into_iter()
                    .map(|u| {
                        let d = u.delta;
                        Row {
                            label: u.name,
                            values: [
                                d.read_ios,
                                d.write_ios,
                                d.read_merges,
                                d.write_merges,
                                d.read_sectors,
                                d.write_sectors,
                                d.read_ticks,
                                d.write_ticks,
                                d.in_queue,
                            ]
                            .into_iter()
                            .map(|v| Some(v as f64))
                            .chain([Some(u.util)])
                            .collect(),
                        }
                    })
                    .collect(),
            },
        ]
    }

    fn warnings(&self) -> Vec<Warning> {
        self.shared.warnings.clone()
    }
}

const DIRS: [&str; 2] = ["read", "write"];
const METRICS: [&str; 5] = ["slat", "clat", "lat", "bw", "iops"];
/// Columns of the `fio_disk_util` table (fio's `disk_util` keys) and their units.
pub const DISK_COLUMNS: [(&str, &str); 10] = [
    ("read_ios", ""),
    ("write_ios", ""),
    ("read_merges", ""),
    ("write_merges", ""),
    ("read_sectors", ""),
    ("write_sectors", ""),
    ("read_ticks", "ms"),
    ("write_ticks", "ms"),
    ("in_queue", "ms"),
    ("util", "%"),
];

/// fio's bucket labels for IO depths (`1`..`>=64`) and submit/complete batch sizes.
pub const DEPTH_KEYS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
/// Submit/complete batch-size labels.
pub const BATCH_KEYS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];

/// The columns of the `fio_clones` table, in order.
pub fn clone_columns() -> Vec<String> {
    let mut c: Vec<String> = [
        "job_index",
        "clone",
        "groupid",
        "runtime_ms",
        "usr_cpu_pct",
        "sys_cpu_pct",
        "ctx",
        "majf",
        "minf",
        "iodepth",
        "gtod_reduce",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for d in DIRS {
        for f in ["io_bytes", "total_ios", "short_ios", "runtime_ms"] {
            c.push(format!("{d}_{f}"));
        }
        for m in METRICS {
            for f in ["n", "min", "max", "mean", "m2"] {
                c.push(format!("{d}_{m}_{f}"));
            }
        }
    }
    c.push("sync_total_ios".into());
    for f in ["n", "min", "max", "mean", "m2"] {
        c.push(format!("sync_lat_{f}"));
    }
    for (p, keys) in [
        ("iodepth_level", DEPTH_KEYS),
        ("iodepth_submit", BATCH_KEYS),
        ("iodepth_complete", BATCH_KEYS),
    ] {
        for k in keys {
            // Column names are snake_case: fio's `>=64` becomes `ge64`.
            c.push(format!("{p}_{}", k.replace(">=", "ge")));
        }
    }
    c
}

fn column_unit(c: &str) -> &'static str {
    if c.ends_with("_ms") {
        "ms"
    } else if c.ends_with("_pct") {
        "%"
    } else if c.ends_with("io_bytes") {
        "B"
    } else if c.contains("_bw_") && !c.ends_with("_n") {
        if c.ends_with("_m2") {
            "(KiB/s)^2"
        } else {
            "KiB/s"
        }
    } else if (c.contains("lat_") || c.contains("slat_") || c.contains("clat_"))
        && !c.ends_with("_n")
    {
        if c.ends_with("_m2") { "ns^2" } else { "ns" }
    } else {
        ""
    }
}

fn clone_row(s: &CloneStats, j: &JobSpec) -> Vec<f64> {
    // fio counts runtime in whole ms; a run that did I/O lasted at least 1 ms of it.
    let did_io = s.dirs[0].ios + s.dirs[1].ios > 0;
    let runtime_ms = ((s.runtime_ns / 1_000_000).max(u64::from(did_io))) as f64;
    let pct = |ns: u64| {
        if s.runtime_ns > 0 {
            ns as f64 * 100.0 / s.runtime_ns as f64
        } else {
            0.0
        }
    };
    let mut v = vec![
        s.job as f64,
        s.clone as f64,
        j.groupid as f64,
        runtime_ms,
        pct(s.usr_ns),
        pct(s.sys_ns),
        s.ctx as f64,
        s.majf as f64,
        s.minf as f64,
        if j.engine.is_sync() {
            1.0
        } else {
            j.iodepth as f64
        },
        if j.gtod_reduce { 1.0 } else { 0.0 },
    ];
    let read_pct = j.rw.read_pct(j.rwmixread);
    for (d, ds) in s.dirs.iter().enumerate() {
        let active = if d == 0 { read_pct > 0 } else { read_pct < 100 };
        v.extend([
            ds.bytes as f64,
            ds.ios as f64,
            ds.short as f64,
            if active { runtime_ms } else { 0.0 },
        ]);
        for m in [&ds.slat, &ds.clat, &ds.lat, &ds.bw, &ds.iops] {
            v.extend([
                m.n as f64,
                m.min_or_zero() as f64,
                m.max as f64,
                m.mean,
                m.m2,
            ]);
        }
    }
    v.push(s.sync.n as f64);
    v.extend([
        s.sync.n as f64,
        s.sync.min_or_zero() as f64,
        s.sync.max as f64,
        s.sync.mean,
        s.sync.m2,
    ]);
    for m in [&s.depth_map, &s.submit_map, &s.complete_map] {
        v.extend(m.iter().map(|&x| x as f64));
    }
    v
}

/// Offsets of a random job with fio's random map: every position once per pass, in a
/// scrambled order (a full-period LCG over the next power of two, skipping values past the
/// end), so no offset repeats until all were used.
struct OffsetGen {
    n: u64,
    mask: u64,
    x: u64,
    a: u64,
    c: u64,
    map: bool,
}

impl OffsetGen {
    fn new(n: u64, map: bool) -> OffsetGen {
        let m = n.next_power_of_two();
        OffsetGen {
            n,
            mask: m - 1,
            x: 0,
            a: (0x5851_F42D_4C95_7F2D & !3) | 1,
            c: 0x1405_7B7E_F767_814F | 1,
            map,
        }
    }
    fn seed(&mut self, s: u64) {
        self.x = s & self.mask;
    }
    #[inline]
    fn next(&mut self, rng: &mut Rng) -> u64 {
        if !self.map {
            return rng.next_u64() % self.n;
        }
        loop {
            self.x = self.x.wrapping_mul(self.a).wrapping_add(self.c) & self.mask;
            if self.x < self.n {
                return self.x;
            }
        }
    }
}

struct FioWorker {
    shared: Arc<Shared>,
    tid: usize,
    job: JobSpec,
    path: PathBuf,
    _fd: Option<OwnedFd>,
    engine: Option<Engine>,
    /// What `engine` is built from when the worker starts (io_uring).
    engine_args: (EngineKind, i32, u32, (u64, u64)),
    bufs: Buffers,
    depth: u32,
    rng: Rng,
    offsets: OffsetGen,
    sampler: Option<Sampler>,
    gran: u64,
    size: u64,
    read_pct: u32,
    seq_pos: [u64; 2],
    stats: CloneStats,
    writes_since_sync: u32,
    /// I/Os per submit call (fio's `iodepth_batch_submit`, default 1).
    submit_batch: usize,
    /// Completions waited for per reap (fio's `iodepth_batch_complete_min`, default 1).
    complete_min: usize,
    /// Completions taken per reap (fio's `iodepth_batch_complete_max`, default = the minimum):
    /// by default one completion is taken and replaced before the next, so the queue stays at
    /// `iodepth` instead of draining between refills.
    complete_max: usize,
}

fn rusage() -> (u64, u64, u64, u64, u64) {
    // SAFETY: getrusage fills a zeroed struct.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut r) };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    (
        tv(r.ru_utime),
        tv(r.ru_stime),
        (r.ru_nvcsw + r.ru_nivcsw) as u64,
        r.ru_majflt as u64,
        r.ru_minflt as u64,
    )
}

#[inline(always)]
fn depth_bucket(n: u32) -> usize {
    match n {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

#[inline(always)]
fn batch_bucket(n: usize) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

/// Interval between bw/iops samples (fio's `bwavgtime`/`iopsavgtime` default), ns.
const SAMPLE_NS: u64 = 500_000_000;

impl FioWorker {
    /// The next I/O: direction, offset, length.
    #[inline]
    fn next_io(&mut self) -> (Dir, u64, u32) {
        let dir = match self.read_pct {
            100 => Dir::Read,
            0 => Dir::Write,
            p => {
                if (self.rng.next_u64() % 100) < p as u64 {
                    Dir::Read
                } else {
                    Dir::Write
                }
            }
        };
        let len = match dir {
            Dir::Read => self.job.bs_read,
            Dir::Write => self.job.bs_write,
        };
        let off = if self.job.rw.random() {
            let pos = match &self.sampler {
                Some(s) => s.sample(&mut self.rng),
                None => self.offsets.next(&mut self.rng),
            };
            pos * self.gran
        } else {
            let p = &mut self.seq_pos[dir as usize];
            if *p + len > self.size {
                *p = 0;
            }
            let o = *p;
            *p += len;
            o
        };
        (dir, self.job.offset + off, len as u32)
    }

    /// Accounts one completed I/O (not during ramp time).
    #[inline(always)]
    fn account(&mut self, dir: Dir, res: i64, len: u32, slat: Option<u64>, clat: u64, lat: u64) {
        let d = &mut self.stats.dirs[dir as usize];
        d.ios += 1;
        d.bytes += res as u64;
        if (res as u64) < len as u64 {
            d.short += 1;
        }
        if !self.job.gtod_reduce {
            if let Some(s) = slat {
                d.slat.add(s);
            }
            d.clat.add(clat);
            d.clat_plat.add(clat);
            d.lat.add(lat);
        }
    }

    fn sample(&mut self, elapsed_ns: u64) {
        if elapsed_ns == 0 {
            return;
        }
        let ms = elapsed_ns as f64 / 1e6;
        for (i, d) in self.stats.dirs.iter_mut().enumerate() {
            let active = if i == 0 {
                self.read_pct > 0
            } else {
                self.read_pct < 100
            };
            if !active {
                continue;
            }
            let bytes = d.bytes - d.last_bytes;
            let ios = d.ios - d.last_ios;
            d.bw.add((bytes as f64 * 1000.0 / ms / 1024.0) as u64);
            d.iops.add((ios as f64 * 1000.0 / ms) as u64);
            d.last_bytes = d.bytes;
            d.last_ios = d.ios;
        }
    }

    fn fail(&self, dir: Dir, off: u64, res: i64) -> WorkloadError {
        let e = std::io::Error::from_raw_os_error((-res) as i32);
        let hint = if self.job.direct && -res == libc::EINVAL as i64 {
            " (with direct=1 the block size and offsets must be multiples of the device's \
             logical block size, often 4096 bytes: try bs=4k, or drop direct=1)"
        } else {
            ""
        };
        WorkloadError(format!(
            "job '{}': {} of {} bytes at offset {off} of {} failed: {e}{hint}",
            self.job.name,
            if dir == Dir::Read { "read" } else { "write" },
            self.job.max_bs(),
            self.path.display()
        ))
    }

    /// fsync/fdatasync every N writes, timed into the sync statistics.
    fn maybe_sync(&mut self, ctl: &mut RunControl<'_>, warming: bool) -> Result<(), WorkloadError> {
        let n = self.job.fsync.max(self.job.fdatasync);
        if n == 0 || self._fd.is_none() {
            return Ok(());
        }
        self.writes_since_sync += 1;
        if self.writes_since_sync < n {
            return Ok(());
        }
        self.writes_since_sync = 0;
        let fd = self._fd.as_ref().map_or(-1, |f| f.as_raw_fd());
        let t0 = ctl.now();
        // SAFETY: syncing our own fd.
        let r = unsafe {
            if self.job.fdatasync > 0 {
                libc::fdatasync(fd)
            } else {
                libc::fsync(fd)
            }
        };
        let t1 = ctl.now();
        if r != 0 {
            return Err(WorkloadError(format!(
                "job '{}': fsync of {} failed: {}",
                self.job.name,
                self.path.display(),
                std::io::Error::last_os_error()
            )));
        }
        ctl.counters().add(Counter::Other, 1);
        if !warming {
            let ns = ctl.clock().to_ns(t1 - t0);
            self.stats.sync.add(ns);
            self.stats.sync_plat.add(ns);
        }
        Ok(())
    }

    fn count(ctl: &RunControl<'_>, dir: Dir, res: i64) {
        let c = ctl.counters();
        match dir {
            Dir::Read => {
                c.add(Counter::Reads, 1);
                c.add(Counter::BytesRead, res as u64);
            }
            Dir::Write => {
                c.add(Counter::Writes, 1);
                c.add(Counter::BytesWritten, res as u64);
            }
        }
    }

    fn run_sync(&mut self, ctl: &mut RunControl<'_>, pace: u64) -> Result<Meas, WorkloadError> {
        let clock = ctl.clock();
        let mut now = ctl.now();
        let mut meas = Meas::start(ctl, now);
        let mut due = now;
        let mut issued = 0u64;
        let buf = self.bufs.slot(0);
        loop {
            if !self.job.time_based && issued >= self.size {
                break;
            }
            if ctl.next_op(now).is_none() {
                break;
            }
            let intended = if pace > 0 {
                if due > now {
                    ctl.wait_until(due);
                    if ctl.aborted() {
                        break;
                    }
                }
                let d = due;
                due += pace;
                Some(d)
            } else {
                None
            };
            let (dir, off, len) = self.next_io();
            let t0 = ctl.now();
            let res = self
                .engine
                .as_mut()
                .expect("engine built at start")
                .sync_io(dir, buf, off, len);
            let t1 = ctl.now();
            if res < 0 {
                return Err(self.fail(dir, off, res));
            }
            issued += len as u64;
            let start = intended.unwrap_or(t0);
            ctl.record(start, t1);
            Self::count(ctl, dir, res);
            let warming = ctl.warming_up();
            if !warming {
                meas.begin(ctl, t1);
                self.account(
                    dir,
                    res,
                    len,
                    None,
                    clock.to_ns(t1 - t0),
                    clock.to_ns(t1 - start),
                );
                if t1 >= meas.next_sample {
                    self.sample(clock.to_ns(t1 - meas.last_sample));
                    meas.last_sample = t1;
                    meas.next_sample = t1 + meas.sample_ticks;
                }
            }
            if dir == Dir::Write {
                self.maybe_sync(ctl, warming)?;
            }
            now = t1;
        }
        self.stats.depth_map[0] += self.stats.dirs[0].ios + self.stats.dirs[1].ios;
        self.stats.submit_map[1] += self.stats.dirs[0].ios + self.stats.dirs[1].ios;
        self.stats.complete_map[1] += self.stats.dirs[0].ios + self.stats.dirs[1].ios;
        Ok(meas)
    }

    /// Submits the queued `batch`, stamps its issue time and returns that time.
    #[inline]
    fn submit(
        &mut self,
        engine: &mut Engine,
        batch: &mut Vec<u32>,
        issue: &mut [u64],
        inflight: &mut usize,
        ctl: &RunControl<'_>,
    ) -> Result<u64, WorkloadError> {
        if let Err(e) = engine.submit() {
            // What was not submitted is not in flight.
            batch.clear();
            return Err(WorkloadError(format!("job '{}': {e}", self.job.name)));
        }
        let t1 = ctl.now();
        *inflight += batch.len();
        self.stats.submit_map[batch_bucket(batch.len())] += 1;
        self.stats.depth_map[depth_bucket(*inflight as u32)] += batch.len() as u64;
        for &s in batch.iter() {
            issue[s as usize] = t1;
        }
        batch.clear();
        Ok(t1)
    }

    fn run_queued(&mut self, ctl: &mut RunControl<'_>, pace: u64) -> Result<Meas, WorkloadError> {
        let clock = ctl.clock();
        let mut engine = self.engine.take().expect("engine built at start");
        let depth = self.depth as usize;
        let mut free: Vec<u32> = (0..self.depth).rev().collect();
        let mut batch: Vec<u32> = Vec::with_capacity(depth);
        let mut done = vec![Done::default(); depth];
        // Per slot: start, issue time, direction, length, offset.
        let mut start = vec![0u64; depth];
        let mut issue = vec![0u64; depth];
        let mut meta = vec![(Dir::Read, 0u32, 0u64); depth];
        let mut inflight = 0usize;
        let mut more = true;
        let mut issued = 0u64;
        let t_start = ctl.now();
        let mut meas = Meas::start(ctl, t_start);
        let mut due = t_start;
        let mut err: Option<WorkloadError> = None;
        loop {
            if more && !free.is_empty() {
                let mut t0 = ctl.now();
                let mut failed = false;
                while let Some(&slot) = free.last() {
                    if !self.job.time_based && issued >= self.size {
                        more = false;
                        break;
                    }
                    if pace > 0 && due > t0 {
                        break;
                    }
                    if ctl.next_op(t0).is_none() {
                        more = false;
                        break;
                    }
                    free.pop();
                    let (dir, off, len) = self.next_io();
                    engine.queue(slot, dir, self.bufs.slot(slot), off, len);
                    start[slot as usize] = if pace > 0 { due } else { t0 };
                    if pace > 0 {
                        due += pace;
                    }
                    meta[slot as usize] = (dir, len, off);
                    issued += len as u64;
                    batch.push(slot);
                    if batch.len() >= self.submit_batch {
                        match self.submit(&mut engine, &mut batch, &mut issue, &mut inflight, ctl) {
                            Ok(t1) => t0 = t1,
                            Err(e) => {
                                err = Some(e);
                                failed = true;
                                break;
                            }
                        }
                    }
                }
                if !failed
                    && !batch.is_empty()
                    && let Err(e) =
                        self.submit(&mut engine, &mut batch, &mut issue, &mut inflight, ctl)
                {
                    err = Some(e);
                    failed = true;
                }
                if failed {
                    break;
                }
            }
            if inflight == 0 {
                if !more || ctl.aborted() {
                    break;
                }
                if pace > 0 {
                    ctl.wait_until(due);
                    if ctl.aborted() {
                        break;
                    }
                }
                continue;
            }
            let want = self.complete_min.min(inflight);
            // A paced job with a free slot waits for completions only until its next I/O is
            // due: blocking longer would issue it late (fio sleeps between issues the same way).
            let timeout = (pace > 0 && more && !free.is_empty()).then(|| {
                let now = ctl.now();
                clock.to_ns(due.saturating_sub(now))
            });
            let n = match engine.reap_within(want, &mut done[..self.complete_max], timeout) {
                Ok(n) => n,
                Err(e) => {
                    err = Some(WorkloadError(format!("job '{}': {e}", self.job.name)));
                    break;
                }
            };
            let t2 = ctl.now();
            if n > 0 {
                self.stats.complete_map[batch_bucket(n)] += 1;
            }
            let warming = ctl.warming_up();
            if !warming {
                meas.begin(ctl, t2);
            }
            for d in &done[..n] {
                let s = d.slot as usize;
                inflight -= 1;
                free.push(d.slot);
                let (dir, len, off) = meta[s];
                if d.res < 0 {
                    if err.is_none() {
                        err = Some(self.fail(dir, off, d.res));
                    }
                    continue;
                }
                ctl.record(start[s], t2);
                Self::count(ctl, dir, d.res);
                if !warming {
                    self.account(
                        dir,
                        d.res,
                        len,
                        Some(clock.to_ns(issue[s].saturating_sub(start[s]))),
                        clock.to_ns(t2.saturating_sub(issue[s])),
                        clock.to_ns(t2.saturating_sub(start[s])),
                    );
                }
                if dir == Dir::Write
                    && let Err(e) = self.maybe_sync(ctl, warming)
                {
                    err.get_or_insert(e);
                }
            }
            if !warming && t2 >= meas.next_sample {
                self.sample(clock.to_ns(t2 - meas.last_sample));
                meas.last_sample = t2;
                meas.next_sample = t2 + meas.sample_ticks;
            }
            if err.is_some() || ctl.aborted() {
                break;
            }
        }
        // Buffers must outlive the kernel's use of them: wait for what is still in flight.
        while inflight > 0 {
            match engine.reap(1, &mut done) {
                Ok(n) => inflight -= n,
                Err(_) => break,
            }
        }
        // Back in its place, so it is torn down after the run's end is stamped: io_destroy
        // waits for an RCU grace period (about 30 ms here) that is not the job's runtime.
        self.engine = Some(engine);
        match err {
            Some(e) => Err(e),
            None => Ok(meas),
        }
    }
}

/// When this clone's measured time began and its sample schedule.
struct Meas {
    begun: bool,
    t0: u64,
    last_sample: u64,
    next_sample: u64,
    sample_ticks: u64,
    ru0: (u64, u64, u64, u64, u64),
}

impl Meas {
    fn start(ctl: &RunControl<'_>, now: u64) -> Meas {
        let sample_ticks = ctl.clock().from_ns(SAMPLE_NS);
        let mut m = Meas {
            begun: false,
            t0: now,
            last_sample: now,
            next_sample: now + sample_ticks,
            sample_ticks,
            ru0: rusage(),
        };
        if !ctl.warming_up() {
            m.begun = true;
        }
        m
    }
    /// Marks the start of measurement (the end of ramp time) at `now`, once.
    #[inline(always)]
    fn begin(&mut self, _ctl: &RunControl<'_>, now: u64) {
        if !self.begun {
            self.begun = true;
            self.t0 = now;
            self.last_sample = now;
            self.next_sample = now + self.sample_ticks;
            self.ru0 = rusage();
        }
    }
}

impl LoopWorker for FioWorker {
    fn run(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        let clock = ctl.clock();
        self.offsets.seed(self.rng.next_u64());
        let pace = 1_000_000_000u64
            .checked_div(self.job.rate_iops)
            .map_or(0, |ns| clock.from_ns(ns));
        if self.engine.is_none() {
            let (k, fd, depth, region) = self.engine_args;
            self.engine = Some(
                Engine::new(k, fd, depth, region)
                    .map_err(|e| WorkloadError(format!("job '{}': {e}", self.job.name)))?,
            );
        }
        let r = if self.job.engine.is_sync() {
            self.run_sync(ctl, pace)
        } else {
            self.run_queued(ctl, pace)
        };
        let meas = r?;
        if self.job.end_fsync
            && let Some(f) = &self._fd
        {
            // SAFETY: syncing our own fd.
            unsafe { libc::fsync(f.as_raw_fd()) };
        }
        let t_end = ctl.now();
        let ru1 = rusage();
        if meas.begun {
            self.stats.runtime_ns = clock.to_ns(t_end.saturating_sub(meas.t0));
            self.stats.usr_ns = ru1.0.saturating_sub(meas.ru0.0);
            self.stats.sys_ns = ru1.1.saturating_sub(meas.ru0.1);
            self.stats.ctx = ru1.2.saturating_sub(meas.ru0.2);
            self.stats.majf = ru1.3.saturating_sub(meas.ru0.3);
            self.stats.minf = ru1.4.saturating_sub(meas.ru0.4);
        }
        let mut res = self
            .shared
            .results
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        res[self.tid] = Some(std::mem::take(&mut self.stats));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::clock::Clock;
    use hostbench_core::params::Params;
    use hostbench_core::plan::Plan;
    use hostbench_core::runner::{Silent, run};

    fn run_jobs(
        text: &str,
        threads: usize,
    ) -> Result<(hostbench_core::runner::Measurement, Vec<Table>), String> {
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
        Ok((m, inst.tables()))
    }

    #[test]
    fn random_map_touches_every_block_once_per_pass() {
        let mut g = OffsetGen::new(1000, true);
        g.seed(12345);
        let mut rng = Rng::for_thread(1, 0);
        let mut seen = vec![false; 1000];
        for _ in 0..1000 {
            let x = g.next(&mut rng) as usize;
            assert!(!seen[x], "{x} repeated within a pass");
            seen[x] = true;
        }
    }

    #[test]
    fn size_bounds_the_io_of_a_null_job_and_directions_split() {
        let (m, t) = run_jobs(
            "[a]\nioengine=null\nsize=4m\nbs=4k\nrw=randrw\nrwmixread=75\n",
            1,
        )
        .unwrap();
        assert!(m.error.is_none(), "{:?}", m.error);
        assert_eq!(m.counters.events, 1024);
        let clones = &t[0];
        let col = |n: &str| clones.columns.iter().position(|c| c.name == n).unwrap();
        let row = &clones.rows[0].values;
        let r = row[col("read_total_ios")].unwrap();
        let w = row[col("write_total_ios")].unwrap();
        assert_eq!(r + w, 1024.0);
        assert!(r > w, "75% reads: {r} reads, {w} writes");
        assert_eq!(row[col("read_io_bytes")].unwrap(), r * 4096.0);
        assert_eq!(row[col("read_clat_n")].unwrap(), r);
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
            let (m, t) = match run_jobs(&text, 2) {
                Err(e) if engine == "io_uring" && e.contains("io_uring_setup") => continue,
                r => r.unwrap(),
            };
            assert!(m.error.is_none(), "{engine}: {:?}", m.error);
            assert_eq!(m.counters.events, 512, "{engine}: 2 clones × 256 blocks");
            assert_eq!(t[0].rows.len(), 2);
            assert!(dir.join(format!("j{engine}.1.0")).exists());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
