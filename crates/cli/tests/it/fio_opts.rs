//! fio 3.33 options hostbench once refused — `atomic`, `bs_is_seq_rand`,
//! `serialize_overlap`, `opendir`, `--warnings-fatal`, `--enghelp` — side by side with the
//! installed fio: the same job through both, compared on counts, sizes, system calls and
//! messages.

use super::fio::tmp;
use super::fio_engines::{have_strace, strace_f};
use super::fio_files::doc;
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
        assert!(fl.contains("O_DIRECT") && fl.contains("0x800000"), "fio {rw}: {ff:?}");
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
