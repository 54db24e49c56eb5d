//! fio's status line (`eta.c`'s behaviour): while the jobs run, a thread prints every
//! `--eta-interval` (1 s) to stdout, ending in `\r`:
//!
//! `Jobs: 2 (f=2), 0-400 IOPS: [R(2)][75.0%][r=1600KiB/s][r=400 IOPS][eta 00m:01s]`
//!
//! the clones running (and their open files), the jobs' rate limits, each clone's state
//! run-length coded (`P` not started, `/` ramp, `R`/`r` sequential/random reads, `W`/`w`
//! writes, `M`/`m` mixed, `_` done, `X` failed), the share of the run done, the rates of
//! the last interval (directions with I/O only) and the estimated time left, as fio
//! estimates it per clone (from its bytes done, or its runtime for `time_based`; a clone not
//! started counts its runtime, start delay and ramp time, or its bytes at its rate; clones
//! behind a `stonewall` add up). Within the first 3 s only `Jobs: N (f=M)` and the limits
//! are known. `--eta-newline=T` starts a new line every T.
//!
//! The clones publish their state and totals in relaxed atomics (a few stores per
//! completion batch, only when the line is on); the thread reads them. The clone that ends
//! last stops the thread and waits for it, so the line is done before the results print.

use super::Shared;
use super::job::JobSpec;
use hostbench_core::fio_num::num2str_from;
use hostbench_core::fio_result::FioUnified;
use std::io::Write;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How the status line is printed (`--eta-interval`, `--eta-newline`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusCfg {
    /// Refresh interval, ms (fio's default 1000, at least 250).
    pub interval_ms: u64,
    /// Start a new line every this many ms (0 = never).
    pub newline_ms: u64,
}

static CFG: Mutex<Option<StatusCfg>> = Mutex::new(None);

/// Turns the status line on (`Some`) or off for the runs this process sets up next
/// (`hostbench fio` sets it from `--eta`).
pub fn enable(cfg: Option<StatusCfg>) {
    *CFG.lock().unwrap_or_else(|e| e.into_inner()) = cfg;
}

fn configured() -> Option<StatusCfg> {
    *CFG.lock().unwrap_or_else(|e| e.into_inner())
}

/// `--bandwidth-log`: `Some(json)` turns fio's aggregate bandwidth logs on for the runs
/// this process sets up next; `json` = a JSON report is asked for (fio's JSON report
/// takes one more sample when it is written).
static AGG: Mutex<Option<bool>> = Mutex::new(None);

/// Turns `--bandwidth-log` on (`Some(json)`) or off.
pub fn bandwidth_log(on: Option<bool>) {
    *AGG.lock().unwrap_or_else(|e| e.into_inner()) = on;
}

/// fio's aggregate bandwidth logs (`--bandwidth-log`: `agg-read_bw.log`,
/// `agg-write_bw.log`, `agg-trim_bw.log` in the current directory). fio samples the
/// bandwidth of all jobs together where it computes its status line: every pass of its
/// helper thread (~250 ms) while the line is on, once more than the smallest
/// `bwavgtime` has passed since the last sample, and once when its JSON report is
/// written; rows are `ms since the start, KiB/s, ddir, 0, 0`.
struct Agg {
    /// A sample at the end (a JSON report).
    at_end: bool,
    /// The smallest `bwavgtime` of the jobs, ms.
    avg_ms: u64,
    /// The last sample: when (ms since the start) and the bytes then.
    prev_ms: u64,
    prev_bytes: [u64; 2],
    rows: Vec<(u64, [u64; 2])>,
    /// Written (once).
    written: bool,
}

/// The clones' live state, read by the status thread.
pub(super) struct Live {
    on: bool,
    state: Vec<AtomicU8>,
    bytes: Vec<[AtomicU64; 2]>,
    ios: Vec<[AtomicU64; 2]>,
    /// When each clone's epoch began (its start, or the end of its ramp), ms since the
    /// run's start plus 1 (0 = not yet).
    epoch_ms: Vec<AtomicU64>,
    genesis: Instant,
    done: AtomicUsize,
    stop: Mutex<bool>,
    wake: Condvar,
    printer: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// `--bandwidth-log`.
    agg: Option<Mutex<Agg>>,
}

/// A clone's states as fio prints them.
pub(super) const NOT_STARTED: u8 = b'P';
pub(super) const RAMP: u8 = b'/';
pub(super) const DONE: u8 = b'_';
pub(super) const FAILED: u8 = b'X';

/// The state letter of a running clone of job `j`.
pub(super) fn running_state(j: &JobSpec) -> u8 {
    let random = j.rw.random();
    let name = j.rw.name();
    let c = if name.contains("trim") && !j.rw.writes(j.rwmixread) {
        b'd'
    } else {
        match j.rw.read_pct(j.rwmixread) {
            100 => b'r',
            0 => b'w',
            _ => b'm',
        }
    };
    if random { c } else { c.to_ascii_uppercase() }
}

impl Live {
    /// For `n` clones of `jobs`; on when the status line or `--bandwidth-log` is.
    pub(super) fn new(n: usize, jobs: &[JobSpec]) -> Live {
        let agg = (*AGG.lock().unwrap_or_else(|e| e.into_inner())).map(|at_end| {
            Mutex::new(Agg {
                at_end,
                avg_ms: jobs
                    .iter()
                    .map(|j| j.logs.bw_sample_msec())
                    .min()
                    .unwrap_or(500),
                prev_ms: 0,
                prev_bytes: [0; 2],
                rows: Vec::new(),
                written: false,
            })
        });
        let on = configured().is_some() || agg.is_some();
        let m = if on { n } else { 0 };
        Live {
            on,
            state: (0..m).map(|_| AtomicU8::new(NOT_STARTED)).collect(),
            bytes: (0..m).map(|_| Default::default()).collect(),
            ios: (0..m).map(|_| Default::default()).collect(),
            epoch_ms: (0..m).map(|_| AtomicU64::new(0)).collect(),
            genesis: Instant::now(),
            done: AtomicUsize::new(0),
            stop: Mutex::new(false),
            wake: Condvar::new(),
            printer: Mutex::new(None),
            agg,
        }
    }

    /// A sample of the aggregate bandwidth logs, when more than the smallest `bwavgtime`
    /// has passed since the last (fio's `calc_thread_status`).
    fn agg_tick(&self) {
        let Some(a) = &self.agg else {
            return;
        };
        let mut a = a.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.genesis.elapsed().as_millis() as u64;
        let ms = now.saturating_sub(a.prev_ms);
        if ms <= a.avg_ms {
            return;
        }
        let mut bytes = [0u64; 2];
        for b in &self.bytes {
            for (d, x) in bytes.iter_mut().enumerate() {
                *x += b[d].load(Relaxed);
            }
        }
        let rate = [0, 1].map(|d| bytes[d].saturating_sub(a.prev_bytes[d]) * 1000 / ms / 1024);
        a.rows.push((now, rate));
        a.prev_ms = now;
        a.prev_bytes = bytes;
    }

    /// Writes the aggregate bandwidth logs (once), after the end-of-run sample a JSON
    /// report takes. A log name taken by anything but a regular file is left alone.
    pub(super) fn write_agg(&self) -> Result<(), String> {
        let Some(m) = &self.agg else {
            return Ok(());
        };
        let at_end = {
            let a = m.lock().unwrap_or_else(|e| e.into_inner());
            if a.written {
                return Ok(());
            }
            a.at_end
        };
        if at_end {
            self.agg_tick();
        }
        let mut a = m.lock().unwrap_or_else(|e| e.into_inner());
        a.written = true;
        for (d, name) in ["agg-read_bw.log", "agg-write_bw.log", "agg-trim_bw.log"]
            .iter()
            .enumerate()
        {
            let mut text = String::new();
            for (ms, rate) in &a.rows {
                // hostbench's live totals have no trims: fio's trim rate, 0 without trims.
                let v = rate.get(d).copied().unwrap_or(0);
                text.push_str(&format!("{ms}, {v}, {d}, 0, 0\n"));
            }
            super::logs::write_new(std::path::Path::new(name), text.as_bytes())?;
        }
        Ok(())
    }

    /// Whether the status line is on.
    #[inline(always)]
    pub(super) fn on(&self) -> bool {
        self.on
    }

    /// Clone `tid` is now in `state`; a new epoch starts with its run and its measured
    /// time.
    pub(super) fn set_state(&self, tid: usize, state: u8) {
        if !self.on {
            return;
        }
        if !matches!(state, NOT_STARTED | DONE | FAILED) {
            let ms = self.genesis.elapsed().as_millis() as u64 + 1;
            self.epoch_ms[tid].store(ms, Relaxed);
        }
        self.state[tid].store(state, Relaxed);
    }

    /// Clone `tid`'s totals per direction (reads, writes).
    #[inline(always)]
    pub(super) fn publish(&self, tid: usize, bytes: [u64; 2], ios: [u64; 2]) {
        if self.on {
            for d in 0..2 {
                self.bytes[tid][d].store(bytes[d], Relaxed);
                self.ios[tid][d].store(ios[d], Relaxed);
            }
        }
    }

    /// Clone `tid` ended (`failed`); the last one stops the status thread and waits for it.
    pub(super) fn finish(&self, tid: usize, failed: bool) {
        if !self.on {
            return;
        }
        self.state[tid].store(if failed { FAILED } else { DONE }, Relaxed);
        if self.done.fetch_add(1, Relaxed) + 1 == self.state.len() {
            self.stop_printer();
            if let Err(e) = self.write_agg() {
                eprintln!("fio: --bandwidth-log: {e}");
            }
        }
    }

    /// Stops the status thread (its last line then ends with a newline) and waits for it.
    pub(super) fn stop_printer(&self) {
        *self.stop.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.wake.notify_all();
        let h = self
            .printer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(h) = h {
            let _ = h.join();
        }
    }
}

/// Starts the status thread of a run, when the line is on.
pub(super) fn start(shared: &Arc<Shared>) {
    let Some(cfg) = configured() else {
        return;
    };
    if !shared.live.on {
        return;
    }
    let sh = shared.clone();
    let h = std::thread::Builder::new()
        .name("fio-status".into())
        .spawn(move || printer(&sh, cfg));
    if let Ok(h) = h {
        *shared
            .live
            .printer
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(h);
    }
}

fn printer(sh: &Shared, cfg: StatusCfg) {
    let live = &sh.live;
    let mut line = Line::new(sh.threads.len());
    let mut printed = false;
    let mut last_newline = Instant::now();
    let mut newline_pending = false;
    let interval = Duration::from_millis(cfg.interval_ms.max(1));
    let mut next = Instant::now() + interval;
    // fio's helper thread passes every 250 ms (its disk-util timer): the aggregate
    // bandwidth logs are sampled then.
    let agg_step = Duration::from_millis(250);
    let mut next_agg = Instant::now() + agg_step;
    loop {
        let mut stop = live.stop.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if *stop {
                break;
            }
            let now = Instant::now();
            let due = if live.agg.is_some() {
                next.min(next_agg)
            } else {
                next
            };
            if now >= due {
                break;
            }
            stop = live
                .wake
                .wait_timeout(stop, due - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        if *stop {
            drop(stop);
            if printed {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(b"\n");
                let _ = out.flush();
            }
            return;
        }
        drop(stop);
        if live.agg.is_some() && Instant::now() >= next_agg {
            live.agg_tick();
            next_agg += agg_step;
        }
        if Instant::now() < next {
            continue;
        }
        next += interval;
        if let Some(text) = line.render(sh) {
            let mut out = std::io::stdout().lock();
            if newline_pending {
                newline_pending = false;
                line.last_len = 0;
                let _ = out.write_all(b"\n");
            }
            let _ = out.write_all(text.as_bytes());
            let _ = out.write_all(b"\r");
            let _ = out.flush();
            if !printed {
                printed = true;
                last_newline = Instant::now();
            } else if cfg.newline_ms > 0
                && last_newline.elapsed() > Duration::from_millis(cfg.newline_ms)
            {
                last_newline = Instant::now();
                newline_pending = true;
            }
        }
    }
}

/// fio's `eta_to_str`: `[DDd:][HHh:]MMm:SSs`.
pub fn eta_str(secs: u64) -> String {
    let (s, m, h, d) = (
        secs % 60,
        (secs / 60) % 60,
        (secs / 3600) % 24,
        secs / 86400,
    );
    let mut out = String::new();
    if d > 0 {
        out.push_str(&format!("{d:02}d:"));
    }
    if h > 0 || d > 0 {
        out.push_str(&format!("{h:02}h:"));
    }
    out.push_str(&format!("{m:02}m:{s:02}s"));
    out
}

/// fio's run string: each state letter with its repeat count, `R(2),W(1)`.
pub fn condensed(states: &[u8]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < states.len() {
        let c = states[i];
        let n = states[i..].iter().take_while(|&&x| x == c).count();
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(&format!("{}({n})", c as char));
        i += n;
    }
    out
}

/// "Not yet known" (fio's `INT_MAX`).
const UNKNOWN: u64 = i32::MAX as u64;

/// What the line keeps between refreshes.
struct Line {
    prev_bytes: [u64; 2],
    prev_ios: [u64; 2],
    prev_t: Instant,
    eta_good: bool,
    last_len: usize,
    _n: usize,
}

impl Line {
    fn new(n: usize) -> Line {
        Line {
            prev_bytes: [0; 2],
            prev_ios: [0; 2],
            prev_t: Instant::now(),
            eta_good: false,
            last_len: 0,
            _n: n,
        }
    }

    /// The line now, or `None` when nothing runs or waits.
    fn render(&mut self, sh: &Shared) -> Option<String> {
        let live = &sh.live;
        let now_ms = live.genesis.elapsed().as_millis() as u64;
        let elapsed_s = now_ms.div_ceil(1000);
        let unified = sh
            .jobs
            .iter()
            .any(|j| j.report.unified_rw_reporting != FioUnified::None);
        let (mut running, mut ramping, mut pending, mut files) = (0u64, 0u64, 0u64, 0u64);
        let (mut t_rate, mut m_rate, mut t_iops, mut m_iops) = (0u64, 0u64, 0u64, 0u64);
        let mut bytes = [0u64; 2];
        let mut ios = [0u64; 2];
        let mut states = Vec::with_capacity(sh.threads.len());
        let mut etas = Vec::with_capacity(sh.threads.len());
        let exitall = sh.jobs.iter().any(|j| j.exitall);
        for (tid, &(ji, clone)) in sh.threads.iter().enumerate() {
            let j = &sh.jobs[ji];
            let st = live.state[tid].load(Relaxed);
            states.push(st);
            let is_running = !matches!(st, NOT_STARTED | RAMP | DONE | FAILED);
            if is_running {
                running += 1;
                let rp = j.rw.read_pct(j.rwmixread);
                for (d, on) in [(0, rp > 0), (1, rp < 100)] {
                    if on {
                        t_rate += j.rate.bps[d];
                        m_rate += j.rate.min_bps[d];
                        t_iops += j.rate.iops[d];
                        m_iops += j.rate.min_iops[d];
                    }
                }
                files += 1;
            } else if st == RAMP {
                running += 1;
                ramping += 1;
            } else if st == NOT_STARTED {
                pending += 1;
            }
            etas.push(if elapsed_s >= 3 {
                self.clone_eta(live, tid, j, clone, st, now_ms)
            } else {
                UNKNOWN
            });
            if st != NOT_STARTED {
                for d in 0..2 {
                    let k = if unified { 0 } else { d };
                    bytes[k] += live.bytes[tid][d].load(Relaxed);
                    ios[k] += live.ios[tid][d].load(Relaxed);
                }
            }
        }
        let eta = if exitall {
            etas.iter().copied().min().unwrap_or(0)
        } else {
            let mut stone = 0;
            let mut most = 0;
            for (tid, &(ji, _)) in sh.threads.iter().enumerate() {
                if states[tid] == NOT_STARTED && sh.jobs[ji].stonewall {
                    stone += etas[tid];
                } else {
                    most = most.max(etas[tid]);
                }
            }
            most + stone
        };
        let disp_ms = self.prev_t.elapsed().as_millis() as u64;
        self.prev_t = Instant::now();
        let mut rate = [0u64; 2];
        let mut iops = [0u64; 2];
        for d in 0..2 {
            let db = bytes[d].saturating_sub(self.prev_bytes[d]);
            let di = ios[d].saturating_sub(self.prev_ios[d]);
            rate[d] = (1000 * db).checked_div(disp_ms).unwrap_or(0) / 1024;
            iops[d] = (di * 1000).checked_div(disp_ms).unwrap_or(0);
        }
        self.prev_bytes = bytes;
        self.prev_ios = ios;
        if running == 0 && pending == 0 {
            return None;
        }
        let mut out = format!("Jobs: {running} (f={files})");
        if m_rate + t_rate > 0 {
            out.push_str(&format!(
                ", {}-{}",
                num2str_from(m_rate, 0, 4, true, "B/s"),
                num2str_from(t_rate, 0, 4, true, "B/s")
            ));
        } else if m_iops + t_iops > 0 {
            out.push_str(&format!(", {m_iops}-{t_iops} IOPS"));
        }
        if eta != UNKNOWN && running > 0 {
            let pct = if (eta == 0 && !self.eta_good) || ramping == running {
                "-.-%".to_string()
            } else {
                self.eta_good = true;
                let p = if elapsed_s > 0 {
                    elapsed_s as f64 / (elapsed_s + eta) as f64
                } else {
                    0.0
                };
                format!("{:3.1}%", p * 100.0)
            };
            out.push_str(&format!(": [{}][{pct}]", condensed(&states)));
            let names = ['r', 'w'];
            // fio's rates take the unit base of its last job (`calc_thread_status`): bits
            // when that is a net job.
            let unit = if sh.jobs.last().is_some_and(|j| j.report.bits) {
                "bit/s"
            } else {
                "B/s"
            };
            let has: Vec<usize> = (0..2).filter(|&d| rate[d] > 0 || iops[d] > 0).collect();
            if !has.is_empty() {
                let part = |f: &dyn Fn(usize) -> String| {
                    has.iter()
                        .map(|&d| format!("{}={}", names[d], f(d)))
                        .collect::<Vec<_>>()
                        .join(",")
                };
                out.push_str(&format!(
                    "[{}][{} IOPS]",
                    part(&|d| num2str_from(rate[d], 1, 4, true, unit)),
                    part(&|d| num2str_from(iops[d], 0, 4, false, ""))
                ));
            }
            out.push_str(&format!("[eta {}]", eta_str(eta)));
            let len = out.len();
            if len < self.last_len {
                out.push_str(&" ".repeat(self.last_len - len));
            }
            self.last_len = len;
        }
        Some(out)
    }

    /// fio's `thread_eta` of clone `tid` in state `st`, seconds.
    fn clone_eta(
        &self,
        live: &Live,
        tid: usize,
        j: &JobSpec,
        clone: u32,
        st: u8,
        now_ms: u64,
    ) -> u64 {
        let epoch = live.epoch_ms[tid].load(Relaxed);
        let since = if epoch == 0 {
            0
        } else {
            now_ms.saturating_sub(epoch - 1)
        };
        let elapsed = since.div_ceil(1000);
        let timeout = j.runtime_s.map_or(0, |r| r as u64);
        let region = j.clone_size(clone).unwrap_or(0);
        let total = j.io_limits(region).0;
        match st {
            DONE | FAILED => 0,
            NOT_STARTED | RAMP => {
                let mut t_eta = 0.0;
                if let Some(rt) = j.runtime_s {
                    t_eta = rt + j.startdelay_s.0;
                    if st == NOT_STARTED || j.ramp_time_s > 0.0 {
                        t_eta += j.ramp_time_s;
                    }
                }
                let mut t_eta = t_eta as u64;
                if st == RAMP {
                    let left = elapsed;
                    if left <= t_eta {
                        t_eta -= left;
                    }
                }
                let rp = j.rw.read_pct(j.rwmixread);
                let rate = if rp > 0 { j.rate.bps[0] } else { 0 }
                    + if rp < 100 { j.rate.bps[1] } else { 0 };
                let r_eta = total
                    .checked_div(rate)
                    .map_or(0, |t| t + j.startdelay_s.0 as u64);
                match (r_eta, t_eta) {
                    (0, t) => t,
                    (r, 0) => r,
                    (r, t) => r.min(t),
                }
            }
            _ => {
                let done = live.bytes[tid][0].load(Relaxed) + live.bytes[tid][1].load(Relaxed);
                let mut perc = if total > 0 {
                    (done as f64 / total as f64).min(1.0)
                } else {
                    0.0
                };
                if j.time_based {
                    perc = if timeout > 0 {
                        perc.min(elapsed as f64 / timeout as f64)
                    } else {
                        0.0
                    };
                }
                let mut eta = if perc == 0.0 {
                    timeout
                } else {
                    ((elapsed as f64 / perc) as u64).saturating_sub(elapsed)
                };
                if timeout > 0 && eta > timeout.saturating_sub(elapsed) {
                    eta = timeout.saturating_sub(elapsed);
                }
                eta
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_and_run_strings_are_fios() {
        assert_eq!(eta_str(1), "00m:01s");
        assert_eq!(eta_str(3661), "01h:01m:01s");
        assert_eq!(eta_str(90_000), "01d:01h:00m:00s");
        assert_eq!(condensed(b"RRW_"), "R(2),W(1),_(1)");
        assert_eq!(condensed(b""), "");
    }
}
