//! `hostbench compare` and `hostbench report` end to end: side resolution (labels, ids,
//! files, explicit `label:`/`id:`/`file:`, ambiguity errors), verdicts on synthetic
//! repetitions made from one real run, every output format (JSON validated against
//! `schemas/compare.v1.json`), warnings, bad input (exit 2, one line), and the HTML report:
//! well-formed, self-contained, and — when Chromium is installed (`.ci/run` installs it and
//! sets HOSTBENCH_TEST_CHROMIUM=1, which makes it required) — rendered headless with every
//! chart drawn.
//!
//! Every test uses its own temporary store; nothing touches the user's.

use crate::common::*;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One real cpu result (with latency histogram and interval reports) to derive runs from.
fn template() -> &'static Value {
    static T: OnceLock<Value> = OnceLock::new();
    T.get_or_init(|| {
        let (out, _) = run_ok(&[
            "run",
            "cpu",
            "--set",
            "max_prime=2000",
            "--time",
            "0.3s",
            "--report-interval",
            "0.1s",
            "--no-save",
            "--format",
            "json",
        ]);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_valid(&v, "template run");
        v
    })
}

/// A run derived from the template: its id, label and figures (events/s scaled to `eps`,
/// latency to match).
fn derived(id: &str, label: &str, eps: f64) -> Value {
    let mut v = template().clone();
    // Ids are 32 hex digits (the result schema; imports are checked against it).
    v["id"] = json!(format!("{id:a<32}"));
    v["label"] = json!(label);
    v["metrics"]["events_per_s"] = json!(eps);
    let figs = v["figures"].as_array_mut().unwrap();
    for f in figs.iter_mut() {
        match f["name"].as_str().unwrap() {
            "events_per_s" => f["value"] = json!(eps),
            "latency_avg_ns" => f["value"] = json!(1e9 / eps),
            _ => {}
        }
    }
    v
}

/// `n` runs labelled `label` around `center` (a spread of ±1 %).
fn reps(prefix: &str, label: &str, center: f64, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let spread = (i as f64 - (n as f64 - 1.0) / 2.0) * 0.004;
            derived(
                &format!("{prefix}{i:02}aaaaaaaaaaaaaaaa"),
                label,
                center * (1.0 + spread),
            )
        })
        .collect()
}

struct Fixture {
    _dir: tempfile::TempDir,
    db: PathBuf,
    dir: PathBuf,
}

/// A temporary store holding `runs`.
fn store_with(runs: &[Value]) -> Fixture {
    let dir = tempfile::Builder::new()
        .prefix("hostbench-test-compare-")
        .tempdir()
        .unwrap();
    let db = dir.path().join("results.db");
    let file = dir.path().join("runs.json");
    std::fs::write(&file, serde_json::to_string(&runs).unwrap()).unwrap();
    let out = hb_with_store(&db)
        .args(["results", "import"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Fixture {
        db,
        dir: dir.path().to_path_buf(),
        _dir: dir,
    }
}

/// Runs hostbench on the fixture's store; (exit code, stdout, stderr).
fn hbf(f: &Fixture, args: &[&str]) -> (i32, String, String) {
    let out = hb_with_store(&f.db)
        .current_dir(&f.dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn ok(f: &Fixture, args: &[&str]) -> String {
    let (code, out, err) = hbf(f, args);
    assert_eq!(code, 0, "{args:?}: {err}\n{out}");
    out
}

/// Exit 2 with one line on stderr containing every `needle`.
fn fails(f: &Fixture, args: &[&str], needles: &[&str]) {
    let (code, out, err) = hbf(f, args);
    assert_eq!(code, 2, "{args:?} should fail: {err}\n{out}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line: {err}"
    );
    for n in needles {
        assert!(err.contains(n), "{args:?}: {n:?} not in {err}");
    }
}

fn compare_schema() -> jsonschema::Validator {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schemas/compare.v1.json");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    jsonschema::meta::validate(&s).expect("compare.v1.json is a valid schema");
    jsonschema::options().build(&s).unwrap()
}

fn compare_json(f: &Fixture, args: &[&str]) -> Value {
    let mut a = vec!["compare", "--format", "json"];
    a.extend_from_slice(args);
    let v: Value = serde_json::from_str(&ok(f, &a)).unwrap();
    let val = compare_schema();
    let errors: Vec<String> = val
        .iter_errors(&v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "compare JSON does not match the schema: {errors:#?}"
    );
    v
}

fn cell<'a>(v: &'a Value, figure: &str, side: usize) -> &'a Value {
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["figure"] == figure)
        .unwrap_or_else(|| panic!("no row {figure}: {v}"));
    &row["cells"][side]
}

#[test]
fn a_2x_shift_is_faster_and_identical_sides_are_not() {
    let runs = [
        reps("a", "base", 1000.0, 6),
        reps("b", "double", 2000.0, 6),
        reps("c", "same", 1000.0, 6),
    ]
    .concat();
    let f = store_with(&runs);
    let v = compare_json(&f, &["base", "double", "same"]);
    let eps = cell(&v, "events_per_s", 1);
    assert_eq!(eps["verdict"], "faster");
    assert!((eps["ratio"].as_f64().unwrap() - 2.0).abs() < 0.01, "{eps}");
    assert!(eps["p_value"].as_f64().unwrap() < 0.05);
    assert!(eps["p_exact"].as_bool().unwrap());
    let lat = cell(&v, "latency_avg_ns", 1);
    assert_eq!(lat["verdict"], "faster", "half the latency is faster");
    assert!((lat["speedup"].as_f64().unwrap() - 2.0).abs() < 0.01);
    let same = cell(&v, "events_per_s", 2);
    assert_eq!(same["verdict"], "no_difference");
    assert!(cell(&v, "events_per_s", 0)["ci"]["lo"].is_number());
    assert!((v["geomean"][1]["speedup"].as_f64().unwrap() - 2.0).abs() < 0.01);
    assert!((v["geomean"][2]["speedup"].as_f64().unwrap() - 1.0).abs() < 0.01);
    assert_eq!(v["geomean"][0], Value::Null);
    assert_eq!(v["sides"][0]["name"], "base");

    let text = ok(&f, &["compare", "base", "double", "same"]);
    assert!(text.contains("double vs base"), "{text}");
    assert!(text.contains("×2.00 faster"), "{text}");
    assert!(text.contains(" ~ p="), "{text}");
    assert!(text.contains("score vs base"), "{text}");
    // The decision first, one sentence per side: the score over the headline (events/s,
    // not its derived latency too) with its interval, and the rows not significant.
    let first: Vec<&str> = text.lines().take(2).collect();
    assert!(
        first[0].starts_with("double is 100% faster than base (95% interval +")
            && first[0].ends_with("over 1 headline; 0 of 2 row(s) not significant."),
        "{text}"
    );
    assert!(
        first[1].starts_with("same and base are not clearly different (")
            && first[1].ends_with("; 2 of 2 row(s) not significant."),
        "{text}"
    );
    assert!(
        v["geomean"][1]["ci_lo"].as_f64().unwrap() < 2.0,
        "{}",
        v["geomean"]
    );
    assert!(
        v["geomean"][1]["ci_hi"].as_f64().unwrap() > 2.0 * 0.99,
        "{}",
        v["geomean"]
    );
    assert_eq!(v["geomean"][1]["rows"], 1, "the headline only");
    let md = ok(&f, &["compare", "base", "double", "-f", "markdown"]);
    assert!(
        md.contains("| base (baseline) |") && md.contains("|---|"),
        "{md}"
    );
    let csv = ok(&f, &["compare", "base", "double", "-f", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("workload,variant,figure,"));
    // Two figures (events/s, mean latency) × two sides.
    assert_eq!(lines.len(), 1 + 4, "{csv}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains(",double,false,6,") && l.ends_with(",faster")),
        "{csv}"
    );
}

#[test]
fn the_noise_threshold_decides_small_shifts() {
    // 3 % up, with no overlap between the sides: significant either way.
    let runs = [reps("a", "base", 1000.0, 6), reps("e", "up3", 1030.0, 6)].concat();
    let f = store_with(&runs);
    let v = compare_json(&f, &["base", "up3"]);
    assert_eq!(cell(&v, "events_per_s", 1)["verdict"], "faster");
    assert!(cell(&v, "events_per_s", 1)["p_value"].as_f64().unwrap() < 0.05);
    let v = compare_json(&f, &["base", "up3", "--threshold", "5%"]);
    assert_eq!(cell(&v, "events_per_s", 1)["verdict"], "no_difference");
    assert_eq!(v["options"]["threshold"], 0.05);
}

/// `--fail-if-slower`: exit 1 when a headline is significantly worse by more than the limit,
/// naming it; exit 0 when within it or better; rows without a verdict are named on stderr.
#[test]
fn fail_if_slower_gates_on_significant_headline_losses() {
    let runs = [
        reps("a", "base", 1000.0, 6),
        reps("d", "down5", 950.0, 6),
        reps("7", "up5", 1050.0, 6),
        reps("5", "single", 900.0, 1),
    ]
    .concat();
    let f = store_with(&runs);
    let (code, out, err) = hbf(&f, &["compare", "base", "down5", "--fail-if-slower", "3%"]);
    assert_eq!(code, 1, "{err}\n{out}");
    assert!(
        out.contains("events/s"),
        "the comparison still prints: {out}"
    );
    assert!(err.contains("FAILED: cpu "), "{err}");
    assert!(
        err.contains("(events_per_s): down5 is 5.0% worse than base"),
        "{err}"
    );
    assert!(
        err.contains("FAILED: the score: down5 is 5.0% worse than base"),
        "{err}"
    );
    // The interval runs from the least to the most worse, both beyond the limit.
    let line = err
        .lines()
        .find(|l| l.starts_with("FAILED: the score"))
        .unwrap();
    let (lo, hi) = line
        .split_once("interval: ")
        .and_then(|(_, r)| r.split_once("% to "))
        .map(|(a, b)| {
            (
                a.parse::<f64>().unwrap(),
                b.split('%').next().unwrap().parse::<f64>().unwrap(),
            )
        })
        .unwrap();
    assert!(3.0 < lo && lo <= 5.0 && 5.0 <= hi, "{line}");
    assert!(err.contains("2 finding(s)"), "{err}");
    // Within the limit, better, or the latency row (not the headline): passes.
    let (code, _, err) = hbf(&f, &["compare", "base", "down5", "--fail-if-slower", "8%"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("no headline figure is significantly worse"),
        "{err}"
    );
    let (code, _, err) = hbf(&f, &["compare", "base", "up5", "--fail-if-slower", "1%"]);
    assert_eq!(code, 0, "{err}");
    // One run: no verdict, said, not failed.
    let (code, _, err) = hbf(&f, &["compare", "base", "single", "--fail-if-slower", "3%"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("could not decide"), "{err}");
    fails(
        &f,
        &["compare", "base", "down5", "--fail-if-slower", "x"],
        &["not a threshold"],
    );
    // Nothing in common (the other side ran other parameters): the gate checked nothing,
    // so it fails rather than pass silently (a user review: a CI gate passed with exit 0).
    let other: Vec<Value> = reps("e", "other", 900.0, 6)
        .into_iter()
        .map(|mut v| {
            v["workload"]["params"]["max_prime"] = json!(3000);
            v
        })
        .collect();
    let f = store_with(&[reps("a", "base", 1000.0, 6), other].concat());
    let (code, out, err) = hbf(&f, &["compare", "base", "other", "--fail-if-slower", "3%"]);
    assert_eq!(code, 1, "{err}\n{out}");
    assert!(
        err.contains("FAILED: nothing of other was compared with base"),
        "{err}"
    );
}

/// Price-performance: `--price`, a prices file (CSV and TOML) and the runs' `price` note
/// give each side a price; the score per relative price, the headline rates per unit of
/// price and the sentence's "cheaper per unit of work" follow; a price for no side, or one
/// that is not a price, is refused.
#[test]
fn prices_give_price_performance() {
    let runs = [reps("a", "c6i", 1000.0, 6), reps("b", "c7g", 1200.0, 6)].concat();
    let f = store_with(&runs);
    // c7g: 20 % faster at 60 % of the price: twice the work for the money.
    let v = compare_json(
        &f,
        &[
            "c6i",
            "c7g",
            "--price",
            "c6i=0.1/h",
            "--price",
            "c7g=0.06/h",
        ],
    );
    let pp = &v["price_performance"];
    assert_eq!(pp[0]["per_hour"], 0.1);
    assert!(
        (pp[1]["score"]["speedup"].as_f64().unwrap() - 2.0).abs() < 0.01,
        "{pp}"
    );
    assert!(
        pp[0].get("score").is_none(),
        "the baseline has no relative score"
    );
    assert_eq!(pp[1]["per_price"][0]["unit"], "events/s per /h");
    let median = cell(&v, "events_per_s", 1)["median"].as_f64().unwrap();
    assert!((pp[1]["per_price"][0]["value"].as_f64().unwrap() - median / 0.06).abs() < 1e-6);
    let text = ok(
        &f,
        &[
            "compare",
            "c6i",
            "c7g",
            "--price",
            "c6i=0.1/h",
            "--price",
            "c7g=43.8/month",
        ],
    );
    let first = text.lines().next().unwrap();
    assert!(first.contains("50% cheaper per unit of work"), "{text}");
    assert!(text.contains("prices: c6i 0.1/h, c7g 0.06/h"), "{text}");
    assert!(text.contains("price-performance vs c6i"), "{text}");
    assert!(text.contains("events/s per /h"), "{text}");
    // A prices file, CSV or TOML; --price wins over it.
    let csv = f.dir.join("prices.csv");
    // A shared price list may name machines this comparison leaves out (m7a).
    std::fs::write(
        &csv,
        "label,price,unit\nc6i,0.1,h\nc7g,0.06,h\nm7a,0.09,h\n",
    )
    .unwrap();
    let v = compare_json(&f, &["c6i", "c7g", "--prices", csv.to_str().unwrap()]);
    assert!(
        (v["price_performance"][1]["score"]["speedup"]
            .as_f64()
            .unwrap()
            - 2.0)
            .abs()
            < 0.01
    );
    let toml = f.dir.join("prices.toml");
    std::fs::write(&toml, "[prices]\nc6i = \"2.4/day\"\nc7g = 0.06\n").unwrap();
    let v = compare_json(
        &f,
        &[
            "c6i",
            "c7g",
            "--prices",
            toml.to_str().unwrap(),
            "--price",
            "c7g=0.12/h",
        ],
    );
    assert!(
        (v["price_performance"][1]["score"]["speedup"]
            .as_f64()
            .unwrap()
            - 1.0)
            .abs()
            < 0.01
    );
    // The runs' price note (results annotate) when no price is given.
    ok(&f, &["results", "annotate", "c6i", "price=0.1/h"]);
    ok(&f, &["results", "annotate", "c7g", "price=0.06/h"]);
    let v = compare_json(&f, &["c6i", "c7g"]);
    assert!(
        (v["price_performance"][1]["score"]["speedup"]
            .as_f64()
            .unwrap()
            - 2.0)
            .abs()
            < 0.01
    );
    // Notes that disagree: no price for that side, and a warning that says why.
    let one = v["sides"][1]["name"].as_str().unwrap().to_string();
    let ids = v["variants"][0]["runs"][1].clone();
    let first = ids[0].as_str().unwrap();
    ok(&f, &["results", "annotate", first, "price=0.07/h"]);
    let (code, out, err) = hbf(&f, &["compare", "c6i", &one]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("price notes disagree (0.06/h, 0.07/h)"),
        "{err}"
    );
    assert!(out.contains("(no price)"), "{out}");
    ok(&f, &["results", "annotate", first, "price=0.06/h"]);
    let report = f.dir.join("priced.html");
    ok(
        &f,
        &["report", "c6i", "c7g", "-o", report.to_str().unwrap()],
    );
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("per unit of price"), "the report shows it");
    assert!(
        html.contains("cheaper per unit of work"),
        "the sentence too"
    );
    fails(
        &f,
        &["compare", "c6i", "c7g", "--price", "c8g=0.1/h"],
        &["no side is called 'c8g'"],
    );
    fails(
        &f,
        &["compare", "c6i", "c7g", "--price", "c7g=cheap"],
        &["not a price"],
    );
    fails(
        &f,
        &["compare", "c6i", "c7g", "--price", "c7g"],
        &["write SIDE=PRICE"],
    );
    fails(
        &f,
        &[
            "compare", "c6i", "c7g", "--price", "c7g=1/h", "--price", "c7g=2/h",
        ],
        &["given twice with different prices"],
    );
    // A tiny price reads as one, not as 0/h.
    let text = ok(
        &f,
        &[
            "compare",
            "c6i",
            "c7g",
            "--price",
            "c6i=1e-9/h",
            "--price",
            "c7g=1/h",
        ],
    );
    assert!(text.contains("c6i 1.000e-9/h"), "{text}");
    // Markdown passes no raw HTML through from labels.
    ok(
        &f,
        &["results", "relabel", "c7g", "<img src=x onerror=alert(1)>"],
    );
    let md = ok(
        &f,
        &[
            "compare",
            "c6i",
            "<img src=x onerror=alert(1)>",
            "-f",
            "markdown",
        ],
    );
    assert!(!md.contains("<img"), "{md}");
    assert!(md.contains("&lt;img src=x onerror=alert(1)&gt;"), "{md}");
}

/// Three or more sides are ranked by score, ties (overlapping intervals) sharing a rank, in
/// text, JSON (schema-valid) and the HTML report.
#[test]
fn three_sides_are_ranked_with_ties() {
    let runs = [
        reps("a", "base", 1000.0, 6),
        reps("b", "fast", 1200.0, 6),
        reps("c", "fast2", 1201.0, 6),
        reps("d", "slow", 800.0, 6),
    ]
    .concat();
    let f = store_with(&runs);
    let v = compare_json(&f, &["base", "fast", "fast2", "slow"]);
    let ranks: Vec<(u64, u64)> = v["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["side"].as_u64().unwrap(), r["rank"].as_u64().unwrap()))
        .collect();
    assert_eq!(ranks, [(2, 1), (1, 1), (0, 3), (3, 4)], "{}", v["ranking"]);
    let text = ok(&f, &["compare", "base", "fast", "fast2", "slow"]);
    assert!(text.contains("ranking by score"), "{text}");
    assert!(text.contains("1= fast2 ×1.20"), "{text}");
    assert!(text.contains("; tied with fast"), "{text}");
    assert!(text.contains("3 base ×1.00 (baseline)"), "{text}");
    let report = f.dir.join("ranked.html");
    ok(
        &f,
        &[
            "report",
            "base",
            "fast",
            "fast2",
            "slow",
            "-o",
            report.to_str().unwrap(),
        ],
    );
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("<h3>Ranking</h3>"), "the report ranks too");
    // The sentences are coloured by the score, whatever the figures' directions.
    assert!(
        html.contains("<p class=\"verdict v-faster\">"),
        "fast sides in the better colour"
    );
    assert!(
        html.contains("<p class=\"verdict v-slower\">"),
        "the slow side in the worse one"
    );
    // Charts use the unit the table shows (1 ms latencies: µs in both, not ns in the chart).
    assert!(
        html.contains("aria-label=\"mean latency, µs (lower is better)\""),
        "chart unit"
    );
    assert!(!html.contains("mean latency, ns"), "no chart left in ns");
    // Two sides: no ranking.
    let v = compare_json(&f, &["base", "fast"]);
    assert!(v.get("ranking").is_none());
}

/// A headline without a verdict says how many runs per side would decide it, at the spread
/// seen so far.
#[test]
fn undecided_rows_say_how_many_runs_would_decide() {
    let runs = [reps("a", "base", 1000.0, 3), reps("e", "up3", 1030.0, 3)].concat();
    let f = store_with(&runs);
    let text = ok(&f, &["compare", "base", "up3"]);
    assert!(text.contains("runs needed for a verdict"), "{text}");
    // The sentence tells rows without a verdict from rows without a difference.
    let first = text.lines().next().unwrap();
    assert!(
        first.ends_with("0 of 2 row(s) not significant, 2 without a verdict (too few runs)."),
        "{first}"
    );
    // ±0.4 % runs, 3 % apart: the exact test's floor of 4 runs per side decides it.
    assert!(
        text.contains(
            "up3: the observed 3.0% needs ~4 runs per side; 5% needs ~4 runs per side (now 3 and 3)"
        ),
        "{text}"
    );
    // Decided rows need nothing.
    let runs = [reps("a", "base", 1000.0, 6), reps("e", "up3", 1030.0, 6)].concat();
    let f = store_with(&runs);
    assert!(!ok(&f, &["compare", "base", "up3"]).contains("runs needed"));
}

#[test]
fn single_runs_and_few_runs_get_no_verdict() {
    let runs = [
        reps("a", "one", 100.0, 1),
        reps("b", "two", 150.0, 3),
        reps("c", "three", 150.0, 3),
    ]
    .concat();
    let f = store_with(&runs);
    let text = ok(&f, &["compare", "one", "two"]);
    assert!(text.contains("×1.50 single run"), "{text}");
    assert!(text.contains("too few runs for a verdict"), "{text}");
    let v = compare_json(&f, &["two", "three"]);
    assert_eq!(cell(&v, "events_per_s", 1)["verdict"], "too_few_runs");
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "few_runs")
    );
}

#[test]
fn sides_resolve_from_labels_ids_and_files_and_say_when_ambiguous() {
    let mut runs = reps("d00d", "base", 100.0, 2);
    runs.extend(reps("beef", "other", 120.0, 2));
    // A label that is also the start of a run id.
    runs.push(derived("cafe0123456789abcdef0123456789ab", "cafe", 110.0));
    runs.push(derived("cafe9876543210fedcba9876543210fe", "x", 110.0));
    let f = store_with(&runs);
    // Run ids (prefixes) and labels mix.
    let v = compare_json(&f, &["base", "beef01"]);
    assert_eq!(v["sides"][1]["runs"], 1);
    assert!(
        v["sides"][1]["name"]
            .as_str()
            .unwrap()
            .starts_with("other beef01")
    );
    fails(
        &f,
        &["compare", "base", "cafe"],
        &["both a label", "label:cafe", "id:cafe"],
    );
    let v = compare_json(&f, &["base", "label:cafe"]);
    assert_eq!(v["sides"][1]["name"], "cafe");
    fails(&f, &["compare", "base", "id:cafe"], &["matches 2 runs"]);
    let v = compare_json(&f, &["base", "id:cafe9"]);
    assert_eq!(v["sides"][1]["runs"], 1);
    // An export file is a side; its runs share a label, so that names it.
    let export = f.dir.join("other.json");
    ok(
        &f,
        &[
            "results",
            "export",
            "--label",
            "other",
            "-o",
            export.to_str().unwrap(),
        ],
    );
    let v = compare_json(&f, &["base", "other.json"]);
    assert_eq!(v["sides"][1]["name"], "other");
    assert_eq!(v["sides"][1]["runs"], 2);
    // A single `--format json` result is a side too, even with no store at all.
    let single = f.dir.join("single.json");
    std::fs::write(
        &single,
        serde_json::to_string(&derived("f00f00f00f00", "solo", 90.0)).unwrap(),
    )
    .unwrap();
    let nostore = f.dir.join("none.db");
    let out = hb_with_store(&nostore)
        .current_dir(&f.dir)
        .args([
            "compare",
            "--format",
            "json",
            "file:other.json",
            "single.json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!nostore.exists(), "compare created a store");
    // A file named like a label.
    std::fs::write(f.dir.join("base"), "[]").unwrap();
    fails(
        &f,
        &["compare", "base", "other"],
        &["both a file", "file:base", "label:base"],
    );
    let v = compare_json(&f, &["label:base", "other"]);
    assert_eq!(v["sides"][0]["runs"], 2);
    // Unknown words, empty files, files that are not results.
    fails(
        &f,
        &["compare", "label:base", "nosuchthing"],
        &["'nosuchthing' is not a file, a label or a run id"],
    );
    fails(
        &f,
        &["compare", "label:base", "file:base"],
        &["has no runs"],
    );
    std::fs::write(f.dir.join("junk.txt"), "not json").unwrap();
    fails(&f, &["compare", "label:base", "junk.txt"], &["junk.txt"]);
    // clap's usage errors: exit 2, one line in hostbench's one style, the error first.
    let (code, _, err) = hbf(
        &f,
        &["compare", "label:base", "other", "--threshold", "abc"],
    );
    assert_eq!(code, 2);
    assert!(
        err.starts_with("hostbench: error: invalid value 'abc' for '--threshold"),
        "{err}"
    );
    assert!(
        err.trim_end().ends_with("(see `hostbench compare --help`)"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    fails(
        &f,
        &["compare", "label:base", "other", "--workload", "stream"],
        &["no run of workload 'stream'"],
    );
    let (code, _, _) = hbf(&f, &["compare", "base"]);
    assert_eq!(code, 2, "one side is a usage error");
}

#[test]
fn differing_params_and_hosts_are_listed_and_warned() {
    let mut a = reps("a", "a", 100.0, 4);
    let mut b = reps("b", "b", 100.0, 4);
    // b also ran cpu with another max_prime, and on a host with another clocksource.
    let mut other = derived("bb99aaaaaaaaaaaaaaaa", "b", 50.0);
    other["workload"]["params"]["max_prime"] = json!(99999);
    b.push(other);
    for r in b.iter_mut() {
        if r["host"].is_object() {
            r["host"]["clocksource"]["current"] = json!("xen");
            r["host"]["virtualization"] = json!("xen");
        }
        r["clock"]["read_cost_ns"] = json!(500.0);
        r["tool"]["version"] = json!("0.0.9");
    }
    for r in a.iter_mut() {
        if r["host"].is_object() {
            r["host"]["clocksource"]["current"] = json!("tsc");
            r["host"]["virtualization"] = Value::Null;
        }
        r["clock"]["read_cost_ns"] = json!(20.0);
    }
    let f = store_with(&[a, b].concat());
    let v = compare_json(&f, &["a", "b"]);
    let kinds: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    for k in ["timer_cost", "tool_version", "params"] {
        assert!(kinds.contains(&k), "{k} not in {kinds:?}");
    }
    if template()["host"].is_object() {
        assert!(
            kinds.contains(&"clocksource") && kinds.contains(&"virtualization"),
            "{kinds:?}"
        );
    }
    let not: Vec<&Value> = v["variants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["compared"] == false)
        .collect();
    assert_eq!(not.len(), 1);
    assert!(
        not[0]["label"]
            .as_str()
            .unwrap()
            .contains("max_prime=99999")
    );
    assert!(
        not[0]["reason"]
            .as_str()
            .unwrap()
            .contains("not run on the baseline")
    );
    let text = ok(&f, &["compare", "a", "b"]);
    assert!(
        text.contains("not compared:") && text.contains("warnings:"),
        "{text}"
    );
}

fn report(f: &Fixture, args: &[&str]) -> String {
    let out = f.dir.join("report.html");
    let mut a = vec!["report", "-o", out.to_str().unwrap()];
    a.extend_from_slice(args);
    let (code, stdout, err) = hbf(f, &a);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.is_empty(), "the report goes to the file: {stdout}");
    assert!(err.contains("wrote "), "{err}");
    std::fs::read_to_string(out).unwrap()
}

/// Every `src`/`href`-like attribute stays inside the document.
fn assert_self_contained(html: &str) {
    let doc = scraper::Html::parse_document(html);
    assert!(doc.errors.is_empty(), "HTML parse errors: {:?}", doc.errors);
    let all = scraper::Selector::parse("*").unwrap();
    for el in doc.select(&all) {
        for (name, value) in el.value().attrs() {
            if [
                "src",
                "href",
                "xlink:href",
                "srcset",
                "action",
                "data",
                "poster",
            ]
            .contains(&name)
            {
                assert!(value.starts_with('#'), "external reference {name}={value}");
            }
        }
    }
    for needle in [
        "http://",
        "https://",
        "url(",
        "@import",
        "<script src",
        "<link",
        "<img",
    ] {
        assert!(!html.contains(needle), "{needle} in the report");
    }
}

fn svg_count(html: &str) -> usize {
    let doc = scraper::Html::parse_document(html);
    doc.select(&scraper::Selector::parse("svg").unwrap())
        .count()
}

#[test]
fn report_is_one_self_contained_file_with_charts() {
    let evil = "<b>evil</b> & \"co\"";
    let runs = [reps("a", "base", 1000.0, 6), reps("b", evil, 1500.0, 6)].concat();
    let f = store_with(&runs);
    let html = report(&f, &["base", &format!("label:{evil}")]);
    assert_self_contained(&html);
    assert!(html.contains("&lt;b&gt;evil&lt;/b&gt; &amp; &quot;co&quot;"));
    assert!(!html.contains("<b>evil</b>"));
    // Two figure bars, the latency curves from the histograms, the interval timeline.
    assert_eq!(svg_count(&html), 4, "{html}");
    assert!(html.contains("Latency by percentile") && html.contains("per interval"));
    assert!(html.contains("v-faster"));
    assert!(html.contains("hostbench run cpu --set max_prime=2000"));
    // One side works, and `-o -` prints it.
    let one = ok(&f, &["report", "base", "-o", "-"]);
    assert!(one.starts_with("<!DOCTYPE html>"));
    assert_self_contained(&one);
    assert!(svg_count(&one) >= 3);
    let (code, _, err) = hbf(&f, &["report", "base", "-o", "/nonexistent-dir/x.html"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot write"), "{err}");
}

pub(crate) fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|b| {
            std::env::var_os("PATH")?
                .to_str()?
                .split(':')
                .map(|d| Path::new(d).join(b))
                .find(|p| p.is_file())
        })
}

#[test]
fn report_renders_in_headless_chromium() {
    let required = std::env::var_os("HOSTBENCH_TEST_CHROMIUM").is_some_and(|v| v != "0");
    let Some(browser) = chromium() else {
        assert!(
            !required,
            "HOSTBENCH_TEST_CHROMIUM is set but no chromium is on PATH"
        );
        eprintln!("skipped: no chromium on PATH (.ci/run installs it)");
        return;
    };
    let runs = [reps("a", "base", 1000.0, 6), reps("b", "new", 1500.0, 6)].concat();
    let f = store_with(&runs);
    let html = report(&f, &["base", "new"]);
    let page = f.dir.join("report.html");
    let profile = f.dir.join("chromium-profile");
    let common = |cmd: &mut std::process::Command| {
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()));
    };
    let mut cmd = std::process::Command::new(&browser);
    common(&mut cmd);
    let out = cmd
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium starts");
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {log}");
    for bad in ["Uncaught", "SyntaxError", "ReferenceError", "TypeError"] {
        assert!(!log.contains(bad), "script error in the report: {log}");
    }
    let doc = scraper::Html::parse_document(&dom);
    let svgs: Vec<_> = doc
        .select(&scraper::Selector::parse("svg").unwrap())
        .collect();
    assert_eq!(
        svgs.len(),
        svg_count(&html),
        "every chart made it into the DOM"
    );
    let marks = scraper::Selector::parse("rect.bar, path.ln").unwrap();
    for s in &svgs {
        let n = s
            .select(&marks)
            .filter(|m| {
                let v = m.value();
                v.attr("d")
                    .is_some_and(|d| d.contains('L') || d.contains('l'))
                    || v.attr("width")
                        .and_then(|w| w.parse::<f64>().ok())
                        .is_some_and(|w| w > 0.0)
            })
            .count();
        assert!(n > 0, "empty chart in the rendered DOM: {}", s.html());
    }
    // And it paints: a screenshot of a phone-sized viewport is a real PNG.
    let shot = f.dir.join("shot.png");
    let mut cmd = std::process::Command::new(&browser);
    common(&mut cmd);
    let out = cmd
        .arg("--window-size=412,2000")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
}

#[test]
fn sysinfo_describes_the_directory_under_test() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let (out, _) = run_ok(&["sysinfo", "--dir", d]);
    assert!(out.contains(&format!("dir             {d}")), "{out}");
    assert!(
        out.contains("  filesystem    ") && out.contains("timer           "),
        "{out}"
    );
    let (json_out, _) = run_ok(&["sysinfo", "--format", "json", "--dir", d]);
    let host: Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(host["dirs"][0]["path"], d);
    if Path::new("/proc/self/mountinfo").exists() {
        assert!(host["dirs"][0]["filesystem"].is_string(), "{host}");
        assert!(host["dirs"][0]["mount_point"].is_string(), "{host}");
    }
    // A result carrying this host (directories included) is valid against the schema.
    let mut r = template().clone();
    r["host"] = host;
    assert_valid(&r, "a result with dirs");
    let mut bad = r.clone();
    bad["host"]["dirs"][0]["rotational"] = json!("yes");
    assert!(!violations(&bad).is_empty(), "the schema checks dirs");
    let mut cloud = r.clone();
    cloud["host"]["cloud"] = json!({"provider": "aws", "instance_type": "c7g.large"});
    assert_valid(&cloud, "a result with a cloud");
    // A directory that is not there is a usage error.
    let out = hb()
        .args(["sysinfo", "--dir", "/nonexistent/hostbench-test"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--dir /nonexistent/hostbench-test"), "{err}");
}

/// A run as hostbench stored it before figures had labels (result schema 1.1).
fn unlabelled(mut v: Value) -> Value {
    v["schema_minor"] = json!(1);
    for f in v["figures"].as_array_mut().unwrap() {
        f.as_object_mut().unwrap().remove("label");
    }
    v
}

#[test]
fn figures_read_as_words_with_units_and_old_runs_by_name() {
    let new = [reps("a", "base", 1000.0, 3), reps("b", "double", 2000.0, 3)].concat();
    assert_eq!(new[0]["figures"][0]["label"], "event rate", "{}", new[0]);
    let old: Vec<Value> = [reps("c", "old", 1000.0, 3), reps("d", "older", 2000.0, 3)]
        .concat()
        .into_iter()
        .map(unlabelled)
        .collect();
    let f = store_with(&[new, old].concat());

    // What people read: the label beside the unit; the identifier stays in JSON and CSV.
    let text = ok(&f, &["compare", "base", "double"]);
    let row = |t: &str, what: &str| {
        t.lines()
            .find(|l| l.starts_with("cpu") && l.contains(what))
            .unwrap_or_else(|| panic!("no {what} row: {t}"))
            .to_string()
    };
    assert!(row(&text, "event rate").contains("events/s"), "{text}");
    assert!(
        !text.contains("events_per_s") && !text.contains("latency_avg"),
        "{text}"
    );
    row(&text, "mean latency");
    let md = ok(&f, &["compare", "base", "double", "-f", "markdown"]);
    assert!(md.contains("| event rate | events/s |"), "{md}");
    let v = compare_json(&f, &["base", "double"]);
    assert_eq!(v["rows"][0]["figure"], "events_per_s");
    assert_eq!(v["rows"][0]["label"], "event rate");
    let csv = ok(&f, &["compare", "base", "double", "-f", "csv"]);
    assert!(csv.contains(",events_per_s,events/s,"), "{csv}");
    let html = report(&f, &["base", "double"]);
    assert!(html.contains("event rate, events/s"), "{html}");
    assert!(
        html.contains("event rate, events/s (higher is better)"),
        "{html}"
    );

    // Runs stored before labels still load and compare, shown by name; beside a labelled
    // run, the row takes the label.
    let text = ok(&f, &["compare", "old", "older"]);
    assert!(row(&text, "events_per_s").contains("×2.00"), "{text}");
    let v = compare_json(&f, &["old", "older"]);
    assert_eq!(v["rows"][0]["figure"], "events_per_s");
    assert!(v["rows"][0].get("label").is_none(), "{}", v["rows"][0]);
    let text = ok(&f, &["compare", "old", "double"]);
    assert!(row(&text, "event rate").contains("×2.00"), "{text}");
    let id = format!("{:a<32}", format!("c{:02}", 0));
    let (code, shown, err) = hbf(&f, &["results", "show", &id]);
    assert_eq!(code, 0, "{err}");
    assert!(shown.contains("cpu"), "{shown}");
}

#[test]
fn a_side_compared_with_itself_is_warned() {
    // `compare base base` once printed a verdict and an interval without a word.
    let runs = [reps("a", "base", 1000.0, 4), reps("b", "other", 1100.0, 4)].concat();
    let f = store_with(&runs);
    let v = compare_json(&f, &["base", "base"]);
    let same: Vec<&Value> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "same_runs")
        .collect();
    assert_eq!(same.len(), 1, "{}", v["warnings"]);
    assert!(
        same[0]["message"]
            .as_str()
            .unwrap()
            .contains("share 4 run(s) (they are the same runs)"),
        "{}",
        same[0]
    );
    let v = compare_json(&f, &["base", "other"]);
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["kind"] != "same_runs"),
        "{}",
        v["warnings"]
    );
}
