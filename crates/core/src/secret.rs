//! Secrets never leave the process: passwords, tokens and keys are replaced by `***` before
//! anything is printed, saved or written to a file.
//!
//! Invariant: [`mask`] is the one masking function. Every printer runs its text through it
//! (the binary's stdout and stderr writers, the files it writes, saved command lines and
//! parameters), so a secret the code around it did not expect is still hidden. Only help,
//! usage and version text, which is hostbench's own, is printed without it. It finds:
//! - the password in a URL's user info (`postgres://bob:PW@db/x`);
//! - the value of any `NAME=VALUE` whose name says secret ([`is_secret_name`]:
//!   `--mysql-password=PW`, `?password=PW`, a libpq `password=PW`, `-spassword=PW`,
//!   `?access_token=T`, `&api_key=K`), including typos of password (`--pgsql-pasword=PW`),
//!   so "did you mean" messages do not echo it; and of a query parameter `?key=`, `&auth=`,
//!   `&sig=` (names too common to hide elsewhere);
//! - the value of a JSON member whose name says secret (`"mysql_password": "PW"`);
//! - HTTP credentials in a header line: the credentials of `Authorization:` and
//!   `Proxy-Authorization:` after their scheme (`Authorization: Basic ***`; a quoted
//!   credential whole), the value of each cookie of `Cookie:` (`Cookie: session=***`), the
//!   value of a `Set-Cookie:` (its attributes kept), and the value of a header whose name
//!   says secret (`X-Api-Key: ***`), wherever the line is written (a `-H` word, a
//!   parameter, a JSON string with `\n` escapes, an HTML page). A header name starts a
//!   line, a word or a value: inside a URL (`/static/cookie:abc`) it is not one.
//!
//! `--password VALUE` (two words) and ab's `-A user:PW`, `-P user:PW` and `-C name=VALUE`
//! can only be told apart in a word list: [`redact_args`].

use std::borrow::Cow;

/// What a hidden secret is replaced with.
pub const MASK: &str = "***";

/// `text` with every secret it holds replaced by [`MASK`] (see the module doc); borrowed
/// when there is none. Masking twice gives the same text: the rules are applied again to
/// their own output until nothing changes (hiding a value can change what is around it: a
/// `Cookie:` pair whose `=` was inside a hidden value is hidden whole the next time), in
/// practice once or twice.
pub fn mask(text: &str) -> Cow<'_, str> {
    let Some(mut out) = mask_once(text) else {
        return Cow::Borrowed(text);
    };
    for _ in 0..8 {
        match mask_once(&out) {
            Some(next) => out = next,
            None => break,
        }
    }
    Cow::Owned(out)
}

/// One pass of the rules: `None` when they hide nothing.
fn mask_once(text: &str) -> Option<String> {
    // Cheap test first: every printer calls this on every line.
    if !text.contains('=')
        && !text.contains("://")
        && !text.contains("\":")
        && !has_credential_header(text)
    {
        return None;
    }
    let mut ranges = Vec::new();
    userinfo_ranges(text, &mut ranges);
    assignment_ranges(text, &mut ranges);
    json_ranges(text, &mut ranges);
    header_ranges(text, &mut ranges);
    if ranges.is_empty() {
        return None;
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
    (out != text).then_some(out)
}

/// True for option, parameter, header and query-parameter names that carry a secret, in
/// any context (`NAME=VALUE`, a JSON member, `--NAME VALUE`, a header `Name: value`). Names
/// are split into words at anything but letters and digits, and read case-insensitively:
/// - a password: a word `pwd`, `pw`, `pass`, `passwd`, `passphrase`, or one containing
///   `password` (`PGPASSWORD`), or a typo of it (`pasword`, `passwrd`);
/// - a word `secret` (`client_secret`);
/// - a token: the last word ending in `token` (`access_token`, `X-Auth-Token`,
///   `csrftoken`), not `tokens` nor `token_bucket`;
/// - an API key: a word containing `apikey`, or the last word `key` after `api`, `access`,
///   `secret`, `private`, `auth` or `subscription` (`X-Api-Key`, `secret_key`), not
///   `sort_key` nor `Sec-WebSocket-Key`;
/// - a word `credentials`.
pub fn is_secret_name(name: &str) -> bool {
    // A typo of `target`, at most `edits` away. Cheap test first (this runs for every
    // `NAME:` of every printed line): such a word keeps all but `edits` of the target's
    // letters.
    let near = |w: &str, target: &str, edits: usize| {
        let mut left = [0u8; 26];
        for b in target.bytes() {
            left[usize::from(b - b'a')] += 1;
        }
        let kept = w
            .bytes()
            .filter(|b| {
                let b = b.to_ascii_lowercase();
                b.is_ascii_lowercase() && {
                    let n = &mut left[usize::from(b - b'a')];
                    let hit = *n > 0;
                    *n = n.saturating_sub(1);
                    hit
                }
            })
            .count();
        kept + edits >= target.len()
            && w.len() <= target.len() + edits
            && crate::suggest::distance(&w.to_ascii_lowercase(), target) <= edits
    };
    let is = |w: &str, v: &str| w.eq_ignore_ascii_case(v);
    let holds = |w: &str, v: &str| {
        w.as_bytes()
            .windows(v.len())
            .any(|x| x.eq_ignore_ascii_case(v.as_bytes()))
    };
    let ends = |w: &str, v: &str| {
        w.len() >= v.len() && w.as_bytes()[w.len() - v.len()..].eq_ignore_ascii_case(v.as_bytes())
    };
    let password = |w: &str| {
        [
            "pwd",
            "pw",
            "pass",
            "passwd",
            "passphrase",
            "secret",
            "credentials",
        ]
        .iter()
        .any(|v| is(w, v))
            || holds(w, "password")
            || ends(w, "passwd")
            // A typo keeps the `w` that no ordinary word near "password" has: `passed`,
            // `passes`, `passport`, `pass_rate` are not secrets.
            || ((6..=10).contains(&w.len())
                && w.bytes().any(|c| c.eq_ignore_ascii_case(&b'w'))
                && (near(w, "password", 2) || near(w, "passwd", 1)))
    };
    let (mut before, mut last) = ("", "");
    for w in name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
    {
        if password(w) || holds(w, "apikey") {
            // The short forms name a password only as the last word (`db_pass`, `?pass=`),
            // not `pass_rate` or `pw_hist`.
            if !["pass", "pw", "pwd"].iter().any(|v| is(w, v)) {
                return true;
            }
        }
        (before, last) = (last, w);
    }
    if ["pass", "pw", "pwd"].iter().any(|v| is(last, v)) {
        return true;
    }
    ends(last, "token")
        || (is(last, "key")
            && ["api", "access", "secret", "private", "auth", "subscription"]
                .iter()
                .any(|v| is(before, v)))
}

/// Query parameters that carry a secret only as such (`?key=...`, `&sig=...`): too common
/// as words to be hidden anywhere else. Besides every [`is_secret_name`].
const QUERY_SECRETS: &[&str] = &[
    "key",
    "auth",
    "sig",
    "signature",
    "x-amz-signature",
    "x-goog-signature",
    "sessionid",
    "phpsessid",
    "jsessionid",
];

/// A value ends at whitespace, a query separator, a quote, a backslash (a JSON escape) or
/// an angle bracket (HTML).
fn ends_value(c: char) -> bool {
    c.is_whitespace() || matches!(c, '&' | '"' | '\'' | '`' | '\\' | '<' | '>')
}

/// Hides `text[start..end]`, unless it is already hidden: [`MASK`] alone or followed only by
/// closing punctuation (`password=***)` in a message that put a masked URL in brackets;
/// masking it again would eat the bracket, and masking twice must change nothing).
fn push_range(ranges: &mut Vec<(usize, usize)>, text: &str, start: usize, end: usize) {
    let masked = text[start..end].strip_prefix(MASK).is_some_and(|rest| {
        rest.bytes().all(|b| {
            matches!(
                b,
                b')' | b']' | b'}' | b'.' | b',' | b';' | b':' | b'!' | b'?'
            )
        })
    });
    if end > start && !masked {
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

/// `NAME=VALUE` where NAME says secret ([`is_secret_name`]), and a query parameter
/// (`?NAME=VALUE`, `&NAME=VALUE`) named in `QUERY_SECRETS`.
fn assignment_ranges(text: &str, ranges: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    // Where the value after the last secret `=` ends: the next one ends there too when it
    // comes before it, so each stretch of text is searched once (a run without blanks
    // holding thousands of `token=`s took seconds when every `=` searched to its end).
    let mut value_end = 0;
    for (p, _) in text.match_indices('=') {
        let name_start = text[..p]
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
            .map_or(0, |(i, c)| i + c.len_utf8());
        if name_start == p {
            continue;
        }
        let name = &text[name_start..p];
        let query = name_start > 0 && matches!(bytes[name_start - 1], b'?' | b'&');
        let query_secret = query && QUERY_SECRETS.iter().any(|q| q.eq_ignore_ascii_case(name));
        if !(query_secret || is_secret_name(name)) {
            continue;
        }
        // `password==x` or `password= x`: nothing to hide right here.
        if bytes.get(p + 1).is_none_or(|&b| b == b'=') {
            continue;
        }
        if value_end <= p {
            value_end = text[p + 1..]
                .find(ends_value)
                .map_or(text.len(), |k| p + 1 + k);
        }
        push_range(ranges, text, p + 1, value_end);
    }
}

/// `"NAME": "VALUE"` where NAME says secret.
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

/// What a credential header hides.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Header {
    /// `Authorization`, `Proxy-Authorization`: the credentials after the scheme.
    Authorization,
    /// `Cookie`: each cookie's value.
    Cookie,
    /// `Set-Cookie`: the cookie's value, not its attributes.
    SetCookie,
    /// A name that says secret (`X-Api-Key`, `X-Auth-Token`): the whole value.
    Secret,
}

/// Which credential header, if any, ends at the `:` at byte `colon` (blanks between the
/// name and the colon allowed). Its name is the run of letters, digits, `-` and `_` before
/// it, read case-insensitively: ending in `authorization`, `set-cookie` or `cookie`, or
/// saying secret ([`is_secret_name`]). A header name starts a line, a word or a value:
/// after a URL's `/`, `?`, `#`, `%`, `.`, `@`, `:`, `&`, `~`, `+`, `*`, `$` or `!` it is
/// part of the URL (`/static/cookie:abc`), and is left alone. After a backslash, an escaped
/// line end (`\nCookie:` in a JSON string) is not part of the name.
fn credential_header(text: &str, colon: usize) -> Option<Header> {
    let b = text.as_bytes();
    let mut end = colon;
    while end > 0 && matches!(b[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    let mut start = b[..end]
        .iter()
        .rposition(|&c| !(c.is_ascii_alphanumeric() || c == b'-' || c == b'_'))
        .map_or(0, |i| i + 1);
    match start.checked_sub(1).map(|i| b[i]) {
        Some(b'\\') if matches!(b.get(start), Some(b'n' | b'r' | b't')) => start += 1,
        Some(
            b'/' | b'?' | b'#' | b'%' | b'.' | b'@' | b':' | b'&' | b'~' | b'+' | b'*' | b'$'
            | b'!',
        ) => return None,
        _ => {}
    }
    let name = &text[start..end];
    let ends = |suffix: &str| {
        name.len() >= suffix.len()
            && name.as_bytes()[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    };
    if name.is_empty() {
        None
    } else if ends("authorization") {
        Some(Header::Authorization)
    } else if ends("set-cookie") || ends("set-cookie2") {
        Some(Header::SetCookie)
    } else if ends("cookie") {
        Some(Header::Cookie)
    } else if is_secret_header_name(name) {
        Some(Header::Secret)
    } else {
        None
    }
}

/// A `NAME:` that is a header whose value is a secret: an HTTP-style name with a `-` that
/// says secret (`X-Api-Key`, `X-Auth-Token`, `Private-Token`), or one of a few whole
/// words. Not any word that says secret: report lines start with names too (fio's
/// `token: (g=0): rw=read` for a job named token, `Pass: 3 of 5`).
fn is_secret_header_name(name: &str) -> bool {
    (name.contains('-') && is_secret_name(name))
        || [
            "password",
            "passwd",
            "passphrase",
            "apikey",
            "api_key",
            "secret",
        ]
        .iter()
        .any(|v| name.eq_ignore_ascii_case(v))
}

/// MySQL's `Access denied ... (using password: YES)`: the value says whether a password
/// was sent, not which, and is kept. Only `using password:` followed by `YES` or `NO`
/// (with the message's closing bracket) qualifies; any other value is hidden.
fn is_mysql_password_flag(text: &str, colon: usize, value: &str) -> bool {
    let before = text[..colon].trim_end_matches([' ', '\t']);
    let lead = "using password";
    before.len() >= lead.len()
        && before.as_bytes()[before.len() - lead.len()..].eq_ignore_ascii_case(lead.as_bytes())
        && matches!(value.trim_end_matches(')'), "YES" | "NO")
}

fn has_credential_header(text: &str) -> bool {
    text.match_indices(':')
        .any(|(p, _)| credential_header(text, p).is_some())
}

/// Where a header value that starts at `start` ends: at the end of its line (CR, LF, or
/// the `\n` and `\r` escapes of a JSON string), at a quote that ends the string it is in,
/// at HTML's `<`, or at a blank, unless the blank follows a `,` or `;` (a list goes on).
/// A quoted string after `=` (`username="bob"`, `username=\"bob\"`) is part of it, and so
/// is a value that is a quoted string itself (`quoted_end`).
fn header_value_end(text: &str, start: usize) -> usize {
    if let Some(end) = quoted_end(text, start) {
        return end;
    }
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

/// A value that starts with a quote (`Bearer "TOKEN"`, `'TOKEN'`, or JSON's `\"TOKEN\"`)
/// ends after the quote that closes it, on the same line (or at the line's end). A `"`
/// or `'` that closes the string the header is in instead (`"Authorization:", "x": 1` in
/// JSON) is followed by no letter or digit before the next quote: not a value.
fn quoted_end(text: &str, start: usize) -> Option<usize> {
    let rest = &text[start..];
    let (open, close): (&str, &str) = if rest.starts_with("\\\"") {
        ("\\\"", "\\\"")
    } else if rest.starts_with('"') {
        ("\"", "\"")
    } else if rest.starts_with('\'') {
        ("'", "'")
    } else {
        return None;
    };
    let body = &rest[open.len()..];
    let line = body
        .find(['\r', '\n'])
        .into_iter()
        .chain(body.find("\\n"))
        .chain(body.find("\\r"))
        .min()
        .unwrap_or(body.len());
    let (inner, end) = match body[..line].find(close) {
        Some(k) => (&body[..k], k + close.len()),
        None => (&body[..line], line),
    };
    inner
        .bytes()
        .any(|c| c.is_ascii_alphanumeric())
        .then_some(start + open.len() + end)
}

/// `Authorization: SCHEME CREDENTIALS` (and `Proxy-Authorization`): the credentials, the
/// scheme kept; `Cookie: NAME=VALUE; ...`: each value, the names kept; `Set-Cookie:
/// NAME=VALUE; Path=/; ...`: the value, the attributes kept; a header named secret: its
/// value.
fn header_ranges(text: &str, ranges: &mut Vec<(usize, usize)>) {
    let b = text.as_bytes();
    for (p, _) in text.match_indices(':') {
        let Some(header) = credential_header(text, p) else {
            continue;
        };
        let mut v = p + 1;
        while matches!(b.get(v), Some(b' ' | b'\t')) {
            v += 1;
        }
        match header {
            Header::Authorization => {
                // The scheme: a token followed by blanks and more (`Basic dXNlcg==`); a
                // single word is all credentials.
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
            }
            Header::Secret => {
                let end = header_value_end(text, v);
                if !is_mysql_password_flag(text, p, &text[v..end]) {
                    push_range(ranges, text, v, end);
                }
            }
            Header::Cookie | Header::SetCookie if quoted_end(text, v).is_some() => {
                push_range(ranges, text, v, header_value_end(text, v));
            }
            Header::Cookie | Header::SetCookie => {
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
                    if header == Header::SetCookie {
                        // The rest are attributes (Path, Expires, HttpOnly, ...).
                        break;
                    }
                    at += part.len() + 1;
                }
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

/// hostbench's own long options in ab's grammar that take a value (`--label NAME` or
/// `--label=NAME`); the ab front-end's test checks it accepts exactly these with a value.
pub const AB_LONG_VALUE_OPTIONS: &[&str] = &["label", "results-db", "format"];

/// `hostbench ab ...`'s words after the command: the values of `-A`, `-P` and `-C`
/// hidden, in every getopt form (`-A u:p`, `-Au:p`, `-kA u:p`), and an `-H` value through
/// [`mask`] (`-HX-Api-Key: ...` is one word). The value of every option is skipped as ab
/// skips it, so a value that looks like an option (`--label -x`) does not shift the rest.
fn redact_ab(args: &mut [String]) {
    let mut i = 0;
    while i < args.len() {
        let word = args[i].clone();
        i += 1;
        if let Some(long) = word.strip_prefix("--") {
            if !long.contains('=') && AB_LONG_VALUE_OPTIONS.contains(&long) {
                i += 1;
            }
            continue;
        }
        let Some(flags) = word.strip_prefix('-').filter(|f| !f.is_empty()) else {
            continue;
        };
        for (pos, c) in flags.char_indices() {
            if !AB_VALUE_OPTIONS.contains(c) {
                continue;
            }
            let rest = &flags[pos + c.len_utf8()..];
            let hide = |value: &str| match c {
                'A' | 'P' | 'C' => ab_secret_value(c, value),
                _ => mask(value).into_owned(),
            };
            if !rest.is_empty() {
                args[i - 1] = format!("-{}{}", &flags[..pos + c.len_utf8()], hide(rest));
            } else if i < args.len() {
                args[i] = hide(&args[i]);
                i += 1;
            }
            break;
        }
    }
}

/// A word that may be short options with a value attached (`-HApi-Key: TOKEN`, `-kHX:
/// y`): the value after the option letters through [`mask`], if that hides something the
/// whole word did not.
fn redact_short_value(word: &str) -> Option<String> {
    let flags = word.strip_prefix('-').filter(|f| !f.starts_with('-'))?;
    let letters = flags
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(flags.len());
    (1..=letters.min(4)).find_map(|k| match mask(&flags[k..]) {
        Cow::Owned(v) => Some(format!("-{}{v}", &flags[..k])),
        Cow::Borrowed(_) => None,
    })
}

/// A whole command line (`argv`, the program first) with secrets hidden: every word
/// through [`mask`] (a short option's attached value too: `-HX-Api-Key: ...`), the word
/// after an option named secret written without `=` (`--mysql-password VALUE`, `--token
/// VALUE`; `-p` excluded), and for `hostbench ab` the values of `-A`, `-P` and `-C`.
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
        out.push(match mask(a) {
            Cow::Owned(m) => m,
            Cow::Borrowed(_) => redact_short_value(a).unwrap_or_else(|| a.clone()),
        });
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
    fn mysqls_using_password_yes_is_no_secret() {
        // MySQL's access-denied message says whether a password was sent, not which.
        let m = "Access denied for user 'bob'@'localhost' (using password: YES)";
        assert_eq!(mask(m), m);
        let m = "Access denied for user 'bob'@'h' (using password: NO)";
        assert_eq!(mask(m), m);
        // Any other value after `password:` is still hidden, "using" or not (with what
        // follows it up to a blank: a password may end in a bracket).
        assert_eq!(mask("(using password: hunter2)"), "(using password: ***");
        assert_eq!(mask("password: YES"), "password: ***");
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

        /// Masking twice changes nothing, over text made of the pieces every rule looks
        /// for: names, separators, quotes, escapes, brackets and masks already in place.
        #[test]
        fn masking_twice_changes_nothing(
            s in proptest::collection::vec(proptest::sample::select(vec![
                "password", "pgsql_password", "access_token", "api_key", "key", "sig", "X-Api-Key",
                "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "Bearer",
                "Basic", "sid", "Path", "pw", "abc", "h", "://", "u:p@", "=", "==", ":", ": ",
                "?", "&", ";", "; ", ",", ", ", " ", "\t", "\n", "\r\n", "\\n", "\\\"",
                "\"", "'", "`", "<", ">", "(", ")", "[", "]", "{", "}", "/", ".", "*", "***",
                "***)", "-H", "-", "é", "日",
            ]), 0..24)
        ) {
            let s: String = s.concat();
            let once = mask(&s).into_owned();
            proptest::prop_assert_eq!(mask(&once).into_owned(), once, "input: {:?}", s);
        }
    }

    #[test]
    fn already_masked_text_stays_as_it_is() {
        for s in [
            "(postgres://u:***@h/d?password=***)",
            "see [password=***].",
            "cannot reach 'mysql://u:***@h' (password=***): refused",
        ] {
            assert_eq!(mask(s), s);
        }
        // A password that merely starts with the mask is still hidden.
        assert_eq!(mask("password=***x)"), "password=***");
    }

    #[test]
    fn quoted_credentials_are_hidden_whole() {
        for (raw, want) in [
            (
                r#"Authorization: Bearer "QUOTED""#,
                "Authorization: Bearer ***",
            ),
            (r#"Authorization: "QUOTED""#, "Authorization: ***"),
            (
                "Authorization: Bearer 'QUOTED' -n 1",
                "Authorization: Bearer *** -n 1",
            ),
            (
                r#"Authorization: Bearer "a b" x"#,
                "Authorization: Bearer *** x",
            ),
            (
                r#"Authorization: Bearer "unterminated"#,
                "Authorization: Bearer ***",
            ),
            (r#"X-Api-Key: "QUOTED""#, "X-Api-Key: ***"),
            (r#"Cookie: "QUOTED""#, "Cookie: ***"),
            // JSON: an escaped quote is part of the value; a bare one ends the string.
            (
                r#"{"h": "Authorization: Bearer \"Q\"\nX: 1"}"#,
                r#"{"h": "Authorization: Bearer ***\nX: 1"}"#,
            ),
            (
                r#"{"headers":"Authorization:","x":"y"}"#,
                r#"{"headers":"Authorization:","x":"y"}"#,
            ),
            (
                r#"{"headers": "X-Api-Key: ", "x": 1}"#,
                r#"{"headers": "X-Api-Key: ", "x": 1}"#,
            ),
        ] {
            assert_eq!(mask(raw), want, "{raw}");
            assert_eq!(mask(want), want, "masking twice: {want}");
        }
    }

    #[test]
    fn a_blank_before_the_colon_still_names_the_header() {
        assert_eq!(
            mask("Authorization : Basic dTpw"),
            "Authorization : Basic ***"
        );
        assert_eq!(mask("Cookie\t: a=b"), "Cookie\t: a=***");
    }

    #[test]
    fn set_cookie_keeps_its_attributes() {
        for (raw, want) in [
            (
                "Set-Cookie: sid=S3CR3T; Path=/; Expires=Wed, 21 Oct 2015 07:28:00 GMT; HttpOnly",
                "Set-Cookie: sid=***; Path=/; Expires=Wed, 21 Oct 2015 07:28:00 GMT; HttpOnly",
            ),
            (
                "set-cookie: a=\"q\"; Domain=x.org; Max-Age=60; Secure; SameSite=Lax",
                "set-cookie: a=***; Domain=x.org; Max-Age=60; Secure; SameSite=Lax",
            ),
            ("Set-Cookie: opaque; Path=/", "Set-Cookie: ***; Path=/"),
            (
                "HTTP/1.1 200 OK\r\nSet-Cookie: s=1\r\nCookie: a=1; b=2\r\n",
                "HTTP/1.1 200 OK\r\nSet-Cookie: s=***\r\nCookie: a=***; b=***\r\n",
            ),
        ] {
            assert_eq!(mask(raw), want, "{raw}");
            assert_eq!(mask(want), want, "masking twice: {want}");
        }
    }

    #[test]
    fn header_names_inside_a_url_are_not_headers() {
        for s in [
            "/static/cookie:abc/x",
            "Document Path: /static/cookie:abc/x",
            "http://h/a/authorization:b",
            "http://h/a?x=1&token:2",
            "GET /api/x-api-key:v HTTP/1.1",
            "12:34:56 events: 10",
        ] {
            assert_eq!(mask(s), s, "{s}");
        }
    }

    #[test]
    fn api_keys_and_tokens() {
        for (raw, want) in [
            ("X-Api-Key: k3y", "X-Api-Key: ***"),
            ("api-key: k3y", "api-key: ***"),
            ("X-Auth-Token: t0k", "X-Auth-Token: ***"),
            ("X-Access-Token: t0k", "X-Access-Token: ***"),
            ("X-Amz-Security-Token: t0k", "X-Amz-Security-Token: ***"),
            (
                "Ocp-Apim-Subscription-Key: k",
                "Ocp-Apim-Subscription-Key: ***",
            ),
            ("-H X-Api-Key: k3y -n 1", "-H X-Api-Key: *** -n 1"),
            (
                "--add-header=X-A: 1\\nX-Auth-Token: t\\n",
                "--add-header=X-A: 1\\nX-Auth-Token: ***\\n",
            ),
            (
                "http://h/q?access_token=t&api_key=k&apikey=k&page=2",
                "http://h/q?access_token=***&api_key=***&apikey=***&page=2",
            ),
            (
                "/q?token=t&auth=a&key=k&sig=s&Signature=s&X-Amz-Signature=s",
                "/q?token=***&auth=***&key=***&sig=***&Signature=***&X-Amz-Signature=***",
            ),
            (
                "--token=t --client-secret=s",
                "--token=*** --client-secret=***",
            ),
            ("{\"api_key\": \"k\"}", "{\"api_key\": \"***\"}"),
        ] {
            assert_eq!(mask(raw), want, "{raw}");
            assert_eq!(mask(want), want, "masking twice: {want}");
        }
        // Ordinary words stay: only a query parameter is read as `key`, `auth`, `sig`.
        for s in [
            "key=value auth=trust sig=1 --sort-key=x",
            "Sec-WebSocket-Key: dGhl",
            "Idempotency-Key: 1",
            "tokens: 5, token_bucket=3",
            "Keep-Alive: timeout=5",
            "WWW-Authenticate: Basic realm=x",
            "Host: h",
        ] {
            assert_eq!(mask(s), s, "{s}");
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
        // The value of one of hostbench's long options is skipped, whatever it looks like.
        for words in [
            &["--label", "-x", "-A", "bob:pw"][..],
            &["--label", "-C", "-P", "bob:pw"],
            &["--format", "ab", "--results-db", "-e", "-A", "bob:pw"],
            &["--label=-x", "-A", "bob:pw"],
            &["--no-save", "-A", "bob:pw"],
        ] {
            let mut a = args(&["hostbench", "ab"]);
            a.extend(args(words));
            let r = redact_args(&a);
            assert_eq!(r.last().unwrap(), "bob:***", "{words:?}: {r:?}");
        }
        // A header attached to its option.
        assert_eq!(
            redact_args(&args(&[
                "hostbench",
                "ab",
                "-kHApi-Key: k",
                "-HX-Auth-Token:t"
            ]))[2..],
            ["-kHApi-Key: ***", "-HX-Auth-Token:***"]
        );
        assert_eq!(
            redact_args(&args(&[
                "hostbench",
                "http",
                "-HApi-Key: k",
                "-kHCookie: a=b"
            ]))[2..],
            ["-HApi-Key: ***", "-kHCookie: a=***"]
        );
        assert_eq!(
            redact_args(&args(&["hostbench", "http", "--token", "t", "-n", "5"]))[2..],
            ["--token", "***", "-n", "5"]
        );
        let other = args(&["hostbench", "fio", "-A", "x:y"]);
        assert_eq!(redact_args(&other), other);
        assert_eq!(
            redact_args(&args(&["hostbench", "ab", "-A", "nocolon"]))[3],
            "***"
        );
    }

    /// Report lines that start with a name and a colon are not headers: a fio job named
    /// `token` printed `token: *** rw=read`, a count `Pass: *** of 5`.
    #[test]
    fn report_lines_that_look_like_headers_are_kept() {
        for line in [
            "token: (g=0): rw=read, bs=(R) 4096B-4096B",
            "auth_token: (groupid=0, jobs=1): err= 0: pid=21260",
            "Pass: 3 of 5",
            "passed: 5",
            "tests_passed=12",
        ] {
            assert_eq!(mask(line), line);
        }
        for (line, want) in [
            ("X-Api-Key: abc123", "X-Api-Key: ***"),
            ("Private-Token: abc123", "Private-Token: ***"),
            ("password: abc123", "password: ***"),
        ] {
            assert_eq!(mask(line), want);
        }
    }

    /// The same values hidden however many secret assignments share one run of text.
    #[test]
    fn many_assignments_in_one_run_are_each_hidden() {
        let run = "a=1;token=abc;".repeat(3);
        assert_eq!(mask(&run), "a=1;token=***");
        let spaced = "a=1 token=abc x=2 password=p q";
        assert_eq!(mask(spaced), "a=1 token=*** x=2 password=*** q");
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
        for n in [
            "access_token",
            "X-Auth-Token",
            "csrftoken",
            "api_key",
            "X-Api-Key",
            "apikey",
            "secret_key",
            "client_secret",
            "credentials",
        ] {
            assert!(is_secret_name(n), "{n}");
        }
        for n in [
            "passes",
            "passed",
            "passport",
            "pass_rate",
            "threads",
            "mysql_user",
            "report_interval",
            "path",
            "key",
            "tokens",
            "token_bucket",
            "sort_key",
            "Sec-WebSocket-Key",
            "auth",
        ] {
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
