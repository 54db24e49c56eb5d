//! `ioscheduler=NAME`, as fio 3.33's `switch_ioscheduler` (`backend.c`): each clone, as it
//! starts (after its priority and nice value, before its I/O), writes NAME to the
//! `queue/scheduler` file of the disk under each of its files and reads it back:
//!
//! - no such file: `fio: os or kernel doesn't support IO scheduler switching`, and on;
//! - another error opening it: the clone fails with it (fio's `fopen iosched`);
//! - the file reads `none` alone (a queue without schedulers): `fio: io scheduler is not
//!   tunable`, and on;
//! - NAME is not the one selected (`[NAME]`) afterwards: `fio: unable to set io scheduler
//!   to NAME`, the clone fails with EINVAL (`iosched_switch`).
//!
//! As fio, only files whose disk `disk_util` finds are switched (none with `disk_util=0`,
//! none on tmpfs, none for a character device or FIFO, none for the engines without files),
//! and a partition stands for its disk. Unlike fio, hostbench switches only a block device
//! the user named in `filename=`: a file on a mounted filesystem is refused at setup
//! ([`check`]) rather than the filesystem's disk switched under it; and the scheduler each
//! disk had is selected again when the run ends ([`Restore`]), where fio leaves it switched.

use super::job::JobSpec;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The disks switched during a run and the scheduler each had before, selected again at
/// the end of the run (the first clone to switch a disk records it).
#[derive(Default)]
pub struct Restore {
    before: Mutex<Vec<(PathBuf, String)>>,
}

impl Restore {
    /// Selects each disk's earlier scheduler again; a failure is said on stderr.
    pub fn restore(&self) {
        let list = std::mem::take(&mut *self.before.lock().unwrap_or_else(|p| p.into_inner()));
        for (file, name) in list {
            if let Err(e) = std::fs::write(&file, &name) {
                eprintln!(
                    "hostbench fio: ioscheduler: could not select {name} again in {}: {e}",
                    file.display()
                );
            }
        }
    }
}

/// The scheduler selected in a `queue/scheduler` text (`[mq-deadline] kyber none`).
fn selected(text: &str) -> Option<&str> {
    let open = text.find('[')?;
    let close = open + text[open..].find(']')?;
    Some(&text[open + 1..close])
}

/// The files of clone `clone` of `j` whose disk fio would switch: (the file, its disk's
/// `/sys/block` directory). None unless `ioscheduler` is set.
fn targets(j: &JobSpec, clone: u32) -> Vec<(PathBuf, PathBuf)> {
    if j.ioscheduler.is_none() || !j.disk_util || j.engine.fileless() || j.engine.file_op() {
        return Vec::new();
    }
    (0..j.nfiles())
        .map(|k| j.file_path_k(clone, k))
        .filter_map(|f| {
            let d = crate::disk::diskstat::device_dir(&f)?;
            Some((f, d))
        })
        .collect()
}

/// Refuses `ioscheduler` where fio would switch the disk under a file of a mounted
/// filesystem (every file it would switch must be a block device node: named in
/// `filename=`).
pub fn check(j: &JobSpec) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt;
    let Some(name) = &j.ioscheduler else {
        return Ok(());
    };
    for clone in 0..j.numjobs.max(1) {
        for (f, disk) in targets(j, clone) {
            let is_dev =
                std::fs::symlink_metadata(&f).is_ok_and(|m| m.file_type().is_block_device());
            if !is_dev {
                let dev = disk.file_name().map_or_else(
                    || disk.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                );
                return Err(format!(
                    "job '{}': ioscheduler={name}: {} is a file on a filesystem of disk {dev}; \
                     fio would switch that disk's scheduler (/sys/block/{dev}/queue/scheduler) \
                     and leave it so: hostbench switches only a block device named in \
                     filename=; remove ioscheduler",
                    j.name,
                    f.display(),
                ));
            }
        }
    }
    Ok(())
}

/// Clone `clone` of `j` switches its disks (fio's `switch_ioscheduler`), its messages on
/// stderr; `Err((errno, func, detail))` when the clone fails with it.
pub fn switch(
    j: &JobSpec,
    clone: u32,
    restore: &Restore,
) -> Result<(), (i32, &'static str, String)> {
    let Some(name) = &j.ioscheduler else {
        return Ok(());
    };
    for (_, disk) in targets(j, clone) {
        switch_one(&disk.join("queue/scheduler"), name, restore)?;
    }
    Ok(())
}

fn switch_one(
    file: &Path,
    name: &str,
    restore: &Restore,
) -> Result<(), (i32, &'static str, String)> {
    use std::io::{Read, Seek, Write};
    let mut f = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(file)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("fio: os or kernel doesn't support IO scheduler switching");
            return Ok(());
        }
        Err(e) => {
            return Err((
                e.raw_os_error().unwrap_or(libc::EIO),
                "fopen iosched",
                format!("opening {} failed: {e}", file.display()),
            ));
        }
    };
    let mut before = String::new();
    let _ = f.read_to_string(&mut before);
    // fio's write is buffered and its error dropped (its rewind clears it): what counts is
    // what the file says afterwards.
    let _ = f.rewind();
    let _ = f.write_all(name.as_bytes());
    let mut after = String::new();
    let read = f.rewind().and_then(|_| f.read_to_string(&mut after));
    if let Err(e) = read {
        return Err((
            e.raw_os_error().unwrap_or(libc::EIO),
            "fread",
            format!("reading {} back failed: {e}", file.display()),
        ));
    }
    let first = after.lines().next().unwrap_or("");
    if first == "none" {
        eprintln!("fio: io scheduler is not tunable");
        return Ok(());
    }
    if !first.contains(&format!("[{name}]")) {
        eprintln!("fio: unable to set io scheduler to {name}");
        return Err((
            libc::EINVAL,
            "iosched_switch",
            format!(
                "{}: {name} is not among the schedulers offered ({first})",
                file.display()
            ),
        ));
    }
    if let Some(old) = selected(&before).filter(|&o| o != name) {
        let mut list = restore.before.lock().unwrap_or_else(|p| p.into_inner());
        if !list.iter().any(|(p, _)| p == file) {
            list.push((file.to_path_buf(), old.to_string()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selected_scheduler_is_the_bracketed_one() {
        assert_eq!(
            selected("[mq-deadline] kyber bfq none\n"),
            Some("mq-deadline")
        );
        assert_eq!(selected("mq-deadline kyber [none]\n"), Some("none"));
        assert_eq!(selected("none\n"), None);
    }
}
