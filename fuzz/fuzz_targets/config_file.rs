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
            // The error names one line; if that line is `password VALUE`, VALUE is not shown.
            for (i, line) in text.lines().enumerate() {
                let l = line.trim();
                if e.starts_with(&format!("fuzz.cfg:{}:", i + 1))
                    && let Some(rest) = l.strip_prefix("password ")
                    && rest.trim().len() > 3
                    && rest.trim().chars().all(|c| c.is_ascii_alphanumeric())
                    && !"password".contains(rest.trim())
                {
                    let after = &e[e.find(':').map_or(0, |p| p + 1)..];
                    let after = &after[after.find(':').map_or(0, |p| p + 1)..];
                    assert!(!after.contains(rest.trim()), "{e}");
                }
            }
        }
    }
});
