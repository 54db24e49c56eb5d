//! Price-performance: what each side's work costs.
//!
//! A side's price is what its machine costs per hour (`--price c7g=0.0725/h`, a prices file,
//! or the runs' `price` note from `hostbench results annotate`), normalised to currency units
//! per hour. With a price on the baseline and on a side:
//! - the side's **price-performance score** is its performance score divided by its price
//!   relative to the baseline's: above 1, it does more work per unit of money (its interval
//!   is the score's interval divided the same way: prices are exact);
//! - **per-dollar figures**: each headline rate (a figure in something per second, higher
//!   is better: events/s, requests/s, IOPS, MB/s) divided by the price per hour, for
//!   instance `events/s per $/h`. Latencies and times have none: a cheaper machine does not
//!   make a request faster.

use super::{Comparison, GeoMean};
use serde::{Deserialize, Serialize};

/// A price as typed: `0.0725/h`, `52.9/month`, `$0.10/hour`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Currency units per hour.
    pub per_hour: f64,
}

/// Hours in a month, as cloud price lists count them (365 × 24 / 12).
pub const HOURS_PER_MONTH: f64 = 730.0;

impl Price {
    /// Reads `0.0725/h`, `0.0725/hour`, `52.9/month` (`/mo`), with an optional leading
    /// currency sign (`$`, `€`, `£`); a bare number is per hour.
    pub fn parse(text: &str) -> Result<Price, String> {
        let t = text.trim();
        let t = t.trim_start_matches(['$', '€', '£']);
        let (num, per) = match t.split_once('/') {
            Some((n, p)) => (n.trim(), p.trim().to_ascii_lowercase()),
            None => (t, "h".to_string()),
        };
        let hours = match per.as_str() {
            "h" | "hr" | "hour" => 1.0,
            "mo" | "month" => HOURS_PER_MONTH,
            "d" | "day" => 24.0,
            _ => {
                return Err(format!(
                    "'{text}': the price's period is '/{per}'; use /h, /day or /month"
                ));
            }
        };
        let v: f64 = num
            .parse()
            .map_err(|_| format!("'{text}' is not a price: write 0.0725/h or 52.9/month"))?;
        if !(v > 0.0 && v.is_finite()) {
            return Err(format!("'{text}': a price is a positive number"));
        }
        Ok(Price {
            per_hour: v / hours,
        })
    }
}

/// A side's price and what it buys, against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PricePerformance {
    /// The side's price, currency units per hour.
    pub per_hour: f64,
    /// Its performance score per unit of price relative to the baseline's (above 1: more
    /// work for the money); `None` on the baseline, or without a performance score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<GeoMean>,
    /// Per headline rate row (index into `rows`): the side's median per currency unit per
    /// hour.
    pub per_price: Vec<PerPrice>,
}

/// A headline rate per unit of price.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerPrice {
    /// Index into the comparison's `rows`.
    pub row: usize,
    /// The row's unit followed by ` per /h` (`events/s per /h`).
    pub unit: String,
    /// The side's median divided by its price per hour.
    pub value: f64,
}

impl Comparison {
    /// Adds each side's price-performance from `prices` (same order as `sides`; `None` =
    /// no price): see the module doc. A side has a score only when the baseline has a
    /// price too.
    pub fn apply_prices(&mut self, prices: &[Option<Price>]) {
        let base = prices.first().copied().flatten();
        let headline: std::collections::BTreeSet<usize> = {
            let mut seen = std::collections::BTreeSet::new();
            self.rows
                .iter()
                .enumerate()
                .filter(|(_, r)| seen.insert(r.variant))
                .map(|(i, _)| i)
                .collect()
        };
        self.price_performance = (0..self.sides.len())
            .map(|s| {
                let p = prices.get(s).copied().flatten()?;
                let per_price = self
                    .rows
                    .iter()
                    .enumerate()
                    .filter(|(i, r)| {
                        headline.contains(i)
                            && r.better == crate::result::Better::Higher
                            && r.unit.ends_with("/s")
                    })
                    .filter_map(|(i, r)| {
                        let cell = r.cells.get(s)?.as_ref()?;
                        Some(PerPrice {
                            row: i,
                            unit: format!("{} per /h", r.unit),
                            value: cell.median / p.per_hour,
                        })
                    })
                    .collect();
                let score = match (s, base, self.geomean.get(s).copied().flatten()) {
                    (1.., Some(b), Some(g)) => {
                        let rel = p.per_hour / b.per_hour;
                        Some(GeoMean {
                            speedup: g.speedup / rel,
                            rows: g.rows,
                            ci_lo: g.ci_lo.map(|x| x / rel),
                            ci_hi: g.ci_hi.map(|x| x / rel),
                            rows_left_out: g.rows_left_out,
                        })
                    }
                    _ => None,
                };
                Some(PricePerformance {
                    per_hour: p.per_hour,
                    score,
                    per_price,
                })
            })
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{BASE, reps, side};
    use super::super::{Comparison, Options};
    use super::*;

    #[test]
    fn prices_parse_in_their_periods() {
        assert_eq!(Price::parse("0.5/h").unwrap().per_hour, 0.5);
        assert_eq!(Price::parse("$0.5/hour").unwrap().per_hour, 0.5);
        assert_eq!(Price::parse("0.5").unwrap().per_hour, 0.5);
        let near = |t: &str, v: f64| (Price::parse(t).unwrap().per_hour - v).abs() < 1e-12;
        assert!(near("73/month", 0.1));
        assert!(near("2.4/day", 0.1));
        for bad in ["x/h", "-1/h", "0/h", "1/week", "inf"] {
            assert!(Price::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn price_performance_is_the_score_per_relative_price() {
        let faster: Vec<f64> = BASE.iter().map(|v| v * 1.2).collect();
        let mut c = Comparison::build(
            &[side("a", reps("a", &BASE)), side("b", reps("b", &faster))],
            Options::default(),
        );
        // b is 20 % faster and costs 60 % of a: 2× the work per unit of money.
        c.apply_prices(&[Some(Price { per_hour: 1.0 }), Some(Price { per_hour: 0.6 })]);
        let b = c.price_performance[1].as_ref().unwrap();
        let s = b.score.unwrap();
        assert!((s.speedup - 2.0).abs() < 1e-9, "{s:?}");
        let g = c.geomean[1].unwrap();
        assert!((s.ci_lo.unwrap() - g.ci_lo.unwrap() / 0.6).abs() < 1e-9);
        // events/s per /h: the median over the price; the latency row has none.
        assert_eq!(b.per_price.len(), 1);
        assert_eq!(b.per_price[0].unit, "events/s per /h");
        let median = c.rows[0].cells[1].as_ref().unwrap().median;
        assert!((b.per_price[0].value - median / 0.6).abs() < 1e-9);
        assert!(c.price_performance[0].as_ref().unwrap().score.is_none());
        // No price on the baseline: per-price figures, no relative score.
        c.apply_prices(&[None, Some(Price { per_hour: 0.6 })]);
        assert!(c.price_performance[0].is_none());
        assert!(c.price_performance[1].as_ref().unwrap().score.is_none());
    }
}
