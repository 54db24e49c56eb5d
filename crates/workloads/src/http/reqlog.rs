//! Per-request records (ab's `-g`): kept only when asked for, in memory allocated before the
//! run, bounded by a capacity fixed up front.
//!
//! Latencies otherwise live in histograms of fixed size; this is the one place a run keeps
//! something per request, because ab's gnuplot file lists every request. Invariants:
//! - nothing is allocated while the run goes: [`RequestLog::prepare`] allocates the whole
//!   capacity, in chunks, before the first request, and workers take chunks from that pool
//!   (one lock per [`CHUNK`] requests, none per request);
//! - at most `cap` records come back from [`RequestLog::take`], and they are the first `cap`
//!   responses to complete. The pool holds `cap + threads × CHUNK` slots, so a thread finds
//!   it empty only after more than `cap` earlier responses were kept (each other thread
//!   holds at most one partly filled chunk): whatever is dropped or cut off at the end
//!   completed after the first `cap`.

use hostbench_core::clock::Clock;
use hostbench_core::workload::WorkloadError;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Records per chunk a worker takes from the pool.
pub const CHUNK: usize = 1024;

/// One response's times, as ab keeps them (32 bytes, as in ab).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample {
    /// When the request started (its intended start; the connect call or the previous
    /// response's end on a kept-alive connection), Unix time in ns.
    pub start_unix_ns: u64,
    /// Connecting: connection established (TLS handshake included) − start; 0 on a reused
    /// connection.
    pub connect_ns: u64,
    /// First response byte − last request byte written.
    pub wait_ns: u64,
    /// Response complete − start (the latency the report's Total row counts).
    pub total_ns: u64,
}

impl Sample {
    /// When the response completed, Unix time in ns.
    pub fn done_unix_ns(&self) -> u64 {
        self.start_unix_ns.saturating_add(self.total_ns)
    }
}

/// The records of one run: a pool of empty chunks and the chunks workers filled.
#[derive(Debug)]
pub struct RequestLog {
    cap: usize,
    pool: Mutex<Vec<Box<[Sample]>>>,
    filled: Mutex<Vec<(Box<[Sample]>, usize)>>,
    dropped: AtomicU64,
}

/// What [`RequestLog::take`] hands back.
#[derive(Debug, Default)]
pub struct Taken {
    /// The first responses to complete (at most the capacity), in completion order.
    pub samples: Vec<Sample>,
    /// Responses not kept (beyond the capacity).
    pub dropped: u64,
}

impl RequestLog {
    /// A log that will keep at most `cap` records; nothing is allocated until
    /// [`prepare`](Self::prepare).
    pub fn new(cap: usize) -> RequestLog {
        RequestLog {
            cap,
            pool: Mutex::new(Vec::new()),
            filled: Mutex::new(Vec::new()),
            dropped: AtomicU64::new(0),
        }
    }

    /// Most records kept.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Bytes [`prepare`](Self::prepare) allocates for `threads` workers.
    pub fn bytes_needed(cap: usize, threads: usize) -> u64 {
        let slots = cap as u64 + (threads.max(1) * CHUNK) as u64;
        slots * std::mem::size_of::<Sample>() as u64
    }

    /// Allocates the pool for `threads` workers (before the run). Fails, rather than
    /// aborting, when the memory cannot be had.
    pub fn prepare(&self, threads: usize) -> Result<(), WorkloadError> {
        let mut left = self.cap + threads.max(1) * CHUNK;
        let mut pool = lock(&self.pool);
        pool.clear();
        lock(&self.filled).clear();
        self.dropped.store(0, Relaxed);
        while left > 0 {
            let n = left.min(CHUNK);
            let mut v: Vec<Sample> = Vec::new();
            v.try_reserve_exact(n).map_err(|e| {
                WorkloadError::environment(format!(
                    "cannot allocate {} MiB for per-request records: {e}",
                    Self::bytes_needed(self.cap, threads) >> 20
                ))
            })?;
            v.resize(n, Sample::default());
            pool.push(v.into_boxed_slice());
            left -= n;
        }
        Ok(())
    }

    /// Every record kept, in completion order, cut to the capacity; the log is empty after.
    pub fn take(&self) -> Taken {
        let chunks = std::mem::take(&mut *lock(&self.filled));
        let mut samples = Vec::with_capacity(chunks.iter().map(|(_, n)| n).sum());
        for (c, n) in &chunks {
            samples.extend_from_slice(&c[..*n]);
        }
        drop(chunks);
        lock(&self.pool).clear();
        // Stable: responses completing in the same nanosecond keep the order they were kept in.
        samples.sort_by_key(Sample::done_unix_ns);
        let mut dropped = self.dropped.swap(0, Relaxed);
        if samples.len() > self.cap {
            dropped += (samples.len() - self.cap) as u64;
            samples.truncate(self.cap);
        }
        Taken { samples, dropped }
    }

    fn give(&self, chunk: Box<[Sample]>, len: usize) {
        if len > 0 {
            lock(&self.filled).push((chunk, len));
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One worker's end of a [`RequestLog`]: fills a chunk, takes the next from the pool when it
/// is full, hands what it filled back when dropped.
#[derive(Debug)]
pub struct LogWriter<'a> {
    log: &'a RequestLog,
    cur: Box<[Sample]>,
    len: usize,
    dropped: u64,
    clock: Clock,
    /// The wall clock (Unix ns) and the run's clock (ticks) read together, to date records.
    anchor_unix_ns: u64,
    anchor_tick: u64,
}

impl<'a> LogWriter<'a> {
    /// A writer dating its records with `clock` (the run's), anchored to the wall clock now.
    pub fn new(log: &'a RequestLog, clock: Clock) -> LogWriter<'a> {
        let anchor_tick = clock.now();
        let anchor_unix_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        LogWriter {
            log,
            cur: Box::new([]),
            len: 0,
            dropped: 0,
            clock,
            anchor_unix_ns,
            anchor_tick,
        }
    }

    /// Unix time in ns of the run clock's `tick`.
    #[inline]
    pub fn unix_ns(&self, tick: u64) -> u64 {
        let since = self.clock.to_ns(tick.saturating_sub(self.anchor_tick));
        self.anchor_unix_ns.saturating_add(since)
    }

    /// Keeps `s` (or counts it as dropped when the pool is used up).
    #[inline]
    pub fn push(&mut self, s: Sample) {
        if self.len < self.cur.len() {
            self.cur[self.len] = s;
            self.len += 1;
        } else {
            self.refill(s);
        }
    }

    #[cold]
    fn refill(&mut self, s: Sample) {
        let next = lock(&self.log.pool).pop();
        match next {
            Some(c) => {
                let full = std::mem::replace(&mut self.cur, c);
                self.log.give(full, self.len);
                self.cur[0] = s;
                self.len = 1;
            }
            None => self.dropped += 1,
        }
    }
}

impl Drop for LogWriter<'_> {
    fn drop(&mut self) {
        let cur = std::mem::replace(&mut self.cur, Box::new([]));
        self.log.give(cur, self.len);
        self.log.dropped.fetch_add(self.dropped, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(start: u64, total: u64) -> Sample {
        Sample {
            start_unix_ns: start,
            total_ns: total,
            ..Sample::default()
        }
    }

    #[test]
    fn keeps_everything_up_to_the_capacity_whatever_the_split() {
        // 2000 records over two threads, one doing more than a chunk's share: none lost.
        let log = RequestLog::new(2000);
        log.prepare(2).unwrap();
        let mut a = LogWriter::new(&log, Clock::monotonic());
        let mut b = LogWriter::new(&log, Clock::monotonic());
        for i in 0..1500u64 {
            a.push(s(i * 2, 1));
        }
        for i in 0..500u64 {
            b.push(s(i * 2 + 1, 1));
        }
        drop((a, b));
        let t = log.take();
        assert_eq!((t.samples.len(), t.dropped), (2000, 0));
        assert!(
            t.samples
                .windows(2)
                .all(|w| w[0].start_unix_ns < w[1].start_unix_ns)
        );
        assert_eq!(log.take().samples.len(), 0);
    }

    #[test]
    fn beyond_the_capacity_the_first_to_complete_are_kept() {
        let log = RequestLog::new(3000);
        log.prepare(3).unwrap();
        let mut w: Vec<_> = (0..3)
            .map(|_| LogWriter::new(&log, Clock::monotonic()))
            .collect();
        // Completion times interleave across threads; 9000 responses in all.
        for i in 0..9000u64 {
            w[(i % 3) as usize].push(s(i, 10));
        }
        drop(w);
        let t = log.take();
        assert_eq!(t.samples.len(), 3000);
        assert_eq!(t.dropped, 6000);
        let starts: Vec<u64> = t.samples.iter().map(|s| s.start_unix_ns).collect();
        assert_eq!(starts, (0..3000).collect::<Vec<_>>());
    }

    #[test]
    fn records_are_dated_by_the_wall_clock() {
        let log = RequestLog::new(1);
        let clock = Clock::monotonic();
        let w = LogWriter::new(&log, clock);
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        let d = w.unix_ns(clock.now()).abs_diff(wall);
        assert!(d < 1_000_000_000, "{d}");
    }

    #[test]
    fn memory_is_bounded_up_front() {
        assert_eq!(std::mem::size_of::<Sample>(), 32);
        assert_eq!(
            RequestLog::bytes_needed(50_000, 2),
            (50_000 + 2 * CHUNK as u64) * 32
        );
        // A writer with no pool drops rather than allocates.
        let log = RequestLog::new(10);
        let mut w = LogWriter::new(&log, Clock::monotonic());
        w.push(s(1, 1));
        drop(w);
        assert_eq!(log.take().dropped, 1);
    }
}
