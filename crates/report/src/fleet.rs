//! `hostbench fleet report`: a fleet run's hosts side by side, one table per workload
//! (text, markdown, CSV, JSON), from `hostbench_core::fleet`'s model.

use crate::svg::{Bar, Group as SvgGroup};
use hostbench_core::fleet::{FleetReport, Group, Row, Verdict};

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
    if let Some(why) = &r.reason {
        s.push_str(&format!(" (no run: {why})"));
    }
    s
}

/// The hosts without a run, one line each (`failed`, with why).
fn without_run(r: &FleetReport, prefix: &str) -> String {
    r.without_run
        .iter()
        .map(|m| format!("{prefix}{}: failed, no run ({})\n", m.host, m.reason))
        .collect()
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
    if !r.without_run.is_empty() {
        s.push_str(&format!(", {} without a run", r.without_run.len()));
    }
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
    out.push_str(&without_run(r, "  "));
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
    if !r.without_run.is_empty() {
        out.push('\n');
        out.push_str(&without_run(r, "- ").replace('|', "\\|"));
    }
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
    // No workload to list them under: one row per host without a run.
    if r.groups.is_empty() {
        for m in &r.without_run {
            out.push_str(&format!(
                "{},,,,{},,,,,,,,false,failed\n",
                quote(&r.run),
                quote(&m.host)
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

/// Bar colours by verdict: the palette's first colour for a pass, red for slow or failed,
/// amber for a fast outlier.
fn bar_color(r: &Row) -> &'static str {
    match r.verdict {
        Verdict::Pass => crate::svg::color(0),
        Verdict::Fast => "#c77c02",
        Verdict::Slow | Verdict::Failed => "#b3261e",
    }
}

/// One self-contained HTML file (inline CSS and SVG, no script; the report's CSS): per
/// workload, a bar per host with its value, ratio to the median (and the baseline), robust
/// z and verdict, outliers marked in the bar's label and colour, then the table. The
/// output depends only on the report.
pub fn html(r: &FleetReport, generator: &str) -> String {
    use crate::svg::esc;
    use std::fmt::Write as _;
    let title = format!("fleet run {}", r.run);
    let mut h = String::with_capacity(16 * 1024);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"{}\">\n<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n",
        esc(generator),
        esc(&title),
        crate::html::CSS
    );
    let _ = writeln!(
        h,
        "<header><h1>{}</h1><p class=\"muted\">{}</p></header>",
        esc(&title),
        esc(&preamble(r))
    );
    let failed = r
        .groups
        .iter()
        .flat_map(|g| &g.rows)
        .filter(|x| matches!(x.verdict, Verdict::Slow | Verdict::Failed))
        .count()
        + r.groups.is_empty() as usize * r.without_run.len();
    let outliers = r
        .groups
        .iter()
        .flat_map(|g| &g.rows)
        .filter(|x| x.outlier)
        .count();
    let _ = writeln!(
        h,
        "<div class=\"cards\"><div class=\"card\"><div class=\"big\">{}</div>hosts</div><div class=\"card\"><div class=\"big {}\">{failed}</div>slow or failed</div><div class=\"card\"><div class=\"big\">{outliers}</div>outliers (|z| &gt; {})</div></div>",
        r.hosts,
        if failed > 0 { "v-slower" } else { "v-faster" },
        hostbench_core::fleet::Z_OUTLIER
    );
    if !r.without_run.is_empty() {
        let _ = writeln!(h, "<h2>Hosts without a run</h2>\n<ul>");
        for m in &r.without_run {
            let _ = writeln!(h, "<li>{}: failed ({})</li>", esc(&m.host), esc(&m.reason));
        }
        let _ = writeln!(h, "</ul>");
    }
    for g in &r.groups {
        let _ = writeln!(h, "<h2>{}</h2>", esc(&g.what));
        let _ = writeln!(h, "<p class=\"muted\">{}</p>", esc(&heading(g)));
        // A bar per host: a distributed load's whole-load row (the hosts' sum) is in the
        // table only.
        let bars = g
            .rows
            .iter()
            .filter(|row| row.host != hostbench_core::fleet::WHOLE_LOAD)
            .map(|row| Bar {
                label: if row.outlier {
                    format!("{} ⚠", row.host)
                } else {
                    row.host.clone()
                },
                value: row.value.unwrap_or(f64::NAN),
                ci: None,
                points: Vec::new(),
                color: bar_color(row).to_string(),
                note: format!(
                    "{} {}",
                    crate::num(row.value.unwrap_or(f64::NAN)),
                    verdict(row)
                ),
            })
            .collect();
        let chart = crate::svg::bar_chart(
            &g.title,
            &g.title,
            &[SvgGroup {
                label: String::new(),
                bars,
            }],
        );
        if let Some(svg) = chart {
            let _ = writeln!(
                h,
                "<figure>{svg}<figcaption>{} per host; median {}{} (⚠ outlier, red: slow or failed, amber: fast)</figcaption></figure>",
                esc(&g.title),
                num(g.median),
                g.baseline
                    .map_or(String::new(), |b| format!(", baseline {}", num(Some(b))))
            );
        }
        let base = r.baseline.is_some();
        let _ = writeln!(
            h,
            "<div class=\"scroll\"><table><thead><tr><th>host</th><th>value</th><th>vs median</th>{}<th>z</th><th>verdict</th><th>run</th></tr></thead><tbody>",
            if base { "<th>vs baseline</th>" } else { "" }
        );
        for row in &g.rows {
            let class = match row.verdict {
                Verdict::Slow | Verdict::Failed => " class=\"v-slower\"",
                Verdict::Fast => " class=\"v-faster\"",
                Verdict::Pass => "",
            };
            let _ = writeln!(
                h,
                "<tr{class}><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>{}<td class=\"n\">{}</td><td>{}</td><td><code>{}</code></td></tr>",
                esc(&row.host),
                num(row.value),
                pct(row.ratio),
                if base {
                    format!("<td class=\"n\">{}</td>", pct(row.vs_baseline))
                } else {
                    String::new()
                },
                z(row.z),
                esc(&verdict(row)),
                esc(&row.run_id)
            );
        }
        h.push_str("</tbody></table></div>\n");
    }
    let json = json(r)
        .replace('&', "\\u0026")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e");
    let _ = write!(
        h,
        "<footer><p class=\"muted\">{} — median and MAD over the hosts whose run completed; robust z = 0.6745 (x − median) / MAD, |z| &gt; {} an outlier (Iglewicz and Hoaglin)</p></footer>\n<script type=\"application/json\" id=\"hostbench-fleet-report\">{json}</script>\n</body>\n</html>\n",
        esc(generator),
        hostbench_core::fleet::Z_OUTLIER
    );
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::fleet::{FleetReport, Group, Row};

    #[test]
    fn html_has_a_bar_per_host_and_marks_the_outlier() {
        let row = |host: &str, v: f64, verdict: Verdict, outlier: bool| Row {
            host: host.into(),
            run_id: format!("id-{host}"),
            value: Some(v),
            ratio: Some(v / 1000.0),
            vs_baseline: None,
            z: Some(0.0),
            verdict,
            outlier,
            reason: None,
        };
        let r = FleetReport {
            run: "f<1>".into(),
            hosts: 3,
            start_skew_ns: Some(1_000_000),
            fail_below: Some(0.1),
            baseline: None,
            groups: vec![Group {
                what: "cpu".into(),
                figure: "events_per_s".into(),
                title: "event rate, events/s".into(),
                unit: "events/s".into(),
                higher_is_better: true,
                median: Some(1000.0),
                mad: Some(10.0),
                spread: Some(0.8),
                baseline: None,
                baseline_runs: 0,
                rows: vec![
                    row("a", 1000.0, Verdict::Pass, false),
                    row("b", 1010.0, Verdict::Pass, false),
                    row("c<x>", 200.0, Verdict::Slow, true),
                ],
            }],
            without_run: Vec::new(),
        };
        let h = html(&r, "hostbench test");
        assert_eq!(h.matches("class=\"bar\"").count(), 3, "{h}");
        assert!(h.contains("c&lt;x&gt; ⚠"), "{h}");
        assert!(h.contains("#b3261e"));
        assert!(!h.contains("f<1>"));
        assert_eq!(h, html(&r, "hostbench test"));
    }
}
