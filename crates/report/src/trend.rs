//! `hostbench trend`'s output: one table (text, markdown) or one chart (HTML) per workload
//! variant, its headline figure run after run, with the runs that step out of line marked
//! as [`hostbench_core::trend`] judges them.

use crate::svg::{self, Axis, Series, esc};
use hostbench_core::result::Better;
use hostbench_core::trend::{Mark, Trend, TrendSeries};
use std::fmt::Write as _;

/// The mark as a person reads it, with the change against the runs before.
fn mark_text(p: &hostbench_core::trend::TrendPoint, s: &TrendSeries) -> String {
    let change = p
        .point
        .change
        .map(|c| format!("{:+.1}%", c * 100.0))
        .unwrap_or_default();
    let worse = p.point.change.is_some_and(|c| match s.better {
        Better::Higher => c < 0.0,
        Better::Lower => c > 0.0,
    });
    let word = if worse { "worse" } else { "better" };
    if let Some(how) = &p.incomplete {
        return format!(
            "not judged: the run ended early ({})",
            how.replace('_', " ")
        );
    }
    match p.point.mark {
        Mark::Change => format!(
            "CHANGE {change} ({word}; median before {})",
            fmt_value(p.point.baseline.unwrap_or(f64::NAN))
        ),
        Mark::Outlier => format!(
            "outlier {change} ({word}; median before {})",
            fmt_value(p.point.baseline.unwrap_or(f64::NAN))
        ),
        Mark::InLine | Mark::Unjudged => String::new(),
    }
}

/// A value with about four significant digits.
fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

fn heading(s: &TrendSeries) -> String {
    format!(
        "{} {} — {}, {} ({} is better)",
        s.workload,
        s.variant,
        s.label.as_deref().unwrap_or(&s.figure),
        s.unit,
        match s.better {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    )
}

/// The terminal text: per variant, one line per run (start, label, value, mark), then what
/// the marks mean.
pub fn text(t: &Trend) -> String {
    let mut out = String::new();
    let runs: usize = t.series.iter().map(|s| s.points.len()).sum();
    let _ = writeln!(out, "trend of {} ({runs} run(s))", t.subject);
    for s in &t.series {
        let _ = writeln!(out, "\n{}", heading(s));
        for p in &s.points {
            let _ = writeln!(
                out,
                "  {}  {:<12}  {:>12}  {}",
                p.started_at
                    .get(..16)
                    .unwrap_or(&p.started_at)
                    .replace('T', " "),
                crate::svg::clip(p.label.as_deref().unwrap_or("-"), 12),
                fmt_value(p.point.value),
                mark_text(p, s)
            );
        }
    }
    let changes: usize = t
        .series
        .iter()
        .flat_map(|s| &s.points)
        .filter(|p| p.point.mark == Mark::Change)
        .count();
    let _ = writeln!(
        out,
        "\n{changes} change(s). A run is out of line when it is further from the median of the runs before it (since the last change, at least {}) than {} robust standard deviations and than {:.0}%; two in a row on one side are a CHANGE, one alone an outlier.",
        hostbench_core::trend::MIN_HISTORY,
        hostbench_core::trend::ROBUST_Z,
        t.threshold * 100.0
    );
    out.lines()
        .map(|l| l.trim_end().to_string() + "\n")
        .collect()
}

/// The trend as one self-contained HTML page: a line chart per variant (changes and
/// outliers marked), and the table of runs under it.
pub fn html(t: &Trend, title: &str, generator: &str) -> String {
    let mut h = String::with_capacity(16 * 1024);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"{}\">\n<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n",
        esc(generator),
        esc(title),
        crate::html::CSS
    );
    let runs: usize = t.series.iter().map(|s| s.points.len()).sum();
    let _ = writeln!(
        h,
        "<header><h1>{}</h1>\n<p class=\"muted\">{} — {runs} run(s) in {} series. Marked: a CHANGE (two runs in a row out of line on one side: the level moved) and outliers (one run out of line); out of line = further from the median of the runs before it than {} robust standard deviations and than {:.0}%.</p></header>",
        esc(title),
        esc(&t.subject),
        t.series.len(),
        hostbench_core::trend::ROBUST_Z,
        t.threshold * 100.0
    );
    h.push_str(&sections(t, "series"));
    h.push_str("</body>\n</html>\n");
    h
}

/// The trend's sections, a chart and a table per variant (ids prefixed with `id`), for its
/// own page and for `hostbench report --trend`.
pub fn sections(t: &Trend, id: &str) -> String {
    let mut h = String::new();
    for (i, s) in t.series.iter().enumerate() {
        let _ = writeln!(h, "<section id=\"{id}-{i}\"><h2>{}</h2>", esc(&heading(s)));
        let vals: Vec<f64> = s
            .points
            .iter()
            .map(|p| p.point.value)
            .filter(|v| v.is_finite())
            .collect();
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if lo.is_finite() {
            let pad = ((hi - lo) * 0.1).max(hi.abs() * 0.02);
            let n = s.points.len();
            let x = Axis::linear("run (oldest first)", 1.0, n.max(2) as f64, |v| {
                format!("{v:.0}")
            });
            let y = Axis::linear(&s.unit, (lo - pad).max(0.0), hi + pad, svg::tick);
            let line = |mark: Option<Mark>| -> Vec<(f64, f64)> {
                s.points
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| mark.is_none_or(|m| p.point.mark == m))
                    .map(|(k, p)| ((k + 1) as f64, p.point.value))
                    .collect()
            };
            let series = [
                Series {
                    name: s.figure.clone(),
                    color: svg::color(0).into(),
                    points: line(None),
                    dots: true,
                },
                Series {
                    name: "change".into(),
                    color: "#c62828".into(),
                    points: line(Some(Mark::Change)),
                    dots: true,
                },
                Series {
                    name: "outlier".into(),
                    color: "#ef6c00".into(),
                    points: line(Some(Mark::Outlier)),
                    dots: true,
                },
            ];
            let legend = vec![
                (s.figure.clone(), svg::color(0).to_string()),
                ("change".to_string(), "#c62828".to_string()),
                ("outlier".to_string(), "#ef6c00".to_string()),
            ];
            let series: Vec<Series> = series
                .into_iter()
                .filter(|x| !x.points.is_empty())
                .collect();
            if let Some(chart) = svg::line_chart(&heading(s), &x, &y, &series, &legend) {
                h.push_str(&chart);
            }
        }
        h.push_str("<div class=\"scroll\"><table>\n<thead><tr><th>#</th><th>started (UTC)</th><th>label</th><th>value</th><th>mark</th><th>run id</th></tr></thead>\n<tbody>\n");
        for (k, p) in s.points.iter().enumerate() {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td><code>{}</code></td></tr>",
                k + 1,
                esc(&p
                    .started_at
                    .get(..19)
                    .unwrap_or(&p.started_at)
                    .replace('T', " ")),
                esc(p.label.as_deref().unwrap_or("-")),
                esc(&fmt_value(p.point.value)),
                esc(&mark_text(p, s)),
                esc(p.id.get(..12).unwrap_or(&p.id))
            );
        }
        h.push_str("</tbody></table></div></section>\n");
    }
    h
}
