//! The results store and every input hostbench reads, under hostile input: `--results-db`
//! that is not a regular file, a read-only store, inputs without an end (`/dev/zero`),
//! oversized files and `${VAR}` bombs, huge or control-character labels. Each is a clear
//! error (exit 2) in bounded time and memory, and nothing outside what the user named is
//! written.

use crate::common::*;
use std::path::Path;
use std::time::{Duration, Instant};

fn temp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("hostbench-test-input-")
        .tempdir()
        .unwrap()
}

/// Runs hostbench with its store at `db`; returns (exit code, stdout, stderr). A run that
/// does not end within 60 s fails the test (unbounded input).
fn output(db: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let t0 = Instant::now();
    let out = hb_with_store(db)
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(55),
        "{args:?} took too long"
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (out.status.code(), stdout, stderr)
}

/// Expects exit 2 and `want` on stderr.
fn usage_error(db: &Path, args: &[&str], want: &str) -> String {
    let (code, _, err) = output(db, args);
    assert_eq!(code, Some(2), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: {err:?} lacks {want:?}");
    err
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn files_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            // The -shm file is SQLite's shared-memory index: readers update it by design.
            let bytes = if name.ends_with("-shm") {
                Vec::new()
            } else {
                std::fs::read(&p).unwrap()
            };
            (name, bytes)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn results_db_must_be_a_regular_file() {
    let d = temp();
    let db = d.path().join("unused.db");
    let journal_before = Path::new("/dev/null-journal").exists();
    for args in [
        &["results", "list", "--results-db", "/dev/null"][..],
        &["results", "export", "--results-db", "/dev/null"],
        &["run", "null", "-n", "10", "--results-db", "/dev/null"],
    ] {
        let (code, _, err) = output(&db, args);
        assert!(
            err.contains("/dev/null is a character device, not a regular file"),
            "{args:?}: {err}"
        );
        if args[0] == "results" {
            assert_eq!(code, Some(2), "{args:?}: {err}");
        } else {
            // A failed save is a warning; the run itself succeeded.
            assert!(err.contains("not saved"), "{err}");
        }
    }
    if !journal_before {
        assert!(
            !Path::new("/dev/null-journal").exists(),
            "hostbench created /dev/null-journal"
        );
    }
    let dir = d.path().to_str().unwrap();
    usage_error(
        &db,
        &["results", "list", "--results-db", dir],
        "is a directory, not a regular file",
    );
    let fifo = d.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    usage_error(
        &db,
        &["results", "list", "--results-db", fifo.to_str().unwrap()],
        "is a named pipe, not a regular file",
    );
}

#[test]
fn a_store_in_a_missing_directory_is_refused_not_made() {
    // A mistyped --results-db once made its directories (`/nonexist/dir/x.db`).
    let d = temp();
    let db = d.path().join("unused.db");
    let missing = d.path().join("no-such").join("dir");
    let target = missing.join("x.db");
    let t = target.to_str().unwrap();
    let (code, _, err) = output(&db, &["run", "null", "-n", "10", "--results-db", t]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("not saved"), "{err}");
    assert!(
        err.contains("no-such/dir does not exist and neither does"),
        "{err}"
    );
    assert!(!d.path().join("no-such").exists(), "a directory was made");
    // Read-only commands say there is no store there (not "no run matches").
    let (code, _, err) = output(&db, &["results", "list", "--results-db", t]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("no results store at"), "{err}");
    assert!(!d.path().join("no-such").exists());
    // The store's own directory is made when its parent exists.
    std::fs::create_dir(missing.parent().unwrap()).unwrap();
    let (code, _, err) = output(&db, &["run", "null", "-n", "10", "--results-db", t]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("not saved"), "{err}");
    assert!(target.is_file());
}

#[test]
fn a_read_only_store_is_opened_read_only() {
    let d = temp();
    let dir = d.path().join("store");
    std::fs::create_dir(&dir).unwrap();
    let db = dir.join("results.db");
    let (code, _, err) = output(&db, &["run", "null", "-n", "10", "--label", "ro"]);
    assert_eq!(code, Some(0), "{err}");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = files_in(&dir);

    let (code, out, err) = output(&db, &["results", "list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("ro"), "{out}");
    let (code, out, err) = output(&db, &["results", "export"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("\"label\":\"ro\""), "{out}");
    // Saving into it is refused (root could write the file: hostbench must not).
    let (code, _, err) = output(&db, &["run", "null", "-n", "10"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("not saved") && err.contains("read-only"),
        "{err}"
    );
    let export = d.path().join("e.json");
    let (_, doc, _) = output(&db, &["results", "export"]);
    std::fs::write(&export, doc).unwrap();
    usage_error(
        &db,
        &["results", "import", export.to_str().unwrap()],
        "read-only",
    );
    usage_error(&db, &["results", "rm", "--label", "ro"], "read-only");
    assert_eq!(files_in(&dir), before, "the read-only store was changed");
    if !is_root() {
        eprintln!("note: not root; the check that root does not write a 0444 store is weaker");
    }
}

#[test]
fn a_store_on_a_read_only_mount_is_read_not_written() {
    if !is_root() {
        eprintln!("skipped: mounting a read-only file system needs root");
        return;
    }
    let d = temp();
    let m = d.path().join("mnt");
    std::fs::create_dir(&m).unwrap();
    let mount = |args: &[&str]| {
        std::process::Command::new("mount")
            .args(args)
            .status()
            .is_ok_and(|s| s.success())
    };
    if !mount(&[
        "-t",
        "tmpfs",
        "-o",
        "size=16m",
        "tmpfs",
        m.to_str().unwrap(),
    ]) {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    }
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(self.0).status();
        }
    }
    let _guard = Unmount(&m);
    let db = m.join("results.db");
    let (code, _, err) = output(&db, &["run", "null", "-n", "10", "--label", "rofs"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(mount(&["-o", "remount,ro", m.to_str().unwrap()]));
    let (code, out, err) = output(&db, &["results", "list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("rofs"), "{out}");
    let (_, _, err) = output(&db, &["run", "null", "-n", "10"]);
    assert!(
        err.contains("not saved") && err.contains("read-only"),
        "{err}"
    );
}

#[test]
fn endless_and_oversized_inputs_are_clear_errors() {
    let d = temp();
    let db = d.path().join("results.db");
    for (args, want) in [
        (
            &["results", "import", "/dev/zero"][..],
            "/dev/zero is not a hostbench export or result: it is not JSON",
        ),
        (&["compare", "/dev/zero", "/dev/zero"], "is not a file"),
        (
            &["cpu", "--config-file=/dev/zero", "run"],
            "--config-file /dev/zero is larger than 1 MiB",
        ),
        (
            &["fio", "/dev/zero"],
            "job file /dev/zero is larger than 4 MiB",
        ),
        (
            &["suite", "/dev/zero"],
            "suite file /dev/zero is larger than 1 MiB",
        ),
    ] {
        usage_error(&db, args, want);
    }
    assert!(!db.exists(), "a failed import created the store");
}

#[test]
fn a_variable_bomb_in_a_job_file_is_refused() {
    let d = temp();
    let job = d.path().join("bomb.fio");
    // 100 KiB per reference, 400 references a line, 100 lines: 4 GB if expanded.
    let line = format!("filename={}\n", "${HB_BOMB}".repeat(400));
    std::fs::write(&job, format!("[a]\nrw=read\nsize=1m\n{}", line.repeat(100))).unwrap();
    let t0 = Instant::now();
    let out = hb_with_store(&d.path().join("r.db"))
        .args(["fio", job.to_str().unwrap()])
        .env("HB_BOMB", "x".repeat(100 << 10))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bomb.fio:4: the job file grows past 4 MiB"),
        "{err}"
    );
    assert!(t0.elapsed() < Duration::from_secs(30));
}

#[test]
fn long_or_control_character_labels_and_ids_are_refused() {
    let d = temp();
    let db = d.path().join("results.db");
    let long = "l".repeat(201);
    usage_error(
        &db,
        &["run", "null", "-n", "10", "--label", &long],
        "at most 200 characters",
    );
    // A result whose label is huge or holds an escape sequence: import refuses it.
    let src = d.path().join("src.db");
    let (code, doc, err) = output(&src, &["run", "null", "-n", "10", "-f", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let mut v: serde_json::Value = serde_json::from_str(&doc).unwrap();
    for (field, value, want) in [
        (
            "label",
            "x".repeat(100_000),
            "its label is 100000 characters long",
        ),
        (
            "label",
            "a\u{1b}[2Jb".to_string(),
            "its label holds control characters",
        ),
        ("id", "i".repeat(65), "its id is 65 characters long"),
    ] {
        let mut bad = v.clone();
        bad[field] = serde_json::Value::String(value);
        let f = d.path().join("bad.json");
        std::fs::write(&f, serde_json::to_string(&bad).unwrap()).unwrap();
        usage_error(&db, &["results", "import", f.to_str().unwrap()], want);
    }
    // The untouched result imports.
    v["label"] = "fine".into();
    let f = d.path().join("good.json");
    std::fs::write(&f, serde_json::to_string(&v).unwrap()).unwrap();
    let (code, _, err) = output(&db, &["results", "import", f.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
}
