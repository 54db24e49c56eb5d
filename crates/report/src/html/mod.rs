//! `hostbench report`: one self-contained HTML file — inline CSS and inline SVG, no script,
//! font, image, stylesheet or any other reference outside the file — that reads on a phone
//! and prints. Contents, in order: the sides and the geometric-mean summary, warnings (the
//! comparison's and the runs' own), the host fingerprints side by side (rows that differ
//! highlighted, identical cells merged), the comparison table, charts per workload variant
//! (bars per figure with confidence-interval whiskers and the runs as dots, latency
//! percentile curves from the stored HDR histograms, per-interval timelines, the memlat
//! staircase, STREAM's kernels, a fio job file's jobs side by side per figure), and the exact
//! command line of every run.
//!
//! Invariants: every user-controlled string (labels, host names, command lines, messages)
//! goes through [`esc`]; the comparison JSON embedded for machines is a non-executable
//! `application/json` block with `<`, `>` and `&` escaped; the output depends only on the
//! input (no clock, no environment), so the same runs give the same bytes.

use crate::compare::{
    cell_text_in, ci_percent, display_figure, display_unit, method, p_text, ratio_text,
    verdict_short,
};
use crate::num;
use crate::svg::{self, Axis, Bar, Group, Series, color, esc, tick};
use hostbench_core::compare::{Comparison, Row, Variant, Verdict, fio_jobs};
use hostbench_core::host::HostInfo;
use hostbench_core::names::{memlat, stream};
use hostbench_core::result::{Better, RunResult, decode_histogram, title_with_unit};
use hostbench_core::stats;
use hostbench_core::units::Bytes;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

/// What a report is made of.
#[derive(Debug)]
pub struct ReportInput<'a> {
    /// Page title.
    pub title: &'a str,
    /// The comparison of the sides.
    pub comparison: &'a Comparison,
    /// Each side's runs, in the comparison's side order.
    pub sides: Vec<&'a [RunResult]>,
    /// What made the report (`hostbench 0.1.0`), shown in the footer.
    pub generator: &'a str,
}

pub(crate) const CSS: &str = r#"
:root{--fg:#1b1b1b;--mu:#5f6368;--bd:#d9d9d9;--hl:#fff1c7;--ok:#0a7d32;--bad:#b3261e}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:var(--fg);background:#fff;margin:0 auto;max-width:1120px;padding:12px 14px 40px}
h1{font-size:1.45em;margin:.3em 0}
h2{font-size:1.2em;border-bottom:1px solid var(--bd);padding-bottom:3px;margin-top:1.7em}
h3{font-size:1.02em;margin:1.2em 0 .4em}
p{margin:.4em 0}
nav a{margin-right:12px;white-space:nowrap}
a{color:#0b57d0}
.muted{color:var(--mu)}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;font-size:13px;width:100%}
th,td{border:1px solid var(--bd);padding:3px 6px;vertical-align:top;text-align:left}
thead th{background:#f4f4f4;position:sticky;top:0}
td.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
tr.diff>*{background:var(--hl)}
tr.diff th::before{content:"≠ ";color:#a86b00}
tr.vh th{background:#f7f9fc;font-weight:600}
tr.vh a{color:inherit;text-decoration:none}
.v-faster{color:var(--ok);font-weight:600}
.v-slower{color:var(--bad);font-weight:600}
.v-none,.v-few{color:var(--mu)}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{border:1px solid var(--bd);border-radius:6px;padding:6px 10px;min-width:200px;flex:1 1 220px}
.big{font-size:1.5em;font-weight:600}
.verdict{font-size:1.1em;font-weight:600;margin:.3em 0}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,430px),1fr));gap:12px;align-items:start}
figure{margin:0;border:1px solid var(--bd);border-radius:6px;padding:6px;break-inside:avoid;page-break-inside:avoid}
figcaption{font-size:12px;color:var(--mu);margin-top:2px}
svg.chart{display:block;width:100%;max-width:760px;height:auto;font-family:inherit}
svg .ct{font-size:13px;font-weight:600;fill:#1b1b1b}
svg .tk{font-size:11px;fill:#333}
svg .al{font-size:11px;fill:#5f6368}
svg .lg{font-size:11px;fill:#333}
svg .gl{font-size:12px;font-weight:600;fill:#1b1b1b}
svg .grid{stroke:#e8e8e8;stroke-width:1}
svg .frame{fill:none;stroke:#bbb}
svg .axis{stroke:#888}
svg .ln{fill:none;stroke-width:1.7;stroke-linejoin:round}
svg .ci{stroke:#111;stroke-width:1.3;fill:none}
svg .pt{fill:#111;fill-opacity:.55}
svg .bar{fill-opacity:.85}
.warn{background:#fff8e1;border-left:4px solid #e6a700;margin:0;padding:6px 12px 6px 30px}
.warn li{margin:.25em 0}
code{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;word-break:break-all}
ol.cmds li{margin:.3em 0}
summary{cursor:pointer}summary h3{display:inline}
.key span{display:inline-block;margin-right:16px;white-space:nowrap}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px;margin-right:5px}
@media (max-width:600px){body{font-size:14px;padding:8px}table{font-size:12px}}
@media print{body{max-width:none;font-size:10pt;padding:0}nav{display:none}.scroll{overflow:visible}h2,h3{break-after:avoid;page-break-after:avoid}thead th{position:static}a{color:inherit;text-decoration:none}}
"#;

/// Renders the report.
pub fn render(input: &ReportInput<'_>) -> String {
    let c = input.comparison;
    let runs: HashMap<&str, &RunResult> = input
        .sides
        .iter()
        .flat_map(|s| s.iter())
        .map(|r| (r.id.as_str(), r))
        .collect();
    let mut h = String::with_capacity(64 * 1024);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"{}\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(input.generator),
        esc(input.title)
    );
    let _ = writeln!(h, "<header><h1>{}</h1>", esc(input.title));
    let total: usize = c.sides.iter().map(|s| s.runs).sum();
    let _ = writeln!(
        h,
        "<p class=\"muted\">{} side(s), {total} run(s); {}</p>",
        c.sides.len(),
        if c.sides.len() > 1 {
            format!(
                "baseline: <b>{}</b>. Ratios are each side's median over the baseline's.",
                esc(&c.sides[0].name)
            )
        } else {
            "one side: medians and intervals, nothing to compare against.".into()
        }
    );
    h.push_str(&side_key(c));
    h.push_str("</header>\n<nav><a href=\"#summary\">Summary</a><a href=\"#hosts\">Hosts</a><a href=\"#comparison\">Comparison</a><a href=\"#charts\">Charts</a><a href=\"#commands\">Commands</a></nav>\n");
    summary(&mut h, c);
    warnings(&mut h, c, &input.sides);
    hosts(&mut h, c, &input.sides);
    table(&mut h, c);
    charts(&mut h, c, &runs);
    commands(&mut h, c, &input.sides);
    let json = serde_json::to_string(c)
        .unwrap_or_default()
        .replace('&', "\\u0026")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e");
    let _ = write!(
        h,
        "<footer><p class=\"muted\">{} — {}</p></footer>\n<script type=\"application/json\" id=\"hostbench-comparison\">{json}</script>\n</body>\n</html>\n",
        esc(input.generator),
        esc(&method(c))
    );
    h
}

/// A row's bars, one per side that has it: the median in the unit `div` scales to, its
/// confidence interval and runs, and the cell's text with the ratio as the note.
fn side_bars(c: &Comparison, r: &Row, div: f64) -> Vec<Bar> {
    r.cells
        .iter()
        .enumerate()
        .filter_map(|(i, x)| {
            let x = x.as_ref()?;
            let mut note = cell_text_in(x, div);
            if let Some(ratio) = x.ratio {
                let _ = write!(note, " {}", ratio_text(ratio));
            }
            Some(Bar {
                label: c.sides[i].name.clone(),
                value: x.median / div,
                ci: x.ci.map(|ci| (ci.lo / div, ci.hi / div)),
                points: x.values.iter().map(|v| v / div).collect(),
                color: color(i).into(),
                note,
            })
        })
        .collect()
}

fn side_key(c: &Comparison) -> String {
    let mut s = String::from("<p class=\"key\">");
    for (i, side) in c.sides.iter().enumerate() {
        let _ = write!(
            s,
            "<span><i class=\"sw\" style=\"background:{}\"></i>{}{} <span class=\"muted\">({} run(s) on {})</span></span>",
            color(i),
            esc(&side.name),
            if i == 0 && c.sides.len() > 1 {
                " (baseline)"
            } else {
                ""
            },
            side.runs,
            esc(&side.hosts.join(", "))
        );
    }
    s.push_str("</p>\n");
    s
}

fn summary(h: &mut String, c: &Comparison) {
    h.push_str("<section id=\"summary\"><h2>Summary</h2>\n");
    if c.sides.len() < 2 {
        let _ = writeln!(
            h,
            "<p>{} workload variant(s), {} figure(s).</p>",
            c.variants.len(),
            c.rows.len()
        );
    } else {
        // One sentence per side first: the decision, in words.
        for i in 1..c.sides.len() {
            let _ = writeln!(
                h,
                "<p class=\"verdict {}\"><i class=\"sw\" style=\"background:{}\"></i>{}</p>",
                score_class(c, i),
                color(i),
                esc(&crate::compare::verdict_sentence(c, i))
            );
        }
        h.push_str("<div class=\"cards\">\n");
        for (i, side) in c.sides.iter().enumerate().skip(1) {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for r in &c.rows {
                if let Some(v) = r.cells[i].as_ref().and_then(|x| x.verdict) {
                    *counts.entry(v.text()).or_default() += 1;
                }
            }
            let counts: Vec<String> = [
                Verdict::Faster,
                Verdict::Slower,
                Verdict::NoDifference,
                Verdict::SingleRun,
                Verdict::TooFewRuns,
            ]
            .iter()
            .filter_map(|k| counts.get(k.text()).map(|n| format!("{n} {}", k.text())))
            .collect();
            let g = c.geomean[i];
            let _ = writeln!(
                h,
                "<div class=\"card\"><div><i class=\"sw\" style=\"background:{}\"></i><b>{}</b> vs {}</div><div class=\"big {}\">{}</div><div class=\"muted\">score: {}, above 1 = better</div><div>{}</div></div>",
                color(i),
                esc(&side.name),
                esc(&c.sides[0].name),
                score_class(c, i),
                g.map(|g| ratio_text(g.speedup))
                    .unwrap_or_else(|| "–".into()),
                esc(&crate::compare::score_text(c, i)),
                esc(&counts.join(", "))
            );
            if let Some(p) = c.price_performance.get(i).and_then(Option::as_ref) {
                let base = c
                    .price_performance
                    .first()
                    .and_then(Option::as_ref)
                    .map(|b| crate::compare::price_per_hour(b.per_hour));
                let _ = writeln!(
                    h,
                    "<div class=\"card\"><div><b>{}</b> per unit of price</div><div class=\"big\">{}</div><div class=\"muted\">{} against {} for {}: the score divided by the price ratio, above 1 = more work for the money</div></div>",
                    esc(&side.name),
                    p.score
                        .map(|g| crate::compare::ratio_text(g.speedup))
                        .unwrap_or_else(|| "–".into()),
                    esc(&crate::compare::price_per_hour(p.per_hour)),
                    esc(&base.unwrap_or_else(|| "no price".into())),
                    esc(&c.sides[0].name)
                );
            }
        }
        h.push_str("</div>\n");
        if !c.ranking.is_empty() {
            let _ = writeln!(
                h,
                "<h3>Ranking</h3>\n<p class=\"muted\">By score, best first; sides whose {:.0}% intervals overlap cannot be told apart and share a rank (=).</p>\n<table>\n<thead><tr><th>rank</th><th>side</th><th>score</th><th>interval</th><th>tied with</th></tr></thead>\n<tbody>",
                c.options.confidence * 100.0
            );
            for e in &c.ranking {
                let tied = c
                    .ranking
                    .iter()
                    .any(|o| o.side != e.side && o.rank == e.rank);
                let interval = match (e.ci_lo, e.ci_hi) {
                    _ if e.side == 0 => "baseline".to_string(),
                    (Some(lo), Some(hi)) => format!("{}–{}", ratio_text(lo), ratio_text(hi)),
                    _ => "–".into(),
                };
                let with: Vec<&str> = e
                    .tied_with
                    .iter()
                    .map(|&j| c.sides[j].name.as_str())
                    .collect();
                let _ = writeln!(
                    h,
                    "<tr><td>{}{}</td><td><i class=\"sw\" style=\"background:{}\"></i>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                    e.rank,
                    if tied { "=" } else { "" },
                    color(e.side),
                    esc(&c.sides[e.side].name),
                    ratio_text(e.score),
                    esc(&interval),
                    esc(&with.join(", "))
                );
            }
            h.push_str("</tbody></table>\n");
        }
    }
    h.push_str("</section>\n");
}

fn warnings(h: &mut String, c: &Comparison, sides: &[&[RunResult]]) {
    // The runs' own warnings, once per workload and kind: the first message, and how many
    // runs of each side carry it.
    let mut own: BTreeMap<(String, String), (String, Vec<usize>)> = BTreeMap::new();
    for (i, runs) in sides.iter().enumerate() {
        for r in runs.iter() {
            let mut seen = BTreeSet::new();
            for w in &r.warnings {
                let k = (r.workload.id.clone(), snake(&w.kind));
                if seen.insert(k.clone()) {
                    let e = own
                        .entry(k)
                        .or_insert_with(|| (w.message.clone(), vec![0; sides.len()]));
                    e.1[i] += 1;
                }
            }
        }
    }
    let own: Vec<(String, String)> = own
        .into_iter()
        .map(|((workload, kind), (msg, counts))| {
            let who = counts
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(i, n)| {
                    format!(
                        "{n} run(s) of {}",
                        c.sides.get(i).map(|s| s.name.as_str()).unwrap_or("?")
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            (format!("{workload} ({kind}): {msg}"), who)
        })
        .collect();
    h.push_str("<section id=\"warnings\"><h2>Warnings</h2>\n");
    if c.warnings.is_empty() && own.is_empty() {
        h.push_str(
            "<p>None: the hosts agree on everything hostbench checks, and no run warned.</p>\n",
        );
    }
    if !c.warnings.is_empty() {
        h.push_str("<ul class=\"warn\">\n");
        for w in &c.warnings {
            let _ = writeln!(h, "<li><b>{}</b>: {}</li>", snake(&w.kind), esc(&w.message));
        }
        h.push_str("</ul>\n");
    }
    if !own.is_empty() {
        let _ = writeln!(
            h,
            "<details{}><summary><h3>From the runs <span class=\"muted\">({} kind{})</span></h3></summary><p class=\"muted\">Each once, in the words of the first run that gave it.</p><ul>",
            if own.len() <= FOLD_AFTER { " open" } else { "" },
            own.len(),
            if own.len() == 1 { "" } else { "s" }
        );
        for (m, who) in own {
            let _ = writeln!(
                h,
                "<li>{} <span class=\"muted\">({})</span></li>",
                esc(&m),
                esc(&who)
            );
        }
        h.push_str("</ul></details>\n");
    }
    h.push_str("</section>\n");
}

/// A serde enum value's snake_case name.
fn snake<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

type HostField = (&'static str, fn(&RunResult, &HostInfo) -> Option<String>);

fn host_fields() -> Vec<HostField> {
    vec![
        ("host name", |_, h| Some(h.hostname.clone())),
        ("CPU", |_, h| Some(h.cpu.model.clone())),
        ("vendor, arch", |_, h| {
            Some(format!("{}, {}", h.cpu.vendor, h.cpu.arch))
        }),
        ("sockets / cores / threads", |_, h| {
            Some(format!(
                "{} / {} / {}",
                h.cpu.sockets, h.cpu.cores, h.cpu.threads
            ))
        }),
        ("caches", |_, h| {
            Some(
                h.cpu
                    .caches
                    .iter()
                    .map(|k| {
                        format!(
                            "L{}{} {}",
                            k.level,
                            k.kind.chars().next().unwrap_or('?').to_ascii_lowercase(),
                            Bytes(k.size_bytes)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            )
        }),
        ("flags of note", |_, h| Some(h.cpu.flags_of_note.join(" "))),
        ("governor", |_, h| {
            Some(
                h.cpu
                    .governor
                    .clone()
                    .unwrap_or_else(|| "not exposed".into()),
            )
        }),
        ("max MHz", |_, h| h.cpu.mhz_max.map(|m| format!("{m:.0}"))),
        ("memory", |_, h| {
            Some(Bytes(h.memory.total_bytes).to_string())
        }),
        ("NUMA nodes", |_, h| Some(h.memory.numa_nodes.to_string())),
        ("transparent hugepages", |_, h| {
            h.memory.transparent_hugepages.clone()
        }),
        ("huge pages reserved", |_, h| {
            Some(h.memory.hugepages_total.to_string())
        }),
        ("kernel", |_, h| Some(h.os.kernel.clone())),
        ("distribution", |_, h| Some(h.os.distribution.clone())),
        ("virtualization", |_, h| {
            Some(
                h.virtualization
                    .clone()
                    .unwrap_or_else(|| "none detected".into()),
            )
        }),
        ("DMI vendor / product", |_, h| {
            h.dmi.as_ref().map(|d| {
                format!(
                    "{} / {}",
                    d.vendor.as_deref().unwrap_or("?"),
                    d.product.as_deref().unwrap_or("?")
                )
            })
        }),
        ("cloud, instance type", |_, h| {
            h.cloud.as_ref().map(|c| {
                format!(
                    "{}, {}",
                    c.provider,
                    c.instance_type.as_deref().unwrap_or("not in DMI")
                )
            })
        }),
        ("clocksource", |_, h| Some(h.clocksource.current.clone())),
        ("available clocksources", |_, h| {
            Some(h.clocksource.available.join(" "))
        }),
        ("directories under test", |_, h| {
            (!h.dirs.is_empty()).then(|| {
                h.dirs
                    .iter()
                    .map(|d| {
                        format!(
                            "{}: {} on {} ({}{}, rotational {}, scheduler {}) {}",
                            d.path,
                            d.filesystem.as_deref().unwrap_or("?"),
                            d.mount_source.as_deref().unwrap_or("?"),
                            d.model.as_deref().or(d.driver.as_deref()).unwrap_or("?"),
                            d.size_bytes
                                .map(|b| format!(", {}", Bytes(b)))
                                .unwrap_or_default(),
                            d.rotational
                                .map(|r| if r { "1" } else { "0" })
                                .unwrap_or("?"),
                            d.scheduler.as_deref().unwrap_or("?"),
                            d.mount_options.as_deref().unwrap_or("")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            })
        }),
    ]
}

fn hosts(h: &mut String, c: &Comparison, sides: &[&[RunResult]]) {
    h.push_str("<section id=\"hosts\"><h2>Hosts</h2>\n<p class=\"muted\">Rows marked ≠ differ between the sides; a side whose runs disagree shows every value, separated by |.</p>\n<div class=\"scroll\"><table>\n<thead><tr><th></th>");
    for s in &c.sides {
        let _ = write!(h, "<th>{}</th>", esc(&s.name));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    // A row is marked when its sides show different values, or some side's runs disagree.
    let marked = |vals: &[String], mixed: bool| vals.windows(2).any(|w| w[0] != w[1]) || mixed;
    // (field, value per side, whether the row is marked ≠)
    let mut rows: Vec<(String, Vec<String>, bool)> = Vec::new();
    for (name, f) in host_fields() {
        let mut mixed = false;
        let vals: Vec<String> = sides
            .iter()
            .map(|runs| {
                let set: BTreeSet<String> = runs
                    .iter()
                    .filter_map(|r| f(r, r.host.as_ref()?))
                    .filter(|v| !v.is_empty())
                    .collect();
                mixed |= set.len() > 1;
                set.into_iter().collect::<Vec<_>>().join(" | ")
            })
            .collect();
        if vals.iter().all(|v| v.is_empty()) {
            continue;
        }
        let m = marked(&vals, mixed);
        rows.push((name.into(), vals, m));
    }
    // The notes the user added to the runs (`results annotate`: instance type, region,
    // price).
    if c.sides.iter().any(|x| !x.notes.is_empty()) {
        let vals: Vec<String> = c.sides.iter().map(|x| x.notes.join(", ")).collect();
        let m = marked(&vals, false);
        rows.push(("notes".into(), vals, m));
    }
    // From the runs rather than the host: the clock and the program. The clock read's cost
    // is measured, so it differs a little on every run: the row is marked only when the
    // clock sources differ or one side's cost is more than TIMER_COST_RATIO times the
    // other's (what the comparison warns about).
    let timer_differs = sides.len() > 1 && {
        let sources: BTreeSet<String> = sides
            .iter()
            .flat_map(|runs| runs.iter().map(|r| snake(&r.clock.source)))
            .collect();
        sources.len() > 1
            || hostbench_core::compare::timer_costs_differ(
                sides
                    .iter()
                    .filter_map(|runs| hostbench_core::compare::timer_cost_ns(runs)),
            )
    };
    rows.push((
        "timer (clock, ns per read)".into(),
        sides
            .iter()
            .map(|runs| {
                let cost: Vec<f64> = runs.iter().map(|r| r.clock.read_cost_ns).collect();
                let src: BTreeSet<String> = runs.iter().map(|r| snake(&r.clock.source)).collect();
                match stats::median(&stats::finite(&cost)) {
                    Some(m) => format!(
                        "{}, {m:.1}",
                        src.into_iter().collect::<Vec<_>>().join(" | ")
                    ),
                    None => String::new(),
                }
            })
            .collect(),
        timer_differs,
    ));
    let versions: Vec<String> = c
        .sides
        .iter()
        .map(|s| s.tool_versions.join(" | "))
        .collect();
    let m = marked(&versions, c.sides.iter().any(|s| s.tool_versions.len() > 1));
    rows.push(("hostbench".into(), versions, m));
    for (name, vals, differ) in rows {
        let _ = write!(
            h,
            "<tr{}><th>{}</th>",
            if differ { " class=\"diff\"" } else { "" },
            esc(&name)
        );
        // Merge runs of identical neighbouring cells.
        let mut i = 0;
        while i < vals.len() {
            let mut j = i + 1;
            while j < vals.len() && vals[j] == vals[i] {
                j += 1;
            }
            let shown = if vals[i].is_empty() { "—" } else { &vals[i] };
            if j - i > 1 {
                let _ = write!(h, "<td colspan=\"{}\">{}</td>", j - i, esc(shown));
            } else {
                let _ = write!(h, "<td>{}</td>", esc(shown));
            }
            i = j;
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody></table></div>\n</section>\n");
}

/// The colour of a side's score, whatever its figures' directions: better (its interval
/// above ×1), worse (below), or neither.
fn score_class(c: &Comparison, s: usize) -> &'static str {
    match c.geomean.get(s).copied().flatten() {
        Some(g) if g.ci_lo.is_some_and(|lo| lo > 1.0) => "v-faster",
        Some(g) if g.ci_hi.is_some_and(|hi| hi < 1.0) => "v-slower",
        _ => "v-none",
    }
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "v-faster",
        Verdict::Slower => "v-slower",
        Verdict::NoDifference => "v-none",
        Verdict::SingleRun | Verdict::TooFewRuns => "v-few",
    }
}

fn table(h: &mut String, c: &Comparison) {
    h.push_str("<section id=\"comparison\"><h2>Comparison</h2>\n");
    if c.rows.is_empty() {
        h.push_str("<p>No workload variant was run on the baseline and another side.</p>\n");
    } else {
        h.push_str("<div class=\"scroll\"><table class=\"cmp\">\n<thead><tr><th>figure</th>");
        for (i, s) in c.sides.iter().enumerate() {
            let _ = write!(h, "<th>{}</th>", esc(&s.name));
            if i > 0 {
                let _ = write!(h, "<th>vs {}</th>", esc(&c.sides[0].name));
            }
        }
        h.push_str("</tr></thead>\n<tbody>\n");
        let span = 1 + 2 * c.sides.len().saturating_sub(1) + 1;
        let mut last = usize::MAX;
        for r in &c.rows {
            let v = c.variant_of(r);
            if r.variant != last {
                last = r.variant;
                let _ = writeln!(
                    h,
                    "<tr class=\"vh\"><th colspan=\"{span}\"><a href=\"#v{}\">{}</a> <span class=\"muted\">{}</span></th></tr>",
                    r.variant,
                    esc(&v.workload),
                    esc(&v.label)
                );
            }
            let (unit, div) = display_unit(r);
            let _ = write!(
                h,
                "<tr><td>{} <span class=\"muted\">{}</span></td>",
                esc(&title_with_unit(&display_figure(r, &unit), &unit)),
                match r.better {
                    Better::Higher => "↑",
                    Better::Lower => "↓",
                }
            );
            for (i, cell) in r.cells.iter().enumerate() {
                match cell {
                    Some(x) => {
                        let _ = write!(h, "<td class=\"n\">{}</td>", esc(&cell_text_in(x, div)));
                        if i > 0 {
                            let verdict = x.verdict.map(|v| {
                                let p = match (x.p_value, v) {
                                    (
                                        Some(p),
                                        Verdict::Faster | Verdict::Slower | Verdict::NoDifference,
                                    ) => format!(" <span class=\"muted\">{}</span>", p_text(p)),
                                    _ => String::new(),
                                };
                                format!(
                                    " <span class=\"{}\">{}</span>{p}",
                                    verdict_class(v),
                                    esc(verdict_short(v))
                                )
                            });
                            let _ = write!(
                                h,
                                "<td class=\"n\">{}{}</td>",
                                x.ratio.map(ratio_text).unwrap_or_else(|| "–".into()),
                                verdict.unwrap_or_default()
                            );
                        }
                    }
                    None => {
                        h.push_str("<td class=\"n\">–</td>");
                        if i > 0 {
                            h.push_str("<td></td>");
                        }
                    }
                }
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody></table></div>\n");
    }
    let one_sided = crate::compare::jobs_not_on_every_side(c);
    if !one_sided.is_empty() {
        h.push_str("<h3>fio jobs not on every side</h3><p class=\"muted\">Their rows are empty there.</p><ul>\n");
        for j in one_sided {
            let _ = writeln!(h, "<li>{}</li>", esc(&j));
        }
        h.push_str("</ul>\n");
    }
    let not: Vec<&Variant> = c.variants.iter().filter(|v| !v.compared).collect();
    if !not.is_empty() {
        h.push_str("<h3>Not compared</h3><ul>\n");
        for v in not {
            let _ = writeln!(
                h,
                "<li><b>{}</b> ({}): {}</li>",
                esc(&v.workload),
                esc(&v.label),
                esc(v.reason.as_deref().unwrap_or(""))
            );
        }
        h.push_str("</ul>\n");
    }
    let _ = writeln!(h, "<p class=\"muted\">{}</p>\n</section>", esc(&method(c)));
}

fn figure(h: &mut String, svg: Option<String>, caption: &str) -> bool {
    let Some(svg) = svg else { return false };
    let _ = writeln!(
        h,
        "<figure>{svg}<figcaption>{}</figcaption></figure>",
        esc(caption)
    );
    true
}

fn legend(c: &Comparison) -> Vec<(String, String)> {
    c.sides
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.clone(), color(i).to_string()))
        .collect()
}

fn charts(h: &mut String, c: &Comparison, runs: &HashMap<&str, &RunResult>) {
    h.push_str("<section id=\"charts\"><h2>Charts</h2>\n");
    let mut any = false;
    for (vi, v) in c.variants.iter().enumerate() {
        if !v.compared {
            continue;
        }
        let side_runs: Vec<Vec<&RunResult>> = v
            .runs
            .iter()
            .map(|ids| {
                ids.iter()
                    .filter_map(|id| runs.get(id.as_str()).copied())
                    .collect()
            })
            .collect();
        let _ = writeln!(
            h,
            "<h3 id=\"v{vi}\">{} <span class=\"muted\">{}</span></h3>\n<div class=\"charts\">",
            esc(&v.workload),
            esc(&v.label)
        );
        let stream = stream_charts(h, c, &side_runs);
        for r in c.rows.iter().filter(|r| r.variant == vi) {
            if stream && r.figure.ends_with(stream::FIGURE_SUFFIX) {
                continue;
            }
            // A fio job's figure: drawn with the other jobs' below, one chart per figure.
            if fio_jobs::split_figure(&r.figure).is_some() {
                continue;
            }
            // In the unit the table shows the row in (µs, not ns), scaled alike.
            let (unit, div) = crate::compare::display_unit(r);
            let groups = [Group {
                label: String::new(),
                bars: side_bars(c, r, div),
            }];
            let title = format!(
                "{} ({} is better)",
                title_with_unit(&display_figure(r, &unit), &unit),
                match r.better {
                    Better::Higher => "higher",
                    Better::Lower => "lower",
                }
            );
            let ci_note = if r.cells.iter().flatten().any(|x| ci_percent(x).is_some()) {
                format!(
                    "Bar: median; whisker: {:.0} % confidence interval of the median; dots: runs.",
                    c.options.confidence * 100.0
                )
            } else {
                "Bar: median; dots: runs (too few runs for a confidence interval).".into()
            };
            any |= figure(h, svg::bar_chart(&title, &unit, &groups), &ci_note);
        }
        any |= fio_job_charts(h, c, vi);
        any |= latency_chart(h, c, &side_runs);
        any |= timeline_chart(h, c, &side_runs);
        any |= memlat_chart(h, c, &side_runs);
        any |= stream;
        h.push_str("</div>\n");
    }
    if !any {
        h.push_str("<p>No chart: no variant ran on the baseline and another side.</p>\n");
    }
    h.push_str("</section>\n");
}

/// Latency percentile curves: per side, the merged histogram of its runs.
fn latency_chart(h: &mut String, c: &Comparison, side_runs: &[Vec<&RunResult>]) -> bool {
    const QS: [f64; 14] = [
        0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99995, 0.99999,
        0.999999,
    ];
    let mut series = Vec::new();
    let (mut lo, mut hi, mut xmax) = (f64::MAX, 0f64, 1f64);
    for (i, runs) in side_runs.iter().enumerate() {
        let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
        for r in runs.iter().filter(|r| r.latency.count > 0) {
            let Some(hist) = decode_histogram(&r.latency.hdr_histogram) else {
                continue;
            };
            match &mut merged {
                None => merged = Some(hist),
                Some(m) => {
                    if m.add(&hist).is_err() {
                        continue;
                    }
                }
            }
        }
        let Some(m) = merged.filter(|m| !m.is_empty()) else {
            continue;
        };
        let n = m.len() as f64;
        let mut pts = Vec::new();
        for q in QS {
            // Beyond 1 − 1/n a percentile is the maximum again: stop there.
            if q > 0.0 && 1.0 / (1.0 - q) > n {
                break;
            }
            let v = m.value_at_quantile(q).max(1) as f64;
            pts.push((-(1.0 - q).log10(), v.log10()));
        }
        let max = m.max().max(1) as f64;
        let xm = n.log10().max(pts.last().map(|p| p.0).unwrap_or(0.0) + 0.3);
        pts.push((xm, max.log10()));
        xmax = xmax.max(xm);
        for (_, y) in &pts {
            lo = lo.min(*y);
            hi = hi.max(*y);
        }
        series.push(Series {
            name: format!("{} ({} events)", c.sides[i].name, m.len()),
            color: color(i).into(),
            points: pts,
            dots: true,
        });
    }
    if series.is_empty() {
        return false;
    }
    let ticks: Vec<(f64, String)> = (0..=(xmax.floor() as i32))
        .map(|k| {
            let label = match k {
                0 => "0%".to_string(),
                k => {
                    let p = 100.0 * (1.0 - 10f64.powi(-k));
                    format!("{}%", trim_float(p, k as usize))
                }
            };
            (f64::from(k), label)
        })
        .collect();
    let x = Axis {
        label: "percentile (the last point of each line is the maximum)".into(),
        min: 0.0,
        max: xmax,
        ticks,
    };
    let y = Axis::log10("latency", lo.floor().min(lo - 0.05), hi + 0.1, ns_tick);
    figure(
        h,
        svg::line_chart("Latency by percentile", &x, &y, &series, &legend(c)),
        "From the stored HDR histograms (3 significant digits), merged over each side's runs; log scales.",
    )
}

/// A latency tick label: `250 ns`, `1.5 µs`, `20 ms`.
fn ns_tick(ns: f64) -> String {
    let (v, u) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{} {u}", trim_float(v, 2))
}

fn trim_float(p: f64, decimals: usize) -> String {
    let s = format!("{p:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Events per second per interval, one line per run, coloured by side.
fn timeline_chart(h: &mut String, c: &Comparison, side_runs: &[Vec<&RunResult>]) -> bool {
    let mut series = Vec::new();
    let (mut tmax, mut vmax) = (0f64, 0f64);
    for (i, runs) in side_runs.iter().enumerate() {
        for (k, r) in runs.iter().enumerate() {
            if r.intervals.len() < 2 {
                continue;
            }
            let pts: Vec<(f64, f64)> = r
                .intervals
                .iter()
                .map(|iv| (iv.t_s, iv.events_per_s))
                .filter(|(a, b)| a.is_finite() && b.is_finite())
                .collect();
            for (t, v) in &pts {
                tmax = tmax.max(*t);
                vmax = vmax.max(*v);
            }
            series.push(Series {
                name: format!(
                    "{} run {} ({})",
                    c.sides[i].name,
                    k + 1,
                    r.id.chars().take(12).collect::<String>()
                ),
                color: color(i).into(),
                points: pts,
                dots: false,
            });
        }
    }
    if series.is_empty() {
        return false;
    }
    let x = Axis::linear("seconds since the start", 0.0, tmax.max(1e-3), tick);
    let y = Axis::linear("events/s", 0.0, (vmax * 1.05).max(1e-9), tick);
    figure(
        h,
        svg::line_chart(
            "Events per second, per interval",
            &x,
            &y,
            &series,
            &legend(c),
        ),
        "One line per run, from its interval reports (--report-interval).",
    )
}

fn size_label(bytes: f64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < U.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{} {}", trim_float(v, 1), U[i])
}

/// The memlat staircase: ns per load against the working-set size (log scale), per side
/// the median over its runs at each size.
fn memlat_chart(h: &mut String, c: &Comparison, side_runs: &[Vec<&RunResult>]) -> bool {
    let mut series = Vec::new();
    let (mut xlo, mut xhi, mut ymax) = (f64::MAX, f64::MIN, 0f64);
    for (i, runs) in side_runs.iter().enumerate() {
        let mut by_size: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
        for r in runs {
            let Some(t) = r.tables.iter().find(|t| t.name == memlat::TABLE) else {
                continue;
            };
            let col = |n: &str| t.columns.iter().position(|c| c.name == n);
            let (Some(sc), Some(nc)) =
                (col(memlat::col::SIZE_BYTES), col(memlat::col::NS_PER_LOAD))
            else {
                continue;
            };
            for row in &t.rows {
                if let (Some(Some(s)), Some(Some(ns))) = (row.values.get(sc), row.values.get(nc))
                    && *s > 0.0
                    && s.is_finite()
                    && ns.is_finite()
                {
                    by_size.entry(*s as u64).or_default().push(*ns);
                }
            }
        }
        let pts: Vec<(f64, f64)> = by_size
            .iter()
            .filter_map(|(s, v)| Some(((*s as f64).log2(), stats::median(v)?)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        for (x, y) in &pts {
            xlo = xlo.min(*x);
            xhi = xhi.max(*x);
            ymax = ymax.max(*y);
        }
        series.push(Series {
            name: c.sides[i].name.clone(),
            color: color(i).into(),
            points: pts,
            dots: true,
        });
    }
    if series.is_empty() {
        return false;
    }
    let (lo, hi) = (xlo.floor(), xhi.ceil().max(xlo.floor() + 1.0));
    let step = ((hi - lo) / 8.0).ceil().max(1.0);
    let ticks = (0..)
        .map(|k| lo + k as f64 * step)
        .take_while(|v| *v <= hi)
        .map(|v| (v, size_label(2f64.powf(v))))
        .collect();
    let x = Axis {
        label: "working-set size".into(),
        min: lo,
        max: hi,
        ticks,
    };
    let y = Axis::linear("ns per load", 0.0, (ymax * 1.08).max(1e-9), tick);
    figure(
        h,
        svg::line_chart(
            "Memory latency staircase (memlat)",
            &x,
            &y,
            &series,
            &legend(c),
        ),
        "Load-to-use latency per working-set size; steps are cache levels, the last plateau DRAM.",
    )
}

/// STREAM's best rate per kernel, one bar per side; true when drawn.
fn stream_charts(h: &mut String, c: &Comparison, side_runs: &[Vec<&RunResult>]) -> bool {
    let mut drawn = false;
    for (table, title) in [
        (
            stream::table::STREAM,
            "STREAM best rate per kernel (MB/s, higher is better)",
        ),
        (
            stream::table::STREAM_NT,
            "STREAM with non-temporal stores, best rate per kernel (MB/s)",
        ),
    ] {
        let mut kernels: Vec<String> = Vec::new();
        let mut vals: Vec<BTreeMap<String, Vec<f64>>> = vec![BTreeMap::new(); side_runs.len()];
        for (i, runs) in side_runs.iter().enumerate() {
            for r in runs {
                let Some(t) = r.tables.iter().find(|t| t.name == table) else {
                    continue;
                };
                for row in &t.rows {
                    if let Some(v) = t.get(&row.label, stream::col::BEST_RATE_MB_PER_S) {
                        if !kernels.contains(&row.label) {
                            kernels.push(row.label.clone());
                        }
                        vals[i].entry(row.label.clone()).or_default().push(v);
                    }
                }
            }
        }
        if kernels.is_empty() {
            continue;
        }
        let groups: Vec<Group> = kernels
            .iter()
            .map(|k| Group {
                label: k.clone(),
                bars: vals
                    .iter()
                    .enumerate()
                    .filter_map(|(i, m)| {
                        let v = m.get(k)?;
                        let med = stats::median(v)?;
                        let ci = stats::median_ci(v, c.options.confidence);
                        Some(Bar {
                            label: c.sides[i].name.clone(),
                            value: med,
                            ci: ci.map(|x| (x.lo, x.hi)),
                            points: v.clone(),
                            color: color(i).into(),
                            note: format!("{} MB/s", num(med)),
                        })
                    })
                    .collect(),
            })
            .collect();
        drawn |= figure(
            h,
            svg::bar_chart(title, "MB/s (10^6 bytes per second)", &groups),
            "Bar: median of the side's runs; whisker: confidence interval of the median when there are enough runs; dots: runs.",
        );
    }
    drawn
}

/// A fio job file's figures job by job: one chart per figure (reads per second, read
/// throughput, ...) with a group of bars per job (report block), in one unit.
fn fio_job_charts(h: &mut String, c: &Comparison, vi: usize) -> bool {
    // Figure → its rows, in the rows' order.
    let mut by_figure: Vec<(&str, Vec<&Row>)> = Vec::new();
    for r in c.rows.iter().filter(|r| r.variant == vi) {
        let Some((_, fig)) = fio_jobs::split_figure(&r.figure) else {
            continue;
        };
        match by_figure.iter_mut().find(|(f, _)| *f == fig) {
            Some((_, rows)) => rows.push(r),
            None => by_figure.push((fig, vec![r])),
        }
    }
    let mut drawn = false;
    for (fig, rows) in by_figure {
        let least = rows
            .iter()
            .flat_map(|r| r.cells.iter().flatten())
            .map(|x| x.median.abs())
            .filter(|m| m.is_finite())
            .fold(f64::INFINITY, f64::min);
        let (unit, div) = crate::compare::scaled_unit(&rows[0].unit, least);
        let split = |r: &Row| {
            r.label
                .as_deref()
                .and_then(fio_jobs::split_label)
                .map(|(j, f)| (j.to_string(), f.to_string()))
        };
        let what = split(rows[0]).map_or_else(|| fig.to_string(), |(_, f)| f);
        let groups: Vec<Group> = rows
            .iter()
            .map(|r| Group {
                label: split(r).map_or_else(
                    || {
                        fio_jobs::split_figure(&r.figure)
                            .map_or(String::new(), |(k, _)| k.to_string())
                    },
                    |(j, _)| j,
                ),
                bars: side_bars(c, r, div),
            })
            .collect();
        let title = format!(
            "{} ({} is better)",
            title_with_unit(&format!("{what} per fio job"), &unit),
            match rows[0].better {
                Better::Higher => "higher",
                Better::Lower => "lower",
            }
        );
        drawn |= figure(
            h,
            svg::bar_chart(&title, &unit, &groups),
            "One group per job (a clone, or a group_reporting group): bar, the median of the side's runs; whisker, the confidence interval of the median when there are enough runs; dots, runs.",
        );
    }
    drawn
}

/// A command line as a shell would take it back.
pub fn shell_join(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-./:=,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn commands(h: &mut String, c: &Comparison, sides: &[&[RunResult]]) {
    h.push_str("<section id=\"commands\"><h2>Commands</h2>\n<p class=\"muted\">Every run as it was typed, oldest first, with its id (for <code>hostbench results show</code>).</p>\n");
    for (i, runs) in sides.iter().enumerate() {
        // A long list (a suite's runs) is folded: its heading says how many there are.
        let _ = writeln!(
            h,
            "<details{}><summary><h3><i class=\"sw\" style=\"background:{}\"></i>{} <span class=\"muted\">({} run{})</span></h3></summary><ol class=\"cmds\">",
            if runs.len() <= FOLD_AFTER {
                " open"
            } else {
                ""
            },
            color(i),
            esc(c.sides.get(i).map(|s| s.name.as_str()).unwrap_or("?")),
            runs.len(),
            if runs.len() == 1 { "" } else { "s" }
        );
        for r in runs.iter() {
            let _ = writeln!(
                h,
                "<li><code>{}</code> <span class=\"muted\">{} · {} · {} grammar{}</span><br><code>{}</code></li>",
                esc(&r.id.chars().take(12).collect::<String>()),
                esc(&r.started_at),
                esc(&r.workload.id),
                esc(&r.config.grammar),
                r.host
                    .as_ref()
                    .map(|h| format!(" · {}", esc(&h.hostname)))
                    .unwrap_or_default(),
                esc(&shell_join(&r.config.command_line))
            );
        }
        h.push_str("</ol></details>\n");
    }
    h.push_str("</section>\n");
}

/// Lists longer than this are folded (`<details>`), their count in the heading.
const FOLD_AFTER: usize = 8;

#[cfg(test)]
mod tests;
