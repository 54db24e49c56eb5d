//! `hostbench fleet`: the same command on several hosts over OpenSSH. The hosts are network
//! namespaces on this machine, each with its own sshd ([`netns`]); where namespaces cannot
//! be made (not root, no iproute2 or openssh-server), each test prints that it was skipped
//! and why.

#[path = "fleet/netns.rs"]
mod netns;

use netns::Hosts;

#[test]
fn harness_hosts_answer_over_ssh_and_leave_nothing_behind() {
    if netns::skip("harness_hosts_answer_over_ssh_and_leave_nothing_behind") {
        return;
    }
    let names: Vec<String>;
    {
        let hosts = Hosts::start(2);
        names = hosts.hosts.iter().map(|h| h.ns.clone()).collect();
        for (i, h) in hosts.hosts.iter().enumerate() {
            // Each host is its own network: its address is the one it sees on its interface.
            let o = hosts
                .ssh()
                .args([
                    h.addr.as_str(),
                    "ip",
                    "-4",
                    "-o",
                    "addr",
                    "show",
                    "scope",
                    "global",
                ])
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let addrs = String::from_utf8_lossy(&o.stdout).into_owned();
            assert!(addrs.contains(&format!("{}/24", h.addr)), "{addrs}");
            assert_eq!(addrs.lines().count(), 1, "{addrs}");
            assert!(!hosts.pids(i).is_empty());
        }
    }
    let list = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    for n in &names {
        assert!(!list.contains(n.as_str()), "{n} left behind: {list}");
    }
}

use crate::common::{bin, default_signals};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `hostbench fleet` with the hosts' ssh config, saving into `db`.
fn fleet(hosts: &Hosts, db: &Path) -> Command {
    // The controller's own temporary directory (ssh master sockets) goes under the test's,
    // so the test can see that nothing is left of it.
    let tmp = hosts.dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut c = Command::new(bin());
    c.env("TMPDIR", &tmp)
        .env("HOSTBENCH_RESULTS_DB", db)
        .env_remove("HOSTBENCH_NO_SAVE")
        .arg("fleet")
        .arg("-F")
        .arg(&hosts.ssh_config);
    default_signals(&mut c);
    c
}

static SMALL: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

extern "C" fn remove_small() {
    if let Some(p) = SMALL.get() {
        let _ = std::fs::remove_file(p);
    }
}

/// [`fleet`] deploying a stripped copy of the binary (`--binary`): 35 MB to copy to each
/// host instead of the debug build's 190 MB. The first test deploys the binary itself.
fn fleet_small(hosts: &Hosts, db: &Path) -> Command {
    let small = SMALL.get_or_init(|| {
        let p = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("hostbench-fleet-stripped-{}", std::process::id()));
        let s = Command::new("strip")
            .arg("-o")
            .arg(&p)
            .arg(bin())
            .status()
            .expect("strip (binutils) runs");
        assert!(s.success(), "strip failed");
        // SAFETY: registering a plain function that only removes a file.
        unsafe { libc::atexit(remove_small) };
        p
    });
    let mut c = fleet(hosts, db);
    c.arg("--binary").arg(small);
    c
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Every stored run of `db`, as stored.
fn stored(db: &Path) -> Vec<Value> {
    let o = Command::new(bin())
        .env("HOSTBENCH_RESULTS_DB", db)
        .args(["results", "export"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["runs"].as_array().cloned().unwrap_or_default()
}

/// Only sshd is left in each host's namespace: no agent, no command, no ssh session.
fn assert_nothing_left(hosts: &Hosts) {
    let t0 = Instant::now();
    for i in 0..hosts.hosts.len() {
        while hosts.pids(i).len() > 1 && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(hosts.pids(i).len(), 1, "processes left on host {i}");
    }
    // Here: no ssh master connection left running, no socket directory left behind.
    let tmp = hosts.dir.path().join("tmp");
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(
        left.is_empty(),
        "left in the controller's temporary directory: {left:?}"
    );
    let tmp = tmp.to_string_lossy().into_owned();
    let running = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .map(|p| std::fs::read(p.path().join("cmdline")).unwrap_or_default())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .find(|c| c.contains(&tmp))
    };
    let t0 = Instant::now();
    while running().is_some() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(running(), None, "still running");
}

#[test]
fn runs_on_every_host_starts_them_together_and_saves_each_hosts_results() {
    if netns::skip("runs_on_every_host_starts_them_together_and_saves_each_hosts_results") {
        return;
    }
    let hosts = Hosts::start(3);
    let db = hosts.dir.path().join("results.db");
    let o = fleet(&hosts, &db)
        .args([&hosts.list(), "--label", "qual", "--"])
        .args(["cpu", "--cpu-max-prime=2000", "--time=1", "run"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    // The first time, the binary is copied to every host; the report says so per host.
    for h in &hosts.hosts {
        let line = out.lines().find(|l| l.starts_with(&h.addr)).expect(&out);
        assert!(line.contains("copied") && line.ends_with("ok"), "{line}");
        // Into the host's cache, under its SHA-256, and the run's directory is gone.
        let bins: Vec<_> = std::fs::read_dir(h.cache.join("hostbench/bin"))
            .unwrap()
            .collect();
        assert_eq!(bins.len(), 1);
        let runs = h.cache.join("hostbench/runs");
        let left: Vec<_> = std::fs::read_dir(&runs)
            .map(|d| {
                d.flatten()
                    .flat_map(|r| std::fs::read_dir(r.path()).unwrap().flatten())
                    .collect()
            })
            .unwrap_or_default();
        assert!(left.is_empty(), "run directories left: {left:?}");
    }
    let runs = stored(&db);
    assert_eq!(runs.len(), 3, "{err}");
    let fleet_run = runs[0]["fleet"]["run"].as_str().unwrap().to_string();
    assert!(out.contains(&format!("fleet run {fleet_run}")), "{out}");
    let mut names: Vec<&str> = runs
        .iter()
        .map(|r| r["fleet"]["host"].as_str().unwrap())
        .collect();
    names.sort();
    let mut want: Vec<&str> = hosts.hosts.iter().map(|h| h.addr.as_str()).collect();
    want.sort();
    assert_eq!(names, want);
    let mut lates = Vec::new();
    for r in &runs {
        crate::common::assert_valid(r, "a fleet run");
        assert_eq!(r["fleet"]["run"], fleet_run.as_str());
        assert_eq!(r["label"], "qual");
        assert_eq!(r["workload"]["id"], "cpu");
        assert!(r["metrics"]["events"].as_u64().unwrap() > 0);
        assert_eq!(r["schema_minor"], 7);
        // One common instant for every host, each host's lateness and clock recorded.
        assert_eq!(
            r["fleet"]["start_at_unix_ns"],
            runs[0]["fleet"]["start_at_unix_ns"]
        );
        let late = r["fleet"]["start_late_ns"].as_i64().unwrap();
        assert!(late >= 0, "started before the instant: {late}");
        lates.push(late);
        assert!(r["fleet"]["clock_rtt_ns"].as_i64().unwrap() > 0);
        // The namespaces share this machine's clock: the measured offset is within the
        // sample's round trip.
        let off = r["fleet"]["clock_offset_ns"].as_i64().unwrap();
        assert!(
            off.abs() <= r["fleet"]["clock_rtt_ns"].as_i64().unwrap(),
            "{off}"
        );
    }
    let skew = lates.iter().max().unwrap() - lates.iter().min().unwrap();
    eprintln!("fleet start skew over 3 hosts: {:.3} ms", skew as f64 / 1e6);
    assert!(out.contains("start skew: "), "{out}");
    assert_nothing_left(&hosts);

    // The second time the binary is found in each host's cache, and an inventory names the
    // hosts (the host names recorded are the inventory's).
    let inv = hosts.dir.path().join("inventory.ini");
    let mut ini = String::from("[compute]\n");
    for (i, h) in hosts.hosts.iter().enumerate() {
        ini.push_str(&format!(
            "node{i} ansible_host={} ansible_user=root\n",
            h.addr
        ));
    }
    ini.push_str("[other]\nnowhere\n");
    std::fs::write(&inv, ini).unwrap();
    let o = fleet(&hosts, &db)
        .arg("-i")
        .arg(format!("{}:compute", inv.display()))
        .arg("--clean")
        .args(["--", "cpu", "--cpu-max-prime=2000", "--time=1", "run"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    for i in 0..3 {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("node{i} ")))
            .expect(&out);
        assert!(line.contains("cached") && line.ends_with("ok"), "{line}");
    }
    let runs = stored(&db);
    assert_eq!(runs.len(), 6);
    assert_eq!(
        runs.iter()
            .filter(|r| r["fleet"]["host"] == "node1")
            .count(),
        1
    );
    // --clean: nothing this fleet put on the hosts is left there.
    for h in &hosts.hosts {
        let bins: Vec<_> = std::fs::read_dir(h.cache.join("hostbench/bin"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(bins.is_empty(), "{bins:?}");
        let runs: Vec<_> = std::fs::read_dir(h.cache.join("hostbench/runs"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(
            runs.len() <= 1,
            "only the first fleet's empty directory may stay: {runs:?}"
        );
    }
}

#[test]
fn a_failing_and_an_unreachable_host_are_reported_while_the_others_complete() {
    if netns::skip("a_failing_and_an_unreachable_host_are_reported_while_the_others_complete") {
        return;
    }
    let hosts = Hosts::start(3);
    let db = hosts.dir.path().join("results.db");
    // Host 2 cannot keep the binary: its cache's place is taken by a file.
    std::fs::write(hosts.hosts[2].cache.join("hostbench"), "not a directory").unwrap();
    // Nothing listens on port 2222 of host 0.
    let unreachable = format!("{}:2222", hosts.hosts[0].addr);
    let list = format!("{},{unreachable}", hosts.list());
    let o = fleet_small(&hosts, &db)
        .args([list.as_str(), "--connect-timeout", "3s", "--"])
        .args(["cpu", "--cpu-max-prime=2000", "--time=1", "run"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    let line = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no line for {name}: {out}"))
            .to_string()
    };
    assert!(line(&hosts.hosts[0].addr).ends_with("ok"), "{out}");
    assert!(line(&hosts.hosts[1].addr).ends_with("ok"), "{out}");
    assert!(
        line(&hosts.hosts[2].addr).contains("FAILED: exit 1 (copying the binary)"),
        "{out}"
    );
    assert!(
        line(&unreachable).contains("FAILED: unreachable (connect)"),
        "{out}"
    );
    // Each failure comes with what the host said.
    assert!(err.contains("Connection refused"), "{err}");
    assert!(
        err.contains("Not a directory") || err.contains("File exists"),
        "{err}"
    );
    let runs = stored(&db);
    let mut names: Vec<&str> = runs
        .iter()
        .map(|r| r["fleet"]["host"].as_str().unwrap())
        .collect();
    names.sort();
    let mut want = vec![hosts.hosts[0].addr.as_str(), hosts.hosts[1].addr.as_str()];
    want.sort();
    assert_eq!(names, want);
    assert_nothing_left(&hosts);
}

#[test]
fn ctrl_c_stops_every_remote_run_and_keeps_their_partial_results() {
    if netns::skip("ctrl_c_stops_every_remote_run_and_keeps_their_partial_results") {
        return;
    }
    let hosts = Hosts::start(3);
    let db = hosts.dir.path().join("results.db");
    let err_file = hosts.dir.path().join("fleet.err");
    let mut child = fleet_small(&hosts, &db)
        .args([&hosts.list(), "--start-delay", "1s", "--"])
        .args(["cpu", "--cpu-max-prime=2000", "--time=120", "run"])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&err_file).unwrap())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !std::fs::read_to_string(&err_file)
        .unwrap()
        .contains("start at")
    {
        assert!(t0.elapsed() < Duration::from_secs(60), "never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(2500));
    let stopped = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let err = std::fs::read_to_string(&err_file).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(stopped.elapsed() < Duration::from_secs(30), "{err}");
    let runs = stored(&db);
    assert_eq!(runs.len(), 3, "{err}");
    for r in &runs {
        assert_eq!(r["outcome"]["stop_reason"], "interrupted", "{r}");
        assert!(r["metrics"]["events"].as_u64().unwrap() > 0);
        let d = r["metrics"]["duration_s"].as_f64().unwrap();
        assert!(d > 0.5 && d < 60.0, "{d}");
    }
    assert_nothing_left(&hosts);
}

#[test]
fn job_files_travel_with_the_command_and_a_host_past_its_timeout_keeps_its_partial_results() {
    if netns::skip(
        "job_files_travel_with_the_command_and_a_host_past_its_timeout_keeps_its_partial_results",
    ) {
        return;
    }
    let hosts = Hosts::start(2);
    let db = hosts.dir.path().join("results.db");
    // A host file: comments, blank lines, user@host:port.
    let list = hosts.dir.path().join("nodes.txt");
    let mut nodes = String::from("# the test's hosts\n\n");
    for h in &hosts.hosts {
        nodes.push_str(&format!("root@{}:22  # a node\n", h.addr));
    }
    std::fs::write(&list, nodes).unwrap();
    // A job file that exists only here: it travels with the command.
    let job = hosts.dir.path().join("null.fio");
    std::fs::write(
        &job,
        "[travel]\nioengine=null\nsize=8m\nbs=4k\nrw=randread\n",
    )
    .unwrap();
    let o = fleet_small(&hosts, &db)
        .arg(format!("@{}", list.display()))
        // One host at a time: two waves, each started on its own.
        .args(["--parallel", "1", "--", "fio", "--output-format=json"])
        .arg(&job)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let runs = stored(&db);
    assert_eq!(runs.len(), 2, "{err}");
    for r in &runs {
        assert_eq!(r["workload"]["id"], "disk.fio");
        assert_eq!(r["fio"]["jobs"][0]["name"], "travel", "{}", r["fio"]);
        assert_eq!(r["fio"]["blocks"][0]["read"]["total_ios"], 2048);
        assert!(r["fleet"]["host"].as_str().unwrap().starts_with("root@"));
    }
    assert_eq!(err.matches(" start at ").count(), 2, "two waves: {err}");
    // Each host's own report stays there (its tail is shown when the host fails); stdout
    // is the fleet's summary.
    assert!(!out.contains("jobname"), "{out}");

    // A host past its time is stopped like Ctrl-C stops it: its partial result is kept and
    // it is reported as failed.
    let t0 = Instant::now();
    let o = fleet_small(&hosts, &db)
        .args([
            &hosts.list(),
            "--timeout",
            "8s",
            "--start-delay",
            "1s",
            "--",
        ])
        .args(["cpu", "--cpu-max-prime=2000", "--time=120", "run"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(t0.elapsed() < Duration::from_secs(60));
    for h in &hosts.hosts {
        let line = out.lines().find(|l| l.starts_with(&h.addr)).expect(&out);
        assert!(line.contains("FAILED: timed out (run)"), "{line}");
    }
    let runs = stored(&db);
    let stopped: Vec<&Value> = runs
        .iter()
        .filter(|r| r["workload"]["id"] == "cpu")
        .collect();
    assert_eq!(stopped.len(), 2, "{err}");
    for r in stopped {
        assert_eq!(r["outcome"]["stop_reason"], "interrupted");
        assert!(r["metrics"]["events"].as_u64().unwrap() > 0);
    }
    assert_nothing_left(&hosts);
}

#[test]
fn bad_fleet_command_lines_are_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["fleet", "a,b"], "after --"),
        (&["fleet", "--", "cpu", "run"], "which hosts?"),
        (&["fleet", "a,a", "--", "cpu", "run"], "named twice"),
        (
            &["fleet", "-oProxyCommand=x", "--", "cpu", "run"],
            "unexpected argument",
        ),
        (
            &["fleet", "h", "--", "cpu", "--results-db=x", "run"],
            "fleet's business",
        ),
        (
            &["fleet", "@/nonexistent/nodes", "--", "cpu", "run"],
            "host file /nonexistent/nodes",
        ),
        (
            &["fleet", "-i", "inv.ini", "--", "cpu", "run"],
            "INVENTORY:GROUP",
        ),
        (&["fleet", "h:99999", "--", "cpu", "run"], "not 1-65535"),
        (
            &["fleet", "h", "--parallel", "0", "--", "cpu", "run"],
            "at least 1",
        ),
    ];
    for (args, want) in cases {
        let o = Command::new(bin()).args(*args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn fleet_report_finds_the_host_with_a_cpu_quota_slow() {
    if netns::skip("fleet_report_finds_the_host_with_a_cpu_quota_slow") {
        return;
    }
    let mut hosts = Hosts::start(3);
    if let Err(why) = hosts.slow_down(2, 5) {
        eprintln!("SKIPPED fleet::fleet_report_finds_the_host_with_a_cpu_quota_slow: {why}");
        return;
    }
    let db = hosts.dir.path().join("results.db");
    let o = fleet_small(&hosts, &db)
        .args([&hosts.list(), "--"])
        .args(["cpu", "--cpu-max-prime=5000", "--time=2", "run"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("fleet run "))
        .expect(&out)
        .trim()
        .to_string();
    let report = |args: &[&str]| {
        Command::new(bin())
            .env("HOSTBENCH_RESULTS_DB", &db)
            .args(["fleet", "report", &id])
            .args(args)
            .output()
            .unwrap()
    };
    let o = report(&["--fail-below", "50%"]);
    let (text_out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{text_out}\n{err}");
    assert!(
        text_out.contains("cpu: event rate, events/s (higher is better)"),
        "{text_out}"
    );
    let line = |name: &str| {
        text_out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name}: {text_out}"))
            .to_string()
    };
    assert!(line(&hosts.hosts[0].addr).ends_with("pass"), "{text_out}");
    assert!(line(&hosts.hosts[1].addr).ends_with("pass"), "{text_out}");
    // Slow by the threshold (and an outlier by its z when the two others agree closely
    // enough: with three hosts on a busy machine they may not).
    assert!(line(&hosts.hosts[2].addr).contains(" slow"), "{text_out}");
    eprintln!("{text_out}");
    // JSON: the same verdicts, the median the middle host's figure.
    let o = report(&["-f", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "without --fail-below the report only reports"
    );
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let g = &j["groups"][0];
    let mut values: Vec<f64> = g["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["value"].as_f64().unwrap())
        .collect();
    values.sort_by(f64::total_cmp);
    assert_eq!(g["median"].as_f64().unwrap(), values[1]);
    let slow = g["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["host"] == hosts.hosts[2].addr.as_str())
        .unwrap();
    assert!(slow["ratio"].as_f64().unwrap() < 0.5, "{slow}");
    let z = |r: &Value| r["z"].as_f64().unwrap();
    for r in g["rows"].as_array().unwrap() {
        assert!(z(slow) <= z(r), "the slowest host has the lowest z: {g}");
        assert_eq!(r["outlier"], z(r).abs() > 3.5, "{r}");
    }
    // Without --fail-below only the robust z judges.
    let want = if slow["outlier"] == true {
        "slow"
    } else {
        "pass"
    };
    assert_eq!(slow["verdict"], want, "{slow}");
    // CSV: a row per host.
    let o = report(&["-f", "csv"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 4);
    // An unknown fleet run is an error.
    let o = Command::new(bin())
        .env("HOSTBENCH_RESULTS_DB", &db)
        .args(["fleet", "report", "nope"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// The fan-out's own cost: a 1-second run on many hosts (HOSTBENCH_FLEET_SCALE_HOSTS,
/// default 50), the binary already in their (shared) cache. A measurement, not a check:
/// run it by name with `--ignored --nocapture`; it prints where the time went.
#[test]
#[ignore]
fn scale_fan_out_of_a_one_second_run() {
    if netns::skip("scale_fan_out_of_a_one_second_run") {
        return;
    }
    let n: usize = std::env::var("HOSTBENCH_FLEET_SCALE_HOSTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let t0 = Instant::now();
    let hosts = Hosts::start_with(n, true);
    eprintln!("{n} hosts made in {:.1} s", t0.elapsed().as_secs_f64());
    // A stripped copy of the binary the hosts run (HOSTBENCH_FLEET_SCALE_BINARY, e.g. a
    // release build; default: the debug build under test): what is copied is the size of a
    // build, not of its symbols.
    let small = hosts.dir.path().join("hostbench");
    let source = std::env::var_os("HOSTBENCH_FLEET_SCALE_BINARY")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(bin);
    let s = Command::new("strip")
        .arg("-o")
        .arg(&small)
        .arg(&source)
        .status()
        .unwrap();
    assert!(s.success());
    let db = hosts.dir.path().join("results.db");
    let first = hosts.hosts[0].addr.clone();
    let o = fleet(&hosts, &db)
        .arg(&first)
        .arg("--binary")
        .arg(&small)
        .args(["--", "cpu", "--time=1", "run"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t1 = Instant::now();
    let o = fleet(&hosts, &db)
        .arg(hosts.list())
        .arg("--binary")
        .arg(&small)
        .args(["--", "cpu", "--time=1", "run"])
        .output()
        .unwrap();
    let wall = t1.elapsed().as_secs_f64();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    for l in err.lines().filter(|l| l.starts_with("fleet 2")) {
        eprintln!("{l}");
    }
    eprintln!("{}", out.lines().last().unwrap_or(""));
    eprintln!(
        "{n} hosts, 1 s run: {wall:.2} s wall, {:.2} s overhead",
        wall - 1.0
    );
    assert_eq!(stored(&db).len(), n + 1);
}

#[test]
fn runs_started_by_anything_else_join_a_fleet_run_through_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    for host in ["node-a", "node-b"] {
        let o = Command::new(bin())
            .env("HOSTBENCH_RESULTS_DB", &db)
            .env("HOSTBENCH_FLEET_RUN", "daemonset-7")
            .env("HOSTBENCH_FLEET_HOST", host)
            .args(["cpu", "--cpu-max-prime=2000", "--time=1", "run"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let runs = stored(&db);
    assert_eq!(runs.len(), 2);
    for r in &runs {
        assert_eq!(r["fleet"]["run"], "daemonset-7");
        // No common start was asked for: none is recorded.
        assert!(r["fleet"].get("start_late_ns").is_none(), "{}", r["fleet"]);
        crate::common::assert_valid(r, "a run that joined a fleet run");
    }
    let o = Command::new(bin())
        .env("HOSTBENCH_RESULTS_DB", &db)
        .args(["fleet", "report", "daemonset-7", "-f", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{md}");
    assert!(
        md.contains("| node-a |") && md.contains("| node-b |"),
        "{md}"
    );
    // A value that is not what it must be is a usage error naming the variable.
    let o = Command::new(bin())
        .env("HOSTBENCH_RESULTS_DB", &db)
        .env("HOSTBENCH_FLEET_RUN", "x")
        .env("HOSTBENCH_FLEET_START_AT_NS", "soon")
        .args(["cpu", "--cpu-max-prime=2000", "--time=1", "run"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("HOSTBENCH_FLEET_START_AT_NS"), "{err}");
    assert_eq!(stored(&db).len(), 2);
}
