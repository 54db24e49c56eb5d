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

/// Highest latency the histogram holds without resizing: one hour. Longer values still
/// record (the histogram grows), they just cost an allocation.
const HIST_HIGH_NS: u64 = 3_600_000_000_000;

/// A new empty latency histogram (ns, 3 significant digits).
pub fn new_histogram() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, HIST_HIGH_NS, 3).expect("static bounds are valid");
    h.auto(true);
    h
}

/// Latencies of a set of events: exact count/min/max/sum and a histogram for percentiles.
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
    /// Distribution, ns.
    pub hist: Histogram<u64>,
}

impl Default for LatencyRec {
    fn default() -> Self {
        LatencyRec {
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            hist: new_histogram(),
        }
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
        self.hist.saturating_record(ns.max(1));
    }

    /// Adds every event of `o`.
    pub fn merge(&mut self, o: &LatencyRec) {
        if o.count == 0 {
            return;
        }
        self.count += o.count;
        self.sum_ns += o.sum_ns;
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.hist
            .add(&o.hist)
            .expect("auto-resizing histograms always merge");
    }

    /// Forgets every event (keeps the allocation).
    pub fn reset(&mut self) {
        self.count = 0;
        self.sum_ns = 0;
        self.min_ns = u64::MAX;
        self.max_ns = 0;
        self.hist.reset();
    }

    /// Count, min, max, sum and the requested percentiles, without the histogram.
    pub fn summary(&self, percentiles: &[f64]) -> LatencySummary {
        LatencySummary {
            count: self.count,
            min_ns: if self.count == 0 { 0 } else { self.min_ns },
            max_ns: self.max_ns,
            sum_ns: self.sum_ns,
            percentiles: percentiles
                .iter()
                .map(|&p| Percentile {
                    p,
                    ns: self.percentile(p),
                })
                .collect(),
        }
    }

    /// Value at percentile `p` (0–100), ns; 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        self.hist
            .value_at_quantile(p / 100.0)
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
            prop_assert_eq!(&m.hist, &r.hist);
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
}
