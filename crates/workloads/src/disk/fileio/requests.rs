//! sysbench's request generator ([`Gen`]): the shared cursor of the sequential modes, the
//! random block of the random modes, `rndrw`'s read/write ratio and the periodic fsync
//! cycle, in one atomic word.

use super::Mode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What the generator hands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Fsync this file (a periodic fsync event).
    Fsync(u32),
    /// The `index`-th I/O request (0-based, over all threads).
    Io {
        /// A write (else a read).
        write: bool,
        /// Requests generated before this one.
        index: u64,
    },
}

const REQ_BITS: u32 = 42;
const REQ_MASK: u64 = (1 << REQ_BITS) - 1;
const FILE_SHIFT: u32 = REQ_BITS;
const FILE_MASK: u64 = (1 << 21) - 1;
const DIRTY: u64 = 1 << 63;

/// sysbench's request generator state, shared by all threads: `req_performed`, the fsync
/// cursor and `is_dirty`, packed in one word and advanced with compare-and-swap (sysbench
/// holds a global mutex for the same step), plus rndrw's completed-request counts.
#[derive(Debug)]
pub struct Gen {
    mode: Mode,
    num: u64,
    freq: u64,
    rw_ratio: f64,
    state: AtomicU64,
    reads_done: AtomicU64,
    writes_done: AtomicU64,
}

impl Gen {
    /// A fresh generator.
    pub fn new(mode: Mode, num: u64, fsync_freq: u64, rw_ratio: f64) -> Gen {
        Gen {
            mode,
            num,
            freq: fsync_freq,
            rw_ratio,
            state: AtomicU64::new(0),
            reads_done: AtomicU64::new(0),
            writes_done: AtomicU64::new(0),
        }
    }

    /// Whether the next I/O is a write: fixed by the mode, except rndrw, which reads while
    /// `(reads + 1) / (writes + 1) < ratio` over completed requests.
    #[inline]
    pub fn wants_write(&self) -> bool {
        match self.mode {
            Mode::SeqWr | Mode::SeqRewr | Mode::RndWr => true,
            Mode::SeqRd | Mode::RndRd => false,
            Mode::RndRw => {
                let r = self.reads_done.load(Relaxed);
                let w = self.writes_done.load(Relaxed);
                (r + 1) as f64 / (w + 1) as f64 >= self.rw_ratio
            }
        }
    }

    /// Counts a completed rndrw request (the ratio rule reads these).
    #[inline]
    pub fn completed(&self, write: bool) {
        if self.mode == Mode::RndRw {
            let c = if write {
                &self.writes_done
            } else {
                &self.reads_done
            };
            c.fetch_add(1, Relaxed);
        }
    }

    /// The next request (sysbench's `file_get_seq_request` / `file_get_rnd_request`).
    #[inline]
    pub fn next(&self, write: bool) -> Next {
        let mut cur = self.state.load(Relaxed);
        loop {
            let req = cur & REQ_MASK;
            let file = (cur >> FILE_SHIFT) & FILE_MASK;
            let dirty = cur & DIRTY != 0;
            // Sequential modes look at the fsync cycle only for writes; random ones always.
            let may_sync = write || !self.mode.sequential();
            let (new, out) = if self.freq != 0 && may_sync && dirty && req.is_multiple_of(self.freq)
            {
                let f = file + 1;
                let new = if f == self.num {
                    req
                } else {
                    req | (f << FILE_SHIFT) | DIRTY
                };
                (new, Next::Fsync(file as u32))
            } else {
                let d = if write || dirty { DIRTY } else { 0 };
                let new = ((req + 1) & REQ_MASK) | (file << FILE_SHIFT) | d;
                (new, Next::Io { write, index: req })
            };
            match self.state.compare_exchange_weak(cur, new, Relaxed, Relaxed) {
                Ok(_) => return out,
                Err(now) => cur = now,
            }
        }
    }
}

/// Where the `index`-th sequential request goes: (file, offset, length). One global cursor
/// walks the files in order, `req_size` at a time, and wraps after the last file.
#[inline]
pub fn seq_request(index: u64, num: u64, file_size: u64, req_size: u64) -> (u64, u64, u64) {
    let per_file = file_size.div_ceil(req_size);
    let file = (index / per_file) % num;
    let pos = (index % per_file) * req_size;
    (file, pos, req_size.min(file_size - pos))
}

/// Where a random request goes for a uniform `u` in [0, 1): a block-aligned offset over the
/// data set, split into (file, offset, length).
#[inline]
pub fn rnd_request(u: f64, num: u64, file_size: u64, block: u64) -> (u64, u64, u64) {
    let total = file_size * num;
    let mut off = (u * total as f64) as u64;
    off = off.min(total - 1);
    off -= off % block;
    let file = off / file_size;
    let pos = off % file_size;
    (file, pos, block.min(file_size - pos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::rand::Rng;

    /// Runs the generator single-threaded for `events` events, completing each request at
    /// once, and counts (reads, writes, fsyncs).
    fn simulate(mode: Mode, num: u64, freq: u64, ratio: f64, events: u64) -> (u64, u64, u64) {
        let g = Gen::new(mode, num, freq, ratio);
        let (mut r, mut w, mut f) = (0, 0, 0);
        for _ in 0..events {
            match g.next(g.wants_write()) {
                Next::Fsync(_) => f += 1,
                Next::Io { write, .. } => {
                    g.completed(write);
                    if write { w += 1 } else { r += 1 }
                }
            }
        }
        (r, w, f)
    }

    /// Counts measured with Debian's sysbench 1.0.20 on this machine:
    /// `sysbench fileio --file-num=4 --file-total-size=4M --file-test-mode=M --events=1000
    /// --time=0 --file-fsync-end=off run` (rates × time, and `--debug` request logs): rndrw
    /// 578 reads / 386 writes / 36 fsyncs; rndwr and seqrewr 964 writes / 36 fsyncs; seqrd
    /// 1000 reads.
    #[test]
    fn counts_match_sysbench() {
        assert_eq!(simulate(Mode::RndRw, 4, 100, 1.5, 1000), (578, 386, 36));
        assert_eq!(simulate(Mode::RndWr, 4, 100, 1.5, 1000), (0, 964, 36));
        assert_eq!(simulate(Mode::SeqRewr, 4, 100, 1.5, 1000), (0, 964, 36));
        assert_eq!(simulate(Mode::SeqRd, 4, 100, 1.5, 1000), (1000, 0, 0));
        assert_eq!(simulate(Mode::RndRd, 4, 100, 1.5, 1000), (1000, 0, 0));
    }

    #[test]
    fn fsync_cycle_shape() {
        // 128 files, freq 100 (the defaults): 100 writes, then 128 fsyncs, then 100 writes...
        let g = Gen::new(Mode::RndWr, 128, 100, 1.5);
        let seq: Vec<bool> = (0..656)
            .map(|_| matches!(g.next(true), Next::Fsync(_)))
            .collect();
        assert!(seq[..100].iter().all(|f| !f));
        assert!(seq[100..228].iter().all(|f| *f));
        assert!(seq[228..328].iter().all(|f| !f));
        assert!(seq[328..456].iter().all(|f| *f));
        // Fsyncs visit every file in order.
        let g = Gen::new(Mode::SeqWr, 3, 2, 1.5);
        let got: Vec<Next> = (0..7).map(|_| g.next(true)).collect();
        assert_eq!(got[2..5], [Next::Fsync(0), Next::Fsync(1), Next::Fsync(2)]);
        assert_eq!(
            got[5],
            Next::Io {
                write: true,
                index: 2
            }
        );
        // freq 0: never.
        assert_eq!(simulate(Mode::RndWr, 4, 0, 1.5, 500), (0, 500, 0));
        // Reads never dirty: rndrd has no fsync events even with a frequency.
        assert_eq!(simulate(Mode::RndRd, 4, 1, 1.5, 50).2, 0);
    }

    #[test]
    fn rndrw_pattern_and_ratio() {
        let g = Gen::new(Mode::RndRw, 4, 0, 1.5);
        let pat: String = (0..12)
            .map(|_| {
                let Next::Io { write, .. } = g.next(g.wants_write()) else {
                    unreachable!()
                };
                g.completed(write);
                if write { 'W' } else { 'R' }
            })
            .collect();
        // sysbench --debug on this machine: operations 1 2 1 2 1 1 2 1 2 1 1 2.
        assert_eq!(pat, "RWRWRRWRWRRW");
        let (r, w, _) = simulate(Mode::RndRw, 4, 0, 3.0, 4000);
        assert!((r as f64 / w as f64 - 3.0).abs() < 0.01);
        // Ratio 0: only writes.
        assert_eq!(simulate(Mode::RndRw, 4, 0, 0.0, 10), (0, 10, 0));
    }

    #[test]
    fn sequential_cursor_walks_files_and_wraps() {
        // 2 files of 40 KiB, 16 KiB requests: 16+16+8 per file.
        let fs = 40 << 10;
        let rs = 16 << 10;
        let v: Vec<_> = (0..7).map(|i| seq_request(i, 2, fs, rs)).collect();
        assert_eq!(v[0], (0, 0, rs));
        assert_eq!(v[1], (0, rs, rs));
        assert_eq!(v[2], (0, 2 * rs, 8 << 10));
        assert_eq!(v[3], (1, 0, rs));
        assert_eq!(v[5], (1, 2 * rs, 8 << 10));
        assert_eq!(v[6], (0, 0, rs), "wraps to file 0");
    }

    #[test]
    fn random_requests_stay_in_bounds_and_cover_files() {
        let mut rng = Rng::for_thread(42, 0);
        let (num, fs, b) = (4u64, 1u64 << 20, 16u64 << 10);
        let mut seen = [0u64; 4];
        for _ in 0..10_000 {
            let (f, pos, len) = rnd_request(rng.next_f64(), num, fs, b);
            assert!(f < num && pos % b == 0 && pos + len <= fs && len == b);
            seen[f as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 2000), "{seen:?}");
        assert_eq!(rnd_request(0.999_999_999_999, num, fs, b).0, 3);
        // Sizes that do not divide: the last block of a file is short, never past the end.
        let (f, pos, len) = rnd_request(0.999_999, 3, 10_000, 4096);
        assert!(f < 3 && pos + len <= 10_000);
    }
}
