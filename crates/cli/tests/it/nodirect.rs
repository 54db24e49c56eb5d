//! Direct I/O on a filesystem that refuses it: every disk front-end must stop with exit 2 and
//! one message naming the filesystem and what to do, before measuring anything.
//!
//! This needs a filesystem that really refuses `O_DIRECT`. tmpfs accepts it since Linux 6.6;
//! ramfs still refuses it. `.ci/run` mounts a ramfs and sets `HOSTBENCH_TEST_NODIRECT_DIR` to
//! it (set = required); without it the test prints that it was skipped.

use crate::common::run;
use std::path::{Path, PathBuf};

fn dir() -> Option<PathBuf> {
    match std::env::var_os("HOSTBENCH_TEST_NODIRECT_DIR") {
        Some(d) => {
            let d = PathBuf::from(d);
            assert!(
                d.is_dir(),
                "HOSTBENCH_TEST_NODIRECT_DIR={} is not a directory",
                d.display()
            );
            Some(d)
        }
        None => {
            eprintln!(
                "skipped: HOSTBENCH_TEST_NODIRECT_DIR is not set (a ramfs mount; .ci/run sets it)"
            );
            None
        }
    }
}

/// A fresh subdirectory of the refusing filesystem for one case.
fn sub(root: &Path, tag: &str) -> PathBuf {
    let d = root.join(format!("hb-nodirect-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn assert_refused(what: &str, code: i32, err: &str) {
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert_eq!(code, 2, "{what}: {err}");
    assert!(
        err.contains("the ramfs filesystem holding") && err.contains("does not support direct I/O"),
        "{what}: {err}"
    );
    assert!(err.contains("drop the direct flag"), "{what}: {err}");
}

#[test]
fn direct_io_on_ramfs_is_refused_by_name() {
    let Some(root) = dir() else { return };

    // sysbench fileio: prepare works (it writes through the page cache, as sysbench does);
    // a direct run is refused.
    let d = sub(&root, "fileio");
    let base = [
        "fileio",
        "--file-num=2",
        "--file-total-size=2M",
        "--no-save",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        a.push(format!("--file-dir={}", d.display()));
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let args = with(&["prepare"]);
    let (code, _, err) = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "fileio prepare on ramfs: {err}");
    let args = with(&[
        "--file-extra-flags=direct",
        "--file-test-mode=rndrd",
        "--time=1",
        "run",
    ]);
    let (code, _, err) = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_refused("fileio run", code, &err);
    let args = with(&["cleanup"]);
    let (code, _, err) = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "fileio cleanup: {err}");
    std::fs::remove_dir_all(&d).unwrap();

    // fio, with each engine that opens the file itself.
    for engine in ["psync", "libaio", "io_uring"] {
        let d = sub(&root, engine);
        let (code, _, err) = run(&[
            "fio",
            "--name=nd",
            &format!("--filename={}", d.join("f").display()),
            "--size=1m",
            "--rw=randread",
            &format!("--ioengine={engine}"),
            "--direct=1",
        ]);
        if engine == "io_uring" && err.contains("io_uring_setup failed") {
            eprintln!("io_uring is not available here; its case skipped: {err}");
        } else {
            assert_refused(&format!("fio {engine}"), code, &err);
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    // IOzone with -I.
    let d = sub(&root, "iozone");
    let (code, _, err) = run(&[
        "iozone",
        "-I",
        "-i",
        "0",
        "-s",
        "1m",
        "-r",
        "4k",
        "-f",
        &d.join("iozone.tmp").display().to_string(),
    ]);
    assert_refused("iozone -I", code, &err);
    std::fs::remove_dir_all(&d).unwrap();
}
