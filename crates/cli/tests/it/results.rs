//! The results store from the command line: every run is saved (native and sysbench
//! grammars, interrupted and forced-shutdown runs included) unless `--no-save`; `--label`;
//! where the store is; `results list|show|export|import|rm`; errors. Each test uses its own
//! temporary store.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn temp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("hostbench-test-results-")
        .tempdir()
        .unwrap()
}

/// Runs hostbench with its store at `db`; asserts success; returns (stdout, stderr).
fn ok(db: &Path, args: &[&str]) -> (String, String) {
    ok_in(db, Path::new("."), args)
}

/// [`ok`] with the working directory at `dir` (IOzone and fio write their files there).
fn ok_in(db: &Path, dir: &Path, args: &[&str]) -> (String, String) {
    let out = hb_with_store(db)
        .current_dir(dir)
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        out.status.success(),
        "{args:?} failed ({:?}): {stderr}\n{stdout}",
        out.status.code()
    );
    (stdout, stderr)
}

/// Runs hostbench with its store at `db`, expecting exit 2 and one line on stderr that
/// contains `want`.
fn usage_error(db: &Path, args: &[&str], want: &str) {
    let out = hb_with_store(db)
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(
        err.lines().count(),
        1,
        "{args:?}: one line expected:\n{err}"
    );
    assert!(err.contains(want), "{args:?}: {err:?} lacks {want:?}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
}

/// `results list --format json`.
fn list(db: &Path, filters: &[&str]) -> Vec<Value> {
    let mut args = vec!["results", "list", "--format", "json"];
    args.extend_from_slice(filters);
    let (out, _) = ok(db, &args);
    serde_json::from_str::<Vec<Value>>(&out).unwrap()
}

fn quick_null(label: &str) -> Vec<String> {
    ["run", "null", "--time", "0.05s", "--label", label]
        .map(String::from)
        .to_vec()
}

#[test]
fn every_run_is_saved_with_its_label_in_both_grammars() {
    let dir = temp();
    let db = dir.path().join("store/results.db");
    assert!(!db.exists());
    let (json_out, json_err) = ok(
        &db,
        &[
            "run", "null", "--time", "0.1s", "--label", "x86-box", "--format", "json",
        ],
    );
    let printed: Value = serde_json::from_str(&json_out).expect("stdout is only the result");
    assert_eq!(printed["label"], "x86-box");
    assert!(
        !json_err.contains("saved as"),
        "json mode stays quiet: {json_err}"
    );
    let (text, _) = ok(
        &db,
        &[
            "cpu",
            "--cpu-max-prime=200",
            "--time=0.1",
            "--label=graviton3",
            "run",
        ],
    );
    assert!(
        !text.contains("saved"),
        "stdout carries only the report: {text}"
    );
    assert!(
        db.exists(),
        "the directory and file are created on first save"
    );

    let runs = list(&db, &[]);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0]["label"], "graviton3", "newest first");
    assert_eq!(runs[0]["workload"], "cpu");
    assert_eq!(runs[1]["label"], "x86-box");
    assert_eq!(runs[1]["id"], printed["id"]);

    // What is stored is what was printed.
    let (stored, _) = ok(
        &db,
        &[
            "results",
            "show",
            printed["id"].as_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(serde_json::from_str::<Value>(&stored).unwrap(), printed);
    let (stored, _) = ok(
        &db,
        &[
            "results",
            "show",
            runs[0]["id"].as_str().unwrap(),
            "-f",
            "json",
        ],
    );
    let sb: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(sb["config"]["grammar"], "sysbench");
    assert_eq!(sb["label"], "graviton3");
}

#[test]
fn no_save_writes_nothing() {
    let dir = temp();
    let db = dir.path().join("never/results.db");
    ok(&db, &["run", "null", "--time", "0.05s", "--no-save"]);
    ok(
        &db,
        &[
            "cpu",
            "--cpu-max-prime=100",
            "--time=0.05",
            "--no-save",
            "run",
        ],
    );
    ok(
        &db,
        &[
            "cpu",
            "--cpu-max-prime=100",
            "--time=0.05",
            "--no-save=on",
            "run",
        ],
    );
    let out = hb_with_store(&db)
        .env("HOSTBENCH_NO_SAVE", "1")
        .args(["run", "null", "--time", "0.05s"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!db.parent().unwrap().exists(), "nothing was created");
    // Read-only commands do not create a store either.
    let (out, err) = ok(&db, &["results", "list"]);
    assert_eq!(out, "");
    assert!(err.contains("no results store at"), "{err}");
    assert_eq!(list(&db, &[]).len(), 0);
    assert!(!db.parent().unwrap().exists());
    // `--no-save=off` saves (into a directory that exists: a named store's is not made).
    std::fs::create_dir(db.parent().unwrap()).unwrap();
    ok(
        &db,
        &[
            "cpu",
            "--cpu-max-prime=100",
            "--time=0.05",
            "--no-save=off",
            "run",
        ],
    );
    assert_eq!(list(&db, &[]).len(), 1);
}

#[test]
fn store_location_flag_env_xdg_home() {
    let dir = temp();
    let xdg = dir.path().join("xdg");
    let home = dir.path().join("home");
    let run = |envs: &[(&str, &Path)], extra: &[&str]| {
        let mut c = hb();
        c.env_remove("HOSTBENCH_RESULTS_DB")
            .env_remove("XDG_DATA_HOME")
            .env("HOME", &home);
        for (k, v) in envs {
            c.env(k, v);
        }
        let out = c
            .args(["run", "null", "--time", "0.05s"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[("XDG_DATA_HOME", &xdg)], &[]);
    assert_eq!(list(&xdg.join("hostbench/results.db"), &[]).len(), 1);
    run(&[], &[]);
    assert_eq!(
        list(&home.join(".local/share/hostbench/results.db"), &[]).len(),
        1
    );
    let env_db = dir.path().join("env.db");
    let flag_db = dir.path().join("flag.db");
    run(&[("HOSTBENCH_RESULTS_DB", &env_db)], &[]);
    run(
        &[("HOSTBENCH_RESULTS_DB", &env_db)],
        &["--results-db", flag_db.to_str().unwrap()],
    );
    assert_eq!(list(&env_db, &[]).len(), 1);
    assert_eq!(
        list(&flag_db, &[]).len(),
        1,
        "--results-db wins over the env"
    );
    assert_eq!(
        list(&xdg.join("hostbench/results.db"), &[]).len(),
        1,
        "no other store was written"
    );
}

#[test]
fn list_show_export_import_rm() {
    let dir = temp();
    let a = dir.path().join("a.db");
    let b = dir.path().join("b.db");
    for l in ["arm", "arm", "x86"] {
        let args = quick_null(l);
        ok(&a, &args.iter().map(String::as_str).collect::<Vec<_>>());
    }
    ok(
        &a,
        &[
            "threads",
            "--threads=2",
            "--thread-yields=10",
            "--time=0.05",
            "run",
        ],
    );
    // Filters.
    assert_eq!(list(&a, &["--label", "arm"]).len(), 2);
    assert_eq!(list(&a, &["--workload", "null"]).len(), 3);
    assert_eq!(list(&a, &["--workload", "threads"]).len(), 1);
    assert_eq!(list(&a, &["--limit", "2"]).len(), 2);
    assert_eq!(list(&a, &["--since", "1d"]).len(), 4);
    assert_eq!(list(&a, &["--until", "2000-01-01"]).len(), 0);
    let host = list(&a, &[])[0]["hostname"].as_str().unwrap().to_string();
    assert_eq!(list(&a, &["--host", &host]).len(), 4);
    assert_eq!(list(&a, &["--host", "no-such-host"]).len(), 0);

    // The table: one header and one line per run, short ids that `show` accepts.
    let (table, _) = ok(&a, &["results", "list", "--label", "x86"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 2, "{table}");
    assert!(
        lines[0].starts_with("ID") && lines[0].contains("RESULT"),
        "{table}"
    );
    assert!(
        lines[1].contains("x86") && lines[1].contains("events/s"),
        "{table}"
    );
    let short = lines[1].split_whitespace().next().unwrap();
    let (report, _) = ok(&a, &["results", "show", short]);
    assert!(report.contains("label x86"), "{report}");
    assert!(report.starts_with("run "), "{report}");
    assert!(report.contains("null "), "{report}");

    // Export → import elsewhere → export: the same bytes; importing twice adds nothing.
    let file = dir.path().join("export.json");
    let (said, _) = ok(&a, &["results", "export", "-o", file.to_str().unwrap()]);
    assert!(said.contains("exported 4 run(s)"), "{said}");
    let doc = std::fs::read_to_string(&file).unwrap();
    let v: Value = serde_json::from_str(&doc).unwrap();
    assert_eq!(v["schema"], "hostbench.export");
    assert_eq!(v["runs"].as_array().unwrap().len(), 4);
    let (said, _) = ok(&b, &["results", "import", file.to_str().unwrap()]);
    assert!(
        said.contains("imported 4 run(s)") && said.contains("0 already"),
        "{said}"
    );
    let (said, _) = ok(&b, &["results", "import", file.to_str().unwrap()]);
    assert!(
        said.contains("imported 0 run(s)") && said.contains("4 already"),
        "{said}"
    );
    let (again, _) = ok(&b, &["results", "export"]);
    assert_eq!(again, doc, "byte-exact round trip");
    assert_eq!(list(&b, &[]), list(&a, &[]));

    // A single result printed with --format json imports too.
    let (one, _) = ok(
        &a,
        &[
            "run",
            "null",
            "--time",
            "0.05s",
            "--no-save",
            "--format",
            "json",
        ],
    );
    let one_file = dir.path().join("one.json");
    std::fs::write(&one_file, &one).unwrap();
    ok(&b, &["results", "import", one_file.to_str().unwrap()]);
    assert_eq!(list(&b, &[]).len(), 5);
    let id = serde_json::from_str::<Value>(&one).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (stored, _) = ok(&b, &["results", "show", &id, "--format", "json"]);
    assert_eq!(stored, one, "kept as printed");

    // rm: by id (prefix), by label; never anything else.
    let (said, _) = ok(&b, &["results", "rm", &id[..10]]);
    assert_eq!(
        said.lines().next().unwrap().split(" from ").next(),
        Some("removed 1 run(s)")
    );
    let (said, _) = ok(&b, &["results", "rm", "--label", "arm"]);
    assert!(said.starts_with("removed 2 run(s)"), "{said}");
    let (said, _) = ok(&b, &["results", "rm", "--label", "arm"]);
    assert!(said.starts_with("removed 0 run(s)"), "{said}");
    let left = list(&b, &[]);
    assert_eq!(left.len(), 2);
    assert!(left.iter().all(|r| r["label"] != "arm"));
    assert_eq!(list(&a, &[]).len(), 4, "the other store is untouched");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = temp();
    let db = dir.path().join("r.db");
    ok(&db, &["run", "null", "--time", "0.05s"]);
    let not_json = dir.path().join("notes.txt");
    std::fs::write(&not_json, "hello").unwrap();
    let other_json = dir.path().join("other.json");
    std::fs::write(&other_json, r#"{"results": []}"#).unwrap();
    let missing = dir.path().join("missing.json");
    usage_error(
        &db,
        &["results", "show", "0000dead"],
        "no stored run has the id '0000dead'",
    );
    usage_error(
        &db,
        &["results", "rm", "0000dead"],
        "no stored run has the id",
    );
    usage_error(
        &db,
        &["results", "import", missing.to_str().unwrap()],
        "cannot read",
    );
    usage_error(
        &db,
        &["results", "import", not_json.to_str().unwrap()],
        "is not a hostbench export or result: it is not JSON",
    );
    usage_error(
        &db,
        &["results", "import", other_json.to_str().unwrap()],
        "no \"schema\" field",
    );
    usage_error(
        &db,
        &["results", "list", "--since", "last tuesday"],
        "--since",
    );
    usage_error(
        &db,
        &["results", "export", "--until", "2026-02-30"],
        "is not a date",
    );
    usage_error(
        &db,
        &[
            "results",
            "list",
            "--results-db",
            not_json.to_str().unwrap(),
        ],
        "not a hostbench results store",
    );
    usage_error(
        &db,
        &["run", "null", "--results-db", "mysql://h/db"],
        "postgres:// URL",
    );
    usage_error(&db, &["cpu", "--label=", "run"], "--label needs");
    usage_error(
        &db,
        &["cpu", "--label", "x", "run"],
        "did you mean --label=x?",
    );
    // Nothing above changed the store.
    assert_eq!(list(&db, &[]).len(), 1);
    assert_eq!(std::fs::read_to_string(&not_json).unwrap(), "hello");
}

#[test]
fn failed_save_is_one_warning_and_keeps_the_exit_code() {
    let dir = temp();
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    let db = blocker.join("results.db");
    for args in [
        &["cpu", "--cpu-max-prime=100", "--time=0.05", "run"][..],
        &[
            "cpu",
            "--cpu-max-prime=100",
            "--time=0.05",
            "--verbosity=0",
            "run",
        ][..],
        &[
            "run", "null", "--time", "0.05s", "--format", "json", "--quiet",
        ][..],
    ] {
        let out = hb_with_store(&db).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let warn: Vec<&str> = err.lines().filter(|l| l.contains("not saved")).collect();
        assert_eq!(warn.len(), 1, "{args:?}: {err}");
        assert!(
            warn[0].starts_with("WARNING: the result was not saved: cannot create"),
            "{err}"
        );
    }
    // A run that fails still fails with its own code when the save fails too.
    let out = hb_with_store(&db)
        .args([
            "cpu",
            "--cpu-max-prime=100000",
            "--time=2",
            "--rate=1000000",
            "run",
        ])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

fn stop_reasons(db: &Path) -> Vec<String> {
    list(db, &[])
        .iter()
        .map(|r| r["stop_reason"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn interrupted_and_forced_shutdown_runs_are_saved() {
    let dir = temp();
    let db = dir.path().join("r.db");
    let child = spawn_piped(hb_std().env("HOSTBENCH_RESULTS_DB", &db).args([
        "cpu",
        "--cpu-max-prime=2000",
        "--time=30",
        "--label=cut",
        "run",
    ]));
    std::thread::sleep(Duration::from_millis(700));
    let out = interrupt(child);
    assert_eq!(out.status.code(), Some(130));
    assert_eq!(stop_reasons(&db), ["interrupted"]);
    let (table, _) = ok(&db, &["results", "list"]);
    assert!(table.contains("(interrupted)"), "{table}");

    let out = hb_with_store(&db)
        .args([
            "mutex",
            "--threads=2",
            "--mutex-locks=100000000",
            "--time=0.2",
            "--forced-shutdown=0.1",
            "run",
        ])
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stop_reasons(&db), ["forced_shutdown", "interrupted"]);
}

#[test]
fn concurrent_processes_all_save() {
    let dir = temp();
    let db = dir.path().join("fresh/results.db");
    // All start on a store that does not exist yet: they race to create and migrate it.
    let children: Vec<_> = (0..4)
        .map(|i| {
            hb_std()
                .env("HOSTBENCH_RESULTS_DB", &db)
                .args([
                    "run",
                    "null",
                    "--time",
                    "0.05s",
                    "--label",
                    &format!("p{i}"),
                ])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && !err.contains("not saved"), "{err}");
    }
    let mut labels: Vec<String> = list(&db, &[])
        .iter()
        .map(|r| r["label"].as_str().unwrap().to_string())
        .collect();
    labels.sort();
    assert_eq!(labels, ["p0", "p1", "p2", "p3"]);
}

#[test]
fn saving_is_mentioned_on_stderr_only() {
    let dir = temp();
    let db = dir.path().join("r.db");
    let (out, err) = ok(
        &db,
        &[
            "cpu",
            "--cpu-max-prime=100",
            "--time=0.05",
            "--verbosity=4",
            "run",
        ],
    );
    assert!(!out.contains("saved"), "{out}");
    let id = list(&db, &[])[0]["id"].as_str().unwrap().to_string();
    assert!(
        err.contains(&format!("saved as {id} in {}", db.display())),
        "{err}"
    );
    let (_, err) = ok(&db, &["cpu", "--cpu-max-prime=100", "--time=0.05", "run"]);
    assert!(
        !err.contains("saved"),
        "sysbench layout at verbosity 3 stays as sysbench: {err}"
    );
}

#[test]
fn help_lists_the_saving_options() {
    let (out, _) = run_ok(&["--help"]);
    for o in ["--label", "--no-save", "--results-db", "results"] {
        assert!(out.contains(o), "{o} missing from --help:\n{out}");
    }
    let (out, _) = run_ok(&["run", "--help"]);
    for o in ["--label <NAME>", "--no-save", "--results-db <PATH|URL>"] {
        assert!(out.contains(o), "{o} missing from run --help:\n{out}");
    }
}

/// PostgreSQL through the binary: `HOSTBENCH_TEST_PG_URL` set = must work; unset = skip.
#[test]
fn postgres_store_from_the_command_line() {
    let url = match std::env::var("HOSTBENCH_TEST_PG_URL") {
        Ok(u) if !u.trim().is_empty() => u,
        _ => {
            eprintln!(
                "skipped postgres_store_from_the_command_line: HOSTBENCH_TEST_PG_URL is not set"
            );
            return;
        }
    };
    let schema = format!(
        "hostbench_test_cli_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    );
    struct DropSchema(String, String);
    impl Drop for DropSchema {
        fn drop(&mut self) {
            if let Ok(mut c) = postgres::Client::connect(&self.0, postgres::NoTls) {
                let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.1));
            }
        }
    }
    let _cleanup = DropSchema(url.clone(), schema.clone());
    let sep = if url.contains('?') { '&' } else { '?' };
    let loc = format!("{url}{sep}schema={schema}");
    let db = PathBuf::from(&loc);
    ok(
        &db,
        &[
            "cpu",
            "--cpu-max-prime=100",
            "--time=0.05",
            "--label=pg",
            "run",
        ],
    );
    ok(
        &db,
        &[
            "run",
            "null",
            "--time",
            "0.05s",
            "--results-db",
            &loc,
            "--label",
            "pg2",
        ],
    );
    let runs = list(&db, &[]);
    assert_eq!(runs.len(), 2, "{runs:?}");
    let dir = temp();
    let file = dir.path().join("pg.json");
    ok(&db, &["results", "export", "-o", file.to_str().unwrap()]);
    let sqlite = dir.path().join("copy.db");
    ok(&sqlite, &["results", "import", file.to_str().unwrap()]);
    let (again, _) = ok(&sqlite, &["results", "export"]);
    assert_eq!(
        again,
        std::fs::read_to_string(&file).unwrap(),
        "PostgreSQL → SQLite exactly"
    );
    let (said, _) = ok(&db, &["results", "rm", "--label", "pg"]);
    assert!(said.starts_with("removed 1 run(s)"), "{said}");
    assert_eq!(list(&db, &[]).len(), 1);
}

/// The id of the newest run in `db`.
fn newest(db: &Path) -> String {
    list(db, &["--limit", "1"])[0]["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// hostbench's own `results show` layout writes a time in the unit of its size everywhere:
/// the p99 headline as the latency line does (it printed `3719167.00 ns` beside `35.55 µs`),
/// and a table column named `min_ns` without a second `(ns)`.
#[test]
fn native_show_writes_times_in_one_way() {
    let dir = temp();
    let db = dir.path().join("r.db");
    let s = Serve::start(&[]);
    ok(&db, &["ab", "-n", "200", "-c", "2", &s.url]);
    let id = newest(&db);
    let out = ok(&db, &["results", "show", &id]).0;
    let p99 = out
        .lines()
        .find(|l| l.contains("99th percentile latency"))
        .unwrap_or_else(|| panic!("no p99 headline:\n{out}"));
    let value = p99.trim().rsplit("  ").next().unwrap().trim();
    let (num, unit) = value.split_once(' ').unwrap_or_else(|| panic!("{p99}"));
    assert!(["ns", "µs", "ms", "s"].contains(&unit), "{p99}");
    let num: f64 = num.parse().unwrap_or_else(|_| panic!("{p99}"));
    assert!(unit == "ns" || (1.0..1000.0).contains(&num), "{p99}");
    assert!(!out.contains("_ns (ns)"), "{out}");
    assert!(out.contains("min_ns"), "{out}");
}

/// `results show ID -f FORMAT`: stdout.
fn show(db: &Path, id: &str, format: &str) -> String {
    ok(db, &["results", "show", id, "-f", format]).0
}

/// A stored run as JSON, edited by `edit`, imported into the store `into`.
fn import_edited(from: &Path, id: &str, into: &Path, edit: impl Fn(&mut Value)) {
    let mut v: Value = serde_json::from_str(&show(from, id, "json")).unwrap();
    edit(&mut v);
    let file = into.with_extension("json");
    std::fs::write(&file, serde_json::to_string(&v).unwrap()).unwrap();
    ok(into, &["results", "import", file.to_str().unwrap()]);
}

/// Runs of every peer grammar, each shown again from the store in its layout: the report
/// is what the run printed, byte for byte (the same stored result, so the same times).
/// Then the same results with `config.command_line` replaced render the same: no renderer
/// reads the command line.
#[test]
fn show_prints_each_peer_layout_as_the_run_printed_it() {
    let dir = temp();
    let db = dir.path().join("r.db");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let s = Serve::start(&[]);
    let port = s.port.to_string();
    // (layout, what the run printed on stdout, whether that is the whole of it).
    let mut runs: Vec<(String, &str, String, bool)> = Vec::new();
    let mut add = |format: &'static str, args: &[&str], whole: bool| {
        let (out, _) = ok_in(&db, &work, args);
        runs.push((newest(&db), format, out, whole));
    };
    // sysbench: the final report (its header and interval lines are printed live).
    add(
        "sysbench",
        &[
            "cpu",
            "--cpu-max-prime=2000",
            "--events=200",
            "--time=0",
            "--histogram",
            "run",
        ],
        false,
    );
    // fio: the file layout line, the pid and group_reporting's merged block included.
    add(
        "fio",
        &[
            "fio",
            "--name=t",
            "--size=256k",
            "--bs=4k",
            "--rw=randrw",
            "--numjobs=2",
            "--group_reporting",
        ],
        true,
    );
    add(
        "fio",
        &[
            "fio",
            "--name=j",
            "--ioengine=null",
            "--size=1m",
            "--output-format=json+",
        ],
        true,
    );
    add(
        "ab",
        &["ab", "-n", "300", "-c", "2", "-k", "-d", "-S", &s.url],
        true,
    );
    add(
        "ab",
        &["ab", "-n", "20", "-w", "-x", "border=1", &s.url],
        true,
    );
    add(
        "httperf",
        &[
            "httperf",
            "--server",
            "127.0.0.1",
            "--port",
            &port,
            "--num-conns",
            "20",
            "--timeout",
            "5",
            "--hog",
        ],
        true,
    );
    add(
        "iozone",
        &[
            "iozone", "-s", "64k", "-r", "4k", "-i", "0", "-i", "1", "-e", "-R", "-f", "io.tmp",
        ],
        true,
    );
    add(
        "stream",
        &["stream", "--array-size=20000", "--ntimes=3", "--threads=1"],
        true,
    );
    let edited = dir.path().join("edited.db");
    for (id, format, printed, whole) in &runs {
        // Each grammar's layout options are in the stored result, as the schema says.
        let stored: Value = serde_json::from_str(&show(&db, id, "json")).unwrap();
        assert_valid(&stored, &format!("{format} run {id}"));
        let grammar = &stored["config"]["layout"]["grammar"];
        if *format == "stream" {
            assert!(grammar.is_null(), "STREAM's layout takes no options");
        } else {
            assert_eq!(grammar, *format, "{format} run {id}");
        }
        let shown = show(&db, id, format);
        if *whole {
            assert_eq!(&shown, printed, "{format} run {id}");
        } else {
            assert!(
                printed.ends_with(&shown) && shown.contains("General statistics:"),
                "{format} run {id}: the report printed:\n{printed}\nshown:\n{shown}"
            );
        }
        import_edited(&db, id, &edited, |v| {
            v["config"]["command_line"] = serde_json::json!(["hostbench", "run", "null", "-R"]);
        });
        assert_eq!(
            show(&edited, id, format),
            shown,
            "{format} run {id} with another command line"
        );
    }
    // What each layout put in the run's report, to be sure the layouts were the peers'.
    let shown = |i: usize| show(&db, &runs[i].0, runs[i].1);
    assert!(shown(0).contains("Latency histogram"), "{}", shown(0));
    assert!(shown(1).contains("Laying out IO file"), "{}", shown(1));
    assert!(shown(1).contains("(groupid=0, jobs=2)"), "{}", shown(1));
    assert!(shown(2).contains("\"bins\" : {"), "{}", shown(2));
    assert!(!shown(3).contains("Percentage of the requests"), "-d");
    assert!(shown(4).contains("<table border=1>"), "{}", shown(4));
    assert!(
        shown(5).starts_with("httperf --timeout=5 --hog "),
        "{}",
        shown(5)
    );
    assert!(shown(6).contains("Excel output is below:"), "{}", shown(6));
    assert!(shown(6).contains("\tInclude fsync in write timing\n"));
    assert!(shown(7).contains("Triad:"), "{}", shown(7));
}

/// A layout a run has no data for is an error (exit 2) naming the layouts it can be shown
/// in; runs stored before results recorded what a layout needs say so; a run typed in
/// another grammar shows in a layout that takes nothing from its command line.
#[test]
fn show_refuses_a_layout_a_run_has_no_data_for() {
    let dir = temp();
    let db = dir.path().join("r.db");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    ok(
        &db,
        &[
            "cpu",
            "--cpu-max-prime=1000",
            "--events=20",
            "--time=0",
            "run",
        ],
    );
    let cpu = newest(&db);
    usage_error(
        &db,
        &["results", "show", &cpu, "-f", "fio"],
        "(cpu run typed in the sysbench grammar) cannot be shown in fio's layout: fio's \
         layout is for disk.fio runs, not cpu; it can be shown as: text, json, sysbench",
    );
    usage_error(
        &db,
        &["results", "show", &cpu, "-f", "ab"],
        "it can be shown as: text, json, sysbench",
    );
    // A native run of a sysbench test takes sysbench's defaults (no histogram).
    ok(
        &db,
        &[
            "run",
            "cpu",
            "--set",
            "max_prime=1000",
            "-n",
            "20",
            "--time",
            "0",
        ],
    );
    let native = show(&db, &newest(&db), "sysbench");
    assert!(native.starts_with("CPU speed:\n"), "{native}");
    assert!(!native.contains("Latency histogram"), "{native}");
    // IOzone's header echoes IOzone's command line: a native iozone run has none.
    ok_in(
        &db,
        &work,
        &[
            "run",
            "iozone",
            "--set",
            "file_size=64K",
            "--format",
            "json",
        ],
    );
    let native_iozone = newest(&db);
    usage_error(
        &db,
        &["results", "show", &native_iozone, "-f", "iozone"],
        "IOzone's header echoes the IOzone command line, and this run was typed in the \
         native grammar; it can be shown as: text, json\n",
    );
    // An ab run shows in httperf's layout (it gave none of httperf's options).
    let s = Serve::start(&[]);
    ok(&db, &["ab", "-n", "10", &s.url]);
    let ab = newest(&db);
    let as_httperf = show(&db, &ab, "httperf");
    assert!(
        as_httperf.starts_with("httperf --client=0/1 --server=127.0.0.1"),
        "{as_httperf}"
    );
    usage_error(
        &db,
        &["results", "show", &ab, "-f", "stream"],
        "stream's layout is for stream runs, not http.load; it can be shown as: text, json, \
         ab, httperf",
    );
    // Runs stored before results carried the layout data (result schema 1.0).
    ok_in(
        &db,
        &work,
        &["fio", "--name=o", "--ioengine=null", "--size=64k"],
    );
    let fio = newest(&db);
    ok_in(
        &db,
        &work,
        &["iozone", "-s", "64k", "-i", "0", "-f", "o.tmp"],
    );
    let iozone = newest(&db);
    let old = dir.path().join("old.db");
    let strip = |v: &mut Value| {
        let o = v.as_object_mut().unwrap();
        o.remove("schema_minor");
        o.remove("fio");
        v["config"].as_object_mut().unwrap().remove("layout");
    };
    for id in [&cpu, &ab, &fio, &iozone] {
        import_edited(&db, id, &old, strip);
    }
    for (id, layout, what) in [
        (&cpu, "sysbench", "sysbench's layout options"),
        (&ab, "ab", "ab's layout options"),
        (&fio, "fio", "fio's statistics as one typed section"),
        (&iozone, "iozone", "IOzone's layout options"),
    ] {
        usage_error(
            &old,
            &["results", "show", id, "-f", layout],
            &format!(
                "cannot be shown in {layout}'s layout: it was stored by hostbench {} before \
                 results recorded {what} (result schema 1.0; 1.1 has it)",
                env!("CARGO_PKG_VERSION")
            ),
        );
    }
    // What needs nothing new still shows: the old ab run in httperf's layout.
    assert_eq!(show(&old, &ab, "httperf"), as_httperf);
}

/// Housekeeping: `rm` with `list`'s filters and `--dry-run`, `relabel`, `annotate` (shown by
/// `compare`, kept through export/import, schema-valid), `list` showing threads and the
/// parameters that differ from the defaults, `--workload` by the name a workload is run by,
/// a short id prefix that says how long it must be, and an export re-formatted by another
/// program recognised as the runs already stored.
#[test]
fn housekeeping_rm_filters_relabel_annotate_list_details() {
    let dir = temp();
    let a = dir.path().join("a.db");
    let b = dir.path().join("b.db");
    for l in ["old", "old"] {
        let args = quick_null(l);
        ok(&a, &args.iter().map(String::as_str).collect::<Vec<_>>());
    }
    ok(
        &a,
        &[
            "cpu",
            "--cpu-max-prime=3000",
            "--threads=2",
            "--time=0.1",
            "--label=cpu",
            "run",
        ],
    );

    // list: threads and the parameters that differ from the defaults.
    let cpu = list(&a, &["--workload", "cpu"]);
    assert_eq!(cpu.len(), 1);
    assert_eq!(cpu[0]["threads"], 2);
    assert_eq!(cpu[0]["params"]["max_prime"], "3000", "{}", cpu[0]);
    let (table, _) = ok(&a, &["results", "list", "--label", "cpu"]);
    assert!(table.lines().next().unwrap().contains("THREADS"), "{table}");
    assert!(table.contains("max_prime=3000"), "{table}");
    // --workload takes the name a workload is run by (`fio` runs `disk.fio`).
    let fio = dir.path().join("fio");
    std::fs::create_dir(&fio).unwrap();
    ok_in(
        &a,
        &fio,
        &[
            "fio",
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--rw=read",
            "--output-format=json",
        ],
    );
    assert_eq!(list(&a, &["--workload", "fio"]).len(), 1);
    // A job file's text is its jobs' names in the table, not its lines.
    let (table, _) = ok(&a, &["results", "list", "--workload", "fio"]);
    assert!(!table.contains("[x]") && !table.contains("\\n"), "{table}");
    assert!(table.contains("jobs=x "), "{table}");
    assert_eq!(list(&a, &["--workload", "disk.fio"]).len(), 1);
    assert_eq!(list(&a, &["--workload", "oltp_point_select"]).len(), 0);
    ok(&a, &["results", "rm", "--workload", "fio"]);

    // relabel and annotate: index and stored JSON change together.
    let (said, _) = ok(&a, &["results", "relabel", "old", "graviton"]);
    assert!(said.starts_with("relabelled 2 run(s)"), "{said}");
    assert_eq!(list(&a, &["--label", "graviton"]).len(), 2);
    assert_eq!(list(&a, &["--label", "old"]).len(), 0);
    ok(
        &a,
        &[
            "results",
            "annotate",
            "graviton",
            "instance=c7g.large",
            "price=0.0725/h",
        ],
    );
    ok(&a, &["results", "annotate", "cpu", "instance=c6i.large"]);
    let id = list(&a, &["--label", "graviton"])[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (stored, _) = ok(&a, &["results", "show", &id, "--format", "json"]);
    let v: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(v["label"], "graviton");
    assert_eq!(v["annotations"]["instance"], "c7g.large");
    assert_eq!(v["schema_minor"], 16);
    assert!(violations(&v).is_empty(), "{:?}", violations(&v));
    ok(&a, &["results", "annotate", &id, "price="]);
    let (stored, _) = ok(&a, &["results", "show", &id, "--format", "json"]);
    let v: Value = serde_json::from_str(&stored).unwrap();
    assert!(v["annotations"].get("price").is_none(), "KEY= removes: {v}");
    usage_error(
        &a,
        &["results", "annotate", &id, "api_key=abc"],
        "never stores",
    );
    usage_error(
        &a,
        &["results", "annotate", &id, "Instance=x"],
        "not a note key",
    );
    usage_error(
        &a,
        &["results", "annotate", &id, "instance"],
        "not KEY=VALUE",
    );
    usage_error(
        &a,
        &["results", "relabel", "nosuchlabel", "x"],
        "no stored run",
    );
    // compare shows each side's notes.
    let (cmp, _) = ok(&a, &["compare", "graviton", "graviton", "--format", "json"]);
    let c: Value = serde_json::from_str(&cmp).unwrap();
    assert!(
        c["sides"][0]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("instance=c7g.large")),
        "{}",
        c["sides"]
    );
    let (text, _) = ok(&a, &["compare", "graviton", "graviton"]);
    assert!(text.contains("instance=c7g.large"), "{text}");

    // A short prefix says how long it must be.
    usage_error(&a, &["results", "show", "ab"], "at least 4 characters");

    // An export re-formatted by another program (members sorted, indented) imports as the
    // runs already stored, not as conflicts.
    let file = dir.path().join("export.json");
    ok(&a, &["results", "export", "-o", file.to_str().unwrap()]);
    ok(&b, &["results", "import", file.to_str().unwrap()]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let mut pretty = serde_json::to_string_pretty(&doc).unwrap();
    pretty.push('\n');
    let file2 = dir.path().join("export-pretty.json");
    std::fs::write(&file2, &pretty).unwrap();
    let (said, _) = ok(&b, &["results", "import", file2.to_str().unwrap()]);
    assert!(
        said.contains("imported 0 run(s)") && said.contains("3 already"),
        "{said}"
    );

    // rm: the filters select, --dry-run removes nothing, ids and filters do not mix.
    let (said, _) = ok(&a, &["results", "rm", "--workload", "null", "--dry-run"]);
    assert!(said.starts_with("would remove 2 run(s)"), "{said}");
    assert_eq!(said.matches("graviton").count(), 2, "{said}");
    assert_eq!(list(&a, &[]).len(), 3);
    usage_error(&a, &["results", "rm"], "say which runs to remove");
    usage_error(
        &a,
        &["results", "rm", &id, "--workload", "null"],
        "cannot be used",
    );
    let (said, _) = ok(
        &a,
        &["results", "rm", "--workload", "null", "--since", "1d"],
    );
    assert!(said.starts_with("removed 2 run(s)"), "{said}");
    let left = list(&a, &[]);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["workload"], "cpu");
    assert_eq!(list(&b, &[]).len(), 3, "the other store is untouched");
}

/// On a terminal, `rm` asks before removing several runs: `n` (or anything but y/yes)
/// removes nothing, `y` removes them, `-y` does not ask. The terminal is a pseudo-terminal
/// from util-linux's `script`.
#[test]
fn rm_asks_on_a_terminal_before_removing_several_runs() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no `script` (util-linux) to give hostbench a terminal");
        return;
    }
    let dir = temp();
    let db = dir.path().join("r.db");
    for _ in 0..2 {
        let args = quick_null("many");
        ok(&db, &args.iter().map(String::as_str).collect::<Vec<_>>());
    }
    let on_a_terminal = |answer: &str, extra: &str| -> String {
        let cmd = format!("{} results rm --label many {extra}", bin().display());
        let out = std::process::Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .env("HOSTBENCH_RESULTS_DB", &db)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                // Before the answer: hostbench reads it after asking.
                std::thread::sleep(Duration::from_millis(300));
                c.stdin.take().unwrap().write_all(answer.as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let said = on_a_terminal("n\n", "");
    assert!(said.contains("remove 2 runs from"), "{said}");
    assert!(said.contains("[y/N]"), "{said}");
    assert!(said.contains("nothing removed"), "{said}");
    assert_eq!(list(&db, &["--label", "many"]).len(), 2);
    let said = on_a_terminal("y\n", "");
    assert!(said.contains("removed 2 run(s)"), "{said}");
    assert_eq!(list(&db, &["--label", "many"]).len(), 0);
    for _ in 0..2 {
        let args = quick_null("many");
        ok(&db, &args.iter().map(String::as_str).collect::<Vec<_>>());
    }
    let said = on_a_terminal("", "-y");
    assert!(!said.contains("[y/N]"), "{said}");
    assert!(said.contains("removed 2 run(s)"), "{said}");
}

/// A note's value is held to the same rules as its key: one that carries a password (a
/// URL's user info, `password=...`) is refused, not stored in clear (an export would mask
/// it, and importing that export back would then conflict with the stored run), and a
/// `price` note that `compare` cannot read is refused at once rather than breaking every
/// later `compare` and `report` of those runs.
#[test]
fn annotate_refuses_secret_values_and_unreadable_prices() {
    let dir = temp();
    let a = dir.path().join("a.db");
    let args = quick_null("n");
    ok(&a, &args.iter().map(String::as_str).collect::<Vec<_>>());
    usage_error(
        &a,
        &["results", "annotate", "n", "note=postgres://u:hunter2@db/x"],
        "password",
    );
    usage_error(
        &a,
        &["results", "annotate", "n", "note=password=hunter2"],
        "password",
    );
    usage_error(&a, &["results", "annotate", "n", "price=abc"], "price");
    let (stored, _) = ok(&a, &["results", "export", "--label", "n"]);
    assert!(!stored.contains("hunter2"), "{stored}");
    assert!(!stored.contains("\"annotations\""), "{stored}");
    // What is allowed still is: a readable price, a URL without a password.
    ok(
        &a,
        &[
            "results",
            "annotate",
            "n",
            "price=$0.10/h",
            "note=https://example.com/runbook",
        ],
    );
    // Export, then import into the same store: the same runs, nothing conflicting.
    let file = dir.path().join("n.json");
    ok(
        &a,
        &[
            "results",
            "export",
            "--label",
            "n",
            "-o",
            file.to_str().unwrap(),
        ],
    );
    let (said, _) = ok(&a, &["results", "import", file.to_str().unwrap()]);
    assert!(said.contains("1 already stored"), "{said}");
}

/// `relabel` and `annotate` take an id or a label; a word that is both (a label that is
/// also the start of a run id) is refused, as `compare` refuses it, instead of silently
/// changing the run with that id; `label:` and `id:` say which is meant.
#[test]
fn relabel_and_annotate_refuse_a_word_that_is_both_label_and_id() {
    let dir = temp();
    let a = dir.path().join("a.db");
    for l in ["x", "y"] {
        let args = quick_null(l);
        ok(&a, &args.iter().map(String::as_str).collect::<Vec<_>>());
    }
    let (listed, _) = ok(&a, &["results", "list", "--label", "x", "-f", "json"]);
    let v: Value = serde_json::from_str(&listed).unwrap();
    let id_x = v[0]["id"].as_str().unwrap().to_string();
    let prefix = &id_x[..6];
    // The run labelled y is now labelled with the start of x's id.
    ok(&a, &["results", "relabel", "y", prefix]);
    usage_error(&a, &["results", "relabel", prefix, "z"], "label:");
    usage_error(&a, &["results", "annotate", prefix, "k=v"], "label:");
    let label_of = |id: &str| {
        let (s, _) = ok(&a, &["results", "show", id, "--format", "json"]);
        serde_json::from_str::<Value>(&s).unwrap()["label"].clone()
    };
    assert_eq!(label_of(&id_x), "x", "nothing changed");
    ok(
        &a,
        &["results", "relabel", &format!("label:{prefix}"), "y2"],
    );
    assert_eq!(label_of(&id_x), "x");
    let (listed, _) = ok(&a, &["results", "list", "--label", "y2", "-f", "json"]);
    assert_eq!(
        serde_json::from_str::<Value>(&listed)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        1
    );
    ok(&a, &["results", "relabel", "y2", prefix]);
    ok(&a, &["results", "annotate", &format!("id:{prefix}"), "k=v"]);
    assert_eq!(label_of(&id_x), "x");
    let (s, _) = ok(&a, &["results", "show", &id_x, "--format", "json"]);
    assert_eq!(
        serde_json::from_str::<Value>(&s).unwrap()["annotations"]["k"],
        "v"
    );
}

#[test]
fn an_import_that_breaks_the_result_schema_is_refused() {
    // A result edited into nonsense (a negative rate) once imported with exit 0: an import
    // is checked against schemas/result.v1.json, and names the field.
    let dir = temp();
    let a = dir.path().join("a.db");
    ok(&a, &["run", "null", "-n", "100", "--label", "src"]);
    let (out, _) = ok(&a, &["results", "list", "--label", "src", "-f", "json"]);
    let id = serde_json::from_str::<Value>(&out).unwrap()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut v: Value = serde_json::from_str(&show(&a, &id, "json")).unwrap();
    v["metrics"]["events_per_s"] = serde_json::json!(-5.0);
    let file = dir.path().join("bad.json");
    std::fs::write(&file, serde_json::to_string(&v).unwrap()).unwrap();
    let b = dir.path().join("b.db");
    usage_error(
        &b,
        &["results", "import", file.to_str().unwrap()],
        "/metrics/events_per_s: -5.0 is less than the minimum of 0",
    );
    assert!(!b.exists() || list(&b, &[]).is_empty());
    // The unedited run imports.
    v["metrics"]["events_per_s"] = serde_json::json!(5.0);
    std::fs::write(&file, serde_json::to_string(&v).unwrap()).unwrap();
    ok(&b, &["results", "import", file.to_str().unwrap()]);
    assert_eq!(list(&b, &[]).len(), 1);
}
