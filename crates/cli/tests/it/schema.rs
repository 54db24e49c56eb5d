//! Every JSON result the binary prints validates against the checked-in schema
//! (`schemas/result.v1.json`), and a few invariants the schema cannot express hold.
//!
//! The runs are short (a few tenths of a second each) and use small workload parameters, so
//! the whole file takes a few seconds.

use crate::common;
use crate::common::{SCHEMA_PATH, assert_valid, schema, validator, violations};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Runs the binary, checks its exit code and returns its stdout parsed as JSON.
fn hostbench_json(args: &[&str], expected_code: i32) -> Value {
    let out = common::hb().args(args).output().expect("hostbench starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(expected_code),
        "hostbench {}: unexpected exit status\nstdout:\n{stdout}\nstderr:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "hostbench {}: stdout is not one JSON document ({e}):\n{stdout}",
            args.join(" ")
        )
    })
}

/// Runs one benchmark with JSON output and checks the result against the schema and the
/// invariants of [`check_semantics`].
fn run_result(args: &[&str], expected_code: i32) -> Value {
    let r = hostbench_json(args, expected_code);
    let what = format!("hostbench {}", args.join(" "));
    assert_valid(&r, &what);
    check_semantics(&r, &what);
    let typed: Vec<&str> = r["config"]["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(typed, args, "{what}: config.command_line");
    r
}

fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{v} is not an unsigned integer"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Invariants of a latency block (`latency` or an interval's `latency`); `avg` is the
/// `avg_ns` field where there is one.
fn check_latency(l: &Value, avg: Option<u64>, percentiles: &[f64], what: &str) {
    let (count, min, max, sum) = (
        u(&l["count"]),
        u(&l["min_ns"]),
        u(&l["max_ns"]),
        u(&l["sum_ns"]),
    );
    let ps: Vec<(f64, u64)> = l["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (f(&p["p"]), u(&p["ns"])))
        .collect();
    let requested: Vec<f64> = ps.iter().map(|p| p.0).collect();
    assert_eq!(
        requested, percentiles,
        "{what}: percentiles differ from config.percentiles"
    );
    if count == 0 {
        assert_eq!((min, max, sum), (0, 0, 0), "{what}: empty latency block");
        assert!(ps.iter().all(|p| p.1 == 0), "{what}: empty percentiles");
        if let Some(avg) = avg {
            assert_eq!(avg, 0, "{what}: avg_ns of nothing");
        }
        return;
    }
    assert!(min <= max, "{what}: min_ns {min} > max_ns {max}");
    assert!(
        sum >= min.saturating_mul(count) && sum <= max.saturating_mul(count),
        "{what}: sum_ns {sum} outside count × [min, max]"
    );
    if let Some(avg) = avg {
        assert!(
            min <= avg && avg <= max,
            "{what}: min_ns {min} ≤ avg_ns {avg} ≤ max_ns {max} does not hold"
        );
        assert_eq!(avg, sum / count, "{what}: avg_ns is not sum_ns / count");
    }
    let mut sorted = ps.clone();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    for w in sorted.windows(2) {
        assert!(
            w[0].1 <= w[1].1,
            "{what}: percentiles decrease: p{} = {} ns > p{} = {} ns",
            w[0].0,
            w[0].1,
            w[1].0,
            w[1].1
        );
    }
    for (p, ns) in ps {
        assert!(
            min <= ns && ns <= max,
            "{what}: p{p} = {ns} ns outside [{min}, {max}]"
        );
    }
}

/// What the schema cannot say: totals agree with each other, latencies are ordered.
fn check_semantics(r: &Value, what: &str) {
    assert_eq!(r["schema"], "hostbench.result", "{what}");
    assert_eq!(r["schema_version"], 1, "{what}");
    assert_eq!(r["schema_minor"], 16, "{what}");
    // Schema 1.2: every figure says in words what it is (its name stays the key).
    for fig in r["figures"].as_array().into_iter().flatten() {
        let label = fig["label"].as_str().unwrap_or_default();
        assert!(
            !label.is_empty() && label != fig["name"],
            "{what}: figure {} has no label in words: {fig}",
            fig["name"]
        );
    }
    assert_eq!(r["tool"]["name"], "hostbench", "{what}");
    assert_eq!(r["tool"]["version"], env!("CARGO_PKG_VERSION"), "{what}");

    let config = &r["config"];
    let threads = u(&config["threads"]);
    let percentiles: Vec<f64> = config["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(f)
        .collect();

    // Totals.
    let events = u(&r["metrics"]["events"]);
    let per_thread = r["fairness"]["per_thread"].as_array().unwrap();
    assert_eq!(
        per_thread.len() as u64,
        threads,
        "{what}: one fairness.per_thread entry per thread"
    );
    let thread_events: u64 = per_thread.iter().map(|t| u(&t["events"])).sum();
    assert_eq!(
        events, thread_events,
        "{what}: metrics.events is not the sum of per-thread events"
    );
    let latency = &r["latency"];
    assert_eq!(
        u(&latency["count"]),
        events,
        "{what}: latency.count != metrics.events"
    );
    let thread_sum: u64 = per_thread.iter().map(|t| u(&t["latency_sum_ns"])).sum();
    assert_eq!(
        u(&latency["sum_ns"]),
        thread_sum,
        "{what}: latency.sum_ns is not the sum of per-thread latency_sum_ns"
    );
    check_latency(
        latency,
        Some(u(&latency["avg_ns"])),
        &percentiles,
        &format!("{what}: latency"),
    );
    if events == 0 {
        assert_eq!(
            f(&latency["stddev_ns"]),
            0.0,
            "{what}: stddev_ns of nothing"
        );
    }

    // Rates (no checkpoints in these runs, so the denominator is the measured time).
    let duration = f(&r["metrics"]["duration_s"]);
    let rate = f(&r["metrics"]["events_per_s"]);
    if duration > 0.0 {
        assert!(
            close(rate, events as f64 / duration),
            "{what}: events_per_s {rate} != events / duration_s"
        );
    }
    assert!(
        close(
            f(&r["fairness"]["events_avg"]),
            events as f64 / threads as f64
        ),
        "{what}: fairness.events_avg != events / threads"
    );
    let names =
        |m: &Value| -> BTreeSet<String> { m.as_object().unwrap().keys().cloned().collect() };
    assert_eq!(
        names(&r["metrics"]["counters"]),
        names(&r["metrics"]["counters_per_s"]),
        "{what}: counters and counters_per_s name different counters"
    );

    // Intervals.
    let open_loop = f(&config["rate_per_s"]) > 0.0;
    let intervals = r["intervals"].as_array().unwrap();
    let mut last_t = 0.0;
    let (mut interval_events, mut interval_timed) = (0, 0);
    for (i, iv) in intervals.iter().enumerate() {
        let w = format!("{what}: intervals[{i}]");
        let t = f(&iv["t_s"]);
        assert!(t > last_t, "{w}: t_s {t} does not increase");
        last_t = t;
        assert!(
            u(&iv["threads"]) <= threads,
            "{w}: more threads than config"
        );
        let (ev, el) = (u(&iv["events"]), f(&iv["elapsed_s"]));
        if el > 0.0 {
            assert!(
                close(f(&iv["events_per_s"]), ev as f64 / el),
                "{w}: events_per_s != events / elapsed_s"
            );
        }
        interval_events += ev;
        interval_timed += u(&iv["latency"]["count"]);
        check_latency(&iv["latency"], None, &percentiles, &w);
        assert_eq!(
            iv["queue_len"].is_null(),
            iv["concurrency"].is_null(),
            "{w}: queue_len and concurrency come together"
        );
        if !open_loop {
            assert!(iv["queue_len"].is_null(), "{w}: queue_len without --rate");
        }
    }
    assert!(
        interval_events <= events,
        "{what}: intervals count more events than the run"
    );
    assert!(
        interval_timed <= events,
        "{what}: intervals time more events than the run"
    );

    // Outcome.
    let stop = r["outcome"]["stop_reason"].as_str().unwrap();
    let partial = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "partial");
    let cut_short = matches!(stop, "interrupted" | "forced_shutdown");
    assert_eq!(
        partial, cut_short,
        "{what}: a `partial` warning goes with stop_reason {stop}"
    );
    if !cut_short {
        assert_eq!(u(&r["outcome"]["unfinished_events"]), 0, "{what}");
    }
    assert_eq!(
        r["outcome"]["error"].is_null(),
        stop != "error",
        "{what}: outcome.error goes with stop_reason error"
    );
}

#[test]
fn schema_is_a_valid_draft_2020_12_schema() {
    let s = schema();
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert!(s["$id"].is_string() && s["title"].is_string());
    if let Err(e) = jsonschema::meta::validate(s) {
        panic!(
            "{SCHEMA_PATH} is not a valid schema: {e} at {}",
            e.instance_path()
        );
    }
    // Every property of every object schema says what it is.
    fn walk(node: &Value, path: &str, missing: &mut Vec<String>) {
        match node {
            Value::Object(m) => {
                if let Some(Value::Object(props)) = m.get("properties") {
                    for (name, p) in props {
                        if !p.get("description").is_some_and(Value::is_string) {
                            missing.push(format!("{path}/properties/{name}"));
                        }
                    }
                }
                // `if` conditions test values; they define no properties.
                for (k, v) in m.iter().filter(|(k, _)| *k != "if") {
                    walk(v, &format!("{path}/{k}"), missing);
                }
            }
            Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    walk(v, &format!("{path}/{i}"), missing);
                }
            }
            _ => {}
        }
    }
    let mut missing = Vec::new();
    walk(s, "#", &mut missing);
    assert!(missing.is_empty(), "no description: {missing:#?}");
}

#[test]
fn every_listed_workload_emits_a_valid_result() {
    let list = hostbench_json(&["list", "--json"], 0);
    let workloads = list.as_array().expect("list --json is an array");
    assert!(!workloads.is_empty());
    // Disk workloads write only into a directory of this test.
    let scratch = tempfile::tempdir().unwrap();
    let dir_set = format!("dir={}", scratch.path().display());
    for w in workloads {
        let id = w["id"].as_str().unwrap();
        let mut args = vec!["run", id, "--time", "0.3s", "-t", "2", "-i", "0.1s"];
        // The small parameters the workload declares, so every run stays short.
        let small: Vec<String> = hostbench_workloads::find(id)
            .unwrap_or_else(|| panic!("{id} is listed but not registered"))
            .small_params()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        for kv in &small {
            args.extend_from_slice(&["--set", kv]);
        }
        if w["category"] == "disk" {
            args.extend_from_slice(&["--set", &dir_set]);
        }
        // Database workloads run on an SQLite file of their own, prepared first through
        // the sysbench grammar (crates/cli/tests/it/db/ covers the servers).
        let db_set: Vec<String>;
        if w["category"] == "db" {
            let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
                .join(format!("schema-db-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let url = format!("sqlite:{}", dir.join(format!("{id}.db")).display());
            db_set = vec![format!("db_url={url}")];
            if let Some(test) = id.strip_prefix("db.").filter(|t| *t != "insert_race") {
                // Prepared with the run's small parameters, as sysbench options.
                let wl = hostbench_workloads::find(id).unwrap();
                let mut prepare = vec![
                    test.to_string(),
                    format!("--db-url={url}"),
                    "--threads=2".to_string(),
                ];
                for (k, v) in wl.small_params() {
                    let spec = wl.params().iter().find(|p| p.name == *k).unwrap();
                    prepare.push(format!("--{}={v}", spec.sysbench.unwrap_or(k)));
                }
                prepare.push("prepare".into());
                let out = common::hb().args(&prepare).output().unwrap();
                assert!(out.status.success(), "{test} prepare: {out:?}");
            }
            for s in &db_set {
                args.extend_from_slice(&["--set", s]);
            }
        }
        args.extend_from_slice(&["-f", "json"]);
        let r = run_result(&args, 0);
        let what = format!("workload {id}");
        assert_eq!(r["workload"]["id"], id, "{what}");
        assert_eq!(r["workload"]["category"], w["category"], "{what}");
        assert_eq!(r["config"]["grammar"], "native", "{what}");
        assert_eq!(r["config"]["threads"], 2, "{what}");

        // The result carries every listed parameter, typed after its kind.
        let params = r["workload"]["params"].as_object().unwrap();
        let listed = w["params"].as_array().unwrap();
        let listed_names: BTreeSet<&str> =
            listed.iter().map(|p| p["name"].as_str().unwrap()).collect();
        let result_names: BTreeSet<&str> = params.keys().map(String::as_str).collect();
        assert_eq!(listed_names, result_names, "{what}: workload.params names");
        for p in listed {
            let (name, kind) = (p["name"].as_str().unwrap(), p["kind"].as_str().unwrap());
            let v = &params[name];
            let ok = if kind.starts_with("int ") || kind == "size" {
                v.is_i64()
            } else if kind.starts_with("number ") || kind == "seconds" {
                v.is_number()
            } else if kind == "bool" {
                v.is_boolean()
            } else if kind == "text" {
                v.is_string()
            } else {
                // A choice: `a|b|c`.
                v.as_str().is_some_and(|s| kind.split('|').any(|c| c == s))
            };
            assert!(ok, "{what}: parameter {name} ({kind}) = {v}");
        }
    }
}

#[test]
fn native_cpu_records_its_parameters() {
    let r = run_result(
        &[
            "run",
            "cpu",
            "--set",
            "max_prime=1000",
            "-n",
            "50",
            "--time",
            "0",
            "-f",
            "json",
        ],
        0,
    );
    assert_eq!(r["workload"]["params"]["max_prime"], 1000);
    assert!(r["workload"]["params"]["max_prime"].is_u64());
    assert_eq!(r["workload"]["category"], "cpu");
    assert_eq!(r["outcome"]["stop_reason"], "event_limit");
    assert_eq!(r["metrics"]["events"], 50);
    assert_eq!(r["config"]["percentiles"], json!([50.0, 95.0, 99.0, 99.9]));
    assert!(
        r["workload"]["facts"]["divisions_per_event"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

#[test]
fn sysbench_cpu_with_interval_reports() {
    let r = run_result(
        &[
            "cpu",
            "--cpu-max-prime=1000",
            "--report-interval=0.1",
            "--time=0.4",
            "--format=json",
            "run",
        ],
        0,
    );
    assert_eq!(r["config"]["grammar"], "sysbench");
    assert_eq!(r["workload"]["params"]["max_prime"], 1000);
    assert_eq!(r["outcome"]["stop_reason"], "time_limit");
    assert_eq!(r["config"]["time_limit_s"], 0.4);
    assert_eq!(r["config"]["report_interval_s"], 0.1);
    assert_eq!(r["config"]["percentiles"], json!([95.0]));
    assert_eq!(r["config"]["rand"]["type"], "special");
    let intervals = r["intervals"].as_array().unwrap();
    assert!(
        intervals.len() >= 2,
        "expected interval reports: {intervals:?}"
    );
    assert!(
        intervals
            .iter()
            .all(|i| i["queue_len"].is_null() && i["concurrency"].is_null())
    );
}

#[test]
fn sysbench_open_loop_reports_queue_and_concurrency() {
    let r = run_result(
        &[
            "cpu",
            "--cpu-max-prime=1000",
            "--rate=200",
            "--report-interval=0.1",
            "--time=0.4",
            "--format=json",
            "run",
        ],
        0,
    );
    assert_eq!(r["config"]["rate_per_s"], 200.0);
    let intervals = r["intervals"].as_array().unwrap();
    assert!(!intervals.is_empty());
    for i in intervals {
        assert!(i["queue_len"].is_u64(), "queue_len: {i}");
        assert!(i["concurrency"].is_u64(), "concurrency: {i}");
    }
}

#[test]
fn sysbench_event_limit() {
    let r = run_result(
        &[
            "cpu",
            "--cpu-max-prime=1000",
            "--events=100",
            "--time=0",
            "--threads=2",
            "--format=json",
            "run",
        ],
        0,
    );
    assert_eq!(r["outcome"]["stop_reason"], "event_limit");
    assert_eq!(r["config"]["event_limit"], 100);
    assert_eq!(r["config"]["time_limit_s"], 0.0);
    assert_eq!(r["metrics"]["events"], 100);
    assert_eq!(r["latency"]["count"], 100);
}

#[test]
fn forced_shutdown_still_prints_a_valid_result() {
    let r = run_result(
        &[
            "mutex",
            "--threads=2",
            "--mutex-locks=100000000",
            "--time=0.2",
            "--forced-shutdown=0.1",
            "--format=json",
            "run",
        ],
        2,
    );
    assert_eq!(r["outcome"]["stop_reason"], "forced_shutdown");
    assert_eq!(r["outcome"]["unfinished_events"], 2);
    let kinds: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"partial"), "warnings: {kinds:?}");
}

#[test]
fn sysbench_checkpoints_keep_stdout_one_valid_document() {
    // Checkpoint reports are sysbench text; with --format=json stdout must stay one result.
    // (Only the schema is checked: after a checkpoint the totals cover the last segment
    // while duration_s counts from the measurement start, so events_per_s is not
    // events / duration_s.)
    let args = [
        "cpu",
        "--cpu-max-prime=1000",
        "--time=0.3",
        "--report-checkpoints=0.1",
        "--format=json",
        "run",
    ];
    let r = hostbench_json(&args, 0);
    assert_valid(&r, &args.join(" "));
    assert_eq!(r["outcome"]["stop_reason"], "time_limit");
}

#[test]
fn every_distribution_serializes_with_its_fields() {
    let fields: [(&str, &[&str]); 5] = [
        ("uniform", &[]),
        ("gaussian", &["iter"]),
        ("special", &["iter", "pct", "res"]),
        ("pareto", &["h"]),
        ("zipfian", &["exp"]),
    ];
    for (name, keys) in fields {
        let r = run_result(
            &[
                "run",
                "null",
                "-n",
                "20",
                "--time",
                "0",
                "--rand-type",
                name,
                "-f",
                "json",
            ],
            0,
        );
        let rand = r["config"]["rand"].as_object().unwrap();
        let mut want: BTreeSet<&str> = keys.iter().copied().collect();
        want.insert("type");
        let got: BTreeSet<&str> = rand.keys().map(String::as_str).collect();
        assert_eq!(got, want, "--rand-type {name}");
        assert_eq!(rand["type"], name);
    }
}

/// Sets the value at JSON pointer `ptr`, adding the member if its object lacks it.
fn set(v: &mut Value, ptr: &str, x: Value) {
    if let Some(slot) = v.pointer_mut(ptr) {
        *slot = x;
        return;
    }
    let (parent, key) = ptr.rsplit_once('/').unwrap();
    v.pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("no object at {parent:?} in the result"))
        .insert(key.to_string(), x);
}

/// Removes the member at JSON pointer `ptr`.
fn remove(v: &mut Value, ptr: &str) {
    let (parent, key) = ptr.rsplit_once('/').unwrap();
    v.pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .and_then(|o| o.remove(key))
        .unwrap_or_else(|| panic!("no {ptr} in the result"));
}

#[test]
fn schema_rejects_what_serde_would_not_write() {
    let good = hostbench_json(
        &[
            "run",
            "cpu",
            "--set",
            "max_prime=100",
            "-n",
            "20",
            "--time",
            "0",
            "-f",
            "json",
        ],
        0,
    );
    assert_valid(&good, "unmodified result");

    type Edit = fn(&mut Value);
    let bad: &[(&str, &str, Edit)] = &[
        ("metrics.events is a string", "/metrics/events", |v| {
            set(v, "/metrics/events", json!("x"))
        }),
        ("metrics.events is negative", "/metrics/events", |v| {
            set(v, "/metrics/events", json!(-1))
        }),
        ("metrics.events is fractional", "/metrics/events", |v| {
            set(v, "/metrics/events", json!(1.5))
        }),
        ("latency is missing", "", |v| remove(v, "/latency")),
        (
            "latency.percentiles[0].ns is missing",
            "/latency/percentiles/0",
            |v| remove(v, "/latency/percentiles/0/ns"),
        ),
        ("an unknown top-level field", "", |v| {
            set(v, "/extra", json!(1))
        }),
        ("an unknown field in metrics", "/metrics", |v| {
            set(v, "/metrics/events_per_min", json!(1.0))
        }),
        ("schema_version 2", "/schema_version", |v| {
            set(v, "/schema_version", json!(2))
        }),
        ("schema_minor negative", "/schema_minor", |v| {
            set(v, "/schema_minor", json!(-1))
        }),
        ("a layout of an unknown grammar", "/config/layout", |v| {
            set(v, "/config/layout", json!({"grammar": "wrk"}))
        }),
        (
            "a layout option of another grammar",
            "/config/layout",
            |v| {
                set(
                    v,
                    "/config/layout",
                    json!({"grammar": "sysbench", "histogram": true, "hog": true}),
                )
            },
        ),
        ("a fio section without blocks", "/fio", |v| {
            set(
                v,
                "/fio",
                json!({"pid": 1, "global_options": [], "jobs": [], "disks": []}),
            )
        }),
        ("another schema id", "/schema", |v| {
            set(v, "/schema", json!("hostbench.results"))
        }),
        ("an unknown stop_reason", "/outcome/stop_reason", |v| {
            set(v, "/outcome/stop_reason", json!("TimeLimit"))
        }),
        ("an unknown category", "/workload/category", |v| {
            set(v, "/workload/category", json!("gpu"))
        }),
        ("an unknown clock source", "/clock/source", |v| {
            set(v, "/clock/source", json!("hpet"))
        }),
        ("a gaussian without iter", "/config/rand", |v| {
            set(v, "/config/rand", json!({"type": "gaussian"}))
        }),
        ("uniform with a stray field", "/config/rand", |v| {
            set(v, "/config/rand", json!({"type": "uniform", "h": 0.2}))
        }),
        ("an unknown distribution", "/config/rand/type", |v| {
            set(v, "/config/rand", json!({"type": "normal"}))
        }),
        ("an unknown warning kind", "/warnings/0/kind", |v| {
            set(v, "/warnings", json!([{"kind": "slow", "message": "m"}]))
        }),
        (
            "a parameter value that is an object",
            "/workload/params/max_prime",
            |v| set(v, "/workload/params/max_prime", json!({"v": 1})),
        ),
        ("an unknown counter", "/metrics/counters", |v| {
            set(v, "/metrics/counters", json!({"bogus": 1}))
        }),
        (
            "a fact that is a string",
            "/workload/facts/divisions_per_event",
            |v| set(v, "/workload/facts/divisions_per_event", json!("many")),
        ),
        ("label is a number", "/label", |v| {
            set(v, "/label", json!(7))
        }),
        ("started_at is not a timestamp", "/started_at", |v| {
            set(v, "/started_at", json!("yesterday"))
        }),
        (
            "hdr_histogram is not base64",
            "/latency/hdr_histogram",
            |v| set(v, "/latency/hdr_histogram", json!("not base64!")),
        ),
        ("a percentile above 100", "/latency/percentiles/0/p", |v| {
            set(v, "/latency/percentiles/0/p", json!(101.0))
        }),
        ("host.cpu.threads is missing", "/host/cpu", |v| {
            remove(v, "/host/cpu/threads")
        }),
        ("an interval without concurrency", "/intervals/0", |v| {
            let iv = json!({
                "t_s": 0.1, "elapsed_s": 0.1, "threads": 1, "events": 1, "events_per_s": 10.0,
                "counters_per_s": {}, "queue_len": null,
                "latency": {"count": 1, "min_ns": 1, "max_ns": 1, "sum_ns": 1, "percentiles": []}
            });
            set(v, "/intervals", json!([iv]))
        }),
    ];
    for (what, at, edit) in bad {
        let mut v = good.clone();
        edit(&mut v);
        assert!(!validator().is_valid(&v), "the schema accepts {what}");
        let errors = violations(&v);
        assert!(
            errors.iter().any(|(loc, _)| loc == at),
            "{what}: expected an error at {at:?}, got {errors:#?}"
        );
    }

    // Nullable fields take null as well as a value of their type.
    let fine: &[(&str, Value)] = &[
        ("/label", json!("box-a")),
        ("/host", Value::Null),
        ("/tool/git_hash", Value::Null),
        ("/outcome/error", json!("worker 0: boom")),
        ("/host/cpu/mhz_max", json!(3500.0)),
        ("/host/dmi", json!({"vendor": null, "product": "m5.large"})),
        (
            "/config/layout",
            json!({"grammar": "sysbench", "histogram": true}),
        ),
    ];
    for (ptr, x) in fine {
        let mut v = good.clone();
        set(&mut v, ptr, x.clone());
        assert_valid(&v, &format!("{ptr} = {x}"));
    }
}
