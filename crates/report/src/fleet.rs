//! `hostbench fleet report`: a fleet run's hosts side by side, one table per workload
//! (text, markdown, CSV, JSON), from `hostbench_core::fleet`'s model.

use hostbench_core::fleet::{FleetReport, Group, Row};

fn num(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.3}"),
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{:+.1} %", (x - 1.0) * 100.0))
}

fn z(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:+.2}"))
}

fn verdict(r: &Row) -> String {
    let mut s = r.verdict.word().to_string();
    if r.outlier {
        s.push_str(" (outlier)");
    }
    s
}

fn heading(g: &Group) -> String {
    format!(
        "{}: {} ({} is better); median {}, MAD {}, spread {}",
        g.what,
        g.title,
        if g.higher_is_better {
            "higher"
        } else {
            "lower"
        },
        num(g.median),
        num(g.mad),
        g.spread
            .map_or("-".into(), |s| format!("{:.1} %", s * 100.0))
    ) + &match g.baseline {
        Some(b) => format!(
            "; baseline {} (median of {} run{})",
            num(Some(b)),
            g.baseline_runs,
            if g.baseline_runs == 1 { "" } else { "s" }
        ),
        None => String::new(),
    }
}

fn preamble(r: &FleetReport) -> String {
    let mut s = format!(
        "fleet run {}: {} host{}",
        r.run,
        r.hosts,
        if r.hosts == 1 { "" } else { "s" }
    );
    if let Some(k) = r.start_skew_ns {
        s.push_str(&format!(", start skew {:.3} ms", k as f64 / 1e6));
    }
    match (r.fail_below, &r.baseline) {
        (Some(f), Some(b)) => s.push_str(&format!(
            ", fail below {:.1} % of baseline {b} (of the median where it has no run)",
            f * 100.0
        )),
        (Some(f), None) => s.push_str(&format!(", fail below {:.1} % of the median", f * 100.0)),
        (None, Some(b)) => s.push_str(&format!(", baseline {b}")),
        (None, None) => {}
    }
    s
}

/// Plain text: one table per workload.
pub fn text(r: &FleetReport) -> String {
    let mut out = preamble(r);
    out.push('\n');
    for g in &r.groups {
        out.push('\n');
        out.push_str(&heading(g));
        out.push('\n');
        let w = g
            .rows
            .iter()
            .map(|x| x.host.chars().count())
            .max()
            .unwrap_or(4)
            .max(4);
        let base = r.baseline.is_some();
        let col = |s: &str| {
            if base {
                format!("  {s:>11}")
            } else {
                String::new()
            }
        };
        out.push_str(&format!(
            "  {:<w$}  {:>14}  {:>10}{}  {:>8}  verdict\n",
            "host",
            "value",
            "vs median",
            col("vs baseline"),
            "z"
        ));
        for row in &g.rows {
            out.push_str(&format!(
                "  {:<w$}  {:>14}  {:>10}{}  {:>8}  {}\n",
                row.host,
                num(row.value),
                pct(row.ratio),
                col(&pct(row.vs_baseline)),
                z(row.z),
                verdict(row)
            ));
        }
    }
    out
}

/// Markdown: a heading line and a table per workload.
pub fn markdown(r: &FleetReport) -> String {
    let mut out = format!("**{}**\n", preamble(r));
    for g in &r.groups {
        out.push_str(&format!("\n{}\n\n", heading(g)));
        let base = r.baseline.is_some();
        if base {
            out.push_str(
                "| host | value | vs median | vs baseline | z | verdict |\n\
                 |---|---:|---:|---:|---:|---|\n",
            );
        } else {
            out.push_str("| host | value | vs median | z | verdict |\n|---|---:|---:|---:|---|\n");
        }
        for row in &g.rows {
            out.push_str(&format!(
                "| {} | {} | {} |{} {} | {} |\n",
                row.host.replace('|', "\\|"),
                num(row.value),
                pct(row.ratio),
                if base {
                    format!(" {} |", pct(row.vs_baseline))
                } else {
                    String::new()
                },
                z(row.z),
                verdict(row)
            ));
        }
    }
    out
}

/// CSV: one row per host and workload.
pub fn csv(r: &FleetReport) -> String {
    use crate::csv::quote;
    let mut out = String::from(
        "fleet_run,what,figure,unit,host,run_id,value,median,ratio,baseline,vs_baseline,robust_z,outlier,verdict\n",
    );
    let opt = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    for g in &r.groups {
        for row in &g.rows {
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                quote(&r.run),
                quote(&g.what),
                quote(&g.figure),
                quote(&g.unit),
                quote(&row.host),
                quote(&row.run_id),
                opt(row.value),
                opt(g.median),
                opt(row.ratio),
                opt(g.baseline),
                opt(row.vs_baseline),
                opt(row.z),
                row.outlier,
                row.verdict.word()
            ));
        }
    }
    out
}

/// JSON: the model as it is.
pub fn json(r: &FleetReport) -> String {
    let mut s = serde_json::to_string_pretty(r).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}
