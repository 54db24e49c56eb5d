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
//! - the value of a JSON member whose name says password (`"mysql_password": "PW"`);
//! - HTTP credentials in a header line: the credentials of `Authorization:` and
//!   `Proxy-Authorization:` after their scheme (`Authorization: Basic ***`), and the value
//!   of each cookie of `Cookie:` (`Cookie: session=***`), wherever the line is written
//!   (a `-H` word, a parameter, a JSON string with `\n` escapes, an HTML page).
//!
//! `--password VALUE` (two words) and ab's `-A user:PW`, `-P user:PW` and `-C name=VALUE`
//! can only be told apart in a word list: [`redact_args`].

use std::borrow::Cow;

/// What a hidden secret is replaced with.
pub const MASK: &str = "***";

/// `text` with every secret it holds replaced by [`MASK`] (see the module doc); borrowed
/// when there is none. Masking twice gives the same text.
pub fn mask(text: &str) -> Cow<'_, str> {
    // Cheap test first: every printer calls this on every line.
    if !text.contains('=')
        && !text.contains("://")
        && !text.contains("\":")
        && !has_credential_header(text)
    {
        return Cow::Borrowed(text);
    }
    let mut ranges = Vec::new();
    userinfo_ranges(text, &mut ranges);
    assignment_ranges(text, &mut ranges);
    json_ranges(text, &mut ranges);
    header_ranges(text, &mut ranges);
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

/// Which credential header, if any, ends right before the `:` at byte `colon`: its name is
/// the run of letters, digits, `-` and `_` before it, read case-insensitively, ending in
/// `authorization` (`Proxy-Authorization` too) or `cookie` (a `\nCookie` inside a JSON
/// string too).
fn credential_header(text: &str, colon: usize) -> Option<bool> {
    let name_start = text[..colon]
        .bytes()
        .rposition(|c| !(c.is_ascii_alphanumeric() || c == b'-' || c == b'_'))
        .map_or(0, |i| i + 1);
    let name = &text.as_bytes()[name_start..colon];
    let ends = |suffix: &str| {
        name.len() >= suffix.len()
            && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    };
    if ends("authorization") {
        Some(true)
    } else if ends("cookie") {
        Some(false)
    } else {
        None
    }
}

fn has_credential_header(text: &str) -> bool {
    text.match_indices(':')
        .any(|(p, _)| credential_header(text, p).is_some())
}

/// Where a header value that starts at `start` ends: at the end of its line (CR, LF, or
/// the `\n` and `\r` escapes of a JSON string), at a quote that ends the string it is in,
/// at HTML's `<`, or at a blank, unless the blank follows a `,` or `;` (a list goes on).
/// A quoted string after `=` (`username="bob"`, `username=\"bob\"`) is part of it.
fn header_value_end(text: &str, start: usize) -> usize {
    let b = text.as_bytes();
    let mut i = start;
    while let Some(&c) = b.get(i) {
        match c {
            b'\r' | b'\n' | b'<' | b'>' | b'\'' | b'`' => return i,
            b'\\' if b.get(i + 1) == Some(&b'"') => i += 2,
            b'\\' => return i,
            b'"' if i > start && b[i - 1] == b'=' => match text[i + 1..].find(['"', '\r', '\n']) {
                Some(k) if b[i + 1 + k] == b'"' => i += k + 2,
                Some(k) => return i + 1 + k,
                None => return b.len(),
            },
            b'"' => return i,
            c if c.is_ascii_whitespace() => {
                if i > start && matches!(b[i - 1], b',' | b';') {
                    i += 1;
                } else {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    i
}

/// `Authorization: SCHEME CREDENTIALS` (and `Proxy-Authorization`): the credentials, the
/// scheme kept; `Cookie: NAME=VALUE; ...`: each value, the names kept.
fn header_ranges(text: &str, ranges: &mut Vec<(usize, usize)>) {
    let b = text.as_bytes();
    for (p, _) in text.match_indices(':') {
        let Some(authorization) = credential_header(text, p) else {
            continue;
        };
        let mut v = p + 1;
        while matches!(b.get(v), Some(b' ' | b'\t')) {
            v += 1;
        }
        if authorization {
            // The scheme: a token followed by blanks and more (`Basic dXNlcg==`); a single
            // word is all credentials.
            let tok_end = text[v..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(text.len(), |k| v + k);
            let mut start = tok_end;
            while matches!(b.get(start), Some(b' ' | b'\t')) {
                start += 1;
            }
            let mut end = header_value_end(text, start);
            if tok_end == v || start == tok_end || end == start {
                start = v;
                end = header_value_end(text, v);
            }
            push_range(ranges, text, start, end);
        } else {
            let end = header_value_end(text, v);
            let mut at = v;
            for part in text[v..end].split(';') {
                let lead = part.len() - part.trim_start().len();
                let pair = part.trim();
                let (s, e) = match pair.find('=') {
                    Some(eq) => (at + lead + eq + 1, at + lead + pair.len()),
                    None => (at + lead, at + lead + pair.len()),
                };
                push_range(ranges, text, s, e);
                at += part.len() + 1;
            }
        }
    }
}

/// ab's options that take a value (`-n 10`, `-n10`), and those whose value is a secret:
/// `-A user:PW` and `-P user:PW` (Basic credentials; the user name is kept) and
/// `-C name=VALUE` (a cookie; the name is kept).
const AB_VALUE_OPTIONS: &str = "nctsbBpuTvgeCHPAXmEfZyxzW";

/// ab's `-A`/`-P`/`-C` value with its secret part hidden.
fn ab_secret_value(opt: char, value: &str) -> String {
    let keep = match opt {
        'A' | 'P' => value.find(':').map(|i| i + 1),
        _ => value.find('=').map(|i| i + 1),
    };
    match keep {
        Some(k) if &value[k..] != MASK && k < value.len() => format!("{}{MASK}", &value[..k]),
        Some(_) => value.to_string(),
        None => MASK.to_string(),
    }
}

/// `hostbench ab ...`'s words after the command: the values of `-A`, `-P` and `-C`
/// hidden, in every getopt form (`-A u:p`, `-Au:p`, `-kA u:p`).
fn redact_ab(args: &mut [String]) {
    let mut i = 0;
    while i < args.len() {
        let word = args[i].clone();
        i += 1;
        let Some(flags) = word
            .strip_prefix('-')
            .filter(|f| !f.is_empty() && !f.starts_with('-'))
        else {
            continue;
        };
        for (pos, c) in flags.char_indices() {
            if !AB_VALUE_OPTIONS.contains(c) {
                continue;
            }
            let rest = &flags[pos + c.len_utf8()..];
            let secret = matches!(c, 'A' | 'P' | 'C');
            if !rest.is_empty() {
                if secret {
                    args[i - 1] = format!(
                        "-{}{}",
                        &flags[..pos + c.len_utf8()],
                        ab_secret_value(c, rest)
                    );
                }
            } else if i < args.len() {
                if secret {
                    args[i] = ab_secret_value(c, &args[i]);
                }
                i += 1;
            }
            break;
        }
    }
}

/// A whole command line (`argv`, the program first) with secrets hidden: every word
/// through [`mask`], the word after a password option written without `=`
/// (`--mysql-password VALUE`, `-p` excluded), and for `hostbench ab` the values of `-A`,
/// `-P` and `-C`.
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut args = args.to_vec();
    if args.get(1).is_some_and(|c| c == "ab") {
        redact_ab(&mut args[2..]);
    }
    let mut out = Vec::with_capacity(args.len());
    let mut hide_next = false;
    for a in &args {
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
        fn any_text_masks_without_panic(
            s in "(\\PC|[=:/@\"\\\\&; ]|password|://|Authorization: |Cookie: |Basic ){0,40}"
        ) {
            let once = mask(&s).into_owned();
            proptest::prop_assert_eq!(mask(&once).into_owned(), once);
        }
    }

    #[test]
    fn credential_headers_keep_their_scheme_and_cookie_names() {
        for (raw, want) in [
            ("Authorization: Basic dTpw", "Authorization: Basic ***"),
            (
                "proxy-authorization:Bearer abc.def",
                "proxy-authorization:Bearer ***",
            ),
            ("Authorization: tok123", "Authorization: ***"),
            ("Cookie: s=1; theme=dark", "Cookie: s=***; theme=***"),
            ("Cookie: opaque", "Cookie: ***"),
            // A -H word in a command line joined with blanks: the next words stay.
            (
                "-H Authorization: Basic dTpw -n 10 http://h/",
                "-H Authorization: Basic *** -n 10 http://h/",
            ),
            // httperf's escaped line ends, and lines of a parameter.
            (
                "--add-header=Authorization: Basic dTpw\\nCookie: a=b\\n",
                "--add-header=Authorization: Basic ***\\nCookie: a=***\\n",
            ),
            (
                "X-A: 1\nAuthorization: Bearer t\r\nCookie: a=b",
                "X-A: 1\nAuthorization: Bearer ***\r\nCookie: a=***",
            ),
            (
                r#"Authorization: Digest username="bob", response="6629fae4", nc=1"#,
                "Authorization: Digest ***",
            ),
            (
                r#"{"headers": "X: 1\nAuthorization: Digest username=\"b\", response=\"66\"\nY: 2"}"#,
                r#"{"headers": "X: 1\nAuthorization: Digest ***\nY: 2"}"#,
            ),
            ("<td>Cookie: s=abc</td>", "<td>Cookie: s=***</td>"),
            ("'Authorization: Basic dTpw'", "'Authorization: Basic ***'"),
            ("Authorization:", "Authorization:"),
            ("authorization: ", "authorization: "),
            ("time: 1.5 s", "time: 1.5 s"),
        ] {
            assert_eq!(mask(raw), want, "{raw}");
            assert_eq!(mask(want), want, "masking twice: {want}");
        }
        assert!(matches!(mask("Host: h"), Cow::Borrowed(_)));
    }

    #[test]
    fn ab_credentials_in_a_command_line() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let r = redact_args(&args(&[
            "hostbench",
            "ab",
            "-A",
            "bob:pw1",
            "-kPu:pw2",
            "-C",
            "sid=pw3",
            "-Csid=pw4",
            "-n",
            "-A",
            "-H",
            "Cookie: a=pw5",
            "http://h/",
        ]));
        assert_eq!(
            r.join(" "),
            "hostbench ab -A bob:*** -kPu:*** -C sid=*** -Csid=*** -n -A -H Cookie: a=*** http://h/"
        );
        // Only ab's grammar reads -A so.
        let other = args(&["hostbench", "fio", "-A", "x:y"]);
        assert_eq!(redact_args(&other), other);
        assert_eq!(
            redact_args(&args(&["hostbench", "ab", "-A", "nocolon"]))[3],
            "***"
        );
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
