//! What a run hands over: each clone's statistics (`CloneStats`, kept by its worker in
//! fio's own shapes, [`super::stats`]) become the result's typed `fio` section
//! ([`FioResult`]): the jobs as the workload understood them, one report block per clone or,
//! with `group_reporting`, per job with its clones merged the way fio merges them (sums of
//! I/O, the longest runtime, an exact merge of latency statistics and histograms, bandwidth
//! and IOPS samples added up, CPU averaged, context switches and faults summed), and the
//! devices' counters. fio's layouts render that section alone.

use super::job::{JobSpec, Section};
use super::stats::{Plat, RunStat};
use super::{Shared, idle};
use hostbench_core::fio_result::{
    FioBins, FioBlock, FioDir, FioDisk, FioError, FioErrorCount, FioJob, FioLatencyTarget,
    FioOption, FioPrio, FioResult,
};

/// Statistics of one direction of one clone.
#[derive(Debug, Clone, Default)]
pub(super) struct DirStats {
    pub(super) bytes: u64,
    pub(super) ios: u64,
    pub(super) short: u64,
    /// UDP messages missing from the sender's sequence (the net engine's receiver).
    pub(super) drops: u64,
    pub(super) slat: RunStat,
    pub(super) clat: RunStat,
    pub(super) lat: RunStat,
    pub(super) clat_plat: Plat,
    /// Total and submission latency histograms (`lat_percentiles`, `slat_percentiles`).
    pub(super) lat_plat: Plat,
    pub(super) slat_plat: Plat,
    pub(super) bw: RunStat,
    pub(super) iops: RunStat,
    /// `cmdprio_*`: per priority of the direction's plan (the clone's own first), the
    /// completion latency (total latency with `lat_percentiles`) and its histogram; empty
    /// when the direction has no plan.
    pub(super) prios: Vec<(u32, RunStat, Plat)>,
    // Interval sample state.
    pub(super) last_bytes: u64,
    pub(super) last_ios: u64,
}

/// What one clone measured.
#[derive(Debug, Clone, Default)]
pub(super) struct CloneStats {
    pub(super) job: usize,
    /// Which clone of its job (0: the first).
    pub(super) clone: u32,
    /// Reads, writes, trims.
    pub(super) dirs: [DirStats; 3],
    pub(super) sync: RunStat,
    pub(super) sync_plat: Plat,
    pub(super) runtime_ns: u64,
    pub(super) usr_ns: u64,
    pub(super) sys_ns: u64,
    pub(super) ctx: u64,
    pub(super) majf: u64,
    pub(super) minf: u64,
    /// Zone resets made (`zonemode=zbd`; fio's `nr_zone_resets`).
    pub(super) zone_resets: u64,
    pub(super) depth_map: [u64; 7],
    pub(super) submit_map: [u64; 7],
    pub(super) complete_map: [u64; 7],
    /// The error the clone ended with (fio's `err=`), if any.
    pub(super) error: Option<FioError>,
    /// The errors counted under `continue_on_error` ([`super::errors`]), once there is one.
    pub(super) errors: Option<FioErrorCount>,
    /// The clone's own I/O priority (`prio`/`prioclass`; 0 when none).
    pub(super) ioprio: u32,
    /// It keeps per-priority statistics (`cmdprio_*` gave a direction a plan).
    pub(super) cmdprio: bool,
    /// The steady state of the clone that keeps its job's (or group's) ring.
    pub(super) ss: Option<hostbench_core::fio_result::FioSteadyState>,
    /// Time of the verify phase (`verify`), ns: fio reports it as the reads' runtime and
    /// the rest of the clone's time as the writes'.
    pub(super) verify_ns: u64,
    /// The queue depth fio's search (`latency_target`) ended at (0: no search).
    pub(super) lat_depth: u32,
    /// I/Os and bytes completed in ramp time, per direction: reported only by a clone that
    /// never got past it (fio's statistics are reset when ramp time ends).
    pub(super) ramp: [(u64, u64); 3],
}

impl CloneStats {
    /// Starts the I/O statistics again from zero, as fio's `reset_io_stats` does when its
    /// queue-depth search begins its final window: figures, histograms and depth maps go;
    /// the error, the counted errors and the steady state stay (the histograms keep their
    /// memory).
    pub(super) fn restart(&mut self) {
        for d in &mut self.dirs {
            d.bytes = 0;
            d.ios = 0;
            d.short = 0;
            d.drops = 0;
            d.slat = RunStat::default();
            d.clat = RunStat::default();
            d.lat = RunStat::default();
            d.bw = RunStat::default();
            d.iops = RunStat::default();
            d.clat_plat.reset();
            d.lat_plat.reset();
            d.slat_plat.reset();
            for (_, st, plat) in &mut d.prios {
                *st = RunStat::default();
                plat.reset();
            }
            d.last_bytes = 0;
            d.last_ios = 0;
        }
        self.sync = RunStat::default();
        self.sync_plat.reset();
        self.depth_map = [0; 7];
        self.submit_map = [0; 7];
        self.complete_map = [0; 7];
    }
}

/// The options of the `[global]` sections that reach the last job file's jobs, in order
/// (fio's JSON "global options"): fio starts each job file from its defaults, so with
/// several files only the last one's count (none: no key); with one, the command line's
/// and the file's.
pub(super) fn global_options(sections: &[Section]) -> Vec<FioOption> {
    let from = sections.iter().rposition(|s| s.file_start).unwrap_or(0);
    sections[from..]
        .iter()
        .filter(|s| s.is_global())
        .flat_map(|s| &s.opts)
        .map(|(k, v)| option(k, v))
        .collect()
}

/// One shown option, under fio's name for it (an alias is shown by its option's name, as
/// fio shows it: `readwrite=` is `"rw"`).
fn option(k: &str, v: &str) -> FioOption {
    FioOption {
        name: super::fio_names::canonical_name(k).to_string(),
        value: v.to_string(),
    }
}

fn job(j: &JobSpec) -> FioJob {
    // A replay's start-up line shows the job's own rw and sizes, as fio's (not the log's).
    let (rw, bsz) = j
        .replay_shown
        .as_ref()
        .map_or((j.rw, &j.bsz), |(rw, b)| (*rw, b));
    FioJob {
        name: j.clone_name(0).to_string(),
        options: j.own_opts.iter().map(|(k, v)| option(k, v)).collect(),
        rw: rw.name().into(),
        bs_read: j.bs_read,
        bs_write: j.bs_write,
        ioengine: j.engine.name().into(),
        iodepth: j.iodepth,
        numjobs: j.numjobs,
        thread: j.thread,
        groupid: j.groupid,
        stonewall: j.stonewall,
        report: j.report.clone(),
        // bs_is_seq_rand: the sequential (reads') and random (writes') sizes alone, as
        // fio's start-up line shows them (see `FioJob::bs_ranges`).
        bs_ranges: bsz
            .iter()
            .take(if j.bs_is_seq_rand { 2 } else { 3 })
            .map(|b| [b.min, b.max])
            .collect(),
        exec: (j.engine == super::job::EngineKind::Exec).then(|| {
            let e = &j.eng.exec;
            hostbench_core::fio_result::FioExec {
                program: e.program.clone().unwrap_or_default(),
                arguments: e.arguments.clone(),
                expanded: e
                    .arguments
                    .as_deref()
                    .map(|a| super::engines::exec::expand(a, j.runtime_s.unwrap_or(0.0), &j.name)),
                std_redirect: e.std_redirect,
            }
        }),
        cpuio: (j.engine == super::job::EngineKind::Cpuio).then(|| {
            hostbench_core::fio_result::FioCpuio {
                load: j.eng.cpuload.min(100),
                mode: j.eng.cpumode.name().into(),
                cycle_us: j.eng.cpuchunks_us,
            }
        }),
    }
}

/// A block while clones are merged into it: its histograms still whole (read, write, sync;
/// then the total and submission latencies of reads and writes; then trims' completion,
/// total and submission latencies).
struct Acc {
    block: FioBlock,
    bins: [Vec<u64>; 10],
    /// Per direction, the per-priority statistics of its clones (fio's `clat_prio`: a
    /// clone without a plan for the direction counts all its I/Os under its own priority).
    prios: [Vec<FioPrio>; 3],
    /// The first clone's priority.
    ioprio: u32,
    /// fio keeps the block's per-priority statistics: a clone has a plan, or the clones'
    /// priorities differ (`stat.c:init_per_prio_stats`).
    keep_prios: bool,
}

/// One clone's per-priority statistics of each direction, as fio sums them into a block
/// (`sum_clat_prio_stats`).
fn clone_prios(s: &CloneStats, j: &JobSpec) -> [Vec<FioPrio>; 3] {
    std::array::from_fn(|d| {
        let ds = &s.dirs[d];
        if !ds.prios.is_empty() {
            return ds
                .prios
                .iter()
                .map(|(p, st, plat)| FioPrio {
                    ioprio: *p,
                    lat: st.to_fio(),
                    bins: FioBins::from_dense(&plat.0[..]),
                })
                .collect();
        }
        let (st, plat) = if j.report.lat_percentiles {
            (&ds.lat, &ds.lat_plat)
        } else {
            (&ds.clat, &ds.clat_plat)
        };
        vec![FioPrio {
            ioprio: s.ioprio,
            lat: st.to_fio(),
            bins: FioBins::from_dense(&plat.0[..]),
        }]
    })
}

/// One clone's block.
fn clone_block(s: &CloneStats, j: &JobSpec) -> Acc {
    // fio counts runtime in whole ms: the job's truncated (`job_runtime`), a direction's
    // rounded up from its µs (`update_runtime`: 999.4 ms of a `runtime=1` job read for
    // 1000, never 999); a run that moved data lasted at least 1 ms of it (a clone whose
    // first I/O failed has none, as in fio).
    let did_io = s.dirs.iter().any(|d| d.bytes > 0);
    let ms_up = |ns: u64| (ns / 1000).div_ceil(1000);
    let runtime_ms = (s.runtime_ns / 1_000_000).max(u64::from(did_io));
    let pct = |ns: u64| {
        if s.runtime_ns > 0 {
            ns as f64 * 100.0 / s.runtime_ns as f64
        } else {
            0.0
        }
    };
    let read_pct = j.rw.read_pct(j.rwmixread);
    // A writer's verify reads are reads: the verify phase is their runtime (fio's
    // `do_verify`), and what came before it the writes'.
    let verified = s.dirs[0].ios > 0 && read_pct == 0;
    let dir_ms = |d: usize| {
        // fio updates a direction's runtime only once it moved bytes.
        if s.dirs[d].bytes == 0 {
            return 0;
        }
        if s.verify_ns == 0 {
            return ms_up(s.runtime_ns).max(1);
        }
        let ns = if d == 0 {
            s.verify_ns
        } else {
            s.runtime_ns.saturating_sub(s.verify_ns)
        };
        ms_up(ns).max(u64::from(s.dirs[d].bytes > 0))
    };
    let dir = |d: usize| {
        let ds = &s.dirs[d];
        // cpuio and exec move no data: fio gives their directions no runtime (no rate
        // lines).
        let active = !j.engine.no_io()
            && match d {
                0 => read_pct > 0 || verified,
                // verify_only's writes are not done: fio gives them no runtime.
                1 => read_pct < 100 && (!j.rw.trims() || j.rw.trim_write()) && !j.verify.only,
                _ => j.rw.trims(),
            };
        FioDir {
            io_bytes: ds.bytes,
            total_ios: ds.ios,
            short_ios: ds.short,
            drop_ios: ds.drops,
            runtime_ms: if active { dir_ms(d) } else { 0 },
            slat: ds.slat.to_fio(),
            clat: ds.clat.to_fio(),
            lat: ds.lat.to_fio(),
            bw: ds.bw.to_fio(),
            iops: ds.iops.to_fio(),
            clat_bins: FioBins::default(),
            lat_bins: FioBins::default(),
            slat_bins: FioBins::default(),
            prios: Vec::new(),
        }
    };
    Acc {
        block: FioBlock {
            job: s.job,
            name: j.clone_name(s.clone).to_string(),
            groupid: j.groupid,
            clones: 1,
            runtime_ms,
            usr_cpu_pct: pct(s.usr_ns),
            sys_cpu_pct: pct(s.sys_ns),
            ctx: s.ctx,
            majf: s.majf,
            minf: s.minf,
            zone_resets: s.zone_resets,
            iodepth: if j.sync_io() { 1 } else { j.iodepth },
            gtod_reduce: j.gtod_reduce,
            read: dir(0),
            write: dir(1),
            trim: dir(2),
            sync: s.sync.to_fio(),
            sync_bins: FioBins::default(),
            iodepth_level: s.depth_map,
            iodepth_submit: s.submit_map,
            iodepth_complete: s.complete_map,
            error: s.error.clone(),
            steadystate: s.ss.clone(),
            latency_target: j.lat.reported().then(|| FioLatencyTarget {
                target_ns: j.lat.target_ns,
                window_us: j.lat.window_us,
                percentile: j.lat.percentile,
                // Without a search fio's depth is the iodepth given (a sync engine's too).
                depth: if j.lat.active() && s.lat_depth > 0 {
                    s.lat_depth
                } else {
                    j.iodepth.max(1)
                },
            }),
            errors: j
                .errors
                .reported()
                .then(|| s.errors.clone().unwrap_or_default()),
        },
        bins: [
            s.dirs[0].clat_plat.0.to_vec(),
            s.dirs[1].clat_plat.0.to_vec(),
            s.sync_plat.0.to_vec(),
            s.dirs[0].lat_plat.0.to_vec(),
            s.dirs[1].lat_plat.0.to_vec(),
            s.dirs[0].slat_plat.0.to_vec(),
            s.dirs[1].slat_plat.0.to_vec(),
            s.dirs[2].clat_plat.0.to_vec(),
            s.dirs[2].lat_plat.0.to_vec(),
            s.dirs[2].slat_plat.0.to_vec(),
        ],
        prios: clone_prios(s, j),
        ioprio: s.ioprio,
        keep_prios: s.cmdprio,
    }
}

fn add(a: &mut [u64], b: &[u64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// fio's group reporting: `b`, another clone of `m`'s reporting group, merged into `m`.
fn merge(m: &mut Acc, b: &Acc) {
    let (mb, bb) = (&mut m.block, &b.block);
    // The block keeps its first clone's name; fio's JSON shows the last merged job's options.
    mb.job = bb.job;
    // fio (`sum_thread_stats`) adds the clones' runtimes (`total_run_time`, the JSON's
    // `job_runtime`) and their CPU times: the shares are weighted by runtime.
    let (wm, wb) = (mb.runtime_ms as f64, bb.runtime_ms as f64);
    let weigh = |m: f64, b: f64| {
        if wm + wb > 0.0 {
            (m * wm + b * wb) / (wm + wb)
        } else {
            0.0
        }
    };
    mb.usr_cpu_pct = weigh(mb.usr_cpu_pct, bb.usr_cpu_pct);
    mb.sys_cpu_pct = weigh(mb.sys_cpu_pct, bb.sys_cpu_pct);
    mb.runtime_ms += bb.runtime_ms;
    mb.clones += 1;
    // fio's merged entry keeps the first error; the exit status counts every failed clone.
    match (&mut mb.error, &bb.error) {
        (Some(m), Some(b)) => {
            m.clones += b.clones;
            m.setup_clones += b.setup_clones;
        }
        (m @ None, Some(b)) => *m = Some(b.clone()),
        _ => {}
    }
    // fio (`sum_thread_stats`): the counts add up, the first error is the last clone's.
    if let Some(be) = &bb.errors {
        let me = mb.errors.get_or_insert_with(Default::default);
        me.total += be.total;
        me.first_errno = be.first_errno;
        if me.first.is_none() {
            me.first = be.first.clone();
        }
    }
    // fio's latency_* figures are the last merged clone's (`__show_run_stats` overwrites
    // them for each).
    mb.latency_target = bb.latency_target;
    // The group's last clone keeps the group's steady state (fio's `steadystate_setup`).
    if bb.steadystate.is_some() {
        mb.steadystate = bb.steadystate.clone();
    }
    mb.ctx += bb.ctx;
    mb.majf += bb.majf;
    mb.zone_resets += bb.zone_resets;
    mb.minf += bb.minf;
    mb.sync.merge(&bb.sync);
    for (md, bd) in [
        (&mut mb.read, &bb.read),
        (&mut mb.write, &bb.write),
        (&mut mb.trim, &bb.trim),
    ] {
        md.io_bytes += bd.io_bytes;
        md.total_ios += bd.total_ios;
        md.short_ios += bd.short_ios;
        md.drop_ios += bd.drop_ios;
        md.runtime_ms = md.runtime_ms.max(bd.runtime_ms);
        md.slat.merge(&bd.slat);
        md.clat.merge(&bd.clat);
        md.lat.merge(&bd.lat);
        md.bw.sum(&bd.bw);
        md.iops.sum(&bd.iops);
    }
    add(&mut mb.iodepth_level, &bb.iodepth_level);
    add(&mut mb.iodepth_submit, &bb.iodepth_submit);
    add(&mut mb.iodepth_complete, &bb.iodepth_complete);
    for (x, y) in m.bins.iter_mut().zip(&b.bins) {
        add(x, y);
    }
    m.keep_prios |= b.keep_prios || b.ioprio != m.ioprio;
    for (x, y) in m.prios.iter_mut().zip(&b.prios) {
        FioPrio::merge_into(x, y);
    }
}

/// The result's `fio` section from what the clones handed over (clones that never ran have
/// no block).
pub(super) fn fio_result(shared: &Shared) -> FioResult {
    let res = shared.results.lock().unwrap_or_else(|e| e.into_inner());
    let clones: Vec<&CloneStats> = res.iter().flatten().collect();
    let mut r = build(shared, &clones, disks(shared));
    r.cpu_idleness = shared.idle.as_ref().map(idle::Profiler::finish);
    r
}

/// The devices' counters since the run's start (fio's `disk_util`), as of now.
fn disks(shared: &Shared) -> Vec<FioDisk> {
    shared
        .disks
        .as_ref()
        .map(|w| w.finish())
        .unwrap_or_default()
        .into_iter()
        .map(|u| {
            let d = u.delta;
            FioDisk {
                name: u.name,
                read_ios: d.read_ios,
                write_ios: d.write_ios,
                read_merges: d.read_merges,
                write_merges: d.write_merges,
                read_sectors: d.read_sectors,
                write_sectors: d.write_sectors,
                read_ticks: d.read_ticks,
                write_ticks: d.write_ticks,
                in_queue: d.in_queue,
                util: u.util,
            }
        })
        .collect()
}

/// The `fio` section so far (`--status-interval`): ended clones as they ended, running
/// ones as of their last snapshot; the devices' counters from the run's start to now, as
/// fio's interim reports show them.
pub(super) fn fio_result_live(shared: &Shared) -> FioResult {
    let res = shared.results.lock().unwrap_or_else(|e| e.into_inner());
    let snaps: Vec<Option<CloneStats>> = shared
        .snaps
        .slots
        .iter()
        .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()).1.clone())
        .collect();
    let clones: Vec<&CloneStats> = res
        .iter()
        .zip(&snaps)
        .filter_map(|(r, s)| r.as_ref().or(s.as_ref()))
        .collect();
    build(shared, &clones, disks(shared))
}

/// The result's `fio` section from the clones' statistics (in thread order) and the
/// devices' counters.
fn build(shared: &Shared, clones: &[&CloneStats], disks: Vec<FioDisk>) -> FioResult {
    let mut blocks: Vec<Acc> = Vec::new();
    // fio's rule (`stat.c:__show_run_stats`): a clone with `group_reporting` joins the
    // block before it when that one is of the same reporting group (whichever job it
    // belongs to); any other clone starts a block.
    for &s in clones {
        let j = &shared.jobs[s.job];
        // fio's `stats=0`: the clone is not reported, nor counted in its group.
        if !j.stats {
            continue;
        }
        let b = clone_block(s, j);
        if j.group_reporting
            && let Some(m) = blocks.last_mut()
            && m.block.groupid == j.groupid
        {
            merge(m, &b);
            continue;
        }
        blocks.push(b);
    }
    let blocks = blocks
        .into_iter()
        .map(
            |Acc {
                 mut block,
                 bins,
                 prios,
                 keep_prios,
                 ..
             }| {
                if keep_prios {
                    let [r, w, t] = prios;
                    block.read.prios = r;
                    block.write.prios = w;
                    block.trim.prios = t;
                }
                block.read.clat_bins = FioBins::from_dense(&bins[0]);
                block.write.clat_bins = FioBins::from_dense(&bins[1]);
                block.sync_bins = FioBins::from_dense(&bins[2]);
                block.read.lat_bins = FioBins::from_dense(&bins[3]);
                block.write.lat_bins = FioBins::from_dense(&bins[4]);
                block.read.slat_bins = FioBins::from_dense(&bins[5]);
                block.write.slat_bins = FioBins::from_dense(&bins[6]);
                block.trim.clat_bins = FioBins::from_dense(&bins[7]);
                block.trim.lat_bins = FioBins::from_dense(&bins[8]);
                block.trim.slat_bins = FioBins::from_dense(&bins[9]);
                block
            },
        )
        .collect();
    FioResult {
        pid: std::process::id(),
        global_options: shared.global_options.clone(),
        jobs: shared.jobs.iter().map(job).collect(),
        blocks,
        disks,
        cpu_idleness: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's `sum_thread_stats`: a group's `job_runtime` is its clones' added up, and its
    /// CPU share their CPU time over that sum (1 s at 10% and 3 s at 50%: 4 s at 40%).
    #[test]
    fn a_group_adds_runtimes_and_weighs_cpu_by_them() {
        let text = "[j]\nrw=read\nsize=1m\nioengine=null\n";
        let s = super::super::jobfile::parse_ini(text, "t.fio", &|_: &str| None).unwrap();
        let j = super::super::job::jobs_from_sections(&s).unwrap().remove(0);
        let clone = |ms: u64, usr_pct: u64| {
            let mut c = CloneStats {
                runtime_ns: ms * 1_000_000,
                usr_ns: ms * 1_000_000 * usr_pct / 100,
                ..CloneStats::default()
            };
            c.dirs[0].bytes = 4096;
            clone_block(&c, &j)
        };
        let mut m = clone(1000, 10);
        merge(&mut m, &clone(3000, 50));
        assert_eq!(m.block.runtime_ms, 4000);
        assert!(
            (m.block.usr_cpu_pct - 40.0).abs() < 1e-9,
            "{}",
            m.block.usr_cpu_pct
        );
        assert_eq!(
            m.block.read.runtime_ms, 3000,
            "a direction's: the longest clone's"
        );
    }

    /// fio's rounding (a user review: `runtime=1` read for 999 ms here, never below 1000 in
    /// fio): a direction's runtime is its µs rounded up to ms (`update_runtime`), the job's
    /// `job_runtime` truncated ms.
    #[test]
    fn a_directions_runtime_is_rounded_up_as_fios() {
        let text = "[j]\nrw=read\nsize=1m\nioengine=null\n";
        let s = super::super::jobfile::parse_ini(text, "t.fio", &|_: &str| None).unwrap();
        let j = super::super::job::jobs_from_sections(&s).unwrap().remove(0);
        for (ns, dir, job) in [
            (999_400_000, 1000, 999),
            (1_000_000_000, 1000, 1000),
            (1_000_000_900, 1000, 1000),
            (1_000_001_000, 1001, 1000),
        ] {
            let mut c = CloneStats {
                runtime_ns: ns,
                ..CloneStats::default()
            };
            c.dirs[0].bytes = 4096;
            let b = clone_block(&c, &j).block;
            assert_eq!((b.read.runtime_ms, b.runtime_ms), (dir, job), "{ns} ns");
        }
    }
}
