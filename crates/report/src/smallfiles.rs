//! `hostbench smallfiles` text: what ran, the per-phase table and the verdict line the
//! git-hosting guides ask for (create + read under the threshold).

use crate::native::table;
use hostbench_core::names::smallfiles::fact;
use hostbench_core::result::RunResult;
use hostbench_core::units::Bytes;
use std::fmt::Write;

/// The verdict: `Some((create_read_s, max_seconds, passed))` when the create and read phases
/// completed, `None` when the run was cut short.
pub fn verdict(r: &RunResult) -> Option<(f64, f64, bool)> {
    let f = &r.workload.facts;
    let took = *f.get(fact::CREATE_READ_S)?;
    let max = *f.get(fact::MAX_SECONDS)?;
    Some((took, max, took <= max))
}

/// The report.
pub fn render(r: &RunResult) -> String {
    let p = &r.workload.params;
    let mut s = String::new();
    let fanout = p.int("fanout");
    let _ = writeln!(
        s,
        "smallfiles: {} files of {} in {} ({} thread{}, {})",
        p.int("files"),
        Bytes(p.int("size") as u64),
        p.text("dir"),
        r.config.threads,
        if r.config.threads == 1 { "" } else { "s" },
        if fanout == 0 {
            "one directory".to_string()
        } else {
            format!("{fanout} subdirectories")
        }
    );
    s.push('\n');
    for t in &r.tables {
        s.push_str(&table(t));
    }
    s.push('\n');
    match verdict(r) {
        Some((took, max, pass)) => {
            let _ = writeln!(
                s,
                "create + read: {took:.3} s (threshold {max} s): {}",
                if pass { "PASS" } else { "FAIL" }
            );
        }
        None => s.push_str("create + read: not measured (the run was cut short)\n"),
    }
    s
}
