//! Fuzzes the results import reader (`crates/store/src/export.rs`): any bytes must read as
//! runs or fail with an error, never panic; what reads must export and read back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(runs) = hostbench_store::read_runs(data, "fuzz.json") {
        let doc = hostbench_store::export_document(&runs);
        let again = hostbench_store::parse_runs(&doc, "export").expect("an export reads back");
        assert_eq!(again, runs);
    }
});
