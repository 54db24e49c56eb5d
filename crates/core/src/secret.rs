//! Secrets never leave the process: passwords are replaced by `***` before anything is
//! printed, saved or written to a file.
//!
//! Invariant: [`mask`] is the one masking function. Every printer runs its text through it
//! (the binary's stdout and stderr writers, the files it writes, saved command lines and
//! parameters), so a secret the code around it did not expect is still hidden. It finds:
//! - the password in a URL's user info (`postgres://bob:PW@db/x`);
//! - the value of any `NAME=VALUE` whose name says password (`--mysql-password=PW`,
//!   `?password=PW`, `&password=PW`, a libpq `password=PW`, `-spassword=PW`), including
//!   typos of it (`--pgsql-pasword=PW`), so "did you mean" messages do not echo it;
//! - the value of a JSON member whose name says password (`"mysql_password": "PW"`).
//!
//! `--password VALUE` (two words) can only be told apart in a word list: [`redact_args`].

use std::borrow::Cow;

/// What a hidden secret is replaced with.
pub const MASK: &str = "***";

/// `text` with every secret it holds replaced by [`MASK`] (see the module doc); borrowed
/// when there is none. Masking twice gives the same text.
pub fn mask(text: &str) -> Cow<'_, str> {
    // Cheap test first: every printer calls this on every line.
    if !text.contains('=') && !text.contains("://") && !text.contains("\":") {
        return Cow::Borrowed(text);
    }
    let mut ranges = Vec::new();
    userinfo_ranges(text, &mut ranges);
    assignment_ranges(text, &mut ranges);
    json_ranges(text, &mut ranges);
    if ranges.is_empty() {
        return Cow::Borrowed(text);
    }
    ranges.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in ranges {
        if start < at {
            // Overlaps a range already masked: mask up to its end only.
            if end > at {
                at = end;
            }
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(MASK);
        at = end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// True for option, parameter and query-parameter names that carry a password, or look like
/// a typo of one (`pasword`, `passwrd`): `mysql_password`, `--pgsql-password`, `PGPASSWORD`,
/// `passwd`, `pwd`. Names are split at `-`, `_` and `.`.
pub fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
        .any(|t| {
            matches!(
                t,
                "pwd" | "pw" | "pass" | "passwd" | "passphrase" | "secret"
            ) || t.contains("password")
                || t.ends_with("passwd")
                || (t.len() >= 6
                    && (crate::suggest::distance(t, "password") <= 2
                        || crate::suggest::distance(t, "passwd") <= 1))
        })
}

/// A value ends at whitespace, a query separator, a quote, a backslash (a JSON escape) or
/// an angle bracket (HTML).
fn ends_value(c: char) -> bool {
    c.is_whitespace() || matches!(c, '&' | '"' | '\'' | '`' | '\\' | '<' | '>')
}

fn push_range(ranges: &mut Vec<(usize, usize)>, text: &str, start: usize, end: usize) {
    if end > start && &text[start..end] != MASK {
        ranges.push((start, end));
    }
}

/// `scheme://user:PASSWORD@host`.
fn userinfo_ranges(text: &str, ranges: &mut Vec<(usize, usize)>) {
    let mut from = 0;
    while let Some(i) = text[from..].find("://") {
        let start = from + i + 3;
        let tail = &text[start..];
        let end = tail
            .find(|c: char| ends_value(c) || matches!(c, '/' | '?' | '#'))
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority[..at].find(':')
        {
            push_range(ranges, text, start + colon + 1, start + at);
        }
        from = start + end;
    }
}

/// `NAME=VALUE` where NAME says password.
fn assignment_ranges(text: &str, ranges: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    for (p, _) in text.match_indices('=') {
        let name_start = text[..p]
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
            .map_or(0, |(i, c)| i + c.len_utf8());
        if name_start == p || !is_secret_name(&text[name_start..p]) {
            continue;
        }
        // `password==x` or `password= x`: nothing to hide right here.
        if bytes.get(p + 1).is_none_or(|&b| b == b'=') {
            continue;
        }
        let value = &text[p + 1..];
        let end = value.find(ends_value).unwrap_or(value.len());
        push_range(ranges, text, p + 1, p + 1 + end);
    }
}

/// `"NAME": "VALUE"` where NAME says password.
fn json_ranges(text: &str, ranges: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    for (p, _) in text.match_indices("\":") {
        let Some(open) = text[..p].rfind('"') else {
            continue;
        };
        if !is_secret_name(&text[open + 1..p]) {
            continue;
        }
        let mut v = p + 2;
        while bytes.get(v).is_some_and(|b| b.is_ascii_whitespace()) {
            v += 1;
        }
        if bytes.get(v) != Some(&b'"') {
            continue;
        }
        let start = v + 1;
        let mut end = text.len();
        let mut escaped = false;
        for (k, c) in text[start..].char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    end = start + k;
                    break;
                }
                _ => {}
            }
        }
        push_range(ranges, text, start, end);
    }
}

/// A whole command line with secrets hidden: every word through [`mask`], and the word
/// after a password option written without `=` (`--mysql-password VALUE`, `-p` excluded).
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut hide_next = false;
    for a in args {
        if hide_next {
            out.push(MASK.to_string());
            hide_next = false;
            continue;
        }
        if let Some(body) = a.strip_prefix("--")
            && !body.contains('=')
            && is_secret_name(body)
        {
            hide_next = true;
        }
        out.push(mask(a).into_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_password() {
        assert_eq!(
            mask("postgres://bob:s3cr%40t@db:5432/x"),
            "postgres://bob:***@db:5432/x"
        );
        assert_eq!(
            mask("mysql://root@127.0.0.1/test"),
            "mysql://root@127.0.0.1/test"
        );
        assert_eq!(
            mask("cannot connect to mysql://u:p@h/db: refused"),
            "cannot connect to mysql://u:***@h/db: refused"
        );
        assert_eq!(
            mask("'postgres://u:p@h/db' and 'mysql://v:q@h'"),
            "'postgres://u:***@h/db' and 'mysql://v:***@h'"
        );
        assert_eq!(mask("sqlite:sbtest.db"), "sqlite:sbtest.db");
        assert_eq!(
            mask("postgres://h/db?user=u&password=pw&sslmode=disable"),
            "postgres://h/db?user=u&password=***&sslmode=disable"
        );
        assert_eq!(
            mask("postgres://h/db?PASSWORD=pw"),
            "postgres://h/db?PASSWORD=***"
        );
    }

    #[test]
    fn assignments_and_typos_lose_their_value() {
        assert_eq!(
            mask("invalid option: --pgsql-pasword=hunter3 (did you mean --pgsql-password?)"),
            "invalid option: --pgsql-pasword=*** (did you mean --pgsql-password?)"
        );
        assert_eq!(mask("--mysql_password=a=b c"), "--mysql_password=*** c");
        assert_eq!(
            mask("host=h password=x port=5"),
            "host=h password=*** port=5"
        );
        assert_eq!(mask("-spassword=x"), "-spassword=***");
        assert_eq!(mask("PGPASSWORD=x"), "PGPASSWORD=***");
        assert_eq!(mask("--passes=3 --time=1"), "--passes=3 --time=1");
        assert_eq!(mask("a == b, x = 1"), "a == b, x = 1");
        assert_eq!(mask("password="), "password=");
    }

    #[test]
    fn json_members_lose_their_value() {
        assert_eq!(
            mask(r#"{"mysql_password": "x\"y", "threads": 1}"#),
            r#"{"mysql_password": "***", "threads": 1}"#
        );
        assert_eq!(
            mask(r#"{"password":null,"a":"b"}"#),
            r#"{"password":null,"a":"b"}"#
        );
        let v: serde_json::Value =
            serde_json::from_str(&mask(r#"{"pgsql_password":"\\\"","u":"p://a:\"b@c"}"#)).unwrap();
        assert_eq!(v["pgsql_password"], "***");
    }

    #[test]
    fn masking_is_idempotent_and_cheap_when_clean() {
        for s in [
            "postgres://u:p@h/d?password=q",
            "--mysql-password=x",
            r#""password": "x""#,
        ] {
            let once = mask(s).into_owned();
            assert_eq!(mask(&once), once);
        }
        assert!(matches!(mask("events/s: 123.4"), Cow::Borrowed(_)));
    }

    proptest::proptest! {
        #[test]
        fn any_text_masks_without_panic(s in "(\\PC|[=:/@\"\\\\&]|password|://){0,40}") {
            let once = mask(&s).into_owned();
            proptest::prop_assert_eq!(mask(&once).into_owned(), once);
        }
    }

    #[test]
    fn secret_names() {
        for n in [
            "password",
            "mysql_password",
            "--pgsql-password",
            "PGPASSWORD",
            "passwd",
            "pasword",
            "passwrd",
            "mysql-pasword",
            "pwd",
        ] {
            assert!(is_secret_name(n), "{n}");
        }
        for n in ["passes", "threads", "mysql_user", "report_interval", "path"] {
            assert!(!is_secret_name(n), "{n}");
        }
    }

    #[test]
    fn args_lose_their_password() {
        let a: Vec<String> = [
            "oltp_read_write",
            "--mysql-password=hunter2",
            "--db-url=postgres://a:hunter2@h/d",
            "--password",
            "hunter2",
            "run",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let r = redact_args(&a).join(" ");
        assert!(!r.contains("hunter2"), "{r}");
        assert!(r.contains("--mysql-password=***"), "{r}");
        assert!(r.ends_with("run"), "{r}");
    }
}
