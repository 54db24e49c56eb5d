//! Per-thread recording: counters the reporter may read at any time, and a latency record
//! (exact min/max/sum plus an HDR histogram) that only its thread touches.
//!
//! Hot-path rules: `Counters::add` is a plain load+store on the thread's own cache line
//! (single writer, so no atomic read-modify-write is needed); `LatencyRec::record` touches
//! only thread-local memory. The runner moves latency records to the reporter at interval
//! boundaries (see `runner`), so nothing here locks.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Named counters a workload may fill, beyond events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Counter {
    /// Read operations.
    Reads,
    /// Write operations.
    Writes,
    /// Other operations (fsyncs, BEGIN/COMMIT).
    Other,
    /// Errors that did not stop the run.
    Errors,
    /// Reconnects.
    Reconnects,
    /// Bytes read.
    BytesRead,
    /// Bytes written.
    BytesWritten,
}

impl Counter {
    /// Number of counter kinds.
    pub const COUNT: usize = 7;
    /// All kinds, in index order.
    pub const ALL: [Counter; Counter::COUNT] = [
        Counter::Reads,
        Counter::Writes,
        Counter::Other,
        Counter::Errors,
        Counter::Reconnects,
        Counter::BytesRead,
        Counter::BytesWritten,
    ];
    /// snake_case name, as in results.
    pub fn name(self) -> &'static str {
        match self {
            Counter::Reads => "reads",
            Counter::Writes => "writes",
            Counter::Other => "other",
            Counter::Errors => "errors",
            Counter::Reconnects => "reconnects",
            Counter::BytesRead => "bytes_read",
            Counter::BytesWritten => "bytes_written",
        }
    }
}

/// One thread's counters, on their own cache lines. Written only by that thread.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Counters {
    events: AtomicU64,
    values: [AtomicU64; Counter::COUNT],
}

/// A copy of counter values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterSnapshot {
    /// Completed events.
    pub events: u64,
    /// Other counters, indexed by `Counter as usize`.
    pub values: [u64; Counter::COUNT],
}

impl Counters {
    /// Adds `n` to counter `k`. Only the owning thread may call this.
    #[inline(always)]
    pub fn add(&self, k: Counter, n: u64) {
        let a = &self.values[k as usize];
        a.store(a.load(Relaxed).wrapping_add(n), Relaxed);
    }

    #[inline(always)]
    pub(crate) fn add_event(&self) {
        self.events.store(self.events.load(Relaxed) + 1, Relaxed);
    }

    /// Current values (any thread).
    pub fn snapshot(&self) -> CounterSnapshot {
        CounterSnapshot {
            events: self.events.load(Relaxed),
            values: std::array::from_fn(|i| self.values[i].load(Relaxed)),
        }
    }
}

impl CounterSnapshot {
    /// Element-wise `self − base`.
    pub fn since(&self, base: &CounterSnapshot) -> CounterSnapshot {
        CounterSnapshot {
            events: self.events.wrapping_sub(base.events),
            values: std::array::from_fn(|i| self.values[i].wrapping_sub(base.values[i])),
        }
    }

    /// Element-wise sum.
    pub fn add(&mut self, o: &CounterSnapshot) {
        self.events += o.events;
        for i in 0..Counter::COUNT {
            self.values[i] += o.values[i];
        }
    }

    /// One counter.
    pub fn get(&self, k: Counter) -> u64 {
        self.values[k as usize]
    }
}

/// Highest latency a new histogram holds before it first grows: 2047 ns, the smallest range
/// a 3-significant-digit histogram has (one bucket of 2048 counts, 16 KiB). It grows (doubling its range, one
/// allocation each time) as larger values arrive, so a thread's histogram costs memory in
/// proportion to the range it saw: about 90 KiB for millisecond events, 160 KiB for
/// 300 ms ones. A histogram sized for an hour up front cost 270 KiB per record, and a
/// 4000-thread run held 8000 of them (2.2 GB) before its first event.
const HIST_HIGH_NS: u64 = 2047;

/// A new empty latency histogram (ns, 3 significant digits, auto-resizing).
pub fn new_histogram() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, HIST_HIGH_NS, 3).expect("static bounds are valid");
    h.auto(true);
    h
}

/// Live latency histograms: what interval reports are made of.
///
/// An interval's latency must come from the events that completed in it, whether or not
/// their thread is inside a long event at the tick. A thread's [`LatencyRec`] is private
/// until the thread publishes it between events, so a thread busy in a 300 ms event at
/// the tick cannot hand it over in time; the interval would show its events in the rate
/// and none in the latency. So while interval reports are on, each thread also records
/// into a [`LiveLatency`](live::LiveLatency): log-linear buckets of atomic counters and sums that only the
/// thread writes (plain load+store, no read-modify-write) and the controller reads at the
/// tick without the thread's help. The bucket counts only grow, so an interval is the
/// difference between two readings ([`LiveTotals`](live::LiveTotals)).
///
/// Precision: 64 buckets per power of two (values within 1/64 of each other share a
/// bucket; below 64 ns every value has its own), up to 2^42 ns (73 minutes; longer values
/// land in the last bucket). A percentile reads the *mean* of the values in its bucket,
/// so it is exact when a bucket holds one value (constant latencies) and within 1.6%
/// otherwise; sysbench's own interval percentiles come from buckets 1.8% wide.
pub mod live {
    use std::sync::atomic::{AtomicU64, Ordering::*};

    const SUB_BITS: u32 = 6;
    const SUB: usize = 1 << SUB_BITS;
    const MAX_EXP: u32 = 42;
    /// Number of buckets.
    pub const BUCKETS: usize = SUB + (MAX_EXP - SUB_BITS) as usize * SUB;

    /// Bucket index of a value, ns.
    #[inline(always)]
    pub fn bucket(v: u64) -> usize {
        if v < SUB as u64 {
            return v as usize;
        }
        let e = 63 - v.leading_zeros();
        if e >= MAX_EXP {
            return BUCKETS - 1;
        }
        let sub = (v >> (e - SUB_BITS)) as usize & (SUB - 1);
        SUB + (e - SUB_BITS) as usize * SUB + sub
    }

    /// Smallest value of bucket `i`.
    pub fn bucket_low(i: usize) -> u64 {
        if i < SUB {
            return i as u64;
        }
        let k = (i - SUB) / SUB;
        let sub = (i - SUB) % SUB;
        ((SUB + sub) as u64) << k
    }

    /// One thread's live latency record. Written by its thread only; read by anyone.
    pub struct LiveLatency {
        /// Per bucket: events, then the sum of their latencies (ns), interleaved so one
        /// record touches one cache line.
        cells: Box<[AtomicU64]>,
    }

    impl Default for LiveLatency {
        fn default() -> Self {
            LiveLatency {
                cells: (0..2 * BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            }
        }
    }

    impl std::fmt::Debug for LiveLatency {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("LiveLatency")
        }
    }

    impl LiveLatency {
        /// Records one latency. Only the owning thread may call this.
        #[inline(always)]
        pub fn record(&self, ns: u64) {
            let i = 2 * bucket(ns);
            let (c, s) = (&self.cells[i], &self.cells[i + 1]);
            s.store(s.load(Relaxed).wrapping_add(ns), Relaxed);
            // Release: a reader that sees the count sees the sum that goes with it.
            c.store(c.load(Relaxed) + 1, Release);
        }
    }

    /// What the controller last read from every thread's [`LiveLatency`], summed: the
    /// difference with the next reading is the interval.
    #[derive(Debug, Default)]
    pub struct LiveTotals {
        last: Vec<(u64, u64)>,
    }

    impl LiveTotals {
        /// Reads `records` and returns the events recorded since the previous call, as
        /// (count, sum ns) per bucket.
        pub fn advance<'a>(
            &mut self,
            records: impl Iterator<Item = &'a LiveLatency>,
        ) -> IntervalLatency {
            let mut now = vec![(0u64, 0u64); BUCKETS];
            for r in records {
                for (b, n) in now.iter_mut().enumerate() {
                    let c = r.cells[2 * b].load(Acquire);
                    if c != 0 {
                        n.0 += c;
                        n.1 = n.1.wrapping_add(r.cells[2 * b + 1].load(Relaxed));
                    }
                }
            }
            if self.last.is_empty() {
                self.last = vec![(0, 0); BUCKETS];
            }
            let delta = now
                .iter()
                .zip(&self.last)
                .map(|(n, l)| (n.0.saturating_sub(l.0), n.1.wrapping_sub(l.1)))
                .collect();
            self.last = now;
            IntervalLatency { buckets: delta }
        }
    }

    /// The latencies of one interval, bucketed.
    #[derive(Debug, Clone)]
    pub struct IntervalLatency {
        buckets: Vec<(u64, u64)>,
    }

    impl IntervalLatency {
        /// Builds one from (bucket value, count) pairs; for tests.
        pub fn from_values(values: &[u64]) -> Self {
            let mut buckets = vec![(0u64, 0u64); BUCKETS];
            for &v in values {
                let b = &mut buckets[bucket(v)];
                b.0 += 1;
                b.1 += v;
            }
            IntervalLatency { buckets }
        }

        /// Events in the interval.
        pub fn count(&self) -> u64 {
            self.buckets.iter().map(|b| b.0).sum()
        }

        fn mean_of(&self, i: usize) -> u64 {
            let (c, s) = self.buckets[i];
            // A sum read a moment before its count (or after) may fall outside the
            // bucket: keep the value inside it.
            let hi = if i + 1 < BUCKETS {
                bucket_low(i + 1) - 1
            } else {
                u64::MAX
            };
            s.checked_div(c)
                .unwrap_or(0)
                .clamp(bucket_low(i), hi.max(bucket_low(i)))
        }

        /// Count, min, max, sum and percentiles (each the mean of its bucket; see the
        /// module docs for the precision). Percentile ranks as HdrHistogram counts them.
        pub fn summary(&self, percentiles: &[f64]) -> super::LatencySummary {
            let count = self.count();
            if count == 0 {
                return super::LatencySummary {
                    percentiles: percentiles
                        .iter()
                        .map(|&p| super::Percentile { p, ns: 0 })
                        .collect(),
                    ..Default::default()
                };
            }
            let first = self.buckets.iter().position(|b| b.0 > 0).unwrap_or(0);
            let last = self.buckets.iter().rposition(|b| b.0 > 0).unwrap_or(0);
            // Each bucket's mean × its count, not the raw sums: a tick that reads a bucket
            // between its thread's two stores gives one interval a sum without its count,
            // and the next a count without its sum; the clamped means keep both within the
            // bucket (an average of 0 for an interval with one event, otherwise).
            let sum: u64 = (0..BUCKETS)
                .filter(|&i| self.buckets[i].0 > 0)
                .fold(0u64, |a, i| {
                    a.wrapping_add(self.mean_of(i).wrapping_mul(self.buckets[i].0))
                });
            let at = |p: f64| -> u64 {
                let rank = ((p / 100.0).clamp(0.0, 1.0) * count as f64).ceil().max(1.0) as u64;
                let mut seen = 0;
                for (i, b) in self.buckets.iter().enumerate() {
                    seen += b.0;
                    if b.0 > 0 && seen >= rank {
                        return self.mean_of(i);
                    }
                }
                self.mean_of(last)
            };
            super::LatencySummary {
                count,
                min_ns: self.mean_of(first),
                max_ns: self.mean_of(last),
                sum_ns: sum,
                percentiles: percentiles
                    .iter()
                    .map(|&p| super::Percentile { p, ns: at(p) })
                    .collect(),
            }
        }
    }
}

/// Latencies of a set of events: exact count/min/max/sum and a histogram for percentiles.
///
/// The histogram is made only when the record holds more than [`SMALL`] events: until
/// then the latencies themselves are kept (256 bytes), and every reading builds the same
/// histogram from them, so the figures are those of a histogram recorded all along. A
/// thread that completes a handful of events (4000 threads on 2 CPUs for one second) costs
/// under 1 KiB (two 384-byte records), not 16-90 KiB for each of its two histograms.
#[derive(Debug, Clone)]
pub struct LatencyRec {
    /// Events recorded.
    pub count: u64,
    /// Smallest latency, ns (u64::MAX when empty).
    pub min_ns: u64,
    /// Largest latency, ns.
    pub max_ns: u64,
    /// Sum of latencies, ns.
    pub sum_ns: u64,
    /// Distribution, ns; `None` while the record holds at most [`SMALL`] events, which
    /// are then in `small[..count]`.
    hist: Option<Histogram<u64>>,
    small: [u64; SMALL],
}

/// Events a [`LatencyRec`] keeps as plain values before it makes its histogram.
pub const SMALL: usize = 32;

impl Default for LatencyRec {
    fn default() -> Self {
        LatencyRec {
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            hist: None,
            small: [0; SMALL],
        }
    }
}

/// Records `ns` into `h`. `record` grows the histogram to fit; only a value beyond what any
/// histogram can hold (past 2^62 ns) is clamped. (`saturating_record` never grows it: it
/// clamps.)
#[inline(always)]
fn hist_record(h: &mut Histogram<u64>, ns: u64) {
    if h.record(ns.max(1)).is_err() {
        h.saturating_record(ns.max(1));
    }
}

impl LatencyRec {
    /// Records one latency.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        self.count += 1;
        self.sum_ns += ns;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        match &mut self.hist {
            Some(h) => hist_record(h, ns),
            None => self.record_small(ns),
        }
    }

    /// `record` while there is no histogram yet (`count` already counts `ns`).
    #[cold]
    #[inline(never)]
    fn record_small(&mut self, ns: u64) {
        let i = (self.count - 1) as usize;
        if i < SMALL {
            self.small[i] = ns;
        } else {
            let mut h = new_histogram();
            for &v in &self.small {
                hist_record(&mut h, v);
            }
            hist_record(&mut h, ns);
            self.hist = Some(h);
        }
    }

    /// The distribution, ns (built from the kept values while there are few).
    pub fn histogram(&self) -> std::borrow::Cow<'_, Histogram<u64>> {
        match &self.hist {
            Some(h) => std::borrow::Cow::Borrowed(h),
            None => {
                let mut h = new_histogram();
                for &v in &self.small[..self.count as usize] {
                    hist_record(&mut h, v);
                }
                std::borrow::Cow::Owned(h)
            }
        }
    }

    /// Standard deviation of the distribution, ns (0 when empty).
    pub fn stdev(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.histogram().stdev()
        }
    }

    /// A record of `count` events with these exact totals and this distribution (a stored
    /// result's histogram, decoded), so it merges and reads like one recorded here.
    pub fn from_histogram(
        count: u64,
        min_ns: u64,
        max_ns: u64,
        sum_ns: u64,
        mut hist: Histogram<u64>,
    ) -> LatencyRec {
        if count == 0 {
            return LatencyRec::default();
        }
        // A decoded histogram has fixed bounds; merging grows it like one recorded here.
        hist.auto(true);
        LatencyRec {
            count,
            min_ns,
            max_ns,
            sum_ns,
            hist: Some(hist),
            small: [0; SMALL],
        }
    }

    /// Adds every event of `o`.
    pub fn merge(&mut self, o: &LatencyRec) {
        if o.count == 0 {
            return;
        }
        match &o.hist {
            None => {
                // Recorded one by one: the same as having recorded them here, min, max
                // and sum included.
                for &v in &o.small[..o.count as usize] {
                    self.record(v);
                }
            }
            Some(oh) => {
                match &mut self.hist {
                    Some(h) => h.add(oh).expect("auto-resizing histograms always merge"),
                    None => {
                        let mut h = oh.clone();
                        for &v in &self.small[..self.count as usize] {
                            hist_record(&mut h, v);
                        }
                        self.hist = Some(h);
                    }
                }
                self.count += o.count;
                self.sum_ns += o.sum_ns;
                self.min_ns = self.min_ns.min(o.min_ns);
                self.max_ns = self.max_ns.max(o.max_ns);
            }
        }
    }

    /// Forgets every event (keeps the histogram's allocation, if it has one).
    pub fn reset(&mut self) {
        self.count = 0;
        self.sum_ns = 0;
        self.min_ns = u64::MAX;
        self.max_ns = 0;
        if let Some(h) = &mut self.hist {
            h.reset();
        }
    }

    /// Count, min, max, sum and the requested percentiles, without the histogram.
    pub fn summary(&self, percentiles: &[f64]) -> LatencySummary {
        let h = self.histogram();
        LatencySummary {
            count: self.count,
            min_ns: if self.count == 0 { 0 } else { self.min_ns },
            max_ns: self.max_ns,
            sum_ns: self.sum_ns,
            percentiles: percentiles
                .iter()
                .map(|&p| Percentile {
                    p,
                    ns: self.percentile_in(&h, p),
                })
                .collect(),
        }
    }

    /// Value at percentile `p` (0–100), ns; 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        self.percentile_in(&self.histogram(), p)
    }

    fn percentile_in(&self, h: &Histogram<u64>, p: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        h.value_at_quantile(p / 100.0)
            .clamp(self.min_ns, self.max_ns)
    }
}

/// One percentile of a latency distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentile {
    /// Percentile, 0–100.
    pub p: f64,
    /// Latency at that percentile, ns.
    pub ns: u64,
}

/// A latency distribution reduced to numbers (no histogram).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Events.
    pub count: u64,
    /// Smallest, ns (0 when empty).
    pub min_ns: u64,
    /// Largest, ns.
    pub max_ns: u64,
    /// Sum, ns.
    pub sum_ns: u64,
    /// Requested percentiles.
    pub percentiles: Vec<Percentile>,
}

impl LatencySummary {
    /// Mean, ns (integer division as sysbench does; 0 when empty).
    pub fn avg_ns(&self) -> u64 {
        self.sum_ns.checked_div(self.count).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rec(values: &[u64]) -> LatencyRec {
        let mut r = LatencyRec::default();
        for &v in values {
            r.record(v);
        }
        r
    }

    #[test]
    fn counters_single_writer() {
        let c = Counters::default();
        c.add(Counter::Reads, 3);
        c.add_event();
        let s = c.snapshot();
        assert_eq!(s.events, 1);
        assert_eq!(s.get(Counter::Reads), 3);
        assert_eq!(s.since(&s).events, 0);
    }

    proptest! {
        #[test]
        fn merge_equals_recording_the_concatenation(
            a in proptest::collection::vec(1u64..10_000_000_000, 0..200),
            b in proptest::collection::vec(1u64..10_000_000_000, 0..200),
        ) {
            let mut m = rec(&a);
            m.merge(&rec(&b));
            let all: Vec<u64> = a.iter().chain(b.iter()).copied().collect();
            let r = rec(&all);
            prop_assert_eq!(m.count, r.count);
            prop_assert_eq!(m.sum_ns, r.sum_ns);
            prop_assert_eq!(m.min_ns, r.min_ns);
            prop_assert_eq!(m.max_ns, r.max_ns);
            prop_assert_eq!(&*m.histogram(), &*r.histogram());
        }

        /// The few values kept before the histogram is made read exactly as a histogram
        /// recorded all along, however the events were split into records and merged.
        #[test]
        fn kept_values_read_as_a_histogram_recorded_all_along(
            v in proptest::collection::vec(1u64..10_000_000_000, 0..(3 * SMALL)),
            cuts in proptest::collection::vec(0usize..(3 * SMALL), 0..4),
        ) {
            let mut whole = new_histogram();
            for &x in &v {
                hist_record(&mut whole, x);
            }
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(v.len())).collect();
            cuts.push(0);
            cuts.push(v.len());
            cuts.sort();
            let mut m = LatencyRec::default();
            for w in cuts.windows(2) {
                m.merge(&rec(&v[w[0]..w[1]]));
            }
            prop_assert_eq!(m.count, v.len() as u64);
            prop_assert_eq!(&*m.histogram(), &whole);
            let direct = rec(&v);
            prop_assert_eq!(&*direct.histogram(), &whole);
            let ps = [0.0, 50.0, 95.0, 99.0, 100.0];
            let s = m.summary(&ps);
            for (q, p) in s.percentiles.iter().zip(ps) {
                let want = if v.is_empty() { 0 } else {
                    whole.value_at_quantile(p / 100.0).clamp(m.min_ns, m.max_ns)
                };
                prop_assert_eq!(q.ns, want);
            }
            if !v.is_empty() {
                prop_assert!((m.stdev() - whole.stdev()).abs() < 1e-6);
            }
        }

        #[test]
        fn percentiles_are_monotone_and_within_min_max(
            v in proptest::collection::vec(1u64..100_000_000_000, 1..300),
        ) {
            let r = rec(&v);
            let mut last = 0;
            for p in [0.0, 1.0, 25.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0] {
                let x = r.percentile(p);
                prop_assert!(x >= last);
                prop_assert!(x >= r.min_ns && x <= r.max_ns);
                last = x;
            }
            // 3 significant digits: the median is within 0.1% of an exact median rank.
            let mut s = v.clone();
            s.sort();
            let exact = s[((s.len() as f64 * 0.5).ceil() as usize).saturating_sub(1)];
            let got = r.percentile(50.0) as f64;
            prop_assert!((got - exact as f64).abs() <= exact as f64 * 0.001 + 1.0,
                "p50 {} vs exact {}", got, exact);
        }
    }

    #[test]
    fn a_record_of_few_events_has_no_histogram() {
        let mut r = rec(&[1_000_000; SMALL]);
        assert!(r.hist.is_none(), "{SMALL} events are kept as values");
        let mut big = LatencyRec::default();
        big.merge(&r);
        assert!(
            big.hist.is_none(),
            "merging few events keeps them as values"
        );
        r.record(5);
        assert!(r.hist.is_some(), "one more makes the histogram");
        r.reset();
        assert_eq!(r.percentile(50.0), 0);
        r.record(7);
        assert_eq!(r.percentile(50.0), 7);
    }

    #[test]
    fn live_buckets_are_contiguous_and_ordered() {
        use super::live::*;
        let mut last = 0;
        for v in (0u64..5000).chain((13..64).map(|e| 1u64 << e)) {
            let b = bucket(v);
            assert!(b < BUCKETS);
            assert!(
                bucket_low(b) <= v,
                "{v} in bucket {b} low {}",
                bucket_low(b)
            );
            if b + 1 < BUCKETS {
                assert!(v < bucket_low(b + 1), "{v}");
            }
            assert!(b >= last, "{v}");
            last = b;
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
        for b in 0..BUCKETS - 1 {
            assert_eq!(bucket(bucket_low(b)), b);
            // 64 buckets per power of two: each within 1/64 of its low end.
            let w = bucket_low(b + 1) - bucket_low(b);
            assert!(w == 1 || w * 64 <= bucket_low(b), "bucket {b} width {w}");
        }
    }

    #[test]
    fn live_totals_give_each_interval_its_own_events() {
        use super::live::*;
        let a = LiveLatency::default();
        let b = LiveLatency::default();
        let mut t = LiveTotals::default();
        for v in [300_000_000u64, 300_000_000, 300_000_000] {
            a.record(v);
        }
        b.record(1_000);
        let s = t.advance([&a, &b].into_iter()).summary(&[50.0, 95.0]);
        assert_eq!(s.count, 4);
        assert_eq!(s.sum_ns, 900_001_000);
        assert_eq!(s.min_ns, 1_000);
        assert_eq!(s.max_ns, 300_000_000);
        assert_eq!(
            s.percentiles[0].ns, 300_000_000,
            "exact for a constant latency"
        );
        let s = t.advance([&a, &b].into_iter()).summary(&[95.0]);
        assert_eq!((s.count, s.percentiles[0].ns), (0, 0));
        a.record(7);
        let s = t.advance([&a, &b].into_iter()).summary(&[95.0]);
        assert_eq!((s.count, s.percentiles[0].ns), (1, 7));
    }

    proptest! {
        #[test]
        fn live_percentiles_are_within_the_bucket_precision(
            v in proptest::collection::vec(1u64..(1u64 << 42), 1..300),
        ) {
            let live = super::live::IntervalLatency::from_values(&v);
            let exact = rec(&v);
            let s = live.summary(&[50.0, 95.0, 99.0]);
            prop_assert_eq!(s.count, exact.count);
            // The sum is each bucket's mean × its count: exact here (every value's bucket
            // holds its own sum), so equal up to the integer division of the means.
            let d = (s.sum_ns as f64 - exact.sum_ns as f64).abs();
            prop_assert!(d <= exact.sum_ns as f64 / 64.0 + v.len() as f64,
                "sum {} vs {}", s.sum_ns, exact.sum_ns);
            let mut sorted = v.clone();
            sorted.sort();
            for p in &s.percentiles {
                let rank = ((p.p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
                let want = sorted[rank - 1] as f64;
                prop_assert!((p.ns as f64 - want).abs() <= want / 64.0 + 1.0,
                    "p{} {} vs exact {}", p.p, p.ns, want);
            }
            prop_assert!(s.min_ns as f64 <= sorted[0] as f64 * (1.0 + 1.0 / 64.0) + 1.0);
            prop_assert!(s.max_ns as f64 >= *sorted.last().unwrap() as f64 * (1.0 - 1.0 / 64.0));
        }
    }
}
