//! fio 3.33's simple engines that do no data transfer of their own (`engines/cpu.c`,
//! `falloc.c`, `ftruncate.c`): each is a synchronous engine, one "I/O" at a time, timed and
//! counted by the worker as fio times and counts it.
//!
//! | engine | what one I/O is | counted as |
//! |---|---|---|
//! | `cpuio` | `cpuchunks` µs of spinning (or one qsort round), then a think of `cpuchunks·(100−cpuload)/cpuload` µs | a read of 0 bytes: clat/lat only, no bandwidth line |
//! | `falloc` | `fallocate(fd, mode, offset, len)`: reads `FALLOC_FL_KEEP_SIZE`, writes mode 0, trims `KEEP_SIZE \| PUNCH_HOLE` | `len` bytes in its direction |
//! | `ftruncate` | writes `ftruncate(fd, offset)`; reads fail with EINVAL | `len` bytes written |
//! | `e4defrag` | writes `ioctl(fd, EXT4_IOC_MOVE_EXT)` with the donor (`donorname`, `inplace`); reads fail with EINVAL | the bytes moved, written |
//! | `filecreate` | each file's `open(O_CREAT\|O_RDWR, 0600)` when the job first picks it | one I/O of `bs` per file, its open as clat only |
//! | `filestat` | each file's `stat`/`lstat`/`statx` (`stat_type`) | the same, the stat timed |
//! | `filedelete` | each file's `unlink` | the same, the unlink timed |
//! | `exec` | the first starts `program`; each later one sleeps 50 ms (the runtime over: SIGTERM, `grace_time`, SIGKILL) | a read of 0 bytes, as cpuio |
//!
//! The engines' own options (`cpuload`, `cpuchunks`, `cpumode`, `exit_on_io_done`, exec's
//! `program`, `arguments`, `grace_time`, `std_redirect`, ...) are parsed
//! here ([`handles`], [`apply`]) into [`EngineOpts`].

pub mod cpuio;
pub mod e4defrag;
pub mod exec;
pub mod falloc;
pub mod fileops;
pub mod ftruncate;
pub mod nbd;
pub mod net;

use super::job::{JobError, flag};

/// A system call's return `r` as an I/O's result: `len` on success (0), −errno otherwise.
#[inline]
fn done(r: libc::c_int, len: u32) -> i64 {
    if r == 0 {
        i64::from(len)
    } else {
        -i64::from(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
        )
    }
}

/// A scratch file for an engine's unit test, already unlinked (its descriptor keeps it).
#[cfg(test)]
pub(super) fn scratch(name: &str) -> std::fs::File {
    let p = std::env::temp_dir().join(format!("wt-fio-{name}-{}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&p)
        .unwrap();
    let _ = std::fs::remove_file(&p);
    f
}

/// `cpumode`: what a cpuio job burns its CPU on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuMode {
    /// Spinning (fio's `noop`, default).
    #[default]
    Noop,
    /// Sorting 256 Ki 32-bit integers four times (fio's `qsort`); the cycle is re-timed.
    Qsort,
}

impl CpuMode {
    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            CpuMode::Noop => "noop",
            CpuMode::Qsort => "qsort",
        }
    }
}

/// The engine options of a job (fio's `cpuio` options).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineOpts {
    /// `cpuload`, percent of a CPU (0 = not given; above 100 is 100, as fio).
    pub cpuload: u32,
    /// `cpuchunks`, µs of one burn cycle (fio's default 50000).
    pub cpuchunks_us: u64,
    /// `cpumode`.
    pub cpumode: CpuMode,
    /// `exit_on_io_done`: the cpuio job ends once no job that does I/O runs or waits.
    pub exit_on_io_done: bool,
    /// io_uring's `fixedbufs`, `registerfiles`, `sqthread_poll`, `hipri`, `nonvectored`,
    /// `force_async`.
    pub uring: super::engine::UringOpts,
    /// pvsync2's `hipri`, `hipri_percentage`, `uncached`, `nowait`.
    pub pv2: super::engine::Pv2Opts,
    /// filestat's `stat_type`.
    pub stat_type: fileops::StatType,
    /// exec's `program`, `arguments`, `grace_time`, `std_redirect`.
    pub exec: exec::ExecOpts,
    /// net's `hostname`, `port`, `protocol`, `listen`, `pingpong`, ...
    pub net: net::NetOpts,
    /// e4defrag's `donorname`, `inplace`.
    pub e4defrag: e4defrag::E4Opts,
    /// nbd's `uri` (as written).
    pub nbd_uri: Option<String>,
    /// libaio's `userspace_reap`.
    pub userspace_reap: bool,
    /// mmap's `thp`: the file mapped privately with `MADV_HUGEPAGE` advised.
    pub thp: bool,
    /// Which engine options were given (they need their engine: `cpuload` with
    /// `ioengine=cpuio`), with where they were written.
    pub given: Vec<(String, String)>,
}

impl Default for EngineOpts {
    fn default() -> Self {
        EngineOpts {
            cpuload: 0,
            cpuchunks_us: 50_000,
            cpumode: CpuMode::Noop,
            exit_on_io_done: false,
            uring: Default::default(),
            pv2: Default::default(),
            stat_type: fileops::StatType::Stat,
            exec: Default::default(),
            net: net::NetOpts {
                ttl: 1,
                ..Default::default()
            },
            e4defrag: Default::default(),
            nbd_uri: None,
            userspace_reap: false,
            thp: false,
            given: Vec::new(),
        }
    }
}

/// Whether `key` (a canonical option name) is an engine option parsed here.
pub fn handles(key: &str) -> bool {
    matches!(
        key,
        "cpuload" | "cpuchunks" | "cpumode" | "exit_on_io_done" | "stat_type"
    ) || uring_option(key)
        || e4defrag_option(key)
        || pvsync2_option(key)
        || exec_option(key)
        || net::option(key)
        || key == "uri"
        || key == "userspace_reap"
        || key == "thp"
}

/// Whether `key` is one of exec's options parsed here.
pub fn exec_option(key: &str) -> bool {
    matches!(key, "program" | "arguments" | "grace_time" | "std_redirect")
}

/// Whether `key` is one of e4defrag's options parsed here.
pub fn e4defrag_option(key: &str) -> bool {
    matches!(key, "donorname" | "inplace")
}

/// Whether `key` is one of pvsync2's own options parsed here (its `hipri` is io_uring's
/// too: [`uring_option`]).
pub fn pvsync2_option(key: &str) -> bool {
    matches!(key, "hipri_percentage" | "uncached" | "nowait")
}

/// Whether `key` is one of io_uring's options parsed here.
pub fn uring_option(key: &str) -> bool {
    matches!(
        key,
        "fixedbufs"
            | "registerfiles"
            | "sqthread_poll"
            | "sqthread_poll_cpu"
            | "hipri"
            | "nonvectored"
            | "force_async"
    )
}

/// An engine's integer option, read as fio reads its integer options (suffixes too:
/// [`super::job::parse_int`]).
fn whole(k: &str, v: &str, at: &str, max: u64) -> Result<u64, JobError> {
    super::job::parse_int(k, v, at, 0, max)
}

/// Applies engine option `key` (canonical) with value `v`, written at `at`, to `e`.
pub fn apply(e: &mut EngineOpts, key: &str, v: &str, at: &str) -> Result<(), JobError> {
    match key {
        "cpuload" => e.cpuload = whole(key, v, at, u32::MAX as u64)? as u32,
        "cpuchunks" => {
            let n = whole(key, v, at, u32::MAX as u64)?;
            if n == 0 {
                return Err(JobError(format!(
                    "{at}: cpuchunks={v}: a burn cycle must last at least 1 µs"
                )));
            }
            e.cpuchunks_us = n;
        }
        "cpumode" => {
            e.cpumode = match v.trim() {
                "noop" => CpuMode::Noop,
                "qsort" => CpuMode::Qsort,
                _ => {
                    return Err(JobError(format!(
                        "{at}: cpumode={v}: expected noop or qsort"
                    )));
                }
            }
        }
        "exit_on_io_done" => e.exit_on_io_done = flag(key, v, at)?,
        "stat_type" => {
            e.stat_type = fileops::StatType::parse(v).ok_or_else(|| {
                JobError(format!(
                    "{at}: stat_type={v}: expected stat, lstat or statx"
                ))
            })?
        }
        // fio keeps the strings as written (its STR_STORE): no trimming of inner spaces.
        "program" => e.exec.program = Some(v.to_string()),
        "arguments" => e.exec.arguments = Some(v.to_string()),
        "grace_time" => e.exec.grace_time_s = whole(key, v, at, i32::MAX as u64)?,
        "std_redirect" => e.exec.std_redirect = flag(key, v, at)?,
        // fio's STR_STORE: the name as written.
        "donorname" => e.e4defrag.donor = Some(v.to_string()),
        // fio's FIO_OPT_INT with minval 0, maxval 1.
        "inplace" => e.e4defrag.inplace = whole(key, v, at, 1)? == 1,
        "fixedbufs" => e.uring.fixedbufs = flag(key, v, at)?,
        // fio's FIO_OPT_INT with default -1 (probe the kernel); any other non-zero value
        // is the plain opcodes.
        "nonvectored" => {
            e.uring.nonvectored = if v.trim() == "-1" {
                None
            } else {
                Some(whole(key, v, at, u32::MAX as u64)? != 0)
            }
        }
        "force_async" => e.uring.force_async = whole(key, v, at, u32::MAX as u64)? as u32,
        "registerfiles" => e.uring.registerfiles = flag(key, v, at)?,
        "sqthread_poll" => e.uring.sqthread_poll = flag(key, v, at)?,
        "hipri" => {
            e.uring.hipri = flag(key, v, at)?;
            e.pv2.hipri = e.uring.hipri;
        }
        "hipri_percentage" => e.pv2.hipri_percentage = whole(key, v, at, 100)? as u32,
        // fio's `uncached` is a number (any non-zero sets the flag), `nowait` a bool.
        "uncached" => e.pv2.uncached = whole(key, v, at, u32::MAX as u64)? != 0,
        "nowait" => e.pv2.nowait = flag(key, v, at)?,
        "sqthread_poll_cpu" => e.uring.sq_cpu = Some(whole(key, v, at, 4095)? as u32),
        "uri" => e.nbd_uri = Some(v.trim().to_string()),
        "userspace_reap" => e.userspace_reap = flag(key, v, at)?,
        // fio's FIO_OPT_INT: any number, non-zero turns it on.
        "thp" => e.thp = whole(key, v, at, u32::MAX as u64)? != 0,
        "hostname" => e.net.host = Some(v.trim().to_string()),
        "port" => {
            let n = whole(key, v, at, 65535)?;
            if n == 0 {
                return Err(JobError(format!(
                    "{at}: port={v}: expected a port from 1 to 65535"
                )));
            }
            e.net.port = n as u32;
        }
        "protocol" => {
            e.net.proto = net::Proto::parse(v).ok_or_else(|| {
                JobError(format!(
                    "{at}: protocol={v}: expected tcp, tcpv6, udp, udpv6 or unix"
                ))
            })?
        }
        "nodelay" => e.net.nodelay = flag(key, v, at)?,
        "listen" => e.net.listen = flag(key, v, at)?,
        "pingpong" => e.net.pingpong = flag(key, v, at)?,
        "interface" => e.net.interface = Some(v.trim().to_string()),
        "ttl" => e.net.ttl = whole(key, v, at, 255)? as u32,
        "window_size" => e.net.window_size = whole(key, v, at, i32::MAX as u64)? as u32,
        "mss" => e.net.mss = whole(key, v, at, i32::MAX as u64)? as u32,
        _ => return Ok(()),
    }
    e.given.retain(|(k, _)| k != key);
    e.given.push((key.to_string(), at.to_string()));
    Ok(())
}
