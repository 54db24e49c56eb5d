//! sysbench 1.0.20's `fileio` test: `--file-num` files `test_file.0 … test_file.{N-1}` in
//! the directory (sysbench: the current one; hostbench also takes `--file-dir`), laid out by
//! `prepare`, exercised by `run`, removed by `cleanup`.
//!
//! One event is one request, exactly as sysbench counts: a read, a write or a periodic fsync.
//! The request generator follows sysbench's (see [`Gen`]): sequential modes walk one global
//! cursor over the files in order; random modes pick a block uniformly over the data set
//! with the thread's RNG; `rndrw` reads while `(reads + 1) / (writes + 1) < --file-rw-ratio`,
//! counting completed requests; after every `--file-fsync-freq` requests with a write among
//! them, the next `--file-num` events are fsyncs of each file in turn. `--file-fsync-end`
//! fsyncs every file when a thread finishes (counted in fsyncs/s, not as events),
//! `--file-fsync-all` fsyncs after each write inside the write's event.
//!
//! Where hostbench differs on purpose (docs/fileio.md): the generator state is one atomic word
//! updated with compare-and-swap instead of sysbench's global mutex; random offsets are drawn
//! over `file_size · file_num` (sysbench draws over `--file-total-size`, which can point past
//! the last file when the size does not divide); `--file-extra-flags` takes a list
//! (`sync,direct`) as documented, where sysbench 1.0.20 fails with "Unknown extra flags value";
//! `async` uses io_uring with `--file-async-backlog` requests in flight per thread (sysbench:
//! Linux AIO); cleanup and `seqwr` remove only files hostbench created ([`files::Manifest`]).

use super::files::{self, AlignedBuf, Manifest, OpenOpts, State};
use hostbench_core::params::{ParamKind, ParamSpec, Params};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::{Counter, Counters};
use hostbench_core::result::{Better, Figure, RunResult, Warning};
use hostbench_core::workload::*;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// sysbench's fileio test.
pub struct FileIo;

/// Manifest tag: `.hostbench-fileio.manifest`.
const TAG: &str = "fileio";

/// Largest `--file-num`: the generator packs the fsync cursor into 21 bits.
const MAX_FILES: i64 = (1 << 21) - 1;

const MIB: f64 = 1024.0 * 1024.0;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "num",
        kind: ParamKind::Int {
            min: 1,
            max: MAX_FILES,
        },
        default: "128",
        unit: "",
        help: "number of files to create",
        sysbench: Some("file-num"),
    },
    ParamSpec {
        name: "block_size",
        kind: ParamKind::Size,
        default: "16384",
        unit: "B",
        help: "block size to use in all IO operations",
        sysbench: Some("file-block-size"),
    },
    ParamSpec {
        name: "total_size",
        kind: ParamKind::Size,
        default: "2G",
        unit: "B",
        help: "total size of files to create",
        sysbench: Some("file-total-size"),
    },
    ParamSpec {
        name: "test_mode",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw} (required for run)",
        sysbench: Some("file-test-mode"),
    },
    ParamSpec {
        name: "io_mode",
        kind: ParamKind::Choice(&["sync", "async", "mmap"]),
        default: "sync",
        unit: "",
        help: "file operations mode (async: io_uring)",
        sysbench: Some("file-io-mode"),
    },
    ParamSpec {
        name: "async_backlog",
        kind: ParamKind::Int { min: 1, max: 32768 },
        default: "128",
        unit: "",
        help: "number of asynchronous operations to queue per thread",
        sysbench: Some("file-async-backlog"),
    },
    ParamSpec {
        name: "extra_flags",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "list of additional flags to use to open files {sync,dsync,direct}",
        sysbench: Some("file-extra-flags"),
    },
    ParamSpec {
        name: "fsync_freq",
        kind: ParamKind::Int {
            min: 0,
            max: i32::MAX as i64,
        },
        default: "100",
        unit: "",
        help: "do fsync() after this number of requests (0 - don't use fsync())",
        sysbench: Some("file-fsync-freq"),
    },
    ParamSpec {
        name: "fsync_all",
        kind: ParamKind::Bool,
        default: "off",
        unit: "",
        help: "do fsync() after each write operation",
        sysbench: Some("file-fsync-all"),
    },
    ParamSpec {
        name: "fsync_end",
        kind: ParamKind::Bool,
        default: "on",
        unit: "",
        help: "do fsync() at the end of test",
        sysbench: Some("file-fsync-end"),
    },
    ParamSpec {
        name: "fsync_mode",
        kind: ParamKind::Choice(&["fsync", "fdatasync"]),
        default: "fsync",
        unit: "",
        help: "which method to use for synchronization {fsync, fdatasync}",
        sysbench: Some("file-fsync-mode"),
    },
    ParamSpec {
        name: "merged_requests",
        kind: ParamKind::Int {
            min: 0,
            max: i32::MAX as i64,
        },
        default: "0",
        unit: "",
        help: "merge at most this number of IO requests if possible (0 - don't merge)",
        sysbench: Some("file-merged-requests"),
    },
    ParamSpec {
        name: "rw_ratio",
        kind: ParamKind::Float { min: 0.0, max: 1e9 },
        default: "1.5",
        unit: "",
        help: "reads/writes ratio for combined test",
        sysbench: Some("file-rw-ratio"),
    },
    ParamSpec {
        name: "dir",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "hostbench: directory for the test files (default: the current directory, as sysbench)",
        sysbench: Some("file-dir"),
    },
];

/// `--file-test-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Sequential write (creation): files are recreated empty.
    SeqWr,
    /// Sequential rewrite.
    SeqRewr,
    /// Sequential read.
    SeqRd,
    /// Random read.
    RndRd,
    /// Random write.
    RndWr,
    /// Random read/write.
    RndRw,
}

/// Every mode name, in sysbench's order.
pub const MODES: &[&str] = &["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"];

impl Mode {
    /// From `--file-test-mode`.
    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "seqwr" => Mode::SeqWr,
            "seqrewr" => Mode::SeqRewr,
            "seqrd" => Mode::SeqRd,
            "rndrd" => Mode::RndRd,
            "rndwr" => Mode::RndWr,
            "rndrw" => Mode::RndRw,
            _ => return None,
        })
    }
    /// Sequential modes share one cursor.
    pub fn sequential(self) -> bool {
        matches!(self, Mode::SeqWr | Mode::SeqRewr | Mode::SeqRd)
    }
    /// Modes that write (and so fsync at the end).
    pub fn writes(self) -> bool {
        !matches!(self, Mode::SeqRd | Mode::RndRd)
    }
}

/// `--file-io-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoMode {
    /// pread/pwrite.
    Sync,
    /// io_uring, `--file-async-backlog` in flight per thread.
    Async,
    /// memcpy to and from shared mappings of the whole files.
    Mmap,
}

/// Everything a fileio stage or run needs, checked.
#[derive(Debug, Clone)]
pub struct Config {
    /// Directory of the files.
    pub dir: PathBuf,
    /// `--file-num`.
    pub num: u64,
    /// `--file-block-size`.
    pub block: u64,
    /// `--file-total-size` as given.
    pub total: u64,
    /// `total / num`.
    pub file_size: u64,
    /// `--file-test-mode` (required for run).
    pub mode: Option<Mode>,
    /// `--file-io-mode`.
    pub io: IoMode,
    /// `--file-async-backlog`.
    pub backlog: u32,
    /// Open flags.
    pub open: OpenOpts,
    /// `--file-fsync-freq` (0 under `--file-fsync-all`).
    pub fsync_freq: u64,
    /// `--file-fsync-all`.
    pub fsync_all: bool,
    /// `--file-fsync-end` (off under `--file-fsync-all`).
    pub fsync_end: bool,
    /// fdatasync instead of fsync.
    pub fdatasync: bool,
    /// Sequential request size: block · merged requests, or block.
    pub req_size: u64,
    /// `--file-rw-ratio`.
    pub rw_ratio: f64,
}

fn err(s: String) -> WorkloadError {
    WorkloadError(s)
}

/// Parses `--file-extra-flags` (a comma-separated list of sync, dsync, direct).
pub fn extra_flags(text: &str) -> Result<OpenOpts, WorkloadError> {
    let mut o = OpenOpts::default();
    for f in text.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        match f {
            "sync" => o.sync = true,
            "dsync" => o.dsync = true,
            "direct" => o.direct = true,
            other => {
                return Err(err(format!(
                    "Invalid value for --file-extra-flags: '{other}' (use a comma-separated list of sync, dsync, direct)"
                )));
            }
        }
    }
    Ok(o)
}

impl Config {
    /// From resolved parameters; `run` requires `--file-test-mode`.
    pub fn from_params(p: &Params, run: bool) -> Result<Config, WorkloadError> {
        let num = p.int("num") as u64;
        let total = p.int("total_size") as u64;
        let block = p.int("block_size") as u64;
        if total == 0 {
            return Err(err(
                "Invalid value for --file-total-size: 0 (give a size such as 2G)".into(),
            ));
        }
        if block == 0 {
            return Err(err(
                "Invalid value for --file-block-size: 0 (give a size such as 16K)".into(),
            ));
        }
        let file_size = total / num;
        if file_size == 0 {
            return Err(err(format!(
                "--file-total-size={total} is smaller than --file-num={num}: each file would be empty; give a larger total or fewer files"
            )));
        }
        let mode_text = p.text("test_mode").trim();
        let mode = match (mode_text, run) {
            ("", true) => {
                return Err(err(format!(
                    "Missing required argument: --file-test-mode (one of {})",
                    MODES.join(", ")
                )));
            }
            ("", false) => None,
            (m, _) => Some(Mode::parse(m).ok_or_else(|| {
                err(format!(
                    "Invalid IO operations mode: {m} (use one of {})",
                    MODES.join(", ")
                ))
            })?),
        };
        let io = match p.text("io_mode") {
            "async" => IoMode::Async,
            "mmap" => IoMode::Mmap,
            _ => IoMode::Sync,
        };
        let mut open = extra_flags(p.text("extra_flags"))?;
        open.read = true;
        open.write = true;
        let fsync_all = p.bool("fsync_all");
        let merged = p.int("merged_requests") as u64;
        let dir = match p.text("dir") {
            "" => PathBuf::from("."),
            d => PathBuf::from(d),
        };
        Ok(Config {
            dir,
            num,
            block,
            total,
            file_size,
            mode,
            io,
            backlog: p.int("async_backlog") as u32,
            open,
            fsync_freq: if fsync_all {
                0
            } else {
                p.int("fsync_freq") as u64
            },
            fsync_all,
            fsync_end: p.bool("fsync_end") && !fsync_all,
            fdatasync: p.text("fsync_mode") == "fdatasync",
            req_size: if merged > 0 {
                block.saturating_mul(merged)
            } else {
                block
            },
            rw_ratio: p.float("rw_ratio"),
        })
    }

    fn name(i: u64) -> String {
        format!("test_file.{i}")
    }

    fn path(&self, i: u64) -> PathBuf {
        self.dir.join(Self::name(i))
    }

    /// The command that lays out these files, for messages.
    fn prepare_hint(&self) -> String {
        format!(
            "hostbench fileio --file-num={} --file-total-size={} prepare",
            self.num,
            size_arg(self.total)
        )
    }

    /// `--file-total-size=…` as the user would write it, for messages.
    fn total_arg(&self) -> String {
        format!("--file-total-size={}", size_arg(self.total))
    }
}

pub use hostbench_core::units::sysbench_size as size_str;

/// A size in the sysbench grammar's shortest exact form: `256G`, `64M`, `1000`.
fn size_arg(v: u64) -> String {
    for (shift, suffix) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if v >= 1 << shift && v.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", v >> shift);
        }
    }
    v.to_string()
}

/// What the generator hands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Fsync this file (a periodic fsync event).
    Fsync(u32),
    /// The `index`-th I/O request (0-based, over all threads).
    Io {
        /// A write (else a read).
        write: bool,
        /// Requests generated before this one.
        index: u64,
    },
}

const REQ_BITS: u32 = 42;
const REQ_MASK: u64 = (1 << REQ_BITS) - 1;
const FILE_SHIFT: u32 = REQ_BITS;
const FILE_MASK: u64 = (1 << 21) - 1;
const DIRTY: u64 = 1 << 63;

/// sysbench's request generator state, shared by all threads: `req_performed`, the fsync
/// cursor and `is_dirty`, packed in one word and advanced with compare-and-swap (sysbench
/// holds a global mutex for the same step), plus rndrw's completed-request counts.
#[derive(Debug)]
pub struct Gen {
    mode: Mode,
    num: u64,
    freq: u64,
    rw_ratio: f64,
    state: AtomicU64,
    reads_done: AtomicU64,
    writes_done: AtomicU64,
}

impl Gen {
    /// A fresh generator.
    pub fn new(mode: Mode, num: u64, fsync_freq: u64, rw_ratio: f64) -> Gen {
        Gen {
            mode,
            num,
            freq: fsync_freq,
            rw_ratio,
            state: AtomicU64::new(0),
            reads_done: AtomicU64::new(0),
            writes_done: AtomicU64::new(0),
        }
    }

    /// Whether the next I/O is a write: fixed by the mode, except rndrw, which reads while
    /// `(reads + 1) / (writes + 1) < ratio` over completed requests.
    #[inline]
    pub fn wants_write(&self) -> bool {
        match self.mode {
            Mode::SeqWr | Mode::SeqRewr | Mode::RndWr => true,
            Mode::SeqRd | Mode::RndRd => false,
            Mode::RndRw => {
                let r = self.reads_done.load(Relaxed);
                let w = self.writes_done.load(Relaxed);
                (r + 1) as f64 / (w + 1) as f64 >= self.rw_ratio
            }
        }
    }

    /// Counts a completed rndrw request (the ratio rule reads these).
    #[inline]
    pub fn completed(&self, write: bool) {
        if self.mode == Mode::RndRw {
            let c = if write {
                &self.writes_done
            } else {
                &self.reads_done
            };
            c.fetch_add(1, Relaxed);
        }
    }

    /// The next request (sysbench's `file_get_seq_request` / `file_get_rnd_request`).
    #[inline]
    pub fn next(&self, write: bool) -> Next {
        let mut cur = self.state.load(Relaxed);
        loop {
            let req = cur & REQ_MASK;
            let file = (cur >> FILE_SHIFT) & FILE_MASK;
            let dirty = cur & DIRTY != 0;
            // Sequential modes look at the fsync cycle only for writes; random ones always.
            let may_sync = write || !self.mode.sequential();
            let (new, out) = if self.freq != 0 && may_sync && dirty && req.is_multiple_of(self.freq)
            {
                let f = file + 1;
                let new = if f == self.num {
                    req
                } else {
                    req | (f << FILE_SHIFT) | DIRTY
                };
                (new, Next::Fsync(file as u32))
            } else {
                let d = if write || dirty { DIRTY } else { 0 };
                let new = ((req + 1) & REQ_MASK) | (file << FILE_SHIFT) | d;
                (new, Next::Io { write, index: req })
            };
            match self.state.compare_exchange_weak(cur, new, Relaxed, Relaxed) {
                Ok(_) => return out,
                Err(now) => cur = now,
            }
        }
    }
}

/// Where the `index`-th sequential request goes: (file, offset, length). One global cursor
/// walks the files in order, `req_size` at a time, and wraps after the last file.
#[inline]
pub fn seq_request(index: u64, num: u64, file_size: u64, req_size: u64) -> (u64, u64, u64) {
    let per_file = file_size.div_ceil(req_size);
    let file = (index / per_file) % num;
    let pos = (index % per_file) * req_size;
    (file, pos, req_size.min(file_size - pos))
}

/// Where a random request goes for a uniform `u` in [0, 1): a block-aligned offset over the
/// data set, split into (file, offset, length).
#[inline]
pub fn rnd_request(u: f64, num: u64, file_size: u64, block: u64) -> (u64, u64, u64) {
    let total = file_size * num;
    let mut off = (u * total as f64) as u64;
    off = off.min(total - 1);
    off -= off % block;
    let file = off / file_size;
    let pos = off % file_size;
    (file, pos, block.min(file_size - pos))
}

/// A shared mapping of one whole file.
struct Map {
    ptr: *mut u8,
    len: usize,
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

fn map_file(f: &File, len: u64, path: &Path) -> Result<Map, WorkloadError> {
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
        return Err(err(format!(
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

struct Shared {
    cfg: Config,
    mode: Mode,
    reqs: Gen,
    _files: Vec<File>,
    fds: Vec<i32>,
    maps: Vec<Map>,
    warnings: Vec<Warning>,
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
            return Err(err(format!(
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
            return err(format!(
                "Failed to {what} file! file: {} pos: {pos} size: {len}: direct I/O refused (Invalid argument) on the {fs} filesystem: with --file-extra-flags=direct the block size and offsets must be multiples of the device's logical block size (512 or 4096 bytes); or drop direct",
                Config::name(file)
            ));
        }
        err(format!(
            "Failed to {what} file! file: {} pos: {pos} size: {len} ({e})",
            Config::name(file)
        ))
    }
}

struct Ring {
    ring: io_uring::IoUring,
    inflight: u32,
    backlog: u32,
}

struct FileWorker {
    sh: Arc<Shared>,
    rng: Rng,
    buf: AlignedBuf,
    ring: Option<Ring>,
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
                .map_err(|_| err("io_uring submission queue full".into()))?;
        }
        r.inflight += 1;
        let want = if r.inflight >= r.backlog { 1 } else { 0 };
        r.ring
            .submit_and_wait(want)
            .map_err(|e| err(format!("io_uring submit failed: {e}")))?;
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
                .map_err(|e| err(format!("io_uring wait failed: {e}")))?;
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

struct FileInstance {
    sh: Arc<Shared>,
}

impl Instance for FileInstance {
    fn worker(&self, _tid: usize, rng: Rng) -> Result<Worker, WorkloadError> {
        let ring = match self.sh.cfg.io {
            IoMode::Async => {
                let backlog = self.sh.cfg.backlog;
                let ring = io_uring::IoUring::new(backlog.next_power_of_two()).map_err(|e| {
                    err(format!(
                        "cannot set up io_uring with {backlog} entries ({e}): the kernel may not allow io_uring here (containers, io_uring_disabled) or the locked-memory limit is low; use --file-io-mode=sync or a smaller --file-async-backlog"
                    ))
                })?;
                Some(Ring {
                    ring,
                    inflight: 0,
                    backlog,
                })
            }
            _ => None,
        };
        let mut buf = AlignedBuf::new(self.sh.cfg.req_size as usize);
        buf.fill_pattern(0x5EED);
        Ok(Worker::Event(Box::new(FileWorker {
            sh: Arc::clone(&self.sh),
            rng,
            buf,
            ring,
        })))
    }

    fn facts(&self) -> Vec<(String, f64)> {
        vec![
            ("file_size_bytes".into(), self.sh.cfg.file_size as f64),
            ("request_size_bytes".into(), self.sh.cfg.req_size as f64),
        ]
    }

    fn warnings(&self) -> Vec<Warning> {
        self.sh.warnings.clone()
    }
}

/// Opens (or, for seqwr, recreates) the files for a run, checking them as sysbench does.
fn open_for_run(cfg: &Config, mode: Mode) -> Result<Vec<File>, WorkloadError> {
    files::check_dir(&cfg.dir)?;
    let manifest = Manifest::load(&cfg.dir, TAG)?;
    let mut out = Vec::with_capacity(cfg.num as usize);
    if mode == Mode::SeqWr {
        let mut m = manifest.unwrap_or_else(|| Manifest::new(&cfg.dir, TAG));
        let mut freed = 0u64;
        for i in 0..cfg.num {
            let name = Config::name(i);
            if let Ok(md) = std::fs::symlink_metadata(cfg.path(i)) {
                if !m.owns(&name) {
                    return Err(err(format!(
                        "{} exists and hostbench did not create it: --file-test-mode=seqwr deletes and recreates its files, and hostbench deletes only its own; remove it yourself or use another directory (--file-dir)",
                        cfg.path(i).display()
                    )));
                }
                freed += md.len();
            }
        }
        let need = (cfg.file_size * cfg.num).saturating_sub(freed);
        files::ensure_space(&cfg.dir, need, &cfg.total_arg())?;
        m.state = State::Preparing;
        m.save()?;
        for i in 0..cfg.num {
            let name = Config::name(i);
            if m.owns(&name) {
                std::fs::remove_file(cfg.path(i))
                    .map_err(|e| err(format!("cannot remove {}: {e}", cfg.path(i).display())))?;
                m.forget(&name);
            }
            let mut o = cfg.open;
            o.create_new = true;
            let f = files::open(&cfg.path(i), &o)
                .map_err(|e| err(format!("Cannot create file '{name}': {}", e.0)))?;
            m.record(&name, true)?;
            if cfg.io == IoMode::Mmap {
                f.set_len(cfg.file_size)
                    .map_err(|e| err(format!("ftruncate() failed on file {name}: {e}")))?;
            }
            out.push(f);
        }
        m.state = State::Complete;
        m.facts.insert("file_num".into(), cfg.num.to_string());
        m.facts
            .insert("file_size".into(), cfg.file_size.to_string());
        m.save()?;
        return Ok(out);
    }
    if let Some(m) = &manifest {
        m.require_complete(&cfg.prepare_hint())?;
    }
    for i in 0..cfg.num {
        let name = Config::name(i);
        let f = match files::open(&cfg.path(i), &cfg.open) {
            Ok(f) => f,
            Err(e) if std::fs::symlink_metadata(cfg.path(i)).is_err() => {
                let _ = e;
                return Err(err(format!(
                    "Cannot open file '{name}' in {}: No such file or directory. Did you forget to run the prepare step? ({})",
                    cfg.dir.display(),
                    cfg.prepare_hint()
                )));
            }
            Err(e) => return Err(e),
        };
        let size = f
            .metadata()
            .map_err(|e| err(format!("fstat() failed on file '{name}': {e}")))?
            .len();
        if size < cfg.file_size {
            return Err(err(format!(
                "Size of file '{name}' is {}B, but at least {}B is expected. Did you run 'prepare' with different --file-total-size or --file-num values?",
                size_str(size as f64),
                size_str(cfg.file_size as f64)
            )));
        }
        out.push(f);
    }
    Ok(out)
}

/// sysbench's "Extra file open flags: …" value.
pub fn flags_str(o: &OpenOpts) -> String {
    if !(o.sync || o.dsync || o.direct) {
        return "(none)".into();
    }
    format!(
        "{}{}{}",
        if o.sync { "sync " } else { "" },
        if o.dsync { "dsync " } else { "" },
        if o.direct { "directio" } else { "" }
    )
}

fn prepare(cfg: &Config, log: &dyn StageLog) -> Result<StageDone, WorkloadError> {
    files::check_dir(&cfg.dir)?;
    log.line(&format!(
        "{} files, {}Kb each, {}Mb total",
        cfg.num,
        cfg.file_size / 1024,
        cfg.file_size * cfg.num / (1024 * 1024)
    ));
    log.line("Creating files for the test...");
    log.line(&format!("Extra file open flags: {}", flags_str(&cfg.open)));

    // What each file needs: whole blocks appended until it reaches the file size.
    let mut todo = Vec::with_capacity(cfg.num as usize);
    let mut need = 0u64;
    for i in 0..cfg.num {
        // Never through a symlink, never into a device or anything but a plain file.
        let cur = match files::lstat_no_symlink(&cfg.path(i))? {
            Some(m) if !m.is_file() => {
                return Err(err(format!(
                    "{} is not a regular file: hostbench lays out test files only as plain \
                     files; remove it or use another directory (--file-dir)",
                    cfg.path(i).display()
                )));
            }
            Some(m) => Some(m.len()),
            None => None,
        };
        let start = cur.unwrap_or(0);
        let bytes = if start >= cfg.file_size {
            0
        } else {
            (cfg.file_size - start).div_ceil(cfg.block) * cfg.block
        };
        need += bytes;
        todo.push((cur, bytes));
    }
    let space = files::ensure_space(&cfg.dir, need, &cfg.total_arg())?;
    let _ = space;

    let mut m = Manifest::load(&cfg.dir, TAG)?.unwrap_or_else(|| Manifest::new(&cfg.dir, TAG));
    m.state = State::Preparing;
    m.facts.insert("file_num".into(), cfg.num.to_string());
    m.facts
        .insert("file_size".into(), cfg.file_size.to_string());
    m.save()?;

    let mut buf = AlignedBuf::new(cfg.block as usize);
    let t0 = Instant::now();
    let mut written = 0u64;
    let mut wopts = cfg.open;
    wopts.read = false;
    wopts.write = true;
    for (i, &(cur, bytes)) in todo.iter().enumerate() {
        let i = i as u64;
        let name = Config::name(i);
        let start = cur.unwrap_or(0);
        if start >= cfg.file_size {
            log.line(&format!("Reusing existing file {name}"));
            m.record(&name, false)?;
            continue;
        }
        // A new file is written under a hidden part name and renamed once full, so the
        // final name never holds a short file; an existing one is extended in place (the
        // manifest stays "preparing" until the end, and run checks sizes).
        let fresh = cur.is_none();
        let (path, f) = if fresh {
            log.line(&format!("Creating file {name}"));
            let part = files::part_name(&name);
            let pp = cfg.dir.join(&part);
            if pp.exists() && m.owns(&part) {
                let _ = std::fs::remove_file(&pp);
            }
            let mut o = wopts;
            o.create_new = true;
            let f = files::open(&pp, &o)?;
            m.record(&part, true)?;
            m.save()?;
            (pp, f)
        } else {
            log.line(&format!(
                "{} existing file {name}",
                if start > 0 { "Extending" } else { "Creating" }
            ));
            let f = files::open(&cfg.path(i), &wopts)?;
            m.record(&name, false)?;
            (cfg.path(i), f)
        };
        let fd = f.as_raw_fd();
        let mut off = start;
        let end = start + bytes;
        let mut since_tick = 0u64;
        while off < end {
            if log.interrupted() {
                drop(f);
                if fresh {
                    let _ = std::fs::remove_file(&path);
                    m.forget(&files::part_name(&name));
                }
                m.save()?;
                return Ok(StageDone::Interrupted);
            }
            // SAFETY: the buffer holds `block` bytes; the descriptor is open.
            let n = unsafe {
                libc::pwrite(fd, buf.as_mut_ptr().cast(), cfg.block as usize, off as i64)
            };
            if n != cfg.block as isize {
                let e = std::io::Error::last_os_error();
                // A part file of ours goes at once: nothing half-written stays behind.
                if fresh {
                    drop(f);
                    let _ = std::fs::remove_file(&path);
                    m.forget(&files::part_name(&name));
                    let _ = m.save();
                }
                return Err(if n < 0 && e.raw_os_error() == Some(libc::ENOSPC) {
                    files::write_error(&path, &e, need - written, fresh)
                } else if n < 0 {
                    files::open_error(&path, cfg.open.direct, &e)
                } else {
                    err(format!(
                        "Failed to write file {}: short write",
                        path.display()
                    ))
                })
                .map_err(|e| err(format!("Failed to write file! {}", e.0)));
            }
            off += cfg.block;
            written += cfg.block;
            since_tick += cfg.block;
            if since_tick >= 16 << 20 {
                since_tick = 0;
                log.progress("laying out test files", written, need);
            }
        }
        if fresh {
            files::commit_part(&cfg.dir, &name, &f)?;
            m.forget(&files::part_name(&name));
            m.record(&name, true)?;
        } else {
            f.sync_all()
                .map_err(|e| err(format!("cannot fsync {}: {e}", path.display())))?;
        }
        m.save()?;
        log.progress("laying out test files", written, need);
    }
    m.state = State::Complete;
    m.save()?;
    let secs = t0.elapsed().as_secs_f64();
    if written > 0 {
        log.line(&format!(
            "{written} bytes written in {secs:.2} seconds ({:.2} MiB/sec).",
            written as f64 / MIB / secs
        ));
    } else {
        log.line("No bytes written.");
    }
    Ok(StageDone::Done)
}

fn cleanup(cfg: &Config, log: &dyn StageLog) -> Result<StageDone, WorkloadError> {
    files::check_dir(&cfg.dir)?;
    log.line("Removing test files...");
    let mut names: Vec<String> = (0..cfg.num).map(Config::name).collect();
    names.extend((0..cfg.num).map(|i| files::part_name(&Config::name(i))));
    let (kept, unproven): (Vec<String>, Vec<String>) = match Manifest::load(&cfg.dir, TAG)? {
        Some(mut m) => {
            let r = m.remove_owned(Some(&names))?;
            (r.kept, r.unproven)
        }
        None => (
            names
                .iter()
                .filter(|n| std::fs::symlink_metadata(cfg.dir.join(n)).is_ok())
                .cloned()
                .collect(),
            Vec::new(),
        ),
    };
    for n in &unproven {
        log.line(&format!(
            "Not removing {n}: hostbench cannot prove it is the file it created (this \
             filesystem keeps no birth time or extended attribute, and the file changed \
             since); remove it yourself if it is a test file"
        ));
    }
    match kept.as_slice() {
        [] => {}
        [n] => log.line(&format!(
            "Not removing {n}: hostbench did not create it, so it was kept. If it is a test \
             file of yours, remove it with the tool that made it (`sysbench fileio ... \
             cleanup`) or `rm -- {n}`"
        )),
        [first, .., last] => log.line(&format!(
            "Not removing {} files ({first} ... {last}): hostbench did not create them, so \
             they were kept (another tool's, e.g. sysbench's prepare). If they are test files \
             of yours, remove them with the tool that made them (`sysbench fileio \
             --file-num=N cleanup`, N as prepared) or `rm -- test_file.*` in this directory",
            kept.len()
        )),
    }
    Ok(StageDone::Done)
}

impl Workload for FileIo {
    fn id(&self) -> &'static str {
        "fileio"
    }
    fn category(&self) -> Category {
        Category::Disk
    }
    fn summary(&self) -> &'static str {
        "File I/O test: one read, write or fsync request on test_file.N"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn caps(&self) -> Caps {
        Caps {
            destructive: true,
            stages: true,
            ..Caps::default()
        }
    }
    fn sysbench_test(&self) -> Option<&'static str> {
        Some("fileio")
    }
    fn counters(&self) -> &'static [Counter] {
        super::IO_COUNTERS
    }
    fn figures(&self, r: &RunResult) -> Vec<Figure> {
        let per = |k: &str| r.metrics.counters_per_s.get(k).copied().unwrap_or(0.0);
        let (rd, wr) = (per("bytes_read") / MIB, per("bytes_written") / MIB);
        let mode = Mode::parse(r.workload.params.text("test_mode"));
        let mut f = Vec::new();
        match mode {
            Some(m) if m.sequential() && m.writes() => f.push(Figure::new(
                "written_mib_per_s",
                "MiB/s",
                wr,
                Better::Higher,
            )),
            Some(Mode::SeqRd) => f.push(Figure::new("read_mib_per_s", "MiB/s", rd, Better::Higher)),
            _ => f.push(Figure::new(
                "io_per_s",
                "requests/s",
                per("reads") + per("writes"),
                Better::Higher,
            )),
        }
        f.push(Figure::new(
            "reads_per_s",
            "reads/s",
            per("reads"),
            Better::Higher,
        ));
        f.push(Figure::new(
            "writes_per_s",
            "writes/s",
            per("writes"),
            Better::Higher,
        ));
        f.push(Figure::new(
            "fsyncs_per_s",
            "fsyncs/s",
            per("other"),
            Better::Higher,
        ));
        if !f.iter().any(|x| x.name == "read_mib_per_s") {
            f.push(Figure::new("read_mib_per_s", "MiB/s", rd, Better::Higher));
        }
        if !f.iter().any(|x| x.name == "written_mib_per_s") {
            f.push(Figure::new(
                "written_mib_per_s",
                "MiB/s",
                wr,
                Better::Higher,
            ));
        }
        f.extend(r.default_figures());
        f
    }
    fn small_params(&self) -> &'static [(&'static str, &'static str)] {
        &[("test_mode", "seqwr"), ("num", "2"), ("total_size", "1M")]
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        let cfg = Config::from_params(ctx.params, true)?;
        let mode = cfg.mode.expect("run requires a mode");
        let opened = open_for_run(&cfg, mode)?;
        let maps = if cfg.io == IoMode::Mmap {
            opened
                .iter()
                .enumerate()
                .map(|(i, f)| map_file(f, cfg.file_size, &cfg.path(i as u64)))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        let data = cfg.file_size * cfg.num;
        let mut warnings = Vec::new();
        let direct = cfg.open.direct && cfg.io != IoMode::Mmap;
        warnings.extend(files::page_cache_warning(
            &cfg.dir,
            data,
            direct,
            ctx.host,
            "add --file-extra-flags=direct, or make --file-total-size larger than RAM",
        ));
        if let Ok(s) = files::space(&cfg.dir) {
            warnings.extend(files::space_warning(&cfg.dir, s));
        }
        let fds = opened.iter().map(|f| f.as_raw_fd()).collect();
        Ok(Box::new(FileInstance {
            sh: Arc::new(Shared {
                reqs: Gen::new(mode, cfg.num, cfg.fsync_freq, cfg.rw_ratio),
                mode,
                cfg,
                _files: opened,
                fds,
                maps,
                warnings,
            }),
        }))
    }
    fn stage(
        &self,
        stage: Stage,
        ctx: &SetupCtx<'_>,
        log: &dyn StageLog,
    ) -> Result<StageDone, WorkloadError> {
        let cfg = Config::from_params(ctx.params, false)?;
        match stage {
            Stage::Prepare => prepare(&cfg, log),
            Stage::Cleanup => cleanup(&cfg, log),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the generator single-threaded for `events` events, completing each request at
    /// once, and counts (reads, writes, fsyncs).
    fn simulate(mode: Mode, num: u64, freq: u64, ratio: f64, events: u64) -> (u64, u64, u64) {
        let g = Gen::new(mode, num, freq, ratio);
        let (mut r, mut w, mut f) = (0, 0, 0);
        for _ in 0..events {
            match g.next(g.wants_write()) {
                Next::Fsync(_) => f += 1,
                Next::Io { write, .. } => {
                    g.completed(write);
                    if write { w += 1 } else { r += 1 }
                }
            }
        }
        (r, w, f)
    }

    /// Counts measured with Debian's sysbench 1.0.20 on this machine:
    /// `sysbench fileio --file-num=4 --file-total-size=4M --file-test-mode=M --events=1000
    /// --time=0 --file-fsync-end=off run` (rates × time, and `--debug` request logs): rndrw
    /// 578 reads / 386 writes / 36 fsyncs; rndwr and seqrewr 964 writes / 36 fsyncs; seqrd
    /// 1000 reads.
    #[test]
    fn counts_match_sysbench() {
        assert_eq!(simulate(Mode::RndRw, 4, 100, 1.5, 1000), (578, 386, 36));
        assert_eq!(simulate(Mode::RndWr, 4, 100, 1.5, 1000), (0, 964, 36));
        assert_eq!(simulate(Mode::SeqRewr, 4, 100, 1.5, 1000), (0, 964, 36));
        assert_eq!(simulate(Mode::SeqRd, 4, 100, 1.5, 1000), (1000, 0, 0));
        assert_eq!(simulate(Mode::RndRd, 4, 100, 1.5, 1000), (1000, 0, 0));
    }

    #[test]
    fn fsync_cycle_shape() {
        // 128 files, freq 100 (the defaults): 100 writes, then 128 fsyncs, then 100 writes...
        let g = Gen::new(Mode::RndWr, 128, 100, 1.5);
        let seq: Vec<bool> = (0..656)
            .map(|_| matches!(g.next(true), Next::Fsync(_)))
            .collect();
        assert!(seq[..100].iter().all(|f| !f));
        assert!(seq[100..228].iter().all(|f| *f));
        assert!(seq[228..328].iter().all(|f| !f));
        assert!(seq[328..456].iter().all(|f| *f));
        // Fsyncs visit every file in order.
        let g = Gen::new(Mode::SeqWr, 3, 2, 1.5);
        let got: Vec<Next> = (0..7).map(|_| g.next(true)).collect();
        assert_eq!(got[2..5], [Next::Fsync(0), Next::Fsync(1), Next::Fsync(2)]);
        assert_eq!(
            got[5],
            Next::Io {
                write: true,
                index: 2
            }
        );
        // freq 0: never.
        assert_eq!(simulate(Mode::RndWr, 4, 0, 1.5, 500), (0, 500, 0));
        // Reads never dirty: rndrd has no fsync events even with a frequency.
        assert_eq!(simulate(Mode::RndRd, 4, 1, 1.5, 50).2, 0);
    }

    #[test]
    fn rndrw_pattern_and_ratio() {
        let g = Gen::new(Mode::RndRw, 4, 0, 1.5);
        let pat: String = (0..12)
            .map(|_| {
                let Next::Io { write, .. } = g.next(g.wants_write()) else {
                    unreachable!()
                };
                g.completed(write);
                if write { 'W' } else { 'R' }
            })
            .collect();
        // sysbench --debug on this machine: operations 1 2 1 2 1 1 2 1 2 1 1 2.
        assert_eq!(pat, "RWRWRRWRWRRW");
        let (r, w, _) = simulate(Mode::RndRw, 4, 0, 3.0, 4000);
        assert!((r as f64 / w as f64 - 3.0).abs() < 0.01);
        // Ratio 0: only writes.
        assert_eq!(simulate(Mode::RndRw, 4, 0, 0.0, 10), (0, 10, 0));
    }

    #[test]
    fn sequential_cursor_walks_files_and_wraps() {
        // 2 files of 40 KiB, 16 KiB requests: 16+16+8 per file.
        let fs = 40 << 10;
        let rs = 16 << 10;
        let v: Vec<_> = (0..7).map(|i| seq_request(i, 2, fs, rs)).collect();
        assert_eq!(v[0], (0, 0, rs));
        assert_eq!(v[1], (0, rs, rs));
        assert_eq!(v[2], (0, 2 * rs, 8 << 10));
        assert_eq!(v[3], (1, 0, rs));
        assert_eq!(v[5], (1, 2 * rs, 8 << 10));
        assert_eq!(v[6], (0, 0, rs), "wraps to file 0");
    }

    #[test]
    fn random_requests_stay_in_bounds_and_cover_files() {
        let mut rng = Rng::for_thread(42, 0);
        let (num, fs, b) = (4u64, 1u64 << 20, 16u64 << 10);
        let mut seen = [0u64; 4];
        for _ in 0..10_000 {
            let (f, pos, len) = rnd_request(rng.next_f64(), num, fs, b);
            assert!(f < num && pos % b == 0 && pos + len <= fs && len == b);
            seen[f as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 2000), "{seen:?}");
        assert_eq!(rnd_request(0.999_999_999_999, num, fs, b).0, 3);
        // Sizes that do not divide: the last block of a file is short, never past the end.
        let (f, pos, len) = rnd_request(0.999_999, 3, 10_000, 4096);
        assert!(f < 3 && pos + len <= 10_000);
    }

    #[test]
    fn sizes_print_like_sysbench() {
        assert_eq!(size_str(16384.0), "16Ki");
        assert_eq!(size_str(2.0 * 1048576.0), "2Mi");
        assert_eq!(size_str(2.5 * 1048576.0), "2.5Mi");
        assert_eq!(size_str(256.0 * 1048576.0), "256Mi");
        assert_eq!(size_str(2.0 * 1073741824.0), "2Gi");
        assert_eq!(size_str(1000.0), "1000");
        assert_eq!(size_str(4.0 / 3.0 * 1048576.0), "1.3333Mi");
        assert_eq!(flags_str(&OpenOpts::default()), "(none)");
        let o = extra_flags("sync,direct").unwrap();
        assert_eq!(flags_str(&o), "sync directio");
        assert_eq!(flags_str(&extra_flags("sync").unwrap()), "sync ");
        assert!(extra_flags("odirect").unwrap_err().0.contains("odirect"));
    }

    #[test]
    fn config_checks() {
        let spec = PARAMS;
        let p = |ov: &[(&str, &str)]| {
            let ov: Vec<(String, String)> = ov
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Params::resolve("fileio", spec, &ov).unwrap()
        };
        let e = Config::from_params(&p(&[]), true).unwrap_err().0;
        assert!(e.contains("--file-test-mode"), "{e}");
        assert!(Config::from_params(&p(&[]), false).is_ok());
        let e = Config::from_params(&p(&[("test_mode", "rand")]), true)
            .unwrap_err()
            .0;
        assert!(e.contains("rand") && e.contains("rndrw"), "{e}");
        let c = Config::from_params(
            &p(&[
                ("test_mode", "seqwr"),
                ("merged_requests", "4"),
                ("fsync_all", "on"),
            ]),
            true,
        )
        .unwrap();
        assert_eq!(c.req_size, 4 * 16384);
        assert_eq!((c.fsync_freq, c.fsync_end), (0, false));
        assert_eq!(c.file_size, (2u64 << 30) / 128);
        let e = Config::from_params(&p(&[("total_size", "100"), ("num", "128")]), false)
            .unwrap_err()
            .0;
        assert!(e.contains("empty"), "{e}");
    }
}
