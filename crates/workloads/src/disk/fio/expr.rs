//! fio's numbers beyond plain digits: the `kb_base` a job's sizes are read in, arithmetic
//! values (`size=(64*1024)`, `runtime=(2*30)`, fio's expression parser when it is built
//! with it), and the `bc`-style integer arithmetic fio applies to a job-file value where it
//! replaced a keyword (`size=2*$mb_memory`, `iodepth=$ncpus+1`).
//!
//! Written from fio 3.33's documented and measured behaviour (../shared/reference's
//! fio-jobfiles.md, "Keywords", "Arithmetic", "Numbers"); no fio code.

use std::cell::Cell;

thread_local! {
    /// The `kb_base` of the job whose options are being read (1024 or 1000).
    static KB_BASE: Cell<u64> = const { Cell::new(1024) };
}

/// While alive, sizes are read with `kb_base` (set by the options reader for one job, which
/// reads `kb_base` first, as fio applies it before the job's other options).
pub struct KbBaseScope {
    previous: u64,
}

impl KbBaseScope {
    /// Reads sizes with `kb_base` until the scope is dropped (the previous base then).
    pub fn enter(kb_base: u64) -> KbBaseScope {
        KbBaseScope {
            previous: KB_BASE.with(|c| c.replace(kb_base)),
        }
    }
}

impl Drop for KbBaseScope {
    fn drop(&mut self) {
        KB_BASE.with(|c| c.set(self.previous));
    }
}

/// The `kb_base` sizes are read in now.
pub fn kb_base() -> u64 {
    KB_BASE.with(Cell::get)
}

/// The multiplier of a size suffix as fio reads it: case-insensitive and matched by its
/// first letters (`4kk` is 4k); `k m g t p` (and `kb`, `ki`, ...) are powers of `kb_base`,
/// the three-letter IEC forms `kib mib gib tib pib` powers of the *other* base (fio 3.33:
/// with the default kb_base=1024, `4kib` is 4000 and `4k` 4096); `b` or nothing is bytes.
pub fn size_multiplier(suffix: &str, kb_base: u64) -> Option<u64> {
    let s = suffix.to_ascii_lowercase();
    if s.is_empty() || s == "b" {
        return Some(1);
    }
    let power = match s.as_bytes()[0] {
        b'k' => 1,
        b'm' => 2,
        b'g' => 3,
        b't' => 4,
        b'p' => 5,
        _ => return None,
    };
    let iec = s.len() >= 3 && &s[1..3] == "ib";
    let base = match (iec, kb_base) {
        (true, 1024) => 1000,
        (true, _) => 1024,
        (false, b) => b,
    };
    base.checked_pow(power)
}

/// What an arithmetic value stands for: it decides the unit of a bare number and of `m`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A size in bytes (`m` is MiB).
    Size,
    /// A time; a bare number is in this many seconds (`m` is minutes).
    Time(f64),
    /// A count (no units).
    Count,
}

/// Evaluates fio's arithmetic value `text` (it starts with `(`): `+ - * / % ^` (`^` a power,
/// right-associative; `%` binds tightest, then `^`, then `* /`, then `+ -`), unary minus,
/// parentheses, decimal, hex and fractional literals, each with a unit suffix (`k kb` 1024,
/// `m mb` 2^20 or minutes, `g t p`, `kib mib gib tib pib` powers of 1000; `us ms s m h d` for
/// times). A size or count comes back in bytes (truncated to a whole number), a time in
/// seconds. The error says what is wrong.
pub fn eval(text: &str, kind: Kind) -> Result<f64, String> {
    let mut p = Parser {
        c: Cursor {
            s: text.as_bytes(),
            i: 0,
            depth: 0,
        },
        kind,
    };
    let v = p.sum()?;
    p.c.blank();
    if p.c.i != p.c.s.len() {
        return Err(format!(
            "unexpected '{}' at character {}",
            &text[p.c.i..],
            p.c.i + 1
        ));
    }
    if !v.is_finite() {
        return Err("the value is not a finite number".into());
    }
    Ok(match kind {
        Kind::Time(_) => v,
        Kind::Size | Kind::Count => v.trunc(),
    })
}

/// Where a parser is in its text, and how deep in parentheses.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
    depth: u32,
}

impl Cursor<'_> {
    fn blank(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.blank();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
}

struct Parser<'a> {
    c: Cursor<'a>,
    kind: Kind,
}

impl Parser<'_> {
    fn sum(&mut self) -> Result<f64, String> {
        let mut v = self.product()?;
        loop {
            if self.c.eat(b'+') {
                v += self.product()?;
            } else if self.c.eat(b'-') {
                v -= self.product()?;
            } else {
                return Ok(v);
            }
        }
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut v = self.power()?;
        loop {
            if self.c.eat(b'*') {
                v *= self.power()?;
            } else if self.c.eat(b'/') {
                let d = self.power()?;
                if d == 0.0 {
                    return Err("division by zero".into());
                }
                v /= d;
            } else {
                return Ok(v);
            }
        }
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.modulo()?;
        if self.c.eat(b'^') {
            let e = self.power()?;
            return Ok(base.powf(e));
        }
        Ok(base)
    }

    fn modulo(&mut self) -> Result<f64, String> {
        let mut v = self.unary()?;
        while self.c.eat(b'%') {
            let d = self.unary()?;
            if d == 0.0 {
                return Err("modulo by zero".into());
            }
            v %= d;
        }
        Ok(v)
    }

    fn unary(&mut self) -> Result<f64, String> {
        if self.c.eat(b'-') {
            return Ok(-self.unary()?);
        }
        if self.c.eat(b'(') {
            self.c.depth += 1;
            if self.c.depth > 64 {
                return Err("parentheses nested too deeply".into());
            }
            let v = self.sum()?;
            if !self.c.eat(b')') {
                return Err("a '(' without its ')'".into());
            }
            self.c.depth -= 1;
            return Ok(v);
        }
        self.number()
    }

    fn number(&mut self) -> Result<f64, String> {
        self.c.blank();
        let start = self.c.i;
        let rest = &self.c.s[self.c.i..];
        let (v, len) = if rest.len() > 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
            let n = rest[2..]
                .iter()
                .take_while(|c| c.is_ascii_hexdigit())
                .count();
            let t = std::str::from_utf8(&rest[2..2 + n]).unwrap_or("");
            let v = u64::from_str_radix(t, 16).map_err(|_| format!("'0x{t}' is not a number"))?;
            (v as f64, 2 + n)
        } else {
            let n = rest
                .iter()
                .take_while(|c| c.is_ascii_digit() || **c == b'.')
                .count();
            let t = std::str::from_utf8(&rest[..n]).unwrap_or("");
            if t.is_empty() {
                return Err(match rest.first() {
                    Some(c) => format!("expected a number at '{}'", *c as char),
                    None => "the expression ends where a number was expected".into(),
                });
            }
            let v: f64 = t.parse().map_err(|_| format!("'{t}' is not a number"))?;
            (v, n)
        };
        self.c.i += len;
        let n = self.c.s[self.c.i..]
            .iter()
            .take_while(|c| c.is_ascii_alphabetic())
            .count();
        let suffix = std::str::from_utf8(&self.c.s[self.c.i..self.c.i + n])
            .unwrap_or("")
            .to_ascii_lowercase();
        self.c.i += n;
        let mult = self.unit(&suffix).ok_or_else(|| {
            format!(
                "'{}' has an unknown unit '{suffix}'",
                String::from_utf8_lossy(&self.c.s[start..self.c.i])
            )
        })?;
        Ok(v * mult)
    }

    fn unit(&self, suffix: &str) -> Option<f64> {
        match self.kind {
            Kind::Time(bare) => Some(match suffix {
                "" => bare,
                "us" | "usec" => 1e-6,
                "ms" | "msec" => 1e-3,
                "s" | "sec" => 1.0,
                "m" | "min" => 60.0,
                "h" => 3600.0,
                "d" => 86400.0,
                _ => return None,
            }),
            Kind::Count if suffix.is_empty() => Some(1.0),
            Kind::Size | Kind::Count => {
                let power = match suffix {
                    "" | "b" => return Some(1.0),
                    "k" | "kb" => 1,
                    "m" | "mb" => 2,
                    "g" | "gb" => 3,
                    "t" | "tb" => 4,
                    "p" | "pb" => 5,
                    "kib" => -1,
                    "mib" => -2,
                    "gib" => -3,
                    "tib" => -4,
                    "pib" => -5,
                    _ => return None,
                };
                Some(if power > 0 {
                    1024f64.powi(power)
                } else {
                    1000f64.powi(-power)
                })
            }
        }
    }
}

/// `bc`'s integer arithmetic (scale 0) on `text`, as fio pipes a job-file value to `bc`
/// when it replaced a keyword in it and the value holds `+ - * /`: whole numbers,
/// `+ - * / % ^`, unary minus and parentheses; division truncates toward zero. `None`
/// when `text` is not such an expression (then fio's `bc` fails too).
pub fn bc(text: &str) -> Option<i128> {
    let mut p = Bc {
        c: Cursor {
            s: text.as_bytes(),
            i: 0,
            depth: 0,
        },
    };
    let v = p.sum()?;
    p.c.blank();
    (p.c.i == p.c.s.len()).then_some(v)
}

struct Bc<'a> {
    c: Cursor<'a>,
}

impl Bc<'_> {
    fn sum(&mut self) -> Option<i128> {
        let mut v = self.product()?;
        loop {
            if self.c.eat(b'+') {
                v = v.checked_add(self.product()?)?;
            } else if self.c.eat(b'-') {
                v = v.checked_sub(self.product()?)?;
            } else {
                return Some(v);
            }
        }
    }

    fn product(&mut self) -> Option<i128> {
        let mut v = self.power()?;
        loop {
            if self.c.eat(b'*') {
                v = v.checked_mul(self.power()?)?;
            } else if self.c.eat(b'/') {
                v = v.checked_div(self.power()?)?;
            } else if self.c.eat(b'%') {
                v = v.checked_rem(self.power()?)?;
            } else {
                return Some(v);
            }
        }
    }

    fn power(&mut self) -> Option<i128> {
        let base = self.unary()?;
        if self.c.eat(b'^') {
            let e = self.power()?;
            return base.checked_pow(u32::try_from(e).ok()?);
        }
        Some(base)
    }

    fn unary(&mut self) -> Option<i128> {
        if self.c.eat(b'-') {
            return self.unary()?.checked_neg();
        }
        if self.c.eat(b'(') {
            self.c.depth += 1;
            if self.c.depth > 64 {
                return None;
            }
            let v = self.sum()?;
            self.c.depth -= 1;
            return self.c.eat(b')').then_some(v);
        }
        self.c.blank();
        let n = self.c.s[self.c.i..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let v = std::str::from_utf8(&self.c.s[self.c.i..self.c.i + n])
            .ok()?
            .parse()
            .ok()?;
        self.c.i += n;
        Some(v)
    }
}

/// The values of fio's job-file keywords on this machine: `$pagesize` (bytes), `$mb_memory`
/// (physical memory, MiB), `$ncpus` (configured CPUs).
pub fn keyword(name: &str) -> Option<u64> {
    // SAFETY: sysconf reads a system constant and has no preconditions.
    let conf = |k| unsafe { libc::sysconf(k) };
    let v = match name {
        "pagesize" => conf(libc::_SC_PAGESIZE),
        "mb_memory" => {
            let (pages, size) = (conf(libc::_SC_PHYS_PAGES), conf(libc::_SC_PAGESIZE));
            if pages <= 0 || size <= 0 {
                return None;
            }
            return Some((pages as u64).saturating_mul(size as u64) >> 20);
        }
        "ncpus" => conf(libc::_SC_NPROCESSORS_CONF),
        _ => return None,
    };
    u64::try_from(v).ok().filter(|v| *v > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_follow_kb_base_and_the_iec_forms_the_other_base() {
        // fio 3.33's measured table (reference "Numbers").
        for (kb, s, want) in [
            (1024, "k", 1024),
            (1024, "ki", 1024),
            (1024, "kib", 1000),
            (1024, "m", 1 << 20),
            (1024, "mi", 1 << 20),
            (1024, "mib", 1_000_000),
            (1000, "k", 1000),
            (1000, "ki", 1000),
            (1000, "kib", 1024),
            (1000, "m", 1_000_000),
            (1000, "mib", 1 << 20),
            (1024, "kk", 1024),
            (1024, "KB", 1024),
            (1024, "b", 1),
            (1024, "", 1),
        ] {
            assert_eq!(size_multiplier(s, kb), Some(want), "{s} with kb_base={kb}");
        }
        assert_eq!(size_multiplier("x", 1024), None);
        assert_eq!(size_multiplier("s", 1024), None);
    }

    #[test]
    fn arithmetic_values() {
        let size = |t| eval(t, Kind::Size);
        assert_eq!(size("(64*1024)"), Ok(65536.0));
        assert_eq!(size("(4k*2)"), Ok(8192.0));
        assert_eq!(size("(1m+1k)"), Ok(1049600.0));
        assert_eq!(size("(1kib)"), Ok(1000.0));
        assert_eq!(size("(2^10)"), Ok(1024.0));
        assert_eq!(size("(2^3^2)"), Ok(512.0)); // right-associative
        assert_eq!(size("(10 % 3 * 2)"), Ok(2.0)); // % before *
        assert_eq!(size("(2 * 3 % 2)"), Ok(2.0)); // 2 * (3 % 2)
        assert_eq!(size("(-(-3))"), Ok(3.0));
        assert_eq!(size("(0x10)"), Ok(16.0));
        assert_eq!(size("(7/2)"), Ok(3.0)); // truncated
        assert_eq!(size("(1.5k)"), Ok(1536.0));
        assert!(size("(1/0)").unwrap_err().contains("division by zero"));
        assert!(size("(1+)").is_err());
        assert!(size("((1)").is_err());
        assert!(size("(1q)").unwrap_err().contains("unknown unit 'q'"));
        let time = |t| eval(t, Kind::Time(1.0));
        assert_eq!(time("(2*30)"), Ok(60.0));
        assert_eq!(time("(1m+30s)"), Ok(90.0));
        assert_eq!(time("(500ms*3)"), Ok(1.5));
        assert!((eval("(10)", Kind::Time(1e-6)).unwrap() - 10e-6).abs() < 1e-15);
        assert!(eval("(1k)", Kind::Time(1.0)).is_err());
        assert_eq!(eval("(3*4)", Kind::Count), Ok(12.0));
        let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
        assert!(size(&deep).is_err());
    }

    #[test]
    fn bc_integer_arithmetic() {
        assert_eq!(bc("2*24105"), Some(48210));
        assert_eq!(bc("2+1"), Some(3));
        assert_eq!(bc("7/2"), Some(3));
        assert_eq!(bc("-7/2"), Some(-3));
        assert_eq!(bc("(1+2)*3"), Some(9));
        assert_eq!(bc("2^10"), Some(1024));
        assert_eq!(bc("1/0"), None);
        assert_eq!(bc("4k*2"), None);
        assert_eq!(bc(""), None);
    }

    #[test]
    fn keywords_are_this_machines() {
        assert!(keyword("pagesize").unwrap() >= 4096);
        assert!(keyword("ncpus").unwrap() >= 1);
        assert!(keyword("mb_memory").unwrap() >= 1);
        assert_eq!(keyword("nope"), None);
    }
}
