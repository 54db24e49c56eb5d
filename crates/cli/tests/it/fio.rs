//! `hostbench fio` end to end: fio's normal layout (snapshot with figures redacted, plus the
//! lines users parse), fio's JSON field names and arithmetic, json+ bins read by fio's own
//! `fio_jsonplus_clat2csv` when it is installed, job files (globals, several jobs,
//! group_reporting), the GitLab check as written, the hostbench result against the schema,
//! and bad input (one line naming the problem, exit 2, no panic).
//!
//! Files are small (a few MiB) and live in a temporary directory under the target dir (a
//! disk filesystem, so O_DIRECT works there); no test looks at a rate's value.

use super::fio_engines::strace_f;
use crate::common;
use crate::common::{assert_valid, run, stdout_ok};
use serde_json::Value;
use std::path::{Path, PathBuf};

pub(crate) fn tmp(tag: &str) -> PathBuf {
    tempfile::Builder::new()
        .prefix(&format!("hb-fio-test-{tag}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
        .keep()
}

pub(crate) fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Redacts figures, the auto-scaled units fio picks for them, and the start time, so the
/// snapshot pins the layout and not the measurement.
pub(crate) fn redact(out: &str) -> String {
    // The Disk stats block names this machine's device (or is absent on a filesystem with
    // none): checked by `disk_stats_line_ok`, left out of the snapshot.
    let out = match out.find("\nDisk stats (read/write):\n") {
        Some(i) => &out[..i + 1],
        None => out,
    };
    let r = common::redact(out);
    let mut lines = Vec::new();
    for l in r.lines() {
        // Bandwidth and IOPS samples exist only when the job ran past fio's 500 ms sample
        // interval: how long a tiny test job takes is the machine's business.
        if l.starts_with("   bw (") || l.starts_with("   iops        :") {
            continue;
        }
        let mut l = l.to_string();
        if let Some(p) = l.find(": pid=") {
            l.truncate(p);
            l.push_str(": pid=#: <time>");
        }
        for (a, b) in [
            ("#.#", "#"),
            ("#KiB", "#B"),
            ("#MiB", "#B"),
            ("#GiB", "#B"),
            ("#kB", "#B"),
            ("#MB", "#B"),
            ("#GB", "#B"),
            ("#k,", "#,"),
            ("#M,", "#,"),
        ] {
            l = l.replace(a, b);
        }
        lines.push(l);
    }
    lines.join("\n") + "\n"
}

/// Whether the tests' files live on a block device (then fio's Disk stats must appear).
pub(crate) fn on_block_device(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(p).unwrap().dev();
    // Linux's dev_t encoding; major 0 = an anonymous device (tmpfs, overlay).
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff);
    major != 0
        && Path::new(&format!(
            "/sys/dev/block/{major}:{}",
            (dev & 0xff) | ((dev >> 12) & 0xffff_ff00)
        ))
        .exists()
}

/// fio's `Disk stats (read/write):` block: present when the file is on a block device, and
/// each device line in fio's form.
fn disk_stats_line_ok(out: &str, dir: &Path) {
    let Some(i) = out.find("\nDisk stats (read/write):\n") else {
        assert!(
            !on_block_device(dir),
            "no Disk stats for a file on a block device\n{out}"
        );
        return;
    };
    let block = &out[i + "\nDisk stats (read/write):\n".len()..];
    let mut n = 0;
    for l in block.lines().take_while(|l| l.starts_with("  ")) {
        let (name, rest) = l.trim_start().split_once(": ").unwrap();
        assert!(!name.is_empty() && !name.contains(' '), "{l}");
        let fields: Vec<&str> = rest.split(", ").collect();
        let keys: Vec<&str> = fields
            .iter()
            .map(|f| f.split('=').next().unwrap())
            .collect();
        assert_eq!(keys, ["ios", "merge", "ticks", "in_queue", "util"], "{l}");
        for f in &fields[..3] {
            let (a, b) = f.split_once('=').unwrap().1.split_once('/').unwrap();
            a.parse::<u64>().unwrap();
            b.parse::<u64>().unwrap();
        }
        let util = fields[4]
            .strip_prefix("util=")
            .unwrap()
            .strip_suffix('%')
            .unwrap();
        assert!(util.parse::<f64>().unwrap() <= 100.0, "{l}");
        assert_eq!(util.split_once('.').unwrap().1.len(), 2, "{l}");
        n += 1;
    }
    assert!(n >= 1, "{out}");
}

pub(crate) fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"))
}

#[test]
fn gitlab_check_runs_as_written() {
    let d = tmp("gitlab");
    let file = d.join("testfile");
    let out = stdout_ok(&[
        "fio",
        "--randrepeat=1",
        "--ioengine=libaio",
        "--direct=1",
        "--gtod_reduce=1",
        "--name=test",
        "--bs=4k",
        "--iodepth=64",
        "--readwrite=randrw",
        "--rwmixread=75",
        "--size=4m",
        &format!("--filename={}", s(&file)),
    ]);
    assert!(file.exists());
    // fio's order: the job line, the version, the start line, then the layout line.
    assert!(out.starts_with("test: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=64\n"), "{out}");
    assert!(
        out.contains("\nStarting 1 process\ntest: Laying out IO file (1 file / 4MiB)\n\n"),
        "{out}"
    );
    assert!(out.contains("\n  read: IOPS="), "{out}");
    assert!(out.contains("\n  write: IOPS="), "{out}");
    assert!(
        !out.contains("clat"),
        "gtod_reduce: no latency lines\n{out}"
    );
    assert!(
        out.contains("Run status group 0 (all jobs):\n   READ: bw="),
        "{out}"
    );
    assert!(out.contains("\n  WRITE: bw="), "{out}");
    insta::assert_snapshot!("gitlab_layout", redact(&out));
    disk_stats_line_ok(&out, &d);
    // The whole 4 MiB region once (random map): 1024 I/Os of 4 KiB in all.
    let issued = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("issued rwts: total="))
        .unwrap();
    let n: Vec<u64> = issued
        .split(' ')
        .next()
        .unwrap()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(n[0] + n[1], 1024, "{issued}");
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn normal_layout_has_fio_latency_lines() {
    let d = tmp("normal");
    let out = stdout_ok(&[
        "fio",
        "--name=rr",
        &format!("--directory={}", s(&d)),
        "--size=2m",
        "--rw=randrw",
        "--ioengine=psync",
        "--no-save",
    ]);
    for needle in [
        "rr: (groupid=0, jobs=1): err= 0: pid=",
        "\n  read: IOPS=",
        "\n    clat (",
        "\n     lat (",
        "\n    clat percentiles (",
        "\n     |  1.00th=[",
        "99.99th=[",
        "\n  cpu          : usr=",
        "\n  IO depths    : 1=100.0%",
        "\n     submit    : 0=0.0%, 4=100.0%",
        "\n     issued rwts: total=",
        "\n     latency   : target=0, window=0, percentile=100.00%, depth=1",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    assert!(!out.contains("slat"), "sync engines have no slat\n{out}");
    assert!(d.join("rr.0.0").exists(), "fio's file name");
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn json_has_fio_fields_and_arithmetic() {
    let d = tmp("json");
    let out = stdout_ok(&[
        "fio",
        "--name=j",
        &format!("--filename={}", s(&d.join("f"))),
        "--size=4m",
        "--bs=4k",
        "--rw=randrw",
        "--rwmixread=60",
        "--ioengine=libaio",
        "--iodepth=8",
        "--direct=1",
        "--output-format=json",
    ]);
    let v = json(&out);
    assert!(v["fio version"].as_str().unwrap().starts_with("fio-3.33"));
    for k in ["timestamp", "timestamp_ms", "time", "jobs"] {
        assert!(v.get(k).is_some(), "{k}");
    }
    let j = &v["jobs"][0];
    for k in [
        "jobname",
        "groupid",
        "error",
        "eta",
        "elapsed",
        "job options",
        "read",
        "write",
        "trim",
        "sync",
        "job_runtime",
        "usr_cpu",
        "sys_cpu",
        "ctx",
        "majf",
        "minf",
        "iodepth_level",
        "iodepth_submit",
        "iodepth_complete",
        "latency_ns",
        "latency_us",
        "latency_ms",
        "latency_depth",
        "latency_target",
        "latency_percentile",
        "latency_window",
    ] {
        assert!(j.get(k).is_some(), "job field {k}");
    }
    assert_eq!(j["jobname"], "j");
    assert_eq!(
        j["job options"]["rw"], "randrw",
        "values are strings as in fio"
    );
    assert_eq!(j["job options"]["iodepth"], "8");
    let mut total = 0;
    for dir in ["read", "write"] {
        let x = &j[dir];
        for k in [
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "iops",
            "runtime",
            "total_ios",
            "short_ios",
            "drop_ios",
            "slat_ns",
            "clat_ns",
            "lat_ns",
            "bw_min",
            "bw_max",
            "bw_agg",
            "bw_mean",
            "bw_dev",
            "bw_samples",
            "iops_min",
            "iops_max",
            "iops_mean",
            "iops_stddev",
            "iops_samples",
        ] {
            assert!(x.get(k).is_some(), "{dir}.{k}");
        }
        let ios = x["total_ios"].as_u64().unwrap();
        let bytes = x["io_bytes"].as_u64().unwrap();
        let rt = x["runtime"].as_u64().unwrap();
        total += ios;
        assert_eq!(bytes, ios * 4096);
        assert_eq!(x["io_kbytes"].as_u64().unwrap(), bytes / 1024);
        assert_eq!(x["bw_bytes"].as_u64().unwrap(), bytes * 1000 / rt);
        assert_eq!(x["bw"].as_u64().unwrap(), bytes * 1000 / rt / 1024);
        let iops = x["iops"].as_f64().unwrap();
        assert!((iops - ios as f64 * 1000.0 / rt as f64).abs() < 1e-6);
        for m in ["slat_ns", "clat_ns", "lat_ns"] {
            assert_eq!(x[m]["N"].as_u64().unwrap(), ios, "{dir}.{m}.N");
            for k in ["min", "max", "mean", "stddev"] {
                assert!(x[m][k].is_number(), "{dir}.{m}.{k}");
            }
        }
        let p = x["clat_ns"]["percentile"].as_object().unwrap();
        assert_eq!(p.len(), 17);
        assert!(p.contains_key("99.990000") && p.contains_key("1.000000"));
        assert!(x["clat_ns"].get("bins").is_none(), "bins only in json+");
        // lat = slat + clat on average.
        let (s, c, l) = (
            x["slat_ns"]["mean"].as_f64().unwrap(),
            x["clat_ns"]["mean"].as_f64().unwrap(),
            x["lat_ns"]["mean"].as_f64().unwrap(),
        );
        assert!((s + c - l).abs() <= l * 1e-6 + 1.0, "{s} + {c} != {l}");
    }
    assert_eq!(total, 1024);
    // fio 3.33's disk_util keys, in its order, when the file is on a block device.
    match v.get("disk_util") {
        None => assert!(!on_block_device(&d), "no disk_util on a block device"),
        Some(du) => {
            let du = du.as_array().unwrap();
            assert!(!du.is_empty());
            let want = [
                "name",
                "read_ios",
                "write_ios",
                "read_merges",
                "write_merges",
                "read_ticks",
                "write_ticks",
                "in_queue",
                "util",
            ];
            assert_eq!(du[0].as_object().unwrap().len(), want.len(), "{}", du[0]);
            // In fio's order in the text (serde_json's Value sorts keys).
            let text = &out[out.find("\"disk_util\"").unwrap()..];
            let pos: Vec<usize> = want
                .iter()
                .map(|k| text.find(&format!("\"{k}\"")).unwrap())
                .collect();
            assert!(pos.windows(2).all(|w| w[0] < w[1]), "{text}");
            // Direct I/O reaches the device: at least the job's I/Os were counted.
            let ios = du[0]["read_ios"].as_u64().unwrap() + du[0]["write_ios"].as_u64().unwrap();
            assert!(ios >= 1, "{}", du[0]);
            assert!(du[0]["util"].as_f64().unwrap() <= 100.0);
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn json_plus_bins_read_by_fio_tools() {
    let d = tmp("jsonplus");
    let report = d.join("out.json");
    let out = stdout_ok(&[
        "fio",
        "--name=n",
        "--ioengine=null",
        "--size=8m",
        "--rw=randread",
        "--output-format=json+",
        &format!("--output={}", s(&report)),
    ]);
    assert!(out.is_empty(), "--output takes the report: {out}");
    let v = json(&std::fs::read_to_string(&report).unwrap());
    let clat = &v["jobs"][0]["read"]["clat_ns"];
    let bins = clat["bins"].as_object().unwrap();
    let sum: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
    assert_eq!(sum, clat["N"].as_u64().unwrap());
    assert_eq!(sum, 2048);
    // fio ships a reader for these bins; when it is installed it must accept ours.
    let tool = Path::new("/usr/bin/fio_jsonplus_clat2csv");
    if tool.exists() {
        let st = std::process::Command::new("python3")
            .arg(tool)
            .arg(&report)
            .arg(d.join("csv"))
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "fio_jsonplus_clat2csv: {}",
            String::from_utf8_lossy(&st.stderr)
        );
        let csv = std::fs::read_to_string(d.join("csv_job0")).unwrap();
        assert!(csv.starts_with("nsec, read_slat_ns_count"), "{csv}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn job_files_globals_and_group_reporting() {
    let d = tmp("jobfile");
    let jf = d.join("two.fio");
    std::fs::write(
        &jf,
        format!(
            "; two jobs\n[global]\ndirectory={}\nsize=${{HB_TEST_SIZE}}\nioengine=psync\n\n[seqw]\nrw=write\nbs=64k\n\n[randr]\nrw=randread\nnumjobs=2\ngroup_reporting\n",
            s(&d)
        ),
    )
    .unwrap();
    let out = common::hb()
        .env("HB_TEST_SIZE", "1m")
        .args(["fio", &s(&jf), "--output-format=json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v = json(&String::from_utf8(out.stdout).unwrap());
    let jobs = v["jobs"].as_array().unwrap();
    // fio's rule: a group_reporting clone joins the block before it when that one is of the
    // same group, whatever its job: randr's clones join seqw's block (fio 3.33 prints
    // `seqw: (groupid=0, jobs=3)`; its JSON also has a second, empty entry with groupid
    // 4294967295, a miscount hostbench does not copy).
    assert_eq!(jobs.len(), 1, "seqw, and randr's two clones merged into it");
    assert_eq!(v["global options"]["ioengine"], "psync");
    assert_eq!(jobs[0]["jobname"], "seqw");
    assert_eq!(jobs[0]["write"]["total_ios"], 16);
    assert_eq!(jobs[0]["read"]["total_ios"], 512, "2 clones × 256 blocks");
    assert_eq!(
        jobs[0]["job options"]["rw"], "randread",
        "the last merged job's options, as fio shows them"
    );
    for f in ["seqw.0.0", "randr.0.0", "randr.1.0"] {
        assert!(d.join(f).exists(), "{f}");
    }
    // The normal layout shows the merged block once.
    let text = common::hb()
        .env("HB_TEST_SIZE", "1m")
        .args(["fio", &s(&jf), "--no-save"])
        .output()
        .unwrap();
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("seqw: (groupid=0, jobs=3)"), "{text}");
    assert!(!text.contains("randr: (groupid"), "{text}");
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn an_existing_file_is_used_not_rewritten() {
    let d = tmp("existing");
    let f = d.join("data");
    let content: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 251) as u8).collect();
    std::fs::write(&f, &content).unwrap();
    stdout_ok(&[
        "fio",
        "--name=r",
        &format!("--filename={}", s(&f)),
        "--rw=randread",
        "--no-save",
    ]);
    assert_eq!(
        std::fs::read(&f).unwrap(),
        content,
        "a read job leaves the file alone"
    );
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn hostbench_result_is_valid_and_saved() {
    let d = tmp("result");
    let out = stdout_ok(&[
        "fio",
        "--name=h",
        &format!("--directory={}", s(&d)),
        "--size=1m",
        "--rw=randwrite",
        "--ioengine=libaio",
        "--iodepth=4",
        "--fsync=16",
        "--output-format=hostbench-json",
        "--label=fio-test",
    ]);
    let r = json(&out);
    assert_valid(&r, "hostbench fio result");
    assert_eq!(r["workload"]["id"], "disk.fio");
    assert_eq!(r["config"]["grammar"], "fio");
    assert_eq!(r["label"], "fio-test");
    assert_eq!(r["metrics"]["counters"]["writes"], 256);
    // An fsync before the I/O after every 16th write: none after the last (fio 3.33 too).
    assert_eq!(
        r["metrics"]["counters"]["other"], 15,
        "an fsync every 16 writes"
    );
    // fio's statistics are one typed section (schema 1.1), not tables of flattened columns.
    assert_eq!(r["schema_minor"], 16);
    assert_eq!(r["fio"]["jobs"][0]["name"], "h");
    assert_eq!(r["fio"]["blocks"][0]["write"]["total_ios"], 256);
    assert_eq!(r["fio"]["blocks"][0]["sync"]["n"], 15);
    assert_eq!(r["config"]["layout"]["grammar"], "fio");
    assert!(r.get("tables").is_none(), "{}", r["tables"]);
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn bad_input_is_one_clear_line() {
    let d = tmp("bad");
    let bad = d.join("bad.fio");
    std::fs::write(&bad, "[a]\nrw=randread\nsize=1m\nbogus line here\n").unwrap();
    let unknown = d.join("unknown.fio");
    std::fs::write(&unknown, "[a]\nrw=randread\ncgroup=1\n").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--name=a".into(), "--cgroup=1".into()],
            "fio option --cgroup is not supported by hostbench yet",
        ),
        (
            vec!["--name=a".into(), "--rw=sideways".into()],
            "rw=sideways",
        ),
        (vec!["--name=a".into(), "--bs=4q".into()], "bs=4q"),
        (
            vec!["--name=a".into(), "--ioengine=rdma".into()],
            "ioengine=rdma is not supported",
        ),
        (vec!["--rw=read".into()], "no jobs"),
        (vec![s(&bad)], "bad.fio:4"),
        (
            vec![s(&unknown)],
            "unknown.fio:3: fio option 'cgroup' is not supported by hostbench yet",
        ),
        (vec![s(&d.join("missing.fio"))], "cannot read job file"),
        (
            vec![
                "--name=a".into(),
                format!("--filename={}", s(&d.join("nofile"))),
            ],
            "give a size",
        ),
        (
            vec!["--name=a".into(), "--output-format=yaml".into()],
            "'yaml' is not an output format",
        ),
    ];
    for (args, needle) in cases {
        let mut a = vec!["fio"];
        a.extend(args.iter().map(String::as_str));
        let (code, out, err) = run(&a);
        assert_eq!(code, 2, "{a:?}: {err}{out}");
        assert!(err.contains(needle), "{a:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn direct_io_on_tmpfs_names_the_filesystem() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        return;
    }
    let f = shm.join(format!("hb-fio-test-{}", std::process::id()));
    let (code, _, err) = run(&[
        "fio",
        "--name=d",
        &format!("--filename={}", s(&f)),
        "--size=1m",
        "--direct=1",
    ]);
    let _ = std::fs::remove_file(&f);
    assert!(!err.contains("panicked"), "{err}");
    if code != 0 {
        // Kernels before 6.6 refuse O_DIRECT on tmpfs: one line naming the filesystem.
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("tmpfs") && err.contains("O_DIRECT"), "{err}");
    } else {
        // Newer kernels accept it; the figures still describe RAM, and the warning says so.
        assert!(err.contains("tmpfs") && err.contains("RAM"), "{err}");
    }
}

#[test]
fn buffered_small_files_warn_about_the_page_cache() {
    let d = tmp("cache");
    let (code, _, err) = run(&[
        "fio",
        "--name=c",
        &format!("--directory={}", s(&d)),
        "--size=1m",
        "--no-save",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("page cache"), "{err}");
    assert!(err.contains("--direct=1"), "{err}");
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn rate_iops_paces_and_ramp_time_is_not_counted() {
    let out = stdout_ok(&[
        "fio",
        "--name=paced",
        "--ioengine=null",
        "--size=1g",
        "--rate_iops=500",
        "--ramp_time=1",
        "--runtime=1",
        "--time_based",
        "--output-format=json",
        "--no-save",
    ]);
    let v = json(&out);
    let n = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    // 500 I/Os per second for the one measured second; the ramp second is not counted.
    assert!((400..=600).contains(&n), "{n} I/Os");
}

#[test]
fn ctrl_c_stops_a_run_and_reports_it() {
    let d = tmp("ctrlc");
    let mut cmd = common::hb_std();
    cmd.args([
        "fio",
        "--name=long",
        &format!("--directory={}", s(&d)),
        "--size=1m",
        "--ioengine=libaio",
        "--iodepth=4",
        "--rw=randread",
        "--runtime=60",
        "--time_based",
        "--no-save",
    ]);
    let child = common::spawn_piped(&mut cmd);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let out = common::interrupt(child);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stdout.contains("Run status group 0"), "{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    std::fs::remove_dir_all(d).unwrap();
}

/// fio's default reaps one completion and replaces it before taking the next
/// (`iodepth_batch_complete_min`/`_max` = 1), so a QD8 job keeps 8 I/Os in flight: fio prints
/// `IO depths : ... 8=100.0%`. Taking every completion at once and refilling them together
/// would let the queue drain between refills (the depth histogram would spread to 1..4).
#[test]
fn the_queue_stays_at_iodepth() {
    let d = tmp("depth");
    for engine in ["libaio", "io_uring"] {
        let f = d.join(format!("f-{engine}"));
        let (code, out, err) = run(&[
            "fio",
            "--name=qd",
            &format!("--filename={}", s(&f)),
            "--size=8m",
            "--bs=4k",
            "--rw=randread",
            &format!("--ioengine={engine}"),
            "--iodepth=8",
            "--direct=1",
            "--output-format=json",
        ]);
        if engine == "io_uring" && code != 0 {
            assert!(err.contains("io_uring_setup failed"), "{err}");
            eprintln!("io_uring is not available here; its case skipped: {err}");
            continue;
        }
        assert_eq!(code, 0, "{engine}: {err}");
        let v = json(&out);
        let j = &v["jobs"][0];
        let at8 = j["iodepth_level"]["8"].as_f64().unwrap();
        assert!(at8 >= 99.0, "{engine}: IO depths {}", j["iodepth_level"]);
        // With batch sizes of one, every reap takes one completion (fio's "4" bucket is 1-4).
        let c1 = j["iodepth_complete"]["4"].as_f64().unwrap();
        assert!(c1 >= 99.0, "{engine}: complete {}", j["iodepth_complete"]);
        assert_eq!(j["read"]["total_ios"], 2048, "{engine}");
    }
}

/// `iodepth_batch_complete_max` lets a reap take several completions (and
/// `iodepth_batch`, fio's alias for `iodepth_batch_submit`, is accepted).
#[test]
fn batch_options_are_accepted_and_used() {
    let d = tmp("batch");
    let out = stdout_ok(&[
        "fio",
        "--name=b",
        &format!("--filename={}", s(&d.join("f"))),
        "--size=8m",
        "--bs=4k",
        "--rw=randread",
        "--ioengine=libaio",
        "--iodepth=16",
        "--iodepth_batch=4",
        "--iodepth_batch_complete_min=1",
        "--iodepth_batch_complete_max=16",
        "--direct=1",
        "--output-format=json",
    ]);
    let j = &json(&out)["jobs"][0];
    assert_eq!(j["read"]["total_ios"], 2048);
    assert_eq!(
        j["job options"]["iodepth_batch"], "4",
        "{}",
        j["job options"]
    );
}

#[test]
fn gtod_reduce_keeps_bandwidth_samples_and_json_reads_like_fio() {
    // fio's gtod_reduce drops the latency clocks, not the bandwidth/IOPS samples (taken every
    // 500 ms): a 1.2 s job has at least two of each, in the text and in the JSON.
    let args = [
        "fio",
        "--name=g",
        "--ioengine=null",
        "--size=1m",
        "--gtod_reduce=1",
        "--time_based",
        "--runtime=1200ms",
        "--rate_iops=2000",
    ];
    let text = stdout_ok(&args);
    assert!(text.contains("\n   bw (  KiB/s): min="), "{text}");
    assert!(text.contains("\n   iops        : min="), "{text}");
    let mut a = args.to_vec();
    a.push("--output-format=json");
    let out = stdout_ok(&a);
    // fio writes `"key" : value` and floats with six decimals; scrapers grep for that.
    assert!(
        out.contains("\n  \"fio version\" : \"fio-3.33-hostbench-"),
        "{out}"
    );
    let j: Value = serde_json::from_str(&out).unwrap();
    let r = &j["jobs"][0]["read"];
    assert!(r["bw_samples"].as_u64().unwrap() >= 2, "{r}");
    assert!(r["iops_samples"].as_u64().unwrap() >= 2, "{r}");
    assert!(r["iops"].is_f64(), "{r}");
}

/// The installed fio (`fio --version` works), if any.
pub(crate) fn peer_fio() -> bool {
    std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs the real fio with `args` in `dir`; its normal output.
pub(crate) fn run_peer_fio(dir: &Path, args: &[&str]) -> String {
    let o = std::process::Command::new("fio")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fio {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The size figures of a normal report: the job line's `(64.0MiB/` and the group line's
/// `io=64.0MiB (67.1MB)`, and the start-up line.
fn size_figures(out: &str) -> (String, String, String) {
    let job = out
        .lines()
        .find(|l| l.starts_with("  write: IOPS="))
        .and_then(|l| l.split_once(")(").map(|(_, r)| r))
        .and_then(|r| r.split_once('/').map(|(io, _)| io.to_string()))
        .unwrap_or_else(|| panic!("no write line in\n{out}"));
    let group = out
        .lines()
        .find(|l| l.starts_with("  WRITE: bw="))
        .and_then(|l| l.split_once(", io=").map(|(_, r)| r))
        .and_then(|r| r.split_once(", run=").map(|(io, _)| io.to_string()))
        .unwrap_or_else(|| panic!("no WRITE line in\n{out}"));
    let start = out.lines().next().unwrap_or_default().to_string();
    (job, group, start)
}

/// Sizes and bandwidths are printed by fio's num2str rules, carry included: on size-limited
/// jobs (so the figures do not depend on the machine's speed) every size figure reads as
/// the real fio prints it. 63.996 MiB is `64.0MiB`, 20.99 MiB `21.0MiB`, 9.999 MiB
/// `10.00MiB`, 999500 bytes `976KiB (1000kB)`.
#[test]
fn size_figures_read_as_fio_prints_them() {
    if !peer_fio() {
        eprintln!("skip: fio is not installed; size figures not compared with it");
        return;
    }
    let d = tmp("num2str");
    for (size, bs) in [
        ("65532k", "4k"),
        ("21494k", "4k"),
        ("10239k", "1k"),
        ("1048064", "512"),
        ("999500", "4"),
    ] {
        let args = [
            "--name=x",
            "--ioengine=null",
            "--rw=write",
            &format!("--bs={bs}"),
            &format!("--size={size}"),
        ];
        let theirs = size_figures(&run_peer_fio(&d, &args));
        let mut ours_args = vec!["fio"];
        ours_args.extend(args);
        ours_args.push("--no-save");
        let ours = size_figures(&stdout_ok(&ours_args));
        assert_eq!(ours, theirs, "size={size} bs={bs}");
    }
    // The layout line counts whole MiB as fio does (1500 KiB is "1MiB", not rounded up).
    let layout = |out: &str| {
        out.lines()
            .find(|l| l.contains("Laying out IO file"))
            .unwrap_or_else(|| panic!("no layout line in\n{out}"))
            .to_string()
    };
    let job = ["--name=x", "--size=1500k", "--rw=read", "--bs=4k"];
    let mut fio_args = job.to_vec();
    fio_args.push("--filename=fio.dat");
    let theirs = layout(&run_peer_fio(&d, &fio_args));
    let ours_file = format!("--filename={}", s(&d.join("hb.dat")));
    let mut ours_args = vec!["fio"];
    ours_args.extend(job);
    ours_args.extend([ours_file.as_str(), "--no-save"]);
    assert_eq!(layout(&stdout_ok(&ours_args)), theirs);
    std::fs::remove_dir_all(d).unwrap();
}

/// fio's job-file syntax: `;` and `#` start a comment anywhere on a line (after a value, after
/// a section header), never part of the value; `time_based` in `[global]` with `runtime` in
/// the job is a valid job.
#[test]
fn inline_comments_and_a_global_time_based() {
    let d = tmp("syntax");
    let f = d.join("jobs.fio");
    std::fs::write(
        &f,
        format!(
            "; leading comment\n\
             [global]   ; the defaults\n\
             ioengine=psync ; plain reads\n\
             time_based # a flag with a comment\n\
             directory={} # where the file goes\n\
             [one] # the job\n\
             filename=data.bin ; the note\n\
             size=64k  ; small\n\
             rw=read#no space before it\n\
             runtime=1 ; one second\n",
            s(&d)
        ),
    )
    .unwrap();
    let out = stdout_ok(&["fio", &s(&f), "--output-format=json", "--no-save"]);
    let v = json(&out);
    let job = &v["jobs"][0];
    assert_eq!(job["jobname"], "one", "{out}");
    let opts = &job["job options"];
    assert_eq!(opts["filename"], "data.bin", "{out}");
    assert_eq!(opts["runtime"], "1", "{out}");
    assert_eq!(opts["rw"], "read", "{out}");
    assert!(d.join("data.bin").exists());
    let names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.contains(';') && !n.contains('#')),
        "a comment became part of a file name: {names:?}"
    );
    // time_based from [global] applied: the 64 KiB file is read for the whole second, not
    // once (a generous bound, not a speed).
    let runtime = job["read"]["runtime"].as_u64().unwrap();
    assert!(
        runtime >= 500,
        "time_based ignored: runtime={runtime} ms\n{out}"
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// A bad value's error names the line of the option itself (not its section's header), in
/// [global] and in a job; a fio option hostbench lacks says so and never asks to check the
/// spelling; a name fio does not have is a typo.
#[test]
fn option_errors_name_their_line_and_fio_options_are_known() {
    let d = tmp("opterr");
    let global = d.join("global.fio");
    std::fs::write(&global, "[global]\nioengine=psync\n\nbs=4x\n[a]\nsize=1m\n").unwrap();
    let job = d.join("job.fio");
    std::fs::write(&job, "[a]\nsize=1m\n\n; comment\nrw=sideways\n").unwrap();
    let unsupported = d.join("unsupported.fio");
    std::fs::write(&unsupported, "[a]\nsize=1m\ncgroup=x\n").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![s(&global)], "global.fio:4: bs=4x"),
        (vec![s(&job)], "job.fio:5: rw=sideways"),
        (
            vec![s(&unsupported)],
            "unsupported.fio:3: fio option 'cgroup' is not supported by hostbench yet",
        ),
        (
            vec!["--name=a".into(), "--cgroup_weight=100".into()],
            "fio option --cgroup_weight is not supported by hostbench yet",
        ),
        (
            vec!["--name=a".into(), "--cgroup=1".into()],
            "fio option --cgroup is not supported by hostbench yet",
        ),
        (
            vec!["--name=a".into(), "--iodepht=4".into()],
            "did you mean --iodepth?",
        ),
        (
            vec!["--name=a".into(), "--zqxw_frob=1".into()],
            "--zqxw_frob is not a fio option",
        ),
    ];
    for (args, needle) in cases {
        let mut a = vec!["fio"];
        a.extend(args.iter().map(String::as_str));
        let (code, out, err) = run(&a);
        assert_eq!(code, 2, "{a:?}: {err}{out}");
        assert!(err.contains(needle), "{a:?}: want {needle:?} in {err}");
        if needle.contains("not supported by hostbench") {
            assert!(!err.contains("spelling"), "{a:?}: {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// The access-pattern advice (`posix_fadvise` RANDOM/SEQUENTIAL on the file, `madvise` on an
/// mmap engine's mapping) a command gives the kernel, as strace shows it: the fd and the
/// mapping's address left out, so fio's calls and ours compare.
fn advice(dir: &Path, program: &str, args: &[&str]) -> Vec<String> {
    let (o, text) = strace_f(dir, program, args, "fadvise64,madvise", &[]);
    assert!(
        o.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut calls = Vec::new();
    for l in text.lines() {
        let Some(call) = l.split_once(' ').map(|(_, c)| c.trim_start()) else {
            continue;
        };
        let pattern = ["RANDOM)", "SEQUENTIAL)"].iter().any(|p| call.contains(p));
        if !pattern {
            continue;
        }
        // fadvise64(6, 0, 4194304, POSIX_FADV_RANDOM) = 0 → fadvise64(0, 4194304, ...);
        // madvise(0x7f.., 4194304, MADV_RANDOM) = 0 → madvise(4194304, MADV_RANDOM).
        let (name, rest) = call.split_once('(').unwrap();
        let args = rest.split_once(')').unwrap().0;
        let args: Vec<&str> = args.split(", ").skip(1).collect();
        calls.push(format!("{name}({})", args.join(", ")));
    }
    calls
}

/// fio advises the kernel of the job's access pattern when it opens a file (fadvise_hint=1,
/// its default: RANDOM for random jobs, SEQUENTIAL otherwise; `random`/`sequential` force
/// one; 0 none) and, for the mmap engine, the mapping too. Without it buffered random reads
/// measure the kernel's readahead. hostbench gives the same advice as the installed fio, call
/// for call, seen through strace.
#[test]
fn fadvise_hint_gives_the_kernel_fios_advice() {
    let have = |p: &str| {
        std::process::Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("strace") {
        eprintln!("skip: strace is not installed; the advice given to the kernel is not checked");
        return;
    }
    let d = tmp("fadvise");
    let hb = common::bin();
    let hb = hb.to_str().expect("a UTF-8 path");
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["--rw=randread"],
            &["fadvise64(0, 4194304, POSIX_FADV_RANDOM)"],
        ),
        (
            &["--rw=read"],
            &["fadvise64(0, 4194304, POSIX_FADV_SEQUENTIAL)"],
        ),
        (&["--rw=randread", "--fadvise_hint=0"], &[]),
        (
            &["--rw=read", "--fadvise_hint=random"],
            &["fadvise64(0, 4194304, POSIX_FADV_RANDOM)"],
        ),
        (
            &["--rw=randrw", "--ioengine=mmap"],
            &[
                "fadvise64(0, 4194304, POSIX_FADV_RANDOM)",
                "madvise(4194304, MADV_RANDOM)",
            ],
        ),
        (
            &["--rw=read", "--ioengine=mmap", "--fadvise_hint=sequential"],
            &[
                "fadvise64(0, 4194304, POSIX_FADV_SEQUENTIAL)",
                "madvise(4194304, MADV_SEQUENTIAL)",
            ],
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec![
            "fio",
            "--name=x",
            "--filename=hb.dat",
            "--size=4m",
            "--bs=4k",
        ];
        args.extend(extra);
        args.push("--no-save");
        let ours = advice(&d, hb, &args);
        assert_eq!(ours, want, "{extra:?}");
        if have("fio") {
            let mut fio_args = vec!["--name=x", "--filename=fio.dat", "--size=4m", "--bs=4k"];
            fio_args.extend(extra);
            assert_eq!(advice(&d, "fio", &fio_args), want, "fio {extra:?}");
        }
    }
    let (code, _, err) = run(&["fio", "--name=x", "--size=4m", "--fadvise_hint=sideways"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("fadvise_hint=sideways") && err.contains("0, 1, random or sequential"),
        "{err}"
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// The general limits (time, warmup, seed) are named as fio spells them, never with
/// sysbench's option names.
#[test]
fn limits_are_named_with_fios_options() {
    let dir = tmp("names");
    let f = s(&dir.join("f"));
    for (opt, want) in [
        ("--runtime=99999999999", "runtime=99999999999 is too large"),
        (
            "--ramp_time=99999999999",
            "ramp_time=99999999999 is too large",
        ),
        (
            "--randseed=9007199254740993",
            "randseed=9007199254740993 is too large",
        ),
    ] {
        let (code, _, err) = run(&[
            "fio",
            "--name=x",
            "--rw=read",
            "--size=64k",
            &format!("--filename={f}"),
            opt,
        ]);
        assert_eq!(code, 2, "{opt}: {err}");
        assert!(err.contains(want), "{opt}: {err}");
        assert!(
            !err.contains("--time") && !err.contains("--warmup") && !err.contains("random seed"),
            "{opt}: {err}"
        );
    }
}

/// A buffered job with `invalidate` (fio's default) drops its region from the page cache at
/// the start of every pass, as fio does when it starts a file's next loop: with `loops` or
/// `time_based` a small file otherwise measured the page cache (5879 MiB/s against fio's
/// 74 MiB/s in a review). Counted through strace: one DONTNEED per pass.
#[test]
fn every_pass_of_a_buffered_job_reads_past_the_cache() {
    if std::process::Command::new("strace")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skip: strace is not installed; the cache drops are not counted");
        return;
    }
    let d = tmp("passes");
    let hb = common::bin();
    let dontneed = |args: &[&str]| -> (usize, u64) {
        let mut a = vec!["fio", "--name=p", "--filename=f", "--size=1m", "--bs=64k"];
        a.extend_from_slice(&["--ioengine=psync", "--output-format=json", "--no-save"]);
        a.extend_from_slice(args);
        let (o, text) = strace_f(&d, &hb, &a, "fadvise64", &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let ios = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
        (text.matches("POSIX_FADV_DONTNEED").count(), ios)
    };
    for rw in ["read", "randread"] {
        let (n, ios) = dontneed(&[&format!("--rw={rw}"), "--loops=4"]);
        assert_eq!(ios, 64, "{rw}: 4 passes of 16 blocks");
        assert_eq!(n, 4, "{rw}: one drop per pass");
        let (n, ios) = dontneed(&[&format!("--rw={rw}"), "--time_based", "--runtime=1"]);
        let passes = ios / 16;
        assert!(
            n as u64 >= passes && n as u64 <= passes + 1,
            "{rw}: {n} drops for {passes} passes"
        );
        // invalidate=0 never drops.
        assert_eq!(
            dontneed(&[&format!("--rw={rw}"), "--loops=2", "--invalidate=0"]).0,
            0
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// `hostbench run disk.fio` (the native grammar) on the job text `jobs` in `dir`, its JSON
/// result: the run must succeed and the result validate against the schema (`what` names it).
pub(crate) fn native_json(jobs: &str, dir: &Path, what: &str) -> Value {
    let jobs = format!("jobs={jobs}");
    let dir = format!("dir={}", s(dir));
    let out = common::hb()
        .args([
            "run",
            "disk.fio",
            "--set",
            &jobs,
            "--set",
            &dir,
            "-f",
            "json",
            "--no-save",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert_valid(&r, what);
    r
}

/// fio 3.33's soft-deprecated options run as without them, with fio's line for each
/// (on stdout before the job lines in the normal layout; on stderr beside JSON, which fio
/// would break by printing it on stdout too).
#[test]
fn deprecated_options_run_with_fios_line() {
    let d = tmp("deprecated");
    let jf = d.join("dep.fio");
    std::fs::write(
        &jf,
        "[x]\nioengine=null\nsize=64k\nflow_watermark=10\nverifysort=1\nverifysort_nr=8\n",
    )
    .unwrap();
    let want = [
        "Option flow_watermark is deprecated",
        "Option verifysort is deprecated",
        "Option verifysort_nr is deprecated",
    ];
    let out = stdout_ok(&["fio", &s(&jf), "--no-save"]);
    let first: Vec<&str> = out.lines().take(3).collect();
    assert_eq!(first, want, "{out}");
    assert!(out.contains("x: (g=0): rw=read"), "{out}");
    let (code, out, err) = run(&["fio", &s(&jf), "--output-format=json", "--no-save"]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 16);
    for w in want {
        assert!(err.contains(w), "{err}");
    }
    if super::fio_seq::need_fio("deprecated_options_run_with_fios_line") {
        let o = std::process::Command::new("fio")
            .arg(&jf)
            .current_dir(&d)
            .output()
            .unwrap();
        let fio_out = String::from_utf8_lossy(&o.stdout);
        let fio_first: Vec<&str> = fio_out.lines().take(3).collect();
        assert_eq!(fio_first, want, "fio: {fio_out}");
    }
    std::fs::remove_dir_all(d).unwrap();
}
