//! Fuzzes fio's job-file parser: any bytes must parse or fail with an error, never panic,
//! and what parses must survive the canonical text round trip.
#![no_main]

use hostbench_workloads::disk::fio::job;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let env = |k: &str| (k.len() < 4).then(|| "1k".to_string());
    if let Ok(sections) = job::parse_ini(&text, "fuzz", &env) {
        let _ = job::jobs_from_sections(&sections);
        assert!(job::from_text(&job::to_text(&sections)).is_ok());
    }
});
