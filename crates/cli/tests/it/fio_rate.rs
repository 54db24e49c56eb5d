//! fio's rate control and think time (issue 21, part 4), side by side with the installed fio:
//! the same job through both, compared on achieved IOPS per direction (within a tolerance,
//! and against the rate asked for), I/O counts of size-bound jobs, runtimes, the minimum-rate
//! failure (exit status, `err=5`, fio's message) and fio's `exitwhat.fio` example. Rates are
//! far below what this machine does, so the figures depend on the pacing, not on speed.
//!
//! Without fio the comparisons are skipped with a message, unless `HOSTBENCH_TEST_FIO` is
//! set: then a missing fio fails the test.

use super::fio::{s, tmp};
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_seq::need_fio;
use serde_json::Value;
use std::time::Duration;

/// Per JSON job entry: (name, error, read ios, write ios, read IOPS, write IOPS, runtime ms).
type Entry = (String, i64, u64, u64, f64, f64, u64);

fn entries(v: &Value) -> Vec<Entry> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let rt = |d: &str| j[d]["runtime"].as_u64().unwrap();
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["error"].as_i64().unwrap(),
                j["read"]["total_ios"].as_u64().unwrap(),
                j["write"]["total_ios"].as_u64().unwrap(),
                j["read"]["iops"].as_f64().unwrap(),
                j["write"]["iops"].as_f64().unwrap(),
                rt("read").max(rt("write")),
            )
        })
        .collect()
}

/// Both runs of `args` (with JSON output), each successful: their first job entries.
fn both(args: &[&str]) -> (Entry, Entry) {
    let d = tmp("rate");
    let f = format!("--filename={}", s(&d.join("f")));
    let mut a = args.to_vec();
    a.extend([f.as_str(), "--output-format=json"]);
    let (h, p) = (hb(&d, &a), fio(&d, &a));
    assert_eq!(h.code, 0, "hostbench fio {a:?}: {}", h.err);
    assert_eq!(p.code, 0, "fio {a:?}: {}", p.err);
    (
        entries(&doc(&h.out)).remove(0),
        entries(&doc(&p.out)).remove(0),
    )
}

/// [`both`] where fio 3.33 may hang (a think time's spin that overran it under load leaves
/// a negative rest, which fio sleeps for ever): fio gets 30 s, and a hung fio is reported
/// and left out (`None`), never waited for or counted as hostbench's failure.
fn both_unless_fio_hangs(args: &[&str]) -> (Entry, Option<Entry>) {
    let d = tmp("rate");
    let f = format!("--filename={}", s(&d.join("f")));
    let mut a = args.to_vec();
    a.extend([f.as_str(), "--output-format=json"]);
    let h = hb(&d, &a);
    assert_eq!(h.code, 0, "hostbench fio {a:?}: {}", h.err);
    let o = std::process::Command::new("timeout")
        .args(["-k", "5", "30", "fio"])
        .args(&a)
        .current_dir(&d)
        .output()
        .unwrap();
    let p = match o.status.code() {
        Some(124) | Some(137) => {
            eprintln!("fio {a:?} hung (fio 3.33's think-time spin bug): not compared");
            None
        }
        code => {
            assert_eq!(
                code,
                Some(0),
                "fio {a:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            Some(entries(&doc(&String::from_utf8_lossy(&o.stdout))).remove(0))
        }
    };
    (entries(&doc(&h.out)).remove(0), p)
}

/// `got` within `tol` (a fraction) of `want`.
fn near(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= want * tol,
        "{what}: {got} is not within {:.0}% of {want}",
        tol * 100.0
    );
}

#[test]
fn rates_per_direction_pace_as_fio() {
    if !need_fio("rates_per_direction_pace_as_fio") {
        return;
    }
    // (args, read IOPS and write IOPS asked for)
    let cases: [(&[&str], f64, f64); 3] = [
        (
            &[
                "--name=a",
                "--rw=randrw",
                "--size=8m",
                "--bs=4k",
                "--rate_iops=200,50",
                "--runtime=2",
                "--time_based",
                "--ioengine=psync",
            ],
            200.0,
            50.0,
        ),
        // 400 KiB/s each way in 4 KiB blocks, through a queue.
        (
            &[
                "--name=a",
                "--rw=randrw",
                "--size=8m",
                "--bs=4k",
                "--rate=400k",
                "--iodepth=8",
                "--ioengine=libaio",
                "--runtime=2",
                "--time_based",
            ],
            100.0,
            100.0,
        ),
        // Only writes limited: reads go as fast as they can.
        (
            &[
                "--name=a",
                "--rw=randrw",
                "--size=8m",
                "--bs=4k",
                "--rate_iops=,80",
                "--ioengine=null",
                "--runtime=1",
                "--time_based",
            ],
            0.0,
            80.0,
        ),
    ];
    for (args, r, w) in cases {
        let (h, p) = both(args);
        for (who, e) in [("hostbench", &h), ("fio", &p)] {
            if r > 0.0 {
                near(&format!("{who} {args:?} read IOPS"), e.4, r, 0.1);
            } else {
                assert!(
                    e.4 > 20.0 * w,
                    "{who} {args:?}: reads are not limited: {e:?}"
                );
            }
            near(&format!("{who} {args:?} write IOPS"), e.5, w, 0.1);
        }
    }
    // A size-bound job: the same I/O count, and the time the rate gives it (256 reads at
    // 500 IOPS: 0.51 s).
    let (h, p) = both(&[
        "--name=a",
        "--rw=read",
        "--size=1m",
        "--bs=4k",
        "--rate_iops=500",
        "--ioengine=psync",
    ]);
    assert_eq!((h.2, h.3), (256, 0));
    assert_eq!((h.2, h.3), (p.2, p.3));
    for (who, e) in [("hostbench", &h), ("fio", &p)] {
        assert!((480..700).contains(&e.6), "{who}: runtime {} ms", e.6);
    }
}

#[test]
fn poisson_rate_keeps_the_mean_as_fio() {
    if !need_fio("poisson_rate_keeps_the_mean_as_fio") {
        return;
    }
    for process in ["poisson", "linear"] {
        let p = format!("--rate_process={process}");
        let (h, f) = both(&[
            "--name=a",
            "--rw=randread",
            "--size=8m",
            "--bs=4k",
            "--rate_iops=100",
            &p,
            "--runtime=3",
            "--time_based",
            "--ioengine=null",
        ]);
        // 300 arrivals expected; a Poisson count's deviation is about 17.
        let tol = if process == "poisson" { 0.17 } else { 0.03 };
        near(&format!("hostbench {process} ios"), h.2 as f64, 300.0, tol);
        near(&format!("fio {process} ios"), f.2 as f64, 300.0, tol);
    }
}

/// Every job block's header in a normal report, cut after `err=` and its number.
fn err_lines(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let p = l.find(": err=")?;
            let n = l[p + 6..].split([':', '(']).next().unwrap().trim();
            Some(format!("{} err={n}", &l[..p]))
        })
        .collect()
}

/// The figure after `prefix` in fio's minimum-rate message of `r` (stdout or stderr).
fn got(r: &Ran, prefix: &str) -> u64 {
    let all = format!("{}{}", r.out, r.err);
    let i = all
        .find(prefix)
        .unwrap_or_else(|| panic!("no {prefix:?} in:\n{all}"));
    all[i + prefix.len()..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn a_job_below_its_minimum_rate_fails_as_in_fio() {
    if !need_fio("a_job_below_its_minimum_rate_fails_as_in_fio") {
        return;
    }
    let d = tmp("ratemin");
    let f = format!("--filename={}", s(&d.join("f")));
    // 20 ms of think time after each read: about 49 reads a second, below 80 (IOPS) and
    // below 1 MiB/s; fio lets the job settle 2 s, then ends it after one rate_cycle.
    for (min, prefix, lo, hi) in [
        (
            "--rate_iops_min=80",
            "a: rate_iops_min=80 not met, got ",
            35,
            55,
        ),
        (
            "--ratemin=1m",
            "a: rate_min=1048576B/s not met, got ",
            35 * 4096,
            55 * 4096,
        ),
    ] {
        let args = [
            "--name=a",
            "--rw=randread",
            "--size=8m",
            "--bs=4k",
            "--thinktime=20ms",
            min,
            "--runtime=10",
            "--time_based",
            "--ioengine=psync",
            &f,
        ];
        let (h, p) = (hb(&d, &args), fio(&d, &args));
        assert_eq!(h.code, 1, "one job failed: exit status 1\n{}", h.err);
        assert_eq!(h.code, p.code, "fio: {}", p.err);
        assert_eq!(err_lines(&h.out), ["a: (groupid=0, jobs=1) err=5"]);
        assert_eq!(err_lines(&h.out), err_lines(&p.out), "fio:\n{}", p.out);
        assert!(h.out.contains("func=check_min_rate"), "{}", h.out);
        for (who, r) in [("hostbench", &h), ("fio", &p)] {
            let g = got(r, prefix);
            assert!((lo..=hi).contains(&g), "{who} {min}: got {g}");
            assert!(
                r.took > Duration::from_millis(2500) && r.took < Duration::from_secs(6),
                "{who} {min}: took {:?}",
                r.took
            );
        }
    }
}

#[test]
fn think_time_spaces_ios_as_fio() {
    if !need_fio("think_time_spaces_ios_as_fio") {
        return;
    }
    // 1000 I/Os, 20 ms of think time after every 50: 19 or 20 thinks, about 0.4 s. (With
    // 10 ms and a 5 ms spin, fio 3.33 hung under load: a spin that overran the think time
    // left a negative rest, which fio sleeps for ever.)
    for extra in ["--thinktime_spin=5ms", "--iodepth=8"] {
        let (h, p) = both_unless_fio_hangs(&[
            "--name=a",
            "--ioengine=null",
            "--rw=read",
            "--size=1g",
            "--bs=4k",
            "--thinktime=20ms",
            "--thinktime_blocks=50",
            "--number_ios=1000",
            extra,
        ]);
        assert_eq!((h.2, h.6 >= 380), (1000, true), "{h:?}");
        let Some(p) = p else {
            continue;
        };
        assert_eq!(h.2, p.2);
        near(
            &format!("hostbench {extra} runtime"),
            h.6 as f64,
            p.6 as f64,
            0.25,
        );
    }
    // 100 ms of think time after every 200 ms of I/O at 1000 IOPS for 1.5 s: by default the
    // think time counts against the rate, so the job catches up (about 1500 I/Os); with
    // rate_ignore_thinktime it does not (about 1000: 1 s of I/O).
    for (ign, want) in [("0", 1500.0), ("1", 1000.0)] {
        let i = format!("--rate_ignore_thinktime={ign}");
        let (h, p) = both(&[
            "--name=a",
            "--ioengine=null",
            "--rw=read",
            "--size=1g",
            "--bs=4k",
            "--rate_iops=1000",
            "--thinktime=100ms",
            "--thinktime_iotime=200ms",
            &i,
            "--runtime=1500ms",
            "--time_based",
        ]);
        near(&format!("hostbench {i} ios"), h.2 as f64, want, 0.12);
        near(&format!("fio {i} ios"), p.2 as f64, want, 0.12);
        near(
            &format!("hostbench against fio, {i}"),
            h.2 as f64,
            p.2 as f64,
            0.15,
        );
    }
}

#[test]
fn fios_exitwhat_example_runs_as_in_fio() {
    if !need_fio("fios_exitwhat_example_runs_as_in_fio") {
        return;
    }
    let d = tmp("exitwhat");
    // examples/exitwhat.fio, with its file here, 16m instead of 1g and 200 I/Os instead of
    // 1000 for the slow jobs (2 ms of think time after each).
    let text = format!(
        "[global]\nfilename={}\nfilesize=16m\nblocksize=4096\ngroup_reporting\nexitall=1\n\n\
         [slow1]\nrw=read\nnumjobs=1\nioengine=sync\nnew_group=1\nthinktime=2000\n\
         number_ios=200\nexit_what=stonewall\n\n\
         [fast1]\nnew_group=1\nrw=randrw\nnumjobs=3\nioengine=libaio\niodepth=32\n\
         rate=300,300,300\n\n\
         [slow2]\nstonewall\nrw=write\nnumjobs=1\nioengine=sync\nnew_group=1\n\
         thinktime=2000\nnumber_ios=200\nexit_what=all\n\n\
         [fast2]\nrw=randrw\nnumjobs=3\nioengine=libaio\niodepth=32\nrate=300,300,300\n\n\
         [runsnever]\nrw=randrw\nnumjobs=3\nioengine=libaio\niodepth=32\nrate=300,300,300\n",
        s(&d.join("test"))
    );
    std::fs::write(d.join("exitwhat.fio"), text).unwrap();
    let args = ["exitwhat.fio", "--output-format=json"];
    let (h, p) = (hb(&d, &args), fio(&d, &args));
    assert_eq!((h.code, p.code), (0, 0), "{}\n{}", h.err, p.err);
    let (he, pe) = (entries(&doc(&h.out)), entries(&doc(&p.out)));
    let counts = |e: &[Entry]| {
        e.iter()
            .map(|x| (x.0.clone(), x.1, x.2, x.3))
            .collect::<Vec<_>>()
    };
    // The slow jobs do their 200 I/Os; each fast clone one read and one write (at 300
    // bytes/s the next 4 KiB is 13.7 s away) until the slow job of its group stops it;
    // `runsnever` runs beside slow2 in its group (no stonewall) and is stopped with it.
    assert_eq!(
        counts(&he),
        [
            ("slow1".to_string(), 0, 200, 0),
            ("fast1".to_string(), 0, 3, 3),
            ("slow2".to_string(), 0, 6, 206)
        ]
    );
    assert_eq!(counts(&he), counts(&pe));
    // The fast jobs end with the slow ones (0.4 s of think time), not 13.7 s later. fio
    // notices the stop up to about 1.3 s late (its runtime 1654 ms here); hostbench within
    // 10 ms.
    let slow1 = he[0].6;
    assert!((400..1000).contains(&slow1), "{he:?}");
    assert!(he[1].6 <= slow1 + 200, "{he:?}");
    assert!(h.took < Duration::from_secs(5), "{:?}", h.took);
}

#[test]
fn fios_flow_example_keeps_its_ratio_as_in_fio() {
    if !need_fio("fios_flow_example_keeps_its_ratio_as_in_fio") {
        return;
    }
    let d = tmp("flow");
    // examples/flow.fio with its file here, 64m instead of 100g and 2 s instead of 30:
    // job1 (flow=8) reads 8 blocks for each block job2 (flow=1) writes.
    let text = format!(
        "[global]\nnorandommap\nthread\ntime_based\nruntime=2\ndirect=1\nioengine=libaio\n\
         iodepth=256\nsize=64m\nbs=8k\nfilename={}\nflow_sleep=1000\n\n\
         [job2]\nnumjobs=1\nrw=write\nflow=1\n\n[job1]\nnumjobs=1\nrw=randread\nflow=8\n",
        s(&d.join("testfile"))
    );
    std::fs::write(d.join("flow.fio"), text).unwrap();
    // Also without flow_sleep: a held-back job yields and tries again.
    for extra in ["--flow_sleep=1000", "--flow_sleep=0"] {
        let args = ["flow.fio", extra, "--output-format=json"];
        let (h, p) = (hb(&d, &args), fio(&d, &args));
        assert_eq!((h.code, p.code), (0, 0), "{}\n{}", h.err, p.err);
        for (who, r) in [("hostbench", &h), ("fio", &p)] {
            let e = entries(&doc(&r.out));
            assert_eq!((e[0].0.as_str(), e[1].0.as_str()), ("job2", "job1"));
            assert!(e[0].3 > 100, "{who} {extra}: {e:?}");
            near(
                &format!("{who} {extra}: job1's reads per job2's write"),
                e[1].2 as f64 / e[0].3 as f64,
                8.0,
                0.1,
            );
        }
    }
    // A flow whose other job ended: the one left goes on alone, as in fio.
    let f = format!("--filename={}", s(&d.join("b")));
    let args = [
        "--name=a",
        "--ioengine=null",
        "--rw=read",
        "--size=1g",
        "--flow=3",
        "--flow_id=2",
        "--runtime=1",
        "--time_based",
        "--name=b",
        "--ioengine=psync",
        "--rw=write",
        "--size=1m",
        "--flow=1",
        "--flow_id=2",
        &f,
        "--output-format=json",
    ];
    let (h, p) = (hb(&d, &args), fio(&d, &args));
    for (who, r) in [("hostbench", &h), ("fio", &p)] {
        let e = entries(&doc(&r.out));
        assert_eq!(e[1].3, 256, "{who}: {e:?}");
        assert!(e[0].2 > 100 * 256, "{who}: {e:?}");
    }
}

#[test]
fn fios_1mbs_clients_and_butterfly_examples_run_as_in_fio() {
    if !need_fio("fios_1mbs_clients_and_butterfly_examples_run_as_in_fio") {
        return;
    }
    let d = tmp("rate-examples");
    // examples/1mbs_clients.fio: 3 clients 1 s apart instead of 32 clients 4 s apart, 4m
    // at 1250 KiB/s (minimum 1024 KiB/s) instead of 32m at 1250 B/s; its directory here.
    let clients = format!(
        "[global]\nsize=4m\nrw=read\ndirectory={}\nrate=1250k\nratemin=1024k\n\
         [file1]\nstartdelay=0\n[file2]\nstartdelay=1\n[file3]\nstartdelay=2\n",
        s(&d)
    );
    // examples/butterfly.fio: its file here, 8m (fio's example reads a whole device).
    let butterfly = format!(
        "[global]\nfilename={}\nsize=8m\nbs=4k\ndirect=1\n\
         [forward]\nrw=read\nflow=2\n[backward]\nrw=read:-8k\nflow=2\n",
        s(&d.join("testfile"))
    );
    for (name, text) in [("1mbs_clients.fio", clients), ("butterfly.fio", butterfly)] {
        std::fs::write(d.join(name), text).unwrap();
        let args = [name, "--output-format=json"];
        let (h, p) = (hb(&d, &args), fio(&d, &args));
        assert_eq!((h.code, p.code), (0, 0), "{name}: {}\n{}", h.err, p.err);
        let (he, pe) = (entries(&doc(&h.out)), entries(&doc(&p.out)));
        let counts = |e: &[Entry]| {
            e.iter()
                .map(|x| (x.0.clone(), x.1, x.2, x.3))
                .collect::<Vec<_>>()
        };
        assert_eq!(counts(&he), counts(&pe), "{name}");
        if name == "1mbs_clients.fio" {
            // 4 MiB at 1250 KiB/s: 3.28 s each, above the minimum.
            for (who, e) in [("hostbench", &he), ("fio", &pe)] {
                for x in e.iter() {
                    near(
                        &format!("{who} {name} {} runtime", x.0),
                        x.6 as f64,
                        3277.0,
                        0.1,
                    );
                }
            }
        } else {
            assert_eq!(counts(&he)[0].2, 2048, "{he:?}");
            assert_eq!(counts(&he)[1].2, 2048, "{he:?}");
        }
    }
}

/// A queue's think is found due on the completions counted so far; what completes while
/// the queue drains before the think counts toward the next one (fio's `handle_thinktime`
/// keeps the count it tested, then `io_u_quiesce`s). So each cycle is `thinktime_blocks`
/// I/Os from an empty queue: libaio QD8 with `thinktime_blocks=16`, `IO depths 1=6.2%,
/// 2=12.5%, 4=25.0%, 8=56.2%` in every fio run (hostbench's cycles were longer, by the
/// drained I/Os: 4.4/8.7/17.4/69.5%).
#[test]
fn a_queue_thinks_every_thinktime_blocks_as_fio() {
    let d = tmp("think-queue");
    let depths = |out: &str| -> String {
        out.lines()
            .find(|l| l.contains("IO depths"))
            .unwrap_or_else(|| panic!("no IO depths line:\n{out}"))
            .trim()
            .to_string()
    };
    let cases: &[(&[&str], &str)] = &[
        (
            &["--iodepth=8", "--thinktime_blocks=16"],
            "IO depths    : 1=6.2%, 2=12.5%, 4=25.0%, 8=56.2%, 16=0.0%, 32=0.0%, >=64=0.0%",
        ),
        (
            &["--iodepth=4", "--thinktime_blocks=5"],
            "IO depths    : 1=20.0%, 2=39.9%, 4=40.1%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%",
        ),
    ];
    for (case, want) in cases {
        let mut a = vec![
            "--name=t",
            "--rw=randwrite",
            "--bs=4k",
            "--size=8m",
            "--thinktime=100",
            "--ioengine=libaio",
        ];
        a.extend_from_slice(case);
        let h = hb(&d, &a);
        assert_eq!(h.code, 0, "{case:?}: {}", h.err);
        assert_eq!(depths(&h.out), *want, "{case:?}");
        if need_fio("a_queue_thinks_every_thinktime_blocks_as_fio") {
            let f = fio(&d, &a);
            assert_eq!(depths(&f.out), *want, "{case:?}: fio");
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}
