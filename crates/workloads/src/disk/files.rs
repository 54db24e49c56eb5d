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

/// Opens `path` (mode 0600 when created). `EINVAL` with `O_DIRECT` becomes a message naming
/// the filesystem that refused it and what to do instead.
pub fn open(path: &Path, o: &OpenOpts) -> Result<File, WorkloadError> {
    std::fs::OpenOptions::new()
        .read(o.read)
        .write(o.write)
        .create(o.create && !o.create_new)
        .create_new(o.create_new)
        .truncate(o.truncate)
        .mode(0o600)
        .custom_flags(o.extra_flags())
        .open(path)
        .map_err(|e| open_error(path, o.direct, &e))
}

/// The error for a failed open or I/O of `path`: with direct I/O and `EINVAL`, the
/// filesystem-named O_DIRECT message; otherwise what failed and the OS reason.
pub fn open_error(path: &Path, direct: bool, e: &std::io::Error) -> WorkloadError {
    if direct && e.raw_os_error() == Some(libc::EINVAL) {
        let fs = fs_type(path)
            .or_else(|| path.parent().and_then(fs_type))
            .map(FsType::label);
        return direct_refused(path, fs.as_deref());
    }
    err(format!("cannot open {}: {e}", path.display()))
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
    /// `len` zero bytes aligned to [`DIRECT_ALIGN`] (at least one page is allocated).
    pub fn new(len: usize) -> AlignedBuf {
        let size = len.max(1).next_multiple_of(DIRECT_ALIGN);
        let layout = std::alloc::Layout::from_size_align(size, DIRECT_ALIGN)
            .expect("size rounded to the alignment fits a layout");
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr =
            std::ptr::NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, len, layout }
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
}

/// The record of what hostbench laid out in a directory: a hidden sidecar file
/// `.hostbench-<tag>.manifest` (one line per file: `file NAME DEV INO BIRTH_NS created|found`).
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

/// What tells one file from another that later took its name: device, inode, birth time.
fn identity(md: &std::fs::Metadata) -> (u64, u64, u128) {
    let born = md
        .created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    (md.dev(), md.ino(), born)
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

    /// The manifest in `dir`, if there is one.
    pub fn load(dir: &Path, tag: &str) -> Result<Option<Manifest>, WorkloadError> {
        let mut m = Manifest::new(dir, tag);
        let path = m.path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
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
            match w.as_slice() {
                ["state", "preparing"] => m.state = State::Preparing,
                ["state", "complete"] => m.state = State::Complete,
                ["fact", k, v] => {
                    m.facts.insert(k.to_string(), v.to_string());
                }
                ["file", name, dev, ino, born, how] => {
                    let e = Entry {
                        dev: dev.parse().map_err(|_| bad("device number"))?,
                        ino: ino.parse().map_err(|_| bad("inode number"))?,
                        born_ns: born.parse().map_err(|_| bad("birth time"))?,
                        created: match *how {
                            "created" => true,
                            "found" => false,
                            _ => return Err(bad("file origin")),
                        },
                    };
                    m.entries.insert(name.to_string(), e);
                }
                [""] => {}
                _ => return Err(bad("unknown line")),
            }
        }
        Ok(Some(m))
    }

    /// Writes the manifest atomically (temporary file, fsync, rename).
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
                "file {n} {} {} {} {how}\n",
                e.dev, e.ino, e.born_ns
            ));
        }
        let path = self.path();
        let tmp = self.dir.join(format!("{}.tmp", Self::file_name(&self.tag)));
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)?;
            f.write_all(s.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(|e| err(format!("cannot write {}: {e}", path.display())))
    }

    /// Records that `name` (which exists now) was created by hostbench (`created`) or found
    /// and reused. A file already recorded as created keeps that origin while its inode is
    /// the same.
    pub fn record(&mut self, name: &str, created: bool) -> Result<(), WorkloadError> {
        let md = std::fs::symlink_metadata(self.dir.join(name)).map_err(|e| {
            err(format!(
                "cannot stat {}: {e}",
                self.dir.join(name).display()
            ))
        })?;
        let prev = self.entries.get(name).copied();
        let now = identity(&md);
        let same = prev.is_some_and(|p| (p.dev, p.ino, p.born_ns) == now);
        self.entries.insert(
            name.to_string(),
            Entry {
                dev: now.0,
                ino: now.1,
                born_ns: now.2,
                created: created || (same && prev.is_some_and(|p| p.created)),
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

    /// True when `name` exists, is a regular file hostbench created, and is still the same
    /// file (device and inode) it recorded.
    pub fn owns(&self, name: &str) -> bool {
        let Some(e) = self.entries.get(name) else {
            return false;
        };
        match std::fs::symlink_metadata(self.dir.join(name)) {
            Ok(md) => e.created && md.is_file() && identity(&md) == (e.dev, e.ino, e.born_ns),
            Err(_) => false,
        }
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
    /// names when `None`), and the manifest itself once nothing is left in it. Returns the
    /// names removed and the names left alone (recorded but not ours any more).
    pub fn remove_owned(
        &mut self,
        names: Option<&[String]>,
    ) -> Result<(Vec<String>, Vec<String>), WorkloadError> {
        let list: Vec<String> = match names {
            Some(n) => n.to_vec(),
            None => self.names(),
        };
        let (mut removed, mut kept) = (Vec::new(), Vec::new());
        for n in list {
            if !self.entries.contains_key(&n) {
                continue;
            }
            let p = self.dir.join(&n);
            if self.owns(&n) {
                match std::fs::remove_file(&p) {
                    Ok(()) => removed.push(n.clone()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(err(format!("cannot remove {}: {e}", p.display()))),
                }
                self.entries.remove(&n);
            } else {
                if p.exists() {
                    kept.push(n.clone());
                }
                self.entries.remove(&n);
            }
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
        Ok((removed, kept))
    }
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
        let (removed, kept) = m.remove_owned(None).unwrap();
        assert_eq!(removed, vec!["ours".to_string()]);
        assert_eq!(kept, vec!["found".to_string(), "replaced".to_string()]);
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
