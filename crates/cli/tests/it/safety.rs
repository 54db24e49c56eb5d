//! "Harm nothing", through the real binary: block devices in use are never written, no
//! test file or manifest is ever created, written or deleted through a symlink, cleanup
//! deletes only files it can prove it created (also where the filesystem keeps no birth
//! time), output files never overwrite the results store, a database, a device or a
//! directory, names from job files, `-F` and suites stay in their directory, and a disk
//! that fills during a layout is named and leaves no part file.
//!
//! Tests that need root (loop devices, mounts) print a skip line without it.

use crate::common::*;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command as Sys;
use std::time::Duration;

fn sh(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Sys::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A loop device over a file in a temporary directory, optionally holding a mounted ext4;
/// everything undone on drop.
struct LoopDev {
    _tmp: tempfile::TempDir,
    dev: String,
    mnt: Option<PathBuf>,
    swap: bool,
}

impl LoopDev {
    /// A loop device of `mib` MiB, or the reason it cannot be made here.
    fn new(mib: u64) -> Result<LoopDev, String> {
        if !is_root() {
            return Err("not root".into());
        }
        let tmp = tempfile::Builder::new()
            .prefix("hostbench-safety-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let img = tmp.path().join("disk.img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(mib << 20))
            .map_err(|e| e.to_string())?;
        let dev = sh("losetup", &["-f", "--show", img.to_str().unwrap()])?;
        Ok(LoopDev {
            _tmp: tmp,
            dev,
            mnt: None,
            swap: false,
        })
    }

    /// Makes an ext4 (with `mkfs_args`) and mounts it in the temporary directory.
    fn mount_ext4(&mut self, mkfs_args: &[&str]) -> Result<PathBuf, String> {
        let mut a = vec!["-q", "-F"];
        a.extend_from_slice(mkfs_args);
        a.push(&self.dev);
        sh("mkfs.ext4", &a)?;
        let mnt = self._tmp.path().join("mnt");
        std::fs::create_dir(&mnt).map_err(|e| e.to_string())?;
        sh("mount", &[&self.dev, mnt.to_str().unwrap()])?;
        self.mnt = Some(mnt.clone());
        Ok(mnt)
    }

    fn umount(&mut self) {
        if let Some(m) = self.mnt.take() {
            let _ = sh("umount", &[m.to_str().unwrap()]);
        }
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        if self.swap {
            let _ = sh("swapoff", &[&self.dev]);
        }
        self.umount();
        let _ = sh("losetup", &["-d", &self.dev]);
    }
}

macro_rules! or_skip {
    ($e:expr, $what:expr) => {
        match $e {
            Ok(v) => v,
            Err(why) => {
                eprintln!("SKIP {}: {why}", $what);
                return;
            }
        }
    };
}

// ---------------------------------------------------------------------------------------
// 1. Block devices in use

#[test]
fn fio_refuses_to_write_a_mounted_block_device() {
    let mut ld = or_skip!(LoopDev::new(64), "mounted block device");
    let mnt = or_skip!(ld.mount_ext4(&[]), "mounted block device");
    std::fs::write(mnt.join("precious.txt"), b"keep me").unwrap();
    let _ = sh("sync", &[]);
    let cwd = tempfile::tempdir().unwrap();
    let filename = format!("--filename={}", ld.dev);
    // Trims discard what the filesystem holds: refused as writes are.
    for rw in [
        "--rw=write",
        "--rw=randrw",
        "--rw=trim",
        "--rw=randtrim",
        "--rw=trimwrite",
    ] {
        let (code, out, err) = run_in(
            cwd.path(),
            &[
                "fio",
                "--name=wipe",
                &filename,
                rw,
                "--bs=4k",
                "--size=4m",
                "--ioengine=psync",
            ],
        );
        assert_eq!(code, 2, "{rw}: must refuse:\n{out}\n{err}");
        assert!(err.contains(&ld.dev), "{err}");
        assert!(
            err.contains(mnt.to_str().unwrap()),
            "names the mount: {err}"
        );
        assert!(err.contains("allow_mounted_write=1"), "says how: {err}");
    }
    // fio's falloc engine opens its file for writing and changes its allocation, and
    // ftruncate its size, whatever the direction: refused as writers.
    for engine in ["--ioengine=falloc", "--ioengine=ftruncate"] {
        let (code, out, err) = run_in(
            cwd.path(),
            &[
                "fio",
                "--name=wipe",
                &filename,
                "--rw=read",
                "--size=4m",
                engine,
            ],
        );
        assert_eq!(code, 2, "{engine}: must refuse:\n{out}\n{err}");
        assert!(err.contains(mnt.to_str().unwrap()), "{engine}: {err}");
    }
    // Without a size (the device's own, as fio takes it): refused all the same, before
    // anything is written.
    for rw in ["--rw=write", "--rw=randwrite"] {
        let (code, out, err) = run_in(cwd.path(), &["fio", "--name=wipe", &filename, rw]);
        assert_eq!(code, 2, "{rw} without size: must refuse:\n{out}\n{err}");
        assert!(err.contains("allow_mounted_write=1"), "says how: {err}");
    }
    // Through a symlink to the device (/dev/disk/by-id style): the same refusal.
    let link = cwd.path().join("by-id-link");
    std::os::unix::fs::symlink(&ld.dev, &link).unwrap();
    let (code, _, err) = run_in(
        cwd.path(),
        &[
            "fio",
            "--name=wipe",
            &format!("--filename={}", link.display()),
            "--rw=write",
            "--size=4m",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(mnt.to_str().unwrap()), "{err}");
    // Reading a mounted device is harmless and allowed, as in fio.
    let (code, out, err) = run_in(
        cwd.path(),
        &[
            "fio",
            "--name=look",
            &filename,
            "--rw=read",
            "--bs=4k",
            "--size=1m",
        ],
    );
    assert_eq!(code, 0, "a read job runs:\n{out}\n{err}");
    // Without a size: the whole device is read (fio's size is the device's).
    let (code, out, err) = run_in(
        cwd.path(),
        &["fio", "--name=look", &filename, "--rw=read", "--bs=1m"],
    );
    assert_eq!(code, 0, "a read job without size runs:\n{out}\n{err}");
    // The filesystem survived: unmount, mount again, read the file back.
    ld.umount();
    let mnt2 = ld._tmp.path().join("mnt");
    sh("mount", &[&ld.dev, mnt2.to_str().unwrap()]).unwrap();
    ld.mnt = Some(mnt2.clone());
    assert_eq!(
        std::fs::read(mnt2.join("precious.txt")).unwrap(),
        b"keep me"
    );
}

#[test]
fn fio_refuses_to_write_active_swap() {
    let mut ld = or_skip!(LoopDev::new(32), "active swap");
    or_skip!(sh("mkswap", &[&ld.dev]), "active swap");
    or_skip!(sh("swapon", &[&ld.dev]), "active swap");
    ld.swap = true;
    let cwd = tempfile::tempdir().unwrap();
    let (code, _, err) = run_in(
        cwd.path(),
        &[
            "fio",
            "--name=wipe",
            &format!("--filename={}", ld.dev),
            "--rw=write",
            "--size=1m",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("swap"), "{err}");
}

#[test]
fn fio_writes_an_unused_block_device() {
    let ld = or_skip!(LoopDev::new(16), "unused block device");
    let cwd = tempfile::tempdir().unwrap();
    let (code, out, err) = run_in(
        cwd.path(),
        &[
            "fio",
            "--name=w",
            &format!("--filename={}", ld.dev),
            "--rw=write",
            "--bs=64k",
            "--size=4m",
        ],
    );
    assert_eq!(
        code, 0,
        "nothing uses it, so it may be written:\n{out}\n{err}"
    );
}

// ---------------------------------------------------------------------------------------
// 3. Symlinks

/// A directory with a victim file outside it and a symlink to the victim at `name` inside.
fn planted(name: &str) -> (tempfile::TempDir, tempfile::TempDir, PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim.conf");
    std::fs::write(&victim, b"important=1\n").unwrap();
    std::os::unix::fs::symlink(&victim, work.path().join(name)).unwrap();
    (work, elsewhere, victim)
}

fn assert_untouched(victim: &Path) {
    assert_eq!(
        std::fs::read(victim).unwrap(),
        b"important=1\n",
        "{} was written through a symlink",
        victim.display()
    );
}

#[test]
fn fileio_never_writes_through_a_symlinked_test_file() {
    let (work, _e, victim) = planted("test_file.0");
    let (code, out, err) = run_in(
        work.path(),
        &["fileio", "--file-num=1", "--file-total-size=1M", "prepare"],
    );
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(err.contains("test_file.0"), "names it: {err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_untouched(&victim);
    // Cleanup leaves the link (hostbench did not create it) and the victim alone.
    let (code, _, err) = run_in(
        work.path(),
        &["fileio", "--file-num=1", "--file-total-size=1M", "cleanup"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(work.path().join("test_file.0").symlink_metadata().is_ok());
    assert_untouched(&victim);
}

#[test]
fn a_planted_manifest_temp_link_redirects_nothing() {
    // The old fixed temporary name of the manifest.
    let (work, _e, victim) = planted(".hostbench-fileio.manifest.tmp");
    let (code, out, err) = run_in(
        work.path(),
        &["fileio", "--file-num=1", "--file-total-size=1M", "prepare"],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert_untouched(&victim);
    // A symlink at the manifest's own name is refused, not read or followed.
    let (work2, _e2, victim2) = planted(".hostbench-fileio.manifest");
    let (code, _, err) = run_in(
        work2.path(),
        &["fileio", "--file-num=1", "--file-total-size=1M", "prepare"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(".hostbench-fileio.manifest"), "{err}");
    assert_untouched(&victim2);
}

#[test]
fn fio_never_writes_through_a_symlinked_job_file() {
    // An explicit filename that is a symlink to a regular file.
    let (work, _e, victim) = planted("data.bin");
    let (code, _, err) = run_in(
        work.path(),
        &[
            "fio",
            "--name=j",
            "--filename=data.bin",
            "--rw=write",
            "--size=1m",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("data.bin") && err.contains("symbolic link"),
        "{err}"
    );
    assert_untouched(&victim);
    // A generated name ($jobname.$jobnum.$filenum) with a link planted at it.
    let (work, _e, victim) = planted("j.0.0");
    let (code, _, err) = run_in(
        work.path(),
        &["fio", "--name=j", "--rw=randwrite", "--size=1m"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("j.0.0"), "{err}");
    assert_untouched(&victim);
}

#[test]
fn iozone_never_writes_through_a_symlinked_file() {
    let (work, _e, victim) = planted("iozone.tmp");
    let (code, _, err) = run_in(
        work.path(),
        &[
            "iozone",
            "-i",
            "0",
            "-s",
            "64k",
            "-r",
            "4k",
            "-f",
            "iozone.tmp",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("iozone.tmp"), "{err}");
    assert_untouched(&victim);
}

// ---------------------------------------------------------------------------------------
// 4. Ownership without birth times

#[test]
fn cleanup_keeps_a_file_moved_over_a_test_file_without_birth_times() {
    let mut ld = or_skip!(LoopDev::new(256), "ownership without birth times");
    // 128-byte inodes keep no birth time.
    let mnt = or_skip!(
        ld.mount_ext4(&["-I", "128"]),
        "ownership without birth times"
    );
    let d = mnt.join("bench");
    std::fs::create_dir(&d).unwrap();
    let base = ["fileio", "--file-num=2", "--file-total-size=2M"];
    let with = |w: &'static str| {
        let mut v = base.to_vec();
        v.push(w);
        v
    };
    let (code, out, err) = run_in(&d, &with("prepare"));
    assert_eq!(code, 0, "{out}\n{err}");
    let f0 = d.join("test_file.0");
    let old_ino = std::fs::metadata(&f0).unwrap().ino();
    assert!(
        std::fs::metadata(&f0).unwrap().created().is_err()
            || std::fs::metadata(&f0)
                .unwrap()
                .created()
                .is_ok_and(|t| t == std::time::UNIX_EPOCH),
        "this filesystem was meant to have no birth times"
    );
    // The user deletes the test file and moves a file of their own to its name; the
    // freed inode number is handed to the new file.
    // (Lower free inode numbers, from the manifest's earlier versions, go first.)
    std::fs::remove_file(&f0).unwrap();
    let mut new_ino = 0;
    for i in 0..64 {
        let mine = d.join(format!("mine-{i}.txt"));
        std::fs::write(&mine, b"the user's data").unwrap();
        new_ino = std::fs::metadata(&mine).unwrap().ino();
        if new_ino == old_ino {
            std::fs::rename(&mine, &f0).unwrap();
            break;
        }
    }
    if new_ino != old_ino {
        eprintln!("SKIP ownership without birth times: the inode number was not reused");
        let _ = run_in(&d, &with("cleanup"));
        return;
    }
    let (code, out, err) = run_in(&d, &with("cleanup"));
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        std::fs::read(&f0).unwrap(),
        b"the user's data",
        "cleanup deleted the user's file"
    );
    assert!(out.contains("Not removing test_file.0"), "says so: {out}");
    assert!(
        !d.join("test_file.1").exists(),
        "its own file still goes: {out}"
    );
}

// ---------------------------------------------------------------------------------------
// 2. Outputs never overwrite the store, a database, a device or a directory

/// `hostbench <args>` with the results store at `db`, in `dir`.
fn run_store(dir: &Path, db: &Path, args: &[&str]) -> (i32, String, String) {
    let out = hb_with_store(db)
        .current_dir(dir)
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(!e.contains("panicked"), "{args:?} panicked: {e}");
    (out.status.code().unwrap_or(-1), o, e)
}

/// A store holding one run, in a fresh directory.
fn store_with_a_run() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let (code, _, err) = run_store(
        d.path(),
        &db,
        &["run", "null", "--time", "0.05s", "--label", "keep"],
    );
    assert_eq!(code, 0, "{err}");
    (d, db)
}

fn runs_in(dir: &Path, db: &Path) -> usize {
    let (code, out, err) = run_store(dir, db, &["results", "list", "--format", "json"]);
    assert_eq!(code, 0, "the store is still readable: {err}");
    serde_json::from_str::<Vec<serde_json::Value>>(&out)
        .unwrap()
        .len()
}

#[test]
fn outputs_refuse_the_results_store_also_through_links() {
    let (d, db) = store_with_a_run();
    let link = d.path().join("link.json");
    std::os::unix::fs::symlink(&db, &link).unwrap();
    let hard = d.path().join("hard.json");
    std::fs::hard_link(&db, &hard).unwrap();
    for target in [&db, &link, &hard] {
        let t = target.to_str().unwrap();
        let fio_out = format!("--output={t}");
        for args in [
            vec!["results", "export", "-o", t],
            vec!["report", "keep", "-o", t],
            vec![
                "fio",
                "--name=n",
                "--ioengine=null",
                "--size=1m",
                fio_out.as_str(),
            ],
        ] {
            let (code, out, err) = run_store(d.path(), &db, &args);
            assert_eq!(code, 2, "{args:?} must refuse:\n{out}\n{err}");
            // A symbolic link is refused as a link, before anything else.
            let why = if *target == link {
                "symbolic link"
            } else {
                "results store"
            };
            assert!(err.contains(why), "{args:?}: {err}");
            assert_eq!(runs_in(d.path(), &db), 1, "{args:?} damaged the store");
        }
    }
}

#[test]
fn outputs_refuse_databases_devices_and_directories() {
    let (d, db) = store_with_a_run();
    // Another SQLite database (not the active store).
    let other = d.path().join("other.sqlite");
    std::fs::copy(&db, &other).unwrap();
    let before = std::fs::read(&other).unwrap();
    let (code, _, err) = run_store(
        d.path(),
        &db,
        &["results", "export", "-o", other.to_str().unwrap()],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("SQLite database"), "{err}");
    assert_eq!(std::fs::read(&other).unwrap(), before);
    // A directory, and a device.
    for (t, want) in [
        (d.path().to_str().unwrap(), "directory"),
        ("/dev/null", "device"),
    ] {
        let (code, _, err) = run_store(d.path(), &db, &["results", "export", "-o", t]);
        assert_eq!(code, 2, "{t}: {err}");
        assert!(err.contains(want), "{t}: {err}");
    }
}

/// An output name that is a symbolic link is refused, whatever it leads to: a link planted
/// at `report.html` replaced the file it pointed at (`report -o`, `trend -o`, `results
/// export -o` followed it).
#[test]
fn outputs_never_write_through_a_symlink() {
    let (d, db) = store_with_a_run();
    let (work, _elsewhere, victim) = planted("out.html");
    let link = work.path().join("out.html");
    let label_or_id = {
        let (code, out, err) = run_store(d.path(), &db, &["results", "list", "-f", "json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v[0]["id"].as_str().unwrap().to_string()
    };
    for args in [
        vec!["results", "export", "-o", link.to_str().unwrap()],
        vec!["report", &label_or_id, "-o", link.to_str().unwrap()],
    ] {
        let (code, _, err) = run_store(d.path(), &db, &args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("is a symbolic link"), "{args:?}: {err}");
        assert_untouched(&victim);
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    }
}

#[test]
fn outputs_are_renamed_into_place_and_leave_no_temporary_files() {
    let (d, db) = store_with_a_run();
    let out_dir = d.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let target = out_dir.join("export.json");
    std::fs::write(&target, b"old").unwrap();
    // Over an existing file: replaced whole (never through a symlink: see
    // outputs_never_write_through_a_symlink).
    let (code, _, err) = run_store(
        d.path(),
        &db,
        &["results", "export", "-o", target.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
    assert!(doc.is_object() || doc.is_array(), "{doc}");
    let left: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec!["export.json".to_string()],
        "temporary files left"
    );
}

// ---------------------------------------------------------------------------------------
// 6. Disk full

#[test]
fn a_full_disk_during_prepare_is_named_and_leaves_no_part_file() {
    let mut ld = or_skip!(LoopDev::new(1024), "disk full");
    let mnt = or_skip!(ld.mount_ext4(&["-m", "0"]), "disk full");
    let d = mnt.join("bench");
    std::fs::create_dir(&d).unwrap();
    // One big file, written in small blocks: slow enough to be caught in the middle.
    let child = hb_std()
        .current_dir(&d)
        .args([
            "fileio",
            "--file-num=1",
            "--file-total-size=700M",
            "--file-block-size=4096",
            "prepare",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let part = d.join(".test_file.0.hostbench-part");
    let t0 = std::time::Instant::now();
    while !part.exists() && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let pid = child.id() as i32;
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let caught = part.exists();
    if caught {
        // Someone else fills the disk meanwhile.
        let _ = Sys::new("dd")
            .args([
                "if=/dev/zero",
                &format!("of={}", mnt.join("filler").display()),
                "bs=1M",
            ])
            .stderr(std::process::Stdio::null())
            .status();
        let _ = sh("sync", &[]);
    }
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    if !caught || out.status.success() {
        eprintln!("SKIP disk full: the prepare was not caught while writing");
        return;
    }
    eprintln!("{err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no space left on device"), "{err}");
    assert!(err.contains("test_file.0"), "names the file: {err}");
    assert!(err.contains("needed"), "says what was needed: {err}");
    assert!(!part.exists(), "the part file stayed behind");
    assert!(!d.join("test_file.0").exists());
}

// ---------------------------------------------------------------------------------------
// 5. Names and paths from input

#[test]
fn a_suite_file_cannot_name_paths_outside_its_scratch_directory() {
    let d = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let o = outside.path().to_str().unwrap();
    let cases = [
        format!("workload = \"fileio\"\nparams = {{ dir = \"{o}\" }}\n"),
        "workload = \"fileio\"\nparams = { dir = \"../..\" }\n".to_string(),
        format!("workload = \"smallfiles\"\nparams = {{ dir = \"{o}\" }}\n"),
        "workload = \"iozone\"\nparams = { files = \"ok.tmp,../../escape.tmp\" }\n".to_string(),
        format!(
            "workload = \"disk.fio\"\nparams = {{ jobs = \"--name=a --filename={o}/victim --rw=write --size=1m\" }}\n"
        ),
        "workload = \"disk.fio\"\nparams = { jobs = \"--name=a --directory=../.. --rw=write --size=1m\" }\n"
            .to_string(),
    ];
    for (i, entry) in cases.iter().enumerate() {
        let f = d.path().join(format!("s{i}.toml"));
        std::fs::write(
            &f,
            format!("name = \"shared\"\n[[entry]]\ntime = \"1s\"\n{entry}"),
        )
        .unwrap();
        for extra in [&["--check"][..], &["--no-save", "--quiet"][..]] {
            let mut args = vec!["suite", f.to_str().unwrap()];
            args.extend_from_slice(extra);
            let (code, out, err) = run_in(d.path(), &args);
            assert_eq!(code, 2, "{entry}{extra:?}: must refuse:\n{out}\n{err}");
            assert!(
                err.contains("absolute path") || err.contains("climbs out"),
                "{entry}: {err}"
            );
        }
    }
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "something was written outside"
    );
}

#[test]
fn fio_and_iozone_names_stay_in_their_directory() {
    let base = tempfile::tempdir().unwrap();
    let work = base.path().join("work");
    std::fs::create_dir(&work).unwrap();
    for args in [
        vec!["fio", "--name=../escape", "--rw=write", "--size=1m"],
        vec![
            "fio",
            "--name=j",
            "--filename=../escape",
            "--rw=write",
            "--size=1m",
        ],
        vec![
            "fio",
            "--name=j",
            "--directory=.",
            "--filename=sub/../../escape",
            "--rw=write",
            "--size=1m",
        ],
        vec![
            "iozone",
            "-i",
            "0",
            "-s",
            "64k",
            "-r",
            "4k",
            "-f",
            "../escape",
        ],
    ] {
        let (code, out, err) = run_in(&work, &args);
        assert_eq!(code, 2, "{args:?}: must refuse:\n{out}\n{err}");
        assert!(
            err.contains("climbs out") || err.contains("contains a path"),
            "{args:?}: {err}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(base.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        vec![std::ffi::OsString::from("work")],
        "wrote outside"
    );
    // An absolute path typed on the command line is the user's own choice.
    let target = base.path().join("abs.dat");
    let (code, _, err) = run_in(
        &work,
        &[
            "fio",
            "--name=j",
            &format!("--filename={}", target.display()),
            "--rw=write",
            "--size=1m",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(target.exists());
}

#[test]
fn fio_refuses_to_write_a_member_of_a_device_mapper_device() {
    let ld = or_skip!(LoopDev::new(16), "device-mapper member");
    let sectors = or_skip!(
        sh("blockdev", &["--getsz", &ld.dev]),
        "device-mapper member"
    );
    let name = format!("hostbench-safety-{}", std::process::id());
    let table = format!("0 {sectors} linear {} 0", ld.dev);
    or_skip!(
        sh("dmsetup", &["create", &name, "--table", &table]),
        "device-mapper member (no device-mapper here)"
    );
    let cwd = tempfile::tempdir().unwrap();
    let (code, _, err) = run_in(
        cwd.path(),
        &[
            "fio",
            "--name=wipe",
            &format!("--filename={}", ld.dev),
            "--rw=write",
            "--size=1m",
        ],
    );
    let _ = sh("dmsetup", &["remove", &name]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("member of"), "{err}");
    assert!(err.contains(&name), "names the device-mapper device: {err}");
}

/// A blktrace replay onto a mounted block device (named as the job's file, or as
/// `replay_redirect`) is refused as any writer of it is, before anything is written.
#[test]
fn fio_blktrace_replay_refuses_a_mounted_device() {
    let mut ld = or_skip!(LoopDev::new(64), "blktrace onto a mounted device");
    let mnt = or_skip!(ld.mount_ext4(&[]), "blktrace onto a mounted device");
    std::fs::write(mnt.join("precious.txt"), b"keep me").unwrap();
    let rdev = std::fs::metadata(&ld.dev).unwrap().rdev();
    let (ma, mi) = (libc::major(rdev), libc::minor(rdev));
    // One queued write of 4 KiB at sector 0 of that device (struct blk_io_trace, native
    // byte order).
    let mut rec = Vec::new();
    rec.extend(0x6561_7407u32.to_ne_bytes());
    rec.extend(0u32.to_ne_bytes());
    rec.extend(1u64.to_ne_bytes());
    rec.extend(0u64.to_ne_bytes());
    rec.extend(4096u32.to_ne_bytes());
    rec.extend((1u32 | (16 << 16) | (2 << 16)).to_ne_bytes());
    rec.extend(1u32.to_ne_bytes());
    rec.extend((ma << 20 | mi).to_ne_bytes());
    rec.extend(0u32.to_ne_bytes());
    rec.extend([0u8; 4]);
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("t.bin"), &rec).unwrap();
    for how in [
        format!("--filename={}", ld.dev),
        format!("--replay_redirect={}", ld.dev),
    ] {
        let (code, out, err) = run_in(
            cwd.path(),
            &["fio", "--name=wipe", "--read_iolog=t.bin", &how],
        );
        assert_eq!(code, 2, "{how}: must refuse:\n{out}\n{err}");
        assert!(err.contains(mnt.to_str().unwrap()), "{how}: {err}");
        assert!(err.contains("allow_mounted_write=1"), "{how}: {err}");
    }
    assert_eq!(std::fs::read(mnt.join("precious.txt")).unwrap(), b"keep me");
}
