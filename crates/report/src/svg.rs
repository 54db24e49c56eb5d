//! Hand-built inline SVG charts for the HTML report: horizontal bars with confidence-interval
//! whiskers and the individual runs as dots, and line charts on linear or log axes. No
//! fonts, scripts or links: text uses the page's font, every string goes through
//! [`esc`], and the markup is meant to sit inside HTML (no XML namespace declaration, which
//! HTML does not need).
//!
//! Invariants: the output is deterministic for the same input; non-finite values are
//! skipped, never drawn at NaN coordinates; an empty chart is not produced — the callers
//! check for data first, and every function returns `None` when there is nothing to draw.

use std::fmt::Write as _;

/// Side colours (Okabe-Ito, without the yellow that vanishes on white), cycled.
pub const PALETTE: [&str; 7] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#555555",
];

/// The colour of side `i`.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escapes text for HTML and SVG content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => o.push('\u{FFFD}'),
            c => o.push(c),
        }
    }
    o
}

/// At most `n` characters of `s`, with an ellipsis when cut.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A coordinate with one decimal, the precision a screen needs.
fn c(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// Estimated text width at `size` px: about 0.6 em per character for sans-serif.
fn text_w(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.6
}

/// A tick label: [`crate::num`] without trailing zeros (`0.5`, `25M`, `1200`).
pub fn tick(v: f64) -> String {
    let s = crate::num(v);
    let (body, suffix) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => s.split_at(i),
        None => (s.as_str(), ""),
    };
    let body = if body.contains('.') {
        body.trim_end_matches('0').trim_end_matches('.')
    } else {
        body
    };
    format!("{body}{suffix}")
}

/// An axis in the coordinates the data are given in (already log10-transformed for a log
/// axis) with its tick marks.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Axis title.
    pub label: String,
    /// Smallest value shown.
    pub min: f64,
    /// Largest value shown.
    pub max: f64,
    /// Tick positions (in data coordinates) and their labels.
    pub ticks: Vec<(f64, String)>,
}

/// The step of 1, 2 or 5 × 10^k nearest to `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    p * if m < 1.5 {
        1.0
    } else if m < 3.0 {
        2.0
    } else if m < 7.0 {
        5.0
    } else {
        10.0
    }
}

impl Axis {
    /// A linear axis over `[min, max]` with about five round ticks, labelled by `fmt`.
    pub fn linear(label: &str, min: f64, max: f64, fmt: impl Fn(f64) -> String) -> Axis {
        let (min, max) = if max > min {
            (min, max)
        } else {
            (
                min - 0.5 * min.abs().max(1.0),
                max + 0.5 * max.abs().max(1.0),
            )
        };
        let step = nice_step((max - min) / 5.0);
        let lo = (min / step).ceil() as i64;
        let hi = (max / step).floor() as i64;
        let ticks = (lo..=hi.min(lo + 20))
            .map(|i| {
                let v = i as f64 * step;
                // Avoid "-0" and float dust in labels.
                let v = if v.abs() < step * 1e-9 { 0.0 } else { v };
                (v, fmt(v))
            })
            .collect();
        Axis {
            label: label.into(),
            min,
            max,
            ticks,
        }
    }

    /// A log10 axis: data are log10 of the values; ticks at powers of ten (and 2 and 5
    /// between them when the range is under three decades), labelled by `fmt` of the
    /// untransformed value.
    pub fn log10(label: &str, min: f64, max: f64, fmt: impl Fn(f64) -> String) -> Axis {
        let (min, max) = if max > min {
            (min, max)
        } else {
            (min - 0.5, max + 0.5)
        };
        let mut ticks = Vec::new();
        let dense = max - min < 3.0;
        for e in (min.floor() as i64)..=(max.ceil() as i64) {
            for m in if dense {
                &[1.0, 2.0, 5.0][..]
            } else {
                &[1.0][..]
            } {
                let v = (m * 10f64.powi(e as i32)).log10();
                if v >= min - 1e-9 && v <= max + 1e-9 {
                    ticks.push((v, fmt(10f64.powf(v))));
                }
            }
        }
        Axis {
            label: label.into(),
            min,
            max,
            ticks,
        }
    }

    fn scale(&self, v: f64, from: f64, to: f64) -> f64 {
        from + (v - self.min) / (self.max - self.min) * (to - from)
    }
}

/// One line of a line chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Shown in tooltips.
    pub name: String,
    /// Stroke colour.
    pub color: String,
    /// Points in data coordinates, in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Mark each point with a dot (sparse series such as a memory staircase).
    pub dots: bool,
}

const W: f64 = 640.0;

fn open_svg(s: &mut String, h: f64, title: &str) {
    let _ = write!(
        s,
        r#"<svg class="chart" viewBox="0 0 {w} {h}" width="100%" role="img" aria-label="{t}" preserveAspectRatio="xMinYMin meet"><title>{t}</title><text class="ct" x="4" y="16">{t}</text>"#,
        w = c(W),
        h = c(h),
        t = esc(title)
    );
}

/// A line chart with a legend of `(name, colour)` entries; `None` when no series has a
/// finite point.
pub fn line_chart(
    title: &str,
    x: &Axis,
    y: &Axis,
    series: &[Series],
    legend: &[(String, String)],
) -> Option<String> {
    let pts = |s: &Series| -> Vec<(f64, f64)> {
        s.points
            .iter()
            .copied()
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .collect()
    };
    if series.iter().all(|s| pts(s).is_empty()) {
        return None;
    }
    // Legend rows under the title, wrapped to the width.
    let mut legend_rows: Vec<Vec<(String, String, f64)>> = vec![Vec::new()];
    let mut used = 0.0;
    for (name, col) in legend {
        let name = clip(name, 40);
        let w = 18.0 + text_w(&name, 11.0) + 14.0;
        if used + w > W - 8.0 && !legend_rows.last().unwrap().is_empty() {
            legend_rows.push(Vec::new());
            used = 0.0;
        }
        legend_rows
            .last_mut()
            .unwrap()
            .push((name, col.clone(), used));
        used += w;
    }
    let nleg = legend_rows.iter().filter(|r| !r.is_empty()).count() as f64;
    let top = 28.0 + nleg * 16.0;
    let ph = 220.0;
    let (left, right) = (64.0, W - 14.0);
    let bottom = top + ph;
    let h = bottom + 40.0;
    let mut s = String::new();
    open_svg(&mut s, h, title);
    for (i, row) in legend_rows.iter().enumerate() {
        let ly = 28.0 + i as f64 * 16.0;
        for (name, col, off) in row {
            let _ = write!(
                s,
                r#"<rect x="{}" y="{}" width="12" height="4" fill="{}"/><text class="lg" x="{}" y="{}">{}</text>"#,
                c(8.0 + off),
                c(ly + 2.0),
                esc(col),
                c(24.0 + off),
                c(ly + 7.0),
                esc(name)
            );
        }
    }
    // Grid and ticks.
    for (v, l) in &y.ticks {
        let py = y.scale(*v, bottom, top);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{}" y1="{py}" x2="{}" y2="{py}"/><text class="tk" x="{}" y="{}" text-anchor="end">{}</text>"#,
            c(left),
            c(right),
            c(left - 4.0),
            c(py + 4.0),
            esc(l),
            py = c(py)
        );
    }
    for (v, l) in &x.ticks {
        let px = x.scale(*v, left, right);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{px}" y1="{}" x2="{px}" y2="{}"/><text class="tk" x="{px}" y="{}" text-anchor="middle">{}</text>"#,
            c(top),
            c(bottom),
            c(bottom + 14.0),
            esc(l),
            px = c(px)
        );
    }
    let _ = write!(
        s,
        r#"<rect class="frame" x="{}" y="{}" width="{}" height="{}"/><text class="al" x="{}" y="{}" text-anchor="middle">{}</text><text class="al" x="12" y="{}" text-anchor="middle" transform="rotate(-90 12 {})">{}</text>"#,
        c(left),
        c(top),
        c(right - left),
        c(ph),
        c((left + right) / 2.0),
        c(bottom + 32.0),
        esc(&x.label),
        c((top + bottom) / 2.0),
        c((top + bottom) / 2.0),
        esc(&y.label)
    );
    for se in series {
        let p = pts(se);
        if p.is_empty() {
            continue;
        }
        let clampx = |v: f64| x.scale(v.clamp(x.min, x.max), left, right);
        let clampy = |v: f64| y.scale(v.clamp(y.min, y.max), bottom, top);
        let mut d = String::new();
        for (i, (a, b)) in p.iter().enumerate() {
            let _ = write!(
                d,
                "{}{} {}",
                if i == 0 { "M" } else { " L" },
                c(clampx(*a)),
                c(clampy(*b))
            );
        }
        if p.len() == 1 {
            // A single point still shows as a short mark.
            let _ = write!(d, " l0.1 0");
        }
        let _ = write!(
            s,
            r#"<path class="ln" d="{d}" stroke="{col}"><title>{n}</title></path>"#,
            col = esc(&se.color),
            n = esc(&se.name)
        );
        if se.dots || p.len() == 1 {
            for (a, b) in &p {
                let _ = write!(
                    s,
                    r#"<circle cx="{}" cy="{}" r="2.5" fill="{}"/>"#,
                    c(clampx(*a)),
                    c(clampy(*b)),
                    esc(&se.color)
                );
            }
        }
    }
    s.push_str("</svg>");
    Some(s)
}

/// One bar: a median with an optional confidence interval and the individual values.
#[derive(Debug, Clone)]
pub struct Bar {
    /// Row label.
    pub label: String,
    /// Bar length.
    pub value: f64,
    /// Whisker from `lo` to `hi`.
    pub ci: Option<(f64, f64)>,
    /// Individual runs, drawn as dots.
    pub points: Vec<f64>,
    /// Fill colour.
    pub color: String,
    /// Text right of the bar (the value as printed).
    pub note: String,
}

/// A group of bars under one heading (a STREAM kernel); an empty label draws none.
#[derive(Debug, Clone)]
pub struct Group {
    /// Heading.
    pub label: String,
    /// Its bars.
    pub bars: Vec<Bar>,
}

/// Horizontal bars from zero, grouped; `None` when no bar has a finite, non-negative value.
pub fn bar_chart(title: &str, axis_label: &str, groups: &[Group]) -> Option<String> {
    let ok = |b: &Bar| b.value.is_finite() && b.value >= 0.0;
    if !groups.iter().flat_map(|g| &g.bars).any(ok) {
        return None;
    }
    let mut max = 0f64;
    for b in groups.iter().flat_map(|g| &g.bars).filter(|b| ok(b)) {
        max = max.max(b.value);
        if let Some((_, hi)) = b.ci.filter(|(_, hi)| hi.is_finite()) {
            max = max.max(hi);
        }
        for p in b.points.iter().filter(|p| p.is_finite()) {
            max = max.max(*p);
        }
    }
    if max <= 0.0 {
        max = 1.0;
    }
    let axis = Axis::linear(axis_label, 0.0, max * 1.05, tick);
    let label_w = groups
        .iter()
        .flat_map(|g| g.bars.iter().map(|b| text_w(&clip(&b.label, 28), 11.0)))
        .chain(groups.iter().map(|g| text_w(&clip(&g.label, 28), 12.0)))
        .fold(40.0f64, f64::max)
        .min(200.0);
    let left = label_w + 12.0;
    let note_w = groups
        .iter()
        .flat_map(|g| g.bars.iter().map(|b| text_w(&b.note, 11.0)))
        .fold(40.0f64, f64::max)
        .min(180.0);
    let right = W - note_w - 10.0;
    let (bh, gap, top) = (14.0, 5.0, 26.0);
    let mut y = top;
    let mut body = String::new();
    for g in groups {
        if !g.label.is_empty() {
            y += 4.0;
            let _ = write!(
                body,
                r#"<text class="gl" x="4" y="{}">{}</text>"#,
                c(y + 10.0),
                esc(&clip(&g.label, 28))
            );
            y += 16.0;
        }
        for b in &g.bars {
            let cy = y + bh / 2.0;
            let _ = write!(
                body,
                r#"<text class="tk" x="{}" y="{}" text-anchor="end">{}</text>"#,
                c(left - 6.0),
                c(cy + 4.0),
                esc(&clip(&b.label, 28))
            );
            if ok(b) {
                let x1 = axis.scale(b.value.min(axis.max), left, right);
                let _ = write!(
                    body,
                    r#"<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}: {}</title></rect>"#,
                    c(left),
                    c(y),
                    c((x1 - left).max(0.5)),
                    c(bh),
                    esc(&b.color),
                    esc(&b.label),
                    esc(&b.note)
                );
                if let Some((lo, hi)) = b.ci.filter(|(l, h)| l.is_finite() && h.is_finite()) {
                    let (xl, xh) = (
                        axis.scale(lo.clamp(0.0, axis.max), left, right),
                        axis.scale(hi.clamp(0.0, axis.max), left, right),
                    );
                    let _ = write!(
                        body,
                        r#"<path class="ci" d="M{xl} {a} V{b} M{xl} {m} H{xh} M{xh} {a} V{b}"/>"#,
                        xl = c(xl),
                        xh = c(xh),
                        a = c(y + 2.0),
                        b = c(y + bh - 2.0),
                        m = c(cy)
                    );
                }
                for p in b.points.iter().filter(|p| p.is_finite() && **p >= 0.0) {
                    let _ = write!(
                        body,
                        r#"<circle class="pt" cx="{}" cy="{}" r="2"/>"#,
                        c(axis.scale(p.min(axis.max), left, right)),
                        c(cy)
                    );
                }
            }
            let _ = write!(
                body,
                r#"<text class="tk" x="{}" y="{}">{}</text>"#,
                c(right + 6.0),
                c(cy + 4.0),
                esc(&b.note)
            );
            y += bh + gap;
        }
    }
    let bottom = y;
    let h = bottom + 34.0;
    let mut s = String::new();
    open_svg(&mut s, h, title);
    for (v, l) in &axis.ticks {
        let px = axis.scale(*v, left, right);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{px}" y1="{}" x2="{px}" y2="{}"/><text class="tk" x="{px}" y="{}" text-anchor="middle">{}</text>"#,
            c(top - 2.0),
            c(bottom),
            c(bottom + 13.0),
            esc(l),
            px = c(px)
        );
    }
    s.push_str(&body);
    let _ = write!(
        s,
        r#"<line class="axis" x1="{l}" y1="{}" x2="{l}" y2="{}"/><text class="al" x="{}" y="{}" text-anchor="middle">{}</text></svg>"#,
        c(top - 2.0),
        c(bottom),
        c((left + right) / 2.0),
        c(bottom + 28.0),
        esc(&axis.label),
        l = c(left)
    );
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_and_clipping() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(esc("a\u{0}b"), "a\u{FFFD}b");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 4), "abc");
        assert_eq!(tick(0.5), "0.5");
        assert_eq!(tick(25_000_000.0), "25M");
        assert_eq!(tick(1200.0), "1200");
        assert_eq!(tick(0.0), "0");
    }

    #[test]
    fn axes_have_round_ticks_inside_the_range() {
        let a = Axis::linear("x", 0.0, 1234.0, |v| format!("{v}"));
        assert!(a.ticks.len() >= 3 && a.ticks.len() <= 11, "{:?}", a.ticks);
        assert!(a.ticks.iter().all(|(v, _)| *v >= 0.0 && *v <= 1234.0));
        assert_eq!(a.ticks[1].0, 200.0);
        let l = Axis::log10("ns", 1.0, 5.0, |v| format!("{v:.0}"));
        let labels: Vec<&str> = l.ticks.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(labels, ["10", "100", "1000", "10000", "100000"]);
        let flat = Axis::linear("x", 5.0, 5.0, |v| format!("{v}"));
        assert!(flat.max > flat.min);
    }

    #[test]
    fn charts_draw_data_and_nothing_without_it() {
        let bar = |v: f64| Bar {
            label: "<side>".into(),
            value: v,
            ci: Some((v * 0.9, v * 1.1)),
            points: vec![v * 0.95, v * 1.05],
            color: color(0).into(),
            note: format!("{v}"),
        };
        let svg = bar_chart(
            "t",
            "events/s",
            &[Group {
                label: String::new(),
                bars: vec![bar(10.0), bar(20.0)],
            }],
        )
        .unwrap();
        assert_eq!(svg.matches("<rect class=\"bar\"").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 4);
        assert!(svg.contains("&lt;side&gt;") && !svg.contains("<side>"));
        assert!(!svg.contains("NaN"));
        let empty = [Group {
            label: "g".into(),
            bars: vec![bar(f64::NAN)],
        }];
        assert!(bar_chart("t", "u", &empty).is_none());

        let x = Axis::linear("t", 0.0, 10.0, |v| format!("{v}"));
        let y = Axis::linear("v", 0.0, 100.0, |v| format!("{v}"));
        let s = Series {
            name: "a".into(),
            color: color(1).into(),
            points: vec![(0.0, 10.0), (5.0, f64::NAN), (10.0, 90.0)],
            dots: false,
        };
        let svg = line_chart(
            "l",
            &x,
            &y,
            std::slice::from_ref(&s),
            &[("a".into(), color(1).into())],
        )
        .unwrap();
        assert!(svg.contains(r#"d="M64 "#), "{svg}");
        assert!(!svg.contains("NaN"));
        let nothing = Series {
            points: vec![(f64::NAN, 1.0)],
            ..s
        };
        assert!(line_chart("l", &x, &y, &[nothing], &[]).is_none());
    }
}
