//! I/O engines: how one thread issues reads and writes and learns they completed.
//!
//! | engine | queue depth | how | slat |
//! |---|---|---|---|
//! | `psync` | 1 | `pread`/`pwrite` | no |
//! | `sync` | 1 | `lseek` (unless the file position is already the offset) + `read`/`write` | no |
//! | `vsync` | 1 | `lseek` + `readv`/`writev` of one vector | no |
//! | `pvsync` | 1 | `preadv`/`pwritev` of one vector | no |
//! | `pvsync2` | 1 | `preadv2`/`pwritev2` with `RWF_HIPRI`, `RWF_NOWAIT`, fio's `RWF_UNCACHED` | no |
//! | `mmap` | 1 | `memcpy` to/from a shared mapping of the region | no |
//! | `null` | `iodepth` | nothing: the harness's own cost per I/O; above depth 1 a batch is committed whole and reaped whole before the next is queued (fio's `engines/null.c`) | above depth 1 |
//! | `libaio` | `iodepth` | `io_submit`/`io_getevents` syscalls (no libaio library) | yes |
//! | `posixaio` | `iodepth` | the C library's `aio_read`/`aio_write`, `aio_error`, `aio_suspend` | yes |
//! | `io_uring` | `iodepth` | a submission and a completion ring, `io_uring_enter` | yes |
//! | `falloc` | 1 | `fallocate` over the I/O's range (`engines/falloc.rs`) | no |
//! | `ftruncate` | 1 | `ftruncate` to the write's offset (`engines/ftruncate.rs`) | no |
//! | `e4defrag` | 1 | `EXT4_IOC_MOVE_EXT` with a donor file per write (`engines/e4defrag.rs`) | no |
//! | `cpuio` | 1 | no file: CPU burnt per I/O (`engines/cpuio.rs`) | no |
//! | `nbd` | `iodepth` | requests to an NBD server on one connection (`engines/nbd.rs`) | yes |
//!
//! Everything an engine needs (ring memory, control blocks, event arrays) is allocated when
//! it is built; queueing, submitting and reaping allocate nothing.

#![allow(unsafe_code)]

use super::job::EngineKind;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};

/// Direction of one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Read.
    Read = 0,
    /// Write.
    Write = 1,
    /// Trim (discard): `rw=trim`, `randtrim`, `trimwrite`; the queue engines do it in
    /// their queue call ([`Engine::trim_now`]), mmap through its file.
    Trim = 2,
}

/// One completed I/O: the slot it used and the kernel's result (bytes, or −errno).
#[derive(Debug, Clone, Copy, Default)]
pub struct Done {
    /// Slot index.
    pub slot: u32,
    /// Bytes transferred, or a negative errno.
    pub res: i64,
}

/// I/O buffers: `n` slots of `len` bytes, allocated once as the job's `mem` says
/// ([`super::mem`]: 4096-aligned, or `mem_align` bytes past a page boundary), filled with
/// random bytes (fio's default buffer contents).
pub struct Buffers {
    mem: super::mem::IoMem,
    len: usize,
}

impl Buffers {
    /// `n` buffers of `len` bytes from the heap, with random contents from `seed`.
    pub fn new(n: usize, len: usize, seed: u64) -> io::Result<Buffers> {
        Self::with_mem(n, len, seed, &super::mem::MemOpts::default(), false)
    }

    /// `n` buffers of `len` bytes in memory of the kind `o` names (`direct`: O_DIRECT,
    /// which makes fio align them), with random contents from `seed`.
    pub fn with_mem(
        n: usize,
        len: usize,
        seed: u64,
        o: &super::mem::MemOpts,
        direct: bool,
    ) -> io::Result<Buffers> {
        let mem = super::mem::IoMem::new(o, n, len, direct)?;
        let (ptr, total) = (mem.base(), mem.len);
        let mut x = seed | 1;
        // SAFETY: ptr is valid for `total` bytes; filled as u64 words where they fit.
        unsafe {
            let words = total / 8;
            let p = ptr as *mut u64;
            for i in 0..words {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                p.add(i).write_unaligned(x);
            }
            for i in words * 8..total {
                *ptr.add(i) = i as u8;
            }
        }
        Ok(Buffers { mem, len })
    }

    /// Start of slot `i`'s buffer.
    #[inline(always)]
    pub fn slot(&self, i: u32) -> *mut u8 {
        // SAFETY: callers pass slots below n; the offset stays inside the allocation.
        unsafe { self.mem.start().add(i as usize * self.len) }
    }
}

/// io_uring's own options (fio's `fixedbufs`, `registerfiles`, `sqthread_poll`, `hipri`,
/// `nonvectored`, `force_async`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UringOpts {
    /// The I/O buffers are registered with the ring (`IORING_REGISTER_BUFFERS`) and the
    /// I/Os use `READ_FIXED`/`WRITE_FIXED`.
    pub fixedbufs: bool,
    /// The file is registered with the ring (`IORING_REGISTER_FILES`), the I/Os name it by
    /// index (`IOSQE_FIXED_FILE`).
    pub registerfiles: bool,
    /// A kernel thread polls the submission ring (`IORING_SETUP_SQPOLL`).
    pub sqthread_poll: bool,
    /// `sqthread_poll_cpu`: the polling thread's CPU (`IORING_SETUP_SQ_AFF`; only with
    /// `sqthread_poll`, as fio).
    pub sq_cpu: Option<u32>,
    /// Completions are polled for (`IORING_SETUP_IOPOLL`): O_DIRECT on a device with polled
    /// queues only; elsewhere each I/O fails with EOPNOTSUPP, as with fio.
    pub hipri: bool,
    /// Each read's and write's `rw_flags` (`RWF_NOWAIT`, `RWF_UNCACHED`: fio's io_uring
    /// `nowait` and `uncached`, the same flags as pvsync2's, [`Pv2::flags`]).
    pub rw_flags: u32,
    /// fio's `nonvectored`: `Some(true)` reads and writes are `IORING_OP_READ`/`WRITE` of
    /// the buffer, `Some(false)` `READV`/`WRITEV` of a one-entry iovec; `None` (fio's
    /// default, -1) the plain ones when the kernel has them (`IORING_REGISTER_PROBE`),
    /// else the vectored ones, as fio probes. `fixedbufs` uses the fixed opcodes either way.
    pub nonvectored: Option<bool>,
    /// fio's `force_async=N`: every Nth request the clone prepares (trims and syncs
    /// counted, as fio counts them) is flagged `IOSQE_ASYNC`; 0 none.
    pub force_async: u32,
}

/// pvsync2's own options (fio's `hipri`, `hipri_percentage`, `uncached`, `nowait`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pv2Opts {
    /// `RWF_HIPRI` on the I/Os (`hipri_percentage` of them).
    pub hipri: bool,
    /// The percentage of I/Os with `RWF_HIPRI` (default 100), drawn as fio draws it.
    pub hipri_percentage: u32,
    /// fio 3.33's `RWF_UNCACHED` (0x40, a flag of a kernel patch that was never merged;
    /// since Linux 6.11 the bit is `RWF_ATOMIC`) on buffered I/Os (not with `direct`).
    pub uncached: bool,
    /// `RWF_NOWAIT`.
    pub nowait: bool,
}

impl Default for Pv2Opts {
    fn default() -> Self {
        Pv2Opts {
            hipri: false,
            hipri_percentage: 100,
            uncached: false,
            nowait: false,
        }
    }
}

/// fio's 32-bit Tausworthe generator (`taus88`), seeded as fio seeds an engine's own state
/// (`init_rand(.., 0)`: seed 1, six cranks): pvsync2's `hipri_percentage` draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Taus88([u32; 3]);

impl Taus88 {
    /// The state fio's engine init leaves.
    pub fn fio_engine() -> Taus88 {
        let seed = 1u32;
        let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
        let at_least = |x: u32, m: u32| if x < m { x + m } else { x };
        // fio's `(2^31) + (2^17) + (2^7)` is C's XOR: 29 + 19 + 5.
        let s1 = at_least(lcg(53), 1);
        let s2 = at_least(lcg(s1), 7);
        let s3 = at_least(lcg(s2), 15);
        let mut t = Taus88([s1, s2, s3]);
        for _ in 0..6 {
            t.next_u32();
        }
        t
    }

    /// The next 32-bit value.
    pub fn next_u32(&mut self) -> u32 {
        fn step(s: u32, a: u32, b: u32, c: u32, d: u32) -> u32 {
            ((s & c) << d) ^ (((s << a) ^ s) >> b)
        }
        let [s1, s2, s3] = &mut self.0;
        *s1 = step(*s1, 13, 19, 4_294_967_294, 12);
        *s2 = step(*s2, 2, 25, 4_294_967_288, 4);
        *s3 = step(*s3, 3, 11, 4_294_967_280, 17);
        *s1 ^ *s2 ^ *s3
    }

    /// A whole number from `lo` to `hi`, both included (fio's `rand_between`).
    pub fn between(&mut self, lo: u32, hi: u32) -> u32 {
        let r = self.next_u32();
        lo + (f64::from(hi - lo + 1) * (f64::from(r) / 4_294_967_296.0)) as u32
    }
}

/// pvsync2 on one file: its fixed flags and the clone's `hipri_percentage` generator
/// (one per clone, shared by its files' engines, as fio's is the engine's).
#[derive(Debug, Clone)]
pub struct Pv2 {
    /// `RWF_NOWAIT`, `RWF_UNCACHED` as the job asks.
    pub flags: i32,
    /// `hipri` with its percentage (`None`: no `RWF_HIPRI`).
    pub hipri: Option<u32>,
    /// The clone's draws for `hipri_percentage`.
    pub rng: std::sync::Arc<std::sync::Mutex<Taus88>>,
}

impl Pv2 {
    /// fio 3.33's `RWF_UNCACHED`.
    pub const RWF_UNCACHED: i32 = 0x40;

    /// A clone's pvsync2 state for options `o` (`direct`: no `RWF_UNCACHED`, as fio).
    pub fn new(o: Pv2Opts, direct: bool) -> Pv2 {
        let mut flags = 0;
        if o.uncached && !direct {
            flags |= Self::RWF_UNCACHED;
        }
        if o.nowait {
            flags |= libc::RWF_NOWAIT;
        }
        Pv2 {
            flags,
            hipri: o.hipri.then_some(o.hipri_percentage),
            rng: std::sync::Arc::new(std::sync::Mutex::new(Taus88::fio_engine())),
        }
    }

    /// The flags of the next I/O (fio draws only with `hipri` set).
    fn next_flags(&self) -> i32 {
        match self.hipri {
            Some(pct) => {
                let mut r = self.rng.lock().unwrap_or_else(|e| e.into_inner());
                if r.between(1, 100) <= pct {
                    self.flags | libc::RWF_HIPRI
                } else {
                    self.flags
                }
            }
            None => self.flags,
        }
    }
}

/// One vectored call of `len` bytes at `buf`: `readv`/`writev` (`off` `None`: at the file
/// position), `preadv`/`pwritev`, or with `flags` `preadv2`/`pwritev2` (raw system calls:
/// the C libraries differ in which wrappers they have); bytes or −errno. `buf` is the
/// worker's slot buffer of at least `len` bytes ([`Engine::sync_io`]'s contract).
fn vectored(
    fd: RawFd,
    dir: Dir,
    buf: *mut u8,
    len: u32,
    off: Option<u64>,
    flags: Option<i32>,
) -> i64 {
    let iov = libc::iovec {
        iov_base: buf.cast(),
        iov_len: len as usize,
    };
    let iovp = &iov as *const libc::iovec;
    let write = dir == Dir::Write;
    // The kernel takes the offset as two longs (low, high); on 64-bit the low one is all.
    let (lo, hi) = off.map_or((0, 0), |o| (o as libc::c_long, (o >> 32) as libc::c_long));
    // SAFETY: the vector points at the caller's buffer; the calls only read or fill it.
    let r = unsafe {
        match (off, flags) {
            (None, _) if write => libc::syscall(libc::SYS_writev, fd, iovp, 1),
            (None, _) => libc::syscall(libc::SYS_readv, fd, iovp, 1),
            (Some(_), None) if write => libc::syscall(libc::SYS_pwritev, fd, iovp, 1, lo, hi),
            (Some(_), None) => libc::syscall(libc::SYS_preadv, fd, iovp, 1, lo, hi),
            (Some(_), Some(f)) if write => {
                libc::syscall(libc::SYS_pwritev2, fd, iovp, 1, lo, hi, f)
            }
            (Some(_), Some(f)) => libc::syscall(libc::SYS_preadv2, fd, iovp, 1, lo, hi, f),
        }
    };
    ret(r as i64)
}

/// An engine bound to one open file.
pub enum Engine {
    /// pread/pwrite.
    Psync(RawFd),
    /// lseek + read/write, with where the descriptor's position is after its last read or
    /// write (fio's `engine_pos`, 0 when the file is opened): the seek is left out when
    /// the I/O starts there, as fio's `fio_syncio_prep` leaves it out.
    Sync(RawFd, u64),
    /// lseek + readv/writev.
    Vsync(RawFd),
    /// preadv/pwritev.
    Pvsync(RawFd),
    /// preadv2/pwritev2 with flags.
    Pvsync2(RawFd, Box<Pv2>),
    /// The region mapped shared.
    Mmap(Map),
    /// No I/O.
    Null,
    /// No I/O, queued: `ioengine=null` above `iodepth=1` ([`NullQueue`]).
    NullQueue(Box<NullQueue>),
    /// Linux native AIO.
    Libaio(Box<Aio>),
    /// POSIX AIO through the C library.
    Posixaio(Box<PosixAio>),
    /// io_uring.
    Uring(Box<Uring>),
    /// fallocate per I/O.
    Falloc(RawFd),
    /// ftruncate per write.
    Ftruncate(RawFd),
    /// ext4's move-extent ioctl per write, with the clone's donor.
    E4defrag(RawFd, std::sync::Arc<super::engines::e4defrag::Donor>),
    /// CPU burnt per I/O, no file.
    Cpu(Box<super::engines::cpuio::Cpu>),
    /// A program run for the job's runtime, no file.
    Exec(Box<super::engines::exec::Exec>),
    /// A socket: reads receive, writes send (the worker calls it with its stop check).
    Net(Box<super::engines::net::Net>),
    /// Requests to an NBD server's export, `iodepth` of them in flight.
    Nbd(Box<super::engines::nbd::Nbd>),
    /// `io_submit_mode=offload`: I/Os handed to `iodepth` submitting threads, each with its
    /// own engine at depth 1 ([`Offload`]).
    Offload(Box<Offload>),
}

impl Engine {
    /// libaio's `userspace_reap` (other engines have no such option).
    pub fn set_userspace_reap(&mut self, on: bool) {
        if let Engine::Libaio(a) = self {
            a.user_reap = on;
        }
    }

    /// Builds engine `kind` for `fd` with room for `depth` I/Os in flight; `region` is the
    /// part of the file an mmap engine maps, and how.
    pub fn new(kind: EngineKind, fd: RawFd, depth: u32, region: Region) -> io::Result<Engine> {
        Ok(match kind {
            EngineKind::Falloc => Engine::Falloc(fd),
            EngineKind::Ftruncate => Engine::Ftruncate(fd),
            EngineKind::E4defrag => unreachable!("e4defrag is built with its donor"),
            EngineKind::Cpuio => unreachable!("cpuio is built by Engine::cpu"),
            EngineKind::Exec => unreachable!("exec is built by Engine::exec"),
            EngineKind::Net | EngineKind::NetSplice => {
                unreachable!("net is built by Engine::Net at setup")
            }
            EngineKind::Nbd => unreachable!("nbd is built by Engine::Nbd at setup"),
            // The file engines' work is done when a file is picked; their I/Os move nothing.
            EngineKind::Filecreate | EngineKind::Filestat | EngineKind::Filedelete => Engine::Null,
            EngineKind::Psync => Engine::Psync(fd),
            EngineKind::Sync => Engine::Sync(fd, 0),
            EngineKind::Vsync => Engine::Vsync(fd),
            EngineKind::Pvsync => Engine::Pvsync(fd),
            EngineKind::Pvsync2 => {
                Engine::Pvsync2(fd, Box::new(Pv2::new(Pv2Opts::default(), false)))
            }
            EngineKind::Null if depth > 1 => Engine::NullQueue(Box::new(NullQueue::new(depth))),
            EngineKind::Null => Engine::Null,
            EngineKind::Mmap => Engine::Mmap(Map::new(fd, region)?),
            EngineKind::Libaio => Engine::Libaio(Box::new(Aio::new(fd, depth)?)),
            EngineKind::Posixaio => Engine::Posixaio(Box::new(PosixAio::new(fd, depth))),
            EngineKind::IoUring => {
                Engine::Uring(Box::new(Uring::new(fd, depth, UringOpts::default())?))
            }
        })
    }

    /// Engine `kind` as [`new`](Self::new) builds it, pvsync2 with the clone's `pv2` (its
    /// flags and its shared `hipri_percentage` draws).
    pub fn with_pv2(
        kind: EngineKind,
        fd: RawFd,
        depth: u32,
        region: Region,
        pv2: &Pv2,
    ) -> io::Result<Engine> {
        if kind == EngineKind::Pvsync2 {
            return Ok(Engine::Pvsync2(fd, Box::new(pv2.clone())));
        }
        Engine::new(kind, fd, depth, region)
    }

    /// The io_uring engine with its options; with `fixedbufs`, `bufs` (`depth` slots of
    /// `slot_len` bytes) are registered with the ring.
    pub fn uring(
        fd: RawFd,
        depth: u32,
        opts: UringOpts,
        bufs: Option<(&Buffers, u32)>,
    ) -> io::Result<Engine> {
        let mut u = Uring::new(fd, depth, opts)?;
        if opts.fixedbufs
            && let Some((b, n)) = bufs
        {
            u.register_buffers(b, n)?;
        }
        Ok(Engine::Uring(Box::new(u)))
    }

    /// `io_submit_mode=offload`: `depth` submitting threads with engine `kind` each.
    pub fn offload(kind: EngineKind, fd: RawFd, depth: u32, region: Region) -> io::Result<Engine> {
        Ok(Engine::Offload(Box::new(Offload::new(
            kind, fd, depth, region,
        )?)))
    }

    /// The cpuio engine for a job's options.
    pub fn cpu(o: &super::engines::EngineOpts) -> Engine {
        Engine::Cpu(Box::new(super::engines::cpuio::Cpu::new(
            o.cpumode,
            o.cpuload,
            o.cpuchunks_us,
        )))
    }

    /// The exec engine of job `name` for `runtime_s` seconds.
    pub fn exec(name: &str, o: &super::engines::EngineOpts, runtime_s: f64) -> Engine {
        Engine::Exec(Box::new(super::engines::exec::Exec::new(
            name, &o.exec, runtime_s,
        )))
    }

    /// Why the exec engine's program could not be started (`None`: another engine, or no
    /// such failure).
    pub fn exec_error(&self) -> Option<&str> {
        match self {
            Engine::Exec(e) => e.error(),
            _ => None,
        }
    }

    /// fio's name of the call that failed when an I/O returns an error: `io_u error` for
    /// engines that move data, `td_io_queue` for the engines whose queue call sets the
    /// error itself (falloc, ftruncate).
    pub fn error_func(&self) -> &'static str {
        match self {
            Engine::Falloc(_)
            | Engine::Ftruncate(_)
            | Engine::E4defrag(..)
            | Engine::Cpu(_)
            | Engine::Exec(_) => "td_io_queue",
            _ => "io_u error",
        }
    }

    /// The cpuio engine's think after each cycle, µs (`None`: another engine).
    pub fn cpu_think_us(&self) -> Option<u64> {
        match self {
            Engine::Cpu(c) => Some(c.think_us()),
            _ => None,
        }
    }

    /// The mmap engine's `madvise` for the job's access pattern (`random` or sequential);
    /// other engines have no mapping to advise.
    pub fn advise_mapping(&self, random: bool) -> io::Result<()> {
        match self {
            Engine::Mmap(m) => m.advise(random),
            _ => Ok(()),
        }
    }

    /// Runs one I/O to completion (sync engines); bytes or −errno.
    #[inline]
    pub fn sync_io(&mut self, dir: Dir, buf: *mut u8, off: u64, len: u32) -> i64 {
        // SAFETY: buf points at a slot buffer of at least `len` bytes owned by this worker.
        unsafe {
            match self {
                Engine::Psync(fd) => {
                    let r = match dir {
                        Dir::Read => libc::pread(*fd, buf.cast(), len as usize, off as i64),
                        Dir::Write => libc::pwrite(*fd, buf.cast(), len as usize, off as i64),
                        Dir::Trim => return trim(*fd, off, len),
                    };
                    ret(r as i64)
                }
                Engine::Sync(fd, pos) => {
                    if dir == Dir::Trim {
                        return trim(*fd, off, len);
                    }
                    if *pos != off && libc::lseek(*fd, off as i64, libc::SEEK_SET) < 0 {
                        return ret(-1);
                    }
                    let r = match dir {
                        Dir::Read => libc::read(*fd, buf.cast(), len as usize),
                        Dir::Write => libc::write(*fd, buf.cast(), len as usize),
                        Dir::Trim => unreachable!("trims returned above"),
                    };
                    // A failed call moves nothing: the position stays where it was.
                    if r >= 0 {
                        *pos = off + r as u64;
                    }
                    ret(r as i64)
                }
                Engine::Vsync(fd) => {
                    if dir == Dir::Trim {
                        return trim(*fd, off, len);
                    }
                    if libc::lseek(*fd, off as i64, libc::SEEK_SET) < 0 {
                        return ret(-1);
                    }
                    vectored(*fd, dir, buf, len, None, None)
                }
                Engine::Pvsync(fd) => match dir {
                    Dir::Trim => trim(*fd, off, len),
                    _ => vectored(*fd, dir, buf, len, Some(off), None),
                },
                Engine::Pvsync2(fd, p) => match dir {
                    Dir::Trim => trim(*fd, off, len),
                    _ => vectored(*fd, dir, buf, len, Some(off), Some(p.next_flags())),
                },
                Engine::Mmap(m) => m.copy(dir, buf, off, len),
                Engine::Null => len as i64,
                Engine::Falloc(fd) => super::engines::falloc::io(*fd, dir, off, len),
                Engine::Ftruncate(fd) => super::engines::ftruncate::io(*fd, dir, off, len),
                Engine::E4defrag(fd, donor) => donor.io(*fd, dir, off, len),
                Engine::Cpu(c) => {
                    c.burn();
                    0
                }
                Engine::Exec(e) => e.io(),
                Engine::Net(_) => {
                    unreachable!("the worker calls the net engine itself, with its stop check")
                }
                Engine::Libaio(_)
                | Engine::Posixaio(_)
                | Engine::Uring(_)
                | Engine::Offload(_)
                | Engine::NullQueue(_)
                | Engine::Nbd(_) => {
                    unreachable!("queue engines go through queue/submit/reap")
                }
            }
        }
    }

    /// Points a queue engine's next I/Os at `fd`, file `index` of the clone's (a clone
    /// with several files switches between them; I/Os already queued keep the descriptor
    /// they were queued with; with registered files io_uring names the file by index).
    pub fn set_fd(&mut self, fd: RawFd, index: u32) {
        match self {
            Engine::Libaio(a) => a.fd = fd,
            Engine::Posixaio(a) => a.fd = fd,
            Engine::Uring(u) => {
                u.fd = fd;
                u.file_index = index as i32;
            }
            // Its I/Os use no file.
            Engine::NullQueue(_) => {}
            _ => unreachable!("sync and offload engines are built per file"),
        }
    }

    /// io_uring's `registerfiles` with several files: registers `fds` (the clone's files,
    /// in order) with the ring at once, as fio does when the clone starts; the I/Os then
    /// name their file by its index. The ring must have been built without registering.
    pub fn register_files(&mut self, fds: &[RawFd]) -> io::Result<()> {
        let Engine::Uring(u) = self else {
            return Err(io::Error::other("registerfiles needs the io_uring engine"));
        };
        u.register(IORING_REGISTER_FILES, fds.as_ptr().cast(), fds.len() as u32)
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("registerfiles: io_uring_register(FILES) failed: {e}"),
                )
            })?;
        u.opts.registerfiles = true;
        u.file_index = 0;
        Ok(())
    }

    /// Prepares one I/O in slot `slot` (queue engines); `prio` is the I/O's own priority
    /// (fio's `cmdprio_*`: libaio's `aio_reqprio` with `IOCB_FLAG_IOPRIO`, io_uring's sqe
    /// `ioprio`), `None` for the clone's.
    #[inline]
    pub fn queue(
        &mut self,
        slot: u32,
        dir: Dir,
        buf: *mut u8,
        off: u64,
        len: u32,
        prio: Option<u16>,
    ) {
        match self {
            Engine::Libaio(a) => a.queue(slot, dir, buf, off, len, prio),
            Engine::Posixaio(a) => a.queue(slot, dir, buf, off, len),
            Engine::Uring(u) => u.queue(slot, dir, buf, off, len, prio),
            Engine::Nbd(n) => n.queue(slot, dir, buf, off, len),
            Engine::NullQueue(q) => q.queued.push(Done {
                slot,
                res: if dir == Dir::Trim { 0 } else { len as i64 },
            }),
            Engine::Offload(o) => o.pending.push(Work {
                slot,
                dir,
                buf: buf as usize,
                off,
                len,
                prio,
            }),
            _ => unreachable!("sync engines use sync_io"),
        }
    }

    /// A queue engine's trim, done in the queue call as fio 3.33's libaio and io_uring do
    /// (`FIO_ASYNCIO_SYNC_TRIM`: nothing else in flight, then `do_io_u_trim`): bytes
    /// trimmed, or −errno.
    pub fn trim_now(&mut self, off: u64, len: u32) -> i64 {
        match self {
            Engine::Libaio(a) => trim(a.fd, off, len),
            Engine::Posixaio(a) => trim(a.fd, off, len),
            Engine::Uring(u) => {
                // fio prepares the trim's request too (force_async counts it).
                u.prep_async();
                trim(u.fd, off, len)
            }
            Engine::Nbd(n) => n.trim_now(off, len),
            Engine::NullQueue(_) => len as i64,
            _ => unreachable!("sync engines trim through sync_io"),
        }
    }

    /// A sync the worker makes beside a queue engine (`fsync`, `fdatasync`,
    /// `sync_file_range` every N writes): fio prepares it as one of io_uring's requests,
    /// so `force_async` counts it.
    pub fn note_sync(&mut self) {
        if let Engine::Uring(u) = self {
            u.prep_async();
        }
    }

    /// The clone's own I/O priority (`prio`/`prioclass`): io_uring puts it in every sqe, as
    /// fio does (an `sqthread_poll` thread does not inherit the clone's `ioprio_set`).
    pub fn set_default_ioprio(&mut self, ioprio: u16) {
        if let Engine::Uring(u) = self {
            u.default_ioprio = ioprio;
        }
    }

    /// Hands everything queued to the kernel.
    #[inline]
    pub fn submit(&mut self) -> io::Result<()> {
        match self {
            Engine::Libaio(a) => a.submit(),
            Engine::Posixaio(a) => a.submit(),
            Engine::Uring(u) => u.submit(),
            Engine::Offload(o) => o.submit(),
            Engine::NullQueue(q) => {
                q.submit();
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The engine takes no more I/Os until what it committed is reaped (fio's null engine
    /// answers `FIO_Q_BUSY`); the others take I/Os while they have room.
    #[inline]
    pub fn busy(&self) -> bool {
        matches!(self, Engine::NullQueue(q) if !q.events.is_empty())
    }

    /// A reap returns everything committed, whatever its maximum (fio's null engine).
    pub fn reaps_all(&self) -> bool {
        matches!(self, Engine::NullQueue(_))
    }

    /// Waits for at least `min` completions and stores them in `out`; returns how many.
    #[inline]
    pub fn reap(&mut self, min: usize, out: &mut [Done]) -> io::Result<usize> {
        self.reap_within(min, out, None)
    }

    /// As [`reap`](Self::reap), but waits at most `timeout_ns` for the first completion and
    /// returns 0 when none came (a paced job must not sleep past its next due I/O).
    #[inline]
    pub fn reap_within(
        &mut self,
        min: usize,
        out: &mut [Done],
        timeout_ns: Option<u64>,
    ) -> io::Result<usize> {
        match self {
            Engine::Libaio(a) => a.reap(min, out, timeout_ns),
            Engine::Posixaio(a) => a.reap(min, out, timeout_ns),
            Engine::Uring(u) => u.reap(min, out, timeout_ns),
            Engine::Offload(o) => o.reap(min, out, timeout_ns),
            Engine::Nbd(n) => n.reap(min, out, timeout_ns),
            Engine::NullQueue(q) => Ok(q.reap(min, out)),
            _ => Ok(0),
        }
    }
}

// ---- null, queued ----

/// `ioengine=null` above `iodepth=1`, as fio 3.33's `engines/null.c` queues: I/Os are
/// queued until the batch is submitted; a submit commits them all unless a commit is still
/// unreaped (the engine is then [busy](Engine::busy)); a reap asking for at least one
/// completion returns every committed I/O, one asking for none returns none.
#[derive(Debug)]
pub struct NullQueue {
    queued: Vec<Done>,
    events: Vec<Done>,
}

impl NullQueue {
    fn new(depth: u32) -> NullQueue {
        NullQueue {
            queued: Vec::with_capacity(depth as usize),
            events: Vec::with_capacity(depth as usize),
        }
    }

    fn submit(&mut self) {
        if self.events.is_empty() {
            std::mem::swap(&mut self.queued, &mut self.events);
        }
    }

    fn reap(&mut self, min: usize, out: &mut [Done]) -> usize {
        if min == 0 {
            return 0;
        }
        let n = self.events.len().min(out.len());
        out[..n].copy_from_slice(&self.events[..n]);
        self.events.drain(..n);
        n
    }
}

// ---- io_submit_mode=offload ----

/// One I/O handed to a submitting thread (the buffer as an address: the worker's buffers
/// outlive the threads, which end when the engine is dropped).
#[derive(Debug, Clone, Copy)]
struct Work {
    slot: u32,
    dir: Dir,
    buf: usize,
    off: u64,
    len: u32,
    prio: Option<u16>,
}

/// fio's `io_submit_mode=offload` (`rate-submit.c`): the clone's own thread prepares and
/// paces the I/Os and hands each to a pool of `iodepth` submitting threads; each thread
/// has its own engine at depth 1 (a synchronous call, or one libaio submit and wait) and
/// reports the I/O back when it is done. The clone never waits for the device to issue
/// its next I/O while a slot is free, whatever its engine: the submission rate stays the
/// job's even when completions lag (fio's reason for the mode).
pub struct Offload {
    work: Option<std::sync::mpsc::Sender<Work>>,
    done: std::sync::mpsc::Receiver<io::Result<Done>>,
    pending: Vec<Work>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Offload {
    /// `depth` submitting threads, each with engine `kind` on `fd` at depth 1.
    pub fn new(kind: EngineKind, fd: RawFd, depth: u32, region: Region) -> io::Result<Offload> {
        use std::sync::{Arc, Mutex, mpsc};
        let (work_tx, work_rx) = mpsc::channel::<Work>();
        let work_rx = Arc::new(Mutex::new(work_rx));
        let (done_tx, done_rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel::<io::Result<()>>();
        let mut threads = Vec::new();
        for i in 0..depth.max(1) {
            let (rx, tx, ready) = (work_rx.clone(), done_tx.clone(), ready_tx.clone());
            let t = std::thread::Builder::new()
                .name(format!("hb-submit-{i}"))
                .spawn(move || {
                    // Each thread's own engine, built in it (a libaio context per thread).
                    let mut e = match Engine::new(kind, fd, 1, region) {
                        Ok(e) => {
                            let _ = ready.send(Ok(()));
                            e
                        }
                        Err(e) => {
                            let _ = ready.send(Err(e));
                            return;
                        }
                    };
                    let mut out = [Done::default(); 1];
                    loop {
                        let w = {
                            let Ok(rx) = rx.lock() else { return };
                            match rx.recv() {
                                Ok(w) => w,
                                Err(_) => return,
                            }
                        };
                        let buf = w.buf as *mut u8;
                        let r = if kind.is_sync() {
                            Ok(Done {
                                slot: w.slot,
                                res: e.sync_io(w.dir, buf, w.off, w.len),
                            })
                        } else {
                            e.queue(0, w.dir, buf, w.off, w.len, w.prio);
                            e.submit().and_then(|()| e.reap(1, &mut out)).map(|_| Done {
                                slot: w.slot,
                                res: out[0].res,
                            })
                        };
                        if tx.send(r).is_err() {
                            return;
                        }
                    }
                })?;
            threads.push(t);
        }
        drop(ready_tx);
        let o = Offload {
            work: Some(work_tx),
            done: done_rx,
            pending: Vec::with_capacity(depth as usize),
            threads,
        };
        for _ in 0..depth.max(1) {
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(io::Error::other("a submitting thread ended at its start")),
            }
        }
        Ok(o)
    }

    fn submit(&mut self) -> io::Result<()> {
        let tx = self
            .work
            .as_ref()
            .expect("the pool lives until the engine is dropped");
        for w in self.pending.drain(..) {
            tx.send(w).map_err(|_| {
                io::Error::other("io_submit_mode=offload: the submitting threads ended")
            })?;
        }
        Ok(())
    }

    fn reap(&mut self, min: usize, out: &mut [Done], timeout_ns: Option<u64>) -> io::Result<usize> {
        use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
        let mut n = 0;
        while n < out.len() {
            let got = if n < min {
                match timeout_ns {
                    Some(ns) if n == 0 => {
                        match self.done.recv_timeout(std::time::Duration::from_nanos(ns)) {
                            Ok(r) => Some(r),
                            Err(RecvTimeoutError::Timeout) => None,
                            Err(RecvTimeoutError::Disconnected) => {
                                return Err(io::Error::other("the submitting threads ended"));
                            }
                        }
                    }
                    _ => Some(
                        self.done
                            .recv()
                            .map_err(|_| io::Error::other("the submitting threads ended"))?,
                    ),
                }
            } else {
                match self.done.try_recv() {
                    Ok(r) => Some(r),
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Disconnected) => {
                        return Err(io::Error::other("the submitting threads ended"));
                    }
                }
            };
            let Some(r) = got else { break };
            out[n] = r?;
            n += 1;
        }
        Ok(n)
    }
}

impl Drop for Offload {
    fn drop(&mut self) {
        // Closing the queue ends each thread after its current I/O.
        self.work = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// `ioctl` number of BLKDISCARD (`_IO(0x12, 119)`, linux/fs.h).
const BLKDISCARD: libc::c_ulong = 0x1277;

/// One trim of `len` bytes at `off` (fio's `do_io_u_trim`): BLKDISCARD on a block device;
/// on a regular file a hole punched (`fallocate(PUNCH_HOLE | KEEP_SIZE)`: the blocks are
/// freed, the length stays). Bytes trimmed, or −errno (EOPNOTSUPP where the filesystem
/// cannot punch holes, ENOTTY-like errors where the device cannot discard).
pub(super) fn trim(fd: RawFd, off: u64, len: u32) -> i64 {
    // SAFETY: fstat fills a zeroed struct; the ioctl reads a two-u64 range we own;
    // fallocate on our own descriptor.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) < 0 {
            return ret(-1);
        }
        let r = if st.st_mode & libc::S_IFMT == libc::S_IFBLK {
            let range: [u64; 2] = [off, u64::from(len)];
            // The request is `c_ulong` with glibc, `c_int` with musl.
            libc::ioctl(fd, BLKDISCARD as _, range.as_ptr())
        } else {
            libc::fallocate(
                fd,
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                off as libc::off_t,
                libc::off_t::from(len),
            )
        };
        if r < 0 { ret(-1) } else { i64::from(len) }
    }
}

#[inline(always)]
fn ret(r: i64) -> i64 {
    if r < 0 {
        -(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as i64)
    } else {
        r
    }
}

/// The part of a file the mmap engine maps (`off`, `len`), and whether it asks for
/// transparent huge pages (the engine's `thp` option: fio then maps the file privately and
/// advises `MADV_HUGEPAGE` on it, ignoring a refusal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Offset of the region in the file.
    pub off: u64,
    /// Its length.
    pub len: u64,
    /// mmap's `thp`.
    pub thp: bool,
}

impl Region {
    /// The region `off..off+len`, mapped shared (no `thp`).
    pub fn new(off: u64, len: u64) -> Region {
        Region {
            off,
            len,
            thp: false,
        }
    }
}

/// A mapping of a file region (shared; private with `thp`).
pub struct Map {
    /// The mapped file (trims punch or discard through it, as fio's mmap engine does).
    fd: RawFd,
    base: *mut u8,
    len: usize,
    region_off: u64,
    map_off: u64,
}

// SAFETY: the mapping is used by the one worker that owns it.
unsafe impl Send for Map {}

impl Map {
    fn new(fd: RawFd, r: Region) -> io::Result<Map> {
        let page = 4096u64;
        let map_off = r.off / page * page;
        let map_len = (r.off - map_off + r.len) as usize;
        // fio's mmap engine maps privately with `thp` (its writes then stay in the mapping's
        // own copy of the pages, as in fio).
        let share = if r.thp {
            libc::MAP_PRIVATE
        } else {
            libc::MAP_SHARED
        };
        // SAFETY: mapping a file descriptor we own; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                share,
                fd,
                map_off as i64,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        if r.thp {
            // SAFETY: advice on the mapping just made, of its own length. An advice the
            // kernel refuses (no transparent huge pages) is ignored, as fio ignores it.
            unsafe { libc::madvise(p, map_len, libc::MADV_HUGEPAGE) };
        }
        Ok(Map {
            fd,
            base: p.cast(),
            len: map_len,
            region_off: map_off,
            map_off,
        })
    }

    /// Tells the kernel how the mapping will be read (fio's `madvise` for `fadvise_hint`):
    /// random access turns off the readahead that would fill neighbouring pages.
    fn advise(&self, random: bool) -> io::Result<()> {
        let advice = if random {
            libc::MADV_RANDOM
        } else {
            libc::MADV_SEQUENTIAL
        };
        // SAFETY: advice on the mapping `new` made, of its own length.
        let r = unsafe { libc::madvise(self.base.cast(), self.len, advice) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    #[inline]
    fn copy(&mut self, dir: Dir, buf: *mut u8, off: u64, len: u32) -> i64 {
        // fio's mmap engine trims in its queue call (`do_io_u_trim`), not in the mapping.
        if dir == Dir::Trim {
            return trim(self.fd, off, len);
        }
        let at = (off - self.region_off) as usize;
        if at + len as usize > self.len {
            return -(libc::EINVAL as i64);
        }
        // SAFETY: bounds checked above; buf holds len bytes.
        unsafe {
            let m = self.base.add(at);
            match dir {
                Dir::Read => std::ptr::copy_nonoverlapping(m, buf, len as usize),
                Dir::Write => std::ptr::copy_nonoverlapping(buf, m, len as usize),
                Dir::Trim => unreachable!("trims returned above"),
            }
        }
        std::hint::black_box(buf);
        len as i64
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        let _ = self.map_off;
        // SAFETY: unmapping what `new` mapped.
        unsafe {
            libc::munmap(self.base.cast(), self.len);
        }
    }
}

// ---- libaio (Linux native AIO, raw syscalls) ----

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    data: u64,
    #[cfg(target_endian = "little")]
    key: u32,
    #[cfg(target_endian = "little")]
    rw_flags: i32,
    #[cfg(target_endian = "big")]
    rw_flags: i32,
    #[cfg(target_endian = "big")]
    key: u32,
    lio_opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const IOCB_CMD_PREAD: u16 = 0;
/// `aio_reqprio` holds the I/O's priority (linux/aio_abi.h).
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;
const IOCB_CMD_PWRITE: u16 = 1;

/// A Linux AIO context with its control blocks.
pub struct Aio {
    ctx: libc::c_ulong,
    fd: RawFd,
    iocbs: Vec<Iocb>,
    pending: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    inflight: usize,
    /// libaio's `userspace_reap`: a reap that waits for nothing reads the completion ring
    /// the kernel maps at the context's address instead of calling io_getevents.
    user_reap: bool,
}

/// The head of the ring Linux maps at an AIO context's address (fs/aio.c's `aio_ring`),
/// followed by `nr` events.
#[repr(C)]
struct AioRing {
    id: u32,
    nr: u32,
    head: u32,
    tail: u32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

// SAFETY: the pointers in `pending` point into `iocbs`, owned by the same value.
unsafe impl Send for Aio {}

impl Aio {
    fn new(fd: RawFd, depth: u32) -> io::Result<Aio> {
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the context id into ctx.
        let r = unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!(
                    "io_setup({depth}) failed: {e} (check /proc/sys/fs/aio-max-nr, or lower iodepth)"
                ),
            ));
        }
        let d = depth as usize;
        Ok(Aio {
            ctx,
            fd,
            iocbs: vec![Iocb::default(); d],
            pending: Vec::with_capacity(d),
            events: vec![IoEvent::default(); d],
            inflight: 0,
            user_reap: false,
        })
    }

    #[inline]
    fn queue(&mut self, slot: u32, dir: Dir, buf: *mut u8, off: u64, len: u32, prio: Option<u16>) {
        let cb = &mut self.iocbs[slot as usize];
        *cb = Iocb {
            data: slot as u64,
            lio_opcode: match dir {
                Dir::Read => IOCB_CMD_PREAD,
                Dir::Write => IOCB_CMD_PWRITE,
                Dir::Trim => unreachable!("libaio's trims are done in the queue call (trim_now)"),
            },
            fildes: self.fd as u32,
            buf: buf as u64,
            nbytes: len as u64,
            offset: off as i64,
            reqprio: prio.map_or(0, |p| p as i16),
            flags: if prio.is_some() { IOCB_FLAG_IOPRIO } else { 0 },
            ..Iocb::default()
        };
        self.pending.push(cb as *mut Iocb);
    }

    fn submit(&mut self) -> io::Result<()> {
        let mut done = 0;
        while done < self.pending.len() {
            // SAFETY: pending holds pointers to live iocbs; the kernel reads them.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    (self.pending.len() - done) as libc::c_long,
                    self.pending.as_mut_ptr().add(done),
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EAGAIN) && self.inflight > 0 {
                    // The kernel queue is full; caller reaps and we retry on the next round.
                    break;
                }
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                // The kernel's errno as it is: the clone's err= (fio's `io commit`).
                return Err(e);
            }
            done += r as usize;
            self.inflight += r as usize;
        }
        self.pending.drain(..done);
        Ok(())
    }

    /// Completions read from the kernel's ring without a system call (fio's
    /// `user_io_getevents`); `None` when the ring is not one this code knows.
    fn reap_user(&mut self, out: &mut [Done]) -> Option<usize> {
        use std::sync::atomic::{AtomicU32, Ordering};
        let ring = self.ctx as *mut AioRing;
        // SAFETY: the context id is the address of the ring the kernel mapped into this
        // process for the context's life; its header is read before anything else.
        unsafe {
            if (*ring).magic != AIO_RING_MAGIC || (*ring).incompat_features != 0 {
                return None;
            }
            let nr = (*ring).nr;
            let head_p = AtomicU32::from_ptr(&raw mut (*ring).head);
            let tail_p = AtomicU32::from_ptr(&raw mut (*ring).tail);
            let events = ring.add(1) as *const IoEvent;
            let mut n = 0;
            while n < out.len() {
                let head = head_p.load(Ordering::Relaxed);
                if head == tail_p.load(Ordering::Acquire) {
                    break;
                }
                let ev = std::ptr::read_volatile(events.add(head as usize));
                out[n] = Done {
                    slot: ev.data as u32,
                    res: ev.res,
                };
                head_p.store((head + 1) % nr, Ordering::Release);
                n += 1;
            }
            self.inflight -= n;
            Some(n)
        }
    }

    fn reap(&mut self, min: usize, out: &mut [Done], timeout_ns: Option<u64>) -> io::Result<usize> {
        if self.user_reap
            && min == 0
            && let Some(n) = self.reap_user(out)
        {
            return Ok(n);
        }
        let max = out.len().min(self.events.len());
        let mut ts = timeout_ns.map(timespec);
        let tsp = ts
            .as_mut()
            .map_or(std::ptr::null_mut(), |t| t as *mut libc::timespec);
        loop {
            // SAFETY: events has room for `max` entries; tsp is null or points at ts.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    max as libc::c_long,
                    self.events.as_mut_ptr(),
                    tsp,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(io::Error::new(
                    e.kind(),
                    format!("io_getevents failed: {e}"),
                ));
            }
            let n = r as usize;
            for (o, ev) in out.iter_mut().zip(&self.events[..n]) {
                *o = Done {
                    slot: ev.data as u32,
                    res: ev.res,
                };
            }
            self.inflight -= n;
            return Ok(n);
        }
    }
}

impl Drop for Aio {
    fn drop(&mut self) {
        // io_destroy waits for I/O still in flight, so buffers outlive the kernel's use.
        // SAFETY: destroying the context this value created.
        unsafe {
            libc::syscall(libc::SYS_io_destroy, self.ctx);
        }
    }
}

// ---- posixaio (the C library's POSIX AIO) ----

/// How many in-flight requests one `aio_suspend` waits on (fio's `SUSPEND_ENTRIES`): the
/// first ones found still in progress.
const SUSPEND_ENTRIES: usize = 8;

/// fio's `posixaio` engine: each read or write handed to the C library (`aio_read`,
/// `aio_write`; glibc runs them on its own threads, musl on a thread per request) when the
/// worker submits it, its completion learnt by polling every request in flight with
/// `aio_error` (then `aio_return`) and, when too few are done, sleeping in `aio_suspend` on
/// up to 8 of those still in progress, as fio's `getevents` does. The control blocks are
/// one per slot, allocated with the engine and never moved while the library holds them.
pub struct PosixAio {
    fd: RawFd,
    cbs: Vec<libc::aiocb>,
    /// Slots handed to the library whose completion was not reaped yet.
    flight: Vec<bool>,
    inflight: usize,
    /// Slots queued, not yet handed to the library.
    pending: Vec<u32>,
    /// Requests the library refused (bytes or −errno), returned by the next reap.
    failed: Vec<Done>,
}

// SAFETY: the control blocks are owned by this value; the library only reads the buffers
// and writes the blocks' own status, and drop waits for every request in flight.
unsafe impl Send for PosixAio {}

impl PosixAio {
    fn new(fd: RawFd, depth: u32) -> PosixAio {
        let d = depth.max(1) as usize;
        PosixAio {
            fd,
            // SAFETY: aiocb is a plain C struct; all zeroes is its initial state.
            cbs: (0..d).map(|_| unsafe { std::mem::zeroed() }).collect(),
            flight: vec![false; d],
            inflight: 0,
            pending: Vec::with_capacity(d),
            failed: Vec::with_capacity(d),
        }
    }

    #[inline]
    fn queue(&mut self, slot: u32, dir: Dir, buf: *mut u8, off: u64, len: u32) {
        let cb = &mut self.cbs[slot as usize];
        cb.aio_fildes = self.fd;
        cb.aio_lio_opcode = match dir {
            Dir::Read => libc::LIO_READ,
            Dir::Write => libc::LIO_WRITE,
            Dir::Trim => unreachable!("posixaio's trims are done in the queue call (trim_now)"),
        };
        cb.aio_reqprio = 0;
        cb.aio_buf = buf.cast();
        cb.aio_nbytes = len as usize;
        cb.aio_offset = off as libc::off_t;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        self.pending.push(slot);
    }

    /// Hands the queued requests to the library; a request it refuses for lack of
    /// resources (`EAGAIN`) with others in flight waits for the next round (fio's
    /// `FIO_Q_BUSY`), any other refusal completes the I/O with the error.
    fn submit(&mut self) -> io::Result<()> {
        let mut done = 0;
        while done < self.pending.len() {
            let slot = self.pending[done] as usize;
            let cb: *mut libc::aiocb = &mut self.cbs[slot];
            // SAFETY: cb is this slot's block, filled by queue; its buffer is the
            // worker's slot buffer, which outlives the request (drop waits for it).
            let r = unsafe {
                if (*cb).aio_lio_opcode == libc::LIO_READ {
                    libc::aio_read(cb)
                } else {
                    libc::aio_write(cb)
                }
            };
            if r != 0 {
                let e = io::Error::last_os_error();
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                if errno == libc::EAGAIN && self.inflight > 0 {
                    break;
                }
                self.failed.push(Done {
                    slot: slot as u32,
                    res: -i64::from(errno),
                });
            } else {
                self.flight[slot] = true;
                self.inflight += 1;
            }
            done += 1;
        }
        self.pending.drain(..done);
        Ok(())
    }

    fn reap(&mut self, min: usize, out: &mut [Done], timeout_ns: Option<u64>) -> io::Result<usize> {
        let start = timeout_ns.map(|_| std::time::Instant::now());
        let mut n = 0;
        while n < out.len() {
            let Some(f) = self.failed.pop() else { break };
            out[n] = f;
            n += 1;
        }
        let mut list: [*const libc::aiocb; SUSPEND_ENTRIES] = [std::ptr::null(); SUSPEND_ENTRIES];
        loop {
            let mut waiting = 0;
            for slot in 0..self.cbs.len() {
                if !self.flight[slot] {
                    continue;
                }
                let cb: *mut libc::aiocb = &mut self.cbs[slot];
                // SAFETY: cb is a block handed to the library and not yet reaped.
                let err = unsafe { libc::aio_error(cb) };
                if err == libc::EINPROGRESS || n == out.len() {
                    if err == libc::EINPROGRESS && waiting < SUSPEND_ENTRIES {
                        list[waiting] = cb;
                        waiting += 1;
                    }
                    continue;
                }
                let res = match err {
                    // SAFETY: the request is done; aio_return reaps it once.
                    0 => (unsafe { libc::aio_return(cb) }) as i64,
                    libc::ECANCELED => 0,
                    e if e > 0 => {
                        // SAFETY: as above: the request's status is released.
                        unsafe { libc::aio_return(cb) };
                        -i64::from(e)
                    }
                    _ => -i64::from(
                        io::Error::last_os_error()
                            .raw_os_error()
                            .unwrap_or(libc::EIO),
                    ),
                };
                self.flight[slot] = false;
                self.inflight -= 1;
                out[n] = Done {
                    slot: slot as u32,
                    res,
                };
                n += 1;
            }
            if n >= min || n == out.len() || waiting == 0 {
                return Ok(n);
            }
            let left = match (timeout_ns, start) {
                (Some(t), Some(s)) => {
                    let gone = s.elapsed().as_nanos() as u64;
                    if gone >= t {
                        return Ok(n);
                    }
                    Some(timespec(t - gone))
                }
                _ => None,
            };
            let tsp = left
                .as_ref()
                .map_or(std::ptr::null(), |t| t as *const libc::timespec);
            // SAFETY: list holds `waiting` blocks in flight; tsp is null or a timespec.
            // EAGAIN (the time ran out) and EINTR go round again.
            unsafe { libc::aio_suspend(list.as_ptr(), waiting as libc::c_int, tsp) };
        }
    }
}

impl Drop for PosixAio {
    fn drop(&mut self) {
        // The library may still write the buffers or the blocks: wait for every request.
        for slot in 0..self.cbs.len() {
            if !self.flight[slot] {
                continue;
            }
            let cb: *mut libc::aiocb = &mut self.cbs[slot];
            // SAFETY: cb is in flight; waiting on it alone until it is done.
            unsafe {
                while libc::aio_error(cb) == libc::EINPROGRESS {
                    let list = [cb as *const libc::aiocb];
                    libc::aio_suspend(list.as_ptr(), 1, std::ptr::null());
                }
                libc::aio_return(cb);
            }
        }
    }
}

// ---- io_uring (raw syscalls) ----

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct SqOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    flags: u32,
    dropped: u32,
    array: u32,
    resv1: u32,
    user_addr: u64,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct CqOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    overflow: u32,
    cqes: u32,
    flags: u32,
    resv1: u32,
    user_addr: u64,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct UringParams {
    sq_entries: u32,
    cq_entries: u32,
    flags: u32,
    sq_thread_cpu: u32,
    sq_thread_idle: u32,
    features: u32,
    wq_fd: u32,
    resv: [u32; 3],
    sq_off: SqOffsets,
    cq_off: CqOffsets,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Sqe {
    opcode: u8,
    flags: u8,
    ioprio: u16,
    fd: i32,
    off: u64,
    addr: u64,
    len: u32,
    rw_flags: u32,
    user_data: u64,
    buf_index: u16,
    personality: u16,
    splice_fd_in: i32,
    addr3: u64,
    pad: u64,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Cqe {
    user_data: u64,
    res: i32,
    flags: u32,
}

const IORING_OFF_SQ_RING: i64 = 0;
const IORING_OFF_CQ_RING: i64 = 0x800_0000;
const IORING_OFF_SQES: i64 = 0x1000_0000;
const IORING_FEAT_SINGLE_MMAP: u32 = 1;
const IORING_ENTER_GETEVENTS: u32 = 1;
const IORING_ENTER_EXT_ARG: u32 = 1 << 3;
const IORING_FEAT_EXT_ARG: u32 = 1 << 8;

/// `struct __kernel_timespec`.
#[repr(C)]
struct KernelTimespec {
    tv_sec: i64,
    tv_nsec: i64,
}

/// `struct io_uring_getevents_arg` (IORING_ENTER_EXT_ARG).
#[repr(C)]
struct GeteventsArg {
    sigmask: u64,
    sigmask_sz: u32,
    pad: u32,
    ts: u64,
}

/// A relative timeout for io_getevents.
fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as _,
        tv_nsec: (ns % 1_000_000_000) as _,
    }
}

const IORING_OP_READ: u8 = 22;
const IORING_OP_READ_FIXED: u8 = 4;
const IORING_OP_WRITE_FIXED: u8 = 5;
const IORING_SETUP_IOPOLL: u32 = 1;
const IORING_SETUP_SQPOLL: u32 = 1 << 1;
const IORING_SETUP_SQ_AFF: u32 = 1 << 2;
const IORING_ENTER_SQ_WAKEUP: u32 = 1 << 1;
const IOSQE_FIXED_FILE: u8 = 1;
const IOSQE_ASYNC: u8 = 1 << 4;
const IORING_OP_READV: u8 = 1;
const IORING_OP_WRITEV: u8 = 2;
const IORING_REGISTER_PROBE: u32 = 8;
const IO_URING_OP_SUPPORTED: u16 = 1;
const IORING_REGISTER_BUFFERS: u32 = 0;
const IORING_REGISTER_FILES: u32 = 2;
const IORING_SETUP_COOP_TASKRUN: u32 = 1 << 8;
const IORING_SETUP_SINGLE_ISSUER: u32 = 1 << 12;
const IORING_SETUP_DEFER_TASKRUN: u32 = 1 << 13;
const IORING_OP_WRITE: u8 = 23;

struct Mapping {
    ptr: *mut u8,
    len: usize,
}

impl Mapping {
    fn new(fd: RawFd, len: usize, off: i64) -> io::Result<Mapping> {
        // SAFETY: mapping the ring fd at the offsets the kernel defines; checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                off,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping { ptr: p.cast(), len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping what `new` mapped.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

/// An io_uring instance with its rings mapped.
pub struct Uring {
    ring_fd: RawFd,
    fd: RawFd,
    /// With registered files: the index of the file the next I/Os go to.
    file_index: i32,
    _sq_map: Mapping,
    _cq_map: Option<Mapping>,
    _sqe_map: Mapping,
    sq_head: *const AtomicU32,
    sq_tail: *const AtomicU32,
    sq_mask: u32,
    sq_array: *mut u32,
    sqes: *mut Sqe,
    cq_head: *const AtomicU32,
    cq_tail: *const AtomicU32,
    cq_mask: u32,
    cqes: *const Cqe,
    local_tail: u32,
    to_submit: u32,
    /// The kernel takes a timeout with the wait (IORING_FEAT_EXT_ARG, Linux 5.11).
    ext_arg: bool,
    /// The ring's options.
    opts: UringOpts,
    /// The buffers are registered (`fixedbufs`): I/Os use the fixed opcodes.
    fixed: bool,
    /// The sqe `ioprio` of an I/O without one of its own (the clone's priority).
    default_ioprio: u16,
    /// Reads and writes are `READV`/`WRITEV` of `iovecs[slot]` (`nonvectored=0`, or a
    /// kernel without the plain opcodes).
    vectored: bool,
    /// One iovec per slot for the vectored opcodes (the kernel reads it when the I/O is
    /// submitted; never reallocated).
    iovecs: Box<[libc::iovec]>,
    /// Requests prepared since the last one flagged `IOSQE_ASYNC` (`force_async`).
    prepped: u32,
}

// SAFETY: the ring is used by the one worker thread that owns it.
unsafe impl Send for Uring {}

impl Uring {
    fn new(fd: RawFd, depth: u32, opts: UringOpts) -> io::Result<Uring> {
        // The ring belongs to the one thread that builds and uses it: completions run in that
        // thread when it asks for them (no interrupting task work), as fio sets it up on
        // kernels that have these flags; older kernels get a plain ring.
        let mut p = UringParams::default();
        let mut ring_fd = -1;
        // fio's hipri and sqthread_poll are setup flags of their own; the task-run flags
        // are dropped where the kernel refuses them with these (SQPOLL takes none of them).
        let extra = if opts.hipri { IORING_SETUP_IOPOLL } else { 0 }
            | match (opts.sqthread_poll, opts.sq_cpu) {
                (true, Some(_)) => IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF,
                (true, None) => IORING_SETUP_SQPOLL,
                (false, _) => 0,
            };
        for flags in [
            IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
            IORING_SETUP_COOP_TASKRUN,
            0,
        ] {
            p = UringParams {
                flags: flags | extra,
                sq_thread_cpu: opts.sq_cpu.filter(|_| opts.sqthread_poll).unwrap_or(0),
                ..UringParams::default()
            };
            // SAFETY: io_uring_setup fills `p`; the result is checked.
            ring_fd = unsafe {
                libc::syscall(
                    libc::SYS_io_uring_setup,
                    depth.next_power_of_two() as libc::c_long,
                    &mut p as *mut UringParams,
                )
            } as i32;
            if ring_fd >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
                break;
            }
        }
        if ring_fd < 0 {
            let e = io::Error::last_os_error();
            let hint = match e.raw_os_error() {
                Some(libc::EPERM) => {
                    " (io_uring is disabled: /proc/sys/kernel/io_uring_disabled, or a container's seccomp policy)"
                }
                Some(libc::ENOSYS) => " (this kernel has no io_uring)",
                Some(libc::ENOMEM) => {
                    " (raise the locked-memory limit, ulimit -l, or lower iodepth)"
                }
                _ => "",
            };
            return Err(io::Error::new(
                e.kind(),
                format!(
                    "io_uring_setup failed: {e}{hint}; ioengine=libaio or psync work without it"
                ),
            ));
        }
        let close_on_err = |e: io::Error| {
            // SAFETY: closing the ring fd we just created.
            unsafe { libc::close(ring_fd) };
            e
        };
        let sq_len = p.sq_off.array as usize + p.sq_entries as usize * 4;
        let cq_len = p.cq_off.cqes as usize + p.cq_entries as usize * std::mem::size_of::<Cqe>();
        let single = p.features & IORING_FEAT_SINGLE_MMAP != 0;
        let sq_map = Mapping::new(
            ring_fd,
            if single { sq_len.max(cq_len) } else { sq_len },
            IORING_OFF_SQ_RING,
        )
        .map_err(close_on_err)?;
        let cq_map = if single {
            None
        } else {
            Some(Mapping::new(ring_fd, cq_len, IORING_OFF_CQ_RING).map_err(close_on_err)?)
        };
        let sqe_map = Mapping::new(
            ring_fd,
            p.sq_entries as usize * std::mem::size_of::<Sqe>(),
            IORING_OFF_SQES,
        )
        .map_err(close_on_err)?;
        let sq = sq_map.ptr;
        let cq = cq_map.as_ref().map_or(sq, |m| m.ptr);
        // SAFETY: offsets come from the kernel and lie inside the mappings.
        unsafe {
            let sq_mask = *(sq.add(p.sq_off.ring_mask as usize) as *const u32);
            let cq_mask = *(cq.add(p.cq_off.ring_mask as usize) as *const u32);
            let sq_tail = sq.add(p.sq_off.tail as usize) as *const AtomicU32;
            let mut u = Uring {
                ring_fd,
                fd,
                sq_head: sq.add(p.sq_off.head as usize) as *const AtomicU32,
                sq_tail,
                sq_mask,
                sq_array: sq.add(p.sq_off.array as usize) as *mut u32,
                sqes: sqe_map.ptr as *mut Sqe,
                cq_head: cq.add(p.cq_off.head as usize) as *const AtomicU32,
                cq_tail: cq.add(p.cq_off.tail as usize) as *const AtomicU32,
                cq_mask,
                cqes: cq.add(p.cq_off.cqes as usize) as *const Cqe,
                local_tail: (*sq_tail).load(Ordering::Relaxed),
                to_submit: 0,
                ext_arg: p.features & IORING_FEAT_EXT_ARG != 0,
                opts,
                file_index: 0,
                fixed: false,
                default_ioprio: 0,
                vectored: false,
                iovecs: vec![
                    libc::iovec {
                        iov_base: std::ptr::null_mut(),
                        iov_len: 0,
                    };
                    depth.max(1) as usize
                ]
                .into_boxed_slice(),
                prepped: 0,
                _sq_map: sq_map,
                _cq_map: cq_map,
                _sqe_map: sqe_map,
            };
            if opts.registerfiles {
                // The one file at index 0 (the ring is closed by Drop on failure).
                let fds = [fd];
                u.register(IORING_REGISTER_FILES, fds.as_ptr().cast(), 1)
                    .map_err(|e| {
                        io::Error::new(
                            e.kind(),
                            format!("registerfiles: io_uring_register(FILES) failed: {e}"),
                        )
                    })?;
            }
            u.vectored = match opts.nonvectored {
                Some(plain) => !plain,
                None => !u.has_plain_rw(),
            };
            Ok(u)
        }
    }

    /// Whether the kernel has `IORING_OP_READ` and `IORING_OP_WRITE`
    /// (`IORING_REGISTER_PROBE`; fio's probe for `nonvectored=-1`: false when the probe
    /// fails).
    fn has_plain_rw(&self) -> bool {
        // struct io_uring_probe: 16 bytes, then 256 io_uring_probe_op of 8 bytes
        // (op u8, resv u8, flags u16, resv2 u32).
        let mut p = vec![0u64; 2 + 256];
        if self
            .register(IORING_REGISTER_PROBE, p.as_mut_ptr().cast(), 256)
            .is_err()
        {
            return false;
        }
        // SAFETY: `p` is 2064 bytes, the probe's header and 256 ops.
        let bytes = unsafe { std::slice::from_raw_parts(p.as_ptr().cast::<u8>(), p.len() * 8) };
        let ops_len = bytes[1];
        let flags = |op: u8| {
            let at = 16 + usize::from(op) * 8 + 2;
            u16::from_ne_bytes([bytes[at], bytes[at + 1]])
        };
        IORING_OP_WRITE <= ops_len
            && flags(IORING_OP_READ) & IO_URING_OP_SUPPORTED != 0
            && flags(IORING_OP_WRITE) & IO_URING_OP_SUPPORTED != 0
    }

    /// Counts one request prepared (`force_async`): true for every Nth, which gets
    /// `IOSQE_ASYNC`.
    #[inline]
    fn prep_async(&mut self) -> bool {
        let n = self.opts.force_async;
        if n == 0 {
            return false;
        }
        self.prepped += 1;
        if self.prepped == n {
            self.prepped = 0;
            return true;
        }
        false
    }

    /// io_uring_register of `nr` items at `arg`.
    fn register(&self, op: u32, arg: *const libc::c_void, nr: u32) -> io::Result<()> {
        // SAFETY: io_uring_register on our ring; `arg` points at `nr` items of the kind `op`
        // takes, alive for the call.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                self.ring_fd as libc::c_long,
                op as libc::c_long,
                arg,
                nr as libc::c_long,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// fio's `fixedbufs`: `n` slots of `bufs` registered; the I/Os then use the fixed
    /// opcodes with the slot as the buffer index.
    fn register_buffers(&mut self, bufs: &Buffers, n: u32) -> io::Result<()> {
        let iov: Vec<libc::iovec> = (0..n)
            .map(|i| libc::iovec {
                iov_base: bufs.slot(i).cast(),
                iov_len: bufs.len,
            })
            .collect();
        self.register(IORING_REGISTER_BUFFERS, iov.as_ptr().cast(), n)
            .map_err(|e| {
                let hint = if e.raw_os_error() == Some(libc::ENOMEM) {
                    " (the buffers are locked in memory: raise ulimit -l, or lower iodepth or bs)"
                } else {
                    ""
                };
                io::Error::new(
                    e.kind(),
                    format!("fixedbufs: io_uring_register(BUFFERS) failed: {e}{hint}"),
                )
            })?;
        self.fixed = true;
        Ok(())
    }

    #[inline]
    fn queue(&mut self, slot: u32, dir: Dir, buf: *mut u8, off: u64, len: u32, prio: Option<u16>) {
        let idx = self.local_tail & self.sq_mask;
        let (opcode, addr, n) = match (dir, self.fixed, self.vectored) {
            (Dir::Read, true, _) => (IORING_OP_READ_FIXED, buf as u64, len),
            (Dir::Write, true, _) => (IORING_OP_WRITE_FIXED, buf as u64, len),
            (Dir::Read, false, false) => (IORING_OP_READ, buf as u64, len),
            (Dir::Write, false, false) => (IORING_OP_WRITE, buf as u64, len),
            (Dir::Read | Dir::Write, false, true) => {
                let v = &mut self.iovecs[slot as usize];
                v.iov_base = buf.cast();
                v.iov_len = len as usize;
                let op = if dir == Dir::Read {
                    IORING_OP_READV
                } else {
                    IORING_OP_WRITEV
                };
                (op, v as *const libc::iovec as u64, 1)
            }
            (Dir::Trim, _, _) => {
                unreachable!("io_uring's trims are done in the queue call (trim_now)")
            }
        };
        let mut flags = if self.opts.registerfiles {
            IOSQE_FIXED_FILE
        } else {
            0
        };
        if self.prep_async() {
            flags |= IOSQE_ASYNC;
        }
        // SAFETY: idx is masked into the SQ ring; the caller never queues more than the
        // ring holds (depth ≤ entries).
        unsafe {
            *self.sqes.add(idx as usize) = Sqe {
                opcode,
                flags,
                fd: if self.opts.registerfiles {
                    self.file_index
                } else {
                    self.fd
                },
                ioprio: prio.unwrap_or(self.default_ioprio),
                off,
                addr,
                len: n,
                user_data: slot as u64,
                buf_index: if self.fixed { slot as u16 } else { 0 },
                rw_flags: self.opts.rw_flags,
                ..Sqe::default()
            };
            *self.sq_array.add(idx as usize) = idx;
        }
        self.local_tail = self.local_tail.wrapping_add(1);
        self.to_submit += 1;
    }

    fn enter(&self, submit: u32, min: u32, flags: u32) -> io::Result<u32> {
        self.enter_within(submit, min, flags, None)
    }

    /// io_uring_enter; with `timeout_ns` (and a kernel that has IORING_FEAT_EXT_ARG) the wait
    /// for `min` completions ends after that long, returning 0.
    fn enter_within(
        &self,
        submit: u32,
        min: u32,
        flags: u32,
        timeout_ns: Option<u64>,
    ) -> io::Result<u32> {
        let ts = timeout_ns
            .filter(|_| self.ext_arg)
            .map(|ns| KernelTimespec {
                tv_sec: (ns / 1_000_000_000) as i64,
                tv_nsec: (ns % 1_000_000_000) as i64,
            });
        let arg = ts.as_ref().map(|t| GeteventsArg {
            sigmask: 0,
            sigmask_sz: 0,
            pad: 0,
            ts: t as *const KernelTimespec as u64,
        });
        let (flags, argp, argsz) = match &arg {
            Some(a) => (
                flags | IORING_ENTER_EXT_ARG,
                a as *const GeteventsArg as *const libc::c_void,
                std::mem::size_of::<GeteventsArg>(),
            ),
            None => (flags, std::ptr::null(), 0usize),
        };
        loop {
            // SAFETY: io_uring_enter on our ring fd; argp is null (no signal mask) or points
            // at a getevents argument whose timespec outlives the call.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_uring_enter,
                    self.ring_fd,
                    submit,
                    min,
                    flags,
                    argp,
                    argsz,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                if e.raw_os_error() == Some(libc::ETIME) && ts.is_some() {
                    return Ok(0);
                }
                return Err(io::Error::new(
                    e.kind(),
                    format!("io_uring_enter failed: {e}"),
                ));
            }
            return Ok(r as u32);
        }
    }

    fn submit(&mut self) -> io::Result<()> {
        if self.to_submit == 0 {
            return Ok(());
        }
        // SAFETY: the tail pointer lies in the mapped SQ ring.
        unsafe { (*self.sq_tail).store(self.local_tail, Ordering::Release) };
        let mut left = self.to_submit;
        while left > 0 {
            // GETEVENTS with no minimum: on a DEFER_TASKRUN ring completions are only posted
            // when the task enters with it, so this submit also posts what has finished and
            // the next reap usually finds it in the ring without another syscall.
            // With sqthread_poll the kernel thread submits; waking it is harmless when it
            // is awake and needed when it went idle.
            let wake = if self.opts.sqthread_poll {
                IORING_ENTER_SQ_WAKEUP
            } else {
                0
            };
            let n = self.enter(left, 0, IORING_ENTER_GETEVENTS | wake)?;
            if n == 0 {
                return Err(io::Error::other("io_uring_enter submitted nothing"));
            }
            left -= n.min(left);
        }
        self.to_submit = 0;
        let _ = self.sq_head;
        Ok(())
    }

    fn reap(&mut self, min: usize, out: &mut [Done], timeout_ns: Option<u64>) -> io::Result<usize> {
        let mut waited = false;
        loop {
            // SAFETY: head/tail lie in the mapped CQ ring; entries between them are valid.
            let (head, tail) = unsafe {
                (
                    (*self.cq_head).load(Ordering::Relaxed),
                    (*self.cq_tail).load(Ordering::Acquire),
                )
            };
            let avail = tail.wrapping_sub(head) as usize;
            if avail >= min.max(1) || min == 0 || (waited && avail > 0) {
                let n = avail.min(out.len());
                for (i, o) in out.iter_mut().take(n).enumerate() {
                    // SAFETY: index masked into the CQ ring.
                    let c = unsafe {
                        *self
                            .cqes
                            .add((head.wrapping_add(i as u32) & self.cq_mask) as usize)
                    };
                    *o = Done {
                        slot: c.user_data as u32,
                        res: c.res as i64,
                    };
                }
                // SAFETY: publishing the new head in the mapped CQ ring.
                unsafe { (*self.cq_head).store(head.wrapping_add(n as u32), Ordering::Release) };
                return Ok(n);
            }
            if waited && timeout_ns.is_some() {
                return Ok(0);
            }
            self.enter_within(0, (min - avail) as u32, IORING_ENTER_GETEVENTS, timeout_ns)?;
            waited = true;
        }
    }
}

impl Drop for Uring {
    fn drop(&mut self) {
        // SAFETY: closing our ring fd (the kernel finishes or cancels what is in flight; the
        // worker drains its I/O before dropping the engine).
        unsafe {
            libc::close(self.ring_fd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_block_layouts_match_the_kernel_abi() {
        assert_eq!(std::mem::size_of::<Iocb>(), 64);
        assert_eq!(std::mem::size_of::<IoEvent>(), 32);
        assert_eq!(std::mem::size_of::<Sqe>(), 64);
        assert_eq!(std::mem::size_of::<Cqe>(), 16);
        assert_eq!(std::mem::size_of::<UringParams>(), 120);
        assert_eq!(std::mem::size_of::<GeteventsArg>(), 24);
    }

    fn roundtrip(kind: EngineKind) {
        use std::os::fd::AsRawFd;
        let dir = std::env::temp_dir().join(format!(
            "wt-fio-engine-{}-{}",
            kind.name(),
            std::process::id()
        ));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&dir)
            .unwrap();
        f.set_len(1 << 16).unwrap();
        let bufs = Buffers::new(4, 4096, 7).unwrap();
        let mut e = match Engine::new(kind, f.as_raw_fd(), 4, Region::new(0, 1 << 16)) {
            Ok(e) => e,
            Err(err) => {
                // io_uring may be disabled where tests run; say so rather than fail.
                eprintln!("{}: skipped: {err}", kind.name());
                let _ = std::fs::remove_file(&dir);
                return;
            }
        };
        let want: Vec<u8> = (0..4096).map(|i| unsafe { *bufs.slot(0).add(i) }).collect();
        let mut done = [Done::default(); 4];
        if kind.is_sync() {
            assert_eq!(e.sync_io(Dir::Write, bufs.slot(0), 8192, 4096), 4096);
            assert_eq!(e.sync_io(Dir::Read, bufs.slot(1), 8192, 4096), 4096);
        } else {
            e.queue(0, Dir::Write, bufs.slot(0), 8192, 4096, None);
            e.submit().unwrap();
            let n = e.reap(1, &mut done).unwrap();
            assert_eq!((n, done[0].slot, done[0].res), (1, 0, 4096));
            e.queue(1, Dir::Read, bufs.slot(1), 8192, 4096, None);
            e.queue(2, Dir::Read, bufs.slot(2), 0, 4096, Some((2 << 13) | 4));
            e.submit().unwrap();
            let mut got = 0;
            while got < 2 {
                got += e.reap(1, &mut done[got..]).unwrap();
            }
            assert!(done[..2].iter().all(|d| d.res == 4096));
        }
        let back: Vec<u8> = (0..4096).map(|i| unsafe { *bufs.slot(1).add(i) }).collect();
        assert_eq!(back, want, "{}: data read back differs", kind.name());
        drop(e);
        let _ = std::fs::remove_file(&dir);
    }

    #[test]
    fn every_engine_writes_and_reads_back() {
        for k in [
            EngineKind::Psync,
            EngineKind::Sync,
            EngineKind::Vsync,
            EngineKind::Pvsync,
            EngineKind::Pvsync2,
            EngineKind::Mmap,
            EngineKind::Libaio,
            EngineKind::Posixaio,
            EngineKind::IoUring,
        ] {
            roundtrip(k);
        }
    }

    /// The sqes io_uring's `nonvectored` and `force_async` build, read back from the
    /// ring before they are submitted (the kernel shows no opcode to strace), then run:
    /// the vectored ones move the same data.
    #[test]
    fn uring_sqes_follow_nonvectored_and_force_async_as_fio() {
        use std::os::fd::AsRawFd;
        let f = super::super::engines::scratch("uring-sqes");
        f.set_len(1 << 16).unwrap();
        let bufs = Buffers::new(4, 4096, 7).unwrap();
        let ring = |nonvectored, force_async| {
            Uring::new(
                f.as_raw_fd(),
                4,
                UringOpts {
                    nonvectored,
                    force_async,
                    ..Default::default()
                },
            )
        };
        let mut u = match ring(Some(false), 2) {
            Ok(u) => u,
            Err(e) => {
                // io_uring may be disabled where tests run; say so rather than fail.
                eprintln!("skipped: {e}");
                return;
            }
        };
        // (opcode, flags, addr, len) of the sqe at ring index i.
        let sqe = |u: &Uring, i: u32| {
            // SAFETY: a queued entry of the mapped sqe array.
            let q = unsafe { *u.sqes.add((i & u.sq_mask) as usize) };
            (q.opcode, q.flags, q.addr, q.len)
        };
        let t0 = u.local_tail;
        u.queue(0, Dir::Write, bufs.slot(0), 0, 4096, None);
        u.queue(1, Dir::Write, bufs.slot(1), 4096, 4096, None);
        // A trim is prepared too: fio counts it towards force_async.
        let mut e = Engine::Uring(Box::new(u));
        // (Its result is the filesystem's: punching holes may not be supported there.)
        let _ = e.trim_now(1 << 20, 4096);
        let Engine::Uring(mut u) = e else {
            unreachable!()
        };
        u.queue(2, Dir::Read, bufs.slot(2), 0, 4096, None);
        u.queue(3, Dir::Read, bufs.slot(3), 4096, 4096, None);
        let iov = |slot: usize| &u.iovecs[slot] as *const libc::iovec as u64;
        // force_async=2: the second request, then the fourth — the trim was the third.
        assert_eq!(sqe(&u, t0), (IORING_OP_WRITEV, 0, iov(0), 1));
        assert_eq!(sqe(&u, t0 + 1), (IORING_OP_WRITEV, IOSQE_ASYNC, iov(1), 1));
        assert_eq!(sqe(&u, t0 + 2), (IORING_OP_READV, IOSQE_ASYNC, iov(2), 1));
        assert_eq!(sqe(&u, t0 + 3), (IORING_OP_READV, 0, iov(3), 1));
        assert_eq!(u.prepped, 1);
        assert_eq!(u.iovecs[2].iov_base, bufs.slot(2).cast());
        assert_eq!(u.iovecs[2].iov_len, 4096);
        // The writes first (the reads of the same blocks after them).
        let mut done = [Done::default(); 4];
        u.to_submit = 2;
        let keep = u.local_tail;
        u.local_tail = t0 + 2;
        u.submit().unwrap();
        let mut got = 0;
        while got < 2 {
            got += u.reap(1, &mut done[got..], None).unwrap();
        }
        u.local_tail = keep;
        u.to_submit = 2;
        u.submit().unwrap();
        while got < 4 {
            got += u.reap(1, &mut done[got..], None).unwrap();
        }
        assert!(done.iter().all(|d| d.res == 4096), "{done:?}");
        for (w, r) in [(0, 2), (1, 3)] {
            // SAFETY: slots of 4096 bytes.
            let (a, b) = unsafe {
                (
                    std::slice::from_raw_parts(bufs.slot(w), 4096),
                    std::slice::from_raw_parts(bufs.slot(r), 4096),
                )
            };
            assert_eq!(a, b, "slot {r} read back what slot {w} wrote");
        }
        drop(u);
        // force_async=1: every request; the plain opcodes (nonvectored=1, and the default
        // on a kernel that has them, as this test's).
        for nv in [Some(true), None] {
            let mut u = ring(nv, 1).unwrap();
            let t0 = u.local_tail;
            u.queue(0, Dir::Read, bufs.slot(0), 0, 4096, None);
            u.queue(1, Dir::Write, bufs.slot(1), 0, 512, None);
            assert_eq!(
                sqe(&u, t0),
                (IORING_OP_READ, IOSQE_ASYNC, bufs.slot(0) as u64, 4096),
                "{nv:?}"
            );
            assert_eq!(
                sqe(&u, t0 + 1),
                (IORING_OP_WRITE, IOSQE_ASYNC, bufs.slot(1) as u64, 512),
                "{nv:?}"
            );
        }
        // No force_async: no IOSQE_ASYNC.
        let mut u = ring(Some(true), 0).unwrap();
        let t0 = u.local_tail;
        for i in 0..4 {
            u.queue(i, Dir::Read, bufs.slot(i), 0, 4096, None);
            assert_eq!(sqe(&u, t0 + i).1, 0);
        }
    }

    #[test]
    fn hipri_percentage_draws_as_fio() {
        // fio 3.33, pvsync2 rw=read size=64k bs=4k hipri hipri_percentage=50 (strace):
        // RWF_HIPRI on the I/Os at these block numbers of the 16.
        let p = Pv2::new(
            Pv2Opts {
                hipri: true,
                hipri_percentage: 50,
                ..Default::default()
            },
            false,
        );
        let hipri: Vec<usize> = (0..16)
            .filter(|_| p.next_flags() & libc::RWF_HIPRI != 0)
            .collect();
        assert_eq!(hipri, [7, 8, 9, 12, 15]);
        let all = Pv2::new(
            Pv2Opts {
                hipri: true,
                ..Default::default()
            },
            true,
        );
        assert!((0..100).all(|_| all.next_flags() == libc::RWF_HIPRI));
        let uncached = Pv2::new(
            Pv2Opts {
                uncached: true,
                nowait: true,
                ..Default::default()
            },
            false,
        );
        assert_eq!(uncached.flags, Pv2::RWF_UNCACHED | libc::RWF_NOWAIT);
        // With direct, fio leaves RWF_UNCACHED out.
        let direct = Pv2::new(
            Pv2Opts {
                uncached: true,
                ..Default::default()
            },
            true,
        );
        assert_eq!(direct.flags, 0);
    }

    /// Buffers that cannot be had are the machine's limit (exit 2, setup error), not a
    /// failed run; an absurd size is an error, not an overflow.
    #[test]
    fn buffers_that_cannot_be_had_are_an_environment_error() {
        for (n, len) in [(usize::MAX / 2, 4096), (2, usize::MAX)] {
            let e = Buffers::new(n, len, 1).err().expect("too large");
            assert_eq!(
                hostbench_core::error::ErrorKind::of_io(&e),
                hostbench_core::error::ErrorKind::Environment,
                "{e}"
            );
        }
    }
}
