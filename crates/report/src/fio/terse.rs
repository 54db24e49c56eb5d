//! fio's terse (`--output-format=terse`, `--minimal`) lines, versions 2 to 5: one line of
//! `;`-separated fields per job block, in fio 3.33's order (`stat.c`'s terse writer):
//!
//! 1. `version;fio version;jobname;groupid;error` (version 2: `2;jobname;groupid;error`);
//! 2. per direction (reads, writes, and trims in versions 2, 4 and 5; one `mixed`
//!    direction alone with `unified_rw_reporting=mixed`, or after the others with `both`):
//!    KiB, KiB/s, IOPS, runtime ms; slat, clat `min;max;mean;stdev` in µs; 20 percentile
//!    fields `P%=µs` (of `lat` with `lat_percentiles`, else of `clat` with
//!    `clat_percentiles`, unused ones `0%=0`); lat `min;max;mean;stdev`; bandwidth
//!    `min;max;share%;mean;stdev` in KiB/s; version 5 adds the bandwidth samples and
//!    `min;max;mean;stdev;samples` of IOPS;
//! 3. CPU `usr%;sys%;ctx;majf;minf`, I/O depths `1..>=64`, latency distribution in µs (the
//!    ns buckets folded into the first) and ms;
//! 4. versions 3 to 5: each device `name;r_ios;w_ios;r_merge;w_merge;r_ticks;w_ticks;
//!    in_queue;util%`;
//! 5. `;description` when the job has one (version 2: on a line of its own).
//!
//! Field counts without devices or description: 121 (v3), 162 (v4), 180 (v5), 161 (v2).

use super::{
    first_opts, group_aggs, lat_counts, lat_pct, pct_list, percentiles, report_opts, unified_view,
    version,
};
use hostbench_core::fio_result::{FioDir, FioReportOpts, FioStat, FioUnified};
use hostbench_core::result::RunResult;
use std::fmt::Write as _;

/// fio's `FIO_IO_U_LIST_MAX_LEN`: percentile fields per direction.
const PCT_FIELDS: usize = 20;

/// `;min;max;mean;stdev` of a latency in µs (integer extremes, `%f` mean and deviation),
/// zeros when it has no samples.
fn lat_fields(out: &mut String, s: &FioStat) {
    if s.n == 0 {
        out.push_str(";0;0;0.000000;0.000000");
    } else {
        let _ = write!(
            out,
            ";{};{};{:.6};{:.6}",
            s.min / 1000,
            s.max / 1000,
            s.mean / 1000.0,
            s.stddev() / 1000.0
        );
    }
}

/// One direction's fields; `agg` is its group's aggregate bandwidth, bytes/s.
fn dir_fields(out: &mut String, x: &FioDir, agg: u64, opts: &FioReportOpts, ver: u8) {
    let (bw, iops) = match x.runtime_ms {
        0 => (0, 0),
        t => (x.io_bytes * 1000 / t / 1024, x.total_ios * 1000 / t),
    };
    let _ = write!(out, ";{};{bw};{iops};{}", x.io_bytes >> 10, x.runtime_ms);
    lat_fields(out, &x.slat);
    lat_fields(out, &x.clat);
    let list = opts.percentiles();
    let (bins, n) = if opts.lat_percentiles {
        (Some(&x.lat_bins), x.lat.n)
    } else if opts.clat_percentiles {
        (Some(&x.clat_bins), x.clat.n)
    } else {
        (None, 0)
    };
    let vals = match bins {
        // fio's calculation over no samples gives its first bucket's value (0) everywhere.
        Some(_) if n == 0 => vec![0; list.len()],
        Some(b) => percentiles(&b.dense(), n, &list),
        None => Vec::new(),
    };
    for i in 0..PCT_FIELDS {
        match (list.get(i), vals.get(i)) {
            (Some(p), Some(v)) => {
                let _ = write!(out, ";{p:.6}%={}", v / 1000);
            }
            _ => out.push_str(";0%=0"),
        }
    }
    lat_fields(out, &x.lat);
    if x.bw.n > 0 {
        // fio divides the aggregate to whole KiB/s first; no aggregate reads 100%.
        let agg_kib = agg / 1024;
        let share = if agg == 0 {
            100.0
        } else {
            (x.bw.mean * 100.0 / agg_kib as f64).min(100.0)
        };
        let _ = write!(
            out,
            ";{};{};{share:.6}%;{:.6};{:.6}",
            x.bw.min,
            x.bw.max,
            x.bw.mean,
            x.bw.stddev()
        );
    } else {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    }
    if ver == 5 {
        let _ = write!(out, ";{}", x.bw.n);
        if x.iops.n > 0 {
            let _ = write!(
                out,
                ";{};{};{:.6};{:.6};{}",
                x.iops.min,
                x.iops.max,
                x.iops.mean,
                x.iops.stddev(),
                x.iops.n
            );
        } else {
            out.push_str(";0;0;0.000000;0.000000;0");
        }
    }
}

/// The terse lines of `r` in version `ver` (2 to 5; anything else reads as 3).
pub(super) fn render(r: &RunResult, ver: u8) -> String {
    let ver = if (2..=5).contains(&ver) { ver } else { 3 };
    let mut out = String::new();
    let Some(orig) = &r.fio else {
        return out;
    };
    let fio = &unified_view(orig);
    let groups = group_aggs(fio);
    let run_error = i32::from(r.failed_beyond_jobs());
    let with_trim = ver != 3;
    for b in &fio.blocks {
        // fio's `ts->error`: the block's error number, as in the JSON `error`.
        let error = b.shown_error().map_or(run_error, |e| e.errno);
        let opts = report_opts(fio, b);
        let first = first_opts(fio, b);
        if ver == 2 {
            let _ = write!(out, "2;{};{};{error}", b.name, b.groupid);
        } else {
            let _ = write!(out, "{ver};{};{};{};{error}", version(), b.name, b.groupid);
        }
        let agg = |d: usize| groups.get(b.groupid as usize).map_or(0, |g| g.agg(d));
        dir_fields(&mut out, &b.read, agg(0), opts, ver);
        if first.unified_rw_reporting != FioUnified::Mixed {
            dir_fields(&mut out, &b.write, agg(1), opts, ver);
            if with_trim {
                dir_fields(&mut out, &b.trim, agg(2), opts, ver);
            }
        }
        if first.unified_rw_reporting == FioUnified::Both {
            let m = FioDir::mixed(&[&b.read, &b.write]);
            dir_fields(&mut out, &m, agg(0), opts, ver);
        }
        let _ = write!(
            out,
            ";{:.6}%;{:.6}%;{};{};{}",
            b.usr_cpu_pct, b.sys_cpu_pct, b.ctx, b.majf, b.minf
        );
        for p in pct_list(&b.iodepth_level) {
            let _ = write!(out, ";{p:3.1}%");
        }
        let (n, u, m, total) = lat_counts(b, super::nostats(&fio.jobs, b));
        let mut u = u.map(|c| lat_pct(c, total));
        // The ns buckets count in the first µs one (the terse format predates them), added
        // unrounded as fio adds them.
        if total > 0 {
            u[0] += n.iter().sum::<u64>() as f64 * 100.0 / total as f64;
        }
        let m = m.map(|c| lat_pct(c, total));
        for (i, p) in u.iter().chain(&m).enumerate() {
            if i == 0 && total == 0 {
                // fio divides the ns buckets by no I/Os at all there (a block that never
                // started): its C library prints the NaN as `-nan`; so does hostbench, for
                // parsers that expect fio's line.
                out.push_str(";-nan%");
            } else {
                let _ = write!(out, ";{p:3.2}%");
            }
        }
        if ver >= 3 {
            for d in &fio.disks {
                let _ = write!(
                    out,
                    ";{};{};{};{};{};{};{};{};{:3.2}%",
                    d.name,
                    d.read_ios,
                    d.write_ios,
                    d.read_merges,
                    d.write_merges,
                    d.read_ticks,
                    d.write_ticks,
                    d.in_queue,
                    d.util
                );
            }
        }
        // fio adds the error count and the first error with continue_on_error.
        if let Some(e) = &b.errors {
            let _ = write!(out, ";{};{}", e.total, e.first_errno);
        }
        if !first.description.is_empty() {
            if ver == 2 {
                out.push('\n');
            }
            let _ = write!(out, ";{}", first.description);
        }
        out.push('\n');
    }
    out
}
