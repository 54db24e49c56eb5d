//! fio's job sequencing and reporting groups, side by side with the installed fio: the same
//! job file through both, compared on what does not depend on speed — group ids, the order
//! of the job blocks, each block's I/O counts, the "Run status group" blocks (their
//! directions and sizes) — and on when jobs start and stop (stonewall phases, startdelay,
//! each job's own runtime, exitall and exit_what), with generous time windows; and how
//! much I/O a size-based job does (`loops`, `number_ios`, `io_size`/`io_limit`,
//! `filesize`) and where (`offset_increment`).
//!
//! Without fio the comparisons are skipped with a message, unless `HOSTBENCH_TEST_FIO` is
//! set (CI sets it and installs fio): then a missing fio fails the test.

use super::fio::{json, peer_fio, redact, s, tmp};
use crate::common;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// Whether fio is here to compare with; a failure when CI asked for it.
pub(crate) fn need_fio(test: &str) -> bool {
    if peer_fio() {
        return true;
    }
    assert!(
        std::env::var_os("HOSTBENCH_TEST_FIO").is_none(),
        "{test}: HOSTBENCH_TEST_FIO is set but fio is not installed"
    );
    eprintln!("skip: fio is not installed; {test} not compared with it");
    false
}

/// Runs hostbench's fio front-end on `args` in `dir`: (stdout, wall time).
pub(crate) fn hb(dir: &Path, args: &[&str]) -> (String, Duration) {
    let t = Instant::now();
    let out = common::hb()
        .current_dir(dir)
        .arg("fio")
        .args(args)
        .arg("--no-save")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "hostbench fio {args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    (String::from_utf8(out.stdout).unwrap(), took)
}

/// Runs the real fio on `args` in `dir`: (stdout, wall time).
pub(crate) fn fio(dir: &Path, args: &[&str]) -> (String, Duration) {
    let t = Instant::now();
    // Under coreutils' timeout: a hung fio must not hang the tests (see fio_files::fio).
    let o = std::process::Command::new("timeout")
        .args(["-k", "5", "300", "fio"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let took = t.elapsed();
    assert!(
        o.status.success(),
        "fio {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (String::from_utf8(o.stdout).unwrap(), took)
}

/// Each JSON job entry: (name, group, reads, writes). fio 3.33 can add an empty entry with
/// group -1 (a miscount when group_reporting is set on some jobs of a group only): left out.
fn entries(v: &Value) -> Vec<(String, u64, u64, u64)> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j.get("jobname").is_some())
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["groupid"].as_u64().unwrap(),
                j["read"]["total_ios"].as_u64().unwrap(),
                j["write"]["total_ios"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The structure of a normal report: start-up lines' names and groups, each job block's
/// header (name, group, clones), and the Run status blocks with each direction's `io=`.
fn structure(out: &str) -> Vec<String> {
    let mut v = Vec::new();
    for l in out.lines() {
        if let Some(p) = l.find(": (g=") {
            v.push(format!("start {}{}", &l[..p], &l[p..p + 7]));
        } else if let Some(p) = l.find(": err=") {
            v.push(format!("block {}", &l[..p]));
        } else if l.starts_with("Run status group ") {
            v.push(l.to_string());
        } else if l.starts_with("   READ: ") || l.starts_with("  WRITE: ") {
            let io = l
                .split(", io=")
                .nth(1)
                .unwrap()
                .split(", run=")
                .next()
                .unwrap();
            v.push(format!(
                "{} io={io}",
                l.trim_start().split(':').next().unwrap()
            ));
        }
    }
    v
}

/// The job files compared with fio: size-based, so every count is fio's exactly.
fn job_files(dir: &Path) -> Vec<(&'static str, String)> {
    let d = s(dir);
    vec![
        (
            // The reference's §1 example: a, b in group 0; c (new_group, 3 clones merged) in
            // 1; d (stonewall) in 2, after all of them.
            "groups",
            "[global]\nioengine=null\nsize=1m\n[a]\nnumjobs=2\n[b]\nrw=write\n[c]\nnew_group\n\
             group_reporting\nnumjobs=3\n[d]\nstonewall\nrw=randread\n"
                .to_string(),
        ),
        (
            // Three stonewalled phases on one file, as fio's examples write then read.
            "phases",
            format!(
                "[global]\nioengine=psync\ndirectory={d}\nfilename=ph.dat\nsize=2m\nbs=4k\n\
                 [write]\nrw=write\n[randread]\nstonewall\nrw=randread\n[read]\nstonewall\n\
                 rw=read\nbs=8k\nnumjobs=2\ngroup_reporting\n"
            ),
        ),
        (
            // examples/waitfor.fio in small: each phase waits for the one before by name.
            "waitfor",
            format!(
                "[global]\ngroup_reporting\ndirectory={d}\nfilename=wf.dat\nsize=1m\n\
                 [writers]\nrw=write\nbs=128k\nnumjobs=2\n[readers]\nnew_group\n\
                 wait_for=writers\nrw=randread\nnumjobs=2\n[writers2]\nnew_group\n\
                 wait_for=readers\nrw=randwrite\n"
            ),
        ),
        (
            // group_reporting in [global]: one block per group, across jobs.
            "group_reporting",
            "[global]\nioengine=null\nsize=256k\ngroup_reporting\n[a]\n[b]\nrw=write\n\
             numjobs=2\n[c]\nstonewall\n[d]\nrw=randrw\n[e]\nnew_group\n"
                .to_string(),
        ),
    ]
}

#[test]
fn groups_phases_and_counts_match_fio() {
    if !need_fio("fio_seq::groups_phases_and_counts_match_fio") {
        return;
    }
    let d = tmp("seq-groups");
    for (tag, text) in job_files(&d) {
        let f = d.join(format!("{tag}.fio"));
        std::fs::write(&f, text).unwrap();
        let f = s(&f);
        let (peer, _) = fio(&d, &[&f, "--output-format=json"]);
        let (ours, _) = hb(&d, &[&f, "--output-format=json"]);
        assert_eq!(entries(&json(&ours)), entries(&json(&peer)), "{tag}: JSON");
        let (peer, _) = fio(&d, &[&f]);
        let (ours, _) = hb(&d, &[&f]);
        assert_eq!(structure(&ours), structure(&peer), "{tag}\n{ours}\n{peer}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// Every job file after the first is a new group, run after the one before (fio's rule).
#[test]
fn each_further_job_file_is_a_stonewalled_group() {
    if !need_fio("fio_seq::each_further_job_file_is_a_stonewalled_group") {
        return;
    }
    let d = tmp("seq-files");
    let one = d.join("one.fio");
    let two = d.join("two.fio");
    std::fs::write(
        &one,
        "[global]\nioengine=null\nsize=512k\n[a]\n[b]\nrw=write\n",
    )
    .unwrap();
    std::fs::write(
        &two,
        "[global]\nioengine=null\nsize=256k\n[c]\n[e]\nrw=randwrite\n",
    )
    .unwrap();
    let args = [s(&one), s(&two)];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (peer, _) = fio(&d, &[args[0], args[1], "--output-format=json"]);
    let (ours, _) = hb(&d, &[args[0], args[1], "--output-format=json"]);
    let e = entries(&json(&ours));
    assert_eq!(e, entries(&json(&peer)));
    assert_eq!(e.iter().map(|x| x.1).collect::<Vec<_>>(), [0, 0, 1, 1]);
    std::fs::remove_dir_all(d).unwrap();
}

/// fio starts each job file after the first from its defaults: the `[global]` options of
/// an earlier file, and the command line's, do not reach a later file's jobs (a later
/// file's `c` ran with the first file's bs=8k: 16 reads where fio does 32).
#[test]
fn a_later_job_file_starts_from_fios_defaults() {
    let d = tmp("seq-globals");
    let one = d.join("g1.fio");
    let two = d.join("g2.fio");
    std::fs::write(
        &one,
        "[global]\nioengine=null\nbs=8k\nsize=128k\n[a]\nrw=write\n",
    )
    .unwrap();
    std::fs::write(&two, "[c]\nioengine=null\nrw=read\nsize=128k\n").unwrap();
    let (one, two) = (s(&one), s(&two));
    let peer = need_fio("fio_seq::a_later_job_file_starts_from_fios_defaults");
    for (args, want) in [
        // a: the file's bs=8k; c: fio's 4k.
        (
            vec![one.as_str(), two.as_str()],
            [("a", 0, 16), ("c", 32, 0)],
        ),
        // The command line's bs=16k reaches the first file's jobs only (a's own global
        // sets it again: 8k).
        (
            vec!["--bs=16k", one.as_str(), two.as_str()],
            [("a", 0, 16), ("c", 32, 0)],
        ),
        (
            vec!["--bs=16k", two.as_str(), one.as_str()],
            [("c", 8, 0), ("a", 0, 16)],
        ),
    ] {
        let mut a = args.clone();
        a.push("--output-format=json");
        let (ours, _) = hb(&d, &a);
        let e = entries(&json(&ours));
        let got: Vec<(&str, u64, u64)> = e.iter().map(|x| (x.0.as_str(), x.2, x.3)).collect();
        assert_eq!(got, want, "{args:?}");
        if peer {
            let (theirs, _) = fio(&d, &a);
            assert_eq!(e, entries(&json(&theirs)), "{args:?}");
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// The `runtime` (ms) of each JSON entry's busy direction, by name.
fn runtimes(v: &Value) -> Vec<(String, u64)> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j.get("jobname").is_some())
        .map(|j| {
            let r = j["read"]["runtime"]
                .as_u64()
                .unwrap()
                .max(j["write"]["runtime"].as_u64().unwrap());
            (j["jobname"].as_str().unwrap().to_string(), r)
        })
        .collect()
}

fn within(what: &str, got: u64, lo: u64, hi: u64) {
    assert!(
        (lo..=hi).contains(&got),
        "{what}: {got} ms, expected {lo}-{hi}"
    );
}

/// Each job stops at its own runtime; a stonewall phase starts when the one before ends;
/// a start delay counts from the start of the run (so a stonewalled job whose delay passed
/// during the phase before starts at its end). Time windows are wide: a busy machine is
/// slow to wake a thread, and only the order of events is the point.
#[test]
fn each_job_keeps_its_own_time_and_phases_follow_each_other() {
    let d = tmp("seq-time");
    let f = d.join("time.fio");
    std::fs::write(
        &f,
        "[global]\nioengine=null\nsize=1g\ntime_based\nrate_iops=200\n\
         [short]\nruntime=400ms\n[long]\nruntime=1200ms\n\
         [next]\nstonewall\nstartdelay=500ms\nruntime=300ms\n\
         [late]\nnew_group\nstartdelay=600ms-800ms\nruntime=200ms\n",
    )
    .unwrap();
    let f = s(&f);
    let check = |who: &str, out: &str, took: Duration| {
        let v = json(out);
        let r = runtimes(&v);
        let names: Vec<&str> = r.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(names, ["short", "long", "next", "late"], "{who}");
        within(&format!("{who} short"), r[0].1, 380, 700);
        within(&format!("{who} long"), r[1].1, 1180, 1600);
        within(&format!("{who} next"), r[2].1, 280, 600);
        within(&format!("{who} late"), r[3].1, 180, 500);
        let groups: Vec<u64> = v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["groupid"].as_u64().unwrap())
            .collect();
        assert_eq!(groups, [0, 0, 1, 2], "{who}");
        // long (1.2 s), then next (0.3 s; its delay passed long ago), while late (delay
        // 0.6-0.8 s, no stonewall) ran beside long: about 1.5 s in all.
        assert!(
            took >= Duration::from_millis(1450) && took < Duration::from_secs(8),
            "{who}: {took:?}"
        );
    };
    let (ours, took) = hb(&d, &[&f, "--output-format=json"]);
    check("hostbench", &ours, took);
    if need_fio("fio_seq::each_job_keeps_its_own_time_and_phases_follow_each_other") {
        let (peer, took) = fio(&d, &[&f, "--output-format=json"]);
        check("fio", &peer, took);
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// `wait_for` holds a job until every clone of the job it names has ended, though both are
/// in one phase: w's clones run 0.5 s, then r runs 0.3 s.
#[test]
fn wait_for_starts_a_job_when_its_waitee_has_ended() {
    let d = tmp("seq-waitfor-time");
    let f = d.join("wf.fio");
    std::fs::write(
        &f,
        "[global]\nioengine=null\nsize=1g\ntime_based\nrate_iops=200\n\
         [w]\nruntime=500ms\nnumjobs=2\n[r]\nwait_for=w\nruntime=300ms\n",
    )
    .unwrap();
    let f = s(&f);
    let check = |who: &str, out: &str, took: Duration| {
        let v = json(out);
        let g: Vec<u64> = v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["groupid"].as_u64().unwrap())
            .collect();
        assert_eq!(g, [0, 0, 0], "{who}: wait_for keeps the group");
        assert!(took >= Duration::from_millis(780), "{who}: {took:?}");
    };
    let (ours, took) = hb(&d, &[&f, "--output-format=json"]);
    check("hostbench", &ours, took);
    if need_fio("fio_seq::wait_for_starts_a_job_when_its_waitee_has_ended") {
        let (peer, took) = fio(&d, &[&f, "--output-format=json"]);
        check("fio", &peer, took);
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// A job's `ramp_time` starts at its own start: a stonewalled job ramps after the phase
/// before it, then measures its runtime; nothing of its ramp is counted.
#[test]
fn ramp_time_is_the_jobs_own() {
    let d = tmp("seq-ramp");
    let f = d.join("ramp.fio");
    std::fs::write(
        &f,
        "[global]\nioengine=null\nsize=1g\ntime_based\nrate_iops=200\n\
         [first]\nruntime=300ms\n[second]\nstonewall\nramp_time=500ms\nruntime=500ms\n",
    )
    .unwrap();
    let f = s(&f);
    let check = |who: &str, out: &str, took: Duration| {
        let v = json(out);
        let r = runtimes(&v);
        within(&format!("{who} first"), r[0].1, 280, 600);
        within(&format!("{who} second"), r[1].1, 480, 800);
        // 200 IOPS over the measured 0.5 s, not over the ramp too.
        let n = v["jobs"][1]["read"]["total_ios"].as_u64().unwrap();
        assert!((80..=130).contains(&n), "{who}: {n} I/Os counted");
        assert!(took >= Duration::from_millis(1250), "{who}: {took:?}");
    };
    let (ours, took) = hb(&d, &[&f, "--output-format=json"]);
    check("hostbench", &ours, took);
    if need_fio("fio_seq::ramp_time_is_the_jobs_own") {
        let (peer, took) = fio(&d, &[&f, "--output-format=json"]);
        check("fio", &peer, took);
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// `exitall`: the first job to end stops its group (acceptance check 3 of the reference);
/// `exit_what=all` stops everything, and a job that never started has no block in the
/// normal layout (JSON lists it with no I/O) while its group's Run status header stays.
#[test]
fn exitall_and_exit_what_stop_what_fio_stops() {
    let d = tmp("seq-exit");
    let group = d.join("group.fio");
    std::fs::write(
        &group,
        "[global]\nioengine=null\nsize=1g\ntime_based\nrate_iops=200\n\
         [a]\nexitall\nruntime=3\n[b]\nruntime=500ms\n[c]\nnew_group\nruntime=1500ms\n",
    )
    .unwrap();
    let all = d.join("all.fio");
    std::fs::write(
        &all,
        "[global]\nioengine=null\nsize=1g\ntime_based\nrate_iops=200\n\
         [a]\nexitall\nruntime=3\n[b]\nruntime=500ms\nexit_what=all\n[c]\nnew_group\n\
         runtime=3\n[never]\nstonewall\nruntime=1\n",
    )
    .unwrap();
    let check = |who: &str, g: &str, a: &str, an: &str| {
        let r = runtimes(&json(g));
        // b ends at 0.5 s and stops a (its group); c, another group, runs its 1.5 s.
        within(&format!("{who} a"), r[0].1, 450, 900);
        within(&format!("{who} b"), r[1].1, 450, 900);
        within(&format!("{who} c"), r[2].1, 1450, 2000);
        let v = json(a);
        let r = runtimes(&v);
        // exit_what=all: c stops with b, and `never` never starts.
        within(&format!("{who} c (all)"), r[2].1, 450, 900);
        assert_eq!(r[3], ("never".to_string(), 0), "{who}");
        assert_eq!(v["jobs"][3]["read"]["total_ios"], 0, "{who}");
        assert!(!an.contains("never: (groupid"), "{who}: no block\n{an}");
        assert!(
            an.contains("never: (g=2)"),
            "{who}: its start-up line\n{an}"
        );
        let after = an
            .split("Run status group 2 (all jobs):\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{who}: the empty group's header\n{an}"));
        assert!(!after.contains("READ:"), "{who}: group 2 is empty\n{an}");
    };
    let (g, _) = hb(&d, &[&s(&group), "--output-format=json"]);
    let (a, _) = hb(&d, &[&s(&all), "--output-format=json"]);
    let (an, _) = hb(&d, &[&s(&all)]);
    check("hostbench", &g, &a, &an);
    if need_fio("fio_seq::exitall_and_exit_what_stop_what_fio_stops") {
        let (g, _) = fio(&d, &[&s(&group), "--output-format=json"]);
        let (a, _) = fio(&d, &[&s(&all), "--output-format=json"]);
        let (an, _) = fio(&d, &[&s(&all)]);
        check("fio", &g, &a, &an);
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// The normal layout of a file with three groups (one merged by group_reporting), figures
/// and times redacted: the start-up lines with their `g=`, a block per entry, and a Run
/// status block per group.
#[test]
fn normal_layout_of_several_groups() {
    let d = tmp("seq-snap");
    let f = d.join("groups.fio");
    std::fs::write(
        &f,
        "[global]\nioengine=null\nsize=1m\n[a]\nnumjobs=2\n[b]\nrw=write\n[c]\nnew_group\n\
         group_reporting\nnumjobs=3\n[d]\nstonewall\nrw=randread\n",
    )
    .unwrap();
    let (out, _) = hb(&d, &[&s(&f)]);
    // The structure with its group ids and sizes (size-based jobs: exact), then the lines
    // of figures with the figures redacted (a tiny job's latency lines vary from run to
    // run: which units, how many distribution lines; they are not this test's business).
    let mut snap = structure(&out).join("\n");
    snap.push_str("\n--- lines, figures redacted ---\n");
    for l in redact(&out).lines() {
        if [
            "fio-",
            "Starting ",
            "  read: ",
            "  write: ",
            "   READ: ",
            "  WRITE: ",
        ]
        .iter()
        .any(|p| l.starts_with(p))
            || l.contains(": (g=")
            || l.contains(": err=")
            || l.starts_with("Run status")
            || l.is_empty()
        {
            snap.push_str(l);
            snap.push('\n');
        }
    }
    insta::assert_snapshot!("several_groups", snap);
    std::fs::remove_dir_all(d).unwrap();
}

/// A sequenced run's hostbench result validates against the schema and carries each job's
/// group.
#[test]
fn a_sequenced_result_is_valid() {
    let d = tmp("seq-schema");
    let f = d.join("v.fio");
    std::fs::write(
        &f,
        "[global]\nioengine=null\nsize=256k\n[w]\nrw=write\n[r]\nstonewall\n[x]\nnew_group\n\
         wait_for=r\nstartdelay=10ms-20ms\n",
    )
    .unwrap();
    let (out, _) = hb(&d, &[&s(&f), "--output-format=hostbench-json"]);
    let r = json(&out);
    common::assert_valid(&r, "sequenced fio result");
    let g: Vec<u64> = r["fio"]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["groupid"].as_u64().unwrap())
        .collect();
    assert_eq!(g, [0, 1, 2]);
    assert_eq!(r["fio"]["blocks"].as_array().unwrap().len(), 3);
    std::fs::remove_dir_all(d).unwrap();
}

/// How much I/O a size-based job does, as fio: `loops`, `number_ios`, `io_size`/`io_limit`
/// and a region that is not a whole number of blocks, each alone and together, on null
/// jobs and on a file; every I/O count must be fio's.
#[test]
fn io_amounts_match_fio() {
    if !need_fio("fio_seq::io_amounts_match_fio") {
        return;
    }
    let d = tmp("seq-amount");
    let cases = [
        "loops=3",
        "number_ios=100",
        "number_ios=100 loops=3",
        "number_ios=1000",
        "io_size=3m",
        "io_limit=512k",
        "io_size=3m loops=2",
        "io_size=512k loops=3",
        "io_size=1536k loops=2",
        "io_size=10k loops=2",
        "io_size=6k loops=3",
        "number_ios=100 io_size=200k",
        "rw=randread loops=2",
        "rw=randread io_size=2m",
        "rw=randwrite number_ios=3 loops=2",
        "rw=randrw bs=16k loops=2",
        "size=1000k bs=64k",
        "size=1000k bs=64k loops=2",
        "size=1000k bs=64k rw=randread",
        "io_size=1000k bs=64k",
        "io_size=100k bs=64k loops=2",
        "ioengine=psync filename=amount.dat rw=write loops=2",
        "ioengine=psync filename=amount.dat rw=randread io_size=1536k",
        "io_size=50%",
        "io_size=30% loops=2",
        "io_size=100% rw=randread",
        "bs=64k io_size=40%",
    ];
    let total = |out: &str| -> (u64, u64) {
        let v = json(out);
        let j = &v["jobs"][0];
        (
            j["read"]["total_ios"].as_u64().unwrap() + j["write"]["total_ios"].as_u64().unwrap(),
            j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap(),
        )
    };
    for case in cases {
        let mut args = vec![
            "--name=amount".to_string(),
            "--ioengine=null".to_string(),
            "--size=1m".to_string(),
        ];
        args.extend(case.split(' ').map(|o| format!("--{o}")));
        args.push("--output-format=json".into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (peer, _) = fio(&d, &args);
        let (ours, _) = hb(&d, &args);
        assert_eq!(total(&ours), total(&peer), "{case}: (I/Os, bytes)");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// Clones sharing one file under `filesize`: each clone's region runs from its own offset
/// to the file's end, so the file stays `filesize` long and a reader's file is untouched
/// (each region used to be the first clone's length from every clone's offset on: a
/// 4 MiB file read by two clones 1 MiB apart grew to 5 MiB).
#[test]
fn clones_sharing_a_file_keep_its_filesize_as_fio() {
    let d = tmp("seq-fsz-shared");
    let f = d.join("shared.dat");
    let original: Vec<u8> = (0..4u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    // (options, file there before, per-clone bytes (read, written) in fio's clone order
    // 0, N-1..1, file length after)
    type Case<'a> = (&'a str, bool, &'a [(u64, u64)], u64);
    let cases: [Case; 3] = [
        (
            "rw=read filesize=4m size=1m bs=16k offset_increment=1m numjobs=2",
            true,
            &[(1 << 20, 0), (1 << 20, 0)],
            4 << 20,
        ),
        (
            "rw=write filesize=8m offset_increment=4m numjobs=2",
            false,
            &[(0, 8 << 20), (0, 4 << 20)],
            8 << 20,
        ),
        (
            "rw=randwrite filesize=1m size=256k offset_increment=256k numjobs=3",
            false,
            &[(0, 256 << 10), (0, 256 << 10), (0, 256 << 10)],
            1 << 20,
        ),
    ];
    let peer = need_fio("fio_seq::clones_sharing_a_file_keep_its_filesize_as_fio");
    for (case, existing, want, len) in cases {
        let mut args = vec![
            "--name=fs".to_string(),
            format!("--filename={}", s(&f)),
            "--ioengine=psync".to_string(),
        ];
        args.extend(case.split(' ').map(|o| format!("--{o}")));
        args.push("--output-format=json".into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let tools: &[&str] = if peer {
            &["hostbench", "fio"]
        } else {
            &["hostbench"]
        };
        for tool in tools {
            let _ = std::fs::remove_file(&f);
            if existing {
                std::fs::write(&f, &original).unwrap();
            }
            let (out, _) = if *tool == "fio" {
                fio(&d, &args)
            } else {
                hb(&d, &args)
            };
            let v = json(&out);
            let got: Vec<(u64, u64)> = v["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| {
                    (
                        j["read"]["io_bytes"].as_u64().unwrap(),
                        j["write"]["io_bytes"].as_u64().unwrap(),
                    )
                })
                .collect();
            assert_eq!(got, want, "{tool}: {case}");
            assert_eq!(std::fs::metadata(&f).unwrap().len(), len, "{tool}: {case}");
            if existing {
                assert!(
                    std::fs::read(&f).unwrap() == original,
                    "{tool}: {case}: bytes changed"
                );
            }
        }
    }
    // A clone whose offset is the file's end would have no I/O (fio: "blocksize is larger
    // than data set range"): refused, saying which clone and why.
    let _ = std::fs::remove_file(&f);
    let name = format!("--filename={}", s(&f));
    let args = [
        "fio",
        "--name=fs",
        &name,
        "--rw=write",
        "--filesize=8m",
        "--offset_increment=4m",
        "--numjobs=3",
        "--no-save",
    ];
    let o = std::process::Command::new(crate::common::bin())
        .args(args)
        .current_dir(&d)
        .env("HOSTBENCH_RESULTS_DB", d.join("r.db"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("clone 2's offset 8388608"), "{err}");
    assert!(!f.exists(), "nothing laid out");
    std::fs::remove_dir_all(d).unwrap();
}

/// `filesize` sets the file's size and `size` then only limits the I/O of a pass: the I/O
/// counts and the laid-out file's length are fio's; a range gives a size in the range, a
/// multiple of the block size, the same on every run.
#[test]
fn filesize_lays_out_and_limits_as_fio() {
    let d = tmp("seq-filesize");
    // `case`, with the file absent or, after `existing:`, 100 KiB long already.
    let run = |prog: &str, case: &str| -> (u64, u64) {
        let f = d.join("fsz.0.0");
        let _ = std::fs::remove_file(&f);
        let case = match case.strip_prefix("existing:") {
            Some(rest) => {
                std::fs::write(&f, vec![7u8; 100 << 10]).unwrap();
                rest
            }
            None => case,
        };
        let mut args = vec!["--name=fsz".to_string(), "--ioengine=psync".to_string()];
        args.extend(case.split(' ').map(|o| format!("--{o}")));
        args.push("--output-format=json".into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (out, _) = if prog == "fio" {
            fio(&d, &args)
        } else {
            hb(&d, &args)
        };
        let v = json(&out);
        let j = &v["jobs"][0];
        let ios =
            j["read"]["total_ios"].as_u64().unwrap() + j["write"]["total_ios"].as_u64().unwrap();
        (ios, std::fs::metadata(&f).unwrap().len())
    };
    let fixed = [
        "filesize=64k",
        "filesize=64k size=256k",
        "filesize=64k size=32k",
        "filesize=64k size=32k rw=write",
        "filesize=100k bs=64k",
        "filesize=64k rw=randread size=256k",
        "filesize=64k loops=2",
        "filesize=64k offset=16k",
        // A file already within the range is used as it is; one outside it keeps its
        // length when longer (the region is the size from offset on) and grows when shorter.
        "existing:filesize=64k-128k",
        "existing:filesize=64k offset=16k",
        "existing:filesize=256k",
    ];
    let peer = need_fio("fio_seq::filesize_lays_out_and_limits_as_fio");
    for case in fixed {
        let ours = run("hostbench", case);
        if peer {
            assert_eq!(ours, run("fio", case), "{case}: (I/Os, file length)");
        }
    }
    let (ios, len) = run("hostbench", "filesize=10k-64k bs=4k");
    assert!((8192..=65536).contains(&len) && len % 4096 == 0, "{len}");
    assert_eq!(ios * 4096, len, "the whole file, once");
    assert_eq!(
        run("hostbench", "filesize=10k-64k bs=4k"),
        (ios, len),
        "the same size again"
    );
    if peer {
        let (ios, len) = run("fio", "filesize=10k-64k bs=4k");
        assert!(
            (8192..=65536).contains(&len) && len % 4096 == 0,
            "fio: {len}"
        );
        assert_eq!(ios * 4096, len, "fio");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// `offset_increment` moves each clone's region: the files laid out are as long as fio
/// lays them out (each clone's own file, or one shared file holding every region), with
/// fio's I/O counts. (Which offsets each clone writes was checked with strace by hand:
/// the layout fills the file first, so its contents cannot tell.)
#[test]
fn offset_increment_places_each_clone_as_fio() {
    let lengths = |dir: &Path| -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.metadata().unwrap().len(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let cases: [&[&str]; 3] = [
        &[
            "--name=oi",
            "--rw=write",
            "--size=64k",
            "--offset_increment=64k",
            "--numjobs=3",
        ],
        &[
            "--name=sh",
            "--filename=sh.dat",
            "--rw=write",
            "--size=64k",
            "--offset=8k",
            "--offset_increment=64k",
            "--numjobs=3",
        ],
        &[
            "--name=rd",
            "--filename=rd.dat",
            "--rw=randread",
            "--size=32k",
            "--offset_increment=100k",
            "--numjobs=2",
        ],
    ];
    let peer = need_fio("fio_seq::offset_increment_places_each_clone_as_fio");
    for case in cases {
        let mut args: Vec<&str> = case.to_vec();
        args.extend(["--ioengine=psync", "--output-format=json"]);
        let ours = tmp("seq-offinc");
        let (out, _) = hb(&ours, &args);
        let v = json(&out);
        for j in v["jobs"].as_array().unwrap() {
            let n = j["read"]["total_ios"].as_u64().unwrap()
                + j["write"]["total_ios"].as_u64().unwrap();
            assert!(n == 16 || n == 8, "{case:?}: {n} I/Os");
        }
        if peer {
            let theirs = tmp("seq-offinc-fio");
            fio(&theirs, &args);
            assert_eq!(lengths(&ours), lengths(&theirs), "{case:?}");
            std::fs::remove_dir_all(theirs).unwrap();
        }
        std::fs::remove_dir_all(ours).unwrap();
    }
    // The shared file ends where the last clone's region ends: 8k + 2 × 64k + 8k.
    let d = tmp("seq-offinc-data");
    hb(
        &d,
        &[
            "--name=z",
            "--filename=z.dat",
            "--rw=write",
            "--bs=4k",
            "--size=8k",
            "--offset=8k",
            "--offset_increment=64k",
            "--numjobs=3",
            "--ioengine=psync",
        ],
    );
    let data = std::fs::read(d.join("z.dat")).unwrap();
    assert_eq!(data.len(), 8192 + 2 * 65536 + 8192);
    std::fs::remove_dir_all(d).unwrap();
}

/// fio's own examples/waitfor.fio, adapted only in its file name and size (fio 3.33's
/// text otherwise, `threads=1` of the tiobench profile included): four groups, each
/// waiting for the one before by name; the same entries and Run status blocks as fio.
#[test]
fn fios_waitfor_example_runs_as_in_fio() {
    let d = tmp("seq-waitfor");
    let f = d.join("waitfor.fio");
    std::fs::write(
        &f,
        format!(
            "[global]\nthreads=1\ngroup_reporting\nfilename={}/data\nfilesize=1m\n\n\
             [writers]\nrw=write\nbs=128k\nnumjobs=4\nruntime=10\n\n\
             [readers]\nnew_group\nwait_for=writers\nrw=randread\nbs=4k\nnumjobs=4\nruntime=10\n\n\
             [writers2]\nnew_group\nwait_for=readers\nrw=randwrite\nbs=4k\nnumjobs=4\nruntime=10\n\n\
             [readers2]\nnew_group\nwait_for=writers2\nrw=randread\nbs=4k\nnumjobs=4\nruntime=10\n",
            s(&d)
        ),
    )
    .unwrap();
    let f = s(&f);
    let out = common::hb()
        .current_dir(&d)
        .args(["fio", &f, "--output-format=json", "--no-save"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("`threads` is an option of fio's tiobench profile"),
        "{err}"
    );
    let ours = String::from_utf8(out.stdout).unwrap();
    let e = entries(&json(&ours));
    assert_eq!(
        e,
        [
            ("writers".to_string(), 0, 0, 32),
            ("readers".to_string(), 1, 1024, 0),
            ("writers2".to_string(), 2, 0, 1024),
            ("readers2".to_string(), 3, 1024, 0),
        ]
    );
    if need_fio("fio_seq::fios_waitfor_example_runs_as_in_fio") {
        let (peer, _) = fio(&d, &[&f, "--output-format=json"]);
        assert_eq!(e, entries(&json(&peer)));
        let (peer, _) = fio(&d, &[&f]);
        let (ours, _) = hb(&d, &[&f]);
        assert_eq!(structure(&ours), structure(&peer));
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// `size`, `offset` and `offset_increment` in percent of the file there: the I/O counts of
/// every clone are fio's, the file keeps its length, and a job without a file to take the
/// percentage of is refused.
#[test]
fn percentages_of_the_file_as_fio() {
    let d = tmp("seq-pct");
    let data: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
    let cases = [
        "size=50%",
        "size=10% bs=64k",
        "offset=25% size=1m",
        "offset=10% size=100%",
        "offset=75% size=50%",
        "size=100% offset_increment=25% numjobs=2",
        "offset=10% offset_increment=20% numjobs=3 size=64k",
    ];
    let counts = |out: &str| -> Vec<u64> {
        json(out)["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["read"]["total_ios"].as_u64().unwrap())
            .collect()
    };
    let peer = need_fio("fio_seq::percentages_of_the_file_as_fio");
    for case in cases {
        std::fs::write(d.join("f4"), &data).unwrap();
        let mut args = vec![
            "--name=p".to_string(),
            "--filename=f4".to_string(),
            "--ioengine=psync".to_string(),
        ];
        args.extend(case.split(' ').map(|o| format!("--{o}")));
        args.push("--output-format=json".into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ours, _) = hb(&d, &args);
        assert_eq!(
            std::fs::metadata(d.join("f4")).unwrap().len(),
            4 << 20,
            "{case}"
        );
        if peer {
            let (theirs, _) = fio(&d, &args);
            assert_eq!(counts(&ours), counts(&theirs), "{case}");
        }
    }
    let (code, _, err) = common::run_in(
        &d,
        &[
            "fio",
            "--name=p",
            "--filename=absent",
            "--size=50%",
            "--no-save",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs an existing regular file"), "{err}");
    std::fs::remove_dir_all(d).unwrap();
}

/// The figures `results` and `compare` keep for a run of stonewalled groups are fio's group
/// rates (a direction's I/O over its longest job's run time), phase after phase: never the
/// I/O over the run's wall time, which counts the start delay and the wait between phases.
/// b waits for 2 s from the run's start (fio counts startdelay from then), so 1 s after a
/// ended; c (`new_group`, no stonewall) runs beside b, so the second phase lasts the longer of them.
#[test]
fn stored_rates_are_fios_group_rates_phase_by_phase() {
    let d = tmp("seq-rates");
    let jf = d.join("j.fio");
    std::fs::write(
        &jf,
        "[global]\nioengine=null\nsize=1g\nbs=4k\ntime_based\n\
         [a]\nrw=read\nruntime=1\n\
         [b]\nstonewall\nstartdelay=2\nrw=write\nruntime=1\n\
         [c]\nnew_group\nrw=read\nruntime=700ms\n",
    )
    .unwrap();
    let (out, wall) = hb(&d, &[&s(&jf), "--output-format=hostbench-json"]);
    let r = json(&out);
    common::assert_valid(&r, "stonewalled fio run");
    let b = &r["fio"]["blocks"];
    let n = |i: usize, d: &str, k: &str| b[i][d][k].as_u64().unwrap() as f64;
    let fig = |name: &str| {
        r["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no figure {name}: {}", r["figures"]))["value"]
            .as_f64()
            .unwrap()
    };
    let (ra, wb, rc) = (
        n(0, "read", "runtime_ms"),
        n(1, "write", "runtime_ms"),
        n(2, "read", "runtime_ms"),
    );
    assert!(
        wall.as_secs_f64() * 1000.0 > ra + wb + 700.0,
        "{wall:?} {ra} {wb}"
    );
    let close = |what: &str, got: f64, want: f64| {
        assert!((got / want - 1.0).abs() < 1e-9, "{what}: {got} want {want}");
    };
    let (ios_a, ios_b, ios_c) = (
        n(0, "read", "total_ios"),
        n(1, "write", "total_ios"),
        n(2, "read", "total_ios"),
    );
    close(
        "read_iops",
        fig("read_iops"),
        (ios_a + ios_c) * 1000.0 / (ra + rc),
    );
    close("write_iops", fig("write_iops"), ios_b * 1000.0 / wb);
    close(
        "write_bytes_per_s",
        fig("write_bytes_per_s"),
        n(1, "write", "io_bytes") * 1000.0 / wb,
    );
    close(
        "iops",
        fig("iops"),
        (ios_a + ios_b + ios_c) * 1000.0 / (ra + wb.max(rc)),
    );

    // A run saved before schema 1.10 divided by the wall time; read back, its figures are
    // recomputed from its fio section.
    let mut old = r.clone();
    old["schema_minor"] = 9.into();
    for f in old["figures"].as_array_mut().unwrap() {
        f["value"] = (f["value"].as_f64().unwrap() / 3.0).into();
    }
    let file = d.join("old.json");
    std::fs::write(&file, old.to_string()).unwrap();
    let db = d.join("r.db");
    common::hb_with_store(&db)
        .args(["results", "import", &s(&file)])
        .assert()
        .success();
    let id = r["id"].as_str().unwrap();
    let shown = common::hb_with_store(&db)
        .args(["results", "show", id])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    for want in [fig("read_iops"), fig("write_iops"), fig("iops")] {
        let want = format!("{want:.2} IOPS");
        assert!(shown.contains(&want), "{want} not in\n{shown}");
    }
    std::fs::remove_dir_all(d).unwrap();
}
