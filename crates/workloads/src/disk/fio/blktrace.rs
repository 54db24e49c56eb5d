//! blktrace binary logs given to `read_iolog` (fio 3.33's `blktrace.c`), and their merging
//! (`merge_blktrace_file`, `merge_blktrace_scalars`, `merge_blktrace_iters`).
//!
//! The format (`blktrace_api.h`): a sequence of 48-byte records (`struct blk_io_trace`:
//! magic, sequence, time in ns, sector, bytes, action, pid, device, cpu, error, pdu_len),
//! each followed by `pdu_len` bytes of payload, in the byte order of the machine that
//! recorded it (fio swaps the fields when the magic reads swapped). The magic is
//! `0x65617400 | version`, version 7.
//!
//! What a replay takes, as fio 3.33's `read_blktrace` and `queue_trace`:
//! - only queue events (`Q`, the low 16 bits of the action are 1); issues, completions,
//!   merges, ... are side effects of the block layer and are skipped (but they set the
//!   queue depth, below);
//! - a queue event with the discard bit is a trim, with the flush bit a sync (`fsync`),
//!   else a read or, with the write bit, a write, of `bytes` at `sector * 512`; a notify
//!   event (process names, timestamps, messages) is skipped, and so is a read or write of
//!   0 bytes (fio says so once: `blktrace: ignoring zero byte trace: action=HEX`);
//! - each queue event waits its time since the previous queue event (ns, shown as µs),
//!   scaled by `replay_time_scale`, none with `replay_no_stall`; the time is taken even
//!   when the event is then skipped;
//! - `replay_skip=read,write,trim,sync` drops those events (the only replay fio 3.33
//!   reads it in); offsets are divided by `replay_scale` and rounded down to
//!   `replay_align`, lengths rounded up to it;
//! - each device (its `dev_t`, major in the top 12 bits) is a file: the block device in
//!   `/dev` with that number, or `replay_redirect`'s file for all of them;
//! - under `--readonly` the writes, trims and flushes are skipped, and fio says how many
//!   (`fio: JOB skips replay of N writes due to read-only`);
//! - the job's `iodepth`, unless given, is the trace's deepest queue: per direction the
//!   most queue events between two completions (a merge takes one back), at most 1024, at
//!   least 1; its block sizes are its longest I/Os.
//!
//! Merging reads each trace's read, write and trim queue events (others are dropped),
//! times scaled by the trace's scalar (percent) and run its number of iterations (each
//! after the previous, shifted by the trace's length), and writes them in time order as
//! records without payload; the replay then reads the merged file.

use super::engine::Dir;
use std::io::{BufRead, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;

/// `BLK_IO_TRACE_MAGIC`.
pub const MAGIC: u32 = 0x6561_7400;
/// `BLK_IO_TRACE_VERSION`.
pub const VERSION: u32 = 0x07;
/// `sizeof(struct blk_io_trace)`.
pub const RECORD: usize = 48;

/// Categories (`BLK_TC_*`), shifted into the action's top 16 bits.
pub mod tc {
    /// Reads.
    pub const READ: u32 = 1 << 16;
    /// Writes.
    pub const WRITE: u32 = 2 << 16;
    /// Flushes.
    pub const FLUSH: u32 = 4 << 16;
    /// Synchronous.
    pub const SYNC: u32 = 8 << 16;
    /// Queueing and merging.
    pub const QUEUE: u32 = 16 << 16;
    /// Issues.
    pub const ISSUE: u32 = 64 << 16;
    /// Completions.
    pub const COMPLETE: u32 = 128 << 16;
    /// Notifications.
    pub const NOTIFY: u32 = 1024 << 16;
    /// Discards.
    pub const DISCARD: u32 = 8192 << 16;
}

/// Actions (`__BLK_TA_*`, the action's low 16 bits).
pub mod ta {
    /// Queued.
    pub const QUEUE: u32 = 1;
    /// Back merged.
    pub const BACKMERGE: u32 = 2;
    /// Front merged.
    pub const FRONTMERGE: u32 = 3;
    /// Issued to the driver.
    pub const ISSUE: u32 = 7;
    /// Completed.
    pub const COMPLETE: u32 = 8;
}

/// One record (`struct blk_io_trace`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Trace {
    /// `MAGIC | VERSION`.
    pub magic: u32,
    /// Event number.
    pub sequence: u32,
    /// ns.
    pub time: u64,
    /// 512-byte sector.
    pub sector: u64,
    /// Length.
    pub bytes: u32,
    /// Category bits (top 16) and action (low 16).
    pub action: u32,
    /// Process.
    pub pid: u32,
    /// `dev_t` (major << 20 | minor).
    pub device: u32,
    /// CPU.
    pub cpu: u32,
    /// Completion error.
    pub error: u16,
    /// Payload bytes after the record.
    pub pdu_len: u16,
}

impl Trace {
    /// Reads a record in native byte order, or swapped.
    pub fn from_bytes(b: &[u8; RECORD], swap: bool) -> Trace {
        let u16_at = |i: usize| {
            let v = u16::from_ne_bytes([b[i], b[i + 1]]);
            if swap { v.swap_bytes() } else { v }
        };
        let u32_at = |i: usize| {
            let v = u32::from_ne_bytes(b[i..i + 4].try_into().expect("4 bytes"));
            if swap { v.swap_bytes() } else { v }
        };
        let u64_at = |i: usize| {
            let v = u64::from_ne_bytes(b[i..i + 8].try_into().expect("8 bytes"));
            if swap { v.swap_bytes() } else { v }
        };
        Trace {
            magic: u32_at(0),
            sequence: u32_at(4),
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            cpu: u32_at(40),
            error: u16_at(44),
            pdu_len: u16_at(46),
        }
    }

    /// The record in native byte order.
    pub fn to_bytes(&self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        b[0..4].copy_from_slice(&self.magic.to_ne_bytes());
        b[4..8].copy_from_slice(&self.sequence.to_ne_bytes());
        b[8..16].copy_from_slice(&self.time.to_ne_bytes());
        b[16..24].copy_from_slice(&self.sector.to_ne_bytes());
        b[24..28].copy_from_slice(&self.bytes.to_ne_bytes());
        b[28..32].copy_from_slice(&self.action.to_ne_bytes());
        b[32..36].copy_from_slice(&self.pid.to_ne_bytes());
        b[36..40].copy_from_slice(&self.device.to_ne_bytes());
        b[40..44].copy_from_slice(&self.cpu.to_ne_bytes());
        b[44..46].copy_from_slice(&self.error.to_ne_bytes());
        b[46..48].copy_from_slice(&self.pdu_len.to_ne_bytes());
        b
    }

    fn notify(&self) -> bool {
        self.action & tc::NOTIFY != 0
    }

    fn low(&self) -> u32 {
        self.action & 0xffff
    }

    /// fio's `t_get_ddir`: read, write or trim by the category bits, in that order.
    fn ddir(&self) -> Option<usize> {
        if self.action & tc::READ != 0 {
            Some(0)
        } else if self.action & tc::WRITE != 0 {
            Some(1)
        } else if self.action & tc::DISCARD != 0 {
            Some(2)
        } else {
            None
        }
    }

    /// The device as `major:minor` (fio's 20 minor bits).
    pub fn dev(&self) -> (u32, u32) {
        dev_numbers(self.device)
    }
}

/// A `dev_t` of a trace as (major, minor).
pub fn dev_numbers(device: u32) -> (u32, u32) {
    (device >> 20, device & ((1 << 20) - 1))
}

/// Whether the file at `path` is a blktrace binary log: `Some(swap)` when its first
/// record's magic reads (byte-swapped or not) as blktrace's. A file shorter than a record
/// whose first bytes are the magic is an error.
pub fn probe(path: &str) -> Result<Option<bool>, String> {
    let Ok(mut f) = std::fs::File::open(path) else {
        // (The text reader says why.)
        return Ok(None);
    };
    let mut b = [0u8; RECORD];
    let mut n = 0;
    while n < RECORD {
        match f.read(&mut b[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(_) => return Ok(None),
        }
    }
    if n < 4 {
        return Ok(None);
    }
    let m = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
    let swap = if m & 0xffff_ff00 == MAGIC {
        false
    } else if m.swap_bytes() & 0xffff_ff00 == MAGIC {
        true
    } else {
        return Ok(None);
    };
    if n < RECORD {
        return Err(format!(
            "{path} starts as a blktrace binary log but is shorter than one record ({n} of \
             {RECORD} bytes; fio: `short read on blktrace file`)"
        ));
    }
    Ok(Some(swap))
}

/// What the replay options ask of a trace's events.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rules {
    /// `replay_skip` bits: read 1, write 2, trim 4, sync 8.
    pub skip: u8,
    /// `replay_no_stall`.
    pub no_stall: bool,
    /// `replay_time_scale`, percent.
    pub time_scale: u32,
    /// `replay_align`.
    pub align: u64,
    /// `replay_scale`.
    pub scale: u64,
    /// `--readonly`: writes, trims and flushes are skipped.
    pub readonly: bool,
}

/// One event a replay takes from a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A read, write or trim.
    Io {
        /// Its direction.
        dir: Dir,
        /// The device (`dev_t`).
        device: u32,
        /// Where (scaled, aligned).
        offset: u64,
        /// How long (aligned up).
        len: u64,
        /// The wait before it, µs.
        delay_us: u64,
    },
    /// A flush: `fsync`.
    Sync {
        /// The device.
        device: u32,
        /// The wait before it, µs.
        delay_us: u64,
    },
}

/// What the walk of one record gave besides an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aside {
    /// Nothing.
    None,
    /// A write (or trim, flush) skipped for `--readonly`.
    ReadonlyWrite,
    /// A read or write of 0 bytes (its action).
    ZeroBytes(u32),
    /// A read or write skipped by `replay_skip` whose device is still a file of the replay
    /// (fio adds the file before it looks at `replay_skip`).
    DeviceOnly(u32),
}

/// fio's walk through a trace's records: its previous queue time.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    last_ns: u64,
}

impl Walk {
    /// fio's `delay_since_ttime`, ns.
    fn delay(&self, r: &Rules, t: u64) -> u64 {
        if self.last_ns == 0 || r.no_stall || t < self.last_ns {
            0
        } else if r.time_scale == 100 {
            t - self.last_ns
        } else {
            ((t - self.last_ns) as f64 * (100.0 / f64::from(r.time_scale.max(1)))) as u64
        }
    }

    /// One record: the event it makes, and what else it says.
    pub fn step(&mut self, r: &Rules, t: &Trace) -> (Option<Event>, Aside) {
        let write_like = t.action & (tc::WRITE | tc::DISCARD) != 0;
        if !t.notify() && write_like && r.readonly {
            return (None, Aside::ReadonlyWrite);
        }
        if t.low() != ta::QUEUE {
            return (None, Aside::None);
        }
        if t.notify() {
            return (None, Aside::None);
        }
        let delay_us = self.delay(r, t.time) / 1000;
        self.last_ns = t.time;
        let mut bytes = u64::from(t.bytes);
        if r.align > 0 {
            bytes = (bytes + r.align - 1) & !(r.align - 1);
        }
        let place = |sector: u64| {
            let mut off = sector.wrapping_mul(512);
            off = off.checked_div(r.scale).unwrap_or(off);
            if r.align > 0 {
                off &= !(r.align - 1);
            }
            off
        };
        if t.action & tc::DISCARD != 0 {
            if r.skip & 4 != 0 {
                return (None, Aside::None);
            }
            return (
                Some(Event::Io {
                    dir: Dir::Trim,
                    device: t.device,
                    offset: place(t.sector),
                    len: bytes,
                    delay_us,
                }),
                Aside::None,
            );
        }
        if t.action & tc::FLUSH != 0 {
            if r.skip & 8 != 0 {
                return (None, Aside::None);
            }
            return (
                Some(Event::Sync {
                    device: t.device,
                    delay_us,
                }),
                Aside::None,
            );
        }
        let write = t.action & tc::WRITE != 0;
        let bit = if write { 2 } else { 1 };
        if r.skip & bit != 0 {
            return (None, Aside::DeviceOnly(t.device));
        }
        if bytes == 0 {
            return (None, Aside::ZeroBytes(t.action));
        }
        (
            Some(Event::Io {
                dir: if write { Dir::Write } else { Dir::Read },
                device: t.device,
                offset: place(t.sector),
                len: bytes,
                delay_us,
            }),
            Aside::None,
        )
    }
}

/// Reads records one by one (their payloads skipped), checking each one's magic and
/// version.
pub struct Records<R> {
    r: R,
    swap: bool,
    log: String,
    /// Records read.
    pub n: u64,
    /// The trace ended inside a record (fio: `iolog short read`, and the trace ends there).
    pub partial: bool,
}

impl<R: BufRead + Seek> Records<R> {
    /// Reads `r` from its start.
    pub fn new(r: R, swap: bool, log: &str) -> Records<R> {
        Records {
            r,
            swap,
            log: log.to_string(),
            n: 0,
            partial: false,
        }
    }

    /// The next record; `None` at the end (a partial record at the end is the end, as
    /// fio's `iolog short read`).
    pub fn next_record(&mut self) -> Result<Option<Trace>, String> {
        let mut b = [0u8; RECORD];
        let mut got = 0;
        while got < RECORD {
            match self.r.read(&mut b[got..]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) => return Err(format!("read_iolog={}: {e}", self.log)),
            }
        }
        if got < RECORD {
            self.partial |= got > 0;
            return Ok(None);
        }
        let t = Trace::from_bytes(&b, self.swap);
        self.n += 1;
        if t.magic & 0xffff_ff00 != MAGIC {
            return Err(format!(
                "{}: record {} has a bad magic {:x} (fio: `bad magic in blktrace data`): not \
                 a blktrace log from there on",
                self.log, self.n, t.magic
            ));
        }
        if t.magic & 0xff != VERSION {
            return Err(format!(
                "{}: record {} is of blktrace version {}; fio 3.33 reads version {VERSION} only",
                self.log,
                self.n,
                t.magic & 0xff
            ));
        }
        if t.pdu_len > 0 {
            self.r
                .seek(SeekFrom::Current(i64::from(t.pdu_len)))
                .map_err(|e| format!("read_iolog={}: {e}", self.log))?;
        }
        Ok(Some(t))
    }
}

/// What a whole trace holds, as fio's `read_blktrace` counts it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Info {
    /// The devices its replayed events use, in the order fio adds them.
    pub devices: Vec<u32>,
    /// Reads, writes, trims, syncs.
    pub ios: [u64; 4],
    /// The longest read, write and trim.
    pub max_len: [u64; 3],
    /// Their bytes (fio's `size` of the job).
    pub bytes: u64,
    /// The end of the furthest I/O.
    pub end: u64,
    /// The queue depth fio derives.
    pub depth: u32,
    /// Writes skipped under `--readonly`.
    pub readonly_skipped: u64,
    /// The first zero-byte event's action.
    pub zero_bytes: Option<u32>,
    /// The trace ends inside a record.
    pub partial: bool,
}

/// Opens a trace for reading.
pub fn open_records(
    log: &str,
    swap: bool,
) -> Result<Records<std::io::BufReader<std::fs::File>>, String> {
    let f = std::fs::File::open(log).map_err(|e| format!("read_iolog={log}: {e}"))?;
    Ok(Records::new(
        std::io::BufReader::with_capacity(64 * 1024, f),
        swap,
        log,
    ))
}

/// Reads the whole trace once: what it holds.
pub fn scan(log: &str, swap: bool, r: &Rules) -> Result<Info, String> {
    let mut recs = open_records(log, swap)?;
    let mut w = Walk::default();
    let mut info = Info::default();
    let mut this = [0i64; 3];
    let mut depth = [0i64; 3];
    let add = |info: &mut Info, d: u32| {
        if !info.devices.contains(&d) {
            info.devices.push(d);
        }
    };
    while let Some(t) = recs.next_record()? {
        if !t.notify()
            && let Some(d) = t.ddir()
        {
            match t.low() {
                ta::QUEUE => this[d] += 1,
                ta::BACKMERGE | ta::FRONTMERGE => this[d] -= 1,
                ta::COMPLETE => {
                    depth[d] = depth[d].max(this[d]);
                    this[d] = 0;
                }
                _ => {}
            }
        }
        let (ev, aside) = w.step(r, &t);
        match aside {
            Aside::ReadonlyWrite => info.readonly_skipped += 1,
            Aside::ZeroBytes(a) => {
                add(&mut info, t.device);
                info.zero_bytes.get_or_insert(a);
            }
            Aside::DeviceOnly(d) => add(&mut info, d),
            Aside::None => {}
        }
        match ev {
            Some(Event::Io {
                dir,
                device,
                offset,
                len,
                ..
            }) => {
                add(&mut info, device);
                let d = dir as usize;
                info.ios[d] += 1;
                info.max_len[d] = info.max_len[d].max(len);
                info.bytes += len;
                info.end = info.end.max(offset.saturating_add(len));
                if len > u64::from(u32::MAX) {
                    return Err(format!(
                        "{log}: record {}: a {len}-byte I/O: lengths are up to 4 GiB",
                        recs.n
                    ));
                }
            }
            Some(Event::Sync { device, .. }) => {
                add(&mut info, device);
                info.ios[3] += 1;
            }
            None => {}
        }
    }
    info.partial = recs.partial;
    let mut max = 0;
    for (d, deepest) in depth.iter().enumerate() {
        let mut v = (*deepest).clamp(0, 1024);
        if v == 0 && info.ios[d] > 0 {
            v = 1;
        }
        max = max.max(v);
    }
    info.depth = max as u32;
    if info.ios.iter().all(|&n| n == 0) {
        return Err(format!(
            "{log}: the blktrace log has no read, write, trim or flush to replay (fio: `found \
             no ios in blktrace data`)"
        ));
    }
    Ok(info)
}

/// The block device in `/dev` (searched as fio searches it, subdirectories where they come,
/// symlinks not followed) whose number is `major:minor`.
pub fn lookup_device(major: u32, minor: u32) -> Option<String> {
    fn walk(dir: &std::path::Path, major: u32, minor: u32) -> Option<String> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        for e in std::fs::read_dir(dir).ok()?.flatten() {
            let p = e.path();
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if m.is_dir() {
                if let Some(f) = walk(&p, major, minor) {
                    return Some(f);
                }
                continue;
            }
            if m.file_type().is_block_device() {
                let rdev = m.rdev();
                if libc::major(rdev) == major && libc::minor(rdev) == minor {
                    return Some(p.display().to_string());
                }
            }
        }
        None
    }
    walk(std::path::Path::new("/dev"), major, minor)
}

/// `merge_blktrace_file`: merges the traces `logs` into `out`, each trace's times scaled
/// by its percentage in `scalars` (100 when none are given) and run `iters` times (1).
pub fn merge(logs: &[String], scalars: &[f64], iters: &[f64], out: &str) -> Result<(), String> {
    let n = logs.len();
    let list = |v: &[f64], what: &str, def: u64| -> Result<Vec<u64>, String> {
        if v.is_empty() {
            return Ok(vec![def; n]);
        }
        if v.len() != n {
            return Err(format!(
                "{what} has {} values for {n} logs in read_iolog (fio: `{what}({}) != \
                 nr_logs({n})`); give one per log",
                v.len(),
                v.len()
            ));
        }
        Ok(v.iter().map(|&x| x as u64).collect())
    };
    let scalars = list(scalars, "merge_blktrace_scalars", 100)?;
    let iters = list(iters, "merge_blktrace_iters", 1)?;
    let same = |a: &str| {
        a == out
            || std::fs::canonicalize(a)
                .ok()
                .is_some_and(|p| std::fs::canonicalize(out).ok().is_some_and(|q| p == q))
    };
    if let Some(l) = logs.iter().find(|l| same(l)) {
        return Err(format!(
            "merge_blktrace_file={out} is also a log to merge ({l}): the merge would overwrite \
             it as it reads it; give another name"
        ));
    }
    if let Ok(m) = std::fs::symlink_metadata(out)
        && !m.is_file()
    {
        return Err(format!(
            "merge_blktrace_file={out} exists and is not a regular file (a symlink, a device); \
             give another name"
        ));
    }
    struct Cursor {
        recs: Records<std::io::BufReader<std::fs::File>>,
        t: Trace,
        length: Option<u64>,
        last_raw: u64,
        scalar: u64,
        iter: u64,
        iters: u64,
    }
    impl Cursor {
        /// The next read, write or trim queue event, its time made the merge's.
        fn advance(&mut self) -> Result<bool, String> {
            loop {
                let Some(t) = self.recs.next_record()? else {
                    if self.length.is_none() {
                        self.length = Some(self.last_raw);
                    }
                    return Ok(false);
                };
                if t.low() != ta::QUEUE || t.ddir().is_none() {
                    self.last_raw = t.time;
                    continue;
                }
                self.last_raw = t.time;
                let mut t = t;
                t.time = (t.time + self.iter * self.length.unwrap_or(0)) * self.scalar / 100;
                t.pdu_len = 0;
                self.t = t;
                return Ok(true);
            }
        }
    }
    let mut cur = Vec::new();
    for (i, log) in logs.iter().enumerate() {
        let Some(swap) = probe(log)? else {
            return Err(format!(
                "merge_blktrace_file: {log} is not a blktrace binary log (fio: `file is not a \
                 blktrace`)"
            ));
        };
        let mut c = Cursor {
            recs: open_records(log, swap)?,
            t: Trace::default(),
            length: None,
            last_raw: 0,
            scalar: scalars[i],
            iter: 0,
            iters: iters[i],
        };
        let mut live = c.advance()?;
        while !live {
            c.iter += 1;
            if c.iter >= c.iters {
                break;
            }
            c.recs = open_records(log, swap)?;
            live = c.advance()?;
        }
        if live {
            cur.push((c, log.clone(), swap));
        }
    }
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(out)
        .map_err(|e| format!("merge_blktrace_file={out}: {e}"))?;
    let mut w = std::io::BufWriter::with_capacity(128 * 1024, f);
    while !cur.is_empty() {
        // The earliest event (the first trace of equal times).
        let mut i = 0;
        for k in 1..cur.len() {
            if cur[k].0.t.time < cur[i].0.t.time {
                i = k;
            }
        }
        w.write_all(&cur[i].0.t.to_bytes())
            .map_err(|e| format!("merge_blktrace_file={out}: {e}"))?;
        let (c, log, swap) = &mut cur[i];
        let mut live = c.advance()?;
        while !live {
            c.iter += 1;
            if c.iter >= c.iters {
                break;
            }
            c.recs = open_records(log, *swap)?;
            live = c.advance()?;
        }
        if !live {
            // fio keeps the live traces together by moving the last one into the gap.
            cur.swap_remove(i);
        }
    }
    w.flush()
        .map_err(|e| format!("merge_blktrace_file={out}: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(time: u64, action: u32, sector: u64, bytes: u32, device: u32) -> Trace {
        Trace {
            magic: MAGIC | VERSION,
            time,
            sector,
            bytes,
            action,
            device,
            ..Default::default()
        }
    }

    fn rules() -> Rules {
        Rules {
            time_scale: 100,
            ..Default::default()
        }
    }

    #[test]
    fn records_read_back_in_either_byte_order() {
        let t = Trace {
            pdu_len: 3,
            error: 2,
            cpu: 1,
            pid: 77,
            ..q(5, ta::QUEUE | tc::QUEUE | tc::WRITE, 9, 4096, 8 << 20 | 16)
        };
        let b = t.to_bytes();
        assert_eq!(Trace::from_bytes(&b, false), t);
        let mut s = b;
        for (i, w) in [4usize, 4, 8, 8, 4, 4, 4, 4, 4, 2, 2]
            .iter()
            .scan(0, |at, &w| {
                let i = *at;
                *at += w;
                Some((i, w))
            })
        {
            s[i..i + w].reverse();
        }
        assert_eq!(Trace::from_bytes(&s, true), t);
        assert_eq!(t.dev(), (8, 16));
    }

    #[test]
    fn only_queue_events_replay_with_fios_rules() {
        let r = rules();
        let mut w = Walk::default();
        let dev = 7 << 20;
        let qa = ta::QUEUE | tc::QUEUE;
        // An issue and a completion are skipped and take no time.
        assert_eq!(
            w.step(&r, &q(1000, ta::ISSUE | tc::ISSUE | tc::READ, 0, 512, dev)),
            (None, Aside::None)
        );
        let (e, _) = w.step(&r, &q(5000, qa | tc::READ, 8, 4096, dev));
        assert_eq!(
            e,
            Some(Event::Io {
                dir: Dir::Read,
                device: dev,
                offset: 4096,
                len: 4096,
                delay_us: 0
            })
        );
        let (e, _) = w.step(&r, &q(2_005_000, qa | tc::WRITE | tc::SYNC, 16, 512, dev));
        assert!(matches!(
            e,
            Some(Event::Io {
                dir: Dir::Write,
                delay_us: 2000,
                ..
            })
        ));
        let (e, _) = w.step(&r, &q(2_006_000, qa | tc::WRITE | tc::FLUSH, 0, 0, dev));
        assert_eq!(
            e,
            Some(Event::Sync {
                device: dev,
                delay_us: 1
            })
        );
        let (e, a) = w.step(&r, &q(2_007_000, qa | tc::READ, 0, 0, dev));
        assert_eq!((e, a), (None, Aside::ZeroBytes(qa | tc::READ)));
        let (e, _) = w.step(&r, &q(2_009_000, qa | tc::DISCARD | tc::WRITE, 3, 100, dev));
        assert!(matches!(
            e,
            Some(Event::Io {
                dir: Dir::Trim,
                offset: 1536,
                len: 100,
                delay_us: 2,
                ..
            })
        ));
        // replay_skip takes the time; scale, align (lengths up), time scale.
        let r2 = Rules {
            skip: 1,
            align: 4096,
            scale: 2,
            time_scale: 200,
            ..rules()
        };
        let mut w = Walk::default();
        assert_eq!(
            w.step(&r2, &q(1000, qa | tc::READ, 8, 512, dev)),
            (None, Aside::DeviceOnly(dev))
        );
        let (e, _) = w.step(&r2, &q(9000, qa | tc::WRITE, 40, 1000, dev));
        assert_eq!(
            e,
            Some(Event::Io {
                dir: Dir::Write,
                device: dev,
                offset: 8192,
                len: 4096,
                delay_us: 4
            })
        );
        let ro = Rules {
            readonly: true,
            ..rules()
        };
        assert_eq!(
            Walk::default().step(&ro, &q(1, qa | tc::WRITE, 0, 512, dev)),
            (None, Aside::ReadonlyWrite)
        );
    }
}
