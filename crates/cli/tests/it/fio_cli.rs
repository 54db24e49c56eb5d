//! fio's own command-line options (`--section`, `--showcmd`, `--readonly`, ...) and the job
//! options fio takes bare on its command line, side by side with the installed fio.

use super::fio::{s, tmp};
use super::fio_files::{doc, fio, hb};
use super::fio_seq::need_fio;
use std::path::Path;

/// A job file with a global section and two jobs, `a` reading and `b` writing.
fn two_jobs(dir: &Path) -> String {
    let f = dir.join("data");
    let text = format!(
        "[global]\nsize=64k\nbs=4k\nfilename={}\n\n[a]\nrw=read\n\n[b]\nrw=write\nnumjobs=2\n",
        s(&f)
    );
    let p = dir.join("two.fio");
    std::fs::write(&p, text).unwrap();
    s(&p)
}

/// fio's set-only options (no value) are taken bare on the command line, in both.
#[test]
fn set_only_options_bare() {
    let dir = tmp("cli-bare");
    let file = s(&dir.join("f"));
    let args = [
        "--name=x",
        "--rw=read",
        "--size=64k",
        "--bsrange=4k-8k",
        "--bs_unaligned",
        "--verify_only",
        "--verify=crc32c",
        &format!("--filename={file}"),
        "--norandommap",
        "--parse-only",
    ];
    let h = hb(&dir, &args);
    assert_eq!(h.code, 0, "{}", h.err);
    // A bool option is not set-only: fio wants its value.
    let h2 = hb(
        &dir,
        &[
            "--name=x",
            "--size=64k",
            &format!("--filename={file}"),
            "--direct",
        ],
    );
    assert_eq!(h2.code, 2, "{}", h2.err);
    assert!(h2.err.contains("--direct needs a value"), "{}", h2.err);
    if need_fio("set_only_options_bare") {
        assert_eq!(fio(&dir, &args).code, 0);
        let f2 = fio(
            &dir,
            &[
                "--name=x",
                "--size=64k",
                &format!("--filename={file}"),
                "--direct",
            ],
        );
        assert_ne!(f2.code, 0, "{}", f2.err);
    }
}

/// The job names of a JSON report, in order.
fn job_names(out: &str) -> Vec<String> {
    super::fio_files::doc(out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["jobname"].as_str().unwrap().to_string())
        .collect()
}

/// `--section=NAME` runs only the named job sections of the job files (several may be
/// named; the globals apply), and a command-line job it does not name; as fio.
#[test]
fn section_runs_only_the_named_jobs() {
    let dir = tmp("cli-section");
    let jf = two_jobs(&dir);
    let f3 = format!("--filename={}", s(&dir.join("f3")));
    let cases: [&[&str]; 3] = [
        &["--section=b", &jf],
        &["--section=a", "--section=b", &jf],
        // fio gives a left-out command-line job's options to the jobs after it.
        &[
            "--section=a",
            "--name=b",
            "--rw=write",
            "--bs=8k",
            "--name=a",
            &f3,
            &jf,
        ],
    ];
    let want: [&[&str]; 3] = [&["b", "b"], &["a", "b", "b"], &["a", "a"]];
    for (args, want) in cases.iter().zip(want) {
        let mut a = args.to_vec();
        a.extend(["--output-format=json", "--size=64k"]);
        let h = hb(&dir, &a);
        assert_eq!(h.code, 0, "{a:?}: {}", h.err);
        assert_eq!(job_names(&h.out), want, "{a:?}");
        let written: Vec<u64> = super::fio_files::doc(&h.out)["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["write"]["io_bytes"].as_u64().unwrap())
            .collect();
        if need_fio("section_runs_only_the_named_jobs") {
            let f = fio(&dir, &a);
            assert_eq!(f.code, 0, "{a:?}: {}", f.err);
            assert_eq!(job_names(&f.out), job_names(&h.out), "{a:?}");
            let fw: Vec<u64> = super::fio_files::doc(&f.out)["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| j["write"]["io_bytes"].as_u64().unwrap())
                .collect();
            assert_eq!(fw, written, "{a:?}");
        }
    }
    // No job left, or global named: refused (fio fails too).
    for bad in ["--section=zz", "--section=global"] {
        let h = hb(&dir, &[bad, &jf]);
        assert_eq!(h.code, 2, "{bad}: {}", h.err);
        assert!(h.err.contains(bad), "{bad}: {}", h.err);
        if need_fio("section_runs_only_the_named_jobs") {
            assert_ne!(fio(&dir, &[bad, &jf]).code, 0, "{bad}");
        }
    }
}

/// `--showcmd` prints each job file as one fio command line, byte for byte as fio does,
/// and runs nothing.
#[test]
fn showcmd_prints_the_job_files_as_fio() {
    let dir = tmp("cli-showcmd");
    let jf = two_jobs(&dir);
    let k = dir.join("k.fio");
    std::fs::write(
        &k,
        "[global]\nsize=64k\n[c]\nrw=read\nthread\ntime_based\nruntime=1\n",
    )
    .unwrap();
    let k = s(&k);
    let cases: [&[&str]; 3] = [
        &["--showcmd", &jf, &k],
        &["--showcmd", "--section=b", &jf],
        &["--name=x", "--size=1m", "--showcmd", &k],
    ];
    for a in cases {
        let h = hb(&dir, a);
        assert_eq!(h.code, 0, "{a:?}: {}", h.err);
        assert!(h.out.starts_with("fio --size=64k "), "{a:?}: {}", h.out);
        assert!(!dir.join("data").exists(), "--showcmd ran a job");
        if need_fio("showcmd_prints_the_job_files_as_fio") {
            let f = fio(&dir, a);
            assert_eq!((f.code, f.out.as_str()), (0, h.out.as_str()), "{a:?}");
        }
    }
}

/// `--max-jobs` and `--alloc-size` are taken and change nothing (fio 3.33 ignores the
/// first; the second sizes a pool hostbench has no need of); `--latency-log` is refused
/// as fio refuses it.
#[test]
fn max_jobs_alloc_size_latency_log() {
    let dir = tmp("cli-maxjobs");
    let jf = two_jobs(&dir);
    let a = [
        "--max-jobs=1",
        "--alloc-size=1024",
        "--output-format=json",
        &jf,
    ];
    let h = hb(&dir, &a);
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(job_names(&h.out), ["a", "b", "b"]);
    let l = hb(&dir, &["--latency-log=x", &jf]);
    assert_eq!(l.code, 2, "{}", l.err);
    assert!(l.err.contains("--latency-log is deprecated"), "{}", l.err);
    if need_fio("max_jobs_alloc_size_latency_log") {
        let f = fio(&dir, &a);
        assert_eq!(f.code, 0, "{}", f.err);
        assert_eq!(job_names(&f.out), job_names(&h.out));
        let f = fio(&dir, &["--latency-log=x", &jf]);
        assert_ne!(f.code, 0);
        assert!(f.err.contains("--latency-log is deprecated"), "{}", f.err);
    }
}

/// `--readonly`: a job that writes or trims is refused with fio's message; a reader of
/// a file that exists whole runs; a reader's missing file is not made (fio refuses to lay
/// it out and its job fails; hostbench refuses the run). Nothing is written in any case.
#[test]
fn readonly_refuses_writers_and_layout() {
    let dir = tmp("cli-readonly");
    let jf = two_jobs(&dir);
    let h = hb(&dir, &["--readonly", &jf]);
    assert_eq!(h.code, 2, "{}", h.err);
    let msg = "fio: job <b> has write or trim bit set, but fio is in read-only mode";
    assert!(h.err.contains(msg), "{}", h.err);
    assert!(!dir.join("data").exists());
    let missing = format!("--filename={}", s(&dir.join("missing")));
    let reader = ["--readonly", "--name=r", "--size=64k", &missing];
    let h = hb(&dir, &reader);
    assert_eq!(h.code, 2, "{}", h.err);
    assert!(h.err.contains("--readonly"), "{}", h.err);
    assert!(!dir.join("missing").exists());
    let whole = dir.join("whole");
    std::fs::write(&whole, vec![7u8; 65536]).unwrap();
    let whole_arg = format!("--filename={}", s(&whole));
    let ok = [
        "--readonly",
        "--name=r",
        "--size=64k",
        &whole_arg,
        "--output-format=json",
    ];
    let h = hb(&dir, &ok);
    assert_eq!(h.code, 0, "{}", h.err);
    let read = |out: &str| super::fio_files::doc(out)["jobs"][0]["read"]["io_bytes"].as_u64();
    assert_eq!(read(&h.out), Some(65536));
    if need_fio("readonly_refuses_writers_and_layout") {
        let f = fio(&dir, &["--readonly", &jf]);
        assert_ne!(f.code, 0);
        assert!(f.err.contains(msg), "{}", f.err);
        assert!(!dir.join("data").exists());
        assert_ne!(fio(&dir, &reader).code, 0);
        assert!(!dir.join("missing").exists());
        let f = fio(&dir, &ok);
        assert_eq!(f.code, 0, "{}", f.err);
        assert_eq!(read(&f.out), read(&h.out));
    }
    assert_eq!(std::fs::read(&whole).unwrap(), vec![7u8; 65536]);
}

/// Job files for the several-files cases: `a` and `b` with a `[global]` each (b has a job
/// named like one of a's), `c` with none, `f` whose first job sets `stonewall=0`, and an
/// empty one. All on the null engine: nothing is written.
fn several_files(dir: &Path) -> [String; 5] {
    let files = [
        (
            "a.fio",
            "[global]\nioengine=null\nsize=1m\n[a1]\n[a2]\nbs=8k\n",
        ),
        (
            "b.fio",
            "[global]\nioengine=null\nsize=2m\n[b1]\n[a1]\nrw=write\n",
        ),
        (
            "c.fio",
            "[c1]\nioengine=null\nsize=1m\n[c2]\nioengine=null\nsize=1m\n",
        ),
        (
            "f.fio",
            "[global]\nstonewall=0\nioengine=null\nsize=1m\n[f1]\nstonewall=0\n[f2]\n",
        ),
        ("empty.fio", ""),
    ];
    files.map(|(n, t)| {
        let p = dir.join(n);
        std::fs::write(&p, t).unwrap();
        s(&p)
    })
}

/// A JSON report in one line: `global options` (`-` when the key is absent), then each
/// job's `name/groupid/job options` (`-` when absent), options as `k=v` sorted.
fn jobs_line(out: &str) -> String {
    let v = super::fio_files::doc(out);
    let opts = |o: &serde_json::Value| -> String {
        match o.as_object() {
            None => "-".into(),
            Some(m) => {
                let mut kv: Vec<String> = m
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
                    .collect();
                kv.sort();
                format!("{{{}}}", kv.join(","))
            }
        }
    };
    let mut line = format!("G{}", opts(&v["global options"]));
    for j in v["jobs"].as_array().unwrap() {
        line.push_str(&format!(
            " {}/{}/{}",
            j["jobname"].as_str().unwrap(),
            j["groupid"],
            opts(&j["job options"])
        ));
    }
    line
}

/// Several job files: `--section` picks among the first file's sections only (fio clears
/// its list once the first file is read, init.c's __parse_jobs_ini), so every later file
/// runs whole; JSON's `global options` are the last file's `[global]` (fio starts each
/// file from its defaults: none, no key), and the stonewall that starts each later file is
/// no option of its first job (no `job options` key for a job without options, and the
/// job's own `stonewall=0` wins, as in fio). Pinned as fio 3.33 gave them, and compared.
#[test]
fn several_job_files_sections_and_globals() {
    let dir = tmp("cli-several");
    let [a, b, c, f, e] = several_files(&dir);
    let cases: [(&[&str], &str); 9] = [
        (
            &["--section=a1", &a, &b],
            "G{ioengine=null,size=2m} a1/0/- b1/1/- a1/1/{rw=write}",
        ),
        (
            &["--section=zz", &a, &b],
            "G{ioengine=null,size=2m} b1/0/- a1/0/{rw=write}",
        ),
        (
            &["--section=a2", &b, &a, &c],
            "G- a1/0/- a2/0/{bs=8k} c1/1/{ioengine=null,size=1m} c2/1/{ioengine=null,size=1m}",
        ),
        (
            &[
                "--section=x",
                "--name=x",
                "--ioengine=null",
                "--size=1m",
                "--name=y",
                &a,
                &b,
            ],
            "G{ioengine=null,size=2m} x/0/{ioengine=null,name=x,size=1m} b1/1/- a1/1/{rw=write}",
        ),
        (
            &[&a, &c],
            "G- a1/0/- a2/0/{bs=8k} c1/1/{ioengine=null,size=1m} c2/1/{ioengine=null,size=1m}",
        ),
        (
            &[&c, &a],
            "G{ioengine=null,size=1m} c1/0/{ioengine=null,size=1m} c2/0/{ioengine=null,size=1m} a1/1/- a2/1/{bs=8k}",
        ),
        (
            &[&a, &f],
            "G{ioengine=null,size=1m,stonewall=0} a1/0/- a2/0/{bs=8k} f1/0/{stonewall=0} f2/0/-",
        ),
        (
            &["--bs=8k", &a],
            "G{bs=8k,ioengine=null,size=1m} a1/0/- a2/0/{bs=8k}",
        ),
        (&[&a, &e], "G- a1/0/- a2/0/{bs=8k}"),
    ];
    for (args, want) in cases {
        let mut a = args.to_vec();
        a.push("--output-format=json");
        let h = hb(&dir, &a);
        assert_eq!(h.code, 0, "{a:?}: {}", h.err);
        assert_eq!(jobs_line(&h.out), want, "{a:?}");
        if need_fio("several_job_files_sections_and_globals") {
            let f = fio(&dir, &a);
            assert_eq!(f.code, 0, "{a:?}: {}", f.err);
            assert_eq!(jobs_line(&f.out), want, "{a:?}: fio");
        }
    }
}

/// `--showcmd` with several job files and `--section`: the first file filtered, the later
/// ones whole; a file with nothing left (or empty) is an empty line; as fio.
#[test]
fn showcmd_sections_of_several_files() {
    let dir = tmp("cli-showcmd-several");
    let [a, b, c, _f, e] = several_files(&dir);
    let cases: [(&[&str], &str); 4] = [
        (
            &["--section=a1", &a, &b],
            "fio --ioengine=null --size=1m --name=a1 \n\
             fio --ioengine=null --size=2m --name=b1 --name=a1 --rw=write \n",
        ),
        (
            &["--section=a1", &b, &a],
            "fio --ioengine=null --size=2m --name=a1 --rw=write \n\
             fio --ioengine=null --size=1m --name=a1 --name=a2 --bs=8k \n",
        ),
        (
            &["--section=zz", &c, &a],
            "\nfio --ioengine=null --size=1m --name=a1 --name=a2 --bs=8k \n",
        ),
        (
            &[&e, &a],
            "\nfio --ioengine=null --size=1m --name=a1 --name=a2 --bs=8k \n",
        ),
    ];
    for (args, want) in cases {
        let mut a = vec!["--showcmd"];
        a.extend(args);
        let h = hb(&dir, &a);
        assert_eq!((h.code, h.out.as_str()), (0, want), "{a:?}: {}", h.err);
        if need_fio("showcmd_sections_of_several_files") {
            let f = fio(&dir, &a);
            assert_eq!((f.code, f.out.as_str()), (0, want), "{a:?}: fio");
        }
    }
}

/// A cpuio job's start-up line shows its own settings, from its own file's `[global]`,
/// whichever job file comes after it (the JSON's `global options` are the last file's
/// only); as fio.
#[test]
fn a_cpuio_line_keeps_its_files_globals() {
    let dir = tmp("cli-cpuio-files");
    let [_a, _b, c, _f, _e] = several_files(&dir);
    let cpu = dir.join("cpu.fio");
    std::fs::write(
        &cpu,
        "[global]\nioengine=cpuio\ncpuload=30\ncpuchunks=20000\nruntime=1\ntime_based\n[cpu1]\n",
    )
    .unwrap();
    let a = [s(&cpu), c];
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let want = "cpu1 (noop): ioengine=cpuio, cpuload=30, cpucycle=20000\n";
    let h = hb(&dir, &a);
    assert_eq!(h.code, 0, "{}", h.err);
    assert!(h.out.contains(want), "{}", h.out);
    if need_fio("a_cpuio_line_keeps_its_files_globals") {
        let f = fio(&dir, &a);
        assert_eq!(f.code, 0, "{}", f.err);
        assert!(f.out.contains(want), "{}", f.out);
    }
}

/// `--crctest` lines as (name, tabs after the colon), each checked to be fio's layout: a
/// positive MiB/s figure with two decimals in at least 8 columns.
fn crctest_lines(out: &str) -> Vec<(String, usize)> {
    out.lines()
        .map(|l| {
            let (name, rest) = l.split_once(':').unwrap_or_else(|| panic!("{l:?}"));
            let tabs = rest.chars().take_while(|&c| c == '\t').count();
            let fig = rest[tabs..]
                .strip_suffix(" MiB/sec")
                .unwrap_or_else(|| panic!("{l:?}"));
            assert!(fig.len() >= 8 && fig.trim().split('.').nth(1).map(str::len) == Some(2));
            assert!(fig.trim().parse::<f64>().unwrap() > 0.0, "{l:?}");
            (name.to_string(), tabs)
        })
        .collect()
}

/// fio's `--crctest[=LIST]`: the named tests in fio's order on fio's lines (the figures are
/// each tool's own measure), `list`/`help` and a list naming no test as fio (the names,
/// exit 1); fio's three internal hashes are said to be missing, not measured.
#[test]
fn crctest_runs_fios_checksum_test() {
    let dir = tmp("crctest");
    let fio_too = need_fio("crctest");
    let want = |v: &[(&str, usize)]| -> Vec<(String, usize)> {
        v.iter().map(|(n, t)| (n.to_string(), *t)).collect()
    };
    let h = hb(&dir, &["--crctest=sha3-224,bogus,crc32c"]);
    assert_eq!(h.code, 0, "{}", h.err);
    let ours = crctest_lines(&h.out);
    assert_eq!(ours, want(&[("crc32c", 2), ("sha3-224", 1)]));
    if fio_too {
        let f = fio(&dir, &["--crctest=sha3-224,bogus,crc32c"]);
        assert_eq!(f.code, 0, "{}", f.err);
        assert_eq!(crctest_lines(&f.out), ours);
    }
    // A hash hostbench lacks: said on stderr, the others measured; alone, refused.
    let h = hb(&dir, &["--crctest=crc32c,fnv"]);
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(crctest_lines(&h.out), want(&[("crc32c", 2)]));
    assert!(h.err.contains("fnv not measured"), "{}", h.err);
    if fio_too {
        let f = fio(&dir, &["--crctest=crc32c,fnv"]);
        assert_eq!(
            crctest_lines(&f.out),
            want(&[("crc32c", 2), ("fnv", 2)]),
            "{}",
            f.out
        );
    }
    let h = hb(&dir, &["--crctest=fnv,jhash"]);
    assert_eq!(h.code, 2, "{}", h.out);
    assert!(
        h.err.contains("hostbench has no murmur3, jhash or fnv"),
        "{}",
        h.err
    );
    // The names, and fio's message for a list of no test's name.
    for arg in [
        "--crctest=list",
        "--crctest=help",
        "--crctest=bogus",
        "--crctest=",
    ] {
        let h = hb(&dir, &[arg]);
        assert_eq!(h.code, 1, "{arg}: {}", h.err);
        assert_eq!(h.out.lines().count(), 17, "{arg}: {}", h.out);
        assert_eq!(h.out.lines().nth(13), Some("sha3-224"), "{}", h.out);
        if fio_too {
            let f = fio(&dir, &[arg]);
            assert_eq!((f.code, &f.out), (1, &h.out), "{arg}");
            assert_eq!(f.err.lines().next(), h.err.lines().next(), "{arg}");
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// fio's `clocksource`: the last one given is the whole run's (fio sets its process's clock
/// as it parses it), echoed where it was written ("global options", "job options"); with
/// `gettimeofday` every latency is a whole number of microseconds, in both; hostbench's own
/// result names the clock it read. A value fio does not have is refused.
#[test]
fn clocksource_picks_the_runs_clock_as_fio() {
    let dir = tmp("clocksource");
    let f = s(&dir.join("cs"));
    let fio_too = need_fio("clocksource");
    let job = |first: &str, last: &str| -> Vec<String> {
        [
            format!("--clocksource={first}"),
            "--name=a".into(),
            "--size=256k".into(),
            format!("--filename={f}"),
            "--name=b".into(),
            "--size=256k".into(),
            format!("--filename={f}"),
            format!("--clocksource={last}"),
        ]
        .into()
    };
    // (echoed options, whether every latency is whole µs) of a JSON report.
    let seen = |out: &str| {
        let d = doc(out);
        let mut echo = vec![d["global options"]["clocksource"].clone()];
        let mut whole_us = true;
        for j in d["jobs"].as_array().unwrap() {
            echo.push(j["job options"]["clocksource"].clone());
            for k in ["clat_ns", "lat_ns"] {
                for m in ["min", "max"] {
                    whole_us &= j["read"][k][m].as_u64().unwrap().is_multiple_of(1000);
                }
            }
        }
        (echo, whole_us)
    };
    for (first, last, source) in [
        ("cpu", "gettimeofday", "gettimeofday"),
        ("gettimeofday", "clock_gettime", "monotonic"),
        ("clock_gettime", "cpu", "tsc"),
    ] {
        let args = job(first, last);
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.push("--output-format=json");
        let h = hb(&dir, &a);
        assert_eq!(h.code, 0, "{}", h.err);
        let (echo, whole_us) = seen(&h.out);
        let want = [
            serde_json::json!(first),
            serde_json::Value::Null,
            serde_json::json!(last),
        ];
        assert_eq!(echo, want);
        if last == "gettimeofday" {
            assert!(whole_us, "{}", h.out);
        }
        if fio_too {
            let f = fio(&dir, &a);
            assert_eq!(f.code, 0, "{}", f.err);
            let (fecho, fwhole) = seen(&f.out);
            assert_eq!(fecho, echo);
            if last == "gettimeofday" {
                assert!(fwhole, "{}", f.out);
            }
        }
        a.pop();
        a.push("--output-format=hostbench-json");
        let h = hb(&dir, &a);
        assert_eq!(h.code, 0, "{}", h.err);
        assert_eq!(
            doc(&h.out)["clock"]["source"],
            source,
            "{first} then {last}"
        );
    }
    let h = hb(&dir, &["--name=x", "--size=64k", "--clocksource=sundial"]);
    assert_eq!(h.code, 2, "{}", h.out);
    assert!(
        h.err
            .contains("clocksource=sundial: expected gettimeofday, clock_gettime or cpu"),
        "{}",
        h.err
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// The `CPU idleness:` block of a normal report (from its line to the end), each number
/// replaced by `N`: the lines' shapes.
fn idle_shape(out: &str) -> Vec<String> {
    let i = out
        .find("CPU idleness:")
        .unwrap_or_else(|| panic!("no CPU idleness block in:\n{out}"));
    let mut lines: Vec<String> = out[i..]
        .lines()
        .map(|l| {
            let mut shape = String::new();
            let mut in_num = false;
            for c in l.chars() {
                if c.is_ascii_digit() || (in_num && c == '.') {
                    if !in_num {
                        shape.push('N');
                    }
                    in_num = true;
                } else {
                    in_num = false;
                    shape.push(c);
                }
            }
            shape
        })
        .collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// The keys of a JSON report's `cpu_idleness` object in the order the text has them.
fn idle_keys(out: &str) -> Vec<String> {
    let i = out
        .find("\"cpu_idleness\"")
        .unwrap_or_else(|| panic!("no cpu_idleness in:\n{out}"));
    let body = &out[i..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    body.split(',')
        .filter_map(|kv| kv.split(':').next())
        .map(|k| k.trim().trim_matches('"').to_string())
        .collect()
}

/// `--idle-prof` (fio's CPU idleness profiling): `calibrate` prints the unit's line alone
/// and exits 0; `system` and `percpu` add fio's block after the disk stats and fio's
/// `cpu_idleness` object after `disk_util`, line for line and key for key as fio 3.33's;
/// hostbench's result keeps it (`fio.cpu_idleness`, valid under the schema); a job that
/// keeps every CPU busy leaves them nearly without idleness; an unknown mode is refused.
#[test]
fn idle_prof_reports_cpu_idleness_as_fio() {
    let dir = tmp("idle-prof");
    // fio's CPUs: every configured one (`nproc --all`), online or not.
    let nproc = std::process::Command::new("nproc")
        .arg("--all")
        .output()
        .unwrap();
    let ncpu: usize = String::from_utf8_lossy(&nproc.stdout)
        .trim()
        .parse()
        .unwrap();
    let h = hb(&dir, &["--idle-prof=calibrate", "--name=x", "--size=64k"]);
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(
        idle_shape(&h.out),
        ["CPU idleness:", "  unit work: mean=Nus, stddev=N"],
        "{}",
        h.out
    );
    assert!(!dir.join("x.0.0").exists(), "calibrate runs no job");
    let job = ["--name=x", "--ioengine=null", "--size=256m", "--bs=4k"];
    let with = |mode: &str, extra: &[&str]| -> Vec<String> {
        let mut a = vec![format!("--idle-prof={mode}")];
        a.extend(job.iter().map(|s| s.to_string()));
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    fn refs(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    let percpu_lines = {
        let mut v = vec![
            String::new(),
            "CPU idleness:".to_string(),
            "  system: N%".to_string(),
        ];
        v.push(format!("  percpu: {}", vec!["N%"; ncpu].join(", ")));
        v.push("  unit work: mean=Nus, stddev=N".to_string());
        v
    };
    let a = with("percpu", &[]);
    let h = hb(&dir, &refs(&a));
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(idle_shape(&h.out), percpu_lines[1..], "{}", h.out);
    // The block follows the group's status lines after one blank line.
    assert!(h.out.contains("\n\nCPU idleness:\n"), "{}", h.out);
    let a = with("system", &["--output-format=json"]);
    let h = hb(&dir, &refs(&a));
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(idle_keys(&h.out), ["system", "unit_mean", "unit_stddev"]);
    let a = with("percpu", &["--output-format=json"]);
    let h = hb(&dir, &refs(&a));
    let d = doc(&h.out);
    let mut want = vec!["system".to_string()];
    want.extend((0..ncpu).map(|i| format!("cpu-{i}")));
    want.extend(["unit_mean".to_string(), "unit_stddev".to_string()]);
    assert_eq!(idle_keys(&h.out), want);
    assert!(d["cpu_idleness"]["unit_mean"].as_f64().unwrap() > 0.0);
    // The stored result: fio.cpu_idleness, valid under the schema.
    let a = with("percpu", &["--output-format=hostbench-json"]);
    let h = hb(&dir, &refs(&a));
    assert_eq!(h.code, 0, "{}", h.err);
    let r: serde_json::Value = serde_json::from_str(&h.out).unwrap();
    let v = super::common::violations(&r);
    assert!(v.is_empty(), "{v:?}");
    let idle = &r["fio"]["cpu_idleness"];
    assert_eq!(idle["mode"], "percpu");
    assert_eq!(idle["per_cpu"].as_array().unwrap().len(), ncpu);
    // Every CPU kept busy by a job at normal priority: the idle threads get (nearly)
    // nothing — SCHED_IDLE's weight is 3 against a normal thread's 1024.
    let n = ncpu.to_string();
    let burn = [
        "--idle-prof=system",
        "--name=burn",
        "--ioengine=cpuio",
        "--cpuload=100",
        "--numjobs",
        n.as_str(),
        "--runtime=1",
        "--time_based",
        "--output-format=json",
    ];
    let h = hb(&dir, &burn);
    assert_eq!(h.code, 0, "{}", h.err);
    let sys = doc(&h.out)["cpu_idleness"]["system"].as_f64().unwrap();
    assert!(sys < 20.0, "every CPU busy, yet {sys}% idle:\n{}", h.out);
    let h = hb(&dir, &["--idle-prof=sometimes", "--name=x", "--size=64k"]);
    assert_eq!(h.code, 2, "{}", h.out);
    assert!(
        h.err.contains("incorrect idle-prof option: sometimes")
            && h.err.contains("calibrate, system or percpu"),
        "{}",
        h.err
    );
    if need_fio("idle_prof_reports_cpu_idleness_as_fio") {
        let f = fio(&dir, &["--idle-prof=calibrate"]);
        assert_eq!(
            idle_shape(&f.out),
            ["CPU idleness:", "  unit work: mean=Nus, stddev=N"],
            "{}",
            f.out
        );
        let a = with("percpu", &[]);
        let f = fio(&dir, &refs(&a));
        assert_eq!(idle_shape(&f.out), percpu_lines[1..], "{}", f.out);
        let a = with("percpu", &["--output-format=json"]);
        let f = fio(&dir, &refs(&a));
        assert_eq!(idle_keys(&f.out), want, "{}", f.out);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// One `--cmdhelp=NAME` description as fio lays it out, without the prose: (label, value)
/// per line, the help text and the type's words left out (hostbench's own), the valid
/// values by name only.
fn cmdhelp_facts(out: &str) -> Vec<(String, String)> {
    out.lines()
        .enumerate()
        .map(|(i, l)| {
            if l.is_empty() {
                return (String::new(), String::new());
            }
            assert_eq!(&l[20..22], ": ", "right-aligned at 20: {l:?}");
            let (label, rest) = (l[..20].trim().to_string(), l[22..].to_string());
            match label.as_str() {
                _ if i == 0 => (label, String::new()),
                "type" => (label, String::new()),
                "valid values" | "" => (
                    label,
                    rest.split_whitespace().next().unwrap_or("").to_string(),
                ),
                _ => (label, rest),
            }
        })
        .collect()
}

/// fio's `--cmdhelp`: the list (`NAME: help`, children indented under their parent, in
/// fio's order: fio's list cut to the options hostbench takes is hostbench's), and one
/// option's table (name, alias, type, default, range, valid values, a blank line) with
/// fio's facts in fio's layout and hostbench's own words; by an alias too; a near miss
/// shows the closest option, as fio.
#[test]
fn cmdhelp_is_fios_table() {
    let dir = tmp("cmdhelp");
    let fio_too = need_fio("cmdhelp");
    let h = hb(&dir, &["--cmdhelp"]);
    assert_eq!(h.code, 0, "{}", h.err);
    let names = |out: &str| -> Vec<String> {
        out.lines()
            .map(|l| {
                // `%-24s: `: padded to 24, a longer name as it is.
                let (name, _) = l.split_once(": ").unwrap_or_else(|| panic!("{l:?}"));
                assert!(name.len() >= 24, "{l:?}");
                name.trim_end().to_string()
            })
            .collect()
    };
    let ours = names(&h.out);
    assert!(ours.contains(&"  iodepth_batch".to_string()), "{}", h.out);
    assert_eq!(hb(&dir, &["--cmdhelp=all"]).out, h.out);
    if fio_too {
        let f = fio(&dir, &["--cmdhelp"]);
        let taken: Vec<String> = names(&f.out)
            .into_iter()
            .filter(|n| ours.contains(n))
            .collect();
        assert_eq!(taken, ours, "fio's list, cut to the options taken");
    }
    for opt in [
        "bs",
        "blocksize",
        "rw",
        "iodepth",
        "size",
        "runtime",
        "nice",
        "prio",
        "percentile_list",
        "verify",
        "ioengine",
        "hugepage-size",
        "log_entries",
        "verify_interval",
        "bssplit",
        "steadystate",
        "ss",
        "sizee",
    ] {
        let h = hb(&dir, &[&format!("--cmdhelp={opt}")]);
        assert_eq!(h.code, 0, "{opt}: {}", h.err);
        assert!(h.out.ends_with("\n\n"), "{opt}: {:?}", h.out);
        if fio_too {
            let f = fio(&dir, &[&format!("--cmdhelp={opt}")]);
            assert_eq!(f.code, h.code, "{opt}");
            let (mut fo, mut ho) = (f.out.clone(), h.out.clone());
            if opt == "ioengine" {
                // fio lists engines hostbench has not: compare hostbench's, in fio's order.
                let ours: Vec<String> = ho.lines().map(str::to_string).collect();
                let engines = |s: &str| -> Vec<String> {
                    s.lines()
                        .filter(|l| {
                            l.len() > 22
                                && (l[..20].trim() == "valid values" || l[..20].trim().is_empty())
                        })
                        .map(|l| l[22..].split_whitespace().next().unwrap_or("").to_string())
                        .collect()
                };
                let mine = engines(&ho);
                let theirs = engines(&fo);
                let both: Vec<&String> = mine.iter().filter(|e| theirs.contains(e)).collect();
                let theirs: Vec<&String> = theirs.iter().filter(|e| mine.contains(e)).collect();
                assert_eq!(both, theirs, "{opt}: in fio's order");
                fo = fo.lines().take(4).collect::<Vec<_>>().join("\n");
                ho = ours[..4].join("\n");
            }
            let strip = |s: &str| {
                s.strip_prefix(" - showing closest match\n")
                    .unwrap_or(s)
                    .to_string()
            };
            assert_eq!(
                cmdhelp_facts(&strip(&ho)),
                cmdhelp_facts(&strip(&fo)),
                "{opt}:\n{ho}\nfio:\n{fo}"
            );
            assert_eq!(f.err, h.err, "{opt}");
        }
    }
    // An engine's option: fio's "No such command", and where hostbench describes it.
    let h = hb(&dir, &["--cmdhelp=fixedbufs"]);
    assert!(h.err.contains("No such command: fixedbufs"), "{}", h.err);
    assert!(h.err.contains("--enghelp=io_uring,fixedbufs"), "{}", h.err);
}

/// The shape of a `--cpuclock-test` report: each line's kind, in order, with the per-CPU
/// lines (whose order follows the threads' ends) counted and the CPU count kept.
fn clocktest_shape(out: &str) -> (Vec<String>, usize) {
    let mut kinds = Vec::new();
    let mut per_cpu = 0;
    // fio's debug build prints its calibration's trace (`time     PID ...`): not a line
    // of the test's own.
    for l in out.lines().filter(|l| !l.starts_with("time ")) {
        if let Some(rest) = l.strip_prefix("cs: cpu") {
            let (cpu, tail) = rest.split_once(": ").unwrap_or_else(|| panic!("{l:?}"));
            assert_eq!(cpu.len(), 3, "cpu%3d: {l:?}");
            let words: Vec<&str> = tail.split(' ').collect();
            assert_eq!(words.len(), 5, "{l:?}");
            assert_eq!(&words[1..4], ["clocks", "seen,", "first"], "{l:?}");
            assert!(words[0].parse::<u64>().is_ok() && words[4].parse::<u64>().is_ok());
            per_cpu += 1;
            continue;
        }
        let kind = if l.starts_with("cs: reliable_tsc: ") {
            assert!(l.ends_with("yes") || l.ends_with("no"), "{l:?}");
            "reliable_tsc".to_string()
        } else {
            l.to_string()
        };
        kinds.push(kind);
    }
    (kinds, per_cpu)
}

/// fio's `--cpuclock-test` on hostbench's clock: fio's lines (reliable_tsc, the CPUs
/// tested, one line per CPU as its thread ends, Pass!/Failed), exit 0 when the clock never
/// went back across the CPUs; beside fio's own report of the same machine.
#[test]
fn cpuclock_test_runs_fios_test() {
    let dir = tmp("cpuclock");
    let h = hb(&dir, &["--cpuclock-test"]);
    let (kinds, per_cpu) = clocktest_shape(&h.out);
    assert_eq!(kinds[0], "reliable_tsc", "{}", h.out);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        kinds[1].starts_with("cs: Testing ") && kinds[1].ends_with(" CPUs"),
        "{}",
        h.out
    );
    assert_eq!(
        per_cpu, cpus,
        "one line per CPU the process may use:\n{}",
        h.out
    );
    match h.code {
        0 => assert_eq!(
            kinds.last().map(String::as_str),
            Some("cs: Pass!"),
            "{}",
            h.out
        ),
        1 => assert!(
            kinds.last().unwrap().starts_with("cs: Failed: "),
            "{}",
            h.out
        ),
        c => panic!("exit {c}: {}", h.err),
    }
    if need_fio("cpuclock") {
        let f = fio(&dir, &["--cpuclock-test"]);
        let (fk, fcpu) = clocktest_shape(&f.out);
        assert_eq!(fcpu, per_cpu, "{}", f.out);
        assert_eq!(fk[..2], kinds[..2], "fio:\n{}", f.out);
        if f.code == 0 && h.code == 0 {
            assert_eq!(fk, kinds, "fio:\n{}", f.out);
        }
    }
}
