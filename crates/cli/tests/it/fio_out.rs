//! fio's outputs beyond the normal layout and JSON: terse lines (versions 2 to 5, with
//! `--minimal` and `--terse-version`), the percentile options (`percentile_list`,
//! `clat_percentiles`, `lat_percentiles`, `slat_percentiles`), `unified_rw_reporting` and
//! several formats at once, with `--output FILE`. Compared with the installed fio on the
//! same jobs, on what does not depend on speed: field counts, each field's kind and
//! position, which are filled, the percentile keys, block and direction names, the order
//! of the formats. Without fio the comparisons are skipped, unless `HOSTBENCH_TEST_FIO` is
//! set (then a missing fio fails them); the field counts fio 3.33 prints are checked
//! without it.

use super::fio::{json, redact, s, tmp};
use super::fio_seq::{fio, hb, need_fio};
use crate::common;
use crate::common::assert_valid;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// A null-engine random mix, quick and size-based.
const NULL_RW: &[&str] = &[
    "--name=a",
    "--ioengine=null",
    "--size=4m",
    "--rw=randrw",
    "--bs=4k",
];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

/// The kind of one terse field, with what must be equal between two runs of one job: the
/// text of a name, the percentile of a `P%=V` field; numbers only as integer, decimal or
/// percentage.
fn kind(f: &str) -> String {
    if let Some((p, _)) = f.split_once("%=") {
        return format!("pct {p}");
    }
    if let Some(x) = f.strip_suffix('%') {
        return if x.parse::<f64>().is_ok() || x.contains("nan") {
            "percent".into()
        } else {
            format!("text {f}")
        };
    }
    if f.parse::<u64>().is_ok() {
        "int".into()
    } else if f.contains('.') && f.parse::<f64>().is_ok() {
        "decimal".into()
    } else {
        format!("text {f}")
    }
}

/// Each terse line's fields.
fn terse_lines(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split(';').map(String::from).collect())
        .collect()
}

/// fio 3.33's terse field counts (measured with its `null` engine: no devices, no
/// description), by version and `unified_rw_reporting`.
#[test]
fn terse_lines_have_fios_field_counts() {
    let d = tmp("terse-count");
    for (u, counts) in [
        ("none", [161, 121, 162, 180]),
        ("mixed", [79, 80, 80, 86]),
        ("both", [202, 162, 203, 227]),
    ] {
        for (v, want) in (2..=5).zip(counts) {
            let ver = format!("--terse-version={v}");
            let uni = format!("--unified_rw_reporting={u}");
            let (out, _) = hb(&d, &with(NULL_RW, &["--minimal", &ver, &uni]));
            let lines = terse_lines(&out);
            assert_eq!(lines.len(), 1, "{u} v{v}:\n{out}");
            let f = &lines[0];
            assert_eq!(f.len(), want, "{u} v{v}:\n{out}");
            if v == 2 {
                assert_eq!(&f[..4], ["2", "a", "0", "0"]);
            } else {
                assert_eq!(f[0], v.to_string());
                assert!(f[1].starts_with("fio-3.33"), "{}", f[1]);
                assert_eq!(&f[2..5], ["a", "0", "0"]);
            }
        }
    }
    // terse, minimal and csv are one format; a description is one more field (version 2:
    // on a line of its own); the percentiles are the job's, sorted.
    let (a, _) = hb(&d, &with(NULL_RW, &["--output-format=csv"]));
    let (b, _) = hb(
        &d,
        &with(
            NULL_RW,
            &[
                "--output-format=terse",
                "--description=first try",
                "--percentile_list=99.9:50",
            ],
        ),
    );
    let (a, b) = (&terse_lines(&a)[0], &terse_lines(&b)[0]);
    assert_eq!((a.len(), b.len()), (121, 122));
    assert_eq!(b[121], "first try");
    assert!(b[17].starts_with("50.000000%="), "{}", b[17]);
    assert!(b[18].starts_with("99.900000%="), "{}", b[18]);
    assert_eq!(b[19], "0%=0");
    let (c, _) = hb(
        &d,
        &with(
            NULL_RW,
            &["--minimal", "--terse-version=2", "--description=x"],
        ),
    );
    assert!(c.ends_with("\n;x\n"), "{c}");
    std::fs::remove_dir_all(d).unwrap();
}

/// The terse lines of the same jobs, field by field, as fio's: kinds and positions, the
/// names, the percentiles, the KiB done, which latencies are filled, the devices.
#[test]
fn terse_fields_match_fio() {
    if !need_fio("terse_fields_match_fio") {
        return;
    }
    let d = tmp("terse-fio");
    // Lay the file out once, for both (fio's and hostbench's layout lines aside).
    std::fs::write(d.join("f"), vec![7u8; 2 << 20]).unwrap();
    let file = &["--filename=f", "--size=2m", "--bs=4k"][..];
    let jobs: Vec<Vec<&str>> = vec![
        with(
            NULL_RW,
            &["--percentile_list=50:99.5:1", "--lat_percentiles=1"],
        ),
        with(NULL_RW, &["--clat_percentiles=0"]),
        with(
            NULL_RW,
            &["--unified_rw_reporting=both", "--description=mix"],
        ),
        with(
            &["--name=r", "--ioengine=psync", "--rw=read"],
            &[
                file,
                &[
                    "--name=w",
                    "--ioengine=libaio",
                    "--iodepth=4",
                    "--rw=randwrite",
                ],
                file,
            ]
            .concat(),
        ),
        with(
            &["--name=g", "--ioengine=null", "--size=1m", "--numjobs=2"],
            &[
                "--group_reporting",
                "--name=h",
                "--ioengine=null",
                "--size=1m",
                "--new_group",
            ],
        ),
        // group_reporting across two jobs: the description and unified_rw_reporting are
        // the first job's, the percentiles the last one's (fio's rule).
        vec![
            "--group_reporting",
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--rw=randrw",
            "--description=first",
            "--unified_rw_reporting=mixed",
            "--name=y",
            "--ioengine=null",
            "--size=1m",
            "--rw=randrw",
            "--description=second",
            "--percentile_list=50:99",
        ],
        // A job that `exitall` stops before it starts: a terse line with no I/O.
        vec![
            "--exitall",
            "--name=a",
            "--ioengine=null",
            "--size=1m",
            "--name=b",
            "--ioengine=null",
            "--size=1m",
            "--startdelay=3",
        ],
    ];
    for job in &jobs {
        for v in ["3", "5", "2", "4"] {
            // The format first: fio prints a job's start-up line when the job is complete
            // (at the next --name), in the output format chosen by then.
            let ver = format!("--terse-version={v}");
            let args = with(&["--minimal", &ver], job);
            let (a, _) = hb(&d, &args);
            let (b, _) = fio(&d, &args);
            let (a, b) = (terse_lines(&a), terse_lines(&b));
            assert_eq!(a.len(), b.len(), "{args:?}: lines\n{a:?}\n{b:?}");
            for (x, y) in a.iter().zip(&b) {
                let kx: Vec<String> = x.iter().map(|f| kind(f)).collect();
                let ky: Vec<String> = y.iter().map(|f| kind(f)).collect();
                // The version field says hostbench; every other kind is fio's.
                let skip = usize::from(v != "2");
                assert_eq!(kx.len(), ky.len(), "{args:?}:\n{x:?}\n{y:?}");
                for (i, (p, q)) in kx.iter().zip(&ky).enumerate() {
                    if i == skip && v != "2" {
                        continue;
                    }
                    assert_eq!(p, q, "{args:?} field {i}:\n{x:?}\n{y:?}");
                    // Not a number where fio has none (a block without I/O).
                    let nan = |f: &str| f.contains("nan");
                    assert_eq!(nan(&x[i]), nan(&y[i]), "{args:?} field {i}");
                }
                // The KiB of each direction (size-based jobs: fio's exactly when the job
                // reads or writes alone) and whether its latencies were measured.
                let head = if v == "2" { 4 } else { 5 };
                let per_dir = if v == "5" { 47 } else { 41 };
                let dirs = x.len().min(y.len()).saturating_sub(head + 34) / per_dir;
                for k in 0..dirs {
                    let at = head + k * per_dir;
                    let mixed = job.iter().any(|a| a.contains("randrw"));
                    if !mixed {
                        assert_eq!(x[at], y[at], "{args:?}: KiB of direction {k}");
                    }
                    // slat mean, clat mean, lat mean: measured or not.
                    for off in [6, 10, 34] {
                        let filled = |f: &str| f.parse::<f64>().unwrap() > 0.0;
                        assert_eq!(
                            filled(&x[at + off]),
                            filled(&y[at + off]),
                            "{args:?}: field {} of direction {k}:\n{x:?}\n{y:?}",
                            at + off
                        );
                    }
                }
            }
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// The percentile block headers and labels of a normal report, in order.
fn percentile_labels(out: &str) -> Vec<String> {
    let mut v = Vec::new();
    for l in out.lines() {
        if let Some(h) = l.trim().strip_suffix("):")
            && let Some((name, _unit)) = h.split_once(" percentiles (")
        {
            v.push(format!("block {name}"));
        } else if let Some(rest) = l.strip_prefix("     |") {
            for cell in rest.split(',') {
                if let Some((p, _)) = cell.split_once("th=[") {
                    v.push(p.trim().to_string());
                }
            }
        } else if let Some(p) = l.find(": IOPS=") {
            v.push(l[..p].trim().to_string());
        }
    }
    v
}

/// Which latencies of each JSON direction carry percentiles, with their keys.
fn json_percentiles(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for j in v["jobs"].as_array().unwrap() {
        for dir in ["read", "write", "mixed"] {
            for lat in ["slat_ns", "clat_ns", "lat_ns"] {
                if let Some(p) = j[dir][lat]["percentile"].as_object() {
                    let keys: Vec<&str> = p.keys().map(String::as_str).collect();
                    out.push(format!("{dir}.{lat}: {}", keys.join(" ")));
                }
            }
        }
    }
    out
}

/// percentile_list (precision as typed), clat/lat/slat_percentiles: the same blocks, in the
/// same order, with the same labels and JSON keys as fio's.
#[test]
fn percentile_options_match_fio() {
    if !need_fio("percentile_options_match_fio") {
        return;
    }
    let d = tmp("pct-fio");
    std::fs::write(d.join("f"), vec![7u8; 2 << 20]).unwrap();
    let base = [
        "--name=p",
        "--filename=f",
        "--size=2m",
        "--ioengine=libaio",
        "--iodepth=4",
        "--rw=randrw",
    ];
    for more in [
        &[][..],
        &["--percentile_list=99.5:50:1", "--lat_percentiles=1"],
        &["--percentile_list=50:90", "--slat_percentiles=1"],
        &[
            "--clat_percentiles=0",
            "--lat_percentiles=1",
            "--slat_percentiles=1",
            "--percentile_list=10:99.999",
        ],
        &["--clat_percentiles=0"],
    ] {
        let args = with(&base, more);
        let (a, _) = hb(&d, &args);
        let (b, _) = fio(&d, &args);
        assert_eq!(
            percentile_labels(&a),
            percentile_labels(&b),
            "{more:?}:\n{a}\n{b}"
        );
        let args = with(&args, &["--output-format=json"]);
        let (a, _) = hb(&d, &args);
        let (b, _) = fio(&d, &args);
        assert_eq!(
            json_percentiles(&json(&a)),
            json_percentiles(&json(&b)),
            "{more:?}"
        );
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// The shape of a run under `unified_rw_reporting`: each JSON job's keys, the direction
/// lines of the normal report, the Run status labels and which `issued rwts` are counted.
fn unified_shape(normal: &str, j: &Value) -> Vec<String> {
    let mut v: Vec<String> = j["jobs"][0]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| ["read", "write", "trim", "sync", "mixed"].contains(&k.as_str()))
        .map(|k| format!("json {k}"))
        .collect();
    for l in normal.lines() {
        if let Some(p) = l.find(": IOPS=") {
            v.push(l[..p].to_string());
        } else if let Some(p) = l.find(": bw=") {
            v.push(l[..p].to_string());
        } else if let Some(t) = l.strip_prefix("     issued rwts: total=") {
            let n: Vec<bool> = t
                .split(' ')
                .next()
                .unwrap()
                .split(',')
                .map(|x| x != "0")
                .collect();
            v.push(format!("issued {n:?}"));
        }
    }
    v
}

#[test]
fn unified_rw_reporting_matches_fio() {
    if !need_fio("unified_rw_reporting_matches_fio") {
        return;
    }
    let d = tmp("unified-fio");
    for u in ["none", "mixed", "both", "0", "1", "2"] {
        let uni = format!("--unified_rw_reporting={u}");
        let normal = with(NULL_RW, &[&uni]);
        let js = with(&normal, &["--output-format=json"]);
        let a = unified_shape(&hb(&d, &normal).0, &json(&hb(&d, &js).0));
        let b = unified_shape(&fio(&d, &normal).0, &json(&fio(&d, &js).0));
        assert_eq!(a, b, "{u}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// Every key path of a JSON document, in order, once (array indexes and json+ bin
/// buckets as `#`).
fn key_paths(v: &Value) -> Vec<String> {
    fn walk(v: &Value, at: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let k = if at.ends_with("/bins") { "#" } else { k };
                    walk(x, &format!("{at}/{k}"), out);
                }
            }
            Value::Array(a) => {
                for x in a {
                    walk(x, &format!("{at}/#"), out);
                }
            }
            _ => {
                if !out.iter().any(|p| p == at) {
                    out.push(at.to_string());
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(v, "", &mut out);
    out
}

/// The JSON (json+) of the report options has fio's keys (compared as sets: serde_json
/// sorts them): `mixed` in the reads' place or besides them, the percentile objects of the
/// latencies asked for with their keys, `desc`.
#[test]
fn json_keys_of_report_options_match_fio() {
    if !need_fio("json_keys_of_report_options_match_fio") {
        return;
    }
    let d = tmp("json-keys");
    std::fs::write(d.join("f"), vec![7u8; 1 << 20]).unwrap();
    for job in [
        with(
            NULL_RW,
            &[
                "--unified_rw_reporting=both",
                "--description=d",
                "--percentile_list=50:99",
                "--lat_percentiles=1",
            ],
        ),
        with(NULL_RW, &["--unified_rw_reporting=mixed"]),
        vec![
            "--name=b",
            "--ioengine=libaio",
            "--iodepth=2",
            "--filename=f",
            "--size=1m",
            "--rw=randwrite",
            "--fsync=4",
            "--slat_percentiles=1",
            "--clat_percentiles=0",
        ],
    ] {
        let args = with(&["--output-format=json+"], &job);
        let a = key_paths(&json(&hb(&d, &args).0));
        let b = key_paths(&json(&fio(&d, &args).0));
        assert_eq!(a, b, "{job:?}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// What an output is made of, in order: fio's start-up lines, terse lines, the JSON
/// document, the normal report's job blocks and group lines (consecutive repeats merged).
fn sections(out: &str) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = Vec::new();
    let mut in_json = false;
    for l in out.lines() {
        let k = if in_json {
            if l == "}" {
                in_json = false;
            }
            "json"
        } else if l == "{" {
            in_json = true;
            "json"
        } else if l.contains(": (g=") || l.starts_with("fio-3.33") || l.starts_with("Starting ") {
            "start-up"
        } else if l.starts_with("3;fio-3.33") {
            "terse"
        } else if l.contains(": (groupid=") {
            "job block"
        } else if l.starts_with("Run status group") {
            "group"
        } else if l.is_empty() {
            "blank"
        } else {
            continue;
        };
        if v.last() != Some(&k) {
            v.push(k);
        }
    }
    v
}

/// Several formats at once come in fio's order (terse, JSON, normal) whatever the order
/// given, the start-up lines only with normal, on stdout or all in `--output`.
#[test]
fn several_formats_in_fios_order() {
    let d = tmp("formats");
    let want = [
        "start-up",
        "terse",
        "json",
        "blank",
        "job block",
        "blank",
        "group",
    ];
    let (out, _) = hb(&d, &with(NULL_RW, &["--output-format=normal,json,terse"]));
    assert_eq!(sections(&out), want, "{out}");
    let j = out.find("\n{\n").unwrap() + 1;
    let end = out[j..].find("\n}\n").unwrap() + j + 2;
    let doc = json(&out[j..end]);
    assert_eq!(doc["jobs"][0]["jobname"], "a");
    let (out, _) = hb(&d, &with(NULL_RW, &["--output-format=json,terse"]));
    assert_eq!(sections(&out), ["terse", "json"], "{out}");
    let (out, _) = hb(&d, &with(NULL_RW, &["--output-format=json+,json"]));
    assert!(json(&out)["jobs"][0]["read"]["clat_ns"]["bins"].is_object());
    // --output: everything in the file, nothing on stdout.
    let file = d.join("out.txt");
    let o = format!("--output={}", s(&file));
    let (stdout, _) = hb(&d, &with(NULL_RW, &["--output-format=terse,normal", &o]));
    assert_eq!(stdout, "");
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        sections(&written),
        ["start-up", "terse", "blank", "job block", "blank", "group"],
        "{written}"
    );
    if need_fio("several_formats_in_fios_order") {
        for f in [
            "normal,json,terse",
            "terse,normal",
            "json,terse",
            "terse,json,normal",
        ] {
            let args = with(NULL_RW, &[]);
            let fmt = format!("--output-format={f}");
            let a = hb(&d, &with(&args, &[&fmt])).0;
            let b = fio(&d, &with(&args, &[&fmt])).0;
            assert_eq!(sections(&a), sections(&b), "{f}:\n{a}\n{b}");
            let fa = d.join("a.txt");
            let fb = d.join("b.txt");
            hb(&d, &with(&args, &[&fmt, &format!("--output={}", s(&fa))]));
            fio(&d, &with(&args, &[&fmt, &format!("--output={}", s(&fb))]));
            let (a, b) = (
                std::fs::read_to_string(&fa).unwrap(),
                std::fs::read_to_string(&fb).unwrap(),
            );
            assert_eq!(sections(&a), sections(&b), "{f} --output:\n{a}\n{b}");
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// The layout of the percentile options and `unified_rw_reporting=both` (figures
/// redacted): a description, slat/clat/lat percentile blocks with the typed precision, the
/// mixed direction and the MIXED group line.
#[test]
fn percentile_and_unified_layout() {
    let d = tmp("pct-layout");
    let (out, _) = hb(
        &d,
        &[
            "--name=lay",
            "--ioengine=libaio",
            "--iodepth=2",
            &format!("--filename={}", s(&d.join("f"))),
            "--size=1m",
            "--rw=write",
            "--percentile_list=50:99.5:1",
            "--lat_percentiles=1",
            "--slat_percentiles=1",
            "--unified_rw_reporting=both",
            "--description=layout check",
        ],
    );
    // The layout line names the temporary file: left out.
    let out: String = out
        .lines()
        .filter(|l| !l.contains("Laying out"))
        .map(|l| format!("{l}\n"))
        .collect();
    // Column widths and units follow the figures, and so do the latency distribution's
    // lines: the snapshot pins the lines, not how wide the figures are.
    let out: String = redact(&out)
        .lines()
        .filter(|l| !l.starts_with("  lat ("))
        .map(|l| {
            let mut l = l.replace("(usec)", "(nsec)").replace("(msec)", "(nsec)");
            while l.contains("[ ") || l.contains("= #") {
                l = l.replace("[ ", "[").replace("= #", "=#");
            }
            format!("{l}\n")
        })
        .collect();
    insta::assert_snapshot!("fio_percentiles_unified_layout", out);
    std::fs::remove_dir_all(d).unwrap();
}

/// The stored result keeps what the report options need (schema 1.4), valid against the
/// schema; the stored run shows as it printed, terse and JSON together, byte for byte.
#[test]
fn terse_and_percentiles_from_a_stored_run() {
    let d = tmp("stored");
    let db = d.join("r.db");
    let run = |args: &[&str]| {
        let out = common::hb_with_store(&db)
            .current_dir(&d)
            .arg("fio")
            .args(args)
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let printed = run(&with(
        NULL_RW,
        &[
            "--output-format=terse,json",
            "--terse-version=5",
            "--lat_percentiles=1",
            "--percentile_list=50:99",
            "--unified_rw_reporting=mixed",
        ],
    ));
    let list = run_store(
        &db,
        &["results", "list", "--format", "json", "--limit", "1"],
    );
    let id = json(&list)[0]["id"].as_str().unwrap().to_string();
    let shown = run_store(&db, &["results", "show", &id, "-f", "fio"]);
    assert_eq!(shown, printed);
    assert_eq!(terse_lines(&shown)[0].len(), 86, "v5 mixed:\n{shown}");
    let stored = json(&run_store(&db, &["results", "show", &id, "-f", "json"]));
    assert_valid(&stored, "fio run with report options");
    let layout = &stored["config"]["layout"];
    assert_eq!(layout["output_format"], "terse");
    assert_eq!(layout["more_formats"], serde_json::json!(["json"]));
    assert_eq!(layout["terse_version"], 5);
    let report = &stored["fio"]["jobs"][0]["report"];
    assert_eq!(report["percentile_list"], serde_json::json!([50.0, 99.0]));
    assert_eq!(report["lat_percentiles"], true);
    assert_eq!(report["unified_rw_reporting"], "mixed");
    let block = &stored["fio"]["blocks"][0];
    assert!(!block["read"]["lat_bins"].as_array().unwrap().is_empty());
    assert!(block["read"].get("slat_bins").is_none(), "not asked for");
    std::fs::remove_dir_all(d).unwrap();
}

fn run_store(db: &Path, args: &[&str]) -> String {
    let out = common::hb_with_store(db)
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Bad output options: one line naming the problem, exit 2.
#[test]
fn bad_output_options_are_one_clear_line() {
    for (args, needle) in [
        (
            &["--output-format=xml"][..],
            "'xml' is not an output format",
        ),
        (
            &["--terse-version=1"],
            "--terse-version=1: expected 2, 3, 4 or 5",
        ),
        (
            &["--output-format=terse,hostbench-json"],
            "cannot be combined",
        ),
        (&["--percentile_list=50:0"], "not above 0"),
        (
            &["--unified_rw_reporting=all"],
            "expected none, mixed or both",
        ),
        (&["--eta=sometimes"], "expected always, never or auto"),
        (&["--eta-interval=100ms"], "at least 250 ms"),
    ] {
        let mut a = vec!["fio"];
        a.extend(NULL_RW);
        a.extend(args);
        a.push("--no-save");
        let (code, out, err) = common::run(&a);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(out, "", "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

/// `--eta=never` (common in scripts) prints no status line, nor does `auto` off a terminal
/// (fio_logs.rs checks the line itself); `--eta-newline` and `--eta-interval` are checked
/// and accepted. The report is the same as without them.
#[test]
fn eta_never_is_accepted() {
    let d = tmp("eta");
    let (out, _) = hb(
        &d,
        &with(
            NULL_RW,
            &[
                "--eta=never",
                "--eta-newline=5",
                "--eta-interval=500ms",
                "--minimal",
            ],
        ),
    );
    assert_eq!(terse_lines(&out).len(), 1, "{out}");
    assert!(!out.contains("Jobs:"), "{out}");
    let (out, _) = hb(&d, &with(NULL_RW, &["--eta=auto"]));
    assert!(out.contains("Run status group 0 (all jobs):"), "{out}");
    std::fs::remove_dir_all(d).unwrap();
}

/// The JSON documents of `out`, one after another (fio's `--status-interval` prints
/// several).
pub(crate) fn json_docs(out: &str) -> Vec<Value> {
    let mut docs = Vec::new();
    let mut rest = out;
    while let Some(i) = rest.find('{') {
        let mut it = serde_json::Deserializer::from_str(&rest[i..]).into_iter::<Value>();
        let v = it.next().unwrap().unwrap();
        let used = it.byte_offset();
        docs.push(v);
        rest = &rest[i + used..];
    }
    docs
}

/// `--status-interval=1` on a 2 s job: fio's full report after each second, then the
/// final one: three reports with cumulative counts, in every format, the start-up lines
/// once; too small an interval is refused as in fio.
#[test]
fn status_interval_prints_full_reports_as_fio() {
    let d = tmp("status-interval");
    let base = [
        "--name=a",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=2",
        "--rate_iops=100",
        "--status-interval=1",
    ];
    let peer = need_fio("status_interval_prints_full_reports_as_fio");
    // Normal: three job blocks and Run status blocks, the start-up lines once.
    let normal = |out: &str| {
        let ios: Vec<u64> = out
            .lines()
            .filter_map(|l| l.trim().strip_prefix("issued rwts: total="))
            .map(|t| t.split(',').next().unwrap().parse().unwrap())
            .collect();
        (
            out.matches("Run status group 0 (all jobs):").count(),
            out.matches("Starting 1 process").count(),
            ios,
        )
    };
    let (h, _) = hb(&d, &base);
    let (n, starts, ios) = normal(&h);
    assert_eq!((n, starts), (3, 1), "{h}");
    assert!(ios.windows(2).all(|w| w[0] <= w[1]), "cumulative: {ios:?}");
    assert!(
        (80..=120).contains(&ios[0]),
        "about 1 s of 100 IOPS: {ios:?}"
    );
    assert!((180..=220).contains(&ios[2]), "2 s: {ios:?}");
    // JSON: three documents, each a whole report.
    let (hj, _) = hb(&d, &with(&base, &["--output-format=json"]));
    let docs = json_docs(&hj);
    assert_eq!(docs.len(), 3, "{hj}");
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    // Terse: three lines.
    let (ht, _) = hb(&d, &with(&base, &["--minimal"]));
    assert_eq!(terse_lines(&ht).len(), 3, "{ht}");
    // With --output the file holds the same three reports.
    let f = d.join("out.txt");
    let o = format!("--output={}", s(&f));
    let _ = hb(&d, &with(&base, &[o.as_str(), "--output-format=json"]));
    assert_eq!(json_docs(&std::fs::read_to_string(&f).unwrap()).len(), 3);
    if peer {
        let (p, _) = fio(&d, &base);
        let (pn, pstarts, pios) = normal(&p);
        assert_eq!((n, starts), (pn, pstarts), "fio:\n{p}");
        assert_eq!(ios.len(), pios.len());
        let (pj, _) = fio(&d, &with(&base, &["--output-format=json"]));
        let pdocs = json_docs(&pj);
        assert_eq!(docs.len(), pdocs.len());
        for (a, b) in docs.iter().zip(&pdocs) {
            assert_eq!(keys(a), keys(b), "top-level keys of each report");
            assert_eq!(keys(&a["jobs"][0]), keys(&b["jobs"][0]), "job keys");
        }
        let (pt, _) = fio(&d, &with(&base, &["--minimal"]));
        assert_eq!(terse_lines(&pt).len(), 3, "{pt}");
    }
    // Too small, or not a time: one line, exit 2.
    for bad in ["--status-interval=500ms", "--status-interval=abc"] {
        let o = common::hb()
            .current_dir(&d)
            .args([
                "fio",
                "--name=a",
                "--ioengine=null",
                "--size=1m",
                bad,
                "--no-save",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("--status-interval"), "{bad}: {err}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// `results show` (hostbench's own layout) of a job file's run: the variant reads as compare
/// prints it (the job text's names and rw/bs/iodepth, not the file with `\n` in it), and the
/// two time bases are named: the figures are fio's group rates (I/O over each stonewall
/// phase's run time), the counters' rates are over the run's wall time. Both printed side by
/// side without a word, `reads 2048 38156.97 /s` beside `reads per second 1024000.00` read as
/// a contradiction (a user review).
#[test]
fn native_show_names_the_time_base_of_each_rate() {
    let d = tmp("out-show");
    let db = d.join("r.db");
    let jf = d.join("j.fio");
    std::fs::write(
        &jf,
        "[global]\nioengine=null\nsize=8m\nbs=4k\n[w]\nrw=write\n[r]\nstonewall\nrw=read\n",
    )
    .unwrap();
    run_store(&db, &["fio", &s(&jf)]);
    let list = run_store(
        &db,
        &["results", "list", "--format", "json", "--limit", "1"],
    );
    let id = json(&list)[0]["id"].as_str().unwrap().to_string();
    let shown = run_store(&db, &["results", "show", &id]);
    let head = shown.lines().nth(3).unwrap_or_default();
    assert!(
        head.starts_with("disk.fio ")
            && !head.contains("\\n")
            && head.contains("jobs=w rw=write bs=4k iodepth=1; r rw=read"),
        "{shown}"
    );
    assert!(
        shown.contains("figures: fio's group rates"),
        "no word on the figures' time base:\n{shown}"
    );
    assert!(
        shown.contains("counters: per second of the run's wall time"),
        "no word on the counters' time base:\n{shown}"
    );
}

/// fio stamps its report with the time it prints it, at the run's end: the job block's
/// time and JSON's `timestamp`/`time` (they were the run's start: a 3 s run printed the
/// second it began).
#[test]
fn the_report_is_stamped_at_the_runs_end_as_fio() {
    let d = tmp("stamp");
    let t0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let (out, _) = hb(
        &d,
        &[
            "--name=t",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--runtime=3",
            "--output-format=json,normal",
        ],
    );
    let from = out.find("\n{\n").expect("the JSON document") + 1;
    let at = out.find("\n}\n").expect("the JSON document's end") + 3;
    let v = json(&out[from..at]);
    let stamp = v["timestamp"].as_u64().unwrap();
    assert!(stamp >= t0 + 3, "timestamp {stamp}, started about {t0}");
    let time = v["time"].as_str().unwrap();
    assert!(
        out[at..].contains(&format!(": {time}\n")),
        "the job block shows JSON's time {time}:\n{}",
        &out[at..]
    );
    std::fs::remove_dir_all(d).ok();
}

/// group_reporting: the merged block's `job_runtime` is the clones' runtimes added up (fio's
/// `sum_thread_stats` adds `total_run_time`): two clones of 1 s give ~2000 ms, not the
/// longest clone's 1000; each job's own block without it keeps its own.
#[test]
fn group_reporting_adds_the_clones_job_runtime_as_fio() {
    let d = tmp("grpruntime");
    let base = [
        "--name=g",
        "--ioengine=null",
        "--rw=read",
        "--bs=4k",
        "--size=1m",
        "--rate_iops=500",
        "--time_based",
        "--runtime=1",
        "--numjobs=2",
        "--output-format=json",
    ];
    let runtimes = |out: &str| -> Vec<u64> {
        json(out)["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["job_runtime"].as_u64().unwrap())
            .collect()
    };
    let grouped = with(&base, &["--group_reporting"]);
    let h = runtimes(&hb(&d, &grouped).0);
    assert_eq!(h.len(), 1, "{h:?}");
    assert!(
        (1900..=2400).contains(&h[0]),
        "hostbench's merged job_runtime: {h:?}"
    );
    let each = runtimes(&hb(&d, &base).0);
    assert_eq!(each.len(), 2, "{each:?}");
    assert!(
        each.iter().all(|&ms| (950..=1200).contains(&ms)),
        "{each:?}"
    );
    if need_fio("group_reporting_adds_the_clones_job_runtime_as_fio") {
        let f = runtimes(&fio(&d, &grouped).0);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            (1900..=2400).contains(&f[0]),
            "fio's merged job_runtime: {f:?}"
        );
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// A group's bandwidth and IOPS samples are its clones' added up, counts included (fio's
/// pure sum: three clones of ~3 samples print `samples=9`); the count was one clone's.
#[test]
fn a_groups_rate_samples_count_every_clone_as_fio() {
    let d = tmp("groupsamples");
    let args = [
        "--name=c",
        "--numjobs=3",
        "--group_reporting",
        "--rate_iops=50",
        "--runtime=2",
        "--time_based",
        "--size=1m",
        "--rw=read",
        "--output-format=json",
    ];
    let samples = |out: &str| {
        let v = json(out);
        let r = &v["jobs"][0]["read"];
        (
            r["bw_samples"].as_u64().unwrap(),
            r["iops_samples"].as_u64().unwrap(),
        )
    };
    let (out, _) = hb(&d, &args);
    let (bw, iops) = samples(&out);
    // 500 ms samples over 2 s: 3 or 4 per clone, 9 to 12 for the three.
    assert!(
        (8..=12).contains(&bw) && (8..=12).contains(&iops),
        "{bw} {iops}"
    );
    if need_fio("a_groups_rate_samples_count_every_clone_as_fio") {
        let (out, _) = fio(&d, &args);
        let (fbw, fiops) = samples(&out);
        assert!(
            bw.abs_diff(fbw) <= 3 && iops.abs_diff(fiops) <= 3,
            "{bw} {iops} vs fio {fbw} {fiops}"
        );
    }
    std::fs::remove_dir_all(&d).ok();
}
