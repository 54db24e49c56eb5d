//! fio's `--crctest[=LIST]`: how fast each checksum runs, as fio 3.33 measures it (its
//! `crc/test.c`) — one 128 KiB buffer of random bytes checksummed 2048 times (256 MiB) per
//! test, timed in whole microseconds after a 100 ms spin and one untimed pass of the first
//! test, and printed `name:<tab(s)>%8.2f MiB/sec`. The checksums are hostbench's own
//! verify code ([`super::verify`]); the three fio tests that are no `verify=` type
//! (`murmur3`, `jhash`, `fnv`: fio hashes with them inside itself) have no code here and
//! are not measured.

use super::verify::kind;
use std::time::{Duration, Instant};

/// Bytes of the buffer (fio's `CHUNK`).
pub const CHUNK: usize = 128 * 1024;
/// Passes over it per test (fio's `NR_CHUNKS`).
pub const ROUNDS: usize = 2048;

/// fio 3.33's tests in its order, with the verify type hostbench times for each (`None`:
/// hostbench has no such checksum).
pub const TESTS: &[(&str, Option<u16>)] = &[
    ("md5", Some(kind::MD5)),
    ("crc64", Some(kind::CRC64)),
    ("crc32", Some(kind::CRC32)),
    ("crc32c", Some(kind::CRC32C)),
    ("crc16", Some(kind::CRC16)),
    ("crc7", Some(kind::CRC7)),
    ("sha1", Some(kind::SHA1)),
    ("sha256", Some(kind::SHA256)),
    ("sha512", Some(kind::SHA512)),
    ("xxhash", Some(kind::XXHASH)),
    ("murmur3", None),
    ("jhash", None),
    ("fnv", None),
    ("sha3-224", Some(kind::SHA3_224)),
    ("sha3-256", Some(kind::SHA3_256)),
    ("sha3-384", Some(kind::SHA3_384)),
    ("sha3-512", Some(kind::SHA3_512)),
];

/// What `--crctest[=LIST]` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The tests to run, as indexes into [`TESTS`] in fio's order.
    Run(Vec<usize>),
    /// `help` or `list`: the names, one a line (fio then exits 1).
    List,
    /// No name of the list is a test's: fio says so and lists them (exit 1).
    Unknown,
}

/// fio's reading of `--crctest[=LIST]`: no value is every test; `help`/`list` the names; a
/// comma list the tests it names exactly, in fio's order whatever the list's (names that
/// are no test's are passed over, unless none is a test's).
pub fn select(arg: Option<&str>) -> Selection {
    let Some(list) = arg else {
        return Selection::Run((0..TESTS.len()).collect());
    };
    if list == "help" || list == "list" {
        return Selection::List;
    }
    let named: Vec<usize> = (0..TESTS.len())
        .filter(|&i| list.split(',').any(|n| n == TESTS[i].0))
        .collect();
    if named.is_empty() {
        Selection::Unknown
    } else {
        Selection::Run(named)
    }
}

/// The bytes of one test's work.
pub const fn bytes() -> u64 {
    (CHUNK * ROUNDS) as u64
}

/// fio's line for a test that took `usec` µs: MiB/s with two decimals in 8 columns after
/// one tab (names of 7 characters or more) or two; `inf` for a test under 1 µs.
pub fn line(name: &str, usec: u64) -> String {
    if usec == 0 {
        return format!("{name}:inf MiB/sec");
    }
    let mib_s = bytes() as f64 / usec as f64 / (1.024 * 1.024);
    let pre = if name.len() >= 7 { "\t" } else { "\t\t" };
    format!("{name}:{pre}{mib_s:8.2} MiB/sec")
}

/// fio's sha512 test: the hash's update over the buffer, with no final step (fio's
/// `verify=sha512` never finalises either). hostbench's verify needs no compression for
/// that field ([`super::verify`]), so the compression is timed here to measure what fio's
/// test measures.
fn sha512_update(state: &mut [u64; 8], buf: &[u8]) {
    use sha2::digest::generic_array::GenericArray;
    for c in buf.chunks_exact(128) {
        sha2::compress512(state, &[*GenericArray::from_slice(c)]);
    }
}

/// One test's 2048 passes over `buf`; a value of the results so that none is skipped.
fn pass(k: u16, buf: &[u8]) -> u64 {
    let mut out = [0u8; 128];
    let mut acc = 0u64;
    if k == kind::SHA512 {
        let mut st = [0u64; 8];
        for _ in 0..ROUNDS {
            sha512_update(&mut st, buf);
        }
        return st[0];
    }
    for _ in 0..ROUNDS {
        let n = super::verify::checksum(k, std::hint::black_box(buf), &mut out);
        acc = acc.wrapping_add(out[..n.min(8)].iter().map(|&b| u64::from(b)).sum::<u64>());
    }
    acc
}

/// Runs the tests `sel` (indexes into [`TESTS`]) as fio does, calling `each` with each
/// test's name and its time in µs (`None`: hostbench has no such checksum), in order.
pub fn run(sel: &[usize], mut each: impl FnMut(&'static str, Option<u64>)) {
    let mut buf = vec![0u8; CHUNK];
    super::verify::fill_random(&mut buf, 0x8989);
    let mut first = true;
    for &i in sel {
        let (name, k) = TESTS[i];
        let Some(k) = k else {
            each(name, None);
            continue;
        };
        if first {
            // fio: a 100 ms spin so that the CPU is up to speed, and one pass untimed so that
            // the buffer is in the caches.
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(100) {
                std::hint::spin_loop();
            }
            std::hint::black_box(pass(k, &buf));
            first = false;
        }
        let t = Instant::now();
        std::hint::black_box(pass(k, &buf));
        each(name, Some(t.elapsed().as_micros() as u64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_selects_as_fio_does() {
        assert_eq!(select(None), Selection::Run((0..17).collect()));
        assert_eq!(select(Some("list")), Selection::List);
        assert_eq!(select(Some("help")), Selection::List);
        assert_eq!(select(Some("")), Selection::Unknown);
        assert_eq!(select(Some("MD5")), Selection::Unknown);
        // fio's order, not the list's; unknown names passed over; a name counts once.
        assert_eq!(
            select(Some("sha3-512,bogus,md5,md5")),
            Selection::Run(vec![0, 16])
        );
    }

    #[test]
    fn lines_are_laid_out_as_fios() {
        // 256 MiB in 1 s.
        assert_eq!(line("md5", 1_000_000), "md5:\t\t  256.00 MiB/sec");
        assert_eq!(line("sha3-224", 1_000_000), "sha3-224:\t  256.00 MiB/sec");
        assert_eq!(line("crc32c", 10_000), "crc32c:\t\t25600.00 MiB/sec");
        assert_eq!(line("crc7", 0), "crc7:inf MiB/sec");
    }
}
