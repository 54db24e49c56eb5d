//! One clone's loop: it claims each I/O from [`RunControl::next_op`], times it as fio does
//! (start = prepared, issue = after the submit call returned, completion = reaped; slat =
//! issue − start, clat = completion − issue, lat = completion − start; sync engines have no
//! slat), records `lat` through [`RunControl::record`] and keeps fio's per-direction
//! statistics in its `CloneStats`, handed over once, at the end.

use super::Shared;
use super::bufs::{Filler, Step as FillStep};
use super::engine::{Buffers, Dir, Done, Engine};
use super::errors::{ErrType, Verdict};
use super::files::{FState, Files, Pick, Slot};
use super::job::{EngineKind, JobSpec};
use super::lattarget::{Search, Step};
use super::logs::Logger;
use super::pattern::Pattern;
use super::rate::{MinRate, Pacer, Think};
use super::result::CloneStats;
use super::sequence::Turn;
use super::steadystate::Ring;
use super::verify::{Piece, Verifier};
use hostbench_core::fio_result::FioError;
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counter;
use hostbench_core::runner::RunControl;
use hostbench_core::workload::{LoopWorker, Worker, WorkloadError};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The worker of thread `tid`: the clone's file opened (O_DIRECT, `invalidate`,
/// `fadvise_hint` as the job says), its engine and buffers built, its offset generator.
pub(super) fn new_worker(
    shared: &Arc<Shared>,
    tid: usize,
    rng: Rng,
) -> Result<Worker, WorkloadError> {
    let (ji, clone) = shared.threads[tid];
    // The clone's own region starts at its offset (`offset` + clone × `offset_increment`).
    let mut own = shared.jobs[ji].clone();
    own.size = own.clone_size(clone);
    own.offset = own.clone_offset(clone);
    own.pct = Default::default();
    if own.engine == EngineKind::Nbd
        && let (Some(e), Some(sz)) = (own.real_size, own.size)
    {
        // fio's FIO_NOEXTEND: each clone's region stops at the export's end.
        if own.offset >= e {
            return Err(WorkloadError::usage(format!(
                "job '{}': clone {clone}'s offset {} is at or past the end of the NBD export \
                 ({e} bytes); give a smaller offset or offset_increment",
                own.name, own.offset
            )));
        }
        own.size = Some(sz.min(e - own.offset));
    }
    // A block device that ends inside the region (fio takes `size` as given, past the
    // device's end): fio's `get_next_offset` finds the file done at the first offset at or
    // past the end and `fill_io_u` at the first I/O that would cross it. A sequential
    // region stops there; random offsets are drawn over `min(size, device)` from the
    // offset (fio's `last_block`), and a draw past the end ends the clone; without the
    // random map the job's bytes stay those of its `size`.
    let mut dev_end = u64::MAX;
    let mut limit_size = None;
    let mut seq_dev_end = None;
    if own.nfiles() == 1
        && own.zbd.is_none()
        && !own.unlink_each_loop
        && !own.sized_at_open
        && !own.engine.fileless()
        && !own.engine.file_op()
        && own.engine != EngineKind::Nbd
        && let Some(sz) = own.size
        && let Some(dev) = super::layout::device_size(&own.file_path(clone))
        && own.offset.saturating_add(sz) > dev
    {
        if own.offset >= dev {
            return Err(WorkloadError::usage(format!(
                "job '{}': clone {clone}'s offset {} is at or past the end of {} ({dev} \
                 bytes); give a smaller offset (fio does no I/O there)",
                own.name,
                own.offset,
                own.file_path(clone).display()
            )));
        }
        if own.rw.random() {
            let region = sz.min(dev);
            own.size = Some(region);
            if own.offset + region > dev {
                dev_end = dev;
            }
            if own.norandommap && own.random_generator != super::job::RandGen::Lfsr {
                limit_size = Some(sz);
            }
        } else if (1..100).contains(&own.rw.read_pct(own.rwmixread)) {
            // Reads and writes, each sequential: the first direction that reaches the
            // device's end ends the pass, the job's bytes stay those of its `size`.
            seq_dev_end = Some(dev - own.offset);
        } else {
            own.size = Some(dev - own.offset);
        }
    }
    if let Some(f) = own.zbd.as_ref().and_then(|z| z.files.get(clone as usize)) {
        // zonemode=zbd: the region in whole zones (set at layout).
        own.offset = f.offset;
        own.size = Some(f.size);
    }
    let nf = own.nfiles();
    let mut multi = None;
    let mut files_pass = 0;
    // unlink_each_loop closes, removes and opens again its file between passes: the
    // several-files machinery does that for one file too.
    if nf > 1 || own.unlink_each_loop || own.engine.file_op() || own.sized_at_open {
        // Several files: each file's region, its own pattern; none is open yet (fio opens
        // each when it is first picked).
        let mut slots = (0..nf)
            .map(|k| {
                let (foff, fsize) = own.file_region(clone, k);
                // A pass ends where no block fits: fixed sizes, at the last whole block; sizes
                // from a range, once less than the smallest is left (fio's `io_u_fits` of the
                // smallest size; its random map is in blocks of that size).
                let unit = if own.bsz.iter().all(|b| b.min == b.max) {
                    own.max_bs()
                } else {
                    own.bsz[..if own.rw.trims() { 3 } else { 2 }]
                        .iter()
                        .map(|b| b.min)
                        .min()
                        .unwrap_or(1)
                };
                let mut pass = fsize - fsize % unit.max(1);
                if own.engine.file_op() {
                    // One I/O per file: its create, stat or unlink (fio fakes each file's
                    // size as the block size).
                    pass = own.max_bs();
                }
                Ok(Slot {
                    path: if own.engine.fileless() {
                        PathBuf::new()
                    } else {
                        own.file_path_k(clone, k)
                    },
                    offset: foff,
                    size: fsize,
                    pass,
                    left: pass,
                    state: FState::Closed,
                    fd: None,
                    engine: None,
                    pattern: {
                        let mut p = Pattern::new(&own, fsize).map_err(WorkloadError::usage)?;
                        p.seed_file(&own, &own.file_path_k(clone, k), tid as u64 + 1);
                        if !own.rw.trims() && own.zbd.is_none() && !own.engine.file_op() {
                            p.report_ends();
                        }
                        p
                    },
                })
            })
            .collect::<Result<Vec<_>, WorkloadError>>()?;
        own.size = Some(slots.iter().map(|s| s.size).sum());
        files_pass = slots.iter().map(|s| s.pass).sum();
        // Random offsets without a map (norandommap, fio's tausworthe): fio never finds a
        // file done, the job's bytes end it (three files of a MiB's thirds: 256 writes where
        // the files' whole blocks are 255).
        let unmapped = own.rw.random()
            && own.norandommap
            && own.random_generator != super::job::RandGen::Lfsr
            && !own.engine.file_op()
            && nf > 1;
        // Files whose patterns find them done (fio's `fill_io_u` failing, not a count of
        // bytes): a loop is `size` bytes or every file done.
        let self_ending = slots.first().is_some_and(|s| s.pattern.ends_itself());
        if unmapped || self_ending {
            for s in &mut slots {
                s.pass = u64::MAX / 2;
                s.left = s.pass;
            }
            files_pass = own.size.unwrap_or(files_pass);
        } else if own.file_service.nonuniform() && !own.engine.file_op() {
            // A non-uniform service starts a file found done over in place: fio never
            // finds every file done, the job's bytes end it (three files of a MiB's
            // thirds: 256 I/Os, not the files' 255 whole blocks).
            files_pass = own.size.unwrap_or(files_pass);
        }
        let mut f = Files::new(slots, own.file_service, own.openfiles);
        f.self_ending = self_ending;
        f.redraw_done = !own.rw.random();
        // fio's FIO_RAND_FILE_OFF seed of the clone's thread.
        if let Some(seed) = own.fio_rand_seed(tid as u64 + 1, 5) {
            f.fio_draws(seed, own.rand64, own.reseeds_each_loop());
        }
        multi = Some(f);
    }
    let j = &own;
    let size = j.size.expect("sizes are resolved at setup");
    // e4defrag's donor: opened (and allocated) by the engine's init, before the job's
    // file is opened, as fio's.
    let donor = if j.engine == EngineKind::E4defrag {
        Some(Arc::new(open_donor(&shared.jobs[ji])?))
    } else {
        None
    };
    // A clone whose layout failed opens nothing: it ends with that error (`run`).
    let mut open_failed = j.layout_failure(clone).cloned();
    let (fd, path) = if j.engine.fileless() || multi.is_some() || open_failed.is_some() {
        (None, PathBuf::new())
    } else {
        let path = j.file_path(clone);
        match open_job_file(j, &path, j.fill_device) {
            Ok(f) => {
                advise_access(&f, j, j.offset, size);
                (Some(OwnedFd::from(f)), path)
            }
            // fio's failed open ends the clone with its error (`err=13, func=open(f)`)
            // and the other jobs run: not the run's failure. A symlink or O_DIRECT on a
            // filesystem without it stays a refusal of the run that says how to fix it.
            Err(e) if !crate::disk::files::open_is_refused(&path, j.direct, &e) => {
                open_failed = Some(open_failure(&path, &e));
                (None, path)
            }
            Err(e) => return Err(crate::disk::files::open_error(&path, j.direct, &e)),
        }
    };
    let depth = if j.sync_io() && !j.offload {
        1
    } else {
        j.iodepth
    };
    let raw = fd.as_ref().map_or(-1, |f| f.as_raw_fd());
    // With several files a sync engine is built per file when it opens (the one made
    // here is not used); a queue engine is the clone's, pointed at each file in turn.
    // (Offload's submitters are built on one file: several files are refused with it.)
    let per_file = multi.is_some() && j.engine.is_sync() && !j.engine.fileless() && !j.offload;
    // pvsync2's flags and its hipri_percentage draws: one state per clone, as fio's.
    let pv2 = super::engine::Pv2::new(j.eng.pv2, j.direct);
    let engine = if open_failed.is_some() {
        // The clone ends with its open's error as it starts: an engine built on no file
        // (mmap maps it, offload's submitters use it) would fail the whole run instead.
        Engine::Null
    } else if j.offload {
        Engine::offload(j.engine, raw, depth, j.map_region(j.offset, size))
            .map_err(|e| WorkloadError::environment(format!("job '{}': {e}", j.name)))?
    } else if j.engine == EngineKind::Cpuio {
        Engine::cpu(&j.eng)
    } else if j.engine == EngineKind::Exec {
        Engine::exec(&j.name, &j.eng, j.runtime_s.unwrap_or(0.0))
    } else if j.engine.net() {
        // fio's engine init: a listener binds now, before any job starts.
        let n = super::engines::net::Net::setup(&j.eng.net, clone, j.rw.writes(0), size).map_err(
            |(_, func, e)| {
                WorkloadError::environment(format!(
                    "job '{}': ioengine={}: {func}: {e}",
                    j.name,
                    j.engine.name()
                ))
            },
        )?;
        Engine::Net(Box::new(n))
    } else if per_file || j.engine == EngineKind::Nbd {
        Engine::Null
    } else if let Some(d) = &donor {
        Engine::E4defrag(raw, d.clone())
    } else if j.engine == EngineKind::IoUring {
        // Built to prove the ring's options work here (buffers are registered with the
        // ring built in the worker's thread, and so are several files).
        let mut o = j.eng.uring;
        o.registerfiles &= multi.is_none();
        o.rw_flags = pv2.flags as u32;
        Engine::uring(raw, depth, o, None)
            .map_err(|e| WorkloadError::environment(format!("job '{}': {e}", j.name)))?
    } else {
        Engine::with_pv2(j.engine, raw, depth, j.map_region(j.offset, size), &pv2)
            .map_err(|e| WorkloadError::environment(format!("job '{}': {e}", j.name)))?
    };
    let mut engine = engine;
    engine.set_userspace_reap(j.eng.userspace_reap);
    if let Some(random) = j.advises_random()
        && !per_file
    {
        engine
            .advise_mapping(random)
            .map_err(|e| WorkloadError::environment(format!("job '{}': madvise: {e}", j.name)))?;
    }
    // An io_uring ring is single-issuer: it is built again in the worker's own thread
    // (this one only proves that it can be built, so a failure is a setup error).
    // nbd connects in the worker's thread when the clone starts (fio's engine init).
    let engine = if j.engine == EngineKind::IoUring
        || j.engine == EngineKind::Nbd
        || per_file
        || j.offload
    {
        drop(engine);
        None
    } else {
        Some(engine)
    };
    // fio's lockmem: pinned before the buffers are allocated, held while the clone runs.
    let pinned = super::mem::Pinned::new(j.mem.lockmem, &mut |m| eprintln!("{m}"))
        .map_err(|e| WorkloadError::environment(format!("job '{}': {e}", j.name)))?;
    let bufs = Buffers::with_mem(
        depth as usize,
        j.max_bs() as usize,
        rng.clone().next_u64(),
        &j.mem,
        j.direct,
    )
    .map_err(|e| {
        let huge = matches!(
            j.mem.kind,
            super::mem::MemKind::ShmHuge | super::mem::MemKind::MmapHuge
        );
        let hint = if huge {
            " (huge pages must be reserved first: `sysctl vm.nr_hugepages=N` as root, see \
             HugePages_Free in /proc/meminfo; hugepage-size must be the machine's)"
        } else {
            ""
        };
        WorkloadError::environment(format!("job '{}': iomem allocation: {e}{hint}", j.name))
    })?;
    // What the writes write (fio fills a writer's buffers once when it starts).
    let mut fill = Filler::new(j, tid, &shared.buf_seeds)
        .map_err(|e| WorkloadError::environment(format!("job '{}': {e}", j.name)))?;
    if j.rw.writes(j.rwmixread) {
        for slot in 0..depth.max(1) {
            // SAFETY: each of the `depth` slots holds max_bs bytes; nothing is in flight yet.
            let b = unsafe { std::slice::from_raw_parts_mut(bufs.slot(slot), j.max_bs() as usize) };
            fill.fill(b);
        }
    }
    let mut pattern = Pattern::new(j, size).map_err(WorkloadError::usage)?;
    // The file's end, which can lie past the region (a larger file already there, a
    // block device): fio's `real_file_size`. Zones wrap there; a sequential pass may end
    // with a block that starts inside the region and ends past it, inside the file.
    let mut room = size;
    if let Some(f) = &fd {
        let end = file_end(f.as_raw_fd());
        if end > 0 {
            room = (end as u64).saturating_sub(j.offset).max(size);
            pattern.set_file_end(room);
        }
    }
    if let Some(e) = seq_dev_end {
        pattern.end_at_device(e);
    }
    // (Without the random map a device shorter than `size` is read `size` bytes' worth.)
    let limit_region = limit_size.unwrap_or(size);
    if multi.is_none() {
        pattern.set_io_limit(j.io_limits_in(limit_region, room.max(limit_region)).0);
        pattern.seed_file(j, &path, tid as u64 + 1);
        if !j.rw.trims() && j.zbd.is_none() && !j.engine.no_io() {
            pattern.report_ends();
        }
    }
    let zbd = match (&j.zbd, &fd) {
        (Some(o), Some(_)) => {
            let f = o.files.get(clone as usize).copied().unwrap_or_default();
            let t = super::zbd::table(&shared.zbd, &path, o, f.real_size)
                .map_err(WorkloadError::usage)?;
            use super::job::Rw;
            Some(Box::new(super::zbd::Zoned::new(
                t,
                o,
                (j.offset, size),
                [j.bsz[0].min, j.bsz[1].min],
                j.rw.random(),
                matches!(j.rw, Rw::ReadWrite | Rw::RandRw),
                j.verify.kind != 0 && j.rw.writes(j.rwmixread),
            )))
        }
        _ => None,
    };
    let mix = super::mix::Mix::for_job(j, (tid + 1) as u64, rng.clone().next_u64() ^ 0x2545_f491);
    // fio's thread number: the clone's 1-based creation index.
    let mut verify = Verifier::new(j, (tid + 1) as u16, rng.clone().next_u64() ^ 0x5bd1_e995);
    if let (Some(v), Some(s)) = (verify.as_mut(), &shared.vstates[tid]) {
        v.load_state(s.clone());
    }
    // cmdprio_*: which I/Os get a priority of their own, and the statistics kept per
    // priority (the histograms allocated here, once).
    let ioprio = j.process.ioprio_value().unwrap_or(0);
    use super::job::Rw;
    let reads = matches!(j.rw, Rw::Read | Rw::RandRead | Rw::ReadWrite | Rw::RandRw);
    let writes = j.rw.writes(j.rwmixread) || matches!(j.rw, Rw::ReadWrite | Rw::RandRw);
    let prio_plan = j.cmdprio.plan(ioprio, [reads, writes]);
    let mut stats = CloneStats {
        job: ji,
        clone,
        ioprio,
        cmdprio: prio_plan.any(),
        ..CloneStats::default()
    };
    for (d, list) in prio_plan.prios.iter().enumerate() {
        stats.dirs[d].prios = list
            .iter()
            .map(|&p| (p, Default::default(), Default::default()))
            .collect();
    }
    let replay = match &j.replay {
        Some(o) => Some(Box::new(Replay {
            // The clone's log of `read_iolog=a:b` is by fio's `subjob_number`.
            r: super::iolog::Reader::open_clone(o, clone as usize)
                .map_err(|e| WorkloadError::usage(format!("job '{}': {e}", j.name)))?,
            pending: None,
            last_issue: 0,
            start: 0,
        })),
        None => None,
    };
    // fio's offset and size generators (a clone's own; random seeds without randrepeat).
    let sizes =
        super::pattern::SizeDraws::new(j, tid as u64 + 1, rng.clone().next_u64() ^ 0x94d0_49bb);
    // A replay ends with its log, whatever its size says.
    let replay_limits = replay.is_some().then_some((u64::MAX, 0));
    Ok(Worker::Loop(Box::new(FioWorker {
        shared: shared.clone(),
        tid,
        job: j.clone(),
        path,
        _fd: fd,
        engine,
        engine_args: (j.engine, raw, depth, j.map_region(j.offset, size)),
        donor,
        pv2,
        bufs,
        _pinned: pinned,
        depth,
        rng,
        pattern,
        size,
        read_pct: j.rw.read_pct(j.rwmixread),
        mix,
        sizes,
        pass_bytes: 0,
        stats,
        prio_plan,
        writes_done: 0,
        sfr_range: (u64::MAX, 0),
        submit_batch: j.iodepth_batch_submit.clamp(1, depth) as usize,
        complete_min: j.iodepth_batch_complete_min.min(depth) as usize,
        // fio: a maximum below the minimum (0 by default) is the minimum; at least one.
        // fio: 0 or above iodepth is iodepth (init.c).
        depth_low: match j.iodepth_low {
            0 => depth,
            n => n.min(depth),
        } as usize,
        complete_max: j
            .iodepth_batch_complete_max
            .max(j.iodepth_batch_complete_min)
            .clamp(1, depth) as usize,
        ramp_end: 0,
        epoch: 0,
        limit_bytes: if let Some((b, _)) = replay_limits {
            b
        } else if multi.is_some() {
            j.io_limits_pass(files_pass, size).0
        } else if j.zbd.is_some() {
            // `size` bytes a pass, as fio counts them (its writes go to the write
            // pointers: the last one of a pass may cross the region's whole blocks);
            // `next_zbd_io` ends a pass early when the offsets run out.
            j.io_limits_pass(size, size).0
        } else {
            j.io_limits_in(limit_region, room.max(limit_region)).0
        },
        dev_end,
        dev_seq_passes: seq_dev_end.map(|_| 0),
        pass_len: size.max(j.pass_bytes(size, room)),
        loop_issued: 0,
        loop_break: if j.sync_io() && !j.offload {
            0
        } else if j.rw.writes(j.rwmixread) && j.rw.random() && j.norandommap {
            size.max(j.io_size.unwrap_or(0))
        } else {
            size
        },
        verify_each_pass: j.verifies_each_pass(),
        pass_verify: false,
        verify_first: false,
        keep_open: false,
        log_t0: 0,
        limit_ios: replay_limits.map_or(j.io_limits(size).1, |l| l.1),
        files: multi,
        deferred_close: Vec::new(),
        open_failed,
        op_ns: None,
        registered: Vec::new(),
        failed: false,
        snap_epoch: 0,
        pacer: Pacer::new(j, j.rw.read_pct(j.rwmixread), 1e9),
        min_rate: None,
        think: None,
        pending_dir: None,
        flow_count: 0,
        logs: None,
        ss: None,
        tps: 1,
        live_running: false,
        trims: j.rw.trims(),
        trimmed: None,
        verify,
        fill,
        numberio: 0,
        lat: None,
        zbd,
        zbd_passes: 0,
        zbd_bytes: 0,
        zbd_pass_ios: 0,
        zbd_started: false,
        zbd_foff: 0,
        zbd_zone_bytes: 0,
        replay,
        iolog: None,
    })))
}

/// e4defrag's donor for a clone of job `j` (fio's engine init): `directory/donorname`
/// (fio's join of the option as written), allocated over `offset .. filesize` unless
/// `inplace`. A failure is the job's setup error, fio's `io_queue_init` one.
fn open_donor(j: &JobSpec) -> Result<super::engines::e4defrag::Donor, WorkloadError> {
    let o = &j.eng.e4defrag;
    let name = o.donor.as_deref().unwrap_or_default();
    let path = if j.directory.is_empty() {
        PathBuf::from(name)
    } else {
        PathBuf::from(format!("{}/{name}", j.directory))
    };
    super::engines::e4defrag::Donor::open(&path, o.inplace, j.offset, o.file_size_high).map_err(
        |e| {
            let hint = if e.errno == libc::EINVAL && !o.inplace {
                " (inplace=0 allocates the donor over offset..filesize when the job starts: give \
             filesize= larger than offset=, or inplace=1)"
            } else {
                ""
            };
            WorkloadError::environment(format!(
                "job '{}': ioengine=e4defrag: io_queue_init: {}{hint}",
                j.name, e.what
            ))
        },
    )
}

/// fio's failed open of `path`: the errno, `open(NAME)` (the name as the job gives it,
/// without a leading `./`) and the detail.
fn open_failure(path: &Path, e: &std::io::Error) -> (i32, String, String) {
    if let Some(WriteHintFailed(errno)) = e.get_ref().and_then(|x| x.downcast_ref()) {
        let text = strerror(*errno);
        return (
            *errno,
            "fcntl write hint".into(),
            format!("fcntl write hint on {}: {text}", path.display()),
        );
    }
    let errno = e.raw_os_error().unwrap_or(libc::EIO);
    let shown = path.strip_prefix(".").unwrap_or(path).display().to_string();
    let func = format!("open({shown})");
    let detail = format!("{func}: {e}");
    (errno, func, detail)
}

/// Opens job file `path` as the job says (O_DIRECT, written or not, `create_on_open`),
/// never through a symlink planted at the name after the layout checked it.
/// `create` makes it when it is missing (a writer's file removed by `unlink_each_loop`).
fn open_job_file(
    j: &JobSpec,
    path: &std::path::Path,
    create: bool,
) -> std::io::Result<std::fs::File> {
    let writes = j.rw.writes(j.rwmixread);
    let mut o = std::fs::OpenOptions::new();
    // fio's falloc engine opens its file for writing whatever the direction.
    o.read(true)
        .write(writes || matches!(j.engine, EngineKind::Mmap | EngineKind::Falloc));
    if (create || j.create_on_open)
        && (writes || j.engine == EngineKind::Mmap)
        && j.allow_file_create
    {
        // fio's create_on_open: the job's open makes the file (no layout before), with
        // fio's mode.
        o.create(true)
            .mode(if j.fill_device { 0o644 } else { 0o600 });
    }
    let mut flags = libc::O_NOFOLLOW;
    if j.create_on_open
        && !(writes || j.engine == EngineKind::Mmap)
        && j.allow_file_create
        && j.replay.is_none()
    {
        // A reader's create_on_open also makes its (empty) file, as fio's open does; its
        // reads then find nothing there and the job ends in error, as fio's. A replayed log
        // of reads makes nothing: fio's open of a missing file fails (err=2, `open(f)`).
        flags |= libc::O_CREAT;
        o.mode(0o600);
    }
    if j.direct {
        flags |= libc::O_DIRECT;
    }
    // fio's generic_open_file: `atomic` on every open but a trim job's, as `sync`.
    if j.atomic && !j.rw.trims() {
        flags |= super::job::O_ATOMIC_FIO;
    }
    // fio's generic_open_file: `sync` on every open but a trim job's.
    if !j.rw.trims() {
        flags |= j.sync_io;
    }
    o.custom_flags(flags);
    let f = o.open(path)?;
    if let Some(hint) = j.write_hint {
        set_write_hint(&f, hint, j.direct)?;
    }
    Ok(f)
}

/// `write_hint` refused by the kernel: the clone fails with it, as fio's `fcntl write hint`.
#[derive(Debug)]
struct WriteHintFailed(i32);

impl std::fmt::Display for WriteHintFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "fcntl write hint: {}", strerror(self.0))
    }
}

impl std::error::Error for WriteHintFailed {}

/// fio's `write_hint` on a regular file or block device just opened: the inode's hint
/// (`F_SET_RW_HINT`), or the open file's (`F_SET_FILE_RW_HINT`) for direct I/O, which
/// kernels since 5.18 refuse (EINVAL), failing the job as in fio.
fn set_write_hint(f: &std::fs::File, hint: u64, direct: bool) -> std::io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    const F_SET_RW_HINT: libc::c_int = 1024 + 12;
    const F_SET_FILE_RW_HINT: libc::c_int = 1024 + 14;
    let t = f.metadata()?.file_type();
    if !(t.is_file() || t.is_block_device()) {
        return Ok(());
    }
    let cmd = if direct {
        F_SET_FILE_RW_HINT
    } else {
        F_SET_RW_HINT
    };
    let hint: u64 = hint;
    // SAFETY: fcntl on our own fd with a pointer to a u64 that outlives the call.
    let r = unsafe { libc::fcntl(f.as_raw_fd(), cmd, &hint as *const u64) };
    if r < 0 {
        let errno = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL);
        return Err(std::io::Error::other(WriteHintFailed(errno)));
    }
    Ok(())
}

/// fio's `fadvise_hint`: tells the kernel the job's access pattern over its region of the
/// file just opened (`posix_fadvise` RANDOM or SEQUENTIAL), as fio does for every job by
/// default. Random advice turns off readahead, so buffered random reads go to the device
/// instead of hitting pages the kernel read ahead. Advice only: a refusal changes nothing
/// the job does, and fio ignores it too.
fn advise_access(f: &impl AsRawFd, j: &JobSpec, offset: u64, size: u64) {
    let Some(random) = j.advises_random() else {
        return;
    };
    let advice = if random {
        libc::POSIX_FADV_RANDOM
    } else {
        libc::POSIX_FADV_SEQUENTIAL
    };
    // SAFETY: advisory call on a descriptor we own.
    unsafe {
        libc::posix_fadvise(f.as_raw_fd(), offset as i64, size as i64, advice);
    }
}

struct FioWorker {
    /// Reads and writes, each sequential, on a block device shorter than the region: the
    /// passes ended at the device's end so far (`None` otherwise).
    dev_seq_passes: Option<u32>,
    /// Where a block device shorter than the random region ends (absolute; `u64::MAX`
    /// otherwise): an I/O drawn past it ends the clone, as fio's file done.
    dev_end: u64,
    shared: Arc<Shared>,
    tid: usize,
    job: JobSpec,
    path: PathBuf,
    _fd: Option<OwnedFd>,
    engine: Option<Engine>,
    /// What `engine` is built from when the worker starts (io_uring).
    engine_args: (EngineKind, i32, u32, super::engine::Region),
    /// e4defrag's donor file, shared by the engines of the clone's files.
    donor: Option<Arc<super::engines::e4defrag::Donor>>,
    /// pvsync2's flags and the clone's `hipri_percentage` draws (shared by its files).
    pv2: super::engine::Pv2,
    bufs: Buffers,
    /// `lockmem`'s locked memory, released when the clone ends.
    _pinned: Option<super::mem::Pinned>,
    depth: u32,
    rng: Rng,
    /// Where each I/O goes and how long it is.
    pattern: Pattern,
    size: u64,
    read_pct: u32,
    /// A mixed job's direction state (fio's `rwmix_*`): what [`Self::pick_dir`] answers.
    mix: super::mix::Mix,
    /// fio's block-size draws (`bsrange`/`bssplit` under a repeatable seed).
    sizes: Option<super::pattern::SizeDraws>,
    /// Bytes issued in the current pass over the region: at each new pass a buffered job
    /// with `invalidate` drops the region's cached pages again, as fio does when it starts
    /// a file's next loop (else `loops`/`time_based` reads measure the page cache).
    pass_bytes: u64,
    /// The bytes of a pass over the region: `size`, or with a last block past the region's
    /// end (inside the file) up to that block's end ([`JobSpec::pass_bytes`]).
    pass_len: u64,
    /// Bytes queued in this loop (fio's `do_io` `bytes_issued`), and where an engine that
    /// queues ends the loop (fio's `total_bytes`: `size`, or `io_size` for a random writer
    /// without the random map); 0 for an engine that completes in the call, whose loop
    /// fio 3.33 does not end there (it counts only short completions into
    /// `bytes_issued`), nor for patterns that end their loops themselves.
    loop_issued: u64,
    loop_break: u64,
    /// fio's verify after each pass (`do_verify` after every `do_io`): a writer whose
    /// pass ends reads back what it wrote before the next begins
    /// ([`JobSpec::verifies_each_pass`]).
    verify_each_pass: bool,
    /// The pass just ended and its verify is due once nothing is in flight.
    pass_verify: bool,
    /// [`Self::next_io`] found the loop over as it placed the next loop's first I/O (a
    /// sequential direction past the region's end, with an engine that completes in the
    /// call): the loop's verify comes before that I/O is issued.
    verify_first: bool,
    /// The verify phase runs with the next loop's first I/O placed: its file stays open.
    keep_open: bool,
    /// The measured start (clock ticks) the log rows count from.
    log_t0: u64,
    stats: CloneStats,
    /// `cmdprio_*`: which I/Os get a priority of their own.
    prio_plan: super::cmdprio::Plan,
    /// Writes done so far (fio's `io_issues[DDIR_WRITE]`): fsync, fdatasync and
    /// sync_file_range come due on its multiples.
    writes_done: u64,
    /// sync_file_range: the range written since the last sync (fio's
    /// `first_write`/`last_write`; `u64::MAX` when none).
    sfr_range: (u64, u64),
    /// I/Os per submit call (fio's `iodepth_batch_submit`, default 1).
    submit_batch: usize,
    /// Completions waited for per reap (fio's `iodepth_batch_complete_min`, default 1).
    complete_min: usize,
    /// Completions taken per reap (fio's `iodepth_batch_complete_max`, default = the minimum):
    /// by default one completion is taken and replaced before the next, so the queue stays at
    /// `iodepth` instead of draining between refills.
    complete_max: usize,
    /// `iodepth_low`: once the queue was full, completions are reaped until no more than
    /// this many are in flight before the queue is filled again (fio's
    /// `wait_for_completions`; the depth by default: one reaped, one issued).
    depth_low: usize,
    /// End of this clone's own `ramp_time` (ticks; 0 = none): nothing before it is counted.
    ramp_end: u64,
    /// fio's epoch (ticks; 0 before the clone runs): its runtime, ramp time and sample
    /// windows count from here — after its engine's setup, before its file's cached pages
    /// are dropped (fio's first I/O opens the file, past the epoch).
    epoch: u64,
    /// A size-based clone stops once it has issued this many bytes ([`JobSpec::io_limits`]).
    limit_bytes: u64,
    /// ... or this many I/Os (0 = no such limit).
    limit_ios: u64,
    /// The clone ended with an error (kept once its statistics are handed over).
    failed: bool,
    /// The last snapshot epoch this clone answered (`--status-interval`).
    snap_epoch: u64,
    /// `rate`/`rate_iops`: when each direction's next I/O is due.
    pacer: Pacer,
    /// `rate_min`/`rate_iops_min`.
    min_rate: Option<MinRate>,
    /// `thinktime`.
    think: Option<Think>,
    /// A queued clone's drawn direction that waits for its time (drawn once, so waiting
    /// does not change the read/write mix).
    pending_dir: Option<Dir>,
    /// I/Os this clone counted in its flow (fio's `td->flow_counter`).
    flow_count: u64,
    /// The clone's logs (`write_bw_log` ...), opened when it starts.
    logs: Option<Logger>,
    /// The steady-state ring this clone keeps (for its job, or its reporting group),
    /// made when its measured time begins.
    ss: Option<Ring>,
    /// Clock ticks per second.
    tps: u64,
    /// The status line knows this clone's ramp time is over.
    live_running: bool,
    /// The job trims (`rw=trim`, `randtrim`, `trimwrite`, `randtrimwrite`).
    trims: bool,
    /// trimwrite: the range just trimmed, to be written next.
    trimmed: Option<(u64, u32)>,
    /// `verify`: fills written blocks, logs them, checks what is read (`verify.rs`).
    verify: Option<Verifier>,
    /// What each write writes, without `verify` (`bufs.rs`).
    fill: Filler,
    /// Writes issued so far (fio's `io_issues[DDIR_WRITE]`, the header's `numberio`).
    numberio: u64,
    /// fio's queue-depth search (`latency_target`: `lattarget.rs`), made when the clone
    /// starts.
    lat: Option<Search>,
    /// Several files (`nrfiles` > 1, a `filename` list): the ones not current, and which
    /// comes next (`files.rs`); `None` with one file.
    files: Option<Files>,
    /// `zonemode=zbd`: the clone's view of its file's zones (`zbd.rs`).
    zbd: Option<Box<super::zbd::Zoned>>,
    /// Passes over the region a `zonemode=zbd` clone ended (it stops after `loops`, or
    /// with `io_size` past the region once that is done).
    zbd_passes: u32,
    /// Bytes of the I/Os `zonemode=zbd` placed, and I/Os in the current pass.
    zbd_bytes: u64,
    zbd_pass_ios: u64,
    /// The first pass has started (with `verify`, the region's zones were reset).
    zbd_started: bool,
    /// `zoneskip`: where the current zone's run started (fio's moving `file_offset`,
    /// absolute), and the bytes done since the last skip (fio's `zone_bytes`).
    zbd_foff: u64,
    zbd_zone_bytes: u64,
    /// Descriptors of files a queue engine is done with, closed once nothing is in flight.
    deferred_close: Vec<OwnedFd>,
    /// The clone's file could not be opened when the worker was made: the error it ends
    /// with as it starts (errno, fio's `func`, the detail).
    open_failed: Option<(i32, String, String)>,
    /// A file engine's call for the file just picked, ns (its next I/O's clat).
    op_ns: Option<u64>,
    /// io_uring's `registerfiles` with several files: the files' descriptors, registered
    /// with the ring, in order (empty otherwise).
    registered: Vec<OwnedFd>,
    /// `read_iolog`: the log this clone replays (`iolog.rs`).
    replay: Option<Box<Replay>>,
    /// `write_iolog`: the log this clone appends to, opened when it starts.
    iolog: Option<Box<IoLogOut>>,
}

/// A clone's replay of a log: the log's next I/O once its time has come, when the
/// previous one was issued, when the clone started (ticks).
struct Replay {
    r: super::iolog::Reader,
    pending: Option<(Dir, u64, u32)>,
    last_issue: u64,
    start: u64,
}

/// A clone's `write_iolog`: the log, its start (ticks), the offset of the last I/O (which
/// fio's sync lines repeat).
struct IoLogOut {
    w: super::iolog::Writer,
    clock: hostbench_core::clock::Clock,
    t0: u64,
    last_off: u64,
    /// The file's name in the log when the clone opened no file (an engine without files,
    /// `null`: fio names its file all the same, `j.0.0`); empty otherwise.
    fileless: PathBuf,
}

impl IoLogOut {
    /// The name the log gives the clone's file, `path` when it opened one.
    fn name<'a>(&'a self, path: &'a std::path::Path) -> &'a std::path::Path {
        if path.as_os_str().is_empty() {
            &self.fileless
        } else {
            path
        }
    }
}

/// Reads `len` bytes at `off` into `buf`, through short reads; the bytes read (fewer at
/// the end of the file) or `-errno`.
fn read_full(fd: i32, buf: *mut u8, off: u64, len: u32) -> i64 {
    let mut done = 0usize;
    while done < len as usize {
        // SAFETY: buf holds at least len bytes; fd is the clone's open file.
        let r = unsafe {
            libc::pread(
                fd,
                buf.add(done) as *mut libc::c_void,
                len as usize - done,
                (off + done as u64) as i64,
            )
        };
        if r < 0 {
            let e = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            if e == libc::EINTR {
                continue;
            }
            return -(e as i64);
        }
        if r == 0 {
            break;
        }
        done += r as usize;
    }
    done as i64
}

/// The system's text for `errno` (`No space left on device`), without Rust's `(os error N)`.
pub(super) fn strerror(errno: i32) -> String {
    let s = std::io::Error::from_raw_os_error(errno).to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn rusage() -> (u64, u64, u64, u64, u64) {
    // SAFETY: getrusage fills a zeroed struct.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut r) };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    (
        tv(r.ru_utime),
        tv(r.ru_stime),
        (r.ru_nvcsw + r.ru_nivcsw) as u64,
        r.ru_majflt as u64,
        r.ru_minflt as u64,
    )
}

#[inline(always)]
fn depth_bucket(n: u32) -> usize {
    match n {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

#[inline(always)]
fn batch_bucket(n: usize) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

/// Interval between bw/iops samples (fio's `bwavgtime`/`iopsavgtime` default), ns (the
/// verify pass's; a job's own come from [`super::logs::LogOpts::bw_sample_msec`]).
const SAMPLE_NS: u64 = 500_000_000;

impl FioWorker {
    /// Whether `now` is in ramp time: the run's warmup or this clone's own `ramp_time`.
    #[inline(always)]
    fn warming(&self, ctl: &RunControl<'_>, now: u64) -> bool {
        ctl.warming_up() || now < self.ramp_end
    }

    /// Claims the next I/O: false when the clone's time is up, the run ends, or `exitall`
    /// told it to stop.
    #[inline(always)]
    fn go(&self, ctl: &mut RunControl<'_>, now: u64) -> bool {
        !self.shared.seq.told_to_stop(self.tid)
            && !self.shared.ss.stopped(self.tid)
            && ctl.next_op(now).is_some()
    }

    /// Whether a size-based clone has issued all it is to issue (`bytes` and `ios` so far).
    #[inline(always)]
    fn work_done(&self, bytes: u64, ios: u64) -> bool {
        !self.job.time_based
            && !self.job.engine.no_io()
            && (bytes >= self.limit_bytes || (self.limit_ios > 0 && ios >= self.limit_ios))
    }

    /// The next I/O: direction, offset, length; `None` when the clone's region is done
    /// (a size-based job with holes, `rw=read:8k`, past its end).
    #[inline]
    fn pick_dir(&mut self) -> Dir {
        match self.read_pct {
            100 => Dir::Read,
            0 if !self.trims => Dir::Write,
            // fio's trimwrite: each trimmed range is written next.
            0 if self.trimmed.is_some() => Dir::Write,
            0 => Dir::Trim,
            _ => {
                if self.mix.next() == 0 {
                    Dir::Read
                } else {
                    Dir::Write
                }
            }
        }
    }

    /// The offset and length of the next I/O in direction `dir` (see [`Self::pick_dir`]);
    /// `None` when the region is done.
    #[inline]
    fn next_io(&mut self, dir: Dir) -> Option<(Dir, u64, u32)> {
        // One predictable branch for a clone with one file (the sync loop's fast path).
        if self.files.is_some() {
            return self.next_io_files(dir);
        }
        if self.zbd.is_some() {
            return self.next_zbd_io(dir);
        }
        if self.trims {
            return self.next_trim_io(dir);
        }
        if let Some(r) = self.replay.as_mut() {
            // read_iolog: what `replay_step` took from the log.
            return r.pending.take();
        }
        // A mixed job without the random map: fio's loop goes on until the job's bytes
        // (of every loop) are issued or a direction finds the file done (a sequential one
        // past the region's end: that I/O's direction draw is spent, the next loop starts
        // every direction at the region's start), not at each region's worth of bytes.
        // (With `verify`, as without for an engine that completes in the call; one that
        // queues ends its loop at `size` bytes queued, fio's `do_io` `bytes_issued`.)
        let by_dir = (self.mixed() || self.job.rw.random())
            && !self.pattern.pass_by_bytes()
            && (self.verify.is_none() || (self.job.sync_io() && !self.job.offload));
        let mut dir = dir;
        if (by_dir || self.pattern.ends_itself())
            && !self.job.time_based
            && self.verify.is_none()
            && self.loop_break > 0
            && self.loop_issued >= self.loop_break
        {
            // An engine that queues: fio's `do_io` ends the loop once `size` bytes are
            // queued, before it takes the next I/O (no draw spent), and the next loop
            // starts over as at a file done (reseeded under `randrepeat`: every loop
            // alike; `rw=rw,loops=2` with libaio 264/248 as fio, where psync's loop runs
            // on to the file's end, 244/268). Patterns that end their loops by bytes
            // anyway (the random map with one size) end them below.
            let reseed = self.job.reseeds_each_loop();
            if self.pattern.ends_itself() {
                self.pattern.end_pass();
            }
            self.loop_restart();
            self.pattern.restart_seq();
            self.pass_bytes = 0;
            self.drop_cache();
            if reseed {
                dir = self.pick_dir();
            }
        }
        if by_dir && !self.job.time_based && self.pattern.seq_ends(dir as usize) {
            if self.dev_seq_passes.is_some() {
                // A block device shorter than the region: a direction found the file done
                // before the job's bytes were done; fio's `keep_running` ends the job after
                // its last loop unless `io_size` asks for more.
                let n = self.dev_seq_passes.map_or(0, |n| n + 1);
                self.dev_seq_passes = Some(n);
                if n >= self.job.loops.max(1) && self.job.io_size.is_none() {
                    return None;
                }
            }
            self.loop_restart();
            self.pattern.restart_seq();
            dir = self.pick_dir();
            if self.verify_each_pass {
                // fio's `do_verify` after the loop's `do_io`: the loop's writes are read
                // back before this I/O, the next loop's first, is issued (the caller).
                self.verify_first = true;
            }
        }
        let (off, len) = match self
            .pattern
            .next(dir as usize, &mut self.rng, &mut self.sizes)
        {
            Some(io) => io,
            None if self.pattern.take_file_done() && self.pattern.more_passes() => {
                // fio's file done ends the loop (the I/O drew its direction and offset);
                // the next loop's first I/O draws again.
                self.loop_restart();
                self.pass_bytes = 0;
                self.drop_cache();
                dir = self.pick_dir();
                self.pattern
                    .next(dir as usize, &mut self.rng, &mut self.sizes)?
            }
            None => return None,
        };
        self.pass_bytes += len;
        self.loop_issued += len;
        if self.pass_bytes > self.pass_len {
            // A new pass over the region: its pages leave the cache first.
            self.pass_bytes = len;
            self.drop_cache();
        }
        if self.verify_each_pass && !by_dir && self.pass_bytes >= self.pass_len {
            // The pass's last I/O: what it wrote is read back once it has completed.
            self.pass_verify = true;
        }
        // (A pattern that finds its file done ends its loops itself, above: fio's loop goes
        // on past a region's worth of bytes while the file has room.)
        if self.pass_bytes >= self.pass_len
            && !self.job.time_based
            && !by_dir
            && !self.pattern.ends_itself()
        {
            // The loop's last I/O: fio's `clear_io_state` comes before the next one. With
            // an engine that completes in the call, the I/O that found the loop done spent
            // a direction's draw and an offset's first; one that queues ends the loop at
            // `size` bytes queued, before drawing (fio's `do_io`): its next loop starts
            // with that draw (`randrw,randseed=7,loops=2`: libaio's second loop begins with
            // the read psync's skipped, as fio's logs show).
            if self.loop_break == 0 {
                if self.mixed() {
                    self.mix.next();
                }
                if self.pattern.fio_offsets()
                    && let Some(sd) = self.sizes.as_mut()
                {
                    sd.spend_offset();
                }
            }
            self.loop_restart();
        }
        let abs = self.job.offset + off;
        if abs.saturating_add(len) > self.dev_end {
            return None;
        }
        Some((dir, abs, len as u32))
    }

    /// [`Self::next_io`] under `zonemode=zbd` (fio's `zbd_adjust_ddir`,
    /// `setup_zbd_zone_mode`, `zbd_adjust_block`): the direction (a mixed job writes
    /// until something is written), a sequential writer past a zone's capacity moved to
    /// the zone's end, the drawn I/O moved to where the zones allow. A pass ends when a
    /// sequential job reaches its region's end or no I/O is possible (nothing written to
    /// read); the next starts at the region's start, until `loops` passes are done.
    #[inline(never)]
    fn next_zbd_io(&mut self, dir: Dir) -> Option<(Dir, u64, u32)> {
        use super::zbd::Adjust;
        let base = self.job.offset;
        let random = self.job.rw.random();
        let trims = self.trims;
        let z = self.zbd.as_mut()?;
        if !self.zbd_started {
            self.zbd_started = true;
            z.pass_starts();
        }
        let d = z.ddir(dir as usize);
        let dir = match d {
            0 => Dir::Read,
            1 => Dir::Write,
            _ => Dir::Trim,
        };
        // A trimwrite's write: the zone just trimmed (reset), written from its start.
        let mut rewrite = if dir == Dir::Write && trims {
            self.trimmed.take()
        } else {
            None
        };
        for _ in 0..2 {
            let z = self.zbd.as_mut()?;
            // The pattern's direction: trims take the reads' place.
            let pd = if trims { 0 } else { d };
            let step = if let Some((off, len)) = rewrite.take() {
                z.adjust(1, off, u64::from(len))
            } else {
                let before = base + self.pattern.seq_pos(pd);
                if let Some(to) = z.seq_jump(d, before) {
                    self.pattern.set_seq_pos(pd, to - base);
                }
                let skip = z.skip();
                if skip > 0 {
                    // fio's setup_zbd_zone_mode: on to the zone `zoneskip` past this one,
                    // from the region's start again past the region's end.
                    let pos = base + self.pattern.seq_pos(pd);
                    if self.zbd_foff < base {
                        self.zbd_foff = base;
                    }
                    if z.skip_due(dir == Dir::Read, before, pos, self.zbd_zone_bytes) {
                        let (zone, end) = z.zone_and_end();
                        self.zbd_zone_bytes = 0;
                        self.zbd_foff += zone + skip;
                        if self.zbd_foff >= end {
                            self.zbd_foff = base;
                        }
                        self.pattern.set_seq_pos(pd, self.zbd_foff - base);
                    }
                }
                // (With zoneskip a pass never reaches the region's end: it wraps.)
                let at_end = !random && skip == 0 && self.pattern.seq_pos(pd) >= self.size;
                if at_end && self.job.time_based {
                    self.pattern.set_seq_pos(pd, 0);
                }
                if at_end && !self.job.time_based {
                    Adjust::Eof
                } else {
                    let (off, len) = self.pattern.next(pd, &mut self.rng, &mut self.sizes)?;
                    if trims && dir == Dir::Trim {
                        z.trim(base + off, len)
                    } else {
                        z.adjust(d, base + off, len)
                    }
                }
            };
            self.stats.zone_resets = z.resets;
            match step {
                Adjust::Io(off, len) => {
                    if dir == Dir::Trim && self.job.rw.trim_write() {
                        self.trimmed = Some((off, len as u32));
                    }
                    if !(trims && dir == Dir::Write) {
                        self.pattern.set_last(pd, off - base, len);
                    }
                    self.zbd_bytes += len;
                    self.zbd_zone_bytes += len;
                    self.zbd_pass_ios += 1;
                    return Some((dir, off, len as u32));
                }
                Adjust::Eof => {
                    self.zbd_passes += 1;
                    if !self.job.time_based && !self.zbd_more_passes() {
                        return None;
                    }
                    self.zbd_pass_ios = 0;
                    (self.zbd_foff, self.zbd_zone_bytes) = (base, 0);
                    if let Some(z) = self.zbd.as_mut() {
                        z.pass_starts();
                    }
                    self.pattern.set_seq_pos(0, 0);
                    self.pattern.set_seq_pos(1, 0);
                    if trims && dir == Dir::Write {
                        // A trimwrite's write with no zone to go to (open-zone limits):
                        // the clone ends.
                        return None;
                    }
                }
                Adjust::Error(errno, func, detail) => {
                    self.set_error(errno, func, detail);
                    return None;
                }
            }
        }
        None
    }

    /// Whether a `zonemode=zbd` clone at the end of a pass starts another, as fio's
    /// `keep_running`: while `loops` passes are not done, then, with `io_size` given, while
    /// at least a block of it is left (`io_size=48m` on a 16 MiB file: three passes, the
    /// later ones resetting the zones they find full). A pass that did no I/O ends the
    /// clone (fio ends only when its first does none, else it starts pass after pass).
    fn zbd_more_passes(&self) -> bool {
        if self.zbd_passes < self.job.loops.max(1) {
            return true;
        }
        let io_size = self.job.io_size.is_some() || self.job.io_size_pct.is_some();
        io_size
            && self.zbd_pass_ios > 0
            && self.zbd_bytes.saturating_add(self.job.max_bs()) <= self.limit_bytes
    }

    /// [`Self::next_io`] of a clone with several files: the file picked first (fio's
    /// file service), then the I/O in it.
    #[inline(never)]
    fn next_io_files(&mut self, mut dir: Dir) -> Option<(Dir, u64, u32)> {
        // I/Os that found their file done in the pattern (fio's `fill_io_u` failed after
        // the direction was drawn): the file is closed as done and the next one picked.
        let mut failed = 0;
        // fio's BUSY_OK on the I/O unit of an attempt that found its file done.
        let mut busy = false;
        loop {
            let before = self.files.as_ref().map(|f| (f.passes, f.found_done));
            if !self.next_file() {
                return None;
            }
            self.pattern.set_busy(std::mem::take(&mut busy));
            let after = self.files.as_ref().map(|f| (f.passes, f.found_done));
            if let (Some((p0, f0)), Some((p1, f1))) = (before, after)
                && ((p0, f0) != (p1, f1) || failed > 0)
            {
                dir = self.spent_draws(dir, f1 - f0, failed, p1 != p0);
            }
            if self.trims {
                return self.next_trim_io(dir);
            }
            match self
                .pattern
                .next(dir as usize, &mut self.rng, &mut self.sizes)
            {
                Some((off, len)) => {
                    if let Some(f) = self.files.as_mut() {
                        f.used(len);
                        if self.verify_each_pass && !self.job.time_based && f.pass_done() {
                            // The loop's last I/O: what it wrote is read back once it has
                            // completed (fio's `do_verify` after each `do_io`).
                            self.pass_verify = true;
                        }
                    }
                    return Some((dir, self.region_start() + off, len as u32));
                }
                None if self.pattern.take_file_done() => {
                    busy = self.pattern.take_busy();
                    let cur = self.files.as_ref().and_then(|f| f.cur)?;
                    self.close_done(cur);
                    failed = 1;
                }
                None => return None,
            }
        }
    }

    /// The direction of an I/O of a mixed job after its files were found done `spent`
    /// times as they were picked, and `failed` times as the pattern placed the I/O (and a
    /// new loop began, `new_loop`): fio draws the direction of each I/O it begins before
    /// it looks for the offset, so each file found done spent a draw (those found as they
    /// were picked, their offset's draw too; the pattern spent its own); a loop's end
    /// clears the limit and seeds the generator again before the I/O of the next loop
    /// draws its own.
    #[inline(never)]
    fn spent_draws(&mut self, dir: Dir, spent: u64, failed: u64, new_loop: bool) -> Dir {
        if self.pattern.fio_offsets()
            && let Some(sd) = self.sizes.as_mut()
        {
            // Each found-done file's I/O drew its offset before it found the map full.
            for _ in 0..spent {
                sd.spend_offset();
            }
        }
        if !self.mixed() {
            if new_loop && !self.job.time_based {
                self.loop_restart();
            }
            return dir;
        }
        // A non-uniform service's file found done by a random job is reset inside the
        // I/O's offset draw (fio's `get_next_rand_block`): no direction is drawn again.
        let spent = if self.job.rw.random() && self.files.as_ref().is_some_and(|f| f.resets_done())
        {
            failed
        } else {
            spent + failed
        };
        if new_loop && !self.job.time_based {
            // The I/O's own draw was the first spent.
            for _ in 1..spent {
                self.mix.next();
            }
            self.loop_restart();
            return self.pick_dir();
        }
        let mut dir = dir;
        for _ in 0..spent {
            dir = self.pick_dir();
        }
        dir
    }

    /// Whether the job mixes reads and writes (its directions are drawn).
    #[inline]
    fn mixed(&self) -> bool {
        self.read_pct > 0 && self.read_pct < 100
    }

    /// A new loop of a size-based job begins (fio's `clear_io_state`): the direction
    /// limit cleared; under `randrepeat` the direction, block-size and offset draws start
    /// over — not with an explicit `randseed` ([`JobSpec::reseeds_each_loop`]: measured,
    /// `rw=rw,loops=2,randseed=3` is 263/249 reads/writes only so).
    fn loop_restart(&mut self) {
        self.loop_issued = 0;
        self.mix.loop_restart(self.job.reseeds_each_loop());
        if let Some(s) = self.sizes.as_mut() {
            s.new_loop();
        }
    }

    /// [`Self::next_io`] of a trim job: a trim where the pattern (with the trim values,
    /// in the reads' place) puts it; trimwrite's write of the range just trimmed.
    fn next_trim_io(&mut self, dir: Dir) -> Option<(Dir, u64, u32)> {
        if dir == Dir::Write
            && let Some((off, len)) = self.trimmed.take()
        {
            return Some((Dir::Write, off, len));
        }
        let (off, len) = self.pattern.next(0, &mut self.rng, &mut self.sizes)?;
        if let Some(f) = self.files.as_mut() {
            f.used(len);
        }
        let off = self.region_start() + off;
        if self.job.rw.trim_write() {
            self.trimmed = Some((off, len as u32));
        }
        Some((Dir::Trim, off, len as u32))
    }

    /// Where the current file's region starts: its own offset with several files (fio's
    /// `get_start_offset` per file: `offset=P%` is of each file's length), else the job's.
    #[inline]
    fn region_start(&self) -> u64 {
        self.files
            .as_ref()
            .and_then(|f| f.cur.map(|c| f.slots[c].offset))
            .unwrap_or(self.job.offset)
    }

    /// Where file `i`'s region starts (several files), else the job's.
    fn slot_offset(&self, i: usize) -> u64 {
        self.files
            .as_ref()
            .and_then(|f| f.slots.get(i).map(|s| s.offset))
            .unwrap_or(self.job.offset)
    }

    /// Makes the file of the next I/O current (several files): fio's file service, files
    /// opened when picked and closed when done, a new pass once all are done. False when
    /// a file could not be opened (the clone ends with the error).
    #[inline(never)]
    fn next_file(&mut self) -> bool {
        loop {
            let Some(fs) = self.files.as_mut() else {
                return true;
            };
            match fs.pick(&mut self.rng) {
                Pick::Stay => return true,
                Pick::Close(i) => self.close_done(i),
                Pick::AllDone => {
                    // fio's `keep_running` past `loops` with io_size: on while at least
                    // the largest size of it is left.
                    let j = &self.job;
                    let io_size = j.io_size.is_some() || j.io_size_pct.is_some();
                    if !j.time_based
                        && io_size
                        && fs.passes + 1 >= u64::from(j.loops.max(1))
                        && self.limit_bytes.saturating_sub(fs.issued) < j.max_bs()
                    {
                        return false;
                    }
                    // Files that find themselves done: `loops` passes.
                    if !j.time_based
                        && !io_size
                        && fs.self_ending
                        && fs.passes + 1 >= u64::from(j.loops.max(1))
                    {
                        return false;
                    }
                    if self.verify_each_pass
                        && !j.time_based
                        && fs.self_ending
                        && j.sync_io()
                        && !j.offload
                    {
                        // Files that found themselves done: the loop's writes are read back
                        // before the next loop's first I/O (fio's `do_verify`; the caller).
                        self.verify_first = true;
                    }
                    if self.job.unlink_each_loop {
                        // fio: the files go before each pass after the first; a writer
                        // creates them again when it opens them, a reader fails to open.
                        self.unlink_file();
                    }
                    self.files.as_mut().expect("several files").new_pass();
                }
                Pick::Switch(i) => {
                    if fs.slots[i].state == FState::Closed && !self.open_slot(i) {
                        return false;
                    }
                    if let Some(c) = self.files.as_ref().and_then(|f| f.cur) {
                        self.swap_file(c);
                    }
                    self.swap_file(i);
                    self.files.as_mut().expect("several files").cur = Some(i);
                    return true;
                }
            }
        }
    }

    /// Closes file `i` of several, done in this pass (it may be the current one).
    fn close_done(&mut self, i: usize) {
        let Some(fs) = self.files.as_mut() else {
            return;
        };
        if fs.cur == Some(i) {
            self.swap_file(i);
            self.files.as_mut().expect("several files").cur = None;
        }
        if self.iolog.is_some() {
            let p = self.files.as_ref().expect("several files").slots[i]
                .path
                .clone();
            self.log_file_event(&p, "close");
        }
        let fs = self.files.as_mut().expect("several files");
        fs.closed_done(i);
        let slot = &mut fs.slots[i];
        slot.engine = None;
        if self.job.fsync_on_close
            && self.job.rw.writes(self.job.rwmixread)
            && let Some(fd) = slot.fd.as_ref()
        {
            // fio's fsync_on_close: a written file is synced as it is closed.
            // SAFETY: syncing our own fd.
            unsafe { libc::fsync(fd.as_raw_fd()) };
        }
        if let Some(fd) = slot.fd.take()
            && !self.job.engine.is_sync()
        {
            // Its queued I/Os may still use the descriptor.
            self.deferred_close.push(fd);
        }
    }

    /// Swaps file `i`'s pattern, engine, descriptor, path and size with the worker's (a
    /// file made current, or put back).
    fn swap_file(&mut self, i: usize) {
        let fs = self.files.as_mut().expect("several files");
        let s = &mut fs.slots[i];
        std::mem::swap(&mut self.pattern, &mut s.pattern);
        std::mem::swap(&mut self._fd, &mut s.fd);
        std::mem::swap(&mut self.path, &mut s.path);
        std::mem::swap(&mut self.size, &mut s.size);
        if self.job.engine.is_sync() && !self.job.engine.fileless() {
            std::mem::swap(&mut self.engine, &mut s.engine);
        }
    }

    /// Opens file `i` of several as the job opens its file (advice, a sync engine of its
    /// own, its cache dropped as at a job's start); false when it failed (the error ends the
    /// clone, as fio's failed open ends the job).
    fn open_slot(&mut self, i: usize) -> bool {
        let fs = self.files.as_mut().expect("several files");
        if self.job.engine.fileless() {
            fs.opened(i);
            return true;
        }
        if self.job.engine.file_op() {
            use super::engines::fileops::{Op, run};
            let op = match self.job.engine {
                EngineKind::Filecreate => Op::Create,
                EngineKind::Filestat => Op::Stat(self.job.eng.stat_type),
                _ => Op::Delete,
            };
            let path = fs.slots[i].path.clone();
            let t0 = std::time::Instant::now();
            let r = run(op, &path);
            let ns = t0.elapsed().as_nanos() as u64;
            match r {
                Ok(fd) => {
                    let fs = self.files.as_mut().expect("several files");
                    fs.slots[i].fd = fd;
                    fs.slots[i].engine = Some(Engine::Null);
                    fs.opened(i);
                    self.op_ns = Some(ns);
                    return true;
                }
                Err(e) => {
                    let shown = path
                        .strip_prefix(".")
                        .unwrap_or(&path)
                        .display()
                        .to_string();
                    let func = op.func(&shown);
                    self.set_error(
                        e.raw_os_error().unwrap_or(libc::EIO),
                        &func,
                        format!("{func}: {e}"),
                    );
                    return false;
                }
            }
        }
        let path = fs.slots[i].path.clone();
        let size = fs.slots[i].size;
        let writes = self.job.rw.writes(self.job.rwmixread);
        let opened = match self.registered.get(i) {
            // A registered file: its own descriptor, duplicated.
            Some(fd) => fd.try_clone().map(std::fs::File::from),
            None => open_job_file(&self.job, &path, self.job.unlink_each_loop && writes),
        };
        let f = match opened {
            Ok(f) => f,
            Err(e) => {
                // fio's failed open: `err=2 (file:filesetup.c..., func=open(...))`.
                let (errno, func, detail) = open_failure(&path, &e);
                self.set_error(errno, &func, detail);
                return false;
            }
        };
        if self.job.engine == EngineKind::Mmap {
            // A file made again by this open is empty: the mapping needs its length.
            let end = self.slot_offset(i) + size;
            if f.metadata().is_ok_and(|m| m.len() < end) && f.set_len(end).is_err() {
                self.set_error(
                    libc::EIO,
                    "open",
                    format!("{}: cannot extend", path.display()),
                );
                return false;
            }
        }
        let size = if self.job.sized_at_open {
            match self.size_from_file(i, &f) {
                Some(s) => s,
                None => return false,
            }
        } else {
            size
        };
        let base = self.slot_offset(i);
        advise_access(&f, &self.job, base, size);
        if self.job.invalidate && !self.job.direct {
            // SAFETY: advisory call on our fd.
            unsafe {
                libc::posix_fadvise(
                    f.as_raw_fd(),
                    base as i64,
                    size as i64,
                    libc::POSIX_FADV_DONTNEED,
                );
            }
        }
        let fd = OwnedFd::from(f);
        if self.job.engine.is_sync() {
            let e = match &self.donor {
                Some(d) => Ok(Engine::E4defrag(fd.as_raw_fd(), d.clone())),
                None => Engine::with_pv2(
                    self.job.engine,
                    fd.as_raw_fd(),
                    1,
                    self.job.map_region(base, size),
                    &self.pv2,
                ),
            };
            let e = e.and_then(|e| match self.job.advises_random() {
                Some(r) => e.advise_mapping(r).map(|()| e),
                None => Ok(e),
            });
            match e {
                Ok(e) => self.files.as_mut().expect("several files").slots[i].engine = Some(e),
                Err(e) => {
                    let errno = e.raw_os_error().unwrap_or(libc::EIO);
                    self.set_error(errno, "open", format!("{}: {e}", path.display()));
                    return false;
                }
            }
        }
        let fs = self.files.as_mut().expect("several files");
        fs.slots[i].fd = Some(fd);
        fs.opened(i);
        self.log_file_event(&path, "open");
        true
    }

    /// `write_iolog`: a file's `open` or `close` line.
    fn log_file_event(&mut self, path: &std::path::Path, act: &str) {
        if let Some(l) = self.iolog.as_mut() {
            let us = l.clock.to_ns(l.clock.now().saturating_sub(l.t0)) / 1000;
            l.w.file(us, path, act);
        }
    }

    /// io_uring's `registerfiles` with several files: every file opened now, in order, and
    /// registered with the ring at once (fio's engine does so when the clone starts; its
    /// opens of a file later are the registered descriptor's). The descriptors are kept
    /// for the clone's life: a file's open takes a duplicate of its own.
    fn open_registered(&mut self, e: &mut Engine) -> Result<(), WorkloadError> {
        let paths: Vec<PathBuf> = self
            .files
            .as_ref()
            .map(|f| f.slots.iter().map(|s| s.path.clone()).collect())
            .unwrap_or_default();
        let mut fds = Vec::with_capacity(paths.len());
        for p in &paths {
            let f = open_job_file(&self.job, p, false).map_err(|err| {
                WorkloadError::environment(format!(
                    "job '{}': cannot open {} to register it: {err}",
                    self.job.name,
                    p.display()
                ))
            })?;
            fds.push(OwnedFd::from(f));
        }
        let raw: Vec<i32> = fds.iter().map(|f| f.as_raw_fd()).collect();
        e.register_files(&raw)
            .map_err(|err| WorkloadError::environment(format!("job '{}': {err}", self.job.name)))?;
        self.registered = fds;
        Ok(())
    }

    /// Closes a clone's several files in their order when it ends, as fio closes them.
    fn close_files(&mut self) {
        let Some(c) = self.files.as_ref().map(|f| f.cur) else {
            return;
        };
        if let Some(c) = c {
            self.swap_file(c);
            self.files.as_mut().expect("several files").cur = None;
        }
        self.deferred_close.clear();
        if let Some(fs) = self.files.as_mut() {
            for s in &mut fs.slots {
                s.engine = None;
                s.fd = None;
            }
        }
    }

    /// A job whose file an earlier `fill_device` job made: its region is the file's length
    /// now (from its offset, whole blocks), as fio sizes it when the job starts; the file's
    /// pattern and the clone's limit follow. `None` (the clone ends with an error) when
    /// the file holds less than a block.
    fn size_from_file(&mut self, i: usize, f: &std::fs::File) -> Option<u64> {
        let len = f.metadata().map_or(0, |m| m.len());
        let base = self.slot_offset(i);
        let region = len.saturating_sub(base);
        let bs = self.job.max_bs().max(1);
        if region < bs {
            let path = self.files.as_ref().map(|fs| fs.slots[i].path.clone());
            self.set_error(
                libc::EINVAL,
                "open",
                format!(
                    "{}: {len} bytes, less than a block after offset {}",
                    path.unwrap_or_default().display(),
                    base
                ),
            );
            return None;
        }
        let mut job = self.job.clone();
        job.size = Some(region);
        let mut pattern = match Pattern::new(&job, region) {
            Ok(p) => p,
            Err(e) => {
                self.set_error(libc::EINVAL, "open", e);
                return None;
            }
        };
        pattern.seed(&mut self.rng);
        let pass = region - region % bs;
        let fs = self.files.as_mut().expect("several files");
        let s = &mut fs.slots[i];
        s.size = region;
        s.pass = pass;
        s.left = pass;
        s.pattern = pattern;
        self.limit_bytes = self.job.io_limits(region).0;
        self.limit_ios = self.job.io_limits(region).1;
        Some(region)
    }

    /// nbd's connection for this clone (fio's engine init, which says so on connecting).
    fn nbd_connect(&self, depth: u32) -> std::io::Result<Engine> {
        use super::engines::nbd::{Nbd, Uri};
        let uri = self.job.eng.nbd_uri.as_deref().unwrap_or_default();
        let u = Uri::parse(uri).map_err(|e| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("uri={uri}: {e}"))
        })?;
        let n = Nbd::connect(&u, depth).map_err(|e| {
            std::io::Error::new(
                e.err.kind(),
                format!(
                    "ioengine=nbd: nbd_connect_uri: {e} (uri={uri}; a server that takes one \
                     connection at a time, such as qemu-nbd without -e N, makes the other \
                     jobs wait)"
                ),
            )
        })?;
        eprintln!("fio: connected to NBD server");
        Ok(Engine::Nbd(Box::new(n)))
    }

    /// The current file's descriptor (-1: none).
    fn raw_fd(&self) -> i32 {
        self._fd.as_ref().map_or(-1, |f| f.as_raw_fd())
    }

    /// Accounts one I/O of a file engine: counted, its file's call (`op`, ns) as clat only
    /// (fio's `FIO_NOSTATS`); an I/O without a call (a reset file's) has no latency.
    fn account_file_op(&mut self, dir: Dir, res: i64, op: Option<u64>) {
        let d = &mut self.stats.dirs[dir as usize];
        d.ios += 1;
        d.bytes += res as u64;
        if let Some(ns) = op
            && !self.job.logs.disable.clat
        {
            d.clat.add(ns);
            d.clat_plat.add(ns);
        }
    }

    /// Tallies one I/O completed in ramp time (fio counts it until ramp time ends, then
    /// starts its statistics again): what the clone reports if it never gets past it.
    #[inline(always)]
    fn ramp_io(&mut self, dir: Dir, res: i64) {
        let r = &mut self.stats.ramp[dir as usize];
        r.0 += 1;
        r.1 += res.max(0) as u64;
    }

    /// A clone that ended in its ramp time (Ctrl-C, or its work done first) reports the
    /// I/O of its ramp time, as fio does (its statistics were never started again): counts
    /// only, as fio keeps no latency before ramp time ends.
    fn ramp_only(&mut self, meas: &Meas) {
        if meas.begun {
            return;
        }
        for (d, (ios, bytes)) in self.stats.dirs.iter_mut().zip(self.stats.ramp) {
            d.ios = ios;
            d.bytes = bytes;
        }
    }

    /// Accounts one completed I/O (not during ramp time).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn account(
        &mut self,
        dir: Dir,
        res: i64,
        len: u32,
        slat: Option<u64>,
        clat: u64,
        lat: u64,
        prio: u16,
    ) {
        let d = &mut self.stats.dirs[dir as usize];
        d.ios += 1;
        d.bytes += res as u64;
        // cpuio and exec move no data: their I/Os are not short ones.
        if (res as u64) < len as u64 && !self.job.engine.no_io() {
            d.short += 1;
        }
        // What disable_* (gtod_reduce: all) turns off is not measured, as in fio.
        let off = self.job.logs.disable;
        if !off.slat
            && let Some(s) = slat
        {
            d.slat.add(s);
            // The other histograms only when the report asks for their percentiles
            // (never for a latency turned off).
            if self.job.report.slat_percentiles {
                d.slat_plat.add(s);
            }
        }
        if !off.clat {
            d.clat.add(clat);
            d.clat_plat.add(clat);
        }
        if !off.lat {
            d.lat.add(lat);
            if self.job.report.lat_percentiles {
                d.lat_plat.add(lat);
            }
        }
        // fio's per-priority statistics keep one latency: the total one with
        // lat_percentiles, else the completion latency.
        let pv = if self.job.report.lat_percentiles {
            (!off.lat).then_some(lat)
        } else {
            (!off.clat).then_some(clat)
        };
        if let Some(v) = pv
            && let Some((_, st, plat)) = d.prios.get_mut(prio as usize)
        {
            st.add(v);
            plat.add(v);
        }
    }

    /// Steady state after completions at `now` (measured time from `epoch`): the clone's
    /// totals published, and the ring's check once a second when this clone keeps one;
    /// true when steady state was just attained (the clones it stops are to be woken).
    #[inline(always)]
    #[must_use]
    fn after_completions(&mut self, now: u64, epoch: u64) -> bool {
        let live = &self.shared.live;
        if live.on() {
            let d = &self.stats.dirs;
            live.publish(self.tid, [d[0].bytes, d[1].bytes], [d[0].ios, d[1].ios]);
            if !self.live_running {
                // The first measured completion: ramp time is over.
                self.live_running = true;
                if self.job.ramp_time_s > 0.0 {
                    live.set_state(self.tid, super::status::running_state(&self.job));
                }
            }
        }
        if self.job.ss.dur == 0 {
            return false;
        }
        let d = &self.stats.dirs;
        let board = &self.shared.ss;
        board.publish(self.tid, d[0].bytes + d[1].bytes, d[0].ios + d[1].ios);
        if self.ss.is_none() {
            let tps = self.tps;
            self.ss = Ring::new(board, self.tid, &self.job.ss, epoch, tps);
        }
        if let Some(r) = self.ss.as_mut()
            && now >= r.due()
        {
            return r.check(board, now);
        }
        false
    }

    /// Logs one completed I/O (`ms` since the measured start); a per-I/O bandwidth or
    /// IOPS log also feeds the job's bw/iops statistics per I/O, as fio's do.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn log_io(
        &mut self,
        ms: u64,
        dir: Dir,
        res: i64,
        off: u64,
        slat: Option<u64>,
        clat: u64,
        lat: u64,
        ioprio: u32,
    ) {
        let Some(l) = self.logs.as_mut() else {
            return;
        };
        let d = &mut self.stats.dirs[dir as usize];
        if let Some(rate) = l.io(
            ms,
            dir as usize,
            res as u64,
            off,
            slat,
            clat,
            lat,
            &d.clat_plat,
            ioprio,
        ) {
            d.bw.add(rate);
        }
        if self.job.logs.iops_per_io() && !self.job.logs.disable.reduced() {
            d.iops.add(1);
        }
    }

    /// Logs one I/O done outside the issue loops (a verify read, a `trim_percentage` trim)
    /// that completed at `t1` after `clat` ns.
    fn log_now(
        &mut self,
        clock: &hostbench_core::clock::Clock,
        t1: u64,
        dir: Dir,
        res: i64,
        off: u64,
        clat: u64,
    ) {
        if self.logs.is_some() {
            let ms = clock.to_ns(t1.saturating_sub(self.log_t0)) / 1_000_000;
            self.log_io(ms, dir, res, off, None, clat, clat, self.stats.ioprio);
        }
    }

    /// The measured time began: log rows count from the epoch's clock, if asked.
    #[cold]
    fn log_epoch(&mut self, meas: &Meas) {
        self.log_t0 = meas.t0;
        if let (Some(l), Some(b)) = (self.logs.as_mut(), meas.epoch_base()) {
            l.set_base(b);
        }
    }

    /// The bandwidth and IOPS samples due at `now` (each on its own schedule: fio's
    /// `bwavgtime` and `iopsavgtime`).
    ///
    /// fio's helper thread takes these samples on its own clock, whatever the I/O is doing:
    /// a window ends on time, with what had completed by then, even while an I/O of the
    /// clone is still out (a 400 ms read of a busy disk), and the next starts there. So each
    /// window that ended by `now` is closed at its own end — call this before the
    /// completion seen at `now` is counted: nothing of this clone completed between its
    /// last completion and this one — and a window in which nothing completed has no
    /// sample, as in fio (`delta` 0). (Sampled at completions, as before, the windows
    /// stretched with slow I/O: 4 rows at 653, 1513, 2155, 3135 ms for fio's 6 at 500 ..
    /// 3000 in a 3 s run on a busy disk.)
    fn samples(&mut self, clock: &hostbench_core::clock::Clock, meas: &mut Meas, now: u64) {
        while meas.next_sample <= now {
            let end = meas.next_sample;
            // (Rounded: a window of 500 ms in clock ticks reads 499.99... ms back.)
            let at_ms = (clock.to_ns(end - meas.t0) + 500_000) / 1_000_000;
            if end >= meas.bw.next {
                self.sample(clock.to_ns(end - meas.bw.last), at_ms, true);
                meas.bw.last = end;
                meas.bw.next = end + meas.bw.ticks;
            }
            if end >= meas.iops.next {
                self.sample(clock.to_ns(end - meas.iops.last), at_ms, false);
                meas.iops.last = end;
                meas.iops.next = end + meas.iops.ticks;
            }
            meas.next_sample = meas.bw.next.min(meas.iops.next);
        }
    }

    /// The I/O loop ended: the windows that ended before it did are sampled, as fio's
    /// helper thread samples them while the job still runs.
    fn last_samples(&mut self, ctl: &RunControl<'_>, meas: &mut Meas) {
        if meas.begun && !self.job.engine.file_op() {
            let now = ctl.now();
            if now >= meas.next_sample {
                self.samples(&ctl.clock(), meas, now);
            }
        }
    }

    /// The bandwidth (`bw`) or IOPS samples of the window of `elapsed_ns` that ends `at_ms`
    /// after the clone's measured start.
    fn sample(&mut self, elapsed_ns: u64, at_ms: u64, bw_kind: bool) {
        if elapsed_ns == 0 {
            return;
        }
        let ms = elapsed_ns as f64 / 1e6;
        let (bw_per_io, iops_per_io) = (self.job.logs.bw_per_io(), self.job.logs.iops_per_io());
        for (i, d) in self.stats.dirs.iter_mut().enumerate() {
            let active = match i {
                0 => self.read_pct > 0,
                1 => self.read_pct < 100 && (!self.trims || self.job.rw.trim_write()),
                _ => self.trims,
            };
            if !active {
                continue;
            }
            if bw_kind {
                let bytes = d.bytes - d.last_bytes;
                if bytes == 0 {
                    // fio: "No entries for interval".
                    continue;
                }
                let bw = (bytes as f64 * 1000.0 / ms / 1024.0) as u64;
                // A per-I/O log feeds these statistics itself (fio's quirk: `log_io`).
                if !bw_per_io {
                    d.bw.add(bw);
                }
                if bytes > 0
                    && let Some(l) = self.logs.as_mut()
                {
                    l.bw_window(at_ms, i, bw);
                }
                d.last_bytes = d.bytes;
            } else {
                let ios = d.ios - d.last_ios;
                if ios == 0 {
                    continue;
                }
                let iops = (ios as f64 * 1000.0 / ms) as u64;
                if !iops_per_io {
                    d.iops.add(iops);
                }
                if ios > 0
                    && let Some(l) = self.logs.as_mut()
                {
                    l.iops_window(at_ms, i, iops);
                }
                d.last_ios = d.ios;
            }
        }
    }

    /// An I/O of `len` bytes at `off` that failed with `-res`: true when the clone ends
    /// with it (fio's `err=`; the other clones go on, as in fio), false when
    /// `continue_on_error` makes it non-fatal (counted, and the clone goes on). fio counts
    /// the failed I/O as issued.
    #[must_use]
    fn fail(&mut self, dir: Dir, off: u64, len: u32, res: i64) -> bool {
        let errno = (-res) as i32;
        // exec's program could not be started: the job ends with the reason, as fio's
        // engine errors do (`func=exec`).
        if let Some(why) = self.engine.as_ref().and_then(Engine::exec_error) {
            self.stats.dirs[dir as usize].ios += 1;
            let why = why.to_string();
            self.set_error(errno, "exec", why);
            return true;
        }
        let hint = if self.job.eng.uring.hipri && errno == libc::EOPNOTSUPP {
            " (hipri polls for completions: it needs direct=1 on a device with polled queues, \
             e.g. NVMe with the nvme module's poll_queues set; drop hipri)"
        } else if self.job.engine == EngineKind::Ftruncate && dir == Dir::Read {
            " (the ftruncate engine only writes: each write truncates the file to its \
             offset; use rw=write or rw=randwrite)"
        } else if self.job.engine == EngineKind::E4defrag && errno == libc::ENOTTY {
            " (ioengine=e4defrag's EXT4_IOC_MOVE_EXT works on ext4 only: put the job's files on \
             an ext4 filesystem)"
        } else if self.job.engine == EngineKind::E4defrag && dir != Dir::Write {
            " (the e4defrag engine only writes: each write moves its range's blocks to the \
             donor's; use rw=write or rw=randwrite)"
        } else if self.job.direct && errno == libc::EINVAL {
            " (with direct=1 the block size and offsets must be multiples of the device's \
             logical block size, often 4096 bytes: try bs=4k, or drop direct=1)"
        } else {
            ""
        };
        self.stats.dirs[dir as usize].ios += 1;
        if dir == Dir::Write {
            // Not a completed write for the verify state.
            let file = self.cur_file();
            if let Some(v) = self.verify.as_mut() {
                v.write_failed(file, off);
            }
        }
        if self.job.fill_device && (errno == libc::ENOSPC || errno == libc::EDQUOT) {
            // fio's fill_device: a full filesystem is the job's end, not an error.
            return true;
        }
        // fio's nbd engine names its one pretended file `nbd`.
        let shown = if self.job.engine == EngineKind::Nbd {
            std::path::Path::new("nbd")
        } else {
            self.path.as_path()
        };
        let line = format!(
            "io_u error on file {}: {}: {} offset={off}, buflen={len}",
            shown.display(),
            strerror(errno),
            match dir {
                Dir::Read => "read",
                Dir::Write => "write",
                Dir::Trim => "trim",
            },
        );
        let func = self
            .engine
            .as_ref()
            .map_or("io_u error", Engine::error_func);
        let verdict = self
            .job
            .errors
            .verdict(ErrType::of(dir == Dir::Read, errno), errno);
        match verdict {
            Verdict::Go => {
                // A write that failed is not read back by verify (fio's unlog_io_piece).
                let file = self.cur_file();
                if dir == Dir::Write
                    && let Some(v) = self.verify.as_mut()
                {
                    v.unlog(file, off);
                }
                // fio prints a non-fatal error's line only with error_dump=1, and never for
                // the engines whose queue call sets the error itself (falloc, ftruncate).
                if self.job.errors.dump && self.job.engine.nonfatal_error_func() != "td_io_queue" {
                    eprintln!("fio: {line}");
                }
                // fio's header then names the engine's own call (psync's `xfer`).
                let func = self.job.engine.nonfatal_error_func();
                self.count_error(errno, func, line);
                false
            }
            Verdict::StopCounted | Verdict::Stop => {
                // fio's `io_u error` line, when it happens (the end's warning says it again
                // with the job's name, and keeps it in the stored result); none for the
                // engines whose queue call sets the error itself, as above.
                if self.job.engine.nonfatal_error_func() != "td_io_queue" {
                    eprintln!("fio: {line}");
                }
                if verdict == Verdict::StopCounted {
                    self.count_error(errno, func, line.clone());
                }
                self.set_error(errno, func, format!("{line}{hint}"));
                true
            }
        }
    }

    /// Counts an error under `continue_on_error` (fio's `update_error_count`): the first
    /// one is kept for the reports.
    fn count_error(&mut self, errno: i32, func: &str, detail: String) {
        let c = self.stats.errors.get_or_insert_with(Default::default);
        c.total += 1;
        if c.total == 1 {
            c.first_errno = errno;
            c.first = Some(FioError {
                errno,
                func: func.to_string(),
                text: strerror(errno),
                detail,
                clones: 0,
                setup_clones: 0,
            });
        }
    }

    /// Ends the clone with an error (the first one it met stays), fio's `td_verror`.
    fn set_error(&mut self, errno: i32, func: &str, detail: String) {
        self.stats.error.get_or_insert_with(|| FioError {
            errno,
            func: func.to_string(),
            text: strerror(errno),
            detail,
            clones: 1,
            setup_clones: 0,
        });
    }

    /// An engine call (submit, reap) that failed: the clone ends with its error.
    fn fail_engine(&mut self, func: &str, e: &std::io::Error) {
        let errno = e.raw_os_error().unwrap_or(libc::EIO);
        let detail = format!("{func} failed on file {}: {e}", self.path.display());
        self.set_error(errno, func, detail);
    }

    /// fio's periodic syncs after an I/O (`dir`, `res` bytes at `off`): `fsync=N`,
    /// `fdatasync=N` and `sync_file_range=FLAGS:N` come due once the writes done are a
    /// non-zero multiple of N, and fio issues them before the next I/O (io_u.c,
    /// get_rw_ddir) — so never after the clone's last one (`more` says whether one
    /// comes), and again after a read while no write came since; one at a time, fsync
    /// first, then fdatasync, then sync_file_range. Timed into the sync statistics; false
    /// when it failed (the clone then ends with the error). An nbd engine (`engine`)
    /// flushes the export instead of fsync/fdatasync (`NBD_CMD_FLUSH`).
    fn maybe_sync(
        &mut self,
        ctl: &mut RunControl<'_>,
        warming: bool,
        mut engine: Option<&mut Engine>,
        (dir, off, res): (Dir, u64, i64),
        more: bool,
    ) -> bool {
        if dir == Dir::Write {
            self.writes_done += 1;
            if self.job.sync_file_range.is_some() && res > 0 {
                let r = &mut self.sfr_range;
                r.0 = r.0.min(off);
                r.1 = r.1.max(off + res as u64);
            }
        }
        let w = self.writes_done;
        if !more || w == 0 {
            return true;
        }
        let due = |n: u32| n > 0 && w.is_multiple_of(u64::from(n));
        let sync_due = due(self.job.fsync) || due(self.job.fdatasync);
        if (sync_due || matches!(self.job.sync_file_range, Some((_, n)) if due(n)))
            && let Some(e) = engine.as_deref_mut()
        {
            e.note_sync();
        }
        if sync_due {
            let nbd = match engine {
                Some(Engine::Nbd(x)) => Some(x),
                _ => None,
            };
            if self._fd.is_none() && nbd.is_none() {
                return true;
            }
            // fio: a sync ends the range sync_file_range covers next.
            self.sfr_range = (u64::MAX, 0);
            return self.sync_now(ctl, warming, !due(self.job.fsync), nbd);
        }
        match self.job.sync_file_range {
            Some((flags, n)) if due(n) => self.sync_range(ctl, warming, flags),
            _ => true,
        }
    }

    /// `sync_file_range` with FLAGS on the range written since the last sync (no call
    /// when nothing was, as fio, but the sync still counts), timed into the sync
    /// statistics; false when it failed (the clone ends with it).
    fn sync_range(&mut self, ctl: &mut RunControl<'_>, warming: bool, flags: u32) -> bool {
        let fd = self.raw_fd();
        if fd < 0 {
            return true;
        }
        if let Some(l) = self.iolog.as_mut() {
            let us = ctl.clock().to_ns(ctl.now().saturating_sub(l.t0)) / 1000;
            l.w.sync_range(us, &self.path, l.last_off);
        }
        let (first, end) = std::mem::replace(&mut self.sfr_range, (u64::MAX, 0));
        let t0 = ctl.now();
        let rc = if end > first {
            // SAFETY: a system call on our own descriptor.
            unsafe {
                libc::sync_file_range(
                    fd,
                    first as libc::off64_t,
                    (end - first) as libc::off64_t,
                    flags,
                )
            }
        } else {
            0
        };
        let t1 = ctl.now();
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            let detail = format!("sync_file_range of {} failed: {e}", self.path.display());
            self.set_error(
                e.raw_os_error().unwrap_or(libc::EIO),
                "sync_file_range",
                detail,
            );
            return false;
        }
        ctl.counters().add(Counter::Other, 1);
        if !warming && !self.job.logs.disable.clat {
            let ns = ctl.clock().to_ns(t1 - t0);
            self.stats.sync.add(ns);
            self.stats.sync_plat.add(ns);
        }
        true
    }

    /// Syncs the clone's file now (fdatasync when `datasync`; an NBD flush), timed into
    /// the sync statistics: `fsync`/`fdatasync` every N writes, or a replayed log's `sync`
    /// line. False (the clone's error set) when it failed.
    fn sync_now(
        &mut self,
        ctl: &mut RunControl<'_>,
        warming: bool,
        datasync: bool,
        nbd: Option<&mut Box<super::engines::nbd::Nbd>>,
    ) -> bool {
        if let Some(l) = self.iolog.as_mut() {
            let us = ctl.clock().to_ns(ctl.now().saturating_sub(l.t0)) / 1000;
            l.w.sync(us, &self.path, datasync, l.last_off);
        }
        let fd = self._fd.as_ref().map_or(-1, |f| f.as_raw_fd());
        let t0 = ctl.now();
        let mut nbd_err = 0;
        let r = if let Some(x) = nbd {
            let r = x.flush();
            nbd_err = (-r) as i32;
            if r < 0 { -1 } else { 0 }
        } else {
            // SAFETY: syncing our own fd.
            unsafe {
                if datasync {
                    libc::fdatasync(fd)
                } else {
                    libc::fsync(fd)
                }
            }
        };
        let t1 = ctl.now();
        if r != 0 {
            let e = if nbd_err > 0 {
                std::io::Error::from_raw_os_error(nbd_err)
            } else {
                std::io::Error::last_os_error()
            };
            let func = if datasync { "fdatasync" } else { "fsync" };
            let detail = format!("{func} of {} failed: {e}", self.path.display());
            self.set_error(e.raw_os_error().unwrap_or(libc::EIO), func, detail);
            return false;
        }
        ctl.counters().add(Counter::Other, 1);
        // fio: disable_clat (gtod_reduce) also turns off the sync latencies.
        if !warming && !self.job.logs.disable.clat {
            let ns = ctl.clock().to_ns(t1 - t0);
            self.stats.sync.add(ns);
            self.stats.sync_plat.add(ns);
        }
        true
    }

    /// `read_iolog`: reads the log up to its next I/O and makes it pending for
    /// [`Self::next_io`], waiting each entry's time first (fio's `iolog_delay`: the time
    /// since the previous entry, from the previous issue; a version 2 `wait` until its ms
    /// since the start) and doing the syncs on the way. False when the log is done, the
    /// clone is to stop, or a sync failed.
    #[inline(never)]
    fn replay_step(&mut self, ctl: &mut RunControl<'_>) -> bool {
        use super::iolog::Next;
        let clock = ctl.clock();
        loop {
            let Some(rp) = self.replay.as_mut() else {
                return true;
            };
            if rp.pending.is_some() {
                return true;
            }
            let next = match rp.r.next_event() {
                Ok(n) => n,
                Err(e) => {
                    self.set_error(libc::EINVAL, "iolog read", e);
                    return false;
                }
            };
            let (last, start) = (rp.last_issue, rp.start);
            let due = |us: u64| last + clock.from_ns(us.saturating_mul(1000));
            let (t, io) = match next {
                Next::End => return false,
                Next::WaitUntilMs(ms) => {
                    (start + clock.from_ns(ms.saturating_mul(1_000_000)), None)
                }
                Next::Delay(us) => (due(us), None),
                Next::Sync { delay_us, .. } => (due(delay_us), None),
                Next::Io {
                    dir,
                    offset,
                    len,
                    delay_us,
                } => (due(delay_us), Some((dir, offset, len))),
            };
            if !self.wait_for(ctl, t) {
                return false;
            }
            let now = ctl.now();
            if let Next::Sync { datasync, .. } = next {
                let warming = self.warming(ctl, now);
                if !self.sync_now(ctl, warming, datasync, None) {
                    return false;
                }
            }
            let rp = self.replay.as_mut().expect("replaying");
            if !matches!(next, Next::WaitUntilMs(_)) {
                rp.last_issue = now;
            }
            if io.is_some() {
                rp.pending = io;
                return true;
            }
        }
    }

    /// `write_iolog`: the I/O about to be issued goes into the clone's log.
    #[inline(never)]
    fn log_issue(
        &mut self,
        now: u64,
        clock: &hostbench_core::clock::Clock,
        dir: Dir,
        off: u64,
        len: u32,
    ) {
        if let Some(l) = self.iolog.as_mut() {
            let us = clock.to_ns(now.saturating_sub(l.t0)) / 1000;
            let name = if self.path.as_os_str().is_empty() {
                &l.fileless
            } else {
                &self.path
            };
            l.w.io(us, name, dir, off, len);
            l.last_off = off;
        }
    }

    /// fio's `check_min_rate` after completions at `now`: false (and the clone's error set,
    /// EIO in `check_min_rate`) when a direction fell below its minimum.
    fn rate_ok(&mut self, now: u64) -> bool {
        let Some(m) = self.min_rate.as_mut() else {
            return true;
        };
        for d in 0..2 {
            let s = &self.stats.dirs[d];
            if let Some(msg) = m.check(&self.job.name, d, now, s.bytes, s.ios) {
                self.set_error(libc::EIO, "check_min_rate", msg);
                return false;
            }
        }
        true
    }

    /// Thinks (nothing in flight) and, with `rate_ignore_thinktime`, moves the rate
    /// schedule on by the time it took.
    fn think_now(&mut self, ctl: &mut RunControl<'_>) {
        let Some(t) = self.think.as_mut() else {
            return;
        };
        let (shared, tid) = (&self.shared, self.tid);
        let took = t.think(ctl, &|| shared.seq.told_to_stop(tid));
        if self.job.rate.ignore_thinktime {
            self.pacer.shift(took);
        }
    }

    /// Waits until `t` in one sleep; false when the clone is to stop first
    /// (its time is up, the run ends, or `exitall`/`exit_what` stops it).
    fn wait_for(&self, ctl: &mut RunControl<'_>, t: u64) -> bool {
        let (seq, ss, tid) = (&self.shared.seq, &self.shared.ss, self.tid);
        let stop = || seq.told_to_stop(tid) || ss.stopped(tid);
        loop {
            let now = ctl.now();
            if ctl.aborted()
                || ctl.should_stop(now)
                || self.shared.seq.told_to_stop(self.tid)
                || self.shared.ss.stopped(self.tid)
            {
                return false;
            }
            if now >= t {
                return true;
            }
            // One sleep to `t` (or the clone's end), woken by a stop: no wake-up every few
            // ms that fio's sleeps do not have (they would count as context switches).
            let end = t.min(ctl.deadline().max(now + 1));
            ctl.sleep_until(end, &stop);
        }
    }

    /// After a cpuio cycle: the think follows the cycle's length (qsort times itself), and
    /// with `exit_on_io_done` the clone is done once no job doing I/O runs or waits.
    fn cpu_cycle_done(&mut self) {
        if let (Some(t), Some(us)) = (
            self.think.as_mut(),
            self.engine.as_ref().and_then(Engine::cpu_think_us),
        ) {
            t.us = us;
        }
    }

    /// cpuio's `exit_on_io_done`: true when the clone is to end before its next cycle.
    fn cpu_exit_now(&self) -> bool {
        self.job.engine == EngineKind::Cpuio
            && self.job.eng.exit_on_io_done
            && !self.shared.seq.io_clones_left()
    }

    /// fio's flow check before an I/O: true when the clone may issue it (and it is counted).
    #[inline]
    fn flow_allows(&mut self) -> bool {
        self.job.flow == 0
            || self
                .shared
                .flows
                .allows(self.job.flow_id, self.job.flow, &mut self.flow_count)
    }

    /// A clone held back by its flow: sleeps `flow_sleep` (nothing in flight), or yields.
    fn flow_pause(&self, ctl: &mut RunControl<'_>) {
        if self.job.flow_sleep_us > 0 {
            let t = ctl.now() + ctl.clock().from_ns(self.job.flow_sleep_us * 1000);
            self.wait_for(ctl, t);
        } else {
            std::thread::yield_now();
        }
    }

    /// The intended start of an I/O due at `due` (`None`: not paced): never before the end
    /// of the last think, which the job asked for.
    #[inline]
    fn intended(&self, due: Option<u64>) -> Option<u64> {
        let until = self.think.as_ref().map_or(0, |t| t.until);
        due.map(|d| d.max(until))
    }

    /// `verify`, before a write of `len` bytes at `off` from `buf`: the block is filled as
    /// fio fills it (data, headers, checksums) and logged for the verify phase.
    /// With `verify_only` the write is not done (true: skip it), only logged and counted
    /// (fio's `do_dry_run`: issued and completed, its bytes in the job's write total, with
    /// no time of its own); without a `verify` to log it for, it is only counted.
    #[inline]
    fn before_write(&mut self, ctl: &RunControl<'_>, buf: *mut u8, off: u64, len: u32) -> bool {
        if self.job.verify.only {
            let d = &mut self.stats.dirs[Dir::Write as usize];
            d.ios += 1;
            d.bytes += u64::from(len);
        }
        let Some(v) = self.verify.as_mut() else {
            if self.job.verify.only {
                return true;
            }
            if self.fill.step != FillStep::Keep {
                self.fill_write(ctl.clock().to_ns(ctl.now()), buf, off, len);
            }
            return false;
        };
        let n = self.numberio as u16;
        let only = v.opts().only;
        let seed = if only {
            0
        } else {
            // SAFETY: each slot holds max_bs >= len bytes, and this one is not in flight.
            let b = unsafe { std::slice::from_raw_parts_mut(buf, len as usize) };
            v.fill(b, off, n, ctl.clock().to_ns(ctl.now()))
        };
        let file = self.cur_file();
        let Some(v) = self.verify.as_mut() else {
            return false;
        };
        v.issued(file, off);
        v.log(Piece {
            file,
            off,
            len,
            numberio: n,
            seed,
            trimmed: false,
        });
        self.numberio += 1;
        only
    }

    /// `verify_state_save`: a writing clone with `verify` saves its state file when it
    /// ends, as fio does (whatever ended it); a file that cannot be written is said on
    /// stderr and the run goes on, as in fio.
    fn save_verify_state(&self) {
        use super::job::Rw;
        let j = &self.job;
        let writes = matches!(
            j.rw,
            Rw::Write
                | Rw::RandWrite
                | Rw::ReadWrite
                | Rw::RandRw
                | Rw::TrimWrite
                | Rw::RandTrimWrite
        );
        if let Some(v) = &self.verify
            && j.verify.state_save
            && writes
        {
            let s = v.state(&j.name, self.tid, self.numberio);
            if let Err(e) = super::vstate::save(&j.run_dir, &j.name, &s) {
                eprintln!("fio: {e}");
            }
        }
        // A trigger saves every clone's state, with or without verify (fio's
        // `verify_save_state(IO_LIST_ALL)`): this one's, kept for it.
        if self.shared.trigger.on {
            let s = match &self.verify {
                Some(v) => v.state(&j.name, self.tid, self.numberio),
                None => super::vstate::State {
                    depth: j.iodepth,
                    nofiles: j.nfiles(),
                    numberio: self.stats.dirs[Dir::Write as usize].ios,
                    index: self.tid as u64,
                    name: j.name.as_bytes().to_vec(),
                    comps: Vec::new(),
                },
            };
            self.shared.trigger.ended(self.tid, s);
        }
    }

    /// The index of the current file among the clone's several (0 with one).
    #[inline]
    fn cur_file(&self) -> u32 {
        self.files
            .as_ref()
            .and_then(|f| f.cur)
            .map_or(0, |c| c as u32)
    }

    /// The descriptor and path the verify phase reads logged file `i` from, with several
    /// files: the file's own while it is open, else one opened for the phase (kept in
    /// `opened` until it ends) as fio opens a file again for its verify reads, its cached
    /// pages dropped and its access advised. `None` when it cannot be opened (the clone
    /// ends with the error).
    fn verify_file(
        &mut self,
        opened: &mut [Option<std::fs::File>],
        i: usize,
    ) -> Option<(i32, PathBuf)> {
        let fs = self.files.as_ref()?;
        if fs.cur == Some(i) {
            return Some((
                self._fd.as_ref().map_or(-1, |f| f.as_raw_fd()),
                self.path.clone(),
            ));
        }
        let s = &fs.slots[i];
        if let Some(fd) = &s.fd {
            return Some((fd.as_raw_fd(), s.path.clone()));
        }
        let path = s.path.clone();
        let size = s.size;
        if let Some(f) = &opened[i] {
            return Some((f.as_raw_fd(), path));
        }
        let base = s.offset;
        match open_job_file(&self.job, &path, false) {
            Ok(f) => {
                if self.job.invalidate && !self.job.direct {
                    // SAFETY: advisory call on our fd.
                    unsafe {
                        libc::posix_fadvise(
                            f.as_raw_fd(),
                            base as i64,
                            size as i64,
                            libc::POSIX_FADV_DONTNEED,
                        );
                    }
                }
                advise_access(&f, &self.job, base, size);
                let fd = f.as_raw_fd();
                opened[i] = Some(f);
                Some((fd, path))
            }
            Err(e) => {
                let (errno, func, detail) = open_failure(&path, &e);
                self.set_error(errno, &func, detail);
                None
            }
        }
    }

    /// Without `verify`, before a write of `len` bytes at `off` from `buf` issued at
    /// `time_ns`: fio's refill or scramble of the buffer (`bufs.rs`).
    #[inline]
    fn fill_write(&mut self, time_ns: u64, buf: *mut u8, off: u64, len: u32) {
        // SAFETY: each slot holds max_bs >= len bytes, and this one is not in flight.
        let b = unsafe { std::slice::from_raw_parts_mut(buf, len as usize) };
        self.fill.before_write(b, off, time_ns);
    }

    /// Whether a `verify_backlog` check is due (after the last logged write).
    #[inline]
    fn backlog_due(&self) -> bool {
        self.pass_verify || self.verify.as_ref().is_some_and(|v| v.backlog_due())
    }

    /// Whether a trim of `trim_percentage`'s list is due before the next I/O.
    #[inline]
    fn trim_ready(&self) -> bool {
        self.verify.as_ref().is_some_and(|v| v.trim_ready())
    }

    /// Whether `trim_backlog` trims are left on the list (fio's loop goes on for them).
    #[inline]
    fn trims_left(&self) -> bool {
        self.verify
            .as_ref()
            .is_some_and(|v| v.opts().trim_backlog > 0 && v.trim_entries() > 0)
    }

    /// One trim of `trim_percentage`'s list, when one is due (fio's `get_next_trim`): the
    /// logged block is discarded (a hole punched in a file, BLKDISCARD on a device) and
    /// counted as a trim; `queued`: in a queue engine's loop (its depth counted here).
    /// False when the trim failed and the clone ends.
    fn backlog_trim(&mut self, ctl: &mut RunControl<'_>, queued: bool) -> bool {
        let Some(p) = self.verify.as_mut().and_then(|v| v.next_trim()) else {
            return true;
        };
        let clock = ctl.clock();
        let multi = self.files.is_some() && !self.job.engine.fileless();
        let mut opened: Vec<Option<std::fs::File>> = if multi {
            (0..self.files.as_ref().map_or(0, |f| f.slots.len()))
                .map(|_| None)
                .collect()
        } else {
            Vec::new()
        };
        let fd = if multi {
            match self.verify_file(&mut opened, p.file as usize) {
                Some((f, _)) => f,
                None => return false,
            }
        } else {
            self._fd.as_ref().map_or(-1, |f| f.as_raw_fd())
        };
        let t0 = ctl.now();
        let res = if fd >= 0 && !self.job.engine.fileless() {
            super::engine::trim(fd, p.off, p.len)
        } else {
            i64::from(p.len)
        };
        let t1 = ctl.now();
        drop(opened);
        if res < 0 {
            return !self.fail(Dir::Trim, p.off, p.len, res);
        }
        if self.warming(ctl, t1) {
            self.ramp_io(Dir::Trim, res);
        } else {
            ctl.record(t0, t1);
            Self::count(ctl, Dir::Trim, res);
            let c = clock.to_ns(t1 - t0);
            self.account(Dir::Trim, res, p.len, None, c, c, 0);
            self.log_now(&clock, t1, Dir::Trim, res, p.off, c);
        }
        if queued {
            self.stats.depth_map[0] += 1;
            self.stats.submit_map[1] += 1;
            self.stats.complete_map[1] += 1;
        }
        true
    }

    /// Verifies a backlog batch; false when a block did not verify.
    fn verify_backlog(&mut self, ctl: &mut RunControl<'_>) -> bool {
        if std::mem::take(&mut self.pass_verify) {
            // A pass ended: fio's verify phase after its `do_io`.
            return self.verify_pass(ctl, None, true);
        }
        let n = self.verify.as_mut().map_or(0, |v| v.backlog_batch());
        self.verify_pass(ctl, Some(n), false)
    }

    /// `verify` on a read job, after a read of `len` bytes at `off` into `buf` completed:
    /// the block is checked; false when it does not verify (the clone then ends with fio's
    /// err=84, its lines printed on stderr as fio prints them).
    #[inline]
    fn after_read(&mut self, buf: *mut u8, off: u64, len: u32) -> bool {
        let Some(v) = self.verify.as_mut() else {
            return true;
        };
        // Writers check in their verify phase; the null engine moves no data (fio pretends).
        if self.job.rw.writes(self.job.rwmixread) || self.job.engine == EngineKind::Null {
            return true;
        }
        // SAFETY: the read into this slot completed; the slot holds max_bs >= len bytes.
        let b = unsafe { std::slice::from_raw_parts_mut(buf, len as usize) };
        match v.check(b, off, None, &self.path) {
            Ok(()) => true,
            Err(f) => !self.verify_failed(f),
        }
    }

    /// A block that did not verify: fio's lines on stderr, and the clone's error (EILSEQ);
    /// true when the clone ends with it (false: `continue_on_error=verify` counted it).
    #[must_use]
    fn verify_failed(&mut self, f: super::verify::Failure) -> bool {
        {
            use std::io::Write;
            let mut e = std::io::stderr().lock();
            for l in &f.lines {
                let _ = writeln!(e, "{l}");
            }
        }
        let func = if self.job.sync_io() {
            "io_u_sync_complete"
        } else {
            "io_u_queued_complete"
        };
        match self.job.errors.verdict(ErrType::Verify, libc::EILSEQ) {
            Verdict::Go => {
                self.count_error(libc::EILSEQ, func, f.first);
                false
            }
            Verdict::StopCounted => {
                self.count_error(libc::EILSEQ, func, f.first.clone());
                self.set_error(libc::EILSEQ, func, f.first);
                true
            }
            Verdict::Stop => {
                self.set_error(libc::EILSEQ, func, f.first);
                true
            }
        }
    }

    /// fio's verify phase (`do_verify`), after the write phase or every `verify_backlog`
    /// writes: the file is synced and its cached pages dropped, then the logged blocks are
    /// read back one at a time (at most `max`) and checked. The reads are counted as fio
    /// counts them, as reads. False when a block did not verify or a read failed.
    /// `phase`: the verify phase after the writes (its time is the read runtime), else a
    /// backlog batch between writes.
    fn verify_pass(&mut self, ctl: &mut RunControl<'_>, max: Option<u64>, phase: bool) -> bool {
        let Some(mut v) = self.verify.take() else {
            return true;
        };
        let clock = ctl.clock();
        // Several files: each logged piece is read from its own file (fio closes the
        // files whose region is done before its verify phase, and opens each again when
        // its first piece is read back).
        let multi = self.files.is_some() && !self.job.engine.fileless();
        if multi && phase && !self.keep_open {
            self.close_files();
        }
        let mut opened: Vec<Option<std::fs::File>> = if multi {
            (0..self.files.as_ref().map_or(0, |f| f.slots.len()))
                .map(|_| None)
                .collect()
        } else {
            Vec::new()
        };
        let mut fd = self._fd.as_ref().map_or(-1, |f| f.as_raw_fd());
        let mut path = self.path.clone();
        // fio's verify phase begins with the file opened again and its cache dropped
        // (`invalidate`): the time is the reads' runtime, not the writes'. fio closed the
        // file before the phase (`clear_io_state`), so `do_verify`'s sync of the open files
        // syncs nothing, and POSIX_FADV_DONTNEED leaves the dirty pages cached: a buffered
        // job reads its writes back from the page cache, as here.
        let t_start = ctl.now();
        if phase && !multi {
            self.drop_cache();
        }
        v.from_log = true;
        let buf = self.bufs.slot(0);
        let mut ok = true;
        let mut n = 0u64;
        let mut last_sample = ctl.now();
        let sample_ticks = clock.from_ns(SAMPLE_NS);
        while max.is_none_or(|m| n < m) {
            let now = ctl.now();
            if ctl.aborted() || !self.go(ctl, now) {
                break;
            }
            let Some(p) = v.next_piece() else {
                break;
            };
            // verify_state_load: past what the saved state saw written, the phase ends.
            if v.state_stops(&p) {
                break;
            }
            if multi {
                match self.verify_file(&mut opened, p.file as usize) {
                    Some((f, pa)) => (fd, path) = (f, pa),
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            n += 1;
            let t0 = ctl.now();
            if let Some(l) = self.iolog.as_mut() {
                // write_iolog: fio logs each verify read as it issues it.
                let us = clock.to_ns(t0.saturating_sub(l.t0)) / 1000;
                l.w.io(us, &path, Dir::Read, p.off, p.len);
                l.last_off = p.off;
            }
            let res = if let Some(Engine::Nbd(x)) = self.engine.as_mut() {
                x.read_now(buf, p.off, p.len)
            } else if fd < 0 {
                p.len as i64
            } else {
                read_full(fd, buf, p.off, p.len)
            };
            let t1 = ctl.now();
            v.read_back();
            if res < 0 {
                if self.fail(Dir::Read, p.off, p.len, res) {
                    ok = false;
                    break;
                }
                continue;
            }
            let warming = self.warming(ctl, t1);
            if !warming {
                ctl.record(t0, t1);
                Self::count(ctl, Dir::Read, res);
                let c = clock.to_ns(t1 - t0);
                self.account(Dir::Read, res, p.len, None, c, c, 0);
                // fio logs the verify reads as it logs any read.
                self.log_now(&clock, t1, Dir::Read, res, p.off, c);
                if t1 >= last_sample + sample_ticks {
                    let ms = clock.to_ns(t1 - last_sample) as f64 / 1e6;
                    let (bw_per_io, iops_per_io) =
                        (self.job.logs.bw_per_io(), self.job.logs.iops_per_io());
                    let d = &mut self.stats.dirs[0];
                    // (A per-I/O bandwidth or IOPS log feeds these itself, in log_io.)
                    if !bw_per_io {
                        d.bw.add(((d.bytes - d.last_bytes) as f64 * 1000.0 / ms / 1024.0) as u64);
                    }
                    if !iops_per_io {
                        d.iops
                            .add(((d.ios - d.last_ios) as f64 * 1000.0 / ms) as u64);
                    }
                    d.last_bytes = d.bytes;
                    d.last_ios = d.ios;
                    last_sample = t1;
                }
            }
            self.stats.depth_map[0] += 1;
            self.stats.submit_map[1] += 1;
            self.stats.complete_map[1] += 1;
            let nbd = matches!(self.engine, Some(Engine::Nbd(_)));
            if (fd >= 0 || nbd) && (res as u64) < p.len as u64 {
                let detail = format!(
                    "verify read of {} at offset {} returned {res} of {} bytes (the file is shorter than what was written)",
                    path.display(),
                    p.off,
                    p.len
                );
                self.set_error(libc::EIO, "do_verify", detail);
                ok = false;
                break;
            }
            if fd >= 0 || nbd {
                // SAFETY: the read into slot 0 completed; it holds max_bs >= len bytes.
                let b = unsafe { std::slice::from_raw_parts_mut(buf, p.len as usize) };
                if let Err(f) = v.check(b, p.off, Some(p), &path)
                    && self.verify_failed(f)
                {
                    ok = false;
                    break;
                }
            }
        }
        if phase {
            self.stats.verify_ns += clock.to_ns(ctl.now().saturating_sub(t_start));
        }
        v.from_log = false;
        self.verify = Some(v);
        // The files opened for the pass are closed in order, as fio closes them.
        drop(opened);
        ok
    }

    fn count(ctl: &RunControl<'_>, dir: Dir, res: i64) {
        let c = ctl.counters();
        match dir {
            Dir::Read => {
                c.add(Counter::Reads, 1);
                c.add(Counter::BytesRead, res as u64);
            }
            Dir::Write => {
                c.add(Counter::Writes, 1);
                c.add(Counter::BytesWritten, res as u64);
            }
            // A trim moves no data: one operation of the run's "other" kind.
            Dir::Trim => c.add(Counter::Other, 1),
        }
    }

    /// Whether the clone has nothing between its I/Os: no flow, no rate, no think time,
    /// no minimum rate, no verify (the sync loop then takes its plain form).
    fn plain(&self) -> bool {
        self.job.flow == 0
            && self.shared.file_locks[self.shared.threads[self.tid].0].is_empty()
            && !self.job.engine.file_op()
            && !self.pacer.active()
            && self.think.is_none()
            && self.min_rate.is_none()
            && self.verify.is_none()
            && !self.job.verify.only
            && self.lat.is_none()
            && self.replay.is_none()
            && self.iolog.is_none()
            && self.job.lat.max_ns == [0; 3]
    }

    /// fio's queue-depth search saw a read or write complete in `lat_ns` (total latency);
    /// at depth 1 with `latency_percentile=100` one over the target ends the clone with
    /// fio's error (then [`Step::Fatal`]).
    fn lat_completed(&mut self, dir: Dir, off: u64, len: u32, lat_ns: u64) -> Step {
        if dir == Dir::Trim {
            return Step::Go;
        }
        // max_latency first, as fio checks it (a latency not measured is not checked).
        let max = self.job.lat.max_ns[dir as usize];
        if max > 0 && lat_ns > max && !self.job.logs.disable.lat && self.job.stats {
            self.lat_fatal(dir, off, len, lat_ns, max);
            return Step::Fatal;
        }
        let Some(s) = self.lat.as_mut() else {
            return Step::Go;
        };
        let step = s.completed(lat_ns);
        if step == Step::Fatal {
            let target = s.target_ns();
            self.lat_fatal(dir, off, len, lat_ns, target);
        }
        step
    }

    /// fio's `lat_fatal`: the clone's error (ETIMEDOUT) with fio's line.
    /// Its line is printed when it happens, once (fio's `if (!td->error)`), the file named
    /// as fio names it (a generated file without `directory` has no `./`).
    fn lat_fatal(&mut self, dir: Dir, off: u64, len: u32, lat_ns: u64, target: u64) {
        let path = self.path.display().to_string();
        let shown = match path.strip_prefix("./") {
            Some(p) if self.job.directory == "." => p,
            _ => path.as_str(),
        };
        let detail = format!(
            "latency of {lat_ns} nsec exceeds specified max ({target} nsec): {shown} {} {off} {len}",
            if dir == Dir::Read { "read" } else { "write" },
        );
        if self.stats.error.is_none() {
            eprintln!("fio: {detail}");
        }
        self.set_error(libc::ETIMEDOUT, "max latency exceeded", detail);
    }

    /// fio's `lat_target_check` after an issue or a reap at `now` in a queue engine's loop:
    /// a lower depth (or the depth found) waits for what is in flight (`wait`, `last`);
    /// the end of the final window ends the clone's issuing (`more`).
    fn lat_step(&mut self, now: u64, wait: &mut bool, last: &mut bool, more: &mut bool) {
        match self.lat.as_mut().map_or(Step::Go, |s| s.check(now)) {
            Step::Quiesce => *wait = true,
            Step::FinalRun => {
                *wait = true;
                *last = true;
            }
            Step::Done => *more = false,
            Step::Go | Step::Fatal => {}
        }
    }

    /// The search's final window begins at `now` (what was in flight has completed): as
    /// fio's `reset_all_stats`, the clone's statistics, its measured time and its
    /// `runtime` start again.
    fn lat_final_run(&mut self, ctl: &mut RunControl<'_>, meas: &mut Meas, now: u64) {
        self.stats.restart();
        // Measurement begins again: both sample schedules, the CPU times and the logs'
        // epoch (fio resets its epoch there too).
        meas.begun = false;
        meas.begin(ctl, now);
        self.log_epoch(meas);
        self.mix.ramp_over();
        if let Some(rt) = self.job.runtime_s {
            ctl.restart_end(now + ctl.clock().from_ns((rt * 1e9) as u64));
        }
        if let Some(s) = self.lat.as_mut() {
            s.quiesced(now);
        }
    }

    /// The sync engines' loop; `PLAIN` (see [`Self::plain`]) leaves out the per-I/O checks
    /// of flows, rates and think time, which cost the null engine's harness ~13%.
    fn run_sync<const PLAIN: bool>(
        &mut self,
        ctl: &mut RunControl<'_>,
    ) -> Result<Meas, WorkloadError> {
        let clock = ctl.clock();
        let mut now = ctl.now();
        let epoch = if self.epoch > 0 { self.epoch } else { now };
        let mut meas = Meas::start(ctl, epoch, self.warming(ctl, now), &self.job);
        if meas.begun {
            self.log_epoch(&meas);
        }
        let mut issued = 0u64;
        let mut issued_ios = 0u64;
        let buf = self.bufs.slot(0);
        loop {
            // trim_backlog: fio's loop goes on while trims are left on the list.
            let trims_left = !PLAIN && self.trims_left();
            if !trims_left && self.work_done(issued, issued_ios) {
                break;
            }
            if !self.go(ctl, now) || self.cpu_exit_now() {
                break;
            }
            if trims_left {
                if self.trim_ready() {
                    if !self.backlog_trim(ctl, false) {
                        break;
                    }
                    now = ctl.now();
                    continue;
                }
                if self.work_done(issued, issued_ios) {
                    break;
                }
            }
            if !PLAIN && !self.flow_allows() {
                self.flow_pause(ctl);
                now = ctl.now();
                continue;
            }
            if !PLAIN && self.replay.is_some() && !self.replay_step(ctl) {
                break;
            }
            let mut dir = self.pick_dir();
            let mut due = None;
            if !PLAIN && self.pacer.active() {
                (dir, due) = self.pacer.choose(dir, now);
                self.mix.settle(dir as usize);
                if let Some(d) = due
                    && d > now
                    && !self.wait_for(ctl, d)
                {
                    break;
                }
            }
            let intended = if PLAIN { None } else { self.intended(due) };
            let Some((dir, off, len)) = self.next_io(dir) else {
                break;
            };
            if !PLAIN && std::mem::take(&mut self.verify_first) {
                // The loop that just ended is read back first (fio's `do_verify`); the
                // file of the I/O placed stays open for it.
                self.pass_verify = true;
                self.keep_open = true;
                let ok = self.verify_backlog(ctl);
                self.keep_open = false;
                if !ok {
                    break;
                }
            }
            self.mix.issued(dir as usize);
            if !PLAIN {
                self.pacer.issued(dir, len as u64, &mut self.rng);
            }
            if !PLAIN && dir == Dir::Write && self.before_write(ctl, buf, off, len) {
                issued += len as u64;
                issued_ios += 1;
                now = ctl.now();
                continue;
            }
            let t0 = ctl.now();
            if !PLAIN && self.iolog.is_some() {
                self.log_issue(t0, &clock, dir, off, len);
            }
            if PLAIN && dir == Dir::Write && self.fill.step != FillStep::Keep {
                self.fill_write(clock.to_ns(t0), buf, off, len);
            }
            let res = match self.engine.as_mut().expect("engine built at start") {
                Engine::Net(n) => {
                    let (shared, tid) = (&self.shared, self.tid);
                    let c = &*ctl;
                    let stop =
                        || c.aborted() || c.now() >= c.deadline() || shared.seq.told_to_stop(tid);
                    // SAFETY: buf is this clone's slot buffer, at least the largest block.
                    let b = unsafe { std::slice::from_raw_parts_mut(buf, len as usize) };
                    let r = n.io(dir == Dir::Write, b, &stop);
                    let drops = n.take_drops();
                    if !self.warming(ctl, ctl.now()) {
                        for (d, k) in drops.into_iter().enumerate() {
                            self.stats.dirs[d].drops += k;
                        }
                    }
                    if r == 0 {
                        // The peer is done (end of stream, UDP close message) or the run
                        // stops: the clone ends, without error, as fio's.
                        break;
                    }
                    r
                }
                // zonemode=zbd: the trim was the zone's reset; nothing goes to the file
                // (fio's `zbd_do_io_u_trim`).
                _ if dir == Dir::Trim && self.zbd.is_some() => i64::from(len),
                e if !PLAIN => {
                    // lockfile=exclusive: the I/O holds its file's lock, shared with the
                    // job's other clones (fio holds it from prep to the engine's return).
                    let locks = &self.shared.file_locks[self.shared.threads[self.tid].0];
                    let k = self.files.as_ref().and_then(|f| f.cur).unwrap_or(0);
                    let _held = locks
                        .get(k)
                        .map(|l| l.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
                    e.sync_io(dir, buf, off, len)
                }
                e => e.sync_io(dir, buf, off, len),
            };
            let t1 = ctl.now();
            if self.job.engine == EngineKind::Cpuio {
                self.cpu_cycle_done();
            }
            if res == 0 && len > 0 && self.job.engine.moves_data() {
                // fio's `full resid`: a transfer that moved nothing (a read at the end of
                // an empty create_on_open file) ends the clone with EIO.
                self.stats.dirs[dir as usize].ios += 1;
                self.set_error(
                    libc::EIO,
                    "full resid",
                    format!(
                        "{} of {len} bytes at offset {off} of {} moved nothing",
                        if dir == Dir::Read { "read" } else { "write" },
                        self.path.display()
                    ),
                );
                break;
            }
            if res < 0 {
                if self.fail(dir, off, len, res) {
                    break;
                }
                // Non-fatal (continue_on_error): issued, not completed.
                issued += len as u64;
                issued_ios += 1;
                now = ctl.now();
                continue;
            }
            issued += len as u64;
            issued_ios += 1;
            let start = intended.unwrap_or(t0);
            // Nothing of ramp time is counted: not in fio's statistics, not in the run's.
            let warming = self.warming(ctl, t1);
            if !warming {
                ctl.record(start, t1);
                Self::count(ctl, dir, res);
                if !PLAIN
                    && !meas.begun
                    && let Some(s) = self.lat.as_mut()
                {
                    // fio's search starts over when ramp time ends.
                    s.restart(t1);
                }
                if meas.begin(ctl, t1) {
                    self.log_epoch(&meas);
                    self.mix.ramp_over();
                }
                // The windows that ended before this completion (see `samples`).
                if t1 >= meas.next_sample && (PLAIN || !self.job.engine.file_op()) {
                    self.samples(&clock, &mut meas, t1);
                }
                let (clat, lat) = (clock.to_ns(t1 - t0), clock.to_ns(t1 - start));
                if !PLAIN && self.job.engine.file_op() {
                    // The file's create/stat/unlink is the I/O's time (clat only).
                    let op = self.op_ns.take();
                    self.account_file_op(dir, res, op);
                } else {
                    self.account(dir, res, len, None, clat, lat, 0);
                }
                if self.logs.is_some() {
                    let ms = clock.to_ns(t1.saturating_sub(meas.t0)) / 1_000_000;
                    self.log_io(ms, dir, res, off, None, clat, lat, self.stats.ioprio);
                }
                if !PLAIN && (self.lat.is_some() || self.job.lat.max_ns != [0; 3]) {
                    // One I/O at a time: nothing is ever left in flight to wait for.
                    let step = self.lat_completed(dir, off, len, lat);
                    if step == Step::Fatal {
                        break;
                    }
                    let step = match step {
                        Step::Quiesce => Step::Quiesce,
                        _ => self.lat.as_mut().map_or(Step::Go, |s| s.check(t1)),
                    };
                    match step {
                        Step::Quiesce => {
                            if let Some(s) = self.lat.as_mut() {
                                s.quiesced(t1);
                            }
                        }
                        Step::FinalRun => self.lat_final_run(ctl, &mut meas, t1),
                        Step::Done => break,
                        Step::Go | Step::Fatal => {}
                    }
                }
                if self.after_completions(t1, meas.t0) {
                    ctl.ring();
                }
                self.maybe_publish(&clock, &meas, t1);
            } else {
                self.ramp_io(dir, res);
            }
            let more = !self.work_done(issued, issued_ios);
            if !self.maybe_sync(ctl, warming, None, (dir, off, res), more) {
                break;
            }
            if !PLAIN && dir == Dir::Read && !self.after_read(buf, off, res as u32) {
                break;
            }
            // (A mixed job's pass may end with a read: its writes are read back then too.)
            if !PLAIN
                && (dir == Dir::Write || self.pass_verify)
                && self.backlog_due()
                && !self.verify_backlog(ctl)
            {
                break;
            }
            if !PLAIN && !warming && !self.rate_ok(t1) {
                break;
            }
            now = t1;
            if PLAIN {
                continue;
            }
            if let Some(t) = self.think.as_mut() {
                t.count += 1;
                if t.due(now) {
                    self.think_now(ctl);
                    now = ctl.now();
                }
            }
        }
        self.last_samples(ctl, &mut meas);
        self.ramp_only(&meas);
        let ios: u64 = self.stats.dirs.iter().map(|d| d.ios).sum();
        self.stats.depth_map[0] += ios;
        // fio marks a submission and a completion per I/O for engines without a commit
        // step (psync, sync, mmap). Its null engine has one: at iodepth=1 it completes
        // each I/O in its queue call, which marks neither (fio prints 0% everywhere); at a
        // larger iodepth it commits one I/O at a time and reaps it before the next, one
        // submission and one completion each, as here.
        if !(self.job.engine == EngineKind::Null && self.job.iodepth == 1) {
            self.stats.submit_map[1] += ios;
            self.stats.complete_map[1] += ios;
        }
        // After an error fio's end of do_io reaps what is ready (cleanup_pending_aio): for a
        // synchronous engine none, a reap of 0 marked all the same (`complete: 0=`).
        if self.stats.error.is_some() {
            self.stats.complete_map[0] += 1;
        }
        Ok(meas)
    }

    /// Submits the queued `batch`, stamps its issue time and returns that time. `last`: the
    /// clone issues nothing more; its last batch is not counted in the depth distribution
    /// (fio 3.33 commits it from its final reap, through the engine's own commit, not
    /// `td_io_commit`, which marks the depth).
    #[inline]
    fn submit(
        &mut self,
        engine: &mut Engine,
        batch: &mut Vec<u32>,
        issue: &mut [u64],
        inflight: &mut usize,
        ctl: &RunControl<'_>,
        last: bool,
    ) -> Result<u64, ()> {
        // fio marks the depth before its engine's commit, which may fail.
        if !last {
            self.stats.depth_map[depth_bucket((*inflight + batch.len()) as u32)] +=
                batch.len() as u64;
        }
        if let Err(e) = engine.submit() {
            // What was not submitted is not in flight (the caller counts it as issued, as
            // fio's queue did); fio's commit hook is where its engines submit.
            self.fail_engine("io commit", &e);
            return Err(());
        }
        let t1 = ctl.now();
        *inflight += batch.len();
        self.stats.submit_map[batch_bucket(batch.len())] += 1;
        for &s in batch.iter() {
            issue[s as usize] = t1;
        }
        batch.clear();
        Ok(t1)
    }

    fn run_queued(&mut self, ctl: &mut RunControl<'_>) -> Result<Meas, WorkloadError> {
        let clock = ctl.clock();
        let mut engine = self.engine.take().expect("engine built at start");
        let depth = self.depth as usize;
        let mut free: Vec<u32> = (0..self.depth).rev().collect();
        let mut batch: Vec<u32> = Vec::with_capacity(depth);
        let mut done = vec![Done::default(); depth];
        // Per slot: start, issue time, direction, length, offset.
        let mut start = vec![0u64; depth];
        let mut issue = vec![0u64; depth];
        let mut meta = vec![(Dir::Read, 0u32, 0u64); depth];
        // Per slot: the I/O's priority and its index in the direction's per-priority
        // statistics (`cmdprio_*`; the clone's own is index 0).
        let mut pmeta = vec![(self.stats.ioprio, 0u16); depth];
        let mut inflight = 0usize;
        let mut more = true;
        let mut issued = 0u64;
        let mut issued_ios = 0u64;
        let t_start = ctl.now();
        let epoch = if self.epoch > 0 { self.epoch } else { t_start };
        let mut meas = Meas::start(ctl, epoch, self.warming(ctl, t_start), &self.job);
        if meas.begun {
            self.log_epoch(&meas);
        }
        // When the next paced I/O is due, if the last one waits for its time.
        let mut wait_due: Option<u64> = None;
        // A think is due: nothing more is issued until what is in flight is done.
        let mut think_pending = false;
        // Held back by its flow: with flow_sleep, nothing more is issued until what is in
        // flight is done, then the clone sleeps (fio quiesces first).
        let mut flow_held = false;
        // Set when an I/O, a submit, a reap or a sync failed: the clone ends (its error is in
        // its statistics).
        let mut err = false;
        // A trim waits until nothing is in flight, then is done in the queue call (fio's
        // `FIO_ASYNCIO_SYNC_TRIM`): its offset, length and intended start.
        let mut held_trim: Option<(u64, u32, u64)> = None;
        // fio's queue-depth search lowered the depth (or found it): nothing more is issued
        // until what is in flight has completed; `lat_final` when the final window then
        // begins.
        let mut lat_wait = false;
        let mut lat_final = false;
        // iodepth_low: the queue filled up and drains down to the low-water mark.
        let mut draining = false;
        // serialize_overlap: the slots queued or in flight, and an I/O drawn that overlaps
        // one of them (direction, offset, length, when it was due), held until one
        // completes (fio's FIO_Q_BUSY: the io_u requeued, the queue committed, one reaped).
        let serialize = self.job.serialize_overlap;
        let mut out = vec![false; if serialize { depth } else { 0 }];
        let mut held: Option<(Dir, u64, u32, Option<u64>)> = None;
        let mut busy = false;
        loop {
            if lat_wait && inflight == 0 {
                lat_wait = false;
                let now = ctl.now();
                if std::mem::take(&mut lat_final) {
                    self.lat_final_run(ctl, &mut meas, now);
                } else if let Some(s) = self.lat.as_mut() {
                    s.quiesced(now);
                }
            }
            if inflight == 0
                && let Some((off, len, st)) = held_trim.take()
            {
                if self.queued_trim(ctl, &mut engine, &mut meas, off, len, st) {
                    break;
                }
                continue;
            }
            if think_pending && inflight == 0 {
                self.think_now(ctl);
                think_pending = false;
            }
            // verify_backlog: what was written is checked once nothing is in flight.
            if inflight == 0 && self.backlog_due() {
                // The engine is the worker's while it reads back (nbd reads through it).
                self.engine = Some(engine);
                let ok = self.verify_backlog(ctl);
                engine = self.engine.take().expect("put back above");
                if !ok {
                    break;
                }
            }
            // trim_backlog: a trim waits until nothing is in flight (fio's engines trim
            // in their queue call).
            if inflight == 0 && self.trim_ready() {
                if !self.go(ctl, ctl.now()) || !self.backlog_trim(ctl, true) {
                    break;
                }
                continue;
            }
            if flow_held && (inflight == 0 || self.job.flow_sleep_us == 0) {
                if inflight == 0 {
                    self.flow_pause(ctl);
                }
                flow_held = false;
            }
            if more
                && !draining
                && held_trim.is_none()
                && !free.is_empty()
                && !think_pending
                && !flow_held
                && !lat_wait
                && !self.backlog_due()
                && !self.trim_ready()
            {
                let mut t0 = ctl.now();
                wait_due = None;
                let mut failed = false;
                while let Some(&slot) = free.last() {
                    // fio's null engine takes nothing more until its commit is reaped.
                    if engine.busy() {
                        break;
                    }
                    let (dir, off, len, due) = if let Some(h) = held.take() {
                        h
                    } else {
                        // fio's queue-depth search allows this many in flight.
                        if self
                            .lat
                            .as_ref()
                            .is_some_and(|s| s.full(inflight + batch.len()))
                        {
                            break;
                        }
                        if self.work_done(issued, issued_ios) {
                            more = false;
                            break;
                        }
                        // A pass ended: its verify comes first, once nothing is in flight.
                        if self.pass_verify {
                            break;
                        }
                        if self.pending_dir.is_none() && !self.flow_allows() {
                            flow_held = true;
                            break;
                        }
                        if self.pending_dir.is_none()
                            && self.replay.is_some()
                            && !self.replay_step(ctl)
                        {
                            more = false;
                            break;
                        }
                        if self.replay.is_some() {
                            // (The entry may have waited for its time.)
                            t0 = ctl.now();
                        }
                        let drawn = match self.pending_dir.take() {
                            Some(d) => d,
                            None => self.pick_dir(),
                        };
                        let (dir, due) = self.pacer.choose(drawn, t0);
                        if let Some(d) = due
                            && d > t0
                        {
                            self.pending_dir = Some(drawn);
                            wait_due = Some(d);
                            break;
                        }
                        if !self.go(ctl, t0) {
                            more = false;
                            break;
                        }
                        self.mix.settle(dir as usize);
                        let Some((dir, off, len)) = self.next_io(dir) else {
                            more = false;
                            break;
                        };
                        self.mix.issued(dir as usize);
                        if self.files.is_some() {
                            engine.set_fd(self.raw_fd(), self.cur_file());
                        }
                        self.pacer.issued(dir, len as u64, &mut self.rng);
                        (dir, off, len, due)
                    };
                    // fio's io_u_submit: with another I/O queued or in flight, one that
                    // overlaps it waits (its bytes are not issued yet).
                    if serialize
                        && (0..depth).any(|s| {
                            out[s] && {
                                let (_, l, o) = meta[s];
                                off < o + u64::from(l) && o < off + u64::from(len)
                            }
                        })
                    {
                        held = Some((dir, off, len, due));
                        busy = true;
                        break;
                    }
                    if dir == Dir::Write && self.before_write(ctl, self.bufs.slot(slot), off, len) {
                        issued += len as u64;
                        issued_ios += 1;
                        continue;
                    }
                    if self.iolog.is_some() {
                        self.log_issue(t0, &clock, dir, off, len);
                    }
                    if dir == Dir::Trim {
                        // Issued now, done once what is in flight has completed.
                        held_trim = Some((off, len, self.intended(due).unwrap_or(t0)));
                        issued += len as u64;
                        issued_ios += 1;
                        break;
                    }
                    free.pop();
                    if serialize {
                        out[slot as usize] = true;
                    }
                    let own = self.prio_plan.choose(dir as usize, len, &mut self.rng);
                    engine.queue(slot, dir, self.bufs.slot(slot), off, len, own.map(|p| p.0));
                    pmeta[slot as usize] =
                        own.map_or((self.stats.ioprio, 0), |(p, i)| (u32::from(p), i));
                    start[slot as usize] = self.intended(due).unwrap_or(t0);
                    if let Some(t) = self.think.as_mut()
                        && t.at_issue
                    {
                        t.count += 1;
                        if t.due(t0) {
                            t.arm();
                            think_pending = true;
                        }
                    }
                    meta[slot as usize] = (dir, len, off);
                    issued += len as u64;
                    issued_ios += 1;
                    batch.push(slot);
                    if think_pending {
                        break;
                    }
                    if batch.len() >= self.submit_batch {
                        match self.submit(
                            &mut engine,
                            &mut batch,
                            &mut issue,
                            &mut inflight,
                            ctl,
                            false,
                        ) {
                            Ok(t1) => t0 = t1,
                            Err(()) => {
                                // fio counted the batch issued as it queued it.
                                for &s in batch.iter() {
                                    self.stats.dirs[meta[s as usize].0 as usize].ios += 1;
                                }
                                batch.clear();
                                err = true;
                                failed = true;
                                break;
                            }
                        }
                    }
                }
                if !failed
                    && !batch.is_empty()
                    && self
                        .submit(
                            &mut engine,
                            &mut batch,
                            &mut issue,
                            &mut inflight,
                            ctl,
                            !more,
                        )
                        .is_err()
                {
                    // fio counted the batch issued as it queued it.
                    for &s in batch.iter() {
                        self.stats.dirs[meta[s as usize].0 as usize].ios += 1;
                    }
                    batch.clear();
                    err = true;
                    failed = true;
                }
                if failed {
                    break;
                }
                if !lat_wait && self.lat.is_some() && !self.warming(ctl, t0) {
                    self.lat_step(ctl.now(), &mut lat_wait, &mut lat_final, &mut more);
                }
            }
            if inflight == 0 {
                // Nothing in flight uses them now.
                self.deferred_close.clear();
                if think_pending
                    || flow_held
                    || held_trim.is_some()
                    || self.backlog_due()
                    || self.trim_ready()
                    || lat_wait
                {
                    continue;
                }
                if !more || ctl.aborted() {
                    break;
                }
                if let Some(d) = wait_due
                    && !self.wait_for(ctl, d)
                {
                    break;
                }
                continue;
            }
            // Once nothing more is issued, fio reaps all that is in flight in one call (with
            // a minimum of 0 its libaio waits for none however many it is asked for).
            let mut want = if more || self.complete_min == 0 {
                self.complete_min.min(inflight)
            } else {
                inflight
            };
            // An I/O held for an overlap: at least one completion, and the queue counts as
            // full (fio's busy queue).
            let was_busy = std::mem::take(&mut busy);
            if was_busy {
                want = want.max(1);
            }
            let full = free.is_empty() || was_busy;
            // A paced job with a free slot waits for completions only until its next I/O is
            // due: blocking longer would issue it late (fio sleeps between issues the same way).
            let timeout = wait_due
                .filter(|_| more && !free.is_empty() && !think_pending && !draining)
                .map(|d| {
                    let now = ctl.now();
                    clock.to_ns(d.saturating_sub(now))
                });
            // fio's null engine hands back all it committed in one reap, whatever the
            // maximum, and is reaped for at least one.
            let (want, max) = if engine.reaps_all() {
                (want.max(1), depth)
            } else {
                (want, self.complete_max.max(want))
            };
            let n = match engine.reap_within(want, &mut done[..max], timeout) {
                Ok(n) => n,
                Err(e) => {
                    self.fail_engine("io getevents", &e);
                    break;
                }
            };
            let t2 = ctl.now();
            if n > 0 {
                self.stats.complete_map[batch_bucket(n)] += 1;
            }
            let warming = self.warming(ctl, t2);
            if !warming {
                if !meas.begun
                    && let Some(s) = self.lat.as_mut()
                {
                    // fio's search starts over when ramp time ends.
                    s.restart(t2);
                }
                if meas.begin(ctl, t2) {
                    self.log_epoch(&meas);
                    self.mix.ramp_over();
                }
                // The windows that ended before these completions (see `samples`).
                if n > 0 && t2 >= meas.next_sample {
                    self.samples(&clock, &mut meas, t2);
                }
            }
            for d in &done[..n] {
                let s = d.slot as usize;
                inflight -= 1;
                free.push(d.slot);
                if serialize {
                    out[s] = false;
                }
                let (dir, len, off) = meta[s];
                if d.res < 0 {
                    if self.fail(dir, off, len, d.res) {
                        err = true;
                    }
                    continue;
                }
                if !warming {
                    ctl.record(start[s], t2);
                    Self::count(ctl, dir, d.res);
                    let slat = clock.to_ns(issue[s].saturating_sub(start[s]));
                    let clat = clock.to_ns(t2.saturating_sub(issue[s]));
                    let lat = clock.to_ns(t2.saturating_sub(start[s]));
                    let (ioprio, pidx) = pmeta[s];
                    // A synchronous engine behind io_submit_mode=offload has no slat (fio's).
                    let slat = (!self.job.sync_io()).then_some(slat);
                    self.account(dir, d.res, len, slat, clat, lat, pidx);
                    if self.logs.is_some() {
                        let ms = clock.to_ns(t2.saturating_sub(meas.t0)) / 1_000_000;
                        self.log_io(ms, dir, d.res, off, slat, clat, lat, ioprio);
                    }
                    if self.lat.is_some() || self.job.lat.max_ns != [0; 3] {
                        match self.lat_completed(dir, off, len, lat) {
                            Step::Fatal => err = true,
                            Step::Quiesce => lat_wait = true,
                            _ => {}
                        }
                    }
                } else {
                    self.ramp_io(dir, d.res);
                }
                // (An I/O still in flight or one still to issue follows this one.)
                let next = inflight > 0 || !self.work_done(issued, issued_ios);
                if !err
                    && !self.maybe_sync(ctl, warming, Some(&mut engine), (dir, off, d.res), next)
                {
                    err = true;
                }
                if dir == Dir::Read
                    && !err
                    && !self.after_read(self.bufs.slot(d.slot), off, d.res as u32)
                {
                    err = true;
                }
                if let Some(t) = self.think.as_mut()
                    && !t.at_issue
                {
                    t.count += 1;
                }
            }
            if let Some(t) = self.think.as_mut()
                && !think_pending
                && t.due(t2)
            {
                t.arm();
                think_pending = true;
            }
            if !warming && n > 0 {
                if self.after_completions(t2, meas.t0) {
                    ctl.ring();
                }
                self.maybe_publish(&clock, &meas, t2);
            }
            if !warming && n > 0 && !err && !self.rate_ok(t2) {
                err = true;
            }
            if !warming && !err && !lat_wait && self.lat.is_some() {
                self.lat_step(t2, &mut lat_wait, &mut lat_final, &mut more);
            }
            draining = (draining || full) && inflight > self.depth_low;
            if err || ctl.aborted() {
                break;
            }
        }
        // What is still in flight when the clone stops is reaped (buffers must outlive the
        // kernel's use of them) and counted, as fio's end of do_io: after Ctrl-C it reaps
        // it all; after an error (its cleanup_pending_aio) it first takes whatever is ready
        // without waiting — a reap marked in the completion map even when it finds none,
        // for every engine (`complete: 0=`) — then the rest. Each was issued (fio counts an
        // I/O as it queues it); one that succeeded is accounted as any completion.
        let mut first = self.stats.error.is_some();
        while inflight > 0 || first {
            let r = if first {
                engine.reap_within(0, &mut done, Some(0))
            } else {
                engine.reap(inflight, &mut done)
            };
            let Ok(n) = r else { break };
            if n > 0 || first {
                self.stats.complete_map[batch_bucket(n)] += 1;
            }
            first = false;
            let t2 = ctl.now();
            let warming = self.warming(ctl, t2);
            for d in &done[..n] {
                let s = d.slot as usize;
                inflight -= 1;
                let (dir, len, off) = meta[s];
                if d.res < 0 {
                    self.stats.dirs[dir as usize].ios += 1;
                } else if warming {
                    self.ramp_io(dir, d.res);
                } else {
                    Self::count(ctl, dir, d.res);
                    let slat = clock.to_ns(issue[s].saturating_sub(start[s]));
                    let clat = clock.to_ns(t2.saturating_sub(issue[s]));
                    let lat = clock.to_ns(t2.saturating_sub(start[s]));
                    let slat = (!self.job.sync_io()).then_some(slat);
                    let (ioprio, pidx) = pmeta[s];
                    self.account(dir, d.res, len, slat, clat, lat, pidx);
                    if self.logs.is_some() {
                        let ms = clock.to_ns(t2.saturating_sub(meas.t0)) / 1_000_000;
                        self.log_io(ms, dir, d.res, off, slat, clat, lat, ioprio);
                    }
                }
            }
        }
        // Back in its place, so it is torn down after the run's end is stamped: io_destroy
        // waits for an RCU grace period (about 30 ms here) that is not the job's runtime.
        self.engine = Some(engine);
        self.last_samples(ctl, &mut meas);
        self.ramp_only(&meas);
        Ok(meas)
    }
}

impl FioWorker {
    /// A queue engine's trim, done in the queue call once nothing is in flight (fio 3.33's
    /// libaio and io_uring: `do_io_u_trim`, one submission and one completion marked),
    /// then accounted as a completion; true when the clone ends with its error.
    fn queued_trim(
        &mut self,
        ctl: &mut RunControl<'_>,
        engine: &mut Engine,
        meas: &mut Meas,
        off: u64,
        len: u32,
        start: u64,
    ) -> bool {
        let clock = ctl.clock();
        let t0 = ctl.now();
        let res = if self.zbd.is_some() {
            // zonemode=zbd: the trim was the zone's reset (fio's `zbd_do_io_u_trim`).
            i64::from(len)
        } else {
            engine.trim_now(off, len)
        };
        let t1 = ctl.now();
        self.stats.depth_map[0] += 1;
        self.stats.submit_map[1] += 1;
        self.stats.complete_map[1] += 1;
        if res < 0 {
            return self.fail(Dir::Trim, off, len, res);
        }
        if self.warming(ctl, t1) {
            self.ramp_io(Dir::Trim, res);
            return false;
        }
        if meas.begin(ctl, t1) {
            self.log_epoch(meas);
        }
        if t1 >= meas.next_sample {
            self.samples(&clock, meas, t1);
        }
        ctl.record(start, t1);
        Self::count(ctl, Dir::Trim, res);
        let slat = clock.to_ns(t0.saturating_sub(start));
        let (clat, lat) = (clock.to_ns(t1 - t0), clock.to_ns(t1.saturating_sub(start)));
        self.account(Dir::Trim, res, len, Some(slat), clat, lat, 0);
        if self.logs.is_some() {
            let ms = clock.to_ns(t1.saturating_sub(meas.t0)) / 1_000_000;
            self.log_io(
                ms,
                Dir::Trim,
                res,
                off,
                Some(slat),
                clat,
                lat,
                self.stats.ioprio,
            );
        }
        if self.after_completions(t1, meas.t0) {
            ctl.ring();
        }
        self.maybe_publish(&clock, meas, t1);
        !self.rate_ok(t1)
    }
}

/// One sample schedule (clock ticks): the last sample, the next, the window.
struct Sched {
    last: u64,
    next: u64,
    ticks: u64,
}

impl Sched {
    fn new(ctl: &RunControl<'_>, now: u64, ms: u64) -> Sched {
        let ticks = ctl.clock().from_ns(ms.max(1) * 1_000_000);
        Sched {
            last: now,
            next: now + ticks,
            ticks,
        }
    }

    fn restart(&mut self, now: u64) {
        self.last = now;
        self.next = now + self.ticks;
    }
}

/// When this clone's measured time began and its sample schedules.
struct Meas {
    begun: bool,
    t0: u64,
    /// The bandwidth samples (fio's `bwavgtime`, or a windowed bandwidth log's
    /// `log_avg_msec`) and the IOPS ones (`iopsavgtime`), each on its own schedule.
    bw: Sched,
    iops: Sched,
    /// The earlier of the two next samples.
    next_sample: u64,
    ru0: (u64, u64, u64, u64, u64),
    /// `log_unix_epoch`/`log_alternate_epoch`: the clock whose time at the measured start
    /// the log rows add.
    epoch_clock: Option<i32>,
}

impl Meas {
    fn start(ctl: &RunControl<'_>, now: u64, warming: bool, job: &JobSpec) -> Meas {
        let bw = Sched::new(ctl, now, job.logs.bw_sample_msec());
        let iops = Sched::new(ctl, now, job.logs.iops_sample_msec());
        let mut m = Meas {
            begun: false,
            t0: now,
            next_sample: bw.next.min(iops.next),
            bw,
            iops,
            ru0: rusage(),
            epoch_clock: job.logs.epoch.then_some(job.logs.clock_id),
        };
        if !warming {
            m.begun = true;
        }
        m
    }
    /// Marks the start of measurement (the end of ramp time) at `now`, once; true when it
    /// began now.
    #[inline(always)]
    fn begin(&mut self, _ctl: &RunControl<'_>, now: u64) -> bool {
        if self.begun {
            return false;
        }
        self.begun = true;
        self.t0 = now;
        self.bw.restart(now);
        self.iops.restart(now);
        self.next_sample = self.bw.next.min(self.iops.next);
        self.ru0 = rusage();
        true
    }

    /// The time the log rows add (ms since the epoch of `log_alternate_epoch_clock_id`),
    /// read now, at the measured start, as fio reads it when it resets its epoch.
    fn epoch_base(&self) -> Option<u64> {
        self.epoch_clock
            .map(|id| super::logs::epoch_ms(id).unwrap_or(0))
    }
}

impl LoopWorker for FioWorker {
    /// Waits for the clone's turn (stonewall, wait_for, startdelay: `sequence.rs`), runs
    /// it with its own `ramp_time` and `runtime`, and tells the others it ended.
    fn run(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        let clone = self.shared.threads[self.tid].1;
        if self.job.layout_failure(clone).is_some() {
            // Its file could not be laid out: fio reaps the clone at its setup, with the
            // layout's error, before any job starts (it never waits for its turn, and its
            // end stops nothing: no exitall, no exitall_on_error).
            if let Some((errno, func, detail)) = self.open_failed.take() {
                self.set_error(errno, &func, detail);
                // fio's parent said so on stderr as it laid the files out (`layout.rs`);
                // with create_serialize=0 the clone's own line comes with the report.
                if let Some(e) = self
                    .stats
                    .error
                    .as_mut()
                    .filter(|_| self.job.create_serialize)
                {
                    e.setup_clones = 1;
                }
            }
            if self.job.flow > 0 {
                self.shared.flows.leave(self.job.flow_id, self.job.flow, 0);
            }
            self.hand_over();
            self.shared.live.finish(self.tid, true);
            return Ok(());
        }
        if self.shared.seq.wait_turn(self.tid, ctl) == Turn::Never {
            // fio still lists a job that never started (JSON, all zero); it prints no block.
            if self.job.flow > 0 {
                self.shared.flows.leave(self.job.flow_id, self.job.flow, 0);
            }
            self.hand_over();
            self.shared.live.finish(self.tid, false);
            return Ok(());
        }
        self.shared.snaps.started[self.tid].store(true, std::sync::atomic::Ordering::Relaxed);
        let live = &self.shared.live;
        if live.on() {
            live.set_state(
                self.tid,
                if self.job.ramp_time_s > 0.0 {
                    super::status::RAMP
                } else {
                    super::status::running_state(&self.job)
                },
            );
        }
        let r = self.run_turn(ctl);
        if let Some(mut l) = self.iolog.take() {
            let us = ctl.clock().to_ns(ctl.now().saturating_sub(l.t0)) / 1000;
            // The files still open, in order (fio's close_files): the current one's
            // descriptor is the worker's.
            match self.files.as_ref() {
                None if self._fd.is_some() => l.w.file(us, &self.path, "close"),
                None if !l.fileless.as_os_str().is_empty() => {
                    let name = l.fileless.clone();
                    l.w.file(us, &name, "close");
                }
                None => {}
                Some(fs) => {
                    for (k, s) in fs.slots.iter().enumerate() {
                        if fs.cur == Some(k) && self._fd.is_some() {
                            l.w.file(us, &self.path, "close");
                        } else if fs.cur != Some(k) && s.fd.is_some() {
                            l.w.file(us, &s.path, "close");
                        }
                    }
                }
            }
            if let Err(e) = l.w.finish() {
                eprintln!("fio: job '{}': {e}", self.job.name);
            }
        }
        // The net engine's end: a UDP writer's close message, the socket closed (the
        // receiver sees its end), a unix socket file it made removed.
        if let Some(Engine::Net(n)) = self.engine.as_mut() {
            n.finish();
        }
        self.close_files();
        if self.job.flow > 0 {
            self.shared
                .flows
                .leave(self.job.flow_id, self.job.flow, self.flow_count);
        }
        if self.job.unlink {
            self.unlink_file();
        }
        // A clone that ended with an error (fio's `err=`) stops only what `exitall_on_error`
        // names; one that could not run at all (its engine) ends the run.
        self.shared.seq.finish(self.tid, r.is_err() || self.failed);
        // Clones it told to stop (exitall, exit_what) may be asleep.
        ctl.ring();
        self.shared.live.finish(self.tid, r.is_err() || self.failed);
        r
    }
}

impl FioWorker {
    /// `--status-interval`: when a reader asked (a new epoch), a copy of the statistics so
    /// far goes into this clone's slot, with its run time and CPU use up to `now`.
    #[inline(always)]
    fn maybe_publish(&mut self, clock: &hostbench_core::clock::Clock, meas: &Meas, now: u64) {
        let snaps = &self.shared.snaps;
        if !snaps.on {
            return;
        }
        let e = snaps.epoch.load(std::sync::atomic::Ordering::Relaxed);
        if e == self.snap_epoch {
            return;
        }
        self.snap_epoch = e;
        let mut s = self.stats.clone();
        if meas.begun {
            let ru = rusage();
            s.runtime_ns = clock.to_ns(now.saturating_sub(meas.t0));
            s.usr_ns = ru.0.saturating_sub(meas.ru0.0);
            s.sys_ns = ru.1.saturating_sub(meas.ru0.1);
            s.ctx = ru.2.saturating_sub(meas.ru0.2);
            s.majf = ru.3.saturating_sub(meas.ru0.3);
            s.minf = ru.4.saturating_sub(meas.ru0.4);
        }
        *snaps.slots[self.tid]
            .lock()
            .unwrap_or_else(|x| x.into_inner()) = (e, Some(s));
    }

    /// The clone's statistics into the run's shared results (once, at its end).
    fn hand_over(&mut self) {
        let mut res = self
            .shared
            .results
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        self.failed = self.stats.error.is_some();
        if let Some(s) = &self.lat {
            self.stats.lat_depth = s.depth();
        }
        res[self.tid] = Some(std::mem::take(&mut self.stats));
    }

    /// fio's `unlink`: the job's file goes when the clone ends (a regular file only, never
    /// through a symlink; another clone of a shared file may have removed it already).
    fn unlink_file(&self) {
        let others = self
            .files
            .iter()
            .flat_map(|f| f.slots.iter().map(|s| &s.path));
        for p in std::iter::once(&self.path).chain(others) {
            if p.as_os_str().is_empty() {
                continue;
            }
            if std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()) {
                let _ = std::fs::remove_file(p);
            }
        }
    }

    /// fio opens a clone's file when the clone starts (after the jobs before its stonewall
    /// ended); hostbench opened it when the run was set up. A job that ran in between may
    /// have removed the file (`unlink=1`) or put another one at its name: the clone then
    /// opens what the name holds now, as the job opens it (a writer makes it again, with
    /// fio's O_CREAT), onto the descriptor its engine uses; or its open fails as fio's does
    /// (`err=2, func=open(f)`). With `create_serialize=0` a file gone is laid out again
    /// first, as fio's job lays its own out when it starts. A clone of several files opens
    /// each when it picks it.
    fn open_again_if_replaced(&mut self) -> Result<(), (i32, String, String)> {
        use std::os::unix::fs::MetadataExt;
        let Some(fd) = &self._fd else {
            return Ok(());
        };
        if self.files.is_some() || self.path.as_os_str().is_empty() {
            return Ok(());
        }
        // SAFETY: fstat of a descriptor we own into a zeroed stat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
            return Ok(());
        }
        if std::fs::symlink_metadata(&self.path)
            .is_ok_and(|m| m.dev() == st.st_dev && m.ino() == st.st_ino)
        {
            return Ok(());
        }
        let gone = std::fs::symlink_metadata(&self.path)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
        if gone && !self.job.create_serialize && !self.job.create_on_open {
            // create_serialize=0: fio's job lays its file out as it starts (the run's
            // interrupt stops it as it stops the layout before the run).
            let need = self.job.offset + self.size;
            match super::layout::lay_out(
                &self.job,
                self.shared.threads[self.tid].1,
                &self.path,
                need,
                0,
                None,
                None,
            ) {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return Err(e),
                Err(e) => return Err((libc::EIO, "extend_file".to_string(), e.to_string())),
            }
        }
        let f =
            open_job_file(&self.job, &self.path, true).map_err(|e| open_failure(&self.path, &e))?;
        if self.job.engine == EngineKind::Mmap {
            // The mapping is of the file opened before: it is made again on this one, which
            // must hold the region (a mapping past the file's end faults on its use).
            let end = self.job.offset + self.size;
            let len = f.metadata().map_or(0, |m| m.len());
            if len < end {
                let shown = self.path.strip_prefix(".").unwrap_or(&self.path).display();
                return Err((
                    libc::EINVAL,
                    "mmap".to_string(),
                    format!(
                        "job '{}': {shown} was made again by an earlier job with {len} bytes, \
                         less than the {end} the mapping of its region needs",
                        self.job.name
                    ),
                ));
            }
            self.engine = None;
        }
        // SAFETY: both descriptors are open and ours; dup3 replaces the clone's atomically
        // (its number stays the one its engine was built on).
        if unsafe { libc::dup3(f.as_raw_fd(), fd.as_raw_fd(), libc::O_CLOEXEC) } < 0 {
            let e = std::io::Error::last_os_error();
            return Err(open_failure(&self.path, &e));
        }
        drop(f);
        advise_access(fd, &self.job, self.job.offset, self.size);
        Ok(())
    }

    /// fio's `pre_read`: before the clone's time starts, each of its files (regular files
    /// and block devices) is opened, its region read once with `read` in blocks of the
    /// largest read size from an `lseek` to its start, and closed, so the region is in the
    /// page cache. A short read ends the clone with EIO (`pre_read`), as fio; false then.
    fn pre_read(&mut self) -> bool {
        if self.job.engine.fileless() || self.job.engine.file_op() || self.job.engine.no_io() {
            return true;
        }
        let regions: Vec<(PathBuf, u64, u64)> = match &self.files {
            Some(fs) => fs
                .slots
                .iter()
                .enumerate()
                .map(|(i, s)| (s.path.clone(), self.slot_offset(i), s.size))
                .collect(),
            None => vec![(self.path.clone(), self.job.offset, self.size)],
        };
        let bs = self.job.bsz[0].max.max(self.job.bs_read).max(1) as usize;
        let mut buf = vec![0u8; bs];
        for (path, off, len) in regions {
            use std::io::{Read, Seek, SeekFrom};
            use std::os::unix::fs::FileTypeExt;
            if std::fs::metadata(&path).is_ok_and(|m| m.file_type().is_char_device()) {
                continue;
            }
            let mut f = match open_job_file(&self.job, &path, false) {
                Ok(f) => f,
                Err(e) => {
                    let errno = e.raw_os_error().unwrap_or(libc::EIO);
                    let func = format!("open({})", path.display());
                    self.set_error(
                        errno,
                        &func,
                        format!("cannot pre-read {}: {e}", path.display()),
                    );
                    return false;
                }
            };
            if let Err(e) = f.seek(SeekFrom::Start(off)) {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.set_error(errno, "lseek", format!("pre-read {}: {e}", path.display()));
                return false;
            }
            let mut left = len;
            while left > 0 {
                let n = (left as usize).min(bs);
                match f.read(&mut buf[..n]) {
                    Ok(r) if r == n => left -= n as u64,
                    _ => {
                        self.set_error(
                            libc::EIO,
                            "pre_read",
                            format!(
                                "pre-read {}: short read at {}",
                                path.display(),
                                off + len - left
                            ),
                        );
                        return false;
                    }
                }
            }
        }
        true
    }

    /// With `invalidate` (fio's default) on a buffered job: drops the region's pages from
    /// the page cache (`POSIX_FADV_DONTNEED`), at the job's start and at each new pass.
    fn drop_cache(&self) {
        if self.job.invalidate
            && !self.job.direct
            && let Some(f) = &self._fd
        {
            // SAFETY: advisory call on our fd.
            unsafe {
                libc::posix_fadvise(
                    f.as_raw_fd(),
                    self.job.offset as i64,
                    self.size as i64,
                    libc::POSIX_FADV_DONTNEED,
                );
            }
        }
    }

    fn run_turn(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        let clock = ctl.clock();
        // The histograms' pages are touched before the clone's starting rusage, as fio's
        // are: minf counts the job's faults, not the first use of each bucket page.
        for d in &mut self.stats.dirs {
            d.clat_plat.prefault();
            d.lat_plat.prefault();
            d.slat_plat.prefault();
            for (_, _, p) in &mut d.prios {
                p.prefault();
            }
        }
        self.stats.sync_plat.prefault();
        // The net engine connects (or accepts, or waits for a UDP writer) first: as fio's
        // the clone's statistics and its time start once connected.
        if let Some(Engine::Net(n)) = self.engine.as_mut() {
            let (shared, tid) = (&self.shared, self.tid);
            let c = &*ctl;
            let stop = || c.aborted() || c.now() >= c.deadline() || shared.seq.told_to_stop(tid);
            match n.open(&stop) {
                Ok(true) => {}
                Ok(false) => {
                    self.hand_over();
                    return Ok(());
                }
                Err((errno, func, why)) => {
                    self.set_error(errno, func, format!("job '{}': {why}", self.job.name));
                    self.hand_over();
                    return Ok(());
                }
            }
        }
        if self.open_failed.is_none() {
            self.open_failed = self.open_again_if_replaced().err();
        }
        if let Some((errno, func, detail)) = self.open_failed.take() {
            self.set_error(errno, &func, detail);
            self.hand_over();
            return Ok(());
        }
        // fio sets the clone's affinity and I/O priority first, in its own thread.
        if let Err((errno, func, detail)) = self.job.process.apply_to_this_thread(self.tid) {
            self.set_error(errno, func, format!("job '{}': {detail}", self.job.name));
            self.hand_over();
            return Ok(());
        }
        // Then, as fio, the I/O scheduler of the disks under the clone's files.
        let clone = self.shared.threads[self.tid].1;
        if let Err((errno, func, detail)) =
            super::iosched::switch(&self.job, clone, &self.shared.iosched)
        {
            self.set_error(errno, func, format!("job '{}': {detail}", self.job.name));
            self.hand_over();
            return Ok(());
        }
        // exec_prerun once the files are there, before the clone's time starts; when it
        // fails the clone ends there, with no error, as fio's `goto err` without one.
        if let Some(cmd) = &self.job.process.prerun
            && !super::process::exec_string(&self.job.name, cmd, "prerun")
        {
            self.hand_over();
            return Ok(());
        }
        if self.job.pre_read && !self.pre_read() {
            self.hand_over();
            return Ok(());
        }
        // The clone's own time, from its start: ramp_time, then runtime.
        let t_job = ctl.now();
        if let Some(r) = self.replay.as_mut() {
            (r.start, r.last_issue) = (t_job, t_job);
        }
        if let Some(p) = self.job.write_iolog.clone() {
            // fio's init_iolog: the log's header and an `add` of each file, then the
            // file's `open` (hostbench opened it before the clone's start).
            match super::iolog::Writer::open(&p) {
                Ok(w) => {
                    let clone = self.shared.threads[self.tid].1;
                    let mut l = IoLogOut {
                        w,
                        clock,
                        t0: t_job,
                        last_off: 0,
                        fileless: if self.job.engine.fileless() {
                            self.job.file_path(clone)
                        } else {
                            PathBuf::new()
                        },
                    };
                    for k in 0..self.job.nfiles() {
                        l.w.file(0, &self.job.file_path_k(clone, k), "add");
                    }
                    if self.files.is_none() {
                        let us = clock.to_ns(ctl.now().saturating_sub(t_job)) / 1000;
                        let name = l.name(&self.path).to_path_buf();
                        l.w.file(us, &name, "open");
                    }
                    self.iolog = Some(Box::new(l));
                }
                Err(e) => {
                    self.set_error(
                        libc::EINVAL,
                        "write_iolog",
                        format!("job '{}': {e}", self.job.name),
                    );
                    self.hand_over();
                    return Ok(());
                }
            }
        }
        // verify_async_cpus: fio 3.33's verify threads set the affinity of the job's own
        // thread (`fio_setaffinity(td->pid, ...)`), not theirs, once they start; hostbench
        // verifies in the job's thread, so that thread runs on those CPUs, as fio's does.
        if self.job.verify.async_threads > 0
            && let Some(cpus) = &self.job.verify.async_cpus
            && super::process::set_affinity(cpus).is_err()
        {
            eprintln!("fio: failed setting verify thread affinity");
        }
        self.pass_bytes = 0;
        self.pattern.seed(&mut self.rng);
        if let Some(fs) = self.files.as_mut() {
            for s in &mut fs.slots {
                s.pattern.seed(&mut self.rng);
            }
        }
        let tps = clock.from_ns(1_000_000_000) as f64;
        self.tps = tps as u64;
        self.pacer = Pacer::new(&self.job, self.read_pct, tps);
        self.lat = self
            .job
            .lat
            .active()
            .then(|| Search::new(&self.job.lat, self.job.iodepth, ctl.now(), self.tps));
        self.think = Think::new(&self.job, t_job, tps);
        self.pending_dir = None;
        let fixed = |b: &super::job::BlockSizes| if b.min == b.max { b.min } else { 0 };
        self.logs = Logger::open(
            &self.job.logs,
            &self.job.name,
            self.tid,
            [
                fixed(&self.job.bsz[0]),
                fixed(&self.job.bsz[1]),
                fixed(&self.job.bsz[2]),
            ],
        )
        .map_err(|e| WorkloadError::environment(format!("job '{}': {e}", self.job.name)))?;
        // (A sync engine of several files is each file's own, built when it opens.)
        let per_file =
            self.files.is_some() && self.job.engine.is_sync() && !self.job.engine.fileless();
        if self.engine.is_none() && !per_file {
            let (k, fd, depth, region) = self.engine_args;
            // registerfiles with several files: the ring registers them all at once once
            // they are open (below), as fio's does.
            let register_all = k == EngineKind::IoUring
                && self.job.eng.uring.registerfiles
                && self.files.is_some();
            let e = if k == EngineKind::Nbd {
                self.nbd_connect(depth)
            } else if self.job.offload {
                Engine::offload(k, fd, depth, region)
            } else if k == EngineKind::IoUring {
                let mut o = self.job.eng.uring;
                o.registerfiles &= !register_all;
                o.rw_flags = self.pv2.flags as u32;
                Engine::uring(fd, depth, o, Some((&self.bufs, depth)))
            } else {
                Engine::with_pv2(k, fd, depth, region, &self.pv2)
            };
            let mut e =
                e.map_err(|e| WorkloadError::environment(format!("job '{}': {e}", self.job.name)))?;
            e.set_userspace_reap(self.job.eng.userspace_reap);
            e.set_default_ioprio(self.stats.ioprio as u16);
            if register_all {
                self.open_registered(&mut e)?;
            }
            self.engine = Some(e);
        }
        // The rate's clock starts once the engine is ready, as fio's epoch is taken after its
        // `td_io_init`: started before, an offload pool's threads slow to start under load
        // made the first I/Os "late" and the job burst to catch up (1236 IOPS measured for
        // rate_iops=1000).
        // fio's epoch (set_epoch_time): after the engine's init, before the file's open
        // in the first I/O's path. The runtime, the ramp time and the sample windows count
        // from it (counted from before the engine's setup and the file's open, as before,
        // the job ran up to a millisecond short of fio's and missed the last window: 5
        // bandwidth samples in a 3 s run for fio's 6).
        // When the run's own limit (jobs that start together: the gate's opening plus their
        // common runtime) comes first, the clone's time counts from where that limit puts
        // it, so its runtime is whole and its last window closes.
        let mut epoch = ctl.now();
        let ramp = clock.from_ns((self.job.ramp_time_s * 1e9) as u64);
        if let Some(rt) = self.job.runtime_s {
            let span = ramp + clock.from_ns((rt * 1e9) as u64);
            ctl.end_at(epoch + span);
            epoch = epoch.min(ctl.deadline().saturating_sub(span));
        }
        self.epoch = epoch;
        if self.job.ramp_time_s > 0.0 {
            self.ramp_end = epoch + ramp;
        }
        self.min_rate = MinRate::new(&self.job, self.ramp_end.max(epoch), tps);
        // fio drops the region's cached pages when the job opens its file, at its start
        // (so a read phase after a write phase reads the device, not the cache).
        self.drop_cache();
        self.pacer.start(ctl.now());
        let r = if self.job.sync_io() && !self.job.offload {
            if self.plain() {
                self.run_sync::<true>(ctl)
            } else {
                self.run_sync::<false>(ctl)
            }
        } else {
            self.run_queued(ctl)
        };
        let meas = r?;
        // fio's end_fsync, and fsync_on_close for a job that writes (fio syncs the files
        // it closes then: once each, the end-of-job sync standing for the close's).
        // (Not after an error: fio's end of do_io syncs only a clone without one.)
        if self.stats.error.is_none()
            && (self.job.end_fsync
                || (self.job.fsync_on_close && self.job.rw.writes(self.job.rwmixread)))
        {
            // Every file still open, in the clone's order (the current one's descriptor is
            // the worker's), as fio syncs them.
            let fds: Vec<i32> = match &self.files {
                None => self._fd.iter().map(|f| f.as_raw_fd()).collect(),
                Some(fs) => (0..fs.slots.len())
                    .filter_map(|i| {
                        if fs.cur == Some(i) {
                            self._fd.as_ref()
                        } else {
                            fs.slots[i].fd.as_ref()
                        }
                    })
                    .map(|f| f.as_raw_fd())
                    .collect(),
            };
            for fd in fds {
                // SAFETY: syncing our own fd.
                unsafe { libc::fsync(fd) };
            }
            if let Some(Engine::Nbd(x)) = self.engine.as_mut()
                && x.can_flush()
            {
                let _ = x.flush();
            }
        }
        // fio's note when the write phase leaves entries on the trim list (trim_percentage
        // without trim_backlog, or a log length that never came to a multiple of it).
        if let Some(v) = self.verify.as_ref()
            && v.trim_entries() > 0
        {
            eprintln!("fio: {} trim entries leaked?", v.trim_entries());
        }
        // fio's verify phase: what was written is read back and checked.
        // (A job verifying after each pass has read its last one back unless it ended
        // inside it.)
        if self.stats.error.is_none()
            && self
                .verify
                .as_ref()
                .is_some_and(|v| v.phase && !(self.verify_each_pass && v.pending() == 0))
        {
            self.pass_verify = false;
            self.verify_pass(ctl, None, true);
        }
        self.save_verify_state();
        let t_end = ctl.now();
        let ru1 = rusage();
        if self.job.ss.dur > 0 {
            let tps = self.tps;
            let ring = self
                .ss
                .take()
                .or_else(|| Ring::new(&self.shared.ss, self.tid, &self.job.ss, meas.t0, tps));
            self.stats.ss = ring.map(|r| r.result());
        }
        if let Some(mut l) = self.logs.take()
            && let Some(e) = l.finish(clock.to_ns(t_end.saturating_sub(meas.t0)) / 1_000_000)
        {
            self.set_error(libc::EIO, "write log", e);
        }
        // (A clone that never got past its ramp time reports it, as fio does.)
        if meas.begun || self.stats.dirs.iter().any(|d| d.ios > 0) {
            self.stats.runtime_ns = clock.to_ns(t_end.saturating_sub(meas.t0));
            self.stats.usr_ns = ru1.0.saturating_sub(meas.ru0.0);
            self.stats.sys_ns = ru1.1.saturating_sub(meas.ru0.1);
            self.stats.ctx = ru1.2.saturating_sub(meas.ru0.2);
            self.stats.majf = ru1.3.saturating_sub(meas.ru0.3);
            self.stats.minf = ru1.4.saturating_sub(meas.ru0.4);
        }
        // exec_postrun after the logs are written; its status is not looked at (fio's).
        if let Some(cmd) = &self.job.process.postrun {
            super::process::exec_string(&self.job.name, cmd, "postrun");
        }
        self.hand_over();
        Ok(())
    }
}

/// The length of the open file `fd` (a block device's size), without moving its position:
/// the `sync` engine reads and writes from where the open left it (as fio's, which never
/// seeks to learn a size), so a device's `lseek` to its end is undone.
fn file_end(fd: i32) -> i64 {
    // SAFETY: fstat into a zeroed stat of our own, on a descriptor the caller owns.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return -1;
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFBLK {
        return st.st_size;
    }
    // SAFETY: lseek on the caller's descriptor; nothing else uses it yet.
    unsafe {
        let end = libc::lseek(fd, 0, libc::SEEK_END);
        libc::lseek(fd, 0, libc::SEEK_SET);
        end
    }
}
