//! fio's `falloc` engine: each I/O is one `fallocate(2)` over its range — a read reserves
//! it without changing the file's size (`FALLOC_FL_KEEP_SIZE`), a write allocates it
//! (mode 0, the file grows to cover it), a trim punches a hole in it
//! (`FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE`). Files and block devices; the file is opened for
//! writing whatever the direction, as fio opens it.

#![allow(unsafe_code)]

use super::super::engine::Dir;
use std::os::fd::RawFd;

/// One I/O on `fd`: `len` on success, −errno on failure.
#[inline]
pub fn io(fd: RawFd, dir: Dir, off: u64, len: u32) -> i64 {
    let mode = match dir {
        Dir::Read => libc::FALLOC_FL_KEEP_SIZE,
        Dir::Write => 0,
        Dir::Trim => libc::FALLOC_FL_KEEP_SIZE | libc::FALLOC_FL_PUNCH_HOLE,
    };
    // SAFETY: fallocate on a descriptor the worker owns; no memory is passed.
    let r = unsafe { libc::fallocate(fd, mode, off as i64, i64::from(len)) };
    super::done(r, len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn reads_keep_the_size_and_writes_extend_the_file() {
        let f = super::super::scratch("falloc");
        let r = io(f.as_raw_fd(), Dir::Read, 0, 65536);
        if r == -i64::from(libc::EOPNOTSUPP) {
            return; // a filesystem without fallocate (the engine reports the error)
        }
        assert_eq!(r, 65536);
        assert_eq!(f.metadata().unwrap().len(), 0, "KEEP_SIZE: the size stays");
        assert_eq!(io(f.as_raw_fd(), Dir::Write, 4096, 8192), 8192);
        assert_eq!(
            f.metadata().unwrap().len(),
            12288,
            "mode 0 extends the file"
        );
    }

    #[test]
    fn a_failure_is_the_errno() {
        assert_eq!(io(-1, Dir::Write, 0, 4096), -i64::from(libc::EBADF));
    }
}
