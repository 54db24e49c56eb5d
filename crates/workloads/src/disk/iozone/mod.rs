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
//! With `cpu_util` (`-+u`) each child also reads its thread's CPU clock and the wall clock
//! from its release to the end of its pass (file closed); a phase's CPU % is IOzone's:
//! Σ children's CPU seconds / the longest child's wall seconds (tables `iozone_cpu`, or the
//! CPU columns of the throughput table and the per-child `iozone_children`).
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
use hostbench_core::names::iozone::{col, fact};
use hostbench_core::params::ParamSpec;
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counter;
use hostbench_core::result::{Better, Column, Figure, Row, RunResult, Table, Warning, WarningKind};
use hostbench_core::workload::*;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::{Arc, Condvar, Mutex};

mod child;
mod params;
mod phases;

pub use params::{CROSSOVER, CROSSOVER_MIN_RECORD, matrix};
pub use phases::{Phase, parse_tests, permutation, phases_of, plan_phases, stride_record};

use child::{Child, Gate, GateState, io_err};
pub use child::{cpu_time_resolution, thread_cpu_s};
use params::PARAMS;

/// IOzone's file tests.
pub struct Iozone;

/// Records per vectored call (IOzone's `PVECMAX`).
pub const PVECMAX: usize = 16;

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
    /// With `cpu_util` (`-+u`): seconds from the release to the end of the whole pass (the
    /// file closed), whatever the stonewall, as IOzone's children time their CPU share.
    pub wall_s: f64,
    /// With `cpu_util`: CPU seconds (user + system) this child's thread spent over `wall_s`
    /// (`CLOCK_THREAD_CPUTIME_ID`: the thread's own time, not the process's).
    pub cpu_s: f64,
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
    /// IOzone's CPU utilisation of the phase (`-+u`): (wall seconds, CPU seconds, percent)
    /// with CPU = Σ over children of their CPU seconds and wall = the longest child's wall
    /// seconds (a child's wall counted as at least its CPU time), percent = 100 × CPU / wall
    /// (0 when the wall time is 0). Above 100 % when several children ran at once.
    pub fn cpu(&self) -> (f64, f64, f64) {
        let cpu: f64 = self.children.iter().map(|c| c.cpu_s).sum();
        let wall = self
            .children
            .iter()
            .map(|c| c.wall_s.max(c.cpu_s))
            .fold(0.0f64, f64::max);
        // Each child's CPU is at most the wall time, so the ratio is at most 100 % per
        // child; the bound only removes the division's rounding (100.00000000000001).
        let most = 100.0 * self.children.len() as f64;
        let pct = if wall > 0.0 {
            (100.0 * cpu / wall).min(most)
        } else {
            0.0
        };
        (wall, cpu, pct)
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
    /// `-+u`: measure each child's CPU time over every pass.
    cpu_util: bool,
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
    /// With `cpu_util`: the smallest step of the thread CPU clock, measured at setup (what
    /// IOzone's "CPU utilization Resolution" line prints).
    cpu_resolution: Option<f64>,
    /// Warnings known at setup (page cache, nearly full filesystem).
    setup_warnings: Vec<Warning>,
    /// Tests: this child sleeps before every call, so the others finish first.
    #[cfg(test)]
    slow: Option<usize>,
    /// Tests: this child waits after the release until the others have finished their pass.
    #[cfg(test)]
    late: Option<usize>,
}

struct IozoneInstance(Arc<Shared>);

/// Names of the result tables (IOzone's layouts read them too).
pub use hostbench_core::names::iozone::table::{
    SINGLE as TABLE_SINGLE, THROUGHPUT as TABLE_THROUGHPUT,
};

/// Columns of the throughput table.
pub const THROUGHPUT_COLUMNS: [(&str, &str); 9] = [
    (col::FILE_KB, "kB"),
    (col::RECLEN_KB, "kB"),
    (col::CHILDREN, ""),
    (col::CHILDREN_KB_PER_S, "kB/s"),
    (col::PARENT_KB_PER_S, "kB/s"),
    (col::MIN_KB_PER_S, "kB/s"),
    (col::MAX_KB_PER_S, "kB/s"),
    (col::AVG_KB_PER_S, "kB/s"),
    (col::MIN_XFER_KB, "kB"),
];

/// Columns added to the throughput table with `cpu_util` (`-+u`): IOzone's CPU line, the
/// longest child's wall seconds, the children's summed CPU seconds, and their ratio in %.
pub const CPU_COLUMNS: [(&str, &str); 3] = [
    (col::WALL_S, "s"),
    (col::CPU_S, "s"),
    (col::CPU_PERCENT, "%"),
];

/// Throughput mode with `cpu_util` (`-+u`): a row per test and child (`initial writers/0`)
/// with what IOzone's `-C -+u` lines print per child.
pub const TABLE_CHILDREN: &str = hostbench_core::names::iozone::table::CHILDREN;

/// The per-child table of a throughput run with `cpu_util`.
fn children_table(results: &[PhaseResult]) -> Table {
    let cols = [
        ("child", ""),
        ("xfer_kb", "kB"),
        ("kb_per_s", "kB/s"),
        (col::WALL_S, "s"),
        (col::CPU_S, "s"),
        (col::CPU_PERCENT, "%"),
    ];
    let rows = results
        .iter()
        .flat_map(|r| {
            r.children.iter().enumerate().map(|(i, c)| {
                let wall = c.wall_s.max(c.cpu_s);
                Row {
                    label: format!("{}/{i}", r.phase.throughput_label()),
                    values: vec![
                        Some(i as f64),
                        Some(c.bytes as f64 / 1024.0),
                        Some(PhaseResult::kb_per_s(c)),
                        Some(c.wall_s),
                        Some(c.cpu_s),
                        Some(if wall > 0.0 {
                            (100.0 * c.cpu_s / wall).min(100.0)
                        } else {
                            0.0
                        }),
                    ],
                }
            })
        })
        .collect();
    Table {
        name: TABLE_CHILDREN.into(),
        title: "IOzone throughput mode, per child (-+u): kB moved before the stonewall, its \
                rate, and the child's wall and CPU seconds over its whole pass"
            .into(),
        columns: cols
            .iter()
            .map(|&(n, u)| Column {
                name: n.into(),
                unit: u.into(),
            })
            .collect(),
        rows,
    }
}

/// Single-stream CPU utilisation with `cpu_util` (`-+u`): the [`TABLE_SINGLE`] matrix with
/// each pass's CPU % in its cell.
pub const TABLE_CPU: &str = hostbench_core::names::iozone::table::CPU;

impl IozoneInstance {
    /// The single-stream matrix: a row per (file size, record size), a column per pass,
    /// `value` of each phase in its cell (kB/s, or CPU % for [`TABLE_CPU`]).
    fn single_table(
        &self,
        results: &[PhaseResult],
        (name, title, unit): (&str, &str, &str),
        value: impl Fn(&PhaseResult) -> f64,
    ) -> Table {
        let mut cols = vec![
            Column {
                name: col::FILE_KB.into(),
                unit: "kB".into(),
            },
            Column {
                name: col::RECLEN_KB.into(),
                unit: "kB".into(),
            },
        ];
        cols.extend(Phase::COLUMNS.iter().map(|p| Column {
            name: p.column().into(),
            unit: unit.into(),
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
                rows[idx].values[2 + c] = Some(value(r));
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
            name: name.into(),
            title: title.into(),
            columns: cols,
            rows,
        }
    }

    fn throughput_table(&self, results: &[PhaseResult]) -> Table {
        let cpu = self.0.cfg.cpu_util;
        let rows = results
            .iter()
            .map(|r| {
                let (lo, hi) = r.min_max();
                let n = r.children.len().max(1) as f64;
                let (wall, cpu_s, pct) = r.cpu();
                Row {
                    label: r.phase.throughput_label().into(),
                    values: [
                        Some((r.file_size / 1024) as f64),
                        Some((r.record_size / 1024) as f64),
                        Some(r.children.len() as f64),
                        Some(r.children_kb_s()),
                        Some(r.parent_kb_s()),
                        Some(if lo.is_finite() { lo } else { 0.0 }),
                        Some(hi),
                        Some(r.children_kb_s() / n),
                        Some(r.min_xfer_kb()).filter(|v| v.is_finite()),
                    ]
                    .into_iter()
                    .chain(
                        cpu.then_some([Some(wall), Some(cpu_s), Some(pct)])
                            .into_iter()
                            .flatten(),
                    )
                    .collect(),
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
                .chain(if cpu { &CPU_COLUMNS[..] } else { &[] })
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
            (fact::CHILDREN, c.children as f64),
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
        if let Some(res) = self.0.cpu_resolution {
            out.push(("cpu_util", 1.0));
            out.push(("cpu_time_resolution_s", res));
        }
        out.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    fn tables(&self) -> Vec<Table> {
        let results = self.0.results.lock().map(|r| r.clone()).unwrap_or_default();
        if self.0.cfg.throughput {
            let mut t = vec![self.throughput_table(&results)];
            if self.0.cfg.cpu_util {
                t.push(children_table(&results));
            }
            t
        } else {
            let mut t = vec![self.single_table(
                &results,
                (
                    TABLE_SINGLE,
                    "IOzone single-stream results: kB/s (kB = 1024 B) per file size and record \
                     size",
                    "kB/s",
                ),
                PhaseResult::children_kb_s,
            )];
            if self.0.cfg.cpu_util {
                t.push(self.single_table(
                    &results,
                    (
                        TABLE_CPU,
                        "IOzone CPU utilisation (-+u): CPU seconds / wall seconds of each pass, \
                         %, per file size and record size",
                        "%",
                    ),
                    |r| r.cpu().2,
                ));
            }
            t
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
            return Err(WorkloadError::usage(
                "automatic mode (-a) and throughput mode (-t) do not combine; give -s and -r \
                 with -t",
            ));
        }
        let direct = p.bool("direct");
        for &(f, r) in &steps {
            if r == 0 || f < r {
                return Err(WorkloadError::usage(format!(
                    "the record size ({r} B) must be at least 1 byte and no larger than the \
                     file size ({f} B)"
                )));
            }
            if direct && r % 512 != 0 {
                return Err(WorkloadError::usage(format!(
                    "-I (O_DIRECT) needs a record size that is a multiple of 512 bytes, not \
                     {r} B; use e.g. -r 4k"
                )));
            }
            if f / r > u64::from(u32::MAX) {
                return Err(WorkloadError::usage(format!(
                    "{f} B in {r} B records is more than 2^32 records; use a larger record size"
                )));
            }
        }
        let max_rec = steps.iter().map(|&(_, r)| r).max().unwrap_or(0);
        if max_rec > 1 << 30 {
            return Err(WorkloadError::usage(format!(
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
            return Err(WorkloadError::usage(format!(
                "{} file name(s) for {children} children: give one name per child (-F name1 \
                 name2 ...)",
                given.len()
            )));
        } else {
            given.into_iter().take(children).collect()
        };
        for (i, a) in paths.iter().enumerate() {
            if paths[..i].contains(a) {
                return Err(WorkloadError::usage(format!(
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
                return Err(WorkloadError::usage(format!(
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
                .ok_or_else(|| {
                    WorkloadError::usage(format!("{} does not name a file", path.display()))
                })?;
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
                        return Err(WorkloadError::environment(format!(
                            "{} already exists and hostbench did not create it; hostbench \
                             iozone does not overwrite other files: remove it or name \
                             another file with -f/-F",
                            path.display()
                        )));
                    }
                }
                Err(e) => return Err(io_err(ErrorKind::Environment, path, "could not create", e)),
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
            cpu_util: p.bool("cpu_util"),
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
            cpu_resolution: cfg.cpu_util.then(child::cpu_time_resolution),
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
                if let Some(v) = t.get(&row.label, col::CHILDREN_KB_PER_S) {
                    let name = format!("{}_children_kb_per_s", row.label.replace(['-', ' '], "_"));
                    let label = format!("{}: the children's total", row.label);
                    f.push(Figure::labelled(&name, &label, "kB/s", v, Better::Higher));
                }
            }
        } else if let Some(t) = r.tables.iter().find(|t| t.name == TABLE_SINGLE)
            && let Some(last) = t.rows.last()
        {
            // The largest step of the matrix (the only one without -a).
            for (c, v) in t.columns.iter().zip(&last.values).skip(2) {
                if let Some(v) = v {
                    f.push(Figure::labelled(
                        &format!("{}_kb_per_s", c.name),
                        &format!("{} at the largest size", c.name.replace('_', " ")),
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
    use hostbench_core::params::Params;
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

    /// -+u: every pass has a measured CPU share; a child's is at most its wall time, so the
    /// phase's figure is above 0 and at most 100 % per child.
    #[test]
    fn cpu_util_measures_every_pass() {
        let d = tmpdir("cpu");
        let (_, tables) = go(
            &[
                ("dir", d.to_str().unwrap()),
                ("file_size", "256K"),
                ("record_size", "4K"),
                ("tests", "0,1"),
                ("throughput", "on"),
                ("cpu_util", "on"),
            ],
            2,
        );
        let t = &tables[0];
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(&names[9..], ["wall_s", "cpu_s", "cpu_percent"]);
        // Per child: the phase's CPU is the children's sum, its wall the longest child's.
        let kids = &tables[1];
        assert_eq!(kids.name, TABLE_CHILDREN);
        assert_eq!(kids.rows.len(), 2 * t.rows.len());
        for r in &t.rows {
            let k = |i: usize, c: &str| kids.get(&format!("{}/{i}", r.label), c).unwrap();
            let cpu = k(0, "cpu_s") + k(1, "cpu_s");
            assert!((cpu - t.get(&r.label, "cpu_s").unwrap()).abs() < 1e-12);
            for i in 0..2 {
                assert!(k(i, "cpu_percent") > 0.0 && k(i, "cpu_percent") <= 100.0);
                assert!(k(i, "wall_s") <= t.get(&r.label, "wall_s").unwrap());
            }
        }
        for r in &t.rows {
            let v = |c: &str| t.get(&r.label, c).unwrap();
            assert!(v("wall_s") > 0.0 && v("cpu_s") > 0.0, "{}", r.label);
            assert!(
                v("cpu_percent") > 0.0 && v("cpu_percent") <= 200.0,
                "{}: {}",
                r.label,
                v("cpu_percent")
            );
            let want = 100.0 * v("cpu_s") / v("wall_s");
            assert!((v("cpu_percent") - want).abs() < 1e-9);
            assert!(v("cpu_s") <= 2.0 * v("wall_s") + 1e-12);
        }
        drop(tables);
        // Single stream: a second matrix of CPU %, the same cells as the kB/s one.
        let (_, tables) = go(
            &[
                ("dir", d.to_str().unwrap()),
                ("file_size", "256K"),
                ("record_size", "4K"),
                ("tests", "0,1,2"),
                ("cpu_util", "on"),
            ],
            1,
        );
        assert_eq!(tables.len(), 2);
        let (kb, cpu) = (&tables[0], &tables[1]);
        assert_eq!(cpu.name, TABLE_CPU);
        assert_eq!(kb.columns.len(), cpu.columns.len());
        for c in &cpu.columns[2..] {
            let v = cpu.get("256/4", &c.name).unwrap();
            assert!(v > 0.0 && v <= 100.0, "{}: {v}", c.name);
        }
        drop(tables);
        // Off (the default): no CPU figures anywhere.
        let (_, tables) = go(
            &[
                ("dir", d.to_str().unwrap()),
                ("file_size", "64K"),
                ("tests", "0"),
            ],
            1,
        );
        assert_eq!(tables.len(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_thread_cpu_clock_moves_and_has_a_resolution() {
        let a = thread_cpu_s();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        assert!(thread_cpu_s() > a);
        let res = cpu_time_resolution();
        assert!(res > 0.0 && res < 0.02, "{res}");
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
        assert!(e.message.contains("did not create"), "{e}");
        assert_eq!(std::fs::read(&f).unwrap(), b"not yours");
        let _ = std::fs::remove_dir_all(&d);
    }
}
