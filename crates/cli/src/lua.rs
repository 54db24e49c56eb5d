//! `hostbench SCRIPT.lua [options] [command]`: sysbench 1.0.20's command dispatch for Lua
//! scripts (§1.4 of the reference notes). The sysbench front-end has parsed the general
//! options into the plan and kept every option as typed in the `lua` workload's
//! parameters; here the script's main state is loaded (its body runs), its options are
//! checked against its declarations, and the command runs:
//!
//! 1. no command: the body only;
//! 2. a custom command (`sysbench.cmdline.commands`), which shadows the built-in ones:
//!    in the main state, or in `--threads` threads of its own when parallel;
//! 3. `help`: the script's `help()`, or its declared options;
//! 4. `prepare`, `cleanup`: the script's global functions;
//! 5. `run`: `init()`, then the run through exec as for every workload (the script's
//!    `event()` is the event), the final report (or the script's hook), then `done()`.
//!
//! Exit codes: 2 for a script that cannot load or options it refuses (nothing ran), 1 for
//! a command or run that failed, as sysbench's FATAL errors; 0 otherwise.

use crate::exec::{self, SaveOptions, out};
use crate::present::lua::LuaOut;
use crate::present::sysbench::SysbenchOut;
use crate::present::{Presenter, RunInfo};
use anyhow::Result;
use hostbench_core::plan::Plan;
use hostbench_workloads::lua::{Config, script};
use std::process::ExitCode;

fn fatal(msg: &str, code: u8) -> Result<ExitCode> {
    hostbench_workloads::lua::state::flush_stdio();
    eprintln!("FATAL: {msg}");
    Ok(ExitCode::from(code))
}

/// Runs `command` of the script `plan` names.
pub fn run(
    plan: &Plan,
    output: SysbenchOut,
    saving: &SaveOptions,
    command: Option<&str>,
    argv: &[String],
) -> Result<ExitCode> {
    let workload = hostbench_workloads::find("lua").expect("registered");
    let cfg = Config::from_params(&plan.params)?;
    let sname = cfg.sname();
    // A JSON or CSV document on stdout stays one document: the script's prints go to stderr.
    hostbench_workloads::lua::state::print_to_stderr(
        output.format != crate::present::sysbench::SysbenchFormat::Text,
    );
    output.header_now(&RunInfo { plan, workload });
    if let Err(e) = script::load(&cfg) {
        return fatal(&e.0, 2);
    }
    if let Err(e) = script::set_options(plan.threads) {
        hostbench_workloads::lua::state::flush_stdio();
        eprintln!("{e}");
        return Ok(ExitCode::from(2));
    }
    let Some(command) = command else {
        script::unload();
        return Ok(ExitCode::SUCCESS);
    };
    let code = match (script::custom_command(command), command) {
        (Some(parallel), _) => {
            if parallel && plan.threads > 1 {
                if output.verbosity() >= 3 {
                    out("Initializing worker threads...\n\n");
                }
                let seed = if plan.seed == 0 {
                    hostbench_core::rand::time_seed()
                } else {
                    plan.seed
                };
                let (ok, errors) = script::call_parallel(command, plan.threads, seed);
                for e in &errors {
                    eprintln!("FATAL: `sysbench.cmdline.call_command' function failed: {e}");
                }
                if ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                }
            } else {
                match script::call_command(command) {
                    Ok(true) => ExitCode::SUCCESS,
                    Ok(false) => ExitCode::from(1),
                    Err(e) => {
                        return fatal(
                            &format!("`sysbench.cmdline.call_command' function failed: {e}"),
                            1,
                        );
                    }
                }
            }
        }
        (None, "help") => {
            if script::has_function("help") {
                if let Err(e) = script::call_function("help") {
                    return fatal(&format!("`help' function failed: {e}"), 1);
                }
                ExitCode::SUCCESS
            } else if let Some(h) = script::options_help() {
                out(&h);
                ExitCode::SUCCESS
            } else {
                eprintln!("'{sname}' test does not implement the 'help' command.");
                ExitCode::from(1)
            }
        }
        (None, c @ ("prepare" | "cleanup")) => {
            if script::has_function(c) {
                if let Err(e) = script::call_function(c) {
                    return fatal(&format!("`{c}' function failed: {e}"), 1);
                }
                ExitCode::SUCCESS
            } else {
                out(&format!(
                    "'{sname}' test does not implement the '{c}' command.\n"
                ));
                ExitCode::from(1)
            }
        }
        (None, "run") => {
            // init() and the check for event() before anything of the run prints.
            if let Err(e) = script::prepare_run(&cfg) {
                return fatal(&e.message, 1);
            }
            let presenter = LuaOut {
                inner: output,
                intermediate: script::has_hook("report_intermediate"),
                cumulative: script::has_hook("report_cumulative"),
            };
            let (code, _) = exec::execute(plan, workload, &presenter, saving, "sysbench", argv)?;
            code
        }
        (None, other) => {
            eprintln!("Unknown command: {other}");
            ExitCode::from(1)
        }
    };
    script::unload();
    Ok(code)
}
