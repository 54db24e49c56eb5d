//! Bounded input: every file or stream hostbench reads because a user named it (job files,
//! suite files, `--config-file`, request bodies, result imports) is read through
//! [`read_text`], [`read_bytes`] or [`Bounded`], each with a size limit, so that `/dev/zero`
//! or a runaway file is a clear error after at most `limit` bytes, never an unbounded
//! allocation. Strings that came from outside and are printed go through [`printable`] so
//! that control characters (a raw ESC) cannot drive the terminal.

use std::borrow::Cow;
use std::fmt;
use std::io::Read;
use std::path::Path;

/// `--config-file` (sysbench grammar).
pub const CONFIG_FILE_MAX: u64 = 1 << 20;
/// An fio job file, and a job file's text after `${VAR}` expansion.
pub const JOB_FILE_MAX: u64 = 4 << 20;
/// A suite file.
pub const SUITE_FILE_MAX: u64 = 1 << 20;
/// A request body file (`ab -p`, `http --body`): sent from memory, so it is read whole.
pub const BODY_FILE_MAX: u64 = 256 << 20;
/// One results file or stream to import, compare or report (about 10,000 typical runs).
pub const IMPORT_MAX: u64 = 256 << 20;
/// A run label.
pub const LABEL_MAX_CHARS: usize = 200;
/// A run id.
pub const ID_MAX_CHARS: usize = 64;

/// An input that could not be read within its limit.
#[derive(Debug)]
pub enum InputError {
    /// The input is larger than its limit.
    TooLarge {
        /// What it is (`--config-file`, `suite file`).
        what: String,
        /// Where it is.
        origin: String,
        /// The limit in bytes.
        limit: u64,
    },
    /// It could not be read.
    Io {
        /// What it is.
        what: String,
        /// Where it is.
        origin: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// It is not UTF-8 text.
    NotText {
        /// What it is.
        what: String,
        /// Where it is.
        origin: String,
    },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::TooLarge {
                what,
                origin,
                limit,
            } => write!(
                f,
                "{what} {origin} is larger than {} (hostbench's limit for it): name a smaller \
                 file{}",
                human_bytes(*limit),
                if origin.starts_with("/dev/") {
                    " (a device has no end)"
                } else {
                    ""
                }
            ),
            InputError::Io {
                what,
                origin,
                source,
            } => write!(f, "cannot read {what} {origin}: {source}"),
            InputError::NotText { what, origin } => {
                write!(f, "{what} {origin} is not UTF-8 text")
            }
        }
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InputError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// `1 MiB`, `256 MiB`.
pub fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// A reader that fails with [`std::io::ErrorKind::FileTooLarge`] once more than `limit`
/// bytes have been read from it, for parsers that stream (serde_json's reader).
pub struct Bounded<R> {
    inner: R,
    left: u64,
    exceeded: bool,
}

impl<R: Read> Bounded<R> {
    /// Reads at most `limit` bytes of `inner`.
    pub fn new(inner: R, limit: u64) -> Self {
        Bounded {
            inner,
            left: limit,
            exceeded: false,
        }
    }

    /// True once the reader hit its limit (a parse error then means "too large").
    pub fn exceeded(&self) -> bool {
        self.exceeded
    }
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // One byte more tells a file of exactly `limit` bytes from a larger one.
            let mut one = [0u8; 1];
            if self.inner.read(&mut one)? == 0 {
                return Ok(0);
            }
            self.exceeded = true;
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                "input larger than its limit",
            ));
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// Reads all of `r` (named `origin`, a `what`) if it is at most `limit` bytes.
pub fn read_all(r: impl Read, what: &str, origin: &str, limit: u64) -> Result<Vec<u8>, InputError> {
    let mut b = Bounded::new(r, limit);
    let mut out = Vec::new();
    match b.read_to_end(&mut out) {
        Ok(_) => Ok(out),
        Err(_) if b.exceeded() => Err(InputError::TooLarge {
            what: what.into(),
            origin: origin.into(),
            limit,
        }),
        Err(source) => Err(InputError::Io {
            what: what.into(),
            origin: origin.into(),
            source,
        }),
    }
}

/// The bytes of the file at `path` if it is at most `limit` bytes.
pub fn read_bytes(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>, InputError> {
    let origin = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|source| InputError::Io {
        what: what.into(),
        origin: origin.clone(),
        source,
    })?;
    read_all(f, what, &origin, limit)
}

/// The text of the file at `path` if it is UTF-8 and at most `limit` bytes.
pub fn read_text(path: &Path, what: &str, limit: u64) -> Result<String, InputError> {
    let bytes = read_bytes(path, what, limit)?;
    String::from_utf8(bytes).map_err(|_| InputError::NotText {
        what: what.into(),
        origin: path.display().to_string(),
    })
}

/// `s` with control characters written as escapes (`\u{1b}`), for printing text that came
/// from outside (labels, ids, host names of imported runs). Borrowed when there are none.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Undoes the octal escapes of /proc/self/mountinfo and /proc/swaps (`\040` for a space).
pub fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Undoes a URL's percent-encoding (`%40` for `@`); a `%` not followed by two hex digits
/// stays as it is. Bytes that are not UTF-8 become U+FFFD.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(v) = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_hold_and_exact_sizes_pass() {
        let data = [b'x'; 100];
        assert_eq!(read_all(&data[..], "t", "o", 100).unwrap().len(), 100);
        let e = read_all(&data[..], "suite file", "o", 99).unwrap_err();
        assert!(e.to_string().contains("larger than 99 bytes"), "{e}");
        let e = read_all(std::io::repeat(0), "x", "/dev/zero", 1 << 20).unwrap_err();
        assert!(e.to_string().contains("1 MiB"), "{e}");
        assert!(e.to_string().contains("no end"), "{e}");
    }

    #[test]
    fn printable_escapes_control_characters() {
        assert_eq!(printable("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\n");
        assert!(matches!(printable("plain é 'q'"), Cow::Borrowed(_)));
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("p%40ss%2Fw"), "p@ss/w");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%e2%82%ac"), "€");
    }
}
