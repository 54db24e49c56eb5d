//! fio 3.33's file-handling options (`overwrite`, `create_fsync`, `create_only`,
//! `fsync_on_close`, `pre_read`, `file_append`, `allow_file_create`, `unique_filename`,
//! `lockfile`) and how files are named and created (modes, `filename_format` shared by
//! clones, `--directory` after `--filename` on the command line), side by side with the
//! installed fio: the system calls made on the job's file (strace), the files left, their
//! modes and lengths, and the I/O counts.

use super::fio::tmp;
use super::fio_engines::{have_strace, strace_f};
use super::fio_files::{counts, doc, fio, hb};
use super::fio_seq::need_fio;
use crate::common;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// `program args` run in `dir` with umask 0 (so the mode a file is created with shows).
fn with_umask0(dir: &Path, program: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 0 && exec \"$@\"")
        .arg("sh")
        .arg(program)
        .args(args)
        .current_dir(dir)
        .env("HOSTBENCH_RESULTS_DB", dir.join("r.db"))
        .output()
        .unwrap()
}

/// hostbench's or fio's argument list for `args` (hostbench's with `fio` first and
/// `--no-save` last) and the program to run.
fn argv<'a>(who: &str, args: &[&'a str]) -> (String, Vec<&'a str>) {
    if who == "fio" {
        ("fio".to_string(), args.to_vec())
    } else {
        let mut v = vec!["fio"];
        v.extend_from_slice(args);
        v.push("--no-save");
        (common::bin().to_str().unwrap().to_string(), v)
    }
}

/// The calls (`calls`, strace names) `program args` makes on `file` in `dir`, in order:
/// each call's name, consecutive repeats of one name made one (fio lays out in blocks,
/// hostbench in MiB), and for an open whether it created (`O_CREAT`) or truncated.
fn file_calls(dir: &Path, who: &str, args: &[&str], file: &str, calls: &str) -> Vec<String> {
    let (prog, argv) = argv(who, args);
    let (o, log) = strace_f(dir, &prog, &argv, calls, &["-y"]);
    assert!(
        o.status.success(),
        "{who} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let abs = std::fs::canonicalize(dir).unwrap().join(file);
    let tag = format!("<{}>", abs.display());
    let mut out: Vec<String> = Vec::new();
    for l in log.lines() {
        let Some(call) = l.split_once(' ').map(|(_, c)| c.trim_start()) else {
            continue;
        };
        let Some((name, rest)) = call.split_once('(') else {
            continue;
        };
        let item = if name == "openat" {
            if !rest.contains(&format!("\"{file}\"")) && !rest.contains(&format!("/{file}\"")) {
                continue;
            }
            let mut f = "open".to_string();
            for flag in ["O_CREAT", "O_TRUNC", "O_APPEND"] {
                if rest.contains(flag) {
                    f.push_str(&format!("|{flag}"));
                }
            }
            f
        } else if rest.contains(&tag) && name == "fadvise64" {
            // With its advice (the last argument).
            let advice = rest.rsplit_once(", ").map_or("", |(_, a)| a);
            format!("fadvise64:{}", advice.split(')').next().unwrap_or(""))
        } else if rest.contains(&tag) {
            name.to_string()
        } else {
            continue;
        };
        if out.last() != Some(&item) {
            out.push(item);
        }
    }
    out
}

/// A job's layout: a writer's missing file is created and its space reserved, never
/// written (fio's default `overwrite=0`); `overwrite=1` or a job that reads has it written
/// out and fsynced (`create_fsync=0`: not fsynced), with fio's mode 0644.
#[test]
fn overwrite_and_create_fsync_lay_out_as_fio() {
    let peer = need_fio("overwrite_and_create_fsync_lay_out_as_fio");
    let d = tmp("overwrite");
    let calls = "openat,write,fsync,fdatasync,ftruncate,fallocate";
    let cases: &[(&[&str], &[&str])] = &[
        (&["--rw=write"], &["fallocate"]),
        (
            &["--rw=randwrite", "--overwrite=1"],
            &["fallocate", "ftruncate", "write", "fsync"],
        ),
        (
            &["--rw=write", "--overwrite=1", "--create_fsync=0"],
            &["fallocate", "ftruncate", "write"],
        ),
        (
            &["--rw=read"],
            &["fallocate", "ftruncate", "write", "fsync"],
        ),
        (
            &["--rw=read", "--create_fsync=0"],
            &["fallocate", "ftruncate", "write"],
        ),
    ];
    for &(opts, want) in cases {
        let mut args = vec!["--name=ow", "--filename=ow.dat", "--size=256k", "--bs=64k"];
        args.extend_from_slice(opts);
        let layout = |who: &str| -> Vec<String> {
            let _ = std::fs::remove_file(d.join("ow.dat"));
            let all = file_calls(&d, who, &args, "ow.dat", calls);
            // The layout: from the first open that creates the file to the next open.
            let start = all
                .iter()
                .position(|c| c.starts_with("open|O_CREAT"))
                .unwrap();
            all[start + 1..]
                .iter()
                .take_while(|c| !c.starts_with("open"))
                .cloned()
                .collect()
        };
        if have_strace("overwrite_and_create_fsync_lay_out_as_fio") {
            let ours = layout("hostbench");
            assert_eq!(ours, want, "{opts:?}");
            if peer {
                assert_eq!(ours, layout("fio"), "{opts:?}");
            }
        }
    }
    // The mode a laid-out file is created with: fio's 0644 (umask 0 shows it).
    let mut modes = Vec::new();
    for who in ["hostbench", "fio"].iter().take(if peer { 2 } else { 1 }) {
        let _ = std::fs::remove_file(d.join("m.dat"));
        let (prog, args) = argv(
            who,
            &["--name=m", "--filename=m.dat", "--size=64k", "--rw=read"],
        );
        let o = with_umask0(&d, &prog, &args);
        assert!(
            o.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let m = std::fs::metadata(d.join("m.dat"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        modes.push(m);
    }
    assert_eq!(modes[0], 0o644, "hostbench's laid-out file");
    if peer {
        assert_eq!(modes[0], modes[1], "fio's");
    }
}

/// `allow_file_create=0`: a missing file is not created; the layout refuses it (fio fails
/// its setup, exit 1) and a `create_on_open` job's open fails with ENOENT (error 2), as in
/// fio; an existing file is used.
#[test]
fn allow_file_create_0_creates_nothing_as_fio() {
    let peer = need_fio("allow_file_create_0_creates_nothing_as_fio");
    let d = tmp("nocreate");
    let base = ["--name=nc", "--filename=nc.dat", "--size=64k", "--rw=write"];
    let r = hb(&d, &[&base[..], &["--allow_file_create=0"]].concat());
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("allow_file_create=0"), "{}", r.err);
    assert!(!d.join("nc.dat").exists());
    if peer {
        let f = fio(&d, &[&base[..], &["--allow_file_create=0"]].concat());
        assert_ne!(f.code, 0, "{}", f.err);
        assert!(f.err.contains("allow_file_create=0"), "{}", f.err);
        assert!(!d.join("nc.dat").exists());
    }
    // create_on_open: fio runs the job, whose open fails (error 2, exit 1); hostbench
    // refuses it before the run (exit 2).
    let co = [&base[..], &["--allow_file_create=0", "--create_on_open=1"]].concat();
    let r = hb(&d, &co);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("allow_file_create=0 forbids"), "{}", r.err);
    assert!(!d.join("nc.dat").exists());
    if peer {
        let co = [&co[..], &["--output-format=json"]].concat();
        let f = fio(&d, &co);
        let e = doc(&f.out)["jobs"][0]["error"].as_i64().unwrap();
        assert_eq!((f.code, e), (1, 2), "{}", f.err);
        assert!(!d.join("nc.dat").exists());
    }
    // An existing file is written.
    std::fs::write(d.join("nc.dat"), vec![0u8; 64 << 10]).unwrap();
    let r = hb(&d, &[&base[..], &["--allow_file_create=0"]].concat());
    assert_eq!(r.code, 0, "{}", r.err);
}

/// Files and their lengths.
type Files = Vec<(String, u64)>;

/// Every regular file under `dir` (relative paths, sorted) and its length, the test's own
/// logs left out.
fn files_in(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            if p.is_dir() {
                stack.push(p);
            } else if !rel.ends_with(".txt") && !rel.starts_with("r.db") && !rel.ends_with(".fio") {
                out.push((rel, e.metadata().unwrap().len()));
            }
        }
    }
    out.sort();
    out
}

/// `filename_format` without `$jobnum` and `numjobs=2`: fio gives the second clone no file
/// (its `add_file` skips a name an earlier clone has), so it never runs: [32, 0] I/Os,
/// its JSON entry empty and no block in the report.
#[test]
fn clones_sharing_a_generated_name_as_fio() {
    let peer = need_fio("clones_sharing_a_generated_name_as_fio");
    for rw in ["write", "read"] {
        let rwo = format!("--rw={rw}");
        let args = [
            "--name=j",
            "--filename_format=shared.$filenum",
            "--numjobs=2",
            &rwo,
            "--size=128k",
            "--bs=4k",
            "--output-format=json,normal",
        ];
        let run = |who: &str| -> (Vec<(u64, u64)>, usize, Files) {
            let d = tmp("sharedfmt");
            let r = if who == "fio" {
                fio(&d, &args)
            } else {
                hb(&d, &args)
            };
            assert_eq!(r.code, 0, "{who}: {}", r.err);
            let blocks = r.out.matches("(groupid=").count();
            let json_end = r.out.rfind("\n}").unwrap() + 2;
            (counts(&r.out[..json_end]), blocks, files_in(&d))
        };
        let ours = run("hostbench");
        let n = if rw == "read" { (32, 0) } else { (0, 32) };
        assert_eq!(ours.0, [n, (0, 0)], "{rw}");
        assert_eq!(ours.1, 1, "{rw}: one block");
        assert_eq!(ours.2, [("shared.0".to_string(), 128 << 10)], "{rw}");
        if peer {
            assert_eq!(ours, run("fio"), "{rw}");
        }
    }
}

/// On fio's command line a named file takes the `directory` given before it
/// (`--filename=x --directory=d1` writes ./x; a `directory` in [global] or before it
/// counts); in a job file a section's `directory` holds for its `filename` wherever it is
/// written (fio sorts the section's options), and a [global] `filename` keeps the
/// global's directory.
#[test]
fn directory_holds_for_the_filenames_after_it_as_fio() {
    let peer = need_fio("directory_holds_for_the_filenames_after_it_as_fio");
    let cases: &[(&[&str], &str)] = &[
        (&["--name=j", "--filename=x", "--directory=d1"], ""),
        (&["--name=j", "--directory=d1", "--filename=x"], ""),
        (&["--directory=d1", "--name=j", "--filename=x"], ""),
        (&["--filename=x", "--name=j", "--directory=d1"], ""),
        (&["--name=j", "--filename=x:y", "--directory=d1"], ""),
        (&["j.fio"], "[j]\nfilename=x\ndirectory=d1\n"),
        (&["j.fio"], "[global]\nfilename=x\n[j]\ndirectory=d1\n"),
        (&["j.fio"], "[global]\ndirectory=d1\n[j]\nfilename=x\n"),
        (
            &["j.fio"],
            "[global]\nfilename=x\ndirectory=d2\n[j]\ndirectory=d1\n",
        ),
    ];
    let mut seen = Vec::new();
    for &(args, text) in cases {
        let run = |who: &str| -> Vec<(String, u64)> {
            let d = tmp("dirorder");
            for sub in ["d1", "d2"] {
                std::fs::create_dir(d.join(sub)).unwrap();
            }
            if !text.is_empty() {
                std::fs::write(d.join("j.fio"), format!("{text}size=16k\n")).unwrap();
            }
            let mut a = args.to_vec();
            if text.is_empty() {
                a.push("--size=16k");
            }
            let r = if who == "fio" {
                fio(&d, &a)
            } else {
                hb(&d, &a)
            };
            assert_eq!(r.code, 0, "{who} {args:?}: {}", r.err);
            files_in(&d)
        };
        let ours = run("hostbench");
        seen.push(
            ours.iter()
                .map(|(f, _)| f.clone())
                .collect::<Vec<_>>()
                .join(" "),
        );
        if peer {
            assert_eq!(ours, run("fio"), "{args:?} {text:?}");
        }
    }
    assert_eq!(
        seen,
        ["x", "d1/x", "d1/x", "x", "x y", "d1/x", "x", "d1/x", "d2/x"]
    );
}

/// `file_append=1`: the region starts at the file's end (the `offset` given does not
/// count), so a writer appends and a reader has the file grown first; clones sharing the
/// file each append after the one set up before it; the same offsets and file lengths as
/// fio's.
#[test]
fn file_append_starts_at_the_files_end_as_fio() {
    if !need_fio("file_append_starts_at_the_files_end_as_fio") {
        // Still: hostbench alone appends.
        let d = tmp("append-alone");
        std::fs::write(d.join("ap.dat"), vec![7u8; 64 << 10]).unwrap();
        let r = hb(
            &d,
            &[
                "--name=a",
                "--filename=ap.dat",
                "--rw=write",
                "--size=32k",
                "--file_append=1",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.err);
        assert_eq!(std::fs::metadata(d.join("ap.dat")).unwrap().len(), 96 << 10);
        return;
    }
    let d = tmp("append");
    let make = |d: &Path| {
        std::fs::write(d.join("ap.dat"), vec![7u8; 64 << 10]).unwrap();
    };
    for extra in [
        &["--rw=write"][..],
        &["--rw=read"],
        &["--rw=randwrite", "--offset=8k"],
        &["--rw=write", "--numjobs=3"],
        &["--rw=read", "--numjobs=2", "--offset_increment=16k"],
    ] {
        let mut args = vec![
            "--name=a",
            "--filename=ap.dat",
            "--size=32k",
            "--bs=8k",
            "--file_append=1",
        ];
        args.extend_from_slice(extra);
        let [ours, theirs] = super::fio_files::offsets_per_file(&d, &make, &args, &["ap.dat"]);
        assert_eq!(ours, theirs, "{extra:?}");
        assert!(
            ours.0[0].iter().all(|&o| o >= 64 << 10),
            "{extra:?}: {ours:?}"
        );
    }
    // Not on a device, and with a size in bytes.
    let r = hb(
        &d,
        &[
            "--name=a",
            "--filename=/dev/null",
            "--rw=write",
            "--size=32k",
            "--file_append=1",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains("file_append appends to regular files"),
        "{}",
        r.err
    );
    let r = hb(
        &d,
        &[
            "--name=a",
            "--filename=ap.dat",
            "--rw=read",
            "--file_append=1",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("file_append needs a size"), "{}", r.err);
}

/// `create_only=1`: the files are laid out, then no I/O (no job block in the report, a
/// JSON entry with none), exit 0, as fio.
#[test]
fn create_only_lays_out_and_does_nothing_else_as_fio() {
    let peer = need_fio("create_only_lays_out_and_does_nothing_else_as_fio");
    let args = [
        "--name=co",
        "--rw=read",
        "--size=256k",
        "--numjobs=2",
        "--create_only=1",
        "--output-format=json,normal",
    ];
    let run = |who: &str| -> (Vec<(u64, u64)>, usize, bool, Files) {
        let d = tmp("createonly");
        let r = if who == "fio" {
            fio(&d, &args)
        } else {
            hb(&d, &args)
        };
        assert_eq!(r.code, 0, "{who}: {}", r.err);
        let json_end = r.out.rfind("\n}").unwrap() + 2;
        (
            counts(&r.out[..json_end]),
            r.out.matches("(groupid=").count(),
            r.out.contains("Laying out IO file"),
            files_in(&d),
        )
    };
    let ours = run("hostbench");
    assert_eq!(ours.0, [(0, 0), (0, 0)]);
    assert_eq!(ours.1, 0);
    assert_eq!(
        ours.3,
        [
            ("co.0.0".to_string(), 256 << 10),
            ("co.1.0".to_string(), 256 << 10)
        ]
    );
    if peer {
        assert_eq!(ours, run("fio"));
    }
}

/// `fsync_on_close=1`: a job that writes syncs each file when it is done with it (after
/// its last write); a reader does not; the calls on each file are fio's.
#[test]
fn fsync_on_close_syncs_written_files_as_fio() {
    if !have_strace("fsync_on_close_syncs_written_files_as_fio") {
        return;
    }
    let peer = need_fio("fsync_on_close_syncs_written_files_as_fio");
    let d = tmp("fsyncclose");
    let calls = "fsync,fdatasync,pwrite64,pread64";
    let cases: &[(&[&str], &[&str], &[&str])] = &[
        (
            &["--filename=f0", "--rw=write"],
            &["f0"],
            &["pwrite64", "fsync"],
        ),
        (
            &["--filename=f0", "--rw=read"],
            &["f0"],
            &["fsync", "pread64"],
        ),
        (
            &["--filename=f0", "--rw=write", "--fsync_on_close=0"],
            &["f0"],
            &["pwrite64"],
        ),
        (
            &[
                "--filename=f0:f1",
                "--rw=write",
                "--openfiles=1",
                "--file_service_type=sequential",
            ],
            &["f0", "f1"],
            &["pwrite64", "fsync"],
        ),
    ];
    for &(opts, files, want) in cases {
        let mut args = vec!["--name=fc", "--size=64k", "--bs=16k", "--fsync_on_close=1"];
        args.extend_from_slice(opts);
        let each = |who: &str| -> Vec<Vec<String>> {
            for f in files {
                let _ = std::fs::remove_file(d.join(f));
            }
            files
                .iter()
                .map(|f| {
                    for f in files {
                        let _ = std::fs::remove_file(d.join(f));
                    }
                    file_calls(&d, who, &args, f, calls)
                })
                .collect()
        };
        let ours = each("hostbench");
        for c in &ours {
            assert_eq!(c, want, "{opts:?}");
        }
        if peer {
            assert_eq!(ours, each("fio"), "{opts:?}");
        }
    }
}

/// `unique_filename`: outside fio's client mode names are the same either way; with
/// `unique_filename=0` (or a `filename_format` lacking `$jobnum`) and verifying writers
/// fio warns that they may overwrite each other's blocks, and so does hostbench.
#[test]
fn unique_filename_names_and_warns_as_fio() {
    let peer = need_fio("unique_filename_names_and_warns_as_fio");
    let cases: &[(&[&str], bool)] = &[
        (&["--unique_filename=0"], true),
        (&["--unique_filename=1"], false),
        (&["--filename_format=$jobname.x.$jobnum"], true),
        (&["--unique_filename=0", "--verify=0"], false),
    ];
    for &(opts, warns) in cases {
        let mut args = vec![
            "--name=u",
            "--rw=write",
            "--size=16k",
            "--numjobs=2",
            "--verify=crc32c",
        ];
        args.extend_from_slice(opts);
        let run = |who: &str| -> (bool, Vec<(String, u64)>) {
            let d = tmp("uniq");
            let r = if who == "fio" {
                fio(&d, &args)
            } else {
                hb(&d, &args)
            };
            assert_eq!(r.code, 0, "{who} {opts:?}: {}", r.err);
            let all = format!("{}{}", r.out, r.err);
            (
                all.contains("multiple writers may overwrite blocks"),
                files_in(&d),
            )
        };
        let ours = run("hostbench");
        assert_eq!(ours.0, warns, "{opts:?}");
        if peer {
            assert_eq!(ours, run("fio"), "{opts:?}");
        }
    }
}

/// `pre_read=1`: each file's region is read once (`read`s of the block size from an
/// `lseek` to its start) before the job's I/O, which does not count it, and the page
/// cache is not dropped between (no `POSIX_FADV_DONTNEED`): the calls on each file from
/// the pre-read on are fio's.
#[test]
fn pre_read_reads_the_region_first_as_fio() {
    if !have_strace("pre_read_reads_the_region_first_as_fio") {
        return;
    }
    let peer = need_fio("pre_read_reads_the_region_first_as_fio");
    let d = tmp("preread");
    let calls = "lseek,read,pread64,pwrite64,fadvise64";
    for (rw, files) in [("read", "p0"), ("randwrite", "p0"), ("randread", "p0:p1")] {
        let (r, f) = (format!("--rw={rw}"), format!("--filename={files}"));
        let args = [
            "--name=pr",
            &f,
            &r,
            "--size=64k",
            "--bs=16k",
            "--pre_read=1",
            "--output-format=json",
        ];
        let run = |who: &str| -> Vec<Vec<String>> {
            files
                .split(':')
                .map(|name| {
                    for n in files.split(':') {
                        let _ = std::fs::remove_file(d.join(n));
                    }
                    let all = file_calls(&d, who, &args, name, calls);
                    let from = all.iter().position(|c| c == "read").expect("a pre-read");
                    all[from..]
                        .iter()
                        .filter(|c| {
                            *c != "lseek"
                                && !c.starts_with("fadvise64:POSIX_FADV_RANDOM")
                                && !c.starts_with("fadvise64:POSIX_FADV_SEQ")
                        })
                        .cloned()
                        .collect()
                })
                .collect()
        };
        let ours = run("hostbench");
        let io = if rw == "randwrite" {
            "pwrite64"
        } else {
            "pread64"
        };
        for c in &ours {
            assert_eq!(c, &["read", io], "{rw}");
        }
        let r = hb(&d, &args);
        assert_eq!(r.code, 0, "{}", r.err);
        // 64k in 16k blocks, over one file or two.
        let want = if rw == "randwrite" { 0 } else { 4 };
        assert_eq!(
            counts(&r.out)[0].0,
            want,
            "{rw}: the pre-read is not counted"
        );
        if peer {
            assert_eq!(ours, run("fio"), "{rw}");
        }
    }
}

/// How many of `program args`'s reads or writes of `file` overlapped another's (strace
/// shows a call another thread's call interrupted as `<unfinished ...>`), and how many
/// there were.
fn overlapping_io(dir: &Path, who: &str, args: &[&str]) -> (usize, usize) {
    let (prog, argv) = argv(who, args);
    let (o, log) = strace_f(dir, &prog, &argv, "pread64,pwrite64", &[]);
    assert!(
        o.status.success(),
        "{who}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A call that starts while another process's or thread's is unfinished overlaps it
    // (a signal's line can interrupt a call too: that is no overlap).
    let mut open: Vec<String> = Vec::new();
    let (mut over, mut calls) = (0, 0);
    for l in log.lines() {
        let Some((pid, rest)) = l.split_once(' ') else {
            continue;
        };
        let rest = rest.trim_start();
        if rest.starts_with("<...") {
            open.retain(|p| p != pid);
        } else if rest.starts_with("pread64(") || rest.starts_with("pwrite64(") {
            calls += 1;
            if open.iter().any(|p| p != pid) {
                over += 1;
            }
            if rest.ends_with("<unfinished ...>") {
                open.push(pid.to_string());
            }
        }
    }
    (over, calls)
}

/// `lockfile=exclusive`: the clones sharing a named file do their I/O one at a time (no
/// read or write of one overlaps another's), as fio's; `lockfile=readwrite` is taken and,
/// as in fio 3.33 (whose `lock_file` looks only at the exclusive lock), locks nothing.
#[test]
fn lockfile_exclusive_serializes_the_clones_as_fio() {
    if !have_strace("lockfile_exclusive_serializes_the_clones_as_fio") {
        return;
    }
    let peer = need_fio("lockfile_exclusive_serializes_the_clones_as_fio");
    let d = tmp("lockfile");
    std::fs::write(d.join("lk.dat"), vec![1u8; 1 << 20]).unwrap();
    for rw in ["randread", "randrw"] {
        let r = format!("--rw={rw}");
        let args = [
            "--name=lk",
            "--lockfile=exclusive",
            "--filename=lk.dat",
            "--size=1m",
            "--bs=4k",
            "--numjobs=3",
            "--norandommap",
            &r,
        ];
        let (over, calls) = overlapping_io(&d, "hostbench", &args);
        assert!(calls >= 3 * 256, "{rw}: {calls} calls");
        assert_eq!(over, 0, "{rw}: hostbench's I/Os overlapped");
        if peer {
            let (over, calls) = overlapping_io(&d, "fio", &args);
            assert!(calls >= 3 * 256, "{rw}: fio: {calls} calls");
            assert_eq!(over, 0, "{rw}: fio's I/Os overlapped");
        }
    }
    // On the command line a lock is made for the files named after lockfile only: after
    // `--filename`, nothing is locked (fio's I/Os overlap: about 600 of 768 here); in a
    // job file the section's lockfile holds wherever it is written.
    let after = [
        "--name=lk",
        "--filename=lk.dat",
        "--lockfile=exclusive",
        "--size=1m",
        "--bs=4k",
        "--numjobs=3",
        "--norandommap",
        "--rw=randread",
    ];
    let lines = "[lk]\nfilename=lk.dat\nlockfile=exclusive\nsize=1m\nbs=4k\nnumjobs=3\n\
                 norandommap\nrw=randread\n";
    std::fs::write(d.join("lk.fio"), lines).unwrap();
    let (over, _) = overlapping_io(&d, "hostbench", &["lk.fio"]);
    assert_eq!(over, 0, "hostbench's job file");
    let (over_hb, _) = overlapping_io(&d, "hostbench", &after);
    if peer {
        let (over, _) = overlapping_io(&d, "fio", &["lk.fio"]);
        assert_eq!(over, 0, "fio's job file");
        let (over, _) = overlapping_io(&d, "fio", &after);
        // (Overlaps are likely, not certain: each side is only told apart from a lock.)
        eprintln!("lockfile after filename: fio {over} overlaps, hostbench {over_hb}");
    }
    // Taken, and a bad value refused with the choices.
    let ok = hb(
        &d,
        &[
            "--name=lk",
            "--filename=lk.dat",
            "--size=64k",
            "--lockfile=readwrite",
        ],
    );
    assert_eq!(ok.code, 0, "{}", ok.err);
    let bad = hb(
        &d,
        &[
            "--name=lk",
            "--filename=lk.dat",
            "--size=64k",
            "--lockfile=shared",
        ],
    );
    assert_eq!(bad.code, 2, "{}", bad.err);
    assert!(
        bad.err.contains("none, exclusive or readwrite"),
        "{}",
        bad.err
    );
}
