//! Opening test files safely: `O_NOFOLLOW` and the device check on every open, `O_DIRECT`
//! errors that name the filesystem, no file touched through a symlink, temporary files
//! under unpredictable names, and [`AlignedBuf`], the aligned buffers `O_DIRECT` needs.

use super::DIRECT_ALIGN;
use super::device::check_rdev_write;
use super::space::{FsType, fs_type};
use hostbench_core::workload::WorkloadError;
use std::fs::File;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

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
    /// `allow_mounted_write=1`); see [`check_device_write`](super::check_device_write).
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
/// writing, a block device in use is refused ([`check_device_write`](super::check_device_write)) unless
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

/// Whether a failed open of `path` met a symlink where a test file goes (ELOOP from
/// `O_NOFOLLOW`).
fn symlink_at(path: &Path, e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
        && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Whether a failed open was O_DIRECT refused by the filesystem (EINVAL).
fn direct_unsupported(direct: bool, e: &std::io::Error) -> bool {
    direct && e.raw_os_error() == Some(libc::EINVAL)
}

/// Whether [`open_error`] makes a failed open a refusal that says how to fix it (a symlink
/// where a test file goes, O_DIRECT the filesystem lacks) rather than the plain OS error.
pub fn open_is_refused(path: &Path, direct: bool, e: &std::io::Error) -> bool {
    symlink_at(path, e) || direct_unsupported(direct, e)
}

/// The error for a failed open or I/O of `path`: with direct I/O and `EINVAL`, the
/// filesystem-named O_DIRECT message; otherwise what failed and the OS reason.
pub fn open_error(path: &Path, direct: bool, e: &std::io::Error) -> WorkloadError {
    if symlink_at(path, e) {
        return symlink_refused(path);
    }
    if direct_unsupported(direct, e) {
        let fs = fs_type(path)
            .or_else(|| path.parent().and_then(fs_type))
            .map(FsType::label);
        return direct_refused(path, fs.as_deref());
    }
    WorkloadError::environment(format!("cannot open {}: {e}", path.display()))
}

/// The error for a symlink found where hostbench creates, writes or deletes a test file.
pub fn symlink_refused(path: &Path) -> WorkloadError {
    let to = std::fs::read_link(path)
        .map(|t| format!(" (to {})", t.display()))
        .unwrap_or_default();
    WorkloadError::environment(format!(
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
        Err(e) => Err(WorkloadError::environment(format!(
            "cannot stat {}: {e}",
            path.display()
        ))),
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

/// The message when a filesystem refuses O_DIRECT.
pub fn direct_refused(path: &Path, fs: Option<&str>) -> WorkloadError {
    let fs = fs.map_or("this filesystem".to_string(), |f| {
        format!("the {f} filesystem")
    });
    WorkloadError::environment(format!(
        "{fs} holding {} does not support direct I/O (O_DIRECT: Invalid argument); \
         drop the direct flag to measure through the page cache, or put the files on a \
         filesystem that supports it (ext4, xfs, btrfs)",
        path.display()
    ))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::files::tests::tmpdir;
    use hostbench_core::workload::ErrorKind;

    #[test]
    fn direct_refusal_names_filesystem() {
        let refused = direct_refused(Path::new("/mnt/x/test_file.0"), Some("fuse"));
        // A filesystem without O_DIRECT is the machine's refusal, not a bad option.
        assert_eq!(refused.kind, ErrorKind::Environment);
        let e = refused.message;
        assert!(e.contains("fuse filesystem"), "{e}");
        assert!(e.contains("/mnt/x/test_file.0"), "{e}");
        let einval = std::io::Error::from_raw_os_error(libc::EINVAL);
        let direct = open_error(Path::new("/dev/shm/nothing"), true, &einval);
        assert_eq!(direct.kind, ErrorKind::Environment);
        let e = direct.message;
        assert!(e.contains("tmpfs"), "{e}");
        let e = open_error(Path::new("/dev/shm/nothing"), false, &einval).message;
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
            let e = open(&d.join(name), &o).unwrap_err().message;
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
}
