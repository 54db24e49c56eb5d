//! Room and what the filesystem is: free space (`statvfs`) checked before anything is
//! written, the margin left free, the `disk_space` and `page_cache` warnings, a full disk
//! named as such, and the filesystem type from `statfs`.

use hostbench_core::host::HostInfo;
use hostbench_core::result::{Warning, WarningKind};
use hostbench_core::units::Bytes;
use hostbench_core::workload::WorkloadError;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Free and total space of the filesystem holding a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// Bytes an unprivileged user may still write (`f_bavail · f_frsize`).
    pub free_bytes: u64,
    /// Size of the filesystem (`f_blocks · f_frsize`).
    pub total_bytes: u64,
    /// Mounted read-only (`ST_RDONLY`).
    pub read_only: bool,
}

pub(super) fn cpath(p: &Path) -> Result<CString, WorkloadError> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| WorkloadError::usage(format!("path {} contains a NUL byte", p.display())))
}

/// `statvfs(2)` of `dir`.
pub fn space(dir: &Path) -> Result<Space, WorkloadError> {
    let c = cpath(dir)?;
    // SAFETY: statvfs is plain old data; all-zero is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a struct to fill.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(WorkloadError::environment(format!(
            "cannot read the free space of {} ({e}): check that the directory exists",
            dir.display()
        )));
    }
    #[allow(clippy::unnecessary_cast)] // field types differ between libcs
    let frsize = st.f_frsize as u64;
    #[allow(clippy::unnecessary_cast)]
    Ok(Space {
        free_bytes: (st.f_bavail as u64).saturating_mul(frsize),
        total_bytes: (st.f_blocks as u64).saturating_mul(frsize),
        read_only: st.f_flag & libc::ST_RDONLY != 0,
    })
}

/// Space left free after any layout: 2 % of the filesystem, at least 64 MiB and at most
/// 1 GiB, so a benchmark never brings a machine to a full disk (logs, databases, the
/// results store live there too); but never more than a tenth of a small filesystem (a
/// 16 MiB tmpfs mounted for a test keeps 1.6 MiB: the 64 MiB floor refused any file there,
/// where fio writes one).
pub fn margin(total_bytes: u64) -> u64 {
    (total_bytes / 50)
        .clamp(64 << 20, 1 << 30)
        .min(total_bytes / 10)
}

/// Refuses when writing `need_bytes` more into `dir` would leave less than [`margin`] free.
/// `what` names the layout in the message (`--file-total-size=256G`).
pub fn ensure_space(dir: &Path, need_bytes: u64, what: &str) -> Result<Space, WorkloadError> {
    let s = space(dir)?;
    check_space(dir, s, need_bytes, what)?;
    Ok(s)
}

/// The decision of [`ensure_space`] on a given [`Space`] (pure, for tests). A filesystem
/// that reports no size at all (`f_blocks` = 0: ramfs, some FUSE and network filesystems)
/// says nothing about its free space either, so it is not refused for being "full".
pub fn check_space(dir: &Path, s: Space, need_bytes: u64, what: &str) -> Result<(), WorkloadError> {
    if s.read_only && need_bytes > 0 {
        return Err(WorkloadError::environment(format!(
            "cannot write in {}: its filesystem is mounted read-only (Read-only file system); \
             choose a directory on a writable filesystem, or remount it read-write",
            shown_dir(dir)
        )));
    }
    if s.total_bytes == 0 {
        return Ok(());
    }
    let keep = margin(s.total_bytes);
    if need_bytes.saturating_add(keep) > s.free_bytes {
        return Err(WorkloadError::environment(format!(
            "not enough free space in {}: {what} needs {} more, {} is free and {} must stay free; \
             use a smaller size, free some space, or choose a directory on a larger filesystem",
            shown_dir(dir),
            Bytes(need_bytes),
            Bytes(s.free_bytes),
            Bytes(keep),
        )));
    }
    Ok(())
}

pub(super) fn shown_dir(dir: &Path) -> String {
    if dir.as_os_str().is_empty() || dir == Path::new(".") {
        match std::env::current_dir() {
            Ok(c) => format!("{} (the current directory)", c.display()),
            Err(_) => "the current directory".into(),
        }
    } else {
        dir.display().to_string()
    }
}

/// A `disk_space` warning when, after the layout, less than 10 % of the filesystem is free:
/// the filesystem allocates differently when nearly full, and other programs may fail.
pub fn space_warning(dir: &Path, s: Space) -> Option<Warning> {
    if s.total_bytes == 0 || s.free_bytes >= s.total_bytes / 10 {
        return None;
    }
    Some(Warning {
        kind: WarningKind::DiskSpace,
        message: format!(
            "only {} of {} is free on the filesystem of {}: nearly full filesystems allocate \
             and perform differently; free some space or use another directory",
            Bytes(s.free_bytes),
            Bytes(s.total_bytes),
            shown_dir(dir)
        ),
    })
}

/// A filesystem's type as `statfs(2)` tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsType {
    /// `f_type`.
    pub magic: u64,
}

impl FsType {
    /// Its common name (`ext4`, `tmpfs`), or `None` for a magic number not in the table.
    pub fn name(self) -> Option<&'static str> {
        fs_magic_name(self.magic)
    }

    /// Its name, or `filesystem type 0x…` when unknown.
    pub fn label(self) -> String {
        match self.name() {
            Some(n) => n.to_string(),
            None => format!("type {:#x}", self.magic),
        }
    }

    /// Memory-backed filesystems: every byte lives in RAM whatever the open flags.
    pub fn in_memory(self) -> bool {
        matches!(self.name(), Some("tmpfs" | "ramfs"))
    }
}

/// `statfs(2)` type of the filesystem holding `path`.
pub fn fs_type(path: &Path) -> Option<FsType> {
    let c = cpath(path).ok()?;
    // SAFETY: statfs is plain old data; all-zero is a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a struct statfs to fill.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)] // f_type's type differs between libcs
    Some(FsType {
        magic: st.f_type as u64,
    })
}

/// Filesystem name from a statfs `f_type` (the same table as hostinfo's, which workloads
/// cannot depend on).
pub fn fs_magic_name(magic: u64) -> Option<&'static str> {
    Some(match magic {
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x8584_58F6 => "ramfs",
        0x794C_7630 => "overlay",
        0x2FC1_2FC1 => "zfs",
        0xF2F5_2010 => "f2fs",
        0x6969 => "nfs",
        0xFF53_4D42 => "cifs",
        0xFE53_4D42 => "smb2",
        0x6573_5546 => "fuse",
        0x0102_1997 => "9p",
        0x4D44 => "vfat",
        0x2011_BAB0 => "exfat",
        0x5346_544E => "ntfs",
        0x7366_746E => "ntfs3",
        0x3153_464A => "jfs",
        0x5265_4973 => "reiserfs",
        0xCA45_1A4E => "bcachefs",
        0x0000_9660 => "iso9660",
        0x7371_7368 => "squashfs",
        0x2848_1234 | 0xE0F5_E1E2 => "erofs",
        _ => return None,
    })
}

/// The error for a failed write of `path` while laying out `need` bytes. A full disk
/// (`ENOSPC`, or `EDQUOT` for a quota) says "no space left on device" with the path and
/// what was needed, and whether the partial file was removed (`removed`); anything else
/// names the path and the OS reason.
pub fn write_error(path: &Path, e: &std::io::Error, need: u64, removed: bool) -> WorkloadError {
    let full = matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT));
    if !full {
        return WorkloadError::io(format_args!("cannot write {}", path.display()), e);
    }
    let what = if e.raw_os_error() == Some(libc::EDQUOT) {
        "disk quota exceeded"
    } else {
        "no space left on device"
    };
    let free = space(
        path.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    )
    .map(|s| format!(", {} is free now", Bytes(s.free_bytes)))
    .unwrap_or_default();
    WorkloadError::environment(format!(
        "{what} while writing {}: the layout needed {} more{free}{}; free some space, use a \
         smaller size, or choose a directory on a larger filesystem",
        path.display(),
        Bytes(need),
        if removed {
            "; the partial file was removed"
        } else {
            ""
        }
    ))
}

/// A `page_cache` warning when the figures describe RAM rather than the device: files on a
/// memory filesystem whatever the flags, or a data set smaller than RAM without direct I/O.
pub fn page_cache_warning(
    dir: &Path,
    data_bytes: u64,
    direct: bool,
    host: Option<&HostInfo>,
    hint: &str,
) -> Option<Warning> {
    let fs = fs_type(dir);
    page_cache_decision(
        fs,
        data_bytes,
        direct,
        host.map(|h| h.memory.total_bytes),
        hint,
    )
}

/// The decision of [`page_cache_warning`] (pure, for tests).
pub fn page_cache_decision(
    fs: Option<FsType>,
    data_bytes: u64,
    direct: bool,
    ram_bytes: Option<u64>,
    hint: &str,
) -> Option<Warning> {
    if let Some(f) = fs.filter(|f| f.in_memory()) {
        return Some(Warning {
            kind: WarningKind::PageCache,
            message: format!(
                "the files are on {}, which keeps them in RAM (even with O_DIRECT): the figures \
                 describe memory, not a disk; use a directory on a disk filesystem",
                f.label()
            ),
        });
    }
    let ram = ram_bytes.filter(|&r| r > 0)?;
    if direct || data_bytes >= ram {
        return None;
    }
    Some(Warning {
        kind: WarningKind::PageCache,
        message: format!(
            "the data set ({}) is smaller than RAM ({}) and I/O goes through the page cache: \
             the figures describe the page cache, not the device; {hint}",
            Bytes(data_bytes),
            Bytes(ram)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::workload::ErrorKind;

    #[test]
    fn space_refusal_names_dir_and_sizes() {
        let s = Space {
            free_bytes: 10 << 30,
            total_bytes: 100 << 30,
            read_only: false,
        };
        let d = Path::new("/data/bench");
        assert!(check_space(d, s, 8 << 30, "x").is_ok());
        let e = check_space(d, s, 256 << 30, "--file-total-size=256G")
            .unwrap_err()
            .message;
        assert!(e.contains("/data/bench"), "{e}");
        assert!(e.contains("--file-total-size=256G"), "{e}");
        assert!(e.contains(&Bytes(256 << 30).to_string()), "{e}");
        assert!(e.contains(&Bytes(10 << 30).to_string()), "{e}");
        // The margin counts: 9.5 GiB of 10 GiB free with a 1 GiB margin does not fit.
        assert!(check_space(d, s, (19 << 30) / 2, "x").is_err());
        assert_eq!(margin(100 << 30), 1 << 30);
        assert_eq!(margin(1 << 30), 64 << 20);
        // A small filesystem keeps a tenth: 1 MiB fits in a 16 MiB tmpfs.
        assert_eq!(margin(16 << 20), (16 << 20) / 10);
        let small = Space {
            free_bytes: 16 << 20,
            total_bytes: 16 << 20,
            read_only: false,
        };
        assert!(check_space(d, small, 1 << 20, "x").is_ok());
        assert!(check_space(d, small, 15 << 20, "x").is_err());
        // Read-only: said as such, not as a lack of space; reading needs nothing.
        let ro = Space {
            read_only: true,
            ..small
        };
        let e = check_space(d, ro, 1 << 20, "x").unwrap_err().message;
        assert!(e.contains("mounted read-only"), "{e}");
        assert!(check_space(d, ro, 0, "x").is_ok());
        // ramfs reports 0 blocks and 0 free: no size, so no refusal (and no warning).
        let none = Space {
            free_bytes: 0,
            total_bytes: 0,
            read_only: false,
        };
        assert!(check_space(d, none, 1 << 30, "x").is_ok());
        assert!(space_warning(d, none).is_none());
    }

    #[test]
    fn real_statvfs_and_fs_type() {
        let s = space(Path::new("/")).unwrap();
        assert!(s.total_bytes > 0 && s.free_bytes <= s.total_bytes);
        assert!(space(Path::new("/no/such/dir")).is_err());
        assert!(fs_type(Path::new("/")).is_some());
        if let Some(t) = fs_type(Path::new("/dev/shm")) {
            assert_eq!(t.name(), Some("tmpfs"));
            assert!(t.in_memory());
        }
    }

    #[test]
    fn space_warning_when_nearly_full() {
        let d = Path::new("/x");
        let full = Space {
            free_bytes: 5,
            total_bytes: 100,
            read_only: false,
        };
        assert_eq!(space_warning(d, full).unwrap().kind, WarningKind::DiskSpace);
        let roomy = Space {
            free_bytes: 50,
            total_bytes: 100,
            read_only: false,
        };
        assert!(space_warning(d, roomy).is_none());
    }

    #[test]
    fn page_cache_rules() {
        let ext4 = Some(FsType { magic: 0xEF53 });
        let tmpfs = Some(FsType { magic: 0x0102_1994 });
        let ram = Some(16u64 << 30);
        let w = page_cache_decision(ext4, 1 << 30, false, ram, "use direct").unwrap();
        assert_eq!(w.kind, WarningKind::PageCache);
        assert!(w.message.contains("use direct"));
        assert!(page_cache_decision(ext4, 1 << 30, true, ram, "").is_none());
        assert!(page_cache_decision(ext4, 32 << 30, false, ram, "").is_none());
        assert!(page_cache_decision(ext4, 1 << 30, false, None, "").is_none());
        let w = page_cache_decision(tmpfs, 64 << 30, true, ram, "").unwrap();
        assert!(w.message.contains("tmpfs"), "{}", w.message);
    }

    #[test]
    fn a_full_disk_is_named_as_such() {
        let e = std::io::Error::from_raw_os_error(libc::ENOSPC);
        let full = write_error(Path::new("/tmp/x/test_file.0"), &e, 3 << 20, true);
        // No space is the filesystem's refusal; any other write error is a failed write.
        assert_eq!(full.kind, ErrorKind::Environment);
        let m = full.message;
        assert!(m.starts_with("no space left on device"), "{m}");
        assert!(m.contains("/tmp/x/test_file.0"), "{m}");
        assert!(m.contains(&Bytes(3 << 20).to_string()), "{m}");
        assert!(m.contains("partial file was removed"), "{m}");
        let e = std::io::Error::from_raw_os_error(libc::EIO);
        let eio = write_error(Path::new("/tmp/x/f"), &e, 1, false);
        assert_eq!(eio.kind, ErrorKind::Failed);
        let m = eio.message;
        assert!(m.contains("cannot write /tmp/x/f"), "{m}");
    }
}
