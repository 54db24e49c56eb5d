//! CSV: one header line and one row per result, for spreadsheets. Latencies in ms; every
//! workload counter gets `<name>` and `<name>_per_s` columns.

use crate::{ms, pct_label};
use hostbench_core::result::RunResult;

pub(crate) fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Header and rows for `results` (which should be runs of the same workload).
pub fn render(results: &[RunResult]) -> String {
    let Some(first) = results.first() else {
        return String::new();
    };
    let mut head: Vec<String> = [
        "id",
        "started_at",
        "label",
        "workload",
        "params",
        "threads",
        "duration_s",
        "events",
        "events_per_s",
        "lat_min_ms",
        "lat_avg_ms",
        "lat_max_ms",
        "lat_stddev_ms",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for p in &first.latency.percentiles {
        head.push(format!("lat_p{}_ms", pct_label(p.p)));
    }
    for k in first.metrics.counters.keys() {
        head.push(k.clone());
        head.push(format!("{k}_per_s"));
    }
    head.extend(["stop_reason", "clock_read_ns", "warnings"].map(String::from));
    let mut out = head.join(",");
    out.push('\n');
    for r in results {
        let params = r
            .workload
            .params
            .values()
            .iter()
            .map(|(k, v)| {
                format!(
                    "{k}={}",
                    serde_json::to_string(v)
                        .unwrap_or_default()
                        .trim_matches('"')
                )
            })
            .collect::<Vec<_>>()
            .join(" ");
        let mut row = vec![
            r.id.clone(),
            r.started_at.clone(),
            quote(r.label.as_deref().unwrap_or("")),
            r.workload.id.clone(),
            quote(&params),
            r.config.threads.to_string(),
            format!("{:.6}", r.metrics.duration_s),
            r.metrics.events.to_string(),
            format!("{:.4}", r.metrics.events_per_s),
            format!("{:.6}", ms(r.latency.min_ns)),
            format!("{:.6}", ms(r.latency.avg_ns)),
            format!("{:.6}", ms(r.latency.max_ns)),
            format!("{:.6}", r.latency.stddev_ns / 1e6),
        ];
        for p in &r.latency.percentiles {
            row.push(format!("{:.6}", ms(p.ns)));
        }
        for (k, v) in &r.metrics.counters {
            row.push(v.to_string());
            row.push(format!(
                "{:.4}",
                r.metrics.counters_per_s.get(k).copied().unwrap_or(0.0)
            ));
        }
        row.push(
            serde_json::to_string(&r.outcome.stop_reason)
                .unwrap_or_default()
                .trim_matches('"')
                .to_string(),
        );
        row.push(format!("{:.1}", r.clock.read_cost_ns));
        row.push(quote(
            &r.warnings
                .iter()
                .map(|w| {
                    serde_json::to_string(&w.kind)
                        .unwrap_or_default()
                        .trim_matches('"')
                        .to_string()
                })
                .collect::<Vec<_>>()
                .join(";"),
        ));
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}
