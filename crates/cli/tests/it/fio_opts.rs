//! fio 3.33 options hostbench once refused — `atomic`, `bs_is_seq_rand`,
//! `serialize_overlap`, `opendir`, `--warnings-fatal`, `--enghelp` — side by side with the
//! installed fio: the same job through both, compared on counts, sizes, system calls and
//! messages.

use super::fio::tmp;
use super::fio_engines::{have_strace, strace_f};
use super::fio_files::{counts, doc, fio, hb};
use super::fio_seq::need_fio;
use crate::common;

/// The flags of each `openat` of `name` in an strace log, as strace prints them, without
/// the ones only one of the programs adds (O_CLOEXEC, O_NOFOLLOW, O_LARGEFILE; fio's job
/// open has O_CREAT where hostbench laid the file out before).
fn open_flags(log: &str, name: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.contains("openat("))
        .filter_map(|l| {
            let after = l
                .split_once(&format!("/{name}\", "))
                .or_else(|| l.split_once(&format!("\"{name}\", ")))?
                .1;
            let flags = after.split([',', ')']).next()?;
            let mut f: Vec<&str> = flags
                .split('|')
                .filter(|f| !matches!(*f, "O_CLOEXEC" | "O_NOFOLLOW" | "O_LARGEFILE" | "O_CREAT"))
                .collect();
            f.sort();
            Some(f.join("|"))
        })
        .collect()
}

/// `atomic=1`: fio 3.33 on Linux opens the job's file with O_DIRECT and its own O_ATOMIC
/// value (0x800000), for reads and writes, even with `buffered=1`; the I/O is the same.
#[test]
fn atomic_opens_with_fios_flag_and_o_direct() {
    let t = "atomic_opens_with_fios_flag_and_o_direct";
    if !need_fio(t) || !have_strace(t) {
        return;
    }
    let dir = tmp("atomic");
    for rw in ["write", "read", "randwrite"] {
        let args = [
            "--name=a",
            "--filename=at.dat",
            "--size=64k",
            &format!("--rw={rw}"),
            "--atomic=1",
            "--buffered=1",
            "--output-format=json",
        ];
        let (fo, flog) = strace_f(&dir, "fio", &args, "openat", &[]);
        let (ho, hlog) = strace_f(
            &dir,
            common::bin(),
            &[&["fio"][..], &args, &["--no-save"]].concat(),
            "openat",
            &[],
        );
        assert!(fo.status.success() && ho.status.success(), "{rw}: {ho:?}");
        let (ff, hf) = (open_flags(&flog, "at.dat"), open_flags(&hlog, "at.dat"));
        // The job's own open is the last one (the layout's comes first).
        let (fl, hl) = (ff.last().unwrap(), hf.last().unwrap());
        assert!(
            fl.contains("O_DIRECT") && fl.contains("0x800000"),
            "fio {rw}: {ff:?}"
        );
        assert_eq!(fl, hl, "{rw}: fio's opens {ff:?}, hostbench's {hf:?}");
        let (fd, hd) = (
            doc(&String::from_utf8_lossy(&fo.stdout)),
            doc(&String::from_utf8_lossy(&ho.stdout)),
        );
        for d in ["read", "write"] {
            assert_eq!(
                fd["jobs"][0][d]["io_bytes"], hd["jobs"][0][d]["io_bytes"],
                "{rw} {d}"
            );
        }
        assert_eq!(
            fd["jobs"][0]["job options"], hd["jobs"][0]["job options"],
            "{rw}"
        );
    }
}

/// (reads, read bytes, writes, written bytes) of each job of a JSON report.
fn io(out: &str) -> Vec<[u64; 4]> {
    doc(out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let n = |d: &str, k: &str| j[d][k].as_u64().unwrap();
            [
                n("read", "total_ios"),
                n("read", "io_bytes"),
                n("write", "total_ios"),
                n("write", "io_bytes"),
            ]
        })
        .collect()
}

/// `bs_is_seq_rand=1`: an I/O placed sequentially takes the read size, one placed at
/// random the write size, whatever its direction (fio's `get_next_buflen`), while offsets,
/// alignment and the random map stay the direction's (a 16k random read at 4k alignment is
/// cut short by the map where blocks are taken: fio's 4k, 8k and 12k reads). Each case's
/// counts and bytes per direction, and the start-up line, are fio's.
#[test]
fn bs_is_seq_rand_sizes_by_placement_as_fio() {
    let t = "bs_is_seq_rand_sizes_by_placement_as_fio";
    if !need_fio(t) {
        return;
    }
    let cases: &[&[&str]] = &[
        &["--rw=read", "--bs=4k,16k"],
        &["--rw=write", "--bs=4k,16k"],
        &["--rw=randread", "--bs=4k,16k"],
        &["--rw=randwrite", "--bs=4k,16k"],
        &["--rw=rw", "--bs=16k,4k"],
        &["--rw=randrw", "--bs=4k,16k"],
        &["--rw=randrw", "--bs=4k,16k", "--percentage_random=50"],
        &["--rw=randread", "--bs=4k,16k", "--percentage_random=30"],
        &["--rw=randread:4", "--bs=4k,16k"],
        &["--rw=randwrite", "--bs=16k,4k", "--norandommap"],
        &[
            "--rw=randread",
            "--bssplit=4k/50:8k/50,16k",
            "--percentage_random=50",
        ],
    ];
    for case in cases {
        let d = tmp("seqrand");
        let mut args = vec![
            "--name=a",
            "--filename=sr.dat",
            "--size=1m",
            "--bs_is_seq_rand=1",
            "--output-format=json",
        ];
        args.extend_from_slice(case);
        let ours = hb(&d, &args);
        assert_eq!(ours.code, 0, "{case:?}: {}", ours.err);
        std::fs::remove_file(d.join("sr.dat")).unwrap();
        let theirs = fio(&d, &args);
        assert_eq!(theirs.code, 0, "{case:?}: {}", theirs.err);
        assert_eq!(io(&ours.out), io(&theirs.out), "{case:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }
    // The start-up line names the option in place of the trims' sizes.
    let d = tmp("seqrand-line");
    let args = [
        "--name=a",
        "--filename=sr.dat",
        "--size=64k",
        "--rw=randread",
        "--bs=4k,16k",
        "--bs_is_seq_rand=1",
    ];
    let (ours, theirs) = (hb(&d, &args), fio(&d, &args));
    let first = |s: &str| s.lines().next().unwrap_or("").to_string();
    assert_eq!(first(&ours.out), first(&theirs.out));
    assert!(
        first(&ours.out).contains(", bs_is_seq_rand, "),
        "{}",
        ours.out
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// hostbench's `fio ARGS`: (stdout, stderr, status), run in `dir`.
fn hb_plain(dir: &std::path::Path, args: &[&str]) -> (String, String, i32) {
    let o = common::hb()
        .current_dir(dir)
        .arg("fio")
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
        o.status.code().unwrap_or(-1),
    )
}

/// `--enghelp[=ENGINE[,OPTION]]` in fio 3.33's layout and exit statuses: the engines
/// hostbench has are fio's, listed in fio's order; an engine's options are fio's names
/// (those hostbench takes) in fio's order, 24 wide; one option's description starts with
/// its name right-aligned at 20; an engine with no options, one not there and an option
/// not there exit 1 as fio.
#[test]
fn enghelp_lists_engines_and_options_as_fio() {
    let t = "enghelp_lists_engines_and_options_as_fio";
    if !need_fio(t) {
        return;
    }
    let d = tmp("enghelp");
    let run = |a: &str| (hb_plain(&d, &[a]), fio(&d, &[a]));
    // The list: a subset of fio's, in its order.
    let ((ours, _, oc), theirs) = run("--enghelp");
    assert_eq!((oc, theirs.code), (0, 0));
    assert_eq!(ours.lines().next(), theirs.out.lines().next());
    let fio_names: Vec<&str> = theirs.out.lines().skip(1).collect();
    let pos: Vec<usize> = ours
        .lines()
        .skip(1)
        .map(|l| {
            fio_names
                .iter()
                .position(|f| *f == l)
                .unwrap_or_else(|| panic!("{l:?} is not in fio's list: {fio_names:?}"))
        })
        .collect();
    assert!(
        pos.windows(2).all(|w| w[0] < w[1]),
        "not fio's order: {ours}"
    );
    assert!(pos.len() > 15, "{ours}");
    // An engine's options: fio's names in fio's order, the same column.
    for e in ["libaio", "io_uring", "pvsync2", "cpuio", "net", "exec"] {
        let ((ours, _, oc), theirs) = run(&format!("--enghelp={e}"));
        assert_eq!((oc, theirs.code), (0, 0), "{e}");
        let names = |s: &str| -> Vec<String> {
            s.lines()
                .map(|l| {
                    assert_eq!(l.find(": "), Some(24), "{e}: {l:?}");
                    l[..24].trim().to_string()
                })
                .collect()
        };
        let (o, f) = (names(&ours), names(&theirs.out));
        let pos: Vec<usize> = o
            .iter()
            .map(|n| {
                f.iter()
                    .position(|x| x == n)
                    .unwrap_or_else(|| panic!("{e}: {n}"))
            })
            .collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "{e}: {o:?} vs {f:?}");
    }
    // One option: its name at 20, then its kind and default.
    for a in ["libaio,userspace_reap", "cpuio,cpumode", "io_uring,hipri"] {
        let ((ours, _, oc), theirs) = run(&format!("--enghelp={a}"));
        assert_eq!((oc, theirs.code), (0, 0), "{a}");
        let lead = |s: &str| -> Vec<String> {
            s.lines()
                .map(|l| l.split(':').next().unwrap().to_string())
                .collect()
        };
        let (o, f) = (lead(&ours), lead(&theirs.out));
        assert_eq!(o[..3], f[..3], "{a}");
        assert_eq!(o.len(), f.len(), "{a}:\n{ours}\n{}", theirs.out);
    }
    // What is not there: fio's lines and statuses.
    for a in ["psync", "nosuch", "libaio,nosuch"] {
        let ((ours, _, oc), theirs) = run(&format!("--enghelp={a}"));
        assert_eq!(
            (ours.as_str(), oc),
            (theirs.out.as_str(), theirs.code),
            "{a}"
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// A tree for `opendir`: regular files at two levels and an empty directory, with a
/// symbolic link to a file outside the tree and a FIFO, which fio 3.33's `recurse_dir`
/// skips (lstat: neither a file nor a directory). Returns the outside file.
fn opendir_tree(d: &std::path::Path) -> std::path::PathBuf {
    let t = d.join("tree");
    std::fs::create_dir_all(t.join("sub/deeper")).unwrap();
    std::fs::create_dir_all(t.join("empty")).unwrap();
    let fill = |p: &std::path::Path, n: usize| {
        std::fs::write(p, (0..n).map(|i| (i * 7 % 251) as u8).collect::<Vec<u8>>()).unwrap()
    };
    fill(&t.join("a"), 64 << 10);
    fill(&t.join("sub/b"), 128 << 10);
    fill(&t.join("sub/deeper/c"), 32 << 10);
    fill(&t.join("d"), 16 << 10);
    let outside = d.join("outside");
    fill(&outside, 256 << 10);
    std::os::unix::fs::symlink(&outside, t.join("link")).unwrap();
    let fifo = std::ffi::CString::new(t.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    outside
}

/// `opendir=DIR`: the job's files are DIR's regular files, found as fio's `recurse_dir`
/// finds them (directory order, subdirectories where they are met, links and FIFOs
/// skipped), each read or written whole without `size`: fio's line `fio: opendir added N
/// files`, the files opened in fio's order (strace), the same counts and bytes, and the
/// file behind the link untouched.
#[test]
fn opendir_takes_fios_files_in_fios_order() {
    let t = "opendir_takes_fios_files_in_fios_order";
    if !need_fio(t) || !have_strace(t) {
        return;
    }
    let d = tmp("opendir");
    let outside = opendir_tree(&d);
    let before = std::fs::read(&outside).unwrap();
    let opened = |log: &str| -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for l in log
            .lines()
            .filter(|l| l.contains("openat(") && !l.contains("O_DIRECTORY"))
        {
            if let Some(p) = l.split('"').nth(1).filter(|p| p.starts_with("tree/"))
                && !v.iter().any(|x| x == p)
            {
                v.push(p.to_string());
            }
        }
        v
    };
    for case in [
        &["--rw=read"][..],
        &["--rw=randread", "--numjobs=2", "--group_reporting"],
        &["--rw=write"],
        &[
            "--rw=randrw",
            "--size=48k",
            "--file_service_type=sequential",
        ],
    ] {
        let mut args = vec!["--name=od", "--opendir=tree", "--output-format=json"];
        args.extend_from_slice(case);
        let (fo, flog) = strace_f(&d, "fio", &args, "openat", &[]);
        let (ho, hlog) = strace_f(
            &d,
            common::bin(),
            &[&["fio"][..], &args, &["--no-save"]].concat(),
            "openat",
            &[],
        );
        let (fout, hout) = (
            String::from_utf8_lossy(&fo.stdout).to_string(),
            String::from_utf8_lossy(&ho.stdout).to_string(),
        );
        assert!(fo.status.success(), "{case:?}: {fo:?}");
        assert!(ho.status.success(), "{case:?}: {ho:?}");
        // fio prints its line before the JSON; hostbench on stderr then (stdout is JSON).
        assert_eq!(fout.lines().next(), Some("fio: opendir added 4 files"));
        assert!(
            String::from_utf8_lossy(&ho.stderr).contains("fio: opendir added 4 files"),
            "{case:?}: {ho:?}"
        );
        assert_eq!(io(&hout), io(&fout), "{case:?}");
        assert_eq!(opened(&hlog), opened(&flog), "{case:?}");
        assert_eq!(opened(&hlog).len(), 4, "{case:?}: {hlog}");
    }
    assert_eq!(std::fs::read(&outside).unwrap(), before);
    std::fs::remove_dir_all(&d).unwrap();
}

/// `opendir` with `nrfiles` and `filename`, in job files and on the command line: fio
/// counts the job's files in the order it parses the options (the first list to add
/// files resets its count, every file added raises it, `nrfiles` sets it; a job file's
/// `filename` is parsed last, the command line in its order) and the job uses the first
/// that many of the files added; its `opendir added N` line prints the count then. The
/// same lines, files opened, bytes and the files written as fio.
#[test]
fn opendir_with_nrfiles_and_filename_counts_as_fio() {
    let t = "opendir_with_nrfiles_and_filename_counts_as_fio";
    let d = tmp("opendir-nr");
    opendir_tree(&d);
    std::fs::write(d.join("extra"), vec![7u8; 16 << 10]).unwrap();
    let lines = |out: &str, err: &str| -> Vec<String> {
        out.lines()
            .chain(err.lines())
            .filter(|l| l.starts_with("fio: opendir"))
            .map(str::to_string)
            .collect()
    };
    let cases: Vec<Vec<&str>> = vec![
        vec!["--opendir=tree", "--nrfiles=2"],
        vec!["--nrfiles=2", "--opendir=tree"],
        vec!["--opendir=tree", "--nrfiles=9"],
        vec!["--filename=extra", "--opendir=tree"],
        vec!["--filename=extra", "--nrfiles=1", "--opendir=tree"],
        vec!["--opendir=tree", "--filename=extra", "--nrfiles=3"],
        vec!["--opendir=tree", "--nrfiles=1", "--rw=write", "--size=8k"],
    ];
    let mut ours = Vec::new();
    for case in &cases {
        let mut a = vec!["--name=nr", "--bs=4k", "--output-format=json"];
        if !case.iter().any(|x| x.starts_with("--rw")) {
            a.push("--rw=read");
        }
        a.extend_from_slice(case);
        let (out, err, code) = hb_plain(&d, &[&a[..], &["--no-save"]].concat());
        assert_eq!(code, 0, "{case:?}: {err}");
        ours.push((lines(&out, &err), io(&out)));
        if need_fio(t) {
            let f = std::process::Command::new("fio")
                .args(&a)
                .current_dir(&d)
                .output()
                .unwrap();
            let (fout, ferr) = (
                String::from_utf8_lossy(&f.stdout).to_string(),
                String::from_utf8_lossy(&f.stderr).to_string(),
            );
            assert!(f.status.success(), "{case:?}: {ferr}");
            assert_eq!(
                ours.last().unwrap(),
                &(lines(&fout, &ferr), io(&fout)),
                "{case:?}"
            );
        }
    }
    // Without fio: the counts fio gave (`tree` holds 4 files).
    assert_eq!(ours[0].0, ["fio: opendir added 4 files"]);
    assert_eq!(
        ours[3].0,
        ["fio: opendir added 5 files"],
        "the file named first counts"
    );
    // A job file parses `filename` last, whatever its place.
    std::fs::write(
        d.join("nr.fio"),
        "[nr]\nrw=read\nbs=4k\nfilename=extra\nopendir=tree\nnrfiles=2\n",
    )
    .unwrap();
    let (out, err, code) = hb_plain(&d, &["nr.fio", "--output-format=json", "--no-save"]);
    assert_eq!(code, 0, "{err}");
    if need_fio(t) {
        let f = std::process::Command::new("fio")
            .args(["nr.fio", "--output-format=json"])
            .current_dir(&d)
            .output()
            .unwrap();
        let fout = String::from_utf8_lossy(&f.stdout).to_string();
        assert_eq!(io(&out), io(&fout));
        assert_eq!(lines(&out, &err), lines(&fout, ""));
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// What `opendir` cannot be: a directory that is not there or holds no file — each
/// refused with its reason, exit 2; a reading job whose share of `size` is more than a file found there
/// has is refused too (fio truncates and rewrites that file), and the file is left as it
/// was.
#[test]
fn opendir_refusals_say_why_and_touch_nothing() {
    let d = tmp("opendir-bad");
    opendir_tree(&d);
    let c = d.join("tree/sub/deeper/c");
    let before = std::fs::read(&c).unwrap();
    for (args, says) in [
        (&["--opendir=nothere", "--rw=read"][..], "opendir(nothere)"),
        (
            &["--opendir=tree/empty", "--rw=read"],
            "holds no regular file",
        ),
        (
            &["--opendir=tree", "--size=256k", "--rw=read"],
            "does not write to a file",
        ),
    ] {
        let mut a = vec!["--name=bad"];
        a.extend_from_slice(args);
        let (out, err, code) = hb_plain(&d, &[&a[..], &["--no-save"]].concat());
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert_eq!(std::fs::read(&c).unwrap(), before);
    std::fs::remove_dir_all(&d).unwrap();
}

/// The `fio: ...` lines of a run, stdout and stderr together (fio prints some warnings on
/// stdout, hostbench all on stderr), sorted.
fn fio_lines(out: &str, err: &str) -> Vec<String> {
    let mut v: Vec<String> = out
        .lines()
        .chain(err.lines())
        .filter(|l| l.starts_with("fio: ") && !l.starts_with("fio: note"))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// `--warnings-fatal`: fio 3.33's fix-up warnings (`fixup_options`: blockalign turning the
/// random map off, norandommap with variable sizes and verify, verify's two, a replay
/// dropping write_iolog) end the run with exit 1 and nothing run, each with fio's words;
/// without the option they are printed as often as fio prints them and the job runs; a
/// job without any runs as usual.
#[test]
fn warnings_fatal_makes_fios_fixup_warnings_fatal() {
    let t = "warnings_fatal_makes_fios_fixup_warnings_fatal";
    if !need_fio(t) {
        return;
    }
    let d = tmp("wfatal");
    std::fs::write(
        d.join("r.log"),
        "fio version 2 iolog\nwf.dat add\nwf.dat open\nwf.dat read 0 4096\nwf.dat close\n",
    )
    .unwrap();
    let cases: &[&[&str]] = &[
        &["--rw=randread", "--ba=2k"],
        &[
            "--rw=randwrite",
            "--bsrange=4k-8k",
            "--norandommap",
            "--verify=crc32c",
            "--numjobs=2",
        ],
        &["--rw=write", "--verify=crc32c", "--numjobs=2"],
        &["--rw=write", "--verify=md5", "--time_based", "--runtime=1"],
        &["--read_iolog=r.log", "--write_iolog=w.log"],
        &["--rw=randread", "--time_based"],
    ];
    for case in cases {
        let mut args = vec!["--name=a", "--size=64k", "--filename=wf.dat"];
        args.extend_from_slice(case);
        let fatal = [&["--warnings-fatal"][..], &args].concat();
        let _ = std::fs::remove_file(d.join("wf.dat"));
        let (ho, he, hc) = hb_plain(&d, &[&fatal[..], &["--no-save"]].concat());
        assert!(
            !d.join("wf.dat").exists(),
            "{case:?}: hostbench ran the job"
        );
        let theirs = fio(&d, &fatal);
        assert_eq!((hc, theirs.code), (1, 1), "{case:?}: {he}");
        assert_eq!(
            fio_lines(&ho, &he),
            fio_lines(&theirs.out, &theirs.err),
            "{case:?}"
        );
        assert!(!fio_lines(&ho, &he).is_empty(), "{case:?}");
        // Without it: the same lines, as many times, and the job runs. (A replay's line is
        // printed by each program once more at its start: compared with --warnings-fatal
        // above only.)
        if case.iter().any(|a| a.starts_with("--read_iolog")) {
            continue;
        }
        let _ = std::fs::remove_file(d.join("wf.dat"));
        let json = [&args[..], &["--output-format=json"]].concat();
        let (ho, he, hc) = hb_plain(&d, &[&json[..], &["--no-save"]].concat());
        let _ = std::fs::remove_file(d.join("wf.dat"));
        let theirs = fio(&d, &json);
        assert_eq!((hc, theirs.code), (0, 0), "{case:?}: {he}");
        let strip = |s: &str| s[..s.find('{').unwrap_or(s.len())].to_string();
        assert_eq!(
            fio_lines(&strip(&ho), &he),
            fio_lines(&strip(&theirs.out), &theirs.err),
            "{case:?}"
        );
    }
    // No warning: the run goes on.
    let args = [
        "--warnings-fatal",
        "--name=a",
        "--size=64k",
        "--filename=wf.dat",
        "--output-format=json",
    ];
    let (ho, he, hc) = hb_plain(&d, &[&args[..], &["--no-save"]].concat());
    assert_eq!(hc, 0, "{he}");
    assert_eq!(io(&ho), io(&fio(&d, &args).out));
    std::fs::remove_dir_all(&d).unwrap();
}

/// From an strace log of libaio calls: the offsets submitted, in order, and how many
/// submissions overlapped an I/O still in flight (matched to their completions by
/// `aio_data`, which hostbench sets to the I/O's slot).
fn aio_overlaps(log: &str) -> (Vec<u64>, usize) {
    let field = |s: &str, k: &str| -> Option<u64> {
        let v = s.split(k).nth(1)?.split([',', '}']).next()?;
        match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => v.parse().ok(),
        }
    };
    let mut flight: std::collections::HashMap<u64, (u64, u64)> = Default::default();
    let (mut offs, mut overlaps) = (Vec::new(), 0);
    for l in log.lines() {
        if l.contains("io_submit(") {
            for iocb in l.split("{aio_data=").skip(1) {
                let data = field(&format!("={iocb}"), "=").unwrap();
                let off = field(iocb, "aio_offset=").unwrap();
                let len = field(iocb, "aio_nbytes=").unwrap();
                if flight.values().any(|&(o, n)| off < o + n && o < off + len) {
                    overlaps += 1;
                }
                flight.insert(data, (off, len));
                offs.push(off);
            }
        } else if l.contains("io_getevents(") {
            for ev in l.split("{data=").skip(1) {
                let data = field(&format!("={ev}"), "=").unwrap();
                flight.remove(&data);
            }
        }
    }
    (offs, overlaps)
}

/// `serialize_overlap=1` at a depth above 1: an I/O that overlaps one queued or in flight
/// waits until that one completes (fio's `in_flight_overlap` and busy queue). Random
/// writes without the random map over a small file at depth 8 overlap often: without the
/// option hostbench has overlapping writes in flight (strace: a submission over a range
/// not yet completed), with it none, and its writes are submitted in fio's order with
/// fio's counts (libaio, direct); io_uring's counts are fio's too. A job that only reads,
/// or runs at depth 1, drops the option as fio does.
#[test]
fn serialize_overlap_keeps_overlapping_ios_apart_as_fio() {
    let t = "serialize_overlap_keeps_overlapping_ios_apart_as_fio";
    if !need_fio(t) || !have_strace(t) {
        return;
    }
    let d = tmp("serialize");
    let base = [
        "--name=so",
        "--filename=so.dat",
        "--size=64k",
        "--io_size=1m",
        "--rw=randwrite",
        "--norandommap",
        "--direct=1",
        "--iodepth=8",
        "--output-format=json",
    ];
    let run = |prog: &str, extra: &[&str]| {
        let args = [&base[..], extra].concat();
        let (o, log) = if prog == "fio" {
            strace_f(&d, "fio", &args, "io_submit,io_getevents", &[])
        } else {
            strace_f(
                &d,
                common::bin(),
                &[&["fio"][..], &args, &["--no-save"]].concat(),
                "io_submit,io_getevents",
                &[],
            )
        };
        assert!(o.status.success(), "{prog} {extra:?}: {o:?}");
        (io(&String::from_utf8_lossy(&o.stdout)), log)
    };
    let (_, plain) = run("hb", &["--ioengine=libaio"]);
    let (offs_plain, n) = aio_overlaps(&plain);
    assert!(
        n > 0,
        "the job makes no overlap in flight: the test shows nothing"
    );
    let (ours, log) = run("hb", &["--ioengine=libaio", "--serialize_overlap=1"]);
    let (offs, n) = aio_overlaps(&log);
    assert_eq!(n, 0, "overlapping writes in flight with serialize_overlap");
    let (theirs, flog) = run("fio", &["--ioengine=libaio", "--serialize_overlap=1"]);
    assert_eq!(ours, theirs);
    let (foffs, _) = aio_overlaps(&flog);
    assert_eq!(offs, foffs, "the writes' order is fio's");
    assert_eq!(offs, offs_plain, "held writes keep their place");
    let (ours, _) = run("hb", &["--ioengine=io_uring", "--serialize_overlap=1"]);
    let (theirs, _) = run("fio", &["--ioengine=io_uring", "--serialize_overlap=1"]);
    assert_eq!(ours, theirs);
    std::fs::remove_dir_all(&d).unwrap();
}

/// `time_based` without `runtime`: fio 3.33's `fixup_options` turns it off with `fio:
/// time_based requires a runtime/timeout setting` and the job runs by size (exit 0; fio's
/// `examples/e4defrag2.fio` has such a job). hostbench refused it (exit 2) before.
#[test]
fn time_based_without_a_runtime_runs_by_size_as_fio() {
    let d = tmp("tb-noruntime");
    let args = [
        "--name=tb",
        "--size=1m",
        "--rw=randread",
        "--time_based",
        "--output-format=json",
    ];
    let (ho, he, hc) = hb_plain(&d, &[&args[..], &["--no-save"]].concat());
    assert_eq!(hc, 0, "{he}");
    assert_eq!(
        he.matches("fio: time_based requires a runtime/timeout setting")
            .count(),
        1,
        "{he}"
    );
    assert_eq!(counts(&ho), [(256, 0)], "{ho}");
    if need_fio("time_based_without_a_runtime_runs_by_size_as_fio") {
        std::fs::remove_file(d.join("tb.0.0")).unwrap();
        let theirs = fio(&d, &args);
        assert_eq!(theirs.code, 0, "{}", theirs.err);
        assert_eq!(counts(&theirs.out), counts(&ho));
        assert!(
            theirs
                .err
                .contains("fio: time_based requires a runtime/timeout setting"),
            "{}",
            theirs.err
        );
    }
    std::fs::remove_dir_all(d).unwrap();
}
