//! A clone's rate control and think time, as fio 3.33 paces a job: each direction with a
//! rate has a next issue time (linear: the bytes issued so far at the direction's bytes/s;
//! poisson: exponential gaps at the mean of its IOPS); a mixed job whose drawn direction is
//! ahead of its schedule takes the other one if that is due. `rate_min`/`rate_iops_min`
//! are checked over windows of `rate_cycle` after two seconds; think time waits after every
//! N I/Os. All times are clock ticks.

use super::engine::Dir;
use super::job::JobSpec;
use hostbench_core::rand::Rng;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// fio's flows: jobs sharing a `flow_id` issue I/Os in the ratio of their `flow` weights.
/// Per id, the I/Os counted so far (from 1, as fio) and the weight of the clones that have
/// not ended (every clone's from the start, as fio adds them when it sets jobs up).
pub(super) struct Flows(HashMap<u32, (AtomicU64, AtomicU64)>);

impl Flows {
    pub(super) fn new(jobs: &[JobSpec], threads: &[(usize, u32)]) -> Flows {
        let mut m: HashMap<u32, (AtomicU64, AtomicU64)> = HashMap::new();
        for &(ji, _) in threads {
            let j = &jobs[ji];
            if j.flow > 0 {
                let e = m
                    .entry(j.flow_id)
                    .or_insert_with(|| (AtomicU64::new(1), AtomicU64::new(0)));
                e.1.fetch_add(j.flow as u64, Relaxed);
            }
        }
        Flows(m)
    }

    /// fio's `flow_threshold_exceeded`: whether a clone of weight `flow` in flow `id` that
    /// has counted `mine` I/Os may issue the next one now (then it is counted).
    pub(super) fn allows(&self, id: u32, flow: u32, mine: &mut u64) -> bool {
        let Some((count, weight)) = self.0.get(&id) else {
            return true;
        };
        let c = count.load(Relaxed).max(1) as f64;
        let w = weight.load(Relaxed).max(1) as f64;
        if *mine as f64 / c > flow as f64 / w {
            return false;
        }
        count.fetch_add(1, Relaxed);
        *mine += 1;
        true
    }

    /// A clone of weight `flow` that counted `mine` I/Os ended: the others go on without it.
    pub(super) fn leave(&self, id: u32, flow: u32, mine: u64) {
        if let Some((count, weight)) = self.0.get(&id) {
            count.fetch_sub(mine, Relaxed);
            weight.fetch_sub(flow as u64, Relaxed);
        }
    }
}

/// The schedule of a clone's rated directions.
pub(super) struct Pacer {
    /// Bytes/s per direction (0 = not limited).
    bps: [u64; 2],
    /// Mean gap between I/Os of a direction in ticks (poisson only).
    gap: [f64; 2],
    poisson: bool,
    /// Whether both directions are drawn (a mixed job may switch to the other one).
    mixed: bool,
    ticks_per_s: f64,
    epoch: u64,
    issued: [u64; 2],
    /// Next issue time per direction (absolute ticks).
    next: [u64; 2],
    next_f: [f64; 2],
}

impl Pacer {
    pub(super) fn new(j: &JobSpec, read_pct: u32, ticks_per_s: f64) -> Pacer {
        let bps = [j.rate_bps(0), j.rate_bps(1)];
        let gap = std::array::from_fn(|d| {
            let iops = bps[d] / j.bsz[d].min.max(1);
            if iops == 0 {
                0.0
            } else {
                ticks_per_s / iops as f64
            }
        });
        Pacer {
            bps,
            gap,
            poisson: j.rate.poisson,
            mixed: read_pct > 0 && read_pct < 100,
            ticks_per_s,
            epoch: 0,
            issued: [0; 2],
            next: [0; 2],
            next_f: [0.0; 2],
        }
    }

    /// Whether any direction is limited.
    pub(super) fn active(&self) -> bool {
        self.bps[0] > 0 || self.bps[1] > 0
    }

    /// Starts the schedule at `t` (the clone's start).
    pub(super) fn start(&mut self, t: u64) {
        self.epoch = t;
        self.issued = [0; 2];
        self.next = [t; 2];
        self.next_f = [t as f64; 2];
    }

    /// fio's `rate_ddir`: the direction to issue instead of `dir` and when it is due
    /// (`None`: not limited, now).
    pub(super) fn choose(&self, dir: Dir, now: u64) -> (Dir, Option<u64>) {
        let d = dir as usize;
        // Trims are not paced (their rate is read and unused).
        if d > 1 || self.bps[d] == 0 {
            return (dir, None);
        }
        if self.next[d] <= now || !self.mixed {
            return (dir, Some(self.next[d]));
        }
        let o = 1 - d;
        let other = if o == 0 { Dir::Read } else { Dir::Write };
        if self.bps[o] == 0 {
            return (other, None);
        }
        if self.next[o] <= now || self.next[o] < self.next[d] {
            return (other, Some(self.next[o]));
        }
        (dir, Some(self.next[d]))
    }

    /// Moves direction `dir`'s next issue time on after an I/O of `len` bytes.
    pub(super) fn issued(&mut self, dir: Dir, len: u64, rng: &mut Rng) {
        let d = dir as usize;
        if d > 1 || self.bps[d] == 0 {
            return;
        }
        self.issued[d] += len;
        if self.poisson {
            let u = rng.next_f64();
            self.next_f[d] += -self.gap[d] * (1.0 - u).ln();
        } else {
            self.next_f[d] =
                self.epoch as f64 + self.issued[d] as f64 * self.ticks_per_s / self.bps[d] as f64;
        }
        self.next[d] = self.next_f[d] as u64;
    }

    /// `rate_ignore_thinktime`: `ticks` spent thinking are not owed to the rate.
    pub(super) fn shift(&mut self, ticks: u64) {
        self.epoch += ticks;
        for d in 0..2 {
            self.next_f[d] += ticks as f64;
            self.next[d] = self.next_f[d] as u64;
        }
    }
}

/// fio's minimum-rate check (`rate_min`, `rate_iops_min`, `rate_cycle`).
pub(super) struct MinRate {
    min_bps: [u64; 2],
    min_iops: [u64; 2],
    cycle: u64,
    settle_end: u64,
    ticks_per_ms: f64,
    last: [Option<(u64, u64, u64)>; 2],
}

impl MinRate {
    /// `None` when the job sets no minimum.
    pub(super) fn new(j: &JobSpec, start: u64, ticks_per_s: f64) -> Option<MinRate> {
        let r = &j.rate;
        if r.min_bps == [0; 2] && r.min_iops == [0; 2] {
            return None;
        }
        let ticks_per_ms = ticks_per_s / 1000.0;
        Some(MinRate {
            min_bps: r.min_bps,
            min_iops: r.min_iops,
            cycle: r.cycle_ms,
            // fio lets a job settle for two seconds before it checks.
            settle_end: start + (2000.0 * ticks_per_ms) as u64,
            ticks_per_ms,
            last: [None; 2],
        })
    }

    /// Checks direction `d` at `now` with `bytes` and `ios` done so far: fio's message when
    /// the rate of the last window is below the minimum.
    pub(super) fn check(
        &mut self,
        name: &str,
        d: usize,
        now: u64,
        bytes: u64,
        ios: u64,
    ) -> Option<String> {
        if (self.min_bps[d] == 0 && self.min_iops[d] == 0) || bytes == 0 || now < self.settle_end {
            return None;
        }
        if let Some((t, b, n)) = self.last[d] {
            let spent = ((now - t) as f64 / self.ticks_per_ms) as u64;
            if spent < self.cycle || spent == 0 {
                return None;
            }
            if self.min_bps[d] > 0 {
                let got = (bytes - b) * 1000 / spent;
                if got < self.min_bps[d] {
                    return Some(format!(
                        "{name}: rate_min={}B/s not met, got {got}B/s",
                        self.min_bps[d]
                    ));
                }
            } else {
                let got = (ios - n) * 1000 / spent;
                if got < self.min_iops[d] {
                    return Some(format!(
                        "{name}: rate_iops_min={} not met, got {got} IOPS",
                        self.min_iops[d]
                    ));
                }
            }
        }
        self.last[d] = Some((now, bytes, ios));
        None
    }
}

/// When a clone thinks (fio's `thinktime*`).
pub(super) struct Think {
    pub(super) us: u64,
    spin_us: u64,
    blocks: u64,
    blocks_set: bool,
    pub(super) at_issue: bool,
    iotime: u64,
    /// I/Os counted (issued or completed) and the count at the last think.
    pub(super) count: u64,
    last_count: u64,
    /// The count when a queue's think was found due ([`Think::arm`]): what is reaped
    /// while the queue drains counts toward the next think, as fio's `handle_thinktime`
    /// keeps the count it tested (before `io_u_quiesce`).
    armed: Option<u64>,
    last_time: u64,
    /// When the last think ended: no I/O was meant to start before it.
    pub(super) until: u64,
}

impl Think {
    /// `None` when the job does not think.
    pub(super) fn new(j: &JobSpec, start: u64, ticks_per_s: f64) -> Option<Think> {
        let t = &j.think;
        if t.us == 0 {
            return None;
        }
        Some(Think {
            us: t.us,
            spin_us: t.spin_us.min(t.us),
            blocks: t.blocks,
            blocks_set: t.blocks_set,
            at_issue: t.at_issue,
            iotime: (t.iotime_us as f64 * ticks_per_s / 1e6) as u64,
            count: 0,
            last_count: 0,
            armed: None,
            last_time: start,
            until: 0,
        })
    }

    /// Whether the clone is to think now (fio's stall test).
    pub(super) fn due(&self, now: u64) -> bool {
        if self.iotime > 0 {
            if now - self.last_time.min(now) >= self.iotime {
                return true;
            }
            if !self.blocks_set {
                return false;
            }
        }
        self.count >= self.last_count + self.blocks
    }

    /// A think was found due while I/Os are in flight: it happens once they are done,
    /// and the next counts from now.
    pub(super) fn arm(&mut self) {
        self.armed = Some(self.count);
    }

    /// The think itself (nothing is in flight): spins, then sleeps the rest, never past
    /// the clone's time limit. Returns the ticks it took.
    pub(super) fn think(
        &mut self,
        ctl: &mut hostbench_core::runner::RunControl<'_>,
        told_to_stop: &dyn Fn() -> bool,
    ) -> u64 {
        let clock = ctl.clock();
        let t0 = ctl.now();
        let deadline = ctl.deadline();
        let cap = |t: u64| t.min(deadline);
        let spin_end = cap(t0 + clock.from_ns(self.spin_us * 1000));
        let mut now = t0;
        while now < spin_end && !ctl.aborted() {
            std::hint::spin_loop();
            now = ctl.now();
        }
        let end = cap(t0 + clock.from_ns(self.us * 1000));
        // One sleep, as fio's `usec_sleep` (so the clone's context switches are fio's:
        // one per think), woken by `exitall` or a Ctrl-C.
        if now < end && !ctl.aborted() {
            now = ctl.sleep_until(end, told_to_stop);
        }
        self.last_count = self.armed.take().unwrap_or(self.count);
        self.last_time = now;
        self.until = now;
        now - t0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::fio::job::jobs_from_sections;
    use crate::disk::fio::jobfile::parse_ini;

    fn job(text: &str) -> JobSpec {
        let s = parse_ini(text, "t.fio", &|_: &str| None).unwrap();
        jobs_from_sections(&s).unwrap().remove(0)
    }

    #[test]
    fn rates_per_direction_as_fio_reads_them() {
        let j = job("[a]\nrw=randrw\nbs=4k,8k\nrate_iops=100,10\n");
        assert_eq!((j.rate_bps(0), j.rate_bps(1)), (409_600, 81_920));
        let j = job("[a]\nrw=randrw\nrate=1m,\n");
        assert_eq!((j.rate_bps(0), j.rate_bps(1)), (1 << 20, 0));
        let j = job("[a]\nrw=randrw\nrate=,2m\nratemin=,1m\nratecycle=500\n");
        assert_eq!((j.rate_bps(0), j.rate_bps(1)), (0, 2 << 20));
        assert_eq!((j.rate.min_bps, j.rate.cycle_ms), ([0, 1 << 20], 500));
        let j = job("[a]\nthinktime=2ms\nthinktime_spin=500\nthinktime_iotime=1\n");
        assert_eq!(
            (j.think.us, j.think.spin_us, j.think.iotime_us),
            (2000, 500, 1_000_000)
        );
        assert!(!j.think.blocks_set);
    }

    #[test]
    fn linear_pacing_follows_the_bytes_issued() {
        let j = job("[a]\nrw=read\nbs=4k\nrate=8k\n");
        let mut p = Pacer::new(&j, 100, 1e9);
        p.start(1000);
        let mut rng = Rng::for_thread(1, 0);
        assert_eq!(p.choose(Dir::Read, 1000), (Dir::Read, Some(1000)));
        p.issued(Dir::Read, 4096, &mut rng);
        // 4 KiB at 8 KiB/s: half a second later.
        assert_eq!(p.choose(Dir::Read, 1000).1, Some(1000 + 500_000_000));
        p.shift(7);
        assert_eq!(p.choose(Dir::Read, 0).1, Some(1007 + 500_000_000));
    }

    #[test]
    fn a_mixed_job_ahead_in_one_direction_takes_the_other() {
        let j = job("[a]\nrw=randrw\nbs=4k\nrate_iops=10\n");
        let mut p = Pacer::new(&j, 50, 1e9);
        p.start(0);
        let mut rng = Rng::for_thread(1, 0);
        p.issued(Dir::Read, 4096, &mut rng);
        p.issued(Dir::Read, 4096, &mut rng);
        p.issued(Dir::Write, 4096, &mut rng);
        // Reads are ahead (next at 0.2 s), writes are due: the write goes.
        assert_eq!(p.choose(Dir::Read, 1), (Dir::Write, Some(100_000_000)));
        assert_eq!(p.choose(Dir::Write, 1), (Dir::Write, Some(100_000_000)));
        // Both ahead: the earlier one waits.
        assert_eq!(p.choose(Dir::Read, 0), (Dir::Write, Some(100_000_000)));
        // A job of one direction never switches.
        let j = job("[a]\nrw=read\nbs=4k\nrate_iops=10\n");
        let mut p = Pacer::new(&j, 100, 1e9);
        p.start(0);
        p.issued(Dir::Read, 4096, &mut rng);
        assert_eq!(p.choose(Dir::Read, 5), (Dir::Read, Some(100_000_000)));
        // A direction without a rate is never held back.
        let j = job("[a]\nrw=randrw\nbs=4k\nrate_iops=,10\n");
        let p = Pacer::new(&j, 50, 1e9);
        assert_eq!(p.choose(Dir::Read, 0), (Dir::Read, None));
    }

    #[test]
    fn poisson_gaps_are_exponential_with_the_rates_mean() {
        let j = job("[a]\nrw=read\nbs=4k\nrate_iops=1000\nrate_process=poisson\n");
        let mut p = Pacer::new(&j, 100, 1e9);
        p.start(0);
        let mut rng = Rng::for_thread(7, 0);
        let n = 20_000;
        let mut last = 0u64;
        let (mut sum, mut sq) = (0.0, 0.0);
        for _ in 0..n {
            p.issued(Dir::Read, 4096, &mut rng);
            let t = p.choose(Dir::Read, 0).1.unwrap();
            let g = (t - last) as f64;
            last = t;
            sum += g;
            sq += g * g;
        }
        let mean = sum / n as f64;
        let cv = (sq / n as f64 - mean * mean).sqrt() / mean;
        // 1 ms on average; an exponential's standard deviation equals its mean.
        assert!((mean - 1e6).abs() < 0.03e6, "mean gap {mean} ns");
        assert!((cv - 1.0).abs() < 0.05, "coefficient of variation {cv}");
    }

    #[test]
    fn the_minimum_rate_is_checked_per_cycle_after_two_seconds() {
        let j = job("[a]\nrate_iops_min=100\nrate_cycle=500\n");
        let ms = 1_000_000u64;
        let mut m = MinRate::new(&j, 0, 1e9).unwrap();
        // Settling: nothing is checked before 2 s.
        assert_eq!(m.check("a", 0, 1000 * ms, 4096, 1), None);
        // The first check sets the baseline; a window shorter than rate_cycle is skipped.
        assert_eq!(m.check("a", 0, 2000 * ms, 4096, 10), None);
        assert_eq!(m.check("a", 0, 2400 * ms, 4096, 10), None);
        // 60 I/Os in 500 ms: 120 IOPS, met.
        assert_eq!(m.check("a", 0, 2500 * ms, 8192, 70), None);
        // 40 in the next 500 ms: 80 IOPS.
        assert_eq!(
            m.check("a", 0, 3000 * ms, 9000, 110).as_deref(),
            Some("a: rate_iops_min=100 not met, got 80 IOPS")
        );
        let j = job("[a]\nrate_min=1m\n");
        let mut m = MinRate::new(&j, 0, 1e9).unwrap();
        assert_eq!(m.check("b", 0, 2000 * ms, 1, 1), None);
        assert_eq!(
            m.check("b", 0, 3000 * ms, 1 + 1000, 2).as_deref(),
            Some("b: rate_min=1048576B/s not met, got 1000B/s")
        );
        assert!(MinRate::new(&job("[a]\n"), 0, 1e9).is_none());
    }

    #[test]
    fn think_time_comes_after_the_blocks_or_the_io_time() {
        let j = job("[a]\nthinktime=1ms\nthinktime_blocks=4\n");
        let mut t = Think::new(&j, 0, 1e9).unwrap();
        t.count = 3;
        assert!(!t.due(0));
        t.count = 4;
        assert!(t.due(0));
        // thinktime_iotime alone: the block count is ignored.
        let j = job("[a]\nthinktime=1ms\nthinktime_iotime=1\n");
        let mut t = Think::new(&j, 0, 1e9).unwrap();
        t.count = 100;
        assert!(!t.due(999_999_999));
        assert!(t.due(1_000_000_000));
        // Both: whichever comes first.
        let j = job("[a]\nthinktime=1ms\nthinktime_iotime=1\nthinktime_blocks=10\n");
        let mut t = Think::new(&j, 0, 1e9).unwrap();
        t.count = 10;
        assert!(t.due(5));
        assert!(Think::new(&job("[a]\n"), 0, 1e9).is_none());
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::disk::fio::job::jobs_from_sections;
    use crate::disk::fio::jobfile::parse_ini;

    #[test]
    fn a_flow_shares_ios_by_weight_and_frees_them_when_a_job_ends() {
        let text = "[a]\nflow=3\nflow_id=4\n[b]\nflow=1\nflow_id=4\n[c]\n";
        let jobs = jobs_from_sections(&parse_ini(text, "t", &|_: &str| None).unwrap()).unwrap();
        let f = Flows::new(&jobs, &[(0, 0), (1, 0), (2, 0)]);
        let (mut a, mut b) = (0u64, 0u64);
        // Both try in turn: a gets three I/Os for each of b's.
        for _ in 0..4000 {
            f.allows(4, 3, &mut a);
            f.allows(4, 1, &mut b);
        }
        let r = a as f64 / b as f64;
        assert!((r - 3.0).abs() < 0.05, "{a}:{b}");
        // b ends: a is never held back again.
        f.leave(4, 1, b);
        assert!((0..100).all(|_| f.allows(4, 3, &mut a)));
        // A job outside any flow is never held back.
        let mut c = 0;
        assert!(f.allows(0, 1, &mut c));
    }
}
