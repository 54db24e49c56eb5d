//! fio's data verification (`verify=` and its companions), as fio 3.33 does it, so that a
//! file written by fio verifies with hostbench and the other way round.
//!
//! A write job with `verify` fills each block it writes with data (random bytes from a
//! per-block seed, or `verify_pattern` tiled from the block's start) and, every
//! `verify_interval` bytes, fio's 40-byte header (magic `0xacca`, verify type, chunk length,
//! seed, offset, time, thread number, `numberio`, a CRC-32C of those 36 bytes) followed by
//! the checksum of the rest of the chunk, all little-endian, with fio's quirks for sha1
//! (host-order words), sha256 (its odd digest layout) and sha512 (no finalisation). It logs
//! each write; when the write phase is over, the verify phase reads the logged blocks back
//! (fio's order: write order with a random map, else by offset with an overlapping newer
//! write replacing the older) and checks each chunk. A read job with `verify` checks every
//! block it reads. A mismatch is reported on stderr in fio's words and ends the clone with
//! fio's `err=84` (EILSEQ).
//!
//! The worker calls in through narrow hooks: [`Verifier::fill`] before a write,
//! [`Verifier::log`] after it, [`Verifier::check`] after a read.

use super::job::{JobError, JobSpec, err, flag, parse_fio_size};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// fio's header magic.
const MAGIC: u16 = 0xacca;
/// Length of fio's `struct verify_header`.
pub const HDR: usize = 40;
/// fio's longest `verify_pattern` (`MAX_PATTERN_SIZE`).
const MAX_PATTERN: usize = 512;

/// fio's verify types (`verify.h`), by the number it writes in the header.
pub mod kind {
    /// No verification.
    pub const NONE: u16 = 0;
    /// `meta`: the header only (and the pattern, if one is given).
    pub const META: u16 = 1;
    /// `md5`.
    pub const MD5: u16 = 2;
    /// `crc64`.
    pub const CRC64: u16 = 3;
    /// `crc32`.
    pub const CRC32: u16 = 4;
    /// `crc32c`.
    pub const CRC32C: u16 = 5;
    /// `crc32c-intel` (the same checksum).
    pub const CRC32C_INTEL: u16 = 6;
    /// `crc16`.
    pub const CRC16: u16 = 7;
    /// `crc7`.
    pub const CRC7: u16 = 8;
    /// `sha256`.
    pub const SHA256: u16 = 9;
    /// `sha512`.
    pub const SHA512: u16 = 10;
    /// `sha3-224`.
    pub const SHA3_224: u16 = 11;
    /// `sha3-256`.
    pub const SHA3_256: u16 = 12;
    /// `sha3-384`.
    pub const SHA3_384: u16 = 13;
    /// `sha3-512`.
    pub const SHA3_512: u16 = 14;
    /// `xxhash` (XXH32, seed 1).
    pub const XXHASH: u16 = 15;
    /// `sha1`.
    pub const SHA1: u16 = 16;
    /// A header followed by `verify_pattern` (what `verify_pattern` alone selects).
    pub const PATTERN_HDR: u16 = 17;
    /// `pattern`: the block is the pattern, no header.
    pub const PATTERN: u16 = 18;
    /// `null`: pretend to verify.
    pub const NULL: u16 = 19;
}

/// `verify=` values fio 3.33 takes, with their type numbers.
const KINDS: &[(&str, u16)] = &[
    ("0", kind::NONE),
    ("md5", kind::MD5),
    ("crc64", kind::CRC64),
    ("crc32", kind::CRC32),
    ("crc32c", kind::CRC32C),
    ("crc32c-intel", kind::CRC32C_INTEL),
    ("crc16", kind::CRC16),
    ("crc7", kind::CRC7),
    ("sha1", kind::SHA1),
    ("sha256", kind::SHA256),
    ("sha512", kind::SHA512),
    ("sha3-224", kind::SHA3_224),
    ("sha3-256", kind::SHA3_256),
    ("sha3-384", kind::SHA3_384),
    ("sha3-512", kind::SHA3_512),
    ("xxhash", kind::XXHASH),
    ("meta", kind::META),
    ("pattern", kind::PATTERN),
    ("null", kind::NULL),
];

/// The name fio prints for a verify type in its messages (`md5: verify failed ...`).
fn kind_name(k: u16) -> &'static str {
    match k {
        kind::CRC32C_INTEL => "crc32c",
        kind::PATTERN_HDR => "pattern",
        _ => KINDS
            .iter()
            .find(|(_, n)| *n == k)
            .map_or("verify", |(s, _)| s),
    }
}

/// Bytes of the checksum that follows the header (fio's `vhdr_*` structs).
fn sum_len(k: u16) -> usize {
    match k {
        kind::MD5 => 16,
        kind::CRC64 => 8,
        kind::CRC32 | kind::CRC32C | kind::CRC32C_INTEL | kind::XXHASH => 4,
        kind::CRC16 => 2,
        kind::CRC7 => 1,
        kind::SHA256 => 64,
        kind::SHA512 => 128,
        kind::SHA1 => 20,
        kind::SHA3_224 => 28,
        kind::SHA3_256 => 32,
        kind::SHA3_384 => 48,
        kind::SHA3_512 => 64,
        _ => 0,
    }
}

/// Header plus checksum: where a chunk's data starts (0 for `pattern`, which has no header).
fn hdr_size(k: u16) -> usize {
    match k {
        kind::PATTERN => 0,
        k => HDR + sum_len(k),
    }
}

/// `verify_pattern`: the bytes, and where `%o` (the block offset, 8 bytes little-endian)
/// is pasted into each copy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VerifyPattern {
    /// The pattern as parsed (`%o` places hold zeros).
    pub bytes: Vec<u8>,
    /// Start of each `%o` in `bytes`.
    pub offsets: Vec<usize>,
}

/// The verify options of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyOpts {
    /// fio's verify type number ([`kind`]); 0 = none.
    pub kind: u16,
    /// `verify=` was given (else `verify_pattern` selects the header+pattern type).
    pub kind_set: bool,
    /// `verify_interval` (0 = the write block size, fio's default).
    pub interval: u64,
    /// `verify_offset`: the header is swapped with the bytes here.
    pub offset: u64,
    /// `verify_pattern`.
    pub pattern: Option<VerifyPattern>,
    /// `verify_fatal`.
    pub fatal: bool,
    /// `verify_dump`.
    pub dump: bool,
    /// `verify_only`.
    pub only: bool,
    /// `do_verify` (default 1).
    pub do_verify: bool,
    /// `verify_backlog` (0 = verify after the write phase).
    pub backlog: u64,
    /// `verify_backlog_batch` (0 = `verify_backlog`).
    pub backlog_batch: u64,
    /// `verify_async` (recognised; hostbench verifies in the job's own thread).
    pub async_threads: u64,
    /// `verify_state_save` (default 1): a writing clone saves its state file when it ends.
    pub state_save: bool,
    /// `verify_state_load`: the verify phase stops where the saved state says.
    pub state_load: bool,
    /// `trim_percentage`: the share of logged writes put on the trim list (0-100).
    pub trim_pct: u32,
    /// `trim_backlog`: trims are due when the log holds a multiple of this many blocks
    /// (0: never, as fio: the list is only counted as leaked).
    pub trim_backlog: u64,
    /// `trim_backlog_batch` (0 = `trim_backlog`).
    pub trim_batch: u64,
    /// `trim_verify_zero` (default 1): a trimmed block must read back as zeros; 0 drops it
    /// from the verify log when it is trimmed.
    pub trim_zero: bool,
    /// `experimental_verify`: fio regenerates the written offsets instead of logging them.
    pub experimental: bool,
    /// `verify_async_cpus`: the CPUs fio 3.33 pins the job's thread to when `verify_async`
    /// starts its threads.
    pub async_cpus: Option<Vec<usize>>,
}

impl Default for VerifyOpts {
    fn default() -> Self {
        VerifyOpts {
            kind: kind::NONE,
            kind_set: false,
            interval: 0,
            offset: 0,
            pattern: None,
            fatal: false,
            dump: false,
            only: false,
            do_verify: true,
            backlog: 0,
            backlog_batch: 0,
            async_threads: 0,
            state_save: true,
            state_load: false,
            trim_pct: 0,
            trim_backlog: 0,
            trim_batch: 0,
            trim_zero: true,
            experimental: false,
            async_cpus: None,
        }
    }
}

/// The verify options, in fio's spelling.
pub const OPTION_NAMES: &[&str] = &[
    "verify",
    "verify_interval",
    "verify_offset",
    "verify_pattern",
    "verify_fatal",
    "verify_dump",
    "verify_only",
    "do_verify",
    "verify_backlog",
    "verify_backlog_batch",
    "verify_async",
    "verify_state_save",
    "verify_state_load",
    "trim_percentage",
    "trim_backlog",
    "trim_backlog_batch",
    "trim_verify_zero",
    "experimental_verify",
    "verify_async_cpus",
];

/// Whether `key` (a canonical option name) is a verify option.
pub fn handles(key: &str) -> bool {
    OPTION_NAMES.contains(&key)
}

fn count(k: &str, v: &str, at: &str) -> Result<u64, JobError> {
    v.trim()
        .parse::<u64>()
        .or_else(|_| parse_fio_size(v).ok_or(()))
        .or_else(|_| err(format!("{at}: {k}={v}: expected a whole number")))
}

/// A size option with fio's lower bound (`verify_interval` 80, `verify_offset` 40): its
/// value, or fio's "min value out of range" error.
fn at_least(at: &str, key: &str, v: &str, min: u64, example: &str) -> Result<u64, JobError> {
    let n = parse_fio_size(v).ok_or_else(|| {
        JobError(format!(
            "{at}: {key}={v}: expected a size such as {example}"
        ))
    })?;
    if n < min {
        return Err(JobError(format!(
            "{at}: {key}={v}: min value out of range: {n} ({min} min)"
        )));
    }
    Ok(n)
}

/// Applies verify option `key` (canonical) with value `v`, written at `at`, to `o`.
pub fn apply(o: &mut VerifyOpts, key: &str, v: &str, at: &str) -> Result<(), JobError> {
    match key {
        "verify" => {
            let t = v.trim().to_ascii_lowercase();
            let Some(&(_, k)) = KINDS.iter().find(|(n, _)| *n == t) else {
                return err(format!(
                    "{at}: verify={v}: expected one of {}",
                    KINDS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                ));
            };
            o.kind = k;
            o.kind_set = true;
        }
        "verify_interval" => o.interval = at_least(at, key, v, 80, "4k")?,
        "verify_offset" => o.offset = at_least(at, key, v, 40, "512")?,
        "verify_pattern" => {
            let p =
                parse_pattern(v).map_err(|e| JobError(format!("{at}: verify_pattern={v}: {e}")))?;
            o.pattern = Some(p);
        }
        "verify_fatal" => o.fatal = flag(key, v, at)?,
        "verify_dump" => o.dump = flag(key, v, at)?,
        "verify_only" => o.only = flag(key, v, at)?,
        "do_verify" => o.do_verify = flag(key, v, at)?,
        "verify_backlog" => o.backlog = count(key, v, at)?,
        "verify_backlog_batch" => o.backlog_batch = count(key, v, at)?,
        "verify_async" => o.async_threads = count(key, v, at)?,
        "verify_state_save" => o.state_save = flag(key, v, at)?,
        "verify_state_load" => o.state_load = flag(key, v, at)?,
        "trim_percentage" => {
            let n = count(key, v, at)?;
            if n > 100 {
                return err(format!(
                    "{at}: trim_percentage={v}: max value out of range: {n} (100 max)"
                ));
            }
            o.trim_pct = n as u32;
        }
        "trim_backlog" => o.trim_backlog = count(key, v, at)?,
        "trim_backlog_batch" => o.trim_batch = count(key, v, at)?,
        "trim_verify_zero" => o.trim_zero = flag(key, v, at)?,
        "experimental_verify" => o.experimental = flag(key, v, at)?,
        "verify_async_cpus" => {
            o.async_cpus = Some(super::process::parse_cpus_of(
                key,
                v,
                at,
                super::process::cpus_configured(),
            )?)
        }
        _ => {}
    }
    Ok(())
}

/// fio's `init.c` fix-ups once all options are read: `verify_pattern` without `verify=`
/// selects the header+pattern type; `verify_interval` defaults to the smallest write block,
/// never above it, and divides the write block sizes (else their gcd). Errors for what fio
/// refuses and hostbench cannot do.
pub fn finish(j: &mut JobSpec) -> Result<(), JobError> {
    let o = &mut j.verify;
    if o.pattern.is_some() && !o.kind_set {
        o.kind = kind::PATTERN_HDR;
    }
    if matches!(o.kind, kind::PATTERN | kind::PATTERN_HDR) && o.pattern.is_none() {
        return err(format!(
            "job '{}': verify=pattern needs a verify_pattern (e.g. verify_pattern=0xdeadbeef)",
            j.name
        ));
    }
    if o.kind == kind::NONE {
        return Ok(());
    }
    let (wmin, wmax) = (j.bsz[1].min, j.bsz[1].max);
    if wmax != wmin && o.interval == 0 {
        o.interval = wmin;
    }
    if o.interval > wmin {
        o.interval = wmin;
    } else if j.rw.read_pct(j.rwmixread) > 0 && o.interval > j.bsz[0].min {
        o.interval = j.bsz[0].min;
    }
    if o.interval == 0 || wmin % o.interval != 0 || wmax % o.interval != 0 {
        o.interval = gcd(wmin, wmax);
    }
    let hs = hdr_size(o.kind) as u64;
    if o.kind != kind::NULL && hs > 0 && o.interval <= hs {
        return err(format!(
            "job '{}': verify_interval {} is too small for verify={} (its header and \
             checksum take {hs} bytes; fio: Blocksize too small)",
            j.name,
            o.interval,
            kind_name(o.kind)
        ));
    }
    if o.offset > 0 && o.offset + hs > o.interval {
        return err(format!(
            "job '{}': verify_offset={} puts the {hs}-byte header past the end of the \
             {}-byte verify interval; use an offset of at most {}",
            j.name,
            o.offset,
            o.interval,
            o.interval.saturating_sub(hs)
        ));
    }
    if o.only && j.time_based {
        return err(format!(
            "job '{}': verify_only cannot be used with time_based (fio refuses it too)",
            j.name
        ));
    }
    Ok(())
}

/// fio's start-up warnings about a job's verify options (`init.c:fixup_options`), one
/// line each (printed through [`super::job::fixup_warnings`]).
pub fn fio_warnings(j: &JobSpec) -> Vec<String> {
    let o = &j.verify;
    let mut n = Vec::new();
    if o.kind == kind::NONE {
        return n;
    }
    let writes = j.rw.writes(j.rwmixread);
    // fio's test: a shared filename, or generated names that are not surely the clone's
    // own (`unique_filename=0`, or a filename_format without $jobname, $jobnum and
    // $filenum, in fio's spelling).
    let fmt = j
        .filename_format
        .as_deref()
        .unwrap_or("$jobname.$jobnum.$filenum");
    let own_names = j.unique_filename
        && ["$jobname", "$jobnum", "$filenum"]
            .iter()
            .all(|k| fmt.contains(k));
    if writes && o.do_verify && j.numjobs > 1 && (j.filename.is_some() || !own_names) {
        n.push(
            "fio: multiple writers may overwrite blocks that belong to other jobs. This can \
             cause verification failures."
                .to_string(),
        );
    }
    if writes
        && o.do_verify
        && j.runtime_s.is_some()
        && j.time_based
        && j.rw.read_pct(j.rwmixread) == 0
        && o.backlog == 0
    {
        n.push(
            "fio: verification read phase will never start because write phase uses all of \
             runtime"
                .to_string(),
        );
    }
    n
}

/// What hostbench does differently with a job's verify options, one line each.
pub fn notices(j: &JobSpec) -> Vec<String> {
    let o = &j.verify;
    let mut n = Vec::new();
    if o.kind == kind::NONE {
        return n;
    }
    if o.async_threads > 0 {
        n.push(format!(
            "fio: note: job '{}': verify_async={}: hostbench checks the blocks in the job's own thread{}",
            j.name,
            o.async_threads,
            if o.async_cpus.is_some() {
                " (verify_async_cpus pins that thread, as fio 3.33's verify threads pin the job's)"
            } else {
                ""
            }
        ));
    }
    n
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Parses a `verify_pattern` as fio's `parse_and_fill_pattern` does: `0x` hex bytes in the
/// order written, decimal integers as their shortest little-endian bytes (`-2` as a 32-bit
/// value), `"text"` (no escapes), `'file'` (its contents) and `%o` (the block offset),
/// concatenated, at most 512 bytes.
pub fn parse_pattern(text: &str) -> Result<VerifyPattern, String> {
    let mut p = VerifyPattern::default();
    let s = text.as_bytes();
    let mut i = 0;
    let room = |p: &VerifyPattern, n: usize| -> Result<(), String> {
        if p.bytes.len() + n > MAX_PATTERN {
            Err(format!(
                "the pattern is longer than fio's {MAX_PATTERN} bytes"
            ))
        } else {
            Ok(())
        }
    };
    if s.is_empty() {
        return Err("empty pattern; give e.g. 0xdeadbeef, \"text\" or %o".into());
    }
    while i < s.len() {
        match s[i] {
            b'"' | b'\'' => {
                let q = s[i];
                let end = s[i + 1..]
                    .iter()
                    .position(|&c| c == q)
                    .ok_or_else(|| format!("unterminated {} at byte {i}", q as char))?;
                let inner = &text[i + 1..i + 1 + end];
                let bytes = if q == b'"' {
                    inner.as_bytes().to_vec()
                } else {
                    let mut b = Vec::new();
                    let f = std::fs::File::open(inner)
                        .map_err(|e| format!("cannot read pattern file '{inner}': {e}"))?;
                    use std::io::Read;
                    f.take(MAX_PATTERN as u64 + 1)
                        .read_to_end(&mut b)
                        .map_err(|e| format!("cannot read pattern file '{inner}': {e}"))?;
                    if b.is_empty() {
                        return Err(format!("pattern file '{inner}' is empty"));
                    }
                    b
                };
                if bytes.is_empty() {
                    return Err("an empty string adds nothing to the pattern".into());
                }
                room(&p, bytes.len())?;
                p.bytes.extend_from_slice(&bytes);
                i += end + 2;
            }
            b'%' => {
                if !text[i..].starts_with("%o") {
                    return Err(format!(
                        "unknown format at byte {i}; fio knows only %o (the block offset)"
                    ));
                }
                room(&p, 8)?;
                p.offsets.push(p.bytes.len());
                p.bytes.extend_from_slice(&[0; 8]);
                i += 2;
            }
            _ if text[i..].len() > 2
                && (text[i..].starts_with("0x") || text[i..].starts_with("0X"))
                && s[i + 2].is_ascii_hexdigit() =>
            {
                let hex = &text[i + 2..];
                let mut n = hex
                    .find(|c: char| !c.is_ascii_hexdigit())
                    .unwrap_or(hex.len());
                // fio's look-back: `0xff0x14` is two numbers.
                if n < hex.len() && n >= 1 && hex[n - 1..].to_ascii_lowercase().starts_with("0x") {
                    n -= 1;
                }
                let digits = &hex[..n];
                let mut out = Vec::new();
                let mut d = digits;
                if d.len() % 2 == 1 {
                    out.push(u8::from_str_radix(&d[..1], 16).map_err(|e| e.to_string())?);
                    d = &d[1..];
                }
                while !d.is_empty() {
                    out.push(u8::from_str_radix(&d[..2], 16).map_err(|e| e.to_string())?);
                    d = &d[2..];
                }
                room(&p, out.len())?;
                p.bytes.extend_from_slice(&out);
                i += 2 + n;
            }
            _ => {
                // A decimal integer up to the next `0x`, quote or format.
                let rest = &text[i..];
                let mut end = rest
                    .char_indices()
                    .skip(1)
                    .find(|&(_, c)| !c.is_ascii_digit())
                    .map_or(rest.len(), |(k, _)| k);
                if let Some(h) = rest.to_ascii_lowercase().find("0x")
                    && h > 0
                {
                    end = end.min(h);
                }
                let num = &rest[..end];
                let v: i64 = num.parse().map_err(|_| {
                    format!(
                        "cannot read '{rest}' at byte {i}: expected 0x hex bytes, a decimal \
                         number, \"text\", 'file' or %o"
                    )
                })?;
                if v > i64::from(i32::MAX) || v < i64::from(i32::MIN) {
                    return Err(format!("{num} does not fit in 32 bits"));
                }
                let mut u = v as i32 as u32;
                let mut out = Vec::new();
                if u == 0 {
                    out.push(0);
                }
                while u != 0 {
                    out.push(u as u8);
                    u >>= 8;
                }
                room(&p, out.len())?;
                p.bytes.extend_from_slice(&out);
                i += end;
            }
        }
    }
    Ok(p)
}

// ---- checksums, as fio computes them ----

const fn crc_table_reflected64(poly: u64) -> [u64; 256] {
    let mut t = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u64;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ poly } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

/// fio's crc64: the reflected ECMA-182 "Jones" table (0x95AC9329AC4BC9B5), initial 0, no
/// final xor.
static CRC64: [u64; 256] = crc_table_reflected64(0x95AC_9329_AC4B_C9B5);
/// fio's crc16: reflected 0x8005 (0xA001), initial 0.
static CRC16: [u64; 256] = crc_table_reflected64(0xA001);

const fn crc32_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u32) << 24;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x8000_0000 != 0 {
                (c << 1) ^ 0x04C1_1DB7
            } else {
                c << 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}
/// fio's crc32: MSB-first 0x04C11DB7, initial 0, no final xor.
static CRC32: [u32; 256] = crc32_table();

const fn crc7_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let mut c: u8 = 0;
        let mut bit = 8;
        while bit > 0 {
            bit -= 1;
            let top = ((c >> 6) & 1) ^ ((i as u8 >> bit) & 1);
            c = (c << 1) & 0x7f;
            if top != 0 {
                c ^= 0x09;
            }
        }
        t[i] = c;
        i += 1;
    }
    t
}
/// fio's crc7 (x^7 + x^3 + 1, MSB first, initial 0).
static CRC7: [u8; 256] = crc7_table();

/// fio's crc32c: Castagnoli with initial ~0 and no final xor (the complement of the
/// standard CRC-32C), hardware-accelerated by the crc32c crate where the CPU has it.
#[inline]
pub fn fio_crc32c(data: &[u8]) -> u32 {
    !crc32c::crc32c(data)
}

/// fio's sha256 field: the low byte of each state word, then bytes 8.. of the last padded
/// block; the message length is appended in host (little-endian) order.
fn fio_sha256(data: &[u8], out: &mut [u8]) {
    use sha2::digest::generic_array::GenericArray;
    let mut st: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let full = data.len() / 64 * 64;
    let blocks: Vec<GenericArray<u8, _>> = data[..full]
        .chunks_exact(64)
        .map(|c| *GenericArray::from_slice(c))
        .collect();
    sha2::compress256(&mut st, &blocks);
    let tail = &data[full..];
    let mut last = [0u8; 128];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    let n = if tail.len() < 56 { 64 } else { 128 };
    last[n - 8..n].copy_from_slice(&((data.len() as u64) << 3).to_le_bytes());
    let tailblocks: Vec<GenericArray<u8, _>> = last[..n]
        .chunks_exact(64)
        .map(|c| *GenericArray::from_slice(c))
        .collect();
    sha2::compress256(&mut st, &tailblocks);
    for (i, w) in st.iter().enumerate() {
        out[i] = *w as u8;
    }
    out[8..64].copy_from_slice(&last[n - 56..n]);
}

/// fio's sha512 field: fio never finalises it, so it is the working buffer: the first 128
/// bytes of the data with the unprocessed tail copied over its start. `known` is how many
/// leading bytes are defined (all 128 once the data is that long).
fn fio_sha512(data: &[u8], out: &mut [u8]) -> usize {
    if data.len() >= 128 {
        out[..128].copy_from_slice(&data[..128]);
        let i = data.len() / 128 * 128;
        let rest = &data[i..];
        out[..rest.len()].copy_from_slice(rest);
        128
    } else {
        out[..data.len()].copy_from_slice(data);
        data.len()
    }
}

/// A standard digest (fio's SHA-3: FIPS 202 padding, the digest's bytes in order) into the
/// start of `out`.
fn digest_into<D: sha3::Digest>(data: &[u8], out: &mut [u8]) {
    let d = D::digest(data);
    out[..d.len()].copy_from_slice(&d);
}

/// The checksum of `data` for type `k` into `out` (its [`sum_len`] bytes); returns how many
/// leading bytes are compared (fio's sha512 of a short chunk leaves the rest undefined).
pub(super) fn checksum(k: u16, data: &[u8], out: &mut [u8]) -> usize {
    match k {
        kind::MD5 => {
            use md5::Digest;
            out[..16].copy_from_slice(&md5::Md5::digest(data));
        }
        kind::CRC64 => {
            let mut c = 0u64;
            for &b in data {
                c = CRC64[((c ^ b as u64) & 0xff) as usize] ^ (c >> 8);
            }
            out[..8].copy_from_slice(&c.to_le_bytes());
        }
        kind::CRC32 => {
            let mut c = 0u32;
            for &b in data {
                c = (c << 8) ^ CRC32[(((c >> 24) ^ b as u32) & 0xff) as usize];
            }
            out[..4].copy_from_slice(&c.to_le_bytes());
        }
        kind::CRC32C | kind::CRC32C_INTEL => {
            out[..4].copy_from_slice(&fio_crc32c(data).to_le_bytes());
        }
        kind::CRC16 => {
            let mut c = 0u16;
            for &b in data {
                c = (c >> 8) ^ CRC16[((c ^ b as u16) & 0xff) as usize] as u16;
            }
            out[..2].copy_from_slice(&c.to_le_bytes());
        }
        kind::CRC7 => {
            let mut c = 0u8;
            for &b in data {
                c = CRC7[((c << 1) ^ b) as usize];
            }
            out[0] = c;
        }
        kind::XXHASH => {
            let h = twox_hash::XxHash32::oneshot(1, data);
            out[..4].copy_from_slice(&h.to_le_bytes());
        }
        kind::SHA1 => {
            use sha1::Digest;
            let d = sha1::Sha1::digest(data);
            for (o, w) in out[..20].chunks_exact_mut(4).zip(d.chunks_exact(4)) {
                let v = u32::from_be_bytes([w[0], w[1], w[2], w[3]]);
                o.copy_from_slice(&v.to_le_bytes());
            }
        }
        kind::SHA256 => fio_sha256(data, out),
        kind::SHA512 => return fio_sha512(data, out),
        kind::SHA3_224 => digest_into::<sha3::Sha3_224>(data, out),
        kind::SHA3_256 => digest_into::<sha3::Sha3_256>(data, out),
        kind::SHA3_384 => digest_into::<sha3::Sha3_384>(data, out),
        kind::SHA3_512 => digest_into::<sha3::Sha3_512>(data, out),
        _ => return 0,
    }
    sum_len(k)
}

// ---- the per-clone state ----

/// One logged write (fio's `io_piece`).
#[derive(Debug, Clone, Copy)]
pub struct Piece {
    /// Which of the clone's files (0 with one file).
    pub file: u32,
    /// Absolute offset in the file.
    pub off: u64,
    /// Length.
    pub len: u32,
    /// fio's `numberio` of the write.
    pub numberio: u16,
    /// The seed of its random data.
    pub seed: u64,
    /// Trimmed after it was written (`trim_percentage`): it reads back as zeros.
    pub trimmed: bool,
}

/// What a failed check printed and how the clone ends.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The lines fio prints on stderr, in order.
    pub lines: Vec<String>,
    /// The first line, for the job's error detail.
    pub first: String,
}

/// A clone's verifier: its options, the written-block log and the fill state.
pub struct Verifier {
    o: VerifyOpts,
    /// Verify interval in bytes.
    interval: usize,
    /// fio's thread number of the clone (1-based creation index).
    thread: u16,
    /// With fio's random map the log keeps write order; else it is sorted by offset.
    in_order: bool,
    /// Write order; a block written again in a later pass (`loops`) leaves a hole where its
    /// older entry was, so only the newest write of a block is read back.
    list: Vec<Option<Piece>>,
    /// Where each (file, offset)'s entry is in `list`.
    at: std::collections::HashMap<(u32, u64), usize>,
    /// By file, then offset (fio's io_piece tree: the file first).
    sorted: BTreeMap<(u32, u64), Piece>,
    /// Which logged piece goes next (in write-order mode).
    next: usize,
    /// Writes logged since the last backlog verify.
    since_backlog: u64,
    /// Whether rand_seed is checked (mixed read/write jobs without a backlog, fio's rule).
    check_seed: bool,
    /// Whether numberio is checked (write jobs with one block size, not time_based or
    /// verify_only).
    check_numberio: bool,
    /// Whether the clone logs its writes and reads them back (fio's verify phase, or
    /// `verify_backlog`).
    pub phase: bool,
    /// Whether the clone logs its writes for `trim_percentage`'s list even without a verify
    /// phase (fio logs them whenever it verifies: a `time_based` job or `verify=null` too).
    trim_logs: bool,
    /// Whether the reads are logged pieces (fio's `IO_U_F_VER_LIST` in the flags it prints).
    pub from_log: bool,
    seed_state: u64,
    /// `buffer_compress_percentage` and `buffer_pattern`: fio's verify fill makes the tail
    /// of each block zeros (or the pattern) as a write without verify would.
    compress: (u32, Vec<u8>),
    /// The first failure's message, kept for the clone's error.
    pub failures: u64,
    /// Per file, the offsets of the last `iodepth` writes, newest last (fio's
    /// `last_write_comp`, for the state file).
    recent: Vec<std::collections::VecDeque<u64>>,
    /// The job's `iodepth` (the state file's window).
    depth: u32,
    /// `verify_state_load`: the state loaded for this clone.
    loaded: Option<super::vstate::State>,
    /// Blocks read back so far (fio's `io_blocks[DDIR_READ]` in the state's rule).
    reads: u64,
    /// Logged blocks not yet read back (fio's `io_hist_len`: trims are due when it is a
    /// multiple of `trim_backlog`).
    hist: u64,
    /// `trim_percentage`: fio's `trim_state` generator, which picks the logged writes put
    /// on the trim list.
    trim_rng: Option<FioRand>,
    /// The trim list in log order: (file, offset, entry number); an entry whose block was
    /// written again or read back is skipped (see `trim_live`).
    trim_q: std::collections::VecDeque<(u32, u64, u64)>,
    /// The live trim entries: the logged block at (file, offset) and its entry number.
    trim_live: std::collections::HashMap<(u32, u64), u64>,
    /// Entry numbers.
    trim_seq: u64,
    /// Trims left in the current batch (fio's `trim_batch`).
    trim_left: u64,
    /// The last I/O was a read (fio's `last_ddir == DDIR_READ`: no trims begin then).
    last_read: bool,
}

/// fio's tausworthe generators (`lib/rand.c`: taus88, and taus258 for
/// `random_generator=tausworthe64`), seeded as fio seeds them, so that what hostbench draws
/// with them is what fio draws.
#[derive(Debug, Clone)]
pub struct FioRand {
    s: [u64; 5],
    wide: bool,
}

impl FioRand {
    /// fio's `init_rand_seed(state, seed, use64)`.
    pub fn new(seed: u64, wide: bool) -> FioRand {
        let floor = |x: u64, m: u64| if x < m { x + m } else { x };
        // fio's `(2^31) + (2^17) + (2^7)` is a sum of xors: 53.
        let mut r = if wide {
            let lcg = |x: u64| x.wrapping_mul(6_906_969_069) ^ seed;
            let mut s = [0u64; 5];
            let mins = [1, 7, 15, 33, 49];
            let mut x = 53u64;
            for i in 0..5 {
                s[i] = floor(lcg(x), mins[i]);
                x = s[i];
            }
            FioRand { s, wide }
        } else {
            let seed = seed as u32;
            let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
            let mut s = [0u64; 5];
            let mut x = 53u32;
            for (i, m) in [1u64, 7, 15].into_iter().enumerate() {
                s[i] = floor(u64::from(lcg(x)), m) & 0xffff_ffff;
                x = s[i] as u32;
            }
            FioRand { s, wide }
        };
        for _ in 0..6 {
            r.draw();
        }
        r
    }

    /// fio's `__rand`.
    pub fn draw(&mut self) -> u64 {
        let s = &mut self.s;
        if self.wide {
            let x = ((s[0] << 1) ^ s[0]) >> 53;
            s[0] = ((s[0] & 18446744073709551614) << 10) ^ x;
            let x = ((s[1] << 24) ^ s[1]) >> 50;
            s[1] = ((s[1] & 18446744073709551104) << 5) ^ x;
            let x = ((s[2] << 3) ^ s[2]) >> 23;
            s[2] = ((s[2] & 18446744073709547520) << 29) ^ x;
            let x = ((s[3] << 5) ^ s[3]) >> 24;
            s[3] = ((s[3] & 18446744073709420544) << 23) ^ x;
            let x = ((s[4] << 3) ^ s[4]) >> 33;
            s[4] = ((s[4] & 18446744073701163008) << 8) ^ x;
            s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4]
        } else {
            let t = |v: u64, a: u32, b: u32, c: u32, d: u32| -> u64 {
                let v = v as u32;
                u64::from(((v & c) << d) ^ (((v << a) ^ v) >> b))
            };
            s[0] = t(s[0], 13, 19, 4294967294, 12);
            s[1] = t(s[1], 2, 25, 4294967288, 4);
            s[2] = t(s[2], 3, 11, 4294967280, 17);
            s[0] ^ s[1] ^ s[2]
        }
    }

    /// fio's `rand_max`.
    pub fn max(&self) -> u64 {
        if self.wide {
            u64::MAX
        } else {
            u64::from(u32::MAX)
        }
    }
}

/// fio's seed number `off` (`FIO_RAND_*_OFF`) of thread `thread` with a repeatable seed
/// `randseed` (`setup_random_seeds`).
pub fn fio_seed(randseed: u64, thread: u64, off: u64) -> u64 {
    let mut seed = randseed;
    for _ in 0..4 {
        seed = seed.wrapping_mul(0x9e37_0001);
    }
    for _ in 0..off {
        seed = seed.wrapping_mul(0x9e37_0001);
    }
    seed.wrapping_mul(thread).wrapping_add(off)
}

/// fio's `FIO_RAND_TRIM_OFF`.
const FIO_RAND_TRIM_OFF: u64 = 8;

impl Verifier {
    /// The verifier of a clone of `j` (`None` without `verify`); `thread` is fio's thread
    /// number of the clone.
    pub fn new(j: &JobSpec, thread: u16, seed: u64) -> Option<Verifier> {
        let o = &j.verify;
        if o.kind == kind::NONE {
            return None;
        }
        let writes = j.rw.writes(j.rwmixread);
        let reads = j.rw.read_pct(j.rwmixread) > 0;
        let mut o = o.clone();
        if o.experimental {
            // fio logs nothing to read back early, and nothing to trim.
            o.backlog = 0;
            o.trim_pct = 0;
        }
        let trim_rng = (o.trim_pct > 0).then(|| {
            let s = j
                .fio_rand_seed(u64::from(thread), FIO_RAND_TRIM_OFF)
                .unwrap_or(seed);
            FioRand::new(s, j.rand64)
        });
        Some(Verifier {
            o: o.clone(),
            interval: o.interval.max(1) as usize,
            thread,
            in_order: j.rw.random() && !j.norandommap,
            list: Vec::new(),
            at: std::collections::HashMap::new(),
            sorted: BTreeMap::new(),
            next: 0,
            since_backlog: 0,
            check_seed: writes && reads && o.backlog == 0,
            check_numberio: writes
                && j.bsz[1].min == j.bsz[1].max
                && j.bsz[0].min == j.bsz[0].max
                && !j.time_based
                && !o.only,
            // verify=null reads back too (fio pretends to check what it reads).
            phase: writes && (o.do_verify || o.only) && !(j.time_based && o.backlog == 0),
            trim_logs: writes
                && o.do_verify
                && !o.experimental
                && o.trim_pct > 0
                && o.trim_backlog > 0,
            from_log: false,
            seed_state: seed | 1,
            compress: (j.bufs.compress_pct, j.bufs.pattern.clone()),
            failures: 0,
            recent: vec![Default::default(); j.nfiles() as usize],
            depth: j.iodepth.max(1),
            loaded: None,
            reads: 0,
            hist: 0,
            trim_rng,
            trim_q: Default::default(),
            trim_live: Default::default(),
            trim_seq: 0,
            trim_left: 0,
            last_read: false,
        })
    }

    /// `verify_state_load`: the verify phase stops where `s` says.
    pub fn load_state(&mut self, s: super::vstate::State) {
        self.loaded = Some(s);
    }

    /// A write of `file` at `off` was issued (kept for the state file; fio keeps the
    /// completed ones, and a failed write is dropped again by [`Verifier::write_failed`]).
    pub fn issued(&mut self, file: u32, off: u64) {
        if let Some(r) = self.recent.get_mut(file as usize) {
            if r.len() == self.depth as usize {
                r.pop_front();
            }
            r.push_back(off);
        }
    }

    /// The write of `file` at `off` failed: it is not among the completed ones.
    pub fn write_failed(&mut self, file: u32, off: u64) {
        if let Some(r) = self.recent.get_mut(file as usize)
            && let Some(i) = r.iter().rposition(|&o| o == off)
        {
            r.remove(i);
        }
    }

    /// The clone's verify state (fio's `thread_io_list`): `issued` writes, the last
    /// completed ones per file, newest first.
    pub fn state(&self, name: &str, index: usize, issued: u64) -> super::vstate::State {
        super::vstate::State {
            depth: self.depth,
            nofiles: self.recent.len() as u32,
            numberio: issued,
            index: index as u64,
            name: name.as_bytes().to_vec(),
            comps: self
                .recent
                .iter()
                .enumerate()
                .flat_map(|(f, r)| r.iter().rev().map(move |&o| (f as u64, o)))
                .collect(),
        }
    }

    /// Whether the loaded state ends the verify phase before logged block `p`.
    pub fn state_stops(&self, p: &Piece) -> bool {
        self.loaded
            .as_ref()
            .is_some_and(|s| s.stops(self.reads, p.file, p.off))
    }

    /// A logged block was read back.
    pub fn read_back(&mut self) {
        self.reads += 1;
        self.last_read = true;
    }

    /// The options.
    pub fn opts(&self) -> &VerifyOpts {
        &self.o
    }

    fn next_seed(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.seed_state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.seed_state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Fills `buf` (one block, written at absolute offset `off`) as fio does before a write:
    /// the data (random from a new seed, or the pattern), then a header and checksum per
    /// interval. Returns the seed (logged with the write).
    pub fn fill(&mut self, buf: &mut [u8], off: u64, numberio: u16, time_ns: u64) -> u64 {
        let k = self.o.kind;
        let seed = if self.o.pattern.is_none() {
            let s = self.next_seed();
            if self.compress.0 > 0 {
                super::bufs::fill_pct(buf, s, self.compress.0, &self.compress.1);
            } else {
                fill_random(buf, s);
            }
            s
        } else {
            self.fill_pattern(buf, off);
            0
        };
        if k == kind::NULL || k == kind::PATTERN {
            return seed;
        }
        let hs = hdr_size(k);
        let inc = self.chunk(buf.len());
        for (n, c) in buf.chunks_mut(inc).enumerate() {
            let len = c.len();
            let h = &mut c[..HDR];
            h[0..2].copy_from_slice(&MAGIC.to_le_bytes());
            h[2..4].copy_from_slice(&k.to_le_bytes());
            h[4..8].copy_from_slice(&(len as u32).to_le_bytes());
            h[8..16].copy_from_slice(&seed.to_le_bytes());
            let hoff = off + (n * self.interval) as u64;
            h[16..24].copy_from_slice(&hoff.to_le_bytes());
            h[24..28].copy_from_slice(&((time_ns / 1_000_000_000) as u32).to_le_bytes());
            h[28..32].copy_from_slice(&((time_ns % 1_000_000_000) as u32).to_le_bytes());
            h[32..34].copy_from_slice(&self.thread.to_le_bytes());
            h[34..36].copy_from_slice(&numberio.to_le_bytes());
            let crc = fio_crc32c(&h[..36]);
            h[36..40].copy_from_slice(&crc.to_le_bytes());
            if hs > HDR && len > hs {
                let (head, data) = c.split_at_mut(hs);
                checksum(k, data, &mut head[HDR..hs]);
            }
            if self.o.offset > 0 {
                swap(c, self.o.offset as usize, hs);
            }
        }
        seed
    }

    /// fio's header step: the interval, unless the block is shorter.
    fn chunk(&self, len: usize) -> usize {
        if self.interval <= len {
            self.interval
        } else {
            len
        }
    }

    fn fill_pattern(&self, buf: &mut [u8], off: u64) {
        let p = self.o.pattern.as_ref().expect("pattern");
        let pat = self.pasted(p, off);
        for (i, b) in buf.iter_mut().enumerate() {
            *b = pat[i % pat.len()];
        }
    }

    /// The pattern with `%o` replaced by block offset `off`.
    fn pasted(&self, p: &VerifyPattern, off: u64) -> Vec<u8> {
        let mut pat = p.bytes.clone();
        for &o in &p.offsets {
            let n = (pat.len() - o).min(8);
            pat[o..o + n].copy_from_slice(&off.to_le_bytes()[..n]);
        }
        pat
    }

    /// Logs a completed write (fio's `log_io_piece`).
    pub fn log(&mut self, p: Piece) {
        if !self.phase && !self.trim_logs {
            return;
        }
        self.since_backlog += 1;
        self.last_read = false;
        // fio's io_u_should_trim: a draw per logged write.
        let trim = self.trim_rng.as_mut().is_some_and(|r| {
            let val = (r.max() / 100) * u64::from(self.o.trim_pct);
            r.draw() <= val
        });
        self.hist += 1;
        if self.in_order {
            if let Some(i) = self.at.insert((p.file, p.off), self.list.len())
                && i >= self.next
                && self.list[i].take().is_some()
            {
                self.hist -= 1;
                self.trim_live.remove(&(p.file, p.off));
            }
            self.list.push(Some(p));
            self.add_trim(trim, p.file, p.off);
            return;
        }
        // Sorted by file and offset; an overlapping older piece of the file is dropped.
        let f = p.file;
        let end = p.off + p.len as u64;
        let mut drop = Vec::new();
        if let Some((&o, q)) = self.sorted.range((f, 0)..(f, p.off)).next_back()
            && o.1 + q.len as u64 > p.off
        {
            drop.push(o);
        }
        for (&o, _) in self.sorted.range((f, p.off)..(f, end)) {
            drop.push(o);
        }
        for o in drop {
            self.sorted.remove(&o);
            self.trim_live.remove(&o);
            self.hist -= 1;
        }
        self.sorted.insert((f, p.off), p);
        self.add_trim(trim, f, p.off);
    }

    /// Puts the block just logged at (`file`, `off`) on the trim list when `trim`.
    fn add_trim(&mut self, trim: bool, file: u32, off: u64) {
        if trim {
            self.trim_seq += 1;
            self.trim_q.push_back((file, off, self.trim_seq));
            self.trim_live.insert((file, off), self.trim_seq);
        }
    }

    /// Logged writes not read back yet (fio's `io_hist_len`).
    pub fn pending(&self) -> u64 {
        self.hist
    }

    /// Entries on the trim list (fio's `trim_entries`).
    pub fn trim_entries(&self) -> usize {
        self.trim_live.len()
    }

    /// Whether a trim is due before the next I/O (fio's `check_get_trim`): within a batch,
    /// or when the log holds a multiple of `trim_backlog` blocks and the last I/O was not
    /// a read.
    pub fn trim_ready(&self) -> bool {
        let b = self.o.trim_backlog;
        b > 0
            && !self.trim_live.is_empty()
            && (self.trim_left > 0 || (self.hist.is_multiple_of(b) && !self.last_read))
    }

    /// The next block to trim when one is due ([`Self::trim_ready`]; fio's
    /// `get_next_trim`): it is marked trimmed (its verify read then wants zeros), or with
    /// `trim_verify_zero=0` dropped from the log.
    pub fn next_trim(&mut self) -> Option<Piece> {
        if !self.trim_ready() {
            return None;
        }
        if self.trim_left > 0 {
            self.trim_left -= 1;
        } else {
            self.trim_left = if self.o.trim_batch > 0 {
                self.o.trim_batch
            } else {
                self.o.trim_backlog
            };
        }
        self.last_read = false;
        while let Some((f, off, n)) = self.trim_q.pop_front() {
            if self.trim_live.get(&(f, off)) != Some(&n) {
                continue;
            }
            self.trim_live.remove(&(f, off));
            let keep = self.o.trim_zero;
            let p = if self.in_order {
                let i = *self.at.get(&(f, off))?;
                let slot = &mut self.list[i];
                if keep {
                    slot.as_mut()?.trimmed = true;
                    *slot
                } else {
                    self.at.remove(&(f, off));
                    slot.take()
                }
            } else if keep {
                let q = self.sorted.get_mut(&(f, off))?;
                q.trimmed = true;
                Some(*q)
            } else {
                self.sorted.remove(&(f, off))
            };
            if !keep && p.is_some() {
                self.hist -= 1;
            }
            return p;
        }
        None
    }

    /// Drops the logged write at `off`: it failed, and the job went on
    /// (`continue_on_error`; fio's `unlog_io_piece`), so it is not read back.
    pub fn unlog(&mut self, file: u32, off: u64) {
        let gone = if self.in_order {
            self.at
                .remove(&(file, off))
                .is_some_and(|i| i >= self.next && self.list[i].take().is_some())
        } else {
            self.sorted.remove(&(file, off)).is_some()
        };
        if gone {
            self.hist -= 1;
            self.trim_live.remove(&(file, off));
        }
    }

    /// Whether a backlog verify is due after the last logged write.
    pub fn backlog_due(&self) -> bool {
        self.o.backlog > 0 && self.since_backlog >= self.o.backlog
    }

    /// How many pieces a backlog verify takes (`verify_backlog_batch`, default the
    /// backlog).
    pub fn backlog_batch(&mut self) -> u64 {
        self.since_backlog = 0;
        if self.o.backlog_batch > 0 {
            self.o.backlog_batch
        } else {
            self.o.backlog
        }
    }

    /// The next logged piece to read back (fio's `get_next_verify`).
    pub fn next_piece(&mut self) -> Option<Piece> {
        let p = self.take_piece();
        if let Some(q) = p {
            self.hist = self.hist.saturating_sub(1);
            self.trim_live.remove(&(q.file, q.off));
        }
        p
    }

    fn take_piece(&mut self) -> Option<Piece> {
        if self.in_order {
            let mut p = None;
            while p.is_none() && self.next < self.list.len() {
                p = self.list[self.next].take();
                self.next += 1;
            }
            if let Some(q) = p
                && self.at.get(&(q.file, q.off)) == Some(&(self.next - 1))
            {
                self.at.remove(&(q.file, q.off));
            }
            if self.next == self.list.len() {
                self.list.clear();
                self.at.clear();
                self.next = 0;
            }
            p
        } else {
            self.sorted.pop_first().map(|(_, p)| p)
        }
    }

    /// Checks `buf`, read from `file` at absolute offset `off`: `expect` is the logged
    /// write (for the numberio and seed checks) when the read is a verify read. Prints
    /// nothing: the caller prints the failure's lines.
    pub fn check(
        &mut self,
        buf: &mut [u8],
        off: u64,
        expect: Option<Piece>,
        file: &Path,
    ) -> Result<(), Failure> {
        let k = self.o.kind;
        if k == kind::NULL {
            return Ok(());
        }
        if expect.is_some_and(|e| e.trimmed) {
            // fio's verify_trimmed_io_u: the whole block must be zeros.
            let Some(at) = buf
                .iter()
                .position(|&b| b != 0)
                .filter(|_| self.o.trim_zero)
            else {
                return Ok(());
            };
            self.failures += 1;
            let fname = file.strip_prefix(".").unwrap_or(file).display();
            let line = format!(
                "trim: verify failed at file {fname} offset {off}, length {}, block offset {at}",
                buf.len()
            );
            return Err(Failure {
                lines: vec![line.clone()],
                first: line,
            });
        }
        let hs = hdr_size(k);
        let inc = self.chunk(buf.len());
        let blen = buf.len();
        let mut first_fail: Option<Failure> = None;
        for (n, c) in buf.chunks_mut(inc).enumerate() {
            if first_fail.is_some() && self.o.fatal {
                break;
            }
            if self.o.offset > 0 && hs > 0 {
                swap(c, self.o.offset as usize, hs);
            }
            let chunk_off = off + (n * inc) as u64;
            let r = self.check_chunk(c, n, off, chunk_off, blen, expect, file);
            if let Err(f) = r {
                self.failures += 1;
                // A header failure ends the block's check at once (fio returns there).
                let hdr_fail = f.first.starts_with("verify: ");
                if first_fail.is_none() {
                    first_fail = Some(f);
                } else if let Some(ff) = first_fail.as_mut() {
                    ff.lines.extend(f.lines);
                }
                if hdr_fail {
                    break;
                }
            }
        }
        match first_fail {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn check_chunk(
        &self,
        c: &[u8],
        n: usize,
        block_off: u64,
        chunk_off: u64,
        blen: usize,
        expect: Option<Piece>,
        file: &Path,
    ) -> Result<(), Failure> {
        let k = self.o.kind;
        let len = c.len();
        // fio names the file as the job does: a generated name without the `./` of the
        // current directory.
        let fname = file.strip_prefix(".").unwrap_or(file).display();
        if k != kind::PATTERN && len < HDR {
            let line = format!(
                "verify: bad header length {len}, wanted {} at file {fname} offset {chunk_off}, \
                 length {len} (requested block: offset={block_off}, length={blen})",
                self.interval
            );
            return Err(Failure {
                lines: vec![line.clone()],
                first: line,
            });
        }
        if k != kind::PATTERN {
            let rd16 = |i: usize| u16::from_le_bytes([c[i], c[i + 1]]);
            let rd32 = |i: usize| u32::from_le_bytes(c[i..i + 4].try_into().unwrap());
            let rd64 = |i: usize| u64::from_le_bytes(c[i..i + 8].try_into().unwrap());
            let what = if rd16(0) != MAGIC {
                Some(format!(
                    "verify: bad magic header {:x}, wanted {MAGIC:x}",
                    rd16(0)
                ))
            } else if rd32(4) as usize != len {
                Some(format!(
                    "verify: bad header length {}, wanted {len}",
                    rd32(4)
                ))
            } else if self.check_seed
                && let Some(e) = expect
                && rd64(8) != e.seed
            {
                Some(format!(
                    "verify: bad header rand_seed {}, wanted {}",
                    rd64(8),
                    e.seed
                ))
            } else if rd64(16) != block_off + (n * self.interval) as u64 {
                Some(format!(
                    "verify: bad header offset {}, wanted {block_off}",
                    rd64(16)
                ))
            } else if self.check_numberio
                && let Some(e) = expect
                && rd16(34) != e.numberio
            {
                Some(format!(
                    "verify: bad header numberio {}, wanted {}",
                    rd16(34),
                    e.numberio
                ))
            } else if fio_crc32c(&c[..36]) != rd32(36) {
                Some(format!(
                    "verify: bad header crc {:x}, calculated {:x}",
                    rd32(36),
                    fio_crc32c(&c[..36])
                ))
            } else {
                None
            };
            if let Some(w) = what {
                let line = format!(
                    "{w} at file {fname} offset {chunk_off}, length {len} (requested block: \
                     offset={block_off}, length={blen})"
                );
                let mut lines = vec![line.clone()];
                if self.o.dump {
                    lines.extend(dump(c, file, chunk_off, "hdr_fail"));
                }
                return Err(Failure { lines, first: line });
            }
        }
        let flags = if self.from_log { 0x88 } else { 0x8 };
        let fail_line = |name: &str| {
            format!(
                "{name:.8}: verify failed at file {fname} offset {chunk_off}, length {len} \
                 (requested block: offset={block_off}, length={blen}, flags={flags:x})"
            )
        };
        let hs = hdr_size(k);
        match k {
            kind::META | kind::PATTERN_HDR | kind::PATTERN => {
                let Some(p) = self.o.pattern.as_ref() else {
                    return Ok(());
                };
                let pat = self.pasted(p, block_off);
                let start = (n * inc_of(self.interval, blen)) + hs;
                for (i, &b) in c[hs..].iter().enumerate() {
                    let want = pat[(start + i) % pat.len()];
                    if b != want {
                        let first = fail_line("pattern");
                        let mut lines = vec![
                            format!(
                                "fio: got pattern '{b:02x}', wanted '{want:02x}'. Bad bits {}",
                                (b ^ want).count_ones()
                            ),
                            format!("fio: bad pattern block offset {i}"),
                            first.clone(),
                        ];
                        if self.o.dump {
                            lines.extend(dump(c, file, chunk_off, "received"));
                            let mut exp = vec![0u8; len];
                            for (j, e) in exp.iter_mut().enumerate() {
                                *e = pat[(n * inc_of(self.interval, blen) + j) % pat.len()];
                            }
                            exp[..hs].copy_from_slice(&c[..hs]);
                            lines.extend(dump(&exp, file, chunk_off, "expected"));
                        }
                        return Err(Failure { lines, first });
                    }
                }
                Ok(())
            }
            _ => {
                let mut got = [0u8; 128];
                let n_cmp = checksum(k, &c[hs..], &mut got);
                let stored = &c[HDR..HDR + n_cmp];
                if stored == &got[..n_cmp] {
                    return Ok(());
                }
                let first = fail_line(kind_name(k));
                let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
                let mut lines = vec![
                    first.clone(),
                    format!(
                        "       Expected CRC: {}",
                        hex(&stored[..sum_len(k).min(n_cmp)])
                    ),
                    format!(
                        "       Received CRC: {}",
                        hex(&got[..sum_len(k).min(n_cmp)])
                    ),
                ];
                if self.o.dump {
                    lines.extend(dump(c, file, chunk_off, "received"));
                }
                Err(Failure { lines, first })
            }
        }
    }
}

fn inc_of(interval: usize, blen: usize) -> usize {
    if interval <= blen { interval } else { blen }
}

/// Swaps the header (`n` bytes at the chunk's start) with the bytes at `at` (fio's
/// `verify_offset`).
fn swap(c: &mut [u8], at: usize, n: usize) {
    if n == 0 || at + n > c.len() {
        return;
    }
    let (a, b) = c.split_at_mut(at);
    if at >= n {
        a[..n].swap_with_slice(&mut b[..n]);
    } else {
        // Overlapping ranges: fio swaps through a temporary copy.
        let tmp: Vec<u8> = c[..n].to_vec();
        c.copy_within(at..at + n, 0);
        c[at..at + n].copy_from_slice(&tmp);
    }
}

/// Random data from `seed`: four independent xorshift64 streams side by side (the CPU runs
/// them in parallel), words little-endian. fio's own generator differs; nothing checks the
/// data but its checksum.
#[inline]
pub fn fill_random(buf: &mut [u8], seed: u64) {
    // splitmix64 spreads one seed over the four streams (none of them zero).
    let mut z = seed;
    let mut lane = || {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut x = z;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (x ^ (x >> 31)) | 1
    };
    let mut st = [lane(), lane(), lane(), lane()];
    let step = |x: &mut u64| {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    };
    let mut chunks = buf.chunks_exact_mut(32);
    for c in &mut chunks {
        for (k, x) in st.iter_mut().enumerate() {
            c[k * 8..k * 8 + 8].copy_from_slice(&step(x).to_le_bytes());
        }
    }
    for (i, c) in chunks.into_remainder().chunks_mut(8).enumerate() {
        let w = step(&mut st[i % 4]).to_le_bytes();
        let n = c.len();
        c.copy_from_slice(&w[..n]);
    }
}

/// fio's `verify_dump`: `buf` into `<file's base name>.<offset>.<what>` in the current
/// directory, or `--aux-path` (never over an existing file, never through a symlink); the line fio logs.
fn dump(buf: &[u8], file: &Path, off: u64, what: &str) -> Vec<String> {
    let base = file
        .file_name()
        .map_or_else(|| "file".into(), |b| b.to_string_lossy().into_owned());
    // fio's --aux-path: the dumps go there.
    let name = match super::trigger::aux_path() {
        Some(aux) => Path::new(&aux)
            .join(format!("{base}.{off}.{what}"))
            .to_string_lossy()
            .into_owned(),
        None => format!("{base}.{off}.{what}"),
    };
    use std::os::unix::fs::OpenOptionsExt;
    let r = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o644)
        .open(&name)
        .and_then(|mut f| f.write_all(buf));
    match r {
        Ok(()) => vec![format!("       {what} data dumped as {name}")],
        Err(e) => vec![format!("fio: could not dump {what} data as {name}: {e}")],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two notices fio 3.33 prints word for word (init.c: a single space where its
    /// source continues the string on the next line).
    #[test]
    fn notices_are_fios_words() {
        let job = |t: &str| {
            super::super::job::jobs_from_sections(&super::super::job::from_text(t).unwrap())
                .unwrap()
                .remove(0)
        };
        let n = fio_warnings(&job(
            "[w]\nrw=write\nsize=64k\nverify=md5\nnumjobs=2\nfilename=f\n",
        ));
        assert_eq!(
            n,
            [
                "fio: multiple writers may overwrite blocks that belong to other jobs. This can \
              cause verification failures."
            ]
        );
        let n = fio_warnings(&job(
            "[w]\nrw=write\nsize=64k\nverify=md5\ntime_based\nruntime=1\n",
        ));
        assert_eq!(
            n,
            [
                "fio: verification read phase will never start because write phase uses all of \
              runtime"
            ]
        );
    }

    #[test]
    fn crc_tables_match_the_known_entries() {
        // fio's crc7 table starts 00 09 12 1b ..., entry 8 is 0x48 and entry 16 0x19.
        assert_eq!(&CRC7[..4], &[0x00, 0x09, 0x12, 0x1b]);
        assert_eq!((CRC7[8], CRC7[16]), (0x48, 0x19));
        // CRC-16/ARC of "123456789" is 0xBB3D; CRC-64/REDIS (fio's crc64) is
        // 0xE9C6D914C4B8D9CA.
        let mut o = [0u8; 128];
        checksum(kind::CRC16, b"123456789", &mut o);
        assert_eq!(u16::from_le_bytes([o[0], o[1]]), 0xBB3D);
        checksum(kind::CRC64, b"123456789", &mut o);
        assert_eq!(
            u64::from_le_bytes(o[..8].try_into().unwrap()),
            0xE9C6_D914_C4B8_D9CA
        );
        // CRC-32C of "123456789" is 0xE3069283; fio keeps it uncomplemented.
        assert_eq!(fio_crc32c(b"123456789"), !0xE306_9283);
        // CRC-7/MMC of "123456789" is 0x75.
        checksum(kind::CRC7, b"123456789", &mut o);
        assert_eq!(o[0], 0x75);
        // fio's crc32 (MSB first, no complement) of "123456789": CRC-32/POSIX without its
        // final xor and length, 0x89A1897F.
        checksum(kind::CRC32, b"123456789", &mut o);
        assert_eq!(u32::from_le_bytes(o[..4].try_into().unwrap()), 0x89A1_897F);
    }

    #[test]
    fn sha3_sums_are_the_fips_202_check_values() {
        // FIPS 202's "abc" examples; fio's sha3 writes the digest's bytes in order.
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        let mut o = [0u8; 128];
        for (k, n, want) in [
            (
                kind::SHA3_224,
                28,
                "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf",
            ),
            (
                kind::SHA3_256,
                32,
                "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
            ),
            (
                kind::SHA3_384,
                48,
                "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b2\
                 98d88cea927ac7f539f1edf228376d25",
            ),
            (
                kind::SHA3_512,
                64,
                "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e\
                 10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0",
            ),
        ] {
            assert_eq!(sum_len(k), n);
            assert_eq!(checksum(k, b"abc", &mut o), n);
            assert_eq!(hex(&o[..n]), want, "type {k}");
        }
    }

    #[test]
    fn random_fill_differs_by_seed_and_does_not_repeat() {
        let (mut a, mut b) = (vec![0u8; 4100], vec![0u8; 4100]);
        fill_random(&mut a, 1);
        fill_random(&mut b, 2);
        assert_ne!(a, b);
        let mut words: Vec<&[u8]> = a[..4096].chunks(8).collect();
        words.sort();
        words.dedup();
        assert_eq!(words.len(), 512);
        assert!(a[4096..].iter().any(|&x| x != 0));
    }

    #[test]
    fn patterns_parse_as_fio_parses_them() {
        let p = parse_pattern("0xaa555aa5\"ab\"-2").unwrap();
        assert_eq!(
            p.bytes,
            [0xaa, 0x55, 0x5a, 0xa5, b'a', b'b', 0xfe, 0xff, 0xff, 0xff]
        );
        assert_eq!(parse_pattern("66").unwrap().bytes, [0x42]);
        assert_eq!(parse_pattern("0").unwrap().bytes, [0]);
        assert_eq!(parse_pattern("0xabc").unwrap().bytes, [0x0a, 0xbc]);
        assert_eq!(parse_pattern("0xff0x14").unwrap().bytes, [0xff, 0x14]);
        let o = parse_pattern("%o\"x\"").unwrap();
        assert_eq!((o.bytes.len(), o.offsets.clone()), (9, vec![0]));
        assert!(parse_pattern("zz").is_err());
        assert!(parse_pattern("\"ab").is_err());
        assert!(parse_pattern("%d").is_err());
        assert!(parse_pattern(&"\"a\"".repeat(513)).is_err());
    }

    fn opts(k: u16, interval: u64) -> Verifier {
        Verifier {
            o: VerifyOpts {
                kind: k,
                interval,
                ..Default::default()
            },
            interval: interval as usize,
            thread: 1,
            in_order: false,
            list: Vec::new(),
            at: std::collections::HashMap::new(),
            sorted: BTreeMap::new(),
            next: 0,
            since_backlog: 0,
            check_seed: false,
            check_numberio: true,
            phase: true,
            trim_logs: false,
            from_log: true,
            seed_state: 7,
            compress: (0, Vec::new()),
            failures: 0,
            recent: vec![Default::default()],
            depth: 1,
            loaded: None,
            reads: 0,
            hist: 0,
            trim_rng: None,
            trim_q: Default::default(),
            trim_live: Default::default(),
            trim_seq: 0,
            trim_left: 0,
            last_read: false,
        }
    }

    fn piece(off: u64) -> Piece {
        Piece {
            file: 0,
            off,
            len: 4096,
            numberio: 0,
            seed: 0,
            trimmed: false,
        }
    }

    #[test]
    fn fio_rand_draws_fio_numbers() {
        // fio 3.33's taus88 seeded with 1 (init_rand), its first draws: the generator
        // that picks trim_percentage's blocks as fio picks them (the counts are compared
        // with fio in fio_trimv.rs).
        let mut r = FioRand::new(1, false);
        let a: Vec<u64> = (0..3).map(|_| r.draw()).collect();
        let mut r2 = FioRand::new(1, false);
        assert_eq!(a, (0..3).map(|_| r2.draw()).collect::<Vec<_>>());
        assert!(a.iter().all(|&x| x <= u64::from(u32::MAX)));
        let mut w = FioRand::new(1, true);
        assert!((0..64).any(|_| w.draw() > u64::from(u32::MAX)));
        // fio's seeds: randseed 0x89 mixed four times, then per offset and thread.
        assert_ne!(fio_seed(0x89, 1, 8), fio_seed(0x89, 2, 8));
        assert_eq!(fio_seed(0, 5, 8), 8);
    }

    #[test]
    fn trims_come_at_backlog_multiples_and_drain_the_list() {
        let mut v = opts(kind::MD5, 4096);
        v.o.trim_pct = 100;
        v.o.trim_backlog = 4;
        v.trim_rng = Some(FioRand::new(1, false));
        let mut trims = Vec::new();
        for i in 0..10u64 {
            v.log(piece(i * 4096));
            while let Some(p) = v.next_trim() {
                assert!(p.trimmed);
                trims.push((i, p.off / 4096));
            }
        }
        // After the 4th write every entry so far (fio's batch restarts while the log length
        // stays a multiple); what is left of the batch (fio's trim_batch is kept) trims
        // the 5th at once; then the 8th write's flush, and the batch's rest again.
        assert_eq!(
            trims,
            [
                (3, 0),
                (3, 1),
                (3, 2),
                (3, 3),
                (4, 4),
                (7, 5),
                (7, 6),
                (7, 7),
                (8, 8),
                (9, 9)
            ]
        );
        assert_eq!(v.trim_entries(), 0);
        // A read (a backlog verify) holds trims back until the next write.
        v.log(piece(10 * 4096));
        v.log(piece(11 * 4096));
        v.read_back();
        assert!(!v.trim_ready());
        // Read back, a trimmed block must be zeros; an entry read back leaves the list.
        let all: Vec<Piece> = std::iter::from_fn(|| v.next_piece()).collect();
        assert_eq!(all.iter().filter(|p| p.trimmed).count(), 10);
        let p = all[0];
        let mut zero = vec![0u8; 4096];
        v.check(&mut zero, p.off, Some(p), Path::new("./f"))
            .unwrap();
        zero[100] = 1;
        let f = v
            .check(&mut zero, p.off, Some(p), Path::new("./f"))
            .unwrap_err();
        assert_eq!(
            f.first,
            format!(
                "trim: verify failed at file f offset {}, length 4096, block offset 100",
                p.off
            )
        );
        assert_eq!(v.trim_entries(), 0);
    }

    #[test]
    fn trim_verify_zero_0_drops_trimmed_blocks_and_batches_end() {
        let mut v = opts(kind::MD5, 4096);
        v.o.trim_pct = 100;
        v.o.trim_backlog = 2;
        v.o.trim_batch = 1;
        v.o.trim_zero = false;
        v.trim_rng = Some(FioRand::new(1, false));
        let mut n = 0;
        for i in 0..4u64 {
            v.log(piece(i * 4096));
            while v.next_trim().is_some() {
                n += 1;
            }
        }
        // 2 logged: a trim (log 1, odd) and the batch's one more (log 0); then 2 more
        // logged: the same again.
        assert_eq!(n, 4);
        assert_eq!(std::iter::from_fn(|| v.next_piece()).count(), 0);
        // A block written again leaves the list with its older write.
        v.o.trim_backlog = 100;
        v.log(piece(0));
        v.log(piece(0));
        assert_eq!(v.trim_entries(), 1);
    }

    #[test]
    fn a_filled_block_verifies_and_a_flipped_byte_is_found() {
        for k in [
            kind::MD5,
            kind::CRC64,
            kind::CRC32,
            kind::CRC32C,
            kind::CRC16,
            kind::CRC7,
            kind::SHA1,
            kind::SHA256,
            kind::SHA512,
            kind::XXHASH,
            kind::META,
        ] {
            let mut v = opts(k, 1024);
            let mut b = vec![0u8; 4096];
            let seed = v.fill(&mut b, 8192, 3, 5);
            let p = Piece {
                file: 0,
                off: 8192,
                len: 4096,
                numberio: 3,
                seed,
                trimmed: false,
            };
            v.check(&mut b.clone(), 8192, Some(p), Path::new("f"))
                .unwrap();
            // A data byte in the third chunk: every checksum sees it (meta does not).
            b[2048 + 300] ^= 0x10;
            let r = v.check(&mut b.clone(), 8192, Some(p), Path::new("f"));
            // fio's sha512 field holds only the data's first 128 bytes and its tail: a byte
            // between them goes unseen (in fio too).
            if k == kind::META || k == kind::SHA512 {
                assert!(r.is_ok());
            } else {
                let f = r.unwrap_err();
                assert!(
                    f.first.contains("verify failed at file f offset 10240, length 1024 (requested block: offset=8192, length=4096, flags=88)"),
                    "{k}: {}",
                    f.first
                );
            }
            // A header byte: the header crc.
            let mut h = b.clone();
            h[2048 + 300] ^= 0x10;
            h[2048 + 30] ^= 1;
            let f = v.check(&mut h, 8192, Some(p), Path::new("f")).unwrap_err();
            assert!(f.first.starts_with("verify: bad header crc"), "{}", f.first);
            // The wrong numberio.
            b[2048 + 300] ^= 0x10;
            let q = Piece { numberio: 4, ..p };
            let f = v.check(&mut b, 8192, Some(q), Path::new("f")).unwrap_err();
            assert!(
                f.first
                    .starts_with("verify: bad header numberio 3, wanted 4"),
                "{}",
                f.first
            );
        }
    }

    #[test]
    fn verify_offset_moves_the_header_and_patterns_are_checked() {
        let mut v = opts(kind::PATTERN_HDR, 4096);
        v.o.pattern = Some(parse_pattern("%o").unwrap());
        v.o.offset = 512;
        let mut b = vec![0u8; 4096];
        v.fill(&mut b, 65536, 0, 0);
        assert_ne!(u16::from_le_bytes([b[0], b[1]]), MAGIC);
        assert_eq!(u16::from_le_bytes([b[512], b[513]]), MAGIC);
        assert_eq!(&b[1000..1008], &65536u64.to_le_bytes());
        v.check(&mut b.clone(), 65536, None, Path::new("f"))
            .unwrap();
        b[1003] ^= 1;
        let f = v.check(&mut b, 65536, None, Path::new("f")).unwrap_err();
        assert_eq!(f.lines[1], "fio: bad pattern block offset 963");
    }

    #[test]
    fn the_log_sorts_and_replaces_overlaps_unless_in_write_order() {
        let mut v = opts(kind::MD5, 4096);
        for (off, n) in [(8192u64, 0u16), (0, 1), (4096, 2), (0, 3)] {
            v.log(Piece {
                file: 0,
                off,
                len: 4096,
                numberio: n,
                seed: 0,
                trimmed: false,
            });
        }
        let got: Vec<_> = std::iter::from_fn(|| v.next_piece())
            .map(|p| (p.off, p.numberio))
            .collect();
        assert_eq!(got, [(0, 3), (4096, 2), (8192, 0)]);
        // Several files: by file, then offset (fio's tree compares the file first); the
        // same offset of another file is no overlap.
        for (file, off) in [(1u32, 0u64), (0, 4096), (1, 4096), (0, 0)] {
            v.log(Piece {
                file,
                off,
                len: 4096,
                numberio: 0,
                seed: 0,
                trimmed: false,
            });
        }
        let got: Vec<_> = std::iter::from_fn(|| v.next_piece())
            .map(|p| (p.file, p.off))
            .collect();
        assert_eq!(got, [(0, 0), (0, 4096), (1, 0), (1, 4096)]);
        v.in_order = true;
        for (off, n) in [(8192u64, 0u16), (0, 1), (8192, 2), (4096, 3)] {
            v.log(Piece {
                file: 0,
                off,
                len: 4096,
                numberio: n,
                seed: 0,
                trimmed: false,
            });
        }
        let got: Vec<_> = std::iter::from_fn(|| v.next_piece())
            .map(|p| p.off)
            .collect();
        assert_eq!(got, [0, 8192, 4096]);
    }
}
