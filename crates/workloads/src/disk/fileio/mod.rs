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

use crate::disk::files::{self, AlignedBuf};
use hostbench_core::params::{ParamKind, ParamSpec};
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counter;
use hostbench_core::result::{Figure, RunResult, Warning};
use hostbench_core::workload::*;
use std::os::fd::AsRawFd;
use std::sync::Arc;

mod config;
mod requests;
mod stages;
mod worker;

pub use config::{Config, IoMode, MODES, Mode, extra_flags, flags_str, size_str};
pub use requests::{Gen, Next, rnd_request, seq_request};

use stages::{cleanup, open_for_run, prepare};
use worker::{FileWorker, Ring, Shared, map_file};

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
        help: "which method to use for synchronization",
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

struct FileInstance {
    sh: Arc<Shared>,
}

impl Instance for FileInstance {
    fn worker(&self, _tid: usize, rng: Rng) -> Result<Worker, WorkloadError> {
        let ring = match self.sh.cfg.io {
            IoMode::Async => {
                let backlog = self.sh.cfg.backlog;
                let ring = io_uring::IoUring::new(backlog.next_power_of_two()).map_err(|e| {
                    WorkloadError::environment(format!(
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

/// The figures of a fileio run (sysbench's "File operations" and "Throughput" lines).
pub mod figures {
    use hostbench_core::result::{Better, FigureDef};

    /// Reads plus writes per second, the headline of random and mixed modes.
    pub const IO_PER_S: FigureDef = FigureDef {
        name: "io_per_s",
        label: "reads+writes per second",
        unit: "requests/s",
        better: Better::Higher,
    };
    /// Reads per second.
    pub const READS_PER_S: FigureDef = FigureDef {
        name: "reads_per_s",
        label: "reads per second",
        unit: "reads/s",
        better: Better::Higher,
    };
    /// Writes per second.
    pub const WRITES_PER_S: FigureDef = FigureDef {
        name: "writes_per_s",
        label: "writes per second",
        unit: "writes/s",
        better: Better::Higher,
    };
    /// fsync calls per second (sysbench's "fsyncs/s").
    pub const FSYNCS_PER_S: FigureDef = FigureDef {
        name: "fsyncs_per_s",
        label: "fsyncs per second",
        unit: "fsyncs/s",
        better: Better::Higher,
    };
    /// MiB read per second, the headline of `seqrd`.
    pub const READ_MIB_PER_S: FigureDef = FigureDef {
        name: "read_mib_per_s",
        label: "read throughput",
        unit: "MiB/s",
        better: Better::Higher,
    };
    /// MiB written per second, the headline of sequential writes.
    pub const WRITTEN_MIB_PER_S: FigureDef = FigureDef {
        name: "written_mib_per_s",
        label: "write throughput",
        unit: "MiB/s",
        better: Better::Higher,
    };
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
        let (rd, wr) = (
            per(Counter::BytesRead.name()) / MIB,
            per(Counter::BytesWritten.name()) / MIB,
        );
        let mode = Mode::parse(r.workload.params.text("test_mode"));
        let mut f = Vec::new();
        match mode {
            Some(m) if m.sequential() && m.writes() => f.push(figures::WRITTEN_MIB_PER_S.at(wr)),
            Some(Mode::SeqRd) => f.push(figures::READ_MIB_PER_S.at(rd)),
            _ => f.push(
                figures::IO_PER_S.at(per(Counter::Reads.name()) + per(Counter::Writes.name())),
            ),
        }
        f.push(figures::READS_PER_S.at(per(Counter::Reads.name())));
        f.push(figures::WRITES_PER_S.at(per(Counter::Writes.name())));
        f.push(figures::FSYNCS_PER_S.at(per(Counter::Other.name())));
        if !f.iter().any(|x| x.name == figures::READ_MIB_PER_S.name) {
            f.push(figures::READ_MIB_PER_S.at(rd));
        }
        if !f.iter().any(|x| x.name == figures::WRITTEN_MIB_PER_S.name) {
            f.push(figures::WRITTEN_MIB_PER_S.at(wr));
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
