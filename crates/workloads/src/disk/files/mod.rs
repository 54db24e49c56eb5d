//! Disk safety helpers every disk workload shares (fileio, fio, iozone, smallfiles).
//!
//! Invariants they uphold:
//! - **Room first.** [`ensure_space`] refuses a layout that would not fit with a margin
//!   ([`margin`]) left free, naming the directory, the bytes needed and free, and what to do;
//!   nothing is written before it passes.
//! - **Only ours.** A [`Manifest`] (a hidden sidecar `.hostbench-<tag>.manifest` in the
//!   directory) records every file hostbench created there, by name *and* device, inode and
//!   birth time. Cleanup removes a file only when the manifest says hostbench created it and
//!   that identity still matches ([`Manifest::owns`]): a same-named file made by someone else (sysbench, the
//!   user, a later `cp`) is never deleted. Names of scratch files start with [`PREFIX`] or are
//!   hidden `.…hostbench-part` files ([`part_name`]).
//! - **Nothing half-made is trusted.** A layout runs in state [`State::Preparing`] and the
//!   manifest turns [`State::Complete`] only when every file is written and synced; new files
//!   are written under a part name and renamed into place once full ([`commit_part`]).
//!   Readers call [`Manifest::require_complete`] before trusting a layout.
//! - **Direct I/O errors name the filesystem.** [`open`] maps `EINVAL` on an `O_DIRECT` open to
//!   a message naming the filesystem type (`statfs` `f_type`), and [`AlignedBuf`] gives the
//!   aligned buffers O_DIRECT needs.
//! - **Say what is measured.** [`page_cache_warning`] and [`space_warning`] produce the typed
//!   warnings (`page_cache`, `disk_space`).

use hostbench_core::workload::WorkloadError;
use std::path::Path;

mod device;
mod manifest;
mod open;
mod space;

pub use device::{check_device_write, device_users, mounts_on};
pub use manifest::{
    Entry, Manifest, Ownership, Removal, State, commit_part, decide_ownership, part_name,
};
pub use open::{
    AlignedBuf, OpenOpts, create_temp_beside, direct_refused, lstat_no_symlink, open, open_error,
    open_is_refused, symlink_refused, unpredictable,
};
pub use space::{
    FsType, Space, check_space, ensure_space, fs_magic_name, fs_type, margin, page_cache_decision,
    page_cache_warning, space, space_warning, write_error,
};

/// Prefix of files and directories hostbench names itself (fio-class scratch files,
/// smallfiles trees).
pub const PREFIX: &str = "hostbench-";

/// Alignment of [`AlignedBuf`]: covers 512-byte and 4 KiB logical blocks and the page size.
pub const DIRECT_ALIGN: usize = 4096;

/// `dir` as given, checked to exist and be a directory.
pub fn check_dir(dir: &Path) -> Result<(), WorkloadError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(WorkloadError::usage(format!(
            "{} is not a directory: give a directory to put the test files in",
            dir.display()
        ))),
        Err(e) => Err(WorkloadError::usage(format!(
            "directory {} cannot be used ({e}): create it first, or give an existing one",
            dir.display()
        ))),
    }
}

/// Checks a path taken from input (a job file, a suite, `-F`) against the directory it
/// belongs to: a relative path must not climb out of it (`..`); an absolute one is
/// accepted only when `allow_absolute` (the user typed it on the command line). `what`
/// names it in the message.
pub fn stays_inside(path: &str, allow_absolute: bool, what: &str) -> Result<(), WorkloadError> {
    let p = Path::new(path);
    if p.is_absolute() {
        if allow_absolute {
            return Ok(());
        }
        return Err(WorkloadError::usage(format!(
            "{what} {path:?} is an absolute path: files of a suite entry stay in its scratch \
             directory; give a name relative to it (or run the workload on its own command \
             line to use that path)"
        )));
    }
    if p.components().any(|c| c == std::path::Component::ParentDir) {
        return Err(WorkloadError::usage(format!(
            "{what} {path:?} climbs out of its directory with `..`; give a name inside it{}",
            if allow_absolute {
                ", or an absolute path"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::path::PathBuf;

    pub(crate) fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "hostbench-files-test-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn check_dir_refuses_missing_and_files() {
        assert!(
            check_dir(Path::new("/no/such"))
                .unwrap_err()
                .message
                .contains("/no/such")
        );
        assert!(
            check_dir(Path::new("/etc/hostname")).is_err() || !Path::new("/etc/hostname").exists()
        );
        assert!(check_dir(Path::new("/tmp")).is_ok());
    }
}
