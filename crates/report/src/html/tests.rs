//! The HTML report's tests: well-formed, self-contained, charts present, lists folded,
//! the same bytes for the same input.

use super::*;
use hostbench_core::compare::{Options, SideInput};
use scraper::{Html, Selector};

/// A result from JSON, so the fixture follows the schema.
fn run(id: &str, label: &str, eps: f64, extra: serde_json::Value) -> RunResult {
    let mut j = serde_json::json!({
        "schema": "hostbench.result", "schema_version": 1, "id": id,
        "tool": {"name": "hostbench", "version": "0.1.0", "git_hash": null},
        "started_at": "2026-01-01T00:00:00.000Z", "label": label,
        "workload": {"id": "cpu", "category": "cpu", "params": {"max_prime": 10000}, "facts": {}},
        "config": {"threads": 1, "time_limit_s": 10.0, "event_limit": 0, "warmup_s": 0.0,
            "rate_per_s": 0.0, "report_interval_s": 1.0, "percentiles": [95.0],
            "rand": {"type": "uniform"}, "seed": 1, "grammar": "native",
            "command_line": ["hostbench", "run", "cpu", "--label", label]},
        "clock": {"source": "tsc", "ticks_per_s": 1e9, "read_cost_ns": 20.0},
        "host": {"hostname": "h<1>", "cpu": {"model": "M", "vendor": "V", "arch": "x86_64",
            "sockets": 1, "cores": 2, "threads": 2, "flags_of_note": [], "caches": [],
            "governor": null, "mhz_current": null, "mhz_max": null},
            "memory": {"total_bytes": 1, "available_bytes": 1, "swap_total_bytes": 0,
                "numa_nodes": 1, "transparent_hugepages": "madvise", "hugepages_total": 0},
            "os": {"kernel": "6.1", "distribution": "D"}, "virtualization": null,
            "dmi": null, "clocksource": {"current": "tsc", "available": ["tsc"]}},
        "outcome": {"stop_reason": "time_limit", "unfinished_events": 0, "error": null},
        "metrics": {"duration_s": 10.0, "events": 100, "events_per_s": eps,
            "counters": {}, "counters_per_s": {}},
        "latency": {"count": 0, "min_ns": 0, "avg_ns": 0, "max_ns": 0, "sum_ns": 0,
            "stddev_ns": 0.0, "percentiles": [], "hdr_histogram": ""},
        "fairness": {"events_avg": 0.0, "events_stddev": 0.0, "exec_time_avg_s": 0.0,
            "exec_time_stddev_s": 0.0, "per_thread": []},
        "intervals": [], "warnings": [],
        "figures": [{"name": "events_per_s", "unit": "events/s", "value": eps, "better": "higher"}],
    });
    if let (Some(o), Some(e)) = (j.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            o.insert(k.clone(), v.clone());
        }
    }
    serde_json::from_value(j).expect("a valid result")
}

fn interval(t: f64, eps: f64) -> serde_json::Value {
    serde_json::json!({"t_s": t, "elapsed_s": 1.0, "threads": 1, "events": eps as u64,
        "events_per_s": eps, "counters_per_s": {},
        "latency": {"count": 0, "min_ns": 0, "max_ns": 0, "sum_ns": 0, "percentiles": []},
        "queue_len": null, "concurrency": null})
}

fn fixture() -> (Comparison, Vec<Vec<RunResult>>) {
    let evil = "<script>alert(1)</script>";
    let mut a = Vec::new();
    let mut b = Vec::new();
    for i in 0..6 {
        let iv = serde_json::json!({"intervals": [interval(1.0, 100.0), interval(2.0, 101.0 + f64::from(i))]});
        a.push(run(
            &format!("a{i}"),
            "idle",
            100.0 + f64::from(i),
            iv.clone(),
        ));
        b.push(run(&format!("b{i}"), evil, 200.0 + f64::from(i), iv));
    }
    let mut memlat = run(
        "m1",
        "idle",
        1.0,
        serde_json::json!({"tables": [{"name": "memlat", "title": "t",
            "columns": [{"name": "size_bytes", "unit": "B"}, {"name": "ns_per_load", "unit": "ns"}],
            "rows": [{"label": "4 KiB", "values": [4096.0, 1.2]},
                     {"label": "1 MiB", "values": [1048576.0, 4.5]},
                     {"label": "64 MiB", "values": [67108864.0, 90.0]}]}]}),
    );
    memlat.workload.id = "memlat".into();
    let mut memlat_b = memlat.clone();
    memlat_b.id = "m2".into();
    a.push(memlat);
    b.push(memlat_b);
    for (k, side) in [&mut a, &mut b].into_iter().enumerate() {
        let rate = 1000.0 * (k as f64 + 1.0);
        let rows: Vec<serde_json::Value> = ["Copy", "Scale", "Add", "Triad"]
            .iter()
            .map(|l| serde_json::json!({"label": l, "values": [rate]}))
            .collect();
        let mut st = run(
            &format!("s{k}"),
            "idle",
            1.0,
            serde_json::json!({"tables": [{"name": "stream", "title": "t",
                "columns": [{"name": "best_rate_mb_per_s", "unit": "MB/s"}], "rows": rows}],
                "figures": [{"name": "triad_best_mb_per_s", "unit": "MB/s", "value": rate,
                    "better": "higher"}]}),
        );
        st.workload.id = "stream".into();
        side.push(st);
    }
    let sides = vec![
        SideInput {
            name: "idle".into(),
            spec: "idle".into(),
            runs: a.clone(),
        },
        SideInput {
            name: evil.into(),
            spec: evil.into(),
            runs: b.clone(),
        },
    ];
    (Comparison::build(&sides, Options::default()), vec![a, b])
}

fn render_fixture() -> String {
    let (c, runs) = fixture();
    render(&ReportInput {
        title: "report <of> things",
        comparison: &c,
        sides: runs.iter().map(Vec::as_slice).collect(),
        generator: "hostbench test",
    })
}

#[test]
fn html_is_well_formed_and_self_contained() {
    // The parser does report errors (so an empty list below means something).
    let broken = Html::parse_document("<!DOCTYPE html><p><b>x</p></i><td>");
    assert!(!broken.errors.is_empty());
    let html = render_fixture();
    let doc = Html::parse_document(&html);
    assert!(doc.errors.is_empty(), "HTML parse errors: {:?}", doc.errors);
    // Nothing is loaded from anywhere: no reference attributes leave the file.
    let any = Selector::parse("*").unwrap();
    for el in doc.select(&any) {
        for (name, value) in el.value().attrs() {
            if matches!(
                name,
                "src"
                    | "href"
                    | "xlink:href"
                    | "srcset"
                    | "action"
                    | "poster"
                    | "data"
                    | "background"
            ) {
                let v = value.trim().to_ascii_lowercase();
                assert!(
                    v.starts_with('#'),
                    "<{} {name}=\"{value}\"> refers outside the report",
                    el.value().name()
                );
            }
        }
        assert!(
            !matches!(
                el.value().name(),
                "link" | "img" | "iframe" | "object" | "embed" | "image" | "use" | "base"
            ),
            "<{}> element in the report",
            el.value().name()
        );
    }
    for needle in ["http://", "https://", "url(", "@import", "src=", "//fonts"] {
        assert!(!html.contains(needle), "{needle} found in the report");
    }
    // The only script is the inert JSON block, and the evil label stayed text.
    let scripts: Vec<_> = doc.select(&Selector::parse("script").unwrap()).collect();
    assert_eq!(scripts.len(), 1);
    assert_eq!(scripts[0].value().attr("type"), Some("application/json"));
    assert!(!html.contains("<script>alert"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    let json = scripts[0].text().collect::<String>();
    let back: Comparison = serde_json::from_str(&json).expect("the embedded JSON parses");
    assert_eq!(back.sides[1].name, "<script>alert(1)</script>");
}

#[test]
fn charts_are_present_and_not_empty() {
    let html = render_fixture();
    let doc = Html::parse_document(&html);
    let svgs: Vec<_> = doc.select(&Selector::parse("svg").unwrap()).collect();
    // cpu: events_per_s bars + timeline; memlat: its figure's bars + staircase; stream:
    // the kernels (its *_best_mb_per_s figures are not drawn twice).
    assert_eq!(svgs.len(), 5, "{html}");
    assert!(html.contains("STREAM best rate per kernel"));
    assert!(!html.contains("triad_best_mb_per_s (MB/s, higher is better)"));
    let marks = Selector::parse("rect.bar, path.ln").unwrap();
    for s in &svgs {
        let n = s.select(&marks).count();
        assert!(n > 0, "an empty chart: {}", s.html());
        for m in s.select(&marks) {
            let v = m.value();
            let ok = v.attr("d").is_some_and(|d| d.len() > 3)
                || v.attr("width")
                    .and_then(|w| w.parse::<f64>().ok())
                    .is_some_and(|w| w > 0.0);
            assert!(ok, "a mark without geometry: {}", m.html());
        }
    }
    assert!(html.contains("Memory latency staircase"));
    assert!(
        html.contains("class=\"v-faster\""),
        "a 2x shift shows as faster"
    );
    // Host table: identical values merged into one cell.
    assert!(html.contains("<td colspan=\"2\">6.1</td>"));
    // The exact command lines, quoted for a shell and escaped for HTML.
    assert!(html.contains("hostbench run cpu --label idle"));
    assert!(html.contains("--label &#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39;"));
}

/// A suite's dozens of runs do not make the page a wall of commands: a side's list
/// past `FOLD_AFTER` is folded, its heading counting the runs; a short one stays open.
#[test]
fn long_command_lists_fold() {
    let html = render_fixture();
    let doc = Html::parse_document(&html);
    let folded = Selector::parse("#commands details:not([open])").unwrap();
    let open = Selector::parse("#commands details[open]").unwrap();
    assert_eq!(doc.select(&folded).count(), 0, "8 runs stay open");
    assert_eq!(doc.select(&open).count(), 2);
    assert!(html.contains("(8 runs)</span></h3></summary>"), "{html}");
    let runs: Vec<RunResult> = (0..12)
        .map(|i| {
            run(
                &format!("r{i}"),
                "many",
                100.0 + f64::from(i),
                serde_json::json!({}),
            )
        })
        .collect();
    let one = vec![run("o", "one", 50.0, serde_json::json!({}))];
    let sides = vec![
        SideInput {
            name: "many".into(),
            spec: "many".into(),
            runs: runs.clone(),
        },
        SideInput {
            name: "one".into(),
            spec: "one".into(),
            runs: one.clone(),
        },
    ];
    let c = Comparison::build(&sides, Options::default());
    let html = render(&ReportInput {
        title: "t",
        comparison: &c,
        sides: vec![&runs, &one],
        generator: "hostbench test",
    });
    let doc = Html::parse_document(&html);
    assert!(doc.errors.is_empty(), "{:?}", doc.errors);
    assert_eq!(doc.select(&folded).count(), 1, "12 runs fold");
    assert_eq!(doc.select(&open).count(), 1, "1 run stays open");
    assert!(html.contains("(12 runs)</span></h3></summary>"));
    assert!(html.contains("(1 run)</span></h3></summary>"));
    // Folded is not gone: every run is still in the page.
    let items = Selector::parse("#commands ol.cmds li").unwrap();
    assert_eq!(doc.select(&items).count(), 13);
}

#[test]
fn same_input_same_bytes() {
    assert_eq!(render_fixture(), render_fixture());
}

#[test]
fn shell_quoting() {
    let a = |v: &[&str]| shell_join(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(a(&["hostbench", "--time=1s"]), "hostbench --time=1s");
    assert_eq!(a(&["a b", "it's", ""]), "'a b' 'it'\\''s' ''");
}

/// The clock read's cost is measured: 8.0 against 7.8 ns is noise, not a host difference;
/// more than twice the cost, or another clock source, is.
#[test]
fn the_timer_row_is_marked_only_for_a_difference_that_matters() {
    let marked = |a_cost: f64, b_cost: f64, b_source: &str| {
        let mut a = run("a", "a", 100.0, serde_json::json!({}));
        a.clock.read_cost_ns = a_cost;
        let mut b = run("b", "b", 100.0, serde_json::json!({}));
        b.clock.read_cost_ns = b_cost;
        b.clock.source = serde_json::from_value(serde_json::json!(b_source)).unwrap();
        let sides = vec![
            SideInput {
                name: "a".into(),
                spec: "a".into(),
                runs: vec![a.clone()],
            },
            SideInput {
                name: "b".into(),
                spec: "b".into(),
                runs: vec![b.clone()],
            },
        ];
        let c = Comparison::build(&sides, Options::default());
        let a = [a];
        let b = [b];
        let html = render(&ReportInput {
            title: "t",
            comparison: &c,
            sides: vec![&a, &b],
            generator: "hostbench test",
        });
        let doc = Html::parse_document(&html);
        let row = Selector::parse("#hosts tr.diff th").unwrap();
        doc.select(&row)
            .any(|th| th.text().collect::<String>().starts_with("timer ("))
    };
    assert!(!marked(8.0, 7.8, "tsc"), "noise is not a difference");
    assert!(marked(8.0, 20.0, "tsc"), "more than twice the cost is");
    assert!(marked(8.0, 8.0, "monotonic"), "another clock source is");
}
