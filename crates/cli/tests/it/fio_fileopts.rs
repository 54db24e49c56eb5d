//! fio 3.33's file-handling options (`overwrite`, `create_fsync`, `create_only`,
//! `fsync_on_close`, `pre_read`, `file_append`, `allow_file_create`, `unique_filename`,
//! `lockfile`) and how files are named and created (modes, `filename_format` shared by
//! clones, `--directory` after `--filename` on the command line), side by side with the
//! installed fio: the system calls made on the job's file (strace), the files left, their
//! modes and lengths, and the I/O counts.

use super::fio::tmp;
use super::fio_engines::have_strace;
use super::fio_files::{doc, fio, hb};
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
    let log = dir.join(format!("calls-{who}.txt"));
    let (prog, argv) = argv(who, args);
    let o = std::process::Command::new("strace")
        .args(["-f", "-qq", "-y", "-e"])
        .arg(format!("trace={calls}"))
        .arg("-o")
        .arg(&log)
        .arg(&prog)
        .args(&argv)
        .current_dir(dir)
        .env("HOSTBENCH_RESULTS_DB", dir.join("r.db"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{who} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let abs = std::fs::canonicalize(dir).unwrap().join(file);
    let tag = format!("<{}>", abs.display());
    let mut out: Vec<String> = Vec::new();
    for l in std::fs::read_to_string(&log).unwrap().lines() {
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
