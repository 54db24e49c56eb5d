//! fio's jobs whose file goes wrong before they start, side by side with the installed
//! fio: a file an earlier job removed (`unlink=1`) is opened by the job after the
//! stonewall as fio opens it, when the job starts; a job whose file cannot be laid out (a
//! read-only directory) fails alone and the other jobs run and report.

use super::fio::{s, tmp};
use super::fio_files::{doc, entries, err_lines, fio, hb};
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
    let _ = s(&d);
    std::fs::remove_dir_all(d).ok();
}
