//! fio's `ftruncate` engine: each write is `ftruncate(fd, offset)` (the I/O's length only
//! moves the offsets on; the file ends where the write would have begun); a read fails
//! with EINVAL (fio's `td_io_queue` error), as fio fails it.

#![allow(unsafe_code)]

use super::super::engine::Dir;
use std::os::fd::RawFd;

/// One I/O on `fd`: `len` on success, −errno on failure.
#[inline]
pub fn io(fd: RawFd, dir: Dir, off: u64, len: u32) -> i64 {
    if dir != Dir::Write {
        return -i64::from(libc::EINVAL);
    }
    // SAFETY: ftruncate on a descriptor the worker owns.
    let r = unsafe { libc::ftruncate(fd, off as i64) };
    super::done(r, len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_write_sets_the_size_to_its_offset_and_a_read_is_refused() {
        let f = super::super::scratch("ftruncate");
        assert_eq!(io(f.as_raw_fd(), Dir::Write, 12288, 4096), 4096);
        assert_eq!(f.metadata().unwrap().len(), 12288);
        assert_eq!(io(f.as_raw_fd(), Dir::Write, 4096, 4096), 4096);
        assert_eq!(f.metadata().unwrap().len(), 4096);
        assert_eq!(
            io(f.as_raw_fd(), Dir::Read, 0, 4096),
            -i64::from(libc::EINVAL)
        );
    }
}
