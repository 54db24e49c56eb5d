//! The `hostbench` binary: decides which grammar the command line is in, hands it to that
//! front-end, and maps errors to exit codes (0 ok, 1 the run failed, 2 usage or setup
//! error, 128 + the signal when SIGINT (130), SIGTERM (143) or SIGHUP (129) stopped it). Errors are one line on stderr that says what to fix.

/// std's `eprintln!` panics when stderr is a closed pipe (`hostbench ... 2>&1 | head`); a
/// line nobody can read any more is dropped instead, and the run goes on to its exit code.
/// Every line goes through the one masking function, so no password reaches stderr.
/// Defined before the modules so that every `eprintln!` in this crate is this one.
macro_rules! eprintln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($t)*);
        let _ = writeln!(std::io::stderr(), "{}", hostbench_core::secret::mask(&line));
    }};
}

mod ab;
mod compare;
mod config_file;
mod exec;
mod fio;
mod fio_getopt;
mod fio_session;
mod fleet;
mod frontend;
mod generate;
mod http;
mod httperf;
mod info;
mod insert_race;
mod iozone;
#[cfg(feature = "lua")]
mod lua;
mod memlat;
mod native;
mod output;
mod present;
mod results;
mod serve;
mod smallfiles;
mod stream;
mod suite;
mod sysbench;
mod trend;

use hostbench_core::workload::{ErrorKind, WorkloadError};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Monotonic time of the first SIGINT/SIGTERM/SIGHUP, ns (0: none yet).
static FIRST_SIGNAL_NS: AtomicU64 = AtomicU64::new(0);

/// A second signal this soon after the first is the same request (`timeout -s INT` sends
/// one to the child and one to its process group; a terminal's hang-up may come with a
/// SIGTERM from the session leader): ignored, so the partial report is still printed.
const SAME_REQUEST_NS: u64 = 500_000_000;

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime is async-signal-safe and writes into our struct.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

/// SIGINT, SIGTERM and SIGHUP all stop a run the same way: the runner stops, the partial
/// result is printed and saved, the files hostbench made are removed, and the exit code is
/// 128 + the signal. A further signal later than [`SAME_REQUEST_NS`] means it: exit now,
/// with 128 + that signal.
extern "C" fn on_signal(sig: libc::c_int) {
    if PASSIVE.load(Ordering::SeqCst) {
        // A command that runs nothing (results, compare, report, ...) never looks at the
        // flag: stop at once, as the signal's default action would (but with the exit code
        // hostbench documents), unless a `Critical` section is open: it exits when it ends.
        // The flag is set before the section count is read, and a section is counted out
        // before it reads the flag, so one of the two always sees the other.
        hostbench_core::runner::INTERRUPT_SIGNAL.store(sig, Ordering::SeqCst);
        hostbench_core::runner::INTERRUPT.store(true, Ordering::SeqCst);
        if CRITICAL.load(Ordering::SeqCst) == 0 {
            // SAFETY: _exit is async-signal-safe.
            unsafe { libc::_exit(128 + sig) };
        }
        return;
    }
    let now = monotonic_ns().max(1);
    // The first signal's time is claimed before anything else, so a second one handled at
    // the same moment on another thread sees it and counts as the same request.
    match FIRST_SIGNAL_NS.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => {
            hostbench_core::runner::INTERRUPT_SIGNAL.store(sig, Ordering::SeqCst);
            hostbench_core::runner::INTERRUPT.store(true, Ordering::SeqCst);
        }
        Err(first) if now.saturating_sub(first) < SAME_REQUEST_NS => {}
        Err(_) => {
            // SAFETY: _exit is async-signal-safe.
            unsafe { libc::_exit(128 + sig) };
        }
    }
}

/// Set by commands that run nothing ([`stop_at_once_on_signals`]).
static PASSIVE: AtomicBool = AtomicBool::new(false);
/// Sections of a passive command that a signal must not cut (a file half written beside
/// its target): the signal waits for the section's end ([`Critical`]).
static CRITICAL: AtomicUsize = AtomicUsize::new(0);

/// For commands that run no workload and so never poll the stop flag (`results`,
/// `compare`, `report`, `list`, `timer`, `sysinfo`, `generate`): SIGINT, SIGTERM and SIGHUP
/// end the process at once with 128 + the signal, except inside a [`Critical`] section,
/// which finishes first. (They used to set the flag nobody read: the first signal was
/// swallowed.) The results store is SQLite, whose transactions survive such an exit.
pub fn stop_at_once_on_signals() {
    PASSIVE.store(true, Ordering::SeqCst);
}

/// A section no signal cuts short in a passive command: a signal that arrives inside it
/// ends the process when the section ends. In a command that runs a workload it does
/// nothing (the run's own stop handling applies).
pub struct Critical(());

impl Critical {
    /// Enters the section.
    pub fn enter() -> Critical {
        CRITICAL.fetch_add(1, Ordering::SeqCst);
        Critical(())
    }
}

impl Drop for Critical {
    fn drop(&mut self) {
        if CRITICAL.fetch_sub(1, Ordering::SeqCst) == 1
            && PASSIVE.load(Ordering::SeqCst)
            && hostbench_core::runner::INTERRUPT.load(Ordering::SeqCst)
        {
            let sig = hostbench_core::runner::INTERRUPT_SIGNAL.load(Ordering::SeqCst);
            std::process::exit(128 + if sig > 0 { sig } else { libc::SIGINT });
        }
    }
}

/// Installs the stop signals' handler. A signal ignored by whoever started us stays ignored
/// (`nohup`, `trap '' INT`), except in fio's grammar (`fio_grammar`), where SIGINT and
/// SIGTERM are always handled, as fio 3.33 handles them whatever it inherited: a script's
/// `hostbench fio job.fio &` (a background job of a non-interactive shell inherits SIGINT
/// ignored) stops on `kill -INT` as fio does. A hang-up stays ignored there too: fio has no
/// SIGHUP handler.
fn install_signals(fio_grammar: bool) {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: sigaction with a null new action only reads the current disposition into
        // our struct; `signal` installs a handler that only touches atomics, reads the
        // clock and calls _exit, all async-signal-safe.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            // A signal ignored by whoever started us stays ignored (`nohup`, `trap '' INT`).
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
                && !(fio_grammar && fio_session::ALWAYS_HANDLED.contains(&sig))
            {
                continue;
            }
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
}

/// The exit code of a run stopped by a signal: 128 + the signal (130 for Ctrl-C, 143 for
/// SIGTERM, 129 for SIGHUP).
pub fn interrupted_exit() -> ExitCode {
    let sig = hostbench_core::runner::INTERRUPT_SIGNAL.load(Ordering::SeqCst);
    ExitCode::from((128 + if sig > 0 { sig } else { libc::SIGINT }) as u8)
}

/// A grammar's entry point: the whole argv in, an exit code (or a usage error) out.
pub type FrontEnd = fn(&[String]) -> anyhow::Result<ExitCode>;

/// Peer grammars whose program name is the first word (`hostbench stream ...`), each with its
/// front-end; one line per grammar.
pub const PEERS: &[(&str, FrontEnd)] = &[
    ("stream", stream::main),
    ("fio", fio::main),
    ("memlat", memlat::main),
    ("smallfiles", smallfiles::main),
    ("iozone", iozone::main),
    ("insert-race", insert_race::main),
    ("ab", ab::main),
    ("httperf", httperf::main),
];

fn main() -> ExitCode {
    install_signals(std::env::args_os().nth(1).is_some_and(|w| w == "fio"));
    let mut argv: Vec<String> = std::env::args().collect();
    // `hostbench help [WORD...]` is `hostbench [WORD...] --help`, in whichever grammar WORD
    // speaks (`help cpu`, `help fio`, `help results`).
    if argv.get(1).is_some_and(|w| w == "help") {
        argv.remove(1);
        argv.push("--help".into());
    }
    // `--fleet-run ID` in any grammar: a run that joins a fleet run (a fleet's own command
    // line is the fleet's business; `results list --fleet-run ID` selects stored runs).
    if argv.get(1).is_none_or(|w| w != "fleet" && w != "results")
        && let Err(e) = fleet::gate::take_flags(&mut argv)
    {
        eprintln!("hostbench: error: {e:#}");
        return ExitCode::from(2);
    }
    let args = &argv[1..];
    // Peer grammars whose program name is the first word; then sysbench's (test names
    // anywhere); then the native clap grammar.
    let peer = args
        .first()
        .and_then(|w| PEERS.iter().find(|(name, _)| name == w));
    let result = match peer {
        // A fleet runs any command line on other hosts: a layer above the grammars.
        None if args.first().is_some_and(|w| w == "fleet") => fleet::main(&argv),
        Some((_, front_end)) => front_end(&argv),
        None if sysbench::claims(args) => run_sysbench(&argv),
        None => native::main(&argv),
    };
    match result {
        // The report was cut short by a closed pipe (`| head -1`): not a success.
        Ok(code) if code == ExitCode::SUCCESS && exec::stdout_closed() => {
            ExitCode::from(128 + libc::SIGPIPE as u8)
        }
        Ok(code) => code,
        // Stopped before a fleet's common start: not an error of the command line, an
        // interruption (128 + the signal).
        Err(e) if e.chain().any(|c| c.is::<fleet::gate::NeverStarted>()) => {
            eprintln!("hostbench: {e:#}");
            interrupted_exit()
        }
        Err(e) => {
            eprintln!("hostbench: error: {e:#}");
            error_exit(&e)
        }
    }
}

/// The exit code of a command that ended on `e`: a workload's error answers with its kind
/// ([`ErrorKind::exit_code`]: 2 for a usage or environment error, 1 for work that failed
/// while running, such as an I/O error while laying out files); anything else is a usage or
/// setup error, 2.
fn error_exit(e: &anyhow::Error) -> ExitCode {
    use hostbench_core::runner::RunError;
    let kind = e.chain().find_map(|c| {
        c.downcast_ref::<WorkloadError>()
            .or(match c.downcast_ref::<RunError>() {
                Some(RunError::Workload(w)) => Some(w),
                _ => None,
            })
            .map(|w| w.kind)
    });
    ExitCode::from(kind.map_or(2, ErrorKind::exit_code))
}

fn run_sysbench(argv: &[String]) -> anyhow::Result<ExitCode> {
    let mut warnings = Vec::new();
    let inv = sysbench::parse(&argv[1..], &mut warnings);
    for w in &warnings {
        eprintln!("WARNING: {w}");
    }
    match inv? {
        sysbench::Invocation::Print(s) => {
            // Help, usage and version text: hostbench's own, with `--mysql-password=STRING`
            // in it, which is a placeholder and not a secret.
            exec::out_help(&s);
            Ok(ExitCode::SUCCESS)
        }
        sysbench::Invocation::Stage(stage, plan, output) => {
            let w = hostbench_workloads::find(&plan.workload).expect("front-end found it");
            // The same command line with `cleanup` for the stage's word (sysbench's
            // commands may stand anywhere among the options).
            let mut again: Vec<String> = hostbench_core::secret::redact_args(argv);
            again[0] = "hostbench".into();
            if let Some(word) = again.iter_mut().skip(1).rfind(|a| *a == stage.name()) {
                *word = "cleanup".into();
            }
            let advice = format!(
                "run `{}` before trusting its files or tables",
                hostbench_report::html::shell_join(&again)
            );
            exec::run_stage(stage, &plan, w, &output, &advice)
        }
        sysbench::Invocation::Prewarm(plan, output) => sysbench::prewarm(&plan, &output),
        #[cfg(feature = "lua")]
        sysbench::Invocation::Lua(plan, output, saving, command) => {
            lua::run(&plan, output, &saving, command.as_deref(), argv)
        }
        #[cfg(not(feature = "lua"))]
        sysbench::Invocation::Lua(..) => anyhow::bail!("this hostbench was built without Lua"),
        sysbench::Invocation::Run(plan, output, saving) => {
            let w = hostbench_workloads::find(&plan.workload).expect("front-end found it");
            exec::execute(&plan, w, &output, &saving, "sysbench", argv).map(|(code, _)| code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;
    use hostbench_core::runner::RunError;

    #[test]
    fn a_workload_error_exits_by_its_kind_wherever_it_sits_in_the_chain() {
        let direct = |w: WorkloadError| error_exit(&anyhow::Error::new(w));
        assert_eq!(
            direct(WorkloadError::usage("bad option")),
            ExitCode::from(2)
        );
        assert_eq!(
            direct(WorkloadError::environment("refused")),
            ExitCode::from(2)
        );
        assert_eq!(direct(WorkloadError::failed("EIO")), ExitCode::from(1));
        // A worker that could not be built reaches main as the runner's error, in context.
        let run: Result<(), RunError> = Err(RunError::Workload(WorkloadError::failed("EIO")));
        let e = run.context("the run could not start").unwrap_err();
        assert_eq!(error_exit(&e), ExitCode::from(1));
        let e = anyhow::anyhow!("unknown option --x");
        assert_eq!(error_exit(&e), ExitCode::from(2));
    }
}
