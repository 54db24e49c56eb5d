//! fio 3.33's file engines (`engines/fileoperations.c`): `filecreate`, `filestat`,
//! `filedelete`. Their unit is a file: when a clone first picks one of its files the
//! engine creates it (`open(O_CREAT|O_RDWR, 0600)`, the descriptor kept until the file is
//! done), stats it (`stat_type`: `stat`, `lstat` or `statx`) or unlinks it, and that call
//! is the I/O's time (a clat-only sample, as fio's `FIO_NOSTATS` engines report). The
//! I/O itself moves nothing. Every call refuses to follow a symlink (`O_NOFOLLOW`; `stat`
//! on a symlink reads the link's own status), so nothing outside the job's files is
//! touched.

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// filestat's `stat_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatType {
    /// `stat` (fio's default).
    #[default]
    Stat,
    /// `lstat`.
    Lstat,
    /// `statx`.
    Statx,
}

impl StatType {
    /// fio's names.
    pub fn parse(v: &str) -> Option<StatType> {
        match v.trim() {
            "stat" => Some(StatType::Stat),
            "lstat" => Some(StatType::Lstat),
            "statx" => Some(StatType::Statx),
            _ => None,
        }
    }
}

/// What a file engine does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// filecreate.
    Create,
    /// filestat.
    Stat(StatType),
    /// filedelete.
    Delete,
}

impl Op {
    /// fio's name of the call, for `err=` (`func=open(name)`, `stat(name)`, `unlink(name)`).
    pub fn func(self, name: &str) -> String {
        match self {
            Op::Create => format!("open({name})"),
            Op::Stat(_) => format!("stat({name})"),
            Op::Delete => format!("unlink({name})"),
        }
    }
}

/// Runs `op` on `path`: the descriptor filecreate opened (kept open until the file is
/// done, as fio keeps it), or the error.
pub fn run(op: Op, path: &Path) -> std::io::Result<Option<OwnedFd>> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: system calls on a NUL-terminated path we own; the stat buffers are ours.
    unsafe {
        let r = match op {
            Op::Create => {
                let fd = libc::open(
                    c.as_ptr(),
                    libc::O_CREAT | libc::O_RDWR | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                    0o600,
                );
                if fd >= 0 {
                    return Ok(Some(OwnedFd::from_raw_fd(fd)));
                }
                fd
            }
            // The job's files are never symlinks (refused at setup): a plain stat would
            // follow one planted since, so every stat type reads the name itself.
            Op::Stat(StatType::Stat | StatType::Lstat) => {
                let mut st: libc::stat = std::mem::zeroed();
                libc::fstatat(
                    libc::AT_FDCWD,
                    c.as_ptr(),
                    &mut st,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
            }
            Op::Stat(StatType::Statx) => {
                let mut st: libc::statx = std::mem::zeroed();
                libc::statx(
                    libc::AT_FDCWD,
                    c.as_ptr(),
                    libc::AT_SYMLINK_NOFOLLOW,
                    libc::STATX_ALL,
                    &mut st,
                )
            }
            Op::Delete => {
                let mut st: libc::stat = std::mem::zeroed();
                // Only a regular file: never a device node or a directory.
                if libc::fstatat(
                    libc::AT_FDCWD,
                    c.as_ptr(),
                    &mut st,
                    libc::AT_SYMLINK_NOFOLLOW,
                ) == 0
                    && st.st_mode & libc::S_IFMT != libc::S_IFREG
                {
                    return Err(std::io::Error::from_raw_os_error(libc::EPERM));
                }
                libc::unlink(c.as_ptr())
            }
        };
        if r < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_op_does_its_call_and_refuses_symlinks() {
        let d = std::env::temp_dir().join(format!("wt-fio-fileops-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("a");
        assert!(run(Op::Create, &f).unwrap().is_some());
        assert_eq!(std::fs::metadata(&f).unwrap().len(), 0);
        for t in [StatType::Stat, StatType::Lstat, StatType::Statx] {
            assert!(run(Op::Stat(t), &f).unwrap().is_none());
        }
        let l = d.join("l");
        std::os::unix::fs::symlink(&f, &l).unwrap();
        assert!(run(Op::Create, &l).is_err(), "never through a symlink");
        assert_eq!(
            run(Op::Delete, &l).unwrap_err().raw_os_error(),
            Some(libc::EPERM)
        );
        assert!(f.exists(), "the link's target is untouched");
        run(Op::Delete, &f).unwrap();
        assert!(!f.exists());
        assert_eq!(
            run(Op::Stat(StatType::Stat), &f)
                .unwrap_err()
                .raw_os_error(),
            Some(libc::ENOENT)
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
