//! Defects a second user review of `hostbench fio` found (issue 21), each compared with the
//! installed fio 3.33 where it applies: a failed job stored as a clean run, Ctrl-C during
//! `ramp_time`, advice naming a command that does not exist, the order of the start-up lines
//! on a terminal, the variant `compare` shows for job files, the exit status of a report cut
//! short by a closed pipe, and the message of an unsupported option.

use super::common;
use super::fio::tmp;
use super::fio_files::fio;
use super::fio_seq::need_fio;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// `hostbench ARGS` in `dir`, saving into the store `db`: (exit code, stdout, stderr).
fn hb_saving(dir: &Path, db: &Path, args: &[&str]) -> (i32, String, String) {
    let o = common::hb_with_store(db)
        .current_dir(dir)
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        err,
    )
}

/// The stored runs of `db`, newest first, as `results list --format json` gives them.
fn stored(dir: &Path, db: &Path) -> Vec<Value> {
    let (code, out, err) = hb_saving(dir, db, &["results", "list", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str::<Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The stored result of run `id`.
fn shown(dir: &Path, db: &Path, id: &str) -> Value {
    let (code, out, err) = hb_saving(dir, db, &["results", "show", id, "-f", "json"]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// An ftruncate job's reads fail with EINVAL: the job ends with err=22 and hostbench exits
/// 1, as fio does. The stored run says it failed (outcome `error`, the job's error), `results
/// list` marks it, and `compare` does not take it for a clean repetition.
#[test]
fn a_failed_job_is_stored_as_a_failed_run() {
    let d = tmp("rv2-failed");
    let db = d.join("r.db");
    let args = [
        "fio",
        "--name=a",
        "--ioengine=ftruncate",
        "--rw=read",
        "--size=16k",
        "--bs=4k",
        "--filename=ft",
        "--label=rv2-failed",
    ];
    let (code, _, err) = hb_saving(&d, &db, &args);
    assert_eq!(code, 1, "{err}");
    if need_fio("a_failed_job_is_stored_as_a_failed_run") {
        let p = fio(&d, &args[1..args.len() - 1]);
        assert_eq!(p.code, code, "fio's exit status: {}", p.err);
    }
    let (code2, _, _) = hb_saving(&d, &db, &args);
    assert_eq!(code2, 1);
    let runs = stored(&d, &db);
    assert_eq!(runs.len(), 2, "{runs:?}");
    for r in &runs {
        assert_eq!(r["stop_reason"], "error", "{r}");
    }
    let id = runs[0]["id"].as_str().unwrap();
    let v = shown(&d, &db, id);
    let why = v["outcome"]["error"].as_str().unwrap_or_default();
    assert!(
        why.contains("job 'a' ended with err=22 (Invalid argument)"),
        "{}",
        v["outcome"]
    );
    let (code, list, _) = hb_saving(&d, &db, &["results", "list"]);
    assert_eq!(code, 0);
    assert_eq!(list.matches("(error)").count(), 2, "{list}");
    // The two failed runs compared: said to be runs that did not end normally.
    let other = runs[1]["id"].as_str().unwrap();
    let (_, out, err) = hb_saving(&d, &db, &["compare", id, other]);
    assert!(
        format!("{out}{err}").contains("did not end normally"),
        "{out}\n{err}"
    );
    // Nor does `trend`: shown, not judged, no history for the runs after them.
    let (code, out, err) = hb_saving(&d, &db, &["trend", "rv2-failed"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.matches("not judged: the run ended early (error)")
            .count(),
        2,
        "{out}"
    );
}

/// Starts `hostbench fio ARGS` (or fio when `peer`) in `dir` saving into `db`, sends SIGINT
/// after `after`, and returns (exit code, stdout, stderr).
fn interrupted(
    dir: &Path,
    db: &Path,
    args: &[&str],
    peer: bool,
    after: Duration,
) -> (i32, String, String) {
    let mut cmd = if peer {
        std::process::Command::new("fio")
    } else {
        let mut c = common::hb_std();
        c.env("HOSTBENCH_RESULTS_DB", db).arg("fio");
        c
    };
    cmd.args(args).current_dir(dir);
    let child = common::spawn_piped(&mut cmd);
    std::thread::sleep(after);
    let o = common::interrupt(child);
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The normal layout's first job block: its lines from the `(groupid=` header to the blank
/// line after it.
fn first_block(out: &str) -> Vec<&str> {
    out.lines()
        .skip_while(|l| !l.contains("(groupid="))
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

/// Ctrl-C in ramp time: fio says "terminating on signal 2" and reports the job with what
/// its ramp time did (I/O counted, no latency: its statistics were never started again);
/// hostbench does the same, and stores the run as interrupted with no figure (not 0 IOPS).
#[test]
fn ctrl_c_in_ramp_time_reports_the_ramp_as_fio_and_stores_no_figure() {
    let d = tmp("rv2-ramp");
    let db = d.join("r.db");
    let args = [
        "--name=x",
        "--ramp_time=20",
        "--runtime=30",
        "--time_based",
        "--rw=read",
        "--size=1m",
        "--filename=f1",
        "--label=rv2-ramp",
    ];
    let check = |who: &str, code: i32, out: &str| {
        assert!(
            out.contains("\nfio: terminating on signal 2\n"),
            "{who}:\n{out}"
        );
        let block = first_block(out);
        assert!(!block.is_empty(), "{who}: no job block:\n{out}");
        assert!(
            block
                .iter()
                .any(|l| l.trim_start().starts_with("read: IOPS=")),
            "{who}: {block:#?}"
        );
        // No latency before ramp time ends.
        assert!(
            !block
                .iter()
                .any(|l| l.contains("clat") || l.contains("lat (")),
            "{who}: {block:#?}"
        );
        let issued = block
            .iter()
            .find(|l| l.contains("issued rwts:"))
            .unwrap_or_else(|| panic!("{who}: {block:#?}"));
        assert!(!issued.contains("total=0,"), "{who}: {issued}");
        // The signal line comes before the block.
        assert!(
            out.find("fio: terminating").unwrap() < out.find("(groupid=").unwrap(),
            "{who}:\n{out}"
        );
        assert_ne!(code, 0, "{who}");
    };
    let (code, out, err) = interrupted(&d, &db, &args, false, Duration::from_secs(2));
    assert_eq!(code, 130, "{err}");
    check("hostbench", code, &out);
    if need_fio("ctrl_c_in_ramp_time_reports_the_ramp_as_fio_and_stores_no_figure") {
        let (pcode, pout, _) = interrupted(
            &d,
            &db,
            &args[..args.len() - 1],
            true,
            Duration::from_secs(2),
        );
        check("fio", pcode, &pout);
    }
    let runs = stored(&d, &db);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["stop_reason"], "interrupted");
    assert!(runs[0]["headline"]["value"].is_null(), "{}", runs[0]);
    let v = shown(&d, &db, runs[0]["id"].as_str().unwrap());
    assert!(
        v["figures"].as_array().is_none_or(|f| f.is_empty()),
        "{}",
        v["figures"]
    );
    // The stored fio section keeps the block, as the report printed it.
    let (code, again, err) = hb_saving(
        &d,
        &db,
        &[
            "results",
            "show",
            runs[0]["id"].as_str().unwrap(),
            "-f",
            "fio",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        first_block(&again).len(),
        first_block(&out).len(),
        "{again}"
    );
    // And fio's line for the signal, where the run printed it (the stored result names
    // the signal: schema `outcome.signal`).
    check("results show", 130, &again);
    assert_eq!(v["outcome"]["signal"], 2, "{}", v["outcome"]);
    let (_, list, _) = hb_saving(&d, &db, &["results", "list"]);
    assert!(list.contains("- (interrupted)"), "{list}");
}

/// fio prints its start-up lines (each job's line, the version, "Starting 1 process")
/// before the jobs start, and its status line after them; so does hostbench (its status
/// line came first, the start-up lines with the report).
#[test]
fn the_start_up_lines_come_before_the_status_line_as_in_fio() {
    let d = tmp("rv2-order");
    let args = [
        "--name=x",
        "--rw=read",
        "--size=1m",
        "--filename=f1",
        "--time_based",
        "--runtime=3",
        "--eta=always",
        "--eta-newline=1",
    ];
    let order = |who: &str, out: &str| {
        let header = out
            .find("x: (g=0): rw=read")
            .unwrap_or_else(|| panic!("{who}: no job line:\n{out}"));
        let starting = out.find("Starting 1 process").unwrap();
        let status = out
            .find("Jobs: 1")
            .unwrap_or_else(|| panic!("{who}: no status line:\n{out}"));
        assert!(header < starting && starting < status, "{who}:\n{out}");
        // Once.
        assert_eq!(out.matches("x: (g=0)").count(), 1, "{who}:\n{out}");
    };
    let (code, out, err) = common::run_in(&d, &{
        let mut a = vec!["fio"];
        a.extend(args);
        a.push("--no-save");
        a
    });
    assert_eq!(code, 0, "{err}");
    order("hostbench", &out);
    if need_fio("the_start_up_lines_come_before_the_status_line_as_in_fio") {
        let p = fio(&d, &args);
        order("fio", &p.out);
    }
}

/// The command in the first backquotes of `line`, as words (the tests' commands have no
/// quoting).
fn advised(line: &str) -> Vec<String> {
    let cmd = line
        .split('`')
        .nth(1)
        .unwrap_or_else(|| panic!("no command in: {line}"));
    cmd.split_whitespace().map(String::from).collect()
}

/// A layout cut short by Ctrl-C says what to do with a command that exists: `hostbench
/// fio` has no cleanup (fio has none), so the advice is the same command again, which
/// finishes the file; `hostbench fileio ... prepare` advises its own cleanup command.
#[test]
fn advice_after_an_interrupted_layout_names_a_command_that_exists() {
    let d = tmp("rv2-advice");
    let db = d.join("r.db");
    let args = [
        "--name=big",
        "--rw=read",
        "--size=2g",
        "--filename=big.dat",
        "--runtime=1",
        "--time_based",
    ];
    let (code, _, err) = interrupted(&d, &db, &args, false, Duration::from_millis(400));
    assert_eq!(code, 130, "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("prepare interrupted"))
        .unwrap_or_else(|| panic!("no advice:\n{err}"));
    assert!(!line.contains("disk.fio cleanup"), "{line}");
    let cmd = advised(line);
    assert_eq!(cmd[..2], ["hostbench", "fio"], "{line}");
    // Removed (it was being created), or short.
    assert!(
        std::fs::metadata(d.join("big.dat")).map_or(true, |m| m.len() < 2 << 30),
        "the layout was not cut short"
    );
    // The same command again (which lays the file out whole and runs): checked to be the
    // command given and to parse, not run (laying out 2 GiB took 60-120 s in CI).
    assert_eq!(
        cmd[2..],
        args.iter().map(|a| a.to_string()).collect::<Vec<_>>()[..],
        "{line}"
    );
    let o = common::hb_with_store(&db)
        .current_dir(&d)
        .args(&cmd[1..])
        .arg("--parse-only")
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{cmd:?}: {err}");
    let _ = std::fs::remove_file(d.join("big.dat"));

    // sysbench's fileio: its cleanup, with the options of the prepare.
    let prep = ["fileio", "--file-total-size=3G", "--file-num=2", "prepare"];
    let mut c = common::hb_std();
    c.env("HOSTBENCH_RESULTS_DB", &db)
        .args(prep)
        .current_dir(&d);
    let child = common::spawn_piped(&mut c);
    std::thread::sleep(Duration::from_millis(400));
    let o = common::interrupt(child);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(130), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("prepare interrupted"))
        .unwrap_or_else(|| panic!("no advice:\n{err}"));
    let cmd = advised(line);
    assert_eq!(
        cmd,
        [
            "hostbench",
            "fileio",
            "--file-total-size=3G",
            "--file-num=2",
            "cleanup"
        ],
        "{line}"
    );
    let (code, _, err) = hb_saving(
        &d,
        &db,
        &cmd[1..].iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(code, 0, "{cmd:?}: {err}");
    assert!(
        !std::fs::read_dir(&d)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("test_file")),
        "cleanup left files"
    );
}

/// `compare` labels fio runs of two job files by their jobs on one line each (the job text
/// was printed whole, over several lines); the repetitions of each still group.
#[test]
fn compare_labels_fio_variants_on_one_line() {
    let d = tmp("rv2-variant");
    let db = d.join("r.db");
    std::fs::write(
        d.join("r.fio"),
        "[global]\nsize=256k\nfilename=v.dat\n\n[rd]\nrw=read\nbs=4k\n",
    )
    .unwrap();
    std::fs::write(
        d.join("w.fio"),
        "[global]\nsize=256k\nfilename=v.dat\n\n[wr]\nrw=write\nbs=64k\niodepth=2\n",
    )
    .unwrap();
    for side in ["rv2-a", "rv2-b"] {
        for _ in 0..2 {
            for f in ["r.fio", "w.fio"] {
                let label = format!("--label={side}");
                let (code, _, err) = hb_saving(&d, &db, &["fio", f, &label]);
                assert_eq!(code, 0, "{err}");
            }
        }
    }
    let (code, out, err) = hb_saving(&d, &db, &["compare", "rv2-a", "rv2-b"]);
    assert_eq!(code, 0, "{err}");
    for want in [
        "jobs=rd rw=read bs=4k iodepth=1",
        "jobs=wr rw=write bs=64k iodepth=2",
    ] {
        assert!(out.contains(want), "{want}:\n{out}");
    }
    // Nothing of the job text on lines of its own.
    assert!(
        !out.lines()
            .any(|l| l.trim().starts_with("size=") || l.trim().starts_with("[global]")),
        "{out}"
    );
    // Two runs a side in each variant.
    let (_, js, _) = hb_saving(&d, &db, &["compare", "rv2-a", "rv2-b", "-f", "json"]);
    let v: Value = serde_json::from_str(&js).unwrap();
    let variants = v["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 2, "{js}");
    for x in variants {
        assert_eq!(x["runs"][0].as_array().unwrap().len(), 2, "{x}");
        assert_eq!(x["runs"][1].as_array().unwrap().len(), 2, "{x}");
    }
}

/// `CMD | head -1`: fio's report cut short by the closed pipe ends fio (141, SIGPIPE);
/// hostbench's did not show it (0). Now fio's front-end and the other families exit 141,
/// quietly.
#[test]
fn a_report_cut_short_by_a_closed_pipe_is_not_success() {
    let d = tmp("rv2-pipe");
    let pipe = |cmd: &[&str]| -> (i32, String) {
        let o = std::process::Command::new("bash")
            .arg("-c")
            .arg("set -o pipefail; \"$@\" | head -1 >/dev/null")
            .arg("bash")
            .args(cmd)
            .current_dir(&d)
            .env("HOSTBENCH_NO_SAVE", "1")
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let bin = common::bin();
    let hb = bin.to_str().unwrap();
    let job = [
        "--name=p",
        "--rw=read",
        "--size=1m",
        "--filename=p.dat",
        "--runtime=1",
        "--time_based",
    ];
    let mut cmd = vec![hb, "fio"];
    cmd.extend(job);
    let (code, err) = pipe(&cmd);
    assert_eq!(code, 141, "{err}");
    assert!(!err.contains("panicked") && !err.contains("rror"), "{err}");
    if need_fio("a_report_cut_short_by_a_closed_pipe_is_not_success") {
        let mut f = vec!["fio"];
        f.extend(job);
        assert_eq!(pipe(&f).0, 141);
    }
    // Another family the same way.
    let (code, err) = pipe(&[hb, "cpu", "--time=1", "run"]);
    assert_eq!(code, 141, "{err}");
    // A reader that reads everything: 0.
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg("set -o pipefail; \"$@\" | cat >/dev/null")
        .arg("bash")
        .args([hb, "cpu", "--time=1", "run"])
        .env("HOSTBENCH_NO_SAVE", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
}

/// An unsupported or unknown option: one short line with the name, where it is (command
/// line, file:line), a near name if there is one, and where the supported options are
/// listed; not every option hostbench takes.
#[test]
fn an_unsupported_option_is_one_short_line() {
    let d = tmp("rv2-opt");
    std::fs::write(d.join("u.fio"), "[a]\nrw=read\nsize=1m\niodepht=1\n").unwrap();
    for (args, want) in [
        (
            vec!["fio", "--name=a", "--gpu_dev_id=0"],
            "fio: command line: fio option --gpu_dev_id is not supported by hostbench yet; remove it",
        ),
        // An option out of reach says why, still on one short line.
        (
            vec!["fio", "--name=a", "--uid=1"],
            "fio: command line: fio option --uid is not supported by hostbench yet: jobs are \
             threads",
        ),
        (
            vec!["fio", "--name=a", "--cgroup=1"],
            "fio: command line: fio option --cgroup is not supported by hostbench yet: \
             hostbench makes no blkio cgroup",
        ),
        (
            vec!["fio", "--name=a", "--iodeth=2"],
            "fio: command line: --iodeth is not a fio option (did you mean --iodepth?;",
        ),
        (
            vec!["fio", "--name=a", "--zqxwvv=2"],
            "fio: command line: --zqxwvv is not a fio option; check the spelling",
        ),
        (
            vec!["fio", "u.fio"],
            "fio: u.fio:4: 'iodepht' is not a fio option (did you mean 'iodepth'?;",
        ),
    ] {
        let (code, out, err) = common::run_in(&d, &args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        let line = err.trim();
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(line.contains(want), "{args:?}: {line}");
        assert!(line.contains("docs/fio.md"), "{line}");
        assert!(line.len() < 300, "{} characters: {line}", line.len());
    }
}

/// `--cmdhelp` (fio's option help): every job option taken, one a line in fio's layout
/// (`NAME: help`, the name 24 wide); `--cmdhelp=NAME` describes one, by its alias too; a fio
/// option not taken says so; no option at all: fio's `No such command` with the closest
/// one. `--help` no longer claims its summary is the whole list ("Any other fio option is
/// an error" while continue_on_error, kb_base, ... ran).
#[test]
fn cmdhelp_lists_every_option_taken() {
    let d = tmp("rv2-cmdhelp");
    let (code, out, err) = common::run_in(&d, &["fio", "--cmdhelp"]);
    assert_eq!(code, 0, "{err}");
    let names: Vec<&str> = out
        .lines()
        .map(|l| l.split(':').next().unwrap().trim())
        .collect();
    for want in ["bs", "continue_on_error", "kb_base", "verify", "ioengine"] {
        assert!(names.contains(&want), "{want} missing:\n{out}");
    }
    // Each one listed is described.
    for name in &names {
        let (code, o, err) = common::run_in(&d, &["fio", &format!("--cmdhelp={name}")]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(o.starts_with(&format!("{name:>20}: ")), "{name}: {o}");
    }
    let (_, out, _) = common::run_in(&d, &["fio", "--cmdhelp=blocksize"]);
    assert!(out.contains("\n               alias: blocksize\n"), "{out}");
    let (code, out, _) = common::run_in(&d, &["fio", "--cmdhelp=cgroup"]);
    assert_eq!(code, 0);
    assert!(out.contains("not supported by hostbench yet"), "{out}");
    let (code, out, err) = common::run_in(&d, &["fio", "--cmdhelp=sizee"]);
    assert_eq!(code, 0);
    assert_eq!(err, "No such command: sizee");
    assert!(
        out.starts_with(" - showing closest match\n                size: "),
        "{out}"
    );
    let (_, help, _) = common::run_in(&d, &["fio", "--help"]);
    assert!(!help.contains("Any other fio option is an error"), "{help}");
    assert!(help.contains("--cmdhelp"), "{help}");
}

/// The lines of `out` that start with `prefix`, and the index of the first one among the
/// lines (`None` when there is none).
fn lines_with<'a>(out: &'a str, prefix: &str) -> (Vec<&'a str>, Option<usize>) {
    let all: Vec<&str> = out.lines().collect();
    let at = all.iter().position(|l| l.starts_with(prefix));
    (
        all.into_iter().filter(|l| l.starts_with(prefix)).collect(),
        at,
    )
}

/// A synchronous engine asked for a deeper queue: each clone notes on stdout, as fio's
/// `thread_main` does once the engine is set up, that the depth is capped at 1 — after
/// "Starting N threads" in the normal layout, before the document in JSON. A queue engine
/// (libaio) and the null engine (fio's is synchronous only at depth 1) print none.
/// (The file is laid out first: its line comes before the notes, as in fio.)
#[test]
fn a_sync_engine_at_depth_above_1_notes_the_cap_as_fio() {
    let d = tmp("rv2-note");
    let db = d.join("r.db");
    let peer = need_fio("a_sync_engine_at_depth_above_1_notes_the_cap_as_fio");
    for (engine, fmt, notes) in [
        ("psync", "normal", 2),
        ("sync", "json", 2),
        ("mmap", "terse", 2),
        ("libaio", "normal", 0),
        ("null", "normal", 0),
    ] {
        let (e, f) = (
            format!("--ioengine={engine}"),
            format!("--output-format={fmt}"),
        );
        let args = [
            "--name=n",
            "--filename=f",
            "--size=64k",
            "--rw=read",
            "--iodepth=4",
            "--numjobs=2",
            "--thread",
            e.as_str(),
            f.as_str(),
        ];
        let mut ours = vec!["fio"];
        ours.extend_from_slice(&args);
        // (Each run lays the file out: its line is among those compared.)
        let _ = std::fs::remove_file(d.join("f"));
        let (code, out, err) = hb_saving(&d, &db, &ours);
        assert_eq!(code, 0, "{err}");
        let (got, at) = lines_with(&out, "note: ");
        assert_eq!(got.len(), notes, "{engine} {fmt}:\n{out}");
        if notes > 0 {
            assert!(got.iter().all(|l| *l
                == "note: both iodepth >= 1 and synchronous I/O engine are selected, \
                    queue depth will be capped at 1"));
            let starting = lines_with(&out, "Starting ").1;
            match fmt {
                // (after the layout's lines, which follow "Starting")
                "normal" => assert!(starting.is_some() && at > starting, "{out}"),
                _ => assert_eq!(at, Some(0), "{out}"),
            }
        }
        if peer {
            let _ = std::fs::remove_file(d.join("f"));
            let p = fio(&d, &args);
            assert_eq!(p.code, 0, "{}", p.err);
            assert_eq!(
                lines_with(&p.out, "note: "),
                (got, at),
                "{engine} {fmt}:\n{}",
                p.out
            );
        }
    }
}

/// A clone that ends with an error prints fio's `fio: pid=P, err=E/...` line on stdout
/// when it ends (before the report; without fio's source location, as the job header has
/// none), P the job header's pid; one per failed clone.
#[test]
fn a_failed_clone_prints_fios_pid_err_line() {
    let d = tmp("rv2-pidline");
    let db = d.join("r.db");
    std::fs::write(d.join("z"), vec![0u8; 64 << 10]).unwrap();
    let args = [
        "--name=a",
        "--filename=z",
        "--size=64k",
        "--rw=read",
        "--verify=md5",
        "--numjobs=2",
        "--group_reporting",
    ];
    let mut ours = vec!["fio"];
    ours.extend_from_slice(&args);
    let (code, out, _) = hb_saving(&d, &db, &ours);
    assert_eq!(code, 2, "{out}");
    let pid = out
        .split("): pid=")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .unwrap_or_else(|| panic!("no job header:\n{out}"));
    let want = format!(
        "fio: pid={pid}, err=84/func=io_u_sync_complete, error=Invalid or incomplete multibyte or wide character"
    );
    let (got, at) = lines_with(&out, "fio: pid=");
    assert_eq!(got, [want.as_str(), want.as_str()], "{out}");
    assert!(at < lines_with(&out, "a: (groupid=").1, "{out}");
    if need_fio("a_failed_clone_prints_fios_pid_err_line") {
        let p = fio(&d, &args);
        assert_eq!(p.code, code, "{}", p.err);
        // fio's line names its source file and line ("file:io_u.c:2152, "): left out.
        let theirs: Vec<String> = lines_with(&p.out, "fio: pid=")
            .0
            .iter()
            .map(|l| {
                let (head, tail) = l.split_once("/file:").unwrap();
                let pid_free = head.split(", ").nth(1).unwrap();
                format!("{pid_free}/{}", tail.split_once(", ").unwrap().1)
            })
            .collect();
        let ours: Vec<String> = got
            .iter()
            .map(|l| l.split(", ").skip(1).collect::<Vec<_>>().join(", "))
            .collect();
        assert_eq!(ours, theirs, "{}", p.out);
    }
}

/// fio's JSON `eta` of a finished run: its estimate of the time left, which it makes only
/// once 3 s have passed (INT_MAX before, 0 for a job that is done); `elapsed` is the whole
/// seconds since the start, rounded up.
#[test]
fn json_eta_and_elapsed_are_fios() {
    let d = tmp("rv2-eta");
    let db = d.join("r.db");
    let peer = need_fio("json_eta_and_elapsed_are_fios");
    for (runtime, eta) in [(None, 2147483647), (Some("--runtime=3"), 0)] {
        let mut args = vec![
            "--name=e",
            "--filename=f",
            "--size=64k",
            "--rw=read",
            "--output-format=json",
        ];
        if let Some(r) = runtime {
            args.extend_from_slice(&["--time_based", r]);
        }
        let mut ours = vec!["fio"];
        ours.extend_from_slice(&args);
        let (code, out, err) = hb_saving(&d, &db, &ours);
        assert_eq!(code, 0, "{err}");
        let j = &super::fio_files::doc(&out)["jobs"][0];
        assert_eq!(j["eta"], eta, "{runtime:?}");
        let elapsed = j["elapsed"].as_u64().unwrap();
        assert!(
            elapsed >= 1 && (runtime.is_none() || elapsed >= 3),
            "{elapsed}"
        );
        if peer {
            let p = fio(&d, &args);
            assert_eq!(
                super::fio_files::doc(&p.out)["jobs"][0]["eta"],
                eta,
                "{runtime:?}"
            );
        }
    }
}
