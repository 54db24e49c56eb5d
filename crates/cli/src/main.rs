//! The `hostbench` binary: decides which grammar the command line is in, hands it to that
//! front-end, and maps errors to exit codes (0 ok, 1 the run failed, 2 usage or setup
//! error, 130 interrupted). Errors are one line on stderr that says what to fix.

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
mod generate;
mod http;
mod httperf;
mod info;
mod insert_race;
mod iozone;
mod memlat;
mod native;
mod results;
mod serve;
mod smallfiles;
mod stream;
mod suite;
mod sysbench;

use std::process::ExitCode;
use std::sync::atomic::Ordering;

extern "C" fn on_sigint(_: libc::c_int) {
    // Second Ctrl-C: the user means it.
    if hostbench_core::runner::INTERRUPT.swap(true, Ordering::SeqCst) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

fn install_signals() {
    // SAFETY: installing a handler that only touches an atomic and calls _exit.
    unsafe {
        libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t);
    }
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
    install_signals();
    let argv: Vec<String> = std::env::args().collect();
    let args = &argv[1..];
    // Peer grammars whose program name is the first word; then sysbench's (test names
    // anywhere); then the native clap grammar.
    let peer = args
        .first()
        .and_then(|w| PEERS.iter().find(|(name, _)| name == w));
    let result = match peer {
        Some((_, front_end)) => front_end(&argv),
        None if sysbench::claims(args) => run_sysbench(&argv),
        None => native::main(&argv),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("hostbench: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run_sysbench(argv: &[String]) -> anyhow::Result<ExitCode> {
    let mut warnings = Vec::new();
    let inv = sysbench::parse(&argv[1..], &mut warnings);
    for w in &warnings {
        eprintln!("WARNING: {w}");
    }
    match inv? {
        sysbench::Invocation::Print(s) => {
            exec::out(&s);
            Ok(ExitCode::SUCCESS)
        }
        sysbench::Invocation::Stage(stage, plan, output) => {
            let w = hostbench_workloads::find(&plan.workload).expect("front-end found it");
            exec::run_stage(stage, &plan, w, &output)
        }
        sysbench::Invocation::Run(plan, output, saving) => {
            let w = hostbench_workloads::find(&plan.workload).expect("front-end found it");
            exec::execute_with(&plan, w, &output, &saving, "sysbench", argv)
        }
    }
}
