//! `hostbench trend`: runs with a known history (a steady stretch, a 10 % step down, a
//! spike) are imported, and the trend finds the step where it is, calls the spike an
//! outlier, writes its HTML page, and refuses what it cannot follow (exit 2, one line).

use crate::common::*;
use serde_json::{Value, json};
use std::path::Path;

/// One real run (a short null run), the template of the synthetic history.
fn template(db: &Path) -> Value {
    let out = hb_with_store(db)
        .args([
            "run",
            "null",
            "--time",
            "0.05s",
            "--no-save",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `values` as runs of `label`, a minute apart, their headline figure set to each value.
fn history(t: &Value, label: &str, values: &[f64]) -> Vec<Value> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut r = t.clone();
            r["id"] = json!(format!("{:032x}", 0xabc0_0000u64 + i as u64));
            r["label"] = json!(label);
            r["started_at"] = json!(format!("2026-11-{:02}T10:00:00.000Z", i + 1));
            let figs = r["figures"].as_array_mut().unwrap();
            figs[0]["value"] = json!(v);
            r
        })
        .collect()
}

#[test]
fn trend_finds_a_step_and_an_outlier() {
    let dir = tempfile::Builder::new()
        .prefix("hostbench-test-trend-")
        .tempdir()
        .unwrap();
    let db = dir.path().join("r.db");
    let t = template(&db);
    let headline = t["figures"][0]["name"].as_str().unwrap().to_string();
    let values = [
        100.0, 101.0, 99.0, 100.5, 90.0, 90.4, 89.9, 90.2, 120.0, 90.1,
    ];
    let file = dir.path().join("runs.json");
    std::fs::write(
        &file,
        serde_json::to_string(&history(&t, "nightly", &values)).unwrap(),
    )
    .unwrap();
    let ok = |args: &[&str]| -> (String, String) {
        let out = hb_with_store(&db).args(args).output().unwrap();
        let (o, e) = (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        );
        assert!(out.status.success(), "{args:?}: {e}\n{o}");
        (o, e)
    };
    ok(&["results", "import", file.to_str().unwrap()]);

    let (json_out, _) = ok(&["trend", "nightly", "--format", "json"]);
    let v: Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(v["schema"], "hostbench.trend");
    assert_eq!(v["subject"], "label nightly");
    let series = v["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "{v}");
    assert_eq!(series[0]["figure"], headline.as_str());
    let label = t["figures"][0]["label"].as_str().unwrap().to_string();
    assert_eq!(series[0]["label"], label.as_str());
    let marks: Vec<&str> = series[0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["mark"].as_str().unwrap())
        .collect();
    assert_eq!(
        marks,
        [
            "unjudged", "unjudged", "unjudged", "in_line", "change", "unjudged", "unjudged",
            "in_line", "outlier", "in_line"
        ]
    );
    let step = &series[0]["points"][4];
    assert_eq!(step["baseline"], 100.25);
    assert!(
        (step["change"].as_f64().unwrap() + 0.1022).abs() < 1e-3,
        "{step}"
    );

    // Text: the step is a CHANGE, worse (the headline is higher-is-better), with the median
    // before; the spike an outlier.
    let html = dir.path().join("trend.html");
    let (text, err) = ok(&["trend", "nightly", "-o", html.to_str().unwrap()]);
    assert!(
        text.contains("CHANGE -10.2% (worse; median before"),
        "{text}"
    );
    assert!(text.contains("outlier +33.2%"), "{text}");
    assert!(text.contains("1 change(s)"), "{text}");
    assert!(
        text.contains(&format!("null threads=1 — {label}, ")),
        "the label in words: {text}"
    );
    assert!(err.contains("wrote"), "{err}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.starts_with("<!DOCTYPE html>") && page.contains("<svg"),
        "{page}"
    );
    assert!(page.contains("CHANGE -10.2%"), "the table under the chart");
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "self-contained"
    );

    // `report --trend` adds the same charts and tables to a report.
    let report = dir.path().join("report.html");
    ok(&[
        "report",
        "nightly",
        "-o",
        report.to_str().unwrap(),
        "--trend",
        "nightly",
    ]);
    let page = std::fs::read_to_string(&report).unwrap();
    assert!(
        page.contains("<section id=\"trends\"><h2>Trends</h2>"),
        "a Trends section"
    );
    assert!(page.contains("CHANGE -10.2%"), "its table");
    assert!(page.trim_end().ends_with("</html>"), "still one page");
    let out = hb_with_store(&db)
        .args([
            "report",
            "nightly",
            "-o",
            report.to_str().unwrap(),
            "--trend",
            "nosuch",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--trend nosuch"));

    // A host name follows the same runs; filters narrow; what cannot be followed is refused.
    let host = t["host"]["hostname"].as_str().unwrap();
    let (by_host, _) = ok(&["trend", host, "--workload", "null", "--format", "json"]);
    let h: Value = serde_json::from_str(&by_host).unwrap();
    assert_eq!(h["subject"], format!("host {host}"));
    assert_eq!(h["series"][0]["points"].as_array().unwrap().len(), 10);
    let (since, _) = ok(&[
        "trend",
        "nightly",
        "--since",
        "2026-11-06",
        "--format",
        "json",
    ]);
    let s: Value = serde_json::from_str(&since).unwrap();
    assert_eq!(s["series"][0]["points"].as_array().unwrap().len(), 5);
    // Runs of one label from another host: a series of their own, not outliers.
    let mut other = history(&t, "nightly", &[80.0, 80.5, 79.5]);
    for (i, r) in other.iter_mut().enumerate() {
        r["id"] = json!(format!("{:032x}", 0xdef0_0000u64 + i as u64));
        r["host"]["hostname"] = json!("other-host");
    }
    let file3 = dir.path().join("other.json");
    std::fs::write(&file3, serde_json::to_string(&other).unwrap()).unwrap();
    ok(&["results", "import", file3.to_str().unwrap()]);
    let (split, _) = ok(&["trend", "nightly", "--format", "json"]);
    let v: Value = serde_json::from_str(&split).unwrap();
    let names: Vec<&str> = v["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["variant"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names.iter().any(|n| n.ends_with("on other-host")),
        "{names:?}"
    );
    let mine = v["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| !s["variant"].as_str().unwrap().ends_with("on other-host"))
        .unwrap();
    assert_eq!(
        mine["points"].as_array().unwrap().len(),
        10,
        "the first host's runs alone"
    );
    // A word that is a label and a host name: the label, with a note; host: says which.
    let hostname = t["host"]["hostname"].as_str().unwrap().to_string();
    let mut named = history(&t, &hostname, &[1.0, 1.0, 1.0]);
    for (i, r) in named.iter_mut().enumerate() {
        r["id"] = json!(format!("{:032x}", 0xbee0_0000u64 + i as u64));
    }
    let file4 = dir.path().join("named.json");
    std::fs::write(&file4, serde_json::to_string(&named).unwrap()).unwrap();
    ok(&["results", "import", file4.to_str().unwrap()]);
    let (out, err) = ok(&["trend", &hostname, "--format", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["subject"], format!("label {hostname}"));
    assert!(err.contains(&format!("write host:{hostname}")), "{err}");
    let (out, _) = ok(&["trend", &format!("host:{hostname}"), "--format", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["subject"], format!("host {hostname}"));
    for (args, want) in [
        (
            vec!["trend", "nosuch"],
            "no stored run has the label or host 'nosuch'",
        ),
        (
            vec!["trend", "nightly", "--figure", "nope"],
            "has the figure 'nope'",
        ),
        (
            vec!["trend", "nightly", "--threshold", "x"],
            "not a threshold",
        ),
    ] {
        let out = hb_with_store(&db).args(&args).output().unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(want), "{args:?}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
    }
}

/// Variant names read sizes as sizes, as `compare`'s do (`total_size=32.0 MiB`, not
/// 33554432), in the text and the JSON.
#[test]
fn trend_names_variants_with_readable_sizes() {
    let dir = tempfile::Builder::new()
        .prefix("hostbench-test-trend-")
        .tempdir()
        .unwrap();
    let db = dir.path().join("r.db");
    for size in ["32M", "64M"] {
        let out = hb_with_store(&db)
            .args([
                "memory",
                "--memory-block-size=1M",
                &format!("--memory-total-size={size}"),
                "--label=sizes",
                "run",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = hb_with_store(&db)
        .args(["trend", "sizes"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("total_size=32.0 MiB"), "{text}");
    assert!(text.contains("total_size=64.0 MiB"), "{text}");
    assert!(!text.contains("33554432"), "{text}");
    let json = hb_with_store(&db)
        .args(["trend", "sizes", "-f", "json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    let variants: Vec<&str> = doc["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["variant"].as_str().unwrap())
        .collect();
    assert!(
        variants.iter().any(|v| v.contains("total_size=32.0 MiB")),
        "{variants:?}"
    );
}
