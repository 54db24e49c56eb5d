//! The direction of a mixed job's next I/O, as fio 3.33 chooses it (`get_rw_ddir`,
//! `get_rand_ddir`, `set_rwmix_bytes` in io_u.c).
//!
//! fio does not draw a direction for every I/O. It keeps the direction it has until that
//! direction's issue count reaches a limit, then draws (`rand_between(rwmix_state, 1,
//! 100)` against `rwmixread`). When the draw changes the direction, the limit becomes the
//! count of the direction being left times the new direction's percentage, over 100 —
//! fio compares that figure with the NEW direction's count, so a direction that has fallen
//! behind keeps its turn for a run of I/Os. A draw that keeps the direction leaves the
//! limit as it was (so the next I/O draws again). The counts are fio's `io_issues`: every
//! I/O issued since the job started or its ramp time ended (`reset_all_stats`); the limit
//! is cleared and the generator seeded again at each new loop (`clear_io_state`, under
//! `randrepeat`). The generator is fio's 32-bit Tausworthe (`rwmix_state` is always
//! 32-bit), seeded with fio's `FIO_RAND_MIX_OFF` seed of the clone's thread.
//!
//! Drawing per I/O gives the same proportions on average but other counts in each run:
//! fio's `--rw=randrw --size=1m --bs=4k` issues 132 reads and 124 writes every time, and
//! a per-I/O draw gave 122/134 — a figure users compare.

use super::job::JobSpec;
use super::verify::FioRand;
#[cfg(test)]
use super::verify::fio_seed;

/// fio's `FIO_RAND_MIX_OFF`.
const FIO_RAND_MIX_OFF: u64 = 4;

/// The direction state of one clone of a mixed job (`0 < read_pct < 100`).
#[derive(Clone, Debug)]
pub(super) struct Mix {
    /// `rwmix[DDIR_READ]`: the percentage of reads.
    read_pct: u32,
    /// The seed the generator starts each loop from.
    seed: u64,
    rng: FioRand,
    /// `rwmix_ddir`: 0 read, 1 write (fio's zeroed thread data starts with reads).
    dir: usize,
    /// `io_issues[READ]`, `io_issues[WRITE]`.
    issues: [u64; 2],
    /// `rwmix_issues`.
    limit: u64,
}

impl Mix {
    /// The state of a clone with fio thread number `thread` (1-based): under `randrepeat`
    /// or an explicit `randseed` (`repeat`), fio's seed from `randseed` (0x89 unset);
    /// otherwise `fallback` (fio reads the system's generator).
    #[cfg(test)]
    pub(super) fn new(read_pct: u32, repeat: Option<u64>, thread: u64, fallback: u64) -> Mix {
        let seed = match repeat {
            Some(r) => fio_seed(r, thread, FIO_RAND_MIX_OFF),
            None => fallback,
        };
        Mix::seeded(read_pct, seed)
    }

    /// The state of a clone of job `j` with fio thread number `thread` (1-based): fio's
    /// `FIO_RAND_MIX_OFF` seed ([`JobSpec::fio_rand_seed`]), else `fallback` (fio reads
    /// the system's generator).
    pub(super) fn for_job(j: &JobSpec, thread: u64, fallback: u64) -> Mix {
        let seed = j
            .fio_rand_seed(thread, FIO_RAND_MIX_OFF)
            .unwrap_or(fallback);
        Mix::seeded(j.rw.read_pct(j.rwmixread), seed)
    }

    fn seeded(read_pct: u32, seed: u64) -> Mix {
        Mix {
            read_pct,
            seed,
            rng: FioRand::new(seed, false),
            dir: 0,
            issues: [0; 2],
            limit: 0,
        }
    }

    /// The direction of the next I/O (0 read, 1 write): fio's `get_rw_ddir` before its
    /// rate check.
    #[inline]
    pub(super) fn next(&mut self) -> usize {
        if self.issues[self.dir] >= self.limit {
            // rand_between(1, 100): 1 + rand32_upto(99).
            let r = self.rng.draw() as u32;
            let v = 1 + (100.0 * (f64::from(r) / 4_294_967_296.0)) as u32;
            let d = usize::from(v > self.read_pct);
            if d != self.dir {
                let pct = if d == 0 {
                    self.read_pct
                } else {
                    100 - self.read_pct
                };
                self.limit = self.issues[self.dir] * u64::from(pct) / 100;
            }
            self.dir = d;
        }
        self.dir
    }

    /// The direction the rate limit settled on (fio stores `rate_ddir`'s answer back in
    /// `rwmix_ddir`).
    #[inline]
    pub(super) fn settle(&mut self, dir: usize) {
        if dir < 2 {
            self.dir = dir;
        }
    }

    /// An I/O of direction `dir` (0 read, 1 write; others are not counted) was issued.
    #[inline]
    pub(super) fn issued(&mut self, dir: usize) {
        if let Some(n) = self.issues.get_mut(dir) {
            *n += 1;
        }
    }

    /// Ramp time ended: fio's `reset_all_stats` clears the counts and the limit.
    pub(super) fn ramp_over(&mut self) {
        self.issues = [0; 2];
        self.limit = 0;
    }

    /// A new loop starts. fio's loop ends when it asks for one more I/O and the file has
    /// none left: the direction of that I/O was drawn first (one [`Self::next`], which may
    /// change the direction, spent; the caller makes it). Then `clear_io_state` clears the
    /// limit and, under `randrepeat`, seeds the generator again (the counts and the
    /// direction are kept).
    pub(super) fn loop_restart(&mut self, repeat: bool) {
        self.limit = 0;
        if repeat {
            self.rng = FioRand::new(self.seed, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(m: &mut Mix, n: usize) -> [u64; 2] {
        let mut c = [0u64; 2];
        for _ in 0..n {
            let d = m.next();
            m.issued(d);
            c[d] += 1;
        }
        c
    }

    #[test]
    fn the_directions_come_in_fios_order() {
        // fio 3.33's write_iolog of `--rw=randrw --size=1m --bs=4k --ioengine=psync
        // --rwmixread=P`: the first 120 directions, and the reads of all 256 (measured).
        let fio = [
            (
                50,
                "rrrwrrwwwrwrwrrrwwrrwwwwrwrwwwwrrwrwwrrwwrwrrwwrwwwrrwrwrwwrrwwwwwrrrwrwwrwwww\
                 rwrrrwrrwwrwwwrrrwrrwwwrrwrrrwwrrrwwrwrrwr",
                132,
            ),
            (
                70,
                "rrrwrrwrrrwrwrrrrrrrwwrwrrrwwwrrrwrwwrrwrrwrrwrrwwrrrrrwrrwrrrwrrrrrrwrrrrwwwr\
                 rwrrrwrrwwrwrwrrrwrrrrwrrrrrrwrrrrwwrrrrwr",
                184,
            ),
        ];
        for (pct, order, reads) in fio {
            let mut m = Mix::new(pct, Some(0x89), 1, 0);
            let dirs: String = (0..256)
                .map(|_| {
                    let d = m.next();
                    m.issued(d);
                    if d == 0 { 'r' } else { 'w' }
                })
                .collect();
            assert_eq!(&dirs[..120], order, "rwmixread={pct}");
            assert_eq!(dirs.matches('r').count(), reads, "rwmixread={pct}");
        }
    }

    #[test]
    fn the_percentage_holds_over_a_long_run() {
        for pct in [10u32, 30, 70, 90] {
            let mut m = Mix::new(pct, Some(0x89), 3, 0);
            let c = run(&mut m, 100_000);
            let got = c[0] as f64 / 1000.0;
            assert!((got - f64::from(pct)).abs() < 2.0, "{pct}: {got}");
        }
    }

    #[test]
    fn a_new_loop_starts_the_draws_over_and_ramp_clears_the_counts() {
        let mut a = Mix::new(50, Some(0x89), 1, 0);
        let first = run(&mut a, 10);
        a.ramp_over();
        assert_eq!(a.issues, [0, 0]);
        let mut b = Mix::new(50, Some(0x89), 1, 0);
        run(&mut b, 10);
        b.next();
        b.loop_restart(true);
        let mut c = Mix::new(50, Some(0x89), 1, 0);
        // Same generator state after the reseed as a fresh one.
        assert_eq!(b.rng.draw(), c.rng.draw());
        assert_eq!(first[0] + first[1], 10);
    }
}
