//! `iozone`: IOzone's file tests (3.4xx) — write/rewrite, read/reread, random read/write,
//! backwards read, record rewrite, stride read, fwrite/fread, pwrite/pread, pwritev/preadv and
//! the random mix — in IOzone's single-stream mode (one file, a row per file size × record
//! size, `-a` sweeps the matrix) and its throughput mode (`-t N` children in lock-step, each
//! on its own file).
//!
//! One *child* is one loop worker (thread). For every (file size, record size) and every
//! phase of the selected tests, all children open their file, meet at a gate, are released
//! together, and each times its own pass from its release to its last record (plus `fsync`
//! with `-e` and `close` with `-c`). One event is one I/O call (one record; one vector of up
//! to [`PVECMAX`] records for the vectored tests), claimed from and recorded with the runner,
//! so `--time`, `--events` and Ctrl-C end the run between calls and the per-call latency
//! histogram comes for free.
//!
//! IOzone's arithmetic, kept exactly (kB = 1024 bytes):
//! - a child's throughput = kB it moved before the stonewall / its own elapsed seconds until
//!   then; "children see" = Σ of those, min/max/avg over children;
//! - "parent sees" = Σ kB moved before the stonewall / seconds from the release to the last
//!   child's end;
//! - stonewalling (on unless `-x`): the first child to finish raises a flag; the others note
//!   their bytes and time at their next record. Phases that create the file (initial write,
//!   fwrite, pwrite, pwritev) go on to the end of the file, so the next phase reads a whole
//!   file; the others stop at once. "Min xfer" is the least any child moved before the flag.
//!
//! Where IOzone miscounts we do not: its "Min throughput" skips children that measured 0 (the
//! `if (!min) min = x` idiom), which makes min = max with avg at half; here min is the real
//! minimum. See docs/iozone.md.
//!
//! Safety (through the shared helpers of [`crate::disk::files`]): files are created in setup
//! with `O_EXCL` and recorded in their directory's manifest; a file that already exists is
//! used only when the manifest says hostbench created it (same inode), and only such files
//! are removed when the instance is dropped (unless `keep`). Setup checks free space and,
//! with `direct`, that the filesystem accepts `O_DIRECT`, naming it when it does not.

use crate::disk::files;
use hostbench_core::params::{ParamKind, ParamSpec, Params};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counter;
use hostbench_core::result::{Better, Column, Figure, Row, RunResult, Table, Warning, WarningKind};
use hostbench_core::runner::RunControl;
use hostbench_core::workload::*;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// IOzone's file tests.
pub struct Iozone;

/// Records per vectored call (IOzone's `PVECMAX`).
pub const PVECMAX: usize = 16;
/// IOzone's automatic mode skips records below 64 kB once the file exceeds this many bytes
/// (`CROSSOVER`, 16 MB in the 3.4xx source), unless `all_records` (`-z`).
pub const CROSSOVER: u64 = 16 << 20;
/// Smallest record IOzone keeps above the crossover.
pub const CROSSOVER_MIN_RECORD: u64 = 64 << 10;

const ALL_TESTS: &str = "0,1,2,3,4,5,6,7,8,9,10,11,12";

const PARAMS: &[ParamSpec] = &[
    spec(
        "tests",
        ParamKind::Text,
        ALL_TESTS,
        "",
        "IOzone test numbers to run, comma-separated (-i); 0 (write) must be among them",
    ),
    spec(
        "file_size",
        ParamKind::Size,
        "512K",
        "B",
        "file size per child (-s); ignored with auto",
    ),
    spec(
        "record_size",
        ParamKind::Size,
        "4K",
        "B",
        "record size: bytes per I/O call (-r); ignored with auto",
    ),
    spec(
        "auto",
        ParamKind::Bool,
        "off",
        "",
        "automatic mode (-a): every file size × record size of the ranges below, doubling",
    ),
    spec(
        "min_file_size",
        ParamKind::Size,
        "64K",
        "B",
        "smallest file size in auto mode (-n)",
    ),
    spec(
        "max_file_size",
        ParamKind::Size,
        "512M",
        "B",
        "largest file size in auto mode (-g)",
    ),
    spec(
        "min_record_size",
        ParamKind::Size,
        "4K",
        "B",
        "smallest record size in auto mode (-y)",
    ),
    spec(
        "max_record_size",
        ParamKind::Size,
        "16M",
        "B",
        "largest record size in auto mode (-q)",
    ),
    spec(
        "all_records",
        ParamKind::Bool,
        "off",
        "",
        "auto mode: keep records below 64 kB for files above 16 MB (-z)",
    ),
    spec(
        "throughput",
        ParamKind::Bool,
        "off",
        "",
        "throughput mode (-t): one child per thread, each on its own file, in lock-step",
    ),
    spec(
        "dir",
        ParamKind::Text,
        ".",
        "",
        "directory of the default file names (iozone.tmp; iozone.DUMMY.N in throughput mode)",
    ),
    spec(
        "files",
        ParamKind::Text,
        "",
        "",
        "file names, comma-separated, one per child (-f, -F); empty = the default names",
    ),
    spec(
        "direct",
        ParamKind::Bool,
        "off",
        "",
        "O_DIRECT: bypass the page cache (-I)",
    ),
    spec("o_sync", ParamKind::Bool, "off", "", "O_SYNC writes (-o)"),
    spec(
        "flush",
        ParamKind::Bool,
        "off",
        "",
        "include fsync (stdio: fflush + fsync) in the timing (-e)",
    ),
    spec(
        "close",
        ParamKind::Bool,
        "off",
        "",
        "include close() in the timing (-c)",
    ),
    spec(
        "purge",
        ParamKind::Bool,
        "off",
        "",
        "evict the record buffer from the CPU cache before every I/O call (-p)",
    ),
    spec(
        "cache_size",
        ParamKind::Size,
        "1M",
        "B",
        "processor cache size the purge buffer covers (-S)",
    ),
    spec(
        "cache_line",
        ParamKind::Size,
        "32",
        "B",
        "processor cache line size the purge steps by (-L)",
    ),
    spec(
        "keep",
        ParamKind::Bool,
        "off",
        "",
        "keep the files at the end (-w)",
    ),
    spec(
        "pthreads",
        ParamKind::Bool,
        "off",
        "",
        "IOzone's -T (children as POSIX threads): hostbench's children are always threads; \
         this only makes the report say \"thread\" where IOzone's -T runs do (else \"process\")",
    ),
    spec(
        "no_retest",
        ParamKind::Bool,
        "off",
        "",
        "skip the re- passes: rewrite, reread, refwrite, ... (-+n)",
    ),
    spec(
        "stonewall",
        ParamKind::Bool,
        "on",
        "",
        "throughput mode: when the first child finishes, the others stop counting (off: -x)",
    ),
    spec(
        "stride",
        ParamKind::Int {
            min: 1,
            max: 1 << 30,
        },
        "17",
        "records",
        "stride read: distance between records read (-j)",
    ),
    spec(
        "mix_read_percent",
        ParamKind::Int { min: -1, max: 100 },
        "-1",
        "%",
        "random mix: percent of children that read (-+p); -1 = even children read, odd write",
    ),
];

const fn spec(
    name: &'static str,
    kind: ParamKind,
    default: &'static str,
    unit: &'static str,
    help: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind,
        default,
        unit,
        help,
        sysbench: None,
    }
}

/// One timed pass of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Test 0: write a new file.
    Write,
    /// Test 0: write it again.
    Rewrite,
    /// Test 1: read it.
    Read,
    /// Test 1: read it again.
    Reread,
    /// Test 2: every record once, in a shuffled order, read.
    RandomRead,
    /// Test 2: the same, written.
    RandomWrite,
    /// Test 3: from the last record to the first.
    BackwardRead,
    /// Test 4: the same record, written over and over.
    RecordRewrite,
    /// Test 5: records `stride` apart, wrapping, every record once.
    StrideRead,
    /// Test 6: `fwrite` a new file.
    Fwrite,
    /// Test 6: `fwrite` it again.
    Frewrite,
    /// Test 7: `fread` it.
    Fread,
    /// Test 7: `fread` it again.
    Freread,
    /// Test 8 (throughput mode): children randomly read or write.
    Mix,
    /// Test 9: `pwrite` a new file.
    Pwrite,
    /// Test 9: `pwrite` it again.
    Repwrite,
    /// Test 10: `pread` it.
    Pread,
    /// Test 10: `pread` it again.
    Repread,
    /// Test 11: `pwritev` a new file.
    Pwritev,
    /// Test 11: `pwritev` it again.
    Repwritev,
    /// Test 12: `preadv` it.
    Preadv,
    /// Test 12: `preadv` it again.
    Repreadv,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Seq,
    Random,
    Backward,
    Same,
    Stride,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    /// `lseek` + `read`/`write`, as IOzone's plain tests.
    Sys,
    /// Buffered stdio (`fread`/`fwrite`) with a record-sized buffer.
    Stdio,
    /// `pread`/`pwrite`.
    Pos,
    /// `preadv`/`pwritev`.
    Vec,
}

impl Phase {
    /// Single-stream column order (IOzone's table, then its pwrite/pread columns).
    pub const COLUMNS: [Phase; 21] = [
        Phase::Write,
        Phase::Rewrite,
        Phase::Read,
        Phase::Reread,
        Phase::RandomRead,
        Phase::RandomWrite,
        Phase::BackwardRead,
        Phase::RecordRewrite,
        Phase::StrideRead,
        Phase::Fwrite,
        Phase::Frewrite,
        Phase::Fread,
        Phase::Freread,
        Phase::Pwrite,
        Phase::Repwrite,
        Phase::Pread,
        Phase::Repread,
        Phase::Pwritev,
        Phase::Repwritev,
        Phase::Preadv,
        Phase::Repreadv,
    ];

    /// Throughput-mode order: IOzone's, then the tests IOzone has no throughput pass for
    /// (record rewrite, pwritev, preadv) as hostbench additions.
    pub const THROUGHPUT_ORDER: [Phase; 16] = [
        Phase::Write,
        Phase::Rewrite,
        Phase::Read,
        Phase::Reread,
        Phase::BackwardRead,
        Phase::StrideRead,
        Phase::RandomRead,
        Phase::Mix,
        Phase::RandomWrite,
        Phase::Pwrite,
        Phase::Pread,
        Phase::Fwrite,
        Phase::Fread,
        Phase::RecordRewrite,
        Phase::Pwritev,
        Phase::Preadv,
    ];

    /// The IOzone test number (`-i`).
    pub fn test(self) -> u32 {
        use Phase::*;
        match self {
            Write | Rewrite => 0,
            Read | Reread => 1,
            RandomRead | RandomWrite => 2,
            BackwardRead => 3,
            RecordRewrite => 4,
            StrideRead => 5,
            Fwrite | Frewrite => 6,
            Fread | Freread => 7,
            Mix => 8,
            Pwrite | Repwrite => 9,
            Pread | Repread => 10,
            Pwritev | Repwritev => 11,
            Preadv | Repreadv => 12,
        }
    }

    /// Column name in results (snake_case).
    pub fn column(self) -> &'static str {
        use Phase::*;
        match self {
            Write => "write",
            Rewrite => "rewrite",
            Read => "read",
            Reread => "reread",
            RandomRead => "random_read",
            RandomWrite => "random_write",
            BackwardRead => "bkwd_read",
            RecordRewrite => "record_rewrite",
            StrideRead => "stride_read",
            Fwrite => "fwrite",
            Frewrite => "frewrite",
            Fread => "fread",
            Freread => "freread",
            Mix => "mixed",
            Pwrite => "pwrite",
            Repwrite => "repwrite",
            Pread => "pread",
            Repread => "repread",
            Pwritev => "pwritev",
            Repwritev => "repwritev",
            Preadv => "preadv",
            Repreadv => "repreadv",
        }
    }

    /// The words of IOzone's "Children see throughput for N `<label>`" line.
    pub fn throughput_label(self) -> &'static str {
        use Phase::*;
        match self {
            Write => "initial writers",
            Rewrite => "rewriters",
            Read => "readers",
            Reread => "re-readers",
            RandomRead => "random readers",
            RandomWrite => "random writers",
            BackwardRead => "reverse readers",
            RecordRewrite => "record rewriters",
            StrideRead => "stride readers",
            Fwrite => "fwriters",
            Frewrite => "re-fwriters",
            Fread => "freaders",
            Freread => "re-freaders",
            Mix => "mixed workload",
            Pwrite => "pwrite writers",
            Repwrite => "re-pwrite writers",
            Pread => "pread readers",
            Repread => "re-pread readers",
            Pwritev => "pwritev writers",
            Repwritev => "re-pwritev writers",
            Preadv => "preadv readers",
            Repreadv => "re-preadv readers",
        }
    }

    /// The phase whose throughput label is `label`.
    pub fn from_label(label: &str) -> Option<Phase> {
        Phase::COLUMNS
            .iter()
            .chain([Phase::Mix].iter())
            .copied()
            .find(|p| p.throughput_label() == label)
    }

    /// A second pass over an existing file (dropped by `no_retest`).
    pub fn is_retest(self) -> bool {
        use Phase::*;
        matches!(
            self,
            Rewrite | Reread | Frewrite | Freread | Repwrite | Repread | Repwritev | Repreadv
        )
    }

    /// Lays the file out anew (truncates it) and must reach its end even after the stonewall.
    pub fn creates(self) -> bool {
        matches!(
            self,
            Phase::Write | Phase::Fwrite | Phase::Pwrite | Phase::Pwritev
        )
    }

    fn writes(self) -> bool {
        use Phase::*;
        matches!(
            self,
            Write
                | Rewrite
                | RandomWrite
                | RecordRewrite
                | Fwrite
                | Frewrite
                | Pwrite
                | Repwrite
                | Pwritev
                | Repwritev
        )
    }

    fn access(self) -> Access {
        use Phase::*;
        match self {
            RandomRead | RandomWrite | Mix => Access::Random,
            BackwardRead => Access::Backward,
            RecordRewrite => Access::Same,
            StrideRead => Access::Stride,
            _ => Access::Seq,
        }
    }

    fn api(self) -> Api {
        use Phase::*;
        match self {
            Fwrite | Frewrite | Fread | Freread => Api::Stdio,
            Pwrite | Repwrite | Pread | Repread => Api::Pos,
            Pwritev | Repwritev | Preadv | Repreadv => Api::Vec,
            _ => Api::Sys,
        }
    }
}

/// The phases a test number runs, in order.
pub fn phases_of(test: u32) -> &'static [Phase] {
    use Phase::*;
    match test {
        0 => &[Write, Rewrite],
        1 => &[Read, Reread],
        2 => &[RandomRead, RandomWrite],
        3 => &[BackwardRead],
        4 => &[RecordRewrite],
        5 => &[StrideRead],
        6 => &[Fwrite, Frewrite],
        7 => &[Fread, Freread],
        8 => &[Mix],
        9 => &[Pwrite, Repwrite],
        10 => &[Pread, Repread],
        11 => &[Pwritev, Repwritev],
        12 => &[Preadv, Repreadv],
        _ => &[],
    }
}

/// Parses the `tests` parameter: test numbers 0..=12, comma-separated.
pub fn parse_tests(text: &str) -> Result<Vec<u32>, WorkloadError> {
    let mut out = Vec::new();
    for t in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match t.parse::<u32>() {
            Ok(n) if n <= 12 => {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
            _ => {
                return Err(WorkloadError(format!(
                    "test '{t}' is not an IOzone test number (0 to 12: 0 write, 1 read, 2 random, \
                     3 backwards, 4 record rewrite, 5 stride, 6 fwrite, 7 fread, 8 mix, \
                     9 pwrite, 10 pread, 11 pwritev, 12 preadv)"
                )));
            }
        }
    }
    if out.is_empty() {
        return Err(WorkloadError("no IOzone test selected".into()));
    }
    if !out.contains(&0) {
        return Err(WorkloadError(
            "test 0 (write/rewrite) must be selected: the other tests use the file it writes \
             (IOzone: -i 0 -i <n>)"
                .into(),
        ));
    }
    out.sort_unstable();
    Ok(out)
}

/// The phases of one (file size, record size) step, in the order they run.
pub fn plan_phases(tests: &[u32], throughput: bool, no_retest: bool) -> Vec<Phase> {
    let keep = |p: &Phase| tests.contains(&p.test()) && !(no_retest && p.is_retest());
    if throughput {
        // IOzone's throughput passes have no second fwrite/fread/pwrite/pread pass.
        Phase::THROUGHPUT_ORDER
            .iter()
            .copied()
            .filter(keep)
            .collect()
    } else {
        // Test 8 does nothing in single-stream mode (IOzone prints no column for it).
        tests
            .iter()
            .flat_map(|&t| phases_of(t).iter().copied())
            .filter(|p| *p != Phase::Mix)
            .filter(keep)
            .collect()
    }
}

/// The (file size, record size) steps, in bytes: one, or IOzone's automatic matrix.
pub fn matrix(p: &Params) -> Result<Vec<(u64, u64)>, WorkloadError> {
    if !p.bool("auto") {
        let f = p.int("file_size").max(0) as u64;
        let r = p.int("record_size").max(0) as u64;
        return Ok(vec![(f, r)]);
    }
    let (fmin, fmax) = (
        p.int("min_file_size").max(0) as u64,
        p.int("max_file_size").max(0) as u64,
    );
    let (rmin, rmax) = (
        p.int("min_record_size").max(0) as u64,
        p.int("max_record_size").max(0) as u64,
    );
    if fmin == 0 || rmin == 0 || fmin > fmax || rmin > rmax {
        return Err(WorkloadError(format!(
            "auto mode needs 0 < min file size ({fmin} B) <= max file size ({fmax} B) and \
             0 < min record size ({rmin} B) <= max record size ({rmax} B)"
        )));
    }
    let all = p.bool("all_records");
    let mut out = Vec::new();
    let mut f = fmin;
    while f <= fmax {
        let mut r = rmin;
        while r <= rmax && r <= f {
            if all || f <= CROSSOVER || r >= CROSSOVER_MIN_RECORD {
                out.push((f, r));
            }
            r *= 2;
        }
        f *= 2;
    }
    Ok(out)
}

/// The record visited at step `i` of `n` for `access` (random uses `perm`).
#[inline]
fn record_at(access: Access, i: u64, n: u64, stride: u64, perm: &[u32]) -> u64 {
    match access {
        Access::Seq => i,
        Access::Random => u64::from(perm[i as usize]),
        Access::Backward => n - 1 - i,
        Access::Same => 0,
        Access::Stride => stride_record(i, n, stride),
    }
}

/// Stride read: starting at record 0, jump `stride` records; past the end, start again one
/// record after the previous starting point. Every record is read exactly once.
pub fn stride_record(i: u64, n: u64, stride: u64) -> u64 {
    // Lane s holds records s, s+stride, ...: ceil((n - s) / stride) of them.
    let stride = stride.max(1);
    let full = n / stride;
    let rem = n % stride;
    // The first `rem` lanes have full+1 records, the rest `full`.
    let big = rem * (full + 1);
    let (lane, k) = if i < big {
        (i / (full + 1), i % (full + 1))
    } else {
        let j = i - big;
        match j.checked_div(full) {
            Some(q) => (rem + q, j % full),
            None => (i, 0),
        }
    };
    lane + k * stride
}

/// A uniformly shuffled permutation of `0..n` (Fisher–Yates), seeded so runs repeat.
pub fn permutation(n: u64, rng: &mut Rng) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).collect();
    for i in (1..v.len()).rev() {
        let j = rng.uniform(0, i as u64) as usize;
        v.swap(i, j.min(i));
    }
    v
}

/// Children meet here before and after every phase. The last to arrive runs a closure (reset
/// the stonewall; aggregate the phase) and notes the release time. A child that leaves the
/// run (limit, Ctrl-C, error) breaks the gate so no one waits for it forever.
struct Gate {
    n: usize,
    st: Mutex<GateState>,
    cv: Condvar,
}

#[derive(Default)]
struct GateState {
    arrived: usize,
    generation: u64,
    broken: bool,
    release: u64,
}

impl Gate {
    fn wait(&self, now: impl Fn() -> u64, on_release: impl FnOnce()) -> Option<u64> {
        let mut g = self.st.lock().unwrap_or_else(|p| p.into_inner());
        if g.broken {
            return None;
        }
        g.arrived += 1;
        if g.arrived == self.n {
            on_release();
            g.arrived = 0;
            g.generation += 1;
            g.release = now();
            self.cv.notify_all();
            return Some(g.release);
        }
        let generation = g.generation;
        loop {
            g = self
                .cv
                .wait_timeout(g, Duration::from_millis(50))
                .unwrap_or_else(|p| p.into_inner())
                .0;
            if g.generation != generation {
                return Some(g.release);
            }
            if g.broken {
                return None;
            }
        }
    }

    fn break_all(&self) {
        let mut g = self.st.lock().unwrap_or_else(|p| p.into_inner());
        g.broken = true;
        self.cv.notify_all();
    }
}

/// What one child did in one phase.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChildStat {
    /// Bytes moved before the stonewall (all of them without one).
    pub bytes: u64,
    /// Seconds from the child's release to the stonewall or its end.
    pub time_s: f64,
    /// Clock ticks at the child's end (parent time).
    end: u64,
    /// The child read (the random mix assigns readers and writers).
    pub reader: bool,
}

/// One phase of one (file size, record size) step, aggregated IOzone's way.
#[derive(Debug, Clone)]
pub struct PhaseResult {
    /// File size, bytes.
    pub file_size: u64,
    /// Record size, bytes.
    pub record_size: u64,
    /// The phase.
    pub phase: Phase,
    /// Each child's figures.
    pub children: Vec<ChildStat>,
    /// Seconds from the release to the last child's end.
    pub parent_s: f64,
}

impl PhaseResult {
    fn kb_per_s(c: &ChildStat) -> f64 {
        if c.time_s > 0.0 {
            c.bytes as f64 / 1024.0 / c.time_s
        } else {
            0.0
        }
    }
    /// Σ of the children's own rates, kB/s.
    pub fn children_kb_s(&self) -> f64 {
        self.children.iter().map(Self::kb_per_s).sum()
    }
    /// Σ kB / parent seconds.
    pub fn parent_kb_s(&self) -> f64 {
        let kb: f64 = self.children.iter().map(|c| c.bytes as f64 / 1024.0).sum();
        if self.parent_s > 0.0 {
            kb / self.parent_s
        } else {
            0.0
        }
    }
    fn min_max(&self) -> (f64, f64) {
        self.children
            .iter()
            .map(Self::kb_per_s)
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    }
    /// The least any child moved, kB.
    pub fn min_xfer_kb(&self) -> f64 {
        self.children
            .iter()
            .map(|c| c.bytes as f64 / 1024.0)
            .fold(f64::INFINITY, f64::min)
    }
}

/// The test files and, per directory, the shared manifest that records which of them
/// hostbench created ([`files::Manifest`], tag `iozone`).
struct Files {
    paths: Vec<PathBuf>,
    manifests: Mutex<Vec<files::Manifest>>,
    created: usize,
    keep: bool,
}

impl Drop for Files {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        let mut ms = self.manifests.lock().unwrap_or_else(|p| p.into_inner());
        for m in ms.iter_mut() {
            let names: Vec<String> = self
                .paths
                .iter()
                .filter(|p| parent_dir(p) == m_dir(m))
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            // Only files the manifest says hostbench created, and provably the same file.
            if let Ok(r) = m.remove_owned(Some(&names)) {
                for n in r.unproven {
                    eprintln!(
                        "hostbench iozone: not removing {}: hostbench cannot prove it is the \
                         file it created (no birth time or extended attribute on this \
                         filesystem, and the file changed since); remove it yourself if it is \
                         a test file",
                        m_dir(m).join(n).display()
                    );
                }
            }
        }
    }
}

fn m_dir(m: &files::Manifest) -> PathBuf {
    parent_dir(&m.path())
}

/// The manifest tag of IOzone's files.
pub const MANIFEST_TAG: &str = "iozone";

fn mem_total() -> Option<u64> {
    let t = std::fs::read_to_string("/proc/meminfo").ok()?;
    let l = t.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = l.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

struct Config {
    steps: Vec<(u64, u64)>,
    phases: Vec<Phase>,
    throughput: bool,
    children: usize,
    direct: bool,
    o_sync: bool,
    flush: bool,
    close: bool,
    purge: Option<(usize, usize)>,
    stonewall: bool,
    stride: u64,
    mix_read_percent: i64,
    tests: Vec<u32>,
}

impl Config {
    fn reader_in_mix(&self, tid: usize) -> bool {
        if self.mix_read_percent < 0 {
            tid.is_multiple_of(2)
        } else {
            // The first P% of the children read.
            (tid as f64) < self.children as f64 * self.mix_read_percent as f64 / 100.0
        }
    }
}

struct Shared {
    cfg: Config,
    files: Files,
    gate: Gate,
    stop: AtomicBool,
    slots: Vec<Mutex<ChildStat>>,
    results: Mutex<Vec<PhaseResult>>,
    /// Set when a child left early (limit, Ctrl-C, error): results stop at the last whole phase.
    cut: AtomicBool,
    mem_total: Option<u64>,
    /// Warnings known at setup (page cache, nearly full filesystem).
    setup_warnings: Vec<Warning>,
    /// Tests: this child sleeps before every call, so the others finish first.
    #[cfg(test)]
    slow: Option<usize>,
    /// Tests: this child waits after the release until the others have finished their pass.
    #[cfg(test)]
    late: Option<usize>,
}

struct Child {
    s: Arc<Shared>,
    tid: usize,
    rng: Rng,
}

/// Ends the gate if the child leaves by any path, so no other child waits for it.
struct LeaveGuard<'a>(&'a Shared, bool);
impl Drop for LeaveGuard<'_> {
    fn drop(&mut self) {
        if !self.1 {
            self.0.cut.store(true, Release);
            self.0.stop.store(true, Release);
            self.0.gate.break_all();
        }
    }
}

/// The open file of one phase.
enum Handle {
    Raw(File),
    W(BufWriter<File>),
    R(BufReader<File>),
}

impl Handle {
    fn file(&self) -> &File {
        match self {
            Handle::Raw(f) => f,
            Handle::W(w) => w.get_ref(),
            Handle::R(r) => r.get_ref(),
        }
    }
}

fn io_err(path: &Path, what: &str, e: std::io::Error) -> WorkloadError {
    WorkloadError(format!("{what} {}: {e}", path.display()))
}

impl Child {
    fn open(&self, phase: Phase, path: &Path, rec: usize) -> Result<Handle, WorkloadError> {
        let cfg = &self.s.cfg;
        // Never through a symlink planted at the name after setup checked it.
        let mut flags = libc::O_NOFOLLOW;
        if cfg.direct {
            flags |= libc::O_DIRECT;
        }
        // IOzone opens its fwrite/fread tests with plain fopen: -o's O_SYNC is not theirs.
        if cfg.o_sync && phase.api() != Api::Stdio {
            flags |= libc::O_SYNC;
        }
        let writes = phase.writes() || (phase == Phase::Mix && !cfg.reader_in_mix(self.tid));
        let mut o = std::fs::OpenOptions::new();
        o.custom_flags(flags);
        if writes {
            o.write(true);
            if phase.creates() {
                o.truncate(true);
            }
        } else {
            o.read(true);
        }
        let f = o
            .open(path)
            .map_err(|e| io_err(path, "could not open", e))?;
        Ok(match phase.api() {
            Api::Stdio if writes => Handle::W(BufWriter::with_capacity(rec, f)),
            Api::Stdio => Handle::R(BufReader::with_capacity(rec, f)),
            _ => Handle::Raw(f),
        })
    }

    /// Runs one phase for this child. `Ok(false)` when the runner ended the run.
    #[allow(clippy::too_many_arguments)]
    fn phase(
        &mut self,
        ctl: &mut RunControl<'_>,
        phase: Phase,
        fsize: u64,
        rec: u64,
        buf: &mut files::AlignedBuf,
        purge: &mut [u8],
    ) -> Result<bool, WorkloadError> {
        let s = Arc::clone(&self.s);
        let cfg = &s.cfg;
        let path = s.files.paths[self.tid].clone();
        let n = fsize / rec;
        let reader = match phase {
            Phase::Mix => cfg.reader_in_mix(self.tid),
            p => !p.writes(),
        };
        let access = phase.access();
        let perm = if access == Access::Random {
            permutation(n, &mut self.rng)
        } else {
            Vec::new()
        };
        let per_call = if phase.api() == Api::Vec {
            PVECMAX as u64
        } else {
            1
        };
        let mut h = self.open(phase, &path, rec as usize)?;
        let fd = h.file().as_raw_fd();
        let clock = ctl.clock();
        let Some(release) = s.gate.wait(|| clock.now(), || s.stop.store(false, Release)) else {
            return Ok(false);
        };
        #[cfg(test)]
        if s.late == Some(self.tid) {
            // Until another child has raised the stonewall flag (bounded, so a change that
            // breaks the flag fails the test instead of hanging it).
            let until = std::time::Instant::now() + Duration::from_secs(10);
            while !s.stop.load(Acquire) && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let start = clock.now();
        // The stonewall stops a child after its first record, never before: on a busy
        // machine a small file's pass can end before another child is even scheduled, and
        // stopping that one at once reported 0 kB for it ("Min xfer 0") and one child's rate
        // as the children's throughput.
        let mut done: u64 = 0;
        let mut stopped: Option<ChildStat> = None;
        let mut i = 0u64;
        let rlen = rec as usize;
        while i < n {
            if cfg.stonewall && i > 0 && stopped.is_none() && s.stop.load(Relaxed) {
                if !phase.creates() {
                    break;
                }
                if cfg.flush {
                    sync(&mut h, &path)?;
                }
                let t = clock.now();
                stopped = Some(ChildStat {
                    bytes: done,
                    time_s: clock.to_ns(t - start) as f64 / 1e9,
                    end: t,
                    reader,
                });
            }
            let now = clock.now();
            let Some(intended) = ctl.next_op(now) else {
                return Ok(false);
            };
            if let Some((size, line)) = cfg.purge {
                // IOzone's purge: read one byte per cache line of a record-sized stretch of
                // the purge buffer that maps to the same cache sets as the I/O buffer (its
                // address modulo the cache size), evicting the record from the CPU cache.
                let mut acc = 0u8;
                let mut k = buf.as_ptr() as usize % size;
                let end = k + rlen.min(size);
                while k < end {
                    acc = acc.wrapping_add(purge[k]);
                    k += line;
                }
                std::hint::black_box(acc);
            }
            #[cfg(test)]
            if s.slow == Some(self.tid) {
                std::thread::sleep(Duration::from_millis(2));
            }
            let calls = per_call.min(n - i);
            let bytes = calls * rec;
            let r = record_at(access, i, n, cfg.stride, &perm);
            let off = (r * rec) as libc::off_t;
            let p = buf.as_mut_ptr();
            let res: std::io::Result<()> = match (&mut h, phase.api()) {
                (Handle::W(w), _) => w.write_all(&buf[..rlen]),
                (Handle::R(rd), _) => rd.read_exact(&mut buf[..rlen]),
                (Handle::Raw(_), Api::Sys) => {
                    let seq = access == Access::Seq;
                    // Sequential passes move the file offset by themselves, as IOzone's do.
                    // SAFETY: valid fd.
                    if !seq && unsafe { libc::lseek(fd, off, libc::SEEK_SET) } < 0 {
                        Err(std::io::Error::last_os_error())
                    } else if reader {
                        // SAFETY: buffer of at least rlen bytes.
                        full(unsafe { libc::read(fd, p.cast(), rlen) }, rlen)
                    } else {
                        // SAFETY: as above.
                        full(unsafe { libc::write(fd, p.cast(), rlen) }, rlen)
                    }
                }
                (Handle::Raw(_), Api::Pos) => {
                    if reader {
                        // SAFETY: buffer of at least rlen bytes.
                        full(unsafe { libc::pread(fd, p.cast(), rlen, off) }, rlen)
                    } else {
                        // SAFETY: as above.
                        full(unsafe { libc::pwrite(fd, p.cast(), rlen, off) }, rlen)
                    }
                }
                (Handle::Raw(_), _) => {
                    let mut iov = [libc::iovec {
                        iov_base: std::ptr::null_mut(),
                        iov_len: 0,
                    }; PVECMAX];
                    for (k, v) in iov.iter_mut().enumerate().take(calls as usize) {
                        // SAFETY: the buffer holds PVECMAX records.
                        v.iov_base = unsafe { p.add(k * rlen) }.cast();
                        v.iov_len = rlen;
                    }
                    let total = calls as usize * rlen;
                    if reader {
                        // SAFETY: iovecs point into the buffer.
                        full(
                            unsafe { libc::preadv(fd, iov.as_ptr(), calls as i32, off) },
                            total,
                        )
                    } else {
                        // SAFETY: as above.
                        full(
                            unsafe { libc::pwritev(fd, iov.as_ptr(), calls as i32, off) },
                            total,
                        )
                    }
                }
            };
            res.map_err(|e| io_err(&path, if reader { "read from" } else { "write to" }, e))?;
            let t = clock.now();
            ctl.record(intended, t);
            let c = ctl.counters();
            if reader {
                c.add(Counter::Reads, 1);
                c.add(Counter::BytesRead, bytes);
            } else {
                c.add(Counter::Writes, 1);
                c.add(Counter::BytesWritten, bytes);
            }
            done += bytes;
            i += calls;
        }
        if cfg.flush && !reader {
            sync(&mut h, &path)?;
            ctl.counters().add(Counter::Other, 1);
        }
        if let Handle::W(w) = &mut h {
            w.flush().map_err(|e| io_err(&path, "could not flush", e))?;
        }
        let end_open = clock.now();
        let end = if cfg.close {
            drop(h);
            clock.now()
        } else {
            end_open
        };
        if cfg.stonewall && i >= n {
            s.stop.store(true, Release);
        }
        let mine = stopped.unwrap_or(ChildStat {
            bytes: done,
            time_s: clock.to_ns(end - start) as f64 / 1e9,
            end,
            reader,
        });
        let mine = ChildStat { end, ..mine };
        *s.slots[self.tid].lock().unwrap_or_else(|p| p.into_inner()) = mine;
        let agg = || {
            let children: Vec<ChildStat> = s
                .slots
                .iter()
                .map(|m| *m.lock().unwrap_or_else(|p| p.into_inner()))
                .collect();
            let last = children.iter().map(|c| c.end).max().unwrap_or(start);
            let parent_s = clock.to_ns(last.saturating_sub(release)) as f64 / 1e9;
            s.results
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(PhaseResult {
                    file_size: fsize,
                    record_size: rec,
                    phase,
                    children,
                    parent_s,
                });
        };
        Ok(s.gate.wait(|| clock.now(), agg).is_some())
    }
}

fn sync(h: &mut Handle, path: &Path) -> Result<(), WorkloadError> {
    if let Handle::W(w) = h {
        w.flush().map_err(|e| io_err(path, "could not flush", e))?;
    }
    h.file()
        .sync_all()
        .map_err(|e| io_err(path, "could not fsync", e))
}

#[inline]
fn full(r: isize, want: usize) -> std::io::Result<()> {
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else if r as usize != want {
        Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("short transfer: {r} of {want} bytes"),
        ))
    } else {
        Ok(())
    }
}

impl LoopWorker for Child {
    fn run(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        let s = Arc::clone(&self.s);
        let mut guard = LeaveGuard(&s, false);
        let max_rec = s.cfg.steps.iter().map(|&(_, r)| r).max().unwrap_or(4096) as usize;
        let len = max_rec * PVECMAX;
        let mut buf = files::AlignedBuf::try_new(len).ok_or_else(|| {
            WorkloadError(format!(
                "could not allocate an I/O buffer of {len} B; use a smaller record size"
            ))
        })?;
        // IOzone's kind of non-zero pattern.
        buf.fill(0xA5);
        let mut purge = vec![0x5Au8; s.cfg.purge.map_or(0, |(n, _)| 2 * n)];
        for &(fsize, rec) in &s.cfg.steps {
            for &phase in &s.cfg.phases {
                if !self.phase(ctl, phase, fsize, rec, &mut buf, &mut purge)? {
                    return Ok(());
                }
            }
        }
        guard.1 = true;
        Ok(())
    }
}

struct IozoneInstance(Arc<Shared>);

/// Names of the result tables.
pub const TABLE_SINGLE: &str = "iozone";
/// Throughput-mode table.
pub const TABLE_THROUGHPUT: &str = "iozone_throughput";

/// Columns of the throughput table.
pub const THROUGHPUT_COLUMNS: [(&str, &str); 9] = [
    ("file_kb", "kB"),
    ("reclen_kb", "kB"),
    ("children", ""),
    ("children_kb_per_s", "kB/s"),
    ("parent_kb_per_s", "kB/s"),
    ("min_kb_per_s", "kB/s"),
    ("max_kb_per_s", "kB/s"),
    ("avg_kb_per_s", "kB/s"),
    ("min_xfer_kb", "kB"),
];

impl IozoneInstance {
    fn single_table(&self, results: &[PhaseResult]) -> Table {
        let mut cols = vec![
            Column {
                name: "file_kb".into(),
                unit: "kB".into(),
            },
            Column {
                name: "reclen_kb".into(),
                unit: "kB".into(),
            },
        ];
        cols.extend(Phase::COLUMNS.iter().map(|p| Column {
            name: p.column().into(),
            unit: "kB/s".into(),
        }));
        let mut rows: Vec<Row> = Vec::new();
        let mut keys: Vec<(u64, u64)> = Vec::new();
        for r in results {
            let key = (r.file_size, r.record_size);
            let idx = match keys.iter().position(|k| *k == key) {
                Some(i) => i,
                None => {
                    keys.push(key);
                    let mut values = vec![None; 2 + Phase::COLUMNS.len()];
                    values[0] = Some((r.file_size / 1024) as f64);
                    values[1] = Some((r.record_size / 1024) as f64);
                    rows.push(Row {
                        label: format!("{}/{}", r.file_size / 1024, r.record_size / 1024),
                        values,
                    });
                    rows.len() - 1
                }
            };
            if let Some(c) = Phase::COLUMNS.iter().position(|p| *p == r.phase) {
                rows[idx].values[2 + c] = Some(r.children_kb_s());
            }
        }
        // Keep the size columns and the passes that ran.
        let keep: Vec<bool> = (0..cols.len())
            .map(|c| c < 2 || rows.iter().any(|r| r.values[c].is_some()))
            .collect();
        let cols = cols
            .into_iter()
            .zip(&keep)
            .filter_map(|(c, &k)| k.then_some(c))
            .collect();
        for r in &mut rows {
            let mut k = keep.iter();
            r.values.retain(|_| *k.next().unwrap_or(&false));
        }
        Table {
            name: TABLE_SINGLE.into(),
            title: "IOzone single-stream results: kB/s (kB = 1024 B) per file size and record \
                    size"
                .into(),
            columns: cols,
            rows,
        }
    }

    fn throughput_table(&self, results: &[PhaseResult]) -> Table {
        let rows = results
            .iter()
            .map(|r| {
                let (lo, hi) = r.min_max();
                let n = r.children.len().max(1) as f64;
                Row {
                    label: r.phase.throughput_label().into(),
                    values: vec![
                        Some((r.file_size / 1024) as f64),
                        Some((r.record_size / 1024) as f64),
                        Some(r.children.len() as f64),
                        Some(r.children_kb_s()),
                        Some(r.parent_kb_s()),
                        Some(if lo.is_finite() { lo } else { 0.0 }),
                        Some(hi),
                        Some(r.children_kb_s() / n),
                        Some(r.min_xfer_kb()).filter(|v| v.is_finite()),
                    ],
                }
            })
            .collect();
        Table {
            name: TABLE_THROUGHPUT.into(),
            title: "IOzone throughput mode: per test, the children's summed rates and the \
                    parent's view (kB = 1024 B)"
                .into(),
            columns: THROUGHPUT_COLUMNS
                .iter()
                .map(|&(n, u)| Column {
                    name: n.into(),
                    unit: u.into(),
                })
                .collect(),
            rows,
        }
    }
}

impl Instance for IozoneInstance {
    fn worker(&self, tid: usize, rng: Rng) -> Result<Worker, WorkloadError> {
        Ok(Worker::Loop(Box::new(Child {
            s: self.0.clone(),
            tid,
            rng,
        })))
    }

    fn facts(&self) -> Vec<(String, f64)> {
        let c = &self.0.cfg;
        let b = |v: bool| f64::from(u8::from(v));
        let (f, r) = c.steps.first().copied().unwrap_or((0, 0));
        let mut out = vec![
            ("file_kb", (f / 1024) as f64),
            ("reclen_kb", (r / 1024) as f64),
            ("steps", c.steps.len() as f64),
            ("children", c.children as f64),
            ("throughput_mode", b(c.throughput)),
            ("direct", b(c.direct)),
            ("o_sync", b(c.o_sync)),
            ("flush_in_timing", b(c.flush)),
            ("close_in_timing", b(c.close)),
            ("purge", b(c.purge.is_some())),
            ("stonewall", b(c.stonewall)),
            ("stride_records", c.stride as f64),
            ("files_created", self.0.files.created as f64),
            (
                "phases_completed",
                self.0.results.lock().map(|r| r.len()).unwrap_or(0) as f64,
            ),
        ];
        for t in &c.tests {
            out.push(match t {
                0 => ("test_0", 1.0),
                1 => ("test_1", 1.0),
                2 => ("test_2", 1.0),
                3 => ("test_3", 1.0),
                4 => ("test_4", 1.0),
                5 => ("test_5", 1.0),
                6 => ("test_6", 1.0),
                7 => ("test_7", 1.0),
                8 => ("test_8", 1.0),
                9 => ("test_9", 1.0),
                10 => ("test_10", 1.0),
                11 => ("test_11", 1.0),
                _ => ("test_12", 1.0),
            });
        }
        if let Some(m) = self.0.mem_total {
            out.push(("mem_total_bytes", m as f64));
        }
        out.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    fn tables(&self) -> Vec<Table> {
        let results = self.0.results.lock().map(|r| r.clone()).unwrap_or_default();
        if self.0.cfg.throughput {
            vec![self.throughput_table(&results)]
        } else {
            vec![self.single_table(&results)]
        }
    }

    fn warnings(&self) -> Vec<Warning> {
        let s = &self.0;
        let mut w = s.setup_warnings.clone();
        if s.cut.load(Acquire) {
            w.push(Warning {
                kind: WarningKind::Partial,
                message: "the run ended before every test had run; the tables hold the passes \
                          that completed"
                    .into(),
            });
        }
        w
    }
}

impl Iozone {
    fn build(&self, ctx: &SetupCtx<'_>) -> Result<Shared, WorkloadError> {
        let p = ctx.params;
        let tests = parse_tests(p.text("tests"))?;
        // Several threads are several children: the native grammar's `-t 4` means what
        // IOzone's does.
        let throughput = p.bool("throughput") || ctx.threads > 1;
        let children = if throughput { ctx.threads.max(1) } else { 1 };
        let steps = matrix(p)?;
        if throughput && steps.len() > 1 {
            return Err(WorkloadError(
                "automatic mode (-a) and throughput mode (-t) do not combine; give -s and -r \
                 with -t"
                    .into(),
            ));
        }
        let direct = p.bool("direct");
        for &(f, r) in &steps {
            if r == 0 || f < r {
                return Err(WorkloadError(format!(
                    "the record size ({r} B) must be at least 1 byte and no larger than the \
                     file size ({f} B)"
                )));
            }
            if direct && r % 512 != 0 {
                return Err(WorkloadError(format!(
                    "-I (O_DIRECT) needs a record size that is a multiple of 512 bytes, not \
                     {r} B; use e.g. -r 4k"
                )));
            }
            if f / r > u64::from(u32::MAX) {
                return Err(WorkloadError(format!(
                    "{f} B in {r} B records is more than 2^32 records; use a larger record size"
                )));
            }
        }
        let max_rec = steps.iter().map(|&(_, r)| r).max().unwrap_or(0);
        if max_rec > 1 << 30 {
            return Err(WorkloadError(format!(
                "a record of {max_rec} B is more than 1 GiB; use a smaller record size"
            )));
        }
        let no_retest = p.bool("no_retest");
        let phases = plan_phases(&tests, throughput, no_retest);
        // Paths.
        let given: Vec<PathBuf> = p
            .text("files")
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect();
        for g in &given {
            // A relative name stays in the current directory; an absolute one is the user's.
            files::stays_inside(&g.to_string_lossy(), true, "file (-f/-F)")?;
        }
        let dir = PathBuf::from(match p.text("dir") {
            "" => ".",
            d => d,
        });
        let paths: Vec<PathBuf> = if given.is_empty() {
            if throughput {
                (0..children)
                    .map(|i| dir.join(format!("iozone.DUMMY.{i}")))
                    .collect()
            } else {
                vec![dir.join("iozone.tmp")]
            }
        } else if given.len() < children {
            return Err(WorkloadError(format!(
                "{} file name(s) for {children} children: give one name per child (-F name1 \
                 name2 ...)",
                given.len()
            )));
        } else {
            given.into_iter().take(children).collect()
        };
        for (i, a) in paths.iter().enumerate() {
            if paths[..i].contains(a) {
                return Err(WorkloadError(format!(
                    "file {} is named twice; every child needs its own file",
                    a.display()
                )));
            }
        }
        // Free space, per directory.
        let biggest = steps.iter().map(|&(f, _)| f).max().unwrap_or(0);
        let mut per_dir: Vec<(PathBuf, u64)> = Vec::new();
        for path in &paths {
            let d = parent_dir(path);
            if !d.is_dir() {
                return Err(WorkloadError(format!(
                    "directory {} does not exist (for file {}); create it or name another",
                    d.display(),
                    path.display()
                )));
            }
            // A file that is already there (kept by an earlier run) needs only its growth.
            let have = std::fs::metadata(path).map_or(0, |m| m.len());
            let need = biggest.saturating_sub(have);
            match per_dir.iter_mut().find(|(x, _)| *x == d) {
                Some((_, n)) => *n += need,
                None => per_dir.push((d, need)),
            }
        }
        let mut space_warnings = Vec::new();
        for (d, need) in &per_dir {
            let what = format!(
                "{children} file(s) of {} kB (-s{})",
                biggest / 1024,
                if throughput {
                    format!(" x -t {children}")
                } else {
                    String::new()
                }
            );
            let sp = files::ensure_space(d, *need, &what)?;
            let after = files::Space {
                free_bytes: sp.free_bytes.saturating_sub(*need),
                ..sp
            };
            space_warnings.extend(files::space_warning(d, after));
        }
        // Create the files (O_EXCL), or reuse ones the directory's manifest says an earlier
        // hostbench run created (and kept with -w). Anything else is not ours to overwrite.
        let mut files = Files {
            paths: Vec::new(),
            manifests: Mutex::new(Vec::new()),
            created: 0,
            keep: p.bool("keep"),
        };
        for path in &paths {
            let d = parent_dir(path);
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .ok_or_else(|| WorkloadError(format!("{} does not name a file", path.display())))?;
            let mut ms = files.manifests.lock().unwrap_or_else(|p| p.into_inner());
            let idx = match ms.iter().position(|m| m_dir(m) == d) {
                Some(i) => i,
                None => {
                    let m = files::Manifest::load(&d, MANIFEST_TAG)?
                        .unwrap_or_else(|| files::Manifest::new(&d, MANIFEST_TAG));
                    ms.push(m);
                    ms.len() - 1
                }
            };
            let m = &mut ms[idx];
            files::lstat_no_symlink(path)?;
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)
            {
                Ok(_) => {
                    m.record(&name, true)?;
                    m.save()?;
                    files.created += 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if !m.owns(&name) {
                        return Err(WorkloadError(format!(
                            "{} already exists and hostbench did not create it; hostbench \
                             iozone does not overwrite other files: remove it or name \
                             another file with -f/-F",
                            path.display()
                        )));
                    }
                }
                Err(e) => return Err(io_err(path, "could not create", e)),
            }
            drop(ms);
            files.paths.push(path.clone());
        }
        if direct {
            for path in &paths {
                let o = files::OpenOpts {
                    read: true,
                    direct: true,
                    ..files::OpenOpts::default()
                };
                files::open(path, &o)?;
            }
        }
        let data_bytes = biggest.saturating_mul(children as u64);
        let ram = ctx
            .host
            .map(|h| h.memory.total_bytes)
            .filter(|&m| m > 0)
            .or_else(mem_total);
        let page_cache = files::page_cache_decision(
            files::fs_type(&parent_dir(&paths[0])),
            data_bytes,
            direct,
            ram,
            "use -I (O_DIRECT), or a file size (-s) per child so that the files together \
             exceed RAM, and -e to include fsync in the timing",
        );
        let cache_size = p.int("cache_size").max(0) as usize;
        let cache_line = (p.int("cache_line").max(1) as usize).max(1);
        let cfg = Config {
            steps,
            phases,
            throughput,
            children,
            direct,
            o_sync: p.bool("o_sync"),
            flush: p.bool("flush"),
            close: p.bool("close"),
            purge: p.bool("purge").then_some((cache_size.max(1), cache_line)),
            stonewall: p.bool("stonewall"),
            stride: p.int("stride").max(1) as u64,
            mix_read_percent: p.int("mix_read_percent"),
            tests,
        };
        Ok(Shared {
            gate: Gate {
                n: children,
                st: Mutex::new(GateState::default()),
                cv: Condvar::new(),
            },
            stop: AtomicBool::new(false),
            slots: (0..children)
                .map(|_| Mutex::new(ChildStat::default()))
                .collect(),
            results: Mutex::new(Vec::new()),
            cut: AtomicBool::new(false),
            mem_total: ram,
            setup_warnings: page_cache.into_iter().chain(space_warnings).collect(),
            #[cfg(test)]
            slow: None,
            #[cfg(test)]
            late: None,
            cfg,
            files,
        })
    }
}

fn parent_dir(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

impl Workload for Iozone {
    fn id(&self) -> &'static str {
        "iozone"
    }
    fn category(&self) -> Category {
        Category::Disk
    }
    fn summary(&self) -> &'static str {
        "IOzone's file tests (write, read, random, backwards, record rewrite, stride, stdio, \
         positional, vectored, mix), single-stream or N children in lock-step; one event is \
         one I/O call"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn caps(&self) -> Caps {
        Caps {
            destructive: true,
            loop_worker: true,
            ends_itself: true,
            ..Caps::default()
        }
    }
    fn counters(&self) -> &'static [Counter] {
        super::IO_COUNTERS
    }
    fn figures(&self, r: &RunResult) -> Vec<Figure> {
        let mut f = Vec::new();
        if let Some(t) = r.tables.iter().find(|t| t.name == TABLE_THROUGHPUT) {
            for row in &t.rows {
                if let Some(v) = t.get(&row.label, "children_kb_per_s") {
                    let name = format!("{}_children_kb_per_s", row.label.replace(['-', ' '], "_"));
                    f.push(Figure::new(&name, "kB/s", v, Better::Higher));
                }
            }
        } else if let Some(t) = r.tables.iter().find(|t| t.name == TABLE_SINGLE)
            && let Some(last) = t.rows.last()
        {
            // The largest step of the matrix (the only one without -a).
            for (c, v) in t.columns.iter().zip(&last.values).skip(2) {
                if let Some(v) = v {
                    f.push(Figure::new(
                        &format!("{}_kb_per_s", c.name),
                        "kB/s",
                        *v,
                        Better::Higher,
                    ));
                }
            }
        }
        if f.is_empty() {
            return r.default_figures();
        }
        f
    }
    fn commands(&self) -> &'static [&'static str] {
        &["iozone"]
    }
    fn small_params(&self) -> &'static [(&'static str, &'static str)] {
        &[("throughput", "on"), ("file_size", "64K")]
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        Ok(Box::new(IozoneInstance(Arc::new(self.build(ctx)?))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::clock::Clock;
    use hostbench_core::plan::Plan;
    use hostbench_core::rand::Distribution;
    use hostbench_core::runner::{Silent, run};

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "hostbench-iozone-unit-{tag}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn go(
        ov: &[(&str, &str)],
        threads: usize,
    ) -> (hostbench_core::runner::Measurement, Vec<Table>) {
        let w = &Iozone;
        let ov: Vec<(String, String)> = ov
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let params = Params::resolve("iozone", w.params(), &ov).unwrap();
        let mut plan = Plan::new("iozone", params.clone());
        plan.threads = threads;
        plan.time_s = 0.0;
        plan.events = 0;
        plan.seed = 7;
        plan.rand = Distribution::Uniform;
        let inst = w
            .setup(&SetupCtx {
                params: &params,
                threads,
                dist: plan.rand,
                seed: 7,
                host: None,
            })
            .unwrap();
        let m = run(&plan, inst.as_ref(), Clock::detect(), &Silent).unwrap();
        assert!(m.error.is_none(), "{:?}", m.error);
        (m, inst.tables())
    }

    #[test]
    fn stride_visits_every_record_once() {
        for n in [1u64, 2, 16, 17, 18, 100, 289, 1000] {
            for stride in [1u64, 3, 17, 200] {
                let mut seen = vec![false; n as usize];
                for i in 0..n {
                    let r = stride_record(i, n, stride);
                    assert!(r < n, "n={n} stride={stride} i={i} r={r}");
                    assert!(!seen[r as usize], "n={n} stride={stride}: {r} twice");
                    seen[r as usize] = true;
                }
            }
        }
        assert_eq!(stride_record(1, 100, 17), 17);
    }

    #[test]
    fn permutation_is_a_permutation() {
        let mut rng = Rng::for_thread(1, 0);
        let p = permutation(1000, &mut rng);
        let mut s = p.clone();
        s.sort_unstable();
        assert_eq!(s, (0..1000).collect::<Vec<u32>>());
        assert_ne!(p, s);
    }

    #[test]
    fn tests_parse_and_order() {
        assert_eq!(parse_tests("0,1,2").unwrap(), vec![0, 1, 2]);
        assert!(parse_tests("1").unwrap_err().0.contains("test 0"));
        assert!(parse_tests("0,13").unwrap_err().0.contains("'13'"));
        let single = plan_phases(&[0, 1, 8], false, false);
        assert_eq!(
            single,
            vec![Phase::Write, Phase::Rewrite, Phase::Read, Phase::Reread]
        );
        let tp = plan_phases(&[0, 1, 2, 6, 7], true, true);
        assert_eq!(
            tp,
            vec![
                Phase::Write,
                Phase::Read,
                Phase::RandomRead,
                Phase::RandomWrite,
                Phase::Fwrite,
                Phase::Fread
            ]
        );
    }

    #[test]
    fn auto_matrix_follows_iozone() {
        let ov: Vec<(String, String)> = [
            ("auto", "on"),
            ("min_file_size", "64K"),
            ("max_file_size", "32M"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let p = Params::resolve("iozone", PARAMS, &ov).unwrap();
        let m = matrix(&p).unwrap();
        assert_eq!(m[0], (64 << 10, 4 << 10));
        assert!(m.iter().all(|&(f, r)| r <= f));
        // Above the crossover, no records below 64 kB.
        assert!(m.contains(&(16 << 20, 4 << 10)));
        assert!(!m.contains(&(32 << 20, 32 << 10)));
        assert!(m.contains(&(32 << 20, 64 << 10)));
        assert!(m.contains(&(32 << 20, 16 << 20)));
    }

    #[test]
    fn single_stream_passes_move_the_right_bytes() {
        let d = tmpdir("single");
        let (m, tables) = go(
            &[
                ("dir", d.to_str().unwrap()),
                ("file_size", "64K"),
                ("record_size", "4K"),
                ("tests", "0,1,2,3,4,5,6,7,9,10,11,12"),
            ],
            1,
        );
        // 21 phases of 64 KiB; test 8 does nothing in single-stream mode.
        let c = m.counters;
        let reads = 9; // read reread rr bkwd stride fread freread pread repread + preadv x2
        let writes = 10;
        let bytes = 64 << 10;
        assert_eq!(c.get(Counter::BytesRead), (reads + 2) * bytes);
        assert_eq!(c.get(Counter::BytesWritten), writes * bytes);
        // 16 records per pass, one call each, except the vectored ones (16 per call).
        assert_eq!(c.get(Counter::Reads), 9 * 16 + 2);
        assert_eq!(c.get(Counter::Writes), 8 * 16 + 2);
        let t = &tables[0];
        assert_eq!(t.rows.len(), 1);
        for col in Phase::COLUMNS {
            assert!(
                t.get("64/4", col.column()).is_some_and(|v| v > 0.0),
                "{col:?}"
            );
        }
        // Cleanup removed the file it created.
        drop(tables);
        assert!(!d.join("iozone.tmp").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn throughput_mode_aggregates_children_and_leaves_foreign_files() {
        let d = tmpdir("tp");
        std::fs::write(d.join("foreign.dat"), b"keep me").unwrap();
        let (m, tables) = go(
            &[
                ("dir", d.to_str().unwrap()),
                ("file_size", "128K"),
                ("record_size", "8K"),
                ("tests", "0,1,8"),
                ("throughput", "on"),
                ("stonewall", "off"),
            ],
            2,
        );
        let t = &tables[0];
        let labels: Vec<&str> = t.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "initial writers",
                "rewriters",
                "readers",
                "re-readers",
                "mixed workload"
            ]
        );
        for r in &t.rows {
            let v = |c: &str| t.get(&r.label, c).unwrap();
            assert_eq!(v("children"), 2.0);
            // Without stonewalling every child moves its whole file.
            assert_eq!(v("min_xfer_kb"), 128.0);
            assert!(v("children_kb_per_s") >= v("parent_kb_per_s") * 0.999);
            assert!((v("avg_kb_per_s") * 2.0 - v("children_kb_per_s")).abs() < 1e-6);
            assert!(v("min_kb_per_s") <= v("max_kb_per_s"));
        }
        // 2 children x (write, rewrite, half the mix) and (read, reread, half the mix).
        assert_eq!(
            m.counters.get(Counter::BytesWritten),
            2 * 2 * (128 << 10) + (128 << 10)
        );
        assert_eq!(
            m.counters.get(Counter::BytesRead),
            2 * 2 * (128 << 10) + (128 << 10)
        );
        drop(tables);
        assert!(!d.join("iozone.DUMMY.0").exists());
        assert!(d.join("foreign.dat").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    /// Two children writing and reading `file_size` each in 4 KiB records (tests 0 and 1,
    /// throughput mode) in a fresh directory, `tweak` applied to the shared state first.
    fn two_children(
        tag: &str,
        file_size: &str,
        tweak: impl FnOnce(&mut Shared),
    ) -> (
        std::path::PathBuf,
        IozoneInstance,
        hostbench_core::runner::Measurement,
    ) {
        let d = tmpdir(tag);
        let ov: Vec<(String, String)> = [
            ("dir", d.to_str().unwrap()),
            ("file_size", file_size),
            ("record_size", "4K"),
            ("tests", "0,1"),
            ("throughput", "on"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let params = Params::resolve("iozone", PARAMS, &ov).unwrap();
        let mut shared = Iozone
            .build(&SetupCtx {
                params: &params,
                threads: 2,
                dist: Distribution::Uniform,
                seed: 3,
                host: None,
            })
            .unwrap();
        tweak(&mut shared);
        let inst = IozoneInstance(Arc::new(shared));
        let mut plan = Plan::new("iozone", params.clone());
        plan.threads = 2;
        plan.time_s = 0.0;
        plan.events = 0;
        let m = run(&plan, &inst, Clock::detect(), &Silent).unwrap();
        (d, inst, m)
    }

    /// A child that starts only after another finished its pass (a busy machine, a small
    /// file) is not stonewalled at 0 kB: it moves one record first, so "Min xfer" is not 0
    /// and the children's throughput is not one child's.
    #[test]
    fn a_child_that_starts_late_is_not_stonewalled_at_zero() {
        let (d, inst, m) = two_children("late", "64K", |s| s.late = Some(1));
        assert!(m.error.is_none(), "{:?}", m.error);
        let t = &inst.tables()[0];
        for label in ["initial writers", "rewriters", "readers", "re-readers"] {
            let v = |c: &str| t.get(label, c).unwrap();
            assert_eq!(v("min_xfer_kb"), 4.0, "{label}: one record");
            assert!(v("min_kb_per_s") > 0.0, "{label}: a child without a rate");
        }
        drop(inst);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn stonewall_stops_the_slow_child_but_the_file_is_whole() {
        let (d, inst, m) = two_children("stonewall", "256K", |s| s.slow = Some(1));
        assert!(m.error.is_none(), "{:?}", m.error);
        let t = &inst.tables()[0];
        let file = 256 << 10;
        for label in ["initial writers", "rewriters", "readers", "re-readers"] {
            let xfer = t.get(label, "min_xfer_kb").unwrap();
            assert!(
                xfer < 256.0,
                "{label}: the slow child was stonewalled, min xfer {xfer}"
            );
            assert!(t.get(label, "max_kb_per_s").unwrap() > 0.0);
        }
        // The initial writers go on to the end of the file: both files are whole, so the fast
        // child reads all of its file in each read pass; the slow child stops early.
        let written = m.counters.get(Counter::BytesWritten);
        assert!(written >= 3 * file && written < 4 * file, "{written}");
        let read = m.counters.get(Counter::BytesRead);
        assert!(read >= 2 * file && read < 4 * file, "{read}");
        for i in 0..2 {
            let len = std::fs::metadata(d.join(format!("iozone.DUMMY.{i}")))
                .unwrap()
                .len();
            assert_eq!(len, file);
        }
        drop(inst);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn existing_foreign_file_is_refused() {
        let d = tmpdir("foreign");
        let f = d.join("iozone.tmp");
        std::fs::write(&f, b"not yours").unwrap();
        let params = Params::resolve(
            "iozone",
            PARAMS,
            &[("dir".to_string(), d.to_str().unwrap().to_string())],
        )
        .unwrap();
        let e = Iozone
            .setup(&SetupCtx {
                params: &params,
                threads: 1,
                dist: Distribution::Uniform,
                seed: 1,
                host: None,
            })
            .err()
            .unwrap();
        assert!(e.0.contains("did not create"), "{e}");
        assert_eq!(std::fs::read(&f).unwrap(), b"not yours");
        let _ = std::fs::remove_dir_all(&d);
    }
}
