//! fio's `e4defrag` engine (`engines/e4defrag.c`): each write is one `EXT4_IOC_MOVE_EXT`
//! ioctl, which swaps the blocks under the write's range of the job's file with those of a
//! donor file at the same offsets (ext4 copies the data into the donor's blocks first: the
//! file's contents stay, its layout changes) — what `e4defrag(8)` does to defragment a
//! file. Reads (and trims) fail with EINVAL without a call, as fio fails them: the engine
//! only "writes".
//!
//! The donor is `donorname` in the job's `directory` (`directory/donorname`, as fio joins
//! them; the current directory without one), opened by each clone when it starts,
//! `O_CREAT|O_WRONLY`, mode 0644, never removed (fio leaves it too). With `inplace=0`
//! (fio's default) the clone allocates the donor at once over `offset .. filesize`
//! (`fallocate(donor, 0, offset, filesize − offset)`: fio's `file_size_high −
//! start_offset`; without `filesize` that length is 0 and fio's init fails with EINVAL,
//! as hostbench's does). With `inplace=1` each write allocates the donor's range just
//! before its ioctl and truncates the donor to 0 after it.
//!
//! The ioctl counts in the donor's `st_blksize` blocks: the range is
//! `offset / bsz .. ceil((offset + len) / bsz)`. Fewer blocks moved than asked is a short
//! I/O (its residue counted, no error), none at all EINVAL; a failed ioctl is its errno
//! (ENOTTY on a filesystem that is not ext4).

#![allow(unsafe_code)]

use super::super::engine::Dir;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// `donorname` and `inplace`, as given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct E4Opts {
    /// `donorname`: the donor file's name (in the job's directory).
    pub donor: Option<String>,
    /// `inplace=1`: the donor's space is allocated per write and freed after it.
    pub inplace: bool,
    /// The job's `filesize` (its upper end; 0 without one), where the donor's
    /// allocation ends with `inplace=0`.
    pub file_size_high: u64,
}

/// The kernel's `struct move_extent` (`EXT4_IOC_MOVE_EXT`'s argument).
#[repr(C)]
#[derive(Default)]
struct MoveExtent {
    reserved: u32,
    donor_fd: u32,
    orig_start: u64,
    donor_start: u64,
    len: u64,
    moved_len: u64,
}

/// `_IOWR('f', 15, struct move_extent)`.
const EXT4_IOC_MOVE_EXT: libc::c_ulong = (3 << 30)
    | ((std::mem::size_of::<MoveExtent>() as libc::c_ulong) << 16)
    | ((b'f' as libc::c_ulong) << 8)
    | 15;

/// A clone's donor file, open for its whole run (fio's engine data).
#[derive(Debug)]
pub struct Donor {
    fd: OwnedFd,
    bsz: u64,
    inplace: bool,
}

/// Why the donor could not be set up: the errno and what failed (fio's `io_queue_init`).
#[derive(Debug)]
pub struct InitError {
    /// The errno.
    pub errno: i32,
    /// What failed, with the donor's path.
    pub what: String,
}

impl Donor {
    /// Opens (creating it, mode 0644) the donor at `path` and, without `inplace`, allocates
    /// `start .. end` of it, as fio's engine init does. A symlink at `path` is not followed
    /// (fio's `open` would follow it: hostbench writes only where the user named).
    pub fn open(
        path: &std::path::Path,
        inplace: bool,
        start: u64,
        end: u64,
    ) -> Result<Donor, InitError> {
        use std::os::unix::fs::OpenOptionsExt;
        let fail = |what: String, e: std::io::Error| InitError {
            errno: e.raw_os_error().unwrap_or(libc::EIO),
            what: format!("{what}: {e}"),
        };
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| fail(format!("can't open donor file {}", path.display()), e))?;
        if !inplace {
            // fio's length is signed: an offset past `filesize` (or no filesize) makes it
            // 0 or negative, and fallocate refuses it with EINVAL.
            let len = end as i64 - start as i64;
            // SAFETY: fallocate on the descriptor just opened; no memory is passed.
            if unsafe { libc::fallocate(f.as_raw_fd(), 0, start as i64, len) } != 0 {
                let e = std::io::Error::last_os_error();
                return Err(fail(
                    format!(
                        "donor file {}: fallocate(offset {start}, length {len})",
                        path.display()
                    ),
                    e,
                ));
            }
        }
        let bsz = f
            .metadata()
            .map_err(|e| fail(format!("donor file {}: fstat", path.display()), e))?
            .blksize()
            .max(1);
        Ok(Donor {
            fd: f.into(),
            bsz,
            inplace,
        })
    }

    /// One I/O on `fd` (the job's file): `len` when all its blocks moved, fewer bytes for a
    /// short move, −errno on failure.
    pub fn io(&self, fd: RawFd, dir: Dir, off: u64, len: u32) -> i64 {
        if dir != Dir::Write {
            return -i64::from(libc::EINVAL);
        }
        let donor = self.fd.as_raw_fd();
        // SAFETY: fallocate/ioctl/ftruncate on descriptors this clone owns; the ioctl's
        // argument is a live, properly laid out `struct move_extent`.
        unsafe {
            if self.inplace && libc::fallocate(donor, 0, off as i64, i64::from(len)) != 0 {
                return -i64::from(errno());
            }
            let start = off / self.bsz;
            let mut me = MoveExtent {
                donor_fd: donor as u32,
                orig_start: start,
                donor_start: start,
                len: (off + u64::from(len)).div_ceil(self.bsz) - start,
                ..Default::default()
            };
            let r = libc::ioctl(fd, EXT4_IOC_MOVE_EXT as _, &mut me as *mut MoveExtent);
            let ioctl_errno = (r != 0).then(errno);
            let moved = me.moved_len.saturating_mul(self.bsz).min(u64::from(len));
            let mut res = if moved == u64::from(len) || moved > 0 {
                moved as i64
            } else {
                // Nothing moved: an access past the file's end (fio's EINVAL).
                -i64::from(libc::EINVAL)
            };
            if let Some(e) = ioctl_errno {
                res = -i64::from(e);
            }
            if self.inplace && libc::ftruncate(donor, 0) != 0 && res >= 0 {
                res = -i64::from(errno());
            }
            res
        }
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

use std::os::unix::fs::MetadataExt;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ioctl_number_is_the_kernels() {
        // _IOWR('f', 15, struct move_extent): 40 bytes.
        assert_eq!(std::mem::size_of::<MoveExtent>(), 40);
        assert_eq!(EXT4_IOC_MOVE_EXT, 0xc028_660f);
    }

    #[test]
    fn reads_fail_without_a_call_and_no_length_is_einval() {
        let d = std::env::temp_dir().join(format!("wt-fio-e4d-{}", std::process::id()));
        // No filesize: fio's length 0, refused by fallocate.
        let e = Donor::open(&d, false, 0, 0).unwrap_err();
        assert_eq!(e.errno, libc::EINVAL, "{}", e.what);
        let donor = Donor::open(&d, true, 0, 0).unwrap();
        assert_eq!(donor.io(-1, Dir::Read, 0, 4096), -i64::from(libc::EINVAL));
        assert_eq!(donor.io(-1, Dir::Trim, 0, 4096), -i64::from(libc::EINVAL));
        // A write on a bad descriptor is the ioctl's error.
        assert_eq!(donor.io(-1, Dir::Write, 0, 4096), -i64::from(libc::EBADF));
        std::fs::remove_file(&d).unwrap();
    }
}
