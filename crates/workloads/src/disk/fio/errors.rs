//! fio's error policy: `continue_on_error`, `ignore_error` and `error_dump`.
//!
//! fio sorts an I/O error into one of three types (`td_error.c:td_error_type`): EILSEQ (a
//! block that did not verify) is a *verify* error whatever the direction, an error of a
//! read a *read* error, anything else (writes, trims, syncs) a *write* error. An error is
//! *non-fatal* when `continue_on_error` names its type and its number is in the type's
//! list (`ignore_error`; fio's default list is EIO and EILSEQ): the job counts it and goes
//! on. Otherwise it ends the job; it is still counted when `continue_on_error` names its
//! type (`backend.c:break_on_this_error`). Giving `ignore_error` a list for a type also
//! turns `continue_on_error` on for that type. With any type on, fio's reports show the
//! count and the first error (`errors    : total=N, first_error=E/<text>`, JSON
//! `total_err`/`first_error`, terse's two extra fields).

use super::job::{JobError, err};

/// The three error types, fio's `ERROR_TYPE_*_BIT` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrType {
    /// A read failed.
    Read = 0,
    /// A write (or trim, or sync) failed.
    Write = 1,
    /// A block did not verify (EILSEQ).
    Verify = 2,
}

impl ErrType {
    /// fio's `td_error_type`: the type of error `errno` met by an I/O (`read`: a read).
    pub fn of(read: bool, errno: i32) -> ErrType {
        if errno == libc::EILSEQ {
            ErrType::Verify
        } else if read {
            ErrType::Read
        } else {
            ErrType::Write
        }
    }
}

/// What a job does with an error ([`ErrorOpts::verdict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// `continue_on_error` does not name the type: the job ends, nothing counted.
    Stop,
    /// The type is named but the error is not in its list: counted, and the job ends.
    StopCounted,
    /// Non-fatal: counted, and the job goes on.
    Go,
}

/// A job's error options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorOpts {
    /// `continue_on_error`'s types, one bit per [`ErrType`] (fio's `all` sets every bit).
    pub cont: u32,
    /// `ignore_error`'s lists per type; `None`: fio's default, EIO and EILSEQ.
    pub ignore: [Option<Vec<i32>>; 3],
    /// `error_dump`: print fio's `io_u error` line for non-fatal errors too.
    pub dump: bool,
}

/// fio's default list of non-fatal errors (`td_error.c`).
const DEFAULT_NON_FATAL: [i32; 2] = [libc::EIO, libc::EILSEQ];

/// The errno names `ignore_error` knows (fio's `str2error`: 1 to 34, in errno order).
const NAMES: [&str; 34] = [
    "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD",
    "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
    "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
    "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
];

impl ErrorOpts {
    /// Any type continues: fio's reports then carry the error count.
    pub fn reported(&self) -> bool {
        self.cont != 0
    }

    /// Writes go on after ENOSPC (`ignore_error=,ENOSPC`): the job means to fill its
    /// filesystem, so no free space is required of it.
    pub fn goes_on_when_full(&self) -> bool {
        self.verdict(ErrType::Write, libc::ENOSPC) == Verdict::Go
    }

    /// What the job does with `errno` of type `t`.
    pub fn verdict(&self, t: ErrType, errno: i32) -> Verdict {
        if self.cont & (1 << t as u32) == 0 {
            return Verdict::Stop;
        }
        let listed = match &self.ignore[t as usize] {
            Some(l) => l.contains(&errno),
            None => DEFAULT_NON_FATAL.contains(&errno),
        };
        if listed {
            Verdict::Go
        } else {
            Verdict::StopCounted
        }
    }

    /// `continue_on_error=V` (`at`: where, for the message).
    pub fn set_continue(&mut self, v: &str, at: &str) -> Result<(), JobError> {
        self.cont = match v.trim() {
            "none" | "0" => 0,
            "read" => 1,
            "write" => 2,
            "io" => 3,
            "verify" => 4,
            "all" | "1" => 0xffff,
            _ => {
                return err(format!(
                    "{at}: continue_on_error={v}: expected none, read, write, io, verify, all, \
                     0 (none) or 1 (all)"
                ));
            }
        };
        Ok(())
    }

    /// `ignore_error=READS,WRITES,VERIFY`: per type a `:`-separated list of errno names
    /// (`ENOSPC`) or numbers (a sign is dropped), as fio reads it; an empty element leaves
    /// its type alone, a list turns `continue_on_error` on for its type.
    pub fn set_ignore(&mut self, v: &str, at: &str) -> Result<(), JobError> {
        let parts: Vec<&str> = v.trim().split(',').collect();
        if parts.len() > 3 {
            return err(format!(
                "{at}: ignore_error={v}: at most three lists (reads, writes, verify), separated \
                 by commas (fio: Illegal error type)"
            ));
        }
        for (t, part) in parts.iter().enumerate() {
            let mut list = Vec::new();
            // fio stops a list at its first empty element.
            for name in part.split(':').take_while(|n| !n.is_empty()) {
                let n = if name.starts_with('E') {
                    NAMES
                        .iter()
                        .position(|&e| e == name)
                        .map_or(0, |i| i as i32 + 1)
                } else {
                    atoi(name).unsigned_abs() as i32
                };
                if n == 0 {
                    return err(format!(
                        "{at}: ignore_error={v}: unknown error {name} (fio knows the names \
                         EPERM to ERANGE, errno 1 to 34; give other errors by number, e.g. \
                         {})",
                        libc::EILSEQ
                    ));
                }
                list.push(n);
            }
            if !list.is_empty() {
                self.cont |= 1 << t;
                self.ignore[t] = Some(list);
            }
        }
        Ok(())
    }
}

/// C's `atoi`: leading blanks, a sign, the digits that follow (0 when none; saturated).
fn atoi(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut n: i64 = 0;
    for c in digits.bytes().take_while(u8::is_ascii_digit) {
        n = n.saturating_mul(10).saturating_add(i64::from(c - b'0'));
    }
    let n = n.min(i64::from(i32::MAX));
    if neg { -n } else { n }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(cont: &str, ignore: &str) -> ErrorOpts {
        let mut o = ErrorOpts::default();
        if !cont.is_empty() {
            o.set_continue(cont, "t").unwrap();
        }
        if !ignore.is_empty() {
            o.set_ignore(ignore, "t").unwrap();
        }
        o
    }

    #[test]
    fn types_and_verdicts_as_fio_sorts_them() {
        assert_eq!(ErrType::of(true, libc::EIO), ErrType::Read);
        assert_eq!(ErrType::of(false, libc::EIO), ErrType::Write);
        assert_eq!(ErrType::of(true, libc::EILSEQ), ErrType::Verify);
        // Nothing continues by default.
        let none = ErrorOpts::default();
        assert!(!none.reported());
        assert_eq!(none.verdict(ErrType::Read, libc::EIO), Verdict::Stop);
        // continue_on_error=read: EIO (the default list) goes on, EINVAL ends counted,
        // a write error ends uncounted.
        let r = opts("read", "");
        assert_eq!(r.verdict(ErrType::Read, libc::EIO), Verdict::Go);
        assert_eq!(r.verdict(ErrType::Read, libc::EINVAL), Verdict::StopCounted);
        assert_eq!(r.verdict(ErrType::Write, libc::EIO), Verdict::Stop);
        let all = opts("1", "");
        assert_eq!(all.verdict(ErrType::Verify, libc::EILSEQ), Verdict::Go);
        assert_eq!(
            all.verdict(ErrType::Write, libc::ENOSPC),
            Verdict::StopCounted
        );
        assert_eq!(opts("io", "").cont, 3);
        assert_eq!(opts("0", "").cont, 0);
    }

    #[test]
    fn ignore_error_lists_as_fio_parses_them() {
        // A list turns its type on: ENOSPC for writes, as enospc-pressure.fio asks.
        let o = opts("", ",ENOSPC");
        assert_eq!(o.cont, 2);
        assert_eq!(o.verdict(ErrType::Write, libc::ENOSPC), Verdict::Go);
        assert_eq!(o.verdict(ErrType::Write, libc::EIO), Verdict::StopCounted);
        assert_eq!(o.verdict(ErrType::Read, libc::EIO), Verdict::Stop);
        // Names and numbers mix; a sign is dropped; an empty element ends the list.
        let o = opts("", "EPERM:-22::5,,84");
        assert_eq!(o.ignore[0], Some(vec![1, 22]));
        assert_eq!(o.ignore[1], None);
        assert_eq!(o.ignore[2], Some(vec![84]));
        assert_eq!(o.cont, 5);
        // atoi's way: trailing junk ignored.
        assert_eq!(opts("", "28x").ignore[0], Some(vec![28]));
        for bad in ["ENOSPCX", "EILSEQ", "abc", "0", "1,2,3,4"] {
            let mut o = ErrorOpts::default();
            let e = o.set_ignore(bad, "job a").unwrap_err().to_string();
            assert!(e.contains("ignore_error="), "{bad}: {e}");
        }
        let mut o = ErrorOpts::default();
        assert!(o.set_continue("yes", "job a").is_err());
    }
}
