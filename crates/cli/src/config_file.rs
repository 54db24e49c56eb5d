//! sysbench's `--config-file`: one option per line, `name=value` (`--` before the name and
//! quotes around the value optional), `#` comments and blank lines skipped. The options come
//! before the command line's, so the command line wins. Kept apart from the front-end so
//! that the fuzz target (`fuzz/fuzz_targets/config_file.rs`) compiles it alone.

use hostbench_core::secret::{MASK, is_secret_name};

/// Longest line accepted: a longer one is not an option.
const LINE_MAX: usize = 64 << 10;

/// The lines of `text` (read from `origin`) as `--name=value` words, or an error that names
/// the line and never shows a password.
pub fn parse(text: &str, origin: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let at = format!("{origin}:{}", i + 1);
        if l.len() > LINE_MAX {
            return Err(format!(
                "{at}: the line is {} bytes long (at most {LINE_MAX}); is this a config file?",
                l.len()
            ));
        }
        let Some((k, v)) = l.split_once('=') else {
            // `mysql-password hunter2`: the rest of the line may be the password.
            let name = l.split_whitespace().next().unwrap_or_default();
            let shown = if is_secret_name(name) {
                format!("{name} {MASK}")
            } else {
                l.chars().take(80).collect()
            };
            return Err(format!("{at}: expected name=value, found '{shown}'"));
        };
        let k = k.trim().trim_start_matches("--");
        if k.is_empty() || k.contains(char::is_whitespace) {
            return Err(format!(
                "{at}: '{}' is not an option name; write name=value",
                if is_secret_name(k) { MASK } else { k }
            ));
        }
        let v = v.trim().trim_matches('"').trim_matches('\'');
        out.push(format!("--{k}={v}"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_options() {
        let o = parse("# c\n\nthreads=2\n--cpu-max-prime = \"300\"\n", "f").unwrap();
        assert_eq!(o, ["--threads=2", "--cpu-max-prime=300"]);
        let e = parse("threads=1\nmysql-password hunter2\n", "f.cfg").unwrap_err();
        assert_eq!(
            e,
            "f.cfg:2: expected name=value, found 'mysql-password ***'"
        );
        assert!(
            parse("a b=1", "f")
                .unwrap_err()
                .contains("not an option name")
        );
    }
}
