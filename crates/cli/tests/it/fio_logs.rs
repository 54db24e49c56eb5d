//! fio's logs (`write_*_log`), steady state (`ss`), status line (`--eta`) and the null
//! engine's depth lines, side by side with the installed fio where it is here: file names,
//! row shapes (field counts, directions, block sizes, window times), the `steadystate`
//! JSON object's keys, the status line's shape — never the figures.
//!
//! Without fio the comparisons are skipped (the checks of hostbench's own output still
//! run), unless `HOSTBENCH_TEST_FIO` is set.

use super::fio::{json, s, tmp};
use super::fio_seq::{fio, hb, need_fio};
use crate::common;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// The files of `dir` whose names end in `.log`, sorted.
fn logs(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect();
    v.sort();
    v
}

/// Rows of a log, split on fio's `", "`.
fn rows(dir: &Path, name: &str) -> Vec<Vec<String>> {
    std::fs::read_to_string(dir.join(name))
        .unwrap()
        .lines()
        .map(|l| l.split(", ").map(String::from).collect())
        .collect()
}

/// A log's shape: the field counts, the directions and the block sizes of its rows.
fn shape(dir: &Path, name: &str) -> (BTreeSet<usize>, BTreeSet<String>, BTreeSet<String>) {
    let r = rows(dir, name);
    let hist = name.contains("clat_hist");
    let (d, b) = if hist { (1, 2) } else { (2, 3) };
    (
        r.iter().map(Vec::len).collect(),
        r.iter().map(|x| x[d].clone()).collect(),
        r.iter().map(|x| x[b].clone()).collect(),
    )
}

const LOG_JOB: &str = "[global]
ioengine=null
size=64m
time_based
runtime=2
rate_iops=200
write_bw_log
write_lat_log
write_iops_log
write_hist_log
log_hist_msec=500
[x]
rw=randrw
numjobs=2
";

#[test]
fn logs_are_named_and_shaped_as_fios() {
    let d = tmp("logs");
    std::fs::write(d.join("j.fio"), LOG_JOB).unwrap();
    hb(&d, &["j.fio"]);
    let names = logs(&d);
    // Six logs per clone, fio's names (thread numbers from 1).
    let mut want: Vec<String> = (1..=2)
        .flat_map(|n| {
            ["bw", "clat", "clat_hist", "iops", "lat", "slat"].map(|k| format!("x_{k}.{n}.log"))
        })
        .collect();
    want.sort();
    assert_eq!(names, want);
    for n in &names {
        let (fields, dirs, _) = shape(&d, n);
        if n.contains("slat") {
            // The null engine at iodepth=1 completes in its submit call: no slat, as in fio.
            assert!(fields.is_empty(), "{n}: {fields:?}");
            continue;
        }
        if n.contains("clat_hist") {
            assert_eq!(fields, BTreeSet::from([1859]), "{n}: 3 + 1856 buckets");
        } else {
            assert_eq!(fields, BTreeSet::from([5]), "{n}");
        }
        assert_eq!(
            dirs,
            BTreeSet::from(["0".into(), "1".into()]),
            "{n}: randrw"
        );
    }
    // Per I/O rows: IOPS 1, block size 4096, times within the run.
    for r in rows(&d, "x_iops.1.log") {
        assert_eq!(
            (r[1].as_str(), r[3].as_str(), r[4].as_str()),
            ("1", "4096", "0")
        );
        assert!(r[0].parse::<u64>().unwrap() <= 2100, "{r:?}");
    }
    // Histogram rows every 500 ms per direction.
    let hist = rows(&d, "x_clat_hist.1.log");
    assert!((4..=10).contains(&hist.len()), "{} rows", hist.len());
    if !need_fio("logs_are_named_and_shaped_as_fios") {
        return;
    }
    let f = tmp("logs-fio");
    std::fs::write(f.join("j.fio"), LOG_JOB).unwrap();
    fio(&f, &["j.fio"]);
    assert_eq!(logs(&f), names, "the same files as fio");
    for n in &names {
        let (hf, hd, hbs) = shape(&d, n);
        let (ff, fd, fbs) = shape(&f, n);
        assert_eq!(
            (hf, hd, hbs),
            (ff, fd, fbs),
            "{n}: fields, directions, block sizes"
        );
    }
}

#[test]
fn log_avg_msec_windows_as_fio() {
    let job = "[x]\nioengine=null\nsize=64m\ntime_based\nruntime=2\nrate_iops=200\nrw=read\n\
               write_bw_log=w\nwrite_lat_log=w\nlog_avg_msec=500\nlog_offset=1\nper_job_logs=0\n";
    let d = tmp("logavg");
    std::fs::write(d.join("j.fio"), job).unwrap();
    hb(&d, &["j.fio"]);
    assert_eq!(
        logs(&d),
        ["w_bw.log", "w_clat.log", "w_lat.log", "w_slat.log"],
        "per_job_logs=0: no thread number"
    );
    let times = |dir: &Path, n: &str| -> Vec<u64> {
        rows(dir, n).iter().map(|r| r[0].parse().unwrap()).collect()
    };
    for n in ["w_bw.log", "w_lat.log"] {
        let r = rows(&d, n);
        // log_offset=1: six fields; windows carry bs 0 and offset 0.
        for x in &r {
            assert_eq!(x.len(), 6, "{n}: {x:?}");
            assert_eq!(
                (x[2].as_str(), x[3].as_str(), x[4].as_str()),
                ("0", "0", "0")
            );
        }
        let t = times(&d, n);
        assert!((3..=5).contains(&t.len()), "{n}: {t:?}");
        for (i, x) in t.iter().take(3).enumerate() {
            let want = 500 * (i as u64 + 1);
            assert!(
                x.abs_diff(want) <= 60,
                "{n}: row {i} at {x} ms, want ≈{want}"
            );
        }
    }
    if !need_fio("log_avg_msec_windows_as_fio") {
        return;
    }
    let f = tmp("logavg-fio");
    std::fs::write(f.join("j.fio"), job).unwrap();
    fio(&f, &["j.fio"]);
    assert_eq!(logs(&f), logs(&d));
    for n in ["w_bw.log", "w_lat.log"] {
        let (a, b) = (times(&d, n), times(&f, n));
        assert!(a.len().abs_diff(b.len()) <= 1, "{n}: {a:?} vs fio {b:?}");
        for (x, y) in a.iter().zip(&b).take(3) {
            assert!(x.abs_diff(*y) <= 60, "{n}: {a:?} vs fio {b:?}");
        }
        assert_eq!(shape(&d, n), shape(&f, n), "{n}");
    }
}

/// Bandwidth and IOPS windows end on time, as fio's helper thread cuts them, not at the
/// first completion after their end: with an I/O every 700 ms (thinktime), fio 3.33 has rows
/// at 500, 1000, 1500, 2500 and 3000 ms (none for the window without a completion) and 5
/// samples of each kind; hostbench had 4 rows at 700, 1400, 2100, 2800 (measured 2026-11-27).
#[test]
fn sample_windows_end_on_time_as_fios() {
    let d = tmp("ontime");
    let args = [
        "--name=a",
        "--ioengine=null",
        "--size=1m",
        "--rw=read",
        "--thinktime=700ms",
        "--runtime=3",
        "--time_based",
        "--write_bw_log=b",
        "--log_avg_msec=500",
        "--output-format=json",
    ];
    // (fio's helper thread wakes a millisecond or two late under load: 2501.)
    let times = |dir: &Path| -> Vec<u64> {
        rows(dir, "b_bw.1.log")
            .iter()
            .map(|r| r[0].parse::<u64>().unwrap())
            .map(|t| if t % 500 <= 3 { t - t % 500 } else { t })
            .collect()
    };
    let samples = |out: &str| {
        let v = json(out);
        let r = &v["jobs"][0]["read"];
        (r["bw_samples"].as_u64(), r["iops_samples"].as_u64())
    };
    let (o, _) = hb(&d, &args);
    assert_eq!(times(&d), [500, 1000, 1500, 2500, 3000]);
    assert_eq!(samples(&o), (Some(5), Some(5)), "{o}");
    if need_fio("fio_logs::sample_windows_end_on_time_as_fios") {
        std::fs::remove_file(d.join("b_bw.1.log")).unwrap();
        let (out, _) = fio(&d, &args);
        assert_eq!(times(&d), [500, 1000, 1500, 2500, 3000]);
        assert_eq!(samples(&out), (Some(5), Some(5)), "{out}");
    }
    std::fs::remove_dir_all(d).ok();
}

#[test]
fn a_log_never_goes_through_a_symlink() {
    let d = tmp("logsym");
    std::os::unix::fs::symlink(d.join("elsewhere"), d.join("x_bw.1.log")).unwrap();
    let out = common::hb()
        .current_dir(&d)
        .args([
            "fio",
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--write_bw_log=x",
            "--no-save",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("x_bw.1.log") && err.contains("not a regular file"),
        "{err}"
    );
    assert!(
        !d.join("elsewhere").exists(),
        "nothing written through the link"
    );
    // A prefix in a directory that does not exist: refused before the run.
    let out = common::hb()
        .current_dir(&d)
        .args([
            "fio",
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--write_lat_log=nodir/p",
            "--no-save",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("directory nodir does not exist"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

const SS_JOB: &str = "[x]\nioengine=null\nsize=64m\nrate_iops=200\ntime_based\nruntime=6\n\
                      ss=iops:5%\nss_dur=2\n";

/// Keys of a JSON object, recursively (`a.b`).
fn keys(v: &serde_json::Value, at: &str, out: &mut BTreeSet<String>) {
    if let Some(o) = v.as_object() {
        for (k, x) in o {
            let p = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            out.insert(p.clone());
            keys(x, &p, out);
        }
    }
}

#[test]
fn steady_state_stops_the_job_and_reports_as_fio() {
    let d = tmp("ss");
    std::fs::write(d.join("j.fio"), SS_JOB).unwrap();
    let (out, took) = hb(&d, &["--output-format=json,normal", "j.fio"]);
    assert!(
        took < Duration::from_secs(5),
        "attained after ≈3 s, not 6: {took:?}"
    );
    let start = out.find('{').unwrap();
    let end = out.rfind('}').unwrap();
    let v = json(&out[start..=end]);
    let ss = &v["jobs"][0]["steadystate"];
    assert_eq!(ss["ss"], "iops:5.000000%");
    assert_eq!(ss["duration"], 2);
    assert_eq!(ss["attained"], 1);
    assert!(ss["criterion"].as_str().unwrap().ends_with('%'), "{ss}");
    let iops = ss["data"]["iops"].as_array().unwrap();
    assert_eq!(iops.len(), 2);
    for x in iops {
        let x = x.as_u64().unwrap();
        assert!((180..=220).contains(&x), "{ss}");
    }
    assert!(v["jobs"][0]["job_runtime"].as_u64().unwrap() < 4500);
    assert!(
        out.contains("  steadystate  : attained=yes, bw=") && out.contains(", iops mean dev="),
        "{out}"
    );
    if !need_fio("steady_state_stops_the_job_and_reports_as_fio") {
        return;
    }
    let f = tmp("ss-fio");
    std::fs::write(f.join("j.fio"), SS_JOB).unwrap();
    let (fo, _) = fio(&f, &["--output-format=json", "j.fio"]);
    let fv = json(&fo[fo.find('{').unwrap()..]);
    let (mut a, mut b) = (BTreeSet::new(), BTreeSet::new());
    keys(ss, "", &mut a);
    keys(&fv["jobs"][0]["steadystate"], "", &mut b);
    assert_eq!(a, b, "the steadystate object's keys");
    assert_eq!(fv["jobs"][0]["steadystate"]["attained"], 1);
}

/// A result with a steady state is valid against the result schema (1.7), and keeps it.
#[test]
fn a_steady_state_result_is_valid() {
    let d = tmp("ss-schema");
    let job = "[x]\nioengine=null\nsize=64m\nrate_iops=100\ntime_based\nruntime=3\n\
               ss=bw_slope:10%\nss_dur=1\n";
    std::fs::write(d.join("j.fio"), job).unwrap();
    let (out, _) = hb(&d, &["j.fio", "--output-format=hostbench-json"]);
    let r = json(&out);
    common::assert_valid(&r, "fio result with a steady state");
    assert_eq!(r["schema_minor"], 16);
    let ss = &r["fio"]["blocks"][0]["steadystate"];
    assert_eq!(
        (ss["iops"].as_bool(), ss["slope"].as_bool()),
        (Some(false), Some(true))
    );
    assert_eq!(ss["duration"], 1);
    assert_eq!(ss["bw"].as_array().unwrap().len(), 1);
}

#[test]
fn steady_state_options_are_checked() {
    for (arg, needle) in [
        ("--ss=iops", "threshold must be specified"),
        ("--ss=lat:5%", "iops, iops_slope, bw or bw_slope"),
        ("--ss_dur=soon", "a time"),
    ] {
        let out = common::hb()
            .args(["fio", "--name=x", "--ioengine=null", arg, "--no-save"])
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{arg}: {err}");
        assert!(err.contains(needle), "{arg}: {err}");
    }
}

const ETA_ARGS: &[&str] = &[
    "--ioengine=null",
    "--size=64m",
    "--rate_iops=200",
    "--time_based",
    "--runtime=4",
    "--name=a",
    "--name=b",
];

/// The status lines of an output (split on `\r` and `\n`, those that start with `Jobs:`).
fn status_lines(out: &str) -> Vec<String> {
    out.split(['\r', '\n'])
        .filter(|l| l.starts_with("Jobs:"))
        .map(|l| l.trim_end().to_string())
        .collect()
}

#[test]
fn eta_always_prints_fios_status_line() {
    let d = tmp("eta");
    let mut args = vec!["--eta=always", "--eta-newline=1"];
    args.extend_from_slice(ETA_ARGS);
    let (out, _) = hb(&d, &args);
    let lines = status_lines(&out);
    assert!(lines.len() >= 3, "{out:?}");
    assert_eq!(lines[0], "Jobs: 2 (f=2), 0-400 IOPS", "{lines:?}");
    let full: Vec<&String> = lines.iter().filter(|l| l.contains("[eta ")).collect();
    assert!(!full.is_empty(), "{lines:?}");
    for l in &full {
        assert!(l.starts_with("Jobs: 2 (f=2), 0-400 IOPS: [R(2)]["), "{l}");
        assert!(l.contains("%][r=") && l.contains(" IOPS][eta 00m:0"), "{l}");
    }
    // --eta-newline: the lines are on lines of their own; the results follow on a new one.
    assert!(out.contains("\r\n"), "{out:?}");
    assert!(out.contains("\na: (groupid=0"), "{out:?}");
    // JSON alone on stdout stays parsable: no status line.
    let (j, _) = hb(
        &d,
        &[&["--eta=always", "--output-format=json"], ETA_ARGS].concat(),
    );
    assert!(!j.contains("Jobs:"));
    json(&j);
    if !need_fio("eta_always_prints_fios_status_line") {
        return;
    }
    let (fo, _) = fio(&d, &args);
    let fl = status_lines(&fo);
    assert_eq!(fl[0], lines[0], "fio: {fl:?}");
    let shape = |l: &str| {
        l.chars()
            .map(|c| if c.is_ascii_digit() { '9' } else { c })
            .collect::<String>()
            .replace("99", "9")
            .replace("99", "9")
    };
    let fio_full: BTreeSet<String> = fl
        .iter()
        .filter(|l| l.contains("[eta "))
        .map(|l| shape(l))
        .collect();
    for l in &full {
        let sh = shape(l);
        assert!(
            fio_full.iter().any(|x| *x == sh),
            "{l} has no like in fio's {fl:?}"
        );
    }
}

#[test]
fn eta_auto_prints_on_a_terminal_only() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no `script` (util-linux) to give hostbench a terminal");
        return;
    }
    let d = tmp("eta-auto");
    let cmd = format!(
        "{} fio --no-save --ioengine=null --size=64m --rate_iops=100 --time_based --runtime=4 --name=t",
        common::bin().display()
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(&d)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Jobs: 1 (f=1), 0-100 IOPS: [R(1)]["),
        "{text:?}"
    );
    // Off a terminal (a pipe): none.
    let (piped, _) = hb(&d, &["--ioengine=null", "--size=1m", "--name=t"]);
    assert!(!piped.contains("Jobs:"), "{piped}");
}

#[test]
fn null_engine_depth_lines_match_fio() {
    let d = tmp("nulldepth");
    let lines = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| {
                l.starts_with("  IO depths")
                    || l.starts_with("     submit")
                    || l.starts_with("     complete")
            })
            .map(String::from)
            .collect()
    };
    for depth in ["1", "8"] {
        let args = [
            "--name=n",
            "--ioengine=null",
            "--size=16m",
            &format!("--iodepth={depth}"),
        ];
        let (out, _) = hb(&d, &args);
        let got = lines(&out);
        assert_eq!(got.len(), 3, "{out}");
        assert!(got[0].starts_with("  IO depths    : 1=100.0%,"), "{got:?}");
        if depth == "1" {
            // fio's null engine at iodepth=1 marks no submission or completion.
            assert!(got[1].contains(": 0=0.0%, 4=0.0%,"), "{got:?}");
            assert!(got[2].contains(": 0=0.0%, 4=0.0%,"), "{got:?}");
        }
        if need_fio("null_engine_depth_lines_match_fio") {
            let (fo, _) = fio(&d, &args);
            assert_eq!(got, lines(&fo), "iodepth={depth}");
        }
    }
    let _ = s(&d);
}

/// fio's own `fio2gnuplot` (Debian's fio package ships it) reads hostbench's logs: it
/// parses every row (time, an integer value, direction, block size) into its per-file
/// statistics before it hands them to gnuplot (not installed here: the graphs themselves
/// are not drawn).
#[test]
fn fio2gnuplot_reads_the_logs() {
    if std::process::Command::new("fio2gnuplot")
        .arg("-h")
        .output()
        .is_err()
    {
        eprintln!("skipped: fio2gnuplot is not installed");
        return;
    }
    let d = tmp("gnuplot");
    let job = "[x]\nioengine=null\nsize=64m\ntime_based\nruntime=1\nrate_iops=100\nrw=randrw\n\
               write_bw_log\nwrite_iops_log\nlog_avg_msec=200\n";
    std::fs::write(d.join("j.fio"), job).unwrap();
    hb(&d, &["j.fio"]);
    for kind in ["bw", "iops"] {
        let out = d.join(format!("g-{kind}"));
        let o = std::process::Command::new("fio2gnuplot")
            .args(["-p", &format!("x_{kind}.1.log"), "-d", &s(&out)])
            .current_dir(&d)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(text.contains(&format!("x_{kind}.1.log")), "{text}");
        let global = std::fs::read_to_string(out.join(format!("x_{kind}.1.global"))).unwrap();
        let avg: f64 = global
            .lines()
            .find_map(|l| l.strip_prefix("avg="))
            .unwrap()
            .parse()
            .unwrap();
        assert!(avg > 0.0, "{global}");
    }
}

/// The first offset logged in each `PREFIX_iops.N.log` of `dir`, by N.
fn first_offsets(dir: &Path, prefix: &str) -> Vec<(u32, u64)> {
    let mut v: Vec<(u32, u64)> = logs(dir)
        .iter()
        .filter_map(|n| {
            let k = n
                .strip_prefix(&format!("{prefix}_iops."))?
                .strip_suffix(".log")?;
            let off = rows(dir, n).first()?[4].parse().ok()?;
            Some((k.parse().ok()?, off))
        })
        .collect();
    v.sort();
    v
}

const CLONE_LOG_JOB: &str = "[global]
rw=read
bs=4k
size=16k
filename=data
offset_increment=16k
write_iops_log=x
log_offset=1
[a]
numjobs=5
[b]
numjobs=3
";

/// Which clone writes which `N.log`: fio numbers a job's first clone, then the others in
/// reverse (`offset_increment` shows which clone a log is: the clone k reads from k*16k),
/// and the next job's clones after them.
#[test]
fn clones_write_the_logs_fio_numbers_them() {
    let run = |real: bool| {
        let d = tmp("clonelogs");
        std::fs::write(d.join("data"), vec![1u8; 128 << 10]).unwrap();
        std::fs::write(d.join("j.fio"), CLONE_LOG_JOB).unwrap();
        let r = if real {
            super::fio_files::fio(&d, &["j.fio", "--output=out.txt"])
        } else {
            super::fio_files::hb(&d, &["j.fio", "--output=out.txt"])
        };
        assert_eq!(r.code, 0, "fio: {real}: {}", r.err);
        (first_offsets(&d, "x"), d)
    };
    let (ours, d) = run(false);
    let k = 16 << 10;
    // fio 3.33's, measured: job a's clones 0, 4, 3, 2, 1, then job b's 0, 2, 1.
    let want: Vec<(u32, u64)> = [0, 4, 3, 2, 1, 0, 2, 1]
        .iter()
        .enumerate()
        .map(|(i, &c)| (i as u32 + 1, c * k))
        .collect();
    assert_eq!(ours, want);
    std::fs::remove_dir_all(&d).ok();
    if !need_fio("clones_write_the_logs_fio_numbers_them") {
        return;
    }
    let (theirs, f) = run(true);
    assert_eq!(ours, theirs);
    std::fs::remove_dir_all(&f).ok();
}

/// A log prefix in a directory that does not exist is refused before anything is laid
/// out: the job's file is not left behind (fio 3.33 runs the job and fails to write the
/// log at its end, `fopen log: No such file or directory`, its file made).
#[test]
fn a_refused_log_leaves_no_laid_out_file() {
    for opt in [
        "--write_bw_log=nodir/x",
        "--write_lat_log=nodir/x",
        "--write_iops_log=nodir/x",
    ] {
        let d = tmp("lognodir");
        let r = super::fio_files::hb(
            &d,
            &["--name=x", "--rw=write", "--size=64k", "--filename=lf", opt],
        );
        assert_eq!(r.code, 2, "{opt}: {}", r.err);
        assert!(
            r.err.contains("directory nodir does not exist"),
            "{}",
            r.err
        );
        assert!(!d.join("lf").exists(), "{opt}: the laid-out file stayed");
        std::fs::remove_dir_all(&d).ok();
    }
}
