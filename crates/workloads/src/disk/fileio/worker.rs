//! One thread's fileio worker: the request it is handed, done synchronously, through a
//! shared mapping (`mmap`) or through io_uring with a backlog in flight, and the fsyncs at
//! the end of the thread.

use super::{Config, Gen, IoMode, Mode, Next, rnd_request, seq_request};
use crate::disk::files::{self, AlignedBuf};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::{Counter, Counters};
use hostbench_core::result::Warning;
use hostbench_core::workload::*;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::Arc;

/// A shared mapping of one whole file.
pub(super) struct Map {
    pub(super) ptr: *mut u8,
    pub(super) len: usize,
}

// SAFETY: the mapping lives as long as the instance; workers copy bytes in and out of it as
// sysbench does (the bytes' values are never relied on).
unsafe impl Send for Map {}
// SAFETY: as above.
unsafe impl Sync for Map {}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: mapped in `map_file` with this length.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

pub(super) fn map_file(f: &File, len: u64, path: &Path) -> Result<Map, WorkloadError> {
    // SAFETY: mapping an open file read/write, shared; the result is checked.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(WorkloadError::environment(format!(
            "cannot mmap {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        )));
    }
    Ok(Map {
        ptr: p.cast(),
        len: len as usize,
    })
}

pub(super) struct Shared {
    pub(super) cfg: Config,
    pub(super) mode: Mode,
    pub(super) reqs: Gen,
    pub(super) _files: Vec<File>,
    pub(super) fds: Vec<i32>,
    pub(super) maps: Vec<Map>,
    pub(super) warnings: Vec<Warning>,
}

impl Shared {
    fn sync_file(&self, f: usize) -> Result<(), WorkloadError> {
        // SAFETY: plain syscalls on descriptors and mappings this instance owns.
        let rc = unsafe {
            if self.cfg.io == IoMode::Mmap {
                libc::msync(
                    self.maps[f].ptr.cast(),
                    self.maps[f].len,
                    libc::MS_SYNC | libc::MS_INVALIDATE,
                )
            } else if self.cfg.fdatasync {
                libc::fdatasync(self.fds[f])
            } else {
                libc::fsync(self.fds[f])
            }
        };
        if rc != 0 {
            return Err(WorkloadError::failed(format!(
                "Failed to fsync file! file: {} ({})",
                Config::name(f as u64),
                std::io::Error::last_os_error()
            )));
        }
        Ok(())
    }

    fn io_error(
        &self,
        write: bool,
        file: u64,
        pos: u64,
        len: u64,
        e: std::io::Error,
    ) -> WorkloadError {
        let what = if write { "write" } else { "read" };
        if self.cfg.open.direct && e.raw_os_error() == Some(libc::EINVAL) {
            let fs = files::fs_type(&self.cfg.dir).map_or("this".into(), |t| t.label());
            return WorkloadError::usage(format!(
                "Failed to {what} file! file: {} pos: {pos} size: {len}: direct I/O refused (Invalid argument) on the {fs} filesystem: with --file-extra-flags=direct the block size and offsets must be multiples of the device's logical block size (512 or 4096 bytes); or drop direct",
                Config::name(file)
            ));
        }
        WorkloadError::failed(format!(
            "Failed to {what} file! file: {} pos: {pos} size: {len} ({e})",
            Config::name(file)
        ))
    }
}

pub(super) struct Ring {
    pub(super) ring: io_uring::IoUring,
    pub(super) inflight: u32,
    pub(super) backlog: u32,
}

pub(super) struct FileWorker {
    pub(super) sh: Arc<Shared>,
    pub(super) rng: Rng,
    pub(super) buf: AlignedBuf,
    pub(super) ring: Option<Ring>,
}

impl FileWorker {
    #[inline]
    fn io(
        &mut self,
        write: bool,
        file: u64,
        pos: u64,
        len: u64,
        c: &Counters,
    ) -> Result<(), WorkloadError> {
        let sh = &*self.sh;
        match sh.cfg.io {
            IoMode::Sync => {
                let fd = sh.fds[file as usize];
                let p = self.buf.as_mut_ptr();
                // SAFETY: the buffer holds at least `len` bytes (it is req_size long) and the
                // descriptor is open for the instance's lifetime.
                let n = unsafe {
                    if write {
                        libc::pwrite(fd, p.cast(), len as usize, pos as i64)
                    } else {
                        libc::pread(fd, p.cast(), len as usize, pos as i64)
                    }
                };
                if n != len as isize {
                    let e = if n < 0 {
                        std::io::Error::last_os_error()
                    } else {
                        std::io::Error::other(format!("short transfer of {n} bytes"))
                    };
                    return Err(sh.io_error(write, file, pos, len, e));
                }
            }
            IoMode::Mmap => {
                let m = &sh.maps[file as usize];
                // SAFETY: pos + len ≤ file_size = the mapping's length; the buffer holds len
                // bytes. Threads may copy into the same file range at once, as sysbench's do;
                // the bytes are never relied on.
                unsafe {
                    if write {
                        std::ptr::copy_nonoverlapping(
                            self.buf.as_ptr(),
                            m.ptr.add(pos as usize),
                            len as usize,
                        );
                    } else {
                        std::ptr::copy_nonoverlapping(
                            m.ptr.add(pos as usize),
                            self.buf.as_mut_ptr(),
                            len as usize,
                        );
                    }
                }
            }
            IoMode::Async => return self.submit(write, file, pos, len, c),
        }
        self.done(write, len, c);
        Ok(())
    }

    #[inline]
    fn done(&self, write: bool, len: u64, c: &Counters) {
        if write {
            c.add(Counter::Writes, 1);
            c.add(Counter::BytesWritten, len);
        } else {
            c.add(Counter::Reads, 1);
            c.add(Counter::BytesRead, len);
        }
        self.sh.reqs.completed(write);
    }

    /// Async: queue the request; when `backlog` are in flight, wait for at least one and
    /// count every completion there is (sysbench counts at completion too).
    fn submit(
        &mut self,
        write: bool,
        file: u64,
        pos: u64,
        len: u64,
        c: &Counters,
    ) -> Result<(), WorkloadError> {
        use io_uring::{opcode, types};
        let fd = types::Fd(self.sh.fds[file as usize]);
        let p = self.buf.as_mut_ptr();
        let data = (len << 1) | write as u64 | (file << 40);
        let sqe = if write {
            opcode::Write::new(fd, p, len as u32).offset(pos).build()
        } else {
            opcode::Read::new(fd, p, len as u32).offset(pos).build()
        }
        .user_data(data);
        let r = self.ring.as_mut().expect("async mode has a ring");
        // SAFETY: the buffer and descriptor outlive the operation (the worker drains its
        // ring before it is dropped).
        unsafe {
            r.ring
                .submission()
                .push(&sqe)
                .map_err(|_| WorkloadError::failed("io_uring submission queue full"))?;
        }
        r.inflight += 1;
        let want = if r.inflight >= r.backlog { 1 } else { 0 };
        r.ring
            .submit_and_wait(want)
            .map_err(|e| WorkloadError::failed(format!("io_uring submit failed: {e}")))?;
        if want > 0 {
            self.reap(c)?;
        }
        Ok(())
    }

    fn reap(&mut self, c: &Counters) -> Result<(), WorkloadError> {
        let mut seen: [(bool, u64, u64, i32); 64] = [(false, 0, 0, 0); 64];
        loop {
            let mut n = 0;
            {
                let r = self.ring.as_mut().expect("async mode has a ring");
                for cqe in r.ring.completion().take(64) {
                    let d = cqe.user_data();
                    seen[n] = (
                        d & 1 == 1,
                        (d >> 1) & ((1 << 39) - 1),
                        d >> 40,
                        cqe.result(),
                    );
                    n += 1;
                }
                r.inflight -= n as u32;
            }
            if n == 0 {
                return Ok(());
            }
            for &(write, len, file, res) in &seen[..n] {
                if res < 0 || res as u64 != len {
                    let e = if res < 0 {
                        std::io::Error::from_raw_os_error(-res)
                    } else {
                        std::io::Error::other(format!("short transfer of {res} bytes"))
                    };
                    return Err(self.sh.io_error(write, file, 0, len, e));
                }
                self.done(write, len, c);
            }
        }
    }

    fn drain(&mut self, c: &Counters) -> Result<(), WorkloadError> {
        while let Some(r) = self.ring.as_mut() {
            if r.inflight == 0 {
                break;
            }
            r.ring
                .submit_and_wait(1)
                .map_err(|e| WorkloadError::failed(format!("io_uring wait failed: {e}")))?;
            self.reap(c)?;
        }
        Ok(())
    }
}

impl EventWorker for FileWorker {
    #[inline]
    fn event(&mut self, c: &Counters) -> Result<Step, WorkloadError> {
        // Borrow the shared state field by field: cloning the Arc here would bounce its
        // reference count between the threads' caches on every event.
        let next = {
            let r = &self.sh.reqs;
            r.next(r.wants_write())
        };
        match next {
            Next::Fsync(f) => {
                self.sh.sync_file(f as usize)?;
                c.add(Counter::Other, 1);
            }
            Next::Io { write, index } => {
                let (file, pos, len) = {
                    let cfg = &self.sh.cfg;
                    if self.sh.mode.sequential() {
                        seq_request(index, cfg.num, cfg.file_size, cfg.req_size)
                    } else {
                        rnd_request(self.rng.next_f64(), cfg.num, cfg.file_size, cfg.block)
                    }
                };
                self.io(write, file, pos, len, c)?;
                if write && self.sh.cfg.fsync_all {
                    self.sh.sync_file(file as usize)?;
                    c.add(Counter::Other, 1);
                }
            }
        }
        Ok(Step::Done)
    }

    fn finish(&mut self, c: &Counters) -> Result<(), WorkloadError> {
        self.drain(c)?;
        if self.sh.cfg.fsync_end && self.sh.mode.writes() {
            for f in 0..self.sh.cfg.num as usize {
                self.sh.sync_file(f)?;
                c.add(Counter::Other, 1);
            }
        }
        Ok(())
    }
}

impl Drop for FileWorker {
    fn drop(&mut self) {
        // The kernel may still write into the buffer: wait for it before it is freed.
        if let Some(r) = self.ring.as_mut() {
            while r.inflight > 0 {
                if r.ring.submit_and_wait(1).is_err() {
                    break;
                }
                let n = r.ring.completion().count();
                r.inflight = r.inflight.saturating_sub(n as u32);
            }
        }
    }
}
