//! fio's job description: the option table hostbench supports (with fio's spellings,
//! aliases, units and defaults) and the typed [`JobSpec`] a run uses, from the sections of
//! a job file or command line ([`super::jobfile`], re-exported here).
//!
//! Every option fio has that hostbench does not implement is an error that names it: a
//! benchmark that silently ignores an option measures something else than the user asked.

pub use super::jobfile::{Section, from_text, parse_ini, sort_as_fio, to_text};
use std::fmt;

/// A clone's error as fio reports it: errno, fio's `func` (`open(f)`, `unlink`) and what
/// failed, in words.
pub type CloneError = (i32, String, String);

/// A job description that could not be used; the message says what, where and how to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobError(pub String);

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for JobError {}

pub(super) fn err<T>(msg: impl Into<String>) -> Result<T, JobError> {
    Err(JobError(msg.into()))
}

/// Which directions and order a job does I/O in (fio's `rw`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rw {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential mixed reads and writes.
    ReadWrite,
    /// Random mixed reads and writes.
    RandRw,
    /// Sequential trims (discards).
    Trim,
    /// Random trims.
    RandTrim,
    /// Sequential trims, each followed by a write of the same range.
    TrimWrite,
    /// Random trims, each followed by a write of the same range.
    RandTrimWrite,
}

impl Rw {
    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::ReadWrite => "rw",
            Rw::RandRw => "randrw",
            Rw::Trim => "trim",
            Rw::RandTrim => "randtrim",
            Rw::TrimWrite => "trimwrite",
            Rw::RandTrimWrite => "randtrimwrite",
        }
    }
    /// Offsets are random.
    pub fn random(self) -> bool {
        matches!(
            self,
            Rw::RandRead | Rw::RandWrite | Rw::RandRw | Rw::RandTrim | Rw::RandTrimWrite
        )
    }
    /// The job trims (and, for `trimwrite`, writes what it trimmed).
    pub fn trims(self) -> bool {
        matches!(
            self,
            Rw::Trim | Rw::RandTrim | Rw::TrimWrite | Rw::RandTrimWrite
        )
    }
    /// Each trim is followed by a write of the same range (`trimwrite`).
    pub fn trim_write(self) -> bool {
        matches!(self, Rw::TrimWrite | Rw::RandTrimWrite)
    }
    /// Share of reads, percent, given `rwmixread`.
    pub fn read_pct(self, rwmixread: u32) -> u32 {
        match self {
            Rw::Read | Rw::RandRead => 100,
            Rw::Write | Rw::RandWrite => 0,
            Rw::ReadWrite | Rw::RandRw => rwmixread,
            // A trim changes the file as a write does (and trimwrite writes).
            Rw::Trim | Rw::RandTrim | Rw::TrimWrite | Rw::RandTrimWrite => 0,
        }
    }
    /// The job writes.
    pub fn writes(self, rwmixread: u32) -> bool {
        self.read_pct(rwmixread) < 100
    }
}

/// How I/O is issued (fio's `ioengine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// pread/pwrite, one at a time.
    Psync,
    /// lseek + read/write, one at a time.
    Sync,
    /// lseek + readv/writev of one vector, one at a time (fio caps a sync engine's depth
    /// at 1, so its merging of adjacent I/Os never happens).
    Vsync,
    /// preadv/pwritev of one vector, one at a time.
    Pvsync,
    /// preadv2/pwritev2 with the `RWF_*` flags of `hipri`, `uncached`, `nowait`.
    Pvsync2,
    /// Linux native AIO (io_submit/io_getevents syscalls).
    Libaio,
    /// POSIX AIO through the C library (`aio_read`/`aio_write`, `aio_error`/`aio_return`,
    /// `aio_suspend`).
    Posixaio,
    /// io_uring.
    IoUring,
    /// The file mapped; memcpy to and from it.
    Mmap,
    /// No I/O: the harness's own cost.
    Null,
    /// fallocate over each I/O's range.
    Falloc,
    /// ftruncate to each write's offset.
    Ftruncate,
    /// ext4's `EXT4_IOC_MOVE_EXT` per write: the range's blocks swapped with a donor
    /// file's (`donorname`, `inplace`).
    E4defrag,
    /// No file: CPU burnt per I/O (`cpuload`).
    Cpuio,
    /// Each file created (`open(O_CREAT)`), the open timed.
    Filecreate,
    /// Each file's `stat` (`stat_type`) timed.
    Filestat,
    /// Each file's `unlink` timed.
    Filedelete,
    /// No file: a program of the user's runs for the job's runtime (`program`).
    Exec,
    /// No file: reads receive from a socket, writes send to one (`engines/net.rs`).
    Net,
    /// `net` through a pipe: TCP messages spliced between the buffer, a pipe and the
    /// socket (`vmsplice`, `splice`); udp and unix as `net`.
    NetSplice,
    /// No file: requests to a Network Block Device server's export (`engines/nbd.rs`).
    Nbd,
}

impl EngineKind {
    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Psync => "psync",
            EngineKind::Sync => "sync",
            EngineKind::Vsync => "vsync",
            EngineKind::Pvsync => "pvsync",
            EngineKind::Pvsync2 => "pvsync2",
            EngineKind::Libaio => "libaio",
            EngineKind::Posixaio => "posixaio",
            EngineKind::IoUring => "io_uring",
            EngineKind::Mmap => "mmap",
            EngineKind::Null => "null",
            EngineKind::Falloc => "falloc",
            EngineKind::Ftruncate => "ftruncate",
            EngineKind::E4defrag => "e4defrag",
            EngineKind::Cpuio => "cpuio",
            EngineKind::Filecreate => "filecreate",
            EngineKind::Filestat => "filestat",
            EngineKind::Filedelete => "filedelete",
            EngineKind::Exec => "exec",
            EngineKind::Net => "net",
            EngineKind::NetSplice => "netsplice",
            EngineKind::Nbd => "nbd",
        }
    }
    /// What fio's job header names for an error the job went on after
    /// (`continue_on_error`): the synchronous engines' own call (`xfer`), the queue call of
    /// falloc, ftruncate and cpuio; nothing for the queue engines (fio prints `err=28 ()`).
    pub fn nonfatal_error_func(self) -> &'static str {
        match self {
            EngineKind::Psync
            | EngineKind::Sync
            | EngineKind::Pvsync
            | EngineKind::Pvsync2
            | EngineKind::Mmap
            | EngineKind::Net
            | EngineKind::NetSplice => "xfer",
            EngineKind::Vsync => "xfer vsync",
            EngineKind::Falloc
            | EngineKind::Ftruncate
            | EngineKind::E4defrag
            | EngineKind::Cpuio
            | EngineKind::Exec
            | EngineKind::Filecreate
            | EngineKind::Filestat
            | EngineKind::Filedelete => "td_io_queue",
            EngineKind::Null
            | EngineKind::Libaio
            | EngineKind::Posixaio
            | EngineKind::IoUring
            | EngineKind::Nbd => "",
        }
    }
    /// fio's file engines (`engines/fileoperations.c`): the unit is a file, its create,
    /// stat or unlink timed as a clat-only sample (fio's `FIO_NOSTATS`: no lat, no slat, no
    /// latency distribution, no bandwidth or IOPS samples).
    pub fn file_op(self) -> bool {
        matches!(
            self,
            EngineKind::Filecreate | EngineKind::Filestat | EngineKind::Filedelete
        )
    }
    /// Moves data with read/write calls that can return short (psync, sync, vsync, pvsync,
    /// pvsync2): a call that moved nothing is fio's `full resid` error.
    pub fn moves_data(self) -> bool {
        matches!(
            self,
            EngineKind::Psync
                | EngineKind::Sync
                | EngineKind::Vsync
                | EngineKind::Pvsync
                | EngineKind::Pvsync2
        )
    }
    /// Moves data between memory and its file through the page cache unless O_DIRECT
    /// (the [`moves_data`](Self::moves_data) engines, libaio, io_uring, mmap); the others
    /// move none (falloc, ftruncate, the file operations) or use no file.
    pub fn through_page_cache(self) -> bool {
        self.moves_data()
            || matches!(
                self,
                EngineKind::Libaio | EngineKind::Posixaio | EngineKind::IoUring | EngineKind::Mmap
            )
    }
    /// Uses no file (null, cpuio, exec, net, nbd).
    pub fn fileless(self) -> bool {
        matches!(
            self,
            EngineKind::Null
                | EngineKind::Cpuio
                | EngineKind::Exec
                | EngineKind::Net
                | EngineKind::NetSplice
                | EngineKind::Nbd
        )
    }
    /// The net engines (`net`, `netsplice`): a socket instead of a file.
    pub fn net(self) -> bool {
        matches!(self, EngineKind::Net | EngineKind::NetSplice)
    }
    /// fio's `FIO_NOIO` engines (cpuio, exec): their I/Os move nothing, are never short,
    /// and the job runs for its runtime whatever its size (its directions get no runtime,
    /// so no rate lines).
    pub fn no_io(self) -> bool {
        matches!(self, EngineKind::Cpuio | EngineKind::Exec)
    }
    /// Issues one I/O at a time and completes it in the call (iodepth does not apply;
    /// no submission latency).
    pub fn is_sync(self) -> bool {
        matches!(
            self,
            EngineKind::Psync
                | EngineKind::Sync
                | EngineKind::Vsync
                | EngineKind::Pvsync
                | EngineKind::Pvsync2
                | EngineKind::Mmap
                | EngineKind::Null
                | EngineKind::Falloc
                | EngineKind::Ftruncate
                | EngineKind::E4defrag
                | EngineKind::Cpuio
                | EngineKind::Exec
                | EngineKind::Filecreate
                | EngineKind::Filestat
                | EngineKind::Filedelete
                | EngineKind::Net
                | EngineKind::NetSplice
        )
    }
}

/// At most this many files per clone (`nrfiles`) or in a `filename` list: each is a
/// descriptor and a generator of its own, so the count is bounded.
pub const MAX_FILES: u32 = 1 << 20;

/// fio's `file_service_type`: which of a clone's files the next I/O goes to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FileKind {
    /// `roundrobin` (the default): each open file in turn.
    RoundRobin,
    /// `sequential`: a file until its region is done, then the next.
    Sequential,
    /// `random`: a uniformly drawn file.
    Random,
    /// `zipf:θ` (default 1.1) over the files, the first ones hot.
    Zipf(f64),
    /// `pareto:h` (default 0.2).
    Pareto(f64),
    /// `normal:dev` / `gauss:dev` (default 0): fio's sum of twelve draws.
    Normal(f64),
}

/// `file_service_type` with its `:N` (I/Os to a file before the next pick, default 1;
/// `sequential` stays on a file until it is done whatever N says, as in fio).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileService {
    /// How the file is picked.
    pub kind: FileKind,
    /// I/Os per pick (fio's `file_service_nr`; 0 keeps a picked file until it is done).
    pub nr: u32,
}

impl Default for FileService {
    fn default() -> FileService {
        FileService {
            kind: FileKind::RoundRobin,
            nr: 1,
        }
    }
}

impl FileService {
    /// Parses fio's `file_service_type` value, with fio's ranges (zipf θ ≠ 1, pareto
    /// 0 < h < 1, normal 0 ≤ dev < 100).
    pub fn parse(v: &str) -> Result<FileService, String> {
        let v = v.trim();
        let (kind, arg) = v.split_once(':').unwrap_or((v, ""));
        let usage = "expected random, roundrobin (the default) or sequential, each with an \
                     optional :N, or zipf[:θ], pareto[:h], normal[:dev] (gauss[:dev])";
        let float = |default: f64| -> Result<f64, String> {
            if arg.is_empty() {
                return Ok(default);
            }
            arg.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("'{arg}' is not a number; {usage}"))
        };
        let kind = match kind {
            "roundrobin" | "sequential" | "random" => {
                let nr = if arg.is_empty() {
                    1
                } else {
                    // 0 is fio's too (its count left wraps: a picked file is kept until
                    // its region is done).
                    arg.parse::<u32>()
                        .map_err(|_| format!("':{arg}' is not a count of I/Os; {usage}"))?
                };
                let kind = match kind {
                    "roundrobin" => FileKind::RoundRobin,
                    "sequential" => FileKind::Sequential,
                    _ => FileKind::Random,
                };
                return Ok(FileService { kind, nr });
            }
            "zipf" => {
                let t = float(1.1)?;
                if t == 1.0 || t <= 0.0 {
                    return Err("zipf theta must be above 0 and different from 1.0".into());
                }
                FileKind::Zipf(t)
            }
            "pareto" => {
                let h = float(0.2)?;
                if h <= 0.0 || h >= 1.0 {
                    return Err("pareto input out of range (0 < input < 1.0)".into());
                }
                FileKind::Pareto(h)
            }
            "normal" | "gauss" => {
                let d = float(0.0)?;
                if !(0.0..100.0).contains(&d) {
                    return Err("normal deviation out of range (0 <= input < 100.0)".into());
                }
                FileKind::Normal(d)
            }
            _ => return Err(usage.into()),
        };
        Ok(FileService { kind, nr: 1 })
    }

    /// Whether a file whose region is done starts over instead of being closed (fio's
    /// non-uniform services reset it).
    pub fn nonuniform(&self) -> bool {
        matches!(
            self.kind,
            FileKind::Zipf(_) | FileKind::Pareto(_) | FileKind::Normal(_)
        )
    }
}

/// A `filename` value split into its files as fio splits it: at each `:` not escaped as
/// `\:` (which stands for a colon in the name); empty elements (`a::b`, `a:`, `:a`) are
/// skipped, as fio's `get_next_str` skips them.
pub fn split_filenames(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut it = v.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\\' if it.peek() == Some(&':') => {
                it.next();
                cur.push(':');
            }
            ':' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A flag option's value (`1`/`true`/`on`/`yes`, `0`/`false`/`off`/`no`, empty = on), for
/// the option modules.
pub(super) fn flag(k: &str, v: &str, at: &str) -> Result<bool, JobError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err(JobError(format!("{at}: {k}={v}: expected 0 or 1"))),
    }
}

/// How random offsets are drawn (fio's `random_distribution`).
#[derive(Debug, Clone, PartialEq)]
pub enum RandDist {
    /// Uniform.
    Random,
    /// Zipf with exponent θ.
    Zipf(f64),
    /// Pareto with shape h.
    Pareto(f64),
    /// `normal:dev[:center]` (`gauss`): fio's sum of 12 uniform draws, `dev` percent of the
    /// range added as a uniform deviation, shifted by `center` (0..1) when given.
    Normal {
        /// Deviation, percent of the range (0 ≤ dev < 100).
        dev: f64,
        /// Where the peak sits, as a fraction of the range (`None`: the middle).
        center: Option<f64>,
    },
    /// `zoned:access/size:...` (sizes in percent of the region) or `zoned_abs:` (sizes in
    /// bytes), per direction (read, write, trim).
    Zoned {
        /// `zoned_abs`.
        abs: bool,
        /// Per direction, the zones in order: (access percent, size percent or bytes).
        zones: [Vec<(u32, u64)>; 3],
    },
}

/// The rate options of a job (fio's `rate*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateOpts {
    /// `rate`: bytes/s per direction (read, write; 0 = none).
    pub bps: [u64; 2],
    /// `rate_iops` per direction.
    pub iops: [u64; 2],
    /// `rate_min` (`ratemin`): bytes/s per direction below which the job fails.
    pub min_bps: [u64; 2],
    /// `rate_iops_min` per direction.
    pub min_iops: [u64; 2],
    /// `rate_process=poisson` (else linear).
    pub poisson: bool,
    /// `rate_cycle` (`ratecycle`), ms: the window of the minimum-rate check.
    pub cycle_ms: u64,
    /// `rate_ignore_thinktime`: the time a job thinks is not owed to its rate.
    pub ignore_thinktime: bool,
}

impl Default for RateOpts {
    fn default() -> Self {
        RateOpts {
            bps: [0; 2],
            iops: [0; 2],
            min_bps: [0; 2],
            min_iops: [0; 2],
            poisson: false,
            cycle_ms: 1000,
            ignore_thinktime: false,
        }
    }
}

/// fio's think time: after every `blocks` I/Os (or `iotime_us` of I/O) the job waits for
/// what is in flight, spins `spin_us`, then sleeps the rest of `us`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThinkOpts {
    /// `thinktime`, µs (0 = none).
    pub us: u64,
    /// `thinktime_spin`, µs.
    pub spin_us: u64,
    /// `thinktime_blocks` (default 1).
    pub blocks: u64,
    /// `thinktime_blocks` was given (with `thinktime_iotime`, only then does it count).
    pub blocks_set: bool,
    /// `thinktime_blocks_type=issue` (else I/Os are counted as they complete).
    pub at_issue: bool,
    /// `thinktime_iotime`, µs (0 = none).
    pub iotime_us: u64,
}

impl Default for ThinkOpts {
    fn default() -> Self {
        ThinkOpts {
            us: 0,
            spin_us: 0,
            blocks: 1,
            blocks_set: false,
            at_issue: false,
            iotime_us: 0,
        }
    }
}

/// The block sizes of one direction (fio's `bs`, `bsrange`, `bssplit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSizes {
    /// Smallest size.
    pub min: u64,
    /// Largest size.
    pub max: u64,
    /// `bssplit`: (size, percent) sorted by percent, as fio keeps them (empty: a size is
    /// drawn in `min..=max`, or `min` when they are equal).
    pub split: Vec<(u64, u32)>,
}

impl BlockSizes {
    pub(super) fn fixed(bs: u64) -> BlockSizes {
        BlockSizes {
            min: bs,
            max: bs,
            split: Vec::new(),
        }
    }
}

/// How a laid-out file's space is reserved first (fio's `fallocate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallocate {
    /// `none` (`0`): nothing.
    None,
    /// `native` (fio's default on Linux): `fallocate(fd, 0, ...)`, errors ignored.
    Native,
    /// `posix` (`1`): `posix_fallocate`.
    Posix,
    /// `keep`: `fallocate(fd, FALLOC_FL_KEEP_SIZE, ...)`.
    Keep,
    /// `truncate`: `ftruncate` to the size.
    Truncate,
}

/// `random_generator`: hostbench has one generator; the names say what fio would use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RandGen {
    /// `tausworthe` (fio's default) and `tausworthe64`: hostbench's own generator.
    Tausworthe,
    /// `lfsr`: every block once per pass, even with `norandommap` (a full-period sequence).
    Lfsr,
}

/// The access pattern a job announces to the kernel when it opens its file (fio's
/// `fadvise_hint`): `posix_fadvise` on the file's region and, for the mmap engine,
/// `madvise` on the mapping. Without it the kernel's readahead turns buffered random reads
/// into cache hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FadviseHint {
    /// `0`: no advice.
    None,
    /// `1` (fio's default): RANDOM for a random job, SEQUENTIAL otherwise.
    ByPattern,
    /// `random`: POSIX_FADV_RANDOM whatever the pattern.
    Random,
    /// `sequential`: POSIX_FADV_SEQUENTIAL whatever the pattern.
    Sequential,
}

/// One job, typed, with every default filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// The job's section name (`[name]`, or `--name`): its generated files, its messages
    /// and every clone but the first are named after it.
    pub name: String,
    /// `name=` given inside the section with another name: fio reports the job's first
    /// clone under it (start-up line, "Laying out", its block, JSON `jobname`); the other
    /// clones and the generated file names keep the section's name, as fio 3.33's.
    pub renamed: Option<String>,
    /// Reporting group, as fio numbers them: a job with `stonewall` or `new_group` starts
    /// the next group when the current one has jobs already.
    pub groupid: u32,
    /// `stonewall` (`wait_for_previous`): start only when every job before it has ended.
    pub stonewall: bool,
    /// `new_group`: start a new reporting group (without waiting).
    pub new_group: bool,
    /// `wait_for`: start only when every clone of the job of that name has ended.
    pub wait_for: Option<String>,
    /// `exitall`: when any job ends, stop the jobs `exit_what` names (fio makes this
    /// process-wide as soon as one job sets it; see [`JobSpec::exit_what`]).
    pub exitall: bool,
    /// `exit_what`: which jobs a job's end stops under `exitall`/`exitall_on_error`.
    pub exit_what: ExitWhat,
    /// `exitall_on_error`: like `exitall`, only when this job ends with an error.
    pub exitall_on_error: bool,
    /// `startdelay`, seconds after the start of the run: `(low, high)`; a range draws one
    /// value per clone, uniformly.
    pub startdelay_s: (f64, f64),
    /// `io_size` (`io_limit`): bytes of I/O per pass, independent of the region (`size`);
    /// more than the region wraps around it. `None` = `size`.
    pub io_size: Option<u64>,
    /// `io_size=P%`: that share of the region per pass (fio's `io_size_percent`).
    pub io_size_pct: Option<u64>,
    /// `loops`: passes over the workload (0 counts as 1; ignored by `time_based`).
    pub loops: u32,
    /// `filesize`: the file's size, or a range `(low, high)` to draw it from; then `size`
    /// only limits the I/O of a pass ([`JobSpec::size_limit`]). Resolved into `size` when
    /// the files are laid out.
    pub filesize: Option<(u64, u64)>,
    /// With `filesize` and a file per clone: each clone's region, drawn per file (empty
    /// otherwise: every clone's region is `size`).
    pub file_sizes: Vec<u64>,
    /// With several files: each clone's region of each file, (offset, length) at clone ×
    /// files + file, as fio's `setup_files` sets each file's `file_offset` and `io_size`
    /// (resolved at layout; empty before, or with one file).
    pub file_regions: Vec<(u64, u64)>,
    /// With `filesize`: the `size` given, which limits each pass's bytes (never past the
    /// file). `None` otherwise.
    pub size_limit: Option<u64>,
    /// `number_ios`: stop after this many I/Os per pass (0 = no limit; ignored by
    /// `time_based`).
    pub number_ios: u64,
    /// `filename`, if given (all clones share it): the first of its `:`-separated files.
    pub filename: Option<String>,
    /// The files of a `filename=a:b:c` list after the first (fio's `\:` is a colon in a
    /// name); all clones share them.
    pub more_files: Vec<String>,
    /// Every `filename=` given to the job, in order (`[global]`'s first), each with where
    /// it was written: fio does I/O to all their files, hostbench keeps the last
    /// ([`filename_notice`] says so).
    pub filenames_given: Vec<(String, String)>,
    /// `nrfiles`: files per clone with generated names (ignored with `filename`, as fio).
    pub nrfiles: u32,
    /// `opendir=DIR`: the directory whose regular files (found as fio 3.33's
    /// `recurse_dir` finds them: [`opendir_files`]) are the job's `filename` list, and how
    /// many there were (fio's `opendir added N files`).
    pub opendir: Option<(String, usize)>,
    /// `openfiles`: at most this many of a clone's files open at once (0: all).
    pub openfiles: u32,
    /// `file_service_type`: which of several files the next I/O goes to.
    pub file_service: FileService,
    /// `unlink_each_loop`: the files are removed after each pass but the last.
    pub unlink_each_loop: bool,
    /// `directory` for generated names.
    pub directory: String,
    /// The `directory` in effect when `filename` was given (fio adds a named file with
    /// the directory set before it: on the command line `--filename=x --directory=d` is
    /// `./x`); `None`: `directory`.
    pub filename_dir: Option<String>,
    /// Where the run's own files go (the verify state): the native grammar's `dir`, empty
    /// for `hostbench fio`, whose files go to the current directory as fio's do.
    pub run_dir: String,
    /// `size`: bytes of I/O per clone, and the region; `None` = the existing file's size.
    pub size: Option<u64>,
    /// `offset` into the file where the region starts (of the first clone).
    pub offset: u64,
    /// `offset_increment`: each further clone's region starts this much later (clone N at
    /// `offset + N × offset_increment`, in its own file or the shared one).
    pub offset_increment: u64,
    /// `size`, `offset` and `offset_increment` given as percentages of the file's length
    /// (`size=50%`): resolved against [`JobSpec::real_size`] when the files are laid out.
    pub pct: Percentages,
    /// The length of the job's file when percentages were resolved (`None` before, or
    /// without percentages).
    pub real_size: Option<u64>,
    /// Block size of reads (the smallest, with `bsrange`/`bssplit`).
    pub bs_read: u64,
    /// Block size of writes (the smallest, with `bsrange`/`bssplit`).
    pub bs_write: u64,
    /// Block sizes per direction (read, write, trim): `bs`, `bsrange`, `bssplit`.
    pub bsz: [BlockSizes; 3],
    /// `blockalign` (`ba`) per direction: random offsets are multiples of it (`None`: the
    /// smallest block size of reads and writes).
    pub blockalign: [Option<u64>; 3],
    /// `bs_unaligned`: sizes drawn from a range are not rounded to the smallest size.
    pub bs_unaligned: bool,
    /// `bs_is_seq_rand`: an I/O's size is drawn from the read sizes when it is placed
    /// sequentially and from the write sizes when it is placed at random, whatever its
    /// direction (fio 3.33's `get_next_buflen`); offsets, alignment and the random map
    /// stay the direction's own.
    pub bs_is_seq_rand: bool,
    /// `rw=...:N` on a sequential job: bytes skipped after each I/O (holes; negative reads
    /// backwards).
    pub seq_add: i64,
    /// `rw=...:N` on a random job: a new random offset every N I/Os, sequential between.
    pub seq_nr: u32,
    /// `rw_sequencer=identical`: between random offsets the same offset again.
    pub rw_seq_identical: bool,
    /// `zonemode=strided` with `zonesize`, `zonerange`, `zoneskip`: the job does its I/O
    /// in one zone at a time ([`Zones`]); `None` is `zonemode=none` (fio 3.33 refuses a
    /// `zonesize` without `zonemode=strided`).
    pub zones: Option<Zones>,
    /// `zonemode=zbd`: zones with write pointers emulated in a regular file or a
    /// non-zoned block device ([`ZbdOpts`], `zbd.rs`); `None` otherwise.
    pub zbd: Option<ZbdOpts>,
    /// `percentage_random` per direction (random jobs; 100 by default).
    pub percentage_random: [u32; 3],
    /// `random_generator`.
    pub random_generator: RandGen,
    /// `offset_align`: percentages of `offset`/`offset_increment` are rounded up to it
    /// (`None`: to the smallest block size).
    pub offset_align: Option<u64>,
    /// `unlink`: the job's files are deleted when it ends.
    pub unlink: bool,
    /// `create_on_open`: no layout; the file is created when the job opens it.
    pub create_on_open: bool,
    /// `overwrite`: a job that only writes has its missing file written out before the run
    /// (fio's default 0 creates it and reserves its space only; a job that reads always
    /// has its file written out, fio setting `overwrite` for it).
    pub overwrite: bool,
    /// `create_fsync` (fio's default 1): a file written out before the run is fsynced.
    pub create_fsync: bool,
    /// `create_only`: the files are laid out and the job does no I/O.
    pub create_only: bool,
    /// `fsync_on_close`: a writer's files are fsynced when the job closes them.
    pub fsync_on_close: bool,
    /// `pre_read`: the job's region of each file is read once before the run (so it sits
    /// in the page cache), and the cache is not dropped then.
    pub pre_read: bool,
    /// `file_append`: each file's region starts at its end (its length when the job is
    /// set up), as if `offset` were that length.
    pub file_append: bool,
    /// `allow_file_create` (fio's default 1): 0 refuses to create a missing file.
    pub allow_file_create: bool,
    /// `unique_filename` (fio's default 1): only changes names in fio's client/server mode;
    /// 0 with verify and several writers brings fio's warning about overwritten blocks.
    pub unique_filename: bool,
    /// `lockfile`: how clones sharing a file take turns per I/O.
    pub lockfile: LockFile,
    /// The `lockfile` in effect when `filename` was given: fio makes a named file's lock
    /// when it adds the file, so on the command line `--filename=f --lockfile=exclusive`
    /// locks nothing (a job file's section sets `lockfile` first).
    pub filename_lockfile: LockFile,
    /// Set at setup: the clones fio gives no file, which never start (a clone after the
    /// first whose generated names, `filename_format` without `$jobnum`, are all taken
    /// already: fio's `add_file` skips a name an earlier clone of a job of several has).
    pub idle_clones: Vec<u32>,
    /// Set at setup: the clones whose file could not be laid out (a read-only or
    /// unwritable directory), each with fio's error (errno, `func`, what failed). As
    /// fio's, such a clone never starts and ends with that error; the other jobs run.
    pub layout_failed: Vec<(u32, CloneError)>,
    /// `create_serialize` (fio's default 1): the files are laid out before any job starts;
    /// with 0 fio lays a job's out when the job starts.
    pub create_serialize: bool,
    /// `fill_device` (`fill_fs`): a writer goes on until the filesystem is full; ENOSPC
    /// (or EDQUOT) ends it without an error.
    pub fill_device: bool,
    /// Set at setup: the job's one file is made during the run by an earlier
    /// `fill_device` job, so its size is read when the clone opens it (fio sizes a job's
    /// files when the job starts).
    pub sized_at_open: bool,
    /// `read_iolog` and the `replay_*` options: the clone's I/O comes from the log
    /// (`iolog.rs`); resolved at setup ([`super::iolog::scan`]).
    pub replay: Option<super::iolog::ReplayOpts>,
    /// `write_iolog`: each clone appends what it issues to this log.
    pub write_iolog: Option<String>,
    /// `write_iolog` was given with `read_iolog`, which overrides it (fio says so).
    pub write_iolog_dropped: bool,
    /// `time_based` was given without `runtime`: fio turns it off (and says so), the job
    /// runs by size.
    pub time_based_dropped: bool,
    /// A replay's `rw` and block sizes as the job gave them (`read_iolog` sets its own from
    /// the log): fio's start-up line shows these.
    pub replay_shown: Option<(Rw, [BlockSizes; 3])>,
    /// `fallocate`: how a laid-out file's space is reserved first.
    pub fallocate: Fallocate,
    /// `filename_format`: how generated file names are made (`None`: fio's default
    /// `$jobname.$jobnum.$filenum`).
    pub filename_format: Option<String>,
    /// `rw`.
    pub rw: Rw,
    /// `rwmixread`, percent.
    pub rwmixread: u32,
    /// `iodepth`.
    pub iodepth: u32,
    /// `iodepth_batch_submit`: I/Os handed to the kernel per submit call (0 = 1).
    pub iodepth_batch_submit: u32,
    /// `iodepth_batch_complete_min`: completions to wait for per reap (fio's default 1; 0 =
    /// poll without waiting).
    pub iodepth_batch_complete_min: u32,
    /// `iodepth_batch_complete_max`: completions taken per reap (0 = the minimum, fio's
    /// default). Taking one and replacing it before the next keeps the queue full.
    pub iodepth_batch_complete_max: u32,
    /// `io_submit_mode=offload`: the clone hands its I/Os to `iodepth` submitting threads
    /// (fio's `rate-submit.c`) instead of submitting and reaping them itself (`inline`).
    pub offload: bool,
    /// `ioengine`.
    pub engine: EngineKind,
    /// `direct` (O_DIRECT).
    pub direct: bool,
    /// `atomic=1`: fio 3.33's O_ATOMIC, which implies `direct`. Linux has no such flag;
    /// fio then sends its own value for it, [`O_ATOMIC_FIO`], with O_DIRECT on each open
    /// (the kernel's `open` ignores a bit it does not know), and so does hostbench.
    pub atomic: bool,
    /// `sync`: the flag the job's files are opened with (`O_SYNC` for `1`/`sync`,
    /// `O_DSYNC` for `dsync`, 0 for `0`/`none`), as fio's `generic_open_file` adds it (not
    /// to a trim job's open, not to the layout's).
    pub sync_io: i32,
    /// `numjobs`.
    pub numjobs: u32,
    /// `runtime`, seconds.
    pub runtime_s: Option<f64>,
    /// `time_based`.
    pub time_based: bool,
    /// `ramp_time`, seconds.
    pub ramp_time_s: f64,
    /// `randrepeat`.
    pub randrepeat: bool,
    /// `allrandrepeat`: every generator seeded from fio's fixed seed (see
    /// [`Self::fio_rand_seed`]).
    pub allrandrepeat: bool,
    /// `randseed`.
    pub randseed: Option<u64>,
    /// `random_generator=tausworthe64`: fio's 64-bit generator where hostbench draws as
    /// fio does (the trim list of `trim_percentage`).
    pub rand64: bool,
    /// `gtod_reduce`: no latency statistics.
    pub gtod_reduce: bool,
    /// `clocksource` (`cpu`: the CPU's counter, `clock_gettime`: `CLOCK_MONOTONIC`,
    /// `gettimeofday`): fio's is the process's, the last one parsed, so every job carries
    /// the run's (`None`: none given, the machine's choice).
    pub clocksource: Option<hostbench_core::clock::ClockSource>,
    /// `norandommap`.
    pub norandommap: bool,
    /// `softrandommap`: a random map that cannot be allocated is done without.
    pub softrandommap: bool,
    /// `write_barrier=N`: fio 3.33 marks every Nth write a barrier write (`IO_U_F_BARRIER`),
    /// a flag none of its engines reads: the I/O is the same. Kept to be shown, nothing
    /// more.
    pub write_barrier: u32,
    /// `random_distribution`.
    pub dist: RandDist,
    /// `fsync`: fsync after this many writes (0 = never).
    pub fsync: u32,
    /// `fdatasync`: fdatasync after this many writes (0 = never).
    pub fdatasync: u32,
    /// `end_fsync`.
    pub end_fsync: bool,
    /// Where the I/O buffers live and the memory locked (`mem`/`iomem`, `mem_align`,
    /// `hugepage-size`, `lockmem`).
    pub mem: super::mem::MemOpts,
    /// `sync_file_range=FLAGS[:N]`: `sync_file_range(2)` with `FLAGS` (the
    /// `SYNC_FILE_RANGE_*` bits) over the range written since the last one, every N
    /// writes.
    pub sync_file_range: Option<(u32, u32)>,
    /// `iodepth_low`: once the queue is full, completions are reaped until no more than
    /// this many are in flight (0: the job's `iodepth`, fio's default).
    pub iodepth_low: u32,
    /// `serialize_overlap`: an I/O that overlaps one in flight waits until nothing in
    /// flight overlaps it (fio 3.33's `in_flight_overlap`). Kept only where fio keeps it:
    /// a job that writes or trims (or replays a log) at a depth above 1.
    pub serialize_overlap: bool,
    /// `rate` and `rate_iops` (per clone), `rate_min`, `rate_iops_min`, `rate_process`,
    /// `rate_cycle`, `rate_ignore_thinktime`.
    pub rate: RateOpts,
    /// `thinktime` and its companions.
    pub think: ThinkOpts,
    /// `flow`: the job's weight in its flow (0 = none).
    pub flow: u32,
    /// `flow_id`.
    pub flow_id: u32,
    /// `flow_sleep`, µs: how long a clone held back by its flow sleeps.
    pub flow_sleep_us: u64,
    /// `group_reporting`.
    pub group_reporting: bool,
    /// `stats` (default 1): with 0 the job's figures are left out of the report and of
    /// its group's totals, and its I/Os' latencies are not checked against `max_latency`.
    pub stats: bool,
    /// `invalidate`: drop the file's cached pages before the run.
    pub invalidate: bool,
    /// `disk_util`: report the devices' counters over the run (fio's "Disk stats").
    pub disk_util: bool,
    /// `ioscheduler`: the I/O scheduler each clone selects for the block devices named
    /// in `filename=` as it starts (`iosched.rs`; `None`: left as it is).
    pub ioscheduler: Option<String>,
    /// `fadvise_hint`.
    pub fadvise_hint: FadviseHint,
    /// `write_hint`: the write life-time hint fio sets on each file it opens (Linux's
    /// `RWH_WRITE_LIFE_*`: none 1 .. extreme 5), through `F_SET_RW_HINT` (the inode's), or
    /// `F_SET_FILE_RW_HINT` (the open file's) with `direct=1`.
    pub write_hint: Option<u64>,
    /// The options of the job's own section, as given (fio's `"job options"`).
    pub own_opts: Vec<(String, String)>,
    /// `allow_mounted_write`: write a block device even while it is mounted or in use.
    pub allow_mounted_write: bool,
    /// `thread`: fio would start the clones as threads, not processes.
    pub thread: bool,
    /// The engine's own options (`cpuload`, `cpuchunks`, `cpumode`, `exit_on_io_done`).
    pub eng: super::engines::EngineOpts,
    /// `cpus_allowed`, `cpus_allowed_policy`, `prio`, `prioclass`.
    pub process: super::process::ProcOpts,
    /// libaio's and io_uring's per-I/O priorities (`cmdprio_*`: [`super::cmdprio`]).
    pub cmdprio: super::cmdprio::CmdPrioOpts,
    /// The options that shape the job's report (percentiles, `unified_rw_reporting`,
    /// `description`: [`super::report_opts`]).
    pub report: hostbench_core::fio_result::FioReportOpts,
    /// The job's logs (`write_bw_log` and the others: [`super::logs`]).
    pub logs: super::logs::LogOpts,
    /// Steady-state detection (`ss`, `ss_dur`, `ss_ramp`: [`super::steadystate`]).
    pub ss: super::steadystate::SsOpts,
    /// fio's queue-depth search (`latency_target`, `latency_window`, `latency_percentile`,
    /// `latency_run`: [`super::lattarget`]).
    pub lat: super::lattarget::LatOpts,
    /// `verify` and its companions ([`super::verify`]).
    pub verify: super::verify::VerifyOpts,
    /// What writes write: `refill_buffers`, `buffer_pattern`, `dedupe_percentage` and the
    /// others ([`super::bufs`]).
    pub bufs: super::bufs::BufOpts,
    /// `continue_on_error`, `ignore_error`, `error_dump` ([`super::errors`]).
    pub errors: super::errors::ErrorOpts,
}

/// `size`, `offset`, `offset_increment` given in percent of the file's length.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Percentages {
    /// `size=P%`.
    pub size: Option<u64>,
    /// `offset=P%`.
    pub offset: Option<u64>,
    /// `offset_increment=P%`.
    pub offset_increment: Option<u64>,
}

impl Percentages {
    /// Whether any is given.
    pub fn any(&self) -> bool {
        self.size.is_some() || self.offset.is_some() || self.offset_increment.is_some()
    }
}

/// fio's `lockfile`: how the clones and jobs sharing a file take turns on it, per I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockFile {
    /// No lock (fio's default).
    None,
    /// One I/O on the file at a time, whatever its direction.
    Exclusive,
    /// Reads together, a write alone.
    ReadWrite,
}

/// Which jobs stop when a job ends under `exitall` (fio's `exit_what`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitWhat {
    /// `group` (fio's default): every job of the ending job's group, started or not.
    Group,
    /// `stonewall`: every job running at that moment, in any group; later groups go on.
    Stonewall,
    /// `all`: every job; those not started never start.
    All,
}

/// The open flag fio 3.33 sends for `atomic=1` on Linux, whose C library defines no
/// `O_ATOMIC` (`os/os-linux.h`'s own value, octal 040000000).
pub const O_ATOMIC_FIO: i32 = 0o40000000;

/// An option hostbench accepts: fio's name, its aliases, and whether it is a flag.
struct Opt {
    name: &'static str,
    aliases: &'static [&'static str],
}

/// Options fio 3.33 still takes but ignores (`FIO_OPT_SOFT_DEPRECATED`): it prints
/// `Option NAME is deprecated` for each and runs the job as without it.
pub const DEPRECATED: &[&str] = &["flow_watermark", "verifysort", "verifysort_nr"];

/// hostbench's own notes (not fio's) on time values fio 3.33 reads differently from how
/// they look: a suffix it does not know (`2sec`, `1min`, `10ns`) leaves the number in µs,
/// and a fraction is dropped (`1.5s` is 1 s). The value is taken as fio takes it (same
/// runs, same results); the note says so, as a 60-second `runtime=60sec` that lasts 60 µs
/// is easy to miss. One line per distinct option and value.
pub fn time_notes(sections: &[Section]) -> Vec<String> {
    const TIME_OPTS: &[(&str, f64)] = &[
        ("runtime", 1.0),
        ("ramp_time", 1.0),
        ("startdelay", 1.0),
        ("thinktime", 1e-6),
        ("thinktime_spin", 1e-6),
        ("thinktime_iotime", 1.0),
        ("latency_target", 1e-6),
        ("latency_window", 1e-6),
        ("max_latency", 1e-6),
        ("ss_dur", 1.0),
        ("ss_ramp", 1.0),
    ];
    let mut out: Vec<String> = Vec::new();
    for (k, v) in sections.iter().flat_map(|s| &s.opts) {
        let canon = super::fio_names::canonical_name(k);
        let Some(&(name, unit)) = TIME_OPTS.iter().find(|(n, _)| *n == canon || *n == k) else {
            continue;
        };
        for part in v.split(['-', ',', ':']).filter(|p| !p.trim().is_empty()) {
            let t = part.trim().to_ascii_lowercase();
            if t.starts_with('(') {
                continue;
            }
            let digits = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '+');
            let fraction = digits.starts_with('.');
            let suffix = digits.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            let known = suffix.is_empty()
                || suffix.starts_with("us")
                || suffix.starts_with("ms")
                || matches!(suffix, "s" | "m" | "h" | "d");
            if known && !fraction {
                continue;
            }
            let Some(secs) = parse_fio_time(&t, unit) else {
                continue;
            };
            let read = if secs >= 1.0 {
                format!("{secs} s")
            } else if secs >= 1e-3 {
                format!("{} ms", secs * 1e3)
            } else {
                format!("{} µs", (secs * 1e6).round())
            };
            let why = if known {
                "fio drops the fraction"
            } else {
                "fio's time units are us, ms, s, m, h and d; any other suffix leaves the \
                 number in µs"
            };
            let fix = if known {
                "write it as a whole number of a smaller unit (1500ms, not 1.5s) if you meant \
                 the fraction"
            } else {
                "write it in one of fio's units (60s, 1m) if you meant another"
            };
            let line = format!(
                "hostbench fio: note: {name}={part} is {read}, as fio 3.33 reads it ({why}); {fix}"
            );
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}

/// fio's line for each deprecated option in `sections`, in the order written.
/// With them, in the same order, fio's line for each `opendir` (`fio: opendir added N
/// files`, as its option's parser prints it: once for a `[global]` one).
pub fn deprecated_lines(sections: &[Section]) -> Vec<String> {
    // fio prints its `nr_files` then: the files `filename` and `opendir` added so far
    // (the first list to add files resets it, `nrfiles` sets it), a job starting from
    // the globals' count.
    let mut global = (0usize, 1u64);
    let mut out = Vec::new();
    for sec in sections {
        let is_global = sec.name == "global";
        let mut st = global;
        for (k, v) in &sec.opts {
            let canon = canonical_option(k).unwrap_or(k);
            let add = |st: &mut (usize, u64), n: usize| {
                if st.0 == 0 {
                    st.1 = 0;
                }
                st.0 += n;
                st.1 += n as u64;
            };
            if DEPRECATED.contains(&k.as_str()) {
                out.push(format!("Option {k} is deprecated"));
            } else if canon == "opendir" {
                add(&mut st, opendir_files(v).map_or(0, |f| f.len()));
                out.push(format!("fio: opendir added {} files", st.1));
            } else if canon == "filename" {
                add(&mut st, split_filenames(v).len());
            } else if canon == "nrfiles"
                && let Some(n) = parse_fio_size(v.trim())
            {
                st.1 = n;
            }
        }
        if is_global {
            global = st;
        }
    }
    out
}

const OPTS: &[Opt] = &[
    Opt {
        name: "read_iolog",
        aliases: &[],
    },
    Opt {
        name: "read_iolog_chunked",
        aliases: &[],
    },
    Opt {
        name: "replay_no_stall",
        aliases: &[],
    },
    Opt {
        name: "replay_time_scale",
        aliases: &[],
    },
    Opt {
        name: "replay_redirect",
        aliases: &[],
    },
    Opt {
        name: "replay_align",
        aliases: &[],
    },
    Opt {
        name: "replay_scale",
        aliases: &[],
    },
    Opt {
        name: "replay_skip",
        aliases: &[],
    },
    Opt {
        name: "merge_blktrace_file",
        aliases: &[],
    },
    Opt {
        name: "merge_blktrace_scalars",
        aliases: &[],
    },
    Opt {
        name: "merge_blktrace_iters",
        aliases: &[],
    },
    Opt {
        name: "write_iolog",
        aliases: &[],
    },
    Opt {
        name: "name",
        aliases: &[],
    },
    Opt {
        name: "flow_watermark",
        aliases: &[],
    },
    Opt {
        name: "verifysort",
        aliases: &[],
    },
    Opt {
        name: "verifysort_nr",
        aliases: &[],
    },
    Opt {
        name: "description",
        aliases: &[],
    },
    Opt {
        name: "kb_base",
        aliases: &[],
    },
    Opt {
        name: "unit_base",
        aliases: &[],
    },
    Opt {
        name: "filename",
        aliases: &[],
    },
    Opt {
        name: "directory",
        aliases: &[],
    },
    Opt {
        name: "size",
        aliases: &[],
    },
    Opt {
        name: "offset",
        aliases: &["fileoffset"],
    },
    Opt {
        name: "offset_increment",
        aliases: &[],
    },
    Opt {
        name: "bs",
        aliases: &["blocksize"],
    },
    Opt {
        name: "rw",
        aliases: &["readwrite"],
    },
    Opt {
        name: "rwmixread",
        aliases: &[],
    },
    Opt {
        name: "rwmixwrite",
        aliases: &[],
    },
    Opt {
        name: "iodepth",
        aliases: &[],
    },
    Opt {
        name: "iodepth_batch_submit",
        aliases: &["iodepth_batch"],
    },
    Opt {
        name: "iodepth_batch_complete_min",
        aliases: &["iodepth_batch_complete"],
    },
    Opt {
        name: "iodepth_batch_complete_max",
        aliases: &[],
    },
    Opt {
        name: "ioengine",
        aliases: &[],
    },
    Opt {
        name: "direct",
        aliases: &[],
    },
    Opt {
        name: "atomic",
        aliases: &[],
    },
    Opt {
        name: "buffered",
        aliases: &[],
    },
    Opt {
        name: "sync",
        aliases: &[],
    },
    Opt {
        name: "numjobs",
        aliases: &[],
    },
    Opt {
        name: "runtime",
        aliases: &["timeout"],
    },
    Opt {
        name: "time_based",
        aliases: &[],
    },
    Opt {
        name: "ramp_time",
        aliases: &[],
    },
    Opt {
        name: "randrepeat",
        aliases: &[],
    },
    Opt {
        name: "allrandrepeat",
        aliases: &[],
    },
    Opt {
        name: "randseed",
        aliases: &[],
    },
    Opt {
        name: "gtod_reduce",
        aliases: &[],
    },
    Opt {
        name: "norandommap",
        aliases: &[],
    },
    Opt {
        name: "softrandommap",
        aliases: &[],
    },
    Opt {
        name: "write_barrier",
        aliases: &[],
    },
    Opt {
        name: "random_distribution",
        aliases: &[],
    },
    Opt {
        name: "fsync",
        aliases: &[],
    },
    Opt {
        name: "mem",
        aliases: &["iomem"],
    },
    Opt {
        name: "iomem_align",
        aliases: &["mem_align"],
    },
    Opt {
        name: "hugepage-size",
        aliases: &[],
    },
    Opt {
        name: "lockmem",
        aliases: &[],
    },
    Opt {
        name: "iodepth_low",
        aliases: &[],
    },
    Opt {
        name: "userspace_reap",
        aliases: &[],
    },
    Opt {
        name: "thp",
        aliases: &[],
    },
    Opt {
        name: "clocksource",
        aliases: &[],
    },
    Opt {
        name: "sync_file_range",
        aliases: &[],
    },
    Opt {
        name: "fdatasync",
        aliases: &[],
    },
    Opt {
        name: "end_fsync",
        aliases: &[],
    },
    Opt {
        name: "rate",
        aliases: &[],
    },
    Opt {
        name: "rate_iops",
        aliases: &[],
    },
    Opt {
        name: "rate_min",
        aliases: &["ratemin"],
    },
    Opt {
        name: "rate_iops_min",
        aliases: &[],
    },
    Opt {
        name: "rate_process",
        aliases: &[],
    },
    Opt {
        name: "rate_cycle",
        aliases: &["ratecycle"],
    },
    Opt {
        name: "rate_ignore_thinktime",
        aliases: &[],
    },
    Opt {
        name: "thinktime",
        aliases: &[],
    },
    Opt {
        name: "flow",
        aliases: &[],
    },
    Opt {
        name: "flow_id",
        aliases: &[],
    },
    Opt {
        name: "flow_sleep",
        aliases: &[],
    },
    Opt {
        name: "thinktime_spin",
        aliases: &[],
    },
    Opt {
        name: "thinktime_blocks",
        aliases: &[],
    },
    Opt {
        name: "thinktime_blocks_type",
        aliases: &[],
    },
    Opt {
        name: "thinktime_iotime",
        aliases: &[],
    },
    Opt {
        name: "group_reporting",
        aliases: &[],
    },
    Opt {
        name: "invalidate",
        aliases: &[],
    },
    Opt {
        name: "disk_util",
        aliases: &[],
    },
    Opt {
        name: "log_entries",
        aliases: &[],
    },
    Opt {
        name: "write_hint",
        aliases: &[],
    },
    Opt {
        name: "fadvise_hint",
        aliases: &[],
    },
    Opt {
        name: "allow_mounted_write",
        aliases: &[],
    },
    Opt {
        name: "nrfiles",
        aliases: &["nr_files"],
    },
    Opt {
        name: "thread",
        aliases: &[],
    },
    Opt {
        name: "stonewall",
        aliases: &["wait_for_previous"],
    },
    Opt {
        name: "new_group",
        aliases: &[],
    },
    Opt {
        name: "wait_for",
        aliases: &[],
    },
    Opt {
        name: "exitall",
        aliases: &[],
    },
    Opt {
        name: "exit_what",
        aliases: &[],
    },
    Opt {
        name: "exitall_on_error",
        aliases: &[],
    },
    Opt {
        name: "continue_on_error",
        aliases: &[],
    },
    Opt {
        name: "ignore_error",
        aliases: &[],
    },
    Opt {
        name: "error_dump",
        aliases: &[],
    },
    Opt {
        name: "startdelay",
        aliases: &[],
    },
    Opt {
        name: "io_size",
        aliases: &["io_limit"],
    },
    Opt {
        name: "loops",
        aliases: &[],
    },
    Opt {
        name: "filesize",
        aliases: &[],
    },
    Opt {
        name: "threads",
        aliases: &[],
    },
    Opt {
        name: "numruns",
        aliases: &[],
    },
    Opt {
        name: "stats",
        aliases: &[],
    },
    Opt {
        name: "number_ios",
        aliases: &[],
    },
    Opt {
        name: "percentile_list",
        aliases: &[],
    },
    Opt {
        name: "clat_percentiles",
        aliases: &[],
    },
    Opt {
        name: "lat_percentiles",
        aliases: &[],
    },
    Opt {
        name: "slat_percentiles",
        aliases: &[],
    },
    Opt {
        name: "unified_rw_reporting",
        aliases: &[],
    },
    Opt {
        name: "bsrange",
        aliases: &["blocksize_range"],
    },
    Opt {
        name: "bssplit",
        aliases: &[],
    },
    Opt {
        name: "blockalign",
        aliases: &["ba"],
    },
    Opt {
        name: "serialize_overlap",
        aliases: &[],
    },
    Opt {
        name: "opendir",
        aliases: &[],
    },
    Opt {
        name: "bs_is_seq_rand",
        aliases: &[],
    },
    Opt {
        name: "bs_unaligned",
        aliases: &["blocksize_unaligned"],
    },
    Opt {
        name: "rw_sequencer",
        aliases: &[],
    },
    Opt {
        name: "percentage_random",
        aliases: &[],
    },
    Opt {
        name: "percentage_sequential",
        aliases: &[],
    },
    Opt {
        name: "random_generator",
        aliases: &[],
    },
    Opt {
        name: "offset_align",
        aliases: &[],
    },
    Opt {
        name: "unlink",
        aliases: &[],
    },
    Opt {
        name: "create_on_open",
        aliases: &[],
    },
    Opt {
        name: "overwrite",
        aliases: &[],
    },
    Opt {
        name: "create_fsync",
        aliases: &[],
    },
    Opt {
        name: "create_only",
        aliases: &[],
    },
    Opt {
        name: "fsync_on_close",
        aliases: &[],
    },
    Opt {
        name: "pre_read",
        aliases: &[],
    },
    Opt {
        name: "file_append",
        aliases: &[],
    },
    Opt {
        name: "allow_file_create",
        aliases: &[],
    },
    Opt {
        name: "unique_filename",
        aliases: &[],
    },
    Opt {
        name: "lockfile",
        aliases: &[],
    },
    Opt {
        name: "fallocate",
        aliases: &[],
    },
    Opt {
        name: "filename_format",
        aliases: &[],
    },
    Opt {
        name: "openfiles",
        aliases: &[],
    },
    Opt {
        name: "unlink_each_loop",
        aliases: &[],
    },
    Opt {
        name: "create_serialize",
        aliases: &[],
    },
    Opt {
        name: "fill_device",
        aliases: &["fill_fs"],
    },
    Opt {
        name: "file_service_type",
        aliases: &[],
    },
    Opt {
        name: "write_bw_log",
        aliases: &[],
    },
    Opt {
        name: "write_lat_log",
        aliases: &[],
    },
    Opt {
        name: "write_iops_log",
        aliases: &[],
    },
    Opt {
        name: "write_hist_log",
        aliases: &[],
    },
    Opt {
        name: "log_avg_msec",
        aliases: &[],
    },
    Opt {
        name: "log_max_value",
        aliases: &[],
    },
    Opt {
        name: "log_offset",
        aliases: &[],
    },
    Opt {
        name: "log_hist_msec",
        aliases: &[],
    },
    Opt {
        name: "log_hist_coarseness",
        aliases: &[],
    },
    Opt {
        name: "per_job_logs",
        aliases: &[],
    },
    Opt {
        name: "log_prio",
        aliases: &[],
    },
    Opt {
        name: "bwavgtime",
        aliases: &[],
    },
    Opt {
        name: "iopsavgtime",
        aliases: &[],
    },
    Opt {
        name: "log_unix_epoch",
        aliases: &[],
    },
    Opt {
        name: "log_alternate_epoch",
        aliases: &[],
    },
    Opt {
        name: "log_alternate_epoch_clock_id",
        aliases: &[],
    },
    Opt {
        name: "log_compression",
        aliases: &[],
    },
    Opt {
        name: "log_store_compressed",
        aliases: &[],
    },
    Opt {
        name: "log_compression_cpus",
        aliases: &[],
    },
    Opt {
        name: "disable_lat",
        aliases: &[],
    },
    Opt {
        name: "disable_clat",
        aliases: &[],
    },
    Opt {
        name: "disable_slat",
        aliases: &[],
    },
    Opt {
        name: "disable_bw_measurement",
        aliases: &["disable_bw"],
    },
    Opt {
        name: "ss",
        aliases: &["steadystate"],
    },
    Opt {
        name: "ss_dur",
        aliases: &["steadystate_duration"],
    },
    Opt {
        name: "ss_ramp",
        aliases: &["steadystate_ramp_time"],
    },
    Opt {
        name: "latency_target",
        aliases: &[],
    },
    Opt {
        name: "latency_window",
        aliases: &[],
    },
    Opt {
        name: "latency_percentile",
        aliases: &[],
    },
    Opt {
        name: "latency_run",
        aliases: &[],
    },
    Opt {
        name: "cpus_allowed",
        aliases: &[],
    },
    Opt {
        name: "cpumask",
        aliases: &[],
    },
    Opt {
        name: "significant_figures",
        aliases: &[],
    },
    Opt {
        name: "max_latency",
        aliases: &[],
    },
    Opt {
        name: "ioscheduler",
        aliases: &[],
    },
    Opt {
        name: "exec_prerun",
        aliases: &[],
    },
    Opt {
        name: "exec_postrun",
        aliases: &[],
    },
    Opt {
        name: "cpus_allowed_policy",
        aliases: &[],
    },
    Opt {
        name: "prio",
        aliases: &[],
    },
    Opt {
        name: "prioclass",
        aliases: &[],
    },
    Opt {
        name: "numa_cpu_nodes",
        aliases: &[],
    },
    Opt {
        name: "numa_mem_policy",
        aliases: &[],
    },
    Opt {
        name: "cpuload",
        aliases: &[],
    },
    Opt {
        name: "stat_type",
        aliases: &[],
    },
    Opt {
        name: "donorname",
        aliases: &[],
    },
    Opt {
        name: "inplace",
        aliases: &[],
    },
    Opt {
        name: "cpuchunks",
        aliases: &[],
    },
    Opt {
        name: "cpumode",
        aliases: &[],
    },
    Opt {
        name: "exit_on_io_done",
        aliases: &[],
    },
    Opt {
        name: "uri",
        aliases: &[],
    },
    Opt {
        name: "hostname",
        aliases: &[],
    },
    Opt {
        name: "port",
        aliases: &[],
    },
    Opt {
        name: "protocol",
        aliases: &["proto"],
    },
    Opt {
        name: "nodelay",
        aliases: &[],
    },
    Opt {
        name: "listen",
        aliases: &[],
    },
    Opt {
        name: "pingpong",
        aliases: &[],
    },
    Opt {
        name: "interface",
        aliases: &[],
    },
    Opt {
        name: "ttl",
        aliases: &[],
    },
    Opt {
        name: "window_size",
        aliases: &[],
    },
    Opt {
        name: "mss",
        aliases: &[],
    },
    Opt {
        name: "program",
        aliases: &[],
    },
    Opt {
        name: "arguments",
        aliases: &[],
    },
    Opt {
        name: "grace_time",
        aliases: &[],
    },
    Opt {
        name: "std_redirect",
        aliases: &[],
    },
    Opt {
        name: "fixedbufs",
        aliases: &[],
    },
    Opt {
        name: "registerfiles",
        aliases: &[],
    },
    Opt {
        name: "sqthread_poll",
        aliases: &[],
    },
    Opt {
        name: "hipri",
        aliases: &[],
    },
    Opt {
        name: "hipri_percentage",
        aliases: &[],
    },
    Opt {
        name: "uncached",
        aliases: &[],
    },
    Opt {
        name: "nowait",
        aliases: &[],
    },
    Opt {
        name: "sqthread_poll_cpu",
        aliases: &[],
    },
    Opt {
        name: "nonvectored",
        aliases: &[],
    },
    Opt {
        name: "force_async",
        aliases: &[],
    },
    Opt {
        name: "nice",
        aliases: &[],
    },
    Opt {
        name: "io_submit_mode",
        aliases: &[],
    },
    Opt {
        name: "cmdprio_percentage",
        aliases: &[],
    },
    Opt {
        name: "cmdprio_class",
        aliases: &[],
    },
    Opt {
        name: "cmdprio",
        aliases: &[],
    },
    Opt {
        name: "cmdprio_bssplit",
        aliases: &[],
    },
    Opt {
        name: "zonemode",
        aliases: &[],
    },
    Opt {
        name: "zonesize",
        aliases: &[],
    },
    Opt {
        name: "zonerange",
        aliases: &[],
    },
    Opt {
        name: "zoneskip",
        aliases: &[],
    },
    Opt {
        name: "zonecapacity",
        aliases: &[],
    },
    Opt {
        name: "read_beyond_wp",
        aliases: &[],
    },
    Opt {
        name: "max_open_zones",
        aliases: &[],
    },
    Opt {
        name: "job_max_open_zones",
        aliases: &[],
    },
    Opt {
        name: "ignore_zone_limits",
        aliases: &[],
    },
    Opt {
        name: "zone_reset_threshold",
        aliases: &[],
    },
    Opt {
        name: "zone_reset_frequency",
        aliases: &[],
    },
];

/// fio's name for option `k` (resolving aliases), if hostbench supports it.
pub fn canonical_option(k: &str) -> Option<&'static str> {
    OPTS.iter()
        .find(|o| o.name == k || o.aliases.contains(&k))
        .map(|o| o.name)
        .or_else(|| {
            super::verify::OPTION_NAMES
                .iter()
                .chain(super::bufs::OPTION_NAMES)
                .find(|&&n| n == k)
                .copied()
        })
}

/// The options hostbench supports, in fio's spelling.
pub fn supported_options() -> impl Iterator<Item = &'static str> {
    OPTS.iter()
        .map(|o| o.name)
        .chain(super::verify::OPTION_NAMES.iter().copied())
        .chain(super::bufs::OPTION_NAMES.iter().copied())
}

/// `k=v` written with a space after `=` (`rw= read`, `rw = read` in a job file): fio 3.33
/// keeps that space in the value, so an option whose value it matches against a list of
/// values (`rw`, `verify`, `ioengine`, `cpumode`, ...), a pattern, or `opendir`'s path
/// fails (`fio: failed parsing rw= read`, the job dropped); a number or a file name takes
/// it. The error for the options fio fails on, `None` for the others (`v` is the value as
/// written, `at` where).
pub fn leading_space_error(k: &str, v: &str, at: &str) -> Option<String> {
    let name = canonical_option(k).unwrap_or(k);
    if !v.starts_with(char::is_whitespace) || v.trim().is_empty() {
        return None;
    }
    let listed = super::cmdhelp::matches_a_list(name)
        || super::cmdhelp::matches_a_list(k)
        || matches!(
            name,
            "ioengine"
                | "buffer_pattern"
                | "verify_pattern"
                | "opendir"
                | "cpumode"
                | "stat_type"
                | "protocol"
        );
    listed.then(|| {
        format!(
            "{at}: {k}={v}: the space after '=' is part of the value for fio 3.33, which then \
             fails on it (fio: failed parsing {k}={v}, the job dropped); write {k}={}",
            v.trim()
        )
    })
}

/// Why option `k` (which hostbench does not take) is refused; `shown` is how the user wrote
/// it (`--rate`, `'rate'`; the caller says where). An option fio 3.33 has is named as such,
/// and never as a typo: a supported option of a near name (`sync` → `fsync`) means
/// something else, so none is proposed. Anything else is a typo, with the closest name
/// when there is one. Both point to the list of the options hostbench takes, not print it
/// (over 300 names).
pub fn unsupported_option(k: &str, shown: &str) -> String {
    const LIST: &str = "the options hostbench takes: docs/fio.md, Options";
    if super::fio_names::is_job_option(k) {
        if let Some(why) = refusal_reason(k) {
            return format!(
                "fio option {shown} is not supported by hostbench yet: {why}; remove it ({LIST})"
            );
        }
        return format!("fio option {shown} is not supported by hostbench yet; remove it ({LIST})");
    }
    let near = closest_option(k).map(|c| shown.replace(k, c));
    match near {
        Some(c) => format!("{shown} is not a fio option (did you mean {c}?; {LIST})"),
        None => format!("{shown} is not a fio option; check the spelling ({LIST})"),
    }
}

/// Why hostbench refuses fio option `k`, for the options whose reason is more than "not
/// done yet".
pub fn refusal_reason(k: &str) -> Option<&'static str> {
    Some(match k {
        "uid" | "gid" => {
            "jobs are threads whose files are laid out before they start; run hostbench as \
             that user (runuser -u USER --)"
        }
        // fio's gtod_cpu starts a thread spinning on that CPU with gettimeofday and has the
        // jobs read its copy (microsecond steps) instead of the clock.
        "gtod_cpu" => {
            "fio then keeps the time in a thread spinning on that CPU (gettimeofday, 1 µs \
             steps) and takes the CPU from the jobs; hostbench's jobs read the clock \
             themselves (TSC or vDSO, ns steps, cost per read in `hostbench info`), so there \
             is no clock read to offload; drop it (gtod_reduce=1 takes the latency clocks \
             off, cpus_allowed keeps jobs off a CPU)"
        }
        // fio 3.33's sort of its per-block trim states reads each 32-bit entry as 64 bits:
        // the first trim that completes makes it fail an assertion in stat.c and abort.
        "block_error_percentiles" => {
            "fio 3.33 aborts with it (SIGABRT, stat.c's block_state_category assertion) as soon \
             as a trim completes (on a block device; its trims of regular files fail), and a \
             job without trims gets an empty histogram; there is no working report to match; \
             remove it"
        }
        "cgroup" | "cgroup_weight" | "cgroup_nodelete" => {
            "hostbench makes no blkio cgroup; run it inside one (cgexec, or systemd-run -p \
             IOWeight=N)"
        }
        _ => return None,
    })
}

/// The closest supported option name or alias to a mistyped `k`, if it looks like a typo.
pub fn closest_option(k: &str) -> Option<&'static str> {
    hostbench_core::suggest::closest(
        k,
        OPTS.iter()
            .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied())),
    )
}

/// Parses a fio size as fio 3.33 reads it: digits (or `0x` hex) with an optional suffix
/// matched by its first letters, case-insensitive — `k m g t p` powers of the job's
/// `kb_base` (1024 unless the job sets `kb_base=1000`), the IEC forms `kib mib gib tib pib`
/// powers of the other base (fio's rule: `4kib` is 4000 with the default kb_base), `b`
/// bytes (`4k`, `4KB`, `1M`, `4096`, `0x1000`) — or an arithmetic value in parentheses
/// (`(64*1024)`, `(4k*2)`: [`super::expr::eval`]). A fraction (`1.5m`, which fio reads as 1
/// byte) is refused.
pub fn parse_fio_size(text: &str) -> Option<u64> {
    let t = text.trim();
    if t.starts_with('(') {
        let v = super::expr::eval(t, super::expr::Kind::Size).ok()?;
        return (v >= 0.0 && v < u64::MAX as f64).then_some(v as u64);
    }
    let (n, rest) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => {
            let end = hex
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(hex.len());
            (u64::from_str_radix(&hex[..end], 16).ok()?, &hex[end..])
        }
        None => {
            let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
            if end == 0 {
                return None;
            }
            (t[..end].parse::<u64>().ok()?, &t[end..])
        }
    };
    n.checked_mul(super::expr::size_multiplier(rest, super::expr::kb_base())?)
}

/// Parses a fio time as fio 3.33's `check_str_time` reads it, in seconds: `default_unit_s`
/// is the unit of a bare number (1.0: seconds, for runtime, ramp_time, startdelay; 1e-6:
/// µs, for thinktime, latency_target, max_latency). fio counts whole µs: the value is a
/// whole number (`strtoll`: `1.5s` is 1 s, fio stops at the dot, and a bare `1.5` is 1 of
/// the default unit), times the unit its suffix names — `us`/`usec` (any suffix starting
/// `us`), `ms`/`msec` (starting `ms`), `s`, `m`, `h`, `d` — and any other suffix (`ns`,
/// `sec`, `min`) leaves it in µs, as fio's `get_mult_time` does (`10ns` is 10 µs, `2sec`
/// 2 µs). An arithmetic value in parentheses (`(2*30)`, `(1m+30s)`) is evaluated. A
/// negative value is refused (fio takes it and wraps it to a huge one).
pub fn parse_fio_time(text: &str, default_unit_s: f64) -> Option<f64> {
    let t = text.trim().to_ascii_lowercase();
    if t.starts_with('(') {
        let v = super::expr::eval(&t, super::expr::Kind::Time(default_unit_s)).ok()?;
        return (v >= 0.0).then_some(v);
    }
    fio_time_us(&t, default_unit_s >= 1.0).map(|us| us as f64 / 1e6)
}

/// fio's `str_to_decimal` for a time (`is_seconds`: a bare number is seconds, else µs),
/// in µs; `None` where fio finds no number (or a negative one).
fn fio_time_us(t: &str, is_seconds: bool) -> Option<u64> {
    let body = t.strip_prefix('+').unwrap_or(t);
    // strtoll, base 16 when the text holds `0x` anywhere (as fio), else 10.
    let n = if t.contains("0x") {
        let hex = body.strip_prefix("0x")?;
        let end = hex
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(hex.len());
        u64::from_str_radix(&hex[..end], 16).ok()?
    } else {
        let end = body
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(body.len());
        if end == 0 {
            return None;
        }
        body[..end].parse::<u64>().ok()?
    };
    // get_mult_time: the suffix starts after the digits and signs.
    let rest = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '+' || c == '-');
    let mult: u64 = if !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        if is_seconds { 1_000_000 } else { 1 }
    } else if rest.starts_with("us") {
        1
    } else if rest.starts_with("ms") {
        1_000
    } else {
        match rest {
            "s" => 1_000_000,
            "m" => 60_000_000,
            "h" => 3_600_000_000,
            "d" => 86_400_000_000,
            _ => 1,
        }
    };
    n.checked_mul(mult)
}

fn parse_bool_opt(k: &str, v: &str, at: &str) -> Result<bool, JobError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => err(format!("{at}: {k}={v}: expected 0 or 1")),
    }
}

/// A fio integer option's value (`FIO_OPT_INT`, parsed by fio's `check_str_bytes`): a
/// whole number with fio's size suffixes (`fsync=1k` is 1024, `k` as `kb_base` says), `0x`
/// hex, or an arithmetic value; of a list (`4:8`, `4,8`, `4-8`: fio's `handle_option`
/// parses each part) the first part, which fio stores (options with a callback, where the
/// last part wins, are given [`last_part`]).
pub(super) fn parse_int(k: &str, v: &str, at: &str, min: u64, max: u64) -> Result<u64, JobError> {
    let t = v.trim();
    let n = if t.starts_with('(') {
        match super::expr::eval(t, super::expr::Kind::Count) {
            Ok(x) if x >= 0.0 && x < u64::MAX as f64 => Ok(x as u64),
            Ok(_) => Err(()),
            Err(e) => return err(format!("{at}: {k}={v}: {e}")),
        }
    } else {
        let first = t
            .find([',', ':'])
            .or_else(|| t.get(1..).and_then(|r| r.find('-')).map(|i| i + 1))
            .map_or(t, |i| &t[..i]);
        parse_fio_size(first).ok_or(())
    };
    match n {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => err(format!(
            "{at}: {k}={v}: expected a whole number from {min} to {max}"
        )),
    }
}

/// The part of a value list fio keeps for an option with a callback (`size`, `io_size`,
/// `offset`, `offset_increment`, `zoneskip`, `rwmixread`, `rwmixwrite`): fio's
/// `handle_option` cuts the value at `,`, else `:`, else `-`, and calls the callback with
/// each part in turn, so the last (non-empty) one wins: `size=1m:2m` is 2 MiB. An
/// arithmetic value is one part.
fn last_part(v: &str) -> &str {
    let mut rest = v.trim();
    if rest.starts_with('(') {
        return rest;
    }
    let mut last = rest;
    while let Some(i) = rest
        .find(',')
        .or_else(|| rest.find(':'))
        .or_else(|| rest.find('-'))
    {
        let part = rest[..i].trim();
        if !part.is_empty() {
            last = part;
        }
        rest = &rest[i + 1..];
    }
    if !rest.trim().is_empty() {
        last = rest.trim();
    }
    last
}

pub(super) fn parse_size_opt(k: &str, v: &str, at: &str) -> Result<u64, JobError> {
    if v.trim().starts_with('(')
        && let Err(e) = super::expr::eval(v.trim(), super::expr::Kind::Size)
    {
        return err(format!("{at}: {k}={v}: {e}"));
    }
    parse_fio_size(v).ok_or_else(|| {
        JobError(format!(
            "{at}: {k}={v}: expected a size such as 4096, 4k, 1m or 4g (k = {}), or an \
             arithmetic value such as (64*1024)",
            super::expr::kb_base()
        ))
    })
}

/// `zonesize`/`zonerange`: a size, or `P%`, which fio 3.33 parses as its percent marker
/// (`u64::MAX - P`, `parse.c:str_to_decimal`) and uses as that many bytes, as no zone option
/// reads it as a share: a zone that never ends (zonesize) or that steps past the file's end
/// to its start (zonerange).
fn zone_size(k: &str, v: &str, at: &str) -> Result<u64, JobError> {
    match v.trim().strip_suffix('%') {
        Some(p) => p.trim().parse::<u64>().map(|p| u64::MAX - p).map_err(|_| {
            JobError(format!(
                "{at}: {k}={v}: expected a size such as 4096, 4k or 1m, or a whole percentage"
            ))
        }),
        None => parse_size_opt(k, v, at),
    }
}

/// Whether a zone size is fio's percent marker (see [`zone_size`]).
fn zone_percent(v: u64) -> bool {
    v > u64::MAX - (1 << 32)
}

/// `P%` (a whole percent from `min` to 100) as `Some(P)`; `None` when `v` is no percentage.
fn percent(k: &str, v: &str, at: &str, min: u64) -> Result<Option<u64>, JobError> {
    let Some(p) = v.trim().strip_suffix('%') else {
        return Ok(None);
    };
    match p.trim().parse::<u64>() {
        Ok(n) if (min..=100).contains(&n) => Ok(Some(n)),
        _ => err(format!(
            "{at}: {k}={v}: expected a whole percentage from {min}% to 100%"
        )),
    }
}

/// A time or a range of times (`startdelay=2`, `startdelay=1-5`, `1s:500ms`; a bare number
/// is seconds), as `(low, high)` seconds; a reversed range is put in order, as fio does.
fn parse_time_range(k: &str, v: &str, at: &str) -> Result<(f64, f64), JobError> {
    let bad = || {
        JobError(format!(
            "{at}: {k}={v}: expected a time such as 2, 500ms or 10s, or a range such as 1-5"
        ))
    };
    let (lo, hi) = match v.split_once(['-', ':']) {
        Some((a, b)) => (
            parse_fio_time(a, 1.0).ok_or_else(bad)?,
            parse_fio_time(b, 1.0).ok_or_else(bad)?,
        ),
        None => {
            let t = parse_fio_time(v, 1.0).ok_or_else(bad)?;
            (t, t)
        }
    };
    // fio keeps times in µs; a year is far beyond any benchmark and keeps the sums finite.
    if lo > 366.0 * 86400.0 || hi > 366.0 * 86400.0 {
        return Err(bad());
    }
    Ok((lo.min(hi), lo.max(hi)))
}

/// Turns parsed sections into jobs: every `[global]` applies to the jobs below it. Checks
/// every option and value; the first problem is the error.
pub fn jobs_from_sections(sections: &[Section]) -> Result<Vec<JobSpec>, JobError> {
    let mut global: Vec<(String, String, String)> = Vec::new();
    let mut global_known: Vec<String> = Vec::new();
    let mut jobs = Vec::new();
    // The first job of a later job file is a stonewall (fio sets it on the job before its
    // own options are read: its own `stonewall=0` wins, a `[global]` one does not). It is
    // no option of the job's: fio's "job options" do not show it.
    let mut file_stonewall = false;
    for sec in sections {
        if sec.file_start {
            global.clear();
            global_known.clear();
            file_stonewall = true;
        }
        for (i, (k, _)) in sec.opts.iter().enumerate() {
            if canonical_option(k).is_none() {
                let at = sec.opt_at.get(i).unwrap_or(&sec.origin);
                return err(format!(
                    "{at}: {}",
                    unsupported_option(k, &format!("'{k}'"))
                ));
            }
        }
        // Each option keeps its own line, so a bad value is reported where it is written.
        let own = sec.opts.iter().enumerate().map(|(i, (k, v))| {
            let at = sec.opt_at.get(i).unwrap_or(&sec.origin);
            (k.clone(), v.clone(), at.clone())
        });
        if sec.is_global() {
            global.extend(own);
            // Check the values now so the error points at the global option. Whether the
            // options fit together (an exec job needs a runtime) is a job's question: a
            // job below may complete them.
            let mut probe: Vec<(String, String, String)> = global.clone();
            probe.push(("name".into(), "global-check".into(), sec.origin.clone()));
            let g = apply_options(&probe, "global-check", &[])?;
            // An engine option the [global]'s own ioengine= knows stays known to the jobs
            // below that pick another engine (fio parsed it with the global's engine, and
            // the job's engine ignores it: e4defrag2.fio's donorname with libaio jobs).
            global_known = g
                .eng
                .given
                .iter()
                .filter(|(k, _)| engine_of_option(k) == g.engine)
                .map(|(_, at)| at.clone())
                .collect();
            continue;
        }
        let mut all = global.clone();
        if std::mem::take(&mut file_stonewall) {
            all.push(("stonewall".into(), String::new(), sec.origin.clone()));
        }
        all.extend(own);
        let mut job = apply_options(&all, &sec.name, &sec.opts)?;
        if job.time_based && job.runtime_s.is_none() {
            // fio's fixup_options: time_based without a runtime is turned off, with a
            // warning; the job runs by size.
            job.time_based = false;
            job.time_based_dropped = true;
        }
        if job.pre_read {
            // fio: what was read beforehand stays in the page cache (invalidate off).
            job.invalidate = false;
        }
        finish_engine(&mut job, &global_known)?;
        check_job(&job)?;
        check_waitee(&job, &jobs, &sec.origin)?;
        jobs.push(job);
    }
    if jobs.is_empty() {
        return err(
            "no jobs: give at least one job (--name=NAME on the command line, or a [jobname] section in a job file)",
        );
    }
    assign_groups(&mut jobs);
    super::steadystate::check_groups(&jobs)?;
    // fio's clocksource sets the process's clock as it is parsed: the last one, wherever
    // it was written, is every job's.
    let mut clock = None;
    for sec in sections {
        for (i, (k, v)) in sec.opts.iter().enumerate() {
            if canonical_option(k) == Some("clocksource") {
                clock = Some(parse_clocksource(
                    v,
                    sec.opt_at.get(i).unwrap_or(&sec.origin),
                )?);
            }
        }
    }
    for j in &mut jobs {
        j.clocksource = clock;
    }
    Ok(jobs)
}

/// fio's warning when a job both replays and writes an I/O log (the replay wins).
pub const READ_IOLOG_OVERRIDES: &str = "fio: read iolog overrides write_iolog";

/// fio 3.33's fix-up warnings for job `j` (`init.c:fixup_options`: an option given is
/// changed to fit the others and the job goes on), in fio's order, each with how many times
/// a run prints it (fio fixes each clone up again: a warning whose cause the first fix-up
/// does not remove is printed once per clone). `--warnings-fatal` makes the first job with
/// one end the run. A fix-up fio only warns about and hostbench refuses (`time_based`
/// without a runtime) is not here: it is an error either way.
pub fn fixup_warnings(j: &JobSpec) -> Vec<(String, u32)> {
    let mut w = Vec::new();
    // (Dropped when the replay is resolved, before the run.)
    if j.write_iolog_dropped || (j.replay.is_some() && j.write_iolog.is_some()) {
        w.push((READ_IOLOG_OVERRIDES.to_string(), 1));
    }
    // fio: a `blockalign` other than a direction's smallest size (looked at for random
    // jobs only) turns the random map off.
    let mut norandommap = j.norandommap;
    if j.rw.random()
        && !j.norandommap
        && (0..3).any(|d| j.blockalign[d].is_some_and(|a| a != j.bsz[d].min))
    {
        w.push((
            "fio: Any use of blockalign= turns off randommap".to_string(),
            1,
        ));
        norandommap = true;
    }
    let fixed = j
        .bsz
        .iter()
        .all(|b| b.min == b.max && b.min == j.bsz[0].min);
    if norandommap && j.verify.kind != super::verify::kind::NONE && !fixed {
        w.push((
            "fio: norandommap given for variable block sizes, verify limited".to_string(),
            j.numjobs.max(1),
        ));
    }
    if j.time_based_dropped {
        w.push((
            "fio: time_based requires a runtime/timeout setting".to_string(),
            1,
        ));
    }
    w.extend(super::verify::fio_warnings(j).into_iter().map(|l| (l, 1)));
    // fio's engines that are not seekable (FIO_PIPEIO): net and netsplice.
    if j.pre_read && matches!(j.engine, EngineKind::Net | EngineKind::NetSplice) {
        w.push((
            "fio: cannot pre-read files with an IO engine that isn't seekable. Pre-read \
             disabled."
                .to_string(),
            1,
        ));
    }
    w
}

/// fio's `clocksource` values: `cpu` (the CPU's own counter: the TSC), `clock_gettime`
/// (`CLOCK_MONOTONIC`, as fio's), `gettimeofday`.
fn parse_clocksource(v: &str, at: &str) -> Result<hostbench_core::clock::ClockSource, JobError> {
    use hostbench_core::clock::ClockSource;
    Ok(match v.trim() {
        "cpu" => ClockSource::Tsc,
        "clock_gettime" => ClockSource::Monotonic,
        "gettimeofday" => ClockSource::Gettimeofday,
        _ => {
            return err(format!(
                "{at}: clocksource={v}: expected gettimeofday, clock_gettime or cpu (fio's \
                 clock sources)"
            ));
        }
    })
}

/// One line when the job was given `filename` more than once with different files
/// (`--filename=x --filename=z`, two `filename=` lines, `[global]`'s and the job's own):
/// fio adds each to the job's files and does I/O to all of them, the size divided among
/// them; hostbench keeps the last, on purpose (docs/fio.md: a later `filename` reads as a
/// replacement, and fio's rule would write to a device the user meant to replace).
pub fn filename_notice(j: &JobSpec) -> Option<String> {
    let given = &j.filenames_given;
    let (last, last_at) = given.last()?;
    let earlier: Vec<&(String, String)> = given[..given.len() - 1]
        .iter()
        .filter(|(v, _)| v != last)
        .collect();
    if earlier.is_empty() {
        return None;
    }
    let mut all: Vec<&str> = earlier.iter().map(|(v, _)| v.as_str()).collect();
    all.dedup();
    let named = earlier
        .iter()
        .map(|(v, at)| format!("filename={v} ({at})"))
        .collect::<Vec<_>>()
        .join(", ");
    let (them, both) = if all.len() == 1 {
        (all[0].to_string(), "both")
    } else {
        (all.join(", "), "all")
    };
    Some(format!(
        "fio: warning: job '{}': {named}, then filename={last} ({last_at}): hostbench does \
         I/O to {last} only and leaves {them} alone, on purpose (docs/fio.md, \"One \
         difference on purpose\"); fio would use {both}, the size divided: for that, give \
         filename={}:{last} once",
        j.name,
        all.join(":")
    ))
}

/// fio's group ids (`init.c:add_job`): the first job is in group 0; a job with `stonewall`
/// or `new_group` starts the next group when the current one has a job already. Clones
/// share their job's group.
fn assign_groups(jobs: &mut [JobSpec]) {
    let mut group = 0u32;
    for (i, j) in jobs.iter_mut().enumerate() {
        if (j.stonewall || j.new_group) && i > 0 {
            group += 1;
        }
        j.groupid = group;
    }
}

/// `wait_for` names exactly one job defined before this one (fio checks the jobs added so
/// far: a later job, or two of that name, are errors).
fn check_waitee(j: &JobSpec, earlier: &[JobSpec], origin: &str) -> Result<(), JobError> {
    let Some(w) = &j.wait_for else {
        return Ok(());
    };
    if *w == j.name {
        return err(format!(
            "{origin}: job '{}': a job cannot wait for itself (wait_for={w})",
            j.name
        ));
    }
    match earlier.iter().filter(|e| e.name == *w).count() {
        0 => err(format!(
            "{origin}: job '{}': wait_for={w}: no job named '{w}' before it (the waitee must be defined earlier in the job file)",
            j.name
        )),
        1 => Ok(()),
        _ => err(format!(
            "{origin}: job '{}': wait_for={w}: several jobs are named '{w}'; give them distinct names",
            j.name
        )),
    }
}

/// A job from its options (globals first, then its own, each with where it was written):
/// every value checked, defaults filled in. [`check_job`] checks that they fit together.
fn apply_options(
    opts: &[(String, String, String)],
    section: &str,
    own: &[(String, String)],
) -> Result<JobSpec, JobError> {
    let mut j = JobSpec {
        name: section.to_string(),
        groupid: 0,
        stonewall: false,
        new_group: false,
        wait_for: None,
        exitall: false,
        exit_what: ExitWhat::Group,
        exitall_on_error: false,
        startdelay_s: (0.0, 0.0),
        io_size: None,
        io_size_pct: None,
        loops: 1,
        filesize: None,
        file_sizes: Vec::new(),
        file_regions: Vec::new(),
        size_limit: None,
        number_ios: 0,
        filename: None,
        more_files: Vec::new(),
        filenames_given: Vec::new(),
        nrfiles: 1,
        opendir: None,
        openfiles: 0,
        file_service: FileService::default(),
        unlink_each_loop: false,
        directory: ".".into(),
        filename_dir: None,
        run_dir: String::new(),
        size: None,
        offset: 0,
        offset_increment: 0,
        pct: Percentages::default(),
        real_size: None,
        bs_read: 4096,
        bs_write: 4096,
        bsz: [
            BlockSizes::fixed(4096),
            BlockSizes::fixed(4096),
            BlockSizes::fixed(4096),
        ],
        blockalign: [None; 3],
        bs_unaligned: false,
        bs_is_seq_rand: false,
        seq_add: 0,
        seq_nr: 1,
        rw_seq_identical: false,
        zones: None,
        zbd: None,
        percentage_random: [100; 3],
        random_generator: RandGen::Tausworthe,
        offset_align: None,
        unlink: false,
        create_on_open: false,
        overwrite: false,
        create_fsync: true,
        create_only: false,
        fsync_on_close: false,
        pre_read: false,
        file_append: false,
        allow_file_create: true,
        unique_filename: true,
        lockfile: LockFile::None,
        filename_lockfile: LockFile::None,
        idle_clones: Vec::new(),
        layout_failed: Vec::new(),
        create_serialize: true,
        fill_device: false,
        sized_at_open: false,
        replay: None,
        write_iolog: None,
        write_iolog_dropped: false,
        time_based_dropped: false,
        replay_shown: None,
        fallocate: Fallocate::Native,
        filename_format: None,
        rw: Rw::Read,
        rwmixread: 50,
        iodepth: 1,
        iodepth_batch_submit: 1,
        iodepth_batch_complete_min: 1,
        iodepth_batch_complete_max: 0,
        offload: false,
        engine: EngineKind::Psync,
        direct: false,
        atomic: false,
        sync_io: 0,
        numjobs: 1,
        runtime_s: None,
        time_based: false,
        ramp_time_s: 0.0,
        randrepeat: true,
        allrandrepeat: false,
        randseed: None,
        rand64: false,
        gtod_reduce: false,
        clocksource: None,
        norandommap: false,
        softrandommap: false,
        write_barrier: 0,
        dist: RandDist::Random,
        fsync: 0,
        fdatasync: 0,
        end_fsync: false,
        mem: Default::default(),
        iodepth_low: 0,
        serialize_overlap: false,
        sync_file_range: None,
        rate: RateOpts::default(),
        think: ThinkOpts::default(),
        flow: 0,
        flow_id: 0,
        flow_sleep_us: 0,
        group_reporting: false,
        stats: true,
        invalidate: true,
        disk_util: true,
        ioscheduler: None,
        fadvise_hint: FadviseHint::ByPattern,
        write_hint: None,
        own_opts: own.to_vec(),
        renamed: own
            .iter()
            .rev()
            .find(|(k, _)| k == "name")
            .map(|(_, v)| v.trim().to_string())
            .filter(|v| !v.is_empty() && v != section),
        allow_mounted_write: false,
        thread: false,
        eng: Default::default(),
        process: Default::default(),
        cmdprio: Default::default(),
        report: Default::default(),
        logs: Default::default(),
        ss: Default::default(),
        lat: Default::default(),
        verify: Default::default(),
        bufs: Default::default(),
        errors: Default::default(),
    };
    // fio parses each section's options in one go, kb_base first wherever it is written
    // (options are sorted by priority); the [global] section's were parsed when it was
    // read, with its own kb_base. So the globals' sizes are read with the globals' kb_base,
    // and the job's own options with the job's (its own, else the globals'): a job's
    // `kb_base=1000` does not turn a global `bs=4k` into 4000 bytes. The job's own options
    // are the last `own.len()` of `opts`.
    let split = opts.len().saturating_sub(own.len());
    let mut global_kb = 1024;
    let mut own_kb = None;
    for (i, (k, v, at)) in opts.iter().enumerate() {
        if canonical_option(k) == Some("kb_base") {
            let kb = match v.trim() {
                "1024" => 1024,
                "1000" => 1000,
                _ => return err(format!("{at}: kb_base={v}: expected 1024 or 1000")),
            };
            if i < split {
                global_kb = kb;
            } else {
                own_kb = Some(kb);
            }
        }
    }
    let own_kb = own_kb.unwrap_or(global_kb);
    let mut kb_scope = Some(super::expr::KbBaseScope::enter(global_kb));
    // bs, bsrange and bssplit are kept apart, as fio keeps them: a split wins over a range,
    // a range over bs, whatever their order.
    let mut bs_fixed = [4096u64; 3];
    let mut bs_range: [Option<(u64, u64)>; 3] = [None; 3];
    let mut bs_split: [Vec<(u64, u32)>; 3] = Default::default();
    let mut rw_suffix: Option<(String, String)> = None;
    // zonemode, zonesize, zonerange, zoneskip: checked together once all are read.
    let mut zone_mode: Option<(String, String)> = None;
    // unit_base: None = fio's 0 (auto: bits for the net engine), else bits or bytes.
    let mut unit_bits: Option<bool> = None;
    let mut zone = Zones::default();
    // `zoneskip=Nz`: N zones of zonemode=zbd (where it was given, for the error).
    let mut skip_zones: Option<(u64, String)> = None;
    let mut zbd = ZbdOpts::default();
    let mut no_serialize = false;
    let mut replay = super::iolog::ReplayOpts {
        time_scale: 100,
        ..Default::default()
    };
    let mut has_replay = false;
    let mut iodepth_given = false;
    // `opendir` (its directory and the files found there): applied after the loop, with
    // fio's own count of the job's files — every file `filename` and `opendir` added in
    // the order they were parsed (`fio_files`), and `nr_files` (`fio_nr`: 1 at first, reset
    // by the first list that adds files, raised by each file added, set by `nrfiles`).
    let mut opendir: Option<(String, usize)> = None;
    let mut fio_files: Vec<String> = Vec::new();
    let mut fio_nr: u32 = 1;
    for (i, (k, v, at)) in opts.iter().enumerate() {
        if i == split && own_kb != global_kb {
            // The job's own options: its kb_base (the old scope restored first).
            kb_scope.take();
            kb_scope = Some(super::expr::KbBaseScope::enter(own_kb));
        }
        let key = canonical_option(k).unwrap_or("");
        let at = at.as_str();
        match key {
            "zonemode" => {
                let m = v.trim();
                if !matches!(m, "none" | "strided" | "zbd") {
                    return err(format!(
                        "{at}: zonemode={v}: expected none (the default), strided or zbd"
                    ));
                }
                zone_mode = Some((m.to_string(), at.to_string()));
            }
            "zonesize" => zone.size = zone_size(k, v, at)?,
            "zonecapacity" => zbd.capacity = parse_size_opt(k, v, at)?,
            "read_beyond_wp" => zbd.read_beyond_wp = parse_bool_opt(k, v, at)?,
            "ignore_zone_limits" => zbd.ignore_limits = parse_bool_opt(k, v, at)?,
            // fio: at most ZBD_MAX_OPEN_ZONES (4096).
            "max_open_zones" => zbd.max_open = parse_int(k, v, at, 0, 4096)? as u32,
            "job_max_open_zones" => zbd.job_max_open = parse_int(k, v, at, 0, 4096)? as u32,
            "zone_reset_threshold" | "zone_reset_frequency" => {
                let f = v
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|f| (0.0..=1.0).contains(f));
                let Some(f) = f else {
                    return err(format!(
                        "{at}: {k}={v}: expected a fraction from 0 to 1 (fio 3.33: \"value \
                         out of range\" past 1)"
                    ));
                };
                if k == "zone_reset_threshold" {
                    zbd.reset_threshold = f;
                } else {
                    zbd.reset_frequency = f;
                }
            }
            "zonerange" => zone.range = zone_size(k, v, at)?,
            "zoneskip" => {
                // fio's parser splits a size at `-` (a range) and its zoneskip callback
                // keeps the last part: `-4k` is a 4k skip, never a step back.
                let v = &v.trim().strip_prefix('-').unwrap_or(v.trim()).to_string();
                if let Some(n) = v.trim().strip_suffix(['z', 'Z']) {
                    let n = n.trim().parse::<u64>().map_err(|_| {
                        JobError(format!(
                            "{at}: zoneskip={v}: expected a count of zones (e.g. 2z) or bytes"
                        ))
                    })?;
                    skip_zones = Some((n, format!("{at}: zoneskip={v}")));
                    zone.skip = 0;
                } else {
                    skip_zones = None;
                    zone.skip = parse_size_opt(k, v, at)?;
                }
            }
            "name" => {
                if v.trim().is_empty() {
                    return err(format!("{at}: name needs a value, e.g. --name=randread"));
                }
            }
            k if super::report_opts::handles(k) => {
                super::report_opts::apply(&mut j.report, k, v, at)?
            }
            k if super::logs::handles(k) => super::logs::apply(&mut j.logs, k, v, at)?,
            k if super::steadystate::handles(k) => super::steadystate::apply(&mut j.ss, k, v, at)?,
            k if super::lattarget::handles(k) => super::lattarget::apply(&mut j.lat, k, v, at)?,
            k if super::engines::handles(k) => super::engines::apply(&mut j.eng, k, v, at)?,
            k if super::process::handles(k) => super::process::apply(&mut j.process, k, v, at)?,
            k if super::cmdprio::handles(k) => super::cmdprio::apply(&mut j.cmdprio, k, v, at)?,
            k if super::verify::handles(k) => super::verify::apply(&mut j.verify, k, v, at)?,
            k if super::bufs::handles(k) => {
                // fio's td_read(): the direction, whatever rwmixread says.
                let reads = matches!(j.rw, Rw::Read | Rw::RandRead | Rw::ReadWrite | Rw::RandRw);
                super::bufs::apply(&mut j.bufs, k, v, at, reads)?
            }
            "kb_base" => {}
            "unit_base" => {
                unit_bits = match v.trim() {
                    "0" => None,
                    "8" => Some(false),
                    "1" => Some(true),
                    _ => {
                        return err(format!(
                            "{at}: unit_base={v}: expected 0 (bits for ioengine=net, else \
                             bytes), 8 (bytes) or 1 (bits)"
                        ));
                    }
                }
            }
            // fio 3.33 takes them and does nothing with them (`deprecated_lines`).
            "flow_watermark" | "verifysort" | "verifysort_nr" => {}
            // The entries fio's logs first allocate (they grow as needed): checked as fio
            // checks it, nothing else to do (hostbench's logs are written as they go).
            "log_entries" => {
                parse_int(k, v, at, 1024, 1024 * 1_048_576)?;
            }
            // An option of fio's tiobench profile: without `profile=tiobench` fio accepts
            // it and does nothing with it (examples/waitfor.fio and steadystate.fio set
            // it); so does hostbench, and its front-end says so on stderr.
            "threads" => {}
            // tiobench's too (its loops): fio checks it is a whole number (a sign is
            // taken), then runs the job once.
            "numruns" => {
                if v.trim()
                    .trim_start_matches(['-', '+'])
                    .parse::<u64>()
                    .is_err()
                {
                    return err(format!(
                        "{at}: numruns={v}: expected a whole number (fio: failed parsing \
                         numruns={v}); it is an option of fio's tiobench profile and does \
                         nothing without it"
                    ));
                }
            }
            // fio's `thread` is a flag; any value but an explicit "off" turns it on (hostbench
            // always runs threads: this is what fio would start, for its start-up line).
            "thread" => j.thread = !matches!(v.trim(), "0" | "false" | "off" | "no"),
            "filename" => {
                let list = split_filenames(v);
                if list.is_empty() {
                    // fio 3.33 runs such a job on no file at all and reports nothing for
                    // it: a silent no-op benchmark, refused here.
                    return err(format!(
                        "{at}: filename={v} names no file (fio would run the job on nothing \
                         and report nothing); give a path, or several as a:b (a colon in a \
                         name is \\:)"
                    ));
                }
                j.filenames_given.push((v.clone(), at.to_string()));
                if fio_files.is_empty() {
                    fio_nr = 0;
                }
                fio_nr += list.len() as u32;
                fio_files.extend(list.iter().cloned());
                j.filename = Some(list[0].clone());
                j.more_files = list[1..].to_vec();
                j.filename_dir = Some(j.directory.clone());
                j.filename_lockfile = j.lockfile;
            }
            "directory" => {
                // fio's list `d1:d2` (`\:` for a colon in a name): clone N's generated
                // files go in directory N mod the count, named files in the first.
                // Empty entries are skipped (`d1::d2` is d1 and d2), as fio's.
                if split_filenames(v).is_empty() {
                    return err(format!(
                        "{at}: directory={v} names no directory (fio 3.33: \"fio:  is not a \
                         directory\"); give a directory, or a `:`-separated list of them \
                         (`\\:` for a colon in a name)"
                    ));
                }
                j.directory = v.clone();
            }
            "size" => {
                let v = last_part(v);
                if let Some(p) = percent(k, v, at, 1)? {
                    j.pct.size = Some(p);
                    j.size = None;
                    continue;
                }
                j.pct.size = None;
                let s = parse_size_opt(k, v, at)?;
                if s == 0 {
                    return err(format!("{at}: size must be more than 0"));
                }
                j.size = Some(s);
            }
            "offset" => {
                let v = last_part(v);
                j.pct.offset = percent(k, v, at, 0)?;
                if j.pct.offset.is_none() {
                    j.offset = parse_size_opt(k, v, at)?;
                }
            }
            "offset_increment" => {
                let v = last_part(v);
                j.pct.offset_increment = percent(k, v, at, 0)?;
                if j.pct.offset_increment.is_none() {
                    j.offset_increment = parse_size_opt(k, v, at)?;
                }
            }
            "bs" => {
                bs_fixed = [4096; 3];
                for (d, p) in per_dir(k, v, at)?.into_iter().enumerate() {
                    if let Some(p) = p {
                        bs_fixed[d] = block_size(k, v, &p, at)?;
                    }
                }
            }
            "bsrange" => {
                bs_range = [None; 3];
                for (d, p) in per_dir(k, v, at)?.into_iter().enumerate() {
                    let Some(p) = p else { continue };
                    let Some((a, b)) = p.split_once(['-', ':']) else {
                        return err(format!(
                            "{at}: {k}={v}: give each direction's range as min-max, e.g. \
                             bsrange=1k-4k,2k-8k"
                        ));
                    };
                    let (a, b) = (block_size(k, v, a, at)?, block_size(k, v, b, at)?);
                    bs_range[d] = Some((a.min(b), a.max(b)));
                }
            }
            "bssplit" => bs_split = parse_bssplit(k, v, at)?,
            "blockalign" => {
                j.blockalign = [None; 3];
                for (d, p) in per_dir(k, v, at)?.into_iter().enumerate() {
                    if let Some(p) = p {
                        j.blockalign[d] = Some(block_size(k, v, &p, at)?);
                    }
                }
            }
            "bs_unaligned" => j.bs_unaligned = parse_bool_opt(k, v, at)?,
            "bs_is_seq_rand" => j.bs_is_seq_rand = parse_bool_opt(k, v, at)?,
            "offset_align" => {
                let a = parse_size_opt(k, v, at)?;
                j.offset_align = (a > 0).then_some(a);
            }
            "unlink" => j.unlink = parse_bool_opt(k, v, at)?,
            "filename_format" => {
                if v.trim().is_empty() {
                    return err(format!(
                        "{at}: filename_format needs a pattern, e.g. $jobname.$jobnum.$filenum"
                    ));
                }
                j.filename_format = Some(v.trim().to_string());
            }
            "create_on_open" => j.create_on_open = parse_bool_opt(k, v, at)?,
            "overwrite" => j.overwrite = parse_bool_opt(k, v, at)?,
            "create_fsync" => j.create_fsync = parse_bool_opt(k, v, at)?,
            "create_only" => j.create_only = parse_bool_opt(k, v, at)?,
            "fsync_on_close" => j.fsync_on_close = parse_bool_opt(k, v, at)?,
            "pre_read" => j.pre_read = parse_bool_opt(k, v, at)?,
            "file_append" => j.file_append = parse_bool_opt(k, v, at)?,
            "allow_file_create" => j.allow_file_create = parse_bool_opt(k, v, at)?,
            "unique_filename" => j.unique_filename = parse_bool_opt(k, v, at)?,
            "lockfile" => {
                j.lockfile = match v.trim() {
                    "none" => LockFile::None,
                    "exclusive" => LockFile::Exclusive,
                    "readwrite" => LockFile::ReadWrite,
                    _ => {
                        return err(format!(
                            "{at}: lockfile={v}: expected none, exclusive or readwrite"
                        ));
                    }
                }
            }
            "fill_device" => j.fill_device = parse_bool_opt(k, v, at)?,
            "fallocate" => {
                j.fallocate = match v.trim() {
                    "none" | "0" => Fallocate::None,
                    "native" => Fallocate::Native,
                    "posix" | "1" => Fallocate::Posix,
                    "keep" => Fallocate::Keep,
                    "truncate" => Fallocate::Truncate,
                    _ => {
                        return err(format!(
                            "{at}: fallocate={v}: expected none, native (the default), posix, \
                             keep, truncate, 0 or 1"
                        ));
                    }
                }
            }
            "rw_sequencer" => {
                j.rw_seq_identical = match v.trim() {
                    "sequential" => false,
                    "identical" => true,
                    _ => {
                        return err(format!(
                            "{at}: rw_sequencer={v}: expected sequential (the default) or identical"
                        ));
                    }
                }
            }
            "percentage_random" | "percentage_sequential" => {
                j.percentage_random = [100; 3];
                let inverse = k.trim() == "percentage_sequential";
                for (d, p) in per_dir(k, v, at)?.into_iter().enumerate() {
                    if let Some(p) = p {
                        let n = parse_int(k, &p, at, 0, 100)? as u32;
                        j.percentage_random[d] = if inverse { 100 - n } else { n };
                    }
                }
            }
            "random_generator" => {
                j.random_generator = match v.trim() {
                    "tausworthe" | "tausworthe64" => {
                        j.rand64 = v.trim() == "tausworthe64";
                        RandGen::Tausworthe
                    }
                    "lfsr" => RandGen::Lfsr,
                    _ => {
                        return err(format!(
                            "{at}: random_generator={v}: expected tausworthe (the default), lfsr \
                             or tausworthe64"
                        ));
                    }
                }
            }
            "rw" => {
                let (mode, suffix) = v.split_once(':').unwrap_or((v, ""));
                rw_suffix = (!suffix.trim().is_empty())
                    .then(|| (suffix.trim().to_string(), at.to_string()));
                j.rw = match mode.trim() {
                    "read" => Rw::Read,
                    "write" => Rw::Write,
                    "randread" => Rw::RandRead,
                    "randwrite" => Rw::RandWrite,
                    "rw" | "readwrite" => Rw::ReadWrite,
                    "randrw" => Rw::RandRw,
                    "trim" => Rw::Trim,
                    "randtrim" => Rw::RandTrim,
                    "trimwrite" => Rw::TrimWrite,
                    "randtrimwrite" => Rw::RandTrimWrite,
                    _ => {
                        return err(format!(
                            "{at}: rw={v}: expected read, write, randread, randwrite, rw (readwrite), \
                             randrw, trim, randtrim, trimwrite or randtrimwrite"
                        ));
                    }
                };
            }
            "rwmixread" => j.rwmixread = parse_int(k, last_part(v), at, 0, 100)? as u32,
            "rwmixwrite" => j.rwmixread = 100 - parse_int(k, last_part(v), at, 0, 100)? as u32,
            "iodepth" => {
                j.iodepth = parse_int(k, v, at, 1, 65536)? as u32;
                iodepth_given = true;
            }
            "iodepth_batch_submit" => {
                j.iodepth_batch_submit = (parse_int(k, v, at, 0, 65536)? as u32).max(1)
            }
            "iodepth_batch_complete_min" => {
                j.iodepth_batch_complete_min = parse_int(k, v, at, 0, 65536)? as u32
            }
            "iodepth_batch_complete_max" => {
                j.iodepth_batch_complete_max = parse_int(k, v, at, 0, 65536)? as u32
            }
            "io_submit_mode" => {
                j.offload = match v.trim() {
                    "inline" => false,
                    "offload" => true,
                    _ => {
                        return err(format!(
                            "{at}: io_submit_mode={v}: expected inline or offload"
                        ));
                    }
                }
            }
            "ioengine" => {
                j.engine = match v.trim() {
                    "psync" => EngineKind::Psync,
                    "sync" => EngineKind::Sync,
                    "vsync" => EngineKind::Vsync,
                    "pvsync" => EngineKind::Pvsync,
                    "pvsync2" => EngineKind::Pvsync2,
                    "libaio" => EngineKind::Libaio,
                    "posixaio" => EngineKind::Posixaio,
                    "io_uring" => EngineKind::IoUring,
                    "mmap" => EngineKind::Mmap,
                    "null" => EngineKind::Null,
                    "falloc" => EngineKind::Falloc,
                    "ftruncate" => EngineKind::Ftruncate,
                    "e4defrag" => EngineKind::E4defrag,
                    "cpuio" => EngineKind::Cpuio,
                    "filecreate" => EngineKind::Filecreate,
                    "filestat" => EngineKind::Filestat,
                    "filedelete" => EngineKind::Filedelete,
                    "exec" => EngineKind::Exec,
                    "net" => EngineKind::Net,
                    "nbd" => EngineKind::Nbd,
                    "netsplice" => EngineKind::NetSplice,
                    other if other == "cpp_null" || other.starts_with("external:") => {
                        return err(external_engine(other, at));
                    }
                    other => {
                        return err(format!(
                            "{at}: ioengine={other} is not supported; use psync, sync, vsync, pvsync, pvsync2, libaio, posixaio, io_uring, mmap, null, falloc, ftruncate, e4defrag, cpuio, filecreate, filestat, filedelete, exec, net, netsplice or nbd"
                        ));
                    }
                }
            }
            "direct" => j.direct = parse_bool_opt(k, v, at)?,
            "atomic" => j.atomic = parse_bool_opt(k, v, at)?,
            "sync" => {
                j.sync_io = match v.trim() {
                    "0" | "none" => 0,
                    "1" | "sync" => libc::O_SYNC,
                    "dsync" => libc::O_DSYNC,
                    _ => {
                        return err(format!(
                            "{at}: sync={v}: expected none (0, the default), sync (1: O_SYNC) \
                             or dsync (O_DSYNC)"
                        ));
                    }
                }
            }
            "buffered" => j.direct = !parse_bool_opt(k, v, at)?,
            "numjobs" => j.numjobs = parse_int(k, v, at, 1, 4096)? as u32,
            "runtime" => {
                let s = parse_fio_time(v, 1.0).ok_or_else(|| {
                    JobError(format!(
                        "{at}: runtime={v}: expected a time such as 10, 10s, 500ms or 2m"
                    ))
                })?;
                j.runtime_s = (s > 0.0).then_some(s);
            }
            "time_based" => j.time_based = parse_bool_opt(k, v, at)?,
            "ramp_time" => {
                j.ramp_time_s = parse_fio_time(v, 1.0).ok_or_else(|| {
                    JobError(format!(
                        "{at}: ramp_time={v}: expected a time such as 2, 2s or 500ms"
                    ))
                })?;
            }
            "randrepeat" => j.randrepeat = parse_bool_opt(k, v, at)?,
            "allrandrepeat" => j.allrandrepeat = parse_bool_opt(k, v, at)?,
            "randseed" => j.randseed = Some(parse_int(k, v, at, 0, u64::MAX)?),
            "gtod_reduce" => j.gtod_reduce = parse_bool_opt(k, v, at)?,
            "clocksource" => j.clocksource = Some(parse_clocksource(v, at)?),
            "norandommap" => j.norandommap = parse_bool_opt(k, v, at)?,
            "softrandommap" => j.softrandommap = parse_bool_opt(k, v, at)?,
            "write_barrier" => j.write_barrier = parse_int(k, v, at, 0, u32::MAX as u64)? as u32,
            "random_distribution" => j.dist = parse_distribution(k, v, at)?,
            "fsync" => j.fsync = parse_int(k, v, at, 0, u32::MAX as u64)? as u32,
            "fdatasync" => j.fdatasync = parse_int(k, v, at, 0, u32::MAX as u64)? as u32,
            "mem" => (j.mem.kind, j.mem.file) = super::mem::parse_kind(k, v, at)?,
            "iomem_align" => j.mem.align = parse_int(k, v, at, 0, u32::MAX as u64)?,
            "hugepage-size" => {
                j.mem.hugepage = parse_fio_size(v)
                    .filter(|&n| n <= u32::MAX as u64)
                    .ok_or_else(|| JobError(format!("{at}: {k}={v}: expected a size (2m, 1g)")))?
            }
            "lockmem" => {
                j.mem.lockmem = parse_fio_size(v)
                    .ok_or_else(|| JobError(format!("{at}: {k}={v}: expected a size (64m, 1g)")))?
            }
            "iodepth_low" => j.iodepth_low = parse_int(k, v, at, 0, 65536)? as u32,
            "serialize_overlap" => j.serialize_overlap = parse_bool_opt(k, v, at)?,
            "end_fsync" => j.end_fsync = parse_bool_opt(k, v, at)?,
            "sync_file_range" => j.sync_file_range = Some(parse_sfr(k, v, at)?),
            "rate" | "rate_iops" | "rate_min" | "rate_iops_min" => {
                let dest = match key {
                    "rate" => &mut j.rate.bps,
                    "rate_iops" => &mut j.rate.iops,
                    "rate_min" => &mut j.rate.min_bps,
                    _ => &mut j.rate.min_iops,
                };
                *dest = [0; 2];
                for (d, p) in per_dir(k, v, at)?.into_iter().take(2).enumerate() {
                    if let Some(p) = p {
                        dest[d] = if key.contains("iops") {
                            parse_int(k, &p, at, 0, 1 << 40)?
                        } else {
                            parse_size_opt(k, &p, at)?
                        };
                    }
                }
            }
            "rate_process" => {
                j.rate.poisson = match v.trim() {
                    "linear" => false,
                    "poisson" => true,
                    _ => return err(format!("{at}: {k}={v}: expected linear or poisson")),
                }
            }
            "rate_cycle" => j.rate.cycle_ms = parse_int(k, v, at, 1, 1 << 32)?,
            "rate_ignore_thinktime" => j.rate.ignore_thinktime = parse_bool_opt(k, v, at)?,
            "thinktime" | "thinktime_spin" | "thinktime_iotime" => {
                // thinktime and thinktime_spin count µs by default, thinktime_iotime seconds.
                let unit = if key == "thinktime_iotime" { 1.0 } else { 1e-6 };
                let us = parse_fio_time(v, unit)
                    .map(|s| (s * 1e6).round())
                    .filter(|&u| u <= u32::MAX as f64)
                    .ok_or_else(|| {
                        JobError(format!(
                            "{at}: {k}={v}: expected a time such as 100 (µs{}), 500us, 20ms or 1s, \
                             at most about 71 minutes",
                            if unit == 1.0 {
                                "; a bare number is seconds here"
                            } else {
                                ""
                            }
                        ))
                    })? as u64;
                match key {
                    "thinktime" => j.think.us = us,
                    "thinktime_spin" => j.think.spin_us = us,
                    _ => j.think.iotime_us = us,
                }
            }
            "flow" => j.flow = parse_int(k, v, at, 0, 1000)? as u32,
            "flow_id" => j.flow_id = parse_int(k, v, at, 0, u32::MAX as u64)? as u32,
            "flow_sleep" => j.flow_sleep_us = parse_int(k, v, at, 0, u32::MAX as u64)?,
            "thinktime_blocks" => {
                j.think.blocks = parse_int(k, v, at, 1, u32::MAX as u64)?;
                j.think.blocks_set = true;
            }
            "thinktime_blocks_type" => {
                j.think.at_issue = match v.trim() {
                    "complete" => false,
                    "issue" => true,
                    _ => return err(format!("{at}: {k}={v}: expected complete or issue")),
                }
            }
            "group_reporting" => j.group_reporting = parse_bool_opt(k, v, at)?,
            "stats" => j.stats = parse_bool_opt(k, v, at)?,
            "invalidate" => j.invalidate = parse_bool_opt(k, v, at)?,
            "disk_util" => j.disk_util = parse_bool_opt(k, v, at)?,
            // fio's FIO_OPT_STR_STORE: the name as written.
            "ioscheduler" => j.ioscheduler = Some(v.to_string()),
            "fadvise_hint" => {
                j.fadvise_hint = match v.trim() {
                    "0" => FadviseHint::None,
                    "1" => FadviseHint::ByPattern,
                    "random" => FadviseHint::Random,
                    "sequential" => FadviseHint::Sequential,
                    _ => {
                        return err(format!(
                            "{at}: fadvise_hint={v}: expected 0, 1, random or sequential (1, \
                             fio's default, advises the job's own pattern)"
                        ));
                    }
                }
            }
            "write_hint" => {
                let hint = ["none", "short", "medium", "long", "extreme"]
                    .iter()
                    .position(|h| *h == v.trim());
                let Some(h) = hint else {
                    return err(format!(
                        "{at}: write_hint={v}: expected none, short, medium, long or extreme"
                    ));
                };
                j.write_hint = Some(h as u64 + 1);
            }
            "allow_mounted_write" => j.allow_mounted_write = parse_bool_opt(k, v, at)?,
            "stonewall" => j.stonewall = parse_bool_opt(k, v, at)?,
            "new_group" => j.new_group = parse_bool_opt(k, v, at)?,
            "exitall" => j.exitall = parse_bool_opt(k, v, at)?,
            "exitall_on_error" => j.exitall_on_error = parse_bool_opt(k, v, at)?,
            "continue_on_error" => j.errors.set_continue(v, at)?,
            "ignore_error" => j.errors.set_ignore(v, at)?,
            "error_dump" => j.errors.dump = parse_bool_opt(k, v, at)?,
            "wait_for" => {
                let name = v.trim();
                if name.is_empty() {
                    return err(format!("{at}: wait_for needs the name of an earlier job"));
                }
                j.wait_for = Some(name.to_string());
            }
            "exit_what" => {
                j.exit_what = match v.trim() {
                    "group" => ExitWhat::Group,
                    "stonewall" => ExitWhat::Stonewall,
                    "all" => ExitWhat::All,
                    _ => {
                        return err(format!(
                            "{at}: exit_what={v}: expected group (the default), stonewall or all"
                        ));
                    }
                }
            }
            "startdelay" => j.startdelay_s = parse_time_range(k, v, at)?,
            "io_size" => {
                let v = last_part(v);
                if let Some(p) = v.trim().strip_suffix('%') {
                    // fio: a share of the region, at most all of it.
                    let p = p.trim().parse::<u64>().map_err(|_| {
                        JobError(format!("{at}: {k}={v}: expected a whole percentage"))
                    })?;
                    if p > 100 {
                        return err(format!(
                            "{at}: {k}={v}: fio: io_size values greater than 100% aren't supported"
                        ));
                    }
                    j.io_size = None;
                    j.io_size_pct = (p > 0).then_some(p);
                    continue;
                }
                j.io_size_pct = None;
                let n = parse_size_opt(k, v, at)?;
                // fio: 0 means "not set" (the region's size).
                j.io_size = (n > 0).then_some(n);
            }
            "loops" => j.loops = parse_int(k, v, at, 0, u32::MAX as u64)? as u32,
            "filesize" => {
                if v.contains('%') {
                    return err(format!(
                        "{at}: filesize={v}: percentages are not supported; give a size"
                    ));
                }
                let (a, b) = v.split_once(['-', ':']).unwrap_or((v, v));
                let (a, b) = (parse_size_opt(k, a, at)?, parse_size_opt(k, b, at)?);
                if a == 0 || b == 0 {
                    return err(format!("{at}: filesize={v}: must be more than 0"));
                }
                // fio swaps a reversed range.
                j.filesize = Some((a.min(b), a.max(b)));
            }
            "number_ios" => {
                j.number_ios = parse_fio_size(v).ok_or_else(|| {
                    JobError(format!(
                        "{at}: {k}={v}: expected a count such as 1000 (k = 1024 as fio reads it)"
                    ))
                })?
            }
            "opendir" => {
                let found = opendir_found(v, at)?;
                if fio_files.is_empty() {
                    fio_nr = 0;
                }
                fio_nr += found.len() as u32;
                opendir = Some((v.clone(), found.len()));
                fio_files.extend(found);
                if fio_files.len() > MAX_FILES as usize {
                    return err(format!(
                        "{at}: opendir={v} gives the job {} files, more than hostbench's \
                         {MAX_FILES} per job",
                        fio_files.len()
                    ));
                }
            }
            "nrfiles" => {
                // Bounded: each file is a descriptor and a generator of its own.
                j.nrfiles = parse_int(k, v, at, 1, MAX_FILES as u64)? as u32;
                fio_nr = j.nrfiles;
                // fio: nrfiles after a `filename` list keeps its first nrfiles names (a
                // larger one keeps the list); a later `filename` list counts again.
                j.more_files.truncate(j.nrfiles.saturating_sub(1) as usize);
            }
            "openfiles" => {
                // fio's unsigned int: a negative value wraps (-1 is the largest: every
                // file open, as fio caps it at nrfiles).
                j.openfiles = match v.trim().parse::<i64>() {
                    Ok(n) if (i32::MIN as i64..0).contains(&n) => n as i32 as u32,
                    _ => parse_int(k, v, at, 0, u32::MAX as u64)? as u32,
                };
            }
            "unlink_each_loop" => j.unlink_each_loop = parse_bool_opt(k, v, at)?,
            // hostbench lays the files out one after the other before the run, fio's
            // default (`create_serialize=1`); with 0 they are laid out the same way, and a
            // file gone when the job starts (an earlier job's `unlink`) is laid out again
            // then, as fio's job lays its own out when it starts.
            "create_serialize" => {
                no_serialize = !parse_bool_opt(k, v, at)?;
                j.create_serialize = !no_serialize;
            }
            "file_service_type" => {
                j.file_service =
                    FileService::parse(v).map_err(|e| JobError(format!("{at}: {k}={v}: {e}")))?;
            }
            "read_iolog" => {
                if v.is_empty() {
                    return err(format!("{at}: read_iolog= names no log"));
                }
                replay.logs = split_filenames(v);
                let Some(first) = replay.logs.first() else {
                    return err(format!("{at}: read_iolog={v} names no log"));
                };
                replay.log = first.clone();
                has_replay = true;
            }
            "read_iolog_chunked" => replay.chunked = parse_bool_opt(k, v, at)?,
            "replay_no_stall" => replay.no_stall = parse_bool_opt(k, v, at)?,
            "replay_time_scale" => {
                replay.time_scale = parse_int(k, v, at, 1, u32::MAX as u64)? as u32
            }
            "replay_redirect" => replay.redirect = Some(v.to_string()),
            "replay_align" => {
                let a = parse_size_opt(k, v, at)?;
                if a > 0 && !a.is_power_of_two() {
                    return err(format!("{at}: replay_align={v}: must be a power of 2"));
                }
                replay.align = a;
            }
            "replay_scale" => replay.scale = parse_int(k, v, at, 0, u32::MAX as u64)?,
            "replay_skip" => {
                // fio 3.33 reads it in its blktrace replay only (no effect on a text log).
                replay.skip = 0;
                for w in v.split(',').map(str::trim) {
                    replay.skip |= match w {
                        "read" => 1,
                        "write" => 2,
                        "trim" => 4,
                        "sync" => 8,
                        _ => {
                            return err(format!(
                                "{at}: replay_skip={v}: {w:?} is not read, write, trim or sync"
                            ));
                        }
                    };
                }
            }
            "merge_blktrace_file" => {
                if v.is_empty() {
                    return err(format!("{at}: merge_blktrace_file= names no file"));
                }
                replay.merge_file = Some(v.to_string());
            }
            "merge_blktrace_scalars" | "merge_blktrace_iters" => {
                let mut list = Vec::new();
                for w in v.split(':').map(str::trim) {
                    match w.parse::<f64>() {
                        Ok(f) if f.is_finite() && f >= 0.0 => list.push(f),
                        _ => {
                            return err(format!(
                                "{at}: {k}={v}: {w:?} is not a number (a `:` list, one per \
                                 log of read_iolog)"
                            ));
                        }
                    }
                }
                // (fio's list ends at its first 0.)
                if let Some(z) = list.iter().position(|&f| f == 0.0) {
                    list.truncate(z);
                }
                if key == "merge_blktrace_scalars" {
                    replay.merge_scalars = list;
                } else {
                    replay.merge_iters = list;
                }
            }
            "write_iolog" => {
                if v.is_empty() {
                    return err(format!("{at}: write_iolog= names no log"));
                }
                j.write_iolog = Some(v.to_string());
            }
            _ => return err(format!("{at}: fio option '{k}' is not supported")),
        }
    }
    if !has_replay && replay.merge_file.is_some() {
        return err(format!(
            "job '{}': merge_blktrace_file merges the logs of read_iolog, which the job does \
             not give (read_iolog=a.bin:b.bin)",
            j.name
        ));
    }
    if has_replay {
        replay.iodepth_set = iodepth_given;
        j.replay = Some(replay);
    }
    if let Some((dir, found)) = opendir {
        // fio's fixup caps nr_files at the files added; the job then uses the first
        // nr_files of them (the others are neither laid out nor opened).
        let n = (fio_nr as usize).min(fio_files.len()).max(1);
        fio_files.truncate(n);
        j.opendir = Some((dir, found));
        j.nrfiles = n as u32;
        j.filename = Some(fio_files[0].clone());
        j.more_files = fio_files[1..].to_vec();
        j.filename_dir = Some(j.directory.clone());
        j.filename_lockfile = j.lockfile;
    }
    // fio's fixup: no need to look for overlaps in flight when the job changes no data or
    // has one I/O in flight at most (a replay keeps it: its log may write).
    if j.serialize_overlap && j.replay.is_none() && (!j.rw.writes(0) || j.iodepth <= 1) {
        j.serialize_overlap = false;
    }
    // fio's fixup: O_ATOMIC implies O_DIRECT, whatever `direct`/`buffered` say.
    if j.atomic {
        j.direct = true;
    }
    for d in 0..3 {
        j.bsz[d] = if !bs_split[d].is_empty() {
            let sizes = bs_split[d].iter().map(|&(b, _)| b);
            BlockSizes {
                min: sizes.clone().min().unwrap_or(4096),
                max: sizes.max().unwrap_or(4096),
                split: std::mem::take(&mut bs_split[d]),
            }
        } else if let Some((a, b)) = bs_range[d] {
            BlockSizes {
                min: a,
                max: b,
                split: Vec::new(),
            }
        } else {
            BlockSizes::fixed(bs_fixed[d])
        };
    }
    j.bs_read = j.bsz[0].min;
    j.bs_write = j.bsz[1].min;
    if let Some((n, at)) = rw_suffix {
        // fio's `rw=randread:8` (a new random offset every 8 I/Os) or `rw=read:4k` (4 KiB
        // skipped after each I/O; negative reads backwards).
        if j.rw.random() {
            // (fio reads this one with atoi: no suffixes.)
            j.seq_nr = n
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| {
                    JobError(format!(
                        "{at}: rw={n}: expected a whole number from 1 to {}",
                        u32::MAX
                    ))
                })?;
        } else {
            let (neg, abs) = match n.strip_prefix('-') {
                Some(a) => (true, a),
                None => (false, n.as_str()),
            };
            let add = parse_size_opt("rw", abs, &at)?;
            if add > (1 << 50) {
                return err(format!("{at}: rw=...:{n}: at most 1p"));
            }
            j.seq_add = if neg { -(add as i64) } else { add as i64 };
        }
    }
    // A [global] section's options are checked alone (the probe); whether the zone
    // options fit together is each job's question (a job may give the zonesize).
    if section != "global-check" {
        let zbd_mode = zone_mode.as_ref().is_some_and(|(m, _)| m == "zbd");
        if let Some((n, at)) = skip_zones {
            if !zbd_mode {
                return err(format!(
                    "{at}: a skip in zones (Nz) counts the zones of zonemode=zbd; give the \
                     skip in bytes (e.g. 3m)"
                ));
            }
            // fio's zbd_recalc_options_with_zone_granularity: N zones of zonesize.
            zone.skip = n.saturating_mul(zone.size);
        }
        if zbd_mode {
            let at = zone_mode.as_ref().map_or("", |(_, a)| a.as_str());
            j.zbd = Some(finish_zbd(&j, at, zone, zbd, no_serialize)?);
        } else {
            j.zones = finish_zones(&j, zone_mode, zone)?;
        }
    }
    // fio's unit_base=0 (the default): the engine says (`FIO_BIT_BASED`: net, not
    // netsplice); bandwidths are then in bits in the normal layout (`init.c`).
    j.report.bits = unit_bits.unwrap_or(j.engine == EngineKind::Net);
    // fio's gtod_reduce turns every measurement off, and a latency turned off has no
    // percentiles (`init.c:fixup_options`).
    let off = &mut j.logs.disable;
    if j.gtod_reduce {
        *off = super::logs::Disable {
            lat: true,
            clat: true,
            slat: true,
            bw: true,
        };
    }
    if off.lat {
        j.report.lat_percentiles = false;
    }
    if off.clat {
        j.report.clat_percentiles = false;
    }
    if off.slat {
        j.report.slat_percentiles = false;
    }
    super::verify::finish(&mut j)?;
    super::bufs::finish(&mut j)?;
    Ok(j)
}

/// The regular files under `dir`, as fio 3.33's `recurse_dir` finds them: each entry in
/// the order the directory lists it (`readdir`), named `dir/NAME`, looked at with `lstat`
/// (a symbolic link is neither a file nor a directory: skipped, never followed), a
/// directory entered where it is met, anything else skipped.
pub fn opendir_files(dir: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    walk_dir(dir, &mut out, 0)?;
    Ok(out)
}

fn walk_dir(dir: &str, out: &mut Vec<String>, depth: u32) -> Result<(), String> {
    // Deeper than any real tree (PATH_MAX allows 2048 levels of one letter): a loop made
    // by a bind mount.
    if depth > 2048 {
        return Err(format!("{dir}: more than 2048 directories deep"));
    }
    let rd = std::fs::read_dir(dir).map_err(|e| format!("opendir({dir}): {e}"))?;
    for e in rd {
        let e = e.map_err(|e| format!("readdir({dir}): {e}"))?;
        let name = e.file_name();
        let path = format!("{dir}/{}", name.to_string_lossy());
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            // Gone since it was listed: fio skips it too.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("stat({path}): {e}")),
        };
        if meta.file_type().is_file() {
            out.push(path);
        } else if meta.file_type().is_dir() {
            walk_dir(&path, out, depth + 1)?;
        }
    }
    Ok(())
}

/// `opendir=DIR` written at `at`: DIR's regular files ([`opendir_files`]), in fio's order.
fn opendir_found(dir: &str, at: &str) -> Result<Vec<String>, JobError> {
    let files = opendir_files(dir).map_err(|e| {
        JobError(format!(
            "{at}: opendir={dir}: {e} (fio: failed parsing opendir={dir}); name a directory \
             that can be read"
        ))
    })?;
    if files.is_empty() {
        return err(format!(
            "{at}: opendir={dir} holds no regular file (fio 3.33 would run the job on none \
             and fail it: you need to specify size=); name a directory with files"
        ));
    }
    Ok(files)
}

/// `zonemode=strided`'s sizes: the job does `size` bytes of I/O in a zone of `range`
/// bytes, then moves `range + skip` further (back to the region's start past the file's
/// end), as fio 3.33 (`io_u.c:setup_strided_zone_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Zones {
    /// `zonesize`: bytes of I/O in each zone.
    pub size: u64,
    /// `zonerange`: the zone's length (random offsets are drawn in it; a sequential job
    /// wraps to its start); `zonesize` when not given.
    pub range: u64,
    /// `zoneskip`: bytes left out between one zone's end and the next one's start.
    pub skip: u64,
}

/// fio's checks of the zone options (`init.c:fixup_options`), with its messages.
fn finish_zones(
    j: &JobSpec,
    mode: Option<(String, String)>,
    mut z: Zones,
) -> Result<Option<Zones>, JobError> {
    let (mode, at) = mode.unwrap_or_else(|| ("none".into(), format!("job '{}'", j.name)));
    match mode.as_str() {
        "none" if z.size > 0 => err(format!(
            "{at}: zonesize needs zonemode=strided (fio 3.33: \"--zonemode=none and \
             --zonesize are not compatible.\"); add zonemode=strided"
        )),
        "none" => Ok(None),
        _ if z.size == 0 => err(format!(
            "{at}: zonemode=strided needs a zonesize (fio 3.33: \"--zonesize must be \
             specified when using --zonemode=strided.\"); add e.g. zonesize=256m"
        )),
        _ => {
            // fio: strided zones only work with one open file; with several it turns them
            // off.
            let n = j.nfiles();
            if n > 1 && (j.openfiles == 0 || j.openfiles > 1) {
                return Ok(None);
            }
            if n > 1 {
                return err(format!(
                    "job '{}': zonemode=strided with {n} files opened one at a time \
                     (openfiles=1) is not supported by hostbench; use one file, or leave \
                     openfiles out (fio then does not zone the files)",
                    j.name
                ));
            }
            if j.rw.trim_write() {
                return err(format!(
                    "job '{}': zonemode=strided with rw={} is not supported by hostbench; \
                     use rw=trim or randtrim, or leave the zones out",
                    j.name,
                    j.rw.name()
                ));
            }
            if z.range == 0 {
                z.range = z.size;
            }
            if zone_percent(z.range) && j.rw.random() {
                // fio sizes its random map by the zone range, which a percent makes ~2^64
                // bytes: the job fails to start.
                return err(format!(
                    "job '{}': zonemode=strided with a zonerange (or zonesize) in percent and \
                     random offsets: fio 3.33 reads the percent as ~2^64 bytes and fails \
                     (\"fio: failed allocating random map\"); give the zone in bytes",
                    j.name
                ));
            }
            Ok(Some(z))
        }
    }
}

/// `zonemode=zbd`'s options: zones of `zonesize` bytes, each written only at its write
/// pointer, emulated in a regular file or a non-zoned block device as fio 3.33 does
/// (`zbd.c:init_zone_info`); see `zbd.rs`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ZbdOpts {
    /// `zonesize`, bytes.
    pub size: u64,
    /// `zonecapacity`: the bytes of a zone that can be written (`zonesize` when 0).
    pub capacity: u64,
    /// `read_beyond_wp`: reads go where drawn, written or not.
    pub read_beyond_wp: bool,
    /// `max_open_zones`: zones open for writing at once on a file, all its jobs together
    /// (0: no limit, and then fio tracks no open zones).
    pub max_open: u32,
    /// `job_max_open_zones`: the same limit for one clone.
    pub job_max_open: u32,
    /// `ignore_zone_limits` (only a real zoned device has limits to ignore).
    pub ignore_limits: bool,
    /// `zone_reset_threshold`: the share of the region holding data above which
    /// `zone_reset_frequency` resets zones.
    pub reset_threshold: f64,
    /// `zone_reset_frequency`: one write in 1/f resets its zone first (0: none).
    pub reset_frequency: f64,
    /// `zoneskip`, bytes (a multiple of `zonesize`; sequential jobs only).
    pub skip: u64,
    /// Per clone: the file's size when the run was set up (fio's `real_file_size`, of
    /// which the zones are), and the clone's region rounded to whole zones (fio's
    /// `zbd_zone_align_file_sizes`), filled in at layout.
    pub files: Vec<ZbdFile>,
}

/// One clone's file under `zonemode=zbd`, as set up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZbdFile {
    /// The file's (or device's) size when set up: the zones cover it.
    pub real_size: u64,
    /// The clone's region's start, rounded up to a zone's start for a job that writes.
    pub offset: u64,
    /// The clone's region's length, its end rounded down to a zone's start likewise.
    pub size: u64,
}

/// fio's checks of `zonemode=zbd`'s options (`zbd.c:init_zone_info`,
/// `zbd_setup_files`, `init.c:fixup_options`), with its messages; what hostbench does not
/// do with zones is refused here.
fn finish_zbd(
    j: &JobSpec,
    at: &str,
    z: Zones,
    mut o: ZbdOpts,
    no_serialize: bool,
) -> Result<ZbdOpts, JobError> {
    if no_serialize {
        return err(format!(
            "{at}: zonemode=zbd with create_serialize=0 (fio 3.33: \"--zonemode=zbd and \
             --create_serialize=0 are not compatible.\"); leave create_serialize out"
        ));
    }
    if z.size == 0 {
        return err(format!(
            "{at}: zonemode=zbd needs a zonesize (fio 3.33: \"Specifying the zone size is \
             mandatory for regular file/block device with --zonemode=zbd\"); add e.g. \
             zonesize=256m"
        ));
    }
    if z.size < 512 {
        return err(format!(
            "{at}: zonesize={}: fio 3.33: \"zone size must be at least 512 bytes for \
             --zonemode=zbd\"",
            z.size
        ));
    }
    if o.capacity > z.size {
        return err(format!(
            "{at}: fio 3.33: \"job parameter zonecapacity {} is larger than zone size {}\"; \
             give a zonecapacity up to the zonesize",
            o.capacity, z.size
        ));
    }
    if o.job_max_open > 0 && o.max_open == 0 {
        return err(format!(
            "{at}: fio 3.33: \"'job_max_open_zones' cannot be used without a global open \
             zones limit\"; add max_open_zones"
        ));
    }
    if !z.skip.is_multiple_of(z.size) {
        return err(format!(
            "{at}: fio 3.33: \"zoneskip {} is not a multiple of the device zone size {}.\"",
            z.skip, z.size
        ));
    }
    let name = &j.name;
    if j.engine.fileless() || j.engine.file_op() {
        return err(format!(
            "job '{name}': zonemode=zbd needs a file or block device to emulate zones in; \
             ioengine={} has none",
            j.engine.name()
        ));
    }
    if j.nfiles() > 1 || j.unlink_each_loop {
        return err(format!(
            "job '{name}': zonemode=zbd with several files (or unlink_each_loop) is not \
             supported by hostbench; use one file per job"
        ));
    }
    if j.rw.trims() && matches!(j.engine, EngineKind::Falloc | EngineKind::Ftruncate) {
        // fio's falloc engine punches its own holes: no zone reset (fio 3.33 moves the
        // trim to a zone holding data and leaves its write pointer).
        return err(format!(
            "job '{name}': zonemode=zbd with rw={} and ioengine={}: trims reset zones only \
             through psync, sync, mmap, libaio or io_uring (fio's do_io_u_trim); use one of \
             them",
            j.rw.name(),
            j.engine.name()
        ));
    }
    let trim_bs = &j.bsz[2];
    if j.rw.trims() && (trim_bs.min != trim_bs.max || !trim_bs.split.is_empty()) {
        // A trim resets one zone (zbd.c's zbd_verify_bs).
        return err(format!(
            "job '{name}': fio 3.33: \"bsrange and bssplit are not allowed for trim with \
             zonemode=zbd\"; give trims one block size, the zonesize"
        ));
    }
    o.size = z.size;
    o.skip = z.skip;
    if o.capacity == 0 {
        o.capacity = z.size;
    }
    Ok(o)
}

/// fio's three-direction values (`bs=8k,32k`): the elements split at `,` go to read, write
/// and trim; a list shorter than three fills the rest with its last element unless it ends
/// with a comma (`bs=8k,32k,`: trim keeps its default); an empty element keeps the default.
fn per_dir(k: &str, v: &str, at: &str) -> Result<[Option<String>; 3], JobError> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return err(format!(
            "{at}: {k}={v}: at most three values, for reads, writes and trims"
        ));
    }
    let last = parts.last().copied().unwrap_or("");
    let mut out: [Option<String>; 3] = Default::default();
    for (d, o) in out.iter_mut().enumerate() {
        let p = parts.get(d).copied().unwrap_or(last);
        if !p.is_empty() {
            *o = Some(p.to_string());
        }
    }
    Ok(out)
}

/// One block size of `k=v`: 1 byte to 1 GiB.
fn block_size(k: &str, v: &str, p: &str, at: &str) -> Result<u64, JobError> {
    let b = parse_fio_size(p).ok_or_else(|| {
        JobError(format!(
            "{at}: {k}={v}: '{p}': expected a size such as 4096, 4k or 1m (k = 1024)"
        ))
    })?;
    if b == 0 || b > (1 << 30) {
        return err(format!("{at}: {k}={v}: block sizes go from 1 byte to 1g"));
    }
    Ok(b)
}

/// The `:`-separated `value/percent` entries of one direction of a split (`bssplit`,
/// `zoned`): (value, percent or `None` when missing or 0, as fio counts it).
fn split_entries<'a>(
    k: &str,
    v: &str,
    list: &'a str,
    at: &str,
    max: usize,
) -> Result<Vec<(&'a str, &'a str)>, JobError> {
    let mut out = Vec::new();
    for e in list.split(':') {
        let e = e.trim();
        if e.is_empty() {
            // fio: an empty entry ends the list.
            break;
        }
        let (val, rest) = e.split_once('/').unwrap_or((e, ""));
        out.push((val.trim(), rest.trim()));
        if out.len() > max {
            return err(format!(
                "{at}: {k}={v}: at most {max} entries per direction"
            ));
        }
    }
    Ok(out)
}

/// The percent after a split entry's `/`: `None` when missing or 0 (it then shares what the
/// others leave, as in fio), at most 100.
fn split_pct(k: &str, v: &str, p: &str, at: &str) -> Result<Option<u64>, JobError> {
    if p.is_empty() {
        return Ok(None);
    }
    let n = p.parse::<u64>().map_err(|_| {
        JobError(format!(
            "{at}: {k}={v}: '{p}': the part after '/' is a whole percent"
        ))
    })?;
    Ok((n > 0).then_some(n.min(100)))
}

/// fio's `bssplit=4k/10:64k/50:32k/40[,writes[,trims]]`: entries without a percent share
/// what the others leave (`(100 - sum) / missing`, whole percents), sorted by percent.
fn parse_bssplit(k: &str, v: &str, at: &str) -> Result<[Vec<(u64, u32)>; 3], JobError> {
    let mut out: [Vec<(u64, u32)>; 3] = Default::default();
    for (d, list) in per_dir(k, v, at)?.into_iter().enumerate() {
        let Some(list) = list else { continue };
        let entries = split_entries(k, v, &list, at, 64)?
            .into_iter()
            .map(|(b, p)| Ok((b, split_pct(k, v, p, at)?)))
            .collect::<Result<Vec<_>, JobError>>()?;
        let sum: u64 = entries.iter().filter_map(|e| e.1).sum();
        let missing = entries.iter().filter(|e| e.1.is_none()).count() as u64;
        if sum > 100 && missing > 1 {
            return err(format!(
                "{at}: {k}={v}: fio: bssplit percentages add to more than 100%"
            ));
        }
        let share = if missing == 1 && entries.len() == 1 {
            100
        } else {
            100u64.saturating_sub(sum) / missing.max(1)
        };
        let mut split = Vec::new();
        for (b, p) in entries {
            split.push((block_size(k, v, b, at)?, p.unwrap_or(share) as u32));
        }
        split.sort_by_key(|&(_, p)| p);
        out[d] = split;
    }
    Ok(out)
}

/// fio's `random_distribution`: `random`, `zipf:θ`, `pareto:h`, `normal:dev[:center]`
/// (`gauss`), `zoned:access/size%:...` and `zoned_abs:access/bytes:...` (per direction with
/// `,`).
fn parse_distribution(k: &str, v: &str, at: &str) -> Result<RandDist, JobError> {
    let v = v.trim();
    let (kind, rest) = v.split_once(':').unwrap_or((v, ""));
    let kind = kind.trim();
    if kind == "zoned" || kind == "zoned_abs" {
        let abs = kind == "zoned_abs";
        let mut zones: [Vec<(u32, u64)>; 3] = Default::default();
        for (d, list) in per_dir(k, rest, at)?.into_iter().enumerate() {
            let Some(list) = list else { continue };
            let entries = split_entries(k, v, &list, at, 256)?;
            let mut access = 0u64;
            let mut sized = 0u64;
            let mut missing = 0u64;
            let mut z = Vec::new();
            for (a, sz) in entries {
                let a = a.parse::<u64>().ok().filter(|a| *a <= 100).ok_or_else(|| {
                    JobError(format!(
                        "{at}: {k}={v}: '{a}': each zone starts with its share of the I/O, \
                         a whole percent"
                    ))
                })?;
                access += a;
                let size = if abs {
                    // zoned_abs: the part after '/' is a size.
                    parse_fio_size(sz).filter(|s| *s > 0).ok_or_else(|| {
                        JobError(format!(
                            "{at}: {k}={v}: zoned_abs gives each zone's size in bytes \
                             (zoned_abs:60/20g:40/100g)"
                        ))
                    })?
                } else {
                    match split_pct(k, v, sz, at)? {
                        Some(p) => {
                            sized += p;
                            p
                        }
                        None => {
                            missing += 1;
                            u64::MAX
                        }
                    }
                };
                z.push((a as u32, size));
            }
            if access > 100 || sized > 100 {
                return err(format!(
                    "{at}: {k}={v}: fio: zone_split percentages add to more than 100%"
                ));
            }
            if access < 100 {
                return err(format!(
                    "{at}: {k}={v}: fio: access percentage don't add up to 100 for zoned \
                     random distribution (got={access})"
                ));
            }
            let share = if missing == 1 && z.len() == 1 {
                100
            } else {
                (100 - sized) / missing.max(1)
            };
            for e in &mut z {
                if e.1 == u64::MAX {
                    e.1 = share;
                }
            }
            zones[d] = z;
        }
        if zones.iter().all(Vec::is_empty) {
            return err(format!(
                "{at}: {k}={v}: give the zones, e.g. zoned:60/10:30/20:10/70"
            ));
        }
        return Ok(RandDist::Zoned { abs, zones });
    }
    let args: Vec<&str> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split(':').map(str::trim).collect()
    };
    let num = |i: usize, what: &str| -> Result<Option<f64>, JobError> {
        match args.get(i) {
            None => Ok(None),
            Some(a) => match a.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => err(format!("{at}: {k}={v}: '{a}' is not a number ({what})")),
            },
        }
    };
    if args.len() > 2 || (kind == "random" && !args.is_empty()) {
        return err(format!("{at}: {k}={v}: too many ':' parts"));
    }
    Ok(match kind {
        "random" => RandDist::Random,
        "zipf" | "pareto" if args.len() > 1 => {
            return err(format!(
                "{at}: {k}={v}: the ':center' part of {kind} is not supported (hostbench puts \
                 the hot blocks at the start of the region)"
            ));
        }
        "zipf" => {
            let t = num(0, "θ")?.unwrap_or(1.1);
            if t == 1.0 || t == 0.0 {
                return err(format!(
                    "{at}: {k}={v}: zipf's θ must be more than 0 and not 1"
                ));
            }
            RandDist::Zipf(t)
        }
        "pareto" => {
            let h = num(0, "h")?.unwrap_or(0.2);
            if h <= 0.0 || h >= 1.0 {
                return err(format!("{at}: {k}={v}: pareto's h must be between 0 and 1"));
            }
            RandDist::Pareto(h)
        }
        "normal" | "gauss" => {
            let dev = num(0, "deviation, percent")?.unwrap_or(0.0);
            if dev >= 100.0 {
                return err(format!(
                    "{at}: {k}={v}: the deviation is a percent of the range, below 100"
                ));
            }
            let center = num(1, "center")?;
            if center.is_some_and(|c| c > 1.0) {
                return err(format!("{at}: {k}={v}: the center is from 0 to 1"));
            }
            RandDist::Normal { dev, center }
        }
        _ => {
            return err(format!(
                "{at}: {k}={v}: expected random, zipf[:θ], pareto[:h], normal[:dev[:center]], \
                 zoned:... or zoned_abs:..."
            ));
        }
    })
}

/// Why `ioengine=NAME` (`cpp_null`, `external:/path/lib.so`) cannot run: fio loads an engine
/// it does not have built in from a shared object (`dlopen` of the name, or of the path
/// after `external:`; `cpp_null` is fio's `engines/null.c` compiled by the user with g++,
/// `examples/cpp_null.fio`), and hostbench is one static binary, which cannot load one.
fn external_engine(name: &str, at: &str) -> String {
    let what = match name.strip_prefix("external:") {
        Some(path) => format!(
            "fio would load the engine from the shared object {path} (dlopen, then its \
             `ioengine` or `get_ioengine` symbol)"
        ),
        None => format!(
            "fio would load it as an external engine, a shared object named {name} that the \
             user builds (cpp_null is fio's engines/null.c compiled with g++, \
             examples/cpp_null.fio) and fio dlopens"
        ),
    };
    format!(
        "{at}: ioengine={name}: {what}; hostbench is a static binary and cannot load a shared \
         object, so external engines are out of reach. ioengine=null measures the same thing \
         (no I/O: the harness's own cost per I/O)"
    )
}

/// fio's `sync_file_range=FLAGS[:N]`: a comma list of `wait_before`, `write`,
/// `wait_after`, with every how many writes (default 1) after the last one.
fn parse_sfr(k: &str, v: &str, at: &str) -> Result<(u32, u32), JobError> {
    let (list, nr) = match v.rsplit_once(':') {
        Some((l, n)) => {
            let n = n
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    JobError(format!(
                        "{at}: {k}={v}: the number after ':' is how many writes between two \
                     calls, 1 or more"
                    ))
                })?;
            (l, n)
        }
        None => (v, 1),
    };
    let mut flags = 0;
    for f in list.split(',') {
        flags |= match f.trim() {
            "wait_before" => libc::SYNC_FILE_RANGE_WAIT_BEFORE,
            "write" => libc::SYNC_FILE_RANGE_WRITE,
            "wait_after" => libc::SYNC_FILE_RANGE_WAIT_AFTER,
            _ => {
                return err(format!(
                    "{at}: {k}={v}: expected a comma list of wait_before, write and \
                     wait_after, then :N for every N writes (write:8); the number ends the list"
                ));
            }
        };
    }
    Ok((flags, nr))
}

/// The options of engine `name` (as `ioengine=` names it) that hostbench knows: fio adds its
/// engine's options to its command line's long options once `ioengine=` names the engine,
/// so that a unique prefix of one is that option there (not in a job file).
pub fn engine_option_names(name: &str) -> Vec<&'static str> {
    let name = name.trim();
    super::fio_names::JOB_OPTIONS
        .iter()
        .copied()
        .filter(|&k| {
            if super::cmdprio::handles(k) {
                return matches!(name, "libaio" | "io_uring");
            }
            if !super::engines::handles(k) {
                return false;
            }
            match k {
                "hipri" | "uncached" | "nowait" => matches!(name, "io_uring" | "pvsync2"),
                _ => {
                    let owner = engine_of_option(k);
                    owner.name() == name || (owner == EngineKind::Net && name == "netsplice")
                }
            }
        })
        .collect()
}

/// The engine an engine option (`k`, any name of it) belongs to (`None`: not an engine's
/// option; `cmdprio_*`, libaio's and io_uring's, as libaio).
pub fn engine_of(k: &str) -> Option<EngineKind> {
    let k = canonical_option(k)?;
    if super::cmdprio::handles(k) {
        Some(EngineKind::Libaio)
    } else if super::engines::handles(k) {
        Some(engine_of_option(k))
    } else {
        None
    }
}

/// The engine an engine option (canonical name) belongs to.
fn engine_of_option(k: &str) -> EngineKind {
    if super::engines::pvsync2_option(k) {
        EngineKind::Pvsync2
    } else if super::engines::uring_option(k) {
        EngineKind::IoUring
    } else if k == "stat_type" {
        EngineKind::Filestat
    } else if super::engines::e4defrag_option(k) {
        EngineKind::E4defrag
    } else if super::engines::exec_option(k) {
        EngineKind::Exec
    } else if super::engines::net::option(k) {
        EngineKind::Net
    } else if k == "uri" {
        EngineKind::Nbd
    } else if k == "userspace_reap" {
        EngineKind::Libaio
    } else if k == "thp" {
        EngineKind::Mmap
    } else {
        EngineKind::Cpuio
    }
}

/// The engine's part of a job, as fio's engine `init` sets it: an engine option needs its
/// engine; cpuio needs `cpuload` (above 100 is 100) and thinks after every cycle
/// (`thinktime = cpuchunks·(100−cpuload)/cpuload` µs, `thinktime_blocks=1` at completion,
/// no spin: fio overrides the job's own think options so).
fn finish_engine(j: &mut JobSpec, global_known: &[String]) -> Result<(), JobError> {
    super::mem::check(&j.mem, &j.name)?;
    if j.sync_file_range.is_some() && (j.nfiles() > 1 || j.engine.fileless()) {
        return err(format!(
            "job '{}': sync_file_range with several files (or no file) is not supported by \
             hostbench yet (fio syncs each file's own written range); use one file per job",
            j.name
        ));
    }
    for (k, at) in &j.eng.given {
        // `hipri` is both io_uring's and pvsync2's; so are `uncached` and `nowait`.
        if k == "hipri" && j.engine == EngineKind::Pvsync2 {
            continue;
        }
        if matches!(k.as_str(), "uncached" | "nowait") && j.engine == EngineKind::IoUring {
            continue;
        }
        let owner = engine_of_option(k);
        if global_known.contains(at) {
            continue;
        }
        if j.engine != owner && !(owner == EngineKind::Net && j.engine.net()) {
            // The options two engines share are named with both.
            let owners = match k.as_str() {
                "hipri" | "uncached" | "nowait" => "ioengine=io_uring and ioengine=pvsync2".into(),
                _ => format!("ioengine={}", owner.name()),
            };
            return err(format!(
                "{at}: {k} is an option of {owners}; job '{}' uses ioengine={} (fio: \
                 engine options are only known after their ioengine=)",
                j.name,
                j.engine.name()
            ));
        }
    }
    // fio's cmdprio options belong to libaio and io_uring.
    if let Some((k, at)) = j.cmdprio.given.first()
        && !matches!(j.engine, EngineKind::Libaio | EngineKind::IoUring)
    {
        return err(format!(
            "{at}: {k} is an option of ioengine=libaio and ioengine=io_uring; job '{}' uses \
             ioengine={} (fio: engine options are only known after their ioengine=)",
            j.name,
            j.engine.name()
        ));
    }
    j.cmdprio.check(&j.name)?;
    if j.offload && j.nfiles() > 1 {
        return err(format!(
            "job '{}': io_submit_mode=offload with several files (nrfiles or a filename list) \
             is not supported by hostbench yet; use one file per job",
            j.name
        ));
    }
    if j.offload && j.rw.trims() {
        return err(format!(
            "job '{}': io_submit_mode=offload with rw={} is not supported by hostbench yet \
             (its submitting threads read and write); drop io_submit_mode=offload",
            j.name,
            j.rw.name()
        ));
    }
    if j.offload {
        match j.engine {
            EngineKind::Psync | EngineKind::Libaio | EngineKind::Null | EngineKind::Mmap => {}
            EngineKind::IoUring => {
                return err(format!(
                    "job '{}': io_uring: can't be used with offloaded submit. Use a sync engine \
                     (fio's words; io_submit_mode=offload runs with ioengine=psync, libaio, mmap or null)",
                    j.name
                ));
            }
            e => {
                return err(format!(
                    "job '{}': io_submit_mode=offload with ioengine={} is not supported by \
                     hostbench yet (it runs with psync, libaio, mmap or null)",
                    j.name,
                    e.name()
                ));
            }
        }
    }
    if j.engine == EngineKind::Exec {
        return finish_exec(j);
    }
    // fio's engine init allocates the donor up to `file_size_high`, the option as given
    // (0 without one); the layout resolves `filesize` away later.
    j.eng.e4defrag.file_size_high = j.filesize.map_or(0, |(_, high)| high);
    if j.engine == EngineKind::E4defrag && j.eng.e4defrag.donor.as_deref().is_none_or(str::is_empty)
    {
        return err(format!(
            "job '{}': ioengine=e4defrag needs donorname= (the donor file whose blocks are \
             swapped with the job's file, in its directory; fio 3.33: 'donorname' options \
             required)",
            j.name
        ));
    }
    if j.engine.net() {
        return finish_net(j);
    }
    if j.engine == EngineKind::Nbd {
        return finish_nbd(j);
    }
    if j.engine != EngineKind::Cpuio {
        return Ok(());
    }
    if j.eng.cpuload == 0 {
        return err(format!(
            "job '{}': ioengine=cpuio needs cpuload= (the percent of a CPU to use, 1-100; \
             fio: cpu thread needs rate (cpuload=))",
            j.name
        ));
    }
    j.eng.cpuload = j.eng.cpuload.min(100);
    j.think = ThinkOpts {
        us: super::engines::cpuio::think_us(j.eng.cpuchunks_us, j.eng.cpuload),
        ..ThinkOpts::default()
    };
    Ok(())
}

/// net's part, as fio's engine init checks it: the peer is `hostname` or else the job's
/// `filename` (fio's hostname sets the filename); the socket is the job's only "file".
fn finish_net(j: &mut JobSpec) -> Result<(), JobError> {
    if j.eng.net.host.is_none() {
        j.eng.net.host = j.filename.take();
    }
    j.filename = None;
    if !j.more_files.is_empty() || j.nfiles() > 1 {
        return err(format!(
            "job '{}': ioengine=net uses one socket per job; drop nrfiles and the filename list",
            j.name
        ));
    }
    if j.rw.trims() {
        return err(format!(
            "job '{}': ioengine=net cannot trim (rw={}); use rw=read or rw=write",
            j.name,
            j.rw.name()
        ));
    }
    // fio's UDP sequence numbers are left out under verify (its header is in the way).
    j.eng.net.udp_seq = j.verify.kind == 0;
    j.eng.net.splice = j.engine == EngineKind::NetSplice;
    let reads = j.rw.read_pct(50) > 0;
    let writes = j.rw.read_pct(50) < 100;
    super::engines::net::check(&mut j.eng.net, reads, writes, j.rw.random()).map_err(|e| {
        JobError(format!(
            "job '{}': ioengine={}: {e}",
            j.name,
            j.engine.name()
        ))
    })
}

/// nbd's part, as fio's engine setup checks it: `uri` is required and must parse; the
/// export is the job's only "file" (fio names it `nbd`); no request above 64 MiB (fio's
/// `NBD_MAX_REQUEST_SIZE`).
fn finish_nbd(j: &mut JobSpec) -> Result<(), JobError> {
    let Some(uri) = j.eng.nbd_uri.as_deref() else {
        return err(format!(
            "job '{}': ioengine=nbd needs uri= (e.g. uri=nbd://localhost:10809/export or \
             uri=nbd+unix:///export?socket=/path/to/socket; fio: nbd: uri parameter was not \
             specified)",
            j.name
        ));
    };
    super::engines::nbd::Uri::parse(uri)
        .map_err(|e| JobError(format!("job '{}': uri={uri}: {e}", j.name)))?;
    if j.filename.is_some() || !j.more_files.is_empty() || j.nfiles() > 1 {
        return err(format!(
            "job '{}': ioengine=nbd does its I/O on the export uri= names; drop filename and \
             nrfiles",
            j.name
        ));
    }
    if j.max_bs() > super::engines::nbd::MAX_REQUEST {
        return err(format!(
            "job '{}': ioengine=nbd: a block of {} bytes is larger than an NBD request may be \
             (64 MiB, fio's NBD_MAX_REQUEST_SIZE); use bs=64m or less",
            j.name,
            j.max_bs()
        ));
    }
    Ok(())
}

/// exec's part, as fio's engine init sets it: `program` is required, and the job thinks
/// 50 ms after each "I/O" (`thinktime=50000`, `thinktime_blocks=1` at completion, no
/// spin). hostbench also requires `runtime`: without one fio runs the job for ever, sending
/// the program SIGTERM every second.
fn finish_exec(j: &mut JobSpec) -> Result<(), JobError> {
    if j.eng
        .exec
        .program
        .as_deref()
        .is_none_or(|p| p.trim().is_empty())
    {
        return err(format!(
            "job '{}': ioengine=exec needs program= (the program to run, e.g. \
             program=/usr/bin/vmstat; fio: no program is defined, it is mandatory to define one)",
            j.name
        ));
    }
    if j.runtime_s.is_none_or(|r| r <= 0.0) {
        return err(format!(
            "job '{}': ioengine=exec needs runtime= (how long the program runs, e.g. \
             runtime=30; fio would run the job until it is killed)",
            j.name
        ));
    }
    if j.eng.exec.std_redirect && j.name.contains('/') {
        return err(format!(
            "job '{}': ioengine=exec writes the program's output to JOBNAME.stdout and \
             JOBNAME.stderr in the current directory; a job name with '/' would put them \
             elsewhere: rename the job or set std_redirect=0",
            j.name
        ));
    }
    j.think = ThinkOpts {
        us: super::engines::exec::POLL_US,
        ..ThinkOpts::default()
    };
    Ok(())
}

/// Whether a job's options fit together (the values are checked already).
fn check_job(j: &JobSpec) -> Result<(), JobError> {
    let r = &j.rate;
    let any = |a: &[u64; 2]| a.iter().any(|&x| x > 0);
    if (any(&r.bps) && any(&r.iops)) || (any(&r.min_bps) && any(&r.min_iops)) {
        return err(format!(
            "job '{}': rate and rate_iops are mutually exclusive (as are rate_min and \
             rate_iops_min): give the limit in bytes/s or in IOPS",
            j.name
        ));
    }
    for d in 0..2 {
        if (r.bps[d] > 0 && r.bps[d] < r.min_bps[d]) || (r.iops[d] > 0 && r.iops[d] < r.min_iops[d])
        {
            return err(format!(
                "job '{}': the minimum rate exceeds the rate for {} (fio: minimum rate \
                 exceeds rate, ddir {d})",
                j.name,
                ["reads", "writes"][d]
            ));
        }
    }
    if j.serialize_overlap && j.offload {
        return err(format!(
            "job '{}': serialize_overlap with io_submit_mode=offload is not supported by \
             hostbench yet (fio then holds overlapping I/Os in its submit threads); use \
             io_submit_mode=inline, or drop serialize_overlap",
            j.name
        ));
    }
    if j.direct && !j.engine.fileless() {
        let sizes = (0..2).flat_map(|d| {
            let what = ["read", "write"][d];
            let b = &j.bsz[d];
            [b.min, b.max]
                .into_iter()
                .chain(b.split.iter().map(|e| e.0))
                .chain(j.blockalign[d])
                .map(move |x| (what, x))
        });
        if j.bs_unaligned && j.bsz.iter().take(2).any(|b| b.min != b.max) {
            return err(format!(
                "job '{}': bs_unaligned draws sizes that are not multiples of 512, which \
                 direct=1 cannot do; drop bs_unaligned or direct=1",
                j.name
            ));
        }
        for (what, bs) in sizes {
            if !bs.is_multiple_of(512) {
                return err(format!(
                    "job '{}': the {what} block size {bs} is not a multiple of 512: with direct=1 \
                     block sizes and offsets must be multiples of the device's logical block \
                     size (512 or 4096 bytes); use e.g. bs=4k, or drop direct=1",
                    j.name
                ));
            }
        }
        if !j.offset.is_multiple_of(512) || !j.offset_increment.is_multiple_of(512) {
            return err(format!(
                "job '{}': offset={} (offset_increment={}) is not a multiple of 512: with \
                 direct=1 offsets must be multiples of the device's logical block size (512 or \
                 4096 bytes)",
                j.name, j.offset, j.offset_increment
            ));
        }
    }
    if j.engine == EngineKind::Mmap && j.direct {
        return err(format!(
            "job '{}': ioengine=mmap cannot do direct I/O; drop direct=1",
            j.name
        ));
    }
    Ok(())
}

impl JobSpec {
    /// The clone issues one I/O at a time and completes it in the call: a sync engine, and
    /// `null` at `iodepth=1` (fio's null engine is synchronous only there; above, it queues).
    pub fn sync_io(&self) -> bool {
        self.engine.is_sync() && !(self.engine == EngineKind::Null && self.iodepth > 1)
    }

    /// Clone `c`'s layout error, when its file could not be laid out
    /// ([`JobSpec::layout_failed`]).
    pub fn layout_failure(&self, c: u32) -> Option<&CloneError> {
        self.layout_failed
            .iter()
            .find_map(|(fc, e)| (*fc == c).then_some(e))
    }

    /// What ends a size-based clone (not `time_based`), as fio 3.33 ends it: `(bytes, ios)`,
    /// the clone stops issuing once it has issued that many bytes, or that many I/Os (0 = no
    /// I/O limit). `region` is the clone's region (`size`). Measured with fio on null jobs:
    /// `loops` passes each cover the region once up to `io_size`, and an `io_size` larger
    /// than the region is done in the first pass, so the bytes are
    /// `max(io_size, loops × min(io_size, region))` (`size=1m`: `loops=3` 3 MiB,
    /// `io_size=512k,loops=3` 1.5 MiB, `io_size=3m,loops=2` 3 MiB, `io_size=1536k,loops=2`
    /// 2 MiB); `number_ios` counts over all passes (`number_ios × loops`). A pass covers the
    /// region's whole blocks only (`size=1000k,bs=64k`: 15 I/Os), and with `filesize` no
    /// more than `size` (`filesize=64k,size=32k`: 32 KiB; `size=256k`: 64 KiB).
    pub fn io_limits(&self, region: u64) -> (u64, u64) {
        self.io_limits_in(region, region)
    }

    /// [`JobSpec::io_limits`] of a clone whose file goes on for `room` bytes from the
    /// region's start (at least `region`).
    pub fn io_limits_in(&self, region: u64, room: u64) -> (u64, u64) {
        self.io_limits_pass(self.pass_bytes(region, room), region)
    }

    /// The bytes of one pass over a region of `region` bytes in a file that goes on for
    /// `room` bytes from the region's start. A pass covers the region's whole blocks
    /// (size=1000k, bs=64k on a new file: 15 I/Os, as fio). A sequential pass of fixed
    /// blocks also does the block that starts before the region's end when it fits in the
    /// file (an existing 2 MiB file: 16 I/Os, the last one ending at 1024k, as fio, whose
    /// `get_next_offset` checks an offset against `io_size` and its end against the
    /// file's size); random offsets stay within the region's whole blocks (fio's
    /// `last_block`). With a size range or mix (bsrange, bssplit) fio sizes the last I/Os
    /// to what is left (get_next_buflen draws again until one fits): the pass is the
    /// region's whole smallest blocks (size=100k, bsrange=4k-64k: 100 KiB, not one 64 KiB
    /// block).
    pub fn pass_bytes(&self, region: u64, room: u64) -> u64 {
        let unit = self.io_unit().max(1);
        let whole = region - region % unit;
        let fixed = self.bsz[..2]
            .iter()
            .all(|b| b.min == b.max && b.min == unit);
        if whole < region
            && fixed
            && !self.rw.random()
            && !self.rw.trims()
            && self.seq_add == 0
            && self.zones.is_none()
            && whole + unit <= room
        {
            whole + unit
        } else {
            whole
        }
    }

    /// What a pass's bytes are a whole number of: the block size, or with a range or mix in
    /// a direction the job does, the smallest block size of its directions.
    fn io_unit(&self) -> u64 {
        let mut dirs = Vec::with_capacity(3);
        if self.rw.read_pct(self.rwmixread) > 0 {
            dirs.push(0);
        }
        if self.rw.writes(self.rwmixread) {
            dirs.push(1);
        }
        if self.rw.trims() {
            dirs.push(2);
        }
        if dirs.iter().any(|&d| self.bsz[d].min != self.bsz[d].max) {
            dirs.iter().map(|&d| self.bsz[d].min).min().unwrap_or(1)
        } else {
            self.max_bs()
        }
    }

    /// [`JobSpec::io_limits`] of a clone whose pass is `pass` bytes (with several files,
    /// the sum of each file's whole blocks) over `region` bytes in all.
    pub fn io_limits_pass(&self, pass: u64, region: u64) -> (u64, u64) {
        let loops = u64::from(self.loops.max(1));
        let mut pass = pass;
        if let Some(limit) = self.size_limit {
            // `size` with `filesize`: the bytes of a pass, never past the file's end.
            pass = pass.min(limit);
        }
        let io = self
            .io_size
            .or(self.io_size_pct.map(|p| region.saturating_mul(p) / 100))
            .unwrap_or(pass);
        if self.rw.trim_write()
            || (self.verifies_each_pass() && self.rw.read_pct(self.rwmixread) == 0)
        {
            // Each pass's writes are matched by as many bytes again: trimwrite trims every
            // range it writes, a verifying writer reads each pass back. fio's
            // `keep_running` counts both toward `io_size`, so fewer bytes are written.
            let writes = Self::paired_passes(io, pass, loops, self.max_bs());
            return if self.rw.trim_write() {
                // (fio doubles `number_ios` for trimwrite: it counts trims and writes.)
                (
                    writes.saturating_mul(2),
                    self.number_ios.saturating_mul(loops).saturating_mul(2),
                )
            } else {
                (writes, self.number_ios.saturating_mul(loops))
            };
        }
        let bytes = io.max(loops.saturating_mul(io.min(pass)));
        (bytes, self.number_ios.saturating_mul(loops))
    }

    /// The bytes written by a job each of whose passes does as many bytes again in another
    /// direction (trimwrite's trims, a verify phase's reads), as fio 3.33 runs it: `loops`
    /// passes, then more while the bytes done in every direction (twice the writes) are
    /// short of `io` by a block or more (`backend.c:keep_running`); within the passes the
    /// writes stop once `io × loops` are issued (`io_issue_bytes_exceeded`), else a pass
    /// writes `pass` bytes (`size=256k,io_size=1m`: two passes, 512 KiB written;
    /// `size=1m,io_size=512k`: one pass cut at 512 KiB).
    fn paired_passes(io: u64, pass: u64, loops: u64, max_bs: u64) -> u64 {
        let cap = io.saturating_mul(loops);
        let mut written = 0u64;
        let mut passes = 0u64;
        loop {
            if passes >= loops {
                let done = written.saturating_mul(2);
                if done >= io || io - done < max_bs {
                    break;
                }
            }
            let add = pass.min(cap - written);
            if add == 0 {
                break;
            }
            written += add;
            passes += 1;
        }
        written
    }

    /// Whether the job reads back what it wrote after each pass over its region, as fio
    /// runs `do_verify` after every `do_io`: a writer (no reads, no trims) with `verify`
    /// and `do_verify`, no `verify_backlog` (which reads back between writes),
    /// `trim_percentage` (whose trims go on after the writes), `verify_only` or
    /// `experimental_verify`, size-based, outside zone modes (with several files, a pass
    /// is every file's region: see `Files::pass_done`).
    pub fn verifies_each_pass(&self) -> bool {
        let v = &self.verify;
        v.kind != super::verify::kind::NONE
            && v.do_verify
            && !v.only
            && !v.experimental
            && v.backlog == 0
            && v.trim_pct == 0
            && self.rw.writes(self.rwmixread)
            && !self.rw.trims()
            && !self.time_based
            && self.zones.is_none()
            && self.zbd.is_none()
            && !self.engine.net()
    }

    /// Resolves `filesize` into the regions, keeping the `size` given as the limit of a
    /// pass; `haves` are the lengths of the job's files now (0 when there is none): one per
    /// clone with their own files, one for a shared `filename`. As fio
    /// (`filesetup.c:setup_files`), per file: a file whose length is already within the range
    /// is used as it is; otherwise the file is the fixed size, or a size drawn uniformly in
    /// the range and rounded down to the smallest block size. A region is its file's length
    /// from `offset` on (`filesize=64k,offset=16k`: 48 KiB). Each clone draws from fio's
    /// `file_size_state` of its thread (`first_thread` is fio's thread number of the job's
    /// first clone: one more than the clones of the jobs before it), so every run gets
    /// fio's sizes. `size` becomes the first file's region, [`JobSpec::file_sizes`] every
    /// clone's. Does nothing without `filesize`, or when already resolved.
    pub fn resolve_filesize(&mut self, first_thread: u64, haves: &[u64]) -> Result<(), JobError> {
        let Some((lo, hi)) = self.filesize.take() else {
            return Ok(());
        };
        let mut regions = Vec::new();
        // Percentages (`offset=25%`, `size=50%`) with one file: of the file's length now
        // (fio's `real_file_size`: 0 for a new file, so the offset is 0), and `size=P%`
        // of the length `filesize` gives (fio's `io_size + file_offset`).
        let pct_one = haves.len() == 1 && self.pct.any();
        if pct_one {
            self.real_size = Some(haves[0]);
        }
        let size_pct = if pct_one { self.pct.size.take() } else { None };
        let min_bs = self.bs_read.min(self.bs_write).max(1);
        // fio's `get_rand_file_size`: each clone draws its files' sizes in turn from its
        // `file_size_state` (FIO_RAND_FILE_SIZE_OFF's seed of its thread). fio numbers a
        // job's first clone, then its others from the last down (`add_job`'s
        // `subjob_number`): clone c ≥ 1 is thread first + numjobs − c.
        let wide = self.rand64;
        let mut draws: Option<(u32, super::verify::FioRand)> = None;
        for (c, &have) in haves.iter().enumerate() {
            // Slots are each clone's files in turn, or the shared `filename` list's.
            let clone = if self.filename.is_some() {
                0
            } else {
                c as u32 / self.nfiles()
            };
            let file = if (lo..=hi).contains(&have) {
                have
            } else if hi > lo {
                if draws.as_ref().is_none_or(|d| d.0 != clone) {
                    let thread = if clone == 0 {
                        first_thread
                    } else {
                        first_thread + u64::from(self.numjobs.saturating_sub(clone))
                    };
                    // Without a repeatable seed fio draws from the system's generator:
                    // randseed's default is as good.
                    let seed = self.fio_rand_seed(thread, 7).unwrap_or_else(|| {
                        super::verify::fio_seed(self.randseed.unwrap_or(0x89), thread, 7)
                    });
                    draws = Some((clone, super::verify::FioRand::new(seed, wide)));
                }
                let r = draws.as_mut().map_or(0, |d| d.1.draw());
                let max = draws.as_ref().map_or(1, |d| d.1.max());
                let min_bs = self.bs_read.min(self.bs_write).max(1);
                let v = lo + ((hi - lo) as f64 * (r as f64 / (max as f64 + 1.0))) as u64;
                (v - v % min_bs).max(min_bs)
            } else {
                lo
            };
            let off = self.clone_offset(clone);
            if off >= file {
                return err(format!(
                    "job '{}': offset={off} is past the end of the file (filesize gives {file} \
                     bytes)",
                    self.name
                ));
            }
            regions.push(match size_pct {
                Some(p) if p != 100 => {
                    let s = (file.saturating_mul(p) / 100).min(file - off);
                    s - s % min_bs
                }
                _ => file - off,
            });
            if self.filename.is_some() && self.nfiles() == 1 && self.numjobs > 1 {
                // Clones sharing the one file: each region runs from the clone's own
                // offset to the file's end (fio's `io_size = filesize - file_offset`), so
                // the file stays `filesize` long (it took the first clone's length from
                // every clone's offset on, and grew the file by the offsets).
                let mut per_clone = Vec::with_capacity(self.numjobs as usize);
                for c in 0..self.numjobs {
                    let off = self.clone_offset(c);
                    if off >= file {
                        return err(format!(
                            "job '{}': clone {c}'s offset {off} (offset + {c} × \
                             offset_increment) is at or past the end of the file (filesize \
                             gives {file} bytes): fio gives that clone no I/O ('blocksize is \
                             larger than data set range'); lower offset_increment or numjobs, \
                             or raise filesize",
                            self.name
                        ));
                    }
                    per_clone.push((off, file - off));
                }
                self.file_regions = per_clone;
            }
        }
        self.size_limit = self.size;
        self.size = regions.first().copied();
        if regions.len() > 1 {
            self.file_sizes = regions;
        }
        Ok(())
    }

    /// The part of a file at `off`, `len` bytes long, as the mmap engine maps it (with the
    /// job's `thp`).
    pub fn map_region(&self, off: u64, len: u64) -> super::engine::Region {
        super::engine::Region {
            off,
            len,
            thp: self.eng.thp,
        }
    }

    /// The access pattern the job announces to the kernel for its file (`fadvise_hint`):
    /// `Some(true)` random, `Some(false)` sequential, `None` no advice.
    pub fn advises_random(&self) -> Option<bool> {
        match self.fadvise_hint {
            FadviseHint::None => None,
            FadviseHint::ByPattern => Some(self.rw.random()),
            FadviseHint::Random => Some(true),
            FadviseHint::Sequential => Some(false),
        }
    }
    /// Where clone `clone`'s region starts: `offset + clone × offset_increment` (fio numbers
    /// the clones differently, but clone N's file `name.N.0` gets the same offset as fio's).
    /// With percentages (`offset=10%`, `offset_increment=20%`) they are of the file's length
    /// ([`JobSpec::real_size`]) and the sum is rounded up to the smallest block size, as fio
    /// (`filesetup.c:get_start_offset`; 4 MiB, `10%` and `20%`: 0x67000, 0x134000, 0x200000).
    /// Once [`JobSpec::file_regions`] holds the clones' regions of one shared file, theirs.
    pub fn clone_offset(&self, clone: u32) -> u64 {
        if self.nfiles() == 1
            && let Some(&(o, _)) = self.file_regions.get(clone as usize)
        {
            // Resolved at layout (clones sharing a file, offsets in percent).
            return o;
        }
        self.start_offset(clone, self.real_size.unwrap_or(0))
    }

    /// fio's `get_start_offset` for clone `clone` in a file of `real` bytes: percentages
    /// are of `real`, and then the sum is rounded up to `offset_align` or the smallest
    /// block size.
    pub fn start_offset(&self, clone: u32, real: u64) -> u64 {
        if self.file_append {
            // fio: a regular file's region starts at its end (layout.rs checks the rest).
            return real;
        }
        let of = |p: u64| real.saturating_mul(p) / 100;
        let base = self.pct.offset.map_or(self.offset, of);
        let inc = self.pct.offset_increment.map_or(self.offset_increment, of);
        let raw = base.saturating_add(inc.saturating_mul(u64::from(clone)));
        if self.pct.offset.is_some() || self.pct.offset_increment.is_some() {
            // fio: up to `offset_align` when given, else to the smallest block size.
            let a = self
                .offset_align
                .unwrap_or(self.bs_read.min(self.bs_write))
                .max(1);
            raw.div_ceil(a).saturating_mul(a)
        } else {
            raw
        }
    }

    /// Clone `clone`'s region: `size`, or with `size=P%` that share of the file's length,
    /// no further than the file's end from the clone's offset, rounded down to the smallest
    /// block size (fio's `setup_files`; `size=100%` is the rest of the file).
    pub fn clone_size(&self, clone: u32) -> Option<u64> {
        let n = self.nfiles() as usize;
        if n > 1 && !self.file_regions.is_empty() {
            // Several files: the clone's regions together.
            let at = clone as usize * n;
            return self
                .file_regions
                .get(at..at + n)
                .map(|r| r.iter().map(|&(_, s)| s).sum());
        }
        if n == 1
            && let Some(&(_, s)) = self.file_regions.get(clone as usize)
        {
            return Some(s);
        }
        if let Some(&s) = self.file_sizes.get(clone as usize) {
            return Some(s);
        }
        let Some(p) = self.pct.size else {
            return self.size;
        };
        let real = self.real_size?;
        let off = self.clone_offset(clone);
        let rest = real.checked_sub(off)?;
        if p == 100 {
            return Some(rest);
        }
        let a = self.bs_read.min(self.bs_write).max(1);
        let s = (real.saturating_mul(p) / 100).min(rest);
        Some(s - s % a)
    }

    /// fio's `rate_bps` of direction `d`: `rate`, or `rate_iops` times the smallest block
    /// size of the direction; 0 when the direction is not limited.
    pub fn rate_bps(&self, d: usize) -> u64 {
        if self.rate.bps[d] > 0 {
            self.rate.bps[d]
        } else {
            self.rate.iops[d].saturating_mul(self.bsz[d].min)
        }
    }

    /// Whether each loop seeds the generators again (fio's `rand_repeatable` once the job
    /// is set up): `randrepeat`, unless `randseed` is given — fio's `fixup_options` turns
    /// `randrepeat` off then, after the seeds were drawn with it on, so the loops go on
    /// drawing where the last one stopped.
    pub fn reseeds_each_loop(&self) -> bool {
        self.randrepeat && self.randseed.is_none()
    }

    /// fio's seed number `off` (`FIO_RAND_*_OFF`) of the clone with fio thread number
    /// `thread` (1-based), `td->rand_seeds[off]`: under `allrandrepeat`, `0xb1899bed ×
    /// thread + off` (`td_fill_rand_seeds`); under `randrepeat` or with `randseed`, from
    /// `randseed` (0x89 unset, [`super::verify::fio_seed`]); `None` otherwise (fio reads
    /// the system's generator).
    pub fn fio_rand_seed(&self, thread: u64, off: u64) -> Option<u64> {
        if self.allrandrepeat {
            Some(0xb189_9bed_u64.wrapping_mul(thread).wrapping_add(off))
        } else if self.randrepeat || self.randseed.is_some() {
            Some(super::verify::fio_seed(
                self.randseed.unwrap_or(0x89),
                thread,
                off,
            ))
        } else {
            None
        }
    }

    /// The largest block size the job uses.
    pub fn max_bs(&self) -> u64 {
        let rw = self.bsz[0].max.max(self.bsz[1].max);
        if self.rw.trims() {
            rw.max(self.bsz[2].max)
        } else {
            rw
        }
    }
    /// The name fio reports clone `clone` under: the section's `name=` for the first
    /// ([`renamed`](Self::renamed)), else the section's.
    pub fn clone_name(&self, clone: u32) -> &str {
        match &self.renamed {
            Some(n) if clone == 0 => n,
            _ => &self.name,
        }
    }

    /// The name `filename=` gives the job's file `k` (its list's `k`th), if any.
    pub fn given_name(&self, k: u32) -> Option<&str> {
        if k == 0 {
            self.filename.as_deref()
        } else {
            self.more_files.get(k as usize - 1).map(String::as_str)
        }
    }

    /// The file clone `clone` uses (fio's `$jobname.$jobnum.$filenum` unless `filename`).
    pub fn file_path(&self, clone: u32) -> std::path::PathBuf {
        self.file_path_k(clone, 0)
    }

    /// How many files each clone does I/O to: the `filename` list's, else `nrfiles`.
    pub fn nfiles(&self) -> u32 {
        if self.filename.is_some() {
            1 + self.more_files.len() as u32
        } else {
            self.nrfiles.max(1)
        }
    }

    /// The `filename` list, in order (empty with generated names).
    pub fn filenames(&self) -> Vec<&str> {
        self.filename
            .iter()
            .chain(self.more_files.iter())
            .map(String::as_str)
            .collect()
    }

    /// Where file `k` of clone `clone` is in [`JobSpec::file_sizes`]: the `filename`
    /// list is shared by the clones, generated files are each clone's own.
    pub fn file_slot(&self, clone: u32, k: u32) -> usize {
        if self.filename.is_some() {
            k as usize
        } else {
            clone as usize * self.nfiles() as usize + k as usize
        }
    }

    /// File `k` of clone `clone`'s region: (offset, length). Once laid out, what
    /// [`JobSpec::file_regions`] holds; before, with one file, the clone's
    /// ([`JobSpec::clone_offset`], [`JobSpec::clone_size`]); with several, each file is
    /// `filesize` (drawn per file) or `size` divided among them, as fio divides it
    /// (`size=100k,nrfiles=3`: three files of 34133 bytes, whole blocks of each used).
    pub fn file_region(&self, clone: u32, k: u32) -> (u64, u64) {
        let n = self.nfiles();
        if let Some(&r) = self
            .file_regions
            .get(clone as usize * n as usize + k as usize)
        {
            return r;
        }
        let off = self.clone_offset(clone);
        if n == 1 {
            return (off, self.clone_size(clone).unwrap_or(0));
        }
        if let Some(&s) = self.file_sizes.get(self.file_slot(clone, k)) {
            return (off, s);
        }
        (off, self.size.unwrap_or(0) / u64::from(n))
    }

    /// How long file `k` must be for clone `clone`: the end of its region, or with a
    /// shared `filename` list the furthest end of any clone's region in it.
    pub fn file_need(&self, clone: u32, k: u32) -> u64 {
        let clones = if self.filename.is_some() {
            0..self.numjobs.max(1)
        } else {
            clone..clone + 1
        };
        clones
            .map(|c| {
                let (o, s) = self.file_region(c, k);
                o.saturating_add(s)
            })
            .max()
            .unwrap_or(0)
    }

    /// File `k` of clone `clone` ([`JobSpec::file_path`] for the first).
    pub fn file_path_k(&self, clone: u32, k: u32) -> std::path::PathBuf {
        let given = if k == 0 {
            self.filename.as_ref()
        } else {
            self.more_files.get(k as usize - 1)
        };
        match given {
            Some(f) => {
                let p = std::path::Path::new(f);
                // fio's set_name_idx for a named file: the first directory.
                let dir = match &self.filename_dir {
                    Some(d) => split_filenames(d)
                        .into_iter()
                        .next()
                        .map_or_else(|| std::path::PathBuf::from("."), Into::into),
                    None => self.directory_of(0),
                };
                if dir.as_os_str() == "." {
                    p.to_path_buf()
                } else if let Ok(rest) = p.strip_prefix("/") {
                    // fio's add_file joins `directory` and the name whatever the name is:
                    // `directory=dd filename=/x/v` is `dd/x/v` (it wrote, and with `unlink`
                    // removed, `/x/v` itself: a file the job did not name). Only the run's
                    // own directory (the native grammar's `dir`, not the job's) leaves an
                    // absolute name as given.
                    if !self.run_dir.is_empty() && dir == std::path::Path::new(&self.run_dir) {
                        p.to_path_buf()
                    } else {
                        dir.join(rest)
                    }
                } else {
                    dir.join(p)
                }
            }
            None => {
                let n = self.generated_name_k(clone, k);
                let dir = self.directory_of(clone);
                match n.strip_prefix('/') {
                    // fio: an absolute `filename_format` as given, or under the directory
                    // given (`directory=d`: `d/tmp/x.0`).
                    Some(rest) if dir.as_os_str() != "." => dir.join(rest.trim_start_matches('/')),
                    _ => dir.join(n),
                }
            }
        }
    }

    /// The job's directories: `directory`'s `:`-separated list (`\:` a colon in a name).
    pub fn directories(&self) -> Vec<std::path::PathBuf> {
        let list = split_filenames(&self.directory);
        if list.is_empty() {
            return vec![std::path::PathBuf::from(".")];
        }
        list.into_iter().map(std::path::PathBuf::from).collect()
    }

    /// The directory of clone `clone`'s generated files: fio's `set_name_idx`, the clone's
    /// number modulo the count of directories (`directory=d1:d2`, numjobs=3: d1, d2, d1);
    /// files named by `filename` are in the first, as fio puts them.
    pub fn directory_of(&self, clone: u32) -> std::path::PathBuf {
        let mut dirs = self.directories();
        let i = clone as usize % dirs.len();
        dirs.swap_remove(i)
    }

    /// The name fio generates for clone `clone`'s file: `filename_format` (default
    /// `$jobname.$jobnum.$filenum`) with its keywords, in any case, replaced: `$jobname`,
    /// `$jobnum` (the clone), `$filenum` (0: one file per clone) and `$clientuid` (empty
    /// outside fio's client mode, as in fio).
    pub fn generated_name(&self, clone: u32) -> String {
        self.generated_name_k(clone, 0)
    }

    /// [`JobSpec::generated_name`] of the clone's file `k` (`$filenum`).
    pub fn generated_name_k(&self, clone: u32, k: u32) -> String {
        let format = self
            .filename_format
            .as_deref()
            .unwrap_or("$jobname.$jobnum.$filenum");
        let mut out = String::new();
        let mut rest = format;
        'scan: while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let tail = &rest[i..];
            for (kw, val) in [
                ("$jobname", self.name.clone()),
                ("$jobnum", clone.to_string()),
                ("$filenum", k.to_string()),
                ("$clientuid", String::new()),
            ] {
                if tail.len() >= kw.len() && tail[..kw.len()].eq_ignore_ascii_case(kw) {
                    out.push_str(&val);
                    rest = &tail[kw.len()..];
                    continue 'scan;
                }
            }
            out.push('$');
            rest = &tail[1..];
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `log_entries` (a user review: refused) is taken within fio's bounds (1024 to 1 Gi
    /// entries; `log_entries=5` is fio's "min value out of range") and changes nothing.
    #[test]
    fn log_entries_is_checked_as_fio_and_taken() {
        let one = |v: &str| {
            let text = format!("[a]\nioengine=null\nsize=64k\nlog_entries={v}\n");
            jobs_from_sections(&from_text(&text).unwrap()).map(|mut j| j.remove(0))
        };
        let plain = jobs_from_sections(&from_text("[a]\nioengine=null\nsize=64k\n").unwrap())
            .unwrap()
            .remove(0);
        let j = one("4096").unwrap();
        assert_eq!((j.size, j.bsz), (plain.size, plain.bsz));
        assert!(one("5").is_err());
        assert!(one("1073741825").is_err());
    }

    /// Every option taken answers to each of fio 3.33's aliases of it (`fileoffset` was
    /// refused while `offset` was taken: a user review).
    #[test]
    fn every_option_taken_takes_fios_aliases() {
        for (name, alias) in super::super::fio_names::OPTION_TABLE {
            if alias.is_empty() {
                continue;
            }
            if let Some(o) = OPTS.iter().find(|o| o.name == *name) {
                assert!(o.aliases.contains(alias), "{name}: alias {alias} refused");
            }
        }
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn a_mistyped_option_gets_a_suggestion() {
        let secs = from_text("[global]\niodepht=4\n[a]\nsize=1m\n").unwrap();
        let e = jobs_from_sections(&secs).unwrap_err().0;
        assert!(
            e.contains("'iodepht'") && e.contains("did you mean 'iodepth'?"),
            "{e}"
        );
        assert_eq!(closest_option("readwrit"), Some("readwrite"));
        assert_eq!(closest_option("completely_unknown"), None);
    }

    #[test]
    fn ini_sections_globals_and_comments() {
        let text = "; comment\n# another\n[global]\nioengine=libaio\ndirect=1\n\n[a]\nrw=randread\nbs=4k\n[global]\nbs=8k\n[b]\nrw=write\ntime_based\nruntime=1\n";
        let s = parse_ini(text, "t.fio", &no_env).unwrap();
        assert_eq!(s.len(), 4);
        assert_eq!(s[1].opts[0], ("rw".to_string(), "randread".to_string()));
        assert_eq!(s[3].opts[1], ("time_based".to_string(), String::new()));
        // Each job has its own runtime, as in fio.
        let jobs = jobs_from_sections(&s).unwrap();
        assert_eq!((jobs[0].runtime_s, jobs[1].runtime_s), (None, Some(1.0)));
        assert!(!jobs[0].time_based && jobs[1].time_based);
        let text = "[global]\nioengine=libaio\ndirect=1\n[a]\nrw=randread\n[global]\nbs=8k\n[b]\nrw=write\n";
        let jobs = jobs_from_sections(&parse_ini(text, "t.fio", &no_env).unwrap()).unwrap();
        assert_eq!(jobs[0].engine, EngineKind::Libaio);
        assert_eq!(jobs[0].bs_read, 4096);
        assert_eq!(
            jobs[1].bs_read, 8192,
            "the second global applies below it only"
        );
        assert!(jobs[1].direct);
    }

    /// fio's reference job (fio-jobfiles.md §1): a, b in group 0, c (new_group) in 1, d
    /// (stonewall) in 2; a stonewall in [global] gives every job its own group.
    #[test]
    fn group_ids_as_fio_assigns_them() {
        let g = |text: &str| -> Vec<u32> {
            jobs_from_sections(&parse_ini(text, "t", &no_env).unwrap())
                .unwrap()
                .iter()
                .map(|j| j.groupid)
                .collect()
        };
        let text = "[global]\nioengine=null\nsize=1m\n[a]\nnumjobs=2\n[b]\nrw=write\n[c]\nnew_group\ngroup_reporting\nnumjobs=3\n[d]\nstonewall\n";
        assert_eq!(g(text), [0, 0, 1, 2]);
        assert_eq!(g("[global]\nstonewall\n[a]\n[b]\n[c]\n"), [0, 1, 2]);
        assert_eq!(
            g("[a]\nstonewall\n[b]\nwait_for_previous\n[c]\nnew_group=0\n"),
            [0, 1, 1]
        );
        // wait_for does not change the group.
        assert_eq!(g("[a]\n[b]\nwait_for=a\n"), [0, 0]);
    }

    #[test]
    fn sequencing_options_are_checked_as_fio_checks_them() {
        let j = |text: &str| jobs_from_sections(&parse_ini(text, "t", &no_env).unwrap());
        let jobs = j("[a]\nstartdelay=1-500ms\nexitall\nexit_what=stonewall\n[b]\nstartdelay=2\n")
            .unwrap();
        assert_eq!(
            jobs[0].startdelay_s,
            (0.5, 1.0),
            "a reversed range is ordered"
        );
        assert!(jobs[0].exitall && jobs[0].exit_what == ExitWhat::Stonewall);
        assert_eq!(jobs[1].startdelay_s, (2.0, 2.0));
        assert_eq!(jobs[1].exit_what, ExitWhat::Group);
        for (text, needle) in [
            ("[a]\nwait_for=b\n[b]\n", "no job named 'b' before it"),
            ("[a]\nwait_for=a\n", "cannot wait for itself"),
            ("[a]\n[a]\n[b]\nwait_for=a\n", "several jobs are named 'a'"),
            ("[a]\nexit_what=some\n", "expected group"),
            ("[a]\nstartdelay=x\n", "expected a time"),
            ("[a]\nstartdelay=-1\n", "expected a time"),
        ] {
            let e = j(text).unwrap_err();
            assert!(e.0.contains(needle), "{text:?}: {e}");
            assert!(!e.0.contains("  "), "{text:?}: a run of spaces in {e}");
        }
    }

    /// fio's reference measurement: a 4 MiB file, `offset=10%`, `offset_increment=20%`,
    /// three clones: first I/Os at 0x67000, 0x134000, 0x200000.
    #[test]
    fn percentages_are_of_the_file_and_rounded_as_fio() {
        let job = |text: &str| {
            let mut j =
                jobs_from_sections(&parse_ini(text, "t", &no_env).unwrap()).unwrap()[0].clone();
            j.real_size = Some(4 << 20);
            j
        };
        let j = job("[a]\noffset=10%\noffset_increment=20%\nnumjobs=3\nsize=4k\n");
        assert_eq!(
            (0..3).map(|c| j.clone_offset(c)).collect::<Vec<_>>(),
            [0x67000, 0x134000, 0x200000]
        );
        let j = job("[a]\noffset=10%\nsize=100%\n");
        assert_eq!(
            j.clone_size(0),
            Some((4 << 20) - 0x67000),
            "the rest of the file"
        );
        let j = job("[a]\noffset=75%\nsize=50%\n");
        assert_eq!(
            j.clone_size(0),
            Some(1 << 20),
            "no further than the file's end"
        );
        let j = job("[a]\nsize=10%\nbs=64k\n");
        assert_eq!(j.clone_size(0), Some(6 * 65536), "whole blocks");
        for (text, needle) in [
            ("[a]\nsize=0%\n", "from 1% to 100%"),
            ("[a]\nsize=101%\n", "from 1% to 100%"),
            ("[a]\noffset=x%\n", "from 0% to 100%"),
        ] {
            let e = jobs_from_sections(&parse_ini(text, "t", &no_env).unwrap()).unwrap_err();
            assert!(e.0.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn each_clone_starts_at_its_offset() {
        let s = parse_ini(
            "[a]\noffset=8k\noffset_increment=64k\nnumjobs=3\n",
            "t",
            &no_env,
        )
        .unwrap();
        let j = &jobs_from_sections(&s).unwrap()[0];
        assert_eq!(
            (0..3).map(|c| j.clone_offset(c)).collect::<Vec<_>>(),
            [8 << 10, 72 << 10, 136 << 10]
        );
        let e = jobs_from_sections(
            &parse_ini("[a]\ndirect=1\noffset_increment=100\n", "t", &no_env).unwrap(),
        )
        .unwrap_err();
        assert!(e.0.contains("offset_increment=100"), "{e}");
    }

    #[test]
    fn io_limits_as_fio_counts_them() {
        let lim = |opts: &str| {
            let text = format!("[a]\nsize=1m\n{}\n", opts.replace(' ', "\n"));
            let j = &jobs_from_sections(&parse_ini(&text, "t", &no_env).unwrap()).unwrap()[0];
            j.io_limits(1 << 20)
        };
        assert_eq!(lim(""), (1 << 20, 0));
        assert_eq!(lim("loops=3"), (3 << 20, 0));
        assert_eq!(lim("loops=0"), (1 << 20, 0), "0 loops count as 1");
        assert_eq!(lim("io_size=512k loops=3"), (3 << 19, 0));
        assert_eq!(lim("io_limit=3m loops=2"), (3 << 20, 0));
        assert_eq!(lim("io_size=1536k loops=2"), (2 << 20, 0));
        assert_eq!(lim("number_ios=100 loops=3"), (3 << 20, 300));
        assert_eq!(lim("number_ios=1k"), (1 << 20, 1024));
        assert_eq!(lim("bs=64k io_size=0"), (1 << 20, 0), "io_size=0 is unset");
        // A share of the region (fio: 30% of 1 MiB twice is 154 blocks of 4 KiB).
        assert_eq!(lim("io_size=50%"), (512 << 10, 0));
        assert_eq!(lim("io_size=30% loops=2"), (2 * ((1 << 20) * 30 / 100), 0));
        let resolved = |opts: &str| {
            let text = format!("[a]\n{}\n", opts.replace(' ', "\n"));
            let mut j =
                jobs_from_sections(&parse_ini(&text, "t", &no_env).unwrap()).unwrap()[0].clone();
            j.resolve_filesize(1, &[0]).unwrap();
            (j.size, j.io_limits(j.size.unwrap()))
        };
        assert_eq!(resolved("filesize=64k"), (Some(64 << 10), (64 << 10, 0)));
        assert_eq!(
            resolved("filesize=64k size=32k"),
            (Some(64 << 10), (32 << 10, 0))
        );
        assert_eq!(
            resolved("filesize=64k size=1m"),
            (Some(64 << 10), (64 << 10, 0))
        );
        assert_eq!(
            resolved("filesize=64k size=1m loops=2"),
            (Some(64 << 10), (128 << 10, 0))
        );
        assert_eq!(
            resolved("filesize=64k offset=16k"),
            (Some(48 << 10), (48 << 10, 0))
        );
        let text = "[a]\nfilesize=64k-128k\n";
        let mut j = jobs_from_sections(&parse_ini(text, "t", &no_env).unwrap()).unwrap()[0].clone();
        j.resolve_filesize(1, &[100 << 10]).unwrap();
        assert_eq!(
            j.size,
            Some(100 << 10),
            "a file within the range is used as it is"
        );
        let mut j =
            jobs_from_sections(&parse_ini("[a]\nfilesize=8k\noffset=8k\n", "t", &no_env).unwrap())
                .unwrap()[0]
                .clone();
        assert!(
            j.resolve_filesize(1, &[0])
                .unwrap_err()
                .0
                .contains("past the end")
        );
        let (size, _) = resolved("filesize=64k-10k bs=4k");
        let size = size.unwrap();
        assert!(
            (8 << 10..=64 << 10).contains(&size) && size % 4096 == 0,
            "{size}"
        );
        let j = &jobs_from_sections(&parse_ini("[a]\nbs=64k\n", "t", &no_env).unwrap()).unwrap()[0];
        assert_eq!(
            j.io_limits(1000 << 10),
            (960 << 10, 0),
            "whole blocks of the region"
        );
        for (text, needle) in [
            (
                "[a]\nio_size=150%\n",
                "io_size values greater than 100% aren't supported",
            ),
            ("[a]\nloops=-1\n", "whole number"),
            ("[a]\nnumber_ios=x\n", "expected a count"),
            ("[a]\nfilesize=0\n", "more than 0"),
            ("[a]\nfilesize=10%\n", "percentages"),
            ("[a]\nfilesize=1k-x\n", "expected a size"),
        ] {
            let e = jobs_from_sections(&parse_ini(text, "t", &no_env).unwrap()).unwrap_err();
            assert!(e.0.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn inline_comments_are_cut_as_fio_cuts_them() {
        let s = parse_ini(
            "[global] ; defaults\ntime_based # flag\n[a]#job\nfilename=x ; note\nruntime=2 ; two seconds\ndescription=foo;bar#baz\n",
            "t.fio",
            &no_env,
        )
        .unwrap();
        assert_eq!(s[0].name, "global");
        assert_eq!(s[0].opts, [("time_based".to_string(), String::new())]);
        assert_eq!(s[1].name, "a");
        assert_eq!(s[1].opts[0], ("filename".to_string(), "x".to_string()));
        assert_eq!(s[1].opts[1], ("runtime".to_string(), "2".to_string()));
        assert_eq!(s[1].opts[2], ("description".to_string(), "foo".to_string()));
        // time_based in [global], runtime in the job: one valid job.
        let jobs = jobs_from_sections(&s).unwrap();
        assert!(jobs[0].time_based);
        assert_eq!(jobs[0].runtime_s, Some(2.0));
    }

    #[test]
    fn a_bad_value_names_its_own_line() {
        for (text, line) in [
            ("[global]\nioengine=psync\n\nbs=4x\n[a]\n", "t.fio:4:"),
            ("[a]\nsize=1m\n; c\n\nrw=sideways\n", "t.fio:5:"),
            (
                "[global]\nsize=1m\n[a]\nrw=read\n[global]\n\niodepth=0\n[b]\n",
                "t.fio:7:",
            ),
        ] {
            let e = jobs_from_sections(&parse_ini(text, "t.fio", &no_env).unwrap()).unwrap_err();
            assert!(e.0.starts_with(line), "{text:?}: {e}");
        }
    }

    #[test]
    fn fio_options_hostbench_lacks_are_not_typos() {
        for k in ["fadvise_hint_x", "iodepht"] {
            assert!(
                unsupported_option(k, k).contains("is not a fio option"),
                "{k}"
            );
        }
        for k in ["sqthread_poll", "cgroup"] {
            let m = unsupported_option(k, k);
            assert!(
                m.starts_with(&format!("fio option {k} is not supported by hostbench yet")),
                "{m}"
            );
            assert!(!m.contains("spelling"), "{m}");
        }
    }

    #[test]
    fn options_out_of_reach_say_why() {
        for (k, why) in [
            ("uid", "runuser -u USER"),
            ("gid", "runuser -u USER"),
            ("gtod_cpu", "spinning on that CPU"),
            ("gtod_cpu", "jobs read the clock themselves"),
            ("block_error_percentiles", "aborts"),
            ("cgroup_weight", "blkio cgroup"),
        ] {
            let m = unsupported_option(k, &format!("--{k}"));
            assert!(m.contains(why), "{k}: {m}");
        }
        assert!(refusal_reason("pre_read").is_none());
    }

    #[test]
    fn a_fio_option_hostbench_lacks_gets_no_suggestion() {
        // `sync` once got "did you mean fsync?" (another meaning altogether): no fio option
        // hostbench lacks is ever answered with another option's name.
        for &k in super::super::fio_names::JOB_OPTIONS {
            if canonical_option(k).is_some() {
                continue;
            }
            let m = unsupported_option(k, &format!("--{k}"));
            assert!(!m.contains("did you mean"), "{k}: {m}");
        }
    }

    #[test]
    fn env_expansion_is_bounded() {
        // 64 KiB per value, 200 references a line, 1000 lines: 12.5 GiB if unbounded.
        let big = "x".repeat(64 << 10);
        let env = |_: &str| Some(big.clone());
        let line = format!("filename={}\n", "${X}".repeat(200));
        let text = format!("[a]\n{}", line.repeat(1000));
        let t0 = std::time::Instant::now();
        let e = parse_ini(&text, "bomb.fio", &env).unwrap_err();
        assert!(e.0.contains("bomb.fio:"), "{e}");
        assert!(e.0.contains("4 MiB"), "{e}");
        assert!(t0.elapsed() < std::time::Duration::from_secs(10));
        // Below the limit it still expands.
        let s = parse_ini("[a]\nfilename=${X}\n", "t", &env).unwrap();
        assert_eq!(s[0].opts[0].1.len(), 64 << 10);
    }

    #[test]
    fn env_expansion() {
        let env = |k: &str| (k == "SIZE").then(|| "64m".to_string());
        let s = parse_ini(
            "[a]\nsize=${SIZE}\nfilename=$SIZE.x\nbs=${NOPE}4k\n",
            "t",
            &env,
        )
        .unwrap();
        assert_eq!(s[0].opts[0].1, "64m");
        // fio expands only `${VAR}`: a bare `$SIZE` is kept as written.
        assert_eq!(s[0].opts[1].1, "$SIZE.x");
        assert_eq!(s[0].opts[2].1, "4k");
        assert!(parse_ini("[a]\nsize=${SIZE\n", "t", &env).is_err());
    }

    #[test]
    fn malformed_files_are_clear_errors() {
        for (text, needle) in [
            ("size=1m\n", "before any [section]"),
            ("[a\nsize=1m\n", "section header"),
            ("[]\n", "not a valid section name"),
            ("[a]\n=3\n", "no option name"),
            ("[a]\ninclude other.fio\n", "include"),
        ] {
            let e = parse_ini(text, "bad.fio", &no_env).unwrap_err();
            assert!(e.0.contains(needle), "{text:?}: {e}");
            assert!(e.0.starts_with("bad.fio:"), "{e}");
        }
        for (text, needle) in [
            (
                "[a]\ncgroup=1\n",
                "bad.fio:2: fio option 'cgroup' is not supported by hostbench yet",
            ),
            ("[a]\n\nbogus=1\n", "bad.fio:3: 'bogus' is not a fio option"),
            (
                "[a]\nverify_async_cpus=4096\n",
                "bad.fio:2: verify_async_cpus=4096: CPU 4096 too large (max=",
            ),
            (
                "[a]\ntrim_percentage=101\n",
                "trim_percentage=101: max value out of range: 101 (100 max)",
            ),
            (
                "[a]\ntrim_verify_zero=2\n",
                "trim_verify_zero=2: expected 0 or 1",
            ),
            (
                "[a]\ntrim_backlog=x\n",
                "trim_backlog=x: expected a whole number",
            ),
            ("[a]\nflow=1001\n", "from 0 to 1000"),
            ("[a]\nrate=1m\nrate_iops=5\n", "mutually exclusive"),
            ("[a]\nrate_iops=5,10\nrate_iops_min=1,20\n", "ddir 1"),
            ("[a]\nrate_process=uniform\n", "linear or poisson"),
            ("[a]\nthinktime=x\n", "expected a time"),
            ("[a]\ndirect=1\nbs=1000\n", "not a multiple of 512"),
            ("[a]\nrw=trimming\n", "randrw, trim, randtrim"),
            ("[a]\nbs=4x\n", "expected a size"),
            ("[a]\nbsrange=4k\n", "min-max"),
            ("[a]\nioengine=rdma\n", "rdma is not supported"),
            ("[a]\nrwmixread=101\n", "from 0 to 100"),
            ("[global]\nbs=0\n", "block sizes"),
            ("[global]\n", "no jobs"),
        ] {
            let s = parse_ini(text, "bad.fio", &no_env).unwrap();
            let e = jobs_from_sections(&s).unwrap_err();
            assert!(e.0.contains(needle), "{text:?}: {e}");
        }
    }

    fn one(opts: &str) -> Result<JobSpec, JobError> {
        let text = format!("[j]\n{}\n", opts.replace(' ', "\n"));
        jobs_from_sections(&parse_ini(&text, "t.fio", &no_env).unwrap()).map(|mut v| v.remove(0))
    }

    /// fio's fix-up keeps `serialize_overlap` only for a job that writes or trims at a
    /// depth above 1 (its `init.c`), and hostbench refuses it with `io_submit_mode=offload`.
    #[test]
    fn serialize_overlap_kept_where_fio_keeps_it() {
        let so = |o: &str| {
            one(&format!("serialize_overlap=1 {o}"))
                .unwrap()
                .serialize_overlap
        };
        assert!(so("rw=randwrite iodepth=8"));
        assert!(so("rw=randrw iodepth=2"));
        assert!(so("rw=trim iodepth=4"));
        assert!(!so("rw=randread iodepth=8"));
        assert!(!so("rw=randwrite iodepth=1"));
        let e = one("serialize_overlap=1 rw=write iodepth=4 io_submit_mode=offload").unwrap_err();
        assert!(e.0.contains("io_submit_mode=offload"), "{e}");
        assert!(one("serialize_overlap=1 rw=read iodepth=4 io_submit_mode=offload").is_ok());
    }

    #[test]
    fn block_sizes_per_direction_as_fio() {
        let mm = |j: &JobSpec| j.bsz.iter().map(|b| (b.min, b.max)).collect::<Vec<_>>();
        let k = 1024;
        assert_eq!(
            mm(&one("bs=8k,32k").unwrap()),
            [(8 * k, 8 * k), (32 * k, 32 * k), (32 * k, 32 * k)]
        );
        assert_eq!(
            mm(&one("bs=8k,32k,").unwrap())[2],
            (4 * k, 4 * k),
            "a trailing comma keeps trim's default"
        );
        assert_eq!(mm(&one("bs=,8k").unwrap())[0], (4 * k, 4 * k));
        assert_eq!(
            mm(&one("bsrange=1k-16k,2k-8k,512-1k").unwrap()),
            [(k, 16 * k), (2 * k, 8 * k), (512, k)]
        );
        // A split wins over bs whatever the order; one list serves every direction.
        let j = one("bssplit=4k/60:8k/30,16k bs=64k").unwrap();
        assert_eq!(mm(&j), [(4 * k, 8 * k), (16 * k, 16 * k), (16 * k, 16 * k)]);
        assert_eq!(
            j.bsz[0].split,
            [(8 * k, 30), (4 * k, 60)],
            "sorted by percent"
        );
        assert_eq!(j.bs_read, 4 * k);
        // fio's rule: over 100% is an error only with more than one entry lacking a percent.
        assert!(one("bssplit=4k/60:8k/60").is_ok());
        let e = one("bssplit=4k/60:8k/60:16k:32k").unwrap_err();
        assert!(
            e.0.contains("bssplit percentages add to more than 100%"),
            "{e}"
        );
        let j = one("bssplit=512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10").unwrap();
        assert_eq!(mm(&j)[0], (512, 64 * k));
    }

    #[test]
    fn rw_suffix_distributions_and_generators_as_fio() {
        assert_eq!(one("rw=read:-8k").unwrap().seq_add, -8192);
        assert_eq!(one("rw=write:4k").unwrap().seq_add, 4096);
        assert_eq!(one("rw=randread:8").unwrap().seq_nr, 8);
        assert!(one("rw=randread:x").is_err());
        assert!(one("rw_sequencer=identical").unwrap().rw_seq_identical);
        assert_eq!(
            one("percentage_random=30,70").unwrap().percentage_random,
            [30, 70, 70]
        );
        assert_eq!(
            one("percentage_sequential=30").unwrap().percentage_random,
            [70; 3]
        );
        assert_eq!(
            one("random_generator=lfsr").unwrap().random_generator,
            RandGen::Lfsr
        );
        assert!(one("random_generator=mt").is_err());
        for ok in [
            "roundrobin",
            "sequential:4",
            "random:2",
            "zipf:1.2",
            "gauss",
        ] {
            assert!(one(&format!("file_service_type={ok}")).is_ok(), "{ok}");
        }
        // fio reads the count with atoi: 0 is taken (a file kept until done).
        let fs = one("file_service_type=random:0").unwrap().file_service;
        assert_eq!((fs.kind, fs.nr), (FileKind::Random, 0));
        // openfiles is fio's unsigned int: -1 is its largest value (all files open).
        assert_eq!(one("openfiles=-1").unwrap().openfiles, u32::MAX);
        for bad in ["rr", "random:x", "sequential:-1"] {
            assert!(one(&format!("file_service_type={bad}")).is_err(), "{bad}");
        }
        assert!(one("openfiles=4").is_ok());
        assert!(one("openfiles=x").is_err());
        assert_eq!(one("nrfiles=4").unwrap().nfiles(), 4);
        assert!(one("nrfiles=0").is_err());
        for bad in ["zipf:1", "pareto:1.5", "normal:100"] {
            assert!(one(&format!("file_service_type={bad}")).is_err(), "{bad}");
        }
        let fs = one("file_service_type=roundrobin:2").unwrap().file_service;
        assert_eq!((fs.kind, fs.nr), (FileKind::RoundRobin, 2));
        assert_eq!(
            one("file_service_type=pareto").unwrap().file_service.kind,
            FileKind::Pareto(0.2)
        );
    }

    #[test]
    fn filename_lists_and_filenum_name_files_as_fio() {
        assert_eq!(split_filenames(r"fxa:fxb:fx\:c"), ["fxa", "fxb", "fx:c"]);
        // Empty elements are skipped.
        assert_eq!(split_filenames("a::b"), ["a", "b"]);
        assert_eq!(split_filenames(":a:::b:"), ["a", "b"]);
        assert!(split_filenames("::").is_empty());
        assert!(split_filenames("").is_empty());
        let j = jobs_from_sections(&from_text("[j]\nnrfiles=3\nsize=100k\n").unwrap())
            .unwrap()
            .remove(0);
        assert_eq!(j.file_path_k(0, 2), std::path::PathBuf::from("./j.0.2"));
        // fio: size/nrfiles each (34133 bytes of 100k).
        assert_eq!(j.file_region(0, 1), (0, 34133));
        let j = jobs_from_sections(
            &from_text("[j]\nfilename=a:b\\:c\nnumjobs=2\nfilename_format=x\n").unwrap(),
        )
        .unwrap()
        .remove(0);
        assert_eq!(j.nfiles(), 2);
        assert_eq!(j.file_path_k(1, 1), std::path::PathBuf::from("b:c"));
        // fio: nrfiles after a longer filename list keeps its first nrfiles names (also
        // from [global]); before it, or larger, the list's count.
        let nf = |text: &str| {
            let j = jobs_from_sections(&from_text(text).unwrap())
                .unwrap()
                .remove(0);
            (j.nfiles(), j.filenames().join(":"))
        };
        assert_eq!(nf("[j]\nfilename=a:b:c\nnrfiles=2\n"), (2, "a:b".into()));
        assert_eq!(
            nf("[global]\nfilename=a:b:c\n[j]\nnrfiles=1\n"),
            (1, "a".into())
        );
        assert_eq!(nf("[j]\nnrfiles=2\nfilename=a:b:c\n"), (3, "a:b:c".into()));
        assert_eq!(nf("[j]\nfilename=a:b\nnrfiles=5\n"), (2, "a:b".into()));
        // `filename=:` names no file: fio runs the job on nothing and reports nothing.
        let e = jobs_from_sections(&from_text("[j]\nfilename=:\n").unwrap()).unwrap_err();
        assert!(e.to_string().contains("names no file"), "{e}");
        assert_eq!(j.file_slot(1, 1), 1);
        match one("random_distribution=zoned:50/5:30/15:20/")
            .unwrap()
            .dist
        {
            RandDist::Zoned { abs: false, zones } => {
                assert_eq!(zones[0], [(50, 5), (30, 15), (20, 80)]);
                assert_eq!(zones[1], zones[0]);
            }
            d => panic!("{d:?}"),
        }
        let e = one("random_distribution=zoned:50/5:30/15").unwrap_err();
        assert!(e.0.contains("access percentage don't add up to 100"), "{e}");
        assert!(e.0.contains("got=80"), "{e}");
        let e = one("random_distribution=zoned:50/60:50/60").unwrap_err();
        assert!(
            e.0.contains("zone_split percentages add to more than 100%"),
            "{e}"
        );
        match one("random_distribution=zoned_abs:60/20g:40/100g")
            .unwrap()
            .dist
        {
            RandDist::Zoned { abs: true, zones } => {
                assert_eq!(zones[0], [(60, 20 << 30), (40, 100 << 30)])
            }
            d => panic!("{d:?}"),
        }
        assert_eq!(
            one("random_distribution=normal:10:0.3").unwrap().dist,
            RandDist::Normal {
                dev: 10.0,
                center: Some(0.3)
            }
        );
        assert_eq!(
            one("random_distribution=zipf").unwrap().dist,
            RandDist::Zipf(1.1)
        );
        assert!(one("random_distribution=zipf:1").is_err());
        assert!(one("random_distribution=bogus").is_err());
        let e = one("direct=1 bssplit=4k/50:1000/50").unwrap_err();
        assert!(e.0.contains("not a multiple of 512"), "{e}");
    }

    #[test]
    fn sizes_and_times_as_fio_reads_them() {
        assert_eq!(parse_fio_size("4k"), Some(4096));
        // fio 3.33: the three-letter IEC forms are powers of 1000 with the default kb_base.
        assert_eq!(parse_fio_size("4KiB"), Some(4000));
        assert_eq!(parse_fio_size("1GiB"), Some(1_000_000_000));
        assert_eq!(parse_fio_size("4ki"), Some(4096));
        assert_eq!(parse_fio_size("0x1000"), Some(4096));
        assert_eq!(parse_fio_size("(64*1024)"), Some(65536));
        assert_eq!(parse_fio_size("1.5m"), None);
        {
            let _k = super::super::expr::KbBaseScope::enter(1000);
            assert_eq!(parse_fio_size("4k"), Some(4000));
            assert_eq!(parse_fio_size("4kib"), Some(4096));
        }
        assert_eq!(parse_fio_size("4k"), Some(4096));
        assert_eq!(parse_fio_size("4kb"), Some(4096));
        assert_eq!(parse_fio_size("1M"), Some(1 << 20));
        assert_eq!(parse_fio_size("4G"), Some(4 << 30));
        assert_eq!(parse_fio_size("k"), None);
        assert_eq!(parse_fio_time("10", 1.0), Some(10.0));
        assert_eq!(parse_fio_time("500ms", 1.0), Some(0.5));
        assert_eq!(parse_fio_time("2m", 1.0), Some(120.0));
        assert_eq!(parse_fio_time("x", 1.0), None);
        // fio's whole µs: other suffixes are µs, the fraction is dropped.
        assert_eq!(parse_fio_time("1ns", 1.0), Some(1e-6));
        assert_eq!(parse_fio_time("500ns", 1e-6), Some(500e-6));
        assert_eq!(parse_fio_time("2sec", 1.0), Some(2e-6));
        assert_eq!(parse_fio_time("1min", 1.0), Some(1e-6));
        assert_eq!(parse_fio_time("1.5s", 1.0), Some(1.0));
        assert_eq!(parse_fio_time("1.5ms", 1e-6), Some(1e-6));
        assert_eq!(parse_fio_time("20usec", 1.0), Some(20e-6));
        assert_eq!(parse_fio_time("3msec", 1.0), Some(3e-3));
        assert_eq!(parse_fio_time("2h", 1.0), Some(7200.0));
        assert_eq!(parse_fio_time("1d", 1.0), Some(86400.0));
        assert_eq!(parse_fio_time("100", 1e-6), Some(100e-6));
        assert_eq!(parse_fio_time("-5", 1.0), None);
    }

    /// A time fio reads differently from how it looks gets hostbench's note (the value is
    /// fio's all the same); one fio reads as it looks gets none.
    #[test]
    fn surprising_times_get_a_note() {
        let notes = |opts: &str| {
            time_notes(&from_text(&format!("[a]\n{}\n", opts.replace(' ', "\n"))).unwrap())
        };
        let n = notes("runtime=60sec");
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].contains("runtime=60sec is 60 µs"), "{n:?}");
        assert!(notes("timeout=1min")[0].contains("runtime=1min is 1 µs"));
        assert!(
            notes("runtime=1.5s")[0].contains("is 1 s")
                && notes("runtime=1.5s")[0].contains("fraction")
        );
        assert!(notes("thinktime=10ns")[0].contains("thinktime=10ns is 10 µs"));
        assert!(notes("startdelay=2sec-4sec").len() == 2);
        assert!(
            notes("runtime=60 ramp_time=5s thinktime=500us latency_target=20ms startdelay=1m ss_dur=(2*30)")
                .is_empty()
        );
    }

    /// The report's list of fio's synchronous engines (its "capped at 1" note) is the
    /// engines `is_sync` names but null, for every engine `ioengine` takes.
    #[test]
    fn fios_syncio_list_is_is_sync_but_null() {
        let e = jobs_from_sections(&from_text("[a]\nioengine=bogus\n").unwrap()).unwrap_err();
        let names = e.0.split_once("; use ").unwrap().1.replace(" or ", ", ");
        let names: Vec<&str> = names.split(", ").collect();
        assert!(names.len() > 15, "{names:?}");
        for name in names {
            let text = format!("[a]\nioengine={name}\n");
            let kind = jobs_from_sections(&from_text(&text).unwrap())
                .map(|j| j[0].engine)
                .or_else(|e| {
                    // An engine needing more options says which: its kind is still known.
                    let sec = from_text(&text).unwrap();
                    apply_options(
                        &[("ioengine".into(), name.into(), "t".into())],
                        "a",
                        &sec[0].opts,
                    )
                    .map(|j| j.engine)
                    .map_err(|_| e)
                })
                .unwrap();
            assert_eq!(kind.name(), name);
            assert_eq!(
                kind.is_sync() && kind != EngineKind::Null,
                hostbench_core::fio_result::FIO_SYNCIO_ENGINES.contains(&name),
                "{name}"
            );
        }
    }

    #[test]
    fn canonical_text_round_trips() {
        let s = parse_ini(
            "[global]\ndirect=1\n[job1]\nrw=randrw\ntime_based\nruntime=2\n",
            "t",
            &no_env,
        )
        .unwrap();
        let back = from_text(&to_text(&s)).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[1].opts, s[1].opts);
        // A later job file's start survives the text: its jobs do not get the globals
        // before it (nor does the variant line that labels the run).
        let mut s = parse_ini("[global]\nbs=8k\n[a]\n", "one", &no_env).unwrap();
        let mut two = parse_ini("[c]\nrw=write\n", "two", &no_env).unwrap();
        two[0].file_start = true;
        s.extend(two);
        let text = to_text(&s);
        let back = from_text(&text).unwrap();
        assert_eq!(
            back.iter().map(|x| (&x.name, &x.opts)).collect::<Vec<_>>(),
            s.iter().map(|x| (&x.name, &x.opts)).collect::<Vec<_>>()
        );
        assert_eq!(
            back.iter().map(|x| x.file_start).collect::<Vec<_>>(),
            [false, false, true]
        );
        let jobs = jobs_from_sections(&back).unwrap();
        assert_eq!((jobs[0].bs_read, jobs[1].bs_read), (8192, 4096));
        assert_eq!(
            super::super::jobfile::variant_summary(&text).as_deref(),
            Some("a rw=read bs=8k iodepth=1; c rw=write bs=4k iodepth=1")
        );
        // To fio (and parse_ini) the line is a comment.
        assert_eq!(parse_ini(&text, "t", &no_env).unwrap().len(), 3);
    }

    proptest::proptest! {
        /// The parser's fuzz property (also a cargo-fuzz target in `fuzz/`): whatever bytes
        /// a job file holds, parsing and checking it returns a value or an error, never a
        /// panic, and what parses survives the canonical text round trip.
        #[test]
        fn any_bytes_parse_or_fail_cleanly(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400)) {
            let text = String::from_utf8_lossy(&bytes);
            let env = |k: &str| (k.len() < 4).then(|| "1k".to_string());
            if let Ok(s) = parse_ini(&text, "fuzz", &env) {
                let _ = jobs_from_sections(&s);
                let back = from_text(&to_text(&s));
                proptest::prop_assert!(back.is_ok());
            }
        }

        #[test]
        fn job_like_lines_never_panic(
            lines in proptest::collection::vec(
                (proptest::sample::select(vec!["[a]", "[global]", "bs", "size", "rw", "iodepth", "numjobs", "runtime", "random_distribution", "rate_iops", "offset", "ioengine", "time_based", "verify"]),
                 "[a-z0-9:,.%$={}]{0,8}"),
                0..12),
        ) {
            let text: String = lines.iter().map(|(k, v)| if k.starts_with('[') { format!("{k}\n") } else { format!("{k}={v}\n") }).collect();
            if let Ok(s) = parse_ini(&text, "fuzz", &no_env) {
                let _ = jobs_from_sections(&s);
            }
        }
    }

    #[test]
    fn command_line_form_reads_as_sections() {
        let s = from_text("--direct=1 --name=a --rw=randread --time_based --runtime=1").unwrap();
        assert_eq!(s.len(), 2);
        assert!(s[0].is_global());
        assert_eq!(s[1].name, "a");
        let j = &jobs_from_sections(&s).unwrap()[0];
        assert!(j.direct && j.time_based);
    }

    #[test]
    fn file_names_follow_fio() {
        let s = parse_ini("[randr]\ndirectory=/d\n", "t", &no_env).unwrap();
        let j = &jobs_from_sections(&s).unwrap()[0];
        assert_eq!(j.file_path(1), std::path::PathBuf::from("/d/randr.1.0"));
    }

    #[test]
    fn zone_options_as_fio() {
        let one = |t: &str| {
            let text = format!("[j]\nioengine=null\nsize=16m\n{}\n", t.replace(' ', "\n"));
            jobs_from_sections(&from_text(&text).unwrap()).map(|mut v| v.remove(0))
        };
        let z = |t: &str| one(t).unwrap().zones;
        assert_eq!(z(""), None);
        assert_eq!(z("zonemode=none"), None);
        // zonerange defaults to zonesize (fio's backward compatibility).
        assert_eq!(
            z("zonemode=strided zonesize=1m zoneskip=3m"),
            Some(Zones {
                size: 1 << 20,
                range: 1 << 20,
                skip: 3 << 20
            })
        );
        assert_eq!(
            z("zonemode=strided zonesize=1m zonerange=4m").map(|z| z.range),
            Some(4 << 20)
        );
        // Several files open at once: fio turns the zones off.
        assert_eq!(z("zonemode=strided zonesize=1m nrfiles=2"), None);
        for (t, says) in [
            ("zonesize=1m", "zonesize needs zonemode=strided"),
            ("zonemode=strided", "needs a zonesize"),
            ("zonemode=zbd", "zonemode=zbd needs a zonesize"),
            ("zonemode=zbd zonesize=256", "at least 512 bytes"),
            (
                "zonemode=zbd zonesize=1m zonecapacity=2m",
                "zonecapacity 2097152 is larger than zone size 1048576",
            ),
            (
                "zonemode=zbd zonesize=1m job_max_open_zones=2",
                "cannot be used without a global open zones limit",
            ),
            (
                "zonemode=zbd zonesize=1m create_serialize=0",
                "create_serialize=0",
            ),
            ("zonemode=zbd zonesize=1m zoneskip=512k", "not a multiple"),
            ("zonemode=zbd zonesize=1m max_open_zones=4097", "0 to 4096"),
            (
                "zonemode=zbd zonesize=1m zone_reset_threshold=2",
                "from 0 to 1",
            ),
            (
                "zonemode=zbd zonesize=1m rw=randtrim bsrange=1m-2m ioengine=psync",
                "bsrange and bssplit are not allowed",
            ),
            (
                "zonemode=zbd zonesize=1m ioengine=null",
                "ioengine=null has none",
            ),
            ("zonemode=strided zonesize=1m zoneskip=2z", "zoneskip=2z"),
            (
                "zonemode=strided zonesize=1m nrfiles=2 openfiles=1",
                "openfiles=1",
            ),
            ("zonemode=strided zonesize=1m rw=trimwrite", "rw=trimwrite"),
        ] {
            let e = one(t).err().unwrap_or_else(|| panic!("{t}: accepted"));
            assert!(e.0.contains(says), "{t}: {}", e.0);
        }
        // zonemode=zbd counts a skip in zones (fio's `Nz`), the zonesize given after it.
        let j = one("zoneskip=2z zonemode=zbd zonesize=1m ioengine=psync").unwrap();
        assert_eq!(j.zbd.map(|z| z.skip), Some(2 << 20));
        // A [global] with zonemode and a job with the zonesize: fine.
        let text = "[global]\nzonemode=strided\nioengine=null\nsize=4m\n[j]\nzonesize=1m\n";
        let j = jobs_from_sections(&from_text(text).unwrap()).unwrap();
        assert!(j[0].zones.is_some());
    }

    /// An engine option in [global] after the global's own ioengine= stays valid for a job
    /// that picks another engine (fio parsed it there: e4defrag2.fio's donorname with its
    /// libaio jobs); written where no ioengine= of its own knows it, it is refused.
    #[test]
    fn a_global_engine_option_of_the_global_engine_is_kept() {
        let ok =
            "[global]\nioengine=e4defrag\ndonorname=d\nfilesize=1m\n[a]\n[b]\nioengine=libaio\n";
        let j = jobs_from_sections(&from_text(ok).unwrap()).unwrap();
        assert_eq!(j[0].eng.e4defrag.donor.as_deref(), Some("d"));
        assert_eq!(j[0].eng.e4defrag.file_size_high, 1 << 20);
        assert_eq!(j[1].engine, EngineKind::Libaio);
        for bad in [
            "[global]\ndonorname=d\n[a]\nioengine=libaio\n",
            "[a]\nioengine=libaio\ndonorname=d\n",
        ] {
            let e = jobs_from_sections(&from_text(bad).unwrap()).unwrap_err();
            assert!(
                e.0.contains("donorname is an option of ioengine=e4defrag"),
                "{e:?}"
            );
        }
        let e = jobs_from_sections(&from_text("[a]\nioengine=e4defrag\n").unwrap()).unwrap_err();
        assert!(e.0.contains("needs donorname="), "{e:?}");
    }
}
