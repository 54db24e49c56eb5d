//! The resolved options of a fileio run ([`Config`]): test mode, I/O mode, sizes, fsync
//! policy and open flags, checked as sysbench checks them, and printed back as sysbench
//! prints them.

use crate::disk::files::OpenOpts;
use hostbench_core::params::Params;
use hostbench_core::workload::*;
use std::path::PathBuf;

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

/// Parses `--file-extra-flags` (a comma-separated list of sync, dsync, direct).
pub fn extra_flags(text: &str) -> Result<OpenOpts, WorkloadError> {
    let mut o = OpenOpts::default();
    for f in text.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        match f {
            "sync" => o.sync = true,
            "dsync" => o.dsync = true,
            "direct" => o.direct = true,
            other => {
                return Err(WorkloadError::usage(format!(
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
            return Err(WorkloadError::usage(
                "Invalid value for --file-total-size: 0 (give a size such as 2G)",
            ));
        }
        if block == 0 {
            return Err(WorkloadError::usage(
                "Invalid value for --file-block-size: 0 (give a size such as 16K)",
            ));
        }
        let file_size = total / num;
        if file_size == 0 {
            return Err(WorkloadError::usage(format!(
                "--file-total-size={total} is smaller than --file-num={num}: each file would be empty; give a larger total or fewer files"
            )));
        }
        let mode_text = p.text("test_mode").trim();
        let mode = match (mode_text, run) {
            ("", true) => {
                return Err(WorkloadError::usage(format!(
                    "Missing required argument: --file-test-mode (one of {})",
                    MODES.join(", ")
                )));
            }
            ("", false) => None,
            (m, _) => Some(Mode::parse(m).ok_or_else(|| {
                WorkloadError::usage(format!(
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

    pub(super) fn name(i: u64) -> String {
        format!("test_file.{i}")
    }

    pub(super) fn path(&self, i: u64) -> PathBuf {
        self.dir.join(Self::name(i))
    }

    /// The command that lays out these files, for messages.
    pub(super) fn prepare_hint(&self) -> String {
        format!(
            "hostbench fileio --file-num={} --file-total-size={} prepare",
            self.num,
            size_arg(self.total)
        )
    }

    /// `--file-total-size=…` as the user would write it, for messages.
    pub(super) fn total_arg(&self) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::fileio::PARAMS;

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
        assert!(
            extra_flags("odirect")
                .unwrap_err()
                .message
                .contains("odirect")
        );
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
        let e = Config::from_params(&p(&[]), true).unwrap_err().message;
        assert!(e.contains("--file-test-mode"), "{e}");
        assert!(Config::from_params(&p(&[]), false).is_ok());
        let e = Config::from_params(&p(&[("test_mode", "rand")]), true)
            .unwrap_err()
            .message;
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
            .message;
        assert!(e.contains("empty"), "{e}");
    }
}
