//! The result of one run: one serializable value that every output format renders and the
//! store keeps. `schemas/result.v1.json` describes it; tests validate every JSON we emit.
//!
//! Units are in the field names (`_ns`, `_s`, `_per_s`). Additive changes keep
//! `schema_version` and bump `schema_minor` (docs/results.md keeps the history); anything
//! else bumps `schema_version`.

use crate::clock::ClockInfo;
use crate::fio_result::FioResult;
use crate::host::HostInfo;
use crate::layout::Layout;
use crate::params::Params;
use crate::plan::Plan;
use crate::rand::Distribution;
use crate::recorder::{Counter, LatencyRec, LatencySummary, Percentile};
use crate::runner::{IntervalSample, Measurement, StopReason, ThreadTotals, per_second};
use crate::workload::Category;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Value of the `schema` field.
pub const SCHEMA_ID: &str = "hostbench.result";
/// Current schema version.
pub const SCHEMA_VERSION: u32 = 1;
/// Current minor version of [`SCHEMA_VERSION`]: 1 added `config.layout` and `fio` (results
/// without the field are 0, written before it existed); 2 added `figures[].label`,
/// `annotations`, `suite` and `fio.jobs[].groupid`; 3 `suite.directory`; 4 fio's
/// `jobs[].report`, `blocks[].*.lat_bins`/`slat_bins` and the layout's `more_formats` and
/// `terse_version`; 5 `fio.blocks[].error` and `fio.jobs[].bs_ranges`; 6 `fleet`; 7
/// `histograms` and `fleet.parts` (a fleet's merged load),
/// `fio.blocks[].steadystate` and `fio.blocks[].trim`; 8 `fio.blocks[].errors` and the
/// directions' `prios`; 9 `fio.blocks[].latency_target` and `fio.jobs[].exec`; 10
/// `fio.jobs[].stonewall`, and a `disk.fio` run's rate figures by fio's group definition
/// ([`RunResult::upgrade_figures`]); 11 the net engine's `drop_ios` (fio's directions) and
/// `fio.jobs[].report.bits`; 12 `outcome.signal` and `fio.jobs[].report.sig_figs`; 13
/// `fio.jobs[].cpuio`.
pub const SCHEMA_MINOR: u32 = 16;

/// One run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Always `hostbench.result`.
    pub schema: String,
    /// Schema version (1).
    pub schema_version: u32,
    /// Additions to the schema version (0 when absent: written before `schema_minor`
    /// existed). Tells a reader which optional sections a result of this version can have.
    #[serde(default)]
    pub schema_minor: u32,
    /// Unique id of the run.
    pub id: String,
    /// The program that measured.
    pub tool: ToolInfo,
    /// Start of the run, RFC 3339 UTC.
    pub started_at: String,
    /// A name the user gave the run (the machine or variant it stands for).
    pub label: Option<String>,
    /// What ran.
    pub workload: WorkloadInfo,
    /// How it ran.
    pub config: RunConfig,
    /// The clock latencies were timed with and its cost per read.
    pub clock: ClockInfo,
    /// The machine.
    pub host: Option<HostInfo>,
    /// How the run ended.
    pub outcome: Outcome,
    /// Totals and rates.
    pub metrics: Metrics,
    /// Latency of one event.
    pub latency: Latency,
    /// How evenly threads shared the work.
    pub fairness: Fairness,
    /// Interval reports.
    pub intervals: Vec<Interval>,
    /// Things that make the figures less trustworthy, and what to do about them.
    pub warnings: Vec<Warning>,
    /// Result tables of workloads whose answer is more than one figure (STREAM's kernels,
    /// a latency ladder); empty for the others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<Table>,
    /// The figures people quote for this workload, headline first, each with its unit and
    /// which way is better (`events_per_s`, STREAM's `triad_best_mb_per_s`, ...). Compare and
    /// report read these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figure>,
    /// fio's statistics of a `disk.fio` run (jobs, report blocks, devices), which fio's
    /// layouts render (schema 1.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio: Option<FioResult>,
    /// Notes the user added after the run (`hostbench results annotate`): the instance
    /// type, the region, the price, as `key = value` (schema 1.2). Never a secret.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// The suite entry that made this run, when a suite did (schema 1.2): `compare` names
    /// the variant after the entry and scores the entry's figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteRef>,
    /// The fleet run this run belongs to, when `hostbench fleet` (or a run started with
    /// `HOSTBENCH_FLEET_RUN`) made it (schema 1.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetRef>,
    /// The workload's other latency distributions, by name (`http.load`: one per row of
    /// its `http_times` table that timed something), each as HdrHistogram V2 compressed,
    /// base64, ns, like `latency.hdr_histogram`: what a fleet's merge combines exactly
    /// (schema 1.7).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub histograms: BTreeMap<String, String>,
}

/// A run's place in a fleet run: which fleet run, which host as the user named it, and how
/// its start and clock compared with the host that started the fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetRef {
    /// The fleet run's id (every host's runs of one `hostbench fleet` share it).
    pub run: String,
    /// The host as the user named it (`web1`, `10.0.0.7`, an inventory name).
    pub host: String,
    /// The wall-clock instant the hosts were told to start together, Unix ns in the
    /// controller's clock; absent when the run did not wait for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_unix_ns: Option<i64>,
    /// How much later than that instant this host's run really started, ns (its own clock,
    /// corrected by `clock_offset_ns`); the spread of this across hosts is the start skew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_late_ns: Option<i64>,
    /// This host's clock minus the controller's, ns, measured over ssh (the sample with the
    /// shortest round trip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ns: Option<i64>,
    /// The round trip of that sample, ns: the offset is known to within half of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_rtt_ns: Option<i64>,
    /// The runs this one merges (schema 1.7): set on the one result of a fleet's
    /// distributed load (`fleet HOSTS -- http ...`), whose `host` is `*`; each part is one
    /// load generator's own run, stored beside it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<FleetPart>,
}

/// One host's run in a merged fleet result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetPart {
    /// The host as the user named it.
    pub host: String,
    /// Its stored run's id.
    pub run_id: String,
    /// Its events (requests), the share of the merged count it brought.
    pub events: u64,
}

/// Which suite entry a run came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteRef {
    /// The suite's name (`standard`, or a suite file's `name`).
    pub name: String,
    /// The entry's name (`cpu 20000, 1 thread`).
    pub entry: String,
    /// The figure the entry follows, when it names one (else the workload's first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<String>,
    /// The absolute directory the entry's scratch directory was made in, for entries that
    /// write files (schema 1.3): what `suite --until-decided --interleave` re-creates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
}

/// Program name, version and commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// `hostbench`.
    pub name: String,
    /// Cargo version.
    pub version: String,
    /// Commit the binary was built from, if known.
    pub git_hash: Option<String>,
}

/// The workload and its effective parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadInfo {
    /// Registry id.
    pub id: String,
    /// Area.
    pub category: Category,
    /// Every parameter, defaults included.
    pub params: Params,
    /// Facts about the work (e.g. `divisions_per_event`).
    pub facts: BTreeMap<String, f64>,
}

/// The general options of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Worker threads.
    pub threads: usize,
    /// Time limit, s (0 = none).
    pub time_limit_s: f64,
    /// Event limit (0 = none).
    pub event_limit: u64,
    /// Warmup, s.
    pub warmup_s: f64,
    /// Open-loop rate, events/s (0 = closed loop).
    pub rate_per_s: f64,
    /// Interval report period, s.
    pub report_interval_s: f64,
    /// Percentiles reported.
    pub percentiles: Vec<f64>,
    /// Distribution of random choices.
    pub rand: Distribution,
    /// Seed of every random stream (replay with `--rand-seed`).
    pub seed: u64,
    /// Which command-line grammar the user typed (`native`, `sysbench`).
    pub grammar: String,
    /// The command line, as typed.
    pub command_line: Vec<String>,
    /// What the grammar's report layout needs beyond the measurement (its options that
    /// shape the report), for renderers, which never read `command_line` (schema 1.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<Layout>,
}

/// How the run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// Workers still inside an event at the end (forced shutdown, Ctrl-C).
    pub unfinished_events: u64,
    /// The error that stopped the run, if any (for `disk.fio`, the first job that ended
    /// with an error: the run failed though the other jobs went on).
    pub error: Option<String>,
    /// The signal that interrupted the run (SIGINT, SIGTERM, SIGHUP), when one did: fio's
    /// `terminating on signal N` line names it. Absent otherwise and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

/// Totals and rates over the measured time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Measured wall time (warmup excluded), s.
    pub duration_s: f64,
    /// Completed events.
    pub events: u64,
    /// Events per second.
    pub events_per_s: f64,
    /// Workload counters (reads, writes, bytes...), totals.
    pub counters: BTreeMap<String, u64>,
    /// The same counters per second.
    pub counters_per_s: BTreeMap<String, f64>,
}

/// Event latency: exact count/min/avg/max/sum, percentiles from an HDR histogram (3
/// significant digits), and the histogram itself for later merging and charting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Events timed.
    pub count: u64,
    /// Smallest, ns.
    pub min_ns: u64,
    /// Mean, ns.
    pub avg_ns: u64,
    /// Largest, ns.
    pub max_ns: u64,
    /// Sum, ns.
    pub sum_ns: u64,
    /// Standard deviation, ns (from the histogram).
    pub stddev_ns: f64,
    /// Requested percentiles.
    pub percentiles: Vec<Percentile>,
    /// HdrHistogram V2 compressed encoding, base64 (values in ns).
    pub hdr_histogram: String,
}

/// Thread fairness (sysbench's population standard deviations).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    /// Mean events per thread.
    pub events_avg: f64,
    /// Standard deviation of events per thread.
    pub events_stddev: f64,
    /// Mean time spent in events per thread, s.
    pub exec_time_avg_s: f64,
    /// Standard deviation of that time, s.
    pub exec_time_stddev_s: f64,
    /// Per-thread totals.
    pub per_thread: Vec<ThreadTotals>,
}

/// One interval report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// End of the interval, s since the measurement start.
    pub t_s: f64,
    /// Length of the interval, s.
    pub elapsed_s: f64,
    /// Threads running.
    pub threads: usize,
    /// Events completed in the interval.
    pub events: u64,
    /// Events per second.
    pub events_per_s: f64,
    /// Counters per second.
    pub counters_per_s: BTreeMap<String, f64>,
    /// Latency of the events published in the interval.
    pub latency: LatencySummary,
    /// Open-loop queue length.
    pub queue_len: Option<u64>,
    /// Events in progress (open loop).
    pub concurrency: Option<u64>,
}

/// Kinds of warning; stable snake_case names in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// A clock read costs enough to distort short events.
    SlowClock,
    /// Events are so short that the harness and timer dominate them.
    HarnessDominated,
    /// Too few events for percentiles or rates to mean much.
    FewEvents,
    /// The run was cut short (Ctrl-C, forced shutdown); the figures cover part of it.
    Partial,
    /// The open-loop schedule could not be held.
    RateNotMet,
    /// The working set fits in a CPU cache: the figures describe the cache, not DRAM.
    CacheResident,
    /// The options leave the workload nothing (or far less than asked) to do.
    NoWork,
    /// The workload checked its own output and found it wrong.
    ValidationFailed,
    /// hostbench chose or cut a size for the user; the message says what and why.
    SizeChosen,
    /// A resource the user asked for (huge pages, pinning) is not available.
    Unavailable,
    /// Threads contend for the same data: the figure includes coherence traffic or lock
    /// waits, not just the work.
    Contention,
    /// Other work ran on the machine during the run (load average above the CPU count, other
    /// processes' CPU time): the figures describe a shared machine.
    NoisyHost,
    /// The hypervisor gave a noticeable share of the CPU time to other guests.
    StealTime,
    /// The system swapped pages in or out during the run.
    SwapActivity,
    /// The CPU frequency governor is not `performance`: the clock speed follows the load.
    Governor,
    /// Repetitions of the same measurement disagree more than the stability rule allows (a
    /// suite's summary): the figure should not be trusted on its own.
    WideSpread,
    /// File I/O without direct I/O on a data set that fits in RAM: the figures describe the
    /// page cache, not the device.
    PageCache,
    /// Too little free space where the workload writes (or it would fill the filesystem).
    DiskSpace,
    /// The target (server, device) refused or failed part of the work: errors are counted
    /// and the figures cover only what succeeded.
    Errors,
    /// The kernel keeps time with a fallback clocksource (`hpet`, `acpi_pm`, jiffies), usually
    /// because it found the TSC unstable: clock reads are slow and their time less steady.
    Clocksource,
}

/// Which way a figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// More is better (throughput).
    Higher,
    /// Less is better (latency, time).
    Lower,
}

/// One quotable figure of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// snake_case name that carries the unit (`events_per_s`, `triad_best_mb_per_s`): the
    /// stable key compare matches runs on and JSON consumers read.
    pub name: String,
    /// What the figure is, in words, without its unit (`event rate`, `creates+reads`): what
    /// people read (schema 1.2; `None` in results written before it, see [`Figure::title`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Unit as printed (`events/s`, `MB/s`, `ns`).
    pub unit: String,
    /// The value.
    pub value: f64,
    /// Which way is better.
    pub better: Better,
}

impl Figure {
    /// A figure whose name and label are made at run time (one per STREAM kernel, per IOzone
    /// test); figures known in advance come from a [`FigureDef`].
    pub fn labelled(name: &str, label: &str, unit: &str, value: f64, better: Better) -> Figure {
        Figure {
            name: name.into(),
            label: Some(label.into()),
            unit: unit.into(),
            value,
            better,
        }
    }

    /// What to call the figure when showing it to people: its label, or its name for a
    /// result written before labels existed (schema 1.1 and older).
    pub fn title(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.name)
    }

    /// `label, unit` (`creates+reads, s`), as a figure standing alone is shown.
    pub fn title_with_unit(&self) -> String {
        title_with_unit(self.title(), &self.unit)
    }
}

/// `label, unit`, or the label alone for a figure without a unit.
pub fn title_with_unit(title: &str, unit: &str) -> String {
    if unit.is_empty() {
        title.to_string()
    } else {
        format!("{title}, {unit}")
    }
}

/// The definition of a figure known before the run: its name, label, unit and direction
/// written once, next to the workload that reports it, so every crate that refers to the
/// figure refers to this value (a rename is a compile error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FigureDef {
    /// snake_case name that carries the unit ([`Figure::name`]).
    pub name: &'static str,
    /// What it is, in words, without the unit ([`Figure::label`]).
    pub label: &'static str,
    /// Unit as printed.
    pub unit: &'static str,
    /// Which way is better.
    pub better: Better,
}

impl FigureDef {
    /// The figure with `value`.
    pub fn at(&self, value: f64) -> Figure {
        Figure::labelled(self.name, self.label, self.unit, value, self.better)
    }
}

/// The figures every workload has (see [`RunResult::default_figures`]).
pub mod figure {
    use super::{Better, FigureDef};

    /// Events per second.
    pub const EVENTS_PER_S: FigureDef = FigureDef {
        name: "events_per_s",
        label: "event rate",
        unit: "events/s",
        better: Better::Higher,
    };
    /// Mean event latency.
    pub const LATENCY_AVG_NS: FigureDef = FigureDef {
        name: "latency_avg_ns",
        label: "mean latency",
        unit: "ns",
        better: Better::Lower,
    };
}

/// A result table: named columns with units, one row per item (kernel, working-set size).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Stable name (`stream`, `memlat`).
    pub name: String,
    /// One line saying what the rows are.
    pub title: String,
    /// Columns of `values`, in order.
    pub columns: Vec<Column>,
    /// Rows.
    pub rows: Vec<Row>,
}

/// A column of a [`Table`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// snake_case name with its unit (`best_rate_mb_per_s`, `ns_per_load`).
    pub name: String,
    /// Unit as printed (`MB/s`, `s`, `ns`, `B`); empty for plain numbers.
    pub unit: String,
}

/// A row of a [`Table`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// What the row is (`Copy`, `4 KiB`).
    pub label: String,
    /// One value per column; `null` in JSON where a value could not be measured.
    pub values: Vec<Option<f64>>,
}

impl Table {
    /// The value of `column` in the row labelled `label`.
    pub fn get(&self, label: &str, column: &str) -> Option<f64> {
        let c = self.columns.iter().position(|c| c.name == column)?;
        let r = self.rows.iter().find(|r| r.label == label)?;
        r.values.get(c).copied().flatten()
    }
}

/// Something that makes the figures less trustworthy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    /// Kind.
    pub kind: WarningKind,
    /// What it means and what to do.
    pub message: String,
}

impl Latency {
    /// From a latency record, with the given percentiles.
    pub fn from_rec(rec: &LatencyRec, percentiles: &[f64]) -> Latency {
        let s = rec.summary(percentiles);
        Latency {
            count: s.count,
            min_ns: s.min_ns,
            avg_ns: s.avg_ns(),
            max_ns: s.max_ns,
            sum_ns: s.sum_ns,
            stddev_ns: rec.stdev(),
            percentiles: s.percentiles,
            hdr_histogram: encode_histogram(&rec.histogram()),
        }
    }
}

impl Fairness {
    /// sysbench's formulas: population standard deviation over threads.
    pub fn from_threads(t: &[ThreadTotals]) -> Fairness {
        let n = t.len().max(1) as f64;
        let ev: Vec<f64> = t.iter().map(|x| x.events as f64).collect();
        let tm: Vec<f64> = t.iter().map(|x| x.latency_sum_ns as f64 / 1e9).collect();
        let (ea, es) = mean_pstddev(&ev, n);
        let (ta, ts) = mean_pstddev(&tm, n);
        Fairness {
            events_avg: ea,
            events_stddev: es,
            exec_time_avg_s: ta,
            exec_time_stddev_s: ts,
            per_thread: t.to_vec(),
        }
    }
}

fn mean_pstddev(v: &[f64], n: f64) -> (f64, f64) {
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (mean - x).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

fn counter_maps(
    used: &[Counter],
    values: &[u64; Counter::COUNT],
    secs: f64,
) -> (BTreeMap<String, u64>, BTreeMap<String, f64>) {
    let mut totals = BTreeMap::new();
    let mut rates = BTreeMap::new();
    for &c in used {
        let v = values[c as usize];
        totals.insert(c.name().to_string(), v);
        rates.insert(c.name().to_string(), per_second(v, secs));
    }
    (totals, rates)
}

impl Interval {
    /// From a runner sample.
    pub fn from_sample(s: &IntervalSample, used: &[Counter]) -> Interval {
        Interval {
            t_s: s.t_s,
            elapsed_s: s.elapsed_s,
            threads: s.threads,
            events: s.delta.events,
            events_per_s: per_second(s.delta.events, s.elapsed_s),
            counters_per_s: counter_maps(used, &s.delta.values, s.elapsed_s).1,
            latency: s.latency.clone(),
            queue_len: s.queue_len,
            concurrency: s.concurrency,
        }
    }
}

/// Everything besides the measurement that goes into a result.
pub struct ResultContext<'a> {
    /// Program.
    pub tool: ToolInfo,
    /// Workload category.
    pub category: Category,
    /// Counters the workload uses.
    pub counters: &'a [Counter],
    /// Facts from the instance.
    pub facts: Vec<(String, f64)>,
    /// Tables from the instance.
    pub tables: Vec<Table>,
    /// Other latency distributions from the instance, encoded ([`encode_histogram`]).
    pub histograms: Vec<(String, String)>,
    /// fio's statistics from the instance (`disk.fio` only).
    pub fio: Option<FioResult>,
    /// Warnings from the instance (what the user is really measuring, and what to do).
    pub warnings: Vec<Warning>,
    /// The events time the harness's loop only, the work being timed apart
    /// ([`crate::workload::Instance::events_time_the_harness`]): no harness-overhead warning.
    pub events_time_the_harness: bool,
    /// Clock description.
    pub clock: ClockInfo,
    /// Host fingerprint.
    pub host: Option<HostInfo>,
    /// `native`, `sysbench`, ...
    pub grammar: &'a str,
    /// argv.
    pub command_line: Vec<String>,
    /// User label.
    pub label: Option<String>,
    /// Start time (unix seconds).
    pub started_unix_s: f64,
}

impl RunResult {
    /// Builds the result of `plan` from its measurement.
    pub fn build(plan: &Plan, m: &Measurement, ctx: ResultContext<'_>) -> RunResult {
        let (counters, counters_per_s) =
            counter_maps(ctx.counters, &m.counters.values, m.elapsed_s);
        let mut r = RunResult {
            schema: SCHEMA_ID.into(),
            schema_version: SCHEMA_VERSION,
            schema_minor: SCHEMA_MINOR,
            id: run_id(ctx.started_unix_s, m.seed),
            tool: ctx.tool,
            started_at: crate::civil::rfc3339_utc(ctx.started_unix_s),
            label: ctx.label,
            workload: WorkloadInfo {
                id: plan.workload.clone(),
                category: ctx.category,
                params: plan.params.clone(),
                facts: ctx.facts.into_iter().collect(),
            },
            config: RunConfig {
                threads: plan.threads,
                time_limit_s: plan.time_s,
                event_limit: plan.events,
                warmup_s: plan.warmup_s,
                rate_per_s: plan.rate,
                report_interval_s: plan.report_interval_s,
                percentiles: plan.percentiles.clone(),
                rand: plan.rand,
                seed: m.seed,
                grammar: ctx.grammar.into(),
                command_line: crate::secret::redact_args(&ctx.command_line),
                layout: plan.layout.clone(),
            },
            clock: ctx.clock,
            host: ctx.host,
            outcome: Outcome {
                stop_reason: m.stop,
                unfinished_events: m.unfinished,
                error: m.error.clone(),
                signal: (m.stop == StopReason::Interrupted)
                    .then(|| {
                        crate::runner::INTERRUPT_SIGNAL.load(std::sync::atomic::Ordering::SeqCst)
                    })
                    .filter(|&s| s > 0),
            },
            metrics: Metrics {
                duration_s: m.total_time_s,
                events: m.counters.events,
                events_per_s: per_second(m.counters.events, m.elapsed_s),
                counters,
                counters_per_s,
            },
            latency: Latency::from_rec(&m.latency, &plan.percentiles),
            fairness: Fairness::from_threads(&m.threads),
            intervals: m
                .intervals
                .iter()
                .map(|s| Interval::from_sample(s, ctx.counters))
                .collect(),
            warnings: Vec::new(),
            tables: ctx.tables,
            figures: Vec::new(),
            fio: ctx.fio,
            annotations: BTreeMap::new(),
            suite: None,
            fleet: None,
            histograms: ctx.histograms.into_iter().collect(),
        };
        r.warnings = ctx.warnings;
        r.warnings.extend(
            r.standard_warnings(m.stuck_threads)
                .into_iter()
                .filter(|w| {
                    !(ctx.events_time_the_harness && w.kind == WarningKind::HarnessDominated)
                }),
        );
        // A fio job that ended with an error (the others went on, as in fio): the run
        // failed all the same, and is stored as failed so that `results list`, `compare`
        // and `trend` do not take it for a clean run.
        if matches!(
            r.outcome.stop_reason,
            StopReason::TimeLimit | StopReason::EventLimit | StopReason::WorkersDone
        ) && let Some(why) = r.fio.as_ref().and_then(|f| f.job_failure())
        {
            r.outcome.stop_reason = StopReason::Error;
            r.outcome.error = Some(why);
        }
        r.workload.params.redact_secrets();
        r
    }

    /// Brings a result read back (from a store or a file) to today's definition of its
    /// figures. A `disk.fio` run saved before schema 1.10 has its IOPS and bandwidth figures
    /// over the run's wall time, which counts start delays and the waits between stonewalled
    /// groups; they are recomputed from its `fio` section as fio defines a group's rates
    /// ([`crate::fio_result::FioResult::rates`]), so old and new runs compare.
    pub fn upgrade_figures(&mut self) {
        if self.schema_minor >= 10 {
            return;
        }
        let Some(fio) = &self.fio else {
            return;
        };
        let x = fio.rates();
        for f in &mut self.figures {
            f.value = match f.name.as_str() {
                "iops" => x.iops,
                "read_iops" => x.dir_iops[0],
                "write_iops" => x.dir_iops[1],
                "read_bytes_per_s" => x.dir_bytes_per_s[0],
                "write_bytes_per_s" => x.dir_bytes_per_s[1],
                _ => continue,
            };
        }
    }

    /// The figures every workload has: event rate (higher is better) and mean event latency
    /// (lower is better). Workloads with a better headline put theirs first.
    /// A run that measured nothing has none ([`RunResult::measured_nothing`]).
    pub fn default_figures(&self) -> Vec<Figure> {
        if self.measured_nothing() {
            return Vec::new();
        }
        let mut f = vec![figure::EVENTS_PER_S.at(self.metrics.events_per_s)];
        if self.latency.count > 0 {
            f.push(figure::LATENCY_AVG_NS.at(self.latency.avg_ns as f64));
        }
        f
    }

    /// Warnings every run gets checked for.
    /// `stuck_threads`: worker threads that had not stopped when the run gave up on them.
    fn standard_warnings(&self, stuck_threads: u64) -> Vec<Warning> {
        let mut w = Vec::new();
        let cost = self.clock.read_cost_ns;
        w.extend(slow_clock_warning(cost));
        let avg = self.latency.avg_ns as f64;
        if self.latency.count > 0 && avg < 20.0 * cost.max(5.0) {
            w.push(Warning {
                kind: WarningKind::HarnessDominated,
                message: format!(
                    "events average {avg:.0} ns and each is timed with two clock reads of \
                     {cost:.0} ns: the figures measure the harness as much as the work. Give \
                     each event more work to measure the workload itself."
                ),
            });
        }
        if self.latency.count < 10
            && self.outcome.stop_reason != StopReason::WorkersDone
            && !self.measured_nothing()
        {
            w.push(Warning {
                kind: WarningKind::FewEvents,
                message: format!(
                    "only {} event(s) completed: rates and percentiles are not meaningful. Run \
                     longer (a longer time limit or more events) or with less work per event.",
                    self.latency.count
                ),
            });
        }
        w.extend(self.cut_short_warning(stuck_threads));
        if self.config.rate_per_s > 0.0 && self.metrics.duration_s > 0.0 {
            let achieved = self.metrics.events_per_s;
            if achieved < self.config.rate_per_s * 0.9
                && self.outcome.stop_reason == StopReason::TimeLimit
            {
                w.push(Warning {
                    kind: WarningKind::RateNotMet,
                    message: format!(
                        "the target rate was {:.0}/s but only {achieved:.0}/s completed: the \
                         workers fell behind and latencies include the time arrivals waited.",
                        self.config.rate_per_s
                    ),
                });
            }
        }
        w
    }

    /// The warning of a run cut short (Ctrl-C, forced shutdown): what its figures cover.
    /// `stuck_threads`: worker threads that had not stopped when the run gave up on them.
    pub fn cut_short_warning(&self, stuck_threads: u64) -> Option<Warning> {
        if matches!(
            self.outcome.stop_reason,
            StopReason::Interrupted | StopReason::ForcedShutdown
        ) {
            let unfinished = self.outcome.unfinished_events;
            // Threads of a workload's own loop (a Lua script's thread_run) can be stuck
            // outside any event: those are threads, not events.
            let outside = stuck_threads.saturating_sub(unfinished);
            if self.measured_nothing() {
                return Some(Warning {
                    kind: WarningKind::Partial,
                    message: format!(
                        "the run was cut short ({}) before it measured anything (in its \
                         warmup or ramp time): it has no figures.",
                        match self.outcome.stop_reason {
                            StopReason::Interrupted => "interrupted",
                            _ => "forced shutdown",
                        },
                    ),
                });
            }
            let also = if outside > 0 {
                format!(
                    "; {outside} worker thread(s) were still running outside an event (in \
                     the workload's own loop) and were left behind"
                )
            } else {
                String::new()
            };
            return Some(Warning {
                kind: WarningKind::Partial,
                message: format!(
                    "the run was cut short ({}); the figures cover {:.2} s and {unfinished} \
                     event(s) were left unfinished{also}.",
                    match self.outcome.stop_reason {
                        StopReason::Interrupted => "interrupted",
                        _ => "forced shutdown",
                    },
                    self.metrics.duration_s,
                ),
            });
        }
        None
    }

    /// The run was stopped (Ctrl-C, a forced shutdown, an error) before it measured
    /// anything: in its warmup (fio's `ramp_time`), or before its first event. It has no
    /// figures: a rate of 0 would read as a measurement of a machine that did nothing.
    pub fn measured_nothing(&self) -> bool {
        matches!(
            self.outcome.stop_reason,
            StopReason::Interrupted | StopReason::ForcedShutdown | StopReason::Error
        ) && self.metrics.events == 0
            && self.metrics.duration_s == 0.0
    }

    /// Whether the run itself failed (a worker's error), not only fio jobs that ended with
    /// an error ([`FioResult::job_failure`], which the outcome also carries): fio's reports
    /// show `err=1` for every job then, and only the failed jobs' own error otherwise.
    pub fn failed_beyond_jobs(&self) -> bool {
        self.outcome.error.is_some()
            && self.outcome.error != self.fio.as_ref().and_then(FioResult::job_failure)
    }

    /// The percentile `p` if it was requested.
    pub fn percentile_ns(&self, p: f64) -> Option<u64> {
        self.latency
            .percentiles
            .iter()
            .find(|x| x.p == p)
            .map(|x| x.ns)
    }
}

fn run_id(t: f64, seed: u64) -> String {
    let mut x = (t * 1e9) as u64 ^ seed.rotate_left(17) ^ u64::from(std::process::id());
    let mut part = || crate::rand::splitmix64(&mut x);
    format!("{:016x}{:016x}", part(), part())
}

/// A histogram as results store it: HdrHistogram V2 compressed, base64.
pub fn encode_histogram(h: &hdrhistogram::Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .expect("serializing a histogram into memory cannot fail");
    crate::base64::encode(&buf)
}

/// Decodes a latency histogram written by [`Latency::from_rec`].
pub fn decode_histogram(b64: &str) -> Option<hdrhistogram::Histogram<u64>> {
    let bytes = crate::base64::decode(b64)?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut &bytes[..])
        .ok()
}

/// Above this cost per read (ns), a clock is called slow.
pub const SLOW_CLOCK_NS: f64 = 100.0;

/// The `slow_clock` warning when one read of the clock events were timed with costs more than
/// [`SLOW_CLOCK_NS`].
pub fn slow_clock_warning(cost_ns: f64) -> Option<Warning> {
    (cost_ns > SLOW_CLOCK_NS).then(|| Warning {
        kind: WarningKind::SlowClock,
        message: format!(
            "one clock read costs {cost_ns:.0} ns here, and every event is timed with two: \
             latencies below a few microseconds mostly measure the clock. Run `hostbench \
             timer` for the clocksources this machine offers."
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_clock_is_reported() {
        assert_eq!(slow_clock_warning(20.0), None);
        assert_eq!(slow_clock_warning(SLOW_CLOCK_NS), None);
        let w = slow_clock_warning(150.0).unwrap();
        assert_eq!(w.kind, WarningKind::SlowClock);
        assert!(w.message.contains("costs 150 ns"), "{}", w.message);
    }

    #[test]
    fn histogram_round_trips_through_base64() {
        let mut r = LatencyRec::default();
        for v in [10, 200, 3000, 40_000, 500_000] {
            r.record(v);
        }
        let l = Latency::from_rec(&r, &[50.0]);
        let h = decode_histogram(&l.hdr_histogram).unwrap();
        assert_eq!(h, *r.histogram());
    }

    #[test]
    fn fairness_is_population_stddev() {
        let f = Fairness::from_threads(&[
            ThreadTotals {
                events: 151,
                latency_sum_ns: 1_000_000_000,
            },
            ThreadTotals {
                events: 49,
                latency_sum_ns: 1_000_000_000,
            },
        ]);
        assert_eq!(f.events_avg, 100.0);
        assert_eq!(f.events_stddev, 51.0);
        assert_eq!(f.exec_time_stddev_s, 0.0);
    }
}
