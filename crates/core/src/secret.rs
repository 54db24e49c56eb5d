//! Secrets never leave the process: passwords in connection URLs, `--*password*` options
//! and parameters are replaced by `***` before anything is printed or saved.
//!
//! Invariant: every string that may hold a connection target goes through [`redact_url`]
//! (errors, reports) or [`redact_arg`] (saved command lines); parameters whose name contains
//! `password` are blanked by [`crate::params::Params::redact_secrets`].

use std::borrow::Cow;

/// What a hidden secret is replaced with.
pub const MASK: &str = "***";

/// `scheme://user:password@host/...` with the password replaced by `***`; anything else
/// unchanged. Also finds URLs inside a longer text (an error message).
pub fn redact_url(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut rest = text;
    let mut changed = false;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends at the first '/', whitespace or end; the userinfo at its last '@'.
        let end = tail
            .find(|c: char| c == '/' || c.is_whitespace() || c == '?' || c == '#')
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => {
                let userinfo = &authority[..at];
                match userinfo.find(':') {
                    Some(colon) => {
                        out.push_str(&userinfo[..colon + 1]);
                        out.push_str(MASK);
                        out.push_str(&authority[at..]);
                        changed = true;
                    }
                    None => out.push_str(authority),
                }
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// One command-line word with secrets hidden: `--mysql-password=x`, `--pgsql_password=x`,
/// `--password x`'s value is handled by the caller (see [`redact_args`]); URLs anywhere.
pub fn redact_arg(arg: &str) -> String {
    if let Some(body) = arg.strip_prefix("--")
        && let Some((name, _)) = body.split_once('=')
        && is_secret_name(name)
    {
        return format!("--{name}={MASK}");
    }
    redact_url(arg).into_owned()
}

/// A whole command line with secrets hidden, including `--password VALUE` (two words).
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
        out.push(redact_arg(a));
    }
    out
}

/// True for option or parameter names that carry a password.
pub fn is_secret_name(name: &str) -> bool {
    name.to_ascii_lowercase().contains("password")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_password() {
        assert_eq!(
            redact_url("postgres://bob:s3cr%40t@db:5432/x"),
            "postgres://bob:***@db:5432/x"
        );
        assert_eq!(
            redact_url("mysql://root@127.0.0.1/test"),
            "mysql://root@127.0.0.1/test"
        );
        assert_eq!(
            redact_url("cannot connect to mysql://u:p@h/db: refused"),
            "cannot connect to mysql://u:***@h/db: refused"
        );
        assert_eq!(redact_url("sqlite:sbtest.db"), "sqlite:sbtest.db");
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
