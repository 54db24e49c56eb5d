//! `scripts/release.sh`, guarded cheaply: it parses (`bash -n`), its usage errors exit 2, and
//! `--dry-run` prints for both targets the compilers, linker, flags and cargo command it
//! would use, keeps what the environment sets, and lists what is missing — without building
//! anything (a real release build takes minutes per target; docs/release.md records one).

use std::path::PathBuf;
use std::process::{Command, Output};

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/release.sh")
}

fn release(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new("bash");
    c.arg(script()).args(args);
    // Per-target settings from the caller's shell would change what is printed.
    for (k, _) in std::env::vars() {
        if k.starts_with("CC_")
            || k.starts_with("CFLAGS_")
            || k.starts_with("AR_")
            || (k.starts_with("CARGO_TARGET_") && k.contains("MUSL"))
            || k == "RUSTFLAGS"
            || k == "CARGO_ENCODED_RUSTFLAGS"
        {
            c.env_remove(k);
        }
    }
    c.envs(env.iter().copied());
    c.output().expect("bash runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn the_script_parses_and_explains_itself() {
    let o = Command::new("bash")
        .arg("-n")
        .arg(script())
        .output()
        .unwrap();
    assert!(o.status.success(), "bash -n: {}", text(&o).1);
    let o = release(&["--help"], &[]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    for w in ["--target", "--test", "--out", "--dry-run"] {
        assert!(out.contains(w), "--help lacks {w}:\n{out}");
    }
}

#[test]
fn usage_errors_exit_2_and_say_what_to_give() {
    for (args, says) in [
        (
            &["--target", "sparc"][..],
            "--target must be x86_64, aarch64 or all, not 'sparc'",
        ),
        (&["--target"][..], "--target needs a value"),
        (&["--frobnicate"][..], "unknown argument '--frobnicate'"),
    ] {
        let o = release(args, &[]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(err.contains("usage: scripts/release.sh"), "{err}");
    }
}

#[test]
fn dry_run_shows_both_static_musl_targets_and_builds_nothing() {
    let o = release(&["--dry-run", "--test"], &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("dry run: nothing is built"), "{out}");
    for (arch, machine) in [("x86_64", "X86-64"), ("aarch64", "AArch64")] {
        let triple = format!("{arch}-unknown-linux-musl");
        let tu = triple.replace('-', "_");
        let upper = tu.to_uppercase();
        for line in [
            format!("target {triple}"),
            format!(
                "cargo build --locked --profile dist --target {triple} -p hostbench --bin hostbench"
            ),
            format!("CC_{tu}={arch}-linux-gnu-gcc"),
            format!("CFLAGS_{tu}=-specs=/usr/lib/{arch}-linux-musl/musl-gcc.specs"),
            format!("AR_{tu}={arch}-linux-gnu-ar"),
            format!("CARGO_TARGET_{upper}_RUSTFLAGS=-C target-feature=+crt-static"),
            // LuaJIT without external unwinding: LLVM's libunwind in the static binary
            // rejects the CIE it registers.
            "TARGET_XCFLAGS=-DLUAJIT_NO_UNWIND".to_string(),
            format!("machine {machine}"),
        ] {
            assert!(out.contains(&line), "dry run lacks {line:?}:\n{out}");
        }
        // rust-lld from the toolchain links Rust's own musl: no cross linker needed.
        assert!(
            out.contains(&format!("CARGO_TARGET_{upper}_LINKER=rust-lld\n")),
            "{out}"
        );
    }
    // The other architecture is tested under qemu-user.
    let other = if cfg!(target_arch = "aarch64") {
        "x86_64"
    } else {
        "aarch64"
    };
    assert!(
        out.contains(&format!("test: under qemu-{other}-static")),
        "{out}"
    );
    // Whatever this machine lacks is listed with the command that installs it.
    assert!(
        out.contains("missing: nothing") || out.contains("install"),
        "{out}"
    );
}

#[test]
fn dry_run_keeps_the_callers_toolchain_and_refuses_rustflags() {
    let o = release(
        &["--dry-run", "--target", "aarch64"],
        &[
            ("CC_aarch64_unknown_linux_musl", "sh"),
            ("AR_aarch64_unknown_linux_musl", "sh"),
            ("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER", "sh"),
        ],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("CC_aarch64_unknown_linux_musl=sh\n"), "{out}");
    assert!(
        out.contains("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=sh\n"),
        "{out}"
    );
    assert!(!out.contains("target x86_64"), "{out}");

    let o = release(&["--dry-run"], &[("RUSTFLAGS", "-C opt-level=0")]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("RUSTFLAGS is set"), "{err}");
}
