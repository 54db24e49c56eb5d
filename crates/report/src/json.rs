//! JSON: the [`RunResult`] as is (schema `schemas/result.v1.json`).

use hostbench_core::result::RunResult;

/// Pretty-printed JSON of one result, with a trailing newline.
pub fn render(r: &RunResult) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("a RunResult always serializes");
    s.push('\n');
    s
}
