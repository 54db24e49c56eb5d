//! Where a clone's I/O buffers live (fio's `mem`/`iomem`, `mem_align`/`iomem_align`,
//! `hugepage-size`) and the memory it pins (`lockmem`), as fio 3.33's `memory.c` and
//! `init_io_u_buffers` do it: the same sizes, the same calls (`malloc`, `shmget`/`shmat`,
//! `mmap` anonymous or of a file), the buffers placed `mem_align` bytes past a page
//! boundary. The allocation is made once, when the clone starts; nothing here runs per I/O.

use super::job::JobError;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;

/// fio's buffer memory kinds (`mem=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemKind {
    /// The C library's heap (fio's default).
    #[default]
    Malloc,
    /// A System V shared memory segment (`shmget`/`shmat`).
    Shm,
    /// A segment of huge pages (`SHM_HUGETLB`).
    ShmHuge,
    /// A private mapping, anonymous or of `mmap:FILE`.
    Mmap,
    /// A mapping of huge pages (`MAP_HUGETLB`; with a file, a shared mapping of it, which
    /// should be on hugetlbfs).
    MmapHuge,
    /// A shared mapping of the file (without one, fio 3.33 maps anonymous memory
    /// private, as `mmap`).
    MmapShared,
}

impl MemKind {
    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            MemKind::Malloc => "malloc",
            MemKind::Shm => "shm",
            MemKind::ShmHuge => "shmhuge",
            MemKind::Mmap => "mmap",
            MemKind::MmapHuge => "mmaphuge",
            MemKind::MmapShared => "mmapshared",
        }
    }
    fn huge(self) -> bool {
        matches!(self, MemKind::ShmHuge | MemKind::MmapHuge)
    }
}

/// fio's default `hugepage-size` (`FIO_HUGE_PAGE` on Linux).
pub const DEFAULT_HUGEPAGE: u64 = 2 * 1024 * 1024;

/// A job's buffer-memory options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemOpts {
    /// `mem`/`iomem`.
    pub kind: MemKind,
    /// `mem=mmap:FILE` (`mmaphuge`, `mmapshared` too): the file mapped.
    pub file: Option<PathBuf>,
    /// `mem_align`/`iomem_align`: the buffers start this many bytes past a page boundary.
    pub align: u64,
    /// `hugepage-size`.
    pub hugepage: u64,
    /// `lockmem`: bytes mapped and locked (`mlock`) while the clone runs.
    pub lockmem: u64,
}

impl Default for MemOpts {
    fn default() -> Self {
        MemOpts {
            kind: MemKind::Malloc,
            file: None,
            align: 0,
            hugepage: DEFAULT_HUGEPAGE,
            lockmem: 0,
        }
    }
}

/// Parses `mem=`/`iomem=` (`KIND` or, for the mmap kinds, `KIND:FILE`), as fio 3.33 takes it.
pub fn parse_kind(k: &str, v: &str, at: &str) -> Result<(MemKind, Option<PathBuf>), JobError> {
    let (kind, file) = match v.split_once(':') {
        Some((a, b)) => (a.trim(), Some(b)),
        None => (v.trim(), None),
    };
    let kind = match kind {
        "malloc" => MemKind::Malloc,
        "shm" => MemKind::Shm,
        "shmhuge" => MemKind::ShmHuge,
        "mmap" => MemKind::Mmap,
        "mmaphuge" => MemKind::MmapHuge,
        "mmapshared" => MemKind::MmapShared,
        "cudamalloc" => {
            return Err(JobError(format!(
                "{at}: {k}={v}: cudamalloc is GPU memory allocated through NVIDIA's CUDA driver \
                 library (fio built with CUDA, for GPUDirect RDMA engines); hostbench is a static \
                 binary without CUDA and has no engine that could use it. Use malloc, shm, \
                 shmhuge, mmap, mmaphuge or mmapshared"
            )));
        }
        _ => {
            return Err(JobError(format!(
                "{at}: {k}={v}: expected malloc, shm, shmhuge, mmap, mmaphuge or mmapshared \
                 (the mmap kinds may name a file: mmap:FILE)"
            )));
        }
    };
    // fio keeps a file only for the mmap kinds (a postfix of the others is ignored).
    let file = match kind {
        MemKind::Mmap | MemKind::MmapHuge | MemKind::MmapShared => {
            file.filter(|f| !f.is_empty()).map(PathBuf::from)
        }
        _ => None,
    };
    Ok((kind, file))
}

/// Checks the options together (`job`: the job's name for the message).
pub fn check(o: &MemOpts, job: &str) -> Result<(), JobError> {
    if o.kind.huge() && (o.hugepage < 4096 || !o.hugepage.is_power_of_two()) {
        return Err(JobError(format!(
            "job '{job}': hugepage-size={} with mem={}: a huge page's size is a power of two \
             of at least 4096 bytes (this machine's is in /proc/meminfo, Hugepagesize)",
            o.hugepage,
            o.kind.name()
        )));
    }
    Ok(())
}

/// The bytes fio 3.33 asks for `n` buffers of `len` bytes (`direct`: O_DIRECT, which
/// aligns them): `init_io_u_buffers`' size, then `allocate_io_mem`'s margin, then the
/// kind's rounding to huge pages.
pub fn total(o: &MemOpts, n: usize, len: usize, direct: bool) -> Option<usize> {
    const PAGE_MASK: usize = 4095;
    let aligned = direct || o.align > 0;
    let align = usize::try_from(o.align).ok()?;
    let hp = usize::try_from(o.hugepage).ok()?;
    let mut orig = n.checked_mul(len)?;
    if aligned {
        orig = orig.checked_add(PAGE_MASK + align)?;
    }
    if o.kind.huge() {
        orig = orig.checked_add(hp - 1)? & !(hp - 1);
    }
    let mut t = orig;
    if aligned {
        t = t.checked_add(PAGE_MASK)?;
        if align > PAGE_MASK + 1 {
            t = t.checked_add(align - PAGE_MASK - 1)?;
        }
    }
    if o.kind.huge() {
        t = t.checked_add(hp - 1)? & !(hp - 1);
    }
    Some(t)
}

enum Backing {
    Heap(std::alloc::Layout),
    Shm,
    Map {
        len: usize,
        /// The mapped file and whether hostbench created it (then removed at the end).
        file: Option<(OwnedFd, PathBuf, bool)>,
    },
}

/// A clone's buffer memory, allocated as its `mem` says; freed (and a file hostbench
/// created removed) when dropped.
pub struct IoMem {
    base: *mut u8,
    backing: Backing,
    /// Bytes from `base` where the buffers start (`mem_align`).
    pub offset: usize,
    /// Bytes allocated.
    pub len: usize,
}

// SAFETY: the memory is owned by one worker thread at a time; the pointer is a handle.
unsafe impl Send for IoMem {}

fn err_of(what: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

impl IoMem {
    /// `n` buffers of `len` bytes as `o` says (`direct`: O_DIRECT).
    pub fn new(o: &MemOpts, n: usize, len: usize, direct: bool) -> io::Result<IoMem> {
        let too_large = || io::Error::new(io::ErrorKind::OutOfMemory, "I/O buffers too large");
        let total = total(o, n.max(1), len.max(1), direct).ok_or_else(too_large)?;
        let offset = if direct || o.align > 0 {
            o.align as usize
        } else {
            0
        };
        let kind = o.kind.name();
        let (base, backing) = match o.kind {
            MemKind::Malloc => {
                let layout =
                    std::alloc::Layout::from_size_align(total, 4096).map_err(|_| too_large())?;
                // SAFETY: layout has a non-zero size.
                let p = unsafe { std::alloc::alloc(layout) };
                if p.is_null() {
                    return Err(io::Error::new(
                        io::ErrorKind::OutOfMemory,
                        format!("could not allocate {total} bytes of I/O buffers"),
                    ));
                }
                (p, Backing::Heap(layout))
            }
            MemKind::Shm | MemKind::ShmHuge => {
                let mut flags = libc::IPC_CREAT | 0o600;
                if o.kind == MemKind::ShmHuge {
                    flags |= libc::SHM_HUGETLB;
                }
                // SAFETY: plain system calls; the segment is removed right after it is
                // attached, so it goes away with the last detach, even if hostbench dies.
                unsafe {
                    let id = libc::shmget(libc::IPC_PRIVATE, total, flags);
                    if id < 0 {
                        let e = io::Error::last_os_error();
                        return Err(err_of(&format!("mem={kind}: shmget of {total} bytes"), e));
                    }
                    let p = libc::shmat(id, std::ptr::null(), 0);
                    let at = io::Error::last_os_error();
                    libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
                    if p as isize == -1 {
                        return Err(err_of(&format!("mem={kind}: shmat"), at));
                    }
                    (p as *mut u8, Backing::Shm)
                }
            }
            MemKind::Mmap | MemKind::MmapHuge | MemKind::MmapShared => {
                let mut flags = 0;
                let mut file = None;
                if let Some(path) = &o.file {
                    let (fd, created) = open_mem_file(path, kind)?;
                    if o.kind == MemKind::Mmap {
                        // SAFETY: ftruncate of a descriptor we own.
                        if unsafe { libc::ftruncate(fd.as_raw_fd(), total as libc::off_t) } < 0 {
                            let e = io::Error::last_os_error();
                            drop_file(fd, path, created);
                            return Err(err_of(
                                &format!("mem={kind}: truncate {} to {total}", path.display()),
                                e,
                            ));
                        }
                        flags |= libc::MAP_PRIVATE;
                    } else {
                        // fio maps the file shared as it is: its size must cover the
                        // buffers (on hugetlbfs the mapping sizes it).
                        flags |= libc::MAP_SHARED;
                    }
                    file = Some((fd, path.clone(), created));
                } else {
                    // fio 3.33 maps anonymous memory private whatever the kind: `mmapshared`
                    // shares only a file's mapping.
                    flags |= libc::MAP_ANONYMOUS | libc::MAP_PRIVATE;
                    if o.kind == MemKind::MmapHuge {
                        flags |= libc::MAP_HUGETLB;
                    }
                }
                let fd = file.as_ref().map_or(-1, |f| f.0.as_raw_fd());
                // SAFETY: a new mapping; checked below.
                let p = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        total,
                        libc::PROT_READ | libc::PROT_WRITE,
                        flags,
                        fd,
                        0,
                    )
                };
                if p == libc::MAP_FAILED {
                    let e = io::Error::last_os_error();
                    if let Some((fd, path, created)) = file {
                        drop_file(fd, &path, created);
                    }
                    return Err(err_of(&format!("mem={kind}: mmap of {total} bytes"), e));
                }
                if let Some((fd, _, _)) = &file
                    && o.kind != MemKind::Mmap
                {
                    // A shared mapping past the file's end would fault (SIGBUS) on use.
                    // SAFETY: fstat into a zeroed struct.
                    let mut st: libc::stat = unsafe { std::mem::zeroed() };
                    let size = if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0 {
                        st.st_size as u64
                    } else {
                        0
                    };
                    if size < total as u64 {
                        // SAFETY: the mapping made above.
                        unsafe { libc::munmap(p, total) };
                        let (fd, path, created) = file.expect("checked above");
                        drop_file(fd, &path, created);
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            format!(
                                "mem={kind}:{}: the file has {size} bytes and the buffers \
                                 need {total}; a shared mapping is not sized by hostbench \
                                 (nor fio, which would die of SIGBUS): make the file that \
                                 large first (or put it on hugetlbfs for mmaphuge), or use \
                                 mem=mmap:FILE",
                                path.display()
                            ),
                        ));
                    }
                }
                (p as *mut u8, Backing::Map { len: total, file })
            }
        };
        Ok(IoMem {
            base,
            backing,
            offset,
            len: total,
        })
    }

    /// Where the buffers start.
    pub fn start(&self) -> *mut u8 {
        // SAFETY: offset ≤ the margin `total` added.
        unsafe { self.base.add(self.offset) }
    }

    /// The whole allocation.
    pub fn base(&self) -> *mut u8 {
        self.base
    }
}

fn open_mem_file(path: &std::path::Path, kind: &str) -> io::Result<(OwnedFd, bool)> {
    use std::os::unix::ffi::OsStrExt;
    let existed = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "mem={kind}:{}: is a symbolic link; hostbench does not follow links it \
                     did not make: name the file itself",
                    path.display()
                ),
            ));
        }
        Ok(m) if !m.file_type().is_file() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "mem={kind}:{}: is not a regular file; the buffers are mapped from a \
                     file (a device is never written by hostbench)",
                    path.display()
                ),
            ));
        }
        Ok(_) => true,
        Err(_) => false,
    };
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in the file name"))?;
    // SAFETY: open of a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o644,
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(err_of(
            &format!("mem={kind}: open mmap file {}", path.display()),
            e,
        ));
    }
    // SAFETY: fd was just opened and is owned by nothing else.
    Ok((unsafe { OwnedFd::from_raw_fd(fd) }, !existed))
}

fn drop_file(fd: OwnedFd, path: &std::path::Path, created: bool) {
    drop(fd);
    if created {
        let _ = std::fs::remove_file(path);
    }
}

impl Drop for IoMem {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.backing, Backing::Shm) {
            // SAFETY: allocated in `new` with this layout.
            Backing::Heap(layout) => unsafe { std::alloc::dealloc(self.base, layout) },
            // SAFETY: attached in `new` (already marked for removal).
            Backing::Shm => unsafe {
                libc::shmdt(self.base as *const libc::c_void);
            },
            Backing::Map { len, file } => {
                // SAFETY: mapped in `new` with this length.
                unsafe { libc::munmap(self.base as *mut libc::c_void, len) };
                if let Some((fd, path, created)) = file {
                    drop_file(fd, &path, created);
                }
            }
        }
    }
}

/// fio's `lockmem`: `bytes` mapped and locked in memory while the clone runs (limited to
/// the machine's memory less 128 MiB, as fio, with its message).
pub struct Pinned {
    p: *mut libc::c_void,
    len: usize,
}

// SAFETY: a handle to a mapping only this value unmaps.
unsafe impl Send for Pinned {}

impl Pinned {
    /// Maps and locks `bytes` (0: nothing). `note` gets fio's message when the size is cut.
    pub fn new(bytes: u64, note: &mut dyn FnMut(String)) -> io::Result<Option<Pinned>> {
        if bytes == 0 {
            return Ok(None);
        }
        let mut len = bytes;
        // SAFETY: sysconf reads.
        let phys = unsafe {
            (libc::sysconf(libc::_SC_PHYS_PAGES) as u64)
                .saturating_mul(libc::sysconf(libc::_SC_PAGESIZE) as u64)
        };
        const MARGIN: u64 = 128 * 1024 * 1024;
        if phys > 0 && len.saturating_add(MARGIN) > phys {
            len = phys.saturating_sub(MARGIN);
            note(format!("fio: limiting mlocked memory to {}MiB", len >> 20));
        }
        let len = usize::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "lockmem too large"))?;
        // SAFETY: a new anonymous mapping, checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(err_of(
                &format!("lockmem: mmap of {len} bytes"),
                io::Error::last_os_error(),
            ));
        }
        // SAFETY: the mapping made above.
        if unsafe { libc::mlock(p, len) } < 0 {
            let e = io::Error::last_os_error();
            // SAFETY: the mapping made above.
            unsafe { libc::munmap(p, len) };
            let mut lim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: getrlimit into a local.
            let limit = if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) } == 0 {
                if lim.rlim_cur == libc::RLIM_INFINITY {
                    "unlimited".to_string()
                } else {
                    format!("{} bytes", lim.rlim_cur)
                }
            } else {
                "unknown".to_string()
            };
            return Err(io::Error::new(
                e.kind(),
                format!(
                    "lockmem={len}: mlock failed: {e} (the locked-memory limit, RLIMIT_MEMLOCK, \
                     is {limit} without CAP_IPC_LOCK: raise it with `ulimit -l` or lower lockmem)"
                ),
            ));
        }
        Ok(Some(Pinned { p, len }))
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: locked and mapped in `new`.
        unsafe {
            libc::munlock(self.p, self.len);
            libc::munmap(self.p, self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_fios() {
        let mut o = MemOpts::default();
        // No alignment asked: exactly the buffers.
        assert_eq!(total(&o, 2, 4096, false), Some(8192));
        // fio 3.33 (strace): mem=shm mem_align=512 iodepth=2 bs=4k asks shmget for 16894.
        o.kind = MemKind::Shm;
        o.align = 512;
        assert_eq!(
            total(&o, 2, 4096, false),
            Some(2 * 4096 + 4095 + 512 + 4095)
        );
        o.align = 0;
        o.kind = MemKind::ShmHuge;
        assert_eq!(total(&o, 2, 4096, false), Some(DEFAULT_HUGEPAGE as usize));
        assert_eq!(
            total(&o, 2, 4096, true),
            Some(2 * DEFAULT_HUGEPAGE as usize)
        );
    }

    #[test]
    fn every_kind_gives_usable_buffers() {
        for kind in [
            MemKind::Malloc,
            MemKind::Shm,
            MemKind::Mmap,
            MemKind::MmapShared,
        ] {
            let o = MemOpts {
                kind,
                align: 512,
                ..Default::default()
            };
            let m = IoMem::new(&o, 2, 4096, false).unwrap();
            assert_eq!(m.start() as usize % 4096, 512, "{kind:?}");
            // SAFETY: the buffers are inside the allocation.
            unsafe { std::ptr::write_bytes(m.start(), 7, 2 * 4096) };
        }
    }

    #[test]
    fn cudamalloc_is_refused_with_the_reason() {
        let e = parse_kind("mem", "cudamalloc", "job.fio:3").unwrap_err();
        assert!(e.0.contains("CUDA"), "{e}");
        let (k, f) = parse_kind("mem", "mmap:/tmp/x", "at").unwrap();
        assert_eq!((k, f), (MemKind::Mmap, Some(PathBuf::from("/tmp/x"))));
        assert_eq!(
            parse_kind("mem", "shm:xyz", "at").unwrap(),
            (MemKind::Shm, None)
        );
    }
}
