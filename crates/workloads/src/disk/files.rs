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

use hostbench_core::host::HostInfo;
use hostbench_core::result::{Warning, WarningKind};
use hostbench_core::units::Bytes;
use hostbench_core::workload::WorkloadError;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Prefix of files and directories hostbench names itself (fio-class scratch files,
/// smallfiles trees).
pub const PREFIX: &str = "hostbench-";

/// Alignment of [`AlignedBuf`]: covers 512-byte and 4 KiB logical blocks and the page size.
pub const DIRECT_ALIGN: usize = 4096;

fn err(msg: String) -> WorkloadError {
    WorkloadError(msg)
}

/// `dir` as given, checked to exist and be a directory.
pub fn check_dir(dir: &Path) -> Result<(), WorkloadError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(err(format!(
            "{} is not a directory: give a directory to put the test files in",
            dir.display()
        ))),
        Err(e) => Err(err(format!(
            "directory {} cannot be used ({e}): create it first, or give an existing one",
            dir.display()
        ))),
    }
}

/// Free and total space of the filesystem holding a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// Bytes an unprivileged user may still write (`f_bavail · f_frsize`).
    pub free_bytes: u64,
    /// Size of the filesystem (`f_blocks · f_frsize`).
    pub total_bytes: u64,
}

fn cpath(p: &Path) -> Result<CString, WorkloadError> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| err(format!("path {} contains a NUL byte", p.display())))
}

/// `statvfs(2)` of `dir`.
pub fn space(dir: &Path) -> Result<Space, WorkloadError> {
    let c = cpath(dir)?;
    // SAFETY: statvfs is plain old data; all-zero is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a struct to fill.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(err(format!(
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
    })
}

/// Space left free after any layout: 2 % of the filesystem, at least 64 MiB and at most
/// 1 GiB, so a benchmark never brings a machine to a full disk (logs, databases, the
/// results store live there too).
pub fn margin(total_bytes: u64) -> u64 {
    (total_bytes / 50).clamp(64 << 20, 1 << 30)
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
    if s.total_bytes == 0 {
        return Ok(());
    }
    let keep = margin(s.total_bytes);
    if need_bytes.saturating_add(keep) > s.free_bytes {
        return Err(err(format!(
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

fn shown_dir(dir: &Path) -> String {
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

/// How to open a test file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenOpts {
    /// Read access.
    pub read: bool,
    /// Write access.
    pub write: bool,
    /// Create it if missing.
    pub create: bool,
    /// Create it, failing if it exists (`O_EXCL`).
    pub create_new: bool,
    /// Truncate to 0.
    pub truncate: bool,
    /// `O_DIRECT`.
    pub direct: bool,
    /// `O_SYNC`.
    pub sync: bool,
    /// `O_DSYNC`.
    pub dsync: bool,
    /// Write a block device even while it is mounted or in use (fio's
    /// `allow_mounted_write=1`); see [`check_device_write`].
    pub allow_mounted_write: bool,
}

impl OpenOpts {
    /// Extra `open(2)` flags (`O_DIRECT | O_SYNC | O_DSYNC` as asked).
    pub fn extra_flags(&self) -> i32 {
        let mut f = 0;
        if self.direct {
            f |= libc::O_DIRECT;
        }
        if self.sync {
            f |= libc::O_SYNC;
        }
        if self.dsync {
            f |= libc::O_DSYNC;
        }
        f
    }
}

/// Opens `path` (mode 0600 when created) without following a symlink at its name
/// (`O_NOFOLLOW`: a planted link is an error naming it, [`symlink_refused`]). Opened for
/// writing, a block device in use is refused ([`check_device_write`]) unless
/// `allow_mounted_write`. `EINVAL` with `O_DIRECT` becomes a message naming the filesystem
/// that refused it and what to do instead.
pub fn open(path: &Path, o: &OpenOpts) -> Result<File, WorkloadError> {
    let f = std::fs::OpenOptions::new()
        .read(o.read)
        .write(o.write)
        .create(o.create && !o.create_new)
        .create_new(o.create_new)
        .truncate(o.truncate)
        .mode(0o600)
        .custom_flags(o.extra_flags() | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| open_error(path, o.direct, &e))?;
    if o.write {
        use std::os::unix::fs::FileTypeExt;
        if let Ok(md) = f.metadata()
            && md.file_type().is_block_device()
        {
            check_rdev_write(
                path,
                md.rdev(),
                o.allow_mounted_write,
                "opening for writing",
                Some("allow_mounted_write=1"),
            )?;
        }
    }
    Ok(f)
}

/// The error for a failed open or I/O of `path`: with direct I/O and `EINVAL`, the
/// filesystem-named O_DIRECT message; otherwise what failed and the OS reason.
pub fn open_error(path: &Path, direct: bool, e: &std::io::Error) -> WorkloadError {
    if e.raw_os_error() == Some(libc::ELOOP)
        && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
    {
        return symlink_refused(path);
    }
    if direct && e.raw_os_error() == Some(libc::EINVAL) {
        let fs = fs_type(path)
            .or_else(|| path.parent().and_then(fs_type))
            .map(FsType::label);
        return direct_refused(path, fs.as_deref());
    }
    err(format!("cannot open {}: {e}", path.display()))
}

/// `M:m` of a device number, as /proc and /sys spell it.
fn dev_str(rdev: u64) -> String {
    format!("{}:{}", libc::major(rdev), libc::minor(rdev))
}

/// A device number from sysfs's `M:m`.
fn parse_dev(s: &str) -> Option<u64> {
    let (a, b) = s.trim().split_once(':')?;
    Some(libc::makedev(a.parse().ok()?, b.parse().ok()?))
}

/// The block device number a path names, following symlinks (`None` for anything else).
fn block_rdev(path: &Path) -> Option<u64> {
    use std::os::unix::fs::FileTypeExt;
    let md = std::fs::metadata(path).ok()?;
    md.file_type().is_block_device().then(|| md.rdev())
}

/// The mounts in `mountinfo` (the text of /proc/self/mountinfo) whose filesystem lives on
/// one of `devs` (name, number): matched by the device number the kernel shows, or by the
/// mount's source when that is a device node (btrfs shows an anonymous number). Each as
/// `"/dev/x mounted at /mnt (ext4)"`.
pub fn mounts_on(
    mountinfo: &str,
    devs: &[(String, u64)],
    rdev_of: &dyn Fn(&Path) -> Option<u64>,
) -> Vec<String> {
    let mut out = Vec::new();
    for line in mountinfo.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let Some(sep) = f.iter().position(|w| *w == "-") else {
            continue;
        };
        if f.len() < 5 || f.len() < sep + 3 {
            continue;
        }
        let (num, mnt, fstype, source) = (f[2], f[4], f[sep + 1], f[sep + 2]);
        let source = hostbench_core::input::unescape_octal(source);
        let by_num = parse_dev(num);
        let by_src = source
            .starts_with('/')
            .then(|| rdev_of(Path::new(&source)))
            .flatten();
        for (name, d) in devs {
            if by_num == Some(*d) || by_src == Some(*d) {
                let s = format!(
                    "{name} is mounted at {} ({fstype})",
                    hostbench_core::input::unescape_octal(mnt)
                );
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
    }
    out
}

/// What uses the block device `rdev` (named `path`) so that writing it would destroy data:
/// a filesystem on it or on one of its partitions is mounted, it (or a partition) is active
/// swap, or an md/dm/LVM device is built on it (its `holders` in sysfs). Empty when free.
pub fn device_users(path: &Path, rdev: u64) -> Vec<String> {
    let sys = PathBuf::from(format!("/sys/dev/block/{}", dev_str(rdev)));
    let mut devs = vec![(path.display().to_string(), rdev)];
    // Partitions are the subdirectories holding a `partition` file.
    if let Ok(rd) = std::fs::read_dir(&sys) {
        for e in rd.flatten() {
            let p = e.path();
            if p.join("partition").exists()
                && let Some(d) = std::fs::read_to_string(p.join("dev"))
                    .ok()
                    .and_then(|s| parse_dev(&s))
            {
                devs.push((
                    format!("its partition {}", e.file_name().to_string_lossy()),
                    d,
                ));
            }
        }
    }
    let mut users = match std::fs::read_to_string("/proc/self/mountinfo") {
        Ok(t) => mounts_on(&t, &devs, &block_rdev),
        Err(e) => vec![format!(
            "its mounts cannot be checked (/proc/self/mountinfo: {e})"
        )],
    };
    if let Ok(t) = std::fs::read_to_string("/proc/swaps") {
        for line in t.lines().skip(1) {
            let Some(first) = line.split_whitespace().next() else {
                continue;
            };
            let swap = hostbench_core::input::unescape_octal(first);
            if let Some(d) = block_rdev(Path::new(&swap))
                && let Some((name, _)) = devs.iter().find(|(_, x)| *x == d)
            {
                users.push(format!("{name} is active swap ({swap})"));
            }
        }
    }
    for (name, d) in &devs {
        let holders = PathBuf::from(format!("/sys/dev/block/{}/holders", dev_str(*d)));
        if let Ok(rd) = std::fs::read_dir(&holders) {
            for e in rd.flatten() {
                let h = e.file_name().to_string_lossy().into_owned();
                let label = std::fs::read_to_string(format!("/sys/block/{h}/dm/name"))
                    .ok()
                    .map(|n| n.trim().to_string())
                    .filter(|n| !n.is_empty())
                    .map_or(h.clone(), |n| format!("{h} ({n})"));
                users.push(format!(
                    "{name} is a member of {label} (an md/dm/LVM device built on it)"
                ));
            }
        }
    }
    users
}

/// Refuses to write (or trim) the block device `path` while it is in use
/// ([`device_users`]), as fio does for a mounted device, unless `allow` (fio's
/// `allow_mounted_write=1`). `what` names the job or file in the message, `allow_hint`
/// says how to override (`None`: the family has no override). Anything but a block
/// device passes.
pub fn check_device_write(
    path: &Path,
    allow: bool,
    what: &str,
    allow_hint: Option<&str>,
) -> Result<(), WorkloadError> {
    let Some(rdev) = block_rdev(path) else {
        return Ok(());
    };
    check_rdev_write(path, rdev, allow, what, allow_hint)
}

fn check_rdev_write(
    path: &Path,
    rdev: u64,
    allow: bool,
    what: &str,
    allow_hint: Option<&str>,
) -> Result<(), WorkloadError> {
    if allow {
        return Ok(());
    }
    let users = device_users(path, rdev);
    if users.is_empty() {
        return Ok(());
    }
    let how = match allow_hint {
        Some(h) => format!(", or add {h} if you really mean to overwrite it"),
        None => String::new(),
    };
    Err(err(format!(
        "{what}: refusing to write to block device {}: {}; writing would destroy the data \
         there. Unmount it (stop the swap, the md/dm/LVM device) first{how}",
        path.display(),
        users.join("; ")
    )))
}

/// The error for a symlink found where hostbench creates, writes or deletes a test file.
pub fn symlink_refused(path: &Path) -> WorkloadError {
    let to = std::fs::read_link(path)
        .map(|t| format!(" (to {})", t.display()))
        .unwrap_or_default();
    err(format!(
        "{} is a symbolic link{to}: hostbench never creates, writes or deletes a test file \
         through a symlink; remove the link, or give the real path",
        path.display()
    ))
}

/// `lstat` of a test file's name: `None` when nothing is there, an error naming it when
/// a symlink is.
pub fn lstat_no_symlink(path: &Path) -> Result<Option<std::fs::Metadata>, WorkloadError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(symlink_refused(path)),
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(err(format!("cannot stat {}: {e}", path.display()))),
    }
}

/// Eight random bytes as hex, for names a planted file cannot anticipate.
pub fn unpredictable() -> String {
    let mut b = [0u8; 8];
    // SAFETY: writes at most 8 bytes into b.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != 8 {
        // Fall back to the clock and the pid: still not guessable ahead of time.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        b = (t ^ (u64::from(std::process::id()) << 32)).to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Creates a fresh file next to `final_path` under an unpredictable hidden name with
/// `O_CREAT|O_EXCL|O_NOFOLLOW` (mode `mode`): a symlink planted anywhere cannot redirect
/// it. Returns the file and its path; rename it into place when written.
pub fn create_temp_beside(final_path: &Path, mode: u32) -> std::io::Result<(File, PathBuf)> {
    let dir = final_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let base = final_path
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy().into_owned());
    loop {
        let tmp = dir.join(format!(".{base}.{}.hostbench-tmp", unpredictable()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
        {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The error for a failed write of `path` while laying out `need` bytes. A full disk
/// (`ENOSPC`, or `EDQUOT` for a quota) says "no space left on device" with the path and
/// what was needed, and whether the partial file was removed (`removed`); anything else
/// names the path and the OS reason.
pub fn write_error(path: &Path, e: &std::io::Error, need: u64, removed: bool) -> WorkloadError {
    let full = matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT));
    if !full {
        return err(format!("cannot write {}: {e}", path.display()));
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
    err(format!(
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
        return Err(err(format!(
            "{what} {path:?} is an absolute path: files of a suite entry stay in its scratch \
             directory; give a name relative to it (or run the workload on its own command \
             line to use that path)"
        )));
    }
    if p.components().any(|c| c == std::path::Component::ParentDir) {
        return Err(err(format!(
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

/// The message when a filesystem refuses O_DIRECT.
pub fn direct_refused(path: &Path, fs: Option<&str>) -> WorkloadError {
    let fs = fs.map_or("this filesystem".to_string(), |f| {
        format!("the {f} filesystem")
    });
    err(format!(
        "{fs} holding {} does not support direct I/O (O_DIRECT: Invalid argument); \
         drop the direct flag to measure through the page cache, or put the files on a \
         filesystem that supports it (ext4, xfs, btrfs)",
        path.display()
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

/// A heap buffer aligned for O_DIRECT ([`DIRECT_ALIGN`]), zero-filled.
pub struct AlignedBuf {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    layout: std::alloc::Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only hands out &[u8].
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// `len` zero bytes aligned to [`DIRECT_ALIGN`] (at least one page is allocated); aborts
    /// when memory runs out, as a `Vec` does.
    pub fn new(len: usize) -> AlignedBuf {
        let size = len.max(1).next_multiple_of(DIRECT_ALIGN);
        Self::try_new(len).unwrap_or_else(|| {
            std::alloc::handle_alloc_error(
                std::alloc::Layout::from_size_align(size, DIRECT_ALIGN)
                    .unwrap_or(std::alloc::Layout::new::<u8>()),
            )
        })
    }

    /// [`new`](Self::new), or `None` when the memory cannot be had (or `len` is absurd).
    pub fn try_new(len: usize) -> Option<AlignedBuf> {
        let size = len.max(1).checked_next_multiple_of(DIRECT_ALIGN)?;
        let layout = std::alloc::Layout::from_size_align(size, DIRECT_ALIGN).ok()?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = std::ptr::NonNull::new(p)?;
        Some(AlignedBuf { ptr, len, layout })
    }

    /// Fills the buffer with bytes that do not compress or dedupe trivially.
    pub fn fill_pattern(&mut self, seed: u64) {
        let mut x = seed | 1;
        for chunk in self.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let b = x.to_le_bytes();
            chunk.copy_from_slice(&b[..chunk.len()]);
        }
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr points to at least len initialised bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// The hidden name a file is written under until it is complete: `.NAME.hostbench-part`.
pub fn part_name(name: &str) -> String {
    format!(".{name}.hostbench-part")
}

/// Syncs the part file and renames it to its final name: the final name never holds a
/// partly written file.
pub fn commit_part(dir: &Path, name: &str, f: &File) -> Result<(), WorkloadError> {
    f.sync_all().map_err(|e| {
        err(format!(
            "cannot sync {}: {e}",
            dir.join(part_name(name)).display()
        ))
    })?;
    std::fs::rename(dir.join(part_name(name)), dir.join(name)).map_err(|e| {
        err(format!(
            "cannot rename {} to {name}: {e}",
            dir.join(part_name(name)).display()
        ))
    })
}

/// Whether a layout is finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// A prepare is running or was interrupted: nothing in the layout is to be trusted.
    Preparing,
    /// Every file was written in full and synced.
    Complete,
}

/// One file of a manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// `st_dev` when recorded.
    pub dev: u64,
    /// `st_ino` when recorded.
    pub ino: u64,
    /// Birth time (statx `btime`, ns since the epoch; 0 where the filesystem keeps none):
    /// inode numbers are reused after a delete, birth times are not.
    pub born_ns: u128,
    /// True when hostbench created the file; false when it found it and reused it (then
    /// cleanup leaves it alone).
    pub created: bool,
    /// `st_ctime` in ns when recorded (0: unknown, a manifest from an older hostbench). A
    /// rename or any write changes it.
    pub ctime_ns: i128,
    /// Size in bytes when recorded.
    pub size: u64,
    /// The random token hostbench put in the file's `user.hostbench.owner` extended
    /// attribute when it created it (0: none, the filesystem keeps no extended attributes).
    pub token: u64,
}

/// What a manifest can prove about a file at a recorded name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ownership {
    /// The very file hostbench created: same device and inode, and the same birth time or
    /// the same owner token, or (with neither) unchanged ctime and size since recorded.
    Ours,
    /// Not recorded as created, gone, not a regular file, or provably another file.
    NotOurs,
    /// Same device and inode, but the filesystem keeps neither birth times nor extended
    /// attributes and the file changed since it was recorded: it may be another file that
    /// reused the inode number. Never deleted.
    Unproven,
}

/// What [`Manifest::remove_owned`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removal {
    /// Names removed.
    pub removed: Vec<String>,
    /// Names left alone: hostbench did not create them (any more).
    pub kept: Vec<String>,
    /// Names left alone because hostbench cannot prove the file there is the one it
    /// created ([`Ownership::Unproven`]).
    pub unproven: Vec<String>,
}

/// The record of what hostbench laid out in a directory: a hidden sidecar file
/// `.hostbench-<tag>.manifest` (one line per file:
/// `file NAME DEV INO BIRTH_NS created|found CTIME_NS SIZE TOKEN`).
#[derive(Debug, Clone)]
pub struct Manifest {
    dir: PathBuf,
    tag: String,
    /// Whether the layout is finished.
    pub state: State,
    /// Other facts of the layout (`file_size 2097152`), as the workload recorded them.
    pub facts: BTreeMap<String, String>,
    entries: BTreeMap<String, Entry>,
}

const MAGIC: &str = "hostbench manifest v1";

/// The extended attribute holding a created file's owner token.
const OWNER_XATTR: &str = "user.hostbench.owner";

/// Birth time in ns (0 where the filesystem keeps none).
fn born_ns(md: &std::fs::Metadata) -> u128 {
    md.created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

fn ctime_ns(md: &std::fs::Metadata) -> i128 {
    i128::from(md.ctime()) * 1_000_000_000 + i128::from(md.ctime_nsec())
}

/// The owner token in `path`'s extended attribute, if any (never follows a symlink).
fn read_token(path: &Path) -> Option<u64> {
    let c = cpath(path).ok()?;
    let name = CString::new(OWNER_XATTR).ok()?;
    let mut buf = [0u8; 32];
    // SAFETY: NUL-terminated strings and a buffer of the given length.
    let n = unsafe {
        libc::lgetxattr(
            c.as_ptr(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n <= 0 {
        return None;
    }
    let t = std::str::from_utf8(&buf[..n as usize]).ok()?;
    u64::from_str_radix(t, 16).ok().filter(|&t| t != 0)
}

/// Puts a fresh owner token on `path`; 0 when the filesystem keeps no extended attributes.
fn write_token(path: &Path) -> u64 {
    let token = u64::from_str_radix(&unpredictable(), 16).unwrap_or(0) | 1;
    let (Ok(c), Ok(name)) = (cpath(path), CString::new(OWNER_XATTR)) else {
        return 0;
    };
    let v = format!("{token:016x}");
    // SAFETY: NUL-terminated strings and a value of the given length.
    let r = unsafe { libc::lsetxattr(c.as_ptr(), name.as_ptr(), v.as_ptr().cast(), v.len(), 0) };
    if r == 0 { token } else { 0 }
}

/// A name a manifest may hold: one plain file name in its directory.
fn plain_name(n: &str) -> bool {
    !n.is_empty() && n != "." && n != ".." && !n.contains('/')
}

impl Manifest {
    /// The sidecar's file name for `tag`.
    pub fn file_name(tag: &str) -> String {
        format!(".{PREFIX}{tag}.manifest")
    }

    /// Path of the sidecar.
    pub fn path(&self) -> PathBuf {
        self.dir.join(Self::file_name(&self.tag))
    }

    /// An empty manifest (state Preparing), not yet saved.
    pub fn new(dir: &Path, tag: &str) -> Manifest {
        Manifest {
            dir: dir.to_path_buf(),
            tag: tag.to_string(),
            state: State::Preparing,
            facts: BTreeMap::new(),
            entries: BTreeMap::new(),
        }
    }

    /// The manifest in `dir`, if there is one. A symlink at its name is refused, and so is
    /// a line naming anything but a plain file of the directory.
    pub fn load(dir: &Path, tag: &str) -> Result<Option<Manifest>, WorkloadError> {
        let mut m = Manifest::new(dir, tag);
        let path = m.path();
        let read = || -> std::io::Result<String> {
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)?;
            let mut t = String::new();
            std::io::Read::read_to_string(&mut f, &mut t)?;
            Ok(t)
        };
        let text = match read() {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(symlink_refused(&path)),
            Err(e) => return Err(err(format!("cannot read {}: {e}", path.display()))),
        };
        let bad = |what: &str| {
            err(format!(
                "{} is damaged ({what}); remove it and the test files by hand, then prepare again",
                path.display()
            ))
        };
        let mut lines = text.lines();
        if lines.next() != Some(MAGIC) {
            return Err(bad("unknown first line"));
        }
        for l in lines {
            let w: Vec<&str> = l.split(' ').collect();
            let (name, dev, ino, born, how, rest) = match w.as_slice() {
                ["state", "preparing"] => {
                    m.state = State::Preparing;
                    continue;
                }
                ["state", "complete"] => {
                    m.state = State::Complete;
                    continue;
                }
                ["fact", k, v] => {
                    m.facts.insert(k.to_string(), v.to_string());
                    continue;
                }
                ["file", name, dev, ino, born, how] => (*name, *dev, *ino, *born, *how, None),
                ["file", name, dev, ino, born, how, ct, sz, tok] => {
                    (*name, *dev, *ino, *born, *how, Some((*ct, *sz, *tok)))
                }
                [""] => continue,
                _ => return Err(bad("unknown line")),
            };
            if !plain_name(name) {
                return Err(bad(&format!(
                    "'{name}' is not a file name of the directory"
                )));
            }
            let (ctime_ns, size, token) = match rest {
                None => (0, 0, 0),
                Some((ct, sz, tok)) => (
                    ct.parse().map_err(|_| bad("ctime"))?,
                    sz.parse().map_err(|_| bad("size"))?,
                    u64::from_str_radix(tok, 16).map_err(|_| bad("token"))?,
                ),
            };
            let e = Entry {
                dev: dev.parse().map_err(|_| bad("device number"))?,
                ino: ino.parse().map_err(|_| bad("inode number"))?,
                born_ns: born.parse().map_err(|_| bad("birth time"))?,
                created: match how {
                    "created" => true,
                    "found" => false,
                    _ => return Err(bad("file origin")),
                },
                ctime_ns,
                size,
                token,
            };
            m.entries.insert(name.to_string(), e);
        }
        Ok(Some(m))
    }

    /// Writes the manifest atomically: a fresh file under an unpredictable name
    /// ([`create_temp_beside`]: `O_CREAT|O_EXCL|O_NOFOLLOW`), fsync, rename over the
    /// manifest's name (which replaces whatever is there, a symlink included, and never
    /// writes through it).
    pub fn save(&self) -> Result<(), WorkloadError> {
        let mut s = format!("{MAGIC}\n");
        s.push_str(match self.state {
            State::Preparing => "state preparing\n",
            State::Complete => "state complete\n",
        });
        for (k, v) in &self.facts {
            s.push_str(&format!("fact {k} {v}\n"));
        }
        for (n, e) in &self.entries {
            let how = if e.created { "created" } else { "found" };
            s.push_str(&format!(
                "file {n} {} {} {} {how} {} {} {:x}\n",
                e.dev, e.ino, e.born_ns, e.ctime_ns, e.size, e.token
            ));
        }
        let path = self.path();
        let mut tmp = None;
        let mut write = || -> std::io::Result<()> {
            let (mut f, t) = create_temp_beside(&path, 0o600)?;
            tmp = Some(t.clone());
            f.write_all(s.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&t, &path)
        };
        let r = write();
        if r.is_err()
            && let Some(t) = &tmp
        {
            let _ = std::fs::remove_file(t);
        }
        r.map_err(|e| err(format!("cannot write {}: {e}", path.display())))
    }

    /// Records that `name` (which exists now) was created by hostbench (`created`) or found
    /// and reused. A file already recorded as created keeps that origin (and its token)
    /// while it is provably the same file. A file hostbench created gets a random owner
    /// token in an extended attribute where the filesystem keeps them; a found file is
    /// never touched.
    pub fn record(&mut self, name: &str, created: bool) -> Result<(), WorkloadError> {
        let p = self.dir.join(name);
        let stat = |p: &Path| -> Result<std::fs::Metadata, WorkloadError> {
            lstat_no_symlink(p)?.ok_or_else(|| {
                err(format!(
                    "cannot stat {}: No such file or directory",
                    p.display()
                ))
            })
        };
        stat(&p)?;
        let prev = self.entries.get(name).copied();
        let same = prev.is_some() && self.ownership(name) == Ownership::Ours;
        let created = created || same;
        let token = match prev {
            Some(e) if same && e.token != 0 => e.token,
            _ if created => write_token(&p),
            _ => 0,
        };
        // Setting the attribute changes ctime: stat after it.
        let md = stat(&p)?;
        self.entries.insert(
            name.to_string(),
            Entry {
                dev: md.dev(),
                ino: md.ino(),
                born_ns: born_ns(&md),
                created,
                ctime_ns: ctime_ns(&md),
                size: md.len(),
                token,
            },
        );
        Ok(())
    }

    /// The entry for `name`.
    pub fn entry(&self, name: &str) -> Option<Entry> {
        self.entries.get(name).copied()
    }

    /// Forgets `name`.
    pub fn forget(&mut self, name: &str) {
        self.entries.remove(name);
    }

    /// Names recorded, in order.
    pub fn names(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
    }

    /// What the manifest proves about the file now at `name` ([`Ownership`]). Device and
    /// inode must match, and then the birth time (where the filesystem keeps one) and the
    /// owner token (where hostbench could set one); with neither, only an unchanged ctime
    /// (a rename or write updates it) and size prove it.
    pub fn ownership(&self, name: &str) -> Ownership {
        let Some(e) = self.entries.get(name).filter(|e| e.created) else {
            return Ownership::NotOurs;
        };
        let p = self.dir.join(name);
        let md = match std::fs::symlink_metadata(&p) {
            Ok(md) if md.is_file() => md,
            _ => return Ownership::NotOurs,
        };
        decide_ownership(e, &md, || read_token(&p))
    }

    /// True when `name` exists, is a regular file hostbench created, and is provably still
    /// the same file ([`Ownership::Ours`]).
    pub fn owns(&self, name: &str) -> bool {
        self.ownership(name) == Ownership::Ours
    }

    /// Refuses a layout that is not complete, saying how to fix it (`prepare_cmd`).
    pub fn require_complete(&self, prepare_cmd: &str) -> Result<(), WorkloadError> {
        match self.state {
            State::Complete => Ok(()),
            State::Preparing => Err(err(format!(
                "the test files in {} are from a prepare that did not finish (interrupted?): \
                 run `{prepare_cmd}` again before running",
                shown_dir(&self.dir)
            ))),
        }
    }

    /// Removes every file this manifest owns ([`Manifest::owns`]) among `names` (all recorded
    /// names when `None`), and the manifest itself once nothing is left in it. Says what it
    /// removed, what it left alone as not ours, and what it left alone because ownership
    /// could not be proven.
    pub fn remove_owned(&mut self, names: Option<&[String]>) -> Result<Removal, WorkloadError> {
        let list: Vec<String> = match names {
            Some(n) => n.to_vec(),
            None => self.names(),
        };
        let mut out = Removal::default();
        for n in list {
            if !self.entries.contains_key(&n) {
                continue;
            }
            let p = self.dir.join(&n);
            match self.ownership(&n) {
                Ownership::Ours => match std::fs::remove_file(&p) {
                    Ok(()) => out.removed.push(n.clone()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(err(format!("cannot remove {}: {e}", p.display()))),
                },
                Ownership::Unproven => out.unproven.push(n.clone()),
                Ownership::NotOurs => {
                    if std::fs::symlink_metadata(&p).is_ok() {
                        out.kept.push(n.clone());
                    }
                }
            }
            self.entries.remove(&n);
        }
        if self.entries.is_empty() {
            match std::fs::remove_file(self.path()) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(err(format!("cannot remove {}: {e}", self.path().display())));
                }
            }
        } else {
            self.save()?;
        }
        Ok(out)
    }
}

/// The decision of [`Manifest::ownership`] for a regular file `md` at a name recorded as
/// created (`token` reads the file's owner token; pure otherwise, for tests).
pub fn decide_ownership(
    e: &Entry,
    md: &std::fs::Metadata,
    token: impl FnOnce() -> Option<u64>,
) -> Ownership {
    if (md.dev(), md.ino()) != (e.dev, e.ino) {
        return Ownership::NotOurs;
    }
    if e.born_ns != 0 && born_ns(md) != e.born_ns {
        return Ownership::NotOurs;
    }
    if e.token != 0 {
        return if token() == Some(e.token) {
            Ownership::Ours
        } else {
            Ownership::NotOurs
        };
    }
    if e.born_ns != 0 {
        return Ownership::Ours;
    }
    if e.ctime_ns != 0 && ctime_ns(md) == e.ctime_ns && md.len() == e.size {
        return Ownership::Ours;
    }
    Ownership::Unproven
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "hostbench-files-test-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn space_refusal_names_dir_and_sizes() {
        let s = Space {
            free_bytes: 10 << 30,
            total_bytes: 100 << 30,
        };
        let d = Path::new("/data/bench");
        assert!(check_space(d, s, 8 << 30, "x").is_ok());
        let e = check_space(d, s, 256 << 30, "--file-total-size=256G")
            .unwrap_err()
            .0;
        assert!(e.contains("/data/bench"), "{e}");
        assert!(e.contains("--file-total-size=256G"), "{e}");
        assert!(e.contains(&Bytes(256 << 30).to_string()), "{e}");
        assert!(e.contains(&Bytes(10 << 30).to_string()), "{e}");
        // The margin counts: 9.5 GiB of 10 GiB free with a 1 GiB margin does not fit.
        assert!(check_space(d, s, (19 << 30) / 2, "x").is_err());
        assert_eq!(margin(100 << 30), 1 << 30);
        assert_eq!(margin(1 << 30), 64 << 20);
        // ramfs reports 0 blocks and 0 free: no size, so no refusal (and no warning).
        let none = Space {
            free_bytes: 0,
            total_bytes: 0,
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
        };
        assert_eq!(space_warning(d, full).unwrap().kind, WarningKind::DiskSpace);
        let roomy = Space {
            free_bytes: 50,
            total_bytes: 100,
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
    fn direct_refusal_names_filesystem() {
        let e = direct_refused(Path::new("/mnt/x/test_file.0"), Some("fuse")).0;
        assert!(e.contains("fuse filesystem"), "{e}");
        assert!(e.contains("/mnt/x/test_file.0"), "{e}");
        let einval = std::io::Error::from_raw_os_error(libc::EINVAL);
        let e = open_error(Path::new("/dev/shm/nothing"), true, &einval).0;
        assert!(e.contains("tmpfs"), "{e}");
        let e = open_error(Path::new("/dev/shm/nothing"), false, &einval).0;
        assert!(!e.contains("direct I/O"), "{e}");
    }

    #[test]
    fn aligned_buffers() {
        for len in [1usize, 512, 4096, 16384, 1 << 20] {
            let mut b = AlignedBuf::new(len);
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % DIRECT_ALIGN, 0);
            assert!(b.iter().all(|&x| x == 0));
            b.fill_pattern(7);
            if len >= 16 {
                assert!(b.iter().any(|&x| x != 0));
            }
        }
    }

    #[test]
    fn manifest_owns_only_what_it_created() {
        let d = tmpdir("manifest");
        std::fs::write(d.join("ours"), b"x").unwrap();
        std::fs::write(d.join("found"), b"x").unwrap();
        std::fs::write(d.join("other.txt"), b"x").unwrap();
        let mut m = Manifest::new(&d, "t");
        m.record("ours", true).unwrap();
        m.record("found", false).unwrap();
        m.record("replaced", true).unwrap_err();
        std::fs::write(d.join("replaced"), b"x").unwrap();
        m.record("replaced", true).unwrap();
        m.save().unwrap();
        // Someone replaces a file of ours: a new inode under the same name.
        std::fs::remove_file(d.join("replaced")).unwrap();
        std::fs::write(d.join("other-tmp"), b"yy").unwrap();
        std::fs::rename(d.join("other-tmp"), d.join("replaced")).unwrap();

        let mut m = Manifest::load(&d, "t").unwrap().unwrap();
        assert_eq!(m.state, State::Preparing);
        assert!(m.require_complete("prep").unwrap_err().0.contains("prep"));
        assert!(m.owns("ours"));
        assert!(!m.owns("found"));
        assert!(!m.owns("replaced"));
        assert!(!m.owns("other.txt"));
        let r = m.remove_owned(None).unwrap();
        assert_eq!(r.removed, vec!["ours".to_string()]);
        assert_eq!(r.kept, vec!["found".to_string(), "replaced".to_string()]);
        assert!(r.unproven.is_empty());
        assert!(!d.join("ours").exists());
        for f in ["found", "replaced", "other.txt"] {
            assert!(d.join(f).exists(), "{f} must survive");
        }
        assert!(!d.join(Manifest::file_name("t")).exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn manifest_round_trip_and_damage() {
        let d = tmpdir("roundtrip");
        std::fs::write(d.join("a"), b"x").unwrap();
        let mut m = Manifest::new(&d, "t");
        m.facts.insert("file_size".into(), "4096".into());
        m.record("a", true).unwrap();
        m.state = State::Complete;
        m.save().unwrap();
        let l = Manifest::load(&d, "t").unwrap().unwrap();
        assert_eq!(l.state, State::Complete);
        assert_eq!(l.facts.get("file_size").map(String::as_str), Some("4096"));
        assert!(l.entry("a").unwrap().created);
        // Re-recording a created file as found keeps it ours.
        let mut l = l;
        l.record("a", false).unwrap();
        assert!(l.owns("a"));
        std::fs::write(d.join(Manifest::file_name("t")), "garbage\n").unwrap();
        assert!(Manifest::load(&d, "t").unwrap_err().0.contains("damaged"));
        assert!(Manifest::load(&d, "absent").unwrap().is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn part_files_are_renamed_into_place() {
        let d = tmpdir("part");
        let f = open(
            &d.join(part_name("f")),
            &OpenOpts {
                write: true,
                create_new: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(!d.join("f").exists());
        commit_part(&d, "f", &f).unwrap();
        assert!(d.join("f").exists());
        assert!(!d.join(part_name("f")).exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn mounts_on_matches_devices_partitions_and_sources() {
        let info = "\
22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
30 22 0:45 / /srv\\040data rw - btrfs /dev/fake-btrfs rw
31 22 7:3 / /mnt/other rw - xfs /dev/loop3 rw
32 22 0:50 / /proc rw - proc proc rw
";
        let sda = libc::makedev(8, 0);
        let sda1 = libc::makedev(8, 1);
        let btr = libc::makedev(8, 16);
        let devs = vec![
            ("/dev/sda".to_string(), sda),
            ("its partition sda1".to_string(), sda1),
        ];
        let by_src = |p: &Path| (p == Path::new("/dev/fake-btrfs")).then_some(btr);
        let m = mounts_on(info, &devs, &by_src);
        assert_eq!(
            m,
            vec!["its partition sda1 is mounted at / (ext4)".to_string()]
        );
        // btrfs shows an anonymous device number: matched through its source device.
        let m = mounts_on(info, &[("/dev/sdb".to_string(), btr)], &by_src);
        assert_eq!(
            m,
            vec!["/dev/sdb is mounted at /srv data (btrfs)".to_string()]
        );
        assert!(mounts_on(info, &[("x".into(), libc::makedev(9, 9))], &by_src).is_empty());
        // Malformed lines are skipped, not a panic.
        assert!(mounts_on("garbage\n1 2\n- -\n", &devs, &by_src).is_empty());
    }

    #[test]
    fn files_that_are_not_block_devices_pass_the_in_use_check() {
        let d = tmpdir("notdev");
        std::fs::write(d.join("f"), b"x").unwrap();
        assert!(check_device_write(&d.join("f"), false, "job", None).is_ok());
        assert!(check_device_write(&d.join("missing"), false, "job", None).is_ok());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn open_refuses_a_symlink_at_the_name() {
        let d = tmpdir("nofollow");
        std::fs::write(d.join("victim"), b"keep").unwrap();
        std::os::unix::fs::symlink(d.join("victim"), d.join("link")).unwrap();
        std::os::unix::fs::symlink(d.join("nowhere"), d.join("dangling")).unwrap();
        for (name, o) in [
            (
                "link",
                OpenOpts {
                    write: true,
                    ..Default::default()
                },
            ),
            (
                "link",
                OpenOpts {
                    read: true,
                    ..Default::default()
                },
            ),
            (
                "dangling",
                OpenOpts {
                    write: true,
                    create: true,
                    ..Default::default()
                },
            ),
        ] {
            let e = open(&d.join(name), &o).unwrap_err().0;
            assert!(e.contains("symbolic link") && e.contains(name), "{e}");
        }
        assert!(
            !d.join("nowhere").exists(),
            "a dangling link's target was created"
        );
        assert_eq!(std::fs::read(d.join("victim")).unwrap(), b"keep");
        assert!(lstat_no_symlink(&d.join("link")).is_err());
        assert!(lstat_no_symlink(&d.join("victim")).unwrap().is_some());
        assert!(lstat_no_symlink(&d.join("none")).unwrap().is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn temp_files_get_unpredictable_names_and_never_follow_links() {
        let d = tmpdir("tmpname");
        let (_, a) = create_temp_beside(&d.join("out.json"), 0o600).unwrap();
        let (_, b) = create_temp_beside(&d.join("out.json"), 0o600).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.parent(), Some(d.as_path()));
        assert_ne!(unpredictable(), unpredictable());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn ownership_without_birth_time_or_token_needs_an_unchanged_file() {
        let d = tmpdir("unproven");
        std::fs::write(d.join("a"), b"x").unwrap();
        let md = std::fs::symlink_metadata(d.join("a")).unwrap();
        // As a filesystem with neither birth times nor extended attributes records it.
        let e = Entry {
            dev: md.dev(),
            ino: md.ino(),
            born_ns: 0,
            created: true,
            ctime_ns: ctime_ns(&md),
            size: md.len(),
            token: 0,
        };
        assert_eq!(decide_ownership(&e, &md, || None), Ownership::Ours);
        // Changed since (a write, a rename over it): not provable, so kept.
        let changed = Entry {
            ctime_ns: e.ctime_ns - 1,
            ..e
        };
        assert_eq!(
            decide_ownership(&changed, &md, || None),
            Ownership::Unproven
        );
        let resized = Entry { size: 99, ..e };
        assert_eq!(
            decide_ownership(&resized, &md, || None),
            Ownership::Unproven
        );
        // An old manifest line (no ctime) proves nothing either.
        let old = Entry {
            ctime_ns: 0,
            size: 0,
            ..e
        };
        assert_eq!(decide_ownership(&old, &md, || None), Ownership::Unproven);
        // A token decides when there is one.
        let tok = Entry {
            token: 7,
            ctime_ns: 0,
            ..e
        };
        assert_eq!(decide_ownership(&tok, &md, || Some(7)), Ownership::Ours);
        assert_eq!(decide_ownership(&tok, &md, || Some(8)), Ownership::NotOurs);
        assert_eq!(decide_ownership(&tok, &md, || None), Ownership::NotOurs);
        // Another inode is never ours.
        let other = Entry {
            ino: e.ino + 1,
            ..e
        };
        assert_eq!(decide_ownership(&other, &md, || None), Ownership::NotOurs);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn manifest_names_stay_in_their_directory() {
        let d = tmpdir("names");
        for bad in ["../etc/passwd", "a/b", "..", "."] {
            std::fs::write(
                d.join(Manifest::file_name("t")),
                format!("{MAGIC}\nfile {bad} 1 2 0 created\n"),
            )
            .unwrap();
            let e = Manifest::load(&d, "t").unwrap_err().0;
            assert!(e.contains("damaged"), "{bad}: {e}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn manifests_of_an_older_hostbench_still_load() {
        let d = tmpdir("oldformat");
        std::fs::write(d.join("a"), b"x").unwrap();
        let md = std::fs::symlink_metadata(d.join("a")).unwrap();
        let born = born_ns(&md);
        std::fs::write(
            d.join(Manifest::file_name("t")),
            format!(
                "{MAGIC}\nstate complete\nfile a {} {} {born} created\n",
                md.dev(),
                md.ino()
            ),
        )
        .unwrap();
        let m = Manifest::load(&d, "t").unwrap().unwrap();
        let e = m.entry("a").unwrap();
        assert_eq!((e.ctime_ns, e.size, e.token), (0, 0, 0));
        // With a birth time it is still provably ours; without one, nothing proves it.
        let want = if born != 0 {
            Ownership::Ours
        } else {
            Ownership::Unproven
        };
        assert_eq!(m.ownership("a"), want);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_full_disk_is_named_as_such() {
        let e = std::io::Error::from_raw_os_error(libc::ENOSPC);
        let m = write_error(Path::new("/tmp/x/test_file.0"), &e, 3 << 20, true).0;
        assert!(m.starts_with("no space left on device"), "{m}");
        assert!(m.contains("/tmp/x/test_file.0"), "{m}");
        assert!(m.contains(&Bytes(3 << 20).to_string()), "{m}");
        assert!(m.contains("partial file was removed"), "{m}");
        let e = std::io::Error::from_raw_os_error(libc::EIO);
        let m = write_error(Path::new("/tmp/x/f"), &e, 1, false).0;
        assert!(m.contains("cannot write /tmp/x/f"), "{m}");
    }

    #[test]
    fn check_dir_refuses_missing_and_files() {
        assert!(
            check_dir(Path::new("/no/such"))
                .unwrap_err()
                .0
                .contains("/no/such")
        );
        assert!(
            check_dir(Path::new("/etc/hostname")).is_err() || !Path::new("/etc/hostname").exists()
        );
        assert!(check_dir(Path::new("/tmp")).is_ok());
    }
}
