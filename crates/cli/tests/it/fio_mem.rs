//! fio 3.33's buffer memory (`mem`/`iomem` with `malloc`, `shm`, `shmhuge`, `mmap`,
//! `mmaphuge`, `mmapshared`, `mmap:FILE`; `mem_align`, `hugepage-size`), `lockmem` and
//! `iodepth_low` and `sync_file_range`, side by side with the installed fio through strace: the segment or
//! mapping asked for (its call, flags and size), the buffers' addresses in each pread, the
//! memory locked, and the submit/reap pattern of a libaio queue.

use super::fio::tmp;
use super::fio_engines::{have_strace, strace_ff};
use super::fio_files::{doc, fio, hb};
use super::fio_seq::need_fio;
use crate::common;
use std::path::Path;

/// Every traced line of `program args` in `dir` (all threads), calls `calls`.
fn lines(dir: &Path, program: &str, args: &[&str], calls: &str) -> Vec<String> {
    let (o, texts) = strace_ff(dir, program, args, calls);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(o.status.success(), "{program} {args:?}: {err}");
    texts
        .iter()
        .flat_map(|t| t.lines().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// Both tools' traced lines for `args` (the job's file `f` removed before each).
fn both(d: &Path, args: &[&str], calls: &str) -> (Vec<String>, Vec<String>) {
    let hbp = common::bin();
    let mut ours = vec!["fio"];
    ours.extend_from_slice(args);
    ours.push("--no-save");
    let _ = std::fs::remove_file(d.join("f"));
    let h = lines(d, hbp.to_str().unwrap(), &ours, calls);
    let _ = std::fs::remove_file(d.join("f"));
    let p = lines(d, "fio", args, calls);
    (h, p)
}

/// The second argument of each `call(` line (a size or an address), with the line.
fn arg(ls: &[String], call: &str, n: usize) -> Vec<String> {
    ls.iter()
        .filter(|l| l.starts_with(&format!("{call}(")))
        .filter_map(|l| {
            let inner = l[call.len() + 1..].rsplit_once(')')?.0;
            inner.split(", ").nth(n).map(str::to_string)
        })
        .collect()
}

const JOB: [&str; 6] = [
    "--name=n",
    "--filename=f",
    "--size=64k",
    "--bs=4k",
    "--iodepth=4",
    "--ioengine=libaio",
];

#[test]
fn buffers_are_allocated_as_fio_allocates_them() {
    if !need_fio("buffers_are_allocated_as_fio_allocates_them") {
        return;
    }
    if !have_strace("buffers_are_allocated_as_fio_allocates_them") {
        return;
    }
    let d = tmp("memkinds");
    // shm: one System V segment of fio's size for the buffers (fio makes another, larger
    // one for its own thread area): iodepth × bs, plus a page and the alignment twice
    // over with mem_align (fio's margins in init_io_u_buffers and allocate_io_mem).
    for extra in [
        &["--mem=shm"][..],
        &["--iomem=shm", "--mem_align=512"],
        &["--mem=shm", "--direct=1"],
    ] {
        let mut a = JOB.to_vec();
        a.extend_from_slice(extra);
        let (h, p) = both(&d, &a, "shmget");
        let hs = arg(&h, "shmget", 1);
        let ps = arg(&p, "shmget", 1);
        assert_eq!(hs.len(), 1, "{extra:?}: {h:?}");
        assert!(
            ps.contains(&hs[0]),
            "{extra:?}: hostbench {hs:?}, fio {ps:?}"
        );
        assert!(h.iter().any(|l| l.contains("IPC_CREAT|0600")), "{h:?}");
    }
    // mmap and mmapshared: an anonymous private mapping of fio's size (fio 3.33 shares
    // only a file's mapping).
    for (kind, flags) in [
        ("--mem=mmapshared", "MAP_PRIVATE|MAP_ANONYMOUS"),
        ("--mem=mmap", "MAP_PRIVATE|MAP_ANONYMOUS"),
    ] {
        let mut a = JOB.to_vec();
        a.extend_from_slice(&[kind, "--mem_align=1024"]);
        let (h, p) = both(&d, &a, "mmap");
        // 4 × 4096 + 4095 + 1024 + 4095: the buffers' size, unlike any other of either.
        let want = (4 * 4096 + 4095 + 1024 + 4095).to_string();
        for (who, ls) in [("hostbench", &h), ("fio", &p)] {
            let hit = ls
                .iter()
                .filter(|l| l.contains(&format!(", {want}, ")) && l.contains(flags))
                .count();
            let maps: Vec<&String> = ls.iter().filter(|l| l.contains("MAP_ANONYMOUS")).collect();
            assert_eq!(hit, 1, "{who} {kind}: {maps:?}");
        }
    }
    // mmap:FILE: the file opened (created), sized to the buffers, mapped privately, and
    // removed at the end (it was not there before); a file that was there stays.
    let file = d.join("bufs");
    let spec = format!("--mem=mmap:{}", file.display());
    let mut a = JOB.to_vec();
    a.push(&spec);
    let (h, p) = both(&d, &a, "openat,ftruncate,mmap");
    for (who, ls) in [("hostbench", &h), ("fio", &p)] {
        let open = ls
            .iter()
            .find(|l| l.contains(&format!("\"{}\"", file.display())))
            .unwrap_or_else(|| panic!("{who}: no open of the file: {ls:?}"));
        assert!(open.contains("O_RDWR|O_CREAT"), "{who}: {open}");
        let fd = open.rsplit_once(") = ").unwrap().1.trim().to_string();
        let trunc = format!("ftruncate({fd}, {})", 4 * 4096);
        assert!(
            ls.iter().any(|l| l.starts_with(&trunc)),
            "{who}: {trunc} in {ls:?}"
        );
        assert!(
            ls.iter()
                .any(|l| l.contains("MAP_PRIVATE, ") && l.contains(&format!(", {fd}, 0)"))),
            "{who}: the file's private mapping: {ls:?}"
        );
        assert!(!file.exists(), "{who}: the buffer file it created stays");
    }
    std::fs::write(&file, b"mine").unwrap();
    let r = hb(&d, &a);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        file.exists(),
        "a buffer file that was there before is removed"
    );
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn mem_align_places_each_buffer_as_fio() {
    if !need_fio("mem_align_places_each_buffer_as_fio") || !have_strace("mem_align") {
        return;
    }
    let d = tmp("memalign");
    // Each read's buffer (the iocbs' aio_buf): mem_align bytes past a page boundary.
    for align in ["512", "256", "4096"] {
        let al = format!("--mem_align={align}");
        let a = [
            "--name=n",
            "--filename=f",
            "--size=32k",
            "--bs=4k",
            "--rw=read",
            "--ioengine=libaio",
            "--iodepth=2",
            &al,
        ];
        let (h, p) = both(&d, &a, "io_submit");
        let want = align.parse::<u64>().unwrap() % 4096;
        for (who, ls) in [("hostbench", &h), ("fio", &p)] {
            let addrs: Vec<u64> = ls
                .iter()
                .flat_map(|l| l.split("aio_buf=0x").skip(1))
                .filter_map(|t| {
                    let hex: String = t.chars().take_while(char::is_ascii_hexdigit).collect();
                    u64::from_str_radix(&hex, 16).ok()
                })
                .collect();
            assert_eq!(addrs.len(), 8, "{who} {align}: {ls:?}");
            assert!(
                addrs.iter().all(|a| a % 4096 == want),
                "{who} {align}: {addrs:x?}"
            );
        }
    }
}

#[test]
fn lockmem_locks_as_fio_and_a_refused_lock_says_why() {
    if !need_fio("lockmem_locks_as_fio") || !have_strace("lockmem") {
        return;
    }
    let d = tmp("lockmem");
    let mut a = JOB.to_vec();
    a.push("--lockmem=1m");
    let (h, p) = both(&d, &a, "mlock");
    let hs = arg(&h, "mlock", 1);
    assert_eq!(hs, ["1048576"], "{h:?}");
    assert!(arg(&p, "mlock", 1).contains(&hs[0]), "{p:?}");
    // Without CAP_IPC_LOCK, a lock over RLIMIT_MEMLOCK fails: fio prints mlock's error and
    // its job does not run; hostbench says so and names the limit.
    let caps = std::process::Command::new("capsh").arg("--help").output();
    if caps.is_err() {
        eprintln!("skip: capsh is not installed; the refused lock is not checked");
        return;
    }
    let hbp = common::bin();
    let run = |prog: &str, extra: &[&str]| {
        let mut cmd = format!("ulimit -l 1024; exec {prog}");
        for x in extra.iter().chain(a.iter()) {
            cmd.push(' ');
            cmd.push_str(x);
        }
        cmd = cmd.replace("--lockmem=1m", "--lockmem=64m");
        std::process::Command::new("capsh")
            .args(["--drop=cap_ipc_lock", "--", "-c", &cmd])
            .current_dir(&d)
            .env("HOSTBENCH_RESULTS_DB", d.join("r.db"))
            .output()
            .unwrap()
    };
    let ho = run(hbp.to_str().unwrap(), &["fio", "--no-save"]);
    let po = run("fio", &[]);
    let herr = String::from_utf8_lossy(&ho.stderr);
    let perr = String::from_utf8_lossy(&po.stderr);
    assert!(perr.contains("mlock"), "fio: {perr}");
    assert_ne!(ho.status.code(), Some(0), "{herr}");
    assert!(
        herr.contains("mlock") && herr.contains("RLIMIT_MEMLOCK"),
        "{herr}"
    );
}

#[test]
fn huge_pages_and_gpu_memory_are_refused_where_they_cannot_be_had() {
    let d = tmp("memhuge");
    let free = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("HugePages_Free:"))
        .and_then(|l| {
            l.split_whitespace()
                .nth(1)
                .map(|n| n.parse::<u64>().unwrap_or(0))
        })
        .unwrap_or(0);
    if free == 0 {
        // No huge page reserved: fio 3.33's allocation fails (err=12, ENOMEM, exit 1);
        // hostbench's too, before any I/O, saying how to reserve them.
        for kind in ["--mem=shmhuge", "--mem=mmaphuge"] {
            let mut a = JOB.to_vec();
            a.extend_from_slice(&[kind, "--output-format=json"]);
            let h = hb(&d, &a);
            assert_ne!(h.code, 0, "{kind}: {}", h.out);
            assert!(h.err.contains("nr_hugepages"), "{kind}: {}", h.err);
            if std::env::var_os("HOSTBENCH_TEST_FIO").is_some() {
                let p = fio(&d, &a);
                assert_eq!(p.code, 1, "{kind}: {}", p.err);
                assert_eq!(doc(&p.out)["jobs"][0]["error"], 12, "{kind}");
            }
        }
    }
    // A huge page size that cannot be one.
    let mut a = JOB.to_vec();
    a.extend_from_slice(&["--mem=shmhuge", "--hugepage-size=3000"]);
    let h = hb(&d, &a);
    assert_eq!(h.code, 2, "{}", h.err);
    assert!(h.err.contains("hugepage-size=3000"), "{}", h.err);
    // cudamalloc: GPU memory through CUDA, which fio only has when built with it (the
    // installed one is not: "failed parsing"); hostbench says why it cannot.
    let mut a = JOB.to_vec();
    a.push("--mem=cudamalloc");
    let h = hb(&d, &a);
    assert_eq!(h.code, 2, "{}", h.err);
    assert!(
        h.err.contains("CUDA") && h.err.contains("mem=cudamalloc"),
        "{}",
        h.err
    );
}

/// The order of `io_submit` (S) and `io_getevents` (G and the events it returned) calls,
/// up to the last submit (fio reaps what is left at the end its own way).
fn queue_calls(ls: &[String]) -> Vec<String> {
    let mut seq: Vec<String> = ls
        .iter()
        .filter_map(|l| {
            if l.starts_with("io_submit(") {
                Some("S".to_string())
            } else if l.starts_with("io_getevents(") {
                let n = l.rsplit_once(") = ")?.1.split(' ').next()?;
                Some(format!("G{n}"))
            } else {
                None
            }
        })
        .collect();
    let last = seq.iter().rposition(|c| c == "S").map_or(0, |i| i + 1);
    seq.truncate(last);
    seq
}

#[test]
fn iodepth_low_drains_the_queue_as_fio() {
    if !need_fio("iodepth_low_drains_the_queue_as_fio") || !have_strace("iodepth_low") {
        return;
    }
    let d = tmp("depthlow");
    // iodepth=8 with iodepth_low=2: 8 submitted, 6 reaped one by one, 6 submitted...; a
    // low mark of 0 or above iodepth is iodepth (one reaped, one submitted).
    for low in ["2", "5", "0", "12"] {
        let lo = format!("--iodepth_low={low}");
        let a = [
            "--name=n",
            "--filename=f",
            "--rw=read",
            "--ioengine=libaio",
            "--iodepth=8",
            &lo,
            "--size=256k",
            "--bs=4k",
            "--output-format=json",
        ];
        let (h, p) = both(&d, &a, "io_submit,io_getevents");
        let (hq, pq) = (queue_calls(&h), queue_calls(&p));
        assert_eq!(hq.iter().filter(|c| *c == "S").count(), 64, "{low}: {hq:?}");
        assert_eq!(hq, pq, "iodepth_low={low}: the calls");
        // The JSON's depth distribution, as the calls make it (iodepth_complete too: both
        // reap what is in flight at the end in one call).
        let hr = hb(&d, &a);
        let pr = fio(&d, &a);
        for key in ["iodepth_level", "iodepth_submit", "iodepth_complete"] {
            assert_eq!(
                doc(&hr.out)["jobs"][0][key],
                doc(&pr.out)["jobs"][0][key],
                "iodepth_low={low}: {key}"
            );
        }
    }
}

#[test]
fn sync_file_range_syncs_what_was_written_as_fio() {
    if !need_fio("sync_file_range_syncs_what_was_written_as_fio") || !have_strace("sfr") {
        return;
    }
    let d = tmp("sfr");
    let calls = |ls: &[String]| -> Vec<String> {
        ls.iter()
            .filter(|l| l.starts_with("sync_file_range("))
            .map(|l| l.split_once(", ").map_or(l.clone(), |(_, r)| r.to_string()))
            .collect()
    };
    for v in [
        "write",
        "write:4",
        "wait_before,write:4",
        "wait_before,write,wait_after:3",
        "wait_after:5",
    ] {
        for rw in ["write", "randwrite"] {
            let o = format!("--sync_file_range={v}");
            let r = format!("--rw={rw}");
            let a = [
                "--name=n",
                "--filename=f",
                &r,
                &o,
                "--size=64k",
                "--bs=4k",
                "--output-format=json",
            ];
            let (h, p) = both(&d, &a, "sync_file_range");
            let (hc, pc) = (calls(&h), calls(&p));
            assert!(!hc.is_empty(), "{v} {rw}: {h:?}");
            if rw == "write" {
                // Every call's range and flags, in order.
                assert_eq!(hc, pc, "{v} {rw}");
            } else {
                // Random offsets are drawn by each tool's own generator: the count and the
                // flags.
                let flags = |c: &[String]| -> Vec<String> {
                    c.iter()
                        .map(|l| l.split(", ").nth(2).unwrap_or("").to_string())
                        .collect()
                };
                assert_eq!(flags(&hc), flags(&pc), "{v} {rw}");
            }
            // The calls' latencies (fio 3.33 leaves its `total_ios` at 0 for them and
            // counts each as a short write in `issued rwts`, its accounting's slip;
            // hostbench's `total_ios` is the number of calls).
            let (hr, pr) = (hb(&d, &a), fio(&d, &a));
            let (hj, pj) = (doc(&hr.out), doc(&pr.out));
            let n = &pj["jobs"][0]["sync"]["lat_ns"]["N"];
            assert_eq!(
                &hj["jobs"][0]["sync"]["lat_ns"]["N"], n,
                "{v} {rw}: the sync count"
            );
            assert_eq!(&hj["jobs"][0]["sync"]["total_ios"], n, "{v} {rw}");
        }
    }
    // A flag fio does not know is refused as fio refuses it.
    let h = hb(&d, &["--name=n", "--filename=f", "--sync_file_range=bogus"]);
    assert_eq!(h.code, 2, "{}", h.err);
    assert!(h.err.contains("wait_before"), "{}", h.err);
}

#[test]
fn userspace_reap_reads_the_ring_without_io_getevents_as_fio() {
    if !need_fio("userspace_reap_reads_the_ring") || !have_strace("userspace_reap") {
        return;
    }
    let d = tmp("ureap");
    // libaio's userspace_reap: a reap that waits for nothing (iodepth_batch_complete_min=0)
    // reads the completion ring the kernel maps, so no io_getevents call is made; with a
    // minimum of 1 (the default) it changes nothing.
    for (ur, min) in [("1", "0"), ("0", "0"), ("1", "1")] {
        let u = format!("--userspace_reap={ur}");
        let m = format!("--iodepth_batch_complete_min={min}");
        let a = [
            "--name=n",
            "--filename=f",
            "--rw=read",
            "--ioengine=libaio",
            "--iodepth=8",
            &u,
            &m,
            "--size=256k",
            "--bs=4k",
            "--output-format=json",
        ];
        let (h, p) = both(&d, &a, "io_submit,io_getevents");
        let count = |ls: &[String], c: &str| ls.iter().filter(|l| l.starts_with(c)).count();
        for c in ["io_submit(", "io_getevents("] {
            let (hn, pn) = (count(&h, c), count(&p, c));
            if c == "io_getevents(" && ur == "1" && min == "0" {
                assert_eq!((hn, pn), (0, 0), "{ur} {min}: {c}");
            } else {
                assert!(hn > 0 && pn > 0, "{ur} {min}: {c} {hn} {pn}");
            }
        }
        let hr = hb(&d, &a);
        assert_eq!(
            doc(&hr.out)["jobs"][0]["read"]["total_ios"],
            64,
            "{ur} {min}"
        );
    }
    // An option of libaio's, as in fio.
    let h = hb(
        &d,
        &[
            "--name=n",
            "--filename=f",
            "--ioengine=psync",
            "--userspace_reap=1",
        ],
    );
    assert_eq!(h.code, 2, "{}", h.err);
    assert!(
        h.err.contains("is an option of ioengine=libaio"),
        "{}",
        h.err
    );
}
