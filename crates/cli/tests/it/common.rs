//! Helpers shared by the integration tests: run the real binary, redact figures for
//! snapshots, check sysbench's column layout.
//!
//! Every run saves its result, so every command built here points `HOSTBENCH_RESULTS_DB` at
//! a store of this test process (removed when it exits): no test writes to the user's
//! store. Tests that inspect a store give their own `--results-db` or environment.
//!
//! Every module of the test binary shares this process. A test that must have the machine to
//! itself (the quick suite, which uses every CPU for minutes) holds [`alone`]; every other
//! test shares the machine from its first command on ([`bin`], [`hb`], [`hb_std`],
//! [`process_store`]) until it ends, so the two never overlap.

use assert_cmd::Command;
use serde_json::Value;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::{OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

/// Read: a test that runs the binary; write: a test that needs the machine to itself.
static MACHINE: RwLock<()> = RwLock::new(());

thread_local! {
    /// This test thread's share of [`MACHINE`], from its first command until the test ends
    /// (libtest runs every test on a thread of its own, so the share ends with the test).
    static SHARE: RefCell<Option<RwLockReadGuard<'static, ()>>> = const { RefCell::new(None) };
    /// This thread holds [`MACHINE`] alone.
    static ALONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Waits until no test that needs the machine alone is running, then shares it until the
/// calling test ends. Start commands from the test's own thread: a thread the test spawns
/// would take a share of its own, and wait behind a test waiting for [`alone`].
fn share_the_machine() {
    if ALONE.get() {
        return;
    }
    SHARE.with_borrow_mut(|s| {
        if s.is_none() {
            *s = Some(MACHINE.read().unwrap_or_else(|e| e.into_inner()));
        }
    });
}

/// The machine for the calling test alone until the guard drops: waits for the tests that
/// are running the binary to end, and keeps new ones from starting a command meanwhile.
/// For tests whose time budget assumes idle CPUs, never for correctness.
pub fn alone() -> Alone {
    // This thread's own share would wait for itself.
    SHARE.with_borrow_mut(|s| *s = None);
    let guard = MACHINE.write().unwrap_or_else(|e| e.into_inner());
    ALONE.set(true);
    Alone { _machine: guard }
}

/// See [`alone`].
pub struct Alone {
    _machine: RwLockWriteGuard<'static, ()>,
}

impl Drop for Alone {
    fn drop(&mut self) {
        ALONE.set(false);
    }
}

/// The path of the binary under test, for commands not built by [`hb`] (a shell, `strace`,
/// `script`); shares the machine as [`hb`] does.
pub fn bin() -> PathBuf {
    share_the_machine();
    assert_cmd::cargo::cargo_bin("hostbench")
}

static STORE_DIR: OnceLock<PathBuf> = OnceLock::new();

extern "C" fn remove_store_dir() {
    if let Some(d) = STORE_DIR.get() {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// The results store every command of this test process saves into.
pub fn process_store() -> PathBuf {
    share_the_machine();
    STORE_DIR
        .get_or_init(|| {
            let dir = tempfile::Builder::new()
                .prefix("hostbench-test-store-")
                .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
                .expect("a temporary directory for the test store")
                .keep();
            // SAFETY: registering a plain function that only removes a directory.
            unsafe { libc::atexit(remove_store_dir) };
            dir
        })
        .join("results.db")
}

/// The binary, saving into [`process_store`].
pub fn hb() -> Command {
    let mut c = Command::cargo_bin("hostbench").expect("binary is built");
    c.env("HOSTBENCH_RESULTS_DB", process_store())
        .env_remove("HOSTBENCH_NO_SAVE");
    c
}

/// [`hb`] as a `std::process::Command`, for tests that signal the child or pipe it.
pub fn hb_std() -> std::process::Command {
    let mut c = std::process::Command::new(bin());
    c.env("HOSTBENCH_RESULTS_DB", process_store())
        .env_remove("HOSTBENCH_NO_SAVE");
    c
}

/// A command with its own store at `db` (and nothing inherited that points elsewhere).
pub fn hb_with_store(db: &Path) -> Command {
    let mut c = hb();
    c.env("HOSTBENCH_RESULTS_DB", db);
    c
}

pub fn run_ok(args: &[&str]) -> (String, String) {
    let out = hb()
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{args:?} failed: {stderr}\n{stdout}");
    (stdout, stderr)
}

/// Replaces figures (and the version) so snapshots pin the layout, not the measurement.
/// Padding before a figure depends on its width, so it collapses to one space; the column
/// alignment is asserted separately ([`assert_sysbench_columns`]).
pub fn redact(s: &str) -> String {
    redact_figures(s, false)
}

/// [`redact`], also treating a `-` after a run of spaces as the start of a figure (layouts
/// that print signed numbers).
pub fn redact_signed(s: &str) -> String {
    redact_figures(s, true)
}

fn redact_figures(s: &str, signed: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ' ' && chars.peek().is_some_and(|n| *n == ' ') {
            let mut spaces = String::from(c);
            while chars.peek() == Some(&' ') {
                spaces.push(chars.next().unwrap());
            }
            if chars
                .peek()
                .is_some_and(|n| n.is_ascii_digit() || (signed && *n == '-'))
            {
                out.push(' ');
            } else {
                out.push_str(&spaces);
            }
        } else if c.is_ascii_digit() {
            let mut tok = String::from(c);
            while let Some(&n) = chars.peek() {
                if n.is_ascii_digit() || n == '.' {
                    tok.push(n);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push_str(if tok.contains('.') { "#.#" } else { "#" });
        } else {
            out.push(c);
        }
    }
    out
}

/// sysbench right-aligns the latency figures so that every line is 53 characters wide, and
/// the general statistics at column 41.
pub fn assert_sysbench_columns(out: &str) {
    let mut in_latency = false;
    for l in out.lines() {
        if l == "Latency (ms):" {
            in_latency = true;
            continue;
        }
        if l.is_empty() {
            in_latency = false;
        }
        if in_latency && !l.contains("disabled") {
            assert_eq!(l.len(), 53, "latency line not 53 wide: {l:?}");
        }
        if l.starts_with("    total time:") || l.starts_with("    total number of events:") {
            assert_eq!(l.find(|c: char| c.is_ascii_digit()), Some(41), "{l:?}");
        }
    }
}

/// The checked-in result schema.
pub const SCHEMA_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schemas/result.v1.json");

pub fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let text = std::fs::read_to_string(SCHEMA_PATH)
            .unwrap_or_else(|e| panic!("cannot read {SCHEMA_PATH}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{SCHEMA_PATH} is not JSON: {e}"))
    })
}

pub fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        jsonschema::options()
            .should_validate_formats(true)
            .build(schema())
            .unwrap_or_else(|e| panic!("{SCHEMA_PATH} does not compile: {e}"))
    })
}

/// Schema violations of `instance`: (JSON pointer, message), including those inside
/// `anyOf`/`oneOf` branches (so a bad `host` names the field, not just `/host`).
pub fn violations(instance: &Value) -> Vec<(String, String)> {
    let v = validator();
    if v.is_valid(instance) {
        return Vec::new();
    }
    v.evaluate(instance)
        .iter_errors()
        .map(|e| {
            // Messages quote the failing value; keep whole objects (`host`) readable.
            let mut msg = e.error.to_string();
            if msg.len() > 300 {
                let cut = (0..=300).rev().find(|&i| msg.is_char_boundary(i)).unwrap();
                msg.replace_range(cut.., " …");
            }
            (e.instance_location.to_string(), msg)
        })
        .collect()
}

pub fn assert_valid(instance: &Value, what: &str) {
    let errors = violations(instance);
    assert!(
        errors.is_empty(),
        "{what}: the result does not match {SCHEMA_PATH}:\n  {}",
        errors
            .iter()
            .map(|(at, msg)| format!("{at}: {msg}"))
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}

/// Runs the binary: (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = hb()
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `hostbench <args>` in `dir`: (exit code, stdout, stderr); a panic fails the test.
pub fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = hb()
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

/// Runs the binary, asserts success without a panic, and returns stdout.
pub fn stdout_ok(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?} failed: {err}\n{out}");
    assert!(!err.contains("panicked"), "{err}");
    out
}

/// Starts `cmd` with stdout and stderr captured, for tests that signal it.
/// Makes `cmd`'s child start as from a terminal: SIGINT, SIGTERM and SIGHUP at their
/// default, whatever this test process inherited (a test run under `nohup`, or as a
/// background job of a script, would otherwise pass on an ignored SIGHUP or SIGINT, which
/// hostbench rightly keeps ignored).
pub fn default_signals(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: signal() is async-signal-safe; nothing else runs in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        })
    }
}

pub fn spawn_piped(cmd: &mut std::process::Command) -> std::process::Child {
    default_signals(cmd);
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary starts")
}

/// Sends Ctrl-C (SIGINT) to `child` and waits for it to exit.
pub fn interrupt(child: std::process::Child) -> std::process::Output {
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait_with_output().expect("the child exits")
}

/// `hostbench serve --port 0 ARGS`, stopped on drop.
pub struct Serve {
    /// The server process.
    pub child: std::process::Child,
    /// `http://127.0.0.1:PORT/` (`https://` with `--tls`).
    pub url: String,
    /// Its port.
    pub port: u16,
}

impl Serve {
    /// Starts it and reads the URL it prints.
    pub fn start(args: &[&str]) -> Serve {
        let mut child = hb_std()
            .args(["serve", "--port", "0"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("serve starts");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        let url = line
            .trim()
            .rsplit(' ')
            .next()
            .expect("serve prints its URL")
            .to_string();
        assert!(
            url.starts_with("http://127.0.0.1:") || url.starts_with("https://127.0.0.1:"),
            "{line}"
        );
        let port = url
            .trim_end_matches('/')
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        Serve { child, url, port }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loop device over an image file the test made, detached when dropped (however the test
/// ends). `None`, with the reason printed as a skip line, where it cannot be made (not root,
/// no loop devices).
pub struct LoopImage {
    /// The device (`/dev/loopN`).
    pub dev: String,
}

impl LoopImage {
    /// Attaches `img`.
    pub fn attach(img: &std::path::Path) -> Option<LoopImage> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skip: loop devices need root");
            return None;
        }
        let o = std::process::Command::new("losetup")
            .arg("-f")
            .arg("--show")
            .arg(img)
            .output()
            .ok()?;
        if !o.status.success() {
            eprintln!("skip: losetup: {}", String::from_utf8_lossy(&o.stderr));
            return None;
        }
        Some(LoopImage {
            dev: String::from_utf8_lossy(&o.stdout).trim().to_string(),
        })
    }
}

impl Drop for LoopImage {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.dev])
            .status();
    }
}
