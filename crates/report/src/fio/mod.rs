//! fio 3.33's outputs over a `disk.fio` result: the normal text layout (`normal.rs`) and the
//! JSON (and json+) document (`json.rs`), with fio's field names, units and number
//! formatting, so that parsers and dashboards written for fio read hostbench's.
//!
//! Everything comes from the result's typed `fio` section, which the workload fills (jobs,
//! report blocks with `group_reporting` already merged, devices; see `disk::fio` in
//! hostbench-workloads), and from the fio layout options the front-end recorded
//! (`config.layout`: the output format, the file-layout lines). Nothing is parsed again
//! here: not the job text, not a size, not the command line.
//!
//! Differences from fio, on purpose: times in the job header are UTC, the `lat (usec)`
//! distribution lines are computed from fio's latency buckets (exact to < 1%), and
//! `"fio version"` says `fio-3.33-hostbench-<version>`.

mod client;
mod json;
mod normal;
mod terse;

use hostbench_core::fio_hist::plat_val;
use hostbench_core::fio_result::{
    FIO_SYNCIO_ENGINES, FioBlock, FioDir, FioJob, FioLatencyTarget, FioReportOpts, FioResult,
    FioUnified,
};
use hostbench_core::layout::{FioFormat, FioLayout, Layout};
use hostbench_core::result::RunResult;

/// The values at the percentiles `list` (sorted) of a histogram of `n` samples.
fn percentiles(bins: &[u64], n: u64, list: &[f64]) -> Vec<u64> {
    hostbench_core::fio_hist::percentiles(bins, n, list)
}

/// The report options of block `b`'s job (fio's defaults for a block without one).
fn report_opts<'a>(fio: &'a FioResult, b: &FioBlock) -> &'a FioReportOpts {
    static DEFAULT: std::sync::OnceLock<FioReportOpts> = std::sync::OnceLock::new();
    fio.jobs
        .get(b.job)
        .map(|j| &j.report)
        .unwrap_or_else(|| DEFAULT.get_or_init(FioReportOpts::default))
}

/// Block `b`'s queue-depth search as fio reports it (its `latency   :` line and JSON
/// `latency_*` keys): the search's, or fio's values without one (target 0, window 0,
/// percentile 100, and the `iodepth` the job gave, even a synchronous engine's: fio's
/// `latency_qd`; the block's own depth when the job is not in the result).
fn latency_target(jobs: &[FioJob], b: &FioBlock) -> FioLatencyTarget {
    b.latency_target.unwrap_or_else(|| FioLatencyTarget {
        target_ns: 0,
        window_us: 0,
        percentile: 100.0,
        depth: jobs.get(b.job).map_or(b.iodepth, |j| j.iodepth.max(1)),
    })
}

/// The report options fio takes from a block's *first* clone's job: the description and
/// `unified_rw_reporting` (the percentile options are the last merged clone's,
/// [`report_opts`]). The first job of the block's name in its group.
fn first_opts<'a>(fio: &'a FioResult, b: &FioBlock) -> &'a FioReportOpts {
    fio.jobs
        .iter()
        .find(|j| j.name == b.name && j.groupid == b.groupid)
        .map_or_else(|| report_opts(fio, b), |j| &j.report)
}

/// `fio` as fio reports it under each job's `unified_rw_reporting=mixed`: such a block's
/// reads and writes become one `mixed` direction in the reads' place (fio sums them into
/// its first direction before reporting, so the group's figures, `issued rwts` and the
/// latency distribution count them there too). Other blocks are unchanged.
fn unified_view(fio: &FioResult) -> FioResult {
    let mut f = fio.clone();
    for b in &mut f.blocks {
        if first_opts(fio, b).unified_rw_reporting == FioUnified::Mixed {
            b.read = FioDir::mixed(&[&b.read, &b.write]);
            b.write = FioDir::default();
        }
    }
    f
}

/// How the groups' status lines name their directions: `unified_rw_reporting` of the
/// group's jobs (fio ORs them: `mixed` and `both` in one group make neither).
fn group_unified(fio: &FioResult, gid: u32) -> FioUnified {
    let mut bits = 0u8;
    for b in fio.blocks.iter().filter(|b| b.groupid == gid) {
        bits |= match first_opts(fio, b).unified_rw_reporting {
            FioUnified::None => 0,
            FioUnified::Mixed => 1,
            FioUnified::Both => 2,
        };
    }
    match bits {
        1 => FioUnified::Mixed,
        2 => FioUnified::Both,
        _ => FioUnified::None,
    }
}

pub use client::{Client, render_clients};
pub use hostbench_core::fio_num::num2str;
pub use normal::idle_prof;

/// A job's share of its group's bandwidth, percent (the normal layout's `per=`, JSON's
/// `bw_agg`): the mean of its bandwidth samples (KiB/s) over the group's aggregate (bytes/s),
/// at most 100. fio passes the mean as an `int`, so its fraction is dropped first.
fn share_of_group(mean_kib: f64, agg_bytes: u64) -> f64 {
    if agg_bytes <= 1024 {
        return 100.0;
    }
    let mean = mean_kib.trunc().min(i32::MAX as f64);
    (mean * 100.0 / (agg_bytes as f64 / 1024.0)).min(100.0)
}

/// One reporting group's aggregates per direction (reads, writes), as fio computes its "Run
/// status group" lines (`stat.c:__show_run_stats`) over the group's blocks that ran in that
/// direction: bytes, the shortest and longest runtime, the slowest and fastest block's
/// bandwidth, and the aggregate bandwidth (all bytes over the longest runtime).
#[derive(Debug, Clone, Copy)]
struct GroupAgg {
    io: [u64; 3],
    min_run: [u64; 3],
    max_run: [u64; 3],
    min_bw: [u64; 3],
    max_bw: [u64; 3],
}

impl GroupAgg {
    /// Aggregate bandwidth of direction `d`, bytes/s.
    fn agg(&self, d: usize) -> u64 {
        (self.io[d] * 1000)
            .checked_div(self.max_run[d])
            .unwrap_or(0)
    }
}

/// The aggregates of every reporting group of `fio`, indexed by group id.
fn group_aggs(fio: &hostbench_core::fio_result::FioResult) -> Vec<GroupAgg> {
    let mut v = vec![
        GroupAgg {
            io: [0; 3],
            min_run: [u64::MAX; 3],
            max_run: [0; 3],
            min_bw: [u64::MAX; 3],
            max_bw: [0; 3],
        };
        fio.groups().count()
    ];
    for b in &fio.blocks {
        let Some(g) = v.get_mut(b.groupid as usize) else {
            continue;
        };
        for (d, x) in b.dirs().into_iter().enumerate() {
            if x.runtime_ms == 0 {
                continue;
            }
            g.io[d] += x.io_bytes;
            g.max_run[d] = g.max_run[d].max(x.runtime_ms);
            g.min_run[d] = g.min_run[d].min(x.runtime_ms);
            g.min_bw[d] = g.min_bw[d].min(x.bw_bytes());
            g.max_bw[d] = g.max_bw[d].max(x.bw_bytes());
        }
    }
    v
}

fn pct_list(v: &[u64; 7]) -> Vec<f64> {
    let total: f64 = v.iter().map(|&x| x as f64).sum();
    v.iter()
        .map(|&x| {
            let x = x as f64;
            if total <= 0.0 {
                0.0
            } else {
                let p = x * 100.0 / total;
                if p < 0.1 && x > 0.0 { 0.1 } else { p }
            }
        })
        .collect()
}

const LAT_LABELS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];

/// The I/Os of block `b` in fio's latency distribution buckets: (ns, µs, ms incl.
/// `>=2000`), and their total.
fn lat_counts(b: &FioBlock, nostats: bool) -> ([u64; 10], [u64; 10], [u64; 12], u64) {
    let mut n = [0u64; 10];
    let mut u = [0u64; 10];
    let mut m = [0u64; 12];
    if nostats {
        return (n, u, m, 0);
    }
    let idx = |x: u64| LAT_LABELS.iter().position(|&l| x < l).unwrap_or(9);
    let mut total = 0u64;
    for d in b.dirs() {
        for (i, &c) in d.clat_bins.dense().iter().enumerate() {
            if c == 0 {
                continue;
            }
            total += c;
            let v = plat_val(i);
            if v < 1000 {
                n[idx(v)] += c;
            } else if v < 1_000_000 {
                u[idx(v / 1000)] += c;
            } else {
                let ms = v / 1_000_000;
                let k = if ms >= 2000 {
                    11
                } else if ms >= 1000 {
                    10
                } else {
                    idx(ms)
                };
                m[k] += c;
            }
        }
    }
    (n, u, m, total)
}

/// A bucket's share of `total`, percent, at least 0.01 when it counted anything (fio's).
fn lat_pct(c: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        let x = c as f64 * 100.0 / total as f64;
        if x < 0.01 && c > 0 { 0.01 } else { x }
    }
}

/// fio's latency distribution: (ns buckets, µs buckets, ms buckets incl. `>=2000`), in % of
/// all I/Os of the block.
fn lat_dist(b: &FioBlock, nostats: bool) -> ([f64; 10], [f64; 10], [f64; 12]) {
    let (n, u, m, total) = lat_counts(b, nostats);
    let p = |c: u64| lat_pct(c, total);
    (n.map(p), u.map(p), m.map(p))
}

/// Whether block `b`'s engine is one of fio's file engines (`filecreate`, `filestat`,
/// `filedelete`: fio's `FIO_NOSTATS`), whose I/Os fio leaves out of the latency
/// distribution (its clat figures are the file calls').
fn nostats(jobs: &[hostbench_core::fio_result::FioJob], b: &FioBlock) -> bool {
    jobs.get(b.job).is_some_and(|j| {
        matches!(
            j.ioengine.as_str(),
            "filecreate" | "filestat" | "filedelete"
        )
    })
}

fn ctime(unix: i64) -> String {
    crate::ctime(unix, false)
}

/// Unix seconds of an RFC 3339 UTC timestamp as results carry (`2026-11-22T20:02:09.123Z`).
fn unix_of(ts: &str) -> f64 {
    hostbench_core::civil::parse_rfc3339_ms(ts).map_or(0.0, |ms| ms as f64 / 1000.0)
}

/// When fio would print `r`'s report: at its end (fio stamps the job blocks and the JSON
/// `time`/`timestamp` with the time of printing), the run's start plus its length.
fn printed_at(r: &RunResult) -> f64 {
    unix_of(&r.started_at) + r.metrics.duration_s.max(0.0)
}

fn version() -> String {
    format!("fio-3.33-hostbench-{}", env!("CARGO_PKG_VERSION"))
}

/// The fio layout options of `r`: what its fio front-end recorded, or fio's defaults (the
/// normal layout, no file-layout lines) for a run typed in another grammar.
pub fn layout_of(r: &RunResult) -> FioLayout {
    match &r.config.layout {
        Some(Layout::Fio(l)) => l.clone(),
        _ => FioLayout::default(),
    }
}

/// Renders `r` in `format` alone (the normal layout with the file-layout lines `r`
/// recorded, terse in the version it recorded).
pub fn render(r: &RunResult, format: FioFormat) -> String {
    let mut l = layout_of(r);
    l.output_format = format;
    l.more_formats.clear();
    render_layout(r, &l)
}

/// Renders `r` in every format `l` selects, as fio prints them: the start-up lines first
/// when `normal` is among them, then terse, JSON (json+ when selected) and the normal
/// report, in that order whatever the order given.
pub fn render_layout(r: &RunResult, l: &FioLayout) -> String {
    render_final(r, l, true)
}

/// The run's last report as fio prints it when its jobs are done: the start-up lines
/// (when `banner`: not yet printed), the lines fio prints as the jobs end (a stop signal's,
/// each failed clone's `fio: pid=`), then every format of `l`.
pub fn render_final(r: &RunResult, l: &FioLayout, banner: bool) -> String {
    let mut out = if banner {
        start_lines(r, l)
    } else {
        String::new()
    };
    out.push_str(&end_lines(r, l));
    out.push_str(&formats(r, l));
    out
}

/// Every format `l` selects: terse, JSON (json+ when selected), then the normal report.
fn formats(r: &RunResult, l: &FioLayout) -> String {
    let mut out = String::new();
    if l.has(FioFormat::Terse) {
        out.push_str(&terse::render(r, l.terse_version));
    }
    if l.has(FioFormat::JsonPlus) {
        out.push_str(&json::render(r, true));
    } else if l.has(FioFormat::Json) {
        out.push_str(&json::render(r, false));
    }
    if l.has(FioFormat::Normal) {
        out.push_str(&normal::render(r));
    }
    out
}

/// fio's start-up lines of `r` (each job's line, the version, "Starting N processes", the
/// layout lines of `l`; with the normal layout only), which fio prints before its jobs
/// start, then the note each clone of a synchronous engine asked for a deeper queue prints
/// as it starts (in every format, on stdout, as fio's `log_info`).
pub fn start_lines(r: &RunResult, l: &FioLayout) -> String {
    let mut out = if l.has(FioFormat::Normal) {
        normal::banner(r, &l.laid_out)
    } else {
        String::new()
    };
    out.push_str(&depth_notes(r));
    out
}

/// fio's note for each clone of a job whose engine is synchronous (`FIO_SYNCIO`) and
/// whose `iodepth` is above 1 (`backend.c:thread_main`, after the engine's init).
fn depth_notes(r: &RunResult) -> String {
    let mut out = String::new();
    for j in r.fio.iter().flat_map(|f| &f.jobs) {
        if j.iodepth > 1 && FIO_SYNCIO_ENGINES.contains(&j.ioengine.as_str()) {
            for _ in 0..j.numjobs.max(1) {
                out.push_str(
                    "note: both iodepth >= 1 and synchronous I/O engine are selected, \
                     queue depth will be capped at 1\n",
                );
            }
        }
    }
    out
}

/// The lines fio prints while its jobs end, before its report: `fio: terminating on
/// signal N` when a stop signal ended the run (with the normal layout: fio prints it on
/// stdout, where only the normal layout has room for it), and for each clone that ended
/// with an error `fio: pid=P, err=E/func=F, error=TEXT` (fio's `thread_main` at its end;
/// without fio's source location, as the job header; P is hostbench's process id, as in
/// the job header).
pub fn end_lines(r: &RunResult, l: &FioLayout) -> String {
    let mut out = String::new();
    if l.has(FioFormat::Normal)
        && let Some(sig) = stop_signal(r)
    {
        out.push_str(&format!("\nfio: terminating on signal {sig}\n"));
    }
    if let Some(fio) = &r.fio {
        for b in &fio.blocks {
            if let Some(e) = &b.error {
                // Those whose layout failed in fio's parent said so on stderr then.
                for _ in 0..e.clones.saturating_sub(e.setup_clones) {
                    out.push_str(&format!(
                        "fio: pid={}, err={}/func={}, error={}\n",
                        fio.pid, e.errno, e.func, e.text
                    ));
                }
            }
        }
    }
    out
}

/// The signal that stopped an interrupted run (SIGINT when the result does not say).
pub fn stop_signal(r: &RunResult) -> Option<i32> {
    (r.outcome.stop_reason == hostbench_core::runner::StopReason::Interrupted)
        .then(|| r.outcome.signal.filter(|&s| s > 0).unwrap_or(2))
}

/// Renders `r` in every format `l` selects, as fio's `--status-interval` prints it while
/// the jobs run: the start-up lines only when `banner`.
pub fn render_status(r: &RunResult, l: &FioLayout, banner: bool) -> String {
    let mut out = if banner {
        start_lines(r, l)
    } else {
        String::new()
    };
    out.push_str(&formats(r, l));
    out
}

/// Renders `r` as its fio front-end printed it: in the output formats it recorded.
pub fn render_as_run(r: &RunResult) -> String {
    render_layout(r, &layout_of(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block of group `g` that read `bytes` in `ms`.
    fn block(g: u32, bytes: u64, ms: u64) -> hostbench_core::fio_result::FioBlock {
        use hostbench_core::fio_result::{FioBlock, FioDir};
        FioBlock {
            job: 0,
            name: "j".into(),
            groupid: g,
            clones: 1,
            runtime_ms: ms,
            iodepth: 1,
            read: FioDir {
                io_bytes: bytes,
                total_ios: bytes / 4096,
                runtime_ms: ms,
                ..FioDir::default()
            },
            ..FioBlock::default()
        }
    }

    /// Each group's Run status figures come from its own blocks only; a group with no I/O
    /// still exists (fio prints its header), with nothing in it.
    #[test]
    fn group_aggregates_stay_within_their_group() {
        use hostbench_core::fio_result::{FioJob, FioResult};
        let job = |g: u32| FioJob {
            name: format!("j{g}"),
            rw: "read".into(),
            bs_read: 4096,
            bs_write: 4096,
            ioengine: "null".into(),
            iodepth: 1,
            numjobs: 1,
            groupid: g,
            ..FioJob::default()
        };
        let f = FioResult {
            pid: 1,
            global_options: Vec::new(),
            jobs: vec![job(0), job(0), job(1), job(2)],
            blocks: vec![
                block(0, 1 << 20, 1000),
                block(0, 3 << 20, 500),
                block(1, 1 << 20, 250),
                block(2, 0, 0),
            ],
            disks: Vec::new(),
            cpu_idleness: None,
        };
        let g = group_aggs(&f);
        assert_eq!(g.len(), 3);
        // Group 0: 4 MiB over its longest runtime (1 s); 1 MiB/s and 6 MiB/s per block.
        assert_eq!(g[0].agg(0), 4 << 20);
        assert_eq!((g[0].min_run[0], g[0].max_run[0]), (500, 1000));
        assert_eq!((g[0].min_bw[0], g[0].max_bw[0]), (1 << 20, 6 << 20));
        assert_eq!(g[1].agg(0), 4 << 20);
        assert_eq!(g[1].io[0], 1 << 20);
        assert_eq!((g[2].agg(0), g[2].max_run[0]), (0, 0));
        assert_eq!(g[0].agg(1), 0, "no writes");
    }

    #[test]
    fn num2str_matches_fio() {
        assert_eq!(num2str(29_100, 4, false, ""), "29.1k");
        assert_eq!(num2str(9713, 4, false, ""), "9713");
        assert_eq!(num2str(119_000_000, 4, true, "B/s"), "113MiB/s");
        assert_eq!(num2str(119_537_664, 4, false, "B/s"), "120MB/s");
        assert_eq!(num2str(39_741_440, 4, true, "B/s"), "37.9MiB/s");
        assert_eq!(num2str(3_346_000_000, 4, true, "B"), "3191MiB");
        assert_eq!(num2str(17_220_000, 6, false, ""), "17220k");
        assert_eq!(num2str(1_500_000, 4, true, "B/s"), "1465KiB/s");
    }

    /// The fraction's rounding carries into the integer part, as fio's does: every pair
    /// below is what fio 3.33 printed for `io=` with that many bytes (null engine,
    /// size-limited jobs), or its bandwidth for that many bytes per second.
    #[test]
    fn num2str_carries_like_fio() {
        for (n, pow2, want) in [
            (67_104_768, true, "64.0MiB"),
            (67_104_768, false, "67.1MB"),
            (22_010_368, true, "21.0MiB"),
            (22_010_368, false, "22.0MB"),
            (10_484_736, true, "10.00MiB"),
            (10_484_736, false, "10.5MB"),
            (1_048_064, true, "1024KiB"),
            (1_048_064, false, "1048kB"),
            (999_500, true, "976KiB"),
            (999_500, false, "1000kB"),
            (1000, true, "1000B"),
            (102_400, false, "102kB"),
        ] {
            assert_eq!(num2str(n, 4, pow2, "B"), want, "{n} bytes");
        }
        // 20.99 MiB/s.
        assert_eq!(num2str(22_010_413, 4, true, "B/s"), "21.0MiB/s");
        // The largest figures take the exa prefix (fio's table goes up to E).
        assert_eq!(num2str(u64::MAX, 4, false, ""), "18.4E");
        assert_eq!(num2str(u64::MAX, 4, true, "B"), "16.0EiB");
    }

    #[test]
    fn share_of_group_drops_the_mean_fraction_as_fio_does() {
        // fio: (int)1000.9 * 100 / (1025024 / 1024) = 1000 * 100 / 1001.
        let p = share_of_group(1000.9, 1_025_024);
        assert!((p - 99.900_099).abs() < 1e-5, "{p}");
        assert_eq!(share_of_group(5000.0, 1_025_024), 100.0);
        assert_eq!(share_of_group(10.0, 1024), 100.0);
    }

    #[test]
    fn time_round_trips() {
        let t = unix_of("2026-11-22T09:49:20.765Z");
        assert_eq!(t as i64, 1_795_340_960);
        assert_eq!(ctime(t as i64), "Sun Nov 22 09:49:20 2026");
    }

    #[test]
    fn percentiles_use_bucket_midpoints() {
        use hostbench_core::fio_hist::PLAT_NR;
        let mut bins = vec![0u64; PLAT_NR];
        bins[10] = 50;
        bins[200] = 50;
        let p = percentiles(&bins, 100, &hostbench_core::fio_hist::PERCENTILES);
        assert_eq!(p[6], 10, "p50");
        assert_eq!(p[10], plat_val(200), "p90");
    }
}
