//! fio's statistics of a `disk.fio` run, typed: the result's `fio` section. The workload
//! fills it once, at the end of the run (clones of a `group_reporting` job already merged as
//! fio merges them), and fio's layouts (normal text, JSON, json+) read it and nothing else of
//! the kind: no job text parsed again, no sizes parsed again, no statistics merged again.
//!
//! Units: latencies in ns, bandwidth samples in KiB/s, IOPS samples in I/Os per second,
//! times in ms, sizes in bytes. A [`FioStat`] keeps fio's running statistics (count, min,
//! max, mean and the sum of squared deviations), so blocks merge exactly; a [`FioBins`] is
//! fio's latency histogram (buckets of [`crate::fio_hist`]) with its empty buckets left out.

use crate::fio_hist::PLAT_NR;
use serde::{Deserialize, Serialize};

/// fio's synchronous engines (`FIO_SYNCIO`) among hostbench's, by fio's name: one I/O at a
/// time whatever `iodepth` says (fio notes "queue depth will be capped at 1"). null is not
/// one (fio gives it a queue above iodepth=1). The workload's `EngineKind::is_sync` is
/// checked against this list.
pub const FIO_SYNCIO_ENGINES: &[&str] = &[
    "sync",
    "psync",
    "vsync",
    "pvsync",
    "pvsync2",
    "mmap",
    "falloc",
    "ftruncate",
    "e4defrag",
    "cpuio",
    "exec",
    "filecreate",
    "filestat",
    "filedelete",
    "net",
    "netsplice",
];

/// fio's view of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioResult {
    /// Process id of the hostbench that ran the jobs (fio's job header prints its own).
    pub pid: u32,
    /// The options of the `[global]` sections, in order.
    pub global_options: Vec<FioOption>,
    /// The jobs, in order.
    pub jobs: Vec<FioJob>,
    /// The report's job blocks, in order: one per clone, or, with `group_reporting`, one per
    /// run of consecutive clones of one reporting group (fio's rule), merged. A clone that
    /// never started (stopped by `exitall` first) has a block with no I/O.
    pub blocks: Vec<FioBlock>,
    /// The job files' block devices over the run (fio's `disk_util`); empty when no job
    /// keeps `disk_util` on or the files are not on a block device.
    pub disks: Vec<FioDisk>,
    /// `--idle-prof=system|percpu`: how idle the CPUs stayed while the jobs ran (fio's
    /// `cpu_idleness`; schema 1.16, absent without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_idleness: Option<FioIdleness>,
}

/// One option as written (`rw=randread`; a bare flag has an empty value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioOption {
    /// Option name as written.
    pub name: String,
    /// Its value as written (empty for a bare flag).
    pub value: String,
}

/// One job as the workload understood it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioJob {
    /// The job's name.
    pub name: String,
    /// The job's own options, as written (fio's JSON "job options").
    pub options: Vec<FioOption>,
    /// fio's name of the I/O pattern (`read`, `randrw`, `rw`, ...).
    pub rw: String,
    /// Block size of reads, bytes.
    pub bs_read: u64,
    /// Block size of writes, bytes.
    pub bs_write: u64,
    /// fio's name of the engine (`psync`, `libaio`, ...).
    pub ioengine: String,
    /// `iodepth` as given (1 by default).
    pub iodepth: u32,
    /// Clones of the job.
    pub numjobs: u32,
    /// `thread`: fio would start threads, not processes, for it.
    pub thread: bool,
    /// Its reporting group (fio's `g=`): 0 for the first job, one more at each job with
    /// `stonewall` or `new_group` (absent in results before schema 1.x: 0).
    #[serde(default)]
    pub groupid: u32,
    /// `stonewall` (`wait_for_previous`): the job started only when every job before it had
    /// ended, so it begins a new phase of the run (schema 1.10; absent in older results:
    /// read from the job's options, [`FioResult::phase_starts`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stonewall: bool,
    /// The job's options that shape its report (percentiles, `unified_rw_reporting`,
    /// `description`); absent in results before schema 1.4: fio's defaults.
    #[serde(default, skip_serializing_if = "FioReportOpts::is_default")]
    pub report: FioReportOpts,
    /// Smallest and largest block size of reads, writes and trims (fio's start-up line
    /// `bs=(R) 4096B-16.0KiB, (W) ..., (T) ...`), from `bs`, `bsrange` or `bssplit` (schema
    /// 1.5; absent in older results: `bs_read`/`bs_write`). Two entries, no trims': the job
    /// said `bs_is_seq_rand`, and they are the sizes of I/Os placed sequentially and at
    /// random (fio's line then ends in `bs_is_seq_rand` instead of `(T) ...`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bs_ranges: Vec<[u64; 2]>,
    /// An `ioengine=exec` job's program, for the lines fio prints as each clone starts it
    /// (absent for other engines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<FioExec>,
    /// An `ioengine=cpuio` job's settings, for the line fio prints as each clone starts
    /// (absent for other engines, and in older results: read from the options).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuio: Option<FioCpuio>,
}

/// What an `ioengine=cpuio` job burns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioCpuio {
    /// `cpuload`, percent of a CPU (at most 100).
    pub load: u32,
    /// `cpumode`: `noop` or `qsort`.
    pub mode: String,
    /// `cpuchunks`, µs of one cycle.
    pub cycle_us: u64,
}

/// What an `ioengine=exec` job runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioExec {
    /// `program`, as written.
    pub program: String,
    /// `arguments` as written (absent when not given: fio prints `(null)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
    /// `arguments` with `%r` (the runtime in seconds) and `%n` (the job's name) replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expanded: Option<String>,
    /// `std_redirect`: the program's stdout and stderr went to `NAME.stdout`/`NAME.stderr`.
    pub std_redirect: bool,
}

/// A job's options that shape fio's report of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FioReportOpts {
    /// `percentile_list`, as given (sorted when used); empty = fio's 17 defaults.
    pub percentile_list: Vec<f64>,
    /// Decimals of the percentiles in the normal layout (the most typed in
    /// `percentile_list`; 2 for the defaults).
    pub percentile_precision: u32,
    /// `clat_percentiles` (fio's default 1).
    pub clat_percentiles: bool,
    /// `lat_percentiles` (default 0).
    pub lat_percentiles: bool,
    /// `slat_percentiles` (default 0).
    pub slat_percentiles: bool,
    /// `unified_rw_reporting`.
    pub unified_rw_reporting: FioUnified,
    /// `description`, empty when not given.
    pub description: String,
    /// Bandwidths in bits per second in the normal layout (`BW=3075Mibit/s`): fio's
    /// `unit_base=1`, or its default for the `net` engine (`unit_base=0`, the engine's
    /// `FIO_BIT_BASED`). JSON and terse stay in bytes.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bits: bool,
    /// `significant_figures` (1 to 10, fio's default 4): the digits of the normal layout's
    /// rates and amounts (JSON and terse are not affected).
    pub sig_figs: u32,
}

impl Default for FioReportOpts {
    fn default() -> Self {
        FioReportOpts {
            percentile_list: Vec::new(),
            percentile_precision: 2,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            unified_rw_reporting: FioUnified::None,
            description: String::new(),
            bits: false,
            sig_figs: 4,
        }
    }
}

impl FioReportOpts {
    /// Whether every option is fio's default (the result then leaves the section out).
    pub fn is_default(&self) -> bool {
        *self == FioReportOpts::default()
    }

    /// The percentiles to report, sorted: `percentile_list`, or fio's defaults.
    pub fn percentiles(&self) -> Vec<f64> {
        if self.percentile_list.is_empty() {
            return crate::fio_hist::PERCENTILES.to_vec();
        }
        let mut v = self.percentile_list.clone();
        v.sort_by(f64::total_cmp);
        v
    }
}

/// fio's `unified_rw_reporting`: how reads and writes are reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FioUnified {
    /// `none` (`0`): reads and writes apart.
    #[default]
    None,
    /// `mixed` (`1`): one `mixed` direction only.
    Mixed,
    /// `both` (`2`): reads and writes, then `mixed`.
    Both,
}

/// One job block of fio's report: a clone, or a job's clones merged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioBlock {
    /// Index of its job in [`FioResult::jobs`] (for a merged block, the last merged clone's
    /// job, whose options fio's JSON shows).
    pub job: usize,
    /// The job's name.
    pub name: String,
    /// Reporting group.
    pub groupid: u32,
    /// Clones in the block (fio's `jobs=`).
    pub clones: u32,
    /// Run time, ms (fio's `job_runtime`: a group-reported block's clones' added up).
    pub runtime_ms: u64,
    /// User CPU time, % of the run time (the clones' mean).
    pub usr_cpu_pct: f64,
    /// System CPU time, % of the run time (the clones' mean).
    pub sys_cpu_pct: f64,
    /// Context switches.
    pub ctx: u64,
    /// Major page faults.
    pub majf: u64,
    /// Minor page faults.
    pub minf: u64,
    /// Zone resets (`zonemode=zbd`: a full zone's write pointer set back to its start;
    /// fio's `; N zone resets` after the writes). Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub zone_resets: u64,
    /// Queue depth the engine used (1 for the synchronous engines).
    pub iodepth: u32,
    /// `gtod_reduce`: no latency figures.
    pub gtod_reduce: bool,
    /// Reads.
    pub read: FioDir,
    /// Writes.
    pub write: FioDir,
    /// Trims (`rw=trim`, `randtrim`, `trimwrite`; schema 1.7, absent when the block did
    /// none).
    #[serde(default, skip_serializing_if = "FioDir::is_unused")]
    pub trim: FioDir,
    /// fsync/fdatasync latency, ns.
    pub sync: FioStat,
    /// fsync/fdatasync latency histogram.
    pub sync_bins: FioBins,
    /// I/Os in flight when one was submitted, in fio's buckets 1, 2, 4, 8, 16, 32, >=64.
    pub iodepth_level: [u64; 7],
    /// I/Os per submit call, in fio's buckets 0, 4, 8, 16, 32, 64, >=64.
    pub iodepth_submit: [u64; 7],
    /// I/Os per completion reap, in the same buckets.
    pub iodepth_complete: [u64; 7],
    /// The error a clone of the block ended with (fio's `err=`), absent when none did
    /// (schema 1.5; absent in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<FioError>,
    /// fio's steady-state detection (`ss_dur`), absent when the block's job asks for none
    /// (schema 1.7; absent in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<FioSteadyState>,
    /// The errors the block's clones met and counted (`continue_on_error` or
    /// `ignore_error` set: fio's `errors    : total=N, first_error=E/<text>`, JSON
    /// `total_err`/`first_error`); absent when its job continues on no error (schema 1.8;
    /// absent in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<FioErrorCount>,
    /// fio's queue-depth search (`latency_target`, `latency_window`, `latency_percentile`):
    /// the options and the depth it ended at; absent when the block's job sets none of
    /// them (then fio reports target 0, window 0, percentile 100 and the job's `iodepth`).
    /// Schema 1.9; absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<FioLatencyTarget>,
}

/// fio's queue-depth search of a block (`latency_target`): what it aimed at and where it
/// ended, the last merged clone's (fio's `latency_depth`, `latency_target`,
/// `latency_window`, `latency_percentile`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioLatencyTarget {
    /// `latency_target`, ns (0: no search).
    pub target_ns: u64,
    /// `latency_window`, µs.
    pub window_us: u64,
    /// `latency_percentile`: the share of I/Os, in percent, that must finish within the
    /// target.
    pub percentile: f64,
    /// The queue depth the search ended at (the job's `iodepth` without a search).
    pub depth: u32,
}

/// fio's steady-state detection of a block (`ss=`, `ss_dur=`): the criterion, whether it
/// was attained, and the last window of per-second samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioSteadyState {
    /// IOPS (else bandwidth) is the measure.
    pub iops: bool,
    /// The criterion is the slope (else the largest deviation from the mean).
    pub slope: bool,
    /// The limit is a percentage of the mean.
    pub pct: bool,
    /// The limit.
    pub limit: f64,
    /// `ss_dur`: samples in the window (one a second).
    pub duration: u32,
    /// The criterion was met (the job stopped then).
    pub attained: bool,
    /// The criterion's last value (in % with `pct`); null when it is undefined (fio's
    /// `nan`: a percentage of a zero mean, a slope over a single sample).
    pub criterion: Option<f64>,
    /// The last largest deviation from the mean (deviation criteria); null when undefined.
    pub max_deviation: Option<f64>,
    /// The last slope (slope criteria); null when undefined.
    pub slope_value: Option<f64>,
    /// Bandwidth samples, bytes/s, oldest first.
    pub bw: Vec<u64>,
    /// IOPS samples, oldest first.
    pub iops_data: Vec<u64>,
}

impl FioSteadyState {
    /// fio's spelling of the criterion (`iops_slope:0.010000%`).
    pub fn ss(&self) -> String {
        format!(
            "{}{}:{:.6}{}",
            if self.iops { "iops" } else { "bw" },
            if self.slope { "_slope" } else { "" },
            self.limit as f32,
            if self.pct { "%" } else { "" }
        )
    }
    /// The integer mean of the bandwidth samples (bytes/s), as fio computes it.
    pub fn bw_mean(&self) -> u64 {
        self.bw.iter().sum::<u64>() / (self.bw.len().max(1) as u64)
    }
    /// The integer mean of the IOPS samples.
    pub fn iops_mean(&self) -> u64 {
        self.iops_data.iter().sum::<u64>() / (self.iops_data.len().max(1) as u64)
    }
}

/// The errors a block counted under `continue_on_error` (fio's `total_err_count`,
/// `first_error`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioErrorCount {
    /// Errors counted: every non-fatal one, and the one that ended a clone when its type
    /// continues.
    pub total: u64,
    /// The first counted error's number (0: none), the last merged clone's as in fio.
    pub first_errno: i32,
    /// The first non-fatal error, as fio's job header shows it (`err=28 (..., func=xfer,
    /// error=...)`) when no clone of the block ended with an error; its `clones` is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<FioError>,
}

/// The error that ended a clone (fio's per-job `err=`): the other jobs go on unless
/// `exitall_on_error` stops them, and fio's exit status counts the clones that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioError {
    /// The error number (fio's `err=28`, JSON `error`): the first failing clone's.
    pub errno: i32,
    /// Where it happened, in fio's words (`io_u error`, `fsync`).
    pub func: String,
    /// The system's text for the error (`No space left on device`).
    pub text: String,
    /// What failed, as fio reports it at the time (`io_u error on file F: ...: write
    /// offset=0, buflen=4096`).
    pub detail: String,
    /// Clones of the block that ended with an error.
    pub clones: u32,
    /// Of [`FioError::clones`], those whose files fio's parent failed to lay out before any
    /// job started (`create_serialize`, the default): fio printed their `fio: pid=0, err=...`
    /// line on stderr then, so the report's end lines leave them out (since 1.14).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub setup_clones: u32,
}

/// One direction (reads or writes) of a block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioDir {
    /// Bytes transferred.
    pub io_bytes: u64,
    /// I/Os completed.
    pub total_ios: u64,
    /// I/Os that transferred less than asked.
    pub short_ios: u64,
    /// UDP messages the `net` engine's receiver found missing from the sender's sequence
    /// numbers (fio's `drop_ios`; 0 for every other job).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub drop_ios: u64,
    /// Run time, ms (0 when the job does no I/O in this direction).
    pub runtime_ms: u64,
    /// Submission latency, ns (none for the synchronous engines).
    pub slat: FioStat,
    /// Completion latency, ns.
    pub clat: FioStat,
    /// Total latency, ns.
    pub lat: FioStat,
    /// Bandwidth samples (every 500 ms), KiB/s.
    pub bw: FioStat,
    /// IOPS samples (every 500 ms).
    pub iops: FioStat,
    /// Completion latency histogram.
    pub clat_bins: FioBins,
    /// Total latency histogram (kept with `lat_percentiles` only).
    #[serde(default, skip_serializing_if = "FioBins::is_empty")]
    pub lat_bins: FioBins,
    /// Submission latency histogram (kept with `slat_percentiles` only).
    #[serde(default, skip_serializing_if = "FioBins::is_empty")]
    pub slat_bins: FioBins,
    /// fio's per-priority statistics (`cmdprio_*`, or clones of different `prio` merged
    /// by `group_reporting`): one entry per I/O priority, in fio's order; empty when the
    /// block keeps none. fio prints them when at least two have samples (schema 1.x;
    /// absent in older results).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prios: Vec<FioPrio>,
}

/// The I/Os of one priority in one direction: their completion latency (their total
/// latency when the job has `lat_percentiles`, as fio keeps it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioPrio {
    /// The priority: class << 13 | level (fio's `ioprio`; 0 = none set).
    pub ioprio: u32,
    /// The latency, ns.
    pub lat: FioStat,
    /// Its histogram.
    pub bins: FioBins,
}

impl FioPrio {
    /// The class (0 none, 1 realtime, 2 best-effort, 3 idle).
    pub fn class(&self) -> u32 {
        self.ioprio >> 13
    }
    /// The level within the class (0 highest .. 7).
    pub fn level(&self) -> u32 {
        self.ioprio & 7
    }

    /// Adds `src`'s entries into `dst`, each to the entry of its priority (appended when
    /// `dst` has none), as fio sums a group's per-priority statistics.
    pub fn merge_into(dst: &mut Vec<FioPrio>, src: &[FioPrio]) {
        for p in src {
            match dst.iter_mut().find(|d| d.ioprio == p.ioprio) {
                Some(d) => {
                    d.lat.merge(&p.lat);
                    d.bins.add(&p.bins);
                }
                None => dst.push(p.clone()),
            }
        }
    }

    /// Whether fio prints them: at least two priorities have samples.
    pub fn shown(prios: &[FioPrio]) -> bool {
        prios.iter().filter(|p| p.lat.n > 0).count() >= 2
    }
}

/// fio's running statistics of one metric.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioStat {
    /// Samples.
    pub n: u64,
    /// Smallest (0 when there are none).
    pub min: u64,
    /// Largest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// Sum of squared deviations from the mean (the variance is `m2 / (n - 1)`).
    pub m2: f64,
}

/// A latency histogram in fio's buckets: `[bucket, count]` pairs of the non-empty buckets,
/// in bucket order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FioBins(pub Vec<[u64; 2]>);

/// fio's CPU idleness profile (`--idle-prof`): a `SCHED_IDLE` thread per CPU counted
/// calibrated units of work while the jobs ran; what it counted is the CPU time nothing
/// else wanted — other processes' and, on a virtual machine, the hypervisor's steal
/// included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioIdleness {
    /// `system` or `percpu` (`calibrate` only when printed alone, never stored).
    pub mode: String,
    /// The CPUs' mean idleness, percent.
    pub system: f64,
    /// Each configured CPU's idleness, percent (`percpu` only; empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_cpu: Vec<f64>,
    /// Mean over the CPUs of the calibrated unit of work's time, µs (0 when a CPU's
    /// thread could not be pinned or set idle: then every figure is 0, as in fio).
    pub unit_mean_us: f64,
    /// Sample standard deviation over the CPUs of that time, µs (0 with one CPU).
    pub unit_stddev_us: f64,
}

/// One block device's counters over the run (fio's `disk_util`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioDisk {
    /// Device name (`sda`, `nvme0n1`).
    pub name: String,
    /// Reads completed.
    pub read_ios: u64,
    /// Writes completed.
    pub write_ios: u64,
    /// Reads merged.
    pub read_merges: u64,
    /// Writes merged.
    pub write_merges: u64,
    /// Sectors read.
    pub read_sectors: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// Time spent reading, ms.
    pub read_ticks: u64,
    /// Time spent writing, ms.
    pub write_ticks: u64,
    /// Weighted time spent with I/O in flight, ms.
    pub in_queue: u64,
    /// Busy time, % of the run.
    pub util: f64,
}

impl FioStat {
    /// Adds another set of samples of the same metric (Chan et al.'s parallel update, as fio
    /// merges the clones of a group).
    pub fn merge(&mut self, o: &FioStat) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        let n = (self.n + o.n) as f64;
        let d = o.mean - self.mean;
        self.mean += d * o.n as f64 / n;
        self.m2 += o.m2 + d * d * self.n as f64 * o.n as f64 / n;
        self.n += o.n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    /// Adds the rate samples of another clone or direction: fio's pure sum
    /// (`stat.c:sum_stat(.., true)`): the rates add up figure by figure and so do the
    /// sample counts (three clones of 3 samples each print `samples=9`, and fio's stddev is
    /// over that count); a side without samples adds nothing.
    pub fn sum(&mut self, o: &FioStat) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        self.min += o.min;
        self.max += o.max;
        self.mean += o.mean;
        self.m2 += o.m2;
        self.n += o.n;
    }

    /// Standard deviation over N−1 (0 for fewer than 2 samples), as fio prints it.
    pub fn stddev(&self) -> f64 {
        if self.n > 1 {
            (self.m2 / (self.n - 1) as f64).sqrt()
        } else {
            0.0
        }
    }
}

impl FioBins {
    /// No bucket counted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every count of `o` added (bucket by bucket).
    pub fn add(&mut self, o: &FioBins) {
        if o.is_empty() {
            return;
        }
        let mut d = self.dense();
        for (a, b) in d.iter_mut().zip(o.dense()) {
            *a += b;
        }
        *self = FioBins::from_dense(&d);
    }

    /// From a full bucket array.
    pub fn from_dense(counts: &[u64]) -> FioBins {
        FioBins(
            counts
                .iter()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(|(b, c)| [b as u64, *c])
                .collect(),
        )
    }

    /// The full bucket array ([`PLAT_NR`] buckets; a bucket past the end is dropped).
    pub fn dense(&self) -> Vec<u64> {
        let mut v = vec![0; PLAT_NR];
        for &[b, c] in &self.0 {
            if let Some(slot) = usize::try_from(b).ok().and_then(|b| v.get_mut(b)) {
                *slot += c;
            }
        }
        v
    }
}

impl FioDir {
    /// A direction the block never used (nothing issued, no runtime): left out of the
    /// result for trims.
    pub fn is_unused(&self) -> bool {
        self.total_ios == 0 && self.io_bytes == 0 && self.runtime_ms == 0
    }

    /// fio's `mixed` direction of `unified_rw_reporting` (`stat.c:sum_thread_stats` into
    /// one direction): bytes, I/Os and histograms added, latencies merged exactly, the
    /// rate samples added figure by figure (samples counted in both), the longest runtime.
    pub fn mixed(dirs: &[&FioDir]) -> FioDir {
        let mut m = FioDir::default();
        for d in dirs {
            m.io_bytes += d.io_bytes;
            m.total_ios += d.total_ios;
            m.short_ios += d.short_ios;
            m.drop_ios += d.drop_ios;
            m.runtime_ms = m.runtime_ms.max(d.runtime_ms);
            m.slat.merge(&d.slat);
            m.clat.merge(&d.clat);
            m.lat.merge(&d.lat);
            m.bw.sum(&d.bw);
            m.iops.sum(&d.iops);
            m.clat_bins.add(&d.clat_bins);
            m.lat_bins.add(&d.lat_bins);
            m.slat_bins.add(&d.slat_bins);
            FioPrio::merge_into(&mut m.prios, &d.prios);
        }
        m
    }

    /// Bandwidth over the direction's run time, bytes/s (fio's integer arithmetic).
    pub fn bw_bytes(&self) -> u64 {
        (self.io_bytes * 1000)
            .checked_div(self.runtime_ms)
            .unwrap_or(0)
    }

    /// I/Os per second over the direction's run time.
    pub fn iops(&self) -> f64 {
        if self.runtime_ms == 0 {
            0.0
        } else {
            self.total_ios as f64 * 1000.0 / self.runtime_ms as f64
        }
    }
}

impl FioResult {
    /// What failed when jobs ended with an error (fio's per-job `err=`; the other jobs went
    /// on): the first failed block's job and error, and how many clones failed in all.
    /// `None` when no job failed. A run with such a job failed, as fio's exit status says:
    /// the result's outcome says so ([`crate::result::RunResult::build`]).
    pub fn job_failure(&self) -> Option<String> {
        let mut failed = self
            .blocks
            .iter()
            .filter_map(|b| Some((b, b.error.as_ref()?)));
        let (b, e) = failed.next()?;
        let clones: u32 = e.clones + failed.map(|(_, e)| e.clones).sum::<u32>();
        let more = if clones > e.clones {
            format!(" ({clones} clones ended with an error in all)")
        } else {
            String::new()
        };
        Some(format!(
            "job '{}' ended with err={} ({}): {}{more}",
            b.name, e.errno, e.text, e.detail
        ))
    }

    /// The reporting groups, `0..=` the largest group id (fio prints a "Run status group"
    /// for each, empty or not).
    pub fn groups(&self) -> std::ops::RangeInclusive<u32> {
        let last = self.jobs.iter().map(|j| j.groupid).max().unwrap_or(0);
        0..=last
    }

    /// Whether each job begins a new phase of the run: the first job, and each job with
    /// `stonewall`, which started only when every job before it had ended. Results before
    /// schema 1.10 lack [`FioJob::stonewall`]; theirs is read from the job's own options and
    /// the `[global]` ones (`stonewall`, `wait_for_previous`, not `=0`).
    pub fn phase_starts(&self) -> Vec<bool> {
        let set = |o: &[FioOption]| {
            o.iter().any(|o| {
                matches!(o.name.as_str(), "stonewall" | "wait_for_previous")
                    && !matches!(o.value.trim(), "0" | "false" | "no" | "off")
            })
        };
        let global = set(&self.global_options);
        self.jobs
            .iter()
            .enumerate()
            .map(|(i, j)| i == 0 || j.stonewall || global || set(&j.options))
            .collect()
    }

    /// The run's throughput as fio defines a group's (`Run status group`: all its bytes
    /// over its longest job's run time, start delays and waits left out), taken over the
    /// run's phases one after another: the jobs between two stonewalls run together and form
    /// a phase; the rate of a direction is all its I/O over the sum of the phases' longest
    /// run times in that direction. For one group that is fio's own `bw=` and its IOPS; for
    /// stonewalled groups it is the I/O over the time the phases measured, never over the
    /// whole wall time (which counts the waits between them).
    ///
    /// The `iops` of all directions counts each message of a `net` transfer once: when the
    /// run has net jobs that send and net jobs that receive (both ends on this host), the
    /// receivers' reads are left out of it (the senders' writes count: a multicast message
    /// read by two readers is one message, a pingpong round trip one). Per direction the
    /// figures stay fio's group lines (`READ:` the receivers', `WRITE:` the senders').
    pub fn rates(&self) -> FioRates {
        let net = |b: &FioBlock| {
            self.jobs
                .get(b.job)
                .is_some_and(|j| j.ioengine == "net" || j.ioengine == "netsplice")
        };
        let net_dirs = self
            .blocks
            .iter()
            .filter(|b| net(b))
            .fold([false; 2], |[r, w], b| {
                [r || b.read.total_ios > 0, w || b.write.total_ios > 0]
            });
        let both_ends = net_dirs == [true, true];
        let starts = self.phase_starts();
        // Each job's phase: one more at each job after the first that starts one.
        let phase_of: Vec<usize> = starts
            .iter()
            .enumerate()
            .scan(0usize, |p, (i, &s)| {
                *p += usize::from(s && i > 0);
                Some(*p)
            })
            .collect();
        let phases = phase_of.last().map_or(1, |&p| p + 1);
        // Per phase: the longest run time per direction and over all directions, ms.
        let mut run = vec![[0u64; 4]; phases];
        let (mut ios, mut bytes) = ([0u64; 3], [0u64; 3]);
        // The I/Os the headline counts: all but the net receivers' when both ends are here.
        let mut counted = 0u64;
        for b in &self.blocks {
            let p = phase_of.get(b.job).copied().unwrap_or(0);
            for (d, x) in b.dirs().into_iter().enumerate() {
                if x.runtime_ms == 0 {
                    continue;
                }
                ios[d] += x.total_ios;
                if !(both_ends && d == 0 && net(b)) {
                    counted += x.total_ios;
                }
                bytes[d] += x.io_bytes;
                run[p][d] = run[p][d].max(x.runtime_ms);
                run[p][3] = run[p][3].max(x.runtime_ms);
            }
        }
        let per_s = |n: u64, ms: u64| {
            if ms == 0 {
                0.0
            } else {
                n as f64 * 1000.0 / ms as f64
            }
        };
        let ms = |k: usize| run.iter().map(|r| r[k]).sum::<u64>();
        FioRates {
            iops: per_s(counted, ms(3)),
            dir_iops: std::array::from_fn(|d| per_s(ios[d], ms(d))),
            dir_bytes_per_s: std::array::from_fn(|d| per_s(bytes[d], ms(d))),
            ms: ms(3),
            dir_ms: std::array::from_fn(ms),
        }
    }
}

/// A `disk.fio` run's throughput by fio's group definition ([`FioResult::rates`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FioRates {
    /// I/Os of every direction per second.
    pub iops: f64,
    /// I/Os per second of reads, writes and trims.
    pub dir_iops: [f64; 3],
    /// Bytes per second of reads, writes and trims.
    pub dir_bytes_per_s: [f64; 3],
    /// The time `iops` is over, ms: the sum of the phases' longest run times in any
    /// direction.
    pub ms: u64,
    /// The time each direction's rates are over, ms: the sum of the phases' longest run
    /// times in that direction (a phase that did none of it adds nothing). When the
    /// directions ran in different phases these differ from `ms`, and the directions' rates
    /// do not add up to `iops`.
    pub dir_ms: [u64; 3],
}

impl FioBlock {
    /// The error fio's job header and JSON `error` show: the one a clone ended with, else
    /// the first one a `continue_on_error` job went on after (fio's `ts->error`).
    pub fn shown_error(&self) -> Option<&FioError> {
        self.error
            .as_ref()
            .or_else(|| self.errors.as_ref().and_then(|e| e.first.as_ref()))
    }

    /// Whether the block did any I/O (fio prints no block for a job without any).
    pub fn did_io(&self) -> bool {
        self.dirs()
            .iter()
            .any(|d| d.total_ios > 0 || d.io_bytes > 0)
    }

    /// Reads, writes and trims, in that order.
    pub fn dirs(&self) -> [&FioDir; 3] {
        [&self.read, &self.write, &self.trim]
    }

    /// fio's "All clients" block of a `--client` run (`client.c:handle_ts`, which adds each
    /// host's job blocks with `stat.c:sum_thread_stats`): per direction the bytes, I/Os and
    /// latency histograms added and the latencies merged exactly (never averaged
    /// percentiles), the rate samples added figure by figure, the longest runtime (so the
    /// bandwidth is all bytes over the longest runtime); the counters (context switches,
    /// faults, queue depths) added; `jobs=` the number of blocks; `job_runtime` the sum of
    /// the blocks' runtimes and the CPU shares weighted by them (fio's `usr_time` over its
    /// summed `total_run_time`); the group id the last block's; the first error. `None`
    /// for no block.
    pub fn all_clients(blocks: &[&FioBlock]) -> Option<FioBlock> {
        let last = *blocks.last()?;
        let dir = |f: fn(&FioBlock) -> &FioDir| {
            FioDir::mixed(&blocks.iter().map(|b| f(b)).collect::<Vec<_>>())
        };
        // (A group-reported block's runtime is already its clones' added up.)
        let weight = |b: &FioBlock| b.runtime_ms as f64;
        let total_weight: f64 = blocks.iter().map(|b| weight(b)).sum();
        let cpu = |f: fn(&FioBlock) -> f64| {
            if total_weight > 0.0 {
                blocks.iter().map(|b| f(b) * weight(b)).sum::<f64>() / total_weight
            } else {
                0.0
            }
        };
        let add7 = |f: fn(&FioBlock) -> &[u64; 7]| {
            let mut v = [0u64; 7];
            for b in blocks {
                for (a, x) in v.iter_mut().zip(f(b)) {
                    *a += x;
                }
            }
            v
        };
        let mut sync = FioStat::default();
        let mut sync_bins = FioBins::default();
        for b in blocks {
            sync.merge(&b.sync);
            sync_bins.add(&b.sync_bins);
        }
        Some(FioBlock {
            job: last.job,
            name: "All clients".into(),
            groupid: last.groupid,
            clones: blocks.len() as u32,
            runtime_ms: blocks.iter().map(|b| b.runtime_ms).sum(),
            usr_cpu_pct: cpu(|b| b.usr_cpu_pct),
            sys_cpu_pct: cpu(|b| b.sys_cpu_pct),
            ctx: blocks.iter().map(|b| b.ctx).sum(),
            majf: blocks.iter().map(|b| b.majf).sum(),
            minf: blocks.iter().map(|b| b.minf).sum(),
            zone_resets: blocks.iter().map(|b| b.zone_resets).sum(),
            iodepth: last.iodepth,
            gtod_reduce: blocks.iter().all(|b| b.gtod_reduce),
            read: dir(|b| &b.read),
            write: dir(|b| &b.write),
            trim: dir(|b| &b.trim),
            sync,
            sync_bins,
            iodepth_level: add7(|b| &b.iodepth_level),
            iodepth_submit: add7(|b| &b.iodepth_submit),
            iodepth_complete: add7(|b| &b.iodepth_complete),
            error: blocks.iter().find_map(|b| b.error.clone()),
            // fio's sum_thread_stats leaves the counted errors out: "All clients" has no
            // errors line, whatever the hosts counted.
            errors: None,
            steadystate: None,
            // fio's sum_thread_stats leaves the search out: "All clients" has no latency
            // line.
            latency_target: None,
        })
    }
}

/// Serde's test for a count left out when 0.
fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(v: &[u64]) -> FioStat {
        let mut s = FioStat::default();
        for &x in v {
            let one = FioStat {
                n: 1,
                min: x,
                max: x,
                mean: x as f64,
                m2: 0.0,
            };
            s.merge(&one);
        }
        s
    }

    /// Job `j` of group `g`, with its own options `opts`.
    fn job(g: u32, stonewall: bool, opts: &[&str]) -> FioJob {
        FioJob {
            groupid: g,
            stonewall,
            options: opts
                .iter()
                .map(|o| FioOption {
                    name: o.split('=').next().unwrap().into(),
                    value: o.split_once('=').map_or("", |x| x.1).into(),
                })
                .collect(),
            ..FioJob::default()
        }
    }

    /// A block of job `j` that read `reads` and wrote `writes` I/Os of 4 KiB, each direction
    /// over `ms` (0 I/Os: the direction did not run).
    fn block(j: usize, reads: u64, writes: u64, ms: u64) -> FioBlock {
        let dir = |n: u64| FioDir {
            io_bytes: n * 4096,
            total_ios: n,
            runtime_ms: if n > 0 { ms } else { 0 },
            ..FioDir::default()
        };
        FioBlock {
            job: j,
            runtime_ms: ms,
            read: dir(reads),
            write: dir(writes),
            ..FioBlock::default()
        }
    }

    fn run(jobs: Vec<FioJob>, blocks: Vec<FioBlock>) -> FioResult {
        FioResult {
            pid: 1,
            global_options: Vec::new(),
            jobs,
            blocks,
            disks: Vec::new(),
            cpu_idleness: None,
        }
    }

    /// One group: fio's `bw=` (all bytes over the longest runtime) and its IOPS.
    #[test]
    fn one_group_rates_are_fios_group_line() {
        let f = run(
            vec![job(0, false, &[]), job(0, false, &[])],
            vec![block(0, 1000, 0, 1000), block(1, 3000, 500, 500)],
        );
        let x = f.rates();
        assert_eq!(x.dir_iops[0], 4000.0);
        assert_eq!(x.dir_bytes_per_s[0], 4000.0 * 4096.0);
        // Writes ran in one block for 500 ms: that is their longest runtime.
        assert_eq!(x.dir_iops[1], 1000.0);
        assert_eq!(x.iops, 4500.0);
    }

    /// Stonewalled phases add their times; a `new_group` job without stonewall runs in the
    /// phase it is in, so its phase lasts its longest job. Older results (no `stonewall`
    /// field) are read from the options, `[global]` ones included; `stonewall=0` is none.
    #[test]
    fn phases_add_their_times_and_new_groups_share_theirs() {
        let blocks = || {
            vec![
                block(0, 1000, 0, 1000),
                block(1, 0, 400, 2000),
                block(2, 600, 0, 1000),
            ]
        };
        let f = run(
            vec![
                job(0, false, &[]),
                job(1, true, &[]),
                job(2, false, &["new_group"]),
            ],
            blocks(),
        );
        assert_eq!(f.phase_starts(), [true, true, false]);
        let x = f.rates();
        assert_eq!(x.dir_iops[0], 1600.0 / 2.0, "reads: 1 s + 1 s");
        assert_eq!(x.dir_iops[1], 200.0);
        assert_eq!(x.iops, 2000.0 / 3.0, "1 s, then the longer of 2 s and 1 s");
        // Each rate's own time: reads 1 s + 1 s, writes 2 s, all 1 s + 2 s.
        assert_eq!((x.ms, x.dir_ms), (3000, [2000, 2000, 0]));
        let old = run(
            vec![
                job(0, false, &[]),
                job(1, false, &["wait_for_previous"]),
                job(2, false, &["new_group"]),
            ],
            blocks(),
        );
        assert_eq!(old.rates(), x);
        let mut global = run(
            vec![job(0, false, &[]), job(1, false, &[]), job(2, false, &[])],
            blocks(),
        );
        global.global_options = vec![FioOption {
            name: "stonewall".into(),
            value: String::new(),
        }];
        assert_eq!(global.phase_starts(), [true, true, true]);
        let off = run(
            vec![job(0, false, &[]), job(1, false, &["stonewall=0"])],
            blocks()[..2].to_vec(),
        );
        assert_eq!(off.phase_starts(), [true, false]);
        assert_eq!(off.rates().iops, 1400.0 / 2.0);
    }

    /// A net transfer with both ends in the run counts each message once in `iops` (the
    /// sender's); one end alone counts its own; the directions stay fio's.
    #[test]
    fn a_net_transfer_counts_once_in_the_headline() {
        let net = |g| FioJob {
            ioengine: "net".into(),
            ..job(g, false, &[])
        };
        // Receiver 1000 reads, sender 1000 writes, 1 s each; a file job beside them.
        let f = run(
            vec![net(0), net(0), job(0, false, &[])],
            vec![
                block(0, 1000, 0, 1000),
                block(1, 0, 1000, 1000),
                block(2, 500, 0, 1000),
            ],
        );
        let x = f.rates();
        assert_eq!(x.iops, 1500.0);
        assert_eq!(x.dir_iops[..2], [1500.0, 1000.0]);
        // A receiver alone (its sender on another host): its reads are the messages.
        let f = run(vec![net(0)], vec![block(0, 1000, 0, 1000)]);
        assert_eq!(f.rates().iops, 1000.0);
    }

    /// A run that did nothing has rates of 0, not NaN.
    #[test]
    fn no_io_no_rate() {
        let x = run(vec![job(0, false, &[])], vec![block(0, 0, 0, 0)]).rates();
        assert_eq!(x.iops, 0.0);
        assert_eq!(x.dir_bytes_per_s, [0.0; 3]);
    }

    #[test]
    fn merging_equals_one_pass_over_all_samples() {
        let mut a = stat(&[10, 20, 30]);
        a.merge(&stat(&[40, 50]));
        let all = stat(&[10, 20, 30, 40, 50]);
        assert_eq!((a.n, a.min, a.max), (5, 10, 50));
        assert!((a.mean - 30.0).abs() < 1e-9 && (all.mean - 30.0).abs() < 1e-9);
        // Sample variance of 10..50 step 10 is 250.
        assert!((a.stddev() - 250f64.sqrt()).abs() < 1e-9, "{}", a.stddev());
        let mut e = FioStat::default();
        e.merge(&FioStat::default());
        assert_eq!(e, FioStat::default());
    }

    /// A block of `n` reads of 4 KiB whose latencies are `lat`, run for `ms`.
    fn reads(lat: &[u64], ms: u64, usr: f64) -> FioBlock {
        let mut dense = vec![0u64; PLAT_NR];
        for &x in lat {
            dense[crate::fio_hist::plat_idx(x)] += 1;
        }
        FioBlock {
            job: 0,
            name: "j".into(),
            groupid: 0,
            clones: 1,
            runtime_ms: ms,
            usr_cpu_pct: usr,
            sys_cpu_pct: 0.0,
            ctx: 3,
            majf: 0,
            minf: 5,
            zone_resets: 0,
            iodepth: 1,
            gtod_reduce: false,
            read: FioDir {
                io_bytes: 4096 * lat.len() as u64,
                total_ios: lat.len() as u64,
                runtime_ms: ms,
                clat: stat(lat),
                clat_bins: FioBins::from_dense(&dense),
                ..FioDir::default()
            },
            write: FioDir::default(),
            trim: FioDir::default(),
            sync: FioStat::default(),
            sync_bins: FioBins::default(),
            iodepth_level: [lat.len() as u64, 0, 0, 0, 0, 0, 0],
            iodepth_submit: [0; 7],
            iodepth_complete: [0; 7],
            error: None,
            errors: None,
            steadystate: None,
            latency_target: None,
        }
    }

    /// The "All clients" block is every host's I/O: bytes and I/Os summed, bandwidth over
    /// the longest runtime, latency statistics and histogram of all samples (not a mean of
    /// the hosts' percentiles), CPU weighted by runtime.
    #[test]
    fn all_clients_adds_every_hosts_io_and_merges_latency_exactly() {
        let a = reads(&[1000, 2000, 3000], 1000, 10.0);
        let b = reads(&[100_000, 200_000], 3000, 30.0);
        let m = FioBlock::all_clients(&[&a, &b]).expect("blocks");
        assert_eq!(m.name, "All clients");
        assert_eq!(m.clones, 2);
        assert_eq!(m.read.total_ios, 5);
        assert_eq!(m.read.io_bytes, 5 * 4096);
        assert_eq!(m.read.runtime_ms, 3000);
        assert_eq!(m.read.bw_bytes(), 5 * 4096 * 1000 / 3000);
        assert_eq!(m.runtime_ms, 4000);
        let all = stat(&[1000, 2000, 3000, 100_000, 200_000]);
        assert_eq!(
            (m.read.clat.n, m.read.clat.min, m.read.clat.max),
            (5, 1000, 200_000)
        );
        assert!((m.read.clat.mean - all.mean).abs() < 1e-6);
        assert!((m.read.clat.stddev() - all.stddev()).abs() < 1e-6);
        // The median of all five samples is 3000 (a host-mean of medians would be ~75 µs).
        let p = crate::fio_hist::percentiles(&m.read.clat_bins.dense(), 5, &[50.0]);
        assert!((2900..=3100).contains(&p[0]), "{p:?}");
        assert!((m.usr_cpu_pct - 25.0).abs() < 1e-9, "{}", m.usr_cpu_pct);
        assert_eq!((m.ctx, m.minf, m.iodepth_level[0]), (6, 10, 5));
        assert!(FioBlock::all_clients(&[]).is_none());
    }

    #[test]
    fn rates_of_clones_add_up() {
        let mut a = stat(&[100, 200]);
        a.sum(&stat(&[10, 20, 30]));
        // fio's pure sum: the counts add up too (stat.c:sum_stat).
        assert_eq!((a.n, a.min, a.max), (5, 110, 230));
        assert!((a.mean - 170.0).abs() < 1e-9);
    }

    /// unified_rw_reporting's mixed direction: sums, an exact merge of the latencies (as
    /// if every sample had been in one direction), rate samples added with their counts
    /// (fio's pure sum), the longest runtime, histograms added.
    #[test]
    fn mixed_direction_sums_as_fio() {
        let mut bins_r = vec![0u64; PLAT_NR];
        bins_r[5] = 3;
        let mut bins_w = vec![0u64; PLAT_NR];
        bins_w[5] = 1;
        bins_w[9] = 2;
        let r = FioDir {
            io_bytes: 3 * 4096,
            total_ios: 3,
            runtime_ms: 40,
            clat: stat(&[10, 20, 30]),
            bw: stat(&[100, 300]),
            clat_bins: FioBins::from_dense(&bins_r),
            ..FioDir::default()
        };
        let w = FioDir {
            io_bytes: 2 * 4096,
            total_ios: 2,
            short_ios: 1,
            runtime_ms: 50,
            clat: stat(&[40, 50]),
            bw: stat(&[10, 20, 30]),
            clat_bins: FioBins::from_dense(&bins_w),
            ..FioDir::default()
        };
        let m = FioDir::mixed(&[&r, &w]);
        assert_eq!((m.io_bytes, m.total_ios, m.short_ios), (5 * 4096, 5, 1));
        assert_eq!(m.runtime_ms, 50);
        let all = stat(&[10, 20, 30, 40, 50]);
        assert_eq!((m.clat.n, m.clat.min, m.clat.max), (5, 10, 50));
        assert!((m.clat.stddev() - all.stddev()).abs() < 1e-9);
        assert_eq!((m.bw.n, m.bw.min, m.bw.max), (5, 110, 330));
        assert!((m.bw.mean - 220.0).abs() < 1e-9, "{}", m.bw.mean);
        let mut want = vec![0u64; PLAT_NR];
        want[5] = 4;
        want[9] = 2;
        assert_eq!(m.clat_bins.dense(), want);
        assert!(m.lat_bins.is_empty() && m.slat.n == 0);
    }

    /// fio's per-priority statistics: merged by priority (new ones appended, in order),
    /// shown only when two priorities have samples; the mixed direction merges them too.
    #[test]
    fn priorities_merge_by_value_and_show_from_two() {
        let p = |ioprio: u32, v: &[u64]| FioPrio {
            ioprio,
            lat: stat(v),
            bins: FioBins(vec![[1, v.len() as u64]]),
        };
        let mut a = vec![p(0, &[10, 20])];
        assert!(!FioPrio::shown(&a));
        FioPrio::merge_into(&mut a, &[p(3 << 13, &[5]), p(0, &[30])]);
        assert_eq!(a.len(), 2);
        assert_eq!((a[0].ioprio, a[0].lat.n, a[0].lat.max), (0, 3, 30));
        assert_eq!(a[0].bins.0, vec![[1, 3]]);
        assert_eq!((a[1].class(), a[1].level()), (3, 0));
        assert!(FioPrio::shown(&a));
        let r = FioDir {
            prios: vec![p(0, &[1]), p((1 << 13) | 2, &[2])],
            ..FioDir::default()
        };
        let w = FioDir {
            prios: vec![p(0, &[3])],
            ..FioDir::default()
        };
        let m = FioDir::mixed(&[&r, &w]);
        assert_eq!(m.prios.len(), 2);
        assert_eq!(m.prios[0].lat.n, 2);
        // A direction whose priorities all have no samples shows none.
        assert!(!FioPrio::shown(&[FioPrio::default(), FioPrio::default()]));
    }

    #[test]
    fn bins_keep_only_what_was_counted() {
        let mut dense = vec![0u64; PLAT_NR];
        dense[3] = 7;
        dense[PLAT_NR - 1] = 1;
        let b = FioBins::from_dense(&dense);
        assert_eq!(b.0, vec![[3, 7], [PLAT_NR as u64 - 1, 1]]);
        assert_eq!(b.dense(), dense);
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            format!("[[3,7],[{},1]]", PLAT_NR - 1)
        );
        // A bucket that does not exist is ignored, not a panic.
        assert_eq!(FioBins(vec![[u64::MAX, 1]]).dense(), vec![0; PLAT_NR]);
    }
}
