//! What a write job writes: the contents of its I/O buffers, as fio 3.33 makes them
//! (`refill_buffers`, `scramble_buffers`, `zero_buffers`, `buffer_pattern`,
//! `buffer_compress_percentage`, `buffer_compress_chunk`, `dedupe_percentage`, `dedupe_mode`,
//! `dedupe_working_set_percentage`, `dedupe_global`).
//!
//! What users measure is the data's compressibility and how much of it dedupes, so those
//! follow fio's rules exactly. With fio's seeds and no dedupe the random bytes are fio's
//! too (`buf_state` seeded `FIO_RAND_BUF_OFF`, `__get_next_seed`, `__fill_random_buf`);
//! otherwise they come from hostbench's own generator (fio's is not needed to reproduce
//! either figure). fio's rules:
//!
//! - A write job's buffers (one per queue slot) are filled once when the clone starts.
//! - With `refill_buffers` each write's buffer is filled again before the write. `verify`,
//!   `buffer_compress_percentage` (not 0 or 100) and `dedupe_percentage` turn it on unless
//!   the job sets it; `buffer_pattern` turns it off unless the job reads or compresses.
//! - Otherwise each write is *scrambled* (`scramble_buffers`, on by default): in every
//!   512-byte sector the write's file offset goes at the start of one of its eight 64-byte
//!   lines (the same line for the whole write, picked from the time and the offset) and
//!   the time (seconds, nanoseconds) at bytes 48..64, in place, so the buffer keeps what
//!   earlier writes left. No block dedupes; a stream compressor that sees the buffer again
//!   within its window still squeezes it. Not with `buffer_compress_percentage` or
//!   `dedupe_percentage` given (even as 0: fio then writes the same buffer every time),
//!   nor with `verify`, nor with `zero_buffers` given unless `scramble_buffers` is too.
//! - A fill: with compression or dedupe, chunk by chunk (`buffer_compress_chunk`, default
//!   512, at most the smallest write size), each chunk a new seed: its first
//!   `100 - buffer_compress_percentage` percent random, the rest zeros or `buffer_pattern`;
//!   else the pattern tiled, else zeros, else random bytes from one seed.
//! - Dedupe decides per buffer: `dedupe_percentage` percent of the buffers are made from a
//!   seed state used before instead of a new one: `repeat` takes the state the last unique
//!   buffer left (so the buffer equals the next unique one), `working_set` picks one of the
//!   first `dedupe_working_set_percentage` percent of the job's `size` worth of buffers
//!   (with `dedupe_global`, that working set is spread over the states of every clone).
//! - `buffer_compress_percentage=100` is `zero_buffers`.
//! - With `verify` the verify fill makes the block (random per block, then the headers):
//!   `buffer_compress_percentage` still makes the tail of each block zeros (or the pattern);
//!   dedupe and scrambling do not apply.

use super::job::{JobError, JobSpec, err, flag};
use hostbench_core::rand::Rng;

/// The buffer options of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufOpts {
    /// `zero_buffers`.
    pub zero: bool,
    /// `zero_buffers` was given by name.
    pub zero_set: bool,
    /// `refill_buffers` (or what `buffer_pattern`/`dedupe_percentage` made of it).
    pub refill: bool,
    /// `refill_buffers` was given by name.
    pub refill_set: bool,
    /// `scramble_buffers` (default on).
    pub scramble: bool,
    /// `scramble_buffers` was given by name.
    pub scramble_set: bool,
    /// `buffer_pattern`, the bytes (empty: none).
    pub pattern: Vec<u8>,
    /// `buffer_compress_percentage`.
    pub compress_pct: u32,
    /// `buffer_compress_chunk` (default 512; 0 = the write size).
    pub compress_chunk: u64,
    /// `buffer_compress_percentage` or `dedupe_percentage` was given (fio's `TD_F_COMPRESS`:
    /// no scrambling, even at 0).
    pub compress_flag: bool,
    /// `dedupe_percentage`.
    pub dedupe_pct: u32,
    /// `dedupe_mode=working_set` (else `repeat`).
    pub working_set: bool,
    /// `dedupe_working_set_percentage` (default 5).
    pub ws_pct: u32,
    /// `dedupe_global`.
    pub global: bool,
}

impl Default for BufOpts {
    fn default() -> Self {
        BufOpts {
            zero: false,
            zero_set: false,
            refill: false,
            refill_set: false,
            scramble: true,
            scramble_set: false,
            pattern: Vec::new(),
            compress_pct: 0,
            compress_chunk: 512,
            compress_flag: false,
            dedupe_pct: 0,
            working_set: false,
            ws_pct: 5,
            global: false,
        }
    }
}

/// The buffer options, in fio's spelling.
pub const OPTION_NAMES: &[&str] = &[
    "zero_buffers",
    "refill_buffers",
    "scramble_buffers",
    "buffer_pattern",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "dedupe_percentage",
    "dedupe_mode",
    "dedupe_working_set_percentage",
    "dedupe_global",
];

/// Whether `key` (a canonical option name) is a buffer option.
pub fn handles(key: &str) -> bool {
    OPTION_NAMES.contains(&key)
}

/// fio's `STR_SET` options (`zero_buffers`, `refill_buffers`): bare means on, else a whole
/// number (not 0 = on).
fn set_flag(k: &str, v: &str, at: &str) -> Result<bool, JobError> {
    let t = v.trim();
    if t.is_empty() {
        return Ok(true);
    }
    t.parse::<i64>()
        .map(|n| n != 0)
        .or_else(|_| err(format!("{at}: {k}={v}: expected nothing, 0 or 1")))
}

fn pct(k: &str, v: &str, at: &str) -> Result<u32, JobError> {
    match v.trim().trim_end_matches('%').parse::<u32>() {
        Ok(n) if n <= 100 => Ok(n),
        Ok(n) => err(format!(
            "{at}: {k}={v}: max value out of range: {n} (100 max)"
        )),
        Err(_) => err(format!(
            "{at}: {k}={v}: expected a percentage from 0 to 100"
        )),
    }
}

/// Applies buffer option `key` (canonical) with value `v`, written at `at`, to `o`. `reads`
/// is whether the job reads as far as its options go (fio's `buffer_pattern` looks at the
/// `rw` set before it: fio's default `rw` reads).
pub fn apply(o: &mut BufOpts, key: &str, v: &str, at: &str, reads: bool) -> Result<(), JobError> {
    match key {
        "zero_buffers" => {
            o.zero = set_flag(key, v, at)?;
            o.zero_set = true;
        }
        "refill_buffers" => {
            o.refill = set_flag(key, v, at)?;
            o.refill_set = true;
        }
        "scramble_buffers" => {
            o.scramble = flag(key, v, at)?;
            o.scramble_set = true;
        }
        "buffer_pattern" => {
            let p = super::verify::parse_pattern(v)
                .map_err(|e| JobError(format!("{at}: buffer_pattern={v}: {e}")))?;
            if !p.offsets.is_empty() {
                return err(format!(
                    "{at}: buffer_pattern={v}: fio takes no %o in a buffer pattern (only in \
                     verify_pattern); drop it"
                ));
            }
            o.pattern = p.bytes;
            // fio's callback: reads (or compression) would spoil a pattern filled once.
            o.refill = o.compress_pct != 0 || reads;
            o.scramble = false;
            o.zero = false;
        }
        "buffer_compress_percentage" => {
            o.compress_pct = pct(key, v, at)?;
            o.compress_flag = true;
        }
        "buffer_compress_chunk" => {
            o.compress_chunk = super::job::parse_fio_size(v).ok_or_else(|| {
                JobError(format!(
                    "{at}: {key}={v}: expected a size such as 512 or 4k"
                ))
            })?;
        }
        "dedupe_percentage" => {
            o.dedupe_pct = pct(key, v, at)?;
            o.compress_flag = true;
            o.refill = true;
        }
        "dedupe_mode" => {
            o.working_set = match v.trim() {
                "repeat" => false,
                "working_set" => true,
                _ => {
                    return err(format!(
                        "{at}: dedupe_mode={v}: expected repeat or working_set"
                    ));
                }
            }
        }
        "dedupe_working_set_percentage" => o.ws_pct = pct(key, v, at)?,
        "dedupe_global" => o.global = flag(key, v, at)?,
        _ => {}
    }
    Ok(())
}

/// fio's `init.c` fix-ups once all options are read: `verify` turns on `refill_buffers`
/// unless given, `buffer_compress_percentage=100` is `zero_buffers`, other percentages turn
/// on `refill_buffers` unless given; the working-set mode's checks.
pub fn finish(j: &mut JobSpec) -> Result<(), JobError> {
    let verify = j.verify.kind != super::verify::kind::NONE;
    let nfiles = j.nfiles();
    let o = &mut j.bufs;
    if verify && !o.refill_set {
        o.refill = true;
    }
    if o.compress_pct == 100 {
        o.zero = true;
        o.compress_pct = 0;
    } else if o.compress_pct > 0 && !o.refill_set {
        o.refill = true;
    }
    if o.dedupe_pct > 0 && o.working_set {
        if j.size.is_none() && j.pct.size.is_none() {
            return err(format!(
                "job '{}': dedupe_mode=working_set needs size= (fio: pregenerated dedupe \
                 working set requires size to be set)",
                j.name
            ));
        }
        if nfiles != 1 {
            return err(format!(
                "job '{}': dedupe_mode=working_set works with one file per job, but the job \
                 has {} (fio refuses it too); use nrfiles=1",
                j.name, nfiles
            ));
        }
        if o.ws_pct + o.dedupe_pct > 100 {
            return err(format!(
                "job '{}': impossible to reach dedupe_percentage={} since \
                 dedupe_working_set_percentage={} of the size is kept for the working set \
                 (unique pages); the two must add up to at most 100",
                j.name, o.dedupe_pct, o.ws_pct
            ));
        }
        if o.ws_pct == 0 {
            return err(format!(
                "job '{}': dedupe_working_set_percentage=0 leaves dedupe_mode=working_set no \
                 buffers to repeat; give at least 1",
                j.name
            ));
        }
    }
    Ok(())
}

/// The per-write step a clone takes before each write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing: the buffer as it is (filled once, or by `verify`).
    Keep,
    /// Scramble offsets and time into each 512-byte sector.
    Scramble,
    /// Fill the buffer again.
    Refill,
}

/// A seed state of the buffer generator (fio's `frand_state`): copied to replay a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct State(u64);

impl State {
    /// The next seed (splitmix64).
    #[inline]
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Which state a buffer's fill draws from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Src {
    Main,
    Ret,
}

/// A clone's buffer filler.
pub struct Filler {
    /// What happens before each write.
    pub step: Step,
    compress_pct: u32,
    chunk: usize,
    pattern: Vec<u8>,
    zero: bool,
    dedupe_pct: u32,
    working_set: bool,
    min_write: usize,
    buf: State,
    prev: State,
    ret: State,
    dedupe: Rng,
    ws_index: Rng,
    ws: Vec<State>,
    /// fio's `buf_state` (`FIO_RAND_BUF_OFF`'s seed of the clone's thread) when the job's
    /// seeds are repeatable and nothing dedupes: the random bytes are then fio's, seed for
    /// seed (`__get_next_seed`, `__fill_random_buf`).
    fio: Option<super::verify::FioRand>,
}

impl Filler {
    /// The filler of clone `tid` of job `j` (the clone's own copy: its `size` is the
    /// clone's); `seeds` holds every clone's buffer seed (the states `dedupe_global` spreads
    /// its working set over), `seeds[tid]` this clone's.
    /// An error when the dedupe working set cannot be allocated.
    pub fn new(j: &JobSpec, tid: usize, seeds: &[u64]) -> Result<Filler, String> {
        let o = &j.bufs;
        let verify = j.verify.kind != super::verify::kind::NONE;
        let step = if o.refill {
            Step::Refill
        } else if o.scramble
            && (o.scramble_set || !(o.zero && o.zero_set))
            && !o.compress_flag
            && !verify
        {
            Step::Scramble
        } else {
            Step::Keep
        };
        let min_write = j.bsz[1].min.max(1) as usize;
        let seed = seeds.get(tid).copied().unwrap_or(1);
        let mut f = Filler {
            step,
            compress_pct: o.compress_pct,
            chunk: o.compress_chunk as usize,
            pattern: o.pattern.clone(),
            zero: o.zero,
            dedupe_pct: o.dedupe_pct,
            working_set: o.working_set,
            min_write,
            buf: State(seed),
            prev: State(seed),
            ret: State(seed),
            dedupe: Rng::for_thread(seed ^ 0xDED0_9E00, 1),
            ws_index: Rng::for_thread(seed ^ 0xDED0_9E00, 2),
            ws: Vec::new(),
            fio: if o.dedupe_pct == 0 {
                j.fio_rand_seed(tid as u64 + 1, FIO_RAND_BUF_OFF)
                    .map(|s| super::verify::FioRand::new(s, j.rand64))
            } else {
                None
            },
        };
        if o.dedupe_pct > 0 && o.working_set {
            f.ws = working_set(j, tid, seeds)?;
        }
        Ok(f)
    }

    /// The filler with hostbench's own generator from its seed, not fio's `buf_state` (a
    /// layout's: one per file, so files do not repeat each other).
    pub fn own_generator(mut self) -> Filler {
        self.fio = None;
        self
    }

    /// The chunk a compressed or deduped fill works in: the smallest write size, or
    /// `buffer_compress_chunk` if smaller (and not 0).
    fn chunk_len(&self, left: usize) -> usize {
        let m = self.min_write.min(left);
        if self.chunk == 0 {
            m
        } else {
            m.min(self.chunk)
        }
    }

    /// fio's `get_buf_state`: where this buffer's seeds come from.
    fn source(&mut self) -> Src {
        match self.dedupe_pct {
            0 => Src::Main,
            100 => {
                self.prev = self.buf;
                Src::Main
            }
            p => {
                if self.dedupe.uniform(1, 100) as u32 > p {
                    return Src::Main;
                }
                self.ret = if self.working_set {
                    let i = self.ws_index.uniform(0, self.ws.len() as u64 - 1) as usize;
                    self.ws[i]
                } else {
                    self.prev
                };
                Src::Ret
            }
        }
    }

    /// Fills `buf` as fio's `fill_io_buffer` does (the first fill of a slot, or a refill).
    pub fn fill(&mut self, buf: &mut [u8]) {
        if self.compress_pct > 0 || self.dedupe_pct > 0 {
            let src = self.source();
            let mut at = 0;
            while at < buf.len() {
                let n = self.chunk_len(buf.len() - at);
                let seed = match (&mut self.fio, src) {
                    (Some(r), _) => fio_next_seed(r),
                    (None, Src::Main) => self.buf.next(),
                    (None, Src::Ret) => self.ret.next(),
                };
                let b = &mut buf[at..at + n];
                if self.fio.is_some() {
                    fill_pct_with(b, seed, self.compress_pct, &self.pattern, fio_fill_random);
                } else {
                    fill_pct(b, seed, self.compress_pct, &self.pattern);
                }
                at += n;
                if self.dedupe_pct == 100 {
                    self.buf = self.prev;
                } else if src == Src::Main {
                    self.prev = self.buf;
                }
            }
        } else if !self.pattern.is_empty() {
            tile(buf, &self.pattern);
        } else if self.zero {
            buf.fill(0);
        } else if let Some(r) = &mut self.fio {
            fio_fill_random(buf, fio_next_seed(r));
        } else {
            super::verify::fill_random(buf, self.buf.next());
        }
    }

    /// Before a write of `buf` at file offset `off` issued at `time_ns` (run clock).
    #[inline]
    pub fn before_write(&mut self, buf: &mut [u8], off: u64, time_ns: u64) {
        match self.step {
            Step::Keep => {}
            Step::Scramble => scramble(buf, off, time_ns),
            Step::Refill => self.fill(buf),
        }
    }

    /// The compression percentage and pattern a `verify` fill keeps (fio's verify fill
    /// makes each block's tail zeros, or the pattern, as `buffer_compress_percentage` says).
    pub fn verify_fill(&self) -> (u32, &[u8]) {
        (self.compress_pct, &self.pattern)
    }
}

/// fio's dedupe working set of clone `tid`: the states the first buffers of the clone's
/// generator start from (`dedupe_working_set_percentage` of the clone's size in writes of
/// the smallest size); with `dedupe_global`, the working set walks on to the next clone's
/// generator every `1/clones` of it.
fn working_set(j: &JobSpec, tid: usize, seeds: &[u64]) -> Result<Vec<State>, String> {
    let o = &j.bufs;
    let min = j.bsz[1].min.max(1);
    let size = j.size.unwrap_or(0);
    let n = ((size.saturating_mul(o.ws_pct as u64) / 100) / min).max(1) as usize;
    let per_page = (min
        / if o.compress_chunk == 0 {
            min
        } else {
            min.min(o.compress_chunk)
        })
    .max(1);
    let threads = seeds.len().max(1);
    let per_seed = (n / threads).max(1);
    let mut s = State(seeds.get(tid).copied().unwrap_or(1));
    let mut t = tid;
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| {
        format!(
            "the dedupe working set of {n} buffers does not fit in memory; lower \
             dedupe_working_set_percentage or size"
        )
    })?;
    out.push(s);
    for i in 1..n {
        for _ in 0..per_page {
            s.next();
        }
        if o.global && i % per_seed == 0 {
            t = (t + 1) % threads;
            s = State(seeds.get(t).copied().unwrap_or(1));
        }
        out.push(s);
    }
    Ok(out)
}

/// fio's `__fill_random_buf_percentage` over one chunk: the first `100 - pct` percent random
/// from `seed`, the rest the pattern (from its start) or zeros.
#[inline]
pub fn fill_pct(buf: &mut [u8], seed: u64, pct: u32, pattern: &[u8]) {
    fill_pct_with(buf, seed, pct, pattern, super::verify::fill_random);
}

/// [`fill_pct`] with `random` for the random part.
#[inline]
fn fill_pct_with(buf: &mut [u8], seed: u64, pct: u32, pattern: &[u8], random: fn(&mut [u8], u64)) {
    let fixed = |b: &mut [u8]| {
        if pattern.is_empty() {
            b.fill(0);
        } else {
            tile(b, pattern);
        }
    };
    if pct >= 100 {
        fixed(buf);
        return;
    }
    let r = buf.len() * (100 - pct as usize) / 100;
    random(&mut buf[..r], seed);
    fixed(&mut buf[r..]);
}

/// fio's `FIO_RAND_BUF_OFF`.
const FIO_RAND_BUF_OFF: u64 = 9;

/// fio's `__get_next_seed` on 64-bit: the product of two draws.
#[inline]
fn fio_next_seed(r: &mut super::verify::FioRand) -> u64 {
    let a = r.draw();
    a.wrapping_mul(r.draw())
}

/// fio's `__fill_random_buf` (its Debian build's 4 seed buckets): 64-bit words, four
/// streams from `seed` times 1, 2, 3 and 5, each word the last one times the 64-bit golden
/// ratio; the words past the last whole round (and the bytes past the last word) from the
/// first stream, in native byte order.
pub fn fio_fill_random(buf: &mut [u8], seed: u64) {
    const GOLDEN: u64 = 0x61C8_8646_80B5_83EB;
    const BUCKETS: usize = 4;
    let mut s = [1u64, 2, 3, 5].map(|p| seed.wrapping_mul(p));
    let words = buf.len() / 8;
    let whole = words / BUCKETS * BUCKETS * 8;
    let (head, tail) = buf.split_at_mut(whole);
    for round in head.chunks_exact_mut(8 * BUCKETS) {
        for (p, w) in round.chunks_exact_mut(8).enumerate() {
            w.copy_from_slice(&s[p].to_ne_bytes());
            s[p] = s[p].wrapping_mul(GOLDEN);
        }
    }
    // `__fill_random_buf_small` from the first stream.
    let mut x = s[0];
    let mut words = tail.chunks_exact_mut(8);
    for w in &mut words {
        w.copy_from_slice(&x.to_ne_bytes());
        x = x.wrapping_mul(GOLDEN);
    }
    let rest = words.into_remainder();
    let n = rest.len();
    rest.copy_from_slice(&x.to_ne_bytes()[..n]);
}

/// `pattern` repeated over `buf` from its start.
pub fn tile(buf: &mut [u8], pattern: &[u8]) {
    if pattern.is_empty() {
        return;
    }
    for c in buf.chunks_mut(pattern.len()) {
        let n = c.len();
        c.copy_from_slice(&pattern[..n]);
    }
}

/// fio's `small_content_scramble`: in each 512-byte sector, the sector's file offset at the
/// start of one 64-byte line (the same line for the whole write, from the time and the
/// offset) and the time (seconds, then nanoseconds) at bytes 48..64; native byte order.
#[inline]
pub fn scramble(buf: &mut [u8], off: u64, time_ns: u64) {
    let (sec, nsec) = (time_ns / 1_000_000_000, time_ns % 1_000_000_000);
    let line = (((nsec ^ off) & 7) << 6) as usize;
    let mut boff = off;
    for s in buf.chunks_exact_mut(512) {
        s[line..line + 8].copy_from_slice(&boff.to_ne_bytes());
        s[48..56].copy_from_slice(&sec.to_ne_bytes());
        s[56..64].copy_from_slice(&nsec.to_ne_bytes());
        boff += 512;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(opts: &str) -> JobSpec {
        let text = format!("[j]\nrw=write\nsize=1m\n{opts}\n");
        let s = super::super::jobfile::parse_ini(&text, "t.fio", &|_: &str| None).unwrap();
        super::super::job::jobs_from_sections(&s).unwrap().remove(0)
    }

    fn distinct(blocks: &[Vec<u8>]) -> usize {
        let mut v = blocks.to_vec();
        v.sort();
        v.dedup();
        v.len()
    }

    fn writes(j: &JobSpec, n: usize) -> Vec<Vec<u8>> {
        let mut f = Filler::new(j, 0, &[42]).unwrap();
        let mut b = vec![0u8; 4096];
        f.fill(&mut b);
        (0..n)
            .map(|i| {
                f.before_write(&mut b, i as u64 * 4096, 1_000 + i as u64);
                b.clone()
            })
            .collect()
    }

    #[test]
    fn steps_follow_fio_flags() {
        assert_eq!(Filler::new(&job(""), 0, &[1]).unwrap().step, Step::Scramble);
        assert_eq!(
            Filler::new(&job("zero_buffers"), 0, &[1]).unwrap().step,
            Step::Keep
        );
        assert_eq!(
            Filler::new(&job("zero_buffers\nscramble_buffers=1"), 0, &[1])
                .unwrap()
                .step,
            Step::Scramble
        );
        assert_eq!(
            Filler::new(&job("buffer_compress_percentage=0"), 0, &[1])
                .unwrap()
                .step,
            Step::Keep
        );
        assert_eq!(
            Filler::new(&job("buffer_compress_percentage=50"), 0, &[1])
                .unwrap()
                .step,
            Step::Refill
        );
        let j = job("buffer_compress_percentage=100");
        assert!(j.bufs.zero && j.bufs.compress_pct == 0);
        assert_eq!(Filler::new(&j, 0, &[1]).unwrap().step, Step::Keep);
        assert_eq!(
            Filler::new(
                &job("buffer_compress_percentage=50\nrefill_buffers=0"),
                0,
                &[1]
            )
            .unwrap()
            .step,
            Step::Keep
        );
        assert_eq!(
            Filler::new(&job("dedupe_percentage=10"), 0, &[1])
                .unwrap()
                .step,
            Step::Refill
        );
        // buffer_pattern after rw=write: filled once; before it (fio's default rw reads): refilled.
        assert_eq!(
            Filler::new(&job("buffer_pattern=0xab"), 0, &[1])
                .unwrap()
                .step,
            Step::Keep
        );
        let s = super::super::jobfile::parse_ini(
            "[j]\nbuffer_pattern=0xab\nrw=write\n",
            "t",
            &|_: &str| None,
        )
        .unwrap();
        let j = super::super::job::jobs_from_sections(&s).unwrap().remove(0);
        assert_eq!(Filler::new(&j, 0, &[1]).unwrap().step, Step::Refill);
        assert_eq!(
            Filler::new(&job("verify=md5"), 0, &[1]).unwrap().step,
            Step::Refill
        );
    }

    #[test]
    fn default_writes_never_dedupe_and_pattern_repeats() {
        let w = writes(&job(""), 64);
        assert_eq!(distinct(&w), 64);
        let w = writes(&job("buffer_pattern=\"ab\"0x01"), 4);
        assert_eq!(distinct(&w), 1);
        assert_eq!(&w[0][..7], b"ab\x01ab\x01a");
        let w = writes(&job("zero_buffers"), 4);
        assert!(w.iter().all(|b| b.iter().all(|&x| x == 0)));
    }

    #[test]
    fn compression_leaves_zero_tails_per_chunk() {
        let w = writes(&job("buffer_compress_percentage=75"), 2);
        for c in w[0].chunks(512) {
            assert!(c[128..].iter().all(|&x| x == 0));
            assert!(c[..128].iter().any(|&x| x != 0));
        }
        assert_ne!(w[0], w[1]);
        let w = writes(
            &job("buffer_compress_percentage=50\nbuffer_compress_chunk=0"),
            1,
        );
        assert!(w[0][2048..].iter().all(|&x| x == 0));
        assert!(w[0][1024..2048].iter().any(|&x| x != 0));
    }

    #[test]
    fn dedupe_repeat_and_working_set_reach_their_share() {
        for mode in ["repeat", "working_set"] {
            let j = job(&format!(
                "size=4m\ndedupe_percentage=40\ndedupe_mode={mode}\ndedupe_working_set_percentage=10"
            ));
            let w = writes(&j, 1024);
            let d = distinct(&w) as f64 / 1024.0;
            assert!((0.55..0.65).contains(&d), "{mode}: {d}");
        }
        let w = writes(&job("dedupe_percentage=100"), 8);
        assert_eq!(distinct(&w), 1);
    }

    #[test]
    fn bad_values_are_clear_errors() {
        let bad = |o: &str| {
            let s = super::super::jobfile::parse_ini(
                &format!("[j]\nrw=write\n{o}\n"),
                "t",
                &|_: &str| None,
            )
            .unwrap();
            super::super::job::jobs_from_sections(&s)
                .unwrap_err()
                .to_string()
        };
        assert!(bad("buffer_compress_percentage=101").contains("100 max"));
        assert!(bad("dedupe_mode=sometimes").contains("repeat or working_set"));
        assert!(bad("dedupe_percentage=50\ndedupe_mode=working_set").contains("needs size="));
        assert!(
            bad("size=1m\ndedupe_percentage=60\ndedupe_mode=working_set\ndedupe_working_set_percentage=50")
                .contains("at most 100")
        );
        assert!(bad("buffer_pattern=%o").contains("no %o"));
        assert!(bad("zero_buffers=maybe").contains("expected nothing, 0 or 1"));
    }
}
