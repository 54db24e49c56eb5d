//! fio's job-file syntax beyond `key=value`, side by side with the installed fio where it
//! has the feature: sizes in the job's `kb_base` (and fio's IEC rule: `64kib` is 64000
//! bytes), `include FILE` (relative to the current directory, then to the including file),
//! the keywords `$pagesize`, `$mb_memory`, `$ncpus` with fio's `bc` arithmetic; and
//! arithmetic values in parentheses, which Debian's fio is built without (checked against
//! the values fio's documented parser gives).

use super::fio::{json, s, tmp};
use super::fio_seq::need_fio;
use crate::common;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn hb(dir: &Path, args: &[&str]) -> std::process::Output {
    common::hb()
        .current_dir(dir)
        .arg("fio")
        .args(args)
        .arg("--no-save")
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

fn hb_json(dir: &Path, args: &[&str]) -> Value {
    let o = hb(dir, args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "hostbench fio {args:?}: {err}");
    json(&String::from_utf8(o.stdout).unwrap())
}

fn fio_json(dir: &Path, args: &[&str]) -> Value {
    json(&super::fio_seq::fio(dir, args).0)
}

/// (I/Os, bytes) of the first job.
fn amounts(v: &Value) -> (u64, u64) {
    let j = &v["jobs"][0];
    (
        j["read"]["total_ios"].as_u64().unwrap() + j["write"]["total_ios"].as_u64().unwrap(),
        j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap(),
    )
}

#[test]
fn sizes_follow_kb_base_as_in_fio() {
    if !need_fio("fio_syntax::sizes_follow_kb_base_as_in_fio") {
        return;
    }
    let d = tmp("syntax-kb");
    for case in [
        "--size=64kib --bs=4k",
        "--size=64k --kb_base=1000 --bs=4k",
        "--kb_base=1000 --size=64kib --bs=4kib",
        "--size=0x10000 --bs=4KB",
        "--size=1MiB --bs=64ki",
        "--size=128kk --bs=8K",
    ] {
        let mut args = vec!["--name=kb", "--ioengine=null", "--output-format=json"];
        args.extend(case.split(' '));
        let peer = fio_json(&d, &args);
        let ours = hb_json(&d, &args);
        assert_eq!(amounts(&ours), amounts(&peer), "{case}: (I/Os, bytes)");
    }
    // In a job file kb_base applies wherever it is written (before the other options).
    let f = d.join("kb.fio");
    std::fs::write(&f, "[kb]\nioengine=null\nsize=64k\nbs=4k\nkb_base=1000\n").unwrap();
    let args = ["--output-format=json", "kb.fio"];
    assert_eq!(
        amounts(&hb_json(&d, &args)),
        amounts(&fio_json(&d, &args)),
        "kb_base after size in a job file"
    );
    // A job's kb_base does not reach back into [global]'s sizes (fio parsed them when it
    // read [global]): 250 I/Os of 4096 bytes, not of 4000; a global kb_base=1000 is the
    // jobs' unless a job sets its own. (Measured with fio 3.33: (250, 1024000), then
    // (250, 1000000) and (256, 1024000).)
    std::fs::write(
        &f,
        "[global]\nioengine=null\nbs=4k\nsize=1000k\n[x]\nkb_base=1000\nrw=read\n",
    )
    .unwrap();
    assert_eq!(amounts(&hb_json(&d, &args)), (250, 1_024_000));
    assert_eq!(amounts(&fio_json(&d, &args)), (250, 1_024_000));
    std::fs::write(
        &f,
        "[global]\nioengine=null\nkb_base=1000\nbs=4k\n[x]\nsize=1000k\n[y]\nkb_base=1024\n\
         size=1000k\n",
    )
    .unwrap();
    let both = |v: &Value| -> Vec<u64> {
        (0..2)
            .map(|i| v["jobs"][i]["read"]["io_bytes"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(both(&hb_json(&d, &args)), [1_000_000, 1_024_000]);
    assert_eq!(both(&fio_json(&d, &args)), [1_000_000, 1_024_000]);
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn include_reads_options_as_fio_does() {
    if !need_fio("fio_syntax::include_reads_options_as_fio_does") {
        return;
    }
    let d = tmp("syntax-include");
    std::fs::create_dir(d.join("jobs")).unwrap();
    std::fs::create_dir(d.join("jobs/more")).unwrap();
    // jobs/main.fio includes more/a.inc (beside it), which includes b.inc (beside itself).
    std::fs::write(
        d.join("jobs/main.fio"),
        "[global]\nioengine=null\n[inc]\ninclude more/a.inc\nrw=read\n",
    )
    .unwrap();
    std::fs::write(d.join("jobs/more/a.inc"), "size=192k\ninclude b.inc\n").unwrap();
    std::fs::write(d.join("jobs/more/b.inc"), "bs=16k ; a comment\n").unwrap();
    let args = ["--output-format=json", "jobs/main.fio"];
    let peer = fio_json(&d, &args);
    let ours = hb_json(&d, &args);
    assert_eq!(amounts(&ours), amounts(&peer));
    assert_eq!(amounts(&ours), (12, 192 * 1024));
    // An included file with a section is refused, naming the line.
    std::fs::write(d.join("jobs/more/b.inc"), "[other]\nbs=16k\n").unwrap();
    let o = hb(&d, &args);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("b.inc:1") && err.contains("options only"),
        "{err}"
    );
    // A missing file says where it was looked for; an include loop ends.
    std::fs::write(d.join("jobs/more/b.inc"), "include nope.inc\n").unwrap();
    let err = String::from_utf8_lossy(&hb(&d, &args).stderr).into_owned();
    assert!(err.contains("include nope.inc: no such file"), "{err}");
    std::fs::write(d.join("jobs/more/b.inc"), "include b.inc\n").unwrap();
    let o = hb(&d, &args);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("nest more than 16 deep"), "{err}");
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn keywords_and_bc_arithmetic_as_in_fio() {
    if !need_fio("fio_syntax::keywords_and_bc_arithmetic_as_in_fio") {
        return;
    }
    let d = tmp("syntax-keywords");
    std::fs::write(
        d.join("kw.fio"),
        "[kw]\nioengine=null\nsize=2*$pagesize\nbs=$pagesize\niodepth=$ncpus+1\n",
    )
    .unwrap();
    let args = ["--output-format=json", "kw.fio"];
    let peer = fio_json(&d, &args);
    let ours = hb_json(&d, &args);
    assert_eq!(amounts(&ours), amounts(&peer));
    let opts = |v: &Value| v["jobs"][0]["job options"].clone();
    for k in ["size", "bs", "iodepth"] {
        assert_eq!(opts(&ours)[k], opts(&peer)[k], "job option {k}");
    }
    // A unit in a value that bc computes is refused (fio's bc fails on it too).
    std::fs::write(
        d.join("bad.fio"),
        "[kw]\nioengine=null\nsize=2*$pagesize k\n",
    )
    .unwrap();
    let o = hb(&d, &["bad.fio"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.fio:3") && err.contains("whole-number arithmetic"),
        "{err}"
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// Arithmetic in parentheses (fio's expression parser, absent from Debian's fio build):
/// the values its documentation and parser give.
#[test]
fn arithmetic_values() {
    let d = tmp("syntax-arith");
    let v = hb_json(
        &d,
        &[
            "--name=a",
            "--ioengine=null",
            "--size=(64*1024)",
            "--bs=(2^12)",
            "--iodepth=(2*2)",
            "--runtime=(1*60)",
            "--output-format=json",
        ],
    );
    assert_eq!(amounts(&v), (16, 65536));
    let o = hb(&d, &["--name=a", "--ioengine=null", "--size=(1/0)"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("size=(1/0): division by zero"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let _ = s(&d);
    std::fs::remove_dir_all(d).unwrap();
}

/// fio's JSON "job options" hold `name` for a job named on the command line (`--name` is an
/// option there) and not for a job-file section (its name is the `[header]`).
#[test]
fn job_options_name_only_for_command_line_jobs_as_in_fio() {
    if !need_fio("fio_syntax::job_options_name_only_for_command_line_jobs_as_in_fio") {
        return;
    }
    let d = tmp("syntax-jobname");
    std::fs::write(d.join("n.fio"), "[filejob]\nioengine=null\nsize=64k\n").unwrap();
    let file = ["--output-format=json", "n.fio"];
    let cmd = [
        "--output-format=json",
        "--name=cmdjob",
        "--ioengine=null",
        "--size=64k",
    ];
    for args in [&file[..], &cmd[..]] {
        let peer = fio_json(&d, args);
        let ours = hb_json(&d, args);
        assert_eq!(
            ours["jobs"][0]["job options"], peer["jobs"][0]["job options"],
            "{args:?}"
        );
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// A size smaller than one block is refused on every engine (ioengine=null panicked on a
/// subtraction that went below zero); fio refuses it too ("size too small").
#[test]
fn a_size_below_one_block_is_refused_on_the_null_engine() {
    let d = tmp("syntax-tiny");
    for size in ["23", "8k"] {
        let o = hb(
            &d,
            &[
                "--name=j",
                "--ioengine=null",
                &format!("--size={size}"),
                "--bs=16k",
            ],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            err.contains("is smaller than the block size 16384"),
            "{err}"
        );
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn only_braced_variables_come_from_the_environment_as_in_fio() {
    // fio expands `${VAR}` only: a bare `$F` in a job file is kept as written. hostbench
    // once took it from the environment, so `filename=$F` with F naming another file
    // wrote over that file (and unlinked it with unlink=1), and `filename_format`'s
    // `$filenum`/`$jobnum` vanished when unset.
    let d = tmp("dollar");
    let victim = d.join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    let work = d.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("j.fio"),
        "[j]\nrw=write\nsize=8k\nfilename=$F\n\n[k]\nrw=write\nsize=8k\nnrfiles=2\n\
         filename_format=f.$filenum.$jobnum\n",
    )
    .unwrap();
    let o = common::hb()
        .current_dir(&work)
        .env("F", &victim)
        .env("filenum", "ZZ")
        .args(["fio", "j.fio", "--output-format=json", "--no-save"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::read(&victim).unwrap() == b"precious",
        "the file $F named in the environment was written"
    );
    assert_eq!(std::fs::metadata(work.join("$F")).unwrap().len(), 8192);
    for f in ["f.0.0", "f.1.0"] {
        assert!(work.join(f).is_file(), "{f} was not made");
    }
    assert!(!work.join("f.ZZ.0").exists());
    // `${VAR}` still reads the environment.
    std::fs::write(
        work.join("b.fio"),
        "[b]\nrw=write\nsize=${SZ}\nfilename=b.dat\n",
    )
    .unwrap();
    let v = {
        let o = common::hb()
            .current_dir(&work)
            .env("SZ", "16k")
            .args(["fio", "b.fio", "--output-format=json", "--no-save"])
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        json(&String::from_utf8(o.stdout).unwrap())
    };
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 16384);
    if need_fio("only_braced_variables_come_from_the_environment_as_in_fio") {
        // fio makes the same literal `$F` file.
        let fdir = d.join("fio");
        std::fs::create_dir_all(&fdir).unwrap();
        std::fs::write(fdir.join("j.fio"), "[j]\nrw=write\nsize=8k\nfilename=$F\n").unwrap();
        let st = std::process::Command::new("timeout")
            .args(["-k", "5", "120", "fio", "j.fio", "--output-format=json"])
            .current_dir(&fdir)
            .env("F", &victim)
            .status()
            .unwrap();
        assert!(st.success());
        assert!(fdir.join("$F").is_file());
        assert!(std::fs::read(&victim).unwrap() == b"precious");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_job_without_options_of_its_own_has_no_job_options_key_as_in_fio() {
    let d = tmp("noopts");
    std::fs::write(
        d.join("j.fio"),
        "[global]\nrw=write\nsize=64k\nfilename=x.dat\n\n[a]\n\n[b]\nbs=8k\n",
    )
    .unwrap();
    let ours = hb_json(&d, &["j.fio", "--output-format=json"]);
    let keys = |v: &Value| {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j.get("job options").cloned())
            .collect::<Vec<_>>()
    };
    let k = keys(&ours);
    assert_eq!(k[0], None, "{}", ours["jobs"][0]);
    assert_eq!(k[1], Some(serde_json::json!({"bs": "8k"})));
    if need_fio("a_job_without_options_of_its_own_has_no_job_options_key_as_in_fio") {
        let peer = fio_json(&d, &["j.fio", "--output-format=json"]);
        assert_eq!(keys(&peer), k);
    }
}

/// `-` as the job file is the standard input, as in fio (`fio - <<EOF`, a review HIGH:
/// hostbench looked for a file named `-`); the jobs run in hostbench's own process (the
/// input is read once).
#[test]
fn a_job_file_on_stdin_runs_as_fios() {
    let d = tmp("syntax-stdin");
    let text = "[global]\nioengine=null\nrw=read\n[a]\nsize=64k\n[b]\nsize=128k\nbs=8k\n";
    let o = common::hb()
        .current_dir(&d)
        .args(["fio", "-", "--output-format=json", "--no-save"])
        .write_stdin(text)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let v = json(&String::from_utf8(o.stdout).unwrap());
    let got: Vec<(String, u64)> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["read"]["total_ios"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [("a".to_string(), 16), ("b".to_string(), 16)]);
    if need_fio("fio_syntax::a_job_file_on_stdin_runs_as_fios") {
        let p = std::process::Command::new("fio")
            .current_dir(&d)
            .args(["-", "--output-format=json"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(text.as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        let pv = json(&String::from_utf8(p.stdout).unwrap());
        for (k, (name, ios)) in got.iter().enumerate() {
            assert_eq!(pv["jobs"][k]["jobname"].as_str(), Some(name.as_str()));
            assert_eq!(pv["jobs"][k]["read"]["total_ios"].as_u64(), Some(*ios));
        }
    }
    std::fs::remove_dir_all(d).ok();
}

/// A space after `=` (`rw = read` in a job file, `--rw= read`): fio 3.33 keeps it in the
/// value, so an option whose value it matches against a list (`rw`, `verify`, `ioengine`,
/// `fallocate`, `sync`, ...) fails (`fio: failed parsing rw= read`, the job dropped, exit
/// 1); hostbench refuses it before anything runs (exit 2), saying how to write it. A space
/// before `=`, or after it for a number or a file name, is taken by both (a user review
/// said fio refuses `rw = read`: it does, the spaces around `=` are not what matters).
#[test]
fn a_space_after_the_equals_sign_fails_where_fio_fails() {
    let d = tmp("syn-space");
    let peer = need_fio("a_space_after_the_equals_sign_fails_where_fio_fails");
    for (line, refused) in [
        ("rw = read", true),
        ("rw= read", true),
        ("verify = md5", true),
        ("fallocate = none", true),
        ("ioengine = psync", true),
        ("sync = 1", true),
        ("rw =read", false),
        ("bs = 4k", false),
        ("direct = 0", false),
        ("filename = sp-file", false),
    ] {
        let text = format!("[j]\nsize=64k\nfilename=sp-file\n{line}\n");
        std::fs::write(d.join("sp.fio"), text).unwrap();
        let o = hb(&d, &["sp.fio", "--output-format=json"]);
        let err = String::from_utf8_lossy(&o.stderr);
        if refused {
            assert_eq!(o.status.code(), Some(2), "{line}: {err}");
            assert!(err.contains("sp.fio:4:"), "{line}: {err}");
            assert!(
                err.contains("the space after '=' is part of the value"),
                "{line}: {err}"
            );
            assert_eq!(err.trim().lines().count(), 1, "{err}");
        } else {
            assert_eq!(o.status.code(), Some(0), "{line}: {err}");
        }
        if peer {
            let f = std::process::Command::new("fio")
                .args(["sp.fio", "--output-format=json"])
                .current_dir(&d)
                .output()
                .unwrap();
            let ferr = String::from_utf8_lossy(&f.stderr);
            assert_eq!(f.status.success(), !refused, "{line}: fio: {ferr}");
        }
    }
    // On the command line too.
    let o = hb(
        &d,
        &["--name=j", "--rw= read", "--size=64k", "--filename=sp-file"],
    );
    assert_eq!(o.status.code(), Some(2));
    if peer {
        let f = std::process::Command::new("fio")
            .args(["--name=j", "--rw= read", "--size=64k", "--filename=sp-file"])
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(!f.status.success());
        assert!(String::from_utf8_lossy(&f.stderr).contains("fio: failed parsing rw= read"));
    }
}
