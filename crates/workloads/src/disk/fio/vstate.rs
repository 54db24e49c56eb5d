//! fio's verify state files (`verify_state_save`, `verify_state_load`), in fio 3.33's own
//! format, so a state fio saved loads in hostbench and the other way round.
//!
//! A clone of a writing job with `verify` saves, when it ends (its size done, its runtime
//! over, Ctrl-C), `local-<job>-<n>-verify.state` in the current directory (the native
//! grammar's `dir` when it has one) (`/` in the job
//! name becomes `.`; `n` is the clone's 0-based index among all the clones of the run):
//! how many writes it issued and, per file, the offsets of its last `iodepth` completed
//! writes. A later run with `verify_state_load=1` reads its clone's file before anything
//! runs and its verify phase stops where fio's does: every block up to `iodepth` before the
//! saved count is checked, then only blocks among the saved last completions, and the
//! first other one ends the phase. So a write job stopped part way and then run again with
//! `verify_only=1,verify_state_load=1` checks exactly what was written.
//!
//! Layout (little-endian): a 24-byte header (version 3, body size, CRC-32C of the body as
//! fio computes it), then the body: completions used (u64), iodepth (u32), files (u32),
//! writes issued (u64), clone index (u64), fio's 56-byte random state (zeros from
//! hostbench: fio never reads it back), the job name (64 bytes, NUL-terminated), then
//! `iodepth × files` (file number, offset) pairs of 16 bytes, the used ones first.
//! Everything read is checked against the file's own length before it is used: a short,
//! long or corrupt file is refused with its name.

use super::verify::fio_crc32c;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;

/// fio's `VSTATE_HDR_VERSION`.
const VERSION: u64 = 3;
/// The header: version, body size, CRC.
const HDR: usize = 24;
/// The body before its completions (fio's `struct thread_io_list`).
const BODY: usize = 152;
/// One completion: file number and offset.
const COMP: usize = 16;
/// Where the job name starts in the body.
const NAME_AT: usize = 88;
/// Longest state file read (a larger one is not a state file).
const MAX_FILE: u64 = 64 << 20;

/// One clone's verify state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// The job's `iodepth`.
    pub depth: u32,
    /// The job's files per clone.
    pub nofiles: u32,
    /// Writes the clone issued (fio's `io_issues[DDIR_WRITE]`).
    pub numberio: u64,
    /// The clone's index among the run's clones.
    pub index: u64,
    /// The job's name (at most 63 bytes kept).
    pub name: Vec<u8>,
    /// (file number, offset) of the last completed writes, newest first per file.
    pub comps: Vec<(u64, u64)>,
}

/// The state file of clone `index` of job `name`, in the current directory (fio's
/// `verify_state_gen_name` with the `local` prefix).
pub fn file_name(name: &str, index: usize) -> String {
    format!("local-{}-{index}-verify.state", name.replace('/', "."))
}

impl State {
    /// The file's bytes, as fio writes them.
    pub fn encode(&self) -> Vec<u8> {
        let slots = self.depth as usize * self.nofiles as usize;
        let mut b = Vec::with_capacity(BODY + slots * COMP);
        b.extend_from_slice(&(self.comps.len() as u64).to_le_bytes());
        b.extend_from_slice(&self.depth.to_le_bytes());
        b.extend_from_slice(&self.nofiles.to_le_bytes());
        b.extend_from_slice(&self.numberio.to_le_bytes());
        b.extend_from_slice(&self.index.to_le_bytes());
        b.resize(NAME_AT, 0);
        let n = self.name.len().min(63);
        b.extend_from_slice(&self.name[..n]);
        b.resize(BODY, 0);
        for &(f, o) in &self.comps {
            b.extend_from_slice(&f.to_le_bytes());
            b.extend_from_slice(&o.to_le_bytes());
        }
        b.resize(BODY + slots.max(self.comps.len()) * COMP, 0);
        let mut out = Vec::with_capacity(HDR + b.len());
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(b.len() as u64).to_le_bytes());
        out.extend_from_slice(&u64::from(fio_crc32c(&b)).to_le_bytes());
        out.extend_from_slice(&b);
        out
    }

    /// Reads a state file's bytes; the error says what is wrong with them.
    pub fn decode(bytes: &[u8]) -> Result<State, String> {
        let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        if bytes.len() < HDR {
            return Err(format!(
                "{} bytes, shorter than the {HDR}-byte header",
                bytes.len()
            ));
        }
        let version = u64_at(bytes, 0);
        if version != VERSION {
            return Err(format!(
                "version {version}, expected {VERSION} (fio 3.x's format)"
            ));
        }
        let size = u64_at(bytes, 8);
        let body = &bytes[HDR..];
        if size != body.len() as u64 {
            return Err(format!(
                "the header gives {size} bytes of state, the file holds {}",
                body.len()
            ));
        }
        if body.len() < BODY {
            return Err(format!(
                "{} bytes of state, fewer than the {BODY} of a clone's",
                body.len()
            ));
        }
        let crc = u64_at(bytes, 16);
        let calc = u64::from(fio_crc32c(body));
        if crc != calc {
            return Err(format!(
                "checksum {crc:x}, calculated {calc:x} (the file is corrupt)"
            ));
        }
        let used = u64_at(body, 0);
        let (depth, nofiles) = (u32_at(body, 8), u32_at(body, 12));
        let slots = (body.len() - BODY) / COMP;
        if !(body.len() - BODY).is_multiple_of(COMP)
            || slots as u64 != u64::from(depth) * u64::from(nofiles)
        {
            return Err(format!(
                "room for {slots} completions, but iodepth {depth} × {nofiles} files"
            ));
        }
        if used > slots as u64 {
            return Err(format!(
                "{used} completions used of the {slots} it has room for"
            ));
        }
        let comps = (0..used as usize)
            .map(|i| {
                let at = BODY + i * COMP;
                (u64_at(body, at), u64_at(body, at + 8))
            })
            .collect();
        let name = &body[NAME_AT..BODY];
        let name = name[..name.iter().position(|&c| c == 0).unwrap_or(name.len())].to_vec();
        Ok(State {
            depth,
            nofiles,
            numberio: u64_at(body, 16),
            index: u64_at(body, 24),
            name,
            comps,
        })
    }

    /// Whether the verify phase stops before the logged block of `file` at `off`, once
    /// `reads` blocks were read back (fio's `verify_state_should_stop`): outside the last
    /// `iodepth` writes every block is checked; inside, only one the state saw complete.
    pub fn stops(&self, reads: u64, file: u32, off: u64) -> bool {
        let d = u64::from(self.depth);
        // fio's unsigned arithmetic: past the saved count the difference wraps, and the
        // block is checked.
        if (reads < d || self.numberio.wrapping_sub(reads) > d) && self.numberio > d {
            return false;
        }
        !self
            .comps
            .iter()
            .any(|&(f, o)| f == u64::from(file) && o == off)
    }
}

/// The state file of clone `index` of job `name` in `dir` (empty: the current directory,
/// as fio; the native grammar's `dir` otherwise, so a run writes only where it was told).
fn path_in(dir: &str, name: &str, index: usize) -> String {
    let f = file_name(name, index);
    if dir.is_empty() {
        f
    } else {
        std::path::Path::new(dir)
            .join(f)
            .to_string_lossy()
            .into_owned()
    }
}

/// Loads the state file of clone `index` of job `name` from `dir` (empty: the current directory). The
/// error names the file and says what to do.
pub fn load(dir: &str, name: &str, index: usize) -> Result<State, String> {
    let path = path_in(dir, name, index);
    let how = "run the writing job with verify_state_save=1 (the default) first, or drop \
               verify_state_load";
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&path)
        .map_err(|e| format!("verify_state_load: cannot open {path}: {e}; {how}"))?;
    let meta = f
        .metadata()
        .map_err(|e| format!("verify_state_load: {path}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "verify_state_load: {path} is not a regular file; {how}"
        ));
    }
    let mut bytes = Vec::new();
    f.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("verify_state_load: cannot read {path}: {e}"))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!(
            "verify_state_load: {path} is larger than {MAX_FILE} bytes: not a verify state \
             file; {how}"
        ));
    }
    State::decode(&bytes).map_err(|e| {
        format!("verify_state_load: {path} is not a valid fio verify state file: {e}; {how}")
    })
}

/// Writes `s` as its clone's state file in `dir`, over an earlier one
/// (never through a symlink, never into anything but a regular file).
pub fn save(dir: &str, name: &str, s: &State) -> Result<(), String> {
    let path = path_in(dir, name, s.index as usize);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&path)
        .map_err(|e| format!("cannot write verify state file {path}: {e}"))?;
    let meta = f
        .metadata()
        .map_err(|e| format!("verify state file {path}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "verify state file {path} is not a regular file: not written"
        ));
    }
    let bytes = s.encode();
    f.set_len(0)
        .and_then(|()| f.write_all(&bytes))
        .and_then(|()| f.sync_all())
        .map_err(|e| format!("cannot write verify state file {path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        State {
            depth: 2,
            nofiles: 2,
            numberio: 16,
            index: 0,
            name: b"w".to_vec(),
            comps: vec![(0, 0x5000), (0, 0x2000), (1, 0x4000), (1, 0x1000)],
        }
    }

    /// The bytes fio 3.33 saved for `--name=w --nrfiles=2 --size=64k --bs=4k
    /// --rw=randwrite --verify=md5 --iodepth=2 --ioengine=libaio` but its random state
    /// (zeros here; fio never reads it back): the header's size and the layout of the
    /// counts, name and completions.
    #[test]
    fn encodes_fios_layout() {
        let b = state().encode();
        assert_eq!(b.len(), 24 + 152 + 4 * 16);
        assert_eq!(&b[0..8], &3u64.to_le_bytes());
        assert_eq!(&b[8..16], &216u64.to_le_bytes());
        assert_eq!(&b[24..32], &4u64.to_le_bytes());
        assert_eq!(&b[32..40], &[2, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(&b[40..48], &16u64.to_le_bytes());
        assert_eq!(b[24 + 88], b'w');
        assert_eq!(
            &b[176..192],
            &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0x50, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(State::decode(&b).unwrap(), state());
    }

    #[test]
    fn refuses_what_is_not_a_state() {
        let good = state().encode();
        let mut flipped = good.clone();
        flipped[40] ^= 1;
        assert!(State::decode(&flipped).unwrap_err().contains("corrupt"));
        assert!(State::decode(&good[..20]).unwrap_err().contains("header"));
        assert!(
            State::decode(&good[..good.len() - 1])
                .unwrap_err()
                .contains("holds")
        );
        let mut v = good.clone();
        v[0] = 2;
        assert!(State::decode(&v).unwrap_err().contains("version 2"));
        // A body whose counts point past its end: refused, never read.
        let mut s = state();
        s.comps.push((0, 1));
        let mut big = s.encode();
        // 5 used of room for 5 recorded, then the room shrunk back to 4 with a valid CRC.
        big.truncate(big.len() - 16);
        let body_len = (big.len() - 24) as u64;
        big[8..16].copy_from_slice(&body_len.to_le_bytes());
        let crc = u64::from(fio_crc32c(&big[24..]));
        big[16..24].copy_from_slice(&crc.to_le_bytes());
        assert!(
            State::decode(&big)
                .unwrap_err()
                .contains("5 completions used")
        );
    }

    /// fio's rule: all blocks before the last `iodepth` writes; inside them only the saved
    /// completions, and the first other block stops.
    #[test]
    fn stops_where_fio_stops() {
        let s = State {
            depth: 1,
            nofiles: 1,
            numberio: 5,
            index: 0,
            name: b"w".to_vec(),
            comps: vec![(0, 4096 * 7)],
        };
        for reads in 0..4 {
            assert!(!s.stops(reads, 0, 0), "{reads}");
        }
        assert!(!s.stops(4, 0, 4096 * 7));
        assert!(s.stops(4, 0, 4096 * 8));
        assert!(s.stops(5, 0, 4096 * 8));
        assert!(s.stops(5, 1, 4096 * 7));
        // Past the saved count fio's difference wraps: the block is checked.
        assert!(!s.stops(6, 0, 0));
    }
}
