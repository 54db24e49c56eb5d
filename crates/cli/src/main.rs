//! The `hostbench` binary: decides which grammar the command line is in, hands it to that
//! front-end, and maps errors to exit codes (0 ok, 1 the run failed, 2 usage or setup
//! error, 130 interrupted). Errors are one line on stderr that says what to fix.

mod ab;
mod compare;
mod exec;
mod generate;
mod http;
mod httperf;
mod info;
mod memlat;
mod native;
mod results;
mod serve;
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

fn main() -> ExitCode {
    install_signals();
    let argv: Vec<String> = std::env::args().collect();
    let args = &argv[1..];
    // Peer grammars whose program name is the first word; then sysbench's (test names
    // anywhere); then the native clap grammar.
    let result = match args.first().map(String::as_str) {
        Some("stream") => stream::main(&argv),
        Some("memlat") => memlat::main(&argv),
        Some("ab") => ab::main(&argv),
        Some("httperf") => httperf::main(&argv),
        _ if sysbench::claims(args) => run_sysbench(&argv),
        _ => native::main(&argv),
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
