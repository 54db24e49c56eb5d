//! hostbench's own text report: the headline figure first, then latency, fairness, the
//! clock and every warning. Units are always printed.

use crate::pct_label;
use hostbench_core::compare::ShortValue;
use hostbench_core::result::{RunResult, Table, figure};
use hostbench_core::units::fmt_ns;
use std::fmt::Write;

/// One interval line.
pub fn interval_line(i: &hostbench_core::result::Interval) -> String {
    let mut s = format!(
        "[{:>8.3}s] {:>3} thr {:>12.2} ev/s",
        i.t_s, i.threads, i.events_per_s
    );
    for p in &i.latency.percentiles {
        let _ = write!(s, "  p{} {}", pct_label(p.p), fmt_ns(p.ns as f64));
    }
    if let Some(q) = i.queue_len {
        let _ = write!(s, "  queue {q}");
    }
    s.push('\n');
    s
}

/// The full report of one run.
pub fn render(r: &RunResult) -> String {
    render_with(r, None)
}

/// [`render`], with parameters too long for one line (`disk.fio`'s job text) in the short
/// form `short` gives them, as compare's variant labels print them.
pub fn render_with(r: &RunResult, short: Option<ShortValue>) -> String {
    let mut s = String::new();
    let params: Vec<String> = r
        .workload
        .params
        .values()
        .iter()
        .map(|(k, v)| {
            let shown = short
                .and_then(|f| (f.0)(&r.workload.id, k, v))
                .unwrap_or_else(|| {
                    serde_json::to_string(v)
                        .unwrap_or_default()
                        .trim_matches('"')
                        .to_string()
                });
            format!("{k}={shown}")
        })
        .collect();
    let _ = writeln!(
        s,
        "{} {}  ({} thread{}, {:.3} s{})",
        r.workload.id,
        if params.is_empty() {
            String::new()
        } else {
            params.join(" ")
        },
        r.config.threads,
        if r.config.threads == 1 { "" } else { "s" },
        r.metrics.duration_s,
        r.label
            .as_ref()
            .map(|l| format!(", label {l}"))
            .unwrap_or_default()
    );
    // fio's figures are its group rates (each stonewall phase's I/O over its longest job's
    // run time, as fio's bw= and IOPS=); the counters' rates below are over the run's wall
    // time, which also holds start delays, layouts and every phase: say which is which.
    let fio_rates = r.fio.is_some() && !r.figures.is_empty();
    if fio_rates {
        let _ = writeln!(
            s,
            "  figures: fio's group rates (each stonewall phase's I/O over its longest job's run time)"
        );
    }
    // Each group rate is over its own time: all I/O over every phase's longest run time,
    // a direction's over the phases that did it. Said beside each, so that reads and writes
    // of different phases, which do not add up to the total, are not read as a mistake.
    let rates = r.fio.as_ref().filter(|_| fio_rates).map(|f| f.rates());
    let over = |name: &str| {
        let x = rates?;
        let ms = match name {
            "iops" => x.ms,
            "read_iops" | "read_bytes_per_s" => x.dir_ms[0],
            "write_iops" | "write_bytes_per_s" => x.dir_ms[1],
            _ => return None,
        };
        Some(ms)
    };
    // Workload-specific headline figures (the generic ones follow below).
    for f in r
        .figures
        .iter()
        .filter(|f| f.name != figure::EVENTS_PER_S.name && f.name != figure::LATENCY_AVG_NS.name)
    {
        // A time figure reads in the unit of its size, as the latency line below (a p99 of
        // 3719167.00 ns beside a min of 35.55 µs read as two different scales).
        if f.unit == "ns" {
            let _ = writeln!(s, "  {:<22} {:>14}", f.title(), fmt_ns(f.value));
        } else if let Some(ms) = over(&f.name) {
            let what = match f.name.split('_').next() {
                Some("read") => "reads",
                Some("write") => "writes",
                _ => "all I/O",
            };
            let _ = writeln!(
                s,
                "  {:<22} {:>14.2} {:<4}  {what} over {:.3} s",
                f.title(),
                f.value,
                f.unit,
                ms as f64 / 1e3
            );
        } else {
            let _ = writeln!(s, "  {:<22} {:>14.2} {}", f.title(), f.value, f.unit);
        }
    }
    if let Some(x) = rates {
        let differ: Vec<&str> = ["reads", "writes"]
            .iter()
            .zip(x.dir_ms)
            .filter(|(_, ms)| *ms > 0 && *ms != x.ms)
            .map(|(d, _)| *d)
            .collect();
        if !differ.is_empty() {
            let _ = writeln!(
                s,
                "  note: {} ran in only some of the phases: a direction's rate is over the phases that did it, the total over all of them, so the directions' rates do not add up to the total",
                differ.join(" and ")
            );
        }
        if let Some(fio) = &r.fio
            && fio.blocks.len() > 1
        {
            s.push_str(&jobs_table(fio));
        }
    }
    if fio_rates {
        let _ = writeln!(
            s,
            "  counters: per second of the run's wall time ({:.3} s)",
            r.metrics.duration_s
        );
    }
    let _ = writeln!(
        s,
        "  events         {:>14}   {:>14.2} /s",
        r.metrics.events, r.metrics.events_per_s
    );
    for (k, v) in &r.metrics.counters {
        let _ = writeln!(
            s,
            "  {k:<14} {v:>14}   {:>14.2} /s",
            r.metrics.counters_per_s.get(k).copied().unwrap_or(0.0)
        );
    }
    let l = &r.latency;
    let _ = writeln!(
        s,
        "  latency        min {}  avg {}  max {}  stddev {}",
        fmt_ns(l.min_ns as f64),
        fmt_ns(l.avg_ns as f64),
        fmt_ns(l.max_ns as f64),
        fmt_ns(l.stddev_ns)
    );
    if !l.percentiles.is_empty() {
        let ps: Vec<String> = l
            .percentiles
            .iter()
            .map(|p| format!("p{} {}", pct_label(p.p), fmt_ns(p.ns as f64)))
            .collect();
        let _ = writeln!(s, "  percentiles    {}", ps.join("  "));
    }
    let f = &r.fairness;
    let _ = writeln!(
        s,
        "  per thread     events {:.1} ± {:.2}   latency sum {:.4} s ± {:.4}",
        f.events_avg, f.events_stddev, f.exec_time_avg_s, f.exec_time_stddev_s
    );
    let _ = writeln!(
        s,
        "  clock          {}, {:.1} ns per read   seed {}",
        r.clock.source.name(),
        r.clock.read_cost_ns,
        r.config.seed
    );
    for (k, v) in &r.workload.facts {
        let _ = writeln!(s, "  {k:<14} {}", fmt_value(*v));
    }
    for t in &r.tables {
        s.push('\n');
        s.push_str(&table(t));
    }
    s
}

/// A `disk.fio` run's report blocks (a clone, or a `group_reporting` group), one line per
/// block and direction, each over the block's own run time as fio's job lines: what
/// `compare` pairs across runs job by job.
fn jobs_table(fio: &hostbench_core::fio_result::FioResult) -> String {
    use hostbench_core::compare::fio_jobs;
    let head = [
        "job",
        "dir",
        "IOPS",
        "bandwidth",
        "runtime",
        "clat avg",
        "clat p99",
    ]
    .map(String::from);
    let mut rows: Vec<[String; 7]> = Vec::new();
    for j in fio_jobs::jobs(fio) {
        for d in &j.dirs {
            let lat = |v: Option<f64>| v.map_or_else(|| "-".to_string(), fmt_ns);
            rows.push([
                j.label.clone(),
                d.dir.to_string(),
                format!("{:.2}", d.iops),
                format!("{}/s", hostbench_core::units::Bytes(d.bytes_per_s as u64)),
                format!("{:.3} s", d.runtime_ms as f64 / 1e3),
                lat(d.clat_mean_ns),
                lat(d.clat_p99_ns),
            ]);
        }
        if j.dirs.is_empty() {
            rows.push([
                j.label.clone(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
        }
    }
    let mut w = head.clone().map(|h| h.chars().count());
    for r in &rows {
        for (i, x) in r.iter().enumerate() {
            w[i] = w[i].max(x.chars().count());
        }
    }
    let mut s = String::from(
        "  jobs: each report block over its own run time in each direction (fio's job lines; compare pairs them job by job)\n",
    );
    for r in std::iter::once(&head).chain(&rows) {
        let mut l = String::from("   ");
        for (i, x) in r.iter().enumerate() {
            let pad = w[i].saturating_sub(x.chars().count());
            if i < 2 {
                let _ = write!(l, " {x}{}", " ".repeat(pad));
            } else {
                let _ = write!(l, "  {}{x}", " ".repeat(pad));
            }
        }
        s.push_str(l.trim_end());
        s.push('\n');
    }
    s
}

/// A result table as aligned text: title, a header with units, one line per row; values
/// that could not be measured print as `-`.
pub fn table(t: &Table) -> String {
    let mut s = format!("{}\n", t.title);
    let head: Vec<String> = t
        .columns
        .iter()
        .map(|c| {
            // `min_ns` says its unit already: no `min_ns (ns)`.
            if c.unit.is_empty() || c.name.ends_with(&format!("_{}", c.unit)) {
                c.name.clone()
            } else {
                format!("{} ({})", c.name, c.unit)
            }
        })
        .collect();
    let cells: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| {
            r.values
                .iter()
                .map(|v| match v {
                    Some(v) => fmt_value(*v),
                    None => "-".into(),
                })
                .collect()
        })
        .collect();
    let lw = t
        .rows
        .iter()
        .map(|r| r.label.len())
        .max()
        .unwrap_or(0)
        .max(5);
    let widths: Vec<usize> = head
        .iter()
        .enumerate()
        .map(|(i, h)| {
            cells
                .iter()
                .filter_map(|r| r.get(i).map(String::len))
                .max()
                .unwrap_or(0)
                .max(h.len())
        })
        .collect();
    let _ = write!(s, "  {:<lw$}", "");
    for (h, w) in head.iter().zip(&widths) {
        let _ = write!(s, "  {h:>w$}");
    }
    s.push('\n');
    for (r, c) in t.rows.iter().zip(&cells) {
        let _ = write!(s, "  {:<lw$}", r.label);
        for (v, w) in c.iter().zip(&widths) {
            let _ = write!(s, "  {v:>w$}");
        }
        s.push('\n');
    }
    s
}

/// Four significant digits at most, no exponent for everyday magnitudes.
fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if v == v.trunc() && a < 1e15 {
        format!("{v:.0}")
    } else if a >= 1000.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else if a >= 1e-6 {
        format!("{v:.6}")
    } else {
        format!("{v:e}")
    }
}
