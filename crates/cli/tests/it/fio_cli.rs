//! fio's own command-line options (`--section`, `--showcmd`, `--readonly`, ...) and the job
//! options fio takes bare on its command line, side by side with the installed fio.

use super::fio::{s, tmp};
use super::fio_files::{fio, hb};
use super::fio_seq::need_fio;
use std::path::Path;

/// A job file with a global section and two jobs, `a` reading and `b` writing.
fn two_jobs(dir: &Path) -> String {
    let f = dir.join("data");
    let text = format!(
        "[global]\nsize=64k\nbs=4k\nfilename={}\n\n[a]\nrw=read\n\n[b]\nrw=write\nnumjobs=2\n",
        s(&f)
    );
    let p = dir.join("two.fio");
    std::fs::write(&p, text).unwrap();
    s(&p)
}

/// fio's set-only options (no value) are taken bare on the command line, in both.
#[test]
fn set_only_options_bare() {
    let dir = tmp("cli-bare");
    let file = s(&dir.join("f"));
    let args = [
        "--name=x",
        "--rw=read",
        "--size=64k",
        "--bsrange=4k-8k",
        "--bs_unaligned",
        "--verify_only",
        "--verify=crc32c",
        &format!("--filename={file}"),
        "--norandommap",
        "--parse-only",
    ];
    let h = hb(&dir, &args);
    assert_eq!(h.code, 0, "{}", h.err);
    // A bool option is not set-only: fio wants its value.
    let h2 = hb(
        &dir,
        &[
            "--name=x",
            "--size=64k",
            &format!("--filename={file}"),
            "--direct",
        ],
    );
    assert_eq!(h2.code, 2, "{}", h2.err);
    assert!(h2.err.contains("--direct needs a value"), "{}", h2.err);
    if need_fio("set_only_options_bare") {
        assert_eq!(fio(&dir, &args).code, 0);
        let f2 = fio(
            &dir,
            &[
                "--name=x",
                "--size=64k",
                &format!("--filename={file}"),
                "--direct",
            ],
        );
        assert_ne!(f2.code, 0, "{}", f2.err);
    }
}
