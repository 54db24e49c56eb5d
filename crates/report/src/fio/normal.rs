//! fio's normal text layout: the start-up lines, one block per job (or clone), the group's
//! status lines and the devices' counters.

use super::{
    LAT_LABELS, ctime, first_opts, group_aggs, group_unified, lat_dist, num2str, pct_list,
    percentiles, report_opts, share_of_group, unified_view, version,
};
use hostbench_core::fio_result::{
    FioBlock, FioDir, FioPrio, FioReportOpts, FioResult, FioStat, FioUnified,
};
use hostbench_core::result::RunResult;
use std::fmt::Write as _;

/// fio's choice of unit for a latency line: nsec, usec when every figure is large enough,
/// msec beyond that.
fn lat_unit(s: &FioStat) -> (&'static str, f64) {
    let (min, max, dev) = (s.min, s.max, s.stddev());
    if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        ("msec", 1e6)
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        ("usec", 1e3)
    } else {
        ("nsec", 1.0)
    }
}

fn lat_line(out: &mut String, name: &str, s: &FioStat) {
    if s.n == 0 {
        return;
    }
    let (unit, div) = lat_unit(s);
    // fio divides the integer extremes (truncating) and the float mean and deviation.
    let min = s.min / div as u64;
    let max = s.max / div as u64;
    let _ = writeln!(
        out,
        "    {name} ({unit}): min={}, max={}, avg={:5.02}, stdev={:5.02}",
        num2str(min, 6, false, ""),
        num2str(max, 6, false, ""),
        s.mean / div,
        s.stddev() / div
    );
}

/// fio's percentile block of one latency (`name` = `clat`, `lat`, `slat`, `sync`): the
/// values at `list` with `precision` decimals, in fio's columns and unit.
fn percentile_block(
    out: &mut String,
    name: &str,
    bins: &[u64],
    n: u64,
    list: &[f64],
    precision: usize,
) {
    let vals = percentiles(bins, n, list);
    if vals.is_empty() {
        return;
    }
    let minv = *vals.iter().min().unwrap_or(&0);
    let maxv = *vals.iter().max().unwrap_or(&0);
    let (unit, scale) = if minv > 2_000_000 && maxv > 99_999_999 {
        ("msec", 2)
    } else if minv > 2000 && maxv > 99_999 {
        ("usec", 1)
    } else {
        ("nsec", 0)
    };
    let divisor = 1000u64.pow(scale);
    let width = 5usize.max(((maxv / divisor) as f64).log10() as usize + 1);
    let per_line = ((80 - 7) / (precision + 10 + width)).max(1);
    let _ = write!(out, "    {name} percentiles ({unit}):\n     |");
    for (j, (p, v)) in list.iter().zip(&vals).enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let mut v = *v;
        for _ in 0..scale {
            v = v.div_ceil(1000);
        }
        let last = j == vals.len() - 1;
        let _ = write!(
            out,
            " {p:pw$.precision$}th=[{v:width$}]{}",
            if last { '\n' } else { ',' },
            pw = precision + 3,
        );
        if last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

fn lat_dist_lines(out: &mut String, unit: &str, labels: &[&str], vals: &[f64]) {
    let mut line = 0;
    for (l, &v) in labels.iter().zip(vals) {
        if v <= 0.0 {
            continue;
        }
        if line == 0 {
            let _ = write!(out, "  lat ({unit})   : ");
        } else {
            out.push_str(", ");
        }
        let _ = write!(out, "{l}={v:3.2}%");
        line += 1;
        if line == 5 {
            out.push('\n');
            line = 0;
        }
    }
    if line > 0 {
        out.push('\n');
    }
}

/// fio's start line: "Starting 2 processes", "Starting 1 thread", or both joined by "and"
/// (`backend.c:run_threads`).
fn starting(threads: usize, processes: usize) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = Vec::new();
    if threads > 0 {
        parts.push(plural(threads, "thread", "threads"));
    }
    if processes > 0 {
        parts.push(plural(processes, "process", "processes"));
    }
    format!("Starting {}", parts.join(" and "))
}

/// fio's start-up lines (printed only when the normal layout is among the formats): one
/// per job, the version, "Starting N processes", then the lines the file layout printed
/// ("job: Laying out IO file ...").
pub(super) fn banner(r: &RunResult, layout: &[String]) -> String {
    let mut out = String::new();
    let Some(fio) = &r.fio else {
        return out;
    };
    // Start-up lines, one per job (fio prints "..." for further clones).
    let mut threads = 0usize;
    let mut processes = 0usize;
    for j in &fio.jobs {
        // fio prints block sizes with 4 significant digits: 4096B, 128KiB, 1024KiB.
        // Each direction's smallest and largest size (older results: reads' and writes'
        // one size, trims as reads).
        let range = |d: usize, or: u64| {
            let [lo, hi] = j.bs_ranges.get(d).copied().unwrap_or([or, or]);
            format!(
                "{}-{}",
                num2str(lo, 4, true, "B"),
                num2str(hi, 4, true, "B")
            )
        };
        let (br, bw, bt) = (
            range(0, j.bs_read),
            range(1, j.bs_write),
            range(2, j.bs_read),
        );
        let numjobs = j.numjobs as usize;
        // fio forks a process per clone unless the job says `thread` (hostbench always runs
        // threads; the line counts what fio would start, as scripts read it).
        if j.thread {
            threads += numjobs;
        } else {
            processes += numjobs;
        }
        // fio prints no start-up line for an engine that does no I/O (cpuio, exec): the
        // engine prints its own when each clone starts, below. Its "..." for further clones
        // is printed all the same (fio's `add_job`).
        if j.ioengine == "cpuio" || j.exec.is_some() {
            if numjobs > 1 {
                out.push_str("...\n");
            }
            continue;
        }
        // Two ranges: `bs_is_seq_rand`, which fio names in place of the trims' sizes.
        let trims = if j.bs_ranges.len() == 2 {
            "bs_is_seq_rand".to_string()
        } else {
            format!("(T) {bt}")
        };
        let _ = writeln!(
            out,
            "{}: (g={}): rw={}, bs=(R) {br}, (W) {bw}, {trims}, ioengine={}, iodepth={}",
            j.name, j.groupid, j.rw, j.ioengine, j.iodepth,
        );
        if numjobs > 1 {
            out.push_str("...\n");
        }
    }
    let _ = writeln!(out, "{}", version());
    let _ = writeln!(out, "{}", starting(threads, processes));
    for l in layout {
        let _ = writeln!(out, "{l}");
    }
    // cpuio's and exec's own lines, per clone as each starts (fio's engine init; exec's
    // second line when the clone starts the program). fio prints them as the clones get
    // there, so between jobs their order may differ from run to run; here it is the jobs'.
    for j in &fio.jobs {
        if let Some(e) = &j.exec {
            let null = |a: &Option<String>| a.clone().unwrap_or_else(|| "(null)".into());
            for _ in 0..j.numjobs {
                let _ = writeln!(
                    out,
                    "{} : program={}, arguments={}",
                    j.name,
                    e.program,
                    null(&e.arguments)
                );
                if e.std_redirect {
                    let _ = writeln!(
                        out,
                        "{n} : Saving output of {} {} : stdout={n}.stdout stderr={n}.stderr",
                        e.program,
                        null(&e.expanded),
                        n = j.name
                    );
                } else {
                    let _ = writeln!(
                        out,
                        "{} : Running {} {}",
                        j.name,
                        e.program,
                        null(&e.expanded)
                    );
                }
            }
            continue;
        }
        if j.ioengine != "cpuio" {
            continue;
        }
        // The job's own settings; a result without them (older) has its options read
        // (the job's own, then the globals').
        let opt = |name: &str, or: &str| -> String {
            j.options
                .iter()
                .rev()
                .chain(fio.global_options.iter().rev())
                .find(|o| o.name == name)
                .map_or(or.to_string(), |o| o.value.trim().to_string())
        };
        let (load, mode, cycle) = match &j.cpuio {
            Some(c) => (u64::from(c.load), c.mode.clone(), c.cycle_us.to_string()),
            None => (
                opt("cpuload", "0").parse::<u64>().unwrap_or(0).min(100),
                opt("cpumode", "noop"),
                opt("cpuchunks", "50000"),
            ),
        };
        for _ in 0..j.numjobs {
            let _ = writeln!(
                out,
                "{} ({mode}): ioengine=cpuio, cpuload={load}, cpucycle={cycle}",
                j.name
            );
        }
    }
    out
}

/// One direction of a job block (`read`, `write` or `mixed`): its rate line, latencies,
/// percentile blocks and bandwidth/IOPS samples. `agg` is its group's aggregate bandwidth
/// in the same direction (bytes/s), for `per=`.
#[allow(clippy::too_many_arguments)]
fn dir_lines(
    out: &mut String,
    dname: &str,
    x: &FioDir,
    agg: u64,
    opts: &FioReportOpts,
    gtod_reduce: bool,
    suffix: &str,
    bw_unit: &str,
) {
    let bw = x.bw_bytes();
    let iops = (x.total_ios * 1000).checked_div(x.runtime_ms).unwrap_or(0);
    let sf = opts.sig_figs as usize;
    let _ = writeln!(
        out,
        "  {dname}: IOPS={}, BW={} ({})({}/{}msec){suffix}",
        num2str(iops, sf, false, ""),
        num2str(bw, sf, true, bw_unit),
        num2str(bw, sf, false, bw_unit),
        num2str(x.io_bytes, sf, true, "B"),
        x.runtime_ms,
    );
    if !gtod_reduce {
        lat_line(out, "slat", &x.slat);
        lat_line(out, "clat", &x.clat);
        lat_line(out, " lat", &x.lat);
        // fio's per-priority lines (`cmdprio_*`), when two priorities or more have
        // samples: of the total latency with lat_percentiles, else of the completion one.
        let prios = FioPrio::shown(&x.prios);
        let kind = if opts.lat_percentiles { "lat" } else { "clat" };
        if prios {
            for p in x.prios.iter().filter(|p| p.lat.n > 0) {
                let name = format!("{kind} prio {}/{}", p.class(), p.level());
                lat_line(out, &name, &p.lat);
            }
        }
        let list = opts.percentiles();
        let prec = opts.percentile_precision as usize;
        for (on, name, s, bins) in [
            (opts.slat_percentiles, "slat", &x.slat, &x.slat_bins),
            (opts.clat_percentiles, "clat", &x.clat, &x.clat_bins),
            (opts.lat_percentiles, "lat", &x.lat, &x.lat_bins),
        ] {
            if on && s.n > 0 {
                percentile_block(out, name, &bins.dense(), s.n, &list, prec);
            }
        }
        if prios && (opts.clat_percentiles || opts.lat_percentiles) {
            let all = if opts.lat_percentiles {
                x.lat.n
            } else {
                x.clat.n
            };
            for p in x.prios.iter().filter(|p| p.lat.n > 0) {
                let name = format!(
                    "{kind} prio {}/{} ({:.2}% of IOs)",
                    p.class(),
                    p.level(),
                    100.0 * p.lat.n as f64 / all as f64
                );
                percentile_block(out, &name, &p.bins.dense(), p.lat.n, &list, prec);
            }
        }
    }
    if x.bw.n > 0 {
        let p_of_agg = share_of_group(x.bw.mean, agg);
        let (unit, div) = if x.bw.mean > 1024.0 * 1024.0 {
            ("MiB", 1024.0)
        } else {
            ("KiB", 1.0)
        };
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={:5}, max={:5}, per={p_of_agg:3.2}%, avg={:5.02}, stdev={:5.02}, samples={}",
            x.bw.min / div as u64,
            x.bw.max / div as u64,
            x.bw.mean / div,
            x.bw.stddev() / div,
            x.bw.n
        );
    }
    // Each line has its own samples (disable_bw with a per-I/O bandwidth log: iops alone).
    if x.iops.n > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.02}, stdev={:5.02}, samples={}",
            x.iops.min,
            x.iops.max,
            x.iops.mean,
            x.iops.stddev(),
            x.iops.n
        );
    }
}

/// One "Run status group" line (`   READ`, `  WRITE`, `  MIXED`); bandwidths in `unit`
/// (`B/s` or `bit/s`).
#[allow(clippy::too_many_arguments)]
fn group_line(
    out: &mut String,
    sf: usize,
    unit: &str,
    label: &str,
    agg: u64,
    min_bw: u64,
    max_bw: u64,
    io: u64,
    min_run: u64,
    max_run: u64,
) {
    let _ = writeln!(
        out,
        "{label}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
        num2str(agg, sf, true, unit),
        num2str(agg, sf, false, unit),
        num2str(min_bw, sf, true, unit),
        num2str(max_bw, sf, true, unit),
        num2str(min_bw, sf, false, unit),
        num2str(max_bw, sf, false, unit),
        num2str(io, sf, true, "B"),
        num2str(io, sf, false, "B"),
        min_run,
        max_run
    );
}

/// fio's normal report after the start-up lines: a blank line, the job blocks one after
/// another, each group's status lines and the devices' counters.
pub(super) fn render(r: &RunResult) -> String {
    let mut out = String::from("\n");
    let Some(orig) = &r.fio else {
        return "fio: this result has no fio statistics\n".into();
    };
    let fio = &unified_view(orig);
    let when = ctime(super::printed_at(r) as i64);
    let pid = fio.pid;
    // Each reporting group's aggregates (for per= and its status lines).
    let groups = group_aggs(fio);
    // fio prints no block for a job that did no I/O (one `exitall` stopped before it
    // started): JSON still lists it.
    for b in fio.blocks.iter().filter(|b| b.did_io()) {
        let opts = report_opts(fio, b);
        let first = first_opts(fio, b);
        // fio's `err=28 (file:io_u.c:1876, func=io_u error, error=No space left on device)`,
        // without fio's source location.
        // An error a job went on after in a queue engine has no text in fio: `err=28 ()`.
        let err = match b.shown_error() {
            Some(e) if e.func.is_empty() => format!("{:2} ()", e.errno),
            Some(e) => format!("{:2} (func={}, error={})", e.errno, e.func, e.text),
            None => format!("{:2}", i32::from(r.failed_beyond_jobs())),
        };
        let _ = writeln!(
            out,
            "{}: (groupid={}, jobs={}): err={err}: pid={pid}: {when}",
            b.name, b.groupid, b.clones
        );
        if !first.description.is_empty() {
            let _ = writeln!(out, "  Description  : [{}]", first.description);
        }
        let mixed_only = first.unified_rw_reporting == FioUnified::Mixed;
        // fio's unit base is the block's first job's (`unit_base`; bits for net jobs).
        let bw_unit = if first.bits { "bit/s" } else { "B/s" };
        let g = groups.get(b.groupid as usize);
        for (d, (dname, x)) in ["read", "write", "trim"].iter().zip(b.dirs()).enumerate() {
            if x.io_bytes == 0 || x.runtime_ms == 0 {
                continue;
            }
            let name = if mixed_only { "mixed" } else { dname };
            let resets = format!("; {} zone resets", b.zone_resets);
            let suffix = if d == 1 { resets.as_str() } else { "" };
            let agg = g.map_or(0, |g| g.agg(d));
            dir_lines(&mut out, name, x, agg, opts, b.gtod_reduce, suffix, bw_unit);
        }
        if first.unified_rw_reporting == FioUnified::Both {
            // fio 3.33 prints zeros on this line's rate figures (a bug); hostbench the
            // mixed direction's own, as in its JSON. `per=` is of the group's reads, as fio.
            let m = FioDir::mixed(&[&b.read, &b.write]);
            let agg = g.map_or(0, |g| g.agg(0));
            dir_lines(&mut out, "mixed", &m, agg, opts, b.gtod_reduce, "", bw_unit);
        }
        block_tail(
            &mut out,
            b,
            opts,
            super::nostats(&fio.jobs, b),
            fsync_calls(fio, b),
        );
        let l = super::latency_target(&fio.jobs, b);
        let _ = writeln!(
            out,
            "     latency   : target={}, window={}, percentile={:.2}%, depth={}",
            l.target_ns, l.window_us, l.percentile, l.depth
        );
        if let Some(ss) = &b.steadystate {
            let _ = writeln!(
                out,
                "{}",
                steadystate_line(ss, bw_unit, opts.sig_figs as usize)
            );
        }
    }
    // fio: job blocks follow one another; a blank line before each group's summary, which
    // is printed for every group, empty or not.
    for (gid, g) in groups.iter().enumerate() {
        let _ = writeln!(out, "\nRun status group {gid} (all jobs):");
        let unified = group_unified(orig, gid as u32);
        // fio's group takes the unit base of its last block (`__show_run_stats` sets it
        // from each in turn): a net job's bits, or a file job's bytes, whichever is last.
        let last = fio.blocks.iter().rfind(|b| b.groupid == gid as u32);
        let unit = match last {
            Some(b) if first_opts(fio, b).bits => "bit/s",
            _ => "B/s",
        };
        // Its significant figures too (`rs->sig_figs`, set from each block in turn).
        let sf = last.map_or(4, |b| report_opts(fio, b).sig_figs) as usize;
        for (d, label) in ["   READ", "  WRITE", "   TRIM"].iter().enumerate() {
            if g.max_run[d] == 0 {
                continue;
            }
            let label = if unified == FioUnified::Mixed {
                "  MIXED"
            } else {
                label
            };
            group_line(
                &mut out,
                sf,
                unit,
                label,
                g.agg(d),
                g.min_bw[d],
                g.max_bw[d],
                g.io[d],
                g.min_run[d],
                g.max_run[d],
            );
        }
        if unified == FioUnified::Both {
            // fio's `show_mixed_group_stats`: the directions' sums, extremes and runtimes.
            let ds = (0..2).filter(|&d| g.max_run[d] > 0);
            let (mut io, mut agg, mut min_bw, mut max_bw) = (0, 0, u64::MAX, 0);
            let (mut min_run, mut max_run) = (u64::MAX, 0);
            for d in ds {
                io += g.io[d];
                agg += g.agg(d);
                min_bw = min_bw.min(g.min_bw[d]);
                max_bw = max_bw.max(g.max_bw[d]);
                min_run = min_run.min(g.min_run[d]);
                max_run = max_run.max(g.max_run[d]);
            }
            group_line(
                &mut out, sf, unit, "  MIXED", agg, min_bw, max_bw, io, min_run, max_run,
            );
        }
    }
    if !fio.disks.is_empty() {
        out.push_str("\nDisk stats (read/write):\n");
        for d in &fio.disks {
            let _ = writeln!(
                out,
                "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2}%",
                d.name,
                d.read_ios,
                d.write_ios,
                d.read_merges,
                d.write_merges,
                d.read_ticks,
                d.write_ticks,
                d.in_queue,
                d.util,
            );
        }
    }
    if let Some(idle) = &fio.cpu_idleness {
        out.push_str(&idle_prof(idle, false));
    }
    out
}

/// fio's `--idle-prof` lines (`show_idle_prof_stats`): after the disk stats with a blank
/// line before them, or alone (`alone`: `--idle-prof=calibrate`, the unit's line only).
pub fn idle_prof(f: &hostbench_core::fio_result::FioIdleness, alone: bool) -> String {
    let mut s = String::new();
    if !alone {
        s.push('\n');
    }
    s.push_str("CPU idleness:\n");
    if f.mode != "calibrate" {
        let _ = writeln!(s, "  system: {:3.2}%", f.system);
    }
    if f.mode == "percpu" {
        let cells: Vec<String> = f.per_cpu.iter().map(|p| format!("{p:3.2}%")).collect();
        let _ = writeln!(s, "  percpu: {}", cells.join(", "));
    }
    let _ = writeln!(
        s,
        "  unit work: mean={:3.2}us, stddev={:3.2}",
        f.unit_mean_us, f.unit_stddev_us
    );
    s
}

/// fio's "All clients" block of a client-mode run (after every host's report): the hosts'
/// job blocks added (`b`), `agg` their groups' aggregate bandwidth per direction. As fio
/// prints it: `pid=0`, bandwidths without a unit (`BW=31.2Gi (33.6G)`: its summed
/// statistics have no unit base), no percentiles, no `latency` target line, no group
/// status lines.
pub(super) fn all_clients(b: &FioBlock, agg: [u64; 3], when: &str, mixed: bool) -> String {
    let mut out = String::new();
    let err = b.error.as_ref().map_or(0, |e| e.errno);
    let _ = writeln!(
        out,
        "All clients: (groupid={}, jobs={}): err={err:2}: pid=0: {when}",
        b.groupid, b.clones
    );
    let opts = FioReportOpts {
        clat_percentiles: false,
        ..FioReportOpts::default()
    };
    for (d, (dname, x)) in ["read", "write", "trim"].iter().zip(b.dirs()).enumerate() {
        if x.runtime_ms == 0 {
            continue;
        }
        let resets = format!("; {} zone resets", b.zone_resets);
        let suffix = if d == 1 { resets.as_str() } else { "" };
        // Every direction summed into the reads' place: fio names it `mixed`.
        let dname = if mixed { "mixed" } else { dname };
        dir_lines(&mut out, dname, x, agg[d], &opts, b.gtod_reduce, suffix, "");
    }
    block_tail(&mut out, b, &opts, false, 0);
    out
}

/// The lines of a job block after its directions: the latency distribution, the sync
/// latencies, CPU, queue depths and the issued I/Os.
/// The block's fsync calls, the fourth `total` of fio's `issued rwts` (its
/// `total_io_u[DDIR_SYNC]`): the block's syncs when its job syncs with `fsync=N` (taken
/// first when `fdatasync` or `sync_file_range` are due too), 0 otherwise (fio 3.33 counts
/// an fdatasync or sync_file_range one slot past that array: not copied, see fio.md).
fn fsync_calls(fio: &FioResult, b: &FioBlock) -> u64 {
    let own = fio
        .jobs
        .get(b.job)
        .and_then(|j| j.options.iter().rev().find(|o| o.name == "fsync"));
    let given = own.or_else(|| fio.global_options.iter().rev().find(|o| o.name == "fsync"));
    match given.and_then(|o| o.value.trim().parse::<u64>().ok()) {
        Some(n) if n > 0 => b.sync.n,
        _ => 0,
    }
}

/// `fsyncs`: [`fsync_calls`].
fn block_tail(out: &mut String, b: &FioBlock, opts: &FioReportOpts, nostats: bool, fsyncs: u64) {
    if !b.gtod_reduce {
        let (n, u, m) = lat_dist(b, nostats);
        let l: Vec<String> = LAT_LABELS.iter().map(|x| x.to_string()).collect();
        let l: Vec<&str> = l.iter().map(String::as_str).collect();
        lat_dist_lines(out, "nsec", &l, &n);
        lat_dist_lines(out, "usec", &l, &u);
        let mut lm = l.clone();
        lm.push("2000");
        lm.push(">=2000");
        lat_dist_lines(out, "msec", &lm, &m);
    }
    if b.sync.n > 0 {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        lat_line(out, "sync", &b.sync);
        let prec = opts.percentile_precision as usize;
        percentile_block(
            out,
            "sync",
            &b.sync_bins.dense(),
            b.sync.n,
            &opts.percentiles(),
            prec,
        );
    }
    let _ = writeln!(
        out,
        "  cpu          : usr={:.2}%, sys={:.2}%, ctx={}, majf={}, minf={}",
        b.usr_cpu_pct, b.sys_cpu_pct, b.ctx, b.majf, b.minf
    );
    let dp = pct_list(&b.iodepth_level);
    let _ = writeln!(
        out,
        "  IO depths    : 1={:.1}%, 2={:.1}%, 4={:.1}%, 8={:.1}%, 16={:.1}%, 32={:.1}%, >=64={:.1}%",
        dp[0], dp[1], dp[2], dp[3], dp[4], dp[5], dp[6]
    );
    for (name, v) in [
        ("submit", &b.iodepth_submit),
        ("complete", &b.iodepth_complete),
    ] {
        let p = pct_list(v);
        let _ = writeln!(
            out,
            "     {name:<10}: 0={:.1}%, 4={:.1}%, 8={:.1}%, 16={:.1}%, 32={:.1}%, 64={:.1}%, >=64={:.1}%",
            p[0], p[1], p[2], p[3], p[4], p[5], p[6]
        );
    }
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{fsyncs} short={},{},{},0 dropped={},{},{},0",
        b.read.total_ios,
        b.write.total_ios,
        b.trim.total_ios,
        b.read.short_ios,
        b.write.short_ios,
        b.trim.short_ios,
        b.read.drop_ios,
        b.write.drop_ios,
        b.trim.drop_ios
    );
    if let Some(e) = &b.errors {
        let _ = writeln!(
            out,
            "     errors    : total={}, first_error={}/<{}>",
            e.total,
            e.first_errno,
            strerror(e.first_errno)
        );
    }
}

/// fio's `steadystate` line of a job block. Its bandwidth means are KiB-scaled twice, as
/// fio prints them (the KiB figure with a KiB prefix, and the same figure with a kB one).
fn steadystate_line(
    ss: &hostbench_core::fio_result::FioSteadyState,
    unit: &str,
    sf: usize,
) -> String {
    let kib = ss.bw_mean() / 1024;
    let up = |pow2: bool| hostbench_core::fio_num::num2str_from(kib, 1, sf, pow2, unit);
    format!(
        "  steadystate  : attained={}, bw={} ({}), iops={}, {}{}={}{}",
        if ss.attained { "yes" } else { "no" },
        up(true),
        up(false),
        num2str(ss.iops_mean(), sf, false, ""),
        if ss.iops { "iops" } else { "bw" },
        if ss.slope { " slope" } else { " mean dev" },
        ss.criterion
            .map_or("nan".to_string(), |c| format!("{c:.3}")),
        if ss.pct { "%" } else { "" }
    )
}

/// The C library's text for `errno` (fio's `strerror`: `Success` for 0), without Rust's
/// `(os error N)`.
fn strerror(errno: i32) -> String {
    let s = std::io::Error::from_raw_os_error(errno).to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    /// fio 3.33's words and order with thread=1 jobs beside process jobs: threads first
    /// ("Starting 4 threads and 3 processes", as a user review measured).
    #[test]
    fn start_line_is_fios() {
        assert_eq!(super::starting(4, 3), "Starting 4 threads and 3 processes");
        assert_eq!(super::starting(1, 1), "Starting 1 thread and 1 process");
        assert_eq!(super::starting(0, 2), "Starting 2 processes");
        assert_eq!(super::starting(3, 0), "Starting 3 threads");
    }
}
