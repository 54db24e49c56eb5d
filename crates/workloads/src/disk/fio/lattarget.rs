//! fio's queue-depth search (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`), as fio 3.33 runs it (its `io_u.c` `lat_target_*`, reimplemented from
//! what they do).
//!
//! The search starts at depth 1 and keeps a range `low..high` (1..`iodepth`). A clone may
//! have at most the search's depth in flight. Once `latency_window` has passed since the
//! cycle began, the share of the cycle's completed reads and writes whose latency (fio's
//! `lat`: from the I/O's start to its completion) stayed within the target decides:
//! - at least `latency_percentile`: *success*. `low` becomes the depth; the depth doubles
//!   while `high` is still `iodepth`, else moves halfway to `high` (never past `iodepth`).
//!   When `high` is just above the depth three successes in a row raise `high` by one.
//!   Without `latency_run`, a depth that does not change ends the search: what is in flight
//!   completes, the clone's statistics start again (as at the end of `ramp_time`, its
//!   runtime too), and after one more window at that depth the job ends.
//! - below it (or no I/O completed in the window): *failure*. `high` becomes the depth and
//!   the depth moves halfway down to `low` (`low` steps down first when they meet); what is
//!   in flight completes before anything more is issued, so the deeper queue's late
//!   completions do not count against the smaller depth. At depth 1 a failure changes
//!   nothing.
//!
//! With `latency_percentile=100` (the default) each completion over the target fails at
//! once, without waiting for the window; one at depth 1 ends the clone with fio's error
//! (ETIMEDOUT, "max latency exceeded"). Without a window (`latency_window=0`) each check
//! decides at once, and a check before any completion is a failure, as in fio (its
//! success share is then 0/0).
//!
//! The depth also moves for the synchronous engines, which keep one I/O in flight whatever
//! it is: fio reports the depth reached all the same.

use super::job::JobError;

/// A job's latency-target options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatOpts {
    /// `latency_target`, ns (0: no search).
    pub target_ns: u64,
    /// `latency_window`, µs.
    pub window_us: u64,
    /// `latency_percentile`, 0..=100.
    pub percentile: f64,
    /// `latency_run`: keep searching instead of ending at a stable depth.
    pub run: bool,
    /// `max_latency` per direction (read, write, trim), ns (0: none): a read or write
    /// whose total latency is over it fails the clone with ETIMEDOUT, as fio's
    /// `lat_fatal`.
    pub max_ns: [u64; 3],
}

impl Default for LatOpts {
    fn default() -> Self {
        LatOpts {
            target_ns: 0,
            window_us: 0,
            percentile: 100.0,
            run: false,
            max_ns: [0; 3],
        }
    }
}

impl LatOpts {
    /// Whether the job searches its queue depth (`latency_target` above 0).
    pub fn active(&self) -> bool {
        self.target_ns > 0
    }

    /// Whether the job sets any of the reported options (else fio's report shows its
    /// defaults, which the report knows).
    pub fn reported(&self) -> bool {
        self.target_ns > 0 || self.window_us > 0 || self.percentile != 100.0
    }
}

/// Whether `key` (a canonical option name) is a latency-target option.
pub fn handles(key: &str) -> bool {
    matches!(
        key,
        "latency_target" | "latency_window" | "latency_percentile" | "latency_run" | "max_latency"
    )
}

/// A time in µs as fio reads `latency_target`, `latency_window` and `max_latency`: a bare
/// number is µs; `us`, `ms`, `s`, `m`, `h`, `d` suffixes; whole µs as fio's parser counts
/// them (`1.5ms` is 1 µs, `10ns` 10 µs: see [`super::job::parse_fio_time`]).
fn time_us(v: &str) -> Option<u64> {
    let t = v.trim().to_ascii_lowercase();
    if t.starts_with('-') {
        return None;
    }
    let s = super::job::parse_fio_time(&t, 1e-6)?;
    let us = (s * 1e6).round();
    (0.0..1e15).contains(&us).then_some(us as u64)
}

/// Applies latency-target option `key` (canonical) with value `v`, written at `at`.
pub fn apply(o: &mut LatOpts, key: &str, v: &str, at: &str) -> Result<(), JobError> {
    let bad = |what: &str| JobError(format!("{at}: {key}={v}: {what}"));
    match key {
        "latency_target" => {
            let us = time_us(v).ok_or_else(|| {
                bad("expected a time, µs without a unit (e.g. 500, 500us, 10ms, 1s)")
            })?;
            o.target_ns = us * 1000;
        }
        // fio's list per direction (a missing one takes the last given), µs each.
        "max_latency" => {
            let parts: Vec<&str> = v.split(',').map(str::trim).collect();
            if parts.len() > 3 {
                return Err(bad("at most three times, for reads, writes and trims"));
            }
            let last = parts.last().copied().unwrap_or("");
            for (d, m) in o.max_ns.iter_mut().enumerate() {
                let p = parts.get(d).copied().unwrap_or(last);
                let us = time_us(p).ok_or_else(|| {
                    bad(
                        "expected a time per direction, µs without a unit (e.g. 500, 10ms, \
                         or 10ms,20ms for reads and writes)",
                    )
                })?;
                *m = us * 1000;
            }
        }
        "latency_window" => {
            o.window_us = time_us(v).ok_or_else(|| {
                bad("expected a time, µs without a unit (e.g. 500000, 500ms, 5s)")
            })?;
        }
        "latency_percentile" => {
            // fio's option is a list of one: a second value is ignored.
            let first = v.split(':').next().unwrap_or("").trim();
            let first = first.strip_suffix('%').unwrap_or(first);
            o.percentile = first
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or_else(|| bad("expected a percentage from 0 to 100 (e.g. 99.9)"))?;
        }
        "latency_run" => {
            o.run = match v.trim().to_ascii_lowercase().as_str() {
                "" | "1" | "true" | "on" | "yes" => true,
                "0" | "false" | "off" | "no" => false,
                _ => return Err(bad("expected 0 or 1")),
            };
        }
        _ => {}
    }
    Ok(())
}

/// What the clone must do after the search saw a completion or checked its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Go on (the depth may have grown).
    Go,
    /// The depth went down: issue nothing more until what is in flight has completed, then
    /// call [`Search::quiesced`].
    Quiesce,
    /// The depth is stable: let what is in flight complete, start the statistics (and the
    /// runtime) again, then call [`Search::quiesced`]; one more window ends the job.
    FinalRun,
    /// The final window is over: the job ends (what is in flight completes).
    Done,
    /// A completion over the target at depth 1 with `latency_percentile=100`: the clone
    /// ends with fio's error.
    Fatal,
}

/// One clone's search. Times are the run clock's ticks.
#[derive(Debug, Clone)]
pub(super) struct Search {
    o: LatOpts,
    iodepth: u32,
    /// The depth the clone may keep in flight now (fio's `latency_qd`).
    pub(super) qd: u32,
    low: u32,
    high: u32,
    stable: u32,
    /// The final window runs (fio's `latency_end_run`).
    end_run: bool,
    /// When the cycle began.
    cycle_t: u64,
    /// Completions of reads and writes so far, and at the cycle's start.
    ios: u64,
    cycle_ios: u64,
    /// Completions over the target in the cycle.
    failed: u64,
    window_ticks: u64,
}

impl Search {
    /// The search of a clone whose job allows `iodepth`, at `now`; `tps` = clock ticks per
    /// second.
    pub(super) fn new(o: &LatOpts, iodepth: u32, now: u64, tps: u64) -> Search {
        let mut s = Search {
            o: *o,
            iodepth: iodepth.max(1),
            qd: 1,
            low: 1,
            high: iodepth.max(1),
            stable: 0,
            end_run: false,
            cycle_t: now,
            ios: 0,
            cycle_ios: 0,
            failed: 0,
            window_ticks: (o.window_us as u128 * tps as u128 / 1_000_000) as u64,
        };
        s.restart(now);
        s
    }

    /// Starts the search over from depth 1 (fio's `lat_target_init`: the start of the
    /// measured time after `ramp_time`).
    pub(super) fn restart(&mut self, now: u64) {
        self.qd = 1;
        self.low = 1;
        self.high = self.iodepth;
        self.stable = 0;
        self.end_run = false;
        self.new_cycle(now);
    }

    fn new_cycle(&mut self, now: u64) {
        self.cycle_t = now;
        self.cycle_ios = self.ios;
        self.failed = 0;
    }

    /// The target (ns), for the error at depth 1.
    pub(super) fn target_ns(&self) -> u64 {
        self.o.target_ns
    }

    /// Whether `inflight` I/Os fill the depth the search allows.
    #[inline]
    pub(super) fn full(&self, inflight: usize) -> bool {
        inflight >= self.qd as usize
    }

    /// A read or write completed with total latency `lat_ns`.
    pub(super) fn completed(&mut self, lat_ns: u64) -> Step {
        self.ios += 1;
        if lat_ns <= self.o.target_ns {
            return Step::Go;
        }
        if self.o.percentile == 100.0 {
            if self.qd == 1 {
                return Step::Fatal;
            }
            self.ramp_down();
            return Step::Quiesce;
        }
        self.failed += 1;
        Step::Go
    }

    /// fio's ramp down: false at depth 1 (nothing changes).
    fn ramp_down(&mut self) -> bool {
        if self.qd == 1 {
            return false;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        true
    }

    /// What is in flight has completed after [`Step::Quiesce`] or [`Step::FinalRun`]: the
    /// next cycle begins at `now`.
    pub(super) fn quiesced(&mut self, now: u64) {
        self.new_cycle(now);
    }

    /// After each issue or reap: once the window has passed, success or failure moves the
    /// depth.
    pub(super) fn check(&mut self, now: u64) -> Step {
        if now.saturating_sub(self.cycle_t) < self.window_ticks {
            return Step::Go;
        }
        let ios = self.ios - self.cycle_ios;
        // fio divides by the cycle's completions: none is 0/0, which no share passes.
        let ok = ios > 0
            && (ios - self.failed.min(ios)) as f64 / ios as f64 * 100.0 >= self.o.percentile;
        if !ok {
            // At depth 1 fio changes nothing, not even the cycle: the next check judges the
            // longer window.
            return if self.ramp_down() {
                Step::Quiesce
            } else {
                Step::Go
            };
        }
        let qd = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.qd = if self.high != self.iodepth {
            (self.qd + self.high) / 2
        } else {
            self.qd * 2
        }
        .min(self.iodepth);
        if !self.o.run && self.qd == qd {
            if self.end_run {
                return Step::Done;
            }
            self.end_run = true;
            // The statistics start again from zero: so do the search's counts (fio's
            // io_blocks), and the cycle once what is in flight has completed.
            self.ios = 0;
            self.cycle_ios = 0;
            self.failed = 0;
            return Step::FinalRun;
        }
        self.new_cycle(now);
        Step::Go
    }

    /// The depth to report.
    pub(super) fn depth(&self) -> u32 {
        self.qd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pct: f64, window_us: u64, run: bool) -> LatOpts {
        LatOpts {
            target_ns: 1_000_000,
            window_us,
            percentile: pct,
            run,
            max_ns: [0; 3],
        }
    }

    /// One window of `n` completions, `slow` of them over the target; the step and depth.
    fn window(s: &mut Search, t: &mut u64, n: u64, slow: u64) -> Step {
        for i in 0..n {
            let st = s.completed(if i < slow { 2_000_000 } else { 10 });
            assert_eq!(st, Step::Go);
        }
        *t += 1000;
        let st = s.check(*t);
        if matches!(st, Step::Quiesce | Step::FinalRun) {
            s.quiesced(*t);
        }
        st
    }

    #[test]
    fn a_generous_target_doubles_to_iodepth_then_runs_one_final_window() {
        let o = opts(99.0, 1000, false);
        let mut t = 0;
        let mut s = Search::new(&o, 8, t, 1_000_000);
        let mut depths = vec![s.depth()];
        let mut steps = Vec::new();
        loop {
            let st = window(&mut s, &mut t, 100, 0);
            depths.push(s.depth());
            steps.push(st);
            if st == Step::Done {
                break;
            }
        }
        assert_eq!(depths, [1, 2, 4, 8, 8, 8]);
        assert_eq!(
            steps,
            [Step::Go, Step::Go, Step::Go, Step::FinalRun, Step::Done]
        );
    }

    #[test]
    fn an_impossible_target_stays_at_depth_1_and_never_ends() {
        let o = opts(99.0, 1000, false);
        let mut t = 0;
        let mut s = Search::new(&o, 16, t, 1_000_000);
        for _ in 0..50 {
            assert_eq!(window(&mut s, &mut t, 100, 100), Step::Go);
            assert_eq!(s.depth(), 1);
        }
    }

    #[test]
    fn failures_bisect_between_the_last_good_and_bad_depths() {
        // Depths up to 5 keep the target; 6 and more miss it.
        let o = opts(90.0, 1000, false);
        let mut t = 0;
        let mut s = Search::new(&o, 64, t, 1_000_000);
        let mut depths = vec![];
        for _ in 0..40 {
            let slow = if s.depth() > 5 { 50 } else { 0 };
            let st = window(&mut s, &mut t, 100, slow);
            depths.push(s.depth());
            if st == Step::Done {
                break;
            }
        }
        // 1→2→4→8 (fails) →6 (fails) →5 →5 (stable: the final run) →5 (done); on the
        // way the high mark moves up one after three stable successes.
        assert_eq!(&depths[..4], &[2, 4, 8, 6]);
        assert_eq!(*depths.last().unwrap(), 5, "{depths:?}");
        assert!(depths.iter().all(|&d| (1..=64).contains(&d)), "{depths:?}");
    }

    #[test]
    fn latency_run_keeps_searching() {
        let o = opts(99.0, 1000, true);
        let mut t = 0;
        let mut s = Search::new(&o, 4, t, 1_000_000);
        for _ in 0..20 {
            assert_eq!(window(&mut s, &mut t, 10, 0), Step::Go);
        }
        assert_eq!(s.depth(), 4);
    }

    #[test]
    fn at_100_percent_a_late_completion_ramps_down_at_once_and_is_fatal_at_depth_1() {
        let o = opts(100.0, 1_000_000, false);
        let mut s = Search::new(&o, 8, 0, 1_000_000);
        assert_eq!(s.completed(2_000_000), Step::Fatal);
        // Grown to 8 by hand: each late completion halves towards the low mark.
        let mut s = Search::new(&o, 8, 0, 1_000_000);
        s.qd = 8;
        assert_eq!(s.completed(2_000_000), Step::Quiesce);
        assert_eq!(s.depth(), 4);
        assert_eq!(s.completed(2_000_000), Step::Quiesce);
        assert_eq!(s.depth(), 2);
        assert_eq!(s.completed(2_000_000), Step::Quiesce);
        assert_eq!(s.depth(), 1);
        assert_eq!(s.completed(2_000_000), Step::Fatal);
    }

    #[test]
    fn a_window_without_completions_fails() {
        let o = opts(50.0, 0, false);
        let mut s = Search::new(&o, 8, 0, 1_000_000);
        s.completed(10);
        assert_eq!(s.check(1), Step::Go);
        assert_eq!(s.depth(), 2);
        // The new cycle has no completion yet: 0/0 fails.
        assert_eq!(s.check(2), Step::Quiesce);
        assert_eq!(s.depth(), 1);
    }

    #[test]
    fn options_parse_as_fio_reads_them() {
        let mut o = LatOpts::default();
        apply(&mut o, "max_latency", "1ms,20", "x").unwrap();
        assert_eq!(o.max_ns, [1_000_000, 20_000, 20_000]);
        assert!(apply(&mut o, "max_latency", "1,2,3,4", "x").is_err());
        apply(&mut o, "latency_target", "500000", "x").unwrap();
        assert_eq!(o.target_ns, 500_000_000);
        apply(&mut o, "latency_target", "10ms", "x").unwrap();
        assert_eq!(o.target_ns, 10_000_000);
        // fio's whole µs: `ns` is no unit of its (µs), the fraction is dropped.
        apply(&mut o, "latency_target", "10ns", "x").unwrap();
        assert_eq!(o.target_ns, 10_000);
        apply(&mut o, "max_latency", "1.5ms", "x").unwrap();
        assert_eq!(o.max_ns, [1_000; 3]);
        apply(&mut o, "latency_window", "5s", "x").unwrap();
        assert_eq!(o.window_us, 5_000_000);
        apply(&mut o, "latency_percentile", "99.9", "x").unwrap();
        assert_eq!(o.percentile, 99.9);
        apply(&mut o, "latency_run", "1", "x").unwrap();
        assert!(o.run);
        for (k, v) in [
            ("latency_target", "abc"),
            ("latency_target", "-5"),
            ("latency_window", "abc"),
            ("latency_percentile", "101"),
            ("latency_percentile", "-1"),
            ("latency_percentile", "abc"),
            ("latency_run", "2"),
        ] {
            let e = apply(&mut o, k, v, "job 'a'").unwrap_err().0;
            assert!(e.starts_with(&format!("job 'a': {k}={v}: expected")), "{e}");
        }
    }
}
