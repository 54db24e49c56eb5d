//! The job files before a run: sizes resolved from the files when not given, free space and
//! O_DIRECT checked, missing or short files laid out (1 MiB buffered writes of random data,
//! then fsync; fio's "Laying out IO file" line and a progress bar when a stage log is
//! given). Files are never deleted afterwards (fio's `unlink=0`); only a file this run
//! created is removed when Ctrl-C interrupts its layout.

use super::engine::Buffers;
use super::job::{CloneError, EngineKind, JobSpec};
use hostbench_core::result::Warning;
use hostbench_core::workload::{ErrorKind, SetupCtx, StageLog, WorkloadError};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The length fio's setup measures of the job file at `path` (its `real_file_size`): a
/// regular file's length, a block device's size (`BLKGETSIZE64`, as fio's `bdev_size`;
/// a `/dev/disk/by-id/…` link is followed to its device), 0 for anything else or nothing
/// there (a character device has no size on Linux: fio wants `size=` for it).
pub(super) fn file_len(path: &Path) -> u64 {
    use std::os::unix::fs::FileTypeExt;
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if m.is_file() {
        return m.len();
    }
    let dev = if m.file_type().is_symlink() {
        std::fs::metadata(path).is_ok_and(|t| t.file_type().is_block_device())
    } else {
        m.file_type().is_block_device()
    };
    if dev { block_device_size(path) } else { 0 }
}

/// The size of the block device at `path` (followed through links); `None` when `path`
/// is no block device (or its size cannot be asked).
pub(super) fn device_size(path: &Path) -> Option<u64> {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path)
        .is_ok_and(|m| m.file_type().is_block_device())
        .then(|| block_device_size(path))
        .filter(|&n| n > 0)
}

/// A block device's size in bytes (`BLKGETSIZE64`); 0 when it cannot be opened (read-only,
/// nothing is written) or asked.
pub(super) fn block_device_size(path: &Path) -> u64 {
    use std::os::fd::AsRawFd;
    let Ok(f) = std::fs::File::open(path) else {
        return 0;
    };
    let mut bytes: u64 = 0;
    // BLKGETSIZE64: _IOR(0x12, 114, size_t).
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    // SAFETY: the ioctl writes one u64 into `bytes`, on a descriptor owned here.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64 as _, &mut bytes) };
    if r == 0 { bytes } else { 0 }
}

/// `what` failed on `path` (an I/O error: [`ErrorKind::Failed`], or `kind`).
pub(super) fn io_err(
    kind: ErrorKind,
    what: &str,
    path: &Path,
    e: &std::io::Error,
) -> WorkloadError {
    WorkloadError::new(kind, format!("{what} {}: {e}", path.display()))
}

/// Resolves sizes, checks free space and O_DIRECT, and lays out missing or short files
/// (reporting through `log` when given: fio's "Laying out IO file" line and progress).
/// `Ok(None)` when Ctrl-C stopped a layout. When the layout fails or is stopped, the files
/// it made (not those that were there) are removed: a job refused at its second file
/// leaves no first file behind.
///
/// The prepare stage (`pass` [`Pass::Prepare`]) keeps the lengths it measured the files at,
/// before it laid them out, and the setups after it ([`Pass::Setup`], same jobs, same
/// directory, until the next prepare stage) resolve the regions from those: fio measures and lays out once, and a
/// percentage of a file the prepare stage grew would otherwise be taken again of the grown
/// file (`offset=25%` of a 2 MiB file read from 640 KiB, having grown it to 2.5 MiB).
pub(super) fn layout_files(
    jobs: &mut [JobSpec],
    ctx: &SetupCtx<'_>,
    log: Option<&dyn StageLog>,
    pass: Pass,
) -> Result<Option<Vec<Warning>>, WorkloadError> {
    let key = (jobs.to_vec(), std::env::current_dir().unwrap_or_default());
    let recorded = match pass {
        // (Kept for every run of these jobs after that prepare stage: the repetitions of a
        // suite entry resolve the same regions.)
        Pass::Setup => MEASURED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .filter(|m| m.0 == key)
            .map(|m| (m.1.clone(), m.2.clone())),
        Pass::Prepare => None,
    };
    let recorded = recorded.map(|(haves, failures)| {
        for (j, f) in jobs.iter_mut().zip(failures) {
            j.layout_failed = f;
        }
        haves
    });
    let mut measured = Vec::new();
    // The logs' names are checked first: a refused one leaves no laid-out file behind.
    for (tid, &(ji, _)) in super::fio_threads(jobs).iter().enumerate() {
        super::logs::check(&jobs[ji].logs, &jobs[ji].name, tid).map_err(WorkloadError::usage)?;
    }
    let mut made = Vec::new();
    let mut short = None;
    let r = layout_files_in(
        jobs,
        ctx,
        log,
        (&mut made, &mut short),
        recorded,
        &mut measured,
    );
    if pass == Pass::Prepare && matches!(r, Ok(Some(_))) {
        // fio's parent lays the files out before any job starts (`create_serialize`, its
        // default) and says at once on stderr which clone failed, as `pid=0` (with
        // create_serialize=0 the clone's own line comes with the report, on stdout).
        for j in jobs.iter().filter(|j| j.create_serialize) {
            for (_, (errno, func, _)) in &j.layout_failed {
                eprintln!(
                    "fio: pid=0, err={errno}/func={func}, error={}",
                    super::worker::strerror(*errno)
                );
            }
        }
        *MEASURED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((
            key,
            measured,
            jobs.iter().map(|j| j.layout_failed.clone()).collect(),
        ));
    }
    if !matches!(r, Ok(Some(_))) {
        let mut removed = Vec::new();
        for p in made {
            // Only a regular file still at the name (never what replaced it); the one being
            // created when Ctrl-C came is gone already.
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.is_file() => {
                    if std::fs::remove_file(&p).is_ok() {
                        removed.push(p);
                    }
                }
                Ok(_) => {}
                Err(_) => removed.push(p),
            }
        }
        if matches!(r, Ok(None))
            && let Some(log) = log
            && let Some(note) = left_note(&removed, short.as_deref())
        {
            log.left_behind(&note);
        }
    }
    r
}

/// What an interrupted layout did about its files: the files it had created, which it
/// removed (how many, their names, their directories), and the existing file it was
/// extending, which stays short. `None` when there was neither.
fn left_note(removed: &[PathBuf], short: Option<&Path>) -> Option<String> {
    let dir_of = |p: &Path| {
        let d = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::canonicalize(d)
            .unwrap_or_else(|_| d.to_path_buf())
            .display()
            .to_string()
    };
    let name = |p: &Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    let mut parts = Vec::new();
    if let (Some(first), Some(last)) = (removed.first(), removed.last()) {
        let mut dirs: Vec<String> = Vec::new();
        for p in removed {
            let d = dir_of(p);
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        let dirs = match dirs.len() {
            1 => dirs.remove(0),
            n => format!("{n} directories ({})", dirs.join(", ")),
        };
        parts.push(match removed.len() {
            1 => format!(
                "removed {}, the file it was creating, in {dirs}",
                name(first)
            ),
            2 => format!(
                "removed the 2 files it had created, {} and {}, in {dirs}",
                name(first),
                name(last)
            ),
            n => format!(
                "removed the {n} files it had created ({} to {}) in {dirs}",
                name(first),
                name(last)
            ),
        });
    }
    if let Some(p) = short {
        parts.push(format!(
            "{} (in {}), which it was extending, stays short",
            name(p),
            dir_of(p)
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", and "))
}

/// Which call of [`layout_files`] this is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Pass {
    /// The prepare stage before a run: keeps the lengths it measured.
    Prepare,
    /// The run's setup: takes the lengths the prepare stage kept for the same jobs.
    Setup,
}

/// The jobs (as parsed) and directory of the last prepare stage, and the lengths of each
/// job's files it measured before laying them out.
/// With them, the clones whose layout failed, per job: the setups after it fail them
/// again without trying (a reader's file is not laid out twice).
type Measured = (
    (Vec<JobSpec>, PathBuf),
    Vec<Vec<u64>>,
    Vec<Vec<(u32, CloneError)>>,
);
static MEASURED: std::sync::Mutex<Option<Measured>> = std::sync::Mutex::new(None);

fn layout_files_in(
    jobs: &mut [JobSpec],
    ctx: &SetupCtx<'_>,
    log: Option<&dyn StageLog>,
    (made, short): (&mut Vec<PathBuf>, &mut Option<PathBuf>),
    recorded: Option<Vec<Vec<u64>>>,
    measured: &mut Vec<Vec<u64>>,
) -> Result<Option<Vec<Warning>>, WorkloadError> {
    let mut warnings = Vec::new();
    let mut data_set = 0u64;
    let mut any_buffered = false;
    // Each file laid out so far, with the length it has now.
    let mut seen: Vec<(PathBuf, u64)> = Vec::new();
    // The files whose layout failed, with the error each clone that has them fails with.
    let mut failed: Vec<(PathBuf, CloneError)> = Vec::new();
    // Files `fill_device` jobs make during the run, with their jobs' bound.
    let mut filled: Vec<(PathBuf, u64)> = Vec::new();
    let mut first_dir: Option<PathBuf> = None;
    idle_clones(jobs)?;
    // fio's thread number of each job's first clone (see `fio_threads`).
    let first_threads: Vec<u64> = jobs
        .iter()
        .scan(1u64, |next, j| {
            let first = *next;
            *next += u64::from(j.numjobs);
            Some(first)
        })
        .collect();
    for (ji, j) in jobs.iter_mut().enumerate() {
        // `filesize` reads each file as it is now (never through a symlink: one there is
        // refused below): one per clone, or the shared `filename`.
        // A slot per file: each clone's own (nrfiles each), or the shared `filename` list.
        let nf = j.nfiles();
        let files = if j.filename.is_some() {
            nf
        } else {
            j.numjobs * nf
        };
        // nbd: the export's size is the file's (fio's setup connects once to read it).
        let export = if j.engine == EngineKind::Nbd {
            Some(nbd_export_size(j)?)
        } else {
            None
        };
        let recorded_haves = recorded
            .as_ref()
            .and_then(|r| r.get(ji))
            .filter(|h| h.len() == files as usize)
            .cloned();
        let haves: Vec<u64> = match recorded_haves.as_ref() {
            Some(h) => h.clone(),
            None => (0..files)
                .map(|s| {
                    if let Some(e) = export {
                        e
                    } else if j.engine.fileless() {
                        0
                    } else {
                        let (c, k) = if j.filename.is_some() {
                            (0, s)
                        } else {
                            (s / nf, s % nf)
                        };
                        file_len(&j.file_path_k(c, k))
                    }
                })
                .collect(),
        };
        measured.push(haves.clone());
        let have = haves[0];
        j.resolve_filesize(first_threads[ji], &haves)
            .map_err(|e| WorkloadError::usage(e.0))?;
        if j.fill_device {
            fill_device_size(j)?;
        }
        if j.file_append {
            file_append_regions(j, &haves)?;
        }
        if nf > 1 || j.unlink_each_loop {
            if nf > 1 && !j.engine.fileless() && !j.engine.file_op() {
                regions_of_each_file(j, &haves)?;
            } else if j.size.is_none() && j.pct.size.is_none() && j.file_sizes.is_empty() {
                return Err(WorkloadError::usage(format!(
                    "job '{}': {} files need a size to divide among them (e.g. --size=1g) or \
                     a filesize for each",
                    j.name, nf
                )));
            }
            if j.eng.uring.registerfiles && j.unlink_each_loop {
                // fio's registered descriptors stay those of the first files: the files
                // unlinked between passes would go on being written, unseen.
                return Err(WorkloadError::usage(format!(
                    "job '{}': registerfiles with unlink_each_loop is refused: the registered \
                     descriptors would keep writing the files each pass unlinks; leave one \
                     of them out",
                    j.name
                )));
            }
        }
        if nf == 1
            && have > 0
            && j.size.is_none()
            && j.pct.size.is_none()
            && j.file_sizes.is_empty()
            && !j.fill_device
            && !j.engine.no_io()
            && !matches!(j.engine, EngineKind::Null)
            && !j.engine.net()
            && export.is_none()
        {
            // No size for an existing file: each clone's region runs from its own offset to
            // the file's end (fio's `io_size = real_file_size - file_offset`), as `size=100%`
            // does: with `offset` or `offset_increment` a region never reaches past the end
            // (it took the whole file's length from the offset on, and grew the file).
            j.pct.size = Some(100);
        }
        if j.pct.any() {
            // Percentages are of the file there now (fio: its `real_file_size`; with
            // `filesize`, resolved above, 0 for a new file).
            if have == 0 && j.real_size.is_none() {
                return Err(WorkloadError::usage(format!(
                    "job '{}': size, offset or offset_increment in percent needs an existing \
                     regular file with data or a block device ({} is neither); give them in \
                     bytes",
                    j.name,
                    j.file_path(0).display()
                )));
            }
            j.real_size = Some(have);
            if j.filename.is_some()
                && j.numjobs > 1
                && (j.pct.offset.is_some() || j.pct.offset_increment.is_some())
                && j.file_sizes.is_empty()
                && j.zbd.is_none()
                && !j.fill_device
                && !j.engine.fileless()
                && !j.engine.file_op()
            {
                // Clones sharing one file, their offsets in percent: each takes its share of
                // the file as the clones set up before it left it, as with several files.
                regions_of_each_file(j, &haves)?;
            }
            if j.pct.size.is_some() {
                j.size = j.clone_size(0);
                if j.size.is_none_or(|s| s < j.max_bs()) {
                    return Err(WorkloadError::usage(format!(
                        "job '{}': offset {} leaves less than a block of the file ({have} \
                         bytes)",
                        j.name,
                        j.clone_offset(0)
                    )));
                }
            }
        }
        if j.engine == EngineKind::Exec {
            super::engines::exec::preflight(&j.name, &j.eng.exec, j.runtime_s.unwrap_or(0.0))
                .map_err(WorkloadError::usage)?;
        }
        if j.engine.no_io() {
            // No file and no amount of I/O: a cpuio or exec job runs until its runtime (or until
            // the jobs doing I/O end), whatever its size, as in fio. One block stands for
            // the region its offsets are drawn in.
            j.size = Some(j.max_bs());
            continue;
        }
        if let Some(e) = export {
            // fio's FIO_NOEXTEND: the region stops at the export's end.
            let off = j.clone_offset(0);
            if off >= e {
                return Err(WorkloadError::usage(format!(
                    "job '{}': offset {off} is at or past the end of the NBD export ({e} bytes); \
                     give a smaller offset",
                    j.name
                )));
            }
            j.real_size = Some(e);
            j.size = Some(j.size.unwrap_or(e - off).min(e - off));
        }
        // No file to lay out: the null engine, the net engine's socket, nbd's export.
        if matches!(j.engine, EngineKind::Null | EngineKind::Nbd) || j.engine.net() {
            match j.size {
                None => {
                    return Err(WorkloadError::usage(format!(
                        "job '{}': ioengine={} needs a size (e.g. --size=1g)",
                        j.name,
                        j.engine.name()
                    )));
                }
                Some(size) if size < j.max_bs() => {
                    return Err(WorkloadError::usage(format!(
                        "job '{}': size {size} is smaller than the block size {}",
                        j.name,
                        j.max_bs()
                    )));
                }
                Some(_) => {}
            }
            continue;
        }
        check_directories(j)?;
        if nf > 1 {
            let need_bs = j.max_bs();
            for (c, k) in (0..j.numjobs).flat_map(|c| (0..nf).map(move |k| (c, k))) {
                let fs = j.file_region(c, k).1;
                if fs < need_bs {
                    return Err(WorkloadError::usage(format!(
                        "job '{}': each of its {nf} files gets {fs} bytes, less than the \
                         block size {need_bs}; give a larger size or fewer files",
                        j.name
                    )));
                }
            }
        }
        for (c, k) in (0..j.numjobs).flat_map(|c| (0..nf).map(move |k| (c, k))) {
            // (create_only's clones lay their files out all the same.)
            if j.idle_clones.contains(&c) && !j.create_only {
                continue;
            }
            let path = j.file_path_k(c, k);
            if j.filename.is_none() && (j.filename_format.is_some() || j.name.contains('/')) {
                make_parents(j, &path)?;
            } else if let Some(given) = j.given_name(k)
                && !j.engine.fileless()
                && !super::trigger::readonly()
            {
                // (--readonly makes nothing: the layout refuses the missing directory.)
                make_filename_parents(j, given, &path)?;
            }
            let (path, meta) = resolve_job_file(j, path, k)?;
            let is_dev = meta.as_ref().is_some_and(|m| {
                use std::os::unix::fs::FileTypeExt;
                m.file_type().is_block_device() || m.file_type().is_char_device()
            });
            if meta.as_ref().is_some_and(|m| {
                use std::os::unix::fs::FileTypeExt;
                m.file_type().is_fifo() || m.file_type().is_socket()
            }) {
                // Opening a FIFO waits for its other end (hostbench hung there, SIGTERM
                // unheard); fio cannot size it ("failed to get file size") and fails the job.
                return Err(WorkloadError::usage(format!(
                    "job '{}': {} is a FIFO or a socket, which has no size and whose open \
                     waits for a peer; give a regular file or a device",
                    j.name,
                    path.display()
                )));
            }
            if is_dev && j.unlink {
                return Err(WorkloadError::usage(format!(
                    "job '{}': unlink=1 would delete the device node {}; unlink deletes \
                     regular files only",
                    j.name,
                    path.display()
                )));
            }
            // falloc opens its file for writing and changes its allocation whatever the
            // direction, and ftruncate changes its size: both are writers of a device.
            let changes =
                j.rw.writes(0) || matches!(j.engine, EngineKind::Falloc | EngineKind::Ftruncate);
            if is_dev && changes {
                crate::disk::files::check_device_write(
                    &path,
                    j.allow_mounted_write,
                    &format!("job '{}'", j.name),
                    Some("allow_mounted_write=1 to the job"),
                )?;
            }
            let have = meta.as_ref().map_or(0, |m| m.len());
            let size = match if nf > 1 {
                Some(j.file_region(c, k).1)
            } else {
                j.clone_size(c).or(j.size)
            } {
                Some(s) => s,
                None if is_dev => {
                    use std::os::unix::fs::FileTypeExt;
                    let why = if meta
                        .as_ref()
                        .is_some_and(|m| m.file_type().is_char_device())
                    {
                        "a character device has no size to take, as in fio ('you need to \
                         specify size=')"
                    } else {
                        "its size could not be read (BLKGETSIZE64)"
                    };
                    return Err(WorkloadError::usage(format!(
                        "job '{}': give a size for device {} (e.g. --size=1g): {why}",
                        j.name,
                        path.display()
                    )));
                }
                None if have > j.offset => have - j.offset,
                // Made by an earlier fill_device job of this run: sized when opened.
                None if meta.is_none()
                    && nf == 1
                    && let Some(&(_, bound)) = filled.iter().find(|(p, _)| *p == path) =>
                {
                    j.sized_at_open = true;
                    bound
                }
                None => {
                    return Err(WorkloadError::usage(format!(
                        "job '{}': {} does not exist (or is empty); give a size (e.g. --size=1g) to have it laid out",
                        j.name,
                        path.display()
                    )));
                }
            };
            if nf == 1 {
                j.size = Some(size);
            }
            if j.fill_device && !filled.iter().any(|(p, _)| *p == path) {
                filled.push((path.clone(), size));
            }
            if size < j.max_bs() {
                return Err(WorkloadError::usage(format!(
                    "job '{}': size {size} is smaller than the block size {}",
                    j.name,
                    j.max_bs()
                )));
            }
            // What goes through the page cache (or sits on a filesystem in RAM): data the
            // engine moves to and from a regular file or block device. A character device
            // (/dev/full, /dev/null) has no page cache, and ftruncate, falloc and the
            // file-operation engines move no data.
            let is_char = meta.as_ref().is_some_and(|m| {
                use std::os::unix::fs::FileTypeExt;
                m.file_type().is_char_device()
            });
            let cached = j.engine.through_page_cache() && !is_char;
            if cached && !j.direct {
                any_buffered = true;
            }
            // zonemode=zbd: the zones are of the file as it is now (fio's
            // `real_file_size` when it sets up), the clone's region whole zones.
            let zbd_notes = match zbd_region(j, c, &path, meta.as_ref(), size) {
                Ok(n) => n,
                Err(e) => return Err(WorkloadError::usage(e)),
            };
            let say = |notes: &[String]| {
                if let Some(log) = log {
                    notes.iter().for_each(|n| log.line(n));
                }
            };
            // A clone whose file (or one of its files) failed its layout lays out nothing
            // more, as fio's `setup_files` stops at the first failure.
            if j.layout_failure(c).is_some() {
                continue;
            }
            // A file whose layout failed fails each clone that has it (fio tries again for
            // each, and fails again).
            if let Some((_, e)) = failed.iter().find(|(p, _)| *p == path) {
                if nf == 1
                    && let Some(log) = log
                {
                    // fio's line again, for its layout tried again.
                    let need = j.clone_offset(c).saturating_add(size);
                    log.line(&format!(
                        "{}: Laying out IO file (1 file / {}MiB)",
                        j.clone_name(c),
                        need >> 20
                    ));
                }
                j.layout_failed.push((c, e.clone()));
                continue;
            }
            // A shared file holds every clone's region (`offset_increment` moves them): fio's
            // first clone lays out its own region, the next one the rest (two "Laying out"
            // lines, 2 then 6 MiB for three clones of 2 MiB apart); a clone's own file, its
            // own region.
            let last = if j.filename.is_some() && c > 0 {
                j.numjobs.saturating_sub(1)
            } else {
                c
            };
            // (With `size=P%` each region ends within the file: nothing to extend.)
            let need = if nf > 1 || !j.file_regions.is_empty() {
                j.file_need(c, k)
            } else {
                j.clone_offset(last)
                    .saturating_add(j.clone_size(last).unwrap_or(size))
                    .max(j.clone_offset(c).saturating_add(size))
            };
            if let Some(i) = seen.iter().position(|(p, _)| *p == path) {
                // Laid out already, for an earlier clone or job: fio sets each job's files up
                // in turn, and one whose region ends past the file's end extends it (its own
                // "Laying out" line, the new length); a device is never laid out.
                let laid = seen[i].1;
                if is_dev || need <= laid.max(have) {
                    say(&zbd_notes);
                    continue;
                }
                if cached {
                    data_set += need - laid.max(have);
                }
                seen[i].1 = need;
            } else {
                seen.push((path.clone(), need.max(have)));
                if cached {
                    // (A device shorter than the region: the part of it the job reaches.)
                    let reach = if is_dev {
                        device_size(&path).map(|d| d.saturating_sub(j.clone_offset(c)))
                    } else {
                        None
                    };
                    data_set += reach.map_or(size, |r| size.min(r));
                }
            }
            // The directory of the first regular file: its filesystem says whether the
            // files live in RAM (a device's /dev is devtmpfs, not where its data is).
            if cached && !is_dev && first_dir.is_none() {
                first_dir = Some(
                    path.parent()
                        .filter(|p| !p.as_os_str().is_empty())
                        .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
                );
            }
            if j.create_on_open && !j.allow_file_create && meta.is_none() {
                // fio runs the job and its open fails (ENOENT: err=2, exit 1); hostbench
                // refuses it before anything runs.
                return Err(WorkloadError::usage(format!(
                    "job '{}': {} does not exist, create_on_open=1 would create it and \
                     allow_file_create=0 forbids that (fio's job fails its open with error \
                     2); create the file first or drop allow_file_create=0",
                    j.name,
                    path.display()
                )));
            }
            // create_on_open: no layout, the job's open creates the file (fio); the space
            // its writes will take is checked all the same, unless they go on after ENOSPC.
            if !is_dev
                && j.create_on_open
                && need > have
                && j.rw.writes(j.rwmixread)
                && !j.errors.goes_on_when_full()
            {
                let dir = path
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
                // (On a read-only filesystem the job's open fails, as fio's: err=30.)
                if !crate::disk::files::space(&dir).is_ok_and(|s| s.read_only) {
                    crate::disk::files::ensure_space(
                        &dir,
                        need - have,
                        &format!("job '{}' writing {}", j.name, path.display()),
                    )?;
                }
            }
            // filecreate makes its (empty) files itself, one open each: nothing to lay out;
            // fill_device's file is made by the job's open and filled by its writes.
            // A file the prepare stage only created and reserved space for (a writer's)
            // may still be short (`fallocate=keep` or `none`): it is not laid out again.
            let done_before = recorded_haves.is_some() && !writes_out(j);
            if !is_dev
                && !j.create_on_open
                && !j.fill_device
                && j.engine != EngineKind::Filecreate
                && !done_before
            {
                if nf > 1 && k == 0 {
                    // fio's one line for the files of a clone that need laying out.
                    announce_files(j, c, log);
                }
                let existed = std::fs::symlink_metadata(&path).is_ok();
                let laid = match lay_out(
                    j,
                    c,
                    &path,
                    need,
                    have,
                    if nf > 1 { None } else { log },
                    log,
                )? {
                    Ok(laid) => laid,
                    Err(e) => {
                        // The clone fails alone (fio's err and func); the others go on.
                        failed.push((path.clone(), e.clone()));
                        j.layout_failed.push((c, e));
                        continue;
                    }
                };
                if !laid {
                    // Stopped: the file it was creating (removed), or extending (short).
                    if existed {
                        *short = Some(path.clone());
                    } else {
                        made.push(path.clone());
                    }
                    return Ok(None);
                }
                if !existed {
                    made.push(path.clone());
                }
            }
            say(&zbd_notes);
            // (A file the job's open makes has nothing to check yet: that open says it.)
            if j.direct && std::fs::symlink_metadata(&path).is_ok() {
                check_direct(&path)?;
            }
        }
    }
    let hint = "use --direct=1 (or files larger than RAM) to measure the device";
    let w = match first_dir {
        _ if data_set == 0 => None,
        Some(dir) => {
            crate::disk::files::page_cache_warning(&dir, data_set, !any_buffered, ctx.host, hint)
        }
        // Block devices only: the page cache, no filesystem.
        None => crate::disk::files::page_cache_decision(
            None,
            data_set,
            !any_buffered,
            ctx.host.map(|h| h.memory.total_bytes),
            hint,
        ),
    };
    warnings.extend(w);
    Ok(Some(warnings))
}

/// `zonemode=zbd`: clone `c`'s file measured for its zones (refused when smaller than a
/// zone, as fio, or a zoned device) and its region of `size` bytes rounded to whole zones
/// (kept in the job's [`super::job::ZbdOpts::files`]); fio's notes of the rounding.
fn zbd_region(
    j: &mut JobSpec,
    c: u32,
    path: &Path,
    meta: Option<&std::fs::Metadata>,
    size: u64,
) -> Result<Vec<String>, String> {
    let Some(z) = j.zbd.as_ref() else {
        return Ok(Vec::new());
    };
    let real = super::zbd::real_size(path, meta).map_err(|e| format!("job '{}': {e}", j.name))?;
    let shown = path.display();
    if real < z.size {
        return Err(format!(
            "job '{}': fio 3.33: \"{shown}: file/device size {real} is smaller than zone size \
             {}\": the zones are emulated in the file as it is before the run (fio lays \
             nothing out for them); make the file first (e.g. a run without zonemode=zbd)",
            j.name, z.size
        ));
    }
    if j.rw.trims() && j.bsz[2].min != z.size {
        // A trim resets one zone (zbd.c's zbd_verify_bs).
        return Err(format!(
            "job '{}': fio 3.33: \"{shown}: trim block size {} is not the zone size {}\"; \
             give bs (or its trim value, bs=,,{}) the zonesize",
            j.name, j.bsz[2].min, z.size, z.size
        ));
    }
    if j.verify.kind != 0
        && let Some(b) = j
            .bsz
            .iter()
            .map(|b| b.min)
            .find(|&b| z.size % b.max(1) != 0)
    {
        // A zone is never reset during a verified pass: its blocks must fill it exactly.
        return Err(format!(
            "job '{}': fio 3.33: \"{shown}: block size {b} is not a divisor of the zone size \
             {}\" (with verify); give a bs that divides the zonesize",
            j.name, z.size
        ));
    }
    let seq_read = j.rw == super::job::Rw::Read;
    let (f, notes) = super::zbd::align_region(
        &shown.to_string(),
        z,
        real,
        seq_read,
        (j.clone_offset(c), size),
    )?;
    if let Some(z) = j.zbd.as_mut() {
        z.files.truncate(c as usize);
        z.files.push(f);
    }
    Ok(notes)
}

/// The job's file at `path`, checked before anything is written: a symlink there is
/// refused ([`crate::disk::files::symlink_refused`]) unless it leads to a device node (the
/// `/dev/disk/by-id/…` names people give fio), which then stands for the device itself (the
/// job's `filename` is rewritten to it, so every later open and the in-use check see the
/// device). Returns the path to use and its metadata (`None` when nothing is there yet).
fn resolve_job_file(
    j: &mut JobSpec,
    path: PathBuf,
    k: u32,
) -> Result<(PathBuf, Option<std::fs::Metadata>), WorkloadError> {
    use std::os::unix::fs::FileTypeExt;
    let lmeta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((path, None)),
        Err(e) => return Err(io_err(ErrorKind::Environment, "cannot stat", &path, &e)),
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
            let t_name = t.to_string_lossy().into_owned();
            if k == 0 {
                j.filename = Some(t_name);
            } else {
                j.more_files[k as usize - 1] = t_name;
            }
            Ok((t, Some(m)))
        }
        _ => Err(crate::disk::files::symlink_refused(&path)
            .map_message(|m| format!("job '{}': {m}", j.name))),
    }
}

/// fio's `fill_device` for a job given no size: its files' filesystem is measured first
/// (`statvfs`) and the job's region is the whole filesystem, rounded down to the block size,
/// so the writes end at ENOSPC before it. Only a job that writes, to regular files
/// (never a device: give a size there), with one file per clone.
fn fill_device_size(j: &mut JobSpec) -> Result<(), WorkloadError> {
    if !j.rw.writes(j.rwmixread) || j.engine.fileless() || j.engine.file_op() {
        return Err(WorkloadError::usage(format!(
            "job '{}': fill_device writes until the filesystem is full: it needs a job that \
             writes (rw=write, randwrite, rw, randrw) with an engine that writes files",
            j.name
        )));
    }
    if j.nfiles() > 1 || j.filesize.is_some() {
        return Err(WorkloadError::usage(format!(
            "job '{}': fill_device with several files or a filesize is not supported by \
             hostbench; use one file per clone without filesize",
            j.name
        )));
    }
    let path = j.file_path(0);
    if let Ok(m) = std::fs::symlink_metadata(&path) {
        use std::os::unix::fs::FileTypeExt;
        if m.file_type().is_block_device() || m.file_type().is_char_device() {
            return Err(WorkloadError::usage(format!(
                "job '{}': fill_device fills a filesystem, and {} is a device; give a size \
                 to write the device",
                j.name,
                path.display()
            )));
        }
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let sp = crate::disk::files::space(&dir)?;
    if j.size.is_none() {
        let bs = j.max_bs().max(1);
        let total = sp.total_bytes - sp.total_bytes % bs;
        if total < bs {
            return Err(WorkloadError::usage(format!(
                "job '{}': fill_device: the filesystem of {} has less than one block",
                j.name,
                dir.display()
            )));
        }
        j.size = Some(total);
    }
    Ok(())
}

/// fio's line for a clone with several files to lay out: `j: Laying out IO files (3 files
/// / total 3MiB)`, counting the files shorter than their regions need (the shared
/// `filename` list once, by its first clone).
fn announce_files(j: &JobSpec, c: u32, log: Option<&dyn StageLog>) {
    let Some(log) = log else { return };
    if j.filename.is_some() && c > 0 {
        return;
    }
    let (mut n, mut total) = (0u64, 0u64);
    for k in 0..j.nfiles() {
        let need = j.file_need(c, k);
        let have = std::fs::symlink_metadata(j.file_path_k(c, k))
            .ok()
            .filter(|m| m.is_file())
            .map_or(0, |m| m.len());
        if have < need {
            n += 1;
            total += need;
        }
    }
    if n > 0 {
        log.line(&format!(
            "{}: Laying out IO file{} ({n} file{} / total {}MiB)",
            j.clone_name(c),
            if n == 1 { "" } else { "s" },
            if n == 1 { "" } else { "s" },
            total >> 20
        ));
    }
}

/// fio's `fallocate` over the part of the file about to be laid out (`have..need`), then,
/// for a job that reads, the length set with `ftruncate` as fio sets it before its filler
/// (the calls fio makes, checked with strace). Failures change nothing hostbench does next
/// (the data is written anyway), as fio ignores them.
fn reserve(j: &JobSpec, f: &std::fs::File, have: u64, need: u64) {
    use super::job::Fallocate;
    use std::os::fd::AsRawFd;
    let fd = f.as_raw_fd();
    let (off, len) = (have as libc::off_t, (need - have) as libc::off_t);
    // SAFETY: space calls on a descriptor we own.
    unsafe {
        match j.fallocate {
            Fallocate::None => {}
            Fallocate::Native => {
                libc::fallocate(fd, 0, off, len);
            }
            Fallocate::Posix => {
                libc::posix_fallocate(fd, off, len);
            }
            Fallocate::Keep => {
                libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, off, len);
            }
            Fallocate::Truncate => {
                libc::ftruncate(fd, need as libc::off_t);
            }
        }
        if writes_out(j) {
            libc::ftruncate(fd, need as libc::off_t);
        }
    }
}

/// fio's `add_file` for generated names: a clone after a job's first gets no file whose
/// name is taken already (by an earlier clone of a job of several clones, of this job or
/// one before it), unless something other than a regular file is there. Such a clone, all
/// of its names taken (`filename_format=shared.$filenum` with `numjobs=2`), has no file
/// and never starts (fio's JSON lists it with no I/O, its report has no block): its
/// [`JobSpec::idle_clones`]. A clone with only some of its names taken would run on the
/// others, which hostbench does not do: refused.
fn idle_clones(jobs: &mut [JobSpec]) -> Result<(), WorkloadError> {
    let mut taken: Vec<PathBuf> = Vec::new();
    let threads = super::fio_threads(jobs);
    for j in jobs.iter_mut() {
        j.idle_clones.clear();
    }
    for (ji, c) in threads {
        let j = &mut jobs[ji];
        if j.create_only {
            // fio's create_only: the files are laid out and the job is done before its
            // first I/O (no block in the report, a JSON entry without I/O).
            j.idle_clones.push(c);
            continue;
        }
        if j.filename.is_some() || j.engine.fileless() {
            continue;
        }
        let names: Vec<PathBuf> = (0..j.nfiles()).map(|k| j.file_path_k(c, k)).collect();
        let dup = |p: &PathBuf| {
            taken.contains(p) && std::fs::symlink_metadata(p).map_or(true, |m| m.is_file())
        };
        let dups = if c > 0 {
            names.iter().filter(|p| dup(p)).count()
        } else {
            0
        };
        if dups == names.len() && dups > 0 {
            j.idle_clones.push(c);
        } else if dups > 0 {
            return Err(WorkloadError::usage(format!(
                "job '{}': clone {c} would get only some of its files ({dups} of its {} \
                 names are an earlier clone's: fio's clones skip those), which hostbench \
                 does not support; put $jobnum in filename_format",
                j.name,
                names.len()
            )));
        }
        if j.numjobs > 1 {
            taken.extend(names);
        }
    }
    Ok(())
}

/// `file_append`: each clone's region of each file starts at the file's end as the clone
/// is set up (fio's `get_start_offset` returns the file's length: `offset` and
/// `offset_increment` do not count), so a file the clones share is grown by each in turn.
/// Regular files, with a size in bytes, only.
fn file_append_regions(j: &mut JobSpec, haves: &[u64]) -> Result<(), WorkloadError> {
    let refuse = |why: &str| {
        Err(WorkloadError::usage(format!(
            "job '{}': file_append {why}",
            j.name
        )))
    };
    if j.engine.fileless() || j.engine.file_op() || j.engine.no_io() {
        return refuse(&format!(
            "appends to files, and ioengine={} has none; leave file_append out",
            j.engine.name()
        ));
    }
    if j.size.is_none() || j.pct.any() || j.filesize.is_some() || j.fill_device {
        return refuse(
            "needs a size in bytes (e.g. --size=1m), without filesize, fill_device or \
             percentages (fio's region would be empty or depend on them in ways hostbench \
             does not follow)",
        );
    }
    for c in 0..j.numjobs {
        for k in 0..j.nfiles() {
            let p = j.file_path_k(c, k);
            if std::fs::symlink_metadata(&p).is_ok_and(|m| !m.is_file()) {
                return refuse(&format!(
                    "appends to regular files and {} is not one; leave file_append out",
                    p.display()
                ));
            }
        }
    }
    if j.nfiles() == 1 {
        // (Several files: `regions_of_each_file` runs for them anyway.)
        regions_of_each_file(j, haves)?;
    }
    Ok(())
}

/// Whether the layout writes job `j`'s missing part of a file out (fio's `new_layout` in
/// `extend_file`): for a job that reads (fio sets `overwrite` for it), or that writes with
/// `overwrite=1` (and no `file_append`). Otherwise (a writer by default, a trim-only job)
/// the file is only created and its space reserved (`fallocate`): its writes fill it.
fn writes_out(j: &JobSpec) -> bool {
    use super::job::Rw;
    let reads = matches!(j.rw, Rw::Read | Rw::RandRead | Rw::ReadWrite | Rw::RandRw);
    let writes = matches!(
        j.rw,
        Rw::Write | Rw::RandWrite | Rw::ReadWrite | Rw::RandRw | Rw::TrimWrite | Rw::RandTrimWrite
    );
    reads || (writes && j.overwrite && !j.file_append)
}

/// Several files: each clone's region of each file, as fio 3.33's `setup_files` sets a
/// file's `file_offset` and `io_size`, into [`JobSpec::file_regions`]. Per clone and file,
/// with `real` the file's length when that clone is set up (`haves`; a shared `filename`
/// list's files as the clones set up before left them, fio setting the clones up one after
/// the other: clone 0, then the last down to clone 1):
/// - the region starts at fio's `get_start_offset` (`offset=P%`/`offset_increment=P%` of
///   `real`, rounded up to the smallest block size or `offset_align`);
/// - it is `size` divided among the files, or with `filesize` the file's length from the
///   offset on, or without a size (or with `size=P%`) `real` from the offset on;
/// - `size=P%` other than 100 then takes that share of the file's length (region plus
///   offset), no further than its end, rounded down to the smallest block size;
/// - a region past `real` grows the file to its end (what the layout does), which the next
///   clone of a shared file sees.
fn regions_of_each_file(j: &mut JobSpec, haves: &[u64]) -> Result<(), WorkloadError> {
    let nf = j.nfiles();
    let pct_offset = j.pct.offset.is_some() || j.pct.offset_increment.is_some();
    if pct_offset && !j.file_sizes.is_empty() {
        return Err(WorkloadError::usage(format!(
            "job '{}': offset or offset_increment in percent with several files and filesize \
             is not supported by hostbench; give them in bytes",
            j.name
        )));
    }
    let size_pct = j.pct.size.take();
    let a = j.bs_read.min(j.bs_write).max(1);
    // With `filesize` (resolved per slot into regions from the first clone's offset): each
    // file's length.
    let shared = j.filename.is_some();
    let file_lens: Vec<u64> = (0..j.file_sizes.len())
        .map(|s| {
            let c = if shared { 0 } else { s as u32 / nf };
            j.file_sizes[s] + j.clone_offset(c)
        })
        .collect();
    let each = j
        .size
        .filter(|_| size_pct.is_none())
        .map(|s| s / u64::from(nf));
    let mut lens = haves.to_vec();
    let mut regions = vec![(0, 0); (j.numjobs * nf) as usize];
    // fio sets the clones up in the order it made them: the job (subjob 0), then subjobs
    // numjobs-1 down to 1 (init.c's `while (--numjobs)`).
    for c in std::iter::once(0).chain((1..j.numjobs).rev()) {
        for k in 0..nf {
            let slot = j.file_slot(c, k);
            let real = lens[slot];
            let path = || j.file_path_k(c, k).display().to_string();
            if real == 0 && pct_offset {
                return Err(WorkloadError::usage(format!(
                    "job '{}': offset or offset_increment in percent is of each file's length \
                     and {} is not an existing regular file with data; give them in bytes",
                    j.name,
                    path()
                )));
            }
            if real == 0 && file_lens.is_empty() {
                if let Some(p) = size_pct {
                    return Err(WorkloadError::usage(format!(
                        "job '{}': size={p}% is of each file's length and {} is not an \
                         existing regular file with data; give size in bytes",
                        j.name,
                        path()
                    )));
                }
                if each.is_none_or(|e| e == 0) {
                    return Err(WorkloadError::usage(format!(
                        "job '{}': {nf} files need a size to divide among them (e.g. \
                         --size=1g) or a filesize for each: without one each file is read as \
                         it is, and {} does not exist (or is empty)",
                        j.name,
                        path()
                    )));
                }
            }
            let off = j.start_offset(c, real);
            let mut io = if let Some(&len) = file_lens.get(slot) {
                len.checked_sub(off)
            } else {
                match each {
                    Some(e) if e > 0 => Some(e),
                    _ => real.checked_sub(off),
                }
            }
            .ok_or_else(|| {
                WorkloadError::usage(format!(
                    "job '{}': offset {off} is past the end of {} ({real} bytes)",
                    j.name,
                    path()
                ))
            })?;
            if let Some(p) = size_pct.filter(|&p| p != 100) {
                let file = io + off;
                io = (file.saturating_mul(p) / 100).min(io);
                io -= io % a;
            }
            if let Some(p) = size_pct
                && io < j.max_bs()
            {
                return Err(WorkloadError::usage(format!(
                    "job '{}': size={p}% of {} ({} bytes{}) is less than a block ({}); give a \
                     larger percentage or size in bytes",
                    j.name,
                    path(),
                    file_lens.get(slot).copied().unwrap_or(real),
                    if off > 0 {
                        format!(", from offset {off}")
                    } else {
                        String::new()
                    },
                    j.max_bs()
                )));
            }
            regions[(c * nf + k) as usize] = (off, io);
            lens[slot] = lens[slot].max(off.saturating_add(io));
        }
    }
    j.file_regions = regions;
    if j.size.is_none() || size_pct.is_some() {
        j.size = j.clone_size(0);
    }
    j.pct.offset = None;
    j.pct.offset_increment = None;
    Ok(())
}

/// Each of `directory`'s directories must be one, as fio's `str_directory_cb` checks them
/// (with `lstat`: a symbolic link at the directory's own name is refused by fio too, and
/// hostbench never follows a link it did not make).
fn check_directories(j: &JobSpec) -> Result<(), WorkloadError> {
    for d in j.directories() {
        let what = match std::fs::symlink_metadata(&d) {
            Ok(m) if m.is_dir() => continue,
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::canonicalize(&d)
                    .map(|t| format!(" ({})", t.display()))
                    .unwrap_or_default();
                format!(
                    "is a symbolic link, which is never followed (fio refuses it too): give \
                     the directory it points to{to}"
                )
            }
            Ok(_) => "is not a directory".to_string(),
            Err(_) => "does not exist; create it or give another --directory".to_string(),
        };
        return Err(WorkloadError::usage(format!(
            "job '{}': directory {} {what}",
            j.name,
            d.display()
        )));
    }
    Ok(())
}

/// fio's `filename_format` with a `/` (`data/$jobname`), or a job name with one
/// (`[sub/job]`: sub/job.0.0): the missing directories under the job's directory are made
/// (mode 0700, as fio); an existing one must be a directory, not a symlink (never followed).
fn make_parents(j: &JobSpec, path: &Path) -> Result<(), WorkloadError> {
    let dirs = j.directories();
    let Some((base, rel)) = dirs
        .iter()
        .find_map(|d| path.strip_prefix(d).ok().map(|rel| (d, rel)))
    else {
        return Ok(());
    };
    let whose = if j.filename_format.is_some() {
        "filename_format's"
    } else {
        "the job name's"
    };
    make_dirs(j, base, rel, whose, false)
}

/// fio's `create_work_dirs` for a `filename=` with a `/` (`newdir/sub/f`): the missing
/// directories are made (mode 0700, as fio) when the name is relative and stays under the
/// run directory (no `..`); an absolute name, or one with `..`, is left to the layout,
/// which refuses a missing directory naming filename=.
fn make_filename_parents(j: &JobSpec, given: &str, path: &Path) -> Result<(), WorkloadError> {
    let rel = Path::new(given);
    let n = rel.components().count();
    if rel.is_absolute()
        || n < 2
        || rel
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Ok(());
    }
    let Some(base) = path.ancestors().nth(n) else {
        return Ok(());
    };
    // A directory the name goes through by a symlink is the user's to give (as before).
    make_dirs(j, base, rel, "filename's", true)
}

/// Makes the missing directories of `rel` (all but its last component) under `base`, mode
/// 0700 as fio; an existing one must be a directory, not a symlink (never followed) unless
/// `follow`: then a symlink to a directory is gone through.
fn make_dirs(
    j: &JobSpec,
    base: &Path,
    rel: &Path,
    whose: &str,
    follow: bool,
) -> Result<(), WorkloadError> {
    use std::os::unix::fs::DirBuilderExt;
    let mut at = base.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    for c in &parts[..parts.len().saturating_sub(1)] {
        at.push(c);
        let meta = if follow {
            std::fs::metadata(&at)
        } else {
            std::fs::symlink_metadata(&at)
        };
        match meta {
            Ok(m) if m.is_dir() => {}
            // Something else is there (a file, a symlink not followed, a dangling one).
            _ if std::fs::symlink_metadata(&at).is_ok() => {
                let why = if follow {
                    "not a directory, or a symlink to none"
                } else {
                    "not a directory, or a symlink, which is never followed"
                };
                return Err(WorkloadError::usage(format!(
                    "job '{}': {} is in the way of {whose} directories ({why})",
                    j.name,
                    at.display()
                )));
            }
            _ => std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&at)
                .map_err(|e| io_err(ErrorKind::of_io(&e), "cannot create directory", &at, &e))?,
        }
    }
    Ok(())
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
pub(super) fn lay_out(
    j: &JobSpec,
    clone: u32,
    path: &Path,
    need: u64,
    have: u64,
    announce: Option<&dyn StageLog>,
    log: Option<&dyn StageLog>,
) -> Result<Result<bool, CloneError>, WorkloadError> {
    if have >= need {
        return Ok(Ok(true));
    }
    if let Some((od, _)) = &j.opendir
        && !j.rw.writes(j.rwmixread)
    {
        // The user named the directory, not this file: a job that only reads writes none
        // of them (fio 3.33 truncates such a file and writes it again, random data).
        return Err(WorkloadError::usage(format!(
            "job '{}': opendir={od}: {} has {have} bytes, less than the {need} its share of \
             the job's size needs; hostbench does not write to a file a reading job found \
             in opendir= (fio would rewrite it): give a smaller size, or none (each file is \
             then read whole)",
            j.name,
            path.display()
        )));
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    if !dir.is_dir() {
        // A name given with filename= says so: its directory came from there.
        let named = (0..j.nfiles())
            .filter_map(|k| j.given_name(k).filter(|_| j.file_path_k(0, k) == path))
            .next();
        return Err(WorkloadError::usage(match named {
            Some(f) => format!(
                "job '{}': filename={f}: directory {} does not exist; create it first \
                 (hostbench makes missing directories only for a relative filename under the \
                 run directory, without '..')",
                j.name,
                dir.display()
            ),
            None => format!(
                "job '{}': directory {} does not exist; create it or give another --directory",
                j.name,
                dir.display()
            ),
        }));
    }
    if super::trigger::readonly() {
        // fio refuses the layout ("refusing extend of file due to read-only") and its job
        // then fails its open (a missing file, error 2) or reads short: refused here.
        return Err(WorkloadError::usage(format!(
            "job '{}': --readonly: {} would have to be laid out to {need} bytes (it has {have}), \
             which --readonly forbids (fio refuses it too and the job fails); make the file \
             first or drop --readonly",
            j.name,
            path.display()
        )));
    }
    let say_layout = || {
        if let Some(log) = announce {
            // fio counts whole MiB (its `extend_size >> 20`): 1500 KiB reads "1MiB".
            log.line(&format!(
                "{}: Laying out IO file (1 file / {}MiB)",
                j.clone_name(clone),
                need >> 20
            ));
        }
    };
    if crate::disk::files::space(&dir).is_ok_and(|s| s.read_only) {
        // fio says it lays the file out, then its first call fails: the job fails alone.
        say_layout();
        return Ok(Err(failed_layout(j, path, EROFS_CALL, libc::EROFS)));
    }
    let missing = need - have;
    // A job that only writes and goes on after ENOSPC (`ignore_error=,ENOSPC`, fio's
    // enospc-pressure.fio) means to fill its filesystem: as fio does for a writer, the
    // file is created and its space asked for (fallocate, failure ignored) but not
    // written, and no free space is required of it.
    let fills = j.rw.read_pct(j.rwmixread) == 0 && j.errors.goes_on_when_full();
    // e4defrag's writes move blocks and never write data: its file is laid out as fio lays
    // out a writer's, its space allocated (unwritten extents) but not written, so the
    // extents the ioctls swap are fio's.
    let allocates_only = j.rw.read_pct(j.rwmixread) == 0 && j.engine == EngineKind::E4defrag;
    if !fills {
        crate::disk::files::ensure_space(
            &dir,
            missing,
            &format!("laying out {} for job '{}'", path.display(), j.name),
        )?;
    }
    let created = std::fs::symlink_metadata(path).is_err();
    if created && !j.allow_file_create {
        // fio's layout opens without O_CREAT then and fails (exit 1).
        return Err(WorkloadError::usage(format!(
            "job '{}': {} does not exist and allow_file_create=0 forbids creating it (fio: \
             \"file creation disallowed by allow_file_create=0\"); create the file first or \
             drop allow_file_create=0",
            j.name,
            path.display()
        )));
    }
    say_layout();
    // The job's file, made if missing (fio's mode 0644), never through a symlink. An open
    // the system refuses (a directory the user may not write: EACCES) fails the job alone,
    // as fio's; a symlink at the name stays the run's refusal.
    let f = match std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if !crate::disk::files::open_is_refused(path, false, &e) => {
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            // fio unlinks the name before it opens it (but for an appending writer): on a
            // read-only filesystem, or with a directory at the name (EISDIR), that unlink
            // is the call that fails.
            let call = if errno == libc::EROFS || errno == libc::EISDIR {
                EROFS_CALL
            } else {
                "open"
            };
            return Ok(Err(failed_layout(j, path, call, errno)));
        }
        Err(e) => return Err(crate::disk::files::open_error(path, false, &e)),
    };
    if fills || allocates_only || !writes_out(j) {
        reserve(j, &f, have, need);
        return Ok(Ok(true));
    }
    let interrupted = || match log {
        Some(l) => l.interrupted(),
        None => hostbench_core::runner::INTERRUPT.load(std::sync::atomic::Ordering::Relaxed),
    };
    let r = (|| -> Result<bool, WorkloadError> {
        let mut f = f;
        reserve(j, &f, have, need);
        use std::io::{Seek, SeekFrom, Write};
        // (A new file is written from its start, where the open left it: no seek, as
        // fio's extend_file makes none.)
        if have > 0 {
            f.seek(SeekFrom::Start(have))
                .map_err(|e| io_err(ErrorKind::of_io(&e), "cannot seek in", path, &e))?;
        }
        let chunk = 1usize << 20;
        let bufs = Buffers::new(1, chunk, 0x5eed)
            .map_err(|e| io_err(ErrorKind::of_io(&e), "buffers for", path, &e))?;
        // SAFETY: one slot of `chunk` bytes, only used here.
        let data = unsafe { std::slice::from_raw_parts_mut(bufs.slot(0), chunk) };
        // What fio's `extend_file` writes: each block of the job's largest write size
        // filled afresh as its writes are (`fill_io_buffer`: random, or the job's
        // buffer_pattern, zero_buffers, compression, dedupe), so a laid-out file is not one
        // MiB repeated (which a deduplicating device would read back from one copy).
        let seed = path
            .as_os_str()
            .as_encoded_bytes()
            .iter()
            .fold(0xF11E_1A70_u64, |h, &b| h.rotate_left(5) ^ u64::from(b))
            ^ j.randseed.unwrap_or(0);
        let mut filler = super::bufs::Filler::new(j, 0, &[seed])
            .map_err(|e| WorkloadError::environment(format!("job '{}': {e}", j.name)))?
            .own_generator();
        let block = (j.bsz[1].max.max(j.max_bs()) as usize).clamp(512, chunk);
        let mut left = missing;
        while left > 0 {
            if interrupted() {
                return Ok(false);
            }
            let n = left.min(chunk as u64) as usize;
            for b in data[..n].chunks_mut(block) {
                filler.fill(b);
            }
            f.write_all(&data[..n])
                .map_err(|e| crate::disk::files::write_error(path, &e, missing, created))?;
            left -= n as u64;
            if let Some(log) = log {
                log.progress("laying out", missing - left, missing);
            }
        }
        if j.create_fsync {
            f.sync_all()
                .map_err(|e| io_err(ErrorKind::of_io(&e), "cannot fsync", path, &e))?;
        }
        Ok(true)
    })();
    if !matches!(r, Ok(true)) && created {
        // Only the file this call created (still a regular file at the name).
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
            let _ = std::fs::remove_file(path);
        }
    } else if !matches!(r, Ok(true)) {
        // An existing file it was extending goes back to its own length, its data as it
        // was: the reservation (fallocate to the full size) and the part written are cut
        // off. Left long, its unwritten blocks were taken for laid out by the next run,
        // whose reads then measured nothing.
        use std::os::unix::fs::OpenOptionsExt;
        if let Ok(f) = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            && f.metadata().is_ok_and(|m| m.is_file() && m.len() > have)
        {
            let _ = f.set_len(have);
        }
    }
    r.map(Ok)
}

/// The call fio's layout fails at on a read-only filesystem: it removes the file first
/// (`extend_file`'s unlink, which the kernel refuses there) unless the job only appends.
const EROFS_CALL: &str = "unlink";

/// Job `j`'s layout of `path` failed at fio's `call` with `errno`: the clone's error, as
/// fio reports it (`err=30, func=unlink`; an open: `func=open`, fio's own word for it).
/// fio's unlink comes first only for a job that does not just append: an appender's first
/// call is its open.
fn failed_layout(j: &JobSpec, path: &Path, call: &str, errno: i32) -> CloneError {
    use super::job::Rw;
    let reads = matches!(j.rw, Rw::Read | Rw::RandRead | Rw::ReadWrite | Rw::RandRw);
    let call = if call == EROFS_CALL && !reads && (j.file_append || !j.rw.writes(0)) {
        "open"
    } else {
        call
    };
    let e = std::io::Error::from_raw_os_error(errno);
    (
        errno,
        call.to_string(),
        format!("laying out {}: {call}: {e}", path.display()),
    )
}

/// The size of the export nbd job `j`'s `uri` names (a connection made and closed for it).
fn nbd_export_size(j: &JobSpec) -> Result<u64, WorkloadError> {
    let uri = j.eng.nbd_uri.as_deref().unwrap_or_default();
    let u = super::engines::nbd::Uri::parse(uri)
        .map_err(|e| WorkloadError::usage(format!("job '{}': uri={uri}: {e}", j.name)))?;
    super::engines::nbd::export_size(&u).map_err(|e| {
        WorkloadError::environment(format!(
            "job '{}': ioengine=nbd: nbd_connect_uri: {e} (uri={uri}; is the NBD server \
             running there?)",
            j.name
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(text: &str) -> JobSpec {
        super::super::job::jobs_from_sections(&super::super::job::from_text(text).unwrap())
            .unwrap()
            .remove(0)
    }

    /// fio's call that fails on a read-only filesystem: its unlink, for every job but an
    /// appending writer (then its open), as fio 3.33 reports it (filesetup.c:150 and 174).
    #[test]
    fn a_read_only_layout_fails_at_fios_call() {
        let func = |text: &str| failed_layout(&job(text), Path::new("f"), EROFS_CALL, 30).1;
        assert_eq!(func("[j]\nrw=write\n"), "unlink");
        assert_eq!(func("[j]\nrw=read\n"), "unlink");
        assert_eq!(func("[j]\nrw=randrw\nfile_append=1\n"), "unlink");
        assert_eq!(func("[j]\nrw=write\nfile_append=1\n"), "open");
        let e = failed_layout(&job("[j]\nrw=write\n"), Path::new("d/f"), "open", 13);
        assert_eq!(e.0, 13);
        assert_eq!(e.1, "open");
        assert!(
            e.2.contains("laying out d/f: open: Permission denied"),
            "{}",
            e.2
        );
    }

    /// fio 3.33's regions for the review's cases (the offsets and counts its strace shows).
    #[test]
    fn regions_of_each_file_are_fios() {
        const M: u64 = 1 << 20;
        let mut j =
            job("[j]\nnrfiles=2\nsize=4m\noffset=25%\noffset_increment=10%\nnumjobs=2\nrw=read\n");
        regions_of_each_file(&mut j, &[2 * M; 4]).unwrap();
        assert_eq!(
            j.file_regions,
            [
                (524_288, 2 * M),
                (524_288, 2 * M),
                (737_280, 2 * M),
                (737_280, 2 * M)
            ]
        );
        assert_eq!(j.file_need(1, 0), 2_834_432);
        let text = "[j]\nfilename=a:b\noffset=25%\nsize=100%\noffset_increment=10%\nnumjobs=2\n";
        let mut j = job(text);
        regions_of_each_file(&mut j, &[4 * M, 2 * M]).unwrap();
        let reads: Vec<u64> = (0..2).map(|c| j.clone_size(c).unwrap() / 4096).collect();
        assert_eq!(reads, [1152, 997]);
        assert_eq!((j.file_need(0, 0), j.file_need(0, 1)), (4 * M, 2 * M));
        // Without a size, each file as it is; a missing one named.
        let mut j = job("[j]\nfilename=a:b\nnumjobs=2\n");
        regions_of_each_file(&mut j, &[4 * M, 2 * M]).unwrap();
        assert_eq!(
            j.file_regions,
            [(0, 4 * M), (0, 2 * M), (0, 4 * M), (0, 2 * M)]
        );
        let e = regions_of_each_file(&mut job("[j]\nfilename=a:b\n"), &[M, 0]).unwrap_err();
        assert!(e.message.contains("b does not exist"), "{}", e.message);
        // A shared file clone 0 grows: clone 1 takes its share of the grown length.
        let mut j = job("[j]\nfilename=a:b\noffset=25%\nsize=1m\nnumjobs=2\n");
        regions_of_each_file(&mut j, &[256 << 10, 128 << 10]).unwrap();
        // a: 64k + 512k = 576k long after clone 0; 25% of it is 144k.
        assert_eq!(j.file_regions[2], (144 << 10, 512 << 10));
        // Three clones: fio sets up clone 2 before clone 1 (b: 128k, grown to 132k by
        // clone 0 and to 148k by clone 2; clone 1 takes its share of 148k).
        let text = "[j]\nfilename=a:b\nsize=200k\noffset=25%\nnumjobs=3\noffset_increment=5%\n";
        let mut j = job(text);
        regions_of_each_file(&mut j, &[256 << 10, 128 << 10]).unwrap();
        let b: Vec<u64> = (0..3).map(|c| j.file_regions[c * 2 + 1].0).collect();
        assert_eq!(b, [32768, 49152, 49152]);
        assert_eq!(j.file_need(0, 1), 151_552);
    }

    #[test]
    fn an_interrupted_layout_says_what_it_removed() {
        let p = |s: &str| PathBuf::from(format!("/nonexistent-dir/{s}"));
        assert_eq!(left_note(&[], None), None);
        assert_eq!(
            left_note(&[p("j.0.0")], None).unwrap(),
            "removed j.0.0, the file it was creating, in /nonexistent-dir"
        );
        let many: Vec<PathBuf> = (0..32).map(|k| p(&format!("j.0.{k}"))).collect();
        assert_eq!(
            left_note(&many, None).unwrap(),
            "removed the 32 files it had created (j.0.0 to j.0.31) in /nonexistent-dir"
        );
        assert_eq!(
            left_note(&[], Some(&p("big"))).unwrap(),
            "big (in /nonexistent-dir), which it was extending, stays short"
        );
    }
}
