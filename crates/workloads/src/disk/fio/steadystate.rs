//! fio's steady-state detection (`ss`/`steadystate`, `ss_dur`, `ss_ramp`), as fio 3.33
//! behaves (its `steadystate.c`, reimplemented from its documented behaviour).
//!
//! Once a second the job's IOPS and bandwidth over the last second (`1000 × Δ / Δms`,
//! bytes/s) go into a ring of `ss_dur` samples, collection beginning one second after
//! `ss_ramp`. Once the ring is full, each new sample checks the criterion: `iops`/`bw`
//! = the largest deviation from the ring's mean, `iops_slope`/`bw_slope` = the
//! least-squares slope over the samples (x = 0..n-1), each absolute or, with `%`, in
//! percent of the mean; attained when below the limit. Attaining it stops the job (with
//! `group_reporting`, every job of its reporting group, whose rates are summed and kept
//! by the group's last clone). The result block then carries fio's `steadystate` object.
//!
//! The clones publish their running totals in relaxed atomics (one store per I/O, only
//! when a job asks for steady state); the clone that keeps the ring reads them when a
//! second has passed, from its own loop.

use super::job::{JobError, JobSpec};
use hostbench_core::fio_result::FioSteadyState;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// A job's steady-state options.
#[derive(Debug, Clone, PartialEq)]
pub struct SsOpts {
    /// `ss_dur`, whole seconds (0 = off).
    pub dur: u32,
    /// `ss_ramp`, µs.
    pub ramp_us: u64,
    /// IOPS (else bandwidth).
    pub iops: bool,
    /// Slope (else the mean deviation).
    pub slope: bool,
    /// The limit is a percentage of the mean.
    pub pct: bool,
    /// The limit.
    pub limit: f64,
}

impl Default for SsOpts {
    /// fio's default criterion, `iops_slope:0.01%`, inactive until `ss_dur` is set.
    fn default() -> Self {
        SsOpts {
            dur: 0,
            ramp_us: 0,
            iops: true,
            slope: true,
            pct: true,
            limit: 0.01,
        }
    }
}

/// Whether `key` (a canonical option name) is a steady-state option.
pub fn handles(key: &str) -> bool {
    matches!(key, "ss" | "ss_dur" | "ss_ramp")
}

/// Applies steady-state option `key` (canonical) with value `v`, written at `at`.
pub fn apply(o: &mut SsOpts, key: &str, v: &str, at: &str) -> Result<(), JobError> {
    let bad = |what: &str| JobError(format!("{at}: {key}={v}: {what}"));
    match key {
        "ss" => {
            let (kind, limit) = v.trim().split_once(':').ok_or_else(|| {
                bad("steadystate threshold must be specified in addition to criterion (e.g. ss=iops:5% or ss=bw_slope:1m)")
            })?;
            (o.iops, o.slope) = match kind.trim().to_ascii_lowercase().as_str() {
                "iops" => (true, false),
                "iops_slope" => (true, true),
                "bw" => (false, false),
                "bw_slope" => (false, true),
                _ => return Err(bad("expected iops, iops_slope, bw or bw_slope before ':'")),
            };
            let limit = limit.trim();
            if let Some(p) = limit.strip_suffix('%') {
                o.pct = true;
                o.limit = p
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| bad("could not parse the threshold percentage (e.g. 5%)"))?;
            } else if o.iops {
                o.pct = false;
                o.limit = limit
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| bad("the IOPS threshold is a number (e.g. iops:20)"))?;
            } else {
                o.pct = false;
                o.limit = super::job::parse_fio_size(limit)
                    .ok_or_else(|| bad("the bandwidth threshold is bytes/s (e.g. bw:1m)"))?
                    as f64;
            }
        }
        "ss_dur" | "ss_ramp" => {
            let s = super::job::parse_fio_time(v, 1.0)
                .filter(|s| *s <= 366.0 * 86400.0)
                .ok_or_else(|| bad("expected a time such as 30, 30s or 1m"))?;
            if key == "ss_dur" {
                o.dur = s as u32;
            } else {
                o.ramp_us = (s * 1e6) as u64;
            }
        }
        _ => {}
    }
    Ok(())
}

/// fio rejects a reporting group whose jobs ask for different steady states.
pub fn check_groups(jobs: &[JobSpec]) -> Result<(), JobError> {
    for (i, j) in jobs.iter().enumerate() {
        if let Some(o) = jobs[..i]
            .iter()
            .find(|o| o.groupid == j.groupid && o.ss != j.ss)
        {
            return Err(JobError(format!(
                "job '{}': job rejected: steadystate options must be consistent within reporting groups (job '{}' of group {} sets others)",
                j.name, o.name, j.groupid
            )));
        }
    }
    Ok(())
}

/// What the clones share: their running totals and who is told to stop.
pub(super) struct Board {
    enabled: bool,
    bytes: Vec<AtomicU64>,
    ios: Vec<AtomicU64>,
    stop: Vec<AtomicBool>,
    /// Per clone: the clones whose rates its ring takes (empty: it keeps none).
    members: Vec<Vec<usize>>,
}

impl Board {
    /// For the run's clones `threads` ((job, clone) each).
    pub(super) fn new(jobs: &[JobSpec], threads: &[(usize, u32)]) -> Board {
        let n = threads.len();
        let enabled = jobs.iter().any(|j| j.ss.dur > 0);
        let mut members = vec![Vec::new(); if enabled { n } else { 0 }];
        if enabled {
            for (t, &(ji, _)) in threads.iter().enumerate() {
                let j = &jobs[ji];
                if j.ss.dur == 0 {
                    continue;
                }
                if !j.group_reporting {
                    members[t] = vec![t];
                    continue;
                }
                // The group's last clone keeps the ring for the group's clones that report
                // as a group (fio's `steadystate_setup`).
                let group: Vec<usize> = (0..n)
                    .filter(|&u| {
                        let o = &jobs[threads[u].0];
                        o.groupid == j.groupid && o.ss.dur > 0 && o.group_reporting
                    })
                    .collect();
                if group.last() == Some(&t) {
                    members[t] = group;
                }
            }
        }
        let zeros = |n| (0..n).map(|_| AtomicU64::new(0)).collect();
        Board {
            enabled,
            bytes: zeros(if enabled { n } else { 0 }),
            ios: zeros(if enabled { n } else { 0 }),
            stop: (0..if enabled { n } else { 0 })
                .map(|_| AtomicBool::new(false))
                .collect(),
            members,
        }
    }

    /// Clone `tid`'s totals so far (measured I/O only).
    #[inline(always)]
    pub(super) fn publish(&self, tid: usize, bytes: u64, ios: u64) {
        if self.enabled {
            self.bytes[tid].store(bytes, Relaxed);
            self.ios[tid].store(ios, Relaxed);
        }
    }

    /// Whether clone `tid` attained its steady state (or its group did): it stops.
    #[inline(always)]
    pub(super) fn stopped(&self, tid: usize) -> bool {
        self.enabled && self.stop[tid].load(Relaxed)
    }

    fn totals(&self, tids: &[usize]) -> (u64, u64) {
        tids.iter().fold((0, 0), |(b, i), &t| {
            (
                b + self.bytes[t].load(Relaxed),
                i + self.ios[t].load(Relaxed),
            )
        })
    }
}

/// The ring of the clone that keeps one.
pub(super) struct Ring {
    o: SsOpts,
    members: Vec<usize>,
    bw: Vec<u64>,
    iops: Vec<u64>,
    head: usize,
    tail: usize,
    full: bool,
    attained: bool,
    ramp_over: bool,
    sum_y: i128,
    sum_xy: i128,
    oldest_y: u64,
    sum_x: f64,
    sum_x_sq: f64,
    slope: f64,
    deviation: f64,
    criterion: f64,
    /// Start of the clone's measured time and of the last second, and when the next
    /// check is due (ticks).
    epoch: u64,
    prev_t: u64,
    next_t: u64,
    tick_per_s: u64,
    prev: (u64, u64),
}

impl Ring {
    /// Clone `tid`'s ring, if it keeps one; `epoch` = its measured start (ticks).
    pub(super) fn new(
        board: &Board,
        tid: usize,
        o: &SsOpts,
        epoch: u64,
        tick_per_s: u64,
    ) -> Option<Ring> {
        let members = board.members.get(tid).filter(|m| !m.is_empty())?.clone();
        let n = o.dur as usize;
        if n == 0 {
            return None;
        }
        let d = n as f64;
        Some(Ring {
            o: o.clone(),
            members,
            bw: vec![0; n],
            iops: vec![0; n],
            head: 0,
            tail: 0,
            full: false,
            attained: false,
            ramp_over: o.ramp_us == 0,
            sum_y: 0,
            sum_xy: 0,
            oldest_y: 0,
            sum_x: (d * (d - 1.0) / 2.0).floor(),
            sum_x_sq: ((d - 1.0) * d * (2.0 * d - 1.0) / 6.0).floor(),
            slope: 0.0,
            deviation: 0.0,
            criterion: 0.0,
            epoch,
            prev_t: epoch,
            next_t: epoch + tick_per_s,
            tick_per_s,
            prev: (0, 0),
        })
    }

    /// When the next check is due (ticks).
    #[inline(always)]
    pub(super) fn due(&self) -> u64 {
        self.next_t
    }

    /// The check of second ending at `now` (ticks); true when the steady state is
    /// attained now (the ring's clones are then told to stop).
    pub(super) fn check(&mut self, board: &Board, now: u64) -> bool {
        if self.attained {
            return false;
        }
        self.next_t = now + self.tick_per_s;
        if !self.ramp_over
            && (now - self.epoch) as u128 * 1_000_000
                >= (self.o.ramp_us as u128 + 1_000_000) * self.tick_per_s as u128
        {
            self.ramp_over = true;
        }
        let (bytes, ios) = board.totals(&self.members);
        let ms = ((now - self.prev_t) as u128 * 1000 / self.tick_per_s as u128).max(1) as u64;
        self.prev_t = now;
        let (db, di) = (bytes - self.prev.0.min(bytes), ios - self.prev.1.min(ios));
        self.prev = (bytes, ios);
        if !self.ramp_over {
            return false;
        }
        let (bw, iops) = (1000 * db / ms, 1000 * di / ms);
        let met = self.add(iops, bw);
        if met {
            self.attained = true;
            for &t in &self.members {
                board.stop[t].store(true, Relaxed);
            }
        }
        met
    }

    /// One sample into the ring, and the criterion when it is full (fio's
    /// `steadystate_slope` / `steadystate_deviation`, same ring arithmetic).
    fn add(&mut self, iops: u64, bw: u64) -> bool {
        let n = self.bw.len();
        self.bw[self.tail] = bw;
        self.iops[self.tail] = iops;
        let ys = if self.o.iops { &self.iops } else { &self.bw };
        let new_val = ys[self.tail];
        if self.full || self.tail as isize - self.head as isize == n as isize - 1 {
            if !self.full {
                self.sum_y = 0;
                for i in 0..n {
                    self.sum_y += ys[i] as i128;
                    if self.o.slope {
                        self.sum_xy += i as i128 * ys[(self.head + i) % n] as i128;
                    }
                }
                self.full = true;
            } else {
                self.sum_y += new_val as i128 - self.oldest_y as i128;
                if self.o.slope {
                    self.sum_xy = self.sum_xy - self.sum_y + n as i128 * new_val as i128;
                }
            }
            self.oldest_y = ys[self.head];
            let mean = self.sum_y as f64 / n as f64;
            let met = if self.o.slope {
                self.slope = (self.sum_xy as f64 - self.sum_x * self.sum_y as f64 / n as f64)
                    / (self.sum_x_sq - self.sum_x * self.sum_x / n as f64);
                self.criterion = if self.o.pct {
                    100.0 * self.slope / mean
                } else {
                    self.slope
                };
                self.criterion.abs() < self.o.limit
            } else {
                self.deviation = ys
                    .iter()
                    .map(|&y| (y as f64 - mean).abs())
                    .fold(0.0, f64::max);
                self.criterion = if self.o.pct {
                    100.0 * self.deviation / mean
                } else {
                    self.deviation
                };
                self.criterion < self.o.limit
            };
            if met {
                return true;
            }
        }
        self.tail = (self.tail + 1) % n;
        if self.tail <= self.head {
            self.head = (self.head + 1) % n;
        }
        false
    }

    /// fio's `steadystate` object of the result.
    pub(super) fn result(&self) -> FioSteadyState {
        let n = self.bw.len();
        // fio: after a check that was not met the head has moved one past the oldest.
        let start = if self.attained || !self.full {
            self.head
        } else {
            (self.head + n - 1) % n
        };
        let order = |v: &[u64]| (0..n).map(|l| v[(start + l) % n]).collect::<Vec<u64>>();
        // fio prints `nan` for 0/0 (no I/O in the window, a slope over one sample).
        let defined = |x: f64| x.is_finite().then_some(x);
        FioSteadyState {
            iops: self.o.iops,
            slope: self.o.slope,
            pct: self.o.pct,
            limit: self.o.limit,
            duration: n as u32,
            attained: self.attained,
            criterion: defined(self.criterion),
            max_deviation: defined(self.deviation),
            slope_value: defined(self.slope),
            bw: order(&self.bw),
            iops_data: order(&self.iops),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(v: &str) -> SsOpts {
        let mut o = SsOpts {
            dur: 3,
            ..SsOpts::default()
        };
        apply(&mut o, "ss", v, "j:1").unwrap();
        o
    }

    fn ring(o: &SsOpts) -> Ring {
        let board = Board {
            enabled: true,
            bytes: vec![AtomicU64::new(0)],
            ios: vec![AtomicU64::new(0)],
            stop: vec![AtomicBool::new(false)],
            members: vec![vec![0]],
        };
        Ring::new(&board, 0, o, 0, 1000).unwrap()
    }

    #[test]
    fn a_groups_last_clone_keeps_its_ring_and_its_attainment_stops_the_group() {
        let text = "[global]\nioengine=null\nsize=1m\nss=iops:5%\nss_dur=2\n\
                    [a]\nnumjobs=2\ngroup_reporting\n[b]\nnew_group\n";
        let sections = super::super::job::from_text(text).unwrap();
        let jobs = super::super::job::jobs_from_sections(&sections).unwrap();
        let threads = vec![(0, 0), (0, 1), (1, 0)];
        let board = Board::new(&jobs, &threads);
        assert_eq!(board.members, vec![vec![], vec![0, 1], vec![2]]);
        let mut r = Ring::new(&board, 1, &jobs[0].ss, 0, 1000).unwrap();
        assert!(Ring::new(&board, 0, &jobs[0].ss, 0, 1000).is_none());
        // 200 IOPS a clone, summed over the group, three seconds.
        for s in 1..=3u64 {
            board.publish(0, 0, 200 * s);
            board.publish(1, 0, 200 * s);
            r.check(&board, s * 1000);
        }
        assert!(r.attained);
        assert_eq!(r.result().iops_data, vec![400, 400]);
        assert!(board.stopped(0) && board.stopped(1) && !board.stopped(2));
        // Different options in one reporting group are refused.
        let bad = "[a]\nioengine=null\nsize=1m\nss_dur=2\n[b]\nioengine=null\nsize=1m\n";
        let e = super::super::job::jobs_from_sections(&super::super::job::from_text(bad).unwrap())
            .unwrap_err()
            .0;
        assert!(e.contains("consistent within reporting groups"), "{e}");
    }

    #[test]
    fn options_parse_as_fio() {
        let o = opts("iops:5%");
        assert!(o.iops && !o.slope && o.pct && o.limit == 5.0);
        let o = opts("bw_slope:1m");
        assert!(!o.iops && o.slope && !o.pct && o.limit == 1048576.0);
        let mut o = SsOpts::default();
        for (k, v, needle) in [
            ("ss", "iops", "threshold must be specified"),
            ("ss", "lat:5%", "iops, iops_slope, bw or bw_slope"),
            ("ss", "iops:x", "IOPS threshold"),
            ("ss_dur", "soon", "a time"),
        ] {
            let e = apply(&mut o, k, v, "j:1").unwrap_err().0;
            assert!(e.starts_with("j:1:") && e.contains(needle), "{e}");
        }
        apply(&mut o, "ss_dur", "1m", "j:1").unwrap();
        assert_eq!(o.dur, 60);
    }

    #[test]
    fn deviation_is_met_once_the_ring_is_full_and_flat() {
        let mut r = ring(&opts("iops:5%"));
        assert!(!r.add(100, 1000));
        assert!(!r.add(200, 1000));
        // Full: 100, 200, 200 → mean 166.7, deviation 66.7 = 40%.
        assert!(!r.add(200, 1000));
        assert!((r.criterion - 40.0).abs() < 1e-9, "{}", r.criterion);
        assert!(r.add(200, 1000), "200, 200, 200 is flat");
        r.attained = true;
        assert_eq!(r.result().iops_data, vec![200, 200, 200]);
    }

    #[test]
    fn slope_is_least_squares_over_the_window() {
        let mut r = ring(&opts("iops_slope:1"));
        r.add(10, 0);
        r.add(20, 0);
        assert!(!r.add(30, 0));
        assert!((r.slope - 10.0).abs() < 1e-9);
        // Window 20, 30, 30: slope 5.
        assert!(!r.add(30, 0));
        assert!((r.slope - 5.0).abs() < 1e-9, "{}", r.slope);
        // Not attained and full: the data run oldest first.
        assert_eq!(r.result().iops_data, vec![20, 30, 30]);
        // Window 30, 30, 30: slope 0 < 1.
        assert!(r.add(30, 0));
        assert_eq!(r.slope, 0.0);
    }
}
