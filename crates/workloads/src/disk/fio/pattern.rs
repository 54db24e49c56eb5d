//! Where each I/O of a clone goes and how long it is, as fio 3.33 chooses them
//! (`io_u.c:get_next_offset`, `get_next_buflen`): per direction, the block sizes (`bs`,
//! `bsrange`, `bssplit`, `bs_unaligned`), random offsets on `blockalign` boundaries drawn by
//! `random_distribution` (with fio's random map: every block once per pass), sequential
//! offsets with `rw=...:N` holes or backwards steps, random jobs that go sequential between
//! random picks (`rw=randread:N`, `rw_sequencer`, `percentage_random`).
//!
//! With `zonemode=strided` the offsets stay in one zone at a time (`zonesize` bytes of
//! I/O in `zonerange` bytes, then `zonerange + zoneskip` further, back to the region's
//! start past the file's end), as fio's `setup_strided_zone_mode`; see [`ZoneState`].
//!
//! Offsets here are relative to the clone's region (`[0, size)`; with zones, to its
//! start); the worker adds the region's start.

use super::job::{JobSpec, RandDist, RandGen, Zones};
use hostbench_core::rand::{Distribution, Rng, Sampler};

/// Offsets of a random job with fio's random map: every position once per pass, in a
/// scrambled order (a full-period LCG over the next power of two, skipping values past the
/// end), so no offset repeats until all were used.
pub(super) struct OffsetGen {
    n: u64,
    mask: u64,
    x: u64,
    a: u64,
    c: u64,
    map: bool,
}

impl OffsetGen {
    pub(super) fn new(n: u64, map: bool) -> OffsetGen {
        let m = n.max(1).next_power_of_two();
        OffsetGen {
            n: n.max(1),
            mask: m - 1,
            x: 0,
            a: (0x5851_F42D_4C95_7F2D & !3) | 1,
            c: 0x1405_7B7E_F767_814F | 1,
            map,
        }
    }
    pub(super) fn seed(&mut self, s: u64) {
        self.x = s & self.mask;
    }
    #[inline]
    pub(super) fn next(&mut self, rng: &mut Rng) -> u64 {
        if !self.map {
            return rng.next_u64() % self.n;
        }
        loop {
            self.x = self.x.wrapping_mul(self.a).wrapping_add(self.c) & self.mask;
            if self.x < self.n {
                return self.x;
            }
        }
    }
}

/// fio's random map where I/O sizes or alignments differ: a bit per `gran` bytes of the
/// region, set when an I/O covers it. A drawn block that is used already moves to the next
/// free one, and an I/O stops where the used blocks begin (fio's `mark_random_map` cuts it
/// there), so a pass covers each byte once and fio's short I/Os show up as in fio.
struct BlockMap {
    gran: u64,
    bits: Vec<u64>,
    /// A bit per word of `bits`, set when the word is full: the search for a free block
    /// skips 4096 used blocks a step (fio's `axmap` has levels for that too).
    full: Vec<u64>,
    n: u64,
    free: u64,
}

impl BlockMap {
    /// The map of `size` bytes by `gran`, or `None` when its memory cannot be had.
    fn try_new(size: u64, gran: u64) -> Option<BlockMap> {
        let n = size.div_ceil(gran).max(1);
        let words = usize::try_from(n.div_ceil(64)).ok()?;
        let mut bits = Vec::new();
        bits.try_reserve_exact(words).ok()?;
        bits.resize(words, 0);
        let mut full = Vec::new();
        full.try_reserve_exact(words.div_ceil(64)).ok()?;
        full.resize(words.div_ceil(64), 0);
        Some(BlockMap {
            gran,
            bits,
            full,
            n,
            free: n,
        })
    }
    #[inline]
    fn used(&self, b: u64) -> bool {
        self.bits[(b / 64) as usize] & (1 << (b % 64)) != 0
    }
    fn reset(&mut self) {
        self.bits.iter_mut().for_each(|w| *w = 0);
        self.full.iter_mut().for_each(|w| *w = 0);
        self.free = self.n;
    }
    /// The first free block at or after `from` and below `limit`, else the first one from
    /// the start (fio's `axmap_next_free` of a used block), by words.
    fn next_free1(&self, from: u64, limit: u64) -> Option<u64> {
        let limit = limit.min(self.n);
        let scan = |lo: u64, hi: u64| {
            if lo >= hi {
                return None;
            }
            let w = (lo / 64) as usize;
            let free = !self.bits[w] & (u64::MAX << (lo % 64));
            let at = |w: usize, free: u64| {
                let b = w as u64 * 64 + u64::from(free.trailing_zeros());
                (b < hi).then_some(b)
            };
            if free != 0 {
                return at(w, free);
            }
            // The next word that is not full, through the summary.
            let mut f = (w + 1) / 64;
            let mut open = match self.full.get(f) {
                Some(&x) => !x & (u64::MAX << ((w + 1) % 64)),
                None => return None,
            };
            loop {
                if open != 0 {
                    let nw = f * 64 + open.trailing_zeros() as usize;
                    if nw >= self.bits.len() || nw as u64 * 64 >= hi {
                        return None;
                    }
                    return at(nw, !self.bits[nw]);
                }
                f += 1;
                if f >= self.full.len() || (f as u64) * 4096 >= hi {
                    return None;
                }
                open = !self.full[f];
            }
        };
        scan(from, limit).or_else(|| scan(0, from.min(limit)))
    }
    /// Marks block `b` used (it was free).
    #[inline]
    fn mark(&mut self, b: u64) {
        let w = (b / 64) as usize;
        self.bits[w] |= 1 << (b % 64);
        if self.bits[w] == u64::MAX {
            self.full[w / 64] |= 1 << (w % 64);
        }
        self.free -= 1;
    }
    /// The first free block at or after `from` (wrapping once) that is a multiple of
    /// `step` and below `limit` blocks.
    fn next_free(&self, from: u64, step: u64, limit: u64) -> Option<u64> {
        if step == 1 {
            return self.next_free1(from, limit);
        }
        let limit = limit.min(self.n);
        let scan = |lo: u64, hi: u64| {
            let mut b = lo.div_ceil(step) * step;
            while b < hi {
                let w = self.bits[(b / 64) as usize];
                if w == u64::MAX && step < 64 {
                    b = ((b / 64 + 1) * 64).div_ceil(step) * step;
                    continue;
                }
                if !self.used(b) {
                    return Some(b);
                }
                b += step;
            }
            None
        };
        scan(from, limit).or_else(|| scan(0, from.min(limit)))
    }
    /// fio's `axmap_next_free`: the first free bit after `b`, wrapping to the map's start.
    fn next_free_after(&self, b: u64) -> Option<u64> {
        let from = if b + 1 >= self.n { 0 } else { b + 1 };
        (from..self.n).chain(0..from).find(|&i| !self.used(i))
    }

    /// fio's `axmap_set_nr`: marks up to `nr` bits from bit `first`, stopping at a used one
    /// or the map's end; the bits marked.
    fn take_bits(&mut self, first: u64, nr: u64) -> u64 {
        let mut k = 0;
        while k < nr && first + k < self.n && !self.used(first + k) {
            let b = first + k;
            self.bits[(b / 64) as usize] |= 1 << (b % 64);
            k += 1;
        }
        self.free -= k;
        k
    }

    /// Marks the free blocks of `[off, off + len)` from its start up to the first used one:
    /// the length the I/O keeps (at least one block).
    fn take(&mut self, off: u64, len: u64) -> u64 {
        let first = off / self.gran;
        let want = len.div_ceil(self.gran);
        let mut k = 0;
        while k < want && first + k < self.n && !self.used(first + k) {
            self.mark(first + k);
            k += 1;
        }
        if k == want {
            len
        } else {
            (k * self.gran).max(self.gran)
        }
    }
}

/// fio's `random_generator=lfsr` over one file (`lib/lfsr.c` with no spin): a maximal
/// linear feedback shift register of the fewest bits (at least 3) whose range exceeds the
/// file's blocks, stepping past values beyond the last block, so each block comes once per
/// pass. Its first step after the register is set up is a double one (fio's cycle count of
/// 1 runs out there); later passes start again from the seed with single steps (fio resets
/// the value and the count, not the cycle).
#[derive(Clone, Debug)]
struct Lfsr {
    xor: u64,
    top: u64,
    last: u64,
    max: u64,
    count: u64,
    first: bool,
    seeded: bool,
}

/// Feedback taps of a maximal LFSR of each width 3..=63 (the widely published table, as
/// fio uses), highest tap first.
const LFSR_TAPS: [&[u8]; 64] = [
    &[],
    &[],
    &[],
    &[3, 2],
    &[4, 3],
    &[5, 3],
    &[6, 5],
    &[7, 6],
    &[8, 6, 5, 4],
    &[9, 5],
    &[10, 7],
    &[11, 9],
    &[12, 6, 4, 1],
    &[13, 4, 3, 1],
    &[14, 5, 3, 1],
    &[15, 14],
    &[16, 15, 13, 4],
    &[17, 14],
    &[18, 11],
    &[19, 6, 2, 1],
    &[20, 17],
    &[21, 19],
    &[22, 21],
    &[23, 18],
    &[24, 23, 22, 17],
    &[25, 22],
    &[26, 6, 2, 1],
    &[27, 5, 2, 1],
    &[28, 25],
    &[29, 27],
    &[30, 6, 4, 1],
    &[31, 28],
    &[32, 31, 29, 1],
    &[33, 20],
    &[34, 27, 2, 1],
    &[35, 33],
    &[36, 25],
    &[37, 5, 4, 3, 2, 1],
    &[38, 6, 5, 1],
    &[39, 35],
    &[40, 38, 21, 19],
    &[41, 38],
    &[42, 41, 20, 19],
    &[43, 42, 38, 37],
    &[44, 43, 18, 17],
    &[45, 44, 42, 41],
    &[46, 45, 26, 25],
    &[47, 42],
    &[48, 47, 21, 20],
    &[49, 40],
    &[50, 49, 24, 23],
    &[51, 50, 36, 35],
    &[52, 49],
    &[53, 52, 38, 37],
    &[54, 53, 18, 17],
    &[55, 31],
    &[56, 55, 35, 34],
    &[57, 50],
    &[58, 39],
    &[59, 58, 38, 37],
    &[60, 59],
    &[61, 60, 46, 45],
    &[62, 61, 6, 5],
    &[63, 62],
];

impl Lfsr {
    /// The register over `n` blocks (`None` past 63 bits).
    fn new(n: u64) -> Option<Lfsr> {
        let width = (3..64).find(|&i| (1u64 << i) > n)?;
        let taps = LFSR_TAPS[width];
        Some(Lfsr {
            xor: taps.iter().fold(0, |m, &t| m | 1 << (t - 1)),
            top: 1 << (taps[0] - 1),
            last: 0,
            max: n.max(1) - 1,
            count: 0,
            first: true,
            seeded: false,
        })
    }
    /// A new pass from `seed` (fio's `lfsr_reset` when the file is opened).
    fn reset(&mut self, seed: u64) {
        self.count = 0;
        self.last = seed & ((self.top << 1) - 1);
        self.seeded = true;
    }
    #[inline]
    fn step(&mut self) {
        let v = self.last;
        self.last = ((v >> 1) | self.top) ^ ((v & 1).wrapping_sub(1) & self.xor);
    }
    /// The next block of the pass, `None` once every block came (that call counts too,
    /// as fio's).
    #[inline]
    fn next(&mut self) -> Option<u64> {
        let c = self.count;
        self.count += 1;
        if c > self.max {
            return None;
        }
        if self.first {
            self.first = false;
            self.step();
        }
        loop {
            self.step();
            if self.last <= self.max {
                return Some(self.last);
            }
        }
    }
}

/// fio's `jhash` of a file's name (Bob Jenkins' hash as fio 3.33 computes it: of each
/// 12-byte block before the last, one byte per word counts), which seeds the file's
/// `zipf`/`pareto` draws.
fn fio_jhash(key: &[u8]) -> u32 {
    let init = 0x61C8_8647u32.wrapping_add(key.len() as u32);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut k = key;
    while k.len() > 12 {
        a = a.wrapping_add(u32::from(k[0]));
        b = b.wrapping_add(u32::from(k[4]));
        c = c.wrapping_add(u32::from(k[8]));
        a = a.wrapping_sub(c) ^ c.rotate_left(4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ a.rotate_left(6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ b.rotate_left(8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c) ^ c.rotate_left(16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ a.rotate_left(19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ b.rotate_left(4);
        b = b.wrapping_add(a);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    // The last block, little-endian words padded with zeros.
    let word = |i: usize| {
        (0..4).fold(0u32, |w, j| {
            w | k.get(i + j).map_or(0, |&x| u32::from(x)) << (8 * j)
        })
    };
    a = a.wrapping_add(word(0));
    b = b.wrapping_add(word(4));
    c = c.wrapping_add(word(8));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c.wrapping_sub(b.rotate_left(24))
}

/// A file's `zipf`/`pareto`/`normal` draws as fio 3.33 makes them (`lib/zipf.c`,
/// `lib/gauss.c`): a 32-bit generator seeded per file, for zipf and pareto a random
/// rotation drawn first, each value scattered by a golden-ratio multiply (not for the
/// file service's draws) before the rotation, over `nranges` ranges of the smallest block
/// size (or the files' `nrfiles << 10` ranges).
#[derive(Clone, Debug)]
pub(super) struct FioZipf {
    rng: super::verify::FioRand,
    nranges: u64,
    rand_off: u64,
    /// fio's `disable_hash` is off (offsets; the file service's draws have it on).
    hash: bool,
    /// Zipf's θ and its sums, pareto's power, or normal's deviation.
    kind: ZipfKind,
}

#[derive(Clone, Copy, Debug)]
enum ZipfKind {
    Zipf {
        theta: f64,
        zetan: f64,
        zeta2: f64,
    },
    Pareto {
        pow: f64,
    },
    /// `gauss_init`'s deviation in ranges (0: none).
    Gauss {
        stddev: u64,
    },
}

impl FioZipf {
    /// The offsets' draws of `dist` over `nranges` ranges (`None` for a distribution fio
    /// does not draw this way).
    fn new(dist: &RandDist, nranges: u64, seed: u32) -> Option<FioZipf> {
        match *dist {
            RandDist::Zipf(theta) => Some(Self::zipf(theta, nranges, seed, true)),
            RandDist::Pareto(h) => Some(Self::pareto(h, nranges, seed, true)),
            RandDist::Normal { dev, center } => Some(Self::gauss(dev, center, nranges, seed, true)),
            _ => None,
        }
    }

    /// `shared_rand_init`: the generator and the rotation, its first draw.
    fn shared(nranges: u64, seed: u32, hash: bool, kind: ZipfKind) -> FioZipf {
        let mut rng = super::verify::FioRand::new(u64::from(seed), false);
        let rand_off = rng.draw();
        FioZipf {
            rng,
            nranges: nranges.max(1),
            rand_off,
            hash,
            kind,
        }
    }

    /// `zipf_init`.
    pub(super) fn zipf(theta: f64, nranges: u64, seed: u32, hash: bool) -> FioZipf {
        // fio sums at most 10M terms.
        let zetan = (0..nranges.min(10_000_000))
            .map(|i| (1.0 / (i + 1) as f64).powf(theta))
            .sum();
        let kind = ZipfKind::Zipf {
            theta,
            zetan,
            zeta2: 1.0 + 0.5f64.powf(theta),
        };
        Self::shared(nranges, seed, hash, kind)
    }

    /// `pareto_init`.
    pub(super) fn pareto(h: f64, nranges: u64, seed: u32, hash: bool) -> FioZipf {
        let kind = ZipfKind::Pareto {
            pow: h.ln() / (1.0 - h).ln(),
        };
        Self::shared(nranges, seed, hash, kind)
    }

    /// `gauss_init`: no rotation drawn; a `center` moves the values by
    /// `nranges × (center − 0.5)` (kept in fio's 32-bit unsigned field: a negative shift
    /// is 2^32 less its size).
    pub(super) fn gauss(
        dev: f64,
        center: Option<f64>,
        nranges: u64,
        seed: u32,
        hash: bool,
    ) -> FioZipf {
        let nranges = nranges.max(1);
        let stddev = if dev != 0.0 {
            (((nranges as f64 * dev) / 100.0).ceil() as u64).min(nranges / 2)
        } else {
            0
        };
        let rand_off = center.map_or(0, |c| u64::from((nranges as f64 * (c - 0.5)) as i64 as u32));
        FioZipf {
            rng: super::verify::FioRand::new(u64::from(seed), false),
            nranges,
            rand_off,
            hash,
            kind: ZipfKind::Gauss { stddev },
        }
    }

    pub(super) fn next(&mut self) -> u64 {
        let n = self.nranges;
        let v = match self.kind {
            ZipfKind::Zipf {
                theta,
                zetan,
                zeta2,
            } => {
                let u = self.rng.draw() as f64 / f64::from(u32::MAX);
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let z = u * zetan;
                let val = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                val - 1
            }
            ZipfKind::Pareto { pow } => {
                let u = self.rng.draw() as f64 / f64::from(u32::MAX);
                ((n - 1) as f64 * u.powf(pow)) as u64
            }
            ZipfKind::Gauss { stddev } => {
                // The mean of twelve draws over 0..=n, rounded up, then a deviation drawn
                // in 0..stddev less stddev / 2, halved until the value is below n (fio's
                // unsigned sum: a value below 0 is far above n too).
                let mut sum = 0u64;
                for _ in 0..12 {
                    sum = sum.wrapping_add(self.rng.draw() % (n + 1));
                }
                sum = sum.div_ceil(12);
                if stddev > 0 {
                    let r = self.rng.draw() as f64 / 4_294_967_296.0;
                    let vr = (stddev as f64 * r) as i32;
                    let mut dev = vr - (stddev / 2) as i32;
                    // (fio would spin for ever at a sum of n with a deviation that halves
                    // to 0; the modulo below takes that value to 0.)
                    while dev != 0 && sum.wrapping_add(i64::from(dev) as u64) >= n {
                        dev /= 2;
                    }
                    sum = sum.wrapping_add(i64::from(dev) as u64);
                }
                sum
            }
        };
        let v = if self.hash {
            v.wrapping_mul(0x61C8_8646_80B5_83EB)
        } else {
            v
        };
        v.wrapping_add(self.rand_off) % n
    }
}

/// How a random block is drawn.
enum Picker {
    /// Uniform, through the direction's [`OffsetGen`] (with or without the random map).
    Uniform,
    /// zipf or pareto (hot blocks at the start of the region).
    Sampler(Sampler),
    /// zipf or pareto as fio draws them, once the file's seed is known
    /// ([`Pattern::seed_file`]).
    Fio(FioZipf),
    /// fio's `normal`: the mean of 12 uniform draws, plus a uniform deviation of `stddev`
    /// positions, shifted by `off`.
    Normal { stddev: i64, off: i64 },
    /// `zoned`/`zoned_abs`, per direction: (cumulative access percent, first position,
    /// positions) of each zone; an empty list draws uniformly.
    Zoned([Vec<(u32, u64, u64)>; 2]),
}

/// The common jobs' shortcut through [`Pattern::next`]: one fixed size per direction,
/// no holes, no sequences inside random jobs, no map by blocks. It gives the same offsets
/// as the general path, with a few instructions per I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fast {
    /// Anything else: the general path.
    No,
    /// Sequential, back to the region's start when the next block does not fit.
    Seq,
    /// Uniform random positions from the direction's [`OffsetGen`], times the alignment.
    Rand,
    /// One size for both directions, uniform: fio's draws (`random_state` and the random
    /// map's next free block, or no map, or the file's [`Lfsr`]) from [`SizeDraws`].
    Fio,
}

/// Where a `zonemode=strided` clone is (fio 3.33's moving `file_offset` and `zone_bytes`),
/// in bytes from the region's start. The pattern's own size is then the zone's range: its
/// offsets are drawn in the zone, and [`Pattern::next`] adds the zone's start.
#[derive(Clone, Copy, Debug)]
struct ZoneState {
    z: Zones,
    /// The current zone's start.
    cur: u64,
    /// Bytes issued in the current zone.
    bytes: u64,
    /// The region's size (fio's `io_size`): an I/O this far into a zone, or a size drawn
    /// past it, ends the pass (fio's file done).
    region: u64,
    /// The file's end (fio's `real_file_size`): zones wrap to the start past it, and an
    /// I/O that reaches past it ends the pass.
    end: u64,
}

/// fio's block-size generators (`bsrange_state[ddir]`, taus88 or taus258 as
/// `random_generator` says): with them a size drawn from `bsrange`/`bssplit` is the one fio
/// draws, so a sequential job's sizes and counts are fio's. One set per clone, shared by its
/// files, as fio's are the job's. Seeds are fio's `FIO_RAND_BS_OFF`, `BS1` and `BS2` of the
/// clone's thread (the writes take the reads' seed under `verify`, the trims the writes'
/// under `trimwrite`); under `randrepeat` without `randseed` each loop starts them over.
#[derive(Clone, Debug)]
pub(super) struct SizeDraws {
    rng: [super::verify::FioRand; 2],
    /// fio's `random_state` (`FIO_RAND_BLOCK_OFF`): the random offsets of a job whose sizes
    /// vary, drawn as fio draws them (its random map then moves them as fio's does).
    offsets: super::verify::FioRand,
    seeds: [u64; 3],
    /// fio's `seq_rand_state[ddir]` (32-bit, each seeded `FIO_RAND_SEQ_RAND_READ_OFF`'s
    /// seed): `percentage_random`'s draw of random or sequential.
    seq_rand: [super::verify::FioRand; 2],
    seq_seed: u64,
    /// `1 / (rand_max + 1)` of `offsets` (a power of two: multiplying is fio's division).
    scale: f64,
    wide: bool,
    /// `randrepeat`: each loop starts the draws over.
    again: bool,
}

impl SizeDraws {
    /// The draws of a clone of `j` with fio thread number `thread` (1-based); `None`
    /// without a repeatable seed (fio reads the system's generator: any draw is as good)
    /// or when no direction has a range of sizes.
    pub(super) fn new(j: &JobSpec, thread: u64, fallback: u64) -> Option<SizeDraws> {
        if !j.rw.random() && j.bsz.iter().all(|b| b.min == b.max) {
            return None;
        }
        // fio's seeds (`allrandrepeat`, `randrepeat`, `randseed`); without a repeatable one
        // fio reads the system's generator: `fallback` mixed.
        let seed = |off: u64| {
            j.fio_rand_seed(thread, off).unwrap_or_else(|| {
                (fallback ^ off.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                    .wrapping_mul(0xbf58_476d_1ce4_e5b9)
            })
        };
        let read = seed(0);
        let mut write = seed(1);
        let mut trim = seed(2);
        if j.verify.kind != super::verify::kind::NONE {
            write = read;
        }
        if j.rw.trim_write() {
            trim = write;
        }
        // A trim job's pattern draws its trims in the reads' place (see `Pattern::new`).
        let sizes = if j.rw.trims() {
            [trim, write]
        } else {
            [read, write]
        };
        // fio's `random_state`: under `randrepeat`, FIO_RANDSEED × thread number whatever
        // `randseed` says (td_fill_rand_seeds_internal); else FIO_RAND_BLOCK_OFF's seed.
        let offsets = if j.randrepeat {
            0xb189_9bed_u64.wrapping_mul(thread)
        } else {
            seed(6)
        };
        let seeds = [sizes[0], sizes[1], offsets];
        let wide = j.rand64;
        let seq_seed = seed(10);
        Some(SizeDraws {
            rng: sizes.map(|s| super::verify::FioRand::new(s, wide)),
            offsets: super::verify::FioRand::new(seeds[2], wide),
            seeds,
            seq_rand: [0, 1].map(|_| super::verify::FioRand::new(seq_seed, false)),
            seq_seed,
            scale: if wide {
                1.0 / 18_446_744_073_709_551_616.0
            } else {
                1.0 / 4_294_967_296.0
            },
            wide,
            again: j.reseeds_each_loop(),
        })
    }

    /// An I/O fio began found its file done: its random offset was drawn first (fio's
    /// `__get_next_rand_offset` draws, then finds the map full), and is spent.
    pub(super) fn spend_offset(&mut self) {
        self.offsets.draw();
    }

    /// A new loop: under `randrepeat` the generators start over (fio's `clear_io_state`).
    pub(super) fn new_loop(&mut self) {
        if self.again {
            let w = self.wide;
            self.rng = [0, 1].map(|d| super::verify::FioRand::new(self.seeds[d], w));
            self.offsets = super::verify::FioRand::new(self.seeds[2], w);
            self.seq_rand = [0, 1].map(|_| super::verify::FioRand::new(self.seq_seed, false));
        }
    }
}

/// One clone's offsets and lengths.
pub(super) struct Pattern {
    /// See [`Fast`].
    fast: Fast,
    size: u64,
    random: bool,
    /// Per direction: smallest and largest size.
    min: [u64; 2],
    max: [u64; 2],
    /// The sizes an I/O's length is drawn from, by [`Self::size_index`]: the direction's
    /// (`min`, `max`, its bssplit), or with `bs_is_seq_rand` the reads' for an I/O placed
    /// sequentially and the writes' for one placed at random (a trim job's too).
    smin: [u64; 2],
    smax: [u64; 2],
    ssplit: [Vec<(u64, u32)>; 2],
    seq_rand: bool,
    unaligned: bool,
    /// Per direction: random offsets are multiples of this, over `positions` positions.
    align: [u64; 2],
    positions: [u64; 2],
    /// Per direction: index into `maps` (reads and writes share one when they have the
    /// same positions, so a randrw pass touches each block once, as fio's one map).
    map_of: [usize; 2],
    maps: Vec<OffsetGen>,
    /// fio's random map by blocks (`None`: no map, or the permutations in `maps` are the
    /// map where the draws are not fio's).
    blocks: Option<BlockMap>,
    /// `random_generator=lfsr` with one size: the file's register (see [`Lfsr`]).
    lfsr: Option<Lfsr>,
    /// Reads and writes of different smallest sizes (`bs=4k,16k`): fio's map has a bit
    /// per smallest size of both, and each direction uses it by its own size (its drawn
    /// block's index is the bit it checks, the bit it marks is its offset over its
    /// smallest size; the next free bit past the region ends the pass), as fio 3.33's
    /// `get_next_rand_block` and `mark_random_map` do. An I/O keeps its size.
    fio_units: bool,
    picker: Picker,
    seq_add: i64,
    seq_nr: u32,
    seq_left: u32,
    identical: bool,
    pct_random: [u32; 2],
    /// Per direction: end and start of the last I/O.
    last_end: [u64; 2],
    last_start: [Option<u64>; 2],
    /// With holes (`seq_add`), a size-based job is done when its offset passes the end;
    /// the next loop starts over, until `loops` passes are done.
    time_based: bool,
    loops: u32,
    passes: u32,
    /// `io_size` given: a pass that ends (the map full, no size left that fits) starts
    /// the next one past `loops`, and the worker's byte limit ends the job, as fio's
    /// `keep_running` goes on while io_size is not done — unless less than the largest
    /// size of it is left (`io_limit` bytes, less `issued` so far; see
    /// [`Self::set_io_limit`]).
    io_size: bool,
    io_limit: u64,
    issued: u64,
    /// `zonemode=strided`: see [`ZoneState`].
    zone: Option<ZoneState>,
    /// Where the file ends, in bytes from the region's start (`size` until
    /// [`Self::set_file_end`] says more): a sequential pass of fixed blocks may start its
    /// last block before the region's end and finish it past there, inside the file.
    end: u64,
    /// The I/O being placed marks the random map (placed at random: fio's I/Os of a
    /// random job placed sequentially, `rw=randread:N`'s or `percentage_random`'s, do not).
    marks: bool,
    /// fio's `IO_U_F_BUSY_OK` left on the I/O unit by an attempt placed sequentially that
    /// found its file done: fio clears it only when an I/O completes, so the next I/O
    /// placed (in the next file, or the next loop) leaves the map alone even when placed
    /// at random. See [`Self::take_busy`].
    busy: bool,
    /// A pass of sizes from a range ended short (less than the smallest size left) while
    /// placing the next I/O: its size is the new loop's first draw.
    short_pass: bool,
    /// fio's file done is the caller's ([`Self::report_ends`]): where fio's `fill_io_u`
    /// finds no I/O in the file (the random map's next free block past the region or none
    /// left, a sequential offset past the region or an I/O past the file's end), `next`
    /// says `None` and [`Self::take_file_done`] says why, instead of the pattern going on
    /// with its next pass. The jobs whose passes do not end by bytes: two sizes of
    /// `fio_units`, `percentage_random`'s sequential I/Os that leave the map alone.
    reports_end: bool,
    /// `next` found the file done (see `reports_end`).
    ended: bool,
}

impl Pattern {
    /// The pattern of job `j` over a region of `size` bytes (`size` ≥ every direction's
    /// smallest block). Errors are the job's (zoned_abs past the region).
    pub(super) fn new(j: &JobSpec, size: u64) -> Result<Pattern, String> {
        if j.rw.trims() {
            // Trims are drawn in the reads' place with the trim values of every
            // per-direction option (`bs=4k,8k,16k`: trims of 16k); trimwrite's writes
            // repeat the trimmed range and draw nothing.
            let mut t = j.clone();
            t.bsz[0] = t.bsz[2].clone();
            t.bsz[1] = t.bsz[2].clone();
            t.blockalign = [t.blockalign[2]; 3];
            t.percentage_random = [t.percentage_random[2]; 3];
            if let RandDist::Zoned { zones, .. } = &mut t.dist {
                zones[0] = zones[2].clone();
                zones[1] = zones[2].clone();
            }
            t.rw = if t.rw.random() {
                super::job::Rw::RandRead
            } else {
                super::job::Rw::Read
            };
            let mut p = Self::new(&t, size)?;
            if j.bs_is_seq_rand {
                // The trims' sizes are the reads' or the writes' then (fio's size index).
                p.smin = [j.bsz[0].min, j.bsz[1].min];
                p.smax = [j.bsz[0].max, j.bsz[1].max];
                p.ssplit = [j.bsz[0].split.clone(), j.bsz[1].split.clone()];
                p.fast = Fast::No;
            }
            return Ok(p);
        }
        if let Some(z) = j.zones {
            // Offsets are drawn in the zone's range (fio's `last_block` and random map
            // cover `zonerange`), then moved to the zone.
            let mut plain = j.clone();
            plain.zones = None;
            let least = plain.bsz[0].max.max(plain.bsz[1].max);
            let mut p = Self::new(&plain, z.range.max(least))?;
            p.fast = Fast::No;
            p.zone = Some(ZoneState {
                z,
                cur: 0,
                bytes: 0,
                region: size,
                end: size,
            });
            return Ok(p);
        }
        let min = [j.bsz[0].min, j.bsz[1].min];
        let max = [j.bsz[0].max, j.bsz[1].max];
        let align = [
            j.blockalign[0].unwrap_or(min[0]).max(1),
            j.blockalign[1].unwrap_or(min[1]).max(1),
        ];
        let positions = [0, 1].map(|d| size.saturating_sub(min[d]) / align[d] + 1);
        // fio: `blockalign` other than the smallest size turns the random map off, and so
        // does any distribution but the uniform one; `lfsr` visits every block once anyway.
        let uniform = matches!(j.dist, RandDist::Random);
        let ba_off = (0..2).any(|d| j.blockalign[d].is_some_and(|a| a != min[d]));
        let mut map = j.rw.random()
            && uniform
            && ((!j.norandommap && !ba_off) || j.random_generator == RandGen::Lfsr);
        // Fixed and equal sizes and alignments: the permutation alone visits every block
        // once. Otherwise a map by blocks of the finest grain keeps fio's account.
        let varied = min != max || min[0] != min[1] || align[0] != align[1] || align != min;
        let lfsr_gen = j.random_generator == RandGen::Lfsr;
        // One size, uniform, every I/O at random: fio's own draws (see `Fast::Fio`).
        let fio_fixed = j.rw.random()
            && uniform
            && !varied
            && j.seq_nr <= 1
            && j.percentage_random[..2].iter().all(|&p| p >= 100);
        let mut blocks = None;
        if map && (varied || !lfsr_gen) {
            let gran = min.into_iter().chain(align).min().unwrap_or(1).max(1);
            // fio's map has a bit per whole smallest block (`init_random_map`); the map by
            // grains of mixed sizes keeps a partial last one.
            let covered = if varied { size } else { size / gran * gran };
            blocks = BlockMap::try_new(covered, gran);
            if blocks.is_none() {
                // fio's `init_random_map`: softrandommap runs the job without the map.
                if !j.softrandommap {
                    return Err(format!(
                        "fio: failed allocating random map of job '{}' ({size} bytes in \
                         blocks of {gran}). Set norandommap (offsets may repeat) or \
                         softrandommap (run without the map when it cannot be allocated)",
                        j.name
                    ));
                }
                eprintln!(
                    "fio: job '{}' failed allocating random map. Running job without.",
                    j.name
                );
                map = false;
            }
        }
        let (map_of, maps) = if positions[0] == positions[1] && align[0] == align[1] {
            ([0, 0], vec![OffsetGen::new(positions[0], map)])
        } else {
            (
                [0, 1],
                vec![
                    OffsetGen::new(positions[0], map),
                    OffsetGen::new(positions[1], map),
                ],
            )
        };
        let n = positions[0].min(positions[1]).max(1);
        let picker = match &j.dist {
            RandDist::Random => Picker::Uniform,
            RandDist::Zipf(t) => {
                Picker::Sampler(Distribution::Zipfian { exp: *t }.sampler(0, n - 1))
            }
            RandDist::Pareto(h) => {
                Picker::Sampler(Distribution::Pareto { h: *h }.sampler(0, n - 1))
            }
            RandDist::Normal { dev, center } => {
                let mut stddev = if *dev > 0.0 {
                    ((n as f64 * dev) / 100.0).ceil() as i64
                } else {
                    0
                };
                stddev = stddev.min((n / 2) as i64);
                let off = center.map_or(0, |c| (n as f64 * (c - 0.5)) as i64);
                Picker::Normal { stddev, off }
            }
            RandDist::Zoned { abs, zones } => {
                let mut out: [Vec<(u32, u64, u64)>; 2] = Default::default();
                for d in 0..2 {
                    let p = positions[d];
                    let mut access = 0u32;
                    let mut start = 0u64;
                    for &(a, sz) in &zones[d] {
                        access += a;
                        let (first, len) = if *abs {
                            let (s0, s1) = (start, start.saturating_add(sz));
                            if s1 > size {
                                return Err(format!(
                                    "fio: zoned_abs sizes exceed file size: job '{}' has zones \
                                     up to {s1} bytes in a region of {size}",
                                    j.name
                                ));
                            }
                            start = s1;
                            (s0 / align[d], (s1 / align[d]).min(p) - s0 / align[d])
                        } else {
                            let (s0, s1) = (start, start + sz);
                            start = s1;
                            let a0 = p * s0 / 100;
                            (a0, (p * s1 / 100).min(p).saturating_sub(a0))
                        };
                        out[d].push((access, first, len));
                    }
                }
                Picker::Zoned(out)
            }
        };
        let fio_units = blocks.is_some() && min[0] != min[1] && align == min;
        let fixed = min == max;
        let lfsr = (j.rw.random() && uniform && !varied && lfsr_gen)
            .then(|| Lfsr::new(size / min[0]))
            .flatten();
        // bs_is_seq_rand with reads and writes of other sizes: an I/O's size depends on how
        // it was placed, which only the general path knows.
        let seq_rand = j.bs_is_seq_rand
            && (min != max || min[0] != min[1] || j.bsz[0].split != j.bsz[1].split);
        let fast = if seq_rand {
            Fast::No
        } else if fio_fixed && (blocks.is_some() || !map || lfsr.is_some()) {
            Fast::Fio
        } else if !fixed {
            Fast::No
        } else if !j.rw.random() {
            if j.seq_add == 0 { Fast::Seq } else { Fast::No }
        } else if j.seq_nr <= 1
            && j.percentage_random[..2].iter().all(|&p| p >= 100)
            && matches!(picker, Picker::Uniform)
            && blocks.is_none()
        {
            Fast::Rand
        } else {
            Fast::No
        };
        Ok(Pattern {
            fast,
            size,
            random: j.rw.random(),
            min,
            max,
            smin: min,
            smax: max,
            ssplit: [j.bsz[0].split.clone(), j.bsz[1].split.clone()],
            seq_rand,
            unaligned: j.bs_unaligned,
            align,
            positions,
            map_of,
            maps,
            blocks,
            lfsr,
            fio_units,
            picker,
            seq_add: j.seq_add,
            seq_nr: j.seq_nr.max(1),
            // fio's `rw=randread:N` starts at random, then N-1 I/Os follow (`randread:3` over
            // 1 MiB: 60k, 64k, 68k, 756k...; over 64 KiB the first draw is block 0, which
            // read as "sequential from the start").
            seq_left: 1,
            identical: j.rw_seq_identical,
            pct_random: [j.percentage_random[0], j.percentage_random[1]],
            last_end: [0; 2],
            last_start: [None; 2],
            time_based: j.time_based,
            loops: j.loops.max(1),
            passes: 0,
            io_size: j.io_size.is_some() || j.io_size_pct.is_some(),
            io_limit: u64::MAX,
            issued: 0,
            zone: None,
            end: size,
            short_pass: false,
            marks: true,
            busy: false,
            reports_end: false,
            ended: false,
        })
    }

    /// Where the clone's file ends, in bytes from the region's start (fio's
    /// `real_file_size`: the file may go on past the region). Zones wrap at the file's
    /// end, not the region's; a sequential pass of fixed blocks ends with the block that
    /// starts before the region's end if it fits in the file (fio's `get_next_offset`
    /// checks the start against `io_size`, the end against `real_file_size`).
    pub(super) fn set_file_end(&mut self, end: u64) {
        self.end = end.max(self.size);
        if let Some(z) = &mut self.zone {
            z.end = end.max(z.region);
        }
    }

    /// The caller acts on fio's file done (see the field `reports_end`): for a size-based
    /// job with one file's region or several files, not zoned, whose passes do not end by
    /// bytes. Others go on as before.
    pub(super) fn report_ends(&mut self) {
        self.reports_end = self.zone.is_none()
            && !self.time_based
            && self.random
            && (self.fio_units
                || matches!(self.picker, Picker::Fio(_))
                || self.pct_random.iter().any(|&p| p < 100)
                || (self.unaligned && self.blocks.is_some()));
    }

    /// Whether the caller acts on fio's file done ([`Self::report_ends`] took).
    pub(super) fn ends_itself(&self) -> bool {
        self.reports_end
    }

    /// fio's `IO_U_F_BUSY_OK` the last attempt left (it found its file done): the I/O unit
    /// carries it to the next file's pattern ([`Self::set_busy`]); cleared here.
    pub(super) fn take_busy(&mut self) -> bool {
        std::mem::take(&mut self.busy)
    }

    /// The next I/O placed comes on an I/O unit with fio's `IO_U_F_BUSY_OK` (`busy`): it
    /// leaves the random map alone.
    pub(super) fn set_busy(&mut self, busy: bool) {
        self.busy |= busy;
    }

    /// Whether the last `None` of [`Self::next`] was fio's file done (then the I/O's draws
    /// were spent, and the file starts its next pass as fio opens it again); clears it.
    pub(super) fn take_file_done(&mut self) -> bool {
        std::mem::take(&mut self.ended)
    }

    /// Whether a pass that ended is followed by another (a file of its own: `loops`, or
    /// `io_size` left).
    pub(super) fn more_passes(&self) -> bool {
        self.passes < self.loops || self.io_size_goes_on()
    }

    /// fio's file done found while placing an I/O: the pass is over, and the file's next
    /// one starts as fio's `fio_file_reset` at its next open (positions at the start, the
    /// random map cleared, the lfsr from its seed).
    fn file_done(&mut self) {
        self.passes += 1;
        self.ended = true;
        // The attempt's unit keeps BUSY_OK when it was placed sequentially (or had it).
        self.busy |= self.random && !self.marks;
        self.last_end = [0; 2];
        self.last_start = [None; 2];
        if let Some(m) = &mut self.blocks {
            m.reset();
        }
        if let Some(l) = &mut self.lfsr {
            l.seeded = false;
        }
    }

    /// The caller ended the pass (an engine that queues ends a loop at `size` bytes
    /// queued, fio's `do_io`): the next starts as after fio's file done, without one to
    /// report.
    pub(super) fn end_pass(&mut self) {
        self.file_done();
        self.ended = false;
    }

    /// A block device that ends inside the region, `end` bytes from its start: a
    /// sequential direction that reaches it finds the file done there (fio's
    /// `get_next_offset` against `real_file_size`), whatever the region's size.
    pub(super) fn end_at_device(&mut self, end: u64) {
        self.end = end;
    }

    /// The bytes the clone is to issue (with one file: its pattern sees them all). With
    /// `io_size`, a pass that ends with less than the largest size of them left ends the
    /// job (fio's `keep_running`).
    pub(super) fn set_io_limit(&mut self, limit: u64) {
        self.io_limit = limit;
    }

    /// fio's per-file seed of `zipf`/`pareto`/`normal` (`__init_rand_distribution`): the file's
    /// name hashed times the clone's thread number under `randrepeat` (without
    /// `randseed`), else the clone's `random_state` seed; its draws then follow fio's. The
    /// ranges are of the smallest size of reads and writes over the file's region.
    pub(super) fn seed_file(&mut self, j: &JobSpec, name: &std::path::Path, thread: u64) {
        if !matches!(self.picker, Picker::Sampler(_) | Picker::Normal { .. }) || self.zone.is_some()
        {
            return;
        }
        let seed = if j.reseeds_each_loop() {
            use std::os::unix::ffi::OsStrExt;
            // fio's name of a file in no `directory` has no "./" (hostbench's default
            // directory is ".").
            let name = name.strip_prefix(".").unwrap_or(name);
            fio_jhash(name.as_os_str().as_bytes()).wrapping_mul(thread as u32)
        } else if j.randrepeat {
            // randseed given: fio's `random_state` seed was taken under randrepeat.
            0xb189_9bed_u32.wrapping_mul(thread as u32)
        } else {
            match j.fio_rand_seed(thread, 6) {
                Some(s) => s as u32,
                None => return,
            }
        };
        let range = self.min[0].min(self.min[1]).max(1);
        let nranges = self.size.min(self.end).div_ceil(range);
        if let Some(z) = FioZipf::new(&j.dist, nranges, seed) {
            self.picker = Picker::Fio(z);
        }
    }

    /// Whether a pass that ended (past `loops`) is followed by another: `io_size` given
    /// and at least the largest size of it left.
    fn io_size_goes_on(&self) -> bool {
        self.io_size && self.io_limit.saturating_sub(self.issued) >= self.max[0].max(self.max[1])
    }

    /// Where the next sequential I/O of direction `d` starts (the last one's end), from
    /// the region's start.
    pub(super) fn seq_pos(&self, d: usize) -> u64 {
        self.last_end[d]
    }

    /// Whether this pattern's random offsets are fio's draws ([`SizeDraws`]'s offsets, with
    /// the map by blocks, uniform, aligned to its grain).
    pub(super) fn fio_offsets(&self) -> bool {
        self.random
            && matches!(self.picker, Picker::Uniform)
            && self
                .blocks
                .as_ref()
                .is_some_and(|m| self.fio_units || self.align.iter().all(|&a| a == m.gran))
    }

    /// Whether the pattern's passes end by bytes: random offsets with fio's random map (a
    /// pass is done when the map is full). Sequential offsets and random ones without
    /// the map end a loop otherwise (see [`Self::seq_ends`]).
    pub(super) fn pass_by_bytes(&self) -> bool {
        self.random && (self.blocks.is_some() || self.maps.iter().any(|m| m.map))
    }

    /// A sequential pattern of fixed sizes (no holes): whether the next I/O of direction
    /// `d` would start past the region or end past the file, where fio's
    /// `get_next_offset` finds the file done (the loop ends; the next one starts every
    /// direction at the region's start, [`Self::restart_seq`]). `false` for others.
    pub(super) fn seq_ends(&self, d: usize) -> bool {
        self.fast == Fast::Seq
            && (self.last_end[d] >= self.size || self.last_end[d] + self.min[d] > self.end)
    }

    /// Every direction's sequential offset back to the region's start (a new loop).
    pub(super) fn restart_seq(&mut self) {
        self.last_end = [0; 2];
        self.last_start = [None; 2];
    }

    /// Sets [`Self::seq_pos`] (`zonemode=zbd` moves a writer past a zone's capacity, and
    /// starts a pass over).
    pub(super) fn set_seq_pos(&mut self, d: usize, pos: u64) {
        self.last_end[d] = pos;
    }

    /// The I/O of direction `d` issued at `off` for `len` bytes (`zonemode=zbd` moves
    /// I/Os): the next sequential one follows it, as fio's `last_pos`.
    pub(super) fn set_last(&mut self, d: usize, off: u64, len: u64) {
        self.last_start[d] = Some(off);
        self.last_end[d] = off + len;
    }

    /// Seeds the random maps (at the clone's start).
    pub(super) fn seed(&mut self, rng: &mut Rng) {
        for m in &mut self.maps {
            m.seed(rng.next_u64());
        }
    }

    /// The next I/O of direction `d` (0 read, 1 write): (offset in the region, length), or
    /// `None` when a size-based job with holes has passed the end of its region for the
    /// last time (fio's file done).
    #[inline(always)]
    pub(super) fn next(
        &mut self,
        d: usize,
        rng: &mut Rng,
        sd: &mut Option<SizeDraws>,
    ) -> Option<(u64, u64)> {
        match self.fast {
            Fast::Seq => {
                let len = self.min[d];
                let mut off = self.last_end[d];
                if off >= self.size || off + len > self.end {
                    off = 0;
                }
                self.last_end[d] = off + len;
                Some((off, len))
            }
            Fast::Rand => Some((
                self.maps[self.map_of[d]].next(rng) * self.align[d],
                self.min[d],
            )),
            Fast::Fio => {
                let b = match sd.as_mut() {
                    Some(s) => self.fio_block(d, s),
                    None => self.maps[self.map_of[d]].next(rng),
                };
                Some((b * self.align[d], self.min[d]))
            }
            Fast::No => self.next_general(d, rng, sd),
        }
    }

    /// The next random block of a [`Fast::Fio`] pattern, as fio's `__get_next_rand_offset`
    /// finds it: the file's [`Lfsr`], else block `positions × r / (rand_max + 1)` of
    /// `random_state`, moved to the map's next free block (wrapping) when used. A full map
    /// starts a new pass: the I/O that found it full drew first (the worker spends that
    /// draw at a loop's end; a time_based job draws it here), then fio resets the map.
    #[inline]
    fn fio_block(&mut self, d: usize, s: &mut SizeDraws) -> u64 {
        if let Some(l) = &mut self.lfsr {
            if !l.seeded {
                l.reset(s.seeds[2]);
            }
            return match l.next() {
                Some(b) => b,
                None => {
                    l.reset(s.seeds[2]);
                    l.next().unwrap_or(0)
                }
            };
        }
        let n = self.positions[d];
        if let Some(m) = &mut self.blocks
            && m.free == 0
        {
            if self.time_based {
                s.offsets.draw();
            }
            m.reset();
        }
        let r = s.offsets.draw() as f64 * s.scale;
        let b = ((n as f64 * r) as u64).min(n - 1);
        let Some(m) = &mut self.blocks else {
            return b;
        };
        let b = if m.used(b) {
            m.next_free1(b, n).unwrap_or(b)
        } else {
            b
        };
        m.mark(b);
        b
    }

    /// [`Self::next`] for every pattern.
    #[inline(never)]
    fn next_general(
        &mut self,
        d: usize,
        rng: &mut Rng,
        sd: &mut Option<SizeDraws>,
    ) -> Option<(u64, u64)> {
        if self.zone.is_some() {
            return self.next_zoned(d, rng, sd);
        }
        let off = self.choose_offset(d, rng, sd)?;
        if self.short_pass {
            self.short_pass = false;
            if let Some(sd) = sd.as_mut() {
                sd.new_loop();
            }
        }
        let sx = self.size_index(d, self.random && self.marks);
        if self.reports_end
            && self.smin[sx] != self.smax[sx]
            && self.size.saturating_sub(off) < self.smin[sx]
        {
            // fio's `get_next_buflen`: no size of the range fits before the region's end.
            self.file_done();
            return None;
        }
        let mut len = self.buflen(sx, off, rng, sd);
        if self.reports_end && off + len > self.end {
            // fio's `fill_io_u`: an I/O past the file's end finds the file done.
            self.file_done();
            return None;
        }
        let busy = std::mem::take(&mut self.busy);
        if self.random
            && self.marks
            && !busy
            && let Some(m) = &mut self.blocks
        {
            len = if self.fio_units {
                let unit = self.min[d];
                len.min(m.take_bits(off / unit, len.div_ceil(unit)).max(1) * unit)
            } else {
                m.take(off, len)
            };
        }
        self.last_start[d] = Some(off);
        self.last_end[d] = off + len;
        self.issued += len;
        Some((off, len))
    }

    /// The offset of the next I/O of direction `d`: random, or after the last one.
    fn choose_offset(
        &mut self,
        d: usize,
        rng: &mut Rng,
        sd: &mut Option<SizeDraws>,
    ) -> Option<u64> {
        Some(if self.random {
            // fio: every `seq_nr`-th I/O is placed at random (each one by default), with
            // probability `percentage_random`; the others follow the last one.
            self.seq_left -= 1;
            let hit = self.seq_left == 0;
            if hit {
                self.seq_left = self.seq_nr;
            }
            let pct = self.pct_random[d];
            // fio's `should_do_random`: `rand_between(seq_rand_state, 1, 100) <= P`.
            let random = hit
                && (pct >= 100
                    || match sd.as_mut() {
                        Some(s) => {
                            let r = s.seq_rand[d].draw() as u32;
                            // 1 + (100 × r / 2^32) ≤ P
                            ((100.0 * (f64::from(r) / 4_294_967_296.0)) as u32) < pct
                        }
                        None => (rng.next_u64() % 100) < u64::from(pct),
                    });
            // Only the I/Os placed at random mark fio's map (the others are `BUSY_OK`).
            self.marks = random;
            if random {
                self.mapped_offset(d, rng, sd)?
            } else if !hit && self.identical {
                self.last_start[d].unwrap_or(0)
            } else if self.reports_end {
                // fio's `get_next_seq_offset`: after the last I/O while that is inside the
                // file, else at random (the map left alone); an offset past the region
                // finds the file done.
                if self.last_end[d] < self.end {
                    let pos = self.last_end[d];
                    if pos >= self.size {
                        self.file_done();
                        return None;
                    }
                    pos
                } else {
                    self.mapped_offset(d, rng, sd)?
                }
            } else if self.last_end[d] + self.min[d] <= self.size {
                self.seq_or_zone_offset(d)?
            } else {
                self.mapped_offset(d, rng, sd)?
            }
        } else {
            self.seq_or_zone_offset(d)?
        })
    }

    fn seq_or_zone_offset(&mut self, d: usize) -> Option<u64> {
        let Some(z) = self.zone else {
            return self.seq_offset(d);
        };
        // fio's `get_next_seq_offset` in a zone: after the last I/O (which may run past
        // the range: the next I/O goes back to the zone's start). A time_based job whose
        // zone reaches the region's end starts that zone again (fio compares with
        // `io_size`: measured, a 16 MiB region of a larger file reads its last zone's
        // first block over and over).
        if self.time_based && z.cur + self.last_end[d] >= z.region {
            self.last_end[d] = 0;
        }
        let pos = self.last_end[d];
        if pos != 0 && self.seq_add != 0 {
            return Some(pos.saturating_add_signed(self.seq_add));
        }
        Some(pos)
    }

    /// [`Self::next_general`] with `zonemode=strided`; a pass that ends (fio's file done)
    /// starts over at the first zone when the job is time_based or has loops left, as
    /// fio's next loop does.
    fn next_zoned(
        &mut self,
        d: usize,
        rng: &mut Rng,
        sd: &mut Option<SizeDraws>,
    ) -> Option<(u64, u64)> {
        for _ in 0..2 {
            if let Some(io) = self.zone_io(d, rng, sd) {
                return Some(io);
            }
            self.passes += 1;
            if !self.time_based && self.passes >= self.loops {
                return None;
            }
            let z = self.zone.as_mut()?;
            z.cur = 0;
            z.bytes = 0;
            self.last_end = [0; 2];
            self.last_start = [None; 2];
        }
        None
    }

    /// One I/O in the current zone (fio's `setup_strided_zone_mode`, then
    /// `get_next_offset`'s and `fill_io_u`'s limits): `None` when the pass ends.
    fn zone_io(
        &mut self,
        d: usize,
        rng: &mut Rng,
        sd: &mut Option<SizeDraws>,
    ) -> Option<(u64, u64)> {
        let mut z = self.zone?;
        if z.bytes >= z.z.size {
            // The zone's bytes are done: the next zone, or the region's start past the
            // file's end.
            z.bytes = 0;
            z.cur = z.cur.saturating_add(z.z.range).saturating_add(z.z.skip);
            if z.cur >= z.end {
                z.cur = 0;
            }
            self.last_end[d] = 0;
        }
        if self.last_end[d] >= z.z.range {
            // zonesize > zonerange: the same zone again.
            self.last_end[d] = 0;
        }
        if z.bytes % z.z.range == 0 {
            // fio resets the file's positions and random map at each zone's start (and
            // after each range's worth of bytes in it).
            self.last_end = [0; 2];
            self.last_start = [None; 2];
            for m in &mut self.maps {
                m.seed(rng.next_u64());
            }
            if let Some(b) = &mut self.blocks {
                b.reset();
            }
        }
        self.zone = Some(z);
        let rel = self.choose_offset(d, rng, sd)?;
        if rel >= z.region {
            return None;
        }
        let at = z.cur + rel;
        if at >= z.end {
            return None;
        }
        let sx = self.size_index(d, self.random && self.marks);
        let mut len = if self.smin[sx] == self.smax[sx] {
            self.smin[sx]
        } else {
            let room = z.region.saturating_sub(at);
            if room < self.smin[sx] {
                return None;
            }
            self.buflen_room(sx, room, rng, sd)
        };
        if at + len > z.end {
            return None;
        }
        if self.random
            && let Some(m) = &mut self.blocks
        {
            len = m.take(rel, len);
        }
        self.last_start[d] = Some(rel);
        self.last_end[d] = rel + len;
        if let Some(z) = &mut self.zone {
            z.bytes += len;
        }
        Some((at, len))
    }

    /// A random offset, moved to the next free block of the map by blocks when it has one
    /// (`None` when the map is full and the job's passes are done).
    fn mapped_offset(
        &mut self,
        d: usize,
        rng: &mut Rng,
        sd: &mut Option<SizeDraws>,
    ) -> Option<u64> {
        if self.reports_end
            && let Picker::Fio(z) = &mut self.picker
        {
            // fio's zipf/pareto block is in ranges of the smallest size, times the
            // direction's alignment (no map): past the region it finds the file done
            // (`bs=4k,8k`: fio's writes end the job at the first draw past the middle).
            let off = z.next().saturating_mul(self.align[d]);
            if off >= self.size {
                self.file_done();
                return None;
            }
            return Some(off);
        }
        let fio_grain = self
            .blocks
            .as_ref()
            .is_none_or(|m| self.fio_units || m.gran == self.align[d]);
        let off = match (sd.as_mut(), &self.picker) {
            // The file's lfsr when it has one.
            (Some(sd), Picker::Uniform) if self.lfsr.is_some() => {
                self.fio_block(d, sd) * self.align[d]
            }
            // fio's `__get_next_rand_offset`: block `lastb × r / (rand_max + 1)` of its
            // `random_state`, then the map's next free block (below). Where the map's grain
            // is the alignment (fio's map is in the smallest size, its draw in
            // `blockalign` units: the same when they are equal; reads and writes of two
            // sizes use it by their own size, `fio_units`), or without a map.
            (Some(sd), Picker::Uniform) if fio_grain => {
                let max = sd.offsets.max() as f64;
                let r = sd.offsets.draw() as f64;
                let b = (self.positions[d] as f64 * (r / (max + 1.0))) as u64;
                b.min(self.positions[d] - 1) * self.align[d]
            }
            _ => self.random_offset(d, rng),
        };
        let Some(m) = &mut self.blocks else {
            return Some(off);
        };
        if self.fio_units {
            let b = off / self.align[d];
            let bit = if b < m.n && !m.used(b) {
                Some(b)
            } else {
                m.next_free_after(b)
            };
            // fio's `get_next_offset` checks the offset against the region; the size is
            // drawn after it, redrawn until it fits (`get_next_buflen`), and the I/O's end
            // checked against the file's (`fill_io_u`: `next_general` for a pattern that
            // finds its file done; without that, the largest size must fit here).
            if let Some(at) = bit.map(|b| b * self.align[d])
                && at < self.size
                && (self.reports_end || at + self.smax[self.size_index(d, true)] <= self.end)
            {
                return Some(at);
            }
        } else {
            let step = (self.align[d] / m.gran).max(1);
            let limit = (self.size - self.min[d]) / m.gran + 1;
            let b = off / m.gran;
            if m.free > 0
                && let Some(f) = m.next_free(b, step, limit)
            {
                return Some(f * m.gran);
            }
        }
        if self.reports_end {
            self.file_done();
            return None;
        }
        // The map is full, or its next free bit past the region: the pass is over (fio's
        // file done; time_based, or io_size left, starts again).
        self.passes += 1;
        if !self.time_based && self.passes >= self.loops && !self.io_size_goes_on() {
            return None;
        }
        if let Some(m) = &mut self.blocks {
            m.reset();
        }
        Some(off)
    }

    fn random_offset(&mut self, d: usize, rng: &mut Rng) -> u64 {
        let n = self.positions[d];
        let pos = match &mut self.picker {
            Picker::Uniform => self.maps[self.map_of[d]].next(rng),
            Picker::Sampler(s) => s.sample(rng).min(n - 1),
            // fio's block (in ranges of the smallest size) times the alignment; past the
            // direction's last position it is the last (fio's offset check ends the file).
            Picker::Fio(z) => z.next().min(n - 1),
            Picker::Normal { stddev, off } => {
                (normal_draw(rng, n, *stddev) + *off).rem_euclid(n as i64) as u64
            }
            Picker::Zoned(zones) if !zones[d].is_empty() => {
                let v = (rng.next_u64() % 100) as u32 + 1;
                let z = zones[d]
                    .iter()
                    .find(|z| z.0 >= v)
                    .unwrap_or(&zones[d][zones[d].len() - 1]);
                if z.2 == 0 {
                    z.1.min(n - 1)
                } else {
                    (z.1 + rng.next_u64() % z.2).min(n - 1)
                }
            }
            Picker::Zoned(_) => rng.next_u64() % n,
        };
        pos * self.align[d]
    }

    /// fio's `get_next_seq_offset`: after the last I/O, `seq_add` bytes further (holes,
    /// or backwards when negative), wrapping to the region's start (backwards: its end).
    fn seq_offset(&mut self, d: usize) -> Option<u64> {
        let size = self.size;
        let mut last = self.last_end[d];
        if last >= size {
            if self.seq_add != 0 && !self.time_based {
                self.passes += 1;
                if self.passes >= self.loops {
                    return None;
                }
            }
            last = 0;
            self.last_end[d] = 0;
        }
        let mut pos = last;
        if pos != 0 && self.seq_add != 0 {
            let p = i128::from(pos) + i128::from(self.seq_add);
            pos = if p < 0 || p >= i128::from(size) {
                if self.seq_add > 0 {
                    0
                } else {
                    (i128::from(size) + i128::from(self.seq_add)).max(0) as u64
                }
            } else {
                p as u64
            };
        }
        let sx = self.size_index(d, false);
        if pos + self.smin[sx] > size {
            if self.seq_add == 0 && !self.time_based && pos > 0 && self.smin[sx] != self.smax[sx] {
                // Sizes drawn from a range, less than the smallest left (bs_unaligned sizes
                // rarely end on the region's end): the pass is over, as fio's
                // `get_next_buflen` finds no size that fits; it used to start again at 0
                // within the pass (16 writes past a 64 KiB size where fio does 15, and the
                // file's start written again). A fixed size's partial last block is the
                // worker's to end by its byte count, as before.
                self.passes += 1;
                if self.passes >= self.loops && !self.io_size_goes_on() {
                    return None;
                }
                self.last_end[d] = 0;
                self.short_pass = true;
            }
            pos = 0;
        }
        Some(pos)
    }

    /// Which sizes an I/O of direction `d` draws its length from: the direction's, or with
    /// `bs_is_seq_rand` the reads' (0) when it was placed sequentially and the writes' (1)
    /// when placed at random (`random`), as fio's `get_next_buflen`.
    #[inline]
    fn size_index(&self, d: usize, random: bool) -> usize {
        if self.seq_rand {
            usize::from(random)
        } else {
            d
        }
    }

    /// fio's `get_next_buflen`: the sizes `d` says ([`Self::size_index`]), one of them drawn
    /// from a range or split that fits before the region's end (redrawn until it does).
    fn buflen(&self, d: usize, off: u64, rng: &mut Rng, sd: &mut Option<SizeDraws>) -> u64 {
        self.buflen_room(d, self.size - off, rng, sd)
    }

    /// [`Self::buflen`] with `room` bytes left before the end.
    fn buflen_room(&self, d: usize, room: u64, rng: &mut Rng, sd: &mut Option<SizeDraws>) -> u64 {
        let (min, max) = (self.smin[d], self.smax[d]);
        if min == max {
            return min;
        }
        if room < min {
            return min;
        }
        if let Some(sd) = sd.as_mut() {
            return self.fio_buflen(d, room, &mut sd.rng[d]);
        }
        for _ in 0..1000 {
            let u = rng.next_f64();
            let mut len = if self.ssplit[d].is_empty() {
                min + (max as f64 * u) as u64
            } else {
                // Entries sorted by percent, chosen by cumulative weight; one that does not
                // fit passes to the next; past the last, the last one's size (fio's rule:
                // percents that add to less than 100 give the rest to the most likely).
                let v = u * 100.0;
                let mut cum = 0u32;
                let mut pick = min;
                for &(bs, p) in &self.ssplit[d] {
                    if p == 0 {
                        continue;
                    }
                    pick = bs;
                    cum += p;
                    if v < f64::from(cum) && bs <= room {
                        break;
                    }
                }
                pick
            };
            if !self.unaligned {
                len -= len % min;
            }
            len = len.min(max);
            if len > 0 && len <= room {
                return len;
            }
        }
        min
    }
}

impl Pattern {
    /// [`Self::buflen_room`] with fio's generator: fio's `get_next_buflen` draw for draw (a
    /// range's `min + max × r / (rand_max + 1)`; a split's first entry, in increasing
    /// percent, whose cumulative percent covers `r` in whole units of `rand_max / 100` and
    /// that fits, else the last), aligned down to the smallest size unless `bs_unaligned`,
    /// at most the largest, redrawn until it fits.
    fn fio_buflen(&self, d: usize, room: u64, r: &mut super::verify::FioRand) -> u64 {
        let (min, max) = (self.smin[d], self.smax[d]);
        let fmax = r.max();
        // fio redraws for ever; past many draws (a region whose room no size can use) the
        // smallest is as fio's would end.
        for _ in 0..100_000 {
            let v = r.draw();
            let mut len = if self.ssplit[d].is_empty() {
                min + (max as f64 * (v as f64 / (fmax as f64 + 1.0))) as u64
            } else {
                let mut perc = 0u64;
                let mut pick = min;
                for &(bs, p) in &self.ssplit[d] {
                    if p == 0 {
                        continue;
                    }
                    pick = bs;
                    perc += u64::from(p);
                    if v / perc <= fmax / 100 && bs <= room {
                        break;
                    }
                }
                pick
            };
            if !self.unaligned {
                len -= len % min;
            }
            len = len.min(max);
            if len <= room {
                return len;
            }
        }
        min
    }
}

/// fio's normal draw over `0..n` (`gauss.c`): the mean of 12 uniform draws, moved by a
/// deviation within `stddev` that is halved until the value stays in range.
pub(super) fn normal_draw(rng: &mut Rng, n: u64, stddev: i64) -> i64 {
    let mut sum = 0u64;
    for _ in 0..12 {
        sum += rng.next_u64() % (n + 1);
    }
    let mut v = sum.div_ceil(12) as i64;
    if stddev > 0 {
        let mut dev = (stddev as f64 * rng.next_f64()) as i64 - stddev / 2;
        while v + dev < 0 || v + dev >= n as i64 {
            dev /= 2;
        }
        v += dev;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::fio::job::{from_text, jobs_from_sections};

    fn job(opts: &str) -> JobSpec {
        let text = format!("[j]\nioengine=null\n{}\n", opts.replace(' ', "\n"));
        jobs_from_sections(&from_text(&text).unwrap())
            .unwrap()
            .remove(0)
    }

    #[test]
    fn a_random_map_that_cannot_be_had_needs_softrandommap() {
        // Mixed block sizes over 2^62 bytes: a bit per 512 bytes is 2^50 bytes of map,
        // which no allocator gives. fio's `init_random_map`: an error, unless
        // softrandommap runs the job without the map (offsets may then repeat).
        let size = 1u64 << 62;
        let e = Pattern::new(&job("rw=randread bsrange=512-4k"), size)
            .err()
            .expect("the map cannot be allocated");
        assert!(
            e.contains("softrandommap") && e.contains("norandommap"),
            "{e}"
        );
        let j = job("rw=randread bsrange=512-4k softrandommap=1");
        let mut p = Pattern::new(&j, size).unwrap();
        assert!(p.blocks.is_none());
        let mut rng = Rng::for_thread(7, 0);
        p.seed(&mut rng);
        assert!(p.next(0, &mut rng, &mut None).is_some());
        // A map that fits is kept with softrandommap.
        let p = Pattern::new(&j, 1 << 20).unwrap();
        assert!(p.blocks.is_some());
    }

    fn offsets(opts: &str, size: u64, n: usize) -> Vec<u64> {
        let j = job(opts);
        let mut p = Pattern::new(&j, size).unwrap();
        let mut rng = Rng::for_thread(7, 0);
        p.seed(&mut rng);
        let d = usize::from(j.rw.read_pct(j.rwmixread) == 0);
        (0..n)
            .map_while(|_| p.next(d, &mut rng, &mut None).map(|(o, _)| o))
            .collect()
    }

    /// The shortcut gives the general path's offsets and lengths, I/O for I/O, and is
    /// taken only by the jobs it can serve.
    #[test]
    fn the_fast_path_gives_the_general_paths_offsets() {
        let cases = [
            ("rw=read bs=4k", Fast::Seq),
            ("rw=write bs=8k", Fast::Seq),
            ("rw=rw bs=4k,16k", Fast::Seq),
            ("rw=randread bs=4k", Fast::Fio),
            ("rw=randrw bs=4k", Fast::Fio),
            ("rw=randrw bs=4k,8k", Fast::No),
            ("rw=randread bs=4k norandommap", Fast::Fio),
            ("rw=randwrite bs=4k blockalign=4k", Fast::Fio),
            ("rw=randread bs=4k norandommap bs=4k,8k", Fast::Rand),
            ("rw=read:8k bs=4k", Fast::No),
            ("rw=randread:4 bs=4k", Fast::No),
            ("rw=randread bs=4k percentage_random=50", Fast::No),
            ("rw=randread bsrange=4k-16k", Fast::No),
            ("rw=randread bs=4k random_distribution=zipf:1.2", Fast::No),
            ("rw=randread bs=4k blockalign=2k", Fast::Rand),
        ];
        // 100 KiB + 1 KiB: the last partial block makes the sequential path wrap early.
        let size = (100 << 10) + 1024;
        for (opts, want) in cases {
            let j = job(opts);
            let mut fast = Pattern::new(&j, size).unwrap();
            let mut slow = Pattern::new(&j, size).unwrap();
            assert_eq!(fast.fast, want, "{opts}");
            slow.fast = Fast::No;
            let (mut r1, mut r2) = (Rng::for_thread(7, 0), Rng::for_thread(7, 0));
            fast.seed(&mut r1);
            slow.seed(&mut r2);
            // fio's draws come from the clone's SizeDraws; the general path ends a pass
            // where the map is full (the fast one leaves that to the worker's count).
            let (mut s1, mut s2, n) = if want == Fast::Fio {
                let sd = || SizeDraws::new(&j, 1, 0);
                (sd(), sd(), 25)
            } else {
                (None, None, 300)
            };
            for i in 0..n {
                let d = i % 3 % 2;
                assert_eq!(
                    fast.next(d, &mut r1, &mut s1),
                    slow.next(d, &mut r2, &mut s2),
                    "{opts}: I/O {i}"
                );
            }
        }
    }

    #[test]
    fn random_map_touches_every_block_once_per_pass() {
        let mut g = OffsetGen::new(1000, true);
        g.seed(12345);
        let mut rng = Rng::for_thread(1, 0);
        let mut seen = vec![false; 1000];
        for _ in 0..1000 {
            let x = g.next(&mut rng) as usize;
            assert!(!seen[x], "{x} repeated within a pass");
            seen[x] = true;
        }
    }

    /// The offsets fio 3.33 issues (measured with `--debug=io`, 64 KiB, bs=4k).
    #[test]
    fn holes_and_backwards_as_fio() {
        let k = |v: &[u64]| v.iter().map(|x| x * 1024).collect::<Vec<_>>();
        assert_eq!(
            offsets("rw=read:8k", 64 << 10, 100),
            k(&[0, 12, 24, 36, 48, 60]),
            "the job is done once its offset passes the end"
        );
        assert_eq!(
            offsets("rw=write:4k", 64 << 10, 16),
            k(&[0, 8, 16, 24, 32, 40, 48, 56, 0, 8, 16, 24, 32, 40, 48, 56]),
            "holes wrap to the start"
        );
        assert_eq!(
            offsets("rw=read:-8k", 64 << 10, 16),
            k(&[0, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0]),
            "backwards from the end"
        );
    }

    #[test]
    fn random_every_n_with_sequential_or_identical_runs_between() {
        // As fio (measured): every third I/O random, from the first, and the two after it
        // following it (or repeating it: `identical`).
        let o = offsets("rw=randread:3 norandommap", 1 << 30, 12);
        for i in (0..12).step_by(3) {
            assert_eq!((o[i + 1], o[i + 2]), (o[i] + 4096, o[i] + 8192), "{o:?}");
        }
        assert!(
            o[3] != o[2] + 4096 || o[6] != o[5] + 4096,
            "random picks: {o:?}"
        );
        let o = offsets("rw=randread:3 rw_sequencer=identical", 64 << 10, 12);
        for i in (0..12).step_by(3) {
            assert_eq!((o[i + 1], o[i + 2]), (o[i], o[i]), "{o:?}");
        }
    }

    #[test]
    fn percentage_random_mixes_random_and_sequential() {
        let o = offsets(
            "rw=randread percentage_random=50 norandommap",
            1 << 30,
            4000,
        );
        let seq = o.windows(2).filter(|w| w[1] == w[0] + 4096).count();
        assert!((1700..2300).contains(&seq), "about half sequential: {seq}");
        let o = offsets("rw=randread percentage_random=0", 1 << 20, 256);
        assert_eq!(o, (0..256).map(|i| i * 4096).collect::<Vec<_>>());
    }

    fn lengths(opts: &str, size: u64, n: usize) -> Vec<u64> {
        let j = job(opts);
        let mut p = Pattern::new(&j, size).unwrap();
        let mut rng = Rng::for_thread(3, 0);
        p.seed(&mut rng);
        (0..n)
            .filter_map(|_| p.next(0, &mut rng, &mut None).map(|x| x.1))
            .collect()
    }

    #[test]
    fn sizes_drawn_with_fios_generator_are_fios() {
        // fio 3.33's write_iolog of `--name=j --size=1m --rw=read` with each option: the
        // first sizes in KiB (measured).
        for (opts, fio) in [
            (
                "rw=read bsrange=4k-16k",
                &[
                    4u64, 12, 16, 8, 16, 4, 16, 4, 4, 4, 4, 8, 4, 4, 4, 12, 12, 16, 16, 16,
                ][..],
            ),
            (
                "rw=read bssplit=4k/50:16k/30:64k/20",
                &[
                    64, 4, 4, 16, 4, 64, 4, 64, 16, 64, 16, 16, 64, 64, 64, 4, 4, 4, 4, 4,
                ][..],
            ),
        ] {
            let j = job(opts);
            let mut p = Pattern::new(&j, 1 << 20).unwrap();
            let mut rng = Rng::for_thread(1, 0);
            let mut sd = SizeDraws::new(&j, 1, 0);
            assert!(sd.is_some());
            let got: Vec<u64> = (0..fio.len())
                .map(|_| p.next(0, &mut rng, &mut sd).unwrap().1 >> 10)
                .collect();
            assert_eq!(got, fio, "{opts}");
        }
        // A sequential job of one size draws nothing; without a repeatable seed the draws
        // are seeded at random (as fio's from the system's generator).
        assert!(SizeDraws::new(&job("rw=read bs=8k"), 1, 0).is_none());
        assert!(SizeDraws::new(&job("rw=randread bs=8k"), 1, 0).is_some());
        let r = |f| SizeDraws::new(&job("rw=read bsrange=4k-16k randrepeat=0"), 1, f).unwrap();
        assert_ne!(r(1).seeds, r(2).seeds);
    }

    #[test]
    fn bssplit_follows_its_percentages_and_the_remainder_rule() {
        let l = lengths("rw=randread bssplit=4k/60:8k/30:16k/10", 1 << 30, 20000);
        let share = |b: u64| l.iter().filter(|&&x| x == b).count() as f64 / l.len() as f64;
        assert!((share(4096) - 0.6).abs() < 0.02, "{}", share(4096));
        assert!((share(8192) - 0.3).abs() < 0.02, "{}", share(8192));
        assert!((share(16384) - 0.1).abs() < 0.02, "{}", share(16384));
        // 4k/50 and 8k without a percent: 8k gets the other 50.
        let l = lengths("rw=randread bssplit=4k/50:8k", 1 << 30, 20000);
        let small = l.iter().filter(|&&x| x == 4096).count() as f64 / l.len() as f64;
        assert!((small - 0.5).abs() < 0.02, "{small}");
        // Percents adding to 90: the most likely entry (4k) takes the rest, as in fio.
        let l = lengths("rw=randread bssplit=4k/60:8k/30", 1 << 30, 20000);
        let small = l.iter().filter(|&&x| x == 4096).count() as f64 / l.len() as f64;
        assert!((small - 0.7).abs() < 0.02, "{small}");
    }

    #[test]
    fn bsrange_draws_multiples_of_its_minimum_and_fits_the_region() {
        let l = lengths("rw=randread bsrange=4k-16k", 1 << 30, 5000);
        assert!(
            l.iter()
                .all(|&x| x % 4096 == 0 && (4096..=16384).contains(&x))
        );
        for b in [4096, 8192, 12288, 16384] {
            assert!(l.contains(&b), "{b} never drawn");
        }
        let l = lengths("rw=randread bsrange=1000-3000 bs_unaligned", 1 << 30, 5000);
        assert!(
            l.iter().any(|x| x % 1000 != 0),
            "bs_unaligned keeps odd sizes"
        );
        // Sequential: every I/O fits the region, which is covered exactly.
        let j = job("rw=read bsrange=4k-64k");
        let mut p = Pattern::new(&j, 1 << 20).unwrap();
        let mut rng = Rng::for_thread(5, 0);
        let (mut at, mut sum) = (0, 0);
        while sum < 1 << 20 {
            let (o, l) = p.next(0, &mut rng, &mut None).unwrap();
            assert_eq!(o, at);
            assert!(o + l <= 1 << 20);
            at += l;
            sum += l;
        }
        assert_eq!(sum, 1 << 20);
    }

    #[test]
    fn a_random_pass_with_mixed_sizes_covers_each_block_once() {
        let j = job("rw=randread bssplit=4k/50:64k/50");
        let size = 4 << 20;
        let mut p = Pattern::new(&j, size).unwrap();
        let mut rng = Rng::for_thread(9, 0);
        p.seed(&mut rng);
        let mut seen = vec![false; (size / 4096) as usize];
        let mut total = 0;
        while let Some((o, l)) = p.next(0, &mut rng, &mut None) {
            assert_eq!(o % 4096, 0);
            for b in o / 4096..(o + l) / 4096 {
                assert!(!seen[b as usize], "block {b} twice");
                seen[b as usize] = true;
            }
            total += l;
        }
        assert_eq!(total, size, "the pass covers the region once, then ends");
        // fio cuts an I/O where used blocks begin, so sizes between the entries appear.
        assert!(seen.iter().all(|&x| x));
    }

    #[test]
    fn blockalign_places_random_offsets() {
        let o = offsets("rw=randread bs=4k blockalign=64k", 1 << 24, 500);
        assert!(o.iter().all(|x| x % 65536 == 0), "{o:?}");
    }

    #[test]
    fn zoned_sends_each_zone_its_share() {
        // 50% of the I/O to the first 5%, 30% to the next 15%, 20% to the other 80%.
        let o = offsets(
            "rw=randread norandommap random_distribution=zoned:50/5:30/15:20/",
            1 << 30,
            20000,
        );
        let n = o.len() as f64;
        let zone = |lo: u64, hi: u64| o.iter().filter(|&&x| x >= lo && x < hi).count() as f64 / n;
        let g = 1u64 << 30;
        assert!((zone(0, g * 5 / 100) - 0.5).abs() < 0.02);
        assert!((zone(g * 5 / 100, g * 20 / 100) - 0.3).abs() < 0.02);
        assert!((zone(g * 20 / 100, g) - 0.2).abs() < 0.02);
        let o = offsets(
            "rw=randread random_distribution=zoned_abs:60/1m:40/3m",
            4 << 20,
            10000,
        );
        let first = o.iter().filter(|&&x| x < 1 << 20).count() as f64 / o.len() as f64;
        assert!((first - 0.6).abs() < 0.03, "{first}");
        let j = job("rw=randread random_distribution=zoned_abs:60/1m:40/3m");
        let e = Pattern::new(&j, 2 << 20)
            .err()
            .expect("zones past the region");
        assert!(e.contains("zoned_abs sizes exceed"), "{e}");
    }

    #[test]
    fn normal_gathers_offsets_around_the_center() {
        let o = offsets("rw=randread random_distribution=normal", 1 << 30, 5000);
        let g = 1u64 << 30;
        let mid = o.iter().filter(|&&x| x > g / 4 && x < g * 3 / 4).count();
        assert!(mid > 4500, "{mid} of 5000 in the middle half");
    }

    /// `zonemode=strided`'s offsets, as fio 3.33 issues them (measured through strace on a
    /// 16 MiB file, bs=64k; `crates/cli/tests/it/fio_zones.rs` compares them with fio).
    #[test]
    fn strided_zones_as_fio() {
        const M: u64 = 1 << 20;
        const B: u64 = 64 << 10;
        let zone = |starts: &[u64], ios: u64| -> Vec<u64> {
            starts
                .iter()
                .flat_map(|&z| (0..ios).map(move |b| z + b * B))
                .collect()
        };
        let run = |opts: &str, region: u64, end: u64, n: usize| -> Vec<u64> {
            let j = job(&format!("bs=64k zonemode=strided {opts}"));
            let mut p = Pattern::new(&j, region).unwrap();
            p.set_file_end(end);
            let mut rng = Rng::for_thread(7, 0);
            p.seed(&mut rng);
            let d = usize::from(j.rw.read_pct(j.rwmixread) == 0);
            (0..n)
                .map_while(|_| p.next(d, &mut rng, &mut None).map(|(o, _)| o))
                .collect()
        };
        let s = "zonesize=1m zoneskip=3m";
        let four = [0, 4 * M, 8 * M, 12 * M];
        assert_eq!(
            run(&format!("rw=read {s}"), 16 * M, 16 * M, 256),
            zone(&[four, four, four, four].concat(), 16)
        );
        assert_eq!(
            run(&format!("rw=write {s}"), 16 * M, 16 * M, 64),
            zone(&four, 16)
        );
        // Zones wrap at the file's end, not the region's.
        assert_eq!(
            run(&format!("rw=read {s}"), 8 * M, 16 * M, 96),
            zone(&[&four[..], &[0, 4 * M]].concat(), 16)
        );
        assert_eq!(
            run(&format!("rw=read {s}"), 8 * M, 8 * M, 64),
            zone(&[0, 4 * M, 0, 4 * M], 16)
        );
        // The zone at 15 MiB meets the file's end after 1 MiB: the pass ends there.
        let o = run("rw=read zonesize=2m zoneskip=1m", 16 * M, 16 * M, 1000);
        assert_eq!(o.len(), 176);
        assert_eq!(o[160..], zone(&[15 * M], 16));
        // zonesize > zonerange: each range twice; a range that is no multiple of bs.
        assert_eq!(
            run("rw=read zonesize=2m zonerange=1m", 16 * M, 16 * M, 64),
            zone(&[0, 0, M, M], 16)
        );
        let k = 1 << 10;
        assert_eq!(
            run("rw=read zonesize=256k zonerange=100k", 4 * M, 4 * M, 8),
            [0, B, 0, B, 100 * k, 164 * k, 100 * k, 164 * k]
        );
        // time_based, a region shorter than the file: the zones past the region's end
        // read their first block over and over (fio's get_next_seq_offset).
        let o = run(
            &format!("rw=read {s} time_based runtime=1"),
            8 * M,
            16 * M,
            80,
        );
        assert_eq!(o[..32], zone(&[0, 4 * M], 16));
        assert!(o[32..48].iter().all(|&x| x == 8 * M), "{o:?}");
        assert!(o[48..64].iter().all(|&x| x == 12 * M), "{o:?}");
        assert_eq!(o[64..], zone(&[0], 16));
        // Random: each I/O in its zone's range; with the map no block twice in a zone.
        for opts in [
            "rw=randread zonesize=1m zonerange=4m",
            "rw=randread zonesize=1m zonerange=4m norandommap",
        ] {
            let o = run(opts, 16 * M, 16 * M, 256);
            assert_eq!(o.len(), 256);
            for (i, g) in o.chunks(16).enumerate() {
                let z = (i as u64 % 4) * 4 * M;
                assert!(g.iter().all(|&x| x >= z && x < z + 4 * M && x % B == 0));
                let mut u = g.to_vec();
                u.sort_unstable();
                u.dedup();
                if !opts.contains("norandommap") {
                    assert_eq!(u.len(), 16, "{opts}: zone {i}: {g:?}");
                }
            }
        }
    }

    #[test]
    fn lfsr_keeps_every_block_once_even_without_the_map() {
        let o = offsets(
            "rw=randread norandommap random_generator=lfsr",
            1 << 20,
            256,
        );
        let mut s = o.clone();
        s.sort_unstable();
        s.dedup();
        assert_eq!(s.len(), 256);
    }
}

#[cfg(test)]
mod bench {
    use super::*;
    use crate::disk::fio::job::{from_text, jobs_from_sections};

    /// By hand (`cargo test --release -p hostbench-workloads --lib pattern::bench --
    /// --ignored --nocapture`): ns per offset over 4 GiB of 4 KiB blocks, fio's draws with
    /// the map against the permutation hostbench used before.
    #[test]
    #[ignore]
    fn offsets_per_second() {
        let j = jobs_from_sections(&from_text("[j]\nrw=randread\nbs=4k\nsize=4g\n").unwrap())
            .unwrap()
            .remove(0);
        let size = 4u64 << 30;
        let n = (size / 4096) as usize * 2;
        for fio in [true, false] {
            let mut p = Pattern::new(&j, size).unwrap();
            if !fio {
                p.fast = Fast::Rand;
            }
            let mut rng = Rng::for_thread(1, 0);
            p.seed(&mut rng);
            let mut sd = SizeDraws::new(&j, 1, 0);
            let t = std::time::Instant::now();
            let mut sum = 0u64;
            for _ in 0..n {
                sum = sum.wrapping_add(p.next(0, &mut rng, &mut sd).unwrap().0);
            }
            let ns = t.elapsed().as_nanos() as f64 / n as f64;
            eprintln!("fio draws {fio}: {ns:.1} ns per offset ({sum})");
        }
    }
}
