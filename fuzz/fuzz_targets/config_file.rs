//! Fuzzes sysbench's `--config-file` parser (`crates/cli/src/config_file.rs`): any text must
//! turn into options or an error, never panic, and a password in it never shows in the error.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../crates/cli/src/config_file.rs"]
mod config_file;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match config_file::parse(&text, "fuzz.cfg") {
        Ok(opts) => assert!(opts.iter().all(|o| o.starts_with("--"))),
        Err(e) => {
            for line in text.lines() {
                let l = line.trim();
                if let Some(rest) = l.strip_prefix("password ")
                    && rest.len() > 3
                    && !rest.contains("password")
                {
                    assert!(!e.contains(rest.trim()), "{e}");
                }
            }
        }
    }
});
