//! One child's I/O: the gate the children meet at around every phase, opening the file
//! for a phase, and the timed loop of I/O calls with the stonewall.

use super::phases::{Access, Api, Phase, permutation, record_at};
use super::{ChildStat, PVECMAX, PhaseResult, Shared};
use crate::disk::files;
use hostbench_core::rand::Rng;
use hostbench_core::recorder::Counter;
use hostbench_core::runner::RunControl;
use hostbench_core::workload::*;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::Ordering::*;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Children meet here before and after every phase. The last to arrive runs a closure (reset
/// the stonewall; aggregate the phase) and notes the release time. A child that leaves the
/// run (limit, Ctrl-C, error) breaks the gate so no one waits for it forever.
pub(super) struct Gate {
    pub(super) n: usize,
    pub(super) st: Mutex<GateState>,
    pub(super) cv: Condvar,
}

#[derive(Default)]
pub(super) struct GateState {
    arrived: usize,
    generation: u64,
    broken: bool,
    release: u64,
}

impl Gate {
    fn wait(&self, now: impl Fn() -> u64, on_release: impl FnOnce()) -> Option<u64> {
        let mut g = self.st.lock().unwrap_or_else(|p| p.into_inner());
        if g.broken {
            return None;
        }
        g.arrived += 1;
        if g.arrived == self.n {
            on_release();
            g.arrived = 0;
            g.generation += 1;
            g.release = now();
            self.cv.notify_all();
            return Some(g.release);
        }
        let generation = g.generation;
        loop {
            g = self
                .cv
                .wait_timeout(g, Duration::from_millis(50))
                .unwrap_or_else(|p| p.into_inner())
                .0;
            if g.generation != generation {
                return Some(g.release);
            }
            if g.broken {
                return None;
            }
        }
    }

    fn break_all(&self) {
        let mut g = self.st.lock().unwrap_or_else(|p| p.into_inner());
        g.broken = true;
        self.cv.notify_all();
    }
}

pub(super) struct Child {
    pub(super) s: Arc<Shared>,
    pub(super) tid: usize,
    pub(super) rng: Rng,
}

/// Ends the gate if the child leaves by any path, so no other child waits for it.
struct LeaveGuard<'a>(&'a Shared, bool);
impl Drop for LeaveGuard<'_> {
    fn drop(&mut self) {
        if !self.1 {
            self.0.cut.store(true, Release);
            self.0.stop.store(true, Release);
            self.0.gate.break_all();
        }
    }
}

/// The open file of one phase.
enum Handle {
    Raw(File),
    W(BufWriter<File>),
    R(BufReader<File>),
}

impl Handle {
    fn file(&self) -> &File {
        match self {
            Handle::Raw(f) => f,
            Handle::W(w) => w.get_ref(),
            Handle::R(r) => r.get_ref(),
        }
    }
}

pub(super) fn io_err(kind: ErrorKind, path: &Path, what: &str, e: std::io::Error) -> WorkloadError {
    WorkloadError::new(kind, format!("{what} {}: {e}", path.display()))
}

impl Child {
    fn open(&self, phase: Phase, path: &Path, rec: usize) -> Result<Handle, WorkloadError> {
        let cfg = &self.s.cfg;
        // Never through a symlink planted at the name after setup checked it.
        let mut flags = libc::O_NOFOLLOW;
        if cfg.direct {
            flags |= libc::O_DIRECT;
        }
        // IOzone opens its fwrite/fread tests with plain fopen: -o's O_SYNC is not theirs.
        if cfg.o_sync && phase.api() != Api::Stdio {
            flags |= libc::O_SYNC;
        }
        let writes = phase.writes() || (phase == Phase::Mix && !cfg.reader_in_mix(self.tid));
        let mut o = std::fs::OpenOptions::new();
        o.custom_flags(flags);
        if writes {
            o.write(true);
            if phase.creates() {
                o.truncate(true);
            }
        } else {
            o.read(true);
        }
        let f = o
            .open(path)
            .map_err(|e| io_err(ErrorKind::Environment, path, "could not open", e))?;
        Ok(match phase.api() {
            Api::Stdio if writes => Handle::W(BufWriter::with_capacity(rec, f)),
            Api::Stdio => Handle::R(BufReader::with_capacity(rec, f)),
            _ => Handle::Raw(f),
        })
    }

    /// Runs one phase for this child. `Ok(false)` when the runner ended the run.
    #[allow(clippy::too_many_arguments)]
    fn phase(
        &mut self,
        ctl: &mut RunControl<'_>,
        phase: Phase,
        fsize: u64,
        rec: u64,
        buf: &mut files::AlignedBuf,
        purge: &mut [u8],
    ) -> Result<bool, WorkloadError> {
        let s = Arc::clone(&self.s);
        let cfg = &s.cfg;
        let path = s.files.paths[self.tid].clone();
        let n = fsize / rec;
        let reader = match phase {
            Phase::Mix => cfg.reader_in_mix(self.tid),
            p => !p.writes(),
        };
        let access = phase.access();
        let perm = if access == Access::Random {
            permutation(n, &mut self.rng)
        } else {
            Vec::new()
        };
        let per_call = if phase.api() == Api::Vec {
            PVECMAX as u64
        } else {
            1
        };
        let mut h = self.open(phase, &path, rec as usize)?;
        // IOzone's write/rewrite and read/reread tests sync the file before their timing
        // starts (single-stream mode) and after it ends (unless -c closes it in the
        // timing): a pass never measures the write-back of the one before it.
        let flushes = phase.synced_around();
        if flushes && !cfg.throughput {
            sync(&mut h, &path)?;
        }
        let fd = h.file().as_raw_fd();
        let clock = ctl.clock();
        let Some(release) = s.gate.wait(|| clock.now(), || s.stop.store(false, Release)) else {
            return Ok(false);
        };
        #[cfg(test)]
        if s.late == Some(self.tid) {
            // Until another child has raised the stonewall flag (bounded, so a change that
            // breaks the flag fails the test instead of hanging it).
            let until = std::time::Instant::now() + Duration::from_secs(10);
            while !s.stop.load(Acquire) && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let start = clock.now();
        let cpu0 = cfg.cpu_util.then(thread_cpu_s);
        // The stonewall stops a child after its first record, never before: on a busy
        // machine a small file's pass can end before another child is even scheduled, and
        // stopping that one at once reported 0 kB for it ("Min xfer 0") and one child's rate
        // as the children's throughput.
        let mut done: u64 = 0;
        let mut stopped: Option<ChildStat> = None;
        let mut i = 0u64;
        let rlen = rec as usize;
        while i < n {
            if cfg.stonewall && i > 0 && stopped.is_none() && s.stop.load(Relaxed) {
                if !phase.creates() {
                    break;
                }
                if cfg.flush {
                    sync(&mut h, &path)?;
                }
                let t = clock.now();
                stopped = Some(ChildStat {
                    bytes: done,
                    time_s: clock.to_ns(t - start) as f64 / 1e9,
                    end: t,
                    reader,
                    ..ChildStat::default()
                });
            }
            let now = clock.now();
            let Some(intended) = ctl.next_op(now) else {
                return Ok(false);
            };
            if let Some((size, line)) = cfg.purge {
                // IOzone's purge: read one byte per cache line of a record-sized stretch of
                // the purge buffer that maps to the same cache sets as the I/O buffer (its
                // address modulo the cache size), evicting the record from the CPU cache.
                let mut acc = 0u8;
                let mut k = buf.as_ptr() as usize % size;
                let end = k + rlen.min(size);
                while k < end {
                    acc = acc.wrapping_add(purge[k]);
                    k += line;
                }
                std::hint::black_box(acc);
            }
            #[cfg(test)]
            if s.slow == Some(self.tid) {
                std::thread::sleep(Duration::from_millis(2));
            }
            let calls = per_call.min(n - i);
            let bytes = calls * rec;
            let r = record_at(access, i, n, cfg.stride, &perm);
            let off = (r * rec) as libc::off_t;
            let p = buf.as_mut_ptr();
            let res: std::io::Result<()> = match (&mut h, phase.api()) {
                (Handle::W(w), _) => w.write_all(&buf[..rlen]),
                (Handle::R(rd), _) => rd.read_exact(&mut buf[..rlen]),
                (Handle::Raw(_), Api::Sys) => {
                    let seq = access == Access::Seq;
                    // Sequential passes move the file offset by themselves, as IOzone's do.
                    // SAFETY: valid fd.
                    if !seq && unsafe { libc::lseek(fd, off, libc::SEEK_SET) } < 0 {
                        Err(std::io::Error::last_os_error())
                    } else if reader {
                        // SAFETY: buffer of at least rlen bytes.
                        full(unsafe { libc::read(fd, p.cast(), rlen) }, rlen)
                    } else {
                        // SAFETY: as above.
                        full(unsafe { libc::write(fd, p.cast(), rlen) }, rlen)
                    }
                }
                (Handle::Raw(_), Api::Pos) => {
                    if reader {
                        // SAFETY: buffer of at least rlen bytes.
                        full(unsafe { libc::pread(fd, p.cast(), rlen, off) }, rlen)
                    } else {
                        // SAFETY: as above.
                        full(unsafe { libc::pwrite(fd, p.cast(), rlen, off) }, rlen)
                    }
                }
                (Handle::Raw(_), _) => {
                    let mut iov = [libc::iovec {
                        iov_base: std::ptr::null_mut(),
                        iov_len: 0,
                    }; PVECMAX];
                    for (k, v) in iov.iter_mut().enumerate().take(calls as usize) {
                        // SAFETY: the buffer holds PVECMAX records.
                        v.iov_base = unsafe { p.add(k * rlen) }.cast();
                        v.iov_len = rlen;
                    }
                    let total = calls as usize * rlen;
                    if reader {
                        // SAFETY: iovecs point into the buffer.
                        full(
                            unsafe { libc::preadv(fd, iov.as_ptr(), calls as i32, off) },
                            total,
                        )
                    } else {
                        // SAFETY: as above.
                        full(
                            unsafe { libc::pwritev(fd, iov.as_ptr(), calls as i32, off) },
                            total,
                        )
                    }
                }
            };
            res.map_err(|e| {
                io_err(
                    ErrorKind::Failed,
                    &path,
                    if reader { "read from" } else { "write to" },
                    e,
                )
            })?;
            let t = clock.now();
            ctl.record(intended, t);
            let c = ctl.counters();
            if reader {
                c.add(Counter::Reads, 1);
                c.add(Counter::BytesRead, bytes);
            } else {
                c.add(Counter::Writes, 1);
                c.add(Counter::BytesWritten, bytes);
            }
            done += bytes;
            i += calls;
        }
        // -e: the sync is timed (IOzone's read/reread tests sync the file too).
        if cfg.flush && (!reader || flushes) {
            sync(&mut h, &path)?;
            ctl.counters().add(Counter::Other, 1);
        }
        if let Handle::W(w) = &mut h {
            w.flush()
                .map_err(|e| io_err(ErrorKind::Failed, &path, "could not flush", e))?;
        }
        let end_open = clock.now();
        // With -c the close is timed; with -+u it is closed here too (outside the timing),
        // so the CPU share below covers the whole pass, close included, as IOzone's
        // children measure it. Otherwise the file closes when the phase returns.
        let mut h = Some(h);
        if cfg.close || cfg.cpu_util {
            // Closed here (dropped at the end of this block); with -+u and without -c,
            // synced first, inside the CPU share.
            let mut closing = h.take();
            if let Some(h) = closing.as_mut().filter(|_| flushes && !cfg.close) {
                sync(h, &path)?;
            }
        }
        let end = if cfg.close { clock.now() } else { end_open };
        let (wall_s, cpu_s) = match cpu0 {
            Some(c0) => (
                clock.to_ns(clock.now() - start) as f64 / 1e9,
                (thread_cpu_s() - c0).max(0.0),
            ),
            None => (0.0, 0.0),
        };
        if cfg.stonewall && i >= n {
            s.stop.store(true, Release);
        }
        let mine = stopped.unwrap_or(ChildStat {
            bytes: done,
            time_s: clock.to_ns(end - start) as f64 / 1e9,
            end,
            reader,
            ..ChildStat::default()
        });
        let mine = ChildStat {
            end,
            wall_s,
            cpu_s,
            ..mine
        };
        // The untimed sync after the pass (IOzone's "clean up before read starts").
        if let Some(mut h) = h.take()
            && flushes
        {
            sync(&mut h, &path)?;
        }
        *s.slots[self.tid].lock().unwrap_or_else(|p| p.into_inner()) = mine;
        let agg = || {
            let children: Vec<ChildStat> = s
                .slots
                .iter()
                .map(|m| *m.lock().unwrap_or_else(|p| p.into_inner()))
                .collect();
            let last = children.iter().map(|c| c.end).max().unwrap_or(start);
            let parent_s = clock.to_ns(last.saturating_sub(release)) as f64 / 1e9;
            s.results
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(PhaseResult {
                    file_size: fsize,
                    record_size: rec,
                    phase,
                    children,
                    parent_s,
                });
        };
        Ok(s.gate.wait(|| clock.now(), agg).is_some())
    }
}

fn sync(h: &mut Handle, path: &Path) -> Result<(), WorkloadError> {
    if let Handle::W(w) = h {
        w.flush()
            .map_err(|e| io_err(ErrorKind::Failed, path, "could not flush", e))?;
    }
    h.file()
        .sync_all()
        .map_err(|e| io_err(ErrorKind::Failed, path, "could not fsync", e))
}

/// CPU seconds (user + system) the calling thread has used: `CLOCK_THREAD_CPUTIME_ID`, the
/// thread's own share (IOzone's forked children read `getrusage(RUSAGE_SELF)`, which is the
/// same thing for a one-thread process; for hostbench's thread children the process figure
/// would count every child).
pub fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill; the clock id is a constant Linux knows.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// The smallest step of [`thread_cpu_s`], found as IOzone finds its CPU clock's resolution:
/// read the clock until the value changes (at most a million reads, so bounded; 0 when it
/// never moved).
pub fn cpu_time_resolution() -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let a = thread_cpu_s();
        for _ in 0..1_000_000 {
            let b = thread_cpu_s();
            if b != a {
                best = best.min(b - a);
                break;
            }
        }
    }
    if best.is_finite() { best } else { 0.0 }
}

#[inline]
fn full(r: isize, want: usize) -> std::io::Result<()> {
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else if r as usize != want {
        Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("short transfer: {r} of {want} bytes"),
        ))
    } else {
        Ok(())
    }
}

impl LoopWorker for Child {
    fn run(&mut self, ctl: &mut RunControl<'_>) -> Result<(), WorkloadError> {
        let s = Arc::clone(&self.s);
        let mut guard = LeaveGuard(&s, false);
        let max_rec = s.cfg.steps.iter().map(|&(_, r)| r).max().unwrap_or(4096) as usize;
        let len = max_rec * PVECMAX;
        let mut buf = files::AlignedBuf::try_new(len).ok_or_else(|| {
            WorkloadError::environment(format!(
                "could not allocate an I/O buffer of {len} B; use a smaller record size"
            ))
        })?;
        // IOzone's kind of non-zero pattern.
        buf.fill(0xA5);
        let mut purge = vec![0x5Au8; s.cfg.purge.map_or(0, |(n, _)| 2 * n)];
        for &(fsize, rec) in &s.cfg.steps {
            for &phase in &s.cfg.phases {
                if !self.phase(ctl, phase, fsize, rec, &mut buf, &mut purge)? {
                    return Ok(());
                }
            }
        }
        guard.1 = true;
        Ok(())
    }
}
