//! Fuzzes the suite-file parser (`crates/cli/src/suite/file.rs`, compiled in from the binary
//! crate's source): any bytes must parse into a suite or fail with an error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

// `file.rs` names `super::stability`: both sit at the crate root here.
#[allow(dead_code, unused_imports)]
#[path = "../../crates/cli/src/suite/file.rs"]
mod file;
#[allow(dead_code)]
#[path = "../../crates/cli/src/suite/stability.rs"]
mod stability;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = file::parse(&text, "fuzz.toml", "fuzz.toml");
});
