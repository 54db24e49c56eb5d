//! `compare`, `report` and `results show` of fio job files with several jobs (a user review):
//! one row per fio report block (a clone, or a `group_reporting` group: fio's own report
//! unit) and direction, with the block's own figures as the run's fio JSON gives them, the
//! same job paired across the sides by name and place, a job of one side only shown as
//! such; and `results show` saying what each of its rates is over.

use super::common;
use super::fio::{json, s, tmp};
use super::fio_seq::need_fio;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// `hostbench ARGS` in `dir` with the store `db`: stdout, after checking it succeeded.
fn hb(dir: &Path, db: &Path, args: &[&str]) -> String {
    let o = common::hb_with_store(db)
        .current_dir(dir)
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "hostbench {args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    String::from_utf8(o.stdout).unwrap()
}

/// Runs job file `job` in `dir` under `label`, saved into `db`: fio's JSON of the run.
fn run(dir: &Path, db: &Path, job: &str, label: &str) -> Value {
    json(&hb(
        dir,
        db,
        &[
            "fio",
            job,
            "--output-format=json",
            &format!("--label={label}"),
        ],
    ))
}

/// The key and label compare gives each of fio's JSON job entries: its name, and `#k` for
/// the k-th entry of that name (a merged group's label goes on with fio's `(groupid=G,
/// jobs=N)`, which the JSON has no count for).
fn keys(v: &Value) -> Vec<(String, String)> {
    let jobs = v["jobs"].as_array().unwrap();
    let mut out = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        let name = j["jobname"].as_str().unwrap();
        let k = 1 + jobs[..i]
            .iter()
            .filter(|o| o["jobname"].as_str() == Some(name))
            .count();
        let (mut key, mut label) = (name.to_string(), name.to_string());
        if k > 1 {
            key = format!("{name}#{k}");
            label = format!("{name} #{k}");
        }
        out.push((key, label));
    }
    out
}

/// The row of figure `fig` in compare's JSON `cmp`.
fn row<'a>(cmp: &'a Value, fig: &str) -> &'a Value {
    cmp["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["figure"] == fig)
        .unwrap_or_else(|| panic!("no row {fig}: {:#}", cmp["rows"]))
}

/// compare's JSON `v` keeps to `schemas/compare.v1.json`.
fn assert_schema(v: &Value) {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schemas/compare.v1.json");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let val = jsonschema::options().build(&s).unwrap();
    let errors: Vec<String> = val
        .iter_errors(v)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "compare JSON: {errors:#?}");
}

fn close(a: f64, b: f64) -> bool {
    // fio's JSON prints floats with 6 decimals.
    (a - b).abs() <= 1e-6 + b.abs() * 1e-12
}

/// Every job and direction of the fio JSON of side `side`'s run has its rows in `cmp`
/// (compare's JSON) with the values of the JSON: iops, bw_bytes, clat_ns.mean and
/// clat_ns.percentile 99; the rows' labels name the job. Returns how many rows it checked.
fn assert_rows_match(cmp: &Value, side: usize, v: &Value) -> usize {
    let rows = cmp["rows"].as_array().unwrap();
    let value = |fig: &str| -> f64 {
        let c = &row(cmp, fig)["cells"][side];
        assert_eq!(c["n"], 1, "{fig}: {c}");
        c["values"][0].as_f64().unwrap()
    };
    let mut n = 0;
    for ((key, label), j) in keys(v).iter().zip(v["jobs"].as_array().unwrap()) {
        for dir in ["read", "write", "trim"] {
            let d = &j[dir];
            if d["total_ios"].as_u64().unwrap_or(0) == 0 {
                assert!(
                    rows.iter()
                        .all(|r| r["figure"] != format!("job:{key}:{dir}_iops")),
                    "{key} did no {dir}s: no row"
                );
                continue;
            }
            let f = |m: &str| format!("job:{key}:{dir}_{m}");
            assert!(
                close(value(&f("iops")), d["iops"].as_f64().unwrap()),
                "{key} {dir} iops: {} vs {}",
                value(&f("iops")),
                d["iops"]
            );
            assert_eq!(
                value(&f("bytes_per_s")),
                d["bw_bytes"].as_f64().unwrap(),
                "{key} {dir}"
            );
            assert!(
                close(
                    value(&f("clat_mean_ns")),
                    d["clat_ns"]["mean"].as_f64().unwrap()
                ),
                "{key} {dir} clat mean"
            );
            assert_eq!(
                value(&f("clat_p99_ns")),
                d["clat_ns"]["percentile"]["99.000000"].as_f64().unwrap(),
                "{key} {dir} clat p99"
            );
            let l = row(cmp, &f("iops"))["label"].as_str().unwrap();
            assert!(l.starts_with(label.as_str()), "{l} for {key}");
            n += 4;
        }
    }
    n
}

const NULL_JOBS: &str = "[global]
ioengine=null
size=128m
bs=4k

[seqread]
rw=read
bs=128k
size=1g

[randwrite4k]
stonewall
rw=randwrite

[randrw-mix]
stonewall
rw=randrw
numjobs=2

[grp]
stonewall
rw=randread
numjobs=2
group_reporting
";

/// A job file of four stonewalled jobs (one of two clones, one a group_reporting group of
/// two), run on two "machines": compare shows each block per direction with the figures
/// of that run's fio JSON, its text labels each job readably, the HTML report draws the
/// jobs side by side; a single-job run keeps its rows as they were.
#[test]
fn compare_shows_each_job_per_direction() {
    let d = tmp("cmp-null");
    let db = d.join("r.db");
    std::fs::write(d.join("j.fio"), NULL_JOBS).unwrap();
    let a = run(&d, &db, "j.fio", "cmp-a");
    let b = run(&d, &db, "j.fio", "cmp-b");
    // The blocks are fio's: the same entries (name, group) in fio's own JSON.
    let entries = |v: &Value| -> Vec<(String, u64)> {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| {
                (
                    j["jobname"].as_str().unwrap().to_string(),
                    j["groupid"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let want: Vec<(String, u64)> = [
        ("seqread", 0),
        ("randwrite4k", 1),
        ("randrw-mix", 2),
        ("randrw-mix", 2),
        ("grp", 3),
    ]
    .iter()
    .map(|(n, g)| (n.to_string(), *g))
    .collect();
    assert_eq!(entries(&a), want);
    if need_fio("compare_shows_each_job_per_direction") {
        let p = super::fio_files::fio(&d, &["j.fio", "--output-format=json"]);
        assert_eq!(p.code, 0, "{}", p.err);
        assert_eq!(entries(&json(&p.out)), want, "fio's report blocks");
    }
    let cmp = json(&hb(&d, &db, &["compare", "cmp-a", "cmp-b", "-f", "json"]));
    assert_schema(&cmp);
    // The run's own figures first, as before (the headline is still the run's IOPS).
    assert_eq!(cmp["rows"][0]["figure"], "iops", "{cmp:#}");
    let n = assert_rows_match(&cmp, 0, &a);
    assert_eq!(n, assert_rows_match(&cmp, 1, &b));
    // seqread, randwrite4k, grp: one direction each; the two randrw clones two each.
    assert_eq!(n, 4 * 7);
    let text = hb(&d, &db, &["compare", "cmp-a", "cmp-b"]);
    for want in [
        "seqread: reads per second",
        "randwrite4k: write throughput",
        "randrw-mix: mean read completion latency",
        "randrw-mix #2: p99 write completion latency",
        "grp (groupid=3, jobs=2): reads per second",
    ] {
        assert!(text.contains(want), "{want}:\n{text}");
    }
    assert!(!text.contains("not on every side"), "{text}");
    // The HTML report: the rows in its table, a chart per figure with a group per job.
    let html = hb(&d, &db, &["report", "cmp-a", "cmp-b", "-o", "-"]);
    assert!(
        html.contains("randrw-mix #2: writes per second"),
        "no job row in the report's table"
    );
    assert!(
        html.contains("reads per second per fio job, IOPS"),
        "no per-job chart"
    );
    // trend follows one job's figure, with the run's value of it.
    let trend = json(&hb(
        &d,
        &db,
        &[
            "trend",
            "cmp-a",
            "--figure",
            "job:randrw-mix#2:write_iops",
            "-f",
            "json",
        ],
    ));
    let series = &trend["series"][0];
    assert_eq!(series["label"], "randrw-mix #2: writes per second");
    assert!(close(
        series["points"][0]["value"].as_f64().unwrap(),
        a["jobs"][3]["write"]["iops"].as_f64().unwrap()
    ));
    // One job: its rows as they were (the job's figures are the run's).
    std::fs::write(
        d.join("one.fio"),
        "[one]\nioengine=null\nsize=64m\nrw=randrw\n",
    )
    .unwrap();
    run(&d, &db, "one.fio", "cmp-one-a");
    run(&d, &db, "one.fio", "cmp-one-b");
    let one = json(&hb(
        &d,
        &db,
        &["compare", "cmp-one-a", "cmp-one-b", "-f", "json"],
    ));
    let figs: Vec<&str> = one["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["figure"].as_str().unwrap())
        .collect();
    assert_eq!(
        figs,
        [
            "iops",
            "read_iops",
            "write_iops",
            "read_bytes_per_s",
            "write_bytes_per_s",
            "lat_avg_ns"
        ]
    );
}

/// A job file of real files (psync): a writer, then a reader of its file, then two clones
/// of a mix; compared job by job as the null one. `results show` lists the blocks with the
/// JSON's figures and says what each group rate is over: the writes ran in one phase, the
/// reads in two, so neither direction's rate adds up to the total.
#[test]
fn file_jobs_compare_and_show_job_by_job() {
    let d = tmp("cmp-file");
    let db = d.join("r.db");
    std::fs::write(
        d.join("f.fio"),
        "[global]\nioengine=psync\nsize=4m\n\n[w]\nrw=write\nbs=64k\nfilename=f1\n\n\
         [r]\nstonewall\nrw=randread\nbs=4k\nfilename=f1\n\n\
         [m]\nstonewall\nrw=randrw\nbs=4k\nfilename=f2\nnumjobs=2\n",
    )
    .unwrap();
    let a = run(&d, &db, "f.fio", "cmpf-a");
    let b = run(&d, &db, "f.fio", "cmpf-b");
    let cmp = json(&hb(&d, &db, &["compare", "cmpf-a", "cmpf-b", "-f", "json"]));
    let n = assert_rows_match(&cmp, 0, &a);
    assert_eq!(n, assert_rows_match(&cmp, 1, &b));
    assert_eq!(n, 4 * 6);
    // CSV keeps the figure names.
    let csv = hb(&d, &db, &["compare", "cmpf-a", "cmpf-b", "-f", "csv"]);
    assert!(
        csv.contains(",job:m#2:write_iops,IOPS,higher,cmpf-b,"),
        "{csv}"
    );
    // results show: a line per block and direction, with the JSON's IOPS.
    let list = json(&hb(
        &d,
        &db,
        &["results", "list", "--label", "cmpf-a", "--format", "json"],
    ));
    let id = list[0]["id"].as_str().unwrap().to_string();
    let shown = hb(&d, &db, &["results", "show", &id]);
    assert!(
        shown.contains("  jobs: each report block over its own run time"),
        "{shown}"
    );
    for (key, j) in keys(&a).iter().zip(a["jobs"].as_array().unwrap()) {
        for dir in ["read", "write"] {
            if j[dir]["total_ios"].as_u64().unwrap() == 0 {
                continue;
            }
            let iops = format!("{:.2}", j[dir]["iops"].as_f64().unwrap());
            assert!(
                shown.lines().any(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    let label: Vec<&str> = key.1.split_whitespace().collect();
                    w.starts_with(&label)
                        && w.get(label.len()) == Some(&dir)
                        && w.get(label.len() + 1) == Some(&iops.as_str())
                }),
                "no line `{} {dir} {iops}`:\n{shown}",
                key.1
            );
        }
    }
    // Each rate with its time: the writes (phases 1 and 3) and the reads (2 and 3) over
    // less than all three phases, and a note that they do not add up.
    assert!(
        shown
            .lines()
            .any(|l| l.contains("I/O operations per second") && l.contains("all I/O over ")),
        "{shown}"
    );
    assert!(
        shown
            .lines()
            .any(|l| l.contains("reads per second") && l.contains("reads over ")),
        "{shown}"
    );
    assert!(
        shown.contains("do not add up to the total"),
        "no word on why the directions do not add up:\n{shown}"
    );
}

/// Two results of the same job file whose blocks differ (here: one's second job renamed,
/// as a result of another hostbench version or an edited export could have it): the jobs
/// both have are paired by name, each of the others keeps its rows with an empty cell on
/// the side without it, and the notes say which job is on which side only.
#[test]
fn a_job_on_one_side_only_is_shown_as_such() {
    let d = tmp("cmp-one-side");
    let db = d.join("r.db");
    std::fs::write(d.join("j.fio"), NULL_JOBS).unwrap();
    run(&d, &db, "j.fio", "cmpo-a");
    let list = json(&hb(&d, &db, &["results", "list", "--format", "json"]));
    let id = list[0]["id"].as_str().unwrap().to_string();
    let mut r: Value = json(&hb(&d, &db, &["results", "show", &id, "-f", "json"]));
    std::fs::write(d.join("a.json"), serde_json::to_string(&r).unwrap()).unwrap();
    let other_id = format!(
        "{}{}",
        &id[..id.len() - 1],
        if id.ends_with('0') { '1' } else { '0' }
    );
    r["id"] = other_id.into();
    r["label"] = "cmpo-b".into();
    assert_eq!(r["fio"]["blocks"][1]["name"], "randwrite4k");
    r["fio"]["blocks"][1]["name"] = "other".into();
    std::fs::write(d.join("b.json"), serde_json::to_string(&r).unwrap()).unwrap();
    let (fa, fb) = (
        format!("file:{}", s(&d.join("a.json"))),
        format!("file:{}", s(&d.join("b.json"))),
    );
    let cmp = json(&hb(&d, &db, &["compare", &fa, &fb, "-f", "json"]));
    let rows = cmp["rows"].as_array().unwrap();
    let cells = |fig: &str| -> (bool, bool) {
        let r = rows
            .iter()
            .find(|r| r["figure"] == fig)
            .unwrap_or_else(|| panic!("no row {fig}"));
        (!r["cells"][0].is_null(), !r["cells"][1].is_null())
    };
    assert_eq!(cells("job:seqread:read_iops"), (true, true));
    assert_eq!(cells("job:randwrite4k:write_iops"), (true, false));
    assert_eq!(cells("job:other:write_iops"), (false, true));
    let text = hb(&d, &db, &["compare", &fa, &fb]);
    assert!(text.contains("fio jobs not on every side"), "{text}");
    assert!(
        text.contains("job 'randwrite4k' on cmpo-a only, not on cmpo-b"),
        "{text}"
    );
    assert!(
        text.contains("job 'other' on cmpo-b only, not on cmpo-a"),
        "{text}"
    );
}
