//! `hostbench compare` output: a terminal table, Markdown, CSV (one line per row and side)
//! and JSON (the [`Comparison`] as is, `schemas/compare.v1.json`). Every format carries the
//! same facts: per side the median, its confidence interval and the run count; per
//! non-baseline side the ratio to the baseline and the verdict; the geometric-mean line, the
//! variants not compared and why, and the warnings.
//!
//! [`Comparison`]: hostbench_core::compare::Comparison

use crate::num;
use hostbench_core::compare::{Cell, Comparison, Row, Verdict, min_runs_for_verdict};
use hostbench_core::result::Better;
use hostbench_core::stats::min_samples_for_ci;
use std::fmt::Write as _;

/// The verdict as a table cell: `faster`, `slower`, `~` (no significant difference),
/// `single run, no verdict`, `too few runs`.
pub fn verdict_short(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::NoDifference => "~",
        Verdict::SingleRun => "single run, no verdict",
        Verdict::TooFewRuns => "too few runs",
    }
}

/// The half-width of the interval around the median, in percent of it (the larger side).
pub fn ci_percent(c: &Cell) -> Option<f64> {
    let ci = c.ci?;
    if c.median == 0.0 || !c.median.is_finite() {
        return None;
    }
    Some((c.median - ci.lo).max(ci.hi - c.median) / c.median.abs() * 100.0)
}

/// The unit a row's figures are shown in, and the divisor from the stored unit: a time in ns
/// is shown in ns, µs, ms or s by the row's smallest median (every side of a row in the same
/// unit, so the cells compare at a glance); other units as stored. CSV and JSON keep ns.
pub fn display_unit(r: &Row) -> (String, f64) {
    let least = r
        .cells
        .iter()
        .flatten()
        .map(|c| c.median.abs())
        .filter(|m| m.is_finite())
        .fold(f64::INFINITY, f64::min);
    scaled_unit(&r.unit, least)
}

/// The unit to show figures in `unit` whose smallest magnitude is `least`, and the divisor:
/// nanoseconds as ns, µs, ms or s and bytes per second as B/s, KiB/s, MiB/s or GiB/s, so a
/// figure keeps four or more significant digits; other units unchanged.
pub fn scaled_unit(unit: &str, least: f64) -> (String, f64) {
    let steps: &[(&str, f64)] = match unit {
        "ns" => &[("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)],
        "B/s" => &[
            ("B/s", 1.0),
            ("KiB/s", 1024.0),
            ("MiB/s", 1048576.0),
            ("GiB/s", 1073741824.0),
        ],
        _ => return (unit.to_string(), 1.0),
    };
    let mut pick = steps[0];
    if least.is_finite() {
        for &(u, div) in steps {
            if least / div >= 10.0 {
                pick = (u, div);
            }
        }
    }
    (pick.0.to_string(), pick.1)
}

/// What the row's figure is called beside `unit` (from [`display_unit`]): its label
/// (`mean latency`), which carries no unit. A row of results stored before labels existed
/// shows the name, whose stored `_ns` suffix is dropped when the row is shown in another unit
/// (`latency_avg` in µs, not `latency_avg_ns`).
pub fn display_figure(r: &Row, unit: &str) -> String {
    if let Some(label) = &r.label {
        return label.clone();
    }
    match r.figure.strip_suffix("_ns") {
        Some(base) if r.unit == "ns" && unit != "ns" && !base.is_empty() => base.to_string(),
        _ => r.figure.clone(),
    }
}

/// `1234 ±0.4% n=6`, `1234 n=3`, or `1234` for a single run.
pub fn cell_text(c: &Cell) -> String {
    cell_text_in(c, 1.0)
}

/// [`cell_text`] with the median divided by `div` (see [`display_unit`]).
pub fn cell_text_in(c: &Cell, div: f64) -> String {
    let mut s = num(c.median / div);
    if let Some(p) = ci_percent(c) {
        let _ = write!(s, " ±{}%", pct(p));
    }
    if c.n > 1 {
        let _ = write!(s, " n={}", c.n);
    }
    s
}

fn pct(p: f64) -> String {
    if p < 10.0 {
        format!("{p:.1}")
    } else {
        format!("{p:.0}")
    }
}

/// A ratio as `×1.23`.
pub fn ratio_text(r: f64) -> String {
    if (0.01..100.0).contains(&r) {
        format!("×{r:.2}")
    } else {
        format!("×{}", num(r))
    }
}

/// A score's change as a signed percentage (`+18%`, `-4.5%`): whole percents from 10 %,
/// one decimal below.
fn change_pct(speedup: f64) -> String {
    let p = (speedup - 1.0) * 100.0;
    if p.abs() >= 10.0 {
        format!("{p:+.0}%")
    } else {
        format!("{p:+.1}%")
    }
}

/// For each headline row without a verdict: how many runs per side would find the observed
/// difference, and a 5 % one, at the observed spread.
fn runs_needed_text(c: &Comparison, bullet: &str) -> Option<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut lines = Vec::new();
    for row in c.rows.iter().filter(|r| seen.insert(r.variant)) {
        let v = c.variant_of(row);
        for s in 1..c.sides.len() {
            let Some(n) = c.runs_needed(row, s) else {
                continue;
            };
            let observed = match n.for_observed {
                Some(k) => format!(
                    "the observed {:.1}% needs ~{k} runs per side",
                    n.observed * 100.0
                ),
                None => format!(
                    "the observed {:.1}% is within the noise threshold",
                    n.observed * 100.0
                ),
            };
            let five = n
                .for_5_percent
                .map(|k| format!("; 5% needs ~{k} runs per side"))
                .unwrap_or_default();
            lines.push(format!(
                "{bullet}{} {}, {}: {observed}{five} (now {} and {})",
                variant_name(v),
                row.label.as_deref().unwrap_or(&row.figure),
                c.sides[s].name,
                n.have.0,
                n.have.1
            ));
        }
    }
    if lines.is_empty() {
        return None;
    }
    Some(format!(
        "\nruns needed for a verdict (rank test, 80% power, at the larger spread of the two sides):\n{}\n",
        lines.join("\n")
    ))
}

/// The ranking of three or more sides: rank (`=` when tied with a better one), side,
/// score with its interval, and which sides it cannot be told from.
fn ranking_text(c: &Comparison, bullet: &str) -> Option<String> {
    let r = c.ranking();
    if r.is_empty() {
        return None;
    }
    let mut s = format!(
        "\nranking by score ({:.0}% intervals; sides whose intervals overlap cannot be told apart):\n",
        c.options.confidence * 100.0
    );
    for e in &r {
        let tied = r.iter().any(|o| o.side != e.side && o.rank == e.rank);
        let ci = match (e.ci_lo, e.ci_hi) {
            (Some(lo), Some(hi)) if e.side != 0 => {
                format!(" ({}–{})", ratio_text(lo), ratio_text(hi))
            }
            _ if e.side == 0 => " (baseline)".to_string(),
            _ => String::new(),
        };
        let with: Vec<&str> = e
            .tied_with
            .iter()
            .map(|&j| c.sides[j].name.as_str())
            .collect();
        let _ = writeln!(
            s,
            "{bullet}{}{} {} {}{ci}{}",
            e.rank,
            if tied { "=" } else { "" },
            c.sides[e.side].name,
            ratio_text(e.score),
            if with.is_empty() {
                String::new()
            } else {
                format!("; tied with {}", with.join(", "))
            }
        );
    }
    Some(s)
}

/// A variant as the notes name it: `cpu threads=1, max_prime=20000`, or a suite entry's
/// own name (`cpu 20000, 1 thread`), which says the workload already.
pub fn variant_name(v: &hostbench_core::compare::Variant) -> String {
    if v.entry.is_some() {
        v.label.clone()
    } else {
        format!("{} {}", v.workload, v.label)
    }
}

/// A score's interval as the notes print it: ` (95% ×1.12–×1.24)`; empty without one.
fn score_interval(c: &Comparison, g: &hostbench_core::compare::GeoMean) -> String {
    match (g.ci_lo, g.ci_hi) {
        (Some(lo), Some(hi)) => format!(
            " ({:.0}% {}–{})",
            c.options.confidence * 100.0,
            ratio_text(lo),
            ratio_text(hi)
        ),
        _ => format!(
            " (no interval: fewer than {} runs per side)",
            hostbench_core::compare::MIN_RUNS_FOR_INTERVAL
        ),
    }
}

/// A price per hour as typed back: `0.0725/h`.
pub fn price_per_hour(p: f64) -> String {
    // Up to six decimals, trailing zeros dropped (0.0725/h, 0.06/h, 1.2/h); a price too
    // small or too large for that in scientific notation (1.0e-9/h), never "0/h".
    if !(1e-4..1e9).contains(&p) {
        return format!("{p:.3e}/h");
    }
    let t = format!("{p:.6}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    format!("{t}/h")
}

/// The price-performance lines of the notes: each side's score per unit of price against
/// the baseline, and each headline rate per unit of price; `None` without prices.
fn price_text(c: &Comparison, bullet: &str) -> Option<String> {
    if c.price_performance.iter().all(Option::is_none) {
        return None;
    }
    let mut s = String::new();
    let priced: Vec<String> = c
        .sides
        .iter()
        .zip(&c.price_performance)
        .map(|(side, p)| match p {
            Some(p) => format!("{} {}", side.name, price_per_hour(p.per_hour)),
            None => format!("{} (no price)", side.name),
        })
        .collect();
    let _ = writeln!(s, "\nprices: {}", priced.join(", "));
    let scores: Vec<String> = c
        .sides
        .iter()
        .zip(&c.price_performance)
        .skip(1)
        .filter_map(|(side, p)| {
            let g = p.as_ref()?.score?;
            let ci = score_interval(c, &g);
            Some(format!("{} {}{ci}", side.name, ratio_text(g.speedup)))
        })
        .collect();
    if !scores.is_empty() {
        let _ = writeln!(
            s,
            "price-performance vs {} (score per relative price, above 1 = more work for the money): {}",
            c.sides[0].name,
            scores.join("; ")
        );
    }
    let mut rows: std::collections::BTreeMap<usize, Vec<String>> = Default::default();
    for (side, p) in c.sides.iter().zip(&c.price_performance) {
        for pp in p.iter().flat_map(|p| &p.per_price) {
            rows.entry(pp.row).or_default().push(format!(
                "{} {} {}",
                side.name,
                num(pp.value),
                pp.unit
            ));
        }
    }
    if !rows.is_empty() {
        let _ = writeln!(s, "per unit of price (headline rates):");
        for (i, vals) in rows {
            let r = &c.rows[i];
            let v = c.variant_of(r);
            let _ = writeln!(
                s,
                "{bullet}{} {}: {}",
                variant_name(v),
                r.label.as_deref().unwrap_or(&r.figure),
                vals.join("; ")
            );
        }
    }
    Some(s)
}

/// A side's score as the notes print it: `×1.18 (95% ×1.12–×1.24) over 5 headline rows`,
/// plus the rows left out.
pub fn score_text(c: &Comparison, s: usize) -> String {
    let what = if c.options.all_figures {
        "row(s)"
    } else {
        "headline row(s)"
    };
    let left = c.rows_left_out(s);
    let left = if left > 0 {
        format!(
            "; {left} left out: a single run on a side (a score needs {} runs per side)",
            hostbench_core::compare::MIN_RUNS_FOR_SCORE
        )
    } else {
        String::new()
    };
    match c.geomean.get(s).copied().flatten() {
        Some(g) => {
            let ci = score_interval(c, &g);
            format!("{}{ci} over {} {what}{left}", ratio_text(g.speedup), g.rows)
        }
        None if left.is_empty() => "- (no row in common)".into(),
        None => format!("- (no score{left})"),
    }
}

/// The sentence a side's comparison opens with: how much faster or slower it is than the
/// baseline overall, with the interval, and how many rows are not significant.
pub fn verdict_sentence(c: &Comparison, s: usize) -> String {
    let (side, base) = (&c.sides[s].name, &c.sides[0].name);
    let rows: Vec<Option<Verdict>> = c
        .rows
        .iter()
        .filter_map(|r| r.cells.get(s)?.as_ref().map(|x| x.verdict))
        .collect();
    let count = |f: &dyn Fn(&Option<Verdict>) -> bool| rows.iter().filter(|v| f(v)).count();
    let same = count(&|v| *v == Some(Verdict::NoDifference));
    let undecided = count(&|v| matches!(v, Some(Verdict::SingleRun | Verdict::TooFewRuns)));
    let rows_note = match (rows.len(), same, undecided) {
        (0, ..) => String::new(),
        (n, s, 0) => format!("; {s} of {n} row(s) not significant"),
        (n, s, u) => {
            format!("; {s} of {n} row(s) not significant, {u} without a verdict (too few runs)")
        }
    };
    let what = |n: usize| {
        let w = if c.options.all_figures {
            "row"
        } else {
            "headline"
        };
        format!("{n} {w}{}", if n == 1 { "" } else { "s" })
    };
    let Some(g) = c.geomean.get(s).copied().flatten() else {
        let left = c.rows_left_out(s);
        return if left > 0 {
            format!(
                "{side} against {base}: no overall score, every shared headline has a single run on a side (a score needs {} runs per side){rows_note}.",
                hostbench_core::compare::MIN_RUNS_FOR_SCORE
            )
        } else {
            format!("{side} against {base}: nothing in common to compare.")
        };
    };
    let (Some(lo), Some(hi)) = (g.ci_lo, g.ci_hi) else {
        // Too few runs for an interval: the medians' ratio, and no claim from it.
        return format!(
            "{side} against {base}: {} overall by the medians over {}, too few runs for a \
             verdict (an interval needs {} runs per side on each){rows_note}.",
            change_pct(g.speedup),
            what(g.rows),
            hostbench_core::compare::MIN_RUNS_FOR_INTERVAL
        );
    };
    let level = c.options.confidence * 100.0;
    let interval = format!(
        "{level:.0}% interval {} to {}",
        change_pct(lo),
        change_pct(hi)
    );
    let head = if lo <= 1.0 && 1.0 <= hi {
        format!(
            "{side} and {base} are not clearly different ({} overall, {interval})",
            change_pct(g.speedup)
        )
    } else if g.speedup > 1.0 {
        format!(
            "{side} is {:.0}% faster than {base} ({interval})",
            (g.speedup - 1.0) * 100.0
        )
    } else {
        format!(
            "{side} is {:.0}% slower than {base} ({interval})",
            (1.0 - g.speedup) * 100.0
        )
    };
    let cost = c
        .price_performance
        .get(s)
        .and_then(|p| p.as_ref()?.score)
        .map(|pp| {
            // Cost per unit of work relative to the baseline: 1 / price-performance.
            let d = (1.0 / pp.speedup - 1.0) * 100.0;
            if d.abs() < 0.5 {
                ", at the same cost per unit of work".to_string()
            } else if d < 0.0 {
                format!(", {:.0}% cheaper per unit of work", -d)
            } else {
                format!(", {d:.0}% dearer per unit of work")
            }
        })
        .unwrap_or_default();
    format!("{head} over {}{cost}{rows_note}.", what(g.rows))
}

/// A p-value as `p=0.003` (or `p<0.001`).
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p<0.001".into()
    } else {
        format!("p={p:.3}")
    }
}

/// `×2.00 faster p=0.002`: the ratio to the baseline, the verdict, and the p-value when the
/// test could decide.
pub fn vs_text(c: &Cell) -> String {
    let mut s = c.ratio.map(ratio_text).unwrap_or_else(|| "-".into());
    if let Some(v) = c.verdict {
        let _ = write!(s, " {}", verdict_short(v));
        if let (Some(p), Verdict::Faster | Verdict::Slower | Verdict::NoDifference) = (c.p_value, v)
        {
            let _ = write!(s, " {}", p_text(p));
        }
    }
    s
}

/// `higher` or `lower`.
pub fn better_text(b: Better) -> &'static str {
    match b {
        Better::Higher => "higher",
        Better::Lower => "lower",
    }
}

/// The header and body cells of the comparison table.
fn table(c: &Comparison) -> (Vec<String>, Vec<Vec<String>>) {
    let mut head = vec![
        "WORKLOAD".to_string(),
        "VARIANT".into(),
        "FIGURE".into(),
        "UNIT".into(),
        "BETTER".into(),
    ];
    for (i, s) in c.sides.iter().enumerate() {
        head.push(s.name.clone());
        if i > 0 {
            head.push(format!("{} vs {}", s.name, c.sides[0].name));
        }
    }
    let body = c
        .rows
        .iter()
        .map(|r| {
            let v = c.variant_of(r);
            let (unit, div) = display_unit(r);
            let mut cells = vec![
                v.workload.clone(),
                v.label.clone(),
                display_figure(r, &unit),
                unit,
                better_text(r.better).into(),
            ];
            for (i, cell) in r.cells.iter().enumerate() {
                cells.push(
                    cell.as_ref()
                        .map(|x| cell_text_in(x, div))
                        .unwrap_or_else(|| "-".into()),
                );
                if i > 0 {
                    cells.push(cell.as_ref().map(vs_text).unwrap_or_else(|| "-".into()));
                }
            }
            cells
        })
        .collect();
    (head, body)
}

/// The lines after the table: geometric means, variants not compared, warnings, method.
fn notes(c: &Comparison, bullet: &str, code: &dyn Fn(&str) -> String) -> String {
    let mut s = String::new();
    let gm: Vec<String> = c
        .sides
        .iter()
        .zip(&c.geomean)
        .skip(1)
        .enumerate()
        .map(|(i, (side, _))| format!("{} {}", side.name, score_text(c, i + 1)))
        .collect();
    if !gm.is_empty() {
        let _ = writeln!(
            s,
            "\nscore vs {} (geometric mean of the speedups, above 1 is better): {}",
            c.sides[0].name,
            gm.join("; ")
        );
        if let Some(r) = runs_needed_text(c, bullet) {
            s.push_str(&r);
        }
        if let Some(r) = ranking_text(c, bullet) {
            s.push_str(&r);
        }
        if let Some(p) = price_text(c, bullet) {
            s.push_str(&p);
        }
        if !c.scores_cover_the_same_rows() {
            let _ = writeln!(
                s,
                "{bullet}the sides' scores cover different rows: compare each with the baseline, not with each other"
            );
        }
    }
    let not: Vec<_> = c.variants.iter().filter(|v| !v.compared).collect();
    if !not.is_empty() {
        let _ = writeln!(s, "\nnot compared:");
        for v in not {
            let _ = writeln!(
                s,
                "{bullet}{} ({}): {}",
                code(&v.workload),
                v.label,
                v.reason.as_deref().unwrap_or("")
            );
        }
    }
    let one_sided = jobs_not_on_every_side(c);
    if !one_sided.is_empty() {
        let _ = writeln!(
            s,
            "\nfio jobs not on every side (their rows are empty there):"
        );
        for j in one_sided {
            let _ = writeln!(s, "{bullet}{j}");
        }
    }
    if !c.warnings.is_empty() {
        let _ = writeln!(s, "\nwarnings:");
        for w in &c.warnings {
            let _ = writeln!(s, "{bullet}{}", w.message);
        }
    }
    let _ = writeln!(s, "\n{}", method(c));
    s
}

/// The fio jobs (report blocks) of a compared variant that some side's runs do not have,
/// each as `disk.fio (VARIANT): job 'mix #2' on b only, not on a`: their rows are empty
/// on those sides, which says nothing about speed.
pub fn jobs_not_on_every_side(c: &Comparison) -> Vec<String> {
    use hostbench_core::compare::fio_jobs::{split_figure, split_label};
    // (variant, key) → (the job's label, the sides with a value in any of its rows).
    let mut jobs: Vec<((usize, &str), String, Vec<bool>)> = Vec::new();
    for r in &c.rows {
        let Some((key, _)) = split_figure(&r.figure) else {
            continue;
        };
        let on: Vec<bool> = r.cells.iter().map(Option::is_some).collect();
        match jobs.iter_mut().find(|(k, ..)| *k == (r.variant, key)) {
            Some((_, _, sides)) => {
                for (a, b) in sides.iter_mut().zip(on) {
                    *a |= b;
                }
            }
            None => {
                let label = r
                    .label
                    .as_deref()
                    .and_then(split_label)
                    .map_or(key, |(l, _)| l)
                    .to_string();
                jobs.push(((r.variant, key), label, on));
            }
        }
    }
    let names = |sides: &[bool], on: bool| -> String {
        sides
            .iter()
            .enumerate()
            .filter(|(_, x)| **x == on)
            .map(|(i, _)| c.sides[i].name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    jobs.into_iter()
        .filter(|(_, _, sides)| sides.iter().any(|x| !x))
        .map(|((vi, _), label, sides)| {
            format!(
                "{}: job '{label}' on {} only, not on {}",
                variant_name(&c.variants[vi]),
                names(sides.as_slice(), true),
                names(sides.as_slice(), false)
            )
        })
        .collect()
}

/// One paragraph on how the figures and verdicts were computed.
pub fn method(c: &Comparison) -> String {
    let o = &c.options;
    format!(
        "Each cell is the median of a side's runs, ± the larger half of the {:.0} % confidence \
         interval of the median (order statistics; needs {} runs), n = runs. Verdict: faster \
         or slower when a two-sided Mann-Whitney U test gives p < {} and the medians differ by \
         more than {}% (the noise threshold); ~ = no significant difference. A side needs {} \
         runs (against as many) for the test to be able to decide; with one run there is only \
         the ratio.",
        o.confidence * 100.0,
        min_samples_for_ci(o.confidence),
        o.alpha,
        crate::svg::tick(o.threshold * 100.0),
        min_runs_for_verdict(o.alpha),
    )
}

fn sides_text(c: &Comparison) -> String {
    let mut s = String::from("sides (the first is the baseline):\n");
    let w = c
        .sides
        .iter()
        .map(|x| x.name.chars().count())
        .max()
        .unwrap_or(0);
    for x in &c.sides {
        let _ = writeln!(
            s,
            "  {:<w$}  {} run(s) on {}, hostbench {}{}",
            x.name,
            x.runs,
            if x.hosts.is_empty() {
                "-".into()
            } else {
                x.hosts.join(", ")
            },
            x.tool_versions.join(", "),
            if x.notes.is_empty() {
                String::new()
            } else {
                format!("; {}", x.notes.join(", "))
            }
        );
    }
    s
}

/// The terminal table.
pub fn text(c: &Comparison) -> String {
    let (head, body) = table(c);
    let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in &body {
        for (i, x) in r.iter().enumerate() {
            w[i] = w[i].max(x.chars().count());
        }
    }
    let mut s = String::new();
    for i in 1..c.sides.len() {
        s.push_str(&verdict_sentence(c, i));
        s.push('\n');
    }
    if c.sides.len() > 1 {
        s.push('\n');
    }
    s.push_str(&sides_text(c));
    s.push('\n');
    let line = |cells: &[String]| {
        let mut l = String::new();
        for (i, x) in cells.iter().enumerate() {
            let pad = w[i] - x.chars().count();
            l.push_str(x);
            if i + 1 < cells.len() {
                l.push_str(&" ".repeat(pad + 2));
            }
        }
        l.trim_end().to_string() + "\n"
    };
    if body.is_empty() {
        s.push_str("no workload variant was run on the baseline and another side\n");
    } else {
        s.push_str(&line(&head));
        for r in &body {
            s.push_str(&line(r));
        }
    }
    s.push_str(&notes(c, "  - ", &|t| t.to_string()));
    s
}

fn md_cell(s: &str) -> String {
    // Markdown renderers pass raw HTML through: a label such as `<img onerror=...>` must
    // arrive as text.
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('\n', " ")
}

/// Markdown: the sides, the table, and the notes as lists.
pub fn markdown(c: &Comparison) -> String {
    // A notes column only when some side has notes (`results annotate`).
    let with_notes = c.sides.iter().any(|x| !x.notes.is_empty());
    let mut s = String::new();
    for i in 1..c.sides.len() {
        s.push_str(&format!("**{}**\n\n", md_cell(&verdict_sentence(c, i))));
    }
    s.push_str(if with_notes {
        "| side | runs | hosts | hostbench | notes |\n|---|---:|---|---|---|\n"
    } else {
        "| side | runs | hosts | hostbench |\n|---|---:|---|---|\n"
    });
    for (i, x) in c.sides.iter().enumerate() {
        let _ = writeln!(
            s,
            "| {}{} | {} | {} | {} |{}",
            md_cell(&x.name),
            if i == 0 { " (baseline)" } else { "" },
            x.runs,
            md_cell(&x.hosts.join(", ")),
            md_cell(&x.tool_versions.join(", ")),
            if with_notes {
                format!(" {} |", md_cell(&x.notes.join(", ")))
            } else {
                String::new()
            }
        );
    }
    let (head, body) = table(c);
    s.push('\n');
    if body.is_empty() {
        s.push_str("No workload variant was run on the baseline and another side.\n");
    } else {
        let _ = writeln!(
            s,
            "| {} |",
            head.iter()
                .map(|h| md_cell(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let _ = writeln!(
            s,
            "|{}",
            head.iter()
                .enumerate()
                .map(|(i, _)| if i < 5 { "---|" } else { "---:|" })
                .collect::<String>()
        );
        for r in &body {
            let _ = writeln!(
                s,
                "| {} |",
                r.iter().map(|x| md_cell(x)).collect::<Vec<_>>().join(" | ")
            );
        }
    }
    // The notes quote names and messages: no raw HTML may pass through either.
    s.push_str(
        &notes(c, "- ", &|t| format!("`{t}`"))
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;"),
    );
    s
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x}")).unwrap_or_default()
}

/// CSV: a header, then one line per row and side that has a value.
pub fn csv(c: &Comparison) -> String {
    let mut s = String::from(
        "workload,variant,figure,unit,better,side,baseline,n,median,ci_lo,ci_hi,ci_level,rsd,\
         ratio,speedup,p_value,verdict\n",
    );
    for r in &c.rows {
        let v = c.variant_of(r);
        for (i, cell) in r.cells.iter().enumerate() {
            let Some(x) = cell else { continue };
            let fields = [
                csv_field(&v.workload),
                csv_field(&v.label),
                csv_field(&r.figure),
                csv_field(&r.unit),
                better_text(r.better).into(),
                csv_field(&c.sides[i].name),
                (i == 0).to_string(),
                x.n.to_string(),
                format!("{}", x.median),
                opt(x.ci.map(|c| c.lo)),
                opt(x.ci.map(|c| c.hi)),
                opt(x.ci.map(|c| c.level)),
                opt(x.rsd),
                opt(x.ratio),
                opt(x.speedup),
                opt(x.p_value),
                x.verdict
                    .map(|v| serde_json::to_value(v).ok())
                    .and_then(|v| v?.as_str().map(str::to_string))
                    .unwrap_or_default(),
            ];
            let _ = writeln!(s, "{}", fields.join(","));
        }
    }
    s
}

/// JSON: the comparison as is, pretty-printed, with a trailing newline.
pub fn json(c: &Comparison) -> String {
    serde_json::to_string_pretty(c).expect("a Comparison always serializes") + "\n"
}

/// The row's cells, for renderers that walk them with the side index.
pub fn cells(r: &Row) -> impl Iterator<Item = (usize, &Cell)> {
    r.cells
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.as_ref().map(|c| (i, c)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::result::Better;

    fn cell(median: f64, n: usize) -> Cell {
        Cell {
            n,
            values: vec![median; n],
            median,
            ci: None,
            rsd: None,
            ratio: None,
            speedup: None,
            p_value: None,
            p_exact: None,
            verdict: None,
        }
    }

    fn row(unit: &str, medians: &[f64]) -> Row {
        Row {
            variant: 0,
            figure: "latency_avg_ns".into(),
            label: None,
            unit: unit.into(),
            better: Better::Lower,
            cells: medians.iter().map(|&m| Some(cell(m, 1))).collect(),
        }
    }

    #[test]
    fn times_are_shown_in_a_readable_unit_per_row() {
        assert_eq!(
            display_unit(&row("ns", &[68_898.0, 115_005.0])),
            ("µs".into(), 1e3)
        );
        assert_eq!(
            display_unit(&row("ns", &[950.0, 68_898.0])),
            ("ns".into(), 1.0)
        );
        assert_eq!(display_unit(&row("ns", &[2.5e7, 3e7])), ("ms".into(), 1e6));
        assert_eq!(display_unit(&row("ns", &[2.5e10])), ("s".into(), 1e9));
        let r = row("ns", &[68_898.0]);
        assert_eq!(display_figure(&r, "µs"), "latency_avg");
        assert_eq!(display_figure(&r, "ns"), "latency_avg_ns");
        let labelled = Row {
            label: Some("mean latency".into()),
            ..r
        };
        assert_eq!(display_figure(&labelled, "µs"), "mean latency");
        assert_eq!(
            display_unit(&row("events/s", &[2.5e10])),
            ("events/s".into(), 1.0)
        );
        assert_eq!(cell_text_in(&cell(68_898.0, 3), 1e3), "68.90 n=3");
        // Bytes per second: fio's and STREAM's throughput in MiB/s or GiB/s.
        assert_eq!(
            display_unit(&row("B/s", &[5.2e8, 9.9e8])),
            ("MiB/s".into(), 1048576.0)
        );
        assert_eq!(
            display_unit(&row("B/s", &[2.1e11])),
            ("GiB/s".into(), 1073741824.0)
        );
        assert_eq!(display_unit(&row("B/s", &[8000.0])), ("B/s".into(), 1.0));
    }
}
