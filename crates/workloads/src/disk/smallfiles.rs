//! `smallfiles`: the small-file check git-hosting guides use (write 1,000 tiny files, read
//! them back; under 10 s is healthy), done properly.
//!
//! Four phases run one after the other, separated by a barrier across threads: **create**
//! (open with `O_CREAT|O_EXCL`, write `size` bytes, close), **stat**, **read** (open, read the
//! whole file, close) and **delete** (unlink). Thread `t` owns files `i ≡ t (mod threads)`;
//! with `fanout > 0` the files are spread over that many subdirectories. One operation is one
//! event; each phase keeps its own latency record, reported as the `smallfiles` table (ops,
//! wall time, ops/s, percentiles). The verdict the guides ask for is create + read wall time
//! against `max_seconds` (fact `create_read_s`); the `hostbench smallfiles` command exits 1
//! when it is exceeded.
//!
//! Safety: everything lives in a fresh directory `hostbench-smallfiles-<pid>-<n>` inside the
//! directory given; hostbench removes only the files it created there and then the
//! (empty) directories, with `rmdir`, never recursively. A run cut short (time limit, Ctrl-C,
//! an error) still deletes what it created.

use super::files;
use hostbench_core::names::smallfiles::{TABLE, fact};
use hostbench_core::params::{ParamKind, ParamSpec};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::{Counter, LatencyRec};
use hostbench_core::result::{
    Better, Column, Figure, FigureDef, Row, RunResult, Table, Warning, WarningKind,
};
use hostbench_core::runner::RunControl;
use hostbench_core::workload::*;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// The small-file test.
pub struct SmallFiles;

/// Phase names, in order.
pub const PHASES: [&str; 4] = ["create", "stat", "read", "delete"];

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "files",
        kind: ParamKind::Int {
            min: 1,
            max: 100_000_000,
        },
        default: "1000",
        unit: "",
        help: "number of files",
        sysbench: None,
    },
    ParamSpec {
        name: "size",
        kind: ParamKind::Size,
        default: "4K",
        unit: "B",
        help: "bytes per file",
        sysbench: None,
    },
    ParamSpec {
        name: "fanout",
        kind: ParamKind::Int { min: 0, max: 65536 },
        default: "0",
        unit: "",
        help: "spread the files over this many subdirectories (0: all in one)",
        sysbench: None,
    },
    ParamSpec {
        name: "max_seconds",
        // 0 would fail every run: the smallest threshold is a millisecond.
        kind: ParamKind::Float {
            min: 0.001,
            max: 1e9,
        },
        default: "10",
        unit: "s",
        help: "pass/fail threshold for create + read wall time (the guides' 10 s)",
        sysbench: None,
    },
    ParamSpec {
        name: "dir",
        kind: ParamKind::Text,
        default: "",
        unit: "",
        help: "directory to test in (required); a fresh subdirectory is made inside it",
        sysbench: None,
    },
];

/// Per-phase records merged from all threads, and phase wall-clock bounds.
struct PhaseStats {
    recs: Mutex<Vec<LatencyRec>>,
    start_ns: [AtomicU64; 4],
    end_ns: [AtomicU64; 4],
    ops: [AtomicU64; 4],
}

struct Shared {
    root: PathBuf,
    subdirs: Vec<PathBuf>,
    files: u64,
    size: usize,
    threads: usize,
    max_seconds: f64,
    arrived: [AtomicUsize; 4],
    quit: AtomicBool,
    stats: PhaseStats,
    leftovers: Mutex<Vec<String>>,
    warnings: Vec<Warning>,
}

impl Shared {
    fn path(&self, i: u64) -> PathBuf {
        let name = format!("{}file-{i}", files::PREFIX);
        if self.subdirs.is_empty() {
            self.root.join(name)
        } else {
            self.subdirs[(i % self.subdirs.len() as u64) as usize].join(name)
        }
    }

    /// Waits for every thread to reach `phase`; false when the run is stopping.
    fn barrier(&self, phase: usize, ctl: &mut RunControl<'_>) -> bool {
        self.arrived[phase].fetch_add(1, Ordering::AcqRel);
        loop {
            if self.quit.load(Ordering::Acquire) || ctl.aborted() {
                return false;
            }
            if self.arrived[phase].load(Ordering::Acquire) >= self.threads {
                return true;
            }
            let now = ctl.now();
            if ctl.should_stop(now) {
                self.quit.store(true, Ordering::Release);
                return false;
            }
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Only empty directories go: anything someone else put there stays.
        for d in self.subdirs.iter().chain(std::iter::once(&self.root)) {
            let _ = std::fs::remove_dir(d);
        }
    }
}

struct SmallWorker {
    sh: std::sync::Arc<Shared>,
    mine: Vec<PathBuf>,
    buf: Vec<u8>,
    created: usize,
    deleted: usize,
    recs: Vec<LatencyRec>,
}

impl SmallWorker {
    fn op(&mut self, phase: usize, k: usize) -> std::io::Result<u64> {
        let p = &self.mine[k];
        match phase {
            0 => {
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(p)?;
                self.created = k + 1;
                f.write_all(&self.buf)?;
                Ok(self.buf.len() as u64)
            }
            1 => {
                std::hint::black_box(std::fs::symlink_metadata(p)?.len());
                Ok(0)
            }
            2 => {
                let mut f = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(p)?;
                let mut n = 0;
                loop {
                    let r = f.read(&mut self.buf)?;
                    if r == 0 {
                        break;
                    }
                    n += r as u64;
                }
                Ok(n)
            }
            _ => {
                std::fs::remove_file(p)?;
                self.deleted = k + 1;
                Ok(0)
            }
        }
    }

    /// Deletes what this thread created and has not deleted yet.
    fn clean_up(&mut self) {
        for k in self.deleted..self.created {
            if std::fs::remove_file(&self.mine[k]).is_err() && self.mine[k].exists() {
                self.sh
                    .leftovers
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(self.mine[k].display().to_string());
            }
        }
        self.deleted = self.created;
    }

    fn phases(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        let clock = ctl.clock();
        for (phase, name) in PHASES.iter().enumerate() {
            if !self.sh.barrier(phase, ctl) {
                return Ok(());
            }
            let start = clock.to_ns(ctl.now());
            for k in 0..self.mine.len() {
                let Some(intended) = ctl.next_op(ctl.now()) else {
                    self.sh.quit.store(true, Ordering::Release);
                    return Ok(());
                };
                let bytes = self.op(phase, k).map_err(|e| {
                    self.sh.quit.store(true, Ordering::Release);
                    WorkloadError::failed(format!(
                        "smallfiles {}: {}: {e}",
                        name,
                        self.mine[k].display()
                    ))
                })?;
                let done = ctl.now();
                ctl.record(intended, done);
                self.recs[phase].record(clock.to_ns(done.saturating_sub(intended)));
                let c = ctl.counters();
                match phase {
                    0 => {
                        c.add(Counter::Writes, 1);
                        c.add(Counter::BytesWritten, bytes);
                    }
                    2 => {
                        c.add(Counter::Reads, 1);
                        c.add(Counter::BytesRead, bytes);
                    }
                    _ => c.add(Counter::Other, 1),
                }
            }
            let end = clock.to_ns(ctl.now());
            let st = &self.sh.stats;
            st.start_ns[phase].fetch_min(start, Ordering::AcqRel);
            st.end_ns[phase].fetch_max(end, Ordering::AcqRel);
            st.ops[phase].fetch_add(self.mine.len() as u64, Ordering::AcqRel);
        }
        Ok(())
    }
}

impl LoopWorker for SmallWorker {
    fn run(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        let r = self.phases(ctl);
        self.clean_up();
        let mut all = self.sh.stats.recs.lock().unwrap_or_else(|e| e.into_inner());
        for (a, b) in all.iter_mut().zip(&self.recs) {
            a.merge(b);
        }
        r
    }
}

struct SmallInstance {
    sh: std::sync::Arc<Shared>,
}

impl SmallInstance {
    /// (ops, wall seconds) of a phase; `None` when it did not complete.
    fn phase(&self, p: usize) -> Option<(u64, f64)> {
        let st = &self.sh.stats;
        let ops = st.ops[p].load(Ordering::Acquire);
        let (s, e) = (
            st.start_ns[p].load(Ordering::Acquire),
            st.end_ns[p].load(Ordering::Acquire),
        );
        (ops == self.sh.files && e >= s && s != u64::MAX).then(|| (ops, (e - s) as f64 / 1e9))
    }
}

impl Instance for SmallInstance {
    fn worker(&self, tid: usize, _rng: Rng) -> Result<Worker, WorkloadError> {
        let sh = &self.sh;
        let mine: Vec<PathBuf> = (tid as u64..sh.files)
            .step_by(sh.threads)
            .map(|i| sh.path(i))
            .collect();
        let buf: Vec<u8> = (0..sh.size)
            .map(|i| b"hostbench small file\n"[i % 21])
            .collect();
        Ok(Worker::Loop(Box::new(SmallWorker {
            sh: std::sync::Arc::clone(sh),
            mine,
            buf,
            created: 0,
            deleted: 0,
            recs: (0..4).map(|_| LatencyRec::default()).collect(),
        })))
    }

    fn facts(&self) -> Vec<(String, f64)> {
        let mut f = vec![
            ("files".into(), self.sh.files as f64),
            (fact::MAX_SECONDS.into(), self.sh.max_seconds),
        ];
        if let (Some(c), Some(r)) = (self.phase(0), self.phase(2)) {
            f.push((fact::CREATE_READ_S.into(), c.1 + r.1));
        }
        let all: Option<Vec<_>> = (0..4).map(|p| self.phase(p)).collect();
        if let Some(all) = all {
            f.push(("total_s".into(), all.iter().map(|x| x.1).sum()));
        }
        f
    }

    fn tables(&self) -> Vec<Table> {
        let recs = self.sh.stats.recs.lock().unwrap_or_else(|e| e.into_inner());
        let us = |ns: u64| Some(ns as f64 / 1e3);
        let rows = (0..4)
            .map(|p| {
                let r = &recs[p];
                let (ops, wall) = match self.phase(p) {
                    Some((o, w)) => (Some(o as f64), Some(w)),
                    None => (None, None),
                };
                let has = r.count > 0;
                Row {
                    label: PHASES[p].into(),
                    values: vec![
                        ops,
                        wall,
                        match (ops, wall) {
                            (Some(o), Some(w)) if w > 0.0 => Some(o / w),
                            _ => None,
                        },
                        if has { us(r.percentile(50.0)) } else { None },
                        if has { us(r.percentile(95.0)) } else { None },
                        if has { us(r.percentile(99.0)) } else { None },
                        if has { us(r.max_ns) } else { None },
                    ],
                }
            })
            .collect();
        let col = |n: &str, u: &str| Column {
            name: n.into(),
            unit: u.into(),
        };
        vec![Table {
            name: TABLE.into(),
            title: "small-file phases: operations, wall time and per-operation latency".into(),
            columns: vec![
                col("ops", ""),
                col("wall_s", "s"),
                col("ops_per_s", "op/s"),
                col("p50_us", "µs"),
                col("p95_us", "µs"),
                col("p99_us", "µs"),
                col("max_us", "µs"),
            ],
            rows,
        }]
    }

    fn warnings(&self) -> Vec<Warning> {
        let mut w = self.sh.warnings.clone();
        let left = self.sh.leftovers.lock().unwrap_or_else(|e| e.into_inner());
        if !left.is_empty() {
            w.push(Warning {
                kind: WarningKind::Errors,
                message: format!(
                    "{} file(s) hostbench created could not be removed, e.g. {}",
                    left.len(),
                    left[0]
                ),
            });
        }
        w
    }
}

static SEQ: AtomicU64 = AtomicU64::new(0);

/// The time to create and read back every file, the figure `max_seconds` is checked against.
pub const CREATE_READ_S: FigureDef = FigureDef {
    name: fact::CREATE_READ_S,
    label: "creates+reads",
    unit: "s",
    better: Better::Lower,
};

impl Workload for SmallFiles {
    fn id(&self) -> &'static str {
        "smallfiles"
    }
    fn category(&self) -> Category {
        Category::Disk
    }
    fn summary(&self) -> &'static str {
        "small files: create, stat, read and delete, one file operation per event"
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
        if let Some(v) = r.workload.facts.get(fact::CREATE_READ_S) {
            f.push(CREATE_READ_S.at(*v));
        }
        if let Some(t) = r.tables.iter().find(|t| t.name == TABLE) {
            for p in PHASES {
                if let Some(v) = t.get(p, "ops_per_s") {
                    f.push(Figure::labelled(
                        &format!("{p}_ops_per_s"),
                        &format!("{p}s per second"),
                        "op/s",
                        v,
                        Better::Higher,
                    ));
                }
            }
        }
        f.extend(r.default_figures());
        f
    }
    fn commands(&self) -> &'static [&'static str] {
        &["smallfiles"]
    }
    fn small_params(&self) -> &'static [(&'static str, &'static str)] {
        &[("files", "40")]
    }
    fn setup(&self, ctx: &SetupCtx<'_>) -> Result<Box<dyn Instance>, WorkloadError> {
        let p = ctx.params;
        let dir = p.text("dir");
        if dir.is_empty() {
            return Err(WorkloadError::usage(
                "smallfiles needs a directory to test: give --directory DIR (a directory on the file system you want to measure)",
            ));
        }
        let dir = PathBuf::from(dir);
        files::check_dir(&dir)?;
        let n = p.int("files") as u64;
        let size = p.int("size") as u64;
        // Each file takes at least a block, plus its inode and directory entry.
        let need = n.saturating_mul(size.next_multiple_of(4096).max(4096));
        files::ensure_space(&dir, need, &format!("{n} files of {size} bytes"))?;
        let root = dir.join(format!(
            "{}smallfiles-{}-{}",
            files::PREFIX,
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&root).map_err(|e| {
            WorkloadError::environment(format!("cannot create {}: {e}", root.display()))
        })?;
        let fanout = p.int("fanout") as usize;
        let mut subdirs = Vec::with_capacity(fanout);
        for i in 0..fanout {
            let d = root.join(format!("d{i:04}"));
            if let Err(e) = std::fs::create_dir(&d) {
                for s in &subdirs {
                    let _ = std::fs::remove_dir(s);
                }
                let _ = std::fs::remove_dir(&root);
                return Err(WorkloadError::environment(format!(
                    "cannot create {}: {e}",
                    d.display()
                )));
            }
            subdirs.push(d);
        }
        let mut warnings = Vec::new();
        if let Some(t) = files::fs_type(&dir).filter(|t| t.in_memory()) {
            warnings.push(Warning {
                kind: WarningKind::PageCache,
                message: format!(
                    "{} is on {}, which keeps files in RAM: the figures describe memory, not a disk",
                    dir.display(),
                    t.label()
                ),
            });
        }
        let threads = ctx.threads.max(1);
        Ok(Box::new(SmallInstance {
            sh: std::sync::Arc::new(Shared {
                root,
                subdirs,
                files: n,
                size: size as usize,
                threads,
                max_seconds: p.float("max_seconds"),
                arrived: Default::default(),
                quit: AtomicBool::new(false),
                stats: PhaseStats {
                    recs: Mutex::new((0..4).map(|_| LatencyRec::default()).collect()),
                    start_ns: std::array::from_fn(|_| AtomicU64::new(u64::MAX)),
                    end_ns: Default::default(),
                    ops: Default::default(),
                },
                leftovers: Mutex::new(Vec::new()),
                warnings,
            }),
        }))
    }
}
