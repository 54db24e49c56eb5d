//! fio's jobs whose file goes wrong before they start, side by side with the installed
//! fio: a file an earlier job removed (`unlink=1`) is opened by the job after the
//! stonewall as fio opens it, when the job starts; a job whose file cannot be laid out (a
//! read-only directory) fails alone and the other jobs run and report.

use super::fio::{s, tmp};
use super::fio_files::{Ran, doc, entries, err_lines, fio, hb};
use super::fio_seq::need_fio;

/// A writer with `unlink=1`, then a stonewalled reader of the same file: fio opens the
/// reader's file when the reader starts, after the writer removed it, and the reader fails
/// its open (err=2, `open(f)`, exit 1). hostbench opened every file when the run was set
/// up, so its reader read the removed file's data (err=0, exit 0).
#[test]
fn a_reader_after_an_unlinking_writer_fails_its_open_as_in_fio() {
    let d = tmp("unlinked");
    let args = [
        "--name=w",
        "--rw=write",
        "--size=64k",
        "--filename=f",
        "--unlink=1",
        "--name=r",
        "--stonewall",
        "--rw=read",
        "--size=64k",
        "--filename=f",
        "--output-format=json",
    ];
    let h = hb(&d, &args);
    assert_eq!(h.code, 1, "one job failed: exit status 1\n{}", h.err);
    let want = [("w".to_string(), 0, 0, 16), ("r".to_string(), 2, 0, 0)];
    assert_eq!(entries(&doc(&h.out)), want, "{}", h.out);
    assert!(
        h.out.contains("err=2/func=open(f), error=No such file"),
        "{}",
        h.out
    );
    assert!(!d.join("f").exists());
    // The normal layout: the writer's block only (fio prints none for the failed reader).
    let n = hb(&d, &args[..10]);
    assert_eq!(n.code, 1, "{}", n.err);
    assert_eq!(
        err_lines(&n.out),
        ["w: (groupid=0, jobs=1) err=0"],
        "{}",
        n.out
    );
    // A writer after the unlinking one makes the file again (fio's open has O_CREAT, mode
    // 0600), and a reader after it reads what that writer wrote: the file stays.
    let three = [
        "--name=w",
        "--rw=write",
        "--size=64k",
        "--filename=f",
        "--unlink=1",
        "--name=w2",
        "--stonewall",
        "--rw=write",
        "--size=64k",
        "--filename=f",
        "--name=r",
        "--stonewall",
        "--rw=read",
        "--size=64k",
        "--filename=f",
        "--output-format=json",
    ];
    let h3 = hb(&d, &three);
    assert_eq!(h3.code, 0, "{}", h3.err);
    let want3 = [
        ("w".to_string(), 0, 0, 16),
        ("w2".to_string(), 0, 0, 16),
        ("r".to_string(), 0, 16, 0),
    ];
    assert_eq!(entries(&doc(&h3.out)), want3, "{}", h3.out);
    let m = std::fs::metadata(d.join("f")).expect("w2's file stays, as fio's");
    assert_eq!(m.len(), 64 << 10);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(m.permissions().mode() & 0o777, 0o600);
    std::fs::remove_file(d.join("f")).unwrap();
    if need_fio("a_reader_after_an_unlinking_writer_fails_its_open_as_in_fio") {
        let p = fio(&d, &args);
        assert_eq!(p.code, h.code, "{}", p.err);
        assert_eq!(entries(&doc(&p.out)), want, "{}", p.out);
        assert!(
            p.out.contains("func=open(f), error=No such file"),
            "{}",
            p.out
        );
        let p = fio(&d, &args[..10]);
        assert_eq!(err_lines(&p.out), err_lines(&n.out), "{}", p.out);
        let p3 = fio(&d, &three);
        assert_eq!(p3.code, 0, "{}", p3.err);
        assert_eq!(entries(&doc(&p3.out)), want3, "{}", p3.out);
        let m = std::fs::metadata(d.join("f")).unwrap();
        assert_eq!(m.len(), 64 << 10);
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
    }
    // create_serialize=0: fio's reader lays its file out again as it starts (mode 0644),
    // and reads it.
    let mut serial = vec!["--create_serialize=0"];
    serial.extend_from_slice(&args);
    let hs = hb(&d, &serial);
    assert_eq!(hs.code, 0, "{}", hs.err);
    let want_s = [("w".to_string(), 0, 0, 16), ("r".to_string(), 0, 16, 0)];
    assert_eq!(entries(&doc(&hs.out)), want_s, "{}", hs.out);
    let m = std::fs::metadata(d.join("f")).expect("the reader's file, laid out again");
    assert_eq!((m.len(), m.permissions().mode() & 0o777), (64 << 10, 0o644));
    std::fs::remove_file(d.join("f")).unwrap();
    if need_fio("a_reader_after_an_unlinking_writer_fails_its_open_as_in_fio") {
        let p = fio(&d, &serial);
        assert_eq!(p.code, 0, "{}", p.err);
        assert_eq!(entries(&doc(&p.out)), want_s, "{}", p.out);
        let m = std::fs::metadata(d.join("f")).unwrap();
        assert_eq!((m.len(), m.permissions().mode() & 0o777), (64 << 10, 0o644));
    }
    let _ = s(&d);
    std::fs::remove_dir_all(d).ok();
}

/// A directory bind-mounted read-only onto itself (unmounted when dropped); `None` (with
/// a message) when this is not root or mount refuses.
struct ReadOnly(std::path::PathBuf);

impl ReadOnly {
    fn new(dir: &std::path::Path) -> Option<ReadOnly> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skip: a read-only bind mount needs root");
            return None;
        }
        let mount = |args: &[&str]| {
            std::process::Command::new("mount")
                .args(args)
                .arg(dir)
                .arg(dir)
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !mount(&["--bind"]) {
            eprintln!("skip: mount --bind refused");
            return None;
        }
        let ro = ReadOnly(dir.to_path_buf());
        if !mount(&["-o", "remount,bind,ro"]) {
            eprintln!("skip: mount -o remount,bind,ro refused");
            return None;
        }
        Some(ro)
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// A job whose directory is on a read-only filesystem fails its layout alone, as fio's
/// (`err=30`, fio's `func=unlink` for a job that lays its file out anew, `open` for
/// `file_append`), and the other jobs run and report; the exit status counts the failed
/// clones. hostbench refused the whole run (exit 2, no report).
#[test]
fn a_job_whose_file_cannot_be_laid_out_fails_alone_as_in_fio() {
    let d = tmp("rolayout");
    std::fs::create_dir(d.join("ro")).unwrap();
    std::fs::create_dir(d.join("rw")).unwrap();
    let Some(ro) = ReadOnly::new(&d.join("ro")) else {
        std::fs::remove_dir_all(d).ok();
        return;
    };
    let args = [
        "--size=64k",
        "--name=a",
        "--rw=write",
        "--directory=ro",
        "--numjobs=2",
        "--name=r",
        "--rw=read",
        "--directory=ro",
        "--name=b",
        "--rw=write",
        "--directory=rw",
        "--name=c",
        "--rw=write",
        "--file_append=1",
        "--directory=ro",
        "--output-format=json",
    ];
    let want = [
        ("a".to_string(), 30, 0, 0),
        ("a".to_string(), 30, 0, 0),
        ("r".to_string(), 30, 0, 0),
        ("b".to_string(), 0, 0, 16),
        ("c".to_string(), 30, 0, 0),
    ];
    let h = hb(&d, &args);
    assert_eq!(h.code, 4, "four clones failed: exit status 4\n{}", h.err);
    assert_eq!(entries(&doc(&h.out)), want, "{}", h.out);
    let lines = |out: &str, func: &str| {
        out.lines()
            .filter(|l| l.contains(&format!("err=30/{func}, error=Read-only file system")))
            .count()
    };
    // On stderr as the layout fails, fio's parent's `pid=0`: stdout is the JSON alone.
    assert_eq!(lines(&h.err, "func=unlink"), 3, "{}", h.err);
    assert_eq!(lines(&h.err, "func=open"), 1, "{}", h.err);
    assert!(h.out.starts_with('{'), "{}", h.out);
    let n = hb(&d, &args[..15]);
    assert_eq!(n.code, 4, "{}", n.err);
    assert_eq!(
        err_lines(&n.out),
        ["b: (groupid=0, jobs=1) err=0"],
        "{}",
        n.out
    );
    // The failed jobs' layout lines, as fio prints them before it fails (b's file is
    // there from the first run).
    for j in ["a", "r", "c"] {
        let l = format!("{j}: Laying out IO file (1 file / 0MiB)");
        assert!(n.out.contains(&l) || n.err.contains(&l), "{l}\n{}", n.out);
    }
    if need_fio("a_job_whose_file_cannot_be_laid_out_fails_alone_as_in_fio") {
        std::fs::remove_dir_all(d.join("rw")).unwrap();
        std::fs::create_dir(d.join("rw")).unwrap();
        let p = fio(&d, &args);
        assert_eq!(p.code, h.code, "{}", p.err);
        assert_eq!(entries(&doc(&p.out)), want, "{}", p.out);
        // fio names its source lines (`err=30/file:filesetup.c:150, func=unlink`).
        let all = |r: &super::fio_files::Ran| {
            format!("{}{}", r.out, r.err)
                .replace("/file:filesetup.c:150, ", "/")
                .replace("/file:filesetup.c:174, ", "/")
        };
        assert_eq!(lines(&all(&p), "func=unlink"), 3, "{}", p.err);
        assert_eq!(lines(&all(&p), "func=open"), 1, "{}", p.err);
        let out = p.out.replace("/file:filesetup.c:150, ", "/");
        assert_eq!(lines(&out, "func=unlink"), 0, "{}", p.out);
        let pn = fio(&d, &args[..15]);
        assert_eq!(err_lines(&pn.out), err_lines(&n.out), "{}", pn.out);
    }
    // create_on_open: nothing to lay out, the job's open fails when it starts (fio's
    // `func=open(ro/a.0.0)`); hostbench refused the run for its free-space check.
    let coo = [
        "--size=64k",
        "--name=a",
        "--rw=write",
        "--create_on_open=1",
        "--directory=ro",
        "--name=b",
        "--rw=write",
        "--directory=rw",
        "--output-format=json",
    ];
    let want = [("a".to_string(), 30, 0, 0), ("b".to_string(), 0, 0, 16)];
    let h = hb(&d, &coo);
    assert_eq!(h.code, 1, "{}", h.err);
    assert_eq!(entries(&doc(&h.out)), want, "{}", h.out);
    assert!(h.out.contains("err=30/func=open(ro/a.0.0)"), "{}", h.out);
    if need_fio("a_job_whose_file_cannot_be_laid_out_fails_alone_as_in_fio") {
        let p = fio(&d, &coo);
        assert_eq!(p.code, 1, "{}", p.err);
        assert_eq!(entries(&doc(&p.out)), want, "{}", p.out);
        assert!(p.out.contains("func=open(ro/a.0.0)"), "{}", p.out);
    }
    // One file shared by two clones and a second job: each clone tries its layout again
    // and fails again, with fio's line each time.
    let shared = [
        "--size=64k",
        "--name=a",
        "--rw=write",
        "--filename=ro/shared",
        "--numjobs=2",
        "--name=b",
        "--rw=read",
        "--filename=ro/shared",
    ];
    let laying = |out: &str, j: &str| {
        let l = format!("{j}: Laying out IO file (1 file / 0MiB)");
        out.lines().filter(|x| *x == l).count()
    };
    let h = hb(&d, &shared);
    assert_eq!(h.code, 3, "{}", h.err);
    assert_eq!(
        (laying(&h.out, "a"), laying(&h.out, "b")),
        (2, 1),
        "{}",
        h.out
    );
    if need_fio("a_job_whose_file_cannot_be_laid_out_fails_alone_as_in_fio") {
        let p = fio(&d, &shared);
        assert_eq!(p.code, 3, "{}", p.err);
        assert_eq!(
            (laying(&p.out, "a"), laying(&p.out, "b")),
            (2, 1),
            "{}",
            p.out
        );
    }
    drop(ro);
    std::fs::remove_dir_all(d).ok();
}

/// `args` through `program` (hostbench's fio front-end, or fio) as the user nobody, in
/// `dir`; `None` when runuser is missing or nobody cannot run it there.
fn as_nobody(dir: &std::path::Path, program: &std::path::Path, args: &[&str]) -> Option<Ran> {
    let o = std::process::Command::new("runuser")
        .args(["-u", "nobody", "--"])
        .arg(program)
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    if err.contains("Permission denied") && o.stdout.is_empty() {
        eprintln!(
            "skip: nobody cannot run {} in {}: {err}",
            program.display(),
            dir.display()
        );
        return None;
    }
    Some(Ran {
        code: o.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&o.stdout).to_string(),
        err,
        took: std::time::Duration::ZERO,
    })
}

/// A directory the user may not write (mode 555, run as nobody: root writes anywhere):
/// each job with its file there fails its layout alone with fio's `err=13, func=open`
/// (fio's unlink of the missing file finds nothing, its open is refused), the other job
/// runs, and the exit status counts the two failed clones.
#[test]
fn a_job_in_a_directory_it_may_not_write_fails_alone_as_in_fio() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skip: running as nobody needs root");
        return;
    }
    let d = tmp("eacces");
    let mode = |p: &std::path::Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
    };
    std::fs::create_dir(d.join("ro")).unwrap();
    std::fs::create_dir(d.join("rw")).unwrap();
    mode(&d, 0o777);
    mode(&d.join("ro"), 0o555);
    mode(&d.join("rw"), 0o777);
    let args = [
        "fio",
        "--size=64k",
        "--name=a",
        "--rw=write",
        "--directory=ro",
        "--name=r",
        "--rw=read",
        "--directory=ro",
        "--name=b",
        "--rw=write",
        "--directory=rw",
        "--output-format=json",
        "--no-save",
    ];
    let Some(h) = as_nobody(&d, &crate::common::bin(), &args) else {
        std::fs::remove_dir_all(d).ok();
        return;
    };
    let want = [
        ("a".to_string(), 13, 0, 0),
        ("r".to_string(), 13, 0, 0),
        ("b".to_string(), 0, 0, 16),
    ];
    assert_eq!(h.code, 2, "two clones failed: exit status 2\n{}", h.err);
    assert_eq!(entries(&doc(&h.out)), want, "{}", h.out);
    let opens = |out: &str| {
        out.lines()
            .filter(|l| l.contains("err=13/") && l.contains("func=open, error=Permission denied"))
            .count()
    };
    assert_eq!(opens(&h.err), 2, "{}", h.err);
    assert_eq!(opens(&h.out), 0, "{}", h.out);
    if need_fio("a_job_in_a_directory_it_may_not_write_fails_alone_as_in_fio") {
        std::fs::remove_file(d.join("rw/b.0.0")).unwrap();
        let fio_bin = std::path::Path::new("/usr/bin/fio");
        if let Some(p) = as_nobody(&d, fio_bin, &args[1..12]) {
            assert_eq!(p.code, h.code, "{}", p.err);
            assert_eq!(entries(&doc(&p.out)), want, "{}", p.out);
            assert_eq!(opens(&p.err), 2, "{}", p.err);
        }
    }
    std::fs::remove_dir_all(d).ok();
}

/// A directory given as a job's file (`filename=subdir`, a user review): fio lays the job's
/// file out and its unlink of the name fails (err=21, `func=unlink`, EISDIR); that job alone
/// fails, the jobs before and after it run, the normal layout has no block for it, and the
/// exit status is 1. The directory is left as it was.
#[test]
fn a_directory_as_a_jobs_file_fails_that_job_alone_as_in_fio() {
    let d = tmp("isdir");
    std::fs::create_dir(d.join("subdir")).unwrap();
    std::fs::write(d.join("subdir/keep"), b"x").unwrap();
    std::fs::write(
        d.join("j.fio"),
        "[global]\nrw=read\nsize=64k\n[good]\n[bad]\nfilename=subdir\n[good2]\n",
    )
    .unwrap();
    let want = [
        ("good".to_string(), 0, 16, 0),
        ("bad".to_string(), 21, 0, 0),
        ("good2".to_string(), 0, 16, 0),
    ];
    let h = hb(&d, &["j.fio", "--output-format=json"]);
    assert_eq!(h.code, 1, "one job failed: exit status 1\n{}", h.err);
    assert_eq!(entries(&doc(&h.out)), want, "{}", h.out);
    let unlinks = |out: &str| {
        out.lines()
            .filter(|l| l.contains("err=21/") && l.contains("func=unlink, error=Is a directory"))
            .count()
    };
    // fio's parent lays the files out (create_serialize, the default) and prints the
    // failure on stderr as it happens, `pid=0`: stdout is the JSON alone.
    assert_eq!(unlinks(&h.err), 1, "{}\n{}", h.out, h.err);
    assert_eq!(unlinks(&h.out), 0, "{}\n{}", h.out, h.err);
    assert!(h.out.starts_with('{'), "{}", h.out);
    assert!(
        h.err
            .contains("fio: pid=0, err=21/func=unlink, error=Is a directory"),
        "{}",
        h.err
    );
    // create_serialize=0: the clone lays its file out itself, and its line (its own pid)
    // comes on stdout with the report, before the JSON, as fio's.
    let serial = ["j.fio", "--output-format=json", "--create_serialize=0"];
    let c = hb(&d, &serial);
    assert_eq!(c.code, 1, "{}", c.err);
    assert_eq!(
        (unlinks(&c.out), unlinks(&c.err)),
        (1, 0),
        "{}\n{}",
        c.out,
        c.err
    );
    assert!(!c.out.contains("pid=0,"), "{}", c.out);
    assert_eq!(
        std::fs::read(d.join("subdir/keep")).unwrap(),
        b"x",
        "the directory is left alone"
    );
    let n = hb(&d, &["j.fio"]);
    assert_eq!(n.code, 1, "{}", n.err);
    assert_eq!(
        err_lines(&n.out),
        [
            "good: (groupid=0, jobs=1) err=0",
            "good2: (groupid=0, jobs=1) err=0"
        ],
        "{}",
        n.out
    );
    if need_fio("a_directory_as_a_jobs_file_fails_that_job_alone_as_in_fio") {
        let p = fio(&d, &["j.fio", "--output-format=json"]);
        assert_eq!(p.code, h.code, "{}", p.err);
        assert_eq!(entries(&doc(&p.out)), want, "{}", p.out);
        // fio prints its line on stderr (setup_files fails in fio's parent, pid=0).
        assert_eq!(unlinks(&p.err), 1, "{}", p.err);
        let pc = fio(&d, &serial);
        assert_eq!((unlinks(&pc.out), unlinks(&pc.err)), (1, 0), "{}", pc.out);
        let p = fio(&d, &["j.fio"]);
        assert_eq!(err_lines(&p.out), err_lines(&n.out), "{}", p.out);
    }
    std::fs::remove_dir_all(d).ok();
}
