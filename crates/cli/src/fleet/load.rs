//! A fleet's distributed load, after the hosts ended: their runs merged into one
//! (`hostbench_core::merge`), saved beside them, and printed in the command's layout.

use super::{Outcome, Saver};
use anyhow::{Result, anyhow};
use hostbench_core::result::{RunResult, Warning, WarningKind};
use sha2::Digest;

/// Merges the hosts' runs (`kept`, each with its host), saves the merged run and prints it
/// as the grammar the user typed prints a run (`http`, `ab`, `httperf`).
pub(super) fn merge_and_show(
    saver: &Saver,
    command: &[String],
    kept: Vec<RunResult>,
    outcomes: &[Outcome],
) -> Result<()> {
    // One run per host (its last).
    let mut parts: Vec<&RunResult> = Vec::new();
    for r in &kept {
        let h = r.fleet.as_ref().map(|f| f.host.as_str());
        parts.retain(|p| p.fleet.as_ref().map(|f| f.host.as_str()) != h);
        parts.push(r);
    }
    if parts.is_empty() {
        return Err(anyhow!("no host brought a run back"));
    }
    let mut m = hostbench_core::merge::merge_load(&saver.run_id, &parts).map_err(|e| anyhow!(e))?;
    let mut h = sha2::Sha256::new();
    for p in &parts {
        h.update(p.id.as_bytes());
    }
    m.id = h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut line = vec!["hostbench".to_string()];
    line.extend(command.iter().cloned());
    m.config.command_line = hostbench_core::secret::redact_args(&line);
    if let Some(w) = hostbench_workloads::registry::find(&m.workload.id) {
        m.figures = w.figures(&m);
    }
    let missing: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.run_count == 0)
        .map(|o| o.name.as_str())
        .collect();
    if !missing.is_empty() {
        let msg = format!(
            "{} of {} load generators brought no run back ({}): the load was short by their \
             shares, and the figures cover the others",
            missing.len(),
            outcomes.len(),
            missing.join(", ")
        );
        m.warnings.push(Warning {
            kind: WarningKind::Partial,
            message: msg,
        });
    }
    saver.save_one(&mut m)?;
    eprintln!(
        "fleet {}: merged load of {} host{}: {} requests ({}), saved as {}",
        saver.run_id,
        parts.len(),
        if parts.len() == 1 { "" } else { "s" },
        m.metrics.events,
        parts
            .iter()
            .map(|p| format!(
                "{} {}",
                p.fleet.as_ref().map_or("", |f| f.host.as_str()),
                p.metrics.events
            ))
            .collect::<Vec<_>>()
            .join(", "),
        m.id
    );
    let text = match m.config.grammar.as_str() {
        "ab" => hostbench_report::ab::render(&m),
        "httperf" => hostbench_report::httperf::render(&m),
        _ => hostbench_report::http::render(&m),
    };
    crate::exec::out(&text);
    // The merged run's warnings (a load cut short, a host's, a missing host's), as a run
    // on one host prints its own.
    crate::present::print_warnings(&m, false);
    Ok(())
}
