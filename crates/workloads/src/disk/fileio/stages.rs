//! The fileio stages: `prepare` lays out the files (under part names, committed to the
//! manifest once full), `cleanup` removes only the files hostbench created, and the files
//! are opened (or, for `seqwr`, recreated) for a run.

use super::{Config, IoMode, MIB, Mode, TAG, flags_str, size_str};
use crate::disk::files::{self, AlignedBuf, Manifest, State};
use hostbench_core::workload::*;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::time::Instant;

/// Opens (or, for seqwr, recreates) the files for a run, checking them as sysbench does.
pub(super) fn open_for_run(cfg: &Config, mode: Mode) -> Result<Vec<File>, WorkloadError> {
    files::check_dir(&cfg.dir)?;
    let manifest = Manifest::load(&cfg.dir, TAG)?;
    let mut out = Vec::with_capacity(cfg.num as usize);
    if mode == Mode::SeqWr {
        let mut m = manifest.unwrap_or_else(|| Manifest::new(&cfg.dir, TAG));
        let mut freed = 0u64;
        for i in 0..cfg.num {
            let name = Config::name(i);
            if let Ok(md) = std::fs::symlink_metadata(cfg.path(i)) {
                if !m.owns(&name) {
                    return Err(WorkloadError::environment(format!(
                        "{} exists and hostbench did not create it: --file-test-mode=seqwr deletes and recreates its files, and hostbench deletes only its own; remove it yourself or use another directory (--file-dir)",
                        cfg.path(i).display()
                    )));
                }
                freed += md.len();
            }
        }
        let need = (cfg.file_size * cfg.num).saturating_sub(freed);
        files::ensure_space(&cfg.dir, need, &cfg.total_arg())?;
        m.state = State::Preparing;
        m.save()?;
        for i in 0..cfg.num {
            let name = Config::name(i);
            if m.owns(&name) {
                std::fs::remove_file(cfg.path(i)).map_err(|e| {
                    WorkloadError::failed(format!("cannot remove {}: {e}", cfg.path(i).display()))
                })?;
                m.forget(&name);
            }
            let mut o = cfg.open;
            o.create_new = true;
            let f = files::open(&cfg.path(i), &o)
                .map_err(|e| e.map_message(|m| format!("Cannot create file '{name}': {m}")))?;
            m.record(&name, true)?;
            if cfg.io == IoMode::Mmap {
                f.set_len(cfg.file_size).map_err(|e| {
                    WorkloadError::failed(format!("ftruncate() failed on file {name}: {e}"))
                })?;
            }
            out.push(f);
        }
        m.state = State::Complete;
        m.facts.insert("file_num".into(), cfg.num.to_string());
        m.facts
            .insert("file_size".into(), cfg.file_size.to_string());
        m.save()?;
        return Ok(out);
    }
    if let Some(m) = &manifest {
        m.require_complete(&cfg.prepare_hint())?;
    }
    for i in 0..cfg.num {
        let name = Config::name(i);
        let f = match files::open(&cfg.path(i), &cfg.open) {
            Ok(f) => f,
            Err(e) if std::fs::symlink_metadata(cfg.path(i)).is_err() => {
                let _ = e;
                return Err(WorkloadError::environment(format!(
                    "Cannot open file '{name}' in {}: No such file or directory. Did you forget to run the prepare step? ({})",
                    cfg.dir.display(),
                    cfg.prepare_hint()
                )));
            }
            Err(e) => return Err(e),
        };
        let size = f
            .metadata()
            .map_err(|e| WorkloadError::failed(format!("fstat() failed on file '{name}': {e}")))?
            .len();
        if size < cfg.file_size {
            return Err(WorkloadError::usage(format!(
                "Size of file '{name}' is {}B, but at least {}B is expected. Did you run 'prepare' with different --file-total-size or --file-num values?",
                size_str(size as f64),
                size_str(cfg.file_size as f64)
            )));
        }
        out.push(f);
    }
    Ok(out)
}

pub(super) fn prepare(cfg: &Config, log: &dyn StageLog) -> Result<StageDone, WorkloadError> {
    files::check_dir(&cfg.dir)?;
    log.line(&format!(
        "{} files, {}Kb each, {}Mb total",
        cfg.num,
        cfg.file_size / 1024,
        cfg.file_size * cfg.num / (1024 * 1024)
    ));
    log.line("Creating files for the test...");
    log.line(&format!("Extra file open flags: {}", flags_str(&cfg.open)));

    // What each file needs: whole blocks appended until it reaches the file size.
    let mut todo = Vec::with_capacity(cfg.num as usize);
    let mut need = 0u64;
    for i in 0..cfg.num {
        // Never through a symlink, never into a device or anything but a plain file.
        let cur = match files::lstat_no_symlink(&cfg.path(i))? {
            Some(m) if !m.is_file() => {
                return Err(WorkloadError::environment(format!(
                    "{} is not a regular file: hostbench lays out test files only as plain \
                     files; remove it or use another directory (--file-dir)",
                    cfg.path(i).display()
                )));
            }
            Some(m) => Some(m.len()),
            None => None,
        };
        let start = cur.unwrap_or(0);
        let bytes = if start >= cfg.file_size {
            0
        } else {
            (cfg.file_size - start).div_ceil(cfg.block) * cfg.block
        };
        need += bytes;
        todo.push((cur, bytes));
    }
    let space = files::ensure_space(&cfg.dir, need, &cfg.total_arg())?;
    let _ = space;

    let mut m = Manifest::load(&cfg.dir, TAG)?.unwrap_or_else(|| Manifest::new(&cfg.dir, TAG));
    m.state = State::Preparing;
    m.facts.insert("file_num".into(), cfg.num.to_string());
    m.facts
        .insert("file_size".into(), cfg.file_size.to_string());
    m.save()?;

    let mut buf = AlignedBuf::new(cfg.block as usize);
    let t0 = Instant::now();
    let mut written = 0u64;
    let mut wopts = cfg.open;
    wopts.read = false;
    wopts.write = true;
    for (i, &(cur, bytes)) in todo.iter().enumerate() {
        let i = i as u64;
        let name = Config::name(i);
        let start = cur.unwrap_or(0);
        if start >= cfg.file_size {
            log.line(&format!("Reusing existing file {name}"));
            m.record(&name, false)?;
            continue;
        }
        // A new file is written under a hidden part name and renamed once full, so the
        // final name never holds a short file; an existing one is extended in place (the
        // manifest stays "preparing" until the end, and run checks sizes).
        let fresh = cur.is_none();
        let (path, f) = if fresh {
            log.line(&format!("Creating file {name}"));
            let part = files::part_name(&name);
            let pp = cfg.dir.join(&part);
            if pp.exists() && m.owns(&part) {
                let _ = std::fs::remove_file(&pp);
            }
            let mut o = wopts;
            o.create_new = true;
            let f = files::open(&pp, &o)?;
            m.record(&part, true)?;
            m.save()?;
            (pp, f)
        } else {
            log.line(&format!(
                "{} existing file {name}",
                if start > 0 { "Extending" } else { "Creating" }
            ));
            let f = files::open(&cfg.path(i), &wopts)?;
            m.record(&name, false)?;
            (cfg.path(i), f)
        };
        let fd = f.as_raw_fd();
        let mut off = start;
        let end = start + bytes;
        let mut since_tick = 0u64;
        while off < end {
            if log.interrupted() {
                drop(f);
                if fresh {
                    let _ = std::fs::remove_file(&path);
                    m.forget(&files::part_name(&name));
                }
                m.save()?;
                return Ok(StageDone::Interrupted);
            }
            // SAFETY: the buffer holds `block` bytes; the descriptor is open.
            let n = unsafe {
                libc::pwrite(fd, buf.as_mut_ptr().cast(), cfg.block as usize, off as i64)
            };
            if n != cfg.block as isize {
                let e = std::io::Error::last_os_error();
                // A part file of ours goes at once: nothing half-written stays behind.
                if fresh {
                    drop(f);
                    let _ = std::fs::remove_file(&path);
                    m.forget(&files::part_name(&name));
                    let _ = m.save();
                }
                return Err(if n < 0 && e.raw_os_error() == Some(libc::ENOSPC) {
                    files::write_error(&path, &e, need - written, fresh)
                } else if n < 0 {
                    files::open_error(&path, cfg.open.direct, &e)
                } else {
                    WorkloadError::failed(format!(
                        "Failed to write file {}: short write",
                        path.display()
                    ))
                })
                .map_err(|e| e.map_message(|m| format!("Failed to write file! {m}")));
            }
            off += cfg.block;
            written += cfg.block;
            since_tick += cfg.block;
            if since_tick >= 16 << 20 {
                since_tick = 0;
                log.progress("laying out test files", written, need);
            }
        }
        if fresh {
            files::commit_part(&cfg.dir, &name, &f)?;
            m.forget(&files::part_name(&name));
            m.record(&name, true)?;
        } else {
            f.sync_all().map_err(|e| {
                WorkloadError::failed(format!("cannot fsync {}: {e}", path.display()))
            })?;
        }
        m.save()?;
        log.progress("laying out test files", written, need);
    }
    m.state = State::Complete;
    m.save()?;
    let secs = t0.elapsed().as_secs_f64();
    if written > 0 {
        log.line(&format!(
            "{written} bytes written in {secs:.2} seconds ({:.2} MiB/sec).",
            written as f64 / MIB / secs
        ));
    } else {
        log.line("No bytes written.");
    }
    Ok(StageDone::Done)
}

pub(super) fn cleanup(cfg: &Config, log: &dyn StageLog) -> Result<StageDone, WorkloadError> {
    files::check_dir(&cfg.dir)?;
    log.line("Removing test files...");
    let mut names: Vec<String> = (0..cfg.num).map(Config::name).collect();
    names.extend((0..cfg.num).map(|i| files::part_name(&Config::name(i))));
    let (kept, unproven): (Vec<String>, Vec<String>) = match Manifest::load(&cfg.dir, TAG)? {
        Some(mut m) => {
            let r = m.remove_owned(Some(&names))?;
            (r.kept, r.unproven)
        }
        None => (
            names
                .iter()
                .filter(|n| std::fs::symlink_metadata(cfg.dir.join(n)).is_ok())
                .cloned()
                .collect(),
            Vec::new(),
        ),
    };
    for n in &unproven {
        log.line(&format!(
            "Not removing {n}: hostbench cannot prove it is the file it created (this \
             filesystem keeps no birth time or extended attribute, and the file changed \
             since); remove it yourself if it is a test file"
        ));
    }
    match kept.as_slice() {
        [] => {}
        [n] => log.line(&format!(
            "Not removing {n}: hostbench did not create it, so it was kept. If it is a test \
             file of yours, remove it with the tool that made it (`sysbench fileio ... \
             cleanup`) or `rm -- {n}`"
        )),
        [first, .., last] => log.line(&format!(
            "Not removing {} files ({first} ... {last}): hostbench did not create them, so \
             they were kept (another tool's, e.g. sysbench's prepare). If they are test files \
             of yours, remove them with the tool that made them (`sysbench fileio \
             --file-num=N cleanup`, N as prepared) or `rm -- test_file.*` in this directory",
            kept.len()
        )),
    }
    Ok(StageDone::Done)
}
